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
#include "sim.h"
#include "yaml.h"

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
    s.pinned_cell = "PIN";
    ASSERT(
        refused(e, &s, "opportunistic pod not supported to use pinned cell PIN", msg, sizeof msg));
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

/* ---- readers ------------------------------------------------------------------------------ */

/* The sku branch's group3 cluster shape: racks of 4 nodes, node = 2 sockets x 2 switches x 2. */
static const char *SKU_YAML = "physicalCluster:\n"
                              "  cellTypes:\n"
                              "    V100-SWITCH: {childCellType: V100, childCellNumber: 2}\n"
                              "    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}\n"
                              "    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, "
                              "isNodeLevel: true}\n"
                              "    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}\n"
                              "  physicalCells:\n"
                              "  - cellType: V100-RACK\n"
                              "    cellChildren: [{cellAddress: a1}, {cellAddress: a2}, "
                              "{cellAddress: a3}, {cellAddress: a4}]\n"
                              "virtualClusters:\n"
                              "  VC1: {virtualCells: [{cellType: V100-RACK, cellNumber: 1}]}\n";

static gs_cluster *sku_cluster(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_hived("sku.yaml", SKU_YAML, strlen(SKU_YAML), &c, &d))
        fprintf(stderr, "cluster: %s\n", d.msg);
    return c;
}

/* Parse tests/hived-specs/NAME into s (b holds its arrays). */
static int read_spec(const char *name, const gs_cluster *c, gs_job_spec *s, gs_spec_buf *b,
                     gs_diag *d)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/hived-specs/%s", GSCHED_SOURCE_DIR, name);
    char *buf;
    size_t len;
    gs_diag_init(d, path);
    int rc = gs_read_file(path, &buf, &len, d);
    if (rc) return rc;
    gs_job_spec_init(s);
    rc = gs_hived_spec_parse_text(path, buf, len, c, s, b, d);
    free(buf);
    return rc;
}

static void test_hived_v1_design(void)
{
    gs_job_spec s;
    gs_spec_buf b = {0};
    gs_diag d;
    /* the design example's job X, roles A, B, C: one pod of 16, three of 8, one of 4 GPUs */
    ASSERT_OK(read_spec("design-pcn-abc-a.yaml", NULL, &s, &b, &d));
    ASSERT_EQ(s.ntasks, 5);
    int want[] = {16, 8, 8, 8, 4};
    for (int t = 0; t < 5; t++) ASSERT_EQ(s.task_gpus[t], want[t]);
    ASSERT_EQ(s.gpus_per_task, 16);
    ASSERT_EQ(s.ngroups, 0);
    ASSERT_STR(s.vc, "VC1");
    ASSERT_EQ(s.priority, 1000);
    ASSERT_STR(s.gpu_type, "DGX2-V100");
    ASSERT_STR(s.name, "JOBX/PCN-ABC");
    ASSERT_EQ(s.gang, 1);
    ASSERT_EQ(s.hived_strict, 1);
    gs_spec_buf_release(&b);
    /* role D: any leaf cell type */
    ASSERT_OK(read_spec("design-pcn-d.yaml", NULL, &s, &b, &d));
    ASSERT_EQ(s.ntasks, 2);
    ASSERT_EQ(s.task_gpus[0], 3);
    ASSERT_EQ(s.task_gpus[1], 3);
    ASSERT(s.gpu_type == NULL);
    gs_spec_buf_release(&b);
    /* role E: no affinity group, the pod alone */
    ASSERT_OK(read_spec("design-e.yaml", NULL, &s, &b, &d));
    ASSERT_EQ(s.ntasks, 1);
    ASSERT_EQ(s.task_gpus[0], 16);
    ASSERT(s.name == NULL);
    gs_spec_buf_release(&b);
    /* role F: a pinned cell */
    ASSERT_OK(read_spec("design-pcn-f.yaml", NULL, &s, &b, &d));
    ASSERT_STR(s.pinned_cell, "VC1-YQW-IB-DGX2");
    ASSERT_EQ(s.ntasks, 2);
    gs_spec_buf_release(&b);
}

