/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_lp.c - the GLPK adapter (src/solver/lp_glpk.c) behind include/gsched/lp.h:
 * optimal, infeasible and unbounded small LPs, every bound kind, minimisation,
 * malformed problems refused with GS_EINVAL (never a GLPK abort), determinism,
 * and the gsched program's engines get it (gs_engine_lp).  Skips (77) only in a
 * build without GLPK (GSCHED_GLPK=OFF or libglpk-dev missing).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"
#include "sim.h"
#include "solver.h"

static int solve(const gs_lp_problem *p, double *x, double *obj, gs_lp_status *st, gs_diag *d)
{
    const gs_lp_solver *s = gs_lp_glpk();
    gs_diag_init(d, NULL);
    return s->solve(s->ud, p, x, obj, st, d);
}

/* max 3x + 2y  s.t.  x + y <= 4,  x + 3y <= 6,  0 <= x <= 3,  y >= 0:  x = 3, y = 1, 11 */
static void test_optimal(void)
{
    const double obj[] = {3, 2}, clo[] = {0, 0}, chi[] = {3, GS_LP_INF};
    const double rlo[] = {-GS_LP_INF, -GS_LP_INF}, rhi[] = {4, 6};
    const int ia[] = {0, 0, 1, 1}, ja[] = {0, 1, 0, 1};
    const double ar[] = {1, 1, 1, 3};
    gs_lp_problem p = {1, 2, 2, obj, clo, chi, rlo, rhi, 4, ia, ja, ar};
    double x[2] = {-1, -1}, v = 0;
    gs_lp_status st = GS_LP_FAILED;
    gs_diag d;
    ASSERT_OK(solve(&p, x, &v, &st, &d));
    ASSERT_EQ(st, GS_LP_OPTIMAL);
    ASSERT_NEAR(x[0], 3, 1e-9);
    ASSERT_NEAR(x[1], 1, 1e-9);
    ASSERT_NEAR(v, 11, 1e-9);
    ASSERT_STR(gs_lp_glpk()->name, "glpk");
}

/* min x + y  s.t.  x + 2y = 4 (fixed row),  x - y >= -1 (lower row),  x, y free: the row
 * bounds bind: x = 2/3... checked by hand: minimise x+y on x = 4-2y, x-y >= -1 ->
 * 4 - 3y >= -1 -> y <= 5/3; x + y = 4 - y is smallest at y = 5/3, x = 2/3, value 7/3 */
static void test_minimise_bounds(void)
{
    const double obj[] = {1, 1}, clo[] = {-GS_LP_INF, -GS_LP_INF}, chi[] = {GS_LP_INF, GS_LP_INF};
    const double rlo[] = {4, -1}, rhi[] = {4, GS_LP_INF};
    const int ia[] = {0, 0, 1, 1}, ja[] = {0, 1, 0, 1};
    const double ar[] = {1, 2, 1, -1};
    gs_lp_problem p = {0, 2, 2, obj, clo, chi, rlo, rhi, 4, ia, ja, ar};
    double x[2], v = 0;
    gs_lp_status st;
    gs_diag d;
    ASSERT_OK(solve(&p, x, &v, &st, &d));
    ASSERT_EQ(st, GS_LP_OPTIMAL);
    ASSERT_NEAR(x[0], 2.0 / 3, 1e-9);
    ASSERT_NEAR(x[1], 5.0 / 3, 1e-9);
    ASSERT_NEAR(v, 7.0 / 3, 1e-9);
}

/* x + y >= 5 with x, y in [0, 2]: infeasible (found by the presolver), and the same with
 * presolve unable to decide alone (a row pair x - y >= 1, y - x >= 1) */
static void test_infeasible(void)
{
    const double obj[] = {1, 1}, clo[] = {0, 0}, chi[] = {2, 2};
    const double rlo[] = {5}, rhi[] = {GS_LP_INF};
    const int ia[] = {0, 0}, ja[] = {0, 1};
    const double ar[] = {1, 1};
    gs_lp_problem p = {1, 1, 2, obj, clo, chi, rlo, rhi, 2, ia, ja, ar};
    double x[2] = {7, 7};
    gs_lp_status st = GS_LP_OPTIMAL;
    gs_diag d;
    ASSERT_OK(solve(&p, x, NULL, &st, &d));
    ASSERT_EQ(st, GS_LP_INFEASIBLE);
    ASSERT_NEAR(x[0], 7, 0); /* untouched */

    const double chi2[] = {GS_LP_INF, GS_LP_INF}, rlo2[] = {1, 1}, rhi2[] = {GS_LP_INF, GS_LP_INF};
    const int ia2[] = {0, 0, 1, 1}, ja2[] = {0, 1, 0, 1};
    const double ar2[] = {1, -1, -1, 1};
    gs_lp_problem q = {1, 2, 2, obj, clo, chi2, rlo2, rhi2, 4, ia2, ja2, ar2};
    ASSERT_OK(solve(&q, x, NULL, &st, &d));
    ASSERT_EQ(st, GS_LP_INFEASIBLE);
}

