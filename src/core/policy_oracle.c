/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_oracle.c - policies that read the true job durations (oracles), the
 * bounds any information-agnostic policy is measured against:
 *
 *   srtf  shortest remaining time first (remaining work at ideal speed on
 *         the best GPU type of the cluster for it: over
 *         gs_engine_job_best_type_rate); preemptive, as Tiresias'
 *         "shortest"
 *   srsf  shortest remaining service first (GPUs x remaining time);
 *         preemptive, as Tiresias' "shortest-gpu"
 *   sjf   shortest job first by total duration (on its best type);
 *         non-preemptive; every
 *         waiting job that fits starts, shortest first (no head-of-line
 *         blocking)
 *
 * Ties go to the earlier submitted job (lower slot).  Priorities are
 * re-evaluated at every instant with a pending job: running jobs' remaining
 * times shrink, so they can only overtake waiting jobs, never be overtaken
 * between events.
 *
 * A pass costs the running jobs and the waiting jobs it admits, not the
 * queue: a waiting job's key cannot change while it waits, so waiting jobs
 * sit in a kset (gsched/plan.h) keyed once, and the walk skips those that need
 * more GPUs than are left.  Running jobs are re-keyed at every contended pass
 * and kept in the order of the last one (nearly sorted for the next).
 *
 * Queue view (daemon POS, "why pending"): one queue by submission, which the
 * policy reorders at every pass; the text says by what.  Rank (dry run): the
 * key a pass orders by, now.
 *
 * Invariants: 'ks' holds exactly the tracked PENDING jobs, keyed when they
 * began waiting, in one set (srtf, srsf) or one per placement shape (sjf);
 * 'run' (srtf, srsf) exactly the tracked RUNNING ones; 'fks' (sjf) the
 * PENDING ones whose reason has not been set to RESOURCES since they began
 * waiting.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"
#include "gsched/plan.h"

enum okind { O_SRTF, O_SRSF, O_SJF };

static const char RESOURCES[] = "Resources";

/* sjf: waiting jobs of one placement shape (what the engine's failure cache
 * compares); within a pass, once one fails to start the others would too */
typedef struct shape {
    gs_place_req r;
    int32_t root; /* its waiting jobs in the kset */
    int32_t head; /* during a pass: its next job */
    int failed;   /* during a pass: one of its jobs did not fit */
} shape;

typedef struct oracle {
    gs_engine *e;
    enum okind k;
    gs_kset ks;   /* pending jobs by key */
    int32_t pend; /* its root (srtf, srsf) */
    shape *sh;    /* sjf: one set per shape instead */
    size_t nsh, capsh;
    int32_t *shof; /* sjf: shape of each waiting job, by slot */
    size_t capshof;
    gs_kset fks;   /* sjf: pending jobs whose reason is not yet RESOURCES */
    int32_t fresh; /* its root */
    gs_jobq run;   /* srtf/srsf: running jobs, by key at the last pass */
    gs_kent *v;    /* scratch: running jobs with their keys */
    size_t capv;
    gs_plan plan;
    int dirty;
} oracle;

static int o_create(gs_engine *e, void **st, enum okind k)
{
    oracle *o = calloc(1, sizeof *o);
    if (!o) return GS_ENOMEM;
    o->e = e;
    o->k = k;
    gs_kset_init(&o->ks);
    gs_kset_init(&o->fks);
    o->pend = o->fresh = -1;
    gs_jobq_init(&o->run);
    gs_plan_init(&o->plan);
    *st = o;
    return 0;
}
static int srtf_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    return o_create(e, st, O_SRTF);
}
static int srsf_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    return o_create(e, st, O_SRSF);
}
static int sjf_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    return o_create(e, st, O_SJF);
}

static void o_destroy(void *st)
{
    oracle *o = st;
    if (!o) return;
    gs_kset_release(&o->ks);
    gs_kset_release(&o->fks);
    gs_jobq_release(&o->run);
    gs_plan_release(&o->plan);
    free(o->sh);
    free(o->shof);
    free(o->v);
    free(o);
}

