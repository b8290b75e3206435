/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsd.h - what the daemon's HTTP side shares with its scheduler thread (not
 * installed): the shared part of the daemon object, the immutable snapshot
 * HTTP threads read, and the commands they post.  http.c and metrics.c see
 * only this header; the scheduler thread's own state is declared in
 * gsd_sched.h, which they do not include, so the compiler keeps HTTP code
 * away from it.
 *
 * Threads and what they own:
 *   scheduler thread (the one that called gsd_serve): the engine, the
 *     cluster, the executor, the database writer, every gsd_jobx, the
 *     metrics being accumulated (struct gsd_sched, gsd_sched.h).  Nothing
 *     else touches them.
 *   HTTP threads (libmicrohttpd, one per connection): parse and validate a
 *     request, then either read the current snapshot (gsd_snap_get) and
 *     committed rows (database readers), or post a gsd_cmd and wait for the
 *     scheduler thread to answer it after the cycle's commit.  They use only
 *     struct gsd below.
 *
 * Shared state (struct gsd) and its guard:
 *   o, auth, runas, started   set before the HTTP threads start, read-only after
 *               (the auth object's entries are swapped by a SIGHUP reload under
 *               its own lock: gsd_auth_reload)
 *   xlog        the executor, const: HTTP threads call only its thread-safe
 *               calls (gsd_exec_log_path, gsd_exec_log_open, gsd_exec_task_pid);
 *               the scheduler thread drives it through its own, non-const pointer
 *   store       only its read side (gsd_store_reader) from HTTP threads; the
 *               writer belongs to the scheduler thread
 *   qmu         the command queue, cmd->done / cmd->abandoned, stopping, the
 *               read-only mode's since / why (read_only itself is atomic)
 *   snapmu      the published snapshot pointer (snapshots are immutable,
 *               reference counted; the last gsd_snap_put frees)
 *   wake pipe   written by HTTP threads and signal handlers to wake the
 *               scheduler thread
 *   mhd, mhd_local, port, sock_path   set by gsd_http_start, before the scheduler
 *               loop runs
 *   net         connection admission and rate limits: its own mutex (conn.c)
 *
 * Strings in a snapshot point into the cluster (node names, GPU types), the
 * engine and its policy (job names, users, VCs, reasons, declared VCs:
 * interned or static) and the scheduler's interned strings (queue texts),
 * which all live until every HTTP thread has stopped.
 *
 * Queues: the daemon knows no policy by name.  The scheduler thread asks the
 * engine (which asks the policy, gsched/policy.h) for each pending job's
 * queue and key, its queue's text, its reason and each VC's guarantee when
 * it builds the views; HTTP threads only compare what the views hold.
 */
#ifndef GSCHED_DAEMON_GSD_H
#define GSCHED_DAEMON_GSD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "auth.h"
#include "daemon.h"
#include "exec.h"
#include "ident.h"
#include "spec.h"
#include "store.h"

/* ---- metrics -------------------------------------------------------------------------------- */

#define GSD_HMAX 20

typedef struct gsd_hist {
    int nb;               /* finite buckets */
    const double *bounds; /* upper bounds in seconds, ascending */
    uint64_t b[GSD_HMAX]; /* counts per bucket (not cumulative) */
    uint64_t inf;         /* above the last bound */
    uint64_t count;
    double sum;
} gsd_hist;

typedef struct gsd_metrics {
    uint64_t submitted;
    uint64_t finished[GS_JOB_NSTATES]; /* DONE, FAILED, CANCELLED, REJECTED since start */
    uint64_t preemptions, requeues, launches, launch_failures, kills, cycles;
    uint64_t commits;
    /* checkpoint-based suspend (issue 17): done, and failed (then stopped, requeued) */
    uint64_t ckpt_suspends, ckpt_resumes, ckpt_failures;
    gsd_hist wait, jct, cycle, commit;
    gsd_hist ckpt; /* time of each checkpoint or restore */
} gsd_metrics;

/* metrics.c: counters and histograms are filled by the scheduler thread (struct gsd_sched) and
 * copied into each snapshot; HTTP threads read only the copies. */
void gsd_metrics_init(gsd_metrics *m);
void gsd_hist_observe(gsd_hist *h, double seconds);

/* ---- snapshot ------------------------------------------------------------------------------- */

