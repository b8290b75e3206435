/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gpubad.c - issue 17's engine calls: bad GPUs (gs_engine_set_gpu_bad) and how they
 * combine with node failures, drains, bad nodes and outside GPUs; the requeue of a suspend
 * that could not be carried out (gs_engine_requeue_suspended); LIVE resume on other GPUs of
 * the same nodes (gs_engine_opts.live_remap).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

/* A scripted policy: schedule() starts every arrived pending job that fits (when 'auto_start'),
 * the hooks count their calls. */
typedef struct scripted {
    gs_engine *e;
    int auto_start;
    int requeues, nodes_down, nodes_up;
    int last_node;
    gs_job_state requeued_as;
} scripted;

static scripted *g_last;

static int s_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    scripted *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->e = e;
    s->auto_start = 1;
    s->last_node = -1;
    *st = s;
    g_last = s;
    return 0;
}
static void s_destroy(void *st)
{
    free(st);
}
static int s_requeue(void *st, gs_job *j)
{
    scripted *s = st;
    s->requeues++;
    s->requeued_as = j->state;
    return 0;
}
static int s_node(void *st, int node, int down)
{
    scripted *s = st;
    s->last_node = node;
    if (down)
        s->nodes_down++;
    else
        s->nodes_up++;
    return 0;
}
static int s_schedule(void *st)
{
    scripted *s = st;
    for (size_t i = 0; s->auto_start && i < gs_engine_njobs(s->e); i++) {
        const gs_job *j = gs_engine_job(s->e, i);
        if (j->arrived && j->state == GS_JOB_PENDING) gs_engine_try_start(s->e, j, GS_LOCALITY_ANY);
    }
    return 0;
}

static const gs_policy_ops scripted_ops = {
    .name = "scripted",
    .summary = "test",
    .create = s_create,
    .destroy = s_destroy,
    .on_requeue = s_requeue,
    .on_node = s_node,
    .schedule = s_schedule,
};

static gs_engine *mk(const char *spec, gs_engine_mode mode, int live_remap, gs_cluster **cp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, cp, &d)) return NULL;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = mode;
    o.live_remap = live_remap;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    gs_engine *e;
    int rc = gs_engine_create_ops(*cp, &scripted_ops, &p, &o, &e, &d);
    gs_params_release(&p);
    return rc ? NULL : e;
}

static const gs_job *add(gs_engine *e, int64_t id, double submit, int ntasks, int gpt, double dur)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(submit);
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.duration = gs_time_from_sec(dur);
    const gs_job *j = NULL;
    if (gs_engine_add_job(e, &s, &j, NULL)) return NULL;
    return j;
}

static const gs_job *live_sub(gs_engine *e, int ntasks, int gpt, double dur, gs_time now)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.gang = 1;
    s.duration = gs_time_from_sec(dur);
    const gs_job *j = NULL;
    if (gs_engine_submit(e, &s, now, &j, NULL)) return NULL;
    return j;
}

/* Records: GPU records as "type@second:node/gpu", REQUEUE as "requeued:reason"; any other
 * record with gpu != -1, or a GPU record without a GPU, counts as wrong. */
typedef struct recs {
    char buf[1024];
    int wrong;
} recs;
static void obs(void *ud, const gs_record *r)
{
    recs *x = ud;
    size_t l = strlen(x->buf);
    if (r->type == GS_REC_GPU_BAD || r->type == GS_REC_GPU_GOOD) {
        if (r->gpu < 0 || r->job) x->wrong++;
        snprintf(x->buf + l, sizeof x->buf - l, "%s%s@%lld:%d/%d", l ? " " : "",
                 gs_rec_type_name(r->type), (long long)(r->t / GS_SEC), r->node, r->gpu);
        return;
    }
    if (r->gpu != -1) x->wrong++;
    if (r->type == GS_REC_REQUEUE)
        snprintf(x->buf + l, sizeof x->buf - l, "%srequeued:%s", l ? " " : "",
                 r->reason ? r->reason : "");
}

static int down(gs_cluster *c, int g)
{
    return gs_cluster_gpu(c, g)->down;
}

/* SIM: a bad GPU takes no new job, the job holding one runs on (its GPU stays out once freed),
 * good again returns it; records name node and GPU; the policy hears on_node when a GPU's
 * usability changes, not for a repeated mark. */
