/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_cluster.c - the daemon with a cluster backend, without a cluster
 * manager: a fake backend (its own ops table with GSD_XCAP_CLUSTER, EXTERNAL,
 * ADOPT and MULTINODE, injected through gsd_opts.executor_ops) runs inside a
 * real gsd_serve in a child process.  The test steers it through a control
 * file (node states, outside use, jobs to adopt, jobs gone, runs that end) and
 * reads what the daemon asked of it from a record file (options, launches,
 * stops, binds, retires).  Checked: the cluster model comes from the backend
 * and a given --cluster is checked by it; --executor-opt reaches it; conf.wake
 * is set; a node DOWN stops and requeues the job there, UP returns the GPUs;
 * the manager's drain composes with the daemon's own; outside GPUs are not
 * placed on; an adopted job is created, committed, bound, scheduled and
 * launched, a refused one retired; GONE cancels; final jobs are retired; a
 * restart binds every live job and cancels one whose external job is gone;
 * clients cannot set spec.external; a machine in two HiveD chains (two node
 * cells of one name) is down, up and used outside as a whole.  Every wait is bounded.
 */
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
        snprintf(dir, sizeof dir, "/tmp/gsched-cluster-test-XXXXXX");
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

/* ---- the fake backend (runs in the daemon's process) ------------------------------------------
 */

/* Where the current daemon's fake reads its control file and writes its record (set before
 * the fork). */
static char ctl_path[512], rec_path[512], checkfail_path[512], vanish_path[512];

typedef struct frun {
    int64_t id;
    int run, ntasks;
    int started; /* TASK_STARTED reported */
    int ending;  /* 1: exit with code at the next poll; 2: stopped (143) */
    int code;
    int done; /* RUN_DONE reported */
} frun;

typedef struct fake {
    frun runs[64];
    int nruns;
    void (*wake)(void *);
    void *wake_ud;
    pthread_t th;
    int th_started;
    volatile int th_stop;
} fake;

static void rec(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void rec(const char *fmt, ...)
{
    FILE *f = fopen(rec_path, "a");
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

/* A thread of the backend's own: wakes the daemon when a control file appears (conf.wake is
 * callable from any thread). */
static void *fake_thread(void *ud)
{
    fake *f = ud;
    while (!f->th_stop) {
        if (access(ctl_path, F_OK) == 0) f->wake(f->wake_ud);
        sleep_ms(10);
    }
    return NULL;
}

static int f_create(const gsd_exec_conf *conf, void **out, gs_diag *d)
{
    for (size_t i = 0; i < conf->nopts; i++) {
        if (!strncmp(conf->opts[i], "bad=", 4))
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "unknown key 'bad' (known: partitions, poll_ms)");
    }
    fake *f = calloc(1, sizeof *f);
    if (!f) abort();
    rec("create");
    for (size_t i = 0; i < conf->nopts; i++) rec("opt %s", conf->opts[i]);
    if (conf->wake) {
        rec("wake");
        f->wake = conf->wake;
        f->wake_ud = conf->wake_ud;
        f->wake(f->wake_ud); /* callable at once */
        f->th_started = pthread_create(&f->th, NULL, fake_thread, f) == 0;
    }
    *out = f;
    return 0;
}

static void f_destroy(void *b)
{
    fake *f = b;
    if (!f) return;
    if (f->th_started) {
        f->th_stop = 1;
        pthread_join(f->th, NULL);
    }
    free(f);
}

static frun *f_find(fake *f, int64_t id)
{
    for (int i = 0; i < f->nruns; i++)
        if (f->runs[i].id == id) return &f->runs[i];
    return NULL;
}

static int f_launch(void *b, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud)
{
    (void)now, (void)fn, (void)ud;
    fake *f = b;
    if (f_find(f, l->job_id)) return GS_EEXIST;
    char nodes[256] = "";
    size_t k = 0;
    for (int t = 0; t < l->ntasks && k < sizeof nodes; t++)
        k += (size_t)snprintf(nodes + k, sizeof nodes - k, "%s%s", t ? "," : "", l->task_node[t]);
    rec("launch %lld %d %s", (long long)l->job_id, l->run, nodes);
    if (f->nruns < 64) f->runs[f->nruns++] = (frun){l->job_id, l->run, l->ntasks, 0, 0, 0, 0};
    return 0;
}

static int f_stop(void *b, int64_t id, gs_time now, gs_time grace)
{
    (void)now, (void)grace;
    frun *r = f_find(b, id);
    if (!r) return GS_ENOENT;
    rec("stop %lld", (long long)id);
    if (!r->ending) r->ending = 2, r->code = 143;
    return 0;
}

static void f_control(fake *f, gsd_xev_fn fn, void *ud)
{
    char taken[600];
    snprintf(taken, sizeof taken, "%s.taken", ctl_path);
    if (rename(ctl_path, taken) != 0) return;
    FILE *in = fopen(taken, "r");
    if (!in) return;
    char line[512];
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = '\0';
        char a[128] = "", b[128] = "", c[128] = "", dd[128] = "", e[128] = "";
        int n = sscanf(line, "%127s %127s %127s %127s %127s", a, b, c, dd, e);
        const char *rest = line;
        for (int skip = 0; skip < 3 && *rest; skip++) { /* the text after the third word */
            rest += strcspn(rest, " ");
            rest += strspn(rest, " ");
        }
        gsd_xev ev;
        memset(&ev, 0, sizeof ev);
        ev.job_id = -1;
        ev.task = -1;
        if (!strcmp(a, "node") && n >= 3) {
            ev.kind = GSD_X_NODE;
            ev.node = b;
            ev.node_state = !strcmp(c, "down")    ? GSD_XNODE_DOWN
                            : !strcmp(c, "drain") ? GSD_XNODE_DRAIN
                                                  : GSD_XNODE_UP;
            ev.msg = *rest ? rest : NULL;
            fn(ud, &ev);
        } else if (!strcmp(a, "outside") && n >= 3) {
            ev.kind = GSD_X_OUTSIDE;
            ev.node = b;
            ev.count = atoi(c);
            fn(ud, &ev);
        } else if (!strcmp(a, "adopt") && n >= 5) {
            /* adopt EXT NTASKS GPUS VC|- */
            gsd_adopt ad = {.ext = b,
                            .name = "sbatch-job",
                            .user = "tester",
                            .run_as = "#1000",
                            .vc = strcmp(e, "-") ? e : NULL,
                            .priority = 0,
                            .ntasks = atoi(c),
                            .gpus_per_task = atoi(dd),
                            .gang = 1,
                            .submitted = GS_TIME_NONE};
            ev.kind = GSD_X_ADOPT;
            ev.adopt = &ad;
            fn(ud, &ev);
        } else if (!strcmp(a, "gone") && n >= 2) {
            ev.kind = GSD_X_GONE;
            ev.job_id = atoll(b);
            ev.msg = n >= 3 ? line + strlen("gone ") + strlen(b) + 1 : NULL;
            fn(ud, &ev);
        } else if (!strcmp(a, "end") && n >= 3) {
            frun *r = f_find(f, atoll(b));
            if (r && !r->ending) r->ending = 1, r->code = atoi(c);
        } else if (!strcmp(a, "vanish") && n >= 2) {
            FILE *v = fopen(vanish_path, "a");
            if (v) {
                fprintf(v, "%s\n", b);
                fclose(v);
            }
        }
    }
    fclose(in);
    unlink(taken);
}

