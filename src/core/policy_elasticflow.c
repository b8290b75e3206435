/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_elasticflow.c - ElasticFlow (Gu et al., ASPLOS'23): deadline-aware
 * elastic scheduling with admission control.  Our reading of the paper and
 * its artifact (no code taken):
 *
 *   plan      Jobs with a deadline, in deadline order, each take their
 *             minimum satisfactory share of a free-GPU timeline that starts
 *             with every healthy GPU free: the smallest power-of-two level q
 *             such that running at q (less where fewer GPUs are left, down to
 *             the largest power of two that is free) from its deadline
 *             backwards finishes its remaining work in time, after the cost of
 *             moving to q (drain and relaunch, from the engine's cost model).  The
 *             plan is reserved (as late as possible), so earlier
 *             time stays free for later arrivals.
 *   admit     A job arriving with a deadline is admitted when the plan with it
 *             keeps every job feasible that was feasible without it; else it
 *             is rejected at once (REJECTED, with the reason).  Jobs without a
 *             deadline are best effort: admitted, served from leftovers.
 *   now       Each job gets its plan's level at the current instant; a running
 *             job keeps a larger size while the total allows it (no churn);
 *             the GPUs left over go one level (x2) at a time to the job with
 *             the largest marginal return, the running time saved per extra GPU
 *             (remaining work / speed(k) - remaining work / speed(2k), over k),
 *             a job holding nothing first.  Sizes are powers of two up to the
 *             job's max_gpus and, with throughput tables, the size of its best
 *             measured throughput.
 *   place     Buddy placement: a power-of-two block aligned on its size inside
 *             a node, whole nodes beyond (elastic_util.c).
 *   when      On every arrival and completion, and every 'slot' (60 s, the
 *             artifact's scheduling_slot in simulation; --set slot=240s for
 *             its testbed) while jobs are active; sizes change through
 *             gs_engine_rescale (POLICY: rescale_gap and max_rescales apply)
 *             with a reason the user can read.
 *
 * Parameters: slot (duration, default 60s); full_plan (bool, default off: FULL decisions
 * only, the same as the others but slower - to check them).
 * Cost: a job joins and leaves the active list in O(log n) (a binary search; a job that
 * leaves is marked and the list compacted once half of it is marked).  A plan over all
 * active jobs is needed only while some job has a deadline or is elastic (FULL): with rigid
 * jobs only, a job's level is its size while it fits what the jobs before it left, else 0
 * (the plan, the smallest-level and keep-size rounds and the marginal returns give that, see
 * rigid_ok): when what all ask fits the healthy GPUs (FAST) a pass only starts the waiting
 * jobs, kept in their own ordered list; otherwise (RIGID) one walk of the list, ending when
 * no GPU is left, finds the waiting jobs to start.
 *
 * Invariants: 'act' holds exactly the admitted arrived jobs that are not
 * final (entries of jobs that left are marked -1), sorted by (deadline, slot) with
 * best-effort jobs last; 'pend' holds, in the same order, every PENDING job of 'act' (and
 * maybe some that left that state since; not once force_slow is set, when only the full
 * passes run); nslow, ntyped and sumreq count the live entries
 * of 'act' (elastic or deadline jobs, jobs naming a GPU type, requested GPUs); targets are
 * powers of two within each job's levels (or its requested size for a rigid
 * job) and sum to at most the healthy GPUs, those of the jobs naming a GPU
 * type to at most the healthy GPUs of that type (the plan's timeline counts
 * GPUs of every type together: a typed job's level is capped by its type's); the timeline's free
 * counts are never negative.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elastic_util.h"
#include "gsched/goodput.h"
#include "gsched/policy.h"

#define TAG_SLOT 1

enum { FULL, FAST, RIGID }; /* decisions: a plan; every job at its size; rigid first fit */

typedef struct seg {
    gs_time t; /* start; the segment ends where the next starts (the last: never) */
    int free;
} seg;

typedef struct ef {
    gs_engine *e;
    gs_time slot;
    int32_t *act;   /* admitted active jobs (slots, -1 once gone), in plan order */
    int32_t *aslot; /* the slot of every entry of act, gone or not (its key with akey) */
    gs_time *akey;  /* the deadline of every entry (GS_TIME_MAX: none) */
    size_t nact, capact, ndead;
    int *target, *plan_now; /* by position in act */
    int32_t *pend;          /* jobs of act that may be PENDING, in act's order */
    gs_time *pkey;
    size_t npend, cappend;
    size_t nslow, ntyped; /* live jobs of act with a deadline or elastic; naming a type */
    long long sumreq;     /* GPUs the live jobs of act ask for */
    int32_t *areq;        /* the GPUs every entry of act asks for */
    int32_t *take;        /* RIGID: the waiting jobs whose target is their size, in order */
    size_t ntake;
    int mode;       /* how the last decision was taken: FULL, FAST, RIGID */
    int full_plan;  /* parameter full_plan: FULL decisions only (to check the others) */
    int force_slow; /* a rigid job was adopted at another size than it asks, or pend
                       could not grow (GS_ENOMEM): FULL passes from then on */
    seg *tl;
    size_t ntl, captl;
    seg *iv; /* scratch: intervals of one reservation (start, GPUs) and their ends */
    gs_time *ivend;
    int dirty;
    gs_time timer_at;
    char why[256];
} ef;

/* ---- timeline of free GPUs ------------------------------------------------------------- */

static void tl_reset(ef *f, gs_time now, int total)
{
    f->ntl = 1;
    f->tl[0] = (seg){now, total};
}

/* Make t a segment start (t > tl[0].t); returns its index or GS_ENOMEM. */
static int tl_split(ef *f, gs_time t)
{
    size_t i = 0;
    while (i + 1 < f->ntl && f->tl[i + 1].t <= t) i++;
    if (f->tl[i].t == t) return (int)i;
    if (f->ntl == f->captl) {
        size_t nc = f->captl * 2;
        seg *n = realloc(f->tl, nc * sizeof *n);
        if (!n) return GS_ENOMEM;
        f->tl = n;
        seg *v = realloc(f->iv, nc * sizeof *v);
        if (!v) return GS_ENOMEM;
        f->iv = v;
        gs_time *ve = realloc(f->ivend, nc * sizeof *ve);
        if (!ve) return GS_ENOMEM;
        f->ivend = ve;
        f->captl = nc;
    }
    memmove(&f->tl[i + 2], &f->tl[i + 1], (f->ntl - i - 1) * sizeof *f->tl);
    f->tl[i + 1] = (seg){t, f->tl[i].free};
    f->ntl++;
    return (int)i + 1;
}

static int tl_reserve(ef *f, gs_time t0, gs_time t1, int k)
{
    if (k <= 0 || t1 <= t0) return 0;
    int a = tl_split(f, t0);
    if (a < 0) return a;
    int b = tl_split(f, t1);
    if (b < 0) return b;
    for (int i = a; i < b; i++) f->tl[i].free -= k;
    return 0;
}

/* ---- job arithmetic --------------------------------------------------------------------- */

static int rigid(const gs_job *j)
{
    return j->max_gpus <= 0;
}

/* The GPUs j may ever hold of 'total': no more than the healthy ones of its type. */
static int total_for(const ef *f, const gs_job *j, int total)
{
    if (j->gpu_type < 0) return total;
    int t = eu_healthy(gs_engine_cluster(f->e), j->gpu_type);
    return t < total ? t : total;
}

/* Largest level of j: a power of two (or its size when rigid). */
static int cap_of(const ef *f, const gs_job *j, int total)
{
    if (rigid(j)) return j->req_gpus;
    total = total_for(f, j, total);
    int cap = j->max_gpus;
    const gs_tput *t = gs_tput_of(f->e);
    if (t) {
        int row = gs_tput_find(t, j->app, j->batch_size);
        int best = row >= 0 ? gs_tput_best_gpus(t, row) : 0;
        if (best > 0 && best < cap) cap = best;
    }
    if (cap > total) cap = total;
    return eu_floor_pow2(cap);
}

/* Next level above k for j (0 when none). */
static int next_level(const ef *f, const gs_job *j, int k, int total)
{
    int cap = cap_of(f, j, total);
    if (rigid(j)) return k == 0 && cap <= total_for(f, j, total) ? cap : 0;
    for (int q = k ? k * 2 : 1; q <= cap; q *= 2)
        if (gs_job_size_valid(j, q)) return q;
    return 0;
}

/* Largest valid level of j that is <= n (0 when none). */
static int level_below(const ef *f, const gs_job *j, int n, int total)
{
    int cap = cap_of(f, j, total);
    if (rigid(j)) return cap <= n ? cap : 0;
    for (int q = eu_floor_pow2(n < cap ? n : cap); q >= 1; q /= 2)
        if (gs_job_size_valid(j, q)) return q;
    return 0;
}

static double speed(const ef *f, const gs_job *j, int k)
{
    return k > 0 ? gs_engine_job_rate(f->e, j, gs_engine_job_gpu_type(f->e, j), k) : 0;
}

/* Seconds j needs at k GPUs for its remaining work (inf at 0). */
static double time_at(const ef *f, const gs_job *j, int k)
{
    double s = speed(f, j, k);
    if (!(s > 0)) return INFINITY;
    return (double)gs_job_remaining(j, gs_engine_now(f->e)) / s / 1e6;
}

/* Time without progress for j to run at q from now on (the engine's cost model): none when
 * it runs at q already or has never started (a first start is free unless launch_cost=on);
 * a drain and a relaunch to change size; a restart to come back from a pause. */
static gs_time change_cost(const gs_engine *e, const gs_job *j, int q)
{
    const gs_costs *c = gs_engine_costs(e);
    if (j->state == GS_JOB_RUNNING)
        return j->gpus == q
                   ? 0
                   : gs_costs_drain(c, j->model, j->gpus) + gs_costs_relaunch(c, j->model, q);
    if (j->first_start == GS_TIME_NONE) return 0;
    return gs_costs_restart(c, j->model, q, 1);
}

/*
 * Minimum satisfactory share of j on the timeline: reserve it and return its level at the
 * current instant (>= 0), or -1 when its deadline cannot be met (nothing reserved).
 */
static int mss(ef *f, const gs_job *j, int total, int *level_out)
{
    gs_engine *e = f->e;
    gs_time now = gs_engine_now(e);
    double work = (double)gs_job_remaining(j, now);
    int cap = cap_of(f, j, total);
    *level_out = 0;
    for (int q = rigid(j) ? cap : 1; q >= 1 && q <= cap; q = rigid(j) ? cap + 1 : q * 2) {
        if (!rigid(j) && !gs_job_size_valid(j, q)) continue;
        gs_time dl = j->deadline - change_cost(e, j, q);
        if (dl <= now) return -1;
        /* walk back from the deadline */
        double prog = 0;
        gs_time cross = GS_TIME_NONE;
        size_t last = 0;
        while (last + 1 < f->ntl && f->tl[last + 1].t < dl) last++;
        for (size_t i = last + 1; i-- > 0;) {
            gs_time s0 = f->tl[i].t,
                    s1 = i + 1 < f->ntl && f->tl[i + 1].t < dl ? f->tl[i + 1].t : dl;
            int a = level_below(f, j, f->tl[i].free < q ? f->tl[i].free : q, total);
            if (a <= 0 || s1 <= s0) continue;
            double r = speed(f, j, a);
            if (!(r > 0)) continue;
            double got = r * (double)(s1 - s0);
            if (prog + got >= work) {
                /* it starts in this segment: at the slot boundary before the point it must */
                double need = (work - prog) / r;
                gs_time st = s1 - (gs_time)ceil(need);
                st = now + (st - now) / f->slot * f->slot;
                cross = st > s0 ? st : s0;
                break;
            }
            prog += got;
        }
        if (cross == GS_TIME_NONE) continue;
        /* reserve from cross to the deadline (allocations read before any change) */
        int now_level = 0;
        size_t niv = 0;
        for (size_t i = 0; i < f->ntl; i++) {
            gs_time s0 = f->tl[i].t, s1 = i + 1 < f->ntl ? f->tl[i + 1].t : GS_TIME_MAX;
            if (s1 <= cross || s0 >= dl) continue;
            int a = level_below(f, j, f->tl[i].free < q ? f->tl[i].free : q, total);
            gs_time r0 = s0 > cross ? s0 : cross, r1 = s1 < dl ? s1 : dl;
            if (r0 == now) now_level = a;
            f->iv[niv++] = (seg){r0, a};
            f->ivend[niv - 1] = r1;
        }
        for (size_t i = 0; i < niv; i++) {
            int rc = tl_reserve(f, f->iv[i].t, f->ivend[i], f->iv[i].free);
            if (rc) return rc;
        }
        *level_out = q;
        return now_level;
    }
    return -1;
}

/* ---- the plan ---------------------------------------------------------------------------- */

static int ensure_cap(ef *f, size_t n)
{
    if (n <= f->capact) return 0;
    size_t nc = f->capact ? f->capact * 2 : 64;
    while (nc < n) nc *= 2;
    int32_t *a = realloc(f->act, nc * sizeof *a);
    if (!a) return GS_ENOMEM;
    f->act = a;
    int32_t *as = realloc(f->aslot, nc * sizeof *as);
    if (!as) return GS_ENOMEM;
    f->aslot = as;
    gs_time *ak = realloc(f->akey, nc * sizeof *ak);
    if (!ak) return GS_ENOMEM;
    f->akey = ak;
    int32_t *aq = realloc(f->areq, nc * sizeof *aq);
    if (!aq) return GS_ENOMEM;
    f->areq = aq;
    int32_t *tk = realloc(f->take, nc * sizeof *tk);
    if (!tk) return GS_ENOMEM;
    f->take = tk;
    int *t = realloc(f->target, nc * sizeof *t);
    if (!t) return GS_ENOMEM;
    f->target = t;
    int *p = realloc(f->plan_now, nc * sizeof *p);
    if (!p) return GS_ENOMEM;
    f->plan_now = p;
    f->capact = nc;
    return 0;
}

static gs_time key_of(const gs_job *j)
{
    return j->deadline == GS_TIME_NONE ? GS_TIME_MAX : j->deadline;
}

static int before(const gs_job *a, const gs_job *b)
{
    gs_time ka = key_of(a), kb = key_of(b);
    return ka != kb ? ka < kb : a->slot < b->slot;
}

/* First position of keys/slots[0..n) (sorted) whose (key, slot) is not before (k, s). */
static size_t lower(const gs_time *keys, const int32_t *slots, size_t n, gs_time k, int32_t s)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < k || (keys[mid] == k && slots[mid] < s))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int healthy(const ef *f)
{
    return gs_cluster_cell(gs_engine_cluster(f->e), 0)->healthy;
}