static void t_sim_gpu_bad(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_SIM, 0, &c); /* node 0: GPUs 0, 1; node 1: 2, 3 */
    ASSERT(e);
    recs rec = {{0}, 0};
    gs_engine_set_observer(e, obs, &rec);
    ASSERT_STR(gs_rec_type_name(GS_REC_GPU_BAD), "gpu_bad");
    ASSERT_STR(gs_rec_type_name(GS_REC_GPU_GOOD), "gpu_good");
    ASSERT_EQ(GS_REC_GPU_BAD, GS_REC_RECONFIG + 1); /* appended at the end */
    ASSERT_EQ(GS_REC_GPU_GOOD, GS_REC_NTYPES - 1);
    ASSERT(!gs_engine_gpu_bad(e, 1));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 1, 0, "good already: nothing"));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 1, 1, "Xid 79: GPU has fallen off the bus"));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 1, 1, "again: nothing"));
    ASSERT(gs_engine_gpu_bad(e, 1) && !gs_engine_gpu_bad(e, 0));
    ASSERT(down(c, 1) && !down(c, 0));
    ASSERT_EQ(gs_engine_node_state(e, 0), 0u); /* a GPU, not the node */
    ASSERT_EQ(g_last->nodes_up, 1);            /* told once, node 0 still up */
    ASSERT_EQ(g_last->last_node, 0);
    ASSERT_EQ(gs_engine_set_gpu_bad(e, 4, 1, NULL), GS_ERANGE);
    ASSERT_EQ(gs_engine_set_gpu_bad(e, -1, 1, NULL), GS_ERANGE);
    ASSERT(!gs_engine_gpu_bad(e, 4) && !gs_engine_gpu_bad(e, -1));
    const gs_job *a = add(e, 1, 0, 1, 2, 100); /* node 1: node 0 has one usable GPU */
    const gs_job *b = add(e, 2, 0, 1, 1, 50);  /* GPU 0 */
    const gs_job *x = add(e, 3, 10, 1, 2, 10); /* waits for a pair */
    const gs_job *y = add(e, 4, 200, 1, 1, 10);
    ASSERT(a && b && x && y);
    while (gs_engine_next_event_time(e) < 20 * GS_SEC && gs_engine_step(e) > 0)
        ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(gs_engine_now(e), 10 * GS_SEC);
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, a->alloc[0])->node, 1);
    ASSERT_EQ(b->alloc[0], 0);
    ASSERT_EQ(x->state, GS_JOB_PENDING);
    /* a GPU a job holds turns bad: the job keeps it and runs on */
    ASSERT_OK(gs_engine_set_gpu_bad(e, 2, 1, NULL));
    ASSERT_EQ(g_last->nodes_up, 2);
    ASSERT_EQ(g_last->last_node, 1);
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT(a->alloc[0] == 2 || a->alloc[1] == 2);
    ASSERT_EQ(gs_cluster_gpu(c, 2)->owner, a->slot);
    ASSERT_OK(gs_engine_check(e, NULL));
    while (gs_engine_next_event_time(e) < 150 * GS_SEC && gs_engine_step(e) > 0)
        ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->end, 100 * GS_SEC); /* ran on, never requeued */
    ASSERT_EQ(a->preemptions + a->restarts, 0);
    ASSERT_EQ(g_last->requeues, 0);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_EQ(x->state, GS_JOB_PENDING); /* GPUs 0 and 3 are free, on two nodes */
    ASSERT_EQ(gs_cluster_free(c), 2);
    ASSERT(down(c, 2) && gs_cluster_gpu(c, 2)->owner < 0); /* freed, out of service */
    /* good again: back at once; the next pass starts x on node 0 */
    ASSERT_OK(gs_engine_set_gpu_bad(e, 1, 0, "repaired"));
    ASSERT(!down(c, 1) && !gs_engine_gpu_bad(e, 1));
    ASSERT_EQ(g_last->nodes_up, 3);
    ASSERT_EQ(gs_cluster_free(c), 3);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(x->first_start, 200 * GS_SEC);
    ASSERT_EQ(gs_cluster_gpu(c, x->last_alloc[0])->node, 0);
    ASSERT_EQ(y->last_alloc[0], 3); /* never the bad GPU 2 */
    ASSERT_STR(rec.buf, "gpu_bad@0:0/1 gpu_bad@10:1/2 gpu_good@100:0/1");
    ASSERT_EQ(rec.wrong, 0);
    ASSERT_EQ(g_last->nodes_down, 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* A bad GPU and its node's reasons (bad node, failure, drain) are independent: a GPU is usable
 * only when none holds; the policy hears on_node only when usability changes. */
static void t_gpu_bad_node_states(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_SIM, 0, &c);
    ASSERT(e);
    ASSERT_OK(gs_engine_add_node_bad_event(e, 10 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(e, 20 * GS_SEC, 0, 0));
    ASSERT_OK(gs_engine_add_node_event(e, 30 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_event(e, 40 * GS_SEC, 0, 0));
    ASSERT_OK(gs_engine_add_node_drain_event(e, 50 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_drain_event(e, 60 * GS_SEC, 0, 0));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 1, 1, "ECC"));
    ASSERT_EQ(g_last->nodes_up, 1);
#define STEP_TO(sec)                                                              \
    while (gs_engine_next_event_time(e) <= (sec)*GS_SEC && gs_engine_step(e) > 0) \
    ASSERT_OK(gs_engine_check(e, NULL))
    STEP_TO(10); /* node bad */
    ASSERT(down(c, 0) && down(c, 1));
    ASSERT_EQ(g_last->nodes_down, 1);
    STEP_TO(20); /* node good: GPU 1 stays out */
    ASSERT(!down(c, 0) && down(c, 1));
    ASSERT_EQ(g_last->nodes_up, 2);
    STEP_TO(30); /* node failed: a GPU marked bad meanwhile changes nothing usable */
    ASSERT_EQ(g_last->nodes_down, 2);
    ASSERT_OK(gs_engine_set_gpu_bad(e, 0, 1, "Xid 48"));
    ASSERT_EQ(g_last->nodes_up + g_last->nodes_down, 4);
    ASSERT_OK(gs_engine_check(e, NULL));
    STEP_TO(40); /* back up: both GPUs stay out */
    ASSERT_EQ(gs_engine_node_state(e, 0), 0u);
    ASSERT(!gs_cluster_node(c, 0)->down && down(c, 0) && down(c, 1));
    ASSERT_EQ(g_last->nodes_up, 3);
    ASSERT_OK(gs_engine_set_gpu_bad(e, 0, 0, NULL));
    ASSERT(!down(c, 0) && down(c, 1));
    ASSERT_EQ(g_last->nodes_up, 4);
    STEP_TO(50); /* drained: a GPU good again stays out until the drain ends */
    ASSERT_EQ(g_last->nodes_down, 3);
    ASSERT_OK(gs_engine_set_gpu_bad(e, 1, 0, NULL));
    ASSERT(down(c, 0) && down(c, 1) && !gs_engine_gpu_bad(e, 1));
    ASSERT_EQ(g_last->nodes_up, 4); /* nothing usable changed */
    ASSERT_OK(gs_engine_check(e, NULL));
    STEP_TO(60);
    ASSERT(!down(c, 0) && !down(c, 1));
    ASSERT_EQ(g_last->nodes_up, 5);
    ASSERT_EQ(gs_cluster_free(c), 4);
#undef STEP_TO
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static int node_free(gs_cluster *c, int node)
{
    return gs_cluster_cell(c, gs_cluster_node(c, node)->cell)->free;
}

/* LIVE: outside counts never take a bad GPU (one that turns bad leaves the count, which takes
 * another); a GPU good again serves a count still short; dry runs see bad GPUs. */
static void t_live_gpu_bad_outside(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x4", GS_ENGINE_LIVE, 0, &c);
    ASSERT(e);
    gs_time t0 = 1700000000LL * GS_SEC;
    ASSERT_OK(gs_engine_set_outside(e, 0, 2, "slurm")); /* GPUs 3, 2 */
    ASSERT(gs_engine_gpu_outside(e, 3) && gs_engine_gpu_outside(e, 2));
    int told = g_last->nodes_up;
    ASSERT_OK(gs_engine_set_gpu_bad(e, 3, 1, "ECC"));
    ASSERT(!gs_engine_gpu_outside(e, 3) && gs_engine_gpu_bad(e, 3) && down(c, 3));
    ASSERT(gs_engine_gpu_outside(e, 2) && gs_engine_gpu_outside(e, 1)); /* took GPU 1 */
    int want = -1;
    ASSERT_EQ(gs_engine_node_outside(e, 0, &want), 2);
    ASSERT_EQ(want, 2);
    ASSERT_EQ(node_free(c, 0), 1);
    ASSERT_EQ(g_last->nodes_up, told + 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_set_outside(e, 0, 4, "slurm")); /* GPU 0; never the bad one */
    ASSERT_EQ(gs_engine_node_outside(e, 0, &want), 3);
    ASSERT_EQ(want, 4);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 3, 0, "reset")); /* back: the short count takes it */
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 4);
    ASSERT(gs_engine_gpu_outside(e, 3) && down(c, 3));
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_set_outside(e, 0, 0, NULL));
    ASSERT_EQ(node_free(c, 0), 4);
    /* a dry run sees a bad GPU */
    ASSERT_OK(gs_engine_set_gpu_bad(e, 0, 1, "Xid 79"));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 4;
    gs_probe p;
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_WAIT);
    gs_probe_release(&p);
    ASSERT_OK(gs_engine_set_gpu_bad(e, 0, 0, NULL));
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    gs_probe_release(&p);
    /* a running job's GPU turns bad while an outside count waits for it: freed, it stays bad
     * and is not taken; good again, the count takes it */
    const gs_job *a = live_sub(e, 1, 1, 1000, t0);
    ASSERT(a);
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    int g = a->alloc[0];
    ASSERT_OK(gs_engine_set_gpu_bad(e, g, 1, "Xid 63"));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_set_outside(e, 0, 4, "slurm"));
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 3);
    ASSERT_OK(gs_engine_task_exited(e, a, 0, "done", t0 + GS_SEC));
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 3);
    ASSERT(down(c, g) && !gs_engine_gpu_outside(e, g));
    ASSERT_EQ(node_free(c, 0), 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_set_gpu_bad(e, g, 0, NULL));
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 4);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* A reconfiguration keeps bad GPUs bad (matched by node name and index). */
static void t_gpu_bad_reconfig(void)
{
    gs_cluster *c, *c2;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("2x2", &c, &d));
    ASSERT_OK(gs_cluster_parse_shorthand("3x2", &c2, &d));
    gs_engine *e = NULL;
    ASSERT_OK(gs_engine_create(c, "fifo", NULL, NULL, &e, &d));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 3, 1, "Xid 79"));
    ASSERT_OK(gs_engine_reconfigure(e, c2, &d));
    ASSERT(gs_engine_gpu_bad(e, 3) && down(c2, 3));
    ASSERT(!gs_engine_gpu_bad(e, 4) && !down(c2, 4));
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 3, 0, NULL));
    ASSERT(!down(c2, 3));
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c2);
    gs_cluster_destroy(c);
}

