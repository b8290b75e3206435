/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gavel_lp.c - Gavel's allocation LPs (algorithms.md §5.6): max-min fairness,
 * makespan, total throughput and finish-time fairness, with optional pair columns
 * for space sharing, solved through the program's gs_lp_solver.
 *
 * Invariants:
 *  - One problem layout for all objectives: columns (j,k) at j*K+k, pair columns
 *    (p,k) at (J+p)*K+k, then one extra column (the objective's z or u); rows: a
 *    "performance" row per job (j), the job's time row (J+j: its entries sum to at
 *    most 1), a capacity row per type (2J+k).  Entries whose throughput is 0 are
 *    fixed to 0, so a job never gets time where it cannot run.
 *  - The solution handed back is clipped to [0, 1] (solver round-off), so callers
 *    can use it as shares directly.
 *  - Max-min fairness and total throughput without pairs solve over classes of equal
 *    jobs (size, weight, throughputs bit for bit; classes in order of their first job)
 *    and give every job its class's row: equal jobs get equal allocations.
 *  - No state between calls; deterministic (the solver is); memory freed on every
 *    path (GS_ENOMEM when an allocation fails).
 */
#include "gavel_lp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int gs_gavel_no_solver(const char *policy, gs_diag *d)
{
    return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                       "policy %s solves linear programs, but no LP solver was given: gsched was "
                       "built without GLPK (install libglpk-dev and rebuild; docs/build.md)",
                       policy);
}

static double wgt(const gs_gavel_in *in, int j)
{
    return in->weight && in->weight[j] > 0 ? in->weight[j] : 1.0;
}

/* The number of jobs the rows stand for. */
static double njobs(const gs_gavel_in *in)
{
    if (!in->count) return in->J;
    double n = 0;
    for (int j = 0; j < in->J; j++) n += in->count[j];
    return n;
}

void gs_gavel_proportional(const gs_gavel_in *in, double *out)
{
    int J = in->J, K = in->K;
    if (J <= 0) return;
    double n = njobs(in), rowsum = 0; /* every row is the same: N_k / n */
    for (int k = 0; k < K; k++) rowsum += in->ngpus[k] / n;
    double scale = rowsum > 0 ? 1.0 / rowsum : 0;
    for (int j = 0; j < J; j++) {
        double t = 0;
        for (int k = 0; k < K; k++) t += in->tput[j * K + k] * in->ngpus[k] / n * scale;
        out[j] = t;
    }
}

void gs_gavel_isolated(const gs_gavel_in *in, double *out)
{
    int J = in->J, K = in->K;
    double n = njobs(in);
    for (int j = 0; j < J; j++) {
        double s = in->scale[j] > 0 ? in->scale[j] : 1, sum = 0, t = 0;
        for (int k = 0; k < K; k++) sum += in->ngpus[k] / (n * s);
        double div = sum > 1 ? sum : 1;
        for (int k = 0; k < K; k++) t += in->tput[j * K + k] * in->ngpus[k] / (n * s) / div;
        out[j] = t;
    }
}

double gs_gavel_thr(const gs_gavel_in *in, const double *x, int j)
{
    int K = in->K;
    double t = 0;
    for (int k = 0; k < K; k++) t += in->tput[j * K + k] * x[j * K + k];
    for (int p = 0; p < in->P; p++) {
        const double *pt = in->pa[p] == j ? in->ptput_a : in->pb[p] == j ? in->ptput_b : NULL;
        if (!pt) continue;
        for (int k = 0; k < K; k++) t += pt[p * K + k] * x[(in->J + p) * K + k];
    }
    return t;
}

/* ---- the problem ---------------------------------------------------------- */

typedef struct lpb {
    gs_lp_problem p;
    double *obj, *clo, *chi, *rlo, *rhi, *ar;
    int *ia, *ja;
    size_t nnz;
} lpb;

static void lpb_release(lpb *b)
{
    free(b->obj);
    free(b->clo);
    free(b->chi);
    free(b->rlo);
    free(b->rhi);
    free(b->ar);
    free(b->ia);
    free(b->ja);
    memset(b, 0, sizeof *b);
}

static void put(lpb *b, int r, int c, double v)
{
    if (v == 0) return;
    b->ia[b->nnz] = r;
    b->ja[b->nnz] = c;
    b->ar[b->nnz++] = v;
}

/*
 * Build the base problem.  mult[j] multiplies job j's throughputs in its performance
 * row (NULL = 1); extra[j] is the coefficient of the extra column there, negated (NULL =
 * the column is absent from the row).  Performance rows start free and the extra column
 * fixed at 0; callers set bounds and the objective.
 */
