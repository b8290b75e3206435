/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement.c - find GPUs for a gang without changing the cluster.
 *
 * Invariants: never writes to the cluster; the result, when returned, is a
 * list of ntasks*gpus_per_task distinct free healthy GPUs of the requested
 * type, each task's GPUs on one node whose CPU/memory can hold the tasks
 * placed on it; among equal choices the lowest index wins (determinism).
 * Subtrees are pruned with the per-cell aggregates (free, max_node_free,
 * idle_nodes), so the cost depends on the nodes that can help, not on the
 * cluster size.
 */
#include <stdio.h> /* snprintf only: no I/O in the core */
#include <stdlib.h>
#include <string.h>

#include "gsched/placement.h"

static const char *mode_names[] = {"count", "consolidate"};

const char *gs_place_mode_name(gs_place_mode m)
{
    return (unsigned)m <= GS_PLACE_CONSOLIDATE ? mode_names[m] : "?";
}

int gs_place_mode_parse(const char *s)
{
    for (int i = 0; i <= GS_PLACE_CONSOLIDATE; i++)
        if (strcmp(s, mode_names[i]) == 0) return i;
    return -1;
}

/* ---- per-node helpers ------------------------------------------------------ */

static inline int type_ok(const gs_cell *cell, int type)
{
    return type < 0 || (cell->gpu_types & (1u << type));
}

/* Free healthy GPUs of 'type' on node nd. */
static int node_free_of(const gs_cluster *c, int nd, int type)
{
    const gs_node *n = gs_cluster_node(c, nd);
    const gs_cell *cell = gs_cluster_cell(c, n->cell);
    if (type < 0 || cell->gpu_types == (1u << type)) return type_ok(cell, type) ? cell->free : 0;
    int k = 0;
    for (int32_t g = n->gpu_lo; g < n->gpu_hi; g++) {
        const gs_gpu *gp = gs_cluster_gpu(c, g);
        k += gp->users == 0 && !gp->down && gp->type == type;
    }
    return k;
}

/* How many tasks of the request node nd can take now (GPU, CPU, memory). */
static int node_task_cap(const gs_cluster *c, const gs_place_req *r, int nd, int free_gpus)
{
    const gs_node *n = gs_cluster_node(c, nd);
    if (n->down) return 0;
    int k = free_gpus / r->gpus_per_task;
    if (n->cpus && r->cpus_per_task > 0) {
        int kc = n->free_cpus / r->cpus_per_task;
        if (kc < k) k = kc;
    }
    if (n->mem_mb && r->mem_mb_per_task > 0) {
        int km = n->free_mem_mb / r->mem_mb_per_task;
        if (km < k) k = km;
    }
    return k;
}

/* Same, for an empty cluster (feasibility). */
static int node_task_cap_empty(const gs_cluster *c, const gs_place_req *r, int nd)
{
    const gs_node *n = gs_cluster_node(c, nd);
    int gp = 0;
    for (int32_t g = n->gpu_lo; g < n->gpu_hi; g++)
        gp += r->gpu_type < 0 || gs_cluster_gpu(c, g)->type == r->gpu_type;
    int k = gp / r->gpus_per_task;
    if (n->cpus && r->cpus_per_task > 0 && n->cpus / r->cpus_per_task < k)
        k = n->cpus / r->cpus_per_task;
    if (n->mem_mb && r->mem_mb_per_task > 0 && n->mem_mb / r->mem_mb_per_task < k)
        k = n->mem_mb / r->mem_mb_per_task;
    return k;
}

/*
 * Pick 'k' GPUs for one task on node nd, avoiding out[from..nout) - the GPUs
 * already picked on this node for the same request (every caller visits a
 * node once per request, so its picks are one run of 'out').  With
 * 'consolidate', choose the lowest intra-node cell (PCIe switch before
 * socket) that still has k usable GPUs, tightest fit first; then take its
 * lowest-index usable GPUs.  Writes to out[nout..nout+k).  Returns 0 or
 * GS_ENOFIT.  Linear in the node's GPUs and the run: a job of 10^5 tasks
 * used to cost (tasks x picks so far) comparisons.
 */
