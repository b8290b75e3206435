/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scenario.c - scenario files: a cluster, a policy, timed submissions and
 * cluster events (node failures, bad nodes, cancellations,
 * reconfigurations), and expectations about starts, placements (final or at
 * a time, per task, chains and cells, negative checks), preemptions, states
 * and the policy's inspectable state, checked against a simulation; or the
 * refusal a scenario expects (expect_error) (docs/scenarios.md).
 *
 * Invariants: a scenario is simulated exactly like `gsched sim` would run
 * it (inspect probes only pause between engine steps, never change them);
 * every expectation is checked and reported, in file order; runs and
 * placements come from the engine's records: "the placement at t" is the
 * job's GPUs after its last record at or before t, and "running at t"
 * means holding GPUs then (a run [start, end) covers t when start <= t <
 * end; a suspended job holds none; GPUs a reconfiguration removed from
 * under a running job count as held, though no placement names them); node names are compared as
 * names (several node cells of different chains may share one: events apply to each of them).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "scenario.h"
#include "solver.h"
#include "yaml.h"

/*
 * A job's GPUs from time t on (n = 0: none), GPUs at pool[off .. off + n),
 * indices of cluster c (the engine's cluster then: a reconfiguration
 * replaces it, and the indices of a placement are only meaningful in its
 * own cluster).
 */
typedef struct snap {
    int32_t slot;
    gs_time t;
    size_t off;
    int32_t n;
    int32_t gone; /* GPUs it ran on that a reconfiguration removed (gs_job.vanished) */
    const gs_cluster *c;
} snap;

typedef struct run_log {
    const gs_engine *e;
    int32_t *last; /* by slot: index of the latest snapshot or -1 */
    size_t caplast;
    snap *s;
    size_t ns, caps;
    int32_t *pool;
    size_t npool, cappool;
    gs_simwait *wait; /* jobs' holds, dependencies, array throttles (simwait.h); NULL none */
} run_log;

static void *grow_or_die(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap * 2 : 256;
    while (nc < need) nc *= 2;
    void *q = realloc(p, nc * size);
    if (!q) abort(); /* the observer has no error path; a scenario is small */
    *cap = nc;
    return q;
}

/* Remember j's GPUs at r->t when they differ from the latest snapshot. */
static void log_alloc(run_log *l, const gs_record *r)
{
    const gs_job *j = r->job;
    int32_t s = j->slot, n = j->alloc ? j->nalloc : 0, gone = j->alloc ? j->vanished : 0;
    if (l->last[s] >= 0) {
        const snap *p = &l->s[l->last[s]];
        if (p->n == n && p->gone == gone && p->c == gs_engine_cluster(l->e) &&
            (!n || !memcmp(l->pool + p->off, j->alloc, (size_t)n * sizeof *j->alloc)))
            return;
    } else if (!n && !gone) {
        return;
    }
    l->s = grow_or_die(l->s, &l->caps, l->ns + 1, sizeof *l->s);
    l->pool = grow_or_die(l->pool, &l->cappool, l->npool + (size_t)n, sizeof *l->pool);
    if (n) memcpy(l->pool + l->npool, j->alloc, (size_t)n * sizeof *l->pool);
    l->s[l->ns] = (snap){s, r->t, l->npool, n, gone, gs_engine_cluster(l->e)};
    l->last[s] = (int32_t)l->ns++;
    l->npool += (size_t)n;
}

/* Every record of a job: its GPUs may have changed (start, resume, migration, resize,
 * rescale, pack, or the end of a run). */
static void log_record(void *ud, const gs_record *r)
{
    run_log *l = ud;
    if (!r->job) return;
    int32_t s = r->job->slot;
    if ((size_t)s >= l->caplast) {
        size_t old = l->caplast;
        l->last = grow_or_die(l->last, &l->caplast, (size_t)s + 1, sizeof *l->last);
        for (size_t i = old; i < l->caplast; i++) l->last[i] = -1;
    }
    log_alloc(l, r);
}

/*
 * The GPUs slot held at t: after the last snapshot taken at or before t
 * (n = 0: none); with final, its last placement (the current one if it
 * holds GPUs at the end, else its last run's).  *c: their cluster.
 */
static void placement_at(const run_log *l, int32_t slot, gs_time t, int final, const int32_t **g,
                         int *n, const gs_cluster **c)
{
    *g = NULL;
    *n = 0;
    *c = gs_engine_cluster(l->e);
    for (size_t i = 0; i < l->ns && (final || l->s[i].t <= t); i++)
        if (l->s[i].slot == slot && (!final || l->s[i].n)) {
            *g = l->pool + l->s[i].off;
            *n = l->s[i].n;
            *c = l->s[i].c;
        }
}

/* Whether slot held GPUs at t (runs are half-open: [start, end)); a job whose GPUs a
 * reconfiguration removed, running on there, holds them still. */
static int running_at(const run_log *l, int32_t slot, gs_time t)
{
    int held = 0;
    for (size_t i = 0; i < l->ns && l->s[i].t <= t; i++)
        if (l->s[i].slot == slot) held = l->s[i].n > 0 || l->s[i].gone > 0;
    return held;
}

static void run_log_release(run_log *l)
{
    gs_simwait_destroy(l->wait);
    l->wait = NULL;
    free(l->last);
    free(l->s);
    free(l->pool);
}

/* ---- parsing helpers ------------------------------------------------------------------- */

static int sec_of(struct fy_node *n, const char *what, gs_time *out, gs_diag *d)
{
    const char *s = gs_yaml_str(n);
    if (!s) return gs_yaml_err(d, n, GS_EPARSE, "'%s' must be a number of seconds", what);
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    int rc = gs_parse_duration(s, GS_SEC, out, &sub);
    if (!rc && *out > (gs_time)100000000000LL * GS_SEC) /* as traces */
        rc = gs_diag_set(&sub, GS_ERANGE, 0, 0, "more than 1e11 seconds");
    if (rc)
        return gs_yaml_err(d, n, GS_EPARSE,
                           "'%s' must be a non-negative number of seconds or a duration (90, "
                           "0.5, 90s, 1h30m, HH:MM:SS), got '%s': %s",
                           what, s, sub.msg);
    return 0;
}

static int prio_of(struct fy_node *n, int *out, gs_diag *d)
{
    const char *s = gs_yaml_str(n);
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    if (!s || gs_parse_priority(s, GS_PRIORITY_MAX, out, &sub))
        return gs_yaml_err(d, n, GS_EPARSE,
                           "'priority' must be an integer >= -1 or prod, test, oppo%s%s",
                           s ? ": " : "", s ? sub.msg : "");
    return 0;
}

/* A job entry: the gsched job fields (docs/trace-format.md) in YAML; tasks of different sizes
 * and withinOneCell groups as 'members' / 'groups' / 'within', or a HiveD pod-scheduling spec
 * under 'hived' (src/config/hived_spec.c; what it holds lives in b). */
