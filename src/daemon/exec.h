/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exec.h - the local executor: runs each task of a job as a process tree on
 * this machine, signals it, notices when it ends, and finds it again after a
 * daemon restart.
 *
 * Process model.  Every task runs under a small shim (`gsched __shim`), a
 * child of the daemon started with setsid(): the shim leads its own session
 * and process group, so the task survives a daemon crash and can be
 * signalled as a group.  The shim forks the command, waits for it and writes
 * its exit status to a status file before exiting with the same code.
 * Before exec'ing the shim, the forked child writes "PID STARTTIME" (the
 * process start time from /proc/PID/stat, which guards against PID reuse)
 * to a pid file, so a daemon that dies right after fork() still finds the
 * task on restart.
 *
 * Files (under the state directory):
 *   runs/JOB.RUN/task-I.pid       "PID STARTTIME" of task I's shim
 *   runs/JOB.RUN/task-I.status    its exit code, written by the shim
 *   logs/JOB/task-I.log           stdout and stderr of task I, every run appended
 *
 * Stop protocol (preemption, cancel, time limit, failed peer): SIGTERM to
 * every task's process group (plus SIGCONT if it was stopped), then SIGKILL
 * once the grace period is over.  The grace period belongs to the whole
 * task: the shim is a child subreaper and, once it got SIGTERM, waits for
 * every descendant before it exits (a shell running a string command dies
 * of SIGTERM at once while the program it started writes its checkpoint).  Suspend / resume:
 * SIGSTOP / SIGCONT to the groups (GPU memory stays held while stopped).
 *
 * The executor never calls the engine: gsd_exec_poll() reports what
 * happened through a callback and the daemon turns that into engine calls.
 * Invariant: a run stays registered (and its run directory on disk) until
 * the daemon calls gsd_exec_forget() after committing the outcome, so a
 * crash in between finds the status files again.
 *
 * Threading: owned by the scheduler thread; not thread-safe.
 * Ownership: gsd_exec_create() returns an object freed by gsd_exec_destroy()
 * (NULL is fine); strings passed in are copied or used during the call only.
 */
#ifndef GSCHED_DAEMON_EXEC_H
#define GSCHED_DAEMON_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "gsched/gsched.h"
#include "spec.h"

typedef struct gsd_exec gsd_exec;

typedef struct gsd_launch {
    int64_t job_id;
    int run; /* 1 for the first run, +1 after each requeue */
    int ntasks;
    int task_index_base;          /* rank of the first task (non-gang parts carry their index) */
    int world_size;               /* tasks in the whole job */
    const char *const *task_node; /* node name per task */
    const char *const *task_cuda; /* CUDA_VISIBLE_DEVICES per task */
    const char *const *task_gpus; /* global GPU indices per task ("3,4"), for the task rows */
    const gsd_spec *spec;
    int64_t group;   /* id of the job it belongs to (non-gang parts) */
    int master_port; /* MASTER_PORT for the job */
    gs_time grace;   /* exported as GSCHED_GRACE_SECONDS */
} gsd_launch;

typedef enum gsd_xev_kind {
    GSD_X_TASK_STARTED, /* a task's shim started: pid, start_ticks */
    GSD_X_TASK_EXITED,  /* one task ended: exit_code, lost */
    GSD_X_PEER_FAILED,  /* a task failed while others run: stopping the others */
    GSD_X_KILLED,       /* grace period over: SIGKILL sent */
    GSD_X_RUN_DONE,     /* every task of the run is gone: exit_code, lost, killed */
} gsd_xev_kind;

typedef struct gsd_xev {
    gsd_xev_kind kind;
    int64_t job_id;
    int run;
    int task;    /* task index (TASK_*), -1 otherwise */
    int64_t pid; /* TASK_STARTED */
    int64_t start_ticks;
    int exit_code;     /* TASK_EXITED: the task's; RUN_DONE: first non-zero, else 0 */
    int failed_task;   /* RUN_DONE: index of the first failed task, -1 if none */
    int lost;          /* the task ended without a status file (not our child) */
    int never_started; /* RUN_DONE after recovery: no task was ever started */
    int killed;        /* SIGKILL was needed */
    const char *gpus;  /* TASK_STARTED: the task's GPUs */
    const char *msg;   /* human explanation, may be NULL */
} gsd_xev;

