/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_hived_configs.c - HiveD's own configs (tests/hived-configs/, copied unchanged from
 * microsoft/hivedscheduler) load as HiveD reads them and start the hived policy; the invalid
 * ones (tests/hived-configs/invalid/) are refused with HiveD's start-up error, at its line and
 * column.  The expected figures were worked out by hand from the configs (see the comments).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"
#include "sim.h"

static gs_cluster *load(const char *rel, gs_diag *d)
{
    gs_cluster *c = NULL;
    gs_diag_init(d, NULL);
    int rc = gs_cluster_load(test_src(rel), &c, d);
    if (rc) {
        gs_cluster_destroy(c);
        return NULL;
    }
    return c;
}

/* Number of chains: distinct cell types of the top-level cells. */
static int nchains(const gs_cluster *c)
{
    const gs_cell *root = gs_cluster_cell(c, 0);
    int n = 0;
    for (int i = 0; i < root->nkids; i++) {
        int t = gs_cluster_cell(c, gs_cluster_cell_kid(c, 0, i))->type, seen = 0;
        for (int k = 0; k < i; k++)
            seen |= gs_cluster_cell(c, gs_cluster_cell_kid(c, 0, k))->type == t;
        n += !seen;
    }
    return n;
}

typedef struct vc_want {
    const char *name;
    int64_t gpus;
} vc_want;

typedef struct cfg_want {
    const char *path;
    int gpus, nodes, chains, gpu_types;
    vc_want vcs[4];
} cfg_want;

/*
 * K80 node = 2 x K80-2GPU = 4 GPUs; DGX1 = 8, DGX2 = 16 (forged 2/4/8/16); V100/K80 nodes of
 * the sku tests = 2 sockets x 2 switches x 2 = 8.
 */
static const cfg_want want[] = {
    /* 3-K80-NODE: 3 nodes; VC1 one node, VC2 one node + pinned node */
    {"tests/hived-configs/config/basic/hivedscheduler.yaml", 12, 3, 1, 1, {{"VC1", 4}, {"VC2", 8}}},
    /* CT1-NODE x3 (2 GPUs each, 6), 3-DGX1-P100-NODE (24), DGX2-V100-NODE x2 (32),
     * 3-DGX2-V100-NODE (48), 4-DGX2-V100-NODE x2 (128), 2-IB-DGX2-V100-NODE (32) = 270 GPUs in
     * 3+3+2+3+8+2 = 21 node cells (1.0.0.2 is in two chains); VC1: 4 x 2 DGX2 nodes (128) +
     * pinned CT1 GPU (1) + pinned 2-DGX2 rack (32) + pinned IB rack (32) = 193; VC2: 2 DGX1
     * nodes (16) + 2 sockets (8) + 1 CT1 node (2) = 26 */
    {"tests/hived-configs/config/design/hivedscheduler.yaml",
     270,
     21,
     6,
     4,
     {{"VC1", 193}, {"VC2", 26}}},
    /* 3-K80-NODE (3 nodes) + 2-K80-NODE (2 nodes) */
    {"tests/hived-configs/feature/hived-config-1.yaml",
     20,
     5,
     2,
     1,
     {{"vc1", 4}, {"vc2", 8}, {"default", 8}}},
    /* K80-NODE-POOL (4 nodes) + M60-NODE-POOL (1 node) */
    {"tests/hived-configs/feature/hived-config-2.yaml", 20, 5, 2, 2, {{"vc1", 8}, {"default", 8}}},
    {"tests/hived-configs/feature/hived-config-3.yaml", 20, 5, 2, 2, {{"vc1", 8}, {"default", 12}}},
    /* the M60 pool is gone */
    {"tests/hived-configs/feature/hived-config-33.yaml", 16, 4, 1, 1, {{"vc1", 4}, {"default", 8}}},
    /* M60-NODE-POOL of 2 nodes */
    {"tests/hived-configs/feature/hived-config-4.yaml", 24, 6, 2, 2, {{"vc1", 12}, {"default", 8}}},
    {"tests/hived-configs/feature/hived-config-5.yaml", 20, 5, 2, 2, {{"vc1", 20}}},
    {"tests/hived-configs/feature/hived-config-6.yaml", 20, 5, 2, 2, {{"vc1", 16}, {"default", 4}}},
    /* K80-NODE-POOL of 3 nodes */
    {"tests/hived-configs/feature/hived-config-7.yaml", 16, 4, 2, 2, {{"vc1", 8}, {"default", 4}}},
    {"tests/hived-configs/feature/hived-config-8.yaml",
     20,
     5,
     2,
     1,
     {{"vc1", 8}, {"vc2", 4}, {"default", 8}}},
    /* 2 V100-RACKs of 2 nodes */
    {"tests/hived-configs/sku/group1/setting.yaml", 32, 4, 1, 1, {{"VC1", 32}}},
    /* 3 V100-RACKs + 2 K80-RACKs of 2 nodes */
    {"tests/hived-configs/sku/group2/setting.yaml", 80, 10, 2, 2, {{"VC1", 48}, {"VC2", 32}}},
    /* 2 V100-RACKs of 4 nodes */
    {"tests/hived-configs/sku/group3/setting.yaml", 64, 8, 1, 1, {{"VC1", 64}}},
};

