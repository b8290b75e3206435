/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cluster_load.c - clusters from a shorthand (several GPU types as
 * comma-separated parts), a Tiresias cluster spec CSV (optionally typed, one
 * row per group of racks), Gavel's cluster_specs.json or a HiveD scheduler
 * config (physicalCluster + virtualClusters).
 *
 * HiveD configs are read as HiveD reads them (docs/cluster-format.md): null or
 * empty cellChildren is the full default hierarchy; a machine whose GPUs are in
 * several chains is one node cell per chain, all with its name; pinnedCellId may
 * sit on any cell, a GPU leaf included.  Invalid configs are refused with
 * HiveD's start-up message where it has one, at the entry's line and column.
 *
 * Invariants: a returned cluster is finished (gs_cluster_finish succeeded);
 * the parts of a shorthand or the rows of a Tiresias spec are built in order,
 * racks and nodes numbered on across them (r0.., n0..: unique names); a spec
 * holds at most 4M GPUs; every malformed shorthand is refused with its column;
 * HiveD cell types form a forest; a node name is used once per chain, and the
 * node cells of one name never share a GPU index; every VC assignment passed
 * HiveD's per-chain, per-level check (enough physical cells at every level).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config.h"
#include "yaml.h"

int64_t gs_parse_mem_mb(const char *s)
{
    if (!s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0)) return -1; /* !(v >= 0) also refuses "nan" */
    while (*end == ' ') end++;
    double mb;
    if (!*end || !strcmp(end, "M") || !strcmp(end, "Mi") || !strcmp(end, "MB") ||
        !strcmp(end, "MiB"))
        mb = v;
    else if (!strcmp(end, "G") || !strcmp(end, "Gi") || !strcmp(end, "GB") || !strcmp(end, "GiB"))
        mb = v * 1024;
    else if (!strcmp(end, "T") || !strcmp(end, "Ti") || !strcmp(end, "TB") || !strcmp(end, "TiB"))
        mb = v * 1024 * 1024;
    else if (!strcmp(end, "K") || !strcmp(end, "Ki") || !strcmp(end, "KB") || !strcmp(end, "KiB"))
        mb = v / 1024;
    else
        return -1;
    if (mb > 1e12) return -1;
    return (int64_t)(mb + 0.5);
}

/* ---- shorthand ---------------------------------------------------------------- */

/* Largest cluster any spec may describe (the core's limit is higher; keeps loads fast). */
#define MAX_SPEC_GPUS (1L << 22)

/*
 * Add 'racks' x 'nodes' x 'gpus' GPUs of 'type' under the root (racks 0 = nodes directly
 * under the root), numbering racks and nodes on from *rack_no / *node_no, so that the parts of
 * a cluster with several GPU types get distinct names (r0, r1, ...; n0, n1, ...).  The same
 * tree as gs_cluster_build_uniform for a single part.
 */
static int add_uniform(gs_cluster *c, long racks, long nodes, long gpus, const char *type, int cpus,
                       int mem_mb, long *rack_no, long *node_no)
{
    int t = gs_cluster_gpu_type(c, type);
    if (t < 0) return t;
    char name[32];
    for (long r = 0; r < (racks ? racks : 1); r++) {
        int parent = 0;
        if (racks) {
            snprintf(name, sizeof name, "r%ld", (*rack_no)++);
            parent = gs_cluster_add_cell(c, 0, GS_CELL_RACK, name, -1);
            if (parent < 0) return parent;
        }
        for (long k = 0; k < nodes; k++) {
            snprintf(name, sizeof name, "n%ld", (*node_no)++);
            int nd = gs_cluster_add_cell(c, parent, GS_CELL_NODE, name, -1);
            if (nd < 0) return nd;
            int rc = gs_cluster_set_node(c, nd, cpus, mem_mb);
            if (rc) return rc;
            for (long g = 0; g < gpus; g++)
                if ((rc = gs_cluster_add_gpu(c, nd, (int)g, t)) < 0) return rc;
        }
    }
    return 0;
}

#define SH_FORMS                                                                                \
    "forms: G, NxG, RxNxG (racks x nodes x GPUs per node), G/S (G GPUs on servers of S), each " \
    "optionally :TYPE; several types as comma-separated parts, e.g. 9x4:V100,9x4:P100"

/* One part of a shorthand: [R x] [N x] G, or G/S, then optionally :TYPE. */
typedef struct sh_part {
    long racks, nodes, gpus; /* racks 0 = no rack level */
    char type[64];           /* "" = untyped */
} sh_part;

static int sh_num(const char *spec, const char **p, long *out, gs_diag *d)
{
    if (!isdigit((unsigned char)**p))
        return gs_diag_set(d, GS_EPARSE, 0, (int)(*p - spec) + 1,
                           "cluster shorthand '%s': expected a number (" SH_FORMS ")", spec);
    errno = 0;
    char *end;
    long v = strtol(*p, &end, 10);
    if (errno || v < 1 || v > 1000000)
        return gs_diag_set(d, GS_ERANGE, 0, (int)(*p - spec) + 1,
                           "cluster shorthand '%s': dimensions must be between 1 and 1000000",
                           spec);
    *p = end;
    *out = v;
    return 0;
}

/* Parse one part starting at *p (up to ',' or the end); *p is left on the ',' or NUL. */
static int sh_part_parse(const char *spec, const char **p, sh_part *pt, gs_diag *d)
{
    long dims[3];
    int nd = 0, rc;
    memset(pt, 0, sizeof *pt);
    for (;;) {
        if (nd == 3)
            return gs_diag_set(
                d, GS_EPARSE, 0, (int)(*p - spec) + 1,
                "cluster shorthand '%s': at most 3 dimensions (racks x nodes x GPUs)", spec);
        if ((rc = sh_num(spec, p, &dims[nd++], d))) return rc;
        if (**p != 'x' && **p != 'X') break;
        (*p)++;
    }
    pt->racks = nd == 3 ? dims[0] : 0;
    pt->nodes = nd == 1 ? 1 : dims[nd - 2];
    pt->gpus = dims[nd - 1];
    if (**p == '/') {
        /* G/S: G GPUs on servers of S GPUs each */
        const char *at = *p;
        long per;
        (*p)++;
        if (nd != 1)
            return gs_diag_set(d, GS_EPARSE, 0, (int)(at - spec) + 1,
                               "cluster shorthand '%s': '/S' (GPUs per server) follows a plain GPU "
                               "count (36/4 = 9x4); NxG already gives the servers",
                               spec);
        if ((rc = sh_num(spec, p, &per, d))) return rc;
        if (dims[0] % per)
            return gs_diag_set(d, GS_EINVAL, 0, (int)(at - spec) + 2,
                               "cluster shorthand '%s': %ld GPUs are not a whole number of "
                               "%ld-GPU servers",
                               spec, dims[0], per);
        pt->nodes = dims[0] / per;
        pt->gpus = per;
    }
    if (**p == ':') {
        const char *t = ++(*p);
        size_t n = strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+");
        if (!n && (!*t || *t == ','))
            return gs_diag_set(d, GS_EPARSE, 0, (int)(t - spec) + 1,
                               "cluster shorthand '%s': empty GPU type after ':'", spec);
        if (t[n] == ':')
            return gs_diag_set(d, GS_EPARSE, 0, (int)(t + n - spec) + 1,
                               "cluster shorthand '%s': a second ':' after GPU type '%.*s' (one "
                               "type per part; parts with other types go after a ',', as in "
                               "4x8:V100,4x8:K80)",
                               spec, (int)n, t);
        if (!n || (t[n] && t[n] != ','))
            return gs_diag_set(d, GS_EPARSE, 0, (int)(t + n - spec) + 1,
                               "cluster shorthand '%s': unexpected '%c' in a GPU type (letters, "
                               "digits, '_', '-', '.', '+')",
                               spec, t[n]);
        if (n >= sizeof pt->type)
            return gs_diag_set(d, GS_ERANGE, 0, (int)(t - spec) + 1,
                               "cluster shorthand '%s': GPU type longer than %zu characters", spec,
                               sizeof pt->type - 1);
        memcpy(pt->type, t, n);
        pt->type[n] = 0;
        *p = t + n;
    }
    if (**p && **p != ',')
        return gs_diag_set(d, GS_EPARSE, 0, (int)(*p - spec) + 1,
                           "cluster shorthand '%s': unexpected '%c' (" SH_FORMS ")", spec, **p);
    return 0;
}

