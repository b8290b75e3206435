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

/* The list of nodes whose free count or down flag changed (gandiva indexes nodes by it). */
static void t_changed_nodes(void)
{
    gs_cluster *c = uniform(1, 4, 4);
    ASSERT(c);
    const int32_t *ch;
    ASSERT_EQ(gs_cluster_changed_nodes(c, &ch), 0);
    int a[] = {0, 1}, b[] = {2}, d[] = {12, 13};
    ASSERT_OK(gs_cluster_alloc(c, d, 2, 1)); /* node 3 */
    ASSERT_OK(gs_cluster_alloc(c, a, 2, 2)); /* node 0 */
    ASSERT_OK(gs_cluster_alloc(c, b, 1, 3)); /* node 0 again: listed once */
    ASSERT_EQ(gs_cluster_changed_nodes(c, &ch), 2);
    ASSERT_EQ(ch[0], 3);
    ASSERT_EQ(ch[1], 0);
    gs_cluster_clear_changed(c);
    ASSERT_EQ(gs_cluster_changed_nodes(c, &ch), 0);
    /* refused requests and sharing change no free count */
    ASSERT_EQ(gs_cluster_alloc(c, a, 2, 4), GS_ECONFLICT);
    ASSERT_OK(gs_cluster_share(c, 0, 0, 0));
    gs_cluster_unshare(c, 0, 0);
    ASSERT_EQ(gs_cluster_changed_nodes(c, &ch), 0);
    /* a release; a node going down whose GPUs are all taken (free stays 0, usability not) */
    int full[] = {4, 5, 6, 7};
    ASSERT_OK(gs_cluster_alloc(c, full, 4, 5));
    gs_cluster_clear_changed(c);
    ASSERT_OK(gs_cluster_release(c, b, 1, 3));
    ASSERT_OK(gs_cluster_set_node_down(c, 1, 1));
    ASSERT_OK(gs_cluster_set_node_down(c, 1, 1)); /* no change */
    ASSERT_EQ(gs_cluster_changed_nodes(c, &ch), 2);
    ASSERT_EQ(ch[0], 0);
    ASSERT_EQ(ch[1], 1);
    gs_cluster_clear_changed(c);
    /* one GPU failing on an idle node */
    ASSERT_OK(gs_cluster_set_gpu_down(c, 9, 1));
    ASSERT_EQ(gs_cluster_changed_nodes(c, &ch), 1);
    ASSERT_EQ(ch[0], 2);
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
        /* nodes by their free GPUs, under every cell at or above node level */
        for (size_t x = 0; x < gs_cluster_ncells(c); x++) {
            const gs_cell *cell = gs_cluster_cell(c, (int)x);
            for (int v = -1; v <= 5; v++) {
                int want = 0;
                if (cell->kind >= GS_CELL_NODE)
                    for (int nd = cell->node_lo; nd < cell->node_hi; nd++) {
                        const gs_node *n = gs_cluster_node(c, nd);
                        int fr = 0;
                        for (int k = n->gpu_lo; k < n->gpu_hi; k++)
                            fr += gs_cluster_gpu(c, k)->owner < 0 && !gs_cluster_gpu(c, k)->down;
                        want += fr == v;
                    }
                ASSERT_EQ(gs_cluster_nodes_free_eq(c, (int)x, v), want);
            }
        }
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

/* GPU type name of node n's first GPU. */
static const char *node_type(const gs_cluster *c, int n)
{
    return gs_cluster_gpu_type_name(c, gs_cluster_gpu(c, gs_cluster_node(c, n)->gpu_lo)->type);
}

static void t_shorthand_types(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("9x4:V100,9x4:P100,9x4:K80", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 108);
    ASSERT_EQ(gs_cluster_nnodes(c), 27);
    ASSERT_EQ(gs_cluster_ngpu_types(c), 3);
    ASSERT_STR(node_type(c, 8), "V100");
    ASSERT_STR(node_type(c, 9), "P100");
    ASSERT_STR(node_type(c, 26), "K80");
    ASSERT_STR(gs_cluster_node(c, 9)->name, "n9"); /* numbered on across the parts */
    ASSERT_EQ(gs_cluster_find_node_next(c, "n9", 9), -1);
    ASSERT_EQ(gs_cluster_type_gpus(c, gs_cluster_find_gpu_type(c, "K80")), 36);
    ASSERT_OK(gs_cluster_check(c, &d));
    gs_cluster_destroy(c);
    /* a plain count is one server of that many GPUs (Gavel's simulator has no topology) */
    ASSERT_OK(gs_cluster_parse_shorthand("36:V100,36:P100,36:K80", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 108);
    ASSERT_EQ(gs_cluster_nnodes(c), 3);
    ASSERT_EQ(gs_cluster_max_node_gpus(c, gs_cluster_find_gpu_type(c, "P100")), 36);
    gs_cluster_destroy(c);
    /* G/S: servers of S GPUs */
    ASSERT_OK(gs_cluster_parse_shorthand("36/4:V100,16/8:K80", &c, &d));
    ASSERT_EQ(gs_cluster_nnodes(c), 11);
    ASSERT_EQ(gs_cluster_max_node_gpus(c, gs_cluster_find_gpu_type(c, "V100")), 4);
    ASSERT_STR(node_type(c, 10), "K80");
    gs_cluster_destroy(c);
    /* racks numbered on; a part without racks sits under the root */
    ASSERT_OK(gs_cluster_parse_shorthand("2x2x2:A,1x2x2:B,3x2", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 18);
    ASSERT_STR(gs_cluster_cell(c, gs_cluster_node(c, 4)->rack)->name, "r2");
    ASSERT_EQ(gs_cluster_node(c, 6)->rack, 0);
    ASSERT_STR(node_type(c, 6), "gpu"); /* untyped */
    ASSERT_OK(gs_cluster_check(c, &d));
    gs_cluster_destroy(c);
    /* one part: exactly the old single-type tree */
    ASSERT_OK(gs_cluster_parse_shorthand("2x16x8:V100", &c, &d));
    gs_cluster *u;
    ASSERT_OK(gs_cluster_create(&u));
    ASSERT_OK(gs_cluster_build_uniform(u, 2, 16, 8, "V100", 0, 0));
    ASSERT_OK(gs_cluster_finish(u, NULL));
    ASSERT_EQ(gs_cluster_ncells(c), gs_cluster_ncells(u));
    for (size_t i = 0; i < gs_cluster_ncells(c); i++) {
        ASSERT_STR(gs_cluster_cell(c, (int)i)->name, gs_cluster_cell(u, (int)i)->name);
        ASSERT_EQ(gs_cluster_cell(c, (int)i)->kind, gs_cluster_cell(u, (int)i)->kind);
        ASSERT_EQ(gs_cluster_cell(c, (int)i)->parent, gs_cluster_cell(u, (int)i)->parent);
    }
    gs_cluster_destroy(u);
    gs_cluster_destroy(c);
}

static void t_shorthand_errors(void)
{
    static const struct {
        const char *spec;
        int err, col;
        const char *msg;
    } bad[] = {
        {"4x8:V100:X", GS_EPARSE, 9, "a second ':' after GPU type 'V100'"},
        {"4x8:V100,2x8:K80:Y", GS_EPARSE, 17, "second ':'"},
        {"4x8,,2x8", GS_EPARSE, 5, "empty part"},
        {"4x8,", GS_EPARSE, 5, "empty part"},
        {",4x8", GS_EPARSE, 1, "empty part"},
        {"4x8:", GS_EPARSE, 5, "empty GPU type"},
        {"4x8:,2", GS_EPARSE, 5, "empty GPU type"},
        {"4x8:V1 00", GS_EPARSE, 7, "unexpected ' ' in a GPU type"},
        {"4x8:V100;2", GS_EPARSE, 9, "unexpected ';'"},
        {"36/8:V100", GS_EINVAL, 4, "36 GPUs are not a whole number of 8-GPU servers"},
        {"4x8/2", GS_EPARSE, 4, "'/S' (GPUs per server) follows a plain GPU count"},
        {"36/0", GS_ERANGE, 4, "between 1 and 1000000"},
        {"36/4x2", GS_EPARSE, 5, "unexpected 'x'"},
        {"4x8V100", GS_EPARSE, 4, "unexpected 'V'"},
        {"V100", GS_EPARSE, 1, "expected a number"},
        {"2048x2048:A,2048x2048:B", GS_ERANGE, 0, "too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_cluster *c = NULL;
        gs_diag d;
        gs_diag_init(&d, NULL);
        int rc = gs_cluster_parse_shorthand(bad[i].spec, &c, &d);
        if (rc != bad[i].err)
            T_FAIL("'%s': rc %d, want %d (%s)", bad[i].spec, rc, bad[i].err, d.msg);
        ASSERT(c == NULL);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        if (d.col != bad[i].col) T_FAIL("'%s': col %d, want %d", bad[i].spec, d.col, bad[i].col);
    }
    /* 33 GPU types */
    char spec[512] = "1:T0";
    for (int k = 1; k < 33; k++)
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ",1:T%d", k);
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_cluster_parse_shorthand(spec, &c, &d), GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "too many GPU types");
    /* through gs_cluster_load too (the CLI's path) */
    ASSERT_EQ(gs_cluster_load("4x8:V100:X", &c, &d), GS_EPARSE);
    ASSERT(c == NULL);
}

static void t_tiresias_typed(void)
{
    const char *s =
        "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node,gpu_type\n"
        "2,4,8,64,256,V100\n"
        "# a second group of racks\n"
        "1,2,4,32,128,K80\n";
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "x.csv");
    int rc = gs_cluster_parse_tiresias("x.csv", s, strlen(s), &c, &d);
    if (rc) T_FAIL("parse: %s", d.msg);
    ASSERT_EQ(gs_cluster_ngpus(c), 72);
    ASSERT_EQ(gs_cluster_nnodes(c), 10);
    ASSERT_STR(node_type(c, 7), "V100");
    ASSERT_STR(node_type(c, 8), "K80");
    ASSERT_EQ(gs_cluster_node(c, 8)->cpus, 32);
    ASSERT_EQ(gs_cluster_node(c, 8)->mem_mb, 128 * 1024);
    ASSERT_STR(gs_cluster_cell(c, gs_cluster_node(c, 9)->rack)->name, "r2");
    ASSERT_STR(gs_cluster_node(c, 9)->name, "n9");
    ASSERT_OK(gs_cluster_check(c, &d));
    gs_cluster_destroy(c);
    c = NULL;
    const char *bad =
        "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node,gpu_type\n"
        "1,1,8,64,256,V100:X\n";
    ASSERT_EQ(gs_cluster_parse_tiresias("x.csv", bad, strlen(bad), &c, &d), GS_EPARSE);
    ASSERT_EQ(d.line, 2);
    ASSERT_EQ(d.col, 14);
    ASSERT_CONTAINS(d.msg, "not a GPU type name");
    /* column names in any case, in any order */
    const char *upper =
        "NUM_GPU_P_NODE,Num_Switch,num_node_p_switch,num_cpu_p_node,mem_p_node,GPU_Type\n"
        "4,1,2,8,16,A100\n";
    gs_diag_init(&d, NULL);
    rc = gs_cluster_parse_tiresias("x.csv", upper, strlen(upper), &c, &d);
    if (rc) T_FAIL("parse: %s", d.msg);
    ASSERT_EQ(gs_cluster_ngpus(c), 8);
    ASSERT_STR(node_type(c, 1), "A100");
    gs_cluster_destroy(c);
    c = NULL;
    const char *none = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n";
    ASSERT_EQ(gs_cluster_parse_tiresias("x.csv", none, strlen(none), &c, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "no data row");
    ASSERT(c == NULL);
}

static void t_gavel_specs(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "s.json");
    const char *one = "{\n    \"philly\": [\"300:200:100\"]\n}\n";
    ASSERT_OK(gs_cluster_parse_gavel("s.json", one, strlen(one), NULL, &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 600);
    ASSERT_EQ(gs_cluster_type_gpus(c, gs_cluster_find_gpu_type(c, "V100")), 300);
    ASSERT_EQ(gs_cluster_type_gpus(c, gs_cluster_find_gpu_type(c, "P100")), 200);
    ASSERT_EQ(gs_cluster_type_gpus(c, gs_cluster_find_gpu_type(c, "K80")), 100);
    gs_cluster_destroy(c);
    const char *two = "{\"a\": [\"8:0:0\"], \"b\": \"0:4:2\"}";
    ASSERT_OK(gs_cluster_parse_gavel("s.json", two, strlen(two), "b", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 6);
    ASSERT_EQ(gs_cluster_find_gpu_type(c, "V100"), -1); /* no V100 at all */
    gs_cluster_destroy(c);
    c = NULL;
    ASSERT_EQ(gs_cluster_parse_gavel("s.json", two, strlen(two), NULL, &c, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "several clusters (a, b): choose one with FILE.json#KEY");
    ASSERT_EQ(gs_cluster_parse_gavel("s.json", two, strlen(two), "c", &c, &d), GS_ENOENT);
    ASSERT_CONTAINS(d.msg, "no cluster 'c' in Gavel cluster specs (keys: a, b)");
    static const struct {
        const char *json, *msg;
        int line, col;
    } bad[] = {
        {"{\"p\": [\"1:2\"]}", "'1:2' is not a Gavel cluster spec", 1, 9},
        {"{\"p\": [\"1:2:3:4\"]}", "not a Gavel cluster spec", 1, 9},
        {"{\"p\": [\"a:2:3\"]}", "not a Gavel cluster spec", 1, 9},
        {"{\"p\": [\"0:0:0\"]}", "no GPUs", 1, 9},
        {"{\"p\": [\"1:0:0\", \"2:0:0\"]}", "lists 2 specs", 1, 9},
        {"{\"p\": [\"1:0:0\"]", "", 0, 0}, /* syntax error: libfyaml's message */
        {"[1]", "expected a JSON object", 1, 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_diag_init(&d, "s.json");
        int rc = gs_cluster_parse_gavel("s.json", bad[i].json, strlen(bad[i].json), NULL, &c, &d);
        if (!rc) T_FAIL("'%s' accepted", bad[i].json);
        ASSERT(c == NULL);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        if (bad[i].line && (d.line != bad[i].line || d.col != bad[i].col))
            T_FAIL("'%s': at %d:%d, want %d:%d", bad[i].json, d.line, d.col, bad[i].line,
                   bad[i].col);
    }
    /* Gavel's own files, through the loader: the only key, or #KEY */
    gs_diag_init(&d, NULL);
    ASSERT_OK(
        gs_cluster_load(GSCHED_SOURCE_DIR "/data/gavel/traces/msr/cluster_specs.json", &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 500);
    gs_cluster_destroy(c);
    ASSERT_OK(gs_cluster_load(GSCHED_SOURCE_DIR
                              "/data/gavel/traces/msr/cluster_specs_heterogeneous.json#philly",
                              &c, &d));
    ASSERT_EQ(gs_cluster_ngpus(c), 900);
    ASSERT_EQ(gs_cluster_ngpu_types(c), 3);
    gs_cluster_destroy(c);
    c = NULL;
    ASSERT_EQ(
        gs_cluster_load(GSCHED_SOURCE_DIR "/data/gavel/traces/msr/cluster_specs.json#x", &c, &d),
        GS_ENOENT);
    ASSERT_CONTAINS(d.msg, "keys: philly");
    ASSERT_EQ(gs_cluster_load(GSCHED_SOURCE_DIR "/data/tiresias/cluster_spec.csv#x", &c, &d),
              GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "is not one");
    ASSERT_EQ(gs_cluster_load("nowhere.json#philly", &c, &d), GS_ENOENT);
    ASSERT(c == NULL);
}

static const test_case tests[] = {
    {"uniform_shape", t_uniform_shape},
    {"alloc_release_aggregates", t_alloc_release_aggregates},
    {"node_down_up", t_node_down_up},
    {"random_alloc_check", t_random_alloc_check},
    {"changed_nodes", t_changed_nodes},
    {"spread", t_spread},
    {"shorthand", t_shorthand},
    {"tiresias_spec", t_tiresias_spec},
    {"hived_basic", t_hived_basic},
    {"hived_errors", t_hived_errors},
    {"hived_design_like", t_hived_design_like},
    {"hived_fuzz_regressions", t_hived_fuzz_regressions},
    {"shorthand_large", t_shorthand_large},
    {"shorthand_types", t_shorthand_types},
    {"shorthand_errors", t_shorthand_errors},
    {"tiresias_typed", t_tiresias_typed},
    {"gavel_specs", t_gavel_specs},
};

TEST_MAIN(tests)