static void f_poll(void *b, gs_time now, gsd_xev_fn fn, void *ud)
{
    (void)now;
    fake *f = b;
    f_control(f, fn, ud);
    for (int i = 0; i < f->nruns; i++) {
        frun *r = &f->runs[i];
        gsd_xev ev;
        memset(&ev, 0, sizeof ev);
        ev.job_id = r->id;
        ev.run = r->run;
        if (!r->started) {
            r->started = 1;
            for (int t = 0; t < r->ntasks; t++) {
                char h[64];
                snprintf(h, sizeof h, "fake:%lld:%d", (long long)r->id, t);
                ev.kind = GSD_X_TASK_STARTED;
                ev.task = t;
                ev.handle = h;
                ev.gpus = "0";
                fn(ud, &ev);
            }
        }
        if (r->ending && !r->done) {
            r->done = 1;
            for (int t = 0; t < r->ntasks; t++) {
                ev.kind = GSD_X_TASK_EXITED;
                ev.task = t;
                ev.exit_code = r->code;
                fn(ud, &ev);
            }
            ev.kind = GSD_X_RUN_DONE;
            ev.task = -1;
            ev.exit_code = r->code;
            ev.failed_task = r->code ? 0 : -1;
            fn(ud, &ev);
        }
    }
}

static gs_time f_next_deadline(const void *b)
{
    (void)b;
    return GS_TIME_MAX;
}

static gs_time f_poll_within(const void *b)
{
    (void)b;
    return GS_SEC / 20;
}

static size_t f_nruns(const void *b)
{
    return (size_t)((const fake *)b)->nruns;
}

static int f_has(const void *b, int64_t id)
{
    return f_find((fake *)b, id) != NULL;
}

static void f_kill_now(void *b, int64_t id)
{
    frun *r = f_find(b, id);
    if (r && !r->ending) r->ending = 2, r->code = 137;
}

static void f_forget(void *b, int64_t id)
{
    fake *f = b;
    for (int i = 0; i < f->nruns; i++)
        if (f->runs[i].id == id) {
            f->runs[i] = f->runs[--f->nruns];
            return;
        }
}

static int f_recover(void *b, int64_t id, int run, int ntasks, gs_time now, int *alive, int *exited,
                     int *lost)
{
    (void)now;
    fake *f = b;
    rec("recover %lld %d", (long long)id, run);
    if (f->nruns < 64) f->runs[f->nruns++] = (frun){id, run, ntasks, 1, 0, 0, 0};
    *alive = ntasks;
    *exited = *lost = 0;
    return 0;
}

static int f_sweep(void *b, void (*log)(void *ud, const char *msg), void *ud)
{
    (void)b, (void)log, (void)ud;
    rec("sweep");
    return 0;
}

static void f_log_path(const void *b, int64_t id, int task, char *buf, size_t cap)
{
    (void)b, (void)id, (void)task;
    snprintf(buf, cap, "/dev/null");
}

static int f_log_open(const void *b, int64_t id, int task, int *fd)
{
    (void)b, (void)id, (void)task, (void)fd;
    return GS_ENOENT;
}

static int64_t f_task_pid(const char *h)
{
    (void)h;
    return -1;
}

