/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * goodput_table.c - the throughput-table progress model (gs_tput, goodput.h):
 * ElasticFlow's measured iterations/s per (model, global batch, GPUs), used as
 * the engine's progress model and as the policies' what-if speed.
 *
 * Invariants: rows are kept in order of first appearance (lookups by name and
 * batch scan them: a handful of rows, no hash order); the points of a row are
 * sorted by GPU count, counts unique, values > 0 and finite; every rate the
 * model reports is > 0 for a job with a row; it keeps no per-job state, so the
 * table is read-only once built and may serve several engines.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/goodput.h"

typedef struct tput_pt {
    int gpus;
    double its;
} tput_pt;

typedef struct tput_row {
    char *model;
    int64_t batch;
    tput_pt *pt; /* sorted by gpus */
    int npt, cappt;
} tput_row;

struct gs_tput {
    tput_row *rows;
    size_t n, cap;
};

int gs_tput_create(gs_tput **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : GS_ENOMEM;
}

void gs_tput_destroy(gs_tput *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->rows[i].model);
        free(t->rows[i].pt);
    }
    free(t->rows);
    free(t);
}

int gs_tput_find(const gs_tput *t, const char *model, int64_t batch)
{
    if (!t || !model) return -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].batch == batch && !strcmp(t->rows[i].model, model)) return (int)i;
    return -1;
}

size_t gs_tput_nrows(const gs_tput *t)
{
    return t ? t->n : 0;
}

int gs_tput_add(gs_tput *t, const char *model, int64_t batch, int gpus, double its)
{
    if (!t || !model || !*model || batch < 1 || gpus < 1 || !(its > 0) || !isfinite(its))
        return GS_EINVAL;
    int ri = gs_tput_find(t, model, batch);
    if (ri < 0) {
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 8;
            tput_row *nr = realloc(t->rows, nc * sizeof *nr);
            if (!nr) return GS_ENOMEM;
            t->rows = nr;
            t->cap = nc;
        }
        char *m = strdup(model);
        if (!m) return GS_ENOMEM;
        t->rows[t->n] = (tput_row){m, batch, NULL, 0, 0};
        ri = (int)t->n++;
    }
    tput_row *r = &t->rows[ri];
    int at = 0;
    while (at < r->npt && r->pt[at].gpus < gpus) at++;
    if (at < r->npt && r->pt[at].gpus == gpus) return GS_EEXIST;
    if (r->npt == r->cappt) {
        int nc = r->cappt ? r->cappt * 2 : 8;
        tput_pt *np = realloc(r->pt, (size_t)nc * sizeof *np);
        if (!np) return GS_ENOMEM;
        r->pt = np;
        r->cappt = nc;
    }
    memmove(&r->pt[at + 1], &r->pt[at], (size_t)(r->npt - at) * sizeof *r->pt);
    r->pt[at] = (tput_pt){gpus, its};
    r->npt++;
    return 0;
}

double gs_tput_its(const gs_tput *t, int row, int gpus)
{
    if (!t || row < 0 || (size_t)row >= t->n || gpus <= 0) return 0;
    const tput_row *r = &t->rows[row];
    if (!r->npt) return 0;
    if (gpus <= r->pt[0].gpus) return r->pt[0].its * (double)gpus / (double)r->pt[0].gpus;
    for (int i = 1; i < r->npt; i++) {
        if (gpus > r->pt[i].gpus) continue;
        const tput_pt *a = &r->pt[i - 1], *b = &r->pt[i];
        if (gpus == b->gpus) return b->its;
        double f = (double)(gpus - a->gpus) / (double)(b->gpus - a->gpus);
        return a->its + f * (b->its - a->its);
    }
    return r->pt[r->npt - 1].its;
}

int gs_tput_max_gpus(const gs_tput *t, int row)
{
    if (!t || row < 0 || (size_t)row >= t->n || !t->rows[row].npt) return 0;
    return t->rows[row].pt[t->rows[row].npt - 1].gpus;
}

int gs_tput_best_gpus(const gs_tput *t, int row)
{
    if (!t || row < 0 || (size_t)row >= t->n || !t->rows[row].npt) return 0;
    const tput_row *r = &t->rows[row];
    int best = 0;
    for (int i = 1; i < r->npt; i++)
        if (r->pt[i].its > r->pt[best].its) best = i;
    return r->pt[best].gpus;
}

/* 1e11 s, the traces' largest time (src/sim/trace.c) */
#define MAX_WORK_US (100000000000.0 * 1e6)

int gs_tput_work(const gs_tput *t, int row, int ref_gpus, int64_t iterations, gs_time *out)
{
    double its = gs_tput_its(t, row, ref_gpus);
    if (!(its > 0) || iterations < 1) return GS_EINVAL;
    double us = round((double)iterations / its * 1e6);
    if (!(us <= MAX_WORK_US)) return GS_ERANGE;
    *out = us < 1 ? 1 : (gs_time)us;
    return 0;
}

/* ---- as a progress model ---------------------------------------------------------------- */

static int job_row(const gs_tput *t, const gs_job *j)
{
    return gs_tput_find(t, j->app, j->batch_size);
}

/* Rate of j at n GPUs relative to its requested size; 0 without a row. */
static double rel_speed(const gs_tput *t, const gs_job *j, int n)
{
    int row = job_row(t, j);
    if (row < 0 || n <= 0) return 0;
    double ref = gs_tput_its(t, row, j->req_gpus > 0 ? j->req_gpus : 1);
    return ref > 0 ? gs_tput_its(t, row, n) / ref : 0;
}

static int tp_rate(void *st, const gs_engine *e, const gs_job *j, double *rate, gs_time *next)
{
    (void)e;
    double r = rel_speed(st, j, j->nalloc > 0 ? j->nalloc : j->gpus);
    if (!(r > 0)) return GS_EINVAL;
    *rate = r;
    *next = GS_TIME_NONE;
    return 0;
}

static int tp_advance(void *st, const gs_engine *e, const gs_job *j, int placed)
{
    (void)st, (void)e, (void)j, (void)placed;
    return 0;
}

static double tp_speed(void *st, const gs_engine *e, const gs_job *j, int gpus)
{
    (void)e;
    return rel_speed(st, j, gpus);
}

static const gs_progress_ops tput_ops = {
    .rate = tp_rate,
    .advance = tp_advance,
    .release = NULL,
    .speed = tp_speed,
};

const gs_progress_ops *gs_tput_progress_ops(void)
{
    return &tput_ops;
}

const gs_tput *gs_tput_of(const gs_engine *e)
{
    return gs_engine_progress_ops(e) == &tput_ops ? gs_engine_progress_state(e) : NULL;
}
