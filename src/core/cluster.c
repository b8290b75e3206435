/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cluster.c - cell tree, nodes, GPUs and their allocation state.
 *
 * Invariants (checked by gs_cluster_check()):
 *  - cells are in depth-first pre-order; GPU leaves are cells of kind GPU,
 *    numbered in pre-order, so each cell's GPUs are [gpu_lo, gpu_hi);
 *  - every GPU has exactly one node ancestor; nodes do not nest; cells below
 *    a node are PCIE/SOCKET/GPU, cells above are RACK/POOL/ROOT;
 *  - per cell: free = #GPUs with users == 0 and !down; healthy = #!down;
 *    idle_nodes = #nodes whose GPUs are all free; max_node_free = largest
 *    node 'free' in the subtree (for cells at or below a node: own 'free');
 *  - per cell above node level: mhist[v] = #children whose max_node_free
 *    is v (0..largest node), so that max_node_free follows a node losing
 *    free GPUs without rescanning the cell's children; nhist[v] = #nodes in
 *    its subtree whose free is v (a best-fit search finds the first node
 *    with v free GPUs without visiting the others);
 *  - changed[0..nchanged) lists, once each, the nodes whose free count or
 *    down flag changed since gs_cluster_clear_changed() (changed_on marks
 *    them), so that a policy indexing nodes by free GPUs rescans only those.
 */
#include <stdio.h> /* snprintf only: no I/O in the core */
#include <stdlib.h>
#include <string.h>

#include "gsched/cluster.h"

#define MAX_GPU_TYPES 32

struct gs_cluster {
    gs_cell *cells;
    size_t ncells, capcells;
    int32_t *kids; /* children of cell c: kids[cells[c].kids .. + nkids] */
    gs_node *nodes;
    size_t nnodes;
    gs_gpu *gpus;
    int32_t *gpu_cell; /* leaf cell of each GPU */
    size_t ngpus, capgpus;
    size_t capgpu_cell; /* capacity of gpu_cell (grows with gpus) */
    char *gpu_types[MAX_GPU_TYPES];
    size_t ngpu_types;
    /* build-time: current root-to-leaf path for the pre-order check */
    int32_t *path;
    size_t npath, cappath;
    int finished;
    /* node capacities recorded before finish (by cell) */
    int32_t *cell_cpus, *cell_mem;
    /* HiveD declarations */
    gs_cell_type *ctypes;
    size_t nctypes, capctypes;
    gs_vc_def *vcs;
    size_t nvcs, capvcs;
    char **pinned;    /* by cell; NULL when not pinned */
    int32_t *mrow;    /* by cell: row of mhist for cells above node level, else -1 */
    int32_t *mhist;   /* rows of mwidth counters (see the invariants) */
    int32_t *nhist;   /* the same rows: nodes of the subtree by their free GPUs */
    int32_t mwidth;   /* largest node's GPUs + 1 */
    int32_t *changed; /* nodes changed since gs_cluster_clear_changed() (see the invariants) */
    uint8_t *changed_on;
    size_t nchanged;
    /* computed by finish: per GPU type (index MAX_GPU_TYPES = any type) */
    int32_t type_max_node[MAX_GPU_TYPES + 1];
    int32_t type_total[MAX_GPU_TYPES + 1];
};

static const char *kind_names[] = {"gpu", "pcie", "socket", "node", "rack", "pool", "cluster"};

const char *gs_cell_kind_name(gs_cell_kind k)
{
    return (unsigned)k <= GS_CELL_ROOT ? kind_names[k] : "?";
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) ncap *= 2;
    void *np = realloc(*p, ncap * elem);
    if (!np) return GS_ENOMEM;
    *p = np;
    *cap = ncap;
    return 0;
}