int gs_cluster_parse_shorthand(const char *spec, gs_cluster **out, gs_diag *d)
{
    if (!*spec) return gs_diag_set(d, GS_EPARSE, 0, 1, "empty cluster spec");
    sh_part *parts = NULL;
    size_t np = 0, cap = 0;
    long total = 0;
    int rc = 0;
    const char *p = spec;
    for (;;) {
        if (*p == ',' || !*p) {
            rc = gs_diag_set(d, GS_EPARSE, 0, (int)(p - spec) + 1,
                             "cluster shorthand '%s': empty part (" SH_FORMS ")", spec);
            goto out;
        }
        if (np == cap) {
            size_t nc = cap ? cap * 2 : 4;
            sh_part *n = realloc(parts, nc * sizeof *n);
            if (!n) {
                rc = GS_ENOMEM;
                goto out;
            }
            parts = n;
            cap = nc;
        }
        sh_part *pt = &parts[np++];
        if ((rc = sh_part_parse(spec, &p, pt, d))) goto out;
        total += (pt->racks ? pt->racks : 1) * pt->nodes * pt->gpus;
        if ((pt->racks ? pt->racks : 1) * pt->nodes * pt->gpus > MAX_SPEC_GPUS ||
            total > MAX_SPEC_GPUS) {
            rc = gs_diag_set(d, GS_ERANGE, 0, 0, "cluster '%s' is too large (max 4M GPUs)", spec);
            goto out;
        }
        if (!*p) break;
        p++; /* ',' */
    }
    gs_cluster *c;
    if ((rc = gs_cluster_create(&c))) goto out;
    long rack_no = 0, node_no = 0;
    for (size_t i = 0; i < np && !rc; i++) {
        rc = add_uniform(c, parts[i].racks, parts[i].nodes, parts[i].gpus, parts[i].type, 0, 0,
                         &rack_no, &node_no);
        if (rc == GS_ERANGE)
            rc = gs_diag_set(d, GS_ERANGE, 0, 0, "cluster '%s': too many GPU types (at most 32)",
                             spec);
    }
    if (!rc) rc = gs_cluster_finish(c, d);
    if (rc) {
        gs_cluster_destroy(c);
        goto out;
    }
    *out = c;
out:
    free(parts);
    return rc;
}

/* ---- Tiresias cluster spec CSV ----------------------------------------------------- */

static int csv_int(const gs_csv *r, size_t i, const char *what, long lo, long hi, long *out,
                   gs_diag *d)
{
    const char *s = r->f[i];
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (*end == ' ') end++;
    if (errno || end == s || *end)
        return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i], "%s: '%s' is not an integer", what,
                           s);
    if (v < lo || v > hi)
        return gs_diag_set(d, GS_ERANGE, r->rec_line, r->col[i], "%s must be between %ld and %ld",
                           what, lo, hi);
    *out = v;
    return 0;
}

int gs_cluster_parse_tiresias(const char *file, const char *buf, size_t len, gs_cluster **out,
                              gs_diag *d)
{
    static const char *cols[] = {"num_switch", "num_node_p_switch", "num_gpu_p_node",
                                 "num_cpu_p_node", "mem_p_node"};
    gs_csv r;
    gs_csv_init(&r, buf, len, 1);
    gs_cluster *c = NULL;
    int rc = gs_csv_next(&r, d);
    int idx[5];
    long val[5];
    if (rc <= 0) {
        gs_csv_release(&r);
        return rc < 0 ? rc : gs_diag_set(d, GS_EPARSE, 1, 1, "empty cluster spec");
    }
    for (int k = 0; k < 5; k++) {
        idx[k] = -1;
        for (size_t i = 0; i < r.nf; i++)
            if (!strcasecmp(r.f[i], cols[k])) idx[k] = (int)i;
        if (idx[k] < 0) {
            rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1,
                             "Tiresias cluster spec: missing column '%s'", cols[k]);
            goto out;
        }
    }
    /* gsched's extension: an optional gpu_type column, and one row per group of racks */
    int ctype = -1;
    for (size_t i = 0; i < r.nf; i++)
        if (!strcasecmp(r.f[i], "gpu_type")) ctype = (int)i;
    size_t ncols = r.nf;
    if ((rc = gs_cluster_create(&c))) goto out;
    static const long hi[5] = {100000, 100000, 1024, 1 << 20, 1 << 30};
    static const long lo[5] = {1, 1, 1, 0, 0};
    long total = 0, rack_no = 0, node_no = 0;
    int rows = 0;
    while ((rc = gs_csv_next(&r, d)) > 0) {
        if (r.nf != ncols) {
            rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1, "expected %zu fields, found %zu", ncols,
                             r.nf);
            goto out;
        }
        for (int k = 0; k < 5; k++)
            if ((rc = csv_int(&r, (size_t)idx[k], cols[k], lo[k], hi[k], &val[k], d))) goto out;
        total += val[0] * val[1] * val[2];
        if (total > MAX_SPEC_GPUS) {
            rc = gs_diag_set(d, GS_ERANGE, r.rec_line, 1, "cluster too large (max 4M GPUs)");
            goto out;
        }
        const char *type = ctype >= 0 ? r.f[ctype] : NULL;
        if (type && *type &&
            strspn(type, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+") !=
                strlen(type)) {
            rc = gs_diag_set(d, GS_EPARSE, r.rec_line, r.col[ctype],
                             "gpu_type: '%s' is not a GPU type name (letters, digits, '_', '-', "
                             "'.', '+')",
                             type);
            goto out;
        }
        /* Tiresias' switches are ToR switches above nodes: racks in our model.
         * mem_p_node is in GB. */
        rc = add_uniform(c, val[0], val[1], val[2], type, (int)val[3], (int)(val[4] * 1024),
                         &rack_no, &node_no);
        if (rc == GS_ERANGE)
            rc = gs_diag_set(d, GS_ERANGE, r.rec_line, ctype >= 0 ? r.col[ctype] : 1,
                             "too many GPU types (at most 32)");
        if (rc) goto out;
        rows++;
    }
    if (rc < 0) goto out;
    if (!rows) {
        rc = gs_diag_set(d, GS_EPARSE, r.line, 1, "cluster spec has no data row");
        goto out;
    }
    if ((rc = gs_cluster_finish(c, d))) goto out;
    *out = c;
    c = NULL;
out:
    gs_cluster_destroy(c);
    gs_csv_release(&r);
    (void)file;
    return rc;
}

/* ---- HiveD config ----------------------------------------------------------------------- */

