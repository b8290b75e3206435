/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.c - trace readers: Tiresias CSV, Philly per-job CSV (Pollux's
 * philly.csv), gsched's native CSV, the Pollux workload CSV (elastic jobs
 * of a goodput-model application, durations from the model: pollux.c) and
 * ElasticFlow's CSV (deadlines; its throughput tables are read by tput.c),
 * Gavel's tab-separated traces (10-field and legacy 7-field; work in steps);
 * plus the cluster-events file.  CSV column names match in any case.
 *
 * Invariants: every accepted job has >= 1 task of >= 1 GPU, a duration
 * >= 0 (0 with steps > 0 for Gavel's jobs) and a submit time >= 0; jobs come out sorted by submit
 * time with ties in file order; ids are unique; every rejection of the input names file:line:col.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "sim.h"
#include "yaml.h" /* gs_edit_distance */

const char *gs_trace_format_name(gs_trace_format f)
{
    switch (f) {
    case GS_TRACE_TIRESIAS: return "tiresias";
    case GS_TRACE_PHILLY: return "philly";
    case GS_TRACE_NATIVE: return "native";
    case GS_TRACE_POLLUX: return "pollux";
    case GS_TRACE_ELASTICFLOW: return "elasticflow";
    case GS_TRACE_GAVEL: return "gavel";
    }
    return "?";
}

void gs_trace_release(gs_trace *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nstrs; i++) free(t->strs[i]);
    free(t->strs);
    for (size_t i = 0; i < t->nblobs; i++) free(t->blobs[i]);
    free(t->blobs);
    free(t->jobs);
    free(t->path);
    gs_goodput_destroy(t->goodput);
    free(t->goodput_dir);
    gs_tput_destroy(t->tput);
    gs_simwait_destroy(t->wait);
    memset(t, 0, sizeof *t);
}

static const char *keep(gs_trace *t, const char *s)
{
    if (!s || !*s) return NULL;
    /* consecutive duplicates (same user/VC/model) share one copy */
    if (t->nstrs && !strcmp(t->strs[t->nstrs - 1], s)) return t->strs[t->nstrs - 1];
    if (t->nstrs == t->capstrs) {
        size_t nc = t->capstrs ? t->capstrs * 2 : 256;
        char **ns = realloc(t->strs, nc * sizeof *ns);
        if (!ns) return NULL;
        t->strs = ns;
        t->capstrs = nc;
    }
    char *d = strdup(s);
    if (!d) return NULL;
    t->strs[t->nstrs++] = d;
    return d;
}

static gs_job_spec *add(gs_trace *t)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 1024;
        gs_job_spec *nj = realloc(t->jobs, nc * sizeof *nj);
        if (!nj) return NULL;
        t->jobs = nj;
        t->cap = nc;
    }
    gs_job_spec *s = &t->jobs[t->n++];
    gs_job_spec_init(s);
    return s;
}

/* The next data row of r as a new job of t (*s, defaults set): > 0, 0 at the end, or an error
 * (a row with other than nf fields, out of memory). */
static int next_row(gs_csv *r, gs_trace *t, size_t nf, gs_job_spec **s, gs_diag *d)
{
    int rc = gs_csv_next(r, d);
    if (rc <= 0) return rc;
    if (r->nf != nf)
        return gs_diag_set(d, GS_EPARSE, r->rec_line, 1, "expected %zu fields, found %zu", nf,
                           r->nf);
    if (!(*s = add(t))) return GS_ENOMEM;
    return rc;
}

/* ---- field parsers ------------------------------------------------------------------ */

static int ferr(gs_diag *d, const gs_csv *r, size_t i, int err, const char *fmt, const char *name,
                const char *val)
{
    return gs_diag_set(d, err, r->rec_line, i < r->nf ? r->col[i] : 1, fmt, name, val);
}

static int parse_i64(const gs_csv *r, size_t i, const char *name, int64_t lo, int64_t hi,
                     int64_t *out, gs_diag *d)
{
    const char *s = r->f[i];
    while (*s == ' ') s++;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    /* accept "8.0" style integers */
    if (!errno && end != s && *end == '.') {
        const char *q = end + 1;
        while (*q == '0') q++;
        if (!*q || *q == ' ') end = (char *)q;
    }
    while (*end == ' ') end++;
    if (errno || end == s || *end)
        return ferr(d, r, i, GS_EPARSE, "%s: '%s' is not an integer", name, r->f[i]);
    if (v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "%%s must be between %lld and %lld, got '%%s'", (long long)lo,
                 (long long)hi);
        return ferr(d, r, i, GS_ERANGE, msg, name, r->f[i]);
    }
    *out = v;
    return 0;
}

/*
 * Largest time in a trace (submit, duration, event time): 10^11 s, about 3,000 years.  The
 * clock holds 9.2 x 10^12 s, so sums of such times, slowdowns and overheads cannot overflow.
 */
#define MAX_TRACE_SEC 100000000000LL

/* Exact decimal seconds -> microseconds ("12", "12.5", "66.0", "1e3" not allowed). */
static int parse_sec(const gs_csv *r, size_t i, const char *name, gs_time *out, gs_diag *d)
{
    const char *s = r->f[i];
    while (*s == ' ') s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
        return ferr(d, r, i, GS_EPARSE, "%s: '%s' is not a number of seconds", name, r->f[i]);
    int64_t whole = 0, frac = 0;
    int fd = 0;
    for (; isdigit((unsigned char)*s); s++) {
        whole = whole * 10 + (*s - '0');
        if (whole > MAX_TRACE_SEC)
            return ferr(d, r, i, GS_ERANGE, "%s: '%s' is too large (at most 1e11 seconds)", name,
                        r->f[i]);
    }
    if (*s == '.') {
        for (s++; isdigit((unsigned char)*s); s++)
            if (fd < 6) frac = frac * 10 + (*s - '0'), fd++;
    }
    while (*s == ' ') s++;
    if (*s) return ferr(d, r, i, GS_EPARSE, "%s: '%s' is not a number of seconds", name, r->f[i]);
    for (; fd < 6; fd++) frac *= 10;
    gs_time v = whole * 1000000 + frac;
    if (neg && v)
        return ferr(d, r, i, GS_ERANGE, "%s must not be negative, got '%s'", name, r->f[i]);
    *out = v;
    return 0;
}

