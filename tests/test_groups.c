/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_groups.c - jobs whose tasks differ in size and nested withinOneCell
 * groups (issue 14): the engine's validation and copies (sizes, offsets,
 * groups resolved to cell types, gangs only, not elastic, HiveD's priority
 * range for hived_strict specs), allocation checks by task offset and by
 * group cell, rejection on arrival under a policy without GS_POLICY_GROUPS,
 * the dry run, and the readers (HiveD pod-scheduling spec v1/v2, the plain
 * members/groups form) with file:line:col errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

/* 2 racks x 2 nodes x 2 switches x 2 K80: GPUs 0-3 node n0 (switches 0-1, 2-3), 4-7 n1, ... */
static const char *CLUSTER_YAML = "physicalCluster:\n"
                                  "  cellTypes:\n"
                                  "    K80-SW: {childCellType: K80, childCellNumber: 2}\n"
                                  "    K80-NODE: {childCellType: K80-SW, childCellNumber: 2, "
                                  "isNodeLevel: true}\n"
                                  "    K80-RACK: {childCellType: K80-NODE, childCellNumber: 2}\n"
                                  "  physicalCells:\n"
                                  "  - cellType: K80-RACK\n"
                                  "    cellChildren:\n"
                                  "    - cellAddress: n0\n"
                                  "    - cellAddress: n1\n"
                                  "  - cellType: K80-RACK\n"
                                  "    cellChildren:\n"
                                  "    - cellAddress: n2\n"
                                  "    - cellAddress: n3\n"
                                  "virtualClusters:\n"
                                  "  VC1:\n"
                                  "    virtualCells:\n"
                                  "    - cellType: K80-RACK\n"
                                  "      cellNumber: 2\n";

/* A policy that places grouped jobs (the test places them by hand through the engine). */
static int g_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)e, (void)p, (void)d;
    *st = NULL;
    return 0;
}
static void g_destroy(void *st)
{
    (void)st;
}
static int g_hook(void *st, gs_job *j)
{
    (void)st, (void)j;
    return 0;
}
static int g_schedule(void *st)
{
    (void)st;
    return 0;
}
static const gs_policy_ops groups_ops = {
    .name = "manual-groups",
    .summary = "test",
    .flags = GS_POLICY_GROUPS,
    .create = g_create,
    .destroy = g_destroy,
    .on_arrival = g_hook,
    .on_requeue = g_hook,
    .on_finish = g_hook,
    .schedule = g_schedule,
};

/* An engine on the test cluster under 'policy' (NULL: the manual groups policy). */
static gs_engine *mk(const char *policy, gs_cluster **cp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_hived("test.yaml", CLUSTER_YAML, strlen(CLUSTER_YAML), cp, &d)) {
        fprintf(stderr, "cluster: %s\n", d.msg);
        return NULL;
    }
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_engine *e = NULL;
    int rc = policy ? gs_engine_create(*cp, policy, &p, &o, &e, &d)
                    : gs_engine_create_ops(*cp, &groups_ops, &p, &o, &e, &d);
    gs_params_release(&p);
    if (rc) fprintf(stderr, "engine: %s\n", d.msg);
    return rc ? NULL : e;
}

static void spec_of(gs_job_spec *s, int ntasks, const int32_t *tg)
{
    gs_job_spec_init(s);
    s->vc = "VC1";
    s->ntasks = ntasks;
    s->task_gpus = tg;
    s->duration = gs_time_from_sec(100);
}

/* add s, expect GS_EINVAL and a message containing 'want' */
static int refused(gs_engine *e, const gs_job_spec *s, const char *want, char *msg, size_t cap)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_engine_add_job(e, s, NULL, &d);
    snprintf(msg, cap, "%s", d.msg);
    return rc == GS_EINVAL && strstr(d.msg, want) != NULL;
}