static int pick_in_node(const gs_cluster *c, int nd, int k, int type, int consolidate, int *out,
                        int from, int nout)
{
    const gs_node *n = gs_cluster_node(c, nd);
    int lo = n->gpu_lo, hi = n->gpu_hi;
    unsigned char small[256], *mark = small;
    if (hi - lo > (int)sizeof small && !(mark = malloc((size_t)(hi - lo)))) return GS_ENOMEM;
    memset(mark, 0, (size_t)(hi - lo));
    for (int i = from; i < nout; i++)
        if (out[i] >= lo && out[i] < hi) mark[out[i] - lo] = 1;
    const int base = lo;
#define picked(g) (mark[(g)-base])
    if (consolidate) {
        const gs_cell *ncell = gs_cluster_cell(c, n->cell);
        /* intra-node cells follow the node cell in pre-order, up to its last GPU leaf */
        int best = -1, best_kind = 99, best_avail = 1 << 30;
        size_t nc = gs_cluster_ncells(c);
        for (size_t x = (size_t)n->cell + 1; x < nc; x++) {
            const gs_cell *cell = gs_cluster_cell(c, (int)x);
            if (cell->gpu_lo >= ncell->gpu_hi || cell->depth <= ncell->depth) break;
            if (cell->kind == GS_CELL_GPU) continue;
            if (cell->free < k) continue;
            int avail = 0;
            for (int32_t g = cell->gpu_lo; g < cell->gpu_hi; g++) {
                const gs_gpu *gp = gs_cluster_gpu(c, g);
                avail +=
                    gp->users == 0 && !gp->down && (type < 0 || gp->type == type) && !picked(g);
            }
            if (avail < k) continue;
            if (cell->kind < best_kind || (cell->kind == best_kind && avail < best_avail)) {
                best = (int)x;
                best_kind = cell->kind;
                best_avail = avail;
            }
        }
        if (best >= 0) {
            lo = gs_cluster_cell(c, best)->gpu_lo;
            hi = gs_cluster_cell(c, best)->gpu_hi;
        }
    }
    int got = 0;
    for (int32_t g = lo; g < hi && got < k; g++) {
        const gs_gpu *gp = gs_cluster_gpu(c, g);
        if (gp->users == 0 && !gp->down && (type < 0 || gp->type == type) && !picked(g))
            out[nout + got++] = g;
    }
#undef picked
    if (mark != small) free(mark);
    return got == k ? 0 : GS_ENOFIT;
}

/* ---- node iteration with pruning --------------------------------------------- */

typedef struct visit {
    const gs_cluster *c;
    const gs_place_req *r;
    int min_free;  /* prune cells whose max_node_free is below this */
    int need_idle; /* prune cells without idle nodes */
    /* callback: return 1 to stop */
    int (*fn)(struct visit *v, int nd);
    void *ud;
} visit;

static int walk(visit *v, int cell)
{
    const gs_cell *x = gs_cluster_cell(v->c, cell);
    if (x->max_node_free < v->min_free || !type_ok(x, v->r->gpu_type)) return 0;
    if (v->need_idle && x->idle_nodes == 0) return 0;
    if (x->kind == GS_CELL_NODE) return v->fn(v, x->node_lo);
    if (x->kind < GS_CELL_NODE) { /* scope below a node: treat its node */
        return v->fn(v, x->node_lo);
    }
    for (int k = 0; k < x->nkids; k++)
        if (walk(v, gs_cluster_cell_kid(v->c, cell, k))) return 1;
    return 0;
}

/* ---- COUNT: lowest-index free GPUs, task by task ------------------------------ */

typedef struct fill_state {
    int *out;
    int nout, need_tasks;
    int consolidate;
    int err; /* GS_ENOMEM from pick_in_node */
} fill_state;

static int fill_cb(visit *v, int nd)
{
    fill_state *f = v->ud;
    int fr = node_free_of(v->c, nd, v->r->gpu_type);
    int cap = node_task_cap(v->c, v->r, nd, fr);
    int from = f->nout;
    while (cap-- > 0 && f->need_tasks > 0) {
        int rc = pick_in_node(v->c, nd, v->r->gpus_per_task, v->r->gpu_type, f->consolidate, f->out,
                              from, f->nout);
        if (rc == GS_ENOMEM) return f->err = rc, 1;
        if (rc) break;
        f->nout += v->r->gpus_per_task;
        f->need_tasks--;
    }
    return f->need_tasks == 0;
}

