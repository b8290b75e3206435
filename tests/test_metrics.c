/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_metrics.c - the fairness and queueing metrics of a run (docs/metrics.md) on traces
 * small enough to compute by hand: ideal duration, slowdown, finish-time fairness rho with
 * its n-bar, Jain's index, the honest queue time (pending + time-sliced out) against the
 * pending-only figure, the busy-window utilisation, and the per-user / per-size breakdowns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "sim.h"
#include "sim_run.h"

static const char *const EXACT[] = {"slowdown=off", "preempt_cost=0", NULL};

/* Write 'text' to a scratch trace and run 'policy' on 'cluster'. */
static int run_text(const char *text, const char *cluster, const char *policy,
                    const char *const *sets, gs_sim_result *r)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gsched-metrics-%d.csv", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    int rc = sim_run(cluster, path, policy, GS_PLACE_CONSOLIDATE, sets, r);
    remove(path);
    return rc;
}

static const gs_job_metrics *jm_of(const gs_sim_result *r, int64_t id)
{
    const gs_job *j = gs_engine_find_job(r->engine, id);
    return j ? &r->jm[j->slot] : NULL;
}

static void t_jain(void)
{
    const double eq[] = {2, 2, 2, 2}, one[] = {5, 0, 0, 0}, two[] = {1, 3};
    ASSERT_NEAR(gs_jain(eq, 4), 1.0, 1e-12);
    ASSERT_NEAR(gs_jain(one, 4), 0.25, 1e-12);
    ASSERT_NEAR(gs_jain(two, 2), 16.0 / 20.0, 1e-12); /* (1+3)^2 / (2 (1+9)) */
    ASSERT_NEAR(gs_jain(NULL, 0), 0.0, 0);
}

/*
 * 8 GPUs, fifo.  A (6 GPUs, 100 s) at 0; B (4 GPUs, 10 s) at 1 waits for A; C (2 GPUs, 10 s)
 * at 2 waits behind B (strict FIFO).  Both start at 100 and end at 110.
 * Jobs in the system: 1 on [0,1), 2 on [1,2), 3 on [2,100), 2 on [100,110).
 *   A: n-bar = (1 + 2 + 98*3) / 100 = 2.97, share 6*2.97/8 = 2.2275, rho = 100 / 222.75
 *   B: n-bar = (2 + 294 + 20) / 109, share 4 n-bar / 8 = 1.4495..., rho = 109 / (10 share)
 *   C: n-bar = (294 + 20) / 108, share 2 n-bar / 8 < 1, rho = slowdown = 108 / 10
 */
static void t_rho_by_hand(void)
{
    gs_sim_result r;
    ASSERT_OK(run_text("submit,duration,gpus\n0,100,6\n1,10,4\n2,10,2\n", "8", "fifo", EXACT, &r));
    ASSERT_EQ(r.jobs_done, 3);
    const gs_job_metrics *a = jm_of(&r, 0), *b = jm_of(&r, 1), *c = jm_of(&r, 2);
    ASSERT(a && b && c);
    ASSERT_EQ(a->ideal, 100 * GS_SEC);
    ASSERT_EQ(b->ideal, 10 * GS_SEC);
    ASSERT_NEAR(a->nbar, 2.97, 1e-12);
    ASSERT_NEAR(b->nbar, 316.0 / 109, 1e-12);
    ASSERT_NEAR(c->nbar, 314.0 / 108, 1e-12);
    ASSERT_NEAR(a->slowdown, 1.0, 1e-12);
    ASSERT_NEAR(b->slowdown, 10.9, 1e-12);
    ASSERT_NEAR(c->slowdown, 10.8, 1e-12);
    ASSERT_NEAR(a->rho, 100 / 222.75, 1e-12);
    ASSERT_NEAR(b->rho, 109 / (10 * 4 * (316.0 / 109) / 8), 1e-12);
    ASSERT_NEAR(c->rho, 10.8, 1e-12);
    double rho[3] = {a->rho, b->rho, c->rho};
    ASSERT_NEAR(r.avg_rho, round((rho[0] + rho[1] + rho[2]) / 3 * 1e6) / 1e6, 1e-9);
    ASSERT_NEAR(r.max_rho, 10.8, 1e-9);
    ASSERT_NEAR(r.p95_rho, 10.8, 1e-9); /* sorted[floor(0.95 * 3)] */
    ASSERT_NEAR(r.jain_rho, round(gs_jain(rho, 3) * 1e6) / 1e6, 1e-9);
    ASSERT_NEAR(r.avg_slowdown, round((1 + 10.9 + 10.8) / 3 * 1e6) / 1e6, 1e-9);
    ASSERT_NEAR(r.median_slowdown, 10.8, 1e-9);
    ASSERT_NEAR(r.p95_slowdown, 10.9, 1e-9);
    /* no suspension: the queue time is the pending time */
    ASSERT_NEAR(r.avg_queue_s, (0 + 99 + 98) / 3.0, 1e-3);
    ASSERT_NEAR(r.avg_pending_s, r.avg_queue_s, 0);
    ASSERT_NEAR(r.median_pending_s, 98, 0);
    gs_sim_result_release(&r);
}