static void test_hived_v2_sku(void)
{
    gs_cluster *c = sku_cluster();
    ASSERT(c);
    gs_job_spec s;
    gs_spec_buf b = {0};
    gs_diag d;
    /* four 1-GPU pods within one node */
    ASSERT_OK(read_spec("sku-group1-case1-group2.yaml", c, &s, &b, &d));
    ASSERT_EQ(s.ntasks, 4);
    for (int t = 0; t < 4; t++) ASSERT_EQ(s.task_gpus[t], 1);
    ASSERT_EQ(s.ngroups, 1);
    ASSERT_EQ(s.groups[0].lo, 0);
    ASSERT_EQ(s.groups[0].hi, 4);
    ASSERT_STR(s.groups[0].within, "V100-NODE");
    ASSERT_STR(s.gpu_type, "V100");
    ASSERT_EQ(s.priority, 2);
    ASSERT_STR(s.name, "group2");
    gs_spec_buf_release(&b);
    /* four pods of one V100-SWITCH cell each: 2 GPUs inside one switch */
    ASSERT_OK(read_spec("sku-group1-case3-group2.yaml", c, &s, &b, &d));
    ASSERT_EQ(s.ntasks, 4);
    ASSERT_EQ(s.ngroups, 4);
    for (int t = 0; t < 4; t++) {
        ASSERT_EQ(s.task_gpus[t], 2);
        ASSERT_EQ(s.groups[t].lo, t);
        ASSERT_EQ(s.groups[t].hi, t + 1);
        ASSERT_EQ(s.groups[t].parent, -1);
        ASSERT_STR(s.groups[t].within, "V100-SWITCH");
    }
    ASSERT_STR(s.gpu_type, "V100"); /* the leaf type of cellType V100-SWITCH */
    gs_spec_buf_release(&b);
    /* nested: a rack holding three node groups of 3, 3 and 2 one-switch pods */
    ASSERT_OK(read_spec("sku-group3-case1-multi-cascade.yaml", c, &s, &b, &d));
    ASSERT_EQ(s.ntasks, 8);
    ASSERT_EQ(s.ngroups, 12);
    struct {
        int lo, hi, parent;
        const char *within;
    } want[] = {{0, 8, -1, "V100-RACK"},  {0, 3, 0, "V100-NODE"},   {0, 1, 1, "V100-SWITCH"},
                {1, 2, 1, "V100-SWITCH"}, {2, 3, 1, "V100-SWITCH"}, {3, 6, 0, "V100-NODE"},
                {3, 4, 5, "V100-SWITCH"}, {4, 5, 5, "V100-SWITCH"}, {5, 6, 5, "V100-SWITCH"},
                {6, 8, 0, "V100-NODE"},   {6, 7, 9, "V100-SWITCH"}, {7, 8, 9, "V100-SWITCH"}};
    for (int i = 0; i < 12; i++) {
        ASSERT_EQ(s.groups[i].lo, want[i].lo);
        ASSERT_EQ(s.groups[i].hi, want[i].hi);
        ASSERT_EQ(s.groups[i].parent, want[i].parent);
        ASSERT_STR(s.groups[i].within, want[i].within);
    }
    /* and the engine takes it as it is */
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    gs_params p;
    gs_params_init(&p);
    gs_engine *e = NULL;
    ASSERT_OK(gs_engine_create_ops(c, &groups_ops, &p, &o, &e, &d));
    gs_params_release(&p);
    s.duration = gs_time_from_sec(10);
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, &d));
    gs_spec_buf_release(&b);
    ASSERT_EQ(j->gpus, 16);
    ASSERT_EQ(j->ngroups, 12);
    ASSERT_EQ(j->groups[11].within_type, gs_cluster_find_cell_type(c, "V100-SWITCH"));
    ASSERT(!j->task_gpus); /* all pods of one size: only the groups make it grouped */
    ASSERT(gs_job_grouped(j));
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* Parse text as a HiveD spec; 0 when it was refused with exactly "spec.yaml:want". */
static int bad_spec(const gs_cluster *c, const char *text, const char *want, char *got, size_t cap)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    gs_spec_buf b = {0};
    gs_diag d;
    gs_diag_init(&d, "spec.yaml");
    int rc = gs_hived_spec_parse_text("spec.yaml", text, strlen(text), c, &s, &b, &d);
    gs_spec_buf_release(&b);
    gs_diag_format(&d, got, cap);
    char full[600];
    snprintf(full, sizeof full, "spec.yaml:%s", want);
    return rc != 0 && strcmp(got, full) == 0 ? 0 : -1;
}