static void t_every_config(void)
{
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const cfg_want *w = &want[i];
        gs_diag d;
        gs_cluster *c = load(w->path, &d);
        if (!c) T_FAIL("%s: %d:%d: %s", w->path, d.line, d.col, d.msg);
        ASSERT_EQ(gs_cluster_ngpus(c), w->gpus);
        ASSERT_EQ(gs_cluster_nnodes(c), w->nodes);
        ASSERT_EQ(nchains(c), w->chains);
        ASSERT_EQ(gs_cluster_ngpu_types(c), w->gpu_types);
        size_t nv = 0;
        while (nv < 4 && w->vcs[nv].name) nv++;
        ASSERT_EQ(gs_cluster_nvcs(c), nv);
        for (size_t v = 0; v < nv; v++) {
            int vi = gs_cluster_find_vc(c, w->vcs[v].name);
            if (vi < 0) T_FAIL("%s: no VC %s", w->path, w->vcs[v].name);
            ASSERT_EQ(gs_cluster_vc(c, vi)->gpus, w->vcs[v].gpus);
        }
        ASSERT_OK(gs_cluster_check(c, &d));
        /* the hived policy takes it: safety checked, pinned cells bound */
        gs_engine *e = NULL;
        gs_diag_init(&d, NULL);
        if (gs_engine_create(c, "hived", NULL, NULL, &e, &d))
            T_FAIL("%s: hived: %s", w->path, d.msg);
        ASSERT_OK(gs_engine_check(e, &d));
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
    }
}

/* HiveD's default config is all comments: HiveD starts with an empty cluster, gsched cannot. */
static void t_default_config(void)
{
    gs_diag d;
    gs_cluster *c = load("tests/hived-configs/config/default/hivedscheduler.yaml", &d);
    ASSERT(!c);
    ASSERT_STR(d.msg, "HiveD config: no 'physicalCluster' (HiveD would start with an empty "
                      "cluster; gsched needs at least one GPU)");
}

static int node_named(const gs_cluster *c, const char *name, int which)
{
    int n = gs_cluster_find_node(c, name);
    while (n >= 0 && which-- > 0) n = gs_cluster_find_node_next(c, name, n);
    return n;
}

static const char *gpu_type_of(const gs_cluster *c, int node)
{
    return gs_cluster_gpu_type_name(c, gs_cluster_gpu(c, gs_cluster_node(c, node)->gpu_lo)->type);
}

