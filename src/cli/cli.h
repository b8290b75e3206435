/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - subcommands of the gsched program and shared CLI helpers.
 *
 * Exit codes (documented in docs/cli.md):
 *   0  success
 *   1  runtime error (I/O failure, daemon error)
 *   2  usage or input error (bad flag, bad file: "file:line:col: message")
 *   3  daemon unreachable
 *   4  not found
 */
#ifndef GSCHED_CLI_H
#define GSCHED_CLI_H

#include "gsched/gsched.h"

#define EXIT_OK          0
#define EXIT_RUNTIME     1
#define EXIT_USAGE       2
#define EXIT_UNREACHABLE 3
#define EXIT_NOTFOUND    4

int cmd_sim(int argc, char **argv);
int cmd_policies(int argc, char **argv);
int cmd_scenario(int argc, char **argv);
int cmd_vcgen(int argc, char **argv);
int cmd_gen(int argc, char **argv);
/* Live scheduler commands (cmd_serve.c, cmd_submit.c, cmd_queue.c, cmd_job.c). */
int cmd_serve(int argc, char **argv);
int cmd_shim(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_nodes(int argc, char **argv);
int cmd_vcs(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_hold(int argc, char **argv); /* argv[0]: "hold" or "release" */
int cmd_resize(int argc, char **argv);
int cmd_node(int argc, char **argv); /* gsched node bad|good NAME */
int cmd_describe(int argc, char **argv);
int cmd_logs(int argc, char **argv);
/* issue 16 lanes: each declares its commands under its own marker */
/* events (cmd_events.c) */
int cmd_events(int argc, char **argv);

/* accounting (cmd_history.c) */
int cmd_history(int argc, char **argv); /* finished jobs, like sacct */

/* job control (cmd_jobctl.c) */
int cmd_requeue(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_run(int argc, char **argv); /* interactive job, like srun (cmd_run.c) */
/* cmd_submit.c for gsched run: submit argv's interactive job; its id in *id.  An exit code. */
struct cli_conn;
/* A job named on the command line: an id, or ARRAY_TASK (123_7, as squeue prints it), which
 * the daemon resolves: 1 when S is one, else 0. */
int cli_valid_jobref(const char *s);
int cli_submit_interactive(int argc, char **argv, struct cli_conn *k, int64_t *id);

/* issue 17 lanes: each declares its commands under its own marker */
/* cudackpt (cmd_cudackpt.c): the CUDA checkpoint API on local processes, no daemon */
int cmd_cudackpt(int argc, char **argv);
/* GPU health (cmd_gpus.c, issue 17): this machine's GPUs through NVML, no daemon */
int cmd_gpus(int argc, char **argv);

/* Print "gsched: " + diag as file:line:col: message to stderr. */
void cli_diag(const gs_diag *d);
/* Print "gsched: <fmt>" to stderr. */
void cli_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* mkdir -p; 0 or -1 (errno set). */
int cli_mkdirs(const char *path);

/* Policy plugins loaded with --policy-plugin (plugin.c): ops[i] from path[i]. */
typedef struct cli_plugins {
    void **handle;
    const gs_policy_ops **ops;
    const char **path; /* borrowed (argv) */
    size_t n;
} cli_plugins;
/* Load FILE (dlopen), check it and add its table.  0, or -1 after a message. */
int cli_plugin_load(cli_plugins *p, const char *path);
/* Unload every plugin (after the engines using them are gone). */
void cli_plugins_release(cli_plugins *p);

#endif
