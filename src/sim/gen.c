/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen.c - the workload generator (gen.h; `gsched gen`, docs/workload-generator.md).
 *
 * A spec "jobs=N,load=0.9,mix=gavel,..." is parsed once (files it names are read then:
 * arrivals=trace:FILE keeps the trace's inter-arrival gaps, mix=trace:FILE its jobs' shapes,
 * durations and models, mix=gavel the model names of the profile table); gs_gen_generate()
 * then draws a workload for a cluster size and a seed:
 *   - arrivals: the first job at 0, then gaps that are exponential (Poisson) with mean
 *     1/rate, or drawn from the trace's gaps (scaled to the rate when load= or rate= is
 *     given); rate = rate=/3600 per second, or load x GPUs / (mean GPU-time of a job of the
 *     mix) - the mix's mean is exact for gavel (its closed form), the trace's mean otherwise;
 *   - the mix: gavel (Gavel's artifact: 1/2/4/8 GPUs w.p. 70/10/15/5 %, 60 x 10^U(1.5,3) s
 *     w.p. 0.8 else 60 x 10^U(3,4) s, a model uniformly from the profile table's models;
 *     gavel-single: the same with every job of 1 GPU, Gavel's continuous-single traces), or
 *     one job of the trace drawn uniformly (its tasks, GPUs per task, duration and model; a
 *     job given in steps, as in Gavel's traces, runs for its steps at its model's throughput
 *     on the built-in profiles' reference type);
 *   - users=N / vcs=N: user "userK" / VC "vcK", K uniform in 0..N-1.
 *
 * Invariants: the output is a function of (spec, GPU count, seed) alone - every attribute
 * has its own gs_rng stream (all derived from the seed), so adding users= does not change
 * sizes, durations or arrivals, and a load sweep only rescales the same arrivals; times are
 * whole milliseconds, so the written CSV reads back to exactly the generated jobs; ids are
 * 0..N-1 in arrival order (submit times non-decreasing); t->sha256 is the SHA-256 of the CSV
 * gs_gen_write() writes for the same (spec, GPUs, seed).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>

#include "config.h"
#include "gen.h"
#include "yaml.h" /* gs_edit_distance */

extern const char gs_profiles_builtin_csv[]; /* generated from data/profiles/gavel.csv */

#define MAX_JOBS  100000000L
#define MAX_NAMES 1000000L

enum { ARR_POISSON, ARR_TRACE };
enum { MIX_GAVEL, MIX_TRACE };

typedef struct gen_sample {
    int32_t ntasks, gpt; /* shape: ntasks tasks of gpt GPUs */
    int32_t model;       /* index into models, -1 = none */
    gs_time duration;
} gen_sample;

struct gs_gen_spec {
    char *text;
    long jobs;
    int arrivals, mix;
    int single; /* mix=gavel-single: Gavel's continuous-single traces, every job 1 GPU */
    int has_load, has_rate;
    double load, rate; /* fraction of the GPUs; jobs per hour */
    gs_time *gaps;     /* arrivals=trace: the trace's inter-arrival gaps */
    size_t ngaps;
    double gap_mean_s;
    gen_sample *smp; /* mix=trace: its jobs */
    size_t nsmp;
    char **models; /* sorted, distinct: profile models (gavel) or the trace's models */
    size_t nmodels;
    double mean_gpu_s; /* mean GPU-seconds of a job of the mix */
    long users, vcs;
    char *arr_path, *mix_path, *prof_path;
};

void gs_gen_spec_destroy(gs_gen_spec *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nmodels; i++) free(s->models[i]);
    free(s->models);
    free(s->gaps);
    free(s->smp);
    free(s->text);
    free(s->arr_path);
    free(s->mix_path);
    free(s->prof_path);
    free(s);
}

/* ---- spec parsing --------------------------------------------------------------------- */

static const char *const keys[] = {"jobs",  "load", "rate",     "arrivals", "mix",
                                   "users", "vcs",  "profiles", NULL};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and deduplicate v[0..*n) (strings owned by v). */
static void uniq_strs(char **v, size_t *n)
{
    if (!*n) return;
    qsort(v, *n, sizeof *v, cmp_str);
    size_t k = 1;
    for (size_t i = 1; i < *n; i++) {
        if (!strcmp(v[i], v[k - 1]))
            free(v[i]);
        else
            v[k++] = v[i];
    }
    *n = k;
}

static int push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        char **nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return GS_ENOMEM;
        *v = nv;
        *cap = nc;
    }
    if (!((*v)[*n] = strdup(s))) return GS_ENOMEM;
    (*n)++;
    return 0;
}

