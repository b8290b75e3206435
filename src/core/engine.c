/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.c - event queue, job lifecycle (elastic DRAINING/RESIZING included),
 * request validation, policy driver, progress-model hook, dry run
 * (gs_engine_probe), work-preserving reconfiguration (gs_engine_reconfigure).
 *
 * Invariants:
 *  - events pop in total order (time, kind, key, seq); kinds at one instant:
 *    completions, progress-model boundaries and drain ends, then cluster
 *    events (node events, then reconfigurations), then arrivals, then cancellations (SIM cancel
 * events: a job submitted and cancelled at one instant arrives first), then timers; then one policy
 * pass.  No decision depends on hash order or memory addresses.
 *  - a node is down in the cluster iff some reason holds (e->nstate: failed,
 *    drained, bad - each set and cleared on its own); a failure requeues the
 *    jobs on the node, a drain or a bad mark leaves them running; the policy's
 *    on_node hears of these only when the node's usability changes.  A GPU is
 *    down iff its node is, it is used outside (LIVE, e->out_mark) or it is
 *    marked bad (e->gbad; never also outside); a bad GPU's job runs on.
 *  - a job holds GPUs (alloc != NULL) iff it is RUNNING, PREEMPTED (LIVE) or
 *    DRAINING - never PENDING, SUSPENDED or final - and then nalloc + vanished
 *    == gpus (vanished > 0 only after a reconfiguration dropped GPUs of the
 *    run; such a run is uncharged); the cluster's owner of each
 *    of its GPUs is its slot, except for a packed guest, whose GPUs are owned
 *    by its host (pack_with) and shared by exactly the two of them;
 *    e->allocated equals the sum of nalloc over owners plus the GPUs reserved
 *    for draining jobs' next generations (e->reserved), e->packed over guests.
 *  - a DRAINING job with k' > 0 has resv = its next generation's GPUs (a
 *    valid size); those it does not hold are owned by it in the cluster from
 *    the decision on, so every owned GPU belongs to one job generation; its
 *    old GPUs free only at RESIZING (tr_resized).  Policy rescales respect
 *    the job's min_rescale_gap and max_rescales; failures never count as
 *    rescales.
 *  - a completion event carries the job's gen at scheduling time; any run or
 *    speed change bumps gen, so stale completions are dropped, not handled;
 *    when the heap is full they are dropped there first (heap_compact: a job's
 *    gen only grows), so the heap holds O(live events), never every run a
 *    time-slicing policy ever started.
 *  - remaining work never increases, except when a forced drain (LIVE: killed;
 *    SIM: a save longer than drain_timeout) throws away the work since the
 *    last checkpoint; it reaches 0 exactly at completion.
 *    Progress before progress_from is banked in 'progress'; a speed change
 *    banks first, so speed x time is exact between changes.
 *  - every mechanism cost is charged once, to the job that pays it, at the
 *    request that causes it (costs.h); policies never charge anything.
 *  - a mechanism in e->mech_off (the program's gs_engine_opts.mech_unsupported
 *    and LIVE mode's) is refused before any validation, with GS_EUNSUPPORTED and
 *    no change; SUSPEND and RESUME are refused together, so with them off no
 *    job is ever SUSPENDED.
 *  - every job-state transition is made by one tr_* function (named in job.h's
 *    diagram); jobs handed in from outside are const and resolved to the
 *    engine's own copy by slot (mut()).
 *  - a job's GPUs are grouped by task at the offsets gs_job_task_first gives
 *    (tasks may differ in size, job.h "Affinity groups"); every placement the
 *    engine takes keeps each task on one node and, except an adoption (a fact,
 *    not a decision), each withinOneCell group inside one cell of its type; a
 *    grouped job only waits under a policy with GS_POLICY_GROUPS (arrival
 *    rejects it otherwise, saying why).
 *  - gs_engine_probe leaves everything as it was: GPUs it releases
 *    tentatively are taken back before it returns; it interns nothing; its
 *    errors (GS_ENOMEM included) fail only the dry run, never latched.
 *  - a reconfiguration changes the engine only once nothing can fail (maps,
 *    arrays and the new policy made first); after one, a job requeued that can
 *    never fit is rejected at the end of its instant (recheck_requeued), so no
 *    job waits for ever.
 *  - the first hook error or allocation failure is latched in e->err (engine.h,
 *    "Errors"): the transition under way is completed or not started, never
 *    half-made, so the counters and allocations stay consistent; after that
 *    every entry point and request returns e->err and changes nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gsched/engine.h"
#include "gsched/policy.h"
#include "internal.h"

/* BOUNDARY (a progress-model rate change) and DRAINED (SIM: a drain's end) sit with the
 * completions; the relative order of the other kinds is what it always was */
enum ev_kind {
    EV_FINISH = 0,
    EV_BOUNDARY = 1,
    EV_DRAINED = 2,
    EV_NODE = 3,
    EV_RECONFIG = 4,
    EV_ARRIVAL = 5,
    EV_CANCEL = 6,
    EV_PROTECT = 7,
    EV_TIMER = 8
};

typedef struct ev {
    gs_time t;
    int32_t kind;
    int32_t key;  /* job slot (FINISH, BOUNDARY, DRAINED, ARRIVAL, CANCEL), node (NODE),
                     index in e->rcl (RECONFIG), 0 (TIMER) */
    uint32_t gen; /* FINISH, BOUNDARY, DRAINED: job gen; NODE: 1 = down, 0 = up, 2 | bad,
                     4 | drain (node_drain_event) */
    uint64_t seq;
    uint64_t tag; /* TIMER: the policy's tag; DRAINED: 1 = forced at the drain timeout;
                     CANCEL: the reason's id in e->strs */
} ev;

#define JOB_BLOCK_BITS 10
#define JOB_BLOCK      (1u << JOB_BLOCK_BITS)
#define FAIL_CACHE     16

typedef struct feas_entry {
    int ntasks, gpt, type, cpt, mem, level, scope, mode, valid;
    const char *why; /* interned reason, NULL when feasible */
} feas_entry;

#define FEAS_CACHE       32
#define ENGINE_MAX_TYPES 32 /* GPU types a cluster may have (gs_cluster_gpu_type) */
#define RATE_SLOTS       9  /* type rates cached per (model, GPU type): GPU counts 1..8, other */

typedef struct fail_entry {
    int ntasks, gpt, type, cpt, mem, level, scope;
    uint64_t epoch;
} fail_entry;

struct gs_engine {
    gs_cluster *c;
    gs_engine_opts opts;
    unsigned mech_off; /* GS_MECH_BITs refused: the program's mask and the mode's (mech_mask) */
    const gs_policy_ops *pol;
    void *pst;
    gs_observer_fn obs;
    void *obs_ud;
    gs_time now;
    int started; /* first instant seen */
    /* jobs */
    gs_job **blocks; /* NULL: a block whose every job was forgotten (issue 16, accounting) */
    size_t nblocks, njobs;
    /* forgotten final jobs (gs_engine_forget): one bit per slot, the count per block; a slot of a
     * freed block reads as 'tomb', a final job of no id that every loop skips */
    uint8_t *forgot;
    uint16_t *nforgot;
    gs_job tomb;
    int64_t next_id;
    idmap ids;
    strtab strs;  /* names, users, models */
    strtab vcs;   /* VC names -> dense index */
    strtab users; /* user names -> dense index */
    strtab models;
    /* events */
    ev *heap;
    size_t nheap, capheap;
    uint64_t seq;
    uint64_t events;
    /* counters */
    size_t npending, nrunning, nactive;
    int64_t pending_gpus; /* sum of gpus over arrived PENDING jobs */
    int allocated;
    /* placement scratch and failure cache */
    int *scratch;
    size_t capscratch;
    fail_entry fail[FAIL_CACHE];
    unsigned fail_next;
    uint64_t epoch;        /* bumps whenever GPUs are freed or come back */
    int err;               /* latched: the first hook error or allocation failure (see engine.h) */
    gs_locality max_level; /* widest locality the policy ever asks for */
    feas_entry feas[FEAS_CACHE]; /* topology is immutable: feasibility per shape never changes */
    unsigned feas_next;
    gs_costs costs;
    int stopping; /* GPUs held by PREEMPTED jobs */
    /* mechanisms */
    gs_profiles *profiles;
    gs_time *busy; /* per GPU: busy until then with a job that left it */
    /* per GPU: MB of GPU memory parked by SUSPENDED jobs (SIM, suspend_mech=sigstop: a stopped
     * process keeps its memory); allocated at the first such suspend */
    int32_t *parked;
    size_t nsuspended;
    int packed;    /* GPU slots used by packed guests */
    int want_pass; /* a hook asked for a pass at this instant */
    /* profile of (model id, GPU type + 1), looked up once: profiles are immutable */
    const gs_profile **pcache;
    size_t pcache_models;
    /* speed by GPU type (docs/heterogeneity.md): type_speed=on|off, ref_gpu_type= (NULL:
     * the profiles' reference type); tsame: per GPU type of the current cluster, 1 when every
     * model runs there at the reference speed (speed_types()); rcache: per (model id, GPU
     * type) RATE_SLOTS rates by GPU count (gpus 0 = none) */
    int type_speed;
    char *ref_type;
    uint8_t tsame[ENGINE_MAX_TYPES];
    struct rate_slot {
        int32_t gpus; /* 0 = empty */
        double rate;
    } * rcache;
    size_t rcache_models;
    /* LIVE, gs_engine_set_outside: GPUs used by work gsched does not schedule (NULL until the
     * first call).  Per node the count asked for and the count taken (marked GPUs, down in
     * the cluster); per GPU the mark.  A node with taken < asked takes GPUs as they free. */
    int32_t *out_want, *out_have;
    uint8_t *out_mark;
    int out_short; /* nodes with out_have < out_want */
    /* why each node is out of service (GS_NODE_* bits; NULL until the first one is): a
     * node is down in the cluster iff some bit is set.  A failure requeues its jobs; a
     * drain (LIVE) or a bad mark leaves them running; each ends on its own. */
    uint8_t *nstate;
    /* per GPU: marked bad (gs_engine_set_gpu_bad; NULL until the first mark).  A GPU is down
     * in the cluster iff its node is, it is marked outside, or it is marked bad; a bad GPU is
     * never marked outside. */
    uint8_t *gbad;
    /* elastic jobs (issue 13) */
    gs_time rescale_gap;   /* default min gap between policy rescales (rescale_gap=) */
    gs_time drain_timeout; /* LIVE: a drain is forced after this (drain_timeout=) */
    int reserved;          /* GPUs reserved for draining jobs' next generations */
    int launch_cost;       /* 1: first starts pay gs_costs_relaunch (launch_cost=on) */
    int adopting; /* gs_engine_adopt: the placement is taken as it is (no withinOneCell check) */
    const gs_progress_ops *prog; /* progress model for jobs with app set, NULL = none */
    void *prog_st;
    /* work-preserving reconfiguration (issue 14): the parameters the policy is created again
     * with, and the clusters of scheduled reconfigurations (borrowed) */
    gs_params params;
    gs_cluster **rcl;
    size_t nrcl;
    int reconfigured; /* the cluster changed once: a requeued job may never fit again */
    int pol_partial;  /* a hook failed while the new policy was being told of the jobs: it does
                         not know them all, so its check() is not asked (the engine's is) */
    int32_t *recheck; /* slots requeued since, to be checked at the end of the instant */
    size_t nrecheck, caprecheck;
};

/* ---- names ------------------------------------------------------------------ */

static const char *state_names[] = {
#define GS__JS_NAME(name, str, abbr) str,
    GS_JOB_STATE_MAP(GS__JS_NAME)
#undef GS__JS_NAME
};
static const char *state_abbrs[] = {
#define GS__JS_ABBR(name, str, abbr) abbr,
    GS_JOB_STATE_MAP(GS__JS_ABBR)
#undef GS__JS_ABBR
};
static const char *rec_names[] = {
#define GS__REC_NAME(name, str) str,
    GS_REC_MAP(GS__REC_NAME)
#undef GS__REC_NAME
};

const char *gs_job_state_name(gs_job_state s)
{
    return (unsigned)s < GS_JOB_NSTATES ? state_names[s] : "?";
}
const char *gs_job_state_abbr(gs_job_state s)
{
    return (unsigned)s < GS_JOB_NSTATES ? state_abbrs[s] : "?";
}
int gs_job_state_parse(const char *s)
{
    for (int i = 0; i < GS_JOB_NSTATES; i++)
        if (strcasecmp(s, state_names[i]) == 0 || strcasecmp(s, state_abbrs[i]) == 0) return i;
    return -1;
}
const char *gs_rec_type_name(gs_rec_type t)
{
    return (unsigned)t < GS_REC_NTYPES ? rec_names[t] : "?";
}

void gs_job_spec_init(gs_job_spec *s)
{
    memset(s, 0, sizeof *s);
    s->id = -1;
    s->ntasks = 1;
    s->gpus_per_task = 1;
    s->gang = 1;
    s->min_rescale_gap = GS_TIME_NONE;
    s->deadline = GS_TIME_NONE;
    s->max_rescales = -1;
    s->weight = 1.0;
}

gs_time gs_job_remaining(const gs_job *j, gs_time now)
{
    if (j->state != GS_JOB_RUNNING || now <= j->progress_from) return j->remaining;
    gs_time dt = now - j->progress_from;
    gs_time done = j->speed == 1.0 ? dt : (gs_time)floor((double)dt * j->speed);
    return done >= j->remaining ? 0 : j->remaining - done;
}

static int holds_gpus(const gs_job *j)
{
    return j->state == GS_JOB_RUNNING || j->state == GS_JOB_PREEMPTED ||
           j->state == GS_JOB_DRAINING;
}

int gs_job_launching(const gs_job *j, gs_time now)
{
    return j->state == GS_JOB_RUNNING && j->progress_from > now && j->progress_from != GS_TIME_MAX;
}

int gs_job_size_valid(const gs_job *j, int n)
{
    int gpt = j->gpus_per_task;
    int lo = j->min_gpus > gpt ? j->min_gpus : gpt;
    if (j->max_gpus <= 0 || n < lo || n > j->max_gpus || n % gpt) return 0;
    if (!j->sizes) return 1;
    int a = 0, b = j->nsizes - 1; /* sizes are ascending */
    while (a <= b) {
        int m = a + (b - a) / 2;
        if (j->sizes[m] == n) return 1;
        if (j->sizes[m] < n)
            a = m + 1;
        else
            b = m - 1;
    }
    return 0;
}

gs_time gs_job_executed(const gs_job *j, gs_time now)
{
    return j->executed + (holds_gpus(j) && now > j->last_start ? now - j->last_start : 0);
}

double gs_job_service(const gs_job *j, gs_time now)
{
    double open = holds_gpus(j) && now > j->last_start
                      ? (double)j->nalloc * gs_time_to_sec(now - j->last_start)
                      : 0.0;
    return j->service + open;
}

gs_time gs_job_queued(const gs_job *j, gs_time now)
{
    return j->queued +
           (j->state == GS_JOB_PENDING && now > j->pending_since ? now - j->pending_since : 0);
}

gs_time gs_job_suspended(const gs_job *j, gs_time now)
{
    return j->suspended + (j->state == GS_JOB_SUSPENDED && now > j->since ? now - j->since : 0);
}

static const gs_mech_info mech_info[] = {
#define GS__MECH_INFO(name, count, cost, key, costkey, listed, tcol, twidth) \
    {key, costkey, listed, tcol, twidth},
    GS_MECH_MAP(GS__MECH_INFO)
#undef GS__MECH_INFO
};

const gs_mech_info *gs_mech_get(gs_mech m)
{
    return (unsigned)m < GS_MECH_N ? &mech_info[m] : NULL;
}

uint64_t gs_job_mech_count(const gs_job *j, gs_mech m)
{
    switch (m) {
#define GS__MECH_COUNT(name, count, cost, key, costkey, listed, tcol, twidth) \
    case GS_MECH_##name: return (uint64_t)(count);
        GS_MECH_MAP(GS__MECH_COUNT)
#undef GS__MECH_COUNT
    default: return 0;
    }
}

double gs_job_mech_gpu_s(const gs_job *j, gs_mech m)
{
    switch (m) {
#define GS__MECH_COST(name, count, cost, key, costkey, listed, tcol, twidth) \
    case GS_MECH_##name: return (cost);
        GS_MECH_MAP(GS__MECH_COST)
#undef GS__MECH_COST
    default: return 0;
    }
}

gs_time gs_job_packed(const gs_job *j, gs_time now)
{
    return j->packed + (j->pack_with >= 0 && now > j->since ? now - j->since : 0);
}

void gs_engine_opts_init(gs_engine_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mode = GS_ENGINE_SIM;
    o->placement = GS_PLACE_CONSOLIDATE;
    o->fit = GS_FIT_FIRST;
}

/* ---- event heap ----------------------------------------------------------------- */

static int ev_less(const ev *a, const ev *b)
{
    if (a->t != b->t) return a->t < b->t;
    if (a->kind != b->kind) return a->kind < b->kind;
    if (a->key != b->key) return a->key < b->key;
    return a->seq < b->seq;
}

static int latch(gs_engine *e, int rc);
static void gpus_redown(gs_engine *e, int node);
static int outside_settle(gs_engine *e);

/* 1 when GPU g is marked bad (gs_engine_set_gpu_bad). */
static int gpu_is_bad(const gs_engine *e, int32_t g)
{
    return e->gbad && e->gbad[g];
}

static gs_job *job_at(const gs_engine *e, size_t slot);
static void heap_rebuild(gs_engine *e);

/*
 * Drop the job events that handle() would drop as stale when popped: those carrying a gen
 * the job has left behind (gen only grows, so they stay stale).  Called when the heap is
 * full, so its O(n) is paid once per n pushes at most; the events left pop in the same
 * order (ev_less is a total order), so nothing decided changes.
 */
static void heap_compact(gs_engine *e)
{
    size_t k = 0;
    for (size_t i = 0; i < e->nheap; i++) {
        const ev *x = &e->heap[i];
        int job_ev = x->kind == EV_FINISH || x->kind == EV_BOUNDARY || x->kind == EV_DRAINED ||
                     x->kind == EV_PROTECT;
        if (job_ev && x->key >= 0 && job_at(e, (size_t)x->key) &&
            job_at(e, (size_t)x->key)->gen != x->gen)
            continue;
        e->heap[k++] = *x;
    }
    if (k == e->nheap) return;
    e->nheap = k;
    heap_rebuild(e);
}

static int heap_push(gs_engine *e, ev x)
{
    if (e->nheap == e->capheap) {
        heap_compact(e);
        /* grow unless a quarter came free: the next compaction is cap/4 pushes away */
        if (e->nheap >= e->capheap - e->capheap / 4) {
            size_t nc = e->capheap ? e->capheap * 2 : 1024;
            ev *nh = realloc(e->heap, nc * sizeof *nh);
            if (nh) {
                e->heap = nh;
                e->capheap = nc;
            } else if (e->nheap == e->capheap) {
                return latch(e, GS_ENOMEM);
            }
        }
    }
    x.seq = e->seq++;
    size_t i = e->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&x, &e->heap[p])) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = x;
    return 0;
}

/* Put x into the hole at i and sift it down to its place among the nheap entries. */
static void heap_sift(gs_engine *e, size_t i, ev x)
{
    size_t n = e->nheap;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const ev *mv = &x;
        if (l < n && ev_less(&e->heap[l], mv)) m = l, mv = &e->heap[l];
        if (r < n && ev_less(&e->heap[r], mv)) m = r;
        if (m == i) break;
        e->heap[i] = e->heap[m];
        i = m;
    }
    e->heap[i] = x;
}

static ev heap_pop(gs_engine *e)
{
    ev top = e->heap[0];
    ev last = e->heap[--e->nheap];
    if (e->nheap) heap_sift(e, 0, last);
    return top;
}

/* Heap order again over every entry (after entries were dropped or rekeyed in place). */
static void heap_rebuild(gs_engine *e)
{
    for (size_t i = e->nheap / 2; i-- > 0;) heap_sift(e, i, e->heap[i]);
}

/* ---- jobs ------------------------------------------------------------------------ */

/* The engine's own (mutable) job at a slot: the one place job pointers come from. */
static gs_job *job_at(const gs_engine *e, size_t slot)
{
    if (slot >= e->njobs) return NULL;
    gs_job *b = e->blocks[slot >> JOB_BLOCK_BITS];
    return b ? &b[slot & (JOB_BLOCK - 1)] : (gs_job *)&e->tomb;
}

/* A job handed back by a caller (read-only outside the engine): the engine's own copy. */
static gs_job *mut(const gs_engine *e, const gs_job *j)
{
    return job_at(e, (size_t)j->slot);
}

const gs_job *gs_engine_job(const gs_engine *e, size_t slot)
{
    return job_at(e, slot);
}

gs_job *gs_policy_job(gs_engine *e, size_t slot)
{
    return job_at(e, slot);
}

size_t gs_engine_njobs(const gs_engine *e)
{
    return e->njobs;
}

const gs_job *gs_engine_find_job(const gs_engine *e, int64_t id)
{
    int32_t s = idmap_get(&e->ids, id);
    return s < 0 ? NULL : job_at(e, (size_t)s);
}

static gs_job *new_job(gs_engine *e)
{
    if ((e->njobs >> JOB_BLOCK_BITS) >= e->nblocks) {
        gs_job **nb = realloc(e->blocks, (e->nblocks + 1) * sizeof *nb);
        if (!nb) return NULL;
        e->blocks = nb;
        if (e->forgot) { /* gs_engine_forget was used: its per-block state grows too */
            uint8_t *f = realloc(e->forgot, (e->nblocks + 1) * (JOB_BLOCK / 8));
            if (!f) return NULL;
            e->forgot = f;
            memset(f + e->nblocks * (JOB_BLOCK / 8), 0, JOB_BLOCK / 8);
            uint16_t *c = realloc(e->nforgot, (e->nblocks + 1) * sizeof *c);
            if (!c) return NULL;
            e->nforgot = c;
            c[e->nblocks] = 0;
        }
        nb[e->nblocks] = calloc(JOB_BLOCK, sizeof **nb);
        if (!nb[e->nblocks]) return NULL;
        e->nblocks++;
    }
    size_t slot = e->njobs++;
    gs_job *j = job_at(e, slot);
    memset(j, 0, sizeof *j);
    j->slot = (int32_t)slot;
    j->pack_with = -1; /* consistent at once: filling it in may fail half-way */
    return j;
}

static void emit_gpu(gs_engine *e, gs_rec_type type, gs_job *j, int node, int gpu,
                     const char *reason)
{
    if (!e->obs) return;
    gs_record r = {.t = e->now, .type = type, .job = j, .node = node, .gpu = gpu, .reason = reason};
    e->obs(e->obs_ud, &r);
}

static void emit(gs_engine *e, gs_rec_type type, gs_job *j, int node, const char *reason)
{
    emit_gpu(e, type, j, node, -1, reason);
}

/*
 * Latch an error that leaves the engine failed (engine.h, "Errors"): a hook's
 * error or an allocation failure.  Returns rc.
 */
static int latch(gs_engine *e, int rc)
{
    if (rc < 0 && !e->err) e->err = rc;
    return rc;
}

/* Latch rc if it is an allocation failure; other errors are answers to the caller. */
static int nomem(gs_engine *e, int rc)
{
    return rc == GS_ENOMEM ? latch(e, rc) : rc;
}

/* Policy hooks: a missing hook is a no-op; an error latches. */
static int hook_job(gs_engine *e, int (*fn)(void *, gs_job *), gs_job *j)
{
    return fn ? latch(e, fn(e->pst, j)) : 0;
}

static const char *intern(gs_engine *e, strtab *t, const char *s, int32_t *id)
{
    int k = strtab_intern(t, s);
    if (k < 0) {
        latch(e, GS_ENOMEM);
        return NULL;
    }
    if (id) *id = k;
    return strtab_str(t, k);
}

void gs_engine_reserve_ids(gs_engine *e, int64_t next)
{
    if (next > e->next_id) e->next_id = next;
}

static int add_one(gs_engine *e, const gs_job_spec *s, int deferred, gs_job **out, gs_diag *diag);

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The elastic part of a spec (issue 13): GS_EINVAL with a message when inconsistent. */
static int check_elastic(const gs_job_spec *s, gs_diag *diag)
{
    if (s->min_rescale_gap != GS_TIME_NONE && s->min_rescale_gap < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job min_rescale_gap must not be negative");
    if (s->max_rescales < -1)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "job max_rescales must be -1 (unlimited) or >= 0 (got %d)",
                           s->max_rescales);
    if (s->max_failures < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job max_failures must not be negative (got %d)",
                           s->max_failures);
    if (s->batch_size < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job batch_size must not be negative");
    if (s->max_gpus <= 0) return 0;
    int gpt = s->gpus_per_task, lo = s->min_gpus > gpt ? s->min_gpus : gpt;
    if (lo > s->max_gpus)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "elastic job: no size in [%d, %d] (min_gpus, gpus_per_task %d)", lo,
                           s->max_gpus, gpt);
    if (s->nsizes < 0 || (s->nsizes > 0 && !s->sizes))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "elastic job: bad list of sizes");
    for (int i = 0; i < s->nsizes; i++)
        if (s->sizes[i] < lo || s->sizes[i] > s->max_gpus || s->sizes[i] % gpt)
            return gs_diag_set(diag, GS_EINVAL, 0, 0,
                               "elastic job: size %d is not in [%d, %d] or not a multiple of "
                               "gpus_per_task %d",
                               (int)s->sizes[i], lo, s->max_gpus, gpt);
    int n = s->ntasks * gpt, ok = n >= lo && n <= s->max_gpus;
    if (ok && s->nsizes) {
        ok = 0;
        for (int i = 0; i < s->nsizes && !ok; i++) ok = s->sizes[i] == n;
    }
    if (!ok)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "elastic job asks for %d GPUs, not one of its valid sizes (%d..%d%s)", n,
                           lo, s->max_gpus, s->nsizes ? ", from its sizes list" : "");
    return 0;
}