static void test_validation(void)
{
    gs_cluster *c = NULL;
    gs_engine *e = mk(NULL, &c);
    ASSERT(e);
    char msg[512];
    gs_job_spec s;
    int32_t zero[] = {2, 0, 1};
    spec_of(&s, 3, zero);
    ASSERT(refused(e, &s, "task 1 needs at least 1 GPU", msg, sizeof msg));

    int32_t tg[] = {2, 1, 1, 1};
    spec_of(&s, 4, tg);
    s.gang = 0;
    ASSERT(refused(e, &s, "must be a gang", msg, sizeof msg));
    spec_of(&s, 4, tg);
    s.max_gpus = 8;
    s.min_gpus = 1;
    ASSERT(refused(e, &s, "cannot be elastic", msg, sizeof msg));

    /* groups: ranges, parents, pre-order, cell types */
    gs_task_group bad_range[] = {{0, 5, -1, NULL, 0}};
    spec_of(&s, 4, tg);
    s.groups = bad_range;
    s.ngroups = 1;
    ASSERT(refused(e, &s, "group 0: tasks [0, 5)", msg, sizeof msg));
    gs_task_group empty[] = {{2, 2, -1, NULL, 0}};
    s.groups = empty;
    ASSERT(refused(e, &s, "not a non-empty range", msg, sizeof msg));
    gs_task_group later_parent[] = {{0, 2, 1, NULL, 0}, {0, 4, -1, NULL, 0}};
    s.groups = later_parent;
    s.ngroups = 2;
    ASSERT(refused(e, &s, "parent 1 must be an earlier group", msg, sizeof msg));
    gs_task_group outside[] = {{0, 2, -1, NULL, 0}, {1, 3, 0, NULL, 0}};
    s.groups = outside;
    ASSERT(refused(e, &s, "not inside its parent group 0", msg, sizeof msg));
    gs_task_group overlap[] = {{0, 2, -1, NULL, 0}, {1, 3, -1, NULL, 0}};
    s.groups = overlap;
    ASSERT(refused(e, &s, "overlap or precede group 0", msg, sizeof msg));
    gs_task_group unordered[] = {{2, 4, -1, NULL, 0}, {0, 2, -1, NULL, 0}};
    s.groups = unordered;
    ASSERT(refused(e, &s, "overlap or precede", msg, sizeof msg));
    /* nested in a sibling's range without naming it as parent */
    gs_task_group stray[] = {{0, 4, -1, NULL, 0}, {0, 2, -1, NULL, 0}};
    s.groups = stray;
    ASSERT(refused(e, &s, "which is not its parent", msg, sizeof msg));
    gs_task_group unknown[] = {{0, 4, -1, "K80-POD", 0}};
    s.groups = unknown;
    s.ngroups = 1;
    ASSERT(refused(e, &s, "'K80-POD' is not a cell type", msg, sizeof msg));
    /* a valid nest: root [0,4) in a rack, [0,1) on a node, [1,4) in a rack, [1,3) on a switch */
    gs_task_group nest[] = {{0, 4, -1, "K80-RACK", 0},
                            {0, 1, 0, "K80-NODE", 0},
                            {1, 4, 0, NULL, 0},
                            {1, 3, 2, "K80-SW", 0}};
    s.groups = nest;
    s.ngroups = 4;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(e, &s, &j, &d));
    ASSERT_EQ(j->ngroups, 4);
    ASSERT_EQ(j->groups[0].within_type, gs_cluster_find_cell_type(c, "K80-RACK"));
    ASSERT_EQ(j->groups[2].within_type, -1);
    ASSERT(j->groups[2].within == NULL);
    ASSERT_STR(j->groups[3].within, "K80-SW");
    ASSERT(j->groups[3].within != nest[3].within); /* copied */
    ASSERT_EQ(j->groups[3].parent, 2);

    /* HiveD's priority range for a HiveD spec; gsched's own range otherwise */
    gs_job_spec_init(&s);
    s.vc = "VC1";
    s.duration = gs_time_from_sec(10);
    s.priority = 5000;
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    s.hived_strict = 1;
    ASSERT(refused(e, &s, "Priority is greater than 1000", msg, sizeof msg));
    s.priority = -2;
    ASSERT(refused(e, &s, "Priority is less than -1", msg, sizeof msg));
    s.priority = 1000;
    s.vc = NULL;
    ASSERT(refused(e, &s, "VirtualCluster is empty", msg, sizeof msg));
    s.vc = "VC1";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    s.priority = -1;
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void test_offsets(void)
{
    gs_cluster *c = NULL;
    gs_engine *e = mk(NULL, &c);
    ASSERT(e);
    gs_job_spec s;
    int32_t tg[] = {4, 2, 1, 1};
    spec_of(&s, 4, tg);
    s.gpus_per_task = 0; /* ignored when task_gpus is given */
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(e, &s, &j, &d));
    ASSERT(gs_job_grouped(j));
    ASSERT_EQ(j->gpus, 8);
    ASSERT_EQ(j->req_gpus, 8);
    ASSERT_EQ(j->gpus_per_task, 4);
    int want_off[] = {0, 4, 6, 7, 8};
    for (int t = 0; t <= 4; t++) ASSERT_EQ(j->task_off[t], want_off[t]);
    for (int t = 0; t < 4; t++) {
        ASSERT_EQ(gs_job_task_first(j, t), want_off[t]);
        ASSERT_EQ(gs_job_task_gpus(j, t), tg[t]);
    }
    ASSERT(j->task_gpus != tg);
    /* tasks of one size are a plain gang */
    int32_t same[] = {2, 2, 2};
    spec_of(&s, 3, same);
    ASSERT_OK(gs_engine_add_job(e, &s, &j, &d));
    ASSERT(!gs_job_grouped(j));
    ASSERT(j->task_gpus == NULL && j->task_off == NULL);
    ASSERT_EQ(j->gpus_per_task, 2);
    ASSERT_EQ(j->gpus, 6);
    ASSERT_EQ(gs_job_task_first(j, 2), 4);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* arrive every job added so far */