static int parse_job(struct fy_node *n, const gs_cluster *c, gs_job_spec *s, char **strs, int *nstr,
                     gs_spec_buf *b, gs_diag *d)
{
    static const char *const keys[] = {
        "id", "submit", "duration", "gpus", "tasks", "gpus_per_task", "gpu_type", "user", "vc",
        "priority", "model", "name", "gang", "pinned_cell", "lazy_preemption", "cpus", "min_gpus",
        "max_gpus", "gpu_mem", "members", "groups", "within", "hived",
        /* the stage before the queue (simwait.h) */
        "dependency", "hold", "array_id", "array_limit", NULL};
    int rc = gs_yaml_check_keys(n, keys, "a job", d);
    if (rc) return rc;
    gs_job_spec_init(s);
    /* the job's shape comes from one place: its HiveD spec, its members, or gpus/tasks */
    static const char *const hived_owns[] = {
        "gpus",        "tasks",           "gpus_per_task", "gpu_type", "vc",     "priority", "gang",
        "pinned_cell", "lazy_preemption", "members",       "groups",   "within", NULL};
    static const char *const members_own[] = {"gpus", "tasks", "gpus_per_task", NULL};
    struct fy_node *hv = gs_yaml_get(n, "hived");
    int shaped = hv || gs_yaml_get(n, "members") || gs_yaml_get(n, "groups");
    for (const char *const *k = hv ? hived_owns : members_own; shaped && *k; k++)
        if (gs_yaml_get(n, *k))
            return gs_yaml_err(
                d, gs_yaml_get(n, *k), GS_EPARSE, "'%s' and '%s' both given: the job's %s says it",
                *k, hv ? "hived" : "members/groups", hv ? "HiveD spec" : "members and groups");
    int64_t v;
    struct fy_node *x;
#define STR(key, field)                                                            \
    if ((x = gs_yaml_get(n, key))) {                                               \
        const char *t = gs_yaml_str(x);                                            \
        if (!t) return gs_yaml_err(d, x, GS_EPARSE, "'%s' must be a string", key); \
        strs[*nstr] = strdup(t);                                                   \
        if (!strs[*nstr]) return GS_ENOMEM;                                        \
        s->field = strs[(*nstr)++];                                                \
    }
    if (!(x = gs_yaml_get(n, "id"))) return gs_yaml_err(d, n, GS_EPARSE, "a job needs an 'id'");
    if ((rc = gs_yaml_int(x, "id", 0, INT64_MAX / 2, &v, d))) return rc;
    s->id = v;
    if ((x = gs_yaml_get(n, "submit")) && (rc = sec_of(x, "submit", &s->submit, d))) return rc;
    if (!(x = gs_yaml_get(n, "duration")))
        return gs_yaml_err(d, n, GS_EPARSE, "job %lld needs a 'duration'", (long long)s->id);
    if ((rc = sec_of(x, "duration", &s->duration, d))) return rc;
    int64_t gpus = 0, tasks = 0, gpt = 0;
    if ((x = gs_yaml_get(n, "gpus")) && (rc = gs_yaml_int(x, "gpus", 1, 1 << 20, &gpus, d)))
        return rc;
    if ((x = gs_yaml_get(n, "tasks")) && (rc = gs_yaml_int(x, "tasks", 1, 1 << 20, &tasks, d)))
        return rc;
    if ((x = gs_yaml_get(n, "gpus_per_task")) &&
        (rc = gs_yaml_int(x, "gpus_per_task", 1, 4096, &gpt, d)))
        return rc;
    if (!gpt) gpt = tasks && gpus ? gpus / tasks : 1;
    if (!tasks) tasks = gpus ? gpus / gpt : 1;
    if (gpus && gpus != tasks * gpt)
        return gs_yaml_err(d, n, GS_EPARSE, "job %lld: gpus != tasks x gpus_per_task",
                           (long long)s->id);
    if (tasks * gpt > (1 << 20))
        return gs_yaml_err(d, n, GS_ERANGE, "job %lld: more than %d GPUs", (long long)s->id,
                           1 << 20);
    s->ntasks = (int)tasks;
    s->gpus_per_task = (int)gpt;
    STR("gpu_type", gpu_type);
    STR("user", user);
    STR("vc", vc);
    STR("model", model);
    STR("name", name);
    STR("pinned_cell", pinned_cell);
    if ((x = gs_yaml_get(n, "priority")) && (rc = prio_of(x, &s->priority, d))) return rc;
    if ((x = gs_yaml_get(n, "gang")) && (rc = gs_yaml_bool(x, "gang", &s->gang, d))) return rc;
    if ((x = gs_yaml_get(n, "lazy_preemption")) &&
        (rc = gs_yaml_bool(x, "lazy_preemption", &s->lazy_preemption, d)))
        return rc;
    if ((x = gs_yaml_get(n, "cpus"))) {
        if ((rc = gs_yaml_int(x, "cpus", 0, 1 << 20, &v, d))) return rc;
        s->cpus_per_task = (int)v;
    }
    if ((x = gs_yaml_get(n, "min_gpus"))) {
        if ((rc = gs_yaml_int(x, "min_gpus", 1, 1 << 20, &v, d))) return rc;
        s->min_gpus = (int)v;
    }
    if ((x = gs_yaml_get(n, "max_gpus"))) {
        if ((rc = gs_yaml_int(x, "max_gpus", 1, 1 << 20, &v, d))) return rc;
        s->max_gpus = (int)v;
    }
    if ((x = gs_yaml_get(n, "gpu_mem"))) {
        int64_t mb = gs_parse_mem_mb(gs_yaml_str(x));
        if (mb < 0 || mb > INT32_MAX)
            return gs_yaml_err(d, x, GS_EPARSE, "'gpu_mem' must be a size such as 16G");
        s->gpu_mem_mb = (int)mb;
    }
#undef STR
    if (hv) return gs_hived_spec_parse(hv, c, s, b, d);
    return gs_job_groups_parse(n, c, s, b, d);
}

/* ---- expectations ------------------------------------------------------------------------------
 */

typedef struct clusters {
    gs_cluster **v; /* the scenario's cluster, then each reconfiguration's: alive until the
                       engine is gone */
    size_t n, cap;
} clusters;

typedef struct report {
    FILE *out;
    const char *name;
    int pass, fail;
    const clusters *all; /* names in expectations are checked against every one */
} report;

