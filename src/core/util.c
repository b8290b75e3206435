/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.c - string interning, an int64 -> slot map, and the most-free-node placement of the
 * Pollux artifact's baselines (gs_mostfree_place).
 * Invariants: strtab ids are dense and assigned in order of first intern;
 * both hash tables stay at most half full.
 */
#include <stdlib.h>
#include <string.h>

#include "gsched/cluster.h"
#include "gsched/error.h"
#include "gsched/placement.h"
#include "internal.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static uint64_t hash_i64(int64_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

void strtab_init(strtab *t)
{
    memset(t, 0, sizeof *t);
}

void strtab_release(strtab *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->str[i]);
    free(t->str);
    free(t->slots);
    strtab_init(t);
}

int strtab_find(const strtab *t, const char *s)
{
    if (!t->nslots) return -1;
    size_t m = t->nslots - 1;
    for (size_t i = hash_str(s) & m;; i = (i + 1) & m) {
        int32_t id = t->slots[i];
        if (id < 0) return -1;
        if (strcmp(t->str[id], s) == 0) return id;
    }
}

static int rehash(strtab *t, size_t nslots)
{
    int32_t *sl = malloc(nslots * sizeof *sl);
    if (!sl) return GS_ENOMEM;
    for (size_t i = 0; i < nslots; i++) sl[i] = -1;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = hash_str(t->str[id]) & (nslots - 1);
        while (sl[i] >= 0) i = (i + 1) & (nslots - 1);
        sl[i] = (int32_t)id;
    }
    free(t->slots);
    t->slots = sl;
    t->nslots = nslots;
    return 0;
}

int strtab_intern(strtab *t, const char *s)
{
    int id = strtab_find(t, s);
    if (id >= 0) return id;
    if ((t->n + 1) * 2 > t->nslots) {
        int rc = rehash(t, t->nslots ? t->nslots * 2 : 64);
        if (rc) return rc;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 16;
        char **ns = realloc(t->str, nc * sizeof *ns);
        if (!ns) return GS_ENOMEM;
        t->str = ns;
        t->cap = nc;
    }
    char *d = strdup(s);
    if (!d) return GS_ENOMEM;
    id = (int)t->n++;
    t->str[id] = d;
    size_t i = hash_str(s) & (t->nslots - 1);
    while (t->slots[i] >= 0) i = (i + 1) & (t->nslots - 1);
    t->slots[i] = id;
    return id;
}

void idmap_init(idmap *m)
{
    memset(m, 0, sizeof *m);
}

void idmap_release(idmap *m)
{
    free(m->keys);
    free(m->vals);
    idmap_init(m);
}

static int idmap_grow(idmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    int64_t *k = malloc(nc * sizeof *k);
    int32_t *v = malloc(nc * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < nc; i++) v[i] = -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->vals[i] < 0) continue;
        size_t j = hash_i64(m->keys[i]) & (nc - 1);
        while (v[j] >= 0) j = (j + 1) & (nc - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = nc;
    return 0;
}

int idmap_put(idmap *m, int64_t key, int32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        int rc = idmap_grow(m);
        if (rc) return rc;
    }
    size_t j = hash_i64(key) & (m->cap - 1);
    while (m->vals[j] >= 0) {
        if (m->keys[j] == key) return GS_EEXIST;
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = key;
    m->vals[j] = val;
    m->n++;
    return 0;
}

int32_t idmap_get(const idmap *m, int64_t key)
{
    if (!m->cap) return -1;
    size_t j = hash_i64(key) & (m->cap - 1);
    while (m->vals[j] >= 0) {
        if (m->keys[j] == key) return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}

void idmap_del(idmap *m, int64_t key)
{
    if (!m->cap) return;
    size_t mask = m->cap - 1, i = hash_i64(key) & mask;
    while (m->vals[i] >= 0 && m->keys[i] != key) i = (i + 1) & mask;
    if (m->vals[i] < 0) return;
    m->vals[i] = -1;
    m->n--;
    /* backward shift: move up every later entry of the run that may no longer be found */
    for (size_t j = (i + 1) & mask; m->vals[j] >= 0; j = (j + 1) & mask) {
        size_t k = hash_i64(m->keys[j]) & mask; /* its home */
        int stays = i < j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays) continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->vals[j] = -1;
        i = j;
    }
}

