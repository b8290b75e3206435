/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_edf.c - earliest deadline first, rigid: the baseline ElasticFlow is
 * compared with.  Waiting jobs are served in order of deadline (jobs without
 * one after every job with one, by arrival), each at the GPU count it asked
 * for (an elastic job runs at its requested size and is never resized); a job
 * that does not fit now does not block the ones behind it (backfill).  No
 * preemption and no admission control: a job whose deadline has passed still
 * runs, and counts as a missed deadline.
 *
 * edf_gpus=max is the ElasticFlow artifact's own "edf" instead (its
 * scheduler.py, read, not copied): at every arrival and completion, and every
 * 60 s, all active jobs in deadline order get the largest size they may use
 * (max_gpus: with throughput tables the largest measured count, up to 64) or,
 * when fewer GPUs are left, the largest power of two that is (a rigid job its
 * request or nothing); running jobs are resized to it through
 * gs_engine_rescale (to 0: drained back to PENDING), with the reason.
 * Queue view: one global queue ordered by deadline.
 * Invariants: edf_gpus=request: the queue 'q' holds exactly the arrived
 * PENDING jobs, sorted by (deadline, slot), and a job never changes size;
 * edf_gpus=max: 'act' holds every arrived job that is not final, in the same
 * order ('q' stays empty).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elastic_util.h"
#include "gsched/jobq.h"
#include "gsched/policy.h"

#define TAG_SLOT 1

typedef struct edf {
    gs_engine *e;
    gs_jobq q;   /* PENDING, deadline order */
    gs_jobq act; /* every active job, deadline order (edf_gpus=max) */
    int max;     /* edf_gpus=max */
    int *target;
    size_t captarget;
    gs_time timer_at;
    char why[160];
} edf;

static int edf_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    const char *m = gs_params_get(p, "edf_gpus");
    if (m && strcmp(m, "request") && strcmp(m, "max"))
        return gs_diag_set(d, GS_EINVAL, 0, 0, "edf_gpus: expected request or max, got '%s'", m);
    edf *f = calloc(1, sizeof *f);
    if (!f) return GS_ENOMEM;
    f->e = e;
    f->max = m && !strcmp(m, "max");
    f->timer_at = GS_TIME_NONE;
    gs_jobq_init(&f->q);
    gs_jobq_init(&f->act);
    if (f->max) gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = f;
    return 0;
}

static void edf_destroy(void *st)
{
    edf *f = st;
    if (!f) return;
    gs_jobq_release(&f->q);
    gs_jobq_release(&f->act);
    free(f->target);
    free(f);
}

/* Order key: deadline, jobs without one last (by arrival, slots follow arrival order). */
static gs_time key_of(const gs_job *j)
{
    return j->deadline == GS_TIME_NONE ? GS_TIME_MAX : j->deadline;
}

static int before(const gs_job *a, const gs_job *b)
{
    gs_time ka = key_of(a), kb = key_of(b);
    return ka != kb ? ka < kb : a->slot < b->slot;
}

static int insert(edf *f, gs_jobq *q, const gs_job *j)
{
    for (int32_t s = gs_jobq_first(q); s >= 0; s = gs_jobq_next(q, s))
        if (before(j, gs_engine_job(f->e, (size_t)s))) return gs_jobq_insert_before(q, s, j->slot);
    return gs_jobq_push_back(q, j->slot);
}

static int arm(edf *f)
{
    gs_time now = gs_engine_now(f->e);
    if (!f->max || !gs_jobq_len(&f->act) || (f->timer_at != GS_TIME_NONE && f->timer_at > now))
        return 0;
    f->timer_at = now + 60 * GS_SEC;
    return gs_engine_set_timer(f->e, f->timer_at, TAG_SLOT);
}

static int edf_requeue(void *st, gs_job *j)
{
    edf *f = st;
    return f->max ? 0 : insert(f, &f->q, j); /* max: still in 'act' */
}

static int edf_arrival(void *st, gs_job *j)
{
    edf *f = st;
    if (!f->max) return insert(f, &f->q, j);
    int rc = insert(f, &f->act, j);
    return rc ? rc : arm(f);
}

/* A running job adopted (daemon restart, reconfiguration): elastic mode keeps every active job
 * in act; the rigid mode queues waiting jobs only. */
static int edf_adopt(void *st, gs_job *j)
{
    edf *f = st;
    if (!f->max) return 0;
    int rc = insert(f, &f->act, j);
    return rc ? rc : arm(f);
}