/* x1 >= 0.4460935924..., x2 >= 0.5549073726..., x1 + x2 <= 1: infeasible by 0.001, which
 * GLPK's presolver alone calls optimal (a finish-time-fairness bisection step met it) */
static void test_presolve_tolerance(void)
{
    const double obj[] = {2, 2}, clo[] = {0, 0}, chi[] = {1, 1};
    const double rlo[] = {0.446093592458693, 0.554907372641848, -GS_LP_INF};
    const double rhi[] = {GS_LP_INF, GS_LP_INF, 1};
    const int ia[] = {0, 1, 2, 2}, ja[] = {0, 1, 0, 1};
    const double ar[] = {1, 1, 1, 1};
    gs_lp_problem p = {1, 3, 2, obj, clo, chi, rlo, rhi, 4, ia, ja, ar};
    double x[2];
    gs_lp_status st = GS_LP_OPTIMAL;
    gs_diag d;
    ASSERT_OK(solve(&p, x, NULL, &st, &d));
    ASSERT_EQ(st, GS_LP_INFEASIBLE);
}

/* max x + y  s.t.  x - y <= 1, x, y >= 0: unbounded along (1, 1) */
static void test_unbounded(void)
{
    const double obj[] = {1, 1}, clo[] = {0, 0}, chi[] = {GS_LP_INF, GS_LP_INF};
    const double rlo[] = {-GS_LP_INF}, rhi[] = {1};
    const int ia[] = {0, 0}, ja[] = {0, 1};
    const double ar[] = {1, -1};
    gs_lp_problem p = {1, 1, 2, obj, clo, chi, rlo, rhi, 2, ia, ja, ar};
    double x[2];
    gs_lp_status st = GS_LP_OPTIMAL;
    gs_diag d;
    ASSERT_OK(solve(&p, x, NULL, &st, &d));
    ASSERT_EQ(st, GS_LP_UNBOUNDED);
    /* no rows at all */
    gs_lp_problem q = {1, 0, 2, obj, clo, chi, NULL, NULL, 0, NULL, NULL, NULL};
    ASSERT_OK(solve(&q, x, NULL, &st, &d));
    ASSERT_EQ(st, GS_LP_UNBOUNDED);
    /* no rows, bounded columns: the bounds are the answer */
    const double chi1[] = {2, 5};
    gs_lp_problem r = {1, 0, 2, obj, clo, chi1, NULL, NULL, 0, NULL, NULL, NULL};
    double v = 0;
    ASSERT_OK(solve(&r, x, &v, &st, &d));
    ASSERT_EQ(st, GS_LP_OPTIMAL);
    ASSERT_NEAR(v, 7, 1e-12);
}

