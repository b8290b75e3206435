/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_elastic.c - the live elastic controller (issue 13, docs/elastic.md) in a real
 * `gsched serve` (gsd_serve in a child process, local executor, shell workers) driven by a
 * deterministic test policy defined here ("seesaw": starts what it can and rescales every
 * running elastic job between its two smallest sizes, as a POLICY rescale, so the engine's
 * budgets decide):
 *   - policy rescales live: the rescale gap and max_rescales hold, each drain carries the
 *     policy's reason, every generation gets its environment (WORLD_SIZE, RANK,
 *     GSCHED_GENERATION, GSCHED_NUM_GPUS, GSCHED_CONTROL, GSCHED_HINTS, a checkpoint
 *     directory kept across generations, a new MASTER_PORT);
 *   - hints: good lines counted, bad ones (not JSON, no integer step, negative, too long)
 *     ignored and counted, a partial line read once complete, ckpt_step kept, LAUNCHING until
 *     the first hint;
 *   - POST /v1/jobs/ID/resize: 400 (body, size), 404, 409 (not elastic, not running, same size,
 *     no free GPUs), 202;
 *   - kill -9 of the daemon while a job is DRAINING: DRAINING again after the restart on the
 *     same reservation (no other job gets those GPUs), and relaunched on them once the old
 *     generation exits;
 *   - --set pollux_traces: the goodput model in the live engine (an unknown app refused,
 *     hints refine the model).
 * Every wait is bounded.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon.h"
#include "exec.h"
#include "harness.h"

#ifndef GSCHED_BIN
#define GSCHED_BIN "gsched"
#endif

static char dir[256];

static const char *tmp(const char *name)
{
    static char p[4][512];
    static int k;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gsched-elastic-test-XXXXXX");
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
    char db[512];
    char logs[520];
} daemon_t;

/* ---- the test policy ------------------------------------------------------------------------ */

typedef struct seesaw {
    gs_engine *e;
} seesaw;

/* Where the workers of the policy test record their environments (set before the daemon
 * forks): seesaw drains generation 1 at once (a drain right after a launch), later ones only
 * once each of their tasks has recorded its environment (a slow machine is no failure). */
static char ss_envdir[512];

static int ss_ready(const gs_job *j)
{
    if (j->generation <= 1 || !ss_envdir[0]) return 1;
    for (int r = 0; r < j->ntasks; r++) {
        char p[600];
        snprintf(p, sizeof p, "%s/g%u.r%d", ss_envdir, j->generation, r);
        if (access(p, F_OK) != 0) return 0;
    }
    return 1;
}

static int ss_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    seesaw *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->e = e;
    *st = s;
    return 0;
}

static void ss_destroy(void *st)
{
    free(st);
}

/* Start pending jobs; rescale running elastic jobs named "seesaw*" between their two smallest
 * sizes (the engine refuses what the budgets do not allow: GS_EQUOTA, nothing changes). */