static int f_check(void *b, char *why, size_t cap)
{
    (void)b;
    if (access(checkfail_path, F_OK) != 0) return 0;
    snprintf(why, cap, "fake state directory read-only");
    return GS_EIO;
}

/* Two nodes n0, n1 of 4 V100 each (the names of the shorthand 2x4). */
static int f_cluster(void *b, const gs_cluster *given, gs_cluster **out, gs_diag *d)
{
    (void)b;
    if (given) {
        rec("check %zu", gs_cluster_nnodes(given));
        for (size_t n = 0; n < gs_cluster_nnodes(given); n++) {
            const gs_node *nd = gs_cluster_node(given, (int)n);
            if (strcmp(nd->name, "n0") && strcmp(nd->name, "n1"))
                return gs_diag_set(d, GS_EINVAL, 0, 0, "node %s is not in the fake cluster",
                                   nd->name);
            if (nd->gpu_hi - nd->gpu_lo > 4)
                return gs_diag_set(d, GS_EINVAL, 0, 0, "node %s has 4 GPUs, not %d", nd->name,
                                   nd->gpu_hi - nd->gpu_lo);
        }
        *out = NULL;
        return 0;
    }
    rec("cluster");
    gs_cluster *c;
    if (gs_cluster_create(&c)) return GS_ENOMEM;
    int t = gs_cluster_gpu_type(c, "V100");
    for (int n = 0; n < 2; n++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", n);
        int cell = gs_cluster_add_cell(c, 0, GS_CELL_NODE, name, -1);
        gs_cluster_set_node(c, cell, 32, 65536);
        for (int k = 0; k < 4; k++) gs_cluster_add_gpu(c, cell, k, t);
    }
    int rc = gs_cluster_finish(c, d);
    if (rc) {
        gs_cluster_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* External jobs that are gone: the lines of the vanish file (it outlives a daemon). */
static int f_bind(void *b, int64_t id, const char *ext)
{
    (void)b;
    rec("bind %lld %s", (long long)id, ext ? ext : "-");
    FILE *v = ext ? fopen(vanish_path, "r") : NULL;
    char line[128];
    int gone = 0;
    while (v && !gone && fgets(line, sizeof line, v)) {
        line[strcspn(line, "\n")] = '\0';
        gone = !strcmp(line, ext);
    }
    if (v) fclose(v);
    return gone ? GS_ENOENT : 0;
}

static void f_retire(void *b, int64_t id, const char *ext, int state, const char *why)
{
    (void)b;
    rec("retire %lld %s %s %s", (long long)id, ext ? ext : "-",
        gs_job_state_name((gs_job_state)state), why ? why : "");
}

static const gsd_exec_ops fake_ops = {
    .name = "fake",
    .desc = "a cluster backend without a cluster (tests)",
    .caps = GSD_XCAP_CLUSTER | GSD_XCAP_EXTERNAL | GSD_XCAP_ADOPT | GSD_XCAP_MULTINODE,
    .create = f_create,
    .destroy = f_destroy,
    .launch = f_launch,
    .stop = f_stop,
    .poll = f_poll,
    .next_deadline = f_next_deadline,
    .poll_within = f_poll_within,
    .nruns = f_nruns,
    .has = f_has,
    .kill_now = f_kill_now,
    .forget = f_forget,
    .recover = f_recover,
    .sweep = f_sweep,
    .log_path = f_log_path,
    .log_open = f_log_open,
    .task_pid = f_task_pid,
    .check = f_check,
    .cluster = f_cluster,
    .bind = f_bind,
    .retire = f_retire,
};

/* ---- the daemon -------------------------------------------------------------------------------
 */

typedef struct daemon {
    pid_t pid;
    char url[64];
    char log[512];
    int exit_code; /* when it exited during start-up */
} daemon_t;

/* Start gsd_serve with the fake backend on database 'name' (kept across restarts); returns 0
 * when it serves, else -1 with dm->exit_code. */
static int start(daemon_t *dm, const char *name, const char *cluster, const char *const *opts,
                 size_t nopts)
{
    static char db[512], pf[512], logs[520];
    snprintf(db, sizeof db, "%s.db", tmp(name));
    snprintf(pf, sizeof pf, "%s.port", db);
    snprintf(logs, sizeof logs, "%s-logs", db);
    snprintf(dm->log, sizeof dm->log, "%s.log", db);
    snprintf(ctl_path, sizeof ctl_path, "%s.ctl", db);
    snprintf(rec_path, sizeof rec_path, "%s.rec", db);
    snprintf(checkfail_path, sizeof checkfail_path, "%s.checkfail", db);
    snprintf(vanish_path, sizeof vanish_path, "%s.vanished", db);
    unlink(pf);
    unlink(rec_path);
    dm->exit_code = -1;
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
        o.executor_ops = &fake_ops;
        o.executor_opts = opts;
        o.nexecutor_opts = nopts;
        o.single_user = 1;
        _exit(gsd_serve(&o));
    }
    for (int i = 0; i < 400; i++) {
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
            dm->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            return -1;
        }
        sleep_ms(50);
    }
    return -1;
}

static void stop(daemon_t *dm)
{
    if (dm->pid <= 0) return;
    kill(dm->pid, SIGTERM);
    int st;
    for (int i = 0; i < 200; i++) {
        if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
            dm->pid = -1;
            return;
        }
        sleep_ms(50);
    }
    kill(dm->pid, SIGKILL);
    waitpid(dm->pid, &st, 0);
    dm->pid = -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Send control lines to the fake (waits until the previous ones were taken). */
