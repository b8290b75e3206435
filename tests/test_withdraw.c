/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_withdraw.c - gs_engine_withdraw (issue 16, job control): a queued
 * PENDING job taken back from its policy (the daemon's hold of a queued job)
 * never starts while withdrawn and runs once released, under every compiled-in
 * policy that has the on_withdraw op; a policy without it refuses
 * (GS_EUNSUPPORTED) and keeps the job queued.  gs_engine_update_deferred changes a
 * withdrawn job (the daemon's update).  Every engine is checked
 * (gs_engine_check, which runs the policy's own check) after each step.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

#define T0 (1700000000LL * GS_SEC)

static const char *hived_yaml = "physicalCluster:\n  cellTypes:\n"
                                "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                                "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n"
                                "virtualClusters:\n  v:\n    virtualCells:\n"
                                "    - {cellType: N, cellNumber: 1}\n";

/* A LIVE engine of one 2-GPU node under 'ops'; NULL when the policy cannot run here. */
static gs_engine *mk(const gs_policy_ops *ops, gs_cluster **cp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    *cp = NULL;
    int rc = (ops->flags & GS_POLICY_HIVED_ONLY)
                 ? gs_cluster_parse_hived("h.yaml", hived_yaml, strlen(hived_yaml), cp, &d)
                 : gs_cluster_parse_shorthand("1x2", cp, &d);
    if (rc) return NULL;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_LIVE;
    gs_params p;
    gs_params_init(&p);
    if (!strcmp(ops->name, "quota")) gs_params_set(&p, "quotas", "default:2"); /* it needs VCs */
    gs_engine *e = NULL;
    rc = gs_engine_create_ops(*cp, ops, &p, &o, &e, &d);
    gs_params_release(&p);
    if (rc) {
        gs_cluster_destroy(*cp);
        return NULL;
    }
    return e;
}

static const gs_job *submit(gs_engine *e, const gs_policy_ops *ops, int gpus, gs_time now)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = gpus;
    s.duration = 3600 * GS_SEC;
    s.user = "u";
    if (ops->flags & GS_POLICY_HIVED_ONLY) s.vc = "v";
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_submit(e, &s, now, &j, &d)) {
        fprintf(stderr, "%s: submit: %s\n", ops->name, d.msg);
        return NULL;
    }
    return j;
}

/* Advance second by second (at most 'limit' s) until j is RUNNING; the time reached. */
static gs_time run_until_running(gs_engine *e, const gs_job *j, gs_time t, int limit)
{
    for (int i = 0; i < limit && j->state != GS_JOB_RUNNING; i++) {
        t += GS_SEC;
        if (gs_engine_advance(e, t)) return -1;
    }
    return t;
}

/* policies whose whole withdraw / release path ran */
static int g_ran;

static void one_policy(const gs_policy_ops *ops)
{
    gs_cluster *c;
    gs_engine *e = mk(ops, &c);
    if (!e) {
        fprintf(stderr, "# %s: cannot run on the test cluster\n", ops->name);
        /* policies that cannot run on this small cluster (e.g. an LP solver missing) must at
         * least not claim the op without having run here: nothing to check */
        return;
    }
    gs_time t = T0;
    const gs_job *a = submit(e, ops, 2, t);
    ASSERT(a);
    t = run_until_running(e, a, t, 600);
    ASSERT(t > 0);
    if (a->state != GS_JOB_RUNNING) T_FAIL("%s: the first job never started", ops->name);
    const gs_job *b = submit(e, ops, 2, t);
    ASSERT(b);
    t += GS_SEC;
    ASSERT_OK(gs_engine_advance(e, t));
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_EQ(b->arrived, 1);
    ASSERT_EQ(gs_engine_withdraw(e, a, t), GS_ESTATE); /* running: not withdrawable */
    int rc = gs_engine_withdraw(e, b, t);
    if (!ops->on_withdraw) {
        ASSERT_EQ(rc, GS_EUNSUPPORTED);
        ASSERT_EQ(b->arrived, 1); /* nothing changed: still queued */
        ASSERT_EQ(b->deferred, 0);
        ASSERT_EQ(gs_engine_npending(e), 1);
        ASSERT_OK(gs_engine_check(e, NULL));
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
        return;
    }
    ASSERT_OK(rc);
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_EQ(b->arrived, 0);
    ASSERT_EQ(b->deferred, 1);
    ASSERT_EQ(gs_engine_npending(e), 0);
    ASSERT_EQ(gs_engine_withdraw(e, b, t), GS_ESTATE); /* once */
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_time waited = b->queued;
    /* the GPUs free up: a withdrawn job never starts */
    ASSERT_OK(gs_engine_cancel(e, a, "user", t));
    for (int i = 0; i < 300; i++) {
        t += GS_SEC;
        ASSERT_OK(gs_engine_advance(e, t));
        if (b->state != GS_JOB_PENDING || b->arrived)
            T_FAIL("%s: a withdrawn job arrived", ops->name);
    }
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(b->queued, waited); /* withdrawn time is not queue time */
    /* released, it arrives again and runs */
    ASSERT_OK(gs_engine_release(e, b, t));
    t = run_until_running(e, b, t, 600);
    ASSERT(t > 0);
    if (b->state != GS_JOB_RUNNING)
        T_FAIL("%s: the released job did not start (%s)", ops->name, b->reason ? b->reason : "");
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(gs_engine_withdraw(e, b, t), GS_ESTATE);
    ASSERT_OK(gs_engine_cancel(e, b, "user", t));
    ASSERT_OK(gs_engine_advance(e, t + GS_SEC));
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    g_ran++;
}

static void t_every_policy(void)
{
    int with = 0;
    for (size_t i = 0; gs_policy_at(i); i++) {
        const gs_policy_ops *ops = gs_policy_at(i);
        with += ops->on_withdraw != NULL;
        one_policy(ops);
    }
    ASSERT(with >= 10);     /* the queue-based families have it */
    ASSERT_EQ(g_ran, with); /* and each ran the whole path here */
    /* those that keep a queue of waiting jobs */
    static const char *const queued[] = {
        "fifo", "fifo-backfill", "yarn-cs", "quota",   "las", "tiresias-las", "tiresias-gittins",
        "srtf", "sjf",           "hived",   "private", "edf", "tiresias-tj",  "optimus"};
    for (size_t i = 0; i < sizeof queued / sizeof *queued; i++) {
        const gs_policy_ops *ops = gs_policy_find(queued[i]);
        ASSERT(ops);
        if (!ops->on_withdraw) T_FAIL("%s has no on_withdraw", queued[i]);
    }
}

/* fifo: the withdrawn head no longer blocks the queue; a released job whose arrival is due
 * is deferred again; SIM engines refuse. */
static void t_fifo_details(void)
{
    const gs_policy_ops *ops = gs_policy_find("fifo");
    gs_cluster *c;
    gs_engine *e = mk(ops, &c);
    ASSERT(e);
    gs_time t = T0;
    const gs_job *a = submit(e, ops, 1, t);
    const gs_job *big = submit(e, ops, 2, t); /* strict fifo: blocks the next one */
    const gs_job *small = submit(e, ops, 1, t);
    t += GS_SEC;
    ASSERT_OK(gs_engine_advance(e, t));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(small->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_withdraw(e, big, t));
    t += GS_SEC;
    ASSERT_OK(gs_engine_advance(e, t));
    ASSERT_EQ(small->state, GS_JOB_RUNNING); /* the head left: the next one starts */
    ASSERT_EQ(big->state, GS_JOB_PENDING);
    /* released, then withdrawn before its arrival: it stays deferred */
    ASSERT_OK(gs_engine_release(e, big, t));
    ASSERT_OK(gs_engine_withdraw(e, big, t));
    ASSERT_EQ(big->deferred, 1);
    ASSERT_OK(gs_engine_cancel(e, a, "user", t));
    ASSERT_OK(gs_engine_cancel(e, small, "user", t));
    for (int i = 0; i < 5; i++) ASSERT_OK(gs_engine_advance(e, t += GS_SEC));
    ASSERT_EQ(big->arrived, 0);
    ASSERT_EQ(big->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_release(e, big, t));
    ASSERT_OK(gs_engine_advance(e, t += GS_SEC));
    ASSERT_EQ(big->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);

    /* SIM: no withdrawal */
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("1x2", &c, &d));
    ASSERT_OK(gs_engine_create(c, "fifo", NULL, NULL, &e, &d));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.duration = GS_SEC;
    ASSERT_OK(gs_engine_add_job(e, &s, &a, NULL));
    ASSERT_EQ(gs_engine_withdraw(e, a, 0), GS_ESTATE);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* gs_engine_update_deferred: a withdrawn job changes (GPUs, VC, priority, name) and runs so */
static void t_update_deferred(void)
{
    const gs_policy_ops *ops = gs_policy_find("fifo");
    gs_cluster *c;
    gs_engine *e = mk(ops, &c);
    ASSERT(e);
    gs_time t = T0;
    const gs_job *a = submit(e, ops, 2, t);
    const gs_job *b = submit(e, ops, 1, t);
    ASSERT(a && b);
    ASSERT_OK(gs_engine_advance(e, t += GS_SEC));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 2;
    s.duration = 60 * GS_SEC;
    s.vc = "research";
    s.name = "renamed";
    s.priority = 7;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_update_deferred(e, b, &s, &d), GS_ESTATE); /* queued: withdraw first */
    ASSERT_OK(gs_engine_withdraw(e, b, t));
    s.ntasks = 2;
    ASSERT_EQ(gs_engine_update_deferred(e, b, &s, &d), GS_EINVAL); /* tasks are fixed */
    ASSERT_CONTAINS(d.msg, "number of tasks");
    ASSERT_EQ(b->gpus, 1); /* nothing changed */
    s.ntasks = 1;
    ASSERT_OK(gs_engine_update_deferred(e, b, &s, &d));
    ASSERT_EQ(b->gpus, 2);
    ASSERT_EQ(b->gpus_per_task, 2);
    ASSERT_EQ(b->priority, 7);
    ASSERT_STR(b->vc_name, "research");
    ASSERT_STR(b->name, "renamed");
    ASSERT_EQ(b->work, 60 * GS_SEC);
    ASSERT_OK(gs_engine_release(e, b, t));
    ASSERT_OK(gs_engine_advance(e, t += GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_PENDING); /* 2 GPUs now: waits for a */
    ASSERT_OK(gs_engine_cancel(e, a, "user", t));
    ASSERT_OK(gs_engine_advance(e, t += GS_SEC));
    ASSERT_EQ(b->state, GS_JOB_RUNNING);
    ASSERT_EQ(b->nalloc, 2);
    ASSERT_OK(gs_engine_check(e, NULL));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static const test_case tests[] = {
    {"update_deferred", t_update_deferred},
    {"every_policy", t_every_policy},
    {"fifo_details", t_fifo_details},
};

TEST_MAIN(tests)
