/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aggregate.c - the comparison metrics as one table, and their aggregation over seeds.
 *
 * METRICS lists, in compare.csv's column order, every scalar metric of gs_sim_result a
 * comparison reports: its column name, where it lives in the result (a field, the listed
 * mechanisms of GS_MECH_MAP, or a function), how many decimals it is written with and
 * when it is listed.  compare.csv (one row per run), runs.csv, the aggregated compare.csv
 * and sweep.csv (mean and 95 % confidence half-width per metric over the seeds of a
 * policy) all walk it: a new metric is a new row here and nothing else.
 *
 * Invariants: values are read from the results only (never wall_s); columns are the same
 * for every row of a file (a flagged column is present when any run needs it); the
 * confidence interval is Student's t with n - 1 degrees of freedom over the per-seed
 * values, 0 for one seed; output is formatted with fixed printf rules.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* GPU-seconds all mechanisms cost (GS_MECH_MAP order). */
static double f_cost(const gs_sim_result *r)
{
    double c = 0;
    for (int m = 0; m < GS_MECH_N; m++) c += r->mech_gpu_s[m];
    return c;
}

#define MD(key, field, dec, fl)                                          \
    {                                                                    \
        key, GS_MK_DOUBLE, offsetof(gs_sim_result, field), dec, fl, NULL \
    }
#define MZ(key, field, fl)                                            \
    {                                                                 \
        key, GS_MK_SIZE, offsetof(gs_sim_result, field), -1, fl, NULL \
    }
#define MU(key, field, fl)                                           \
    {                                                                \
        key, GS_MK_U64, offsetof(gs_sim_result, field), -1, fl, NULL \
    }

/* compare.csv's columns after policy,placement (GS_MF_TABLE: also in the stdout table of an
 * aggregated comparison) */
static const gs_metric_def METRICS[] = {
    MZ("jobs", jobs, 0),
    MZ("jobs_done", jobs_done, GS_MF_TABLE),
    MZ("jobs_rejected", jobs_rejected, 0),
    MD("avg_jct_s", avg_jct_s, 3, GS_MF_TABLE),
    MD("median_jct_s", median_jct_s, 3, 0),
    MD("p95_jct_s", p95_jct_s, 3, GS_MF_TABLE),
    MD("p99_jct_s", p99_jct_s, 3, 0),
    MD("avg_queue_s", avg_queue_s, 3, GS_MF_TABLE),
    MD("makespan_s", makespan_s, 3, 0),
    MD("gpu_util", gpu_util, 6, GS_MF_TABLE | GS_MF_PERCENT),
    MU("preemptions", preemptions, 0),
    MU("events", events, 0),
    MD("avg_first_start_s", avg_first_s, 3, 0),
    MD("gpu_job_util", gpu_job_util, 6, 0),
    {"", GS_MK_MECH, 0, -1, 0, NULL}, /* the listed mechanisms' counts */
    {"cost_gpu_s", GS_MK_FN, 0, 3, 0, f_cost},
    MD("avg_pending_s", avg_pending_s, 3, 0),
    MD("avg_slowdown", avg_slowdown, 6, GS_MF_TABLE),
    MD("p95_slowdown", p95_slowdown, 6, 0),
    MD("avg_rho", avg_rho, 6, 0),
    MD("p95_rho", p95_rho, 6, 0),
    MD("max_rho", max_rho, 6, GS_MF_TABLE),
    MD("jain_rho", jain_rho, 6, GS_MF_TABLE),
    MD("jain_user_slowdown", jain_user_slowdown, 6, 0),
    MD("gpu_util_busy", gpu_util_busy, 6, 0),
    MD("deadline_met_ratio", deadline_met_ratio, 6, GS_MF_ELASTIC),
    MD("rescales_per_job", rescales_per_job, 6, GS_MF_ELASTIC),
    MD("rescale_gpu_s", rescale_gpu_s, 3, GS_MF_ELASTIC),
    MD("avg_goodput", avg_goodput, 6, GS_MF_ELASTIC),
};
#define NMETRICS (sizeof METRICS / sizeof *METRICS)

