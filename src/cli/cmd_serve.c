/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_serve.c - `gsched serve` (the live scheduler daemon), `gsched token`
 * (tokens-file lines) and the hidden `gsched __shim` (runs one task).
 *
 * Contract (docs/daemon.md):
 *   gsched serve [--cluster SPEC] [--db FILE] [--socket PATH] [--listen ADDR:PORT]
 *                [--tokens FILE | --insecure-tcp] [--policy NAME] [--policy-plugin FILE.so]...
 *                [--state-dir DIR] [--set KEY=VALUE]...
 *                [--placement count|consolidate] [--grace DUR] [--default-duration DUR]
 *                [--sync full|normal] [--max-body BYTES] [--max-connections N]
 *                [--port-file FILE] [--pass-env NAME[,NAME...]]... [--log-dir DIR]
 *                [--header-timeout SECS] [--idle-timeout SECS] [--max-conn-per-client N]
 *                [--max-streams N] [--max-user-streams N]
 *                [--max-pending-per-user N] [--submit-rate R[/s]] [--log-cap SIZE]
 *                [--single-user] [--allow-root-jobs] [--cgroup auto|off|DIR]
 *                [--log-file FILE] [--launch-attempts N] [--executor-opt KEY=VALUE]... [-v]
 *                [--stats-interval SECS] [--stats-keep DAYS]
 *                [--gpu-health-interval DUR|off] [--gpu-xid-hold DUR]
 *                [--on-gpu-fault requeue|keep] [--gpu-health-node NAME]
 *   gsched token hash --user NAME [--admin] [--token TOKEN] [--iterations N]
 *                     [--unix-user ACCOUNT]
 * Invariant: configuration errors exit 2 before anything listens.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "daemon.h"

