/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.c - `gsched serve`: start-up (cluster, tokens, engine, database,
 * executor, recovery, signals, HTTP), the loop that runs cycles, and
 * graceful shutdown.  The executor comes before the engine (the engine is
 * told what it can do on this machine: live_remap with GSD_XCAP_REMAP); with
 * a cluster backend (GSD_XCAP_CLUSTER) also before the cluster: the backend
 * describes the cluster (or checks a declared one, --cluster).  A backend's
 * threads may wake the loop (gsd_exec_conf.wake writes the wake pipe).
 *
 * Invariants: the thread that calls gsd_serve becomes the scheduler thread
 * and owns the gsd_sched object (on its stack); HTTP threads start only
 * after recovery has committed and the first snapshot is published, and
 * are stopped before anything they can reach is freed (the GPU health watch
 * thread, gpuhealth.c, likewise before the wake pipe it writes).  The engine is
 * created knowing which mechanisms the executor's backend cannot carry out
 * (gsd_exec_mech_unsupported), so it refuses them to every policy.  On shutdown queued
 * commands are answered 503 and running tasks are left running, to be
 * adopted at the next start.  SIGHUP never stops the daemon: it reopens the
 * log file (--log-file, for logrotate) and reloads the tokens file
 * (gsd_auth_reload swaps the entries under its own lock, so HTTP threads keep
 * checking tokens meanwhile).  The signal flags below are the only
 * process-wide state (set by handlers, read by the loop).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "evbus.h"
#include "gsd_sched.h"
#include "sim.h"
#include "solver.h"
#include "nvml.h"

/* Signal flags: the only process-wide state (set by handlers, read by the loop). */
static volatile sig_atomic_t g_sig_stop, g_sig_hup;
static volatile int g_wake_fd = -1;

/* ---- startup and the loop ------------------------------------------------------------------- */

/* SIGHUP: reload the tokens file (a file that fails to load keeps the tokens in force) or just
 * say it was seen; never stop (a closed terminal must not end the scheduler). */
static void on_hup(gsd_sched *g)
{
    if (g->sh.o.log_file) {
        /* logrotate moved the file: continue in a new one at the same path */
        char err[512];
        if (gsd_log_open(g->sh.o.log_file, err, sizeof err))
            gsd_log("SIGHUP: log file not reopened, still writing to the previous one: %s", err);
        else
            gsd_log("SIGHUP: log file %s reopened", g->sh.o.log_file);
    }
    const char *path = g->sh.o.tokens;
    if (!path || !g->sh.auth) {
        gsd_log("SIGHUP: nothing to reload (no --tokens); still serving");
        return;
    }
    gs_diag d;
    gs_diag_init(&d, path);
    if (gsd_auth_reload(g->sh.auth, path, &d)) {
        char msg[1024];
        gs_diag_format(&d, msg, sizeof msg);
        gsd_log("SIGHUP: tokens file not reloaded, the previous tokens stay in force: %s", msg);
        return;
    }
    gsd_log("SIGHUP: tokens file %s reloaded: %zu token(s)", path, gsd_auth_count(g->sh.auth));
}

static void on_signal(int sig)
{
    if (sig == SIGTERM || sig == SIGINT) g_sig_stop = 1;
    if (sig == SIGHUP) g_sig_hup = 1;
    int fd = g_wake_fd;
    if (fd >= 0) {
        char b = 's';
        ssize_t w = write(fd, &b, 1);
        (void)w;
    }
}

void gsd_opts_init(gsd_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = GSD_DEFAULT_DB;
    o->max_conn_per_client = 64;
    o->header_timeout = 5;
    o->idle_timeout = 30;
    o->policy = "fifo";
    o->grace = 30 * GS_SEC;
    o->default_duration = 3600 * GS_SEC;
    o->sync_full = 1;
    o->max_body = 1024 * 1024;
    o->log_cap = GSD_DEFAULT_LOG_CAP;
    o->max_connections = 256;
    o->launch_attempts = 3;
    o->placement = GS_PLACE_CONSOLIDATE;
    o->cgroup = "auto";
    o->gpu_xid_hold = 300 * GS_SEC;
}

