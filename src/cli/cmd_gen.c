/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_gen.c - `gsched gen SPEC`: generate a workload (src/sim/gen.c) and write it as a
 * native trace CSV, to stdout or -o FILE; what it offers (rate, load) goes to stderr.
 * Invariant: the same SPEC, cluster GPU count and --seed write the same bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "gen.h"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: gsched gen SPEC [--cluster SPEC] [--seed N] [-o FILE] [--quiet]\n"
           "\n"
           "Generate a workload and write it as a gsched trace CSV (stdout, or -o FILE);\n"
           "`gsched sim --trace FILE` replays it. SPEC is KEY=VALUE,... (defaults in []):\n"
           "  jobs=N                 number of jobs [1000]\n"
           "  load=X                 Poisson arrivals offering X times the cluster's GPUs\n"
           "                         (0.9 = 90 %%; rate = X x GPUs / mean GPU-time of a job)\n"
           "                         [0.9 unless rate= or arrivals=trace:]\n"
           "  rate=R                 Poisson arrivals at R jobs per hour instead\n"
           "  arrivals=poisson|trace:FILE\n"
           "                         inter-arrival gaps exponential [poisson], or drawn from\n"
           "                         the gaps of a trace's jobs (scaled to load= / rate= when\n"
           "                         one is given, else as they are)\n"
           "  mix=gavel|trace:FILE   job sizes, durations and models: Gavel's generator\n"
           "                         [gavel]: 1/2/4/8 GPUs w.p. 70/10/15/5 %%, 60 x 10^U(1.5,3) s\n"
           "                         w.p. 0.8 else 60 x 10^U(3,4) s, a model uniformly from the\n"
           "                         profile table; or a trace's jobs, drawn uniformly\n"
           "  profiles=FILE          the profile table mix=gavel takes models from\n"
           "                         [the built-in data/profiles/gavel.csv]\n"
           "  users=N, vcs=N         give jobs a user userK / a VC vcK, K uniform in 0..N-1\n"
           "\n"
           "  --cluster SPEC   the cluster (as for gsched sim) whose GPUs load= refers to\n"
           "                   (needed for load=)\n"
           "  --seed N         seed of every draw (default 1); same spec, GPUs and seed give\n"
           "                   the same file\n"
           "  -o, --out FILE   write the trace there instead of stdout\n"
           "  -q, --quiet      do not print the summary on stderr\n"
           "Example: gsched gen jobs=20000,load=0.9,mix=gavel --cluster 36:V100 --seed 3 \\\n"
           "             -o gen.csv && gsched sim --cluster 36:V100 --trace gen.csv --policy fifo\n"
           "Details: docs/workload-generator.md\n");
}

int cmd_gen(int argc, char **argv)
{
    static const struct option lo[] = {
        {"cluster", required_argument, NULL, 'c'}, {"seed", required_argument, NULL, 's'},
        {"out", required_argument, NULL, 'o'},     {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    const char *cluster = NULL, *out = NULL;
    uint64_t seed = 1;
    int quiet = 0, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:s:o:qh", lo, NULL)) != -1) {
        switch (opt) {
        case 'c': cluster = optarg; break;
        case 'o': out = optarg; break;
        case 'q': quiet = 1; break;
        case 's': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!isdigit((unsigned char)optarg[0]) || errno || *end) {
                cli_err("--seed: '%s' is not a non-negative integer", optarg);
                return EXIT_USAGE;
            }
            seed = v;
            break;
        }
        case 'h': usage(stdout); return EXIT_OK;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_err(optind >= argc ? "gen needs a SPEC (e.g. jobs=1000,load=0.9,mix=gavel)"
                               : "gen takes one SPEC (KEY=VALUE,... without spaces)");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *text = argv[optind];
    gs_diag d;
    gs_diag_init(&d, "spec");
    gs_gen_spec *s = NULL;
    int rc = gs_gen_spec_parse("spec", text, &s, &d);
    if (rc) {
        cli_diag(&d);
        return rc == GS_ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
    }
    size_t gpus = 0;
    if (cluster) {
        gs_cluster *c = NULL;
        gs_diag_init(&d, cluster);
        if (gs_cluster_load(cluster, &c, &d)) {
            cli_diag(&d);
            gs_gen_spec_destroy(s);
            return EXIT_USAGE;
        }
        gpus = gs_cluster_ngpus(c);
        gs_cluster_destroy(c);
    }
    gs_trace t;
    gs_diag_init(&d, "spec");
    rc = gs_gen_generate(s, gpus, seed, &t, &d);
    if (rc) {
        if (rc == GS_EINVAL && !cluster)
            cli_err("%s: give --cluster (load= is a fraction of its GPUs) or rate=", text);
        else if (!d.msg[0])
            cli_err("%s: cannot generate the workload: %s", text, gs_strerror(rc));
        else
            cli_diag(&d);
        gs_gen_spec_destroy(s);
        return rc == GS_ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    int ret = EXIT_OK;
    if (!f) {
        cli_err("%s: %s", out, strerror(errno));
        ret = EXIT_RUNTIME;
    } else {
        gs_diag_init(&d, out ? out : "stdout");
        int wr = gs_gen_write(s, gpus, seed, &t, f, &d);
        if (out && fclose(f) && !wr) wr = gs_diag_set(&d, GS_EIO, 0, 0, "cannot write the trace");
        if (!out && fflush(stdout) && !wr)
            wr = gs_diag_set(&d, GS_EIO, 0, 0, "cannot write the trace");
        if (wr) {
            cli_diag(&d);
            ret = EXIT_RUNTIME;
        }
    }
    if (ret == EXIT_OK && !quiet) {
        gs_gen_stats st;
        gs_gen_describe(s, gpus, &t, &st);
        fprintf(stderr, "gsched gen: %zu jobs, %.0f GPU-hours, arrivals over %.1f h", t.n,
                st.gpu_s / 3600, st.span_s / 3600);
        if (st.rate_per_h > 0)
            fprintf(stderr, ", %.2f jobs/h (target %.2f)", st.rate_per_h_actual, st.rate_per_h);
        else
            fprintf(stderr, ", %.2f jobs/h (the trace's gaps)", st.rate_per_h_actual);
        if (gpus) fprintf(stderr, ", offered load %.3f of %zu GPUs", st.load_actual, gpus);
        fprintf(stderr, "; sha256 %s\n", t.sha256);
    }
    gs_trace_release(&t);
    gs_gen_spec_destroy(s);
    return ret;
}
