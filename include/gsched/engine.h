/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/engine.h - the scheduling engine: jobs, events, policy, mechanisms.
 *
 * The engine owns the jobs, an event queue and the policy instance; it
 * borrows the cluster.  Time only moves when the caller says so:
 *
 *   simulator (GS_ENGINE_SIM): gs_engine_step() pops the next instant from the
 *     event queue (arrivals, completions predicted from remaining work and
 *     speed, timers, cluster events), handles every event at that instant in
 *     total order (time, kind, job slot, sequence), then runs one policy pass.
 *   daemon (GS_ENGINE_LIVE): the caller submits jobs at wall-clock "now",
 *     reports task exits with gs_engine_task_exited(), and calls
 *     gs_engine_advance(now) to fire due timers and run a policy pass.
 *     Completions are never predicted; preemption leaves the job PREEMPTED
 *     (GPUs held) until its tasks are reported gone.
 *
 * Policies never touch state directly.  They ask the engine through
 * gs_engine_start(), gs_engine_preempt(), gs_engine_set_timer() ...; each
 * request is validated (job state, gang size, every GPU free, healthy and of
 * the right type, tasks on one node each) and applied at once, or refused
 * with an error and no change.  So no policy can give a GPU to two jobs or
 * start part of a gang.
 *
 * Jobs are read-only outside the engine: inspection (gs_engine_job,
 * gs_engine_find_job, observer records, the out parameters of add/submit/
 * adopt) gives const gs_job pointers, and every call that changes a job takes
 * it back as a const pointer - its identity; the engine changes its own copy.
 * Policies get writable jobs from their hooks and gs_policy_job() (policy.h),
 * and still change them only through these calls.
 *
 * Every state change is reported to an optional observer, in order.  The
 * simulator turns records into metrics and timelines; the daemon persists
 * them before it acts on them (start a process, signal it, ...).
 *
 * Errors: a call returns 0 (or a count) or a negative GS_E* code.  Most codes
 * are answers that change nothing (GS_EINVAL, GS_ESTATE, GS_ENOFIT,
 * GS_ECONFLICT ...).  Two kinds fail the engine instead: an allocation
 * failure anywhere in the engine (GS_ENOMEM), and any error a policy hook
 * returns (policy.h, "Errors").  The engine latches the first such error
 * (gs_engine_error()), stops what it was doing - the rest of the instant's
 * events and the pass are not handled - and returns it from the entry point
 * that ran into it (gs_engine_step/run/advance, add_job, submit, adopt,
 * task_exited, cancel, and the requests policies make).  A failed engine is
 * consistent - every job holds exactly the GPUs its state says, counters
 * match, gs_engine_check() passes - so it can be inspected (jobs, records so
 * far) and destroyed; it cannot continue: every later call that would change
 * it returns the latched error and changes nothing.  The simulator reports
 * the error and exits non-zero; the daemon treats it as fatal.  The one
 * exception is the read-only dry run (gs_engine_probe): its errors, GS_ENOMEM
 * included, fail only the dry run and are not latched.
 *
 * Re-entry: requests made from inside policy hooks run the hooks of the
 * transitions they cause before they return (gs_engine_preempt() from
 * schedule() calls on_requeue for the victim at once); see policy.h.
 *
 * Ownership: gs_engine_create() borrows the cluster (it must outlive the
 * engine and is modified by it) and copies what it needs from params.
 * gs_engine_destroy() frees jobs and the policy; NULL is fine.
 */
#ifndef GSCHED_ENGINE_H
#define GSCHED_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "costs.h"
#include "error.h"
#include "job.h"
#include "lp.h"
#include "params.h"
#include "placement.h"
#include "profiles.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_engine gs_engine;
typedef struct gs_policy_ops gs_policy_ops;

typedef enum gs_engine_mode { GS_ENGINE_SIM = 0, GS_ENGINE_LIVE = 1 } gs_engine_mode;

/* Bit of mechanism m (gs_mech, GS_MECH_MAP in job.h) in gs_engine_opts.mech_unsupported. */
#define GS_MECH_BIT(m) (1u << (unsigned)(m))

typedef struct gs_engine_opts {
    gs_engine_mode mode;
    uint64_t seed;
    gs_place_mode placement; /* placement policies use unless they insist */
    int placement_set;       /* 1 when the user chose it explicitly */
    gs_fit fit;
    /*
     * Reader for data files named in parameters (e.g. gittins_samples=FILE),
     * supplied by the program: the core does no I/O.  Returns 0 and a
     * malloc'ed NUL-terminated buffer, or a GS_E* code with a message.
     * NULL: parameters naming files are refused.
     */
    int (*read_file)(void *ud, const char *path, char **buf, size_t *len, gs_diag *d);
    void *read_file_ud;
    /*
     * Mechanisms the program cannot carry out (GS_MECH_BIT(GS_MECH_SUSPEND) |
     * ...): the engine refuses requests for them up front (see "when the
     * program cannot carry out a mechanism" below).  0, the default: every
     * mechanism the mode allows.
     */
    unsigned mech_unsupported;
    /*
     * LP solver for optimisation-based policies (Gavel, Themis' LP mode; lp.h), supplied by
     * the program: the core links none.  NULL: those policies refuse to run (GS_EUNSUPPORTED).
     */
    const gs_lp_solver *lp;
    /*
     * Policies the program adds to the compiled-in ones (plugins it loaded; policy.h,
     * "Plugins"): gs_engine_create() looks a name up among these first.  Borrowed: they
     * must outlive every engine made with them.  NULL / 0: the compiled-in ones only.
     */
    const gs_policy_ops *const *policies;
    size_t npolicies;
    /*
     * LIVE: the program can resume a SUSPENDED job on other GPUs of the nodes it left (a
     * checkpoint-based suspend whose restore can remap GPUs: see gs_engine_resume).  0, the
     * default: a LIVE resume only continues the job on the GPUs it left.  Ignored in SIM.
     */
    int live_remap;
} gs_engine_opts;

void gs_engine_opts_init(gs_engine_opts *o);
/* Engine options given as parameters (fit=first|best; others keep their value). */
int gs_engine_opts_from_params(gs_params *p, gs_engine_opts *o, gs_diag *d);

/* Records passed to the observer, one per state change. */
#define GS_REC_MAP(XX)           \
    XX(SUBMIT, "submitted")      \
    XX(REJECT, "rejected")       \
    XX(START, "started")         \
    XX(PREEMPT, "preempted")     \
    XX(REQUEUE, "requeued")      \
    XX(FINISH, "finished")       \
    XX(FAIL, "failed")           \
    XX(CANCEL, "cancelled")      \
    XX(SUSPEND, "suspended")     \
    XX(RESUME, "resumed")        \
    XX(MIGRATE, "migrated")      \
    XX(RESIZE, "resized")        \
    XX(NODE_DOWN, "node_down")   \
    XX(NODE_UP, "node_up")       \
    XX(NOTE, "note")             \
    XX(PACK, "packed")           \
    XX(UNPACK, "unpacked")       \
    XX(DRAIN, "draining")        \
    XX(RESCALE, "rescaled")      \
    XX(NODE_BAD, "node_bad")     \
    XX(NODE_GOOD, "node_good")   \
    XX(RECONFIG, "reconfigured") \
    XX(GPU_BAD, "gpu_bad")       \
    XX(GPU_GOOD, "gpu_good")