static void test_hived_bad(void)
{
    gs_cluster *c = sku_cluster();
    ASSERT(c);
    char got[700];
#define BAD(text, want)                                                             \
    do {                                                                            \
        if (bad_spec(c, text, want, got, sizeof got))                               \
            T_FAIL("spec %s: got \"%s\", want \"spec.yaml:%s\"", #text, got, want); \
    } while (0)
    BAD("virtualCluster: VC1\npriority: 1001\nleafCellNumber: 1\n",
        "2:11: Priority is greater than 1000");
    BAD("virtualCluster: VC1\npriority: -2\nleafCellNumber: 1\n", "2:11: Priority is less than -1");
    BAD("priority: 1\nleafCellNumber: 1\n", "1:1: VirtualCluster is empty");
    BAD("virtualCluster: ''\nleafCellNumber: 1\n", "1:18: VirtualCluster is empty");
    BAD("virtualCluster: VC1\nleafCellNumber: 0\n", "2:17: LeafCellNumber is non-positive");
    BAD("virtualCluster: VC1\ngpuNumber: -1\n", "2:12: LeafCellNumber is non-positive");
    BAD("virtualCluster: VC1\nleafCellNumber: 2\naffinityGroup:\n  members: [{podNumber: 1, "
        "leafCellNumber: 2}]\n",
        "4:3: AffinityGroup.Name is empty");
    BAD("virtualCluster: VC1\nleafCellNumber: 2\naffinityGroup:\n  name: g\n  members:\n"
        "  - {podNumber: 0, leafCellNumber: 2}\n",
        "6:17: AffinityGroup.Members has non-positive PodNumber");
    BAD("virtualCluster: VC1\nleafCellNumber: 2\naffinityGroup:\n  name: g\n  members:\n"
        "  - {podNumber: 1, leafCellNumber: 0}\n",
        "6:36: AffinityGroup.Members has non-positive LeafCellNumber");
    BAD("virtualCluster: VC1\nleafCellNumber: 2\naffinityGroup:\n  name: g\n  members:\n"
        "  - {podNumber: 1, leafCellNumber: 4}\n",
        "6:6: AffinityGroup.Members does not contains current Pod");
    BAD("virtualClustr: VC1\nleafCellNumber: 1\n",
        "1:1: unknown field 'virtualClustr' in a HiveD pod-scheduling spec (v1) (did you mean "
        "'virtualCluster'?)");
    BAD("version: v3\nvirtualCluster: VC1\n", "1:10: Unknown version v3");
    /* v2 */
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 0\n", "3:13: CellNumber is non-positive");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup: {withinOneCell: "
        "V100-NODE}\n",
        "4:16: PodRootGroup.Name is empty");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n"
        "  pods: [{podMinNumber: 1}]\n",
        "6:11: Do not support PodGroup.Pods field, please specify PodGroup.Pod");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n  pod:\n"
        "    podMinNumber: 0\n    podMaxNumber: 1\n",
        "7:19: PodGroup.Pod have non-positive PodMinNumber");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n  pod:\n"
        "    podMinNumber: 1\n",
        "7:5: PodGroup.Pod have non-positive PodMaxNumber");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n  pod:\n"
        "    podMinNumber: 1\n    podMaxNumber: 1\n    cellsPerPod: {cellType: V100, cellNumber: "
        "0}\n",
        "9:47: PodGroup.Pod have non-positive CellsPerPod.CellNumber");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n  pod:\n"
        "    podMinNumber: 1\n    podMaxNumber: 1\n    cellsPerPod: {cellType: V100, cellNumber: "
        "1}\n",
        "5:3: PodGroup.Pod does not contain current Pod");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n"
        "  pod: {podMinNumber: 1, podMaxNumber: 1, cellsPerPod: {cellNumber: 1}, "
        "containsCurrentPod: true}\n"
        "  childGroups:\n"
        "  - pod: {podMinNumber: 1, podMaxNumber: 1, cellsPerPod: {cellNumber: 1}, "
        "containsCurrentPod: true}\n",
        "8:95: PodGroup.Pod have multiple ContainsCurrentPod");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\ncellType: V100-POD\n",
        "4:11: cellType 'V100-POD' is not a cell type of the cluster");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n"
        "  withinOneCell: V100-SLOT\n"
        "  pod: {podMinNumber: 1, podMaxNumber: 1, cellsPerPod: {cellNumber: 1}, "
        "containsCurrentPod: true}\n",
        "6:18: withinOneCell 'V100-SLOT' is not a cell type of the cluster");
    BAD("version: v2\nvirtualCluster: VC1\ncellNumber: 1\npodRootGroup:\n  name: g\n"
        "  pod: {podMinNumber: 1, podMaxNumber: 1, cellsPerPod: {cellNumber: 1}, "
        "containsCurrentPod: true}\n"
        "  childGroups:\n  - {name: empty, withinOneCell: V100-NODE}\n",
        "8:6: pod group 'empty' has no pods (withinOneCell V100-NODE)");
