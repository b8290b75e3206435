/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_history.c - gsched history: finished jobs from the daemon's accounting (like Slurm's
 * sacct), read page by page from GET /v1/history.
 *
 * Times on the command line are local time (YYYY-MM-DD[THH:MM[:SS]]), "now", or relative to
 * now ("now-7days", "now-3hours", "-2d"); the API takes microseconds since the epoch.  The
 * output is a table (default columns below), '|'-separated with -P, or the API's objects with
 * --json.  Pure client: everything it shows comes from the daemon.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"
#include "client.h"

/* The fields --format knows (case-insensitive), with the API key each reads. */
typedef enum {
    F_JOBID,
    F_JOBIDRAW,
    F_NAME,
    F_USER,
    F_VC,
    F_STATE,
    F_EXIT,
    F_SUBMIT,
    F_START,
    F_END,
    F_ELAPSED,
    F_GPUS,
    F_GPUHOURS,
    F_GPUSECONDS,
    F_PREEMPT,
    F_RESIZES,
    F_RUNS,
    F_REASON,
    F_N
} hfield;

static const struct {
    const char *name, *alias, *help;
} fields[F_N] = {
    [F_JOBID] = {"JobID", NULL, "job id; an array element as ARRAY_TASK"},
    [F_JOBIDRAW] = {"JobIDRaw", NULL, "job id"},
    [F_NAME] = {"Name", "JobName", "job name"},
    [F_USER] = {"User", NULL, "owner"},
    [F_VC] = {"VC", "Account", "virtual cluster (Slurm: account / partition)"},
    [F_STATE] = {"State", NULL, "DONE, FAILED, CANCELLED or REJECTED"},
    [F_EXIT] = {"ExitCode", NULL, "exit code of the last run (- when none)"},
    [F_SUBMIT] = {"Submit", NULL, "submission time"},
    [F_START] = {"Start", NULL, "first start (Unknown: never ran)"},
    [F_END] = {"End", NULL, "end time"},
    [F_ELAPSED] = {"Elapsed", NULL, "time holding GPUs, all runs ([D-]HH:MM:SS)"},
    [F_GPUS] = {"GPUs", "AllocGPUs", "GPUs asked for"},
    [F_GPUHOURS] = {"GPUHours", NULL, "GPU time held, GPU x hours (exact for elastic jobs)"},
    [F_GPUSECONDS] = {"GPUSeconds", NULL, "the same in GPU x seconds"},
    [F_PREEMPT] = {"Preemptions", NULL, "times it was preempted"},
    [F_RESIZES] = {"Resizes", NULL, "times an elastic job changed size"},
    [F_RUNS] = {"Runs", NULL, "starts (1 + restarts)"},
    [F_REASON] = {"Reason", NULL, "why it ended"},
};

static const hfield default_fields[] = {F_JOBID, F_NAME, F_USER,    F_VC,   F_STATE,   F_EXIT,
                                        F_START, F_END,  F_ELAPSED, F_GPUS, F_GPUHOURS};

static void usage(FILE *f)
{
    fprintf(f, "usage: gsched history [OPTIONS]\n"
               "Finished jobs (DONE, FAILED, CANCELLED, REJECTED), oldest end first, like Slurm's\n"
               "sacct.  Users see their own jobs; admins everybody's (-u to narrow).\n"
               "\n"
               "  -S, --starttime TIME  jobs that ended at or after TIME\n"
               "  -E, --endtime TIME    jobs that ended before TIME\n"
               "                        TIME: YYYY-MM-DD[THH:MM[:SS]] (local time), now, or\n"
               "                        now-N{seconds,minutes,hours,days,weeks} (also -Nd, -Nh:\n"
               "                        now-7days = -7d); default: no bound\n"
               "  -u, --user USER       jobs of USER\n"
               "  -A, --vc VC           jobs of virtual cluster VC (--account, --partition)\n"
               "  -s, --state LIST      final states: CD|DONE|COMPLETED, F|FAILED, CA|CANCELLED,\n"
               "                        RJ|REJECTED (comma-separated)\n"
               "  -j, --jobs ID         one job (an array's first id: every element)\n"
               "  -o, --format LIST     columns (comma-separated, case-insensitive):\n");
    for (int i = 0; i < F_N; i++)
        fprintf(f, "                          %-12s %s%s%s%s\n", fields[i].name, fields[i].help,
                fields[i].alias ? " (also " : "", fields[i].alias ? fields[i].alias : "",
                fields[i].alias ? ")" : "");
    fprintf(f, "                        default: JobID,Name,User,VC,State,ExitCode,Start,End,\n"
               "                        Elapsed,GPUs,GPUHours\n"
               "  -n, --noheader        no header line\n"
               "  -P, --parsable2       fields separated by '|', no padding (sacct -P)\n"
               "      --limit N         at most N jobs (default: all)\n" CLI_CONN_HELP
               "  -h, --help            this text\n");
}

