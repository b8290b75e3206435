/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_placement.c - count / consolidate placement, locality levels, feasibility. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

static gs_cluster *mk(const char *spec)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, &c, &d)) return NULL;
    return c;
}

static gs_place_req req(int ntasks, int gpt, gs_place_mode m, gs_locality lv)
{
    gs_place_req r = {ntasks, gpt, -1, 0, 0, m, lv, GS_FIT_FIRST, 0};
    return r;
}

/* take GPUs [lo, hi) for owner */
static int take(gs_cluster *c, int lo, int hi, int owner)
{
    int g[512], n = 0;
    for (int x = lo; x < hi; x++) g[n++] = x;
    return gs_cluster_alloc(c, g, n, owner);
}

static void t_count_lowest_first(void)
{
    gs_cluster *c = mk("2x2x4");
    ASSERT(c);
    ASSERT_OK(take(c, 0, 3, 1));
    int out[16];
    gs_place_req r = req(3, 1, GS_PLACE_COUNT, GS_LOCALITY_STRICT);
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(out[0], 3);
    ASSERT_EQ(out[1], 4);
    ASSERT_EQ(out[2], 5);
    r.ntasks = 14;
    ASSERT_EQ(gs_place_find(c, &r, out), GS_ENOFIT);
    r.ntasks = 13;
    ASSERT_OK(gs_place_find(c, &r, out));
    gs_cluster_destroy(c);
}

static void t_consolidate_single_node(void)
{
    gs_cluster *c = mk("1x3x8");
    ASSERT(c);
    ASSERT_OK(take(c, 0, 4, 1));  /* n0: 4 free */
    ASSERT_OK(take(c, 8, 10, 2)); /* n1: 6 free */
    int out[8];
    gs_place_req r = req(4, 1, GS_PLACE_CONSOLIDATE, GS_LOCALITY_STRICT);
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(out[0], 4); /* first fit: n0 */
    r.fit = GS_FIT_BEST;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(out[0], 4); /* best fit also n0 (4 free == 4 needed) */
    r.ntasks = 5;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(gs_cluster_gpu(c, out[0])->node, 1); /* best fit: n1 (6) over n2 (8) */
    r.fit = GS_FIT_FIRST;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(gs_cluster_gpu(c, out[0])->node, 1);
    /* STRICT never splits a job that fits one node */
    ASSERT_OK(take(c, 16, 20, 3)); /* n2: 4 free, n1: 6, n0: 4 */
    r.ntasks = 7;
    ASSERT_EQ(gs_place_find(c, &r, out), GS_ENOFIT);
    /* RACK level may */
    r.level = GS_LOCALITY_RACK;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(gs_cluster_count_nodes(c, out, 7), 2);
    gs_cluster_destroy(c);
}

static void t_strict_multi_node_yarn_rule(void)
{
    gs_cluster *c = mk("2x4x8");
    ASSERT(c);
    /* rack 0: n0 busy 1 GPU, n1 idle, n2 idle, n3 busy 6 */
    ASSERT_OK(take(c, 0, 1, 1));
    ASSERT_OK(take(c, 24, 30, 2));
    int out[64];
    /* 20 GPUs = 2 whole idle nodes + 4 on one more node, all in one rack */
    gs_place_req r = req(20, 1, GS_PLACE_CONSOLIDATE, GS_LOCALITY_STRICT);
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(gs_cluster_count_nodes(c, out, 20), 3);
    ASSERT_EQ(gs_cluster_spread(c, out, 20), GS_CELL_RACK);
    ASSERT_EQ(gs_cluster_gpu(c, out[0])->node, 1);
    ASSERT_EQ(gs_cluster_gpu(c, out[8])->node, 2);
    ASSERT_EQ(gs_cluster_gpu(c, out[16])->node, 0); /* first remaining node with 4 free */
    /* 24 GPUs need 3 idle nodes in one rack: rack 0 has 2, rack 1 has 4 */
    r.ntasks = 24;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(gs_cluster_gpu(c, out[0])->node, 4);
    /* 40 GPUs never fit one rack of 32 */
    r.ntasks = 40;
    ASSERT_EQ(gs_place_find(c, &r, out), GS_ENOFIT);
    r.level = GS_LOCALITY_ANY;
    ASSERT_OK(gs_place_find(c, &r, out));
    gs_cluster_destroy(c);
}

