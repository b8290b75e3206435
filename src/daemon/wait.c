/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wait.c - the stage before the queue: jobs not yet eligible to run, held
 * by their user (Slurm --hold, JobHeldUser) or waiting on other jobs
 * (--dependency, deps.h).
 *
 * Such a job is in the engine from its submission (it has its id, its row,
 * its listing line, cancel works) but deferred (gs_engine_submit_deferred):
 * PENDING, not arrived, invisible to the policy.  This file decides when it
 * becomes eligible and asks the engine to let it arrive (gs_engine_release);
 * the engine performs the transition, the daemon writes no job field.
 *
 * Durable state: the dependency text is in the stored spec and is
 * evaluated again after a restart (each answer is monotone: a job that
 * ended, or started, stays so); the hold is the spec's "hold" until the
 * job's first 'held' / 'released' event, then the last such event
 * (gsd_store_job_held): every change is an event committed with the cycle.
 *
 * Job arrays with a throttle (spec "array: 0-99%8"): every element is
 * submitted deferred and stays here, reason JobArrayTaskLimit, while N
 * elements of its array are running or starting (released and not final);
 * a free place goes to the next waiting element in index order (g->waitv
 * is in submission order, i.e. index order, also after a restart).
 *
 * Invariants: a slot is in g->waitv at most once (x->inwait); a job leaves
 * the stage only by gs_engine_release (not held, dependencies satisfied) or
 * by ending (cancel); a dependency that can never be satisfied leaves it
 * pending with reason DependencyNeverSatisfied (Slurm's default) until it
 * is cancelled, or, with the spec's kill_on_invalid_dep (Slurm's
 * --kill-on-invalid-dep=yes), is cancelled by the engine at once with that
 * reason.  Scheduler thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "gsd_sched.h"

struct gsd_wait {
    gsd_deps p;
    int st[GSD_DEPS_MAX]; /* each term's answer; MET and NEVER are final */
};

void gsd_wait_free(gsd_jobx *x)
{
    free(x->w);
    x->w = NULL;
}

const char *gsd_wait_reason(const gsd_jobx *x)
{
    if (x->held) return "JobHeldUser";
    if (x->depst == GSD_DEP_NEVER) return "DependencyNeverSatisfied";
    if (x->depst == GSD_DEP_MET && x->throttled) return "JobArrayTaskLimit";
    return "Dependency";
}

void gsd_wait_add(gsd_sched *g, int32_t slot, int held)
{
    gsd_jobx *x = gsd_jx(g, slot);
    x->held = (int8_t)(held != 0);
    x->depst = GSD_DEP_MET;
    gsd_wait_free(x);
    if (x->spec.dependency) {
        x->w = calloc(1, sizeof *x->w);
        if (!x->w) abort();
        if (gsd_deps_parse(x->spec.dependency, &x->w->p, NULL))
            x->w->p.n = 0; /* a stored spec parsed, so its dependency did: cannot happen */
        x->depst = GSD_DEP_WAIT;
    }
    if (!x->inwait) {
        if (g->nwait == g->capwait) {
            g->capwait = g->capwait ? g->capwait * 2 : 64;
            g->waitv = gsd_xrealloc(g->waitv, g->capwait * sizeof *g->waitv);
        }
        g->waitv[g->nwait++] = slot;
        x->inwait = 1;
    }
}

/* One term: the job it names, in the engine (this daemon's life) or, finished before the
 * last restart, in the database. */
static int term(gsd_sched *g, const gsd_dep *d)
{
    const gs_job *r = gs_engine_find_job(g->e, d->id);
    if (r) return gsd_dep_eval(d->type, r->state, r->first_start != GS_TIME_NONE);
    char *state = NULL;
    int rc = gsd_store_job_state(g->sh.store, d->id, &state, NULL);
    int st = rc == 0 && state ? gs_job_state_parse(state) : -1;
    free(state);
    if (rc == GS_EIO) return GSD_DEP_WAIT; /* ask again at the next cycle */
    /* not in the engine: it ended before the restart (or never existed: checked at submit) */
    if (st < 0 || !gs_job_state_final((gs_job_state)st)) return GSD_DEP_NEVER;
    return gsd_dep_eval(d->type, st, 0);
}

