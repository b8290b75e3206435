/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_sim.c - `gsched sim`: replay a trace under one or more policies.
 *
 * Contract (docs/cli.md; extend, never change):
 *   gsched sim --cluster SPEC --trace FILE|gen:SPEC --policy ITEM[,ITEM...]
 *              [--placement count|consolidate] [--out DIR] [--seed N] [--seeds N]
 *              [--window START:END] [--sweep KEY=V1,V2,...]
 *              [--set key=value]... [--events FILE] [--progress auto|always|never]
 *              [--policy-plugin FILE.so]...
 * ITEM = NAME[:KEY=VALUE...] (experiment.h), labelled as typed.  One run:
 * DIR/summary.json, jobs.csv, timeline.csv.  Several policies: the same under
 * DIR/<label>/, plus DIR/compare.csv, report.html and a table on stdout.  With
 * --seeds N (seeds seed..seed+N-1) the runs go to DIR/<label>/seed-<S>/ and
 * compare.csv holds the mean and the 95 % confidence half-width of every metric
 * (aggregate.c), runs.csv every run; with --sweep to DIR/KEY=VALUE/<label>/...,
 * sweep.csv the aggregates per value (docs/experiments.md).
 * Invariants: every parameter given with --set or --sweep is read by the engine
 * or some policy, and every item's own parameter by its run, else the run is
 * refused before any simulation (exit 2); every run is prepared (parameter
 * checks) before the first one starts.
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
#include "experiment.h"
#include "gen.h"
#include "report.h"
#include "sim.h"