/* A finite decimal number >= lo (what Python's float() reads in Gavel's fields). */
static int parse_double(const gs_csv *r, size_t i, const char *name, double lo, double *out,
                        gs_diag *d)
{
    const char *s = r->f[i];
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ') end++;
    if (end == s || *end || errno || !(v == v) || v > 1e300 || v < -1e300)
        return ferr(d, r, i, GS_EPARSE, "%s: '%s' is not a number", name, s);
    if (v < lo) {
        char msg[96];
        snprintf(msg, sizeof msg, "%%s must be at least %g, got '%%s'", lo);
        return ferr(d, r, i, GS_ERANGE, msg, name, s);
    }
    *out = v;
    return 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned dd)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + dd - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* "YYYY-MM-DD HH:MM:SS[.frac]" (also 'T' separator) -> microseconds since the epoch */
static int parse_timestamp(const gs_csv *r, size_t i, gs_time *out, gs_diag *d)
{
    const char *s = r->f[i];
    int y, mo, dd, h, mi;
    double sec;
    char sep;
    int used = 0;
    int n = sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%lf%n", &y, &mo, &dd, &sep, &h, &mi, &sec, &used);
    if (n == 7)
        while (s[used] == ' ') used++;
    /* !(sec >= 0 && sec < 61) also refuses "nan"; nothing may follow the seconds */
    if (n != 7 || s[used] || !isdigit((unsigned char)s[0]) || (sep != ' ' && sep != 'T') ||
        mo < 1 || mo > 12 || dd < 1 || dd > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        !(sec >= 0 && sec < 61))
        return ferr(d, r, i, GS_EPARSE, "%s: '%s' is not a timestamp (YYYY-MM-DD HH:MM:SS)",
                    "timestamp", s);
    int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)dd);
    *out = ((days * 86400 + h * 3600 + mi * 60) * GS_SEC) + gs_time_from_sec(sec);
    return 0;
}

/* Column names are matched case-insensitively ("Job_ID" is job_id). */
static int col_of(const gs_csv *r, const char *name)
{
    for (size_t i = 0; i < r->nf; i++)
        if (!strcasecmp(r->f[i], name)) return (int)i;
    return -1;
}

/* ---- readers ----------------------------------------------------------------------------- */

typedef struct rowinfo {
    size_t idx;
    int line, col;
    int64_t id;
    gs_time submit;
} rowinfo;

/* Note where the row just added to t (t->n - 1) came from: its line and the column of its id
 * (error messages and the stable sort by submit time use them).  *cap grows by doubling. */
static int note_row(rowinfo **ri, size_t *cap, const gs_trace *t, int line, int col)
{
    if (t->n > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        rowinfo *n = realloc(*ri, c * sizeof *n);
        if (!n) return GS_ENOMEM;
        *ri = n;
        *cap = c;
    }
    (*ri)[t->n - 1] = (rowinfo){t->n - 1, line, col};
    return 0;
}

static int read_tiresias(gs_csv *r, gs_trace *t, gs_diag *d, rowinfo **ri)
{
    int c_id = col_of(r, "job_id"), c_g = col_of(r, "num_gpu"), c_sub = col_of(r, "submit_time"),
        c_it = col_of(r, "iterations"), c_model = col_of(r, "model_name"),
        c_dur = col_of(r, "duration");
    size_t nf = r->nf;
    int rc;
    size_t capri = 0;
    gs_job_spec *s;
    while ((rc = next_row(r, t, nf, &s, d)) > 0) {
        int64_t v;
        if ((rc = parse_i64(r, (size_t)c_id, "job_id", 0, INT64_MAX / 2, &v, d))) return rc;
        s->id = v;
        if ((rc = parse_i64(r, (size_t)c_g, "num_gpu", 1, 1 << 20, &v, d))) return rc;
        s->ntasks = (int)v; /* a Tiresias job is one worker (and PS) per GPU */
        s->gpus_per_task = 1;
        if ((rc = parse_sec(r, (size_t)c_sub, "submit_time", &s->submit, d))) return rc;
        if ((rc = parse_sec(r, (size_t)c_dur, "duration", &s->duration, d))) return rc;
        if (c_it >= 0 && (rc = parse_i64(r, (size_t)c_it, "iterations", 0, INT64_MAX / 2, &v, d)))
            return rc;
        if (c_it >= 0) s->iterations = v;
        if (c_model >= 0) s->model = keep(t, r->f[c_model]);
        if ((rc = note_row(ri, &capri, t, r->rec_line, r->col[c_id]))) return rc;
    }
    return rc;
}

static int read_philly(gs_csv *r, gs_trace *t, gs_diag *d, rowinfo **ri)
{
    int c_ts = col_of(r, "timestamp"), c_dur = col_of(r, "duration"), c_g = col_of(r, "num_gpus"),
        c_vc = col_of(r, "cluster");
    size_t nf = r->nf;
    int rc;
    size_t capri = 0;
    gs_time t0 = GS_TIME_MAX;
    gs_job_spec *s;
    while ((rc = next_row(r, t, nf, &s, d)) > 0) {
        int64_t v;
        s->id = (int64_t)t->n - 1;
        if ((rc = parse_timestamp(r, (size_t)c_ts, &s->submit, d))) return rc;
        if (s->submit < t0) t0 = s->submit;
        if ((rc = parse_sec(r, (size_t)c_dur, "duration", &s->duration, d))) return rc;
        if ((rc = parse_i64(r, (size_t)c_g, "num_gpus", 1, 1 << 20, &v, d))) return rc;
        s->ntasks = (int)v;
        s->gpus_per_task = 1;
        if (c_vc >= 0) s->vc = keep(t, r->f[c_vc]);
        if ((rc = note_row(ri, &capri, t, r->rec_line, r->col[c_ts]))) return rc;
    }
    if (rc < 0) return rc;
    for (size_t i = 0; i < t->n; i++) {
        t->jobs[i].submit -= t0; /* relative to the first job */
        if (t->jobs[i].submit > MAX_TRACE_SEC * GS_SEC)
            return gs_diag_set(d, GS_ERANGE, (*ri)[i].line, (*ri)[i].col,
                               "timestamp: more than 1e11 seconds after the earliest job");
    }
    return 0;
}

/*
 * Pollux workload (the artifact's workloads/workload-N.csv): one elastic job per row,
 * ids in file order from 0, submit = time (s), ntasks = num_replicas GPUs of 1 (the size
 * TunedJobs asks for), elastic in [1, max(64, num_replicas)] (the artifact caps jobs at 64
 * replicas), batch_size = the tuned global batch; duration 0 until gs_trace_attach_apps.
 */