/* Copy the elastic part of a spec into j (check_elastic passed). */
static int copy_elastic(gs_engine *e, gs_job *j, const gs_job_spec *s)
{
    j->deadline = s->deadline;
    j->batch_size = s->batch_size;
    j->max_failures = s->max_failures;
    j->max_rescales = s->max_rescales;
    j->min_rescale_gap = s->min_rescale_gap == GS_TIME_NONE ? e->rescale_gap : s->min_rescale_gap;
    j->last_rescale = j->drain_since = j->drain_deadline = GS_TIME_NONE;
    if (s->app && *s->app && !(j->app = intern(e, &e->strs, s->app, NULL))) return GS_ENOMEM;
    if (s->max_gpus <= 0 || s->nsizes <= 0) return 0;
    int32_t *v = malloc((size_t)s->nsizes * sizeof *v);
    if (!v) return latch(e, GS_ENOMEM);
    memcpy(v, s->sizes, (size_t)s->nsizes * sizeof *v);
    qsort(v, (size_t)s->nsizes, sizeof *v, cmp_i32);
    int n = 0;
    for (int i = 0; i < s->nsizes; i++)
        if (!n || v[n - 1] != v[i]) v[n++] = v[i];
    j->sizes = v;
    j->nsizes = n;
    return 0;
}

/* The most withinOneCell groups one job may declare. */
#define MAX_GROUPS 4096

/*
 * Affinity groups of a spec (issue 14): task sizes, nested withinOneCell groups
 * (job.h), and HiveD's own rules when hived_strict.  Read-only: runs before the
 * job exists, so a refusal changes nothing.
 */
static int check_groups(const gs_engine *e, const gs_job_spec *s, gs_diag *diag)
{
    if (s->hived_strict) {
        /* HiveD's pod-scheduling-spec rules that are not about the shape */
        if (!s->vc || !*s->vc) return gs_diag_set(diag, GS_EINVAL, 0, 0, "VirtualCluster is empty");
        if (s->priority < GS_PRIO_OPPORTUNISTIC)
            return gs_diag_set(diag, GS_EINVAL, 0, 0, "Priority is less than %d (got %d)",
                               GS_PRIO_OPPORTUNISTIC, s->priority);
        if (s->priority > GS_HIVED_MAX_PRIORITY)
            return gs_diag_set(diag, GS_EINVAL, 0, 0, "Priority is greater than %d (got %d)",
                               GS_HIVED_MAX_PRIORITY, s->priority);
        if (s->priority == GS_PRIO_OPPORTUNISTIC && s->pinned_cell && *s->pinned_cell)
            return gs_diag_set(diag, GS_EINVAL, 0, 0,
                               "opportunistic pod not supported to use pinned cell %s",
                               s->pinned_cell);
    }
    if (!s->task_gpus && s->ngroups <= 0) return 0;
    if (!s->gang)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "a job with tasks of different sizes or withinOneCell groups must be a "
                           "gang");
    if (s->max_gpus > 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "a job with tasks of different sizes or withinOneCell groups cannot be "
                           "elastic (max_gpus %d)",
                           s->max_gpus);
    if (s->ntasks < 1)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job needs at least 1 task (got %d)", s->ntasks);
    if (s->task_gpus) {
        int64_t sum = 0;
        for (int t = 0; t < s->ntasks; t++) {
            if (s->task_gpus[t] < 1)
                return gs_diag_set(diag, GS_EINVAL, 0, 0, "task %d needs at least 1 GPU (got %d)",
                                   t, (int)s->task_gpus[t]);
            sum += s->task_gpus[t];
        }
        if (sum > (1 << 20))
            return gs_diag_set(diag, GS_EINVAL, 0, 0, "job asks for too many GPUs (%lld)",
                               (long long)sum);
    }
    if (s->ngroups < 0 || s->ngroups > MAX_GROUPS || (s->ngroups > 0 && !s->groups))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job has a bad list of groups (%d, at most %d)",
                           s->ngroups, MAX_GROUPS);
    for (int i = 0; i < s->ngroups; i++) {
        const gs_task_group *g = &s->groups[i];
        if (g->lo < 0 || g->lo >= g->hi || g->hi > s->ntasks)
            return gs_diag_set(diag, GS_EINVAL, 0, 0,
                               "group %d: tasks [%d, %d) are not a non-empty range of the job's %d "
                               "tasks",
                               i, (int)g->lo, (int)g->hi, s->ntasks);
        if (g->parent < -1 || g->parent >= i)
            return gs_diag_set(diag, GS_EINVAL, 0, 0,
                               "group %d: parent %d must be an earlier group or -1 (groups are "
                               "listed in pre-order)",
                               i, (int)g->parent);
        if (g->parent >= 0) {
            const gs_task_group *p = &s->groups[g->parent];
            if (g->lo < p->lo || g->hi > p->hi)
                return gs_diag_set(diag, GS_EINVAL, 0, 0,
                                   "group %d: tasks [%d, %d) are not inside its parent group %d "
                                   "[%d, %d)",
                                   i, (int)g->lo, (int)g->hi, (int)g->parent, (int)p->lo,
                                   (int)p->hi);
        }
        /* every earlier group that is not an ancestor comes wholly before it */
        for (int k = 0; k < i; k++) {
            int anc = 0;
            for (int a = g->parent; a >= 0 && !anc; a = s->groups[a].parent) anc = a == k;
            if (!anc && s->groups[k].hi > g->lo)
                return gs_diag_set(diag, GS_EINVAL, 0, 0,
                                   "group %d: tasks [%d, %d) overlap or precede group %d [%d, %d), "
                                   "which is not its parent (groups are nested, in pre-order)",
                                   i, (int)g->lo, (int)g->hi, k, (int)s->groups[k].lo,
                                   (int)s->groups[k].hi);
        }
        if (g->within && *g->within && gs_cluster_find_cell_type(e->c, g->within) < 0)
            return gs_diag_set(diag, GS_EINVAL, 0, 0,
                               "group %d: withinOneCell cell type '%s' is not a cell type of the "
                               "cluster",
                               i, g->within);
    }
    return 0;
}

/* Copy the affinity groups of s into j (check_groups passed): sizes, offsets, groups. */
static int copy_groups(gs_engine *e, gs_job *j, const gs_job_spec *s)
{
    if (s->task_gpus) {
        int same = 1, max = 0, sum = 0;
        for (int t = 0; t < s->ntasks; t++) {
            same &= s->task_gpus[t] == s->task_gpus[0];
            if (s->task_gpus[t] > max) max = s->task_gpus[t];
            sum += s->task_gpus[t];
        }
        j->gpus_per_task = max;
        j->gpus = j->req_gpus = sum;
        /* tasks of one size are a plain gang: no per-task table, any policy places it */
        if (!same) {
            j->task_gpus = malloc((size_t)s->ntasks * sizeof *j->task_gpus);
            j->task_off = malloc(((size_t)s->ntasks + 1) * sizeof *j->task_off);
            if (!j->task_gpus || !j->task_off) return latch(e, GS_ENOMEM);
            j->task_off[0] = 0;
            for (int t = 0; t < s->ntasks; t++) {
                j->task_gpus[t] = s->task_gpus[t];
                j->task_off[t + 1] = j->task_off[t] + s->task_gpus[t];
            }
        }
    }
    if (s->ngroups <= 0) return 0;
    j->groups = malloc((size_t)s->ngroups * sizeof *j->groups);
    if (!j->groups) return latch(e, GS_ENOMEM);
    for (int i = 0; i < s->ngroups; i++) {
        gs_task_group g = s->groups[i];
        g.within_type = -1;
        if (g.within && *g.within) {
            g.within_type = gs_cluster_find_cell_type(e->c, g.within);
            if (!(g.within = intern(e, &e->strs, g.within, NULL))) return GS_ENOMEM; /* latched */
        } else {
            g.within = NULL;
        }
        j->groups[j->ngroups++] = g;
    }
    return 0;
}

static int add_job(gs_engine *e, const gs_job_spec *s, int deferred, gs_job **out, gs_diag *diag)
{
    if (e->err) return e->err;
    int grc = check_groups(e, s, diag);
    if (grc) return grc;
    if (s->gang || s->ntasks <= 1) return add_one(e, s, deferred, out, diag);
    if (s->max_gpus > 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "an elastic job (max_gpus %d) must be a gang",
                           s->max_gpus);
    /* incremental: one single-task job per task, started independently */
    gs_job_spec t = *s;
    t.ntasks = 1;
    t.gang = 1;
    gs_job *first = NULL;
    for (int i = 0; i < s->ntasks; i++) {
        t.id = i == 0 ? s->id : -1;
        gs_job *j;
        int rc = add_one(e, &t, deferred, &j, diag);
        if (rc) return rc;
        if (!first) first = j;
        j->group = first->id;
        j->task_index = i;
    }
    if (out) *out = first;
    return 0;
}

static const gs_profiles *profiles(const gs_engine *e);

/*
 * The work of spec s in us: its duration, or its steps (> 0) at the throughput of its model
 * on the reference GPU type at its requested size (gs_profiles_tput;
 * docs/heterogeneity.md).  Validates steps and weight.  Nothing changes on error.
 */
static int spec_work(gs_engine *e, const gs_job_spec *s, gs_time *work, gs_diag *diag)
{
    *work = s->duration;
    if (!isfinite(s->steps) || s->steps < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job steps must be a number >= 0 (got %g)",
                           s->steps);
    if (!isfinite(s->weight) || s->weight < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job weight must be a number >= 0 (got %g)",
                           s->weight);
    if (!(s->steps > 0)) return 0;
    if (s->duration > 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "a job's work is its duration or its steps, not both (duration %.0f s, "
                           "%.0f steps)",
                           gs_time_to_sec(s->duration), s->steps);
    int64_t g = (int64_t)s->ntasks * s->gpus_per_task;
    if (s->task_gpus)
        for (int k = g = 0; k < s->ntasks; k++) g += s->task_gpus[k];
    const gs_profiles *p = profiles(e);
    if (e->err) return e->err;
    const char *ref = gs_engine_ref_gpu_type(e);
    double tp = g > 0 && g <= (1 << 20) ? gs_profiles_tput(p, s->model, ref, (int)g) : 0;
    if (!(tp > 0))
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "job of %.0f steps: the profiles have no throughput of model '%s' on "
                           "%lld GPU(s) of the reference type %s",
                           s->steps, s->model && *s->model ? s->model : "default", (long long)g,
                           ref ? ref : "(none)");
    double us = ceil(s->steps / tp * 1e6);
    if (!(us < 3.2e16))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job of %.0f steps: its work is too long",
                           s->steps);
    *work = (gs_time)us;
    return 0;
}

static int add_one(gs_engine *e, const gs_job_spec *s, int deferred, gs_job **out, gs_diag *diag)
{
    if (s->ntasks < 1)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job needs at least 1 task (got %d)", s->ntasks);
    if (s->gpus_per_task < 1 && !s->task_gpus) /* task_gpus: check_groups */
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job needs at least 1 GPU per task (got %d)",
                           s->gpus_per_task);
    if (!s->task_gpus && (int64_t)s->ntasks * s->gpus_per_task > (1 << 20))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job asks for too many GPUs (%lld)",
                           (long long)s->ntasks * s->gpus_per_task);
    if (s->duration < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job duration must not be negative");
    if (s->cpus_per_task < 0 || s->mem_mb_per_task < 0 || s->gpu_mem_mb < 0)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job CPU/memory requests must not be negative");
    if (s->min_gpus < 0 || s->max_gpus < 0 || (s->max_gpus && s->min_gpus > s->max_gpus))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job min_gpus/max_gpus are inconsistent");
    int erc = check_elastic(s, diag);
    if (erc) return erc;
    gs_time work;
    if ((erc = spec_work(e, s, &work, diag))) return erc;
    int64_t id = s->id >= 0 ? s->id : e->next_id;
    if (idmap_get(&e->ids, id) >= 0)
        return gs_diag_set(diag, GS_EEXIST, 0, 0, "duplicate job id %lld", (long long)id);
    gs_job *j = new_job(e);
    if (!j) return latch(e, GS_ENOMEM);
    if (idmap_put(&e->ids, id, j->slot)) {
        e->njobs--;
        return latch(e, GS_ENOMEM);
    }
    if (id >= e->next_id) e->next_id = id + 1;
    j->id = id;
    j->group = id;
    j->task_index = 0;
    j->name = intern(e, &e->strs, s->name ? s->name : "", NULL);
    j->user = intern(e, &e->users, s->user && *s->user ? s->user : "-", &j->user_id);
    j->vc_name = intern(e, &e->vcs, s->vc && *s->vc ? s->vc : "default", &j->vc);
    j->model = intern(e, &e->models, s->model && *s->model ? s->model : "-", &j->model_id);
    if (!j->name || !j->user || !j->vc_name || !j->model) return GS_ENOMEM; /* latched */
    j->priority = s->priority;
    j->ntasks = s->ntasks;
    j->gpus_per_task = s->gpus_per_task;
    j->gpus = s->ntasks * s->gpus_per_task;
    j->gpu_type = -1;
    j->cpus_per_task = s->cpus_per_task;
    j->mem_mb_per_task = s->mem_mb_per_task;
    j->gpu_mem_mb = s->gpu_mem_mb;
    j->gang = s->gang;
    j->lazy_preemption = s->lazy_preemption;
    j->min_gpus = s->min_gpus;
    j->max_gpus = s->max_gpus;
    j->pinned_cell = -1;
    j->submit = e->opts.mode == GS_ENGINE_LIVE ? e->now : s->submit;
    j->work = work;
    j->steps = s->steps;
    j->weight = s->weight > 0 ? s->weight : 1.0;
    j->iterations = s->iterations;
    j->state = GS_JOB_PENDING; /* arrived == 0 until the arrival event */
    j->first_start = j->end = GS_TIME_NONE;
    j->last_start = GS_TIME_NONE;
    j->remaining = work;
    j->speed = 1.0;
    j->reason = NULL;
    j->req_gpus = j->gpus;
    j->pack_with = -1;
    j->place_rate = j->pack_rate = j->scale_rate = j->type_rate = 1.0;
    if (copy_elastic(e, j, s) || copy_groups(e, j, s)) return GS_ENOMEM; /* latched */
    /* resolve cluster names; a miss is a rejection at arrival, not an input error */
    if (s->gpu_type && *s->gpu_type) {
        j->gpu_type = gs_cluster_find_gpu_type(e->c, s->gpu_type);
        if (j->gpu_type < 0) j->reason = "unknown GPU type";
    }
    if (s->pinned_cell && *s->pinned_cell) {
        j->pinned_cell = gs_cluster_find_pinned(e->c, s->pinned_cell);
        if (j->pinned_cell < 0) j->reason = "unknown pinned cell";
    }
    j->gen = 0;
    j->deferred = deferred;
    if (!deferred) {
        int rc = heap_push(e, (ev){.t = j->submit, .kind = EV_ARRIVAL, .key = j->slot});
        if (rc) return rc;
    }
    e->nactive++;
    if (out) *out = j;
    return 0;
}

int gs_engine_add_job(gs_engine *e, const gs_job_spec *s, const gs_job **out, gs_diag *diag)
{
    gs_job *j = NULL;
    int rc = add_job(e, s, 0, &j, diag);
    if (out) *out = j;
    return rc;
}

int gs_engine_submit(gs_engine *e, const gs_job_spec *spec, gs_time now, const gs_job **out,
                     gs_diag *diag)
{
    if (e->err) return e->err;
    if (now > e->now) e->now = now;
    return gs_engine_add_job(e, spec, out, diag);
}

int gs_engine_submit_deferred(gs_engine *e, const gs_job_spec *spec, gs_time now,
                              const gs_job **out, gs_diag *diag)
{
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_LIVE) return GS_ESTATE;
    if (now > e->now) e->now = now;
    gs_job *j = NULL;
    int rc = add_job(e, spec, 1, &j, diag);
    if (out) *out = j;
    return rc;
}

/* (deferred) -> its arrival now: the arrival event (tr_arrive) is due at once. */
int gs_engine_release(gs_engine *e, const gs_job *cj, gs_time now)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (!j || j->state != GS_JOB_PENDING || !j->deferred) return GS_ESTATE;
    if (now > e->now) e->now = now;
    int rc = heap_push(e, (ev){.t = e->now, .kind = EV_ARRIVAL, .key = j->slot});
    if (rc) return rc;
    j->deferred = 0;
    return 0;
}

static void to_pending(gs_engine *e, gs_job *j);
static int tr_start(gs_engine *e, gs_job *j, const int *gpus, int n);
static int tr_reject(gs_engine *e, gs_job *j, const char *reason);

/*
 * PENDING -> RUNNING on the gpus[0..n) of an adopted job of which some are -1: GPUs the
 * cluster no longer has (a daemon restarted with a changed config).  It holds the others
 * (each in range, given once, free and healthy, of its type; no task shape is checked: its
 * tasks ran where they ran) and the -1 ones count as vanished, as after a reconfiguration
 * (gs_engine_reconfigure): unaccounted, its CPU/memory not charged.  Nothing changes on error.
 */
static void leave_pending(gs_engine *e, gs_job *j);
static double scale_rate(const gs_engine *e, const gs_job *j);
static double alloc_type_rate(const gs_engine *e, const gs_job *j);
static void set_speed(gs_engine *e, gs_job *j);

static int tr_adopt_vanished(gs_engine *e, gs_job *j, const int *gpus, int n)
{
    if (n != j->gpus) return GS_EINVAL;
    size_t ng = gs_cluster_ngpus(e->c);
    int32_t *a = malloc((size_t)n * sizeof *a);
    if (!a) return latch(e, GS_ENOMEM);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (gpus[i] < 0) continue;
        int bad = (size_t)gpus[i] >= ng;
        for (int q = 0; q < k && !bad; q++) bad = a[q] == gpus[i];
        if (!bad && j->gpu_type >= 0) bad = gs_cluster_gpu(e->c, gpus[i])->type != j->gpu_type;
        if (bad) {
            free(a);
            return GS_EINVAL;
        }
        a[k++] = gpus[i];
    }
    if (k && gs_cluster_alloc(e->c, a, k, j->slot)) {
        free(a);
        return GS_ECONFLICT;
    }
    j->alloc = a;
    j->nalloc = k;
    j->vanished = n - k;
    j->uncharged = 1;
    leave_pending(e, j);
    j->generation++;
    j->last_ckpt = j->progress;
    if (j->first_start == GS_TIME_NONE) j->first_start = e->now;
    j->last_start = e->now;
    j->state = GS_JOB_RUNNING;
    j->reason = NULL;
    j->place_rate = j->pack_rate = 1.0;
    j->scale_rate = scale_rate(e, j);
    j->type_rate = alloc_type_rate(e, j);
    j->progress_from = e->now;
    j->protect_until = e->now;
    e->nrunning++;
    e->allocated += k;
    e->reconfigured = 1; /* a job requeued later may never fit this cluster: recheck it */
    emit(e, GS_REC_START, j, -1, NULL);
    char why[200];
    snprintf(why, sizeof why,
             "%d of its %d GPU(s) are not in this cluster: it runs on, their use is not counted",
             j->vanished, j->gpus);
    emit(e, GS_REC_NOTE, j, -1, why);
    set_speed(e, j);
    return e->err;
}

int gs_engine_adopt(gs_engine *e, const gs_job_spec *spec, const int *gpus, int n, gs_time started,
                    gs_time queued, gs_time executed, const gs_job **out, gs_diag *diag)
{
    if (e->err) return e->err;
    gs_job *j;
    gs_job_spec s = *spec;
    int rc = add_job(e, &s, 0, &j, diag);
    if (rc) return rc;
    /* the arrival event stays in the heap and is ignored: the job is past it */
    j->arrived = 1;
    j->submit = spec->submit;
    to_pending(e, j);
    j->pending_since = e->now;
    int gone = 0;
    for (int i = 0; i < n; i++) gone += gpus[i] < 0;
    e->adopting = 1;
    rc = gone ? tr_adopt_vanished(e, j, gpus, n) : tr_start(e, j, gpus, n);
    e->adopting = 0;
    if (rc) {
        /* leave it pending: the policy schedules it like any other job */
        gs_diag_set(diag, rc, 0, 0, "cannot adopt job %lld on its GPUs: %s", (long long)j->id,
                    gs_strerror(rc));
        emit(e, GS_REC_SUBMIT, j, -1, NULL);
        if (gs_job_grouped(j) && !(e->pol->flags & GS_POLICY_GROUPS)) {
            int xrc = tr_reject(e, j, GS_GROUPS_NEED_POLICY); /* as on arrival */
            if (out) *out = j;
            return xrc ? xrc : rc;
        }
        int hrc = hook_job(e, e->pol->on_arrival, j);
        if (out) *out = j;
        return hrc ? hrc : rc;
    }
    j->first_start = started;
    j->last_start = started;
    j->progress_from = started;
    j->queued = queued;
    j->executed = executed;
    if (out) *out = j;
    return hook_job(e, e->pol->on_adopt, j);
}

void gs_job_accounting_init(gs_job_accounting *a)
{
    *a = (gs_job_accounting){-1, -1, -1, -1, -1.0, GS_TIME_NONE, -1, -1, -1, -1, -1};
}

int gs_engine_restore_accounting(gs_engine *e, const gs_job *cj, const gs_job_accounting *a)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (a->group >= 0) j->group = a->group;
    if (a->task_index >= 0) j->task_index = a->task_index;
    if (a->queued >= 0) j->queued = a->queued;
    if (a->executed >= 0) j->executed = a->executed;
    if (a->service >= 0) j->service = a->service;
    if (a->first_start != GS_TIME_NONE) j->first_start = a->first_start;
    if (a->preemptions >= 0) j->preemptions = a->preemptions;
    if (a->restarts >= 0) j->restarts = a->restarts;
    if (a->generation >= 0) j->generation = (uint32_t)a->generation;
    if (a->rescales >= 0) j->rescales = a->rescales;
    if (a->failures >= 0) j->failures = a->failures;
    return 0;
}

int gs_engine_add_node_event(gs_engine *e, gs_time t, int node, int down)
{
    if (e->err) return e->err;
    if (node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return GS_EINVAL;
    return heap_push(e, (ev){.t = t, .kind = EV_NODE, .key = node, .gen = (uint32_t) !!down});
}

/* ---- placement requests ------------------------------------------------------------ */

void gs_engine_place_req(const gs_engine *e, const gs_job *j, gs_locality level, gs_place_req *r)
{
    r->ntasks = j->ntasks;
    r->gpus_per_task = j->gpus_per_task;
    r->gpu_type = j->gpu_type;
    r->cpus_per_task = j->cpus_per_task;
    r->mem_mb_per_task = j->mem_mb_per_task;
    r->mode = e->opts.placement;
    r->level = level;
    r->fit = e->opts.fit;
    r->scope = j->pinned_cell >= 0 ? j->pinned_cell : 0;
}

static int *scratch(gs_engine *e, size_t n)
{
    if (n > e->capscratch) {
        size_t nc = e->capscratch ? e->capscratch : 64;
        while (nc < n) nc *= 2;
        int *p = realloc(e->scratch, nc * sizeof *p);
        if (!p) {
            latch(e, GS_ENOMEM);
            return NULL;
        }
        e->scratch = p;
        e->capscratch = nc;
    }
    return e->scratch;
}

static int fail_cached(gs_engine *e, const gs_place_req *r)
{
    for (unsigned i = 0; i < FAIL_CACHE; i++) {
        const fail_entry *f = &e->fail[i];
        if (f->epoch == e->epoch && f->ntasks == r->ntasks && f->gpt == r->gpus_per_task &&
            f->type == r->gpu_type && f->cpt == r->cpus_per_task && f->mem == r->mem_mb_per_task &&
            f->level == (int)r->level && f->scope == r->scope)
            return 1;
    }
    return 0;
}

static void fail_remember(gs_engine *e, const gs_place_req *r)
{
    e->fail[e->fail_next++ % FAIL_CACHE] =
        (fail_entry){r->ntasks,          r->gpus_per_task, r->gpu_type, r->cpus_per_task,
                     r->mem_mb_per_task, (int)r->level,    r->scope,    e->epoch};
}

int gs_engine_try_start(gs_engine *e, const gs_job *cj, gs_locality level)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (j->state != GS_JOB_PENDING) return GS_ESTATE;
    if (gs_job_grouped(j)) return GS_EUNSUPPORTED; /* the engine's placement has one task size */
    gs_place_req r;
    gs_engine_place_req(e, j, level, &r);
    /* a larger request of the same shape cannot fit if a smaller one failed, but
     * keep the cache exact: same shape only */
    if (fail_cached(e, &r)) return GS_ENOFIT;
    int *out = scratch(e, (size_t)j->gpus);
    if (!out) return latch(e, GS_ENOMEM);
    int rc = gs_place_find(e->c, &r, out);
    if (rc == GS_ENOFIT) {
        fail_remember(e, &r);
        return rc;
    }
    if (rc) return nomem(e, rc);
    return gs_engine_start(e, j, out, j->gpus);
}

/* 1 when one of v's GPUs is out of service (a bad or drained node): releasing them gives no
 * room, and gs_cluster_alloc could not take them back - such a job is never a tentative
 * victim (gs_engine_start_preempting, the dry run). */
static int holds_down_gpu(const gs_engine *e, const gs_job *v)
{
    for (int k = 0; k < v->nalloc; k++)
        if (gs_cluster_gpu(e->c, v->alloc[k])->down) return 1;
    return 0;
}

static int refund_and_release(gs_engine *e, gs_job *v)
{
    for (int t = 0; t < v->ntasks && (v->cpus_per_task || v->mem_mb_per_task) && !v->uncharged; t++)
        gs_cluster_node_refund(e->c, gs_cluster_gpu(e->c, v->alloc[gs_job_task_first(v, t)])->node,
                               v->cpus_per_task, v->mem_mb_per_task);
    return gs_cluster_release(e->c, v->alloc, v->nalloc, v->slot);
}

static void recharge_and_alloc(gs_engine *e, gs_job *v)
{
    /* undoing a tentative release of GPUs nobody else touched cannot fail */
    gs_cluster_alloc(e->c, v->alloc, v->nalloc, v->slot);
    for (int t = 0; t < v->ntasks && (v->cpus_per_task || v->mem_mb_per_task) && !v->uncharged; t++)
        gs_cluster_node_charge(e->c, gs_cluster_gpu(e->c, v->alloc[gs_job_task_first(v, t)])->node,
                               v->cpus_per_task, v->mem_mb_per_task);
}

