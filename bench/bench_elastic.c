/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_elastic.c - cost of ONE decision of an elastic policy (pollux; afs
 * and any other policy named) for 1,000 active elastic jobs on 2,048 GPUs.
 *
 * usage: bench_elastic [--runs N] [--jobs N] [--cluster NODESxGPUS] [--decisions N]
 *                      [--seed N] [--apps DIR] [POLICY...]
 *
 * Cluster: 256 nodes x 8 GPUs (--cluster).  Workload (seeded, the same for
 * every policy): at t=0 N elastic jobs (default 1,000) arrive, 1 GPU per
 * task, max_gpus 1..64 (half of them 8 or more), min_gpus 1, work long
 * enough that none finishes; no goodput model (linear speedup: the search,
 * not a model, is what is timed).  With --apps DIR (the Pollux application
 * traces, data/pollux/traces) the jobs run the six Pollux applications in
 * turn under the goodput model (their work is the application's, so a few
 * short ones finish), and the decision includes the model's speedup queries.  Engine: parity mode
 * (decisions at every 60 s boundary), rescale_gap=0 (every job may be rescaled at every decision),
 * preempt_cost=30.  Churn: 30 s after each boundary one job is cancelled and a new one arrives, so
 * event-driven policies decide too.
 *
 * Measured: the wall and CPU time of the policy's schedule() call at each
 * boundary after t=0 (and any other pass that started or rescaled a job:
 * event-driven policies).  The first decision that acts (all N pending) is
 * "cold"; the decisions after the 5th
 * (the cluster is full, jobs grew up to their caps and the search exchanges
 * GPUs between them) are "warm".  Printed per policy: median, min and max
 * over runs x decisions, and the mean rescales per decision.  Goal (issue 13):
 * warm median <= 100 ms for pollux.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "gsched/goodput.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "sim.h"

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

/* ---- timing the policy's schedule() ------------------------------------------------------- */

#define MAXPASS 4096
static gs_policy_ops timed_ops;
static int (*inner_schedule)(void *st);
static gs_engine *cur_engine;
static double pass_s[MAXPASS], pass_cpu[MAXPASS];
static gs_time pass_t[MAXPASS];
static int pass_resc[MAXPASS];
static int npass;
static int drains; /* DRAIN records so far */
static int starts; /* START records so far */
static int pass_acted[MAXPASS];

static int timed_schedule(void *st)
{
    int d0 = drains, s0 = starts;
    double c0 = cpu_s(), t0 = now_s();
    int rc = inner_schedule(st);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    if (npass < MAXPASS) {
        pass_t[npass] = gs_engine_now(cur_engine);
        pass_cpu[npass] = dc;
        pass_resc[npass] = drains - d0;
        pass_acted[npass] = drains != d0 || starts != s0;
        pass_s[npass++] = dt;
    }
    return rc;
}

static void observe(void *ud, const gs_record *r)
{
    (void)ud;
    if (r->type == GS_REC_DRAIN) drains++;
    if (r->type == GS_REC_START) starts++;
}

/* xorshift64*: the bench's own deterministic generator */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static int max_gpus_of(void)
{
    static const int sizes[] = {1, 2, 4, 8, 16, 32, 64};
    static const int weight[] = {10, 15, 25, 20, 15, 10, 5};
    int w = (int)(rnd() % 100), s = 0;
    while (w >= weight[s]) w -= weight[s++];
    return sizes[s];
}

static gs_goodput *model; /* --apps */
static const char *const apps[] = {"cifar10", "imagenet", "bert", "deepspeech2", "yolov3", "ncf"};

static int add(gs_engine *e, int64_t id, gs_time submit)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    if (model) {
        const char *a = apps[rnd() % (sizeof apps / sizeof *apps)];
        s.app = a;
        s.duration = gs_goodput_work(model, gs_goodput_find_app(model, a));
    }
    s.id = id;
    s.ntasks = 1;
    s.gpus_per_task = 1;
    s.min_gpus = 1;
    s.max_gpus = max_gpus_of();
    s.submit = submit;
    if (!model) s.duration = gs_time_from_sec(1e9);
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(e, &s, NULL, &d)) {
        fprintf(stderr, "bench_elastic: job %lld: %s\n", (long long)id, d.msg);
        return -1;
    }
    return 0;
}

typedef struct sample {
    double *cold, *cold_cpu, *warm, *warm_cpu;
    size_t ncold, nwarm;
    double resc;
    size_t nresc;
} sample;