/* Jobs arriving and ending at one instant are counted exactly; a rejected job never is. */
static void t_nbar_ties_and_rejections(void)
{
    gs_sim_result r;
    /* 4 GPUs: two 2-GPU jobs of 100 s at 0 (both run at once), a 64-GPU job rejected at 0,
     * a 4-GPU job of 50 s at 100 (starts when both end) */
    ASSERT_OK(run_text("submit,duration,gpus\n0,100,2\n0,100,2\n0,10,64\n100,50,4\n", "4", "fifo",
                       EXACT, &r));
    ASSERT_EQ(r.jobs_rejected, 1);
    const gs_job_metrics *a = jm_of(&r, 0), *d = jm_of(&r, 3);
    ASSERT_NEAR(a->nbar, 2.0, 1e-12); /* itself and its twin; not the rejected one */
    ASSERT_NEAR(a->rho, 1.0, 1e-12);  /* share 2*2/4 = 1 */
    ASSERT_NEAR(d->nbar, 1.0, 1e-12); /* the two others end at its arrival */
    ASSERT_NEAR(d->slowdown, 1.0, 1e-12);
    ASSERT_NEAR(jm_of(&r, 2)->rho, 0.0, 0); /* rejected: no JCT, no rho */
    ASSERT_EQ(jm_of(&r, 2)->ideal, 10 * GS_SEC);
    ASSERT_NEAR(r.jain_rho, 1.0, 1e-9);
    gs_sim_result_release(&r);
}

/*
 * Busy window = [first arrival, last arrival].  4 GPUs: a (2 GPUs, 100 s) at 0, b (4 GPUs,
 * 100 s) at 50 waits until 100.  Over the makespan [0, 200]: (2*100 + 4*100) / (4*200) =
 * 0.75; over [0, 50]: 2*50 / (4*50) = 0.5.
 */
static void t_busy_util(void)
{
    gs_sim_result r;
    ASSERT_OK(run_text("submit,duration,gpus\n0,100,2\n50,100,4\n", "4", "fifo", EXACT, &r));
    ASSERT_NEAR(r.gpu_util, 0.75, 1e-9);
    ASSERT_NEAR(r.gpu_util_busy, 0.5, 1e-9);
    ASSERT_EQ(r.busy_from, 0);
    ASSERT_EQ(r.busy_to, 50 * GS_SEC);
    ASSERT_NEAR(gs_sim_util_over(&r, 100 * GS_SEC, 200 * GS_SEC), 1.0, 1e-9);
    ASSERT_NEAR(gs_sim_util_over(&r, 50 * GS_SEC, 50 * GS_SEC), 0.0, 0);
    gs_sim_result_release(&r);
    /* every job at one instant: the window is the makespan's */
    ASSERT_OK(run_text("submit,duration,gpus\n0,100,2\n0,100,4\n", "4", "fifo", EXACT, &r));
    ASSERT_EQ(r.busy_to, 200 * GS_SEC);
    ASSERT_NEAR(r.gpu_util_busy, r.gpu_util, 0);
    gs_sim_result_release(&r);
}

/*
 * Per user and per size.  4 GPUs, fifo: alice's 4-GPU job (100 s) at 0; bob's 1-GPU job
 * (10 s) at 0 waits 100 s (slowdown 11); alice's 1-GPU job (10 s) at 200 runs at once.
 * Users' average slowdowns: alice 1, bob 11 -> Jain (12)^2 / (2 * 122).
 */