int gs_engine_start_preempting(gs_engine *e, const gs_job *cj, gs_locality level,
                               const gs_job *const *cands, int ncands, const char *why)
{
    gs_job *j = mut(e, cj);
    if (j->state != GS_JOB_PENDING || !j->arrived) return GS_ESTATE;
    if (gs_job_grouped(j)) return GS_EUNSUPPORTED; /* the engine's placement has one task size */
    int rc = gs_engine_try_start(e, j, level);
    if (rc != GS_ENOFIT) return rc; /* started (0) or a real error */
    gs_place_req r;
    gs_engine_place_req(e, j, level, &r);
    int *out = scratch(e, (size_t)j->gpus);
    if (!out) return latch(e, GS_ENOMEM);
    int k = 0, found = 0, prc = 0;
    for (; k < ncands && !found; k++) {
        gs_job *v = mut(e, cands[k]);
        if (v->state != GS_JOB_RUNNING || !v->alloc || holds_down_gpu(e, v)) continue;
        if (refund_and_release(e, v)) break;
        prc = gs_place_find(e->c, &r, out);
        found = prc == 0;
        if (prc == GS_ENOMEM) {
            k++;
            break;
        }
    }
    /* undo every tentative release, then preempt only the jobs the placement uses */
    for (int i = 0; i < k; i++)
        if (cands[i]->state == GS_JOB_RUNNING && cands[i]->alloc && !holds_down_gpu(e, cands[i]))
            recharge_and_alloc(e, mut(e, cands[i]));
    if (prc == GS_ENOMEM) return latch(e, prc);
    if (!found) return GS_ENOFIT;
    /* copy the placement: hooks run inside gs_engine_preempt may reuse the scratch buffer */
    int *pl = malloc((size_t)j->gpus * sizeof *pl);
    if (!pl) return latch(e, GS_ENOMEM);
    memcpy(pl, out, (size_t)j->gpus * sizeof *pl);
    int npre = 0;
    for (int i = 0; i < k; i++) {
        gs_job *v = mut(e, cands[i]);
        if (v->state != GS_JOB_RUNNING || !v->alloc) continue;
        int uses = 0;
        for (int a = 0; a < v->nalloc && !uses; a++)
            for (int g = 0; g < j->gpus && !uses; g++) uses = pl[g] == v->alloc[a];
        if (!uses) continue;
        if ((rc = gs_engine_preempt(e, v, why)) != 0) {
            free(pl);
            return rc;
        }
        npre++;
    }
    rc = gs_engine_start(e, j, pl, j->gpus);
    free(pl);
    if (rc == GS_ECONFLICT && e->opts.mode == GS_ENGINE_LIVE) return npre; /* victims stopping */
    return rc ? rc : npre;
}

/* ---- transitions ---------------------------------------------------------------------- */

static void schedule_finish(gs_engine *e, gs_job *j)
{
    if (e->opts.mode != GS_ENGINE_SIM) return;
    gs_time run;
    if (j->speed == 1.0) {
        run = j->remaining;
    } else {
        /* speeds come from bounded factors and rates, but never let a tiny one leave the
         * clock: a job that slow ends in a millennium (the simulation then reports it) */
        double r = ceil((double)j->remaining / j->speed);
        run = r < 3.2e16 ? (gs_time)r : (gs_time)3.2e16;
    }
    gs_time at = j->progress_from + run;
    /* heap_push can only fail on OOM, which it latches: the job's state stays
     * consistent, the engine is failed (the caller sees GS_ENOMEM) */
    (void)heap_push(e, (ev){.t = at, .kind = EV_FINISH, .key = j->slot, .gen = j->gen});
}

/* The cell of cell type 'type' that holds GPU g, or -1 (above or below its node). */
static int cell_of_type(const gs_cluster *c, int g, int type)
{
    int cell = gs_cluster_node(c, gs_cluster_gpu(c, g)->node)->cell;
    for (int a = cell; a >= 0; a = gs_cluster_cell(c, a)->parent)
        if (gs_cluster_cell(c, a)->type == type) return a;
    for (;;) { /* below the node: follow the child that holds g */
        const gs_cell *x = gs_cluster_cell(c, cell);
        int next = -1;
        for (int k = 0; k < x->nkids && next < 0; k++) {
            int kid = gs_cluster_cell_kid(c, cell, k);
            const gs_cell *y = gs_cluster_cell(c, kid);
            if (g >= y->gpu_lo && g < y->gpu_hi) next = kid;
        }
        if (next < 0) return -1;
        if (gs_cluster_cell(c, next)->type == type) return next;
        if (gs_cluster_cell(c, next)->kind == GS_CELL_GPU) { /* a leaf: the type of its GPU */
            const gs_cell_type *ct = gs_cluster_cell_type(c, type);
            const char *gt = gs_cluster_gpu_type_name(c, gs_cluster_gpu(c, g)->type);
            return ct && ct->child < 0 && gt && !strcmp(ct->name, gt) ? next : -1;
        }
        cell = next;
    }
}

/* Group i of j on gpus (grouped by task): all its GPUs inside one cell of its within type. */
static int group_in_cell(const gs_cluster *c, const gs_job *j, int i, const int *gpus)
{
    const gs_task_group *g = &j->groups[i];
    if (g->within_type < 0) return 1;
    int lo = gs_job_task_first(j, g->lo), hi = gs_job_task_first(j, g->hi);
    int cell = cell_of_type(c, gpus[lo], g->within_type);
    if (cell < 0) return 0;
    const gs_cell *x = gs_cluster_cell(c, cell);
    for (int k = lo; k < hi; k++)
        if (gpus[k] < x->gpu_lo || gpus[k] >= x->gpu_hi) return 0;
    return 1;
}

/* gpus as the first ntasks tasks of j's shape (sizes and offsets: gs_job_task_gpus and
 * gs_job_task_first): in range, a task on one node, type and cell right. */
static int validate_shape(gs_engine *e, const gs_job *j, const int *gpus, int ntasks)
{
    size_t ng = gs_cluster_ngpus(e->c);
    for (int t = 0; t < ntasks; t++) {
        const int *g = gpus + gs_job_task_first(j, t);
        if (g[0] < 0 || (size_t)g[0] >= ng) return GS_EINVAL;
        int node = gs_cluster_gpu(e->c, g[0])->node;
        for (int k = 0; k < gs_job_task_gpus(j, t); k++) {
            if (g[k] < 0 || (size_t)g[k] >= ng) return GS_EINVAL;
            const gs_gpu *gp = gs_cluster_gpu(e->c, g[k]);
            if (gp->node != node) return GS_EINVAL; /* a task never spans nodes */
            if (j->gpu_type >= 0 && gp->type != j->gpu_type) return GS_EINVAL;
            if (j->pinned_cell >= 0) {
                const gs_cell *pc = gs_cluster_cell(e->c, j->pinned_cell);
                if (g[k] < pc->gpu_lo || g[k] >= pc->gpu_hi) return GS_EINVAL;
            }
        }
    }
    return 0;
}

/* j's whole placement: the count, the tasks' shape and (except for a job adopted as it runs,
 * whose placement is a fact, not a decision) each withinOneCell group inside one cell. */
static int validate_gpus(gs_engine *e, const gs_job *j, const int *gpus, int n)
{
    if (n != j->gpus) return GS_EINVAL;
    int rc = validate_shape(e, j, gpus, j->ntasks);
    for (int i = 0; !rc && !e->adopting && i < j->ngroups; i++)
        if (!group_in_cell(e->c, j, i, gpus)) rc = GS_EINVAL;
    return rc;
}

static void refund_tasks(gs_engine *e, const gs_job *j, const int *gpus, int ntasks)
{
    if ((!j->cpus_per_task && !j->mem_mb_per_task) || j->uncharged) return;
    for (int t = 0; t < ntasks; t++) {
        int node = gs_cluster_gpu(e->c, gpus[gs_job_task_first(j, t)])->node;
        gs_cluster_node_refund(e->c, node, j->cpus_per_task, j->mem_mb_per_task);
    }
}

/* Charge CPU/memory for j's tasks on gpus; all or nothing (GS_ENOFIT). */
static int charge_tasks(gs_engine *e, const gs_job *j, const int *gpus)
{
    if (!j->cpus_per_task && !j->mem_mb_per_task) return 0;
    int charged = 0;
    for (; charged < j->ntasks; charged++) {
        int node = gs_cluster_gpu(e->c, gpus[gs_job_task_first(j, charged)])->node;
        if (gs_cluster_node_charge(e->c, node, j->cpus_per_task, j->mem_mb_per_task)) break;
    }
    if (charged < j->ntasks) {
        refund_tasks(e, j, gpus, charged);
        return GS_ENOFIT;
    }
    return 0;
}

static int parked_fit(const gs_engine *e, const gs_job *j, const int *gpus, int n, int extra);

/*
 * Give j exclusive use of gpus (validated, CPU/memory charged, its GPU memory
 * fitting next to memory parked there) and make them its alloc.  Nothing
 * changes on error.  Counters are the caller's.
 */
static int take_gpus(gs_engine *e, gs_job *j, const int *gpus, int n)
{
    int rc = validate_gpus(e, j, gpus, n);
    if (rc) return rc;
    if ((rc = parked_fit(e, j, gpus, n, 0)) != 0) return rc;
    if ((rc = charge_tasks(e, j, gpus)) != 0) return rc;
    rc = gs_cluster_alloc(e->c, gpus, n, j->slot);
    if (rc) {
        refund_tasks(e, j, gpus, j->ntasks);
        return rc;
    }
    int32_t *a = malloc((size_t)n * sizeof *a);
    if (!a) {
        gs_cluster_release(e->c, gpus, n, j->slot);
        refund_tasks(e, j, gpus, j->ntasks);
        return latch(e, GS_ENOMEM);
    }
    for (int i = 0; i < n; i++) a[i] = gpus[i];
    j->alloc = a;
    j->nalloc = n;
    return 0;
}

/* How long the GPUs stay busy with jobs that left them (>= 0). */
static gs_time busy_wait(const gs_engine *e, const int *gpus, int n)
{
    gs_time w = 0;
    if (!e->busy) return 0;
    for (int i = 0; i < n; i++)
        if (e->busy[gpus[i]] - e->now > w) w = e->busy[gpus[i]] - e->now;
    return w;
}

/* The engine's profiles, parsing the built-in table on first use (a cache: logically const). */
static const gs_profiles *profiles(const gs_engine *e)
{
    if (!e->profiles) {
        gs_engine *m = (gs_engine *)e;
        gs_diag d;
        gs_diag_init(&d, NULL);
        if (gs_profiles_builtin(&m->profiles, &d)) {
            /* out of memory: the engine is failed; answer with the empty table meanwhile */
            latch(m, GS_ENOMEM);
            return gs_profiles_empty();
        }
    }
    return e->profiles;
}

/* Name of the GPU type j runs (or last ran) on; NULL when unknown. */
static int job_gpu_type_id(const gs_engine *e, const gs_job *j);

static const char *job_gpu_type(const gs_engine *e, const gs_job *j)
{
    int t = job_gpu_type_id(e, j);
    return t >= 0 ? gs_cluster_gpu_type_name(e->c, t) : NULL;
}

/* GPU type id j runs (or last ran) on; -1 when unknown. */
static int job_gpu_type_id(const gs_engine *e, const gs_job *j)
{
    if (j->alloc && j->nalloc > 0) return gs_cluster_gpu(e->c, j->alloc[0])->type;
    if (!j->alloc && j->last_alloc && j->nlast_alloc > 0)
        return gs_cluster_gpu(e->c, j->last_alloc[0])->type;
    return j->gpu_type;
}

const gs_profile *gs_engine_job_profile(const gs_engine *e, const gs_job *j)
{
    gs_engine *m = (gs_engine *)e; /* a cache: logically const */
    size_t types = gs_cluster_ngpu_types(e->c) + 1;
    size_t mid = (size_t)j->model_id;
    if (mid >= m->pcache_models) {
        size_t nc = m->pcache_models ? m->pcache_models : 16;
        while (nc <= mid) nc *= 2;
        const gs_profile **p = realloc(m->pcache, nc * types * sizeof *p);
        if (!p) return gs_profiles_get(profiles(e), j->model, job_gpu_type(e, j));
        memset(p + m->pcache_models * types, 0, (nc - m->pcache_models) * types * sizeof *p);
        m->pcache = p;
        m->pcache_models = nc;
    }
    const gs_profile **slot = &m->pcache[mid * types + (size_t)(job_gpu_type_id(e, j) + 1)];
    if (!*slot) *slot = gs_profiles_get(profiles(e), j->model, job_gpu_type(e, j));
    return *slot;
}

int gs_engine_job_gpu_mem(const gs_engine *e, const gs_job *j)
{
    return j->gpu_mem_mb > 0 ? j->gpu_mem_mb : gs_engine_job_profile(e, j)->gpu_mem_mb;
}

/* Memory parked on gpu by jobs other than j (j's own when it is suspended there). */
static int parked_others(const gs_engine *e, const gs_job *j, int gpu)
{
    if (!e->parked || gpu < 0 || (size_t)gpu >= gs_cluster_ngpus(e->c)) return 0;
    int p = e->parked[gpu];
    if (p && j->state == GS_JOB_SUSPENDED && j->last_alloc)
        for (int k = 0; k < j->nlast_alloc; k++)
            if (j->last_alloc[k] == gpu) return p - gs_engine_job_gpu_mem(e, j);
    return p;
}

/* j (plus 'extra' MB of a pack partner) on gpu next to the memory parked there: 1 when nothing
 * else is parked there or the sum fits the GPU's memory. */
static int gpu_fits(const gs_engine *e, const gs_job *j, int gpu, int extra)
{
    int p = parked_others(e, j, gpu);
    if (p <= 0) return 1;
    const char *type = gs_cluster_gpu_type_name(e->c, gs_cluster_gpu(e->c, gpu)->type);
    return (int64_t)p + gs_engine_job_gpu_mem(e, j) + extra <=
           gs_profiles_gpu_mem(profiles(e), type);
}

/* GS_ENOFIT unless j fits every GPU of gpus[0..n) next to the memory parked there. */
static int parked_fit(const gs_engine *e, const gs_job *j, const int *gpus, int n, int extra)
{
    for (int i = 0; e->parked && i < n; i++)
        if (!gpu_fits(e, j, gpus[i], extra)) return GS_ENOFIT;
    return 0;
}

int gs_engine_gpu_parked_mem(const gs_engine *e, int gpu)
{
    if (!e->parked || gpu < 0 || (size_t)gpu >= gs_cluster_ngpus(e->c)) return 0;
    return e->parked[gpu];
}

int gs_engine_gpu_fits(const gs_engine *e, const gs_job *j, int gpu)
{
    return gpu_fits(e, j, gpu, 0);
}

/* Bank the progress of a RUNNING job up to now. */
static void bank(gs_engine *e, gs_job *j)
{
    if (j->progress_from >= e->now) return;
    gs_time rem = gs_job_remaining(j, e->now);
    j->progress += j->remaining - rem;
    j->remaining = rem;
    j->progress_from = e->now;
}

/*
 * Speed by GPU type (docs/heterogeneity.md, "Speed model").  The rate of j on 'gpus' GPUs of
 * cluster type t relative to the reference type (t < 0: the reference, 1): from the
 * profiles (gs_profiles_rate), 1 with type_speed=off or on a type every model runs on at the
 * reference speed.  Allocates nothing the engine needs (a failed growth of the cache only
 * recomputes), so it is safe inside a transition.
 */
static double type_rate_of(const gs_engine *e, const gs_job *j, int t, int gpus)
{
    gs_engine *m = (gs_engine *)e;
    size_t nt = gs_cluster_ngpu_types(e->c);
    if (!e->type_speed || t < 0 || (size_t)t >= nt || gpus <= 0 || e->tsame[t]) return 1.0;
    const char *name = gs_cluster_gpu_type_name(e->c, t);
    size_t mid = (size_t)j->model_id;
    if (j->model_id < 0 || mid >= m->rcache_models) {
        size_t nc = m->rcache_models ? m->rcache_models : 16;
        while (j->model_id >= 0 && nc <= mid) nc *= 2;
        struct rate_slot *r =
            j->model_id < 0 ? NULL : realloc(m->rcache, nc * nt * RATE_SLOTS * sizeof *r);
        if (!r) return gs_profiles_rate(profiles(e), j->model, name, e->ref_type, gpus);
        memset(r + m->rcache_models * nt * RATE_SLOTS, 0,
               (nc - m->rcache_models) * nt * RATE_SLOTS * sizeof *r);
        m->rcache = r;
        m->rcache_models = nc;
    }
    /* one slot per GPU count 1..RATE_SLOTS-1, the last one shared by larger counts */
    size_t k = gpus < RATE_SLOTS ? (size_t)gpus - 1 : RATE_SLOTS - 1;
    struct rate_slot *slot = &m->rcache[(mid * nt + (size_t)t) * RATE_SLOTS + k];
    if (slot->gpus != gpus) {
        slot->rate = gs_profiles_rate(profiles(e), j->model, name, e->ref_type, gpus);
        slot->gpus = gpus;
    }
    return slot->rate;
}

/* Type rate of j on its current GPUs: the slowest of their types' (a gang spanning several
 * types runs at the slowest one's pace); its requested type (or 1) when it holds none. */
static double alloc_type_rate(const gs_engine *e, const gs_job *j)
{
    if (!e->type_speed) return 1.0;
    if (!j->alloc || j->nalloc <= 0) return type_rate_of(e, j, j->gpu_type, j->gpus);
    uint32_t seen = 0;
    double r = 0;
    for (int k = 0; k < j->nalloc; k++) {
        int t = gs_cluster_gpu(e->c, j->alloc[k])->type;
        if (t >= 0 && t < ENGINE_MAX_TYPES) {
            if (seen & (1u << t)) continue;
            seen |= 1u << t;
        }
        double x = type_rate_of(e, j, t, j->gpus);
        if (k == 0 || x < r) r = x;
    }
    return r;
}

static double scale_rate(const gs_engine *e, const gs_job *j)
{
    if (j->gpus == j->req_gpus) return 1.0;
    return gs_costs_scale(&e->costs, j->model, j->gpus) /
           gs_costs_scale(&e->costs, j->model, j->req_gpus);
}

/* ---- progress model (gs_engine_set_progress): jobs with app set ---- */

static int modelled(const gs_engine *e, const gs_job *j)
{
    return e->prog && j->app;
}

/* j holds the GPUs of a new generation (or moved to others): the model re-tunes. */
static void model_placed(gs_engine *e, gs_job *j)
{
    if (modelled(e, j) && e->prog->advance) latch(e, e->prog->advance(e->prog_st, e, j, 1));
}

/* j let go of its GPUs (PENDING again, or final). */
static void model_release(gs_engine *e, gs_job *j)
{
    if (modelled(e, j) && e->prog->release) e->prog->release(e->prog_st, e, j);
}

/* SIM: the instant j's progress reaches 'next' (a model boundary), unless it finishes first. */
static void schedule_boundary(gs_engine *e, gs_job *j, gs_time next)
{
    if (e->opts.mode != GS_ENGINE_SIM || next == GS_TIME_NONE || next <= j->progress) return;
    if (next - j->progress >= j->remaining) return; /* it finishes first */
    double r = ceil((double)(next - j->progress) / j->speed);
    gs_time at = j->progress_from + (r < 3.2e16 ? (gs_time)r : (gs_time)3.2e16);
    (void)heap_push(e, (ev){.t = at, .kind = EV_BOUNDARY, .key = j->slot, .gen = j->gen});
}

/* Set a RUNNING job's speed from its rates (or its progress model) and (re)predict its
 * completion and next model boundary. */
static void set_speed(gs_engine *e, gs_job *j)
{
    gs_time next = GS_TIME_NONE;
    if (modelled(e, j)) {
        double r = 0;
        int rc = e->prog->rate(e->prog_st, e, j, &r, &next);
        if (!rc && !(r > 0 && r < 1e9)) rc = GS_EINVAL;
        if (rc) {
            latch(e, rc);
            r = 1.0;
            next = GS_TIME_NONE;
        }
        j->speed = r * j->pack_rate * j->type_rate;
    } else {
        j->speed = j->place_rate * j->pack_rate * j->scale_rate * j->type_rate;
    }
    j->gen++;
    schedule_finish(e, j);
    schedule_boundary(e, j, next);
    if (j->protect_until > e->now)
        heap_push(e,
                  (ev){.t = j->protect_until, .kind = EV_PROTECT, .key = j->slot, .gen = j->gen});
}

/*
 * j leaves its pack; the other job keeps the GPUs and runs alone again.  The
 * caller emits GS_REC_UNPACK once j's own bookkeeping is consistent again.
 */
static void unpack(gs_engine *e, gs_job *j)
{
    gs_job *s = job_at(e, (size_t)j->pack_with);
    if (j->pack_guest) {
        for (int k = 0; k < j->nalloc; k++)
            gs_cluster_unshare(e->c, j->alloc[k], gs_engine_job_gpu_mem(e, j));
    } else {
        gs_cluster_handover(e->c, j->alloc, j->nalloc, j->slot, s->slot,
                            gs_engine_job_gpu_mem(e, s));
    }
    e->packed -= j->nalloc;
    if (e->now > j->since) {
        j->packed += e->now - j->since;
        s->packed += e->now - s->since;
    }
    j->pack_with = s->pack_with = -1;
    j->pack_guest = s->pack_guest = 0;
    j->pack_rate = 1.0;
    if (s->pack_rate != 1.0) {
        bank(e, s);
        s->pack_rate = 1.0;
        set_speed(e, s);
    }
}

/*
 * j stops using its GPUs (it stays whatever state the caller gives it): a
 * packed job leaves its pack, others free their GPUs.  alloc moves to
 * last_alloc.  Returns 1 if GPUs were freed.
 */
static int drop_gpus(gs_engine *e, gs_job *j, const char *why)
{
    int freed = 0, packed = j->pack_with >= 0;
    if (packed) {
        unpack(e, j);
    } else {
        gs_cluster_release(e->c, j->alloc, j->nalloc, j->slot);
        e->allocated -= j->nalloc;
        e->epoch++;
        freed = 1;
    }
    refund_tasks(e, j, j->alloc, j->ntasks);
    free(j->last_alloc);
    j->last_alloc = j->alloc;
    j->nlast_alloc = j->nalloc;
    j->alloc = NULL;
    j->nalloc = 0;
    j->vanished = 0;
    j->uncharged = 0;
    j->gen++;
    if (packed) emit(e, GS_REC_UNPACK, j, -1, why);
    return freed;
}

/* ---- transitions: one function each (the diagram in job.h names them) ----------------- */

/* An arrived PENDING job stops waiting: its queued time closes, the pending counters drop. */
static void leave_pending(gs_engine *e, gs_job *j)
{
    j->queued += e->now - j->pending_since;
    e->npending--;
    e->pending_gpus -= j->gpus;
}

/* SIM, suspend_mech=sigstop: a suspended job's GPU memory stays on the GPUs it left. */
static int parks(const gs_engine *e)
{
    return e->opts.mode == GS_ENGINE_SIM && gs_costs_suspend_parks(&e->costs);
}

/* A SUSPENDED job stops being suspended (its parked memory, if any, leaves with it). */
static void leave_suspended(gs_engine *e, gs_job *j)
{
    j->suspended += e->now - j->since;
    e->nsuspended--;
    if (e->parked && j->last_alloc) {
        int mem = gs_engine_job_gpu_mem(e, j);
        for (int k = 0; k < j->nlast_alloc; k++) e->parked[j->last_alloc[k]] -= mem;
    }
}

/*
 * A PENDING job starts on n GPUs: its first start (free, or with launch_cost=on
 * the relaunch cost, gs_costs_relaunch), or a restart that pays the restart
 * cost (gs_costs_restart) without progress.  Returns the cost.
 */
static gs_time charge_restart(gs_engine *e, gs_job *j, int n)
{
    j->overhead = 0;
    if (j->first_start == GS_TIME_NONE) {
        j->first_start = e->now;
        if (!e->launch_cost) return 0;
        /* launch_cost=on: the first launch is paid like a relaunch (the Pollux artifact) */
        j->overhead = gs_costs_relaunch(&e->costs, j->model, n);
        j->overhead_total += j->overhead;
        j->overhead_gpu_s += (double)n * gs_time_to_sec(j->overhead);
        return j->overhead;
    }
    j->restarts++;
    j->overhead = gs_costs_restart(&e->costs, j->model, n, j->stop_saved);
    if (j->overhead > 0) {
        j->overhead_total += j->overhead;
        j->overhead_gpu_s += (double)n * gs_time_to_sec(j->overhead);
        j->overhead_charges++;
    }
    return j->overhead;
}

/* PENDING -> RUNNING on gpus (validated by take_gpus; nothing changes on error). */
static int tr_start(gs_engine *e, gs_job *j, const int *gpus, int n)
{
    int oldg = j->gpus, oldt = j->ntasks;
    if (n != j->gpus && gs_job_size_valid(j, n)) {
        /* an elastic job starts at any of its sizes */
        j->gpus = n;
        j->ntasks = n / j->gpus_per_task;
    }
    int rc = take_gpus(e, j, gpus, n);
    if (rc) {
        j->gpus = oldg;
        j->ntasks = oldt;
        return nomem(e, rc);
    }
    e->pending_gpus += j->gpus - oldg; /* it waited as oldg GPUs */
    leave_pending(e, j);
    j->generation++;
    j->last_ckpt = j->progress;
    charge_restart(e, j, n);
    gs_time stall = busy_wait(e, gpus, n);
    j->mech_time += stall;
    j->last_start = e->now;
    j->state = GS_JOB_RUNNING;
    j->reason = NULL;
    j->place_rate = 1.0 / gs_costs_slowdown(&e->costs, e->c, j->model, j->alloc, n);
    j->pack_rate = 1.0;
    j->scale_rate = scale_rate(e, j);
    j->type_rate = alloc_type_rate(e, j);
    j->progress_from = e->now + stall + j->overhead;
    /* a restarted job runs productively at least as long as its restart took
     * before a preemptive policy may stop it again: bounds thrashing waste */
    j->protect_until = e->now + 2 * j->overhead;
    e->nrunning++;
    e->allocated += n;
    model_placed(e, j);
    emit(e, GS_REC_START, j, -1, NULL);
    set_speed(e, j); /* bumps gen, predicts the finish, re-arms the protection event */
    return e->err;
}

