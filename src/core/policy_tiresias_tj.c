/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_tiresias_tj.c - "tiresias-tj": the Tiresias baseline of the Pollux
 * paper (OSDI'21, Figure 8: Tiresias + TunedJobs), as its artifact's
 * simulator runs it (simulator/tiresias.py; read, not copied).  Time-stepped:
 * it decides only at multiples of 'interval' (60 s), which is what `gsched
 * sim` runs for `tiresias` on a Pollux workload (parity mode,
 * docs/elastic.md).
 *
 * At each tick:
 *   1. a running job of the first queue whose executed time x requested GPUs
 *      reached the threshold (16 GPU-hours) moves to the tail of the second
 *      queue (jobs looked at in slot order, i.e. arrival order);
 *   2. walking queue 0 then queue 1, each in order (arrival order, demotion
 *      order), a job runs when its requested GPU count still fits the GPUs
 *      left by count (no head-of-line blocking), else it waits;
 *   3. running jobs that wait now are preempted (they keep their progress:
 *      they checkpoint), then every job admitted that does not run yet starts
 *      on the most-free nodes (gs_mostfree_place: the node with the most free
 *      GPUs first, lowest index on ties).  A running job keeps its GPUs.
 * Jobs always run at the size they asked for (TunedJobs: the trace's
 * num_replicas and batch size, which the goodput model keeps fixed,
 * GS_BATCH_FIXED).  Executed time is the engine's (time holding GPUs, the
 * restart cost included), which is what the artifact counts between ticks.
 *
 * elastic_mode=event (outside parity): the same walk also runs at every pass
 * that has waiting jobs (arrivals, completions), the ticks still demoting.
 *
 * Parameters: interval=DURATION (default 60s), elastic_mode=parity|event
 * (default event; `gsched sim` sets parity for Pollux workloads),
 * tj_threshold=DURATION of GPU time (default 16h).
 *
 * Speed (the same decisions, byte for byte, at any scale): when the active
 * jobs ask for no more GPUs than are healthy ('demand'), the walk admits
 * every one of them and preempts none, so it only has to start the pending
 * jobs, in queue order - they are kept in 'pend' (a superset: arrivals and
 * requeued jobs; checked against their state) and ordered by their queue and
 * position ('seq', from a counter at every push_back, so it is the queue's
 * order); only when demand exceeds the healthy GPUs does the full walk run,
 * and it runs on the queues kept again as fitqs (fitq.h: sizes and flags by
 * position): every job before the first one that does not fit is admitted,
 * after it only the few that fit what is left (found in O(log n) each); it
 * visits only the jobs that may run past that boundary or wait before it
 * (the flags, a superset of the states, cleared when stale) and gives the
 * waiting jobs not admitted their "Priority" reason only when it may have
 * changed ('dirty': arrivals, requeues and failed starts since).
 * Demotion looks only at the jobs of a heap of (instant their executed time
 * reaches the threshold if they keep running, slot), pushed when a job of
 * queue 0 starts: an instant is never later than the real crossing (a stop
 * only delays it), every popped job is checked with the exact condition and
 * pushed again when it has not crossed, and the jobs demoted at one tick are
 * taken in slot order, as the scan over every slot took them.
 *
 * Invariants: every arrived active job is in exactly one of the two queues
 * (nactive of them), and 'demand' is the sum of their sizes; every pending
 * active job is in 'pend'; fq[q] holds the jobs of q[q] in the same order, with
 * their sizes, GS_FITQ_RUN set on every running one and GS_FITQ_PEND on every
 * pending one; a pending active job outside 'dirty' has its queue's "Priority"
 * reason; every running job of queue 0 has a heap entry no
 * later than the instant its executed time reaches the threshold;
 * at most one tick timer is armed (armed_at), at the next multiple of
 * interval, while an active job exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/goodput.h"
#include "gsched/jobq.h"
#include "gsched/policy.h"
#include "gsched/placement.h"

#include "fitq.h"