static void test_malformed(void)
{
    const double obj[] = {1, 1}, clo[] = {0, 0}, chi[] = {1, 1};
    const double rlo[] = {-GS_LP_INF}, rhi[] = {1};
    const int ia[] = {0, 0}, ja[] = {0, 0}; /* duplicate (0, 0) */
    const double ar[] = {1, 1};
    gs_lp_problem p = {1, 1, 2, obj, clo, chi, rlo, rhi, 2, ia, ja, ar};
    double x[2];
    gs_lp_status st;
    gs_diag d;
    ASSERT_EQ(solve(&p, x, NULL, &st, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "duplicate");
    const int ja2[] = {0, 2}; /* column 2 of 2 */
    p.ja = ja2;
    ASSERT_EQ(solve(&p, x, NULL, &st, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "out of range");
    const int ja3[] = {0, 1};
    p.ja = ja3;
    const double bad_hi[] = {1, -1}; /* column 1: [0, -1] */
    p.col_hi = bad_hi;
    ASSERT_EQ(solve(&p, x, NULL, &st, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "column 1");
    p.col_hi = chi;
    const double nan_ar[] = {1, NAN};
    p.ar = nan_ar;
    ASSERT_EQ(solve(&p, x, NULL, &st, &d), GS_EINVAL);
    p.ar = ar;
    const double up_inf[] = {GS_LP_INF}; /* a row whose lower bound is +inf */
    p.row_lo = up_inf;
    p.row_hi = up_inf;
    ASSERT_EQ(solve(&p, x, NULL, &st, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "row 0");
    /* after refusals GLPK still works */
    p.row_lo = rlo;
    p.row_hi = rhi;
    double v;
    ASSERT_OK(solve(&p, x, &v, &st, &d));
    ASSERT_EQ(st, GS_LP_OPTIMAL);
    ASSERT_NEAR(v, 1, 1e-12);
}

/* a max-min LP with ties (several optimal vertices): two solves give the same x, bit for bit */
static void test_deterministic(void)
{
    enum { J = 40, K = 3 };
    int nc = J * K + 1, nr = 2 * J + K;
    double obj[J * K + 1] = {0}, clo[J * K + 1], chi[J * K + 1], rlo[2 * J + K], rhi[2 * J + K];
    int ia[J * (3 * K + 1)], ja[J * (3 * K + 1)];
    double ar[J * (3 * K + 1)];
    size_t n = 0;
    for (int c = 0; c < J * K; c++) clo[c] = 0, chi[c] = 1;
    clo[J * K] = -GS_LP_INF, chi[J * K] = GS_LP_INF, obj[J * K] = 1;
    for (int j = 0; j < J; j++) {
        rlo[j] = -GS_LP_INF, rhi[j] = 0; /* z - sum c x <= 0 */
        ia[n] = j, ja[n] = J * K, ar[n++] = 1;
        rlo[J + j] = -GS_LP_INF, rhi[J + j] = 1; /* sum x <= 1 */
        for (int k = 0; k < K; k++) {
            ia[n] = j, ja[n] = j * K + k, ar[n++] = -(1.0 + (j % 3)) / (1.0 + k);
            ia[n] = J + j, ja[n] = j * K + k, ar[n++] = 1;
            ia[n] = 2 * J + k, ja[n] = j * K + k, ar[n++] = 1 + (j % 4 == 0);
        }
    }
    for (int k = 0; k < K; k++) rlo[2 * J + k] = -GS_LP_INF, rhi[2 * J + k] = 8;
    gs_lp_problem p = {1, nr, nc, obj, clo, chi, rlo, rhi, n, ia, ja, ar};
    double x1[J * K + 1], x2[J * K + 1], v1, v2;
    gs_lp_status st;
    gs_diag d;
    ASSERT_OK(solve(&p, x1, &v1, &st, &d));
    ASSERT_EQ(st, GS_LP_OPTIMAL);
    ASSERT_OK(solve(&p, x2, &v2, &st, &d));
    ASSERT_EQ(st, GS_LP_OPTIMAL);
    ASSERT(memcmp(x1, x2, sizeof x1) == 0);
    ASSERT(v1 == v2);
    ASSERT(v1 > 0);
    /* feasibility of the answer */
    for (int k = 0; k < K; k++) {
        double use = 0;
        for (int j = 0; j < J; j++) use += (1 + (j % 4 == 0)) * x1[j * K + k];
        ASSERT(use <= 8 + 1e-7);
    }
}

/* the simulator gives the engine GLPK's solver */
static void test_sim_passes_solver(void)
{
    gs_params params;
    gs_params_init(&params);
    gs_sim_opts o;
    memset(&o, 0, sizeof o);
    gs_engine_opts_init(&o.eopts);
    o.cluster_spec = "8";
    o.policy = "fifo";
    o.params = &params;
    gs_sim_result r;
    memset(&r, 0, sizeof r);
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_sim_prepare(&o, &r, &d));
    ASSERT(gs_engine_lp(r.engine) == gs_lp_glpk());
    gs_sim_result_release(&r);
    gs_params_release(&params);
}

int main(int argc, char **argv)
{
    if (!gs_lp_glpk()) {
        printf("SKIP: built without GLPK (GSCHED_GLPK=OFF or libglpk-dev missing)\n");
        return 77;
    }
    static const test_case tests[] = {
        {"optimal", test_optimal},
        {"minimise_bounds", test_minimise_bounds},
        {"infeasible", test_infeasible},
        {"presolve_tolerance", test_presolve_tolerance},
        {"unbounded", test_unbounded},
        {"malformed", test_malformed},
        {"deterministic", test_deterministic},
        {"sim_passes_solver", test_sim_passes_solver},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