static void sim_usage(FILE *f)
{
    fprintf(
        f,
        "usage: gsched sim --cluster SPEC --trace FILE --policy NAME[:KEY=VALUE...][,...] "
        "[options]\n"
        "\n"
        "  --cluster SPEC      cluster: shorthand (8, 4x8, 2x16x8, 36/4 = 9x4, with optional\n"
        "                      :TYPE; several types as parts: 9x4:V100,9x4:P100,9x4:K80;\n"
        "                      36:V100 is one 36-GPU server), a Tiresias cluster CSV, a\n"
        "                      HiveD config YAML, or Gavel's cluster_specs.json\n"
        "                      (FILE.json#KEY; docs/cluster-format.md)\n"
        "  --trace FILE        trace: Tiresias CSV, Philly CSV (timestamp,duration,num_gpus,...),\n"
        "                      Pollux workload CSV "
        "(name,time,application,num_replicas,batch_size),\n"
        "                      ElasticFlow CSV (job_id,submit_time,iteration,model_name,ddl,...),\n"
        "                      gsched native CSV, or Gavel's tab-separated traces (10 or 7\n"
        "                      fields); CSV column names in any case (docs/trace-format.md);\n"
        "                      gen:SPEC generates the workload for each seed\n"
        "  --policy LIST       comma-separated policies (see 'gsched policies'); an item\n"
        "                      NAME[:KEY=VALUE[:KEY=VALUE...]] has its own parameters and is\n"
        "                      labelled as typed (gandiva,gandiva:pack=off)\n"
        "  --policy-plugin FILE.so  load a policy from a shared object, repeatable; its\n"
        "                      name can then be listed in --policy (docs/writing-a-policy.md)\n"
        "  --placement MODE    count (any free GPUs) or consolidate (default)\n"
        "  --out DIR           output directory (default: sim-out)\n"
        "  --seed N            seed for any randomness (default 1; a non-negative integer)\n"
        "  --seeds N           run every policy with seeds seed..seed+N-1; compare.csv gets\n"
        "                      the mean and 95%% confidence half-width (*_ci95) per metric\n"
        "  --window START:END  measure the jobs submitted in [START, END) only (durations:\n"
        "                      2h:10h; either side may be empty); utilisation over it\n"
        "  --sweep KEY=V1,V2   one run per value of a --set parameter (or gen.KEY of a\n"
        "                      gen: trace): sweep.csv and one report\n"
        "  --set KEY=VALUE     policy/engine parameter for every policy, repeatable\n"
        "                      (docs/policies.md); an item's own KEY=VALUE wins\n"
        "  --events FILE       node events: time,node,down|up|bad|good|drain|resume (down:\n"
        "                      fails, its jobs requeued; bad, drain: takes no new job, its\n"
        "                      jobs run on); time,JOB,release: held job JOB's hold ends\n"
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
        "                      folder 'throughputs' next to the trace)\n"
        "\n"
        "GPU types (docs/heterogeneity.md): a job's duration is its run time on the reference\n"
        "type; on another type it runs at its profile's throughput ratio:\n"
        "  --set ref_gpu_type=TYPE       the reference type (default: the profiles', V100)\n"
        "  --set type_speed=on|off       off: every type runs at the reference speed (on)\n"
        "  --set profiles=FILE           profiles (default: built in, Gavel's measurements)\n"
        "\n"
        "Suspend/resume (time-slicing: gandiva, gandiva-emul; docs/costs.md):\n"
        "  --set suspend_mech=copy|sigstop|cuda|restart  copy (default): mini-batch wait +\n"
        "                      suspend_copy each way; sigstop: free, the memory stays on its\n"
        "                      GPUs (resumes only there); cuda: CUDA checkpoint, ckpt_fixed +\n"
        "                      memory / bandwidth each way; restart: t_save, t_restore + t_init\n"
        "  --set ckpt_fixed=DURATION     cuda: fixed part of a checkpoint or restore (200ms)\n"
        "  --set ckpt_d2h_bw=B/S, ckpt_h2d_bw=B/S  cuda: per-GPU copy rate, checkpoint\n"
        "                      (1.7e9) and restore (5.5e9)\n");
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

/* A non-negative decimal integer (no sign, no blanks) up to max; 0 or -1. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    if (!*s) return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno || v > max) return -1;
    *out = v;
    return 0;
}

/* The parameters of one run: --set, then the swept KEY=VALUE, then the item's own. */
static void run_params(const gs_params *global, const gs_sweep *sw, size_t v, int sweep_param,
                       const gs_policy_item *it, gs_params *out)
{
    if (gs_params_copy(out, global)) abort(); /* programs abort on out-of-memory */
    if (sweep_param && gs_params_set(out, sw->key, sw->values[v])) abort();
    for (size_t k = 0; k < it->params.n; k++)
        if (gs_params_set(out, it->params.v[k].key, it->params.v[k].val)) abort();
}

/* Was key read in p? */
static int key_used(const gs_params *p, const char *key)
{
    for (size_t k = 0; k < p->n; k++)
        if (!strcmp(p->v[k].key, key)) return p->v[k].used;
    return 0;
}

/* Print d, as the old driver did (no file name when the message has none). */
static void print_diag(const gs_diag *d, const char *label, size_t np)
{
    gs_diag tmp = *d;
    if (np > 1 && label) {
        char msg[sizeof tmp.msg];
        snprintf(msg, sizeof msg, "policy %s: %s", label, d->msg);
        snprintf(tmp.msg, sizeof tmp.msg, "%s", msg);
    }
    cli_diag(&tmp);
}

/* A gen:SPEC workload for one seed (gen.h); 0, or after a message EXIT_USAGE (a spec the
 * cluster cannot take) or EXIT_RUNTIME (out of memory: the library says nothing then). */
static int gen_trace(const gs_gen_spec *spec, size_t gpus, uint64_t seed, gs_trace *t)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_trace_release(t);
    memset(t, 0, sizeof *t);
    int rc = gs_gen_generate(spec, gpus, seed, t, &d);
    if (!rc) return 0;
    if (d.msg[0])
        cli_diag(&d);
    else
        cli_err("gen: cannot generate the workload of seed %llu: %s", (unsigned long long)seed,
                gs_strerror(rc));
    return rc == GS_ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
}

/* --window must hold at least one of the workload's arrivals: an empty window measures
 * nothing and every metric would read 0 (exit 2, saying where the arrivals are). */
