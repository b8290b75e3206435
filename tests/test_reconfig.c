/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_reconfig.c - work-preserving reconfiguration (issue 14; HiveD section
 * 3.11): gs_engine_reconfigure / gs_engine_add_reconfig_event.
 *   - fifo: a running job keeps running when its GPUs vanish (their use is
 *     not counted, it ends when its work is done), a waiting job that can
 *     never fit the smaller cluster is rejected with the reason, a job that
 *     only fits the larger one starts at once; LIVE mode: the job ends when
 *     its tasks are reported gone;
 *   - hived: a guaranteed job keeps its VC cells when they still exist, is
 *     lazy-preempted (downgraded to opportunistic, still running) when its VC
 *     no longer has them, and a job of the VC that now owns the cells then
 *     preempts it at once;
 *   - restart recovery on a changed cluster (LIVE): gs_engine_adopt with -1 for
 *     GPUs the cluster lacks; a job requeued later that can never fit is rejected;
 *   - randomized: random HiveD-format clusters, reconfigured at random
 *     instants to random sub- and super-clusters (nodes removed, added,
 *     moved between chains, with fewer or more GPUs; VCs redrawn), under
 *     fourteen policies (the elastic ones too), with node failures and bad
 *     marks: after every instant gs_engine_check passes, no job running before
 *     a reconfiguration is stopped by it, and every job ends.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "harness.h"

typedef struct recs {
    char log[65536];
    int nreconfig;
} recs;

static void obs(void *ud, const gs_record *r)
{
    recs *x = ud;
    size_t n = strlen(x->log);
    if (r->type == GS_REC_RECONFIG) x->nreconfig++;
    snprintf(x->log + n, sizeof x->log - n, "t=%.0f %s %lld %s\n", gs_time_to_sec(r->t),
             gs_rec_type_name(r->type), r->job ? (long long)r->job->id : -1LL,
             r->reason ? r->reason : "");
    if (getenv("RECONF_DEBUG"))
        fprintf(stderr, "t=%.0f %s %lld %s\n", gs_time_to_sec(r->t), gs_rec_type_name(r->type),
                r->job ? (long long)r->job->id : -1LL, r->reason ? r->reason : "");
}

static gs_cluster *shorthand(const char *spec)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, &c, &d)) return NULL;
    return c;
}

static gs_cluster *hived_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/hived-configs/feature/%s", GSCHED_SOURCE_DIR, name);
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_load(path, &c, &d)) {
        fprintf(stderr, "%s: %s\n", path, d.msg);
        return NULL;
    }
    return c;
}

static void spec(gs_job_spec *s, int64_t id, int ntasks, int gpt, double submit, double dur)
{
    gs_job_spec_init(s);
    s->id = id;
    s->ntasks = ntasks;
    s->gpus_per_task = gpt;
    s->submit = (gs_time)(submit * GS_SEC);
    s->duration = (gs_time)(dur * GS_SEC);
}

/* Engines of the unit tests: no placement slowdown, so end times are the work. */
static int create(gs_cluster *c, const char *policy, const gs_engine_opts *o, gs_engine **e,
                  gs_diag *d)
{
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "type_speed", "off"); /* times as HiveD's demos state them on K80s */
    int rc = gs_engine_create(c, policy, &p, o, e, d);
    gs_params_release(&p);
    return rc;
}

static int check(gs_engine *e)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_engine_check(e, &d);
    if (rc) fprintf(stderr, "check: %s\n", d.msg);
    return rc;
}

