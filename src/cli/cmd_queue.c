/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_queue.c - listings: `gsched queue` (like squeue: ID VC NAME USER ST
 * GPUS AGE REASON POS), `gsched nodes` (like sinfo) and `gsched vcs`.
 * --json prints the daemon's JSON (all pages merged) instead of a table.
 * REASON is why a pending job waits; for a job holding GPUs it is where it
 * runs (squeue's NODELIST(REASON)).  POS is the position in the queue the job
 * waits in, as the policy orders it (see GSD_ORDER_* in src/daemon/gsd.h).
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client.h"

static void queue_usage(FILE *f)
{
    fprintf(f, "usage: gsched queue [options]\n"
               "\n"
               "  -a, --all           include finished jobs (DONE, FAILED, CANCELLED, REJECTED)\n"
               "  -s, --state LIST    states to show, e.g. PD,R or PENDING (default: active)\n"
               "  -q, --vc VC         only this virtual cluster\n"
               "  -u, --user USER     only this user's jobs\n"
               "      --limit N       at most N jobs (default: all)\n"
               "      --no-headers    no header line\n" CLI_CONN_HELP);
}

static void print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", s ? s : "null");
    free(s);
}

static void url_add(char *url, size_t cap, const char *key, const char *val)
{
    size_t n = strlen(url);
    n += (size_t)snprintf(url + n, cap - n, "%s%s=", strchr(url, '?') ? "&" : "?", key);
    for (const unsigned char *p = (const unsigned char *)val; *p && n + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == ',')
            url[n++] = (char)*p;
        else
            n += (size_t)snprintf(url + n, cap - n, "%%%02X", *p);
    }
    url[n] = '\0';
}