static void serve_usage(FILE *f)
{
    fprintf(f,
            "usage: gsched serve [--cluster SPEC] [options]\n"
            "\n"
            "Run the live scheduler: a REST API, durable state in SQLite, tasks run on this\n"
            "machine.  Stop with SIGTERM or Ctrl-C; running tasks keep running and are adopted\n"
            "by the next start.\n"
            "\n"
            "  --cluster SPEC        GPUs to schedule: shorthand (4, 2x8, with :TYPE; types\n"
            "                        as parts: 2x4:V100,1x4:K80), a Tiresias cluster CSV, a\n"
            "                        HiveD config or Gavel's cluster_specs.json (fake GPUs);\n"
            "                        default: the GPUs NVML finds on this machine.\n"
            "                        With a cluster executor (slurm) optional: the cluster\n"
            "                        comes from the manager, and a given one (e.g. a HiveD\n"
            "                        config naming its nodes) is checked against it\n"
            "  --db FILE             SQLite database (default " GSD_DEFAULT_DB ")\n"
            "  --state-dir DIR       run files of tasks (default: DB name with .d)\n"
            "  --log-dir DIR         task logs (default, as root: /var/log/gsched/DBNAME-ID,\n"
            "                        others: ~/.local/state/gsched/logs/DBNAME-ID; ID is kept\n"
            "                        in the database)\n"
            "  --socket PATH         serve the API on this Unix socket; clients are identified\n"
            "                        by the kernel (SO_PEERCRED).  Default, when --listen is\n"
            "                        not given: /run/gsched/gsched.sock as root (every local\n"
            "                        user may connect), else $XDG_RUNTIME_DIR/gsched.sock or\n"
            "                        /tmp/gsched-UID/gsched.sock (0600: this user only)\n"
            "  --listen ADDR:PORT    also (or, without --socket, only) serve HTTP over TCP;\n"
            "                        port 0 = any free port.  Needs --tokens, or on loopback\n"
            "                        --insecure-tcp\n"
            "  --insecure-tcp        TCP without tokens: every client is an admin and names\n"
            "                        its user in X-Gsched-User, unchecked (any local user may\n"
            "                        act as any other, root included); loopback only\n"
            "  --policy NAME         scheduling policy (default fifo; see 'gsched policies')\n"
            "  --policy-plugin FILE.so  load a policy from a shared object (repeatable); it\n"
            "                        runs inside the daemon, with its privileges: --policy\n"
            "                        NAME then serves it (docs/writing-a-policy.md)\n"
            "  --set KEY=VALUE       policy/engine parameter, repeatable (docs/policies.md);\n"
            "                        pollux_traces=DIR: the goodput model of elastic jobs\n"
            "  --placement MODE      consolidate (default) or count\n"
            "  --tokens FILE         bearer tokens of TCP clients (lines from 'gsched token\n"
            "                        hash'); mandatory for TCP unless --insecure-tcp\n"
            "  --grace DUR           SIGTERM -> SIGKILL grace period (default 30s)\n"
            "  --default-duration DUR  run-time estimate of jobs without duration or time\n"
            "                        limit, for duration-aware policies (default 1h)\n"
            "  --sync full|normal    SQLite synchronous mode (default full; see docs/daemon.md)\n"
            "  --max-body BYTES      request body limit (default 1048576)\n"
            "  --max-connections N   concurrent connections per listener (default 256; 1/8\n"
            "                        is kept for clients that send their request at once)\n"
            "  --max-conn-per-client N  connections per client address / socket uid (64)\n"
            "  --header-timeout SECS a connection must send its request head within SECS (5)\n"
            "  --idle-timeout SECS   close a connection silent for SECS (30)\n"
            "  --max-streams N       event streams (GET /v1/events) open at once (64); each\n"
            "                        holds a connection; per client address / socket uid at\n"
            "                        most half of --max-conn-per-client\n"
            "  --max-user-streams N  event streams one user may hold open (8)\n"
            "  --max-pending-per-user N  pending jobs a user may have; more submits get 429\n"
            "                        (default 0: unlimited)\n"
            "  --submit-rate R[/s]   submits per second per user (burst R); more get 429\n"
            "                        (default 0: unlimited)\n"
            "  --port-file FILE      write the bound TCP port to FILE once serving\n"
            "  --executor NAME       what runs the tasks (default local: processes on this\n"
            "                        machine; see docs/daemon.md)\n"
            "  --executor-opt KEY=VALUE  a setting of the executor, repeatable (e.g. slurm:\n"
            "                        partitions=gpu; an unknown key is refused, naming the\n"
            "                        known ones; see docs/slurm.md).  local:\n"
            "                        suspend=auto|cuda|sigstop (auto, the default: CUDA\n"
            "                        checkpoint when the driver has the API, which frees a\n"
            "                        suspended job's GPU memory; else SIGSTOP) and\n"
            "                        cuda_lib=PATH (the libcuda.so.1 to load; docs/daemon.md)\n"
            "  --pass-env NAME[,NAME...]  daemon environment variables every job gets,\n"
            "                        repeatable (jobs see nothing else of the daemon's\n"
            "                        environment; PATH defaults to a fixed system path)\n"
            "  --log-cap SIZE        most output a task's log keeps (default 1G; 0 = no cap);\n"
            "                        the rest is discarded after a marker line.  SIZE: bytes,\n"
            "                        or with K, M, G, T (powers of 1024; Ki, KiB... too)\n"
            "  --single-user         run every job as this daemon's own user, whoever submits\n"
            "                        it (started as root: every job runs as root).  Without\n"
            "                        it a daemon running as root runs each job as its owner's\n"
            "                        Unix account (token or socket users only); a daemon not\n"
            "                        running as root is always single-user\n"
            "  --allow-root-jobs     let a user whose Unix account is root (uid 0) run jobs\n"
            "                        on a daemon running as root (refused otherwise)\n"
            "  --cgroup auto|off|DIR  track every process of a task in a cgroup v2 of its own\n"
            "                        (a task ends when its cgroup is empty; all of it is\n"
            "                        killed at its end; cpus/memory enforced where the cpu and\n"
            "                        memory controllers can be enabled).  auto (default): under\n"
            "                        the daemon's own cgroup when one can be made there, else\n"
            "                        off, saying why; off: the task shim kills its remaining\n"
            "                        process tree (see docs/daemon.md, Security)\n"
            "  --launch-attempts N   launches of a job that fail (workdir missing, command\n"
            "                        not executable) before it is FAILED (default 3)\n"
            "  --log-file FILE       the daemon's log (appended, mode 0600; default stderr);\n"
            "                        SIGHUP reopens it (logrotate)\n"
            "  --retention DAYS      finished jobs that ended more than DAYS days ago (a\n"
            "                        number, or a duration: 12h, 30m) move from the job\n"
            "                        tables into one compact accounting row each (gsched\n"
            "                        history lists them as before); default: kept forever\n"
            "  --stats-interval SECS  a sample of the cluster (GPUs allocated, jobs pending\n"
            "                        and running, started, finished, per VC) for the\n"
            "                        dashboard's charts at most every SECS when something\n"
            "                        changed (default 10; 0: none; GET /v1/stats)\n"
            "  --stats-keep DAYS     days of samples kept (default 7)\n"
            "  --gpu-health-interval DUR|off  read this machine's GPUs' health through NVML\n"
            "                        (lost, Xid errors, uncorrected ECC, pages pending\n"
            "                        retirement, row remapping) every DUR (default 10s; on\n"
            "                        by default when the GPUs came from NVML discovery; with\n"
            "                        --cluster only when given); an unhealthy GPU takes no\n"
            "                        new job; off: not watched\n"
            "  --gpu-xid-hold DUR    a GPU stays unhealthy this long after a critical Xid\n"
            "                        error (default 5m)\n"
            "  --on-gpu-fault requeue|keep  the running job on a GPU found unhealthy: stopped\n"
            "                        (SIGTERM, grace) and requeued from its checkpoint\n"
            "                        (default), or left running\n"
            "  --gpu-health-node NAME  the node of --cluster whose GPUs NVML sees (default:\n"
            "                        the node named like this machine)\n"
            "  -v, --verbose         log every request\n");
}