/* hived (3 nodes x 4 GPUs, VC1 guaranteed one node) hears of bad GPUs through on_node: its
 * cells and checks follow; a job on a GPU that turns bad keeps running. */
static void t_gpu_bad_hived(void)
{
    const char *path = test_src("data/examples/hived-basic.yaml");
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    gs_cluster *c;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_hived(path, buf, n, &c, &d));
    gs_params prm;
    gs_params_init(&prm);
    gs_params_set(&prm, "slowdown", "off");
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_LIVE;
    gs_engine *e;
    ASSERT_OK(gs_engine_create(c, "hived", &prm, &o, &e, &d));
    gs_params_release(&prm);
    gs_time t0 = 1700000000LL * GS_SEC;
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 0, 1, "Xid 79"));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 4, 1, "Xid 79"));
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 4;
    s.vc = "VC1";
    s.duration = 1000 * GS_SEC;
    const gs_job *h = NULL, *h2 = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, t0 + GS_SEC, &h, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + GS_SEC));
    ASSERT_EQ(h->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, h->alloc[0])->node, 2); /* the only node with 4 good GPUs */
    ASSERT_OK(gs_engine_check(e, NULL));
    s.priority = -1; /* opportunistic: any free GPUs */
    ASSERT_OK(gs_engine_submit(e, &s, t0 + 2 * GS_SEC, &h2, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + 2 * GS_SEC));
    ASSERT_EQ(h2->state, GS_JOB_PENDING); /* nodes 0 and 1 have 3 good GPUs each */
    ASSERT_OK(gs_engine_set_gpu_bad(e, h->alloc[1], 1, "ECC"));
    ASSERT_EQ(h->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_set_gpu_bad(e, 4, 0, "reset"));
    ASSERT_OK(gs_engine_advance(e, t0 + 3 * GS_SEC));
    ASSERT_EQ(h2->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, h2->alloc[0])->node, 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    /* a reconfiguration: the new hived learns of the bad GPU and of outside GPUs on nodes that
     * are up (node 0: GPU 0 bad, GPU 3 outside) */
    ASSERT_OK(gs_engine_set_outside(e, 0, 1, "foreign"));
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_cluster *c2;
    ASSERT_OK(gs_cluster_parse_hived(path, buf, n, &c2, &d));
    ASSERT_OK(gs_engine_reconfigure(e, c2, &d));
    ASSERT(gs_engine_gpu_bad(e, 0) && down(c2, 0) && gs_engine_gpu_outside(e, 3) && down(c2, 3));
    gs_diag_init(&d, NULL);
    if (gs_engine_check(e, &d)) T_FAIL("after the reconfiguration: %s", d.msg);
    gs_engine_destroy(e);
    gs_cluster_destroy(c2);
    gs_cluster_destroy(c);
}

