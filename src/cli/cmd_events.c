/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_events.c - `gsched events`: the daemon's event stream (GET /v1/events), one line per
 * event (TIME ID KIND TYPE JOB/NODE USER REASON), or --json one JSON object per line.  A
 * listing by default (the last 20 events, or those after --since SEQ); -f/--follow keeps
 * reading as events come (like `tail -f`) until Ctrl-C or the daemon stops.  An "event:
 * reset" (the events after --since are gone) is said on stderr; the stream goes on.
 *
 * Invariant: each event is printed (and stdout flushed) as it arrives; the exit code is 0
 * when the stream ended (a listing done, the daemon stopping), else the code of the failure
 * (cli_sse: 3 unreachable or the stream broke, 4 no such job, ...).
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client.h"

#define IDLE_S 60 /* the daemon pings every 15 s at most: a minute of silence is a dead stream */

static void events_usage(FILE *f)
{
    fprintf(f, "usage: gsched events [-f] [--since SEQ | -n N] [--job ID] [--kind LIST] [--json]\n"
               "\n"
               "The daemon's events (jobs, nodes, the cluster), oldest first: TIME ID KIND TYPE\n"
               "JOB/NODE USER REASON.  Users see their own jobs' events and every node event.\n"
               "\n"
               "  -f, --follow          keep printing events as they happen, until Ctrl-C or the\n"
               "                        daemon stops (without --since or -n: from now)\n"
               "      --since SEQ       the events after event ID SEQ (resume where you left)\n"
               "  -n, --last N          the last N events (default 20 without -f)\n"
               "      --job ID          only this job's events\n"
               "      --kind LIST       only these kinds: job, node, cluster (comma-separated)\n"
               "  -H, --no-headers      no header line\n" CLI_CONN_HELP
               "                        (--json: one JSON object per event and line)\n");
}

typedef struct evprint {
    int json, headers, follow;
    long long n;
} evprint;

static void print_header(evprint *p)
{
    if (p->headers && !p->json) {
        printf("%-24s %7s %-7s %-16s %-10s %-10s %s\n", "TIME", "ID", "KIND", "TYPE", "JOB/NODE",
               "USER", "REASON");
        p->headers = 0;
    }
}

static int on_event(void *arg, const gsd_sse_event *ev)
{
    evprint *p = arg;
    if (ev->comment) return 0; /* pings */
    if (!strcmp(ev->type, "reset")) {
        json_t *o = json_loads(ev->data, 0, NULL);
        cli_err("events were missed: %s; what is shown next starts at event %lld (list again "
                "with 'gsched queue -a' to see the current state)",
                o ? cli_jstr(o, "reason", "?") : "?", o ? cli_jint(o, "seq", 0) : 0LL);
        json_decref(o);
        return 0;
    }
    if (p->json) {
        printf("%s\n", ev->data);
        fflush(stdout);
        p->n++;
        return 0;
    }
    json_t *o = json_loads(ev->data, 0, NULL);
    if (!o) {
        cli_err("events: an event that is not JSON (id %s): %.200s", ev->id, ev->data);
        return 0;
    }
    print_header(p);
    char what[64];
    json_t *job = json_object_get(o, "job");
    if (json_is_integer(job))
        snprintf(what, sizeof what, "%lld", (long long)json_integer_value(job));
    else
        snprintf(what, sizeof what, "%s", cli_jstr(o, "node", "-"));
    printf("%-24s %7lld %-7s %-16s %-10s %-10s %s\n", cli_jstr(o, "time", "?"),
           cli_jint(o, "seq", 0), cli_jstr(o, "kind", ev->type), cli_jstr(o, "type", "?"), what,
           cli_jstr(o, "user", "-"), cli_jstr(o, "reason", ""));
    fflush(stdout);
    json_decref(o);
    p->n++;
    return 0;
}

int cmd_events(int argc, char **argv)
{
    enum { O_SINCE = 1100, O_JOB, O_KIND };
    static const struct option longopts[] = {{"follow", no_argument, NULL, 'f'},
                                             {"since", required_argument, NULL, O_SINCE},
                                             {"last", required_argument, NULL, 'n'},
                                             {"job", required_argument, NULL, O_JOB},
                                             {"kind", required_argument, NULL, O_KIND},
                                             {"no-headers", no_argument, NULL, 'H'},
                                             {"noheader", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    evprint p = {0, 1, 0, 0};
    const char *since = NULL, *job = NULL, *kind = NULL;
    long long last = -1;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "fn:Hh", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        switch (opt) {
        case 'f': p.follow = 1; break;
        case 'H': p.headers = 0; break;
        case O_SINCE: since = optarg; break;
        case O_JOB: job = optarg; break;
        case O_KIND: kind = optarg; break;
        case 'n': {
            char *e;
            last = strtoll(optarg, &e, 10);
            if (*e || !*optarg || last < 0 || last > 100000) {
                cli_err("events: -n/--last: '%s' is not a count (0 to 100000)", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': events_usage(stdout); return EXIT_OK;
        default: events_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_err("events: unexpected argument '%s'", argv[optind]);
        events_usage(stderr);
        return EXIT_USAGE;
    }
    if (since && last >= 0) {
        cli_err("events: give --since or -n/--last, not both");
        return EXIT_USAGE;
    }
    if (since && (!*since || strspn(since, "0123456789") != strlen(since) || strlen(since) > 18)) {
        cli_err("events: --since: '%s' is not an event id", since);
        return EXIT_USAGE;
    }
    if (job && (!*job || strspn(job, "0123456789") != strlen(job) || strlen(job) > 18)) {
        cli_err("events: --job: '%s' is not a job id", job);
        return EXIT_USAGE;
    }
    if (kind && (!*kind || strspn(kind, "abcdefghijklmnopqrstuvwxyz,") != strlen(kind))) {
        cli_err("events: --kind: '%s' is not a list of job, node, cluster", kind);
        return EXIT_USAGE;
    }
    if (!since && last < 0 && !p.follow) last = 20;
    p.json = k.json;
    char path[256];
    int n = snprintf(path, sizeof path, "/v1/events?follow=%d", p.follow);
    if (since) n += snprintf(path + n, sizeof path - (size_t)n, "&since=%s", since);
    if (last > 0) n += snprintf(path + n, sizeof path - (size_t)n, "&last=%lld", last);
    if (job) n += snprintf(path + n, sizeof path - (size_t)n, "&job=%s", job);
    if (kind) snprintf(path + n, sizeof path - (size_t)n, "&kind=%s", kind);
    if (last == 0 && !p.follow) { /* -n 0: nothing to list */
        print_header(&p);
        return EXIT_OK;
    }
    char last_id[64];
    int rc = cli_sse(&k, path, NULL, IDLE_S, on_event, &p, last_id, sizeof last_id, "events");
    if (rc == EXIT_OK && !p.json) print_header(&p); /* an empty listing has its header */
    if (rc == EXIT_OK && p.follow)
        cli_err("the daemon ended the event stream (stopping?)%s%s%s",
                last_id[0] ? "; resume with 'gsched events -f --since " : "", last_id,
                last_id[0] ? "'" : "");
    else if (rc == EXIT_UNREACHABLE && p.follow && last_id[0] && k.status)
        cli_err("resume with 'gsched events -f --since %s'", last_id);
    return rc;
}
