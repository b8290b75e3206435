/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_sim.c - `gsched sim`: replay a trace under one or more policies.
 *
 * Contract (docs/cli.md; extend, never change):
 *   gsched sim --cluster SPEC --trace FILE --policy NAME[,NAME...]
 *              [--placement count|consolidate] [--out DIR] [--seed N]
 *              [--set key=value]... [--events FILE] [--progress auto|always|never]
 * One policy: DIR/summary.json, jobs.csv, timeline.csv.  Several: the same
 * under DIR/<policy>/, plus DIR/compare.csv and a table on stdout.
 * Invariant: every parameter given with --set is read by the engine or some
 * policy, else the run is refused before it starts (exit 2).
 *
 * Pollux workloads (trace format POLLUX) run in parity mode unless
 * elastic_mode=event is set (docs/elastic.md, "Pollux parity"): the policies
 * decide every 'interval' (60 s), every allocation costs 30 s without progress
 * (rescale_cost=pollux30, launch_cost=on, preempt_cost=30), drains are instantaneous, no
 * placement slowdown but the goodput model's, no gap between rescales, the
 * goodput model re-tunes every job at each interval as the artifact does, and
 * `tiresias` runs tiresias-tj (Tiresias + TunedJobs); outputs keep the names
 * typed.  Defaults set here never override a --set of the same key.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "report.h"
#include "sim.h"

static void sim_usage(FILE *f)
{
    fprintf(
        f,
        "usage: gsched sim --cluster SPEC --trace FILE --policy NAME[,NAME...] [options]\n"
        "\n"
        "  --cluster SPEC      cluster: shorthand (8, 4x8, 2x16x8, 36/4 = 9x4, with optional\n"
        "                      :TYPE; several types as parts: 9x4:V100,9x4:P100,9x4:K80;\n"
        "                      36:V100 is one 36-GPU server), a Tiresias cluster CSV, a\n"
        "                      HiveD config YAML, or Gavel's cluster_specs.json\n"
        "                      (FILE.json#KEY; docs/cluster-format.md)\n"
        "  --trace FILE        trace: Tiresias CSV, Philly CSV (timestamp,duration,num_gpus,...),\n"
        "                      Pollux workload CSV "
        "(name,time,application,num_replicas,batch_size),\n"
        "                      ElasticFlow CSV (job_id,submit_time,iteration,model_name,ddl,...)\n"
        "                      or gsched native CSV (see docs/trace-format.md)\n"
        "  --policy LIST       comma-separated policies (see 'gsched policies')\n"
        "  --placement MODE    count (any free GPUs) or consolidate (default)\n"
        "  --out DIR           output directory (default: sim-out)\n"
        "  --seed N            seed for any randomness (default 1)\n"
        "  --set KEY=VALUE     policy/engine parameter, repeatable (docs/policies.md)\n"
        "  --events FILE       node events: time,node,down|up|bad|good (down: fails, its\n"
        "                      jobs requeued; bad: takes no new job, its jobs run on)\n"
        "  --progress WHEN     auto (stderr is a terminal), always or never\n"
        "  -q, --quiet         no comparison table on stdout\n"
        "\n"
        "Pollux workloads (name,time,application,num_replicas,batch_size; docs/elastic.md):\n"
        "  --set pollux_traces=DIR       application traces (default: <workload dir>/../traces)\n"
        "  --set elastic_mode=parity|event  parity (default): the artifact's simulator -\n"
        "                      decisions every interval, 30 s per allocation, tiresias =\n"
        "                      tiresias-tj, optimus = Optimus+Oracle+TunedJobs\n"
        "  --set interval=DURATION       scheduling interval (default 60s)\n"
        "  --set interference=F          slowdown of distributed jobs sharing a node (0..1)\n"
        "  --set interference_avoid=on|off  pollux keeps distributed jobs apart (on)\n"
        "\n"
        "ElasticFlow traces (job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,...;\n"
        "deadlines; docs/trace-format.md):\n"
        "  --set throughputs=DIR         throughput tables DIR/<model>.csv (default: the\n"
        "                      folder 'throughputs' next to the trace)\n");
}

typedef struct progress_ctx {
    const char *policy;
    int on;
} progress_ctx;

static void on_progress(void *ud, const gs_sim_result *r, gs_time now, size_t done, size_t total)
{
    progress_ctx *p = ud;
    (void)r;
    if (!p->on) return;
    fprintf(stderr, "\r%-16s sim time %10.0fs  jobs done %zu/%zu (%.0f%%)   ", p->policy,
            gs_time_to_sec(now), done, total, total ? 100.0 * (double)done / (double)total : 0.0);
    fflush(stderr);
}