static int read_pollux(gs_csv *r, gs_trace *t, gs_diag *d, rowinfo **ri)
{
    int c_name = col_of(r, "name"), c_time = col_of(r, "time"), c_app = col_of(r, "application"),
        c_rep = col_of(r, "num_replicas"), c_bs = col_of(r, "batch_size");
    size_t nf = r->nf;
    int rc;
    size_t capri = 0;
    gs_job_spec *s;
    while ((rc = next_row(r, t, nf, &s, d)) > 0) {
        int64_t v;
        s->id = (int64_t)t->n - 1;
        if (!r->f[c_name][0])
            return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[c_name], "name: empty");
        if (!(s->name = keep(t, r->f[c_name]))) return GS_ENOMEM;
        if ((rc = parse_sec(r, (size_t)c_time, "time", &s->submit, d))) return rc;
        const char *app = r->f[c_app];
        size_t al = strlen(app);
        if (!al || al > 64 ||
            strspn(app, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789_-.") != al ||
            app[0] == '.')
            return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[c_app],
                               "application: '%s' is not an application name (letters, digits, "
                               "'_', '-', '.')",
                               app);
        if (!(s->app = keep(t, app))) return GS_ENOMEM;
        if ((rc = parse_i64(r, (size_t)c_rep, "num_replicas", 1, 1 << 16, &v, d))) return rc;
        s->ntasks = (int)v;
        s->gpus_per_task = 1;
        s->min_gpus = 1;
        s->max_gpus = s->ntasks > 64 ? s->ntasks : 64;
        if ((rc = parse_i64(r, (size_t)c_bs, "batch_size", 1, INT64_C(1) << 40, &v, d))) return rc;
        s->batch_size = v;
        s->duration = 0;
        if ((rc = note_row(ri, &capri, t, r->rec_line, r->col[c_name]))) return rc;
    }
    return rc;
}

/*
 * ElasticFlow: job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu[,duration].
 * A job asks for num_gpu GPUs, is elastic over 1..min(64, batch_size) GPUs (the throughput
 * table narrows it: gs_trace_apply_tput) and must finish by ddl (absolute seconds, same clock
 * as submit_time; empty = best effort, no deadline).  Its model is its progress-model app.
 * duration (at num_gpu) is what the trace says; the tables replace it with their own.
 */
static int read_elasticflow(gs_csv *r, gs_trace *t, gs_diag *d, rowinfo **ri)
{
    int c_id = col_of(r, "job_id"), c_sub = col_of(r, "submit_time"), c_it = col_of(r, "iteration"),
        c_model = col_of(r, "model_name"), c_ddl = col_of(r, "ddl"), c_bs = col_of(r, "batch_size"),
        c_g = col_of(r, "num_gpu"), c_dur = col_of(r, "duration");
    static const char *const need[] = {"job_id",     "submit_time", "iteration", "model_name",
                                       "batch_size", "num_gpu",     NULL};
    for (int k = 0; need[k]; k++)
        if (col_of(r, need[k]) < 0)
            return gs_diag_set(d, GS_EPARSE, r->rec_line, 1,
                               "an ElasticFlow trace needs a '%s' column (job_id,submit_time,"
                               "iteration,model_name,ddl,batch_size,num_gpu,duration)",
                               need[k]);
    size_t nf = r->nf;
    int rc;
    size_t capri = 0;
    gs_job_spec *s;
    while ((rc = next_row(r, t, nf, &s, d)) > 0) {
        int64_t v;
        if ((rc = parse_i64(r, (size_t)c_id, "job_id", 0, INT64_MAX / 2, &v, d))) return rc;
        s->id = v;
        if ((rc = parse_sec(r, (size_t)c_sub, "submit_time", &s->submit, d))) return rc;
        if ((rc = parse_i64(r, (size_t)c_it, "iteration", 1, INT64_MAX / 2, &v, d))) return rc;
        s->iterations = v;
        if (!r->f[c_model][0])
            return ferr(d, r, (size_t)c_model, GS_EPARSE, "%s: empty%s", "model_name", "");
        s->model = s->app = keep(t, r->f[c_model]);
        if (!s->model) return GS_ENOMEM;
        if ((rc = parse_i64(r, (size_t)c_bs, "batch_size", 1, INT64_MAX / 2, &v, d))) return rc;
        s->batch_size = v;
        if ((rc = parse_i64(r, (size_t)c_g, "num_gpu", 1, 1 << 20, &v, d))) return rc;
        s->ntasks = (int)v;
        s->gpus_per_task = 1;
        s->min_gpus = 1;
        s->max_gpus = (int)(s->batch_size < 64 ? s->batch_size : 64);
        if (s->max_gpus < s->ntasks) s->max_gpus = s->ntasks;
        if (c_ddl >= 0 && r->f[c_ddl][0]) {
            if ((rc = parse_sec(r, (size_t)c_ddl, "ddl", &s->deadline, d))) return rc;
            if (s->deadline <= s->submit)
                return ferr(d, r, (size_t)c_ddl, GS_ERANGE,
                            "%s: deadline '%s' is not after the job's submit_time", "ddl",
                            r->f[c_ddl]);
        }
        if (c_dur >= 0 && r->f[c_dur][0]) {
            if ((rc = parse_sec(r, (size_t)c_dur, "duration", &s->duration, d))) return rc;
        } else {
            s->duration = 0; /* from the throughput tables */
        }
        if ((rc = note_row(ri, &capri, t, r->rec_line, r->col[c_id]))) return rc;
    }
    return rc;
}

/* The stage before the queue (simwait.h) of a native row: hold (seconds: released then; true:
 * until a `release` event; false or empty: none), dependency (gsched/jobdeps.h, naming the
 * trace's ids), array_id (rows of one array) and array_limit (its %N throttle). */
static int native_wait(const gs_csv *r, const int *col, gs_trace *t, const gs_job_spec *s,
                       gs_diag *d);