typedef struct ttj {
    gs_engine *e;
    gs_time interval;
    int parity;
    double threshold; /* GPU-us */
    gs_jobq q[2];
    gs_time armed_at; /* GS_TIME_NONE: no tick timer armed */
    int tick_due;
    size_t nactive;
    int64_t demand; /* GPUs the active jobs ask for */
    uint8_t *want;  /* by slot: admitted at this tick */
    uint64_t *seq;  /* by slot: position in its queue (a push_back counter) */
    uint64_t nseq;
    int *gpus; /* placement scratch */
    size_t cap;
    gs_jobq pend;  /* active jobs that may be pending (a superset) */
    gs_fitq fq[2]; /* q[0], q[1] again, with sizes: the full walk (fitq.h) */
    gs_jobq dirty; /* pending jobs whose reason may not be their queue's "Priority" text */
    int32_t *xs;   /* full walk: the jobs admitted past the first one that did not fit */
    size_t nxs, capxs;
    int32_t *scratch;
    size_t capscratch;
    /* demotion candidates: a min-heap of (instant, slot) */
    struct ttj_due {
        gs_time at;
        int32_t slot;
    } * due;
    size_t ndue, capdue;
} ttj;

static int ttj_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    gs_time iv, th;
    int rc = gs_params_get_duration(p, "interval", 60 * GS_SEC, &iv, d);
    if (!rc) rc = gs_params_get_duration(p, "tj_threshold", 16 * 3600 * GS_SEC, &th, d);
    if (rc) return rc;
    if (iv <= 0) return gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'interval' must be positive");
    const char *m = gs_params_get(p, "elastic_mode");
    if (m && strcmp(m, "parity") && strcmp(m, "event"))
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "parameter 'elastic_mode': expected parity or event, got '%s'", m);
    ttj *t = calloc(1, sizeof *t);
    int ng = (int)gs_cluster_ngpus(gs_engine_cluster(e));
    if (!t || !(t->gpus = malloc((size_t)(ng > 0 ? ng : 1) * sizeof *t->gpus))) {
        free(t);
        return GS_ENOMEM;
    }
    t->e = e;
    t->interval = iv;
    t->parity = m && !strcmp(m, "parity");
    t->threshold = (double)th;
    t->armed_at = GS_TIME_NONE;
    gs_jobq_init(&t->q[0]);
    gs_jobq_init(&t->q[1]);
    gs_jobq_init(&t->pend);
    gs_jobq_init(&t->dirty);
    gs_fitq_init(&t->fq[0]);
    gs_fitq_init(&t->fq[1]);
    gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = t;
    return 0;
}

static void ttj_destroy(void *st)
{
    ttj *t = st;
    if (!t) return;
    gs_jobq_release(&t->q[0]);
    gs_jobq_release(&t->q[1]);
    gs_jobq_release(&t->pend);
    gs_jobq_release(&t->dirty);
    gs_fitq_release(&t->fq[0]);
    gs_fitq_release(&t->fq[1]);
    free(t->xs);
    free(t->want);
    free(t->seq);
    free(t->scratch);
    free(t->due);
    free(t->gpus);
    free(t);
}

/* Arm the tick timer at the first multiple of interval after (or at) 'from', > 0. */
static int arm(ttj *t, gs_time from)
{
    gs_time at = (from + t->interval - 1) / t->interval * t->interval;
    if (at < t->interval) at = t->interval;
    if (t->armed_at != GS_TIME_NONE && t->armed_at <= at) return 0;
    int rc = gs_engine_set_timer(t->e, at, (uint64_t)at);
    if (!rc) t->armed_at = at;
    return rc;
}

/* The size tiresias-tj runs a job at: what it asked for at submission. */
static int size_of(const gs_job *j)
{
    return j->req_gpus;
}