typedef enum gs_rec_type {
#define GS__REC_ENUM(name, str) GS_REC_##name,
    GS_REC_MAP(GS__REC_ENUM)
#undef GS__REC_ENUM
        GS_REC_NTYPES
} gs_rec_type;

const char *gs_rec_type_name(gs_rec_type t);

typedef struct gs_record {
    gs_time t;
    gs_rec_type type;
    const gs_job *job;  /* NULL for node and GPU records */
    int node;           /* node index for NODE_* records (GPU_*: the GPU's node), else -1 */
    int gpu;            /* global GPU index for GPU_* records, else -1 */
    const char *reason; /* short explanation, may be NULL; borrowed for the call */
} gs_record;

typedef void (*gs_observer_fn)(void *ud, const gs_record *r);

/* ---- lifecycle ----------------------------------------------------------- */

/*
 * Create an engine running policy 'policy' (opts->policies, then the compiled-in
 * ones: gs_policy_find_ex()).  The
 * policy and the engine read their parameters from 'params' (marking them
 * used; the caller then checks gs_params_unused()).  On error returns a
 * negative code and explains in diag.
 */
int gs_engine_create(gs_cluster *c, const char *policy, gs_params *params,
                     const gs_engine_opts *opts, gs_engine **out, gs_diag *diag);
/* Same with an ops table that need not be in the registry (tests, embedders). */
int gs_engine_create_ops(gs_cluster *c, const gs_policy_ops *ops, gs_params *params,
                         const gs_engine_opts *opts, gs_engine **out, gs_diag *diag);
void gs_engine_destroy(gs_engine *e);
void gs_engine_set_observer(gs_engine *e, gs_observer_fn fn, void *ud);

/* ---- feeding it ---------------------------------------------------------- */

/*
 * Add a job that arrives at spec->submit (SIM) or now (LIVE: use
 * gs_engine_submit).  The spec is validated (GS_EINVAL with a message in
 * diag); strings are copied.  Returns 0 and the job in *out (may be NULL).
 * A non-gang job (spec->gang == 0) of several tasks becomes one job per
 * task - each starts as resources allow - sharing 'group' (the first task's
 * id); the others take fresh ids (see gs_engine_reserve_ids); *out is the
 * first task.
 */
int gs_engine_add_job(gs_engine *e, const gs_job_spec *spec, const gs_job **out, gs_diag *diag);
/* Ids below 'next' are taken by the caller: automatic ids start at 'next'. */
void gs_engine_reserve_ids(gs_engine *e, int64_t next);
/* LIVE: add a job arriving now; it is considered at the next advance. */
int gs_engine_submit(gs_engine *e, const gs_job_spec *spec, gs_time now, const gs_job **out,
                     gs_diag *diag);
/*
 * LIVE: add a job whose arrival waits (a held job, one waiting on other
 * jobs): it is PENDING with arrived == 0 and deferred == 1, invisible to the
 * policy, until gs_engine_release() makes it arrive; gs_engine_cancel() ends
 * it meanwhile.  GS_ESTATE in SIM mode.
 */
int gs_engine_submit_deferred(gs_engine *e, const gs_job_spec *spec, gs_time now,
                              const gs_job **out, gs_diag *diag);
/* LIVE: a deferred job arrives now (it is considered at the next advance, like a new
 * submission).  GS_ESTATE if j is not a deferred PENDING job. */
int gs_engine_release(gs_engine *e, const gs_job *j, gs_time now);
/*
 * LIVE, restart recovery: add a job that is already running on 'gpus'
 * (grouped by task) since 'started' - its tasks survived a daemon restart.
 * The job arrives and is RUNNING at once; the policy learns of it through
 * on_adopt.  'queued' and 'executed' restore its accounting.  Validation is
 * that of gs_engine_start (GS_ECONFLICT if a GPU is taken).  A GPU given as
 * -1 is one the cluster no longer has (the daemon restarted with a changed
 * config): the job runs on there unaccounted (gs_job.vanished, as after
 * gs_engine_reconfigure); the GPUs it still has are checked one by one (in
 * range, once, free, of its type), not by task.
 */
int gs_engine_adopt(gs_engine *e, const gs_job_spec *spec, const int *gpus, int n, gs_time started,
                    gs_time queued, gs_time executed, const gs_job **out, gs_diag *diag);
/*
 * Restart recovery: the accounting a job had before the daemon restarted,
 * restored onto the job just added or adopted again.  Each field set to
 * "keep" (a negative value; GS_TIME_NONE for first_start) leaves what the
 * engine has.  This is the only way to write these fields from outside the
 * engine.
 */
typedef struct gs_job_accounting {
    int64_t group;       /* job it was split from (non-gang parts); < 0: keep */
    int32_t task_index;  /* its index in the group; < 0: keep */
    gs_time queued;      /* closed time PENDING; < 0: keep */
    gs_time executed;    /* closed time holding GPUs; < 0: keep */
    double service;      /* closed GPU-seconds; < 0: keep */
    gs_time first_start; /* GS_TIME_NONE: keep */
    int32_t preemptions; /* < 0: keep */
    int32_t restarts;    /* < 0: keep */
    /* elastic jobs (issue 13): the counters of a job caught by a daemon restart */
    int32_t generation; /* generations launched so far; < 0: keep */
    int32_t rescales;   /* < 0: keep */
    int32_t failures;   /* < 0: keep */
} gs_job_accounting;

/* All fields "keep". */
void gs_job_accounting_init(gs_job_accounting *a);
/* Restore a job's accounting (see gs_job_accounting); its state does not change. */
int gs_engine_restore_accounting(gs_engine *e, const gs_job *j, const gs_job_accounting *a);
/* Schedule a node failure (down=1) or recovery (down=0) at time t. */
int gs_engine_add_node_event(gs_engine *e, gs_time t, int node, int down);

/* ---- running it ---------------------------------------------------------- */

/*
 * SIM: handle the next instant.  Returns 1 if an instant was processed, 0
 * when nothing is left, or a negative error.
 */
int gs_engine_step(gs_engine *e);
/* SIM: step until nothing is left. */
int gs_engine_run(gs_engine *e);
/* LIVE: move time to 'now' (monotonic), fire due events, run a policy pass. */
int gs_engine_advance(gs_engine *e, gs_time now);
/*
 * LIVE: tasks of 'j' (RUNNING, PREEMPTED, SUSPENDED or DRAINING) are gone.  exit_code 0 =
 * success.  DRAINING: 143 or 0 = checkpointed, else forced (work since j->last_ckpt lost);
 * the job then RESIZES (RESCALE + START records) or, for k' = 0, is requeued.  RUNNING with
 * exit_code != 0: a failed generation; while j->failures < j->max_failures it is requeued
 * (REQUEUE), else FAILED.
 */
