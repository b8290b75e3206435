/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_sim.c - simulator speed: a trace under each policy, several runs.
 *
 * usage: bench_sim [--cluster SPEC] [--trace FILE | --gen SPEC [--seed N]] [--runs N]
 *                  [--timeout S] [--skip NAME,...] [--set k=v]... [POLICY...]
 * Defaults: the full Philly trace (data/philly/philly.csv, 82,247 jobs) on
 * 8x32x8 (2,048 GPUs), every registered policy, 5 runs.  Each policy runs in
 * its own child process so its peak RSS is its own.  Prints the median wall
 * time of the simulation proper (trace parsing excluded, reported apart),
 * the median CPU time of the same runs (user + system: on a loaded machine
 * the figure that does not depend on other processes), events/s at the
 * median wall time, and peak RSS.
 *
 * --gen SPEC generates the workload instead (src/sim/gen.h; load= refers to
 * the cluster's GPUs; --seed, default 1): bench/bench_scale.sh runs
 * 1,000,000 Gavel-mix jobs on 16,384 GPUs at 90 % load this way.  --timeout S
 * ends a policy's child after S seconds of wall time (reported as such);
 * --skip leaves policies out of the default list.
 *
 * Policies that need virtual clusters (hived, private, quota) cannot run on
 * a shorthand cluster.  When the cluster is a shorthand RxNxG, they run on a
 * HiveD config of the same R*N nodes whose VCs are the trace's, sized by
 * demand (what `gsched vcgen --nodes R*N --nodes-per-rack N
 * --gpus-per-node G` writes) and are marked with '*'; otherwise they are
 * skipped with the reason.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "gen.h"
#include "sim.h"
#include "vcgen.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct report {
    double median_s, min_s, max_s, cpu_s;
    double events;
    long rss_kb;
    double avg_jct;
    int ok;
} report;

static report bench_policy(const char *cluster, const gs_trace *t, const char *policy,
                           const gs_params *base, int runs)
{
    report rep = {0};
    double *w = calloc((size_t)runs, sizeof *w), *c = calloc((size_t)runs, sizeof *c);
    if (!w || !c) abort();
    for (int i = 0; i < runs; i++) {
        gs_params p;
        gs_params_copy(&p, base);
        gs_sim_opts o = {0};
        o.cluster_spec = cluster;
        o.policy = policy;
        o.params = &p;
        gs_engine_opts_init(&o.eopts);
        gs_sim_result r = {0};
        gs_diag d;
        gs_diag_init(&d, NULL);
        if (gs_sim_prepare(&o, &r, &d)) {
            fprintf(stderr, "bench: %s: %s\n", policy, d.msg);
            gs_params_release(&p);
            free(w);
            free(c);
            return rep;
        }
        double t0 = now_s(), c0 = cpu_s();
        int rc = gs_sim_run(&o, t, &r, &d);
        w[i] = now_s() - t0;
        c[i] = cpu_s() - c0;
        if (rc) {
            fprintf(stderr, "bench: %s: %s\n", policy, d.msg);
            gs_sim_result_release(&r);
            gs_params_release(&p);
            free(w);
            free(c);
            return rep;
        }
        rep.events = (double)r.events;
        rep.avg_jct = r.avg_jct_s;
        gs_sim_result_release(&r);
        gs_params_release(&p);
    }
    qsort(w, (size_t)runs, sizeof *w, cmp_d);
    rep.median_s = w[runs / 2];
    rep.min_s = w[0];
    rep.max_s = w[runs - 1];
    qsort(c, (size_t)runs, sizeof *c, cmp_d);
    rep.cpu_s = c[runs / 2];
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    rep.rss_kb = ru.ru_maxrss;
    rep.ok = 1;
    free(w);
    free(c);
    return rep;
}

/* Can policy run on cluster (with these parameters)?  On no, its reason in why. */
static int runnable(const char *cluster, const char *policy, const gs_params *base, char *why,
                    size_t cap)
{
    gs_params p;
    gs_params_copy(&p, base);
    gs_sim_opts o = {0};
    o.cluster_spec = cluster;
    o.policy = policy;
    o.params = &p;
    gs_engine_opts_init(&o.eopts);
    gs_sim_result r = {0};
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_sim_prepare(&o, &r, &d);
    if (rc) snprintf(why, cap, "%s", d.msg);
    gs_sim_result_release(&r);
    gs_params_release(&p);
    return rc == 0;
}

/*
 * A HiveD config for the trace's VCs on the nodes of shorthand RxNxG, in a
 * temporary file (path in out).  0 on success.
 */
static int vc_config(const char *cluster, const gs_trace *t, char *out, size_t cap)
{
    int racks, nodes, gpus;
    char tail;
    if (sscanf(cluster, "%dx%dx%d%c", &racks, &nodes, &gpus, &tail) != 3 || racks < 1 ||
        nodes < 1 || gpus < 1)
        return -1;
    snprintf(out, cap, "/tmp/bench_sim_vcs_XXXXXX");
    int fd = mkstemp(out);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(out);
        return -1;
    }
    gs_vcgen_opts o = {racks * nodes, gpus, nodes, NULL, NULL, 0};
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_vcgen(t, &o, f, &d);
    if (fclose(f) || rc) {
        if (rc) fprintf(stderr, "bench: vcgen: %s\n", d.msg);
        unlink(out);
        return -1;
    }
    return 0;
}

