/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gandiva.c - the engine's mechanisms (suspend/resume, packing,
 * migration, resizing) charge their costs exactly once and stop progress
 * while they run; packing respects GPU memory and measured incompatibility;
 * elastic jobs stay within min..max; and the gandiva policy behaves as
 * described for Gandiva: jobs of one size placed together, time-slicing
 * that lets every job start within a quantum, jobs spread across servers
 * migrated together when a large job leaves, packs rolled back when slower
 * than time-slicing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"
#include "report.h"
#include "sim.h"
#include "sim_run.h"

/* A policy that does nothing: tests drive the mechanisms themselves. */
static int m_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)e, (void)p, (void)d;
    *st = NULL;
    return 0;
}
static void m_destroy(void *st)
{
    (void)st;
}
static const gs_policy_ops manual = {.name = "manual", .create = m_create, .destroy = m_destroy};

typedef struct rig {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
} rig;

/* kv: NULL or "key=value,key=value" parameters; off: gs_engine_opts.mech_unsupported. */
static int rig_open_m(rig *r, const char *cluster, gs_engine_mode mode, const char *policy,
                      const char *kv, unsigned off, gs_diag *d)
{
    memset(r, 0, sizeof *r);
    gs_diag_init(d, NULL);
    if (gs_cluster_parse_shorthand(cluster, &r->c, d)) return -1;
    gs_params_init(&r->p);
    if (kv) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", kv);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
            if (gs_params_set_kv(&r->p, t)) return -1;
    }
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = mode;
    o.mech_unsupported = off;
    if (policy) return gs_engine_create(r->c, policy, &r->p, &o, &r->e, d);
    return gs_engine_create_ops(r->c, &manual, &r->p, &o, &r->e, d);
}

static int rig_open_p(rig *r, const char *cluster, gs_engine_mode mode, const char *policy,
                      const char *kv)
{
    gs_diag d;
    return rig_open_m(r, cluster, mode, policy, kv, 0, &d);
}

static int rig_open(rig *r, const char *cluster, gs_engine_mode mode, const char *policy)
{
    return rig_open_p(r, cluster, mode, policy, NULL);
}

static void rig_close(rig *r)
{
    gs_engine_destroy(r->e);
    gs_cluster_destroy(r->c);
    gs_params_release(&r->p);
}

static const gs_job *add(rig *r, int64_t id, int gpus, double dur_s, int64_t iters,
                         const char *model)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(dur_s);
    s.iterations = iters;
    s.model = model;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(r->e, &s, &j, &d)) return NULL;
    return j;
}

static int ok(rig *r)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_engine_check(r->e, &d);
    if (rc) fprintf(stderr, "  check: %s\n", d.msg);
    return rc == 0;
}

#define S(x) gs_time_from_sec(x)

/* Handle every event up to t in order (finishes at their own instants), then move to t. */
static void run_to(rig *r, gs_time t)
{
    while (gs_engine_next_event_time(r->e) <= t && gs_engine_step(r->e) > 0) {
    }
    gs_engine_advance(r->e, t);
}

/*
 * The common start of the suspend tests: on 2x4:V100 a 1-GPU ResNet-50 of 100 s in 100
 * mini-batches of 1 s starts on GPU 0 at 0 and is suspended at 10.5 s (optionally with a
 * second job of 'b_dur' s waiting).  Returns the suspended job, NULL on failure.
 */
static const gs_job *suspend_at_10_5(rig *r, double b_dur, const gs_job **b)
{
    if (rig_open(r, "2x4:V100", GS_ENGINE_SIM, NULL)) return NULL;
    const gs_job *a = add(r, 1, 1, 100, 100, "resnet50");
    if (b) *b = add(r, 2, 1, b_dur, 0, "resnet50");
    gs_engine_advance(r->e, 0);
    int g0 = 0;
    if (!a || gs_engine_start(r->e, a, &g0, 1)) return NULL;
    gs_engine_advance(r->e, S(10.5));
    if (gs_engine_suspend(r->e, a, "slice")) return NULL;
    return a;
}

/* The mini-batch in flight is finished (exactly), then the copy out; then no progress. */
static void t_suspend_resume_costs(void)
{
    rig r;
    const gs_job *a = suspend_at_10_5(&r, 0, NULL);
    ASSERT(a);
    int g0 = 0;
    ASSERT_EQ(a->state, GS_JOB_SUSPENDED);
    ASSERT_EQ(a->remaining, S(89));                       /* 10.5 s done + the rest of the 11th */
    ASSERT_EQ(gs_engine_gpu_busy_until(r.e, 0), S(11.1)); /* 0.5 s + 0.1 s copy */
    ASSERT_NEAR(a->suspend_gpu_s, 0.1, 1e-9);
    ASSERT(ok(&r));
    gs_engine_advance(r.e, S(15));
    ASSERT_EQ(gs_job_remaining(a, S(15)), S(89)); /* no progress while suspended */
    gs_engine_advance(r.e, S(20));
    ASSERT_OK(gs_engine_resume(r.e, a, &g0, 1));
    ASSERT_EQ(a->progress_from, S(20.1)); /* copy back */
    ASSERT_NEAR(a->suspend_gpu_s, 0.2, 1e-9);
    ASSERT_EQ(a->suspends, 1);
    ASSERT_EQ(a->resumes, 1);
    ASSERT_EQ(a->migrations, 0);
    run_to(&r, S(500));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->end, S(109.1));
    ASSERT_EQ(a->end - a->submit, a->queued + a->executed + a->suspended);
    ASSERT_EQ(a->suspended, S(9.5));
    ASSERT_EQ(a->progress, a->work);
    ASSERT(ok(&r));
    rig_close(&r);
}

/* A job started on GPUs another job has just left waits for it, without progress. */
static void t_incoming_waits_for_mini_batch(void)
{
    rig r;
    const gs_job *b = NULL;
    ASSERT(suspend_at_10_5(&r, 10, &b) && b);
    int g0 = 0;
    ASSERT_OK(gs_engine_start(r.e, b, &g0, 1));
    ASSERT_EQ(b->progress_from, S(11.1));
    ASSERT_EQ(b->mech_time, S(0.6));
    run_to(&r, S(30));
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_EQ(b->end, S(21.1));
    ASSERT(ok(&r));
    rig_close(&r);
}

/* Suspended while still paying a restart: the rest of the restart is paid on resume. */
static void t_suspend_during_restart(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4:V100", GS_ENGINE_SIM, NULL));
    const gs_job *a = add(&r, 1, 1, 100, 100, "resnet50");
    gs_engine_advance(r.e, 0);
    int g0 = 0;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    gs_engine_advance(r.e, S(10));
    ASSERT_OK(gs_engine_preempt(r.e, a, "test"));
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1)); /* restart: 5.6144 s without progress */
    ASSERT_EQ(a->progress_from, S(15.6144));
    gs_engine_advance(r.e, S(12));
    ASSERT_OK(gs_engine_suspend(r.e, a, "slice")); /* no mini-batch in flight: no wait */
    ASSERT_EQ(a->owed, S(3.6144));
    gs_engine_advance(r.e, S(20));
    ASSERT_OK(gs_engine_resume(r.e, a, &g0, 1));
    ASSERT_EQ(a->progress_from, S(20) + S(0.1) + S(3.6144));
    ASSERT_EQ(a->remaining, S(90));
    ASSERT(ok(&r));
    rig_close(&r);
}

