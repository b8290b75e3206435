/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_edf.c - earliest deadline first, rigid: the baseline ElasticFlow is
 * compared with.  Waiting jobs are served in order of deadline (jobs without
 * one after every job with one, by arrival), each at the GPU count it asked
 * for (an elastic job runs at its requested size and is never resized); a job
 * that does not fit now does not block the ones behind it (backfill).  No
 * preemption and no admission control: a job whose deadline has passed still
 * runs, and counts as a missed deadline.
 * Queue view: one global queue ordered by deadline.
 * Invariants: the queue holds exactly the arrived PENDING jobs, sorted by
 * (deadline, slot); a job never changes size.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"

typedef struct edf {
    gs_engine *e;
    gs_jobq q;
} edf;

static int edf_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    (void)p, (void)d;
    edf *f = calloc(1, sizeof *f);
    if (!f) return GS_ENOMEM;
    f->e = e;
    gs_jobq_init(&f->q);
    *state = f;
    return 0;
}

static void edf_destroy(void *st)
{
    edf *f = st;
    if (!f) return;
    gs_jobq_release(&f->q);
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

static int edf_insert(void *st, gs_job *j)
{
    edf *f = st;
    for (int32_t s = gs_jobq_first(&f->q); s >= 0; s = gs_jobq_next(&f->q, s))
        if (before(j, gs_engine_job(f->e, (size_t)s)))
            return gs_jobq_insert_before(&f->q, s, j->slot);
    return gs_jobq_push_back(&f->q, j->slot);
}

static int edf_finish(void *st, gs_job *j)
{
    edf *f = st;
    gs_jobq_remove(&f->q, j->slot);
    return 0;
}

static int edf_schedule(void *st)
{
    edf *f = st;
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

const gs_policy_ops gs_policy_edf = {
    .name = "edf",
    .summary = "earliest deadline first at the requested size (rigid, backfill; ElasticFlow's "
               "baseline)",
    .flags = 0,
    .create = edf_create,
    .destroy = edf_destroy,
    .on_arrival = edf_insert,
    .on_requeue = edf_insert,
    .on_finish = edf_finish,
    .schedule = edf_schedule,
    .queue_key = edf_queue_key,
    .queue_describe = edf_queue_describe,
};
