/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cycle.c - one scheduling cycle, all on the scheduler thread:
 *   1. take the queued commands (submit, dry run, cancel, hold, release, requeue, ...) and
 *      apply them to the engine (new rows are INSERTed inside the cycle's transaction);
 *      then the GPU health watch's new verdicts (gpuhealth.c: GPUs marked bad or good,
 *      the jobs on a bad one preempted);
 *   2. poll the executor: task exits, SIGKILLs due after a grace period, (and read the hints
 *      of running elastic jobs, elastic.c),
 *      and a cluster backend's node states, outside use, adoptions, jobs gone;
 *      runs whose tasks are all gone become engine calls
 *      (gs_engine_task_exited, gs_engine_cancel, ...); while the executor
 *      cannot launch, the nodes are drained and re-checked (drain.c);
 *   3. enforce time limits (start the stop protocol);
 *   4. gs_engine_advance(now): timers and one policy pass; then jobs not yet
 *      eligible whose holds and dependencies allow it arrive (wait.c) and a
 *      second pass considers them;
 *   5. write every observer record of 1-4 (events + job rows) and COMMIT -
 *      one transaction per cycle, so concurrent submits share one commit;
 *   6. publish a new snapshot for the HTTP threads;
 *   7. answer the commands (a submit is acknowledged only now, and the next
 *      listing shows it);
 *   8. act: launch started jobs, signal preempted / cancelled ones.
 * Invariant: nothing is acted on (process started or signalled, client
 * answered) before the state change behind it is committed.  If a commit
 * fails the daemon goes read-only (disk.c) rather than act on state that is
 * not durable: the cycle's changes stay pending, its commands wait, and the
 * cycles that follow only answer requests and retry the commit; an engine
 * failure is still fatal (exit 1).  The daemon's clock never goes back (a
 * wall clock that does is held).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd_sched.h"