/* Resuming on another node moves the state: a migration, charged once. */
static void t_resume_elsewhere_is_migration(void)
{
    rig r;
    const gs_job *a = suspend_at_10_5(&r, 0, NULL);
    ASSERT(a);
    int g4 = 4;
    gs_engine_advance(r.e, S(20));
    ASSERT_OK(gs_engine_resume(r.e, a, &g4, 1));
    gs_time cost = gs_costs_migrate(gs_engine_costs(r.e), "resnet50", 1, 1);
    ASSERT_EQ(cost, S(5.6144)); /* 2 x 307.2 MB at 1 GB/s + 5 s init */
    ASSERT_EQ(a->migrations, 1);
    ASSERT_NEAR(a->migrate_gpu_s, 5.6144, 1e-6);
    ASSERT_NEAR(a->suspend_gpu_s, 0.1, 1e-9); /* the copy out only */
    run_to(&r, S(500));
    ASSERT_EQ(a->end, S(20) + cost + S(89));
    ASSERT(ok(&r));
    rig_close(&r);
}

/* Migration: intra-node through host memory, across nodes through storage; paid once. */
static void t_migrate_costs(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4:V100", GS_ENGINE_SIM, NULL));
    const gs_job *a = add(&r, 1, 1, 100, 0, "resnet50");
    const gs_job *b = add(&r, 2, 1, 100, 0, "resnet50");
    gs_engine_advance(r.e, 0);
    int g0 = 0, g1 = 1, g2 = 2, g4 = 4;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    ASSERT_OK(gs_engine_start(r.e, b, &g2, 1));
    gs_engine_advance(r.e, S(10));
    ASSERT_OK(gs_engine_migrate(r.e, a, &g1, 1, "test"));            /* same node */
    ASSERT_OK(gs_engine_migrate(r.e, b, &g4, 1, "test"));            /* other node */
    ASSERT_EQ(gs_engine_migrate(r.e, a, &g4, 1, "x"), GS_ECONFLICT); /* taken: nothing changes */
    ASSERT_EQ(a->alloc[0], 1);
    gs_time local = gs_costs_migrate(gs_engine_costs(r.e), "resnet50", 1, 0);
    gs_time remote = gs_costs_migrate(gs_engine_costs(r.e), "resnet50", 1, 1);
    ASSERT(local < remote);
    ASSERT_EQ(a->progress_from, S(10) + local);
    ASSERT_EQ(b->progress_from, S(10) + remote);
    ASSERT_EQ(gs_job_remaining(a, S(12)), S(90)); /* no progress while it moves */
    ASSERT_EQ(a->migrations, 1);
    ASSERT_EQ(b->migrations, 1);
    ASSERT(ok(&r));
    run_to(&r, S(500));
    ASSERT_EQ(a->end, S(100) + local);
    ASSERT_EQ(b->end, S(100) + remote);
    ASSERT_EQ(a->executed, a->end); /* it held GPUs the whole time */
    ASSERT(ok(&r));
    rig_close(&r);
}

/* Packing: pair rates from the profiles, memory limit, measured incompatibility, handover. */
static void t_pack(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4:V100", GS_ENGINE_SIM, NULL));
    const gs_job *a = add(&r, 1, 1, 100, 0, "resnet18-bs16");
    const gs_job *b = add(&r, 2, 1, 100, 0, "lm-bs20");
    const gs_job *c = add(&r, 3, 1, 100, 0, "resnet50-bs128");
    const gs_job *d = add(&r, 4, 1, 100, 0, "resnet50-bs64");
    const gs_job *t32 = add(&r, 5, 1, 100, 0, "transformer-bs32");
    const gs_job *t256 = add(&r, 6, 1, 100, 0, "transformer-bs256");
    gs_engine_advance(r.e, 0);
    int g0 = 0, g1 = 1, g2 = 2;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    ASSERT_OK(gs_engine_start(r.e, d, &g1, 1));
    ASSERT_OK(gs_engine_start(r.e, t32, &g2, 1));
    gs_engine_advance(r.e, S(10));
    /* memory: 14640 + 7920 MB > 16384 MB on a V100 */
    ASSERT_EQ(gs_engine_pack(r.e, c, d), GS_ENOFIT);
    /* 11240 + 2280 MB would fit, but Gavel measured the pair at 0 (it did not run) */
    ASSERT_EQ(gs_engine_pack(r.e, t256, t32), GS_ENOFIT);
    ASSERT_EQ(c->state, GS_JOB_PENDING);
    ASSERT_EQ(t256->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_pack(r.e, b, a));
    double rb, ra;
    ASSERT_EQ(
        gs_profiles_pair(gs_engine_profiles(r.e), "lm-bs20", "resnet18-bs16", "V100", &rb, &ra), 1);
    ASSERT_NEAR(rb, 0.8307, 1e-9);
    ASSERT_NEAR(ra, 1.0, 1e-9);
    ASSERT_NEAR(a->pack_rate, ra, 1e-12);
    ASSERT_NEAR(b->pack_rate, rb, 1e-12);
    ASSERT_EQ(b->alloc[0], 0);
    ASSERT_EQ(gs_cluster_gpu(r.c, 0)->users, 2);
    ASSERT_EQ(gs_engine_packed_gpus(r.e), 1);
    ASSERT_EQ(gs_engine_allocated(r.e), 3);
    ASSERT(ok(&r));
    /* a finishes at 100 (rate 1); b then owns the GPU and runs at full speed */
    run_to(&r, S(100));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->pack_with, -1);
    ASSERT_EQ(gs_cluster_gpu(r.c, 0)->owner, b->slot);
    ASSERT_EQ(gs_cluster_gpu(r.c, 0)->users, 1);
    ASSERT_EQ(gs_engine_packed_gpus(r.e), 0);
    ASSERT(ok(&r));
    gs_time done90 = (gs_time)floor(gs_time_to_sec(S(90)) * rb * 1e6); /* work in 90 s packed */
    run_to(&r, S(1000));
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_NEAR(gs_time_to_sec(b->end), 100 + gs_time_to_sec(S(100) - done90), 1e-5);
    ASSERT_EQ(b->packs, 1);
    ASSERT_EQ(b->packed, S(90));
    ASSERT_EQ(a->packed, S(90));
    ASSERT(ok(&r));
    rig_close(&r);
}

/* A job's own gpu_mem beats its profile; the sum must fit one GPU. */
static void t_pack_memory_limit(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "1x2:V100", GS_ENGINE_SIM, NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.duration = S(100);
    s.model = "lm-bs20";
    s.gpu_mem_mb = 9000;
    const gs_job *a, *b;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(r.e, &s, &a, &d));
    s.id = -1;
    ASSERT_OK(gs_engine_add_job(r.e, &s, &b, &d));
    gs_engine_advance(r.e, 0);
    int g0 = 0;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    ASSERT_EQ(gs_engine_job_gpu_mem(r.e, b), 9000);
    ASSERT_EQ(gs_engine_pack(r.e, b, a), GS_ENOFIT); /* 18000 MB > 16384 MB */
    ASSERT(ok(&r));
    rig_close(&r);
}

