/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobsel.c - job selection for `gsched queue` and `gsched cancel` (see jobsel.h): parsing
 * squeue / scancel selectors, the listing state (CG), and fetching GET /v1/jobs page by page
 * with what the daemon can filter, the rest filtered here; a page of the selection (offset,
 * count, total) and only the keys a printer asks for (?fields=, compact JSON).
 *
 * Invariant: a selector that names nothing valid is an error (exit 2), never "match
 * everything": an unknown state, an empty list item, a bad id or QOS.
 */

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "jobsel.h"

static const struct {
    const char *abbr, *name, *alt; /* alt: another accepted long name */
    const char *daemon;            /* daemon states to fetch for it */
} g_states[JS_NSTATES] = {
    [JS_PD] = {"PD", "PENDING", NULL, "PENDING"},
    [JS_R] = {"R", "RUNNING", NULL, "RUNNING"},
    [JS_CG] = {"CG", "COMPLETING", NULL, "RUNNING,PREEMPTED,SUSPENDED"},
    [JS_PR] = {"PR", "PREEMPTED", NULL, "PREEMPTED"},
    [JS_S] = {"S", "SUSPENDED", NULL, "SUSPENDED"},
    [JS_CD] = {"CD", "COMPLETED", "DONE", "DONE"},
    [JS_F] = {"F", "FAILED", NULL, "FAILED"},
    [JS_CA] = {"CA", "CANCELLED", NULL, "CANCELLED"},
    [JS_RJ] = {"RJ", "REJECTED", NULL, "REJECTED"},
};

void cli_jobsel_init(cli_jobsel *s)
{
    memset(s, 0, sizeof *s);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

void cli_jobsel_release(cli_jobsel *s)
{
    free_list(s->users, s->nusers);
    free_list(s->vcs, s->nvcs);
    free_list(s->names, s->nnames);
    free(s->prios);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* Call fn on each comma-separated item; an empty item is an error. */
static int each_item(const char *flag, const char *list,
                     int (*fn)(cli_jobsel *, const char *, const char *), cli_jobsel *s)
{
    char *buf = strdup(list);
    if (!buf) abort();
    int rc = 0;
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (!*p) {
            cli_err("%s: '%s' has an empty item", flag, list);
            rc = -1;
            break;
        }
        if ((rc = fn(s, flag, p))) break;
        if (!comma) break;
        p = comma + 1;
    }
    free(buf);
    return rc;
}

static void push_str(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) abort();
    *v = nv;
    (*v)[*n] = strdup(s);
    if (!(*v)[*n]) abort();
    (*n)++;
}

static int add_state(cli_jobsel *s, const char *flag, const char *t)
{
    if (!strcasecmp(t, "all")) {
        s->all = 1;
        s->states = (1u << JS_NSTATES) - 1;
        return 0;
    }
    for (int i = 0; i < JS_NSTATES; i++)
        if (!strcasecmp(t, g_states[i].abbr) || !strcasecmp(t, g_states[i].name) ||
            (g_states[i].alt && !strcasecmp(t, g_states[i].alt))) {
            s->states |= 1u << i;
            if (i >= JS_CD) s->all = 1;
            return 0;
        }
    cli_err("%s: unknown state '%s' (PD, R, CG, PR, S, CD, F, CA, RJ, their long names "
            "PENDING, RUNNING, COMPLETING, PREEMPTED, SUSPENDED, COMPLETED, FAILED, CANCELLED, "
            "REJECTED, or all)",
            flag, t);
    return -1;
}

static int add_user(cli_jobsel *s, const char *flag, const char *t)
{
    (void)flag;
    push_str(&s->users, &s->nusers, t);
    return 0;
}

static int add_vc(cli_jobsel *s, const char *flag, const char *t)
{
    (void)flag;
    push_str(&s->vcs, &s->nvcs, t);
    return 0;
}

static int add_name(cli_jobsel *s, const char *flag, const char *t)
{
    (void)flag;
    push_str(&s->names, &s->nnames, t);
    return 0;
}

int cli_qos_priority(const char *flag, const char *q, int *out)
{
    if (!strcasecmp(q, "normal")) {
        *out = 0;
        return 0;
    }
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_parse_priority(q, GS_PRIORITY_MAX, out, &d)) {
        /* one list of the classes, whatever the parser's message says */
        cli_err("%s: '%s' is not a QOS: gsched's are prod (100), test (10), normal (0), oppo (-1), "
                "or an integer priority -1..%d",
                flag, q, GS_PRIORITY_MAX);
        return -1;
    }
    return 0;
}