static int ss_schedule(void *st)
{
    seesaw *s = st;
    for (size_t k = 0; k < gs_engine_njobs(s->e); k++) {
        const gs_job *j = gs_engine_job(s->e, k);
        if (j->state == GS_JOB_PENDING && j->arrived) gs_engine_try_start(s->e, j, GS_LOCALITY_ANY);
        if (j->state != GS_JOB_RUNNING || j->max_gpus <= 0 || !j->name ||
            strncmp(j->name, "seesaw", 6))
            continue;
        if (!ss_ready(j)) {
            int rc = gs_engine_set_timer(s->e, gs_engine_now(s->e) + 100 * GS_MSEC, 0);
            if (rc) return rc;
            continue;
        }
        int lo = j->gpus_per_task, hi = 2 * lo;
        int n = j->gpus == lo ? hi : lo;
        int gpus[64];
        for (int i = 0; i < n && i < j->nalloc; i++) gpus[i] = j->alloc[i];
        if (n > j->nalloc) {
            gs_place_req rq = {.ntasks = (n - j->nalloc) / j->gpus_per_task,
                               .gpus_per_task = j->gpus_per_task,
                               .gpu_type = -1,
                               .mode = GS_PLACE_COUNT};
            if (gs_place_find(gs_engine_cluster(s->e), &rq, gpus + j->nalloc)) continue;
        }
        char why[96];
        snprintf(why, sizeof why, "seesaw: %d -> %d GPUs", j->gpus, n);
        int rc = gs_engine_rescale(s->e, j, gpus, n, GS_RESCALE_POLICY, why);
        if (rc == GS_EQUOTA) { /* inside the gap: look again when it is over (never: max) */
            gs_time at = gs_engine_rescale_allowed_at(s->e, j);
            if (at != GS_TIME_NONE && (rc = gs_engine_set_timer(s->e, at, 0)) != 0) return rc;
        } else if (rc && rc != GS_ENOFIT) {
            return rc;
        }
    }
    return 0;
}

static int ss_on_timer(void *st, uint64_t tag)
{
    seesaw *s = st;
    (void)tag;
    gs_engine_request_pass(s->e);
    return 0;
}

static const gs_policy_ops seesaw_ops = {
    .name = "seesaw",
    .summary = "test: rescales elastic jobs between two sizes",
    .create = ss_create,
    .destroy = ss_destroy,
    .schedule = ss_schedule,
    .on_timer = ss_on_timer,
};

/* ---- the daemon ------------------------------------------------------------------------------ */

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

/* --set parameters of the next daemon started (NULL: none) */
static gs_params *start_params;

/* Serve (again, on the same database when dm->db is set) with the seesaw policy. */
static int start(daemon_t *dm, const char *name, const char *cluster)
{
    char pf[600];
    if (!dm->db[0]) {
        snprintf(dm->db, sizeof dm->db, "%s.db", tmp(name));
        snprintf(dm->logs, sizeof dm->logs, "%s-logs", dm->db);
        snprintf(dm->log, sizeof dm->log, "%s.log", dm->db);
    }
    snprintf(pf, sizeof pf, "%s.port", dm->db);
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
        o.db = dm->db;
        o.listen = "127.0.0.1:0";
        o.insecure_tcp = 1;
        o.port_file = pf;
        o.log_dir = dm->logs;
        o.self_exe = GSCHED_BIN;
        o.grace = GS_SEC;
        o.policy_ops = &seesaw_ops;
        o.params = start_params;
        o.single_user = 1;
        _exit(gsd_serve(&o));
    }
    return wait_serving(dm, pf);
}

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

static void kill9(daemon_t *dm)
{
    kill(dm->pid, SIGKILL);
    int st;
    waitpid(dm->pid, &st, 0);
    dm->pid = -1;
}