size_t gs_metric_cols(gs_sim_result *const *rs, size_t n, gs_metric_col *out, size_t cap)
{
    int el = 0;
    for (size_t i = 0; i < n; i++) el |= rs[i]->elastic;
    size_t k = 0;
    for (size_t i = 0; i < NMETRICS; i++) {
        const gs_metric_def *d = &METRICS[i];
        if ((d->flags & GS_MF_ELASTIC) && !el) continue;
        if (d->kind == GS_MK_MECH) {
            for (int m = 0; m < GS_MECH_N; m++) {
                const gs_mech_info *mi = gs_mech_get((gs_mech)m);
                if (!mi->listed) continue;
                if (k < cap) out[k] = (gs_metric_col){mi->key, d, m};
                k++;
            }
            continue;
        }
        if (k < cap) out[k] = (gs_metric_col){d->key, d, -1};
        k++;
    }
    return k;
}

double gs_metric_value(const gs_metric_col *c, const gs_sim_result *r)
{
    const char *base = (const char *)r + c->def->off;
    switch (c->def->kind) {
    case GS_MK_DOUBLE: return *(const double *)(const void *)base;
    case GS_MK_SIZE: return (double)*(const size_t *)(const void *)base;
    case GS_MK_U64: return (double)*(const uint64_t *)(const void *)base;
    case GS_MK_MECH: return (double)r->mech[c->mech];
    case GS_MK_FN: return c->def->fn(r);
    }
    return 0;
}

void gs_metric_print(FILE *f, const gs_metric_col *c, double v)
{
    if (c->def->dec < 0)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.*f", c->def->dec, v);
}

/* t_{0.975, dof} for dof 1..30 (the usual table, 6 decimals) */
static const double T975[30] = {12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912,
                                2.364624,  2.306004, 2.262157, 2.228139, 2.200985, 2.178813,
                                2.160369,  2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
                                2.093024,  2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
                                2.059539,  2.055529, 2.051831, 2.048407, 2.045230, 2.042272};

double gs_t975(size_t dof)
{
    if (dof == 0) return NAN;
    if (dof <= 30) return T975[dof - 1];
    /* Cornish-Fisher expansion of the t quantile around the normal one: within 1e-6 of
     * the exact value from 31 degrees of freedom on */
    double z = 1.959963984540054, v = (double)dof, z2 = z * z;
    double g1 = (z2 * z + z) / 4;
    double g2 = (5 * pow(z, 5) + 16 * z2 * z + 3 * z) / 96;
    double g3 = (3 * pow(z, 7) + 19 * pow(z, 5) + 17 * z2 * z - 15 * z) / 384;
    double g4 =
        (79 * pow(z, 9) + 776 * pow(z, 7) + 1482 * pow(z, 5) - 1920 * z2 * z - 945 * z) / 92160;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

void gs_mean_ci95(const double *x, size_t n, double *mean, double *ci)
{
    *mean = 0;
    *ci = 0;
    if (!n) return;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    double m = s / (double)n;
    *mean = m;
    if (n < 2) return;
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    double sd = sqrt(ss / (double)(n - 1));
    *ci = gs_t975(n - 1) * sd / sqrt((double)n);
}

/* ---- aggregation ------------------------------------------------------------------------ */

void gs_agg_release(gs_agg *a)
{
    if (!a) return;
    free(a->cols);
    free(a->mean);
    free(a->ci);
    memset(a, 0, sizeof *a);
}

int gs_agg_build(gs_sim_result *const *runs, size_t nv, size_t np, size_t ns, gs_agg *a)
{
    memset(a, 0, sizeof *a);
    size_t nr = nv * np * ns;
    size_t nc = gs_metric_cols(runs, nr, NULL, 0);
    a->cols = calloc(nc ? nc : 1, sizeof *a->cols);
    a->mean = calloc(nv * np * nc + 1, sizeof *a->mean);
    a->ci = calloc(nv * np * nc + 1, sizeof *a->ci);
    double *x = calloc(ns ? ns : 1, sizeof *x);
    if (!a->cols || !a->mean || !a->ci || !x) {
        free(x);
        gs_agg_release(a);
        return GS_ENOMEM;
    }
    gs_metric_cols(runs, nr, a->cols, nc);
    a->ncols = nc;
    a->nv = nv;
    a->np = np;
    a->ns = ns;
    a->runs = runs;
    for (size_t v = 0; v < nv; v++)
        for (size_t p = 0; p < np; p++)
            for (size_t c = 0; c < nc; c++) {
                for (size_t s = 0; s < ns; s++)
                    x[s] = gs_metric_value(&a->cols[c], runs[(v * np + p) * ns + s]);
                size_t k = (v * np + p) * nc + c;
                gs_mean_ci95(x, ns, &a->mean[k], &a->ci[k]);
            }
    free(x);
    return 0;
}

long gs_agg_col(const gs_agg *a, const char *key)
{
    for (size_t c = 0; c < a->ncols; c++)
        if (!strcmp(a->cols[c].key, key)) return (long)c;
    return -1;
}

/* Means of integer metrics are written with 3 decimals. */
static int agg_dec(const gs_metric_col *c)
{
    return c->def->dec < 0 ? 3 : c->def->dec;
}

static int close_file(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return GS_EIO;
    }
    return 0;
}