/* Append j to queue q (and its fitq, flagged by its state), noting its position. */
static int enqueue(ttj *t, int q, const gs_job *j)
{
    int rc = gs_jobq_push_back(&t->q[q], j->slot);
    if (rc) return rc;
    unsigned fl = j->state == GS_JOB_RUNNING   ? 1u << GS_FITQ_RUN
                  : j->state == GS_JOB_PENDING ? 1u << GS_FITQ_PEND
                                               : 0;
    if ((rc = gs_fitq_push(&t->fq[q], j->slot, size_of(j), fl))) {
        gs_jobq_remove(&t->q[q], j->slot);
        return rc;
    }
    t->seq[j->slot] = ++t->nseq;
    return 0;
}

/* Note that j may be pending (no-op if already noted), its reason to be checked. */
static int note_pending(ttj *t, const gs_job *j)
{
    gs_fitq_flag(&t->fq[0], j->slot, GS_FITQ_PEND, 1);
    gs_fitq_flag(&t->fq[1], j->slot, GS_FITQ_PEND, 1);
    int rc = gs_jobq_push_back(&t->pend, j->slot);
    if (rc && rc != GS_EEXIST) return rc;
    rc = gs_jobq_push_back(&t->dirty, j->slot);
    return rc == GS_EEXIST ? 0 : rc;
}

static int due_less(const struct ttj_due *a, const struct ttj_due *b)
{
    return a->at < b->at || (a->at == b->at && a->slot < b->slot);
}

static int due_push(ttj *t, gs_time at, int32_t slot)
{
    if (t->ndue == t->capdue) {
        size_t nc = t->capdue ? t->capdue * 2 : 256;
        struct ttj_due *n = realloc(t->due, nc * sizeof *n);
        if (!n) return GS_ENOMEM;
        t->due = n;
        t->capdue = nc;
    }
    size_t i = t->ndue++;
    struct ttj_due x = {at, slot};
    while (i > 0 && due_less(&x, &t->due[(i - 1) / 2])) {
        t->due[i] = t->due[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    t->due[i] = x;
    return 0;
}

static struct ttj_due due_pop(ttj *t)
{
    struct ttj_due top = t->due[0], x = t->due[--t->ndue];
    size_t i = 0, n = t->ndue;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && due_less(&t->due[c + 1], &t->due[c])) c++;
        if (!due_less(&t->due[c], &x)) break;
        t->due[i] = t->due[c];
        i = c;
    }
    if (n) t->due[i] = x;
    return top;
}

/* Executed time at which a job of this size reaches the threshold: the least E with
 * (double)E * size >= threshold (exact: both sides are integers below 2^53). */
static gs_time need_of(const ttj *t, const gs_job *j)
{
    int64_t th = (int64_t)t->threshold, n = size_of(j);
    return n > 0 ? (th + n - 1) / n : th;
}

/* A running job of queue 0: the instant it reaches the threshold if it keeps running. */
static int due_job(ttj *t, const gs_job *j, gs_time now)
{
    gs_time have = gs_job_executed(j, now), need = need_of(t, j);
    gs_time at = have >= need ? now : now + (need - have);
    if (at < now) at = now; /* overflow */
    return due_push(t, at, j->slot);
}

static int ttj_arrival(void *st, gs_job *j)
{
    ttj *t = st;
    if ((size_t)j->slot >= t->cap) {
        size_t nc = t->cap ? t->cap : 256;
        while (nc <= (size_t)j->slot) nc *= 2;
        uint8_t *w = realloc(t->want, nc);
        if (!w) return GS_ENOMEM;
        memset(w + t->cap, 0, nc - t->cap);
        t->want = w;
        uint64_t *q = realloc(t->seq, nc * sizeof *q);
        if (!q) return GS_ENOMEM;
        memset(q + t->cap, 0, (nc - t->cap) * sizeof *q);
        t->seq = q;
        t->cap = nc;
    }
    gs_goodput *g = gs_goodput_of(t->e);
    if (g && j->app && j->batch_size > 0) {
        int rc = gs_goodput_set_batch_mode(g, j, GS_BATCH_FIXED, j->batch_size);
        if (rc) return rc;
    }
    int rc = enqueue(t, 0, j);
    if (rc) return rc;
    t->nactive++;
    t->demand += size_of(j);
    rc = j->state == GS_JOB_RUNNING ? due_job(t, j, gs_engine_now(t->e)) : note_pending(t, j);
    if (rc) return rc;
    gs_time now = gs_engine_now(t->e);
    /* a job arriving exactly at a tick is seen by that tick (the artifact's 'time <= now') */
    if (now > 0 && now % t->interval == 0) {
        t->tick_due = 1;
        return arm(t, now + 1);
    }
    return arm(t, now);
}