static int control(const char *text)
{
    for (int i = 0; i < 200 && access(ctl_path, F_OK) == 0; i++) sleep_ms(20);
    char t[600];
    snprintf(t, sizeof t, "%s.tmp", ctl_path);
    FILE *f = fopen(t, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    return rename(t, ctl_path);
}

/* 1 once the record file has a line starting with 'prefix' (bounded wait). */
static int wait_rec(const char *prefix)
{
    for (int i = 0; i < 200; i++) {
        const char *s = slurp(rec_path);
        size_t n = strlen(prefix);
        for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
            if (!strncmp(p, prefix, n)) return 1;
        sleep_ms(25);
    }
    return 0;
}

static int count_rec(const char *prefix)
{
    const char *s = slurp(rec_path);
    int c = 0;
    size_t n = strlen(prefix);
    for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        c += !strncmp(p, prefix, n);
    return c;
}

static json_t *req(const daemon_t *dm, const char *method, const char *path, const char *body,
                   long *status)
{
    gsd_client c = {dm->url, NULL, "tester", 30};
    gsd_resp r;
    *status = 0;
    if (gsd_request(&c, method, path, body, body ? strlen(body) : 0,
                    body ? "application/json" : NULL, NULL, &r))
        return NULL;
    *status = r.status;
    json_t *j = json_loads(r.body, 0, NULL);
    gsd_resp_release(&r);
    return j;
}

static long long submit(const daemon_t *dm, int tasks, int gpus)
{
    char body[200];
    snprintf(body, sizeof body, "{\"tasks\": %d, \"gpus\": %d, \"command\": \"true\"}", tasks,
             gpus);
    long st;
    json_t *j = req(dm, "POST", "/v1/jobs", body, &st);
    long long id = st == 201 ? (long long)json_integer_value(json_object_get(j, "id")) : -1;
    json_decref(j);
    return id;
}

/* The job's state (polls until it is 'want', bounded); returns 1 when it is. */
static int wait_state(const daemon_t *dm, long long id, const char *want)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    for (int i = 0; i < 200; i++) {
        long st;
        json_t *j = req(dm, "GET", path, NULL, &st);
        int ok = j && !strcmp(json_string_value(json_object_get(j, "state")) ?: "", want);
        json_decref(j);
        if (ok) return 1;
        sleep_ms(25);
    }
    return 0;
}

/* A string field of job id (its own copy, "" if none). */
static const char *job_str(const daemon_t *dm, long long id, const char *key)
{
    static char out[2048];
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    long st;
    json_t *j = req(dm, "GET", path, NULL, &st);
    json_t *v = j ? json_object_get(j, key) : NULL;
    if (json_is_string(v))
        snprintf(out, sizeof out, "%s", json_string_value(v));
    else if (v) {
        char *d = json_dumps(v, JSON_COMPACT);
        snprintf(out, sizeof out, "%s", d ? d : "");
        free(d);
    } else
        out[0] = '\0';
    json_decref(j);
    return out;
}

/* Node 'name' of GET /v1/nodes?gpus=1 (a new reference, or NULL). */
static json_t *node(const daemon_t *dm, const char *name)
{
    long st;
    json_t *j = req(dm, "GET", "/v1/nodes?gpus=1", NULL, &st);
    json_t *n, *out = NULL;
    size_t i;
    json_array_foreach(json_object_get(j, "nodes"), i, n)
    {
        if (!strcmp(json_string_value(json_object_get(n, "name")) ?: "", name))
            out = json_incref(n);
    }
    json_decref(j);
    return out;
}

static long long node_int(const daemon_t *dm, const char *name, const char *key)
{
    json_t *n = node(dm, name);
    long long v = n ? (long long)json_integer_value(json_object_get(n, key)) : -999;
    json_decref(n);
    return v;
}

static const char *node_str(const daemon_t *dm, const char *name, const char *key)
{
    static char out[512];
    json_t *n = node(dm, name);
    json_t *v = n ? json_object_get(n, key) : NULL;
    snprintf(out, sizeof out, "%s", json_is_string(v) ? json_string_value(v) : "");
    json_decref(n);
    return out;
}

/* Wait until node 'name' shows key == want (bounded); 1 when it does. */
static int wait_node_str(const daemon_t *dm, const char *name, const char *key, const char *want)
{
    for (int i = 0; i < 200; i++) {
        if (!strcmp(node_str(dm, name, key), want)) return 1;
        sleep_ms(25);
    }
    return 0;
}

static int wait_node_int(const daemon_t *dm, const char *name, const char *key, long long want)
{
    for (int i = 0; i < 200; i++) {
        if (node_int(dm, name, key) == want) return 1;
        sleep_ms(25);
    }
    return 0;
}

/* The node a running job's placement names ("n1:0-3" -> "n1"). */
static const char *job_node(const daemon_t *dm, long long id)
{
    static char out[64];
    snprintf(out, sizeof out, "%s", job_str(dm, id, "placement"));
    out[strcspn(out, ":")] = '\0';
    return out;
}

/* ---- tests ------------------------------------------------------------------------------------
 */