static int edf_finish(void *st, gs_job *j)
{
    edf *f = st;
    gs_jobq_remove(&f->q, j->slot);
    gs_jobq_remove(&f->act, j->slot);
    if (f->max) gs_engine_request_pass(f->e); /* the others may grow into its GPUs */
    return 0;
}

static int edf_timer(void *st, uint64_t tag)
{
    edf *f = st;
    if (tag != TAG_SLOT) return 0;
    f->timer_at = GS_TIME_NONE;
    gs_engine_request_pass(f->e);
    return arm(f);
}

/* edf_gpus=max: sizes in deadline order, shrinks first, then grows and starts. */
static int schedule_max(edf *f)
{
    size_t n = gs_jobq_len(&f->act);
    if (n > f->captarget) {
        int *t = realloc(f->target, n * sizeof *t);
        if (!t) return GS_ENOMEM;
        f->target = t;
        f->captarget = n;
    }
    int left = gs_cluster_cell(gs_engine_cluster(f->e), 0)->healthy;
    size_t i = 0;
    for (int32_t s = gs_jobq_first(&f->act); s >= 0; s = gs_jobq_next(&f->act, s), i++) {
        const gs_job *j = gs_engine_job(f->e, (size_t)s);
        int t;
        if (j->max_gpus <= 0) {
            t = j->req_gpus <= left ? j->req_gpus : 0;
        } else {
            t = eu_floor_pow2(j->max_gpus < left ? j->max_gpus : left);
            while (t > 0 && !gs_job_size_valid(j, t)) t /= 2;
        }
        f->target[i] = t;
        left -= t;
    }
    for (int pass = 0; pass < 2; pass++) {
        i = 0;
        for (int32_t s = gs_jobq_first(&f->act); s >= 0; s = gs_jobq_next(&f->act, s), i++) {
            const gs_job *j = gs_engine_job(f->e, (size_t)s);
            if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PENDING) continue;
            int cur = j->state == GS_JOB_RUNNING ? j->gpus : 0, t = f->target[i];
            if (pass == 0 ? t >= cur : t <= cur) continue;
            if (j->state == GS_JOB_RUNNING && j->max_gpus <= 0) continue; /* rigid: never */
            snprintf(f->why, sizeof f->why,
                     "edf: %d->%d GPUs: in deadline order each job takes the most GPUs it may "
                     "use that are left (edf_gpus=max)",
                     cur, t);
            int rc = eu_apply(f->e, j, t, 1, f->why);
            if (rc < 0) return rc;
            if (rc > 0 && j->state == GS_JOB_PENDING)
                gs_engine_set_reason(f->e, j, t ? "Resources" : "Priority (deadline)");
        }
    }
    return 0;
}

static int edf_schedule(void *st)
{
    edf *f = st;
    if (f->max) return schedule_max(f);
    gs_cluster *c = gs_engine_cluster(f->e);
    int32_t s = gs_jobq_first(&f->q);
    while (s >= 0 && gs_cluster_free(c) > 0) {
        int32_t next = gs_jobq_next(&f->q, s);
        gs_job *j = gs_policy_job(f->e, (size_t)s);
        int rc = gs_engine_try_start(f->e, j, GS_LOCALITY_ANY);
        if (rc == GS_ENOMEM) return rc;
        if (rc == 0)
            gs_jobq_remove(&f->q, s);
        else
            gs_engine_set_reason(f->e, j,
                                 s == gs_jobq_first(&f->q) ? "Resources" : "Priority (deadline)");
        s = next;
    }
    return 0;
}

static int edf_queue_key(void *st, const gs_job *j, gs_queue_key *k)
{
    (void)st;
    k->queue = GS_QUEUE_GLOBAL;
    k->key = key_of(j);
    return 0;
}

static int edf_queue_describe(void *st, int queue, char *buf, size_t cap)
{
    (void)st, (void)queue;
    snprintf(buf, cap, "in the queue (by deadline, jobs without one last)");
    return 0;
}

static const gs_policy_ops gs_policy_edf = {
    .name = "edf",
    .summary = "earliest deadline first at the requested size (rigid, backfill; ElasticFlow's "
               "baseline); edf_gpus=max: the ElasticFlow artifact's greedy EDF",
    .flags = 0,
    .create = edf_create,
    .destroy = edf_destroy,
    .on_arrival = edf_arrival,
    .on_adopt = edf_adopt,
    .on_requeue = edf_requeue,
    .on_finish = edf_finish,
    .on_withdraw = edf_finish, /* forgets a waiting job, as a cancel */
    .on_timer = edf_timer,
    .schedule = edf_schedule,
    .queue_key = edf_queue_key,
    .queue_describe = edf_queue_describe,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_edf[] = {{110, &gs_policy_edf}, {0, NULL}};
