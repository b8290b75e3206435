/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_jobctl.c - job control commands (issue 16): `gsched requeue ID... [--hold]`
 * (scontrol requeue / requeuehold: POST /v1/jobs/ID/requeue).
 *
 * Each command is a thin client of the REST API (docs/daemon.md, "Job control"): it
 * checks its arguments before anything is sent (exit 2), prints one line per job (or the
 * API's objects with --json) and exits with the worst status (cli.h exit codes).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client.h"

static int valid_id(const char *s)
{
    if (!*s || strlen(s) > 18) return 0;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    return strtoll(s, NULL, 10) > 0;
}

static void print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", s ? s : "null");
    free(s);
}

/* ---- requeue ------------------------------------------------------------------------------ */

static void requeue_usage(FILE *f)
{
    fprintf(f, "usage: gsched requeue ID... [--hold]\n"
               "\n"
               "Stop running jobs and put them back in their queue, like `scontrol requeue`\n"
               "(`--hold`: `scontrol requeuehold`).  The stop is a preemption's: SIGTERM, the\n"
               "job's grace period to checkpoint, then SIGKILL; the job then waits in its queue\n"
               "(event 'requeued') and restarts from its checkpoint when it is scheduled again.\n"
               "Only running jobs; their owner or an admin.\n"
               "\n"
               "  -H, --hold          hold it once stopped (reason JobHeldUser) until\n"
               "                      `gsched release`\n" CLI_CONN_HELP);
}

int cmd_requeue(int argc, char **argv)
{
    static const struct option longopts[] = {{"hold", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int opt, hold = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "Hh", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'H') {
            hold = 1;
            continue;
        }
        if (opt == 'h') {
            requeue_usage(stdout);
            return EXIT_OK;
        }
        requeue_usage(stderr);
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        cli_err("requeue needs at least one job id");
        return EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++)
        if (!valid_id(argv[i])) {
            cli_err("requeue: '%s' is not a job id", argv[i]);
            return EXIT_USAGE;
        }
    int worst = EXIT_OK;
    json_t *all = json_array();
    for (int i = optind; i < argc; i++) {
        long long id = strtoll(argv[i], NULL, 10);
        char path[96], what[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld/requeue%s", id, hold ? "?hold=1" : "");
        snprintf(what, sizeof what, "requeue %lld", id);
        json_t *r;
        int rc = cli_call(&k, "POST", path, NULL, NULL, NULL, what, &r);
        if (rc == EXIT_UNREACHABLE || (rc && worst == EXIT_OK)) worst = rc;
        if (rc == EXIT_UNREACHABLE) break;
        if (rc) continue;
        if (k.json)
            json_array_append(all, r);
        else
            printf("Requeued job %lld%s (stopping: SIGTERM, SIGKILL after %llds)\n", id,
                   hold ? ", held" : "",
                   (long long)json_integer_value(json_object_get(r, "grace_seconds")));
        json_decref(r);
    }
    if (k.json) print_json(all);
    json_decref(all);
    return worst;
}
