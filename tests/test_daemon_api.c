/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_api.c - the REST API of a real `gsched serve` (started as a
 * child process on a random loopback port): problem+json errors with stable
 * codes, fields and positions; size limits; 404/405; idempotent submits;
 * dry runs; pagination; cancel; /metrics names; bearer tokens and per-user
 * visibility; startup refusals (non-loopback without tokens, bad config, a
 * second daemon on one database); graceful shutdown; the views of a policy
 * the daemon has never heard of (queue positions, reasons, VC guarantees come
 * from the policy, not from names in the daemon); a database of schema
 * version 1 upgraded at start with its jobs recovered; an executor that
 * cannot suspend is not asked to; a machine in two HiveD chains (two node
 * cells of one name) is shown, marked and run on as one machine.  Every
 * wait is bounded.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "daemon.h"
#include "daemon_schema_v1.h"
#include "exec.h"
#include "harness.h"
#include "store.h"

#ifndef GSCHED_BIN
#define GSCHED_BIN "gsched"
#endif

static char dir[256];

static const char *tmp(const char *name)
{
    static char p[4][512];
    static int k;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gsched-api-test-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct daemon {
    pid_t pid;
    char url[64];
    char log[512];
} daemon_t;

static int wait_serving(daemon_t *dm, const char *pf);

/* Start gsched serve with extra args; returns 0 when it serves (port file written). */
static int start(daemon_t *dm, const char *name, const char *const *extra)
{
    char db[512], pf[512], logs[520];
    snprintf(db, sizeof db, "%s", tmp(name));
    strcat(db, ".db");
    snprintf(pf, sizeof pf, "%s.port", db);
    snprintf(logs, sizeof logs, "%s-logs", db);
    snprintf(dm->log, sizeof dm->log, "%s.log", db);
    unlink(pf);
    /* --single-user: no Unix accounts for the test's users (as root, jobs would need them) */
    const char *argv[40] = {GSCHED_BIN,     "serve", "--db",    db,   "--listen",  "127.0.0.1:0",
                            "--port-file",  pf,      "--grace", "1s", "--log-dir", logs,
                            "--single-user"};
    int n = 13, tokens = 0;
    for (int i = 0; extra && extra[i] && n < 37; i++) {
        tokens |= !strcmp(extra[i], "--tokens");
        argv[n++] = extra[i];
    }
    /* TCP without tokens must be asked for (the daemon's API tests speak TCP) */
    if (!tokens) argv[n++] = "--insecure-tcp";
    argv[n] = NULL;
    dm->pid = fork();
    if (dm->pid == 0) {
        int fd = open(dm->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(GSCHED_BIN, (char *const *)argv);
        _exit(127);
    }
    return wait_serving(dm, pf);
}

/* Wait until the daemon dm->pid wrote its port to pf; 0 when it serves. */
static int wait_serving(daemon_t *dm, const char *pf)
{
    for (int i = 0; i < 600; i++) {
        FILE *f = fopen(pf, "r");
        int port = 0;
        if (f) {
            if (fscanf(f, "%d", &port) != 1) port = 0;
            fclose(f);
        }
        if (port > 0) {
            snprintf(dm->url, sizeof dm->url, "http://127.0.0.1:%d", port);
            return 0;
        }
        int st;
        if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
            dm->pid = -1;
            return -1;
        }
        sleep_ms(50);
    }
    return -1;
}

/*
 * Serve with a policy ops table that is not in the registry, and optionally an
 * executor table (NULL: local): gsd_serve in a child of this process (the
 * gsched program only knows registered names).
 */
static int start_ops(daemon_t *dm, const char *name, const gs_policy_ops *ops, const char *cluster,
                     const gsd_exec_ops *xops)
{
    static char db[512], pf[512], logs[520];
    snprintf(db, sizeof db, "%s", tmp(name));
    strcat(db, ".db");
    snprintf(pf, sizeof pf, "%s.port", db);
    snprintf(logs, sizeof logs, "%s-logs", db);
    snprintf(dm->log, sizeof dm->log, "%s.log", db);
    unlink(pf);
    dm->pid = fork();
    if (dm->pid == 0) {
        int fd = open(dm->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        gsd_opts o;
        gsd_opts_init(&o);
        o.cluster = cluster;
        o.db = db;
        o.listen = "127.0.0.1:0";
        o.insecure_tcp = 1;
        o.port_file = pf;
        o.log_dir = logs;
        o.self_exe = GSCHED_BIN;
        o.grace = GS_SEC;
        o.policy_ops = ops;
        o.executor_ops = xops;
        o.single_user = 1; /* no tokens; as root, jobs would otherwise need Unix accounts */
        _exit(gsd_serve(&o));
    }
    return wait_serving(dm, pf);
}

/* SIGTERM and wait; returns the exit code (or -1). */
static int stop(daemon_t *dm)
{
    if (dm->pid <= 0) return -1;
    kill(dm->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < 400; i++) {
        if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
            dm->pid = -1;
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        }
        sleep_ms(50);
    }
    kill(dm->pid, SIGKILL);
    waitpid(dm->pid, &st, 0);
    dm->pid = -1;
    return -1;
}

/* Run gsched with args to completion (bounded); returns its exit code; stderr to errfile. */
static int run_gsched(const char *const *args, const char *errfile)
{
    const char *argv[40] = {GSCHED_BIN};
    int n = 1;
    for (int i = 0; args[i] && n < 38; i++) argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(GSCHED_BIN, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    for (int i = 0; i < 600; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        sleep_ms(50);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* The file, or its last 16 KiB (daemon logs grow). */
static char *slurp(const char *path)
{
    static char buf[16384];
    FILE *f = fopen(path, "r");
    if (!f) return (char *)"";
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

typedef struct res {
    long status;
    json_t *j;
    char *body;
    char ctype[128];
} res;

static res req(const daemon_t *dm, const char *token, const char *method, const char *path,
               const char *body, const char *ctype, const char *const *hdrs)
{
    gsd_client c = {dm->url, token, token ? NULL : "tester", 30};
    gsd_resp r;
    res out = {0, NULL, NULL, ""};
    if (gsd_request(&c, method, path, body, body ? strlen(body) : 0, ctype, hdrs, &r)) return out;
    out.status = r.status;
    out.body = r.body;
    r.body = NULL;
    snprintf(out.ctype, sizeof out.ctype, "%s", r.content_type ? r.content_type : "");
    out.j = json_loads(out.body, 0, NULL);
    gsd_resp_release(&r);
    return out;
}

static void res_free(res *r)
{
    if (r->j) json_decref(r->j);
    free(r->body);
    memset(r, 0, sizeof *r);
}

static const char *js(const res *r, const char *key)
{
    json_t *v = r->j ? json_object_get(r->j, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : "";
}

static long long ji(const res *r, const char *key)
{
    json_t *v = r->j ? json_object_get(r->j, key) : NULL;
    return json_is_integer(v) ? (long long)json_integer_value(v) : -999;
}

#define EXPECT_PROBLEM(r, st, code)                                                             \
    do {                                                                                        \
        if ((r).status != (st) || strcmp(js(&(r), "code"), (code)) ||                           \
            strncmp((r).ctype, "application/problem+json", 24))                                 \
            T_FAIL("want %d %s problem, got %ld %s: %s", (st), (code), (r).status, (r).ctype,   \
                   (r).body ? (r).body : "(no response)");                                      \
        if (ji(&(r), "status") != (st)) T_FAIL("problem body status %lld", ji(&(r), "status")); \
    } while (0)

static daemon_t D; /* no authentication, 1 node x 2 GPUs */

static void starts_and_health(void)
{
    const char *extra[] = {"--cluster", "1x2", NULL};
    if (start(&D, "main", extra)) T_FAIL("daemon did not start: %s", slurp(D.log));
    res r = req(&D, NULL, "GET", "/v1/health", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_STR(js(&r, "status"), "ok");
    ASSERT_STR(js(&r, "policy"), "fifo");
    ASSERT_STR(js(&r, "user"), "tester");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT(json_array_size(json_object_get(r.j, "routes")) >= 10);
    res_free(&r);
}

static void submit_and_validation_errors(void)
{
    res r = req(&D, NULL, "POST", "/v1/jobs", "name: long\ngpus: 2\ncommand: sleep 30\n",
                "application/yaml", NULL);
    ASSERT_EQ(r.status, 201);
    ASSERT_EQ(ji(&r, "id"), 1);
    ASSERT_STR(js(&r, "state"), "RUNNING");
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "command: true\ntasks: 0\n", "application/yaml", NULL);
    EXPECT_PROBLEM(r, 400, "GS_ERANGE");
    ASSERT_STR(js(&r, "field"), "tasks");
    ASSERT_EQ(ji(&r, "line"), 2);
    ASSERT_EQ(ji(&r, "column"), 8);
    ASSERT_CONTAINS(js(&r, "detail"), "request body:2:8:");
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": \"true\", \"gpuz\": 1}",
            "application/json", NULL);
    EXPECT_PROBLEM(r, 400, "GS_EPARSE");
    ASSERT_CONTAINS(js(&r, "detail"), "did you mean 'gpus'");
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "", "application/json", NULL);
    EXPECT_PROBLEM(r, 400, "GS_EPARSE");
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": [\"x\"]}", "multipart/form-data", NULL);
    EXPECT_PROBLEM(r, 415, "GS_EUNSUPPORTED");
    res_free(&r);
    size_t big = 2 * 1024 * 1024;
    char *b = malloc(big + 1);
    memset(b, 'a', big);
    b[big] = '\0';
    r = req(&D, NULL, "POST", "/v1/jobs", b, "application/yaml", NULL);
    free(b);
    EXPECT_PROBLEM(r, 413, "GS_ETOOBIG");
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": \"true\", \"gpus\": 3}",
            "application/json", NULL);
    EXPECT_PROBLEM(r, 422, "GS_ENEVER");
    ASSERT_CONTAINS(js(&r, "detail"), "needs 3 GPUs but the cluster has 2");
    res_free(&r);
    /* issue 15: a model the profiles do not know is a typo, not the 'default' speeds */
    r = req(&D, NULL, "POST", "/v1/jobs", "command: true\nmodel: resnet5O-bs64\nsteps: 100\n",
            "application/yaml", NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    ASSERT_STR(js(&r, "field"), "model");
    ASSERT_CONTAINS(js(&r, "detail"), "no model 'resnet5O-bs64'");
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "command: true\nsteps: 100\nduration: 1h\n",
            "application/yaml", NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    ASSERT_STR(js(&r, "field"), "steps");
    res_free(&r);
}

static void routing_errors(void)
{
    res r = req(&D, NULL, "PUT", "/v1/jobs", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 405, "GS_EUNSUPPORTED");
    ASSERT_CONTAINS(js(&r, "allow"), "POST");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/nope", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 404, "GS_ENOENT");
    res_free(&r);
    r = req(&D, NULL, "HEAD", "/metrics", NULL, NULL, NULL); /* HEAD: a GET without body */
    ASSERT_EQ(r.status, 200);
    ASSERT_CONTAINS(r.ctype, "text/plain; version=0.0.4");
    res_free(&r);
    r = req(&D, NULL, "DELETE", "/v1/health", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 405, "GS_EUNSUPPORTED");
    ASSERT_STR(js(&r, "allow"), "GET, HEAD");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/jobs/abc", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/jobs/999", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 404, "GS_ENOENT");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/jobs?state=SLEEPING", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/jobs?limit=0", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/jobs?limit=1x", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/nodes/nonode", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 404, "GS_ENOENT");
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/jobs/1/logs?task=5", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 400, "GS_EINVAL");
    res_free(&r);
}

static void idempotency_and_dry_run(void)
{
    const char *k1[] = {"Idempotency-Key: abc-1", NULL};
    res a = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": [\"sleep\", \"1\"]}",
                "application/json", k1);
    ASSERT_EQ(a.status, 201);
    res b = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": [\"sleep\", \"1\"]}",
                "application/json", k1);
    ASSERT_EQ(b.status, 200);
    ASSERT_EQ(ji(&a, "id"), ji(&b, "id"));
    ASSERT(json_is_true(json_object_get(b.j, "idempotent_replay")));
    res c = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": [\"sleep\", \"2\"]}",
                "application/json", k1);
    EXPECT_PROBLEM(c, 409, "GS_ECONFLICT");
    res_free(&a);
    res_free(&b);
    res_free(&c);
    const char *bad[] = {"Idempotency-Key: has space", NULL};
    c = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": \"true\"}", "application/json", bad);
    EXPECT_PROBLEM(c, 400, "GS_EINVAL");
    res_free(&c);
    /* dry runs change nothing */
    res l0 = req(&D, NULL, "GET", "/v1/jobs?state=all", NULL, NULL, NULL);
    res d = req(&D, NULL, "POST", "/v1/jobs?dry_run=1", "{\"command\": \"true\", \"gpus\": 1}",
                "application/json", NULL);
    ASSERT_EQ(d.status, 200);
    ASSERT(json_is_false(json_object_get(d.j, "fits_now"))); /* job 1 holds both GPUs */
    ASSERT(json_is_true(json_object_get(d.j, "feasible")));
    ASSERT_CONTAINS(js(&d, "reason"), "0 of 2 are free");
    res_free(&d);
    d = req(&D, NULL, "POST", "/v1/jobs?dry_run=1",
            "{\"command\": \"true\", \"gpus\": 1, \"gpu_type\": \"H100\"}", "application/json",
            NULL);
    ASSERT(json_is_false(json_object_get(d.j, "feasible")));
    ASSERT_CONTAINS(js(&d, "reason"), "unknown GPU type 'H100'");
    res_free(&d);
    res l1 = req(&D, NULL, "GET", "/v1/jobs?state=all", NULL, NULL, NULL);
    ASSERT_EQ(ji(&l0, "total"), ji(&l1, "total"));
    res_free(&l0);
    res_free(&l1);
}