#undef BAD
    /* the legacy names read as the new ones */
    gs_job_spec s;
    gs_job_spec_init(&s);
    gs_spec_buf b = {0};
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *legacy = "virtualCluster: VC1\ngpuType: V100\ngpuNumber: 2\n"
                         "affinityGroup: {name: x, members: [{podNumber: 2, gpuNumber: 2}, "
                         "{podNumber: 1, gpuNumber: 1}]}\n";
    ASSERT_OK(gs_hived_spec_parse_text("l.yaml", legacy, strlen(legacy), c, &s, &b, &d));
    ASSERT_STR(s.gpu_type, "V100");
    ASSERT_EQ(s.ntasks, 3);
    ASSERT_EQ(s.task_gpus[2], 1);
    gs_spec_buf_release(&b);
    gs_cluster_destroy(c);
}

/* The plain form in a job mapping. */
static int plain(const gs_cluster *c, const char *text, gs_job_spec *s, gs_spec_buf *b, char *err,
                 size_t cap)
{
    gs_yaml y;
    gs_diag d;
    gs_diag_init(&d, "job.yaml");
    int rc = gs_yaml_load(&y, "job.yaml", text, strlen(text), &d);
    if (!rc) {
        gs_job_spec_init(s);
        s->ntasks = 2;
        s->gpus_per_task = 3;
        rc = gs_job_groups_parse(gs_yaml_root(&y), c, s, b, &d);
        gs_yaml_release(&y);
    }
    gs_diag_format(&d, err, cap);
    return rc;
}