typedef struct gsd_jview {
    int64_t id, group;
    int32_t task_index;
    const char *name, *user, *vc, *reason;
    gs_queue_key q;    /* pending: its queue and order there, as the policy says */
    const char *qtext; /* pending: that queue's text ("in VC a (by submission)"), interned */
    int32_t state, priority, ntasks, gpus_per_task, gpus, gang;
    int32_t runs, preemptions;
    int32_t stop; /* GSD_STOP_* in progress */
    gs_time submit, first_start, last_start;
    gs_time time_limit; /* the spec's; 0 = none */
    gs_time executed;   /* time holding GPUs over the closed runs */
    char where[64];     /* placement summary "n0:0-3 n1:0-3" (truncated with "...") */
    char members[48];   /* tasks of different sizes (issue 14): "2+1" (gsd_spec_gpus_text); ""
                           when every task has gpus_per_task */
    /* elastic jobs (max_gpus > 0; issue 13) */
    int32_t min_gpus, max_gpus;
    int32_t generation, rescales, failures;
    int32_t target_gpus; /* DRAINING: the size it goes to (0: back to pending) */
    int32_t launching;   /* RUNNING and no hint of this generation yet (LAUNCHING) */
    int64_t hints, hints_bad, ckpt_step; /* hints read, lines ignored, last checkpoint (-1) */
    int64_t model_hints; /* hints the goodput model took (-1: the job has no model) */
    /* job arrays (issue 16) */
    int64_t array_id;   /* the array it is an element of (its first job's id); 0 = none */
    int32_t array_task; /* its index there */
} gsd_jview;

typedef struct gsd_nview {
    const char *name;
    int32_t gpus, alloc, down, gpu_lo, gpu_hi;
    int32_t cpus, free_cpus, mem_mb, free_mem_mb;
    const char *drain;     /* drained: why no new job starts here (interned); NULL = in service */
    int32_t outside;       /* GPUs taken out of service for work gsched does not schedule */
    int32_t outside_asked; /* GPUs the cluster manager says foreign work uses (>= outside) */
    const char *mgr;       /* the cluster manager's state ("up", "drained", "down"); NULL
                              without a cluster backend */
    const char *mgr_why;   /* its reason, NULL = none */
    const char *bad;       /* marked bad (gsched node bad): the reason; NULL = not bad */
    gs_time bad_since;     /* when it was marked bad */
    /* an admin's drain or down (gsched node drain|down; nodeadm.c) */
    const char *admin;     /* "drain", "down", or NULL (in service as far as the admin goes) */
    const char *admin_why; /* its reason (NULL none), who set it and when */
    const char *admin_by;
    gs_time admin_since;
    const char *chain;     /* HiveD: the chain (top cell type) of this node cell; else NULL */
    const char *cell_type; /* HiveD: its cell type; else NULL */
    int32_t first;         /* index of the first node cell with this name (a machine in several
                              chains is one node cell per chain); itself for the first */
    int32_t ncells;        /* node cells with this name (1 unless in several chains) */
    int32_t unhealthy;     /* GPUs the GPU health watch finds unhealthy (gpuhealth.c) */
} gsd_nview;

typedef struct gsd_gview {
    int64_t job; /* owning job id, -1 if free */
    int32_t node, local, down;
    int32_t outside; /* taken out of service for work gsched does not schedule */
    const char *type;
    /* GPU health (gpuhealth.c, issue 17): the last reading; -1 where NVML does not say */
    int8_t health;          /* 0 not watched, 1 healthy, 2 unhealthy */
    const char *health_why; /* unhealthy: why (interned); NULL otherwise */
    gs_time health_since;   /* when the verdict last changed (0: never) */
    int32_t temp_c, util, xid_last;
    int64_t mem_used, mem_total, ecc_uncorrected, xid_total;
} gsd_gview;

typedef struct gsd_vcview {
    const char *name;
    int64_t guaranteed; /* GPUs the policy promises (HiveD cells, quotas=...), -1 = none */
    int64_t allocated;  /* GPUs held by its running jobs */
    int32_t running, pending;
    int64_t pending_gpus;
} gsd_vcview;

/*
 * Job views come in immutable chunks of up to 256 engine slots, shared by
 * consecutive snapshots: a cycle rebuilds only the chunks whose jobs changed
 * (plus all of them every 100 ms, for pending reasons policies change
 * without a record), so publishing costs what changed, not the queue length.
 */