static int arrive(gs_engine *e)
{
    return gs_engine_step(e);
}

static void test_reject_without_policy(void)
{
    gs_cluster *c = NULL;
    gs_engine *e = mk("fifo", &c);
    ASSERT(e);
    gs_job_spec s;
    int32_t tg[] = {2, 1};
    spec_of(&s, 2, tg);
    const gs_job *a = NULL, *b = NULL, *p = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(e, &s, &a, &d));
    /* same sizes but a withinOneCell group: grouped too */
    gs_task_group g[] = {{0, 2, -1, "K80-NODE", 0}};
    spec_of(&s, 2, NULL);
    s.gpus_per_task = 2;
    s.groups = g;
    s.ngroups = 1;
    ASSERT_OK(gs_engine_add_job(e, &s, &b, &d));
    spec_of(&s, 2, NULL);
    s.gpus_per_task = 2;
    ASSERT_OK(gs_engine_add_job(e, &s, &p, &d));
    ASSERT_EQ(arrive(e), 1);
    ASSERT_EQ(a->state, GS_JOB_REJECTED);
    ASSERT_STR(a->reason, GS_GROUPS_NEED_POLICY);
    ASSERT_EQ(b->state, GS_JOB_REJECTED);
    ASSERT_STR(b->reason, GS_GROUPS_NEED_POLICY);
    ASSERT_EQ(p->state, GS_JOB_RUNNING); /* a plain gang runs */
    ASSERT_OK(gs_engine_check(e, &d));
    /* the dry run says the same */
    spec_of(&s, 2, tg);
    gs_probe pr;
    ASSERT_OK(gs_engine_probe(e, &s, &pr));
    ASSERT_EQ(pr.verdict, GS_PROBE_NEVER);
    ASSERT_STR(pr.reason, GS_GROUPS_NEED_POLICY);
    ASSERT_EQ(pr.gpus, 3);
    ASSERT_EQ(pr.gpus_per_task, 2);
    gs_probe_release(&pr);
    /* adopting a grouped job whose GPUs are wrong under fifo: rejected, not left waiting */
    int split[] = {0, 4, 5};
    spec_of(&s, 2, tg);
    s.id = 77;
    const gs_job *x = NULL;
    ASSERT_EQ(gs_engine_adopt(e, &s, split, 3, 0, 0, 0, &x, &d), GS_EINVAL);
    ASSERT_EQ(x->state, GS_JOB_REJECTED);
    ASSERT_OK(gs_engine_check(e, &d));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void test_alloc_checks(void)
{
    gs_cluster *c = NULL;
    gs_engine *e = mk(NULL, &c);
    ASSERT(e);
    gs_job_spec s;
    int32_t tg[] = {2, 1, 1};
    spec_of(&s, 3, tg);
    gs_task_group g[] = {{1, 3, -1, "K80-SW", 0}};
    s.groups = g;
    s.ngroups = 1;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(e, &s, &j, &d));
    ASSERT_EQ(arrive(e), 1);
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    ASSERT_EQ(gs_engine_try_start(e, j, GS_LOCALITY_ANY), GS_EUNSUPPORTED);
    int wrong_count[] = {0, 1, 2};
    ASSERT_EQ(gs_engine_start(e, j, wrong_count, 3), GS_EINVAL);
    int split_task[] = {3, 4, 0, 1}; /* task 0 on n0 and n1 */
    ASSERT_EQ(gs_engine_start(e, j, split_task, 4), GS_EINVAL);
    int split_group[] = {0, 1, 2, 4}; /* tasks 1 and 2 on two nodes: not one switch */
    ASSERT_EQ(gs_engine_start(e, j, split_group, 4), GS_EINVAL);
    int two_switches[] = {4, 5, 1, 2}; /* same node, switches 0-1 and 2-3 */
    ASSERT_EQ(gs_engine_start(e, j, two_switches, 4), GS_EINVAL);
    int ok[] = {4, 5, 2, 3}; /* task 0 on n1, group on n0's second switch */
    ASSERT_OK(gs_engine_start(e, j, ok, 4));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 4);
    ASSERT_OK(gs_engine_check(e, &d));
    /* migrating keeps the same rules */
    int bad_move[] = {8, 9, 10, 12};
    ASSERT_EQ(gs_engine_migrate(e, j, bad_move, 4, "test"), GS_EINVAL);
    int good_move[] = {8, 9, 10, 11};
    ASSERT_OK(gs_engine_migrate(e, j, good_move, 4, "test"));
    ASSERT_OK(gs_engine_check(e, &d));
    /* adoption takes a running job's placement as it is, groups included, tasks whole */
    spec_of(&s, 3, tg);
    s.groups = g;
    s.ngroups = 1;
    s.id = 50;
    const gs_job *a = NULL;
    int across[] = {4, 5, 0, 6}; /* group on two nodes: still adopted */
    ASSERT_OK(gs_engine_adopt(e, &s, across, 4, 0, 0, 0, &a, &d));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_check(e, &d));
    s.id = 51;
    int split[] = {1, 12, 13, 14}; /* task 0 split: refused, left waiting for the policy */
    ASSERT_EQ(gs_engine_adopt(e, &s, split, 4, 0, 0, 0, &a, &d), GS_EINVAL);
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_OK(gs_engine_check(e, &d));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void test_arrival_fit(void)
{
    gs_cluster *c = NULL;
    gs_engine *e = mk(NULL, &c);
    ASSERT(e);
    gs_job_spec s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int32_t big[] = {8, 1};
    spec_of(&s, 2, big);
    const gs_job *a = NULL, *b = NULL, *ok = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &a, &d));
    int32_t tg[] = {2, 1, 1};
    gs_task_group g[] = {{0, 3, -1, "K80-SW", 0}};
    spec_of(&s, 3, tg);
    s.groups = g;
    s.ngroups = 1;
    ASSERT_OK(gs_engine_add_job(e, &s, &b, &d));
    g[0].within = "K80-NODE";
    ASSERT_OK(gs_engine_add_job(e, &s, &ok, &d));
    ASSERT_EQ(arrive(e), 1);
    ASSERT_EQ(a->state, GS_JOB_REJECTED);
    ASSERT_STR(a->reason, "task 0 needs 8 GPUs, more than any node has (4)");
    ASSERT_EQ(b->state, GS_JOB_REJECTED);
    ASSERT_STR(b->reason, "group 0 needs 4 GPUs within one K80-SW cell, which holds 2");
    ASSERT_EQ(ok->state, GS_JOB_PENDING);
    /* the dry run under a policy that places groups: it waits for the policy */
    gs_probe pr;
    ASSERT_OK(gs_engine_probe(e, &s, &pr));
    ASSERT_EQ(pr.verdict, GS_PROBE_WAIT);
    ASSERT_EQ(pr.gpus, 4);
    gs_probe_release(&pr);
    ASSERT_OK(gs_engine_check(e, &d));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static const test_case tests[] = {
    {"validation", test_validation},
    {"offsets", test_offsets},
    {"reject_without_policy", test_reject_without_policy},
    {"alloc_checks", test_alloc_checks},
    {"arrival_fit", test_arrival_fit},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
