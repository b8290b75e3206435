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
 * Parameters: afs_mode=l|p.
 * Invariants: 'act' holds exactly the arrived jobs that are not final, in
 * slot order; targets are valid sizes (or 0) summing to at most the healthy
 * GPUs, those of jobs naming a GPU type to at most the healthy GPUs of that
 * type (elastic_util.c's budget: a typed job's share can be placed); each job's target is at most
 * its max_gpus (its request when rigid).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elastic_util.h"
#include "gsched/policy.h"

#define TAG_RETRY 1

typedef struct afs {
    gs_engine *e;
    int mode_p;
    int32_t *act;
    int *n, *target, *nx;   /* share, target, next size (by position in act) */
    double *rlen, *s0, *s1; /* length; speed at n and at nx */
    size_t nact, capact;
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

/* speed_j(n) = rate at n / remaining length */
static double spd(const afs *a, size_t i, int n)
{
    if (n <= 0) return 0;
    const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
    return gs_engine_job_rate(a->e, j, gs_engine_job_gpu_type(a->e, j), n) / a->rlen[i];
}

static int ensure_cap(afs *a, size_t need)
{
    if (need <= a->capact) return 0;
    size_t nc = a->capact ? a->capact * 2 : 64;
    while (nc < need) nc *= 2;
    int32_t *s = realloc(a->act, nc * sizeof *s);
    if (!s) return GS_ENOMEM;
    a->act = s;
    int *n = realloc(a->n, nc * sizeof *n);
    if (!n) return GS_ENOMEM;
    a->n = n;
    int *t = realloc(a->target, nc * sizeof *t);
    if (!t) return GS_ENOMEM;
    a->target = t;
    int *x = realloc(a->nx, nc * sizeof *x);
    if (!x) return GS_ENOMEM;
    a->nx = x;
    double *r = realloc(a->rlen, nc * sizeof *r);
    if (!r) return GS_ENOMEM;
    a->rlen = r;
    if (!(r = realloc(a->s0, nc * sizeof *r))) return GS_ENOMEM;
    a->s0 = r;
    if (!(r = realloc(a->s1, nc * sizeof *r))) return GS_ENOMEM;
    a->s1 = r;
    a->capact = nc;
    return 0;
}

/* Cache job i's next size and its speeds at its share and at that size. */
static void refresh(afs *a, size_t i)
{
    const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
    a->nx[i] = next_size(j, a->n[i]);
    a->s0[i] = spd(a, i, a->n[i]);
    a->s1[i] = a->nx[i] > 0 ? spd(a, i, a->nx[i]) : 0;
}

/* The share computation (algorithms.md 7.1); speeds cached per job, so a step is O(jobs). */
static void shares(afs *a)
{
    gs_time now = gs_engine_now(a->e);
    eu_budget left; /* healthy GPUs, in all and per type */
    eu_budget_init(&left, gs_engine_cluster(a->e));
    for (size_t i = 0; i < a->nact; i++) {
        const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
        a->n[i] = 0;
        double r;
        if (a->mode_p) {
            r = (double)gs_job_remaining(j, now);
        } else {
            r = (double)(j->work - gs_job_remaining(j, now));
            if (r < 60.0 * 1e6) r = 60.0 * 1e6;
        }
        a->rlen[i] = r > 1 ? r : 1;
        refresh(a, i);
    }
    while (left.all > 0) {
        long cand = -1;
        for (size_t m = 0; m < a->nact; m++) {
            if (a->nx[m] <= 0) continue;
            const gs_job *jm = gs_engine_job(a->e, (size_t)a->act[m]);
            if (a->nx[m] - a->n[m] > eu_budget_left(&left, jm)) continue;
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
        eu_budget_take(&left, gs_engine_job(a->e, (size_t)a->act[cand]), a->nx[cand] - a->n[cand]);
        a->n[cand] = a->nx[cand];
        refresh(a, (size_t)cand);
    }
    for (size_t i = 0; i < a->nact; i++) a->target[i] = a->n[i];
}

static int enact(afs *a)
{
    gs_time now = gs_engine_now(a->e), retry = GS_TIME_NONE;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < a->nact; i++) {
            const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
            if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PENDING) continue;
            int cur = j->state == GS_JOB_RUNNING ? j->gpus : 0, t = a->target[i];
            if (pass == 0 ? t >= cur : t <= cur) continue;
            if (j->state == GS_JOB_RUNNING && rigid(j) && t > 0) continue;
            snprintf(a->why, sizeof a->why, "afs: %s %d->%d GPUs: %s",
                     t > cur ? "grew"
                     : t > 0 ? "shrank"
                             : "paused",
                     cur, t, a->cause);
            int rc = eu_apply(a->e, j, t, 0, a->why);
            if (rc < 0) return rc;
            if (rc > 0 && j->state == GS_JOB_RUNNING) {
                gs_time at = gs_engine_rescale_allowed_at(a->e, j);
                if (at != GS_TIME_NONE && at > now && (retry == GS_TIME_NONE || at < retry))
                    retry = at;
            }
            if (rc > 0 && j->state == GS_JOB_PENDING)
                gs_engine_set_reason(a->e, j, "Resources (afs: its share is not free yet)");
        }
    for (size_t i = 0; i < a->nact; i++) {
        const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
        if (j->state == GS_JOB_PENDING && a->target[i] == 0)
            gs_engine_set_reason(a->e, j, "afs: no share at the last recomputation");
    }
    if (retry != GS_TIME_NONE &&
        (a->retry_at == GS_TIME_NONE || retry < a->retry_at || a->retry_at <= now)) {
        a->retry_at = retry;
        return gs_engine_set_timer(a->e, retry, TAG_RETRY);
    }
    return 0;
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
    free(a->n);
    free(a->target);
    free(a->rlen);
    free(a->nx);
    free(a->s0);
    free(a->s1);
    free(a);
}