/* fifo, 2 nodes -> 1 node at t=10: the 2-node job runs on, half of it unaccounted. */
static void t_fifo_shrink(void)
{
    gs_cluster *a = shorthand("2x4"), *b = shorthand("1x4");
    ASSERT(a && b);
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(a, "fifo", NULL, &e, &d));
    recs r = {0};
    gs_engine_set_observer(e, obs, &r);
    gs_job_spec s;
    spec(&s, 1, 2, 4, 0, 100); /* both nodes */
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 2, 1, 4, 1, 50); /* waits behind job 1, fits one node */
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 3, 2, 4, 2, 50); /* needs 2 nodes: never fits after the reconfiguration */
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    ASSERT_OK(gs_engine_add_reconfig_event(e, 10 * GS_SEC, b));
    while (gs_engine_now(e) < 10 * GS_SEC) {
        ASSERT(gs_engine_step(e) > 0);
        ASSERT_OK(check(e));
    }
    /* the instant of the reconfiguration has been handled */
    ASSERT_EQ(r.nreconfig, 1);
    ASSERT_EQ(gs_engine_cluster(e) == b, 1);
    const gs_job *j1 = gs_engine_find_job(e, 1), *j3 = gs_engine_find_job(e, 3);
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j1->vanished, 4);
    ASSERT_EQ(j1->nalloc, 4);
    ASSERT_EQ(gs_cluster_gpu(b, j1->alloc[0])->node, 0);
    ASSERT_EQ(j3->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(j3->reason, "after reconfiguration");
    ASSERT_CONTAINS(r.log, "4 of its 8 GPU(s) are not in the reconfigured cluster");
    ASSERT_OK(check(e));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_OK(check(e));
    /* the work accounting did not change: job 1 ends at 100 s, job 2 then runs 50 s */
    ASSERT_EQ(j1->state, GS_JOB_DONE);
    ASSERT_EQ(j1->end, 100 * GS_SEC);
    const gs_job *j2 = gs_engine_find_job(e, 2);
    ASSERT_EQ(j2->state, GS_JOB_DONE);
    ASSERT_EQ(j2->end, 150 * GS_SEC);
    /* GPU-seconds: 8 GPUs for 10 s, then the 4 still counted for 90 s */
    ASSERT_NEAR(j1->service, 8 * 10 + 4 * 90, 1e-6);
    ASSERT_EQ(j1->vanished, 0);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    gs_engine_destroy(e);
    gs_cluster_destroy(a);
    gs_cluster_destroy(b);
}

/* fifo, 1 node -> 2 nodes: the job that only fits the larger cluster starts at once. */
static void t_fifo_grow(void)
{
    gs_cluster *a = shorthand("2x4"), *b = shorthand("3x4");
    ASSERT(a && b);
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(a, "fifo", NULL, &e, &d));
    gs_job_spec s;
    spec(&s, 1, 1, 4, 0, 100);
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 2, 2, 4, 1, 50); /* waits: one node is taken */
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    ASSERT_OK(gs_engine_add_reconfig_event(e, 20 * GS_SEC, b));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_OK(check(e));
    const gs_job *j1 = gs_engine_find_job(e, 1), *j2 = gs_engine_find_job(e, 2);
    ASSERT_EQ(j1->end, 100 * GS_SEC);
    ASSERT_EQ(j2->first_start, 20 * GS_SEC);
    ASSERT_EQ(j2->end, 70 * GS_SEC);
    gs_engine_destroy(e);
    gs_cluster_destroy(a);
    gs_cluster_destroy(b);
}

/* An unusable cluster is refused before anything changes. */
static void t_refused(void)
{
    gs_cluster *a = shorthand("2x4");
    ASSERT(a);
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(a, "fifo", NULL, &e, &d));
    ASSERT_EQ(gs_engine_reconfigure(e, a, &d), GS_EINVAL);
    ASSERT_EQ(gs_engine_add_reconfig_event(e, 0, a), GS_EINVAL);
    ASSERT_EQ(gs_engine_add_reconfig_event(e, 0, NULL), GS_EINVAL);
    gs_engine_destroy(e);
    /* a policy that cannot be told of running jobs (no on_adopt) cannot be reconfigured */
    gs_cluster *b = shorthand("1x4");
    ASSERT(b);
    ASSERT_OK(create(a, "gandiva-emul", NULL, &e, &d));
    ASSERT_EQ(gs_engine_add_reconfig_event(e, 0, b), GS_EUNSUPPORTED);
    ASSERT_EQ(gs_engine_reconfigure(e, b, &d), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "no on_adopt");
    gs_engine_destroy(e);
    gs_cluster_destroy(b);
    /* hived refuses a cluster without a HiveD config: the engine stays on its own */
    gs_cluster *h = hived_file("hived-config-2.yaml");
    ASSERT(h);
    ASSERT_OK(create(h, "hived", NULL, &e, &d));
    gs_job_spec s;
    spec(&s, 1, 1, 4, 0, 100);
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(gs_engine_find_job(e, 1)->state, GS_JOB_RUNNING);
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_reconfigure(e, a, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "HiveD");
    ASSERT_EQ(gs_engine_add_reconfig_event(e, 5 * GS_SEC, a), GS_EINVAL);
    ASSERT_EQ(gs_engine_cluster(e) == h, 1);
    ASSERT_OK(check(e));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(gs_engine_find_job(e, 1)->end, 100 * GS_SEC);
    gs_engine_destroy(e);
    gs_cluster_destroy(a);
    gs_cluster_destroy(h);
}