/* The model comes from the backend, --executor-opt reaches it, conf.wake is set; a given
 * --cluster is checked by the backend (a mismatch is exit 2); a bad option is exit 2. */
static void cluster_from_backend(void)
{
    daemon_t dm;
    const char *opts[] = {"partitions=gpu", "poll_ms=100"};
    ASSERT_OK(start(&dm, "model", NULL, opts, 2));
    ASSERT(wait_rec("cluster"));
    ASSERT(wait_rec("opt partitions=gpu"));
    ASSERT(wait_rec("opt poll_ms=100"));
    ASSERT(wait_rec("wake"));
    ASSERT_EQ(node_int(&dm, "n0", "gpus"), 4);
    ASSERT_EQ(node_int(&dm, "n1", "gpus"), 4);
    ASSERT_STR(node_str(&dm, "n1", "manager_state"), "up");
    ASSERT_EQ(count_rec("check"), 0);
    stop(&dm);
    /* given: checked by the backend, which accepts 2x4 ... */
    ASSERT_OK(start(&dm, "given", "2x4", NULL, 0));
    ASSERT(wait_rec("check 2"));
    ASSERT_EQ(count_rec("cluster"), 0);
    stop(&dm);
    /* ... and refuses a node it does not have, or one larger than its own */
    ASSERT_EQ(start(&dm, "given3", "3x4", NULL, 0), -1);
    ASSERT_EQ(dm.exit_code, 2);
    ASSERT_CONTAINS(slurp(dm.log), "node n2 is not in the fake cluster");
    ASSERT_EQ(start(&dm, "given8", "2x8", NULL, 0), -1);
    ASSERT_EQ(dm.exit_code, 2);
    ASSERT_CONTAINS(slurp(dm.log), "has 4 GPUs, not 8");
    /* an unknown setting of the local executor: refused, not ignored; the option is documented */
    char cmd[1200], out[8192] = "";
    snprintf(
        cmd, sizeof cmd,
        "'%s' serve --cluster 1 --db '%s' --socket '%s' --executor-opt foo=1 2>&1; echo rc=$?; "
        "'%s' serve --help",
        GSCHED_BIN, tmp("local.db"), tmp("local.sock"), GSCHED_BIN);
    FILE *pp = popen(cmd, "r");
    ASSERT(pp);
    size_t got = fread(out, 1, sizeof out - 1, pp);
    out[got] = '\0';
    pclose(pp);
    ASSERT_CONTAINS(out, "executor local: unknown --executor-opt 'foo=1' (known: suspend=");
    ASSERT_CONTAINS(out, "rc=2");
    ASSERT_CONTAINS(out, "--executor-opt KEY=VALUE");
    ASSERT_CONTAINS(out, "With a cluster executor");
    const char *bad[] = {"bad=1"};
    ASSERT_EQ(start(&dm, "badopt", NULL, bad, 1), -1);
    ASSERT_EQ(dm.exit_code, 2);
    ASSERT_CONTAINS(slurp(dm.log), "unknown key 'bad'");
}

/* Outside GPUs are not placed on; a node DOWN stops the job there (requeued once its run ends),
 * UP returns the GPUs; GONE cancels a running job; final jobs are retired. */
static void nodes_outside_down_gone(void)
{
    daemon_t dm;
    ASSERT_OK(start(&dm, "nodes", NULL, NULL, 0));
    long long a = submit(&dm, 1, 4);
    ASSERT(a > 0);
    ASSERT(wait_state(&dm, a, "RUNNING"));
    char on[8], other[8];
    snprintf(on, sizeof on, "%s", job_node(&dm, a));
    snprintf(other, sizeof other, "%s", strcmp(on, "n0") ? "n0" : "n1");
    char line[200], want[200];
    snprintf(want, sizeof want, "launch %lld 1 %s", a, on);
    ASSERT(wait_rec(want));
    /* 3 of the other node's GPUs are used by foreign jobs: a 2-GPU job waits */
    snprintf(line, sizeof line, "outside %s 3\n", other);
    ASSERT_OK(control(line));
    ASSERT(wait_node_int(&dm, other, "outside", 3));
    ASSERT_EQ(node_int(&dm, other, "free"), 1);
    json_t *nd = node(&dm, other);
    json_t *g3 = json_array_get(json_object_get(nd, "gpu_list"), 3);
    ASSERT_STR(json_string_value(json_object_get(g3, "state")), "outside");
    json_decref(nd);
    /* gsched nodes shows them */
    char cmd[700], out[2048] = "";
    snprintf(cmd, sizeof cmd, "'%s' nodes --server %s 2>&1", GSCHED_BIN, dm.url);
    FILE *pp = popen(cmd, "r");
    ASSERT(pp);
    size_t got = fread(out, 1, sizeof out - 1, pp);
    out[got] = '\0';
    pclose(pp);
    ASSERT_CONTAINS(out, "OUTSIDE");
    ASSERT_CONTAINS(out, "        3  V100"); /* DOWN 3, OUTSIDE 3 */
    long long b = submit(&dm, 1, 2);
    ASSERT(b > 0);
    sleep_ms(400);
    ASSERT_STR(job_str(&dm, b, "state"), "PENDING");
    snprintf(line, sizeof line, "outside %s 0\n", other);
    ASSERT_OK(control(line));
    ASSERT(wait_state(&dm, b, "RUNNING"));
    ASSERT_STR(job_node(&dm, b), other);
    ASSERT_EQ(node_int(&dm, other, "outside"), 0);
    /* the node a runs on fails: a is stopped, requeued when its run ends, and waits (the other
     * node has 2 GPUs free) */
    snprintf(line, sizeof line, "node %s down Not responding\n", on);
    ASSERT_OK(control(line));
    snprintf(want, sizeof want, "stop %lld", a);
    ASSERT(wait_rec(want));
    ASSERT(wait_state(&dm, a, "PENDING"));
    ASSERT(wait_node_str(&dm, on, "state", "down"));
    ASSERT_STR(node_str(&dm, on, "manager_state"), "down");
    ASSERT_STR(node_str(&dm, on, "manager_reason"), "Not responding");
    ASSERT_CONTAINS(node_str(&dm, on, "reason"), "node down: Not responding");
    ASSERT_CONTAINS(job_str(&dm, a, "events"), "failed");
    sleep_ms(300);
    ASSERT_STR(job_str(&dm, a, "state"), "PENDING");
    /* back: its GPUs return and a runs there again */
    snprintf(line, sizeof line, "node %s up\n", on);
    ASSERT_OK(control(line));
    ASSERT(wait_state(&dm, a, "RUNNING"));
    ASSERT_STR(job_node(&dm, a), on);
    snprintf(want, sizeof want, "launch %lld 2 %s", a, on);
    ASSERT(wait_rec(want));
    ASSERT_STR(node_str(&dm, on, "manager_state"), "up");
    /* the user cancels the external job: the job is cancelled, its run stopped, then retired */
    snprintf(line, sizeof line, "gone %lld scancel by tester\n", a);
    ASSERT_OK(control(line));
    ASSERT(wait_state(&dm, a, "CANCELLED"));
    snprintf(want, sizeof want, "retire %lld - CANCELLED", a);
    ASSERT(wait_rec(want));
    /* a job that ends is retired with its state */
    snprintf(line, sizeof line, "end %lld 0\n", b);
    ASSERT_OK(control(line));
    ASSERT(wait_state(&dm, b, "DONE"));
    snprintf(want, sizeof want, "retire %lld - DONE", b);
    ASSERT(wait_rec(want));
    stop(&dm);
}

