/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_gavel.c - cost of ONE Gavel round (the LP solve through GLPK plus the round
 * mechanism: priorities, selection, placement, preemptions and starts) for 1,000 active
 * jobs on a 3-type, 2,048-GPU cluster.
 *
 * usage: bench_gavel [--runs N] [--rounds N] [--jobs N] [--cluster SPEC] [--seed N]
 *                    [PARAMS...]
 *
 * Cluster (--cluster): 86x8:V100,85x8:P100,85x8:K80 (688 + 680 + 680 = 2,048 GPUs).
 * Workload (seeded, the same for every PARAMS): N jobs (default 1,000) arrive at t=0 with
 * Gavel's generator mix (algorithms.md §5.9: 70/10/15/5 % of 1/2/4/8 GPUs, durations
 * 10^U(1.5,3) min w.p. 0.8 else 10^U(3,4) min, models uniformly from Gavel's 26 job types),
 * and one more job every 60 s, so every round re-solves the LP (jobs arrived) and some jobs
 * finish.  Each PARAMS is a comma-separated list of gavel parameters (default
 * "objective=las"; e.g. objective=ftf, objective=makespan, objective=las,pack=on).
 *
 * Measured: the wall and CPU time of every pass of gavel's schedule() that ran a round
 * (the inspect key 'rounds' moved); the first round (every job pending, all start) is
 * "cold", the later ones "warm".  Printed per PARAMS: median, min and max over runs x
 * rounds.  Goal (issue 15): warm median <= 50 ms for objective=las.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "sim.h"
#include "solver.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- timing gavel's schedule() -------------------------------------------------------------- */

#define MAXPASS 4096
static gs_policy_ops timed_ops;
static int (*inner_schedule)(void *st);
static gs_engine *cur_engine;
static double pass_s[MAXPASS], pass_cpu[MAXPASS];
static int npass;

static long rounds_of(const gs_engine *e)
{
    char buf[32];
    return gs_engine_inspect(e, "rounds", buf, sizeof buf) ? -1 : atol(buf);
}

static int timed_schedule(void *st)
{
    long r0 = rounds_of(cur_engine);
    double c0 = cpu_s(), t0 = now_s();
    int rc = inner_schedule(st);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    if (rounds_of(cur_engine) != r0 && npass < MAXPASS) {
        pass_cpu[npass] = dc;
        pass_s[npass++] = dt;
    }
    return rc;
}

/* ---- the workload ------------------------------------------------------------------------------
 */

static const char *const models[] = {"a3c",
                                     "cyclegan",
                                     "lm-bs5",
                                     "lm-bs10",
                                     "lm-bs20",
                                     "lm-bs40",
                                     "lm-bs80",
                                     "recommendation-bs512",
                                     "recommendation-bs1024",
                                     "recommendation-bs2048",
                                     "recommendation-bs4096",
                                     "recommendation-bs8192",
                                     "resnet18-bs16",
                                     "resnet18-bs32",
                                     "resnet18-bs64",
                                     "resnet18-bs128",
                                     "resnet18-bs256",
                                     "resnet50-bs16",
                                     "resnet50-bs32",
                                     "resnet50-bs64",
                                     "resnet50-bs128",
                                     "transformer-bs16",
                                     "transformer-bs32",
                                     "transformer-bs64",
                                     "transformer-bs128",
                                     "transformer-bs256"};

static int add(gs_engine *e, gs_rng *r, int64_t id, gs_time submit)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    double u = gs_rng_double(r) * 100;
    int gpus = u < 70 ? 1 : u < 80 ? 2 : u < 95 ? 4 : 8;
    double lo = 1.5, hi = 3;
    if (gs_rng_double(r) >= 0.8) lo = 3, hi = 4;
    double minutes = pow(10, lo + (hi - lo) * gs_rng_double(r));
    s.id = id;
    s.ntasks = 1;
    s.gpus_per_task = gpus;
    s.submit = submit;
    s.duration = (gs_time)(minutes * 60 * GS_SEC);
    s.model = models[gs_rng_below(r, sizeof models / sizeof *models)];
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(e, &s, NULL, &d)) {
        fprintf(stderr, "bench_gavel: job %lld: %s\n", (long long)id, d.msg);
        return -1;
    }
    return 0;
}