static int lpb_build(lpb *b, const gs_gavel_in *in, const double *mult, const double *extra)
{
    memset(b, 0, sizeof *b);
    int J = in->J, K = in->K, P = in->P, nx = gs_gavel_nx(in);
    int nc = nx + 1, nr = 2 * J + K;
    size_t cap = (size_t)J * K * 3 + (size_t)P * K * 5 + (size_t)J + 1;
    b->obj = calloc((size_t)nc, sizeof *b->obj);
    b->clo = calloc((size_t)nc, sizeof *b->clo);
    b->chi = calloc((size_t)nc, sizeof *b->chi);
    b->rlo = calloc((size_t)nr + 1, sizeof *b->rlo);
    b->rhi = calloc((size_t)nr + 1, sizeof *b->rhi);
    b->ar = malloc(cap * sizeof *b->ar);
    b->ia = malloc(cap * sizeof *b->ia);
    b->ja = malloc(cap * sizeof *b->ja);
    if (!b->obj || !b->clo || !b->chi || !b->rlo || !b->rhi || !b->ar || !b->ia || !b->ja) {
        lpb_release(b);
        return GS_ENOMEM;
    }
    for (int j = 0; j < J; j++) {
        double m = mult ? mult[j] : 1.0;
        for (int k = 0; k < K; k++) {
            int c = j * K + k;
            double t = in->tput[c];
            b->chi[c] = t > 0 ? 1.0 : 0.0;
            if (!(t > 0)) continue;
            put(b, j, c, m * t);
            put(b, J + j, c, 1.0);
            put(b, 2 * J + k, c, in->scale[j] * (in->count ? in->count[j] : 1));
        }
        if (extra) put(b, j, nx, -extra[j]);
        b->rlo[j] = -GS_LP_INF, b->rhi[j] = GS_LP_INF;
        b->rlo[J + j] = -GS_LP_INF, b->rhi[J + j] = 1.0;
    }
    for (int p = 0; p < P; p++) {
        int a = in->pa[p], bb = in->pb[p];
        double ma = mult ? mult[a] : 1.0, mb = mult ? mult[bb] : 1.0;
        for (int k = 0; k < K; k++) {
            int c = (J + p) * K + k;
            double ta = in->ptput_a[p * K + k], tb = in->ptput_b[p * K + k];
            b->chi[c] = ta > 0 && tb > 0 ? 1.0 : 0.0;
            if (!(ta > 0 && tb > 0)) continue;
            put(b, a, c, ma * ta);
            put(b, bb, c, mb * tb);
            put(b, J + a, c, 1.0);
            put(b, J + bb, c, 1.0);
            put(b, 2 * J + k, c, in->scale[a]);
        }
    }
    for (int k = 0; k < K; k++) b->rlo[2 * J + k] = -GS_LP_INF, b->rhi[2 * J + k] = in->ngpus[k];
    b->clo[nx] = 0, b->chi[nx] = 0; /* the extra column: fixed unless the caller frees it */
    b->p.maximize = 1;
    b->p.nrows = nr;
    b->p.ncols = nc;
    b->p.obj = b->obj;
    b->p.col_lo = b->clo;
    b->p.col_hi = b->chi;
    b->p.row_lo = b->rlo;
    b->p.row_hi = b->rhi;
    b->p.nnz = b->nnz;
    b->p.ia = b->ia;
    b->p.ja = b->ja;
    b->p.ar = b->ar;
    return 0;
}

/* Solve; GS_LP_OPTIMAL -> 0 with x clipped; other statuses -> *st (rc 0) for callers that
 * expect them (ftf's infeasible steps), or GS_EINTERNAL when want_opt. */
static int lpb_solve(const gs_lp_solver *s, lpb *b, double *xall, double *val, gs_lp_status *st,
                     int want_opt, const char *what, gs_diag *d)
{
    b->p.nnz = b->nnz;
    int rc = s->solve(s->ud, &b->p, xall, val, st, d);
    if (rc) return rc;
    if (*st != GS_LP_OPTIMAL) {
        if (!want_opt) return 0;
        static const char *const names[] = {"optimal", "infeasible", "unbounded", "failed"};
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "%s: the LP solver returned '%s'", what,
                           names[*st]);
    }
    for (int c = 0; c < b->p.ncols - 1; c++) {
        if (!(xall[c] > 0)) xall[c] = 0; /* also NaN */
        if (xall[c] > 1) xall[c] = 1;
    }
    return 0;
}