int gs_engine_task_exited(gs_engine *e, const gs_job *j, int exit_code, const char *reason,
                          gs_time now);
/* Cancel a job in any non-final state (LIVE; also usable in SIM tests). */
int gs_engine_cancel(gs_engine *e, const gs_job *j, const char *reason, gs_time now);

/* ---- inspecting it ------------------------------------------------------- */

gs_time gs_engine_now(const gs_engine *e);
size_t gs_engine_njobs(const gs_engine *e);
const gs_job *gs_engine_job(const gs_engine *e, size_t slot);
const gs_job *gs_engine_find_job(const gs_engine *e, int64_t id); /* NULL if absent */
gs_cluster *gs_engine_cluster(const gs_engine *e);
const char *gs_engine_policy_name(const gs_engine *e);
const gs_engine_opts *gs_engine_opts_get(const gs_engine *e);
/* Counters. */
uint64_t gs_engine_events(const gs_engine *e);
size_t gs_engine_npending(const gs_engine *e);
/* Sum of the GPU requests of arrived PENDING jobs. */
int64_t gs_engine_pending_gpus(const gs_engine *e);
/* Jobs holding GPUs: RUNNING, PREEMPTED or DRAINING. */
size_t gs_engine_nrunning(const gs_engine *e);
/* GPUs held by jobs (RUNNING, PREEMPTED or DRAINING) or reserved for a draining job's next
 * generation (gs_engine_reserved_gpus). */
int gs_engine_allocated(const gs_engine *e);
/* GPUs held by PREEMPTED jobs that are still stopping (LIVE mode; 0 in SIM). */
int gs_engine_stopping_gpus(const gs_engine *e);
/* VCs seen so far (index = gs_job.vc). */
size_t gs_engine_nvcs(const gs_engine *e);
const char *gs_engine_vc_name(const gs_engine *e, int vc);
/* True when every job is final and no event is left. */
int gs_engine_idle(const gs_engine *e);
/* Full consistency check (allocations vs jobs, cluster aggregates). Tests use it. */
int gs_engine_check(const gs_engine *e, gs_diag *diag);
/* The latched error that failed the engine (see "Errors" above), or 0. */
int gs_engine_error(const gs_engine *e);

/* ---- requests from policies ---------------------------------------------- */

/*
 * Start a PENDING job on the given GPUs (n == j->gpus, grouped by task; an
 * elastic job may start at any valid size, gs_job_size_valid(), and its
 * gpus/ntasks become that size).  Returns 0, GS_ESTATE (not pending), GS_EINVAL (wrong count, task
 * split across nodes, duplicate GPU, wrong type) or GS_ECONFLICT (GPU busy/down).
 */
int gs_engine_start(gs_engine *e, const gs_job *j, const int *gpus, int n);
/*
 * Build the placement request for j with the engine's placement mode and the
 * given locality, find GPUs and start.  GS_ENOFIT when nothing fits now.
 * Failures are cached per request shape until GPUs are released, so a pass
 * over thousands of waiting jobs of a few shapes stays cheap.  A job with
 * tasks of different sizes or withinOneCell groups (gs_job_grouped) is never
 * placed here (GS_EUNSUPPORTED, also from gs_engine_start_preempting): its
 * policy (GS_POLICY_GROUPS) finds the GPUs and calls gs_engine_start, which
 * checks each task by its offset and each group inside one cell of its type.
 */
int gs_engine_try_start(gs_engine *e, const gs_job *j, gs_locality level);
/*
 * Start pending job j, making room by preempting running jobs if needed.
 * First tries the free GPUs alone; otherwise treats the GPUs of cands[0],
 * cands[1], ... (running jobs, least important first) as free, one more
 * candidate at a time, until a placement exists.  Then it preempts exactly
 * the candidates whose GPUs that placement uses (reason 'why') and starts j.
 * Returns the number of jobs preempted (>= 0), GS_ENOFIT when even all
 * candidates together do not make room (nothing changes), or an error.  In
 * LIVE mode the victims hold their GPUs until they exit, so j starts at a
 * later pass.
 */
int gs_engine_start_preempting(gs_engine *e, const gs_job *j, gs_locality level,
                               const gs_job *const *cands, int ncands, const char *why);
/* Read a data file through the program's reader (see gs_engine_opts.read_file). */
int gs_engine_read_file(const gs_engine *e, const char *path, char **buf, size_t *len, gs_diag *d);
/* Mechanism costs the engine charges (read-only). */
const gs_costs *gs_engine_costs(const gs_engine *e);
/* Fill a placement request for j from the engine's options. */
void gs_engine_place_req(const gs_engine *e, const gs_job *j, gs_locality level, gs_place_req *r);
/*
 * Preempt a RUNNING job: it stops and goes back to PENDING (SIM), or to
 * PREEMPTED until its tasks exit (LIVE).  The policy's on_requeue hook runs
 * when the job is PENDING again - in SIM before this call returns, even when
 * it is made from schedule() (policy.h, "Re-entry"); its error is returned.
 */
int gs_engine_preempt(gs_engine *e, const gs_job *j, const char *reason);
/*
 * Reject an arrived PENDING job for a policy-specific reason (e.g. a gang
 * larger than its virtual cluster's guarantee).  The job becomes REJECTED;
 * the policy's on_finish is not called (the policy is the caller).
 */
int gs_engine_reject(gs_engine *e, const gs_job *j, const char *reason);
/* Ask for on_timer(tag) at time 'when' (>= now). */
int gs_engine_set_timer(gs_engine *e, gs_time when, uint64_t tag);
/*
 * Count n events the policy stood in for without queueing them: timers it would have set whose
 * firing provably changed nothing (themis' lease renewals while no job waits), so that
 * gs_engine_events() stays that of the run with those timers.
 */
void gs_engine_count_events(gs_engine *e, uint64_t n);
/*
 * The widest locality the policy will ever ask gs_engine_try_start() for.
 * Jobs that cannot fit an empty cluster at this level are rejected on
 * arrival.  Default GS_LOCALITY_STRICT; call from the policy's create().
 */
void gs_engine_set_max_locality(gs_engine *e, gs_locality level);
/* Record why a pending job waits (static or long-lived string). */
void gs_engine_set_reason(gs_engine *e, const gs_job *j, const char *reason);
/*
 * From a hook (e.g. on_timer): run schedule() at this instant even if no job
 * is pending or suspended (periodic work such as Gandiva's introspection).
 */
void gs_engine_request_pass(gs_engine *e);
/* Emit a NOTE record (policy decisions worth tracing). */
void gs_engine_note(gs_engine *e, const gs_job *j, const char *reason);