static void t_tasks_stay_on_one_node(void)
{
    gs_cluster *c = mk("1x2x8");
    ASSERT(c);
    ASSERT_OK(take(c, 0, 3, 1));  /* n0: 5 free */
    ASSERT_OK(take(c, 8, 11, 2)); /* n1: 5 free */
    int out[16];
    /* 2 tasks of 4 GPUs: one per node; count mode too */
    gs_place_req r = req(2, 4, GS_PLACE_COUNT, GS_LOCALITY_STRICT);
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(gs_cluster_gpu(c, out[0])->node, gs_cluster_gpu(c, out[3])->node);
    ASSERT_EQ(gs_cluster_gpu(c, out[4])->node, gs_cluster_gpu(c, out[7])->node);
    ASSERT_NE(gs_cluster_gpu(c, out[0])->node, gs_cluster_gpu(c, out[4])->node);
    /* 2 tasks of 6: 10 GPUs free but no node has 6 */
    r.gpus_per_task = 6;
    ASSERT_EQ(gs_place_find(c, &r, out), GS_ENOFIT);
    gs_cluster_destroy(c);
}

static void t_intra_node_consolidation(void)
{
    /* HiveD-like node: 2 sockets x 2 switches x 2 GPUs */
    const char *y = "physicalCluster:\n  cellTypes:\n"
                    "    SW: {childCellType: G, childCellNumber: 2}\n"
                    "    SO: {childCellType: SW, childCellNumber: 2}\n"
                    "    N: {childCellType: SO, childCellNumber: 2, isNodeLevel: true}\n"
                    "  physicalCells:\n  - {cellType: N, cellAddress: a}\n";
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_hived("x", y, strlen(y), &c, &d));
    int busy[] = {0, 2};
    ASSERT_OK(gs_cluster_alloc(c, busy, 2, 1)); /* one GPU taken on each switch of socket 0 */
    int out[4];
    gs_place_req r = req(1, 2, GS_PLACE_CONSOLIDATE, GS_LOCALITY_STRICT);
    ASSERT_OK(gs_place_find(c, &r, out));
    /* a 2-GPU task goes to one free PCIe switch (GPUs 4,5), not to 1 + 3 */
    ASSERT_EQ(out[0], 4);
    ASSERT_EQ(out[1], 5);
    ASSERT_EQ(gs_cluster_spread(c, out, 2), GS_CELL_PCIE);
    gs_cluster_destroy(c);
}

static void t_gpu_types_and_cpus(void)
{
    gs_cluster *c;
    ASSERT_OK(gs_cluster_create(&c));
    int tv = gs_cluster_gpu_type(c, "V100"), tk = gs_cluster_gpu_type(c, "K80");
    int n0 = gs_cluster_add_cell(c, 0, GS_CELL_NODE, "k0", -1);
    ASSERT_OK(gs_cluster_set_node(c, n0, 8, 0));
    for (int i = 0; i < 4; i++) ASSERT(gs_cluster_add_gpu(c, n0, i, tk) >= 0);
    int n1 = gs_cluster_add_cell(c, 0, GS_CELL_NODE, "v0", -1);
    ASSERT_OK(gs_cluster_set_node(c, n1, 8, 0));
    for (int i = 0; i < 4; i++) ASSERT(gs_cluster_add_gpu(c, n1, i, tv) >= 0);
    ASSERT_OK(gs_cluster_finish(c, NULL));
    int out[8];
    gs_place_req r = req(2, 1, GS_PLACE_COUNT, GS_LOCALITY_STRICT);
    r.gpu_type = tv;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_EQ(out[0], 4);
    /* CPUs: 3 tasks x 3 CPUs do not fit a node with 8 CPUs */
    r.gpu_type = tk;
    r.ntasks = 3;
    r.cpus_per_task = 3;
    ASSERT_EQ(gs_place_find(c, &r, out), GS_ENOFIT);
    char why[256];
    ASSERT_EQ(gs_place_feasible(c, &r, why, sizeof why), GS_ENEVER);
    ASSERT_CONTAINS(why, "CPU/memory");
    r.cpus_per_task = 2;
    ASSERT_OK(gs_place_find(c, &r, out));
    ASSERT_OK(gs_place_feasible(c, &r, why, sizeof why));
    gs_cluster_destroy(c);
}