/* An error in a file a key names: "KEY: file:line:col: message" at the value's column (the
 * spec outlives no file name, so the file's diagnostic becomes part of the message). */
static int sub_err(gs_diag *d, int rc, int col, const char *key, const gs_diag *sub)
{
    if (rc == GS_ENOMEM) return rc;
    char b[400];
    gs_diag_format(sub, b, sizeof b);
    return gs_diag_set(d, rc, 1, col, "%s: %s", key, b);
}

/*
 * The model names of a profile table's first table (header "model,gpu_type,..."), 'default'
 * excepted: the job types of mix=gavel.
 */
static int profile_models(gs_gen_spec *s, const char *file, const char *buf, size_t len, gs_diag *d,
                          int col)
{
    /* the table must be a valid profile file */
    gs_profiles *p = NULL;
    gs_diag pd;
    gs_diag_init(&pd, file);
    int rc = gs_profiles_parse(file, buf, len, &p, &pd);
    gs_profiles_destroy(p);
    if (rc) return sub_err(d, rc, col, "profiles", &pd);
    gs_csv r;
    gs_csv_init(&r, buf, len, 1);
    int in_models = 0;
    size_t cap = 0;
    while ((rc = gs_csv_next(&r, &pd)) > 0) {
        if (r.nf >= 2 && !strcmp(r.f[0], "model") && !strcmp(r.f[1], "gpu_type")) {
            in_models = 1;
            continue;
        }
        if (r.nf >= 1 &&
            (!strcmp(r.f[0], "model_a") || !strcmp(r.f[0], "alias") ||
             (r.nf >= 2 && !strcmp(r.f[0], "gpu_type") && !strcmp(r.f[1], "gpu_mem_mb")))) {
            in_models = 0;
            continue;
        }
        if (!in_models || !r.nf || !r.f[0][0] || !strcmp(r.f[0], "default")) continue;
        if ((rc = push_str(&s->models, &s->nmodels, &cap, r.f[0]))) break;
    }
    gs_csv_release(&r);
    if (rc < 0) return sub_err(d, rc, col, "profiles", &pd);
    uniq_strs(s->models, &s->nmodels);
    if (!s->nmodels)
        return gs_diag_set(d, GS_EINVAL, 1, col, "profiles: %s has no models (only 'default')",
                           file);
    return 0;
}

static int load_trace(const char *key, const char *path, gs_trace *t, gs_diag *d, int col)
{
    gs_diag td;
    gs_diag_init(&td, path);
    int rc = gs_trace_load(path, t, &td);
    return rc ? sub_err(d, rc, col, key, &td) : 0;
}

/* arrivals=trace:FILE: the gaps between consecutive submit times. */
static int load_gaps(gs_gen_spec *s, gs_diag *d, int col)
{
    gs_trace t;
    int rc = load_trace("arrivals", s->arr_path, &t, d, col);
    if (rc) return rc;
    if (t.n < 2) {
        gs_trace_release(&t);
        return gs_diag_set(d, GS_EINVAL, 1, col,
                           "arrivals: %s has %zu job; inter-arrival gaps need two or more",
                           s->arr_path, t.n);
    }
    s->ngaps = t.n - 1;
    s->gaps = malloc(s->ngaps * sizeof *s->gaps);
    if (!s->gaps) {
        gs_trace_release(&t);
        return GS_ENOMEM;
    }
    double sum = 0;
    for (size_t i = 0; i < s->ngaps; i++) {
        s->gaps[i] = t.jobs[i + 1].submit - t.jobs[i].submit;
        sum += gs_time_to_sec(s->gaps[i]);
    }
    s->gap_mean_s = sum / (double)s->ngaps;
    gs_trace_release(&t);
    return 0;
}