/* The manager's drain composes with the daemon's own (the executor cannot launch): a node
 * returns to service only when no reason remains. */
static void drain_composes(void)
{
    daemon_t dm;
    FILE *f = fopen(tmp("drain.db.checkfail"), "w");
    ASSERT(f);
    fclose(f);
    ASSERT_OK(start(&dm, "drain", NULL, NULL, 0));
    ASSERT(wait_node_str(&dm, "n0", "state", "drained"));
    ASSERT_CONTAINS(node_str(&dm, "n0", "reason"), "fake state directory read-only");
    ASSERT_OK(control("node n0 drain maintenance\n"));
    for (int i = 0; i < 200 && !strstr(node_str(&dm, "n0", "reason"), "maintenance"); i++)
        sleep_ms(25);
    ASSERT_CONTAINS(node_str(&dm, "n0", "reason"), "fake: node drained: maintenance");
    ASSERT_CONTAINS(node_str(&dm, "n0", "reason"), "fake state directory read-only");
    long long a = submit(&dm, 1, 1);
    ASSERT(a > 0);
    /* the executor can launch again (re-checked every 5 s): n1 returns, n0 stays drained */
    unlink(checkfail_path);
    ASSERT(wait_state(&dm, a, "RUNNING") || wait_state(&dm, a, "RUNNING"));
    ASSERT_STR(job_node(&dm, a), "n1");
    ASSERT_STR(node_str(&dm, "n0", "state"), "drained");
    ASSERT_STR(node_str(&dm, "n0", "reason"), "fake: node drained: maintenance");
    ASSERT_STR(node_str(&dm, "n1", "state"), "mixed");
    /* the manager drains n1 too: its job goes on (draining) */
    ASSERT_OK(control("node n1 drain\n"));
    ASSERT(wait_node_str(&dm, "n1", "state", "draining"));
    ASSERT_STR(job_str(&dm, a, "state"), "RUNNING");
    ASSERT_OK(control("node n0 up\nnode n1 up\n"));
    ASSERT(wait_node_str(&dm, "n0", "state", "idle"));
    ASSERT(wait_node_str(&dm, "n1", "state", "mixed"));
    stop(&dm);
}

/* Adoption: a job submitted outside is created like a client's, committed, bound, scheduled and
 * launched; one that is invalid, or can never run, is retired; one whose external job is gone
 * at bind is cancelled.  A client cannot set spec.external.  A restart binds every live job
 * and cancels the one whose external job went away meanwhile. */