static int window_check(const gs_trace *t, const char *window, gs_time start, gs_time end, int gen,
                        uint64_t seed)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->jobs[i].submit >= start && t->jobs[i].submit < end) return 0;
    char a[32] = "-", b[32] = "-", w[48] = "";
    if (t->n) {
        gs_fmt_sec(a, sizeof a, t->jobs[0].submit);
        gs_fmt_sec(b, sizeof b, t->jobs[t->n - 1].submit);
    }
    if (gen) snprintf(w, sizeof w, " (seed %llu's workload)", (unsigned long long)seed);
    cli_err("--window '%s': no job arrives in it; the trace's %zu jobs%s arrive from %s s to %s s",
            window, t->n, w, a, b);
    return EXIT_USAGE;
}

/* Append "/a b c" to dir as one folder: a '/' in it becomes '_' (labels and swept values
 * may hold paths). */
static void path_add(char *dir, size_t cap, const char *a, const char *b, const char *c)
{
    size_t n = strlen(dir);
    if (n + 1 >= cap) return;
    snprintf(dir + n, cap - n, "/%s%s%s", a, b, c);
    for (char *q = dir + n + 1; *q; q++)
        if (*q == '/') *q = '_';
}

/*
 * A run in which every job was rejected says nothing about its policy: name the policy, how
 * many jobs and why (the most frequent reasons, with their counts).  1 if so (after the
 * message), else 0.
 */
static int all_rejected(const gs_sim_result *r, const char *label)
{
    size_t n = r->engine ? gs_engine_njobs(r->engine) : 0, nrej = 0;
    enum { NR = 3 };
    const char *why[NR] = {0};
    size_t cnt[NR] = {0}, other = 0;
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(r->engine, i);
        if (j->state != GS_JOB_REJECTED) return 0;
        nrej++;
        const char *w = j->reason ? j->reason : "no reason given";
        size_t k = 0;
        while (k < NR && why[k] && strcmp(why[k], w)) k++;
        if (k == NR) {
            other++;
        } else {
            why[k] = w;
            cnt[k]++;
        }
    }
    if (!nrej) return 0;
    char msg[1024];
    size_t len = 0;
    for (size_t k = 0; k < NR && why[k] && len < sizeof msg; k++)
        len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu job%s: %s", k ? "; " : "",
                                cnt[k], cnt[k] == 1 ? "" : "s", why[k]);
    if (other && len < sizeof msg)
        snprintf(msg + len, sizeof msg - len, "; %zu more with other reasons", other);
    cli_err("policy %s rejected every job (%zu of %zu): %s", label, nrej, n, msg);
    return 1;
}