/*
 * Plan the jobs in act (skipping position 'skip', -1 = none): each deadline job's level now
 * into plan_now (-1 = infeasible).  Returns the number of infeasible jobs or GS_ENOMEM.
 */
static int plan(ef *f, long skip)
{
    int total = healthy(f);
    tl_reset(f, gs_engine_now(f->e), total);
    int bad = 0;
    for (size_t i = 0; i < f->nact; i++) {
        f->plan_now[i] = 0;
        if ((long)i == skip || f->act[i] < 0) continue;
        const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
        if (j->deadline == GS_TIME_NONE) continue;
        int q;
        int now = mss(f, j, total, &q);
        if (now == GS_ENOMEM) return now;
        if (now < 0) bad++;
        f->plan_now[i] = now;
    }
    return bad;
}

/* Levels now: plan, keep running sizes the total allows, leftovers by marginal return; the
 * levels taken fit the healthy GPUs, and those of jobs naming a GPU type the healthy GPUs of
 * that type (a level beyond them could never be placed: the job would wait for ever). */
static int decide(ef *f)
{
    int bad = plan(f, -1);
    if (bad < 0) return bad;
    int total = healthy(f);
    eu_budget b;
    eu_budget_init(&b, gs_engine_cluster(f->e));
    for (size_t i = 0; i < f->nact; i++) {
        f->target[i] = 0;
        if (f->act[i] < 0) continue;
        const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
        int k = f->plan_now[i] > 0 ? f->plan_now[i] : 0, left = eu_budget_left(&b, j);
        if (k > left) k = level_below(f, j, left, total); /* typed: the plan spans every type */
        f->target[i] = k;
        eu_budget_take(&b, j, k);
    }
    /* every job without GPUs in its plan now gets its smallest level, in deadline order */
    for (size_t i = 0; i < f->nact; i++) {
        if (f->act[i] < 0) continue;
        const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
        int k = f->target[i] ? 0 : next_level(f, j, 0, total);
        if (k > 0 && k <= eu_budget_left(&b, j)) {
            f->target[i] = k;
            eu_budget_take(&b, j, k);
        }
    }
    /* a running job keeps a larger size while the total allows it (no churn), in deadline
     * order */
    for (size_t i = 0; i < f->nact; i++) {
        if (f->act[i] < 0) continue;
        const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
        int cur = j->state == GS_JOB_RUNNING ? j->gpus : 0;
        if (j->state == GS_JOB_DRAINING) cur = j->target_gpus;
        if (cur > f->target[i] && cur - f->target[i] <= eu_budget_left(&b, j)) {
            eu_budget_take(&b, j, cur - f->target[i]);
            f->target[i] = cur;
        }
    }
    for (;;) {
        long best = -1;
        double bm = 0;
        int bnext = 0;
        for (size_t i = 0; i < f->nact; i++) {
            if (f->act[i] < 0) continue;
            const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
            int k = f->target[i], nx = next_level(f, j, k, total);
            if (nx <= 0 || nx - k > eu_budget_left(&b, j)) continue;
            double m = k == 0 ? INFINITY : (time_at(f, j, k) - time_at(f, j, nx)) / (nx - k);
            if (!(m > 0)) continue;
            if (best < 0 || m > bm) best = (long)i, bm = m, bnext = nx;
        }
        if (best < 0) break;
        eu_budget_take(&b, gs_engine_job(f->e, (size_t)f->act[best]), bnext - f->target[best]);
        f->target[best] = bnext;
    }
    return 0;
}