/* ---- mechanisms: suspend/resume, packing, migration, resizing -------------- */

/*
 * These are what Gandiva-style policies ask for; the engine validates each
 * request, charges its cost (gsched/costs.h) and reports a record.  Costs
 * are time a job holds GPUs without progress; the GPU-seconds are added to
 * the job's suspend_gpu_s / migrate_gpu_s / resize_gpu_s.
 *
 * GPUs a job has just left may still be busy for a moment (the suspended job
 * finishing its mini-batch and copying its state out): a job started,
 * resumed or moved onto them waits for that without progress.
 */

/*
 * When the program cannot carry out a mechanism (an executor that cannot
 * stop and continue processes, ...), it says so before the engine exists
 * (gs_engine_opts.mech_unsupported) and the engine refuses every request
 * for it up front: gs_engine_suspend / resume / pack / migrate / resize
 * return GS_EUNSUPPORTED and change nothing, whatever the job's state - so
 * no job is ever in a state the program cannot act on (a SUSPENDED job whose
 * processes keep running on GPUs given to others).  Rules:
 *   - SUSPEND and RESUME go together: masking either masks both (a job that
 *     could not be resumed must never be suspended);
 *   - RESTART cannot be masked (stopping and starting a job is what every
 *     program does); gs_engine_create refuses it, and unknown bits, with
 *     GS_EINVAL;
 *   - LIVE mode adds PACK, MIGRATE and RESIZE: the daemon does none of them
 *     (and resumes a job only on the GPUs it left, else GS_EUNSUPPORTED).
 * Policies ask gs_engine_mech_supported() - from create() on - and plan
 * without what is missing (gandiva does not time-slice without SUSPEND, and
 * pack, migrate and grow default to off without PACK, MIGRATE, RESIZE).
 */
/* 1 when the engine accepts requests for mechanism m, 0 when it refuses them. */
int gs_engine_mech_supported(const gs_engine *e, gs_mech m);

/*
 * Suspend a RUNNING job (time-slicing).  SIM: it finishes its current
 * mini-batch (exactly, from its iteration time: trace iterations, else its
 * profile), copies its state to host memory and releases its GPUs; it is
 * SUSPENDED at once, its GPUs busy until the copy is done.  A packed job
 * leaves its pack.  LIVE: the daemon sends SIGSTOP; its GPU memory stays
 * held by the stopped process (see docs/daemon.md).  GS_ESTATE if it is not
 * RUNNING or would finish within its current mini-batch; GS_EUNSUPPORTED
 * when the program cannot suspend (see above).
 */
int gs_engine_suspend(gs_engine *e, const gs_job *j, const char *reason);
/*
 * Resume a SUSPENDED job on 'gpus' (n == j->gpus, grouped by task).  On the
 * nodes it was suspended from it pays the copy back; elsewhere a migration
 * (its state moves across nodes).  LIVE: on the GPUs it left (SIGCONT), else
 * GS_EUNSUPPORTED - except with gs_engine_opts.live_remap set, where every
 * task may continue on other GPUs of the node it ran on (the program restores
 * its checkpointed GPU state there: a move within the node, charged as a
 * resume on the same nodes); a task on another node is still GS_EUNSUPPORTED.
 * Validation as gs_engine_start().  GS_EUNSUPPORTED when the program cannot
 * resume (see above).
 */
int gs_engine_resume(gs_engine *e, const gs_job *j, const int *gpus, int n);
/*
 * Pack job j (PENDING, arrived, or SUSPENDED) onto the GPUs of 'host', a
 * RUNNING job of the same GPU count that shares them with nobody.  Allowed
 * only if both jobs' GPU memory fits one GPU (profile or the job's gpu_mem)
 * and their measured pair rate is not 0.  Both then progress at their pair
 * rates (gsched/profiles.h) until one of them stops.  GS_ENOFIT when memory
 * or the pair does not allow it; GS_ECONFLICT when the host's node is out of
 * service (bad, failed or drained: it takes no new job); GS_EUNSUPPORTED in
 * LIVE mode or when the program cannot pack (see above).
 */
int gs_engine_pack(gs_engine *e, const gs_job *j, const gs_job *host);
/*
 * Move a RUNNING job to 'gpus' (n == j->gpus; may overlap its current GPUs):
 * checkpoint, move, restore (gs_costs_migrate).  A packed job leaves its
 * pack.  GS_EUNSUPPORTED in LIVE mode or when the program cannot migrate.
 */
int gs_engine_migrate(gs_engine *e, const gs_job *j, const int *gpus, int n, const char *reason);
/*
 * Change a RUNNING elastic job (max_gpus > 0) to n GPUs on 'gpus' (may
 * overlap its current ones): n a valid size (gs_job_size_valid: a multiple of
 * gpus_per_task within [max(min_gpus, gpus_per_task), max_gpus], in its sizes).  Pays a
 * checkpoint-restart at the new size; progress then follows the scaling curve (gs_costs_scale).  A
 * packed job cannot be resized (GS_ESTATE).  GS_EUNSUPPORTED in LIVE mode or
 * when the program cannot resize.
 */
int gs_engine_resize(gs_engine *e, const gs_job *j, const int *gpus, int n, const char *reason);
/* ---- elastic jobs: rescale through DRAINING (issue 13; job.h diagram) ----- */

typedef enum gs_rescale_kind {
    GS_RESCALE_POLICY = 0,   /* the policy wants another size: min gap and max_rescales apply */
    GS_RESCALE_OPERATOR = 1, /* an operator asked (gsched resize): counted, not gap-limited */
    GS_RESCALE_PREEMPT = 2,  /* shrink or stop for someone else / a node drain: bypasses both */
} gs_rescale_kind;

/*
 * Rescale RUNNING elastic job j to the n GPUs 'gpus' (grouped by task; may
 * overlap its current ones; n == 0 drains it back to PENDING).  GPUs in
 * 'gpus' it does not hold must be free: they are reserved at once (counted
 * as allocated, nobody else can take them).  The job enters DRAINING; its
 * current GPUs stay held until the old generation is confirmed gone:
 *   SIM:  after the drain cost (gs_costs_drain; 0 with preempt_cost=SECONDS;
 *         a save longer than drain_timeout is cut there: forced, work since
 *         j->last_ckpt lost), then RESIZING at once and the new generation
 *         pays the relaunch cost (gs_costs_relaunch);
 *   LIVE: when the daemon reports the exit (gs_engine_task_exited: 143 or 0 =
 *         checkpointed, anything else = forced, work since j->last_ckpt lost).
 * 'reason' (copied) is what the user reads ("grew 2->4: +38 % goodput").
 * Errors: GS_ESTATE (not RUNNING, not elastic, already draining),
 * GS_ERANGE (n not a valid size), GS_ENOFIT (a new GPU is not free),
 * GS_EQUOTA (a POLICY rescale inside min_rescale_gap or past max_rescales), GS_EUNSUPPORTED when
 * the program cannot resize (SIM: mech_unsupported has RESIZE) or the policy is
 * GS_POLICY_RIGID (policy.h). Nothing changes on error.
 */