/*
 * ElasticFlow traces progress by their throughput tables (--set throughputs=DIR, default
 * DIR = <trace's directory>/throughputs): load them into tr->tput, give every job its work
 * in the table model's units.  0 (nothing for other traces), or EXIT_USAGE after a message.
 */
static int load_tput(gs_params *params, gs_trace *tr, const char *trace)
{
    const char *dir = gs_params_get(params, "throughputs");
    if (tr->format != GS_TRACE_ELASTICFLOW) {
        if (dir) cli_err("throughputs=%s: only ElasticFlow traces use throughput tables", dir);
        return dir ? EXIT_USAGE : 0;
    }
    char def[4096];
    if (!dir) {
        const char *sl = strrchr(trace, '/');
        if (sl)
            snprintf(def, sizeof def, "%.*s/throughputs", (int)(sl - trace), trace);
        else
            snprintf(def, sizeof def, "throughputs");
        if (access(def, R_OK) != 0) {
            cli_err("%s: an ElasticFlow trace needs its throughput tables: --set throughputs=DIR "
                    "(no '%s')",
                    trace, def);
            return EXIT_USAGE;
        }
        dir = def;
    }
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_tput_load_dir(dir, tr, &tr->tput, &d) || gs_trace_apply_tput(tr, tr->tput, dir, &d)) {
        cli_diag(&d);
        return EXIT_USAGE; /* gs_trace_release frees what was read */
    }
    return 0;
}

static int write_run(const char *dir, gs_sim_result *r, const gs_run_info *info)
{
    char path[4096];
    if (cli_mkdirs(dir) != 0) {
        cli_err("cannot create directory '%s': %s", dir, strerror(errno));
        return EXIT_RUNTIME;
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (gs_write_summary(path, r, info)) goto fail;
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    if (gs_write_jobs(path, r)) goto fail;
    snprintf(path, sizeof path, "%s/timeline.csv", dir);
    if (gs_write_timeline(path, r)) goto fail;
    snprintf(path, sizeof path, "%s/vcs.csv", dir);
    if (gs_write_vcs(path, &r, 1)) goto fail;
    snprintf(path, sizeof path, "%s/users.csv", dir);
    if (gs_write_users(path, &r, 1)) goto fail;
    snprintf(path, sizeof path, "%s/sizes.csv", dir);
    if (gs_write_sizes(path, &r, 1)) goto fail;
    return EXIT_OK;
fail:
    cli_err("cannot write '%s': %s", path, strerror(errno));
    return EXIT_RUNTIME;
}

/* Set key=val unless the user set key. */
static void set_default(gs_params *p, const char *key, const char *val)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].key, key)) return;
    if (gs_params_set(p, key, val)) abort(); /* programs abort on out-of-memory */
}

/*
 * Elastic settings: the parity-mode defaults of a Pollux workload (see the
 * header comment) and the registry name each typed policy runs as.  Reads
 * elastic_mode, interference and, in parity, interval (marking them used).  0, or an
 * error printed.
 */
static int sim_elastic_defaults(gs_params *p, const gs_trace *tr, const char *const *names,
                                const char **runas, size_t np, double *interference,
                                gs_time *retune)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *mode = gs_params_get(p, "elastic_mode");
    if (mode && strcmp(mode, "parity") && strcmp(mode, "event")) {
        cli_err("--set elastic_mode: expected parity or event, got '%s'", mode);
        return -1;
    }
    if (gs_params_get_double(p, "interference", 0, 0, 1, interference, &d)) {
        cli_diag(&d);
        return -1;
    }
    int parity = mode ? !strcmp(mode, "parity") : tr->format == GS_TRACE_POLLUX;
    for (size_t i = 0; i < np; i++)
        runas[i] = parity && !strcmp(names[i], "tiresias") ? "tiresias-tj" : names[i];
    *retune = 0;
    if (!parity) return 0;
    /* the goodput model re-tunes the jobs at every step, as the artifact's simulator */
    if (gs_params_get_duration(p, "interval", 60 * GS_SEC, retune, &d)) {
        cli_diag(&d);
        return -1;
    }
    set_default(p, "elastic_mode", "parity");
    set_default(p, "rescale_cost", "pollux30");
    set_default(p, "launch_cost", "on");
    set_default(p, "preempt_cost", "30");
    set_default(p, "rescale_gap", "0");
    set_default(p, "slowdown", "off");
    /* read by cmd_sim itself: not every policy reads them */
    gs_params_get(p, "elastic_mode");
    return 0;
}