#define GSD_CHUNK_BITS 8
typedef struct gsd_chunk {
    atomic_int refs;
    int n;
    gsd_jview v[]; /* active jobs of the slot range, ascending id */
} gsd_chunk;

/* The view queue of pending jobs not yet eligible (held, waiting on dependencies): no
 * position, no policy queue. */
#define GSD_QUEUE_WAIT INT32_MIN

/* Distinct VC names the daemon accepts (each is a listing row, a metrics label). */
#define GSD_MAX_VCS 1024

/* Order of pending views by (queue, key, id) as their policy set them: < 0 when a sorts
 * first; two views wait in the same queue when a->q.queue == b->q.queue. */
int gsd_view_cmp(const gsd_jview *a, const gsd_jview *b);

/* The cluster's topology (issue 16, dashboard: GET /v1/cluster): its cells in depth-first
 * pre-order as the cluster model has them (gsched/cluster.h: pools, racks, nodes, sockets,
 * PCIe switches, GPU leaves).  Immutable: built at the first publish and shared by every
 * snapshot (reference counted; the last snapshot's put frees it). */
typedef struct gsd_tcell {
    const char *name; /* the cell's address (node or rack name; "" for a GPU leaf), interned by
                         the cluster */
    int32_t parent;   /* -1 for the root */
    int32_t end;      /* the index after its subtree: its children are i + 1, then end of each */
    int32_t node;     /* a node cell: its index in nodes[]; else -1 */
    int32_t gpu;      /* a GPU leaf: its index in gpus[]; else -1 */
    int32_t kind;     /* gs_cell_kind */
} gsd_tcell;

typedef struct gsd_topo {
    atomic_int refs;
    size_t n;
    gsd_tcell c[];
} gsd_topo;

typedef struct gsd_snap {
    atomic_int refs;
    gs_time now;
    uint64_t cycle;
    gsd_chunk **chunks; /* references held */
    size_t nchunks;
    const gsd_jview **jobs; /* active (non-final) jobs, ascending id, pointing into chunks */
    size_t njobs;
    gsd_nview *nodes;
    size_t nnodes;
    gsd_gview *gpus;
    size_t ngpus;
    gsd_vcview *vcs;
    size_t nvcs;
    int64_t states[GS_JOB_NSTATES]; /* jobs per state (final states: all in the database) */
    gsd_metrics m;
    double cycle_p50, cycle_p99; /* seconds, over the last cycles */
    size_t cycle_window;
    /* queue positions parallel to jobs (gsd_snap_positions): computed once, by the first
     * reader that needs them, under posmu; never written again */
    pthread_mutex_t posmu;
    int32_t *pos;
    gsd_topo *topo; /* the cluster's cells (a reference held) */
} gsd_snap;

/* ---- commands ------------------------------------------------------------------------------- */

typedef enum gsd_cmd_kind {
    GSD_CMD_SUBMIT,
    GSD_CMD_DRYRUN,
    GSD_CMD_CANCEL,
    GSD_CMD_HOLD,
    GSD_CMD_RELEASE,
    GSD_CMD_RESIZE,
    GSD_CMD_NODE_BAD, /* an admin marks a node bad / good (gsched node bad|good) */
    GSD_CMD_NODE_GOOD,
    /* issue 16 lanes: each adds its kinds under its own marker (payload in args) */
    /* node administration: drain / resume / down */
    GSD_CMD_NODE_DRAIN, /* an admin drains / resumes / downs a node (nodeadm.c): node, why */
    GSD_CMD_NODE_RESUME,
    GSD_CMD_NODE_DOWN,

    /* job control: update, requeue, withdraw (hold of a queued job), run */
    GSD_CMD_REQUEUE, /* stop a running job, back to the queue (args {"hold": bool}) */
    GSD_CMD_UPDATE,  /* change a job (args: the PATCH body, checked by the HTTP thread) */
    GSD_CMD_LEASE,   /* gsched run: renew an interactive job's lease (args {"seconds": N}?) */
    GSD_CMD_STDIN,   /* gsched run: bytes for its stdin (args {"data": BYTES, "eof": bool}) */

    /* accounting: retention purge */

    /* arrays */

    GSD_CMD_NKINDS
} gsd_cmd_kind;