/*
 * The run time of a job given in training steps (Gavel's traces): its steps at its model's
 * throughput on the reference GPU type at its size in the built-in profiles - the work the
 * engine gives it with its default profiles (docs/heterogeneity.md) - rounded up to a whole
 * millisecond.  0 when unknown.
 */
static gs_time steps_duration(const gs_profiles *p, const gs_job_spec *j)
{
    int64_t g = (int64_t)j->ntasks * j->gpus_per_task;
    if (j->task_gpus)
        for (int k = g = 0; k < j->ntasks; k++) g += j->task_gpus[k];
    if (!p || !(j->steps > 0) || g <= 0 || g > (1 << 20)) return 0;
    double tp = gs_profiles_tput(p, j->model, gs_profiles_ref_type(p), (int)g);
    double ms = tp > 0 ? ceil(j->steps / tp * 1e3) : 0; /* whole ms, as every generated time */
    return ms > 0 && ms <= 1e14 ? (gs_time)ms * 1000 : 0;
}

/*
 * mix=trace:FILE: every job with a positive duration (or, in Gavel's traces, steps that the
 * built-in profiles turn into one), its shape and model.
 */
static int load_mix(gs_gen_spec *s, gs_diag *d, int col)
{
    gs_trace t;
    int rc = load_trace("mix", s->mix_path, &t, d, col);
    if (rc) return rc;
    gs_profiles *prof = NULL;
    for (size_t i = 0; i < t.n && !prof; i++)
        if (t.jobs[i].duration <= 0 && t.jobs[i].steps > 0) {
            gs_diag pd;
            gs_diag_init(&pd, "gavel.csv (built in)");
            if ((rc = gs_profiles_builtin(&prof, &pd))) {
                gs_trace_release(&t);
                return rc == GS_ENOMEM ? rc : sub_err(d, rc, col, "mix", &pd);
            }
        }
    s->smp = malloc(t.n * sizeof *s->smp);
    if (!s->smp) rc = GS_ENOMEM;
    size_t cap = 0;
    for (size_t i = 0; i < t.n && !rc; i++)
        if (t.jobs[i].model && t.jobs[i].model[0])
            rc = push_str(&s->models, &s->nmodels, &cap, t.jobs[i].model);
    if (rc) {
        gs_trace_release(&t);
        gs_profiles_destroy(prof);
        return rc;
    }
    uniq_strs(s->models, &s->nmodels);
    double sum = 0;
    for (size_t i = 0; i < t.n; i++) {
        const gs_job_spec *j = &t.jobs[i];
        gs_time dur = j->duration > 0 ? j->duration : steps_duration(prof, j);
        if (dur <= 0) continue;
        gen_sample *x = &s->smp[s->nsmp++];
        if (j->task_gpus) { /* tasks of different sizes: their GPUs as 1-GPU tasks */
            int g = 0;
            for (int k = 0; k < j->ntasks; k++) g += j->task_gpus[k];
            x->ntasks = g;
            x->gpt = 1;
        } else {
            x->ntasks = j->ntasks;
            x->gpt = j->gpus_per_task;
        }
        x->duration = dur;
        x->model = -1;
        if (j->model && j->model[0]) {
            const char *key = j->model;
            char **hit = bsearch(&key, s->models, s->nmodels, sizeof *s->models, cmp_str);
            x->model = (int32_t)(hit - s->models);
        }
        sum += (double)x->ntasks * x->gpt * gs_time_to_sec(x->duration);
    }
    gs_trace_release(&t);
    gs_profiles_destroy(prof);
    if (!s->nsmp)
        return gs_diag_set(d, GS_EINVAL, 1, col,
                           "mix: %s has no job with a positive duration (or steps of a model "
                           "the built-in profiles know)",
                           s->mix_path);
    s->mean_gpu_s = sum / (double)s->nsmp;
    return 0;
}