static const char *const native_cols[] = {"id",          "submit",
                                          "duration",    "gpus",
                                          "tasks",       "gpus_per_task",
                                          "gpu_type",    "user",
                                          "vc",          "queue",
                                          "priority",    "model",
                                          "iterations",  "name",
                                          "cpus",        "mem",
                                          "gpu_mem",     "gang",
                                          "min_gpus",    "max_gpus",
                                          "pinned_cell", "lazy_preemption",
                                          "task_gpus",   "within",
                                          "steps",       "weight",
                                          "dependency",  "hold",
                                          "array_id",    "array_limit",
                                          NULL};

enum {
    N_ID,
    N_SUBMIT,
    N_DURATION,
    N_GPUS,
    N_TASKS,
    N_GPT,
    N_TYPE,
    N_USER,
    N_VC,
    N_QUEUE,
    N_PRIO,
    N_MODEL,
    N_ITER,
    N_NAME,
    N_CPUS,
    N_MEM,
    N_GMEM,
    N_GANG,
    N_MIN,
    N_MAX,
    N_PIN,
    N_LAZY,
    N_TASK_GPUS,
    N_WITHIN,
    N_STEPS,
    N_WEIGHT,
    N_DEP, /* holds, dependencies, job arrays (issue 16): simwait.h */
    N_HOLD,
    N_ARRAY,
    N_ALIMIT,
    N_NCOLS
};

/* An allocation the trace owns (freed by gs_trace_release), or NULL. */
static void *own(gs_trace *t, size_t size)
{
    if (t->nblobs == t->capblobs) {
        size_t nc = t->capblobs ? t->capblobs * 2 : 64;
        void **nb = realloc(t->blobs, nc * sizeof *nb);
        if (!nb) return NULL;
        t->blobs = nb;
        t->capblobs = nc;
    }
    void *p = malloc(size);
    if (p) t->blobs[t->nblobs++] = p;
    return p;
}

/* task_gpus: "16,8,8,8,4" (commas, semicolons or spaces between), each task's GPUs in task
 * order; the spec's tasks and sizes (the trace owns the array).  *sum gets the GPUs. */
static int parse_task_gpus(const gs_csv *r, size_t i, gs_trace *t, gs_job_spec *s, int64_t *sum,
                           gs_diag *d)
{
    const char *f = r->f[i], *p = f;
    int n = 0;
    for (const char *q = f; *q; q++) n += *q == ',' || *q == ';' || *q == ' ';
    int32_t *v = own(t, ((size_t)n + 1) * sizeof *v);
    if (!v) return GS_ENOMEM;
    n = 0;
    *sum = 0;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno || x < 1 || x > 4096 || (*end && !strchr(",; ", *end)))
            return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i],
                               "task_gpus: '%s' is not a list of GPU counts (1..4096) such as "
                               "\"16,8,8,8,4\"",
                               f);
        v[n++] = (int32_t)x;
        *sum += x;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',' || *p == ';') p++;
    }
    if (!n) return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i], "task_gpus: empty list");
    s->task_gpus = v;
    s->ntasks = n;
    return 0;
}

static int parse_priority(const gs_csv *r, size_t i, int *out, gs_diag *d)
{
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    if (gs_parse_priority(r->f[i], GS_PRIORITY_MAX, out, &sub))
        return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i] + (sub.col > 0 ? sub.col - 1 : 0),
                           "priority: %s", sub.msg);
    return 0;
}

static int parse_flag(const gs_csv *r, size_t i, const char *name, int *out, gs_diag *d)
{
    const char *s = r->f[i];
    if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes")) return *out = 1, 0;
    if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no")) return *out = 0, 0;
    return ferr(d, r, i, GS_EPARSE, "%s: '%s' is not true/false", name, s);
}

