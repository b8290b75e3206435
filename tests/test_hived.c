/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_hived.c - HiveD policy: randomized properties over random HiveD
 * configs (1-3 chains of GPU types A and B, several chains of one type too;
 * racks, nodes with PCIe switches, VCs of rack / node / switch cells, pinned
 * cells), random priorities, gang sizes, GPU types or none, lazy preemption
 * and node failures:
 *   - after every instant the engine check passes: no GPU twice, gangs
 *     atomic, and the policy's own check (VC safety invariant
 *     total_left >= all_vc_free at every chain and level; every guaranteed
 *     job inside its VC's bound cells; cell usage counts exact);
 *   - after every instant every running job (guaranteed or opportunistic)
 *     holds GPUs of one chain and one GPU type only, and every running
 *     grouped job (tasks of 1-3 GPUs, withinOneCell groups of a switch, node
 *     or rack, nested) has each task on one node and each group inside one
 *     cell of its type;
 *   - every job ends (or is rejected at arrival);
 *   - (no failures, 1-GPU tasks, no lazy jobs) after every instant, the
 *     first waiting guaranteed job of a VC does not fit the VC's own GPUs
 *     left at its priority: a VC's guaranteed jobs never wait on GPUs that
 *     other VCs or opportunistic jobs hold;
 * plus fixed cases: a pinned cell that is a single GPU (config built in
 * code), and grouped jobs (tasks of different sizes, groups within a switch,
 * a node, a rack) placed as HiveD places them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

#define MAXCH 3

typedef struct gen {
    char yaml[16384];
    int nvc;
    int vc_gpus[8][MAXCH]; /* guaranteed GPUs per VC and chain (non-pinned) */
    char chains[MAXCH][8]; /* top cell type of each chain, in config order */
    char types[MAXCH][8];  /* GPU (leaf cell) type of each chain: chains may share one */
    int nchain;
    int pinned_vc; /* VC owning the pinned cell, -1 */
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
 * A random valid HiveD config: 1-3 chains (racks of nodes of PCIe switches),
 * of GPU types A and B, several chains of one type too; VCs take node or
 * switch cells within capacity.
 */
static void make_config(gen *g, gs_rng *r)
{
    memset(g, 0, sizeof *g);
    g->nchain = 1 + (int)gs_rng_below(r, MAXCH);
    g->pinned_vc = -1;
    int nodes_per_rack[MAXCH], racks[MAXCH], sw_per_node[MAXCH];
    app(g, "physicalCluster:\n  cellTypes:\n");
    for (int c = 0; c < g->nchain; c++) {
        snprintf(g->chains[c], sizeof g->chains[c], "R%d", c);
        /* the first chain is of type A; later ones A or B */
        snprintf(g->types[c], sizeof g->types[c], "%s", c && gs_rng_below(r, 2) ? "B" : "A");
        sw_per_node[c] = 1 + (int)gs_rng_below(r, 2); /* 2 or 4 GPUs per node */
        nodes_per_rack[c] = 1 + (int)gs_rng_below(r, 3);
        racks[c] = 1 + (int)gs_rng_below(r, 2);
        app(g, "    SW%d: {childCellType: %s, childCellNumber: 2}\n", c, g->types[c]);
        app(g, "    N%d: {childCellType: SW%d, childCellNumber: %d, isNodeLevel: true}\n", c, c,
            sw_per_node[c]);
        app(g, "    R%d: {childCellType: N%d, childCellNumber: %d}\n", c, c, nodes_per_rack[c]);
    }
    app(g, "  physicalCells:\n");
    int pin_done = 0;
    for (int c = 0; c < g->nchain; c++)
        for (int k = 0; k < racks[c]; k++) {
            app(g, "  - cellType: R%d\n    cellChildren:\n", c);
            for (int n = 0; n < nodes_per_rack[c]; n++) {
                app(g, "    - cellAddress: c%d-%d-%d\n", c, k, n);
                if (!pin_done && c == 0 && k == 0 && n == 0 && gs_rng_below(r, 2)) {
                    app(g, "      pinnedCellId: PIN\n");
                    pin_done = 1;
                }
            }
        }
    g->nvc = 2 + (int)gs_rng_below(r, 3);
    app(g, "virtualClusters:\n");
    /* capacity in switch units per chain (a node = sw_per_node switches) */
    int cap[MAXCH];
    for (int c = 0; c < g->nchain; c++)
        cap[c] = racks[c] * nodes_per_rack[c] * sw_per_node[c] -
                 (c == 0 && pin_done ? sw_per_node[0] : 0);
    if (pin_done) g->pinned_vc = (int)gs_rng_below(r, (uint64_t)g->nvc);
    for (int v = 0; v < g->nvc; v++) {
        app(g, "  v%d:\n    virtualCells:\n", v);
        int any = 0;
        for (int c = 0; c < g->nchain; c++) {
            /* whole nodes first, then maybe a switch; never more than capacity */
            int nodes = (int)gs_rng_below(r, 3);
            while (nodes && nodes * sw_per_node[c] > cap[c]) nodes--;
            if (nodes) {
                app(g, "    - {cellType: R%d.N%d, cellNumber: %d}\n", c, c, nodes);
                cap[c] -= nodes * sw_per_node[c];
                g->vc_gpus[v][c] += nodes * sw_per_node[c] * 2;
                any = 1;
            }
            if (cap[c] >= 1 && gs_rng_below(r, 2)) {
                app(g, "    - {cellType: R%d.N%d.SW%d, cellNumber: 1}\n", c, c, c);
                cap[c] -= 1;
                g->vc_gpus[v][c] += 2;
                any = 1;
            }
        }
        if (!any) app(g, "    - {cellType: R0.N0.SW0, cellNumber: 0}\n");
        if (v == g->pinned_vc) app(g, "    pinnedCells:\n    - {pinnedCellId: PIN}\n");
    }
}

/* The chain of GPU g: the index of its top cell's type in g->chains. */
static int chain_of(const gs_cluster *c, const gen *g, int gpu)
{
    int x = gs_cluster_node(c, gs_cluster_gpu(c, gpu)->node)->cell;
    while (gs_cluster_cell(c, x)->parent > 0) x = gs_cluster_cell(c, x)->parent;
    const char *tn = gs_cluster_cell_type(c, gs_cluster_cell(c, x)->type)->name;
    for (int k = 0; k < g->nchain; k++)
        if (!strcmp(tn, g->chains[k])) return k;
    return -1;
}

/* Every running job's GPUs lie in one chain and are of one GPU type (HiveD's affinity group). */
static int check_one_chain(const gs_cluster *c, const gen *g, gs_engine *e, char *err, size_t cap)
{
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->state != GS_JOB_RUNNING || !j->nalloc) continue;
        int ch = chain_of(c, g, j->alloc[0]), t = gs_cluster_gpu(c, j->alloc[0])->type;
        for (int k = 1; k < j->nalloc; k++)
            if (chain_of(c, g, j->alloc[k]) != ch || gs_cluster_gpu(c, j->alloc[k])->type != t) {
                snprintf(err, cap, "job %lld (prio %d) spans chains %s and %s", (long long)j->id,
                         j->priority, g->chains[ch], g->chains[chain_of(c, g, j->alloc[k])]);
                return -1;
            }
        if (ch < 0) {
            snprintf(err, cap, "job %lld runs outside every chain", (long long)j->id);
            return -1;
        }
    }
    return 0;
}