int gs_engine_start(gs_engine *e, const gs_job *cj, const int *gpus, int n)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (j->state != GS_JOB_PENDING || !j->arrived) return GS_ESTATE;
    return tr_start(e, j, gpus, n);
}

/* Close the current run: account time and progress, free GPUs. */
static void drop_resv(gs_engine *e, gs_job *j);

static void close_run(gs_engine *e, gs_job *j, const char *why)
{
    if (j->state == GS_JOB_PREEMPTED) e->stopping -= j->nalloc;
    if (j->state == GS_JOB_DRAINING) drop_resv(e, j);
    gs_time rem = gs_job_remaining(j, e->now);
    j->progress += j->remaining - rem;
    j->remaining = rem;
    j->executed += e->now - j->last_start;
    j->service += (double)j->nalloc * gs_time_to_sec(e->now - j->last_start);
    drop_gpus(e, j, why);
}

static void to_pending(gs_engine *e, gs_job *j)
{
    if (j->gpus != j->req_gpus) {
        /* a resized job starts again at the size it asked for */
        j->gpus = j->req_gpus;
        j->ntasks = j->req_gpus / j->gpus_per_task;
        j->scale_rate = 1.0;
    }
    j->state = GS_JOB_PENDING;
    j->pending_since = e->now;
    e->npending++;
    e->pending_gpus += j->gpus;
}

/*
 * RUNNING, PREEMPTED or SUSPENDED -> PENDING: close the run (or the
 * suspension), report 'rec' and tell the policy (on_requeue, at once - also
 * when the request came from inside schedule()).  'saved' (0/1) says whether
 * the job's state was checkpointed (restart cost), -1 keeps what it was;
 * 'set_reason' makes 'why' the job's pending reason.
 */
static int tr_requeue(gs_engine *e, gs_job *j, gs_rec_type rec, const char *why, int saved,
                      int set_reason)
{
    if (holds_gpus(j)) {
        close_run(e, j, why);
        e->nrunning--;
    } else {
        leave_suspended(e, j);
    }
    if (saved >= 0) j->stop_saved = saved;
    to_pending(e, j);
    if (set_reason) j->reason = why;
    model_release(e, j);
    emit(e, rec, j, -1, why);
    if (e->reconfigured || e->opts.mode == GS_ENGINE_LIVE) {
        /* it may never fit the reconfigured cluster (LIVE: the daemon may have restarted on
         * a changed one): checked once the instant's hooks and pass are over
         * (recheck_requeued) */
        if (e->nrecheck == e->caprecheck) {
            size_t nc = e->caprecheck ? 2 * e->caprecheck : 16;
            int32_t *n = realloc(e->recheck, nc * sizeof *n);
            if (!n) return latch(e, GS_ENOMEM);
            e->recheck = n;
            e->caprecheck = nc;
        }
        e->recheck[e->nrecheck++] = j->slot;
    }
    return hook_job(e, e->pol->on_requeue, j);
}

/* RUNNING -> PREEMPTED (LIVE): stop requested; GPUs stay held until the tasks are gone. */
static int tr_stop(gs_engine *e, gs_job *j, const char *reason)
{
    gs_time rem = gs_job_remaining(j, e->now);
    j->progress += j->remaining - rem;
    j->remaining = rem;
    j->progress_from = GS_TIME_MAX;
    j->state = GS_JOB_PREEMPTED;
    j->stop_saved = 1;
    e->stopping += j->nalloc;
    j->gen++;
    emit(e, GS_REC_PREEMPT, j, -1, reason);
    return 0;
}

int gs_engine_preempt(gs_engine *e, const gs_job *cj, const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (j->state != GS_JOB_RUNNING) return GS_ESTATE;
    j->preemptions++;
    if (e->opts.mode == GS_ENGINE_LIVE) return tr_stop(e, j, reason);
    return tr_requeue(e, j, GS_REC_PREEMPT, reason, 1, 1);
}

/* Any non-final state -> DONE, FAILED or CANCELLED. */
static int tr_finish(gs_engine *e, gs_job *j, gs_job_state final, const char *reason)
{
    int was = j->state;
    if (holds_gpus(j)) {
        close_run(e, j, final == GS_JOB_DONE ? "finished" : "stopped");
        e->nrunning--;
    } else if (was == GS_JOB_PENDING && j->arrived) {
        leave_pending(e, j);
    } else if (was == GS_JOB_SUSPENDED) {
        leave_suspended(e, j);
    }
    if (final == GS_JOB_DONE) {
        /* the completion event is authoritative: absorb sub-microsecond rounding */
        j->progress += j->remaining;
        j->remaining = 0;
    }
    j->state = final;
    j->end = e->now;
    j->reason = reason;
    e->nactive--;
    model_release(e, j);
    emit(e,
         final == GS_JOB_DONE     ? GS_REC_FINISH
         : final == GS_JOB_FAILED ? GS_REC_FAIL
                                  : GS_REC_CANCEL,
         j, -1, reason);
    /* a job that never arrived (cancelled while deferred, or before its arrival) was never
     * the policy's: it has nothing to forget */
    if (!j->arrived) return e->err;
    return hook_job(e, e->pol->on_finish, j);
}

/* ---- mechanisms ----------------------------------------------------------------------- */

/* Iteration (mini-batch) length in work units: the trace's, else the profile's. */
static gs_time iter_work(const gs_engine *e, const gs_job *j)
{
    if (j->iterations > 0 && j->work > 0) {
        gs_time w = j->work / j->iterations;
        return w > 0 ? w : 1;
    }
    gs_time w = gs_time_from_sec(gs_engine_job_profile(e, j)->iter_s);
    return w > 0 ? w : 1;
}

/*
 * RUNNING -> SUSPENDED (GS_ESTATE, nothing changed, if it would finish its mini-batch first).
 * SIM charges the suspend by suspend_mech (gsched/costs.h): copy waits for the mini-batch in
 * flight; sigstop leaves the job's GPU memory parked on its GPUs (e->parked).
 */
static int tr_suspend(gs_engine *e, gs_job *j, const char *reason)
{
    gs_time wait = 0, copy = 0;
    int sim = e->opts.mode == GS_ENGINE_SIM, park = parks(e);
    if (park && !e->parked) {
        size_t ng = gs_cluster_ngpus(e->c);
        if (!(e->parked = calloc(ng ? ng : 1, sizeof *e->parked))) return latch(e, GS_ENOMEM);
    }
    bank(e, j);
    /* suspended while still restarting or moving: the rest of that is paid on resume */
    j->owed = j->progress_from > e->now ? j->progress_from - e->now : 0;
    if (sim && j->progress_from <= e->now) {
        if (gs_costs_suspend_waits(&e->costs)) {
            /* finish the mini-batch in flight: exact, from the work done so far */
            gs_time it = iter_work(e, j);
            gs_time done = j->work - j->remaining;
            gs_time left = (it - done % it) % it;
            if (left >= j->remaining) return GS_ESTATE; /* it finishes first */
            j->remaining -= left;
            j->progress += left;
            wait = j->speed == 1.0 ? left : (gs_time)ceil((double)left / j->speed);
        }
        copy = gs_costs_suspend(&e->costs, j->model, gs_engine_job_gpu_mem(e, j));
    }
    int mem = park ? gs_engine_job_gpu_mem(e, j) : 0;
    /* executed time ends now (JCT = queued + executed + suspended); the mini-batch it
     * finishes and the copy out happen while it is already SUSPENDED, its GPUs busy */
    gs_time held = e->now - j->last_start;
    j->executed += held;
    j->service += (double)j->nalloc * gs_time_to_sec(held);
    j->suspend_gpu_s += (double)j->nalloc * gs_time_to_sec(copy);
    j->mech_time += copy;
    j->ready_at = e->now + wait + copy;
    int packed = j->pack_with >= 0;
    if (!packed && e->busy)
        for (int k = 0; k < j->nalloc; k++)
            if (e->busy[j->alloc[k]] < j->ready_at) e->busy[j->alloc[k]] = j->ready_at;
    drop_gpus(e, j, reason);
    for (int k = 0; park && k < j->nlast_alloc; k++) e->parked[j->last_alloc[k]] += mem;
    j->state = GS_JOB_SUSPENDED;
    j->since = e->now;
    j->suspends++;
    e->nrunning--;
    e->nsuspended++;
    emit(e, GS_REC_SUSPEND, j, -1, reason);
    return 0;
}

static const char *infeasible(gs_engine *e, const gs_job *j);

int gs_engine_suspend(gs_engine *e, const gs_job *cj, const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->mech_off & GS_MECH_BIT(GS_MECH_SUSPEND)) return GS_EUNSUPPORTED;
    if (j->state != GS_JOB_RUNNING) return GS_ESTATE;
    /* after a reconfiguration a running job may hold GPUs of a type the cluster no longer has:
     * suspended, it could never be resumed (nothing rejects a suspended job), so it runs on */
    if (e->reconfigured && infeasible(e, j)) return GS_ENEVER;
    return tr_suspend(e, j, reason);
}

/* 1 when every GPU of gpus[0..n) sits on a node of j's last GPUs. */
/* 1 when some GPU of gpus[0..n) is on a node where none of old[0..nold) is. */
static int leaves_nodes(const gs_engine *e, const int32_t *old, int nold, const int *gpus, int n)
{
    for (int i = 0; i < n; i++) {
        int node = gs_cluster_gpu(e->c, gpus[i])->node, found = 0;
        for (int k = 0; k < nold && !found; k++) found = gs_cluster_gpu(e->c, old[k])->node == node;
        if (!found) return 1;
    }
    return 0;
}

static int same_nodes(const gs_engine *e, const gs_job *j, const int *gpus, int n)
{
    return j->last_alloc && !leaves_nodes(e, j->last_alloc, j->nlast_alloc, gpus, n);
}

static int same_gpus(const gs_job *j, const int *gpus, int n)
{
    if (!j->last_alloc || j->nlast_alloc != n) return 0;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int k = 0; k < n && !found; k++) found = j->last_alloc[k] == gpus[i];
        if (!found) return 0;
    }
    return 1;
}

/* 1 when each task of j's placement gpus (validated) sits on the node that task left: a LIVE
 * resume may restore it on other GPUs there (gs_engine_opts.live_remap). */
static int same_task_nodes(const gs_engine *e, const gs_job *j, const int *gpus, int n)
{
    if (!j->last_alloc || j->nlast_alloc != n) return 0;
    for (int t = 0; t < j->ntasks; t++) {
        int k = gs_job_task_first(j, t);
        if (gs_cluster_gpu(e->c, gpus[k])->node != gs_cluster_gpu(e->c, j->last_alloc[k])->node)
            return 0;
    }
    return 1;
}

/* Cost of bringing a SUSPENDED job back on gpus (SIM; by suspend_mech); counts it. */
static gs_time resume_cost(gs_engine *e, gs_job *j, const int *gpus, int n)
{
    gs_time cost;
    if (same_nodes(e, j, gpus, n) || gs_costs_resume_anywhere(&e->costs)) {
        cost = gs_costs_resume(&e->costs, j->model, n, gs_engine_job_gpu_mem(e, j));
        j->suspend_gpu_s += (double)n * gs_time_to_sec(cost);
    } else {
        /* its state sits in another node's host memory: a migration */
        cost = gs_costs_migrate(&e->costs, j->model, n, 1);
        j->migrations++;
        j->migrate_gpu_s += (double)n * gs_time_to_sec(cost);
    }
    j->resumes++;
    return cost;
}

/*
 * Common tail of resume/pack from SUSPENDED and pack from PENDING: j holds
 * its GPUs and makes no progress for stall + cost ('cost' counts as mechanism
 * time unless it is a restart overhead).
 */
static void run_again(gs_engine *e, gs_job *j, gs_time cost, gs_time stall, int restart)
{
    if (j->state == GS_JOB_SUSPENDED && j->ready_at > e->now + stall) stall = j->ready_at - e->now;
    if (j->state == GS_JOB_SUSPENDED) {
        cost += j->owed; /* what it had not finished paying when it was suspended */
        j->owed = 0;
    }
    j->mech_time += stall + (restart ? 0 : cost);
    j->last_start = e->now;
    j->state = GS_JOB_RUNNING;
    j->reason = NULL;
    j->place_rate = 1.0 / gs_costs_slowdown(&e->costs, e->c, j->model, j->alloc, j->nalloc);
    j->scale_rate = scale_rate(e, j);
    j->type_rate = alloc_type_rate(e, j);
    j->progress_from = e->now + stall + cost;
    e->nrunning++;
}

/* SUSPENDED -> RUNNING on gpus (validated by take_gpus; nothing changes on error). */
static int tr_resume(gs_engine *e, gs_job *j, const int *gpus, int n)
{
    int rc = take_gpus(e, j, gpus, n);
    if (rc) return rc;
    gs_time cost = 0;
    if (e->opts.mode == GS_ENGINE_LIVE)
        j->resumes++; /* SIGCONT (and a restore, perhaps on other GPUs of its nodes) */
    else
        cost = resume_cost(e, j, gpus, n);
    leave_suspended(e, j);
    e->allocated += n;
    j->pack_rate = 1.0;
    run_again(e, j, cost, busy_wait(e, gpus, n), 0);
    model_placed(e, j);
    emit(e, GS_REC_RESUME, j, -1, NULL);
    set_speed(e, j);
    return e->err;
}

int gs_engine_resume(gs_engine *e, const gs_job *cj, const int *gpus, int n)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->mech_off & GS_MECH_BIT(GS_MECH_RESUME)) return GS_EUNSUPPORTED;
    if (j->state != GS_JOB_SUSPENDED) return GS_ESTATE;
    if (e->opts.mode == GS_ENGINE_LIVE) {
        /* a task's processes stay on their node: each task continues there, on the GPUs it
         * left - or, with live_remap, on other GPUs of that node */
        if (!e->opts.live_remap && !same_gpus(j, gpus, n)) return GS_EUNSUPPORTED;
        int rc = validate_gpus(e, j, gpus, n);
        if (rc) return rc;
        if (!same_task_nodes(e, j, gpus, n)) return GS_EUNSUPPORTED;
    }
    /* suspend_mech=sigstop: a stopped process continues where it was */
    if (parks(e) && !same_gpus(j, gpus, n)) return GS_EUNSUPPORTED;
    if (e->mech_off & GS_MECH_BIT(GS_MECH_MIGRATE)) {
        /* on other nodes it would be a migration (resume_cost) */
        int rc = validate_gpus(e, j, gpus, n);
        if (rc) return rc;
        if (!same_nodes(e, j, gpus, n)) return GS_EUNSUPPORTED;
    }
    return tr_resume(e, j, gpus, n);
}

static int tr_pack(gs_engine *e, gs_job *j, gs_job *host, double rj, double rh);

int gs_engine_pack(gs_engine *e, const gs_job *cj, const gs_job *chost)
{
    gs_job *j = mut(e, cj), *host = mut(e, chost);
    if (e->err) return e->err;
    if (e->mech_off & GS_MECH_BIT(GS_MECH_PACK)) return GS_EUNSUPPORTED;
    int from_pending = j->state == GS_JOB_PENDING;
    if (!(from_pending && j->arrived) && j->state != GS_JOB_SUSPENDED) return GS_ESTATE;
    if (host == j || host->state != GS_JOB_RUNNING || host->pack_with >= 0 || host->vanished ||
        host->uncharged)
        return GS_ESTATE;
    if (host->gpus != j->gpus) return GS_EINVAL;
    for (int k = 0; k < host->nalloc; k++) /* a bad or drained node takes nobody new */
        if (gs_cluster_gpu(e->c, host->alloc[k])->down) return GS_ECONFLICT;
    if (!from_pending && (e->mech_off & GS_MECH_BIT(GS_MECH_MIGRATE)) &&
        !same_nodes(e, j, host->alloc, host->nalloc))
        return GS_EUNSUPPORTED; /* a resume on other nodes is a migration */
    if (!from_pending && parks(e) && !same_gpus(j, host->alloc, host->nalloc))
        return GS_EUNSUPPORTED; /* sigstop: a stopped process continues where it was */
    int rc = validate_gpus(e, j, host->alloc, host->nalloc);
    if (rc) return rc;
    const char *type = job_gpu_type(e, host);
    int mem_j = gs_engine_job_gpu_mem(e, j), mem_h = gs_engine_job_gpu_mem(e, host);
    if (mem_j + mem_h > gs_profiles_gpu_mem(profiles(e), type)) return GS_ENOFIT;
    if ((rc = parked_fit(e, j, host->alloc, host->nalloc, mem_h)) != 0) return rc;
    double rj, rh;
    gs_profiles_pair(profiles(e), j->model, host->model, type, &rj, &rh);
    if (rj <= 0 || rh <= 0) return GS_ENOFIT; /* measured: they do not run together */
    return tr_pack(e, j, host, rj, rh);
}

/*
 * PENDING or SUSPENDED -> RUNNING, packed onto the GPUs of 'host' at pair
 * rates rj (j) and rh (host): from PENDING a (re)start, from SUSPENDED a
 * resume.  Nothing changes on error.
 */
static int tr_pack(gs_engine *e, gs_job *j, gs_job *host, double rj, double rh)
{
    int from_pending = j->state == GS_JOB_PENDING;
    int mem_j = gs_engine_job_gpu_mem(e, j);
    int rc = charge_tasks(e, j, host->alloc);
    if (rc) return rc;
    int32_t *a = malloc((size_t)host->nalloc * sizeof *a);
    if (!a) {
        refund_tasks(e, j, host->alloc, j->ntasks);
        return latch(e, GS_ENOMEM);
    }
    for (int k = 0; k < host->nalloc; k++) {
        a[k] = host->alloc[k];
        gs_cluster_share(e->c, a[k], mem_j, 0);
    }
    int n = host->nalloc;
    gs_time cost = 0;
    if (from_pending) {
        leave_pending(e, j);
        cost = charge_restart(e, j, n);
        j->generation++;
        j->last_ckpt = j->progress;
    } else {
        cost = resume_cost(e, j, a, n);
        leave_suspended(e, j);
    }
    j->alloc = a;
    j->nalloc = n;
    j->pack_with = host->slot;
    host->pack_with = j->slot;
    j->pack_guest = 1;
    host->pack_guest = 0;
    j->since = host->since = e->now;
    j->packs++;
    e->packed += n;
    bank(e, host);
    host->pack_rate = rh;
    set_speed(e, host);
    j->pack_rate = rj;
    run_again(e, j, cost, busy_wait(e, a, n), from_pending);
    if (from_pending) j->protect_until = e->now + 2 * j->overhead;
    emit(e, from_pending ? GS_REC_START : GS_REC_RESUME, j, -1, "packed");
    emit(e, GS_REC_PACK, j, -1, NULL);
    model_placed(e, j);
    set_speed(e, j);
    return e->err;
}

/*
 * Move a RUNNING, unpacked job from its GPUs to gpus (n of them, as ntasks
 * tasks; may overlap the old ones): release the old GPUs, take the new ones,
 * and on failure take the old ones back (they were just its own, so that
 * cannot fail) - the one rollback of a failed take.  0 or take_gpus' error.
 */
static int swap_gpus(gs_engine *e, gs_job *j, const int *gpus, int n, int ntasks)
{
    int32_t *keep = j->alloc;
    int nkeep = j->nalloc, oldtasks = j->ntasks, oldgpus = j->gpus;
    gs_cluster_release(e->c, keep, nkeep, j->slot);
    refund_tasks(e, j, keep, oldtasks);
    j->alloc = NULL;
    j->ntasks = ntasks;
    j->gpus = n;
    int rc = take_gpus(e, j, gpus, n);
    if (rc) {
        j->ntasks = oldtasks;
        j->gpus = oldgpus;
        j->alloc = keep;
        j->nalloc = nkeep;
        gs_cluster_alloc(e->c, keep, nkeep, j->slot);
        charge_tasks(e, j, keep);
        return rc;
    }
    free(keep);
    e->allocated += n - nkeep;
    e->epoch++;
    return 0;
}

int gs_engine_migrate(gs_engine *e, const gs_job *cj, const int *gpus, int n, const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->mech_off & GS_MECH_BIT(GS_MECH_MIGRATE)) return GS_EUNSUPPORTED;
    if (j->state != GS_JOB_RUNNING || j->vanished || j->uncharged) return GS_ESTATE;
    int rc = validate_gpus(e, j, gpus, n);
    if (rc) return rc;
    int *dst = malloc((size_t)n * sizeof *dst);
    int32_t *old = malloc((size_t)j->nalloc * sizeof *old);
    if (!dst || !old) {
        free(dst);
        free(old);
        return latch(e, GS_ENOMEM);
    }
    memcpy(dst, gpus, (size_t)n * sizeof *dst);
    memcpy(old, j->alloc, (size_t)j->nalloc * sizeof *old);
    int nold = j->nalloc;
    bank(e, j);
    if (j->pack_with >= 0) {
        /* its GPUs stay with its partner: the destination must be free */
        for (int i = 0; i < n && !rc; i++)
            if (gs_cluster_gpu(e->c, dst[i])->users) rc = GS_ECONFLICT;
        if (!rc) {
            int32_t *keep = j->alloc;
            int nkeep = j->nalloc;
            j->alloc = NULL;
            rc = take_gpus(e, j, dst, n);
            int32_t *mine = j->alloc;
            j->alloc = keep;
            j->nalloc = nkeep;
            if (!rc) {
                unpack(e, j);
                refund_tasks(e, j, keep, j->ntasks);
                free(keep);
                j->alloc = mine;
                j->nalloc = n;
                e->allocated += n;
                emit(e, GS_REC_UNPACK, j, -1, reason);
            }
        }
    } else {
        rc = swap_gpus(e, j, dst, n, j->ntasks);
    }
    if (rc) {
        free(dst);
        free(old);
        return rc;
    }
    gs_time stall = busy_wait(e, dst, n);
    gs_time cost = gs_costs_migrate(&e->costs, j->model, n, leaves_nodes(e, old, nold, dst, n));
    free(dst);
    free(old);
    j->migrations++;
    j->migrate_gpu_s += (double)n * gs_time_to_sec(cost);
    j->mech_time += stall + cost;
    j->place_rate = 1.0 / gs_costs_slowdown(&e->costs, e->c, j->model, j->alloc, n);
    j->pack_rate = 1.0;
    j->type_rate = alloc_type_rate(e, j);
    if (j->progress_from < e->now + stall + cost) j->progress_from = e->now + stall + cost;
    model_placed(e, j);
    emit(e, GS_REC_MIGRATE, j, -1, reason);
    set_speed(e, j);
    return e->err;
}

int gs_engine_resize(gs_engine *e, const gs_job *cj, const int *gpus, int n, const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->mech_off & GS_MECH_BIT(GS_MECH_RESIZE)) return GS_EUNSUPPORTED;
    if (j->state != GS_JOB_RUNNING || j->pack_with >= 0 || j->vanished || j->uncharged)
        return GS_ESTATE;
    int gpt = j->gpus_per_task;
    if (!gs_job_size_valid(j, n)) return GS_EINVAL; /* range, multiple of gpt, sizes list */
    int oldn = j->nalloc;
    /* 'gpus' may point into j->alloc, which is about to be freed */
    int *want = malloc((size_t)n * sizeof *want);
    if (!want) return latch(e, GS_ENOMEM);
    memcpy(want, gpus, (size_t)n * sizeof *want);
    gpus = want;
    /* close the accounting of the old size */
    bank(e, j);
    j->executed += e->now - j->last_start;
    j->service += (double)oldn * gs_time_to_sec(e->now - j->last_start);
    j->last_start = e->now;
    int rc = swap_gpus(e, j, gpus, n, n / gpt);
    if (rc) {
        free(want);
        return rc;
    }
    gs_time stall = busy_wait(e, gpus, n);
    free(want);
    gs_time cost = gs_costs_restart(&e->costs, j->model, n, 1);
    j->resizes++;
    j->resize_gpu_s += (double)n * gs_time_to_sec(cost);
    j->mech_time += stall + cost;
    j->place_rate = 1.0 / gs_costs_slowdown(&e->costs, e->c, j->model, j->alloc, n);
    j->scale_rate = scale_rate(e, j);
    j->type_rate = alloc_type_rate(e, j);
    if (j->progress_from < e->now + stall + cost) j->progress_from = e->now + stall + cost;
    model_placed(e, j);
    emit(e, GS_REC_RESIZE, j, -1, reason);
    set_speed(e, j);
    return e->err;
}

/* ---- elastic jobs: DRAINING and RESIZING (issue 13; job.h diagram) ---------------------- */

static int in_list(const int32_t *l, int n, int g)
{
    for (int i = 0; i < n; i++)
        if (l[i] == g) return 1;
    return 0;
}

/* Tasks of the ntasks-task set g (gpt GPUs each) whose GPUs are on node. */
static int node_tasks(const gs_engine *e, const int32_t *g, int ntasks, int gpt, int node)
{
    int k = 0;
    for (int t = 0; t < ntasks; t++) k += gs_cluster_gpu(e->c, g[t * gpt])->node == node;
    return k;
}

/*
 * CPU/memory of j's tasks when its task set changes from b (tb tasks) to a (ta):
 * per node of a, the tasks a has there beyond b's are charged (charge = 1: all or
 * nothing, GS_ENOFIT) or refunded (charge = 0).  During DRAINING a job holds per
 * node max(old, new) tasks' worth: charged at the decision, settled at RESIZING.
 */
static int tasks_delta(gs_engine *e, const gs_job *j, const int32_t *a, int ta, const int32_t *b,
                       int tb, int charge)
{
    if ((!j->cpus_per_task && !j->mem_mb_per_task) || j->uncharged) return 0;
    int gpt = j->gpus_per_task, cpt = j->cpus_per_task, mem = j->mem_mb_per_task;
    for (int t = 0; t < ta; t++) {
        int node = gs_cluster_gpu(e->c, a[t * gpt])->node;
        if (node_tasks(e, a, t, gpt, node)) continue; /* node seen already */
        int d = node_tasks(e, a, ta, gpt, node) - node_tasks(e, b, tb, gpt, node);
        for (int k = 0; k < d; k++) {
            if (!charge) {
                gs_cluster_node_refund(e->c, node, cpt, mem);
                continue;
            }
            if (!gs_cluster_node_charge(e->c, node, cpt, mem)) continue;
            while (k-- > 0) gs_cluster_node_refund(e->c, node, cpt, mem);
            for (int u = 0; u < t; u++) { /* undo the nodes before this one */
                int nu = gs_cluster_gpu(e->c, a[u * gpt])->node;
                if (node_tasks(e, a, u, gpt, nu)) continue;
                int du = node_tasks(e, a, ta, gpt, nu) - node_tasks(e, b, tb, gpt, nu);
                for (int q = 0; q < du; q++) gs_cluster_node_refund(e->c, nu, cpt, mem);
            }
            return GS_ENOFIT;
        }
    }
    return 0;
}

