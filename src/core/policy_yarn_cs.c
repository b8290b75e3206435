/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_yarn_cs.c - YARN capacity scheduler as run on Philly (algorithms.md
 * section 1): one FIFO queue per virtual cluster (VC); VCs furthest below
 * their GPU quota are served first; inside a VC strict FIFO (the head blocks
 * its VC); placement consolidated, optionally relaxed as a job keeps waiting.
 *
 * Parameters (--set):
 *   quotas=VC:GPUS,...  GPU quota per VC.  Without quotas (and without VCs in
 *                       the cluster config) all jobs share one FIFO queue -
 *                       exactly the Tiresias simulator's "yarn" emulation.
 *   borrow=on|off       let a VC over its quota use GPUs nobody under quota
 *                       can use right now (default on, as YARN's elasticity).
 *   relax=on|off        locality relaxation over waiting time (default off).
 *   relax_rack=DUR      wait after which a job may spread over one rack's
 *                       nodes (default 180s)
 *   relax_any=DUR       further wait after which it may spread anywhere
 *                       (default 180s)
 *
 *   hol=on|off          head-of-line blocking inside a VC (default on).
 *
 * quota: the "shared cluster" baseline of the HiveD paper, the same code with
 * other defaults: every VC may use at most its quota (the GPUs its HiveD
 * cells guarantee, or quotas=...), never more (borrow=off); consolidated
 * placement on the shared cluster; no head-of-line blocking (hol=off, like
 * hived, so the two differ only in how capacity is promised).  A job larger
 * than its VC's quota is rejected.
 *
 * Queue view (daemon POS, "why pending", VC listing): one queue per VC by
 * submission; a VC's guarantee is the quota enforced (quotas=... first, then
 * its HiveD cells); the quotas= VCs are declared.
 *
 * Invariants: each VC queue holds that VC's arrived PENDING jobs in arrival
 * order; used[vc] is the GPUs held by that VC's running jobs; a job's
 * locality level is a pure function of its total waiting time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/grammar.h"
#include "gsched/jobq.h"
#include "gsched/policy.h"

typedef struct yarn {
    gs_engine *e;
    gs_jobq *q;     /* by VC */
    int64_t *used;  /* GPUs held, by VC */
    int64_t *quota; /* GPUs, by VC; 0 = none configured */
    size_t nvc;
    int single; /* one global queue */
    int borrow, relax, hol, quota_mode;
    gs_time relax_rack, relax_any;
    char **qnames; /* VC names from --set quotas, resolved lazily */
    int64_t *qvals;
    size_t nq;
    int32_t *held; /* GPUs held by slot (to keep used[] exact) */
    size_t capheld;
    char *blocked;  /* scratch, by VC */
    int32_t *order; /* scratch, by VC */
} yarn;

/* The quota of VC 'name': quotas=... (the last nonzero entry naming it), else its HiveD
 * cells; 0 = none. */
static int64_t quota_of(const yarn *y, const char *name)
{
    int64_t q = 0;
    for (size_t k = 0; k < y->nq; k++)
        if (strcmp(y->qnames[k], name) == 0) q = y->qvals[k];
    if (!q) {
        gs_cluster *c = gs_engine_cluster(y->e);
        int v = gs_cluster_find_vc(c, name);
        if (v >= 0) q = gs_cluster_vc(c, v)->gpus;
    }
    return q;
}

static int grow_vcs(yarn *y, size_t n)
{
    if (n <= y->nvc) return 0;
    gs_jobq *q = realloc(y->q, n * sizeof *q);
    if (!q) return GS_ENOMEM;
    y->q = q;
    int64_t *u = realloc(y->used, n * sizeof *u);
    if (!u) return GS_ENOMEM;
    y->used = u;
    int64_t *qt = realloc(y->quota, n * sizeof *qt);
    if (!qt) return GS_ENOMEM;
    y->quota = qt;
    char *b = realloc(y->blocked, n);
    if (!b) return GS_ENOMEM;
    y->blocked = b;
    int32_t *o = realloc(y->order, n * sizeof *o);
    if (!o) return GS_ENOMEM;
    y->order = o;
    for (size_t i = y->nvc; i < n; i++) {
        gs_jobq_init(&y->q[i]);
        y->used[i] = 0;
        y->quota[i] = quota_of(y, gs_engine_vc_name(y->e, (int)i));
    }
    y->nvc = n;
    return 0;
}