static int evaluate(gsd_sched *g, gsd_jobx *x)
{
    if (!x->w) return GSD_DEP_MET;
    for (int i = 0; i < x->w->p.n; i++)
        if (x->w->st[i] == GSD_DEP_WAIT) x->w->st[i] = term(g, &x->w->p.v[i]);
    return gsd_deps_combine(&x->w->p, x->w->st);
}

/* Elements of the array of slot s (its id array_id) running or starting: released (not
 * deferred) and not final, counted once per element (its first part).  An array's jobs are
 * consecutive slots (one submission; a restart re-adds them in id order). */
static int array_active(gsd_sched *g, int32_t s, int64_t array_id)
{
    int n = 0;
    size_t nj = gs_engine_njobs(g->e);
    int32_t lo = s;
    while (lo > 0 && gsd_jx(g, lo - 1)->array_id == array_id) lo--;
    for (size_t i = (size_t)lo; i < nj && gsd_jx(g, (int32_t)i)->array_id == array_id; i++) {
        const gs_job *j = gs_engine_job(g->e, i);
        n += j->task_index == 0 && !j->deferred && !gs_job_state_final(j->state);
    }
    return n;
}

size_t gsd_wait_check(gsd_sched *g, gs_time now)
{
    size_t w = 0, released = 0;
    int64_t memo_array = 0; /* the array whose running elements memo_active counts */
    int memo_active = 0;
    for (size_t i = 0; i < g->nwait; i++) {
        int32_t s = g->waitv[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = gsd_jx(g, s);
        if (j->state != GS_JOB_PENDING || !j->deferred) { /* cancelled */
            x->inwait = 0;
            gsd_wait_free(x);
            continue;
        }
        if (x->depst != GSD_DEP_MET) {
            int was = x->depst;
            x->depst = (int8_t)evaluate(g, x);
            if (x->depst != was) {
                char dep[256];
                if (x->w) gsd_deps_format(&x->w->p, dep, sizeof dep);
                if (x->depst == GSD_DEP_NEVER)
                    gsd_push_rec(g, GSD_EV_DEP_NEVER, s, now,
                                 "dependency %s can never be satisfied: %s", x->w ? dep : "",
                                 x->spec.kill_invalid_dep
                                     ? "the job is cancelled (kill_on_invalid_dep)"
                                     : "the job stays pending until cancelled");
                else if (x->depst == GSD_DEP_MET)
                    gsd_push_rec(g, GSD_EV_ELIGIBLE, s, now, "dependency %s satisfied",
                                 x->w ? dep : "");
                gsd_mark_dirty(g, s);
            }
        }
        if (x->depst == GSD_DEP_NEVER && x->spec.kill_invalid_dep) {
            /* Slurm's --kill-on-invalid-dep=yes: the engine ends it (CANCELLED), held or not */
            x->inwait = 0;
            gsd_wait_free(x);
            gs_engine_cancel(g->e, j, "DependencyNeverSatisfied", now);
            continue;
        }
        if (x->held || x->depst != GSD_DEP_MET) {
            g->waitv[w++] = s;
            continue;
        }
        if (x->array_throttle > 0 && j->task_index == 0) {
            if (memo_array != x->array_id) {
                memo_array = x->array_id;
                memo_active = array_active(g, s, x->array_id);
            }
            if (memo_active >= x->array_throttle) {
                if (!x->throttled) gsd_mark_dirty(g, s); /* its reason changes */
                x->throttled = 1;
                g->waitv[w++] = s;
                continue;
            }
            memo_active++;
        } else if (x->array_throttle > 0) {
            /* a part of a non-gang element (its slots follow its first part's): with it */
            const gs_job *h = gs_engine_job(g->e, (size_t)(s - j->task_index));
            if (h->deferred && h->state == GS_JOB_PENDING) {
                if (!x->throttled) gsd_mark_dirty(g, s);
                x->throttled = 1;
                g->waitv[w++] = s;
                continue;
            }
        }
        x->throttled = 0;
        if (gs_engine_release(g->e, j, now)) { /* out of memory: the engine latched it */
            g->waitv[w++] = s;
            continue;
        }
        x->inwait = 0;
        gsd_wait_free(x);
        gsd_mark_dirty(g, s);
        released++;
    }
    g->nwait = w;
    return released;
}