/* E[10^U(a,b)] */
static double mean_pow10(double a, double b)
{
    return (pow(10, b) - pow(10, a)) / ((b - a) * log(10));
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
    if (!isdigit((unsigned char)*v)) return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

static int parse_pos(const char *v, double hi, double *out)
{
    if (!isdigit((unsigned char)*v) && *v != '.') return -1;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !(x > 0) || !(x <= hi)) return -1;
    *out = x;
    return 0;
}

/* "trace:FILE" -> FILE (copied); else NULL */
static char *trace_arg(const char *v)
{
    if (strncmp(v, "trace:", 6) || !v[6]) return NULL;
    return strdup(v + 6);
}

int gs_gen_spec_parse(const char *src, const char *text, gs_gen_spec **out, gs_diag *d)
{
    *out = NULL;
    if (!text) text = "";
    if (d && src) d->file = src;
    gs_gen_spec *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->jobs = 1000;
    s->load = 0.9;
    s->arrivals = ARR_POISSON;
    s->mix = MIX_GAVEL;
    int seen[sizeof keys / sizeof *keys] = {0};
    int col_arr = 1, col_mix = 1, col_prof = 1;
    char *buf = strdup(text);
    if (!(s->text = strdup(text)) || !buf) {
        free(buf);
        gs_gen_spec_destroy(s);
        return GS_ENOMEM;
    }
    int rc = 0;
    char *p = buf;
    while (!rc && *p) {
        char *item = p, *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        p = comma ? comma + 1 : p + strlen(p);
        int col = (int)(item - buf) + 1;
        if (!*item) {
            rc = gs_diag_set(d, GS_EPARSE, 1, col, "empty item (two commas in a row?)");
            break;
        }
        char *eq = strchr(item, '=');
        if (!eq) {
            rc = gs_diag_set(d, GS_EPARSE, 1, col, "'%s': expected KEY=VALUE", item);
            break;
        }
        *eq = '\0';
        const char *k = item, *v = eq + 1;
        int vcol = col + (int)(v - item);
        int ki = 0;
        while (keys[ki] && strcmp(keys[ki], k)) ki++;
        if (!keys[ki]) {
            const char *best = NULL;
            int bd = 3;
            for (int q = 0; keys[q]; q++) {
                int dist = gs_edit_distance(k, keys[q]);
                if (dist < bd) bd = dist, best = keys[q];
            }
            if (best)
                rc = gs_diag_set(d, GS_EPARSE, 1, col, "unknown key '%s' (did you mean '%s'?)", k,
                                 best);
            else
                rc = gs_diag_set(d, GS_EPARSE, 1, col,
                                 "unknown key '%s' (keys: jobs, load, rate, arrivals, mix, users, "
                                 "vcs, profiles)",
                                 k);
            break;
        }
        if (seen[ki]++) {
            rc = gs_diag_set(d, GS_EPARSE, 1, col, "'%s' given twice", k);
            break;
        }
        if (!*v) {
            rc = gs_diag_set(d, GS_EPARSE, 1, vcol, "%s: empty value", k);
            break;
        }
        if (!strcmp(k, "jobs")) {
            if (parse_long(v, 1, MAX_JOBS, &s->jobs))
                rc = gs_diag_set(d, GS_ERANGE, 1, vcol,
                                 "jobs: '%s' is not an integer between 1 and %ld", v, MAX_JOBS);
        } else if (!strcmp(k, "load")) {
            s->has_load = 1;
            if (parse_pos(v, 100, &s->load))
                rc = gs_diag_set(d, GS_ERANGE, 1, vcol,
                                 "load: '%s' is not a number in (0, 100] (a fraction of the "
                                 "cluster's GPUs, 0.9 = 90 %%)",
                                 v);
        } else if (!strcmp(k, "rate")) {
            s->has_rate = 1;
            if (parse_pos(v, 1e9, &s->rate))
                rc = gs_diag_set(d, GS_ERANGE, 1, vcol,
                                 "rate: '%s' is not a positive number of jobs per hour", v);
        } else if (!strcmp(k, "arrivals")) {
            col_arr = vcol;
            if (!strcmp(v, "poisson"))
                s->arrivals = ARR_POISSON;
            else if ((s->arr_path = trace_arg(v)))
                s->arrivals = ARR_TRACE;
            else
                rc = gs_diag_set(d, GS_EPARSE, 1, vcol,
                                 "arrivals: '%s' is neither 'poisson' nor 'trace:FILE'", v);
        } else if (!strcmp(k, "mix")) {
            col_mix = vcol;
            if (!strcmp(v, "gavel") || !strcmp(v, "gavel-single")) {
                s->mix = MIX_GAVEL;
                s->single = v[5] != '\0';
            } else if ((s->mix_path = trace_arg(v)))
                s->mix = MIX_TRACE;
            else
                rc = gs_diag_set(d, GS_EPARSE, 1, vcol,
                                 "mix: '%s' is not 'gavel', 'gavel-single' or 'trace:FILE'", v);
        } else if (!strcmp(k, "users") || !strcmp(k, "vcs")) {
            long *dst = k[0] == 'u' ? &s->users : &s->vcs;
            if (parse_long(v, 1, MAX_NAMES, dst))
                rc = gs_diag_set(d, GS_ERANGE, 1, vcol,
                                 "%s: '%s' is not an integer between 1 and %ld", k, v, MAX_NAMES);
        } else { /* profiles */
            col_prof = vcol;
            if (!(s->prof_path = strdup(v))) rc = GS_ENOMEM;
        }
    }
    free(buf);
    if (!rc && s->has_load && s->has_rate)
        rc = gs_diag_set(d, GS_EINVAL, 1, 1, "give load= or rate=, not both");
    if (!rc && s->prof_path && s->mix != MIX_GAVEL)
        rc = gs_diag_set(d, GS_EINVAL, 1, col_prof,
                         "profiles: only mix=gavel draws models from a profile table (mix=trace "
                         "keeps the trace's)");
    if (!rc && s->arrivals == ARR_TRACE) rc = load_gaps(s, d, col_arr);
    if (!rc && s->mix == MIX_TRACE) rc = load_mix(s, d, col_mix);
    if (!rc && s->mix == MIX_GAVEL) {
        if (s->prof_path) {
            char *pb;
            size_t len;
            gs_diag fd;
            gs_diag_init(&fd, s->prof_path);
            rc = gs_read_file(s->prof_path, &pb, &len, &fd);
            if (rc) {
                rc = sub_err(d, rc, col_prof, "profiles", &fd);
            } else {
                rc = profile_models(s, s->prof_path, pb, len, d, col_prof);
                free(pb);
            }
        } else {
            rc = profile_models(s, "gavel.csv (built in)", gs_profiles_builtin_csv,
                                strlen(gs_profiles_builtin_csv), d, 1);
        }
        /* Gavel's sizes are independent of its durations */
        double mean_gpus = s->single ? 1 : 0.7 * 1 + 0.1 * 2 + 0.15 * 4 + 0.05 * 8;
        double mean_dur = 60 * (0.8 * mean_pow10(1.5, 3) + 0.2 * mean_pow10(3, 4));
        s->mean_gpu_s = mean_gpus * mean_dur;
    }
    if (!rc && s->arrivals == ARR_TRACE && (s->has_load || s->has_rate) && !(s->gap_mean_s > 0))
        rc = gs_diag_set(d, GS_EINVAL, 1, col_arr,
                         "arrivals: every job of %s arrives at once; its gaps cannot be scaled "
                         "to a load or rate",
                         s->arr_path);
    if (rc) {
        gs_gen_spec_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- generation --------------------------------------------------------------------- */

enum { R_ARR, R_SIZE, R_DUR, R_MODEL, R_USER, R_VC, R_N };

/* seconds -> whole milliseconds, in us */
static gs_time to_ms(double sec)
{
    double ms = floor(sec * 1000 + 0.5);
    if (ms > 1e14) ms = 1e14; /* 1e11 s: the largest time a trace holds */
    return (gs_time)ms * 1000;
}

static int keep_str(gs_trace *t, const char *s, const char **out)
{
    if (t->nstrs == t->capstrs) {
        size_t nc = t->capstrs ? t->capstrs * 2 : 64;
        char **ns = realloc(t->strs, nc * sizeof *ns);
        if (!ns) return GS_ENOMEM;
        t->strs = ns;
        t->capstrs = nc;
    }
    char *c = strdup(s);
    if (!c) return GS_ENOMEM;
    t->strs[t->nstrs++] = c;
    *out = c;
    return 0;
}

/* n names "PREFIXk" owned by t, into *out (an array the trace owns) */
static int names(gs_trace *t, const char *prefix, long n, const char ***out)
{
    *out = NULL;
    if (n <= 0) return 0;
    const char **v = malloc((size_t)n * sizeof *v);
    if (!v) return GS_ENOMEM;
    for (long i = 0; i < n; i++) {
        char b[32];
        snprintf(b, sizeof b, "%s%ld", prefix, i);
        int rc = keep_str(t, b, &v[i]);
        if (rc) {
            free(v);
            return rc;
        }
    }
    *out = v;
    return 0;
}

/* The arrival rate in jobs per second; 0 = the trace's own gaps. */
static double rate_per_s(const gs_gen_spec *s, size_t gpus)
{
    if (s->has_rate) return s->rate / 3600.0;
    if (s->arrivals == ARR_TRACE && !s->has_load) return 0;
    return s->load * (double)gpus / s->mean_gpu_s;
}

/* ---- the CSV (writer and digest share one formatter) ---- */

typedef struct sink {
    FILE *f;
    struct sha256_ctx sha;
    char buf[1 << 16];
    size_t n;
} sink;

static void sink_flush(sink *k)
{
    sha256_update(&k->sha, k->n, (const uint8_t *)k->buf);
    if (k->f) fwrite(k->buf, 1, k->n, k->f);
    k->n = 0;
}

static void sink_put(sink *k, const char *s, size_t n)
{
    if (k->n + n > sizeof k->buf) sink_flush(k);
    memcpy(k->buf + k->n, s, n);
    k->n += n;
}

/* decimal seconds as gs_fmt_sec writes them (whole, or up to 6 decimals, zeros trimmed) */
static size_t fmt_sec(char *b, gs_time t)
{
    uint64_t whole = (uint64_t)t / 1000000, frac = (uint64_t)t % 1000000;
    char tmp[24];
    size_t n = 0, k = 0;
    do tmp[k++] = (char)('0' + whole % 10), whole /= 10;
    while (whole);
    while (k) b[n++] = tmp[--k];
    if (frac) {
        b[n++] = '.';
        int digits = 6;
        while (frac % 10 == 0) frac /= 10, digits--;
        for (int i = digits - 1; i >= 0; i--) {
            b[n + (size_t)i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        n += (size_t)digits;
    }
    return n;
}

static size_t fmt_int(char *b, int64_t v)
{
    char tmp[24];
    size_t n = 0, k = 0;
    uint64_t u = (uint64_t)v;
    do tmp[k++] = (char)('0' + u % 10), u /= 10;
    while (u);
    while (k) b[n++] = tmp[--k];
    return n;
}

/* 1 when model names need CSV quoting */
static int needs_quote(const char *s)
{
    return s && strpbrk(s, ",\"\r\n") != NULL;
}

static void put_field(sink *k, const char *s)
{
    if (!s) return;
    if (!needs_quote(s)) {
        sink_put(k, s, strlen(s));
        return;
    }
    sink_put(k, "\"", 1);
    for (; *s; s++) {
        if (*s == '"') sink_put(k, "\"", 1);
        sink_put(k, s, 1);
    }
    sink_put(k, "\"", 1);
}

static void emit(const gs_gen_spec *s, size_t gpus, uint64_t seed, const gs_trace *t, sink *k)
{
    int gpt = 0, model = 0, user = 0, vc = 0;
    for (size_t i = 0; i < t->n; i++) {
        gpt |= t->jobs[i].gpus_per_task != 1;
        model |= t->jobs[i].model != NULL;
        user |= t->jobs[i].user != NULL;
        vc |= t->jobs[i].vc != NULL;
    }
    char line[512];
    char g[48] = "";
    if (gpus) snprintf(g, sizeof g, " (%zu GPUs)", gpus);
    int n = snprintf(line, sizeof line, "# gsched gen %s --seed %llu%s\n", s->text,
                     (unsigned long long)seed, g);
    if (n > 0 && (size_t)n < sizeof line && !strchr(s->text, '\n')) sink_put(k, line, (size_t)n);
    n = snprintf(line, sizeof line, "id,submit,duration,gpus%s%s%s%s\n",
                 gpt ? ",gpus_per_task" : "", model ? ",model" : "", user ? ",user" : "",
                 vc ? ",vc" : "");
    sink_put(k, line, (size_t)n);
    for (size_t i = 0; i < t->n; i++) {
        const gs_job_spec *j = &t->jobs[i];
        size_t m = fmt_int(line, j->id);
        line[m++] = ',';
        m += fmt_sec(line + m, j->submit);
        line[m++] = ',';
        m += fmt_sec(line + m, j->duration);
        line[m++] = ',';
        m += fmt_int(line + m, (int64_t)j->ntasks * j->gpus_per_task);
        if (gpt) {
            line[m++] = ',';
            m += fmt_int(line + m, j->gpus_per_task);
        }
        sink_put(k, line, m);
        if (model) sink_put(k, ",", 1), put_field(k, j->model);
        if (user) sink_put(k, ",", 1), put_field(k, j->user);
        if (vc) sink_put(k, ",", 1), put_field(k, j->vc);
        sink_put(k, "\n", 1);
    }
    sink_flush(k);
}

int gs_gen_generate(const gs_gen_spec *s, size_t total_gpus, uint64_t seed, gs_trace *t, gs_diag *d)
{
    memset(t, 0, sizeof *t);
    if ((s->has_load || (s->arrivals == ARR_POISSON && !s->has_rate)) && total_gpus == 0)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "load=%g needs the cluster's GPU count (a cluster with GPUs)", s->load);
    double rate = rate_per_s(s, total_gpus);
    /* the mean gap in seconds, and how trace gaps are scaled to it */
    double mean_gap = rate > 0 ? 1.0 / rate : 0;
    double scale = s->arrivals == ARR_TRACE && rate > 0 ? mean_gap / s->gap_mean_s : 1.0;

    gs_rng master, r[R_N];
    gs_rng_seed(&master, seed);
    for (int i = 0; i < R_N; i++) gs_rng_seed(&r[i], gs_rng_next(&master));

    int rc = 0;
    const char **model = NULL, **user = NULL, **vc = NULL;
    t->format = GS_TRACE_NATIVE;
    t->jobs = malloc((size_t)s->jobs * sizeof *t->jobs);
    model = s->nmodels ? malloc(s->nmodels * sizeof *model) : NULL;
    if (!t->jobs || (s->nmodels && !model)) {
        rc = GS_ENOMEM;
        goto out;
    }
    t->cap = (size_t)s->jobs;
    for (size_t i = 0; i < s->nmodels && !rc; i++) rc = keep_str(t, s->models[i], &model[i]);
    if (!rc) rc = names(t, "user", s->users, &user);
    if (!rc) rc = names(t, "vc", s->vcs, &vc);
    if (rc) goto out;

    double now = 0; /* seconds */
    for (long i = 0; i < s->jobs; i++) {
        gs_job_spec *j = &t->jobs[i];
        gs_job_spec_init(j);
        j->id = i;
        if (i > 0) {
            if (s->arrivals == ARR_TRACE)
                now += gs_time_to_sec(s->gaps[gs_rng_below(&r[R_ARR], s->ngaps)]) * scale;
            else
                now += -log(1.0 - gs_rng_double(&r[R_ARR])) * mean_gap;
        }
        if (!(now <= 1e11)) {
            rc = gs_diag_set(d, GS_ERANGE, 0, 0,
                             "job %ld arrives after 1e11 s, the largest time a trace holds: the "
                             "arrival rate is too low for %ld jobs",
                             i, (long)s->jobs);
            goto out;
        }
        j->submit = to_ms(now);
        if (s->mix == MIX_GAVEL) {
            double u = gs_rng_double(&r[R_SIZE]);
            j->ntasks = s->single ? 1 : u < 0.70 ? 1 : u < 0.80 ? 2 : u < 0.95 ? 4 : 8;
            double b = gs_rng_double(&r[R_DUR]), x = gs_rng_double(&r[R_DUR]);
            double e = b < 0.8 ? 1.5 + 1.5 * x : 3.0 + x;
            j->duration = to_ms(60 * pow(10, e));
            j->model = model[gs_rng_below(&r[R_MODEL], s->nmodels)];
        } else {
            const gen_sample *x = &s->smp[gs_rng_below(&r[R_SIZE], s->nsmp)];
            j->ntasks = x->ntasks;
            j->gpus_per_task = x->gpt;
            j->duration = x->duration;
            if (x->model >= 0) j->model = model[x->model];
        }
        if (user) j->user = user[gs_rng_below(&r[R_USER], (uint64_t)s->users)];
        if (vc) j->vc = vc[gs_rng_below(&r[R_VC], (uint64_t)s->vcs)];
    }
    t->n = (size_t)s->jobs;
    size_t pl = strlen(s->text) + 5;
    if (!(t->path = malloc(pl))) {
        rc = GS_ENOMEM;
        goto out;
    }
    snprintf(t->path, pl, "gen:%s", s->text);
    sink *k = malloc(sizeof *k);
    if (!k) {
        rc = GS_ENOMEM;
        goto out;
    }
    k->f = NULL;
    k->n = 0;
    sha256_init(&k->sha);
    emit(s, total_gpus, seed, t, k);
    uint8_t dig[SHA256_DIGEST_SIZE];
    sha256_digest(&k->sha, sizeof dig, dig);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) snprintf(t->sha256 + 2 * i, 3, "%02x", dig[i]);
    free(k);
out:
    free(model);
    free(user);
    free(vc);
    if (rc) gs_trace_release(t);
    return rc;
}

int gs_gen_write(const gs_gen_spec *s, size_t total_gpus, uint64_t seed, const gs_trace *t,
                 FILE *out, gs_diag *d)
{
    sink *k = malloc(sizeof *k);
    if (!k) return GS_ENOMEM;
    k->f = out;
    k->n = 0;
    sha256_init(&k->sha);
    emit(s, total_gpus, seed, t, k);
    free(k);
    if (ferror(out)) return gs_diag_set(d, GS_EIO, 0, 0, "cannot write the trace");
    return 0;
}

void gs_gen_describe(const gs_gen_spec *s, size_t total_gpus, const gs_trace *t, gs_gen_stats *st)
{
    memset(st, 0, sizeof *st);
    st->rate_per_h = rate_per_s(s, total_gpus) * 3600;
    st->mix_mean_gpu_s = s->mean_gpu_s;
    if (!t->n) return;
    double gs = 0;
    for (size_t i = 0; i < t->n; i++)
        gs += (double)t->jobs[i].ntasks * t->jobs[i].gpus_per_task *
              gs_time_to_sec(t->jobs[i].duration);
    st->gpu_s = gs;
    st->span_s = gs_time_to_sec(t->jobs[t->n - 1].submit - t->jobs[0].submit);
    if (st->span_s > 0) {
        st->rate_per_h_actual = (double)(t->n - 1) / st->span_s * 3600;
        if (total_gpus)
            st->load_actual =
                gs * (double)(t->n - 1) / (double)t->n / (st->span_s * (double)total_gpus);
    }
}