/* Carry the targets out: shrinks first (they free GPUs), then grows and starts. */
static int enact(ef *f)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < f->nact; i++) {
            if (f->act[i] < 0) continue;
            const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
            int cur = j->state == GS_JOB_RUNNING ? j->gpus : 0, t = f->target[i];
            if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PENDING) continue;
            if (pass == 0 ? t >= cur : t <= cur) continue;
            if (j->state == GS_JOB_RUNNING && !rigid(j)) {
                double t0 = time_at(f, j, cur), t1 = time_at(f, j, t);
                if (t > cur)
                    snprintf(f->why, sizeof f->why,
                             "elasticflow: grew %d->%d GPUs: idle GPUs, where they save the most "
                             "time per GPU (%.0f s -> %.0f s left)",
                             cur, t, t0, t1);
                else if (t > 0)
                    snprintf(f->why, sizeof f->why,
                             "elasticflow: shrank %d->%d GPUs: other jobs' deadlines need them; "
                             "%.0f s of work left at %d GPUs%s",
                             cur, t, t1, t,
                             j->deadline != GS_TIME_NONE ? ", its deadline still planned" : "");
                else
                    snprintf(f->why, sizeof f->why,
                             "elasticflow: paused %d->0 GPUs: other jobs' deadlines need them "
                             "now; its plan runs it later",
                             cur);
            } else if (j->state == GS_JOB_RUNNING) {
                continue; /* a rigid job keeps its size */
            }
            int rc = eu_apply(f->e, j, t, 1, f->why);
            if (rc < 0) return rc;
            if (rc > 0 && j->state == GS_JOB_PENDING)
                gs_engine_set_reason(f->e, j,
                                     t > 0 ? "Resources (elasticflow: GPUs of its plan busy)"
                                           : "elasticflow: its plan starts it later");
        }
    return 0;
}

