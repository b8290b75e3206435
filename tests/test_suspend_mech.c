/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_suspend_mech.c - the simulator's suspend mechanisms (suspend_mech=copy|sigstop|cuda|
 * restart, gsched/costs.h): the cost formulas and their parameters; what the engine charges for
 * each (no mini-batch wait but for copy, a CUDA checkpoint's memory over bandwidth, a
 * kill-restart's save and restore + init, never a migration for restart); sigstop's memory left
 * on the GPUs a job stopped on (placements that do not fit next to it refused, a stopped job
 * resumed only where it was, the memory freed whenever the job leaves SUSPENDED); and how
 * gandiva and gandiva-emul live with sigstop.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"
#include "sim.h"
#include "sim_run.h"

#define S(x) gs_time_from_sec(x)

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

/* kv: NULL or "key=value,key=value"; policy NULL = the manual one.  0 or an error code. */
static int rig_open(rig *r, const char *cluster, const char *policy, const char *kv, gs_diag *d)
{
    memset(r, 0, sizeof *r);
    gs_diag_init(d, NULL);
    gs_params_init(&r->p);
    if (gs_cluster_parse_shorthand(cluster, &r->c, d)) return -1;
    if (kv) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", kv);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
            if (gs_params_set_kv(&r->p, t)) return -1;
    }
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_SIM;
    if (policy) return gs_engine_create(r->c, policy, &r->p, &o, &r->e, d);
    return gs_engine_create_ops(r->c, &manual, &r->p, &o, &r->e, d);
}

static int rig_std(rig *r, const char *policy, const char *kv)
{
    gs_diag d;
    int rc = rig_open(r, "2x4:V100", policy, kv, &d);
    if (rc) fprintf(stderr, "  rig: %s\n", d.msg);
    return rc;
}

static void rig_close(rig *r)
{
    gs_engine_destroy(r->e);
    gs_cluster_destroy(r->c);
    gs_params_release(&r->p);
}

/* A 1-GPU job submitted at t of dur seconds in 'iters' mini-batches (0: from its profile) with
 * mem_mb of GPU memory (0: its profile's). */
static const gs_job *add(rig *r, int64_t id, double t, double dur, int64_t iters, const char *model,
                         int mem_mb)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = S(t);
    s.ntasks = 1;
    s.duration = S(dur);
    s.iterations = iters;
    s.model = model;
    s.gpu_mem_mb = mem_mb;
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

/* Every event up to t in order, then to t. */
static void run_to(rig *r, gs_time t)
{
    while (gs_engine_next_event_time(r->e) <= t && gs_engine_step(r->e) > 0) {
    }
    gs_engine_advance(r->e, t);
}

/* Run a policy to the end, checking the engine at every instant: 0, or < 0. */
static int run_policy(rig *r)
{
    int rc, steps = 0;
    while ((rc = gs_engine_step(r->e)) > 0) {
        if (!ok(r)) return -1;
        if (++steps > 200000) return -2;
    }
    return rc;
}

/* Costs from "key=value,..." into c (initialised); 0 or the parse error. */
static int costs_of(gs_costs *c, const char *kv, gs_diag *d)
{
    gs_params p;
    gs_params_init(&p);
    gs_costs_init(c);
    gs_diag_init(d, NULL);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", kv);
    int rc = 0;
    for (char *t = strtok(buf, ","); t && !rc; t = strtok(NULL, ",")) rc = gs_params_set_kv(&p, t);
    if (!rc) rc = gs_costs_from_params(c, &p, d);
    gs_params_release(&p);
    return rc;
}

/* ResNet-50's state: 25.6 M parameters x 4 B x (1 + 2 Adam slots) = 307.2 MB. */
#define RESNET50_IO 0.3072
/* 7,920 MB (ResNet-50 bs 64 on a V100, the profile) at the default checkpoint (1.7 GB/s) and
 * restore (5.5 GB/s) rates, the H200 fits of include/gsched/costs.h (docs/costs.md). */
#define R50_MEM   7920
#define R50_BYTES (7920.0 * 1048576.0)
#define R50_D2H   (R50_BYTES / 1.7e9)
#define R50_H2D   (R50_BYTES / 5.5e9)

