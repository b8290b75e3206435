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

/* Equal jobs get equal allocations (the LP is solved over classes of equal jobs): two jobs with
 * T = (2, 1) on F and S (one GPU each).  Proportional throughput 1.5 each; any split with
 * 2 a_F + a_S = 1.5 for both is optimal (z = 1), e.g. (0.75, 0) and (0.25, 1); the classes give
 * both (0.5, 0.5).  A third, different job keeps its own row. */
static void test_equal_jobs_equal_shares(void)
{
    const double T[] = {2, 1, 2, 1}, N[] = {1, 1};
    const int s[] = {1, 1};
    gs_gavel_in in = {.J = 2, .K = 2, .tput = T, .scale = s, .ngpus = N};
    double x[6], z = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_gavel_maxmin(gs_lp_glpk(), &in, x, &z, &d));
    ASSERT_NEAR(z, 1, 1e-9);
    ASSERT_NEAR(x[0], 0.5, 1e-9);
    ASSERT_NEAR(x[1], 0.5, 1e-9);
    ASSERT(x[0] == x[2] && x[1] == x[3]);
    ASSERT_OK(gs_gavel_throughput(gs_lp_glpk(), &in, x, &z, &d));
    ASSERT_NEAR(z, 3, 1e-9); /* F to either (2) and S to the other (1) */
    ASSERT(x[0] == x[2] && x[1] == x[3]);
    /* three jobs, the third slower: it is its own class */
    const double T3[] = {2, 1, 1, 1, 2, 1};
    const int s3[] = {1, 1, 1};
    gs_gavel_in in3 = {.J = 3, .K = 2, .tput = T3, .scale = s3, .ngpus = N};
    ASSERT_OK(gs_gavel_maxmin(gs_lp_glpk(), &in3, x, &z, &d));
    ASSERT(x[0] == x[4] && x[1] == x[5]);
    double prop[3];
    gs_gavel_proportional(&in3, prop);
    for (int j = 0; j < 3; j++) ASSERT(gs_gavel_thr(&in3, x, j) >= z * prop[j] - 1e-9);
}

static void test_no_solver_message(void)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_gavel_no_solver("gavel", &d), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "GLPK");
    ASSERT_CONTAINS(d.msg, "gavel");
}

/* ---- the policy ------------------------------------------------------------------------------ */

typedef struct world {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
} world;

/* A cluster shorthand, gavel with the parameters 'sets' (NULL-terminated), no restart cost. */
static int mk(world *w, const char *spec, const char *const *sets, const gs_lp_solver *lp)
{
    memset(w, 0, sizeof *w);
    gs_params_init(&w->p);
    gs_params_set(&w->p, "preempt_cost", "0");
    for (; sets && *sets; sets++)
        if (gs_params_set_kv(&w->p, *sets)) return -1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_load(spec, &w->c, &d)) return -1;
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.lp = lp;
    int rc = gs_engine_opts_from_params(&w->p, &eo, &d);
    if (!rc) rc = gs_engine_create(w->c, "gavel", &w->p, &eo, &w->e, &d);
    if (rc) fprintf(stderr, "  %s\n", d.msg);
    return rc;
}

static void rm(world *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
    gs_params_release(&w->p);
}

static int add(world *w, int64_t id, double submit_s, double work_s, int gpus, const char *model)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.ntasks = 1;
    s.gpus_per_task = gpus;
    s.submit = (gs_time)(submit_s * GS_SEC);
    s.duration = (gs_time)(work_s * GS_SEC);
    s.model = model;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_engine_add_job(w->e, &s, NULL, &d);
    if (rc) fprintf(stderr, "  %s\n", d.msg);
    return rc;
}

static double inspect_d(world *w, const char *key)
{
    char buf[64];
    if (gs_engine_inspect(w->e, key, buf, sizeof buf)) return -1;
    return atof(buf);
}

/* Step the engine until 'until' (seconds) has passed or nothing is left. */
static int run_until(world *w, double until_s)
{
    int rc;
    while (gs_engine_now(w->e) < (gs_time)(until_s * GS_SEC) && (rc = gs_engine_step(w->e)) > 0) {
    }
    return gs_engine_error(w->e);
}

/*
 * Shares converge to X: 4 GPUs of one type, six 1-GPU and two 2-GPU jobs that outlive the
 * window.  Max-min over s_j x_j equalises GPU-time: 6z + 2z = 4, z = 1/2, so X = 1/2 for a
 * 1-GPU job and 1/4 for a 2-GPU job.  Over 60 rounds each job's time holding GPUs divided
 * by the elapsed time is its X, to within a round's worth.
 */
