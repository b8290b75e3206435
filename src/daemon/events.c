/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.c - what the executor reports (gsd_exec_poll, gsd_exec_launch)
 * turned into daemon records and engine calls: task rows, launch failures,
 * SIGKILLs, and the end of a run (gs_engine_task_exited, gs_engine_cancel,
 * or a requeue when tasks were lost or never started).
 *
 * Launch failures (gsd_xev.launch_failed: the executor could not start the
 * command - never the command's own exit code) are bounded: the job's own
 * (workdir, command not executable) requeue it until its
 * gsd_opts.launch_attempts-th launch, which fails it with the reason; the
 * node's (state directory not writable) drain the nodes (drain.c) and
 * requeue the job without counting an attempt - it is not the job's fault.
 *
 * Invariants: the executor never calls the engine; this file does, on the
 * scheduler thread, inside the cycle (so the outcome is committed with the
 * cycle).  A finished run is queued for gsd_exec_forget, which gsd_act
 * calls only after the commit, so a crash in between finds it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd_sched.h"

/* ---- executor events ------------------------------------------------------------------------ */

static void task_put(gsd_sched *g, int64_t job, int run, int idx, const char *handle, int64_t code,
                     const char *gpus)
{
    if (g->ntput == g->captput) {
        g->captput = g->captput ? g->captput * 2 : 64;
        g->tput = gsd_xrealloc(g->tput, g->captput * sizeof *g->tput);
    }
    g->tput[g->ntput++] =
        (gsd_taskput){job, run, idx, gsd_xstrdup(handle), code, gsd_xstrdup(gpus)};
}

/* A run the executor could not start (ev->launch_failed): requeue the job, or fail it at its
 * last attempt.  1 when handled. */
static int launch_failed(gsd_sched *g, const gs_job *j, gsd_jobx *x, const gsd_xev *ev, gs_time now)
{
    char why[400];
    const char *msg = ev->msg ? ev->msg : "the task could not be started";
    if (ev->launch_failed == GSD_XLAUNCH_NODE) {
        /* the node cannot launch anything: not this job's fault, and not worth another
         * try until the nodes are back (gsd_drain stops new starts) */
        gsd_drain(g, msg, now);
        snprintf(why, sizeof why, "launch failed on a drained node (not counted): %s", msg);
        const char *r = gsd_intern(g, why);
        gs_engine_preempt(g->e, j, r);
        gs_engine_task_exited(g->e, j, ev->exit_code, r, now);
        return 1;
    }
    x->launch_failures++;
    int max = g->sh.o.launch_attempts > 0 ? g->sh.o.launch_attempts : 1;
    if (x->launch_failures < max) {
        snprintf(why, sizeof why, "launch failed (attempt %d of %d): task %d: %s: requeued",
                 x->launch_failures, max, ev->failed_task, msg);
        const char *r = gsd_intern(g, why);
        gs_engine_preempt(g->e, j, r);
        gs_engine_task_exited(g->e, j, ev->exit_code, r, now);
        return 1;
    }
    snprintf(why, sizeof why, "launch failed %d time%s (--launch-attempts %d): task %d: %s",
             x->launch_failures, x->launch_failures == 1 ? "" : "s", max, ev->failed_task, msg);
    gs_engine_task_exited(g->e, j, ev->exit_code ? ev->exit_code : 126, gsd_intern(g, why), now);
    return 1;
}

static void finalize_run(gsd_sched *g, const gs_job *j, const gsd_xev *ev, gs_time now)
{
    gsd_jobx *x = gsd_jx(g, j->slot);
    if (g->nforget == g->capforget) {
        g->capforget = g->capforget ? g->capforget * 2 : 64;
        g->forget = gsd_xrealloc(g->forget, g->capforget * sizeof *g->forget);
    }
    g->forget[g->nforget++] = j->id;
    if (j->state == GS_JOB_SUSPENDED) {
        /* a suspended job's tasks are gone: cancelled (stopped on request), or ended while
         * stopped (killed from outside); either way it cannot continue */
        x->exit_code = ev->exit_code;
        char why[200];
        if (x->stop == GSD_STOP_CANCEL)
            snprintf(why, sizeof why, "cancelled by %s", x->cancel_by ? x->cancel_by : "?");
        else
            snprintf(why, sizeof why, "its tasks ended while it was suspended (exit code %d)",
                     ev->exit_code);
        gs_engine_cancel(g->e, j, gsd_intern(g, why), now);
        return;
    }
    if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PREEMPTED) return;
    x->exit_code = ev->exit_code;
    char why[200];
    if (x->stop == GSD_STOP_CANCEL) {
        snprintf(why, sizeof why, "cancelled by %s", x->cancel_by ? x->cancel_by : "?");
        gs_engine_cancel(g->e, j, gsd_intern(g, why), now);
        return;
    }
    if (j->state == GS_JOB_PREEMPTED) {
        snprintf(why, sizeof why, "tasks stopped%s",
                 ev->killed ? " (SIGKILL after grace period)" : "");
        gs_engine_task_exited(g->e, j, ev->exit_code, gsd_intern(g, why), now);
        return;
    }
    if (ev->never_started || (ev->lost && x->stop != GSD_STOP_TIMEOUT && x->lost_requeues < 3)) {
        if (!ev->never_started) x->lost_requeues++;
        const char *r = ev->never_started ? "never started before a daemon restart: requeued"
                                          : "task lost (no exit status): requeued";
        gs_engine_preempt(g->e, j, r);
        gs_engine_task_exited(g->e, j, ev->exit_code, r, now);
        return;
    }
    if (ev->launch_failed && launch_failed(g, j, x, ev, now)) return;
    if (x->stop == GSD_STOP_TIMEOUT) {
        char lim[32];
        gsd_format_duration(x->spec.time_limit, lim, sizeof lim);
        snprintf(why, sizeof why, "time limit of %s exceeded", lim);
        x->exit_code = ev->exit_code ? ev->exit_code : 124;
        gs_engine_task_exited(g->e, j, x->exit_code, gsd_intern(g, why), now);
        return;
    }
    if (ev->exit_code) {
        if (ev->msg)
            snprintf(why, sizeof why, "task %d exited with code %d: %s", ev->failed_task,
                     ev->exit_code, ev->msg);
        else
            snprintf(why, sizeof why, "task %d exited with code %d", ev->failed_task,
                     ev->exit_code);
    } else {
        snprintf(why, sizeof why, "all tasks exited with code 0");
    }
    gs_engine_task_exited(g->e, j, ev->exit_code, gsd_intern(g, why), now);
}

