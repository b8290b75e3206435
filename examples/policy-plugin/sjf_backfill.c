/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sjf_backfill.c - an example policy plugin: smallest job first, with backfill
 * (docs/writing-a-policy.md walks through it).
 *
 *   sjf-backfill   waiting jobs are served smallest first (fewest GPUs; equal
 *                  sizes in arrival order); every job that fits starts, so a
 *                  large job never blocks the small ones behind it.
 *                  Parameter starve_after=DURATION (default 0 = off): a job
 *                  that has waited that long goes before every other, in
 *                  arrival order, and while it does not fit nothing else
 *                  starts (the GPUs that free up are kept for it), so large
 *                  jobs are not starved for ever.
 *
 * Built as a shared object against gsched's public headers only:
 *     cc -shared -fPIC -I include -I build/include sjf_backfill.c -o sjf_backfill.so
 *     gsched sim --policy-plugin ./sjf_backfill.so --policy sjf-backfill ...
 * Invariants: 'bysize' and 'byarrival' hold exactly the arrived PENDING jobs,
 * ordered by (GPUs, slot) and by slot (the engine gives slots in arrival
 * order); the policy changes jobs only through gs_engine_* requests.
 */
#include <stdlib.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"

typedef struct sjf {
    gs_engine *e;
    gs_jobq bysize;    /* pending jobs, smallest first */
    gs_jobq byarrival; /* the same jobs in arrival order (for starve_after) */
    gs_time starve_after;
} sjf;

static int sjf_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    gs_time starve;
    /* reading a parameter marks it used: an unknown --set key is refused by the program */
    int rc = gs_params_get_duration(p, "starve_after", 0, &starve, d);
    if (rc) return rc;
    if (starve < 0)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "sjf-backfill: starve_after must not be negative");
    sjf *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->e = e;
    s->starve_after = starve;
    gs_jobq_init(&s->bysize);
    gs_jobq_init(&s->byarrival);
    *state = s;
    return 0;
}

static void sjf_destroy(void *st)
{
    sjf *s = st;
    if (!s) return;
    gs_jobq_release(&s->bysize);
    gs_jobq_release(&s->byarrival);
    free(s);
}

/* Insert slot into q before the first member for which 'after' says it comes later. */
static int insert_sorted(sjf *s, gs_jobq *q, gs_job *j, int by_size)
{
    for (int32_t x = gs_jobq_first(q); x >= 0; x = gs_jobq_next(q, x)) {
        const gs_job *o = gs_policy_job(s->e, (size_t)x);
        int later =
            by_size ? o->gpus > j->gpus || (o->gpus == j->gpus && x > j->slot) : x > j->slot;
        if (later) return gs_jobq_insert_before(q, x, j->slot);
    }
    return gs_jobq_push_back(q, j->slot);
}

/* A job is PENDING: first arrival, or back after a node failure (same place by slot). */
static int sjf_enqueue(void *st, gs_job *j)
{
    sjf *s = st;
    int rc = insert_sorted(s, &s->bysize, j, 1);
    if (!rc) rc = insert_sorted(s, &s->byarrival, j, 0);
    if (rc) gs_jobq_remove(&s->bysize, j->slot); /* out of memory: in neither queue */
    return rc;
}

static void forget(sjf *s, int32_t slot)
{
    gs_jobq_remove(&s->bysize, slot);
    gs_jobq_remove(&s->byarrival, slot);
}

/* A running job adopted (daemon restart): no state is kept for running jobs. */
static int sjf_adopt(void *st, gs_job *j)
{
    (void)st, (void)j;
    return 0;
}

static int sjf_finish(void *st, gs_job *j)
{
    forget(st, j->slot); /* a pending job cancelled; nothing for a running one */
    return 0;
}

/* Start j if it fits: 1 started, 0 not, or GS_ENOMEM. */
static int try_start(sjf *s, gs_job *j)
{
    int rc = gs_engine_try_start(s->e, j, GS_LOCALITY_STRICT);
    if (rc == GS_ENOMEM) return rc;
    if (rc == 0) {
        forget(s, j->slot);
        return 1;
    }
    return 0;
}

static int sjf_schedule(void *st)
{
    sjf *s = st;
    gs_cluster *c = gs_engine_cluster(s->e);
    gs_time now = gs_engine_now(s->e);
    /* 1) jobs that waited starve_after or more, oldest first; one that does not fit
     *    blocks everything else */
    if (s->starve_after > 0) {
        for (int32_t x = gs_jobq_first(&s->byarrival); x >= 0;) {
            int32_t next = gs_jobq_next(&s->byarrival, x);
            gs_job *j = gs_policy_job(s->e, (size_t)x);
            if (now - j->submit < s->starve_after) break; /* the rest waited less */
            int rc = try_start(s, j);
            if (rc < 0) return rc;
            if (rc == 0) {
                gs_engine_set_reason(s->e, j, "Resources");
                return 0;
            }
            x = next;
        }
    }
    /* 2) smallest first; every job that fits starts (backfill) */
    for (int32_t x = gs_jobq_first(&s->bysize); x >= 0 && gs_cluster_free(c) > 0;) {
        int32_t next = gs_jobq_next(&s->bysize, x);
        gs_job *j = gs_policy_job(s->e, (size_t)x);
        int rc = try_start(s, j);
        if (rc < 0) return rc;
        if (rc == 0) gs_engine_set_reason(s->e, j, "Resources");
        x = next;
    }
    return 0;
}

/* Verify the invariants (gs_engine_check; the simulator's tests call it). */
static int sjf_check(void *st, gs_diag *d)
{
    sjf *s = st;
    if (gs_jobq_len(&s->bysize) != gs_jobq_len(&s->byarrival))
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "sjf-backfill: queues differ in length");
    int prev_gpus = 0;
    for (int32_t x = gs_jobq_first(&s->bysize); x >= 0; x = gs_jobq_next(&s->bysize, x)) {
        const gs_job *j = gs_policy_job(s->e, (size_t)x);
        if (j->state != GS_JOB_PENDING || !gs_jobq_contains(&s->byarrival, x))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "sjf-backfill: job %lld misqueued",
                               (long long)j->id);
        if (j->gpus < prev_gpus)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "sjf-backfill: not smallest first");
        prev_gpus = j->gpus;
    }
    return 0;
}

/* The queue as the daemon shows it (POS, why pending): one queue, smallest first. */
static int sjf_queue_key(void *st, const gs_job *j, gs_queue_key *k)
{
    (void)st;
    k->queue = GS_QUEUE_GLOBAL;
    k->key = j->gpus;
    return 0;
}

static const gs_policy_ops sjf_backfill_ops = {
    .name = "sjf-backfill",
    .summary = "smallest job (fewest GPUs) first with backfill; starve_after=DURATION ages "
               "jobs (example plugin)",
    .flags = 0,
    .create = sjf_create,
    .destroy = sjf_destroy,
    .on_arrival = sjf_enqueue,
    .on_adopt = sjf_adopt,
    .on_requeue = sjf_enqueue,
    .on_finish = sjf_finish,
    .on_withdraw = sjf_finish, /* a held job leaves the queue as a cancelled one */
    .schedule = sjf_schedule,
    .check = sjf_check,
    .queue_key = sjf_queue_key,
};

/* The one symbol gsched looks for (gsched/policy.h, "Plugins"). */
const gs_policy_plugin *gsched_policy_plugin(void)
{
    static const gs_policy_plugin plugin = {GS_POLICY_ABI, sizeof(gs_policy_ops), sizeof(gs_job),
                                            &sjf_backfill_ops};
    return &plugin;
}
