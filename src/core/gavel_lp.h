/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gavel_lp.h - Gavel's allocation problems (algorithms.md §5.6) built as LPs and
 * solved by the program's solver (gsched/lp.h).  Used by policy_gavel.c and by
 * Themis' LP mode (finish-time fairness, gs_gavel_ftf).  Internal to libgsched.
 *
 * The allocation X[j][k] is the fraction of wall-clock time job j should spend on
 * GPU type k (rows j = 0..J-1, types k = 0..K-1, row-major), and for space sharing
 * X[p][k] the fraction pair p runs co-located on type k.  Every problem keeps the
 * base constraints: 0 <= X <= 1; for each job, the sum of its single and pair
 * entries <= 1; for each type, sum_j s_j X[j][k] + sum_p s_p X[p][k] <= N_k (a pair
 * counts its GPUs once).  A zero throughput forces X = 0.
 *
 * Throughputs are in any unit common to all jobs (gsched uses work-us per us
 * relative to the reference GPU type, gs_engine_job_rate); remaining work and
 * times in seconds of that unit (remaining / throughput = seconds).
 */
#ifndef GSCHED_GAVEL_LP_H
#define GSCHED_GAVEL_LP_H

#include "gsched/error.h"
#include "gsched/lp.h"

typedef struct gs_gavel_in {
    int J, K;
    const double *tput;   /* J*K: throughput of job j alone on type k at its size (0: cannot) */
    const int *scale;     /* J: s_j, the job's GPU count */
    const double *weight; /* J: priority weight w_j (> 0); NULL = all 1 */
    const double *ngpus;  /* K: N_k, GPUs of type k */
    /* makespan and finish-time fairness */
    const double *remaining; /* J: remaining work S_j, seconds at throughput 1 */
    const double *elapsed;   /* J: t_j, seconds since the job arrived (ftf) */
    const double *iso_cum;   /* J: T_iso_cum_j (ftf; NULL = 0): see gs_gavel_ftf */
    /* space sharing: P pairs (pa[p], pb[p]) of jobs of equal scale; their throughputs
     * co-located on type k (ptput_a[p*K+k] for pa[p], ptput_b for pb[p]); 0 = cannot */
    int P;
    const int *pa, *pb;
    const double *ptput_a, *ptput_b;
    /* J: how many identical jobs row j stands for (its GPUs count that many times in the
     * capacity rows); NULL = 1 each.  Set by the solvers themselves when they merge jobs. */
    const int *count;
} gs_gavel_in;

/* Number of allocation entries: (J + P) * K. */
static inline int gs_gavel_nx(const gs_gavel_in *in)
{
    return (in->J + in->P) * in->K;
}

/*
 * Throughput of every job under Gavel's proportional allocation (X[j][k] = N_k / J,
 * all rows divided by the largest row sum), the denominator of max-min fairness.
 * out: J entries.
 */
void gs_gavel_proportional(const gs_gavel_in *in, double *out);
/*
 * Throughput of every job under the isolated allocation (X[j][k] = N_k / (J s_j), each
 * row divided by max(1, its sum)): the job alone on an equal 1/J share of the cluster,
 * the denominator of finish-time fairness.  out: J entries.
 */
void gs_gavel_isolated(const gs_gavel_in *in, double *out);
/* Effective throughput of job j under x (its single and pair entries). */
double gs_gavel_thr(const gs_gavel_in *in, const double *x, int j);

/*
 * Max-min fairness (LAS): maximise min_j s_j thr_j(X) / (w_j thr_prop_j), one LP.
 * Without pairs, jobs of equal size, weight and throughputs are merged into one row
 * weighted by their number (the LP shrinks from J*K to classes*K columns; a job type mix
 * has a few dozen classes): an optimal allocation exists that treats equal jobs equally
 * (the problem is symmetric and convex), and that one is returned, as an interior-point
 * solver (Gavel's ECOS) would.  gs_gavel_throughput merges the same way.
 * Jobs that can run nowhere are left out of the minimum.  x: gs_gavel_nx entries;
 * *value (may be NULL): the optimal minimum.  0, or a GS_E* code with d filled
 * (GS_EINTERNAL when the solver does not find the optimum of this feasible LP).
 */
int gs_gavel_maxmin(const gs_lp_solver *s, const gs_gavel_in *in, double *x, double *value,
                    gs_diag *d);
/*
 * Minimum makespan: minimise max_j S_j / thr_j(X), as one LP (maximise u with
 * thr_j(X) >= S_j u).  *makespan (may be NULL) = 1/u seconds (HUGE_VAL when some job
 * with work left can run nowhere: it is left out).
 */
int gs_gavel_makespan(const gs_lp_solver *s, const gs_gavel_in *in, double *x, double *makespan,
                      gs_diag *d);
/* Maximum total throughput: maximise sum_j thr_j(X).  *total (may be NULL). */
int gs_gavel_throughput(const gs_lp_solver *s, const gs_gavel_in *in, double *x, double *total,
                        gs_diag *d);
/*
 * Finish-time fairness (Themis' rho, algorithms.md §4.8): minimise max_j rho_j(X),
 *     rho_j(X) = (t_j + S_j / thr_j(X)) / D_j,   D_j = T_iso_cum_j + S_j / thr_iso_j,
 * by bisection on rho with one LP per step (feasible iff every thr_j(X) >=
 * S_j / (rho D_j - t_j)), until hi - lo <= tol * hi (tol <= 0: 1e-3).  The X returned
 * is feasible at the final rho and, among those, maximises sum_j thr_j / thr_iso_j (no
 * capacity left idle).  Jobs with no work left or able to run nowhere are left out.
 * *rho (may be NULL): the max rho reached.  The caller keeps T_iso_cum_j across solves
 * (Gavel: += (S_j at the last solve - S_j now) / thr_iso_j at the last solve).
 */
int gs_gavel_ftf(const gs_lp_solver *s, const gs_gavel_in *in, double tol, double *x, double *rho,
                 gs_diag *d);

/*
 * The refusal of a policy that needs an LP solver when the program gave none:
 * GS_EUNSUPPORTED with a message naming the policy and GLPK.
 */
int gs_gavel_no_solver(const char *policy, gs_diag *d);

#endif