const char *cli_qos_name(int prio)
{
    return prio == 0 ? "normal" : gs_priority_name(prio);
}

static int add_qos(cli_jobsel *s, const char *flag, const char *t)
{
    int p;
    if (cli_qos_priority(flag, t, &p)) return -1;
    int *np = realloc(s->prios, (s->nprios + 1) * sizeof *np);
    if (!np) abort();
    s->prios = np;
    s->prios[s->nprios++] = p;
    return 0;
}

static int add_id(cli_jobsel *s, const char *flag, const char *t)
{
    char *e;
    long long v = strtoll(t, &e, 10);
    if (*e || e == t || v < 1 || strlen(t) > 18) {
        cli_err("%s: '%s' is not a job id", flag, t);
        return -1;
    }
    long long *nv = realloc(s->ids, (s->nids + 1) * sizeof *nv);
    if (!nv) abort();
    s->ids = nv;
    s->ids[s->nids++] = v;
    return 0;
}

int cli_jobsel_states(cli_jobsel *s, const char *flag, const char *list)
{
    return each_item(flag, list, add_state, s);
}
int cli_jobsel_users(cli_jobsel *s, const char *flag, const char *list)
{
    return each_item(flag, list, add_user, s);
}
int cli_jobsel_vcs(cli_jobsel *s, const char *flag, const char *list)
{
    return each_item(flag, list, add_vc, s);
}
int cli_jobsel_names(cli_jobsel *s, const char *flag, const char *list)
{
    return each_item(flag, list, add_name, s);
}
int cli_jobsel_qos(cli_jobsel *s, const char *flag, const char *list)
{
    return each_item(flag, list, add_qos, s);
}
int cli_jobsel_ids(cli_jobsel *s, const char *flag, const char *list)
{
    return each_item(flag, list, add_id, s);
}

static int js_index(json_t *j)
{
    const char *st = cli_jstr(j, "st", "");
    const char *stop = cli_jstr(j, "stopping", NULL);
    int final = !strcmp(st, "CD") || !strcmp(st, "F") || !strcmp(st, "CA") || !strcmp(st, "RJ");
    /* stopping to end (not a preemption, which requeues): Slurm's COMPLETING */
    if (stop && strcmp(stop, "preempt") && !final) return JS_CG;
    for (int i = 0; i < JS_NSTATES; i++)
        if (!strcmp(st, g_states[i].abbr)) return i;
    return -1;
}

const char *cli_job_st(json_t *j)
{
    int i = js_index(j);
    return i < 0 ? cli_jstr(j, "st", "?") : g_states[i].abbr;
}

const char *cli_job_state_long(json_t *j)
{
    int i = js_index(j);
    return i < 0 ? cli_jstr(j, "state", "?") : g_states[i].name;
}

static int in_list(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return 1;
    return 0;
}

int cli_jobsel_match(const cli_jobsel *s, json_t *j)
{
    if (s->states) {
        int i = js_index(j);
        if (i < 0 || !(s->states & (1u << i))) return 0;
    }
    if (s->nusers && !in_list(s->users, s->nusers, cli_jstr(j, "user", ""))) return 0;
    if (s->nvcs && !in_list(s->vcs, s->nvcs, cli_jstr(j, "vc", ""))) return 0;
    if (s->nnames && !in_list(s->names, s->nnames, cli_jstr(j, "name", ""))) return 0;
    if (s->nprios) {
        long long p = cli_jint(j, "priority", 0);
        size_t i;
        for (i = 0; i < s->nprios && s->prios[i] != p; i++) {
        }
        if (i == s->nprios) return 0;
    }
    if (s->nids) {
        long long id = cli_jint(j, "id", 0), grp = cli_jint(j, "group", id);
        size_t i;
        /* an id selects a non-gang submission's parts too (they share its group) */
        for (i = 0; i < s->nids && s->ids[i] != id && s->ids[i] != grp; i++) {
        }
        if (i == s->nids) return 0;
    }
    return 1;
}