int gs_engine_rescale(gs_engine *e, const gs_job *j, const int *gpus, int n, gs_rescale_kind kind,
                      const char *reason);
/* When a POLICY rescale of j would next be allowed (now if already; GS_TIME_NONE: never,
 * max_rescales used up). */
gs_time gs_engine_rescale_allowed_at(const gs_engine *e, const gs_job *j);
/*
 * LIVE: RUNNING job j saved a checkpoint at 'now' (a hint's ckpt_step): the work done up to
 * now is safe, a later forced drain loses only what follows (j->last_ckpt).  GS_ESTATE if j
 * is not RUNNING.
 */
int gs_engine_checkpointed(gs_engine *e, const gs_job *j, gs_time now);
/* GPUs reserved for draining jobs' next generations (counted in gs_engine_allocated). */
int gs_engine_reserved_gpus(const gs_engine *e);
/* Default drain timeout (LIVE) and min gap between policy rescales (parameters
 * drain_timeout=60s, rescale_gap=60s). */
gs_time gs_engine_drain_timeout(const gs_engine *e);

/*
 * Progress model: who knows how fast a job progresses on its GPUs when that is
 * more than "ideal speed x placement slowdown" (the goodput model, goodput.h:
 * throughput by placement and batch size times statistical efficiency, which
 * changes at epoch boundaries).  Installed by the program after creating the
 * engine and before the first job (NULL = none; the old rates apply).  The
 * engine calls it only for jobs with j->app set; a job's work (spec duration)
 * is then in the model's units: work-us at rate 1.
 */
typedef struct gs_progress_ops {
    /* j holds its GPUs (j->alloc) in a new generation or after a boundary: set *rate
     * (work-us per us, > 0; it includes placement effects) and *next, the value of
     * j's total progress (work-us, as j->progress counts) at which the rate changes
     * next, or GS_TIME_NONE.  Return 0 or GS_E*. */
    int (*rate)(void *st, const gs_engine *e, const gs_job *j, double *rate, gs_time *next);
    /* j's progress reached the 'next' last returned (an epoch boundary) or j got new GPUs
     * (placed = 1: j->alloc is the new generation's): update the model's state. */
    int (*advance)(void *st, const gs_engine *e, const gs_job *j, int placed);
    /* j is final or PENDING with no GPUs (optional). */
    void (*release)(void *st, const gs_engine *e, const gs_job *j);
    /* What-if for policies (optional; NULL = the model does not answer): the rate j would
     * progress at on 'gpus' GPUs, well placed, in the units of 'rate' (work-us per us);
     * 0 when it cannot run at that size. */
    double (*speed)(void *st, const gs_engine *e, const gs_job *j, int gpus);
} gs_progress_ops;
int gs_engine_set_progress(gs_engine *e, const gs_progress_ops *ops, void *state);
/* The installed model state (policies query it: goodput.h), NULL when none. */
void *gs_engine_progress_state(const gs_engine *e);
/* The installed model's ops, NULL when none. */
const gs_progress_ops *gs_engine_progress_ops(const gs_engine *e);
/*
 * Rate (work-us per us) job j would progress at on 'gpus' GPUs, well placed, for policies
 * weighing sizes: the installed model's speed() when j->app is set and the model answers,
 * else the scaling curve relative to the requested size (gs_costs_scale(gpus) /
 * gs_costs_scale(req_gpus); 1 at req_gpus).  0 for gpus <= 0.
 */
double gs_engine_job_speed(const gs_engine *e, const gs_job *j, int gpus);
/*
 * Rate (work-us per us) job j would progress at alone on 'gpus' GPUs of cluster GPU type
 * 'gpu_type' (-1 = the reference type), well placed: gs_engine_job_speed(e, j, gpus) times
 * gs_engine_job_type_rate(e, j, gpu_type, gpus).  A job's work is measured on the reference
 * type, so this is what the engine charges on those GPUs (j->speed = placement x packing x
 * this).  0 for gpus <= 0.
 */
double gs_engine_job_rate(const gs_engine *e, const gs_job *j, int gpu_type, int gpus);
/*
 * The type rate alone: j's throughput on 'gpus' GPUs of cluster GPU type 'gpu_type' relative
 * to the reference type (gs_profiles_rate of its model; 1 for -1, for a type without profile
 * rows, and with type_speed=off; docs/heterogeneity.md).  Always > 0.
 */
double gs_engine_job_type_rate(const gs_engine *e, const gs_job *j, int gpu_type, int gpus);
/*
 * The GPU type a policy predicts j at: while it holds GPUs the slowest type among them (a gang
 * over several types runs at that one's rate), else the type it asks for (-1: any type, which
 * predictions take as the reference type).  For gs_engine_job_rate(e, j, type, n).
 */
int gs_engine_job_gpu_type(const gs_engine *e, const gs_job *j);
/*
 * The type rate j is predicted at now: j->type_rate while it holds GPUs, else the rate of the
 * type it asks for (1: any type).  Remaining time = gs_job_remaining() / (this x the job's
 * other factors).  Exactly 1 on clusters of the reference type.
 */
double gs_engine_job_type_rate_now(const gs_engine *e, const gs_job *j);
/*
 * The type rate of j's ideal run (gs_engine_job_ideal): on the fastest GPU types of this
 * cluster that can hold it at its requested size (1 when none can, and on clusters of the
 * reference type).  Orders that must not depend on where a job happens to run (srtf: a job
 * placed on a slow type would otherwise swap places with the waiting ones, and back) divide
 * remaining work by it.
 */
double gs_engine_job_best_type_rate(const gs_engine *e, const gs_job *j);
/* Name of the reference GPU type (ref_gpu_type=, else the profiles'); NULL when none. */
const char *gs_engine_ref_gpu_type(const gs_engine *e);
/*
 * Ideal run time of j: its work at the best rate it could have alone on this cluster at its
 * requested size (gs_engine_job_rate): on the fastest type that has req_gpus GPUs, or, when
 * it needs several types, on the fastest set of them (a gang runs at its slowest type's rate).  The
 * denominator of slowdown and finish-time fairness (docs/heterogeneity.md).
 */
gs_time gs_engine_job_ideal(const gs_engine *e, const gs_job *j);
/* The LP solver the program passed in (gs_engine_opts.lp), NULL when none. */
const gs_lp_solver *gs_engine_lp(const gs_engine *e);

