/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gen.c - the workload generator (src/sim/gen.c): determinism per seed, Gavel's mix and
 * the offered load over 20,000 jobs, trace-sampled arrivals and mixes, the written CSV read
 * back, and the spec's errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gen.h"
#include "harness.h"

#define DAY GSCHED_SOURCE_DIR "/data/philly-1day/philly_20171002_tiresias.csv"

static int gen(const char *spec, size_t gpus, uint64_t seed, gs_trace *t, gs_diag *d)
{
    gs_gen_spec *s = NULL;
    gs_diag_init(d, "spec");
    int rc = gs_gen_spec_parse("spec", spec, &s, d);
    if (rc) return rc;
    rc = gs_gen_generate(s, gpus, seed, t, d);
    gs_gen_spec_destroy(s);
    return rc;
}

static int same_jobs(const gs_trace *a, const gs_trace *b)
{
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++) {
        const gs_job_spec *x = &a->jobs[i], *y = &b->jobs[i];
        if (x->id != y->id || x->submit != y->submit || x->duration != y->duration ||
            x->ntasks != y->ntasks || x->gpus_per_task != y->gpus_per_task)
            return 0;
        if (!x->model != !y->model || (x->model && strcmp(x->model, y->model))) return 0;
        if (!x->user != !y->user || (x->user && strcmp(x->user, y->user))) return 0;
        if (!x->vc != !y->vc || (x->vc && strcmp(x->vc, y->vc))) return 0;
    }
    return 1;
}

static void t_deterministic(void)
{
    gs_trace a, b, c;
    gs_diag d;
    ASSERT_OK(gen("jobs=2000,load=0.9,users=4", 108, 7, &a, &d));
    ASSERT_OK(gen("jobs=2000,load=0.9,users=4", 108, 7, &b, &d));
    ASSERT_OK(gen("jobs=2000,load=0.9,users=4", 108, 8, &c, &d));
    ASSERT_EQ(a.n, 2000);
    ASSERT(same_jobs(&a, &b));
    ASSERT_STR(a.sha256, b.sha256);
    ASSERT(!same_jobs(&a, &c));
    ASSERT(strcmp(a.sha256, c.sha256) != 0);
    /* sizes, durations and arrivals of the two seeds differ job by job, not just somewhere */
    size_t diff_sub = 0, diff_dur = 0;
    for (size_t i = 1; i < a.n; i++) {
        diff_sub += a.jobs[i].submit != c.jobs[i].submit;
        diff_dur += a.jobs[i].duration != c.jobs[i].duration;
    }
    ASSERT(diff_sub > 1990 && diff_dur > 1990);
    ASSERT_STR(a.path, "gen:jobs=2000,load=0.9,users=4");
    ASSERT_EQ(a.format, GS_TRACE_NATIVE);
    for (size_t i = 0; i < a.n; i++) {
        ASSERT_EQ(a.jobs[i].id, (long long)i);
        if (i) ASSERT_LE(a.jobs[i - 1].submit, a.jobs[i].submit);
        ASSERT_EQ(a.jobs[i].submit % 1000, 0); /* whole milliseconds */
        ASSERT_EQ(a.jobs[i].duration % 1000, 0);
    }
    ASSERT_EQ(a.jobs[0].submit, 0);
    gs_trace_release(&a);
    gs_trace_release(&b);
    gs_trace_release(&c);
}