static int parse_quotas(yarn *y, const char *s, gs_diag *d)
{
    gs_quota *q;
    size_t n;
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    int rc = gs_parse_quotas(s, &q, &n, &sub);
    if (rc == GS_ENOMEM) return rc;
    if (rc) return gs_diag_set(d, rc, 0, 0, "parameter 'quotas': %s", sub.msg);
    y->qnames = n ? malloc(n * sizeof *y->qnames) : NULL;
    y->qvals = n ? malloc(n * sizeof *y->qvals) : NULL;
    if (n && (!y->qnames || !y->qvals)) {
        gs_quotas_release(q, n);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        y->qnames[i] = q[i].vc; /* ownership moves to y */
        y->qvals[i] = q[i].gpus;
    }
    y->nq = n;
    free(q);
    return 0;
}

static void yarn_destroy(void *st)
{
    yarn *y = st;
    if (!y) return;
    for (size_t i = 0; i < y->nvc; i++) gs_jobq_release(&y->q[i]);
    for (size_t i = 0; i < y->nq; i++) free(y->qnames[i]);
    free(y->qnames);
    free(y->qvals);
    free(y->q);
    free(y->used);
    free(y->quota);
    free(y->held);
    free(y->blocked);
    free(y->order);
    free(y);
}

static int create_mode(gs_engine *e, gs_params *p, void **state, gs_diag *d, int quota_mode)
{
    yarn *y = calloc(1, sizeof *y);
    if (!y) return GS_ENOMEM;
    y->e = e;
    y->quota_mode = quota_mode;
    int rc = 0;
    const char *qs = gs_params_get(p, "quotas");
    if (qs) rc = parse_quotas(y, qs, d);
    if (!rc && quota_mode && !qs && gs_cluster_nvcs(gs_engine_cluster(e)) == 0)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                         "policy 'quota' needs VC quotas: a HiveD config with virtualClusters, or "
                         "--set quotas=VC:GPUS,...");
    if (!rc) rc = gs_params_get_bool(p, "borrow", !quota_mode, &y->borrow, d);
    if (!rc) rc = gs_params_get_bool(p, "hol", !quota_mode, &y->hol, d);
    if (!rc) rc = gs_params_get_bool(p, "relax", 0, &y->relax, d);
    if (!rc) rc = gs_params_get_duration(p, "relax_rack", 180 * GS_SEC, &y->relax_rack, d);
    if (!rc) rc = gs_params_get_duration(p, "relax_any", 180 * GS_SEC, &y->relax_any, d);
    if (rc) {
        yarn_destroy(y);
        return rc;
    }
    y->single = y->nq == 0 && gs_cluster_nvcs(gs_engine_cluster(e)) == 0;
    if (y->relax) gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = y;
    return 0;
}

static int yarn_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    return create_mode(e, p, state, d, 0);
}

static int quota_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    return create_mode(e, p, state, d, 1);
}

static gs_jobq *queue_of(yarn *y, const gs_job *j)
{
    size_t vc = y->single ? 0 : (size_t)j->vc;
    if (grow_vcs(y, vc + 1)) return NULL;
    return &y->q[vc];
}

/* Without borrowing, a job larger than its VC's quota (or in a VC without one) never runs. */
static int yarn_rejects(void *st, const gs_job *j, char *why, size_t cap)
{
    const yarn *y = st;
    if (y->borrow || y->single) return 0;
    int64_t q = quota_of(y, j->vc_name);
    if (q && j->gpus <= q) return 0;
    snprintf(why, cap, "job requests %d GPUs, exceeds the quota of %lld GPUs of VC '%s'", j->gpus,
             (long long)q, j->vc_name);
    return 1;
}

static int yarn_arrival(void *st, gs_job *j)
{
    yarn *y = st;
    gs_jobq *q = queue_of(y, j);
    if (!q) return GS_ENOMEM;
    char why[160];
    if (yarn_rejects(y, j, why, sizeof why)) return gs_engine_reject(y->e, j, why);
    return gs_jobq_push_back(q, j->slot);
}

static int set_held(yarn *y, const gs_job *j, int32_t g)
{
    size_t vc = y->single ? 0 : (size_t)j->vc;
    if ((size_t)j->slot >= y->capheld) {
        if (!g) return 0; /* it held nothing */
        size_t nc = y->capheld ? y->capheld : 1024;
        while (nc <= (size_t)j->slot) nc *= 2;
        int32_t *h = realloc(y->held, nc * sizeof *h);
        if (!h) return GS_ENOMEM;
        memset(h + y->capheld, 0, (nc - y->capheld) * sizeof *h);
        y->held = h;
        y->capheld = nc;
    }
    y->used[vc] += g - y->held[j->slot];
    y->held[j->slot] = g;
    return 0;
}

