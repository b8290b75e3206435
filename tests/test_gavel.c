/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gavel.c - Gavel's allocation LPs (src/core/gavel_lp.c) on instances whose
 * optimum is worked out by hand in each test's comment, solved by GLPK; and the
 * gavel policy (src/core/policy_gavel.c): round mechanism, shares converging to the
 * allocation, heterogeneity-aware against agnostic, determinism, the refusal
 * without a solver.  Skips (77) only in a build without GLPK.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/gavel_lp.h"
#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"
#include "sim.h"
#include "solver.h"

/* ---- the LPs ----------------------------------------------------------------------------- */

/* Max-min with s_j: one type of 2 GPUs, jobs of 1, 1 and 2 GPUs, equal throughputs.  The
 * proportional throughput is 1 for all (rows N/J = 2/3, scaled to 1), so the objective is
 * min(x0, x1, 2 x2) under x0 + x1 + 2 x2 <= 2: x0 = x1 = 2 x2 = z, 3z = 2, z = 2/3 - every job
 * gets 2/3 of a GPU's time.  With w = (1, 1, 2) the 2-GPU job's term halves: min(x0, x1, x2),
 * 4z = 2, z = 1/2. */
static void test_maxmin_scale_weight(void)
{
    const double T[] = {1, 1, 1}, N[] = {2};
    const int s[] = {1, 1, 2};
    gs_gavel_in in = {.J = 3, .K = 1, .tput = T, .scale = s, .ngpus = N};
    double x[3], z = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_maxmin(gs_lp_glpk(), &in, x, &z, &d));
    ASSERT_NEAR(z, 2.0 / 3, 1e-9);
    ASSERT_NEAR(x[0], 2.0 / 3, 1e-9);
    ASSERT_NEAR(x[1], 2.0 / 3, 1e-9);
    ASSERT_NEAR(x[2], 1.0 / 3, 1e-9);
    const double w[] = {1, 1, 2};
    in.weight = w;
    ASSERT_OK(gs_gavel_maxmin(gs_lp_glpk(), &in, x, &z, &d));
    ASSERT_NEAR(z, 0.5, 1e-9);
    ASSERT_NEAR(x[2], 0.5, 1e-9);
}

/* Max-min across types: F and S, one GPU each; job A runs only on F (T = 1, 0), job B on
 * both (1, 1).  Proportional rows (1/2, 1/2): A's throughput 1/2, B's 1.  Objective
 * min(2 a_F, b_F + b_S): B can never exceed 1, and A on F alone (a_F = 1) with B on S
 * (b_S = 1) reaches z = 1; A never gets S time (zero throughput). */
static void test_maxmin_types(void)
{
    const double T[] = {1, 0, 1, 1}, N[] = {1, 1};
    const int s[] = {1, 1};
    gs_gavel_in in = {.J = 2, .K = 2, .tput = T, .scale = s, .ngpus = N};
    double x[4], z = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_maxmin(gs_lp_glpk(), &in, x, &z, &d));
    ASSERT_NEAR(z, 1, 1e-9);
    ASSERT(x[1] == 0);                 /* A on S */
    ASSERT(x[0] >= 0.5 - 1e-9);        /* 2 a_F >= z */
    ASSERT_NEAR(x[2] + x[3], 1, 1e-9); /* B's time */
    ASSERT(x[0] + x[2] <= 1 + 1e-9);   /* F's capacity */
    double prop[2];
    gs_gavel_proportional(&in, prop);
    ASSERT_NEAR(prop[0], 0.5, 1e-12);
    ASSERT_NEAR(prop[1], 1, 1e-12);
}

/* Makespan.  One GPU, work 100 and 300: x0 >= 100u, x1 >= 300u, x0 + x1 <= 1, so 400u <= 1:
 * makespan 400 with shares 1/4, 3/4.  Two types F, S (one GPU each), A: T = (2, 1), work 200;
 * B: T = (1, 1), work 100: A's best throughput is 2 (all of F), so its work takes at least
 * 100 s; 100 is reached with A on F and B on S. */
static void test_makespan(void)
{
    const double T1[] = {1, 1}, N1[] = {1}, S1[] = {100, 300};
    const int s[] = {1, 1};
    gs_gavel_in in = {.J = 2, .K = 1, .tput = T1, .scale = s, .ngpus = N1, .remaining = S1};
    double x[4], m = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_makespan(gs_lp_glpk(), &in, x, &m, &d));
    ASSERT_NEAR(m, 400, 1e-6);
    ASSERT_NEAR(x[0], 0.25, 1e-9);
    ASSERT_NEAR(x[1], 0.75, 1e-9);
    const double T2[] = {2, 1, 1, 1}, N2[] = {1, 1}, S2[] = {200, 100};
    gs_gavel_in in2 = {.J = 2, .K = 2, .tput = T2, .scale = s, .ngpus = N2, .remaining = S2};
    ASSERT_OK(gs_gavel_makespan(gs_lp_glpk(), &in2, x, &m, &d));
    ASSERT_NEAR(m, 100, 1e-6);
    ASSERT_NEAR(x[0], 1, 1e-9); /* A on F */
    ASSERT_NEAR(x[3], 1, 1e-9); /* B on S */
}