static int read_native(gs_csv *r, gs_trace *t, gs_diag *d, rowinfo **ri)
{
    int col[N_NCOLS];
    for (int k = 0; k < N_NCOLS; k++) col[k] = -1;
    for (size_t i = 0; i < r->nf; i++) {
        int k = 0;
        for (; native_cols[k]; k++)
            if (!strcasecmp(r->f[i], native_cols[k])) break;
        if (!native_cols[k]) {
            const char *best = NULL;
            int bd = 3;
            for (int q = 0; native_cols[q]; q++) {
                int dist = gs_edit_distance(r->f[i], native_cols[q]);
                if (dist < bd) bd = dist, best = native_cols[q];
            }
            if (best)
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i],
                                   "unknown column '%s' (did you mean '%s'?)", r->f[i], best);
            return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i],
                               "unknown column '%s' in a gsched trace (see docs/trace-format.md)",
                               r->f[i]);
        }
        if (col[k] >= 0)
            return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i], "column '%s' appears twice",
                               r->f[i]);
        col[k] = (int)i;
    }
    if (col[N_SUBMIT] < 0 || (col[N_DURATION] < 0 && col[N_STEPS] < 0))
        return gs_diag_set(d, GS_EPARSE, r->rec_line, 1,
                           "a gsched trace needs 'submit' and 'duration' (or 'steps') columns");
    if (col[N_GPUS] < 0 && col[N_TASKS] < 0 && col[N_TASK_GPUS] < 0)
        return gs_diag_set(d, GS_EPARSE, r->rec_line, 1,
                           "a gsched trace needs 'gpus' or 'tasks' (with 'gpus_per_task') or "
                           "'task_gpus'");
    if (col[N_VC] >= 0 && col[N_QUEUE] >= 0)
        return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_QUEUE]],
                           "use either 'vc' or 'queue', not both");
    size_t nf = r->nf;
    int rc;
    size_t capri = 0;
    gs_job_spec *s;
    while ((rc = next_row(r, t, nf, &s, d)) > 0) {
        int64_t v;
#define HAS(k) (col[k] >= 0 && r->f[col[k]][0])
#define C(k)   ((size_t)col[k])
        if (HAS(N_ID)) {
            if ((rc = parse_i64(r, C(N_ID), "id", 0, INT64_MAX / 2, &v, d))) return rc;
            s->id = v;
        } else {
            s->id = (int64_t)t->n - 1;
        }
        if ((rc = parse_sec(r, C(N_SUBMIT), "submit", &s->submit, d))) return rc;
        /* the work: a duration, or training steps (converted by the engine) */
        if (HAS(N_STEPS)) {
            if (HAS(N_DURATION))
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_STEPS]],
                                   "give either duration or steps, not both");
            if ((rc = parse_double(r, C(N_STEPS), "steps", 0, &s->steps, d))) return rc;
            if (!(s->steps > 0))
                return ferr(d, r, C(N_STEPS), GS_ERANGE, "%s must be positive, got '%s'", "steps",
                            r->f[col[N_STEPS]]);
            s->duration = 0;
        } else if (col[N_DURATION] < 0 || !r->f[col[N_DURATION]][0]) {
            return gs_diag_set(d, GS_EPARSE, r->rec_line,
                               col[N_DURATION] >= 0 ? r->col[col[N_DURATION]] : 1,
                               "job needs a 'duration' or 'steps'");
        } else if ((rc = parse_sec(r, C(N_DURATION), "duration", &s->duration, d))) {
            return rc;
        }
        if (HAS(N_WEIGHT)) {
            if ((rc = parse_double(r, C(N_WEIGHT), "weight", 0, &s->weight, d))) return rc;
            if (!(s->weight > 0))
                return ferr(d, r, C(N_WEIGHT), GS_ERANGE, "%s must be positive, got '%s'", "weight",
                            r->f[col[N_WEIGHT]]);
        }
        int64_t gpus = 0, tasks = 0, gpt = 0;
        if (HAS(N_TASK_GPUS)) {
            /* tasks of different sizes: gpus and tasks, when given too, must agree */
            int64_t sum;
            if ((rc = parse_task_gpus(r, C(N_TASK_GPUS), t, s, &sum, d))) return rc;
            if (HAS(N_GPT))
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_GPT]],
                                   "give either task_gpus or gpus_per_task, not both");
            if (HAS(N_GPUS) && (rc = parse_i64(r, C(N_GPUS), "gpus", 1, 1 << 20, &gpus, d)))
                return rc;
            if (HAS(N_TASKS) && (rc = parse_i64(r, C(N_TASKS), "tasks", 1, 1 << 20, &tasks, d)))
                return rc;
            if (gpus && gpus != sum)
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_GPUS]],
                                   "gpus (%lld) != the sum of task_gpus (%lld)", (long long)gpus,
                                   (long long)sum);
            if (tasks && tasks != s->ntasks)
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_TASKS]],
                                   "tasks (%lld) != the number of task_gpus (%d)", (long long)tasks,
                                   s->ntasks);
            if (sum > (1 << 20))
                return gs_diag_set(d, GS_ERANGE, r->rec_line, r->col[col[N_TASK_GPUS]],
                                   "task_gpus add up to more than %d GPUs", 1 << 20);
            int max = 1;
            for (int k = 0; k < s->ntasks; k++)
                if (s->task_gpus[k] > max) max = s->task_gpus[k];
            s->gpus_per_task = max;
            goto shaped;
        }
        if (HAS(N_GPUS) && (rc = parse_i64(r, C(N_GPUS), "gpus", 1, 1 << 20, &gpus, d))) return rc;
        if (HAS(N_TASKS) && (rc = parse_i64(r, C(N_TASKS), "tasks", 1, 1 << 20, &tasks, d)))
            return rc;
        if (HAS(N_GPT) && (rc = parse_i64(r, C(N_GPT), "gpus_per_task", 1, 4096, &gpt, d)))
            return rc;
        if (!gpus && !tasks)
            return gs_diag_set(d, GS_EPARSE, r->rec_line, 1, "job needs 'gpus' or 'tasks'");
        if (tasks && gpt) {
            if (gpus && gpus != tasks * gpt)
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_GPUS]],
                                   "gpus (%lld) != tasks (%lld) x gpus_per_task (%lld)",
                                   (long long)gpus, (long long)tasks, (long long)gpt);
        } else if (gpus && gpt) {
            if (gpus % gpt)
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_GPT]],
                                   "gpus (%lld) is not a multiple of gpus_per_task (%lld)",
                                   (long long)gpus, (long long)gpt);
            tasks = gpus / gpt;
        } else if (gpus && tasks) {
            if (gpus % tasks)
                return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_TASKS]],
                                   "gpus (%lld) is not a multiple of tasks (%lld)", (long long)gpus,
                                   (long long)tasks);
            gpt = gpus / tasks;
        } else if (gpus) {
            tasks = gpus, gpt = 1;
        } else {
            gpt = 1;
        }
        if (tasks * gpt > (1 << 20))
            return gs_diag_set(d, GS_ERANGE, r->rec_line,
                               r->col[col[N_TASKS] >= 0 ? col[N_TASKS] : 0],
                               "tasks (%lld) x gpus_per_task (%lld) is more than %d GPUs",
                               (long long)tasks, (long long)gpt, 1 << 20);
        s->ntasks = (int)tasks;
        s->gpus_per_task = (int)gpt;
    shaped:
        if (HAS(N_WITHIN)) {
            /* the whole job inside one cell of that type (checked against the cluster when the
             * job is added) */
            gs_task_group *g = own(t, sizeof *g);
            if (!g || !(g->within = keep(t, r->f[col[N_WITHIN]]))) return GS_ENOMEM;
            g->lo = 0;
            g->hi = s->ntasks;
            g->parent = -1;
            g->within_type = -1;
            s->groups = g;
            s->ngroups = 1;
        }
        if (HAS(N_TYPE)) s->gpu_type = keep(t, r->f[col[N_TYPE]]);
        if (HAS(N_USER)) s->user = keep(t, r->f[col[N_USER]]);
        if (HAS(N_VC)) s->vc = keep(t, r->f[col[N_VC]]);
        if (HAS(N_QUEUE)) s->vc = keep(t, r->f[col[N_QUEUE]]);
        if (HAS(N_PRIO) && (rc = parse_priority(r, C(N_PRIO), &s->priority, d))) return rc;
        if (HAS(N_MODEL)) s->model = keep(t, r->f[col[N_MODEL]]);
        if (HAS(N_NAME)) s->name = keep(t, r->f[col[N_NAME]]);
        if (HAS(N_ITER)) {
            if ((rc = parse_i64(r, C(N_ITER), "iterations", 0, INT64_MAX / 2, &v, d))) return rc;
            s->iterations = v;
        }
        if (HAS(N_CPUS)) {
            if ((rc = parse_i64(r, C(N_CPUS), "cpus", 0, 1 << 20, &v, d))) return rc;
            s->cpus_per_task = (int)v;
        }
        if (HAS(N_MEM)) {
            int64_t mb = gs_parse_mem_mb(r->f[col[N_MEM]]);
            if (mb < 0 || mb > INT32_MAX)
                return ferr(d, r, C(N_MEM), GS_EPARSE, "%s: '%s' is not a size such as 32G", "mem",
                            r->f[col[N_MEM]]);
            s->mem_mb_per_task = (int)mb;
        }
        if (HAS(N_GMEM)) {
            int64_t mb = gs_parse_mem_mb(r->f[col[N_GMEM]]);
            if (mb < 0 || mb > INT32_MAX)
                return ferr(d, r, C(N_GMEM), GS_EPARSE, "%s: '%s' is not a size such as 16G",
                            "gpu_mem", r->f[col[N_GMEM]]);
            s->gpu_mem_mb = (int)mb;
        }
        if (HAS(N_GANG) && (rc = parse_flag(r, C(N_GANG), "gang", &s->gang, d))) return rc;
        if (HAS(N_LAZY) &&
            (rc = parse_flag(r, C(N_LAZY), "lazy_preemption", &s->lazy_preemption, d)))
            return rc;
        if (HAS(N_MIN)) {
            if ((rc = parse_i64(r, C(N_MIN), "min_gpus", 1, 1 << 20, &v, d))) return rc;
            s->min_gpus = (int)v;
        }
        if (HAS(N_MAX)) {
            if ((rc = parse_i64(r, C(N_MAX), "max_gpus", 1, 1 << 20, &v, d))) return rc;
            s->max_gpus = (int)v;
        }
        if (s->max_gpus && s->min_gpus > s->max_gpus)
            return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[col[N_MIN]],
                               "min_gpus (%d) > max_gpus (%d)", s->min_gpus, s->max_gpus);
        if (HAS(N_PIN)) s->pinned_cell = keep(t, r->f[col[N_PIN]]);
        if ((rc = native_wait(r, col, t, s, d))) return rc;