/* Gavel's mix over 20,000 jobs: sizes, durations, models, within sampling tolerance. */
static void t_gavel_mix(void)
{
    gs_trace t;
    gs_diag d;
    ASSERT_OK(gen("jobs=20000,load=0.9,mix=gavel", 1024, 1, &t, &d));
    size_t n = t.n, by_size[9] = {0}, lng = 0, nshort = 0;
    double short_exp = 0, long_exp = 0;
    const char *models[64];
    size_t counts[64] = {0}, nm = 0;
    for (size_t i = 0; i < n; i++) {
        const gs_job_spec *j = &t.jobs[i];
        ASSERT_EQ(j->gpus_per_task, 1);
        ASSERT(j->ntasks == 1 || j->ntasks == 2 || j->ntasks == 4 || j->ntasks == 8);
        by_size[j->ntasks]++;
        double s = gs_time_to_sec(j->duration);
        ASSERT(s >= 60 * pow(10, 1.5) - 0.001 && s <= 60 * 1e4 + 0.001);
        double e = log10(s / 60);
        if (e >= 3) /* the long branch 10^U(3,4) min (the short one ends at 10^3) */
            lng++, long_exp += e;
        else
            nshort++, short_exp += e;
        ASSERT(j->model != NULL);
        size_t k = 0;
        while (k < nm && strcmp(models[k], j->model)) k++;
        if (k == nm) {
            ASSERT(nm < 64);
            models[nm++] = j->model;
        }
        counts[k]++;
    }
    ASSERT_NEAR((double)by_size[1] / n, 0.70, 0.015);
    ASSERT_NEAR((double)by_size[2] / n, 0.10, 0.01);
    ASSERT_NEAR((double)by_size[4] / n, 0.15, 0.01);
    ASSERT_NEAR((double)by_size[8] / n, 0.05, 0.008);
    ASSERT_NEAR((double)lng / n, 0.20, 0.012);
    /* exponents uniform over their ranges: means 2.25 and 3.5 */
    ASSERT_NEAR(short_exp / nshort, 2.25, 0.02);
    ASSERT_NEAR(long_exp / lng, 3.5, 0.02);
    /* every model of the built-in profile table (Gavel's 26 job types), uniformly */
    ASSERT_EQ(nm, 26);
    for (size_t k = 0; k < nm; k++) {
        ASSERT(strcmp(models[k], "default") != 0);
        ASSERT_NEAR((double)counts[k] / n, 1.0 / 26, 0.008);
    }
    gs_trace_release(&t);
}

/*
 * mix=gavel-single (Gavel's continuous-single traces): every job 1 GPU; durations, models and
 * (at a rate) arrivals the same draws as mix=gavel's; at a load, the rate is 1.9 times
 * gavel's (its mean GPU-time is a 1-GPU job's).
 */
static void t_gavel_single(void)
{
    gs_trace a, b, c, e;
    gs_diag d;
    ASSERT_OK(gen("jobs=3000,rate=4,mix=gavel-single", 0, 7, &a, &d));
    ASSERT_OK(gen("jobs=3000,rate=4,mix=gavel", 0, 7, &b, &d));
    for (size_t i = 0; i < a.n; i++) {
        ASSERT_EQ(a.jobs[i].ntasks, 1);
        ASSERT_EQ(a.jobs[i].gpus_per_task, 1);
        ASSERT_EQ(a.jobs[i].submit, b.jobs[i].submit);
        ASSERT_EQ(a.jobs[i].duration, b.jobs[i].duration);
        ASSERT_STR(a.jobs[i].model, b.jobs[i].model);
    }
    ASSERT_OK(gen("jobs=3000,load=0.9,mix=gavel-single", 108, 7, &c, &d));
    ASSERT_OK(gen("jobs=3000,load=0.9,mix=gavel", 108, 7, &e, &d));
    double ratio = gs_time_to_sec(e.jobs[e.n - 1].submit) / gs_time_to_sec(c.jobs[c.n - 1].submit);
    ASSERT_NEAR(ratio, 1.9, 1e-3); /* the same gaps, scaled by the mean GPUs per job */
    gs_trace_release(&a);
    gs_trace_release(&b);
    gs_trace_release(&c);
    gs_trace_release(&e);
}

/* load=0.9 offers 90 % of the GPUs: rate from the mix's exact mean GPU-time. */
static void t_offered_load(void)
{
    gs_gen_spec *s = NULL;
    gs_diag d;
    gs_diag_init(&d, "spec");
    ASSERT_OK(gs_gen_spec_parse("spec", "jobs=20000,load=0.9", &s, &d));
    /* E[gpus] = 1.9; E[duration] = 60 (0.8 E[10^U(1.5,3)] + 0.2 E[10^U(3,4)]) */
    double ed = 60 * (0.8 * (1000 - pow(10, 1.5)) / (1.5 * log(10)) + 0.2 * 9000 / log(10));
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gs_trace t;
        ASSERT_OK(gs_gen_generate(s, 1024, seed, &t, &d));
        gs_gen_stats st;
        gs_gen_describe(s, 1024, &t, &st);
        ASSERT_NEAR(st.mix_mean_gpu_s, 1.9 * ed, 1e-6 * ed);
        ASSERT_NEAR(st.rate_per_h, 0.9 * 1024 / (1.9 * ed) * 3600, 1e-9);
        ASSERT_NEAR(st.rate_per_h_actual / st.rate_per_h, 1, 0.03);
        ASSERT_NEAR(st.gpu_s / t.n / (1.9 * ed), 1, 0.08);
        ASSERT_NEAR(st.load_actual, 0.9, 0.08);
        gs_trace_release(&t);
    }
    gs_gen_spec_destroy(s);

    /* rate= is jobs per hour, whatever the cluster */
    gs_trace t;
    ASSERT_OK(gen("jobs=20000,rate=120", 0, 5, &t, &d));
    double span_h = gs_time_to_sec(t.jobs[t.n - 1].submit) / 3600;
    ASSERT_NEAR((t.n - 1) / span_h, 120, 120 * 0.03);
    gs_trace_release(&t);
}