/* The order: key ascending, then slot.  Remaining work does not change while a
 * job waits, so a waiting job's key is computed once, when it starts waiting. */
static gs_kkey key_of(const oracle *o, const gs_job *j, gs_time now)
{
    double key;
    /* time, not work: at its best type rate on this cluster (not where it runs now, which
     * would make a job placed on a slow type swap places with the waiting ones, and back) */
    double r = gs_engine_job_best_type_rate(o->e, j);
    if (o->k == O_SJF)
        key = (double)j->work / r;
    else {
        key = (double)gs_job_remaining(j, now) / r;
        if (o->k == O_SRSF) key *= j->gpus;
    }
    return (gs_kkey){key, 0, j->slot};
}

static int same_shape(const gs_place_req *a, const gs_place_req *b)
{
    return a->ntasks == b->ntasks && a->gpus_per_task == b->gpus_per_task &&
           a->gpu_type == b->gpu_type && a->cpus_per_task == b->cpus_per_task &&
           a->mem_mb_per_task == b->mem_mb_per_task && a->scope == b->scope;
}

/* The root of j's waiting set: the shared one, or its shape's (sjf; -1 if out of memory). */
static int32_t *root_of(oracle *o, const gs_job *j, int add)
{
    if (o->k != O_SJF) return &o->pend;
    int32_t s = j->slot;
    if (!add) return (size_t)s < o->capshof && o->shof[s] >= 0 ? &o->sh[o->shof[s]].root : NULL;
    if ((size_t)s >= o->capshof) {
        size_t nc = o->capshof ? o->capshof : 1024;
        while (nc <= (size_t)s) nc *= 2;
        int32_t *n = realloc(o->shof, nc * sizeof *n);
        if (!n) return NULL;
        for (size_t i = o->capshof; i < nc; i++) n[i] = -1;
        o->shof = n;
        o->capshof = nc;
    }
    gs_place_req r;
    gs_engine_place_req(o->e, j, GS_LOCALITY_STRICT, &r);
    size_t i = 0;
    while (i < o->nsh && !same_shape(&o->sh[i].r, &r)) i++;
    if (i == o->nsh) {
        if (o->nsh == o->capsh) {
            size_t nc = o->capsh ? o->capsh * 2 : 16;
            shape *n = realloc(o->sh, nc * sizeof *n);
            if (!n) return NULL;
            o->sh = n;
            o->capsh = nc;
        }
        o->sh[o->nsh++] = (shape){r, -1, -1, 0};
    }
    o->shof[s] = (int32_t)i;
    return &o->sh[i].root;
}

static int track(oracle *o, gs_job *j)
{
    if (j->state == GS_JOB_PENDING) {
        gs_jobq_remove(&o->run, j->slot);
        if (gs_kset_member(&o->ks, j->slot)) return 0;
        gs_kkey k = key_of(o, j, gs_engine_now(o->e));
        int32_t *root = root_of(o, j, 1);
        if (!root) return GS_ENOMEM;
        int rc = gs_kset_insert(&o->ks, root, k, j->gpus);
        if (!rc && o->k == O_SJF) rc = gs_kset_insert(&o->fks, &o->fresh, k, j->gpus);
        return rc;
    } else if (j->state == GS_JOB_RUNNING && o->k != O_SJF) {
        if (!gs_jobq_contains(&o->run, j->slot)) return gs_jobq_push_back(&o->run, j->slot);
    }
    return 0;
}

static void untrack(oracle *o, gs_job *j)
{
    int32_t *root = root_of(o, j, 0);
    if (root) gs_kset_remove(&o->ks, root, j->slot);
    gs_kset_remove(&o->fks, &o->fresh, j->slot);
    gs_jobq_remove(&o->run, j->slot);
}

static int o_arrival(void *st, gs_job *j)
{
    oracle *o = st;
    o->dirty = 1;
    return track(o, j);
}