/*
 * Every active job rigid, none with a deadline, what they ask for within the healthy GPUs, and
 * one GPU type or no job naming one: then decide() gives every job its size - the plan has
 * no job to reserve for; the smallest-level round gives each job its size, as the budget
 * holds what all of them ask; a running rigid job holds its size (the engine never resizes
 * it), so there is no larger size to keep; a rigid job has no next level - and enact() only
 * starts the waiting jobs in their order (it leaves running rigid jobs alone).
 */
static int rigid_ok(const ef *f)
{
    return !f->nslow && !f->force_slow &&
           (!f->ntyped || gs_cluster_ngpu_types(gs_engine_cluster(f->e)) <= 1);
}

/*
 * decide() when every active job is rigid and none has a deadline (rigid_ok) but what they
 * ask may exceed the healthy GPUs: the plan reserves nothing, the smallest-level round gives
 * each job in order its size while that fits what is left (first fit) and a job left out
 * stays out (a running one holds its size, more than was left at its turn; it has no next
 * level), so a target is a job's size or 0.  enact() then only starts the waiting jobs given
 * their size: they are listed in 'take' (a waiting job is in 'pend', in the same order).  The
 * walk ends once no GPU is left.
 */
static void decide_rigid(ef *f)
{
    int left = healthy(f);
    size_t p = 0;
    f->ntake = 0;
    for (size_t i = 0; i < f->nact && left > 0; i++) {
        int req = f->areq[i];
        if (f->act[i] < 0 || req <= 0 || req > left) continue;
        left -= req;
        while (p < f->npend &&
               (f->pkey[p] < f->akey[i] || (f->pkey[p] == f->akey[i] && f->pend[p] < f->act[i])))
            p++;
        if (p < f->npend && f->pend[p] == f->act[i] &&
            gs_engine_job(f->e, (size_t)f->act[i])->state == GS_JOB_PENDING)
            f->take[f->ntake++] = f->act[i];
    }
}