/* Each attribute has its own stream: users= changes nothing else; a load sweep rescales the
 * same arrivals. */
static void t_streams(void)
{
    gs_trace a, b, c;
    gs_diag d;
    ASSERT_OK(gen("jobs=3000,load=0.9", 512, 11, &a, &d));
    ASSERT_OK(gen("jobs=3000,load=0.9,users=5,vcs=3", 512, 11, &b, &d));
    ASSERT_OK(gen("jobs=3000,load=0.45", 512, 11, &c, &d));
    int users[5] = {0};
    for (size_t i = 0; i < a.n; i++) {
        ASSERT_EQ(a.jobs[i].submit, b.jobs[i].submit);
        ASSERT_EQ(a.jobs[i].duration, b.jobs[i].duration);
        ASSERT_EQ(a.jobs[i].ntasks, b.jobs[i].ntasks);
        ASSERT_STR(a.jobs[i].model, b.jobs[i].model);
        ASSERT(a.jobs[i].user == NULL && a.jobs[i].vc == NULL);
        ASSERT(b.jobs[i].user && !strncmp(b.jobs[i].user, "user", 4));
        int u = atoi(b.jobs[i].user + 4);
        ASSERT(u >= 0 && u < 5);
        users[u]++;
        ASSERT(!strcmp(b.jobs[i].vc, "vc0") || !strcmp(b.jobs[i].vc, "vc1") ||
               !strcmp(b.jobs[i].vc, "vc2"));
        /* half the load: gaps twice as long (each arrival rounded to a millisecond) */
        ASSERT_LE(llabs((long long)(c.jobs[i].submit - 2 * a.jobs[i].submit)), 2000);
        ASSERT_EQ(a.jobs[i].duration, c.jobs[i].duration);
    }
    for (int u = 0; u < 5; u++) ASSERT(users[u] > 450 && users[u] < 750);
    /* more jobs: the same first ones */
    gs_trace_release(&c);
    ASSERT_OK(gen("jobs=1000,load=0.9", 512, 11, &c, &d));
    ASSERT_EQ(c.n, 1000);
    for (size_t i = 0; i < c.n; i++) {
        ASSERT_EQ(a.jobs[i].submit, c.jobs[i].submit);
        ASSERT_EQ(a.jobs[i].duration, c.jobs[i].duration);
        ASSERT_EQ(a.jobs[i].ntasks, c.jobs[i].ntasks);
    }
    gs_trace_release(&a);
    gs_trace_release(&b);
    gs_trace_release(&c);
}

/* The CSV gsched gen writes reads back to the same jobs; its digest is t.sha256. */
static void t_roundtrip(void)
{
    const char *specs[] = {"jobs=500,load=0.7,users=3,vcs=2",
                           "jobs=300,rate=30,mix=trace:" GSCHED_SOURCE_DIR
                           "/data/examples/mini.csv"};
    for (size_t k = 0; k < 2; k++) {
        gs_gen_spec *s = NULL;
        gs_diag d;
        gs_diag_init(&d, "spec");
        ASSERT_OK(gs_gen_spec_parse("spec", specs[k], &s, &d));
        gs_trace t, back;
        ASSERT_OK(gs_gen_generate(s, 64, 3, &t, &d));
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ASSERT(f);
        ASSERT_OK(gs_gen_write(s, 64, 3, &t, f, &d));
        fclose(f);
        ASSERT(buf[0] == '#'); /* the provenance line */
        char sha[65];
        gs_sha256_hex(buf, len, sha);
        ASSERT_STR(sha, t.sha256);
        gs_diag_init(&d, "gen.csv");
        ASSERT_OK(gs_trace_parse("gen.csv", buf, len, &back, &d));
        ASSERT_EQ(back.format, GS_TRACE_NATIVE);
        ASSERT(same_jobs(&t, &back));
        free(buf);
        gs_trace_release(&back);
        gs_trace_release(&t);
        gs_gen_spec_destroy(s);
    }
}