static void t_breakdowns(void)
{
    gs_sim_result r;
    ASSERT_OK(run_text("submit,duration,gpus,user\n0,100,4,alice\n0,10,1,bob\n200,10,1,alice\n",
                       "4", "fifo", EXACT, &r));
    ASSERT_EQ(r.nusers, 2);
    ASSERT_STR(r.users[0].name, "alice");
    ASSERT_STR(r.users[1].name, "bob");
    ASSERT_EQ(r.users[0].jobs, 2);
    ASSERT_EQ(r.users[0].done, 2);
    ASSERT_NEAR(r.users[0].avg_slowdown, 1.0, 1e-9);
    ASSERT_NEAR(r.users[1].avg_slowdown, 11.0, 1e-9);
    ASSERT_NEAR(r.users[1].avg_queue_s, 100, 1e-9);
    ASSERT_NEAR(r.users[0].gpu_h, round((400 + 10) / 3600.0 * 1e3) / 1e3, 1e-9);
    ASSERT_NEAR(r.jain_user_slowdown, round(144.0 / 244 * 1e6) / 1e6, 1e-9);
    ASSERT_EQ(r.nsizes, 2);
    ASSERT_EQ(r.sizes[0].gpus, 1); /* ascending */
    ASSERT_EQ(r.sizes[1].gpus, 4);
    ASSERT_EQ(r.sizes[0].jobs, 2);
    ASSERT_NEAR(r.sizes[0].avg_slowdown, 6.0, 1e-9);
    ASSERT_NEAR(r.sizes[0].median_slowdown, 6.0, 1e-9);
    ASSERT_NEAR(r.sizes[0].p95_slowdown, 11.0, 1e-9);
    ASSERT_NEAR(r.sizes[0].max_rho, 11.0, 1e-9); /* bob: share 1*2/4 < 1 */
    ASSERT_NEAR(r.sizes[1].avg_jct_s, 100, 1e-9);
    gs_sim_result_release(&r);
}

/* Sum of jct, queue and executed over DONE jobs, and of the suspended time. */
static void queue_identity(const gs_sim_result *r, double *suspended)
{
    *suspended = 0;
    for (size_t i = 0; i < gs_engine_njobs(r->engine); i++) {
        const gs_job *j = gs_engine_job(r->engine, i);
        if (j->state != GS_JOB_DONE) continue;
        /* everything a job's life is not spent holding GPUs is queue time */
        if (r->jm[i].queue + j->executed != j->end - j->submit)
            T_FAIL("job %lld: queue %lld + executed %lld != jct %lld", (long long)j->id,
                   (long long)r->jm[i].queue, (long long)j->executed,
                   (long long)(j->end - j->submit));
        if (r->jm[i].queue != j->queued + j->suspended) T_FAIL("job %lld", (long long)j->id);
        *suspended += gs_time_to_sec(j->suspended);
    }
}

/*
 * Gandiva time-slices over-subscribed GPUs (suspend/resume): the time a job spends sliced
 * out is queue time.  The figure: the 1-day Philly window under gandiva's defaults
 * showed 773 s of average queue (pending only) while jobs also spent 1,581 s per job
 * time-sliced out.
 */
