/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_engine.c - engine: validation, progress, preemption, live mode, node events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

/* A scripted policy: schedule() calls a test hook. */
typedef struct scripted {
    gs_engine *e;
    void (*hook)(struct scripted *s);
    int arrivals, requeues, finishes, timers, passes;
    uint64_t last_tag;
    void *ud;
    /* re-entry and errors */
    int depth, max_depth;           /* nesting of schedule() */
    int requeues_in_pass;           /* on_requeue calls made while schedule() ran */
    gs_job_state requeued_as;       /* the job's state when on_requeue saw it */
    int arrival_rc, requeue_rc;     /* what those hooks return */
    int preempt_rc, requeues_after; /* set by reentry_hook */
    int nodes_down, nodes_up;       /* on_node calls */
} scripted;

static scripted *g_last; /* test-only: the policy instance of the current engine */

static int s_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    scripted *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->e = e;
    *st = s;
    g_last = s;
    return 0;
}
static void s_destroy(void *st)
{
    free(st);
}
static int s_arrival(void *st, gs_job *j)
{
    (void)j;
    ((scripted *)st)->arrivals++;
    return ((scripted *)st)->arrival_rc;
}
static int s_requeue(void *st, gs_job *j)
{
    scripted *s = st;
    s->requeues++;
    s->requeues_in_pass += s->depth > 0;
    s->requeued_as = j->state;
    return s->requeue_rc;
}
static int s_finish(void *st, gs_job *j)
{
    (void)j;
    ((scripted *)st)->finishes++;
    return 0;
}
static int s_timer(void *st, uint64_t tag)
{
    ((scripted *)st)->timers++;
    ((scripted *)st)->last_tag = tag;
    return 0;
}
static int s_node(void *st, int node, int down)
{
    (void)node;
    if (down)
        ((scripted *)st)->nodes_down++;
    else
        ((scripted *)st)->nodes_up++;
    return 0;
}
static int s_schedule(void *st)
{
    scripted *s = st;
    s->passes++;
    if (++s->depth > s->max_depth) s->max_depth = s->depth;
    if (s->hook) s->hook(s);
    s->depth--;
    return 0;
}

static const gs_policy_ops scripted_ops = {
    .name = "scripted",
    .summary = "test",
    .flags = GS_POLICY_PREEMPTIVE,
    .create = s_create,
    .destroy = s_destroy,
    .on_arrival = s_arrival,
    .on_requeue = s_requeue,
    .on_finish = s_finish,
    .on_timer = s_timer,
    .on_node = s_node,
    .schedule = s_schedule,
};

/* engines for exact timing checks: no slowdown, free restarts unless 'costs' given */
static gs_engine *mk_costs(const char *spec, gs_engine_mode mode, gs_cluster **cp,
                           const char *const *costs)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, cp, &d)) return NULL;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = mode;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    for (; costs && *costs; costs++) gs_params_set_kv(&p, *costs);
    gs_engine *e;
    int rc = gs_engine_create_ops(*cp, &scripted_ops, &p, &o, &e, &d);
    gs_params_release(&p);
    return rc ? NULL : e;
}