static int yarn_adopt(void *st, gs_job *j)
{
    yarn *y = st;
    return queue_of(y, j) ? set_held(y, j, j->gpus) : GS_ENOMEM;
}

static int yarn_requeue(void *st, gs_job *j)
{
    yarn *y = st;
    set_held(y, j, 0); /* cannot fail: it held GPUs */
    gs_jobq *q = queue_of(y, j);
    if (!q) return GS_ENOMEM;
    for (int32_t s = gs_jobq_first(q); s >= 0; s = gs_jobq_next(q, s))
        if (s > j->slot) return gs_jobq_insert_before(q, s, j->slot);
    return gs_jobq_push_back(q, j->slot);
}

static int yarn_finish(void *st, gs_job *j)
{
    yarn *y = st;
    set_held(y, j, 0); /* cannot fail: releasing allocates nothing */
    size_t vc = y->single ? 0 : (size_t)j->vc;
    if (vc < y->nvc) gs_jobq_remove(&y->q[vc], j->slot); /* a VC never seen queued nothing */
    return 0;
}

static gs_locality level_of(const yarn *y, const gs_job *j, gs_time now, gs_time *next)
{
    *next = GS_TIME_NONE;
    if (!y->relax) return GS_LOCALITY_STRICT;
    gs_time waited = gs_job_queued(j, now);
    if (waited >= y->relax_rack + y->relax_any) return GS_LOCALITY_ANY;
    if (waited >= y->relax_rack) {
        *next = now + (y->relax_rack + y->relax_any - waited);
        return GS_LOCALITY_RACK;
    }
    *next = now + (y->relax_rack - waited);
    return GS_LOCALITY_STRICT;
}

/* Try job s of VC 'vc': 1 started, 0 not, or an error. */
static int try_job(yarn *y, size_t vc, int32_t s)
{
    gs_job *j = gs_policy_job(y->e, (size_t)s);
    gs_time next;
    int rc = gs_engine_try_start(y->e, j, level_of(y, j, gs_engine_now(y->e), &next));
    if (rc == GS_ENOMEM) return rc;
    if (rc == 0) {
        gs_jobq_remove(&y->q[vc], s);
        return (rc = set_held(y, j, j->gpus)) != 0 ? rc : 1;
    }
    gs_engine_set_reason(y->e, j, "Resources");
    if (next != GS_TIME_NONE && (rc = gs_engine_set_timer(y->e, next, (uint64_t)s)) != 0) return rc;
    return 0;
}

/* Try the head of VC 'vc' (or, without HOL blocking, its first job that fits):
 * 1 started, 0 not, or an error. */
static int try_head(yarn *y, size_t vc)
{
    int32_t s = gs_jobq_first(&y->q[vc]);
    if (!y->hol) {
        for (; s >= 0; s = gs_jobq_next(&y->q[vc], s)) {
            gs_job *j = gs_policy_job(y->e, (size_t)s);
            if (!y->borrow && y->quota[vc] && y->used[vc] + j->gpus > y->quota[vc]) continue;
            int rc = try_job(y, vc, s);
            if (rc) return rc;
        }
        return 0;
    }
    return try_job(y, vc, s);
}

static int cmp_share(const yarn *y, int32_t a, int32_t b)
{
    /* used/quota ascending without division: a.used*b.quota vs b.used*a.quota */
    __int128 l = (__int128)y->used[a] * (y->quota[b] ? y->quota[b] : 1);
    __int128 r = (__int128)y->used[b] * (y->quota[a] ? y->quota[a] : 1);
    if (l != r) return l < r ? -1 : 1;
    return a < b ? -1 : 1;
}

static int yarn_schedule(void *st)
{
    yarn *y = st;
    gs_cluster *c = gs_engine_cluster(y->e);
    int rc;
    if (y->single) {
        if (!y->nvc) return 0;
        while (gs_jobq_first(&y->q[0]) >= 0 && gs_cluster_free(c) > 0)
            if ((rc = try_head(y, 0)) <= 0) return rc;
        return 0;
    }
    if (y->nvc) memset(y->blocked, 0, y->nvc);
    for (;;) {
        /* VCs with waiting jobs, most under-served first */
        size_t n = 0;
        for (size_t v = 0; v < y->nvc; v++)
            if (gs_jobq_first(&y->q[v]) >= 0 && !y->blocked[v]) y->order[n++] = (int32_t)v;
        if (!n || gs_cluster_free(c) == 0) return 0;
        for (size_t a = 1; a < n; a++) /* insertion sort: few VCs */
            for (size_t b = a; b > 0 && cmp_share(y, y->order[b], y->order[b - 1]) < 0; b--) {
                int32_t t = y->order[b];
                y->order[b] = y->order[b - 1];
                y->order[b - 1] = t;
            }
        int started = 0;
        for (int borrow = 0; borrow <= y->borrow && !started; borrow++)
            for (size_t k = 0; k < n && !started; k++) {
                size_t v = (size_t)y->order[k];
                gs_job *j = gs_policy_job(y->e, (size_t)gs_jobq_first(&y->q[v]));
                int over = y->quota[v] && y->used[v] + j->gpus > y->quota[v];
                if (!y->hol) over = borrow; /* try_head skips what would exceed the quota */
                if (over != borrow) continue;
                if ((rc = try_head(y, v)) < 0) return rc;
                if (rc)
                    started = 1;
                else
                    y->blocked[v] = 1;
            }
        if (!started) return 0;
    }
}