int cli_jobsel_me(cli_jobsel *s, const cli_conn *k)
{
    char me[64] = "";
    const char *t = k->c.token, *dot = t ? strchr(t, '.') : NULL;
    if (dot && (size_t)(dot - t) < sizeof me) {
        memcpy(me, t, (size_t)(dot - t)); /* a token is USER.SECRET */
        me[dot - t] = '\0';
    } else {
        /* on the Unix socket the daemon knows the caller by its uid; over TCP without a
         * token, by the name the CLI sends ($USER) */
        int tcp = k->c.server && strncmp(k->c.server, "unix:", 5);
        struct passwd *pw = tcp ? NULL : getpwuid(geteuid());
        if (pw)
            snprintf(me, sizeof me, "%s", pw->pw_name);
        else
            snprintf(me, sizeof me, "%s", k->user);
    }
    if (!me[0]) {
        cli_err("--me: cannot tell who you are (no token, $USER unset, no passwd entry)");
        return -1;
    }
    push_str(&s->users, &s->nusers, me);
    return 0;
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

/* Jobs per request: the daemon's largest page. */
#define PAGE_MAX 10000

int cli_jobsel_page(cli_conn *k, const cli_jobsel *s, const char *fields, long long offset,
                    long long count, const char *what, json_t **out, long long *total)
{
    /* what the daemon filters: its states, one user, one VC */
    char states[256] = "";
    if (s->states && s->states != (1u << JS_NSTATES) - 1) {
        for (int i = 0; i < JS_NSTATES; i++)
            if (s->states & (1u << i)) {
                size_t n = strlen(states);
                snprintf(states + n, sizeof states - n, "%s%s", n ? "," : "", g_states[i].daemon);
            }
    } else if (s->all || s->nids) {
        strcpy(states, "all");
    }
    const char *user = s->nusers == 1 ? s->users[0] : NULL;
    const char *vc = s->nvcs == 1 ? s->vcs[0] : NULL;
    /* filtered here too: the daemon's offset, limit and total would count jobs this side
     * drops, so every page is read and counted here */
    int local = s->states || s->nusers > 1 || s->nvcs > 1 || s->nnames || s->nprios || s->nids;
    json_t *all = json_array();
    long long at = local ? 0 : offset; /* the daemon's offset of the next request */
    long long matched = 0;             /* selected jobs seen (local filtering) */
    long long tot = 0;
    int rc = EXIT_OK;
    for (int page = 0; page < 100000; page++) {
        char url[1024] = "/v1/jobs";
        char num[32];
        if (*states) url_add(url, sizeof url, "state", states);
        if (vc) url_add(url, sizeof url, "vc", vc);
        if (user) url_add(url, sizeof url, "user", user);
        if (fields) url_add(url, sizeof url, "fields", fields);
        url_add(url, sizeof url, "compact", "1");
        long long want = PAGE_MAX;
        if (!local && count >= 0) want = count - (long long)json_array_size(all);
        if (want > PAGE_MAX) want = PAGE_MAX;
        if (want < 1) want = 1; /* count 0: one job, for the total */
        snprintf(num, sizeof num, "%lld", want);
        url_add(url, sizeof url, "limit", num);
        snprintf(num, sizeof num, "%lld", at);
        url_add(url, sizeof url, "offset", num);
        json_t *r;
        k->quiet = 1;
        rc = cli_call(k, "GET", url, NULL, NULL, NULL, what, &r);
        k->quiet = 0;
        if (rc && k->status == 403 && user)
            cli_err("%s: -u %s: you may select only your own jobs (another user's need an admin "
                    "token) (GS_EPERM)",
                    what, user);
        else if (rc)
            cli_call_report(k);
        if (rc) break;
        if (!local) tot = cli_jint(r, "total", 0);
        size_t i;
        json_t *j;
        json_array_foreach(json_object_get(r, "jobs"), i, j)
        {
            if (local) {
                if (!cli_jobsel_match(s, j)) continue;
                if (matched++ < offset) continue;
            }
            if (count >= 0 && (long long)json_array_size(all) >= count) {
                if (!local) break;
                continue; /* counted, not kept */
            }
            json_array_append(all, j);
        }
        json_t *next = json_object_get(r, "next_offset");
        /* local: every page (to count); else until the page is full */
        int more = json_is_integer(next) &&
                   (local || count < 0 || (long long)json_array_size(all) < count);
        if (more) at = json_integer_value(next);
        json_decref(r);
        if (!more) break;
    }
    if (rc) {
        json_decref(all);
        return rc;
    }
    *out = all;
    if (total) *total = local ? matched : tot;
    return EXIT_OK;
}

int cli_jobsel_fetch(cli_conn *k, const cli_jobsel *s, long long limit, const char *what,
                     json_t **out)
{
    return cli_jobsel_page(k, s, NULL, 0, limit, what, out, NULL);
}