static int afs_arrival(void *st, gs_job *j)
{
    afs *a = st;
    int rc = ensure_cap(a, a->nact + 1);
    if (rc) return rc;
    size_t at = a->nact;
    while (at > 0 && a->act[at - 1] > j->slot) at--;
    memmove(&a->act[at + 1], &a->act[at], (a->nact - at) * sizeof *a->act);
    a->act[at] = j->slot;
    a->target[at] = 0;
    a->nact++;
    snprintf(a->cause, sizeof a->cause, "shares recomputed: job %lld arrived", (long long)j->id);
    a->dirty = 1;
    return 0;
}

static int afs_finish(void *st, gs_job *j)
{
    afs *a = st;
    for (size_t i = 0; i < a->nact; i++)
        if (a->act[i] == j->slot) {
            memmove(&a->act[i], &a->act[i + 1], (a->nact - i - 1) * sizeof *a->act);
            memmove(&a->target[i], &a->target[i + 1], (a->nact - i - 1) * sizeof *a->target);
            a->nact--;
            break;
        }
    snprintf(a->cause, sizeof a->cause, "shares recomputed: job %lld finished", (long long)j->id);
    a->dirty = 1;
    gs_engine_request_pass(a->e); /* the others may grow even when nobody waits */
    return 0;
}

static int afs_requeue(void *st, gs_job *j)
{
    afs *a = st;
    (void)j;
    a->dirty = 1;
    return 0;
}

static int afs_node(void *st, int node, int down)
{
    afs *a = st;
    snprintf(a->cause, sizeof a->cause, "shares recomputed: node %d %s", node,
             down ? "down" : "up");
    a->dirty = 1;
    gs_engine_request_pass(a->e);
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
        shares(a);
        a->dirty = 0;
    }
    return enact(a);
}

static int afs_check(void *st, gs_diag *d)
{
    afs *a = st;
    int sum = 0;
    for (size_t i = 0; i < a->nact; i++) {
        const gs_job *j = gs_engine_job(a->e, (size_t)a->act[i]);
        if (gs_job_state_final(j->state) || !j->arrived)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "afs: job %lld listed but %s",
                               (long long)j->id, gs_job_state_name(j->state));
        if (i && a->act[i] <= a->act[i - 1])
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "afs: jobs out of slot order");
        sum += a->target[i];
    }
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