/* mix=trace: jobs drawn from the trace's; arrivals=trace: gaps drawn from the trace's. */
static void t_trace_sampling(void)
{
    gs_trace src, t, u;
    gs_diag d;
    gs_diag_init(&d, DAY);
    ASSERT_OK(gs_trace_load(DAY, &src, &d));
    ASSERT_OK(gen("jobs=4000,arrivals=trace:" DAY ",mix=trace:" DAY, 0, 2, &t, &d));
    double src_gpu_s = 0, gen_gpu_s = 0;
    for (size_t i = 0; i < src.n; i++)
        src_gpu_s += src.jobs[i].ntasks * gs_time_to_sec(src.jobs[i].duration);
    for (size_t i = 0; i < t.n; i++) {
        const gs_job_spec *j = &t.jobs[i];
        gen_gpu_s += j->ntasks * gs_time_to_sec(j->duration);
        int shape = 0, gap = i == 0;
        for (size_t q = 0; q < src.n && !shape; q++)
            shape = src.jobs[q].duration == j->duration && src.jobs[q].ntasks == j->ntasks &&
                    !strcmp(src.jobs[q].model, j->model);
        for (size_t q = 1; q < src.n && !gap; q++)
            gap = src.jobs[q].submit - src.jobs[q - 1].submit == j->submit - t.jobs[i - 1].submit;
        ASSERT(shape);
        ASSERT(gap);
    }
    /* the trace's mean GPU-time, and its arrival rate */
    ASSERT_NEAR(gen_gpu_s / t.n / (src_gpu_s / src.n), 1, 0.25);
    double src_rate = (src.n - 1) / gs_time_to_sec(src.jobs[src.n - 1].submit - src.jobs[0].submit);
    double gen_rate = (t.n - 1) / gs_time_to_sec(t.jobs[t.n - 1].submit);
    ASSERT_NEAR(gen_rate / src_rate, 1, 0.1);
    /* scaled to a rate: the same draws, gaps stretched */
    ASSERT_OK(gen("jobs=4000,rate=36,arrivals=trace:" DAY ",mix=trace:" DAY, 0, 2, &u, &d));
    double rate = (u.n - 1) / gs_time_to_sec(u.jobs[u.n - 1].submit) * 3600;
    ASSERT_NEAR(rate, 36, 36 * 0.1);
    for (size_t i = 0; i < t.n; i++) ASSERT_EQ(t.jobs[i].duration, u.jobs[i].duration);
    gs_trace_release(&u);
    gs_trace_release(&t);
    gs_trace_release(&src);
}

/*
 * mix=trace: of a Gavel trace (jobs in steps, no durations): each job runs for its steps at
 * its model's throughput on the built-in profiles' reference type (the engine's work for it),
 * in whole milliseconds.
 */
static void t_trace_steps(void)
{
#define GAVEL GSCHED_SOURCE_DIR "/data/gavel/traces/physical_cluster/max_min_fairness.trace"
    gs_trace src, t;
    gs_diag d;
    gs_diag_init(&d, GAVEL);
    ASSERT_OK(gs_trace_load(GAVEL, &src, &d));
    gs_profiles *p = NULL;
    ASSERT_OK(gs_profiles_builtin(&p, &d));
    ASSERT_OK(gen("jobs=500,rate=10,mix=trace:" GAVEL, 0, 3, &t, &d));
    ASSERT_EQ(t.n, 500);
    for (size_t i = 0; i < t.n; i++) {
        const gs_job_spec *j = &t.jobs[i];
        ASSERT(j->duration > 0 && j->duration % 1000 == 0);
        int found = 0;
        for (size_t q = 0; q < src.n && !found; q++) {
            const gs_job_spec *s = &src.jobs[q];
            ASSERT_EQ(s->duration, 0);
            ASSERT(s->steps > 0);
            if (s->ntasks * s->gpus_per_task != j->ntasks * j->gpus_per_task ||
                strcmp(s->model, j->model))
                continue;
            double tp = gs_profiles_tput(p, s->model, gs_profiles_ref_type(p),
                                         s->ntasks * s->gpus_per_task);
            found = tp > 0 && j->duration == (gs_time)ceil(s->steps / tp * 1e3) * 1000;
        }
        ASSERT(found);
    }
    gs_profiles_destroy(p);
    gs_trace_release(&t);
    gs_trace_release(&src);
#undef GAVEL
}