/* LIVE: the job whose node vanished is tracked until its tasks are reported gone. */
static void t_live(void)
{
    gs_cluster *a = shorthand("2x2"), *b = shorthand("1x2");
    ASSERT(a && b);
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_LIVE;
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(a, "fifo", &o, &e, &d));
    gs_job_spec s;
    spec(&s, 1, 1, 2, 0, 0);
    ASSERT_OK(gs_engine_submit(e, &s, 0, NULL, &d));
    spec(&s, 2, 1, 2, 0, 0);
    ASSERT_OK(gs_engine_submit(e, &s, 0, NULL, &d));
    ASSERT_OK(gs_engine_advance(e, GS_SEC));
    const gs_job *j1 = gs_engine_find_job(e, 1), *j2 = gs_engine_find_job(e, 2);
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j2->state, GS_JOB_RUNNING);
    /* j2 is stopping when the cluster changes */
    ASSERT_OK(gs_engine_preempt(e, j2, "test"));
    ASSERT_EQ(j2->state, GS_JOB_PREEMPTED);
    spec(&s, 3, 2, 2, 0, 0); /* can never fit the 1-node cluster */
    ASSERT_OK(gs_engine_submit(e, &s, 2 * GS_SEC, NULL, &d));
    ASSERT_OK(gs_engine_advance(e, 2 * GS_SEC));
    ASSERT_OK(gs_engine_reconfigure(e, b, &d));
    ASSERT_OK(check(e));
    const gs_job *j3 = gs_engine_find_job(e, 3);
    ASSERT_EQ(j3->state, GS_JOB_REJECTED);
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j1->vanished + j2->vanished, 2); /* one of them sat on n1 */
    ASSERT_EQ(gs_engine_stopping_gpus(e), j2->nalloc);
    ASSERT_OK(gs_engine_task_exited(e, j2, 143, "stopped", 3 * GS_SEC));
    ASSERT_OK(gs_engine_advance(e, 3 * GS_SEC));
    ASSERT_OK(check(e));
    ASSERT_OK(gs_engine_task_exited(e, j1, 0, NULL, 4 * GS_SEC));
    ASSERT_OK(gs_engine_advance(e, 4 * GS_SEC));
    ASSERT_OK(check(e));
    ASSERT_EQ(j1->state, GS_JOB_DONE);
    ASSERT_EQ(j2->state, GS_JOB_RUNNING); /* requeued, then started on the node left */
    ASSERT_EQ(j2->vanished, 0);
    ASSERT_EQ(j2->nalloc, 2);
    gs_engine_destroy(e);
    gs_cluster_destroy(a);
    gs_cluster_destroy(b);
}

/*
 * hived, HiveD's demo 69 (hived-config-2 -> 5): a default-VC job running on K80 nodes is
 * lazy-preempted when the default VC is deleted; a vc1 job asking for all K80 nodes then
 * preempts it at once.  Before that, -> 4 (an M60 node added): the M60 job keeps its cells.
 */