/* enact() after decide_rigid(): the listed jobs still waiting start at their size. */
static int enact_take(ef *f)
{
    for (size_t i = 0; i < f->ntake; i++) {
        const gs_job *j = gs_engine_job(f->e, (size_t)f->take[i]);
        if (j->state != GS_JOB_PENDING) continue;
        int rc = eu_apply(f->e, j, j->req_gpus, 1, f->why);
        if (rc < 0) return rc;
        if (rc > 0 && j->state == GS_JOB_PENDING)
            gs_engine_set_reason(f->e, j, "Resources (elasticflow: GPUs of its plan busy)");
    }
    return 0;
}

/* enact() for the targets rigid_ok() stands for when all that is asked fits: the waiting jobs start
 * at their size, in act's order; 'pend' keeps those still waiting. */
static int enact_fast(ef *f)
{
    size_t w = 0, i = 0;
    int rc = 0;
    for (; i < f->npend && rc >= 0; i++) {
        const gs_job *j = gs_engine_job(f->e, (size_t)f->pend[i]);
        if (j->state == GS_JOB_PENDING) {
            rc = eu_apply(f->e, j, j->req_gpus, 1, f->why);
            if (rc > 0 && j->state == GS_JOB_PENDING)
                gs_engine_set_reason(f->e, j, "Resources (elasticflow: GPUs of its plan busy)");
        }
        if (j->state == GS_JOB_PENDING || rc < 0) {
            f->pend[w] = f->pend[i];
            f->pkey[w++] = f->pkey[i];
        }
    }
    for (; i < f->npend; i++) {
        f->pend[w] = f->pend[i];
        f->pkey[w++] = f->pkey[i];
    }
    f->npend = w;
    return rc < 0 ? rc : 0;
}

