/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_oracle.c - policies that read the true job durations (oracles), the
 * bounds any information-agnostic policy is measured against:
 *
 *   srtf  shortest remaining time first (remaining work at ideal speed);
 *         preemptive, as Tiresias' "shortest"
 *   srsf  shortest remaining service first (GPUs x remaining time);
 *         preemptive, as Tiresias' "shortest-gpu"
 *   sjf   shortest job first by total duration; non-preemptive; every
 *         waiting job that fits starts, shortest first (no head-of-line
 *         blocking)
 *
 * Ties go to the earlier submitted job (lower slot).  Priorities are
 * re-evaluated at every instant with a pending job: running jobs' remaining
 * times shrink, so they can only overtake waiting jobs, never be overtaken
 * between events.
 *
 * Invariants: 'active' holds exactly the arrived, non-final jobs the policy
 * tracks (pending, running, or stopping), in arrival order.
 */
#include <stdlib.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"
#include "internal.h"

enum okind { O_SRTF, O_SRSF, O_SJF };

typedef struct ent {
    double key;
    gs_job *j;
} ent;

typedef struct oracle {
    gs_engine *e;
    enum okind k;
    gs_jobq active;
    ent *v;
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
    gs_jobq_init(&o->active);
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
    gs_jobq_release(&o->active);
    gs_plan_release(&o->plan);
    free(o->v);
    free(o);
}

static void o_arrival(void *st, gs_job *j)
{
    oracle *o = st;
    gs_jobq_push_back(&o->active, j->slot);
    o->dirty = 1;
}

static void o_requeue(void *st, gs_job *j)
{
    (void)j;
    ((oracle *)st)->dirty = 1;
}

static void o_preemptible(void *st, gs_job *j)
{
    (void)j;
    ((oracle *)st)->dirty = 1;
}

static void o_node(void *st, int node, int down)
{
    (void)node, (void)down;
    ((oracle *)st)->dirty = 1;
}

static void o_finish(void *st, gs_job *j)
{
    oracle *o = st;
    gs_jobq_remove(&o->active, j->slot);
    o->dirty = 1;
}

static int ent_cmp(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->j->slot - y->j->slot;
}

static void o_schedule(void *st)
{
    oracle *o = st;
    if (!o->dirty) return;
    o->dirty = 0;
    gs_time now = gs_engine_now(o->e);
    size_t n = 0, need = gs_jobq_len(&o->active);
    if (need > o->capv) {
        size_t nc = o->capv ? o->capv : 256;
        while (nc < need) nc *= 2;
        ent *nv = realloc(o->v, nc * sizeof *nv);
        if (!nv) return;
        o->v = nv;
        o->capv = nc;
    }
    /* fast path: when every waiting job fits the free GPUs by count, running
     * jobs cannot lose their place, so only waiting jobs need ordering */
    int pending_only =
        o->k == O_SJF || gs_engine_pending_gpus(o->e) <= gs_cluster_free(gs_engine_cluster(o->e));
    for (int32_t s = gs_jobq_first(&o->active); s >= 0; s = gs_jobq_next(&o->active, s)) {
        gs_job *j = gs_engine_job(o->e, (size_t)s);
        if (pending_only && j->state != GS_JOB_PENDING) continue;
        double key = (double)gs_job_remaining(j, now);
        if (o->k == O_SRSF) key *= j->gpus;
        if (o->k == O_SJF) key = (double)j->work;
        o->v[n++] = (ent){key, j};
    }
    qsort(o->v, n, sizeof *o->v, ent_cmp);
    if (o->k == O_SJF) {
        gs_cluster *c = gs_engine_cluster(o->e);
        for (size_t i = 0; i < n && gs_cluster_free(c) > 0; i++)
            if (gs_engine_try_start(o->e, o->v[i].j, GS_LOCALITY_STRICT))
                gs_engine_set_reason(o->e, o->v[i].j, "Resources");
        return;
    }
    gs_plan_begin(&o->plan, o->e);
    for (size_t i = 0; i < n; i++) gs_plan_visit(&o->plan, o->v[i].j);
    gs_plan_apply(&o->plan, o->e, GS_LOCALITY_STRICT, "longer remaining time (oracle)");
}

#define ORACLE_OPS(var, nm, createfn, fl, sum) \
    const gs_policy_ops var = {                \
        .name = nm,                            \
        .summary = sum,                        \
        .flags = GS_POLICY_ORACLE | (fl),      \
        .create = createfn,                    \
        .destroy = o_destroy,                  \
        .on_arrival = o_arrival,               \
        .on_adopt = o_arrival,                 \
        .on_requeue = o_requeue,               \
        .on_finish = o_finish,                 \
        .on_node = o_node,                     \
        .on_preemptible = o_preemptible,       \
        .schedule = o_schedule,                \
    }

ORACLE_OPS(gs_policy_srtf, "srtf", srtf_create, GS_POLICY_PREEMPTIVE,
           "shortest remaining time first; preemptive");
ORACLE_OPS(gs_policy_srsf, "srsf", srsf_create, GS_POLICY_PREEMPTIVE,
           "shortest remaining service (GPUs x remaining time) first; preemptive");
ORACLE_OPS(gs_policy_sjf, "sjf", sjf_create, 0,
           "shortest job first by total duration; non-preemptive, no head-of-line blocking");
