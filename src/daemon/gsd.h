/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsd.h - internals shared by the daemon's files (not installed).
 *
 * Threads and what they own:
 *   scheduler thread (the one that called gsd_serve): the engine, the
 *     cluster, the executor, the database writer, every gsd_jobx, the
 *     metrics being accumulated.  Nothing else touches them.
 *   HTTP threads (libmicrohttpd, one per connection): parse and validate a
 *     request, then either read the current snapshot (gsd_snap_get) and
 *     committed rows (database readers), or post a gsd_cmd and wait for the
 *     scheduler thread to answer it after the cycle's commit.
 *
 * Shared state and its guard:
 *   g->qmu      the command queue, cmd->done / cmd->abandoned, g->stopping
 *   g->snapmu   the published snapshot pointer (snapshots are immutable,
 *               reference counted; the last gsd_snap_put frees)
 *   wake pipe   written by HTTP threads and signal handlers to wake the
 *               scheduler thread
 *
 * Strings in a snapshot point into the cluster (node names, GPU types) and
 * the engine (job names, users, VCs, reasons: interned or static), which
 * both live until every HTTP thread has stopped.
 */
#ifndef GSCHED_DAEMON_GSD_H
#define GSCHED_DAEMON_GSD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "auth.h"
#include "daemon.h"
#include "exec.h"
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
    gsd_hist wait, jct, cycle, commit;
} gsd_metrics;

void gsd_metrics_init(gsd_metrics *m);
void gsd_hist_observe(gsd_hist *h, double seconds);

/* ---- snapshot ------------------------------------------------------------------------------- */

typedef struct gsd_jview {
    int64_t id, group;
    int32_t task_index;
    const char *name, *user, *vc, *reason;
    int32_t state, priority, ntasks, gpus_per_task, gpus, gang;
    int32_t runs, preemptions;
    int32_t stop; /* GSD_STOP_* in progress */
    gs_time submit, first_start, last_start;
    char where[64]; /* placement summary "n0:0-3 n1:0-3" (truncated with "...") */
} gsd_jview;

typedef struct gsd_nview {
    const char *name;
    int32_t gpus, alloc, down, gpu_lo, gpu_hi;
    int32_t cpus, free_cpus, mem_mb, free_mem_mb;
} gsd_nview;

typedef struct gsd_gview {
    int64_t job; /* owning job id, -1 if free */
    int32_t node, local, down;
    const char *type;
} gsd_gview;

