/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsd_sched.h - the scheduler thread's own state and the calls between the
 * daemon's scheduler-side files (not installed; http.c and metrics.c never
 * include it).
 *
 * struct gsd_sched embeds the shared struct gsd (gsd.h) as its first member
 * and adds what only the scheduler thread may touch: the engine, the
 * cluster, the executor, the database writer, the per-job state (gsd_jobx,
 * by engine slot), the snapshot's view chunks, the records and dirty lists
 * of the current cycle and the metrics being accumulated.  The HTTP side is
 * handed &g->sh and cannot reach the rest (the executor only through
 * sh.xlog, a const pointer for its thread-safe log calls).
 *
 * Files of the scheduler side (each keeps the invariants in its header):
 *   serve.c     start-up, options, signals, the loop, shutdown
 *   cycle.c     one scheduling cycle, time limits
 *   commands.c  the command queue; submit / dry run / cancel
 *   events.c    executor events -> engine calls; a cluster backend's node states, outside
 *               use, adoptions and jobs gone; binds and retires queued for after the commit
 *   commit.c    observer records -> rows and events, COMMIT, then act
 *   snapshot.c  views, publishing, queue positions
 *   recovery.c  restart recovery
 *   acct.c      accounting: GPU time per job (issue 16)
 *   wait.c      jobs not yet eligible: held jobs, dependencies
 *   disk.c      the default log directory
 *   drain.c     nodes drained while the executor cannot launch; periodic re-check; every
 *               reason a node is out of service composed (the cluster manager's too)
 *   jobs.c      per-job state: the gsd_jobx array, dirty rows, view chunks, records
 *   samples.c   the cluster over time (samples table) for the dashboard's charts
 *   gpuhealth.c the GPU health watch: its thread reads NVML; the verdicts applied here
 *   util.c      logging, clocks, interning, allocation that aborts
 *   metrics.c   metrics primitives and the Prometheus text (gsd.h only)
 */
#ifndef GSCHED_DAEMON_GSD_SCHED_H
#define GSCHED_DAEMON_GSD_SCHED_H

#include "gsd.h"

/* ---- per-job daemon state (scheduler thread) ------------------------------------------------ */

/* The live state of an elastic job (elastic.c; issue 13).  Durable in jobs.elastic (JSON):
 * what recovery needs to put a job caught DRAINING back exactly so (target, reservation, kind,
 * reason), the engine's counters it restores (generation, rescales, failures), and how far the
 * hints file was read. */
typedef struct gsd_elastic {
    int32_t generation, rescales, failures; /* as the engine last said */
    int32_t from_gpus, target_gpus;         /* DRAINING: k -> k' */
    char *resv;                             /* DRAINING: reserved GPUs "4,5", NULL none */
    int kind;                               /* DRAINING: gs_rescale_kind */
    char *reason;                           /* DRAINING: why */
    gs_time drain_since;                    /* DRAINING: when (wall clock) */
    gs_time drain_timeout;                  /* DRAINING: SIGTERM -> SIGKILL */
    int32_t hint_gen;                       /* generation of the last hint read (LAUNCHING) */
    int64_t hints_off;                      /* bytes of the hints file consumed */
    int64_t hints, hints_bad;               /* lines read, lines ignored (bad) */
    int64_t model_hints;                    /* hints the goodput model took (gs_goodput_hint) */
    int64_t ckpt_step;                      /* last checkpoint step a hint reported, -1 none */
    int skipping;          /* in the middle of a line longer than one read (counted bad once) */
    int64_t step, samples; /* the last hint's */
    double step_time, sync_time;
    int32_t local_bsz, accum;
    char outcome[200]; /* how the drained generation ended (for the RESCALE event) */
    char *json;        /* the durable form, rebuilt when the row is written */
} gsd_elastic;

typedef struct gsd_jobx {
    gsd_spec spec; /* owned; released when the job is final and committed */
    char *spec_json;
    char *idem_key, *idem_hash; /* head of a submission only, until inserted */
    gs_time submit;             /* wall clock */
    int runs;                   /* starts so far (the current run's number) */
    int stop;                   /* GSD_STOP_* */
    const char *cancel_by;      /* interned */
    const char *last_reason;    /* interned: reason of the last record */
    const char *ckpt_why;       /* interned: why its checkpoint-based suspend failed
                                   (GSD_STOP_SUSPEND_FAILED), or why the GPU it left is bad
                                   (GSD_STOP_GPU_FAULT), for the requeue's reason */
    int exit_code;              /* last RUN_DONE exit code, INT32_MIN if none */
    int lost_requeues;          /* requeues because tasks were lost */
    int launch_failures;        /* runs the executor could not start (GSD_XLAUNCH_JOB), since the
                                   daemon started: FAILED at gsd_opts.launch_attempts */
    int8_t cat;                 /* counted in its VC as 0 nothing, 1 pending, 2 holding GPUs */
    int8_t seen;                /* state counted in live_states, -1 none */
    int8_t inrun;               /* in g->runv */
    int8_t accepted;            /* counted in its VC's 'jobs': arrived and not rejected */
    int dirty;                  /* row needs an UPDATE at this cycle's commit (in g->dirtyv) */
    int recovering;             /* re-added after a restart: its SUBMIT record is not news */
    int master_port;
    int active; /* counted in chunk_nactive: not final, or final but not yet published */
    /* not yet eligible (wait.c): deferred in the engine while held or its dependencies wait */
    int8_t held;         /* user hold (Slurm JobHeldUser) */
    int8_t depst;        /* GS_DEP_* of its dependencies as last evaluated */
    int8_t inwait;       /* in g->waitv */
    int8_t rqhold;       /* job control (jobctl.c): requeued with a hold; in g->rqholdv */
    int8_t spec_dirty;   /* job control: an update changed the spec; its columns are written
                            with the dirty row (commit.c) */
    int8_t inlease;      /* gsched run (interactive.c): an interactive job, in g->leasev */
    int32_t lease_s;     /* its lease's length (seconds) */
    gs_time lease_until; /* cancelled when the clock passes it (renewed by its client) */
    struct gsd_wait *w;  /* its dependencies and each term's answer; NULL when none */
    /* job arrays (issue 16; commands.c expands them, wait.c throttles them) */
    int64_t array_id;       /* the array's id (its first element's job id); 0 = not in one */
    int32_t array_task;     /* its index in the array */
    int32_t array_throttle; /* the array's %N: at most N elements running or starting; 0 none */
    int8_t throttled;       /* deferred only by that limit now (reason JobArrayTaskLimit) */
    char where[64];
    char *alloc;      /* "3,4,5" while holding GPUs */
    int32_t cat_gpus; /* GPUs counted in its VC for 'cat' (an elastic job's size changes) */
    /* elastic jobs (elastic.c): the live controller's state, durable in jobs.elastic */
    gsd_elastic *el; /* NULL for a rigid job */
    /* accounting (acct.c, issue 16): GPU time of the closed intervals (GPU x us, exact for an
     * elastic job whose size changes: one interval per size); the open one is held_gpus GPUs
     * since held_since (the engine's last_start), 0 GPUs when it holds none */
    int64_t gpu_us;
    int32_t held_gpus;
    gs_time held_since;
    int8_t gone; /* forgotten (acct.c): nothing else of this entry is meaningful but array_id */
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
    GSD_EV_HELD,                     /* user hold (the durable record of it: wait.c) */
    GSD_EV_RELEASED,                 /* the hold was released */
    GSD_EV_ELIGIBLE,                 /* its dependencies are satisfied: it joins the queue */
    GSD_EV_DEP_NEVER,                /* its dependencies can never be satisfied */
    GSD_EV_TRAINING,                 /* elastic: the first hint of a generation (LAUNCHING ends) */
    GSD_EV_UPDATED,                  /* job control: fields changed (PATCH /v1/jobs/{id}) */
    GSD_EV_CHECKPOINTED,             /* checkpoint-based suspend done (GSD_X_SUSPENDED) */
    GSD_EV_RESTORED,                 /* ... and its resume */
    GSD_EV_SUSPEND_FAILED,           /* checkpoint-based suspend failed: stopped, requeued */
    GSD_EV_RESUME_FAILED,            /* checkpoint-based resume failed: preempted */
    GSD_EV_GPU_FAULT,                /* GPU health: a suspended job cannot resume on the GPU it
                                        left (gone bad): stopped, requeued */
};

typedef struct gsd_taskput {
    int64_t job_id;
    int run, idx;
    char *handle; /* the executor's, NULL if unknown */
    int64_t exit_code;
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
    int32_t jobs; /* accepted jobs (arrived, not rejected): the VC exists for users iff > 0 */
} gsd_vcstat;

/* A cluster backend's view of a node (events.c): kept so that every reason a node is out of
 * service composes (drain.c, gsd_node_sync) and the node views can show it; and an admin's
 * bad mark (commands.c, gsd_do_node; stored in the nodes table, set again at recovery). */
typedef struct gsd_nodest {
    int8_t mgr;          /* GSD_XNODE_* as the cluster manager last said (UP until it speaks) */
    int8_t bad;          /* marked bad (gsched node bad): no new job, its jobs run on */
    int32_t outside;     /* GPUs used outside gsched, as the manager last said */
    const char *mgr_why; /* interned: the manager's reason for mgr, NULL = none */
    const char *bad_why; /* interned: the bad mark's reason (or the last good one's) */
    gs_time bad_since;   /* when the mark was set (or cleared), 0 = never */
    /* an admin's drain or down (nodeadm.c; stored in nodes.admin_*, set again at recovery) */
    int8_t admin;          /* GSD_NADM_* */
    const char *admin_why; /* interned: the admin's reason, NULL = none */
    const char *admin_by;  /* interned: who */
    gs_time admin_since;   /* when it was set */
} gsd_nodest;

/* An admin's state of a node (gsched node drain|resume|down): in service, drained (its jobs
 * run on, nothing new starts), down (its jobs are preempted and requeued, nothing starts). */
enum { GSD_NADM_NONE = 0, GSD_NADM_DRAIN = 1, GSD_NADM_DOWN = 2 };

/* A call to the executor made only once what it follows is committed (events.c). */
enum { GSD_XC_BIND = 1, GSD_XC_RETIRE = 2 };
typedef struct gsd_xcall {
    int kind;
    int64_t job_id; /* -1: an adoption refused before any job existed (RETIRE) */
    char *ext;      /* the external job (NULL: none) */
    int state;      /* RETIRE: the final gs_job_state */
    char *why;      /* RETIRE: the reason */
} gsd_xcall;

typedef struct gsd_sched {
    gsd sh; /* the part HTTP threads see (gsd.h); first member */
    char *state_dir;
    char *log_dir; /* task logs: --log-dir or gsd_default_log_dir */
    gs_cluster *c;
    gs_engine *e;
    gs_goodput *goodput; /* the engine's progress model (--set pollux_traces=DIR), or NULL */
    gsd_exec *x;
    /* per-job state by engine slot, in blocks of GSD_JX_BLOCK (jobs.c); a block whose every job
     * was forgotten (acct.c) is freed: NULL */
    gsd_jobx **jx;
    uint16_t *jx_gone; /* forgotten jobs per block */
    size_t njx;        /* slots the blocks cover */
    gsd_chunk **chunk; /* current view chunk by slot >> GSD_CHUNK_BITS (NULL: no active job) */
    uint8_t *chunk_dirty;
    int32_t *chunk_nactive;
    size_t nchunk;
    gs_time last_full; /* last rebuild of every chunk */
    int32_t *dirtyv;   /* slots whose row needs an UPDATE */
    size_t ndirty, capdirty;
    int32_t *runv; /* slots that held GPUs at some point (time limits); compacted lazily */
    size_t nrun, caprun;
    int32_t *waitv; /* slots of jobs not yet eligible (wait.c); compacted as they leave */
    size_t nwait, capwait;
    int32_t *rqholdv; /* job control (jobctl.c): slots requeued with a hold, stop not yet done */
    size_t nrqhold, caprqhold;
    int32_t *leasev; /* gsched run (interactive.c): slots of the interactive jobs not final */
    size_t nlease, caplease;
    gsd_vcstat *vcstat; /* by engine VC index */
    size_t nvcstat;
    size_t nvc_used; /* engine VCs with vcstat.jobs > 0: what GSD_MAX_VCS bounds */
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
    uint64_t cycle_no;
    int fatal;
    /* drain.c: the executor cannot launch (state directory not writable): every node drained */
    int drained, drain_checked;
    char drain_why[256]; /* the executor's reason while drained */
    gs_time drain_next;  /* next re-check while drained */
    size_t meta_njobs;   /* jobs when next_id was last written */
    int64_t *forget;     /* runs to forget after the commit */
    size_t nforget, capforget;
    /* changes not yet committed (commit.c): jobs INSERTed since the last commit, re-INSERTed
     * by a retry in read-only mode */
    int32_t *pins;
    size_t npins, cappins;
    int store_failed; /* a write of this cycle failed: write nothing more, the commit fails */
    /* cluster backends (events.c): node states and outside use by node index; binds and
     * retires waiting for the commit; adopted jobs whose external job was gone at bind (they
     * are cancelled at the next cycle) */
    gsd_nodest *nodest;
    /* per node cell: the first node cell of its machine's name (itself unless the machine is
     * in several HiveD chains, one node cell per chain; serve.c, gsd_node_names) */
    int32_t *node_first;
    gsd_xcall *xq;
    size_t nxq, capxq;
    int64_t *gone;
    size_t ngone, capgone;
    /* read-only mode (disk.c): the last commit failed; its changes are pending, its commands
     * held (answered once a retry commits), nothing new is started or signalled */
    int read_only;
    gs_time ro_since, ro_retry_at, ro_logged_at;
    gsd_cmd *held;
    /* samples.c (issue 16, dashboard): the last row written, the counters it was taken at */
    struct {
        gs_time last_t; /* 0: none yet in this run */
        int64_t launches, finished;
        uint64_t hash; /* of its gauges and VCs: a quiet cluster writes fewer rows */
        int failed;    /* the last write failed (logged once) */
    } smp;
    /* queue texts asked of the engine during this publish, by queue id (snapshot.c) */
    struct {
        int32_t queue;
        const char *text; /* interned */
        uint64_t gen;     /* valid when == qgen */
    } qtext[256];
    uint64_t qgen;
    /* accounting (acct.c): the next retention pass (GS_TIME_MAX: no retention); final jobs
     * whose state was released at a publish, to forget (engine and per-job state) */
    gs_time acct_next;
    int32_t *fq;
    size_t nfq, capfq;
    int64_t forgotten; /* jobs forgotten since the start */
    /* GPU health (gpuhealth.c, issue 17): the watch (NULL: off); by NVML index: the verdicts
     * last taken, the global GPU each is (-1: not in the cluster), what the engine was told;
     * by global GPU: the NVML index (-1: not watched) */
    struct gsd_gpuh *gh;
    struct gsd_gpuh_gpu *ghv;
    int32_t *gh_gpu, *gh_of;
    int8_t *gh_told;
    unsigned gh_n;
    uint64_t gh_gen;
    int gh_node;  /* the watched node (its first cell) */
    int gh_retry; /* a verdict could not be stored: apply again at the next cycle */
} gsd_sched;

/* util.c */
double gsd_mono_sec(void);
char *gsd_xstrdup(const char *s);      /* NULL for NULL; aborts when out of memory */
void *gsd_xrealloc(void *p, size_t n); /* aborts when out of memory */
int gsd_stop_parse(const char *s);     /* GSD_STOP_* from gsd_stop_name's text */
/* Long-lived copies of reason strings handed to the engine (it keeps the pointers). */
const char *gsd_intern(gsd_sched *g, const char *s);
void gsd_strset_release(gsd_strset *t);

/* jobs.c */
#define GSD_JX_BITS  GSD_CHUNK_BITS /* a block of per-job state is a view chunk's slots */
#define GSD_JX_BLOCK ((size_t)1 << GSD_JX_BITS)
gsd_jobx *gsd_jx(gsd_sched *g, int32_t slot); /* grows the blocks as needed */
/* The per-job state of a slot without allocating: NULL when its block was freed (every job of
 * it forgotten); an entry with 'gone' set is a forgotten job.  For scans over many slots. */
gsd_jobx *gsd_jx_peek(gsd_sched *g, int32_t slot);
/* Free the per-job state of a forgotten job's slot (its block once all of it is forgotten). */
void gsd_jx_forget(gsd_sched *g, int32_t slot);
/* Release every block (shutdown). */
void gsd_jx_release(gsd_sched *g);
void gsd_chunk_touch(gsd_sched *g, int32_t slot);
void gsd_activate(gsd_sched *g, int32_t slot);
gsd_rec *gsd_push_rec(gsd_sched *g, int type, int32_t slot, gs_time t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void gsd_mark_dirty(gsd_sched *g, int32_t slot);
/* A job whose row was INSERTed in this cycle: pending until the commit succeeds. */
void gsd_pin(gsd_sched *g, int32_t slot);
void gsd_track(gsd_sched *g, const gs_job *j, gsd_jobx *x);
/* 1 if vc is declared (cluster or policy) or has an accepted job: a VC users can see. */
int gsd_vc_known(const gsd_sched *g, const char *vc);
void gsd_describe_alloc(const gs_cluster *c, const int32_t *gpus, int n, char *where, size_t wcap,
                        char **list);
/* The same for a job's current GPUs, those the cluster lacks (gs_job.vanished) as -1. */
void gsd_describe_job_alloc(const gs_cluster *c, const gs_job *j, char *where, size_t wcap,
                            char **list);
gs_time gsd_job_grace(gsd_sched *g, const gsd_jobx *x);

/* commit.c */
void gsd_observe(void *ud, const gs_record *r);
void gsd_fill_row(gsd_sched *g, const gs_job *j, gsd_jobx *x, gsd_jobrow *r);
/* INSERT the job's row: gsd_fill_row plus its immutable task_gpus / groups columns. */
int gsd_insert_row(gsd_sched *g, const gs_job *j, gsd_jobx *x);
int gsd_commit(gsd_sched *g);
void gsd_act(gsd_sched *g, gs_time now);
/* Continue a job the engine resumed, on the GPUs it holds now (gsd_exec_resume_at; recovery
 * also continues every adopted run this way, which tells the executor where it runs). */
void gsd_resume_at(gsd_sched *g, const gs_job *j);

/* events.c */
void gsd_on_xev(void *ud, const gsd_xev *ev);
/* Queue an executor call for after the commit (gsd_xq_run): bind job_id to ext, or retire it
 * (state, why).  Nothing is queued for an executor without GSD_XCAP_EXTERNAL. */
void gsd_xq_push(gsd_sched *g, int kind, int64_t job_id, const char *ext, int state,
                 const char *why);
/* After the commit (gsd_act): make the queued calls, in order.  A bind the executor answers
 * GS_ENOENT (its external job is gone) has the job cancelled at the next cycle. */
void gsd_xq_run(gsd_sched *g);
/* At the start of a cycle: cancel the jobs whose external job was found gone. */
void gsd_gone_run(gsd_sched *g, gs_time now);
/* Cancel job j (and the parts of a non-gang head) because of something outside gsched
 * (why).  A job holding GPUs gets the stop protocol: returns 1 when such a stop is needed
 * (gsd_act sends it for the CANCEL_REQ record), 0 otherwise. */
int gsd_cancel_outside(gsd_sched *g, const gs_job *j, const char *why, gs_time now);

/* commands.c */
void gsd_cmd_fail(gsd_cmd *c, int status, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void gsd_do_submit(gsd_sched *g, gsd_cmd *c, gs_time now);
void gsd_finish_submit(gsd_sched *g, gsd_cmd *c);
void gsd_do_dryrun(gsd_sched *g, gsd_cmd *c);
void gsd_do_cancel(gsd_sched *g, gsd_cmd *c, gs_time now);
void gsd_do_hold(gsd_sched *g, gsd_cmd *c, gs_time now); /* HOLD and RELEASE */
void gsd_do_node(gsd_sched *g, gsd_cmd *c, gs_time now); /* NODE_BAD and NODE_GOOD */

/* jobctl.c (issue 16, job control) */
/* Take pending job j (arrived) back out of its policy's queue and hold it (wait.c's stage);
 * 0, or fails c (409: the policy cannot withdraw; 500; c NULL: logs) and returns the GS_E*
 * code. */
int gsd_jobctl_withdraw(gsd_sched *g, gsd_cmd *c, const gs_job *j, gs_time now);
/* REQUEUE: stop a running job through the stop protocol (gs_engine_preempt), back to its
 * queue; with args {"hold": true} held once its tasks are gone (gsd_jobctl_requeued). */
void gsd_do_requeue(gsd_sched *g, gsd_cmd *c, gs_time now);
/* After the executor's poll: hold the jobs requeued with a hold whose stop is done, before
 * the pass can start them again. */
void gsd_jobctl_requeued(gsd_sched *g, gs_time now);
/* UPDATE: change a job's priority, time limit, GPUs, VC or name (args: the PATCH body),
 * revalidated as a submission; a queued job is withdrawn, changed and released at once. */
void gsd_do_update(gsd_sched *g, gsd_cmd *c, gs_time now);
/* interactive.c (issue 16, gsched run): an interactive job's lease and stdin */
#define GSD_RUN_LEASE_S 30 /* a lease's length until its client says otherwise (seconds) */
/* Track interactive job slot's lease (from submit or recovery): GSD_RUN_LEASE_S from now. */
void gsd_run_track(gsd_sched *g, int32_t slot, gs_time now);
void gsd_do_lease(gsd_sched *g, gsd_cmd *c, gs_time now); /* LEASE: renew it */
void gsd_do_stdin(gsd_sched *g, gsd_cmd *c, gs_time now); /* STDIN: write to task 0 */
/* Cancel the interactive jobs whose lease ran out; the next instant one runs out. */
gs_time gsd_run_leases(gsd_sched *g, gs_time now);
/* Mark every node cell named 'name' bad or good in the engine and g->nodest (no storing);
 * the number of nodes found. */
int gsd_node_mark(gsd_sched *g, const char *name, int bad, const char *why, gs_time t);
gsd_cmd *gsd_take_commands(gsd_sched *g);
void gsd_answer(gsd_sched *g, gsd_cmd *list);

/* snapshot.c */
void gsd_chunk_put(gsd_chunk *c);
void gsd_publish(gsd_sched *g, gs_time now);

/* cycle.c */
gs_time gsd_cycle(gsd_sched *g, int heartbeat);

/* gpuhealth.c (issue 17) */
/* Start the GPU health watch as the options say (discovered: the cluster came from NVML).
 * 0 (also when it stays off, after a log line saying why), -1 after a log line when the
 * options cannot be met (--gpu-health-node names no node). */
int gsd_gpuh_setup(gsd_sched *g, int discovered);
void gsd_gpuh_release(gsd_sched *g);
/* At a cycle's start: apply the newest verdicts (node events, engine marks, preemptions). */
void gsd_gpuh_cycle(gsd_sched *g, gs_time now);

/* disk.c */
/* Enter (or stay in) read-only mode after a failed commit; why: the database's error. */
void gsd_enter_read_only(gsd_sched *g, const char *why);
/* A cycle in read-only mode: answer commands (dry runs as usual, the rest 503), retry the
 * commit now and then; on success leave read-only mode and do what the failed cycle left
 * undone (publish, answer, act).  Returns when to come back. */
gs_time gsd_read_only_cycle(gsd_sched *g, gs_time now);
/* Shutdown: answer the held commands 503 and say what is lost (not durable). */
void gsd_read_only_shutdown(gsd_sched *g);
/* The default task log directory for database db (see disk.c): a malloc'ed path, or NULL with
 * d set.  May record the directory's id in the database (its own transaction). */
char *gsd_default_log_dir(gsd_store *st, const char *db, gs_diag *d);

/* wait.c: jobs not yet eligible (held, waiting on dependencies), deferred in the engine */
/* Put a job just added with gs_engine_submit_deferred in the stage: held, and its spec's
 * dependencies (if any) to be evaluated. */
void gsd_wait_add(gsd_sched *g, int32_t slot, int held);
/* Evaluate the waiting jobs' dependencies; release (gs_engine_release) those no longer held
 * whose dependencies are satisfied.  Returns how many were released. */
size_t gsd_wait_check(gsd_sched *g, gs_time now);
/* Slurm's reason for a deferred job: JobHeldUser, DependencyNeverSatisfied, Dependency,
 * JobArrayTaskLimit (an array element held back by its array's %N). */
const char *gsd_wait_reason(const gsd_jobx *x);
/* Free a job's dependency state (final or eligible). */
void gsd_wait_free(gsd_jobx *x);

/* recovery.c */
int gsd_recover(gsd_sched *g, gs_diag *d);

/* elastic.c: the live elastic controller (issue 13, docs/elastic.md) */
/* The elastic state of job x (created for an elastic spec; NULL for a rigid job). */
gsd_elastic *gsd_el(gsd_jobx *x);
void gsd_el_free(gsd_jobx *x);
/* Its durable JSON for the row (NULL for a rigid job); parsed back by gsd_el_load. */
const char *gsd_el_json(gsd_jobx *x);
int gsd_el_load(gsd_jobx *x, const char *json);
/* Observer: a DRAIN or RESCALE record of job j (commit.c). */
void gsd_el_record(gsd_sched *g, const gs_job *j, gsd_jobx *x, const gs_record *r);
/* After the commit: a DRAIN's actions (control file, SIGTERM, SIGKILL after the timeout). */
void gsd_el_drain_act(gsd_sched *g, const gs_job *j, gs_time now);
/* The job directory's control / hints files of job id (under the log directory). */
void gsd_el_path(const gsd_sched *g, int64_t id, const char *file, char *buf, size_t cap);
/* Read new hint lines of the running elastic jobs (bounded per job and cycle). */
void gsd_el_hints(gsd_sched *g, gs_time now);
/* Job j's old generation is gone: read what is left of its hints (its last checkpoint), so
 * that no line of it is taken for the next generation's.  Bounded. */
void gsd_el_hints_drained(gsd_sched *g, const gs_job *j, gs_time now);
/* Longest the loop may sleep while elastic jobs run (their hints are polled). */
#define GSD_HINT_POLL (500 * GS_MSEC)
/* The job's drain timeout (spec, else the engine's). */
gs_time gsd_el_drain_timeout(gsd_sched *g, const gsd_jobx *x);
/* Command: resize a running elastic job (operator or owner). */
void gsd_do_resize(gsd_sched *g, gsd_cmd *c, gs_time now);

/* acct.c: accounting (issue 16) */
/* Observer: job j's record at t (after the engine's transition): close the GPU-time interval
 * when the GPUs it holds changed, open the next one. */
void gsd_acct_observe(gsd_jobx *x, const gs_job *j, gs_time t);
/* Recovery: the job's closed GPU time from its row (gpu_us; GSD_NONE in a row older than
 * schema 6: executed_us x its GPUs), its open interval from the engine's state. */
void gsd_acct_restore(gsd_jobx *x, const gs_job *j, int64_t gpu_us, int64_t executed);
/* GPU time so far at now (closed + open interval). */
int64_t gsd_acct_gpu_us(const gsd_jobx *x, gs_time now);
/* Per cycle, inside its transaction: when a retention pass is due (--retention), move one
 * batch (GSD_ACCT_BATCH) of final jobs that ended before now - retention into the acct table.
 * Returns when the next pass is due (GS_TIME_MAX: no retention). */
gs_time gsd_acct_cycle(gsd_sched *g, gs_time now, int busy);
/* A final job whose daemon state was released at a publish (snapshot.c): forget it at the end
 * of a cycle (gsd_acct_forget). */
void gsd_acct_forget_later(gsd_sched *g, int32_t slot);
/* End of a cycle (after gsd_act): forget the queued final jobs nothing refers to any more, in
 * the engine (gs_engine_forget) and here (gsd_jx_forget): memory follows the active jobs. */
void gsd_acct_forget(gsd_sched *g);
/* A command on job c->job_id, which the engine no longer has (forgotten, or moved by
 * retention): answer it as for a final job, 409 "job ID is PRE STATE POST" (404 when the caller
 * may not see it or it never existed).  Always answers. */
void gsd_acct_gone(gsd_sched *g, gsd_cmd *c, const char *pre, const char *post);
#define GSD_ACCT_BATCH 1000
#define GSD_ACCT_PERIOD                                                   \
    (60 * GS_SEC) /* between passes once nothing is left to move (at most \
                     half the retention, at least a second) */

/* drain.c */
/* The executor cannot launch anything (why): drain every node (jobs running there keep
 * running; nothing new starts) until gsd_drain_recheck finds it can again. */
void gsd_drain(gsd_sched *g, const char *why, gs_time now);
/* While drained, every GSD_DRAIN_RECHECK: ask the executor (gsd_exec_check) and return the
 * nodes to service when it can launch again.  Called every cycle; cheap otherwise.  Returns
 * the next instant it wants a cycle (GS_TIME_MAX when not drained). */
gs_time gsd_drain_recheck(gsd_sched *g, gs_time now);
#define GSD_DRAIN_RECHECK (5 * GS_SEC)
/* Put node n in or out of service from every reason it has: the executor cannot launch
 * (gsd_drain), the cluster manager drains or lost it (g->nodest).  It returns to service only
 * when no reason remains. */
void gsd_node_sync(gsd_sched *g, int n);
/* Why node n takes no new job (interned; NULL when it is in service). */
const char *gsd_node_why(gsd_sched *g, int n);
/* A node cell's HiveD chain (the cell type of its top-level cell) and its own cell type, NULL
 * when the cluster has none (drain.c). */
const char *gsd_node_chain(const gs_cluster *c, int n);
const char *gsd_node_cell_type(const gs_cluster *c, int n);

/* samples.c (issue 16, dashboard) */
#define GSD_SAMPLE_INTERVAL  10             /* seconds between rows (--stats-interval) */
#define GSD_SAMPLE_IDLE_MAX  (300 * GS_SEC) /* a row at least this often, changes or not */
#define GSD_SAMPLE_KEEP_DAYS 7              /* rows kept (--stats-keep) */
/* Once per cycle, inside its transaction: a row of the samples table when one is due. */
void gsd_sample_tick(gsd_sched *g, gs_time now);

/* nodeadm.c: an admin's drain / resume / down of a node (issue 16) */
/* "drain", "down" or NULL for a GSD_NADM_*. */
const char *gsd_nadm_name(int st);
/* GSD_NADM_* for a stored name ("drain", "down"), -1 for anything else (NULL: NONE). */
int gsd_nadm_parse(const char *name);
/* Commands NODE_DRAIN, NODE_RESUME, NODE_DOWN (admins only): stored and a node event written
 * in the cycle's transaction, then applied (gsd_node_admin). */
void gsd_do_node_admin(gsd_sched *g, gsd_cmd *c, gs_time now);
/* Set every node cell named 'name' to admin state st (GSD_NADM_*) in g->nodest and the engine
 * (no storing): DOWN preempts the jobs running there (checkpoint protocol: SIGTERM, grace,
 * SIGKILL; requeued once their runs end) and adds their ids to 'ids'; with ids NULL (recovery:
 * restoring what is durable) nothing is preempted.  The number of node cells found. */
int gsd_node_admin(gsd_sched *g, const char *name, int st, const char *why, const char *by,
                   gs_time t, json_t *ids);

#endif