static int parse_dur_flag(const char *flag, const char *v, gs_time *out)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gsd_parse_duration(v, GS_SEC, out, &d)) {
        cli_err("%s: '%s' is not a duration: %s (e.g. 30s, 5m, 1h)", flag, v, d.msg);
        return -1;
    }
    return 0;
}

/* A byte size: NUMBER with an optional unit K, M, G or T (powers of 1024; also written Ki, KB,
 * KiB, ...; case-insensitive), or B / none for bytes; the units of job specs' 'memory'.  0 or
 * -1. */
static int parse_size(const char *s, int64_t *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (errno || e == s || !(v >= 0) || *s == ' ') return -1;
    double mul = 1;
    const char *u = e;
    if (*u) {
        switch (*u | 0x20) {
        case 'b': mul = 1; break;
        case 'k': mul = 1024.0; break;
        case 'm': mul = 1024.0 * 1024; break;
        case 'g': mul = 1024.0 * 1024 * 1024; break;
        case 't': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: return -1;
        }
        if ((*u | 0x20) != 'b') {
            u++;
            if (*u == 'i' || *u == 'I') u++;
            if (*u == 'b' || *u == 'B') u++;
        } else {
            u++;
        }
        if (*u) return -1;
    }
    double bytes = v * mul;
    if (bytes > 9.0e18) return -1;
    *out = (int64_t)(bytes + 0.5);
    return 0;
}

/* --pass-env NAME[,NAME...]: append each name (a shell variable name, not a gsched one) to
 * *v.  0, or -1 after a message. */