typedef struct hv_type {
    const char *name;     /* borrowed from the YAML document */
    struct fy_node *node; /* its definition (NULL for leaf types) */
    int child;            /* index into types, -1 for leaves */
    int nchild;
    int is_node;
    int id;           /* cluster cell-type id, -1 until registered */
    int state;        /* 0 new, 1 visiting, 2 done */
    int node_below;   /* a node-level type is this type or a descendant */
    int cpus, mem_mb; /* per leaf, from skuTypes */
    int levels;       /* 1 for leaves */
    int64_t gpus;     /* GPUs under one cell of this type */
    int64_t cells;    /* cells in the subtree of one cell of this type (itself included) */
} hv_type;

/* Limits that keep a config from describing a cluster nobody can build (as the shorthand). */
#define HV_MAX_LEVELS 32
#define HV_MAX_GPUS   ((int64_t)1 << 22)
#define HV_MAX_CELLS  ((int64_t)1 << 23)

typedef struct hv {
    gs_cluster *c;
    gs_diag *d;
    hv_type *t;
    size_t nt;
    int chain;        /* type index of the top-level cell being built (its chain) */
    int leaf_in_node; /* GPU counter inside the current node */
    char **pinned;    /* pinned ids seen, for uniqueness */
    size_t npinned;
    struct hv_node *nodes; /* node cells built, for the name checks */
    size_t nnodes, capnodes;
} hv;

/* A node cell: a machine has one per chain it has GPUs in, all with its name. */
typedef struct hv_node {
    const char *name;
    struct fy_node *at; /* its cellAddress */
    size_t order;       /* in file order */
    int chain;
    int32_t g0, g1; /* its GPUs */
} hv_node;

static int by_node_chain(const void *a, const void *b)
{
    const hv_node *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->chain != y->chain) return x->chain < y->chain ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* A GPU of a machine, for the check that one machine's chains do not claim one GPU twice. */
typedef struct hv_gpu {
    int32_t local;
    size_t node; /* index into the sorted node list */
} hv_gpu;

static int by_gpu_local(const void *a, const void *b)
{
    const hv_gpu *x = a, *y = b;
    if (x->local != y->local) return x->local < y->local ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int hv_find(const hv *h, const char *name)
{
    for (size_t i = 0; i < h->nt; i++)
        if (!strcmp(h->t[i].name, name)) return (int)i;
    return -1;
}

static int hv_add_type(hv *h, const char *name, struct fy_node *def)
{
    hv_type *nt = realloc(h->t, (h->nt + 1) * sizeof *nt);
    if (!nt) return GS_ENOMEM;
    h->t = nt;
    h->t[h->nt] = (hv_type){.name = name, .node = def, .child = -1, .id = -1};
    return (int)h->nt++;
}

/* Register type i (children first) with the cluster; 'depth' bounds the recursion. */
static int hv_register(hv *h, int i, int depth)
{
    hv_type *t = &h->t[i];
    if (t->state == 2) return 0;
    if (t->state == 1)
        return gs_yaml_err(h->d, t->node, GS_EPARSE, "cellTypes: '%s' is part of a cycle", t->name);
    if (depth > HV_MAX_LEVELS)
        return gs_yaml_err(h->d, t->node, GS_ERANGE,
                           "cellTypes: more than %d levels of cell types below '%s'", HV_MAX_LEVELS,
                           t->name);
    t->state = 1;
    t->levels = 1;
    t->gpus = t->cells = 1;
    if (t->child >= 0) {
        int rc = hv_register(h, t->child, depth + 1);
        if (rc) return rc;
        t = &h->t[i];
        const hv_type *ch = &h->t[t->child];
        t->levels = ch->levels + 1;
        t->gpus = ch->gpus * t->nchild;
        t->cells = 1 + ch->cells * t->nchild;
        if (t->levels > HV_MAX_LEVELS)
            return gs_yaml_err(h->d, t->node, GS_ERANGE, "cellTypes: '%s' has more than %d levels",
                               t->name, HV_MAX_LEVELS);
        if (t->gpus > HV_MAX_GPUS || t->cells > HV_MAX_CELLS)
            return gs_yaml_err(h->d, t->node, GS_ERANGE,
                               "cellTypes: a '%s' cell would have %lld GPUs in %lld cells (at most "
                               "%lld GPUs and %lld cells)",
                               t->name, (long long)t->gpus, (long long)t->cells,
                               (long long)HV_MAX_GPUS, (long long)HV_MAX_CELLS);
    }
    int cid = t->child >= 0 ? h->t[t->child].id : -1;
    int id =
        gs_cluster_add_cell_type(h->c, t->name, cid, t->child >= 0 ? t->nchild : 0, t->is_node);
    if (id < 0) return gs_yaml_err(h->d, t->node, id, "cellTypes: cannot add '%s'", t->name);
    t->id = id;
    t->node_below = t->is_node || (t->child >= 0 && h->t[t->child].node_below);
    if (t->child >= 0 && t->is_node && h->t[t->child].node_below)
        return gs_yaml_err(h->d, t->node, GS_EPARSE,
                           "cellTypes: '%s' is node-level but contains node-level cells", t->name);
    t->state = 2;
    return 0;
}

static int hv_parse_types(hv *h, struct fy_node *pc)
{
    struct fy_node *ct = gs_yaml_get(pc, "cellTypes");
    if (!ct) return gs_yaml_err(h->d, pc, GS_EPARSE, "physicalCluster: missing 'cellTypes'");
    if (!fy_node_is_mapping(ct))
        return gs_yaml_err(h->d, ct, GS_EPARSE, "cellTypes must be a mapping of type names");
    static const char *const keys[] = {"childCellType", "childCellNumber", "isNodeLevel", NULL};
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(ct, &it))) {
        const char *name = gs_yaml_str(fy_node_pair_key(p));
        struct fy_node *def = fy_node_pair_value(p);
        if (!name || !*name)
            return gs_yaml_err(h->d, fy_node_pair_key(p), GS_EPARSE, "cellTypes: bad type name");
        if (strchr(name, '.'))
            return gs_yaml_err(h->d, fy_node_pair_key(p), GS_EPARSE,
                               "cellTypes: type name '%s' must not contain '.'", name);
        int rc = gs_yaml_check_keys(def, keys, "a cell type", h->d);
        if (rc) return rc;
        int i = hv_add_type(h, name, def);
        if (i < 0) return i;
    }
    /* resolve children; names not defined are leaf (device) types */
    size_t ndef = h->nt;
    for (size_t i = 0; i < ndef; i++) {
        struct fy_node *def = h->t[i].node;
        struct fy_node *cn = gs_yaml_get(def, "childCellType");
        const char *child = gs_yaml_str(cn);
        if (!child || !*child)
            return gs_yaml_err(h->d, def, GS_EPARSE, "cell type '%s': missing 'childCellType'",
                               h->t[i].name);
        int64_t num;
        struct fy_node *nn = gs_yaml_get(def, "childCellNumber");
        if (!nn)
            return gs_yaml_err(h->d, def, GS_EPARSE, "cell type '%s': missing 'childCellNumber'",
                               h->t[i].name);
        int rc = gs_yaml_int(nn, "childCellNumber", 1, 4096, &num, h->d);
        if (rc) return rc;
        struct fy_node *isn = gs_yaml_get(def, "isNodeLevel");
        int is_node = 0;
        if (isn && (rc = gs_yaml_bool(isn, "isNodeLevel", &is_node, h->d))) return rc;
        int ci = hv_find(h, child);
        if (ci < 0) {
            ci = hv_add_type(h, child, NULL);
            if (ci < 0) return ci;
        }
        h->t[i].child = ci;
        h->t[i].nchild = (int)num;
        h->t[i].is_node = is_node;
    }
    for (size_t i = 0; i < h->nt; i++) {
        int rc = hv_register(h, (int)i, 1);
        if (rc) return rc;
    }
    /* skuTypes (OpenPAI) give CPU and memory per leaf; gpuTypes is the old name */
    static const char *sku_keys[] = {"skuTypes", "gpuTypes"};
    for (int s = 0; s < 2; s++) {
        struct fy_node *sk = gs_yaml_get(pc, sku_keys[s]);
        if (!sk) continue;
        if (!fy_node_is_mapping(sk))
            return gs_yaml_err(h->d, sk, GS_EPARSE, "%s must be a mapping", sku_keys[s]);
        static const char *const skk[] = {"gpu", "cpu", "memory", NULL};
        it = NULL;
        while ((p = fy_node_mapping_iterate(sk, &it))) {
            const char *name = gs_yaml_str(fy_node_pair_key(p));
            struct fy_node *def = fy_node_pair_value(p);
            int rc = gs_yaml_check_keys(def, skk, "a SKU type", h->d);
            if (rc) return rc;
            int ti = name ? hv_find(h, name) : -1;
            if (ti < 0 || h->t[ti].child >= 0)
                return gs_yaml_err(h->d, fy_node_pair_key(p), GS_EPARSE,
                                   "%s: '%s' is not a leaf cell type of cellTypes", sku_keys[s],
                                   name ? name : "?");
            int64_t cpu = 0;
            struct fy_node *cn = gs_yaml_get(def, "cpu");
            if (cn && (rc = gs_yaml_int(cn, "cpu", 0, 1 << 20, &cpu, h->d))) return rc;
            struct fy_node *mn = gs_yaml_get(def, "memory");
            int64_t mem = 0;
            if (mn) {
                mem = gs_parse_mem_mb(gs_yaml_str(mn));
                if (mem < 0 || mem > INT32_MAX)
                    return gs_yaml_err(h->d, mn, GS_EPARSE,
                                       "memory: expected a size such as 54Gi or 512M");
            }
            h->t[ti].cpus = (int)cpu;
            h->t[ti].mem_mb = (int)mem;
        }
    }
    return 0;
}