static void verdict(report *r, int ok, struct fy_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void verdict(report *r, int ok, struct fy_node *n, const char *fmt, ...)
{
    int line = 0, col = 0;
    gs_yaml_pos(n, &line, &col);
    /* an empty flow collection has no token of its own: its key's item has */
    for (struct fy_node *p = n; !line && p && (p = fy_node_get_parent(p));)
        gs_yaml_pos(p, &line, &col);
    fprintf(r->out, "%s - %s (line %d): ", ok ? "ok" : "not ok", r->name, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
    fputc('\n', r->out);
    if (ok)
        r->pass++;
    else
        r->fail++;
}

static void fmt_t(char *b, size_t cap, gs_time t)
{
    if (t == GS_TIME_NONE)
        snprintf(b, cap, "never");
    else
        gs_fmt_sec(b, cap, t);
}

static int check_time(report *r, struct fy_node *x, const char *what, int64_t id, gs_time got,
                      gs_diag *d)
{
    const char *s = gs_yaml_str(x);
    char g[32];
    fmt_t(g, sizeof g, got);
    if (s && !strcmp(s, "never")) {
        verdict(r, got == GS_TIME_NONE, x, "job %lld %s never (got %s)", (long long)id, what, g);
        return 0;
    }
    gs_time want;
    int rc = sec_of(x, what, &want, d);
    if (rc) return rc;
    char w[32];
    gs_fmt_sec(w, sizeof w, want);
    /* times compare to the millisecond: overheads are decimal seconds */
    int ok = got != GS_TIME_NONE && llabs(got - want) < GS_MSEC;
    verdict(r, ok, x, "job %lld %s at %s (got %s)", (long long)id, what, w, g);
    return 0;
}

/* ---- placements: node names, cells, chains ---- */

/* Appends printf-style to a fixed buffer, truncating. */
static void cat(char *b, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *b, size_t cap, const char *fmt, ...)
{
    size_t k = strlen(b);
    if (k + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + k, cap - k, fmt, ap);
    va_end(ap);
}

static const char *gpu_node_name(const gs_cluster *c, int32_t g)
{
    return gs_cluster_node(c, gs_cluster_gpu(c, g)->node)->name;
}

/* 1 when some node of a cluster of the scenario is called 'name' (several node cells may
 * share it). */
static int node_known(const report *r, const char *name)
{
    for (size_t k = 0; k < r->all->n; k++) {
        const gs_cluster *c = r->all->v[k];
        for (size_t i = 0; i < gs_cluster_nnodes(c); i++)
            if (!strcmp(gs_cluster_node(c, (int)i)->name, name)) return 1;
    }
    return 0;
}

/* 1 when some cluster of the scenario has cell type 'name'. */
static int type_known(const report *r, const char *name)
{
    for (size_t k = 0; k < r->all->n; k++)
        if (gs_cluster_find_cell_type(r->all->v[k], name) >= 0) return 1;
    return 0;
}

static int on_node(const gs_cluster *c, const int32_t *g, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(gpu_node_name(c, g[k]), name)) return 1;
    return 0;
}

/* The distinct node names of a placement, in GPU order, comma-separated. */
static void node_names(const gs_cluster *c, const int32_t *g, int n, char *b, size_t cap)
{
    b[0] = 0;
    for (int k = 0; k < n; k++) {
        const char *nm = gpu_node_name(c, g[k]);
        int seen = 0;
        for (int i = 0; i < k && !seen; i++) seen = !strcmp(gpu_node_name(c, g[i]), nm);
        if (!seen) cat(b, cap, "%s%s", b[0] ? "," : "", nm);
    }
}

/* The child of cell 'cur' holding GPUs lo..hi (inclusive), or -1 when none holds them all. */
static int kid_holding(const gs_cluster *c, int cur, int32_t lo, int32_t hi)
{
    const gs_cell *p = gs_cluster_cell(c, cur);
    for (int i = 0; i < p->nkids; i++) {
        int k = gs_cluster_cell_kid(c, cur, i);
        const gs_cell *kc = gs_cluster_cell(c, k);
        if (kc->gpu_lo <= lo && hi < kc->gpu_hi) return k;
    }
    return -1;
}

/* The lowest cell holding all of g (cells are in pre-order: each covers a GPU range). */
static int lowest_cell(const gs_cluster *c, const int32_t *g, int n)
{
    int32_t lo = g[0], hi = g[0];
    for (int k = 1; k < n; k++) {
        if (g[k] < lo) lo = g[k];
        if (g[k] > hi) hi = g[k];
    }
    int cur = 0;
    for (;;) {
        int next = kid_holding(c, cur, lo, hi);
        if (next < 0) return cur;
        cur = next;
    }
}

static const char *cell_type_name(const gs_cluster *c, int cell)
{
    int t = gs_cluster_cell(c, cell)->type;
    return t >= 0 ? gs_cluster_cell_type(c, t)->name : NULL;
}

/* HiveD's chain of GPU g: the type of its highest cell that has a cell type, or NULL. */
static const char *chain_of(const gs_cluster *c, int32_t g)
{
    int cur = 0;
    for (;;) {
        int next = kid_holding(c, cur, g, g);
        if (next < 0) return NULL;
        const char *t = cell_type_name(c, next);
        if (t) return t;
        cur = next;
    }
}

/* A cell named in messages: "TYPE ADDRESS", the kind for untyped cells. */
static void cell_label(const gs_cluster *c, int cell, char *b, size_t cap)
{
    const gs_cell *p = gs_cluster_cell(c, cell);
    const char *t = cell_type_name(c, cell);
    snprintf(b, cap, "%s%s%s", t ? t : gs_cell_kind_name((gs_cell_kind)p->kind),
             p->name && p->name[0] ? " " : "", p->name ? p->name : "");
}

/* The placement a job expectation checks: at a time, or the final (current or last) one. */
typedef struct place {
    const int32_t *g;
    int n;
    const gs_cluster *c; /* the cluster of g's indices */
    int timed;
    gs_time at;
    char at_s[48]; /* " at T" or "" */
} place;

static void place_of(const run_log *lg, const gs_job *j, int timed, gs_time at, place *p)
{
    p->timed = timed;
    p->at = at;
    p->at_s[0] = 0;
    if (timed) {
        char ts[32];
        gs_fmt_sec(ts, sizeof ts, at);
        snprintf(p->at_s, sizeof p->at_s, " at %s", ts);
    }
    placement_at(lg, j->slot, at, !timed, &p->g, &p->n, &p->c);
}

/* A list of node names, each known to the cluster; "a,b" in out. */
static int name_list(const report *r, struct fy_node *x, const char *key, char *out, size_t cap,
                     gs_diag *d)
{
    if (!fy_node_is_sequence(x)) return gs_yaml_err(d, x, GS_EPARSE, "'%s' must be a list", key);
    out[0] = 0;
    void *it = NULL;
    struct fy_node *e2;
    while ((e2 = fy_node_sequence_iterate(x, &it))) {
        const char *nm = gs_yaml_str(e2);
        if (!nm || !node_known(r, nm))
            return gs_yaml_err(d, e2, GS_EUNKNOWN, "unknown node '%s'", nm ? nm : "?");
        cat(out, cap, "%s%s", out[0] ? "," : "", nm);
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* tasks: [{node: X, gpus: [i, ...]}, ...] - every task, in task order. */
static int check_tasks(report *r, const gs_job *j, const place *p, struct fy_node *x, gs_diag *d)
{
    if (!fy_node_is_sequence(x))
        return gs_yaml_err(d, x, GS_EPARSE, "'tasks' must be a list of {node, gpus}");
    const gs_cluster *c = p->c;
    char want[1024] = "", got[1024] = "";
    int want_n = fy_node_sequence_item_count(x);
    int ok = want_n ? p->n > 0 : p->n == 0; /* tasks: [] = holds no GPUs */
    /* the tasks of the placement: the job's task sizes (a resized elastic job keeps its
     * task size, so its task count is its GPUs over that) */
    int ntasks = j->task_off ? j->ntasks : (j->gpus_per_task ? p->n / j->gpus_per_task : 0);
    if (ntasks != want_n) ok = 0;
    void *it = NULL;
    struct fy_node *tn;
    int t = 0;
    while ((tn = fy_node_sequence_iterate(x, &it))) {
        static const char *const keys[] = {"node", "gpus", NULL};
        int rc = gs_yaml_check_keys(tn, keys, "a task placement", d);
        if (rc) return rc;
        struct fy_node *nn = gs_yaml_get(tn, "node"), *gn = gs_yaml_get(tn, "gpus");
        const char *nm = gs_yaml_str(nn);
        if (!nm) return gs_yaml_err(d, tn, GS_EPARSE, "a task placement needs 'node'");
        if (!node_known(r, nm)) return gs_yaml_err(d, nn, GS_EUNKNOWN, "unknown node '%s'", nm);
        cat(want, sizeof want, "%s%s", want[0] ? " " : "", nm);
        int wg[256], nwg = 0;
        if (gn) {
            if (!fy_node_is_sequence(gn))
                return gs_yaml_err(d, gn, GS_EPARSE, "'gpus' must be a list of GPU indices");
            void *it2 = NULL;
            struct fy_node *v;
            while ((v = fy_node_sequence_iterate(gn, &it2))) {
                int64_t k;
                if ((rc = gs_yaml_int(v, "GPU index", 0, 1 << 20, &k, d))) return rc;
                if (nwg == 256) return gs_yaml_err(d, v, GS_ERANGE, "more than 256 GPUs");
                wg[nwg++] = (int)k;
            }
            qsort(wg, (size_t)nwg, sizeof *wg, cmp_int);
            cat(want, sizeof want, ":[");
            for (int i = 0; i < nwg; i++) cat(want, sizeof want, "%s%d", i ? "," : "", wg[i]);
            cat(want, sizeof want, "]");
        }
        if (t < ntasks) {
            int first = gs_job_task_first(j, t), ng = gs_job_task_gpus(j, t);
            if (first + ng > p->n) {
                ok = 0;
            } else {
                int hg[256], nh = 0;
                for (int i = 0; i < ng; i++) {
                    int32_t g = p->g[first + i];
                    if (strcmp(gpu_node_name(c, g), nm)) ok = 0;
                    if (nh < 256) hg[nh++] = gs_cluster_gpu(c, g)->local;
                }
                qsort(hg, (size_t)nh, sizeof *hg, cmp_int);
                if (gn && (nh != nwg || memcmp(hg, wg, (size_t)nh * sizeof *hg))) ok = 0;
            }
        }
        t++;
    }
    for (int k = 0; k < ntasks; k++) {
        int first = gs_job_task_first(j, k), ng = gs_job_task_gpus(j, k);
        if (first + ng > p->n) break;
        int hg[256], nh = 0;
        for (int i = 0; i < ng && nh < 256; i++)
            hg[nh++] = gs_cluster_gpu(c, p->g[first + i])->local;
        qsort(hg, (size_t)nh, sizeof *hg, cmp_int);
        cat(got, sizeof got, "%s%s:[", got[0] ? " " : "", gpu_node_name(c, p->g[first]));
        for (int i = 0; i < nh; i++) cat(got, sizeof got, "%s%d", i ? "," : "", hg[i]);
        cat(got, sizeof got, "]");
    }
    verdict(r, ok, x, "job %lld's tasks on %s%s (got %s)", (long long)j->id,
            want_n ? want : "no GPUs", p->at_s, p->n ? got : "no placement");
    return 0;
}

/* not_with: [ids] - no node in common with any of those jobs (at the same time, or their
 * final placements). */
static int check_not_with(report *r, gs_engine *e, const run_log *lg, const gs_job *j,
                          const place *p, struct fy_node *x, gs_diag *d)
{
    const gs_cluster *c = p->c;
    if (!fy_node_is_sequence(x)) return gs_yaml_err(d, x, GS_EPARSE, "'not_with' must be a list");
    char ids[256] = "", shared[512] = "";
    void *it = NULL;
    struct fy_node *v;
    while ((v = fy_node_sequence_iterate(x, &it))) {
        int64_t id;
        int rc = gs_yaml_int(v, "job id", 0, INT64_MAX / 2, &id, d);
        if (rc) return rc;
        const gs_job *o = gs_engine_find_job(e, id);
        if (!o) return gs_yaml_err(d, v, GS_EUNKNOWN, "no job with id %lld", (long long)id);
        cat(ids, sizeof ids, "%s%lld", ids[0] ? "," : "", (long long)id);
        place q;
        place_of(lg, o, p->timed, p->at, &q);
        for (int k = 0; k < p->n; k++) {
            const char *nm = gpu_node_name(c, p->g[k]);
            if (on_node(q.c, q.g, q.n, nm)) {
                char tag[160];
                snprintf(tag, sizeof tag, "%s with job %lld", nm, (long long)id);
                if (!strstr(shared, tag))
                    cat(shared, sizeof shared, "%s%s", shared[0] ? ", " : "", tag);
            }
        }
    }
    verdict(r, p->n > 0 && !shared[0], x, "job %lld shares no node with jobs [%s]%s (got %s)",
            (long long)j->id, ids, p->at_s,
            !p->n       ? "no placement"
            : shared[0] ? shared
                        : "none shared");
    return 0;
}

/* The placement checks of a job expectation, in the order of docs/scenarios.md. */
static int check_placement(report *r, gs_engine *e, const run_log *lg, const gs_job *j,
                           const place *p, struct fy_node *n, gs_diag *d)
{
    const gs_cluster *c = p->c;
    long long id = (long long)j->id;
    const int *gi = (const int *)p->g;
    struct fy_node *x;
    int rc;
    char have[512];
    node_names(c, p->g, p->n, have, sizeof have);
    int nhave = have[0] != 0; /* distinct node names */
    for (const char *s = have; *s; s++) nhave += *s == ',';
    if ((x = gs_yaml_get(n, "nodes"))) {
        /* exact set of node names of the placement */
        char wanted[512];
        if ((rc = name_list(r, x, "nodes", wanted, sizeof wanted, d))) return rc;
        int ok = p->n > 0, want = 0;
        void *it = NULL;
        struct fy_node *e2;
        while ((e2 = fy_node_sequence_iterate(x, &it))) {
            ok &= on_node(c, p->g, p->n, gs_yaml_str(e2));
            want++;
        }
        ok &= nhave == want;
        verdict(r, ok, x, "job %lld placed on nodes [%s]%s (got [%s])", id, wanted, p->at_s, have);
    }
    if ((x = gs_yaml_get(n, "node_count"))) {
        int64_t v;
        if ((rc = gs_yaml_int(x, "node_count", 0, 1 << 20, &v, d))) return rc;
        verdict(r, nhave == v, x, "job %lld spans %lld nodes%s (got %d)", id, (long long)v, p->at_s,
                nhave);
    }
    if ((x = gs_yaml_get(n, "spread"))) {
        const char *s = gs_yaml_str(x);
        gs_cell_kind k = p->n ? gs_cluster_spread(c, gi, p->n) : GS_CELL_ROOT;
        int ok = s && p->n && !strcmp(s, gs_cell_kind_name(k));
        verdict(r, ok, x, "job %lld's GPUs share one %s%s (got %s)", id, s ? s : "?", p->at_s,
                p->n ? gs_cell_kind_name(k) : "no placement");
    }
    if ((x = gs_yaml_get(n, "tasks")) && (rc = check_tasks(r, j, p, x, d))) return rc;
    if ((x = gs_yaml_get(n, "chain"))) {
        const char *s = gs_yaml_str(x);
        if (!s || !type_known(r, s))
            return gs_yaml_err(d, x, GS_EUNKNOWN, "'chain': unknown cell type '%s'", s ? s : "?");
        char got[512] = "";
        int ok = p->n > 0;
        for (int k = 0; k < p->n; k++) {
            const char *ch = chain_of(c, p->g[k]);
            if (!ch || strcmp(ch, s)) ok = 0;
            char tag[128];
            snprintf(tag, sizeof tag, "%s", ch ? ch : "(no cell type)");
            int seen = 0;
            for (int i = 0; i < k && !seen; i++) {
                const char *c2 = chain_of(c, p->g[i]);
                seen = !strcmp(c2 ? c2 : "(no cell type)", tag);
            }
            if (!seen) cat(got, sizeof got, "%s%s", got[0] ? "," : "", tag);
        }
        verdict(r, ok, x, "job %lld in chain %s%s (got %s)", id, s, p->at_s,
                p->n ? got : "no placement");
    }
    if ((x = gs_yaml_get(n, "within"))) {
        const char *s = gs_yaml_str(x);
        int kind = -1;
        if (s && !type_known(r, s))
            for (int k = GS_CELL_GPU; k <= GS_CELL_ROOT; k++)
                if (!strcmp(s, gs_cell_kind_name((gs_cell_kind)k))) kind = k;
        if (!s || (!type_known(r, s) && kind < 0))
            return gs_yaml_err(d, x, GS_EUNKNOWN,
                               "'within': unknown cell type '%s' (a cellTypes name of the "
                               "cluster, or node, rack, pcie, socket, pool)",
                               s ? s : "?");
        int ok = 0;
        char got[256] = "no placement";
        if (p->n) {
            int low = lowest_cell(c, p->g, p->n);
            /* one cell of that type holds them all iff it is the lowest or one above it */
            for (int cell = low; cell >= 0 && !ok; cell = gs_cluster_cell(c, cell)->parent) {
                const char *t = cell_type_name(c, cell);
                ok = kind < 0 ? t && !strcmp(t, s) : gs_cluster_cell(c, cell)->kind == kind;
            }
            char lab[200];
            cell_label(c, low, lab, sizeof lab);
            snprintf(got, sizeof got, "lowest common cell: %s", lab);
        }
        verdict(r, ok, x, "job %lld within one %s%s (got %s)", id, s, p->at_s, got);
    }
    if ((x = gs_yaml_get(n, "nodes_subset"))) {
        char wanted[512];
        if ((rc = name_list(r, x, "nodes_subset", wanted, sizeof wanted, d))) return rc;
        int ok = p->n > 0;
        for (int k = 0; k < p->n && ok; k++) {
            const char *nm = gpu_node_name(c, p->g[k]);
            int in = 0;
            void *it = NULL;
            struct fy_node *e2;
            while (!in && (e2 = fy_node_sequence_iterate(x, &it)))
                in = !strcmp(gs_yaml_str(e2), nm);
            ok = in;
        }
        verdict(r, ok, x, "job %lld placed only on nodes among [%s]%s (got [%s])", id, wanted,
                p->at_s, have);
    }
    if ((x = gs_yaml_get(n, "not_nodes"))) {
        char wanted[512];
        if ((rc = name_list(r, x, "not_nodes", wanted, sizeof wanted, d))) return rc;
        int ok = p->n > 0;
        void *it = NULL;
        struct fy_node *e2;
        while ((e2 = fy_node_sequence_iterate(x, &it)))
            if (on_node(c, p->g, p->n, gs_yaml_str(e2))) ok = 0;
        verdict(r, ok, x, "job %lld placed on none of nodes [%s]%s (got [%s])", id, wanted, p->at_s,
                p->n ? have : "no placement");
    }
    if ((x = gs_yaml_get(n, "not_with")) && (rc = check_not_with(r, e, lg, j, p, x, d))) return rc;
    return 0;
}

static const char *const place_keys[] = {"nodes",        "node_count", "spread",    "tasks",
                                         "chain",        "within",     "not_nodes", "not_with",
                                         "nodes_subset", NULL};

/*
 * A job expectation; 'timed' when it is a time expectation naming a job
 * ({time: T, job: J, <placement keys>}): its placement keys check the
 * placement at T.
 */
static int check_job(report *r, gs_engine *e, const run_log *lg, struct fy_node *n, int timed,
                     gs_diag *d)
{
    static const char *const keys[] = {
        "job",    "state",     "start",      "end",          "preemptions", "restarts", "nodes",
        "spread", "reason",    "node_count", "queue",        "at",          "tasks",    "chain",
        "within", "not_nodes", "not_with",   "nodes_subset", NULL};
    const char *tkeys[16] = {"job", "time"};
    for (int i = 0; place_keys[i]; i++) tkeys[2 + i] = place_keys[i];
    int rc = timed ? gs_yaml_check_keys(n, tkeys, "a placement-at-a-time expectation", d)
                   : gs_yaml_check_keys(n, keys, "a job expectation", d);
    if (rc) return rc;
    int64_t id;
    struct fy_node *x = gs_yaml_get(n, "job");
    if ((rc = gs_yaml_int(x, "job", 0, INT64_MAX / 2, &id, d))) return rc;
    const gs_job *j = gs_engine_find_job(e, id);
    if (!j)
        return gs_yaml_err(d, x, GS_EUNKNOWN, "no job with id %lld in this scenario",
                           (long long)id);
    gs_time at = 0;
    struct fy_node *atn = gs_yaml_get(n, timed ? "time" : "at");
    if (atn && (rc = sec_of(atn, timed ? "time" : "at", &at, d))) return rc;
    if (atn) {
        int any = 0;
        for (int i = 0; place_keys[i]; i++) any |= gs_yaml_get(n, place_keys[i]) != NULL;
        if (!any)
            return gs_yaml_err(d, atn, GS_EPARSE,
                               "'%s' needs a placement key (nodes, node_count, spread, tasks, "
                               "chain, within, nodes_subset, not_nodes, not_with)",
                               timed ? "time" : "at");
    }
    if ((x = gs_yaml_get(n, "state"))) {
        const char *s = gs_yaml_str(x);
        int st = s ? gs_job_state_parse(s) : -1;
        if (st < 0) return gs_yaml_err(d, x, GS_EPARSE, "unknown state '%s'", s ? s : "?");
        verdict(r, (int)j->state == st, x, "job %lld is %s (got %s)", (long long)id,
                gs_job_state_name(st), gs_job_state_name(j->state));
    }
    if ((x = gs_yaml_get(n, "start")) && (rc = check_time(r, x, "starts", id, j->first_start, d)))
        return rc;
    if ((x = gs_yaml_get(n, "end")) &&
        (rc = check_time(r, x, "ends", id, j->state == GS_JOB_DONE ? j->end : GS_TIME_NONE, d)))
        return rc;
    if ((x = gs_yaml_get(n, "queue")) &&
        (rc = check_time(r, x, "waits in total", id, j->queued, d)))
        return rc;
    if ((x = gs_yaml_get(n, "preemptions"))) {
        int64_t v;
        if ((rc = gs_yaml_int(x, "preemptions", 0, 1 << 30, &v, d))) return rc;
        verdict(r, j->preemptions == v, x, "job %lld preempted %lld times (got %d)", (long long)id,
                (long long)v, j->preemptions);
    }
    if ((x = gs_yaml_get(n, "restarts"))) {
        int64_t v;
        if ((rc = gs_yaml_int(x, "restarts", 0, 1 << 30, &v, d))) return rc;
        verdict(r, j->restarts == v, x, "job %lld restarted %lld times (got %d)", (long long)id,
                (long long)v, j->restarts);
    }
    place p;
    place_of(lg, j, atn != NULL, at, &p);
    if ((rc = check_placement(r, e, lg, j, &p, n, d))) return rc;
    if ((x = gs_yaml_get(n, "reason"))) {
        const char *s = gs_yaml_str(x);
        int ok = s && j->reason && strstr(j->reason, s);
        verdict(r, ok, x, "job %lld reason contains \"%s\" (got \"%s\")", (long long)id, s ? s : "",
                j->reason ? j->reason : "");
    }
    return 0;
}

static int ids_at(gs_engine *e, const run_log *lg, struct fy_node *list, gs_time t, int want_run,
                  report *r, gs_diag *d)
{
    if (!fy_node_is_sequence(list))
        return gs_yaml_err(d, list, GS_EPARSE, "expected a list of job ids");
    void *it = NULL;
    struct fy_node *x;
    char ts[32];
    gs_fmt_sec(ts, sizeof ts, t);
    while ((x = fy_node_sequence_iterate(list, &it))) {
        int64_t id;
        int rc = gs_yaml_int(x, "job id", 0, INT64_MAX / 2, &id, d);
        if (rc) return rc;
        const gs_job *j = gs_engine_find_job(e, id);
        if (!j) return gs_yaml_err(d, x, GS_EUNKNOWN, "no job with id %lld", (long long)id);
        int run = running_at(lg, j->slot, t);
        int pend = !run && j->arrived && j->submit <= t && (j->end == GS_TIME_NONE || j->end > t) &&
                   j->state != GS_JOB_REJECTED;
        if (want_run)
            verdict(r, run, x, "job %lld running at %s", (long long)id, ts);
        else
            verdict(r, pend, x, "job %lld waiting at %s", (long long)id, ts);
    }
    return 0;
}

/*
 * inspect: {KEY: VALUE, ...} of a time expectation: the policy's answer for
 * KEY (gs_engine_inspect) after every event at T, taken while the
 * simulation runs (probes, in time then file order) and reported with the
 * other expectations.
 */
typedef struct probe {
    gs_time t;
    size_t order;
    struct fy_node_pair *pair;
    int rc;
    char got[256];
} probe;

typedef struct probes {
    probe *v;
    size_t n, cap;
} probes;

static int cmp_probe(const void *a, const void *b)
{
    const probe *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Collect the probes of every time expectation with 'inspect' (before the run). */
static int collect_probes(struct fy_node *exp, probes *pr, gs_diag *d)
{
    void *it = NULL;
    struct fy_node *xn;
    while ((xn = fy_node_sequence_iterate(exp, &it))) {
        struct fy_node *in = gs_yaml_get(xn, "inspect");
        if (!in || gs_yaml_get(xn, "job") || !gs_yaml_get(xn, "time")) continue;
        gs_time t;
        int rc = sec_of(gs_yaml_get(xn, "time"), "time", &t, d);
        if (rc) return rc;
        if (!fy_node_is_mapping(in) || !fy_node_mapping_item_count(in))
            return gs_yaml_err(d, in, GS_EPARSE,
                               "'inspect' must be a mapping of keys to expected values, e.g. "
                               "{\"vc.VC1.doomed\": \"1\"}");
        void *it2 = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(in, &it2))) {
            const char *k = gs_yaml_str(fy_node_pair_key(p)),
                       *v = gs_yaml_str(fy_node_pair_value(p));
            if (!k || !*k || !v)
                return gs_yaml_err(d, fy_node_pair_key(p) ? fy_node_pair_key(p) : in, GS_EPARSE,
                                   "'inspect' keys and values must be scalars");
            pr->v = grow_or_die(pr->v, &pr->cap, pr->n + 1, sizeof *pr->v);
            pr->v[pr->n] = (probe){.t = t, .order = pr->n, .pair = p};
            pr->n++;
        }
    }
    if (pr->n) qsort(pr->v, pr->n, sizeof *pr->v, cmp_probe);
    return 0;
}

static void take_probe(gs_engine *e, probe *p)
{
    p->rc = gs_engine_inspect(e, gs_yaml_str(fy_node_pair_key(p->pair)), p->got, sizeof p->got);
    if (p->rc) p->got[0] = 0;
}

static void check_inspect(report *r, gs_engine *e, const probes *pr, struct fy_node *in, gs_time t)
{
    char ts[32];
    gs_fmt_sec(ts, sizeof ts, t);
    void *it = NULL;
    struct fy_node_pair *pp;
    while ((pp = fy_node_mapping_iterate(in, &it))) {
        const probe *p = NULL;
        for (size_t i = 0; i < pr->n && !p; i++)
            if (pr->v[i].pair == pp) p = &pr->v[i];
        const char *k = gs_yaml_str(fy_node_pair_key(pp)), *v = gs_yaml_str(fy_node_pair_value(pp));
        char got[320];
        if (!p->rc)
            snprintf(got, sizeof got, "\"%s\"", p->got);
        else if (p->rc == GS_ENOENT)
            snprintf(got, sizeof got, "no such key in policy %s", gs_engine_policy_name(e));
        else
            snprintf(got, sizeof got, "error %s", gs_strerror(p->rc));
        verdict(r, !p->rc && !strcmp(p->got, v), fy_node_pair_key(pp),
                "inspect %s is \"%s\" at %s (got %s)", k, v, ts, got);
    }
}

static int check_time_point(report *r, gs_engine *e, const run_log *lg, const probes *pr,
                            struct fy_node *n, gs_diag *d)
{
    static const char *const keys[] = {"time", "running", "waiting", "inspect", NULL};
    int rc = gs_yaml_check_keys(n, keys, "a time expectation", d);
    if (rc) return rc;
    gs_time t;
    if ((rc = sec_of(gs_yaml_get(n, "time"), "time", &t, d))) return rc;
    struct fy_node *x;
    if ((x = gs_yaml_get(n, "running")) && (rc = ids_at(e, lg, x, t, 1, r, d))) return rc;
    if ((x = gs_yaml_get(n, "waiting")) && (rc = ids_at(e, lg, x, t, 0, r, d))) return rc;
    if ((x = gs_yaml_get(n, "inspect"))) check_inspect(r, e, pr, x, t);
    return 0;
}

/* ---- running a scenario
 * -------------------------------------------------------------------------- */

static int read_engine_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d)
{
    (void)ud;
    return gs_read_file(path, buf, len, d);
}

/*
 * A cluster given in scenario 'path' at node 'cn' ('what': "cluster" or
 * "reconfigure"): inline HiveD YAML (errors at the line inside the
 * scenario), a file (a relative name is looked up next to the scenario
 * first; errors at the file's own line), or a shorthand.
 */
static int load_cluster(const char *path, struct fy_node *cn, const char *what, gs_cluster **cl,
                        gs_diag *d)
{
    const char *cs = gs_yaml_str(cn);
    if (!cs)
        return gs_yaml_err(d, cn, GS_EPARSE,
                           "'%s' must be a cluster (file, shorthand or inline HiveD config)", what);
    int rc;
    if (strchr(cs, '\n')) {
        gs_diag cd;
        gs_diag_init(&cd, path);
        rc = gs_cluster_parse_hived(path, cs, strlen(cs), cl, &cd);
        if (rc) {
            int line = 0, col = 0;
            gs_yaml_pos(cn, &line, &col);
            gs_diag_init(d, path);
            gs_diag_set(d, rc, line + cd.line, cd.col, "%s: %s", what, cd.msg);
        }
        return rc;
    }
    /* a relative file name is looked up next to the scenario first; anything
     * else (a shorthand such as 4x8, an absolute path) is taken as it is */
    char spec[4096];
    const char *slash = strrchr(path, '/');
    snprintf(spec, sizeof spec, "%s", cs);
    if (slash && cs[0] != '/') {
        char rel[4096];
        int k = snprintf(rel, sizeof rel, "%.*s/%s", (int)(slash - path), path, cs);
        if (k > 0 && (size_t)k < sizeof rel && access(rel, F_OK) == 0)
            snprintf(spec, sizeof spec, "%s", rel);
    }
    gs_diag cd;
    gs_diag_init(&cd, spec);
    rc = gs_cluster_load(spec, cl, &cd);
    if (rc) {
        /* the message names the cluster file's own position; spec dies with this frame */
        char m[sizeof cd.msg];
        gs_diag_format(&cd, m, sizeof m);
        gs_diag_init(d, NULL);
        gs_diag_set(d, rc, 0, 0, "%s%s%s", strcmp(what, "cluster") ? what : "",
                    strcmp(what, "cluster") ? ": " : "", m);
    }
    return rc;
}

/* The node cells called 'name' (one per chain it belongs to); their count. */
static int nodes_named(const gs_cluster *c, const char *name, int *out, int cap)
{
    int n = 0;
    for (size_t i = 0; i < gs_cluster_nnodes(c); i++)
        if (!strcmp(gs_cluster_node(c, (int)i)->name, name)) {
            if (n < cap) out[n] = (int)i;
            n++;
        }
    return n;
}

static int event_err(gs_diag *d, struct fy_node *en, int rc, const char *what)
{
    if (rc == GS_EUNSUPPORTED)
        return gs_yaml_err(d, en, rc, "event: %s is not supported by this build's engine", what);
    return gs_yaml_err(d, en, rc, "event: %s: %s", what, gs_strerror(rc));
}

/* One entry of 'events'. */
static int add_event(const char *path, gs_engine *e, gs_params *params, const gs_cluster *cl,
                     clusters *rc_cl, gs_simwait *lg_wait, struct fy_node *en, gs_diag *d)
{
    static const char *const ek[] = {"time",        "node",    "state", "cancel",
                                     "reconfigure", "release", NULL};
    int rc = gs_yaml_check_keys(en, ek, "an event", d);
    if (rc) return rc;
    struct fy_node *tn = gs_yaml_get(en, "time"), *nn = gs_yaml_get(en, "node"),
                   *cn = gs_yaml_get(en, "cancel"), *rn = gs_yaml_get(en, "reconfigure"),
                   *ln = gs_yaml_get(en, "release");
    if (!tn) return gs_yaml_err(d, en, GS_EPARSE, "an event needs a 'time'");
    gs_time t;
    if ((rc = sec_of(tn, "time", &t, d))) return rc;
    if (!!nn + !!cn + !!rn + !!ln != 1)
        return gs_yaml_err(d, en, GS_EPARSE,
                           "an event is one of {time, node, state}, {time, cancel: JOB}, "
                           "{time, release: JOB} or {time, reconfigure: CLUSTER}");
    if (ln) { /* a held job's hold ends (simwait.h) */
        int64_t id;
        if ((rc = gs_yaml_int(ln, "release", 0, INT64_MAX / 2, &id, d))) return rc;
        if (gs_simwait_release(lg_wait, id, t))
            return gs_yaml_err(d, ln, GS_EUNKNOWN, "release: job %lld is not held in this scenario",
                               (long long)id);
        return 0;
    }
    if (gs_yaml_get(en, "state") && !nn)
        return gs_yaml_err(d, gs_yaml_get(en, "state"), GS_EPARSE, "'state' goes with 'node'");
    if (cn) {
        int64_t id;
        if ((rc = gs_yaml_int(cn, "cancel", 0, INT64_MAX / 2, &id, d))) return rc;
        if (!gs_engine_find_job(e, id))
            return gs_yaml_err(d, cn, GS_EUNKNOWN, "cancel: no job with id %lld in this scenario",
                               (long long)id);
        rc = gs_engine_add_cancel_event(e, t, id, "cancelled by the scenario");
        return rc ? event_err(d, en, rc, "cancelling a job") : 0;
    }
    if (rn) {
        gs_cluster *nc = NULL;
        if ((rc = load_cluster(path, rn, "reconfigure", &nc, d))) return rc;
        rc = gs_engine_add_reconfig_event(e, t, nc);
        if (rc == GS_EINVAL) {
            /* the policy refuses the new cluster: a policy created on it says why */
            gs_engine *tmp = NULL;
            gs_diag pd;
            gs_diag_init(&pd, NULL);
            int prc = gs_engine_create(nc, gs_engine_policy_name(e), params, NULL, &tmp, &pd);
            gs_engine_destroy(tmp);
            gs_cluster_destroy(nc);
            return gs_yaml_err(d, rn, rc, "reconfigure: the new cluster is refused%s%s",
                               prc ? ": " : "", prc ? pd.msg : " (it has no GPU)");
        }
        if (rc) {
            gs_cluster_destroy(nc);
            return event_err(d, en, rc, "reconfiguration");
        }
        rc_cl->v = grow_or_die(rc_cl->v, &rc_cl->cap, rc_cl->n + 1, sizeof *rc_cl->v);
        rc_cl->v[rc_cl->n++] = nc;
        return 0;
    }
    const char *nm = gs_yaml_str(nn);
    const char *stt = gs_yaml_str(gs_yaml_get(en, "state"));
    int nodes[64];
    int nn_ = nm ? nodes_named(cl, nm, nodes, 64) : 0;
    static const char *const states[] = {"down", "up", "bad", "good", "drain", "resume", NULL};
    int st = -1;
    for (int i = 0; stt && states[i]; i++)
        if (!strcmp(stt, states[i])) st = i;
    if (!nn_ || st < 0)
        return gs_yaml_err(d, en, GS_EPARSE,
                           "an event needs a known 'node' and state "
                           "down|up|bad|good|drain|resume");
    if (nn_ > 64) return gs_yaml_err(d, nn, GS_ERANGE, "node '%s' is in more than 64 chains", nm);
    for (int i = 0; i < nn_; i++) {
        if (st <= 1) {
            if ((rc = gs_engine_add_node_event(e, t, nodes[i], st == 0)))
                return gs_yaml_err(d, en, rc, "event: %s", gs_strerror(rc));
        } else if (st <= 3) {
            if ((rc = gs_engine_add_node_bad_event(e, t, nodes[i], st == 2)))
                return event_err(d, en, rc, "marking a node bad or good");
        } else if ((rc = gs_engine_add_node_drain_event(e, t, nodes[i], st == 4))) {
            return event_err(d, en, rc, "draining or resuming a node");
        }
    }
    return 0;
}

/* A job's stage before the queue (simwait.h): dependency (Slurm's, naming the scenario's job
 * ids), hold (seconds: its hold ends then; true: until a {time, release: JOB} event),
 * array_id and array_limit (at most that many elements of the array running or starting). */
static int job_wait(struct fy_node *n, const gs_job_spec *s, gs_simwait **w, gs_diag *d)
{
    struct fy_node *dn = gs_yaml_get(n, "dependency"), *hn = gs_yaml_get(n, "hold"),
                   *an = gs_yaml_get(n, "array_id"), *ln = gs_yaml_get(n, "array_limit");
    gs_time hold = GS_SIMWAIT_NOHOLD;
    int64_t array_id = 0, limit = 0;
    int rc;
    const char *dep = dn ? gs_yaml_str(dn) : NULL;
    if (dn && !dep) return gs_yaml_err(d, dn, GS_EPARSE, "'dependency' must be a string");
    if (hn) {
        const char *h = gs_yaml_str(hn);
        if (h && (!strcasecmp(h, "true") || !strcasecmp(h, "yes")))
            hold = GS_SIMWAIT_HELD;
        else if (!h || (strcasecmp(h, "false") && strcasecmp(h, "no")))
            if ((rc = sec_of(hn, "hold", &hold, d))) return rc;
    }
    if (an && (rc = gs_yaml_int(an, "array_id", 0, INT64_MAX / 2, &array_id, d))) return rc;
    if (ln) {
        if ((rc = gs_yaml_int(ln, "array_limit", 1, GS_ARRAY_MAX, &limit, d))) return rc;
        if (!an) return gs_yaml_err(d, ln, GS_EPARSE, "'array_limit' needs an 'array_id'");
    }
    gs_diag wd;
    gs_diag_init(&wd, NULL);
    rc = gs_simwait_add(w, s->id, dep, hold, array_id, (int32_t)limit, &wd);
    return rc ? gs_yaml_err(d, dn ? dn : n, rc, "%s", wd.msg) : 0;
}

/* One instant of the simulation, with the engine's consistency checks; > 0 stepped, 0 done. */
static int step(gs_engine *e, gs_simwait *w, int *steps, gs_diag *d)
{
    int rc = gs_engine_step(e);
    if (rc > 0 && w) { /* jobs whose wait ended arrive (simwait.h) */
        int wr = gs_simwait_check(w, e);
        if (wr) rc = wr;
    }
    if (!rc && w) rc = gs_simwait_finish(w, e); /* the run ended: nothing more is released */
    if (rc < 0) return gs_diag_set(d, rc, 0, 0, "simulation failed: %s", gs_strerror(rc));
    if (!rc) return 0;
    gs_diag cd;
    gs_diag_init(&cd, NULL);
    if (gs_engine_check(e, &cd))
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "engine invariant broken at t=%.3f: %s",
                           gs_time_to_sec(gs_engine_now(e)), cd.msg);
    if (++*steps > 1000000)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "scenario does not end (1,000,000 instants)");
    return 1;
}