typedef struct gsd_cmd {
    struct gsd_cmd *next;
    gsd_cmd_kind kind;
    /* input */
    gsd_spec spec; /* SUBMIT, DRYRUN (owned) */
    char *spec_json;
    char *idem_key;
    char idem_hash[65];
    int64_t job_id; /* CANCEL, HOLD, RELEASE, RESIZE: the job; SUBMIT: the new job's id */
    int gpus;       /* RESIZE: the size asked for */
    char node[256]; /* NODE_*: the node's name */
    char why[256];  /* NODE_*: the reason given ("" none) */
    json_t *args;   /* issue-16 kinds: their parameters (owned; freed by gsd_cmd_free) */
    char user[GSD_USER_MAX];
    int admin;
    int authn;   /* how user was established: GSD_AUTHN_* */
    int64_t uid; /* GSD_AUTHN_PEER: the client's Unix uid; -1 otherwise */
    /* output (set by the scheduler thread; valid once done) */
    int done, abandoned;
    int status;       /* HTTP status */
    int err;          /* GS_E* for problem bodies, 0 on success */
    char detail[512]; /* problem detail */
    json_t *result;   /* success body (owned by the command) */
} gsd_cmd;

/* GSD_STOP_DRAIN: an elastic job's generation checkpoints for a rescale (docs/elastic.md);
 * GSD_STOP_SUSPEND_FAILED: its checkpoint-based suspend failed, stopped to be requeued;
 * GSD_STOP_GPU_FAULT: suspended, and a GPU it can resume only on went bad: stopped to be
 * requeued (gpuhealth.c) */
enum {
    GSD_STOP_NONE = 0,
    GSD_STOP_PREEMPT,
    GSD_STOP_CANCEL,
    GSD_STOP_TIMEOUT,
    GSD_STOP_FAILED,
    GSD_STOP_DRAIN,
    GSD_STOP_SUSPEND_FAILED,
    GSD_STOP_GPU_FAULT
};
const char *gsd_stop_name(int stop); /* NULL for NONE */

/* ---- the shared part of the daemon ---------------------------------------------------------- */

typedef struct gsd {
    gsd_opts o;
    const gsd_exec *xlog; /* log access (thread-safe calls only); same object as gsd_sched.x */
    gsd_store *store;
    gsd_auth *auth;               /* NULL: no authentication */
    gsd_runas_conf runas;         /* who jobs run as (ident.h) */
    struct MHD_Daemon *mhd;       /* TCP listener (--listen), or NULL */
    struct MHD_Daemon *mhd_local; /* Unix socket listener (--socket), or NULL */
    struct gsd_net *net;          /* connection admission and rate limits (conn.c) */
    int port;
    int loopback;        /* listening on a loopback address: Host must name it (http.c) */
    char sock_path[108]; /* the socket this daemon created ("" none); unlinked at stop */
    gs_time started;
    /* command queue */
    pthread_mutex_t qmu;
    pthread_cond_t qdone;
    gsd_cmd *qhead, *qtail;
    int stopping;
    /* read-only mode (disk.c): the database cannot be written; set by the scheduler thread,
     * read by HTTP threads (health, nodes); ro_since and ro_why under qmu */
    atomic_int read_only;
    gs_time ro_since;
    char ro_why[256];
    int wake[2];
    /* snapshot */
    pthread_mutex_t snapmu;
    gsd_snap *snap;
    /* the event bus (evbus.h: its own mutex); created before recovery, destroyed after the
     * HTTP threads are gone */
    struct gsd_evbus *bus;
} gsd;

/* commands.c */
/* Post a command and wait for the answer (up to timeout_ms); returns 0, or GS_ESTATE when the
 * daemon is stopping / did not answer in time (cmd then belongs to the scheduler thread). */
int gsd_post(gsd *g, gsd_cmd *cmd, int timeout_ms);
void gsd_cmd_free(gsd_cmd *cmd);

/* snapshot.c */
gsd_snap *gsd_snap_get(gsd *g);
void gsd_snap_put(gsd_snap *s);
/* Position in its queue (see gsd_view_cmp) of a pending job of the snapshot (1-based), 0 if
 * not pending or not yet eligible (held, waiting on dependencies: in no queue). */
int gsd_snap_position(gsd_snap *s, const gsd_jview *v);
/* The positions of every job of the snapshot, parallel to s->jobs (0: in no queue), computed
 * once per snapshot (the first call sorts; later calls return the same array). */
const int32_t *gsd_snap_positions(gsd_snap *s);
const gsd_jview *gsd_snap_find(const gsd_snap *s, int64_t id);
/* Index of job id in s->jobs, or -1. */
long gsd_snap_index(const gsd_snap *s, int64_t id);