/* Grow and shrink within min..max; restart cost at the new size; scaling-curve speed. */
static void t_resize(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4:V100", GS_ENGINE_SIM, NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 2;
    s.duration = S(100);
    s.model = "resnet50";
    s.min_gpus = 1;
    s.max_gpus = 4;
    const gs_job *a, *b;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(r.e, &s, &a, &d));
    s.min_gpus = s.max_gpus = 0;
    s.id = -1;
    ASSERT_OK(gs_engine_add_job(r.e, &s, &b, &d));
    gs_engine_advance(r.e, 0);
    int g[5] = {0, 1, 2, 3, 4}, h[2] = {4, 5};
    ASSERT_OK(gs_engine_start(r.e, a, g, 2));
    ASSERT_OK(gs_engine_start(r.e, b, h, 2));
    gs_engine_advance(r.e, S(10));
    ASSERT_EQ(gs_engine_resize(r.e, b, g + 2, 2, "x"), GS_EINVAL); /* not elastic */
    ASSERT_EQ(gs_engine_resize(r.e, a, g, 5, "x"), GS_EINVAL);     /* above max */
    ASSERT_EQ(gs_engine_resize(r.e, a, g, 0, "x"), GS_EINVAL);     /* below min */
    ASSERT_OK(gs_engine_resize(r.e, a, g, 4, "grow"));
    ASSERT_EQ(a->gpus, 4);
    ASSERT_EQ(a->nalloc, 4);
    ASSERT_EQ(gs_engine_allocated(r.e), 6);
    gs_time cost = gs_costs_restart(gs_engine_costs(r.e), "resnet50", 4, 1);
    ASSERT_EQ(cost, S(16.8644));
    ASSERT_EQ(a->progress_from, S(10) + cost);
    double rate = gs_costs_scale(gs_engine_costs(r.e), "resnet50", 4) /
                  gs_costs_scale(gs_engine_costs(r.e), "resnet50", 2);
    ASSERT_NEAR(rate, (4 / 1.15) / (2 / 1.05), 1e-12);
    ASSERT_NEAR(a->speed, rate, 1e-12);
    ASSERT_EQ(a->resizes, 1);
    ASSERT_NEAR(a->resize_gpu_s, 4 * 16.8644, 1e-6);
    ASSERT(ok(&r));
    gs_engine_advance(r.e, S(40));
    ASSERT_OK(gs_engine_resize(r.e, a, g, 1, "shrink"));
    ASSERT_EQ(a->gpus, 1);
    ASSERT_EQ(a->resizes, 2);
    ASSERT(ok(&r));
    run_to(&r, S(1000));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->progress, a->work);
    ASSERT(ok(&r));
    rig_close(&r);
}

/* In the daemon only suspend/resume exist, and resume is on the GPUs it left. */
static void t_live_limits(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4:V100", GS_ENGINE_LIVE, NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.duration = S(100);
    const gs_job *a, *b;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_submit(r.e, &s, 0, &a, &d));
    s.id = -1;
    ASSERT_OK(gs_engine_submit(r.e, &s, 0, &b, &d));
    gs_engine_advance(r.e, 0);
    int g0 = 0, g1 = 1;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    ASSERT_EQ(gs_engine_pack(r.e, b, a), GS_EUNSUPPORTED);
    ASSERT_EQ(gs_engine_migrate(r.e, a, &g1, 1, "x"), GS_EUNSUPPORTED);
    ASSERT_OK(gs_engine_suspend(r.e, a, "slice"));
    ASSERT_EQ(gs_engine_resume(r.e, a, &g1, 1), GS_EUNSUPPORTED);
    ASSERT_OK(gs_engine_resume(r.e, a, &g0, 1));
    ASSERT(ok(&r));
    /* a stopped process that dies is reported like any other end */
    ASSERT_OK(gs_engine_suspend(r.e, a, "slice"));
    ASSERT_OK(gs_engine_task_exited(r.e, a, 137, "killed", 5));
    ASSERT_EQ(a->state, GS_JOB_FAILED);
    ASSERT_EQ(gs_engine_nsuspended(r.e), 0);
    ASSERT(ok(&r));
    rig_close(&r);
}

/* A failed node takes packed pairs and the suspended jobs whose state it held. */
static void t_node_failure(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4:V100", GS_ENGINE_SIM, NULL));
    const gs_job *a = add(&r, 1, 1, 100, 0, "resnet18-bs16");
    const gs_job *b = add(&r, 2, 1, 100, 0, "lm-bs20");
    const gs_job *c = add(&r, 3, 1, 100, 0, "lm-bs20");
    ASSERT_OK(gs_engine_add_node_event(r.e, S(20), 0, 1));
    gs_engine_advance(r.e, 0);
    int g0 = 0, g1 = 1;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    ASSERT_OK(gs_engine_start(r.e, c, &g1, 1));
    gs_engine_advance(r.e, S(10));
    ASSERT_OK(gs_engine_pack(r.e, b, a));
    ASSERT_OK(gs_engine_suspend(r.e, c, "slice"));
    gs_engine_advance(r.e, S(20));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_EQ(c->state, GS_JOB_PENDING);
    ASSERT_EQ(gs_engine_nsuspended(r.e), 0);
    ASSERT_EQ(gs_engine_packed_gpus(r.e), 0);
    ASSERT_EQ(gs_engine_allocated(r.e), 0);
    ASSERT(ok(&r));
    rig_close(&r);
}

#define NO_SUSPEND GS_MECH_BIT(GS_MECH_SUSPEND)

/*
 * A mechanism the program cannot carry out (gs_engine_opts.mech_unsupported) is refused up
 * front - GS_EUNSUPPORTED, nothing changes, whatever the job's state - and the others keep
 * working; suspend and resume go together; a resume on other nodes is a migration; LIVE mode
 * never packs, migrates or resizes; restart and unknown bits cannot be masked.
 */
