/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scenario.c - scenario files: a cluster, a policy, timed submissions and
 * cluster events, and expectations about starts, placements, preemptions
 * and states, checked against a simulation (docs/scenarios.md).
 *
 * Invariants: a scenario is simulated exactly like `gsched sim` would run
 * it; every expectation is checked and reported, in file order; run
 * intervals come from the engine's records, so "running at time t" means
 * holding GPUs at t (a run [start, end) covers t when start <= t < end).
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
#include "yaml.h"

typedef struct interval {
    int32_t slot;
    gs_time from, to; /* to = GS_TIME_MAX while open */
} interval;

typedef struct run_log {
    interval *v;
    size_t n, cap;
    int32_t *open; /* by slot: index of the open interval or -1 */
    size_t capopen;
} run_log;

static void log_record(void *ud, const gs_record *r)
{
    run_log *l = ud;
    if (!r->job) return;
    int32_t s = r->job->slot;
    if ((size_t)s >= l->capopen) {
        size_t nc = l->capopen ? l->capopen * 2 : 256;
        while (nc <= (size_t)s) nc *= 2;
        int32_t *o = realloc(l->open, nc * sizeof *o);
        if (!o) abort();
        for (size_t i = l->capopen; i < nc; i++) o[i] = -1;
        l->open = o;
        l->capopen = nc;
    }
    if (r->type == GS_REC_START) {
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 256;
            interval *nv = realloc(l->v, nc * sizeof *nv);
            if (!nv) abort();
            l->v = nv;
            l->cap = nc;
        }
        l->open[s] = (int32_t)l->n;
        l->v[l->n++] = (interval){s, r->t, GS_TIME_MAX};
    } else if (r->type == GS_REC_PREEMPT || r->type == GS_REC_REQUEUE || r->type == GS_REC_FINISH ||
               r->type == GS_REC_FAIL || r->type == GS_REC_CANCEL) {
        if (l->open[s] >= 0) {
            l->v[l->open[s]].to = r->t;
            l->open[s] = -1;
        }
    }
}

static int running_at(const run_log *l, int32_t slot, gs_time t)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].slot == slot && l->v[i].from <= t && t < l->v[i].to) return 1;
    return 0;
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

/* A job entry: the gsched job fields (docs/trace-format.md) in YAML. */
static int parse_job(struct fy_node *n, gs_job_spec *s, char **strs, int *nstr, gs_diag *d)
{
    static const char *const keys[] = {"id",       "submit",        "duration",        "gpus",
                                       "tasks",    "gpus_per_task", "gpu_type",        "user",
                                       "vc",       "priority",      "model",           "name",
                                       "gang",     "pinned_cell",   "lazy_preemption", "cpus",
                                       "min_gpus", "max_gpus",      "gpu_mem",         NULL};
    int rc = gs_yaml_check_keys(n, keys, "a job", d);
    if (rc) return rc;
    gs_job_spec_init(s);
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
    return 0;
}

/* ---- expectations ------------------------------------------------------------------------------
 */

typedef struct report {
    FILE *out;
    const char *name;
    int pass, fail;
} report;