typedef struct gsd_vcview {
    const char *name;
    int64_t guaranteed; /* GPUs promised (HiveD cells or quotas=...), -1 = none */
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

/*
 * The queue a pending job waits in, and its place there, as the policy orders jobs (so POS
 * and "position N" mean what the policy will do):
 *   GLOBAL       one queue in submission order (fifo, fifo-backfill; las, tiresias-*,
 *                srtf, srsf and sjf too, which then reorder it by attained service or by
 *                expected run time: for them the position is the submission order);
 *   VC           one queue per VC in submission order (yarn-cs, quota);
 *   VC_PRIORITY  one queue per VC by priority, then submission (hived, private).
 */
enum { GSD_ORDER_GLOBAL = 0, GSD_ORDER_VC, GSD_ORDER_VC_PRIORITY };

/* Distinct VC names the daemon accepts (each is a queue, a listing row, a metrics label). */
#define GSD_MAX_VCS 1024
int gsd_order_for_policy(const char *policy);
/* 1 if pending jobs (vc, priority, id) a and b wait in the same queue. */
int gsd_queue_same(int order, const char *vca, const char *vcb);
/* 1 if a is ahead of b in their (common) queue. */
int gsd_queue_ahead(int order, int prio_a, int64_t id_a, int prio_b, int64_t id_b);
/* "in the queue (by submission; srtf reorders by expected remaining time)", "in VC x (...)". */
void gsd_queue_text(int order, const char *policy, const char *vc, char *buf, size_t cap);

typedef struct gsd_snap {
    atomic_int refs;
    int order; /* GSD_ORDER_* */
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
} gsd_snap;

/* ---- commands ------------------------------------------------------------------------------- */

typedef enum gsd_cmd_kind { GSD_CMD_SUBMIT, GSD_CMD_DRYRUN, GSD_CMD_CANCEL } gsd_cmd_kind;

typedef struct gsd_cmd {
    struct gsd_cmd *next;
    gsd_cmd_kind kind;
    /* input */
    gsd_spec spec; /* SUBMIT, DRYRUN (owned) */
    char *spec_json;
    char *idem_key;
    char idem_hash[65];
    int64_t job_id; /* CANCEL: the job; SUBMIT: set to the new job's id */
    char user[GSD_USER_MAX];
    int admin;
    /* output (set by the scheduler thread; valid once done) */
    int done, abandoned;
    int status;       /* HTTP status */
    int err;          /* GS_E* for problem bodies, 0 on success */
    char detail[512]; /* problem detail */
    json_t *result;   /* success body (owned by the command) */
} gsd_cmd;

/* ---- per-job daemon state (scheduler thread) ------------------------------------------------ */

enum { GSD_STOP_NONE = 0, GSD_STOP_PREEMPT, GSD_STOP_CANCEL, GSD_STOP_TIMEOUT, GSD_STOP_FAILED };
const char *gsd_stop_name(int stop); /* NULL for NONE */

typedef struct gsd_jobx {
    gsd_spec spec; /* owned; released when the job is final and committed */
    char *spec_json;
    char *idem_key, *idem_hash; /* head of a submission only, until inserted */
    gs_time submit;             /* wall clock */
    int runs;                   /* starts so far (the current run's number) */
    int stop;                   /* GSD_STOP_* */
    const char *cancel_by;      /* interned */
    const char *last_reason;    /* interned: reason of the last record */
    int exit_code;              /* last RUN_DONE exit code, INT32_MIN if none */
    int lost_requeues;          /* requeues because tasks were lost */
    int8_t cat;                 /* counted in its VC as 0 nothing, 1 pending, 2 holding GPUs */
    int8_t seen;                /* state counted in live_states, -1 none */
    int8_t inrun;               /* in g->runv */
    int dirty;                  /* row needs an UPDATE at this cycle's commit (in g->dirtyv) */
    int recovering;             /* re-added after a restart: its SUBMIT record is not news */
    int master_port;
    int active; /* counted in chunk_nactive: not final, or final but not yet published */
    char where[64];
    char *alloc; /* "3,4,5" while holding GPUs */
} gsd_jobx;

/* A record or daemon event collected during a cycle, written at commit, acted on after. */
typedef struct gsd_rec {
    int type; /* gs_rec_type, or GSD_EV_* below */
    int32_t slot;
    gs_time t;
    char reason[200];
} gsd_rec;

enum {
    GSD_EV_BASE = 100,
    GSD_EV_CANCEL_REQ = GSD_EV_BASE, /* cancel requested (running job) */
    GSD_EV_STOPPING,                 /* SIGTERM sent */
    GSD_EV_KILLED,                   /* SIGKILL after the grace period */
    GSD_EV_TASK_EXIT,                /* one task ended */
    GSD_EV_ADOPTED,                  /* restart recovery */
    GSD_EV_TIMEOUT,                  /* time limit reached */
    GSD_EV_LAUNCH_FAIL,              /* a task could not start */
};

typedef struct gsd_taskput {
    int64_t job_id;
    int run, idx;
    int64_t pid, ticks, exit_code;
    char *gpus;
} gsd_taskput;

/* Interned strings that live as long as the daemon (reasons handed to the engine). */
typedef struct gsd_strset {
    char **v;
    size_t n, cap; /* open addressing, cap a power of two */
} gsd_strset;

typedef struct gsd_vcstat {
    int32_t pending, running;
    int64_t pending_gpus, allocated;
} gsd_vcstat;

typedef struct gsd {
    gsd_opts o;
    char *state_dir;
    gs_cluster *c;
    gs_engine *e;
    gsd_store *store;
    gsd_exec *x;
    gsd_auth *auth; /* NULL: no authentication */
    struct MHD_Daemon *mhd;
    int port;
    gs_time started;
    /* command queue */
    pthread_mutex_t qmu;
    pthread_cond_t qdone;
    gsd_cmd *qhead, *qtail;
    int stopping;
    int wake[2];
    /* snapshot */
    pthread_mutex_t snapmu;
    gsd_snap *snap;
    /* scheduler-thread state */
    gsd_jobx *jx; /* by engine slot */
    size_t njx;
    gsd_chunk **chunk; /* current view chunk by slot >> GSD_CHUNK_BITS (NULL: no active job) */
    uint8_t *chunk_dirty;
    int32_t *chunk_nactive;
    size_t nchunk;
    gs_time last_full; /* last rebuild of every chunk */
    int32_t *dirtyv;   /* slots whose row needs an UPDATE */
    size_t ndirty, capdirty;
    int32_t *runv; /* slots that held GPUs at some point (time limits); compacted lazily */
    size_t nrun, caprun;
    gsd_vcstat *vcstat; /* by engine VC index */
    size_t nvcstat;
    int64_t live_states[GS_JOB_NSTATES];
    gsd_rec *recs;
    size_t nrecs, caprecs;
    gsd_taskput *tput;
    size_t ntput, captput;
    int in_recovery;
    gs_time last_now;
    gs_time last_publish;
    int changed;
    gsd_strset strs;
    gsd_metrics m;
    int64_t final_counts[GS_JOB_NSTATES]; /* final jobs in the database */
    double cyc[1024];                     /* recent cycle durations */
    size_t ncyc;
    char **quota_vc; /* quotas=VC:GPUS,... (display of guarantees) */
    int64_t *quota_gpus;
    size_t nquota;
    uint64_t cycle_no;
    int fatal;
    int order;         /* GSD_ORDER_* of the policy */
    size_t meta_njobs; /* jobs when next_id was last written */
    int64_t *forget;   /* runs to forget after the commit */
    size_t nforget, capforget;
} gsd;

/* sched.c */
const char *gsd_intern(gsd *g, const char *s);
/* Post a command and wait for the answer (up to timeout_ms); returns 0, or GS_ESTATE when the
 * daemon is stopping / did not answer in time (cmd then belongs to the scheduler thread). */
int gsd_post(gsd *g, gsd_cmd *cmd, int timeout_ms);
void gsd_cmd_free(gsd_cmd *cmd);
gsd_snap *gsd_snap_get(gsd *g);
void gsd_snap_put(gsd_snap *s);
void gsd_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
gs_time gsd_wall_now(void);
/* Position in its queue (see GSD_ORDER_*) of a pending job of the snapshot (1-based), 0 if not
 * pending. */
int gsd_snap_position(const gsd_snap *s, const gsd_jview *v);
const gsd_jview *gsd_snap_find(const gsd_snap *s, int64_t id);
/* Index of job id in s->jobs, or -1. */
long gsd_snap_index(const gsd_snap *s, int64_t id);

/* http.c */
int gsd_http_start(gsd *g, gs_diag *d);
void gsd_http_stop(gsd *g);
/* Format a wall-clock time as RFC 3339 UTC into buf. */
void gsd_time_str(gs_time t, char *buf, size_t cap);

/* metrics.c */
char *gsd_metrics_text(const gsd *g, const gsd_snap *s, size_t *len);

#endif