typedef struct racer {
    long status;
    long long id;
} racer;

static void *race_submit(void *arg)
{
    racer *r = arg;
    const char *k[] = {"Idempotency-Key: race-1", NULL};
    res x = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": \"true\", \"name\": \"race\"}",
                "application/json", k);
    r->status = x.status;
    r->id = ji(&x, "id");
    res_free(&x);
    return NULL;
}

/* Concurrent retries with one key (likely in one scheduling cycle): one job, same answer. */
static void idempotency_race(void)
{
    enum { N = 8 };
    pthread_t th[N];
    racer r[N];
    for (int i = 0; i < N; i++) pthread_create(&th[i], NULL, race_submit, &r[i]);
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    int created = 0;
    for (int i = 0; i < N; i++) {
        if (r[i].status != 201 && r[i].status != 200) T_FAIL("submit %d: HTTP %ld", i, r[i].status);
        created += r[i].status == 201;
        ASSERT_EQ(r[i].id, r[0].id);
    }
    ASSERT_EQ(created, 1);
    res l = req(&D, NULL, "GET", "/v1/jobs?state=all&limit=10000", NULL, NULL, NULL);
    int named = 0;
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(l.j, "jobs"), i, j) named +=
        !strcmp(json_string_value(json_object_get(j, "name")), "race");
    res_free(&l);
    ASSERT_EQ(named, 1);
    res h = req(&D, NULL, "GET", "/v1/health", NULL, NULL, NULL);
    ASSERT_EQ(h.status, 200);
    res_free(&h);
}

static void list_pages_cancel_and_describe(void)
{
    for (int i = 0; i < 5; i++) {
        res r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": \"true\", \"vc\": \"pg\"}",
                    "application/json", NULL);
        ASSERT_EQ(r.status, 201);
        res_free(&r);
    }
    res p = req(&D, NULL, "GET", "/v1/jobs?vc=pg&limit=2&offset=1", NULL, NULL, NULL);
    ASSERT_EQ(p.status, 200);
    ASSERT_EQ(ji(&p, "total"), 5);
    ASSERT_EQ(ji(&p, "next_offset"), 3);
    json_t *jobs = json_object_get(p.j, "jobs");
    ASSERT_EQ(json_array_size(jobs), 2);
    json_t *first = json_array_get(jobs, 0);
    ASSERT_STR(json_string_value(json_object_get(first, "st")), "PD");
    long long id = json_integer_value(json_object_get(first, "id"));
    res_free(&p);
    /* fifo has one queue in submission order (not one per VC): the position counts every
     * pending job submitted before it, whatever its VC */
    res all = req(&D, NULL, "GET", "/v1/jobs?state=PD", NULL, NULL, NULL);
    long long want = 0, k = 0;
    size_t ix;
    json_t *e;
    json_array_foreach(json_object_get(all.j, "jobs"), ix, e)
    {
        ASSERT_EQ(json_integer_value(json_object_get(e, "position")), ++k);
        if (json_integer_value(json_object_get(e, "id")) == id) want = k;
    }
    res_free(&all);
    ASSERT(want >= 3); /* behind earlier jobs of VC default */
    char wantpos[64];
    snprintf(wantpos, sizeof wantpos, "position %lld in the queue (by submission)", want);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    res g = req(&D, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_EQ(g.status, 200);
    ASSERT_CONTAINS(js(&g, "why_pending"), wantpos);
    ASSERT_EQ(ji(&g, "position"), want);
    ASSERT_STR(js(&g, "state"), "PENDING");
    ASSERT(json_array_size(json_object_get(g.j, "events")) >= 1);
    res_free(&g);
    res c = req(&D, NULL, "DELETE", path, NULL, NULL, NULL);
    ASSERT_EQ(c.status, 200);
    ASSERT_EQ(json_array_size(json_object_get(c.j, "cancelled")), 1);
    res_free(&c);
    c = req(&D, NULL, "DELETE", path, NULL, NULL, NULL);
    EXPECT_PROBLEM(c, 409, "GS_ESTATE");
    res_free(&c);
    g = req(&D, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_STR(js(&g, "state"), "CANCELLED");
    ASSERT_STR(js(&g, "cancelled_by"), "tester");
    res_free(&g);
    res n = req(&D, NULL, "GET", "/v1/nodes?gpus=1", NULL, NULL, NULL);
    json_t *node = json_array_get(json_object_get(n.j, "nodes"), 0);
    ASSERT_STR(json_string_value(json_object_get(node, "state")), "allocated");
    ASSERT_EQ(json_integer_value(json_object_get(node, "allocated")), 2);
    res_free(&n);
    res v = req(&D, NULL, "GET", "/v1/vcs", NULL, NULL, NULL);
    ASSERT_EQ(v.status, 200);
    ASSERT_CONTAINS(v.body, "\"pg\"");
    res_free(&v);
}

static void metrics_names(void)
{
    res m = req(&D, NULL, "GET", "/metrics", NULL, NULL, NULL);
    ASSERT_EQ(m.status, 200);
    ASSERT_CONTAINS(m.ctype, "text/plain; version=0.0.4");
    static const char *want[] = {
        "gsched_build_info{version=\"",
        "gsched_jobs{state=\"pending\"} ",
        "gsched_jobs{state=\"running\"} 1",
        "gsched_jobs{state=\"cancelled\"} 1",
        "# TYPE gsched_jobs_submitted_total counter",
        "gsched_jobs_finished_total{result=\"cancelled\"} 1",
        "# TYPE gsched_job_wait_seconds histogram",
        "gsched_job_wait_seconds_bucket{le=\"+Inf\"} 1",
        "gsched_schedule_cycle_duration_seconds_bucket{le=\"0.001\"}",
        "gsched_schedule_cycle_duration_seconds_count ",
        "gsched_db_commit_duration_seconds_sum ",
        "gsched_gpus{state=\"allocated\"} 2",
        "gsched_gpus{state=\"idle\"} 0",
        "gsched_node_gpus_allocated{node=\"n0\"} 2",
        "gsched_vc_jobs_pending{vc=\"pg\"} 4",
        "gsched_jobs_submitted_total 9", /* incl. the rejected one */
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) ASSERT_CONTAINS(m.body, want[i]);
    ASSERT(!strstr(m.body, "job_id"));
    ASSERT(!strstr(m.body, "tester")); /* no user labels */
    res_free(&m);
}

/* A client that was told "submitted" sees its job in the very next listing (the snapshot is
 * published before the answer). */
static void read_your_writes(void)
{
    for (int i = 0; i < 20; i++) {
        res r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": \"true\", \"name\": \"ryw\"}",
                    "application/json", NULL);
        ASSERT_EQ(r.status, 201);
        long long id = ji(&r, "id");
        res_free(&r);
        res l = req(&D, NULL, "GET", "/v1/jobs?state=PD&limit=10000", NULL, NULL, NULL);
        int seen = 0;
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(l.j, "jobs"), k, e) seen +=
            json_integer_value(json_object_get(e, "id")) == id;
        res_free(&l);
        if (!seen) T_FAIL("submit %d: job %lld acknowledged but not listed yet", i, id);
    }
}

/* GET /v1/jobs?fields=...&compact=1 (issue 16: a fast listing): only the keys asked, in one
 * line, the same values and order as the full listing; queue positions (sorted once per
 * snapshot) agree with each job's own GET and give none to a held job or one waiting on a
 * dependency, the queued jobs around them numbered without a gap. */