static int ttj_requeue(void *st, gs_job *j)
{
    return note_pending(st, j); /* it keeps its place in its queue */
}

static int ttj_finish(void *st, gs_job *j)
{
    ttj *t = st;
    if (gs_jobq_remove(&t->q[0], j->slot) || gs_jobq_remove(&t->q[1], j->slot)) {
        t->nactive--;
        t->demand -= size_of(j);
    }
    gs_fitq_remove(&t->fq[0], j->slot);
    gs_fitq_remove(&t->fq[1], j->slot);
    gs_jobq_remove(&t->pend, j->slot);
    gs_jobq_remove(&t->dirty, j->slot);
    return 0;
}

static int ttj_timer(void *st, uint64_t tag)
{
    ttj *t = st;
    if (t->armed_at != GS_TIME_NONE && (uint64_t)t->armed_at == tag) t->armed_at = GS_TIME_NONE;
    t->tick_due = 1;
    gs_engine_request_pass(t->e);
    return 0;
}

static int by_slot(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int grow_scratch(ttj *t, size_t n)
{
    if (n <= t->capscratch) return 0;
    size_t nc = t->capscratch ? t->capscratch : 256;
    while (nc < n) nc *= 2;
    int32_t *v = realloc(t->scratch, nc * sizeof *v);
    if (!v) return GS_ENOMEM;
    t->scratch = v;
    t->capscratch = nc;
    return 0;
}

/* Running jobs of queue 0 whose executed time x size reached the threshold move to the tail of
 * queue 1, in slot order (the heap names every candidate: see the file's comment). */
static int demote(ttj *t, gs_time now)
{
    size_t n = 0;
    while (t->ndue && t->due[0].at <= now) {
        struct ttj_due d = due_pop(t);
        const gs_job *j = gs_engine_job(t->e, (size_t)d.slot);
        if (j->state != GS_JOB_RUNNING || !gs_jobq_contains(&t->q[0], j->slot)) continue;
        if ((double)gs_job_executed(j, now) * size_of(j) < t->threshold) {
            /* stopped since: not there yet */
            int rc = due_job(t, j, now);
            if (rc) return rc;
            continue;
        }
        int rc = grow_scratch(t, n + 1);
        if (rc) return rc;
        t->scratch[n++] = d.slot;
    }
    if (n) qsort(t->scratch, n, sizeof *t->scratch, by_slot);
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(t->e, (size_t)t->scratch[i]);
        if (!gs_jobq_remove(&t->q[0], j->slot)) continue; /* listed twice */
        gs_fitq_remove(&t->fq[0], j->slot);
        int rc = enqueue(t, 1, j);
        if (rc) { /* out of memory: the engine fails, the job is in no queue */
            t->nactive--;
            t->demand -= size_of(j);
            return rc;
        }
        gs_engine_note(t->e, j, "tiresias-tj: demoted to queue 1 (16 GPU-hours attained)");
    }
    return 0;
}