static int run_once(const char *policy, const char *cluster, int njobs, int ndec, uint64_t seed,
                    sample *out)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = NULL;
    if (gs_cluster_parse_shorthand(cluster, &c, &d)) {
        fprintf(stderr, "bench_elastic: cluster %s: %s\n", cluster, d.msg);
        return -1;
    }
    const gs_policy_ops *ops = gs_policy_find(policy);
    if (!ops) {
        fprintf(stderr, "bench_elastic: unknown policy %s\n", policy);
        gs_cluster_destroy(c);
        return -1;
    }
    timed_ops = *ops;
    inner_schedule = ops->schedule;
    timed_ops.schedule = timed_schedule;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "30");
    gs_params_set(&p, "rescale_gap", "0");
    gs_params_set(&p, "elastic_mode", "parity");
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    gs_engine *e = NULL;
    int rc = -1;
    if (gs_engine_create_ops(c, &timed_ops, &p, &eo, &e, &d)) {
        fprintf(stderr, "bench_elastic: %s: %s\n", policy, d.msg);
        goto out;
    }
    gs_engine_set_observer(e, observe, NULL);
    if (model && gs_engine_set_progress(e, gs_goodput_progress_ops(), model)) goto out;
    cur_engine = e;
    npass = 0;
    drains = starts = 0;
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t next_id = 1;
    for (int i = 0; i < njobs; i++)
        if (add(e, next_id++, 0)) goto out;
    const gs_time tick = 60 * GS_SEC;
    for (int k = 1; k <= ndec; k++) {
        /* run through the boundary k*60 s */
        while (gs_engine_next_event_time(e) <= k * tick)
            if (gs_engine_step(e) < 0) goto out;
        /* churn at k*60 + 30 s: one job leaves, one arrives */
        gs_time t = k * tick + tick / 2;
        while (gs_engine_next_event_time(e) < t)
            if (gs_engine_step(e) < 0) goto out;
        size_t nj = gs_engine_njobs(e);
        for (size_t s = 0; s < nj; s++) {
            const gs_job *j = gs_engine_job(e, (nj * 7919u * (size_t)k + s) % nj);
            if (!gs_job_state_final(j->state) && j->state != GS_JOB_DRAINING) {
                if (gs_engine_cancel(e, j, "bench churn", gs_engine_now(e)) < 0) goto out;
                break;
            }
        }
        if (add(e, next_id++, t)) goto out;
    }
    /* decisions: the passes at the boundaries (t > 0) and the passes that acted (started or
     * rescaled a job: event-driven policies); cold = the first that acted, warm = those
     * after the 5th boundary */
    int cold = 0;
    for (int i = 0; i < npass; i++) {
        int at_tick = pass_t[i] > 0 && pass_t[i] % tick == 0;
        if (!at_tick && !pass_acted[i]) continue;
        if (!cold && pass_acted[i]) {
            cold = 1;
            out->cold[out->ncold] = pass_s[i];
            out->cold_cpu[out->ncold++] = pass_cpu[i];
        } else if (pass_t[i] > 5 * tick) {
            out->warm[out->nwarm] = pass_s[i];
            out->warm_cpu[out->nwarm++] = pass_cpu[i];
            out->resc += pass_resc[i];
            out->nresc++;
        }
    }
    if (gs_engine_check(e, &d)) {
        fprintf(stderr, "bench_elastic: %s: check: %s\n", policy, d.msg);
        goto out;
    }
    rc = 0;
out:
    gs_engine_destroy(e);
    gs_params_release(&p);
    gs_cluster_destroy(c);
    return rc;
}

static void stats(const char *what, double *v, size_t n)
{
    if (!n) {
        printf("  %-6s no decisions\n", what);
        return;
    }
    qsort(v, n, sizeof *v, cmp_d);
    printf("  %-6s median %8.2f ms   min %8.2f   max %8.2f   (%zu decisions)\n", what,
           v[n / 2] * 1e3, v[0] * 1e3, v[n - 1] * 1e3, n);
}

int main(int argc, char **argv)
{
    int runs = 5, njobs = 1000, ndec = 12;
    uint64_t seed = 1;
    const char *cluster = "256x8", *appdir = NULL;
    const char *policies[16];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            njobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--decisions") && i + 1 < argc)
            ndec = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
            cluster = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--apps") && i + 1 < argc)
            appdir = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: bench_elastic [--runs N] [--jobs N] [--cluster NODESxGPUS] "
                            "[--decisions N] [--seed N] [--apps DIR] [POLICY...]\n");
            return 2;
        } else if (np < 16)
            policies[np++] = argv[i];
    }
    if (runs < 1) runs = 1;
    if (njobs < 1) njobs = 1;
    if (ndec < 7) ndec = 7;
    if (!np) {
        policies[np++] = "pollux";
        if (gs_policy_find("afs")) policies[np++] = "afs";
    }
    if (appdir) {
        gs_diag d;
        gs_diag_init(&d, NULL);
        char path[4096];
        int rc = gs_goodput_create(&model);
        for (size_t a = 0; !rc && a < sizeof apps / sizeof *apps; a++) {
            snprintf(path, sizeof path, "%s/%s", appdir, apps[a]);
            rc = gs_pollux_load_app(model, path, apps[a], &d);
            if (rc > 0) rc = 0;
        }
        if (!rc) rc = gs_goodput_finish(model, &d);
        if (rc) {
            fprintf(stderr, "bench_elastic: --apps %s: %s\n", appdir, d.msg);
            return 1;
        }
    }
    printf("bench_elastic: %d elastic jobs (max_gpus 1..64, %s) on %s GPUs, "
           "decisions every 60 s, %d decisions per run, %d runs\n",
           njobs, model ? "Pollux applications, goodput model" : "linear speedup", cluster, ndec,
           runs);
    int fail = 0;
    for (int k = 0; k < np; k++) {
        size_t cap = (size_t)runs * MAXPASS;
        sample s = {0};
        s.cold = calloc(cap, sizeof(double));
        s.cold_cpu = calloc(cap, sizeof(double));
        s.warm = calloc(cap, sizeof(double));
        s.warm_cpu = calloc(cap, sizeof(double));
        if (!s.cold || !s.cold_cpu || !s.warm || !s.warm_cpu) return 1;
        for (int r = 0; r < runs; r++)
            if (run_once(policies[k], cluster, njobs, ndec, seed + (uint64_t)r, &s)) fail = 1;
        printf("%s:\n", policies[k]);
        stats("cold", s.cold, s.ncold);
        stats("warm", s.warm, s.nwarm);
        stats("cpu", s.warm_cpu, s.nwarm);
        printf("  rescales per warm decision: %.1f\n", s.nresc ? s.resc / (double)s.nresc : 0.0);
        free(s.cold);
        free(s.cold_cpu);
        free(s.warm);
        free(s.warm_cpu);
    }
    gs_goodput_destroy(model);
    return fail;
}