/* GPUs of j's reservation it does not hold (the ones counted as reserved), into out if given. */
static int resv_extra(const gs_job *j, int *out)
{
    int nx = 0;
    for (int i = 0; i < j->nresv; i++)
        if (!in_list(j->alloc, j->nalloc, j->resv[i])) {
            if (out) out[nx] = j->resv[i];
            nx++;
        }
    return nx;
}

/* A DRAINING job ends without its next generation (cancel, node loss, k' = 0): the reserved
 * GPUs and the CPU/memory held for the new tasks go back. */
static void drop_resv(gs_engine *e, gs_job *j)
{
    if (j->resv) {
        int gpt = j->gpus_per_task;
        tasks_delta(e, j, j->resv, j->nresv / gpt, j->alloc, j->ntasks, 0);
        int nx = 0;
        for (int i = 0; i < j->nresv; i++)
            if (!in_list(j->alloc, j->nalloc, j->resv[i])) {
                gs_cluster_release(e->c, &j->resv[i], 1, j->slot);
                nx++;
            }
        e->allocated -= nx;
        e->reserved -= nx;
        if (nx) e->epoch++;
        free(j->resv);
        j->resv = NULL;
        j->nresv = 0;
    }
    j->target_gpus = 0;
    j->drain_since = j->drain_deadline = GS_TIME_NONE;
}

/*
 * DRAINING -> RUNNING(k') or PENDING (k' = 0): the old generation is gone
 * (SIM: the drain cost elapsed; LIVE: the daemon reported the exit).
 * 'forced': it was killed, so the work since its last checkpoint is lost.
 * RESIZING is this instant: the old GPUs not in k' free, the reservation
 * becomes the allocation, generation += 1, and the new generation pays the
 * relaunch cost (gs_costs_relaunch) without progress.
 */
static int tr_resized(gs_engine *e, gs_job *j, int forced)
{
    int nold = j->nalloc, n = j->target_gpus, gpt = j->gpus_per_task;
    int nx = resv_extra(j, NULL);
    gs_time drained = e->now - j->drain_since;
    j->rescale_gpu_s += (double)(nold + nx) * gs_time_to_sec(drained);
    j->mech_time += drained;
    if (forced && j->progress > j->last_ckpt) {
        /* the only place remaining work grows: work thrown away by a forced drain */
        gs_time lost = j->progress - j->last_ckpt;
        double gpu_s = (double)nold * gs_time_to_sec(lost) / (j->speed > 0 ? j->speed : 1.0);
        j->lost_work_gpu_s += gpu_s;
        j->rescale_gpu_s += gpu_s;
        j->progress = j->last_ckpt;
        j->remaining += lost;
    }
    j->stop_saved = !forced;
    const char *why = j->rescale_reason ? j->rescale_reason : "drained";
    if (n == 0) return tr_requeue(e, j, GS_REC_REQUEUE, why, -1, 1);
    for (int i = 0; i < n; i++) {
        const gs_gpu *g = gs_cluster_gpu(e->c, j->resv[i]);
        if (g->down || gs_cluster_node(e->c, g->node)->down)
            /* LIVE: a node of the next generation was drained meanwhile (or one of its GPUs
             * marked bad): no launch there; the reservation goes back and the job waits (SIM:
             * a failure requeued it already) */
            return tr_requeue(e, j, GS_REC_REQUEUE,
                              gs_cluster_node(e->c, g->node)->down
                                  ? "a node of its next generation went out of service"
                                  : "a GPU of its next generation went out of service",
                              -1, 1);
    }
    /* the old generation's accounting closes; the job keeps holding GPUs */
    j->executed += e->now - j->last_start;
    j->service += (double)nold * gs_time_to_sec(e->now - j->last_start);
    j->last_start = e->now;
    int32_t *old = j->alloc;
    int oldt = j->ntasks, nf = 0;
    tasks_delta(e, j, old, oldt, j->resv, n / gpt, 0);
    for (int i = 0; i < nold; i++)
        if (!in_list(j->resv, n, old[i])) {
            gs_cluster_release(e->c, &old[i], 1, j->slot);
            nf++;
        }
    e->allocated -= nf;
    e->reserved -= nx;
    if (nf) e->epoch++;
    free(j->last_alloc);
    j->last_alloc = old;
    j->nlast_alloc = nold;
    j->alloc = j->resv;
    j->nalloc = n;
    j->vanished = 0; /* the new generation runs where the cluster is */
    j->resv = NULL;
    j->nresv = 0;
    j->gpus = n;
    j->ntasks = n / gpt;
    j->state = GS_JOB_RUNNING;
    j->target_gpus = 0;
    j->drain_since = j->drain_deadline = GS_TIME_NONE;
    j->generation++;
    gs_time cost = gs_costs_relaunch(&e->costs, j->model, n);
    gs_time stall = busy_wait(e, j->alloc, n);
    j->overhead = cost;
    j->rescale_gpu_s += (double)n * gs_time_to_sec(cost);
    j->mech_time += stall + cost;
    j->place_rate = 1.0 / gs_costs_slowdown(&e->costs, e->c, j->model, j->alloc, n);
    j->pack_rate = 1.0;
    j->scale_rate = scale_rate(e, j);
    j->type_rate = alloc_type_rate(e, j);
    j->progress_from = e->now + stall + cost;
    j->protect_until = e->now + 2 * cost;
    j->last_ckpt = j->progress; /* the new generation restores from here */
    j->reason = NULL;
    e->want_pass = 1; /* GPUs freed, or a job changed size: the policy looks again */
    model_placed(e, j);
    emit(e, GS_REC_RESCALE, j, -1, why);
    emit(e, GS_REC_START, j, -1, why);
    set_speed(e, j);
    return e->err;
}

/*
 * RUNNING(k) -> DRAINING(k -> n) on 'want' (validated by gs_engine_rescale; a
 * malloc'ed copy it takes over, freed on error): its GPUs not held yet are reserved for j now (the
 * cluster's owner is j: nobody else can take them), with the CPU/memory the new tasks need beyond
 * the old ones; the old generation stops progressing and keeps its GPUs.  SIM: the drain ends after
 * gs_costs_drain (at once when that is 0). Nothing changes on error.
 */
static int tr_drain(gs_engine *e, gs_job *j, int32_t *want, int n, gs_rescale_kind kind,
                    const char *why)
{
    int gpt = j->gpus_per_task, nx = 0;
    if (n > 0) {
        int *extra = malloc((size_t)n * sizeof *extra);
        if (!extra) {
            free(want);
            return latch(e, GS_ENOMEM);
        }
        for (int i = 0; i < n; i++)
            if (!in_list(j->alloc, j->nalloc, want[i])) extra[nx++] = want[i];
        int rc = tasks_delta(e, j, want, n / gpt, j->alloc, j->ntasks, 1);
        if (!rc && nx && gs_cluster_alloc(e->c, extra, nx, j->slot)) {
            tasks_delta(e, j, want, n / gpt, j->alloc, j->ntasks, 0);
            rc = GS_ENOFIT;
        }
        free(extra);
        if (rc) {
            free(want);
            return rc;
        }
    }
    bank(e, j);
    j->progress_from = GS_TIME_MAX;
    j->state = GS_JOB_DRAINING;
    j->target_gpus = n;
    j->resv = n > 0 ? want : NULL;
    j->nresv = n;
    if (n == 0) free(want);
    j->drain_since = e->now;
    /* SIM: the save takes the drain cost; one that would outlast the drain timeout is cut
     * there (forced: the work since the last checkpoint is lost), as the daemon would */
    gs_time cost = e->drain_timeout;
    int forced = 0;
    if (e->opts.mode == GS_ENGINE_SIM) {
        gs_time save = gs_costs_drain(&e->costs, j->model, j->nalloc);
        forced = save > cost;
        if (!forced) cost = save;
    }
    j->drain_deadline = e->now + cost;
    j->rescale_kind = (int32_t)kind;
    j->rescale_reason = why;
    if (kind != GS_RESCALE_PREEMPT) {
        j->rescales++;
        j->last_rescale = e->now;
    }
    if (n == 0) j->preemptions++;
    e->allocated += nx;
    e->reserved += nx;
    j->gen++; /* its predicted finish and boundaries are stale */
    emit(e, GS_REC_DRAIN, j, -1, why);
    if (e->opts.mode != GS_ENGINE_SIM) return e->err;
    if (cost == 0) return tr_resized(e, j, forced);
    return heap_push(e, (ev){.t = j->drain_deadline,
                             .kind = EV_DRAINED,
                             .key = j->slot,
                             .gen = j->gen,
                             .tag = (uint64_t)forced});
}

gs_time gs_engine_rescale_allowed_at(const gs_engine *e, const gs_job *j)
{
    if (j->max_gpus <= 0) return GS_TIME_NONE;
    if (j->max_rescales >= 0 && j->rescales >= j->max_rescales) return GS_TIME_NONE;
    if (j->last_rescale == GS_TIME_NONE) return e->now;
    gs_time t = j->last_rescale + j->min_rescale_gap;
    return t > e->now ? t : e->now;
}

int gs_engine_rescale(gs_engine *e, const gs_job *cj, const int *gpus, int n, gs_rescale_kind kind,
                      const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (!j || (unsigned)kind > (unsigned)GS_RESCALE_PREEMPT) return GS_EINVAL;
    /* LIVE drains through stop + start, which every executor does */
    if (e->opts.mode == GS_ENGINE_SIM && (e->mech_off & GS_MECH_BIT(GS_MECH_RESIZE)))
        return GS_EUNSUPPORTED;
    if (e->pol->flags & GS_POLICY_RIGID) return GS_EUNSUPPORTED; /* its state would go stale */
    if (j->state != GS_JOB_RUNNING || j->max_gpus <= 0 || j->pack_with >= 0 || j->vanished ||
        j->uncharged)
        return GS_ESTATE;
    if (n < 0 || (n > 0 && !gs_job_size_valid(j, n))) return GS_ERANGE;
    if (kind == GS_RESCALE_POLICY) {
        gs_time at = gs_engine_rescale_allowed_at(e, j);
        if (at == GS_TIME_NONE || at > e->now) return GS_EQUOTA;
    }
    if (n > 0) {
        if (!gpus) return GS_EINVAL;
        int rc = validate_shape(e, j, gpus, n / j->gpus_per_task);
        if (rc) return rc;
        int same = n == j->nalloc;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < i; k++)
                if (gpus[k] == gpus[i]) return GS_EINVAL; /* a GPU twice */
            if (in_list(j->alloc, j->nalloc, gpus[i])) continue;
            same = 0;
            const gs_gpu *g = gs_cluster_gpu(e->c, gpus[i]);
            if (g->owner >= 0 || g->users > 0 || g->down) return GS_ENOFIT;
        }
        if (same) return GS_EINVAL; /* its own GPUs: nothing to change */
    }
    const char *why = NULL;
    if (reason && !(why = intern(e, &e->strs, reason, NULL))) return GS_ENOMEM;
    /* 'gpus' may point into j->alloc, which RESIZING frees */
    int32_t *want = malloc((size_t)(n > 0 ? n : 1) * sizeof *want);
    if (!want) return latch(e, GS_ENOMEM);
    for (int i = 0; i < n; i++) want[i] = gpus[i];
    return tr_drain(e, j, want, n, kind, why); /* takes 'want' */
}

int gs_engine_checkpointed(gs_engine *e, const gs_job *cj, gs_time now)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (!j || j->state != GS_JOB_RUNNING) return GS_ESTATE;
    if (now > e->now) e->now = now;
    bank(e, j);
    j->last_ckpt = j->progress;
    return 0;
}

int gs_engine_reserved_gpus(const gs_engine *e)
{
    return e->reserved;
}

gs_time gs_engine_drain_timeout(const gs_engine *e)
{
    return e->drain_timeout;
}

int gs_engine_set_progress(gs_engine *e, const gs_progress_ops *ops, void *state)
{
    if (e->err) return e->err;
    if (ops && !ops->rate) return GS_EINVAL;
    if (e->njobs) return GS_ESTATE; /* every job must see the same model */
    e->prog = ops;
    e->prog_st = ops ? state : NULL;
    return 0;
}

void *gs_engine_progress_state(const gs_engine *e)
{
    return e->prog_st;
}

const gs_progress_ops *gs_engine_progress_ops(const gs_engine *e)
{
    return e->prog;
}

double gs_engine_job_speed(const gs_engine *e, const gs_job *j, int gpus)
{
    if (gpus <= 0) return 0.0;
    if (modelled(e, j) && e->prog->speed) return e->prog->speed(e->prog_st, e, j, gpus);
    if (gpus == j->req_gpus) return 1.0;
    return gs_costs_scale(&e->costs, j->model, gpus) /
           gs_costs_scale(&e->costs, j->model, j->req_gpus);
}

double gs_engine_job_rate(const gs_engine *e, const gs_job *j, int gpu_type, int gpus)
{
    double s = gs_engine_job_speed(e, j, gpus);
    return s > 0 ? s * type_rate_of(e, j, gpu_type, gpus) : s;
}

double gs_engine_job_type_rate(const gs_engine *e, const gs_job *j, int gpu_type, int gpus)
{
    return type_rate_of(e, j, gpu_type, gpus);
}

int gs_engine_job_gpu_type(const gs_engine *e, const gs_job *j)
{
    if (!j->alloc || j->nalloc <= 0) return j->gpu_type;
    int best = gs_cluster_gpu(e->c, j->alloc[0])->type;
    double r = type_rate_of(e, j, best, j->gpus);
    for (int k = 1; k < j->nalloc; k++) {
        int t = gs_cluster_gpu(e->c, j->alloc[k])->type;
        if (t == best) continue;
        double x = type_rate_of(e, j, t, j->gpus);
        if (x < r) r = x, best = t;
    }
    return best;
}

double gs_engine_job_type_rate_now(const gs_engine *e, const gs_job *j)
{
    if (j->alloc && j->nalloc > 0) return j->type_rate;
    return type_rate_of(e, j, j->gpu_type, j->gpus);
}

const char *gs_engine_ref_gpu_type(const gs_engine *e)
{
    return e->ref_type ? e->ref_type : gs_profiles_ref_type(profiles(e));
}

/* The rate of j's best gang: the fastest types first (by 'rate') until they hold req_gpus
 * GPUs; a gang runs at its slowest type's rate, so that is the rate of the last type taken.
 * 0 when the types j may use cannot hold it. */
static double best_gang_rate(const gs_engine *e, const gs_job *j,
                             double (*rate)(const gs_engine *, const gs_job *, int, int))
{
    double best = 0;
    int have = 0;
    size_t nt = gs_cluster_ngpu_types(e->c);
    uint32_t used = 0;
    while (have < j->req_gpus) {
        int pick = -1;
        double pr = 0;
        for (size_t t = 0; t < nt && t < 32; t++) {
            if (used & (1u << t)) continue;
            if (j->gpu_type >= 0 && (int)t != j->gpu_type) continue;
            if (gs_cluster_type_gpus(e->c, (int)t) <= 0) continue;
            double r = rate(e, j, (int)t, j->req_gpus);
            if (r > pr) pr = r, pick = (int)t;
        }
        if (pick < 0) break;
        used |= 1u << pick;
        have += gs_cluster_type_gpus(e->c, pick);
        best = pr;
    }
    return have >= j->req_gpus ? best : 0;
}

double gs_engine_job_best_type_rate(const gs_engine *e, const gs_job *j)
{
    double best = best_gang_rate(e, j, type_rate_of);
    return best > 0 ? best : 1.0;
}

gs_time gs_engine_job_ideal(const gs_engine *e, const gs_job *j)
{
    double best = best_gang_rate(e, j, gs_engine_job_rate);
    if (!(best > 0)) best = gs_engine_job_rate(e, j, -1, j->req_gpus);
    if (!(best > 0)) best = 1.0;
    double t = ceil((double)j->work / best);
    return t < 3.2e16 ? (gs_time)t : (gs_time)3.2e16;
}

const gs_lp_solver *gs_engine_lp(const gs_engine *e)
{
    return e->opts.lp;
}

int gs_engine_cancel(gs_engine *e, const gs_job *cj, const char *reason, gs_time now)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (now > e->now) e->now = now;
    if (gs_job_state_final(j->state)) return GS_ESTATE;
    int rc = tr_finish(e, j, GS_JOB_CANCELLED, reason ? reason : "cancelled");
    return rc ? rc : outside_settle(e);
}

int gs_engine_task_exited(gs_engine *e, const gs_job *cj, int exit_code, const char *reason,
                          gs_time now)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (now > e->now) e->now = now;
    j->exit_code = exit_code;
    int rc;
    if (j->state == GS_JOB_PREEMPTED) {
        rc = tr_requeue(e, j, GS_REC_REQUEUE, reason, -1, 0);
    } else if (j->state == GS_JOB_DRAINING) {
        /* the old generation is gone: 143 (SIGTERM handled) or 0 = it checkpointed */
        rc = tr_resized(e, j, !(exit_code == 143 || exit_code == 0));
    } else if (j->state == GS_JOB_RUNNING && exit_code != 0 && j->failures < j->max_failures) {
        /* a failed generation within its own budget (never a rescale): it runs again */
        j->failures++;
        const char *why = intern(e, &e->strs, reason ? reason : "failed", NULL);
        if (!why) return GS_ENOMEM;
        rc = tr_requeue(e, j, GS_REC_REQUEUE, why, 0, 1);
    } else {
        if (j->state == GS_JOB_RUNNING && exit_code != 0) j->failures++;
        /* a stopped (suspended) process can still end: killed, or it had finished its work */
        if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_SUSPENDED) return GS_ESTATE;
        rc = tr_finish(e, j, exit_code == 0 ? GS_JOB_DONE : GS_JOB_FAILED, reason);
    }
    return rc ? rc : outside_settle(e); /* freed GPUs an outside count still asks for */
}

/*
 * (arrival) or PENDING -> REJECTED.  An arrived PENDING job (a policy's
 * refusal) stops waiting; one arriving now (it can never fit) never waited.
 */
static int tr_reject(gs_engine *e, gs_job *j, const char *reason)
{
    if (j->arrived) leave_pending(e, j);
    e->nactive--;
    j->state = GS_JOB_REJECTED;
    j->end = e->now;
    j->reason = intern(e, &e->strs, reason, NULL);
    emit(e, GS_REC_REJECT, j, -1, j->reason);
    return e->err;
}

int gs_engine_reject(gs_engine *e, const gs_job *cj, const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (j->state != GS_JOB_PENDING || !j->arrived) return GS_ESTATE;
    return tr_reject(e, j, reason ? reason : "rejected");
}

int gs_engine_set_timer(gs_engine *e, gs_time when, uint64_t tag)
{
    if (e->err) return e->err;
    if (when < e->now) when = e->now;
    return heap_push(e, (ev){.t = when, .kind = EV_TIMER, .key = 0, .tag = tag});
}

void gs_engine_count_events(gs_engine *e, uint64_t n)
{
    e->events += n;
}

void gs_engine_set_max_locality(gs_engine *e, gs_locality level)
{
    e->max_level = level;
}

void gs_engine_set_reason(gs_engine *e, const gs_job *j, const char *reason)
{
    mut(e, j)->reason = reason;
}

void gs_engine_request_pass(gs_engine *e)
{
    e->want_pass = 1;
}

void gs_engine_note(gs_engine *e, const gs_job *cj, const char *reason)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    emit(e, GS_REC_NOTE, j, -1, reason);
}

/* ---- event handling -------------------------------------------------------------------- */

/* Why j can never fit (interned), or NULL.  Cached per request shape. */
static const char *infeasible(gs_engine *e, const gs_job *j)
{
    gs_place_req r;
    gs_engine_place_req(e, j, e->max_level, &r);
    for (unsigned i = 0; i < FEAS_CACHE; i++) {
        const feas_entry *f = &e->feas[i];
        if (f->valid && f->ntasks == r.ntasks && f->gpt == r.gpus_per_task &&
            f->type == r.gpu_type && f->cpt == r.cpus_per_task && f->mem == r.mem_mb_per_task &&
            f->level == (int)r.level && f->scope == r.scope && f->mode == (int)r.mode)
            return f->why;
    }
    char why[256];
    const char *res = NULL;
    if (gs_place_feasible(e->c, &r, why, sizeof why) != 0) res = intern(e, &e->strs, why, NULL);
    e->feas[e->feas_next++ % FEAS_CACHE] = (feas_entry){r.ntasks,
                                                        r.gpus_per_task,
                                                        r.gpu_type,
                                                        r.cpus_per_task,
                                                        r.mem_mb_per_task,
                                                        (int)r.level,
                                                        r.scope,
                                                        (int)r.mode,
                                                        1,
                                                        res};
    return res;
}

/* (arrival) -> PENDING, or -> REJECTED (tr_reject) when it can never fit. */
/* The arrival rule for a grouped job (gs_job_grouped): a policy that places such jobs, every
 * task within one node, the whole within the cluster, each withinOneCell group within one cell
 * of its type.  Why not (interned), or NULL. */
static const char *grouped_infeasible(gs_engine *e, const gs_job *j)
{
    if (!(e->pol->flags & GS_POLICY_GROUPS)) return GS_GROUPS_NEED_POLICY;
    char why[256] = "";
    int maxnode = gs_cluster_max_node_gpus(e->c, j->gpu_type);
    int total = j->pinned_cell >= 0 ? gs_cluster_cell(e->c, j->pinned_cell)->gpu_hi -
                                          gs_cluster_cell(e->c, j->pinned_cell)->gpu_lo
                                    : gs_cluster_type_gpus(e->c, j->gpu_type);
    for (int t = 0; t < j->ntasks && !why[0]; t++)
        if (gs_job_task_gpus(j, t) > maxnode)
            snprintf(why, sizeof why, "task %d needs %d GPUs, more than any node has (%d)", t,
                     gs_job_task_gpus(j, t), maxnode);
    if (!why[0] && j->gpus > total)
        snprintf(why, sizeof why, "the job needs %d GPUs, more than the %s has (%d)", j->gpus,
                 j->pinned_cell >= 0 ? "pinned cell" : "cluster", total);
    for (int i = 0; i < j->ngroups && !why[0]; i++) {
        const gs_task_group *g = &j->groups[i];
        if (g->within_type < 0) continue;
        const gs_cell_type *ct = gs_cluster_cell_type(e->c, g->within_type);
        int need = gs_job_task_first(j, g->hi) - gs_job_task_first(j, g->lo);
        if (need > ct->gpus)
            snprintf(why, sizeof why, "group %d needs %d GPUs within one %s cell, which holds %d",
                     i, need, ct->name, ct->gpus);
    }
    return why[0] ? intern(e, &e->strs, why, NULL) : NULL;
}

static int tr_arrive(gs_engine *e, gs_job *j)
{
    /* cancelled, adopted, or withdrawn before its due arrival (gs_engine_withdraw) */
    if (gs_job_state_final(j->state) || j->arrived || j->deferred) return 0;
    const char *bad = j->reason; /* unknown GPU type / pinned cell */
    if (!bad) bad = gs_job_grouped(j) ? grouped_infeasible(e, j) : infeasible(e, j);
    if (e->err) return e->err; /* the answer may be wrong: leave the job unarrived */
    if (bad) {
        emit(e, GS_REC_SUBMIT, j, -1, NULL);
        int rc = tr_reject(e, j, bad);
        j->arrived = 1;
        return rc;
    }
    j->arrived = 1;
    to_pending(e, j);
    emit(e, GS_REC_SUBMIT, j, -1, NULL);
    return hook_job(e, e->pol->on_arrival, j);
}

/* Room for the node states (all clear until the first node leaves service). */
static int nstate_ready(gs_engine *e)
{
    if (e->nstate) return 0;
    e->nstate = calloc(gs_cluster_nnodes(e->c) + 1, 1);
    return e->nstate ? 0 : GS_ENOMEM;
}

/*
 * Set or clear one reason (GS_NODE_*) for node to be out of service; the
 * node is down in the cluster while any reason holds.  Returns 1 when it
 * left service, 2 when it came back (its GPUs are usable again, except those
 * given to outside work or marked bad), 0 when its usability did not change.  The caller
 * made e->nstate ready.
 */
static int node_set_state(gs_engine *e, int node, unsigned bit, int on)
{
    uint8_t was = e->nstate[node];
    uint8_t now = on ? (uint8_t)(was | bit) : (uint8_t)(was & ~bit);
    e->nstate[node] = now;
    if (!was == !now) return 0;
    gs_cluster_set_node_down(e->c, node, now != 0);
    if (now) return 1;
    e->epoch++; /* GPUs came back: cached placement failures are stale */
    gpus_redown(e, node);
    return 2;
}

/* The policy learns that a node's usability changed (changed: node_set_state's answer). */
static int node_tell(gs_engine *e, int node, int changed)
{
    if (!changed || !e->pol->on_node) return 0;
    return latch(e, e->pol->on_node(e->pst, node, changed == 1));
}

