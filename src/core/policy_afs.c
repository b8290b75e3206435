/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_afs.c - AFS, Apathetic Future Share (Hwang et al., NSDI'21), as
 * algorithms.md section 7.1 states the rule.  On every arrival and
 * completion the shares are recomputed from scratch: every job starts at 0
 * GPUs and the healthy GPUs are handed out one step at a time (one more
 * gpus_per_task for an elastic job, its whole request for a rigid one); for
 * each step a pairwise tournament over the jobs that can still grow picks the
 * winner: of two jobs, the shorter one (less remaining time at its current
 * share) wins if it holds nothing and gains more speed than the other, or if
 * its relative speed-up (s(n+1) - s(n)) / s(n) beats the longer one's gain
 * normalised by the longer one's new speed (s(n+1) - s(n)) / s(n+1).  Speeds
 * are the job's rate at n GPUs (gs_engine_job_rate on its GPU type: the
 * progress model or the scaling curve, times the type rate) over its
 * remaining length:
 *   afs_mode=p  AFS-P: the remaining work, as the simulator knows it;
 *   afs_mode=l  AFS-L (default): length-agnostic, the work done so far (at
 *               least one minute's) stands for the work left, as LAS does.
 * Sizes then change through gs_engine_rescale (POLICY; its rescale_gap and
 * max_rescales apply: a blocked change is retried when allowed) with a reason
 * naming the arrival or completion that caused it; shrinks go first.
 *
 * The same answers, computed in less than O(jobs x steps) per event:
 *  - a job's first size (its request when rigid) is fixed, so the sums of the
 *    first sizes (in all and per GPU type) are kept; when no job can grow past
 *    its first size (no elastic job: every job takes at most one step) and
 *    the sums fit the healthy GPUs, every job fits at every step whatever the
 *    order, so every share is the first size: O(1) plus the new arrivals;
 *  - with no elastic job but not everything fitting, every step compares only
 *    jobs holding nothing, where the tournament keeps the larger speed at the
 *    first size (the later job on a tie): one sort of the jobs by that speed
 *    (ties: later first) and one walk handing out what fits give the same
 *    shares, O(jobs log jobs);
 *  - with an elastic job the tournament itself runs (O(jobs) per step);
 *  - only jobs that may act are visited when the shares are carried out: the
 *    watch list holds every job not known to be RUNNING at its share (a rigid
 *    one at any positive share); a job leaves it only when seen so, and comes
 *    back when its share changes, it is requeued, or a node changes.
 *
 * Parameters: afs_mode=l|p.
 * Invariants: 'act' holds the arrived jobs that are not final (F_LIVE) in
 * slot order, and finished ones not compacted yet; targets are valid sizes (or
 * 0) summing to at most the healthy GPUs, those of jobs naming a GPU type to
 * at most the healthy GPUs of that type (elastic_util.c's budget: a typed
 * job's share can be placed); each job's target is at most its max_gpus (its
 * request when rigid); sum_all, sum_type and nmulti are those of the live
 * jobs; allfit means every live job's target is its first size, except the
 * arrivals in 'fresh' (target 0 until the next computation); a live job not
 * in the watch list is RUNNING at its target (or rigid with a positive one).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elastic_util.h"
#include "gsched/policy.h"

#define TAG_RETRY 1

/* per-slot flags */
#define F_LIVE  1 /* in act: arrived and not final */
#define F_MULTI 2 /* can grow past its first size: shares need the tournament itself */
#define F_WATCH 4 /* in the watch list */

typedef struct afs_ord {
    double s;
    int32_t pos;
} afs_ord;

typedef struct afs {
    gs_engine *e;
    int mode_p;
    int32_t *act; /* slots, ascending; finished ones stay until compacted */
    size_t nact, capact, nlive;
    /* by slot */
    int *target, *first; /* share at the last computation; first size (next size from 0) */
    unsigned char *fl;
    size_t capslot;
    long long sum_all, sum_type[EU_MAX_TYPES]; /* first sizes of the live jobs */
    size_t nmulti;                             /* live jobs with F_MULTI */
    int allfit;
    int32_t *watch, *cur, *fresh; /* the watch list; enact's copy of it; arrivals not computed */
    size_t nwatch, capwatch, ncur, capcur, nfresh, capfresh;
    /* a full computation, by position in act */
    int *n, *nx;            /* share, next size */
    double *rlen, *s0, *s1; /* length; speed at n and at nx */
    afs_ord *ord;
    size_t capscr;
    int dirty;
    gs_time retry_at;
    char cause[96]; /* what triggered the last recomputation */
    char why[256];
} afs;

static int rigid(const gs_job *j)
{
    return j->max_gpus <= 0;
}

/* Next size above n for j, 0 when none. */
static int next_size(const gs_job *j, int n)
{
    if (rigid(j)) return n == 0 ? j->req_gpus : 0;
    int gpt = j->gpus_per_task > 0 ? j->gpus_per_task : 1;
    for (int k = n + gpt; k <= j->max_gpus; k += gpt)
        if (gs_job_size_valid(j, k)) return k;
    return 0;
}

/* j's remaining length as the mode estimates it (at least 1) */
static double run_len(const afs *a, const gs_job *j, gs_time now)
{
    double r;
    if (a->mode_p) {
        r = (double)gs_job_remaining(j, now);
    } else {
        r = (double)(j->work - gs_job_remaining(j, now));
        if (r < 60.0 * 1e6) r = 60.0 * 1e6;
    }
    return r > 1 ? r : 1;
}

/* speed_j(n) = rate at n / remaining length */
static double spd(const afs *a, const gs_job *j, double rlen, int n)
{
    if (n <= 0) return 0;
    return gs_engine_job_rate(a->e, j, gs_engine_job_gpu_type(a->e, j), n) / rlen;
}

static int grow_i32(int32_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    int32_t *q = realloc(*p, nc * sizeof *q);
    if (!q) return GS_ENOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

/* Room for slot s in the by-slot arrays. */
static int ensure_slot(afs *a, size_t s)
{
    if (s < a->capslot) return 0;
    size_t nc = a->capslot ? a->capslot * 2 : 1024;
    while (nc <= s) nc *= 2;
    int *t = realloc(a->target, nc * sizeof *t);
    if (!t) return GS_ENOMEM;
    a->target = t;
    if (!(t = realloc(a->first, nc * sizeof *t))) return GS_ENOMEM;
    a->first = t;
    unsigned char *f = realloc(a->fl, nc);
    if (!f) return GS_ENOMEM;
    memset(f + a->capslot, 0, nc - a->capslot);
    a->fl = f;
    a->capslot = nc;
    return 0;
}

/* Room for need jobs in the scratch arrays of a full computation. */
static int ensure_scratch(afs *a, size_t need)
{
    if (need <= a->capscr) return 0;
    size_t nc = a->capscr ? a->capscr * 2 : 64;
    while (nc < need) nc *= 2;
    int *n = realloc(a->n, nc * sizeof *n);
    if (!n) return GS_ENOMEM;
    a->n = n;
    if (!(n = realloc(a->nx, nc * sizeof *n))) return GS_ENOMEM;
    a->nx = n;
    double *r = realloc(a->rlen, nc * sizeof *r);
    if (!r) return GS_ENOMEM;
    a->rlen = r;
    if (!(r = realloc(a->s0, nc * sizeof *r))) return GS_ENOMEM;
    a->s0 = r;
    if (!(r = realloc(a->s1, nc * sizeof *r))) return GS_ENOMEM;
    a->s1 = r;
    afs_ord *o = realloc(a->ord, nc * sizeof *o);
    if (!o) return GS_ENOMEM;
    a->ord = o;
    a->capscr = nc;
    return 0;
}

static int watch_add(afs *a, int32_t s)
{
    if (a->fl[s] & F_WATCH) return 0;
    int rc = grow_i32(&a->watch, &a->capwatch, a->nwatch + 1);
    if (rc) return rc;
    a->watch[a->nwatch++] = s;
    a->fl[s] |= F_WATCH;
    return 0;
}

/* Drop the finished jobs from act. */
static void compact(afs *a)
{
    size_t k = 0;
    for (size_t i = 0; i < a->nact; i++)
        if (a->fl[a->act[i]] & F_LIVE) a->act[k++] = a->act[i];
    a->nact = k;
}

/* Cache job i's next size and its speeds at its share and at that size. */
static void refresh(afs *a, size_t i)
{
    const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
    a->nx[i] = next_size(j, a->n[i]);
    a->s0[i] = spd(a, j, a->rlen[i], a->n[i]);
    a->s1[i] = a->nx[i] > 0 ? spd(a, j, a->rlen[i], a->nx[i]) : 0;
}

/* The share computation (algorithms.md 7.1) itself: speeds cached per job, so a step is
 * O(jobs).  Shares into a->n by position in act (compacted). */
static void tournament(afs *a, eu_budget *left)
{
    gs_time now = gs_engine_now(a->e);
    for (size_t i = 0; i < a->nact; i++) {
        a->n[i] = 0;
        a->rlen[i] = run_len(a, gs_engine_job(a->e, (size_t)a->act[i]), now);
        refresh(a, i);
    }
    while (left->all > 0) {
        long cand = -1;
        for (size_t m = 0; m < a->nact; m++) {
            if (a->nx[m] <= 0) continue;
            const gs_job *jm = gs_engine_job(a->e, (size_t)a->act[m]);
            if (a->nx[m] - a->n[m] > eu_budget_left(left, jm)) continue;
            if (cand < 0) {
                cand = (long)m;
                continue;
            }
            size_t c = (size_t)cand, l, h;
            /* remaining time at the current share: 1 / speed (infinite with no GPU) */
            double rm = a->s0[m] > 0 ? 1.0 / a->s0[m] : INFINITY;
            double rc = a->s0[c] > 0 ? 1.0 / a->s0[c] : INFINITY;
            if (rm < rc)
                l = m, h = c;
            else
                l = c, h = m;
            double sl0 = a->s0[l], sl1 = a->s1[l], sh0 = a->s0[h], sh1 = a->s1[h];
            if (!(sl0 > 0))
                cand = (long)(sl1 > sh1 ? l : h);
            else
                cand = (long)((sl1 - sl0) / sl0 > (sh1 > 0 ? (sh1 - sh0) / sh1 : 0) ? l : h);
        }
        if (cand < 0) break;
        eu_budget_take(left, gs_engine_job(a->e, (size_t)a->act[cand]), a->nx[cand] - a->n[cand]);
        a->n[cand] = a->nx[cand];
        refresh(a, (size_t)cand);
    }
}

/* speed at the first size descending, then position descending (the tournament's winner
 * among jobs holding nothing is the last of the fastest) */
static int ord_cmp(const void *x, const void *y)
{
    const afs_ord *p = x, *q = y;
    if (p->s != q->s) return p->s > q->s ? -1 : 1;
    return p->pos > q->pos ? -1 : p->pos < q->pos;
}

/* The tournament when no job can take a second step (no F_MULTI): every candidate holds
 * nothing (speed 0), so a step's winner is the last job of the largest speed at its first
 * size among those that fit, and a job that does not fit never fits later.  Shares into a->n
 * by position in act (compacted); 1 (nothing written) when a speed is NaN, which this order
 * does not follow. */
static int ranked(afs *a, eu_budget *left)
{
    gs_time now = gs_engine_now(a->e);
    size_t m = 0;
    for (size_t i = 0; i < a->nact; i++) {
        int32_t s = a->act[i];
        int d = a->first[s];
        a->n[i] = 0;
        if (d <= 0) continue;
        const gs_job *j = gs_engine_job(a->e, (size_t)s);
        double v = spd(a, j, run_len(a, j, now), d);
        if (isnan(v)) return 1;
        a->ord[m].s = v;
        a->ord[m].pos = (int32_t)i;
        m++;
    }
    if (m > 1) qsort(a->ord, m, sizeof *a->ord, ord_cmp);
    for (size_t k = 0; k < m && left->all > 0; k++) {
        size_t i = (size_t)a->ord[k].pos;
        const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
        int d = a->first[a->act[i]];
        if (d > eu_budget_left(left, j)) continue;
        eu_budget_take(left, j, d);
        a->n[i] = d;
    }
    return 0;
}

/* Recompute every live job's target; jobs whose target changes join the watch list. */
static int shares(afs *a)
{
    eu_budget left; /* healthy GPUs, in all and per type */
    eu_budget_init(&left, gs_engine_cluster(a->e));
    int fit = a->nmulti == 0 && a->sum_all <= left.all, rc = 0;
    for (int t = 0; fit && t < left.ntypes; t++) fit = a->sum_type[t] <= left.type[t];
    if (fit) {
        if (a->allfit) {
            for (size_t k = 0; k < a->nfresh && !rc; k++) {
                int32_t s = a->fresh[k];
                if (!(a->fl[s] & F_LIVE)) continue;
                /* watched first: out of memory, its old target stands (check: quiet) */
                if (!(rc = watch_add(a, s))) a->target[s] = a->first[s];
            }
        } else {
            for (size_t i = 0; i < a->nact && !rc; i++) {
                int32_t s = a->act[i];
                if (!(a->fl[s] & F_LIVE) || a->target[s] == a->first[s]) continue;
                if (!(rc = watch_add(a, s))) a->target[s] = a->first[s];
            }
            a->allfit = 1;
        }
    } else {
        compact(a);
        rc = ensure_scratch(a, a->nact);
        if (!rc && (a->nmulti > 0 || ranked(a, &left))) tournament(a, &left);
        for (size_t i = 0; i < a->nact && !rc; i++) {
            int32_t s = a->act[i];
            if (a->target[s] == a->n[i]) continue;
            if (!(rc = watch_add(a, s))) a->target[s] = a->n[i];
        }
        a->allfit = 0;
    }
    a->nfresh = 0;
    return rc;
}

/* Nothing to carry out for job slot s now: RUNNING at its target, or rigid at a positive one. */
static int quiet(const afs *a, int32_t s)
{
    const gs_job *j = gs_engine_job(a->e, (size_t)s);
    int t = a->target[s];
    return j->state == GS_JOB_RUNNING && (j->gpus == t || (rigid(j) && t > 0));
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t p = *(const int32_t *)x, q = *(const int32_t *)y;
    return (p > q) - (p < q);
}

/* Carry the targets out for the watched jobs, in slot order (the others have nothing to do). */
static int enact(afs *a)
{
    gs_time now = gs_engine_now(a->e), retry = GS_TIME_NONE;
    /* take the watch list: jobs that join it from here on go to a fresh one, with room for
     * every live job (a job is listed once), so that no watch_add() below can fail */
    if (grow_i32(&a->cur, &a->capcur, a->nlive)) return GS_ENOMEM;
    int32_t *w = a->cur;
    size_t wc = a->capcur;
    a->cur = a->watch, a->capcur = a->capwatch, a->ncur = a->nwatch;
    a->watch = w, a->capwatch = wc, a->nwatch = 0;
    for (size_t k = 0; k < a->ncur; k++) a->fl[a->cur[k]] &= (unsigned char)~F_WATCH;
    if (a->ncur > 1) qsort(a->cur, a->ncur, sizeof *a->cur, cmp_i32);
    int rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (size_t k = 0; k < a->ncur && !rc; k++) {
            int32_t s = a->cur[k];
            if (!(a->fl[s] & F_LIVE)) continue;
            const gs_job *j = gs_engine_job(a->e, (size_t)s);
            if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PENDING) continue;
            int cur = j->state == GS_JOB_RUNNING ? j->gpus : 0, t = a->target[s];
            if (pass == 0 ? t >= cur : t <= cur) continue;
            if (j->state == GS_JOB_RUNNING && rigid(j) && t > 0) continue;
            snprintf(a->why, sizeof a->why, "afs: %s %d->%d GPUs: %s",
                     t > cur ? "grew"
                     : t > 0 ? "shrank"
                             : "paused",
                     cur, t, a->cause);
            int r = eu_apply(a->e, j, t, 0, a->why);
            if (r < 0) {
                rc = r;
                break;
            }
            if (r > 0 && j->state == GS_JOB_RUNNING) {
                gs_time at = gs_engine_rescale_allowed_at(a->e, j);
                if (at != GS_TIME_NONE && at > now && (retry == GS_TIME_NONE || at < retry))
                    retry = at;
            }
            if (r > 0 && j->state == GS_JOB_PENDING)
                gs_engine_set_reason(a->e, j, "Resources (afs: its share is not free yet)");
        }
    if (!rc) {
        for (size_t k = 0; k < a->ncur; k++) {
            int32_t s = a->cur[k];
            if (!(a->fl[s] & F_LIVE)) continue;
            const gs_job *j = gs_engine_job(a->e, (size_t)s);
            if (j->state == GS_JOB_PENDING && a->target[s] == 0)
                gs_engine_set_reason(a->e, j, "afs: no share at the last recomputation");
        }
        if (retry != GS_TIME_NONE &&
            (a->retry_at == GS_TIME_NONE || retry < a->retry_at || a->retry_at <= now)) {
            a->retry_at = retry;
            rc = gs_engine_set_timer(a->e, retry, TAG_RETRY);
        }
    }
    /* back to the watch list: every job that may still act (all of them after an error) */
    for (size_t k = 0; k < a->ncur; k++) {
        int32_t s = a->cur[k];
        if (!(a->fl[s] & F_LIVE) || (!rc && quiet(a, s))) continue;
        int r = watch_add(a, s);
        if (r && !rc) rc = r;
    }
    a->ncur = 0;
    return rc;
}

static int afs_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    const char *m = gs_params_get(p, "afs_mode");
    int mode_p = 0;
    if (m && !strcmp(m, "p"))
        mode_p = 1;
    else if (m && strcmp(m, "l"))
        return gs_diag_set(d, GS_EINVAL, 0, 0, "afs_mode: expected l or p, got '%s'", m);
    afs *a = calloc(1, sizeof *a);
    if (!a) return GS_ENOMEM;
    a->e = e;
    a->mode_p = mode_p;
    a->allfit = 1; /* no job yet */
    a->retry_at = GS_TIME_NONE;
    gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = a;
    return 0;
}

static void afs_destroy(void *st)
{
    afs *a = st;
    if (!a) return;
    free(a->act);
    free(a->target);
    free(a->first);
    free(a->fl);
    free(a->watch);
    free(a->cur);
    free(a->fresh);
    free(a->n);
    free(a->nx);
    free(a->rlen);
    free(a->s0);
    free(a->s1);
    free(a->ord);
    free(a);
}

static int afs_arrival(void *st, gs_job *j)
{
    afs *a = st;
    int32_t s = j->slot;
    int rc = ensure_slot(a, (size_t)s);
    if (!rc) rc = grow_i32(&a->act, &a->capact, a->nact + 1);
    if (!rc) rc = grow_i32(&a->fresh, &a->capfresh, a->nfresh + 1);
    if (!rc) rc = grow_i32(&a->watch, &a->capwatch, a->nwatch + 1);
    if (rc) return rc;
    if (!(a->fl[s] & F_LIVE)) {
        size_t at = a->nact;
        while (at > 0 && a->act[at - 1] > s) at--;
        memmove(&a->act[at + 1], &a->act[at], (a->nact - at) * sizeof *a->act);
        a->act[at] = s;
        a->nact++;
        a->nlive++;
        int d = next_size(j, 0);
        a->first[s] = d;
        a->target[s] = 0;
        a->fl[s] |= F_LIVE;
        if (d > 0 && next_size(j, d) > 0) {
            a->fl[s] |= F_MULTI;
            a->nmulti++;
        }
        a->sum_all += d;
        if (j->gpu_type >= 0 && j->gpu_type < EU_MAX_TYPES) a->sum_type[j->gpu_type] += d;
        a->fresh[a->nfresh++] = s;
        watch_add(a, s); /* room made above */
    }
    snprintf(a->cause, sizeof a->cause, "shares recomputed: job %lld arrived", (long long)j->id);
    a->dirty = 1;
    return 0;
}

static int afs_finish(void *st, gs_job *j)
{
    afs *a = st;
    int32_t s = j->slot;
    if ((size_t)s < a->capslot && (a->fl[s] & F_LIVE)) {
        int d = a->first[s];
        a->sum_all -= d;
        if (j->gpu_type >= 0 && j->gpu_type < EU_MAX_TYPES) a->sum_type[j->gpu_type] -= d;
        if (a->fl[s] & F_MULTI) a->nmulti--;
        a->fl[s] &= (unsigned char)~(F_LIVE | F_MULTI);
        a->nlive--;
        if (a->nact - a->nlive > a->nlive + 64) compact(a);
    }
    snprintf(a->cause, sizeof a->cause, "shares recomputed: job %lld finished", (long long)j->id);
    a->dirty = 1;
    gs_engine_request_pass(a->e); /* the others may grow even when nobody waits */
    return 0;
}

static int afs_requeue(void *st, gs_job *j)
{
    afs *a = st;
    a->dirty = 1;
    if ((size_t)j->slot < a->capslot && (a->fl[j->slot] & F_LIVE)) return watch_add(a, j->slot);
    return 0;
}

static int afs_node(void *st, int node, int down)
{
    afs *a = st;
    snprintf(a->cause, sizeof a->cause, "shares recomputed: node %d %s", node,
             down ? "down" : "up");
    a->dirty = 1;
    gs_engine_request_pass(a->e);
    for (size_t i = 0; i < a->nact; i++) { /* a node's jobs may have changed */
        if (!(a->fl[a->act[i]] & F_LIVE)) continue;
        int rc = watch_add(a, a->act[i]);
        if (rc) return rc;
    }
    return 0;
}

static int afs_timer(void *st, uint64_t tag)
{
    afs *a = st;
    if (tag == TAG_RETRY) a->retry_at = GS_TIME_NONE;
    gs_engine_request_pass(a->e);
    return 0;
}

static int afs_schedule(void *st)
{
    afs *a = st;
    if (a->dirty) {
        int rc = shares(a);
        a->dirty = 0;
        if (rc) return rc;
    }
    return enact(a);
}

static int afs_check(void *st, gs_diag *d)
{
    afs *a = st;
    int sum = 0;
    size_t live = 0, watched = 0, multi = 0;
    long long sall = 0, stype[EU_MAX_TYPES] = {0};
    for (size_t i = 0; i < a->nact; i++) {
        int32_t s = a->act[i];
        if (i && s <= a->act[i - 1])
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "afs: jobs out of slot order");
        if (!(a->fl[s] & F_LIVE)) continue;
        const gs_job *j = gs_engine_job(a->e, (size_t)s);
        if (gs_job_state_final(j->state) || !j->arrived)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "afs: job %lld listed but %s",
                               (long long)j->id, gs_job_state_name(j->state));
        live++;
        sum += a->target[s];
        sall += a->first[s];
        if (j->gpu_type >= 0 && j->gpu_type < EU_MAX_TYPES) stype[j->gpu_type] += a->first[s];
        multi += !!(a->fl[s] & F_MULTI);
        if (a->first[s] != next_size(j, 0) ||
            !!(a->fl[s] & F_MULTI) != (a->first[s] > 0 && next_size(j, a->first[s]) > 0))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "afs: job %lld: first size %d is off",
                               (long long)j->id, a->first[s]);
        if (!(a->fl[s] & F_WATCH) && !quiet(a, s))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "afs: job %lld is not watched but may act (%s, %d GPUs, share %d)",
                               (long long)j->id, gs_job_state_name(j->state), j->gpus,
                               a->target[s]);
        if (a->allfit && !a->nfresh && a->target[s] != a->first[s])
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "afs: job %lld has share %d, not its first size %d, though all "
                               "fit",
                               (long long)j->id, a->target[s], a->first[s]);
    }
    for (size_t k = 0; k < a->nwatch; k++) watched += !!(a->fl[a->watch[k]] & F_WATCH);
    if (live != a->nlive || watched != a->nwatch)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                           "afs: %zu jobs listed (counted %zu), %zu watched (flagged %zu)", live,
                           a->nlive, a->nwatch, watched);
    int sums_ok = sall == a->sum_all && multi == a->nmulti;
    for (int t = 0; t < EU_MAX_TYPES; t++) sums_ok &= stype[t] == a->sum_type[t];
    if (!sums_ok)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                           "afs: first sizes sum to %lld (kept %lld), %zu elastic (kept %zu), or "
                           "a type's sum is off",
                           sall, a->sum_all, multi, a->nmulti);
    if (sum > (int)gs_cluster_ngpus(gs_engine_cluster(a->e)))
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "afs: shares sum to %d GPUs", sum);
    return 0;
}

static const gs_policy_ops gs_policy_afs = {
    .name = "afs",
    .summary = "elastic shares by AFS's pairwise rule on every arrival and completion "
               "(afs_mode=l: length-agnostic, p: known remaining work)",
    .flags = 0, /* resizes through gs_engine_rescale, never gs_engine_preempt */
    .create = afs_create,
    .destroy = afs_destroy,
    .on_arrival = afs_arrival,
    .on_adopt = afs_arrival, /* every active job, running or not, is in act */
    .on_requeue = afs_requeue,
    .on_finish = afs_finish,
    .on_node = afs_node,
    .on_timer = afs_timer,
    .schedule = afs_schedule,
    .check = afs_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_afs[] = {{120, &gs_policy_afs}, {0, NULL}};