static char *slurp(const char *path)
{
    static char buf[65536];
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

static void put_file(const char *path, const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (!f) T_FAIL("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

typedef struct res {
    long status;
    json_t *j;
    char *body;
} res;

static res req(const daemon_t *dm, const char *method, const char *path, const char *body)
{
    gsd_client c = {dm->url, NULL, "tester", 30};
    gsd_resp r;
    res out = {0, NULL, NULL};
    if (gsd_request(&c, method, path, body, body ? strlen(body) : 0,
                    body ? "application/json" : NULL, NULL, &r))
        return out;
    out.status = r.status;
    out.body = r.body;
    r.body = NULL;
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

/* elastic.KEY of job r (integer), -999 when absent */
static long long el(const res *r, const char *key)
{
    json_t *e = r->j ? json_object_get(r->j, "elastic") : NULL;
    json_t *v = e ? json_object_get(e, key) : NULL;
    return json_is_integer(v) ? (long long)json_integer_value(v) : -999;
}

static const char *els(const res *r, const char *key)
{
    json_t *e = r->j ? json_object_get(r->j, "elastic") : NULL;
    json_t *v = e ? json_object_get(e, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : "";
}

static long long submit(const daemon_t *dm, const char *body)
{
    res r = req(dm, "POST", "/v1/jobs", body);
    long long id = r.status == 201 ? ji(&r, "id") : -1;
    if (id < 0) fprintf(stderr, "  submit: %ld %s\n", r.status, r.body ? r.body : "");
    res_free(&r);
    return id; /* < 0: the callers' waits fail on it */
}

static res job(const daemon_t *dm, long long id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    return req(dm, "GET", path, NULL);
}

/* Poll job id until pred holds (bounded: 20 s); returns the last answer. */
static res wait_for(const daemon_t *dm, long long id, int (*pred)(const res *, const void *),
                    const void *arg)
{
    res r = {0, NULL, NULL};
    for (int i = 0; i < 400; i++) {
        res_free(&r);
        r = job(dm, id);
        if (pred(&r, arg)) break;
        sleep_ms(50);
    }
    return r;
}

static int state_is(const res *r, const void *want)
{
    return !strcmp(js(r, "state"), (const char *)want);
}

static int gen_running(const res *r, const void *gen)
{
    return el(r, "generation") == *(const int *)gen && !strcmp(els(r, "phase"), "RUNNING");
}

static res resize(const daemon_t *dm, long long id, const char *body)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/resize", id);
    return req(dm, "POST", path, body);
}

/* A worker: records its environment in ENVDIR/gG.rR, appends a hint per 100 ms (rank 0),
 * exits 143 on SIGTERM once GO exists (saving its step), 0 once DONE exists. */
static char *worker_json(const char *name, const char *envdir, const char *go, const char *donef,
                         const char *extra)
{
    static char b[4096];
    snprintf(b, sizeof b,
             "{\"name\": \"%s\", \"command\": [\"sh\", \"-c\", "
             "\"env > %s/g$GSCHED_GENERATION.r$RANK; t=; trap 't=1' TERM; "
             "s=$(cat $GSCHED_CHECKPOINT_DIR/step 2>/dev/null || echo 0); "
             "while [ -z \\\"$t\\\" ] && [ ! -e %s ]; do s=$((s+1)); "
             "[ $RANK = 0 ] && echo {\\\\\\\"step\\\\\\\":$s} >> $GSCHED_HINTS; sleep 0.1; done; "
             "[ -e %s ] && exit 0; while [ ! -e %s ]; do sleep 0.05; done; "
             "[ $RANK = 0 ] && echo $s > $GSCHED_CHECKPOINT_DIR/step; exit 143\"]%s}",
             name, envdir, donef, donef, go, extra ? extra : "");
    return b;
}

static const char *env_of(const char *envdir, int gen, int rank, const char *key)
{
    static char val[1024];
    char path[600];
    snprintf(path, sizeof path, "%s/g%d.r%d", envdir, gen, rank);
    const char *t = slurp(path);
    char k[128];
    snprintf(k, sizeof k, "\n%s=", key);
    const char *p = strstr(t, k);
    if (!p && !strncmp(t, k + 1, strlen(k + 1))) p = t - 1;
    if (!p) return NULL;
    p += strlen(k);
    size_t n = strcspn(p, "\n");
    snprintf(val, sizeof val, "%.*s", (int)n, p);
    return val;
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* The policy rescales by itself; the gap and max_rescales bound it; each generation gets its
 * environment. */
static void policy_rescales_within_budgets(void)
{
    daemon_t D = {0};
    char envdir[512], go[512], donef[512];
    snprintf(envdir, sizeof envdir, "%s", tmp("penv"));
    mkdir(envdir, 0755);
    snprintf(ss_envdir, sizeof ss_envdir, "%s", envdir);
    if (start(&D, "policy", "1x4")) T_FAIL("daemon did not start: %s", slurp(D.log));
    snprintf(go, sizeof go, "%s", tmp("pgo"));
    snprintf(donef, sizeof donef, "%s", tmp("pdone"));
    put_file(go, "", "w");
    long long id = submit(&D, worker_json("seesaw", envdir, go, donef,
                                          ", \"max_gpus\": 2, \"min_rescale_gap\": \"1s\", "
                                          "\"max_rescales\": 2"));
    int three = 3;
    res r = wait_for(&D, id, gen_running, &three);
    ASSERT_EQ(el(&r, "generation"), 3);
    ASSERT_EQ(el(&r, "rescales"), 2);
    res_free(&r);
    /* max_rescales used up: it stays at generation 3 */
    sleep_ms(2500);
    r = job(&D, id);
    ASSERT_EQ(el(&r, "generation"), 3);
    ASSERT_STR(js(&r, "state"), "RUNNING");
    ASSERT_EQ(ji(&r, "gpus"), 1);
    /* the drains carry the policy's reason and respect the 1 s gap */
    json_t *evs = json_object_get(r.j, "events"), *ev;
    size_t i;
    long long t_drain[4];
    int nd = 0;
    json_array_foreach(evs, i, ev)
    {
        if (strcmp(json_string_value(json_object_get(ev, "type")), "draining")) continue;
        const char *why = json_string_value(json_object_get(ev, "reason"));
        if (!strstr(why, "policy rescale") || !strstr(why, "seesaw: ")) T_FAIL("drain: %s", why);
        if (nd < 4) t_drain[nd++] = json_integer_value(json_object_get(ev, "time_us"));
    }
    ASSERT_EQ(nd, 2);
    ASSERT(t_drain[1] - t_drain[0] >= 1000000);
    res_free(&r);
    /* each generation's environment (generation 1 was drained right after its launch, maybe
     * before its shell got to write anything: that drain still ended at once) */
    ASSERT_STR(env_of(envdir, 3, 0, "WORLD_SIZE"), "1");
    ASSERT_STR(env_of(envdir, 2, 0, "WORLD_SIZE"), "2");
    ASSERT_STR(env_of(envdir, 2, 1, "RANK"), "1");
    ASSERT_STR(env_of(envdir, 2, 1, "GSCHED_GENERATION"), "2");
    ASSERT_STR(env_of(envdir, 2, 1, "GSCHED_NUM_GPUS"), "2");
    ASSERT_STR(env_of(envdir, 3, 0, "GSCHED_NUM_GPUS"), "1");
    char want[700];
    snprintf(want, sizeof want, "%s/%lld/checkpoint", D.logs, id);
    ASSERT_STR(env_of(envdir, 2, 1, "GSCHED_CHECKPOINT_DIR"), want);
    ASSERT_STR(env_of(envdir, 3, 0, "GSCHED_CHECKPOINT_DIR"), want);
    struct stat st;
    ASSERT(stat(want, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(want, sizeof want, "%s/%lld/control.json", D.logs, id);
    ASSERT_STR(env_of(envdir, 2, 0, "GSCHED_CONTROL"), want);
    /* the last drain's control file: generation 2 to 1 GPU */
    ASSERT_CONTAINS(slurp(want), "{\"generation\":2,\"target_gpus\":1,\"deadline\":");
    snprintf(want, sizeof want, "%s/%lld/hints.jsonl", D.logs, id);
    ASSERT_STR(env_of(envdir, 2, 0, "GSCHED_HINTS"), want);
    char p1[32], p2[32];
    snprintf(p1, sizeof p1, "%s", env_of(envdir, 2, 0, "MASTER_PORT"));
    snprintf(p2, sizeof p2, "%s", env_of(envdir, 3, 0, "MASTER_PORT"));
    ASSERT(strcmp(p1, p2) != 0);
    /* the steps go on across generations: generation 3 resumed from a saved step */
    snprintf(want, sizeof want, "%s/%lld/checkpoint/step", D.logs, id);
    ASSERT(atoi(slurp(want)) > 0);
    put_file(donef, "", "w");
    r = wait_for(&D, id, state_is, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

/* Hint lines: good ones counted, bad ones ignored and counted, a partial line waits. */
static void hints_good_and_bad_lines(void)
{
    daemon_t D = {0};
    if (start(&D, "hints", "1x2")) T_FAIL("daemon did not start: %s", slurp(D.log));
    char rel[512];
    snprintf(rel, sizeof rel, "%s", tmp("hrel"));
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\": \"h\", \"max_gpus\": 2, \"command\": [\"sh\", \"-c\", "
             "\"while [ ! -e %s ]; do sleep 0.05; done\"]}",
             rel);
    long long id = submit(&D, body);
    res r = wait_for(&D, id, state_is, "RUNNING");
    ASSERT_STR(js(&r, "state"), "RUNNING");
    ASSERT_STR(els(&r, "phase"), "LAUNCHING"); /* no hint yet */
    res_free(&r);
    char hints[700];
    snprintf(hints, sizeof hints, "%s/%lld", D.logs, id);
    struct stat st;
    for (int i = 0; i < 200 && stat(hints, &st) != 0; i++) sleep_ms(50); /* launched */
    snprintf(hints, sizeof hints, "%s/%lld/hints.jsonl", D.logs, id);
    /* a line longer than one read (64 KiB), then assorted garbage, then good lines */
    size_t big = 70 * 1024;
    char *junk = malloc(big + 2);
    memset(junk, 'x', big);
    junk[big] = '\n';
    junk[big + 1] = '\0';
    put_file(hints, junk, "w");
    free(junk);
    put_file(hints,
             "not json\n[1,2]\n{\"samples\": 3}\n{\"step\": \"7\"}\n{\"step\": -1}\n"
             "{\"step\": 1.5}\n{\"step\": 2, \"step_time\": \"fast\"}\n\n"
             "{\"step\": 10, \"samples\": 320, \"step_time\": 0.5, \"sync_time\": 0.1, "
             "\"local_bsz\": 32, \"accum\": 1, \"grad_sqr\": 0.3, \"grad_var\": 1.2}\n"
             "{\"step\": 20, \"ckpt_step\": 18}\n{\"step\": 21",
             "a");
    res_free(&r);
    for (int i = 0; i < 200; i++) {
        res_free(&r);
        r = job(&D, id);
        if (el(&r, "hints") == 2 && el(&r, "hints_bad") == 8) break;
        sleep_ms(50);
    }
    if (el(&r, "hints") != 2 || el(&r, "hints_bad") != 8) T_FAIL("hints: %s", r.body);
    ASSERT_EQ(el(&r, "ckpt_step"), 18);
    ASSERT_STR(els(&r, "phase"), "RUNNING"); /* the first good hint ended LAUNCHING */
    res_free(&r);
    /* the partial line is read once its newline arrives */
    put_file(hints, ", \"ckpt_step\": 21}\n", "a");
    for (int i = 0; i < 200; i++) {
        res_free(&r);
        r = job(&D, id);
        if (el(&r, "hints") == 3) break;
        sleep_ms(50);
    }
    ASSERT_EQ(el(&r, "hints"), 3);
    ASSERT_EQ(el(&r, "ckpt_step"), 21);
    res_free(&r);
    /* a hints file that is a symbolic link is not read */
    unlink(hints);
    if (symlink("/etc/hostname", hints) != 0) T_FAIL("symlink");
    sleep_ms(600);
    r = job(&D, id);
    ASSERT_EQ(el(&r, "hints"), 3);
    res_free(&r);
    put_file(rel, "", "w");
    r = wait_for(&D, id, state_is, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

/* POST /v1/jobs/ID/resize: what it refuses and how. */
static void resize_api(void)
{
    daemon_t D = {0};
    if (start(&D, "api", "1x2")) T_FAIL("daemon did not start: %s", slurp(D.log));
    char envdir[512], go[512], donef[512];
    snprintf(envdir, sizeof envdir, "%s", tmp("aenv"));
    mkdir(envdir, 0755);
    snprintf(go, sizeof go, "%s", tmp("ago"));
    snprintf(donef, sizeof donef, "%s", tmp("adone"));
    put_file(go, "", "w");
    long long id = submit(&D, worker_json("el", envdir, go, donef, ", \"max_gpus\": 2"));
    long long rigid = submit(&D, "{\"name\": \"rigid\", \"command\": \"sleep 60\"}");
    res r = wait_for(&D, rigid, state_is, "RUNNING");
    res_free(&r);
    r = wait_for(&D, id, state_is, "RUNNING");
    res_free(&r);
    static const char *const bad_bodies[] = {
        "", "[]", "{\"gpus\": \"2\"}", "{\"gpus\": -1}", "{\"gpus\": 2, \"x\": 1}", "{\"gpu\": 2}"};
    for (size_t i = 0; i < sizeof bad_bodies / sizeof *bad_bodies; i++) {
        r = resize(&D, id, bad_bodies[i]);
        if (r.status != 400) T_FAIL("body '%s': %ld %s", bad_bodies[i], r.status, r.body);
        res_free(&r);
    }
    r = resize(&D, 9999, "{\"gpus\": 2}");
    ASSERT_EQ(r.status, 404);
    res_free(&r);
    r = resize(&D, rigid, "{\"gpus\": 2}");
    ASSERT_EQ(r.status, 409);
    ASSERT_CONTAINS(r.body, "not elastic");
    res_free(&r);
    r = resize(&D, id, "{\"gpus\": 3}");
    ASSERT_EQ(r.status, 400);
    ASSERT_STR(js(&r, "field"), "gpus");
    res_free(&r);
    r = resize(&D, id, "{\"gpus\": 0}");
    ASSERT_EQ(r.status, 400);
    res_free(&r);
    r = resize(&D, id, "{\"gpus\": 1}");
    ASSERT_EQ(r.status, 409);
    ASSERT_CONTAINS(r.body, "already runs on 1 GPUs");
    res_free(&r);
    /* the rigid job holds the other GPU: no room to grow */
    r = resize(&D, id, "{\"gpus\": 2}");
    ASSERT_EQ(r.status, 409);
    ASSERT_STR(js(&r, "code"), "GS_ENOFIT");
    res_free(&r);
    /* a pending elastic job cannot be resized */
    long long pend = submit(&D, "{\"name\": \"p\", \"max_gpus\": 2, \"hold\": true, "
                                "\"command\": \"true\"}");
    r = resize(&D, pend, "{\"gpus\": 2}");
    ASSERT_EQ(r.status, 409);
    ASSERT_CONTAINS(r.body, "only a running job");
    res_free(&r);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", rigid);
    r = req(&D, "DELETE", path, NULL);
    res_free(&r);
    r = wait_for(&D, rigid, state_is, "CANCELLED");
    res_free(&r);
    unlink(go); /* the worker takes its time to checkpoint */
    r = resize(&D, id, "{\"gpus\": 2}");
    ASSERT_EQ(r.status, 202);
    ASSERT_EQ(ji(&r, "from"), 1);
    ASSERT_EQ(ji(&r, "to"), 2);
    ASSERT_STR(js(&r, "state"), "DRAINING");
    res_free(&r);
    /* while it drains: a second resize is refused */
    r = resize(&D, id, "{\"gpus\": 1}");
    ASSERT_EQ(r.status, 409);
    ASSERT_CONTAINS(r.body, "DRAINING");
    res_free(&r);
    put_file(go, "", "w");
    int two = 2;
    r = wait_for(&D, id, gen_running, &two);
    ASSERT_EQ(el(&r, "generation"), 2);
    res_free(&r);
    put_file(donef, "", "w");
    r = wait_for(&D, id, state_is, "DONE");
    res_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld", pend);
    r = req(&D, "DELETE", path, NULL);
    res_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

/* kill -9 while DRAINING: the same reservation after the restart, nobody else gets it. */
static void draining_survives_kill9(void)
{
    daemon_t D = {0};
    if (start(&D, "crash", "1x4")) T_FAIL("daemon did not start: %s", slurp(D.log));
    char envdir[512], go[512], donef[512];
    snprintf(envdir, sizeof envdir, "%s", tmp("cenv"));
    mkdir(envdir, 0755);
    snprintf(go, sizeof go, "%s", tmp("cgo"));
    snprintf(donef, sizeof donef, "%s", tmp("cdone"));
    long long id = submit(
        &D, worker_json("el", envdir, go, donef, ", \"max_gpus\": 4, \"drain_timeout\": \"60s\""));
    int one = 1;
    res r = wait_for(&D, id, gen_running, &one);
    res_free(&r);
    r = resize(&D, id, "{\"gpus\": 3}");
    ASSERT_EQ(r.status, 202);
    res_free(&r);
    r = wait_for(&D, id, state_is, "DRAINING");
    ASSERT_EQ(el(&r, "target_gpus"), 3);
    res_free(&r);
    sleep_ms(300); /* the SIGTERM was sent: the worker waits for GO */
    kill9(&D);
    if (start(&D, "crash", "1x4")) T_FAIL("daemon did not restart: %s", slurp(D.log));
    r = wait_for(&D, id, state_is, "DRAINING");
    ASSERT_STR(js(&r, "state"), "DRAINING");
    ASSERT_EQ(el(&r, "target_gpus"), 3);
    ASSERT_EQ(el(&r, "generation"), 1);
    ASSERT_EQ(el(&r, "rescales"), 1);
    res_free(&r);
    /* every GPU: 3 are the draining job's (1 held, 2 reserved), 1 free */
    r = req(&D, "GET", "/v1/nodes?gpus=1", NULL);
    json_t *gl = json_object_get(json_array_get(json_object_get(r.j, "nodes"), 0), "gpu_list");
    int mine = 0, freeg = 0;
    size_t i;
    json_t *gv;
    json_array_foreach(gl, i, gv)
    {
        json_t *o = json_object_get(gv, "job");
        if (json_is_integer(o) && json_integer_value(o) == id) mine++;
        if (json_is_null(o)) freeg++;
    }
    ASSERT_EQ(mine, 3);
    ASSERT_EQ(freeg, 1);
    res_free(&r);
    /* a 2-GPU job cannot start (only 1 GPU is free); a 1-GPU one takes the free GPU only */
    long long two = submit(&D, "{\"name\": \"two\", \"tasks\": 2, \"command\": \"sleep 60\"}");
    long long other = submit(&D, "{\"name\": \"other\", \"command\": \"sleep 60\"}");
    r = wait_for(&D, other, state_is, "RUNNING");
    ASSERT_STR(js(&r, "state"), "RUNNING");
    const char *ow = js(&r, "placement");
    char other_where[64];
    snprintf(other_where, sizeof other_where, "%s", ow);
    res_free(&r);
    r = job(&D, two);
    ASSERT_STR(js(&r, "state"), "PENDING");
    res_free(&r);
    /* the old generation checkpoints: relaunched on its 3 GPUs */
    put_file(go, "", "w");
    int g2 = 2;
    r = wait_for(&D, id, gen_running, &g2);
    ASSERT_EQ(el(&r, "generation"), 2);
    ASSERT_EQ(ji(&r, "gpus"), 3);
    res_free(&r);
    char cuda[3][32];
    for (int k = 0; k < 3; k++) {
        const char *c = env_of(envdir, 2, k, "CUDA_VISIBLE_DEVICES");
        ASSERT(c != NULL);
        snprintf(cuda[k], sizeof cuda[k], "n0:%s", c);
        ASSERT(strcmp(cuda[k], other_where) != 0); /* never the other job's GPU */
    }
    ASSERT(strcmp(cuda[0], cuda[1]) && strcmp(cuda[1], cuda[2]) && strcmp(cuda[0], cuda[2]));
    ASSERT_CONTAINS(slurp(D.log), "recovered");
    put_file(donef, "", "w");
    r = wait_for(&D, id, state_is, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", other);
    r = req(&D, "DELETE", path, NULL);
    res_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld", two);
    r = req(&D, "DELETE", path, NULL);
    res_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

/* --set pollux_traces=DIR: the goodput model in the live engine; an unknown application is
 * refused at submit; a job's hints refine the model (it has profiled the job's size). */
static void goodput_model_live(void)
{
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "pollux_traces", GSCHED_SOURCE_DIR "/data/pollux/traces");
    start_params = &p;
    daemon_t D = {0};
    int st = start(&D, "model", "1x2");
    start_params = NULL;
    if (st) T_FAIL("daemon did not start: %s", slurp(D.log));
    ASSERT_CONTAINS(slurp(D.log), "goodput model: 6 application(s)");
    res r =
        req(&D, "POST", "/v1/jobs", "{\"command\": \"true\", \"max_gpus\": 2, \"app\": \"nope\"}");
    ASSERT_EQ(r.status, 400);
    ASSERT_STR(js(&r, "field"), "app");
    res_free(&r);
    char rel[512], body[1024];
    snprintf(rel, sizeof rel, "%s", tmp("mrel"));
    snprintf(body, sizeof body,
             "{\"name\": \"m\", \"max_gpus\": 2, \"app\": \"cifar10\", \"batch_size\": 128, "
             "\"command\": [\"sh\", \"-c\", \"while [ ! -e %s ]; do sleep 0.05; done\"]}",
             rel);
    long long id = submit(&D, body);
    r = wait_for(&D, id, state_is, "RUNNING");
    ASSERT_STR(js(&r, "state"), "RUNNING");
    ASSERT_EQ(el(&r, "model_hints"), 0);
    res_free(&r);
    char dirp[700], hints[720];
    snprintf(dirp, sizeof dirp, "%s/%lld", D.logs, id);
    struct stat sb;
    for (int i = 0; i < 200 && stat(dirp, &sb) != 0; i++) sleep_ms(50);
    snprintf(hints, sizeof hints, "%s/hints.jsonl", dirp);
    /* a hint without a step time is kept but the model does not take it; a full one it does */
    put_file(hints,
             "{\"step\": 4}\n{\"step\": 5, \"samples\": 640, \"step_time\": 0.08, "
             "\"sync_time\": 0.0, \"local_bsz\": 128, \"accum\": 0, \"grad_sqr\": 0.5, "
             "\"grad_var\": 2.0}\n",
             "a");
    for (int i = 0; i < 200; i++) {
        res_free(&r);
        r = job(&D, id);
        if (el(&r, "hints") == 2) break;
        sleep_ms(50);
    }
    ASSERT_EQ(el(&r, "hints"), 2);
    ASSERT_EQ(el(&r, "model_hints"), 1);
    res_free(&r);
    put_file(rel, "", "w");
    r = wait_for(&D, id, state_is, "DONE");
    ASSERT_STR(js(&r, "state"), "DONE");
    res_free(&r);
    ASSERT_EQ(stop(&D), 0);
    gs_params_release(&p);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cleanup failed");
}

static const test_case tests[] = {
    {"resize_api", resize_api},
    {"hints_good_and_bad_lines", hints_good_and_bad_lines},
    {"policy_rescales_within_budgets", policy_rescales_within_budgets},
    {"draining_survives_kill9", draining_survives_kill9},
    {"goodput_model_live", goodput_model_live},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