static void t_mech_unsupported(void)
{
    rig r;
    gs_diag d;
    ASSERT_OK(rig_open_m(&r, "2x4:V100", GS_ENGINE_SIM, NULL, NULL, NO_SUSPEND, &d));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_SUSPEND));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_RESUME));
    ASSERT(gs_engine_mech_supported(r.e, GS_MECH_RESTART));
    ASSERT(gs_engine_mech_supported(r.e, GS_MECH_PACK));
    ASSERT(gs_engine_mech_supported(r.e, GS_MECH_MIGRATE));
    ASSERT(gs_engine_mech_supported(r.e, GS_MECH_RESIZE));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_N));
    const gs_job *a = add(&r, 1, 1, 100, 100, "resnet50");
    const gs_job *b = add(&r, 2, 1, 100, 100, "resnet50");
    ASSERT(a && b);
    gs_engine_advance(r.e, 0);
    int g0 = 0, g4 = 4;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    gs_engine_advance(r.e, S(10.5));
    gs_time rem = gs_job_remaining(a, S(10.5));
    ASSERT_EQ(gs_engine_suspend(r.e, a, "slice"), GS_EUNSUPPORTED);
    ASSERT_EQ(gs_engine_suspend(r.e, b, "slice"), GS_EUNSUPPORTED); /* PENDING: still that */
    ASSERT_EQ(gs_engine_resume(r.e, b, &g4, 1), GS_EUNSUPPORTED);
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_EQ(a->suspends + a->resumes + b->suspends + b->resumes, 0);
    ASSERT(a->suspend_gpu_s == 0.0);
    ASSERT_EQ(gs_job_remaining(a, S(10.5)), rem);
    ASSERT_EQ(gs_engine_nsuspended(r.e), 0);
    ASSERT_EQ(gs_engine_allocated(r.e), 1);
    ASSERT_EQ(gs_engine_gpu_busy_until(r.e, 0), 0);
    ASSERT(ok(&r));
    /* migration is still there */
    ASSERT_OK(gs_engine_migrate(r.e, a, &g4, 1, "x"));
    ASSERT_EQ(a->migrations, 1);
    run_to(&r, S(500));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->progress, a->work);
    ASSERT_EQ(a->suspends, 0);
    ASSERT(ok(&r));
    rig_close(&r);
    /* the others one by one: suspend and resume work, the masked ones are refused */
    ASSERT_OK(rig_open_m(&r, "2x4:V100", GS_ENGINE_SIM, NULL, NULL,
                         GS_MECH_BIT(GS_MECH_MIGRATE) | GS_MECH_BIT(GS_MECH_PACK) |
                             GS_MECH_BIT(GS_MECH_RESIZE),
                         &d));
    ASSERT(gs_engine_mech_supported(r.e, GS_MECH_SUSPEND));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_PACK));
    a = add(&r, 1, 1, 100, 100, "resnet50");
    b = add(&r, 2, 1, 100, 100, "resnet50");
    gs_engine_advance(r.e, 0);
    int g1 = 1;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    ASSERT_OK(gs_engine_start(r.e, b, &g4, 1));
    ASSERT_EQ(gs_engine_migrate(r.e, a, &g1, 1, "x"), GS_EUNSUPPORTED);
    ASSERT_EQ(gs_engine_resize(r.e, a, &g0, 1, "x"), GS_EUNSUPPORTED);
    gs_engine_advance(r.e, S(10.5));
    ASSERT_OK(gs_engine_suspend(r.e, a, "slice"));
    ASSERT_EQ(gs_engine_pack(r.e, a, b), GS_EUNSUPPORTED);
    int g5 = 5;
    ASSERT_EQ(gs_engine_resume(r.e, a, &g5, 1), GS_EUNSUPPORTED); /* another node: a migration */
    ASSERT_EQ(a->state, GS_JOB_SUSPENDED);
    ASSERT_EQ(a->migrations, 0);
    ASSERT(ok(&r));
    gs_engine_advance(r.e, S(20));
    ASSERT_OK(gs_engine_resume(r.e, a, &g1, 1)); /* its node, another GPU: a copy back */
    ASSERT_EQ(a->migrations, 0);
    ASSERT_EQ(a->resumes, 1);
    run_to(&r, S(500));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT(ok(&r));
    rig_close(&r);
    /* LIVE adds packing, migration and resizing; suspend is the program's to refuse */
    ASSERT_OK(rig_open_m(&r, "2x4:V100", GS_ENGINE_LIVE, NULL, NULL, 0, &d));
    ASSERT(gs_engine_mech_supported(r.e, GS_MECH_SUSPEND));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_PACK));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_MIGRATE));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_RESIZE));
    rig_close(&r);
    ASSERT_OK(
        rig_open_m(&r, "2x4:V100", GS_ENGINE_LIVE, NULL, NULL, GS_MECH_BIT(GS_MECH_RESUME), &d));
    ASSERT(!gs_engine_mech_supported(r.e, GS_MECH_SUSPEND)); /* no resume: no suspend */
    rig_close(&r);
    /* restart cannot be unsupported; nor can what is not a mechanism */
    ASSERT_EQ(rig_open_m(&r, "2x4", GS_ENGINE_SIM, NULL, NULL, GS_MECH_BIT(GS_MECH_RESTART), &d),
              GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "restart");
    rig_close(&r);
    ASSERT_EQ(rig_open_m(&r, "2x4", GS_ENGINE_SIM, NULL, NULL, GS_MECH_BIT(GS_MECH_N), &d),
              GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "unknown mechanism");
    rig_close(&r);
}

/* ---- the gandiva policy ----------------------------------------------------------- */

static int run_policy(rig *r)
{
    int rc, steps = 0;
    while ((rc = gs_engine_step(r->e)) > 0) {
        if (!ok(r)) return -1;
        if (++steps > 100000) return -2;
    }
    return rc;
}

static int node_of(rig *r, const gs_job *j)
{
    const int32_t *a = j->alloc ? j->alloc : j->last_alloc;
    return a ? gs_cluster_gpu(r->c, a[0])->node : -1;
}

static const gs_job *addt(rig *r, int64_t id, double t, int gpus, double dur, const char *model)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(t);
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(dur);
    s.model = model;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(r->e, &s, &j, &d)) return NULL;
    return j;
}

/* Seed 002's Gandiva: jobs of the same size are placed together (16 GPUs). */
static void t_gandiva_affinity(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x8", GS_ENGINE_SIM, "gandiva"));
    const gs_job *j1 = addt(&r, 1, 0, 1, 100, NULL);
    const gs_job *j2 = addt(&r, 2, 1, 2, 100, NULL);
    const gs_job *j3 = addt(&r, 3, 2, 1, 100, NULL);
    const gs_job *j4 = addt(&r, 4, 3, 2, 100, NULL);
    const gs_job *j5 = addt(&r, 5, 4, 1, 100, NULL);
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(node_of(&r, j1), 0);
    ASSERT_EQ(node_of(&r, j3), 0);
    ASSERT_EQ(node_of(&r, j5), 0);
    ASSERT_EQ(node_of(&r, j2), 1);
    ASSERT_EQ(node_of(&r, j4), 1);
    ASSERT_EQ(j4->first_start, S(3));
    rig_close(&r);
    /* first-fit consolidation packs them all on n0 instead */
    ASSERT_OK(rig_open(&r, "2x8", GS_ENGINE_SIM, "fifo"));
    j1 = addt(&r, 1, 0, 1, 100, NULL);
    j2 = addt(&r, 2, 1, 2, 100, NULL);
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(node_of(&r, j2), 0);
    rig_close(&r);
}