/* Start pending job j (wanted) on the most-free nodes; "Resources" if it does not fit. */
static int start_one(ttj *t, gs_job *j, int q)
{
    gs_engine *e = t->e;
    int n = size_of(j);
    int rc = gs_mostfree_place(gs_engine_cluster(e), n, j->gpus_per_task, j->gpu_type, t->gpus);
    if (!rc) rc = gs_engine_start(e, j, t->gpus, n);
    if (rc == GS_ENOMEM || gs_engine_error(e)) return rc ? rc : gs_engine_error(e);
    if (rc) {
        gs_engine_set_reason(e, j, "Resources");
        rc = gs_jobq_push_back(&t->dirty, j->slot);
        return rc == GS_EEXIST ? 0 : rc;
    }
    gs_jobq_remove(&t->pend, j->slot);
    gs_jobq_remove(&t->dirty, j->slot);
    gs_fitq_flag(&t->fq[q], j->slot, GS_FITQ_RUN, 1);
    gs_fitq_flag(&t->fq[q], j->slot, GS_FITQ_PEND, 0);
    return q == 0 ? due_job(t, j, gs_engine_now(e)) : 0;
}

static int by_queue_pos(const void *a, const void *b, void *ud)
{
    const ttj *t = ud;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int qx = gs_jobq_contains(&t->q[1], x), qy = gs_jobq_contains(&t->q[1], y);
    if (qx != qy) return qx - qy;
    return (t->seq[x] > t->seq[y]) - (t->seq[x] < t->seq[y]);
}

/* The walk when every active job fits the healthy GPUs: all are admitted, none preempted;
 * the pending ones start in queue order. */
static int walk_all_fit(ttj *t)
{
    size_t n = 0;
    int rc = grow_scratch(t, gs_jobq_len(&t->pend));
    if (rc) return rc;
    for (int32_t s = gs_jobq_first(&t->pend), nx; s >= 0; s = nx) {
        nx = gs_jobq_next(&t->pend, s);
        const gs_job *j = gs_engine_job(t->e, (size_t)s);
        if (j->state == GS_JOB_PENDING &&
            (gs_jobq_contains(&t->q[0], s) || gs_jobq_contains(&t->q[1], s)))
            t->scratch[n++] = s;
        else
            gs_jobq_remove(&t->pend, s);
    }
    /* n is small; an insertion sort keeps it free of qsort_r */
    for (size_t i = 1; i < n; i++) {
        int32_t x = t->scratch[i];
        size_t k = i;
        while (k > 0 && by_queue_pos(&t->scratch[k - 1], &x, t) > 0) {
            t->scratch[k] = t->scratch[k - 1];
            k--;
        }
        t->scratch[k] = x;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t s = t->scratch[i];
        if ((rc = start_one(t, gs_policy_job(t->e, (size_t)s), gs_jobq_contains(&t->q[1], s))))
            return rc;
    }
    return 0;
}

/* Whether slot s of queue q is admitted by the full walk that found k (see walk_full). */
static int admitted(const ttj *t, int q, int32_t s, const int64_t *k)
{
    return t->want[s] || k[q] < 0 || t->fq[q].pos[s] < k[q];
}

/*
 * The walk when the active jobs ask for more than the healthy GPUs: queue 0 then queue 1,
 * each in order, a job is admitted when its size still fits what is left; running jobs not
 * admitted stop, pending admitted ones start, and the other pending ones wait ("Priority").
 * Done on the fitqs: in queue q every job before position k[q] (the first one that does not
 * fit, -1: none) is admitted, and after it only the few in xs (they fit what k[q] left);
 * only the jobs that may run past k[q] or wait before it are visited (the flags), and only
 * the waiting jobs in 'dirty' can need a new reason (any other waiting job got its queue's
 * "Priority" text at an earlier walk and nothing changed it since: an arrival, a requeue or
 * a failed start puts a job in 'dirty').  The same calls, in the same order, as the walk over
 * every active job.
 */
