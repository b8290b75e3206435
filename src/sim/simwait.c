/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * simwait.c - holds, dependencies and job array throttles in simulations (simwait.h).
 *
 * Jobs in the stage are added deferred (gs_engine_add_job_deferred) and arrive only when
 * gs_simwait_check releases them (gs_engine_release_at): not held (or the hold's time has
 * come), every dependency satisfied (gs_dep_eval against the engine's jobs; singleton: no
 * other job of the same user and name running or queued), and a place under the array's
 * throttle.  A job releases at max(its submit time, its hold's end, now), so a trace whose
 * jobs have none of these runs exactly as before (nothing is deferred).
 *
 * Invariants: checks run between engine steps only, visit the jobs in id order and ask the
 * engine nothing but its state, so a run stays deterministic; a job leaves the stage once
 * (released or cancelled); every job of a non-gang submission (consecutive slots of its
 * group) is released with its first part.  No I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "simwait.h"

typedef struct wjob {
    int64_t id;
    gs_deps deps;  /* n = 0: none */
    gs_time hold0; /* as given: GS_SIMWAIT_NOHOLD, GS_SIMWAIT_HELD, or the release time */
    gs_time hold;  /* in this run (a release event may end it earlier) */
    int64_t array_id;
    int32_t throttle;
    int done; /* released or cancelled */
    const gs_job *j;
} wjob;

struct gs_simwait {
    wjob *v; /* ascending id once bound */
    size_t n, cap;
    int bound;
};

static int cmp_id(const void *a, const void *b)
{
    int64_t x = ((const wjob *)a)->id, y = ((const wjob *)b)->id;
    return (x > y) - (x < y);
}

static wjob *find(const gs_simwait *w, int64_t id)
{
    if (!w) return NULL;
    if (w->bound) {
        wjob k = {.id = id};
        return bsearch(&k, w->v, w->n, sizeof *w->v, cmp_id);
    }
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].id == id) return &w->v[i];
    return NULL;
}

int gs_simwait_add(gs_simwait **wp, int64_t id, const char *dep, gs_time hold, int64_t array_id,
                   int32_t throttle, gs_diag *d)
{
    gs_deps p;
    memset(&p, 0, sizeof p);
    if (dep && *dep) {
        int rc = gs_deps_parse(dep, &p, d);
        if (rc) return rc;
    }
    if (!p.n && hold == GS_SIMWAIT_NOHOLD && !throttle) return 0; /* nothing to wait for */
    if (!*wp && !(*wp = calloc(1, sizeof **wp)))
        return gs_diag_set(d, GS_ENOMEM, 0, 0, "out of memory");
    gs_simwait *w = *wp;
    if (find(w, id))
        return gs_diag_set(d, GS_EEXIST, 0, 0, "job %lld is held or waits twice", (long long)id);
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 16;
        wjob *nv = realloc(w->v, nc * sizeof *nv);
        if (!nv) return gs_diag_set(d, GS_ENOMEM, 0, 0, "out of memory");
        w->v = nv;
        w->cap = nc;
    }
    w->v[w->n++] = (wjob){id, p, hold, hold, array_id, throttle, 0, NULL};
    w->bound = 0;
    return 0;
}

int gs_simwait_has(const gs_simwait *w, int64_t id)
{
    return find(w, id) != NULL;
}

int gs_simwait_release(gs_simwait *w, int64_t id, gs_time t)
{
    wjob *x = find(w, id);
    if (!x) return GS_ENOENT;
    if (x->hold == GS_SIMWAIT_HELD || x->hold == GS_SIMWAIT_NOHOLD || t < x->hold) x->hold = t;
    return 0;
}

int gs_simwait_bind(gs_simwait *w, gs_engine *e, gs_diag *d)
{
    if (!w) return 0;
    qsort(w->v, w->n, sizeof *w->v, cmp_id);
    w->bound = 1;
    for (size_t i = 0; i < w->n; i++) {
        wjob *x = &w->v[i];
        x->done = 0; /* a new run (the policies of one trace run one after the other) */
        x->hold = x->hold0;
        x->j = gs_engine_find_job(e, x->id);
        if (!x->j || !x->j->deferred)
            return gs_diag_set(d, GS_EINVAL, 0, 0, "job %lld: not added deferred",
                               (long long)x->id);
        for (int k = 0; k < x->deps.n; k++)
            if (x->deps.v[k].type != GS_DEP_SINGLETON && !gs_engine_find_job(e, x->deps.v[k].id))
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "job %lld: dependency: no job %lld in this workload",
                                   (long long)x->id, (long long)x->deps.v[k].id);
    }
    return 0;
}