/* The formulas of each mechanism, its switches and its parameters. */
static void t_formulas(void)
{
    gs_costs c;
    gs_diag d;
    /* copy: the default, as before (suspend_copy each way, the mini-batch wait) */
    ASSERT_OK(costs_of(&c, "slowdown=on", &d));
    ASSERT_EQ(c.suspend_mech, GS_SUSPEND_COPY);
    ASSERT_EQ(gs_costs_suspend(&c, "resnet50", R50_MEM), S(0.1));
    ASSERT_EQ(gs_costs_resume(&c, "resnet50", 4, R50_MEM), S(0.1));
    ASSERT_EQ(gs_costs_suspend(&c, "resnet50", R50_MEM), gs_costs_suspend_copy(&c));
    ASSERT(gs_costs_suspend_waits(&c));
    ASSERT(!gs_costs_suspend_parks(&c) && !gs_costs_resume_anywhere(&c));
    gs_costs_release(&c);
    /* sigstop: free, no wait, memory parked */
    ASSERT_OK(costs_of(&c, "suspend_mech=sigstop", &d));
    ASSERT_EQ(gs_costs_suspend(&c, "resnet50", R50_MEM), 0);
    ASSERT_EQ(gs_costs_resume(&c, "resnet50", 4, R50_MEM), 0);
    ASSERT(!gs_costs_suspend_waits(&c) && gs_costs_suspend_parks(&c));
    gs_costs_release(&c);
    /* cuda: fixed + per-GPU memory / bandwidth, each way with its own bandwidth */
    ASSERT_OK(costs_of(&c, "suspend_mech=cuda", &d));
    ASSERT_NEAR(gs_time_to_sec(gs_costs_suspend(&c, "resnet50", R50_MEM)), 0.2 + R50_D2H, 1e-6);
    ASSERT_NEAR(gs_time_to_sec(gs_costs_suspend(&c, "resnet50", R50_MEM)), 5.0851305, 1e-6);
    ASSERT_NEAR(gs_time_to_sec(gs_costs_resume(&c, "resnet50", 8, R50_MEM)), 0.2 + R50_H2D, 1e-6);
    ASSERT_NEAR(gs_time_to_sec(gs_costs_resume(&c, "resnet50", 8, R50_MEM)), 1.7099494, 1e-6);
    ASSERT_EQ(gs_costs_suspend(&c, "x", 0), S(0.2)); /* unknown memory: the fixed part */
    ASSERT(!gs_costs_suspend_waits(&c) && !gs_costs_suspend_parks(&c));
    ASSERT(!gs_costs_resume_anywhere(&c));
    gs_costs_release(&c);
    ASSERT_OK(
        costs_of(&c, "suspend_mech=cuda,ckpt_fixed=50ms,ckpt_d2h_bw=2e10,ckpt_h2d_bw=5e9", &d));
    ASSERT_NEAR(gs_time_to_sec(gs_costs_suspend(&c, "m", 1024)), 0.05 + 1073741824.0 / 2e10, 1e-6);
    ASSERT_NEAR(gs_time_to_sec(gs_costs_resume(&c, "m", 1, 1024)), 0.05 + 1073741824.0 / 5e9, 1e-6);
    /* the largest memory at the slowest bandwidth stays inside the clock */
    gs_costs_release(&c);
    ASSERT_OK(costs_of(&c, "suspend_mech=cuda,ckpt_fixed=10000000s,ckpt_d2h_bw=1e3", &d));
    ASSERT(gs_costs_suspend(&c, "m", INT_MAX) > 0 && gs_costs_suspend(&c, "m", INT_MAX) <= S(1e9));
    gs_costs_release(&c);
    /* restart: t_save out; t_restore + t_init back: a preemption's restart, split */
    ASSERT_OK(costs_of(&c, "suspend_mech=restart", &d));
    ASSERT_NEAR(gs_time_to_sec(gs_costs_suspend(&c, "resnet50", R50_MEM)), RESNET50_IO, 1e-6);
    ASSERT_NEAR(gs_time_to_sec(gs_costs_resume(&c, "resnet50", 1, R50_MEM)), RESNET50_IO + 5, 1e-6);
    ASSERT_NEAR(gs_time_to_sec(gs_costs_resume(&c, "resnet50", 4, R50_MEM)),
                RESNET50_IO + 5 + 3 * 3.75, 1e-6);
    ASSERT_EQ(gs_costs_suspend(&c, "resnet50", 0) + gs_costs_resume(&c, "resnet50", 4, 0),
              gs_costs_restart(&c, "resnet50", 4, 1));
    ASSERT(!gs_costs_suspend_waits(&c) && gs_costs_resume_anywhere(&c));
    gs_costs_release(&c);
    ASSERT_OK(costs_of(&c, "suspend_mech=restart,preempt_cost=30s", &d));
    ASSERT_EQ(gs_costs_suspend(&c, "resnet50", 0), 0);
    ASSERT_EQ(gs_costs_resume(&c, "resnet50", 2, 0), S(30));
    gs_costs_release(&c);
    /* costs=off (and preempt_cost=0): every mechanism free */
    static const char *mechs[] = {"copy", "sigstop", "cuda", "restart"};
    for (int i = 0; i < 4; i++) {
        char kv[64];
        ASSERT_STR(gs_suspend_mech_name(i), mechs[i]);
        snprintf(kv, sizeof kv, "costs=off,suspend_mech=%s", mechs[i]);
        ASSERT_OK(costs_of(&c, kv, &d));
        ASSERT_EQ(c.suspend_mech, i);
        ASSERT_EQ(gs_costs_suspend(&c, "resnet50", R50_MEM), 0);
        ASSERT_EQ(gs_costs_resume(&c, "resnet50", 2, R50_MEM), 0);
        ASSERT(!gs_costs_suspend_waits(&c));
        ASSERT_EQ(gs_costs_suspend_parks(&c), i == GS_SUSPEND_SIGSTOP); /* a constraint */
        gs_costs_release(&c);
    }
    ASSERT_STR(gs_suspend_mech_name(4), "?");
    /* bad values are refused with the key */
    static const struct {
        const char *kv, *msg;
    } bad[] = {{"suspend_mech=freeze", "suspend_mech"}, {"suspend_mech=", "suspend_mech"},
               {"ckpt_fixed=20000000s", "ckpt_fixed"},  {"ckpt_fixed=-1s", "ckpt_fixed"},
               {"ckpt_d2h_bw=0", "ckpt_d2h_bw"},        {"ckpt_h2d_bw=1e16", "ckpt_h2d_bw"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ASSERT_EQ(costs_of(&c, bad[i].kv, &d), GS_EINVAL);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        gs_costs_release(&c);
    }
}

/*
 * On 2x4:V100 a 1-GPU ResNet-50 of 100 s in 100 mini-batches of 1 s starts on GPU 0 at 0 and
 * is suspended at 10.5 s under suspend_mech=mech.
 */
static const gs_job *suspend_at_10_5(rig *r, const char *kv)
{
    if (rig_std(r, NULL, kv)) return NULL;
    const gs_job *a = add(r, 1, 0, 100, 100, "resnet50", 0);
    gs_engine_advance(r->e, 0);
    int g0 = 0;
    if (!a || gs_engine_start(r->e, a, &g0, 1)) return NULL;
    gs_engine_advance(r->e, S(10.5));
    if (gs_engine_suspend(r->e, a, "slice")) return NULL;
    return a;
}

/* cuda: no mini-batch wait; memory over bandwidth each way; other nodes: a migration. */
static void t_cuda(void)
{
    rig r;
    const gs_job *a = suspend_at_10_5(&r, "suspend_mech=cuda,ckpt_h2d_bw=5e9");
    ASSERT(a);
    gs_time out = S(0.2) + gs_time_from_sec(R50_D2H);
    gs_time in = S(0.2) + gs_time_from_sec(R50_BYTES / 5e9);
    ASSERT_EQ(a->remaining, S(89.5)); /* stopped mid-batch: copy would have finished it */
    ASSERT_EQ(gs_engine_gpu_busy_until(r.e, 0), S(10.5) + out);
    ASSERT_NEAR(a->suspend_gpu_s, gs_time_to_sec(out), 1e-9);
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 0), 0); /* the memory went to the host */
    gs_engine_advance(r.e, S(20));
    int g1 = 1;
    ASSERT_OK(gs_engine_resume(r.e, a, &g1, 1)); /* another GPU of its node: a restore */
    ASSERT_EQ(a->progress_from, S(20) + in);
    ASSERT_NEAR(a->suspend_gpu_s, gs_time_to_sec(out + in), 1e-9);
    ASSERT_EQ(a->migrations, 0);
    ASSERT(ok(&r));
    run_to(&r, S(500));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->end, S(20) + in + S(89.5));
    rig_close(&r);
    /* on another node: its image is in the old node's host memory, a migration */
    a = suspend_at_10_5(&r, "suspend_mech=cuda");
    ASSERT(a);
    gs_engine_advance(r.e, S(20));
    int g4 = 4;
    ASSERT_OK(gs_engine_resume(r.e, a, &g4, 1));
    ASSERT_EQ(a->migrations, 1);
    ASSERT_EQ(a->progress_from, S(20) + gs_costs_migrate(gs_engine_costs(r.e), "resnet50", 1, 1));
    ASSERT(ok(&r));
    rig_close(&r);
}