/* TIME -> us since the epoch: 0, or -1 (bad). */
static int parse_time(const char *s, long long *out)
{
    long long now = cli_now_us();
    const char *p = NULL;
    if (!strcasecmp(s, "now")) {
        *out = now;
        return 0;
    }
    if (!strncasecmp(s, "now-", 4)) p = s + 4;
    if (s[0] == '-') p = s + 1;
    if (p) {
        char *e;
        long long n = strtoll(p, &e, 10);
        if (e == p || n < 0) return -1;
        static const struct {
            const char *unit;
            long long us;
        } u[] = {{"s", 1000000LL},         {"sec", 1000000LL},     {"secs", 1000000LL},
                 {"second", 1000000LL},    {"seconds", 1000000LL}, {"m", 60000000LL},
                 {"min", 60000000LL},      {"mins", 60000000LL},   {"minute", 60000000LL},
                 {"minutes", 60000000LL},  {"h", 3600000000LL},    {"hour", 3600000000LL},
                 {"hours", 3600000000LL},  {"d", 86400000000LL},   {"day", 86400000000LL},
                 {"days", 86400000000LL},  {"w", 604800000000LL},  {"week", 604800000000LL},
                 {"weeks", 604800000000LL}};
        for (size_t i = 0; i < sizeof u / sizeof *u; i++)
            if (!strcasecmp(e, u[i].unit)) {
                *out = now - n * u[i].us;
                return 0;
            }
        return -1;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int n = 0, y, mo, d, h = 0, mi = 0, sec = 0;
    size_t len = strlen(s);
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || (n != 10)) return -1;
    if (len > 10) {
        int m2 = 0;
        if ((s[10] != 'T' && s[10] != ' ') ||
            (sscanf(s + 11, "%2d:%2d%n", &h, &mi, &m2) != 2 || m2 != 5))
            return -1;
        if (len > 16) {
            int m3 = 0;
            if (s[16] != ':' || sscanf(s + 17, "%2d%n", &sec, &m3) != 1 || m3 != 2 || len != 19)
                return -1;
        } else if (len != 16) {
            return -1;
        }
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1) return -1;
    *out = (long long)t * 1000000LL;
    return 0;
}

/* -s LIST -> the API's state list ("DONE,FAILED"); 0, or -1 after a message. */
static int parse_states(const char *s, char *out, size_t cap)
{
    static const struct {
        const char *in, *api;
    } m[] = {{"CD", "DONE"},
             {"DONE", "DONE"},
             {"COMPLETED", "DONE"},
             {"F", "FAILED"},
             {"FAILED", "FAILED"},
             {"CA", "CANCELLED"},
             {"CANCELLED", "CANCELLED"},
             {"RJ", "REJECTED"},
             {"REJECTED", "REJECTED"}};
    char buf[256];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    out[0] = 0;
    char *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const char *api = NULL;
        for (size_t i = 0; i < sizeof m / sizeof *m && !api; i++)
            if (!strcasecmp(t, m[i].in)) api = m[i].api;
        if (!api) {
            cli_err("history: --state: '%s' is not a final state (CD, F, CA, RJ, or DONE, "
                    "COMPLETED, FAILED, CANCELLED, REJECTED)",
                    t);
            return -1;
        }
        n += (size_t)snprintf(out + n, cap > n ? cap - n : 0, "%s%s", n ? "," : "", api);
    }
    if (!n) {
        cli_err("history: --state: empty list");
        return -1;
    }
    return 0;
}

static int parse_format(const char *s, hfield *f, size_t *nf)
{
    char buf[1024];
    if (strlen(s) >= sizeof buf) {
        cli_err("history: --format: too long");
        return -1;
    }
    strcpy(buf, s);
    *nf = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; i < F_N && k < 0; i++)
            if (!strcasecmp(t, fields[i].name) ||
                (fields[i].alias && !strcasecmp(t, fields[i].alias)))
                k = i;
        if (k < 0) {
            cli_err("history: --format: unknown field '%s' (see gsched history --help)", t);
            return -1;
        }
        if (*nf == 32) {
            cli_err("history: --format: at most 32 fields");
            return -1;
        }
        f[(*nf)++] = (hfield)k;
    }
    if (!*nf) {
        cli_err("history: --format: no field");
        return -1;
    }
    return 0;
}