/* disk.c: 1 if the daemon is read-only; then since / why (may be NULL) are filled. */
int gsd_read_only_state(gsd *g, gs_time *since, char *why, size_t cap);

/* util.c */
void gsd_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Open (create 0600, append) the daemon's log file and make it stderr, where gsd_log writes;
 * the previous one is closed.  On SIGHUP again, after logrotate moved it.  0, or GS_EIO with
 * the reason in err (the previous log stays in use). */
int gsd_log_open(const char *path, char *err, size_t cap);
gs_time gsd_wall_now(void);
/* Format a wall-clock time as RFC 3339 UTC into buf. */
void gsd_time_str(gs_time t, char *buf, size_t cap);
/* A name with an index; gsd_named_cmp orders them by name, then index (qsort), so equal names
 * sit together (node cells of one machine, GPUs of one identity). */
typedef struct gsd_named {
    const char *name;
    int32_t ix;
} gsd_named;
int gsd_named_cmp(const void *a, const void *b);

/* local.c: the Unix socket.  A listening socket at path (mode 0666 when world, else 0600),
 * or < 0 with d set; the peer's uid of a connected Unix socket (0 or -1).  (A peer's user
 * name: gsd_peer_name, ident.h.) */
int gsd_local_listen(const char *path, int world, gs_diag *d);
int gsd_peer_uid(int fd, uid_t *uid);

/* conn.c: connection admission and rate limits (see its header comment). */
#define GSD_AUTHFAIL_BURST        10  /* failed token checks a client key may make at once */
#define GSD_AUTHFAIL_RATE         1.0 /* ... and per second after that */
#define GSD_AUTHFAIL_GLOBAL_BURST 30  /* failed token checks of all clients together at once */
#define GSD_AUTHFAIL_GLOBAL_RATE  5.0 /* ... and per second after that */
typedef struct gsd_net gsd_net;
typedef struct gsd_conn {
    struct gsd_conn *prev, *next;
    int fd;
    int local;     /* on the Unix socket */
    uid_t uid;     /* local: the peer's uid ((uid_t)-1 unknown) */
    char addr[48]; /* TCP: the client's address */
    double t0;     /* when it began waiting for its (next) request head */
    int head;      /* a request head arrived; its request is not finished */
    int cut;       /* shut down by admission or the header watchdog */
} gsd_conn;
int gsd_net_start(gsd *g, gs_diag *d);
void gsd_net_stop(gsd *g);
#ifdef MHD_VERSION /* files that include <microhttpd.h> first */
/* MHD_OPTION_NOTIFY_CONNECTION callback (cls: the gsd): admission on STARTED. */
void gsd_net_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                    enum MHD_ConnectionNotificationCode code);
gsd_conn *gsd_net_conn(struct MHD_Connection *c);
#endif
void gsd_net_head(gsd *g, gsd_conn *k); /* a request head arrived */
void gsd_net_done(gsd *g, gsd_conn *k); /* its request finished: the head clock restarts */
/* Seconds this client must wait before its next token check (0: may try now); record a
 * failed check. */
int gsd_net_authfail_wait(gsd *g, const gsd_conn *k);
void gsd_net_authfail(gsd *g, const gsd_conn *k);
/* Take one submit of user's --submit-rate bucket: 0, or the seconds until one is free. */
int gsd_net_submit_wait(gsd *g, const char *user);
void gsd_net_counts(gsd *g, uint64_t *refused, uint64_t *closed_slow);

/* http.c */
/* "anonymous", "claimed", "token", "peer": a GSD_AUTHN_* (ident.h) as GET /v1/health shows it. */
const char *gsd_authn_name(int authn);
int gsd_http_start(gsd *g, gs_diag *d);
void gsd_http_stop(gsd *g);

/* metrics.c */
char *gsd_metrics_text(const gsd *g, const gsd_snap *s, size_t *len);

/* samples.c (issue 16, dashboard): the cluster's state as a snapshot shows it, one row of the
 * samples table (GET /v1/stats); vcs is a JSON object {VC: {guaranteed, allocated, running,
 * pending, pending_gpus}} of the VCs with a guarantee or jobs (new reference). */
void gsd_sample_of(const gsd_snap *s, gsd_sample *out, json_t **vcs);

#endif