static int place_count(const gs_cluster *c, const gs_place_req *r, int *out)
{
    fill_state f = {out, 0, r->ntasks, 0, 0};
    visit v = {c, r, r->gpus_per_task, 0, fill_cb, &f};
    walk(&v, r->scope);
    if (f.err) return f.err;
    return f.need_tasks == 0 ? 0 : GS_ENOFIT;
}

/* ---- single node -------------------------------------------------------------- */

typedef struct one_state {
    int best, best_free;
    int fit_best;
} one_state;

static int one_cb(visit *v, int nd)
{
    one_state *o = v->ud;
    int fr = node_free_of(v->c, nd, v->r->gpu_type);
    if (node_task_cap(v->c, v->r, nd, fr) < v->r->ntasks) return 0;
    if (o->best < 0 || fr < o->best_free) {
        o->best = nd;
        o->best_free = fr;
    }
    /* first fit stops at once; best fit stops at a perfect fit */
    return !o->fit_best || fr == v->r->ntasks * v->r->gpus_per_task;
}

static int place_one_node(const gs_cluster *c, const gs_place_req *r, int scope, int *out)
{
    int g = r->ntasks * r->gpus_per_task;
    one_state o = {-1, 0, r->fit == GS_FIT_BEST};
    visit v = {c, r, g, 0, one_cb, &o};
    walk(&v, scope);
    if (o.best < 0) return GS_ENOFIT;
    int nout = 0;
    for (int t = 0; t < r->ntasks; t++) {
        int rc = pick_in_node(c, o.best, r->gpus_per_task, r->gpu_type, 1, out, 0, nout);
        if (rc) return rc == GS_ENOMEM ? rc : GS_ENOFIT;
        nout += r->gpus_per_task;
    }
    return 0;
}

/* ---- multi-node inside a domain ---------------------------------------------- */

typedef struct cand {
    int node, cap, free;
} cand;

typedef struct collect_state {
    cand *v;
    int n, cap;
    int only_idle;
    int err; /* GS_ENOMEM: the list is incomplete */
} collect_state;

static int collect_cb(visit *v, int nd)
{
    collect_state *s = v->ud;
    int fr = node_free_of(v->c, nd, v->r->gpu_type);
    const gs_node *n = gs_cluster_node(v->c, nd);
    if (s->only_idle && fr != n->gpu_hi - n->gpu_lo) return 0;
    int cap = node_task_cap(v->c, v->r, nd, fr);
    if (cap <= 0) return 0;
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 32;
        cand *nv = realloc(s->v, (size_t)nc * sizeof *nv);
        if (!nv) return s->err = GS_ENOMEM, 1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = (cand){nd, cap, fr};
    return 0;
}

static int cand_cmp_desc(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->cap != y->cap) return y->cap - x->cap;
    return x->node - y->node;
}

static int emit_tasks(const gs_cluster *c, const gs_place_req *r, const cand *nodes,
                      const int *tasks, int nn, int *out)
{
    int nout = 0;
    for (int i = 0; i < nn; i++) {
        int from = nout;
        for (int t = 0; t < tasks[i]; t++) {
            int rc =
                pick_in_node(c, nodes[i].node, r->gpus_per_task, r->gpu_type, 1, out, from, nout);
            if (rc) return rc == GS_ENOMEM ? rc : GS_ENOFIT;
            nout += r->gpus_per_task;
        }
    }
    return 0;
}

/*
 * STRICT multi-node inside 'dom': whole idle nodes in index order, then the
 * remaining tasks on one further node (first or best fit) - the YARN rule.
 */