int cmd_sim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"cluster", required_argument, NULL, 'c'}, {"trace", required_argument, NULL, 't'},
        {"policy", required_argument, NULL, 'p'},  {"placement", required_argument, NULL, 'P'},
        {"out", required_argument, NULL, 'o'},     {"seed", required_argument, NULL, 's'},
        {"seeds", required_argument, NULL, 'n'},   {"window", required_argument, NULL, 'w'},
        {"sweep", required_argument, NULL, 'W'},   {"set", required_argument, NULL, 'S'},
        {"events", required_argument, NULL, 'e'},  {"progress", required_argument, NULL, 'g'},
        {"quiet", no_argument, NULL, 'q'},         {"policy-plugin", required_argument, NULL, 'Y'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    const char *cluster = NULL, *trace = NULL, *policies = NULL, *out = "sim-out",
               *events_path = NULL, *progress = "auto", *window = NULL, *sweep_arg = NULL;
    gs_engine_opts eopts;
    gs_engine_opts_init(&eopts);
    gs_params params;
    gs_params_init(&params);
    cli_plugins plugins = {0};
    int quiet = 0, rc = EXIT_USAGE, opt;
    uint64_t seed = 1, nseeds = 1;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:t:p:o:s:S:e:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': cluster = optarg; break;
        case 't': trace = optarg; break;
        case 'p': policies = optarg; break;
        case 'o': out = optarg; break;
        case 'e': events_path = optarg; break;
        case 'g': progress = optarg; break;
        case 'w': window = optarg; break;
        case 'W':
            if (sweep_arg) {
                cli_err("--sweep: one sweep per run (given twice)");
                goto done;
            }
            sweep_arg = optarg;
            break;
        case 'q': quiet = 1; break;
        case 'Y':
            if (cli_plugin_load(&plugins, optarg)) goto done;
            break;
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
        case 's':
            if (parse_uint(optarg, UINT64_MAX, &seed)) {
                cli_err("--seed: '%s' is not a non-negative integer", optarg);
                goto done;
            }
            break;
        case 'n':
            if (parse_uint(optarg, 10000, &nseeds) || nseeds < 1) {
                cli_err("--seeds: '%s' is not a number of seeds (1 to 10000)", optarg);
                goto done;
            }
            break;
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
    if (nseeds > 1 && seed > UINT64_MAX - (nseeds - 1)) {
        cli_err("--seed %llu with --seeds %llu: the seeds would pass 2^64 - 1",
                (unsigned long long)seed, (unsigned long long)nseeds);
        goto done;
    }
    eopts.seed = seed;
    eopts.mode = GS_ENGINE_SIM;
    eopts.policies = plugins.ops;
    eopts.npolicies = plugins.n;

    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_policy_items items = {0};
    gs_sweep sw = {0};
    gs_trace tr = {0};
    gs_events ev = {0};
    gs_time win_start = 0, win_end = 0;
    int have_window = 0, sweep_param = 0, gen = !strncmp(trace, "gen:", 4);
    const char *gen_spec = gen ? trace + 4 : NULL;
    gs_sim_result *res = NULL;
    gs_sim_result **rp = NULL;
    uint64_t *seeds = NULL;
    char **specs = NULL;         /* per sweep value: the generator spec */
    gs_gen_spec **gspecs = NULL; /* ... parsed */
    size_t np = 0, nv = 1, ns = (size_t)nseeds, nr = 0;
    const char **names = NULL, **runas = NULL;
    char skip[64] = {0};           /* items that cannot run on this cluster (warned, left out) */
    size_t nskip = 0, nallrej = 0; /* ... and runs whose every job was rejected */
    if (gs_policy_items_parse(policies, &items, &d)) {
        cli_diag(&d);
        goto cleanup;
    }
    np = items.n;
    if (np > 64) {
        cli_err("--policy: at most 64 policies");
        goto cleanup;
    }
    if (window) {
        if (gs_window_parse(window, &win_start, &win_end, &d)) {
            cli_diag(&d);
            goto cleanup;
        }
        have_window = 1;
    }
    if (sweep_arg) {
        if (gs_sweep_parse(sweep_arg, &sw, &d)) {
            cli_diag(&d);
            goto cleanup;
        }
        nv = sw.n;
        if (!strncmp(sw.key, "gen.", 4)) {
            if (!gen) {
                cli_err("--sweep %s: a generator key needs --trace gen:SPEC", sw.key);
                goto cleanup;
            }
        } else {
            sweep_param = 1;
            if (gs_params_get(&params, sw.key)) {
                cli_err("--sweep %s: also given with --set", sw.key);
                goto cleanup;
            }
            for (size_t p = 0; p < np; p++)
                if (gs_params_get(&items.v[p].params, sw.key)) {
                    cli_err("--sweep %s: also given in --policy item '%s'", sw.key,
                            items.v[p].label);
                    goto cleanup;
                }
            gs_params_reset_used(&params);
            for (size_t p = 0; p < np; p++) gs_params_reset_used(&items.v[p].params);
        }
    }
    names = calloc(np, sizeof *names);
    runas = calloc(np, sizeof *runas); /* registry name each run uses */
    specs = calloc(nv, sizeof *specs);
    gspecs = calloc(nv, sizeof *gspecs);
    if (!names || !runas || !specs || !gspecs) abort();
    for (size_t p = 0; p < np; p++) names[p] = items.v[p].name;
    for (size_t v = 0; v < nv; v++) {
        if (!gen) continue;
        specs[v] = sweep_arg && !sweep_param ? gs_spec_with(gen_spec, sw.key + 4, sw.values[v])
                                             : strdup(gen_spec);
        if (!specs[v]) abort();
        gs_diag_init(&d, NULL);
        if (gs_gen_spec_parse("gen", specs[v], &gspecs[v], &d)) {
            cli_diag(&d);
            goto cleanup;
        }
    }

    if (gen) {
        tr.format = GS_TRACE_NATIVE; /* what the generator writes */
    } else {
        gs_diag_init(&d, trace);
        if (gs_trace_load_ex(trace, gs_params_get(&params, "pollux_traces"), &tr, &d)) {
            cli_diag(&d);
            goto cleanup;
        }
        if (load_tput(&params, &tr, trace)) goto cleanup;
        if (have_window && window_check(&tr, window, win_start, win_end, 0, seed)) goto cleanup;
    }
    double interference = 0;
    gs_time retune = 0;
    if (sim_elastic_defaults(&params, &tr, names, runas, np, &interference, &retune)) goto cleanup;
    if (events_path) {
        gs_diag_init(&d, events_path);
        if (gs_events_load(events_path, &ev, &d)) {
            cli_diag(&d);
            goto cleanup;
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

    /* prepare every run first: bad parameters fail before any simulation */
    size_t gpus = 0;
    for (size_t v = 0; v < nv; v++)
        for (size_t p = 0; p < np; p++) {
            gs_params rpar;
            run_params(&params, &sw, v, sweep_param, &items.v[p], &rpar);
            gs_sim_opts o = {cluster,
                             runas[p],
                             &rpar,
                             eopts,
                             events_path ? &ev : NULL,
                             NULL,
                             NULL,
                             items.v[p].label,
                             interference,
                             retune,
                             have_window,
                             win_start,
                             win_end};
            gs_sim_result tmp = {0};
            gs_diag_init(&d, cluster);
            if (skip[p]) {
                gs_params_release(&rpar);
                continue;
            }
            int prc = gs_sim_prepare(&o, &tmp, &d);
            /* a policy that cannot run on this cluster (hived without a HiveD config, an LP
             * policy without a solver): with others listed it is skipped, they run and write
             * their outputs, and the exit status says something was left out */
            const gs_policy_ops *ops = gs_policy_find_ex(plugins.ops, plugins.n, runas[p]);
            int elsewhere =
                prc == GS_EUNSUPPORTED ||
                (prc && ops && (ops->flags & GS_POLICY_HIVED_ONLY) && tmp.cluster &&
                 (!gs_cluster_ncell_types(tmp.cluster) || !gs_cluster_nvcs(tmp.cluster)));
            if (elsewhere && np > 1) {
                cli_err("warning: policy %s skipped, the others run: %s", items.v[p].label, d.msg);
                skip[p] = 1;
                nskip++;
                gs_sim_result_release(&tmp);
                gs_params_release(&rpar);
                continue;
            }
            if (prc) {
                if (d.file == NULL && d.msg[0])
                    print_diag(&d, items.v[p].label, np);
                else
                    cli_diag(&d);
                gs_sim_result_release(&tmp);
                gs_params_release(&rpar);
                goto cleanup;
            }
            gpus = tmp.total_gpus;
            gs_sim_result_release(&tmp);
            /* an item's own keys must be read by its run; --set and swept keys by some run */
            for (size_t k = 0; k < items.v[p].params.n; k++)
                if (!key_used(&rpar, items.v[p].params.v[k].key)) {
                    cli_err("--policy item '%s': parameter '%s' is not used by the engine or by "
                            "policy %s",
                            items.v[p].label, items.v[p].params.v[k].key, items.v[p].name);
                    gs_params_release(&rpar);
                    goto cleanup;
                }
            for (size_t k = 0; k < params.n; k++)
                if (key_used(&rpar, params.v[k].key)) params.v[k].used = 1;
            if (sweep_param && key_used(&rpar, sw.key)) sweep_param = 2;
            gs_params_release(&rpar);
        }
    if (nskip) { /* drop the skipped items; np > 0 is left */
        if (nskip == np) {
            cli_err("no policy of '%s' can run on this cluster", policies);
            goto cleanup;
        }
        size_t w = 0;
        for (size_t p = 0; p < np; p++) {
            if (skip[p]) {
                gs_policy_item *x = &items.v[p];
                free(x->label);
                free(x->name);
                gs_params_release(&x->params);
                continue;
            }
            items.v[w] = items.v[p];
            names[w] = names[p];
            runas[w] = runas[p];
            w++;
        }
        items.n = np = w;
    }
    const char *unused = gs_params_unused(&params);
    if (unused) {
        cli_err("parameter '%s' is not used by the engine or by policy %s", unused, policies);
        goto cleanup;
    }
    if (sweep_param == 1) {
        cli_err("--sweep: parameter '%s' is not used by the engine or by policy %s", sw.key,
                policies);
        goto cleanup;
    }

    nr = nv * np * ns;
    res = calloc(nr, sizeof *res);
    rp = calloc(nr, sizeof *rp);
    seeds = calloc(nr, sizeof *seeds);
    if (!res || !rp || !seeds) abort();
    for (size_t i = 0; i < nr; i++) rp[i] = &res[i];
    char first_sha[65] = "";
    int tty = isatty(fileno(stderr));
    int single = nr == 1;
    for (size_t v = 0; v < nv; v++)
        for (size_t s = 0; s < ns; s++) {
            uint64_t sd = seed + s;
            int grc = gen ? gen_trace(gspecs[v], gpus, sd, &tr) : 0;
            if (grc) {
                rc = grc;
                goto cleanup;
            }
            if (gen && have_window && window_check(&tr, window, win_start, win_end, 1, sd))
                goto cleanup;
            /* the report names the workload of the runs it draws: the first value's first seed */
            if (!v && !s) snprintf(first_sha, sizeof first_sha, "%s", tr.sha256);
            for (size_t p = 0; p < np; p++) {
                size_t i = (v * np + p) * ns + s;
                seeds[i] = sd;
                gs_params rpar;
                run_params(&params, &sw, v, sweep_param, &items.v[p], &rpar);
                progress_ctx pc = {items.v[p].label, !strcmp(progress, "always") ||
                                                         (!strcmp(progress, "auto") && tty)};
                gs_engine_opts eo = eopts;
                eo.seed = sd;
                gs_sim_opts o = {cluster,
                                 runas[p],
                                 &rpar,
                                 eo,
                                 events_path ? &ev : NULL,
                                 on_progress,
                                 &pc,
                                 items.v[p].label,
                                 interference,
                                 retune,
                                 have_window,
                                 win_start,
                                 win_end};
                gs_diag_init(&d, trace);
                if (gs_sim_run(&o, &tr, &res[i], &d)) {
                    if (pc.on) fputc('\n', stderr);
                    cli_diag(&d);
                    gs_params_release(&rpar);
                    rc = EXIT_USAGE;
                    goto cleanup;
                }
                if (pc.on) fprintf(stderr, "\r%-70s\r", "");
                nallrej += all_rejected(&res[i], items.v[p].label);
                gs_run_info info = {tr.path,
                                    tr.sha256,
                                    gs_trace_format_name(tr.format),
                                    cluster,
                                    csha[0] ? csha : NULL,
                                    events_path,
                                    events_path ? ev.sha256 : NULL,
                                    sd,
                                    &rpar};
                char dir[4096];
                snprintf(dir, sizeof dir, "%s", out);
                if (sweep_arg) path_add(dir, sizeof dir, sw.key, "=", sw.values[v]);
                if (!single && (np > 1 || ns == 1))
                    path_add(dir, sizeof dir, items.v[p].label, "", "");
                if (ns > 1) {
                    char sn[32];
                    snprintf(sn, sizeof sn, "seed-%llu", (unsigned long long)sd);
                    path_add(dir, sizeof dir, sn, "", "");
                }
                rc = write_run(dir, &res[i], &info);
                gs_params_release(&rpar);
                if (rc) goto cleanup;
                rc = EXIT_USAGE;
                /* the report draws the first seed's (and first value's) runs in full */
                if (v || s) gs_sim_result_shrink(&res[i]);
            }
        }

    gs_run_info info = {gen ? trace : tr.path,
                        first_sha,
                        gs_trace_format_name(tr.format),
                        cluster,
                        csha[0] ? csha : NULL,
                        events_path,
                        events_path ? ev.sha256 : NULL,
                        seed,
                        &params};
    char path[4096];
    if (ns == 1 && !sweep_arg) {
        if (np > 1) {
            snprintf(path, sizeof path, "%s/compare.csv", out);
            if (gs_write_compare(path, rp, np)) goto io_fail;
            snprintf(path, sizeof path, "%s/compare-vcs.csv", out);
            if (gs_write_vcs(path, rp, np)) goto io_fail;
            snprintf(path, sizeof path, "%s/compare-users.csv", out);
            if (gs_write_users(path, rp, np)) goto io_fail;
            snprintf(path, sizeof path, "%s/compare-sizes.csv", out);
            if (gs_write_sizes(path, rp, np)) goto io_fail;
            snprintf(path, sizeof path, "%s/report.html", out);
            if (gs_write_report(path, rp, np, &info)) goto io_fail;
        }
        if (!quiet) gs_print_compare(stdout, rp, np);
    } else {
        gs_agg agg;
        if (gs_agg_build(rp, nv, np, ns, &agg)) abort();
        const char *const *vals = (const char *const *)sw.values;
        snprintf(path, sizeof path, "%s/%s", out, sweep_arg ? "sweep.csv" : "compare.csv");
        if (gs_write_agg(path, &agg, sweep_arg ? sw.key : NULL, vals)) {
            gs_agg_release(&agg);
            goto io_fail;
        }
        snprintf(path, sizeof path, "%s/runs.csv", out);
        if (gs_write_runs(path, rp, nr, seeds, sweep_arg ? sw.key : NULL, vals, np * ns)) {
            gs_agg_release(&agg);
            goto io_fail;
        }
        /* the first value's first seed, one run per policy, for the distributions */
        gs_sim_result **first = calloc(np, sizeof *first);
        if (!first) abort();
        for (size_t p = 0; p < np; p++) first[p] = rp[p * ns];
        snprintf(path, sizeof path, "%s/report.html", out);
        gs_report_agg ra = {&agg, sweep_arg ? sw.key : NULL, vals, seed};
        int bad = gs_write_report_ex(path, first, np, &info, &ra) != 0;
        free(first);
        if (!quiet) gs_print_agg(stdout, &agg, sweep_arg ? sw.key : NULL, vals);
        gs_agg_release(&agg);
        if (bad) goto io_fail;
    }
    rc = EXIT_OK;
    if (nskip || nallrej) {
        /* the outputs are written, but the comparison is not what was asked for */
        if (nskip)
            cli_err("%zu policy item%s skipped (see the warning above)", nskip,
                    nskip == 1 ? "" : "s");
        rc = EXIT_USAGE;
    }
    goto cleanup;
io_fail:
    cli_err("cannot write '%s': %s", path, strerror(errno));
    rc = EXIT_RUNTIME;
cleanup:
    for (size_t i = 0; i < nr; i++) gs_sim_result_release(&res[i]);
    free(res);
    free(rp);
    free(seeds);
    for (size_t v = 0; specs && v < nv; v++) {
        free(specs[v]);
        gs_gen_spec_destroy(gspecs[v]);
    }
    free(specs);
    free(gspecs);
    free(names);
    free(runas);
    gs_events_release(&ev);
    gs_trace_release(&tr);
    gs_sweep_release(&sw);
    gs_policy_items_release(&items);
done:
    gs_params_release(&params);
    cli_plugins_release(&plugins); /* after every engine */
    return rc;
}