/* Profiles the engine charges mechanisms from (read-only; never NULL). */
const gs_profiles *gs_engine_profiles(const gs_engine *e);
/* Profile of a job on the GPU type of its current or last GPUs (never NULL). */
const gs_profile *gs_engine_job_profile(const gs_engine *e, const gs_job *j);
/* GPU memory a job needs per GPU: its own gpu_mem, else its profile's. */
int gs_engine_job_gpu_mem(const gs_engine *e, const gs_job *j);
/* Jobs SUSPENDED now; GPU slots used by packed guests (a GPU shared by two counts once here). */
size_t gs_engine_nsuspended(const gs_engine *e);
int gs_engine_packed_gpus(const gs_engine *e);
/* When a GPU stops being busy with a job that left it (<= now: free now). */
gs_time gs_engine_gpu_busy_until(const gs_engine *e, int gpu);
/* SIM with suspend_mech=sigstop (gsched/costs.h): MB of GPU memory that suspended jobs keep on
 * a GPU (0 otherwise), and whether j may be placed there as far as that goes (1: nothing else
 * parked there, or it and j's gs_engine_job_gpu_mem fit the GPU's memory; the engine refuses a
 * placement that does not fit with GS_ENOFIT). */
int gs_engine_gpu_parked_mem(const gs_engine *e, int gpu);
int gs_engine_gpu_fits(const gs_engine *e, const gs_job *j, int gpu);

/* ---- daemon support (appended) ------------------------------------------- */

/*
 * Time of the earliest queued event (timer, arrival, node event; stale
 * entries included, so it may be early, never late), or GS_TIME_MAX when
 * none.  LIVE callers sleep until then instead of polling.
 */
gs_time gs_engine_next_event_time(const gs_engine *e);
/*
 * LIVE: drain node 'node' (drain = 1): its GPUs take no new job - placement,
 * dry runs and policies see them as down (a NODE_DOWN record with 'reason';
 * on_node(node, 1)) - while the jobs holding GPUs there keep them and run on,
 * unlike a node failure, which requeues them; a GPU such a job frees stays
 * unavailable.  drain = 0 returns the node to service (NODE_UP, on_node(node,
 * 0); the next pass may start jobs there).  Arrival checks ("can never fit")
 * count a drained node's GPUs, so drained nodes reject nothing.  0 (nothing
 * happens when the node is already in that state), GS_ERANGE for a bad
 * node, GS_ESTATE in SIM mode (drains there are gs_engine_add_node_drain_event),
 * or the policy hook's error (latched, see "Errors").
 */
int gs_engine_drain_node(gs_engine *e, int node, int drain, const char *reason);
/*
 * LIVE: 'ngpus' GPUs of node 'node' are used by work the engine does not
 * schedule (a cluster manager's foreign jobs); replaces the node's previous
 * count (0 = none; more than the node has counts as all).  That many of its
 * GPUs are taken out of service - free ones, from the highest local index -
 * and placement, dry runs and policies see them as down (on_node(node,
 * node's down flag) after each change, so policies refresh their view); a
 * GPU a job holds is never taken: it is taken when it frees, if the count
 * still asks for it.  When the count drops, GPUs come back (the lowest
 * taken first; a drained node's stay down until it returns to service, and
 * draining or undraining a node keeps them out).  Arrival checks count them,
 * like drained GPUs.  A NOTE record (no job, 'node', a text with the count
 * and 'reason') reports each change.  0, GS_ERANGE for a bad node, GS_EINVAL
 * for ngpus < 0, GS_ESTATE in SIM mode, GS_ENOMEM or the policy hook's
 * error (latched, see "Errors").
 */
int gs_engine_set_outside(gs_engine *e, int node, int ngpus, const char *reason);
/* GPUs of node taken out as outside now; *wanted (may be NULL) gets the count asked for. */
int gs_engine_node_outside(const gs_engine *e, int node, int *wanted);
/* 1 when GPU 'gpu' is taken out of service as outside use. */
int gs_engine_gpu_outside(const gs_engine *e, int gpu);

/* ---- queues and VC views (appended) --------------------------------------- */

/*
 * How pending jobs are shown waiting, as their policy orders them (the
 * policy's queue_key / queue_describe / vc_guarantee / vc_declared ops, see
 * gsched/policy.h, with the defaults below where it leaves them NULL).  They
 * only read: none changes the engine or the policy.
 */
#define GS_QUEUE_GLOBAL (-1)

typedef struct gs_queue_key {
    int32_t queue; /* GS_QUEUE_GLOBAL, or an id >= 0 the policy chose (e.g. a VC index) */
    int64_t key;   /* order inside the queue: smaller is ahead; equal keys by job id */
} gs_queue_key;

/*
 * The queue pending job j waits in and its order there.  Default: one global
 * queue by submission ({GS_QUEUE_GLOBAL, 0}: ids follow submission).  j may be
 * a job the engine does not hold (a dry run): slot -1, vc -1 for a VC no job
 * has used (see gs_engine_find_vc).  On a policy error *k is the default and
 * the error is returned.
 */
int gs_engine_queue_key(const gs_engine *e, const gs_job *j, gs_queue_key *k);
/* Total order of (queue, key, job id): < 0 when a (job ida) sorts before b (job idb). */
int gs_queue_key_cmp(const gs_queue_key *a, int64_t ida, const gs_queue_key *b, int64_t idb);
/*
 * Describe a queue for "position N <text>": "in VC a (by priority, then
 * submission)".  Default "in the queue (by submission)".  buf always gets a
 * NUL-terminated text (cap > 0), "in queue N" if the policy failed (its error
 * is returned).
 */
int gs_engine_queue_text(const gs_engine *e, int queue, char *buf, size_t cap);
/* GPUs the policy promises to VC 'vc' (by name), -1 for none (the default). */
int64_t gs_engine_vc_guarantee(const gs_engine *e, const char *vc);
/*
 * VCs the policy knows of before any job names them (e.g. quotas=...), in its
 * order: i = 0, 1, ... until NULL.  Default: none.
 */
const char *gs_engine_vc_declared(const gs_engine *e, size_t i);
/* ---- dry run (appended) ---------------------------------------------------- */

/*
 * What would happen to a job submitted now (Slurm's WILL_RUN), answered
 * without changing the engine (it is left exactly as it was; GPUs are
 * released and taken back tentatively, nothing else is touched):
 *
 *   GS_PROBE_NOW      free GPUs fit it now, on placement[] (the engine's
 *                     placement: strict locality, else the widest the policy
 *                     asks for);
 *   GS_PROBE_PREEMPT  a preemptive policy with a rank op (policy.h) would
 *                     stop the running jobs victims[]: those past their
 *                     restart protection that it ranks strictly after the
 *                     job, least important first, just enough to make room
 *                     (as gs_engine_start_preempting picks them);
 *                     placement[] as it would be then;
 *   GS_PROBE_WAIT     it can run here but not now (reason; under a
 *                     preemptive policy it also says why no victims: the
 *                     jobs ranked after it would not make room, or the
 *                     policy has no rank and decides at its next pass);
 *   GS_PROBE_NEVER    it can never run here (reason): unknown GPU type or
 *                     pinned cell, no placement on the empty cluster at the
 *                     widest locality the policy asks for, or the policy's
 *                     rejects op (quotas, VCs) - the rules arrival rejects by.
 *
 * The policy may still make a job that fits wait (queue order, quotas).  A
 * non-gang job of several tasks is probed as one of its tasks.  key is where
 * it would wait (gs_engine_queue_key, as the newest job).  Returns 0, or an
 * error (GS_ENOMEM; a policy op's) that fails the dry run alone: the engine
 * is left exactly as it was and not failed (no latch, see "Errors").  Release
 * with gs_probe_release.
 */