static gs_engine *mk(const char *spec, gs_engine_mode mode, gs_cluster **cp)
{
    return mk_costs(spec, mode, cp, NULL);
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

/* start every pending job that fits (arrival order) */
static void start_all(scripted *s)
{
    for (size_t i = 0; i < gs_engine_njobs(s->e); i++) {
        const gs_job *j = gs_engine_job(s->e, i);
        if (j->arrived && j->state == GS_JOB_PENDING) gs_engine_try_start(s->e, j, GS_LOCALITY_ANY);
    }
}

static void t_run_to_completion(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x1x4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = start_all;
    const gs_job *a = add(e, 1, 0, 2, 1, 100);
    const gs_job *b = add(e, 2, 10, 4, 1, 50); /* waits for a */
    const gs_job *x = add(e, 3, 20, 1, 1, 5);  /* fits beside a at 20 */
    ASSERT(a && b && x);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->end, 100 * GS_SEC);
    ASSERT_EQ(x->first_start, 20 * GS_SEC);
    ASSERT_EQ(x->end, 25 * GS_SEC);
    ASSERT_EQ(b->first_start, 100 * GS_SEC);
    ASSERT_EQ(b->end, 150 * GS_SEC);
    ASSERT_EQ(b->queued, 90 * GS_SEC);
    ASSERT_EQ(g_last->arrivals, 3);
    ASSERT_EQ(g_last->finishes, 3);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    ASSERT(gs_engine_idle(e));
    ASSERT_OK(gs_engine_check(e, NULL));
    /* 3 arrivals + 3 completions */
    ASSERT_EQ(gs_engine_events(e), 6);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void check_start_rules(scripted *s)
{
    gs_engine *e = s->e;
    const gs_job *j = gs_engine_find_job(e, 1);
    if (!j || j->state != GS_JOB_PENDING) return;
    int wrong_count[] = {0, 1, 2};
    s->ud = (void *)(intptr_t)(gs_engine_start(e, j, wrong_count, 3) == GS_EINVAL);
    int split[] = {0, 4, 1, 2}; /* task 0 = {0,4} spans two nodes */
    if (gs_engine_start(e, j, split, 4) != GS_EINVAL) s->ud = 0;
    int dup[] = {0, 0, 1, 2};
    if (gs_engine_start(e, j, dup, 4) != GS_EINVAL) s->ud = 0;
    int ok[] = {0, 1, 4, 5}; /* 2 tasks x 2: one per node */
    if (gs_engine_start(e, j, ok, 4) != 0) s->ud = 0;
    if (gs_engine_start(e, j, ok, 4) != GS_ESTATE) s->ud = 0; /* not pending any more */
    const gs_job *k = gs_engine_find_job(e, 2);
    int busy[] = {0, 1};
    if (k && gs_engine_start(e, k, busy, 2) != GS_ECONFLICT) s->ud = 0;
}

static void t_start_validation(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = check_start_rules;
    ASSERT(add(e, 1, 0, 2, 2, 10));
    ASSERT(add(e, 2, 0, 1, 2, 10));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT(g_last->ud != NULL);
    ASSERT_EQ(gs_engine_find_job(e, 1)->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_engine_find_job(e, 2)->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* preempt job 1 at t=40 (timer), restart it when the intruder is done */
static void preempt_hook(scripted *s)
{
    gs_engine *e = s->e;
    const gs_job *a = gs_engine_find_job(e, 1), *b = gs_engine_find_job(e, 2);
    gs_time now = gs_engine_now(e);
    if (now == 0) {
        gs_engine_try_start(e, a, GS_LOCALITY_ANY);
        gs_engine_set_timer(e, 40 * GS_SEC, 7);
    } else if (now == 40 * GS_SEC && a->state == GS_JOB_RUNNING) {
        gs_engine_preempt(e, a, "test");
        gs_engine_try_start(e, b, GS_LOCALITY_ANY);
    } else if (b->state == GS_JOB_DONE && a->state == GS_JOB_PENDING) {
        gs_engine_try_start(e, a, GS_LOCALITY_ANY);
    }
}

static void t_preempt_keeps_progress(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = preempt_hook;
    const gs_job *a = add(e, 1, 0, 4, 1, 100);
    const gs_job *b = add(e, 2, 0, 4, 1, 20);
    ASSERT(a && b);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(g_last->timers, 1);
    ASSERT_EQ(g_last->last_tag, 7);
    ASSERT_EQ(g_last->requeues, 1);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT_EQ(a->restarts, 1);
    ASSERT_EQ(b->first_start, 40 * GS_SEC);
    ASSERT_EQ(b->end, 60 * GS_SEC);
    /* 40 s done before the preemption, 60 s left from t=60 */
    ASSERT_EQ(a->end, 120 * GS_SEC);
    ASSERT_EQ(a->executed, 100 * GS_SEC);
    ASSERT_EQ(a->queued, 20 * GS_SEC);
    ASSERT_NEAR(a->service, 400.0, 1e-9);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_reject_never_fits(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x8", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = start_all;
    const gs_job *big = add(e, 1, 0, 17, 1, 10);
    const gs_job *wide = add(e, 2, 0, 1, 9, 10);
    const gs_job *fine = add(e, 3, 0, 16, 1, 10);
    ASSERT(big && wide && fine);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(big->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(big->reason, "needs 17 GPUs but the cluster has 16");
    ASSERT_EQ(wide->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(wide->reason, "largest node has 8");
    ASSERT_EQ(fine->state, GS_JOB_DONE);
    ASSERT_EQ(g_last->arrivals, 1); /* the policy never sees rejected jobs */
    /* bad specs are input errors */
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "at least 1 task");
    gs_job_spec_init(&s);
    s.id = 3;
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, &d), GS_EEXIST);
    gs_job_spec_init(&s);
    s.duration = -1;
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, &d), GS_EINVAL);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_simultaneous_order(void)
{
    /* a completion and an arrival at the same instant: the completion frees
     * GPUs first, so the arriving job starts at that instant */
    gs_cluster *c;
    gs_engine *e = mk("2", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = start_all;
    const gs_job *a = add(e, 1, 0, 2, 1, 10);
    const gs_job *b = add(e, 2, 10, 2, 1, 10);
    ASSERT(a && b);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(b->first_start, 10 * GS_SEC);
    ASSERT_EQ(b->queued, 0);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_node_failure_requeues(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = start_all;
    const gs_job *a = add(e, 1, 0, 4, 1, 100);
    ASSERT(a);
    ASSERT_OK(gs_engine_add_node_event(e, 30 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_event(e, 500 * GS_SEC, 0, 0));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(g_last->requeues, 1);
    ASSERT_EQ(a->state, GS_JOB_DONE);
    /* restarted at once on node 1 with 70 s left */
    ASSERT_EQ(a->end, 100 * GS_SEC);
    ASSERT_EQ(gs_cluster_gpu(c, a->last_alloc[0])->node, 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* gs_engine_add_cancel_event: a running job frees its GPUs, a waiting one stops waiting, one
 * not yet arrived never arrives, one arriving at that instant is cancelled before the pass,
 * one that ended is untouched; unknown ids are refused */
static void t_cancel_events(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = start_all;
    const gs_job *run = add(e, 1, 0, 4, 1, 100), *wait = add(e, 2, 0, 2, 4, 50),
                 *early = add(e, 3, 50, 1, 1, 10), *same = add(e, 4, 60, 1, 1, 10),
                 *done = add(e, 5, 0, 1, 1, 10);
    ASSERT(run && wait && early && same && done);
    ASSERT_OK(gs_engine_add_cancel_event(e, 30 * GS_SEC, 1, "stop it"));
    ASSERT_OK(gs_engine_add_cancel_event(e, 20 * GS_SEC, 2, NULL));
    ASSERT_OK(gs_engine_add_cancel_event(e, 10 * GS_SEC, 3, NULL));
    ASSERT_OK(gs_engine_add_cancel_event(e, 60 * GS_SEC, 4, NULL));
    ASSERT_OK(gs_engine_add_cancel_event(e, 200 * GS_SEC, 5, NULL));
    ASSERT_EQ(gs_engine_add_cancel_event(e, 5 * GS_SEC, 99, NULL), GS_EUNKNOWN);
    while (gs_engine_now(e) < 30 * GS_SEC) ASSERT(gs_engine_step(e) > 0);
    ASSERT_EQ(run->state, GS_JOB_CANCELLED);
    ASSERT_EQ(run->end, 30 * GS_SEC);
    ASSERT_STR(run->reason, "stop it");
    ASSERT_EQ(gs_cluster_free(c), 8); /* its GPUs are free again */
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(wait->state, GS_JOB_CANCELLED);
    ASSERT_EQ(wait->first_start, GS_TIME_NONE);
    ASSERT_EQ(wait->queued, 20 * GS_SEC);
    ASSERT_STR(wait->reason, "cancelled");
    ASSERT_EQ(early->state, GS_JOB_CANCELLED);
    ASSERT_EQ(early->arrived, 0);
    ASSERT_EQ(same->state, GS_JOB_CANCELLED);
    ASSERT_EQ(same->arrived, 1);
    ASSERT_EQ(same->first_start, GS_TIME_NONE);
    ASSERT_EQ(done->state, GS_JOB_DONE);
    ASSERT_EQ(done->end, 10 * GS_SEC);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void live_hook(scripted *s)
{
    start_all(s);
}

/* gs_engine_drain_node: no new start on a drained node, its running job keeps its GPUs (and
 * they stay unavailable once freed), arrivals are not rejected, undraining starts the queue */
static void t_live_drain(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    g_last->hook = live_hook;
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 2;
    s.duration = 0;
    gs_time t0 = 1700000000LL * GS_SEC;
    const gs_job *a, *b;
    ASSERT_OK(gs_engine_submit(e, &s, t0, &a, NULL));
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_drain_node(e, 0, 1, "state directory read-only"));
    ASSERT_OK(gs_engine_drain_node(e, 1, 1, "state directory read-only"));
    ASSERT_OK(gs_engine_drain_node(e, 1, 1, "again")); /* already drained: nothing */
    ASSERT_EQ(a->state, GS_JOB_RUNNING);               /* not requeued, unlike a node failure */
    ASSERT_EQ(gs_engine_allocated(e), 2);
    ASSERT_EQ(gs_cluster_free(c), 0);
    s.ntasks = 4; /* the whole cluster: feasible, so not rejected while drained */
    ASSERT_OK(gs_engine_submit(e, &s, t0 + GS_SEC, &b, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_task_exited(e, a, 0, "done", t0 + 2 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_OK(gs_engine_advance(e, t0 + 2 * GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_PENDING); /* the freed GPUs stay drained */
    ASSERT_EQ(gs_cluster_free(c), 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_drain_node(e, 0, 0, "back"));
    ASSERT_OK(gs_engine_advance(e, t0 + 3 * GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_PENDING); /* needs both nodes */
    ASSERT_OK(gs_engine_drain_node(e, 1, 0, "back"));
    ASSERT_OK(gs_engine_advance(e, t0 + 4 * GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_engine_drain_node(e, 2, 1, "no such node"), GS_ERANGE);
    ASSERT_EQ(gs_engine_drain_node(e, -1, 1, "no such node"), GS_ERANGE);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    e = mk("2x2", GS_ENGINE_SIM, &c);
    ASSERT(e);
    ASSERT_EQ(gs_engine_drain_node(e, 0, 1, "sim"), GS_ESTATE); /* SIM: node events instead */
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* node records, as "type@second:node" */
typedef struct nrec {
    char buf[512];
} nrec;
static void node_obs(void *ud, const gs_record *r)
{
    nrec *n = ud;
    if (r->node < 0) return;
    size_t l = strlen(n->buf);
    snprintf(n->buf + l, sizeof n->buf - l, "%s%s@%lld:%d", l ? " " : "", gs_rec_type_name(r->type),
             (long long)(r->t / GS_SEC), r->node);
}

/* A bad node takes no new job while its running job runs on (a failure requeues); a failure
 * and its recovery on a bad node leave it bad; only good again returns it. */
static void t_node_bad(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_SIM, &c);
    ASSERT(e);
    nrec rec = {{0}};
    gs_engine_set_observer(e, node_obs, &rec);
    g_last->hook = start_all;
    const gs_job *a = add(e, 1, 0, 1, 2, 100);  /* node 0 */
    const gs_job *b = add(e, 2, 20, 1, 2, 500); /* node 1: node 0 is bad */
    const gs_job *x = add(e, 3, 30, 1, 2, 10);  /* waits for node 0 to be good */
    ASSERT(a && b && x);
    ASSERT_OK(gs_engine_add_node_bad_event(e, 10 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(e, 11 * GS_SEC, 0, 1)); /* already bad: nothing */
    ASSERT_OK(gs_engine_add_node_event(e, 150 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_event(e, 200 * GS_SEC, 0, 0));
    ASSERT_OK(gs_engine_add_node_bad_event(e, 300 * GS_SEC, 0, 0));
    ASSERT_EQ(gs_engine_add_node_bad_event(e, 0, 2, 1), GS_EINVAL);
    ASSERT_EQ(gs_engine_node_state(e, 0), 0u);
    while (gs_engine_next_event_time(e) < 250 * GS_SEC && gs_engine_step(e) > 0)
        ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT(gs_engine_node_bad(e, 0));
    ASSERT_EQ(gs_engine_node_state(e, 0), GS_NODE_BAD);
    ASSERT_STR(gs_node_state_name(gs_engine_node_state(e, 0)), "bad");
    ASSERT_STR(gs_node_state_name(GS_NODE_BAD | GS_NODE_FAILED), "down");
    ASSERT_STR(gs_node_state_name(GS_NODE_BAD | GS_NODE_DRAINED), "drained");
    ASSERT_STR(gs_node_state_name(0), "ok");
    ASSERT_EQ(x->state, GS_JOB_PENDING);
    ASSERT_EQ(gs_cluster_free(c), 0); /* node 0's GPUs freed by a stay out of service */
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(a->end, 100 * GS_SEC); /* ran on, never requeued */
    ASSERT_EQ(a->restarts, 0);
    ASSERT_EQ(g_last->requeues, 0);
    ASSERT_EQ(gs_cluster_gpu(c, b->alloc ? b->alloc[0] : b->last_alloc[0])->node, 1);
    ASSERT_EQ(x->first_start, 300 * GS_SEC);
    ASSERT_EQ(gs_cluster_gpu(c, x->last_alloc[0])->node, 0);
    ASSERT(!gs_engine_node_bad(e, 0));
    /* the policy heard of node 0 leaving and coming back once each */
    ASSERT_EQ(g_last->nodes_down, 1);
    ASSERT_EQ(g_last->nodes_up, 1);
    ASSERT_STR(rec.buf, "node_bad@10:0 node_down@150:0 node_up@200:0 node_good@300:0");
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* SIM drain events (gs_engine_add_node_drain_event): a drained node's running job runs to its
 * end, nothing new starts there (its freed GPUs stay out); a bad mark is a reason of its own:
 * the end of the drain leaves the node out until it is good again. */
static void t_sim_drain(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_SIM, &c);
    ASSERT(e);
    nrec rec = {{0}};
    gs_engine_set_observer(e, node_obs, &rec);
    g_last->hook = start_all;
    const gs_job *a = add(e, 1, 0, 1, 2, 100);  /* node 0 */
    const gs_job *b = add(e, 2, 20, 1, 2, 500); /* node 1: node 0 is drained */
    const gs_job *x = add(e, 3, 30, 1, 2, 10);  /* waits for node 0 */
    ASSERT(a && b && x);
    ASSERT_OK(gs_engine_add_node_drain_event(e, 10 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_drain_event(e, 11 * GS_SEC, 0, 1)); /* already: nothing */
    ASSERT_OK(gs_engine_add_node_bad_event(e, 50 * GS_SEC, 0, 1));
    ASSERT_OK(gs_engine_add_node_drain_event(e, 200 * GS_SEC, 0, 0));
    ASSERT_OK(gs_engine_add_node_bad_event(e, 250 * GS_SEC, 0, 0));
    ASSERT_EQ(gs_engine_add_node_drain_event(e, 0, 2, 1), GS_EINVAL);
    ASSERT_EQ(gs_engine_add_node_drain_event(e, 0, -1, 1), GS_EINVAL);
    while (gs_engine_next_event_time(e) < 60 * GS_SEC && gs_engine_step(e) > 0)
        ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(gs_engine_node_state(e, 0), GS_NODE_DRAINED | GS_NODE_BAD);
    ASSERT_EQ(a->state, GS_JOB_RUNNING); /* not requeued, unlike a failure */
    while (gs_engine_next_event_time(e) < 220 * GS_SEC && gs_engine_step(e) > 0)
        ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(x->state, GS_JOB_PENDING); /* drain over, still bad */
    ASSERT_EQ(gs_engine_node_state(e, 0), GS_NODE_BAD);
    ASSERT_EQ(gs_cluster_free(c), 0);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(a->end, 100 * GS_SEC);
    ASSERT_EQ(a->restarts, 0);
    ASSERT_EQ(g_last->requeues, 0);
    ASSERT_EQ(gs_cluster_gpu(c, b->last_alloc[0])->node, 1);
    ASSERT_EQ(x->first_start, 250 * GS_SEC);
    ASSERT_EQ(gs_cluster_gpu(c, x->last_alloc[0])->node, 0);
    ASSERT_EQ(gs_engine_node_state(e, 0), 0u);
    ASSERT_EQ(g_last->nodes_down, 1);
    ASSERT_EQ(g_last->nodes_up, 1);
    ASSERT_STR(rec.buf, "node_down@10:0 node_bad@50:0 node_up@200:0 node_good@250:0");
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* LIVE: drains are gs_engine_drain_node, now */
    e = mk("2x2", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    ASSERT_EQ(gs_engine_add_node_drain_event(e, 0, 0, 1), GS_ESTATE);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* LIVE: set now; a dry run sees a bad node's GPUs unusable; drain and bad are independent */
static void t_live_node_bad(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    g_last->hook = live_hook;
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 2;
    s.duration = 0;
    gs_time t0 = 1700000000LL * GS_SEC;
    const gs_job *a;
    ASSERT_OK(gs_engine_submit(e, &s, t0, &a, NULL));
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    int na = gs_cluster_gpu(c, a->alloc[0])->node;
    ASSERT_OK(gs_engine_set_node_bad(e, 1 - na, 1, "ECC errors"));
    ASSERT_OK(gs_engine_set_node_bad(e, na, 1, "ECC errors"));
    ASSERT_EQ(a->state, GS_JOB_RUNNING); /* keeps its GPUs */
    gs_probe p;
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_WAIT);
    gs_probe_release(&p);
    /* drained too, then undrained: still bad */
    ASSERT_OK(gs_engine_drain_node(e, 1 - na, 1, "maintenance"));
    ASSERT_EQ(gs_engine_node_state(e, 1 - na), GS_NODE_BAD | GS_NODE_DRAINED);
    ASSERT_OK(gs_engine_drain_node(e, 1 - na, 0, "back"));
    ASSERT_EQ(gs_engine_node_state(e, 1 - na), GS_NODE_BAD);
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_WAIT);
    gs_probe_release(&p);
    /* drained and good again: still drained */
    ASSERT_OK(gs_engine_drain_node(e, 1 - na, 1, "maintenance"));
    ASSERT_OK(gs_engine_set_node_bad(e, 1 - na, 0, "repaired"));
    ASSERT_EQ(gs_engine_node_state(e, 1 - na), GS_NODE_DRAINED);
    ASSERT_EQ(gs_cluster_node(c, 1 - na)->down, 1);
    ASSERT_OK(gs_engine_drain_node(e, 1 - na, 0, "back"));
    ASSERT_EQ(gs_engine_node_state(e, 1 - na), 0u);
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    ASSERT_EQ(gs_cluster_gpu(c, p.placement[0])->node, 1 - na);
    gs_probe_release(&p);
    ASSERT_EQ(gs_engine_set_node_bad(e, 2, 1, "no such node"), GS_ERANGE);
    ASSERT_EQ(gs_engine_set_node_bad(e, -1, 1, "no such node"), GS_ERANGE);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static const gs_job *live_sub(gs_engine *e, int ntasks, int gpt, const char *vc, gs_time now)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.gang = 1;
    s.vc = vc;
    s.duration = 0;
    const gs_job *j = NULL;
    if (gs_engine_submit(e, &s, now, &j, NULL)) return NULL;
    return j;
}

static int node_free(gs_cluster *c, int node)
{
    return gs_cluster_cell(c, gs_cluster_node(c, node)->cell)->free;
}

/* gs_engine_set_outside: free GPUs of the node taken out (highest local index first), never a
 * job's (taken when it frees), back when the count drops, kept out across drain / undrain,
 * seen by dry runs and by hived (its check passes; its jobs go elsewhere) */
static void t_live_outside(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x4", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    g_last->hook = live_hook;
    gs_time t0 = 1700000000LL * GS_SEC;
    const gs_job *a = live_sub(e, 1, 2, NULL, t0);
    ASSERT(a);
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, a->alloc[0])->node, 0);
    ASSERT_EQ(node_free(c, 0), 2);
    ASSERT_OK(gs_engine_set_outside(e, 0, 3, "slurm: 2 foreign jobs"));
    int want = -1;
    ASSERT_EQ(gs_engine_node_outside(e, 0, &want), 2); /* a's GPUs are not taken */
    ASSERT_EQ(want, 3);
    ASSERT_EQ(node_free(c, 0), 0);
    ASSERT(gs_engine_gpu_outside(e, 3) && gs_engine_gpu_outside(e, 2));
    ASSERT(!gs_engine_gpu_outside(e, a->alloc[0]) && !gs_engine_gpu_outside(e, a->alloc[1]));
    ASSERT_OK(gs_engine_check(e, NULL));
    /* a dry run sees them: 2 GPUs fit only node 1 */
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 4;
    gs_probe p;
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    ASSERT_EQ(gs_cluster_gpu(c, p.placement[0])->node, 1);
    gs_probe_release(&p);
    const gs_job *b = live_sub(e, 1, 4, NULL, t0 + GS_SEC);
    const gs_job *d = live_sub(e, 1, 2, NULL, t0 + GS_SEC);
    ASSERT(b && d);
    ASSERT_OK(gs_engine_advance(e, t0 + GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, b->alloc[0])->node, 1);
    ASSERT_EQ(d->state, GS_JOB_PENDING); /* node 0's free GPUs are outside */
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, GS_PROBE_WAIT);
    gs_probe_release(&p);
    /* a ends: the count still asks for one more: its highest GPU is taken at once */
    ASSERT_OK(gs_engine_task_exited(e, a, 0, "done", t0 + 2 * GS_SEC));
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 3);
    ASSERT(gs_engine_gpu_outside(e, 1) && !gs_engine_gpu_outside(e, 0));
    ASSERT_EQ(node_free(c, 0), 1);
    ASSERT_OK(gs_engine_advance(e, t0 + 2 * GS_SEC));
    ASSERT_EQ(d->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_check(e, NULL));
    /* the foreign jobs end: the GPUs come back and d starts there */
    ASSERT_OK(gs_engine_set_outside(e, 0, 0, NULL));
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 0);
    ASSERT_EQ(node_free(c, 0), 4);
    ASSERT_OK(gs_engine_advance(e, t0 + 3 * GS_SEC));
    ASSERT_EQ(d->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, d->alloc[0])->node, 0);
    /* composes with drain: a drained node's outside GPUs stay out when it returns */
    ASSERT_OK(gs_engine_set_outside(e, 0, 1, "foreign"));
    ASSERT(gs_engine_gpu_outside(e, 3));
    ASSERT_OK(gs_engine_drain_node(e, 0, 1, "slurm: drained"));
    ASSERT_OK(gs_engine_set_outside(e, 0, 2, "foreign")); /* taken while drained */
    ASSERT_OK(gs_engine_drain_node(e, 0, 0, "slurm: resumed"));
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 2);
    ASSERT(gs_cluster_gpu(c, 3)->down && gs_cluster_gpu(c, 2)->down);
    ASSERT_EQ(node_free(c, 0), 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_OK(gs_engine_drain_node(e, 0, 1, "again"));
    ASSERT_OK(gs_engine_set_outside(e, 0, 1, "foreign")); /* back, but drained: still down */
    ASSERT(gs_cluster_gpu(c, 2)->down && !gs_engine_gpu_outside(e, 2));
    ASSERT_OK(gs_engine_drain_node(e, 0, 0, "back"));
    ASSERT(!gs_cluster_gpu(c, 2)->down && gs_cluster_gpu(c, 3)->down);
    ASSERT_EQ(node_free(c, 0), 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(gs_engine_set_outside(e, 2, 1, NULL), GS_ERANGE);
    ASSERT_EQ(gs_engine_set_outside(e, -1, 1, NULL), GS_ERANGE);
    ASSERT_EQ(gs_engine_set_outside(e, 0, -1, NULL), GS_EINVAL);
    ASSERT_OK(gs_engine_set_outside(e, 1, 99, NULL));  /* more than the node has: all of it */
    ASSERT_EQ(gs_engine_node_outside(e, 1, &want), 0); /* b holds them all */
    ASSERT_EQ(want, 4);
    ASSERT_OK(gs_engine_task_exited(e, b, 0, "done", t0 + 4 * GS_SEC));
    ASSERT_EQ(gs_engine_node_outside(e, 1, NULL), 4);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    e = mk("2x2", GS_ENGINE_SIM, &c);
    ASSERT(e);
    ASSERT_EQ(gs_engine_set_outside(e, 0, 1, "sim"), GS_ESTATE);
    ASSERT_EQ(gs_engine_node_outside(e, 0, NULL), 0);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* hived (3 nodes x 4 GPUs, VC1 guaranteed one node): outside GPUs are not its to give */
    const char *path = test_src("data/examples/hived-basic.yaml");
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    gs_diag dg;
    gs_diag_init(&dg, NULL);
    ASSERT_OK(gs_cluster_parse_hived(path, buf, n, &c, &dg));
    gs_params prm;
    gs_params_init(&prm);
    gs_params_set(&prm, "slowdown", "off");
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_LIVE;
    ASSERT_OK(gs_engine_create(c, "hived", &prm, &o, &e, &dg));
    gs_params_release(&prm);
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_OK(gs_engine_set_outside(e, 0, 4, "foreign"));
    ASSERT_OK(gs_engine_set_outside(e, 1, 1, "foreign"));
    ASSERT_OK(gs_engine_check(e, NULL));
    const gs_job *h = live_sub(e, 1, 4, "VC1", t0 + GS_SEC);
    ASSERT(h);
    ASSERT_OK(gs_engine_advance(e, t0 + GS_SEC));
    ASSERT_EQ(h->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, h->alloc[0])->node, 2);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 4;
    s.vc = "VC1";
    s.priority = -1; /* opportunistic: any free GPUs */
    const gs_job *h2 = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, t0 + 2 * GS_SEC, &h2, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + 2 * GS_SEC));
    ASSERT_EQ(h2->state, GS_JOB_PENDING); /* nodes 0, 1 have 0 and 3 GPUs left */
    ASSERT_OK(gs_engine_set_outside(e, 1, 0, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + 3 * GS_SEC));
    ASSERT_EQ(h2->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(c, h2->alloc[0])->node, 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_live_mode(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    g_last->hook = live_hook;
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 4;
    s.duration = 0; /* unknown in live mode */
    const gs_job *a;
    gs_time t0 = 1700000000LL * GS_SEC;
    ASSERT_OK(gs_engine_submit(e, &s, t0, &a, NULL));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_advance(e, t0));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(a->submit, t0);
    /* no completion is predicted: advancing far changes nothing */
    ASSERT_OK(gs_engine_advance(e, t0 + 3600 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    /* preemption holds the GPUs until the tasks are gone */
    g_last->hook = NULL;
    ASSERT_OK(gs_engine_preempt(e, a, "test"));
    ASSERT_EQ(a->state, GS_JOB_PREEMPTED);
    ASSERT_EQ(gs_engine_allocated(e), 4);
    ASSERT_OK(gs_engine_task_exited(e, a, 143, "SIGTERM", t0 + 3700 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    ASSERT_EQ(g_last->requeues, 1);
    g_last->hook = live_hook;
    ASSERT_OK(gs_engine_advance(e, t0 + 3701 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_task_exited(e, a, 1, "exit 1", t0 + 3800 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_FAILED);
    /* cancel a pending job */
    const gs_job *b;
    s.ntasks = 8; /* never fits: rejected at arrival */
    ASSERT_OK(gs_engine_submit(e, &s, t0 + 3900 * GS_SEC, &b, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + 3900 * GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_REJECTED);
    const gs_job *k;
    s.ntasks = 2;
    g_last->hook = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, t0 + 4000 * GS_SEC, &k, NULL));
    ASSERT_OK(gs_engine_advance(e, t0 + 4000 * GS_SEC));
    ASSERT_OK(gs_engine_cancel(e, k, "user", t0 + 4100 * GS_SEC));
    ASSERT_EQ(k->state, GS_JOB_CANCELLED);
    ASSERT_EQ(k->queued, 100 * GS_SEC);
    ASSERT_EQ(gs_engine_cancel(e, k, "again", t0 + 4200 * GS_SEC), GS_ESTATE);
    ASSERT_EQ(gs_engine_npending(e), 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* LIVE deferred arrival (held jobs, dependencies): invisible to the policy until released */
static void t_live_deferred(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    g_last->hook = live_hook;
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 2;
    s.duration = 0;
    gs_time t0 = 1700000000LL * GS_SEC;
    const gs_job *a, *b;
    ASSERT_OK(gs_engine_submit_deferred(e, &s, t0, &a, NULL));
    ASSERT_OK(gs_engine_submit_deferred(e, &s, t0, &b, NULL));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_EQ(a->deferred, 1);
    ASSERT_OK(gs_engine_advance(e, t0 + 100 * GS_SEC));
    /* free GPUs, yet neither arrives nor starts */
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_EQ(a->arrived, 0);
    ASSERT_EQ(g_last->arrivals, 0);
    ASSERT_EQ(gs_engine_npending(e), 0);
    ASSERT_EQ(gs_engine_next_event_time(e), GS_TIME_MAX);
    ASSERT_OK(gs_engine_release(e, a, t0 + 200 * GS_SEC));
    ASSERT_EQ(gs_engine_release(e, a, t0 + 200 * GS_SEC), GS_ESTATE); /* once */
    ASSERT_OK(gs_engine_advance(e, t0 + 200 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(a->deferred, 0);
    ASSERT_EQ(a->submit, t0);
    ASSERT_EQ(a->queued, 0); /* it waited in the queue for no time once eligible */
    ASSERT_EQ(g_last->arrivals, 1);
    /* cancelling a deferred job ends it; the policy never saw it */
    ASSERT_OK(gs_engine_cancel(e, b, "user", t0 + 300 * GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_CANCELLED);
    ASSERT_EQ(g_last->finishes, 0); /* the policy is not told of a job it never had */
    ASSERT_EQ(gs_engine_release(e, b, t0 + 300 * GS_SEC), GS_ESTATE);
    ASSERT_OK(gs_engine_advance(e, t0 + 300 * GS_SEC));
    ASSERT_EQ(g_last->arrivals, 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);

    /* SIM engines have no deferred arrival */
    e = mk("4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    ASSERT_EQ(gs_engine_submit_deferred(e, &s, 0, &a, NULL), GS_ESTATE);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_restart_overhead_charged(void)
{
    /* fixed 10 s restart cost: the restarted run holds GPUs 10 s without progress */
    gs_cluster *c;
    const char *fixed[] = {"preempt_cost=10s", NULL};
    gs_engine *e = mk_costs("4", GS_ENGINE_SIM, &c, fixed);
    ASSERT(e);
    g_last->hook = preempt_hook;
    const gs_job *a = add(e, 1, 0, 4, 1, 100);
    ASSERT(add(e, 2, 0, 4, 1, 20));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(a->overhead_charges, 1);
    ASSERT_EQ(a->overhead_total, 10 * GS_SEC);
    ASSERT_NEAR(a->overhead_gpu_s, 40.0, 1e-9);
    ASSERT_EQ(a->end, 130 * GS_SEC); /* 40 s, preempted 40..60, 10 s restart, 60 s */
    ASSERT_EQ(a->progress, a->work);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* the default model: t_save + t_restore + t_init(4 GPUs) for ResNet-50 */
    const char *model[] = {"preempt_cost=model", NULL};
    e = mk_costs("4", GS_ENGINE_SIM, &c, model);
    ASSERT(e);
    g_last->hook = preempt_hook;
    a = add(e, 1, 0, 4, 1, 100);
    ASSERT(add(e, 2, 0, 4, 1, 20));
    ASSERT_OK(gs_engine_run(e));
    /* 25.6M params x 4 B x 3 = 307.2 MB at 1 GB/s = 0.3072 s, twice; 5 + 3 x 3.75 s */
    ASSERT_EQ(a->overhead_total, 614400 + 16250000);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void slow_hook(scripted *s)
{
    start_all(s);
}

static void t_slowdown_spread(void)
{
    /* a 2-GPU job forced across two nodes of a rack runs at 1/1.5 (default class) */
    gs_cluster *c;
    const char *on[] = {"slowdown=on", NULL};
    gs_engine *e = mk_costs("1x2x2", GS_ENGINE_SIM, &c, on);
    ASSERT(e);
    g_last->hook = slow_hook;
    const gs_job *x = add(e, 1, 0, 1, 1, 1000); /* n0:0 */
    const gs_job *y = add(e, 2, 0, 1, 1, 1000); /* n0:1 */
    const gs_job *z = add(e, 3, 0, 1, 1, 1000); /* n1:0 */
    ASSERT(x && y && z);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_OK(gs_engine_cancel(e, y, "test", 0)); /* free n0:1 */
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 4;
    s.ntasks = 2;
    s.duration = 100 * GS_SEC;
    s.submit = 1 * GS_SEC;
    const gs_job *w;
    ASSERT_OK(gs_engine_add_job(e, &s, &w, NULL));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(gs_cluster_count_nodes(c, w->last_alloc, 2), 2);
    ASSERT_NEAR(w->speed, 1 / 1.5, 1e-12);
    ASSERT_EQ(w->end, 151 * GS_SEC);
    ASSERT_EQ(w->progress, w->work);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_adopt_running(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    gs_time t0 = 1700000000LL * GS_SEC;
    ASSERT_OK(gs_engine_advance(e, t0));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 42;
    s.ntasks = 2;
    s.submit = t0 - 100 * GS_SEC;
    int g[] = {1, 2};
    const gs_job *a;
    ASSERT_OK(gs_engine_adopt(e, &s, g, 2, t0 - 50 * GS_SEC, 50 * GS_SEC, 0, &a, NULL));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(a->first_start, t0 - 50 * GS_SEC);
    ASSERT_EQ(gs_cluster_gpu(c, 2)->owner, a->slot);
    ASSERT_EQ(gs_job_executed(a, t0), 50 * GS_SEC);
    /* a second job claiming GPU 2 cannot be adopted: it waits instead */
    s.id = 43;
    int h[] = {2, 3};
    const gs_job *b;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_adopt(e, &s, h, 2, t0, 0, 0, &b, &d), GS_ECONFLICT);
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_EQ(g_last->arrivals, 1);
    ASSERT_OK(gs_engine_advance(e, t0 + GS_SEC)); /* the stale arrival event is ignored */
    ASSERT_EQ(g_last->arrivals, 1);
    ASSERT_OK(gs_engine_task_exited(e, a, 0, "ok", t0 + 10 * GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* At t=0 start job 1 and set a timer; at t=40 preempt it from inside schedule(). */
static void reentry_hook(scripted *s)
{
    gs_engine *e = s->e;
    const gs_job *a = gs_engine_find_job(e, 1);
    if (gs_engine_now(e) == 0) {
        gs_engine_try_start(e, a, GS_LOCALITY_ANY);
        gs_engine_set_timer(e, 40 * GS_SEC, 1);
    } else if (gs_engine_now(e) == 40 * GS_SEC && a->state == GS_JOB_RUNNING) {
        int before = s->requeues;
        s->preempt_rc = gs_engine_preempt(e, a, "test");
        s->requeues_after = s->requeues - before;
    }
}

/*
 * The re-entry rule (policy.h): gs_engine_preempt() from inside schedule()
 * calls on_requeue for the victim before it returns, the victim already
 * PENDING; schedule() is never entered twice.
 */
static void t_reentry_order(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = reentry_hook;
    const gs_job *a = add(e, 1, 0, 4, 1, 100);
    ASSERT(a && add(e, 3, 0, 4, 1, 10)); /* waits: a pass runs at t=40 */
    ASSERT_EQ(gs_engine_step(e), 1);     /* t=0: started */
    ASSERT_EQ(gs_engine_step(e), 1);     /* t=40: preempted from schedule() */
    ASSERT_OK(g_last->preempt_rc);
    ASSERT_EQ(g_last->requeues_after, 1); /* on_requeue ran inside gs_engine_preempt */
    ASSERT_EQ(g_last->requeues_in_pass, 1);
    ASSERT_EQ(g_last->requeued_as, GS_JOB_PENDING);
    ASSERT_EQ(g_last->max_depth, 1);
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* A hook's error fails the engine: returned by the request and the step, latched, consistent. */
static void t_hook_error_fails_engine(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->hook = reentry_hook;
    g_last->requeue_rc = GS_ENOMEM;
    const gs_job *a = add(e, 1, 0, 4, 1, 100);
    const gs_job *b = add(e, 2, 50, 1, 1, 10);
    ASSERT(a && b && add(e, 3, 0, 4, 1, 10));
    ASSERT_EQ(gs_engine_run(e), GS_ENOMEM);
    ASSERT_EQ(g_last->preempt_rc, GS_ENOMEM); /* the request returned the hook's error */
    ASSERT_EQ(gs_engine_error(e), GS_ENOMEM);
    ASSERT_EQ(gs_engine_now(e), 40 * GS_SEC);
    ASSERT_EQ(a->state, GS_JOB_PENDING); /* the transition itself was made */
    ASSERT_OK(gs_engine_check(e, NULL));
    /* a failed engine changes no more */
    ASSERT_EQ(gs_engine_step(e), GS_ENOMEM);
    ASSERT_EQ(gs_engine_try_start(e, a, GS_LOCALITY_ANY), GS_ENOMEM);
    ASSERT_EQ(gs_engine_cancel(e, a, "x", 40 * GS_SEC), GS_ENOMEM);
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_EQ(b->arrived, 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);

    /* an error from on_arrival stops the instant: later events and the pass are not run */
    e = mk("4", GS_ENGINE_SIM, &c);
    ASSERT(e);
    g_last->arrival_rc = GS_EINTERNAL;
    a = add(e, 1, 0, 1, 1, 100);
    b = add(e, 2, 0, 1, 1, 100);
    ASSERT(a && b);
    ASSERT_EQ(gs_engine_step(e), GS_EINTERNAL);
    ASSERT_EQ(g_last->arrivals, 1);
    ASSERT_EQ(g_last->passes, 0);
    ASSERT_EQ(a->arrived, 1);
    ASSERT_EQ(b->arrived, 0);
    ASSERT_EQ(gs_engine_error(e), GS_EINTERNAL);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* Recovery restores a job's accounting through the engine; "keep" fields stay. */
static void t_restore_accounting(void)
{
    gs_cluster *c;
    gs_engine *e = mk("4", GS_ENGINE_LIVE, &c);
    ASSERT(e);
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 7;
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, 100 * GS_SEC, &j, NULL));
    gs_job_accounting a;
    gs_job_accounting_init(&a);
    a.queued = 30 * GS_SEC;
    a.executed = 20 * GS_SEC;
    a.service = 80.0;
    a.first_start = 10 * GS_SEC;
    a.restarts = 2;
    ASSERT_OK(gs_engine_restore_accounting(e, j, &a));
    ASSERT_EQ(j->queued, 30 * GS_SEC);
    ASSERT_EQ(j->executed, 20 * GS_SEC);
    ASSERT_NEAR(j->service, 80.0, 1e-12);
    ASSERT_EQ(j->first_start, 10 * GS_SEC);
    ASSERT_EQ(j->restarts, 2);
    ASSERT_EQ(j->preemptions, 0); /* kept */
    ASSERT_EQ(j->group, 7);       /* kept */
    gs_job_accounting_init(&a);
    a.preemptions = 3;
    ASSERT_OK(gs_engine_restore_accounting(e, j, &a));
    ASSERT_EQ(j->preemptions, 3);
    ASSERT_EQ(j->queued, 30 * GS_SEC);
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    /* an elastic job's counters (issue 13: a daemon restart restores them) */
    ASSERT_EQ(j->generation, 0u); /* kept so far */
    gs_job_accounting_init(&a);
    a.generation = 4;
    a.rescales = 2;
    a.failures = 1;
    ASSERT_OK(gs_engine_restore_accounting(e, j, &a));
    ASSERT_EQ(j->generation, 4u);
    ASSERT_EQ(j->rescales, 2);
    ASSERT_EQ(j->failures, 1);
    ASSERT_EQ(j->preemptions, 3); /* kept */
    gs_job_accounting_init(&a);
    ASSERT_OK(gs_engine_restore_accounting(e, j, &a));
    ASSERT_EQ(j->generation, 4u); /* kept */
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* A registry policy on a shorthand cluster, SIM, no slowdown. */
static gs_engine *mk_policy(const char *spec, const char *policy, gs_cluster **cp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, cp, &d)) return NULL;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_engine *e = NULL;
    int rc = gs_engine_create(*cp, policy, &p, NULL, &e, &d);
    gs_params_release(&p);
    return rc ? NULL : e;
}

static gs_probe probe(gs_engine *e, int ntasks, int gpt, const char *type)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.gpu_type = type;
    s.duration = 10 * GS_SEC;
    gs_probe p;
    if (gs_engine_probe(e, &s, &p)) p.verdict = (gs_probe_verdict)-1;
    return p;
}

/* Jobs 1 (4 GPUs, 100 s) and 2 (2 GPUs, 50 s) at 0; one step: both run. */
static gs_engine *probe_rig(const char *cluster, const char *policy, gs_cluster **c)
{
    gs_engine *e = mk_policy(cluster, policy, c);
    if (!e || !add(e, 1, 0, 1, 4, 100) || !add(e, 2, 0, 1, 2, 50) || gs_engine_step(e) != 1)
        return NULL;
    return e;
}

/* Run to the end; a digest of what happened (ends, starts, waits, preemptions, events). */
static int64_t finish_digest(gs_engine *e)
{
    if (gs_engine_run(e)) return -1;
    int64_t h = (int64_t)gs_engine_events(e);
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        h = h * 31 + j->end;
        h = h * 31 + j->first_start;
        h = h * 31 + j->queued;
        h = h * 31 + j->preemptions;
    }
    return h;
}

/* The dry run of a non-preemptive policy: now, wait, never; the engine is left as it was. */
static void t_probe_fifo(void)
{
    gs_cluster *c, *c2;
    gs_engine *e = probe_rig("2x4", "fifo", &c), *twin = probe_rig("2x4", "fifo", &c2);
    ASSERT(e && twin);
    int free0 = gs_cluster_free(c), alloc0 = gs_engine_allocated(e);
    ASSERT_EQ(free0, 2);
    gs_probe p = probe(e, 1, 2, NULL);
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    ASSERT_EQ(p.gpus, 2);
    for (int k = 0; k < 2; k++) ASSERT_EQ(gs_cluster_gpu(c, p.placement[k])->users, 0);
    ASSERT_EQ(p.nvictims, 0);
    gs_probe_release(&p);
    p = probe(e, 1, 4, NULL);
    ASSERT_EQ(p.verdict, GS_PROBE_WAIT); /* fifo never preempts */
    ASSERT_STR(p.reason, "needs 4 GPU(s); 2 of 8 are free now");
    ASSERT(!p.placement);
    gs_probe_release(&p);
    p = probe(e, 4, 4, NULL);
    ASSERT_EQ(p.verdict, GS_PROBE_NEVER);
    ASSERT(p.reason[0]);
    gs_probe_release(&p);
    p = probe(e, 1, 1, "H100");
    ASSERT_EQ(p.verdict, GS_PROBE_NEVER);
    ASSERT_CONTAINS(p.reason, "unknown GPU type 'H100'");
    gs_probe_release(&p);
    /* untouched: same counters, consistent, and the rest of the run is the twin's */
    ASSERT_EQ(gs_cluster_free(c), free0);
    ASSERT_EQ(gs_engine_allocated(e), alloc0);
    ASSERT_EQ(gs_engine_njobs(e), 2);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(finish_digest(e), finish_digest(twin));
    gs_engine_destroy(e);
    gs_engine_destroy(twin);
    gs_cluster_destroy(c);
    gs_cluster_destroy(c2);
}

/* A registry policy with one parameter (queues=10 for the tiresias variants), SIM. */
static gs_engine *mk_policy_set(const char *spec, const char *policy, const char *kv,
                                gs_cluster **cp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, cp, &d)) return NULL;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    if (kv) gs_params_set_kv(&p, kv);
    gs_engine *e = NULL;
    int rc = gs_engine_create(*cp, policy, &p, NULL, &e, &d);
    gs_params_release(&p);
    return rc ? NULL : e;
}

/*
 * The dry run of a preemptive policy against what the policy then does: the
 * probed job is submitted at the same instant and the engine steps; a
 * PREEMPT verdict must be followed by exactly its victims being preempted and
 * the job starting, a WAIT verdict by no preemption at all.
 *   would: jobs 1 and 2 (2 GPUs each, 1000 s) run on 4 GPUs from 0; at 30 s
 *          (the las variants have demoted both) a 2-GPU job of 10 s comes:
 *          it ranks ahead of both and stops job 2 (equal ranks: the newer).
 *   wont:  job 1 runs from 0, job 2 starts at 30 s; a 4-GPU job of 2000 s
 *          comes at 30 s: it ranks after job 2 (las variants: job 2 runs in
 *          the top queue it joins; oracles: longer), and job 1 alone does not
 *          make room.
 */
static void probe_vs_policy(const char *policy, const char *kv, int would)
{
    gs_cluster *c;
    gs_engine *e = mk_policy_set("4", policy, kv, &c);
    ASSERT(e);
    ASSERT(add(e, 1, 0, 1, 2, 1000));
    if (would) ASSERT(add(e, 2, 0, 1, 2, 1000));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_OK(gs_engine_advance(e, 30 * GS_SEC));
    if (!would) {
        ASSERT(add(e, 2, 30, 1, 2, 1000));
        ASSERT_EQ(gs_engine_step(e), 1);
    }
    ASSERT_EQ(gs_engine_find_job(e, 1)->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_engine_find_job(e, 2)->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_engine_now(e), 30 * GS_SEC);
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.gpus_per_task = would ? 2 : 4;
    s.duration = (would ? 10 : 2000) * GS_SEC;
    gs_probe p;
    ASSERT_OK(gs_engine_probe(e, &s, &p));
    ASSERT_EQ(p.verdict, would ? GS_PROBE_PREEMPT : GS_PROBE_WAIT);
    if (would) {
        ASSERT_EQ(p.nvictims, 1);
        ASSERT_EQ(p.victims[0], 2);
    } else {
        ASSERT_EQ(p.nvictims, 0);
        ASSERT_CONTAINS(p.reason, "would not make room");
    }
    /* what really happens */
    s.id = 3;
    s.submit = 30 * GS_SEC;
    const gs_job *j3 = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j3, NULL));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(gs_engine_now(e), 30 * GS_SEC);
    ASSERT_EQ(j3->state, would ? GS_JOB_RUNNING : GS_JOB_PENDING);
    for (int64_t id = 1; id <= 2; id++) {
        int victim = 0;
        for (int k = 0; k < p.nvictims; k++) victim |= p.victims[k] == id;
        ASSERT_EQ(gs_engine_find_job(e, id)->preemptions, victim);
    }
    gs_probe_release(&p);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* The dry run of a preemptive policy: who it would stop; nothing is stopped. */
static void t_probe_preemptive(void)
{
    gs_cluster *c, *c2;
    /* las with one queue boundary at 10 s: both rig jobs are demoted by 30 s */
    gs_engine *e = mk_policy_set("2x4", "las", "queues=10", &c),
              *twin = mk_policy_set("2x4", "las", "queues=10", &c2);
    ASSERT(e && twin);
    ASSERT(add(e, 1, 0, 1, 4, 100) && add(e, 2, 0, 1, 2, 50));
    ASSERT(add(twin, 1, 0, 1, 4, 100) && add(twin, 2, 0, 1, 2, 50));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(gs_engine_step(twin), 1);
    ASSERT_OK(gs_engine_advance(e, 30 * GS_SEC));
    ASSERT_OK(gs_engine_advance(twin, 30 * GS_SEC));
    gs_probe p = probe(e, 1, 4, NULL);
    ASSERT_EQ(p.verdict, GS_PROBE_PREEMPT);
    /* the new job joins the top queue, ahead of both; the newer (job 2, least important by
     * the policy's walk) goes first and makes room on its node with the 2 free GPUs */
    ASSERT_EQ(p.nvictims, 1);
    ASSERT_EQ(p.victims[0], 2);
    ASSERT(p.placement);
    const gs_job *j1 = gs_engine_find_job(e, 1), *j2 = gs_engine_find_job(e, 2);
    int of2 = 0;
    for (int k = 0; k < 4; k++) {
        const gs_gpu *g = gs_cluster_gpu(c, p.placement[k]);
        ASSERT(g->users == 0 || g->owner == j2->slot);
        of2 += g->users && g->owner == j2->slot;
    }
    ASSERT_EQ(of2, 2);
    ASSERT_STR(p.reason, "needs 4 GPU(s); 2 of 8 are free now");
    gs_probe_release(&p);
    ASSERT_EQ(j1->state, GS_JOB_RUNNING);
    ASSERT_EQ(j2->state, GS_JOB_RUNNING);
    ASSERT_EQ(j2->preemptions, 0);
    ASSERT_EQ(gs_cluster_free(c), 2);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(finish_digest(e), finish_digest(twin));
    gs_engine_destroy(e);
    gs_engine_destroy(twin);
    gs_cluster_destroy(c);
    gs_cluster_destroy(c2);
    /* the probe against the policy: each preemptive policy with a rank, both ways */
    static const char *const pol[][2] = {{"las", "queues=10"},
                                         {"tiresias-las", "queues=10"},
                                         {"tiresias-gittins", "queues=10"},
                                         {"srtf", NULL},
                                         {"srsf", NULL}};
    for (size_t i = 0; i < sizeof pol / sizeof pol[0]; i++) {
        probe_vs_policy(pol[i][0], pol[i][1], 1);
        probe_vs_policy(pol[i][0], pol[i][1], 0);
    }
    /* a preemptive policy without a rank names no victims */
    e = mk_policy("4", "gandiva", &c);
    ASSERT(e && add(e, 1, 0, 1, 4, 100));
    ASSERT_EQ(gs_engine_step(e), 1);
    p = probe(e, 1, 2, NULL);
    ASSERT_EQ(p.verdict, GS_PROBE_WAIT);
    ASSERT_EQ(p.nvictims, 0);
    ASSERT_CONTAINS(p.reason, "may start it by preemption");
    gs_probe_release(&p);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* A dry run of a job in a VC, as the next job; verdict -1 on an error. */
static gs_probe probe_vc(gs_engine *e, int ntasks, int gpt, const char *vc, int priority)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.gang = 1;
    s.vc = vc;
    s.priority = priority;
    s.duration = 10 * GS_SEC;
    gs_probe p;
    if (gs_engine_probe(e, &s, &p)) p.verdict = (gs_probe_verdict)-1;
    return p;
}

/* Submit that job at 0 and step: its state and reason. */
static const gs_job *arrive_vc(gs_engine *e, int64_t id, int ntasks, int gpt, const char *vc)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.gang = 1;
    s.vc = vc;
    s.duration = 10 * GS_SEC;
    const gs_job *j = NULL;
    if (gs_engine_add_job(e, &s, &j, NULL) || gs_engine_step(e) != 1) return NULL;
    return j;
}

/* A job the policy rejects on arrival (quotas, VCs) is NEVER to the dry run, for the same
 * reason; the real arrival agrees. */
static void t_probe_policy_rejects(void)
{
    gs_cluster *c;
    /* quota: no borrowing, a job larger than its VC's quota or in a VC without one */
    gs_engine *e = mk_policy_set("4", "quota", "quotas=a:2", &c);
    ASSERT(e);
    gs_probe p = probe_vc(e, 1, 4, "a", 0);
    ASSERT_EQ(p.verdict, GS_PROBE_NEVER);
    ASSERT_STR(p.reason, "job requests 4 GPUs, exceeds the quota of 2 GPUs of VC 'a'");
    gs_probe_release(&p);
    p = probe_vc(e, 1, 1, "b", 0);
    ASSERT_EQ(p.verdict, GS_PROBE_NEVER);
    ASSERT_CONTAINS(p.reason, "exceeds the quota of 0 GPUs of VC 'b'");
    gs_probe_release(&p);
    p = probe_vc(e, 1, 2, "a", 0);
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    ASSERT_STR(p.reason, "");
    gs_probe_release(&p);
    const gs_job *j = arrive_vc(e, 1, 1, 4, "a");
    ASSERT(j);
    ASSERT_EQ(j->state, GS_JOB_REJECTED);
    ASSERT_STR(j->reason, "job requests 4 GPUs, exceeds the quota of 2 GPUs of VC 'a'");
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* yarn-cs borrows: the same job is accepted */
    e = mk_policy_set("4", "yarn-cs", "quotas=a:2", &c);
    ASSERT(e);
    p = probe_vc(e, 1, 4, "a", 0);
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    gs_probe_release(&p);
    j = arrive_vc(e, 1, 1, 4, "a");
    ASSERT(j && j->state == GS_JOB_RUNNING);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* hived (HiveD's basic example: VC1 is guaranteed one 4-GPU node of three) */
    const char *path = test_src("data/examples/hived-basic.yaml");
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_hived(path, buf, n, &c, &d));
    gs_params prm;
    gs_params_init(&prm);
    gs_params_set(&prm, "slowdown", "off");
    ASSERT_OK(gs_engine_create(c, "hived", &prm, NULL, &e, &d));
    gs_params_release(&prm);
    p = probe_vc(e, 2, 4, "VC1", 0); /* 8 GPUs fit the cluster, not VC1 */
    ASSERT_EQ(p.verdict, GS_PROBE_NEVER);
    ASSERT_STR(p.reason, "job requests 8 GPUs, exceeds the 4 GPUs guaranteed to VC 'VC1'");
    gs_probe_release(&p);
    p = probe_vc(e, 1, 1, "nope", 0);
    ASSERT_EQ(p.verdict, GS_PROBE_NEVER);
    ASSERT_STR(p.reason, "unknown virtual cluster 'nope'");
    gs_probe_release(&p);
    p = probe_vc(e, 2, 4, "VC1", -1); /* opportunistic: may use any free GPU */
    ASSERT_EQ(p.verdict, GS_PROBE_NOW);
    gs_probe_release(&p);
    j = arrive_vc(e, 1, 2, 4, "VC1");
    ASSERT(j);
    ASSERT_EQ(j->state, GS_JOB_REJECTED);
    ASSERT_STR(j->reason, "job requests 8 GPUs, exceeds the 4 GPUs guaranteed to VC 'VC1'");
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_unknown_policy(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("4", &c, &d));
    gs_engine *e = NULL;
    ASSERT_EQ(gs_engine_create(c, "fifo-backfil", NULL, NULL, &e, &d), GS_EUNKNOWN);
    ASSERT_CONTAINS(d.msg, "did you mean 'fifo-backfill'");
    gs_cluster_destroy(c);
    gs_engine_destroy(NULL);
    gs_cluster_destroy(NULL);
}

static const test_case tests[] = {
    {"run_to_completion", t_run_to_completion},
    {"start_validation", t_start_validation},
    {"preempt_keeps_progress", t_preempt_keeps_progress},
    {"reject_never_fits", t_reject_never_fits},
    {"simultaneous_order", t_simultaneous_order},
    {"cancel_events", t_cancel_events},
    {"node_failure_requeues", t_node_failure_requeues},
    {"live_mode", t_live_mode},
    {"live_drain", t_live_drain},
    {"node_bad", t_node_bad},
    {"sim_drain", t_sim_drain},
    {"live_node_bad", t_live_node_bad},
    {"live_outside", t_live_outside},
    {"live_deferred", t_live_deferred},
    {"restart_overhead_charged", t_restart_overhead_charged},
    {"slowdown_spread", t_slowdown_spread},
    {"adopt_running", t_adopt_running},
    {"unknown_policy", t_unknown_policy},
    {"reentry_order", t_reentry_order},
    {"restore_accounting", t_restore_accounting},
    {"probe_fifo", t_probe_fifo},
    {"probe_preemptive", t_probe_preemptive},
    {"probe_policy_rejects", t_probe_policy_rejects},
    {"hook_error_fails_engine", t_hook_error_fails_engine},
};

TEST_MAIN(tests)
