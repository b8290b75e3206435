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
    json_t *j = r.len ? json_loads(r.body, 0, NULL) : NULL;
    if (code != EXIT_OK) {
        const char *detail = j ? cli_jstr(j, "detail", NULL) : NULL;
        const char *ecode = j ? cli_jstr(j, "code", NULL) : NULL;
        if (detail)
            call_err(k, "%s: %s (%s)", what, detail, ecode ? ecode : "error");
        else
            call_err(k, "%s: HTTP %ld%s%.200s", what, r.status, r.len ? ": " : "",
                     r.len ? r.body : "");
        if (r.status == 401 && !k->quiet) cli_err("%s", HINT_401);
        if (j) json_decref(j);
        gsd_resp_release(&r);
        return code;
    }
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