int gs_cluster_create(gs_cluster **out)
{
    gs_cluster *c = calloc(1, sizeof *c);
    if (!c) return GS_ENOMEM;
    int rc = gs_cluster_add_cell(c, -1, GS_CELL_ROOT, "cluster", -1);
    if (rc < 0) {
        gs_cluster_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

void gs_cluster_destroy(gs_cluster *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->ncells; i++) {
        free((char *)c->cells[i].name);
        free(c->pinned[i]);
    }
    free(c->pinned);
    free(c->mrow);
    free(c->mhist);
    free(c->nhist);
    free(c->changed);
    free(c->changed_on);
    free(c->cells);
    free(c->kids);
    free(c->nodes);
    free(c->gpus);
    free(c->gpu_cell);
    for (size_t i = 0; i < c->ngpu_types; i++) free(c->gpu_types[i]);
    free(c->path);
    free(c->cell_cpus);
    free(c->cell_mem);
    for (size_t i = 0; i < c->nctypes; i++) free((char *)c->ctypes[i].name);
    free(c->ctypes);
    for (size_t i = 0; i < c->nvcs; i++) {
        free((char *)c->vcs[i].name);
        free(c->vcs[i].cells);
        for (size_t k = 0; k < c->vcs[i].npinned; k++) free((char *)c->vcs[i].pinned[k]);
        free(c->vcs[i].pinned);
    }
    free(c->vcs);
    free(c);
}

int gs_cluster_gpu_type(gs_cluster *c, const char *name)
{
    if (!name || !*name) name = "gpu";
    for (size_t i = 0; i < c->ngpu_types; i++)
        if (strcmp(c->gpu_types[i], name) == 0) return (int)i;
    if (c->ngpu_types == MAX_GPU_TYPES) return GS_ERANGE;
    char *s = strdup(name);
    if (!s) return GS_ENOMEM;
    c->gpu_types[c->ngpu_types] = s;
    return (int)c->ngpu_types++;
}

int gs_cluster_add_cell(gs_cluster *c, int parent, gs_cell_kind kind, const char *name,
                        int cell_type)
{
    if (c->finished) return GS_ESTATE;
    if (parent >= 0) {
        /* Pre-order: the parent must be on the current path. */
        while (c->npath && c->path[c->npath - 1] != parent) c->npath--;
        if (!c->npath) return GS_EINVAL;
        if (c->cells[parent].kind == GS_CELL_GPU) return GS_EINVAL;
    } else if (c->ncells) {
        return GS_EINVAL; /* only the root has no parent */
    }
    if (c->ncells == c->capcells) {
        size_t ncap = c->capcells ? c->capcells * 2 : 64;
        gs_cell *nc = realloc(c->cells, ncap * sizeof *nc);
        if (!nc) return GS_ENOMEM;
        c->cells = nc;
        int32_t *a = realloc(c->cell_cpus, ncap * sizeof *a);
        if (!a) return GS_ENOMEM;
        c->cell_cpus = a;
        int32_t *b = realloc(c->cell_mem, ncap * sizeof *b);
        if (!b) return GS_ENOMEM;
        c->cell_mem = b;
        char **pn = realloc(c->pinned, ncap * sizeof *pn);
        if (!pn) return GS_ENOMEM;
        c->pinned = pn;
        c->capcells = ncap;
    }
    int rc = grow((void **)&c->path, &c->cappath, c->npath + 1, sizeof *c->path);
    if (rc) return rc;
    char *nm = strdup(name ? name : "");
    if (!nm) return GS_ENOMEM;
    int idx = (int)c->ncells++;
    gs_cell *cell = &c->cells[idx];
    memset(cell, 0, sizeof *cell);
    cell->parent = parent;
    cell->kind = (int16_t)kind;
    cell->name = nm;
    cell->type = cell_type;
    cell->node_lo = cell->node_hi = -1;
    cell->gpu_lo = cell->gpu_hi = -1;
    cell->depth = parent >= 0 ? (int16_t)(c->cells[parent].depth + 1) : 0;
    c->cell_cpus[idx] = c->cell_mem[idx] = 0;
    c->pinned[idx] = NULL;
    c->path[c->npath++] = idx;
    return idx;
}

int gs_cluster_set_node(gs_cluster *c, int cell, int cpus, int mem_mb)
{
    if (c->finished || cell <= 0 || (size_t)cell >= c->ncells || cpus < 0 || mem_mb < 0)
        return GS_EINVAL;
    c->cells[cell].kind = GS_CELL_NODE;
    c->cell_cpus[cell] = cpus;
    c->cell_mem[cell] = mem_mb;
    return 0;
}

int gs_cluster_add_gpu(gs_cluster *c, int parent, int local_index, int gpu_type)
{
    if (gpu_type < 0 || (size_t)gpu_type >= c->ngpu_types) return GS_EINVAL;
    int cell = gs_cluster_add_cell(c, parent, GS_CELL_GPU, "", -1);
    if (cell < 0) return cell;
    int rc = grow((void **)&c->gpus, &c->capgpus, c->ngpus + 1, sizeof *c->gpus);
    if (rc) return rc;
    /* grow gpu_cell only when gpus grew: a realloc per GPU is quadratic with some allocators */
    rc = grow((void **)&c->gpu_cell, &c->capgpu_cell, c->capgpus, sizeof *c->gpu_cell);
    if (rc) return rc;
    size_t g = c->ngpus++;
    c->gpus[g] = (gs_gpu){.node = -1, .local = local_index, .type = gpu_type, .owner = -1};
    c->gpu_cell[g] = cell;
    c->cells[cell].gpu_lo = (int32_t)g;
    c->cells[cell].gpu_hi = (int32_t)g + 1;
    c->cells[cell].gpu_types = 1u << gpu_type;
    return (int)g;
}

int gs_cluster_finish(gs_cluster *c, gs_diag *diag)
{
    if (c->finished) return GS_ESTATE;
    size_t n = c->ncells;
    if (c->ngpus == 0) return gs_diag_set(diag, GS_EINVAL, 0, 0, "cluster has no GPUs");
    /* children lists */
    int32_t *cnt = calloc(n + 1, sizeof *cnt);
    c->kids = malloc((n ? n : 1) * sizeof *c->kids);
    if (!cnt || !c->kids) {
        free(cnt);
        return GS_ENOMEM;
    }
    for (size_t i = 1; i < n; i++) cnt[c->cells[i].parent]++;
    int32_t off = 0;
    for (size_t i = 0; i < n; i++) {
        c->cells[i].kids = off;
        c->cells[i].nkids = 0;
        off += cnt[i];
    }
    for (size_t i = 1; i < n; i++) {
        gs_cell *p = &c->cells[c->cells[i].parent];
        c->kids[p->kids + p->nkids++] = (int32_t)i;
    }
    free(cnt);
    /* GPU ranges and type masks, bottom-up (children come after parents) */
    for (size_t i = n; i-- > 0;) {
        gs_cell *cell = &c->cells[i];
        if (cell->kind == GS_CELL_GPU) continue;
        cell->gpu_lo = cell->gpu_hi = -1;
        cell->gpu_types = 0;
        for (int k = 0; k < cell->nkids; k++) {
            gs_cell *kid = &c->cells[c->kids[cell->kids + k]];
            if (kid->gpu_lo < 0) continue;
            if (cell->gpu_lo < 0 || kid->gpu_lo < cell->gpu_lo) cell->gpu_lo = kid->gpu_lo;
            if (kid->gpu_hi > cell->gpu_hi) cell->gpu_hi = kid->gpu_hi;
            cell->gpu_types |= kid->gpu_types;
        }
        if (cell->gpu_lo < 0)
            return gs_diag_set(diag, GS_EINVAL, 0, 0, "%s cell '%s' has no GPUs",
                               gs_cell_kind_name(cell->kind), cell->name);
    }
    /* nodes: pre-order over node cells */
    size_t nnodes = 0;
    for (size_t i = 0; i < n; i++) nnodes += c->cells[i].kind == GS_CELL_NODE;
    if (!nnodes) return gs_diag_set(diag, GS_EINVAL, 0, 0, "cluster has no nodes");
    c->nodes = calloc(nnodes, sizeof *c->nodes);
    if (!c->nodes) return GS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        gs_cell *cell = &c->cells[i];
        int below = 0; /* is there a node among the ancestors? */
        int anc_node = -1;
        for (int p = cell->parent; p >= 0; p = c->cells[p].parent)
            if (c->cells[p].kind == GS_CELL_NODE) {
                below = 1;
                anc_node = p;
                break;
            }
        if (cell->kind == GS_CELL_NODE) {
            if (below)
                return gs_diag_set(diag, GS_EINVAL, 0, 0, "node '%s' is inside node '%s'",
                                   cell->name, c->cells[anc_node].name);
            size_t ni = c->nnodes++;
            gs_node *nd = &c->nodes[ni];
            nd->cell = (int32_t)i;
            nd->gpu_lo = cell->gpu_lo;
            nd->gpu_hi = cell->gpu_hi;
            nd->name = cell->name;
            nd->cpus = nd->free_cpus = c->cell_cpus[i];
            nd->mem_mb = nd->free_mem_mb = c->cell_mem[i];
            nd->rack = 0;
            for (int p = cell->parent; p > 0; p = c->cells[p].parent)
                if (c->cells[p].kind >= GS_CELL_RACK) {
                    nd->rack = p;
                    break;
                }
            cell->node_lo = (int32_t)ni;
            cell->node_hi = (int32_t)ni + 1;
            for (int32_t g = cell->gpu_lo; g < cell->gpu_hi; g++) c->gpus[g].node = (int32_t)ni;
        } else if (below) {
            if (cell->kind > GS_CELL_SOCKET)
                return gs_diag_set(diag, GS_EINVAL, 0, 0, "%s cell '%s' is inside node '%s'",
                                   gs_cell_kind_name(cell->kind), cell->name,
                                   c->cells[anc_node].name);
        } else if (cell->kind < GS_CELL_NODE) {
            if (cell->kind == GS_CELL_GPU)
                return gs_diag_set(diag, GS_EINVAL, 0, 0, "GPU %d is not inside any node",
                                   cell->gpu_lo);
            return gs_diag_set(diag, GS_EINVAL, 0, 0, "%s cell '%s' is not inside any node",
                               gs_cell_kind_name(cell->kind), cell->name);
        }
    }
    /* node ranges for every cell; cells below a node take the node */
    for (size_t i = n; i-- > 0;) {
        gs_cell *cell = &c->cells[i];
        if (cell->kind == GS_CELL_NODE) continue;
        if (cell->kind < GS_CELL_NODE) {
            int32_t nd = c->gpus[cell->gpu_lo].node;
            cell->node_lo = nd;
            cell->node_hi = nd + 1;
            continue;
        }
        cell->node_lo = cell->node_hi = -1;
        for (int k = 0; k < cell->nkids; k++) {
            gs_cell *kid = &c->cells[c->kids[cell->kids + k]];
            if (cell->node_lo < 0 || kid->node_lo < cell->node_lo) cell->node_lo = kid->node_lo;
            if (kid->node_hi > cell->node_hi) cell->node_hi = kid->node_hi;
        }
    }
    /* aggregates: everything free and healthy */
    size_t rows = 0;
    c->mwidth = 1;
    for (size_t i = 0; i < n; i++) {
        const gs_cell *cell = &c->cells[i];
        rows += cell->kind > GS_CELL_NODE;
        if (cell->kind == GS_CELL_NODE && cell->gpu_hi - cell->gpu_lo + 1 > c->mwidth)
            c->mwidth = cell->gpu_hi - cell->gpu_lo + 1;
    }
    c->mrow = malloc((n ? n : 1) * sizeof *c->mrow);
    c->mhist = calloc((rows ? rows : 1) * (size_t)c->mwidth, sizeof *c->mhist);
    c->nhist = calloc((rows ? rows : 1) * (size_t)c->mwidth, sizeof *c->nhist);
    c->changed = malloc((c->nnodes ? c->nnodes : 1) * sizeof *c->changed);
    c->changed_on = calloc(c->nnodes ? c->nnodes : 1, 1);
    if (!c->mrow || !c->mhist || !c->nhist || !c->changed || !c->changed_on) return GS_ENOMEM;
    rows = 0;
    for (size_t i = 0; i < n; i++)
        c->mrow[i] = c->cells[i].kind > GS_CELL_NODE ? (int32_t)rows++ : -1;
    for (size_t i = n; i-- > 0;) {
        gs_cell *cell = &c->cells[i];
        cell->free = cell->healthy = cell->gpu_hi - cell->gpu_lo;
        if (cell->kind <= GS_CELL_NODE) {
            cell->max_node_free = cell->free;
            cell->idle_nodes = cell->kind == GS_CELL_NODE;
        } else {
            cell->max_node_free = 0;
            cell->idle_nodes = 0;
            for (int k = 0; k < cell->nkids; k++) {
                gs_cell *kid = &c->cells[c->kids[cell->kids + k]];
                if (kid->max_node_free > cell->max_node_free)
                    cell->max_node_free = kid->max_node_free;
                c->mhist[(size_t)c->mrow[i] * (size_t)c->mwidth + (size_t)kid->max_node_free]++;
                cell->idle_nodes += kid->idle_nodes;
                int32_t *nh = c->nhist + (size_t)c->mrow[i] * (size_t)c->mwidth;
                if (kid->kind == GS_CELL_NODE) {
                    nh[kid->free]++;
                } else if (kid->kind > GS_CELL_NODE) {
                    const int32_t *kh =
                        c->nhist + (size_t)c->mrow[c->kids[cell->kids + k]] * (size_t)c->mwidth;
                    for (int v = 0; v < c->mwidth; v++) nh[v] += kh[v];
                }
            }
        }
    }
    /* per-type capacity summaries */
    for (size_t i = 0; i < c->nnodes; i++) {
        const gs_node *nd = &c->nodes[i];
        int32_t per[MAX_GPU_TYPES] = {0};
        for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++) per[c->gpus[g].type]++;
        for (size_t t = 0; t < c->ngpu_types; t++) {
            if (per[t] > c->type_max_node[t]) c->type_max_node[t] = per[t];
            c->type_total[t] += per[t];
        }
        int32_t all = nd->gpu_hi - nd->gpu_lo;
        if (all > c->type_max_node[MAX_GPU_TYPES]) c->type_max_node[MAX_GPU_TYPES] = all;
        c->type_total[MAX_GPU_TYPES] += all;
    }
    free(c->path);
    c->path = NULL;
    c->npath = c->cappath = 0;
    c->finished = 1;
    return 0;
}

