/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_cluster.c - cell tree, aggregates, allocation state, loaders. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

static gs_cluster *uniform(int racks, int nodes, int gpus)
{
    gs_cluster *c;
    if (gs_cluster_create(&c)) return NULL;
    if (gs_cluster_build_uniform(c, racks, nodes, gpus, "V100", 64, 256 * 1024) ||
        gs_cluster_finish(c, NULL)) {
        gs_cluster_destroy(c);
        return NULL;
    }
    return c;
}

static void t_uniform_shape(void)
{
    gs_cluster *c = uniform(2, 4, 8);
    ASSERT(c);
    ASSERT_EQ(gs_cluster_ngpus(c), 64);
    ASSERT_EQ(gs_cluster_nnodes(c), 8);
    /* root + 2 racks + 8 nodes + 64 GPUs */
    ASSERT_EQ(gs_cluster_ncells(c), 1 + 2 + 8 + 64);
    const gs_cell *root = gs_cluster_cell(c, 0);
    ASSERT_EQ(root->free, 64);
    ASSERT_EQ(root->idle_nodes, 8);
    ASSERT_EQ(root->max_node_free, 8);
    ASSERT_EQ(gs_cluster_max_node_gpus(c, -1), 8);
    ASSERT_EQ(gs_cluster_type_gpus(c, 0), 64);
    const gs_node *n5 = gs_cluster_node(c, 5);
    ASSERT_STR(n5->name, "n5");
    ASSERT_EQ(n5->gpu_lo, 40);
    ASSERT_EQ(n5->gpu_hi, 48);
    ASSERT_EQ(gs_cluster_cell(c, n5->rack)->kind, GS_CELL_RACK);
    ASSERT_STR(gs_cluster_cell(c, n5->rack)->name, "r1");
    ASSERT_EQ(gs_cluster_gpu(c, 43)->local, 3);
    ASSERT_OK(gs_cluster_check(c, NULL));
    gs_cluster_destroy(c);
}

static void t_alloc_release_aggregates(void)
{
    gs_cluster *c = uniform(2, 4, 8);
    ASSERT(c);
    int a[] = {0, 1, 2};
    ASSERT_OK(gs_cluster_alloc(c, a, 3, 7));
    ASSERT_EQ(gs_cluster_cell(c, 0)->free, 61);
    ASSERT_EQ(gs_cluster_cell(c, 0)->idle_nodes, 7);
    ASSERT_OK(gs_cluster_check(c, NULL));
    /* busy GPU: conflict, nothing changes */
    int b[] = {3, 2};
    ASSERT_EQ(gs_cluster_alloc(c, b, 2, 8), GS_ECONFLICT);
    ASSERT_EQ(gs_cluster_cell(c, 0)->free, 61);
    /* duplicate in one request */
    int dup[] = {9, 9};
    ASSERT_EQ(gs_cluster_alloc(c, dup, 2, 8), GS_EINVAL);
    ASSERT_EQ(gs_cluster_cell(c, 0)->free, 61);
    ASSERT_OK(gs_cluster_check(c, NULL));
    /* fill every node but n7 partly: max_node_free must follow */
    for (int nd = 0; nd < 8; nd++) {
        int g[6];
        int k = 0;
        for (int x = nd * 8 + 2; x < nd * 8 + 8 && k < 6; x++)
            if (gs_cluster_gpu(c, x)->owner < 0) g[k++] = x;
        if (nd < 7) ASSERT_OK(gs_cluster_alloc(c, g, k, 100 + nd));
    }
    ASSERT_EQ(gs_cluster_cell(c, 0)->max_node_free, 8);
    ASSERT_OK(gs_cluster_check(c, NULL));
    /* release by the wrong owner is refused */
    ASSERT_EQ(gs_cluster_release(c, a, 3, 8), GS_ECONFLICT);
    ASSERT_OK(gs_cluster_release(c, a, 3, 7));
    ASSERT_OK(gs_cluster_check(c, NULL));
    gs_cluster_destroy(c);
}

