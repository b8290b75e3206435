/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_job.c - commands about one job or node: `gsched cancel ID... | selectors` (scancel's
 * -u/--me/-n/-p/-t/-q, jobsel.c), `gsched hold ID...` / `gsched release ID...` (scontrol's),
 * `gsched node drain|resume|down|bad|good NAME [--reason TEXT]` (an admin's drain, down or bad
 * mark on a node, like scontrol update nodename=NAME state=...),
 * `gsched describe job ID | node NAME` (key: value lines, an Events table in time order
 * and why a pending job waits, like kubectl describe) and `gsched logs ID
 * [--task N] [--follow]` (a job of several tasks: every task's log, lines prefixed
 * "[task N] ", unless --task or --follow pick one).
 * Invariant: every id is checked before any request is sent, so a typo is a
 * usage error (exit 2), not a daemon error.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "jobsel.h"

static int valid_id(const char *s)
{
    if (!*s || strlen(s) > 18) return 0;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    return strtoll(s, NULL, 10) > 0;
}

/* A job named on the command line: an id, or ARRAY_TASK (element TASK of array ARRAY, as
 * squeue prints it: 123_7), which the daemon resolves. */
int cli_valid_jobref(const char *s)
{
    const char *us = strchr(s, '_');
    if (!us) return valid_id(s);
    char a[24];
    size_t al = (size_t)(us - s);
    if (al >= sizeof a || !us[1] || strlen(us + 1) > 9) return 0;
    memcpy(a, s, al);
    a[al] = 0;
    for (const char *p = us + 1; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    return valid_id(a);
}

static void print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", s ? s : "null");
    free(s);
}

/* ---- hold / release ------------------------------------------------------------------------- */

static void hold_usage(FILE *f, const char *cmd)
{
    if (!strcmp(cmd, "hold"))
        fprintf(f, "usage: gsched hold ID...\n"
                   "\n"
                   "Hold pending jobs, like `scontrol hold`: they wait, reason JobHeldUser, until\n"
                   "`gsched release`.  A job already in its queue is taken back out (released, it\n"
                   "queues again as if just submitted); a policy that cannot do that (gandiva,\n"
                   "gavel, themis, afs, pollux, elasticflow, gandiva-emul) refuses, exit 1.\n"
                   "Its owner or an admin only.\n" CLI_CONN_HELP);
    else
        fprintf(f, "usage: gsched release ID...\n"
                   "\n"
                   "Release held jobs, like `scontrol release`: each joins the queue (or goes on\n"
                   "waiting on its --dependency).  Its owner or an admin only.\n" CLI_CONN_HELP);
}

/* `gsched hold ID...` / `gsched release ID...`: POST /v1/jobs/ID/hold|release. */
int cmd_hold(int argc, char **argv)
{
    const char *cmd = argv[0];
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, CLI_CONN_LONGOPTS, {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'h') {
            hold_usage(stdout, cmd);
            return EXIT_OK;
        }
        hold_usage(stderr, cmd);
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        cli_err("%s needs at least one job id", cmd);
        return EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++)
        if (!cli_valid_jobref(argv[i])) {
            cli_err("%s: '%s' is not a job id", cmd, argv[i]);
            return EXIT_USAGE;
        }
    int worst = EXIT_OK;
    json_t *all = json_array();
    for (int i = optind; i < argc; i++) {
        const char *id = argv[i]; /* an id, or ARRAY_TASK (123_7): the daemon resolves it */
        char path[80], what[64];
        snprintf(path, sizeof path, "/v1/jobs/%s/%s", id, cmd);
        snprintf(what, sizeof what, "%s %s", cmd, id);
        json_t *r;
        int rc = cli_call(&k, "POST", path, NULL, NULL, NULL, what, &r);
        if (rc == EXIT_UNREACHABLE || (rc && worst == EXIT_OK)) worst = rc;
        if (rc == EXIT_UNREACHABLE) break;
        if (rc) continue;
        if (k.json)
            json_array_append(all, r);
        else
            printf("%s job %s\n", !strcmp(cmd, "hold") ? "Held" : "Released", id);
        json_decref(r);
    }
    if (k.json) print_json(all);
    json_decref(all);
    return worst;
}

/* ---- node drain / resume / down / bad / good ---------------------------------------------------
 */

static void node_usage(FILE *f)
{
    fprintf(f, "usage: gsched node drain NAME [--reason TEXT]\n"
               "       gsched node down NAME [--reason TEXT]\n"
               "       gsched node resume NAME [--reason TEXT]\n"
               "       gsched node bad NAME [--reason TEXT]\n"
               "       gsched node good NAME [--reason TEXT]\n"
               "\n"
               "Node administration (admins only), like scontrol update nodename=NAME state=...:\n"
               "  drain   no new job starts there; the jobs running there finish (state\n"
               "          draining, then drained once it is empty)\n"
               "  down    its running jobs are preempted (SIGTERM, grace period, SIGKILL) and\n"
               "          requeued; no job starts there\n"
               "  resume  back to service after drain or down (a bad mark stays: see good)\n"
               "  bad     HiveD's bad hardware: no new job there, the jobs on it run on\n"
               "  good    clears the bad mark (the node returns unless drained or down)\n"
               "Resuming a node in service or draining a down node is refused; repeating a\n"
               "drain or down changes nothing.  The state, its reason, who set it and when are\n"
               "kept across restarts, shown by `gsched nodes` (STATE, REASON) and `gsched\n"
               "describe node NAME` (with the node's events).\n"
               "\n"
               "  -r, --reason TEXT  why (logged and shown; under 256 bytes)\n" CLI_CONN_HELP);
}

/* Append name to path, percent-encoding what is not unreserved. */
static void path_name(char *path, size_t cap, const char *name)
{
    size_t n = strlen(path);
    for (const unsigned char *p = (const unsigned char *)name; *p && n + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.')
            path[n++] = (char)*p;
        else
            n += (size_t)snprintf(path + n, cap - n, "%%%02X", *p);
    }
    path[n] = '\0';
}