static void test_plain_form(void)
{
    gs_cluster *c = sku_cluster();
    ASSERT(c);
    gs_job_spec s;
    gs_spec_buf b = {0};
    char err[600];
    ASSERT_OK(plain(c,
                    "members: [{tasks: 1, gpus_per_task: 16}, {tasks: 3, gpus_per_task: 8}]\n"
                    "groups:\n"
                    "  - within: V100-RACK\n"
                    "    members: [{gpus_per_task: 4}]\n"
                    "    groups:\n"
                    "      - {within: V100-NODE, members: [{tasks: 2, gpus_per_task: 2}]}\n"
                    "      - {members: [{gpus_per_task: 1}]}\n"
                    "      - {within: V100-SOCKET, members: [{tasks: 2, gpus_per_task: 1}]}\n",
                    &s, &b, err, sizeof err));
    int want[] = {16, 8, 8, 8, 4, 2, 2, 1, 1, 1};
    ASSERT_EQ(s.ntasks, 10);
    for (int t = 0; t < 10; t++) ASSERT_EQ(s.task_gpus[t], want[t]);
    ASSERT_EQ(s.gpus_per_task, 16);
    ASSERT_EQ(s.ngroups, 3);
    ASSERT_EQ(s.groups[0].lo, 4);
    ASSERT_EQ(s.groups[0].hi, 10);
    ASSERT_EQ(s.groups[0].parent, -1);
    ASSERT_EQ(s.groups[1].lo, 5);
    ASSERT_EQ(s.groups[1].hi, 7);
    ASSERT_EQ(s.groups[1].parent, 0);
    ASSERT_STR(s.groups[2].within, "V100-SOCKET");
    ASSERT_EQ(s.groups[2].lo, 8);
    ASSERT_EQ(s.groups[2].hi, 10);
    ASSERT_EQ(s.groups[2].parent, 0);
    gs_spec_buf_release(&b);
    /* within alone: the job's own tasks in one cell */
    ASSERT_OK(plain(c, "within: V100-NODE\n", &s, &b, err, sizeof err));
    ASSERT_EQ(s.ntasks, 2);
    ASSERT(s.task_gpus == NULL);
    ASSERT_EQ(s.ngroups, 1);
    ASSERT_EQ(s.groups[0].hi, 2);
    gs_spec_buf_release(&b);
    /* nothing of it: nothing changes */
    ASSERT_OK(plain(c, "id: 3\n", &s, &b, err, sizeof err));
    ASSERT(s.groups == NULL && s.task_gpus == NULL);
    gs_spec_buf_release(&b);
    ASSERT_NE(plain(c, "members: []\n", &s, &b, err, sizeof err), 0);
    ASSERT_STR(err, "job.yaml:1:1: 'members' must be a non-empty list of {tasks, gpus_per_task}");
    gs_spec_buf_release(&b);
    ASSERT_NE(plain(c, "members: [{tasks: 2}]\n", &s, &b, err, sizeof err), 0);
    ASSERT_STR(err, "job.yaml:1:12: a member needs 'gpus_per_task'");
    gs_spec_buf_release(&b);
    ASSERT_NE(plain(c, "groups: [{within: V100-NODE}]\n", &s, &b, err, sizeof err), 0);
    ASSERT_STR(err, "job.yaml:1:11: a group needs 'members' or 'groups'");
    gs_spec_buf_release(&b);
    ASSERT_NE(plain(c, "groups: [{within: V100-POD, members: [{gpus_per_task: 1}]}]\n", &s, &b, err,
                    sizeof err),
              0);
    ASSERT_STR(err, "job.yaml:1:19: within: 'V100-POD' is not a cell type of the cluster");
    gs_spec_buf_release(&b);
    ASSERT_NE(
        plain(c, "members: [{tasks: 1, gpus_per_task: 1, size: 2}]\n", &s, &b, err, sizeof err), 0);
    ASSERT_CONTAINS(err, "job.yaml:1:40: unknown field 'size' in a member");
    gs_spec_buf_release(&b);
    gs_cluster_destroy(c);
}