static void exec_log(void *ud, const char *msg)
{
    (void)ud;
    gsd_log("%s", msg);
}

/* gsd_exec_conf.wake: a backend's thread has something to report; any thread may call it (a
 * write to the non-blocking wake pipe, like the signal handlers and the HTTP threads). */
static void exec_wake(void *ud)
{
    const gsd *sh = ud;
    char b = 'x';
    ssize_t w = write(sh->wake[1], &b, 1);
    (void)w;
}

/* --set pollux_traces=DIR: every application directory under DIR (the Pollux artifact's
 * traces: placements.csv, scalability.csv, validation-*.csv) becomes the engine's goodput model
 * (goodput.h), in name order; elastic jobs naming one of them ('app') progress by it and their
 * hints refine it.  0, or -1 after a log line. */
static int load_goodput(gsd_sched *g, const char *dir)
{
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) {
        gsd_log("pollux_traces: cannot read '%s': %s", dir, strerror(errno));
        return -1;
    }
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_goodput_create(&g->goodput), napps = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
        if (!rc && ents[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            int r = gs_pollux_load_app(g->goodput, path, ents[i]->d_name, &d);
            if (r < 0)
                rc = r;
            else
                napps++;
        }
        free(ents[i]);
    }
    free(ents);
    if (!rc) rc = gs_goodput_finish(g->goodput, &d);
    if (!rc && !napps) rc = gs_diag_set(&d, GS_EINVAL, 0, 0, "no application directory");
    if (!rc) rc = gs_engine_set_progress(g->e, gs_goodput_progress_ops(), g->goodput);
    if (rc) {
        gsd_log("pollux_traces '%s': %s", dir, d.msg[0] ? d.msg : gs_strerror(rc));
        return -1;
    }
    gsd_log("goodput model: %d application(s) from %s", napps, dir);
    return 0;
}

/* g->node_first: a machine in several HiveD chains is one node cell per chain, all with its
 * name; every cell gets the index of the first (lowest) of its name.  Sorted by name, so
 * O(n log n) for large clusters. */
static void node_names(gsd_sched *g)
{
    size_t nn = gs_cluster_nnodes(g->c);
    gsd_named *v = calloc(nn ? nn : 1, sizeof *v);
    g->node_first = calloc(nn ? nn : 1, sizeof *g->node_first);
    if (!v || !g->node_first) abort();
    for (size_t i = 0; i < nn; i++)
        v[i] = (gsd_named){gs_cluster_node(g->c, (int)i)->name, (int32_t)i};
    qsort(v, nn, sizeof *v, gsd_named_cmp);
    for (size_t i = 0; i < nn; i++)
        g->node_first[v[i].ix] =
            i && !strcmp(v[i].name, v[i - 1].name) ? g->node_first[v[i - 1].ix] : v[i].ix;
    free(v);
}

/* The engine on g->c: LIVE mode, the same policies as the simulator, told what the executor's
 * backend cannot carry out (so that no policy is allowed a mechanism, suspend, the backend
 * lacks: engine.h, "when the program cannot carry out a mechanism").  0, or -1 after a log
 * line. */