/* Release j and the other parts of its non-gang submission (the slots after it). */
static int release(gs_engine *e, const gs_job *j, gs_time t)
{
    int rc = gs_engine_release_at(e, j, t);
    size_t nj = gs_engine_njobs(e);
    for (size_t s = (size_t)j->slot + 1; !rc && s < nj; s++) {
        const gs_job *p = gs_engine_job(e, s);
        if (p->group != j->id || p->id == p->group) break;
        if (p->deferred) rc = gs_engine_release_at(e, p, t);
    }
    return rc;
}

/* Another job of j's user and name running or in a queue (Slurm's singleton). */
static int singleton_busy(gs_engine *e, const gs_job *j)
{
    const char *u = j->user ? j->user : "", *nm = j->name ? j->name : "";
    size_t nj = gs_engine_njobs(e);
    for (size_t s = 0; s < nj; s++) {
        const gs_job *o = gs_engine_job(e, s);
        if (o == j || o->deferred || gs_job_state_final(o->state)) continue;
        if (!strcmp(o->user ? o->user : "", u) && !strcmp(o->name ? o->name : "", nm)) return 1;
    }
    return 0;
}

/* Elements of array a running or starting: released and not final. */
static int array_active(const gs_simwait *w, int64_t a)
{
    int n = 0;
    for (size_t i = 0; i < w->n; i++)
        n += w->v[i].array_id == a && w->v[i].done && !gs_job_state_final(w->v[i].j->state) &&
             !w->v[i].j->deferred;
    return n;
}

int gs_simwait_check(gs_simwait *w, gs_engine *e)
{
    if (!w) return 0;
    gs_time now = gs_engine_now(e);
    for (size_t i = 0; i < w->n; i++) {
        wjob *x = &w->v[i];
        if (x->done) continue;
        const gs_job *j = x->j;
        if (j->state != GS_JOB_PENDING || !j->deferred) { /* cancelled by a scenario */
            x->done = 1;
            continue;
        }
        if (x->hold == GS_SIMWAIT_HELD) continue;
        int st[GS_DEPS_MAX];
        for (int k = 0; k < x->deps.n; k++) {
            const gs_dep *dp = &x->deps.v[k];
            if (dp->type == GS_DEP_SINGLETON) {
                st[k] = singleton_busy(e, j) ? GS_DEP_WAIT : GS_DEP_MET;
                continue;
            }
            const gs_job *o = gs_engine_find_job(e, dp->id);
            st[k] =
                o ? gs_dep_eval(dp->type, o->state, o->first_start != GS_TIME_NONE) : GS_DEP_NEVER;
        }
        int v = x->deps.n ? gs_deps_combine(&x->deps, st) : GS_DEP_MET;
        if (v == GS_DEP_NEVER) {
            x->done = 1;
            int rc = gs_engine_cancel(e, j, "DependencyNeverSatisfied", now);
            if (rc) return rc;
            continue;
        }
        if (v != GS_DEP_MET) continue;
        if (x->throttle > 0 && array_active(w, x->array_id) >= x->throttle) continue;
        gs_time t = j->submit;
        if (x->hold != GS_SIMWAIT_NOHOLD && x->hold > t) t = x->hold;
        x->done = 1;
        int rc = release(e, j, t);
        if (rc) return rc;
    }
    return 0;
}

int gs_simwait_finish(gs_simwait *w, gs_engine *e)
{
    if (!w) return 0;
    for (size_t i = 0; i < w->n; i++) {
        wjob *x = &w->v[i];
        if (x->done || x->j->state != GS_JOB_PENDING || !x->j->deferred) continue;
        x->done = 1;
        int rc = gs_engine_cancel(e, x->j, "never released", gs_engine_now(e));
        if (rc) return rc;
    }
    return 0;
}

void gs_simwait_destroy(gs_simwait *w)
{
    if (!w) return;
    free(w->v);
    free(w);
}
