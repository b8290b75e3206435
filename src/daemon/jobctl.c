/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobctl.c - job control on the scheduler thread (issue 16): a queued job taken
 * back out of its policy's queue (the hold of an eligible job).
 *
 * A hold of a job already in its policy's queue asks the engine to withdraw it
 * (gs_engine_withdraw: the policy forgets it, the job is deferred again, as if
 * submitted held) and puts it in wait.c's stage, held, with its dependencies
 * satisfied (it had arrived, so they were).  wait.c then releases it like any
 * held job (gs_engine_release: it arrives anew, behind the jobs already queued
 * in arrival-ordered policies).  A policy without the on_withdraw op keeps its
 * jobs: the command fails with 409 and nothing changes.
 *
 * Invariants: the engine performs every transition; the daemon writes no job
 * field; the durable record of a hold is its 'held' event (gsd_store_job_held),
 * committed with the cycle, so a restart brings the job back held.  Scheduler
 * thread only.
 */
#include <string.h>

#include "deps.h"
#include "gsd_sched.h"

int gsd_jobctl_withdraw(gsd_sched *g, gsd_cmd *c, const gs_job *j, gs_time now)
{
    int rc = gs_engine_withdraw(g->e, j, now);
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
    x->depst = GSD_DEP_MET;
    gsd_mark_dirty(g, j->slot);
    return 0;
}