/* Seed 002: after a large job leaves, jobs J1-J3 spread across servers are migrated together. */
static void t_gandiva_migrate_together(void)
{
    rig r;
    ASSERT_OK(rig_open_p(&r, "4x4", GS_ENGINE_SIM, "gandiva", "defrag=on"));
    addt(&r, 10, 0, 3, 1000, NULL); /* n0 */
    addt(&r, 11, 0, 3, 1000, NULL); /* n1 */
    addt(&r, 12, 0, 3, 1000, NULL); /* n2 */
    const gs_job *big = addt(&r, 13, 0, 4, 100, NULL);
    const gs_job *j1 = addt(&r, 1, 1, 1, 1000, NULL);
    const gs_job *j2 = addt(&r, 2, 2, 1, 1000, NULL);
    const gs_job *j3 = addt(&r, 3, 3, 1, 1000, NULL);
    /* up to the large job's departure: J1-J3 each on a different 3-GPU node */
    while (gs_engine_next_event_time(r.e) < S(99) && gs_engine_step(r.e) > 0) ASSERT(ok(&r));
    ASSERT_EQ(node_of(&r, big), 3);
    ASSERT_EQ(node_of(&r, j1), 0);
    ASSERT_EQ(node_of(&r, j2), 1);
    ASSERT_EQ(node_of(&r, j3), 2);
    ASSERT_OK(run_policy(&r));
    /* at its departure (t=100) they moved together onto the freed node */
    ASSERT_EQ(node_of(&r, j1), 3);
    ASSERT_EQ(node_of(&r, j2), 3);
    ASSERT_EQ(node_of(&r, j3), 3);
    ASSERT_EQ(j1->migrations, 1);
    ASSERT_EQ(j2->migrations, 1);
    ASSERT_EQ(j3->migrations, 1);
    gs_time cost = gs_costs_migrate(gs_engine_costs(r.e), NULL, 1, 1);
    ASSERT_EQ(j1->end, S(1000) + cost + S(1)); /* one migration's worth later */
    rig_close(&r);
}

/* Time-slicing: 8 one-GPU jobs on 4 GPUs all start within one quantum, and take turns. */
static void t_gandiva_time_slicing(void)
{
    rig r;
    ASSERT_OK(rig_open_p(&r, "1x4", GS_ENGINE_SIM, "gandiva", "pack=off"));
    const gs_job *j[8];
    for (int i = 0; i < 8; i++) j[i] = addt(&r, i + 1, 0, 1, 600, NULL);
    ASSERT_OK(run_policy(&r));
    gs_time last_first = 0, max_end = 0;
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(j[i]->state, GS_JOB_DONE);
        ASSERT(j[i]->suspends >= 1);
        if (j[i]->first_start > last_first) last_first = j[i]->first_start;
        if (j[i]->end > max_end) max_end = j[i]->end;
    }
    ASSERT_EQ(last_first, S(60)); /* the second half starts at the first quantum */
    /* 8 x 600 GPU-s on 4 GPUs: 1200 s plus the switching costs */
    ASSERT(max_end > S(1200) && max_end < S(1260));
    rig_close(&r);
    /* with packing (unknown models: the default pair, 0.67 + 0.67 > 1) they finish sooner */
    ASSERT_OK(rig_open(&r, "1x4", GS_ENGINE_SIM, "gandiva"));
    for (int i = 0; i < 8; i++) j[i] = addt(&r, i + 1, 0, 1, 600, NULL);
    ASSERT_OK(run_policy(&r));
    gs_time packed_end = 0;
    for (int i = 0; i < 8; i++)
        if (j[i]->end > packed_end) packed_end = j[i]->end;
    ASSERT(packed_end < max_end);
    rig_close(&r);
    /* without time-slicing (FIFO) the second half waits 600 s for its first start */
    ASSERT_OK(rig_open(&r, "1x4", GS_ENGINE_SIM, "fifo"));
    for (int i = 0; i < 8; i++) j[i] = addt(&r, i + 1, 0, 1, 600, NULL);
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(j[7]->first_start, S(600));
    rig_close(&r);
}

/* Packing under overload; a pair slower than time-slicing is rolled back and not tried again. */
static void t_gandiva_pack_rollback(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "1x1:V100", GS_ENGINE_SIM, "gandiva"));
    /* resnet50-bs64 with itself: 0.4981 + 0.4981 < 1 */
    const gs_job *a = addt(&r, 1, 0, 1, 1000, "resnet50-bs64");
    const gs_job *b = addt(&r, 2, 0, 1, 1000, "resnet50-bs64");
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_EQ(a->packs + b->packs, 1); /* tried once, rolled back, remembered */
    rig_close(&r);
    /* resnet18-bs16 with lm-bs20: 1.0 + 0.83 > 1: kept */
    ASSERT_OK(rig_open(&r, "1x1:V100", GS_ENGINE_SIM, "gandiva"));
    a = addt(&r, 1, 0, 1, 1000, "resnet18-bs16");
    b = addt(&r, 2, 0, 1, 1000, "lm-bs20");
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(a->packs + b->packs, 1);
    ASSERT(gs_job_packed(b, b->end) > S(500));
    /* both done well before time-slicing alone would finish them (2000 s) */
    ASSERT(a->end < S(1400) && b->end < S(1500));
    rig_close(&r);
}

/* A job running alone costs no periodic events (timers only while they can change something). */
static void t_gandiva_quiet_when_alone(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "2x4", GS_ENGINE_SIM, "gandiva"));
    addt(&r, 1, 0, 1, 1e7, NULL); /* 116 days */
    addt(&r, 2, 10, 2, 100, NULL);
    ASSERT_OK(run_policy(&r));
    ASSERT(gs_engine_events(r.e) < 50);
    rig_close(&r);
    ASSERT_OK(rig_open(&r, "2x4", GS_ENGINE_SIM, "gandiva-emul"));
    addt(&r, 1, 0, 1, 1e7, NULL);
    ASSERT_OK(run_policy(&r));
    ASSERT(gs_engine_events(r.e) < 50);
    rig_close(&r);
}

/* An elastic job grows onto idle GPUs and shrinks back when another job arrives. */
static void t_gandiva_grow_shrink(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "1x4", GS_ENGINE_SIM, "gandiva"));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 1;
    s.ntasks = 1;
    s.duration = S(5000);
    s.min_gpus = 1;
    s.max_gpus = 4;
    const gs_job *a = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(r.e, &s, &a, &d));
    const gs_job *b = addt(&r, 2, 1000, 2, 100, NULL);
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    /* grew at the first introspection, shrank when b came, grew again onto what b left */
    ASSERT(a->resizes >= 3);
    ASSERT(b->first_start <= S(1060));
    rig_close(&r);
}

/*
 * Without suspend gandiva plans no time-slicing: on a contended node every job runs to the end
 * once started, waiting jobs wait in the queue (as under FIFO), nothing is ever suspended and no
 * slice timer ticks; a mixed trace (sizes 1 to 8, a job larger than a node, elastic jobs) ends
 * with every job done.  gandiva-emul, which is time-slicing, refuses to start; asking for a
 * mechanism the program lacks is refused with the reason.
 */