int gs_cluster_build_uniform(gs_cluster *c, int racks, int nodes_per_rack, int gpus_per_node,
                             const char *gpu_type, int cpus_per_node, int mem_mb_per_node)
{
    if (racks < 0 || nodes_per_rack < 1 || gpus_per_node < 1) return GS_EINVAL;
    if ((int64_t)(racks ? racks : 1) * nodes_per_rack * gpus_per_node > (1 << 24)) return GS_ERANGE;
    int t = gs_cluster_gpu_type(c, gpu_type);
    if (t < 0) return t;
    char name[32];
    int node_no = 0;
    for (int r = 0; r < (racks ? racks : 1); r++) {
        int parent = 0;
        if (racks) {
            snprintf(name, sizeof name, "r%d", r);
            parent = gs_cluster_add_cell(c, 0, GS_CELL_RACK, name, -1);
            if (parent < 0) return parent;
        }
        for (int k = 0; k < nodes_per_rack; k++) {
            snprintf(name, sizeof name, "n%d", node_no++);
            int nd = gs_cluster_add_cell(c, parent, GS_CELL_NODE, name, -1);
            if (nd < 0) return nd;
            int rc = gs_cluster_set_node(c, nd, cpus_per_node, mem_mb_per_node);
            if (rc) return rc;
            for (int g = 0; g < gpus_per_node; g++) {
                rc = gs_cluster_add_gpu(c, nd, g, t);
                if (rc < 0) return rc;
            }
        }
    }
    return 0;
}