/* The design config in detail: the shared node, explicit GPU indices, pinned cells. */
static void t_design(void)
{
    gs_diag d;
    gs_cluster *c = load("tests/hived-configs/config/design/hivedscheduler.yaml", &d);
    if (!c) T_FAIL("%d:%d: %s", d.line, d.col, d.msg);
    /* 1.0.0.2: CT1 GPUs 8,9 (chain CT1-NODE) and DGX1-P100 GPUs 0..7 (chain 3-DGX1-P100-NODE,
     * cellChildren: null = the full default hierarchy) */
    int a = node_named(c, "1.0.0.2", 0), b = node_named(c, "1.0.0.2", 1);
    ASSERT(a >= 0 && b > a);
    ASSERT_EQ(node_named(c, "1.0.0.2", 2), -1);
    ASSERT_EQ(gs_cluster_find_node_next(c, "1.0.0.2", b), -1);
    ASSERT_EQ(gs_cluster_find_node_next(c, "1.0.0.2", -1), a);
    ASSERT_STR(gpu_type_of(c, a), "CT1");
    ASSERT_STR(gpu_type_of(c, b), "DGX1-P100");
    const gs_node *na = gs_cluster_node(c, a), *nb = gs_cluster_node(c, b);
    ASSERT_EQ(na->gpu_hi - na->gpu_lo, 2);
    ASSERT_EQ(gs_cluster_gpu(c, na->gpu_lo)->local, 8);
    ASSERT_EQ(gs_cluster_gpu(c, na->gpu_lo + 1)->local, 9);
    ASSERT_EQ(nb->gpu_hi - nb->gpu_lo, 8);
    for (int k = 0; k < 8; k++) ASSERT_EQ(gs_cluster_gpu(c, nb->gpu_lo + k)->local, k);
    /* every other name is one node */
    ASSERT_EQ(node_named(c, "1.0.0.1", 1), -1);
    ASSERT_EQ(node_named(c, "0.0.4.3", 1), -1);
    /* 1.0.0.0: non-standard GPU numbering, in cell order */
    int n0 = gs_cluster_find_node(c, "1.0.0.0");
    ASSERT(n0 >= 0);
    static const int order[8] = {1, 3, 4, 7, 0, 2, 6, 5};
    for (int k = 0; k < 8; k++)
        ASSERT_EQ(gs_cluster_gpu(c, gs_cluster_node(c, n0)->gpu_lo + k)->local, order[k]);
    /* pinned cells: a GPU (leaf level), a 2-node rack inside a 4-node pool, a whole top cell */
    int p = gs_cluster_find_pinned(c, "VC1-YQW-CT1");
    ASSERT(p > 0);
    const gs_cell *pc = gs_cluster_cell(c, p);
    ASSERT_EQ(pc->kind, GS_CELL_GPU);
    ASSERT_EQ(pc->gpu_hi - pc->gpu_lo, 1);
    ASSERT_EQ(gs_cluster_gpu(c, pc->gpu_lo)->node, a);
    ASSERT_EQ(gs_cluster_gpu(c, pc->gpu_lo)->local, 8);
    ASSERT_STR(gs_cluster_cell_pinned(c, p), "VC1-YQW-CT1");
    p = gs_cluster_find_pinned(c, "VC1-YQW-DGX2");
    ASSERT(p > 0);
    pc = gs_cluster_cell(c, p);
    ASSERT_EQ(pc->kind, GS_CELL_RACK);
    ASSERT_EQ(pc->gpu_hi - pc->gpu_lo, 32);
    ASSERT_STR(gs_cluster_node(c, pc->node_lo)->name, "0.0.3.0");
    ASSERT_STR(gs_cluster_node(c, pc->node_lo + 1)->name, "0.0.3.1");
    ASSERT_EQ(pc->node_hi - pc->node_lo, 2);
    p = gs_cluster_find_pinned(c, "VC1-YQW-IB-DGX2");
    ASSERT(p > 0);
    ASSERT_EQ(gs_cluster_cell(c, p)->parent, 0);
    ASSERT_EQ(gs_cluster_cell(c, p)->gpu_hi - gs_cluster_cell(c, p)->gpu_lo, 32);
    const gs_vc_def *vc1 = gs_cluster_vc(c, gs_cluster_find_vc(c, "VC1"));
    ASSERT_EQ(vc1->ncells, 4);
    ASSERT_EQ(vc1->npinned, 3);
    ASSERT_STR(vc1->pinned[0], "VC1-YQW-CT1");
    /* "4-DGX2-V100-NODE.2-DGX2-V100-NODE" x1: chain 4-DGX2-V100-NODE, level 6 */
    const gs_cell_type *ct = gs_cluster_cell_type(c, vc1->cells[3].cell_type);
    ASSERT_STR(ct->name, "2-DGX2-V100-NODE");
    ASSERT_EQ(ct->level, 6);
    ASSERT_STR(gs_cluster_cell_type(c, vc1->cells[3].chain)->name, "4-DGX2-V100-NODE");
    ASSERT_EQ(vc1->cells[3].count, 1);
    gs_cluster_destroy(c);
}