#undef HAS
#undef C
        if ((rc = note_row(ri, &capri, t, r->rec_line, col[N_ID] >= 0 ? r->col[col[N_ID]] : 1)))
            return rc;
    }
    return rc;
}

/* ---- Gavel's traces ------------------------------------------------------------------------ */

/*
 * Gavel's job type as the profile table's model name (tools/gen_profiles.py's name_of):
 * "ResNet-50 (batch size 64)" -> "resnet50-bs64", "A3C" -> "a3c": the family before the first
 * " (batch size N)" lower-cased with everything but [a-z0-9] dropped, then "-bsN" when N > 0.
 */
void gs_gavel_model_name(const char *job_type, char *out, size_t size)
{
    static const char tag[] = " (batch size ";
    const char *fam_end = job_type + strlen(job_type);
    long long bs = 0;
    for (const char *p = strstr(job_type, tag); p; p = strstr(p + 1, tag)) {
        const char *q = p + sizeof tag - 1;
        if (!isdigit((unsigned char)*q)) continue;
        long long v = 0;
        while (isdigit((unsigned char)*q) && v < 1000000000) v = v * 10 + (*q++ - '0');
        if (*q != ')') continue;
        fam_end = p;
        bs = v;
        break;
    }
    size_t n = 0;
    for (const char *p = job_type; p < fam_end && n + 1 < size; p++) {
        int c = tolower((unsigned char)*p);
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out[n++] = (char)c;
    }
    out[n] = 0;
    if (bs > 0 && n < size) snprintf(out + n, size - n, "-bs%lld", bs);
}

/* A tab-separated line split in place: fields, their 1-based columns. */
typedef struct tabline {
    char *f[16];
    int col[16];
    size_t nf;
} tabline;

/* Split [p, end) at tabs into tl (at most 16 fields; more are counted, not kept). */
static size_t split_tabs(char *p, char *end, tabline *tl)
{
    char *line = p;
    tl->nf = 0;
    for (;;) {
        char *q = p;
        while (q < end && *q != '\t') q++;
        if (tl->nf < 16) {
            tl->f[tl->nf] = p;
            tl->col[tl->nf] = (int)(p - line) + 1;
        }
        tl->nf++;
        int last = q >= end;
        *q = 0;
        if (last) break;
        p = q + 1;
    }
    return tl->nf;
}

/*
 * Gavel's traces, tab-separated, no header, one job per line.  The current format
 * (scheduler/traces/physical_cluster/, utils.parse_trace) has 10 fields:
 *   job_type, command, working_directory, num_steps_arg, needs_data_dir, total_steps,
 *   scale_factor, priority_weight, SLO, arrival_time
 * the legacy one (scheduler/traces/msr/) 7:
 *   job_type, command, num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor
 * A job: id = 0-based line number among jobs, name = job_type, model = its profile name,
 * steps = total_steps, scale_factor GPUs as tasks of one GPU (Gavel's workers), weight =
 * priority_weight, submit = arrival_time.  command, working_directory, num_steps_arg and
 * needs_data_dir say how to launch the job (checked, not used); SLO is checked and ignored,
 * as Gavel's simulator ignores a trace's SLOs (its deadlines, arrival + SLO x run time, exist
 * for generated jobs only).  The work in steps becomes time with the profiles (the engine).
 */
