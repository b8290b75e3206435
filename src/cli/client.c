/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client.c - shared helpers of the CLI commands that talk to the daemon
 * (see client.h).  Invariant: every failure path prints exactly one
 * "gsched: ..." line on stderr and yields a documented exit code.
 */

#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"

void cli_conn_init(cli_conn *k)
{
    memset(k, 0, sizeof *k);
    const char *s = getenv("GSCHED_SERVER");
    k->c.server = s && *s ? s : NULL; /* NULL: the default socket (gsd_default_socket) */
    const char *t = getenv("GSCHED_TOKEN");
    k->c.token = t && *t ? t : NULL;
    const char *u = getenv("USER");
    if (!u || !*u) {
        struct passwd *pw = getpwuid(getuid());
        u = pw ? pw->pw_name : NULL;
    }
    snprintf(k->user, sizeof k->user, "%s", u ? u : "");
    k->c.user = k->user[0] ? k->user : NULL;
    k->c.timeout_s = 30;
}

int cli_conn_opt(cli_conn *k, int opt, const char *arg)
{
    switch (opt) {
    case CLI_OPT_SERVER: k->c.server = arg; return 1;
    case CLI_OPT_TOKEN: k->c.token = arg; return 1;
    case CLI_OPT_JSON: k->json = 1; return 1;
    default: return 0;
    }
}

int cli_exit_for_status(long status)
{
    if (status >= 200 && status < 300) return EXIT_OK;
    if (status == 404) return EXIT_NOTFOUND;
    if (status == 400 || status == 413 || status == 415 || status == 422) return EXIT_USAGE;
    return EXIT_RUNTIME;
}

#define HINT_401 "hint: give a token with --token or GSCHED_TOKEN"

void cli_call_report(const cli_conn *k)
{
    if (k->msg[0]) cli_err("%s", k->msg);
    if (k->status == 401) cli_err("%s", HINT_401);
}

/* The error line of a failed call: printed, or kept in k->msg when k->quiet. */
static void call_err(cli_conn *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void call_err(cli_conn *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->msg, sizeof k->msg, fmt, ap);
    va_end(ap);
    if (!k->quiet) cli_err("%s", k->msg);
}

/* A failed answer (status not 2xx, body in r): its error line, as cli_call prints it. */
static int report_status(cli_conn *k, gsd_resp *r, const char *what)
{
    int code = cli_exit_for_status(r->status);
    json_t *j = r->len ? json_loads(r->body, 0, NULL) : NULL;
    const char *detail = j ? cli_jstr(j, "detail", NULL) : NULL;
    const char *ecode = j ? cli_jstr(j, "code", NULL) : NULL;
    if (detail)
        call_err(k, "%s: %s (%s)", what, detail, ecode ? ecode : "error");
    else
        call_err(k, "%s: HTTP %ld%s%.200s", what, r->status, r->len ? ": " : "",
                 r->len ? r->body : "");
    if (r->status == 401 && !k->quiet) cli_err("%s", HINT_401);
    if (j) json_decref(j);
    return code;
}

int cli_call(cli_conn *k, const char *method, const char *path, const char *body, const char *ctype,
             const char *const *headers, const char *what, json_t **out)
{
    if (out) *out = NULL;
    k->msg[0] = '\0';
    gsd_resp r;
    int q = gsd_request(&k->c, method, path, body, body ? strlen(body) : 0, ctype, headers, &r);
    k->status = q ? 0 : r.status;
    k->retry_after = q ? -1 : r.retry_after;
    if (q) {
        call_err(k, "%s", r.err);
        gsd_resp_release(&r);
        return EXIT_UNREACHABLE;
    }
    int code = cli_exit_for_status(r.status);
    if (code != EXIT_OK) {
        code = report_status(k, &r, what);
        gsd_resp_release(&r);
        return code;
    }
    json_t *j = r.len ? json_loads(r.body, 0, NULL) : NULL;
    if (out) {
        if (!j) {
            call_err(k, "%s: the daemon sent a response that is not JSON", what);
            gsd_resp_release(&r);
            return EXIT_RUNTIME;
        }
        *out = j;
    } else if (j) {
        json_decref(j);
    }
    gsd_resp_release(&r);
    return EXIT_OK;
}

int cli_stream(cli_conn *k, const char *method, const char *path, const char *body,
               const char *ctype, const char *const *headers, long idle_s, gsd_stream_fn on_body,
               void *arg, const char *what)
{
    k->msg[0] = '\0';
    gsd_resp r;
    int q = gsd_client_stream(&k->c, method, path, body, body ? strlen(body) : 0, ctype, headers,
                              idle_s, on_body, arg, &r);
    k->status = r.status;
    k->retry_after = r.retry_after;
    int code = EXIT_OK;
    if (q) {
        call_err(k, "%s", r.err);
        code = EXIT_UNREACHABLE;
    } else if (r.status < 200 || r.status > 299) {
        code = report_status(k, &r, what);
    }
    gsd_resp_release(&r);
    return code;
}