/* Kind of a cell of type ti: GPU for leaves, NODE, and by height/depth otherwise. */
static gs_cell_kind hv_kind(const hv *h, int ti, int in_node, int *below_node_levels)
{
    const hv_type *t = &h->t[ti];
    if (t->child < 0) return GS_CELL_GPU;
    if (t->is_node) return GS_CELL_NODE;
    if (!in_node) {
        /* above node: the type right above the node level is a rack */
        return h->t[t->child].is_node ? GS_CELL_RACK : GS_CELL_POOL;
    }
    /* below node: count levels down to the leaves */
    int lv = 0;
    for (int x = ti; h->t[x].child >= 0; x = h->t[x].child) lv++;
    (void)below_node_levels;
    return lv <= 1 ? GS_CELL_PCIE : GS_CELL_SOCKET;
}

static int hv_build(hv *h, int ti, struct fy_node *spec, struct fy_node *where, int parent,
                    int index, int in_node);

/*
 * Children of a cell: those listed in cellChildren, then generated ones up to the type's
 * childCellNumber.  An absent, empty or null cellChildren (null, ~) is the full default
 * hierarchy, as in HiveD.  'where' positions errors about generated children.
 */
static int hv_build_children(hv *h, int ti, struct fy_node *spec, struct fy_node *where, int cell,
                             int in_node)
{
    const hv_type *t = &h->t[ti];
    struct fy_node *kids = spec ? gs_yaml_get(spec, "cellChildren") : NULL;
    int listed = 0;
    if (!gs_yaml_is_null(kids)) {
        if (!fy_node_is_sequence(kids))
            return gs_yaml_err(h->d, kids, GS_EPARSE, "cellChildren must be a list");
        listed = fy_node_sequence_item_count(kids);
        if (listed > t->nchild)
            return gs_yaml_err(h->d, kids, GS_EPARSE,
                               "cell of type '%s' lists %d children but the type has %d", t->name,
                               listed, t->nchild);
        where = kids;
    }
    void *it = NULL;
    for (int k = 0; k < t->nchild; k++) {
        struct fy_node *ks = k < listed ? fy_node_sequence_iterate(kids, &it) : NULL;
        int rc = hv_build(h, t->child, ks, ks ? ks : where, cell, k, in_node);
        if (rc) return rc;
    }
    return 0;
}

/* Record pinnedCellId node 'pn' on cell 'cell' (any level, GPU leaves included). */
static int hv_pin(hv *h, int cell, struct fy_node *pn)
{
    const char *pid = gs_yaml_str(pn);
    if (!pid || !*pid) return gs_yaml_err(h->d, pn, GS_EPARSE, "pinnedCellId must be a string");
    for (size_t i = 0; i < h->npinned; i++)
        if (!strcmp(h->pinned[i], pid))
            return gs_yaml_err(h->d, pn, GS_EPARSE, "pinnedCellId '%s' is used twice", pid);
    char **np = realloc(h->pinned, (h->npinned + 1) * sizeof *np);
    if (!np) return GS_ENOMEM;
    h->pinned = np;
    h->pinned[h->npinned++] = (char *)pid;
    return gs_cluster_set_pinned(h->c, cell, pid);
}