static int runnable(const gs_gavel_in *in, int j)
{
    for (int k = 0; k < in->K; k++)
        if (in->tput[j * in->K + k] > 0) return 1;
    return 0;
}

static int solve_into(const gs_lp_solver *s, lpb *b, const gs_gavel_in *in, double *x,
                      double *extra_val, double *objval, const char *what, gs_diag *d)
{
    int nx = gs_gavel_nx(in);
    double *xall = malloc((size_t)(nx + 1) * sizeof *xall);
    if (!xall) return GS_ENOMEM;
    gs_lp_status st;
    double v = 0;
    int rc = lpb_solve(s, b, xall, &v, &st, 1, what, d);
    if (!rc) {
        memcpy(x, xall, (size_t)nx * sizeof *x);
        if (extra_val) *extra_val = xall[nx];
        if (objval) *objval = v;
    }
    free(xall);
    return rc;
}

/* ---- merging equal jobs -------------------------------------------------------------------- */

typedef struct merged {
    gs_gavel_in in; /* the classes' problem */
    int *cls;       /* J: class of each job */
    double *tput, *weight;
    int *scale, *count;
    int n;
} merged;

static void merged_release(merged *m)
{
    free(m->cls), free(m->tput), free(m->weight), free(m->scale), free(m->count);
}

static int same_job(const gs_gavel_in *in, int a, int b)
{
    return in->scale[a] == in->scale[b] && wgt(in, a) == wgt(in, b) &&
           !memcmp(in->tput + (size_t)a * in->K, in->tput + (size_t)b * in->K,
                   (size_t)in->K * sizeof *in->tput);
}

/* FNV-1a over bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* A hash of what same_job compares (weights are positive, so equal ones have equal bytes). */
static uint64_t job_hash(const gs_gavel_in *in, int j)
{
    double w = wgt(in, j);
    uint64_t h = fnv(1469598103934665603ull, &in->scale[j], sizeof in->scale[j]);
    h = fnv(h, &w, sizeof w);
    return fnv(h, in->tput + (size_t)j * in->K, (size_t)in->K * sizeof *in->tput);
}

/* Classes of equal jobs of 'in' (no pairs), numbered in order of their first job: one pass
 * in job order over an open-addressing table of the classes' first jobs. */
static int merge(const gs_gavel_in *in, merged *m)
{
    int J = in->J, K = in->K;
    size_t n = (size_t)(J ? J : 1), cap = 16;
    while (cap < 2 * n) cap *= 2;
    memset(m, 0, sizeof *m);
    int *tab = malloc(cap * sizeof *tab); /* class id, -1 = empty */
    int *rep = malloc(n * sizeof *rep);   /* class -> its first job */
    m->cls = malloc(n * sizeof *m->cls);
    m->tput = malloc(n * (size_t)K * sizeof *m->tput);
    m->weight = malloc(n * sizeof *m->weight);
    m->scale = malloc(n * sizeof *m->scale);
    m->count = calloc(n, sizeof *m->count);
    if (!tab || !rep || !m->cls || !m->tput || !m->weight || !m->scale || !m->count) {
        free(tab), free(rep);
        merged_release(m);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++) tab[i] = -1;
    for (int j = 0; j < J; j++) {
        size_t i = (size_t)job_hash(in, j) & (cap - 1);
        while (tab[i] >= 0 && !same_job(in, rep[tab[i]], j)) i = (i + 1) & (cap - 1);
        if (tab[i] < 0) {
            int c = m->n++;
            tab[i] = c;
            rep[c] = j;
            memcpy(m->tput + (size_t)c * K, in->tput + (size_t)j * K, (size_t)K * sizeof *m->tput);
            m->weight[c] = wgt(in, j);
            m->scale[c] = in->scale[j];
        }
        m->cls[j] = tab[i];
        m->count[tab[i]]++;
    }
    free(tab), free(rep);
    m->in = *in;
    m->in.J = m->n;
    m->in.tput = m->tput;
    m->in.weight = m->weight;
    m->in.scale = m->scale;
    m->in.count = m->count;
    return 0;
}

/* Each job's row from its class's. */
static void unmerge(const gs_gavel_in *in, const merged *m, const double *xc, double *x)
{
    for (int j = 0; j < in->J; j++)
        memcpy(x + (size_t)j * in->K, xc + (size_t)m->cls[j] * in->K, (size_t)in->K * sizeof *x);
}