static void t_gandiva_without_suspend(void)
{
    rig r;
    gs_diag d;
    ASSERT_OK(rig_open_m(&r, "1x4", GS_ENGINE_SIM, "gandiva", NULL, NO_SUSPEND, &d));
    const gs_job *j[8];
    for (int i = 0; i < 8; i++) j[i] = addt(&r, i + 1, 0, 1, 600, NULL);
    ASSERT_OK(run_policy(&r));
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(j[i]->state, GS_JOB_DONE);
        ASSERT_EQ(j[i]->suspends + j[i]->resumes, 0);
        ASSERT_EQ(j[i]->first_start, S(i < 4 ? 0 : 600));
        ASSERT_EQ(j[i]->end, S(i < 4 ? 600 : 1200));
    }
    /* 8 arrivals, 8 completions, 10 introspections while jobs wait (for packing); no quantum
     * timers (time-slicing would add 20) */
    ASSERT_EQ(gs_engine_events(r.e), 26);
    rig_close(&r);
    /* a mixed, contended trace on two nodes */
    ASSERT_OK(rig_open_m(&r, "2x4", GS_ENGINE_SIM, "gandiva", NULL, NO_SUSPEND, &d));
    static const struct {
        double t;
        int gpus;
        double dur;
        int elastic;
    } tr[] = {{0, 1, 900, 0},  {0, 2, 300, 0},    {5, 1, 700, 0},   {10, 4, 400, 0},
              {20, 1, 200, 0}, {30, 8, 300, 0},   {40, 2, 1000, 1}, {60, 1, 100, 0},
              {61, 1, 100, 0}, {62, 1, 100, 0},   {63, 1, 100, 0},  {90, 2, 500, 0},
              {95, 4, 50, 0},  {400, 1, 3000, 1}, {401, 1, 60, 0},  {402, 3, 120, 0}};
    size_t n = sizeof tr / sizeof *tr;
    const gs_job *m[16];
    for (size_t i = 0; i < n; i++) {
        if (tr[i].elastic) {
            gs_job_spec s;
            gs_job_spec_init(&s);
            s.id = (int64_t)i + 1;
            s.submit = S(tr[i].t);
            s.ntasks = tr[i].gpus;
            s.duration = S(tr[i].dur);
            s.min_gpus = 1;
            s.max_gpus = 4;
            m[i] = NULL;
            ASSERT_OK(gs_engine_add_job(r.e, &s, &m[i], &d));
        } else {
            m[i] = addt(&r, (int64_t)i + 1, tr[i].t, tr[i].gpus, tr[i].dur, NULL);
        }
        ASSERT(m[i]);
    }
    ASSERT_OK(run_policy(&r));
    ASSERT(gs_engine_idle(r.e));
    uint64_t susp = 0;
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(m[i]->state, GS_JOB_DONE);
        ASSERT_EQ(m[i]->progress, m[i]->work);
        susp += (uint64_t)(m[i]->suspends + m[i]->resumes);
    }
    ASSERT_EQ(susp, 0);
    ASSERT_EQ(gs_engine_nsuspended(r.e), 0);
    ASSERT(gs_engine_events(r.e) < 500);
    rig_close(&r);
    /* a pack that loses cannot be rolled back into time-slicing, but no job waits for a turn
     * either: b runs once a is done */
    ASSERT_OK(rig_open_m(&r, "1x1:V100", GS_ENGINE_SIM, "gandiva", NULL, NO_SUSPEND, &d));
    const gs_job *a = addt(&r, 1, 0, 1, 1000, "resnet50-bs64");
    const gs_job *b = addt(&r, 2, 0, 1, 1000, "resnet50-bs64");
    ASSERT_OK(run_policy(&r));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_EQ(b->first_start, a->end);
    ASSERT_EQ(a->suspends + b->suspends, 0);
    rig_close(&r);
    /* what cannot work without the mechanism is refused at create, with the reason */
    ASSERT_EQ(rig_open_m(&r, "2x4", GS_ENGINE_SIM, "gandiva-emul", NULL, NO_SUSPEND, &d),
              GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "needs suspend and resume");
    rig_close(&r);
    ASSERT_EQ(
        rig_open_m(&r, "2x4", GS_ENGINE_SIM, "gandiva", "pack=on", GS_MECH_BIT(GS_MECH_PACK), &d),
        GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "cannot pack jobs: set pack=off");
    rig_close(&r);
    ASSERT_EQ(rig_open_m(&r, "2x4", GS_ENGINE_LIVE, "gandiva", "pack=on", 0, &d), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "supports time-slicing only");
    rig_close(&r);
    /* defaults follow what the engine can do: no pack, migrate, grow parameters needed */
    ASSERT_OK(rig_open_m(&r, "2x4", GS_ENGINE_SIM, "gandiva", NULL,
                         GS_MECH_BIT(GS_MECH_PACK) | GS_MECH_BIT(GS_MECH_MIGRATE) |
                             GS_MECH_BIT(GS_MECH_RESIZE),
                         &d));
    rig_close(&r);
}

/* Resumes seen by the live-remap test: all, and those onto other GPUs than the job left. */
typedef struct remap_seen {
    int resumes, moved;
} remap_seen;
static void remap_obs(void *ud, const gs_record *r)
{
    remap_seen *x = ud;
    if (r->type != GS_REC_RESUME) return;
    x->resumes++;
    x->moved += r->job->alloc[0] != r->job->last_alloc[0];
}

/*
 * Live time-slicing of three 1-GPU jobs on one 2-GPU node for 100 s (quantum 10 s).  A stopped
 * process resumes only on the GPU it left: once the rotation gives that GPU to another job,
 * the job waits while the others take turns on the GPU it could use (job 2 here ran 10 s, job
 * 1 100 s).  With live_remap (a checkpoint-based suspend whose restore can move the job within
 * its node) gandiva resumes a member on whichever GPU of its node is free, and the three share
 * the node fairly (about 67 s each).
 */
static void t_gandiva_live_remap(void)
{
    int moved[2] = {0, 0};
    double least[2] = {1e9, 1e9};
    for (int remap = 0; remap <= 1; remap++) {
        gs_cluster *c = NULL;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_OK(gs_cluster_parse_shorthand("1x2", &c, &d));
        gs_params p;
        gs_params_init(&p);
        gs_params_set(&p, "quantum", "10s");
        gs_engine_opts o;
        gs_engine_opts_init(&o);
        o.mode = GS_ENGINE_LIVE;
        o.live_remap = remap;
        gs_engine *e = NULL;
        ASSERT_OK(gs_engine_create(c, "gandiva", &p, &o, &e, &d));
        remap_seen seen = {0, 0};
        gs_engine_set_observer(e, remap_obs, &seen);
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.duration = S(10000);
        for (int i = 0; i < 3; i++) {
            s.id = i + 1;
            ASSERT_OK(gs_engine_submit(e, &s, 0, NULL, &d));
        }
        for (int t = 0; t <= 100; t++) {
            ASSERT_OK(gs_engine_advance(e, S(t)));
            gs_diag_init(&d, NULL);
            if (gs_engine_check(e, &d)) T_FAIL("t=%d: %s", t, d.msg);
            ASSERT_EQ(gs_cluster_free(c), 0); /* never a GPU idle while a member waits */
        }
        ASSERT(seen.resumes > 0);
        moved[remap] = seen.moved;
        for (int i = 0; i < 3; i++) {
            double x = gs_time_to_sec(gs_job_executed(gs_engine_find_job(e, i + 1), S(100)));
            if (x < least[remap]) least[remap] = x;
        }
        gs_engine_destroy(e);
        gs_params_release(&p);
        gs_cluster_destroy(c);
    }
    ASSERT_EQ(moved[0], 0);
    ASSERT(least[0] <= 10); /* one job waits for its GPU */
    ASSERT(moved[1] > 0);
    ASSERT(least[1] >= 60); /* each about 200/3 s */
}