int cmd_sim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"cluster", required_argument, NULL, 'c'},  {"trace", required_argument, NULL, 't'},
        {"policy", required_argument, NULL, 'p'},   {"placement", required_argument, NULL, 'P'},
        {"out", required_argument, NULL, 'o'},      {"seed", required_argument, NULL, 's'},
        {"set", required_argument, NULL, 'S'},      {"events", required_argument, NULL, 'e'},
        {"progress", required_argument, NULL, 'g'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    const char *cluster = NULL, *trace = NULL, *policies = NULL, *out = "sim-out",
               *events_path = NULL, *progress = "auto";
    gs_engine_opts eopts;
    gs_engine_opts_init(&eopts);
    gs_params params;
    gs_params_init(&params);
    int quiet = 0, rc = EXIT_USAGE, opt;
    uint64_t seed = 1;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:t:p:o:s:S:e:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': cluster = optarg; break;
        case 't': trace = optarg; break;
        case 'p': policies = optarg; break;
        case 'o': out = optarg; break;
        case 'e': events_path = optarg; break;
        case 'g': progress = optarg; break;
        case 'q': quiet = 1; break;
        case 'P': {
            int m = gs_place_mode_parse(optarg);
            if (m < 0) {
                cli_err("--placement: expected count or consolidate, got '%s'", optarg);
                goto done;
            }
            eopts.placement = (gs_place_mode)m;
            eopts.placement_set = 1;
            break;
        }
        case 's': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || end == optarg) {
                cli_err("--seed: '%s' is not a non-negative integer", optarg);
                goto done;
            }
            seed = v;
            break;
        }
        case 'S':
            if (gs_params_set_kv(&params, optarg)) {
                cli_err("--set: expected KEY=VALUE, got '%s'", optarg);
                goto done;
            }
            break;
        case 'h':
            sim_usage(stdout);
            rc = EXIT_OK;
            goto done;
        default: sim_usage(stderr); goto done;
        }
    }
    if (optind < argc) {
        cli_err("unexpected argument '%s'", argv[optind]);
        sim_usage(stderr);
        goto done;
    }
    if (!cluster || !trace || !policies) {
        cli_err("sim needs --cluster, --trace and --policy");
        sim_usage(stderr);
        goto done;
    }
    if (strcmp(progress, "auto") && strcmp(progress, "always") && strcmp(progress, "never")) {
        cli_err("--progress: expected auto, always or never, got '%s'", progress);
        goto done;
    }
    eopts.seed = seed;
    eopts.mode = GS_ENGINE_SIM;

    /* split the policy list */
    char *plist = strdup(policies);
    if (!plist) abort();
    const char *names[64];
    size_t np = 0;
    for (char *save, *tok = strtok_r(plist, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (np == 64) {
            cli_err("--policy: at most 64 policies");
            free(plist);
            goto done;
        }
        for (size_t k = 0; k < np; k++)
            if (!strcmp(names[k], tok)) {
                cli_err("--policy: '%s' listed twice", tok);
                free(plist);
                goto done;
            }
        names[np++] = tok;
    }
    if (!np) {
        cli_err("--policy: empty list");
        free(plist);
        goto done;
    }

    gs_diag d;
    gs_diag_init(&d, trace);
    gs_trace tr;
    if (gs_trace_load_ex(trace, gs_params_get(&params, "pollux_traces"), &tr, &d)) {
        cli_diag(&d);
        free(plist);
        goto done;
    }
    if (load_tput(&params, &tr, trace)) {
        gs_trace_release(&tr);
        free(plist);
        goto done;
    }
    const char *runas[64]; /* registry name each run uses */
    double interference = 0;
    gs_time retune = 0;
    if (sim_elastic_defaults(&params, &tr, names, runas, np, &interference, &retune)) {
        gs_trace_release(&tr);
        free(plist);
        goto done;
    }
    gs_events ev = {0};
    if (events_path) {
        gs_diag_init(&d, events_path);
        if (gs_events_load(events_path, &ev, &d)) {
            cli_diag(&d);
            gs_trace_release(&tr);
            free(plist);
            goto done;
        }
    }
    /* cluster checksum when the spec is a file (FILE.json#KEY: the file's) */
    char csha[65] = "";
    {
        char *buf, cpath[4096];
        size_t len;
        gs_diag dd;
        snprintf(cpath, sizeof cpath, "%s", cluster);
        if (access(cpath, R_OK) != 0 && strrchr(cpath, '#')) *strrchr(cpath, '#') = 0;
        gs_diag_init(&dd, cpath);
        if (access(cpath, R_OK) == 0 && gs_read_file(cpath, &buf, &len, &dd) == 0) {
            gs_sha256_hex(buf, len, csha);
            free(buf);
        }
    }

    gs_sim_result *res = calloc(np, sizeof *res);
    gs_sim_result **rp = calloc(np, sizeof *rp);
    if (!res || !rp) abort();
    /* prepare every run first: bad parameters fail before any simulation */
    for (size_t i = 0; i < np; i++) {
        rp[i] = &res[i];
        gs_sim_opts o = {cluster, runas[i], &params,  eopts,        events_path ? &ev : NULL,
                         NULL,    NULL,     names[i], interference, retune};
        gs_diag_init(&d, cluster);
        if (gs_sim_prepare(&o, &res[i], &d)) {
            if (d.file == NULL && d.msg[0]) {
                gs_diag tmp = d;
                tmp.file = NULL;
                cli_diag(&tmp);
            } else {
                cli_diag(&d);
            }
            goto cleanup;
        }
    }
    const char *unused = gs_params_unused(&params);
    if (unused) {
        cli_err("parameter '%s' is not used by the engine or by policy %s", unused, policies);
        goto cleanup;
    }
    int tty = isatty(fileno(stderr));
    for (size_t i = 0; i < np; i++) {
        progress_ctx pc = {names[i],
                           !strcmp(progress, "always") || (!strcmp(progress, "auto") && tty)};
        gs_sim_opts o = {cluster,     runas[i], &params,  eopts,        events_path ? &ev : NULL,
                         on_progress, &pc,      names[i], interference, retune};
        gs_diag_init(&d, trace);
        if (gs_sim_run(&o, &tr, &res[i], &d)) {
            if (pc.on) fputc('\n', stderr);
            cli_diag(&d);
            rc = EXIT_USAGE;
            goto cleanup;
        }
        if (pc.on) fprintf(stderr, "\r%-70s\r", "");
        gs_run_info info = {tr.path,
                            tr.sha256,
                            gs_trace_format_name(tr.format),
                            cluster,
                            csha[0] ? csha : NULL,
                            events_path,
                            events_path ? ev.sha256 : NULL,
                            seed,
                            &params};
        char dir[4096];
        if (np == 1)
            snprintf(dir, sizeof dir, "%s", out);
        else
            snprintf(dir, sizeof dir, "%s/%s", out, names[i]);
        rc = write_run(dir, &res[i], &info);
        if (rc) goto cleanup;
        /* keep memory low for long policy lists: the writers are done with the engine */
    }
    if (np > 1) {
        char path[4096];
        snprintf(path, sizeof path, "%s/compare.csv", out);
        if (gs_write_compare(path, rp, np)) {
            cli_err("cannot write '%s': %s", path, strerror(errno));
            rc = EXIT_RUNTIME;
            goto cleanup;
        }
        gs_run_info info = {tr.path,
                            tr.sha256,
                            gs_trace_format_name(tr.format),
                            cluster,
                            csha[0] ? csha : NULL,
                            events_path,
                            events_path ? ev.sha256 : NULL,
                            seed,
                            &params};
        snprintf(path, sizeof path, "%s/compare-vcs.csv", out);
        if (gs_write_vcs(path, rp, np)) {
            cli_err("cannot write '%s': %s", path, strerror(errno));
            rc = EXIT_RUNTIME;
            goto cleanup;
        }
        snprintf(path, sizeof path, "%s/compare-users.csv", out);
        if (gs_write_users(path, rp, np)) {
            cli_err("cannot write '%s': %s", path, strerror(errno));
            rc = EXIT_RUNTIME;
            goto cleanup;
        }
        snprintf(path, sizeof path, "%s/compare-sizes.csv", out);
        if (gs_write_sizes(path, rp, np)) {
            cli_err("cannot write '%s': %s", path, strerror(errno));
            rc = EXIT_RUNTIME;
            goto cleanup;
        }
        snprintf(path, sizeof path, "%s/report.html", out);
        if (gs_write_report(path, rp, np, &info)) {
            cli_err("cannot write '%s': %s", path, strerror(errno));
            rc = EXIT_RUNTIME;
            goto cleanup;
        }
    }
    if (!quiet) gs_print_compare(stdout, rp, np);
    rc = EXIT_OK;
cleanup:
    for (size_t i = 0; i < np; i++) gs_sim_result_release(&res[i]);
    free(res);
    free(rp);
    gs_events_release(&ev);
    gs_trace_release(&tr);
    free(plist);
done:
    gs_params_release(&params);
    return rc;
}
