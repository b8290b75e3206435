/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_queue.c - listings: `gsched queue` (like squeue: ID VC NAME USER ST GPUS AGE REASON
 * POS, or squeue's -o/--format fields), `gsched nodes` (like sinfo) and `gsched vcs`.
 * --json prints the daemon's JSON (all pages merged) instead of a table.  REASON is why a
 * pending job waits; for a job holding GPUs it is where it runs (squeue's NODELIST(REASON)).
 * POS is the position in the queue the job waits in, as the policy orders it (see
 * GSD_ORDER_* in src/daemon/gsd.h).  ST is CG while the tasks of a job that is ending stop
 * (jobsel.c).  -i/--iterate repeats the listing until Ctrl-C (or --iterations N); -l/--long
 * is squeue's long format (a --format string, after the time); --start is refused (gsched
 * predicts no start times); -w/--watch lists again when an event comes (queue_watch_*).
 *
 * Paging: a listing shows one page (--limit jobs, QUEUE_PAGE by default; --page K; --all-pages
 * for every job) and a footer saying how many jobs the selection has; only the page's jobs
 * and only the keys the listing prints (queue_fields) come from the daemon, so a listing of
 * a queue of any length costs about a page.  --json lists every job unless --limit/--page.
 * Job array elements are listed as ARRAY_TASK (123_7), an array's pending elements (of the
 * page) waiting for the same reason as one row 123_[4-99] (like squeue; -r: one row each):
 * queue_collapse_arrays.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"
#include "jobsel.h"

/* Jobs per page by default: a listing of a large queue shows the first QUEUE_PAGE jobs and a
 * footer (fast at any queue length: the daemon sends only the page) */
#define QUEUE_PAGE 500

static void queue_usage(FILE *f)
{
    fprintf(f,
            "usage: gsched queue [options]\n"
            "\n"
            "  -a, --all             include finished jobs (CD, F, CA, RJ)\n"
            "  -t, --states LIST     states to show: PD,R,CG,PR,S,CD,F,CA,RJ, long names\n"
            "                        (PENDING, COMPLETING, ...) or all (also --state)\n"
            "  -u, --user LIST       only these users' jobs\n"
            "      --me              only your jobs\n"
            "  -p, --partition LIST  only these virtual clusters (also --vc)\n"
            "  -q, --qos LIST        only these priority classes (prod, test, normal, oppo, N)\n"
            "  -n, --name LIST       only jobs with these names\n"
            "  -j, --jobs LIST       only these job ids (any state)\n"
            "  -o, --format FMT      squeue fields: %%i id, %%j name, %%u user, %%t state, %%T "
            "long\n"
            "                        state, %%M time used, %%l time limit, %%L time left, %%D "
            "nodes\n"
            "                        used (pending: tasks), %%b GPUs per task, %%P partition, %%r "
            "reason, "
            "%%R\n"
            "                        reason or nodes, %%N nodes, %%q QOS, %%Q priority, %%V "
            "submit,\n"
            "                        %%S start, %%e end time; %%10j pads/cuts to 10, %%.10j "
            "right-aligns\n"
            "  -l, --long            squeue's long format: the time, then JOBID PARTITION NAME\n"
            "                        USER STATE TIME TIME_LIMIT NODES NODELIST(REASON)\n"
            "  -r, --array           one row per job array element (default: an array's\n"
            "                        pending elements are one row, 123_[4-99])\n"
            "  -i, --iterate SECS    repeat every SECS seconds until Ctrl-C\n"
            "  -w, --watch           list again when the daemon's events say something changed\n"
            "                        (at most twice a second) until Ctrl-C; without an event\n"
            "                        stream, every -i SECS (default 2)\n"
            "      --limit N         jobs per page (default %d; --json: all jobs unless --limit\n"
            "                        or --page)\n"
            "      --page K          show page K (1 = the first jobs); a footer says how\n"
            "                        many jobs the selection has and the next page\n"
            "      --all-pages       every job, no paging\n"
            "  -h, --noheader        no header line (also --no-headers; the paging footer then\n"
            "                        goes to stderr)\n" CLI_CONN_HELP,
            QUEUE_PAGE);
}