/* restart: t_save holding its GPUs, then t_restore + t_init on any nodes, never a migration. */
static void t_restart(void)
{
    rig r;
    const gs_job *a = suspend_at_10_5(&r, "suspend_mech=restart");
    ASSERT(a);
    ASSERT_EQ(a->remaining, S(89.5));
    ASSERT_EQ(gs_engine_gpu_busy_until(r.e, 0), S(10.5 + RESNET50_IO));
    gs_engine_advance(r.e, S(20));
    int g4 = 4;
    ASSERT_OK(gs_engine_resume(r.e, a, &g4, 1)); /* another node */
    ASSERT_EQ(a->migrations, 0);
    ASSERT_EQ(a->progress_from, S(20 + RESNET50_IO + 5));
    ASSERT_NEAR(a->suspend_gpu_s, 2 * RESNET50_IO + 5, 1e-6);
    ASSERT_EQ(a->restarts, 0); /* a resume, not a requeue */
    run_to(&r, S(500));
    ASSERT_EQ(a->end, S(20 + RESNET50_IO + 5 + 89.5));
    ASSERT(ok(&r));
    rig_close(&r);
}

/* copy (the default) still finishes the mini-batch and copies 100 ms: the comparison point. */
static void t_copy_default(void)
{
    rig r;
    const gs_job *a = suspend_at_10_5(&r, NULL);
    ASSERT(a);
    ASSERT_EQ(a->remaining, S(89));
    ASSERT_EQ(gs_engine_gpu_busy_until(r.e, 0), S(11.1));
    int g4 = 4;
    gs_engine_advance(r.e, S(20));
    ASSERT_OK(gs_engine_resume(r.e, a, &g4, 1));
    ASSERT_EQ(a->migrations, 1);
    rig_close(&r);
    /* a copy-mode job may also start where another job stopped, whatever their memory */
    ASSERT_OK(rig_std(&r, NULL, "suspend_mech=copy"));
    const gs_job *big = add(&r, 1, 0, 100, 0, NULL, 12000);
    const gs_job *b = add(&r, 2, 0, 100, 0, NULL, 12000);
    gs_engine_advance(r.e, 0);
    int g0 = 0;
    ASSERT_OK(gs_engine_start(r.e, big, &g0, 1));
    gs_engine_advance(r.e, S(10));
    ASSERT_OK(gs_engine_suspend(r.e, big, "slice"));
    ASSERT_OK(gs_engine_start(r.e, b, &g0, 1));
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 0), 0);
    ASSERT(ok(&r));
    rig_close(&r);
}