/* The native trace's task_gpus and within columns. */
static void test_trace_columns(void)
{
    const char *csv = "id,submit,duration,task_gpus,within,vc\n"
                      "1,0,10,\"16,8,8,8,4\",,VC1\n"
                      "2,0,10,2;1,K80-NODE,VC1\n"
                      "3,0,10,,K80-SW,VC1\n";
    /* row 3 has neither shape: refused, pointing at it */
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, "t.csv");
    ASSERT_NE(gs_trace_parse("t.csv", csv, strlen(csv), &t, &d), 0);
    ASSERT_EQ(d.line, 4);
    gs_trace_release(&t);
    csv = "id,submit,duration,tasks,gpus_per_task,task_gpus,within,vc\n"
          "1,0,10,,,\"16,8,8,8,4\",,VC1\n"
          "2,0,10,2,,2;1,K80-NODE,VC1\n"
          "3,0,10,2,1,,K80-SW,VC1\n";
    gs_diag_init(&d, "t.csv");
    ASSERT_OK(gs_trace_parse("t.csv", csv, strlen(csv), &t, &d));
    ASSERT_EQ(t.n, 3);
    const gs_job_spec *a = &t.jobs[0], *b = &t.jobs[1], *c3 = &t.jobs[2];
    ASSERT_EQ(a->ntasks, 5);
    ASSERT_EQ(a->task_gpus[0], 16);
    ASSERT_EQ(a->task_gpus[4], 4);
    ASSERT_EQ(a->gpus_per_task, 16);
    ASSERT_EQ(a->ngroups, 0);
    ASSERT_EQ(b->ntasks, 2);
    ASSERT_EQ(b->task_gpus[1], 1);
    ASSERT_EQ(b->ngroups, 1);
    ASSERT_STR(b->groups[0].within, "K80-NODE");
    ASSERT_EQ(b->groups[0].hi, 2);
    ASSERT(c3->task_gpus == NULL);
    ASSERT_EQ(c3->ntasks, 2);
    ASSERT_EQ(c3->ngroups, 1);
    ASSERT_STR(c3->groups[0].within, "K80-SW");
    /* the engine takes them */
    gs_cluster *c = NULL;
    gs_engine *e = mk(NULL, &c);
    ASSERT(e);
    for (size_t i = 1; i < t.n; i++) ASSERT_OK(gs_engine_add_job(e, &t.jobs[i], NULL, &d));
    gs_trace_release(&t);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    /* inconsistent or malformed rows, at their field */
    struct {
        const char *csv, *want;
    } bad[] = {
        {"id,submit,duration,gpus,task_gpus\n1,0,10,5,\"2,2\"\n",
         "t.csv:2:8: gpus (5) != the sum of task_gpus (4)"},
        {"id,submit,duration,tasks,task_gpus\n1,0,10,3,\"2,2\"\n",
         "t.csv:2:8: tasks (3) != the number of task_gpus (2)"},
        {"id,submit,duration,gpus_per_task,task_gpus\n1,0,10,2,\"2,2\"\n",
         "t.csv:2:8: give either task_gpus or gpus_per_task, not both"},
        {"id,submit,duration,task_gpus\n1,0,10,\"2,x\"\n",
         "t.csv:2:8: task_gpus: '2,x' is not a list of GPU counts (1..4096) such as "
         "\"16,8,8,8,4\""},
        {"id,submit,duration,task_gpus\n1,0,10,\"2,0\"\n",
         "t.csv:2:8: task_gpus: '2,0' is not a list of GPU counts (1..4096) such as "
         "\"16,8,8,8,4\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gs_diag_init(&d, "t.csv");
        ASSERT_NE(gs_trace_parse("t.csv", bad[i].csv, strlen(bad[i].csv), &t, &d), 0);
        char got[700];
        gs_diag_format(&d, got, sizeof got);
        ASSERT_STR(got, bad[i].want);
        gs_trace_release(&t);
    }
}

static const test_case tests[] = {
    {"validation", test_validation},
    {"offsets", test_offsets},
    {"reject_without_policy", test_reject_without_policy},
    {"alloc_checks", test_alloc_checks},
    {"arrival_fit", test_arrival_fit},
    {"hived_v1_design", test_hived_v1_design},
    {"hived_v2_sku", test_hived_v2_sku},
    {"hived_bad", test_hived_bad},
    {"plain_form", test_plain_form},
    {"trace_columns", test_trace_columns},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