static void print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", s ? s : "null");
    free(s);
}

/* Slurm's time format: M:SS, H:MM:SS, D-HH:MM:SS. */
static void slurm_time(long long us, char *buf, size_t cap)
{
    if (us < 0) us = 0;
    long long s = us / 1000000, d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
    if (d)
        snprintf(buf, cap, "%lld-%02lld:%02lld:%02lld", d, h, m, s % 60);
    else if (h)
        snprintf(buf, cap, "%lld:%02lld:%02lld", h, m, s % 60);
    else
        snprintf(buf, cap, "%lld:%02lld", m, s % 60);
}

/* Time holding GPUs: the closed runs plus the current one. */
static long long time_used(json_t *j, long long now)
{
    long long used = cli_jint(j, "executed_us", 0);
    const char *st = cli_jstr(j, "state", "");
    long long ls = cli_jint(j, "last_start_us", 0);
    if ((!strcmp(st, "RUNNING") || !strcmp(st, "PREEMPTED")) && ls > 0 && now > ls)
        used += now - ls;
    return used;
}

/* Nodes a job holding GPUs uses (the distinct nodes of its placement "n0:0-3 n1:0-1"), else
 * its task count: the most it may use (a task's GPUs are on one node; tasks may share). */
static int nodes_used(json_t *j, int holds)
{
    int tasks = (int)cli_jint(j, "tasks", 1);
    const char *pl = holds ? cli_jstr(j, "placement", NULL) : NULL;
    if (!pl || strstr(pl, "...")) return tasks; /* none, or cut short: the request */
    char seen[64][32];
    int n = 0;
    for (const char *p = pl; *p;) {
        while (*p == ' ') p++;
        const char *colon = strchr(p, ':');
        if (!*p || !colon) break;
        size_t len = (size_t)(colon - p);
        if (len >= sizeof seen[0]) return tasks;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = strlen(seen[i]) == len && !strncmp(seen[i], p, len);
        if (!dup) {
            if (n == 64) return tasks;
            memcpy(seen[n], p, len);
            seen[n++][len] = '\0';
        }
        p = strchr(colon, ' ');
        if (!p) break;
    }
    return n ? n : tasks;
}

/* The value of one %x field (NULL: not a field). */
static const char *field(char c, json_t *j, long long now, char *buf, size_t cap)
{
    const char *st = cli_jstr(j, "state", "");
    int holds = !strcmp(st, "RUNNING") || !strcmp(st, "PREEMPTED") || !strcmp(st, "SUSPENDED");
    long long tl = cli_jint(j, "time_limit_us", 0);
    const char *s;
    switch (c) {
    case 'i':
        if (cli_jstr(j, "display_id", NULL)) return cli_jstr(j, "display_id", ""); /* arrays */
        /* fall through */
    case 'A': snprintf(buf, cap, "%lld", cli_jint(j, "id", 0)); return buf;
    case 'j': return cli_jstr(j, "name", "");
    case 'u': return cli_jstr(j, "user", "");
    case 't': return cli_job_st(j);
    case 'T': return cli_job_state_long(j);
    case 'M': slurm_time(time_used(j, now), buf, cap); return buf;
    case 'l':
        if (!tl) return "UNLIMITED";
        slurm_time(tl, buf, cap);
        return buf;
    case 'L':
        if (!tl) return "UNLIMITED";
        slurm_time(tl - time_used(j, now), buf, cap);
        return buf;
    case 'D': snprintf(buf, cap, "%d", nodes_used(j, holds)); return buf;
    case 'b': snprintf(buf, cap, "gpu:%lld", cli_jint(j, "gpus_per_task", 1)); return buf;
    case 'P': return cli_jstr(j, "vc", "");
    case 'r': return cli_jstr(j, "reason", "None");
    case 'N': return holds ? cli_jstr(j, "placement", "") : "";
    case 'R':
        s = holds ? cli_jstr(j, "placement", NULL) : NULL;
        if (s) return s;
        snprintf(buf, cap, "(%s)", cli_jstr(j, "reason", "None"));
        return buf;
    case 'q': {
        long long p = cli_jint(j, "priority", 0);
        s = cli_qos_name((int)p);
        if (s) return s;
        snprintf(buf, cap, "%lld", p);
        return buf;
    }
    case 'Q': snprintf(buf, cap, "%lld", cli_jint(j, "priority", 0)); return buf;
    case 'V': return cli_jstr(j, "submit_time", "N/A");
    case 'S': return cli_jstr(j, "start_time", "N/A");
    case 'e': return cli_jstr(j, "end_time", "N/A");
    default: return NULL;
    }
}