/* sigstop: free and immediate, but the memory stays: what may go there, and where it resumes. */
static void t_sigstop(void)
{
    rig r;
    ASSERT_OK(rig_std(&r, NULL, "suspend_mech=sigstop"));
    const gs_job *a = add(&r, 1, 0, 100, 100, "resnet50", 10000);
    const gs_job *b = add(&r, 2, 0, 100, 0, NULL, 8000);
    const gs_job *c = add(&r, 3, 0, 100, 0, NULL, 6000);
    const gs_job *h = add(&r, 4, 0, 100, 0, NULL, 8000);
    const gs_job *x = add(&r, 5, 0, 100, 0, NULL, 6000);
    const gs_job *p = add(&r, 6, 0, 100, 0, NULL, 4000);
    const gs_job *q = add(&r, 7, 0, 100, 0, NULL, 2000);
    ASSERT(a && b && c && h && x && p && q);
    gs_engine_advance(r.e, 0);
    int g0 = 0, g1 = 1, g2 = 2;
    ASSERT_OK(gs_engine_start(r.e, a, &g0, 1));
    gs_engine_advance(r.e, S(10.5));
    ASSERT_OK(gs_engine_suspend(r.e, a, "slice"));
    ASSERT_EQ(a->remaining, S(89.5)); /* stopped at once, mid-batch */
    ASSERT_EQ(gs_engine_gpu_busy_until(r.e, 0), S(10.5));
    ASSERT_EQ(a->suspend_gpu_s, 0);
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 0), 10000);
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 1), 0);
    /* 10,000 + 8,000 MB do not fit a 16 GB V100; 10,000 + 6,000 do */
    ASSERT(!gs_engine_gpu_fits(r.e, b, 0) && gs_engine_gpu_fits(r.e, b, 1));
    ASSERT_EQ(gs_engine_start(r.e, b, &g0, 1), GS_ENOFIT);
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT(gs_engine_gpu_fits(r.e, c, 0));
    ASSERT_OK(gs_engine_start(r.e, c, &g0, 1));
    ASSERT(ok(&r));
    /* it continues only where it stopped, and only once its GPU is free again */
    ASSERT_EQ(gs_engine_resume(r.e, a, &g2, 1), GS_EUNSUPPORTED);
    ASSERT_NE(gs_engine_resume(r.e, a, &g0, 1), 0); /* c holds GPU 0 */
    gs_engine_advance(r.e, S(20));
    ASSERT_OK(gs_engine_suspend(r.e, c, "slice"));
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 0), 16000);
    ASSERT(ok(&r));
    ASSERT_OK(gs_engine_resume(r.e, a, &g0, 1)); /* its own memory is there already */
    ASSERT_EQ(a->progress_from, S(20));          /* SIGCONT: nothing to copy */
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 0), 6000);
    ASSERT(ok(&r));
    /* a stopped job that is cancelled takes its memory with it */
    ASSERT_OK(gs_engine_cancel(r.e, c, "test", S(20)));
    ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, 0), 0);
    ASSERT(ok(&r));
    /* packing next to parked memory: host 8,000 + guest + 6,000 parked must fit */
    ASSERT_OK(gs_engine_start(r.e, x, &g1, 1));
    ASSERT_OK(gs_engine_suspend(r.e, x, "slice"));
    ASSERT_OK(gs_engine_start(r.e, h, &g1, 1));      /* 6,000 + 8,000 */
    ASSERT_EQ(gs_engine_pack(r.e, p, h), GS_ENOFIT); /* + 4,000: 18,000 MB */
    ASSERT_OK(gs_engine_pack(r.e, q, h));            /* + 2,000: 16,000 MB */
    ASSERT(ok(&r));
    /* a stopped job packs only onto a host on the GPUs it left */
    gs_engine_advance(r.e, S(30));
    ASSERT_OK(gs_engine_suspend(r.e, a, "slice"));
    ASSERT_OK(gs_engine_start(r.e, b, &g2, 1));
    ASSERT_EQ(gs_engine_pack(r.e, a, b), GS_EUNSUPPORTED);
    ASSERT(ok(&r));
    /* a node failure requeues the jobs stopped on it: nothing stays parked there */
    ASSERT_OK(gs_engine_add_node_event(r.e, S(40), 0, 1));
    run_to(&r, S(40));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_EQ(x->state, GS_JOB_PENDING);
    for (int g = 0; g < 8; g++) ASSERT_EQ(gs_engine_gpu_parked_mem(r.e, g), 0);
    ASSERT(ok(&r));
    rig_close(&r);
}