/* The cell of cell type 'type' holding GPU g: an ancestor of its node or a cell inside it. */
static int cell_of_type(const gs_cluster *c, int g, int type)
{
    int nc = gs_cluster_node(c, gs_cluster_gpu(c, g)->node)->cell;
    for (int a = nc; a >= 0; a = gs_cluster_cell(c, a)->parent)
        if (gs_cluster_cell(c, a)->type == type) return a;
    for (size_t x = (size_t)nc + 1; x < gs_cluster_ncells(c); x++) {
        const gs_cell *cx = gs_cluster_cell(c, (int)x);
        if (cx->depth <= gs_cluster_cell(c, nc)->depth) break;
        if (cx->type == type && g >= cx->gpu_lo && g < cx->gpu_hi) return (int)x;
    }
    return -1;
}

/* Every running job's withinOneCell groups lie inside one cell of their type, each task on
 * one node. */
static int check_groups(const gs_cluster *c, gs_engine *e, char *err, size_t cap)
{
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->state != GS_JOB_RUNNING || !j->nalloc) continue;
        for (int t = 0; t < j->ntasks; t++) {
            const int *g = j->alloc + gs_job_task_first(j, t);
            for (int k = 1; k < gs_job_task_gpus(j, t); k++)
                if (gs_cluster_gpu(c, g[k])->node != gs_cluster_gpu(c, g[0])->node) {
                    snprintf(err, cap, "job %lld: task %d spans nodes", (long long)j->id, t);
                    return -1;
                }
        }
        for (int k = 0; k < j->ngroups; k++) {
            const gs_task_group *gr = &j->groups[k];
            if (gr->within_type < 0) continue;
            int lo = gs_job_task_first(j, gr->lo), hi = gs_job_task_first(j, gr->hi);
            if (gs_cluster_cell_type(c, gr->within_type)->child < 0 && hi - lo == 1)
                continue; /* within a leaf type: one GPU */
            int cell = cell_of_type(c, j->alloc[lo], gr->within_type);
            const gs_cell *x = cell >= 0 ? gs_cluster_cell(c, cell) : NULL;
            for (int q = lo; q < hi; q++)
                if (!x || j->alloc[q] < x->gpu_lo || j->alloc[q] >= x->gpu_hi) {
                    snprintf(err, cap, "job %lld: group %d (tasks %d-%d) not within one %s",
                             (long long)j->id, k, gr->lo, gr->hi - 1,
                             gs_cluster_cell_type(c, gr->within_type)->name);
                    return -1;
                }
        }
    }
    return 0;
}

static void dbg_obs(void *ud, const gs_record *r)
{
    (void)ud;
    fprintf(stderr, "t=%.0f %s job %lld %s\n", gs_time_to_sec(r->t), gs_rec_type_name(r->type),
            r->job ? (long long)r->job->id : -1LL, r->reason ? r->reason : "");
}

typedef struct world {
    gs_cluster *c;
    gs_engine *e;
    gen g;
} world;

/* GPUs of VC v in chain c used by its guaranteed jobs at priority >= p. */
static int used_at(world *w, int v, int c, int p)
{
    int used = 0;
    char vc[8];
    snprintf(vc, sizeof vc, "v%d", v);
    for (size_t i = 0; i < gs_engine_njobs(w->e); i++) {
        const gs_job *j = gs_engine_job(w->e, i);
        if (j->state != GS_JOB_RUNNING || strcmp(j->vc_name, vc) || j->priority < p) continue;
        if (j->pinned_cell >= 0) continue;
        if (chain_of(w->c, &w->g, j->alloc[0]) != c) continue;
        used += j->gpus;
    }
    return used;
}