static void local_time(long long us, char *b, size_t cap)
{
    if (us == -1) {
        snprintf(b, cap, "Unknown");
        return;
    }
    time_t t = (time_t)(us / 1000000LL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(b, cap, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void cell(json_t *o, hfield f, char *b, size_t cap)
{
    switch (f) {
    case F_JOBID:
        if (json_is_integer(json_object_get(o, "array_id")))
            snprintf(b, cap, "%lld_%lld", cli_jint(o, "array_id", 0), cli_jint(o, "array_task", 0));
        else
            snprintf(b, cap, "%lld", cli_jint(o, "id", 0));
        return;
    case F_JOBIDRAW: snprintf(b, cap, "%lld", cli_jint(o, "id", 0)); return;
    case F_NAME: snprintf(b, cap, "%s", cli_jstr(o, "name", "")); return;
    case F_USER: snprintf(b, cap, "%s", cli_jstr(o, "user", "")); return;
    case F_VC: snprintf(b, cap, "%s", cli_jstr(o, "vc", "")); return;
    case F_STATE: snprintf(b, cap, "%s", cli_jstr(o, "state", "")); return;
    case F_EXIT:
        if (json_is_integer(json_object_get(o, "exit_code")))
            snprintf(b, cap, "%lld", cli_jint(o, "exit_code", 0));
        else
            snprintf(b, cap, "-");
        return;
    case F_SUBMIT: local_time(cli_jint(o, "submit_us", -1), b, cap); return;
    case F_START: local_time(cli_jint(o, "start_us", -1), b, cap); return;
    case F_END: local_time(cli_jint(o, "end_us", -1), b, cap); return;
    case F_ELAPSED: {
        long long s = cli_jint(o, "elapsed_us", 0) / 1000000LL;
        if (s >= 86400)
            snprintf(b, cap, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24, s / 60 % 60,
                     s % 60);
        else
            snprintf(b, cap, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
        return;
    }
    case F_GPUS: snprintf(b, cap, "%lld", cli_jint(o, "gpus", 0)); return;
    case F_GPUHOURS: snprintf(b, cap, "%.2f", (double)cli_jint(o, "gpu_us", 0) / 3.6e9); return;
    case F_GPUSECONDS: snprintf(b, cap, "%lld", cli_jint(o, "gpu_us", 0) / 1000000LL); return;
    case F_PREEMPT: snprintf(b, cap, "%lld", cli_jint(o, "preemptions", 0)); return;
    case F_RESIZES: snprintf(b, cap, "%lld", cli_jint(o, "resizes", 0)); return;
    case F_RUNS: snprintf(b, cap, "%lld", cli_jint(o, "runs", 0)); return;
    case F_REASON: snprintf(b, cap, "%s", cli_jstr(o, "reason", "")); return;
    case F_N: break;
    }
    b[0] = 0;
}

/* Append "&key=value" (value URL-encoded) to the query. */
static void add_arg(char *q, size_t cap, const char *key, const char *v)
{
    size_t n = strlen(q);
    n += (size_t)snprintf(q + n, cap > n ? cap - n : 0, "&%s=", key);
    for (const unsigned char *p = (const unsigned char *)v; *p && n + 4 < cap; p++) {
        if (isalnum(*p) || strchr("-_.~,", *p))
            q[n++] = (char)*p;
        else
            n += (size_t)snprintf(q + n, cap - n, "%%%02X", *p);
    }
    q[n < cap ? n : cap - 1] = 0;
}

enum { H_LIMIT = 2000, H_HELP };

int cmd_history(int argc, char **argv)
{
    static const struct option longopts[] = {{"starttime", required_argument, NULL, 'S'},
                                             {"endtime", required_argument, NULL, 'E'},
                                             {"user", required_argument, NULL, 'u'},
                                             {"vc", required_argument, NULL, 'A'},
                                             {"account", required_argument, NULL, 'A'},
                                             {"partition", required_argument, NULL, 'A'},
                                             {"state", required_argument, NULL, 's'},
                                             {"states", required_argument, NULL, 's'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"format", required_argument, NULL, 'o'},
                                             {"noheader", no_argument, NULL, 'n'},
                                             {"parsable2", no_argument, NULL, 'P'},
                                             {"limit", required_argument, NULL, H_LIMIT},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    char q[2048] = "";
    hfield f[32];
    size_t nf = sizeof default_fields / sizeof *default_fields;
    memcpy(f, default_fields, sizeof default_fields);
    int headers = 1, parsable = 0, opt;
    long long limit = -1, want_arr = 0, want_task = -1;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "S:E:u:A:s:j:o:nPh", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        switch (opt) {
        case 'S':
        case 'E': {
            long long t;
            if (parse_time(optarg, &t)) {
                cli_err("history: %s: '%s' is not a time (YYYY-MM-DD[THH:MM[:SS]], now, "
                        "now-7days, -3h)",
                        opt == 'S' ? "--starttime" : "--endtime", optarg);
                return EXIT_USAGE;
            }
            char v[32];
            snprintf(v, sizeof v, "%lld", t < 0 ? 0 : t);
            add_arg(q, sizeof q, opt == 'S' ? "from" : "to", v);
            break;
        }
        case 'u': add_arg(q, sizeof q, "user", optarg); break;
        case 'A': add_arg(q, sizeof q, "vc", optarg); break;
        case 's': {
            char v[256];
            if (parse_states(optarg, v, sizeof v)) return EXIT_USAGE;
            add_arg(q, sizeof q, "state", v);
            break;
        }
        case 'j': {
            char *e;
            long long id = strtoll(optarg, &e, 10);
            if (e == optarg || id < 1 || (*e && *e != '_')) {
                cli_err("history: --jobs: '%s' is not a job id (ID or ARRAY_TASK)", optarg);
                return EXIT_USAGE;
            }
            if (*e == '_') { /* one array element: the array is asked, the element kept */
                char *e2;
                want_task = strtoll(e + 1, &e2, 10);
                if (e2 == e + 1 || *e2 || want_task < 0) {
                    cli_err("history: --jobs: '%s' is not a job id (ID or ARRAY_TASK)", optarg);
                    return EXIT_USAGE;
                }
                want_arr = id;
            }
            char v[32];
            snprintf(v, sizeof v, "%lld", id);
            add_arg(q, sizeof q, "job", v);
            break;
        }
        case 'o':
            if (parse_format(optarg, f, &nf)) return EXIT_USAGE;
            break;
        case 'n': headers = 0; break;
        case 'P': parsable = 1; break;
        case H_LIMIT: {
            char *e;
            limit = strtoll(optarg, &e, 10);
            if (*e || e == optarg || limit < 1) {
                cli_err("history: --limit: expected a positive integer, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': usage(stdout); return EXIT_OK;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_err("history: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    json_t *all = json_array();
    long long offset = 0;
    int rc = EXIT_OK;
    for (;;) {
        long long page = 10000;
        if (limit > 0 && limit - (long long)json_array_size(all) < page)
            page = limit - (long long)json_array_size(all);
        if (page <= 0) break;
        char path[2300];
        snprintf(path, sizeof path, "/v1/history?limit=%lld&offset=%lld%s", page, offset, q);
        json_t *r = NULL;
        rc = cli_call(&k, "GET", path, NULL, NULL, NULL, "history", &r);
        if (rc != EXIT_OK) break;
        json_t *jobs = json_object_get(r, "jobs"), *o;
        size_t i;
        json_array_foreach(jobs, i, o)
        {
            if (want_task >= 0 && (cli_jint(o, "array_id", 0) != want_arr ||
                                   cli_jint(o, "array_task", -1) != want_task))
                continue;
            json_array_append(all, o);
        }
        json_t *next = json_object_get(r, "next_offset");
        offset = json_is_integer(next) ? json_integer_value(next) : -1;
        json_decref(r);
        if (offset < 0) break;
    }
    if (rc != EXIT_OK) {
        json_decref(all);
        return rc;
    }
    if (k.json) {
        json_t *o = json_pack("{s:o,s:I}", "jobs", all, "total", (json_int_t)json_array_size(all));
        char *s = json_dumps(o, JSON_INDENT(2));
        if (s) puts(s);
        free(s);
        json_decref(o);
        return EXIT_OK;
    }
    const char *row[32];
    char cells[32][256];
    if (parsable) {
        if (headers)
            for (size_t c = 0; c < nf; c++)
                printf("%s%s", fields[f[c]].name, c + 1 < nf ? "|" : "\n");
        json_t *o;
        size_t i;
        json_array_foreach(all, i, o)
        {
            for (size_t c = 0; c < nf; c++) {
                cell(o, f[c], cells[c], sizeof cells[c]);
                for (char *p = cells[c]; *p; p++)
                    if (*p == '|' || *p == '\n') *p = ' ';
                printf("%s%s", cells[c], c + 1 < nf ? "|" : "\n");
            }
        }
    } else {
        cli_table t;
        unsigned right = 0;
        for (size_t c = 0; c < nf; c++)
            if (f[c] == F_GPUS || f[c] == F_GPUHOURS || f[c] == F_GPUSECONDS || f[c] == F_PREEMPT ||
                f[c] == F_RESIZES || f[c] == F_RUNS || f[c] == F_EXIT || f[c] == F_ELAPSED)
                right |= 1u << c;
        cli_table_init(&t, nf, right);
        for (size_t c = 0; c < nf; c++) row[c] = fields[f[c]].name;
        cli_table_add(&t, row);
        json_t *o;
        size_t i;
        json_array_foreach(all, i, o)
        {
            for (size_t c = 0; c < nf; c++) {
                cell(o, f[c], cells[c], sizeof cells[c]);
                row[c] = cells[c];
            }
            cli_table_add(&t, row);
        }
        cli_table_print(&t, headers);
        cli_table_release(&t);
    }
    json_decref(all);
    return EXIT_OK;
}