/* gandiva with sigstop: two jobs take turns on one GPU only if both fit its memory. */
static void t_gandiva_sigstop(void)
{
    static const struct {
        int mem;
        const char *mech;
        double b_first; /* the second job's first start */
    } cases[] = {
        {6000, "sigstop", 60},   /* both fit: time-sliced every quantum */
        {10000, "sigstop", 600}, /* they do not: the second waits for the first to end */
        {10000, "copy", 60},     /* copy moves the memory out: time-sliced */
        {10000, "cuda", 60},     {10000, "restart", 60},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rig r;
        gs_diag d;
        char kv[128];
        snprintf(kv, sizeof kv, "pack=off,suspend_mech=%s", cases[i].mech);
        ASSERT_OK(rig_open(&r, "1x1:V100", "gandiva", kv, &d));
        const gs_job *a = add(&r, 1, 0, 600, 0, NULL, cases[i].mem);
        const gs_job *b = add(&r, 2, 0, 600, 0, NULL, cases[i].mem);
        ASSERT(a && b);
        ASSERT_OK(run_policy(&r));
        ASSERT_EQ(a->state, GS_JOB_DONE);
        ASSERT_EQ(b->state, GS_JOB_DONE);
        ASSERT_EQ(b->first_start, S(cases[i].b_first));
        if (cases[i].b_first == 600) {
            ASSERT_EQ(a->suspends + b->suspends, 0);
            ASSERT_EQ(a->end, S(600));
        } else {
            ASSERT(a->suspends > 3 && b->suspends > 3);
        }
        if (!strcmp(cases[i].mech, "sigstop")) {
            ASSERT_EQ(a->suspend_gpu_s + b->suspend_gpu_s, 0);
            ASSERT_EQ(a->end > b->end ? a->end : b->end, S(1200)); /* free switches */
        }
        rig_close(&r);
    }
}