static void verdict(report *r, int ok, struct fy_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void verdict(report *r, int ok, struct fy_node *n, const char *fmt, ...)
{
    int line = 0, col = 0;
    gs_yaml_pos(n, &line, &col);
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

static int check_job(report *r, gs_engine *e, const run_log *lg, struct fy_node *n, gs_diag *d)
{
    static const char *const keys[] = {"job",         "state",      "start", "end",
                                       "preemptions", "restarts",   "nodes", "spread",
                                       "reason",      "node_count", "queue", NULL};
    int rc = gs_yaml_check_keys(n, keys, "a job expectation", d);
    if (rc) return rc;
    int64_t id;
    struct fy_node *x = gs_yaml_get(n, "job");
    if ((rc = gs_yaml_int(x, "job", 0, INT64_MAX / 2, &id, d))) return rc;
    const gs_job *j = gs_engine_find_job(e, id);
    if (!j)
        return gs_yaml_err(d, x, GS_EUNKNOWN, "no job with id %lld in this scenario",
                           (long long)id);
    const gs_cluster *c = gs_engine_cluster(e);
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
    const int32_t *g = j->alloc ? j->alloc : j->last_alloc;
    int ng = j->alloc ? j->nalloc : j->nlast_alloc;
    if ((x = gs_yaml_get(n, "nodes"))) {
        /* exact set of node names of the (last) placement */
        if (!fy_node_is_sequence(x)) return gs_yaml_err(d, x, GS_EPARSE, "'nodes' must be a list");
        int want = fy_node_sequence_item_count(x), ok = 1,
            got = gs_cluster_count_nodes(c, (const int *)g, ng);
        void *it = NULL;
        struct fy_node *e2;
        char wanted[512] = "", have[512] = "";
        while ((e2 = fy_node_sequence_iterate(x, &it))) {
            const char *nm = gs_yaml_str(e2);
            int nd = nm ? gs_cluster_find_node(c, nm) : -1;
            if (nd < 0) return gs_yaml_err(d, e2, GS_EUNKNOWN, "unknown node '%s'", nm ? nm : "?");
            int found = 0;
            for (int k = 0; k < ng && !found; k++) found = gs_cluster_gpu(c, g[k])->node == nd;
            ok &= found;
            snprintf(wanted + strlen(wanted), sizeof wanted - strlen(wanted), "%s%s",
                     wanted[0] ? "," : "", nm);
        }
        for (int k = 0; k < ng; k++) {
            const char *nm = gs_cluster_node(c, gs_cluster_gpu(c, g[k])->node)->name;
            if (!strstr(have, nm))
                snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s",
                         have[0] ? "," : "", nm);
        }
        ok &= got == want && ng > 0;
        verdict(r, ok, x, "job %lld placed on nodes [%s] (got [%s])", (long long)id, wanted, have);
    }
    if ((x = gs_yaml_get(n, "node_count"))) {
        int64_t v;
        if ((rc = gs_yaml_int(x, "node_count", 0, 1 << 20, &v, d))) return rc;
        int got = gs_cluster_count_nodes(c, (const int *)g, ng);
        verdict(r, got == v, x, "job %lld spans %lld nodes (got %d)", (long long)id, (long long)v,
                got);
    }
    if ((x = gs_yaml_get(n, "spread"))) {
        const char *s = gs_yaml_str(x);
        gs_cell_kind k = gs_cluster_spread(c, (const int *)g, ng);
        int ok = s && ng && !strcmp(s, gs_cell_kind_name(k));
        verdict(r, ok, x, "job %lld's GPUs share one %s (got %s)", (long long)id, s ? s : "?",
                ng ? gs_cell_kind_name(k) : "no placement");
    }
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

static int check_time_point(report *r, gs_engine *e, const run_log *lg, struct fy_node *n,
                            gs_diag *d)
{
    static const char *const keys[] = {"time", "running", "waiting", NULL};
    int rc = gs_yaml_check_keys(n, keys, "a time expectation", d);
    if (rc) return rc;
    gs_time t;
    if ((rc = sec_of(gs_yaml_get(n, "time"), "time", &t, d))) return rc;
    struct fy_node *x;
    if ((x = gs_yaml_get(n, "running")) && (rc = ids_at(e, lg, x, t, 1, r, d))) return rc;
    if ((x = gs_yaml_get(n, "waiting")) && (rc = ids_at(e, lg, x, t, 0, r, d))) return rc;
    return 0;
}

/* ---- running a scenario
 * -------------------------------------------------------------------------- */

static int read_engine_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d)
{
    (void)ud;
    return gs_read_file(path, buf, len, d);
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
    char **strs = NULL;
    int nstr = 0;
    static const char *const keys[] = {"name",      "description", "cluster", "policy", "set",
                                       "placement", "jobs",        "events",  "expect", NULL};
    if ((rc = gs_yaml_check_keys(root, keys, "a scenario", d))) goto out;
    const char *name = gs_yaml_str(gs_yaml_get(root, "name"));
    report rep = {out, name ? name : path, 0, 0};
    /* cluster: inline HiveD YAML, a shorthand, or a file next to the scenario */
    struct fy_node *cn = gs_yaml_get(root, "cluster");
    const char *cs = gs_yaml_str(cn);
    if (!cs) {
        rc = gs_yaml_err(d, root, GS_EPARSE, "a scenario needs 'cluster'");
        goto out;
    }
    if (strchr(cs, '\n')) {
        gs_diag cd;
        gs_diag_init(&cd, path);
        rc = gs_cluster_parse_hived(path, cs, strlen(cs), &cl, &cd);
        if (rc) {
            int line = 0, col = 0;
            gs_yaml_pos(cn, &line, &col);
            gs_diag_set(d, rc, line + cd.line, cd.col, "cluster: %s", cd.msg);
            goto out;
        }
    } else {
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
        rc = gs_cluster_load(spec, &cl, &cd);
        if (rc) {
            *d = cd;
            goto out;
        }
    }
    const char *policy = gs_yaml_str(gs_yaml_get(root, "policy"));
    if (!policy) {
        rc = gs_yaml_err(d, root, GS_EPARSE, "a scenario needs 'policy'");
        goto out;
    }
    struct fy_node *sets = gs_yaml_get(root, "set");
    if (sets) {
        if (!fy_node_is_mapping(sets)) {
            rc = gs_yaml_err(d, sets, GS_EPARSE, "'set' must be a mapping of parameters");
            goto out;
        }
        void *it = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(sets, &it))) {
            const char *k = gs_yaml_str(fy_node_pair_key(p)),
                       *v = gs_yaml_str(fy_node_pair_value(p));
            if (!k || !v || !*k) {
                /* an empty key may have no position: point at the mapping then */
                int kl = 0, kc = 0;
                gs_yaml_pos(fy_node_pair_key(p), &kl, &kc);
                rc = gs_yaml_err(d, kl ? fy_node_pair_key(p) : sets, GS_EPARSE,
                                 "parameters must be scalars with a non-empty name");
                goto out;
            }
            if ((rc = gs_params_set(&params, k, v))) {
                rc = gs_yaml_err(d, fy_node_pair_key(p), rc, "parameter '%s': %s", k,
                                 gs_strerror(rc));
                goto out;
            }
        }
    }
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.read_file = read_engine_file;
    const char *pl = gs_yaml_str(gs_yaml_get(root, "placement"));
    if (pl) {
        int m = gs_place_mode_parse(pl);
        if (m < 0) {
            rc = gs_yaml_err(d, gs_yaml_get(root, "placement"), GS_EPARSE,
                             "placement must be count or consolidate");
            goto out;
        }
        eo.placement = (gs_place_mode)m;
    }
    if ((rc = gs_engine_opts_from_params(&params, &eo, d))) goto out;
    gs_diag ed;
    gs_diag_init(&ed, NULL);
    if ((rc = gs_engine_create(cl, policy, &params, &eo, &e, &ed))) {
        gs_diag_set(d, rc, 0, 0, "%s", ed.msg);
        goto out;
    }
    const char *unused = gs_params_unused(&params);
    if (unused) {
        rc = gs_yaml_err(d, sets, GS_EINVAL, "parameter '%s' is not used by policy %s", unused,
                         policy);
        goto out;
    }
    gs_engine_set_observer(e, log_record, &lg);
    struct fy_node *jobs = gs_yaml_get(root, "jobs");
    if (!jobs || !fy_node_is_sequence(jobs)) {
        rc = gs_yaml_err(d, jobs ? jobs : root, GS_EPARSE, "a scenario needs a list of 'jobs'");
        goto out;
    }
    int nj = fy_node_sequence_item_count(jobs);
    strs = calloc((size_t)nj * 8 + 1, sizeof *strs);
    if (!strs) abort();
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
        if ((rc = parse_job(jn, &s, strs, &nstr, d))) goto out;
        gs_diag jd;
        gs_diag_init(&jd, NULL);
        if ((rc = gs_engine_add_job(e, &s, NULL, &jd))) {
            rc = gs_yaml_err(d, jn, rc, "%s", jd.msg);
            goto out;
        }
    }
    struct fy_node *evs = gs_yaml_get(root, "events");
    if (evs && !fy_node_is_null(evs) && !fy_node_is_sequence(evs)) {
        rc = gs_yaml_err(d, evs, GS_EPARSE, "'events' must be a list");
        goto out;
    }
    if (evs) {
        it = NULL;
        struct fy_node *en;
        while ((en = fy_node_sequence_iterate(evs, &it))) {
            static const char *const ek[] = {"time", "node", "state", NULL};
            if ((rc = gs_yaml_check_keys(en, ek, "an event", d))) goto out;
            gs_time t;
            if ((rc = sec_of(gs_yaml_get(en, "time"), "time", &t, d))) goto out;
            const char *nm = gs_yaml_str(gs_yaml_get(en, "node"));
            const char *stt = gs_yaml_str(gs_yaml_get(en, "state"));
            int nd = nm ? gs_cluster_find_node(cl, nm) : -1;
            if (nd < 0 || !stt || (strcmp(stt, "down") && strcmp(stt, "up"))) {
                rc = gs_yaml_err(d, en, GS_EPARSE,
                                 "an event needs a known 'node' and state down|up");
                goto out;
            }
            if ((rc = gs_engine_add_node_event(e, t, nd, !strcmp(stt, "down")))) {
                rc = gs_yaml_err(d, en, rc, "event: %s", gs_strerror(rc));
                goto out;
            }
        }
    }
    int steps = 0;
    while ((rc = gs_engine_step(e)) > 0) {
        gs_diag cd;
        gs_diag_init(&cd, NULL);
        if (gs_engine_check(e, &cd)) {
            rc = gs_diag_set(d, GS_EINTERNAL, 0, 0, "engine invariant broken at t=%.3f: %s",
                             gs_time_to_sec(gs_engine_now(e)), cd.msg);
            goto out;
        }
        if (++steps > 1000000) {
            rc = gs_diag_set(d, GS_EINTERNAL, 0, 0, "scenario does not end (1,000,000 instants)");
            goto out;
        }
    }
    if (rc < 0) {
        rc = gs_diag_set(d, rc, 0, 0, "simulation failed: %s", gs_strerror(rc));
        goto out;
    }
    struct fy_node *exp = gs_yaml_get(root, "expect");
    if (!exp || !fy_node_is_sequence(exp)) {
        rc = gs_yaml_err(d, exp ? exp : root, GS_EPARSE, "a scenario needs a list 'expect'");
        goto out;
    }
    it = NULL;
    struct fy_node *xn;
    while ((xn = fy_node_sequence_iterate(exp, &it))) {
        if (gs_yaml_get(xn, "job"))
            rc = check_job(&rep, e, &lg, xn, d);
        else if (gs_yaml_get(xn, "time"))
            rc = check_time_point(&rep, e, &lg, xn, d);
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
    free(lg.v);
    free(lg.open);
    gs_engine_destroy(e);
    gs_cluster_destroy(cl);
    gs_params_release(&params);
    gs_yaml_release(&y);
    free(buf);
    if (rc && !d->file) d->file = path;
    return rc;
}
