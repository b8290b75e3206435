/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hived_spec.c - job shapes from YAML: HiveD's pod-scheduling spec (its v1
 * affinity group and its v2 pod-group tree) and gsched's plain form
 * (members of different sizes, nested withinOneCell groups), parsed into a
 * gs_job_spec with task_gpus and groups (gsched/job.h, "Affinity groups").
 *
 * A HiveD spec describes one pod of a group and the group around it; gsched
 * schedules the whole group as one gang job.  The spec is checked by the
 * rules HiveD applies when a pod arrives (its ExtractPodSchedulingSpec and
 * the v2 spec's validation): the same conditions, with HiveD's messages,
 * each at file:line:col of the offending node, the spec-wide ones in HiveD's
 * order (pod groups are walked depth-first, so of several faulty groups the
 * first one reported may differ from HiveD's breadth-first walk).  gsched
 * adds its own checks: unknown keys (with a suggestion), cell types that the
 * cluster does not have, withinOneCell groups without pods.  A spec HiveD
 * would refuse is never accepted.
 *
 * Mapping (docs/job-spec.md, "HiveD pod-scheduling spec"):
 *   v1  affinityGroup.members[i] = podNumber tasks of leafCellNumber GPUs,
 *       in order; no affinityGroup = one task of leafCellNumber; leafCellType
 *       = the GPU type.
 *   v2  each group's pod (podMinNumber tasks of cellsPerPod) comes first, then
 *       its childGroups in order (tasks in depth-first pre-order, so every
 *       group is a contiguous range); a group with withinOneCell becomes a
 *       gs_task_group (parent = the nearest enclosing one); groups without it
 *       only order tasks.  cellsPerPod of a type above the leaves is that
 *       many whole cells: cellNumber x the type's GPUs, and when cellNumber
 *       is 1 and the type is below node level, a one-task group within that
 *       type (with cellNumber > 1 only the GPU count is kept: an
 *       approximation, the cells' boundaries are not enforced).  cellType at
 *       the top names the chain: its leaf type is the GPU type.
 *   both  gangReleaseEnable and ignoreK8sSuggestedNodes are read and checked
 *       but change nothing (a gsched job always ends whole; there are no
 *       Kubernetes suggested nodes); podMaxNumber is checked, podMinNumber
 *       pods are scheduled (as HiveD does).
 *
 * Invariants: on success the spec's task_gpus/groups point into the caller's
 * gs_spec_buf, tasks are listed so that every group is a contiguous range in
 * pre-order with its parent before it; nothing here touches an engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "yaml.h"

#define MAX_TASKS  (1 << 20)
#define MAX_GROUPS 4096

void gs_spec_buf_release(gs_spec_buf *b)
{
    if (!b) return;
    free(b->task_gpus);
    free(b->groups);
    for (int i = 0; i < b->nstrs; i++) free(b->strs[i]);
    free(b->strs);
    memset(b, 0, sizeof *b);
}

/* A copy of t owned by b, or NULL (GS_ENOMEM). */
static const char *keep(gs_spec_buf *b, const char *t)
{
    if (b->nstrs == b->capstrs) {
        int nc = b->capstrs ? b->capstrs * 2 : 8;
        char **v = realloc(b->strs, (size_t)nc * sizeof *v);
        if (!v) return NULL;
        b->strs = v;
        b->capstrs = nc;
    }
    char *c = strdup(t);
    if (c) b->strs[b->nstrs++] = c;
    return c;
}

static int add_tasks(gs_spec_buf *b, struct fy_node *at, int64_t n, int64_t gpus, gs_diag *d)
{
    if (b->ntasks + n > MAX_TASKS)
        return gs_yaml_err(d, at, GS_ERANGE, "more than %d tasks", MAX_TASKS);
    if (b->ntasks + n > b->captasks) {
        int64_t nc = b->captasks ? b->captasks : 16;
        while (nc < b->ntasks + n) nc *= 2;
        int32_t *v = realloc(b->task_gpus, (size_t)nc * sizeof *v);
        if (!v) return GS_ENOMEM;
        b->task_gpus = v;
        b->captasks = (int)nc;
    }
    for (int64_t i = 0; i < n; i++) b->task_gpus[b->ntasks++] = (int32_t)gpus;
    return 0;
}

/* Open a group at the next task; its index in *idx.  'within' is copied. */
static int open_group(gs_spec_buf *b, struct fy_node *at, const char *within, int parent, int *idx,
                      gs_diag *d)
{
    if (b->ngroups >= MAX_GROUPS)
        return gs_yaml_err(d, at, GS_ERANGE, "more than %d withinOneCell groups", MAX_GROUPS);
    if (b->ngroups == b->capgroups) {
        int nc = b->capgroups ? b->capgroups * 2 : 8;
        gs_task_group *v = realloc(b->groups, (size_t)nc * sizeof *v);
        if (!v) return GS_ENOMEM;
        b->groups = v;
        b->capgroups = nc;
    }
    const char *w = keep(b, within);
    if (!w) return GS_ENOMEM;
    b->groups[b->ngroups] = (gs_task_group){b->ntasks, b->ntasks, parent, w, -1};
    *idx = b->ngroups++;
    return 0;
}

/* Point s at what b holds: the tasks (gpus_per_task = the largest) and the groups. */
static void finish(gs_job_spec *s, gs_spec_buf *b)
{
    int max = 1;
    for (int t = 0; t < b->ntasks; t++)
        if (b->task_gpus[t] > max) max = b->task_gpus[t];
    s->ntasks = b->ntasks;
    s->gpus_per_task = max;
    s->task_gpus = b->task_gpus;
    s->groups = b->ngroups ? b->groups : NULL;
    s->ngroups = b->ngroups;
}

/* YAML's null: no node, an empty value, or a plain null / Null / NULL / ~. */
static int ynull(struct fy_node *n)
{
    if (!n || fy_node_is_null(n)) return 1;
    if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_PLAIN) return 0;
    const char *t = gs_yaml_str(n);
    return t && (!strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL") || !strcmp(t, "~"));
}

/* Where to report about the value of key in m: the value, or its key when the value is an
 * empty collection (which has no position of its own). */
static struct fy_node *at_val(struct fy_node *m, const char *key)
{
    struct fy_node *v = gs_yaml_get(m, key);
    int line, col;
    gs_yaml_pos(v, &line, &col);
    if (line) return v;
    struct fy_node *k = fy_node_mapping_lookup_key_by_string(m, key, strlen(key));
    return k ? k : m;
}

/* Scalar text of n (NULL node: ""); GS_EPARSE when n is not a scalar. */
static int str_of(struct fy_node *n, const char *what, const char **out, gs_diag *d)
{
    *out = "";
    if (!n || ynull(n)) return 0;
    const char *t = gs_yaml_str(n);
    if (!t) return gs_yaml_err(d, n, GS_EPARSE, "'%s' must be a string", what);
    *out = t;
    return 0;
}

/* An int32 field of HiveD's spec (absent: 0, as Go's zero value). */
static int i32_of(struct fy_node *m, const char *key, int64_t *out, gs_diag *d)
{
    *out = 0;
    struct fy_node *x = gs_yaml_get(m, key);
    if (!x || ynull(x)) return 0;
    return gs_yaml_int(x, key, INT32_MIN, INT32_MAX, out, d);
}

static int bool_of(struct fy_node *m, const char *key, int *out, gs_diag *d)
{
    struct fy_node *x = gs_yaml_get(m, key);
    if (!x || ynull(x)) return 0;
    return gs_yaml_bool(x, key, out, d);
}

/* The node to point at for key in m: its value, else the mapping. */
static struct fy_node *at_key(struct fy_node *m, const char *key)
{
    struct fy_node *x = gs_yaml_get(m, key);
    return x ? x : m;
}

/* ---- v1 --------------------------------------------------------------------------------- */

/* v1 key, or its pre-"leaf cell" name (HiveD renames gpuType/gpuNumber on read). */
static struct fy_node *get_v1(struct fy_node *m, const char *key, const char *legacy)
{
    struct fy_node *x = gs_yaml_get(m, key);
    return x ? x : gs_yaml_get(m, legacy);
}

static struct fy_node *at_v1(struct fy_node *m, const char *key, const char *legacy)
{
    struct fy_node *x = get_v1(m, key, legacy);
    return x ? x : m;
}

static int v1_int(struct fy_node *m, const char *key, const char *legacy, int64_t *out, gs_diag *d)
{
    *out = 0;
    struct fy_node *x = get_v1(m, key, legacy);
    if (!x || ynull(x)) return 0;
    return gs_yaml_int(x, gs_yaml_get(m, key) ? key : legacy, INT32_MIN, INT32_MAX, out, d);
}

/* HiveD's first two checks of every spec version: a VC is named, the priority is in range. */
static int check_vc_prio(struct fy_node *n, const char *vc, int64_t prio, gs_diag *d)
{
    if (!*vc)
        return gs_yaml_err(d, at_key(n, "virtualCluster"), GS_EINVAL, "VirtualCluster is empty");
    if (prio < GS_PRIO_OPPORTUNISTIC)
        return gs_yaml_err(d, at_key(n, "priority"), GS_EINVAL, "Priority is less than %d",
                           GS_PRIO_OPPORTUNISTIC);
    if (prio > GS_HIVED_MAX_PRIORITY)
        return gs_yaml_err(d, at_key(n, "priority"), GS_EINVAL, "Priority is greater than %d",
                           GS_HIVED_MAX_PRIORITY);
    return 0;
}

static int parse_v1(struct fy_node *n, gs_job_spec *s, gs_spec_buf *b, gs_diag *d)
{
    static const char *const keys[] = {"version",
                                       "virtualCluster",
                                       "priority",
                                       "pinnedCellId",
                                       "leafCellType",
                                       "leafCellNumber",
                                       "gpuType",
                                       "gpuNumber",
                                       "gangReleaseEnable",
                                       "lazyPreemptionEnable",
                                       "ignoreK8sSuggestedNodes",
                                       "affinityGroup",
                                       NULL};
    int rc = gs_yaml_check_keys(n, keys, "a HiveD pod-scheduling spec (v1)", d);
    if (rc) return rc;
    const char *vc, *pinned, *type;
    int64_t prio, leaf;
    int lazy = 0, gang_release = 0, ignore = 1;
    if ((rc = str_of(gs_yaml_get(n, "virtualCluster"), "virtualCluster", &vc, d)) ||
        (rc = i32_of(n, "priority", &prio, d)) ||
        (rc = str_of(gs_yaml_get(n, "pinnedCellId"), "pinnedCellId", &pinned, d)) ||
        (rc = str_of(get_v1(n, "leafCellType", "gpuType"), "leafCellType", &type, d)) ||
        (rc = v1_int(n, "leafCellNumber", "gpuNumber", &leaf, d)) ||
        (rc = bool_of(n, "gangReleaseEnable", &gang_release, d)) ||
        (rc = bool_of(n, "lazyPreemptionEnable", &lazy, d)) ||
        (rc = bool_of(n, "ignoreK8sSuggestedNodes", &ignore, d)))
        return rc;
    struct fy_node *ag = gs_yaml_get(n, "affinityGroup");
    if (ag && ynull(ag)) ag = NULL;
    if (ag && !fy_node_is_mapping(ag))
        return gs_yaml_err(d, ag, GS_EPARSE, "'affinityGroup' must be a mapping");
    static const char *const agk[] = {"name", "members", NULL};
    if (ag && (rc = gs_yaml_check_keys(ag, agk, "affinityGroup", d))) return rc;
    /* HiveD's order of checks */
    if ((rc = check_vc_prio(n, vc, prio, d))) return rc;
    if (leaf <= 0)
        return gs_yaml_err(d, at_v1(n, "leafCellNumber", "gpuNumber"), GS_EINVAL,
                           "LeafCellNumber is non-positive");
    const char *gname = "";
    if (ag) {
        if ((rc = str_of(gs_yaml_get(ag, "name"), "name", &gname, d))) return rc;
        if (!*gname)
            return gs_yaml_err(d, at_key(ag, "name"), GS_EINVAL, "AffinityGroup.Name is empty");
        struct fy_node *ms = gs_yaml_get(ag, "members");
        if (ms && !ynull(ms) && !fy_node_is_sequence(ms))
            return gs_yaml_err(d, ms, GS_EPARSE, "'members' must be a list");
        int in_group = 0;
        void *it = NULL;
        struct fy_node *m;
        while (ms && (m = fy_node_sequence_iterate(ms, &it))) {
            static const char *const mk[] = {"podNumber", "leafCellNumber", "gpuNumber", NULL};
            if ((rc = gs_yaml_check_keys(m, mk, "an affinityGroup member", d))) return rc;
            int64_t pods, cells;
            if ((rc = i32_of(m, "podNumber", &pods, d)) ||
                (rc = v1_int(m, "leafCellNumber", "gpuNumber", &cells, d)))
                return rc;
            if (pods <= 0)
                return gs_yaml_err(d, at_key(m, "podNumber"), GS_EINVAL,
                                   "AffinityGroup.Members has non-positive PodNumber");
            if (cells <= 0)
                return gs_yaml_err(d, at_v1(m, "leafCellNumber", "gpuNumber"), GS_EINVAL,
                                   "AffinityGroup.Members has non-positive LeafCellNumber");
            in_group |= cells == leaf;
            if ((rc = add_tasks(b, m, pods, cells, d))) return rc;
        }
        if (!in_group)
            return gs_yaml_err(d, ms ? ms : ag, GS_EINVAL,
                               "AffinityGroup.Members does not contains current Pod");
    } else if ((rc = add_tasks(b, n, 1, leaf, d))) {
        return rc;
    }
    if (!(s->vc = keep(b, vc))) return GS_ENOMEM;
    s->priority = (int)prio;
    if (*pinned && !(s->pinned_cell = keep(b, pinned))) return GS_ENOMEM;
    if (*type && !(s->gpu_type = keep(b, type))) return GS_ENOMEM;
    if (*gname && (!s->name || !*s->name) && !(s->name = keep(b, gname))) return GS_ENOMEM;
    s->lazy_preemption = lazy;
    return 0;
}

/* ---- v2 --------------------------------------------------------------------------------- */

typedef struct v2 {
    const gs_cluster *c;
    gs_spec_buf *b;
    gs_diag *d;
    int current; /* containsCurrentPod seen */
    int depth;
} v2;

/* Cell type 'name' (at node 'at') as GPUs per cell, its id (-1: a GPU type that is no
 * cell type) and its leaf type name. */
static int cell_gpus(v2 *v, struct fy_node *at, const char *what, const char *name, int *gpus,
                     int *id, const char **leaf)
{
    *id = v->c ? gs_cluster_find_cell_type(v->c, name) : -1;
    if (*id >= 0) {
        const gs_cell_type *ct = gs_cluster_cell_type(v->c, *id);
        const gs_cell_type *lt = ct;
        while (lt->child >= 0) lt = gs_cluster_cell_type(v->c, lt->child);
        *gpus = ct->gpus > 0 ? ct->gpus : 1;
        *leaf = lt->name;
        return 0;
    }
    if (v->c && gs_cluster_find_gpu_type(v->c, name) >= 0) {
        *gpus = 1;
        *leaf = name;
        return 0;
    }
    return gs_yaml_err(v->d, at, GS_EINVAL, "%s '%s' is not a cell type of the cluster", what,
                       name);
}

/* One PodGroupSpec: checks (as HiveD, level by level in its order is not needed: every node
 * is checked once), then its pod's tasks, then its children, in pre-order. */
static int parse_group(v2 *v, struct fy_node *g, int parent, const char *top_type)
{
    gs_diag *d = v->d;
    if (++v->depth > 64) return gs_yaml_err(d, g, GS_ERANGE, "pod groups nested deeper than 64");
    if (!fy_node_is_mapping(g))
        return gs_yaml_err(d, g, GS_EPARSE, "a pod group must be a mapping");
    static const char *const gk[] = {"name", "withinOneCell", "pod", "pods", "childGroups", NULL};
    int rc = gs_yaml_check_keys(g, gk, "a pod group", d);
    if (rc) return rc;
    struct fy_node *pods = gs_yaml_get(g, "pods");
    if (pods && !ynull(pods) &&
        (!fy_node_is_sequence(pods) || fy_node_sequence_item_count(pods) > 0))
        return gs_yaml_err(d, pods, GS_EINVAL,
                           "Do not support PodGroup.Pods field, please specify PodGroup.Pod");
    const char *within, *name;
    if ((rc = str_of(gs_yaml_get(g, "withinOneCell"), "withinOneCell", &within, d)) ||
        (rc = str_of(gs_yaml_get(g, "name"), "name", &name, d)))
        return rc;
    int me = parent;
    if (*within) {
        int gpus, id;
        const char *leaf;
        if ((rc = cell_gpus(v, gs_yaml_get(g, "withinOneCell"), "withinOneCell", within, &gpus, &id,
                            &leaf)))
            return rc;
        if ((rc = open_group(v->b, g, within, parent, &me, d))) return rc;
    }
    struct fy_node *p = gs_yaml_get(g, "pod");
    if (p && !ynull(p)) {
        if (!fy_node_is_mapping(p)) return gs_yaml_err(d, p, GS_EPARSE, "'pod' must be a mapping");
        static const char *const pk[] = {"podMinNumber", "podMaxNumber", "cellsPerPod",
                                         "containsCurrentPod", NULL};
        if ((rc = gs_yaml_check_keys(p, pk, "a pod group's pod", d))) return rc;
        int64_t pmin, pmax, cells = 0;
        int cur = 0;
        const char *ctype = "";
        struct fy_node *cp = gs_yaml_get(p, "cellsPerPod");
        if (cp && !ynull(cp)) {
            if (!fy_node_is_mapping(cp))
                return gs_yaml_err(d, cp, GS_EPARSE, "'cellsPerPod' must be a mapping");
            static const char *const ck[] = {"cellType", "cellNumber", NULL};
            if ((rc = gs_yaml_check_keys(cp, ck, "cellsPerPod", d)) ||
                (rc = str_of(gs_yaml_get(cp, "cellType"), "cellType", &ctype, d)) ||
                (rc = i32_of(cp, "cellNumber", &cells, d)))
                return rc;
        }
        if ((rc = i32_of(p, "podMinNumber", &pmin, d)) ||
            (rc = i32_of(p, "podMaxNumber", &pmax, d)) ||
            (rc = bool_of(p, "containsCurrentPod", &cur, d)))
            return rc;
        if (pmin <= 0)
            return gs_yaml_err(d, at_key(p, "podMinNumber"), GS_EINVAL,
                               "PodGroup.Pod have non-positive PodMinNumber");
        if (pmax <= 0)
            return gs_yaml_err(d, at_key(p, "podMaxNumber"), GS_EINVAL,
                               "PodGroup.Pod have non-positive PodMaxNumber");
        if (cells <= 0)
            return gs_yaml_err(d, cp ? at_key(cp, "cellNumber") : p, GS_EINVAL,
                               "PodGroup.Pod have non-positive CellsPerPod.CellNumber");
        if (cur && v->current++)
            return gs_yaml_err(d, at_key(p, "containsCurrentPod"), GS_EINVAL,
                               "PodGroup.Pod have multiple ContainsCurrentPod");
        if (!*ctype) ctype = top_type; /* HiveD fills it from the request's cell type */
        int64_t per = cells;
        int pod_group = 0, id = -1;
        if (*ctype) {
            int gpus;
            const char *leaf;
            if ((rc = cell_gpus(v, cp ? at_key(cp, "cellType") : p, "cellsPerPod.cellType", ctype,
                                &gpus, &id, &leaf)))
                return rc;
            per = cells * gpus;
            /* one whole cell below node level: the pod's GPUs inside that cell */
            const gs_cell_type *ct = id >= 0 ? gs_cluster_cell_type(v->c, id) : NULL;
            pod_group = ct && ct->child >= 0 && !ct->is_node && cells == 1;
        }
        if (per > 4096)
            return gs_yaml_err(d, p, GS_ERANGE, "a pod of %lld GPUs (at most 4096)",
                               (long long)per);
        for (int64_t k = 0; k < pmin; k++) {
            int gi;
            if (pod_group && (rc = open_group(v->b, p, ctype, me, &gi, d))) return rc;
            if ((rc = add_tasks(v->b, p, 1, per, d))) return rc;
            if (pod_group) v->b->groups[gi].hi = v->b->ntasks;
        }
    }
    struct fy_node *kids = gs_yaml_get(g, "childGroups");
    if (kids && !ynull(kids)) {
        if (!fy_node_is_sequence(kids))
            return gs_yaml_err(d, kids, GS_EPARSE, "'childGroups' must be a list");
        void *it = NULL;
        struct fy_node *k;
        while ((k = fy_node_sequence_iterate(kids, &it)))
            if ((rc = parse_group(v, k, me, top_type))) return rc;
    }
    if (me != parent) {
        gs_task_group *x = &v->b->groups[me];
        x->hi = v->b->ntasks;
        if (x->hi == x->lo)
            return gs_yaml_err(d, g, GS_EINVAL, "pod group '%s' has no pods (withinOneCell %s)",
                               name, within);
    }
    v->depth--;
    return 0;
}

static int parse_v2(struct fy_node *n, const gs_cluster *c, gs_job_spec *s, gs_spec_buf *b,
                    gs_diag *d)
{
    static const char *const keys[] = {
        "version",    "virtualCluster", "priority",          "pinnedCellId",         "cellType",
        "cellNumber", "podRootGroup",   "gangReleaseEnable", "lazyPreemptionEnable", NULL};
    int rc = gs_yaml_check_keys(n, keys, "a HiveD pod-scheduling spec (v2)", d);
    if (rc) return rc;
    const char *vc, *pinned, *type;
    int64_t prio, cells;
    int lazy = 0, gang_release = 0;
    if ((rc = str_of(gs_yaml_get(n, "virtualCluster"), "virtualCluster", &vc, d)) ||
        (rc = i32_of(n, "priority", &prio, d)) ||
        (rc = str_of(gs_yaml_get(n, "pinnedCellId"), "pinnedCellId", &pinned, d)) ||
        (rc = str_of(gs_yaml_get(n, "cellType"), "cellType", &type, d)) ||
        (rc = i32_of(n, "cellNumber", &cells, d)) ||
        (rc = bool_of(n, "gangReleaseEnable", &gang_release, d)) ||
        (rc = bool_of(n, "lazyPreemptionEnable", &lazy, d)))
        return rc;
    struct fy_node *root = gs_yaml_get(n, "podRootGroup");
    if (root && ynull(root)) root = NULL;
    if ((rc = check_vc_prio(n, vc, prio, d))) return rc;
    if (cells <= 0)
        return gs_yaml_err(d, at_key(n, "cellNumber"), GS_EINVAL, "CellNumber is non-positive");
    v2 v = {c, b, d, 0, 0};
    const char *leaf = "";
    if (*type) {
        int gpus, id;
        if ((rc = cell_gpus(&v, at_key(n, "cellType"), "cellType", type, &gpus, &id, &leaf)))
            return rc;
    }
    const char *gname = "";
    if (root) {
        if (!fy_node_is_mapping(root))
            return gs_yaml_err(d, root, GS_EPARSE, "'podRootGroup' must be a mapping");
        if ((rc = str_of(gs_yaml_get(root, "name"), "name", &gname, d))) return rc;
        if (!*gname)
            return gs_yaml_err(d, at_key(root, "name"), GS_EINVAL, "PodRootGroup.Name is empty");
        if ((rc = parse_group(&v, root, -1, type))) return rc;
        if (!v.current)
            return gs_yaml_err(d, root, GS_EINVAL, "PodGroup.Pod does not contain current Pod");
    } else {
        /* HiveD's default: the pod alone, cellNumber cells of cellType */
        int gpus = 1, id = -1;
        const char *lf;
        if (*type && (rc = cell_gpus(&v, at_key(n, "cellType"), "cellType", type, &gpus, &id, &lf)))
            return rc;
        const gs_cell_type *ct = id >= 0 ? gs_cluster_cell_type(c, id) : NULL;
        int gi = -1;
        if (ct && ct->child >= 0 && !ct->is_node && cells == 1 &&
            (rc = open_group(b, n, type, -1, &gi, d)))
            return rc;
        if ((rc = add_tasks(b, n, 1, cells * gpus, d))) return rc;
        if (gi >= 0) b->groups[gi].hi = b->ntasks;
    }
    if (!(s->vc = keep(b, vc))) return GS_ENOMEM;
    s->priority = (int)prio;
    if (*pinned && !(s->pinned_cell = keep(b, pinned))) return GS_ENOMEM;
    if (*leaf && !(s->gpu_type = keep(b, leaf))) return GS_ENOMEM;
    if (*gname && (!s->name || !*s->name) && !(s->name = keep(b, gname))) return GS_ENOMEM;
    s->lazy_preemption = lazy;
    return 0;
}

int gs_hived_spec_parse(struct fy_node *n, const gs_cluster *c, gs_job_spec *s, gs_spec_buf *b,
                        gs_diag *d)
{
    if (!n || !fy_node_is_mapping(n))
        return gs_yaml_err(d, n, GS_EPARSE, "a HiveD pod-scheduling spec must be a mapping");
    const char *ver;
    int rc = str_of(gs_yaml_get(n, "version"), "version", &ver, d);
    if (rc) return rc;
    b->ntasks = b->ngroups = 0;
    if (!*ver || !strcmp(ver, "v1"))
        rc = parse_v1(n, s, b, d);
    else if (!strcmp(ver, "v2"))
        rc = parse_v2(n, c, s, b, d);
    else
        rc = gs_yaml_err(d, gs_yaml_get(n, "version"), GS_EINVAL, "Unknown version %s", ver);
    if (rc) return rc;
    finish(s, b);
    s->gang = 1;
    s->hived_strict = 1;
    return 0;
}

int gs_hived_spec_parse_text(const char *file, const char *buf, size_t len, const gs_cluster *c,
                             gs_job_spec *s, gs_spec_buf *b, gs_diag *d)
{
    gs_yaml y;
    if (d && !d->file) d->file = file;
    int rc = gs_yaml_load(&y, file, buf, len, d);
    if (rc) return rc;
    rc = gs_hived_spec_parse(gs_yaml_root(&y), c, s, b, d);
    gs_yaml_release(&y);
    return rc;
}

/* ---- the plain form --------------------------------------------------------------------- */

/* members: [{tasks: N, gpus_per_task: G}, ...] of one level (in mapping 'in') */
static int plain_members(struct fy_node *in, gs_spec_buf *b, gs_diag *d)
{
    struct fy_node *ms = gs_yaml_get(in, "members");
    if (!fy_node_is_sequence(ms) || fy_node_sequence_item_count(ms) == 0)
        return gs_yaml_err(d, at_val(in, "members"), GS_EPARSE,
                           "'members' must be a non-empty list of {tasks, gpus_per_task}");
    void *it = NULL;
    struct fy_node *m;
    while ((m = fy_node_sequence_iterate(ms, &it))) {
        static const char *const mk[] = {"tasks", "gpus_per_task", NULL};
        if (!fy_node_is_mapping(m))
            return gs_yaml_err(d, m, GS_EPARSE,
                               "a member must be a mapping {tasks, gpus_per_task}");
        int rc = gs_yaml_check_keys(m, mk, "a member", d);
        if (rc) return rc;
        int64_t tasks = 1, gpt;
        struct fy_node *x = gs_yaml_get(m, "tasks");
        if (x && (rc = gs_yaml_int(x, "tasks", 1, MAX_TASKS, &tasks, d))) return rc;
        if (!(x = gs_yaml_get(m, "gpus_per_task")))
            return gs_yaml_err(d, m, GS_EPARSE, "a member needs 'gpus_per_task'");
        if ((rc = gs_yaml_int(x, "gpus_per_task", 1, 4096, &gpt, d))) return rc;
        if ((rc = add_tasks(b, m, tasks, gpt, d))) return rc;
    }
    return 0;
}

static int plain_groups(struct fy_node *gs, int parent, int depth, const gs_cluster *c,
                        gs_spec_buf *b, gs_diag *d);

/* One {within, members, groups}: its members' tasks, then its groups'. */
static int plain_group(struct fy_node *g, int parent, int depth, const gs_cluster *c,
                       gs_spec_buf *b, gs_diag *d)
{
    static const char *const gk[] = {"within", "members", "groups", NULL};
    if (!fy_node_is_mapping(g))
        return gs_yaml_err(d, g, GS_EPARSE, "a group must be a mapping {within, members, groups}");
    int rc = gs_yaml_check_keys(g, gk, "a group", d);
    if (rc) return rc;
    struct fy_node *w = gs_yaml_get(g, "within"), *ms = gs_yaml_get(g, "members"),
                   *sub = gs_yaml_get(g, "groups");
    if (!ms && !sub) return gs_yaml_err(d, g, GS_EPARSE, "a group needs 'members' or 'groups'");
    const char *within;
    if ((rc = str_of(w, "within", &within, d))) return rc;
    int me = parent;
    if (*within) {
        if (c && gs_cluster_find_cell_type(c, within) < 0)
            return gs_yaml_err(d, w, GS_EINVAL, "within: '%s' is not a cell type of the cluster",
                               within);
        if ((rc = open_group(b, g, within, parent, &me, d))) return rc;
    }
    if (ms && (rc = plain_members(g, b, d))) return rc;
    if (sub && (rc = plain_groups(sub, me, depth + 1, c, b, d))) return rc;
    if (me != parent) b->groups[me].hi = b->ntasks;
    return 0;
}

static int plain_groups(struct fy_node *gs, int parent, int depth, const gs_cluster *c,
                        gs_spec_buf *b, gs_diag *d)
{
    if (depth > 64) return gs_yaml_err(d, gs, GS_ERANGE, "groups nested deeper than 64");
    if (!fy_node_is_sequence(gs) || fy_node_sequence_item_count(gs) == 0)
        return gs_yaml_err(d, at_val(fy_node_get_parent(gs), "groups"), GS_EPARSE,
                           "'groups' must be a non-empty list");
    void *it = NULL;
    struct fy_node *g;
    while ((g = fy_node_sequence_iterate(gs, &it))) {
        int rc = plain_group(g, parent, depth, c, b, d);
        if (rc) return rc;
    }
    return 0;
}

int gs_job_groups_parse(struct fy_node *job, const gs_cluster *c, gs_job_spec *s, gs_spec_buf *b,
                        gs_diag *d)
{
    struct fy_node *ms = gs_yaml_get(job, "members"), *gs = gs_yaml_get(job, "groups"),
                   *w = gs_yaml_get(job, "within");
    if (!ms && !gs && !w) return 0;
    b->ntasks = b->ngroups = 0;
    const char *within;
    int rc = str_of(w, "within", &within, d);
    if (rc) return rc;
    int root = -1;
    if (*within) {
        if (c && gs_cluster_find_cell_type(c, within) < 0)
            return gs_yaml_err(d, w, GS_EINVAL, "within: '%s' is not a cell type of the cluster",
                               within);
        if ((rc = open_group(b, w, within, -1, &root, d))) return rc;
    }
    if (ms && (rc = plain_members(job, b, d))) return rc;
    if (gs && (rc = plain_groups(gs, root, 1, c, b, d))) return rc;
    if (!ms && !gs) {                   /* within alone: the job's own tasks x gpus_per_task */
        b->groups[root].hi = s->ntasks; /* sizes stay as they are: only the group is new */
        s->groups = b->groups;
        s->ngroups = b->ngroups;
        return 0;
    }
    if (root >= 0) b->groups[root].hi = b->ntasks;
    finish(s, b);
    return 0;
}