typedef struct sse_call {
    gsd_sse p;
    const gsd_resp *r;
    int rc;      /* the parser's error, or 1: the caller stopped */
    int checked; /* the content type was looked at */
    int bad_type;
    gsd_sse_fn on_event;
    void *arg;
    char *last_id;
    size_t cap;
} sse_call;

static int sse_event(void *arg, const gsd_sse_event *ev)
{
    sse_call *c = arg;
    if (!ev->comment && c->last_id) snprintf(c->last_id, c->cap, "%s", ev->id);
    return c->on_event(c->arg, ev) ? 1 : 0;
}

static int sse_body(void *arg, const char *data, size_t len)
{
    sse_call *c = arg;
    int rc = gsd_sse_feed(&c->p, data, len);
    if (rc) c->rc = rc;
    return rc;
}

/* The content type before the first byte: a stream carries no status of its own, so an
 * answer that is not an event stream (a proxy's page, an old daemon) must not be parsed. */
static int sse_first(void *arg, const char *data, size_t len);

int cli_sse(cli_conn *k, const char *path, const char *const *headers, long idle_s,
            gsd_sse_fn on_event, void *arg, char *last_id, size_t cap, const char *what)
{
    sse_call c;
    memset(&c, 0, sizeof c);
    gsd_sse_init(&c.p, sse_event, &c);
    c.on_event = on_event;
    c.arg = arg;
    c.last_id = last_id;
    c.cap = cap;
    if (last_id && cap) last_id[0] = '\0';
    k->msg[0] = '\0';
    gsd_resp r;
    c.r = &r;
    int q =
        gsd_client_stream(&k->c, "GET", path, NULL, 0, NULL, headers, idle_s, sse_first, &c, &r);
    k->status = r.status;
    k->retry_after = r.retry_after;
    int code = EXIT_OK;
    if (q) {
        call_err(k, "%s", r.err);
        code = EXIT_UNREACHABLE;
    } else if (r.status < 200 || r.status > 299) {
        code = report_status(k, &r, what);
    } else if (c.bad_type || (!c.checked && r.content_type &&
                              strncasecmp(r.content_type, "text/event-stream", 17))) {
        call_err(k, "%s: the daemon's answer is not an event stream (%s)", what,
                 r.content_type ? r.content_type : "no content type");
        code = EXIT_RUNTIME;
    } else if (c.rc < 0) {
        call_err(k, "%s: a malformed event stream: %s", what, gs_strerror(c.rc));
        code = EXIT_RUNTIME;
    }
    gsd_resp_release(&r);
    gsd_sse_release(&c.p);
    return code;
}

static int sse_first(void *arg, const char *data, size_t len)
{
    sse_call *c = arg;
    if (!c->checked) {
        c->checked = 1;
        const char *ct = c->r->content_type;
        if (!ct || strncasecmp(ct, "text/event-stream", 17)) {
            c->bad_type = 1;
            return 1;
        }
    }
    return sse_body(arg, data, len);
}

void cli_table_init(cli_table *t, size_t ncols, unsigned right_mask)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->right = right_mask;
}

void cli_table_add(cli_table *t, const char *const *row)
{
    if ((t->nrows + 1) * t->ncols > t->cap) {
        t->cap = t->cap ? t->cap * 2 : t->ncols * 16;
        while (t->cap < (t->nrows + 1) * t->ncols) t->cap *= 2;
        char **nc = realloc(t->cells, t->cap * sizeof *nc);
        if (!nc) abort();
        t->cells = nc;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        char *s = strdup(row[i] ? row[i] : "");
        if (!s) abort();
        t->cells[t->nrows * t->ncols + i] = s;
    }
    t->nrows++;
}

void cli_table_print(const cli_table *t, int headers)
{
    size_t w[32] = {0};
    size_t nc = t->ncols < 32 ? t->ncols : 32;
    for (size_t r = headers ? 0 : 1; r < t->nrows; r++)
        for (size_t c = 0; c < nc; c++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c]) w[c] = l;
        }
    for (size_t r = headers ? 0 : 1; r < t->nrows; r++) {
        for (size_t c = 0; c < nc; c++) {
            const char *s = t->cells[r * t->ncols + c];
            int last = c + 1 == nc;
            if (t->right & (1u << c))
                printf("%*s", (int)w[c], s);
            else if (last)
                printf("%s", s);
            else
                printf("%-*s", (int)w[c], s);
            if (!last) fputs("  ", stdout);
        }
        fputc('\n', stdout);
    }
}

void cli_table_release(cli_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void cli_age(long long us, char *buf, size_t cap)
{
    if (us < 0) us = 0;
    long long s = us / 1000000;
    if (s < 60)
        snprintf(buf, cap, "%llds", s);
    else if (s < 3600)
        snprintf(buf, cap, "%lldm%02llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, cap, "%lldh%02lldm", s / 3600, s / 60 % 60);
    else
        snprintf(buf, cap, "%lldd%02lldh", s / 86400, s / 3600 % 24);
}

const char *cli_jstr(json_t *o, const char *key, const char *def)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

long long cli_jint(json_t *o, const char *key, long long def)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : def;
}

long long cli_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}