typedef int (*lp_fn)(const gs_lp_solver *, const gs_gavel_in *, double *, double *, gs_diag *);

/* Solve through the classes of equal jobs when there are no pairs (and not already merged). */
static int via_classes(lp_fn fn, const gs_lp_solver *s, const gs_gavel_in *in, double *x,
                       double *value, gs_diag *d, int *done)
{
    *done = 0;
    if (in->P > 0 || in->count || in->J < 2) return 0;
    merged m;
    int rc = merge(in, &m);
    if (rc) return rc;
    *done = 1;
    double *xc = malloc((size_t)(m.n ? m.n : 1) * (size_t)in->K * sizeof *xc);
    if (!xc) {
        merged_release(&m);
        return GS_ENOMEM;
    }
    rc = fn(s, &m.in, xc, value, d);
    if (!rc) unmerge(in, &m, xc, x);
    free(xc);
    merged_release(&m);
    return rc;
}

int gs_gavel_maxmin(const gs_lp_solver *s, const gs_gavel_in *in, double *x, double *value,
                    gs_diag *d)
{
    int done, rc0 = via_classes(gs_gavel_maxmin, s, in, x, value, d, &done);
    if (done || rc0) return rc0;
    int J = in->J;
    double *prop = malloc((size_t)(J ? J : 1) * sizeof *prop);
    double *mult = malloc((size_t)(J ? J : 1) * sizeof *mult);
    double *extra = malloc((size_t)(J ? J : 1) * sizeof *extra);
    if (!prop || !mult || !extra) {
        free(prop), free(mult), free(extra);
        return GS_ENOMEM;
    }
    gs_gavel_proportional(in, prop);
    for (int j = 0; j < J; j++) {
        int ok = prop[j] > 0 && runnable(in, j);
        mult[j] = ok ? in->scale[j] / (wgt(in, j) * prop[j]) : 0;
        extra[j] = ok ? 1.0 : 0.0;
    }
    lpb b;
    int rc = lpb_build(&b, in, mult, extra);
    if (!rc) {
        int nx = gs_gavel_nx(in);
        for (int j = 0; j < J; j++)
            if (extra[j] > 0) b.rlo[j] = 0; /* sum_k c_jk x_jk - z >= 0 */
        b.clo[nx] = 0, b.chi[nx] = GS_LP_INF, b.obj[nx] = 1;
        rc = solve_into(s, &b, in, x, value, NULL, "gavel max-min fairness", d);
    }
    lpb_release(&b);
    free(prop), free(mult), free(extra);
    return rc;
}

int gs_gavel_makespan(const gs_lp_solver *s, const gs_gavel_in *in, double *x, double *makespan,
                      gs_diag *d)
{
    int J = in->J;
    double *extra = malloc((size_t)(J ? J : 1) * sizeof *extra);
    if (!extra) return GS_ENOMEM;
    /* S_j normalised by the largest so that u is O(1) (u' = u * Smax) */
    double smax = 0;
    int stuck = 0;
    for (int j = 0; j < J; j++) {
        double sj = in->remaining[j] > 0 ? in->remaining[j] : 0;
        if (sj > 0 && !runnable(in, j)) stuck = 1, sj = 0;
        extra[j] = sj;
        if (sj > smax) smax = sj;
    }
    for (int j = 0; j < J; j++) extra[j] = smax > 0 ? extra[j] / smax : 0;
    lpb b;
    int rc = lpb_build(&b, in, NULL, extra);
    if (!rc) {
        int nx = gs_gavel_nx(in);
        for (int j = 0; j < J; j++)
            if (extra[j] > 0) b.rlo[j] = 0; /* thr_j - S_j u >= 0 */
        /* u is bounded by the jobs' best throughputs: bound it for the all-idle case */
        b.clo[nx] = 0, b.chi[nx] = smax > 0 ? GS_LP_INF : 0, b.obj[nx] = 1;
        double u = 0;
        rc = solve_into(s, &b, in, x, &u, NULL, "gavel makespan", d);
        if (!rc && makespan) *makespan = stuck || !(u > 0) ? (smax > 0 ? HUGE_VAL : 0) : smax / u;
    }
    lpb_release(&b);
    free(extra);
    return rc;
}