static void t_hived_vc_moved(void)
{
    gs_cluster *c2 = hived_file("hived-config-2.yaml"), *c5 = hived_file("hived-config-5.yaml");
    ASSERT(c2 && c5);
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(c2, "hived", NULL, &e, &d));
    recs r = {0};
    gs_engine_set_observer(e, obs, &r);
    gs_job_spec s;
    spec(&s, 3, 2, 4, 0, 1000); /* itc-reconfig-3: default VC, test priority, K80 */
    s.vc = "default";
    s.priority = GS_PRIO_TEST;
    s.gpu_type = "K80";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 4, 4, 4, 20, 100); /* itc-reconfig-4: vc1, all K80 nodes */
    s.vc = "vc1";
    s.priority = GS_PRIO_TEST;
    s.gpu_type = "K80";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    ASSERT_OK(gs_engine_add_reconfig_event(e, 10 * GS_SEC, c5));
    while (gs_engine_now(e) < 10 * GS_SEC) {
        ASSERT(gs_engine_step(e) > 0);
        ASSERT_OK(check(e));
    }
    const gs_job *j3 = gs_engine_find_job(e, 3), *j4 = gs_engine_find_job(e, 4);
    ASSERT_EQ(j3->state, GS_JOB_RUNNING);
    ASSERT_EQ(j3->vanished, 0);
    char buf[64];
    ASSERT_OK(gs_engine_inspect(e, "job.3.state", buf, sizeof buf));
    ASSERT_STR(buf, "downgraded");
    ASSERT_CONTAINS(r.log, "lazily preempted");
    ASSERT_OK(gs_engine_run(e));
    ASSERT_OK(check(e));
    /* job 4 preempted job 3 the moment it arrived */
    ASSERT_EQ(j4->first_start, 20 * GS_SEC);
    ASSERT(j3->preemptions >= 1);
    /* its VC is gone: once stopped it can never run again */
    ASSERT_EQ(j3->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(j3->reason, "unknown virtual cluster 'default'");
    gs_engine_destroy(e);
    gs_cluster_destroy(c2);
    gs_cluster_destroy(c5);
}

/* hived-config-2 -> 4 (an M60 node added to the pool, vc1 gets 2 M60 nodes): the M60 job
 * stays guaranteed; a same-priority job asking for both M60 nodes waits instead of
 * preempting it.  -> 33 (M60 chain deleted): it runs on, its use not counted. */
static void t_hived_chain(void)
{
    gs_cluster *c2 = hived_file("hived-config-2.yaml"), *c4 = hived_file("hived-config-4.yaml"),
               *c33 = hived_file("hived-config-33.yaml");
    ASSERT(c2 && c4 && c33);
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(c2, "hived", NULL, &e, &d));
    recs r = {0};
    gs_engine_set_observer(e, obs, &r);
    gs_job_spec s;
    spec(&s, 1, 1, 4, 0, 1000); /* itc-reconfig-1: vc1, M60 */
    s.vc = "vc1";
    s.priority = GS_PRIO_TEST;
    s.gpu_type = "M60";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 2, 2, 4, 20, 100); /* itc-reconfig-2: vc1, both M60 nodes, same priority */
    s.vc = "vc1";
    s.priority = GS_PRIO_TEST;
    s.gpu_type = "M60";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    ASSERT_OK(gs_engine_add_reconfig_event(e, 10 * GS_SEC, c4));
    ASSERT_OK(gs_engine_add_reconfig_event(e, 30 * GS_SEC, c33));
    while (gs_engine_now(e) < 20 * GS_SEC) {
        ASSERT(gs_engine_step(e) > 0);
        ASSERT_OK(check(e));
    }
    const gs_job *j1 = gs_engine_find_job(e, 1), *j2 = gs_engine_find_job(e, 2);
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j1->preemptions, 0);
    ASSERT_EQ(j2->state, GS_JOB_PENDING);
    ASSERT(strstr(r.log, "lazily preempted") == NULL);
    while (gs_engine_now(e) < 30 * GS_SEC) {
        ASSERT(gs_engine_step(e) > 0);
        ASSERT_OK(check(e));
    }
    /* the M60 chain is gone: job 1 runs on unaccounted, job 2 can never run */
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j1->vanished, 4);
    ASSERT_EQ(j1->nalloc, 0);
    ASSERT_EQ(j2->state, GS_JOB_REJECTED);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_OK(check(e));
    ASSERT_EQ(j1->state, GS_JOB_DONE);
    ASSERT_EQ(j1->end, 1000 * GS_SEC);
    gs_engine_destroy(e);
    gs_cluster_destroy(c2);
    gs_cluster_destroy(c4);
    gs_cluster_destroy(c33);
}

/* hived-config-2 -> 6 (one K80 node cell moves from default to vc1): default now has one
 * node cell for its two running jobs; the higher-priority one keeps it (the other, adopted
 * first, is lazily preempted for it), and a vc1 job on 3 K80 nodes then preempts the
 * downgraded one, not the guaranteed one. */