static void t_node_down_up(void)
{
    gs_cluster *c = uniform(1, 2, 4);
    ASSERT(c);
    int a[] = {0};
    ASSERT_OK(gs_cluster_alloc(c, a, 1, 1));
    ASSERT_OK(gs_cluster_set_node_down(c, 0, 1));
    ASSERT_EQ(gs_cluster_cell(c, 0)->free, 4);
    ASSERT_EQ(gs_cluster_cell(c, 0)->healthy, 4);
    ASSERT_OK(gs_cluster_check(c, NULL));
    /* a down GPU cannot be allocated */
    int b[] = {1};
    ASSERT_EQ(gs_cluster_alloc(c, b, 1, 2), GS_ECONFLICT);
    ASSERT_OK(gs_cluster_release(c, a, 1, 1));
    ASSERT_EQ(gs_cluster_cell(c, 0)->free, 4); /* still down */
    ASSERT_OK(gs_cluster_set_node_down(c, 0, 0));
    ASSERT_EQ(gs_cluster_cell(c, 0)->free, 8);
    ASSERT_EQ(gs_cluster_cell(c, 0)->idle_nodes, 2);
    ASSERT_OK(gs_cluster_check(c, NULL));
    gs_cluster_destroy(c);
}

static void t_random_alloc_check(void)
{
    gs_cluster *c = uniform(3, 5, 4);
    ASSERT(c);
    gs_rng r;
    gs_rng_seed(&r, 42);
    int owner_of[60];
    for (int i = 0; i < 60; i++) owner_of[i] = -1;
    for (int step = 0; step < 3000; step++) {
        int g = (int)gs_rng_below(&r, 60);
        int op = (int)gs_rng_below(&r, 10);
        if (op == 0) {
            ASSERT_OK(
                gs_cluster_set_node_down(c, (int)gs_rng_below(&r, 15), (int)gs_rng_below(&r, 2)));
        } else if (owner_of[g] < 0) {
            int rc = gs_cluster_alloc(c, &g, 1, step);
            if (rc == 0)
                owner_of[g] = step;
            else
                ASSERT_EQ(rc, GS_ECONFLICT); /* down */
        } else {
            ASSERT_OK(gs_cluster_release(c, &g, 1, owner_of[g]));
            owner_of[g] = -1;
        }
        gs_diag d;
        gs_diag_init(&d, NULL);
        if (gs_cluster_check(c, &d)) T_FAIL("step %d: %s", step, d.msg);
    }
    gs_cluster_destroy(c);
}

static void t_spread(void)
{
    gs_cluster *c = uniform(2, 2, 4);
    ASSERT(c);
    int one[] = {1};
    ASSERT_EQ(gs_cluster_spread(c, one, 1), GS_CELL_GPU);
    int same_node[] = {0, 3};
    ASSERT_EQ(gs_cluster_spread(c, same_node, 2), GS_CELL_NODE);
    int same_rack[] = {0, 4};
    ASSERT_EQ(gs_cluster_spread(c, same_rack, 2), GS_CELL_RACK);
    int cross[] = {0, 8};
    ASSERT_EQ(gs_cluster_spread(c, cross, 2), GS_CELL_ROOT);
    ASSERT_EQ(gs_cluster_count_nodes(c, cross, 2), 2);
    gs_cluster_destroy(c);
}