static int read_gavel(const char *buf, size_t len, gs_trace *t, gs_diag *d, rowinfo **ri)
{
    char *copy = malloc(len + 1);
    if (!copy) return GS_ENOMEM;
    memcpy(copy, buf, len);
    copy[len] = 0;
    size_t capri = 0, want = 0;
    int line = 0, rc = 0;
    char *p = copy, *end = copy + len;
    while (p < end && !rc) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        line++;
        char *next = nl ? nl + 1 : end;
        if (le > p && le[-1] == '\r') le--;
        char *q = p;
        while (q < le && (*q == ' ' || *q == '\t')) q++;
        if (q == le || *p == '#') { /* blank or comment */
            p = next;
            continue;
        }
        tabline tl;
        size_t nf = split_tabs(p, le, &tl);
        if (!want) want = nf;
        if (nf != want || (nf != 10 && nf != 7)) {
            rc = gs_diag_set(d, GS_EPARSE, line, 1,
                             "expected %zu tab-separated fields (Gavel's %s format), found %zu",
                             nf != want ? want : (size_t)10,
                             nf != want && want == 7 ? "legacy msr" : "physical_cluster", nf);
            break;
        }
        gs_csv r = {0};
        r.f = tl.f;
        r.col = tl.col;
        r.nf = nf;
        r.rec_line = line;
        int legacy = nf == 7;
        size_t c_steps = legacy ? 4 : 5, c_sf = legacy ? 6 : 6, c_arr = legacy ? 5 : 9,
               c_data = legacy ? 3 : 4;
        gs_job_spec *s = add(t);
        if (!s) {
            rc = GS_ENOMEM;
            break;
        }
        s->id = (int64_t)t->n - 1;
        const char *jt = tl.f[0];
        if (!*jt) {
            rc = ferr(d, &r, 0, GS_EPARSE, "%s: empty%s", "job_type", "");
            break;
        }
        char model[128];
        gs_gavel_model_name(jt, model, sizeof model);
        if (!model[0]) {
            rc = ferr(d, &r, 0, GS_EPARSE, "%s: '%s' has no letters or digits", "job_type", jt);
            break;
        }
        if (!(s->name = keep(t, jt)) || !(s->model = keep(t, model))) {
            rc = GS_ENOMEM;
            break;
        }
        int64_t v;
        if ((rc = parse_i64(&r, c_data, "needs_data_dir", 0, 1, &v, d))) break;
        if ((rc = parse_i64(&r, c_steps, "total_steps", 1, INT64_C(1) << 53, &v, d))) break;
        s->steps = (double)v;
        if ((rc = parse_i64(&r, c_sf, "scale_factor", 1, 1 << 20, &v, d))) break;
        s->ntasks = (int)v;
        s->gpus_per_task = 1;
        s->duration = 0; /* the work is in steps */
        if (!legacy) {
            double w, slo;
            if ((rc = parse_double(&r, 7, "priority_weight", -1e300, &w, d))) break;
            if (!(w > 0)) {
                rc = ferr(d, &r, 7, GS_ERANGE, "%s must be positive, got '%s'", "priority_weight",
                          tl.f[7]);
                break;
            }
            s->weight = w;
            if ((rc = parse_double(&r, 8, "SLO", -1e300, &slo, d))) break;
        }
        if ((rc = parse_sec(&r, c_arr, "arrival_time", &s->submit, d))) break;
        if ((rc = note_row(ri, &capri, t, line, 1))) break;
        p = next;
    }
    free(copy);
    return rc;
}

/* 1 when the first line that is not blank or a comment has a tab: Gavel's traces. */
static int looks_gavel(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q < le && *p != '#') return memchr(p, '\t', (size_t)(le - p)) != NULL;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* ---- sorting and checks ----------------------------------------------------------------- */

static int by_submit(const void *a, const void *b)
{
    const rowinfo *x = a, *y = b;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int by_id(const void *a, const void *b)
{
    const rowinfo *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->line - y->line;
}

int gs_trace_parse(const char *file, const char *buf, size_t len, gs_trace *t, gs_diag *d)
{
    memset(t, 0, sizeof *t);
    gs_csv r;
    gs_csv_init(&r, buf, len, 1);
    rowinfo *ri = NULL;
    int rc;
    if (looks_gavel(buf, len)) {
        t->format = GS_TRACE_GAVEL;
        rc = read_gavel(buf, len, t, d, &ri);
        r.line = 1;
        goto read;
    }
    rc = gs_csv_next(&r, d);
    if (rc <= 0) {
        if (rc == 0) rc = gs_diag_set(d, GS_EPARSE, 1, 1, "empty trace (no header line)");
        goto out;
    }
    if (col_of(&r, "job_id") >= 0 && col_of(&r, "ddl") >= 0 && col_of(&r, "iteration") >= 0) {
        t->format = GS_TRACE_ELASTICFLOW;
        rc = read_elasticflow(&r, t, d, &ri);
    } else if (col_of(&r, "name") >= 0 && col_of(&r, "time") >= 0 &&
               col_of(&r, "application") >= 0 && col_of(&r, "num_replicas") >= 0 &&
               col_of(&r, "batch_size") >= 0) {
        t->format = GS_TRACE_POLLUX;
        rc = read_pollux(&r, t, d, &ri);
    } else if (col_of(&r, "job_id") >= 0 && col_of(&r, "num_gpu") >= 0 &&
               col_of(&r, "submit_time") >= 0 && col_of(&r, "duration") >= 0) {
        t->format = GS_TRACE_TIRESIAS;
        rc = read_tiresias(&r, t, d, &ri);
    } else if (col_of(&r, "timestamp") >= 0 && col_of(&r, "duration") >= 0 &&
               col_of(&r, "num_gpus") >= 0) {
        t->format = GS_TRACE_PHILLY;
        rc = read_philly(&r, t, d, &ri);
    } else if (col_of(&r, "submit") >= 0 || col_of(&r, "duration") >= 0) {
        t->format = GS_TRACE_NATIVE;
        rc = read_native(&r, t, d, &ri);
    } else {
        rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1,
                         "unknown trace header: expected the comma-separated columns (any "
                         "case) of Tiresias (job_id,num_gpu,submit_time,...,duration), Philly "
                         "(timestamp,duration,num_gpus,...), Pollux (name,time,application,...), "
                         "ElasticFlow (job_id,...,ddl,iteration,...) or gsched "
                         "(submit,duration,gpus,...), or Gavel's tab-separated lines without a "
                         "header (10 fields: job_type,command,working_directory,num_steps_arg,"
                         "needs_data_dir,total_steps,scale_factor,priority_weight,SLO,"
                         "arrival_time; or the legacy 7 of its msr traces)");
    }
read:
    if (rc < 0) goto out;
    rc = 0;
    if (t->n == 0) {
        rc = gs_diag_set(d, GS_EPARSE, r.line, 1,
                         t->format == GS_TRACE_GAVEL ? "trace has no jobs"
                                                     : "trace has a header but no jobs");
        goto out;
    }
    /* unique ids */
    for (size_t i = 0; i < t->n; i++) {
        ri[i].id = t->jobs[ri[i].idx].id;
        ri[i].submit = t->jobs[ri[i].idx].submit;
    }
    qsort(ri, t->n, sizeof *ri, by_id);
    for (size_t i = 1; i < t->n; i++)
        if (ri[i].id == ri[i - 1].id) {
            rc = gs_diag_set(d, GS_EEXIST, ri[i].line, ri[i].col,
                             "duplicate job id %lld (first on line %d)",
                             (long long)t->jobs[ri[i].idx].id, ri[i - 1].line);
            goto out;
        }
    /* stable sort by submit time (file order breaks ties) */
    for (size_t i = 0; i < t->n; i++) {
        ri[i].idx = i;
        ri[i].submit = t->jobs[i].submit;
    }
    qsort(ri, t->n, sizeof *ri, by_submit);
    gs_job_spec *sorted = malloc(t->n * sizeof *sorted);
    if (!sorted) {
        rc = GS_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < t->n; i++) sorted[i] = t->jobs[ri[i].idx];
    free(t->jobs);
    t->jobs = sorted;
    t->cap = t->n;
out:
    free(ri);
    gs_csv_release(&r);
    if (rc) gs_trace_release(t);
    (void)file;
    return rc;
}