/* gs_engine_requeue_suspended: a SUSPENDED job back to PENDING as a preempted one (progress
 * kept, a preemption counted, the policy told), with the reason; GS_ESTATE otherwise. */
static void t_requeue_suspended(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x2", GS_ENGINE_LIVE, 0, &c);
    ASSERT(e);
    recs rec = {{0}, 0};
    gs_engine_set_observer(e, obs, &rec);
    gs_time t0 = 1700000000LL * GS_SEC;
    const gs_job *a = live_sub(e, 1, 1, 1000, t0);
    ASSERT(a);
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_engine_requeue_suspended(e, a, "not suspended", t0), GS_ESTATE);
    g_last->auto_start = 0;
    ASSERT_OK(gs_engine_advance(e, t0 + 10 * GS_SEC));
    ASSERT_OK(gs_engine_suspend(e, a, "slice"));
    ASSERT_EQ(a->state, GS_JOB_SUSPENDED);
    gs_time done = a->progress;
    ASSERT_EQ(done, 10 * GS_SEC);
    const char *why = "checkpoint-based suspend failed: lock timed out; stopped and requeued";
    ASSERT_OK(gs_engine_requeue_suspended(e, a, why, t0 + 12 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_STR(a->reason, why);
    ASSERT_EQ(a->progress, done);
    ASSERT_EQ(gs_job_remaining(a, t0 + 12 * GS_SEC), 990 * GS_SEC);
    ASSERT_EQ(a->suspended, 2 * GS_SEC);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT_EQ(a->stop_saved, 1);
    ASSERT_EQ(g_last->requeues, 1);
    ASSERT_EQ(g_last->requeued_as, GS_JOB_PENDING);
    ASSERT_EQ(gs_engine_nsuspended(e), 0);
    ASSERT_EQ(gs_engine_npending(e), 1);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    ASSERT_EQ(gs_engine_requeue_suspended(e, a, why, t0 + 12 * GS_SEC), GS_ESTATE);
    ASSERT_OK(gs_engine_check(e, NULL));
    /* it starts again from its checkpoint */
    g_last->auto_start = 1;
    ASSERT_OK(gs_engine_advance(e, t0 + 13 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(a->restarts, 1);
    ASSERT_EQ(a->progress, done);
    /* without a reason: "suspend failed" */
    g_last->auto_start = 0;
    ASSERT_OK(gs_engine_suspend(e, a, "slice"));
    ASSERT_OK(gs_engine_requeue_suspended(e, a, NULL, t0 + 14 * GS_SEC));
    ASSERT_STR(a->reason, "suspend failed");
    char want[512];
    snprintf(want, sizeof want, "requeued:%s requeued:suspend failed", why);
    ASSERT_STR(rec.buf, want);
    ASSERT_EQ(rec.wrong, 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* SIM: GS_ESTATE (a suspend there cannot fail) */
    e = mk("1x2", GS_ENGINE_SIM, 0, &c);
    ASSERT(e);
    const gs_job *b = add(e, 1, 0, 1, 1, 100);
    ASSERT(b);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(b->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_suspend(e, b, "slice"));
    ASSERT_EQ(gs_engine_requeue_suspended(e, b, "x", 0), GS_ESTATE);
    ASSERT_EQ(b->state, GS_JOB_SUSPENDED);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* LIVE resume on other GPUs: refused without live_remap; with it, each task on other GPUs of
 * the node it left (validated as a start), never on another node. */
static void t_live_remap(void)
{
    for (int remap = 0; remap <= 1; remap++) {
        gs_cluster *c;
        gs_engine *e = mk("2x4", GS_ENGINE_LIVE, remap, &c); /* node 0: GPUs 0-3, node 1: 4-7 */
        ASSERT(e);
        ASSERT_EQ(gs_engine_opts_get(e)->live_remap, remap);
        g_last->auto_start = 0;
        gs_time t0 = 1700000000LL * GS_SEC;
        const gs_job *a = live_sub(e, 2, 1, 1000, t0); /* two tasks of one GPU */
        const gs_job *x = live_sub(e, 1, 1, 1000, t0);
        ASSERT(a && x);
        ASSERT_OK(gs_engine_advance(e, t0));
        int ga[] = {0, 4}, gx[] = {1};
        ASSERT_OK(gs_engine_start(e, a, ga, 2));
        ASSERT_OK(gs_engine_start(e, x, gx, 1));
        ASSERT_OK(gs_engine_suspend(e, a, "slice"));
        int moved[] = {3, 6}, swapped[] = {6, 2}, taken[] = {1, 5}, bad[] = {2, 5},
            range[] = {0, 8};
        int same_swapped[] = {4, 0}; /* its GPUs, but each task on the other's node */
        ASSERT_EQ(gs_engine_resume(e, a, same_swapped, 2), GS_EUNSUPPORTED);
        if (!remap) {
            ASSERT_EQ(gs_engine_resume(e, a, moved, 2), GS_EUNSUPPORTED);
            ASSERT_OK(gs_engine_resume(e, a, ga, 2)); /* where it was: SIGCONT */
        } else {
            ASSERT_EQ(gs_engine_resume(e, a, swapped, 2), GS_EUNSUPPORTED); /* tasks move nodes */
            ASSERT_EQ(gs_engine_resume(e, a, taken, 2), GS_ECONFLICT);
            ASSERT_OK(gs_engine_set_gpu_bad(e, 2, 1, "Xid 79"));
            ASSERT_EQ(gs_engine_resume(e, a, bad, 2), GS_ECONFLICT);
            ASSERT_EQ(gs_engine_resume(e, a, range, 2), GS_EINVAL);
            ASSERT_EQ(a->state, GS_JOB_SUSPENDED);
            ASSERT_OK(gs_engine_check(e, NULL));
            ASSERT_OK(gs_engine_resume(e, a, moved, 2));
            ASSERT_EQ(a->alloc[0], 3);
            ASSERT_EQ(a->alloc[1], 6);
        }
        ASSERT_EQ(a->state, GS_JOB_RUNNING);
        ASSERT_EQ(a->resumes, 1);
        ASSERT_EQ(a->migrations, 0);
        ASSERT(a->suspend_gpu_s == 0.0);
        ASSERT_OK(gs_engine_check(e, NULL));
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
    }
}

static const test_case tests[] = {
    {"sim_gpu_bad", t_sim_gpu_bad},
    {"gpu_bad_node_states", t_gpu_bad_node_states},
    {"live_gpu_bad_outside", t_live_gpu_bad_outside},
    {"gpu_bad_reconfig", t_gpu_bad_reconfig},
    {"gpu_bad_hived", t_gpu_bad_hived},
    {"requeue_suspended", t_requeue_suspended},
    {"live_remap", t_live_remap},
};

TEST_MAIN(tests)