static int make_engine(gsd_sched *g, const gsd_opts *o, const gsd_exec_ops *xops)
{
    /* the executor exists: its capabilities of this machine count (GSD_XCAP_RUNTIME) */
    gs_diag d;
    gs_params empty;
    gs_params_init(&empty);
    gs_params *params = o->params ? o->params : &empty;
    if (!gs_params_get(params, "preempt_cost")) gs_params_set(params, "preempt_cost", "0");
    if (!gs_params_get(params, "slowdown")) gs_params_set(params, "slowdown", "off");
    gs_params_reset_used(params);
    /* the goodput model's traces: read here, not by the engine or the policy */
    const char *ptraces = gs_params_get(params, "pollux_traces");
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.mode = GS_ENGINE_LIVE;
    eo.placement = o->placement;
    eo.placement_set = o->placement_set;
    eo.read_file = gs_read_data_file;
    eo.lp = gs_lp_glpk(); /* NULL without GLPK: LP policies refuse */
    eo.mech_unsupported = gsd_exec_mech_unsupported(xops);
    /* checkpoint-based suspend that can move GPUs: a suspended job may resume on other GPUs of
     * the node it left (the executor's restore remaps them) */
    eo.live_remap = gsd_exec_can(g->x, GSD_XCAP_REMAP);
    gs_diag_init(&d, NULL);
    if (gs_engine_opts_from_params(params, &eo, &d) ||
        (o->policy_ops
             ? gs_engine_create_ops(g->c, o->policy_ops, params, &eo, &g->e, &d)
             : gs_engine_create(g->c, o->policy ? o->policy : "fifo", params, &eo, &g->e, &d))) {
        gsd_log("%s", d.msg);
        gs_params_release(&empty);
        return -1;
    }
    const char *unused = gs_params_unused(params);
    gs_params_release(&empty);
    if (unused) {
        gsd_log("parameter '%s' is not used by policy %s or the engine (see docs/policies.md)",
                unused, gs_engine_policy_name(g->e));
        return -1;
    }
    if (ptraces && load_goodput(g, ptraces)) return -1;
    gs_engine_set_observer(g->e, gsd_observe, g);
    g->sh.o.policy = gs_engine_policy_name(g->e); /* what /v1/health reports */
    g->nodest = calloc(gs_cluster_nnodes(g->c) ? gs_cluster_nnodes(g->c) : 1, sizeof *g->nodest);
    if (!g->nodest) abort();
    node_names(g);
    return 0;
}

/* A cluster backend's cluster (GSD_XCAP_CLUSTER): its model when no --cluster was given, else
 * the given one checked against what it manages.  0, or -1 after a log line. */
static int exec_cluster(gsd_sched *g, const gsd_opts *o)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *bk = gsd_exec_backend(g->x)->name;
    if (o->cluster) {
        gs_cluster *none = NULL;
        int rc = gsd_exec_cluster(g->x, g->c, &none, &d);
        gs_cluster_destroy(none);
        if (rc) {
            gsd_log("cluster %s does not match what executor %s manages: %s", o->cluster, bk,
                    d.msg[0] ? d.msg : gs_strerror(rc));
            return -1;
        }
        return 0;
    }
    if (gsd_exec_cluster(g->x, NULL, &g->c, &d) || !g->c) {
        gsd_log("cluster: executor %s cannot describe its cluster: %s", bk,
                d.msg[0] ? d.msg : "no cluster");
        return -1;
    }
    gsd_log("cluster from executor %s: %zu node(s), %zu GPU(s)", bk, gs_cluster_nnodes(g->c),
            gs_cluster_ngpus(g->c));
    return 0;
}

static char *default_state_dir(const char *db)
{
    size_t n = strlen(db);
    char *s = malloc(n + 4);
    if (!s) abort();
    if (n > 3 && !strcmp(db + n - 3, ".db"))
        snprintf(s, n + 4, "%.*s.d", (int)(n - 3), db);
    else
        snprintf(s, n + 4, "%s.d", db);
    return s;
}

static void write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f) {
        gsd_log("cannot write port file '%s': %s", path, strerror(errno));
        return;
    }
    fprintf(f, "%d\n", port);
    fclose(f);
    if (rename(tmp, path) != 0) gsd_log("cannot write port file '%s': %s", path, strerror(errno));
}