static void test_shares_converge(void)
{
    world w;
    ASSERT_OK(mk(&w, "4", NULL, gs_lp_glpk()));
    for (int i = 1; i <= 8; i++) ASSERT_OK(add(&w, i, 0, 1e6, i <= 6 ? 1 : 2, NULL));
    double T = 60 * 360;
    ASSERT_OK(run_until(&w, T));
    gs_diag d;
    ASSERT_OK(gs_engine_check(w.e, &d));
    for (int i = 1; i <= 8; i++) {
        char key[32];
        snprintf(key, sizeof key, "x.%d", i);
        double x = inspect_d(&w, key), want = i <= 6 ? 0.5 : 0.25;
        ASSERT_NEAR(x, want, 1e-6);
        const gs_job *j = gs_engine_find_job(w.e, i);
        double share = (double)gs_job_executed(j, gs_engine_now(w.e)) / (double)gs_engine_now(w.e);
        if (!(fabs(share - want) <= 0.02)) T_FAIL("job %d: share %.4f, X %.4f", i, share, want);
    }
    ASSERT(inspect_d(&w, "rounds") >= 59);
    rm(&w);
}

/* Priority weights (gs_job_spec.weight, Gavel's priority_weight): one GPU, weights 1 and 3;
 * max-min of x_j / w_j with x_0 + x_1 = 1 gives X = 1/4 and 3/4, and the realised shares
 * follow over 40 rounds. */
static void test_weights(void)
{
    world w;
    ASSERT_OK(mk(&w, "1", NULL, gs_lp_glpk()));
    for (int i = 1; i <= 2; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i;
        s.ntasks = 1;
        s.gpus_per_task = 1;
        s.duration = (gs_time)1e6 * GS_SEC;
        s.weight = i == 1 ? 1 : 3;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_OK(gs_engine_add_job(w.e, &s, NULL, &d));
    }
    ASSERT_OK(run_until(&w, 40 * 360));
    ASSERT_NEAR(inspect_d(&w, "x.1"), 0.25, 1e-6);
    ASSERT_NEAR(inspect_d(&w, "x.2"), 0.75, 1e-6);
    double now = (double)gs_engine_now(w.e);
    ASSERT_NEAR((double)gs_job_executed(gs_engine_find_job(w.e, 2), gs_engine_now(w.e)) / now, 0.75,
                0.03);
    rm(&w);
}

/* A job chosen again keeps its GPUs: with no more jobs than GPUs every job runs every round,
 * started once, never preempted; then one more job than GPUs: preemptions at round ends. */
static void test_lease_extension(void)
{
    world w;
    ASSERT_OK(mk(&w, "4", NULL, gs_lp_glpk()));
    for (int i = 1; i <= 4; i++) ASSERT_OK(add(&w, i, 0, 3600, 1, NULL));
    ASSERT_OK(gs_engine_run(w.e));
    for (int i = 1; i <= 4; i++) {
        const gs_job *j = gs_engine_find_job(w.e, i);
        ASSERT_EQ(j->preemptions, 0);
        ASSERT_EQ(j->end, 3600 * GS_SEC);
    }
    rm(&w);
    ASSERT_OK(mk(&w, "4", NULL, gs_lp_glpk()));
    for (int i = 1; i <= 5; i++) ASSERT_OK(add(&w, i, 0, 3600, 1, NULL));
    ASSERT_OK(gs_engine_run(w.e));
    int pre = 0;
    gs_time last = 0;
    for (int i = 1; i <= 5; i++) {
        const gs_job *j = gs_engine_find_job(w.e, i);
        pre += j->preemptions;
        if (j->end > last) last = j->end;
    }
    ASSERT(pre > 0);
    /* 5 h of work on 4 GPUs, shared in 6-minute rounds: done within 5 h / 4 + 2 rounds */
    ASSERT_LE(last, (gs_time)(5 * 3600 / 4 + 720) * GS_SEC);
    rm(&w);
}

/* Same inputs, same schedule (job end times), for each objective. */
static void test_deterministic(void)
{
    static const char *const objs[] = {"objective=las", "objective=ftf", "objective=makespan",
                                       "objective=throughput", "objective=fifo"};
    for (size_t o = 0; o < sizeof objs / sizeof *objs; o++) {
        gs_time ends[2][12];
        for (int run = 0; run < 2; run++) {
            world w;
            const char *sets[] = {objs[o], NULL};
            ASSERT_OK(mk(&w, "2x4", sets, gs_lp_glpk()));
            for (int i = 1; i <= 12; i++)
                ASSERT_OK(add(&w, i, 100.0 * (i % 5), 600.0 * (1 + i % 7), 1 << (i % 3), NULL));
            ASSERT_OK(gs_engine_run(w.e));
            for (int i = 1; i <= 12; i++) {
                const gs_job *j = gs_engine_find_job(w.e, i);
                ASSERT_EQ(j->state, GS_JOB_DONE);
                ends[run][i - 1] = j->end;
            }
            rm(&w);
        }
        if (memcmp(ends[0], ends[1], sizeof ends[0])) T_FAIL("%s: two runs differ", objs[o]);
    }
}