static int hv_build(hv *h, int ti, struct fy_node *spec, struct fy_node *where, int parent,
                    int index, int in_node)
{
    static const char *const keys[] = {"cellType", "cellAddress", "pinnedCellId", "cellChildren",
                                       NULL};
    const hv_type *t = &h->t[ti];
    if (!gs_yaml_is_null(spec)) {
        int rc = gs_yaml_check_keys(spec, keys, "a physical cell", h->d);
        if (rc) return rc;
        struct fy_node *tn = gs_yaml_get(spec, "cellType");
        const char *ts = gs_yaml_str(tn);
        if (tn && parent != 0 && ts && strcmp(ts, t->name))
            return gs_yaml_err(h->d, tn, GS_EPARSE,
                               "cellType '%s' does not match the parent's child type '%s'", ts,
                               t->name);
    } else {
        spec = NULL;
    }
    struct fy_node *an = spec ? gs_yaml_get(spec, "cellAddress") : NULL;
    struct fy_node *pn = spec ? gs_yaml_get(spec, "pinnedCellId") : NULL;
    if (gs_yaml_is_null(pn)) pn = NULL;
    const char *addr = gs_yaml_is_null(an) ? NULL : gs_yaml_str(an);
    if (an && !gs_yaml_is_null(an) && !addr)
        return gs_yaml_err(h->d, an, GS_EPARSE, "cellAddress must be a string");
    char defaddr[32];
    if (!addr) {
        if (t->is_node)
            return gs_yaml_err(h->d, spec ? spec : where, GS_EPARSE,
                               "node-level cell of type '%s' needs a cellAddress (the node name)",
                               t->name);
        snprintf(defaddr, sizeof defaddr, "%d", t->child < 0 && in_node ? h->leaf_in_node : index);
        addr = defaddr;
    }
    if (t->is_node && !*addr)
        return gs_yaml_err(h->d, an, GS_EPARSE, "cellAddress (the node name) must not be empty");
    gs_cell_kind kind = hv_kind(h, ti, in_node, NULL);
    int rc;
    if (kind == GS_CELL_GPU) {
        if (!in_node)
            return gs_yaml_err(h->d, spec ? spec : where, GS_EPARSE,
                               "leaf cell '%s' is not inside a node-level cell", t->name);
        /* the leaf address is the GPU's index in its node (HiveD reads it as an int32) */
        char *end;
        errno = 0;
        long local = strtol(addr, &end, 10);
        if (end == addr || *end)
            return gs_yaml_err(h->d, an, GS_EPARSE,
                               "invalid literal for int32: cellAddress '%s' of a leaf cell must "
                               "be its index in the node",
                               addr);
        if (errno || local < 0 || local > (1 << 22))
            return gs_yaml_err(h->d, an, GS_ERANGE,
                               "cellAddress '%s' of a GPU must be an index between 0 and %d", addr,
                               1 << 22);
        int gt = gs_cluster_gpu_type(h->c, t->name);
        if (gt < 0)
            return gs_yaml_err(h->d, spec ? spec : where, gt, "too many GPU types (max 32)");
        rc = gs_cluster_add_gpu(h->c, parent, (int)local, gt);
        if (rc < 0)
            return gs_yaml_err(h->d, spec ? spec : where, rc, "cannot add a GPU: %s",
                               gs_strerror(rc));
        h->leaf_in_node++;
        /* a pinned leaf cell: one GPU, whose leaf cell is the one just added */
        if (pn && (rc = hv_pin(h, (int)gs_cluster_ncells(h->c) - 1, pn))) return rc;
        return 0;
    }
    int cell = gs_cluster_add_cell(h->c, parent, kind, addr, t->id);
    if (cell < 0)
        return gs_yaml_err(h->d, spec ? spec : where, cell, "cannot add a cell: %s",
                           gs_strerror(cell));
    if (pn && (rc = hv_pin(h, cell, pn))) return rc;
    if (kind == GS_CELL_NODE) {
        /* CPU/memory: sum of the leaves' SKU resources */
        int leaf = ti;
        while (h->t[leaf].child >= 0) leaf = h->t[leaf].child;
        const gs_cell_type *ct = gs_cluster_cell_type(h->c, t->id);
        int64_t cpus = (int64_t)h->t[leaf].cpus * ct->gpus,
                mem = (int64_t)h->t[leaf].mem_mb * ct->gpus;
        if (cpus > INT32_MAX || mem > INT32_MAX)
            return gs_yaml_err(h->d, spec, GS_ERANGE,
                               "node '%s': %lld CPUs and %lld MiB of memory are too many", addr,
                               (long long)cpus, (long long)mem);
        rc = gs_cluster_set_node(h->c, cell, (int)cpus, (int)mem);
        if (rc) return gs_yaml_err(h->d, spec, rc, "node '%s': %s", addr, gs_strerror(rc));
        if (h->nnodes == h->capnodes) {
            size_t nc = h->capnodes ? h->capnodes * 2 : 64;
            hv_node *nn = realloc(h->nodes, nc * sizeof *nn);
            if (!nn) return GS_ENOMEM;
            h->nodes = nn;
            h->capnodes = nc;
        }
        h->leaf_in_node = 0;
        int32_t g0 = (int32_t)gs_cluster_ngpus(h->c);
        rc = hv_build_children(h, ti, spec, where, cell, 1);
        if (rc) return rc;
        int32_t g1 = (int32_t)gs_cluster_ngpus(h->c);
        /* names are checked once every cell is built (hv_check_nodes) */
        h->nodes[h->nnodes] = (hv_node){addr, an, h->nnodes, h->chain, g0, g1};
        h->nnodes++;
        /* GPU indices inside the node are unique */
        size_t ng = (size_t)(g1 - g0);
        int *loc = malloc((ng ? ng : 1) * sizeof *loc);
        if (!loc) return GS_ENOMEM;
        for (size_t k = 0; k < ng; k++) loc[k] = gs_cluster_gpu(h->c, (int)(g0 + k))->local;
        qsort(loc, ng, sizeof *loc, by_int);
        for (size_t k = 1; k < ng; k++)
            if (loc[k] == loc[k - 1]) {
                int dup = loc[k];
                free(loc);
                return gs_yaml_err(h->d, spec, GS_EPARSE,
                                   "node '%s': two GPUs have the index %d (cellAddress)", addr,
                                   dup);
            }
        free(loc);
        return 0;
    }
    return hv_build_children(h, ti, spec, where, cell, in_node);
}

/*
 * Node names.  One machine may appear in several chains (its GPUs of different types, e.g.
 * HiveD's design config node 1.0.0.2: CT1 GPUs 8,9 and DGX1-P100 GPUs 0..7): one node cell
 * per chain, all named after the machine.  Within a chain a name is used once, and the chains
 * of one machine never claim the same GPU index.
 */
static int hv_check_nodes(hv *h)
{
    qsort(h->nodes, h->nnodes, sizeof *h->nodes, by_node_chain);
    const hv_node *dup = NULL;
    for (size_t k = 1; k < h->nnodes; k++)
        if (!strcmp(h->nodes[k].name, h->nodes[k - 1].name) &&
            h->nodes[k].chain == h->nodes[k - 1].chain && (!dup || h->nodes[k].order < dup->order))
            dup = &h->nodes[k]; /* of two equal neighbours, [k] comes later in the file */
    if (dup)
        return gs_yaml_err(h->d, dup->at, GS_EEXIST,
                           "node name '%s' (cellAddress) is used twice in chain %s", dup->name,
                           h->t[dup->chain].name);
    for (size_t a = 0, b; a < h->nnodes; a = b) {
        size_t ng = 0;
        for (b = a; b < h->nnodes && !strcmp(h->nodes[b].name, h->nodes[a].name); b++)
            ng += (size_t)(h->nodes[b].g1 - h->nodes[b].g0);
        if (b - a < 2) continue;
        hv_gpu *g = malloc(ng * sizeof *g);
        if (!g) return GS_ENOMEM;
        size_t n = 0;
        for (size_t k = a; k < b; k++)
            for (int32_t x = h->nodes[k].g0; x < h->nodes[k].g1; x++)
                g[n++] = (hv_gpu){gs_cluster_gpu(h->c, x)->local, k};
        qsort(g, n, sizeof *g, by_gpu_local);
        for (size_t k = 1; k < n; k++)
            if (g[k].local == g[k - 1].local) {
                const hv_node *x = &h->nodes[g[k - 1].node], *y = &h->nodes[g[k].node];
                if (y->order < x->order) {
                    const hv_node *tmp = x;
                    x = y;
                    y = tmp;
                }
                int local = g[k].local;
                free(g);
                return gs_yaml_err(h->d, y->at, GS_EEXIST,
                                   "node '%s': GPU index %d is in chain %s and in chain %s",
                                   y->name, local, h->t[x->chain].name, h->t[y->chain].name);
            }
        free(g);
    }
    return 0;
}