static int yarn_timer(void *st, uint64_t tag)
{
    (void)st, (void)tag; /* the pass that follows re-evaluates locality levels */
    return 0;
}

/* ---- queue view (daemon): one queue per VC, by submission; quotas as guarantees ---- */
/* Without quotas or cluster VCs there is one global FIFO (y->single), and the view says so. */

static int yarn_queue_key(void *st, const gs_job *j, gs_queue_key *k)
{
    const yarn *y = st;
    k->queue = y->single ? GS_QUEUE_GLOBAL : j->vc;
    k->key = 0;
    return 0;
}

static int yarn_queue_describe(void *st, int queue, char *buf, size_t cap)
{
    const yarn *y = st;
    if (y->single || queue == GS_QUEUE_GLOBAL) {
        snprintf(buf, cap, "in the queue (by submission)");
        return 0;
    }
    const char *vc = gs_engine_vc_name(y->e, queue);
    snprintf(buf, cap, "in VC %s (by submission)", vc ? vc : "default");
    return 0;
}

/* The quota enforced for VC 'vc': quotas=... (the last entry naming it), else its HiveD cells. */
static int64_t yarn_vc_guarantee(void *st, const char *vc)
{
    const yarn *y = st;
    int64_t q = -1;
    for (size_t k = 0; k < y->nq; k++)
        if (strcmp(y->qnames[k], vc) == 0) q = y->qvals[k];
    if (q >= 0) return q;
    gs_cluster *c = gs_engine_cluster(y->e);
    int v = gs_cluster_find_vc(c, vc);
    return v >= 0 ? gs_cluster_vc(c, v)->gpus : -1;
}

static const char *yarn_vc_declared(void *st, size_t i)
{
    const yarn *y = st;
    return i < y->nq ? y->qnames[i] : NULL;
}

static const gs_policy_ops gs_policy_quota = {
    .name = "quota",
    .summary = "baseline: per-VC GPU quotas on a shared cluster, consolidated placement, no "
               "borrowing (needs VC quotas)",
    .flags = GS_POLICY_RIGID,
    .create = quota_create,
    .destroy = yarn_destroy,
    .on_arrival = yarn_arrival,
    .on_adopt = yarn_adopt,
    .on_requeue = yarn_requeue,
    .on_finish = yarn_finish,
    .on_withdraw = yarn_finish, /* forgets a waiting job, as a cancel */
    .on_timer = yarn_timer,
    .schedule = yarn_schedule,
    .queue_key = yarn_queue_key,
    .queue_describe = yarn_queue_describe,
    .vc_guarantee = yarn_vc_guarantee,
    .vc_declared = yarn_vc_declared,
    .rejects = yarn_rejects,
};

static const gs_policy_ops gs_policy_yarn_cs = {
    .name = "yarn-cs",
    .summary = "YARN capacity scheduler: per-VC FIFO by quota share, consolidated placement, "
               "optional locality relaxation",
    .flags = GS_POLICY_RIGID,
    .create = yarn_create,
    .destroy = yarn_destroy,
    .on_arrival = yarn_arrival,
    .on_adopt = yarn_adopt,
    .on_requeue = yarn_requeue,
    .on_finish = yarn_finish,
    .on_withdraw = yarn_finish, /* forgets a waiting job, as a cancel */
    .on_timer = yarn_timer,
    .schedule = yarn_schedule,
    .queue_key = yarn_queue_key,
    .queue_describe = yarn_queue_describe,
    .vc_guarantee = yarn_vc_guarantee,
    .vc_declared = yarn_vc_declared,
    .rejects = yarn_rejects,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_yarn_cs[] = {
    {20, &gs_policy_yarn_cs}, {51, &gs_policy_quota}, {0, NULL}};
