/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elastic_util.c - GPU choice for a target size and its execution through
 * the engine (elastic_util.h), shared by the elastic policies.
 *
 * Invariants: a choice only names GPUs that are free and healthy or held by
 * the job itself, and of the job's GPU type when it names one, n of them, grouped by task with each
 * task on one node; ties are broken by node and GPU index (no hash order); nothing here changes a
 * job except through gs_engine_start / gs_engine_rescale.
 */
#include <stdlib.h>
#include <string.h>

#include "elastic_util.h"

int eu_floor_pow2(int n)
{
    if (n < 1) return 0;
    int p = 1;
    while (p <= n / 2) p *= 2;
    return p;
}

int eu_healthy(const gs_cluster *c, int t)
{
    if (t < 0 || gs_cluster_ngpu_types(c) <= 1) return gs_cluster_cell(c, 0)->healthy;
    int k = 0;
    for (size_t g = 0; g < gs_cluster_ngpus(c); g++) {
        const gs_gpu *u = gs_cluster_gpu(c, (int)g);
        k += u->type == t && !u->down;
    }
    return k;
}

void eu_budget_init(eu_budget *b, const gs_cluster *c)
{
    b->all = gs_cluster_cell(c, 0)->healthy;
    size_t nt = gs_cluster_ngpu_types(c);
    b->ntypes = nt < EU_MAX_TYPES ? (int)nt : EU_MAX_TYPES;
    for (int t = 0; t < b->ntypes; t++) b->type[t] = eu_healthy(c, t);
}

int eu_budget_left(const eu_budget *b, const gs_job *j)
{
    int t = j->gpu_type;
    if (t < 0 || t >= b->ntypes || b->type[t] >= b->all) return b->all;
    return b->type[t];
}

void eu_budget_take(eu_budget *b, const gs_job *j, int k)
{
    b->all -= k;
    if (j->gpu_type >= 0 && j->gpu_type < b->ntypes) b->type[j->gpu_type] -= k;
}

/* 2: the job's own GPU; 1: free, healthy and of its type (type < 0: any); 0: neither. */
static int avail(const gs_cluster *c, int g, int slot, int type)
{
    const gs_gpu *u = gs_cluster_gpu(c, g);
    if (u->owner == slot && slot >= 0) return 2; /* its own */
    if (type >= 0 && u->type != type) return 0;
    return !u->down && u->owner < 0 && u->users == 0 && !gs_cluster_node(c, u->node)->down;
}

/* Take up to 'want' GPUs (a multiple of gpt) on node nd, its own first, then in index order
 * within [lo, hi); returns the count written. */
static int take_node(const gs_cluster *c, int slot, int type, int lo, int hi, int want, int *out)
{
    int k = 0;
    for (int pass = 2; pass >= 1 && k < want; pass--)
        for (int g = lo; g < hi && k < want; g++)
            if (avail(c, g, slot, type) == pass) out[k++] = g;
    return k;
}

/* Lowest node index >= from under cell x with v free GPUs (the cluster's histograms prune
 * every subtree without one), or -1. */
static int node_with_free(const gs_cluster *c, int x, int v, int from)
{
    const gs_cell *cell = gs_cluster_cell(c, x);
    if (cell->node_hi <= from || !gs_cluster_nodes_free_eq(c, x, v)) return -1;
    if (cell->kind == GS_CELL_NODE) return cell->node_lo;
    for (int k = 0; k < cell->nkids; k++) {
        int r = node_with_free(c, gs_cluster_cell_kid(c, x, k), v, from);
        if (r >= 0) return r;
    }
    return -1;
}

/*
 * eu_pick for a job that holds no GPU, one GPU per task, any of whose GPUs is of its type:
 * the same choice without visiting every GPU.  A node's 'a' is then its free count (cell
 * 'free': users == 0 and not down; a node marked down counts none), so the one-node choice -
 * the least 'a' that holds the job (an aligned free block for buddy), lowest node and block
 * first - is the first node found going up from n free GPUs, and the several-node one takes
 * the nodes by 'a' descending, index ascending.
 */
static int pick_free(const gs_cluster *c, const gs_job *j, int n, int buddy, int *out)
{
    int slot = j->slot, maxv = gs_cluster_cell(c, 0)->max_node_free;
    for (int v = n; v <= maxv; v++)
        for (int nd = node_with_free(c, 0, v, 0); nd >= 0; nd = node_with_free(c, 0, v, nd + 1)) {
            const gs_node *x = gs_cluster_node(c, nd);
            if (x->down) continue;
            int size = x->gpu_hi - x->gpu_lo;
            if (buddy && (n & (n - 1)) == 0 && n <= size) {
                for (int lo = 0; lo + n <= size; lo += n) {
                    int ok = 1;
                    for (int g = x->gpu_lo + lo; g < x->gpu_lo + lo + n && ok; g++)
                        ok = avail(c, g, slot, j->gpu_type) != 0;
                    if (!ok) continue;
                    for (int k = 0; k < n; k++) out[k] = x->gpu_lo + lo + k;
                    return 0;
                }
            } else {
                take_node(c, slot, j->gpu_type, x->gpu_lo, x->gpu_hi, n, out);
                return 0;
            }
        }
    int got = 0;
    for (int v = maxv; v >= 1 && got < n; v--)
        for (int nd = node_with_free(c, 0, v, 0); nd >= 0 && got < n;
             nd = node_with_free(c, 0, v, nd + 1)) {
            const gs_node *x = gs_cluster_node(c, nd);
            if (x->down) continue;
            got += take_node(c, slot, j->gpu_type, x->gpu_lo, x->gpu_hi, n - got < v ? n - got : v,
                             out + got);
        }
    return got == n ? 0 : GS_ENOFIT;
}