/* `gsched node drain|resume|down|bad|good NAME [--reason TEXT]`: POST /v1/nodes/NAME/VERB. */
int cmd_node(int argc, char **argv)
{
    static const struct option longopts[] = {{"reason", required_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    const char *reason = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'r') {
            reason = optarg;
            continue;
        }
        if (opt == 'h') {
            node_usage(stdout);
            return EXIT_OK;
        }
        node_usage(stderr);
        return EXIT_USAGE;
    }
    static const char *const verbs[] = {"drain", "resume", "down", "bad", "good", NULL};
    int vi = -1;
    for (int i = 0; argc - optind == 2 && verbs[i]; i++)
        if (!strcmp(argv[optind], verbs[i])) vi = i;
    if (vi < 0) {
        cli_err("usage: gsched node drain|resume|down|bad|good NAME [--reason TEXT]");
        return EXIT_USAGE;
    }
    if (reason && strlen(reason) >= 256) {
        cli_err("node: --reason is longer than 255 bytes");
        return EXIT_USAGE;
    }
    const char *verb = argv[optind], *name = argv[optind + 1];
    char path[600] = "/v1/nodes/", what[300];
    path_name(path, sizeof path - 8, name);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s", verb);
    snprintf(what, sizeof what, "node %s", name);
    json_t *body = reason ? json_pack("{s:s}", "reason", reason) : NULL;
    char *b = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    json_t *r;
    int rc = cli_call(&k, "POST", path, b, b ? "application/json" : NULL, NULL, what, &r);
    free(b);
    if (rc) return rc;
    int changed = json_is_true(json_object_get(r, "changed"));
    if (k.json) {
        print_json(r);
    } else if (vi >= 3) {
        printf("Node %s %s %s\n", name, changed ? "marked" : "already", verb);
    } else {
        static const char *const done[] = {"drained", "resumed", "down"};
        json_t *pre = json_object_get(r, "preempted");
        printf("Node %s %s%s", name, changed ? "" : "already ", done[vi]);
        if (json_array_size(pre)) {
            printf(" (preempted and requeued:");
            size_t i;
            json_t *v;
            json_array_foreach(pre, i, v) printf(" %lld", (long long)json_integer_value(v));
            printf(")");
        }
        printf("\n");
    }
    json_decref(r);
    return EXIT_OK;
}

/* ---- resize -------------------------------------------------------------------------------- */

static void resize_usage(FILE *f)
{
    fprintf(f, "usage: gsched resize ID --gpus N\n"
               "\n"
               "Resize a running elastic job (submitted with --gpus MIN-MAX) to N GPUs: its\n"
               "generation gets SIGTERM (the control file $GSCHED_CONTROL says the target), saves\n"
               "a checkpoint and exits 143; it is relaunched on N GPUs from there (SIGKILL after\n"
               "its drain timeout).  N must be one of its sizes; N = 0 is refused (cancel it).\n"
               "Its owner or an admin only.  `gsched describe job ID` shows each resize.\n"
               "\n"
               "  -g, --gpus N       the new size\n" CLI_CONN_HELP);
}

