/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pollux.c - readers of the Pollux artifact's application traces into a
 * goodput model (goodput.h), and the artifact's application constants.
 *
 * One directory per application (traces/<app>/): placements.csv
 * (placement,local_bsz,step_time,sync_time), scalability.csv
 * (num_nodes,num_replicas,local_bsz,step_time,sync_time) and
 * validation-<batch>.csv (progress,iteration,metric,grad_sqr,grad_var, one
 * row per epoch).  Columns are found by name; extra columns are ignored.
 *
 * Invariants: validation files are added in ascending batch order (never in
 * directory order); every rejection names path:line:col in the message (the
 * diag's file is left NULL: the paths are built here and do not outlive the
 * call); nothing is added to the model for a file that fails.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "config.h"
#include "gsched/goodput.h"
#include "sim.h"

/* The artifact's APPLICATIONS (simulator/applications.py); 0 = derived from the rows. */
static const gs_app_spec pollux_apps[] = {
    {"bert", 0, 0, 0, 0, 2},      {"cifar10", 0, 0, 0, 0, 100},    {"ncf", 0, 0, 0, 0, 10},
    {"imagenet", 0, 0, 0, 0, 90}, {"deepspeech2", 0, 0, 0, 0, 80}, {"yolov3", 0, 0, 0, 8, 50},
};

const gs_app_spec *gs_pollux_app_spec(const char *name)
{
    for (size_t i = 0; i < sizeof pollux_apps / sizeof *pollux_apps; i++)
        if (name && !strcmp(pollux_apps[i].name, name)) return &pollux_apps[i];
    return NULL;
}

static int perr(gs_diag *d, int err, const char *path, int line, int col, const char *fmt,
                const char *a, const char *b)
{
    char msg[400];
    snprintf(msg, sizeof msg, fmt, a, b);
    if (d) d->file = NULL;
    return gs_diag_set(d, err, 0, 0, "%s:%d:%d: %s", path, line, col, msg);
}

static int colidx(const gs_csv *r, const char *name)
{
    for (size_t i = 0; i < r->nf; i++)
        if (!strcmp(r->f[i], name)) return (int)i;
    return -1;
}

static int num(const gs_csv *r, int c, const char *path, const char *name, double *out, gs_diag *d)
{
    const char *s = r->f[c];
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (end && *end == ' ') end++;
    if (end == s || *end || errno || !isfinite(v))
        return perr(d, GS_EPARSE, path, r->rec_line, r->col[c], "%s: '%s' is not a number", name,
                    s);
    if (v < 0)
        return perr(d, GS_ERANGE, path, r->rec_line, r->col[c], "%s must not be negative, got '%s'",
                    name, s);
    *out = v;
    return 0;
}

static int integer(const gs_csv *r, int c, const char *path, const char *name, long lo, long hi,
                   long *out, gs_diag *d)
{
    double v;
    int rc = num(r, c, path, name, &v, d);
    if (rc) return rc;
    if (v != floor(v) || v < (double)lo || v > (double)hi) {
        char range[64];
        snprintf(range, sizeof range, "%ld..%ld", lo, hi);
        return perr(d, GS_ERANGE, path, r->rec_line, r->col[c], "%s must be an integer in %s", name,
                    range);
    }
    *out = (long)v;
    return 0;
}

typedef int (*row_fn)(gs_goodput *g, int app, const gs_csv *r, const int *c, const char *path,
                      void *ud, gs_diag *d);