typedef void (*gsd_xev_fn)(void *ud, const gsd_xev *ev);

/*
 * state_dir: where runs/ and logs/ live (created if missing).  self_exe:
 * the gsched binary (for the shim).  GS_EIO with a message on failure.
 */
int gsd_exec_create(const char *state_dir, const char *self_exe, gsd_exec **out, gs_diag *d);
void gsd_exec_destroy(gsd_exec *x);

/*
 * Start every task of a run.  A task that cannot be started is reported as
 * exited (code 126/127 with a message) at the next poll: launching never
 * fails half-way silently.  Returns 0 or GS_EEXIST (run already registered).
 */
int gsd_exec_launch(gsd_exec *x, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud);
/* SIGTERM now, SIGKILL at now + grace (an earlier deadline is kept).  GS_ENOENT if unknown. */
int gsd_exec_stop(gsd_exec *x, int64_t job_id, gs_time now, gs_time grace);
/* SIGSTOP (stop=1) or SIGCONT (0) to every live task of the job. */
int gsd_exec_suspend(gsd_exec *x, int64_t job_id, int stop);
/* Reap and check tasks, send due SIGKILLs, report through fn. */
void gsd_exec_poll(gsd_exec *x, gs_time now, gsd_xev_fn fn, void *ud);
/* Earliest SIGKILL deadline, or GS_TIME_MAX. */
gs_time gsd_exec_next_deadline(const gsd_exec *x);
/* 1 if some registered task was not started by this process (needs /proc polling). */
int gsd_exec_has_adopted(const gsd_exec *x);
/* Number of registered runs. */
size_t gsd_exec_nruns(const gsd_exec *x);
/* SIGKILL every live task of the job and wait (a few seconds at most) until they are gone. */
void gsd_exec_kill_now(gsd_exec *x, int64_t job_id);
/* Forget a finished run and remove its run directory (after the outcome is committed). */
void gsd_exec_forget(gsd_exec *x, int64_t job_id);
/* 1 if the job has a registered run. */
int gsd_exec_has(const gsd_exec *x, int64_t job_id);

/*
 * Restart recovery: register run 'run' of a job from its run directory.
 * Each task is alive (shim running, same start time), exited (status file)
 * or lost.  A task with no pid file yet is waited for a few seconds (the
 * daemon may have died between fork() and the child writing it).  Counts
 * go to *alive, *exited and *lost.  The run is registered even when nothing
 * is alive; the next poll reports RUN_DONE.
 */
int gsd_exec_recover(gsd_exec *x, int64_t job_id, int run, int ntasks, gs_time now, int *alive,
                     int *exited, int *lost);
/*
 * After recovery: kill (SIGKILL, waiting up to a few seconds) every task
 * in runs/ that no registered run claims, then remove those directories.
 * Returns the number of processes killed; 'log' gets one line per action.
 */
int gsd_exec_sweep(gsd_exec *x, void (*log)(void *ud, const char *msg), void *ud);

/* Log file of a task (does not check that it exists). */
void gsd_exec_log_path(const gsd_exec *x, int64_t job_id, int task, char *buf, size_t cap);

/* Start time (clock ticks since boot) of a process from /proc/PID/stat; -1 if gone. */
int64_t gsd_proc_start_ticks(int64_t pid, char *state);

/* gsd_shim_main (`gsched __shim`): daemon.h. */

/* ---- GPU discovery (nvml.c) ----------------------------------------------------------------- */

/*
 * Build a one-node cluster of the GPUs NVML reports (libnvidia-ml.so.1 is
 * loaded with dlopen; no build dependency).  GS_ENOENT when NVML or GPUs
 * are absent (message in d), so callers can fall back to a declared
 * cluster.  The GPU type is the model name without vendor words ("H100").
 */
int gsd_nvml_cluster(gs_cluster **out, gs_diag *d);

#endif
