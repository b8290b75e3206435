/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * acct.c - accounting on the scheduler thread (issue 16): the GPU time each job holds,
 * retention (serve --retention): finished jobs moved out of the live tables, and forgetting
 * final jobs so that the daemon's memory follows its active jobs.
 *
 * GPU time (jobs.gpu_us) is GPU x us actually held: the sum, over the intervals in which the
 * job's set of GPUs did not change, of the interval's length times its GPUs.  The engine
 * reports every change of a job's GPUs with a record (start, preemption stop, requeue,
 * finish, suspend, resume, migrate, resize, an elastic job's rescale at RESIZING), so the
 * observer closes the open interval at each record whose GPUs differ and opens the next:
 * exact for elastic jobs whose size changes, integer arithmetic only.  A draining job holds
 * its old generation's GPUs until RESIZING (the reserved ones are counted from then on).
 *
 * Retention runs inside a cycle's transaction, at most one batch (GSD_ACCT_BATCH jobs) per
 * cycle, in a cycle with no command to answer, once a minute (a second apart while full batches
 * remain), so it never holds scheduling up for long; only final jobs move (store.c), each
 * into one acct row with what history shows, its events and tasks deleted; event ids are never
 * reused (AUTOINCREMENT).
 *
 * Memory: once a final job's state is released at a publish (snapshot.c), it is queued here
 * and forgotten at the end of a cycle when nothing refers to it any more (row written, out of
 * the time-limit and waiting lists, its run forgotten by the executor in gsd_act): the engine
 * frees it (gs_engine_forget: its id is no longer found; whole blocks of forgotten jobs are
 * freed) and so does the daemon (gsd_jx_forget: a block of per-job state once all of it is
 * forgotten).  Slots are never reused.  Everything about the job is then read from SQLite, as
 * for any final job: GET /v1/jobs/{id}, events, logs, history; a command on it finds no job
 * in the engine and answers from the database (commands.c).
 *
 * Invariants: x->gpu_us is the closed intervals' total and is what the job's row stores (a
 * job holding GPUs adds held_gpus x (now - last_start_us), held_since being the engine's
 * last_start); recovery puts both back from the row and the engine.  Scheduler thread only.
 */
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

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

/* ---- retention ------------------------------------------------------------------------------ */

gs_time gsd_acct_cycle(gsd_sched *g, gs_time now, int busy)
{
    gs_time keep = g->sh.o.retention;
    if (keep <= 0 || g->store_failed) return GS_TIME_MAX;
    if (now < g->acct_next) return g->acct_next;
    /* a cycle with commands waits for an idle one (a full batch comes back in a second) */
    if (busy) return now + GS_SEC;
    size_t moved = 0;
    double t0 = gsd_mono_sec();
    int rc = gsd_store_purge(g->sh.store, now - keep, GSD_ACCT_BATCH, NULL, &moved);
    if (rc) {
        /* SQLite may have rolled the cycle's transaction back: fail the commit (read-only
         * mode, disk.c), as a failed write does */
        g->store_failed = 1;
        gsd_log("retention: cannot move finished jobs to the accounting table: %s",
                gsd_store_errmsg(g->sh.store));
        g->acct_next = now + GSD_ACCT_PERIOD;
        return g->acct_next;
    }
    if (moved)
        gsd_log("retention: moved %zu finished job(s) that ended over %llds ago to the "
                "accounting table (%.1f ms)",
                moved, (long long)(keep / GS_SEC), (gsd_mono_sec() - t0) * 1e3);
    /* a full batch: more may be waiting, take the next one soon (never a long transaction) */
    gs_time period =
        keep / 2 < GSD_ACCT_PERIOD ? keep / 2 : GSD_ACCT_PERIOD; /* short ones: tests */
    if (period < GS_SEC) period = GS_SEC;
    g->acct_next = now + (moved == GSD_ACCT_BATCH ? GS_SEC : period);
    return g->acct_next;
}

/* ---- forgetting final jobs ------------------------------------------------------------------ */

void gsd_acct_forget_later(gsd_sched *g, int32_t slot)
{
    if (g->nfq == g->capfq) {
        g->capfq = g->capfq ? g->capfq * 2 : 256;
        g->fq = gsd_xrealloc(g->fq, g->capfq * sizeof *g->fq);
    }
    g->fq[g->nfq++] = slot;
}

void gsd_acct_forget(gsd_sched *g)
{
    size_t w = 0;
    for (size_t i = 0; i < g->nfq; i++) {
        int32_t s = g->fq[i];
        gsd_jobx *x = gsd_jx(g, s);
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        /* still referred to: its row to write, a list it is in (time limits, waiting, leases),
         * published views not yet rebuilt without it; try again at the next cycle */
        if (x->dirty || x->active || x->inrun || x->inwait || x->rqhold || x->inlease ||
            x->spec_json) {
            g->fq[w++] = s;
            continue;
        }
        int rc = gs_engine_forget(g->e, j);
        if (rc == GS_ENOMEM) {
            g->fq[w++] = s; /* nothing changed: again later */
            continue;
        }
        if (rc) {
            gsd_log("internal error: cannot forget job %lld (slot %d): %s", (long long)j->id, s,
                    gs_strerror(rc));
            continue;
        }
        gsd_jx_forget(g, s);
        g->forgotten++;
    }
    g->nfq = w;
}

void gsd_acct_gone(gsd_sched *g, gsd_cmd *c, const char *pre, const char *post)
{
    char *user = NULL, *state = NULL;
    int rc = gsd_store_job_owner(g->sh.store, c->job_id, &user, &state);
    if (!rc && (c->admin || (user && !strcmp(user, c->user))))
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s%s%s", (long long)c->job_id, pre,
                     state ? state : "final", post);
    else
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
    free(user);
    free(state);
}