/* Read one CSV with the named columns (all required) and hand each row to fn. */
static int read_csv(gs_goodput *g, int app, const char *path, const char *const *cols, int ncols,
                    row_fn fn, void *ud, gs_diag *d)
{
    char *buf;
    size_t len;
    gs_diag sub;
    gs_diag_init(&sub, path);
    int rc = gs_read_file(path, &buf, &len, &sub);
    if (rc) {
        char m[600];
        gs_diag_format(&sub, m, sizeof m);
        if (d) d->file = NULL;
        return gs_diag_set(d, rc, 0, 0, "%s", m);
    }
    gs_csv r;
    gs_csv_init(&r, buf, len, 0);
    int c[8];
    rc = gs_csv_next(&r, &sub);
    if (rc <= 0) {
        rc = perr(d, GS_EPARSE, path, 1, 1, "%s%sempty file (no header line)", "", "");
        goto out;
    }
    for (int i = 0; i < ncols; i++) {
        c[i] = colidx(&r, cols[i]);
        if (c[i] < 0) {
            rc = perr(d, GS_EPARSE, path, r.rec_line, 1, "missing column '%s'%s", cols[i], "");
            goto out;
        }
    }
    size_t nf = r.nf;
    int rows = 0;
    while ((rc = gs_csv_next(&r, &sub)) > 0) {
        if (r.nf != nf) {
            char a[32], b[32];
            snprintf(a, sizeof a, "%zu", nf);
            snprintf(b, sizeof b, "%zu", r.nf);
            rc = perr(d, GS_EPARSE, path, r.rec_line, 1, "expected %s fields, found %s", a, b);
            goto out;
        }
        if ((rc = fn(g, app, &r, c, path, ud, d))) goto out;
        rows++;
    }
    if (rc < 0) {
        rc = perr(d, rc, path, sub.line, sub.col, "%s%s", sub.msg, "");
        goto out;
    }
    if (!rows) rc = perr(d, GS_EPARSE, path, r.line, 1, "a header but no rows%s%s", "", "");
out:
    gs_csv_release(&r);
    free(buf);
    return rc;
}

static int add_err(gs_diag *d, int rc, const char *path, const gs_csv *r, const char *what)
{
    return perr(d, rc, path, r->rec_line, 1, "%s: %s", what, gs_strerror(rc));
}

static int placement_row(gs_goodput *g, int app, const gs_csv *r, const int *c, const char *path,
                         void *ud, gs_diag *d)
{
    (void)ud;
    const char *pl = r->f[c[0]];
    size_t n = strlen(pl);
    if (!n || n > 24 || strspn(pl, "123456789") != n)
        return perr(d, GS_EPARSE, path, r->rec_line, r->col[c[0]],
                    "placement: '%s' is not a list of GPUs per node (digits 1-9)%s", pl, "");
    long bsz;
    double st, sy;
    int rc;
    if ((rc = integer(r, c[1], path, "local_bsz", 1, 1L << 30, &bsz, d)) ||
        (rc = num(r, c[2], path, "step_time", &st, d)) ||
        (rc = num(r, c[3], path, "sync_time", &sy, d)))
        return rc;
    if (!(st > 0))
        return perr(d, GS_ERANGE, path, r->rec_line, r->col[c[2]], "step_time must be > 0%s%s", "",
                    "");
    rc = gs_goodput_add_placement(g, app, pl, (int)bsz, st, sy);
    return rc ? add_err(d, rc, path, r, "placement row") : 0;
}

static int scal_row(gs_goodput *g, int app, const gs_csv *r, const int *c, const char *path,
                    void *ud, gs_diag *d)
{
    (void)ud;
    long nodes, reps, bsz;
    double st, sy;
    int rc;
    if ((rc = integer(r, c[0], path, "num_nodes", 1, 1 << 20, &nodes, d)) ||
        (rc = integer(r, c[1], path, "num_replicas", 1, 1 << 20, &reps, d)) ||
        (rc = integer(r, c[2], path, "local_bsz", 1, 1L << 30, &bsz, d)) ||
        (rc = num(r, c[3], path, "step_time", &st, d)) ||
        (rc = num(r, c[4], path, "sync_time", &sy, d)))
        return rc;
    if (reps < nodes)
        return perr(d, GS_ERANGE, path, r->rec_line, r->col[c[1]],
                    "num_replicas must be >= num_nodes%s%s", "", "");
    if (!(st > 0))
        return perr(d, GS_ERANGE, path, r->rec_line, r->col[c[3]], "step_time must be > 0%s%s", "",
                    "");
    rc = gs_goodput_add_scalability(g, app, (int)nodes, (int)reps, (int)bsz, st, sy);
    return rc ? add_err(d, rc, path, r, "scalability row") : 0;
}

