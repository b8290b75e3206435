/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_optimus.c - "optimus": GPUs by marginal gain (Optimus, EuroSys'18;
 * the Pollux paper's Optimus + Oracle + TunedJobs baseline, as its artifact's
 * simulator/optimus.py runs it - read, not copied).  Time-stepped: it decides
 * at multiples of 'interval' (60 s).
 *
 * At each tick, over the active jobs in arrival (slot) order:
 *   1. each job gets its smallest size while GPUs are left (1 GPU in parity);
 *   2. then, one step at a time, the job with the largest marginal gain gets
 *      its next size (ties: the earliest job): gain = (t(n) - t(n')) x
 *      remaining / (n' - n), t(n) the time of one step at n GPUs and
 *      remaining the work left, until no GPU is left or no gain is positive;
 *   3. jobs whose size is unchanged keep their GPUs; the others change.
 *
 * elastic_mode=parity (what `gsched sim` runs for a Pollux workload): every
 * active job is sized 1..batch/min_local_bsz (1 for ncf, as the artifact),
 * t(n) is the true step time of the application's tables at n GPUs packed 4
 * per node with the job's fixed batch (the Oracle; gs_goodput_step_time),
 * remaining = iterations left to its completion epoch (at least 1); a job
 * whose size changes stops (checkpoint) and starts again at its new size on
 * the most-free nodes (gs_mostfree_place, smallest jobs first), paying the
 * restart cost - as the artifact re-places it from scratch.
 *
 * elastic_mode=event (native, the default): elastic jobs (max_gpus > 0) are
 * sized over their valid sizes, rigid jobs run at their size or wait; t(n) =
 * 1 / the rate the job would progress at on n GPUs (gs_engine_job_rate on its
 * GPU type: the progress model's what-if, else the scaling curve, times the
 * type rate) and remaining = its
 * remaining work.
 * A running elastic job changes size through gs_engine_rescale (a POLICY
 * rescale: min_rescale_gap and max_rescales hold; when refused it keeps its
 * size), keeping its GPUs and growing on its own nodes first, then the
 * most-free ones; every rescale says why ("optimus: grew 2->4 GPUs: ...").
 *
 * Parameters: interval=DURATION (default 60s), elastic_mode=parity|event.
 *
 * Speed (the same decisions at any scale): the active jobs are kept in slot
 * order ('act'), so a tick never scans finished or future jobs; and when every
 * active job is rigid (native mode) and they ask for no more GPUs than are
 * healthy ('demand'), the tick gives each its size, no gain is positive and
 * nothing changes size, so it only starts the pending jobs, in slot order (kept
 * in 'pend', a superset checked against their state).  When every active job
 * is rigid but they ask for more, the tick is a greedy walk in slot order
 * (each gets its size while it fits what is left, none gains from more): it
 * runs on 'fa', the rigid jobs again as a fitq (fitq.h), visiting only the
 * jobs that may run past the first one that does not fit or wait before it,
 * and setting the no-gain reason only on waiting jobs in 'dirty' (arrivals,
 * requeues, failed starts since).  After an adoption (reconfiguration) the
 * full tick always runs; after any full tick 'fa' is rebuilt before its use.
 *
 * Invariants: nactive counts the arrived active jobs; 'act' holds them in slot
 * order, 'demand' is the GPUs its rigid ones ask for and 'nelastic' the number
 * of elastic ones; every pending active job is in 'pend'; at most one tick
 * timer is armed (armed_at) while an active job exists; unless fa_bad, 'fa'
 * holds the active rigid jobs of size > 0 in slot order with their sizes,
 * GS_FITQ_RUN on every running one and GS_FITQ_PEND on every pending one, and
 * a pending active job outside 'dirty' has the no-gain reason, except after a
 * tick that was not tick_greedy (fa_bad is then set); the per-job step-time
 * cache tc[slot] holds t(n) for n = 0..ntc[slot]-1 (< 0 = not computed yet).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/goodput.h"
#include "gsched/jobq.h"
#include "gsched/policy.h"
#include "gsched/placement.h"

#include "fitq.h"

typedef struct opt {
    gs_engine *e;
    gs_time interval;
    int parity;
    gs_time armed_at;
    int tick_due;
    size_t nactive;
    size_t cap;       /* per-slot arrays below */
    int32_t *n;       /* target size this tick */
    double *gain;     /* gain of the next step */
    double **tc;      /* step-time cache by size */
    int32_t *ntc;     /* entries of tc[slot] */
    int32_t *maxn;    /* largest size of each job (fixed at its arrival) */
    int32_t *order;   /* active slots */
    int *gpus, *keep; /* placement scratch (cluster GPUs) */
    char reason[160];
    gs_jobq act, pend; /* active jobs in slot order; jobs that may be pending */
    int64_t demand;    /* GPUs the active rigid jobs ask for */
    size_t nelastic;   /* active elastic jobs */
    int adopted;       /* a reconfiguration told it of jobs: the full tick always */
    gs_fitq fa;        /* the rigid jobs of 'act' of size > 0, in its order (tick_greedy) */
    int fa_bad;        /* fa's order or flags may be wrong: rebuilt before its next use */
    gs_jobq dirty;     /* pending jobs whose reason may not be the no-gain one */
    int32_t *xs;       /* tick_greedy: the jobs admitted past the first that did not fit */
    size_t nxs, capxs;
    uint8_t *inx; /* by slot: in xs */
} opt;

static int opt_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    gs_time iv;
    int rc = gs_params_get_duration(p, "interval", 60 * GS_SEC, &iv, d);
    if (rc) return rc;
    if (iv <= 0) return gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'interval' must be positive");
    const char *m = gs_params_get(p, "elastic_mode");
    if (m && strcmp(m, "parity") && strcmp(m, "event"))
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "parameter 'elastic_mode': expected parity or event, got '%s'", m);
    opt *o = calloc(1, sizeof *o);
    size_t ng = gs_cluster_ngpus(gs_engine_cluster(e));
    if (!o || !(o->gpus = malloc((ng ? ng : 1) * sizeof *o->gpus)) ||
        !(o->keep = malloc((ng ? ng : 1) * sizeof *o->keep))) {
        if (o) free(o->gpus);
        free(o);
        return GS_ENOMEM;
    }
    o->e = e;
    o->interval = iv;
    o->parity = m && !strcmp(m, "parity");
    o->armed_at = GS_TIME_NONE;
    gs_jobq_init(&o->act);
    gs_jobq_init(&o->pend);
    gs_jobq_init(&o->dirty);
    gs_fitq_init(&o->fa);
    gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = o;
    return 0;
}

static void opt_destroy(void *st)
{
    opt *o = st;
    if (!o) return;
    for (size_t i = 0; i < o->cap; i++) free(o->tc[i]);
    free(o->tc);
    free(o->ntc);
    free(o->maxn);
    free(o->n);
    free(o->gain);
    free(o->order);
    free(o->gpus);
    free(o->keep);
    gs_jobq_release(&o->act);
    gs_jobq_release(&o->pend);
    gs_jobq_release(&o->dirty);
    gs_fitq_release(&o->fa);
    free(o->xs);
    free(o->inx);
    free(o);
}

static int grow(opt *o, size_t slot)
{
    if (slot < o->cap) return 0;
    size_t nc = o->cap ? o->cap : 256;
    while (nc <= slot) nc *= 2;
    int32_t *n = realloc(o->n, nc * sizeof *n);
    if (n) o->n = n;
    double *g = realloc(o->gain, nc * sizeof *g);
    if (g) o->gain = g;
    double **tc = realloc(o->tc, nc * sizeof *tc);
    if (tc) o->tc = tc;
    int32_t *ntc = realloc(o->ntc, nc * sizeof *ntc);
    if (ntc) o->ntc = ntc;
    int32_t *mx = realloc(o->maxn, nc * sizeof *mx);
    if (mx) o->maxn = mx;
    int32_t *ord = realloc(o->order, nc * sizeof *ord);
    if (ord) o->order = ord;
    uint8_t *ix = realloc(o->inx, nc);
    if (ix) o->inx = ix;
    if (!n || !g || !tc || !ntc || !mx || !ord || !ix) return GS_ENOMEM;
    for (size_t i = o->cap; i < nc; i++) o->tc[i] = NULL, o->ntc[i] = 0, o->inx[i] = 0;
    o->cap = nc;
    return 0;
}

/* Arm the tick timer at the first multiple of interval at or after 'from' (and > 0). */
static int arm(opt *o, gs_time from)
{
    gs_time at = (from + o->interval - 1) / o->interval * o->interval;
    if (at < o->interval) at = o->interval;
    if (o->armed_at != GS_TIME_NONE && o->armed_at <= at) return 0;
    int rc = gs_engine_set_timer(o->e, at, (uint64_t)at);
    if (!rc) o->armed_at = at;
    return rc;
}

static int compute_max_size(const opt *o, const gs_job *j);

static int is_elastic(const opt *o, const gs_job *j);

/* Whether j is in 'fa' when it is active: rigid and asking for GPUs. */
static int in_fa(const opt *o, const gs_job *j)
{
    return !is_elastic(o, j) && j->req_gpus > 0;
}

/* Add j to 'fa', flagged by its state. */
static int fa_push(opt *o, const gs_job *j)
{
    unsigned fl = j->state == GS_JOB_RUNNING   ? 1u << GS_FITQ_RUN
                  : j->state == GS_JOB_PENDING ? 1u << GS_FITQ_PEND
                                               : 0;
    int rc = gs_fitq_push(&o->fa, j->slot, j->req_gpus, fl);
    return rc == GS_EEXIST ? 0 : rc;
}

/* Note that j waits, its reason to be checked (no-op if noted). */
static int note_dirty(opt *o, const gs_job *j)
{
    int rc = gs_jobq_push_back(&o->dirty, j->slot);
    return rc == GS_EEXIST ? 0 : rc;
}

/* j joins the active jobs (slot order: nearly always at the tail). */
static int activate(opt *o, const gs_job *j)
{
    int32_t s = j->slot, at = gs_jobq_first(&o->act);
    if (gs_jobq_contains(&o->act, s)) return 0;
    int rc, tail = o->act.tail < s;
    if (tail) {
        rc = gs_jobq_push_back(&o->act, s);
    } else {
        while (at >= 0 && at < s) at = gs_jobq_next(&o->act, at);
        rc = at >= 0 ? gs_jobq_insert_before(&o->act, at, s) : gs_jobq_push_back(&o->act, s);
    }
    if (rc) return rc;
    if (is_elastic(o, j))
        o->nelastic++;
    else
        o->demand += j->req_gpus;
    if (!tail) o->fa_bad = 1; /* not at the tail of fa's order: rebuilt */
    if (tail && in_fa(o, j) && (rc = fa_push(o, j))) o->fa_bad = 1;
    if (j->state == GS_JOB_PENDING) {
        rc = gs_jobq_push_back(&o->pend, s);
        if (!rc || rc == GS_EEXIST) rc = note_dirty(o, j);
    }
    return rc == GS_EEXIST ? 0 : rc;
}

static int opt_arrival(void *st, gs_job *j)
{
    opt *o = st;
    o->nactive++; /* first: a failure below leaves the count right for check() */
    int rc = grow(o, (size_t)j->slot);
    if (!rc) rc = activate(o, j);
    if (rc) return rc;
    o->maxn[j->slot] = compute_max_size(o, j);
    gs_goodput *g = gs_goodput_of(o->e);
    if (g && j->app && j->batch_size > 0 &&
        (rc = gs_goodput_set_batch_mode(g, j, GS_BATCH_FIXED, j->batch_size)))
        return rc;
    gs_time now = gs_engine_now(o->e);
    if (now > 0 && now % o->interval == 0) { /* seen by the tick at this instant */
        o->tick_due = 1;
        return arm(o, now + 1);
    }
    return arm(o, now);
}

static int opt_adopt(void *st, gs_job *j)
{
    ((opt *)st)->adopted = 1;
    return opt_arrival(st, j);
}

static int opt_requeue(void *st, gs_job *j)
{
    opt *o = st;
    gs_fitq_flag(&o->fa, j->slot, GS_FITQ_PEND, 1);
    int rc = gs_jobq_push_back(&o->pend, j->slot);
    if (!rc || rc == GS_EEXIST) rc = note_dirty(o, j);
    return rc;
}

static int opt_finish(void *st, gs_job *j)
{
    opt *o = st;
    if (j->arrived) o->nactive--;
    if (gs_jobq_remove(&o->act, j->slot)) {
        if (is_elastic(o, j))
            o->nelastic--;
        else
            o->demand -= j->req_gpus;
    }
    gs_jobq_remove(&o->pend, j->slot);
    gs_jobq_remove(&o->dirty, j->slot);
    gs_fitq_remove(&o->fa, j->slot);
    free(o->tc[j->slot]);
    o->tc[j->slot] = NULL;
    o->ntc[j->slot] = 0;
    return 0;
}

static int opt_timer(void *st, uint64_t tag)
{
    opt *o = st;
    if (o->armed_at != GS_TIME_NONE && (uint64_t)o->armed_at == tag) o->armed_at = GS_TIME_NONE;
    o->tick_due = 1;
    gs_engine_request_pass(o->e);
    return 0;
}

/* ---- sizes --------------------------------------------------------------------- */

static int is_elastic(const opt *o, const gs_job *j)
{
    return o->parity || j->max_gpus > 0;
}

/* Largest size the job may take (computed once, at its arrival: o->maxn). */
static int compute_max_size(const opt *o, const gs_job *j)
{
    if (o->parity) {
        const gs_goodput *g = gs_goodput_of(o->e);
        const gs_app_spec *a = g && j->app ? gs_goodput_job_app(g, j) : NULL;
        if (!a) return j->max_gpus > 0 ? j->max_gpus : j->req_gpus;
        if (!strcmp(a->name, "ncf")) return 1; /* the artifact's rule for ncf */
        int64_t m = a->min_local_bsz > 0 ? j->batch_size / a->min_local_bsz : 1;
        if (j->max_gpus > 0 && m > j->max_gpus) m = j->max_gpus;
        return m < 1 ? 1 : (int)m;
    }
    return j->max_gpus > 0 ? j->max_gpus : j->req_gpus;
}

/* Smallest size (0 when none is valid up to max). */
static int min_size(const opt *o, const gs_job *j)
{
    if (o->parity) return 1;
    if (j->max_gpus <= 0) return j->req_gpus;
    for (int n = j->gpus_per_task; n <= j->max_gpus; n += j->gpus_per_task)
        if (gs_job_size_valid(j, n)) return n;
    return 0;
}

/* Next size after n (0 when none). */
static int next_size(const opt *o, const gs_job *j, int n)
{
    int hi = o->maxn[j->slot];
    if (o->parity) return n + 1 <= hi ? n + 1 : 0;
    if (!is_elastic(o, j)) return 0;
    for (int k = n + j->gpus_per_task; k <= hi; k += j->gpus_per_task)
        if (gs_job_size_valid(j, k)) return k;
    return 0;
}

/* Time of one step (or one unit of work) at n GPUs; < 0 when unknown. */
static double step_time(opt *o, const gs_job *j, int n)
{
    int32_t s = j->slot;
    if (n >= o->ntc[s]) {
        int32_t nn = n + 8;
        double *v = realloc(o->tc[s], (size_t)nn * sizeof *v);
        if (!v) return -2; /* out of memory: the caller fails */
        for (int32_t i = o->ntc[s]; i < nn; i++) v[i] = -1;
        o->tc[s] = v;
        o->ntc[s] = nn;
    }
    if (o->tc[s][n] >= 0) return o->tc[s][n];
    gs_goodput *g = gs_goodput_of(o->e);
    double t;
    if (o->parity && g && j->app) {
        t = gs_goodput_step_time(g, j, n, j->batch_size); /* the Oracle: true tables */
        if (t < 0) t = 0;                                 /* unknown: no gain from it */
    } else {
        /* time per unit of work: 1 / rate (on its GPU type) */
        double v = gs_engine_job_rate(o->e, j, gs_engine_job_gpu_type(o->e, j), n);
        t = v > 0 ? 1.0 / v : 0;
    }
    o->tc[s][n] = t;
    return t;
}

/* Remaining steps (parity) or remaining work seconds (native). */
static double remaining(const opt *o, const gs_job *j)
{
    gs_goodput *g = gs_goodput_of(o->e);
    if (o->parity && g && j->app) {
        double r = gs_goodput_remaining_iters(g, j, j->batch_size);
        return r > 0 ? r : 1; /* the artifact's 1 once the completion epoch is reached */
    }
    return gs_time_to_sec(gs_job_remaining(j, gs_engine_now(o->e)));
}

/* Gain per GPU of job j's next step from n; left = GPUs left for it. */
static int next_gain(opt *o, const gs_job *j, int n, long left, double rem, double *out)
{
    *out = 0;
    int k = next_size(o, j, n);
    if (!k || k - n > left) return 0;
    double a = step_time(o, j, n), b = step_time(o, j, k);
    if (a < -1.5 || b < -1.5) return GS_ENOMEM;
    *out = (a - b) * rem / (double)(k - n);
    return 0;
}

/* ---- the tick ------------------------------------------------------------------- */

static int size_all(opt *o, size_t *nact)
{
    gs_engine *e = o->e;
    size_t k = 0;
    long left = gs_cluster_cell(gs_engine_cluster(e), 0)->healthy;
    for (int32_t s = gs_jobq_first(&o->act); s >= 0; s = gs_jobq_next(&o->act, s)) {
        const gs_job *j = gs_engine_job(e, (size_t)s);
        if (!j->arrived || gs_job_state_final(j->state)) continue;
        o->order[k++] = s;
    }
    *nact = k;
    /* the work left first (it does not depend on sizes) */
    double *r = malloc((k ? k : 1) * sizeof *r);
    if (!r) return GS_ENOMEM;
    for (size_t i = 0; i < k; i++) r[i] = remaining(o, gs_engine_job(e, (size_t)o->order[i]));
    for (size_t i = 0; i < k; i++) {
        int32_t s = o->order[i];
        const gs_job *j = gs_engine_job(e, (size_t)s);
        int lo = min_size(o, j);
        if (!lo || lo > left) {
            o->n[s] = 0;
            o->gain[s] = 0;
            continue;
        }
        o->n[s] = lo;
        left -= lo;
        int rc = next_gain(o, j, lo, left, r[i], &o->gain[s]);
        if (rc) {
            free(r);
            return rc;
        }
    }
    while (left > 0) {
        int32_t best = -1;
        size_t bi = 0;
        for (size_t i = 0; i < k; i++) {
            int32_t s = o->order[i];
            if (o->gain[s] > 0 && (best < 0 || o->gain[s] > o->gain[best])) best = s, bi = i;
        }
        if (best < 0) break;
        const gs_job *j = gs_engine_job(e, (size_t)best);
        int nx = next_size(o, j, o->n[best]);
        left -= nx - o->n[best];
        o->n[best] = nx;
        int rc = next_gain(o, j, nx, left, r[bi], &o->gain[best]);
        if (rc) {
            free(r);
            return rc;
        }
    }
    free(r);
    return 0;
}

static int fail_rc(gs_engine *e, int rc)
{
    if (rc == GS_ENOMEM) return rc;
    return gs_engine_error(e);
}

/* Parity: re-place every changed job from scratch on the most-free nodes, smallest first. */
static int apply_parity(opt *o, size_t k)
{
    gs_engine *e = o->e;
    gs_cluster *c = gs_engine_cluster(e);
    for (size_t i = 0; i < k; i++) {
        gs_job *j = gs_policy_job(e, (size_t)o->order[i]);
        if (j->state != GS_JOB_RUNNING || j->nalloc == o->n[j->slot]) continue;
        snprintf(o->reason, sizeof o->reason, "optimus: %d -> %d GPUs by marginal gain",
                 (int)j->nalloc, (int)o->n[j->slot]);
        int rc = gs_engine_preempt(e, j, o->reason);
        if ((rc = fail_rc(e, rc))) return rc;
    }
    /* smallest first, arrival order among equals (a stable order of the active list) */
    for (size_t i = 1; i < k; i++) {
        int32_t s = o->order[i];
        size_t m = i;
        while (m > 0 && o->n[o->order[m - 1]] > o->n[s]) {
            o->order[m] = o->order[m - 1];
            m--;
        }
        o->order[m] = s;
    }
    for (size_t i = 0; i < k; i++) {
        gs_job *j = gs_policy_job(e, (size_t)o->order[i]);
        int n = o->n[j->slot];
        if (j->state != GS_JOB_PENDING) continue;
        if (!n) {
            gs_engine_set_reason(e, j, "Resources (optimus: no marginal gain left)");
            continue;
        }
        int rc = gs_mostfree_place(c, n, 1, j->gpu_type, o->gpus);
        if (!rc) rc = gs_engine_start(e, j, o->gpus, n);
        if (fail_rc(e, rc)) return fail_rc(e, rc);
        if (rc) gs_engine_set_reason(e, j, "Resources");
    }
    return 0;
}

/* Native: count of j's GPUs on node 'node'. */
static int on_node(const gs_cluster *c, const gs_job *j, int node)
{
    int k = 0;
    for (int i = 0; i < j->nalloc; i++) k += gs_cluster_gpu(c, j->alloc[i])->node == node;
    return k;
}

/* Native: j's GPUs reduced to n (whole tasks), keeping those on its most-used nodes. */
static int shrink_to(const gs_cluster *c, const gs_job *j, int n, int *out)
{
    int k = 0, gpt = j->gpus_per_task;
    while (k < n) {
        int best = -1, bestc = 0;
        for (int i = 0; i < j->nalloc; i += gpt) {
            int nd = gs_cluster_gpu(c, j->alloc[i])->node, taken = 0;
            for (int t = 0; t < k && !taken; t += gpt)
                taken = gs_cluster_gpu(c, out[t])->node == nd;
            int cnt = on_node(c, j, nd);
            if (!taken && cnt > bestc) best = nd, bestc = cnt;
        }
        if (best < 0) return GS_ENOFIT;
        for (int i = 0; i < j->nalloc && k < n; i++)
            if (gs_cluster_gpu(c, j->alloc[i])->node == best) out[k++] = j->alloc[i];
    }
    return 0;
}

/* Native: j's GPUs plus n - nalloc free ones (its own nodes first, then the most free). */
static int grow_to(const gs_cluster *c, const gs_job *j, int n, int *out)
{
    int k = 0, gpt = j->gpus_per_task, need = n - j->nalloc;
    for (int i = 0; i < j->nalloc; i++) out[k++] = j->alloc[i];
    for (int i = 0; i < j->nalloc && need > 0; i += gpt) { /* free GPUs on its own nodes */
        const gs_node *nd = gs_cluster_node(c, gs_cluster_gpu(c, j->alloc[i])->node);
        int fr = 0;
        for (int g = nd->gpu_lo; g < nd->gpu_hi; g++) {
            const gs_gpu *u = gs_cluster_gpu(c, g);
            fr += u->owner < 0 && !u->users && !u->down;
        }
        int dup = 0;
        for (int t = 0; t < i && !dup; t += gpt)
            dup = gs_cluster_gpu(c, j->alloc[t])->node == gs_cluster_gpu(c, j->alloc[i])->node;
        if (dup) continue;
        int take = fr / gpt * gpt;
        if (take > need) take = need;
        for (int g = nd->gpu_lo; g < nd->gpu_hi && take > 0; g++) {
            const gs_gpu *u = gs_cluster_gpu(c, g);
            if (u->owner >= 0 || u->users || u->down) continue;
            out[k++] = g;
            take--;
            need--;
        }
    }
    if (need > 0) {
        /* the rest on the most-free nodes (no node of its own has room left) */
        int rc = gs_mostfree_place(c, need, gpt, j->gpu_type, out + k);
        if (rc) return rc;
    }
    return 0;
}

static int apply_native(opt *o, size_t k)
{
    gs_engine *e = o->e;
    gs_cluster *c = gs_engine_cluster(e);
    /* shrinks and stops first, then growths, then starts (what is free after them) */
    for (int phase = 0; phase < 3; phase++)
        for (size_t i = 0; i < k; i++) {
            gs_job *j = gs_policy_job(e, (size_t)o->order[i]);
            int n = o->n[j->slot], cur = j->nalloc, rc = 0;
            if (phase < 2 && (j->state != GS_JOB_RUNNING || n == cur)) continue;
            if (phase == 0 && n < cur) {
                if (j->max_gpus <= 0) {
                    rc = gs_engine_preempt(e, j, "optimus: its GPUs have a larger marginal gain");
                } else {
                    if (n && (rc = shrink_to(c, j, n, o->keep))) continue;
                    snprintf(o->reason, sizeof o->reason,
                             "optimus: shrank %d->%d GPUs: others gain more per GPU", cur, n);
                    rc = gs_engine_rescale(e, j, o->keep, n, GS_RESCALE_POLICY, o->reason);
                }
            } else if (phase == 1 && n > cur) {
                if (grow_to(c, j, n, o->keep)) continue; /* not free yet: next tick */
                snprintf(o->reason, sizeof o->reason,
                         "optimus: grew %d->%d GPUs: marginal gain %.3g", cur, n,
                         o->gain[j->slot] > 0 ? o->gain[j->slot] : 0.0);
                rc = gs_engine_rescale(e, j, o->keep, n, GS_RESCALE_POLICY, o->reason);
            } else if (phase == 2 && j->state == GS_JOB_PENDING) {
                if (!n) {
                    gs_engine_set_reason(e, j, "Resources (optimus: no marginal gain left)");
                    continue;
                }
                rc = gs_mostfree_place(c, n, j->gpus_per_task, j->gpu_type, o->gpus);
                if (!rc) rc = gs_engine_start(e, j, o->gpus, n);
                if (rc && rc != GS_ENOMEM) gs_engine_set_reason(e, j, "Resources");
            }
            if (fail_rc(e, rc)) return fail_rc(e, rc);
        }
    return 0;
}

static int by_slot(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The tick when every active job is rigid and all fit the healthy GPUs (native mode): each
 * gets its size, none changes, the pending ones start in slot order (apply_native's phase 2). */
static int started(opt *o, const gs_job *j, int rc);

static int tick_all_fit(opt *o)
{
    gs_engine *e = o->e;
    gs_cluster *c = gs_engine_cluster(e);
    size_t k = 0;
    for (int32_t s = gs_jobq_first(&o->pend), nx; s >= 0; s = nx) {
        nx = gs_jobq_next(&o->pend, s);
        const gs_job *j = gs_engine_job(e, (size_t)s);
        if (j->state == GS_JOB_PENDING && gs_jobq_contains(&o->act, s))
            o->order[k++] = s;
        else
            gs_jobq_remove(&o->pend, s);
    }
    qsort(o->order, k, sizeof *o->order, by_slot);
    for (size_t i = 0; i < k; i++) {
        gs_job *j = gs_policy_job(e, (size_t)o->order[i]);
        int n = j->req_gpus;
        o->n[j->slot] = n;
        int rc = gs_mostfree_place(c, n, j->gpus_per_task, j->gpu_type, o->gpus);
        if (!rc) rc = gs_engine_start(e, j, o->gpus, n);
        if (rc && rc != GS_ENOMEM) gs_engine_set_reason(e, j, "Resources");
        if (fail_rc(e, rc)) return fail_rc(e, rc);
        if ((rc = started(o, j, rc))) return rc;
    }
    return 0;
}

/* After a start of pending j (rc: its result; 0 or the failure to place it): the flags,
 * 'pend' and 'dirty' follow. */
static int started(opt *o, const gs_job *j, int rc)
{
    if (rc) return note_dirty(o, j); /* "Resources" */
    gs_jobq_remove(&o->pend, j->slot);
    gs_jobq_remove(&o->dirty, j->slot);
    gs_fitq_flag(&o->fa, j->slot, GS_FITQ_RUN, 1);
    gs_fitq_flag(&o->fa, j->slot, GS_FITQ_PEND, 0);
    return 0;
}

/* 'fa' again from 'act' (after a middle insertion or a tick that did not keep its flags); every
 * waiting job's reason is checked at the next tick_greedy. */
static int fa_rebuild(opt *o)
{
    gs_fitq_release(&o->fa);
    gs_fitq_init(&o->fa);
    o->fa_bad = 1;
    for (int32_t s = gs_jobq_first(&o->act); s >= 0; s = gs_jobq_next(&o->act, s)) {
        const gs_job *j = gs_engine_job(o->e, (size_t)s);
        int rc = in_fa(o, j) ? fa_push(o, j) : 0;
        if (!rc && j->state == GS_JOB_PENDING) rc = note_dirty(o, j);
        if (rc) return rc;
    }
    o->fa_bad = 0;
    return 0;
}

/*
 * The tick when every active job is rigid but they ask for more than the healthy GPUs (native
 * mode): size_all gives each, in slot order, its size while it fits what is left (none gains
 * from more), apply_native stops the running jobs left without GPUs, then starts the waiting
 * ones given their size (the others wait, "no marginal gain left").  Done on 'fa' (fitq.h):
 * every job before the first that does not fit gets its size, after it only the few in xs;
 * only the jobs that may run past that boundary or wait before it are visited, and only the
 * waiting jobs in 'dirty' can need their reason set.  The same calls in the same order.
 */
static int tick_greedy(opt *o)
{
    gs_engine *e = o->e;
    gs_cluster *c = gs_engine_cluster(e);
    int rc = o->fa_bad ? fa_rebuild(o) : 0;
    if (rc) return rc;
    int64_t used, left = gs_cluster_cell(c, 0)->healthy;
    int64_t k = gs_fitq_first_over(&o->fa, left, &used);
    left -= used;
    o->nxs = 0;
    for (int64_t p = k < 0 ? -1 : k + 1; p >= 0; p++) {
        if ((p = gs_fitq_next_fit(&o->fa, p, left)) < 0) break;
        int32_t s = gs_fitq_slot(&o->fa, p);
        if (o->nxs == o->capxs) {
            size_t nc = o->capxs ? 2 * o->capxs : 64;
            int32_t *v = realloc(o->xs, nc * sizeof *v);
            if (!v) return GS_ENOMEM;
            o->xs = v;
            o->capxs = nc;
        }
        o->xs[o->nxs++] = s;
        o->inx[s] = 1;
        left -= gs_engine_job(e, (size_t)s)->req_gpus;
    }
    /* stops first (apply_native's phase 0: a rigid job left without GPUs) */
    for (int64_t p = k; p >= 0 && !rc; p++) {
        if ((p = gs_fitq_next_flag(&o->fa, p, GS_FITQ_RUN)) < 0) break;
        int32_t s = gs_fitq_slot(&o->fa, p);
        gs_job *j = gs_policy_job(e, (size_t)s);
        if (o->inx[s]) continue;
        if (j->state == GS_JOB_RUNNING)
            rc = fail_rc(e,
                         gs_engine_preempt(e, j, "optimus: its GPUs have a larger marginal gain"));
        if (j->state != GS_JOB_RUNNING) gs_fitq_flag(&o->fa, s, GS_FITQ_RUN, 0);
        if (j->state == GS_JOB_PENDING) gs_fitq_flag(&o->fa, s, GS_FITQ_PEND, 1);
    }
    /* then the starts, in slot order (phase 2) */
    for (int64_t p = 0, i = 0; !rc;) {
        int64_t q = k < 0 || p < k ? gs_fitq_next_flag(&o->fa, p, GS_FITQ_PEND) : -1;
        if (q >= 0 && k >= 0 && q >= k) q = -1;
        int32_t s;
        if (q >= 0) {
            s = gs_fitq_slot(&o->fa, q);
            p = q + 1;
        } else if ((size_t)i < o->nxs) {
            s = o->xs[i++];
        } else {
            break;
        }
        gs_job *j = gs_policy_job(e, (size_t)s);
        if (j->state != GS_JOB_PENDING) {
            if (q >= 0) gs_fitq_flag(&o->fa, s, GS_FITQ_PEND, 0);
            continue;
        }
        int n = j->req_gpus;
        int r = gs_mostfree_place(c, n, j->gpus_per_task, j->gpu_type, o->gpus);
        if (!r) r = gs_engine_start(e, j, o->gpus, n);
        if (r && r != GS_ENOMEM) gs_engine_set_reason(e, j, "Resources");
        if (!(rc = fail_rc(e, r))) rc = started(o, j, r);
    }
    /* the waiting jobs given no GPUs: the no-gain reason */
    for (int32_t s = gs_jobq_first(&o->dirty), nx; s >= 0 && !rc; s = nx) {
        nx = gs_jobq_next(&o->dirty, s);
        const gs_job *j = gs_engine_job(e, (size_t)s);
        if (!gs_jobq_contains(&o->act, s) || j->state != GS_JOB_PENDING) {
            gs_jobq_remove(&o->dirty, s);
            continue;
        }
        int admitted = in_fa(o, j) && (o->inx[s] || k < 0 || o->fa.pos[s] < k);
        if (admitted) continue; /* its start failed: "Resources", looked at again next time */
        gs_engine_set_reason(e, j, "Resources (optimus: no marginal gain left)");
        gs_jobq_remove(&o->dirty, s);
    }
    for (size_t i = 0; i < o->nxs; i++) o->inx[o->xs[i]] = 0;
    o->nxs = 0;
    return rc;
}

static int opt_schedule(void *st)
{
    opt *o = st;
    gs_time now = gs_engine_now(o->e);
    int tick = o->tick_due, rc = 0;
    o->tick_due = 0;
    int rigid = !o->parity && !o->adopted && !o->nelastic;
    if (tick && rigid && o->demand <= gs_cluster_cell(gs_engine_cluster(o->e), 0)->healthy) {
        rc = tick_all_fit(o);
    } else if (tick && rigid) {
        rc = tick_greedy(o);
    } else if (tick) {
        size_t k = 0;
        o->fa_bad = 1; /* its starts and stops do not keep fa's flags */
        rc = size_all(o, &k);
        if (!rc) rc = o->parity ? apply_parity(o, k) : apply_native(o, k);
    }
    if (!rc && o->nactive && o->armed_at == GS_TIME_NONE) rc = arm(o, now + 1);
    return rc;
}

static int opt_check(void *st, gs_diag *d)
{
    opt *o = st;
    size_t n = gs_engine_njobs(o->e), k = 0;
    for (size_t s = 0; s < n; s++) {
        const gs_job *j = gs_engine_job(o->e, s);
        k += j->arrived && !gs_job_state_final(j->state);
    }
    if (k != o->nactive)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "optimus: %zu active jobs, counted %zu", k,
                           o->nactive);
    if (!o->fa_bad && !gs_engine_error(o->e) && gs_fitq_total(&o->fa) != o->demand)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "optimus: rigid jobs ask for %lld GPUs, fa holds %lld",
                           (long long)o->demand, (long long)gs_fitq_total(&o->fa));
    return 0;
}

static const gs_policy_ops gs_policy_optimus = {
    .name = "optimus",
    .summary = "GPUs by marginal gain every interval (Optimus; with elastic_mode=parity the "
               "Pollux artifact's Optimus+Oracle+TunedJobs)",
    .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_ORACLE,
    .create = opt_create,
    .destroy = opt_destroy,
    .on_arrival = opt_arrival,
    .on_adopt = opt_adopt, /* every active job, running or not, is counted */
    .on_requeue = opt_requeue,
    .on_finish = opt_finish,
    .on_withdraw = opt_finish, /* forgets a waiting job, as a cancel */
    .on_timer = opt_timer,
    .schedule = opt_schedule,
    .check = opt_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_optimus[] = {{90, &gs_policy_optimus}, {0, NULL}};