static int walk_full(ttj *t, long left)
{
    gs_engine *e = t->e;
    int64_t k[2];
    size_t nx0 = 0;
    t->nxs = 0;
    for (int q = 0; q < 2; q++) {
        int64_t used;
        k[q] = gs_fitq_first_over(&t->fq[q], left, &used);
        left -= (long)used;
        for (int64_t p = k[q] < 0 ? -1 : k[q] + 1; p >= 0; p++) {
            if ((p = gs_fitq_next_fit(&t->fq[q], p, left)) < 0) break;
            int32_t s = gs_fitq_slot(&t->fq[q], p);
            if (t->nxs == t->capxs) {
                size_t nc = t->capxs ? 2 * t->capxs : 64;
                int32_t *v = realloc(t->xs, nc * sizeof *v);
                if (!v) return GS_ENOMEM;
                t->xs = v;
                t->capxs = nc;
            }
            t->xs[t->nxs++] = s;
            t->want[s] = 1;
            left -= size_of(gs_engine_job(e, (size_t)s));
        }
        if (q == 0) nx0 = t->nxs;
    }
    int rc = 0;
    /* stop the running jobs that wait now: their GPUs are free at once (SIM) */
    for (int q = 0; q < 2 && !rc; q++)
        for (int64_t p = k[q]; p >= 0; p++) {
            if ((p = gs_fitq_next_flag(&t->fq[q], p, GS_FITQ_RUN)) < 0) break;
            int32_t s = gs_fitq_slot(&t->fq[q], p);
            gs_job *j = gs_policy_job(e, (size_t)s);
            if (t->want[s]) continue;
            if (j->state == GS_JOB_RUNNING) {
                rc = gs_engine_preempt(e, j, "tiresias-tj: higher-priority jobs need the GPUs");
                rc = rc == GS_ENOMEM || gs_engine_error(e) ? (rc ? rc : gs_engine_error(e)) : 0;
            }
            if (j->state != GS_JOB_RUNNING) gs_fitq_flag(&t->fq[q], s, GS_FITQ_RUN, 0);
            if (j->state == GS_JOB_PENDING) gs_fitq_flag(&t->fq[q], s, GS_FITQ_PEND, 1);
        }
    /* start the admitted waiting jobs, in queue order */
    for (int q = 0; q < 2 && !rc; q++) {
        for (int64_t p = 0; !rc && (k[q] < 0 || p < k[q]); p++) {
            if ((p = gs_fitq_next_flag(&t->fq[q], p, GS_FITQ_PEND)) < 0 || (k[q] >= 0 && p >= k[q]))
                break;
            int32_t s = gs_fitq_slot(&t->fq[q], p);
            gs_job *j = gs_policy_job(e, (size_t)s);
            if (j->state != GS_JOB_PENDING)
                gs_fitq_flag(&t->fq[q], s, GS_FITQ_PEND, 0);
            else
                rc = start_one(t, j, q);
        }
        for (size_t i = q ? nx0 : 0; i < (q ? t->nxs : nx0) && !rc; i++) {
            gs_job *j = gs_policy_job(e, (size_t)t->xs[i]);
            if (j->state == GS_JOB_PENDING) rc = start_one(t, j, q);
        }
    }
    /* the waiting jobs not admitted: their queue's reason */
    for (int32_t s = gs_jobq_first(&t->dirty), nx; s >= 0 && !rc; s = nx) {
        nx = gs_jobq_next(&t->dirty, s);
        const gs_job *j = gs_engine_job(e, (size_t)s);
        int q = gs_jobq_contains(&t->q[1], s) ? 1 : gs_jobq_contains(&t->q[0], s) ? 0 : -1;
        if (q < 0 || j->state != GS_JOB_PENDING) {
            gs_jobq_remove(&t->dirty, s);
        } else if (!admitted(t, q, s, k)) {
            gs_engine_set_reason(e, j, q ? "Priority (tiresias-tj queue 1)" : "Priority");
            gs_jobq_remove(&t->dirty, s);
        } /* else admitted, its start failed: "Resources", looked at again next time */
    }
    for (size_t i = 0; i < t->nxs; i++) t->want[t->xs[i]] = 0;
    t->nxs = 0;
    return rc;
}

static int walk(ttj *t)
{
    long left = gs_cluster_cell(gs_engine_cluster(t->e), 0)->healthy;
    return t->demand <= left ? walk_all_fit(t) : walk_full(t, left);
}

