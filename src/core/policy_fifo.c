/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_fifo.c - first in, first out, two flavours:
 *   fifo           strict arrival order: the head blocks everyone behind it
 *                  (head-of-line blocking, as Tiresias' "fifo" scheduler);
 *   fifo-backfill  arrival order, but any job that fits starts (Tiresias'
 *                  "fjf", fit-job-first).
 * Queue view: the engine's defaults (one queue by submission, no VC guarantee).
 * Invariants: the queue holds exactly the arrived PENDING jobs, in arrival
 * order (a requeued job returns to its arrival position).
 */
#include <stdlib.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"

typedef struct fifo {
    gs_engine *e;
    gs_jobq q;
    int backfill;
} fifo;

static int create_common(gs_engine *e, void **state, int backfill)
{
    fifo *f = calloc(1, sizeof *f);
    if (!f) return GS_ENOMEM;
    f->e = e;
    f->backfill = backfill;
    gs_jobq_init(&f->q);
    *state = f;
    return 0;
}

static int fifo_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    (void)p, (void)d;
    return create_common(e, state, 0);
}

static int backfill_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    (void)p, (void)d;
    return create_common(e, state, 1);
}

static void fifo_destroy(void *st)
{
    fifo *f = st;
    if (!f) return;
    gs_jobq_release(&f->q);
    free(f);
}

static int fifo_arrival(void *st, gs_job *j)
{
    fifo *f = st;
    return gs_jobq_push_back(&f->q, j->slot);
}

/* A running job adopted (daemon restart, reconfiguration): fifo keeps no state for running
 * jobs. */
static int fifo_adopt(void *st, gs_job *j)
{
    (void)st, (void)j;
    return 0;
}

/* Put a requeued job back at its arrival position (slots follow arrival order). */
static int fifo_requeue(void *st, gs_job *j)
{
    fifo *f = st;
    for (int32_t s = gs_jobq_first(&f->q); s >= 0; s = gs_jobq_next(&f->q, s))
        if (s > j->slot) return gs_jobq_insert_before(&f->q, s, j->slot);
    return gs_jobq_push_back(&f->q, j->slot);
}

static int fifo_finish(void *st, gs_job *j)
{
    fifo *f = st;
    gs_jobq_remove(&f->q, j->slot);
    return 0;
}

static int fifo_schedule(void *st)
{
    fifo *f = st;
    gs_cluster *c = gs_engine_cluster(f->e);
    int32_t s = gs_jobq_first(&f->q);
    while (s >= 0 && gs_cluster_free(c) > 0) {
        int32_t next = gs_jobq_next(&f->q, s);
        gs_job *j = gs_policy_job(f->e, (size_t)s);
        int rc = gs_engine_try_start(f->e, j, GS_LOCALITY_STRICT);
        if (rc == GS_ENOMEM) return rc;
        if (rc == 0) {
            gs_jobq_remove(&f->q, s);
        } else {
            gs_engine_set_reason(f->e, j, s == gs_jobq_first(&f->q) ? "Resources" : "Priority");
            if (!f->backfill) break;
        }
        s = next;
    }
    return 0;
}

static const gs_policy_ops gs_policy_fifo = {
    .name = "fifo",
    .summary = "strict arrival order; the first waiting job blocks all behind it",
    .flags = 0,
    .create = fifo_create,
    .destroy = fifo_destroy,
    .on_arrival = fifo_arrival,
    .on_adopt = fifo_adopt,
    .on_requeue = fifo_requeue,
    .on_finish = fifo_finish,
    .on_withdraw = fifo_finish, /* forgets a waiting job, as a cancel */
    .schedule = fifo_schedule,
};

static const gs_policy_ops gs_policy_fifo_backfill = {
    .name = "fifo-backfill",
    .summary = "arrival order, but any waiting job that fits starts (fit-job-first)",
    .flags = 0,
    .create = backfill_create,
    .destroy = fifo_destroy,
    .on_arrival = fifo_arrival,
    .on_adopt = fifo_adopt,
    .on_requeue = fifo_requeue,
    .on_finish = fifo_finish,
    .on_withdraw = fifo_finish, /* forgets a waiting job, as a cancel */
    .schedule = fifo_schedule,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_fifo[] = {
    {10, &gs_policy_fifo}, {11, &gs_policy_fifo_backfill}, {0, NULL}};