static void t_hived_priority(void)
{
    gs_cluster *c2 = hived_file("hived-config-2.yaml"), *c6 = hived_file("hived-config-6.yaml");
    ASSERT(c2 && c6);
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(c2, "hived", NULL, &e, &d));
    recs r = {0};
    gs_engine_set_observer(e, obs, &r);
    gs_job_spec s;
    spec(&s, 1, 1, 4, 0, 1000);
    s.vc = "default";
    s.priority = GS_PRIO_TEST;
    s.gpu_type = "K80";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 2, 1, 4, 0, 1000);
    s.vc = "default";
    s.priority = GS_PRIO_PROD;
    s.gpu_type = "K80";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec(&s, 3, 3, 4, 20, 100);
    s.vc = "vc1";
    s.priority = GS_PRIO_TEST;
    s.gpu_type = "K80";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    ASSERT_OK(gs_engine_add_reconfig_event(e, 10 * GS_SEC, c6));
    while (gs_engine_now(e) < 10 * GS_SEC) {
        ASSERT(gs_engine_step(e) > 0);
        ASSERT_OK(check(e));
    }
    const gs_job *j1 = gs_engine_find_job(e, 1), *j2 = gs_engine_find_job(e, 2),
                 *j3 = gs_engine_find_job(e, 3);
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j2->state, GS_JOB_RUNNING);
    ASSERT_CONTAINS(r.log, "t=10 note 1 lazily preempted");
    ASSERT(strstr(r.log, "note 2 lazily") == NULL);
    while (gs_engine_now(e) < 20 * GS_SEC) {
        ASSERT(gs_engine_step(e) > 0);
        ASSERT_OK(check(e));
    }
    ASSERT_EQ(j3->state, GS_JOB_RUNNING);
    ASSERT_EQ(j3->first_start, 20 * GS_SEC);
    ASSERT_EQ(j1->preemptions, 1);
    ASSERT_EQ(j2->preemptions, 0);
    ASSERT_EQ(j2->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_OK(check(e));
    ASSERT_EQ(j2->end, 1000 * GS_SEC);
    gs_engine_destroy(e);
    gs_cluster_destroy(c2);
    gs_cluster_destroy(c6);
}

/* LIVE restart recovery with a changed config: gs_engine_adopt with -1 for GPUs the cluster
 * no longer has; a job requeued later that can never fit is rejected, not left waiting. */
static void t_adopt_vanished(void)
{
    gs_cluster *a = shorthand("1x2");
    ASSERT(a);
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_LIVE;
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(create(a, "fifo", &o, &e, &d));
    recs r = {0};
    gs_engine_set_observer(e, obs, &r);
    ASSERT_OK(gs_engine_advance(e, 10 * GS_SEC));
    gs_job_spec s;
    spec(&s, 1, 2, 2, 0, 0); /* ran on n0 and n1; n1 is gone */
    int gpus[] = {0, 1, -1, -1};
    const gs_job *j1 = NULL, *j2 = NULL;
    ASSERT_OK(gs_engine_adopt(e, &s, gpus, 4, 5 * GS_SEC, 0, 5 * GS_SEC, &j1, &d));
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j1->nalloc, 2);
    ASSERT_EQ(j1->vanished, 2);
    ASSERT_EQ(gs_engine_allocated(e), 2);
    ASSERT_CONTAINS(r.log, "2 of its 4 GPU(s) are not in this cluster");
    ASSERT_OK(check(e));
    /* refused like any adoption: a GPU given twice, a taken one */
    spec(&s, 2, 1, 2, 0, 0);
    int bad[] = {0, -1};
    ASSERT_EQ(gs_engine_adopt(e, &s, bad, 2, 5 * GS_SEC, 0, 0, &j2, &d), GS_ECONFLICT);
    ASSERT_EQ(j2->state, GS_JOB_PENDING);
    ASSERT_OK(check(e));
    /* preempted, it stops, and it can never fit a 2-GPU cluster again: rejected */
    ASSERT_OK(gs_engine_preempt(e, j1, "test"));
    ASSERT_OK(gs_engine_task_exited(e, j1, 143, "stopped", 11 * GS_SEC));
    ASSERT_OK(gs_engine_advance(e, 11 * GS_SEC));
    ASSERT_OK(check(e));
    ASSERT_EQ(j1->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(j1->reason, "after reconfiguration: needs 4 GPUs");
    ASSERT_EQ(j2->state, GS_JOB_RUNNING); /* the one that fits runs */
    gs_engine_destroy(e);
    gs_cluster_destroy(a);
}