static int run_one(uint64_t seed, int strict, char *err, size_t cap)
{
    gs_rng r;
    gs_rng_seed(&r, seed);
    world w = {0};
    make_config(&w.g, &r);
    gs_diag d;
    gs_diag_init(&d, "gen.yaml");
    if (gs_cluster_parse_hived("gen.yaml", w.g.yaml, strlen(w.g.yaml), &w.c, &d)) {
        snprintf(err, cap, "config: %s (line %d)\n%s", d.msg, d.line, w.g.yaml);
        return -1;
    }
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", gs_rng_below(&r, 2) ? "on" : "off");
    gs_params_set(&p, "preempt_cost", gs_rng_below(&r, 2) ? "model" : "0");
    static const char *intra[] = {"fifo", "tiresias-las", "las", "srtf"};
    gs_params_set(&p, "intra", intra[gs_rng_below(&r, 4)]);
    gs_params_set(&p, "overflow", gs_rng_below(&r, 2) ? "on" : "off"); /* hived reads it */
    int rc = gs_engine_create(w.c, gs_rng_below(&r, 5) ? "hived" : "private", &p, NULL, &w.e, &d);
    gs_params_release(&p);
    if (rc) {
        snprintf(err, cap, "create: %s", d.msg);
        gs_cluster_destroy(w.c);
        return -1;
    }
    if (getenv("HIVED_DEBUG")) gs_engine_set_observer(w.e, dbg_obs, NULL);
    int njobs = 10 + (int)gs_rng_below(&r, 40);
    int ngt = (int)gs_cluster_ngpu_types(w.c); /* jobs without a type too: any chain */
    gs_engine_reserve_ids(w.e, njobs);         /* tasks of non-gang jobs take ids after ours */
    for (int i = 0; i < njobs; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i;
        s.submit = (gs_time)gs_rng_below(&r, 300) * GS_SEC;
        s.duration = (gs_time)(5 + gs_rng_below(&r, 200)) * GS_SEC;
        static const int prios[] = {-1, 10, 100, 100};
        s.priority = prios[gs_rng_below(&r, 4)];
        char vc[8];
        snprintf(vc, sizeof vc, "v%d", (int)gs_rng_below(&r, (uint64_t)w.g.nvc));
        s.vc = vc;
        s.ntasks = 1 + (int)gs_rng_below(&r, 3);
        s.gpus_per_task = strict ? 1 : 1 + (int)gs_rng_below(&r, 2);
        s.gang = strict || gs_rng_below(&r, 4) ? 1 : 0;
        s.lazy_preemption = !strict && gs_rng_below(&r, 3) == 0;
        if ((ngt > 1 && gs_rng_below(&r, 4)) || gs_rng_below(&r, 2))
            s.gpu_type = w.g.types[gs_rng_below(&r, (uint64_t)w.g.nchain)];
        /* grouped (not strict): tasks of 1-3 GPUs, maybe a withinOneCell group of a switch,
         * node or rack of one chain, maybe a group nested in it */
        int32_t tg[4];
        gs_task_group grp[2];
        char wt[2][8];
        if (!strict && gs_rng_below(&r, 3) == 0) {
            s.ntasks = 2 + (int)gs_rng_below(&r, 3);
            for (int t = 0; t < s.ntasks; t++) tg[t] = 1 + (int32_t)gs_rng_below(&r, 3);
            s.task_gpus = tg;
            s.gang = 1;
            int c = (int)gs_rng_below(&r, (uint64_t)w.g.nchain);
            static const char *lv[] = {"SW", "N", "R"};
            if (gs_rng_below(&r, 4)) {
                int l0 = (int)gs_rng_below(&r, 3), lo = (int)gs_rng_below(&r, (uint64_t)s.ntasks);
                int hi = lo + 1 + (int)gs_rng_below(&r, (uint64_t)(s.ntasks - lo));
                snprintf(wt[0], sizeof wt[0], "%s%d", lv[l0], c);
                grp[0] = (gs_task_group){lo, hi, -1, wt[0], -1};
                s.groups = grp;
                s.ngroups = 1;
                if (hi - lo > 1 && gs_rng_below(&r, 2)) {
                    snprintf(wt[1], sizeof wt[1], "%s%d", lv[gs_rng_below(&r, (uint64_t)l0 + 1)],
                             c);
                    grp[1] = (gs_task_group){lo + 1, hi, 0, wt[1], -1};
                    s.ngroups = 2;
                }
            }
        }
        if (!strict && w.g.pinned_vc >= 0 && gs_rng_below(&r, 8) == 0) {
            s.pinned_cell = "PIN";
            snprintf(vc, sizeof vc, "v%d", w.g.pinned_vc);
            s.gpu_type = NULL;
            s.priority = 50;
        }
        if ((rc = gs_engine_add_job(w.e, &s, NULL, &d))) {
            snprintf(err, cap, "add: %s", d.msg);
            goto fail;
        }
    }
    if (!strict) {
        int nn = (int)gs_cluster_nnodes(w.c);
        for (int k = 0; k < 3; k++) {
            int node = (int)gs_rng_below(&r, (uint64_t)nn);
            gs_time t = (gs_time)gs_rng_below(&r, 400) * GS_SEC;
            gs_engine_add_node_event(w.e, t, node, 1);
            gs_engine_add_node_event(w.e, t + (gs_time)(1 + gs_rng_below(&r, 200)) * GS_SEC, node,
                                     0);
        }
        /* nodes marked bad: their jobs run on, doomed cells come and go (check() verifies) */
        for (int k = 0; k < 3; k++) {
            int node = (int)gs_rng_below(&r, (uint64_t)nn);
            gs_time t = (gs_time)gs_rng_below(&r, 400) * GS_SEC;
            gs_engine_add_node_bad_event(w.e, t, node, 1);
            gs_engine_add_node_bad_event(w.e, t + (gs_time)(1 + gs_rng_below(&r, 300)) * GS_SEC,
                                         node, 0);
        }
    }
    int steps = 0;
    while ((rc = gs_engine_step(w.e)) > 0) {
        if (gs_engine_check(w.e, &d)) {
            snprintf(err, cap, "t=%.0f: %s", gs_time_to_sec(gs_engine_now(w.e)), d.msg);
            goto fail;
        }
        if (check_one_chain(w.c, &w.g, w.e, err, cap) || check_groups(w.c, w.e, err, cap)) {
            char msg[256];
            snprintf(msg, sizeof msg, "t=%.0f: ", gs_time_to_sec(gs_engine_now(w.e)));
            size_t n = strlen(msg), m = strlen(err);
            if (n + m < cap) memmove(err + n, err, m + 1), memcpy(err, msg, n);
            goto fail;
        }
        if (++steps > 100000) {
            snprintf(err, cap, "does not end");
            goto fail;
        }
        if (!strict) continue;
        /* the first waiting guaranteed job of each VC must not fit its own free GPUs */
        for (int v = 0; v < w.g.nvc; v++) {
            char vc[8];
            snprintf(vc, sizeof vc, "v%d", v);
            const gs_job *first = NULL;
            for (size_t i = 0; i < gs_engine_njobs(w.e); i++) {
                const gs_job *j = gs_engine_job(w.e, i);
                if (!j->arrived || j->state != GS_JOB_PENDING || j->priority < 0 ||
                    strcmp(j->vc_name, vc))
                    continue;
                if (!first || j->priority > first->priority) first = j;
            }
            if (!first) continue;
            for (int c = 0; c < w.g.nchain; c++) {
                int t = gs_cluster_find_gpu_type(w.c, w.g.types[c]);
                if (first->gpu_type >= 0 && first->gpu_type != t) continue;
                int left = w.g.vc_gpus[v][c] - used_at(&w, v, c, first->priority);
                if (first->gpus <= left) {
                    if (getenv("HIVED_DEBUG")) {
                        fprintf(stderr, "%s\n", w.g.yaml);
                        for (size_t i = 0; i < gs_engine_njobs(w.e); i++) {
                            const gs_job *j = gs_engine_job(w.e, i);
                            fprintf(stderr,
                                    "job %lld vc %s prio %d tasks %dx%d type %d state %s arrived "
                                    "%d lazy %d pinned %d:",
                                    (long long)j->id, j->vc_name, j->priority, j->ntasks,
                                    j->gpus_per_task, j->gpu_type, gs_job_state_name(j->state),
                                    j->arrived, j->lazy_preemption, j->pinned_cell);
                            for (int k = 0; k < j->nalloc; k++)
                                fprintf(stderr, " %s:%d",
                                        gs_cluster_node(w.c, gs_cluster_gpu(w.c, j->alloc[k])->node)
                                            ->name,
                                        gs_cluster_gpu(w.c, j->alloc[k])->local);
                            fprintf(stderr, "\n");
                        }
                    }
                    snprintf(err, cap,
                             "t=%.0f: job %lld (prio %d, %d GPUs) waits although VC %s has %d of "
                             "its %s GPUs free at its priority",
                             gs_time_to_sec(gs_engine_now(w.e)), (long long)first->id,
                             first->priority, first->gpus, vc, left, w.g.types[c]);
                    goto fail;
                }
            }
        }
    }
    for (size_t i = 0; i < gs_engine_njobs(w.e); i++) {
        const gs_job *j = gs_engine_job(w.e, i);
        if (j->state != GS_JOB_DONE && j->state != GS_JOB_REJECTED) {
            if (getenv("HIVED_DEBUG")) {
                fprintf(stderr, "%s\njob %lld vc %s prio %d tasks %d:", w.g.yaml, (long long)j->id,
                        j->vc_name, j->priority, j->ntasks);
                for (int t = 0; t < j->ntasks; t++) fprintf(stderr, " %d", gs_job_task_gpus(j, t));
                for (int k = 0; k < j->ngroups; k++)
                    fprintf(stderr, " [%d,%d) within %d parent %d", j->groups[k].lo,
                            j->groups[k].hi, j->groups[k].within_type, j->groups[k].parent);
                fprintf(stderr, " type %d\n", j->gpu_type);
            }
            snprintf(err, cap, "job %lld ended %s (%s)", (long long)j->id,
                     gs_job_state_name(j->state), j->reason ? j->reason : "");
            goto fail;
        }
    }
    gs_engine_destroy(w.e);
    gs_cluster_destroy(w.c);
    return 0;
fail:
    gs_engine_destroy(w.e);
    gs_cluster_destroy(w.c);
    return -1;
}

