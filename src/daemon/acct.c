/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * acct.c - accounting on the scheduler thread (issue 16): the GPU time each job holds.
 *
 * GPU time (jobs.gpu_us) is GPU x us actually held: the sum, over the intervals in which the
 * job's set of GPUs did not change, of the interval's length times its GPUs.  The engine
 * reports every change of a job's GPUs with a record (start, preemption stop, requeue,
 * finish, suspend, resume, migrate, resize, an elastic job's rescale at RESIZING), so the
 * observer closes the open interval at each record whose GPUs differ and opens the next:
 * exact for elastic jobs whose size changes, integer arithmetic only.  A draining job holds
 * its old generation's GPUs until RESIZING (the reserved ones are counted from then on).
 *
 * Invariants: x->gpu_us is the closed intervals' total and is what the job's row stores (a
 * job holding GPUs adds held_gpus x (now - last_start_us), held_since being the engine's
 * last_start); recovery puts both back from the row and the engine.  Scheduler thread only.
 */
#include "gsd_sched.h"

/* GPUs job j occupies now: those of its current run (the ones the cluster lost in a
 * reconfiguration too), 0 when it holds none (pending, suspended, final). */
static int32_t held(const gs_job *j)
{
    int holds =
        j->state == GS_JOB_RUNNING || j->state == GS_JOB_PREEMPTED || j->state == GS_JOB_DRAINING;
    return holds && j->alloc ? j->nalloc + j->vanished : 0;
}

void gsd_acct_observe(gsd_jobx *x, const gs_job *j, gs_time t)
{
    int32_t n = held(j);
    gs_time since = n ? j->last_start : t;
    if (n == x->held_gpus && (!n || since == x->held_since)) return;
    if (x->held_gpus && t > x->held_since) x->gpu_us += (int64_t)x->held_gpus * (t - x->held_since);
    x->held_gpus = n;
    x->held_since = n ? (since < t ? since : t) : t;
}

void gsd_acct_restore(gsd_jobx *x, const gs_job *j, int64_t gpu_us, int64_t executed)
{
    x->gpu_us = gpu_us != GSD_NONE ? gpu_us : executed * (int64_t)j->gpus;
    x->held_gpus = held(j);
    x->held_since = j->last_start;
}

int64_t gsd_acct_gpu_us(const gsd_jobx *x, gs_time now)
{
    return x->gpu_us + (x->held_gpus && now > x->held_since
                            ? (int64_t)x->held_gpus * (now - x->held_since)
                            : 0);
}