static gs_time check_time_limits(gsd_sched *g, gs_time now)
{
    gs_time next = GS_TIME_MAX;
    size_t w = 0;
    for (size_t i = 0; i < g->nrun; i++) {
        int32_t s = g->runv[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = gsd_jx(g, s);
        if (x->cat != 2) { /* no longer holds GPUs: drop it from the list */
            x->inrun = 0;
            continue;
        }
        g->runv[w++] = s;
        if (j->state != GS_JOB_RUNNING || !x->spec.time_limit || x->stop != GSD_STOP_NONE) continue;
        gs_time used = gs_job_executed(j, now);
        if (used >= x->spec.time_limit) {
            char lim[32];
            gsd_format_duration(x->spec.time_limit, lim, sizeof lim);
            x->stop = GSD_STOP_TIMEOUT;
            gsd_mark_dirty(g, s);
            gsd_push_rec(g, GSD_EV_TIMEOUT, s, now,
                         "time limit of %s reached: SIGTERM, SIGKILL after %llds", lim,
                         (long long)(gsd_job_grace(g, x) / GS_SEC));
        } else if (now + (x->spec.time_limit - used) < next) {
            next = now + (x->spec.time_limit - used);
        }
    }
    g->nrun = w;
    return next;
}

/* One cycle.  Returns the next instant something is due (GS_TIME_MAX if nothing). */
gs_time gsd_cycle(gsd_sched *g, int heartbeat)
{
    double t0 = gsd_mono_sec();
    gs_time now = gsd_wall_now();
    if (now < g->last_now) now = g->last_now; /* the wall clock went back: hold time */
    g->last_now = now;
    if (g->read_only) return gsd_read_only_cycle(g, now);
    g->nrecs = 0;
    g->changed = 0;
    if (gsd_store_begin(g->sh.store)) {
        char why[256];
        snprintf(why, sizeof why, "cannot begin a transaction: %s", gsd_store_errmsg(g->sh.store));
        gsd_enter_read_only(g, why); /* nothing changed yet: the commands get 503 */
        return gsd_read_only_cycle(g, now);
    }
    gsd_cmd *cmds = gsd_take_commands(g);
    size_t ncmd = 0;
    for (gsd_cmd *c = cmds; c; c = c->next, ncmd++) {
        switch (c->kind) {
        case GSD_CMD_SUBMIT: gsd_do_submit(g, c, now); break;
        case GSD_CMD_DRYRUN: gsd_do_dryrun(g, c); break;
        case GSD_CMD_CANCEL: gsd_do_cancel(g, c, now); break;
        case GSD_CMD_HOLD:
        case GSD_CMD_RELEASE: gsd_do_hold(g, c, now); break;
        case GSD_CMD_RESIZE: gsd_do_resize(g, c, now); break;
        case GSD_CMD_NODE_BAD:
        case GSD_CMD_NODE_GOOD:
            gsd_do_node(g, c, now);
            break;
            /* issue 16 lanes: each adds its cases under its own marker */
            /* node administration */
        case GSD_CMD_NODE_DRAIN:
        case GSD_CMD_NODE_RESUME:
        case GSD_CMD_NODE_DOWN:
            gsd_do_node_admin(g, c, now);
            break;

            /* job control */
        case GSD_CMD_REQUEUE: gsd_do_requeue(g, c, now); break;
        case GSD_CMD_UPDATE: gsd_do_update(g, c, now); break;
        case GSD_CMD_LEASE: gsd_do_lease(g, c, now); break;
        case GSD_CMD_STDIN:
            gsd_do_stdin(g, c, now);
            break;

            /* accounting */

            /* arrays */

        case GSD_CMD_NKINDS: gsd_cmd_fail(c, 500, GS_EINVAL, "no such command"); break;
        }
    }
    gsd_gpuh_cycle(g, now);             /* GPU health verdicts: marks, preemptions (gpuhealth.c) */
    if (g->ngone) gsd_gone_run(g, now); /* adopted jobs whose external job was gone at bind */
    gsd_exec_poll(g->x, now, gsd_on_xev, g);
    /* job control: jobs requeued with a hold whose stop is done are held before the pass */
    if (g->nrqhold) gsd_jobctl_requeued(g, now);
    /* gsched run: interactive jobs whose client's lease ran out are cancelled */
    gs_time next_lease = g->nlease ? gsd_run_leases(g, now) : GS_TIME_MAX;
    /* issue 16 lanes: per-cycle work (sampler, retention) each under its own marker */
    /* dashboard */
    gsd_sample_tick(g, now);
    /* accounting: retention, one batch at most (acct.c) */
    gs_time next_acct = gsd_acct_cycle(g, now, ncmd > 0);

    int elastic_running = 0;
    for (size_t i = 0; i < g->nrun && !elastic_running; i++)
        elastic_running = gsd_jx(g, g->runv[i])->el != NULL && gsd_jx(g, g->runv[i])->cat == 2;
    if (elastic_running) gsd_el_hints(g, now);
    gs_time next_drain = gsd_drain_recheck(g, now);
    gs_time next_limit = check_time_limits(g, now);
    int work = ncmd || g->changed || heartbeat || gs_engine_next_event_time(g->e) <= now;
    if (work) gs_engine_advance(g->e, now);
    /* jobs that became eligible (their dependencies ended in this cycle, a release) arrive
     * now and are considered by a second pass */
    if (g->nwait && gsd_wait_check(g, now)) gs_engine_advance(g->e, now);
    if (gs_engine_error(g->e) && !g->fatal) {
        /* a policy hook or an allocation failed this cycle (submit, cancel, exits, the pass):
         * the engine cannot continue (engine.h, "Errors") */
        gsd_log("FATAL: scheduling engine failed: %s", gs_strerror(gs_engine_error(g->e)));
        g->fatal = 1;
    }
    for (gsd_cmd *c = cmds; c; c = c->next)
        if (c->kind == GSD_CMD_SUBMIT && !c->status) gsd_finish_submit(g, c);
    if (g->fatal) {
        gsd_store_rollback(g->sh.store);
        /* not durable: answer nothing positive, act on nothing */
        for (gsd_cmd *c = cmds; c; c = c->next) {
            if (c->result) json_decref(c->result);
            c->result = NULL;
            gsd_cmd_fail(c, 503, GS_EIO, "the daemon cannot write its database");
        }
        gsd_answer(g, cmds);
        return GS_TIME_MAX;
    }
    if (gsd_commit(g)) {
        /* read-only mode: the cycle's changes stay pending and its commands wait for the retry
         * that commits them (their clients time out meanwhile: "retry with the same
         * Idempotency-Key"); nothing is published or acted on */
        gsd_cmd **tail = &g->held;
        while (*tail) tail = &(*tail)->next;
        *tail = cmds;
        return g->ro_retry_at;
    }
    /* publish before answering, so a client that was told "submitted" or "cancelled" sees
     * that in the next listing (read your writes); then act on what is now durable */
    g->cycle_no++;
    if (g->changed || !g->sh.snap || now - g->last_publish > 5 * GS_SEC) gsd_publish(g, now);
    gsd_answer(g, cmds);
    gsd_act(g, now);
    /* issue 16, accounting: final jobs nothing refers to any more leave memory (acct.c) */
    if (g->nfq) gsd_acct_forget(g);
    if (work) {
        g->m.cycles++;
        double dt = gsd_mono_sec() - t0;
        gsd_hist_observe(&g->m.cycle, dt);
        g->cyc[g->ncyc++ % 1024] = dt;
    }
    gs_time next = gs_engine_next_event_time(g->e);
    gs_time kd = gsd_exec_next_deadline(g->x);
    if (kd < next) next = kd;
    if (next_limit < next) next = next_limit;
    if (next_drain < next) next = next_drain;
    if (next_acct < next) next = next_acct;
    if (next_lease < next) next = next_lease;
    if (g->ngone) next = now; /* a bind found an external job gone: cancel it now */
    if (elastic_running && now + GSD_HINT_POLL < next) next = now + GSD_HINT_POLL; /* hints */
    return next;
}