/* Free healthy GPUs of 'type' (-1 = any) on node nd. */
static int node_free(const gs_cluster *c, const gs_node *nd, int type)
{
    if (type < 0) return gs_cluster_cell(c, nd->cell)->free;
    int k = 0;
    for (int g = nd->gpu_lo; g < nd->gpu_hi; g++) {
        const gs_gpu *u = gs_cluster_gpu(c, g);
        k += u->owner < 0 && u->users == 0 && !u->down && u->type == type;
    }
    return k;
}

/* Take up to n - *k GPUs of node nd (free ones, lowest local index first), 'take' at most. */
static void mf_take(const gs_cluster *c, const gs_node *nd, int take, int gpu_type, int *out,
                    int *k)
{
    for (int g = nd->gpu_lo; g < nd->gpu_hi && take > 0; g++) {
        const gs_gpu *u = gs_cluster_gpu(c, g);
        if (u->owner >= 0 || u->users || u->down || (gpu_type >= 0 && u->type != gpu_type))
            continue;
        out[(*k)++] = g;
        take--;
    }
}

/* Untyped: the nodes under 'cell' whose free GPUs, in whole tasks, are exactly v, in index
 * order (subtrees whose largest node has fewer are skipped). */
static void mf_walk(const gs_cluster *c, int cell, int v, int n, int gpt, int *out, int *k)
{
    const gs_cell *x = gs_cluster_cell(c, cell);
    if (*k >= n || x->max_node_free < v) return;
    if (x->kind > GS_CELL_NODE) { /* skip it unless a node below has v..v+gpt-1 free */
        int m = 0;
        for (int r = 0; r < gpt && !m; r++) m = gs_cluster_nodes_free_eq(c, cell, v + r);
        if (!m) return;
    }
    if (x->node_hi - x->node_lo == 1 && gs_cluster_node(c, x->node_lo)->cell == cell) {
        const gs_node *nd = gs_cluster_node(c, x->node_lo);
        int f = x->free / gpt * gpt;
        if (!nd->down && f == v) mf_take(c, nd, f < n - *k ? f : n - *k, -1, out, k);
        return;
    }
    for (int i = 0; i < x->nkids && *k < n; i++)
        mf_walk(c, gs_cluster_cell_kid(c, cell, i), v, n, gpt, out, k);
}

int gs_mostfree_place(const gs_cluster *c, int n, int gpt, int gpu_type, int *out)
{
    int nnodes = (int)gs_cluster_nnodes(c), k = 0;
    if (gpt < 1 || n < gpt || n % gpt) return GS_ENOFIT;
    if (gpu_type < 0) {
        /* The nodes the scan below takes, in its order: by free GPUs in whole tasks, most
         * first, lowest index on ties (a node's count does not change while placing), found
         * value by value down the cell tree's largest-node counts instead of a scan of every
         * node per node taken. */
        for (int v = gs_cluster_cell(c, 0)->max_node_free / gpt * gpt; v >= gpt && k < n; v -= gpt)
            mf_walk(c, 0, v, n, gpt, out, &k);
        return k < n ? GS_ENOFIT : 0;
    }
    while (k < n) {
        int best = -1, bestfree = 0;
        for (int i = 0; i < nnodes; i++) {
            const gs_node *nd = gs_cluster_node(c, i);
            if (nd->down) continue;
            int used = 0; /* a node gives its GPUs once (then it has fewer than a task left) */
            for (int t = 0; t < k && !used; t += gpt) used = gs_cluster_gpu(c, out[t])->node == i;
            if (used) continue;
            int f = node_free(c, nd, gpu_type) / gpt * gpt;
            if (f > bestfree) best = i, bestfree = f;
        }
        if (best < 0) return GS_ENOFIT;
        const gs_node *nd = gs_cluster_node(c, best);
        mf_take(c, nd, bestfree < n - k ? bestfree : n - k, gpu_type, out, &k);
    }
    return 0;
}