static void release_all(gsd_sched *g)
{
    gsd_http_stop(&g->sh);
    gsd_gpuh_release(g);          /* its thread writes the wake pipe: stopped before it is closed */
    gsd_evbus_destroy(g->sh.bus); /* after the HTTP threads (their streams) are gone */
    g->sh.bus = NULL;
    gsd_snap_put(g->sh.snap);
    g->sh.snap = NULL;
    gsd_store_close(g->sh.store);
    gsd_exec_destroy(g->x);
    gs_engine_destroy(g->e);
    gs_goodput_destroy(g->goodput);
    gs_cluster_destroy(g->c);
    gsd_auth_destroy(g->sh.auth);
    gsd_jx_release(g);
    free(g->fq);
    free(g->waitv);
    free(g->rqholdv);
    free(g->leasev);
    for (size_t i = 0; i < g->nchunk; i++) gsd_chunk_put(g->chunk[i]);
    free(g->chunk);
    free(g->chunk_dirty);
    free(g->chunk_nactive);
    free(g->dirtyv);
    free(g->runv);
    free(g->vcstat);
    free(g->recs);
    free(g->forget);
    free(g->pins);
    free(g->nodest);
    free(g->node_first);
    for (size_t i = 0; i < g->nxq; i++) {
        free(g->xq[i].ext);
        free(g->xq[i].why);
    }
    free(g->xq);
    free(g->gone);
    for (size_t i = 0; i < g->ntput; i++) {
        free(g->tput[i].handle);
        free(g->tput[i].gpus);
    }
    free(g->tput);
    gsd_strset_release(&g->strs);
    free(g->state_dir);
    free(g->log_dir);
    if (g->sh.wake[0] >= 0) close(g->sh.wake[0]);
    if (g->sh.wake[1] >= 0) close(g->sh.wake[1]);
    pthread_mutex_destroy(&g->sh.qmu);
    pthread_cond_destroy(&g->sh.qdone);
    pthread_mutex_destroy(&g->sh.snapmu);
}