static int place_strict_domain(const gs_cluster *c, const gs_place_req *r, int dom, int *out)
{
    collect_state s = {NULL, 0, 0, 1, 0};
    visit v = {c, r, 1, 1, collect_cb, &s};
    walk(&v, dom);
    int rc = GS_ENOMEM;
    int need = r->ntasks;
    cand *chosen = malloc(((size_t)s.n + 1) * sizeof *chosen);
    int *tasks = malloc(((size_t)s.n + 1) * sizeof *tasks);
    if (s.err || !chosen || !tasks) goto out;
    rc = GS_ENOFIT;
    int nn = 0;
    for (int i = 0; i < s.n && need > 0 && need >= s.v[i].cap; i++) {
        chosen[nn] = s.v[i];
        tasks[nn++] = s.v[i].cap;
        need -= s.v[i].cap;
    }
    if (need > 0) {
        /* one more node, not already chosen, that takes the remainder */
        collect_state all = {NULL, 0, 0, 0, 0};
        visit va = {c, r, need * r->gpus_per_task, 0, collect_cb, &all};
        walk(&va, dom);
        int pick = -1;
        /* chosen nodes by index: a scan of 'chosen' per candidate was quadratic */
        unsigned char *taken = all.err ? NULL : calloc(gs_cluster_nnodes(c) + 1, 1);
        if (!taken) {
            free(all.v);
            rc = GS_ENOMEM;
            goto out;
        }
        for (int k = 0; k < nn; k++) taken[chosen[k].node] = 1;
        for (int i = 0; i < all.n; i++) {
            if (taken[all.v[i].node] || all.v[i].cap < need) continue;
            if (pick < 0 || (r->fit == GS_FIT_BEST && all.v[i].free < all.v[pick].free)) pick = i;
            if (r->fit == GS_FIT_FIRST) break;
        }
        free(taken);
        if (pick >= 0) {
            chosen[nn] = all.v[pick];
            tasks[nn++] = need;
            need = 0;
        }
        free(all.v);
    }
    if (need == 0) rc = emit_tasks(c, r, chosen, tasks, nn, out);
out:
    free(chosen);
    free(tasks);
    free(s.v);
    return rc;
}

/* Fewest nodes inside 'dom': largest task capacity first. */
static int place_fewest_domain(const gs_cluster *c, const gs_place_req *r, int dom, int *out)
{
    collect_state s = {NULL, 0, 0, 0, 0};
    visit v = {c, r, r->gpus_per_task, 0, collect_cb, &s};
    walk(&v, dom);
    int total = 0;
    for (int i = 0; i < s.n; i++) total += s.v[i].cap;
    int rc = s.err ? s.err : GS_ENOFIT;
    if (!s.err && total >= r->ntasks) {
        qsort(s.v, (size_t)s.n, sizeof *s.v, cand_cmp_desc);
        int *tasks = malloc((size_t)s.n * sizeof *tasks);
        if (tasks) {
            int need = r->ntasks, nn = 0;
            for (; nn < s.n && need > 0; nn++) {
                tasks[nn] = s.v[nn].cap < need ? s.v[nn].cap : need;
                need -= tasks[nn];
            }
            /* the last node: prefer the tightest node that takes the remainder */
            if (nn > 0 && r->fit == GS_FIT_BEST) {
                int last = nn - 1, rem = tasks[last];
                for (int i = nn; i < s.n; i++)
                    if (s.v[i].cap >= rem && s.v[i].cap < s.v[last].cap) {
                        cand tmp = s.v[last];
                        s.v[last] = s.v[i];
                        s.v[i] = tmp;
                    }
            }
            rc = emit_tasks(c, r, s.v, tasks, nn, out);
            free(tasks);
        } else {
            rc = GS_ENOMEM;
        }
    }
    free(s.v);
    return rc;
}

/* Domains for multi-node placement: the rack-or-higher cells just above nodes. */
static int domain_of_node(const gs_cluster *c, int nd)
{
    return gs_cluster_node(c, nd)->rack;
}

typedef int (*domain_fn)(const gs_cluster *, const gs_place_req *, int, int *);

/* Try each rack-level domain under 'scope' in index order. */
static int place_in_domains(const gs_cluster *c, const gs_place_req *r, domain_fn fn, int *out)
{
    const gs_cell *sc = gs_cluster_cell(c, r->scope);
    if (sc->kind <= GS_CELL_NODE) return fn(c, r, r->scope, out);
    int g = r->ntasks * r->gpus_per_task;
    int last = -1;
    for (int32_t nd = sc->node_lo; nd < sc->node_hi; nd++) {
        int dom = domain_of_node(c, nd);
        if (dom == last) continue;
        last = dom;
        /* a domain may be an ancestor of scope (scope inside a rack) */
        const gs_cell *dc = gs_cluster_cell(c, dom);
        if (dc->gpu_lo < sc->gpu_lo || dc->gpu_hi > sc->gpu_hi) dom = r->scope, dc = sc;
        if (dc->free < g) {
            nd = dc->node_hi - 1;
            continue;
        }
        int rc = fn(c, r, dom, out);
        if (rc == 0 || rc == GS_ENOMEM) return rc;
        nd = dc->node_hi - 1;
    }
    return GS_ENOFIT;
}