/*
 * gandiva with sigstop on a crowded node makes progress (every job ends, checked at every
 * instant) without moving a stopped job; gandiva-emul refuses sigstop.
 */
static void t_gandiva_sigstop_crowded(void)
{
    rig r;
    gs_diag d;
    ASSERT_OK(rig_open(&r, "1x4:V100", "gandiva", "oversub=4,suspend_mech=sigstop", &d));
    const gs_job *j[16];
    for (int i = 0; i < 16; i++)
        j[i] = add(&r, i + 1, i, 300 + 50 * (i % 5), 0, i % 3 ? "resnet18" : "resnet50",
                   i % 4 == 0 ? 9000 : 0);
    ASSERT_OK(run_policy(&r));
    int susp = 0;
    for (int i = 0; i < 16; i++) {
        ASSERT_EQ(j[i]->state, GS_JOB_DONE);
        ASSERT_EQ(j[i]->migrations, 0);
        susp += j[i]->suspends;
    }
    ASSERT(susp > 0);
    rig_close(&r);
    /* gandiva-emul moves stopped jobs between node sets: refused with the reason */
    ASSERT(rig_open(&r, "2x4:V100", "gandiva-emul", "suspend_mech=sigstop", &d) == GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "sigstop");
    gs_engine_destroy(r.e);
    gs_cluster_destroy(r.c);
    gs_params_release(&r.p);
    ASSERT_OK(rig_open(&r, "2x4:V100", "gandiva-emul", "suspend_mech=cuda", &d));
    rig_close(&r);
}

/*
 * The bundled hyper-parameter burst under gandiva with each mechanism (docs/gandiva.md,
 * "Suspend mechanisms"): every job ends (with sigstop, gandiva once took turns forever moving
 * two refused stopped jobs between nodes at one instant), sigstop switches for free but never
 * moves a job, and the GPU time spent suspending orders copy < cuda < restart.
 */
static void t_gandiva_hpsearch(void)
{
    static const char *mechs[] = {"copy", "sigstop", "cuda", "restart"};
    double cost[4] = {0};
    for (int i = 0; i < 4; i++) {
        char kv[64];
        snprintf(kv, sizeof kv, "suspend_mech=%s", mechs[i]);
        const char *sets[] = {kv, "pack=off", NULL};
        gs_sim_result r;
        ASSERT_OK(sim_run("2x8:V100", test_src("data/examples/hpsearch.csv"), "gandiva",
                          GS_PLACE_CONSOLIDATE, sets, &r));
        ASSERT_EQ(r.jobs_done, 128);
        ASSERT(r.mech[GS_MECH_SUSPEND] > 1000);
        cost[i] = r.mech_gpu_s[GS_MECH_SUSPEND];
        if (i == 1) ASSERT_EQ(r.mech[GS_MECH_MIGRATE], 0);
        gs_sim_result_release(&r);
    }
    ASSERT_EQ(cost[1], 0);
    ASSERT(cost[0] > 0 && cost[0] < cost[2] && cost[2] < cost[3]);
}