int gsd_serve(const gsd_opts *o)
{
    gsd_sched g;
    memset(&g, 0, sizeof g);
    g.sh.o = *o;
    g.sh.wake[0] = g.sh.wake[1] = -1;
    pthread_mutex_init(&g.sh.qmu, NULL);
    pthread_mutex_init(&g.sh.snapmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g.sh.qdone, &ca);
    pthread_condattr_destroy(&ca);
    gsd_metrics_init(&g.m);
    g.sh.started = gsd_wall_now();
    signal(SIGHUP, SIG_IGN); /* until on_signal is installed: a hangup during start-up is no stop */
    int exit_code = 2;
    if (o->log_file) {
        char err[512];
        if (gsd_log_open(o->log_file, err, sizeof err)) {
            gsd_log("%s", err); /* still stderr */
            goto out;
        }
    }
    gs_diag d;
    gs_diag_init(&d, NULL);
    char msg[1024];

    /* the executor's backend first: the engine must know what it cannot carry out, and a
     * cluster backend describes the cluster (then the engine is made once the executor is) */
    const gsd_exec_ops *xops = o->executor_ops;
    gs_diag_init(&d, NULL);
    if (!xops && gsd_exec_lookup(o->executor, &xops, &d)) {
        gsd_log("%s", d.msg);
        goto out;
    }
    int cluster_exec = (xops->caps & GSD_XCAP_CLUSTER) != 0, discovered = 0;
    /* cluster: declared, from a cluster backend, or discovered through NVML */
    if (o->cluster) {
        gs_diag_init(&d, o->cluster);
        if (gs_cluster_load(o->cluster, &g.c, &d)) {
            gs_diag_format(&d, msg, sizeof msg);
            gsd_log("cluster: %s", msg);
            goto out;
        }
    } else if (!cluster_exec && gsd_nvml_cluster(&g.c, &d)) {
        gsd_log("no cluster: %s; give --cluster SPEC (e.g. --cluster 1x4 for four fake GPUs)",
                d.msg);
        goto out;
    } else if (!cluster_exec) {
        discovered = 1; /* the GPU health watch is on by default (gpuhealth.c) */
    }
    if (o->tokens) {
        gs_diag_init(&d, o->tokens);
        if (gsd_auth_load(o->tokens, &g.sh.auth, &d)) {
            gs_diag_format(&d, msg, sizeof msg);
            gsd_log("tokens file: %s", msg);
            goto out;
        }
    }
    /* database and executor (then the engine: it is told what the executor can do here) */
    g.state_dir = o->state_dir ? gsd_xstrdup(o->state_dir) : default_state_dir(o->db);
    gs_diag_init(&d, NULL);
    if (gsd_store_open(o->db, o->sync_full, &g.sh.store, &d)) {
        gsd_log("%s", d.msg);
        goto out;
    }
    if (gsd_store_immutable(g.sh.store))
        gsd_log("database %s opened read-only: it cannot be written (disk full?); starting in "
                "read-only mode",
                o->db);
    if (gsd_store_upgraded_from(g.sh.store))
        gsd_log("database %s upgraded from schema version %d to %d", o->db,
                gsd_store_upgraded_from(g.sh.store), GSD_SCHEMA_VERSION);
    g.log_dir = o->log_dir ? gsd_xstrdup(o->log_dir) : gsd_default_log_dir(g.sh.store, o->db, &d);
    if (!g.log_dir) {
        gsd_log("%s", d.msg);
        goto out;
    }
    /* the wake pipe before the executor: a backend's threads may wake the loop at once */
    if (pipe(g.sh.wake) != 0) {
        gsd_log("pipe: %s", strerror(errno));
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(g.sh.wake[i], F_SETFL, fcntl(g.sh.wake[i], F_GETFL) | O_NONBLOCK);
        fcntl(g.sh.wake[i], F_SETFD, FD_CLOEXEC);
    }
    gsd_runas_conf_init(&g.sh.runas, geteuid(), o->single_user, o->allow_root_jobs);
    gsd_exec_conf xc = {.state_dir = g.state_dir,
                        .self_exe = o->self_exe ? o->self_exe : "/proc/self/exe",
                        .pass_env = o->pass_env,
                        .npass_env = o->npass_env,
                        .log_cap = o->log_cap,
                        .log_dir = g.log_dir,
                        .switch_users = g.sh.runas.switch_users,
                        .allow_root = g.sh.runas.allow_root,
                        .cgroup = o->cgroup,
                        .log = exec_log,
                        .wake = exec_wake,
                        .wake_ud = &g.sh,
                        .opts = o->executor_opts,
                        .nopts = o->nexecutor_opts};
    if (gsd_exec_create_ops(xops, &xc, &g.x, &d)) {
        gsd_log("%s", d.msg);
        goto out;
    }
    g.sh.xlog = g.x;
    if ((cluster_exec && exec_cluster(&g, o)) || make_engine(&g, o, xops)) goto out;
    size_t machines = 0; /* node names: a machine in several HiveD chains is one per chain */
    for (size_t i = 0; g.node_first && i < gs_cluster_nnodes(g.c); i++)
        machines += g.node_first[i] == (int32_t)i;
    if (machines > 1 && !gsd_exec_can(g.x, GSD_XCAP_MULTINODE))
        gsd_log("executor %s runs every task on this machine: the %zu nodes of the cluster are "
                "a model",
                gsd_exec_backend(g.x)->name, machines);
    char *abs = realpath(g.state_dir, NULL);
    if (abs) {
        free(g.state_dir);
        g.state_dir = abs;
    }
    if ((abs = realpath(g.log_dir, NULL))) {
        free(g.log_dir);
        g.log_dir = abs;
    }
    exit_code = 1;
    /* events: the bus starts after the last stored event (recovery's own are streamed) */
    int64_t last_seq = 0;
    gsd_evbus_limits evl = {o->max_streams, o->max_streams_per_user,
                            (o->max_conn_per_client ? o->max_conn_per_client : 64) / 2};
    if (gsd_store_event_seq_max(g.sh.store, &last_seq) ||
        !(g.sh.bus = gsd_evbus_create(0, last_seq, &evl))) {
        gsd_log("cannot start the event bus: %s", gsd_store_errmsg(g.sh.store));
        goto out;
    }
    if (gsd_recover(&g, &d)) {
        gsd_log("recovery failed: %s", d.msg);
        goto out;
    }
    if (gsd_gpuh_setup(&g, discovered)) {
        exit_code = 2;
        goto out;
    }
    gsd_publish(&g, gsd_wall_now());
    /* signals, then HTTP */
    g_sig_stop = 0;
    g_sig_hup = 0;
    g_wake_fd = g.sh.wake[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    gs_diag_init(&d, NULL);
    if (gsd_http_start(&g.sh, &d)) {
        gsd_log("%s", d.msg);
        exit_code = 2;
        goto out;
    }
    char where[600] = "", tcp[300] = "";
    if (o->listen) {
        snprintf(tcp, sizeof tcp, "%s", o->listen);
        char *pc = strrchr(tcp, ':');
        if (pc) snprintf(pc + 1, sizeof tcp - (size_t)(pc + 1 - tcp), "%d", g.sh.port);
    }
    snprintf(where, sizeof where, "%s%s%s%s%s", o->socket ? "unix:" : "",
             o->socket ? o->socket : "", o->socket && o->listen ? " and " : "",
             o->listen ? "http://" : "", tcp);
    gsd_log(
        "serving on %s: policy %s, %zu node(s), %zu GPU(s), database %s, state %s, logs %s, %s%s",
        where, gs_engine_policy_name(g.e), gs_cluster_nnodes(g.c), gs_cluster_ngpus(g.c), o->db,
        g.state_dir, g.log_dir, o->socket ? "socket: users by peer credentials" : "",
        !o->listen  ? ""
        : g.sh.auth ? (o->socket ? "; TCP: bearer tokens" : "TCP: bearer tokens")
        : o->socket ? "; TCP: NO AUTHENTICATION (--insecure-tcp)"
                    : "TCP: NO AUTHENTICATION (--insecure-tcp)");
    if (g.sh.runas.switch_users)
        gsd_log("jobs run as their owners' Unix accounts%s",
                g.sh.runas.allow_root ? " (root's jobs too: --allow-root-jobs)"
                                      : "; jobs of root are refused");
    else if (geteuid() == 0)
        gsd_log("single-user mode (--single-user): every job runs as root");
    else
        gsd_log("single-user mode: every job runs as this daemon's user (uid %lld)",
                (long long)geteuid());
    if (o->port_file && o->listen) write_port_file(o->port_file, g.sh.port);

    gs_time next = GS_TIME_MAX, last_heartbeat = gsd_wall_now();
    while (!g_sig_stop && !g.fatal) {
        gs_time now = gsd_wall_now();
        gs_time until = next < now + GS_SEC ? next : now + GS_SEC;
        gs_time within = gsd_exec_poll_within(g.x);
        if (within != GS_TIME_MAX && until > now + within) until = now + within;
        int ms = until <= now ? 0 : (int)((until - now + 999) / 1000);
        struct pollfd pfd = {g.sh.wake[0], POLLIN, 0};
        int pr = poll(&pfd, 1, ms);
        if (pr > 0) {
            char buf[256];
            while (read(g.sh.wake[0], buf, sizeof buf) > 0) {
            }
        }
        if (g_sig_stop) break;
        if (g_sig_hup) {
            g_sig_hup = 0;
            on_hup(&g);
        }
        now = gsd_wall_now();
        int hb = now - last_heartbeat >= GS_SEC;
        if (hb) last_heartbeat = now;
        next = gsd_cycle(&g, hb);
    }
    exit_code = g.fatal ? 1 : 0;
    gsd_log("shutting down%s: %zu run(s) keep running and will be adopted at the next start",
            g.fatal ? " after a fatal error" : "", gsd_exec_nruns(g.x));
    /* issue 16, accounting: final jobs whose memory was given back (acct.c) */
    gsd_log("%lld finished job(s) forgotten since the start: their memory was given back",
            (long long)g.forgotten);
    pthread_mutex_lock(&g.sh.qmu);
    g.sh.stopping = 1;
    gsd_cmd *left = g.sh.qhead;
    g.sh.qhead = g.sh.qtail = NULL;
    pthread_mutex_unlock(&g.sh.qmu);
    for (gsd_cmd *c = left; c; c = c->next)
        gsd_cmd_fail(c, 503, GS_ESTATE, "the daemon is shutting down");
    gsd_answer(&g, left);
    gsd_read_only_shutdown(&g);
out:
    g_wake_fd = -1;
    /* a daemon that did not start leaves no empty log directory behind (under /var/log) */
    if (exit_code && g.log_dir) rmdir(g.log_dir);
    release_all(&g);
    return exit_code;
}
