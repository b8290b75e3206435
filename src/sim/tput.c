/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tput.c - ElasticFlow's throughput tables (one CSV per model, header
 * global_batch_size,1,2,4,...; a row per global batch with iterations/s per
 * GPU count) into the core's gs_tput, and their application to an
 * ElasticFlow trace (each job's work in the table model's units).
 *
 * Invariants: a model's file is DIR/<model>.csv, read once, models in order
 * of first appearance in the trace; every value taken is a positive finite
 * number, an empty cell or "nan" is "not measured"; every rejection of the
 * input names file:line:col; after gs_trace_apply_tput every job of the trace
 * has a table row, a work > 0 and 1 <= max_gpus <= the row's largest count.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "sim.h"

static int num_cell(const gs_csv *r, size_t i, double *out, gs_diag *d)
{
    const char *s = r->f[i];
    while (*s == ' ') s++;
    if (!*s || !strcasecmp(s, "nan")) return 1; /* not measured */
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ') end++;
    if (errno || end == s || *end || !isfinite(v))
        return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i],
                           "'%s' is not a throughput (iterations/s)", r->f[i]);
    if (!(v > 0))
        return gs_diag_set(d, GS_ERANGE, r->rec_line, r->col[i],
                           "throughput must be > 0 iterations/s, got '%s'", r->f[i]);
    *out = v;
    return 0;
}

static int int_cell(const gs_csv *r, size_t i, const char *what, long long lo, long long hi,
                    long long *out, gs_diag *d)
{
    const char *s = r->f[i];
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return gs_diag_set(d, GS_EPARSE, r->rec_line, r->col[i], "%s: '%s' is not an integer", what,
                           s);
    if (v < lo || v > hi)
        return gs_diag_set(d, GS_ERANGE, r->rec_line, r->col[i],
                           "%s must be between %lld and %lld, got '%s'", what, lo, hi, s);
    *out = v;
    return 0;
}

int gs_tput_parse(const char *file, const char *model, const char *buf, size_t len, gs_tput *tp,
                  gs_diag *d)
{
    (void)file;
    gs_csv r;
    gs_csv_init(&r, buf, len, 1);
    int rc = gs_csv_next(&r, d);
    int *gpus = NULL;
    size_t ncol = 0, rows = 0;
    if (rc <= 0) {
        if (rc == 0) rc = gs_diag_set(d, GS_EPARSE, 1, 1, "empty throughput table (no header)");
        goto out;
    }
    if (strcmp(r.f[0], "global_batch_size") || r.nf < 2) {
        rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1,
                         "expected the header 'global_batch_size,1,2,4,...' (GPU counts)");
        goto out;
    }
    ncol = r.nf;
    gpus = calloc(ncol, sizeof *gpus);
    if (!gpus) {
        rc = GS_ENOMEM;
        goto out;
    }
    for (size_t i = 1; i < ncol; i++) {
        long long g;
        if ((rc = int_cell(&r, i, "GPU count", 1, 1 << 20, &g, d))) goto out;
        for (size_t k = 1; k < i; k++)
            if (gpus[k] == (int)g) {
                rc = gs_diag_set(d, GS_EEXIST, r.rec_line, r.col[i], "GPU count %lld appears twice",
                                 g);
                goto out;
            }
        gpus[i] = (int)g;
    }
    while ((rc = gs_csv_next(&r, d)) > 0) {
        if (r.nf != ncol) {
            rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1, "expected %zu fields, found %zu", ncol,
                             r.nf);
            goto out;
        }
        long long batch;
        if ((rc = int_cell(&r, 0, "global_batch_size", 1, INT64_MAX / 2, &batch, d))) goto out;
        if (gs_tput_find(tp, model, batch) >= 0) {
            rc = gs_diag_set(d, GS_EEXIST, r.rec_line, r.col[0],
                             "global batch size %lld appears twice", batch);
            goto out;
        }
        int got = 0;
        for (size_t i = 1; i < ncol; i++) {
            double v = 0;
            int m = num_cell(&r, i, &v, d);
            if (m < 0) {
                rc = m;
                goto out;
            }
            if (m > 0) continue;
            if ((rc = gs_tput_add(tp, model, batch, gpus[i], v))) goto out;
            got++;
        }
        if (!got) {
            rc = gs_diag_set(d, GS_EPARSE, r.rec_line, 1,
                             "global batch size %lld has no measured throughput", batch);
            goto out;
        }
        rows++;
    }
    if (rc < 0) goto out;
    rc = rows ? 0 : gs_diag_set(d, GS_EPARSE, r.line, 1, "throughput table has no rows");
out:
    free(gpus);
    gs_csv_release(&r);
    return rc;
}

int gs_tput_load_dir(const char *dir, const gs_trace *t, gs_tput **out, gs_diag *d)
{
    gs_tput *tp;
    int rc = gs_tput_create(&tp);
    if (rc) return rc;
    const char **seen = NULL; /* models read so far */
    size_t nseen = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        const char *m = t->jobs[i].app;
        if (!m) continue;
        size_t k = 0;
        while (k < nseen && strcmp(seen[k], m)) k++;
        if (k < nseen) continue; /* read already */
        const char **ns = realloc(seen, (nseen + 1) * sizeof *ns);
        if (!ns) {
            rc = GS_ENOMEM;
            break;
        }
        seen = ns;
        seen[nseen++] = m;
        if (strchr(m, '/') || !strcmp(m, "..") || !strcmp(m, ".")) {
            rc = gs_diag_set(d, GS_EINVAL, 0, 0, "model name '%s' cannot name a table file", m);
            break;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.csv", dir, m);
        char *buf = NULL;
        size_t len;
        gs_diag_init(d, path);
        rc = gs_read_file(path, &buf, &len, d);
        if (!rc) rc = gs_tput_parse(path, m, buf, len, tp, d);
        free(buf);
        if (rc) {
            /* 'path' dies here: the message takes the file:line:col */
            char msg[sizeof d->msg + 64];
            gs_diag_format(d, msg, sizeof msg);
            gs_diag_init(d, NULL);
            gs_diag_set(d, rc, 0, 0, "%s", msg);
        } else {
            gs_diag_init(d, NULL);
        }
    }
    free(seen);
    if (rc) {
        gs_tput_destroy(tp);
        return rc;
    }
    *out = tp;
    return 0;
}

int gs_trace_apply_tput(gs_trace *t, const gs_tput *tp, const char *dir, gs_diag *d)
{
    for (size_t i = 0; i < t->n; i++) {
        gs_job_spec *s = &t->jobs[i];
        if (!s->app) continue;
        int row = gs_tput_find(tp, s->app, s->batch_size);
        if (row < 0)
            return gs_diag_set(d, GS_EUNKNOWN, 0, 0,
                               "job %lld: %s/%s.csv has no row for global batch size %lld",
                               (long long)s->id, dir, s->app, (long long)s->batch_size);
        int req = s->ntasks * s->gpus_per_task;
        int rc = gs_tput_work(tp, row, req, s->iterations, &s->duration);
        if (rc)
            return gs_diag_set(d, rc, 0, 0, "job %lld: %lld iterations of %s at %d GPUs: %s",
                               (long long)s->id, (long long)s->iterations, s->app, req,
                               rc == GS_ERANGE ? "longer than 1e11 s" : "no throughput");
        int maxg = gs_tput_max_gpus(tp, row);
        if (s->max_gpus > maxg) s->max_gpus = maxg;
        if (s->max_gpus < req) s->max_gpus = req;
    }
    return 0;
}