/* cellChildren absent, empty, null, ~ or [] all mean the full default hierarchy. */
static void t_null_children(void)
{
    static const char *const forms[] = {"",
                                        "      cellChildren:\n",
                                        "      cellChildren: null\n",
                                        "      cellChildren: ~\n",
                                        "      cellChildren: []\n",
                                        "      cellChildren: Null\n"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char y[1024];
        snprintf(y, sizeof y,
                 "physicalCluster:\n  cellTypes:\n"
                 "    SW: {childCellType: G, childCellNumber: 2}\n"
                 "    N: {childCellType: SW, childCellNumber: 2, isNodeLevel: true}\n"
                 "    R: {childCellType: N, childCellNumber: 2}\n"
                 "  physicalCells:\n  - cellType: R\n    cellChildren:\n"
                 "    - cellAddress: a\n%s"
                 "    - cellAddress: b\n      cellChildren:\n"
                 "      - cellAddress: 1\n        cellChildren: ~\n"
                 "      - cellAddress: 0\n        cellChildren: null\n",
                 forms[i]);
        gs_cluster *c = NULL;
        gs_diag d;
        gs_diag_init(&d, "n.yaml");
        if (gs_cluster_parse_hived("n.yaml", y, strlen(y), &c, &d))
            T_FAIL("form %zu: %d:%d: %s", i, d.line, d.col, d.msg);
        ASSERT_EQ(gs_cluster_ngpus(c), 8);
        ASSERT_EQ(gs_cluster_nnodes(c), 2);
        for (int k = 0; k < 8; k++) ASSERT_EQ(gs_cluster_gpu(c, k)->local, k % 4);
        gs_cluster_destroy(c);
    }
    /* a scalar that is not null is still an error; a quoted "null" is a string */
    static const char *const bad[] = {"cellChildren: x", "cellChildren: \"null\""};
    for (size_t i = 0; i < 2; i++) {
        char y[512];
        snprintf(y, sizeof y,
                 "physicalCluster:\n  cellTypes:\n"
                 "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                 "  physicalCells:\n  - cellType: N\n    cellAddress: a\n    %s\n",
                 bad[i]);
        gs_cluster *c = NULL;
        gs_diag d;
        gs_diag_init(&d, "n.yaml");
        ASSERT_EQ(gs_cluster_parse_hived("n.yaml", y, strlen(y), &c, &d), GS_EPARSE);
        ASSERT_STR(d.msg, "cellChildren must be a list");
        ASSERT_EQ(d.line, 7);
        ASSERT_EQ(d.col, i ? 20 : 19); /* libfyaml places a quoted scalar after its quote */
    }
}