static void t_properties(void)
{
    const char *only = getenv("HIVED_SEED"); /* debugging: run one seed */
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        if (only && (uint64_t)atoll(only) != seed) continue;
        char err[8192] = "";
        if (run_one(seed, 0, err, sizeof err))
            T_FAIL("seed %llu: %s", (unsigned long long)seed, err);
    }
}

static void t_vc_never_waits_on_others(void)
{
    const char *only = getenv("HIVED_SEED"); /* debugging: run one seed */
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        if (only && (uint64_t)atoll(only) != seed * 31 + 7) continue;
        char err[8192] = "";
        if (run_one(seed * 31 + 7, 1, err, sizeof err))
            T_FAIL("seed %llu: %s", (unsigned long long)seed * 31 + 7, err);
    }
}

static void t_reject_without_config(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("2x4", &c, &d));
    gs_engine *e = NULL;
    ASSERT_EQ(gs_engine_create(c, "hived", NULL, NULL, &e, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "needs a HiveD cluster config");
    gs_cluster_destroy(c);
}

/*
 * pinnedCellId on a leaf cell (one GPU), config built in code: one rack of
 * two nodes of two PCIe switches of two GPUs; n0's GPU 3 is pinned to v0,
 * which also owns one switch cell; v1 owns a node.  Pinned jobs of v0 run on
 * that GPU alone, one at a time; v0's other jobs and v1's never touch it; a
 * pinned job of 2 GPUs is rejected.
 */