typedef enum gs_probe_verdict {
    GS_PROBE_NOW = 0,
    GS_PROBE_PREEMPT = 1,
    GS_PROBE_WAIT = 2,
    GS_PROBE_NEVER = 3,
} gs_probe_verdict;

typedef struct gs_probe {
    gs_probe_verdict verdict;
    int ntasks, gpus_per_task, gpus; /* the request probed */
    int *placement;                  /* gpus GPU indices grouped by task (NOW, PREEMPT) */
    int64_t *victims;                /* ids of the jobs it would preempt (PREEMPT) */
    int nvictims;
    gs_queue_key key; /* the queue it would wait in, and its order there */
    char reason[256]; /* why it does not start on free GPUs now (PREEMPT, WAIT, NEVER), else "" */
} gs_probe;

int gs_engine_probe(gs_engine *e, const gs_job_spec *spec, gs_probe *out);
void gs_probe_release(gs_probe *p);

/* Index of VC 'name' among the VCs seen so far (gs_job.vc), -1 if none used it yet. */
int gs_engine_find_vc(const gs_engine *e, const char *name);
/*
 * Why job j waits: the reason its policy set, else "Resources" when it needs
 * more GPUs than are free now, else "Priority" (others are ahead of it).  For
 * a job that is not pending: its reason (may be NULL).
 */
const char *gs_engine_pending_reason(const gs_engine *e, const gs_job *j);

/* ---- HiveD conformance (issue 14) ------------------------------------------- */

/*
 * Bad nodes (HiveD's bad hardware, as opposed to a node failure): a node
 * marked bad takes no new job - placement, dry runs and policies see its GPUs
 * as unusable (on_node(node, 1); gs_engine_node_bad() tells a bad node from a
 * failed or drained one) - while the jobs holding GPUs there keep them and run
 * on; a failure (gs_engine_add_node_event, down = 1) requeues them instead.
 * Marking good again (bad = 0) returns it (on_node(node, 0) unless it is also
 * down or drained).  NODE_BAD / NODE_GOOD records with 'reason'.  Nothing
 * happens when the node already is in that state.
 */
/* SIM: at time t (GS_EINVAL for a bad node index). */
int gs_engine_add_node_bad_event(gs_engine *e, gs_time t, int node, int bad);
/* LIVE (and SIM tests): now.  0, GS_ERANGE for a bad node index, or a hook's error. */
int gs_engine_set_node_bad(gs_engine *e, int node, int bad, const char *reason);
/* 1 when node 'node' is marked bad. */
int gs_engine_node_bad(const gs_engine *e, int node);
/*
 * Why a node is out of service: GS_NODE_* bits, 0 when it is in service.
 * Each reason is set and cleared on its own (a failure by node events, a
 * drain by gs_engine_drain_node, a bad mark by the two calls above); the
 * node's GPUs are usable only when none holds.
 */
#define GS_NODE_FAILED  1u /* failed (node event, down): its jobs were requeued */
#define GS_NODE_DRAINED 2u /* drained (LIVE; SIM drain events): its jobs run on */
#define GS_NODE_BAD     4u /* marked bad: its jobs run on */
unsigned gs_engine_node_state(const gs_engine *e, int node);
/* "down" (failed), else "drained", else "bad", else "ok" for a GS_NODE_* set. */
const char *gs_node_state_name(unsigned st);

/*
 * SIM: cancel job 'id' at time t, after that instant's arrivals (running,
 * waiting, suspended or not yet arrived; nothing when it has ended by then): a
 * CANCEL record with 'reason' ("cancelled" when NULL).  GS_EUNKNOWN for an
 * unknown id.
 */
int gs_engine_add_cancel_event(gs_engine *e, gs_time t, int64_t id, const char *reason);

/*
 * Work-preserving reconfiguration (HiveD section 3.11): the cluster becomes
 * 'c' (a finished cluster the caller owns and keeps alive until the engine is
 * destroyed; the engine allocates on it, and may add to it the name of a GPU
 * type its jobs ask for that it lacks - no GPU has it).
 *   GPUs are matched by node name, chain (the cell type, else the name, of
 *   the node's top cell) and GPU index in the node; a node whose chain
 *   changed is matched by name and index alone (each new node takes at most
 *   one old one).  Node events scheduled for a vanished node are dropped;
 *   nodes out of service stay so, and bad GPUs bad (gs_engine_set_gpu_bad);
 *   LIVE outside counts carry over by node.
 *   Running jobs (RUNNING, PREEMPTED, DRAINING, packed pairs) keep running:
 *   the GPUs they hold that 'c' still has stay theirs; those 'c' lacks are
 *   dropped from alloc and counted in gs_job.vanished - the job runs on, its
 *   work, speed and predicted end unchanged, its use of them no longer
 *   counted (service counts the GPUs it still has from then on); alloc stays
 *   non-NULL even when every GPU vanished.  Such a job's CPU/memory are not
 *   charged (gs_job.uncharged); it cannot be migrated, resized, rescaled or
 *   packed onto (GS_ESTATE); when its run ends it is an ordinary job again.
 *   A draining job whose next generation's GPUs vanished drains to PENDING.
 *   Suspended jobs are requeued (REQUEUE "reconfigured").
 *   The policy is destroyed and created again on 'c' with the engine's
 *   parameters; its timers are dropped.  It learns of down nodes (on_node;
 *   also of up nodes with GPUs out: bad or used outside), then of every job
 *   holding GPUs through on_adopt (slot order; hived maps
 *   their placement onto their VC's cells and lazy-preempts - downgrades to
 *   opportunistic - those whose cells vanished), then of every waiting job
 *   through on_arrival (slot order); a waiting job that can never fit 'c'
 *   (placement on the empty cluster, its GPU type or pinned cell gone) is
 *   rejected "after reconfiguration: <reason>".  From then on a job requeued
 *   (preempted, node failure) that can never fit the cluster, or that the
 *   policy's rejects op refuses, is rejected the same way at the end of the
 *   instant.  Never leaves a job stuck.  A RECONFIG record says what changed
 *   (then a NOTE per job with vanished GPUs).
 * GS_EINVAL (+ diag) when 'c' is the engine's own cluster, has no GPU, or the
 * policy refuses it (e.g. hived without a HiveD config); GS_EUNSUPPORTED when
 * the policy has no on_adopt op (gandiva-emul); GS_ENOMEM.  On these
 * errors nothing changed and the engine is not failed.  Errors of the hooks
 * once the change is made fail the engine (see "Errors").
 */
