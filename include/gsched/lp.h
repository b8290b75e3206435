/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/lp.h - linear programs, solved by a solver the program passes in.
 *
 * Optimisation-based policies (Gavel's allocations, Themis' LP mode) state
 * their problem as a gs_lp_problem and hand it to the gs_lp_solver of the
 * engine's options (gs_engine_opts.lp, gs_engine_lp()).  The core links no
 * solver library: a solver may do I/O, keep global state or abort on misuse,
 * none of which libgsched allows itself, so the program supplies one (the
 * gsched program's is GLPK's simplex, src/solver/lp_glpk.c) and a policy
 * run without one fails with GS_EUNSUPPORTED and a message saying so.
 *
 * Problem form (columns and rows 0-based; the solver adapts to its own
 * conventions):
 *
 *     maximise (or minimise)  sum_c obj[c] * x[c]
 *     subject to              row_lo[r] <= sum_c A[r][c] * x[c] <= row_hi[r]
 *                             col_lo[c] <= x[c] <= col_hi[c]
 *
 * with -HUGE_VAL / HUGE_VAL for a missing bound (GS_LP_INF).  A is sparse:
 * 'nnz' triplets (ia[k], ja[k], ar[k]) = (row, column, value), no duplicates.
 *
 * Ownership: the problem's arrays are the caller's and only read during the
 * call; x (ncols entries) is filled by the solver.
 */
#ifndef GSCHED_LP_H
#define GSCHED_LP_H

#include <math.h>
#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_LP_INF HUGE_VAL

typedef struct gs_lp_problem {
    int maximize; /* 1 = maximise, 0 = minimise */
    int nrows, ncols;
    const double *obj;             /* ncols */
    const double *col_lo, *col_hi; /* ncols */
    const double *row_lo, *row_hi; /* nrows */
    size_t nnz;
    const int *ia, *ja; /* nnz: row and column of each coefficient */
    const double *ar;   /* nnz: the coefficient */
} gs_lp_problem;

typedef enum gs_lp_status {
    GS_LP_OPTIMAL = 0, /* x holds an optimal solution */
    GS_LP_INFEASIBLE,  /* no x satisfies the constraints */
    GS_LP_UNBOUNDED,   /* the objective is unbounded */
    GS_LP_FAILED,      /* the solver gave up (numerical trouble, iteration limit) */
} gs_lp_status;

typedef struct gs_lp_solver {
    const char *name; /* "glpk" */
    /*
     * Solve p.  Returns 0 with *status set (x and *objval filled only when
     * GS_LP_OPTIMAL), or a negative GS_E* code (GS_ENOMEM, GS_EINVAL for a
     * malformed problem) with d filled.  Must be deterministic: the same
     * problem gives the same x.
     */
    int (*solve)(void *ud, const gs_lp_problem *p, double *x, double *objval, gs_lp_status *status,
                 gs_diag *d);
    void *ud;
} gs_lp_solver;

#ifdef __cplusplus
}
#endif
#endif