/* ---- gandiva-emul against the Tiresias simulator's published numbers ------------------ */

static int sim(const char *cluster, const char *trace, const char *policy, const char *kv,
               gs_sim_result *r)
{
    const char *sets[] = {kv, NULL};
    return sim_run(test_src(cluster), test_src(trace), policy, GS_PLACE_COUNT, kv ? sets : NULL, r);
}

/*
 * reference_results_tiresias_sim.csv: scheme gandiva / schedule gandiva.  The
 * original detects completions only at its 10-s steps (+5 s per job on average);
 * docs/gandiva.md explains the rest of the gap.
 */
static void t_emul_fidelity(void)
{
    gs_sim_result r;
    ASSERT_OK(sim("data/philly-1day/n32g8_2sw.csv", "data/philly-1day/philly_20171002_tiresias.csv",
                  "gandiva-emul", "costs=off", &r));
    ASSERT_EQ(r.jobs_done, 1353);
    ASSERT_NEAR(r.avg_jct_s, 13823.5, 13823.5 * 0.01);
    ASSERT_NEAR(r.median_jct_s, 7081.0, 7081.0 * 0.02);
    gs_sim_result_release(&r);
    ASSERT_OK(sim("data/philly-1day/n2g8.csv", "data/tiresias/60_job.csv", "gandiva-emul",
                  "costs=off", &r));
    ASSERT_EQ(r.jobs_done, 60);
    ASSERT_NEAR(r.avg_jct_s, 475.3, 475.3 * 0.02);
    gs_sim_result_release(&r);
}

/*
 * Like the simulator it emulates, gandiva-emul charges nothing by default (its policy flag
 * GS_POLICY_COSTS_OFF): with no parameters it gives the costs=off answer, job for job;
 * costs=on still charges its suspends and migrations, and other policies keep charging.
 */
static void t_emul_costs_default(void)
{
    gs_sim_result a, b, c;
    const char *cl = "data/philly-1day/n32g8_2sw.csv",
               *tr = "data/philly-1day/philly_20171002_tiresias.csv";
    ASSERT_OK(sim(cl, tr, "gandiva-emul", NULL, &a));
    ASSERT_OK(sim(cl, tr, "gandiva-emul", "costs=off", &b));
    ASSERT_OK(sim(cl, tr, "gandiva-emul", "costs=on", &c));
    ASSERT_EQ(a.jobs_done, 1353);
    ASSERT_EQ(gs_engine_njobs(a.engine), gs_engine_njobs(b.engine));
    for (size_t i = 0; i < gs_engine_njobs(a.engine); i++) {
        const gs_job *x = gs_engine_job(a.engine, i), *y = gs_engine_job(b.engine, i);
        ASSERT_EQ(x->first_start, y->first_start);
        ASSERT_EQ(x->end, y->end);
        ASSERT_EQ(x->suspends, y->suspends);
    }
    ASSERT_NEAR(a.avg_jct_s, 13823.5, 13823.5 * 0.01); /* the simulator's figure, no --set */
    ASSERT(a.mech_gpu_s[GS_MECH_SUSPEND] + a.mech_gpu_s[GS_MECH_MIGRATE] == 0);
    ASSERT(c.mech_gpu_s[GS_MECH_SUSPEND] + c.mech_gpu_s[GS_MECH_MIGRATE] > 0);
    ASSERT(c.avg_jct_s > a.avg_jct_s);
    gs_sim_result_release(&a);
    gs_sim_result_release(&b);
    gs_sim_result_release(&c);
    /* the flag is gandiva-emul's alone: gandiva still pays for its mechanisms by default */
    ASSERT(!(gs_policy_find("gandiva")->flags & GS_POLICY_COSTS_OFF));
    ASSERT(gs_policy_find("gandiva-emul")->flags & GS_POLICY_COSTS_OFF);
}

/*
 * The deal of re-balanced jobs to a class's node sets computed directly (equal utils) gives
 * exactly the original's one-job-at-a-time loop (deal=loop): the same start, end, suspends
 * and placement for every job of the 1-day window, where sets are re-dealt all the time.
 */
static void t_emul_deal(void)
{
    gs_sim_result a, b;
    const char *fast[] = {"costs=off", NULL}, *loop[] = {"costs=off", "deal=loop", NULL};
    const char *tr = test_src("data/philly-1day/philly_20171002_tiresias.csv");
    ASSERT_OK(sim_run(test_src("data/philly-1day/n32g8_2sw.csv"), tr, "gandiva-emul",
                      GS_PLACE_COUNT, fast, &a));
    ASSERT_OK(sim_run(test_src("data/philly-1day/n32g8_2sw.csv"), tr, "gandiva-emul",
                      GS_PLACE_COUNT, loop, &b));
    ASSERT_EQ(gs_engine_njobs(a.engine), gs_engine_njobs(b.engine));
    uint64_t susp = 0;
    for (size_t i = 0; i < gs_engine_njobs(a.engine); i++) {
        const gs_job *x = gs_engine_job(a.engine, i), *y = gs_engine_job(b.engine, i);
        ASSERT_EQ(x->first_start, y->first_start);
        ASSERT_EQ(x->end, y->end);
        ASSERT_EQ(x->suspends, y->suspends);
        ASSERT_EQ(x->nlast_alloc ? x->last_alloc[0] : -1, y->nlast_alloc ? y->last_alloc[0] : -1);
        susp += x->suspends;
    }
    ASSERT(susp > 100000); /* sets were re-dealt all along */
    gs_sim_result_release(&a);
    gs_sim_result_release(&b);
}

/* Realistic mode on the 1-day window: mechanisms are used and paid for; it beats FIFO. */
static void t_gandiva_day(void)
{
    gs_sim_result g, f;
    ASSERT_OK(sim("data/philly-1day/n32g8_2sw.csv", "data/philly-1day/philly_20171002_tiresias.csv",
                  "gandiva", NULL, &g));
    ASSERT_OK(sim("data/philly-1day/n32g8_2sw.csv", "data/philly-1day/philly_20171002_tiresias.csv",
                  "fifo", NULL, &f));
    ASSERT_EQ(g.jobs_done, 1353);
    ASSERT(g.mech[GS_MECH_SUSPEND] > 0 && g.mech[GS_MECH_MIGRATE] > 0);
    ASSERT(g.mech_gpu_s[GS_MECH_SUSPEND] > 0 && g.mech_gpu_s[GS_MECH_MIGRATE] > 0);
    ASSERT(g.avg_jct_s < f.avg_jct_s);
    ASSERT(g.avg_first_s < f.avg_first_s);
    /* the report shows what the mechanisms did and cost */
    char path[] = "/tmp/gsched-gandiva-report-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    gs_sim_result *rs[2] = {&f, &g};
    ASSERT_OK(gs_write_report(path, rs, 2, NULL));
    FILE *fp = fopen(path, "r");
    ASSERT(fp);
    static char page[1 << 20];
    size_t n = fread(page, 1, sizeof page - 1, fp);
    page[n] = 0;
    fclose(fp);
    unlink(path);
    ASSERT_CONTAINS(page, "Mechanisms and their cost");
    ASSERT_CONTAINS(page, "Time to first start, CDF");
    gs_sim_result_release(&g);
    gs_sim_result_release(&f);
}