int gs_place_find(const gs_cluster *c, const gs_place_req *r, int *out)
{
    if (r->ntasks < 1 || r->gpus_per_task < 1 || r->scope < 0 ||
        (size_t)r->scope >= gs_cluster_ncells(c))
        return GS_EINVAL;
    int g = r->ntasks * r->gpus_per_task;
    const gs_cell *sc = gs_cluster_cell(c, r->scope);
    if (sc->free < g || !type_ok(sc, r->gpu_type)) return GS_ENOFIT;
    if (r->mode == GS_PLACE_COUNT) return place_count(c, r, out);

    /* CONSOLIDATE: one node whenever the job fits one node */
    if (g <= sc->max_node_free) {
        int rc = place_one_node(c, r, r->scope, out);
        if (rc == 0 || rc == GS_ENOMEM) return rc;
    }
    int fits_one = g <= gs_cluster_max_node_gpus(c, r->gpu_type);
    switch (r->level) {
    case GS_LOCALITY_STRICT:
        if (fits_one) return GS_ENOFIT;
        return place_in_domains(c, r, place_strict_domain, out);
    case GS_LOCALITY_RACK: return place_in_domains(c, r, place_fewest_domain, out);
    case GS_LOCALITY_ANY: return place_fewest_domain(c, r, r->scope, out);
    }
    return GS_EINVAL;
}

int gs_place_feasible(const gs_cluster *c, const gs_place_req *r, char *why, size_t cap)
{
    if (r->ntasks < 1 || r->gpus_per_task < 1) {
        snprintf(why, cap, "a job needs at least one task of at least one GPU");
        return GS_ENEVER;
    }
    const char *tname = r->gpu_type >= 0 ? gs_cluster_gpu_type_name(c, r->gpu_type) : NULL;
    const gs_cell *sc = gs_cluster_cell(c, r->scope);
    long g = (long)r->ntasks * r->gpus_per_task;
    int maxnode = 0;
    long tasks_total = 0, best_dom = 0, dom_tasks = 0;
    int last_dom = -2;
    long total_gpus = 0;
    for (int32_t nd = sc->node_lo; nd < sc->node_hi; nd++) {
        const gs_node *n = gs_cluster_node(c, nd);
        int gp = 0;
        for (int32_t x = n->gpu_lo; x < n->gpu_hi; x++)
            gp += r->gpu_type < 0 || gs_cluster_gpu(c, x)->type == r->gpu_type;
        total_gpus += gp;
        if (gp > maxnode) maxnode = gp;
        int k = node_task_cap_empty(c, r, nd);
        tasks_total += k;
        int dom = sc->kind <= GS_CELL_NODE ? r->scope : domain_of_node(c, nd);
        if (dom != last_dom) {
            dom_tasks = 0;
            last_dom = dom;
        }
        dom_tasks += k;
        if (dom_tasks > best_dom) best_dom = dom_tasks;
    }
    if (total_gpus < g) {
        snprintf(why, cap, "needs %ld GPUs%s%s but the cluster has %ld", g,
                 tname ? " of type " : "", tname ? tname : "", total_gpus);
        return GS_ENEVER;
    }
    if (r->gpus_per_task > maxnode) {
        snprintf(why, cap, "a task needs %d GPUs on one node but the largest node has %d",
                 r->gpus_per_task, maxnode);
        return GS_ENEVER;
    }
    if (tasks_total < r->ntasks) {
        snprintf(why, cap,
                 "%d tasks of %d GPUs%s%s do not fit the cluster's nodes (room for %ld; "
                 "CPU/memory per node included)",
                 r->ntasks, r->gpus_per_task, tname ? " of type " : "", tname ? tname : "",
                 tasks_total);
        return GS_ENEVER;
    }
    if (r->mode == GS_PLACE_CONSOLIDATE && r->level != GS_LOCALITY_ANY && g > maxnode &&
        best_dom < r->ntasks) {
        snprintf(why, cap,
                 "needs %ld GPUs under one rack (consolidated placement) but the largest rack "
                 "has room for %ld tasks of %d GPUs",
                 g, best_dom, r->gpus_per_task);
        return GS_ENEVER;
    }
    return 0;
}