static int node_event(gs_engine *e, int node, int down)
{
    int rc;
    if ((rc = nstate_ready(e)) != 0) return latch(e, rc);
    if (!(e->nstate[node] & GS_NODE_FAILED) == !down) return 0;
    const gs_node *nd = gs_cluster_node(e->c, node);
    if (down) {
        /* requeue every job with a GPU on the node, in GPU order; when the owner of a
         * shared GPU goes, its partner owns it next and goes too */
        for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++) {
            int32_t owner;
            while ((owner = gs_cluster_gpu(e->c, g)->owner) >= 0) {
                gs_job *j = job_at(e, (size_t)owner);
                if (!holds_gpus(j)) break;
                j->failures++; /* a failed generation (its budget ends nothing here) */
                /* a lost node cannot checkpoint; a draining job's reservation goes too */
                if ((rc = tr_requeue(e, j, GS_REC_REQUEUE, "node failed", 0, 1)) != 0) return rc;
            }
        }
        /* suspended jobs whose state was in the node's host memory lost it */
        for (size_t s = 0; e->nsuspended && s < e->njobs; s++) {
            gs_job *j = job_at(e, s);
            if (j->state != GS_JOB_SUSPENDED || !j->last_alloc) continue;
            int on = 0;
            for (int k = 0; k < j->nlast_alloc && !on; k++)
                on = gs_cluster_gpu(e->c, j->last_alloc[k])->node == node;
            if (!on) continue;
            if ((rc = tr_requeue(e, j, GS_REC_REQUEUE, "node failed", 0, 1)) != 0) return rc;
        }
    }
    int changed = node_set_state(e, node, GS_NODE_FAILED, down);
    emit(e, down ? GS_REC_NODE_DOWN : GS_REC_NODE_UP, NULL, node, NULL);
    return node_tell(e, node, changed);
}

static int node_drain(gs_engine *e, int node, int drain, const char *reason);
static int node_drain_event(gs_engine *e, int node, int drain);

/* Mark node bad or good again (gs_engine_set_node_bad; SIM events). */
static int node_bad(gs_engine *e, int node, int bad, const char *reason)
{
    int rc;
    if ((rc = nstate_ready(e)) != 0) return latch(e, rc);
    bad = !!bad;
    if (!(e->nstate[node] & GS_NODE_BAD) == !bad) return 0;
    /* unlike a failure: the jobs on it keep their GPUs and run on (the cluster keeps owners
     * of GPUs that go down, and a GPU freed while down does not become free) */
    int changed = node_set_state(e, node, GS_NODE_BAD, bad);
    emit(e, bad ? GS_REC_NODE_BAD : GS_REC_NODE_GOOD, NULL, node,
         reason ? reason
         : bad  ? "marked bad"
                : "marked good");
    return node_tell(e, node, changed);
}

static int handle(gs_engine *e, const ev *x)
{
    gs_job *j;
    switch (x->kind) {
    case EV_FINISH:
        j = job_at(e, (size_t)x->key);
        if (j->state != GS_JOB_RUNNING || j->gen != x->gen) return 0; /* stale */
        e->events++;
        return tr_finish(e, j, GS_JOB_DONE, NULL);
    case EV_BOUNDARY:
        j = job_at(e, (size_t)x->key);
        if (j->state != GS_JOB_RUNNING || j->gen != x->gen) return 0; /* stale */
        e->events++;
        bank(e, j);
        if (e->prog->advance) latch(e, e->prog->advance(e->prog_st, e, j, 0));
        set_speed(e, j);
        return e->err;
    case EV_DRAINED:
        j = job_at(e, (size_t)x->key);
        if (j->state != GS_JOB_DRAINING || j->gen != x->gen) return 0; /* stale */
        e->events++;
        return tr_resized(e, j, (int)x->tag); /* tag: forced at the drain timeout */
    case EV_NODE:
        if (x->key < 0) return 0; /* its node vanished in a reconfiguration */
        e->events++;
        /* gen: 0 up, 1 down (failure); 2 good, 3 bad; 4 resume, 5 drain */
        return x->gen >= 4   ? node_drain_event(e, x->key, (int)(x->gen & 1))
               : x->gen >= 2 ? node_bad(e, x->key, (int)(x->gen & 1), NULL)
                             : node_event(e, x->key, (int)x->gen);
    case EV_RECONFIG: {
        e->events++;
        gs_diag d;
        gs_diag_init(&d, NULL);
        /* checked when it was scheduled (gs_engine_add_reconfig_event): what fails now is an
         * allocation or a policy hook, which fails the engine */
        return latch(e, gs_engine_reconfigure(e, e->rcl[x->key], &d));
    }
    case EV_ARRIVAL: e->events++; return tr_arrive(e, job_at(e, (size_t)x->key));
    case EV_CANCEL:
        j = job_at(e, (size_t)x->key);
        if (gs_job_state_final(j->state)) return 0; /* it ended first: nothing to cancel */
        e->events++;
        return tr_finish(e, j, GS_JOB_CANCELLED, strtab_str(&e->strs, (int)x->tag));
    case EV_PROTECT:
        j = job_at(e, (size_t)x->key);
        if (j->state != GS_JOB_RUNNING || j->gen != x->gen) return 0; /* stale */
        e->events++;
        return hook_job(e, e->pol->on_preemptible, j);
    case EV_TIMER:
        e->events++;
        return e->pol->on_timer ? latch(e, e->pol->on_timer(e->pst, x->tag)) : 0;
    }
    return 0;
}

/* Handle every event due at or before now, in order; stop at the first error. */
static int handle_due(gs_engine *e)
{
    while (e->nheap && e->heap[0].t <= e->now) {
        ev x = heap_pop(e);
        int rc = handle(e, &x);
        if (!rc) rc = e->err; /* a failure a hook did not pass on */
        if (rc) return rc;
    }
    return 0;
}

static int pass(gs_engine *e)
{
    int want = e->want_pass;
    e->want_pass = 0;
    if (e->pol->schedule && (e->npending || e->nsuspended || want))
        latch(e, e->pol->schedule(e->pst));
    /* an allocation failure a policy did not pass on still fails the engine */
    return e->err;
}

static int recheck_requeued(gs_engine *e);

/* The policy pass, then (after a reconfiguration) the requeued jobs that can never fit are
 * rejected, and the policy passes again when that changed something. */
static int pass_and_recheck(gs_engine *e)
{
    int rc = pass(e);
    while (!rc && e->nrecheck) {
        int n = recheck_requeued(e);
        if (n < 0)
            rc = n;
        else if (n > 0)
            rc = pass(e);
    }
    return rc;
}

int gs_engine_step(gs_engine *e)
{
    if (e->err) return e->err;
    if (!e->nheap) return 0;
    gs_time t = e->heap[0].t;
    if (t > e->now || !e->started) e->now = t;
    e->started = 1;
    int rc = handle_due(e);
    if (!rc) rc = pass_and_recheck(e);
    return rc ? rc : 1;
}

int gs_engine_run(gs_engine *e)
{
    int rc;
    while ((rc = gs_engine_step(e)) > 0) {
    }
    return rc;
}

int gs_engine_advance(gs_engine *e, gs_time now)
{
    if (e->err) return e->err;
    if (now > e->now) e->now = now;
    e->started = 1;
    int rc = handle_due(e);
    if (!rc) rc = outside_settle(e);
    return rc ? rc : pass_and_recheck(e);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

int gs_engine_create(gs_cluster *c, const char *policy, gs_params *params,
                     const gs_engine_opts *opts, gs_engine **out, gs_diag *diag)
{
    const gs_policy_ops *const *extra = opts ? opts->policies : NULL;
    size_t nextra = opts && opts->policies ? opts->npolicies : 0;
    const gs_policy_ops *ops = gs_policy_find_ex(extra, nextra, policy);
    if (!ops) {
        /* suggest the closest name (the program's policies, then the compiled-in ones) */
        const char *best = NULL;
        size_t bl = 0;
        for (size_t i = 0;; i++) {
            const gs_policy_ops *o = i < nextra ? extra[i] : gs_policy_at(i - nextra);
            if (!o) break;
            const char *n = o->name;
            size_t k = 0;
            while (n[k] && policy[k] && n[k] == policy[k]) k++;
            if (k > bl) bl = k, best = n;
        }
        if (best && bl >= 3)
            return gs_diag_set(diag, GS_EUNKNOWN, 0, 0,
                               "unknown policy '%s' (did you mean '%s'? see 'gsched policies')",
                               policy, best);
        return gs_diag_set(diag, GS_EUNKNOWN, 0, 0, "unknown policy '%s' (see 'gsched policies')",
                           policy);
    }
    return gs_engine_create_ops(c, ops, params, opts, out, diag);
}

/*
 * profiles=builtin|FILE: the job profiles mechanisms are charged from.  A
 * file is read now (errors are input errors); the built-in table is parsed
 * on first use, so engines that never suspend or pack never pay for it.
 */
static int load_profiles(gs_engine *e, gs_params *p, gs_diag *diag)
{
    const char *f = gs_params_get(p, "profiles");
    if (!f || !strcmp(f, "builtin")) return 0;
    char *buf = NULL;
    size_t len = 0;
    int rc = gs_engine_read_file(e, f, &buf, &len, diag);
    if (rc) return rc;
    gs_diag_init(diag, f);
    rc = gs_profiles_parse(f, buf, len, &e->profiles, diag);
    free(buf);
    return rc;
}

/*
 * The mechanisms an engine refuses (engine.h, "when the program cannot carry
 * out a mechanism"): the program's mask, SUSPEND and RESUME together, and
 * what LIVE mode never does.  GS_EINVAL for RESTART or an unknown bit.
 */
static int mech_mask(const gs_engine_opts *o, unsigned *off, gs_diag *diag)
{
    const unsigned all = GS_MECH_BIT(GS_MECH_N) - 1u;
    const unsigned slice = GS_MECH_BIT(GS_MECH_SUSPEND) | GS_MECH_BIT(GS_MECH_RESUME);
    unsigned m = o->mech_unsupported;
    if (m & ~all)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "unknown mechanism bits 0x%x", m & ~all);
    if (m & GS_MECH_BIT(GS_MECH_RESTART))
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "the restart mechanism cannot be unsupported (a preempted job "
                           "restarts)");
    if (m & slice) m |= slice;
    if (o->mode == GS_ENGINE_LIVE)
        m |= GS_MECH_BIT(GS_MECH_PACK) | GS_MECH_BIT(GS_MECH_MIGRATE) | GS_MECH_BIT(GS_MECH_RESIZE);
    *off = m;
    return 0;
}

int gs_engine_mech_supported(const gs_engine *e, gs_mech m)
{
    if ((unsigned)m >= (unsigned)GS_MECH_N) return 0;
    return !(e->mech_off & GS_MECH_BIT(m));
}

/* The profiles, parsed now if the type rates of cluster c may need them (a GPU type other
 * than the untyped "gpu"): so that no transition has to parse them.  0 or GS_ENOMEM. */
static int speed_ready(gs_engine *e, const gs_cluster *c)
{
    if (!e->type_speed || e->profiles) return 0;
    size_t nt = gs_cluster_ngpu_types(c);
    for (size_t k = 0; k < nt; k++)
        if (strcasecmp(gs_cluster_gpu_type_name(c, (int)k), "gpu")) {
            gs_diag d;
            gs_diag_init(&d, NULL);
            return gs_profiles_builtin(&e->profiles, &d) ? GS_ENOMEM : 0;
        }
    return 0;
}

/* tsame[] for the current cluster (after speed_ready). */
static void speed_types(gs_engine *e)
{
    size_t nt = gs_cluster_ngpu_types(e->c);
    const gs_profiles *p = e->profiles;
    const char *ref = !p ? NULL : e->ref_type ? e->ref_type : gs_profiles_ref_type(p);
    for (size_t k = 0; k < nt && k < ENGINE_MAX_TYPES; k++) {
        const char *name = gs_cluster_gpu_type_name(e->c, (int)k);
        e->tsame[k] = !ref || !strcasecmp(name, ref) || !gs_profiles_has_type(p, name);
    }
}

/*
 * type_speed=on|off (default on): a job progresses at its type rate on each GPU type;
 * ref_gpu_type=NAME (default: the profiles' reference type): the type work is measured on; it
 * must be a type the profiles have rows of.
 */
static int speed_params(gs_engine *e, gs_params *p, gs_diag *diag)
{
    int rc = gs_params_get_bool(p, "type_speed", 1, &e->type_speed, diag);
    const char *ref = gs_params_get(p, "ref_gpu_type");
    if (rc || !ref) return rc;
    const gs_profiles *pr = profiles(e);
    if (e->err) return e->err;
    if (!gs_profiles_has_type(pr, ref))
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "ref_gpu_type '%s': the profiles have no rows of that GPU type "
                           "(their reference type is %s)",
                           ref, gs_profiles_ref_type(pr) ? gs_profiles_ref_type(pr) : "none");
    if (!(e->ref_type = strdup(ref))) return GS_ENOMEM;
    return 0;
}

/* speed_params, then the profiles and tsame[] for the engine's cluster. */
static int speed_init(gs_engine *e, gs_params *p, gs_diag *diag)
{
    int rc = speed_params(e, p, diag);
    if (!rc) rc = speed_ready(e, e->c);
    if (rc) return rc;
    speed_types(e);
    return 0;
}

int gs_engine_create_ops(gs_cluster *c, const gs_policy_ops *ops, gs_params *params,
                         const gs_engine_opts *opts, gs_engine **out, gs_diag *diag)
{
    gs_engine *e = calloc(1, sizeof *e);
    if (!e) return GS_ENOMEM;
    e->c = c;
    /* the stand-in of forgotten jobs (gs_engine_forget): final, no id, no GPUs */
    e->tomb.state = GS_JOB_CANCELLED;
    e->tomb.id = -1;
    e->tomb.slot = -1;
    e->tomb.pack_with = -1;
    e->tomb.gpu_type = -1;
    e->tomb.pinned_cell = -1;
    e->tomb.arrived = 1;
    e->tomb.first_start = e->tomb.last_start = e->tomb.end = GS_TIME_NONE;
    if (opts)
        e->opts = *opts;
    else
        gs_engine_opts_init(&e->opts);
    int rc = mech_mask(&e->opts, &e->mech_off, diag);
    if (rc) {
        free(e);
        return rc;
    }
    e->pol = ops;
    e->now = 0;
    e->max_level = GS_LOCALITY_STRICT;
    idmap_init(&e->ids);
    strtab_init(&e->strs);
    strtab_init(&e->vcs);
    strtab_init(&e->users);
    strtab_init(&e->models);
    for (unsigned i = 0; i < FAIL_CACHE; i++) e->fail[i].epoch = UINT64_MAX;
    gs_costs_init(&e->costs);
    gs_params empty;
    gs_params_init(&empty);
    gs_params_init(&e->params);
    if (params && gs_params_copy(&e->params, params)) {
        gs_engine_destroy(e);
        return GS_ENOMEM;
    }
    rc = gs_costs_from_params_def(&e->costs, params ? params : &empty,
                                  !(ops->flags & GS_POLICY_COSTS_OFF), diag);
    if (rc) {
        gs_engine_destroy(e);
        return rc;
    }
    rc = load_profiles(e, params ? params : &empty, diag);
    if (!rc)
        rc = gs_params_get_duration(params ? params : &empty, "rescale_gap", 60 * GS_SEC,
                                    &e->rescale_gap, diag);
    if (!rc)
        rc = gs_params_get_duration(params ? params : &empty, "drain_timeout", 60 * GS_SEC,
                                    &e->drain_timeout, diag);
    if (!rc)
        rc = gs_params_get_bool(params ? params : &empty, "launch_cost", 0, &e->launch_cost, diag);
    if (!rc) rc = speed_init(e, params ? params : &empty, diag);
    if (!rc && (e->rescale_gap < 0 || e->drain_timeout < 0))
        rc = gs_diag_set(diag, GS_EINVAL, 0, 0,
                         "parameters 'rescale_gap' and 'drain_timeout' must not be negative");
    if (rc) {
        gs_engine_destroy(e);
        return rc;
    }
    e->busy = calloc(gs_cluster_ngpus(c) ? gs_cluster_ngpus(c) : 1, sizeof *e->busy);
    if (!e->busy) {
        gs_engine_destroy(e);
        return GS_ENOMEM;
    }
    rc = ops->create(e, params ? params : &empty, &e->pst, diag);
    if (rc) {
        e->pst = NULL;
        gs_engine_destroy(e);
        return rc;
    }
    *out = e;
    return 0;
}

void gs_engine_destroy(gs_engine *e)
{
    if (!e) return;
    if (e->pol && e->pol->destroy) e->pol->destroy(e->pst);
    gs_costs_release(&e->costs);
    gs_profiles_destroy(e->profiles);
    free(e->pcache);
    free(e->rcache);
    free(e->ref_type);
    free(e->busy);
    free(e->parked);
    free(e->out_want);
    free(e->out_have);
    free(e->out_mark);
    free(e->nstate);
    free(e->gbad);
    for (size_t i = 0; i < e->njobs; i++) {
        if (!e->blocks[i >> JOB_BLOCK_BITS]) continue; /* forgotten */
        free(job_at(e, i)->alloc);
        free(job_at(e, i)->last_alloc);
        free(job_at(e, i)->resv);
        free(job_at(e, i)->sizes);
        free(job_at(e, i)->task_gpus);
        free(job_at(e, i)->task_off);
        free(job_at(e, i)->groups);
    }
    for (size_t b = 0; b < e->nblocks; b++) free(e->blocks[b]);
    free(e->blocks);
    free(e->forgot);
    free(e->nforgot);
    idmap_release(&e->ids);
    strtab_release(&e->strs);
    strtab_release(&e->vcs);
    strtab_release(&e->users);
    strtab_release(&e->models);
    free(e->heap);
    free(e->scratch);
    gs_params_release(&e->params);
    free(e->rcl);
    free(e->recheck);
    free(e);
}

void gs_engine_set_observer(gs_engine *e, gs_observer_fn fn, void *ud)
{
    e->obs = fn;
    e->obs_ud = ud;
}

int gs_engine_read_file(const gs_engine *e, const char *path, char **buf, size_t *len, gs_diag *d)
{
    if (!e->opts.read_file)
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0, "cannot read '%s': no file reader", path);
    return e->opts.read_file(e->opts.read_file_ud, path, buf, len, d);
}

const gs_costs *gs_engine_costs(const gs_engine *e)
{
    return &e->costs;
}

gs_time gs_engine_now(const gs_engine *e)
{
    return e->now;
}
gs_cluster *gs_engine_cluster(const gs_engine *e)
{
    return e->c;
}
const char *gs_engine_policy_name(const gs_engine *e)
{
    return e->pol->name;
}
const gs_engine_opts *gs_engine_opts_get(const gs_engine *e)
{
    return &e->opts;
}
uint64_t gs_engine_events(const gs_engine *e)
{
    return e->events;
}
int64_t gs_engine_pending_gpus(const gs_engine *e)
{
    return e->pending_gpus;
}
size_t gs_engine_npending(const gs_engine *e)
{
    return e->npending;
}
size_t gs_engine_nrunning(const gs_engine *e)
{
    return e->nrunning;
}
int gs_engine_allocated(const gs_engine *e)
{
    return e->allocated;
}
int gs_engine_stopping_gpus(const gs_engine *e)
{
    return e->stopping;
}
size_t gs_engine_nvcs(const gs_engine *e)
{
    return e->vcs.n;
}
const char *gs_engine_vc_name(const gs_engine *e, int vc)
{
    return strtab_str(&e->vcs, vc);
}
int gs_engine_idle(const gs_engine *e)
{
    return e->nactive == 0 && e->nheap == 0;
}

/* Parked memory (suspend_mech=sigstop) is exactly that of the suspended jobs on each GPU, and
 * a GPU holding parked memory of several jobs, or parked memory and a running job's, holds no
 * more than its memory. */
static int check_parked(const gs_engine *e, gs_diag *diag)
{
    if (!e->parked) return 0;
    size_t ng = gs_cluster_ngpus(e->c);
    int64_t *sum = calloc(ng ? ng : 1, sizeof *sum);
    int *n = calloc(ng ? ng : 1, sizeof *n);
    if (!sum || !n) {
        free(sum), free(n);
        return 0; /* a check that cannot run finds nothing */
    }
    for (size_t i = 0; i < e->njobs; i++) {
        const gs_job *j = job_at(e, i);
        if (j->state == GS_JOB_SUSPENDED)
            for (int k = 0; j->last_alloc && k < j->nlast_alloc; k++) {
                sum[j->last_alloc[k]] += gs_engine_job_gpu_mem(e, j);
                n[j->last_alloc[k]]++;
            }
    }
    int rc = 0;
    for (size_t g = 0; g < ng && !rc; g++) {
        if (sum[g] != e->parked[g]) {
            rc = gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                             "GPU %zu: %d MB parked but its suspended jobs hold %lld MB", g,
                             e->parked[g], (long long)sum[g]);
            break;
        }
        const gs_gpu *gp = gs_cluster_gpu(e->c, g);
        int64_t used = sum[g];
        int users = n[g];
        if (gp->owner >= 0) {
            const gs_job *o = job_at(e, (size_t)gp->owner);
            used += gs_engine_job_gpu_mem(e, o);
            users++;
            if (o->pack_with >= 0) {
                used += gs_engine_job_gpu_mem(e, job_at(e, (size_t)o->pack_with));
                users++;
            }
        }
        const char *type = gs_cluster_gpu_type_name(e->c, gp->type);
        if (users > 1 && used > gs_profiles_gpu_mem(profiles(e), type))
            rc = gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                             "GPU %zu holds %lld MB of %d jobs (parked and running) in %d MB", g,
                             (long long)used, users, gs_profiles_gpu_mem(profiles(e), type));
    }
    free(sum), free(n);
    return rc;
}

int gs_engine_check(const gs_engine *e, gs_diag *diag)
{
    int rc = gs_cluster_check(e->c, diag);
    if (rc) return rc;
    for (size_t n = 0; e->out_want && n < gs_cluster_nnodes(e->c); n++) {
        const gs_node *nd = gs_cluster_node(e->c, (int)n);
        int have = 0;
        for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++) {
            const gs_gpu *gp = gs_cluster_gpu(e->c, g);
            if (!e->out_mark[g]) continue;
            have++;
            if (!gp->down || gp->owner >= 0)
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "GPU %d is used outside but is %s",
                                   (int)g, gp->owner >= 0 ? "held by a job" : "in service");
        }
        if (have != e->out_have[n] || have > e->out_want[n])
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                               "node %zu: %d GPU(s) marked outside, %d counted, %d asked", n, have,
                               e->out_have[n], e->out_want[n]);
    }
    for (size_t n = 0; n < gs_cluster_nnodes(e->c); n++) {
        const gs_node *nd = gs_cluster_node(e->c, (int)n);
        unsigned st = gs_engine_node_state(e, (int)n);
        if (!nd->down != !st)
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "node %zu is %s in the cluster but %s", n,
                               nd->down ? "down" : "up", gs_node_state_name(st));
        for (int32_t g = nd->gpu_lo; (st & GS_NODE_FAILED) && g < nd->gpu_hi; g++)
            if (gs_cluster_gpu(e->c, g)->owner >= 0)
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                   "GPU %d of failed node %zu is still held by a job", (int)g, n);
        /* a GPU is down iff its node is, it is used outside, or it is bad (never both) */
        for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++) {
            int out = e->out_mark && e->out_mark[g], bad = gpu_is_bad(e, g);
            if (out && bad)
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "GPU %d is bad and used outside",
                                   (int)g);
            if (!gs_cluster_gpu(e->c, g)->down != !(nd->down || out || bad))
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                   "GPU %d is %s in the cluster, but its node is %s, outside %d, "
                                   "bad %d",
                                   (int)g, gs_cluster_gpu(e->c, g)->down ? "down" : "up",
                                   nd->down ? "down" : "up", out, bad);
        }
    }
    int alloc = 0, packed = 0, reserved = 0;
    size_t pend = 0, run = 0, susp = 0;
    for (size_t i = 0; i < e->njobs; i++) {
        const gs_job *j = job_at(e, i);
        if ((j->alloc != NULL) != holds_gpus(j))
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "job %lld: state %s but %d GPUs held",
                               (long long)j->id, gs_job_state_name(j->state), j->nalloc);
        if (j->vanished < 0 || (j->vanished && !j->uncharged) ||
            ((j->vanished || j->uncharged) && !holds_gpus(j)))
            return gs_diag_set(
                diag, GS_EINTERNAL, 0, 0, "job %lld: state %s, %d GPUs vanished, uncharged %d",
                (long long)j->id, gs_job_state_name(j->state), j->vanished, j->uncharged);
        int owner = j->slot;
        if (j->pack_with >= 0) {
            const gs_job *s = job_at(e, (size_t)j->pack_with);
            if (!s || s->pack_with != j->slot || s->pack_guest == j->pack_guest ||
                j->state != GS_JOB_RUNNING || s->state != GS_JOB_RUNNING || s->nalloc != j->nalloc)
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "job %lld: broken pack with slot %d",
                                   (long long)j->id, j->pack_with);
            if (j->pack_guest) {
                owner = s->slot;
                int mem = gs_engine_job_gpu_mem(e, j) + gs_engine_job_gpu_mem(e, s);
                int cap = gs_profiles_gpu_mem(profiles(e), job_gpu_type(e, s));
                if (mem > cap)
                    return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                       "jobs %lld and %lld packed in %d MB of a %d MB GPU",
                                       (long long)j->id, (long long)s->id, mem, cap);
            }
        }
        for (int k = 0; k < j->nalloc; k++) {
            const gs_gpu *g = gs_cluster_gpu(e->c, j->alloc[k]);
            if (g->owner != owner || g->users != (j->pack_with >= 0 ? 2 : 1))
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                   "job %lld holds GPU %d owned by slot %d (%d users)",
                                   (long long)j->id, j->alloc[k], g->owner, g->users);
            if (j->pack_guest) {
                const gs_job *s = job_at(e, (size_t)j->pack_with);
                if (s->alloc[k] != j->alloc[k])
                    return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                       "job %lld: packed on other GPUs than its host",
                                       (long long)j->id);
            }
        }
        if (holds_gpus(j) && j->nalloc + j->vanished != j->gpus)
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                               "job %lld holds %d of %d GPUs (%d vanished; gang split)",
                               (long long)j->id, j->nalloc, j->gpus, j->vanished);
        if (gs_job_grouped(j)) {
            /* tasks of different sizes / groups: offsets add up, tasks whole on one node, and
             * only a policy that places such jobs has them */
            if (j->task_off && (j->task_off[0] != 0 || j->task_off[j->ntasks] != j->gpus))
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                   "job %lld: task offsets end at %d, not %d GPUs",
                                   (long long)j->id, (int)j->task_off[j->ntasks], j->gpus);
            if (j->arrived && j->state == GS_JOB_PENDING && j->first_start == GS_TIME_NONE &&
                !(e->pol->flags & GS_POLICY_GROUPS))
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                   "job %lld has tasks of different sizes or groups and waits "
                                   "under a policy that cannot place it",
                                   (long long)j->id);
            for (int t = 0; j->alloc && !j->vanished && t < j->ntasks; t++) {
                int f = gs_job_task_first(j, t), node = gs_cluster_gpu(e->c, j->alloc[f])->node;
                for (int k = 1; k < gs_job_task_gpus(j, t); k++)
                    if (gs_cluster_gpu(e->c, j->alloc[f + k])->node != node)
                        return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                           "job %lld: task %d split across nodes", (long long)j->id,
                                           t);
            }
        }
        if (j->max_gpus > 0 && holds_gpus(j) && !gs_job_size_valid(j, j->nalloc + j->vanished))
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                               "job %lld holds %d GPUs, not a valid size (%d..%d)",
                               (long long)j->id, j->nalloc, j->min_gpus, j->max_gpus);
        /* DRAINING(k -> k'): k' = 0 or a valid size, its GPUs reserved for it alone */
        int nx = 0;
        if ((j->resv != NULL) != (j->state == GS_JOB_DRAINING && j->target_gpus > 0) ||
            j->nresv != (j->resv ? j->target_gpus : 0) ||
            (j->resv && !gs_job_size_valid(j, j->nresv)))
            return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                               "job %lld: state %s, target %d, %d GPUs reserved", (long long)j->id,
                               gs_job_state_name(j->state), j->target_gpus, j->nresv);
        for (int k = 0; k < j->nresv; k++) {
            const gs_gpu *g = gs_cluster_gpu(e->c, j->resv[k]);
            for (int q = 0; q < k; q++)
                if (j->resv[q] == j->resv[k])
                    return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "job %lld reserves GPU %d twice",
                                       (long long)j->id, j->resv[k]);
            if (g->owner != j->slot || g->users != 1)
                return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                                   "job %lld reserves GPU %d owned by slot %d (%d users)",
                                   (long long)j->id, j->resv[k], g->owner, g->users);
            nx += !in_list(j->alloc, j->nalloc, j->resv[k]);
        }
        reserved += nx;
        if (j->pack_guest)
            packed += j->nalloc;
        else
            alloc += j->nalloc + nx;
        pend += j->arrived && j->state == GS_JOB_PENDING;
        run += holds_gpus(j);
        susp += j->state == GS_JOB_SUSPENDED;
    }
    if (alloc != e->allocated)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "allocated %d but jobs hold %d", e->allocated,
                           alloc);
    if (reserved != e->reserved)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "reserved %d but jobs reserve %d", e->reserved,
                           reserved);
    /* each owned GPU is held or reserved by its owner (so by one job generation alone) */
    int owned = 0;
    for (size_t g = 0; g < gs_cluster_ngpus(e->c); g++)
        owned += gs_cluster_gpu(e->c, g)->owner >= 0;
    if (owned != alloc)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0,
                           "%d GPUs have an owner but jobs hold or reserve %d", owned, alloc);
    if (packed != e->packed)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "packed %d but guests hold %d", e->packed,
                           packed);
    if (susp != e->nsuspended)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "nsuspended %zu but %zu jobs suspended",
                           e->nsuspended, susp);
    if (pend != e->npending)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "npending %zu but %zu jobs pending",
                           e->npending, pend);
    if (run != e->nrunning)
        return gs_diag_set(diag, GS_EINTERNAL, 0, 0, "nrunning %zu but %zu jobs hold GPUs",
                           e->nrunning, run);
    if ((rc = check_parked(e, diag)) != 0) return rc;
    if (e->pol->check && !e->pol_partial) return e->pol->check(e->pst, diag);
    return 0;
}