/* One run: returns 0 and appends its round times (cold first) to the samples. */
static int run(const char *cluster, const char *params, int njobs, int rounds, uint64_t seed,
               double *cold, double *cold_cpu, size_t *ncold, double *warm, double *warm_cpu,
               size_t *nwarm)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = NULL;
    if (gs_cluster_load(cluster, &c, &d)) {
        fprintf(stderr, "bench_gavel: %s\n", d.msg);
        return -1;
    }
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "preempt_cost", "0");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", params);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save))
        if (gs_params_set_kv(&p, kv)) {
            fprintf(stderr, "bench_gavel: bad parameter '%s'\n", kv);
            return -1;
        }
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.lp = gs_lp_glpk();
    eo.seed = seed;
    const gs_policy_ops *ops = gs_policy_find("gavel");
    timed_ops = *ops;
    inner_schedule = ops->schedule;
    timed_ops.schedule = timed_schedule;
    gs_engine *e = NULL;
    if (gs_engine_opts_from_params(&p, &eo, &d) ||
        gs_engine_create_ops(c, &timed_ops, &p, &eo, &e, &d)) {
        fprintf(stderr, "bench_gavel: %s\n", d.msg);
        return -1;
    }
    cur_engine = e;
    gs_rng r;
    gs_rng_seed(&r, seed);
    int64_t id = 1;
    for (int i = 0; i < njobs; i++)
        if (add(e, &r, id++, 0)) return -1;
    gs_time end = (gs_time)rounds * 360 * GS_SEC;
    for (gs_time t = 60 * GS_SEC; t < end; t += 60 * GS_SEC)
        if (add(e, &r, id++, t)) return -1;
    npass = 0;
    int rc;
    while (gs_engine_now(e) < end && (rc = gs_engine_step(e)) > 0) {
    }
    if (gs_engine_error(e)) {
        fprintf(stderr, "bench_gavel: engine error %s\n", gs_strerror(gs_engine_error(e)));
        return -1;
    }
    for (int i = 0; i < npass; i++) {
        if (i == 0) {
            cold[*ncold] = pass_s[i] * 1e3;
            cold_cpu[(*ncold)++] = pass_cpu[i] * 1e3;
        } else {
            warm[*nwarm] = pass_s[i] * 1e3;
            warm_cpu[(*nwarm)++] = pass_cpu[i] * 1e3;
        }
    }
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_params_release(&p);
    return 0;
}

static void stats(const char *what, double *v, double *cpu, size_t n)
{
    if (!n) return;
    qsort(v, n, sizeof *v, cmp_d);
    qsort(cpu, n, sizeof *cpu, cmp_d);
    printf("    %-5s %4zu rounds: median %8.2f ms (cpu %8.2f ms)  min %8.2f  max %8.2f\n", what, n,
           v[n / 2], cpu[n / 2], v[0], v[n - 1]);
}

int main(int argc, char **argv)
{
    int runs = 5, rounds = 10, njobs = 1000;
    uint64_t seed = 1;
    const char *cluster = "86x8:V100,85x8:P100,85x8:K80";
    const char *sets[32];
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            njobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
            cluster = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] == '-') {
            fprintf(stderr,
                    "usage: bench_gavel [--runs N] [--rounds N] [--jobs N] [--cluster SPEC] "
                    "[--seed N] [PARAMS...]\n");
            return 2;
        } else if (nsets < 32)
            sets[nsets++] = argv[i];
    }
    if (!gs_lp_glpk()) {
        fprintf(stderr, "bench_gavel: built without GLPK\n");
        return 1;
    }
    if (!nsets) sets[nsets++] = "objective=las";
    if (runs < 1 || rounds < 2 || njobs < 1) return 2;
    printf("bench_gavel: %d jobs (+1 per minute), cluster %s, %d runs x %d rounds\n", njobs,
           cluster, runs, rounds);
    size_t cap = (size_t)runs * MAXPASS;
    double *cold = malloc(cap * sizeof *cold), *cold_cpu = malloc(cap * sizeof *cold_cpu);
    double *warm = malloc(cap * sizeof *warm), *warm_cpu = malloc(cap * sizeof *warm_cpu);
    if (!cold || !cold_cpu || !warm || !warm_cpu) return 1;
    for (int s = 0; s < nsets; s++) {
        size_t ncold = 0, nwarm = 0;
        for (int k = 0; k < runs; k++)
            if (run(cluster, sets[s], njobs, rounds, seed + (uint64_t)k, cold, cold_cpu, &ncold,
                    warm, warm_cpu, &nwarm))
                return 1;
        printf("  gavel %s\n", sets[s]);
        stats("cold", cold, cold_cpu, ncold);
        stats("warm", warm, warm_cpu, nwarm);
    }
    free(cold), free(cold_cpu), free(warm), free(warm_cpu);
    return 0;
}