/* Null VC parts, as HiveD (Go's YAML) reads them: no VCs, a VC with nothing, null lists. */
static void t_null_vcs(void)
{
    static const char head[] = "physicalCluster:\n  cellTypes:\n"
                               "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                               "  physicalCells:\n  - {cellType: N, cellAddress: a}\n"
                               "  - {cellType: N, cellAddress: b, pinnedCellId: P}\n";
    static const struct {
        const char *vcs;
        size_t nvcs;
        int64_t gpus0;
    } cases[] = {
        {"virtualClusters:\n", 0, 0},
        {"virtualClusters: ~\n", 0, 0},
        {"virtualClusters:\n  V1:\n  V2: {}\n", 2, 0},
        {"virtualClusters:\n  V1: {virtualCells: null, pinnedCells: [{pinnedCellId: P}]}\n", 1, 2},
        {"virtualClusters:\n  V1: {virtualCells: [{cellType: N, cellNumber: 1}], pinnedCells: ~}\n",
         1, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char y[1024];
        snprintf(y, sizeof y, "%s%s", head, cases[i].vcs);
        gs_cluster *c = NULL;
        gs_diag d;
        gs_diag_init(&d, "v.yaml");
        if (gs_cluster_parse_hived("v.yaml", y, strlen(y), &c, &d))
            T_FAIL("case %zu: %d:%d: %s", i, d.line, d.col, d.msg);
        ASSERT_EQ(gs_cluster_nvcs(c), cases[i].nvcs);
        if (cases[i].nvcs) ASSERT_EQ(gs_cluster_vc(c, 0)->gpus, cases[i].gpus0);
        gs_cluster_destroy(c);
    }
}

/* A node event by name (the sim --events file) applies to every node cell of that name. */
static void t_events_shared_node(void)
{
    gs_node_event ev[] = {{100, (char *)"1.0.0.2", 1}, {100, (char *)"1.0.0.1", 1}};
    gs_events evs = {ev, 2, ""};
    gs_trace t = {0};
    char spec[1024];
    snprintf(spec, sizeof spec, "%s",
             test_src("tests/hived-configs/config/design/hivedscheduler.yaml"));
    gs_sim_opts o = {.cluster_spec = spec, .policy = "hived", .events = &evs};
    gs_sim_result r = {0};
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_sim_run(&o, &t, &r, &d)) T_FAIL("sim: %s", d.msg);
    int downs = 0;
    for (size_t n = 0; n < gs_cluster_nnodes(r.cluster); n++) {
        const gs_node *nd = gs_cluster_node(r.cluster, (int)n);
        int want_down = !strcmp(nd->name, "1.0.0.2") || !strcmp(nd->name, "1.0.0.1");
        ASSERT_EQ(nd->down != 0, want_down);
        downs += nd->down != 0;
    }
    ASSERT_EQ(downs, 3); /* both cells of 1.0.0.2, and 1.0.0.1 */
    gs_sim_result_release(&r);
}

typedef struct bad_want {
    const char *file; /* under tests/hived-configs/invalid/ */
    int line, col;
    const char *msg;
} bad_want;