static void t_feasibility_reasons(void)
{
    gs_cluster *c = mk("2x4x8");
    ASSERT(c);
    char why[256];
    gs_place_req r = req(65, 1, GS_PLACE_COUNT, GS_LOCALITY_STRICT);
    ASSERT_EQ(gs_place_feasible(c, &r, why, sizeof why), GS_ENEVER);
    ASSERT_CONTAINS(why, "needs 65 GPUs but the cluster has 64");
    r = req(1, 9, GS_PLACE_COUNT, GS_LOCALITY_STRICT);
    ASSERT_EQ(gs_place_feasible(c, &r, why, sizeof why), GS_ENEVER);
    ASSERT_CONTAINS(why, "largest node has 8");
    r = req(40, 1, GS_PLACE_CONSOLIDATE, GS_LOCALITY_STRICT);
    ASSERT_EQ(gs_place_feasible(c, &r, why, sizeof why), GS_ENEVER);
    ASSERT_CONTAINS(why, "under one rack");
    r.level = GS_LOCALITY_ANY;
    ASSERT_OK(gs_place_feasible(c, &r, why, sizeof why));
    gs_cluster_destroy(c);
}

/* Property: any result is a valid placement; COUNT fails only when too few GPUs are free. */
static void t_random_placements_valid(void)
{
    gs_cluster *c = mk("3x4x8");
    ASSERT(c);
    gs_rng rng;
    gs_rng_seed(&rng, 7);
    int owners[96];
    int next_owner = 1;
    for (int i = 0; i < 96; i++) owners[i] = -1;
    for (int step = 0; step < 4000; step++) {
        int gpt = 1 << gs_rng_below(&rng, 4);
        int ntasks = 1 + (int)gs_rng_below(&rng, gpt == 8 ? 5 : 8);
        gs_place_mode m = gs_rng_below(&rng, 2) ? GS_PLACE_COUNT : GS_PLACE_CONSOLIDATE;
        gs_locality lv = (gs_locality)gs_rng_below(&rng, 3);
        gs_place_req r = req(ntasks, gpt, m, lv);
        r.fit = gs_rng_below(&rng, 2) ? GS_FIT_FIRST : GS_FIT_BEST;
        int out[128];
        int rc = gs_place_find(c, &r, out);
        int n = ntasks * gpt;
        if (rc == 0) {
            for (int t = 0; t < ntasks; t++)
                for (int k = 0; k < gpt; k++) {
                    int g = out[t * gpt + k];
                    ASSERT(g >= 0 && g < 96);
                    ASSERT_EQ(owners[g], -1);
                    ASSERT_EQ(gs_cluster_gpu(c, g)->node, gs_cluster_gpu(c, out[t * gpt])->node);
                    for (int q = 0; q < t * gpt + k; q++) ASSERT_NE(out[q], g);
                }
            if (m == GS_PLACE_CONSOLIDATE && lv == GS_LOCALITY_STRICT && n <= 8)
                ASSERT_EQ(gs_cluster_count_nodes(c, out, n), 1);
            if (gs_rng_below(&rng, 3)) {
                int owner = next_owner++;
                ASSERT_OK(gs_cluster_alloc(c, out, n, owner));
                for (int i = 0; i < n; i++) owners[out[i]] = owner;
            }
        } else {
            ASSERT_EQ(rc, GS_ENOFIT);
            if (m == GS_PLACE_COUNT && gpt == 1) ASSERT(gs_cluster_free(c) < n);
        }
        /* release a random owner now and then */
        if (gs_rng_below(&rng, 4) == 0) {
            int g = (int)gs_rng_below(&rng, 96);
            if (owners[g] >= 0) {
                int o = owners[g], rel[96], k = 0;
                for (int i = 0; i < 96; i++)
                    if (owners[i] == o) rel[k++] = i, owners[i] = -1;
                ASSERT_OK(gs_cluster_release(c, rel, k, o));
            }
        }
        ASSERT_OK(gs_cluster_check(c, NULL));
    }
    gs_cluster_destroy(c);
}

static const test_case tests[] = {
    {"count_lowest_first", t_count_lowest_first},
    {"consolidate_single_node", t_consolidate_single_node},
    {"strict_multi_node_yarn_rule", t_strict_multi_node_yarn_rule},
    {"tasks_stay_on_one_node", t_tasks_stay_on_one_node},
    {"intra_node_consolidation", t_intra_node_consolidation},
    {"gpu_types_and_cpus", t_gpu_types_and_cpus},
    {"feasibility_reasons", t_feasibility_reasons},
    {"random_placements_valid", t_random_placements_valid},
};

TEST_MAIN(tests)
