/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.c - what the executor reports (gsd_exec_poll, gsd_exec_launch)
 * turned into daemon records and engine calls: task rows, launch failures,
 * SIGKILLs, and the end of a run (gs_engine_task_exited, gs_engine_cancel,
 * or a requeue when tasks were lost or never started), and the outcome of a
 * checkpoint-based suspend or resume (GSD_X_SUSPENDED: ckpt_done - an event,
 * or its fallback: a failed checkpoint stops the job and requeues it with
 * gs_engine_requeue_suspended once its run is done; a failed restore preempts it).
 *
 * Launch failures (gsd_xev.launch_failed: the executor could not start the
 * command - never the command's own exit code) are bounded: the job's own
 * (workdir, command not executable) requeue it until its
 * gsd_opts.launch_attempts-th launch, which fails it with the reason; the
 * node's (state directory not writable) drain the nodes (drain.c) and
 * requeue the job without counting an attempt - it is not the job's fault.
 *
 * Cluster backends also report what happens outside gsched's runs (no job
 * lookup): a node's state in the manager (NODE: DOWN stops the jobs there,
 * which are requeued once their runs end, and with DRAIN takes the node out
 * of service, composed with the executor's own drain in drain.c; UP returns
 * it when no reason remains), GPUs used by foreign jobs
 * (OUTSIDE: gs_engine_set_outside), a job to adopt (ADOPT: submitted like a
 * client's, with spec.external; bound after the commit, or retired with the
 * reason when refused) and an external job gone (GONE: the job is
 * cancelled).  The manager names machines: a machine in several HiveD
 * chains is one node cell per chain with its name, and NODE applies to every
 * one of them, OUTSIDE is split among them (outside(), in config order).  Calls back into the
 * executor (bind, retire) are queued and made after the commit (gsd_xq_run), never from inside its
 * poll.
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
    if (x->stop == GSD_STOP_GPU_FAULT &&
        (j->state == GS_JOB_SUSPENDED || j->state == GS_JOB_RUNNING)) {
        /* suspended on a GPU that went bad, where it could only resume: stopped (SIGTERM,
         * grace), back to the queue from its own checkpoint */
        x->exit_code = ev->exit_code;
        char why[400];
        snprintf(why, sizeof why, "%s; its suspended job was stopped with SIGTERM%s and requeued",
                 x->ckpt_why ? x->ckpt_why : "a GPU it left is unhealthy",
                 ev->killed ? " (SIGKILL after grace)" : "");
        const char *r = gsd_intern(g, why);
        if (j->state == GS_JOB_SUSPENDED) {
            gs_engine_requeue_suspended(g->e, j, r, now);
        } else {
            gs_engine_preempt(g->e, j, r);
            gs_engine_task_exited(g->e, j, ev->exit_code, r, now);
        }
        return;
    }
    if (x->stop == GSD_STOP_SUSPEND_FAILED &&
        (j->state == GS_JOB_SUSPENDED || j->state == GS_JOB_RUNNING)) {
        /* its checkpoint-based suspend failed and it was stopped (SIGTERM, grace): back to
         * the queue as a preempted job, from its own checkpoint (also when the policy resumed
         * it meanwhile: its stop went on) */
        x->exit_code = ev->exit_code;
        char why[400];
        snprintf(why, sizeof why,
                 "checkpoint-based suspend failed: %s; stopped with SIGTERM%s and requeued",
                 x->ckpt_why ? x->ckpt_why : "?", ev->killed ? " (SIGKILL after grace)" : "");
        const char *r = gsd_intern(g, why);
        if (j->state == GS_JOB_SUSPENDED) {
            gs_engine_requeue_suspended(g->e, j, r, now);
        } else {
            gs_engine_preempt(g->e, j, r);
            gs_engine_task_exited(g->e, j, ev->exit_code, r, now);
        }
        return;
    }
    if (j->state == GS_JOB_SUSPENDED && x->stop == GSD_STOP_NONE && !ev->exit_code && !ev->lost &&
        !ev->killed) {
        /* its tasks finished their work (exit 0) as it was being suspended: a checkpoint-based
         * suspend is carried out after the decision, and the tasks run until it is done */
        x->exit_code = 0;
        gs_engine_task_exited(g->e, j, 0, "all tasks exited with code 0 (as it was suspended)",
                              now);
        return;
    }
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
    if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PREEMPTED && j->state != GS_JOB_DRAINING)
        return;
    x->exit_code = ev->exit_code;
    char why[200];
    if (x->stop == GSD_STOP_CANCEL) {
        snprintf(why, sizeof why, "cancelled by %s", x->cancel_by ? x->cancel_by : "?");
        gs_engine_cancel(g->e, j, gsd_intern(g, why), now);
        return;
    }
    if (j->state == GS_JOB_DRAINING) {
        /* the old generation is gone: 143 or 0 = it checkpointed, else forced (the engine
         * counts the work since its last checkpoint lost); the engine resizes it and starts
         * the next generation (or requeues it) in this cycle */
        gsd_el_hints_drained(g, j, now);
        int saved = ev->exit_code == 143 || ev->exit_code == 0;
        snprintf(why, sizeof why, "generation %u %s (exit code %d%s)", j->generation,
                 saved ? "checkpointed" : "forced: work since its last checkpoint is lost",
                 ev->exit_code, ev->killed ? ", SIGKILL after the drain timeout" : "");
        if (x->el) snprintf(x->el->outcome, sizeof x->el->outcome, "%s", why);
        gs_engine_task_exited(g->e, j, ev->exit_code, gsd_intern(g, why), now);
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

/* A checkpoint-based suspend or resume finished (GSD_X_SUSPENDED): an event saying what it did,
 * or its fallback.  A failed suspend (the processes were rolled back and keep their GPU
 * memory; the executor keeps new tasks off those GPUs meanwhile) stops the job - SIGTERM,
 * grace, SIGKILL, the stop protocol, acted on after the commit (gsd_act) - and requeues it when
 * its run is done (finalize_run); a failed resume preempts it (requeued from its own
 * checkpoint).  Nothing more when the job moved on meanwhile (resumed, stopping, ended). */
static void ckpt_done(gsd_sched *g, const gs_job *j, gsd_jobx *x, const gsd_xev *ev, gs_time now)
{
    double ms = (double)ev->usec / 1000.0;
    const char *msg = ev->msg && *ev->msg ? ev->msg : "unknown error";
    if (!ev->failed) {
        gsd_hist_observe(&g->m.ckpt, (double)ev->usec / 1e6);
        if (ev->stop) {
            g->m.ckpt_suspends++;
            /* resumed or stopped while the checkpoint ran: the executor does not SIGSTOP it, and
             * the restore queued behind the checkpoint brings its processes back */
            int susp = j->state == GS_JOB_SUSPENDED && x->stop == GSD_STOP_NONE;
            const char *then = susp ? ", SIGSTOP"
                               : j->state != GS_JOB_RUNNING || x->stop != GSD_STOP_NONE
                                   ? "; the job is being stopped: no SIGSTOP, its "
                                     "processes are restored so that it can save"
                                   : "; the job was resumed meanwhile: no SIGSTOP, its "
                                     "restore follows";
            if (ev->count)
                gsd_push_rec(g, GSD_EV_CHECKPOINTED, j->slot, now,
                             "checkpointed %d CUDA process(es) in %.0f ms: GPU memory freed%s",
                             ev->count, ms, then);
            else
                gsd_push_rec(g, GSD_EV_CHECKPOINTED, j->slot, now, "no CUDA process%s",
                             susp ? ": SIGSTOP only"
                                  : "; the job was resumed or stopped meanwhile: no SIGSTOP");
        } else {
            g->m.ckpt_resumes++;
            if (ev->count)
                gsd_push_rec(g, GSD_EV_RESTORED, j->slot, now,
                             "restored %d CUDA process(es) in %.0f ms (on GPUs %s)", ev->count, ms,
                             x->alloc ? x->alloc : x->where);
            else
                gsd_push_rec(g, GSD_EV_RESTORED, j->slot, now,
                             "no CUDA process to restore: SIGCONT only");
        }
        return;
    }
    g->m.ckpt_failures++;
    if (ev->stop) {
        if (j->state != GS_JOB_SUSPENDED || x->stop != GSD_STOP_NONE) {
            gsd_push_rec(g, GSD_EV_SUSPEND_FAILED, j->slot, now,
                         "checkpoint-based suspend failed: %s (the job %s meanwhile)", msg,
                         x->stop != GSD_STOP_NONE ? "is being stopped" : "was resumed");
            return;
        }
        x->stop = GSD_STOP_SUSPEND_FAILED;
        x->ckpt_why = gsd_intern(g, msg);
        gsd_mark_dirty(g, j->slot);
        gsd_push_rec(g, GSD_EV_SUSPEND_FAILED, j->slot, now,
                     "checkpoint-based suspend failed: %s; SIGTERM, SIGKILL after %llds, then "
                     "requeued",
                     msg, (long long)(gsd_job_grace(g, x) / GS_SEC));
        return;
    }
    char why[400];
    snprintf(why, sizeof why,
             "checkpoint-based resume failed: %s; stopped with SIGTERM and requeued from its "
             "own checkpoint",
             msg);
    if (j->state != GS_JOB_RUNNING || x->stop != GSD_STOP_NONE) {
        /* suspended again meanwhile: its processes stay checkpointed, and the next resume
         * restores them; being stopped: SIGKILL ends what SIGTERM cannot */
        gsd_push_rec(g, GSD_EV_RESUME_FAILED, j->slot, now,
                     "checkpoint-based resume failed: %s (%s)", msg,
                     x->stop != GSD_STOP_NONE ? "the job is being stopped"
                                              : "the job was suspended again meanwhile");
        return;
    }
    gsd_push_rec(g, GSD_EV_RESUME_FAILED, j->slot, now, "%s", why);
    gs_engine_preempt(g->e, j, gsd_intern(g, why));
}

/* ---- cluster backends: nodes, outside use, adoption, jobs gone ------------------------------ */

void gsd_xq_push(gsd_sched *g, int kind, int64_t job_id, const char *ext, int state,
                 const char *why)
{
    if (!gsd_exec_can(g->x, GSD_XCAP_EXTERNAL)) return;
    if (g->nxq == g->capxq) {
        g->capxq = g->capxq ? g->capxq * 2 : 16;
        g->xq = gsd_xrealloc(g->xq, g->capxq * sizeof *g->xq);
    }
    g->xq[g->nxq++] =
        (gsd_xcall){kind, job_id, gsd_xstrdup(ext), state, gsd_xstrdup(why ? why : "")};
}

void gsd_xq_run(gsd_sched *g)
{
    for (size_t i = 0; i < g->nxq; i++) {
        gsd_xcall *c = &g->xq[i];
        if (c->kind == GSD_XC_BIND) {
            const gs_job *j = gs_engine_find_job(g->e, c->job_id);
            /* ended before its bind (rejected on arrival): its retire follows */
            if (j && !gs_job_state_final(j->state) &&
                gsd_exec_bind(g->x, c->job_id, c->ext) == GS_ENOENT) {
                if (g->ngone == g->capgone) {
                    g->capgone = g->capgone ? g->capgone * 2 : 16;
                    g->gone = gsd_xrealloc(g->gone, g->capgone * sizeof *g->gone);
                }
                g->gone[g->ngone++] = c->job_id;
            }
        } else {
            gsd_exec_retire(g->x, c->job_id, c->ext, c->state, c->why);
        }
        free(c->ext);
        free(c->why);
    }
    g->nxq = 0;
}

int gsd_cancel_outside(gsd_sched *g, const gs_job *head, const char *why, gs_time now)
{
    int stops = 0;
    char byb[300], reason[340];
    snprintf(byb, sizeof byb, "%s (%s)", gsd_exec_backend(g->x)->name, why);
    snprintf(reason, sizeof reason, "cancelled by %s", byb);
    const char *by = gsd_intern(g, byb);
    size_t nj = gs_engine_njobs(g->e);
    for (size_t s = (size_t)head->slot; s < nj; s++) {
        const gs_job *j = gs_engine_job(g->e, s);
        if (s != (size_t)head->slot && j->group != head->id) break; /* the parts follow it */
        if (gs_job_state_final(j->state)) continue;
        gsd_jobx *x = gsd_jx(g, j->slot);
        if (j->state == GS_JOB_PENDING) {
            x->cancel_by = by;
            gs_engine_cancel(g->e, j, gsd_intern(g, reason), now);
            continue;
        }
        /* holding GPUs: stop its tasks; it ends (cancelled) once they are gone */
        if (x->stop == GSD_STOP_CANCEL) continue;
        x->stop = GSD_STOP_CANCEL;
        x->cancel_by = by;
        gsd_mark_dirty(g, j->slot);
        gsd_push_rec(g, GSD_EV_CANCEL_REQ, j->slot, now, "%s: SIGTERM, SIGKILL after %llds", why,
                     (long long)(gsd_job_grace(g, x) / GS_SEC));
        stops = 1;
    }
    g->changed = 1;
    return stops;
}

void gsd_gone_run(gsd_sched *g, gs_time now)
{
    for (size_t i = 0; i < g->ngone; i++) {
        const gs_job *j = gs_engine_find_job(g->e, g->gone[i]);
        if (!j || gs_job_state_final(j->state)) continue;
        gsd_log("job %lld: its external job %s is gone: cancelled", (long long)j->id,
                gsd_jx(g, j->slot)->spec.external ? gsd_jx(g, j->slot)->spec.external : "?");
        gsd_cancel_outside(g, j, "its external job is gone", now);
    }
    g->ngone = 0;
}

/* The first node cell of the machine the executor names (a machine in several HiveD chains is
 * one node cell per chain, all with its name: gs_cluster_find_node_next walks the others), or
 * -1 after a log line. */
static int node_of(gsd_sched *g, const gsd_xev *ev)
{
    int n = ev->node ? gs_cluster_find_node(g->c, ev->node) : -1;
    if (n < 0)
        gsd_log("executor %s reports node '%s', which the cluster does not have: ignored",
                gsd_exec_backend(g->x)->name, ev->node ? ev->node : "(none)");
    return n;
}

/* The cluster manager's node state, for every node cell of the machine: DOWN stops the jobs
 * there (requeued once their tasks are gone) and takes the cells out of service; DRAIN takes
 * them out, their jobs go on; UP returns them when no other reason remains (drain.c). */
static void node_state(gsd_sched *g, const gsd_xev *ev, gs_time now)
{
    int first = node_of(g, ev);
    if (first < 0) return;
    int st = ev->node_state;
    if (st != GSD_XNODE_DOWN && st != GSD_XNODE_DRAIN) st = GSD_XNODE_UP;
    const char *why = ev->msg && *ev->msg ? gsd_intern(g, ev->msg) : NULL;
    int same = 1;
    for (int n = first; n >= 0; n = gs_cluster_find_node_next(g->c, ev->node, n))
        same &= g->nodest[n].mgr == st && g->nodest[n].mgr_why == why;
    if (same) return;
    static const char *const names[] = {"up", "drained", "down"};
    gsd_log("node %s: %s says %s%s%s", ev->node, gsd_exec_backend(g->x)->name, names[st],
            why ? ": " : "", why ? why : "");
    char r[300];
    snprintf(r, sizeof r, "node %s failed (%s%s%s): requeued", ev->node,
             gsd_exec_backend(g->x)->name, why ? ": " : "", why ? why : "down");
    for (int n = first; n >= 0; n = gs_cluster_find_node_next(g->c, ev->node, n)) {
        gsd_nodest *ns = &g->nodest[n];
        ns->mgr = (int8_t)st;
        ns->mgr_why = why;
        if (st == GSD_XNODE_DOWN) {
            /* its work is lost: stop every job holding a GPU there (GPUs stay held until their
             * runs end, so none is given twice); the job is requeued when its run is done */
            const gs_node *nd = gs_cluster_node(g->c, n);
            for (int32_t gi = nd->gpu_lo; gi < nd->gpu_hi; gi++) {
                int32_t owner = gs_cluster_gpu(g->c, gi)->owner;
                if (owner < 0) continue;
                const gs_job *j = gs_engine_job(g->e, (size_t)owner);
                if (j->state == GS_JOB_RUNNING) gs_engine_preempt(g->e, j, gsd_intern(g, r));
            }
        }
        gsd_node_sync(g, n);
    }
    (void)now;
}

/* GPUs of a machine used outside gsched.  The manager counts them per machine, without saying
 * which GPUs; a machine in several chains is several node cells, so the count is split among
 * them in config order: each cell first takes as many as it has GPUs no gsched job holds (a
 * foreign job cannot sit on GPUs gsched's jobs hold), then what is left goes to the cells in the
 * same order up to their size (taken there as their jobs free GPUs); a count above the
 * machine's GPUs counts as all.  Repeating a count gives the same split. */
static void outside(gsd_sched *g, const gsd_xev *ev)
{
    int first = node_of(g, ev);
    if (first < 0) return;
    int count = ev->count < 0 ? 0 : ev->count;
    int ncell = 0;
    for (int n = first; n >= 0; n = gs_cluster_find_node_next(g->c, ev->node, n)) ncell++;
    int stack[8], *share = ncell <= 8 ? stack : calloc((size_t)ncell, sizeof *share);
    if (!share) abort();
    int rem = count, k = 0;
    for (int n = first; n >= 0; n = gs_cluster_find_node_next(g->c, ev->node, n), k++) {
        const gs_node *nd = gs_cluster_node(g->c, n);
        int unheld = 0;
        for (int32_t gi = nd->gpu_lo; gi < nd->gpu_hi; gi++)
            unheld += gs_cluster_gpu(g->c, gi)->owner < 0;
        share[k] = rem < unheld ? rem : unheld;
        rem -= share[k];
    }
    k = 0;
    for (int n = first; n >= 0 && rem > 0; n = gs_cluster_find_node_next(g->c, ev->node, n), k++) {
        const gs_node *nd = gs_cluster_node(g->c, n);
        int room = nd->gpu_hi - nd->gpu_lo - share[k];
        int add = rem < room ? rem : room;
        share[k] += add;
        rem -= add;
    }
    int changed = 0;
    k = 0;
    for (int n = first; n >= 0; n = gs_cluster_find_node_next(g->c, ev->node, n), k++)
        changed |= g->nodest[n].outside != share[k];
    if (changed) {
        gsd_log("node %s: %d GPU(s) used outside gsched%s%s", ev->node, count, ev->msg ? ": " : "",
                ev->msg ? ev->msg : "");
        k = 0;
        for (int n = first; n >= 0; n = gs_cluster_find_node_next(g->c, ev->node, n), k++) {
            if (g->nodest[n].outside == share[k]) continue;
            g->nodest[n].outside = share[k];
            gs_engine_set_outside(g->e, n, share[k], ev->msg);
        }
        g->changed = 1;
    }
    if (share != stack) free(share);
}

static void adopt_refused(gsd_sched *g, const gsd_adopt *a, const char *why)
{
    gsd_log("%s: not adopted: %s", a->ext, why);
    gsd_xq_push(g, GSD_XC_RETIRE, -1, a->ext, GS_JOB_REJECTED, why);
}

/* A job submitted outside gsched: submitted like a client's job (the same validation, VC cap,
 * and arrival rule; per-user rate limits are the HTTP side's and do not apply), bound after
 * the commit; one refused is retired with the reason. */
static void adopt(gsd_sched *g, const gsd_adopt *a, gs_time now)
{
    if (!a || !a->ext || !*a->ext) {
        gsd_log("executor %s reports a job to adopt without a name: ignored",
                gsd_exec_backend(g->x)->name);
        return;
    }
    char why[600];
    if (!a->user || !gsd_user_name_ok(a->user)) {
        snprintf(why, sizeof why, "its owner '%s' is not a gsched user name",
                 a->user ? a->user : "");
        adopt_refused(g, a, why);
        return;
    }
    gsd_cmd *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->kind = GSD_CMD_SUBMIT;
    gsd_spec *sp = &c->spec;
    gsd_spec_init(sp);
    sp->name = gsd_xstrdup(a->name);
    sp->user = gsd_xstrdup(a->user);
    sp->run_as = gsd_xstrdup(a->run_as);
    sp->vc = gsd_xstrdup(a->vc);
    sp->workdir = gsd_xstrdup(a->workdir);
    sp->gpu_type = gsd_xstrdup(a->gpu_type);
    sp->external = gsd_xstrdup(a->ext);
    sp->priority = a->priority;
    sp->ntasks = a->ntasks;
    sp->gpus_per_task = a->gpus_per_task;
    sp->gang = 1; /* one external job: its tasks start together */
    sp->cpus_per_task = a->cpus_per_task;
    sp->mem_mb_per_task = a->mem_mb_per_task;
    sp->time_limit = a->time_limit > 0 ? a->time_limit : 0;
    /* the external job brings its own command (the executor runs it); a spec has one */
    char cmd[300];
    snprintf(cmd, sizeof cmd, ": the batch script of %s", a->ext);
    sp->shell = gsd_xstrdup(cmd);
    snprintf(c->user, sizeof c->user, "%s", a->user);
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *field = "";
    if (gsd_spec_validate(sp, &d, &field)) {
        snprintf(why, sizeof why, "%s", d.msg[0] ? d.msg : "invalid job");
        adopt_refused(g, a, why);
        gsd_cmd_free(c);
        return;
    }
    c->spec_json = gsd_spec_to_json(sp);
    if (!c->spec_json) abort();
    gsd_do_submit(g, c, now);
    const gs_job *j = c->status ? NULL : gs_engine_find_job(g->e, c->job_id);
    if (!j) {
        snprintf(why, sizeof why, "%s", c->detail[0] ? c->detail : "it could not be submitted");
        adopt_refused(g, a, why);
        gsd_cmd_free(c);
        return;
    }
    gsd_push_rec(g, GSD_EV_ADOPTED, j->slot, now, "adopted from %s", a->ext);
    gsd_log("job %lld (%s): adopted from %s", (long long)j->id, a->user, a->ext);
    gsd_xq_push(g, GSD_XC_BIND, j->id, a->ext, 0, NULL);
    gsd_cmd_free(c);
}

/* Events about no run of ours (cluster backends); 1 when handled. */
static int cluster_event(gsd_sched *g, const gsd_xev *ev, gs_time now)
{
    const gs_job *j;
    char why[300];
    switch (ev->kind) {
    case GSD_X_NODE: node_state(g, ev, now); return 1;
    case GSD_X_OUTSIDE: outside(g, ev); return 1;
    case GSD_X_ADOPT: adopt(g, ev->adopt, now); return 1;
    case GSD_X_GONE:
        j = gs_engine_find_job(g->e, ev->job_id);
        if (!j || gs_job_state_final(j->state)) return 1;
        snprintf(why, sizeof why, "%s", ev->msg && *ev->msg ? ev->msg : "its external job is gone");
        gsd_log("job %lld: %s: cancelled", (long long)j->id, why);
        gsd_cancel_outside(g, j, why, now);
        return 1;
    default: return 0;
    }
}

void gsd_on_xev(void *ud, const gsd_xev *ev)
{
    gsd_sched *g = ud;
    if (cluster_event(g, ev, g->last_now)) return;
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
    case GSD_X_SUSPENDED:
        if (ev->run == x->runs) ckpt_done(g, j, x, ev, now);
        break;
    case GSD_X_NODE:
    case GSD_X_OUTSIDE:
    case GSD_X_ADOPT:
    case GSD_X_GONE: break; /* cluster backends: handled before the job lookup (cluster_event) */
    }
}