static const char *header(char c)
{
    switch (c) {
    case 'i':
    case 'A': return "JOBID";
    case 'j': return "NAME";
    case 'u': return "USER";
    case 't': return "ST";
    case 'T': return "STATE";
    case 'M': return "TIME";
    case 'l': return "TIME_LIMIT";
    case 'L': return "TIME_LEFT";
    case 'D': return "NODES";
    case 'b': return "TRES_PER_TASK";
    case 'P': return "PARTITION";
    case 'r': return "REASON";
    case 'N': return "NODELIST";
    case 'R': return "NODELIST(REASON)";
    case 'q': return "QOS";
    case 'Q': return "PRIORITY";
    case 'V': return "SUBMIT_TIME";
    case 'S': return "START_TIME";
    case 'e': return "END_TIME";
    default: return NULL;
    }
}

/* Check a --format string: every %[.][N]x names a field.  0 or -1 (error printed). */
static int format_check(const char *fmt)
{
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') continue;
        p++;
        if (*p == '%') continue;
        if (*p == '.') p++;
        while (*p >= '0' && *p <= '9') p++;
        if (!*p || !header(*p)) {
            cli_err("--format: '%s': unknown field '%%%.1s' (i j u t T M l L D b P r R N q Q V S "
                    "e A)",
                    fmt, *p ? p : "");
            return -1;
        }
    }
    return 0;
}

/* One line of a --format listing (header when j == NULL). */
static void format_line(const char *fmt, json_t *j, long long now)
{
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            putchar(*p);
            continue;
        }
        p++;
        if (*p == '%') {
            putchar('%');
            continue;
        }
        int right = 0, width = 0;
        if (*p == '.') right = 1, p++;
        while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
        char buf[128];
        const char *v = j ? field(*p, j, now, buf, sizeof buf) : header(*p);
        if (!v) v = "";
        if (width)
            printf(right ? "%*.*s" : "%-*.*s", width, width, v);
        else
            fputs(v, stdout);
    }
    putchar('\n');
}

/* Append key to a comma-separated list unless it is there. */
static void key_add(char *buf, size_t cap, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = buf; *p;) {
        size_t n = strcspn(p, ",");
        if (n == kl && !strncmp(p, key, n)) return;
        p += n + (p[n] == ',');
    }
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? "," : "", key);
}

/* The GET /v1/jobs keys a listing prints (?fields=): what the selectors match on (jobsel.c),
 * plus the table's columns, or the --format fields' (see field()). */
static void queue_fields(const char *fmt, char *buf, size_t cap)
{
    buf[0] = '\0';
    static const char *const base[] = {"id", "group", "st", "state", "stopping", "user", "vc",
                                       "name", "priority",
                                       /* job arrays: queue_collapse_arrays */
                                       "array_id", "array_task", "reason"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) key_add(buf, cap, base[i]);
    if (!fmt) {
        static const char *const table[] = {"gpus",     "members",   "submit_us",
                                            "position", "placement", "reason"};
        for (size_t i = 0; i < sizeof table / sizeof *table; i++) key_add(buf, cap, table[i]);
        return;
    }
    for (const char *p = fmt; *p; p++) {
        if (*p != '%' || !*++p || *p == '%') continue;
        if (*p == '.') p++;
        while (*p >= '0' && *p <= '9') p++;
        switch (*p) {
        case 'L':
        case 'M':
            if (*p == 'L') key_add(buf, cap, "time_limit_us"); /* and the time used */
            key_add(buf, cap, "executed_us");
            key_add(buf, cap, "last_start_us");
            break;
        case 'l': key_add(buf, cap, "time_limit_us"); break;
        case 'D':
            key_add(buf, cap, "tasks");
            key_add(buf, cap, "placement");
            break;
        case 'b': key_add(buf, cap, "gpus_per_task"); break;
        case 'r': key_add(buf, cap, "reason"); break;
        case 'N': key_add(buf, cap, "placement"); break;
        case 'R':
            key_add(buf, cap, "placement");
            key_add(buf, cap, "reason");
            break;
        case 'V': key_add(buf, cap, "submit_time"); break;
        case 'S': key_add(buf, cap, "start_time"); break;
        case 'e': key_add(buf, cap, "end_time"); break;
        default: break; /* in base */
        }
        if (!*p) break;
    }
}