/* ---- the active and waiting lists ------------------------------------------------------ */

static void count(ef *f, const gs_job *j, int sign)
{
    if (j->deadline != GS_TIME_NONE || !rigid(j)) f->nslow += (size_t)(long)sign;
    if (j->gpu_type >= 0) f->ntyped += (size_t)(long)sign;
    f->sumreq += sign * (long long)j->req_gpus;
}

/* Insert j among the active jobs in their order; its position in *at.  0 or GS_ENOMEM. */
static int act_insert(ef *f, const gs_job *j, size_t *at)
{
    int rc = ensure_cap(f, f->nact + 1);
    if (rc) return rc;
    gs_time key = key_of(j);
    size_t k = lower(f->akey, f->aslot, f->nact, key, j->slot), n = f->nact - k;
    memmove(&f->act[k + 1], &f->act[k], n * sizeof *f->act);
    memmove(&f->aslot[k + 1], &f->aslot[k], n * sizeof *f->aslot);
    memmove(&f->akey[k + 1], &f->akey[k], n * sizeof *f->akey);
    memmove(&f->areq[k + 1], &f->areq[k], n * sizeof *f->areq);
    f->areq[k] = j->req_gpus;
    f->act[k] = f->aslot[k] = j->slot;
    f->akey[k] = key;
    f->nact++;
    count(f, j, +1);
    *at = k;
    return 0;
}

/* Take the job at position k (live) out of act at once (positions after it move). */
static void act_remove_at(ef *f, size_t k)
{
    count(f, gs_engine_job(f->e, (size_t)f->act[k]), -1);
    size_t n = f->nact - k - 1;
    memmove(&f->act[k], &f->act[k + 1], n * sizeof *f->act);
    memmove(&f->aslot[k], &f->aslot[k + 1], n * sizeof *f->aslot);
    memmove(&f->akey[k], &f->akey[k + 1], n * sizeof *f->akey);
    memmove(&f->areq[k], &f->areq[k + 1], n * sizeof *f->areq);
    f->nact--;
}

/* j leaves act (if listed): its entry is marked, the list compacted when half is marked
 * (positions move: callers mark the plan dirty). */
static void act_drop(ef *f, const gs_job *j)
{
    size_t k = lower(f->akey, f->aslot, f->nact, key_of(j), j->slot);
    if (k < f->nact && f->act[k] == j->slot) {
        f->act[k] = -1;
        f->ndead++;
        count(f, j, -1);
    }
    if (f->ndead > 32 && 2 * f->ndead > f->nact) {
        size_t w = 0;
        for (size_t i = 0; i < f->nact; i++)
            if (f->act[i] >= 0) {
                f->act[w] = f->act[i];
                f->aslot[w] = f->aslot[i];
                f->areq[w] = f->areq[i];
                f->akey[w++] = f->akey[i];
            }
        f->nact = w;
        f->ndead = 0;
    }
    k = lower(f->pkey, f->pend, f->npend, key_of(j), j->slot);
    if (k < f->npend && f->pend[k] == j->slot) {
        memmove(&f->pend[k], &f->pend[k + 1], (f->npend - k - 1) * sizeof *f->pend);
        memmove(&f->pkey[k], &f->pkey[k + 1], (f->npend - k - 1) * sizeof *f->pkey);
        f->npend--;
    }
}