gs_time gs_engine_next_event_time(const gs_engine *e)
{
    return e->nheap ? e->heap[0].t : GS_TIME_MAX;
}

int gs_engine_drain_node(gs_engine *e, int node, int drain, const char *reason)
{
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_LIVE) return GS_ESTATE;
    if (node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return GS_ERANGE;
    /* unlike node_event: the jobs on it keep their GPUs (as on a bad node) */
    int rc = node_drain(e, node, drain, reason);
    return rc ? rc : outside_settle(e);
}

/* ---- GPUs used outside the engine (LIVE) ------------------------------------------------- */

/* A node back in service: the GPUs it gives to outside work and its bad GPUs stay out. */
static void gpus_redown(gs_engine *e, int node)
{
    if (!e->out_mark && !e->gbad) return;
    const gs_node *nd = gs_cluster_node(e->c, node);
    for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++)
        if ((e->out_mark && e->out_mark[g]) || gpu_is_bad(e, g))
            gs_cluster_set_gpu_down(e->c, g, 1);
}

/* Bring node's taken count towards its asked count: give back the lowest marked GPUs, take
 * free ones from the highest local index (never one a job holds, never a bad one: it is out
 * of service already).  1 if something changed. */
static int outside_sync(gs_engine *e, int node)
{
    const gs_node *nd = gs_cluster_node(e->c, node);
    int changed = 0, was_short = e->out_have[node] < e->out_want[node];
    for (int32_t g = nd->gpu_lo; g < nd->gpu_hi && e->out_have[node] > e->out_want[node]; g++) {
        if (!e->out_mark[g]) continue;
        e->out_mark[g] = 0;
        e->out_have[node]--;
        if (!nd->down) gs_cluster_set_gpu_down(e->c, g, 0); /* (never bad: see gbad) */
        e->epoch++; /* a GPU came back: cached placement failures are stale */
        changed = 1;
    }
    for (int32_t g = nd->gpu_hi; g-- > nd->gpu_lo && e->out_have[node] < e->out_want[node];) {
        const gs_gpu *gp = gs_cluster_gpu(e->c, g);
        if (e->out_mark[g] || gp->owner >= 0 || gp->users > 0 || gpu_is_bad(e, g)) continue;
        e->out_mark[g] = 1;
        e->out_have[node]++;
        gs_cluster_set_gpu_down(e->c, g, 1);
        changed = 1;
    }
    e->out_short += (e->out_have[node] < e->out_want[node]) - was_short;
    return changed;
}

/* The policy sees a node whose GPUs changed as it sees a node event. */
static int outside_tell(gs_engine *e, int node)
{
    return e->pol->on_node
               ? latch(e, e->pol->on_node(e->pst, node, gs_cluster_node(e->c, node)->down))
               : 0;
}

/* Nodes still short of their outside count take the GPUs that freed since. */
static int outside_settle(gs_engine *e)
{
    if (!e->out_short || e->err) return e->err;
    size_t nn = gs_cluster_nnodes(e->c);
    for (size_t n = 0; n < nn && e->out_short; n++) {
        if (e->out_have[n] >= e->out_want[n]) continue;
        if (outside_sync(e, (int)n)) {
            int rc = outside_tell(e, (int)n);
            if (rc) return rc;
        }
    }
    return 0;
}

int gs_engine_set_outside(gs_engine *e, int node, int ngpus, const char *reason)
{
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_LIVE) return GS_ESTATE;
    if (node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return GS_ERANGE;
    if (ngpus < 0) return GS_EINVAL;
    const gs_node *nd = gs_cluster_node(e->c, node);
    if (ngpus > nd->gpu_hi - nd->gpu_lo) ngpus = nd->gpu_hi - nd->gpu_lo;
    if (!e->out_want) {
        if (!ngpus) return 0;
        size_t nn = gs_cluster_nnodes(e->c), ng = gs_cluster_ngpus(e->c);
        e->out_want = calloc(nn, sizeof *e->out_want);
        e->out_have = calloc(nn, sizeof *e->out_have);
        e->out_mark = calloc(ng, sizeof *e->out_mark);
        if (!e->out_want || !e->out_have || !e->out_mark) {
            free(e->out_want);
            free(e->out_have);
            free(e->out_mark);
            e->out_want = e->out_have = NULL;
            e->out_mark = NULL;
            return latch(e, GS_ENOMEM);
        }
    }
    if (e->out_want[node] == ngpus) return 0;
    int was_short = e->out_have[node] < e->out_want[node];
    e->out_want[node] = ngpus;
    e->out_short += (e->out_have[node] < ngpus) - was_short;
    int changed = outside_sync(e, node);
    char why[256];
    snprintf(why, sizeof why, "%d GPU(s) used outside gsched%s%s", ngpus, reason ? ": " : "",
             reason ? reason : "");
    emit(e, GS_REC_NOTE, NULL, node, why);
    return changed ? outside_tell(e, node) : 0;
}

int gs_engine_node_outside(const gs_engine *e, int node, int *wanted)
{
    int have = 0, want = 0;
    if (e->out_want && node >= 0 && (size_t)node < gs_cluster_nnodes(e->c)) {
        have = e->out_have[node];
        want = e->out_want[node];
    }
    if (wanted) *wanted = want;
    return have;
}

int gs_engine_gpu_outside(const gs_engine *e, int gpu)
{
    return e->out_mark && gpu >= 0 && (size_t)gpu < gs_cluster_ngpus(e->c) && e->out_mark[gpu];
}

const gs_profiles *gs_engine_profiles(const gs_engine *e)
{
    return profiles(e);
}

size_t gs_engine_nsuspended(const gs_engine *e)
{
    return e->nsuspended;
}

int gs_engine_packed_gpus(const gs_engine *e)
{
    return e->packed;
}

gs_time gs_engine_gpu_busy_until(const gs_engine *e, int gpu)
{
    if (gpu < 0 || (size_t)gpu >= gs_cluster_ngpus(e->c) || !e->busy) return 0;
    return e->busy[gpu];
}

int gs_engine_error(const gs_engine *e)
{
    return e->err;
}

/* ---- for queue.c ---------------------------------------------------------------- */

const gs_policy_ops *gs_engine_policy_ops(const gs_engine *e, void **state)
{
    *state = e->pst;
    return e->pol;
}

/* ---- dry run -------------------------------------------------------------------- */

void gs_probe_release(gs_probe *p)
{
    if (!p) return;
    free(p->placement);
    free(p->victims);
    p->placement = NULL;
    p->victims = NULL;
    p->nvictims = 0;
}

/* A running job a probed job may preempt and the policy's rank of it. */
typedef struct probe_cand {
    gs_queue_key k;
    gs_job *j;
} probe_cand;

/* Least important first: the largest rank first (equal ranks: the largest id). */
static int probe_by_rank(const void *a, const void *b)
{
    const probe_cand *x = a, *y = b;
    return gs_queue_key_cmp(&y->k, y->j->id, &x->k, x->j->id);
}

/*
 * PREEMPT: the running jobs past their restart protection that the policy
 * ranks strictly after t (its rank op), least important first: release their
 * GPUs tentatively, one more at a time, until r finds a placement (in out[]);
 * keep the victims whose GPUs it uses; take every released GPU back.  1 when
 * found, 0 when not, or an error (GS_ENOMEM, a policy's) - never latched: a
 * dry run fails alone and leaves the engine as it was.
 */
static int probe_preempt(gs_engine *e, const gs_job *t, const gs_place_req *r, int *out,
                         gs_probe *p)
{
    gs_queue_key tk;
    int rc = e->pol->rank(e->pst, t, &tk);
    if (rc) return rc;
    probe_cand *c = malloc((e->nrunning ? e->nrunning : 1) * sizeof *c);
    if (!c) return GS_ENOMEM;
    size_t n = 0;
    for (size_t s = 0; s < e->njobs && n < e->nrunning; s++) {
        gs_job *v = job_at(e, s);
        if (v->state != GS_JOB_RUNNING || !v->alloc || v->pack_with >= 0 ||
            v->protect_until > e->now || holds_down_gpu(e, v))
            continue;
        gs_queue_key k;
        if ((rc = e->pol->rank(e->pst, v, &k)) != 0) {
            free(c);
            return rc;
        }
        if (gs_queue_key_cmp(&k, v->id, &tk, t->id) > 0) c[n++] = (probe_cand){k, v};
    }
    qsort(c, n, sizeof *c, probe_by_rank);
    size_t k = 0;
    int found = 0;
    rc = 0;
    for (; k < n && !found; k++) {
        if (refund_and_release(e, c[k].j)) break;
        rc = gs_place_find(e->c, r, out);
        found = rc == 0;
        if (rc == GS_ENOMEM) {
            k++;
            break;
        }
    }
    for (size_t i = 0; i < k; i++) recharge_and_alloc(e, c[i].j);
    if (rc == GS_ENOMEM) {
        free(c);
        return rc;
    }
    if (found) {
        p->victims = malloc(k * sizeof *p->victims);
        if (!p->victims) {
            free(c);
            return GS_ENOMEM;
        }
        for (size_t i = 0; i < k; i++) {
            const gs_job *v = c[i].j;
            int uses = 0;
            for (int a = 0; a < v->nalloc && !uses; a++)
                for (int g = 0; g < t->gpus && !uses; g++) uses = out[g] == v->alloc[a];
            if (uses) p->victims[p->nvictims++] = v->id;
        }
    }
    free(c);
    return found;
}

int gs_engine_probe(gs_engine *e, const gs_job_spec *spec, gs_probe *p)
{
    memset(p, 0, sizeof *p);
    p->verdict = GS_PROBE_NEVER;
    if (e->err) return e->err;
    /* the job as it would arrive now (add_one), held by nobody */
    gs_job t;
    memset(&t, 0, sizeof t);
    t.id = INT64_MAX; /* the newest job */
    t.slot = -1;
    t.group = t.id;
    t.ntasks = spec->gang ? spec->ntasks : 1;
    t.gpus_per_task = spec->gpus_per_task;
    t.gpus = t.ntasks * t.gpus_per_task;
    t.cpus_per_task = spec->cpus_per_task;
    t.mem_mb_per_task = spec->mem_mb_per_task;
    t.priority = spec->priority;
    t.gpu_type = -1;
    t.pinned_cell = -1;
    t.pack_with = -1;
    t.state = GS_JOB_PENDING;
    t.vc_name = spec->vc && *spec->vc ? spec->vc : "default";
    t.vc = gs_engine_find_vc(e, t.vc_name);
    t.user = spec->user && *spec->user ? spec->user : "-";
    t.model = spec->model && *spec->model ? spec->model : "-";
    t.name = spec->name ? spec->name : "";
    t.submit = e->now;
    t.first_start = t.end = t.last_start = GS_TIME_NONE;
    t.work = t.remaining = spec->duration;
    gs_time sw;
    if (spec->steps > 0 && !spec_work(e, spec, &sw, NULL)) t.work = t.remaining = sw;
    int grouped = spec->gang && ((spec->task_gpus && spec->ntasks > 0) || spec->ngroups > 0);
    if (grouped && spec->task_gpus) { /* probed as its largest task and its sum (add_one) */
        t.gpus_per_task = t.gpus = 0;
        for (int k = 0; k < t.ntasks; k++) {
            if (spec->task_gpus[k] > t.gpus_per_task) t.gpus_per_task = spec->task_gpus[k];
            t.gpus += spec->task_gpus[k];
        }
    }
    p->ntasks = t.ntasks;
    p->gpus_per_task = t.gpus_per_task;
    p->gpus = t.gpus;
    gs_engine_queue_key(e, &t, &p->key);
    if (t.ntasks < 1 || t.gpus_per_task < 1) {
        snprintf(p->reason, sizeof p->reason, "a job needs at least one task of at least one GPU");
        return 0;
    }
    if (spec->gpu_type && *spec->gpu_type) {
        t.gpu_type = gs_cluster_find_gpu_type(e->c, spec->gpu_type);
        if (t.gpu_type < 0) {
            size_t n = (size_t)snprintf(p->reason, sizeof p->reason,
                                        "unknown GPU type '%s' (cluster has:", spec->gpu_type);
            for (size_t k = 0; k < gs_cluster_ngpu_types(e->c) && n < sizeof p->reason; k++)
                n += (size_t)snprintf(p->reason + n, sizeof p->reason - n, " %s",
                                      gs_cluster_gpu_type_name(e->c, (int)k));
            if (n < sizeof p->reason) snprintf(p->reason + n, sizeof p->reason - n, ")");
            return 0;
        }
    }
    if (spec->pinned_cell && *spec->pinned_cell) {
        t.pinned_cell = gs_cluster_find_pinned(e->c, spec->pinned_cell);
        if (t.pinned_cell < 0) {
            snprintf(p->reason, sizeof p->reason, "unknown pinned cell");
            return 0;
        }
    }
    if (grouped && !(e->pol->flags & GS_POLICY_GROUPS)) {
        snprintf(p->reason, sizeof p->reason, "%s", GS_GROUPS_NEED_POLICY);
        return 0;
    }
    gs_place_req r;
    gs_engine_place_req(e, &t, e->max_level, &r);
    char why[256] = "";
    /* (a grouped job's shape is not one request: the policy judges it at arrival) */
    int rc = grouped ? 0 : gs_place_feasible(e->c, &r, why, sizeof why);
    if (rc == GS_ENOMEM) return rc;
    if (rc != 0) {
        snprintf(p->reason, sizeof p->reason, "%s", why[0] ? why : "can never fit this cluster");
        return 0;
    }
    /* the policy's own rule for arrivals (quotas, VCs) */
    if (e->pol->rejects && e->pol->rejects(e->pst, &t, p->reason, sizeof p->reason)) return 0;
    if (grouped) {
        /* the engine's placement has one task size: the policy places it at a pass */
        p->verdict = GS_PROBE_WAIT;
        snprintf(p->reason, sizeof p->reason,
                 "tasks of different sizes or withinOneCell groups: placed by the policy at its "
                 "next pass");
        return 0;
    }
    p->reason[0] = '\0';
    int *out = malloc((size_t)t.gpus * sizeof *out);
    if (!out) return GS_ENOMEM;
    /* on free GPUs: strict locality first, then the widest the policy asks for */
    gs_engine_place_req(e, &t, GS_LOCALITY_STRICT, &r);
    rc = gs_place_find(e->c, &r, out);
    if (rc && rc != GS_ENOMEM && e->max_level != GS_LOCALITY_STRICT) {
        gs_engine_place_req(e, &t, e->max_level, &r);
        rc = gs_place_find(e->c, &r, out);
    }
    if (rc == GS_ENOMEM) {
        free(out);
        return rc;
    }
    if (rc == 0) {
        p->verdict = GS_PROBE_NOW;
        p->placement = out;
        return 0;
    }
    int found = 0;
    if ((e->pol->flags & GS_POLICY_PREEMPTIVE) && e->pol->rank) {
        found = probe_preempt(e, &t, &r, out, p);
        if (found < 0) {
            free(out);
            gs_probe_release(p);
            p->verdict = GS_PROBE_NEVER;
            return found;
        }
    }
    p->verdict = found ? GS_PROBE_PREEMPT : GS_PROBE_WAIT;
    if (found)
        p->placement = out;
    else
        free(out);
    int n = snprintf(p->reason, sizeof p->reason, "needs %d GPU(s); %d of %d are free now", t.gpus,
                     gs_cluster_free(e->c), (int)gs_cluster_ngpus(e->c));
    if (!found && (e->pol->flags & GS_POLICY_PREEMPTIVE) && n > 0 && (size_t)n < sizeof p->reason)
        snprintf(p->reason + n, sizeof p->reason - (size_t)n, "; %s",
                 e->pol->rank ? "stopping the running jobs the policy ranks after it would not "
                                "make room"
                              : "the policy may start it by preemption at its next pass");
    return 0;
}

/* ---- work-preserving reconfiguration (issue 14; HiveD section 3.11) ---------------------- */

/* Name of the chain a node belongs to: the cell type (else the name) of its top cell. */
static const char *node_chain(const gs_cluster *c, int node)
{
    int32_t x = gs_cluster_node(c, node)->cell;
    while (x > 0 && gs_cluster_cell(c, x)->parent > 0) x = gs_cluster_cell(c, x)->parent;
    const gs_cell *top = gs_cluster_cell(c, x);
    const gs_cell_type *ct = top->type >= 0 ? gs_cluster_cell_type(c, top->type) : NULL;
    return ct ? ct->name : top->name ? top->name : "";
}

/*
 * Match the nodes of the engine's cluster to those of c: by name and chain first, then
 * by name alone among the nodes still unmatched (a node moved to another chain); each new
 * node takes at most one old one.  nmap[old node] = new node or -1; gmap[old GPU] = the
 * GPU of the same local index on the matched node, or -1.
 */
static int reconf_map(const gs_cluster *o, const gs_cluster *c, int32_t *nmap, int32_t *gmap)
{
    size_t non = gs_cluster_nnodes(o), nnn = gs_cluster_nnodes(c);
    strtab names;
    strtab_init(&names);
    int32_t *head = NULL, *next = malloc((nnn ? nnn : 1) * sizeof *next);
    int8_t *taken = calloc(nnn ? nnn : 1, 1);
    int rc = next && taken ? 0 : GS_ENOMEM;
    /* new nodes by name: head[name id] -> next[] chain, in node order */
    for (size_t n = 0; !rc && n < nnn; n++) {
        int id = strtab_intern(&names, gs_cluster_node(c, (int)n)->name);
        if (id < 0) {
            rc = GS_ENOMEM;
            break;
        }
        if ((size_t)id >= names.n - 1 || !head) {
            int32_t *h2 = realloc(head, names.n * sizeof *h2);
            if (!h2) {
                rc = GS_ENOMEM;
                break;
            }
            head = h2;
            if ((size_t)id == names.n - 1) head[id] = -1;
        }
        /* append, keeping node order */
        next[n] = -1;
        if (head[id] < 0) {
            head[id] = (int32_t)n;
        } else {
            int32_t k = head[id];
            while (next[k] >= 0) k = next[k];
            next[k] = (int32_t)n;
        }
    }
    for (size_t n = 0; n < non; n++) nmap[n] = -1;
    for (int pass = 0; !rc && pass < 2; pass++)
        for (size_t n = 0; n < non; n++) {
            if (nmap[n] >= 0) continue;
            int id = strtab_find(&names, gs_cluster_node(o, (int)n)->name);
            if (id < 0) continue;
            const char *ch = node_chain(o, (int)n);
            for (int32_t k = head[id]; k >= 0; k = next[k]) {
                if (taken[k] || (pass == 0 && strcmp(node_chain(c, k), ch) != 0)) continue;
                nmap[n] = k;
                taken[k] = 1;
                break;
            }
        }
    for (size_t g = 0; !rc && g < gs_cluster_ngpus(o); g++) {
        const gs_gpu *gp = gs_cluster_gpu(o, (int)g);
        gmap[g] = -1;
        if (nmap[gp->node] < 0) continue;
        const gs_node *nd = gs_cluster_node(c, nmap[gp->node]);
        for (int32_t k = nd->gpu_lo; k < nd->gpu_hi; k++)
            if (gs_cluster_gpu(c, k)->local == gp->local) {
                gmap[g] = k;
                break;
            }
    }
    strtab_release(&names);
    free(head);
    free(next);
    free(taken);
    return rc;
}

/* Rewrite a GPU list through gmap, dropping the GPUs that vanished; returns how many did. */
static int remap_list(int32_t *l, int32_t *n, const int32_t *gmap)
{
    int k = 0, lost = 0;
    for (int i = 0; i < *n; i++) {
        if (gmap[l[i]] < 0) {
            lost++;
            continue;
        }
        l[k++] = gmap[l[i]];
    }
    *n = k;
    return lost;
}

/*
 * Create the engine's policy again, on cluster c, with the engine's parameters (keep = 1:
 * the engine is on c from then on).  On error, or with keep = 0 (a trial: the caller
 * destroys *pst), the engine is exactly as before (timers the create set are dropped).
 */
static int policy_on(gs_engine *e, gs_cluster *c, void **pst, int keep, gs_diag *d)
{
    gs_cluster *old = e->c;
    gs_locality lv = e->max_level;
    int err0 = e->err, want0 = e->want_pass;
    uint64_t seq0 = e->seq;
    e->c = c;
    e->max_level = GS_LOCALITY_STRICT;
    gs_params_reset_used(&e->params);
    *pst = NULL;
    int rc = e->pol->create(e, &e->params, pst, d);
    if (rc || !keep) {
        if (rc) *pst = NULL;
        size_t k = 0;
        for (size_t i = 0; i < e->nheap; i++)
            if (e->heap[i].seq < seq0) e->heap[k++] = e->heap[i];
        e->nheap = k;
        heap_rebuild(e);
        e->c = old;
        e->max_level = lv;
        e->want_pass = want0; /* a create asking for a pass (request_pass) asked for nothing */
        e->err = err0;        /* a refused (or out-of-memory) create is an answer, not a failure */
    }
    return rc;
}

/* Keep the heap entries 'keep' accepts (rewriting their keys), then heapify. */
static void heap_filter(gs_engine *e, uint64_t seq0, const int32_t *nmap)
{
    size_t k = 0;
    for (size_t i = 0; i < e->nheap; i++) {
        ev x = e->heap[i];
        if (x.kind == EV_TIMER && x.seq < seq0) continue; /* the old policy's */
        if (x.kind == EV_NODE && x.key >= 0) x.key = nmap[x.key];
        e->heap[k++] = x;
    }
    e->nheap = k;
    heap_rebuild(e);
}

/* Why waiting job j can never run on the engine's cluster (the arrival rules: placement on
 * the empty cluster, then the policy's rejects op), into why; NULL when it can. */
static const char *never_fits(gs_engine *e, const gs_job *j, char *why, size_t cap)
{
    const char *bad = infeasible(e, j);
    if (bad) return bad;
    if (e->pol->rejects && e->pol->rejects(e->pst, j, why, cap)) return why;
    return NULL;
}

/*
 * After a reconfiguration: the jobs requeued since the last check (preempted, node failed,
 * stopped) that can never fit the cluster now are rejected with the reason - they would
 * wait for ever - and the policy forgets them (on_finish, as for a cancelled waiting job).
 * Returns how many, or an error.
 */
static int recheck_requeued(gs_engine *e)
{
    int n = 0;
    for (size_t i = 0; i < e->nrecheck && !e->err; i++) {
        gs_job *j = job_at(e, (size_t)e->recheck[i]);
        if (j->state != GS_JOB_PENDING || !j->arrived) continue;
        char why[256], r[320];
        const char *bad = never_fits(e, j, why, sizeof why);
        if (!bad || e->err) continue;
        snprintf(r, sizeof r, "after reconfiguration: %s", bad);
        if (tr_reject(e, j, r) || hook_job(e, e->pol->on_finish, j)) break;
        n++;
    }
    e->nrecheck = 0;
    return e->err ? e->err : n;
}