int gs_write_agg(const char *path, const gs_agg *a, const char *sweep_key,
                 const char *const *values)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return GS_EIO;
    if (sweep_key) fputs("key,value,", f);
    fputs("policy,placement,seeds", f);
    for (size_t c = 0; c < a->ncols; c++) fprintf(f, ",%s,%s_ci95", a->cols[c].key, a->cols[c].key);
    fputc('\n', f);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t p = 0; p < a->np; p++) {
            const gs_sim_result *r0 = a->runs[(v * a->np + p) * a->ns];
            if (sweep_key) {
                gs_csv_field(f, sweep_key);
                fputc(',', f);
                gs_csv_field(f, values[v]);
                fputc(',', f);
            }
            gs_csv_field(f, r0->policy);
            fprintf(f, ",%s,%zu", r0->placement, a->ns);
            for (size_t c = 0; c < a->ncols; c++) {
                size_t k = (v * a->np + p) * a->ncols + c;
                int dec = agg_dec(&a->cols[c]);
                fprintf(f, ",%.*f,%.*f", dec, a->mean[k], dec, a->ci[k]);
            }
            fputc('\n', f);
        }
    return close_file(f, tmp, path);
}

int gs_write_runs(const char *path, gs_sim_result *const *runs, size_t n, const uint64_t *seeds,
                  const char *sweep_key, const char *const *values, size_t per_value)
{
    size_t nc = gs_metric_cols(runs, n, NULL, 0);
    gs_metric_col *cols = calloc(nc ? nc : 1, sizeof *cols);
    if (!cols) return GS_ENOMEM;
    gs_metric_cols(runs, n, cols, nc);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(cols);
        return GS_EIO;
    }
    if (sweep_key) fputs("key,value,", f);
    fputs("policy,placement,seed", f);
    for (size_t c = 0; c < nc; c++) fprintf(f, ",%s", cols[c].key);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        if (sweep_key) {
            gs_csv_field(f, sweep_key);
            fputc(',', f);
            gs_csv_field(f, values[i / per_value]);
            fputc(',', f);
        }
        gs_csv_field(f, runs[i]->policy);
        fprintf(f, ",%s,%llu", runs[i]->placement, (unsigned long long)seeds[i]);
        for (size_t c = 0; c < nc; c++) {
            fputc(',', f);
            gs_metric_print(f, &cols[c], gs_metric_value(&cols[c], runs[i]));
        }
        fputc('\n', f);
    }
    free(cols);
    return close_file(f, tmp, path);
}