/*
 * Load the scenario and run its simulation (taking the inspect probes):
 * everything before the expectations are checked.  An error here is a
 * malformed scenario, or the refusal 'expect_error' waits for.
 */
static int setup_and_run(const char *path, struct fy_node *root, gs_cluster **cl, gs_engine **ep,
                         gs_params *params, run_log *lg, clusters *rcl, char ***strsp, int *nstr,
                         probes *pr, gs_diag *d)
{
    int rc;
    /* cluster: inline HiveD YAML, a shorthand, or a file next to the scenario */
    struct fy_node *cn = gs_yaml_get(root, "cluster");
    if (!cn) return gs_yaml_err(d, root, GS_EPARSE, "a scenario needs 'cluster'");
    if ((rc = load_cluster(path, cn, "cluster", cl, d))) return rc;
    rcl->v = grow_or_die(rcl->v, &rcl->cap, 1, sizeof *rcl->v);
    rcl->v[rcl->n++] = *cl; /* destroyed with the reconfigurations' */
    const char *policy = gs_yaml_str(gs_yaml_get(root, "policy"));
    if (!policy) return gs_yaml_err(d, root, GS_EPARSE, "a scenario needs 'policy'");
    /* HiveD's demos give times on K80 / P100 clusters whose SKU does not change a job's speed
     * (HiveD models none): GPU types do not change speeds unless 'set' turns it on */
    if ((rc = gs_params_set(params, "type_speed", "off"))) return rc;
    struct fy_node *sets = gs_yaml_get(root, "set");
    if (sets) {
        if (!fy_node_is_mapping(sets))
            return gs_yaml_err(d, sets, GS_EPARSE, "'set' must be a mapping of parameters");
        void *it = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(sets, &it))) {
            const char *k = gs_yaml_str(fy_node_pair_key(p)),
                       *v = gs_yaml_str(fy_node_pair_value(p));
            if (!k || !v || !*k) {
                /* an empty key may have no position: point at the mapping then */
                int kl = 0, kc = 0;
                gs_yaml_pos(fy_node_pair_key(p), &kl, &kc);
                return gs_yaml_err(d, kl ? fy_node_pair_key(p) : sets, GS_EPARSE,
                                   "parameters must be scalars with a non-empty name");
            }
            if ((rc = gs_params_set(params, k, v)))
                return gs_yaml_err(d, fy_node_pair_key(p), rc, "parameter '%s': %s", k,
                                   gs_strerror(rc));
        }
    }
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.read_file = read_engine_file;
    eo.lp = gs_lp_glpk();
    const char *pl = gs_yaml_str(gs_yaml_get(root, "placement"));
    if (pl) {
        int m = gs_place_mode_parse(pl);
        if (m < 0)
            return gs_yaml_err(d, gs_yaml_get(root, "placement"), GS_EPARSE,
                               "placement must be count or consolidate");
        eo.placement = (gs_place_mode)m;
    }
    if ((rc = gs_engine_opts_from_params(params, &eo, d))) return rc;
    gs_diag ed;
    gs_diag_init(&ed, NULL);
    if ((rc = gs_engine_create(*cl, policy, params, &eo, ep, &ed)))
        return gs_diag_set(d, rc, 0, 0, "%s", ed.msg);
    gs_engine *e = *ep;
    const char *unused = gs_params_unused(params);
    if (unused)
        return gs_yaml_err(d, sets, GS_EINVAL, "parameter '%s' is not used by policy %s", unused,
                           policy);
    lg->e = e;
    gs_engine_set_observer(e, log_record, lg);
    struct fy_node *jobs = gs_yaml_get(root, "jobs");
    if (!jobs || !fy_node_is_sequence(jobs))
        return gs_yaml_err(d, jobs ? jobs : root, GS_EPARSE, "a scenario needs a list of 'jobs'");
    int nj = fy_node_sequence_item_count(jobs);
    char **strs = calloc((size_t)nj * 8 + 1, sizeof *strs);
    if (!strs) abort();
    *strsp = strs;
    int64_t maxid = -1;
    void *it = NULL;
    struct fy_node *jn;
    while ((jn = fy_node_sequence_iterate(jobs, &it))) {
        struct fy_node *idn = gs_yaml_get(jn, "id");
        int64_t v;
        if (idn && gs_yaml_int(idn, "id", 0, INT64_MAX / 2, &v, d) == 0 && v > maxid) maxid = v;
    }
    gs_engine_reserve_ids(e, maxid + 1);
    it = NULL;
    while ((jn = fy_node_sequence_iterate(jobs, &it))) {
        gs_job_spec s;
        gs_spec_buf sb = {0};
        if ((rc = parse_job(jn, *cl, &s, strs, nstr, &sb, d))) {
            gs_spec_buf_release(&sb);
            return rc;
        }
        gs_diag jd;
        gs_diag_init(&jd, NULL);
        if ((rc = job_wait(jn, &s, &lg->wait, d))) {
            gs_spec_buf_release(&sb);
            return rc;
        }
        rc = gs_simwait_has(lg->wait, s.id) ? gs_engine_add_job_deferred(e, &s, NULL, &jd)
                                            : gs_engine_add_job(e, &s, NULL, &jd);
        gs_spec_buf_release(&sb);
        if (rc) return gs_yaml_err(d, jn, rc, "%s", jd.msg);
    }
    if (lg->wait) {
        gs_diag wd;
        gs_diag_init(&wd, NULL);
        if ((rc = gs_simwait_bind(lg->wait, e, &wd))) return gs_yaml_err(d, jobs, rc, "%s", wd.msg);
    }
    struct fy_node *evs = gs_yaml_get(root, "events");
    if (evs && !fy_node_is_null(evs) && !fy_node_is_sequence(evs))
        return gs_yaml_err(d, evs, GS_EPARSE, "'events' must be a list");
    if (evs) {
        it = NULL;
        struct fy_node *en;
        while ((en = fy_node_sequence_iterate(evs, &it)))
            if ((rc = add_event(path, e, params, *cl, rcl, lg->wait, en, d))) return rc;
    }
    struct fy_node *exp = gs_yaml_get(root, "expect");
    if (exp && (rc = collect_probes(exp, pr, d))) return rc;
    if (lg->wait && (rc = gs_simwait_check(lg->wait, e)))
        return gs_diag_set(d, rc, 0, 0, "simulation failed: %s", gs_strerror(rc));
    int steps = 0;
    for (size_t i = 0; i < pr->n; i++) {
        while (gs_engine_next_event_time(e) <= pr->v[i].t)
            if ((rc = step(e, lg->wait, &steps, d)) <= 0) break;
        if (rc < 0) return rc;
        take_probe(e, &pr->v[i]);
    }
    while ((rc = step(e, lg->wait, &steps, d)) > 0) {
    }
    return rc;
}