/* ---- HiveD declarations --------------------------------------------------- */

int gs_cluster_add_cell_type(gs_cluster *c, const char *name, int child, int nchild, int is_node)
{
    if (!name || child < -1 || (child >= 0 && ((size_t)child >= c->nctypes || nchild < 1)))
        return GS_EINVAL;
    /* GPUs under one cell must fit the int32 field (callers cap them far lower) */
    if (child >= 0 && (int64_t)c->ctypes[child].gpus * nchild > INT32_MAX) return GS_ERANGE;
    int rc = grow((void **)&c->ctypes, &c->capctypes, c->nctypes + 1, sizeof *c->ctypes);
    if (rc) return rc;
    char *nm = strdup(name);
    if (!nm) return GS_ENOMEM;
    gs_cell_type *t = &c->ctypes[c->nctypes];
    t->name = nm;
    t->child = child;
    t->nchild = nchild;
    t->is_node = is_node;
    t->level = child < 0 ? 1 : c->ctypes[child].level + 1;
    t->gpus = child < 0 ? 1 : c->ctypes[child].gpus * nchild;
    return (int)c->nctypes++;
}

int gs_cluster_add_vc(gs_cluster *c, const gs_vc_def *vc)
{
    int rc = grow((void **)&c->vcs, &c->capvcs, c->nvcs + 1, sizeof *c->vcs);
    if (rc) return rc;
    gs_vc_def *d = &c->vcs[c->nvcs];
    memset(d, 0, sizeof *d);
    d->name = strdup(vc->name);
    d->cells = vc->ncells ? malloc(vc->ncells * sizeof *d->cells) : NULL;
    d->pinned = vc->npinned ? calloc(vc->npinned, sizeof *d->pinned) : NULL;
    if (!d->name || (vc->ncells && !d->cells) || (vc->npinned && !d->pinned)) {
        free((char *)d->name);
        free(d->cells);
        free(d->pinned);
        return GS_ENOMEM;
    }
    if (vc->ncells) memcpy(d->cells, vc->cells, vc->ncells * sizeof *d->cells);
    d->ncells = vc->ncells;
    for (size_t i = 0; i < vc->npinned; i++) {
        d->pinned[i] = strdup(vc->pinned[i]);
        if (!d->pinned[i]) {
            for (size_t k = 0; k < i; k++) free((char *)d->pinned[k]);
            free((char *)d->name);
            free(d->cells);
            free(d->pinned);
            return GS_ENOMEM;
        }
    }
    d->npinned = vc->npinned;
    d->gpus = vc->gpus;
    return (int)c->nvcs++;
}