static void t_pinned_leaf(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_create(&c));
    int gt = gs_cluster_gpu_type(c, "A");
    ASSERT(gt >= 0);
    int tA = gs_cluster_add_cell_type(c, "A", -1, 0, 0);
    int tS = gs_cluster_add_cell_type(c, "SW", tA, 2, 0);
    int tN = gs_cluster_add_cell_type(c, "N", tS, 2, 1);
    int tR = gs_cluster_add_cell_type(c, "R", tN, 2, 0);
    ASSERT(tA >= 0 && tS >= 0 && tN >= 0 && tR >= 0);
    int rack = gs_cluster_add_cell(c, 0, GS_CELL_RACK, "r0", tR), pinned = -1, rc;
    ASSERT(rack > 0);
    for (int n = 0; n < 2; n++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", n);
        int nd = gs_cluster_add_cell(c, rack, GS_CELL_NODE, name, tN);
        ASSERT(nd > 0);
        ASSERT_OK(gs_cluster_set_node(c, nd, 0, 0));
        for (int k = 0; k < 2; k++) {
            char sw[4];
            snprintf(sw, sizeof sw, "%d", k);
            int s = gs_cluster_add_cell(c, nd, GS_CELL_PCIE, sw, tS);
            ASSERT(s > 0);
            for (int g = 0; g < 2; g++) ASSERT(gs_cluster_add_gpu(c, s, 2 * k + g, gt) >= 0);
        }
        if (n == 0) pinned = (int)gs_cluster_ncells(c) - 1; /* the node's last GPU: index 3 */
    }
    ASSERT_OK(gs_cluster_set_pinned(c, pinned, "PIN-GPU"));
    gs_vc_cells c0 = {tR, tS, 1}, c1 = {tR, tN, 1};
    const char *pins[] = {"PIN-GPU"};
    gs_vc_def v0 = {"v0", &c0, 1, pins, 1, 3}, v1 = {"v1", &c1, 1, NULL, 0, 4};
    ASSERT(gs_cluster_add_vc(c, &v0) >= 0);
    ASSERT(gs_cluster_add_vc(c, &v1) >= 0);
    ASSERT_OK(gs_cluster_finish(c, &d));
    gs_engine *e = NULL;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    rc = gs_engine_create(c, "hived", &p, NULL, &e, &d);
    gs_params_release(&p);
    ASSERT_OK(rc);
    /* id, submit, duration, vc, tasks x gpus, pinned */
    static const struct {
        int id, submit, dur;
        const char *vc;
        int tasks, gpt;
        const char *pin;
    } js[] = {
        {1, 0, 100, "v0", 1, 1, "PIN-GPU"}, {2, 0, 100, "v0", 1, 1, "PIN-GPU"},
        {3, 0, 300, "v0", 1, 2, NULL},      {4, 0, 300, "v1", 1, 4, NULL},
        {5, 0, 100, "v0", 1, 2, "PIN-GPU"}, {6, 10, 100, "v0", 2, 1, NULL},
    };
    for (size_t i = 0; i < sizeof js / sizeof *js; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = js[i].id;
        s.submit = (gs_time)js[i].submit * GS_SEC;
        s.duration = (gs_time)js[i].dur * GS_SEC;
        s.vc = js[i].vc;
        s.priority = 50;
        s.ntasks = js[i].tasks;
        s.gpus_per_task = js[i].gpt;
        s.pinned_cell = js[i].pin;
        ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    }
    int pin_gpu = gs_cluster_cell(c, pinned)->gpu_lo, on_pin = 0;
    while ((rc = gs_engine_step(e)) > 0) {
        if (gs_engine_check(e, &d)) T_FAIL("t=%.0f: %s", gs_time_to_sec(gs_engine_now(e)), d.msg);
        int held = 0;
        for (size_t i = 0; i < gs_engine_njobs(e); i++) {
            const gs_job *j = gs_engine_job(e, i);
            if (j->state != GS_JOB_RUNNING) continue;
            for (int k = 0; k < j->nalloc; k++) {
                int mine = j->alloc[k] == pin_gpu;
                if (j->pinned_cell >= 0 && !mine)
                    T_FAIL("pinned job %lld on GPU %d", (long long)j->id, j->alloc[k]);
                if (j->pinned_cell < 0 && mine)
                    T_FAIL("job %lld (not pinned) on the pinned GPU", (long long)j->id);
                held += mine;
            }
        }
        on_pin += held;
    }
    ASSERT_EQ(rc, 0);
    ASSERT(on_pin > 0);
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->id == 5) {
            ASSERT_EQ(j->state, GS_JOB_REJECTED);
            ASSERT_CONTAINS(j->reason, "exceeds the 1 GPUs guaranteed");
        } else {
            ASSERT_EQ(j->state, GS_JOB_DONE);
        }
        if (j->id == 1) ASSERT_EQ(j->first_start, 0);
        if (j->id == 2) ASSERT_EQ(j->first_start, 100 * GS_SEC); /* one GPU: one at a time */
        if (j->id == 6) ASSERT_EQ(j->first_start, 300 * GS_SEC); /* v0's one switch cell */
    }
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/*
 * Grouped jobs on two racks of two 4-GPU nodes (two PCIe switches of two GPUs
 * each); v0 owns two nodes, v1 a rack.  HiveD's placement: members of
 * different sizes first-fit smallest first on the fullest node (job 1: 1 + 1
 * + 2 GPUs, one node, the 2-GPU task on one switch); a group within a rack
 * (job 2: 4 + 4 GPUs on one rack); a group within a switch (job 3: its two
 * 1-GPU tasks share a switch, its 2-GPU task takes the other); an
 * opportunistic group within a node waits for room (job 4); a group larger
 * than any cell of its type in the VC's view is rejected (job 5: within a
 * rack, v0 has only single nodes).
 */