void gsd_on_xev(void *ud, const gsd_xev *ev)
{
    gsd_sched *g = ud;
    const gs_job *j = gs_engine_find_job(g->e, ev->job_id);
    if (!j) return;
    gs_time now = g->last_now;
    gsd_jobx *x = gsd_jx(g, j->slot);
    switch (ev->kind) {
    case GSD_X_TASK_STARTED:
        task_put(g, ev->job_id, ev->run, ev->task, ev->handle, GSD_NONE, ev->gpus);
        break;
    case GSD_X_TASK_EXITED:
        task_put(g, ev->job_id, ev->run, ev->task, ev->handle, ev->exit_code, NULL);
        if (ev->launch_failed) {
            g->m.launch_failures++;
            gsd_push_rec(g, GSD_EV_LAUNCH_FAIL, j->slot, now, "task %d: %s", ev->task,
                         ev->msg ? ev->msg : "it could not be started");
        } else {
            gsd_push_rec(g, GSD_EV_TASK_EXIT, j->slot, now, "task %d exited with code %d%s%s",
                         ev->task, ev->exit_code, ev->msg ? ": " : "", ev->msg ? ev->msg : "");
        }
        break;
    case GSD_X_PEER_FAILED:
        if (x->stop == GSD_STOP_NONE) x->stop = GSD_STOP_FAILED;
        gsd_mark_dirty(g, j->slot);
        gsd_push_rec(g, GSD_EV_STOPPING, j->slot, now,
                     "task %d failed (code %d): stopping the other tasks", ev->task, ev->exit_code);
        break;
    case GSD_X_KILLED:
        g->m.kills++;
        gsd_push_rec(g, GSD_EV_KILLED, j->slot, now, "grace period of %llds over: SIGKILL",
                     (long long)(gsd_job_grace(g, x) / GS_SEC));
        break;
    case GSD_X_RUN_DONE: finalize_run(g, j, ev, now); break;
    case GSD_X_NODE:
    case GSD_X_OUTSIDE:
    case GSD_X_ADOPT:
    case GSD_X_GONE: break; /* cluster backends: handled before the job lookup */
    }
}