int eu_pick(gs_engine *e, const gs_job *j, int n, int buddy, int *out)
{
    gs_cluster *c = gs_engine_cluster(e);
    int gpt = j->gpus_per_task > 0 ? j->gpus_per_task : 1;
    if (n < 1 || n % gpt) return GS_EINVAL;
    if (j->state == GS_JOB_PENDING && gpt == 1 &&
        (j->gpu_type < 0 || (gs_cluster_ngpu_types(c) == 1 && j->gpu_type == 0)))
        return pick_free(c, j, n, buddy, out);
    int slot = j->slot;
    size_t nn = gs_cluster_nnodes(c);
    int *a = calloc(nn ? nn : 1, sizeof *a), *own = calloc(nn ? nn : 1, sizeof *own);
    int *order = malloc((nn ? nn : 1) * sizeof *order);
    if (!a || !own || !order) {
        free(a), free(own), free(order);
        return GS_ENOMEM;
    }
    int total = 0, rc = GS_ENOFIT, nown = 0;
    for (size_t i = 0; i < nn; i++) {
        const gs_node *nd = gs_cluster_node(c, (int)i);
        for (int g = nd->gpu_lo; g < nd->gpu_hi; g++) {
            int v = avail(c, g, slot, j->gpu_type);
            if (v) a[i]++;
            if (v == 2) own[i]++;
        }
        a[i] -= a[i] % gpt;
        total += a[i];
        nown += own[i];
    }
    if (total < n) goto out;
    int shrink = nown >= n && j->state == GS_JOB_RUNNING;

    /* one node: an aligned buddy block, else the best-fitting node */
    int best = -1, bestlo = -1, bscore_own = -1, bscore_a = 0;
    for (size_t i = 0; i < nn; i++) {
        const gs_node *nd = gs_cluster_node(c, (int)i);
        int size = nd->gpu_hi - nd->gpu_lo;
        if (a[i] < n || (shrink && own[i] < n)) continue;
        if (buddy && (n & (n - 1)) == 0 && n <= size) {
            for (int lo = 0; lo + n <= size; lo += n) {
                int ok = 1, o = 0;
                for (int g = nd->gpu_lo + lo; g < nd->gpu_lo + lo + n && ok; g++) {
                    int v = avail(c, g, slot, j->gpu_type);
                    ok = shrink ? v == 2 : v != 0;
                    o += v == 2;
                }
                if (!ok) continue;
                if (o > bscore_own || (o == bscore_own && a[i] < bscore_a)) {
                    best = (int)i, bestlo = nd->gpu_lo + lo, bscore_own = o, bscore_a = a[i];
                }
            }
        } else if (own[i] > bscore_own || (own[i] == bscore_own && a[i] < bscore_a)) {
            best = (int)i, bestlo = -1, bscore_own = own[i], bscore_a = a[i];
        }
    }
    if (best >= 0) {
        if (bestlo >= 0) {
            for (int k = 0; k < n; k++) out[k] = bestlo + k;
        } else {
            const gs_node *nd = gs_cluster_node(c, best);
            take_node(c, slot, j->gpu_type, nd->gpu_lo, nd->gpu_hi, n, out);
        }
        rc = 0;
        goto out;
    }
    /* several nodes: its own nodes first, then the emptiest (whole nodes first) */
    for (size_t i = 0; i < nn; i++) order[i] = (int)i;
    for (size_t i = 1; i < nn; i++) { /* insertion sort: own desc, a desc, index */
        int x = order[i];
        size_t k = i;
        while (k > 0) {
            int y = order[k - 1];
            int before = own[x] > own[y] || (own[x] == own[y] && a[x] > a[y]);
            if (!before) break;
            order[k] = y;
            k--;
        }
        order[k] = x;
    }
    int got = 0;
    for (size_t i = 0; i < nn && got < n; i++) {
        int nd_i = order[i];
        int want = n - got;
        int cap = shrink ? own[nd_i] - own[nd_i] % gpt : a[nd_i];
        if (want > cap) want = cap;
        if (want <= 0) continue;
        const gs_node *nd = gs_cluster_node(c, nd_i);
        got += take_node(c, slot, j->gpu_type, nd->gpu_lo, nd->gpu_hi, want, out + got);
    }
    rc = got == n ? 0 : GS_ENOFIT;
out:
    free(a), free(own), free(order);
    return rc;
}

int eu_apply(gs_engine *e, const gs_job *j, int n, int buddy, const char *reason)
{
    if (!j->arrived) return 1;
    int *g = NULL, rc;
    if (j->state == GS_JOB_PENDING) {
        if (n <= 0) return 0;
        if (!(g = malloc((size_t)n * sizeof *g))) return GS_ENOMEM;
        rc = eu_pick(e, j, n, buddy, g);
        if (!rc) rc = gs_engine_start(e, j, g, n);
    } else if (j->state == GS_JOB_RUNNING) {
        if (n == j->gpus) return 0;
        if (n > 0 && gs_engine_rescale_allowed_at(e, j) != gs_engine_now(e)) return 1;
        if (n > 0) {
            if (!(g = malloc((size_t)n * sizeof *g))) return GS_ENOMEM;
            rc = eu_pick(e, j, n, buddy, g);
            if (!rc) rc = gs_engine_rescale(e, j, g, n, GS_RESCALE_POLICY, reason);
        } else {
            rc = gs_engine_rescale(e, j, NULL, 0, GS_RESCALE_PREEMPT, reason);
        }
    } else {
        return 1;
    }
    free(g);
    if (rc == GS_ENOMEM) return rc;
    return rc ? 1 : 0;
}