static int add_pass_env(const char *arg, char ***v, size_t *n)
{
    const char *p = arg;
    for (;;) {
        size_t len = strcspn(p, ",");
        int ok = len > 0 && !(p[0] >= '0' && p[0] <= '9');
        for (size_t i = 0; ok && i < len; i++)
            ok = (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') ||
                 (p[i] >= '0' && p[i] <= '9') || p[i] == '_';
        if (!ok) {
            cli_err("--pass-env: expected NAME[,NAME...] of environment variables, got '%s'", arg);
            return -1;
        }
        char *name = strndup(p, len);
        if (!name) abort();
        if (gsd_env_reserved(name)) {
            cli_err("--pass-env: %s is set by gsched for every job and cannot be passed", name);
            free(name);
            return -1;
        }
        char **nv = realloc(*v, (*n + 1) * sizeof **v);
        if (!nv) abort();
        *v = nv;
        (*v)[(*n)++] = name;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

int cmd_serve(int argc, char **argv)
{
    static const struct option longopts[] = {{"cluster", required_argument, NULL, 'c'},
                                             {"db", required_argument, NULL, 'd'},
                                             {"state-dir", required_argument, NULL, 'D'},
                                             {"listen", required_argument, NULL, 'l'},
                                             {"policy", required_argument, NULL, 'p'},
                                             {"set", required_argument, NULL, 'S'},
                                             {"placement", required_argument, NULL, 'P'},
                                             {"tokens", required_argument, NULL, 't'},
                                             {"grace", required_argument, NULL, 'g'},
                                             {"default-duration", required_argument, NULL, 'u'},
                                             {"sync", required_argument, NULL, 'y'},
                                             {"max-body", required_argument, NULL, 'b'},
                                             {"max-connections", required_argument, NULL, 'm'},
                                             {"port-file", required_argument, NULL, 'f'},
                                             {"executor", required_argument, NULL, 'x'},
                                             {"pass-env", required_argument, NULL, 'E'},
                                             {"executor-opt", required_argument, NULL, 'o'},
                                             {"log-cap", required_argument, NULL, 'L'},
                                             {"log-dir", required_argument, NULL, 'O'},
                                             {"single-user", no_argument, NULL, 'U'},
                                             {"allow-root-jobs", no_argument, NULL, 'R'},
                                             {"socket", required_argument, NULL, 'k'},
                                             {"insecure-tcp", no_argument, NULL, 'I'},
                                             {"header-timeout", required_argument, NULL, 'H'},
                                             {"idle-timeout", required_argument, NULL, 'T'},
                                             {"max-conn-per-client", required_argument, NULL, 'C'},
                                             {"max-pending-per-user", required_argument, NULL, 'Q'},
                                             {"submit-rate", required_argument, NULL, 'W'},
                                             {"cgroup", required_argument, NULL, 'G'},
                                             {"log-file", required_argument, NULL, 'F'},
                                             {"launch-attempts", required_argument, NULL, 'A'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             /* issue 16, accounting */
                                             {"retention", required_argument, NULL, 'K'},
                                             {"max-streams", required_argument, NULL, 1100},
                                             {"max-user-streams", required_argument, NULL, 1101},
                                             {"policy-plugin", required_argument, NULL, 'Z'},
                                             {"stats-interval", required_argument, NULL, 1001},
                                             {"stats-keep", required_argument, NULL, 1002},
                                             /* issue 17, GPU health */
                                             {"gpu-health-interval", required_argument, NULL, 1200},
                                             {"gpu-xid-hold", required_argument, NULL, 1201},
                                             {"on-gpu-fault", required_argument, NULL, 1202},
                                             {"gpu-health-node", required_argument, NULL, 1203},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    gsd_opts o;
    gsd_opts_init(&o);
    gs_params params;
    gs_params_init(&params);
    int rc = EXIT_USAGE, opt;
    char **pass = NULL; /* --pass-env names (each its own copy) */
    size_t npass = 0;
    const char **xopts = NULL; /* --executor-opt KEY=VALUE (argv strings) */
    size_t nxopts = 0;
    cli_plugins plugins = {0};
    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:d:l:p:S:vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': o.cluster = optarg; break;
        case 'd': o.db = optarg; break;
        case 'D': o.state_dir = optarg; break;
        case 'O': o.log_dir = optarg; break;
        case 'l': o.listen = optarg; break;
        case 'k': o.socket = optarg; break;
        case 'I': o.insecure_tcp = 1; break;
        case 'H':
        case 'W': {
            /* seconds (--header-timeout) or submits per second, "R" or "R/s" (--submit-rate) */
            char *e;
            errno = 0;
            double v = strtod(optarg, &e);
            if (opt == 'W' && !strcmp(e, "/s")) e += 2;
            if (errno || *e || !(v >= (opt == 'H' ? 0.1 : 0)) || v > 1e6) {
                cli_err("--%s: '%s' is not a %s", opt == 'H' ? "header-timeout" : "submit-rate",
                        optarg,
                        opt == 'H' ? "number of seconds (0.1 or more)" : "rate (e.g. 5 or 5/s)");
                goto done;
            }
            if (opt == 'H')
                o.header_timeout = v;
            else
                o.submit_rate = v;
            break;
        }
        case 'T':
        case 'C':
        case 'Q': {
            char *e;
            errno = 0;
            unsigned long long v = strtoull(optarg, &e, 10);
            const char *name = opt == 'T'   ? "idle-timeout"
                               : opt == 'C' ? "max-conn-per-client"
                                            : "max-pending-per-user";
            if (errno || *e || optarg[0] == '-' || v > 1000000ULL || (opt != 'Q' && v < 1)) {
                cli_err("--%s: '%s' is out of range", name, optarg);
                goto done;
            }
            if (opt == 'T')
                o.idle_timeout = (unsigned)v;
            else if (opt == 'C')
                o.max_conn_per_client = (unsigned)v;
            else
                o.max_pending_per_user = (unsigned)v;
            break;
        }
        case 1200: /* GPU health (gpuhealth.c) */
            if (!strcmp(optarg, "off")) {
                o.gpu_health_interval = -1;
                break;
            }
            if (parse_dur_flag("--gpu-health-interval", optarg, &o.gpu_health_interval)) goto done;
            if (o.gpu_health_interval < GS_SEC / 10) {
                cli_err("--gpu-health-interval must be at least 0.1s (or off)");
                goto done;
            }
            break;
        case 1201:
            if (parse_dur_flag("--gpu-xid-hold", optarg, &o.gpu_xid_hold)) goto done;
            if (o.gpu_xid_hold < 0) {
                cli_err("--gpu-xid-hold must not be negative");
                goto done;
            }
            break;
        case 1202:
            if (strcmp(optarg, "requeue") && strcmp(optarg, "keep")) {
                cli_err("--on-gpu-fault: '%s' is not requeue or keep", optarg);
                goto done;
            }
            o.on_gpu_fault_keep = !strcmp(optarg, "keep");
            break;
        case 1203: o.gpu_health_node = optarg; break;
        case 1001: /* dashboard: cluster samples (GET /v1/stats) */
        case 1002: {
            char *e;
            errno = 0;
            long v = strtol(optarg, &e, 10);
            if (errno || *e || !*optarg || v < (opt == 1001 ? 0 : 1) || v > 3650) {
                cli_err("--%s: '%s' is not a number of %s",
                        opt == 1001 ? "stats-interval" : "stats-keep", optarg,
                        opt == 1001 ? "seconds (0 to 3650; 0: no samples)" : "days (1 to 3650)");
                goto done;
            }
            if (opt == 1001)
                o.stats_interval = v ? (int)v : -1;
            else
                o.stats_keep_days = (int)v;
            break;
        }
        case 1100: /* events: --max-streams, --max-user-streams */
        case 1101: {
            char *e;
            errno = 0;
            unsigned long long v = strtoull(optarg, &e, 10);
            if (errno || *e || optarg[0] == '-' || v < 1 || v > 100000ULL) {
                cli_err("--%s: '%s' is out of range (1 to 100000)",
                        opt == 1100 ? "max-streams" : "max-user-streams", optarg);
                goto done;
            }
            if (opt == 1100)
                o.max_streams = (unsigned)v;
            else
                o.max_streams_per_user = (unsigned)v;
            break;
        }
        case 'p': o.policy = optarg; break;
        case 'Z':
            if (cli_plugin_load(&plugins, optarg)) goto done;
            break;
        case 'K': { /* --retention DAYS (issue 16, accounting): days, or a duration with a unit */
            char *e;
            errno = 0;
            double days = strtod(optarg, &e);
            if (!*e && e != optarg && !errno && days > 0 && days <= 36500) {
                o.retention = (gs_time)(days * 86400.0 * (double)GS_SEC);
            } else if (parse_dur_flag("--retention", optarg, &o.retention)) {
                goto done;
            }
            if (o.retention <= 0) {
                cli_err("--retention must be positive (days, or a duration such as 12h)");
                goto done;
            }
            break;
        }
        case 't': o.tokens = optarg; break;
        case 'f': o.port_file = optarg; break;
        case 'x': o.executor = optarg; break;
        case 'G': o.cgroup = optarg; break;
        case 'F': o.log_file = optarg; break;
        case 'v': o.verbose = 1; break;
        case 'L':
            if (parse_size(optarg, &o.log_cap)) {
                cli_err("--log-cap: expected a size such as 1G, 512M, 100000 (bytes) or 0 (no "
                        "cap), got '%s'",
                        optarg);
                goto done;
            }
            break;
        case 'U': o.single_user = 1; break;
        case 'R': o.allow_root_jobs = 1; break;
        case 'E':
            if (add_pass_env(optarg, &pass, &npass)) goto done;
            break;
        case 'o': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                cli_err("--executor-opt: expected KEY=VALUE, got '%s'", optarg);
                goto done;
            }
            const char **nv = realloc(xopts, (nxopts + 1) * sizeof *xopts);
            if (!nv) abort();
            xopts = nv;
            xopts[nxopts++] = optarg;
            break;
        }
        case 'S':
            if (gs_params_set_kv(&params, optarg)) {
                cli_err("--set: expected KEY=VALUE, got '%s'", optarg);
                goto done;
            }
            break;
        case 'P': {
            int m = gs_place_mode_parse(optarg);
            if (m < 0) {
                cli_err("--placement: expected count or consolidate, got '%s'", optarg);
                goto done;
            }
            o.placement = (gs_place_mode)m;
            o.placement_set = 1;
            break;
        }
        case 'g':
            if (parse_dur_flag("--grace", optarg, &o.grace)) goto done;
            break;
        case 'u':
            if (parse_dur_flag("--default-duration", optarg, &o.default_duration)) goto done;
            if (o.default_duration <= 0) {
                cli_err("--default-duration must be positive");
                goto done;
            }
            break;
        case 'y':
            if (!strcmp(optarg, "full"))
                o.sync_full = 1;
            else if (!strcmp(optarg, "normal"))
                o.sync_full = 0;
            else {
                cli_err("--sync: expected full or normal, got '%s'", optarg);
                goto done;
            }
            break;
        case 'A': {
            char *e;
            errno = 0;
            long v = strtol(optarg, &e, 10);
            if (errno || *e || e == optarg || v < 1 || v > 100) {
                cli_err("--launch-attempts: expected 1..100, got '%s'", optarg);
                goto done;
            }
            o.launch_attempts = (int)v;
            break;
        }
        case 'b':
        case 'm': {
            char *e;
            errno = 0;
            unsigned long long v = strtoull(optarg, &e, 10);
            if (errno || *e || v < 1 || v > (opt == 'b' ? (1ULL << 30) : 100000ULL)) {
                cli_err("--%s: '%s' is out of range", opt == 'b' ? "max-body" : "max-connections",
                        optarg);
                goto done;
            }
            if (opt == 'b')
                o.max_body = (size_t)v;
            else
                o.max_connections = (unsigned)v;
            break;
        }
        case 'h':
            serve_usage(stdout);
            rc = EXIT_OK;
            goto done;
        default: serve_usage(stderr); goto done;
        }
    }
    if (optind < argc) {
        cli_err("serve: unexpected argument '%s'", argv[optind]);
        serve_usage(stderr);
        goto done;
    }
    static char defsock[PATH_MAX];
    if (!o.socket && !o.listen) {
        if (gsd_default_socket(1, defsock, sizeof defsock)) {
            cli_err("the default socket path is too long: give --socket PATH");
            goto done;
        }
        o.socket = defsock;
    }
    if (o.insecure_tcp && !o.listen) {
        cli_err("--insecure-tcp applies to --listen only (the socket needs no such option)");
        goto done;
    }
    if (o.listen && !o.tokens && !o.insecure_tcp) {
        cli_err("refusing to listen on %s without --tokens FILE: over TCP anyone who can "
                "connect (every local user) could name any user in X-Gsched-User.  Local users "
                "need no TCP: they "
                "reach the daemon through its Unix socket (--socket), where the kernel says who "
                "they are.  --insecure-tcp accepts the risk (loopback only)",
                o.listen);
        goto done;
    }
    if (o.insecure_tcp && o.tokens) {
        cli_err("--insecure-tcp and --tokens contradict each other: choose one");
        goto done;
    }
    /* Task shims run the daemon's own running binary, /proc/self/exe (exec'd in the forked
     * child it is the file this process was started from, even once that path was replaced
     * or deleted), never its path: whoever can write the directory of build/gsched (a clone
     * of a normal user that root serves from) must not get a binary of theirs run as root. */
    if (access("/proc/self/exe", X_OK) != 0) {
        cli_err("cannot find the gsched binary (/proc/self/exe): %s", strerror(errno));
        rc = EXIT_RUNTIME;
        goto done;
    }
    o.self_exe = NULL;
    o.params = &params;
    /* a plugin's policy is served as an embedder's own table (names never clash) */
    for (size_t i = 0; i < plugins.n; i++)
        if (!strcmp(plugins.ops[i]->name, o.policy ? o.policy : "fifo"))
            o.policy_ops = plugins.ops[i];
    o.pass_env = (const char *const *)pass;
    o.npass_env = npass;
    o.executor_opts = xopts;
    o.nexecutor_opts = nxopts;
    setvbuf(stderr, NULL, _IOLBF, 0);
    rc = gsd_serve(&o);
done:
    gs_params_release(&params);
    for (size_t i = 0; i < npass; i++) free(pass[i]);
    free(pass);
    free(xopts);
    cli_plugins_release(&plugins); /* gsd_serve destroyed its engine */
    return rc;
}

int cmd_shim(int argc, char **argv)
{
    return gsd_shim_main(argc, argv);
}

static void token_usage(FILE *f)
{
    fprintf(f, "usage: gsched token hash --user NAME [--admin] [--token TOKEN] [--iterations N]\n"
               "                         [--unix-user ACCOUNT]\n"
               "\n"
               "Print a line for the daemon's tokens file (--tokens FILE).  Without --token a\n"
               "new random token is made and printed on stderr: hand it to the user (it is not\n"
               "stored anywhere; the file keeps only a salted PBKDF2-SHA256 hash).\n"
               "--unix-user: the Unix account NAME's jobs run as on a daemon running as root\n"
               "(default: the Unix user called NAME).\n");
}

int cmd_token(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "hash")) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            token_usage(stdout);
            return EXIT_OK;
        }
        token_usage(stderr);
        return EXIT_USAGE;
    }
    static const struct option longopts[] = {{"user", required_argument, NULL, 'u'},
                                             {"admin", no_argument, NULL, 'a'},
                                             {"token", required_argument, NULL, 't'},
                                             {"iterations", required_argument, NULL, 'i'},
                                             {"unix-user", required_argument, NULL, 'x'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *user = NULL, *token = NULL, *unix_user = NULL;
    int admin = 0, opt;
    unsigned long iter = GSD_TOKEN_ITERATIONS;
    optind = 1;
    while ((opt = getopt_long(argc - 1, argv + 1, "u:t:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'u': user = optarg; break;
        case 'a': admin = 1; break;
        case 't': token = optarg; break;
        case 'x': unix_user = optarg; break;
        case 'i': {
            char *e;
            iter = strtoul(optarg, &e, 10);
            if (*e || iter < 1000 || iter > 10000000) {
                cli_err("--iterations must be between 1000 and 10000000");
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': token_usage(stdout); return EXIT_OK;
        default: token_usage(stderr); return EXIT_USAGE;
        }
    }
    if (!user) {
        cli_err("token hash needs --user NAME");
        return EXIT_USAGE;
    }
    if (!gsd_user_name_ok(user)) {
        cli_err("invalid user name '%s' (letters, digits, _ - @ . up to 63 characters)", user);
        return EXIT_USAGE;
    }
    if (unix_user && !gsd_user_name_ok(unix_user)) {
        cli_err("--unix-user: invalid account name '%s' (letters, digits, _ - @ . up to 63 "
                "characters)",
                unix_user);
        return EXIT_USAGE;
    }
    char gen[160], line[512];
    if (!token) {
        if (gsd_token_generate(user, gen, sizeof gen)) {
            cli_err("cannot read random bytes from /dev/urandom");
            return EXIT_RUNTIME;
        }
        token = gen;
        fprintf(stderr, "token: %s\n", token);
    } else {
        size_t ul = strlen(user);
        if (strncmp(token, user, ul) || token[ul] != '.' || !token[ul + 1]) {
            cli_err("a token must look like '%s.SECRET' (the daemon finds the user by the prefix)",
                    user);
            return EXIT_USAGE;
        }
        if (strlen(token + ul + 1) < GSD_TOKEN_SECRET_MIN) {
            cli_err("the secret after '%s.' is %zu characters: at least %d are required (leave "
                    "out --token for a random one)",
                    user, strlen(token + ul + 1), GSD_TOKEN_SECRET_MIN);
            return EXIT_USAGE;
        }
    }
    if (gsd_token_line(user, admin, token, (unsigned)iter, line, sizeof line)) {
        cli_err("cannot hash the token");
        return EXIT_RUNTIME;
    }
    if (unix_user)
        printf("%s:%s\n", line, unix_user);
    else
        printf("%s\n", line);
    return EXIT_OK;
}