/* Paging of a listing: page (1-based) of per jobs; per < 0: every job. */
typedef struct qpage {
    long long per, page;
} qpage;

/* The footer of a paged listing: which jobs these are (shown: the page's jobs, an array's
 * elements each counted though they share a row), of how many, and how to see the others;
 * nothing when the page shows every job. */
static void print_footer(FILE *f, const qpage *pg, size_t shown, long long total)
{
    if (pg->per < 0) return;
    long long first = (pg->page - 1) * pg->per;
    if (!shown && total > 0) {
        fprintf(f, "(page %lld is empty: %lld job%s, %lld per page)\n", pg->page, total,
                total == 1 ? "" : "s", pg->per);
        return;
    }
    long long last = first + (long long)shown, more = total - last;
    if (first == 0 && more <= 0) return;
    fprintf(f, "(jobs %lld-%lld of %lld", first + 1, last, total);
    if (more > 0)
        fprintf(f, "; %lld more: --page %lld for the next %lld, --all-pages for all)\n", more,
                pg->page + 1, more < pg->per ? more : pg->per);
    else
        fprintf(f, ")\n");
}

/* ---- job arrays (issue 16) ------------------------------------------------------------------ */

typedef struct idxbuf {
    char *s;
    size_t len, cap;
} idxbuf;