int gs_gavel_throughput(const gs_lp_solver *s, const gs_gavel_in *in, double *x, double *total,
                        gs_diag *d)
{
    int done, rc0 = via_classes(gs_gavel_throughput, s, in, x, total, d, &done);
    if (done || rc0) return rc0;
    lpb b;
    int rc = lpb_build(&b, in, NULL, NULL);
    if (!rc) {
        int J = in->J, K = in->K;
        for (int c = 0; c < J * K; c++) b.obj[c] = in->tput[c] * (in->count ? in->count[c / K] : 1);
        for (int p = 0; p < in->P; p++)
            for (int k = 0; k < K; k++)
                b.obj[(J + p) * K + k] = in->ptput_a[p * K + k] + in->ptput_b[p * K + k];
        rc = solve_into(s, &b, in, x, NULL, total, "gavel max throughput", d);
    }
    lpb_release(&b);
    return rc;
}

int gs_gavel_ftf(const gs_lp_solver *s, const gs_gavel_in *in, double tol, double *x, double *rho,
                 gs_diag *d)
{
    int J = in->J, K = in->K, nx = gs_gavel_nx(in);
    if (tol <= 0) tol = 1e-3;
    size_t n = (size_t)(J ? J : 1);
    double *iso = malloc(n * sizeof *iso), *D = malloc(n * sizeof *D);
    double *xall = malloc((size_t)(nx + 1) * sizeof *xall);
    if (!iso || !D || !xall) {
        free(iso), free(D), free(xall);
        return GS_ENOMEM;
    }
    gs_gavel_isolated(in, iso);
    /* the isolated allocation: feasible, rho_j(X_iso) = (t_j + S_j/iso_j) / D_j */
    memset(x, 0, (size_t)nx * sizeof *x);
    double lo = 0, hi = 0;
    for (int j = 0; j < J; j++) {
        double sj = in->remaining[j], tj = in->elapsed ? in->elapsed[j] : 0;
        double cum = in->iso_cum ? in->iso_cum[j] : 0;
        D[j] = 0;
        if (!(sj > 0) || !(iso[j] > 0)) continue; /* done, or runs nowhere */
        D[j] = cum + sj / iso[j];
        double sc = in->scale[j] > 0 ? in->scale[j] : 1, sum = 0;
        for (int k = 0; k < K; k++) sum += in->ngpus[k] / (J * sc);
        for (int k = 0; k < K; k++)
            x[j * K + k] =
                in->tput[j * K + k] > 0 ? in->ngpus[k] / (J * sc) / (sum > 1 ? sum : 1) : 0;
        double r_lo = tj / D[j], r_hi = (tj + sj / iso[j]) / D[j];
        if (r_lo > lo) lo = r_lo;
        if (r_hi > hi) hi = r_hi;
    }
    lpb b;
    int rc = lpb_build(&b, in, NULL, NULL);
    if (!rc) {
        /* objective: normalised throughput, so spare capacity is used */
        for (int j = 0; j < J; j++)
            if (iso[j] > 0)
                for (int k = 0; k < K; k++) b.obj[j * K + k] = in->tput[j * K + k] / iso[j];
        for (int p = 0; p < in->P; p++) {
            int a = in->pa[p], c = in->pb[p];
            for (int k = 0; k < K; k++)
                b.obj[(J + p) * K + k] = (iso[a] > 0 ? in->ptput_a[p * K + k] / iso[a] : 0) +
                                         (iso[c] > 0 ? in->ptput_b[p * K + k] / iso[c] : 0);
        }
        double best = hi;
        for (int it = 0; it < 200 && hi > 0 && hi - lo > tol * hi; it++) {
            double r = (lo + hi) / 2;
            int possible = 1;
            for (int j = 0; j < J; j++) {
                if (!(D[j] > 0)) continue;
                double tj = in->elapsed ? in->elapsed[j] : 0, slack = r * D[j] - tj;
                if (!(slack > 0)) {
                    possible = 0;
                    break;
                }
                b.rlo[j] = in->remaining[j] / slack; /* thr_j(X) >= S_j / (rho D_j - t_j) */
            }
            gs_lp_status st = GS_LP_INFEASIBLE;
            if (possible) {
                rc = lpb_solve(s, &b, xall, NULL, &st, 0, "gavel finish-time fairness", d);
                if (rc) break;
            }
            if (st == GS_LP_OPTIMAL) {
                hi = best = r;
                memcpy(x, xall, (size_t)nx * sizeof *x);
            } else if (st == GS_LP_INFEASIBLE) {
                lo = r;
            } else {
                rc = gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                 "gavel finish-time fairness: the LP solver gave up at rho %g", r);
                break;
            }
        }
        if (!rc && rho) *rho = best;
    }
    lpb_release(&b);
    free(iso), free(D), free(xall);
    return rc;
}