static int hv_parse_cells(hv *h, struct fy_node *pc, int **top_types, size_t *ntop)
{
    struct fy_node *cells = gs_yaml_get(pc, "physicalCells");
    if (gs_yaml_is_null(cells))
        return gs_yaml_err(h->d, cells ? cells : pc, GS_EPARSE,
                           "physicalCluster: no 'physicalCells' (HiveD would start with an empty "
                           "cluster; gsched needs at least one GPU)");
    if (!fy_node_is_sequence(cells))
        return gs_yaml_err(h->d, cells, GS_EPARSE, "physicalCells must be a list");
    int n = fy_node_sequence_item_count(cells);
    if (n == 0)
        return gs_yaml_err(h->d, cells, GS_EPARSE,
                           "physicalCells is empty (HiveD would start with an empty cluster; "
                           "gsched needs at least one GPU)");
    *top_types = malloc((size_t)n * sizeof **top_types);
    if (!*top_types) return GS_ENOMEM;
    *ntop = 0;
    void *it = NULL;
    struct fy_node *cs;
    int idx = 0;
    int64_t gpus = 0, ncells = 0;
    /* pass 1: types and the size of the whole cluster, before building anything */
    for (int pass = 1; pass <= 2; pass++, it = NULL)
        while ((cs = fy_node_sequence_iterate(cells, &it))) {
            struct fy_node *tn = gs_yaml_get(cs, "cellType");
            const char *ts = gs_yaml_str(tn);
            if (!ts || !*ts)
                return gs_yaml_err(h->d, tn ? tn : cs, GS_EPARSE,
                                   "a top-level physical cell needs 'cellType'");
            int ti = hv_find(h, ts);
            /* a leaf type is not a key of cellTypes either */
            if (ti < 0 || h->t[ti].child < 0)
                return gs_yaml_err(h->d, tn, GS_EPARSE,
                                   "physicalCells contains unknown cellType: %s", ts);
            if (!h->t[ti].node_below)
                return gs_yaml_err(h->d, tn, GS_EPARSE, "top cell must be node-level or above: %s",
                                   ts);
            if (pass == 1) {
                gpus += h->t[ti].gpus;
                ncells += h->t[ti].cells;
                if (gpus > HV_MAX_GPUS || ncells > HV_MAX_CELLS)
                    return gs_yaml_err(h->d, tn, GS_ERANGE,
                                       "physicalCells: more than %lld GPUs or %lld cells in all",
                                       (long long)HV_MAX_GPUS, (long long)HV_MAX_CELLS);
                continue;
            }
            h->chain = ti;
            int rc = hv_build(h, ti, cs, cs, 0, idx++, 0);
            if (rc) return rc;
            (*top_types)[(*ntop)++] = ti;
        }
    return hv_check_nodes(h);
}

/*
 * virtualClusters, with HiveD's start-up checks: a virtual cell's type is a dotted path from a
 * chain down its hierarchy; pinned ids name a physical pinned cell, each used by one VC once;
 * and per chain, per level, enough physical cells for all VCs.
 */
static int hv_parse_vcs(hv *h, struct fy_node *root, const int *top_types, size_t ntop)
{
    struct fy_node *vcs = gs_yaml_get(root, "virtualClusters");
    if (gs_yaml_is_null(vcs)) return 0;
    if (!fy_node_is_mapping(vcs))
        return gs_yaml_err(h->d, vcs, GS_EPARSE, "virtualClusters must be a mapping of VC names");
    /* demand[chain type][cell type] summed over VCs, and the last entry that added to it */
    size_t nt = h->nt;
    int64_t *demand = calloc(nt * nt, sizeof *demand);
    struct fy_node **dwhere = calloc(nt * nt, sizeof *dwhere);
    const char **pin_owner = calloc(h->npinned + 1, sizeof *pin_owner);
    int rc = 0;
    if (!demand || !dwhere || !pin_owner) {
        rc = GS_ENOMEM;
        goto out;
    }
    void *it = NULL;
    struct fy_node_pair *p;
    while (!rc && (p = fy_node_mapping_iterate(vcs, &it))) {
        const char *vname = gs_yaml_str(fy_node_pair_key(p));
        struct fy_node *vdef = fy_node_pair_value(p);
        static const char *const vkeys[] = {"virtualCells", "pinnedCells", NULL};
        if (!vname || !*vname) {
            rc = gs_yaml_err(h->d, fy_node_pair_key(p), GS_EPARSE, "bad VC name");
            break;
        }
        if (gs_yaml_is_null(vdef)) vdef = NULL; /* a VC with nothing (HiveD accepts it) */
        if (vdef && (rc = gs_yaml_check_keys(vdef, vkeys, "a virtual cluster", h->d))) break;
        gs_vc_def vd = {.name = vname};
        gs_vc_cells cells[256];
        const char *pins[256];
        struct fy_node *vc_cells = gs_yaml_get(vdef, "virtualCells");
        if (!gs_yaml_is_null(vc_cells)) {
            if (!fy_node_is_sequence(vc_cells)) {
                rc = gs_yaml_err(h->d, vc_cells, GS_EPARSE, "virtualCells must be a list");
                break;
            }
            void *it2 = NULL;
            struct fy_node *e;
            while (!rc && (e = fy_node_sequence_iterate(vc_cells, &it2))) {
                static const char *const ek[] = {"cellType", "cellNumber", NULL};
                if ((rc = gs_yaml_check_keys(e, ek, "a virtual cell", h->d))) break;
                struct fy_node *tn = gs_yaml_get(e, "cellType");
                const char *path = gs_yaml_str(tn);
                if (!path || !*path) {
                    rc = gs_yaml_err(h->d, tn ? tn : e, GS_EPARSE, "virtual cell needs 'cellType'");
                    break;
                }
                /* "chain.t1.t2": HiveD takes the chain from the first element and the cell
                 * type (hence the level) from the last; each element must also be the child
                 * type of the one before, so that the path means what it says */
                char buf[512];
                if (strlen(path) >= sizeof buf) {
                    rc = gs_yaml_err(h->d, tn, GS_ERANGE, "VC '%s': cellType path is too long",
                                     vname);
                    break;
                }
                snprintf(buf, sizeof buf, "%s", path);
                const char *lastdot = strrchr(buf, '.');
                const char *last = lastdot ? lastdot + 1 : buf;
                int cur = hv_find(h, last);
                if (cur < 0) {
                    rc = gs_yaml_err(h->d, tn, GS_EPARSE,
                                     "cellType %s in VirtualCells is not found in cell types "
                                     "definition",
                                     last);
                    break;
                }
                char *save, *tok = strtok_r(buf, ".", &save);
                int chain = tok ? hv_find(h, tok) : -1;
                int is_top = 0;
                for (size_t k = 0; chain >= 0 && k < ntop; k++) is_top |= top_types[k] == chain;
                if (!is_top) {
                    rc = gs_yaml_err(h->d, tn, GS_EPARSE,
                                     "Illegal initial VC assignment: Chain %s does not exists in "
                                     "physical cluster",
                                     tok ? tok : "");
                    break;
                }
                cur = chain;
                while ((tok = strtok_r(NULL, ".", &save))) {
                    int nx = hv_find(h, tok);
                    if (nx < 0 || h->t[cur].child != nx) {
                        rc = gs_yaml_err(h->d, tn, GS_EPARSE,
                                         "VC '%s': cellType '%s': '%s' is not the child cell type "
                                         "of '%s'",
                                         vname, path, tok, h->t[cur].name);
                        break;
                    }
                    cur = nx;
                }
                if (rc) break;
                int64_t num;
                struct fy_node *nn = gs_yaml_get(e, "cellNumber");
                if (!nn) {
                    rc = gs_yaml_err(h->d, e, GS_EPARSE, "virtual cell needs 'cellNumber'");
                    break;
                }
                if ((rc = gs_yaml_int(nn, "cellNumber", 0, 1 << 20, &num, h->d))) break;
                if (vd.ncells == 256) {
                    rc = gs_yaml_err(h->d, e, GS_ETOOBIG, "VC '%s': too many virtualCells", vname);
                    break;
                }
                const gs_cell_type *ct = gs_cluster_cell_type(h->c, h->t[cur].id);
                cells[vd.ncells++] = (gs_vc_cells){h->t[chain].id, h->t[cur].id, (int32_t)num};
                vd.gpus += num * ct->gpus;
                demand[(size_t)chain * nt + (size_t)cur] += num;
                if (num) dwhere[(size_t)chain * nt + (size_t)cur] = tn;
            }
            if (rc) break;
        }
        struct fy_node *pcells = gs_yaml_get(vdef, "pinnedCells");
        if (!gs_yaml_is_null(pcells)) {
            if (!fy_node_is_sequence(pcells)) {
                rc = gs_yaml_err(h->d, pcells, GS_EPARSE, "pinnedCells must be a list");
                break;
            }
            void *it2 = NULL;
            struct fy_node *e;
            while (!rc && (e = fy_node_sequence_iterate(pcells, &it2))) {
                static const char *const ek[] = {"pinnedCellId", NULL};
                if ((rc = gs_yaml_check_keys(e, ek, "a pinned cell", h->d))) break;
                struct fy_node *idn = gs_yaml_get(e, "pinnedCellId");
                const char *pid = gs_yaml_str(idn);
                int cell = pid ? gs_cluster_find_pinned(h->c, pid) : -1;
                if (cell < 0) {
                    rc = gs_yaml_err(h->d, idn ? idn : e, GS_EPARSE,
                                     "pinned cell not found in physicalCells: VC: %s, ID: %s",
                                     vname, pid ? pid : "");
                    break;
                }
                for (size_t k = 0; k < h->npinned; k++)
                    if (!strcmp(h->pinned[k], pid)) {
                        if (pin_owner[k] == vname)
                            rc = gs_yaml_err(h->d, idn, GS_EPARSE,
                                             "pinnedCellId '%s' is listed twice in VC '%s'", pid,
                                             vname);
                        else if (pin_owner[k])
                            rc = gs_yaml_err(h->d, idn, GS_EPARSE,
                                             "pinnedCellId '%s' is used by VC '%s' and VC '%s'",
                                             pid, pin_owner[k], vname);
                        pin_owner[k] = vname;
                        break;
                    }
                if (rc) break;
                if (vd.npinned == 256) {
                    rc = gs_yaml_err(h->d, e, GS_ETOOBIG, "VC '%s': too many pinnedCells", vname);
                    break;
                }
                pins[vd.npinned++] = pid;
                /* demand at the pinned cell's level of its chain; a pinned GPU is a cell of the
                 * chain's leaf type */
                const gs_cell *pcell = gs_cluster_cell(h->c, cell);
                int top = cell;
                while (gs_cluster_cell(h->c, top)->parent > 0)
                    top = gs_cluster_cell(h->c, top)->parent;
                int chain_t = -1, cell_t = -1;
                for (size_t k = 0; k < nt; k++) {
                    if (h->t[k].id == gs_cluster_cell(h->c, top)->type) chain_t = (int)k;
                    if (pcell->kind != GS_CELL_GPU && h->t[k].id == pcell->type) cell_t = (int)k;
                }
                if (chain_t < 0) {
                    rc = gs_yaml_err(h->d, idn, GS_EINTERNAL, "pinned cell '%s' has no chain", pid);
                    break;
                }
                if (pcell->kind == GS_CELL_GPU)
                    for (cell_t = chain_t; h->t[cell_t].child >= 0;) cell_t = h->t[cell_t].child;
                demand[(size_t)chain_t * nt + (size_t)cell_t]++;
                dwhere[(size_t)chain_t * nt + (size_t)cell_t] = idn;
                vd.gpus += gs_cluster_cell_type(h->c, h->t[cell_t].id)->gpus;
            }
            if (rc) break;
        }
        vd.cells = cells;
        vd.pinned = pins;
        if (!rc && (rc = gs_cluster_add_vc(h->c, &vd)) < 0) break;
        rc = 0;
    }
    /* per chain (in the order of physicalCells), walk its levels top-down */
    for (size_t k = 0; !rc && k < ntop; k++) {
        int chain = top_types[k];
        int seen = 0;
        for (size_t q = 0; q < k; q++) seen |= top_types[q] == chain;
        if (seen) continue;
        int64_t avail = 0;
        for (size_t q = 0; q < ntop; q++) avail += top_types[q] == chain;
        for (int lv = chain; lv >= 0; lv = h->t[lv].child) {
            int64_t need = demand[(size_t)chain * nt + (size_t)lv];
            int64_t left = avail - need;
            if (left < 0) {
                rc = gs_yaml_err(h->d, dwhere[(size_t)chain * nt + (size_t)lv], GS_EINVAL,
                                 "Illegal initial VC assignment: Insufficient physical cells at "
                                 "chain %s level %d: %lld needed, %lld available",
                                 h->t[chain].name, gs_cluster_cell_type(h->c, h->t[lv].id)->level,
                                 (long long)need, (long long)avail);
                break;
            }
            if (h->t[lv].child >= 0) avail = left * h->t[lv].nchild;
        }
    }
out:
    free(demand);
    free(dwhere);
    free(pin_owner);
    return rc;
}