int cmd_queue(int argc, char **argv)
{
    static const struct option longopts[] = {{"all", no_argument, NULL, 'a'},
                                             {"state", required_argument, NULL, 's'},
                                             {"vc", required_argument, NULL, 'q'},
                                             {"user", required_argument, NULL, 'u'},
                                             {"limit", required_argument, NULL, 'L'},
                                             {"no-headers", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    const char *state = NULL, *vc = NULL, *user = NULL;
    long long limit = -1;
    int headers = 1, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "as:q:u:h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        switch (opt) {
        case 'a': state = "all"; break;
        case 's': state = optarg; break;
        case 'q': vc = optarg; break;
        case 'u': user = optarg; break;
        case 'H': headers = 0; break;
        case 'L': {
            char *e;
            limit = strtoll(optarg, &e, 10);
            if (*e || limit < 1) {
                cli_err("--limit: expected a positive integer, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': queue_usage(stdout); return EXIT_OK;
        default: queue_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_err("queue: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    json_t *all = json_array();
    long long offset = 0, total = 0;
    int rc = EXIT_OK;
    for (int page = 0; page < 1000; page++) {
        char url[1024] = "/v1/jobs";
        char num[32];
        if (state) url_add(url, sizeof url, "state", state);
        if (vc) url_add(url, sizeof url, "vc", vc);
        if (user) url_add(url, sizeof url, "user", user);
        long long want = limit > 0 ? limit - (long long)json_array_size(all) : 10000;
        if (want > 10000) want = 10000;
        snprintf(num, sizeof num, "%lld", want);
        url_add(url, sizeof url, "limit", num);
        snprintf(num, sizeof num, "%lld", offset);
        url_add(url, sizeof url, "offset", num);
        json_t *r;
        rc = cli_call(&k, "GET", url, NULL, NULL, NULL, "queue", &r);
        if (rc) break;
        json_array_extend(all, json_object_get(r, "jobs"));
        total = cli_jint(r, "total", 0);
        json_t *next = json_object_get(r, "next_offset");
        int more = json_is_integer(next) && (limit < 0 || (long long)json_array_size(all) < limit);
        if (more) offset = json_integer_value(next);
        json_decref(r);
        if (!more) break;
    }
    if (rc) {
        json_decref(all);
        return rc;
    }
    if (k.json) {
        json_t *o = json_pack("{s:o,s:I}", "jobs", all, "total", (json_int_t)total);
        print_json(o);
        json_decref(o);
        return EXIT_OK;
    }
    cli_table t;
    cli_table_init(&t, 9, 1u << 0 | 1u << 5 | 1u << 6 | 1u << 8);
    const char *hdr[] = {"ID", "VC", "NAME", "USER", "ST", "GPUS", "AGE", "REASON", "POS"};
    cli_table_add(&t, hdr);
    long long now = cli_now_us();
    size_t i;
    json_t *j;
    json_array_foreach(all, i, j)
    {
        char id[32], gpus[32], age[32], pos[32], name[40], reason[80];
        snprintf(id, sizeof id, "%lld", cli_jint(j, "id", 0));
        snprintf(gpus, sizeof gpus, "%lld", cli_jint(j, "gpus", 0));
        cli_age(now - cli_jint(j, "submit_us", now), age, sizeof age);
        long long p = cli_jint(j, "position", 0);
        snprintf(pos, sizeof pos, "%s", p > 0 ? "" : "-");
        if (p > 0) snprintf(pos, sizeof pos, "%lld", p);
        const char *nm = cli_jstr(j, "name", "");
        snprintf(name, sizeof name, "%.24s", *nm ? nm : "-");
        const char *st = cli_jstr(j, "state", "");
        const char *rs;
        const char *stop = cli_jstr(j, "stopping", NULL);
        if (!strcmp(st, "RUNNING") || !strcmp(st, "PREEMPTED") || !strcmp(st, "SUSPENDED"))
            rs = cli_jstr(j, "placement", "-");
        else
            rs = cli_jstr(j, "reason", "-");
        if (stop)
            snprintf(reason, sizeof reason, "%.50s (stopping: %s)", rs ? rs : "-", stop);
        else
            snprintf(reason, sizeof reason, "%.70s", rs ? rs : "-");
        const char *row[] = {id,
                             cli_jstr(j, "vc", "-"),
                             name,
                             cli_jstr(j, "user", "-"),
                             cli_jstr(j, "st", "?"),
                             gpus,
                             age,
                             reason,
                             pos};
        cli_table_add(&t, row);
    }
    cli_table_print(&t, headers);
    cli_table_release(&t);
    json_decref(all);
    return EXIT_OK;
}

static void nodes_usage(FILE *f)
{
    fprintf(f, "usage: gsched nodes [--no-headers] [--json]\n\n" CLI_CONN_HELP);
}

int cmd_nodes(int argc, char **argv)
{
    static const struct option longopts[] = {{"no-headers", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int headers = 1, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'H') {
            headers = 0;
        } else if (opt == 'h') {
            nodes_usage(stdout);
            return EXIT_OK;
        } else {
            nodes_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_err("nodes: unexpected argument '%s' (use 'gsched describe node NAME')", argv[optind]);
        return EXIT_USAGE;
    }
    json_t *r;
    int rc = cli_call(&k, "GET", k.json ? "/v1/nodes?gpus=1" : "/v1/nodes", NULL, NULL, NULL,
                      "nodes", &r);
    if (rc) return rc;
    if (k.json) {
        print_json(r);
        json_decref(r);
        return EXIT_OK;
    }
    cli_table t;
    cli_table_init(&t, 8, 1u << 2 | 1u << 3 | 1u << 4 | 1u << 5);
    const char *hdr[] = {"NODE", "STATE", "GPUS", "ALLOC", "FREE", "DOWN", "TYPE", "JOBS"};
    cli_table_add(&t, hdr);
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(r, "nodes"), i, n)
    {
        char g[16], a[16], f[16], d[16], types[128] = "", jobs[256] = "";
        snprintf(g, sizeof g, "%lld", cli_jint(n, "gpus", 0));
        snprintf(a, sizeof a, "%lld", cli_jint(n, "allocated", 0));
        snprintf(f, sizeof f, "%lld", cli_jint(n, "free", 0));
        snprintf(d, sizeof d, "%lld", cli_jint(n, "down", 0));
        size_t k2;
        json_t *x;
        json_array_foreach(json_object_get(n, "gpu_types"), k2, x)
        {
            size_t l = strlen(types);
            snprintf(types + l, sizeof types - l, "%s%s", l ? "," : "", json_string_value(x));
        }
        json_array_foreach(json_object_get(n, "jobs"), k2, x)
        {
            size_t l = strlen(jobs);
            snprintf(jobs + l, sizeof jobs - l, "%s%lld", l ? "," : "",
                     (long long)json_integer_value(x));
        }
        const char *row[] = {cli_jstr(n, "name", "?"), cli_jstr(n, "state", "?"), g, a, f, d, types,
                             *jobs ? jobs : "-"};
        cli_table_add(&t, row);
    }
    cli_table_print(&t, headers);
    cli_table_release(&t);
    json_decref(r);
    return EXIT_OK;
}

int cmd_vcs(int argc, char **argv)
{
    static const struct option longopts[] = {{"no-headers", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int headers = 1, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'H') {
            headers = 0;
        } else if (opt == 'h') {
            printf("usage: gsched vcs [--no-headers] [--json]\n\n" CLI_CONN_HELP);
            return EXIT_OK;
        } else {
            return EXIT_USAGE;
        }
    }
    json_t *r;
    int rc = cli_call(&k, "GET", "/v1/vcs", NULL, NULL, NULL, "vcs", &r);
    if (rc) return rc;
    if (k.json) {
        print_json(r);
        json_decref(r);
        return EXIT_OK;
    }
    cli_table t;
    cli_table_init(&t, 6, 0x3eu);
    const char *hdr[] = {"VC", "GUARANTEED", "ALLOCATED", "RUNNING", "PENDING", "PENDING_GPUS"};
    cli_table_add(&t, hdr);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(r, "vcs"), i, v)
    {
        char gu[16] = "-", al[16], ru[16], pe[16], pg[16];
        if (json_is_integer(json_object_get(v, "guaranteed_gpus")))
            snprintf(gu, sizeof gu, "%lld", cli_jint(v, "guaranteed_gpus", 0));
        snprintf(al, sizeof al, "%lld", cli_jint(v, "allocated_gpus", 0));
        snprintf(ru, sizeof ru, "%lld", cli_jint(v, "running_jobs", 0));
        snprintf(pe, sizeof pe, "%lld", cli_jint(v, "pending_jobs", 0));
        snprintf(pg, sizeof pg, "%lld", cli_jint(v, "pending_gpus", 0));
        const char *row[] = {cli_jstr(v, "name", "?"), gu, al, ru, pe, pg};
        cli_table_add(&t, row);
    }
    cli_table_print(&t, headers);
    cli_table_release(&t);
    json_decref(r);
    return EXIT_OK;
}