int gs_trace_load(const char *path, gs_trace *t, gs_diag *d)
{
    return gs_trace_load_ex(path, NULL, t, d);
}

int gs_trace_load_ex(const char *path, const char *pollux_traces, gs_trace *t, gs_diag *d)
{
    char *buf;
    size_t len;
    int rc = gs_read_file(path, &buf, &len, d);
    if (rc) return rc;
    rc = gs_trace_parse(path, buf, len, t, d);
    if (!rc) {
        gs_sha256_hex(buf, len, t->sha256);
        t->path = strdup(path);
        if (!t->path) rc = GS_ENOMEM;
    }
    free(buf);
    if (!rc && t->format == GS_TRACE_POLLUX) rc = gs_trace_attach_apps(t, pollux_traces, d);
    if (rc && t->path) gs_trace_release(t);
    return rc;
}

/* ---- cluster events ------------------------------------------------------------------------ */

void gs_events_release(gs_events *ev)
{
    if (!ev) return;
    for (size_t i = 0; i < ev->n; i++) free(ev->v[i].node);
    free(ev->v);
    free(ev->path);
    memset(ev, 0, sizeof *ev);
}

int gs_events_load(const char *path, gs_events *ev, gs_diag *d)
{
    memset(ev, 0, sizeof *ev);
    char *buf;
    size_t len;
    int rc = gs_read_file(path, &buf, &len, d);
    if (rc) return rc;
    gs_sha256_hex(buf, len, ev->sha256);
    ev->path = strdup(path);
    if (!ev->path) {
        free(buf);
        return GS_ENOMEM;
    }
    gs_csv r;
    gs_csv_init(&r, buf, len, 1);
    size_t cap = 0;
    int first = 1;
    while ((rc = gs_csv_next(&r, d)) > 0) {
        if (first && r.nf >= 1 && !strcmp(r.f[0], "time")) { /* optional header */
            first = 0;
            continue;
        }
        first = 0;
        if (r.nf != 3) {
            rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1,
                             "expected 'time,node,down|up|bad|good|drain|resume', found %zu fields",
                             r.nf);
            break;
        }
        gs_time t;
        if ((rc = parse_sec(&r, 0, "time", &t, d))) break;
        int down, bad = 0, drain = 0;
        if (!strcmp(r.f[2], "down") || !strcmp(r.f[2], "bad"))
            down = 1, bad = r.f[2][0] == 'b';
        else if (!strcmp(r.f[2], "up") || !strcmp(r.f[2], "good"))
            down = 0, bad = r.f[2][0] == 'g';
        else if (!strcmp(r.f[2], "drain") || !strcmp(r.f[2], "resume"))
            down = r.f[2][0] == 'd', drain = 1;
        else if (!strcmp(r.f[2], "release")) { /* a held job's hold ends (simwait.h) */
            int64_t id;
            if ((rc = parse_i64(&r, 1, "job id", 0, INT64_MAX / 2, &id, d))) break;
            down = 0, drain = -1;
        } else {
            rc =
                gs_diag_set(d, GS_EPARSE, r.rec_line, r.col[2],
                            "expected 'down', 'up', 'bad', 'good', 'drain', 'resume' or 'release', "
                            "got '%s'",
                            r.f[2]);
            break;
        }
        if (ev->n == cap) {
            cap = cap ? cap * 2 : 64;
            gs_node_event *nv = realloc(ev->v, cap * sizeof *nv);
            if (!nv) {
                rc = GS_ENOMEM;
                break;
            }
            ev->v = nv;
        }
        char *node = strdup(r.f[1]);
        if (!node) {
            rc = GS_ENOMEM;
            break;
        }
        ev->v[ev->n++] =
            (gs_node_event){t, node, down, bad, r.rec_line, r.col[1], drain > 0, drain < 0};
    }
    gs_csv_release(&r);
    free(buf);
    if (rc < 0) {
        gs_events_release(ev);
        return rc;
    }
    return 0;
}

static int native_wait(const gs_csv *r, const int *col, gs_trace *t, const gs_job_spec *s,
                       gs_diag *d)
{
#define HAS(k) (col[k] >= 0 && r->f[col[k]][0])
    gs_time hold = GS_SIMWAIT_NOHOLD;
    int64_t array_id = 0, limit = 0;
    int rc;
    if (HAS(N_HOLD)) {
        const char *h = r->f[col[N_HOLD]];
        if (!strcasecmp(h, "true") || !strcasecmp(h, "yes"))
            hold = GS_SIMWAIT_HELD;
        else if (strcasecmp(h, "false") && strcasecmp(h, "no") &&
                 (rc = parse_sec(r, (size_t)col[N_HOLD], "hold", &hold, d)))
            return rc;
    }
    if (HAS(N_ARRAY) &&
        (rc = parse_i64(r, (size_t)col[N_ARRAY], "array_id", 0, INT64_MAX / 2, &array_id, d)))
        return rc;
    if (HAS(N_ALIMIT)) {
        if ((rc = parse_i64(r, (size_t)col[N_ALIMIT], "array_limit", 1, GS_ARRAY_MAX, &limit, d)))
            return rc;
        if (!HAS(N_ARRAY))
            return ferr(d, r, (size_t)col[N_ALIMIT], GS_EPARSE, "%s '%s' needs an array_id",
                        "array_limit", r->f[col[N_ALIMIT]]);
    }
    gs_diag dd;
    gs_diag_init(&dd, NULL);
    rc = gs_simwait_add(&t->wait, s->id, HAS(N_DEP) ? r->f[col[N_DEP]] : NULL, hold, array_id,
                        (int32_t)limit, &dd);
    if (rc)
        return gs_diag_set(d, rc, r->rec_line, HAS(N_DEP) ? r->col[col[N_DEP]] : 1, "job %lld: %s",
                           (long long)s->id, dd.msg);
#undef HAS
    return 0;
}