int gs_scenario_run(const char *path, FILE *out, int *passed, int *failed, gs_diag *d)
{
    char *buf;
    size_t len;
    gs_diag_init(d, path);
    int rc = gs_read_file(path, &buf, &len, d);
    if (rc) return rc;
    gs_yaml y;
    rc = gs_yaml_load(&y, path, buf, len, d);
    if (rc) {
        free(buf);
        return rc;
    }
    struct fy_node *root = gs_yaml_root(&y);
    gs_cluster *cl = NULL;
    gs_engine *e = NULL;
    gs_params params;
    gs_params_init(&params);
    run_log lg = {0};
    clusters rcl = {0};
    probes pr = {0};
    char **strs = NULL;
    int nstr = 0;
    static const char *const keys[] = {"name",   "description",  "cluster", "policy",
                                       "set",    "placement",    "jobs",    "events",
                                       "expect", "expect_error", NULL};
    if ((rc = gs_yaml_check_keys(root, keys, "a scenario", d))) goto out;
    const char *name = gs_yaml_str(gs_yaml_get(root, "name"));
    report rep = {out, name ? name : path, 0, 0, &rcl};
    struct fy_node *exp = gs_yaml_get(root, "expect"), *xerr = gs_yaml_get(root, "expect_error");
    const char *want_err = gs_yaml_str(xerr);
    if (xerr && (!want_err || !*want_err)) {
        rc = gs_yaml_err(d, xerr, GS_EPARSE, "'expect_error' must be a non-empty string");
        goto out;
    }
    if (xerr && exp && !(fy_node_is_sequence(exp) && !fy_node_sequence_item_count(exp))) {
        rc = gs_yaml_err(d, exp, GS_EPARSE,
                         "a scenario with 'expect_error' has no other expectations (it never "
                         "runs when refused as expected)");
        goto out;
    }
    if (!xerr && (!exp || !fy_node_is_sequence(exp))) {
        rc = gs_yaml_err(d, exp ? exp : root, GS_EPARSE, "a scenario needs a list 'expect'");
        goto out;
    }
    rc = setup_and_run(path, root, &cl, &e, &params, &lg, &rcl, &strs, &nstr, &pr, d);
    if (xerr) {
        /* the refusal is the expectation: any error of the cluster, the policy, its
         * parameters, a job or an event (never an internal one) */
        char got[1024] = "none: the scenario loaded and ran";
        if (rc) {
            if (!d->file) d->file = path;
            gs_diag_format(d, got, sizeof got);
        }
        int ok = rc && rc != GS_EINTERNAL && strstr(got, want_err);
        verdict(&rep, ok, xerr, "refused with an error containing \"%s\" (got %s)", want_err, got);
        *passed += rep.pass;
        *failed += rep.fail;
        rc = rc == GS_EINTERNAL ? rc : 0;
        goto out;
    }
    if (rc) goto out;
    void *it = NULL;
    struct fy_node *xn;
    while ((xn = fy_node_sequence_iterate(exp, &it))) {
        if (gs_yaml_get(xn, "job"))
            rc = check_job(&rep, e, &lg, xn, gs_yaml_get(xn, "time") != NULL, d);
        else if (gs_yaml_get(xn, "time"))
            rc = check_time_point(&rep, e, &lg, &pr, xn, d);
        else
            rc = gs_yaml_err(d, xn, GS_EPARSE, "an expectation needs 'job' or 'time'");
        if (rc) goto out;
    }
    *passed += rep.pass;
    *failed += rep.fail;
    rc = 0;
out:
    for (int i = 0; i < nstr; i++) free(strs[i]);
    free(strs);
    run_log_release(&lg);
    free(pr.v);
    gs_engine_destroy(e);
    for (size_t i = 0; i < rcl.n; i++) gs_cluster_destroy(rcl.v[i]); /* cl is the first */
    free(rcl.v);
    gs_params_release(&params);
    gs_yaml_release(&y);
    free(buf);
    if (rc && !d->file) d->file = path;
    return rc;
}