/* One cell of the aggregated table: "12345.6 ± 78.9", the value alone for one seed; seconds
 * and percentages with 1 decimal, other ratios with 3. */
static void agg_cell(char *b, size_t cap, const gs_agg *a, size_t k, const gs_metric_col *c)
{
    int pc = (c->def->flags & GS_MF_PERCENT) != 0;
    int dec = pc || c->def->dec < 6 ? 1 : 3;
    double sc = pc ? 100 : 1;
    if (a->ns < 2)
        snprintf(b, cap, "%.*f", dec, a->mean[k] * sc);
    else
        snprintf(b, cap, "%.*f \xc2\xb1 %.*f", dec, a->mean[k] * sc, dec, a->ci[k] * sc);
}

/* Display width of a UTF-8 string (the '±' is two bytes, one column). */
static size_t cols_of(const char *s)
{
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

void gs_print_agg(FILE *f, const gs_agg *a, const char *sweep_key, const char *const *values)
{
    /* the metrics marked for the table, each as MEAN ± CI95, columns as wide as needed */
    size_t show[32], ns = 0;
    for (size_t c = 0; c < a->ncols && ns < 32; c++)
        if (a->cols[c].def->flags & GS_MF_TABLE) show[ns++] = c;
    char head[32][48];
    size_t w[32];
    for (size_t i = 0; i < ns; i++) {
        size_t k = 0;
        const char *key = a->cols[show[i]].key;
        for (; key[k] && k + 2 < sizeof head[i]; k++)
            head[i][k] = (char)(key[k] >= 'a' && key[k] <= 'z' ? key[k] - 32 : key[k]);
        if (a->cols[show[i]].def->flags & GS_MF_PERCENT) head[i][k++] = '%';
        head[i][k] = '\0';
        w[i] = k;
    }
    char cell[96];
    size_t nrow = a->nv * a->np;
    for (size_t r = 0; r < nrow; r++)
        for (size_t i = 0; i < ns; i++) {
            agg_cell(cell, sizeof cell, a, r * a->ncols + show[i], &a->cols[show[i]]);
            if (cols_of(cell) > w[i]) w[i] = cols_of(cell);
        }
    size_t wv = sweep_key ? strlen(sweep_key) : 0;
    for (size_t v = 0; sweep_key && v < a->nv; v++)
        if (strlen(values[v]) > wv) wv = strlen(values[v]);
    size_t wp = 18;
    for (size_t r = 0; r < nrow; r++)
        if (strlen(a->runs[r * a->ns]->policy) > wp) wp = strlen(a->runs[r * a->ns]->policy);
    if (sweep_key) fprintf(f, "%-*s ", (int)wv, sweep_key);
    fprintf(f, "%-*s %5s", (int)wp, "POLICY", "SEEDS");
    for (size_t i = 0; i < ns; i++) fprintf(f, "  %*s", (int)w[i], head[i]);
    fputc('\n', f);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t p = 0; p < a->np; p++) {
            size_t r = v * a->np + p;
            if (sweep_key) fprintf(f, "%-*s ", (int)wv, values[v]);
            fprintf(f, "%-*s %5zu", (int)wp, a->runs[r * a->ns]->policy, a->ns);
            for (size_t i = 0; i < ns; i++) {
                agg_cell(cell, sizeof cell, a, r * a->ncols + show[i], &a->cols[show[i]]);
                fprintf(f, "  %*s%s", (int)(w[i] - cols_of(cell)), "", cell);
            }
            fputc('\n', f);
        }
    if (a->ns > 1)
        fprintf(f, "(mean \xc2\xb1 95%% confidence half-width over %zu seeds, Student t)\n", a->ns);
}