static void adoption_and_recovery(void)
{
    daemon_t dm;
    ASSERT_OK(start(&dm, "adopt", NULL, NULL, 0));
    long st;
    json_t *j = req(&dm, "POST", "/v1/jobs",
                    "{\"gpus\": 1, \"command\": \"true\", \"external\": \"slurm:1\"}", &st);
    ASSERT_EQ(st, 400);
    ASSERT_STR(json_string_value(json_object_get(j, "field")), "external");
    json_decref(j);
    ASSERT_OK(control("adopt slurm:57 1 2 -\n"));
    ASSERT(wait_rec("bind 1 slurm:57"));
    ASSERT(wait_state(&dm, 1, "RUNNING"));
    ASSERT(wait_rec("launch 1 1 "));
    ASSERT_CONTAINS(job_str(&dm, 1, "spec"), "\"external\":\"slurm:57\"");
    ASSERT_CONTAINS(job_str(&dm, 1, "events"), "adopted from slurm:57");
    ASSERT_STR(job_str(&dm, 1, "user"), "tester");
    /* refused: no GPUs (before any job exists), or larger than the cluster (rejected) */
    ASSERT_OK(control("adopt slurm:58 1 0 -\nadopt slurm:59 1 16 -\n"));
    ASSERT(wait_rec("retire -1 slurm:58 REJECTED"));
    ASSERT(wait_rec("retire 2 slurm:59 REJECTED"));
    ASSERT_STR(job_str(&dm, 2, "state"), "REJECTED");
    ASSERT_EQ(count_rec("bind 2 "), 0);
    /* gone before its bind: cancelled */
    ASSERT_OK(control("vanish slurm:60\nadopt slurm:60 1 1 -\n"));
    ASSERT(wait_rec("bind 3 slurm:60"));
    ASSERT(wait_state(&dm, 3, "CANCELLED"));
    ASSERT_CONTAINS(job_str(&dm, 3, "reason"), "its external job is gone");
    ASSERT(wait_rec("retire 3 slurm:60 CANCELLED"));
    /* the adopted job ends: retired with its external name */
    ASSERT_OK(control("end 1 0\n"));
    ASSERT(wait_state(&dm, 1, "DONE"));
    ASSERT(wait_rec("retire 1 slurm:57 DONE"));
    /* before a restart: a running adopted job, a pending job, a pending adopted job */
    ASSERT_OK(control("adopt slurm:61 1 4 -\n"));
    ASSERT(wait_state(&dm, 4, "RUNNING"));
    long long p = submit(&dm, 2, 4);
    ASSERT_EQ(p, 5);
    ASSERT_OK(control("adopt slurm:62 1 4 -\n"));
    ASSERT(wait_rec("bind 6 slurm:62"));
    ASSERT_STR(job_str(&dm, 6, "state"), "PENDING");
    stop(&dm);
    /* restart: every live job is bound; slurm:62 is gone meanwhile */
    FILE *f = fopen(vanish_path, "a");
    ASSERT(f);
    fputs("slurm:62\n", f);
    fclose(f);
    ASSERT_OK(start(&dm, "adopt", NULL, NULL, 0));
    ASSERT(wait_rec("bind 4 slurm:61"));
    ASSERT(wait_rec("bind 5 -"));
    ASSERT(wait_rec("bind 6 slurm:62"));
    ASSERT(wait_rec("recover 4 1"));
    ASSERT(wait_state(&dm, 6, "CANCELLED"));
    ASSERT_CONTAINS(job_str(&dm, 6, "reason"), "its external job is gone");
    ASSERT(wait_rec("retire 6 slurm:62 CANCELLED"));
    ASSERT_STR(job_str(&dm, 4, "state"), "RUNNING");
    ASSERT_STR(job_str(&dm, 5, "state"), "PENDING");
    stop(&dm);
}

/* ---- a machine in two HiveD chains ---------------------------------------------------------- */

/* n0 is in chain A-NODE (GPUs 2,3, type A) and in chain B-NODE (GPUs 0,1, type B); n1 only in
 * B-NODE: three node cells, two named n0 (the fake's check sees n0 twice, 2 GPUs each). */
static const char two_chains[] = "physicalCluster:\n"
                                 "  cellTypes:\n"
                                 "    A-NODE: {childCellType: A, childCellNumber: 2, "
                                 "isNodeLevel: true}\n"
                                 "    B-NODE: {childCellType: B, childCellNumber: 2, "
                                 "isNodeLevel: true}\n"
                                 "  physicalCells:\n"
                                 "  - cellType: A-NODE\n"
                                 "    cellAddress: n0\n"
                                 "    cellChildren: [{cellAddress: 2}, {cellAddress: 3}]\n"
                                 "  - cellType: B-NODE\n"
                                 "    cellAddress: n0\n"
                                 "  - cellType: B-NODE\n"
                                 "    cellAddress: n1\n";

static long long submit_type(const daemon_t *dm, const char *type)
{
    char body[200];
    snprintf(body, sizeof body, "{\"gpus\": 2, \"gpu_type\": \"%s\", \"command\": \"true\"}", type);
    long st;
    json_t *j = req(dm, "POST", "/v1/jobs", body, &st);
    long long id = st == 201 ? (long long)json_integer_value(json_object_get(j, "id")) : -1;
    json_decref(j);
    return id;
}

/* Field 'key' of the node cell of machine 'name' in chain 'chain' (GET /v1/nodes), as text
 * (integers printed; "" when absent). */