int cmd_resize(int argc, char **argv)
{
    static const struct option longopts[] = {{"gpus", required_argument, NULL, 'g'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int opt;
    long gpus = -1;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "g:h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        if (opt == 'g') {
            char *e;
            gpus = strtol(optarg, &e, 10);
            if (*e || e == optarg || gpus < 1 || gpus > GSD_MAX_GPUS) {
                cli_err("resize: --gpus: expected a GPU count from 1 to %d, got '%s'", GSD_MAX_GPUS,
                        optarg);
                return EXIT_USAGE;
            }
            continue;
        }
        if (opt == 'h') {
            resize_usage(stdout);
            return EXIT_OK;
        }
        resize_usage(stderr);
        return EXIT_USAGE;
    }
    if (argc - optind != 1 || !valid_id(argv[optind]) || gpus < 0) {
        cli_err("usage: gsched resize ID --gpus N");
        return EXIT_USAGE;
    }
    long long id = strtoll(argv[optind], NULL, 10);
    char path[80], what[64], body[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/resize", id);
    snprintf(what, sizeof what, "resize %lld", id);
    snprintf(body, sizeof body, "{\"gpus\": %ld}", gpus);
    json_t *r;
    int rc = cli_call(&k, "POST", path, body, "application/json", NULL, what, &r);
    if (rc) return rc;
    if (k.json)
        print_json(r);
    else
        printf("Resizing job %lld: %lld -> %lld GPUs (draining; SIGKILL after %llds)\n", id,
               cli_jint(r, "from", 0), cli_jint(r, "to", 0),
               cli_jint(r, "drain_timeout_seconds", 0));
    json_decref(r);
    return EXIT_OK;
}

/* ---- cancel --------------------------------------------------------------------------------- */

/* DELETE one job; prints what happened.  Returns an exit code: 1 for a job named by id that
 * already ended; a job a selector chose ('selected') that ended since the listing is no
 * failure (the daemon's answer is printed, then why it is not one). */
static int cancel_ref(cli_conn *k, const char *id, int selected, json_t *all, int *ended)
{
    *ended = 0;
    char path[80], what[64];
    /* a plain id named by the user is the whole array when it is an array's id (scancel 123);
     * 123_7 is one element */
    int whole = !selected && !strchr(id, '_');
    snprintf(path, sizeof path, "/v1/jobs/%s%s", id, whole ? "?array=1" : "");
    snprintf(what, sizeof what, "cancel %s", id);
    json_t *r;
    int rc = cli_call(k, "DELETE", path, NULL, NULL, NULL, what, &r);
    if (whole) snprintf(path, sizeof path, "/v1/jobs/%s", id);
    if (rc == EXIT_RUNTIME && selected) {
        json_t *j;
        if (cli_call(k, "GET", path, NULL, NULL, NULL, what, &j) == EXIT_OK) {
            const char *st = cli_jstr(j, "state", "");
            int final = !strcmp(st, "DONE") || !strcmp(st, "FAILED") || !strcmp(st, "CANCELLED") ||
                        !strcmp(st, "REJECTED");
            if (final) {
                fprintf(stderr, "gsched: (job %s ended after it was selected: not an error)\n", id);
                rc = EXIT_OK;
                *ended = 1;
            }
            json_decref(j);
        }
        return rc;
    }
    if (rc) return rc;
    if (k->json) {
        json_array_append(all, r);
    } else {
        size_t nc = json_array_size(json_object_get(r, "cancelled"));
        size_t ns = json_array_size(json_object_get(r, "stopping"));
        int arr = json_object_get(r, "array_id") != NULL;
        if (arr && ns)
            printf("Cancelling array job %s: %zu running element(s) got SIGTERM, SIGKILL after "
                   "%llds (%zu pending element(s) cancelled)\n",
                   id, ns, cli_jint(r, "grace_seconds", 0), nc);
        else if (arr)
            printf("Cancelled array job %s (%zu element(s))\n", id, nc);
        else if (ns)
            printf("Cancelling job %s: %zu running part(s) got SIGTERM, SIGKILL after %llds%s\n",
                   id, ns, cli_jint(r, "grace_seconds", 0),
                   nc ? " (the pending parts are cancelled)" : "");
        else if (nc > 1)
            printf("Cancelled job %s (%zu tasks)\n", id, nc);
        else
            printf("Cancelled job %s\n", id);
    }
    json_decref(r);
    return EXIT_OK;
}

static int cancel_one(cli_conn *k, long long id, int selected, json_t *all, int *ended)
{
    char ref[32];
    snprintf(ref, sizeof ref, "%lld", id);
    return cancel_ref(k, ref, selected, all, ended);
}

static void cancel_usage(FILE *f)
{
    fprintf(f, "usage: gsched cancel [ID...] [-u USER] [--me] [-n NAME] [-p VC] [-t STATES] [-q "
               "QOS]\n"
               "\n"
               "Pending jobs end at once; running jobs get SIGTERM, a grace period, then "
               "SIGKILL.\n"
               "An array's id (the first element's) cancels the whole array, ARRAY_TASK (123_7)\n"
               "one element, as scancel.\n"
               "Like scancel, the selectors combine (all must match); IDs, --user, --me, --name "
               "or\n"
               "--partition must name the jobs (--state and --qos only narrow them).\n"
               "\n"
               "  -u, --user LIST       jobs of these users\n"
               "      --me              your jobs\n"
               "  -n, --name LIST       jobs with these names (also --jobname)\n"
               "  -p, --partition LIST  jobs in these virtual clusters (also --vc)\n"
               "  -t, --state LIST      only jobs in these states (PD, R, S, PR, CG, long names)\n"
               "  -q, --qos LIST        only jobs of these priority classes\n" CLI_CONN_HELP);
}

enum { C_ME = 1, C_VC };

int cmd_cancel(int argc, char **argv)
{
    static const struct option longopts[] = {{"user", required_argument, NULL, 'u'},
                                             {"me", no_argument, NULL, C_ME},
                                             {"name", required_argument, NULL, 'n'},
                                             {"jobname", required_argument, NULL, 'n'},
                                             {"partition", required_argument, NULL, 'p'},
                                             {"vc", required_argument, NULL, C_VC},
                                             {"state", required_argument, NULL, 't'},
                                             {"states", required_argument, NULL, 't'},
                                             {"qos", required_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    cli_jobsel sel;
    cli_jobsel_init(&sel);
    int opt, me = 0, filters = 0, rc = EXIT_USAGE;
    json_t *all = json_array(), *jobs = NULL;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "u:n:p:t:q:h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        int bad = 0;
        switch (opt) {
        case 'u': bad = cli_jobsel_users(&sel, "--user", optarg); break;
        case C_ME: me = 1; break;
        case 'n': bad = cli_jobsel_names(&sel, "--name", optarg); break;
        case 'p':
        case C_VC: bad = cli_jobsel_vcs(&sel, opt == 'p' ? "--partition" : "--vc", optarg); break;
        case 't': bad = cli_jobsel_states(&sel, "--state", optarg); break;
        case 'q': bad = cli_jobsel_qos(&sel, "--qos", optarg); break;
        case 'h':
            cancel_usage(stdout);
            rc = EXIT_OK;
            goto done;
        default: cancel_usage(stderr); goto done;
        }
        if (bad) goto done;
        filters = 1;
    }
    if (me && cli_jobsel_me(&sel, &k)) goto done;
    filters |= me;
    for (int i = optind; i < argc; i++)
        if (!cli_valid_jobref(argv[i]) || (filters && !valid_id(argv[i]))) {
            cli_err("cancel: '%s' is not a job id%s", argv[i],
                    filters ? "" : " (ID, or ARRAY_TASK such as 123_7)");
            goto done;
        }
    if (optind >= argc && !sel.nusers && !sel.nnames && !sel.nvcs) {
        cli_err(filters ? "cancel: --state and --qos only narrow a selection: name the jobs (IDs, "
                          "--user, --me, --name or --partition)"
                        : "cancel needs at least one job id or a selector (--user, --me, --name, "
                          "--partition)");
        goto done;
    }
    int worst = EXIT_OK;
    if (!filters) {
        /* plain IDs: each one is cancelled or its error reported */
        for (int i = optind; i < argc; i++) {
            int ended;
            int r = cancel_ref(&k, argv[i], 0, all, &ended);
            if (r == EXIT_UNREACHABLE || (r && worst == EXIT_OK)) worst = r;
            if (r == EXIT_UNREACHABLE) break;
        }
    } else {
        /* selectors: the matching jobs that have not ended (only those can be cancelled) */
        for (int i = optind; i < argc; i++)
            if (cli_jobsel_ids(&sel, "cancel", argv[i])) goto done;
        unsigned active = 1u << JS_PD | 1u << JS_R | 1u << JS_CG | 1u << JS_PR | 1u << JS_S;
        if (sel.states && !(sel.states & active)) {
            cli_err("cancel: --state: only pending or running jobs (PD, R, CG, PR, S) can be "
                    "cancelled");
            goto done;
        }
        sel.states = sel.states ? sel.states & active : active;
        sel.all = 0;
        rc = cli_jobsel_fetch(&k, &sel, -1, "cancel", &jobs);
        if (rc) goto done;
        size_t n = json_array_size(jobs), skipped = 0;
        long long *heads = calloc(n + 1, sizeof *heads);
        if (!heads) abort();
        size_t nheads = 0;
        for (size_t i = 0; i < n && worst != EXIT_UNREACHABLE; i++) {
            json_t *j = json_array_get(jobs, i);
            long long id = cli_jint(j, "id", 0), grp = cli_jint(j, "group", id);
            /* the first part of a non-gang submission took its other parts with it */
            size_t h;
            for (h = 0; h < nheads && heads[h] != grp; h++) {
            }
            if (grp != id && h < nheads) {
                skipped++;
                continue;
            }
            int ended;
            int r = cancel_one(&k, id, 1, all, &ended);
            if (r == EXIT_UNREACHABLE || (r && worst == EXIT_OK)) worst = r;
            /* (a head that had ended took none of its parts with it) */
            if (!r && !ended && grp == id) heads[nheads++] = id;
        }
        free(heads);
        if (!n)
            fprintf(stderr, "gsched: cancel: no pending or running job matched\n");
        else if (skipped && !k.json)
            fprintf(stderr,
                    "gsched: cancel: %zu matching job(s); %zu went with the first part of their "
                    "non-gang submission\n",
                    n, skipped);
    }
    if (k.json) print_json(all);
    rc = worst;
done:
    json_decref(all);
    json_decref(jobs);
    cli_jobsel_release(&sel);
    return rc;
}

/* ---- describe ------------------------------------------------------------------------------- */

static void kv(const char *k, const char *v)
{
    printf("%-14s %s\n", k, v && *v ? v : "-");
}

static void kvi(const char *k, long long v)
{
    printf("%-14s %lld\n", k, v);
}

static void when(const char *k, json_t *o, const char *key, const char *key_us)
{
    const char *t = cli_jstr(o, key, NULL);
    if (!t) {
        kv(k, "-");
        return;
    }
    char age[32], buf[96];
    cli_age(cli_now_us() - cli_jint(o, key_us, cli_now_us()), age, sizeof age);
    snprintf(buf, sizeof buf, "%s (%s ago)", t, age);
    kv(k, buf);
}

/* Events in time order; equal times keep the daemon's (commit) order. */
typedef struct evsort {
    json_t *ev;
    long long t;
    size_t idx;
} evsort;

static int evsort_cmp(const void *a, const void *b)
{
    const evsort *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* issue 14: "Group 1:  tasks 0-1 within V100-NODE" per withinOneCell group, nested ones indented
 * under their parent (the list is in pre-order). */
static void describe_groups(json_t *j)
{
    json_t *gr = json_object_get(j, "groups"), *e;
    size_t i;
    if (!json_is_array(gr)) return;
    int depth[256] = {0};
    json_array_foreach(gr, i, e)
    {
        json_t *t = json_object_get(e, "tasks");
        long long lo = json_integer_value(json_array_get(t, 0)),
                  hi = json_integer_value(json_array_get(t, 1));
        long long par = json_integer_value(json_object_get(e, "parent"));
        int d = par >= 0 && par < (long long)i && i < 256 ? depth[par] + 1 : 0;
        if (i < 256) depth[i] = d;
        const char *w = json_string_value(json_object_get(e, "within"));
        char key[32], val[256];
        snprintf(key, sizeof key, "Group %zu:", i + 1);
        if (hi - lo > 1)
            snprintf(val, sizeof val, "%*stasks %lld-%lld%s%s", 2 * d, "", lo, hi - 1,
                     w ? " within one " : "", w ? w : "");
        else
            snprintf(val, sizeof val, "%*stask %lld%s%s", 2 * d, "", lo, w ? " within one " : "",
                     w ? w : "");
        kv(key, val);
    }
}

static int describe_job(cli_conn *k, const char *id)
{
    if (!cli_valid_jobref(id)) {
        cli_err("describe job: '%s' is not a job id", id);
        return EXIT_USAGE;
    }
    char path[64], what[64];
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    snprintf(what, sizeof what, "job %s", id);
    json_t *j;
    int rc = cli_call(k, "GET", path, NULL, NULL, NULL, what, &j);
    if (rc) return rc;
    if (k->json) {
        print_json(j);
        json_decref(j);
        return EXIT_OK;
    }
    json_t *spec = json_object_get(j, "spec");
    char buf[512];
    kvi("Job:", cli_jint(j, "id", 0));
    if (json_is_integer(json_object_get(j, "array_id"))) {
        /* an array element: as squeue names it, and its array (Slurm's ArrayJobId/TaskId) */
        json_t *env = spec ? json_object_get(spec, "env") : NULL;
        const char *cnt = cli_jstr(env, "GSCHED_ARRAY_TASK_COUNT", NULL);
        snprintf(buf, sizeof buf, "%lld_%lld (element %lld of array %lld%s%s%s)",
                 cli_jint(j, "array_id", 0), cli_jint(j, "array_task", 0),
                 cli_jint(j, "array_task", 0), cli_jint(j, "array_id", 0), cnt ? ", " : "",
                 cnt ? cnt : "", cnt ? " elements" : "");
        kv("Array:", buf);
    }
    if (cli_jint(j, "group", 0) != cli_jint(j, "id", 0)) {
        snprintf(buf, sizeof buf, "task %lld of job %lld (non-gang)", cli_jint(j, "task_index", 0),
                 cli_jint(j, "group", 0));
        kv("Part of:", buf);
    }
    kv("Name:", cli_jstr(j, "name", "-"));
    kv("User:", cli_jstr(j, "user", "-"));
    kv("VC:", cli_jstr(j, "vc", "-"));
    long long prio = cli_jint(j, "priority", 0);
    snprintf(buf, sizeof buf, "%lld%s", prio,
             prio == 100  ? " (prod)"
             : prio == 10 ? " (test)"
             : prio == -1 ? " (opportunistic)"
                          : "");
    kv("Priority:", buf);
    const char *st = cli_jstr(j, "state", "?");
    const char *stop = cli_jstr(j, "stopping", NULL);
    snprintf(buf, sizeof buf, "%s%s%s%s", st, stop ? " (stopping: " : "", stop ? stop : "",
             stop ? ")" : "");
    kv("State:", buf);
    kv("Reason:", cli_jstr(j, "reason", "-"));
    if (json_is_integer(json_object_get(j, "position")))
        kvi("Position:", cli_jint(j, "position", 0));
    const char *gang = json_is_true(json_object_get(j, "gang"))
                           ? ", gang (all tasks start together)"
                           : ", incremental";
    const char *mem = cli_jstr(j, "members", NULL);
    if (mem)
        snprintf(buf, sizeof buf, "%lld, of %s GPU(s) = %lld%s", cli_jint(j, "tasks", 1), mem,
                 cli_jint(j, "gpus", 0), gang);
    else
        snprintf(buf, sizeof buf, "%lld x %lld GPU(s)%s", cli_jint(j, "tasks", 1),
                 cli_jint(j, "gpus_per_task", 1), gang);
    kv("Tasks:", buf);
    describe_groups(j);
    /* a job given as a HiveD spec (hived:) names its type there: v1 leafCellType (legacy
     * gpuType), v2 cellType (which may be a cell above the GPUs) */
    const char *gtype = spec ? cli_jstr(spec, "gpu_type", NULL) : NULL;
    json_t *hv = spec ? json_object_get(spec, "hived") : NULL;
    if (!gtype && json_is_object(hv)) {
        gtype = cli_jstr(hv, "leafCellType", NULL);
        if (!gtype || !*gtype) gtype = cli_jstr(hv, "gpuType", NULL);
        const char *ct = cli_jstr(hv, "cellType", NULL);
        if ((!gtype || !*gtype) && ct && *ct) {
            snprintf(buf, sizeof buf, "%s (HiveD cellType)", ct);
            gtype = buf;
        }
    }
    kv("GPU type:", gtype && *gtype ? gtype : "any");
    /* heterogeneity (issue 15): the model whose per-type speed the policies use, its work in
     * training steps and its priority weight, when the spec gives them */
    const char *model = spec ? cli_jstr(spec, "model", NULL) : NULL;
    json_t *steps = spec ? json_object_get(spec, "steps") : NULL;
    json_t *weight = spec ? json_object_get(spec, "weight") : NULL;
    if (model) kv("Model:", model);
    if (json_is_number(steps)) {
        snprintf(buf, sizeof buf, "%.15g", json_number_value(steps));
        kv("Steps:", buf);
    }
    if (json_is_number(weight)) {
        snprintf(buf, sizeof buf, "%.15g", json_number_value(weight));
        kv("Weight:", buf);
    }
    json_t *cmd = spec ? json_object_get(spec, "command") : NULL;
    if (json_is_string(cmd)) {
        kv("Command:", json_string_value(cmd));
    } else if (json_is_array(cmd)) {
        size_t n = 0, i;
        json_t *a;
        buf[0] = '\0';
        json_array_foreach(cmd, i, a) n +=
            (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "%s%s", i ? " " : "",
                             json_string_value(a));
        kv("Command:", buf);
    }
    kv("Workdir:", spec ? cli_jstr(spec, "workdir", "-") : "-");
    kv("Time limit:", spec ? cli_jstr(spec, "time_limit", "none") : "none");
    when("Submitted:", j, "submit_time", "submit_us");
    when("Started:", j, "start_time", "start_us");
    when("Ended:", j, "end_time", "end_us");
    kvi("Runs:", cli_jint(j, "runs", 0));
    kvi("Preemptions:", cli_jint(j, "preemptions", 0));
    if (json_is_integer(json_object_get(j, "exit_code")))
        kvi("Exit code:", cli_jint(j, "exit_code", 0));
    else
        kv("Exit code:", "-");
    kv("Placement:", cli_jstr(j, "placement", "-"));
    size_t i;
    json_t *t;
    json_t *el = json_object_get(j, "elastic");
    if (json_is_object(el)) {
        /* an elastic job (docs/elastic.md): its range, generation, budgets, drain, hints */
        printf("\nElastic:\n");
        snprintf(buf, sizeof buf, "%lld-%lld GPUs%s", cli_jint(el, "min_gpus", 0),
                 cli_jint(el, "max_gpus", 0),
                 spec && json_object_get(spec, "sizes") ? ", sizes " : "");
        if (spec && json_is_array(json_object_get(spec, "sizes"))) {
            size_t n = strlen(buf);
            json_t *a;
            json_array_foreach(json_object_get(spec, "sizes"), i, a) n +=
                (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, i ? ",%lld" : "%lld",
                                 (long long)json_integer_value(a));
        }
        kv("  Range:", buf);
        kv("  Phase:", cli_jstr(el, "phase", st));
        kvi("  Generation:", cli_jint(el, "generation", 0));
        if (spec && json_is_integer(json_object_get(spec, "max_rescales")))
            snprintf(buf, sizeof buf, "%lld (max %lld), failures %lld (max %lld)",
                     cli_jint(el, "rescales", 0), cli_jint(spec, "max_rescales", 0),
                     cli_jint(el, "failures", 0), cli_jint(spec, "max_failures", 0));
        else
            snprintf(buf, sizeof buf, "%lld (max unlimited), failures %lld (max %lld)",
                     cli_jint(el, "rescales", 0), cli_jint(el, "failures", 0),
                     spec ? cli_jint(spec, "max_failures", 0) : 0);
        kv("  Rescales:", buf);
        if (json_is_integer(json_object_get(el, "target_gpus"))) {
            snprintf(buf, sizeof buf, "to %lld GPUs", cli_jint(el, "target_gpus", 0));
            kv("  Draining:", buf);
        }
        snprintf(buf, sizeof buf, "%lld read, %lld ignored", cli_jint(el, "hints", 0),
                 cli_jint(el, "hints_bad", 0));
        kv("  Hints:", buf);
        if (json_is_integer(json_object_get(el, "ckpt_step")))
            kvi("  Checkpoint:", cli_jint(el, "ckpt_step", 0));
        /* each resize: its drain (time, from -> to, kind, reason) and how it ended */
        json_t *evs = json_object_get(j, "events");
        cli_table rt;
        cli_table_init(&rt, 3, 0);
        const char *rh[] = {"  TIME", "EVENT", "DETAIL"};
        cli_table_add(&rt, rh);
        int nr = 0;
        json_array_foreach(evs, i, t)
        {
            const char *ty = cli_jstr(t, "type", "");
            if (strcmp(ty, "draining") && strcmp(ty, "rescaled") && strcmp(ty, "relaunched") &&
                strcmp(ty, "training"))
                continue;
            char ts[64];
            snprintf(ts, sizeof ts, "  %s", cli_jstr(t, "time", "?"));
            const char *row[] = {ts, ty, cli_jstr(t, "reason", "")};
            cli_table_add(&rt, row);
            nr++;
        }
        if (nr) {
            printf("\nResizes:\n");
            cli_table_print(&rt, 1);
        }
        cli_table_release(&rt);
    }
    json_t *tasks = json_object_get(j, "task_list");
    if (json_array_size(tasks)) {
        printf("\nTasks:\n");
        cli_table tt;
        cli_table_init(&tt, 5, 1u << 0 | 1u << 1 | 1u << 2);
        const char *hdr[] = {"  TASK", "PID", "EXIT", "GPUS", "LOG"};
        cli_table_add(&tt, hdr);
        json_array_foreach(tasks, i, t)
        {
            char ix[16], pid[24], ex[16];
            snprintf(ix, sizeof ix, "%lld", cli_jint(t, "index", 0));
            snprintf(pid, sizeof pid, "%lld", cli_jint(t, "pid", 0));
            if (!json_is_integer(json_object_get(t, "pid"))) snprintf(pid, sizeof pid, "-");
            if (json_is_integer(json_object_get(t, "exit_code")))
                snprintf(ex, sizeof ex, "%lld", cli_jint(t, "exit_code", 0));
            else
                snprintf(ex, sizeof ex, "-");
            const char *row[] = {ix, pid, ex, cli_jstr(t, "gpus", "-"), cli_jstr(t, "log", "-")};
            cli_table_add(&tt, row);
        }
        cli_table_print(&tt, 1);
        cli_table_release(&tt);
    }
    printf("\nEvents:\n");
    cli_table et;
    cli_table_init(&et, 3, 0);
    const char *eh[] = {"  TIME", "TYPE", "REASON"};
    cli_table_add(&et, eh);
    json_t *evs = json_object_get(j, "events");
    size_t nev = json_array_size(evs);
    evsort *es = malloc((nev ? nev : 1) * sizeof *es);
    if (!es) abort();
    json_array_foreach(evs, i, t) es[i] = (evsort){t, cli_jint(t, "time_us", 0), i};
    qsort(es, nev, sizeof *es, evsort_cmp);
    for (size_t e = 0; e < nev; e++) {
        t = es[e].ev;
        char ts[64];
        snprintf(ts, sizeof ts, "  %s", cli_jstr(t, "time", "?"));
        const char *row[] = {ts, cli_jstr(t, "type", "?"), cli_jstr(t, "reason", "")};
        cli_table_add(&et, row);
    }
    free(es);
    cli_table_print(&et, 1);
    cli_table_release(&et);
    const char *why = cli_jstr(j, "why_pending", NULL);
    if (why) printf("\nWhy it waits:\n  %s\n", why);
    json_decref(j);
    return EXIT_OK;
}

static int describe_node(cli_conn *k, const char *name)
{
    char path[512], what[300];
    size_t n = (size_t)snprintf(path, sizeof path, "/v1/nodes/");
    for (const unsigned char *p = (const unsigned char *)name; *p && n + 4 < sizeof path; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.')
            path[n++] = (char)*p;
        else
            n += (size_t)snprintf(path + n, sizeof path - n, "%%%02X", *p);
    }
    path[n] = '\0';
    snprintf(what, sizeof what, "node %s", name);
    json_t *o;
    int rc = cli_call(k, "GET", path, NULL, NULL, NULL, what, &o);
    if (rc) return rc;
    if (k->json) {
        print_json(o);
        json_decref(o);
        return EXIT_OK;
    }
    kv("Node:", cli_jstr(o, "name", "?"));
    if (cli_jstr(o, "chain", NULL)) kv("Chain:", cli_jstr(o, "chain", NULL));
    if (cli_jstr(o, "cell_type", NULL)) kv("Cell type:", cli_jstr(o, "cell_type", NULL));
    kv("State:", cli_jstr(o, "state", "?"));
    if (cli_jstr(o, "reason", NULL)) kv("Reason:", cli_jstr(o, "reason", NULL));
    if (json_is_true(json_object_get(o, "bad"))) {
        char b[600];
        snprintf(b, sizeof b, "since %s: %s", cli_jstr(o, "bad_since", "?"),
                 cli_jstr(o, "bad_reason", ""));
        kv("Bad:", b);
    }
    if (cli_jstr(o, "admin_state", NULL)) {
        /* an admin's drain or down: by whom, since when, why */
        char b[700];
        const char *as = cli_jstr(o, "admin_state", "?"), *why = cli_jstr(o, "admin_reason", NULL);
        snprintf(b, sizeof b, "%s by %s since %s%s%s", !strcmp(as, "drain") ? "drained" : as,
                 cli_jstr(o, "admin_by", "?"), cli_jstr(o, "admin_since", "?"), why ? ": " : "",
                 why ? why : "");
        kv("Admin:", b);
    }
    kvi("GPUs:", cli_jint(o, "gpus", 0));
    kvi("Allocated:", cli_jint(o, "allocated", 0));
    kvi("Free:", cli_jint(o, "free", 0));
    kvi("Down:", cli_jint(o, "down", 0));
    if (json_object_get(o, "cpus"))
        printf("%-14s %lld of %lld free\n", "CPUs:", cli_jint(o, "free_cpus", 0),
               cli_jint(o, "cpus", 0));
    if (json_object_get(o, "memory_mb"))
        printf("%-14s %lld of %lld MiB free\n", "Memory:", cli_jint(o, "free_memory_mb", 0),
               cli_jint(o, "memory_mb", 0));
    size_t i;
    json_t *g, *cells = json_object_get(o, "cells");
    if (json_array_size(cells)) {
        /* a machine in several HiveD chains: one node cell per chain */
        printf("\nCells (one per chain):\n");
        cli_table ct;
        cli_table_init(&ct, 7, 1u << 3 | 1u << 4 | 1u << 5);
        const char *chdr[] = {"  CHAIN", "CELL TYPE", "STATE", "GPUS", "ALLOC", "FREE", "LOCAL"};
        cli_table_add(&ct, chdr);
        json_array_foreach(cells, i, g)
        {
            char ch[200], gn[16], a[16], f[16], loc[256] = "";
            snprintf(ch, sizeof ch, "  %s", cli_jstr(g, "chain", "-"));
            snprintf(gn, sizeof gn, "%lld", cli_jint(g, "gpus", 0));
            snprintf(a, sizeof a, "%lld", cli_jint(g, "allocated", 0));
            snprintf(f, sizeof f, "%lld", cli_jint(g, "free", 0));
            size_t q;
            json_t *x;
            json_array_foreach(json_object_get(g, "gpu_list"), q, x)
            {
                size_t l = strlen(loc);
                snprintf(loc + l, sizeof loc - l, "%s%lld", l ? "," : "", cli_jint(x, "local", 0));
            }
            const char *row[] = {
                ch, cli_jstr(g, "cell_type", "-"), cli_jstr(g, "state", "?"), gn, a, f, loc};
            cli_table_add(&ct, row);
        }
        cli_table_print(&ct, 1);
        cli_table_release(&ct);
    }
    int chains = json_array_size(cells) > 0, health = 0;
    json_array_foreach(json_object_get(o, "gpu_list"), i, g) health |=
        json_object_get(g, "health") != NULL;
    printf("\nGPUs:\n");
    cli_table t;
    /* GPU health (issue 17): HEALTH, TEMP, MEMORY columns when the daemon watches them */
    cli_table_init(&t, 5 + 3 * health + chains,
                   1u << 0 | 1u << 1 | (health ? 1u << 6 | 1u << 7 : 0u));
    const char *hdr[] = {"  LOCAL", "INDEX", "TYPE", "STATE", "JOB", "CHAIN"};
    const char *hdr_h[] = {"  LOCAL", "INDEX", "TYPE",   "STATE", "JOB",
                           "HEALTH",  "TEMP",  "MEMORY", "CHAIN"};
    cli_table_add(&t, health ? hdr_h : hdr);
    json_array_foreach(json_object_get(o, "gpu_list"), i, g)
    {
        char l[16], ix[16], job[32] = "-", temp[16] = "-", mem[48] = "-";
        snprintf(l, sizeof l, "%lld", cli_jint(g, "local", 0));
        snprintf(ix, sizeof ix, "%lld", cli_jint(g, "index", 0));
        if (json_is_integer(json_object_get(g, "job")))
            snprintf(job, sizeof job, "%lld", cli_jint(g, "job", 0));
        json_t *h = json_object_get(g, "health");
        const char *hs = !h                                            ? "-"
                         : json_is_true(json_object_get(h, "healthy")) ? "ok"
                                                                       : "UNHEALTHY";
        if (h && json_is_integer(json_object_get(h, "temperature_c")))
            snprintf(temp, sizeof temp, "%lldC", cli_jint(h, "temperature_c", 0));
        if (h && json_is_integer(json_object_get(h, "memory_total")))
            snprintf(mem, sizeof mem, "%lld/%lldMiB", cli_jint(h, "memory_used", 0) >> 20,
                     cli_jint(h, "memory_total", 0) >> 20);
        const char *row[] = {l,
                             ix,
                             cli_jstr(g, "type", "?"),
                             cli_jstr(g, "state", "?"),
                             job,
                             cli_jstr(g, "chain", "-")};
        const char *row_h[] = {
            l,    ix,  cli_jstr(g, "type", "?"), cli_jstr(g, "state", "?"), job, hs,
            temp, mem, cli_jstr(g, "chain", "-")};
        cli_table_add(&t, health ? row_h : row);
    }
    cli_table_print(&t, 1);
    cli_table_release(&t);
    json_array_foreach(json_object_get(o, "gpu_list"), i, g)
    {
        json_t *h = json_object_get(g, "health");
        if (!h || json_is_true(json_object_get(h, "healthy"))) continue;
        printf("  GPU %lld unhealthy since %s: %s\n", cli_jint(g, "local", 0),
               cli_jstr(h, "since", "?"), cli_jstr(h, "reason", "?"));
    }
    json_t *evs = json_object_get(o, "events");
    if (json_array_size(evs)) {
        /* the node's last events: drain, resume, down, bad, good (oldest first) */
        printf("\nEvents:\n");
        cli_table et;
        cli_table_init(&et, 3, 0);
        const char *eh[] = {"  TIME", "TYPE", "REASON"};
        cli_table_add(&et, eh);
        json_array_foreach(evs, i, g)
        {
            char ts[64];
            snprintf(ts, sizeof ts, "  %s", cli_jstr(g, "time", "?"));
            const char *row[] = {ts, cli_jstr(g, "type", "?"), cli_jstr(g, "reason", "")};
            cli_table_add(&et, row);
        }
        cli_table_print(&et, 1);
        cli_table_release(&et);
    }
    json_decref(o);
    return EXIT_OK;
}

int cmd_describe(int argc, char **argv)
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
            printf(
                "usage: gsched describe job ID | node NAME   (or: describe ID)\n\n" CLI_CONN_HELP);
            return EXIT_OK;
        }
        return EXIT_USAGE;
    }
    if (argc - optind == 1 && cli_valid_jobref(argv[optind])) return describe_job(&k, argv[optind]);
    if (argc - optind != 2) {
        cli_err("usage: gsched describe job ID | node NAME");
        return EXIT_USAGE;
    }
    const char *what = argv[optind], *id = argv[optind + 1];
    if (!strcmp(what, "job") || !strcmp(what, "jobs")) return describe_job(&k, id);
    if (!strcmp(what, "node") || !strcmp(what, "nodes")) return describe_node(&k, id);
    cli_err("describe: expected 'job' or 'node', got '%s'", what);
    return EXIT_USAGE;
}