static void t_grouped(void)
{
    static const char cfg[] =
        "physicalCluster:\n"
        "  cellTypes:\n"
        "    SW: {childCellType: A, childCellNumber: 2}\n"
        "    N: {childCellType: SW, childCellNumber: 2, isNodeLevel: true}\n"
        "    R: {childCellType: N, childCellNumber: 2}\n"
        "  physicalCells:\n"
        "  - {cellType: R, cellChildren: [{cellAddress: a0}, {cellAddress: a1}]}\n"
        "  - {cellType: R, cellChildren: [{cellAddress: b0}, {cellAddress: b1}]}\n"
        "virtualClusters:\n"
        "  v0: {virtualCells: [{cellType: R.N, cellNumber: 2}]}\n"
        "  v1: {virtualCells: [{cellType: R, cellNumber: 1}]}\n";
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "grouped.yaml");
    if (gs_cluster_parse_hived("grouped.yaml", cfg, strlen(cfg), &c, &d)) T_FAIL("%s", d.msg);
    gs_engine *e = NULL;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    int rc = gs_engine_create(c, "hived", &p, NULL, &e, &d);
    gs_params_release(&p);
    ASSERT_OK(rc);
    static const int32_t t1[] = {2, 1, 1}, t2[] = {4, 4}, t3[] = {1, 1, 2}, t4[] = {2, 1},
                         t5[] = {4, 4};
    static const gs_task_group g2[] = {{0, 2, -1, "R", -1}}, g3[] = {{0, 2, -1, "SW", -1}},
                               g4[] = {{0, 2, -1, "N", -1}}, g5[] = {{0, 2, -1, "R", -1}};
    static const struct {
        const char *vc;
        int prio, ntasks;
        const int32_t *tg;
        const gs_task_group *gr;
    } js[] = {{"v0", 100, 3, t1, NULL},
              {"v1", 100, 2, t2, g2},
              {"v0", 100, 3, t3, g3},
              {"v0", -1, 2, t4, g4},
              {"v0", 100, 2, t5, g5}};
    for (int i = 0; i < 5; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i + 1;
        s.submit = 0;
        s.duration = 100 * GS_SEC;
        s.vc = js[i].vc;
        s.priority = js[i].prio;
        s.ntasks = js[i].ntasks;
        s.task_gpus = js[i].tg;
        s.groups = js[i].gr;
        s.ngroups = js[i].gr ? 1 : 0;
        ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    }
    char err[512];
    while ((rc = gs_engine_step(e)) > 0) {
        if (gs_engine_check(e, &d)) T_FAIL("t=%.0f: %s", gs_time_to_sec(gs_engine_now(e)), d.msg);
        if (check_groups(c, e, err, sizeof err)) T_FAIL("%s", err);
        for (size_t i = 0; i < gs_engine_njobs(e); i++) {
            const gs_job *j = gs_engine_job(e, i);
            if (j->state != GS_JOB_RUNNING) continue;
            const int *a = j->alloc;
#define NODE_OF(g) gs_cluster_gpu(c, (g))->node
#define CELL_UP(g) gs_cluster_cell(c, gs_cluster_node(c, NODE_OF(g))->cell)->parent
            if (j->id == 1) { /* one node; the 2-GPU task (task 0) on one switch */
                for (int k = 1; k < 4; k++) ASSERT_EQ(NODE_OF(a[k]), NODE_OF(a[0]));
                ASSERT_EQ(a[0] / 2, a[1] / 2);
            }
            if (j->id == 2) ASSERT_EQ(CELL_UP(a[0]), CELL_UP(a[4]));
            if (j->id == 3) { /* tasks 0 and 1 on one switch, task 2 on the other */
                ASSERT_EQ(a[0] / 2, a[1] / 2);
                ASSERT_EQ(a[2] / 2, a[3] / 2);
                ASSERT_NE(a[0] / 2, a[2] / 2);
            }
            if (j->id == 4) {
                ASSERT_EQ(NODE_OF(a[0]), NODE_OF(a[2]));
                ASSERT_EQ(gs_engine_now(e), 100 * GS_SEC); /* the cluster was full until then */
            }
#undef NODE_OF
#undef CELL_UP
        }
    }
    ASSERT_EQ(rc, 0);
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->id == 5) {
            ASSERT_EQ(j->state, GS_JOB_REJECTED);
        } else {
            ASSERT_EQ(j->state, GS_JOB_DONE);
            ASSERT_EQ(j->first_start, j->id == 4 ? 100 * GS_SEC : 0);
        }
    }
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* ---- bad hardware and doomed cells (HiveD section 3.10) ---------------------------------- */

typedef struct hw {
    gs_cluster *c;
    gs_engine *e;
} hw;

static int hw_open_set(hw *w, const char *yaml, const char *key, const char *val);
static int hw_open(hw *w, const char *yaml)
{
    return hw_open_set(w, yaml, NULL, NULL);
}

/* With one more policy parameter (key = NULL: none). */
static int hw_open_set(hw *w, const char *yaml, const char *key, const char *val)
{
    gs_diag d;
    gs_diag_init(&d, "t.yaml");
    memset(w, 0, sizeof *w);
    if (gs_cluster_parse_hived("t.yaml", yaml, strlen(yaml), &w->c, &d)) {
        fprintf(stderr, "  config: %s (line %d)\n", d.msg, d.line);
        return t_failed_now = 1, -1;
    }
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    if (key) gs_params_set(&p, key, val);
    int rc = gs_engine_create(w->c, "hived", &p, NULL, &w->e, &d);
    gs_params_release(&p);
    if (rc) {
        fprintf(stderr, "  create: %s\n", d.msg);
        gs_cluster_destroy(w->c);
        return t_failed_now = 1, -1;
    }
    return 0;
}

static void hw_close(hw *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
}

static const gs_job *hw_job(hw *w, int64_t id, double submit, double dur, const char *vc,
                            int ntasks, int gpt)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(submit);
    s.duration = gs_time_from_sec(dur);
    s.vc = vc;
    s.priority = 10;
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.gang = 1;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(w->e, &s, &j, &d))
        fprintf(stderr, "  add %lld: %s\n", (long long)id, d.msg);
    return j;
}

/* run every instant before t (checking the engine and the policy after each) */
static void hw_until(hw *w, double t)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    while (gs_engine_next_event_time(w->e) < gs_time_from_sec(t) && gs_engine_step(w->e) > 0)
        if (gs_engine_check(w->e, &d))
            T_FAIL("t=%.0f: %s", gs_time_to_sec(gs_engine_now(w->e)), d.msg);
}

/* the policy's inspect answer for key, "?" when it has none */
static const char *hw_inspect(hw *w, const char *key)
{
    static char buf[128];
    if (gs_engine_inspect(w->e, key, buf, sizeof buf)) snprintf(buf, sizeof buf, "?");
    return buf;
}

static int node_of(hw *w, const gs_job *j)
{
    const int32_t *a = j->alloc ? j->alloc : j->last_alloc;
    return gs_cluster_gpu(w->c, a[0])->node;
}

/* two racks of two 4-GPU nodes; VC1 has two node cells, VC2 one rack */
static const char two_racks[] = "physicalCluster:\n"
                                "  cellTypes:\n"
                                "    N: {childCellType: G, childCellNumber: 4, isNodeLevel: true}\n"
                                "    R: {childCellType: N, childCellNumber: 2}\n"
                                "  physicalCells:\n"
                                "  - cellType: R\n"
                                "    cellChildren: [{cellAddress: r0n0}, {cellAddress: r0n1}]\n"
                                "  - cellType: R\n"
                                "    cellChildren: [{cellAddress: r1n0}, {cellAddress: r1n1}]\n"
                                "virtualClusters:\n"
                                "  VC1:\n"
                                "    virtualCells: [{cellType: R.N, cellNumber: 2}]\n"
                                "  VC2:\n"
                                "    virtualCells: [{cellType: R, cellNumber: 1}]\n";

/*
 * The issue's translated case: one node of a rack is bad; VC1's one-node job must take its
 * node from the partly bad rack so that the healthy rack stays whole for VC2's two-node
 * gang, which then starts at once (it waited for VC1's job to end, 1,010 s, when the
 * healthy rack went to VC1).  Whichever rack holds the bad node.
 */
