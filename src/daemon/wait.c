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
 * evaluated again after a restart (each answer but singleton's is monotone: a
 * job that ended, or started, stays so); the hold is the spec's "hold" until the
 * job's first 'held' / 'released' event, then the last such event
 * (gsd_store_job_held): every change is an event committed with the cycle.
 *
 * A singleton dependency (Slurm's) is evaluated again at every check: it is
 * satisfied while no other job of the same user and name is running or in a
 * policy's queue (not final, not deferred); of several waiting, the first in
 * submission order is released and the others see it.
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

#include "gsched/jobdeps.h"
#include "gsd_sched.h"

struct gsd_wait {
    gs_deps p;
    int st[GS_DEPS_MAX]; /* each term's answer; MET and NEVER are final (not a singleton's) */
    int singleton;       /* p has a singleton term: evaluated again at every check */
};

/* Slurm's singleton: the (user, name) pairs of the jobs that block a singleton job of the same
 * pair: not final and not deferred (running, or in a policy's queue).  Built once per check,
 * when a singleton job is first evaluated; a job released by the check is added. */
typedef struct busy_pair {
    const char *user, *name;
} busy_pair;
typedef struct busy_set {
    int built;
    busy_pair *v; /* sorted (user, name) */
    size_t n;
    busy_pair *extra; /* released during this check: unsorted */
    size_t nextra, capextra;
} busy_set;

static int pair_cmp(const void *a, const void *b)
{
    const busy_pair *x = a, *y = b;
    int c = strcmp(x->user, y->user);
    return c ? c : strcmp(x->name, y->name);
}

static busy_pair pair_of(const gs_job *j)
{
    return (busy_pair){j->user ? j->user : "", j->name ? j->name : ""};
}

static void busy_build(gsd_sched *g, busy_set *b)
{
    size_t nj = gs_engine_njobs(g->e), cap = 0;
    b->built = 1;
    for (size_t i = 0; i < nj; i++) {
        const gs_job *j = gs_engine_job(g->e, i);
        if (gs_job_state_final(j->state) || j->deferred) continue;
        if (b->n == cap) {
            cap = cap ? cap * 2 : 64;
            b->v = gsd_xrealloc(b->v, cap * sizeof *b->v);
        }
        b->v[b->n++] = pair_of(j);
    }
    if (b->n) qsort(b->v, b->n, sizeof *b->v, pair_cmp);
}

static int busy_has(gsd_sched *g, busy_set *b, const gs_job *j)
{
    if (!b->built) busy_build(g, b);
    busy_pair k = pair_of(j);
    if (b->n && bsearch(&k, b->v, b->n, sizeof *b->v, pair_cmp)) return 1;
    for (size_t i = 0; i < b->nextra; i++)
        if (!pair_cmp(&k, &b->extra[i])) return 1;
    return 0;
}

static void busy_add(busy_set *b, const gs_job *j)
{
    if (!b->built) return; /* built later, from the engine, which then has it */
    if (b->nextra == b->capextra) {
        b->capextra = b->capextra ? b->capextra * 2 : 16;
        b->extra = gsd_xrealloc(b->extra, b->capextra * sizeof *b->extra);
    }
    b->extra[b->nextra++] = pair_of(j);
}

void gsd_wait_free(gsd_jobx *x)
{
    free(x->w);
    x->w = NULL;
}

const char *gsd_wait_reason(const gsd_jobx *x)
{
    if (x->held) return "JobHeldUser";
    if (x->depst == GS_DEP_NEVER) return "DependencyNeverSatisfied";
    if (x->depst == GS_DEP_MET && x->throttled) return "JobArrayTaskLimit";
    return "Dependency";
}

void gsd_wait_add(gsd_sched *g, int32_t slot, int held)
{
    gsd_jobx *x = gsd_jx(g, slot);
    x->held = (int8_t)(held != 0);
    x->depst = GS_DEP_MET;
    gsd_wait_free(x);
    if (x->spec.dependency) {
        x->w = calloc(1, sizeof *x->w);
        if (!x->w) abort();
        if (gs_deps_parse(x->spec.dependency, &x->w->p, NULL))
            x->w->p.n = 0; /* a stored spec parsed, so its dependency did: cannot happen */
        x->w->singleton = gs_deps_singleton(&x->w->p);
        x->depst = GS_DEP_WAIT;
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
static int term(gsd_sched *g, const gs_dep *d)
{
    const gs_job *r = gs_engine_find_job(g->e, d->id);
    if (r) return gs_dep_eval(d->type, r->state, r->first_start != GS_TIME_NONE);
    char *state = NULL;
    int rc = gsd_store_job_state(g->sh.store, d->id, &state, NULL);
    int st = rc == 0 && state ? gs_job_state_parse(state) : -1;
    free(state);
    if (rc == GS_EIO) return GS_DEP_WAIT; /* ask again at the next cycle */
    /* not in the engine: it ended before the restart (or never existed: checked at submit) */
    if (st < 0 || !gs_job_state_final((gs_job_state)st)) return GS_DEP_NEVER;
    return gs_dep_eval(d->type, st, 0);
}

static int evaluate(gsd_sched *g, gsd_jobx *x, const gs_job *j, busy_set *b)
{
    if (!x->w) return GS_DEP_MET;
    for (int i = 0; i < x->w->p.n; i++)
        if (x->w->p.v[i].type == GS_DEP_SINGLETON)
            x->w->st[i] = busy_has(g, b, j) ? GS_DEP_WAIT : GS_DEP_MET;
        else if (x->w->st[i] == GS_DEP_WAIT)
            x->w->st[i] = term(g, &x->w->p.v[i]);
    return gs_deps_combine(&x->w->p, x->w->st);
}

/* Elements of the array of slot s (its id array_id) running or starting: released (not
 * deferred) and not final, counted once per element (its first part).  An array's jobs are
 * consecutive slots (one submission; a restart re-adds them in id order). */
static int array_active(gsd_sched *g, int32_t s, int64_t array_id)
{
    int n = 0;
    size_t nj = gs_engine_njobs(g->e);
    /* (a forgotten element keeps its array_id; a block of forgotten jobs is gone: acct.c) */
    int32_t lo = s;
    while (lo > 0) {
        const gsd_jobx *x = gsd_jx_peek(g, lo - 1);
        if (x && x->array_id != array_id) break;
        lo = x ? lo - 1 : (int32_t)((size_t)(lo - 1) & ~(GSD_JX_BLOCK - 1)); /* a whole block */
    }
    for (size_t i = (size_t)lo; i < nj; i++) {
        const gsd_jobx *x = gsd_jx_peek(g, (int32_t)i);
        if (x && x->array_id != array_id) break;
        if (!x || x->gone) continue;
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
    busy_set busy;
    memset(&busy, 0, sizeof busy);
    for (size_t i = 0; i < g->nwait; i++) {
        int32_t s = g->waitv[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = gsd_jx(g, s);
        if (j->state != GS_JOB_PENDING || !j->deferred) { /* cancelled */
            x->inwait = 0;
            gsd_wait_free(x);
            continue;
        }
        if (x->depst != GS_DEP_MET || (x->w && x->w->singleton)) {
            int was = x->depst;
            x->depst = (int8_t)evaluate(g, x, j, &busy);
            if (x->depst != was) {
                char dep[256];
                if (x->w) gs_deps_format(&x->w->p, dep, sizeof dep);
                if (x->depst == GS_DEP_NEVER)
                    gsd_push_rec(g, GSD_EV_DEP_NEVER, s, now,
                                 "dependency %s can never be satisfied: %s", x->w ? dep : "",
                                 x->spec.kill_invalid_dep
                                     ? "the job is cancelled (kill_on_invalid_dep)"
                                     : "the job stays pending until cancelled");
                else if (x->depst == GS_DEP_MET)
                    gsd_push_rec(g, GSD_EV_ELIGIBLE, s, now, "dependency %s satisfied",
                                 x->w ? dep : "");
                gsd_mark_dirty(g, s);
            }
        }
        if (x->depst == GS_DEP_NEVER && x->spec.kill_invalid_dep) {
            /* Slurm's --kill-on-invalid-dep=yes: the engine ends it (CANCELLED), held or not */
            x->inwait = 0;
            gsd_wait_free(x);
            gs_engine_cancel(g->e, j, "DependencyNeverSatisfied", now);
            continue;
        }
        if (x->held || x->depst != GS_DEP_MET) {
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
        busy_add(&busy, j);
        released++;
    }
    g->nwait = w;
    free(busy.v);
    free(busy.extra);
    return released;
}
