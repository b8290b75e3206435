/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/job.h - the job model and its state machine.
 *
 * A job is a gang of 'ntasks' tasks of 'gpus_per_task' GPUs each; a task's
 * GPUs always sit on one node.  Its work is the time it needs at ideal
 * placement and full speed ("duration"), kept as remaining work so that any
 * change of speed (placement slowdown, packing, restart overhead) simply
 * recomputes the completion instant.
 *
 * State machine (the engine performs every transition; policies only ask).
 * Each arrow is made by exactly one static function of src/core/engine.c,
 * named in brackets (the public request that leads to it after the dash):
 *
 *   (submit)  -> PENDING     arrival                        [tr_arrive]
 *   (submit deferred) -> PENDING, not arrived, until gs_engine_release()
 *                            makes it arrive now (daemon: held jobs, jobs
 *                            waiting on dependencies)        [tr_arrive]
 *   PENDING   -> PENDING, not arrived, deferred again: the policy forgets it
 *                            - gs_engine_withdraw() (daemon: hold or update
 *                            of a queued job)                [tr_withdraw]
 *   (submit), PENDING -> REJECTED   it can never fit; a policy refuses it
 *                                   - gs_engine_reject()    [tr_reject]
 *   PENDING   -> RUNNING     - gs_engine_start()             [tr_start]
 *   PENDING, SUSPENDED -> RUNNING   packed onto a running job
 *                                   - gs_engine_pack()      [tr_pack]
 *   RUNNING   -> DONE        work done (simulator) / all tasks exit 0 (daemon)
 *   RUNNING   -> FAILED      a task exits != 0 or cannot be launched (daemon)
 *                            (both: tr_finish, below)
 *   RUNNING   -> PREEMPTED   - gs_engine_preempt() (daemon): stopping,
 *                            checkpointing, GPUs still held  [tr_stop]
 *   RUNNING   -> PENDING     - gs_engine_preempt() (simulator: instantaneous)
 *   PREEMPTED -> PENDING     the stop is done - gs_engine_task_exited()
 *   RUNNING, PREEMPTED, SUSPENDED -> PENDING   its node failed
 *   SUSPENDED -> PENDING     its suspend could not be carried out, the job
 *                            was stopped instead (daemon: a checkpoint-based
 *                            suspend failed) - gs_engine_requeue_suspended()
 *                            (all five: requeued)            [tr_requeue]
 *   RUNNING   -> SUSPENDED   - gs_engine_suspend(): time-sliced out; its state
 *                            is in host memory, it holds no GPUs [tr_suspend]
 *   SUSPENDED -> RUNNING     - gs_engine_resume()            [tr_resume]
 *   any non-final state -> DONE, FAILED, CANCELLED
 *                            - gs_engine_task_exited(), gs_engine_cancel()
 *                            (user request, daemon)          [tr_finish]
 *   (adopt)   -> RUNNING     - gs_engine_adopt(): a job found running after a
 *                            daemon restart (arrives, then tr_start)
 *
 * Elastic jobs (max_gpus > 0) change size through DRAINING (issue 13; see
 * docs/elastic.md).  One generation is one set of processes on one set of
 * GPUs; 'generation' counts them:
 *
 *   RUNNING(k) -> DRAINING(k -> k')  - gs_engine_rescale(): the k' GPUs are
 *                            reserved now (nobody else can take them); the
 *                            old ones stay held            [tr_drain]
 *   DRAINING  -> RUNNING(k') the old generation is confirmed gone (SIM: after
 *                            the drain cost; LIVE: gs_engine_task_exited()
 *                            with 143 = checkpointed, else forced = work since
 *                            the last checkpoint lost).  RESIZING is this
 *                            instant: old GPUs not in k' are freed, the
 *                            reservation becomes the allocation, generation
 *                            += 1, the new generation LAUNCHes (pays the
 *                            restart cost without progress)  [tr_resized]
 *   DRAINING  -> PENDING     k' = 0 (a preemption that drains)  [tr_resized]
 *   DRAINING  -> DONE, FAILED, CANCELLED            [tr_finish]
 *
 * LAUNCHING(k) is RUNNING(k) while the restart cost is being paid
 * (gs_job_launching()); the daemon also keeps it until the first hint.
 * Invariants (tests/test_elastic.c): a GPU belongs to at most one job
 * generation at any instant (a reserved GPU counts as taken); a draining job's
 * GPUs become free only at RESIZING; sizes stay in the valid set; policy
 * rescales respect min_rescale_gap and max_rescales; failures have their own
 * budget (max_failures) and never count as rescales.
 *
 * The shared steps are written once: leave_pending (queued time, pending
 * counters), leave_suspended, charge_restart (first start or restart cost:
 * tr_start, tr_pack), close_run (end of a run: progress, executed, service,
 * GPUs freed), swap_gpus (the one rollback of a failed GPU take: migrate,
 * resize).
 *
 * gs_engine_migrate() and gs_engine_resize() keep a job RUNNING: it moves to
 * other GPUs, or to another number of GPUs, and pays the mechanism's cost
 * without progress.
 *
 * DONE, FAILED, REJECTED and CANCELLED are final.
 *
 * Ownership: gs_job objects belong to the engine (gs_engine_destroy frees
 * them); pointers stay valid for the engine's lifetime, except a final job's
 * once the program forgets it (gs_engine_forget, LIVE: the daemon's bounded memory).  Strings are
 * interned in the engine and borrowed.
 */
#ifndef GSCHED_JOB_H
#define GSCHED_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_JOB_STATE_MAP(XX)         \
    XX(PENDING, "PENDING", "PD")     \
    XX(RUNNING, "RUNNING", "R")      \
    XX(PREEMPTED, "PREEMPTED", "PR") \
    XX(SUSPENDED, "SUSPENDED", "S")  \
    XX(DRAINING, "DRAINING", "DR")   \
    XX(DONE, "DONE", "CD")           \
    XX(FAILED, "FAILED", "F")        \
    XX(REJECTED, "REJECTED", "RJ")   \
    XX(CANCELLED, "CANCELLED", "CA")

typedef enum gs_job_state {
#define GS__JS_ENUM(name, str, abbr) GS_JOB_##name,
    GS_JOB_STATE_MAP(GS__JS_ENUM)
#undef GS__JS_ENUM
        GS_JOB_NSTATES
} gs_job_state;

const char *gs_job_state_name(gs_job_state s); /* "RUNNING" */
const char *gs_job_state_abbr(gs_job_state s); /* Slurm-style "R", "PD" */
int gs_job_state_parse(const char *s);         /* -1 if unknown */
static inline int gs_job_state_final(gs_job_state s)
{
    return s == GS_JOB_DONE || s == GS_JOB_FAILED || s == GS_JOB_REJECTED || s == GS_JOB_CANCELLED;
}

/*
 * The mechanisms the engine charges (costs.h), one row each, in the order
 * every output lists them (summary.json, report.html; jobs.csv, compare.csv
 * and the comparison table list the rows marked listed, the table in the
 * column order 'tcol').  A new mechanism is a row here plus its charging
 * code in the engine: every output picks it up.  Columns:
 *   NAME    GS_MECH_<NAME>
 *   count   the job's counter, an expression of 'j' (a const gs_job *)
 *   cost    GPU-seconds the job held without progress for it, an
 *           expression of 'j' (0.0: the mechanism costs nothing itself)
 *   key     its name in outputs ("restarts"); tables capitalise it
 *   costkey its cost's name in outputs ("restart"), NULL when it has none
 *   listed  1: also in jobs.csv, compare.csv and the comparison table
 *   tcol    column in the comparison table (-1: not shown; column 2 is the
 *           packed share, which is no counter), twidth its width
 */
#define GS_MECH_MAP(XX)                                                                     \
    XX(RESTART, (j)->overhead_charges, (j)->overhead_gpu_s, "restarts", "restart", 0, 5, 9) \
    XX(SUSPEND, (j)->suspends, (j)->suspend_gpu_s, "suspends", "suspend", 1, 0, 9)          \
    XX(RESUME, (j)->resumes, 0.0, "resumes", NULL, 0, -1, 0)                                \
    XX(PACK, (j)->packs, 0.0, "packs", NULL, 1, 1, 8)                                       \
    XX(MIGRATE, (j)->migrations, (j)->migrate_gpu_s, "migrations", "migrate", 1, 3, 10)     \
    XX(RESIZE, (j)->resizes, (j)->resize_gpu_s, "resizes", "resize", 1, 4, 8)

typedef enum gs_mech {
#define GS__MECH_ENUM(name, count, cost, key, costkey, listed, tcol, twidth) GS_MECH_##name,
    GS_MECH_MAP(GS__MECH_ENUM)
#undef GS__MECH_ENUM
        GS_MECH_N
} gs_mech;

typedef struct gs_mech_info {
    const char *key;     /* "restarts" */
    const char *costkey; /* "restart", NULL when free */
    int listed;          /* in jobs.csv, compare.csv and the comparison table */
    int tcol, twidth;    /* comparison table column (-1: none) and width */
} gs_mech_info;

/* Row m of GS_MECH_MAP (NULL when out of range). */
const gs_mech_info *gs_mech_get(gs_mech m);

/* Named priorities accepted in traces and specs (HiveD's conventions). */
#define GS_PRIO_PROD          100
#define GS_PRIO_TEST          10
#define GS_PRIO_OPPORTUNISTIC (-1)
/* HiveD's highest guaranteed priority: a hived_strict spec stays in -1..1000 */
#define GS_HIVED_MAX_PRIORITY 1000

/*
 * Affinity groups (issue 14; HiveD's v1 members of different sizes and its v2
 * nested pod groups).  A job's tasks may have different GPU counts
 * (task_gpus) and may be organised in nested groups, each a contiguous range
 * of tasks whose GPUs must all lie inside one cell of a given cell type
 * (HiveD's withinOneCell).  Groups are listed in pre-order: a group's range
 * contains the ranges of the groups nested in it, and its parent comes before
 * it.  Only policies with GS_POLICY_GROUPS (hived) place such jobs; the
 * engine rejects them on arrival under any other policy, with the reason.
 */
typedef struct gs_task_group {
    int32_t lo, hi;      /* the tasks [lo, hi) of the job, 0 <= lo < hi <= ntasks */
    int32_t parent;      /* index of the enclosing group in the same list, -1 = none */
    const char *within;  /* spec: cell type name (HiveD withinOneCell); NULL/"" = none */
    int32_t within_type; /* job: cluster cell-type id of 'within', -1 = none (spec: ignored) */
} gs_task_group;

/*
 * What a submitter asks for.  All strings are borrowed by gs_engine_add_job(),
 * which copies them.  Zero-initialise and fill what you know; see
 * gs_job_spec_init() for defaults.
 */
typedef struct gs_job_spec {
    int64_t id;              /* external id; -1 = assign the next free one */
    const char *name;        /* optional */
    const char *user;        /* optional */
    const char *vc;          /* virtual cluster / queue; NULL or "" = "default" */
    int priority;            /* higher wins; -1 = opportunistic */
    int ntasks;              /* >= 1 */
    int gpus_per_task;       /* >= 1 */
    const char *gpu_type;    /* NULL or "" = any */
    gs_time submit;          /* arrival time */
    gs_time duration;        /* work at ideal placement, > 0 */
    int64_t iterations;      /* informative; 0 = unknown */
    const char *model;       /* model name (profiles, slowdown class); optional */
    int cpus_per_task;       /* 0 = not modelled */
    int mem_mb_per_task;     /* 0 = not modelled */
    int gpu_mem_mb;          /* GPU memory per GPU, for packing; 0 = unknown */
    int gang;                /* 1 = all tasks at once (default); 0 = incremental */
    int min_gpus, max_gpus;  /* elastic range in GPUs; 0 = rigid */
    const char *pinned_cell; /* HiveD pinnedCellId; optional */
    int lazy_preemption;     /* HiveD lazy preemption */
    /* ---- elastic (issue 13): only read when max_gpus > 0 ---- */
    const int32_t *sizes; /* valid GPU counts, ascending, within [min_gpus, max_gpus];
                             NULL/0 = every multiple of gpus_per_task in the range */
    int nsizes;
    gs_time min_rescale_gap; /* least time between two policy rescales; GS_TIME_NONE = the
                                engine's default (rescale_gap parameter, 60 s) */
    gs_time deadline;        /* absolute instant the job should finish by; GS_TIME_NONE = none */
    int64_t batch_size;      /* global batch size; 0 = unknown / chosen by the goodput model */
    int max_rescales;        /* policy rescales allowed; -1 = unlimited (default) */
    int max_failures;        /* failed generations tolerated before FAILED; 0 = none (default) */
    const char *app;         /* goodput-model application ("cifar10"); NULL = none */
    /* ---- affinity groups (issue 14) ---- */
    const int32_t *task_gpus;    /* GPUs of each task (ntasks entries, each >= 1), in task order;
                                    NULL = gpus_per_task each.  When given, gpus_per_task is
                                    ignored (the job's is the largest entry) */
    const gs_task_group *groups; /* nested withinOneCell groups (see gs_task_group); NULL/0 */
    int ngroups;
    int hived_strict; /* validate as HiveD's pod-scheduling spec does: a VC named, priority in
                         -1..GS_HIVED_MAX_PRIORITY, no pinned cell for an opportunistic job
                         (HiveD's messages); set by readers of a HiveD-format spec */
    /* ---- heterogeneity (issue 15) ---- */
    double steps;  /* work in training steps (Gavel's total_steps), > 0: the engine makes it the
                      work at the throughput of 'model' on the reference GPU type at the requested
                      size (gs_profiles_tput; docs/heterogeneity.md) and 'duration' must be 0;
                      0 = 'duration' is the work */
    double weight; /* priority weight (Gavel's priority_weight), >= 0; 0 and the default = 1 */
} gs_job_spec;

void gs_job_spec_init(gs_job_spec *s);

typedef struct gs_job {
    /* ---- request (immutable once added) ---- */
    int32_t slot; /* dense index in the engine, in order of addition */
    int64_t id;
    const char *name, *user, *vc_name, *model;
    int32_t vc; /* engine VC index (interned vc_name) */
    int32_t user_id;
    int32_t model_id;
    int32_t priority;
    int32_t ntasks, gpus_per_task, gpus; /* gpus = ntasks * gpus_per_task */
    int32_t gpu_type;                    /* cluster GPU type id, -1 = any */
    int32_t cpus_per_task, mem_mb_per_task, gpu_mem_mb;
    int32_t gang, lazy_preemption, min_gpus, max_gpus;
    int32_t pinned_cell; /* cluster cell index, -1 = none */
    int64_t group;       /* id of the job it was split from (non-gang jobs), else its own id */
    int32_t task_index;  /* index of this task in its group (0 for gang jobs) */
    gs_time submit;
    gs_time work; /* total work (us at ideal speed on the reference GPU type; from 'steps'
                     when the spec gave them) */
    int64_t iterations;
    double steps;  /* the spec's training steps (0: the work was given as a duration) */
    double weight; /* priority weight (> 0; the spec's, 1 by default) */

    /* ---- lifecycle (maintained by the engine) ---- */
    gs_job_state state;       /* PENDING before arrival too, with arrived == 0 */
    int32_t arrived;          /* 1 from the arrival instant on; policies only see arrived jobs */
    int32_t deferred;         /* LIVE: its arrival waits for gs_engine_release() */
    gs_time first_start;      /* GS_TIME_NONE until the first start */
    gs_time last_start;       /* start of the current/last run */
    gs_time end;              /* GS_TIME_NONE until final */
    gs_time pending_since;    /* start of the current pending interval */
    gs_time queued;           /* total time PENDING so far (not counting the open interval) */
    gs_time executed;         /* total time holding GPUs so far (closed runs only) */
    double service;           /* GPU-seconds held so far (closed runs only) */
    gs_time remaining;        /* work left at 'progress_from' */
    gs_time progress_from;    /* instant from which remaining decreases at 'speed' */
    double speed;             /* work-us per us while progressing (1 = ideal) */
    gs_time overhead;         /* restart overhead charged in the current run */
    gs_time overhead_total;   /* all restart overheads charged so far */
    double overhead_gpu_s;    /* total GPU-seconds lost to restart overheads */
    int32_t overhead_charges; /* number of runs that paid a restart overhead */
    int32_t stop_saved;       /* last stop could checkpoint (preemption) vs. lost node */
    gs_time progress;         /* work done before 'progress_from' (== work once DONE) */
    gs_time protect_until;    /* preemptive policies keep it running until then (see plan) */
    int32_t preemptions;
    int32_t restarts;
    int32_t *alloc; /* current GPUs (grouped by task), NULL when none */
    int32_t nalloc;
    /* Work-preserving reconfiguration (gs_engine_reconfigure): GPUs of the current run that
     * the cluster no longer has.  The job runs on there unaccounted; alloc lists the others
     * (nalloc = gpus - vanished, possibly 0 - alloc stays non-NULL), no longer grouped by
     * task.  0 for every other job; back to 0 when the run ends. */
    int32_t vanished;
    /* 1 while the current run's CPU/memory are not charged to nodes (its GPUs vanished in
     * part, or a reconfigured node cannot hold them): nothing is refunded either */
    int32_t uncharged;
    int32_t *last_alloc; /* GPUs of the most recent ended run (kept for reports) */
    int32_t nlast_alloc;
    uint32_t gen;       /* bumps on every run change; stale events are dropped */
    const char *reason; /* why pending / why rejected or failed (static or interned) */
    int32_t exit_code;  /* daemon: last exit status */

    /* ---- mechanisms (suspend/resume, packing, migration, resizing; see engine.h) ---- */
    int32_t req_gpus;   /* GPUs asked for at submission ('gpus' changes when resized) */
    int32_t pack_with;  /* slot of the job sharing its GPUs, -1 = none */
    int32_t pack_guest; /* 1: it shares GPUs owned by pack_with; 0: it owns its GPUs */
    double place_rate;  /* 1 / placement slowdown of the current GPUs */
    double pack_rate;   /* progress rate while packed (1 = alone), from the profiles */
    double scale_rate;  /* progress rate at 'gpus' relative to 'req_gpus' (scaling curve) */
    double type_rate;   /* progress rate on the GPU type(s) of the current GPUs relative to the
                           reference type (the slowest type's when they span several; 1 with
                           type_speed=off; docs/heterogeneity.md) */
    gs_time ready_at;   /* SUSPENDED: its GPU state is in host memory from then on */
    gs_time owed;       /* SUSPENDED: no-progress time of a restart or move it was still
                           paying when suspended; paid on resume */
    gs_time since;      /* start of the current SUSPENDED interval / pack */
    gs_time suspended;  /* total time SUSPENDED (closed intervals) */
    gs_time packed;     /* total time sharing GPUs (closed intervals) */
    gs_time mech_time;  /* time holding GPUs without progress because of suspend/resume,
                           migration, resizing or waiting for the previous occupant */
    int32_t suspends, resumes, migrations, resizes, packs;
    double suspend_gpu_s; /* GPU-seconds spent copying state for suspends and resumes */
    double migrate_gpu_s; /* GPU-seconds without progress for migrations */
    double resize_gpu_s;  /* GPU-seconds without progress for resizes */
    /* (the mechanisms' counters and costs are listed in GS_MECH_MAP) */

    /* ---- elastic (issue 13; request part immutable, the rest engine-maintained) ---- */
    int32_t *sizes; /* valid GPU counts ascending (engine-owned copy), NULL = any */
    int32_t nsizes;
    gs_time min_rescale_gap; /* resolved (never GS_TIME_NONE) */
    gs_time deadline;        /* GS_TIME_NONE = none */
    int64_t batch_size;      /* 0 = unknown */
    int32_t max_rescales;    /* -1 = unlimited */
    int32_t max_failures;
    const char *app;     /* interned; NULL = none */
    uint32_t generation; /* generations launched so far (1 after the first start) */
    int32_t target_gpus; /* DRAINING: k' (0 = to PENDING) */
    int32_t *resv;       /* DRAINING: GPUs reserved for the next generation */
    int32_t nresv;
    gs_time drain_since;        /* DRAINING: when the drain began */
    gs_time drain_deadline;     /* DRAINING: when it is forced (SIM: when it ends) */
    int32_t rescale_kind;       /* DRAINING: gs_rescale_kind of the current drain */
    int32_t rescales;           /* policy/operator rescales done (not failures, not preemptions) */
    int32_t failures;           /* failed generations (own budget, max_failures) */
    gs_time last_rescale;       /* instant of the last policy/operator rescale decision */
    const char *rescale_reason; /* reason of the last rescale (interned), NULL = none */
    double rescale_gpu_s;       /* GPU-seconds lost to rescaling: drains + relaunch + lost work */
    double lost_work_gpu_s; /* part of rescale_gpu_s that was work thrown away (forced drains) */
    gs_time last_ckpt;      /* progress (work-us) at the last known checkpoint; LIVE: hints */

    /* ---- affinity groups (issue 14; request, immutable) ---- */
    int32_t *task_gpus;    /* GPUs of each task (engine-owned), NULL = gpus_per_task each; when set,
                              gpus_per_task is the largest entry and gpus their sum */
    int32_t *task_off;     /* first index of each task's GPUs in alloc (ntasks + 1 entries), NULL
                              when task_gpus is */
    gs_task_group *groups; /* engine-owned, 'within' interned, within_type resolved */
    int32_t ngroups;
} gs_job;

/* GPUs of task t of j, and where its GPUs start in j->alloc (tasks are contiguous there). */
static inline int gs_job_task_gpus(const gs_job *j, int t)
{
    return j->task_gpus ? j->task_gpus[t] : j->gpus_per_task;
}
static inline int gs_job_task_first(const gs_job *j, int t)
{
    return j->task_off ? j->task_off[t] : t * j->gpus_per_task;
}
/* 1 when j needs a policy with GS_POLICY_GROUPS (tasks of different sizes, or groups). */
static inline int gs_job_grouped(const gs_job *j)
{
    return j->task_gpus != NULL || j->ngroups > 0;
}
/* Why the engine rejects a grouped job on arrival under a policy without GS_POLICY_GROUPS. */
#define GS_GROUPS_NEED_POLICY \
    "tasks of different sizes and withinOneCell groups need a policy that places them: hived"

/* LAUNCHING(k): RUNNING while the new generation pays its restart cost at 'now'. */
int gs_job_launching(const gs_job *j, gs_time now);
/* 1 if n is a valid size for elastic job j (in [min_gpus, max_gpus], multiple of
 * gpus_per_task, in 'sizes' when given). */
int gs_job_size_valid(const gs_job *j, int n);

/* Executed time including the open run at 'now'. */
gs_time gs_job_executed(const gs_job *j, gs_time now);
/* GPU-seconds of service including the open run at 'now'. */
double gs_job_service(const gs_job *j, gs_time now);
/* Remaining work at 'now' (>= 0). */
gs_time gs_job_remaining(const gs_job *j, gs_time now);
/* Total pending time including the open interval at 'now'. */
gs_time gs_job_queued(const gs_job *j, gs_time now);
/* Total time SUSPENDED including the open interval at 'now'. */
gs_time gs_job_suspended(const gs_job *j, gs_time now);
/* Total time packed (sharing its GPUs) including the open interval at 'now'. */
gs_time gs_job_packed(const gs_job *j, gs_time now);
/* Mechanism m's counter and cost (GPU-seconds) for job j (GS_MECH_MAP). */
uint64_t gs_job_mech_count(const gs_job *j, gs_mech m);
double gs_job_mech_gpu_s(const gs_job *j, gs_mech m);

#ifdef __cplusplus
}
#endif
#endif
