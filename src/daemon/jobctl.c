/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobctl.c - job control on the scheduler thread (issue 16): a queued job taken
 * back out of its policy's queue (the hold of an eligible job), and the requeue of a
 * running job by hand.
 *
 * A hold of a job already in its policy's queue asks the engine to withdraw it
 * (gs_engine_withdraw: the policy forgets it, the job is deferred again, as if
 * submitted held) and puts it in wait.c's stage, held, with its dependencies
 * satisfied (it had arrived, so they were).  wait.c then releases it like any
 * held job (gs_engine_release: it arrives anew, behind the jobs already queued
 * in arrival-ordered policies).  A policy without the on_withdraw op keeps its
 * jobs: the command fails with 409 and nothing changes.
 *
 * Requeue (like scontrol requeue / requeuehold): a RUNNING job is stopped through the
 * stop protocol of a preemption (gs_engine_preempt: SIGTERM, the grace period, SIGKILL;
 * the job checkpoints on SIGTERM), and once its tasks are gone the engine requeues it
 * (event 'requeued').  With a hold, the job is in g->rqholdv (x->rqhold) until then;
 * gsd_jobctl_requeued, run right after the executor's poll and before the policy's pass,
 * withdraws and holds it at the cycle its stop is done, so it never starts again first.
 * That pending hold lives in memory only: a daemon restart during the stop requeues the
 * job without the hold.
 *
 * Invariants: the engine performs every transition; the daemon writes no job
 * field; the durable record of a hold is its 'held' event (gsd_store_job_held),
 * committed with the cycle, so a restart brings the job back held.  Scheduler
 * thread only.
 */
#include <stdio.h>
#include <string.h>

#include "gsched/jobdeps.h"
#include "gsd_sched.h"

/* The 409 of a policy without on_withdraw. */
static void fail_unsupported(gsd_sched *g, gsd_cmd *c, const gs_job *j, const char *what)
{
    gsd_cmd_fail(c, 409, GS_EUNSUPPORTED,
                 "policy '%s' cannot take a queued job back out (it has no on_withdraw op): "
                 "job %lld cannot be %s",
                 gs_engine_policy_name(g->e), (long long)j->id, what);
}

int gsd_jobctl_withdraw(gsd_sched *g, gsd_cmd *c, const gs_job *j, gs_time now)
{
    int rc = gs_engine_withdraw(g->e, j, now);
    if (rc && !c) {
        gsd_log("job %lld: cannot hold it: %s", (long long)j->id, gs_strerror(rc));
        return rc;
    }
    if (rc == GS_EUNSUPPORTED) {
        gsd_cmd_fail(c, 409, rc,
                     "job %lld is already in the queue of policy '%s', which cannot take a "
                     "queued job back out (it has no on_withdraw op): only jobs not yet "
                     "eligible (submitted with --hold, or waiting on dependencies) can be "
                     "held or updated under it",
                     (long long)j->id, gs_engine_policy_name(g->e));
        return rc;
    }
    if (rc) {
        gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 409, rc, "job %lld: %s", (long long)j->id,
                     gs_strerror(rc));
        return rc;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    gsd_wait_add(g, j->slot, 1);
    /* it had arrived: its dependencies were satisfied, and such answers are final */
    gsd_wait_free(x);
    x->depst = GS_DEP_MET;
    gsd_mark_dirty(g, j->slot);
    return 0;
}

void gsd_do_requeue(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    int hold = c->args && json_is_true(json_object_get(c->args, "hold"));
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    if (j->state != GS_JOB_RUNNING) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s: only running jobs can be requeued%s",
                     (long long)j->id, gs_job_state_name(j->state),
                     j->state == GS_JOB_PENDING ? " (a pending job is in its queue already)" : "");
        return;
    }
    if (x->stop != GSD_STOP_NONE) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is being stopped already (%s)", (long long)j->id,
                     gsd_stop_name(x->stop));
        return;
    }
    if (hold && !gs_engine_can_withdraw(g->e)) {
        fail_unsupported(g, c, j, "requeued held (requeue it without a hold)");
        return;
    }
    char why[160];
    snprintf(why, sizeof why, "requeued by %s%s", c->user, hold ? " (held)" : "");
    int rc = gs_engine_preempt(g->e, j, gsd_intern(g, why));
    if (rc) {
        gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 409, rc, "job %lld: %s", (long long)j->id,
                     gs_strerror(rc));
        return;
    }
    gsd_mark_dirty(g, j->slot);
    if (hold && !x->rqhold) {
        if (g->nrqhold == g->caprqhold) {
            g->caprqhold = g->caprqhold ? 2 * g->caprqhold : 16;
            g->rqholdv = gsd_xrealloc(g->rqholdv, g->caprqhold * sizeof *g->rqholdv);
        }
        g->rqholdv[g->nrqhold++] = j->slot;
        x->rqhold = 1;
    }
    c->status = 202;
    c->result = json_pack("{s:I,s:b,s:b,s:I}", "id", (json_int_t)j->id, "requeued", 1, "held", hold,
                          "grace_seconds", (json_int_t)(gsd_job_grace(g, x) / GS_SEC));
}

void gsd_jobctl_requeued(gsd_sched *g, gs_time now)
{
    size_t w = 0;
    for (size_t i = 0; i < g->nrqhold; i++) {
        int32_t s = g->rqholdv[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = gsd_jx(g, s);
        if (j->state == GS_JOB_PREEMPTED) { /* still stopping */
            g->rqholdv[w++] = s;
            continue;
        }
        x->rqhold = 0;
        if (j->state != GS_JOB_PENDING || !j->arrived) continue; /* it ended meanwhile */
        if (gsd_jobctl_withdraw(g, NULL, j, now)) continue;      /* logged */
        gsd_push_rec(g, GSD_EV_HELD, s, now, "requeued held");
    }
    g->nrqhold = w;
}