static int o_requeue(void *st, gs_job *j)
{
    oracle *o = st;
    gs_jobq_remove(&o->run, j->slot);
    o->dirty = 1;
    return track(o, j);
}

static int o_preemptible(void *st, gs_job *j)
{
    (void)j;
    ((oracle *)st)->dirty = 1;
    return 0;
}

static int o_node(void *st, int node, int down)
{
    (void)node, (void)down;
    ((oracle *)st)->dirty = 1;
    return 0;
}

static int o_finish(void *st, gs_job *j)
{
    oracle *o = st;
    untrack(o, j);
    o->dirty = 1;
    return 0;
}

/*
 * sjf: every waiting job that fits starts, shortest first, while GPUs are
 * free.  The walk merges the shapes' sets and never looks at a job that
 * cannot start: one needing more GPUs than are free, or one of a shape that
 * already failed in this pass (only starts happen during the pass, so the
 * engine's failure cache would refuse it as well).  The jobs passed over wait
 * for "Resources": marked from the set of jobs not marked yet, up to where
 * the walk stopped.  A pass costs the jobs it starts and the shapes.
 */
static int sjf_pass(oracle *o)
{
    gs_cluster *c = gs_engine_cluster(o->e);
    long nfree = gs_cluster_free(c);
    if (nfree <= 0) return 0; /* nothing is looked at */
    for (size_t i = 0; i < o->nsh; i++) {
        o->sh[i].head = gs_kset_next_fit(&o->ks, o->sh[i].root, NULL, LONG_MAX);
        o->sh[i].failed = 0;
    }
    gs_kkey cur;
    int all = 1;
    for (;;) {
        shape *best = NULL;
        for (size_t i = 0; i < o->nsh; i++) {
            shape *x = &o->sh[i];
            if (x->head < 0 || x->failed || o->ks.gpus[x->head] > nfree) continue;
            if (!best || gs_kkey_before(&o->ks.key[x->head], &o->ks.key[best->head])) best = x;
        }
        if (!best) break;
        int32_t w = best->head;
        cur = o->ks.key[w]; /* the walk goes on from this key; w may leave the set */
        best->head = gs_kset_next_fit(&o->ks, best->root, &cur, LONG_MAX);
        gs_job *j = gs_policy_job(o->e, (size_t)w);
        if (j->state == GS_JOB_PENDING) {
            int rc = gs_engine_try_start(o->e, j, GS_LOCALITY_STRICT);
            if (rc == GS_ENOMEM) return rc;
            if (rc == 0)
                untrack(o, j);
            else if (rc == GS_ENOFIT)
                best->failed = 1;
        }
        nfree = gs_cluster_free(c);
        if (nfree <= 0) {
            all = 0;
            break;
        }
    }
    /* every waiting job up to cur (all of them if the walk did not stop) was passed over */
    for (int32_t f; (f = gs_kset_next_fit(&o->fks, o->fresh, NULL, LONG_MAX)) >= 0;) {
        if (!all && gs_kkey_before(&cur, &o->fks.key[f])) break;
        gs_job *j = gs_policy_job(o->e, (size_t)f);
        if (j->state == GS_JOB_PENDING) gs_engine_set_reason(o->e, j, RESOURCES);
        gs_kset_remove(&o->fks, &o->fresh, f);
    }
    return 0;
}