int gs_engine_add_reconfig_event(gs_engine *e, gs_time t, gs_cluster *c)
{
    if (e->err) return e->err;
    if (!e->pol->on_adopt) return GS_EUNSUPPORTED; /* it could not learn of running jobs */
    if (!c || c == e->c || !gs_cluster_ngpus(c)) return GS_EINVAL;
    /* the policy must accept the cluster: try it now, so the event itself cannot be refused */
    void *pst;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = policy_on(e, c, &pst, 0, &d);
    if (rc) return rc;
    if (e->pol->destroy) e->pol->destroy(pst);
    gs_cluster **n = realloc(e->rcl, (e->nrcl + 1) * sizeof *n);
    if (!n) return latch(e, GS_ENOMEM);
    e->rcl = n;
    e->rcl[e->nrcl] = c;
    rc = heap_push(e, (ev){.t = t, .kind = EV_RECONFIG, .key = (int32_t)e->nrcl});
    if (!rc) e->nrcl++;
    return rc;
}

int gs_engine_reconfigure(gs_engine *e, gs_cluster *c, gs_diag *d)
{
    if (e->err) return e->err;
    if (!e->pol->on_adopt)
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                           "policy '%s' cannot be told of running jobs (no on_adopt): it cannot "
                           "be reconfigured under them",
                           e->pol->name);
    if (!c || c == e->c)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "reconfiguration needs another cluster than the engine's own");
    if (!gs_cluster_ngpus(c)) return gs_diag_set(d, GS_EINVAL, 0, 0, "the new cluster has no GPU");
    gs_cluster *o = e->c;
    size_t non = gs_cluster_nnodes(o), nng = gs_cluster_ngpus(c), nnn = gs_cluster_nnodes(c);
    /* everything that can fail first: the engine changes only once nothing can */
    int32_t *nmap = malloc((non ? non : 1) * sizeof *nmap);
    int32_t *gmap = malloc((gs_cluster_ngpus(o) ? gs_cluster_ngpus(o) : 1) * sizeof *gmap);
    int32_t *ntype = malloc((e->njobs ? e->njobs : 1) * sizeof *ntype);
    int32_t *npin = malloc((e->njobs ? e->njobs : 1) * sizeof *npin);
    gs_time *busy = calloc(nng, sizeof *busy);
    int32_t *ow = NULL, *oh = NULL;
    uint8_t *om = NULL, *ns = e->nstate ? calloc(nnn + 1, 1) : NULL;
    uint8_t *gb = e->gbad ? calloc(nng, 1) : NULL;
    if (e->out_want) {
        ow = calloc(nnn, sizeof *ow);
        oh = calloc(nnn, sizeof *oh);
        om = calloc(nng, sizeof *om);
    }
    int rc = nmap && gmap && ntype && npin && busy && (!e->out_want || (ow && oh && om)) &&
                     (!e->nstate || ns) && (!e->gbad || gb)
                 ? reconf_map(o, c, nmap, gmap)
                 : GS_ENOMEM;
    /* GPU types and pinned cells by name: a type the new cluster lacks is added to it (no GPU
     * has it, so nothing waiting for it fits); a vanished pinned cell is -1 */
    for (size_t s = 0; !rc && s < e->njobs; s++) {
        const gs_job *j = job_at(e, s);
        ntype[s] = j->gpu_type;
        if (j->gpu_type >= 0) {
            const char *tn = gs_cluster_gpu_type_name(o, j->gpu_type);
            ntype[s] = gs_cluster_find_gpu_type(c, tn);
            if (ntype[s] < 0) ntype[s] = gs_cluster_gpu_type(c, tn);
            if (ntype[s] == GS_ENOMEM) rc = GS_ENOMEM;
            if (ntype[s] < 0) ntype[s] = -2; /* GS_ERANGE: too many types; it cannot run */
        }
        npin[s] = j->pinned_cell;
        if (j->pinned_cell >= 0) {
            npin[s] = gs_cluster_find_pinned(c, gs_cluster_cell_pinned(o, j->pinned_cell));
            if (npin[s] < 0) npin[s] = -2; /* vanished */
        }
        if (j->nresv && !scratch(e, (size_t)j->nresv)) rc = GS_ENOMEM;
    }
    void *pst = NULL;
    uint64_t seq0 = e->seq;
    if (!rc) rc = speed_ready(e, c);           /* the profiles its GPU types' rates need */
    if (!rc) rc = policy_on(e, c, &pst, 1, d); /* e->c is c from here on */
    if (rc) {
        free(nmap), free(gmap), free(ntype), free(npin), free(busy), free(ow), free(oh), free(om);
        free(ns), free(gb);
        if (rc == GS_ENOMEM) gs_diag_set(d, rc, 0, 0, "out of memory");
        return rc;
    }
    /* ---- no way back: the old policy goes, the jobs move to c ---- */
    void *old_pst = e->pst;
    e->pst = pst;
    if (e->pol->destroy) e->pol->destroy(old_pst);
    heap_filter(e, seq0, nmap);
    /* every suspended job is requeued below: nothing stays parked (suspend_mech=sigstop) */
    free(e->parked);
    e->parked = NULL;
    for (size_t g = 0; e->busy && g < gs_cluster_ngpus(o); g++)
        if (gmap[g] >= 0) busy[gmap[g]] = e->busy[g];
    free(e->busy);
    e->busy = busy;
    free(e->pcache); /* by GPU type id */
    e->pcache = NULL;
    e->pcache_models = 0;
    speed_types(e); /* by GPU type id too (speed_ready made the profiles ready above) */
    free(e->rcache);
    e->rcache = NULL;
    e->rcache_models = 0;
    for (unsigned i = 0; i < FEAS_CACHE; i++) e->feas[i].valid = 0;
    e->epoch++;
    e->allocated = e->reserved = e->packed = e->stopping = 0;
    int degraded = 0, lost = 0, requeued = 0;
    for (size_t s = 0; s < e->njobs; s++) {
        gs_job *j = job_at(e, s);
        j->gpu_type = ntype[s] == -2 ? -1 : ntype[s];
        j->pinned_cell = npin[s] >= 0 ? npin[s] : -1;
        if (j->last_alloc) remap_list(j->last_alloc, &j->nlast_alloc, gmap);
        if (gs_job_state_final(j->state)) continue;
        if (!j->arrived && (ntype[s] == -2 || npin[s] == -2))
            j->reason = ntype[s] == -2 ? "unknown GPU type" : "unknown pinned cell";
        if (j->state == GS_JOB_SUSPENDED) {
            requeued++; /* below, once the cluster is reported */
            continue;
        }
        if (!holds_gpus(j)) {
            if (j->arrived) j->reason = NULL; /* the old policy's text */
            continue;
        }
        int gone = remap_list(j->alloc, &j->nalloc, gmap);
        if (gone) {
            /* the run's accounting so far is closed on the GPUs it had; from now on only
             * those the cluster still has count */
            j->executed += e->now - j->last_start;
            j->service += (double)(j->nalloc + gone) * gs_time_to_sec(e->now - j->last_start);
            j->last_start = e->now;
            j->vanished += gone;
            j->uncharged = 1;
            degraded++;
            lost += gone;
        }
        if (j->resv) {
            int32_t n = j->nresv;
            if (remap_list(j->resv, &n, gmap)) {
                /* its next generation's GPUs vanished: the drain ends in PENDING */
                free(j->resv);
                j->resv = NULL;
                j->nresv = 0;
                j->target_gpus = 0;
            } else {
                j->nresv = n;
            }
        }
        if (j->state == GS_JOB_DRAINING && (j->cpus_per_task || j->mem_mb_per_task))
            j->uncharged = 1; /* it holds max(old, new) tasks' worth: not re-charged */
    }
    /* owners first, then packed guests on their hosts' GPUs */
    for (size_t s = 0; s < e->njobs; s++) {
        gs_job *j = job_at(e, s);
        if (!holds_gpus(j) || j->pack_guest) continue;
        gs_cluster_alloc(c, j->alloc, j->nalloc, j->slot); /* distinct, free, healthy */
        e->allocated += j->nalloc;
        if (j->state == GS_JOB_PREEMPTED) e->stopping += j->nalloc;
        if (!j->uncharged && charge_tasks(e, j, j->alloc)) j->uncharged = 1;
        int nx = j->resv ? resv_extra(j, scratch(e, (size_t)j->nresv)) : 0;
        if (nx) {
            gs_cluster_alloc(c, e->scratch, nx, j->slot);
            e->allocated += nx;
            e->reserved += nx;
        }
    }
    for (size_t s = 0; s < e->njobs; s++) {
        gs_job *j = job_at(e, s);
        if (!holds_gpus(j) || !j->pack_guest) continue;
        for (int k = 0; k < j->nalloc; k++)
            gs_cluster_share(c, j->alloc[k], gs_engine_job_gpu_mem(e, j), 0);
        e->packed += j->nalloc;
        if (!j->uncharged && charge_tasks(e, j, j->alloc)) j->uncharged = 1;
    }
    /* nodes out of service (failed, drained, bad) stay so; GPUs used outside gsched are
     * counted again */
    if (e->nstate) {
        for (size_t n = 0; n < non; n++)
            if (nmap[n] >= 0) ns[nmap[n]] = e->nstate[n];
        free(e->nstate);
        e->nstate = ns;
        for (size_t n = 0; n < nnn; n++)
            if (ns[n]) gs_cluster_set_node_down(c, (int)n, 1);
    }
    if (e->gbad) {
        /* bad GPUs stay bad (by the GPU match), before outside counts take GPUs again */
        for (size_t g = 0; g < gs_cluster_ngpus(o); g++)
            if (gmap[g] >= 0 && e->gbad[g]) {
                gb[gmap[g]] = 1;
                gs_cluster_set_gpu_down(c, gmap[g], 1);
            }
        free(e->gbad);
        e->gbad = gb;
    }
    if (e->out_want) {
        for (size_t n = 0; n < non; n++)
            if (nmap[n] >= 0) ow[nmap[n]] = e->out_want[n];
        free(e->out_want), free(e->out_have), free(e->out_mark);
        e->out_want = ow, e->out_have = oh, e->out_mark = om;
        e->out_short = 0;
        for (size_t n = 0; n < nnn; n++)
            if (ow[n]) {
                e->out_short++; /* out_have 0 < out_want */
                outside_sync(e, (int)n);
            }
    }
    char why[256];
    snprintf(why, sizeof why,
             "cluster reconfigured: %zu nodes, %zu GPUs (was %zu, %zu); %d GPU(s) of %d running "
             "job(s) vanished, %d suspended job(s) requeued",
             nnn, nng, non, gs_cluster_ngpus(o), lost, degraded, requeued);
    emit(e, GS_REC_RECONFIG, NULL, -1, why);
    for (size_t s = 0; s < e->njobs && requeued; s++) {
        gs_job *j = job_at(e, s);
        if (j->state != GS_JOB_SUSPENDED) continue;
        /* its state is in host memory; the new policy sees it wait like any other */
        leave_suspended(e, j);
        j->stop_saved = 1;
        to_pending(e, j);
        j->reason = NULL;
        model_release(e, j);
        emit(e, GS_REC_REQUEUE, j, -1, "reconfigured");
    }
    for (size_t s = 0; s < e->njobs && degraded; s++) {
        gs_job *j = job_at(e, s);
        if (!holds_gpus(j) || !j->vanished) continue;
        snprintf(why, sizeof why,
                 "%d of its %d GPU(s) are not in the reconfigured cluster: it runs on, their use "
                 "is not counted",
                 j->vanished, j->gpus);
        emit(e, GS_REC_NOTE, j, -1, why);
    }
    free(nmap), free(gmap);
    /* the new policy learns the cluster's state, then the jobs: running ones in slot order,
     * then the waiting ones (a waiting job that can never fit c is rejected) */
    for (size_t n = 0; n < nnn && !e->err && e->pol->on_node; n++) {
        /* a node out of service, or one with GPUs out (bad, used outside) as they are told */
        const gs_node *nd = gs_cluster_node(c, (int)n);
        int some = nd->down;
        for (int32_t g = nd->gpu_lo; g < nd->gpu_hi && !some; g++)
            some = gs_cluster_gpu(c, g)->down;
        if (some) latch(e, e->pol->on_node(e->pst, (int)n, nd->down));
    }
    for (size_t s = 0; s < e->njobs && !e->err; s++) {
        gs_job *j = job_at(e, s);
        if (holds_gpus(j)) hook_job(e, e->pol->on_adopt, j);
    }
    for (size_t s = 0; s < e->njobs && !e->err; s++) {
        gs_job *j = job_at(e, s);
        if (j->state != GS_JOB_PENDING || !j->arrived) continue;
        const char *bad = ntype[s] == -2  ? "its GPU type is not in the cluster"
                          : npin[s] == -2 ? "its pinned cell is not in the cluster"
                                          : infeasible(e, j);
        if (e->err) break;
        if (bad) {
            char r[320];
            snprintf(r, sizeof r, "after reconfiguration: %s", bad);
            tr_reject(e, j, r);
            continue;
        }
        hook_job(e, e->pol->on_arrival, j);
    }
    free(ntype), free(npin);
    if (e->err) e->pol_partial = 1;
    e->reconfigured = 1;
    e->want_pass = 1;
    return e->err;
}

/* ---- HiveD conformance (issue 14) ------------------------------------------------------ */

/* Bad nodes (node_bad() above). */
int gs_engine_add_node_bad_event(gs_engine *e, gs_time t, int node, int bad)
{
    if (e->err) return e->err;
    if (node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return GS_EINVAL;
    return heap_push(e, (ev){.t = t, .kind = EV_NODE, .key = node, .gen = 2u | (uint32_t) !!bad});
}

int gs_engine_set_node_bad(gs_engine *e, int node, int bad, const char *reason)
{
    if (e->err) return e->err;
    if (node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return GS_ERANGE;
    int rc = node_bad(e, node, bad, reason);
    if (rc) return rc;
    return e->opts.mode == GS_ENGINE_LIVE ? outside_settle(e) : 0;
}

int gs_engine_node_bad(const gs_engine *e, int node)
{
    return (gs_engine_node_state(e, node) & GS_NODE_BAD) != 0;
}

unsigned gs_engine_node_state(const gs_engine *e, int node)
{
    if (!e->nstate || node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return 0;
    return e->nstate[node];
}

const char *gs_node_state_name(unsigned st)
{
    /* the strongest reason: a failure, then a drain, then a bad mark */
    return st & GS_NODE_FAILED    ? "down"
           : st & GS_NODE_DRAINED ? "drained"
           : st & GS_NODE_BAD     ? "bad"
                                  : "ok";
}

/*
 * SIM: at t (after that instant's arrivals), job 'id' ends CANCELLED with a
 * CANCEL record, whatever it is doing then - waiting, running (its GPUs are
 * freed), suspended, or not yet arrived (it never arrives); nothing happens
 * when it has ended by then.  GS_EUNKNOWN for an unknown id.
 */
int gs_engine_add_cancel_event(gs_engine *e, gs_time t, int64_t id, const char *reason)
{
    if (e->err) return e->err;
    const gs_job *j = gs_engine_find_job(e, id);
    if (!j) return GS_EUNKNOWN;
    int32_t why;
    if (!intern(e, &e->strs, reason ? reason : "cancelled", &why)) return e->err;
    return heap_push(e, (ev){.t = t, .kind = EV_CANCEL, .key = j->slot, .tag = (uint64_t)why});
}

int gs_engine_inspect(const gs_engine *e, const char *key, char *buf, size_t cap)
{
    if (!e->pol->inspect) return GS_ENOENT;
    return e->pol->inspect(e->pst, key, buf, cap);
}

/* ---- issue 16: each lane adds its calls under its own marker ---- */
/* job control: withdraw, update */

/*
 * PENDING (arrived) -> PENDING, not arrived, deferred: the policy forgets the job
 * (on_withdraw) and the engine counts it out of the waiting jobs, as before its arrival;
 * gs_engine_release() makes it arrive again (a new on_arrival, a new SUBMIT record).  Its
 * time waited so far stays in j->queued.  A released job whose arrival is still due only
 * becomes deferred again (tr_arrive skips it).
 */
static int tr_withdraw(gs_engine *e, gs_job *j)
{
    if (j->arrived) {
        leave_pending(e, j);
        int rc = hook_job(e, e->pol->on_withdraw, j);
        if (rc) return rc; /* latched: the engine stops */
        j->arrived = 0;
        j->reason = NULL;
        e->want_pass = 1; /* it may have blocked the jobs behind it */
    }
    j->deferred = 1;
    return 0;
}

int gs_engine_update_deferred(gs_engine *e, const gs_job *cj, const gs_job_spec *s, gs_diag *diag)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_LIVE) return GS_ESTATE;
    if (!j || j->state != GS_JOB_PENDING || !j->deferred || j->arrived) return GS_ESTATE;
    if (j->max_gpus > 0 || s->max_gpus > 0 || s->task_gpus || gs_job_grouped(j))
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "only a rigid job whose tasks are all the same size can be changed");
    if (s->ntasks != j->ntasks)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "the number of tasks cannot change (%d)",
                           j->ntasks);
    if (s->gpus_per_task < 1)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job needs at least 1 GPU per task (got %d)",
                           s->gpus_per_task);
    if ((int64_t)s->ntasks * s->gpus_per_task > (1 << 20))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "job asks for too many GPUs (%lld)",
                           (long long)s->ntasks * s->gpus_per_task);
    gs_time work;
    int rc = spec_work(e, s, &work, diag);
    if (rc) return rc;
    int32_t vc;
    const char *name = intern(e, &e->strs, s->name ? s->name : "", NULL);
    const char *vc_name = intern(e, &e->vcs, s->vc && *s->vc ? s->vc : "default", &vc);
    if (!name || !vc_name) return GS_ENOMEM; /* latched */
    j->name = name;
    j->vc_name = vc_name;
    j->vc = vc;
    j->priority = s->priority;
    j->gpus_per_task = s->gpus_per_task;
    j->gpus = j->req_gpus = s->ntasks * s->gpus_per_task;
    if (j->first_start == GS_TIME_NONE) j->work = j->remaining = work;
    return 0;
}

int gs_engine_can_withdraw(const gs_engine *e)
{
    return e->pol->on_withdraw != NULL;
}

int gs_engine_withdraw(gs_engine *e, const gs_job *cj, gs_time now)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_LIVE) return GS_ESTATE;
    if (!j || j->state != GS_JOB_PENDING || j->deferred) return GS_ESTATE;
    if (j->arrived && !e->pol->on_withdraw) return GS_EUNSUPPORTED;
    if (now > e->now) e->now = now;
    return tr_withdraw(e, j);
}

/* accounting: forget */

/*
 * Forget a final job (issue 16: the daemon's memory follows its active jobs).  Its per-job
 * arrays are freed at once and its id unmapped; its slot stays (policies index their state by
 * slot, and slots keep their order of addition), and once every slot of its block of
 * JOB_BLOCK jobs is forgotten the block itself is freed: such a slot then reads as e->tomb, a
 * CANCELLED job with no id, no GPUs and no arrays, which every loop over the slots skips as
 * final and every queued event of the slot finds stale.  Nothing the policies see changes:
 * a final job has already left their queues.
 */
int gs_engine_forget(gs_engine *e, const gs_job *cj)
{
    if (e->err) return e->err;
    if (!cj || cj->slot < 0 || (size_t)cj->slot >= e->njobs) return GS_EINVAL;
    size_t s = (size_t)cj->slot, b = s >> JOB_BLOCK_BITS;
    gs_job *j = job_at(e, s);
    if (j != cj) return GS_EINVAL;
    if (!gs_job_state_final(j->state)) return GS_ESTATE;
    if (!e->forgot) {
        e->forgot = calloc(e->nblocks ? e->nblocks : 1, JOB_BLOCK / 8);
        e->nforgot = calloc(e->nblocks ? e->nblocks : 1, sizeof *e->nforgot);
        if (!e->forgot || !e->nforgot) {
            free(e->forgot), free(e->nforgot);
            e->forgot = NULL, e->nforgot = NULL;
            return GS_ENOMEM; /* nothing changed: the caller may try again */
        }
    }
    uint8_t bit = (uint8_t)(1u << (s & 7));
    if (e->forgot[s >> 3] & bit) return GS_ENOENT;
    e->forgot[s >> 3] |= bit;
    idmap_del(&e->ids, j->id);
    free(j->alloc), free(j->last_alloc), free(j->resv), free(j->sizes);
    free(j->task_gpus), free(j->task_off), free(j->groups);
    j->alloc = j->last_alloc = j->resv = j->sizes = j->task_gpus = j->task_off = NULL;
    j->groups = NULL;
    j->nalloc = j->nlast_alloc = j->nresv = j->nsizes = j->ngroups = 0;
    /* the whole block, once every slot of it is forgotten (never the one still filling) */
    if (++e->nforgot[b] == JOB_BLOCK && (b + 1) << JOB_BLOCK_BITS <= e->njobs) {
        free(e->blocks[b]);
        e->blocks[b] = NULL;
    }
    return 0;
}

/* arrays and dependencies: SIM release events */
int gs_engine_add_job_deferred(gs_engine *e, const gs_job_spec *s, const gs_job **out,
                               gs_diag *diag)
{
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_SIM) return GS_ESTATE;
    gs_job *j = NULL;
    int rc = add_job(e, s, 1, &j, diag);
    if (out) *out = j;
    return rc;
}

int gs_engine_release_at(gs_engine *e, const gs_job *cj, gs_time t)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_SIM) return GS_ESTATE;
    if (!j || j->state != GS_JOB_PENDING || !j->deferred) return GS_ESTATE;
    int rc = heap_push(e, (ev){.t = t > e->now ? t : e->now, .kind = EV_ARRIVAL, .key = j->slot});
    if (rc) return rc;
    j->deferred = 0;
    return 0;
}

/* node administration: SIM drain events */

/* A drain or its end (the LIVE call gs_engine_drain_node does the same, then settles outside
 * work): the jobs on the node keep their GPUs, as on a bad node. */
static int node_drain(gs_engine *e, int node, int drain, const char *reason)
{
    int rc = nstate_ready(e);
    if (rc) return latch(e, rc);
    drain = !!drain;
    if (!(e->nstate[node] & GS_NODE_DRAINED) == !drain) return 0;
    int changed = node_set_state(e, node, GS_NODE_DRAINED, drain);
    emit(e, drain ? GS_REC_NODE_DOWN : GS_REC_NODE_UP, NULL, node, reason);
    return node_tell(e, node, changed);
}

static int node_drain_event(gs_engine *e, int node, int drain)
{
    return node_drain(e, node, drain, drain ? "drained" : "resumed");
}

int gs_engine_add_node_drain_event(gs_engine *e, gs_time t, int node, int drain)
{
    if (e->err) return e->err;
    if (e->opts.mode == GS_ENGINE_LIVE) return GS_ESTATE;
    if (node < 0 || (size_t)node >= gs_cluster_nnodes(e->c)) return GS_EINVAL;
    return heap_push(e, (ev){.t = t, .kind = EV_NODE, .key = node, .gen = 4u | (uint32_t) !!drain});
}

/* ---- issue 17: bad GPUs, requeue of a suspend that could not be carried out ---------------- */

int gs_engine_set_gpu_bad(gs_engine *e, int gpu, int bad, const char *reason)
{
    if (e->err) return e->err;
    if (gpu < 0 || (size_t)gpu >= gs_cluster_ngpus(e->c)) return GS_ERANGE;
    bad = !!bad;
    if (!e->gbad) {
        if (!bad) return 0;
        if (!(e->gbad = calloc(gs_cluster_ngpus(e->c), 1))) return latch(e, GS_ENOMEM);
    }
    if (e->gbad[gpu] == bad) return 0;
    const gs_gpu *gp = gs_cluster_gpu(e->c, gpu);
    int node = gp->node, was_down = gp->down, changed = 0;
    const gs_node *nd = gs_cluster_node(e->c, node);
    e->gbad[gpu] = (uint8_t)bad;
    if (bad) {
        if (e->out_mark && e->out_mark[gpu]) {
            /* out of outside use: the count takes another GPU of the node if one is free */
            e->out_mark[gpu] = 0;
            e->out_short += (e->out_have[node]-- == e->out_want[node]);
        }
        /* a job holding it keeps it (the cluster keeps owners of GPUs that go down, and a GPU
         * freed while down does not become free) */
        gs_cluster_set_gpu_down(e->c, gpu, 1);
    } else if (!nd->down && !(e->out_mark && e->out_mark[gpu])) {
        gs_cluster_set_gpu_down(e->c, gpu, 0);
        e->epoch++; /* a GPU came back: cached placement failures are stale */
    }
    changed = !was_down != !gp->down;
    emit_gpu(e, bad ? GS_REC_GPU_BAD : GS_REC_GPU_GOOD, NULL, node, gpu,
             reason ? reason
             : bad  ? "marked bad"
                    : "marked good");
    /* an outside count short of GPUs takes a free one (the GPU back in service, or another
     * for the one that turned bad) */
    if (e->out_want && e->out_have[node] < e->out_want[node] && outside_sync(e, node)) changed = 1;
    if (changed && e->pol->on_node) {
        int rc = latch(e, e->pol->on_node(e->pst, node, nd->down));
        if (rc) return rc;
    }
    return e->err;
}

int gs_engine_gpu_bad(const gs_engine *e, int gpu)
{
    return gpu >= 0 && (size_t)gpu < gs_cluster_ngpus(e->c) && gpu_is_bad(e, gpu);
}

int gs_engine_requeue_suspended(gs_engine *e, const gs_job *cj, const char *reason, gs_time now)
{
    gs_job *j = cj ? mut(e, cj) : NULL;
    if (e->err) return e->err;
    if (e->opts.mode != GS_ENGINE_LIVE || j->state != GS_JOB_SUSPENDED) return GS_ESTATE;
    if (now > e->now) e->now = now;
    const char *why = intern(e, &e->strs, reason ? reason : "suspend failed", NULL);
    if (!why) return GS_ENOMEM;
    j->preemptions++; /* stopped and requeued like a preempted job */
    return tr_requeue(e, j, GS_REC_REQUEUE, why, 1, 1);
}
