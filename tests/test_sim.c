/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_sim.c - the simulator end to end through the library: fidelity with
 * the Tiresias simulator on the bundled 1-day Philly window, determinism of
 * every output file, rejection counting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "scenario.h"
#include "sim.h"
#include "sim_run.h"

static int run_set(const char *cluster, const char *trace, const char *policy, gs_place_mode m,
                   const char *const *sets, gs_sim_result *r)
{
    /* the Tiresias simulator's model: no placement slowdown, free preemption; then 'sets' */
    const char *all[32] = {"slowdown=off", "preempt_cost=0"};
    size_t n = 2;
    for (; sets && *sets && n + 1 < sizeof all / sizeof *all; sets++) all[n++] = *sets;
    all[n] = NULL;
    return sim_run(cluster, trace, policy, m, all, r);
}

static int run(const char *cluster, const char *trace, const char *policy, gs_place_mode m,
               gs_sim_result *r)
{
    return run_set(cluster, trace, policy, m, NULL, r);
}

#define DAY  "data/philly-1day/philly_20171002_tiresias.csv"
#define SPEC "data/philly-1day/n32g8_2sw.csv"

/* reference numbers: data/philly-1day/reference_results_tiresias_sim.csv */
static void t_fidelity_fifo_count(void)
{
    gs_sim_result r;
    ASSERT_OK(run(test_src(SPEC), test_src(DAY), "fifo", GS_PLACE_COUNT, &r));
    ASSERT_EQ(r.jobs_done, 1353);
    ASSERT(r.avg_jct_s > 12318.9 * 0.995 && r.avg_jct_s < 12318.9 * 1.005);
    /* we match exactly, including the median and p95 */
    ASSERT_NEAR(r.avg_jct_s, 12318.9, 0.05);
    ASSERT_NEAR(r.median_jct_s, 5517.0, 0.001);
    ASSERT_NEAR(r.p95_jct_s, 22329.0, 0.001);
    ASSERT_NEAR(r.avg_queue_s, 3481.3, 0.05);
    ASSERT_NEAR(r.makespan_s, 1139706, 0.001);
    gs_sim_result_release(&r);
}

static void t_fidelity_yarn(void)
{
    gs_sim_result r;
    ASSERT_OK(run(test_src(SPEC), test_src(DAY), "yarn-cs", GS_PLACE_CONSOLIDATE, &r));
    ASSERT(r.avg_jct_s > 13797.7 * 0.99 && r.avg_jct_s < 13797.7 * 1.01);
    ASSERT_NEAR(r.avg_jct_s, 13797.7, 0.05);
    ASSERT_NEAR(r.median_jct_s, 6258.0, 0.001);
    ASSERT_NEAR(r.p95_jct_s, 30431.0, 0.001);
    gs_sim_result_release(&r);
}

static void t_fidelity_backfill(void)
{
    gs_sim_result r;
    ASSERT_OK(run(test_src(SPEC), test_src(DAY), "fifo-backfill", GS_PLACE_COUNT, &r));
    ASSERT_NEAR(r.avg_jct_s, 11456.7, 0.05); /* Tiresias "fjf" with count */
    gs_sim_result_release(&r);
    ASSERT_OK(run(test_src(SPEC), test_src(DAY), "fifo-backfill", GS_PLACE_CONSOLIDATE, &r));
    ASSERT_NEAR(r.avg_jct_s, 11191.9, 0.05); /* Tiresias "fjf" with yarn placement */
    gs_sim_result_release(&r);
}

/* compat mode of the preemptive policies: the Tiresias simulator's queues 3250,7200 */
static void t_fidelity_preemptive(void)
{
    static const struct {
        const char *policy;
        double ref;
        int exact;
    } c[] = {
        {"las", 9520.6, 1}, {"tiresias-las", 9467.0, 0}, {"srsf", 9467.0, 1}, {"srtf", 9480.7, 1}};
    const char *sets[] = {"queues=3250,7200", NULL};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        gs_sim_result r;
        ASSERT_OK(run_set(test_src(SPEC), test_src(DAY), c[i].policy, GS_PLACE_COUNT,
                          strstr(c[i].policy, "las") ? sets : NULL, &r));
        if (!(r.avg_jct_s > c[i].ref * 0.98 && r.avg_jct_s < c[i].ref * 1.02))
            T_FAIL("%s: avg JCT %.1f not within 2%% of %.1f", c[i].policy, r.avg_jct_s, c[i].ref);
        if (c[i].exact) ASSERT_NEAR(r.avg_jct_s, c[i].ref, 0.05);
        gs_sim_result_release(&r);
    }
}