int gs_cluster_set_pinned(gs_cluster *c, int cell, const char *id)
{
    if (cell < 0 || (size_t)cell >= c->ncells || !id) return GS_EINVAL;
    char *s = strdup(id);
    if (!s) return GS_ENOMEM;
    free(c->pinned[cell]);
    c->pinned[cell] = s;
    return 0;
}

size_t gs_cluster_ncell_types(const gs_cluster *c)
{
    return c->nctypes;
}
const gs_cell_type *gs_cluster_cell_type(const gs_cluster *c, int id)
{
    return id >= 0 && (size_t)id < c->nctypes ? &c->ctypes[id] : NULL;
}
int gs_cluster_find_cell_type(const gs_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->nctypes; i++)
        if (strcmp(c->ctypes[i].name, name) == 0) return (int)i;
    return -1;
}
size_t gs_cluster_nvcs(const gs_cluster *c)
{
    return c->nvcs;
}
const gs_vc_def *gs_cluster_vc(const gs_cluster *c, int idx)
{
    return idx >= 0 && (size_t)idx < c->nvcs ? &c->vcs[idx] : NULL;
}
int gs_cluster_find_vc(const gs_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->nvcs; i++)
        if (strcmp(c->vcs[i].name, name) == 0) return (int)i;
    return -1;
}
int gs_cluster_find_pinned(const gs_cluster *c, const char *id)
{
    for (size_t i = 0; i < c->ncells; i++)
        if (c->pinned[i] && strcmp(c->pinned[i], id) == 0) return (int)i;
    return -1;
}
const char *gs_cluster_cell_pinned(const gs_cluster *c, int cell)
{
    return cell >= 0 && (size_t)cell < c->ncells ? c->pinned[cell] : NULL;
}

/* ---- queries ---------------------------------------------------------------- */