/* Append "4-7" (or "4") to b for the run lo..hi, after a comma when b has text. */
static void range_text(idxbuf *b, long long lo, long long hi)
{
    char t[48];
    int w = lo == hi ? snprintf(t, sizeof t, "%s%lld", b->len ? "," : "", lo)
                     : snprintf(t, sizeof t, "%s%lld-%lld", b->len ? "," : "", lo, hi);
    if (b->len + (size_t)w + 1 > b->cap) {
        b->cap = (b->len + (size_t)w + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
    memcpy(b->s + b->len, t, (size_t)w + 1);
    b->len += (size_t)w;
}

/*
 * squeue's display of job arrays: every element of an array is named ARRAY_TASK ("123_7", in
 * a "display_id" field the printers prefer to "id"), and the pending elements of one array
 * that wait for the same reason are one row "123_[4-6,8-99]" at the place of the first of
 * them (squeue -r, one_per_element: one row per element).  Other jobs pass unchanged.
 * Returns a new list (all is not changed).
 */
static json_t *queue_collapse_arrays(json_t *all, int one_per_element)
{
    size_t n = json_array_size(all);
    json_t *out = json_array();
    char *used = calloc(n + 1, 1);
    if (!used) abort();
    for (size_t i = 0; i < n; i++) {
        if (used[i]) continue;
        json_t *j = json_array_get(all, i);
        json_t *aid = json_object_get(j, "array_id");
        if (!json_is_integer(aid)) {
            json_array_append(out, j);
            continue;
        }
        json_t *c = json_deep_copy(j);
        long long a = json_integer_value(aid);
        char id[64];
        snprintf(id, sizeof id, "%lld_%lld", a, cli_jint(j, "array_task", 0));
        if (one_per_element || strcmp(cli_jstr(j, "state", ""), "PENDING")) {
            json_object_set_new(c, "display_id", json_string(id));
            json_array_append_new(out, c);
            continue;
        }
        /* this array's pending elements with the same reason, ascending index */
        const char *why = cli_jstr(j, "reason", "");
        idxbuf b = {NULL, 0, 0};
        long long lo = -1, hi = -1;
        size_t count = 0;
        for (size_t k = i; k < n; k++) {
            json_t *e = json_array_get(all, k);
            if (used[k] || cli_jint(e, "array_id", -1) != a ||
                strcmp(cli_jstr(e, "state", ""), "PENDING") ||
                strcmp(cli_jstr(e, "reason", ""), why))
                continue;
            used[k] = 1;
            long long t = cli_jint(e, "array_task", 0);
            if (count && t == hi) continue; /* a part of a non-gang element */
            count++;
            if (lo >= 0 && t == hi + 1) {
                hi = t;
                continue;
            }
            if (lo >= 0) range_text(&b, lo, hi);
            lo = hi = t;
        }
        if (count > 1) {
            range_text(&b, lo, hi);
            char *d = malloc(b.len + 32);
            if (!d) abort();
            sprintf(d, "%lld_[%s]", a, b.s);
            json_object_set_new(c, "display_id", json_string(d));
            json_object_set_new(c, "array_pending", json_integer((json_int_t)count));
            free(d);
        } else {
            json_object_set_new(c, "display_id", json_string(id));
        }
        free(b.s);
        json_array_append_new(out, c);
    }
    free(used);
    return out;
}

static void print_table(json_t *all, int headers, long long now)
{
    cli_table t;
    cli_table_init(&t, 9, 1u << 0 | 1u << 5 | 1u << 6 | 1u << 8);
    const char *hdr[] = {"ID", "VC", "NAME", "USER", "ST", "GPUS", "AGE", "REASON", "POS"};
    cli_table_add(&t, hdr);
    size_t i;
    json_t *j;
    json_array_foreach(all, i, j)
    {
        char id[32], gpus[52], age[32], pos[32], name[40], reason[80];
        snprintf(id, sizeof id, "%lld", cli_jint(j, "id", 0));
        const char *idp = cli_jstr(j, "display_id", id); /* arrays: 123_7, 123_[4-99] */
        /* tasks of different sizes (issue 14): per task, "2+1" */
        const char *mem = cli_jstr(j, "members", NULL);
        if (mem)
            snprintf(gpus, sizeof gpus, "%s", mem);
        else
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
        const char *row[] = {idp,
                             cli_jstr(j, "vc", "-"),
                             name,
                             cli_jstr(j, "user", "-"),
                             cli_job_st(j),
                             gpus,
                             age,
                             reason,
                             pos};
        cli_table_add(&t, row);
    }
    cli_table_print(&t, headers);
    cli_table_release(&t);
}

static volatile sig_atomic_t g_queue_stop;

static void on_int(int sig)
{
    (void)sig;
    g_queue_stop = 1;
}

/* ---- queue -w (events lane): list again when the event stream says something changed ------
 * Between two listings a stream (GET /v1/events, job and node events the caller may see) is
 * opened after the last event seen and read up to the first new event: nothing is missed
 * between listings (the daemon replays what came meanwhile), listings are at least
 * QW_GAP_S apart, and a ping every second lets Ctrl-C end the wait.  Without a stream (an
 * older daemon, too many streams: 429) it polls every `poll_s` seconds, saying so once. */

#define QW_GAP_S 0.5

typedef struct queue_watch {
    char last_id[64]; /* the last event seen ("0": none) */
    int polling;      /* the stream is not available: poll */
    double last;      /* when the last listing was made (CLOCK_MONOTONIC seconds) */
} queue_watch;

static double qw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* an event (not a ping) ends the wait; Ctrl-C too */
static int qw_event(void *arg, const gsd_sse_event *ev)
{
    (void)arg;
    return g_queue_stop || !ev->comment;
}

/* Where the stream stands before the first listing (its last event), or polling. */
static void queue_watch_init(cli_conn *k, queue_watch *w)
{
    memset(w, 0, sizeof *w);
    k->quiet = 1;
    int rc = cli_sse(k, "/v1/events?follow=0&last=1&kind=job,node", NULL, 30, qw_event, NULL,
                     w->last_id, sizeof w->last_id, "queue --watch");
    k->quiet = 0;
    if (rc) {
        w->polling = 1;
        cli_err("queue --watch: no event stream (%s): listing every few seconds instead",
                k->msg[0] ? k->msg : "?");
    }
    if (!w->last_id[0]) snprintf(w->last_id, sizeof w->last_id, "0");
    w->last = qw_now();
}

/* Wait until the next listing is due: 0, or 1 to stop (Ctrl-C). */
static int queue_watch_wait(cli_conn *k, queue_watch *w, long long poll_s)
{
    if (!w->polling) {
        while (!g_queue_stop && qw_now() < w->last + QW_GAP_S) {
            struct timespec ts = {0, 50000000L};
            nanosleep(&ts, NULL);
        }
        char path[160];
        snprintf(path, sizeof path, "/v1/events?kind=job,node&ping=1&since=%s", w->last_id);
        char id[64] = "";
        k->quiet = 1;
        int rc = cli_sse(k, path, NULL, 30, qw_event, NULL, id, sizeof id, "queue --watch");
        k->quiet = 0;
        if (id[0]) snprintf(w->last_id, sizeof w->last_id, "%s", id);
        if (rc && !g_queue_stop) {
            w->polling = 1;
            cli_err("queue --watch: the event stream broke (%s): listing every %llds instead",
                    k->msg[0] ? k->msg : "?", poll_s);
        }
    } else {
        for (long long ms = 0; ms < poll_s * 1000 && !g_queue_stop; ms += 100) {
            struct timespec ts = {0, 100000000L};
            nanosleep(&ts, NULL);
        }
    }
    w->last = qw_now();
    return g_queue_stop != 0;
}

enum { Q_LIMIT = 1, Q_NOHDR, Q_ME, Q_ITERATIONS, Q_VC, Q_START, Q_PAGE, Q_ALL_PAGES };

/* squeue --long's fields */
#define LONG_FORMAT "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"

int cmd_queue(int argc, char **argv)
{
    static const struct option longopts[] = {{"all", no_argument, NULL, 'a'},
                                             {"states", required_argument, NULL, 't'},
                                             {"state", required_argument, NULL, 't'},
                                             {"user", required_argument, NULL, 'u'},
                                             {"me", no_argument, NULL, Q_ME},
                                             {"partition", required_argument, NULL, 'p'},
                                             {"vc", required_argument, NULL, Q_VC},
                                             {"qos", required_argument, NULL, 'q'},
                                             {"name", required_argument, NULL, 'n'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"format", required_argument, NULL, 'o'},
                                             {"iterate", required_argument, NULL, 'i'},
                                             {"iterations", required_argument, NULL, Q_ITERATIONS},
                                             {"watch", no_argument, NULL, 'w'},
                                             {"long", no_argument, NULL, 'l'},
                                             {"array", no_argument, NULL, 'r'},
                                             {"start", no_argument, NULL, Q_START},
                                             {"limit", required_argument, NULL, Q_LIMIT},
                                             {"page", required_argument, NULL, Q_PAGE},
                                             {"all-pages", no_argument, NULL, Q_ALL_PAGES},
                                             {"noheader", no_argument, NULL, 'h'},
                                             {"no-headers", no_argument, NULL, Q_NOHDR},
                                             {"help", no_argument, NULL, 'H'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    cli_jobsel sel;
    cli_jobsel_init(&sel);
    const char *fmt = NULL;
    long long limit = -1, page = -1, iterate = 0, iterations = -1;
    int headers = 1, opt, rc = EXIT_USAGE, me = 0, longfmt = 0, all_pages = 0, watch = 0,
        one_per_element = 0;
    queue_watch qw;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "at:u:p:q:n:j:o:i:hlwr", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        switch (opt) {
        case 'a': sel.all = 1; break;
        case 'r': one_per_element = 1; break;
        case 't':
            if (cli_jobsel_states(&sel, "--states", optarg)) goto done;
            break;
        case 'u':
            if (cli_jobsel_users(&sel, "--user", optarg)) goto done;
            break;
        case Q_ME: me = 1; break;
        case 'p':
        case Q_VC:
            if (cli_jobsel_vcs(&sel, opt == 'p' ? "--partition" : "--vc", optarg)) goto done;
            break;
        case 'q':
            if (cli_jobsel_qos(&sel, "--qos", optarg)) goto done;
            break;
        case 'n':
            if (cli_jobsel_names(&sel, "--name", optarg)) goto done;
            break;
        case 'j':
            if (cli_jobsel_ids(&sel, "--jobs", optarg)) goto done;
            break;
        case 'o':
            if (format_check(optarg)) goto done;
            fmt = optarg;
            break;
        case 'h':
        case Q_NOHDR: headers = 0; break;
        case 'l': longfmt = 1; break;
        case 'w': watch = 1; break;
        case Q_ALL_PAGES: all_pages = 1; break;
        case Q_START:
            cli_err("--start: gsched does not predict start times (policies reorder and preempt); "
                    "`gsched describe job ID` says why a job waits and its queue position, "
                    "`gsched submit --dry-run` whether a job would start now");
            goto done;
        case 'i':
        case Q_ITERATIONS:
        case Q_PAGE:
        case Q_LIMIT: {
            char *e;
            long long v = strtoll(optarg, &e, 10);
            if (*e || e == optarg || v < 1 || strlen(optarg) > 12) {
                cli_err("--%s: expected a positive integer, got '%s'",
                        opt == 'i'       ? "iterate"
                        : opt == Q_LIMIT ? "limit"
                        : opt == Q_PAGE  ? "page"
                                         : "iterations",
                        optarg);
                goto done;
            }
            if (opt == 'i') iterate = v;
            if (opt == Q_ITERATIONS) iterations = v;
            if (opt == Q_LIMIT) limit = v;
            if (opt == Q_PAGE) page = v;
            break;
        }
        case 'H':
            queue_usage(stdout);
            rc = EXIT_OK;
            goto done;
        default: queue_usage(stderr); goto done;
        }
    }
    if (optind < argc) {
        cli_err("queue: unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (all_pages && (limit > 0 || page > 0)) {
        cli_err("queue: --all-pages lists every job: it takes no --limit or --page");
        goto done;
    }
    if (me && cli_jobsel_me(&sel, &k)) goto done;
    if (longfmt && !fmt) fmt = LONG_FORMAT; /* -o wins, as in squeue */
    if (watch && !iterate) iterate = 2;     /* -w: its polling period without a stream */
    if (iterate) signal(SIGINT, on_int);
    if (watch) queue_watch_init(&k, &qw);
    /* --json lists every job unless asked for a page (scripts read it whole) */
    qpage pg = {limit > 0 ? limit : QUEUE_PAGE, page > 0 ? page : 1};
    if (all_pages || (k.json && limit < 0 && page < 0)) pg.per = -1;
    char fields[512];
    queue_fields(fmt, fields, sizeof fields);
    for (long long round = 0;; round++) {
        json_t *all;
        long long total = 0;
        rc =
            cli_jobsel_page(&k, &sel, k.json ? NULL : fields,
                            pg.per < 0 ? 0 : (pg.page - 1) * pg.per, pg.per, "queue", &all, &total);
        if (rc) break;
        size_t fetched = json_array_size(all); /* jobs: the footer counts jobs, not rows */
        if (!k.json) { /* job arrays: 123_7, pending elements as one row 123_[4-99] */
            json_t *shown = queue_collapse_arrays(all, one_per_element);
            json_decref(all);
            all = shown;
        }
        long long now = cli_now_us();
        if ((iterate || (longfmt && headers)) && !k.json) {
            time_t t = time(NULL);
            char ts[64];
            strftime(ts, sizeof ts, "%a %b %d %H:%M:%S %Y", localtime(&t));
            printf("%s%s\n", round ? "\n" : "", ts);
        }
        if (k.json) {
            json_t *o = json_pack("{s:O,s:I}", "jobs", all, "total", (json_int_t)total);
            if (pg.per > 0) {
                json_object_set_new(o, "page", json_integer(pg.page));
                json_object_set_new(o, "per_page", json_integer(pg.per));
            }
            print_json(o);
            json_decref(o);
        } else if (fmt) {
            if (headers) format_line(fmt, NULL, now);
            size_t i;
            json_t *j;
            json_array_foreach(all, i, j) format_line(fmt, j, now);
        } else {
            print_table(all, headers, now);
        }
        if (!k.json) print_footer(headers ? stdout : stderr, &pg, fetched, total);
        json_decref(all);
        fflush(stdout);
        if (!iterate || g_queue_stop || (iterations > 0 && round + 1 >= iterations)) break;
        if (watch) {
            if (queue_watch_wait(&k, &qw, iterate)) break;
            continue;
        }
        /* sleep in slices so that Ctrl-C ends the watch at once */
        for (long long ms = 0; ms < iterate * 1000 && !g_queue_stop; ms += 100) {
            struct timespec ts = {0, 100000000L};
            nanosleep(&ts, NULL);
        }
        if (g_queue_stop) break;
    }
done:
    cli_jobsel_release(&sel);
    return rc;
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
    /* a REASON column (as sinfo -R) only when a node has one: a drained or bad node */
    size_t i;
    json_t *n;
    int reasons = 0, outside = 0, chains = 0;
    json_array_foreach(json_object_get(r, "nodes"), i, n)
    {
        reasons |= cli_jstr(n, "reason", NULL) || cli_jstr(n, "bad_reason", NULL) ||
                   json_array_size(json_object_get(n, "gpu_faults")); /* unhealthy GPUs */
        outside |= cli_jint(n, "outside", 0) > 0; /* GPUs foreign jobs use (cluster backends) */
        /* a machine in several HiveD chains: a row per node cell, each saying its chain */
        chains |= cli_jint(n, "node_cells", 1) > 1;
    }
    cli_table t;
    cli_table_init(&t, 8 + reasons + outside + chains,
                   (1u << 2 | 1u << 3 | 1u << 4 | 1u << 5 | (outside ? 1u << 6 : 0)) << chains);
    const char *hdr[] = {"NODE", "STATE", "GPUS", "ALLOC",  "FREE",
                         "DOWN", "TYPE",  "JOBS", "REASON", NULL};
    const char *hdr_out[] = {"NODE", "STATE",   "GPUS", "ALLOC", "FREE",
                             "DOWN", "OUTSIDE", "TYPE", "JOBS",  "REASON"};
    const char *const *h = outside ? hdr_out : hdr;
    const char *hc[11] = {"NODE", "CHAIN"};
    for (int c = 1; c < 10; c++) hc[c + 1] = h[c];
    cli_table_add(&t, chains ? hc : h);
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
        char o[16];
        snprintf(o, sizeof o, "%lld", cli_jint(n, "outside", 0));
        /* GPU health: the node's own reason first, else its unhealthy GPUs and why */
        char why[600];
        snprintf(why, sizeof why, "%s", cli_jstr(n, "reason", cli_jstr(n, "bad_reason", "-")));
        json_array_foreach(json_object_get(n, "gpu_faults"), k2, x)
        {
            size_t l = strcmp(why, "-") ? strlen(why) : 0;
            snprintf(why + l, sizeof why - l, "%sGPU %lld unhealthy: %s", l ? "; " : "",
                     cli_jint(x, "gpu", 0), cli_jstr(x, "reason", "?"));
        }
        const char *row[] = {cli_jstr(n, "name", "?"),
                             cli_jstr(n, "state", "?"),
                             g,
                             a,
                             f,
                             d,
                             types,
                             *jobs ? jobs : "-",
                             why};
        const char *row_out[] = {cli_jstr(n, "name", "?"),
                                 cli_jstr(n, "state", "?"),
                                 g,
                                 a,
                                 f,
                                 d,
                                 o,
                                 types,
                                 *jobs ? jobs : "-",
                                 why};
        const char *const *rw = outside ? row_out : row;
        const char *rc2[11] = {rw[0], cli_jstr(n, "chain", "-")};
        for (int c = 1; c < 10 - !outside; c++) rc2[c + 1] = rw[c];
        cli_table_add(&t, chains ? rc2 : rw);
    }
    cli_table_print(&t, headers);
    cli_table_release(&t);
    json_t *ro = json_object_get(r, "read_only");
    if (ro) /* the daemon cannot write its database (docs/daemon.md, read-only mode) */
        printf("\nREAD-ONLY since %s: %s\n(%s)\n", cli_jstr(ro, "since", "?"),
               cli_jstr(ro, "reason", "?"), cli_jstr(ro, "effect", ""));
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