static int val_row(gs_goodput *g, int app, const gs_csv *r, const int *c, const char *path,
                   void *ud, gs_diag *d)
{
    int64_t batch = *(const int64_t *)ud;
    double v[5];
    static const char *const names[] = {"progress", "iteration", "metric", "grad_sqr", "grad_var"};
    for (int i = 0; i < 5; i++) {
        if (i == 2) { /* the metric may be any finite number */
            char *end;
            v[2] = strtod(r->f[c[2]], &end);
            if (end == r->f[c[2]] || *end || !isfinite(v[2]))
                return perr(d, GS_EPARSE, path, r->rec_line, r->col[c[2]],
                            "metric: '%s' is not a number%s", r->f[c[2]], "");
            continue;
        }
        int rc = num(r, c[i], path, names[i], &v[i], d);
        if (rc) return rc;
    }
    int rc = gs_goodput_add_validation(g, app, batch, v[0], v[1], v[2], v[3], v[4]);
    return rc ? add_err(d, rc, path, r, "validation row") : 0;
}

typedef struct vfile {
    int64_t batch;
    char *name;
} vfile;

static int cmp_vfile(const void *a, const void *b)
{
    const vfile *x = a, *y = b;
    return (x->batch > y->batch) - (x->batch < y->batch);
}

/* "validation-<digits>.csv" -> batch, else 0 */
static int64_t val_batch(const char *name)
{
    const char *p = "validation-";
    size_t n = strlen(p);
    if (strncmp(name, p, n)) return 0;
    const char *s = name + n;
    size_t k = strspn(s, "0123456789");
    if (!k || k > 12 || strcmp(s + k, ".csv")) return 0;
    return strtoll(s, NULL, 10);
}

int gs_pollux_load_app(gs_goodput *g, const char *dir, const char *name, gs_diag *d)
{
    const gs_app_spec *known = gs_pollux_app_spec(name);
    gs_app_spec spec = known ? *known : (gs_app_spec){name, 0, 0, 0, 0, 0};
    spec.name = name;
    int app = gs_goodput_add_app(g, &spec);
    if (app < 0) {
        if (d) d->file = NULL;
        return gs_diag_set(d, app, 0, 0, "application %s: %s", name, gs_strerror(app));
    }
    size_t dl = strlen(dir);
    char *path = malloc(dl + 64);
    if (!path) return GS_ENOMEM;
    static const char *const pcols[] = {"placement", "local_bsz", "step_time", "sync_time"};
    static const char *const scols[] = {"num_nodes", "num_replicas", "local_bsz", "step_time",
                                        "sync_time"};
    static const char *const vcols[] = {"progress", "iteration", "metric", "grad_sqr", "grad_var"};
    snprintf(path, dl + 64, "%s/placements.csv", dir);
    int rc = read_csv(g, app, path, pcols, 4, placement_row, NULL, d);
    if (!rc) {
        snprintf(path, dl + 64, "%s/scalability.csv", dir);
        rc = read_csv(g, app, path, scols, 5, scal_row, NULL, d);
    }
    vfile *vf = NULL;
    size_t nv = 0, cap = 0;
    if (!rc) {
        DIR *dp = opendir(dir);
        if (!dp) {
            rc = perr(d, GS_ENOENT, dir, 0, 0, "cannot list the directory: %s%s", strerror(errno),
                      "");
            rc = GS_ENOENT;
        } else {
            struct dirent *de;
            while ((de = readdir(dp))) {
                int64_t b = val_batch(de->d_name);
                if (b <= 0) continue;
                if (nv == cap) {
                    cap = cap ? cap * 2 : 16;
                    vfile *n = realloc(vf, cap * sizeof *n);
                    if (!n) {
                        rc = GS_ENOMEM;
                        break;
                    }
                    vf = n;
                }
                vf[nv].batch = b;
                vf[nv].name = strdup(de->d_name);
                if (!vf[nv++].name) {
                    rc = GS_ENOMEM;
                    break;
                }
            }
            closedir(dp);
        }
    }
    if (!rc && !nv) {
        if (d) d->file = NULL;
        rc = gs_diag_set(d, GS_ENOENT, 0, 0, "%s: no validation-<batch>.csv files", dir);
    }
    if (!rc) {
        qsort(vf, nv, sizeof *vf, cmp_vfile);
        for (size_t i = 1; i < nv && !rc; i++)
            if (vf[i].batch == vf[i - 1].batch) {
                if (d) d->file = NULL;
                rc = gs_diag_set(d, GS_EEXIST, 0, 0, "%s: %s and %s have the same batch size", dir,
                                 vf[i - 1].name, vf[i].name);
            }
        for (size_t i = 0; i < nv && !rc; i++) {
            char *p2 = malloc(dl + strlen(vf[i].name) + 2);
            if (!p2) {
                rc = GS_ENOMEM;
                break;
            }
            sprintf(p2, "%s/%s", dir, vf[i].name);
            rc = read_csv(g, app, p2, vcols, 5, val_row, &vf[i].batch, d);
            free(p2);
        }
    }
    for (size_t i = 0; i < nv; i++) free(vf[i].name);
    free(vf);
    free(path);
    return rc ? rc : app;
}