/*
 * Randomized: gandiva under each mechanism on small crowded clusters (1- to 8-GPU jobs, some
 * elastic, memory from the profiles or 1-15 GB, packing, migration and growing on): the engine
 * check holds after every instant (parked memory exact and within each GPU's memory), every
 * job ends, and with sigstop switching costs nothing.
 */
static void t_random_gandiva(void)
{
    static const char *mechs[] = {"copy", "sigstop", "cuda", "restart"};
    static const char *shapes[] = {"1x4:V100", "2x4:V100", "2x8:V100", "1x2:V100"};
    static const char *models[] = {NULL, "resnet50", "resnet18-bs16", "lm-bs20", "vgg16"};
    unsigned long parked_seen = 0, suspends = 0;
    for (uint64_t seed = 1; seed <= 40; seed++)
        for (int m = 0; m < 4; m++) {
            gs_rng g;
            gs_rng_seed(&g, seed * 131 + (uint64_t)m);
            rig r;
            gs_diag d;
            char kv[160];
            static const char *q[] = {"10", "30", "60"};
            snprintf(kv, sizeof kv, "suspend_mech=%s,quantum=%s,introspect=%s,oversub=%s", mechs[m],
                     q[gs_rng_below(&g, 3)], q[gs_rng_below(&g, 3)],
                     gs_rng_below(&g, 2) ? "2" : "4");
            ASSERT_OK(rig_open(&r, shapes[gs_rng_below(&g, 4)], "gandiva", kv, &d));
            int n = 6 + (int)gs_rng_below(&g, 20), maxg = (int)gs_cluster_ngpus(r.c);
            for (int i = 0; i < n; i++) {
                gs_job_spec s;
                gs_job_spec_init(&s);
                s.id = i + 1;
                s.submit = (gs_time)gs_rng_below(&g, 120) * GS_SEC;
                s.duration = (gs_time)(30 + gs_rng_below(&g, 400)) * GS_SEC;
                s.ntasks = 1 << gs_rng_below(&g, 4);
                if (s.ntasks > maxg) s.ntasks = maxg;
                s.model = models[gs_rng_below(&g, 5)];
                if (gs_rng_below(&g, 2)) s.gpu_mem_mb = 1000 + 1000 * (int)gs_rng_below(&g, 15);
                if (gs_rng_below(&g, 5) == 0) {
                    s.min_gpus = 1;
                    s.max_gpus = s.ntasks * 2;
                }
                ASSERT_OK(gs_engine_add_job(r.e, &s, NULL, &d));
            }
            int steps = 0, rc;
            while ((rc = gs_engine_step(r.e)) > 0) {
                if (!ok(&r)) T_FAIL("seed %llu %s: check failed", (unsigned long long)seed, kv);
                for (int x = 0; x < maxg; x++) parked_seen += gs_engine_gpu_parked_mem(r.e, x) > 0;
                if (++steps > 100000) T_FAIL("seed %llu %s: no end", (unsigned long long)seed, kv);
            }
            ASSERT_OK(rc);
            for (size_t i = 0; gs_engine_job(r.e, i); i++) {
                const gs_job *j = gs_engine_job(r.e, i);
                if (!gs_job_state_final(j->state))
                    T_FAIL("seed %llu %s: job %lld never ended", (unsigned long long)seed, kv,
                           (long long)j->id);
                if (m == GS_SUSPEND_SIGSTOP) ASSERT_EQ(j->suspend_gpu_s, 0);
                suspends += (unsigned long)j->suspends;
            }
            rig_close(&r);
        }
    ASSERT(parked_seen > 0 && suspends > 1000); /* not vacuous */
}

static const test_case tests[] = {
    {"formulas", t_formulas},
    {"copy_default", t_copy_default},
    {"cuda", t_cuda},
    {"restart", t_restart},
    {"sigstop", t_sigstop},
    {"gandiva_sigstop", t_gandiva_sigstop},
    {"gandiva_sigstop_crowded", t_gandiva_sigstop_crowded},
    {"gandiva_hpsearch", t_gandiva_hpsearch},
    {"random_gandiva", t_random_gandiva},
};

TEST_MAIN(tests)