/* ---- randomized ------------------------------------------------------------------------- */

typedef struct gen {
    char yaml[8192];
    int nvc;
} gen;

static void app(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void app(gen *g, const char *fmt, ...)
{
    size_t n = strlen(g->yaml);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->yaml + n, sizeof g->yaml - n, fmt, ap);
    va_end(ap);
}

/*
 * A random HiveD config over the node names A0..A5 (chain A, K80) and B0..B5 (chain B,
 * M60): each chain present or not, a random subset of its names, 2 or 4 GPUs per node
 * (nodes keep their names across configs, so a reconfiguration removes, adds, shrinks
 * and grows nodes); node A5 may sit in chain B instead (a node moved between chains).
 * VCs v0..v2 take random node cells within capacity.
 */
static void make_config(gen *g, gs_rng *r)
{
    memset(g, 0, sizeof *g);
    int present[2], per[2], nn[2];
    char names[2][6][4];
    do {
        present[0] = (int)gs_rng_below(r, 4) != 0;
        present[1] = (int)gs_rng_below(r, 2);
    } while (!present[0] && !present[1]);
    int moved = (int)gs_rng_below(r, 3) == 0;
    app(g, "physicalCluster:\n  skuTypes:\n    K80: {gpu: 1}\n    M60: {gpu: 1}\n");
    app(g, "  cellTypes:\n");
    for (int c = 0; c < 2; c++) {
        const char *t = c ? "M60" : "K80";
        /* 2 or 4 GPUs per node, the same in both chains (gandiva runs a job no larger than
         * the largest node inside one node: with nodes of one type smaller, it would never
         * place some jobs, reconfiguration or not) */
        per[c] = c ? per[0] : 1 + (int)gs_rng_below(r, 2);
        nn[c] = 0;
        for (int k = 0; k < 6; k++)
            if (gs_rng_below(r, 2)) snprintf(names[c][nn[c]++], 4, "%c%d", c ? 'B' : 'A', k);
        if (c == 1 && moved && nn[1] < 6) snprintf(names[1][nn[1]++], 4, "A5");
        if (c == 0 && moved)
            for (int k = 0; k < nn[0]; k++)
                if (!strcmp(names[0][k], "A5")) names[0][k][0] = 0;
        int real = 0;
        for (int k = 0; k < nn[c]; k++) real += names[c][k][0] != 0;
        if (!real) {
            snprintf(names[c][0], 4, "%c9", c ? 'B' : 'A');
            nn[c] = 1;
            real = 1;
        }
        app(g, "    %s-2: {childCellType: %s, childCellNumber: 2}\n", t, t);
        app(g, "    %s-N: {childCellType: %s-2, childCellNumber: %d, isNodeLevel: true}\n", t, t,
            per[c]);
        app(g, "    %s-P: {childCellType: %s-N, childCellNumber: %d}\n", t, t, real);
    }
    app(g, "  physicalCells:\n");
    int cap[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        if (!present[c]) continue;
        app(g, "  - cellType: %s-P\n    cellChildren:\n", c ? "M60" : "K80");
        for (int k = 0; k < nn[c]; k++)
            if (names[c][k][0]) {
                app(g, "    - cellAddress: %s\n", names[c][k]);
                cap[c]++;
            }
    }
    g->nvc = 2 + (int)gs_rng_below(r, 2);
    app(g, "virtualClusters:\n");
    for (int v = 0; v < g->nvc; v++) {
        app(g, "  v%d:\n    virtualCells:\n", v);
        int any = 0;
        for (int c = 0; c < 2; c++) {
            if (!present[c] || !cap[c]) continue;
            int k = (int)gs_rng_below(r, (uint64_t)cap[c] + 1);
            if (!k) continue;
            app(g, "    - {cellType: %s-P.%s-N, cellNumber: %d}\n", c ? "M60" : "K80",
                c ? "M60" : "K80", k);
            cap[c] -= k;
            any = 1;
        }
        if (!any) {
            int c = present[0] ? 0 : 1;
            app(g, "    - {cellType: %s-P.%s-N, cellNumber: 0}\n", c ? "M60" : "K80",
                c ? "M60" : "K80");
        }
    }
}