/* Without a solver the LP objectives refuse, naming GLPK; fifo needs none. */
static void test_no_solver(void)
{
    world w;
    ASSERT_EQ(mk(&w, "4", NULL, NULL), GS_EUNSUPPORTED);
    gs_cluster_destroy(w.c);
    gs_params_release(&w.p);
    const char *sets[] = {"objective=fifo", NULL};
    ASSERT_OK(mk(&w, "4", sets, NULL));
    rm(&w);
    const char *bad[] = {"objective=fair", NULL};
    ASSERT_EQ(mk(&w, "4", bad, gs_lp_glpk()), GS_EINVAL);
    gs_cluster_destroy(w.c);
    gs_params_release(&w.p);
}

/* fifo: jobs in arrival order hold their GPUs until done (priority 0 waits). */
static void test_fifo(void)
{
    world w;
    const char *sets[] = {"objective=fifo", NULL};
    ASSERT_OK(mk(&w, "2", sets, gs_lp_glpk()));
    ASSERT_OK(add(&w, 1, 0, 3600, 1, NULL));
    ASSERT_OK(add(&w, 2, 0, 3600, 1, NULL));
    ASSERT_OK(add(&w, 3, 10, 600, 1, NULL));
    ASSERT_OK(gs_engine_run(w.e));
    const gs_job *j3 = gs_engine_find_job(w.e, 3);
    ASSERT_EQ(gs_engine_find_job(w.e, 1)->preemptions, 0);
    ASSERT_EQ(gs_engine_find_job(w.e, 1)->end, 3600 * GS_SEC);
    ASSERT(j3->first_start >= 3600 * GS_SEC);
    rm(&w);
}

/* pack=on: two jobs of co-locatable models on one GPU share it (the pair's combined rate
 * beats time-sharing), so both finish before time-sharing alone would let them. */
static void test_pack(void)
{
    world w;
    const char *sets[] = {"pack=on", NULL};
    ASSERT_OK(mk(&w, "1:V100", sets, gs_lp_glpk()));
    ASSERT_OK(add(&w, 1, 0, 3600, 1, "resnet18-bs128"));
    ASSERT_OK(add(&w, 2, 0, 3600, 1, "a3c"));
    ASSERT_OK(gs_engine_run(w.e));
    const gs_job *a = gs_engine_find_job(w.e, 1), *b = gs_engine_find_job(w.e, 2);
    ASSERT(a->packs + b->packs > 0);
    gs_time last = a->end > b->end ? a->end : b->end;
    ASSERT(last < 7200 * GS_SEC); /* time-sharing one GPU: 2 h */
    rm(&w);
}

/* Average JCT of 24 one-GPU jobs (12 resnet50-bs64: ~7x slower on K80 than V100; 12 a3c: ~2x)
 * arriving over the first hour on 4 V100 + 4 P100 + 4 K80 GPUs, under gavel with 'sets'. */
static double hetero_avg_jct(const char *const *sets)
{
    world w;
    if (mk(&w, "4:V100,4:P100,4:K80", sets, gs_lp_glpk())) return -1;
    for (int i = 1; i <= 24; i++)
        if (add(&w, i, 150.0 * i, 3600.0 * (1 + i % 3), 1, i % 2 ? "resnet50-bs64" : "a3c"))
            return -1;
    if (gs_engine_run(w.e)) return -1;
    double sum = 0;
    for (int i = 1; i <= 24; i++) {
        const gs_job *j = gs_engine_find_job(w.e, i);
        if (j->state != GS_JOB_DONE) return -1;
        sum += (double)(j->end - j->submit) / GS_SEC;
    }
    rm(&w);
    return sum / 24;
}

/* Heterogeneity-aware LAS gives the V100s to the jobs they speed up most: a lower average JCT
 * than the agnostic LP (every type at the V100's rate), on the same jobs and seed. */
static void test_hetero_aware_beats_agnostic(void)
{
    const char *aware[] = {"hetero=aware", NULL}, *agn[] = {"hetero=agnostic", NULL};
    double a = hetero_avg_jct(aware), b = hetero_avg_jct(agn);
    fprintf(stderr, "  avg JCT: aware %.0f s, agnostic %.0f s (%.2fx)\n", a, b, b / a);
    ASSERT(a > 0 && b > 0);
    ASSERT(a * 1.1 < b);
}