/* Total throughput: F, S one GPU each; A: (3, 1), B: (2, 1.5).  A on F and B on S give
 * 3 + 1.5 = 4.5, the other way 2 + 1 = 3. */
static void test_throughput(void)
{
    const double T[] = {3, 1, 2, 1.5}, N[] = {1, 1};
    const int s[] = {1, 1};
    gs_gavel_in in = {.J = 2, .K = 2, .tput = T, .scale = s, .ngpus = N};
    double x[4], tot = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_throughput(gs_lp_glpk(), &in, x, &tot, &d));
    ASSERT_NEAR(tot, 4.5, 1e-9);
    ASSERT_NEAR(x[0], 1, 1e-9);
    ASSERT_NEAR(x[3], 1, 1e-9);
}

/* Finish-time fairness.  One GPU, two 1-GPU jobs, work 100 each; isolated throughput 1/2
 * (X_iso = 1/2), so D = 200 + T_iso_cum.  Job B has run 100 s already and has T_iso_cum 50:
 * D_A = 200, D_B = 250; rho_A = (100/a)/200, rho_B = (100 + 100/b)/250 with a + b = 1.
 * Equal at 4b^2 + 5b - 4 = 0: b = (sqrt(89) - 5)/8, a = 1 - b, rho = 0.5/a. */
static void test_ftf(void)
{
    const double T[] = {1, 1}, N[] = {1}, S[] = {100, 100}, t[] = {0, 100}, cum[] = {0, 50};
    const int s[] = {1, 1};
    gs_gavel_in in = {.J = 2,
                      .K = 1,
                      .tput = T,
                      .scale = s,
                      .ngpus = N,
                      .remaining = S,
                      .elapsed = t,
                      .iso_cum = cum};
    double x[2], rho = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_ftf(gs_lp_glpk(), &in, 1e-7, x, &rho, &d));
    double b = (sqrt(89.0) - 5) / 8, a = 1 - b;
    ASSERT_NEAR(rho, 0.5 / a, 1e-5);
    ASSERT_NEAR(x[0], a, 1e-4);
    ASSERT_NEAR(x[1], b, 1e-4);
    double iso[2];
    gs_gavel_isolated(&in, iso);
    ASSERT_NEAR(iso[0], 0.5, 1e-12);
    /* equal jobs, nothing run: rho 1 at the isolated shares */
    const double t0[] = {0, 0};
    in.elapsed = t0;
    in.iso_cum = NULL;
    ASSERT_OK(gs_gavel_ftf(gs_lp_glpk(), &in, 1e-7, x, &rho, &d));
    ASSERT_NEAR(rho, 1, 1e-5);
    ASSERT_NEAR(x[0], 0.5, 1e-4);
}

/* Space sharing: one GPU, A and B (1 GPU, throughput 1 alone), co-located at 0.8 and 0.7.
 * Max throughput: the pair all the time, 1.5.  Max-min (proportional throughput 1): A = a +
 * 0.8p, B = b + 0.7p, a + p <= 1, b + p <= 1, a + b + p <= 1 (the pair counts its GPU once);
 * a = 0, b = 1 - p: 0.8p = 1 - 0.3p, p = 10/11, z = 8/11. */
static void test_pairs(void)
{
    const double T[] = {1, 1}, N[] = {1}, pa_t[] = {0.8}, pb_t[] = {0.7};
    const int s[] = {1, 1}, pa[] = {0}, pb[] = {1};
    gs_gavel_in in = {.J = 2,
                      .K = 1,
                      .tput = T,
                      .scale = s,
                      .ngpus = N,
                      .P = 1,
                      .pa = pa,
                      .pb = pb,
                      .ptput_a = pa_t,
                      .ptput_b = pb_t};
    ASSERT_EQ(gs_gavel_nx(&in), 3);
    double x[3], v = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_throughput(gs_lp_glpk(), &in, x, &v, &d));
    ASSERT_NEAR(v, 1.5, 1e-9);
    ASSERT_NEAR(x[2], 1, 1e-9);
    ASSERT_OK(gs_gavel_maxmin(gs_lp_glpk(), &in, x, &v, &d));
    ASSERT_NEAR(v, 8.0 / 11, 1e-9);
    ASSERT_NEAR(x[2], 10.0 / 11, 1e-9);
    ASSERT_NEAR(gs_gavel_thr(&in, x, 0), 8.0 / 11, 1e-9);
    ASSERT_NEAR(gs_gavel_thr(&in, x, 1), 8.0 / 11, 1e-9);
}

static void test_no_solver_message(void)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_gavel_no_solver("gavel", &d), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "GLPK");
    ASSERT_CONTAINS(d.msg, "gavel");
}

int main(int argc, char **argv)
{
    if (!gs_lp_glpk()) {
        printf("SKIP: built without GLPK (GSCHED_GLPK=OFF or libglpk-dev missing)\n");
        return 77;
    }
    static const test_case tests[] = {
        {"maxmin_scale_weight", test_maxmin_scale_weight},
        {"maxmin_types", test_maxmin_types},
        {"makespan", test_makespan},
        {"throughput", test_throughput},
        {"ftf", test_ftf},
        {"pairs", test_pairs},
        {"no_solver_message", test_no_solver_message},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