static void t_profiles(void)
{
    /* a profile table with two models (and a default row): only those two */
    const char *path = "test_gen_profiles.csv";
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs("model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util\n"
          "bert,V100,1,0.2,8000,0.5\n"
          "default,V100,1,0.1,4000,0.5\n"
          "vgg,V100,1,0.3,9000,0.6\n"
          "bert,K80,1,0.5,8000,0.7\n",
          f);
    fclose(f);
    gs_trace t;
    gs_diag d;
    ASSERT_OK(gen("jobs=400,rate=10,profiles=test_gen_profiles.csv", 0, 1, &t, &d));
    size_t bert = 0;
    for (size_t i = 0; i < t.n; i++) {
        ASSERT(!strcmp(t.jobs[i].model, "bert") || !strcmp(t.jobs[i].model, "vgg"));
        bert += !strcmp(t.jobs[i].model, "bert");
    }
    ASSERT(bert > 150 && bert < 250);
    gs_trace_release(&t);
    remove(path);
}

static void t_errors(void)
{
    static const struct {
        const char *spec, *msg;
        int col;
    } bad[] = {
        {"jobs=0", "jobs: '0' is not an integer between 1 and 100000000", 6},
        {"jobs=12x", "jobs: '12x'", 6},
        {"jobs=-3", "jobs: '-3'", 6},
        {"jbs=4", "unknown key 'jbs' (did you mean 'jobs'?)", 1},
        {"jobs=4,colour=red", "unknown key 'colour' (keys: jobs, load, rate,", 8},
        {"jobs=4,,load=1", "empty item", 8},
        {"jobs", "'jobs': expected KEY=VALUE", 1},
        {"load=", "load: empty value", 6},
        {"load=0", "load: '0' is not a number in (0, 100]", 6},
        {"load=nan", "load: 'nan'", 6},
        {"load=-0.5", "load: '-0.5'", 6},
        {"rate=0", "rate: '0' is not a positive number of jobs per hour", 6},
        {"load=0.5,rate=10", "give load= or rate=, not both", 1},
        {"jobs=4,jobs=5", "'jobs' given twice", 8},
        {"arrivals=uniform", "arrivals: 'uniform' is neither 'poisson' nor 'trace:FILE'", 10},
        {"arrivals=trace:", "arrivals: 'trace:'", 10},
        {"mix=philly", "mix: 'philly' is not 'gavel', 'gavel-single' or 'trace:FILE'", 5},
        {"mix=trace:/nonexistent.csv", "mix: /nonexistent.csv: cannot open", 5},
        {"arrivals=trace:/nonexistent.csv", "arrivals: /nonexistent.csv: cannot open", 10},
        {"users=0", "users: '0' is not an integer between 1 and 1000000", 7},
        {"vcs=x", "vcs: 'x'", 5},
        {"mix=trace:" GSCHED_SOURCE_DIR "/data/examples/mini.csv,profiles=x.csv",
         "profiles: only mix=gavel", 0},
        {"profiles=/nonexistent.csv", "profiles: /nonexistent.csv: cannot open", 10},
        {"profiles=" DAY, "profiles: " DAY ":1:1:", 10},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_gen_spec *s = NULL;
        gs_diag d;
        gs_diag_init(&d, NULL);
        int rc = gs_gen_spec_parse("spec", bad[i].spec, &s, &d);
        if (rc == 0) T_FAIL("'%s' accepted", bad[i].spec);
        ASSERT(rc < 0);
        ASSERT(s == NULL);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        ASSERT_STR(d.file, "spec");
        if (bad[i].col) ASSERT_EQ(d.col, bad[i].col);
    }
    /* load= on a cluster of no GPUs (no --cluster) */
    gs_trace t;
    gs_diag d;
    int rc = gen("jobs=10,load=0.5", 0, 1, &t, &d);
    ASSERT_EQ(rc, GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "needs the cluster's GPU count");
    rc = gen("jobs=10", 0, 1, &t, &d); /* the default load=0.9 too */
    ASSERT_EQ(rc, GS_EINVAL);
    /* a rate, or a trace's own gaps, need no cluster */
    ASSERT_OK(gen("jobs=10,rate=5", 0, 1, &t, &d));
    gs_trace_release(&t);
    ASSERT_OK(gen("jobs=10,arrivals=trace:" DAY, 0, 1, &t, &d));
    gs_trace_release(&t);
    /* a rate so low that arrivals pass the largest time a trace holds: refused, not clamped */
    rc = gen("jobs=5,rate=1e-300", 0, 1, &t, &d);
    ASSERT_EQ(rc, GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "arrives after 1e11 s");
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        {"deterministic", t_deterministic},
        {"gavel_mix", t_gavel_mix},
        {"gavel_single", t_gavel_single},
        {"offered_load", t_offered_load},
        {"streams", t_streams},
        {"roundtrip", t_roundtrip},
        {"trace_sampling", t_trace_sampling},
        {"trace_steps", t_trace_steps},
        {"profiles", t_profiles},
        {"errors", t_errors},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