size_t gs_cluster_ncells(const gs_cluster *c)
{
    return c->ncells;
}
size_t gs_cluster_nnodes(const gs_cluster *c)
{
    return c->nnodes;
}
size_t gs_cluster_ngpus(const gs_cluster *c)
{
    return c->ngpus;
}
size_t gs_cluster_ngpu_types(const gs_cluster *c)
{
    return c->ngpu_types;
}
const char *gs_cluster_gpu_type_name(const gs_cluster *c, int type)
{
    return type >= 0 && (size_t)type < c->ngpu_types ? c->gpu_types[type] : "any";
}
int gs_cluster_find_gpu_type(const gs_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->ngpu_types; i++)
        if (strcmp(c->gpu_types[i], name) == 0) return (int)i;
    return -1;
}
const gs_cell *gs_cluster_cell(const gs_cluster *c, int idx)
{
    return &c->cells[idx];
}
int gs_cluster_cell_kid(const gs_cluster *c, int cell, int i)
{
    return c->kids[c->cells[cell].kids + i];
}
int gs_cluster_nodes_free_eq(const gs_cluster *c, int cell, int v)
{
    const gs_cell *x = &c->cells[cell];
    if (v < 0 || v >= c->mwidth || x->kind < GS_CELL_NODE) return 0;
    if (x->kind == GS_CELL_NODE) return x->free == v;
    return c->nhist[(size_t)c->mrow[cell] * (size_t)c->mwidth + (size_t)v];
}
const gs_node *gs_cluster_node(const gs_cluster *c, int idx)
{
    return &c->nodes[idx];
}
const gs_gpu *gs_cluster_gpu(const gs_cluster *c, int idx)
{
    return &c->gpus[idx];
}
int gs_cluster_find_node(const gs_cluster *c, const char *name)
{
    return gs_cluster_find_node_next(c, name, -1);
}

int gs_cluster_find_node_next(const gs_cluster *c, const char *name, int after)
{
    for (size_t i = after < 0 ? 0 : (size_t)after + 1; i < c->nnodes; i++)
        if (strcmp(c->nodes[i].name, name) == 0) return (int)i;
    return -1;
}

int gs_cluster_max_node_gpus(const gs_cluster *c, int t)
{
    if (t >= (int)c->ngpu_types) return 0;
    return c->type_max_node[t < 0 ? MAX_GPU_TYPES : t];
}

int gs_cluster_type_gpus(const gs_cluster *c, int t)
{
    if (t >= (int)c->ngpu_types) return 0;
    return c->type_total[t < 0 ? MAX_GPU_TYPES : t];
}

int gs_cluster_allocated(const gs_cluster *c)
{
    /* allocated = GPUs in use; healthy free ones and down idle ones are not */
    int k = 0;
    for (size_t g = 0; g < c->ngpus; g++) k += c->gpus[g].users > 0;
    return k;
}

gs_cell_kind gs_cluster_spread(const gs_cluster *c, const int *gpus, int n)
{
    if (n <= 0) return GS_CELL_GPU;
    int lca = c->gpu_cell[gpus[0]];
    for (int i = 1; i < n; i++) {
        /* lca covers GPU g iff g lies in lca's range */
        while (!(c->cells[lca].gpu_lo <= gpus[i] && gpus[i] < c->cells[lca].gpu_hi))
            lca = c->cells[lca].parent;
    }
    return (gs_cell_kind)c->cells[lca].kind;
}

int gs_cluster_count_nodes(const gs_cluster *c, const int *gpus, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int nd = c->gpus[gpus[i]].node, seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = c->gpus[gpus[j]].node == nd;
        k += !seen;
    }
    return k;
}

/* ---- allocation state ------------------------------------------------------- */

/*
 * Propagate a change of node 'nd' from the node's parent to the root: free
 * changes by dfree, idle node count by didle, and the node's free went from
 * old_m to new_m (its max_node_free).
 */
static void prop_above_node(gs_cluster *c, int node_cell, int old_m, int new_m, int dfree,
                            int didle)
{
    int child = node_cell;
    for (int p = c->cells[child].parent; p >= 0; child = p, p = c->cells[p].parent) {
        gs_cell *P = &c->cells[p];
        P->free += dfree;
        P->idle_nodes += didle;
        int pold = P->max_node_free;
        if (new_m != old_m) {
            int32_t *hist = c->mhist + (size_t)c->mrow[p] * (size_t)c->mwidth;
            hist[old_m]--;
            hist[new_m]++;
            if (new_m > pold) {
                P->max_node_free = new_m;
            } else if (old_m == pold && !hist[old_m]) {
                /* the last child holding the maximum lost it */
                int m = old_m;
                while (m > 0 && !hist[m]) m--;
                P->max_node_free = m;
            }
        }
        if (P->max_node_free == pold && dfree == 0 && didle == 0) break;
        old_m = pold;
        new_m = P->max_node_free;
    }
}

static void note_changed(gs_cluster *c, int32_t node)
{
    if (!c->changed_on || c->changed_on[node]) return; /* before finish: nothing to note */
    c->changed_on[node] = 1;
    c->changed[c->nchanged++] = node;
}

size_t gs_cluster_changed_nodes(const gs_cluster *c, const int32_t **nodes)
{
    *nodes = c->changed;
    return c->nchanged;
}

