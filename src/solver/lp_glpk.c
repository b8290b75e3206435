/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lp_glpk.c - a gs_lp_solver (include/gsched/lp.h) over GLPK's simplex.
 *
 * The gsched program passes it to the engine (gs_engine_opts.lp) so that
 * Gavel's and Themis' LP policies can solve their allocations; libgsched
 * never links GLPK (the core purity gate would fail on it).
 *
 * Invariants:
 *  - A GLPK error never ends the program: glp_error_hook is set for the call
 *    to a hook that longjmps back here, where the GLPK environment is freed
 *    (glp_free_env, as GLPK's manual prescribes after an error) and the
 *    call returns GS_EINTERNAL (GS_ENOMEM when GLPK ran out of memory) with
 *    GLPK's message in the diag.  GLPK's terminal output is captured, never
 *    printed (messages off, a terminal hook keeps the last line for the diag).
 *  - The hooks are reset before returning, so GLPK keeps no pointer to this
 *    call's stack.  The state is GLPK's environment (thread-local where GLPK
 *    was built with thread-local storage): one call at a time per thread.
 *  - Deterministic: presolve on, automatic scaling, primal simplex, no time
 *    limit; the same problem gives the same solution.
 *  - The problem is checked before GLPK sees it (indices in range, finite
 *    coefficients and bounds, lower <= upper, no duplicate entries):
 *    malformed problems return GS_EINVAL with the offending row/column.
 *  - With presolve GLPK cannot say why a problem has no dual feasible
 *    solution (unbounded or infeasible); it is then solved again without
 *    presolve, whose final status tells the two apart.  An "optimal" answer
 *    of the presolver is checked against every bound of the problem (GLPK's
 *    presolver accepts some slightly infeasible problems): one that misses
 *    a bound is solved again without presolve, which decides.
 */
#include <glpk.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "solver.h"

typedef struct glpk_call {
    jmp_buf jb;
    char msg[256]; /* GLPK's last terminal line (its error text on failure) */
} glpk_call;

static void on_error(void *info)
{
    glpk_call *c = info;
    longjmp(c->jb, 1);
}

static int on_term(void *info, const char *s)
{
    glpk_call *c = info;
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
    if (n) {
        if (n >= sizeof c->msg) n = sizeof c->msg - 1;
        memcpy(c->msg, s, n);
        c->msg[n] = '\0';
    }
    return 1; /* never printed */
}

/* GLPK bound type of [lo, hi]; -1 for an invalid pair. */
static int bnd_type(double lo, double hi)
{
    if (isnan(lo) || isnan(hi) || lo == GS_LP_INF || hi == -GS_LP_INF) return -1;
    int flo = isfinite(lo), fhi = isfinite(hi);
    if (!flo && !fhi) return GLP_FR;
    if (!fhi) return GLP_LO;
    if (!flo) return GLP_UP;
    if (lo > hi) return -1;
    return lo == hi ? GLP_FX : GLP_DB;
}

static int check(const gs_lp_problem *p, gs_diag *d)
{
    if (p->nrows < 0 || p->ncols < 0 || (p->nnz && (!p->ia || !p->ja || !p->ar)))
        return gs_diag_set(d, GS_EINVAL, 0, 0, "LP: malformed problem");
    if (p->ncols == INT_MAX || p->nrows == INT_MAX || p->nnz >= (size_t)INT_MAX)
        return gs_diag_set(d, GS_ETOOBIG, 0, 0, "LP: problem too large for GLPK");
    for (int c = 0; c < p->ncols; c++) {
        double lo = p->col_lo ? p->col_lo[c] : 0, hi = p->col_hi ? p->col_hi[c] : GS_LP_INF;
        if (bnd_type(lo, hi) < 0)
            return gs_diag_set(d, GS_EINVAL, 0, 0, "LP: column %d: bounds [%g, %g] invalid", c, lo,
                               hi);
        if (p->obj && !isfinite(p->obj[c]))
            return gs_diag_set(d, GS_EINVAL, 0, 0, "LP: column %d: objective not finite", c);
    }
    for (int r = 0; r < p->nrows; r++) {
        double lo = p->row_lo ? p->row_lo[r] : -GS_LP_INF;
        double hi = p->row_hi ? p->row_hi[r] : GS_LP_INF;
        if (bnd_type(lo, hi) < 0)
            return gs_diag_set(d, GS_EINVAL, 0, 0, "LP: row %d: bounds [%g, %g] invalid", r, lo,
                               hi);
    }
    for (size_t k = 0; k < p->nnz; k++) {
        if (p->ia[k] < 0 || p->ia[k] >= p->nrows || p->ja[k] < 0 || p->ja[k] >= p->ncols)
            return gs_diag_set(d, GS_EINVAL, 0, 0, "LP: coefficient %zu at (%d, %d) out of range",
                               k, p->ia[k], p->ja[k]);
        if (!isfinite(p->ar[k]))
            return gs_diag_set(d, GS_EINVAL, 0, 0, "LP: coefficient at (%d, %d) not finite",
                               p->ia[k], p->ja[k]);
    }
    return 0;
}

/* Whether GLPK's current primal solution meets every bound of p, the row activities
 * computed from the columns (relative tolerance 1e-7).  Returns -1 when out of memory. */
static int feasible(glp_prob *lp, const gs_lp_problem *p)
{
    const double tol = 1e-7;
    double *act = calloc((size_t)p->nrows + 1, sizeof *act);
    double *x = malloc(((size_t)p->ncols + 1) * sizeof *x);
    int ok = 1;
    if (!act || !x) {
        free(act);
        free(x);
        return -1;
    }
    for (int c = 0; c < p->ncols && ok; c++) {
        double v = x[c] = glp_get_col_prim(lp, c + 1);
        double lo = p->col_lo ? p->col_lo[c] : 0, hi = p->col_hi ? p->col_hi[c] : GS_LP_INF;
        if (v < lo - tol * (1 + fabs(lo)) || v > hi + tol * (1 + fabs(hi))) ok = 0;
    }
    for (size_t k = 0; k < p->nnz && ok; k++) act[p->ia[k]] += p->ar[k] * x[p->ja[k]];
    for (int r = 0; r < p->nrows && ok; r++) {
        double lo = p->row_lo ? p->row_lo[r] : -GS_LP_INF;
        double hi = p->row_hi ? p->row_hi[r] : GS_LP_INF;
        if (act[r] < lo - tol * (1 + fabs(lo)) || act[r] > hi + tol * (1 + fabs(hi))) ok = 0;
    }
    free(act);
    free(x);
    return ok;
}

static gs_lp_status status_of(int st)
{
    switch (st) {
    case GLP_OPT: return GS_LP_OPTIMAL;
    case GLP_NOFEAS: return GS_LP_INFEASIBLE;
    case GLP_UNBND: return GS_LP_UNBOUNDED;
    default: return GS_LP_FAILED;
    }
}

static int glpk_solve(void *ud, const gs_lp_problem *p, double *x, double *objval,
                      gs_lp_status *status, gs_diag *d)
{
    (void)ud;
    int rc = check(p, d);
    if (rc) return rc;
    /* GLPK's 1-based triplets, zero coefficients left out */
    size_t n1 = p->nnz + 1;
    int *ia = malloc(n1 * sizeof *ia), *ja = malloc(n1 * sizeof *ja);
    double *ar = malloc(n1 * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia);
        free(ja);
        free(ar);
        return gs_diag_set(d, GS_ENOMEM, 0, 0, "LP: out of memory");
    }
    int ne = 0;
    for (size_t k = 0; k < p->nnz; k++) {
        if (p->ar[k] == 0) continue;
        ne++;
        ia[ne] = p->ia[k] + 1;
        ja[ne] = p->ja[k] + 1;
        ar[ne] = p->ar[k];
    }
    glpk_call call;
    call.msg[0] = '\0';
    glp_prob *volatile lp = NULL;
    int volatile ret = 0;
    if (setjmp(call.jb)) {
        /* GLPK failed inside: its environment (and lp with it) is no longer usable */
        glp_free_env();
        free(ia);
        free(ja);
        free(ar);
        int err = strstr(call.msg, "memory") ? GS_ENOMEM : GS_EINTERNAL;
        return gs_diag_set(d, err, 0, 0, "LP: GLPK error: %s",
                           call.msg[0] ? call.msg : "(no message)");
    }
    glp_term_hook(on_term, &call);
    glp_error_hook(on_error, &call);
    if (ne > 1 && glp_check_dup(p->nrows, p->ncols, ne, ia, ja) != 0) {
        ret = gs_diag_set(d, GS_EINVAL, 0, 0, "LP: duplicate coefficient in the matrix");
        goto out;
    }
    lp = glp_create_prob();
    glp_set_obj_dir(lp, p->maximize ? GLP_MAX : GLP_MIN);
    if (p->nrows) glp_add_rows(lp, p->nrows);
    if (p->ncols) glp_add_cols(lp, p->ncols);
    for (int r = 0; r < p->nrows; r++) {
        double lo = p->row_lo ? p->row_lo[r] : -GS_LP_INF;
        double hi = p->row_hi ? p->row_hi[r] : GS_LP_INF;
        glp_set_row_bnds(lp, r + 1, bnd_type(lo, hi), isfinite(lo) ? lo : 0, isfinite(hi) ? hi : 0);
    }
    for (int c = 0; c < p->ncols; c++) {
        double lo = p->col_lo ? p->col_lo[c] : 0, hi = p->col_hi ? p->col_hi[c] : GS_LP_INF;
        glp_set_col_bnds(lp, c + 1, bnd_type(lo, hi), isfinite(lo) ? lo : 0, isfinite(hi) ? hi : 0);
        if (p->obj) glp_set_obj_coef(lp, c + 1, p->obj[c]);
    }
    if (ne) glp_load_matrix(lp, ne, ia, ja, ar);
    if (p->nrows && p->ncols) glp_scale_prob(lp, GLP_SF_AUTO);

    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int sr = glp_simplex(lp, &parm);
    if (sr == GLP_ENOPFS) {
        *status = GS_LP_INFEASIBLE;
        goto out;
    }
    if (sr != 0) {
        /* no dual feasible solution (unbounded or infeasible) or trouble in the presolved
         * problem: the full problem's simplex says which */
        parm.presolve = GLP_OFF;
        glp_adv_basis(lp, 0);
        sr = glp_simplex(lp, &parm);
    }
    if (sr != 0) {
        *status = GS_LP_FAILED;
        goto out;
    }
    *status = status_of(glp_get_status(lp));
    int fits = *status == GS_LP_OPTIMAL && parm.presolve == GLP_ON ? feasible(lp, p) : 1;
    if (fits < 0) {
        ret = gs_diag_set(d, GS_ENOMEM, 0, 0, "LP: out of memory");
        goto out;
    }
    if (!fits) {
        /* GLPK's presolver accepts some slightly infeasible problems as optimal (its
         * tolerances are loose: an x1 + x2 <= 1 row at 1.001 was seen); check the answer
         * against the problem and let the full simplex decide when it does not fit */
        parm.presolve = GLP_OFF;
        glp_adv_basis(lp, 0);
        sr = glp_simplex(lp, &parm);
        *status = sr == 0 ? status_of(glp_get_status(lp)) : GS_LP_FAILED;
    }
    if (*status == GS_LP_OPTIMAL) {
        for (int c = 0; c < p->ncols; c++) x[c] = glp_get_col_prim(lp, c + 1);
        if (objval) *objval = glp_get_obj_val(lp);
    }
out:
    if (lp) glp_delete_prob(lp);
    glp_error_hook(NULL, NULL);
    glp_term_hook(NULL, NULL);
    free(ia);
    free(ja);
    free(ar);
    return ret;
}

static const gs_lp_solver glpk_solver = {"glpk", glpk_solve, NULL};

const gs_lp_solver *gs_lp_glpk(void)
{
    return &glpk_solver;
}