static char *slurp(const char *path)
{
    char *b;
    size_t n;
    gs_diag d;
    gs_diag_init(&d, path);
    return gs_read_file(path, &b, &n, &d) ? NULL : b;
}

/* drop the "wall_s" line: the only field that differs between runs */
static void strip_wall(char *s)
{
    char *p = strstr(s, "\"wall_s\"");
    if (!p) return;
    char *e = strchr(p, '\n');
    if (e) memmove(p, e + 1, strlen(e + 1) + 1);
}

static void t_deterministic_outputs(void)
{
    char dir[2][64];
    const char *files[] = {"summary.json", "jobs.csv", "timeline.csv"};
    for (int k = 0; k < 2; k++) {
        snprintf(dir[k], sizeof dir[k], "/tmp/gsched-det-%d-%d", (int)getpid(), k);
        gs_sim_result r;
        ASSERT_OK(run(test_src(SPEC), test_src(DAY), "yarn-cs", GS_PLACE_CONSOLIDATE, &r));
        char cmd[256];
        snprintf(cmd, sizeof cmd, "mkdir -p %s", dir[k]);
        ASSERT_OK(system(cmd));
        char p[256];
        snprintf(p, sizeof p, "%s/summary.json", dir[k]);
        ASSERT_OK(gs_write_summary(p, &r, NULL));
        snprintf(p, sizeof p, "%s/jobs.csv", dir[k]);
        ASSERT_OK(gs_write_jobs(p, &r));
        snprintf(p, sizeof p, "%s/timeline.csv", dir[k]);
        ASSERT_OK(gs_write_timeline(p, &r));
        gs_sim_result_release(&r);
    }
    for (int f = 0; f < 3; f++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "%s/%s", dir[0], files[f]);
        snprintf(b, sizeof b, "%s/%s", dir[1], files[f]);
        char *x = slurp(a), *y = slurp(b);
        ASSERT(x && y);
        strip_wall(x);
        strip_wall(y);
        if (strcmp(x, y)) T_FAIL("%s differs between two identical runs", files[f]);
        ASSERT(strlen(x) > 100);
        free(x);
        free(y);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/gsched-det-%d-0 /tmp/gsched-det-%d-1", (int)getpid(),
             (int)getpid());
    ASSERT_OK(system(cmd));
}

static void t_rejected_counted(void)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gsched-rej-%d.csv", (int)getpid());
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs("submit,duration,gpus\n0,10,4\n1,10,400\n2,10,2\n", f);
    fclose(f);
    gs_sim_result r;
    ASSERT_OK(run("2x8", path, "fifo", GS_PLACE_CONSOLIDATE, &r));
    ASSERT_EQ(r.jobs, 3);
    ASSERT_EQ(r.jobs_done, 2);
    ASSERT_EQ(r.jobs_rejected, 1);
    ASSERT_EQ(r.jobs_unfinished, 0);
    const gs_job *j = gs_engine_find_job(r.engine, 1);
    ASSERT_EQ(j->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(j->reason, "needs 400 GPUs but the cluster has 16");
    gs_sim_result_release(&r);
    remove(path);
}