typedef struct watch {
    int in_reconfig; /* between a RECONFIG record and the end of its instant */
    gs_time t;       /* its instant */
    char err[512];   /* first violation */
    const gs_engine *e;
} watch;

static void watch_obs(void *ud, const gs_record *r)
{
    watch *w = ud;
    if (getenv("RECONF_DEBUG"))
        fprintf(stderr, "t=%.0f %s %lld %s\n", gs_time_to_sec(r->t), gs_rec_type_name(r->type),
                r->job ? (long long)r->job->id : -1LL, r->reason ? r->reason : "");
    if (r->type == GS_REC_RECONFIG) {
        w->in_reconfig = 1;
        w->t = r->t;
        return;
    }
    if (r->t != w->t) w->in_reconfig = 0;
    /* the reconfiguration itself stops no running job (the pass after it may) */
    if (w->in_reconfig && (r->type == GS_REC_FAIL || r->type == GS_REC_CANCEL) && !w->err[0])
        snprintf(w->err, sizeof w->err, "t=%.0f: job %lld %s at a reconfiguration",
                 gs_time_to_sec(r->t), r->job ? (long long)r->job->id : -1LL,
                 gs_rec_type_name(r->type));
}

static int run_random(uint64_t seed, const char *policy, char *err, size_t cap)
{
    gs_rng r;
    gs_rng_seed(&r, seed);
    enum { NCFG = 4 };
    gs_cluster *cl[NCFG] = {0};
    gen g;
    gs_diag d;
    int rc = -1;
    gs_engine *e = NULL;
    for (int i = 0; i < NCFG; i++) {
        make_config(&g, &r);
        gs_diag_init(&d, "gen.yaml");
        if (gs_cluster_parse_hived("gen.yaml", g.yaml, strlen(g.yaml), &cl[i], &d)) {
            snprintf(err, cap, "config %d: %s (line %d)\n%s", i, d.msg, d.line, g.yaml);
            goto out;
        }
    }
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "preempt_cost", gs_rng_below(&r, 2) ? "model" : "0");
    /* with type speeds (the default): seed 97 under gandiva once left a job SUSPENDED for
     * ever - time-sliced out after a reconfiguration left no GPU of its type; the engine now
     * refuses to suspend a job that could never be resumed (it runs on) */
    if (!strcmp(policy, "hived")) gs_params_set(&p, "overflow", gs_rng_below(&r, 2) ? "on" : "off");
    int crc = gs_engine_create(cl[0], policy, &p, NULL, &e, &d);
    gs_params_release(&p);
    if (crc) {
        snprintf(err, cap, "create: %s", d.msg);
        goto out;
    }
    watch w = {0};
    w.t = -1;
    w.e = e;
    gs_engine_set_observer(e, watch_obs, &w);
    int njobs = 10 + (int)gs_rng_below(&r, 30);
    gs_engine_reserve_ids(e, njobs);
    for (int i = 0; i < njobs; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i;
        s.submit = (gs_time)gs_rng_below(&r, 300) * GS_SEC;
        s.duration = (gs_time)(5 + gs_rng_below(&r, 200)) * GS_SEC;
        static const int prios[] = {-1, 10, 100, 100};
        s.priority = prios[gs_rng_below(&r, 4)];
        char vc[8];
        snprintf(vc, sizeof vc, "v%d", (int)gs_rng_below(&r, 2));
        s.vc = vc;
        s.ntasks = 1 + (int)gs_rng_below(&r, 3);
        s.gpus_per_task = 1 + (int)gs_rng_below(&r, 2);
        s.gang = gs_rng_below(&r, 4) ? 1 : 0;
        s.lazy_preemption = gs_rng_below(&r, 3) == 0;
        if (gs_rng_below(&r, 2)) s.gpu_type = gs_rng_below(&r, 2) ? "K80" : "M60";
        if (gs_engine_add_job(e, &s, NULL, &d)) {
            snprintf(err, cap, "add: %s", d.msg);
            goto out;
        }
    }
    for (int i = 1; i < NCFG; i++) {
        gs_time t = (gs_time)gs_rng_below(&r, 400) * GS_SEC;
        if (getenv("RECONF_NONE")) continue; /* debugging: the same run, never reconfigured */
        if (gs_engine_add_reconfig_event(e, t, cl[i])) {
            snprintf(err, cap, "reconfig event %d refused", i);
            goto out;
        }
    }
    int nn = (int)gs_cluster_nnodes(cl[0]);
    for (int k = 0; k < 2; k++) {
        int node = (int)gs_rng_below(&r, (uint64_t)nn);
        gs_time t = (gs_time)gs_rng_below(&r, 400) * GS_SEC;
        gs_engine_add_node_event(e, t, node, 1);
        gs_engine_add_node_event(e, t + (gs_time)(1 + gs_rng_below(&r, 200)) * GS_SEC, node, 0);
        /* a bad mark too: it carries over a reconfiguration like a failure */
        node = (int)gs_rng_below(&r, (uint64_t)nn);
        t = (gs_time)gs_rng_below(&r, 400) * GS_SEC;
        gs_engine_add_node_bad_event(e, t, node, 1);
        gs_engine_add_node_bad_event(e, t + (gs_time)(1 + gs_rng_below(&r, 200)) * GS_SEC, node, 0);
    }
    int steps = 0, st;
    while ((st = gs_engine_step(e)) > 0) {
        if (gs_engine_check(e, &d)) {
            snprintf(err, cap, "t=%.0f: %s", gs_time_to_sec(gs_engine_now(e)), d.msg);
            goto out;
        }
        if (w.err[0]) {
            snprintf(err, cap, "%s", w.err);
            goto out;
        }
        if (++steps > 100000) {
            size_t n = (size_t)snprintf(err, cap, "does not end:");
            for (size_t i = 0; i < gs_engine_njobs(e) && n < cap; i++) {
                const gs_job *j = gs_engine_job(e, i);
                if (!gs_job_state_final(j->state))
                    n +=
                        (size_t)snprintf(err + n, cap - n, " job %lld %dx%d type %d %s (%s)",
                                         (long long)j->id, j->ntasks, j->gpus_per_task, j->gpu_type,
                                         gs_job_state_name(j->state), j->reason ? j->reason : "");
            }
            goto out;
        }
    }
    if (st < 0) {
        snprintf(err, cap, "step: %s", gs_strerror(st));
        goto out;
    }
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->state != GS_JOB_DONE && j->state != GS_JOB_REJECTED) {
            snprintf(err, cap, "job %lld ended %s (%s)", (long long)j->id,
                     gs_job_state_name(j->state), j->reason ? j->reason : "");
            goto out;
        }
    }
    if (gs_engine_allocated(e) != 0) {
        snprintf(err, cap, "%d GPUs still allocated at the end", gs_engine_allocated(e));
        goto out;
    }
    rc = 0;