void gs_cluster_clear_changed(gs_cluster *c)
{
    for (size_t i = 0; i < c->nchanged; i++) c->changed_on[c->changed[i]] = 0;
    c->nchanged = 0;
}

/* Change one GPU's contribution: dfree/dhealthy for its leaf and all ancestors. */
static void gpu_delta(gs_cluster *c, int g, int dfree, int dhealthy)
{
    if (!dfree && !dhealthy) return;
    if (dfree) note_changed(c, c->gpus[g].node);
    int node_cell = c->nodes[c->gpus[g].node].cell;
    gs_cell *nc = &c->cells[node_cell];
    int old_m = nc->free;
    int was_idle = nc->free == nc->gpu_hi - nc->gpu_lo;
    for (int x = c->gpu_cell[g]; x != node_cell; x = c->cells[x].parent) {
        c->cells[x].free += dfree;
        c->cells[x].max_node_free = c->cells[x].free;
        c->cells[x].healthy += dhealthy;
    }
    nc->free += dfree;
    nc->max_node_free = nc->free;
    nc->healthy += dhealthy;
    int is_idle = nc->free == nc->gpu_hi - nc->gpu_lo;
    nc->idle_nodes = is_idle;
    if (dfree)
        for (int p = nc->parent; p >= 0; p = c->cells[p].parent) {
            int32_t *nh = c->nhist + (size_t)c->mrow[p] * (size_t)c->mwidth;
            nh[old_m]--;
            nh[nc->free]++;
        }
    /* healthy counts above the node */
    if (dhealthy)
        for (int p = nc->parent; p >= 0; p = c->cells[p].parent) c->cells[p].healthy += dhealthy;
    prop_above_node(c, node_cell, old_m, nc->free, dfree, is_idle - was_idle);
}

static inline int gpu_is_free(const gs_gpu *g)
{
    return g->users == 0 && !g->down;
}

int gs_cluster_alloc(gs_cluster *c, const int *gpus, int n, int owner)
{
    if (owner < 0 || n <= 0) return GS_EINVAL;
    for (int i = 0; i < n; i++) {
        if (gpus[i] < 0 || (size_t)gpus[i] >= c->ngpus) return GS_EINVAL;
        if (!gpu_is_free(&c->gpus[gpus[i]])) return GS_ECONFLICT;
    }
    /* duplicates would pass the check above */
    for (int i = 0; i < n; i++) {
        gs_gpu *g = &c->gpus[gpus[i]];
        if (g->users) {
            /* duplicate in the list: undo what we did */
            for (int k = 0; k < i; k++) {
                c->gpus[gpus[k]].users = 0;
                c->gpus[gpus[k]].owner = -1;
                gpu_delta(c, gpus[k], +1, 0);
            }
            return GS_EINVAL;
        }
        g->users = 1;
        g->owner = owner;
        g->mem_used_mb = 0;
        gpu_delta(c, gpus[i], -1, 0);
    }
    return 0;
}

int gs_cluster_release(gs_cluster *c, const int *gpus, int n, int owner)
{
    for (int i = 0; i < n; i++) {
        if (gpus[i] < 0 || (size_t)gpus[i] >= c->ngpus) return GS_EINVAL;
        if (c->gpus[gpus[i]].owner != owner || c->gpus[gpus[i]].users != 1) return GS_ECONFLICT;
    }
    for (int i = 0; i < n; i++) {
        gs_gpu *g = &c->gpus[gpus[i]];
        g->users = 0;
        g->owner = -1;
        g->mem_used_mb = 0;
        if (!g->down) gpu_delta(c, gpus[i], +1, 0);
    }
    return 0;
}

int gs_cluster_node_charge(gs_cluster *c, int node, int cpus, int mem_mb)
{
    gs_node *nd = &c->nodes[node];
    if (nd->cpus && cpus > nd->free_cpus) return GS_ENOFIT;
    if (nd->mem_mb && mem_mb > nd->free_mem_mb) return GS_ENOFIT;
    if (nd->cpus) nd->free_cpus -= cpus;
    if (nd->mem_mb) nd->free_mem_mb -= mem_mb;
    return 0;
}

void gs_cluster_node_refund(gs_cluster *c, int node, int cpus, int mem_mb)
{
    gs_node *nd = &c->nodes[node];
    if (nd->cpus) nd->free_cpus += cpus;
    if (nd->mem_mb) nd->free_mem_mb += mem_mb;
}

int gs_cluster_share(gs_cluster *c, int gpu, int mem_mb, int gpu_mem_mb)
{
    gs_gpu *g = &c->gpus[gpu];
    if (g->users < 1 || g->down) return GS_ESTATE;
    if (gpu_mem_mb > 0 && g->mem_used_mb + mem_mb > gpu_mem_mb) return GS_ENOFIT;
    g->users++;
    g->mem_used_mb += mem_mb;
    return 0;
}