/*
 * A gang larger than every GPU type (review R7): 64 GPUs on 36 V100 + 36 P100 + 36 K80.  Gavel
 * places a job on one type, so the job is rejected on arrival with the reason, the 1-GPU job
 * beside it runs, and the run ends (it failed with an internal error, and with
 * objective=fifo it never ended).  A job larger than the whole cluster is rejected too.
 */
static void test_gang_larger_than_a_type(void)
{
    const char *objs[] = {"objective=las", "hetero=agnostic",    "objective=fifo",
                          "objective=ftf", "objective=makespan", "objective=throughput"};
    for (size_t o = 0; o < sizeof objs / sizeof *objs; o++) {
        world w;
        const char *sets[] = {objs[o], NULL};
        ASSERT_OK(mk(&w, "36:V100,36:P100,36:K80", sets, gs_lp_glpk()));
        for (int i = 1; i <= 3; i++) { /* one GPU per task: a gang may span nodes */
            gs_job_spec s;
            gs_job_spec_init(&s);
            s.id = i;
            s.submit = (i == 3 ? 10 : 0) * GS_SEC;
            s.ntasks = i == 1 ? 64 : i == 2 ? 1 : 200;
            s.duration = 100 * GS_SEC;
            ASSERT_OK(gs_engine_add_job(w.e, &s, NULL, NULL));
        }
        ASSERT_OK(run_until(&w, 1e6));
        const gs_job *big = gs_engine_find_job(w.e, 1), *huge = gs_engine_find_job(w.e, 3);
        ASSERT_EQ(big->state, GS_JOB_REJECTED);
        ASSERT(big->reason != NULL);
        ASSERT_CONTAINS(big->reason, "64 GPUs: no GPU type of this cluster has that many");
        ASSERT_CONTAINS(big->reason, "one type");
        ASSERT_EQ(gs_engine_find_job(w.e, 2)->state, GS_JOB_DONE);
        ASSERT_EQ(huge->state, GS_JOB_REJECTED);
        ASSERT_EQ(gs_engine_npending(w.e), 0);
        ASSERT_OK(gs_engine_check(w.e, NULL));
        rm(&w);
    }
}

/*
 * The per-type GPU counts a round uses come from the cluster's cell aggregates (whole
 * single-type subtrees): gv_check compares them with a walk over every GPU.  Two types on
 * racks of mixed nodes, node failures and recoveries while jobs run and wait: every step
 * passes gs_engine_check (the counts agree with the scan), and every job finishes.
 */
static void test_type_counts_follow_failures(void)
{
    world w;
    ASSERT_OK(mk(&w, "3x4:V100,2x4:K80,1x8:V100", NULL, gs_lp_glpk()));
    for (int i = 1; i <= 24; i++)
        ASSERT_OK(add(&w, i, 60.0 * (i % 6), 1800.0 * (1 + i % 4), 1 << (i % 3), "resnet50"));
    ASSERT_OK(gs_engine_add_node_event(w.e, gs_time_from_sec(400), 0, 1));
    ASSERT_OK(gs_engine_add_node_event(w.e, gs_time_from_sec(500), 4, 1));
    ASSERT_OK(gs_engine_add_node_event(w.e, gs_time_from_sec(2000), 0, 0));
    ASSERT_OK(gs_engine_add_node_event(w.e, gs_time_from_sec(3000), 4, 0));
    int rc, steps = 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    while ((rc = gs_engine_step(w.e)) > 0) {
        steps++;
        if (gs_engine_check(w.e, &d)) T_FAIL("step %d: %s", steps, d.msg);
    }
    ASSERT_OK(gs_engine_error(w.e));
    for (int i = 1; i <= 24; i++) ASSERT_EQ(gs_engine_find_job(w.e, i)->state, GS_JOB_DONE);
    rm(&w);
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
        {"equal_jobs_equal_shares", test_equal_jobs_equal_shares},
        {"no_solver_message", test_no_solver_message},
        {"shares_converge", test_shares_converge},
        {"weights", test_weights},
        {"lease_extension", test_lease_extension},
        {"deterministic", test_deterministic},
        {"no_solver", test_no_solver},
        {"fifo", test_fifo},
        {"pack", test_pack},
        {"hetero_aware_beats_agnostic", test_hetero_aware_beats_agnostic},
        {"gang_larger_than_a_type", test_gang_larger_than_a_type},
        {"type_counts_follow_failures", test_type_counts_follow_failures},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