static int o_schedule(void *st)
{
    oracle *o = st;
    if (!o->dirty) return 0;
    o->dirty = 0;
    if (o->k == O_SJF) return sjf_pass(o);
    gs_time now = gs_engine_now(o->e);
    size_t n = 0;
    /* when every waiting job fits the free GPUs by count, running jobs cannot
     * lose their place, so only waiting jobs need ordering */
    if (gs_engine_pending_gpus(o->e) > gs_cluster_free(gs_engine_cluster(o->e))) {
        size_t need = gs_jobq_len(&o->run);
        if (need > o->capv) {
            size_t nc = o->capv ? o->capv : 256;
            while (nc < need) nc *= 2;
            gs_kent *nv = realloc(o->v, nc * sizeof *nv);
            if (!nv) return GS_ENOMEM;
            o->v = nv;
            o->capv = nc;
        }
        for (int32_t s = gs_jobq_first(&o->run); s >= 0; s = gs_jobq_next(&o->run, s)) {
            gs_job *j = gs_policy_job(o->e, (size_t)s);
            o->v[n++] = (gs_kent){key_of(o, j, now), j};
        }
        /* keep the list in this order: the next pass finds it nearly sorted */
        if (gs_kent_sort(o->v, n)) {
            int rc = gs_kent_relink(&o->run, o->v, n);
            if (rc) return rc;
        }
    }
    gs_plan_begin(&o->plan, o->e);
    gs_plan_visit_merged(&o->plan, o->e, o->v, n, &o->ks, o->pend);
    int rc = gs_plan_apply(&o->plan, o->e, GS_LOCALITY_STRICT, "longer remaining time (oracle)");
    if (rc < 0) return rc;
    /* started jobs leave the waiting set; preempted ones came back through on_requeue */
    for (size_t i = 0; i < o->plan.nstart; i++) {
        gs_job *j = o->plan.start[i];
        if (j->state == GS_JOB_PENDING) continue;
        gs_kset_remove(&o->ks, &o->pend, j->slot);
        if ((rc = track(o, j)) != 0) return rc;
    }
    for (size_t i = 0; i < o->plan.nvict; i++)
        if (o->plan.vict[i]->state != GS_JOB_RUNNING)
            gs_jobq_remove(&o->run, o->plan.vict[i]->slot);
    return 0;
}

/* ---- queue view (daemon): one queue by submission, which a pass reorders ---- */

static int o_queue_describe(void *st, int queue, char *buf, size_t cap)
{
    const oracle *o = st;
    (void)queue;
    snprintf(buf, cap, "in the queue (by submission; %s reorders it by %s)",
             gs_engine_policy_name(o->e),
             o->k == O_SRTF   ? "expected remaining time"
             : o->k == O_SRSF ? "expected remaining service"
                              : "expected run time");
    return 0;
}

/* The dry run: a pass's order (key_of now); one queue, ties by id as by slot. */
static int o_rank(void *st, const gs_job *j, gs_queue_key *k)
{
    const oracle *o = st;
    k->queue = GS_QUEUE_GLOBAL;
    k->key = gs_kkey_k1_rank(key_of(o, j, gs_engine_now(o->e)).k1);
    return 0;
}

#define ORACLE_OPS(var, nm, createfn, fl, sum) \
    static const gs_policy_ops var = {         \
        .name = nm,                            \
        .summary = sum,                        \
        .flags = GS_POLICY_ORACLE | (fl),      \
        .create = createfn,                    \
        .destroy = o_destroy,                  \
        .on_arrival = o_arrival,               \
        .on_adopt = o_arrival,                 \
        .on_requeue = o_requeue,               \
        .on_finish = o_finish,                 \
        .on_withdraw = o_finish,               \
        .on_node = o_node,                     \
        .on_preemptible = o_preemptible,       \
        .schedule = o_schedule,                \
        .queue_describe = o_queue_describe,    \
        .rank = o_rank,                        \
    }

ORACLE_OPS(gs_policy_srtf, "srtf", srtf_create, GS_POLICY_PREEMPTIVE,
           "shortest remaining time first; preemptive");
ORACLE_OPS(gs_policy_srsf, "srsf", srsf_create, GS_POLICY_PREEMPTIVE,
           "shortest remaining service (GPUs x remaining time) first; preemptive");
ORACLE_OPS(gs_policy_sjf, "sjf", sjf_create, 0,
           "shortest job first by total duration; non-preemptive, no head-of-line blocking");

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_oracle[] = {
    {40, &gs_policy_srtf}, {41, &gs_policy_srsf}, {42, &gs_policy_sjf}, {0, NULL}};