#define HV_EMPTY_MSG                                                                       \
    "HiveD config: no 'physicalCluster' (HiveD would start with an empty cluster; gsched " \
    "needs at least one GPU)"

/* 1 when the text has nothing but blank lines and comments (HiveD's default config). */
static int hv_only_comments(const char *buf, size_t len)
{
    for (size_t i = 0; i < len;) {
        while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r')) i++;
        if (i < len && buf[i] != '\n' && buf[i] != '#') return 0;
        while (i < len && buf[i] != '\n') i++;
        i++;
    }
    return 1;
}

int gs_cluster_parse_hived(const char *file, const char *buf, size_t len, gs_cluster **out,
                           gs_diag *d)
{
    if (hv_only_comments(buf, len)) return gs_diag_set(d, GS_EPARSE, 1, 1, "%s", HV_EMPTY_MSG);
    gs_yaml y;
    int rc = gs_yaml_load(&y, file, buf, len, d);
    if (rc) return rc;
    struct fy_node *root = gs_yaml_root(&y);
    hv h = {0};
    h.d = d;
    int *top = NULL;
    size_t ntop = 0;
    /* HiveD's default config has no physicalCluster (all of it is commented out): HiveD starts
     * with an empty cluster, which gsched cannot schedule on */
    struct fy_node *pc = gs_yaml_get(root, "physicalCluster");
    if (gs_yaml_is_null(root) || (fy_node_is_mapping(root) && gs_yaml_is_null(pc))) {
        rc = gs_yaml_err(d, pc ? pc : root, GS_EPARSE, "%s", HV_EMPTY_MSG);
        goto out;
    }
    if (!fy_node_is_mapping(root)) {
        rc = gs_yaml_err(d, root, GS_EPARSE, "HiveD config must be a mapping");
        goto out;
    }
    static const char *const pkeys[] = {"skuTypes", "gpuTypes", "cellTypes", "physicalCells", NULL};
    if ((rc = gs_yaml_check_keys(pc, pkeys, "physicalCluster", d))) goto out;
    if ((rc = gs_cluster_create(&h.c))) goto out;
    if ((rc = hv_parse_types(&h, pc))) goto out;
    if ((rc = hv_parse_cells(&h, pc, &top, &ntop))) goto out;
    if ((rc = gs_cluster_finish(h.c, d))) goto out;
    if ((rc = hv_parse_vcs(&h, root, top, ntop))) goto out;
    *out = h.c;
    h.c = NULL;
out:
    gs_cluster_destroy(h.c);
    free(h.t);
    free(h.pinned);
    free(h.nodes);
    free(top);
    gs_yaml_release(&y);
    return rc;
}