static void t_gandiva_queue(void)
{
    gs_sim_result r;
    ASSERT_OK(sim_run(test_src("data/philly-1day/n32g8_2sw.csv"),
                      test_src("data/philly-1day/philly_20171002_tiresias.csv"), "gandiva",
                      GS_PLACE_CONSOLIDATE, NULL, &r));
    ASSERT_EQ(r.jobs_done, 1353);
    ASSERT(r.mech[GS_MECH_SUSPEND] > 0);
    double susp = 0;
    queue_identity(&r, &susp);
    ASSERT_NEAR(r.avg_pending_s, 773.276, 1e-3);
    ASSERT_NEAR(susp / 1353, 1580.6, 0.05);
    ASSERT_NEAR(r.avg_queue_s, 2353.894, 1e-3);
    ASSERT(r.avg_queue_s > r.avg_pending_s);
    ASSERT(r.median_queue_s > r.median_pending_s);
    ASSERT_NEAR(r.vcs[0].avg_queue_s, r.avg_queue_s, 0);
    gs_sim_result_release(&r);
    /* a preemptive policy: requeued time is pending, so both figures agree */
    ASSERT_OK(sim_run(test_src("data/philly-1day/n32g8_2sw.csv"),
                      test_src("data/philly-1day/philly_20171002_tiresias.csv"), "tiresias-las",
                      GS_PLACE_CONSOLIDATE, NULL, &r));
    ASSERT(r.preemptions > 0);
    queue_identity(&r, &susp);
    ASSERT_NEAR(susp, 0, 0);
    ASSERT_NEAR(r.avg_queue_s, r.avg_pending_s, 0);
    gs_sim_result_release(&r);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Thousands of jobs (the radix-sorted path and the occupancy's search hints): percentiles
 * equal those of a plain sort of the per-job values, and n-bar equals a brute-force integral
 * of the jobs in the system for a sample of jobs.
 */
static void t_many_jobs(void)
{
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    ASSERT(text);
    len += (size_t)snprintf(text + len, cap - len, "submit,duration,gpus,user\n");
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 9000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        len += (size_t)snprintf(text + len, cap - len, "%d,%d,%d,u%d\n", i * 7 + (int)(x % 5),
                                20 + (int)(x % 3000), 1 << (int)(x % 4), (int)(x % 37));
    }
    gs_sim_result r;
    ASSERT_OK(run_text(text, "4x8", "tiresias-las", NULL, &r));
    free(text);
    size_t n = gs_engine_njobs(r.engine), k = 0;
    ASSERT_EQ(r.jobs_done, n);
    double *sd = malloc(n * sizeof *sd), *q = malloc(n * sizeof *q);
    ASSERT(sd && q);
    for (size_t i = 0; i < n; i++) {
        sd[k] = r.jm[i].slowdown;
        q[k++] = gs_time_to_sec(r.jm[i].queue);
    }
    qsort(sd, k, sizeof *sd, cmp_dbl);
    qsort(q, k, sizeof *q, cmp_dbl);
    ASSERT_NEAR(r.p95_slowdown, round(sd[(size_t)(0.95 * (double)k)] * 1e6) / 1e6, 0);
    ASSERT_NEAR(r.median_slowdown, round((sd[k / 2 - 1] + sd[k / 2]) / 2 * 1e6) / 1e6, 0);
    ASSERT_NEAR(r.median_queue_s, round((q[k / 2 - 1] + q[k / 2]) / 2 * 1e3) / 1e3, 0);
    free(sd);
    free(q);
    for (size_t s = 0; s < n; s += 397) {
        const gs_job *j = gs_engine_job(r.engine, s);
        double area = 0; /* job-seconds of every job's overlap with [submit, end) */
        for (size_t i = 0; i < n; i++) {
            const gs_job *o = gs_engine_job(r.engine, i);
            gs_time a = o->submit > j->submit ? o->submit : j->submit;
            gs_time b = o->end < j->end ? o->end : j->end;
            if (b > a) area += (double)(b - a);
        }
        ASSERT_NEAR(r.jm[s].nbar, area / (double)(j->end - j->submit), 1e-9);
    }
    gs_sim_result_release(&r);
}

static char *slurp(const char *path)
{
    char *b;
    size_t n;
    gs_diag d;
    gs_diag_init(&d, path);
    return gs_read_file(path, &b, &n, &d) ? NULL : b;
}

/*
 * Two GPU types: the ideal duration is the job's work at the best type's rate (V100, the
 * reference, here), so a job run on K80s has a slowdown of the profiles' V100/K80 ratio;
 * jobs.csv names the type(s) a job ran on, '+'-joined for a gang over both.
 */
static void t_gpu_types(void)
{
    gs_sim_result r;
    /* 4 V100 + 4 K80: a 4-GPU job takes the V100s, the next the K80s; then a 6-GPU gang
     * spans both types */
    ASSERT_OK(run_text("submit,duration,gpus,model\n0,1000,4,resnet50\n0,1000,4,resnet50\n"
                       "1,1000,6,resnet50\n",
                       "1x4:V100,1x4:K80", "fifo", NULL, &r));
    const gs_job_metrics *a = jm_of(&r, 0), *b = jm_of(&r, 1);
    ASSERT_EQ(a->ideal, 1000 * GS_SEC);
    ASSERT_EQ(b->ideal, 1000 * GS_SEC);
    ASSERT_NEAR(a->slowdown, 1.0, 1e-9);
    const gs_job *jb = gs_engine_find_job(r.engine, 1);
    double ratio = gs_engine_job_rate(r.engine, jb, 0, 4) / gs_engine_job_rate(r.engine, jb, 1, 4);
    ASSERT(ratio > 1.5);
    ASSERT_NEAR(b->slowdown, ratio, 1e-3);
    char f[128];
    snprintf(f, sizeof f, "/tmp/gsched-metrics-types-%d.csv", (int)getpid());
    ASSERT_OK(gs_write_jobs(f, &r));
    char *s = slurp(f);
    ASSERT(s);
    ASSERT_CONTAINS(s, ",resnet50,-,V100\n");
    ASSERT_CONTAINS(s, ",resnet50,-,K80\n");
    ASSERT_CONTAINS(s, ",resnet50,-,V100+K80\n");
    free(s);
    remove(f);
    gs_sim_result_release(&r);
}

/* The writers carry the new columns and sections. */
static void t_outputs(void)
{
    gs_sim_result r;
    ASSERT_OK(run_text("submit,duration,gpus,user,model\n0,100,4,alice,resnet50\n0,10,1,bob,\n",
                       "4:V100", "fifo", EXACT, &r));
    char p[160];
    snprintf(p, sizeof p, "/tmp/gsched-metrics-out-%d", (int)getpid());
    gs_sim_result *rp = &r;
    char f[200];
    snprintf(f, sizeof f, "%s-jobs.csv", p);
    ASSERT_OK(gs_write_jobs(f, &r));
    char *s = slurp(f);
    ASSERT(s);
    ASSERT_CONTAINS(s, ",pending_s,ideal_s,slowdown,rho,model,user,gpu_type\n");
    ASSERT_CONTAINS(s, ",0,100,1.000000,0.500000,resnet50,alice,V100\n" /* n-bar 2: share 2 */);
    ASSERT_CONTAINS(s, ",100,10,11.000000,11.000000,-,bob,V100\n");
    free(s);
    remove(f);
    snprintf(f, sizeof f, "%s-summary.json", p);
    ASSERT_OK(gs_write_summary(f, &r, NULL));
    s = slurp(f);
    ASSERT(s);
    ASSERT_CONTAINS(s, "\"avg_pending_s\": 50.0");
    ASSERT_CONTAINS(s, "\"max_rho\": 11.0");
    ASSERT_CONTAINS(s, "\"users\": [");
    ASSERT_CONTAINS(s, "\"user\": \"bob\"");
    ASSERT_CONTAINS(s, "\"sizes\": [");
    free(s);
    remove(f);
    snprintf(f, sizeof f, "%s-users.csv", p);
    ASSERT_OK(gs_write_users(f, &rp, 1));
    s = slurp(f);
    ASSERT(s);
    ASSERT_CONTAINS(s, "policy,user,jobs,jobs_done,");
    ASSERT_CONTAINS(s, "\nfifo,bob,1,1,0,");
    free(s);
    remove(f);
    snprintf(f, sizeof f, "%s-sizes.csv", p);
    ASSERT_OK(gs_write_sizes(f, &rp, 1));
    s = slurp(f);
    ASSERT(s);
    ASSERT_CONTAINS(s, "\nfifo,1,1,1,0,0.003,110.000,100.000,11.000000,");
    free(s);
    remove(f);
    snprintf(f, sizeof f, "%s-compare.csv", p);
    ASSERT_OK(gs_write_compare(f, &rp, 1));
    s = slurp(f);
    ASSERT(s);
    ASSERT_CONTAINS(s, ",avg_pending_s,avg_slowdown,p95_slowdown,avg_rho,p95_rho,max_rho,jain_rho,"
                       "jain_user_slowdown,gpu_util_busy\n");
    free(s);
    remove(f);
    gs_sim_result_release(&r);
}

static const test_case tests[] = {
    {"jain", t_jain},
    {"rho_by_hand", t_rho_by_hand},
    {"nbar_ties_and_rejections", t_nbar_ties_and_rejections},
    {"busy_util", t_busy_util},
    {"breakdowns", t_breakdowns},
    {"gandiva_queue", t_gandiva_queue},
    {"many_jobs", t_many_jobs},
    {"outputs", t_outputs},
    {"gpu_types", t_gpu_types},
};

TEST_MAIN(tests)