static const bad_want bad[] = {
    {"unknown-top-cell-type.yaml", 8, 15, "physicalCells contains unknown cellType: 3-K80-RACK"},
    {"leaf-top-cell-type.yaml", 9, 15, "physicalCells contains unknown cellType: K80"},
    {"top-cell-below-node.yaml", 9, 15, "top cell must be node-level or above: K80-2GPU"},
    {"insufficient-cells.yaml", 21, 17,
     "Illegal initial VC assignment: Insufficient physical cells at chain 3-K80-NODE level 3: 4 "
     "needed, 3 available"},
    {"insufficient-pinned.yaml", 25, 21,
     "Illegal initial VC assignment: Insufficient physical cells at chain 3-K80-NODE level 3: 4 "
     "needed, 3 available"},
    {"insufficient-lower-level.yaml", 21, 17,
     "Illegal initial VC assignment: Insufficient physical cells at chain 3-K80-NODE level 2: 3 "
     "needed, 2 available"},
    {"vc-chain-missing.yaml", 17, 17,
     "Illegal initial VC assignment: Chain K80-NODE does not exists in physical cluster"},
    {"vc-cell-type-unknown.yaml", 16, 17,
     "cellType K80-NOD in VirtualCells is not found in cell types definition"},
    {"vc-cell-type-path.yaml", 17, 17,
     "VC 'VC1': cellType '3-K80-NODE.K80-2GPU': 'K80-2GPU' is not the child cell type of "
     "'3-K80-NODE'"},
    {"pinned-not-found.yaml", 17, 21,
     "pinned cell not found in physicalCells: VC: VC2, ID: VC2-K81"},
    {"pinned-id-twice.yaml", 13, 21, "pinnedCellId 'VC2-K80' is used twice"},
    {"pinned-two-vcs.yaml", 20, 21, "pinnedCellId 'VC2-K80' is used by VC 'VC1' and VC 'VC2'"},
    {"node-twice-in-chain.yaml", 15, 20,
     "node name '10.0.0.1' (cellAddress) is used twice in chain 2-K80-NODE"},
    {"shared-node-gpu-clash.yaml", 13, 18,
     "node '10.0.0.2': GPU index 0 is in chain K80-NODE and in chain M60-NODE"},
    {"leaf-address-not-index.yaml", 10, 20,
     "invalid literal for int32: cellAddress 'gpu1' of a leaf cell must be its index in the node"},
    {"node-without-address.yaml", 10, 7,
     "node-level cell of type 'K80-NODE' needs a cellAddress (the node name)"},
    {"too-many-children.yaml", 9, 7,
     "cell of type '3-K80-NODE' lists 4 children but the type has 3"},
};

static void t_invalid_configs(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/hived-configs/invalid/%s", bad[i].file);
        gs_diag d;
        gs_cluster *c = load(rel, &d);
        if (c) {
            gs_cluster_destroy(c);
            T_FAIL("%s was accepted", rel);
        }
        if (strcmp(d.msg, bad[i].msg) || d.line != bad[i].line || d.col != bad[i].col)
            T_FAIL("%s: got %d:%d: %s, want %d:%d: %s", rel, d.line, d.col, d.msg, bad[i].line,
                   bad[i].col, bad[i].msg);
    }
}

/* Every copied config is checked: a file added to tests/hived-configs/ must join the table. */
static void t_all_listed(void)
{
    static const char *const dirs[] = {"config/basic", "config/default", "config/design", "feature",
                                       "sku/group1",   "sku/group2",     "sku/group3"};
    int files = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/hived-configs/%s", dirs[i]);
        DIR *dp = opendir(test_src(rel));
        if (!dp) T_FAIL("cannot open %s", rel);
        struct dirent *de;
        while ((de = readdir(dp))) {
            if (de->d_name[0] == '.') continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", rel, de->d_name);
            int found = !strcmp(path, "tests/hived-configs/config/default/hivedscheduler.yaml");
            for (size_t k = 0; k < sizeof want / sizeof *want; k++)
                found |= !strcmp(want[k].path, path);
            if (!found) T_FAIL("%s is not checked by this test", path);
            files++;
        }
        closedir(dp);
    }
    ASSERT_EQ(files, 15); /* 3 example configs, 9 feature demo configs, 3 sku test settings */
}

static const test_case tests[] = {
    {"all_listed", t_all_listed},
    {"every_config", t_every_config},
    {"default_config", t_default_config},
    {"design", t_design},
    {"null_children", t_null_children},
    {"null_vcs", t_null_vcs},
    {"events_shared_node", t_events_shared_node},
    {"invalid_configs", t_invalid_configs},
};

TEST_MAIN(tests)
