/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_jobctl.c - job control commands (issue 16): `gsched update ID KEY=VALUE...`
 * (scontrol update jobid=ID ...: PATCH /v1/jobs/ID) and `gsched requeue ID... [--hold]`
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
#include <strings.h>

#include "cli.h"
#include "client.h"
#include "daemon.h"

/* Set body key K to the string V: -1 (said) when V is not UTF-8, which JSON cannot carry
 * (json_string's NULL would drop the key and update the rest). */
static int set_str(json_t *b, const char *k, const char *v)
{
    json_t *s = json_string(v);
    if (!s) {
        cli_err("update: %s: '%s' is not valid UTF-8", k, v);
        return -1;
    }
    return json_object_set_new(b, k, s);
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
        if (!cli_valid_jobref(argv[i])) {
            cli_err("requeue: '%s' is not a job id (ID, or ARRAY_TASK such as 123_7)", argv[i]);
            return EXIT_USAGE;
        }
    int worst = EXIT_OK;
    json_t *all = json_array();
    for (int i = optind; i < argc; i++) {
        const char *id = argv[i]; /* the daemon resolves ARRAY_TASK */
        char path[96], what[64];
        snprintf(path, sizeof path, "/v1/jobs/%s/requeue%s", id, hold ? "?hold=1" : "");
        snprintf(what, sizeof what, "requeue %s", id);
        json_t *r;
        int rc = cli_call(&k, "POST", path, NULL, NULL, NULL, what, &r);
        if (rc == EXIT_UNREACHABLE || (rc && worst == EXIT_OK)) worst = rc;
        if (rc == EXIT_UNREACHABLE) break;
        if (rc) continue;
        if (k.json)
            json_array_append(all, r);
        else
            printf("Requeued job %s%s (stopping: SIGTERM, SIGKILL after %llds)\n", id,
                   hold ? ", held" : "",
                   (long long)json_integer_value(json_object_get(r, "grace_seconds")));
        json_decref(r);
    }
    if (k.json) print_json(all);
    json_decref(all);
    return worst;
}

/* ---- update ------------------------------------------------------------------------------- */

static void update_usage(FILE *f)
{
    fprintf(f, "usage: gsched update ID KEY=VALUE...\n"
               "       gsched update jobid=ID KEY=VALUE...\n"
               "\n"
               "Change a job, like `scontrol update jobid=ID ...`.  A pending job: any key; one\n"
               "already queued leaves its queue, changes and queues again as if just submitted\n"
               "(not under policies that cannot take queued jobs back).  A running job: only\n"
               "its time limit.  Checked as a submission (the job must still fit the cluster).\n"
               "Its owner or an admin; only an admin raises a priority, or the time limit of a\n"
               "running job.\n"
               "\n"
               "Keys (case does not matter):\n"
               "  priority=N|CLASS      priority (prod, test, normal, oppo or 0..1000000, -1)\n"
               "  timelimit=LIMIT       time limit as submit -t: minutes, MM:SS, HH:MM:SS,\n"
               "                        D-HH[:MM[:SS]], UNLIMITED, or 90s, 2h (also time=)\n"
               "  gpus=N                GPUs in all, split evenly over the job's tasks\n"
               "  vc=VC                 virtual cluster (also partition=)\n"
               "  name=NAME             job name (also jobname=)\n" CLI_CONN_HELP);
}

int cmd_update(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, CLI_CONN_LONGOPTS, {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'h') {
            update_usage(stdout);
            return EXIT_OK;
        }
        update_usage(stderr);
        return EXIT_USAGE;
    }
    const char *ids = NULL;
    json_t *b = json_object();
    for (int i = optind; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        if (!eq) {
            if (!ids && cli_valid_jobref(a)) {
                ids = a;
                continue;
            }
            cli_err("update: '%s' is neither a job id nor KEY=VALUE", a);
            json_decref(b);
            return EXIT_USAGE;
        }
        size_t kl = (size_t)(eq - a);
        const char *v = eq + 1;
#define KEY(s) (kl == strlen(s) && !strncasecmp(a, s, kl))
        if (KEY("jobid")) {
            if (ids || !cli_valid_jobref(v)) {
                cli_err("update: '%s': %s", a, ids ? "a second job id" : "not a job id");
                json_decref(b);
                return EXIT_USAGE;
            }
            ids = v;
        } else if (KEY("priority")) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (*v && !*end)
                json_object_set_new(b, "priority", json_integer(n));
            else if (set_str(b, "priority", v)) {
                json_decref(b);
                return EXIT_USAGE;
            }
        } else if (KEY("timelimit") || KEY("time_limit") || KEY("time")) {
            gs_time t;
            gs_diag d;
            gs_diag_init(&d, NULL);
            if (gsd_parse_time_limit(v, &t, &d)) {
                cli_err("update: '%s' is not a time limit: %s (minutes: 30, MM:SS, HH:MM:SS, "
                        "D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED; or 90s, 2h)",
                        v, d.msg);
                json_decref(b);
                return EXIT_USAGE;
            }
            json_object_set_new(b, "time_limit",
                                t ? json_integer((t + GS_SEC - 1) / GS_SEC)
                                  : json_string("UNLIMITED"));
        } else if (KEY("gpus") || KEY("numgpus")) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (!*v || *end || n < 1) {
                cli_err("update: gpus: '%s' is not a GPU count", v);
                json_decref(b);
                return EXIT_USAGE;
            }
            json_object_set_new(b, "gpus", json_integer(n));
        } else if (KEY("vc") || KEY("partition")) {
            if (set_str(b, "vc", v)) {
                json_decref(b);
                return EXIT_USAGE;
            }
        } else if (KEY("name") || KEY("jobname")) {
            if (set_str(b, "name", v)) {
                json_decref(b);
                return EXIT_USAGE;
            }
        } else {
            cli_err("update: unknown key '%.*s' (priority, timelimit, gpus, vc, name)", (int)kl, a);
            json_decref(b);
            return EXIT_USAGE;
        }
#undef KEY
    }
    if (!ids || !json_object_size(b)) {
        cli_err("update needs a job id and at least one KEY=VALUE");
        json_decref(b);
        update_usage(stderr);
        return EXIT_USAGE;
    }
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    const char *id = ids; /* the daemon resolves ARRAY_TASK */
    char path[80], what[64];
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    snprintf(what, sizeof what, "update %s", id);
    json_t *r;
    int rc = cli_call(&k, "PATCH", path, body, "application/json", NULL, what, &r);
    free(body);
    if (rc) return rc;
    if (k.json)
        print_json(r);
    else if (json_array_size(json_object_get(r, "changed")))
        printf("Updated job %s: %s\n", id, json_string_value(json_object_get(r, "what")));
    else
        printf("Job %s: nothing changed\n", id);
    json_decref(r);
    return EXIT_OK;
}