/* ---- logs ----------------------------------------------------------------------------------- */

static volatile sig_atomic_t g_logs_stop;

static void on_int(int sig)
{
    (void)sig;
    g_logs_stop = 1;
}

/* The task count of job id, or minus an exit code (error printed). */
static int job_tasks(cli_conn *k, const char *id)
{
    char path[64], what[64];
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    snprintf(what, sizeof what, "logs of job %s", id);
    json_t *j;
    int rc = cli_call(k, "GET", path, NULL, NULL, NULL, what, &j);
    if (rc) return -rc;
    long long n = cli_jint(j, "tasks", 1);
    json_decref(j);
    return n < 1 ? 1 : n > GSD_MAX_GPUS ? GSD_MAX_GPUS : (int)n;
}

/* Every task's log (one read each, as for one task), each line prefixed with "[task N] "; a
 * task without a log yet is said on stderr. */
static int all_task_logs(cli_conn *k, const char *id, int nt)
{
    int shown = 0;
    for (int t = 0; t < nt; t++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/jobs/%s/logs?task=%d&offset=0", id, t);
        gsd_resp r;
        if (gsd_request(&k->c, "GET", path, NULL, 0, NULL, NULL, &r)) {
            cli_err("%s", r.err);
            gsd_resp_release(&r);
            return EXIT_UNREACHABLE;
        }
        if (r.status == 404) {
            fprintf(stderr, "gsched: logs of job %s: task %d has no log yet (not started)\n", id,
                    t);
            gsd_resp_release(&r);
            continue;
        }
        if (r.status != 200) {
            json_t *j = json_loads(r.body, 0, NULL);
            cli_err("logs of job %s task %d: %s", id, t,
                    j ? cli_jstr(j, "detail", "error") : r.body);
            if (j) json_decref(j);
            int code = cli_exit_for_status(r.status);
            gsd_resp_release(&r);
            return code;
        }
        shown++;
        int bol = 1;
        for (size_t i = 0; i < r.len; i++) {
            if (bol) printf("[task %d] ", t);
            putchar(r.body[i]);
            bol = r.body[i] == '\n';
        }
        if (!bol) putchar('\n');
        gsd_resp_release(&r);
    }
    fflush(stdout);
    if (!shown) {
        cli_err("logs of job %s: none of its %d tasks has a log yet (not started)", id, nt);
        return EXIT_NOTFOUND;
    }
    return EXIT_OK;
}