/* 1 when name is in the comma-separated list */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncmp(p, name, n)) return 1;
        p = e ? e + 1 : p + l;
    }
    return 0;
}

/* The workload of a generator spec for the cluster's GPU count. */
static int gen_trace(const char *spec, const char *cluster, uint64_t seed, gs_trace *t)
{
    gs_diag d;
    gs_diag_init(&d, cluster);
    gs_cluster *c = NULL;
    char buf[1024];
    if (gs_cluster_load(cluster, &c, &d)) {
        gs_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "bench: %s\n", buf);
        return -1;
    }
    size_t gpus = gs_cluster_ngpus(c);
    gs_cluster_destroy(c);
    gs_gen_spec *s = NULL;
    gs_diag_init(&d, "--gen");
    int rc = gs_gen_spec_parse("--gen", spec, &s, &d);
    if (!rc) rc = gs_gen_generate(s, gpus, seed, t, &d);
    if (rc) {
        gs_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "bench: %s\n", buf);
    } else {
        gs_gen_stats st;
        gs_gen_describe(s, gpus, t, &st);
        printf("generated %s --seed %llu: offered load %.3f of %zu GPUs, %.1f jobs/h over %.0f h\n",
               spec, (unsigned long long)seed, st.load_actual, gpus, st.rate_per_h_actual,
               st.span_s / 3600);
    }
    gs_gen_spec_destroy(s);
    return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *cluster = "8x32x8";
    const char *trace = GSCHED_SOURCE_DIR "/data/philly/philly.csv";
    const char *gen = NULL, *skip = NULL;
    uint64_t seed = 1;
    int runs = 5, timeout = 0;
    const char *policies[64];
    int np = 0;
    gs_params params;
    gs_params_init(&params);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
            cluster = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace = argv[++i];
        else if (!strcmp(argv[i], "--gen") && i + 1 < argc)
            gen = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--skip") && i + 1 < argc)
            skip = argv[++i];
        else if (!strcmp(argv[i], "--set") && i + 1 < argc)
            gs_params_set_kv(&params, argv[++i]);
        else if (np < 64)
            policies[np++] = argv[i];
    }
    if (runs < 1) runs = 1;
    if (!np)
        for (size_t i = 0; gs_policy_at(i) && np < 64; i++)
            if (!listed(skip, gs_policy_at(i)->name)) policies[np++] = gs_policy_at(i)->name;
    double t0 = now_s();
    gs_trace t;
    if (gen) {
        if (gen_trace(gen, cluster, seed, &t)) return 2;
        trace = t.path;
    } else {
        gs_diag d;
        gs_diag_init(&d, trace);
        if (gs_trace_load(trace, &t, &d)) {
            char buf[1024];
            gs_diag_format(&d, buf, sizeof buf);
            fprintf(stderr, "bench: %s\n", buf);
            return 2;
        }
    }
    double parse_s = now_s() - t0;
    printf("trace %s: %zu jobs, %s in %.3f s; cluster %s; %d runs per policy\n", trace, t.n,
           gen ? "generated" : "parsed", parse_s, cluster, runs);
    printf("%-18s %10s %10s %10s %10s %12s %10s %12s\n", "policy", "median_s", "min_s", "max_s",
           "cpu_s", "events/s", "peak_rss", "avg_jct_s");
    fflush(stdout);
    int bad = 0, starred = 0;
    char vcfile[64] = "";
    for (int i = 0; i < np; i++) {
        const char *cl = cluster;
        char why[512];
        if (!runnable(cluster, policies[i], &params, why, sizeof why)) {
            if (!vcfile[0] && vc_config(cluster, &t, vcfile, sizeof vcfile)) vcfile[0] = '\0';
            if (!vcfile[0] || !runnable(vcfile, policies[i], &params, why, sizeof why)) {
                printf("%-18s skipped: %s\n", policies[i], why);
                fflush(stdout);
                continue;
            }
            cl = vcfile;
            starred = 1;
        }
        int fd[2];
        if (pipe(fd)) return 1;
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            if (timeout > 0) alarm((unsigned)timeout);
            report r = bench_policy(cl, &t, policies[i], &params, runs);
            if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
            _exit(0);
        }
        close(fd[1]);
        report r = {0};
        if (read(fd[0], &r, sizeof r) != (ssize_t)sizeof r) r.ok = 0;
        close(fd[0]);
        int st;
        waitpid(pid, &st, 0);
        if (!r.ok) {
            if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
                printf("%-18s over the %d s timeout (%d run%s)\n", policies[i], timeout, runs,
                       runs == 1 ? "" : "s");
            else
                printf("%-18s failed\n", policies[i]);
            bad = 1;
            fflush(stdout);
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%s%s", policies[i], cl == cluster ? "" : "*");
        printf("%-18s %10.3f %10.3f %10.3f %10.3f %12.0f %8.1fMB %12.1f\n", name, r.median_s,
               r.min_s, r.max_s, r.cpu_s, r.events / r.median_s, (double)r.rss_kb / 1024.0,
               r.avg_jct);
        fflush(stdout);
    }
    if (starred)
        printf("* on a HiveD config of the trace's VCs over the same nodes (gsched vcgen --nodes "
               "R*N --nodes-per-rack N --gpus-per-node G)\n");
    if (vcfile[0]) unlink(vcfile);
    gs_trace_release(&t);
    gs_params_release(&params);
    return bad;
}