/* ---- Gavel's cluster_specs.json ------------------------------------------------------------ */

/*
 * {"philly": ["500:0:0"]}: per cluster name a list of specs "V100:P100:K80" (GPU counts per
 * type, Gavel's -c order).  The key is 'key', or the only one; the list must hold one spec.
 * The cluster is the shorthand "A:V100,B:P100,C:K80" (zero counts left out): one server per
 * type, as Gavel's simulator charges nothing for spreading a job over servers.
 */
int gs_cluster_parse_gavel(const char *file, const char *buf, size_t len, const char *key,
                           gs_cluster **out, gs_diag *d)
{
    gs_yaml y; /* JSON is YAML: libfyaml reads it with positions */
    int rc = gs_yaml_load(&y, file, buf, len, d);
    if (rc) return rc;
    struct fy_node *root = gs_yaml_root(&y), *val = NULL;
    char keys[256] = "";
    const char *chosen = NULL;
    if (!root || !fy_node_is_mapping(root) || fy_node_mapping_item_count(root) < 1) {
        rc = gs_yaml_err(d, root, GS_EPARSE,
                         "Gavel cluster specs: expected a JSON object of cluster names, e.g. "
                         "{\"philly\": [\"500:0:0\"]} (counts of V100:P100:K80)");
        goto out;
    }
    void *it = NULL;
    struct fy_node_pair *pr;
    int nkeys = 0;
    while ((pr = fy_node_mapping_iterate(root, &it))) {
        const char *k = gs_yaml_str(fy_node_pair_key(pr));
        if (!k) k = "?";
        size_t used = strlen(keys);
        if (used < sizeof keys - 8)
            snprintf(keys + used, sizeof keys - used, "%s%s", nkeys ? ", " : "", k);
        nkeys++;
        if ((key && !strcmp(k, key)) || (!key && nkeys == 1)) {
            chosen = k;
            val = fy_node_pair_value(pr);
        }
    }
    if (key && !val) {
        rc = gs_yaml_err(d, root, GS_ENOENT, "no cluster '%s' in Gavel cluster specs (keys: %s)",
                         key, keys);
        goto out;
    }
    if (!key && nkeys > 1) {
        rc = gs_yaml_err(d, root, GS_EINVAL,
                         "Gavel cluster specs with several clusters (%s): choose one with "
                         "FILE.json#KEY",
                         keys);
        goto out;
    }
    struct fy_node *spec = val;
    if (val && fy_node_is_sequence(val)) {
        int n = fy_node_sequence_item_count(val);
        if (n != 1) {
            rc = gs_yaml_err(d, val, GS_EINVAL,
                             "cluster '%s' lists %d specs; gsched reads one (write the one you "
                             "want as a shorthand, e.g. 36:V100,36:P100,36:K80)",
                             chosen, n);
            goto out;
        }
        spec = fy_node_sequence_get_by_index(val, 0);
    }
    const char *txt = gs_yaml_str(spec);
    static const char *const types[3] = {"V100", "P100", "K80"};
    long cnt[3];
    const char *q = txt;
    for (int i = 0; q && i < 3; i++) {
        char *end;
        errno = 0;
        cnt[i] = isdigit((unsigned char)*q) ? strtol(q, &end, 10) : -1;
        if (cnt[i] < 0 || errno || cnt[i] > MAX_SPEC_GPUS || *end != (i < 2 ? ':' : '\0')) {
            q = NULL;
            break;
        }
        q = end + 1;
    }
    if (!q) {
        rc = gs_yaml_err(d, spec ? spec : val, GS_EPARSE,
                         "cluster '%s': '%s' is not a Gavel cluster spec (V100:P100:K80 GPU "
                         "counts, e.g. 36:36:36)",
                         chosen, txt ? txt : "");
        goto out;
    }
    char sh[128] = "";
    for (int i = 0; i < 3; i++)
        if (cnt[i]) {
            size_t used = strlen(sh);
            snprintf(sh + used, sizeof sh - used, "%s%ld:%s", used ? "," : "", cnt[i], types[i]);
        }
    if (!sh[0] || cnt[0] + cnt[1] + cnt[2] > MAX_SPEC_GPUS) {
        rc = gs_yaml_err(d, spec, GS_ERANGE, "cluster '%s': %s GPUs (at least 1, at most 4M)",
                         chosen, sh[0] ? "too many" : "no");
        goto out;
    }
    rc = gs_cluster_parse_shorthand(sh, out, d);
out:
    gs_yaml_release(&y);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* 1 when s contains w in any case (column names are matched in any case). */
static int has_ci(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (!strncasecmp(s, w, n)) return 1;
    return 0;
}

/* The JSON object's first non-blank byte (Gavel's cluster_specs.json). */
static int looks_json(const char *buf)
{
    while (*buf == ' ' || *buf == '\t' || *buf == '\r' || *buf == '\n') buf++;
    return *buf == '{';
}

static int load_file(const char *spec, const char *path, const char *key, gs_cluster **out,
                     gs_diag *d)
{
    char *buf;
    size_t len;
    int rc = gs_read_file(path, &buf, &len, d);
    if (rc) return rc;
    const char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (key && !looks_json(buf))
        rc = gs_diag_set(d, GS_EPARSE, 1, 1,
                         "'#%s' chooses a cluster of a Gavel cluster_specs.json; %s is not one",
                         key, path);
    else if (key || (looks_json(buf) && !strstr(buf, "physicalCluster")))
        rc = gs_cluster_parse_gavel(spec, buf, len, key, out, d);
    else if (!strncasecmp(p, "num_switch", 10) || has_ci(buf, "num_gpu_p_node"))
        rc = gs_cluster_parse_tiresias(spec, buf, len, out, d);
    else if (strstr(buf, "physicalCluster") || has_suffix(path, ".yaml") ||
             has_suffix(path, ".yml"))
        rc = gs_cluster_parse_hived(spec, buf, len, out, d); /* YAML: only HiveD configs */
    else
        rc = gs_diag_set(d, GS_EPARSE, 1, 1,
                         "unknown cluster spec format (expected a Tiresias cluster CSV with "
                         "num_switch,..., a HiveD config with physicalCluster, or Gavel's "
                         "cluster_specs.json)");
    free(buf);
    return rc;
}

int gs_cluster_load(const char *spec, gs_cluster **out, gs_diag *d)
{
    struct stat st;
    if (stat(spec, &st) == 0) return load_file(spec, spec, NULL, out, d);
    /* FILE#KEY: one cluster of a Gavel cluster_specs.json */
    const char *hash = strrchr(spec, '#');
    if (hash && hash > spec) {
        char *path = strndup(spec, (size_t)(hash - spec));
        if (!path) return GS_ENOMEM;
        int rc = stat(path, &st) == 0 ? load_file(spec, path, hash + 1, out, d) : 1;
        free(path);
        if (rc != 1) return rc;
    }
    /* not a file: a shorthand, unless it looks like a path */
    if ((strchr(spec, '/') && !isdigit((unsigned char)spec[0])) || strstr(spec, ".csv") ||
        strstr(spec, ".yaml") || strstr(spec, ".yml") || strstr(spec, ".json"))
        return gs_diag_set(d, GS_ENOENT, 0, 0, "cannot open cluster spec: %s", strerror(ENOENT));
    d->file = NULL;
    return gs_cluster_parse_shorthand(spec, out, d);
}