static void t_bad_rack_goes_to_vc1(void)
{
    for (int bad_rack = 0; bad_rack < 2; bad_rack++) {
        hw w;
        if (hw_open(&w, two_racks)) return;
        char bad[8];
        snprintf(bad, sizeof bad, "r%dn1", bad_rack);
        int nb = gs_cluster_find_node(w.c, bad);
        ASSERT(nb >= 0);
        ASSERT_OK(gs_engine_add_node_bad_event(w.e, 0, nb, 1));
        const gs_job *a = hw_job(&w, 1, 10, 1000, "VC1", 1, 4);
        const gs_job *b = hw_job(&w, 2, 20, 100, "VC2", 2, 4);
        ASSERT(a && b);
        hw_until(&w, 25);
        ASSERT_EQ(a->state, GS_JOB_RUNNING);
        ASSERT_EQ(gs_cluster_node(w.c, node_of(&w, a))->rack,
                  gs_cluster_node(w.c, nb)->rack); /* the partly bad rack */
        ASSERT_EQ(b->state, GS_JOB_RUNNING);
        ASSERT_EQ(b->first_start, gs_time_from_sec(20));
        ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "0");
        ASSERT_STR(hw_inspect(&w, "vc.VC1.bound"), "1");
        ASSERT_STR(hw_inspect(&w, "vc.VC2.bound"), "1");
        /* VC1's other node cell can only be the bad node now: doomed */
        ASSERT_STR(hw_inspect(&w, "vc.VC1.free_cells"), "0");
        ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "1");
        ASSERT_STR(hw_inspect(&w, "vc.VC2.free_cells"), "0");
        char key[64];
        snprintf(key, sizeof key, "node.%s.state", bad);
        ASSERT_STR(hw_inspect(&w, key), "bad");
        ASSERT_STR(hw_inspect(&w, bad_rack ? "node.r0n0.state" : "node.r1n0.state"), "ok");
        hw_until(&w, 2000);
        ASSERT_EQ(a->end, gs_time_from_sec(1010));
        ASSERT_EQ(b->end, gs_time_from_sec(120));
        hw_close(&w);
    }
}

/*
 * HiveD's testBadNodes on a three-node rack: VC1 has two node cells, VC2 one.  A VC's free
 * cells are doomed (bound to bad nodes ahead of time) exactly when it has more free cells
 * than healthy free nodes are left, and released when healthy nodes return.
 */
static void t_doomed_cells(void)
{
    static const char yaml[] = "physicalCluster:\n"
                               "  cellTypes:\n"
                               "    N: {childCellType: G, childCellNumber: 4, isNodeLevel: true}\n"
                               "    R3: {childCellType: N, childCellNumber: 3}\n"
                               "  physicalCells:\n"
                               "  - cellType: R3\n"
                               "    cellChildren: [{cellAddress: n0}, {cellAddress: n1}, "
                               "{cellAddress: n2}]\n"
                               "virtualClusters:\n"
                               "  VC1:\n"
                               "    virtualCells: [{cellType: R3.N, cellNumber: 2}]\n"
                               "  VC2:\n"
                               "    virtualCells: [{cellType: R3.N, cellNumber: 1}]\n";
    hw w;
    if (hw_open(&w, yaml)) return;
    int n0 = gs_cluster_find_node(w.c, "n0"), n1 = gs_cluster_find_node(w.c, "n1"),
        n2 = gs_cluster_find_node(w.c, "n2");
    const gs_job *a = hw_job(&w, 42, 0, 70, "VC1", 1, 4);
    const gs_job *b = hw_job(&w, 43, 20, 10, "VC2", 1, 4);
    ASSERT(a && b);
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(10), n1, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(40), n2, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(50), n2, 0));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(60), n0, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(60), n2, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(80), n0, 0));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(80), n1, 0));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(80), n2, 0));
    hw_until(&w, 15);
    ASSERT_EQ(node_of(&w, a), n0);
    /* n1 bad: one healthy free node for one free cell in each VC: nothing doomed */
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "cell.n1.state"), "bad");
    hw_until(&w, 25);
    /* VC2 took the healthy n2: VC1's last free cell can only be n1 */
    ASSERT_EQ(node_of(&w, b), n2);
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "1");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.free_cells"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "cell.n1.state"), "doomed:VC1");
    ASSERT_STR(hw_inspect(&w, "cell.n2.state"), "bound:VC2");
    ASSERT_STR(hw_inspect(&w, "cell.n0.state"), "bound:VC1");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.used_gpus"), "4");
    hw_until(&w, 35);
    /* VC2's job ended: n2 is free again, VC1's doomed cell is released */
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.free_cells"), "1");
    ASSERT_STR(hw_inspect(&w, "cell.n1.state"), "bad");
    hw_until(&w, 45);
    /* n2 bad too: no healthy free node, both VCs' free cells are doomed */
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "1");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "1");
    hw_until(&w, 55);
    /* n2 good: one healthy node for one free cell each: nothing doomed */
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "0");
    hw_until(&w, 65);
    /* n0 (VC1's job runs on) and n2 bad: the job runs on; free cells doomed */
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "1");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "1");
    ASSERT_STR(hw_inspect(&w, "node.n0.state"), "bad");
    hw_until(&w, 75);
    /* the job ended on bad n0: VC1's released cell is doomed at once */
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->restarts, 0);
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "2");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "1");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.used_gpus"), "0");
    hw_until(&w, 85);
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.free_cells"), "2");
    ASSERT_STR(hw_inspect(&w, "cell.n1.state"), "free");
    ASSERT_STR(hw_inspect(&w, "cell.0.state"), "free"); /* the rack, merged again */
    hw_close(&w);
}

/*
 * Doomed cells seen from the VCs: r0n1, r1n0 and r1n1 are bad.  VC2's rack can only be a bad
 * one: it is doomed to the rack with the most healthy GPUs (r0), where its job then runs;
 * VC1's two node cells are doomed to r1's nodes, so its jobs wait rather than bind bad nodes,
 * and start as r1n1 is good again, one after the other.
 */
