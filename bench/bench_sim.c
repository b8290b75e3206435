/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_sim.c - simulator speed: a trace under each policy, several runs.
 *
 * usage: bench_sim [--cluster SPEC] [--trace FILE] [--runs N] [--set k=v]... [POLICY...]
 * Defaults: the full Philly trace (data/philly/philly.csv, 82,247 jobs) on
 * 8x32x8 (2,048 GPUs), every registered policy, 5 runs.  Each policy runs in
 * its own child process so its peak RSS is its own.  Prints the median wall
 * time of the simulation proper (trace parsing excluded, reported apart),
 * events/s at that median, and peak RSS.
 *
 * Policies that need virtual clusters (hived, private, quota) cannot run on
 * a shorthand cluster.  When the cluster is a shorthand RxNxG, they run on a
 * HiveD config of the same R*N nodes whose VCs are the trace's, sized by
 * demand (what `gsched vcgen --nodes R*N --nodes-per-rack N
 * --gpus-per-node G` writes) and are marked with '*'; otherwise they are
 * skipped with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "vcgen.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct report {
    double median_s, min_s, max_s;
    double events;
    long rss_kb;
    double avg_jct;
    int ok;
} report;

static report bench_policy(const char *cluster, const gs_trace *t, const char *policy,
                           const gs_params *base, int runs)
{
    report rep = {0};
    double *w = calloc((size_t)runs, sizeof *w);
    if (!w) abort();
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
            return rep;
        }
        double t0 = now_s();
        int rc = gs_sim_run(&o, t, &r, &d);
        w[i] = now_s() - t0;
        if (rc) {
            fprintf(stderr, "bench: %s: %s\n", policy, d.msg);
            gs_sim_result_release(&r);
            gs_params_release(&p);
            free(w);
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
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    rep.rss_kb = ru.ru_maxrss;
    rep.ok = 1;
    free(w);
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

int main(int argc, char **argv)
{
    const char *cluster = "8x32x8";
    const char *trace = GSCHED_SOURCE_DIR "/data/philly/philly.csv";
    int runs = 5;
    const char *policies[64];
    int np = 0;
    gs_params params;
    gs_params_init(&params);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
            cluster = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--set") && i + 1 < argc)
            gs_params_set_kv(&params, argv[++i]);
        else if (np < 64)
            policies[np++] = argv[i];
    }
    if (runs < 1) runs = 1;
    if (!np)
        for (size_t i = 0; gs_policy_at(i) && np < 64; i++) policies[np++] = gs_policy_at(i)->name;
    double t0 = now_s();
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, trace);
    if (gs_trace_load(trace, &t, &d)) {
        char buf[1024];
        gs_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "bench: %s\n", buf);
        return 2;
    }
    double parse_s = now_s() - t0;
    printf("trace %s: %zu jobs, parsed in %.3f s; cluster %s; %d runs per policy\n", trace, t.n,
           parse_s, cluster, runs);
    printf("%-18s %10s %10s %10s %12s %10s %12s\n", "policy", "median_s", "min_s", "max_s",
           "events/s", "peak_rss", "avg_jct_s");
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
            printf("%-18s failed\n", policies[i]);
            bad = 1;
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%s%s", policies[i], cl == cluster ? "" : "*");
        printf("%-18s %10.3f %10.3f %10.3f %12.0f %8.1fMB %12.1f\n", name, r.median_s, r.min_s,
               r.max_s, r.events / r.median_s, (double)r.rss_kb / 1024.0, r.avg_jct);
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