/* j (in act) may be PENDING: listed in pend, once.  0 or GS_ENOMEM. */
static int pend_add(ef *f, const gs_job *j)
{
    gs_time key = key_of(j);
    size_t k = lower(f->pkey, f->pend, f->npend, key, j->slot);
    if (k < f->npend && f->pend[k] == j->slot) return 0;
    if (f->npend == f->cappend) {
        size_t nc = f->cappend ? 2 * f->cappend : 64;
        int32_t *p = realloc(f->pend, nc * sizeof *p);
        if (p) f->pend = p;
        gs_time *q = p ? realloc(f->pkey, nc * sizeof *q) : NULL;
        if (!q) {
            f->force_slow = 1; /* pend misses j: enact() looks at every job instead */
            return GS_ENOMEM;
        }
        f->pkey = q;
        f->cappend = nc;
    }
    memmove(&f->pend[k + 1], &f->pend[k], (f->npend - k) * sizeof *f->pend);
    memmove(&f->pkey[k + 1], &f->pkey[k], (f->npend - k) * sizeof *f->pkey);
    f->pend[k] = j->slot;
    f->pkey[k] = key;
    f->npend++;
    return 0;
}

/* ---- hooks ------------------------------------------------------------------------------ */

static int ef_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    ef *f = calloc(1, sizeof *f);
    if (!f) return GS_ENOMEM;
    f->e = e;
    int rc = gs_params_get_duration(p, "slot", 60 * GS_SEC, &f->slot, d);
    if (!rc && f->slot < GS_SEC) rc = gs_diag_set(d, GS_EINVAL, 0, 0, "slot must be >= 1s");
    if (!rc) rc = gs_params_get_bool(p, "full_plan", 0, &f->full_plan, d);
    f->captl = 64;
    f->tl = malloc(f->captl * sizeof *f->tl);
    f->iv = malloc(f->captl * sizeof *f->iv);
    f->ivend = malloc(f->captl * sizeof *f->ivend);
    if (!rc && (!f->tl || !f->iv || !f->ivend)) rc = GS_ENOMEM;
    if (rc) {
        free(f->tl);
        free(f->iv);
        free(f->ivend);
        free(f);
        return rc;
    }
    f->timer_at = GS_TIME_NONE;
    gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = f;
    return 0;
}

static void ef_destroy(void *st)
{
    ef *f = st;
    if (!f) return;
    free(f->act);
    free(f->aslot);
    free(f->akey);
    free(f->areq);
    free(f->take);
    free(f->pend);
    free(f->pkey);
    free(f->target);
    free(f->plan_now);
    free(f->tl);
    free(f->iv);
    free(f->ivend);
    free(f);
}

static int arm(ef *f)
{
    gs_time now = gs_engine_now(f->e);
    if (f->nact == f->ndead || (f->timer_at != GS_TIME_NONE && f->timer_at > now)) return 0;
    f->timer_at = now + f->slot;
    return gs_engine_set_timer(f->e, f->timer_at, TAG_SLOT);
}

/* A running job adopted (daemon restart, reconfiguration): it joins the active jobs in their
 * order without admission control (it runs already). */
static int ef_adopt(void *st, gs_job *j)
{
    ef *f = st;
    size_t at;
    int rc = act_insert(f, j, &at);
    if (!rc && j->state == GS_JOB_PENDING) rc = pend_add(f, j);
    if (rc) return rc;
    if (rigid(j) && j->state == GS_JOB_RUNNING && j->gpus != j->req_gpus) f->force_slow = 1;
    f->dirty = 1;
    return arm(f);
}

static int ef_arrival(void *st, gs_job *j)
{
    ef *f = st;
    size_t at;
    int rc = act_insert(f, j, &at);
    if (rc) return rc;
    if (j->deadline != GS_TIME_NONE) {
        int without = plan(f, (long)at);
        if (without < 0) return without;
        int with = plan(f, -1);
        if (with < 0) return with;
        if (with > without) {
            int alone = f->plan_now[at] < 0;
            act_remove_at(f, at);
            gs_time left = j->deadline - gs_engine_now(f->e);
            if (!alone)
                snprintf(f->why, sizeof f->why,
                         "elasticflow: rejected: admitting it would make an admitted job miss "
                         "its deadline");
            else
                snprintf(f->why, sizeof f->why,
                         "elasticflow: rejected: its deadline (in %.0f s) cannot be met with "
                         "the GPUs admitted jobs leave free (up to %d GPUs, %s)",
                         gs_time_to_sec(left > 0 ? left : 0), cap_of(f, j, healthy(f)),
                         j->model ? j->model : "its model");
            return gs_engine_reject(f->e, j, f->why);
        }
    }
    rc = pend_add(f, j);
    if (rc) return rc;
    f->dirty = 1;
    return arm(f);
}