/* The profile file: tables, normalised names, aliases, fallbacks, errors with line:col. */
static void t_profiles(void)
{
    const char *txt = "# comment\n"
                      "model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util\n"
                      "big-model,V100,1,0.5,9000,0.9\n"
                      "big-model,K80,1,2.0,9000,0.9\n"
                      "big-model,V100,2,0.3,9000,0.9\n"
                      "small,any,1,0.05,1000,0.1\n"
                      "default,any,1,0.2,2000,0.5\n"
                      "\n"
                      "model_a,model_b,gpu_type,gpus,rate_a,rate_b\n"
                      "small,big-model,V100,1,0.9,0.6\n"
                      "alias,model\n"
                      "Big,big-model\n"
                      "gpu_type,gpu_mem_mb\n"
                      "V100,16384\n"
                      "K80,12288\n";
    gs_profiles *p = NULL;
    gs_diag d;
    gs_diag_init(&d, "p.csv");
    ASSERT_OK(gs_profiles_parse("p.csv", txt, strlen(txt), &p, &d));
    ASSERT_EQ(gs_profiles_nrows(p), 4); /* the 2-GPU row is informative only */
    ASSERT_EQ(gs_profiles_npairs(p), 1);
    const gs_profile *r = gs_profiles_get(p, "BIG-model", "K80");
    ASSERT_STR(r->model, "big-model");
    ASSERT_NEAR(r->iter_s, 2.0, 1e-12);
    r = gs_profiles_get(p, "big", "P100"); /* alias; no P100 row: the reference type's (V100) */
    ASSERT_NEAR(r->iter_s, 0.5, 1e-12);
    r = gs_profiles_get(p, "unknown", NULL);
    ASSERT_STR(r->model, "default");
    ASSERT(!gs_profiles_known(p, "unknown"));
    ASSERT(gs_profiles_known(p, "Big"));
    double a, b;
    ASSERT_EQ(gs_profiles_pair(p, "big-model", "small", "V100", &a, &b), 1); /* either order */
    ASSERT_NEAR(a, 0.6, 1e-12);
    ASSERT_NEAR(b, 0.9, 1e-12);
    ASSERT_EQ(gs_profiles_pair(p, "big-model", "big-model", "V100", &a, &b), 0);
    ASSERT_NEAR(a, 0.5, 1e-12); /* no default pair in this file */
    ASSERT_EQ(gs_profiles_gpu_mem(p, "K80"), 12288);
    ASSERT_EQ(gs_profiles_gpu_mem(p, "H100"), 16384);
    gs_profiles_destroy(p);
    gs_profiles_destroy(NULL);
    /* errors name line and column */
    static const struct {
        const char *txt;
        int line, col;
        const char *msg;
    } bad[] = {
        {"small,any,1,0.05,1000,0.1\n", 1, 1, "table header"},
        {"model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util\nx,V100,1,0,1,0.1\n", 2, 10,
         "iter_time_s"},
        {"model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util\nx,V100,1,1,1\n", 2, 1, "fields"},
        {"model_a,model_b,gpu_type,gpus,rate_a,rate_b\na,b,V100,1,0.5,2\n", 2, 16, "rate_b"},
        {"gpu_type,gpu_mem_mb\nV100,-1\n", 2, 6, "gpu_mem_mb"},
        {"alias,model\n,x\n", 2, 1, "empty"},
        {"# nothing\n", 1, 1, "no profile data"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_diag_init(&d, "b.csv");
        p = NULL;
        ASSERT_EQ(gs_profiles_parse("b.csv", bad[i].txt, strlen(bad[i].txt), &p, &d), GS_EPARSE);
        ASSERT(p == NULL);
        ASSERT_EQ(d.line, bad[i].line);
        ASSERT_EQ(d.col, bad[i].col);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
    /* the built-in file parses and knows Gavel's models */
    ASSERT_OK(gs_profiles_builtin(&p, &d));
    ASSERT(gs_profiles_known(p, "resnet50"));
    ASSERT(gs_profiles_nrows(p) >= 78);
    gs_profiles_destroy(p);
}

/* Cost parameters are bounded so no charge can leave the microsecond clock. */
static void t_cost_bounds(void)
{
    static const char *bad[] = {"init_per_gpu=9000000000000s",
                                "preempt_cost=9000000000000s",
                                "init_base=10000001s",
                                "suspend_copy=20000000s",
                                "slowdown_default=1,1,1,1,1e300,1e300",
                                "slowdown_heavy=1,1,1,1,2,101"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_params p;
        gs_params_init(&p);
        ASSERT_OK(gs_params_set_kv(&p, bad[i]));
        gs_costs c;
        gs_costs_init(&c);
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_EQ(gs_costs_from_params(&c, &p, &d), GS_EINVAL);
        gs_costs_release(&c);
        gs_params_release(&p);
    }
    /* the largest allowed per-GPU init on the largest job: capped, not wrapped */
    gs_params p;
    gs_params_init(&p);
    ASSERT_OK(gs_params_set_kv(&p, "init_per_gpu=10000000s"));
    gs_costs c;
    gs_costs_init(&c);
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_costs_from_params(&c, &p, &d));
    gs_time t = gs_costs_restart(&c, "gpt2", 1 << 20, 1);
    ASSERT(t > 0 && t <= S(1e9));
    ASSERT(gs_costs_migrate(&c, "gpt2", 1 << 20, 1) <= S(1e9));
    ASSERT_EQ(gs_costs_restart(&c, "resnet50", 1, 1), S(2 * 0.3072 + 5)); /* unchanged below */
    gs_costs_release(&c);
    gs_params_release(&p);
}

static const test_case tests[] = {
    {"cost_bounds", t_cost_bounds},
    {"profiles", t_profiles},
    {"suspend_resume_costs", t_suspend_resume_costs},
    {"incoming_waits_for_mini_batch", t_incoming_waits_for_mini_batch},
    {"suspend_during_restart", t_suspend_during_restart},
    {"resume_elsewhere_is_migration", t_resume_elsewhere_is_migration},
    {"migrate_costs", t_migrate_costs},
    {"pack", t_pack},
    {"pack_memory_limit", t_pack_memory_limit},
    {"resize", t_resize},
    {"live_limits", t_live_limits},
    {"mech_unsupported", t_mech_unsupported},
    {"node_failure", t_node_failure},
    {"gandiva_affinity", t_gandiva_affinity},
    {"gandiva_migrate_together", t_gandiva_migrate_together},
    {"gandiva_time_slicing", t_gandiva_time_slicing},
    {"gandiva_pack_rollback", t_gandiva_pack_rollback},
    {"gandiva_grow_shrink", t_gandiva_grow_shrink},
    {"gandiva_quiet_when_alone", t_gandiva_quiet_when_alone},
    {"gandiva_without_suspend", t_gandiva_without_suspend},
    {"gandiva_live_remap", t_gandiva_live_remap},
    {"emul_fidelity", t_emul_fidelity},
    {"emul_deal", t_emul_deal},
    {"emul_costs_default", t_emul_costs_default},
    {"gandiva_day", t_gandiva_day},
};

TEST_MAIN(tests)