static const char *cell_field(const daemon_t *dm, const char *name, const char *chain,
                              const char *key)
{
    static char out[512];
    out[0] = '\0';
    long st;
    json_t *j = req(dm, "GET", "/v1/nodes", NULL, &st);
    json_t *n;
    size_t i;
    json_array_foreach(json_object_get(j, "nodes"), i, n)
    {
        if (strcmp(json_string_value(json_object_get(n, "name")) ?: "", name) ||
            strcmp(json_string_value(json_object_get(n, "chain")) ?: "", chain))
            continue;
        json_t *v = json_object_get(n, key);
        if (json_is_string(v))
            snprintf(out, sizeof out, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(out, sizeof out, "%lld", (long long)json_integer_value(v));
    }
    json_decref(j);
    return out;
}

static int wait_cell(const daemon_t *dm, const char *name, const char *chain, const char *key,
                     const char *want)
{
    for (int i = 0; i < 200; i++) {
        if (!strcmp(cell_field(dm, name, chain, key), want)) return 1;
        sleep_ms(25);
    }
    return 0;
}

/* What the manager says of a machine applies to all its node cells: OUTSIDE is split among
 * them (GPUs no job holds first, in config order, then the rest in the same order), DOWN stops
 * the jobs on every cell of the machine and UP returns them all. */
static void machine_in_two_chains(void)
{
    const char *cfg = tmp("two-chains.yaml");
    FILE *f = fopen(cfg, "w");
    ASSERT(f);
    fputs(two_chains, f);
    fclose(f);
    daemon_t dm;
    ASSERT_OK(start(&dm, "chains", cfg, NULL, 0));
    ASSERT(wait_rec("check 3"));
    long long a = submit_type(&dm, "A");
    ASSERT(a > 0);
    ASSERT(wait_state(&dm, a, "RUNNING"));
    ASSERT_STR(job_str(&dm, a, "placement"), "n0:2-3");
    char want[64];
    snprintf(want, sizeof want, "launch %lld 1 n0", a); /* the machine's name, for the manager */
    ASSERT(wait_rec(want));
    ASSERT_STR(cell_field(&dm, "n0", "A-NODE", "node_cells"), "2");
    /* 2 of n0's GPUs are used outside: not A's (its job holds them), so B's */
    ASSERT_OK(control("outside n0 2\n"));
    ASSERT(wait_cell(&dm, "n0", "B-NODE", "outside", "2"));
    ASSERT_STR(cell_field(&dm, "n0", "A-NODE", "outside"), "0");
    long long b = submit_type(&dm, "B");
    ASSERT(wait_state(&dm, b, "RUNNING"));
    ASSERT_STR(job_str(&dm, b, "placement"), "n1:0-1");
    /* 3: the third goes to A, taken when its job frees the GPUs */
    ASSERT_OK(control("outside n0 3\n"));
    ASSERT(wait_cell(&dm, "n0", "A-NODE", "outside_asked", "1"));
    ASSERT_STR(cell_field(&dm, "n0", "A-NODE", "outside"), "0");
    ASSERT_STR(cell_field(&dm, "n0", "B-NODE", "outside"), "2");
    ASSERT_OK(control("outside n0 0\n"));
    ASSERT(wait_cell(&dm, "n0", "B-NODE", "outside", "0"));
    ASSERT_STR(cell_field(&dm, "n0", "A-NODE", "outside_asked"), "");
    long long c = submit_type(&dm, "B");
    ASSERT(wait_state(&dm, c, "RUNNING"));
    ASSERT_STR(job_str(&dm, c, "placement"), "n0:0-1");
    /* n0 fails: the jobs on both its cells stop and wait; n1's runs on */
    ASSERT_OK(control("node n0 down Not responding\n"));
    snprintf(want, sizeof want, "stop %lld", a);
    ASSERT(wait_rec(want));
    snprintf(want, sizeof want, "stop %lld", c);
    ASSERT(wait_rec(want));
    ASSERT(wait_state(&dm, a, "PENDING"));
    ASSERT(wait_state(&dm, c, "PENDING"));
    ASSERT_STR(job_str(&dm, b, "state"), "RUNNING");
    ASSERT_STR(cell_field(&dm, "n0", "A-NODE", "manager_state"), "down");
    ASSERT_STR(cell_field(&dm, "n0", "B-NODE", "manager_state"), "down");
    ASSERT_STR(cell_field(&dm, "n0", "B-NODE", "state"), "down");
    ASSERT_STR(cell_field(&dm, "n1", "B-NODE", "manager_state"), "up");
    /* the machine's own view: both cells, down */
    long st;
    json_t *m = req(&dm, "GET", "/v1/nodes/n0", NULL, &st);
    ASSERT_EQ(st, 200);
    ASSERT_STR(json_string_value(json_object_get(m, "state")), "down");
    ASSERT_EQ(json_integer_value(json_object_get(m, "gpus")), 4);
    ASSERT_EQ(json_array_size(json_object_get(m, "cells")), 2);
    json_decref(m);
    /* back: both run there again */
    ASSERT_OK(control("node n0 up\n"));
    ASSERT(wait_state(&dm, a, "RUNNING"));
    ASSERT(wait_state(&dm, c, "RUNNING"));
    ASSERT_STR(job_str(&dm, a, "placement"), "n0:2-3");
    ASSERT_STR(job_str(&dm, c, "placement"), "n0:0-1");
    ASSERT_STR(cell_field(&dm, "n0", "B-NODE", "manager_state"), "up");
    stop(&dm);
}

static void cleanup(void)
{
    if (!dir[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {
    }
}

static const test_case tests[] = {
    {"cluster_from_backend", cluster_from_backend},
    {"nodes_outside_down_gone", nodes_outside_down_gone},
    {"drain_composes", drain_composes},
    {"adoption_and_recovery", adoption_and_recovery},
    {"machine_in_two_chains", machine_in_two_chains},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