int gs_trace_attach_apps(gs_trace *t, const char *traces_dir, gs_diag *d)
{
    if (t->format != GS_TRACE_POLLUX) return 0;
    char *dir = NULL;
    if (traces_dir && *traces_dir) {
        dir = strdup(traces_dir);
    } else {
        /* <workload dir>/../traces */
        const char *p = t->path ? t->path : "";
        const char *slash = strrchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : 0;
        dir = malloc(n + 16);
        if (dir) {
            if (slash)
                snprintf(dir, n + 16, "%.*s/../traces", (int)n, p);
            else
                snprintf(dir, n + 16, "../traces");
        }
    }
    if (!dir) return GS_ENOMEM;
    gs_goodput *g = NULL;
    int rc = gs_goodput_create(&g);
    for (size_t i = 0; i < t->n && !rc; i++) {
        const char *app = t->jobs[i].app;
        if (!app || gs_goodput_find_app(g, app) >= 0) continue;
        size_t n = strlen(dir) + strlen(app) + 2;
        char *ad = malloc(n);
        if (!ad) {
            rc = GS_ENOMEM;
            break;
        }
        snprintf(ad, n, "%s/%s", dir, app);
        struct stat st;
        if (stat(ad, &st) || !S_ISDIR(st.st_mode)) {
            /* say where the traces are looked for and how to point elsewhere */
            if (d) d->file = NULL;
            rc = gs_diag_set(d, GS_ENOENT, 0, 0,
                             "%s: job %s needs application '%s': no directory %s (the Pollux "
                             "application traces are looked for in <workload dir>/../traces/; "
                             "give them with --set pollux_traces=DIR, e.g. data/pollux/traces)",
                             t->path ? t->path : "trace", t->jobs[i].name ? t->jobs[i].name : "?",
                             app, ad);
            free(ad);
            break;
        }
        int r = gs_pollux_load_app(g, ad, app, d);
        free(ad);
        if (r < 0) rc = r;
    }
    if (!rc) {
        if (d) d->file = NULL;
        rc = gs_goodput_finish(g, d);
    }
    for (size_t i = 0; i < t->n && !rc; i++) {
        gs_job_spec *s = &t->jobs[i];
        int id = gs_goodput_find_app(g, s->app);
        s->duration = gs_goodput_work(g, id);
        const gs_app_spec *as = gs_goodput_app(g, id);
        if (as && (s->batch_size > as->max_batch || s->batch_size < as->init_batch)) {
            /* the path goes into the message: t (and t->path) is released on error */
            if (d) d->file = NULL;
            rc = gs_diag_set(
                d, GS_ERANGE, 0, 0, "%s: job %s: batch_size %lld outside %s's validated %lld..%lld",
                t->path ? t->path : "trace", s->name ? s->name : "?", (long long)s->batch_size,
                s->app, (long long)as->init_batch, (long long)as->max_batch);
        }
    }
    if (rc) {
        gs_goodput_destroy(g);
        free(dir);
        return rc;
    }
    gs_goodput_destroy(t->goodput);
    free(t->goodput_dir);
    t->goodput = g;
    t->goodput_dir = dir;
    return 0;
}