static int ttj_schedule(void *st)
{
    ttj *t = st;
    gs_time now = gs_engine_now(t->e);
    int tick = t->tick_due;
    t->tick_due = 0;
    int rc = 0;
    if (tick) rc = demote(t, now);
    if (!rc && (tick || !t->parity)) rc = walk(t);
    if (!rc && t->nactive && t->armed_at == GS_TIME_NONE) rc = arm(t, now + 1);
    return rc;
}

static int ttj_check(void *st, gs_diag *d)
{
    ttj *t = st;
    size_t n = gs_engine_njobs(t->e), k = 0;
    for (size_t s = 0; s < n; s++) {
        const gs_job *j = gs_engine_job(t->e, s);
        int in = gs_jobq_contains(&t->q[0], (int32_t)s) + gs_jobq_contains(&t->q[1], (int32_t)s);
        int active = j->arrived && !gs_job_state_final(j->state);
        /* (an active job is missing only from a failed engine: its arrival ran out of memory) */
        if (in > active || (!in && active && !gs_engine_error(t->e)))
            return gs_diag_set(d, GS_EINVAL, 0, 0, "tiresias-tj: %s job %lld is in %d queues",
                               gs_job_state_name(j->state), (long long)j->id, in);
        if (gs_fitq_contains(&t->fq[0], (int32_t)s) != gs_jobq_contains(&t->q[0], (int32_t)s) ||
            gs_fitq_contains(&t->fq[1], (int32_t)s) != gs_jobq_contains(&t->q[1], (int32_t)s))
            return gs_diag_set(d, GS_EINVAL, 0, 0, "tiresias-tj: job %lld: queue and fitq differ",
                               (long long)j->id);
        /* (a failed engine may have skipped a hook: on_requeue after a preemption) */
        if (in && !gs_engine_error(t->e) &&
            ((j->state == GS_JOB_RUNNING &&
              !gs_fitq_flag_of(&t->fq[gs_jobq_contains(&t->q[1], (int32_t)s)], (int32_t)s,
                               GS_FITQ_RUN)) ||
             (j->state == GS_JOB_PENDING &&
              !gs_fitq_flag_of(&t->fq[gs_jobq_contains(&t->q[1], (int32_t)s)], (int32_t)s,
                               GS_FITQ_PEND))))
            return gs_diag_set(d, GS_EINVAL, 0, 0, "tiresias-tj: %s job %lld is not flagged so",
                               gs_job_state_name(j->state), (long long)j->id);
        k += (size_t)in;
    }
    if (gs_fitq_total(&t->fq[0]) + gs_fitq_total(&t->fq[1]) != t->demand)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "tiresias-tj: demand %lld, fitqs hold %lld",
                           (long long)t->demand,
                           (long long)(gs_fitq_total(&t->fq[0]) + gs_fitq_total(&t->fq[1])));
    if (k != t->nactive)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "tiresias-tj: %zu active jobs, counted %zu", k,
                           t->nactive);
    return 0;
}

static const gs_policy_ops gs_policy_tiresias_tj = {
    .name = "tiresias-tj",
    .summary = "Tiresias + TunedJobs as the Pollux artifact runs it: 2 queues (16 GPU-h), "
               "most-free nodes, every interval",
    .flags = GS_POLICY_PREEMPTIVE,
    .create = ttj_create,
    .destroy = ttj_destroy,
    .on_arrival = ttj_arrival,
    .on_adopt = ttj_arrival, /* every active job, running or not, is in a queue */
    .on_requeue = ttj_requeue,
    .on_finish = ttj_finish,
    .on_withdraw = ttj_finish, /* forgets a waiting job, as a cancel */
    .on_timer = ttj_timer,
    .schedule = ttj_schedule,
    .check = ttj_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_tiresias_tj[] = {{80, &gs_policy_tiresias_tj}, {0, NULL}};
