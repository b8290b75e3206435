/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - the gsched program: dispatch to subcommands.
 * Invariant: data goes to stdout, diagnostics and progress to stderr.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

void cli_diag(const gs_diag *d)
{
    char buf[1024];
    gs_diag_format(d, buf, sizeof buf);
    fprintf(stderr, "gsched: %s\n", buf);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gsched: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_mkdirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gsched <command> [options]\n"
               "\n"
               "Simulation:\n"
               "  sim        replay a trace on a modelled cluster under one or more policies\n"
               "  policies   list the scheduling policies\n"
               "  scenario   run scenario files and check their expectations\n"
               "  vcgen      write a HiveD config whose VCs are a trace's VCs\n"
               "  gen        generate a workload (Poisson arrivals at a load, Gavel's job mix)\n"
               "\n"
               "Live scheduler (docs/daemon.md):\n"
               "  serve      run the scheduler daemon (REST API, SQLite state, executors)\n"
               "  submit     submit a job: FILE (YAML/JSON spec) or -- CMD [ARG...]\n"
               "  queue      list jobs (ID VC NAME USER ST GPUS AGE REASON POS)\n"
               "  cancel     cancel jobs\n"
               "  hold       hold pending jobs (scontrol hold)\n"
               "  release    release held jobs (scontrol release)\n"
               "  resize     resize a running elastic job (--gpus N)\n"
               "  describe   details of a job or node, with events and why it waits\n"
               "  nodes      nodes and their GPUs\n"
               "  node       drain, resume, take down, mark bad/good a node (admin)\n"
               "  vcs        virtual clusters: guarantee, usage, queue\n"
               "  logs       output of a job's task\n"
               /* issue 16 lanes: usage lines (events; accounting; job control) */
               "  events     the daemon's events; -f follows them as they happen\n"
               "  history    finished jobs: times, exit code, GPU-hours (like sacct)\n"
               "  requeue    stop running jobs and queue them again (scontrol requeue)\n"
               "  update     change a job: priority, time limit, GPUs, VC, name (scontrol update)\n"
               "  run        run one command as an interactive job, stdio attached (like srun)\n"
               "  gpus       this machine's GPUs through NVML with health readings (no daemon)\n"
               "  token      make tokens-file lines ('token hash')\n"
               "\n"
               /* issue 17 lanes: usage lines (cudackpt) */
               "GPUs of this machine (no daemon):\n"
               "  cuda-ckpt  CUDA checkpoint of processes: state, suspend, resume\n"
               "\n"
               "Other:\n"
               "  version    print the version\n"
               "  help       this text; 'gsched <command> --help' for a command\n"
               "\n"
               "Exit codes: 0 ok, 1 runtime error, 2 usage or input error, 3 daemon\n"
               "unreachable, 4 not found.\n");
}

static void print_policy(const gs_policy_ops *p, const char *plugin)
{
    printf("%-18s %s%s", p->name, p->summary,
           p->flags & GS_POLICY_ORACLE ? " [oracle: reads true durations]" : "");
    if (plugin) printf(" [plugin: %s]", plugin);
    putchar('\n');
}

/* gsched policies [--policy-plugin FILE.so]...: the compiled-in ones, then the plugins' */
int cmd_policies(int argc, char **argv)
{
    cli_plugins plugins = {0};
    int rc = EXIT_OK;
    for (int i = 1; i < argc && rc == EXIT_OK; i++) {
        const char *v = !strncmp(argv[i], "--policy-plugin=", 16)             ? argv[i] + 16
                        : !strcmp(argv[i], "--policy-plugin") && i + 1 < argc ? argv[++i]
                                                                              : NULL;
        if (!v) {
            cli_err("policies: unexpected argument '%s' (usage: gsched policies "
                    "[--policy-plugin FILE.so]...)",
                    argv[i]);
            rc = EXIT_USAGE;
        } else if (cli_plugin_load(&plugins, v)) {
            rc = EXIT_USAGE;
        }
    }
    if (rc == EXIT_OK) {
        for (size_t i = 0; gs_policy_at(i); i++) print_policy(gs_policy_at(i), NULL);
        for (size_t i = 0; i < plugins.n; i++) print_policy(plugins.ops[i], plugins.path[i]);
    }
    cli_plugins_release(&plugins);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "sim")) return cmd_sim(argc - 1, argv + 1);
    if (!strcmp(cmd, "policies")) return cmd_policies(argc - 1, argv + 1);
    if (!strcmp(cmd, "scenario")) return cmd_scenario(argc - 1, argv + 1);
    if (!strcmp(cmd, "vcgen")) return cmd_vcgen(argc - 1, argv + 1);
    if (!strcmp(cmd, "gen")) return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve")) return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "__shim")) return cmd_shim(argc - 1, argv + 1);
    if (!strcmp(cmd, "token")) return cmd_token(argc - 1, argv + 1);
    if (!strcmp(cmd, "submit")) return cmd_submit(argc - 1, argv + 1);
    if (!strcmp(cmd, "queue") || !strcmp(cmd, "ls")) return cmd_queue(argc - 1, argv + 1);
    if (!strcmp(cmd, "nodes")) return cmd_nodes(argc - 1, argv + 1);
    if (!strcmp(cmd, "node")) return cmd_node(argc - 1, argv + 1);
    if (!strcmp(cmd, "vcs")) return cmd_vcs(argc - 1, argv + 1);
    if (!strcmp(cmd, "cancel")) return cmd_cancel(argc - 1, argv + 1);
    if (!strcmp(cmd, "hold") || !strcmp(cmd, "release")) return cmd_hold(argc - 1, argv + 1);
    if (!strcmp(cmd, "describe")) return cmd_describe(argc - 1, argv + 1);
    if (!strcmp(cmd, "resize")) return cmd_resize(argc - 1, argv + 1);
    if (!strcmp(cmd, "logs")) return cmd_logs(argc - 1, argv + 1);
    /* issue 16 lanes: each adds its commands under its own marker */
    /* events */
    if (!strcmp(cmd, "events")) return cmd_events(argc - 1, argv + 1);

    /* accounting */
    if (!strcmp(cmd, "history")) return cmd_history(argc - 1, argv + 1);

    /* job control */
    if (!strcmp(cmd, "requeue")) return cmd_requeue(argc - 1, argv + 1);
    if (!strcmp(cmd, "update")) return cmd_update(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "gpus")) return cmd_gpus(argc - 1, argv + 1); /* GPU health (issue 17) */

    /* issue 17 lanes: each adds its commands under its own marker */
    /* cudackpt */
    if (!strcmp(cmd, "cuda-ckpt")) return cmd_cudackpt(argc - 1, argv + 1);

    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("gsched %s\n", GSCHED_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return EXIT_OK;
    }
    cli_err("unknown command '%s'", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