int gs_cluster_handover(gs_cluster *c, const int *gpus, int n, int from, int to, int to_mem_mb)
{
    if (to < 0) return GS_EINVAL;
    for (int i = 0; i < n; i++) {
        if (gpus[i] < 0 || (size_t)gpus[i] >= c->ngpus) return GS_EINVAL;
        if (c->gpus[gpus[i]].owner != from || c->gpus[gpus[i]].users < 2) return GS_ECONFLICT;
    }
    for (int i = 0; i < n; i++) {
        gs_gpu *g = &c->gpus[gpus[i]];
        g->owner = to;
        g->users--;
        g->mem_used_mb -= to_mem_mb;
        if (g->mem_used_mb < 0) g->mem_used_mb = 0;
    }
    return 0;
}

void gs_cluster_unshare(gs_cluster *c, int gpu, int mem_mb)
{
    gs_gpu *g = &c->gpus[gpu];
    if (g->users > 1) {
        g->users--;
        g->mem_used_mb -= mem_mb;
    }
}

int gs_cluster_set_gpu_down(gs_cluster *c, int gpu, int down)
{
    if (gpu < 0 || (size_t)gpu >= c->ngpus) return GS_EINVAL;
    gs_gpu *g = &c->gpus[gpu];
    down = !!down;
    if (g->down == down) return 0;
    int was_free = gpu_is_free(g);
    g->down = (int16_t)down;
    int is_free = gpu_is_free(g);
    gpu_delta(c, gpu, is_free - was_free, down ? -1 : +1);
    return 0;
}

int gs_cluster_set_node_down(gs_cluster *c, int node, int down)
{
    if (node < 0 || (size_t)node >= c->nnodes) return GS_EINVAL;
    gs_node *nd = &c->nodes[node];
    if (nd->down != !!down) note_changed(c, node);
    nd->down = !!down;
    for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++) gs_cluster_set_gpu_down(c, g, down);
    return 0;
}

int gs_cluster_check(const gs_cluster *c, gs_diag *diag)
{
    for (size_t i = c->ncells; i-- > 0;) {
        const gs_cell *cell = &c->cells[i];
        int fr = 0, he = 0;
        for (int32_t g = cell->gpu_lo; g < cell->gpu_hi; g++) {
            fr += gpu_is_free(&c->gpus[g]);
            he += !c->gpus[g].down;
        }
        int mnf = 0, idle = 0;
        if (cell->kind <= GS_CELL_NODE) {
            mnf = fr;
            idle = cell->kind == GS_CELL_NODE && fr == cell->gpu_hi - cell->gpu_lo;
        } else {
            for (int32_t nd = cell->node_lo; nd < cell->node_hi; nd++) {
                const gs_cell *ncell = &c->cells[c->nodes[nd].cell];
                if (ncell->free > mnf) mnf = ncell->free;
                idle += ncell->free == ncell->gpu_hi - ncell->gpu_lo;
            }
        }
        if (cell->kind > GS_CELL_NODE) {
            const int32_t *hist = c->mhist + (size_t)c->mrow[i] * (size_t)c->mwidth;
            int32_t *cnt = calloc((size_t)c->mwidth, sizeof *cnt);
            if (!cnt) return GS_ENOMEM;
            int bad = 0;
            for (int k = 0; k < cell->nkids; k++) {
                int v = c->cells[c->kids[cell->kids + k]].max_node_free;
                if (v < 0 || v >= c->mwidth)
                    bad = 1;
                else
                    cnt[v]++;
            }
            for (int v = 0; v < c->mwidth; v++) bad |= cnt[v] != hist[v];
            memset(cnt, 0, (size_t)c->mwidth * sizeof *cnt);
            for (int32_t nd = cell->node_lo; nd < cell->node_hi; nd++)
                cnt[c->cells[c->nodes[nd].cell].free]++;
            const int32_t *nh = c->nhist + (size_t)c->mrow[i] * (size_t)c->mwidth;
            for (int v = 0; v < c->mwidth; v++) bad |= cnt[v] != nh[v];
            free(cnt);
            if (bad)
                return gs_diag_set(
                    diag, GS_EINTERNAL, 0, 0,
                    "cell %zu '%s': histogram of its children's max_node_free or of its "
                    "nodes' free GPUs is off",
                    i, cell->name);
        }
        if (fr != cell->free || he != cell->healthy || mnf != cell->max_node_free ||
            idle != cell->idle_nodes)
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                               "cell %zu '%s': free %d/%d healthy %d/%d max_node_free %d/%d "
                               "idle_nodes %d/%d (stored/recounted)",
                               i, cell->name, cell->free, fr, cell->healthy, he,
                               cell->max_node_free, mnf, cell->idle_nodes, idle);
    }
    for (size_t g = 0; g < c->ngpus; g++) {
        const gs_gpu *gp = &c->gpus[g];
        if ((gp->users == 0) != (gp->owner < 0))
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "GPU %zu: users %d but owner %d", g,
                               gp->users, gp->owner);
    }
    return 0;
}