/* SIM: at time t (with the cluster events: after that instant's completions, before its
 * arrivals).  The policy is tried on 'c' now, so a cluster it refuses is GS_EINVAL here. */
int gs_engine_add_reconfig_event(gs_engine *e, gs_time t, gs_cluster *c);
/* Now (LIVE; SIM tests). */
int gs_engine_reconfigure(gs_engine *e, gs_cluster *c, gs_diag *d);

/* The policy's inspect op (see gsched/policy.h); GS_ENOENT when it has none. */
int gs_engine_inspect(const gs_engine *e, const char *key, char *buf, size_t cap);

/* ---- issue 16: each lane adds its calls under its own marker ---- */
/* job control: withdraw a queued job from its policy, update a waiting job */
/*
 * LIVE: a PENDING job that has arrived leaves its policy's queues and waits deferred again,
 * as if submitted with gs_engine_submit_deferred(), until gs_engine_release() makes it arrive
 * anew (the daemon's hold of a queued job, an update).  The policy forgets it through its
 * on_withdraw op: GS_EUNSUPPORTED (nothing changes) when the policy has none.  A job released
 * but not yet arrived is simply deferred again.  GS_ESTATE when j is not PENDING, is already
 * deferred, or in SIM mode.
 */
int gs_engine_withdraw(gs_engine *e, const gs_job *j, gs_time now);
/* Whether the policy can give queued jobs back (it has on_withdraw): 1 or 0. */
int gs_engine_can_withdraw(const gs_engine *e);
/*
 * LIVE: change a deferred job (PENDING, not arrived: held, waiting on dependencies, or just
 * withdrawn) to 'spec': its name, VC, priority, GPUs per task and, if it never started, its
 * work.  Validated as a submission (GS_EINVAL with diag); only a rigid job without tasks of
 * different sizes, and its number of tasks cannot change (GS_EINVAL).  Nothing changes on
 * error.  GS_ESTATE when j is not such a job or in SIM mode.
 */
int gs_engine_update_deferred(gs_engine *e, const gs_job *j, const gs_job_spec *spec,
                              gs_diag *diag);

/* accounting: forget a final job (bounded memory) */
/*
 * Forget final job j (DONE, FAILED, REJECTED, CANCELLED): the engine frees what it keeps of
 * it, gs_engine_find_job() no longer finds its id, and j must not be used again (the one
 * exception to "pointers stay valid"): gs_engine_job() of its slot may answer a stand-in
 * final job with id -1.  Slots are never reused, so nothing a policy keeps by slot changes;
 * the memory of a block of forgotten jobs is given back once all of its jobs are forgotten,
 * so an engine's memory follows its active jobs (plus a few bytes per slot).  The simulator
 * never forgets.  GS_ESTATE when j is not final, GS_ENOENT when already forgotten,
 * GS_EINVAL when j is not this engine's, GS_ENOMEM (nothing changed).
 */
int gs_engine_forget(gs_engine *e, const gs_job *j);

/* arrays and dependencies: SIM release events */
/*
 * SIM: add a job like gs_engine_add_job whose arrival waits (it is deferred: PENDING, not
 * arrived, invisible to the policy) until gs_engine_release_at() - a trace's job held or
 * waiting on other jobs (src/sim/simwait.c).  GS_ESTATE in LIVE mode (gs_engine_submit_deferred).
 */
int gs_engine_add_job_deferred(gs_engine *e, const gs_job_spec *spec, const gs_job **out,
                               gs_diag *diag);
/*
 * SIM: a deferred job arrives at t, or now if t is earlier: an arrival event (handled in the
 * event order of any arrival; the clock does not move).  GS_ESTATE if j is not a deferred
 * PENDING job, or in LIVE mode (gs_engine_release).
 */
int gs_engine_release_at(gs_engine *e, const gs_job *j, gs_time t);

/* node administration: SIM drain events */
/*
 * SIM: at time t (with the node events: after that instant's completions,
 * before its arrivals), drain node 'node' (drain = 1) as gs_engine_drain_node
 * does live: no new job is placed there (placement, dry runs and policies see
 * its GPUs as down; on_node(node, 1)), the jobs running there keep their GPUs
 * and run to their end (a GPU they free stays unusable), unlike a failure,
 * which requeues them.  drain = 0 returns it to service (on_node(node, 0)
 * unless it is also failed or bad).  NODE_DOWN / NODE_UP records with reason
 * "drained" / "resumed"; nothing happens when the node already is in that
 * state.  GS_EINVAL for a bad node index, GS_ESTATE in LIVE mode (drains
 * there are gs_engine_drain_node, now).
 */
int gs_engine_add_node_drain_event(gs_engine *e, gs_time t, int node, int drain);

/* ---- issue 17: real GPUs (GPU health, checkpoint-based suspend) ---- */
/*
 * Bad GPUs (a GPU whose health failed: Xid errors, ECC, fallen off the bus), one GPU at a time
 * ('gpu' = global index), as a bad node is for a whole node: nothing new is placed on a bad
 * GPU - placement, dry runs and policies see it as down (the policy hears on_node(its node,
 * the node's down flag), as for a change of outside GPUs) - while a job holding it keeps it
 * and runs on (the program decides what to do with it: the daemon preempts it); once freed it
 * stays out of service.  Marking good again (bad = 0) returns it to service only when no other
 * reason holds (its node failed, drained or bad, or the GPU given to outside work).  A bad GPU
 * is never taken for outside work (gs_engine_set_outside): a GPU marked outside that turns bad
 * leaves the outside count, which takes another free GPU of the node if it can.  GPU_BAD /
 * GPU_GOOD records (node = its node, gpu = the GPU) with 'reason' ("marked bad" / "marked
 * good" when NULL).  LIVE and SIM (no SIM event: tests and embedders call it between steps).
 * Nothing happens when the GPU already is in that state.  0, GS_ERANGE for a bad GPU index,
 * GS_ENOMEM or the policy hook's error (latched, see "Errors").
 */
int gs_engine_set_gpu_bad(gs_engine *e, int gpu, int bad, const char *reason);
/* 1 when GPU 'gpu' is marked bad (0 also for an index out of range). */
int gs_engine_gpu_bad(const gs_engine *e, int gpu);
/*
 * LIVE: SUSPENDED job j's tasks are gone because its suspend could not be carried out (a
 * checkpoint-based suspend failed and the program stopped the job instead, as it stops a
 * preempted one): the job goes back to PENDING as a preempted job does - its progress kept,
 * the restart cost of a checkpointed stop - with a REQUEUE record giving 'reason' (also its
 * pending reason), and the policy hears on_requeue.  GS_ESTATE when j is not SUSPENDED or in
 * SIM mode; the policy hook's error (latched).
 */
int gs_engine_requeue_suspended(gs_engine *e, const gs_job *j, const char *reason, gs_time now);

#ifdef __cplusplus
}
#endif
#endif