static void t_timeline_and_util(void)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gsched-tl-%d.csv", (int)getpid());
    FILE *f = fopen(path, "w");
    ASSERT(f);
    /* 4 GPUs: a uses 2 for 100 s, b uses 4 from 100 to 200 */
    fputs("submit,duration,gpus\n0,100,2\n50,100,4\n", f);
    fclose(f);
    gs_sim_result r;
    ASSERT_OK(run("4", path, "fifo", GS_PLACE_CONSOLIDATE, &r));
    ASSERT_EQ(r.ntl, 4);
    ASSERT_EQ(r.tl[3].t, 200 * GS_SEC);
    ASSERT_EQ(r.tl[3].alloc, 0);
    ASSERT_EQ(r.tl[0].t, 0);
    ASSERT_EQ(r.tl[0].alloc, 2);
    ASSERT_EQ(r.tl[1].t, 50 * GS_SEC);
    ASSERT_EQ(r.tl[1].pending, 1);
    ASSERT_EQ(r.tl[2].t, 100 * GS_SEC);
    ASSERT_EQ(r.tl[2].alloc, 4);
    ASSERT_EQ(r.tl[2].pending, 0);
    /* (2*100 + 4*100) / (4 * 200) */
    ASSERT_NEAR(r.gpu_util, 0.75, 1e-9);
    ASSERT_NEAR(r.avg_jct_s, (100 + 150) / 2.0, 1e-9);
    ASSERT_NEAR(r.avg_queue_s, 25, 1e-9);
    gs_sim_result_release(&r);
    remove(path);
}

static void t_fmt_sec(void)
{
    char b[32];
    gs_fmt_sec(b, sizeof b, 12 * GS_SEC);
    ASSERT_STR(b, "12");
    gs_fmt_sec(b, sizeof b, 1500000);
    ASSERT_STR(b, "1.5");
    gs_fmt_sec(b, sizeof b, 1);
    ASSERT_STR(b, "0.000001");
    gs_fmt_sec(b, sizeof b, -2500000);
    ASSERT_STR(b, "-2.5");
}

/* Write a scenario to a scratch file and run it; the diag is left in *d. */
static int scenario(const char *text, gs_diag *d)
{
    char path[] = "/tmp/gsched-test-scenario-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -100;
    FILE *f = fdopen(fd, "w");
    if (!f) return -100;
    fputs(text, f);
    fclose(f);
    FILE *out = fopen("/dev/null", "w");
    int pass = 0, fail = 0;
    int rc = gs_scenario_run(path, out, &pass, &fail, d);
    fclose(out);
    unlink(path);
    return rc ? rc : fail;
}

/* Scenario inputs found by tests/fuzz (fuzz_scenario): errors without a message. */
static void t_scenario_fuzz_regressions(void)
{
    static const char head[] = "cluster: \"4\"\npolicy: fifo\n";
    static const char tail[] = "jobs:\n  - {id: 1, submit: 0, duration: 10, gpus: 1}\n"
                               "expect:\n  - {job: 1, end: 10}\n";
    char y[1024];
    gs_diag d;
    snprintf(y, sizeof y, "%s%s", head, tail);
    ASSERT_OK(scenario(y, &d));
    /* a flow mapping with an empty key: gs_params_set refused it, the scenario said nothing */
    snprintf(y, sizeof y, "%sset: {slowdown,: \"off\"}\n%s", head, tail);
    ASSERT_EQ(scenario(y, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "non-empty name");
    ASSERT_EQ(d.line, 3);
    /* events as a mapping were silently ignored */
    snprintf(y, sizeof y, "%sevents: {time: 5, node: n0, state: down}\n%s", head, tail);
    ASSERT_EQ(scenario(y, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "'events' must be a list");
    /* times beyond the clock's safe range, and gangs beyond 2^20 GPUs */
    snprintf(y, sizeof y, "%sjobs:\n  - {id: 1, submit: 0, duration: 2e11, gpus: 1}\nexpect: []\n",
             head);
    ASSERT_EQ(scenario(y, &d), GS_EPARSE);
    ASSERT_EQ(d.line, 4);
    snprintf(y, sizeof y,
             "%sjobs:\n  - {id: 1, duration: 1, tasks: 1048576, gpus_per_task: 4096}\nexpect: []\n",
             head);
    ASSERT_EQ(scenario(y, &d), GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "more than 1048576 GPUs");
}

static const test_case tests[] = {
    {"fidelity_fifo_count", t_fidelity_fifo_count},
    {"fidelity_yarn", t_fidelity_yarn},
    {"fidelity_backfill", t_fidelity_backfill},
    {"fidelity_preemptive", t_fidelity_preemptive},
    {"deterministic_outputs", t_deterministic_outputs},
    {"rejected_counted", t_rejected_counted},
    {"timeline_and_util", t_timeline_and_util},
    {"fmt_sec", t_fmt_sec},
    {"scenario_fuzz_regressions", t_scenario_fuzz_regressions},
};

TEST_MAIN(tests)