static void t_doomed_view(void)
{
    hw w;
    if (hw_open(&w, two_racks)) return;
    for (int k = 1; k < 4; k++) ASSERT_OK(gs_engine_add_node_bad_event(w.e, 0, k, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(w.e, gs_time_from_sec(100), 3, 0));
    const gs_job *a = hw_job(&w, 1, 0, 50, "VC1", 1, 4);
    const gs_job *b = hw_job(&w, 2, 10, 50, "VC1", 1, 4);
    const gs_job *c = hw_job(&w, 3, 5, 1000, "VC2", 1, 4);
    ASSERT(a && b && c);
    hw_until(&w, 2);
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "1");
    ASSERT_STR(hw_inspect(&w, "cell.0.state"), "doomed:VC2");
    ASSERT_STR(hw_inspect(&w, "cell.r0n0.state"), "doomed:VC2");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "2");
    ASSERT_STR(hw_inspect(&w, "cell.r1n0.state"), "doomed:VC1");
    ASSERT_STR(hw_inspect(&w, "cell.1.state"), "bad"); /* split into VC1's doomed nodes */
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    hw_until(&w, 20);
    /* VC2's job runs on the healthy node of its doomed rack, which is simply bound now */
    ASSERT_EQ(c->state, GS_JOB_RUNNING);
    ASSERT_EQ(node_of(&w, c), 0);
    ASSERT_STR(hw_inspect(&w, "vc.VC2.doomed"), "0");
    ASSERT_STR(hw_inspect(&w, "vc.VC2.bound"), "1");
    ASSERT_STR(hw_inspect(&w, "cell.0.state"), "bound:VC2");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "2");
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_STR(hw_inspect(&w, "job.3.state"), "guaranteed");
    ASSERT_STR(hw_inspect(&w, "job.1.state"), "waiting");
    ASSERT_STR(hw_inspect(&w, "job.9.state"), "?");
    ASSERT_STR(hw_inspect(&w, "vc.VC9.doomed"), "?");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.nothing"), "?");
    ASSERT_STR(hw_inspect(&w, "node.nowhere.state"), "?");
    ASSERT_STR(hw_inspect(&w, "cell.5.state"), "?");
    ASSERT_STR(hw_inspect(&w, "cell.r0n0/9.state"), "?");
    ASSERT_STR(hw_inspect(&w, "cell.r0n0/1.state"), "bound:VC2"); /* a GPU inside */
    ASSERT_STR(hw_inspect(&w, "bogus"), "?");
    hw_until(&w, 2000);
    /* r1n1 good at 100: one of VC1's cells is no longer doomed, its jobs use it in turn */
    ASSERT_EQ(a->first_start, gs_time_from_sec(100));
    ASSERT_EQ(node_of(&w, a), 3);
    ASSERT_EQ(b->first_start, gs_time_from_sec(150));
    ASSERT_STR(hw_inspect(&w, "job.1.state"), "ended");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.doomed"), "1");
    hw_close(&w);
}

/* job.<id>.state: guaranteed, opportunistic, downgraded (lazily preempted), overflow. */
static void t_inspect_job_states(void)
{
    hw w;
    if (hw_open_set(&w, two_racks, "overflow", "on")) return;
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 4;
    s.gang = 1;
    s.duration = gs_time_from_sec(1000);
    const gs_job *lazy = NULL, *opp = NULL, *high = NULL, *ovf = NULL;
    s.id = 1, s.vc = "VC1", s.priority = 10, s.lazy_preemption = 1;
    ASSERT_OK(gs_engine_add_job(w.e, &s, &lazy, NULL));
    s.id = 2, s.vc = "VC2", s.priority = -1, s.lazy_preemption = 0;
    s.duration = gs_time_from_sec(12);
    ASSERT_OK(gs_engine_add_job(w.e, &s, &opp, NULL));
    /* VC1's two node cells: a 2-node job of higher priority downgrades the lazy one */
    s.duration = gs_time_from_sec(1000);
    s.id = 3, s.vc = "VC1", s.priority = 100, s.ntasks = 2, s.submit = gs_time_from_sec(10);
    ASSERT_OK(gs_engine_add_job(w.e, &s, &high, NULL));
    /* VC1 is full: with overflow=on its next job runs opportunistically */
    s.id = 4, s.vc = "VC1", s.priority = 50, s.ntasks = 1, s.submit = gs_time_from_sec(20);
    ASSERT_OK(gs_engine_add_job(w.e, &s, &ovf, NULL));
    hw_until(&w, 5);
    ASSERT_STR(hw_inspect(&w, "job.1.state"), "guaranteed");
    ASSERT_STR(hw_inspect(&w, "job.2.state"), "opportunistic");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.used_gpus"), "4");
    hw_until(&w, 15);
    ASSERT_EQ(high->state, GS_JOB_RUNNING);
    ASSERT_EQ(lazy->state, GS_JOB_RUNNING);
    ASSERT_STR(hw_inspect(&w, "job.3.state"), "guaranteed");
    ASSERT_STR(hw_inspect(&w, "job.1.state"), "downgraded");
    ASSERT_STR(hw_inspect(&w, "vc.VC1.used_gpus"), "8");
    hw_until(&w, 25);
    /* the opportunistic job ended at 12: the overflow job took its GPUs */
    ASSERT_EQ(opp->state, GS_JOB_DONE);
    ASSERT_STR(hw_inspect(&w, "job.2.state"), "ended");
    ASSERT_EQ(ovf->state, GS_JOB_RUNNING);
    ASSERT_STR(hw_inspect(&w, "job.4.state"), "overflow");
    hw_close(&w);
}

static const test_case tests[] = {
    {"grouped", t_grouped},
    {"pinned_leaf", t_pinned_leaf},
    {"properties", t_properties},
    {"vc_never_waits_on_others", t_vc_never_waits_on_others},
    {"reject_without_config", t_reject_without_config},
    {"bad_rack_goes_to_vc1", t_bad_rack_goes_to_vc1},
    {"doomed_cells", t_doomed_cells},
    {"doomed_view", t_doomed_view},
    {"inspect_job_states", t_inspect_job_states},
};

TEST_MAIN(tests)