static int ef_requeue(void *st, gs_job *j)
{
    ef *f = st;
    f->dirty = 1;
    return pend_add(f, j);
}

static int ef_finish(void *st, gs_job *j)
{
    ef *f = st;
    act_drop(f, j);
    f->dirty = 1;
    gs_engine_request_pass(f->e); /* its GPUs go to the others now, even when nobody waits */
    return 0;
}

static int ef_timer(void *st, uint64_t tag)
{
    ef *f = st;
    if (tag != TAG_SLOT) return 0;
    f->timer_at = GS_TIME_NONE;
    f->dirty = 1;
    gs_engine_request_pass(f->e);
    return arm(f);
}

static int ef_node(void *st, int node, int down)
{
    ef *f = st;
    (void)node, (void)down;
    f->dirty = 1;
    gs_engine_request_pass(f->e);
    return 0;
}

static int ef_schedule(void *st)
{
    ef *f = st;
    if (f->dirty) {
        f->mode = f->full_plan || !rigid_ok(f) ? FULL : f->sumreq <= healthy(f) ? FAST : RIGID;
        int rc = f->mode == FULL ? decide(f) : 0;
        if (f->mode == RIGID) decide_rigid(f);
        if (rc < 0) return rc;
        f->dirty = 0;
    }
    return f->mode == FAST ? enact_fast(f) : f->mode == RIGID ? enact_take(f) : enact(f);
}

static int ef_check(void *st, gs_diag *d)
{
    ef *f = st;
    const gs_job *prev = NULL;
    size_t live = 0, nslow = 0, ntyped = 0;
    long long sumreq = 0;
    for (size_t i = 0; i < f->nact; i++) {
        if (i && (f->akey[i] < f->akey[i - 1] ||
                  (f->akey[i] == f->akey[i - 1] && f->aslot[i] <= f->aslot[i - 1])))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "elasticflow: list keys out of order");
        if (f->act[i] < 0) continue;
        const gs_job *j = gs_engine_job(f->e, (size_t)f->act[i]);
        if (gs_job_state_final(j->state) || !j->arrived)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "elasticflow: job %lld listed but %s",
                               (long long)j->id, gs_job_state_name(j->state));
        if (prev && before(j, prev))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "elasticflow: jobs out of deadline order");
        if (f->aslot[i] != j->slot || f->akey[i] != key_of(j) || f->areq[i] != j->req_gpus)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "elasticflow: job %lld listed by another key",
                               (long long)j->id);
        if (j->state == GS_JOB_PENDING && !f->force_slow) {
            size_t k = lower(f->pkey, f->pend, f->npend, key_of(j), j->slot);
            if (k >= f->npend || f->pend[k] != j->slot)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "elasticflow: waiting job %lld not in the waiting list",
                                   (long long)j->id);
        }
        prev = j;
        live++;
        nslow += j->deadline != GS_TIME_NONE || !rigid(j);
        ntyped += j->gpu_type >= 0;
        sumreq += j->req_gpus;
    }
    if (live + f->ndead != f->nact || nslow != f->nslow || ntyped != f->ntyped ||
        sumreq != f->sumreq)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "elasticflow: active-list counts are off");
    for (size_t i = 0; i < f->ntl; i++)
        if (f->tl[i].free < 0)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "elasticflow: negative free GPUs in plan");
    return 0;
}

static const gs_policy_ops gs_policy_elasticflow = {
    .name = "elasticflow",
    .summary = "deadline-aware elastic (ElasticFlow): admission by minimum satisfactory share, "
               "leftovers by marginal return, power-of-two buddy placement",
    .flags = 0, /* resizes through gs_engine_rescale, never gs_engine_preempt */
    .create = ef_create,
    .destroy = ef_destroy,
    .on_arrival = ef_arrival,
    .on_adopt = ef_adopt,
    .on_requeue = ef_requeue,
    .on_finish = ef_finish,
    .on_node = ef_node,
    .on_timer = ef_timer,
    .schedule = ef_schedule,
    .check = ef_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_elasticflow[] = {{100, &gs_policy_elasticflow}, {0, NULL}};