out:
    gs_engine_destroy(e);
    for (int i = 0; i < NCFG; i++) gs_cluster_destroy(cl[i]);
    return rc;
}

static void t_random(void)
{
    /* afs, elasticflow and pollux are in since they size and place a job naming a GPU type
     * over GPUs of that type only (before, some of their jobs waited for ever on these
     * clusters of two types, reconfigured or not: RECONF_NONE=1 showed it) */
    static const char *pols[] = {"fifo",  "fifo-backfill", "tiresias-las", "gandiva", "yarn-cs",
                                 "hived", "private",       "edf",          "optimus", "tiresias-tj",
                                 "srtf",  "afs",           "elasticflow",  "pollux"};
    const char *only = getenv("RECONF_SEED"), *pol = getenv("RECONF_POLICY"); /* debugging */
    for (uint64_t seed = 1; seed <= 300; seed++) {
        if (only && (uint64_t)atoll(only) != seed) continue;
        for (size_t k = 0; k < sizeof pols / sizeof *pols; k++) {
            if (pol && strcmp(pol, pols[k])) continue;
            char err[12000] = "";
            if (run_random(seed, pols[k], err, sizeof err))
                T_FAIL("seed %llu, %s: %s", (unsigned long long)seed, pols[k], err);
        }
    }
}

static const test_case tests[] = {
    {"fifo_shrink", t_fifo_shrink},
    {"fifo_grow", t_fifo_grow},
    {"refused", t_refused},
    {"live", t_live},
    {"hived_vc_moved", t_hived_vc_moved},
    {"hived_chain", t_hived_chain},
    {"hived_priority", t_hived_priority},
    {"adopt_vanished", t_adopt_vanished},
    {"random", t_random},
};

TEST_MAIN(tests)