static void list_fields_compact_positions(void)
{
    long long id[4];
    const char *specs[4] = {
        "{\"command\": \"true\", \"name\": \"fl-a\"}",
        "{\"command\": \"true\", \"name\": \"fl-held\", \"hold\": true}",
        NULL, /* fl-dep: waits on fl-a */
        "{\"command\": \"true\", \"name\": \"fl-b\"}",
    };
    for (int i = 0; i < 4; i++) {
        char dep[128];
        snprintf(dep, sizeof dep,
                 "{\"command\": \"true\", \"name\": \"fl-dep\", \"dependency\": \"afterok:%lld\"}",
                 id[0]);
        res r =
            req(&D, NULL, "POST", "/v1/jobs", specs[i] ? specs[i] : dep, "application/json", NULL);
        ASSERT_EQ(r.status, 201);
        id[i] = ji(&r, "id");
        res_free(&r);
    }
    res full = req(&D, NULL, "GET", "/v1/jobs?state=PD&limit=10000", NULL, NULL, NULL);
    res part =
        req(&D, NULL, "GET", "/v1/jobs?state=PD&limit=10000&fields=id,position,name&compact=1",
            NULL, NULL, NULL);
    ASSERT_EQ(full.status, 200);
    ASSERT_EQ(part.status, 200);
    ASSERT(strchr(full.body, '\n') < full.body + strlen(full.body) - 1);  /* indented */
    ASSERT(strchr(part.body, '\n') == part.body + strlen(part.body) - 1); /* one line */
    ASSERT(!strstr(part.body, ": ") && !strstr(part.body, ", "));
    json_t *fj = json_object_get(full.j, "jobs"), *pj = json_object_get(part.j, "jobs");
    ASSERT_EQ(json_array_size(fj), json_array_size(pj));
    ASSERT_EQ(ji(&full, "total"), ji(&part, "total"));
    long long prev_id = 0, last_pos = 0, pos[4] = {-1, -1, -1, -1};
    size_t i;
    json_t *p;
    json_array_foreach(pj, i, p)
    {
        json_t *f = json_array_get(fj, i);
        ASSERT_EQ(json_object_size(p), 3);
        long long pid = json_integer_value(json_object_get(p, "id"));
        ASSERT_EQ(pid, json_integer_value(json_object_get(f, "id")));
        ASSERT(pid > prev_id); /* ascending ids */
        prev_id = pid;
        ASSERT(json_equal(json_object_get(p, "position"), json_object_get(f, "position")));
        ASSERT(json_equal(json_object_get(p, "name"), json_object_get(f, "name")));
        json_t *jp = json_object_get(p, "position");
        /* fifo: one queue by submission, so ascending ids are positions 1, 2, ... */
        if (json_is_integer(jp)) ASSERT_EQ(json_integer_value(jp), ++last_pos);
        for (int k = 0; k < 4; k++)
            if (pid == id[k]) pos[k] = json_is_integer(jp) ? json_integer_value(jp) : 0;
    }
    ASSERT(pos[0] > 0);
    ASSERT_EQ(pos[1], 0);          /* held: in no queue */
    ASSERT_EQ(pos[2], 0);          /* waiting on a dependency: in no queue */
    ASSERT_EQ(pos[3], pos[0] + 1); /* right behind fl-a: the two above take no place */
    res_free(&full);
    res_free(&part);
    for (int k = 0; k < 4; k++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", id[k]);
        res g = req(&D, NULL, "GET", path, NULL, NULL, NULL);
        ASSERT_EQ(g.status, 200);
        json_t *gp = json_object_get(g.j, "position");
        ASSERT_EQ(json_is_integer(gp) ? json_integer_value(gp) : 0, pos[k]);
        res_free(&g);
    }
    /* a page of a selection: offset and limit count only the selected jobs */
    char path[160];
    snprintf(path, sizeof path, "/v1/jobs?state=PD&limit=2&offset=%lld&fields=id", last_pos);
    res pg = req(&D, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_EQ(pg.status, 200);
    ASSERT(json_array_size(json_object_get(pg.j, "jobs")) <= 2);
    res_free(&pg);
    /* every key of a full object, active (snapshot) or any (database), may be asked alone */
    const char *lists[] = {"/v1/jobs?state=PD&limit=1", "/v1/jobs?state=all&limit=1"};
    for (int l = 0; l < 2; l++) {
        res a = req(&D, NULL, "GET", lists[l], NULL, NULL, NULL);
        ASSERT_EQ(a.status, 200);
        json_t *first = json_array_get(json_object_get(a.j, "jobs"), 0);
        ASSERT(first != NULL);
        const char *key;
        json_t *v;
        json_object_foreach(first, key, v)
        {
            char u[160];
            snprintf(u, sizeof u, "%s&fields=%s", lists[l], key);
            res one = req(&D, NULL, "GET", u, NULL, NULL, NULL);
            ASSERT_EQ(one.status, 200);
            json_t *o = json_array_get(json_object_get(one.j, "jobs"), 0);
            if (json_object_size(o) != 1 || !json_equal(json_object_get(o, key), v))
                T_FAIL("%s: key '%s' not given alone, or not the full object's value", u, key);
            res_free(&one);
        }
        res_free(&a);
    }
    res bad = req(&D, NULL, "GET", "/v1/jobs?fields=id,bogus", NULL, NULL, NULL);
    EXPECT_PROBLEM(bad, 400, "GS_EINVAL");
    ASSERT_STR(js(&bad, "field"), "fields");
    ASSERT_CONTAINS(js(&bad, "detail"), "unknown job key 'bogus'");
    res_free(&bad);
    bad = req(&D, NULL, "GET", "/v1/jobs?fields=id,,name", NULL, NULL, NULL);
    EXPECT_PROBLEM(bad, 400, "GS_EINVAL");
    res_free(&bad);
    bad = req(&D, NULL, "GET", "/v1/jobs?compact=2", NULL, NULL, NULL);
    EXPECT_PROBLEM(bad, 400, "GS_EINVAL");
    res_free(&bad);
}

/* A client cannot make the daemon keep an unbounded number of VCs (queues, listing rows,
 * metrics labels): past GSD_MAX_VCS (1024) VCs with accepted jobs a new VC name is refused,
 * known ones still work. Rejected submits (422) create no VC and consume nothing of the cap
 * (issue 11: 1,024 junk names used to lock every user out of new VCs). */
static void vc_names_are_bounded(void)
{
    char body[128];
    for (int i = 0; i < 40; i++) {
        snprintf(body, sizeof body, "{\"command\": \"true\", \"gpus\": 3, \"vc\": \"junk-%d\"}", i);
        res r = req(&D, NULL, "POST", "/v1/jobs", body, "application/json", NULL);
        EXPECT_PROBLEM(r, 422, "GS_ENEVER"); /* 3 GPUs never fit: rejected, no VC */
        res_free(&r);
    }
    res r = req(&D, NULL, "GET", "/v1/vcs", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    size_t k;
    json_t *e;
    json_array_foreach(json_object_get(r.j, "vcs"), k,
                       e) if (!strncmp(json_string_value(json_object_get(e, "name")), "junk-", 5))
        T_FAIL("rejected VC %s is listed", json_string_value(json_object_get(e, "name")));
    res_free(&r);
    int refused = 0, first_refused = -1;
    for (int i = 0; i < 1040 && refused < 3; i++) {
        snprintf(body, sizeof body,
                 "{\"command\": \"true\", \"gpus\": 1, \"duration\": \"1h\", \"vc\": \"many-%d\"}",
                 i);
        r = req(&D, NULL, "POST", "/v1/jobs", body, "application/json", NULL);
        if (r.status == 400) {
            EXPECT_PROBLEM(r, 400, "GS_ERANGE");
            ASSERT_STR(js(&r, "field"), "vc");
            if (first_refused < 0) first_refused = i;
            refused++;
        } else {
            ASSERT_EQ(r.status, 201);
        }
        res_free(&r);
    }
    ASSERT_EQ(refused, 3);
    /* the 40 junk names took nothing: the first refusal comes after ~1024 accepted VCs */
    ASSERT(first_refused > 1000 && first_refused <= 1024);
    r = req(&D, NULL, "POST", "/v1/jobs",
            "{\"command\": \"true\", \"gpus\": 1, \"vc\": \"many-7\"}", "application/json", NULL);
    ASSERT_EQ(r.status, 201); /* a known VC is still accepted */
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs",
            "{\"command\": \"true\", \"gpus\": 1, \"vc\": \"junk-3\"}", "application/json", NULL);
    EXPECT_PROBLEM(r, 400, "GS_ERANGE"); /* a name only rejected jobs used is a new VC */
    res_free(&r);
    r = req(&D, NULL, "GET", "/v1/vcs", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT(json_array_size(json_object_get(r.j, "vcs")) <= 1024 + 2);
    res_free(&r);
}

static void graceful_shutdown(void)
{
    /* end the long job so nothing outlives the test, then stop */
    res c = req(&D, NULL, "DELETE", "/v1/jobs/1", NULL, NULL, NULL);
    ASSERT_EQ(c.status, 200);
    ASSERT_EQ(json_array_size(json_object_get(c.j, "stopping")), 1);
    res_free(&c);
    int done = 0;
    for (int i = 0; i < 200 && !done; i++) {
        res g = req(&D, NULL, "GET", "/v1/jobs/1", NULL, NULL, NULL);
        done = !strcmp(js(&g, "state"), "CANCELLED");
        res_free(&g);
        if (!done) sleep_ms(50);
    }
    ASSERT(done);
    ASSERT_EQ(stop(&D), 0);
    ASSERT_CONTAINS(slurp(D.log), "shutting down");
}

/* A retried submit gets the first answer again, also after restarts (the engine then knows
 * only active jobs, the database has the rest): 422 for a rejected job, never a 200 that
 * would make a client believe the job was accepted. */
static void idempotent_replays_across_restarts(void)
{
    const char *extra[] = {"--cluster", "1x2", NULL};
    if (start(&D, "main", extra)) T_FAIL("daemon did not restart: %s", slurp(D.log));
    const char *kr[] = {"Idempotency-Key: rej-1", NULL};
    const char *never = "{\"command\": \"true\", \"gpus\": 3}";
    res r = req(&D, NULL, "POST", "/v1/jobs", never, "application/json", kr);
    EXPECT_PROBLEM(r, 422, "GS_ENEVER");
    long long rid = ji(&r, "job_id");
    ASSERT(rid > 0);
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", never, "application/json", kr);
    EXPECT_PROBLEM(r, 422, "GS_ENEVER");
    ASSERT_EQ(ji(&r, "job_id"), rid);
    ASSERT(json_is_true(json_object_get(r.j, "idempotent_replay")));
    ASSERT_CONTAINS(js(&r, "detail"), "needs 3 GPUs but the cluster has 2");
    res_free(&r);
    const char *k1[] = {"Idempotency-Key: abc-1", NULL}; /* from idempotency_and_dry_run */
    r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": [\"sleep\", \"1\"]}", "application/json",
            k1);
    ASSERT_EQ(r.status, 200);
    ASSERT(json_is_true(json_object_get(r.j, "idempotent_replay")));
    long long aid = ji(&r, "id");
    ASSERT(aid > 0);
    res_free(&r);
    /* let everything finish, restart, and ask again */
    for (int i = 0; i < 400; i++) {
        res l = req(&D, NULL, "GET", "/v1/jobs", NULL, NULL, NULL);
        long long active = ji(&l, "total");
        res_free(&l);
        if (active == 0) break;
        sleep_ms(50);
    }
    ASSERT_EQ(stop(&D), 0);
    if (start(&D, "main", extra)) T_FAIL("daemon did not restart: %s", slurp(D.log));
    r = req(&D, NULL, "POST", "/v1/jobs", never, "application/json", kr);
    EXPECT_PROBLEM(r, 422, "GS_ENEVER");
    ASSERT_EQ(ji(&r, "job_id"), rid);
    res_free(&r);
    r = req(&D, NULL, "POST", "/v1/jobs", "{\"command\": [\"sleep\", \"1\"]}", "application/json",
            k1);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(ji(&r, "id"), aid);
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

static void tokens_and_visibility(void)
{
    char err[600];
    snprintf(err, sizeof err, "%s", tmp("tok.err"));
    const char *tokfile = tmp("tokens");
    FILE *f = fopen(tokfile, "w");
    ASSERT(f);
    fclose(f);
    const char *users[][3] = {{"alice", "alice.a-secret-a-secret", ""},
                              {"bob", "bob.b-secret-b-secret", ""},
                              {"root", "root.r-secret-r-secret", "--admin"}};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"token",
                              "hash",
                              "--user",
                              users[i][0],
                              "--token",
                              users[i][1],
                              "--iterations",
                              "1000",
                              users[i][2][0] ? users[i][2] : NULL,
                              NULL};
        ASSERT_EQ(run_gsched(args, err), 0);
        char *line = slurp(err);
        f = fopen(tokfile, "a");
        fputs(line, f);
        fclose(f);
    }
    ASSERT_OK(chmod(tokfile, 0600)); /* the daemon refuses a tokens file others can read */
    daemon_t A;
    const char *extra[] = {"--cluster", "1x2", "--tokens", tokfile, NULL};
    if (start(&A, "auth", extra)) T_FAIL("auth daemon did not start: %s", slurp(A.log));
    res r = req(&A, NULL, "GET", "/v1/jobs", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 401, "GS_EPERM");
    res_free(&r);
    r = req(&A, "alice.wrong", "GET", "/v1/jobs", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 401, "GS_EPERM");
    res_free(&r);
    r = req(&A, NULL, "GET", "/v1/health", NULL, NULL, NULL); /* open */
    ASSERT_EQ(r.status, 200);
    res_free(&r);
    r = req(&A, NULL, "GET", "/metrics", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    res_free(&r);
    r = req(&A, "alice.a-secret-a-secret", "POST", "/v1/jobs", "{\"command\": \"sleep 0.2\"}",
            "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    res_free(&r);
    r = req(&A, "alice.a-secret-a-secret", "GET", "/v1/jobs/1", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_STR(js(&r, "user"), "alice");
    res_free(&r);
    r = req(&A, "alice.a-secret-a-secret", "POST", "/v1/jobs",
            "{\"command\": \"true\", \"user\": \"bob\"}", "application/json", NULL);
    EXPECT_PROBLEM(r, 403, "GS_EPERM");
    res_free(&r);
    r = req(&A, "bob.b-secret-b-secret", "GET", "/v1/jobs/1", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 404, "GS_ENOENT"); /* not even its existence */
    res_free(&r);
    r = req(&A, "bob.b-secret-b-secret", "DELETE", "/v1/jobs/1", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 404, "GS_ENOENT");
    res_free(&r);
    r = req(&A, "bob.b-secret-b-secret", "GET", "/v1/jobs?state=all", NULL, NULL, NULL);
    ASSERT_EQ(ji(&r, "total"), 0);
    res_free(&r);
    r = req(&A, "bob.b-secret-b-secret", "GET", "/v1/jobs?user=alice", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 403, "GS_EPERM");
    res_free(&r);
    r = req(&A, "root.r-secret-r-secret", "GET", "/v1/jobs?state=all", NULL, NULL, NULL);
    ASSERT_EQ(ji(&r, "total"), 1);
    res_free(&r);
    r = req(&A, "root.r-secret-r-secret", "POST", "/v1/jobs",
            "{\"command\": \"true\", \"user\": \"bob\"}", "application/json", NULL);
    ASSERT_EQ(r.status, 201); /* admins may submit for others */
    res_free(&r);
    r = req(&A, "bob.b-secret-b-secret", "GET", "/v1/jobs?state=all", NULL, NULL, NULL);
    ASSERT_EQ(ji(&r, "total"), 1);
    res_free(&r);
    ASSERT_EQ(stop(&A), 0);
}

/* The state of job id, "" if none. */
static const char *job_state(daemon_t *dm, const char *tok, long long id, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    res r = req(dm, tok, "GET", path, NULL, NULL, NULL);
    snprintf(buf, cap, "%s", js(&r, "state"));
    res_free(&r);
    return buf;
}

/* Wait until job id is in state st (about 20 s at most); 0 when it is. */
static int wait_job(daemon_t *dm, const char *tok, long long id, const char *st)
{
    char b[32];
    for (int i = 0; i < 400; i++) {
        if (!strcmp(job_state(dm, tok, id, b, sizeof b), st)) return 0;
        sleep_ms(50);
    }
    return -1;
}

/* gsched node bad|good through the API: admins only (403 for others), the node takes no new job
 * while its running job runs on, the mark and its reason survive a restart, good returns it. */
static void nodes_bad_and_good(void)
{
    char err[600];
    snprintf(err, sizeof err, "%s", tmp("bad.err"));
    const char *tokfile = tmp("bad-tokens");
    FILE *f = fopen(tokfile, "w");
    ASSERT(f);
    fclose(f);
    const char *users[][3] = {{"alice", "alice.a-secret-a-secret", ""},
                              {"root", "root.r-secret-r-secret", "--admin"}};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"token",
                              "hash",
                              "--user",
                              users[i][0],
                              "--token",
                              users[i][1],
                              "--iterations",
                              "1000",
                              users[i][2][0] ? users[i][2] : NULL,
                              NULL};
        ASSERT_EQ(run_gsched(args, err), 0);
        char *line = slurp(err);
        f = fopen(tokfile, "a");
        fputs(line, f);
        fclose(f);
    }
    ASSERT_OK(chmod(tokfile, 0600));
    const char *al = "alice.a-secret-a-secret", *rt = "root.r-secret-r-secret";
    daemon_t B;
    const char *extra[] = {"--cluster", "2x2", "--tokens", tokfile, NULL};
    if (start(&B, "bad", extra)) T_FAIL("daemon did not start: %s", slurp(B.log));
    const char *two = "{\"command\": [\"sleep\", \"1\"], \"gpus\": 2}";
    res r = req(&B, al, "POST", "/v1/jobs", two, "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    long long a = ji(&r, "id");
    res_free(&r);
    if (wait_job(&B, al, a, "RUNNING")) T_FAIL("job a did not start: %s", slurp(B.log));
    r = req(&B, al, "GET", "/v1/jobs/1", NULL, NULL, NULL);
    ASSERT_CONTAINS(js(&r, "placement"), "n0");
    res_free(&r);
    /* not an admin: 403; a bad body: 400; no such node: 404 */
    r = req(&B, al, "POST", "/v1/nodes/n0/bad", "{\"reason\": \"ECC\"}", "application/json", NULL);
    EXPECT_PROBLEM(r, 403, "GS_EPERM");
    res_free(&r);
    r = req(&B, rt, "POST", "/v1/nodes/n0/bad", "{\"why\": \"ECC\"}", "application/json", NULL);
    EXPECT_PROBLEM(r, 400, "GS_EPARSE");
    res_free(&r);
    r = req(&B, rt, "POST", "/v1/nodes/n9/bad", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 404, "GS_ENOENT");
    res_free(&r);
    r = req(&B, rt, "POST", "/v1/nodes/n0/bad", "{\"reason\": \"ECC errors\"}", "application/json",
            NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT(json_is_true(json_object_get(r.j, "changed")));
    res_free(&r);
    r = req(&B, rt, "POST", "/v1/nodes/n0/bad", NULL, NULL, NULL); /* already: nothing */
    ASSERT_EQ(r.status, 200);
    ASSERT(json_is_false(json_object_get(r.j, "changed")));
    res_free(&r);
    r = req(&B, al, "GET", "/v1/nodes/n0", NULL, NULL, NULL);
    ASSERT_STR(js(&r, "state"), "bad");
    ASSERT(json_is_true(json_object_get(r.j, "bad")));
    ASSERT_CONTAINS(js(&r, "bad_reason"), "ECC errors (by root)");
    res_free(&r);
    /* a runs on; b goes to n1; c (both nodes) waits */
    r = req(&B, al, "POST", "/v1/jobs", two, "application/json", NULL);
    long long b = ji(&r, "id");
    res_free(&r);
    r = req(&B, al, "POST", "/v1/jobs",
            "{\"command\": [\"sleep\", \"30\"], \"tasks\": 2, \"gpus_per_task\": 2}",
            "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    long long c = ji(&r, "id");
    res_free(&r);
    if (wait_job(&B, al, a, "DONE")) T_FAIL("job a did not run on: %s", slurp(B.log));
    r = req(&B, al, "GET", "/v1/jobs/1", NULL, NULL, NULL);
    ASSERT_EQ(ji(&r, "runs"), 1); /* never requeued */
    res_free(&r);
    if (wait_job(&B, al, b, "DONE")) T_FAIL("job b did not run: %s", slurp(B.log));
    char path[64], st[32];
    snprintf(path, sizeof path, "/v1/jobs/%lld", b);
    r = req(&B, al, "GET", path, NULL, NULL, NULL);
    ASSERT_CONTAINS(js(&r, "placement"), "n1");
    res_free(&r);
    ASSERT_STR(job_state(&B, al, c, st, sizeof st), "PENDING");
    /* the mark survives a restart */
    ASSERT_EQ(stop(&B), 0);
    if (start(&B, "bad", extra)) T_FAIL("daemon did not restart: %s", slurp(B.log));
    r = req(&B, al, "GET", "/v1/nodes", NULL, NULL, NULL);
    json_t *n0 = json_array_get(json_object_get(r.j, "nodes"), 0);
    ASSERT_STR(json_string_value(json_object_get(n0, "state")), "bad");
    ASSERT_CONTAINS(json_string_value(json_object_get(n0, "bad_reason")), "ECC errors");
    res_free(&r);
    sleep_ms(300);
    ASSERT_STR(job_state(&B, al, c, st, sizeof st), "PENDING");
    ASSERT_CONTAINS(slurp(B.log), "node n0 stays bad");
    /* good again: c starts */
    r = req(&B, al, "POST", "/v1/nodes/n0/good", NULL, NULL, NULL);
    EXPECT_PROBLEM(r, 403, "GS_EPERM");
    res_free(&r);
    r = req(&B, rt, "POST", "/v1/nodes/n0/good", "{\"reason\": \"DIMM replaced\"}",
            "application/json", NULL);
    ASSERT_EQ(r.status, 200);
    res_free(&r);
    if (wait_job(&B, al, c, "RUNNING")) T_FAIL("job c did not start: %s", slurp(B.log));
    r = req(&B, al, "GET", "/v1/nodes/n0", NULL, NULL, NULL);
    ASSERT(json_is_false(json_object_get(r.j, "bad")));
    ASSERT(strcmp(js(&r, "state"), "bad"));
    res_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld", c);
    r = req(&B, al, "DELETE", path, NULL, NULL, NULL);
    res_free(&r);
    wait_job(&B, al, c, "CANCELLED");
    ASSERT_CONTAINS(slurp(B.log), "node n0 marked bad by root: ECC errors");
    ASSERT_EQ(stop(&B), 0);
}

/*
 * A machine in two HiveD chains (m0: K-NODE with K80 GPUs 4,5 and P-NODE with P100 GPUs 0-3):
 * one node cell per chain, both named m0.  The local executor runs both cells' jobs here with
 * disjoint CUDA indices (the HiveD leaf addresses); the node list has a row per cell with its
 * chain, `describe node m0` and GET /v1/nodes/m0 show the machine with every cell; /metrics has
 * one series per machine; a bad mark by name covers every cell and survives a restart.
 */
static void machine_in_two_chains(void)
{
    const char *cfg = tmp("two-chains.yaml");
    FILE *f = fopen(cfg, "w");
    ASSERT(f);
    fputs("physicalCluster:\n"
          "  cellTypes:\n"
          "    K-NODE: {childCellType: K80, childCellNumber: 2, isNodeLevel: true}\n"
          "    P-NODE: {childCellType: P100, childCellNumber: 4, isNodeLevel: true}\n"
          "  physicalCells:\n"
          "  - cellType: K-NODE\n"
          "    cellAddress: m0\n"
          "    cellChildren: [{cellAddress: 4}, {cellAddress: 5}]\n"
          "  - cellType: P-NODE\n"
          "    cellAddress: m0\n"
          "  - cellType: P-NODE\n"
          "    cellAddress: m1\n"
          "virtualClusters:\n"
          "  VC1:\n"
          "    virtualCells:\n"
          "    - {cellType: K-NODE, cellNumber: 1}\n"
          "    - {cellType: P-NODE, cellNumber: 2}\n",
          f);
    fclose(f);
    char cfgarg[600];
    snprintf(cfgarg, sizeof cfgarg, "%s", cfg);
    const char *extra[] = {"--cluster", cfgarg, "--policy", "hived", NULL};
    daemon_t M;
    if (start(&M, "chains", extra)) T_FAIL("daemon did not start: %s", slurp(M.log));
    const char *jk = "{\"command\": [\"sh\", \"-c\", \"echo CVD=$CUDA_VISIBLE_DEVICES; sleep 1\"], "
                     "\"gpus\": 2, \"gpu_type\": \"K80\", \"vc\": \"VC1\"}";
    const char *jp = "{\"command\": [\"sh\", \"-c\", \"echo CVD=$CUDA_VISIBLE_DEVICES; sleep 1\"], "
                     "\"gpus\": 4, \"gpu_type\": \"P100\", \"vc\": \"VC1\"}";
    res r = req(&M, NULL, "POST", "/v1/jobs", jk, "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    long long k = ji(&r, "id");
    res_free(&r);
    r = req(&M, NULL, "POST", "/v1/jobs", jp, "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    long long p = ji(&r, "id");
    res_free(&r);
    if (wait_job(&M, NULL, k, "RUNNING") || wait_job(&M, NULL, p, "RUNNING"))
        T_FAIL("jobs did not start: %s", slurp(M.log));
    char path[80];
    snprintf(path, sizeof path, "/v1/jobs/%lld", k);
    r = req(&M, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_STR(js(&r, "placement"), "m0:4-5");
    res_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld", p);
    r = req(&M, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_STR(js(&r, "placement"), "m0:0-3");
    res_free(&r);
    /* a row per node cell, with its chain */
    r = req(&M, NULL, "GET", "/v1/nodes", NULL, NULL, NULL);
    json_t *nodes = json_object_get(r.j, "nodes");
    ASSERT_EQ(json_array_size(nodes), 3);
    const char *want[][3] = {{"m0", "K-NODE", "2"}, {"m0", "P-NODE", "2"}, {"m1", "P-NODE", ""}};
    for (size_t i = 0; i < 3; i++) {
        json_t *n = json_array_get(nodes, i);
        ASSERT_STR(json_string_value(json_object_get(n, "name")), want[i][0]);
        ASSERT_STR(json_string_value(json_object_get(n, "chain")), want[i][1]);
        ASSERT_STR(json_string_value(json_object_get(n, "cell_type")), want[i][1]);
        ASSERT_EQ(json_integer_value(json_object_get(n, "node_cells")), want[i][2][0] ? 2 : 0);
    }
    res_free(&r);
    /* the machine: both cells, its GPUs with their chains */
    r = req(&M, NULL, "GET", "/v1/nodes/m0", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(ji(&r, "gpus"), 6);
    ASSERT_EQ(ji(&r, "allocated"), 6);
    ASSERT_STR(js(&r, "state"), "allocated");
    json_t *cells = json_object_get(r.j, "cells");
    ASSERT_EQ(json_array_size(cells), 2);
    ASSERT_STR(json_string_value(json_object_get(json_array_get(cells, 1), "chain")), "P-NODE");
    ASSERT_EQ(json_array_size(json_object_get(r.j, "gpu_list")), 6);
    ASSERT_EQ(json_array_size(json_object_get(r.j, "jobs")), 2);
    res_free(&r);
    char out[600];
    snprintf(out, sizeof out, "%s", tmp("chains.out"));
    const char *desc[] = {"describe", "node", "m0", "--server", M.url, NULL};
    ASSERT_EQ(run_gsched(desc, out), 0);
    const char *d = slurp(out);
    ASSERT_CONTAINS(d, "Cells (one per chain):");
    ASSERT_CONTAINS(d, "  K-NODE  K-NODE     allocated     2      2     0  4,5");
    ASSERT_CONTAINS(d, "  P-NODE  P-NODE     allocated     4      4     0  0,1,2,3");
    ASSERT_CONTAINS(d, "GPUs:          6");
    const char *nl[] = {"nodes", "--server", M.url, NULL};
    ASSERT_EQ(run_gsched(nl, out), 0);
    d = slurp(out);
    ASSERT_CONTAINS(d, "NODE  CHAIN   STATE");
    ASSERT_CONTAINS(d, "m0    K-NODE  allocated     2");
    ASSERT_CONTAINS(d, "m0    P-NODE  allocated     4");
    r = req(&M, NULL, "GET", "/metrics", NULL, NULL, NULL);
    ASSERT_CONTAINS(r.body, "gsched_node_gpus{node=\"m0\"} 6\n");
    ASSERT_CONTAINS(r.body, "gsched_node_gpus_allocated{node=\"m0\"} 6\n");
    res_free(&r);
    /* both on this machine, with disjoint CUDA indices */
    if (wait_job(&M, NULL, k, "DONE") || wait_job(&M, NULL, p, "DONE"))
        T_FAIL("jobs did not end: %s", slurp(M.log));
    snprintf(path, sizeof path, "/v1/jobs/%lld/logs", k);
    r = req(&M, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_CONTAINS(r.body ? r.body : "", "CVD=4,5\n");
    res_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld/logs", p);
    r = req(&M, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_CONTAINS(r.body ? r.body : "", "CVD=0,1,2,3\n");
    res_free(&r);
    /* bad by name: every cell of the machine; kept at restart */
    r = req(&M, NULL, "POST", "/v1/nodes/m0/bad", "{\"reason\": \"PSU\"}", "application/json",
            NULL);
    ASSERT_EQ(r.status, 200);
    res_free(&r);
    r = req(&M, NULL, "POST", "/v1/jobs", jk, "application/json", NULL);
    long long k2 = ji(&r, "id");
    res_free(&r);
    ASSERT_EQ(stop(&M), 0);
    if (start(&M, "chains", extra)) T_FAIL("daemon did not restart: %s", slurp(M.log));
    r = req(&M, NULL, "GET", "/v1/nodes", NULL, NULL, NULL);
    for (size_t i = 0; i < 2; i++) {
        json_t *n = json_array_get(json_object_get(r.j, "nodes"), i);
        ASSERT_STR(json_string_value(json_object_get(n, "state")), "bad");
        ASSERT_CONTAINS(json_string_value(json_object_get(n, "bad_reason")), "PSU");
    }
    res_free(&r);
    r = req(&M, NULL, "GET", "/v1/nodes/m0", NULL, NULL, NULL);
    ASSERT_STR(js(&r, "state"), "bad");
    ASSERT_EQ(ji(&r, "down"), 6);
    res_free(&r);
    char st[32];
    sleep_ms(300);
    ASSERT_STR(job_state(&M, NULL, k2, st, sizeof st), "PENDING"); /* the only K80s are m0's */
    /* good again, by name: both cells; the K80 job starts */
    r = req(&M, NULL, "POST", "/v1/nodes/m0/good", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT(json_is_true(json_object_get(r.j, "changed")));
    res_free(&r);
    if (wait_job(&M, NULL, k2, "DONE")) T_FAIL("job did not run: %s", slurp(M.log));
    r = req(&M, NULL, "GET", "/v1/nodes", NULL, NULL, NULL);
    for (size_t i = 0; i < 2; i++)
        ASSERT(json_is_false(
            json_object_get(json_array_get(json_object_get(r.j, "nodes"), i), "bad")));
    res_free(&r);
    ASSERT_EQ(stop(&M), 0);
}

static void startup_refusals(void)
{
    char err[512]; /* (tmp() reuses its buffers) */
    snprintf(err, sizeof err, "%s", tmp("refuse.err"));
    const char *a1[] = {"serve",     "--cluster", "2",          "--listen",
                        "0.0.0.0:0", "--db",      tmp("r1.db"), NULL};
    ASSERT_EQ(run_gsched(a1, err), 2);
    ASSERT_CONTAINS(slurp(err), "refusing to listen on 0.0.0.0:0 without --tokens");
    const char *a2[] = {"serve", "--cluster", "2", "--policy", "fifoo", "--db", tmp("r2.db"), NULL};
    ASSERT_EQ(run_gsched(a2, err), 2);
    ASSERT_CONTAINS(slurp(err), "unknown policy 'fifoo'");
    const char *a3[] = {"serve", "--cluster", "0x0", "--db", tmp("r3.db"), NULL};
    ASSERT_EQ(run_gsched(a3, err), 2);
    ASSERT_CONTAINS(slurp(err), "cluster");
    const char *a4[] = {"serve", "--cluster", "2", "--set", "queus=1", "--db", tmp("r4.db"), NULL};
    ASSERT_EQ(run_gsched(a4, err), 2);
    ASSERT_CONTAINS(slurp(err), "parameter 'queus' is not used");
    const char *a5[] = {"serve",          "--cluster", "2",          "--listen", "127.0.0.1:99999",
                        "--insecure-tcp", "--db",      tmp("r5.db"), NULL};
    ASSERT_EQ(run_gsched(a5, err), 2);
    ASSERT_CONTAINS(slurp(err), "port out of range");
    const char *a7[] = {"serve",  "--cluster", "2",          "--executor",
                        "slurmm", "--db",      tmp("r7.db"), NULL};
    ASSERT_EQ(run_gsched(a7, err), 2);
    ASSERT_CONTAINS(slurp(err), "unknown executor 'slurmm' (known: local");
    /* no --cluster: NVML discovery; on a machine without NVML a clear refusal (skipped where
     * NVML exists: there the daemon would find real GPUs and serve) */
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml) {
        dlclose(nvml);
        printf("# skip: NVML present, not checking the no-GPU refusal\n");
    } else {
        const char *a6[] = {"serve", "--db", tmp("r6.db"), NULL};
        ASSERT_EQ(run_gsched(a6, err), 2);
        ASSERT_CONTAINS(slurp(err), "NVML not available");
        ASSERT_CONTAINS(slurp(err), "give --cluster SPEC");
    }
    /* a second daemon on a database in use */
    daemon_t B;
    const char *extra[] = {"--cluster", "2", NULL};
    if (start(&B, "shared", extra)) T_FAIL("daemon did not start: %s", slurp(B.log));
    daemon_t C;
    ASSERT(start(&C, "shared", extra) != 0);
    ASSERT_CONTAINS(slurp(C.log), "in use by another gsched serve");
    ASSERT_EQ(stop(&B), 0);
}

/* GPU discovery through NVML loaded with dlopen, against a fake libnvidia-ml.so.1
 * (tests/fake_nvml.c): failures are clean refusals (exit 2, a message), GPUs found become a
 * one-node cluster named after the host with the short GPU type, and jobs run on them. */
static void nvml_discovery(void)
{
#ifdef FAKE_NVML_DIR
    char err[600];
    snprintf(err, sizeof err, "%s", tmp("nvml.err"));
    const char *old = getenv("LD_LIBRARY_PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("LD_LIBRARY_PATH", FAKE_NVML_DIR, 1);
    setenv("GSCHED_FAKE_NVML", "init-fail", 1);
    const char *a1[] = {"serve", "--db", tmp("nv1.db"), "--socket", tmp("nv1.sock"), NULL};
    ASSERT_EQ(run_gsched(a1, err), 2);
    ASSERT_CONTAINS(slurp(err), "nvmlInit failed: Driver Not Loaded");
    ASSERT_CONTAINS(slurp(err), "give --cluster SPEC");
    setenv("GSCHED_FAKE_NVML", "0", 1);
    ASSERT_EQ(run_gsched(a1, err), 2);
    ASSERT_CONTAINS(slurp(err), "NVML reports no GPUs");
    setenv("GSCHED_FAKE_NVML", "2:NVIDIA H100 80GB HBM3", 1);
    daemon_t N;
    if (start(&N, "nvml", NULL)) T_FAIL("daemon did not start with NVML GPUs: %s", slurp(N.log));
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    res r = req(&N, NULL, "GET", "/v1/nodes", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    json_t *nodes = json_object_get(r.j, "nodes");
    ASSERT_EQ(json_array_size(nodes), 1);
    json_t *n0 = json_array_get(nodes, 0);
    ASSERT_STR(json_string_value(json_object_get(n0, "name")), host);
    ASSERT_EQ(json_integer_value(json_object_get(n0, "gpus")), 2);
    ASSERT_STR(json_string_value(json_array_get(json_object_get(n0, "gpu_types"), 0)), "H100");
    res_free(&r);
    r = req(&N, NULL, "POST", "/v1/jobs",
            "{\"command\": [\"sh\", \"-c\", \"echo CVD=$CUDA_VISIBLE_DEVICES\"], \"gpus\": 2, "
            "\"gpu_type\": \"H100\"}",
            "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", ji(&r, "id"));
    res_free(&r);
    int done = 0;
    for (int i = 0; i < 400 && !done; i++) {
        res g = req(&N, NULL, "GET", path, NULL, NULL, NULL);
        done = !strcmp(js(&g, "state"), "DONE");
        res_free(&g);
        if (!done) sleep_ms(50);
    }
    ASSERT(done);
    strcat(path, "/logs");
    r = req(&N, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_CONTAINS(r.body ? r.body : "", "CVD=0,1");
    res_free(&r);
    ASSERT_EQ(stop(&N), 0);
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    free(saved);
    unsetenv("GSCHED_FAKE_NVML");
#else
    printf("# skip: no fake NVML library in this build\n");
#endif
}

/*
 * A policy the daemon has never heard of ("bigfirst", defined here): one
 * queue per VC, the biggest job first, then submission; it starts only jobs
 * named "hog" and tells jobs named "told" why they wait; it guarantees 5 GPUs
 * to VC gold and declares VC reserved (11 GPUs) before any job uses it.  The
 * daemon must show exactly that: positions, queue text, reasons (its own,
 * else the engine's default), VC guarantees, and dry-run "pending_ahead".
 */
/* The state of the test policies in this file (bigfirst, suspender): the engine, and a note
 * a policy may keep on what the engine answered it. */
typedef struct tpol {
    gs_engine *e;
    int noted;
    char note[64];
} tpol;

static int tpol_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    tpol *t = calloc(1, sizeof *t);
    if (!t) return GS_ENOMEM;
    t->e = e;
    *st = t;
    return 0;
}
static void tpol_destroy(void *st)
{
    free(st);
}
typedef tpol bigfirst;
static int bf_schedule(void *st)
{
    bigfirst *b = st;
    for (size_t s = 0; s < gs_engine_njobs(b->e); s++) {
        const gs_job *j = gs_engine_job(b->e, s);
        if (j->state != GS_JOB_PENDING || !j->name) continue;
        if (!strcmp(j->name, "hog"))
            gs_engine_try_start(b->e, j, GS_LOCALITY_STRICT);
        else if (!strcmp(j->name, "told"))
            gs_engine_set_reason(b->e, j, "Told to wait");
    }
    return 0;
}
static int bf_queue_key(void *st, const gs_job *j, gs_queue_key *k)
{
    (void)st;
    k->queue = j->vc;
    k->key = -(int64_t)j->gpus;
    return 0;
}
static int bf_queue_describe(void *st, int queue, char *buf, size_t cap)
{
    const bigfirst *b = st;
    snprintf(buf, cap, "in test queue %s (biggest first)", gs_engine_vc_name(b->e, queue));
    return 0;
}
static int64_t bf_vc_guarantee(void *st, const char *vc)
{
    (void)st;
    return !strcmp(vc, "gold") ? 5 : !strcmp(vc, "reserved") ? 11 : -1;
}
static const char *bf_vc_declared(void *st, size_t i)
{
    (void)st;
    return i == 0 ? "reserved" : NULL;
}
static const gs_policy_ops bigfirst_ops = {
    .name = "bigfirst",
    .summary = "test: per VC, biggest first",
    .create = tpol_create,
    .destroy = tpol_destroy,
    .schedule = bf_schedule,
    .queue_key = bf_queue_key,
    .queue_describe = bf_queue_describe,
    .vc_guarantee = bf_vc_guarantee,
    .vc_declared = bf_vc_declared,
};

static long long submit_id(const daemon_t *dm, const char *body)
{
    res r = req(dm, NULL, "POST", "/v1/jobs", body, "application/json", NULL);
    long long id = r.status == 201 ? ji(&r, "id") : -1;
    res_free(&r);
    return id;
}

/* The pending job named 'name' in a /v1/jobs listing, or NULL. */
static json_t *by_name(const res *l, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(l->j, "jobs"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "name")), name)) return e;
    }
    return NULL;
}

static long long dry_ahead(const daemon_t *dm, const char *body)
{
    res r = req(dm, NULL, "POST", "/v1/jobs?dry_run=1", body, "application/json", NULL);
    long long n = r.status == 200 ? ji(&r, "pending_ahead") : -1;
    res_free(&r);
    return n;
}

static void unknown_policy_views(void)
{
    daemon_t P;
    if (start_ops(&P, "bigfirst", &bigfirst_ops, "1x8", NULL))
        T_FAIL("daemon did not start: %s", slurp(P.log));
    res r = req(&P, NULL, "GET", "/v1/health", NULL, NULL, NULL);
    ASSERT_STR(js(&r, "policy"), "bigfirst");
    res_free(&r);
    long long hog = submit_id(
        &P, "{\"command\": [\"sleep\", \"30\"], \"name\": \"hog\", \"gpus\": 6, \"vc\": \"run\"}");
    ASSERT(hog > 0);
    char hogpath[64];
    snprintf(hogpath, sizeof hogpath, "/v1/jobs/%lld", hog);
    int running = 0;
    for (int i = 0; i < 200 && !running; i++) {
        r = req(&P, NULL, "GET", hogpath, NULL, NULL, NULL);
        running = !strcmp(js(&r, "state"), "RUNNING");
        res_free(&r);
        if (!running) sleep_ms(50);
    }
    ASSERT(running);
    /* 2 of 8 GPUs free now */
    long long a =
        submit_id(&P, "{\"command\": \"true\", \"name\": \"a\", \"gpus\": 1, \"vc\": \"gold\"}");
    long long b =
        submit_id(&P, "{\"command\": \"true\", \"name\": \"b\", \"gpus\": 3, \"vc\": \"gold\"}");
    long long t =
        submit_id(&P, "{\"command\": \"true\", \"name\": \"told\", \"gpus\": 1, \"vc\": \"gold\"}");
    long long c =
        submit_id(&P, "{\"command\": \"true\", \"name\": \"c\", \"gpus\": 2, \"vc\": \"other\"}");
    ASSERT(a > 0 && b > a && t > b && c > t);
    /* the policy's reason reaches the views within a refresh */
    res l = {0, NULL, NULL, ""};
    for (int i = 0; i < 200; i++) {
        res_free(&l);
        l = req(&P, NULL, "GET", "/v1/jobs?state=PD", NULL, NULL, NULL);
        json_t *e = by_name(&l, "told");
        if (e && json_is_string(json_object_get(e, "reason")) &&
            !strcmp(json_string_value(json_object_get(e, "reason")), "Told to wait"))
            break;
        sleep_ms(50);
    }
    ASSERT_EQ(ji(&l, "total"), 4);
    static const struct {
        const char *name;
        int pos;
        const char *reason;
    } want[] = {
        {"b", 1, "Resources"},       /* biggest in gold; 3 GPUs > 2 free: the engine's default */
        {"a", 2, "Priority"},        /* 1 GPU fits the 2 free: others are ahead */
        {"told", 3, "Told to wait"}, /* same size as a, submitted later; the policy's reason */
        {"c", 1, "Priority"},        /* alone in its VC's queue */
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        json_t *e = by_name(&l, want[i].name);
        if (!e) T_FAIL("job %s not listed: %s", want[i].name, l.body);
        ASSERT_EQ(json_integer_value(json_object_get(e, "position")), want[i].pos);
        ASSERT_STR(json_string_value(json_object_get(e, "reason")), want[i].reason);
    }
    res_free(&l);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", a);
    r = req(&P, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_EQ(ji(&r, "position"), 2);
    ASSERT_STR(js(&r, "why_pending"),
               "Priority: needs 1 GPU(s) (1 x 1), 2 of 8 free now; position 2 "
               "in test queue gold (biggest first)");
    res_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld", c);
    r = req(&P, NULL, "GET", path, NULL, NULL, NULL);
    ASSERT_STR(js(&r, "why_pending"),
               "Priority: needs 2 GPU(s) (1 x 2), 2 of 8 free now; position 1 "
               "in test queue other (biggest first)");
    res_free(&r);
    /* VCs: the declared one first, then in order of first use; guarantees as the policy says */
    r = req(&P, NULL, "GET", "/v1/vcs", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    json_t *vcs = json_object_get(r.j, "vcs");
    ASSERT_EQ(json_array_size(vcs), 4);
    static const struct {
        const char *name;
        long long guaranteed; /* -1: null */
        long long pending;
    } wv[] = {{"reserved", 11, 0}, {"run", -1, 0}, {"gold", 5, 3}, {"other", -1, 1}};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_array_get(vcs, i);
        ASSERT_STR(json_string_value(json_object_get(v, "name")), wv[i].name);
        json_t *gv = json_object_get(v, "guaranteed_gpus");
        ASSERT_EQ(json_is_null(gv) ? -1 : json_integer_value(gv), wv[i].guaranteed);
        ASSERT_EQ(json_integer_value(json_object_get(v, "pending_jobs")), wv[i].pending);
    }
    res_free(&r);
    r = req(&P, NULL, "GET", "/metrics", NULL, NULL, NULL);
    ASSERT_CONTAINS(r.body, "gsched_vc_gpus_guaranteed{vc=\"gold\"} 5\n");
    ASSERT_CONTAINS(r.body, "gsched_vc_gpus_guaranteed{vc=\"reserved\"} 11\n");
    res_free(&r);
    /* a dry run counts the jobs the policy would put ahead of it */
    ASSERT_EQ(dry_ahead(&P, "{\"command\": \"true\", \"gpus\": 2, \"vc\": \"gold\"}"), 1);
    ASSERT_EQ(dry_ahead(&P, "{\"command\": \"true\", \"gpus\": 1, \"vc\": \"gold\"}"), 3);
    ASSERT_EQ(dry_ahead(&P, "{\"command\": \"true\", \"gpus\": 4, \"vc\": \"gold\"}"), 0);
    ASSERT_EQ(dry_ahead(&P, "{\"command\": \"true\", \"gpus\": 1, \"vc\": \"new\"}"), 0);
    /* stop the hog, then the daemon */
    r = req(&P, NULL, "DELETE", hogpath, NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    res_free(&r);
    int over = 0;
    for (int i = 0; i < 200 && !over; i++) {
        r = req(&P, NULL, "GET", hogpath, NULL, NULL, NULL);
        over = !strcmp(js(&r, "state"), "CANCELLED");
        res_free(&r);
        if (!over) sleep_ms(50);
    }
    ASSERT(over);
    ASSERT_EQ(stop(&P), 0);
}

static void sql1(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) T_FAIL("%s: %s", sql, err);
    sqlite3_free(err);
}

/* A database file tmp(name).db with the version-1 schema (as gsched wrote it before executor
 * handles), open for the test to fill (NULL if it cannot be opened); its path in path. */
static sqlite3 *v1_db(const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s.db", tmp(name));
    sqlite3 *h;
    if (sqlite3_open(path, &h) != SQLITE_OK) {
        sqlite3_close(h);
        return NULL;
    }
    sql1(h, "PRAGMA journal_mode=WAL");
    sql1(h, gsd_test_schema_v1);
    sql1(h, "PRAGMA user_version = 1");
    return h;
}

/* State of job id (polls until it is 'want', bounded); returns the last answer. */
static res wait_state(const daemon_t *dm, long long id, const char *want)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    res r = {0, NULL, NULL, ""};
    for (int i = 0; i < 400; i++) {
        res_free(&r);
        r = req(dm, NULL, "GET", path, NULL, NULL, NULL);
        if (!strcmp(js(&r, "state"), want)) break;
        sleep_ms(50);
    }
    return r;
}

/*
 * A database written by gsched before executor handles (schema version 1: tasks with pid /
 * start_ticks) opens with this daemon, is upgraded in place, and recovery works on it: a
 * pending job runs, a running job whose tasks are gone is requeued and runs again, finished
 * tasks still show their pid, and ids continue after next_id.
 */
static void version1_database_upgraded(void)
{
    char db[512];
    sqlite3 *h = v1_db("old", db, sizeof db);
    ASSERT(h != NULL);
    sql1(h, "INSERT INTO jobs(id, grp, task_index, user, vc, name, priority, ntasks, "
            "gpus_per_task, gang, state, reason, exit_code, submit_us, first_start_us, "
            "last_start_us, end_us, queued_us, executed_us, preemptions, runs, alloc, placement, "
            "stop, cancel_by, spec) VALUES "
            "(1, 1, 0, 'tester', 'default', 'pending', 0, 1, 1, 1, 'PENDING', NULL, NULL, "
            "1000000, NULL, NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, "
            "'{\"command\": \"true\"}'), "
            "(2, 2, 0, 'tester', 'default', 'done', 0, 1, 1, 1, 'DONE', 'all tasks exited with "
            "code 0', 0, 1000000, 2000000, 2000000, 3000000, 1000000, 1000000, 0, 1, NULL, "
            "'n0:0', NULL, NULL, '{\"command\": \"true\"}'), "
            "(3, 3, 0, 'tester', 'default', 'running', 0, 1, 1, 1, 'RUNNING', NULL, NULL, "
            "1000000, 2000000, 2000000, NULL, 1000000, 0, 0, 1, '1', 'n0:1', NULL, NULL, "
            "'{\"command\": \"true\"}')");
    sql1(h, "INSERT INTO events(job_id, t_us, type, reason) VALUES (2, 2000000, 'started', "
            "'run 1 on n0:0'), (2, 3000000, 'finished', 'all tasks exited with code 0')");
    sql1(h, "INSERT INTO tasks(job_id, run, idx, pid, start_ticks, exit_code, gpus) VALUES "
            "(2, 1, 0, 4242, 777, 0, '0'), (3, 1, 0, 999999, 1, NULL, '1')");
    sql1(h, "INSERT INTO meta(key, value) VALUES ('next_id', 10)");
    sqlite3_close(h);

    daemon_t dm;
    const char *extra[] = {"--cluster", "1x2", NULL};
    if (start(&dm, "old", extra))
        T_FAIL("daemon did not start on a version 1 database: %s", slurp(dm.log));
    char up[64]; /* to the current version, whatever later steps add */
    snprintf(up, sizeof up, "upgraded from schema version 1 to %d", GSD_SCHEMA_VERSION);
    ASSERT_CONTAINS(slurp(dm.log), up);
    res r = req(&dm, NULL, "GET", "/v1/jobs/2", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_STR(js(&r, "state"), "DONE");
    json_t *tl = json_object_get(r.j, "task_list");
    ASSERT_EQ(json_array_size(tl), 1);
    json_t *t0 = json_array_get(tl, 0);
    ASSERT_EQ(json_integer_value(json_object_get(t0, "pid")), 4242);
    ASSERT_EQ(json_integer_value(json_object_get(t0, "exit_code")), 0);
    ASSERT_CONTAINS(json_string_value(json_object_get(t0, "log")), "-logs/2/task-0.log");
    res_free(&r);
    r = wait_state(&dm, 1, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    r = wait_state(&dm, 3, "DONE"); /* its task was lost with the old daemon: run again */
    ASSERT_STR(js(&r, "state"), "DONE");
    ASSERT_EQ(ji(&r, "runs"), 2);
    t0 = json_array_get(json_object_get(r.j, "task_list"), 0);
    ASSERT(json_integer_value(json_object_get(t0, "pid")) > 0);
    res_free(&r);
    r = req(&dm, NULL, "POST", "/v1/jobs", "{\"command\": \"true\"}", "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    ASSERT_EQ(ji(&r, "id"), 10);
    res_free(&r);
    ASSERT_EQ(stop(&dm), 0);
}

/* A bundled policy with VC queues (yarn-cs): positions per VC, its text, its quotas as
 * guarantees, the quotas= VCs listed first - as before the policy owned them. */
static void yarn_cs_views(void)
{
    daemon_t Y;
    const char *extra[] = {"--cluster",      "1x2", "--policy", "yarn-cs", "--set",
                           "quotas=a:1,b:1", NULL};
    if (start(&Y, "yarn", extra)) T_FAIL("daemon did not start: %s", slurp(Y.log));
    const char *hogs[] = {"{\"command\": [\"sleep\", \"30\"], \"vc\": \"a\"}",
                          "{\"command\": [\"sleep\", \"30\"], \"vc\": \"b\"}"};
    long long hog[2];
    for (int i = 0; i < 2; i++) {
        hog[i] = submit_id(&Y, hogs[i]);
        ASSERT(hog[i] > 0);
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", hog[i]);
        int running = 0;
        for (int k = 0; k < 200 && !running; k++) {
            res r = req(&Y, NULL, "GET", path, NULL, NULL, NULL);
            running = !strcmp(js(&r, "state"), "RUNNING");
            res_free(&r);
            if (!running) sleep_ms(50);
        }
        ASSERT(running);
    }
    long long a1 = submit_id(&Y, "{\"command\": \"true\", \"vc\": \"a\"}");
    long long b1 = submit_id(&Y, "{\"command\": \"true\", \"vc\": \"b\", \"priority\": 90}");
    long long a2 = submit_id(&Y, "{\"command\": \"true\", \"vc\": \"a\", \"priority\": 90}");
    ASSERT(a1 > 0 && b1 > a1 && a2 > b1);
    static const struct {
        int which, pos;
        const char *why;
    } want[] = {
        {0, 1,
         "Resources: needs 1 GPU(s) (1 x 1), 0 of 2 free now; position 1 in VC a (by "
         "submission)"},
        {1, 1,
         "Resources: needs 1 GPU(s) (1 x 1), 0 of 2 free now; position 1 in VC b (by "
         "submission)"},
        {2, 2,
         "Resources: needs 1 GPU(s) (1 x 1), 0 of 2 free now; position 2 in VC a (by "
         "submission)"}, /* a higher priority does not reorder a VC's queue */
    };
    long long ids[3] = {a1, b1, a2};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", ids[want[i].which]);
        res r = req(&Y, NULL, "GET", path, NULL, NULL, NULL);
        ASSERT_EQ(ji(&r, "position"), want[i].pos);
        ASSERT_STR(js(&r, "why_pending"), want[i].why);
        res_free(&r);
    }
    res r = req(&Y, NULL, "GET", "/v1/vcs", NULL, NULL, NULL);
    json_t *vcs = json_object_get(r.j, "vcs");
    ASSERT_EQ(json_array_size(vcs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_array_get(vcs, i);
        ASSERT_STR(json_string_value(json_object_get(v, "name")), i ? "b" : "a");
        ASSERT_EQ(json_integer_value(json_object_get(v, "guaranteed_gpus")), 1);
    }
    res_free(&r);
    for (int i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", hog[i]);
        r = req(&Y, NULL, "DELETE", path, NULL, NULL, NULL);
        ASSERT_EQ(r.status, 200);
        res_free(&r);
    }
    for (int k = 0; k < 200; k++) { /* the waiting jobs run and end once the hogs are gone */
        r = req(&Y, NULL, "GET", "/v1/jobs", NULL, NULL, NULL);
        long long active = ji(&r, "total");
        res_free(&r);
        if (active == 0) break;
        sleep_ms(50);
    }
    ASSERT_EQ(stop(&Y), 0);
}

/*
 * The daemon tells the engine what the executor cannot carry out: with a backend that cannot
 * suspend (the local one without GSD_XCAP_SUSPEND) the engine refuses a suspend up front
 * (GS_EUNSUPPORTED), so no job is ever cancelled for a mechanism the backend lacks.  The
 * policy ("suspender", defined here) starts job "a", then tries to suspend it to start job
 * "b"; it notes on "a" what the engine answered, and starts "b" once the GPU is free.
 */
typedef tpol suspender;
static int sp_schedule(void *st)
{
    suspender *s = st;
    const gs_job *a = NULL, *b = NULL;
    for (size_t k = 0; k < gs_engine_njobs(s->e); k++) {
        const gs_job *j = gs_engine_job(s->e, k);
        if (!j->name) continue;
        if (!strcmp(j->name, "a") && j->state == GS_JOB_PENDING)
            gs_engine_try_start(s->e, j, GS_LOCALITY_STRICT);
        if (!strcmp(j->name, "a") && j->state == GS_JOB_RUNNING) a = j;
        if (!strcmp(j->name, "b") && j->state == GS_JOB_PENDING) b = j;
    }
    if (a && b) {
        int rc = gs_engine_suspend(s->e, a, "test: room for b");
        if (rc == 0) {
            gs_engine_try_start(s->e, b, GS_LOCALITY_STRICT);
        } else if (!s->noted) {
            s->noted = 1;
            snprintf(s->note, sizeof s->note, "suspend refused: %s", gs_err_name(rc));
            gs_engine_note(s->e, a, s->note);
        }
    } else if (b) {
        gs_engine_try_start(s->e, b, GS_LOCALITY_STRICT);
    }
    return 0;
}
static const gs_policy_ops suspender_ops = {
    .name = "suspender",
    .summary = "test: suspends job a for job b",
    .create = tpol_create,
    .destroy = tpol_destroy,
    .schedule = sp_schedule,
};

static int start_exec_ops(daemon_t *dm, const char *name, const gsd_exec_ops *xops)
{
    return start_ops(dm, name, &suspender_ops, "1x1", xops);
}

static void executor_without_suspend(void)
{
    gsd_exec_ops nosuspend = gsd_exec_local;
    nosuspend.name = "nosuspend";
    nosuspend.caps = gsd_exec_local.caps & ~(unsigned)GSD_XCAP_SUSPEND;
    nosuspend.suspend = NULL;
    daemon_t X;
    if (start_exec_ops(&X, "nosuspend", &nosuspend))
        T_FAIL("daemon did not start: %s", slurp(X.log));
    /* a runs until the test releases it (a minute at most, should the test fail) */
    char rel[512], body[1200];
    snprintf(rel, sizeof rel, "%s", tmp("nosuspend.release"));
    snprintf(body, sizeof body,
             "{\"command\": [\"sh\", \"-c\", \"i=0; while [ ! -e '%s' ] && [ $i -lt 1200 ]; do "
             "sleep 0.05; i=$((i+1)); done\"], "
             "\"name\": \"a\"}",
             rel);
    res r = req(&X, NULL, "POST", "/v1/jobs", body, "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    long long a = ji(&r, "id");
    res_free(&r);
    r = wait_state(&X, a, "RUNNING");
    ASSERT_STR(js(&r, "state"), "RUNNING");
    res_free(&r);
    char apath[64], bpath[64];
    snprintf(apath, sizeof apath, "/v1/jobs/%lld", a);
    long long pid = -1;
    for (int i = 0; i < 200 && pid <= 0; i++) { /* the task row is written after the start */
        r = req(&X, NULL, "GET", apath, NULL, NULL, NULL);
        json_t *t0 = json_array_get(json_object_get(r.j, "task_list"), 0);
        if (json_is_integer(json_object_get(t0, "pid")))
            pid = (long long)json_integer_value(json_object_get(t0, "pid"));
        res_free(&r);
        if (pid <= 0) sleep_ms(50);
    }
    ASSERT(pid > 0);
    r = req(&X, NULL, "POST", "/v1/jobs", "{\"command\": \"true\", \"name\": \"b\"}",
            "application/json", NULL);
    ASSERT_EQ(r.status, 201);
    long long b = ji(&r, "id");
    res_free(&r);
    snprintf(bpath, sizeof bpath, "/v1/jobs/%lld", b);
    /* the policy's suspend is refused by the engine: a keeps running, b waits */
    int refused = 0;
    for (int i = 0; i < 400 && !refused; i++) {
        r = req(&X, NULL, "GET", apath, NULL, NULL, NULL);
        const char *why = js(&r, "reason");
        refused = why && strstr(why, "suspend refused: GS_EUNSUPPORTED") != NULL;
        if (refused) ASSERT_STR(js(&r, "state"), "RUNNING");
        res_free(&r);
        if (!refused) sleep_ms(50);
    }
    ASSERT(refused);
    r = req(&X, NULL, "GET", bpath, NULL, NULL, NULL);
    ASSERT_STR(js(&r, "state"), "PENDING");
    res_free(&r);
    /* its task is alive and not stopped */
    char statp[64], stat[512] = "";
    snprintf(statp, sizeof statp, "/proc/%lld/stat", pid);
    FILE *f = fopen(statp, "r");
    ASSERT(f);
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = 0;
    const char *paren = strrchr(stat, ')');
    ASSERT(paren && paren[1] == ' ' && paren[2] != 'T');
    /* released, a completes; then b runs */
    f = fopen(rel, "w");
    ASSERT(f);
    fclose(f);
    r = wait_state(&X, a, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    r = wait_state(&X, b, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    ASSERT(!strstr(slurp(X.log), "cannot suspend"));
    ASSERT(!strstr(slurp(X.log), "FATAL"));
    ASSERT_EQ(stop(&X), 0);
}

/*
 * An executor whose tasks die with the daemon (no GSD_XCAP_ADOPT, so no recover or sweep hook)
 * is never asked to find tasks again: a job RUNNING when the old daemon died is requeued and
 * runs again.  A table whose hooks contradict its capabilities is refused at start.
 */
static void executor_without_adopt(void)
{
    gsd_exec_ops noadopt = gsd_exec_local;
    noadopt.name = "noadopt";
    noadopt.caps = gsd_exec_local.caps & ~(unsigned)GSD_XCAP_ADOPT;
    noadopt.recover = NULL;
    noadopt.sweep = NULL;
    char db[512];
    sqlite3 *h = v1_db("noadopt", db, sizeof db);
    ASSERT(h != NULL);
    sql1(h, "INSERT INTO jobs(id, grp, task_index, user, vc, name, priority, ntasks, "
            "gpus_per_task, gang, state, reason, exit_code, submit_us, first_start_us, "
            "last_start_us, end_us, queued_us, executed_us, preemptions, runs, alloc, placement, "
            "stop, cancel_by, spec) VALUES "
            "(1, 1, 0, 'tester', 'default', 'a', 0, 1, 1, 1, 'RUNNING', NULL, NULL, "
            "1000000, 2000000, 2000000, NULL, 1000000, 0, 0, 1, '0', 'n0:0', NULL, NULL, "
            "'{\"command\": \"true\", \"name\": \"a\"}')");
    sql1(h, "INSERT INTO meta(key, value) VALUES ('next_id', 2)");
    sqlite3_close(h);

    daemon_t X;
    if (start_exec_ops(&X, "noadopt", &noadopt)) T_FAIL("daemon did not start: %s", slurp(X.log));
    res r = wait_state(&X, 1, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    ASSERT_EQ(ji(&r, "runs"), 2);
    res_free(&r);
    ASSERT_CONTAINS(slurp(X.log), "recovered 0 pending and 0 running job(s) (1 requeued");
    ASSERT_EQ(stop(&X), 0);

    /* recover without the capability: refused with the hook named */
    gsd_exec_ops bad = noadopt;
    bad.name = "bad";
    bad.recover = gsd_exec_local.recover;
    if (start_exec_ops(&X, "bad", &bad) == 0) {
        stop(&X);
        T_FAIL("a daemon started with an inconsistent executor table");
    }
    ASSERT_CONTAINS(slurp(X.log), "executor 'bad': hook recover (with GSD_XCAP_ADOPT) missing");
}

static void cleanup(void)
{
    if (D.pid > 0) stop(&D);
    char cmd[1200];
    /* task cgroups of runs no daemon forgot (tasks that ended while their daemon was stopped):
     * runs/JOB.RUN/cgroup names their base */
    snprintf(cmd, sizeof cmd,
             "for f in '%s'/*.d/runs/*/cgroup; do [ -f \"$f\" ] || continue; b=$(cat \"$f\"); "
             "for c in \"$b\"/job-*; do rmdir \"$c\"/* \"$c\"; done; rmdir \"$b\"; "
             "done 2>/dev/null; true",
             dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cgroup cleanup failed");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cleanup failed");
}

/* A job the policy rejects on arrival (quota: larger than its VC's quota): the dry run
 * says it is not feasible, for the reason the real submit is refused with. */
static void quota_dry_run_agrees(void)
{
    daemon_t Q;
    const char *extra[] = {"--cluster", "1x4", "--policy", "quota", "--set", "quotas=a:2", NULL};
    if (start(&Q, "quota", extra)) T_FAIL("daemon did not start: %s", slurp(Q.log));
    const char *big = "{\"command\": \"true\", \"gpus\": 4, \"vc\": \"a\"}";
    res d = req(&Q, NULL, "POST", "/v1/jobs?dry_run=1", big, "application/json", NULL);
    ASSERT_EQ(d.status, 200);
    ASSERT(json_is_false(json_object_get(d.j, "feasible")));
    ASSERT(json_is_false(json_object_get(d.j, "fits_now")));
    ASSERT_STR(js(&d, "reason"), "job requests 4 GPUs, exceeds the quota of 2 GPUs of VC 'a'");
    res r = req(&Q, NULL, "POST", "/v1/jobs", big, "application/json", NULL);
    EXPECT_PROBLEM(r, 422, "GS_ENEVER");
    ASSERT_CONTAINS(r.body, js(&d, "reason"));
    res_free(&r);
    res_free(&d);
    d = req(&Q, NULL, "POST", "/v1/jobs?dry_run=1",
            "{\"command\": \"true\", \"gpus\": 2, \"vc\": \"a\"}", "application/json", NULL);
    ASSERT_EQ(d.status, 200);
    ASSERT(json_is_true(json_object_get(d.j, "feasible")));
    ASSERT(json_is_true(json_object_get(d.j, "fits_now")));
    res_free(&d);
    ASSERT_EQ(stop(&Q), 0);
}

static const test_case tests[] = {
    {"starts_and_health", starts_and_health},
    {"submit_and_validation_errors", submit_and_validation_errors},
    {"routing_errors", routing_errors},
    {"idempotency_and_dry_run", idempotency_and_dry_run},
    {"idempotency_race", idempotency_race},
    {"list_pages_cancel_and_describe", list_pages_cancel_and_describe},
    {"metrics_names", metrics_names},
    {"read_your_writes", read_your_writes},
    {"list_fields_compact_positions", list_fields_compact_positions},
    {"vc_names_are_bounded", vc_names_are_bounded},
    {"graceful_shutdown", graceful_shutdown},
    {"idempotent_replays_across_restarts", idempotent_replays_across_restarts},
    {"tokens_and_visibility", tokens_and_visibility},
    {"nodes_bad_and_good", nodes_bad_and_good},
    {"machine_in_two_chains", machine_in_two_chains},
    {"startup_refusals", startup_refusals},
    {"nvml_discovery", nvml_discovery},
    {"unknown_policy_views", unknown_policy_views},
    {"version1_database_upgraded", version1_database_upgraded},
    {"yarn_cs_views", yarn_cs_views},
    {"quota_dry_run_agrees", quota_dry_run_agrees},
    {"executor_without_suspend", executor_without_suspend},
    {"executor_without_adopt", executor_without_adopt},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