int cmd_logs(int argc, char **argv)
{
    static const struct option longopts[] = {{"task", required_argument, NULL, 't'},
                                             {"follow", no_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    int opt, follow = 0, task_given = 0;
    long task = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "t:fh", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        switch (opt) {
        case 't': {
            char *e;
            task = strtol(optarg, &e, 10);
            if (*e || e == optarg || task < 0) {
                cli_err("--task: expected a task index, got '%s'", optarg);
                return EXIT_USAGE;
            }
            task_given = 1;
            break;
        }
        case 'f': follow = 1; break;
        case 'h':
            printf("usage: gsched logs ID [--task N] [--follow]\n\nstdout and stderr of a job's "
                   "tasks, every run appended; a job of several tasks: every task, each line\n"
                   "prefixed with [task N] (--task N: that task alone, unprefixed; --follow "
                   "follows one task,\n"
                   "task 0 by default).\n\n" CLI_CONN_HELP);
            return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (argc - optind != 1 || !cli_valid_jobref(argv[optind])) {
        cli_err("usage: gsched logs ID [--task N] [--follow]");
        return EXIT_USAGE;
    }
    const char *id = argv[optind];
    long long offset = 0;
    if (!task_given) {
        int nt = job_tasks(&k, id);
        if (nt < 0) return -nt;
        if (nt > 1 && !follow) return all_task_logs(&k, id, nt);
        if (nt > 1)
            fprintf(stderr,
                    "gsched: job %s has %d tasks: following task 0 (--task N for another)\n", id,
                    nt);
    }
    if (follow) signal(SIGINT, on_int);
    for (;;) {
        char path[128], what[64];
        snprintf(path, sizeof path, "/v1/jobs/%s/logs?task=%ld&offset=%lld", id, task, offset);
        snprintf(what, sizeof what, "logs of job %s", id);
        gsd_resp r;
        if (gsd_request(&k.c, "GET", path, NULL, 0, NULL, NULL, &r)) {
            cli_err("%s", r.err);
            gsd_resp_release(&r);
            return EXIT_UNREACHABLE;
        }
        if (r.status != 200) {
            int code = cli_exit_for_status(r.status);
            if (follow && r.status == 404 && offset == 0) {
                /* no log: wait only for a job that exists, is ours to see and can still start
                 * (a missing, hidden, rejected or cancelled job never gets one) */
                gsd_resp_release(&r);
                snprintf(path, sizeof path, "/v1/jobs/%s", id);
                json_t *j;
                int rc = cli_call(&k, "GET", path, NULL, NULL, NULL, what, &j);
                if (rc) return rc;
                const char *st = cli_jstr(j, "state", "");
                int final = !strcmp(st, "DONE") || !strcmp(st, "FAILED") ||
                            !strcmp(st, "CANCELLED") || !strcmp(st, "REJECTED");
                if (final) {
                    cli_err("%s: job %s is %s and has no log of task %ld", what, id, st, task);
                    json_decref(j);
                    return EXIT_NOTFOUND;
                }
                json_decref(j);
                if (g_logs_stop) return EXIT_OK;
                sleep(1);
                continue;
            }
            json_t *j = json_loads(r.body, 0, NULL);
            cli_err("%s: %s", what, j ? cli_jstr(j, "detail", "error") : r.body);
            if (j) json_decref(j);
            gsd_resp_release(&r);
            return code;
        }
        fwrite(r.body, 1, r.len, stdout);
        fflush(stdout);
        size_t got = r.len;
        offset += (long long)got;
        gsd_resp_release(&r);
        if (!follow || g_logs_stop) break;
        if (got) continue;
        /* caught up: stop once the job is over */
        snprintf(path, sizeof path, "/v1/jobs/%s", id);
        json_t *j;
        int rc = cli_call(&k, "GET", path, NULL, NULL, NULL, what, &j);
        if (rc) return rc;
        const char *st = cli_jstr(j, "state", "");
        int final = !strcmp(st, "DONE") || !strcmp(st, "FAILED") || !strcmp(st, "CANCELLED") ||
                    !strcmp(st, "REJECTED");
        json_decref(j);
        if (final) {
            /* one last read for output written just before the end */
            snprintf(path, sizeof path, "/v1/jobs/%s/logs?task=%ld&offset=%lld", id, task, offset);
            if (!gsd_request(&k.c, "GET", path, NULL, 0, NULL, NULL, &r) && r.status == 200)
                fwrite(r.body, 1, r.len, stdout);
            gsd_resp_release(&r);
            break;
        }
        struct timespec ts = {0, 500000000L};
        nanosleep(&ts, NULL);
    }
    return EXIT_OK;
}