static void t_shorthand(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("4x16x8:V100", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 512);
    ASSERT_EQ(gs_cluster_nnodes(c), 64);
    ASSERT_STR(gs_cluster_gpu_type_name(c, 0), "V100");
    gs_cluster_destroy(c);
    ASSERT_OK(gs_cluster_parse_shorthand("3x8", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 24);
    ASSERT_EQ(gs_cluster_node(c, 0)->rack, 0); /* no rack level */
    gs_cluster_destroy(c);
    ASSERT_OK(gs_cluster_parse_shorthand("8", &c, &d));
    ASSERT_EQ(gs_cluster_nnodes(c), 1);
    gs_cluster_destroy(c);
    c = NULL;
    ASSERT_EQ(gs_cluster_parse_shorthand("4x0x8", &c, &d), GS_ERANGE);
    ASSERT_EQ(gs_cluster_parse_shorthand("4xx8", &c, &d), GS_EPARSE);
    ASSERT_EQ(gs_cluster_parse_shorthand("1x2x3x4", &c, &d), GS_EPARSE);
    ASSERT_EQ(gs_cluster_parse_shorthand("8:", &c, &d), GS_EPARSE);
    ASSERT(c == NULL);
}

static void t_tiresias_spec(void)
{
    const char *s = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
                    "2,16,8,64,256\n";
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "x.csv");
    ASSERT_OK(gs_cluster_parse_tiresias("x.csv", s, strlen(s), &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 256);
    ASSERT_EQ(gs_cluster_node(c, 0)->cpus, 64);
    ASSERT_EQ(gs_cluster_node(c, 0)->mem_mb, 256 * 1024);
    gs_cluster_destroy(c);
    const char *bad = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
                      "2,16,zero,64,256\n";
    ASSERT_EQ(gs_cluster_parse_tiresias("x.csv", bad, strlen(bad), &c, &d), GS_EPARSE);
    ASSERT_EQ(d.line, 2);
    ASSERT_EQ(d.col, 6);
    ASSERT_CONTAINS(d.msg, "num_gpu_p_node");
    const char *missing = "num_switch,num_node_p_switch\n1,2\n";
    ASSERT_EQ(gs_cluster_parse_tiresias("x.csv", missing, strlen(missing), &c, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "num_gpu_p_node");
}

static const char *hived_basic =
    "physicalCluster:\n"
    "  skuTypes:\n"
    "    K80: {gpu: 1, cpu: 5, memory: 54Gi}\n"
    "  cellTypes:\n"
    "    K80-2GPU:      {childCellType: K80,      childCellNumber: 2}\n"
    "    K80-NODE:      {childCellType: K80-2GPU, childCellNumber: 2, isNodeLevel: true}\n"
    "    3-K80-NODE:    {childCellType: K80-NODE, childCellNumber: 3}\n"
    "  physicalCells:\n"
    "  - cellType: 3-K80-NODE\n"
    "    cellChildren:\n"
    "    - cellAddress: node1\n"
    "    - cellAddress: node2\n"
    "      pinnedCellId: VC2-K80\n"
    "    - cellAddress: node3\n"
    "virtualClusters:\n"
    "  VC1:\n"
    "    virtualCells:\n"
    "    - {cellType: 3-K80-NODE.K80-NODE, cellNumber: 1}\n"
    "  VC2:\n"
    "    virtualCells:\n"
    "    - {cellType: 3-K80-NODE.K80-NODE, cellNumber: 1}\n"
    "    pinnedCells:\n"
    "    - pinnedCellId: VC2-K80\n";

static void t_hived_basic(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "hived.yaml");
    int rc = gs_cluster_parse_hived("hived.yaml", hived_basic, strlen(hived_basic), &c, &d);
    if (rc) T_FAIL("parse: %s (line %d col %d)", d.msg, d.line, d.col);
    ASSERT_EQ(gs_cluster_ngpus(c), 12);
    ASSERT_EQ(gs_cluster_nnodes(c), 3);
    ASSERT_STR(gs_cluster_node(c, 1)->name, "node2");
    ASSERT_EQ(gs_cluster_node(c, 0)->cpus, 20);
    ASSERT_EQ(gs_cluster_node(c, 0)->mem_mb, 4 * 54 * 1024);
    /* node -> 2 PCIe-level cells -> GPUs; the top cell is a rack */
    const gs_node *n0 = gs_cluster_node(c, 0);
    ASSERT_EQ(gs_cluster_cell(c, n0->rack)->kind, GS_CELL_RACK);
    int kid = gs_cluster_cell_kid(c, n0->cell, 0);
    ASSERT_EQ(gs_cluster_cell(c, kid)->kind, GS_CELL_PCIE);
    ASSERT_EQ(gs_cluster_gpu(c, 5)->local, 1); /* node2, second GPU */
    ASSERT_EQ(gs_cluster_nvcs(c), 2);
    ASSERT_STR(gs_cluster_vc(c, 0)->name, "VC1");
    ASSERT_EQ(gs_cluster_vc(c, 0)->gpus, 4);
    ASSERT_EQ(gs_cluster_vc(c, 1)->gpus, 8);
    int pinned = gs_cluster_find_pinned(c, "VC2-K80");
    ASSERT(pinned > 0);
    ASSERT_STR(gs_cluster_cell(c, pinned)->name, "node2");
    ASSERT_OK(gs_cluster_check(c, NULL));
    gs_cluster_destroy(c);
}

static int parse_err(const char *y, gs_diag *d)
{
    gs_cluster *c = NULL;
    gs_diag_init(d, "h.yaml");
    int rc = gs_cluster_parse_hived("h.yaml", y, strlen(y), &c, d);
    gs_cluster_destroy(c);
    return rc;
}

static void t_hived_errors(void)
{
    gs_diag d;
    /* malformed YAML: reported with its line */
    ASSERT_EQ(parse_err("physicalCluster:\n  cellTypes: [a, b\n  physicalCells: 3\n", &d),
              GS_EPARSE);
    ASSERT(d.line >= 2);
    ASSERT_CONTAINS(d.msg, "invalid YAML");
    /* VC asks for more nodes than exist: HiveD's per-level message */
    char *over = strdup(hived_basic);
    char *p = strstr(
        over, "VC2:\n    virtualCells:\n    - {cellType: 3-K80-NODE.K80-NODE, cellNumber: 1}");
    ASSERT(p);
    p = strstr(p, "cellNumber: 1");
    p[12] = '3';
    ASSERT_EQ(parse_err(over, &d), GS_EINVAL);
    ASSERT_STR(d.msg, "Illegal initial VC assignment: Insufficient physical cells at chain "
                      "3-K80-NODE level 3: 5 needed, 3 available");
    free(over);
    /* typo in a field: suggestion and position */
    ASSERT_EQ(
        parse_err("physicalCluster:\n  cellTypes:\n    N: {childCellType: G, childCellNumbr: 2, "
                  "isNodeLevel: true}\n  physicalCells:\n  - {cellType: N, cellAddress: a}\n",
                  &d),
        GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "did you mean 'childCellNumber'");
    ASSERT_EQ(d.line, 3);
    /* unknown chain in a VC */
    ASSERT_EQ(
        parse_err(
            "physicalCluster:\n  cellTypes:\n    N: {childCellType: G, childCellNumber: 2, "
            "isNodeLevel: true}\n  physicalCells:\n  - {cellType: N, cellAddress: a}\n"
            "virtualClusters:\n  v:\n    virtualCells:\n    - {cellType: X.N, cellNumber: 1}\n",
            &d),
        GS_EPARSE);
    ASSERT_STR(d.msg, "Illegal initial VC assignment: Chain X does not exists in physical cluster");
    ASSERT_EQ(d.line, 9);
    /* node-level cell without an address */
    ASSERT_EQ(
        parse_err("physicalCluster:\n  cellTypes:\n    N: {childCellType: G, childCellNumber: 2, "
                  "isNodeLevel: true}\n  physicalCells:\n  - {cellType: N}\n",
                  &d),
        GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "needs a cellAddress");
    /* cycle */
    ASSERT_EQ(
        parse_err(
            "physicalCluster:\n  cellTypes:\n    A: {childCellType: B, childCellNumber: 2}\n"
            "    B: {childCellType: A, childCellNumber: 2}\n  physicalCells:\n  - {cellType: A}\n",
            &d),
        GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "cycle");
}

/* Inputs found by tests/fuzz (fuzz_hived, fuzz_cluster): each used to hang, overflow or be
 * accepted with a broken meaning; now each is an input error at its position. */
static void t_hived_fuzz_regressions(void)
{
    gs_diag d;
    /* libfyaml 0.7.12 loops forever on a directive followed by a non-UTF-8 byte */
    ASSERT_EQ(parse_err("%\x9b", &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "byte 0x9b is not UTF-8");
    ASSERT_EQ(d.line, 1);
    ASSERT_EQ(d.col, 2);
    ASSERT_EQ(parse_err("physicalCluster:\n  cellTypes: {}\n\n  x: \"\xc3\x28\"\n", &d), GS_EPARSE);
    ASSERT_EQ(d.line, 4);
    ASSERT_EQ(d.col, 7);
    /* libfyaml's own errors are 1-based: they used to come out one line and column late */
    ASSERT_EQ(parse_err("physicalCluster: v\nphysicalCluster: w\n", &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "duplicate key");
    ASSERT_EQ(d.line, 2);
    ASSERT_EQ(d.col, 1);
    ASSERT_EQ(parse_err("physicalCluster:\n  cellTypes: {}\n  cellTypes: {}\n", &d), GS_EPARSE);
    ASSERT_EQ(d.line, 3);
    ASSERT_EQ(d.col, 3);
    /* 4096^3 GPUs: signed overflow of the cell type's GPU count, then an endless build */
    ASSERT_EQ(parse_err("physicalCluster:\n  cellTypes:\n"
                        "    A: {childCellType: G, childCellNumber: 4096}\n"
                        "    N: {childCellType: A, childCellNumber: 4096, isNodeLevel: true}\n"
                        "    R: {childCellType: N, childCellNumber: 4096}\n"
                        "  physicalCells:\n  - cellType: R\n",
                        &d),
              GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "a 'N' cell would have 16777216 GPUs");
    ASSERT_EQ(d.line, 4);
    /* many top-level cells: the total is bounded too */
    {
        char y[8192] = "physicalCluster:\n  cellTypes:\n"
                       "    N: {childCellType: G, childCellNumber: 4096, isNodeLevel: true}\n"
                       "    R: {childCellType: N, childCellNumber: 1024}\n"
                       "  physicalCells:\n";
        for (int i = 0; i < 2; i++) strcat(y, "  - cellType: R\n");
        ASSERT_EQ(parse_err(y, &d), GS_ERANGE);
        ASSERT_CONTAINS(d.msg, "physicalCells: more than 4194304 GPUs");
        ASSERT_EQ(d.line, 7);
    }
    /* more than 32 levels of cell types */
    {
        char y[8192] = "physicalCluster:\n  cellTypes:\n";
        for (int i = 0; i < 40; i++)
            snprintf(y + strlen(y), sizeof y - strlen(y),
                     "    T%d: {childCellType: %s%d, childCellNumber: 1%s}\n", i, i ? "T" : "G",
                     i ? i - 1 : 0, i == 0 ? ", isNodeLevel: true" : "");
        strcat(y, "  physicalCells:\n  - cellType: T39\n");
        ASSERT_EQ(parse_err(y, &d), GS_ERANGE);
        ASSERT_CONTAINS(d.msg, "more than 32 levels");
    }
    static const char head[] = "physicalCluster:\n  cellTypes:\n"
                               "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                               "  physicalCells:\n";
    char y[1024];
    /* GPU addresses: negative and beyond int were taken as indices -5 and 1215752191 */
    snprintf(y, sizeof y,
             "%s  - cellType: N\n    cellAddress: n1\n    cellChildren:\n"
             "    - cellAddress: \"-5\"\n",
             head);
    ASSERT_EQ(parse_err(y, &d), GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "cellAddress '-5' of a GPU must be an index");
    ASSERT_EQ(d.line, 8);
    snprintf(y, sizeof y,
             "%s  - cellType: N\n    cellAddress: n1\n    cellChildren:\n"
             "    - cellAddress: 99999999999\n",
             head);
    ASSERT_EQ(parse_err(y, &d), GS_ERANGE);
    /* two GPUs with the same index in a node, two nodes with the same name */
    snprintf(y, sizeof y,
             "%s  - cellType: N\n    cellAddress: n1\n    cellChildren:\n"
             "    - cellAddress: 1\n    - cellAddress: 1\n",
             head);
    ASSERT_EQ(parse_err(y, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "node 'n1': two GPUs have the index 1");
    snprintf(y, sizeof y,
             "%s  - {cellType: N, cellAddress: n1}\n  - {cellType: N, cellAddress: n2}\n"
             "  - {cellType: N, cellAddress: n1}\n",
             head);
    ASSERT_EQ(parse_err(y, &d), GS_EEXIST);
    ASSERT_CONTAINS(d.msg, "node name 'n1' (cellAddress) is used twice in chain N");
    ASSERT_EQ(d.line, 7);
    snprintf(y, sizeof y, "%s  - {cellType: N, cellAddress: \"\"}\n", head);
    ASSERT_EQ(parse_err(y, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "must not be empty");
    /* pinnedCellId on a GPU was silently ignored; now the GPU's leaf cell is the pinned cell */
    snprintf(y, sizeof y,
             "%s  - cellType: N\n    cellAddress: n1\n    cellChildren:\n"
             "    - {cellAddress: 0, pinnedCellId: p}\n",
             head);
    ASSERT_EQ(parse_err(y, &d), 0);
    /* CPUs x GPUs of a node overflowed int; memory beyond int was truncated */
    ASSERT_EQ(parse_err("physicalCluster:\n  skuTypes:\n    G: {gpu: 1, cpu: 1048576}\n"
                        "  cellTypes:\n"
                        "    N: {childCellType: G, childCellNumber: 4096, isNodeLevel: true}\n"
                        "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n",
                        &d),
              GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "too many");
    ASSERT_EQ(parse_err("physicalCluster:\n  skuTypes:\n    G: {gpu: 1, memory: nan}\n"
                        "  cellTypes:\n"
                        "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                        "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n",
                        &d),
              GS_EPARSE); /* a NaN size reached a double -> int64 conversion (UB) */
    ASSERT_EQ(d.line, 3);
    ASSERT_EQ(parse_err("physicalCluster:\n  skuTypes:\n    G: {gpu: 1, memory: 9000Ti}\n"
                        "  cellTypes:\n"
                        "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                        "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n",
                        &d),
              GS_EPARSE);
    ASSERT_EQ(d.line, 3);
}

static void t_shorthand_large(void)
{
    /* 400,008 GPUs: loading used to reallocate a per-GPU array once per GPU (quadratic) */
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("4x100002", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 400008);
    ASSERT_OK(gs_cluster_check(c, &d));
    gs_cluster_destroy(c);
}

static void t_hived_design_like(void)
{
    /* DGX1-like node: switch (2 GPUs) -> socket (4) -> node (8); two nodes in a rack */
    const char *y = "physicalCluster:\n"
                    "  cellTypes:\n"
                    "    SW: {childCellType: V100, childCellNumber: 2}\n"
                    "    SOCK: {childCellType: SW, childCellNumber: 2}\n"
                    "    DGX1: {childCellType: SOCK, childCellNumber: 2, isNodeLevel: true}\n"
                    "    RACK: {childCellType: DGX1, childCellNumber: 2}\n"
                    "  physicalCells:\n"
                    "  - cellType: RACK\n"
                    "    cellChildren:\n"
                    "    - cellAddress: a\n"
                    "    - cellAddress: b\n"
                    "  - cellType: DGX1\n"
                    "    cellAddress: c\n"
                    "virtualClusters:\n"
                    "  v1: {virtualCells: [{cellType: RACK.DGX1.SOCK, cellNumber: 3}]}\n"
                    "  v2: {virtualCells: [{cellType: DGX1, cellNumber: 1}]}\n";
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "d.yaml");
    int rc = gs_cluster_parse_hived("d.yaml", y, strlen(y), &c, &d);
    if (rc) T_FAIL("parse: %s (line %d col %d)", d.msg, d.line, d.col);
    ASSERT_EQ(gs_cluster_ngpus(c), 24);
    ASSERT_EQ(gs_cluster_nnodes(c), 3);
    const gs_node *na = gs_cluster_node(c, 0);
    int sock = gs_cluster_cell_kid(c, na->cell, 0);
    ASSERT_EQ(gs_cluster_cell(c, sock)->kind, GS_CELL_SOCKET);
    ASSERT_EQ(gs_cluster_cell(c, gs_cluster_cell_kid(c, sock, 0))->kind, GS_CELL_PCIE);
    ASSERT_EQ(gs_cluster_node(c, 2)->rack, 0); /* top-level node: no rack */
    ASSERT_EQ(gs_cluster_vc(c, 0)->gpus, 12);
    gs_cluster_destroy(c);
}

static const test_case tests[] = {
    {"uniform_shape", t_uniform_shape},
    {"alloc_release_aggregates", t_alloc_release_aggregates},
    {"node_down_up", t_node_down_up},
    {"random_alloc_check", t_random_alloc_check},
    {"spread", t_spread},
    {"shorthand", t_shorthand},
    {"tiresias_spec", t_tiresias_spec},
    {"hived_basic", t_hived_basic},
    {"hived_errors", t_hived_errors},
    {"hived_design_like", t_hived_design_like},
    {"hived_fuzz_regressions", t_hived_fuzz_regressions},
    {"shorthand_large", t_shorthand_large},
};

TEST_MAIN(tests)
