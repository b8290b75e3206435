/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_pollux.c - Pollux (Qiao et al., OSDI'21): goodput-driven elastic
 * allocation of GPUs to jobs, as the authors' artifact simulator does it
 * (pollux.py, simulator.py get_pollux_job_info; elastic.md section 1.3),
 * with a deterministic search in place of the artifact's NSGA-II.
 *
 * One decision re-allocates every active job at once:
 *   - jobs are ordered by (pinned first, attained service, submission, id);
 *     that order settles every conflict (the seed's repair, ties);
 *   - a job's value is its speedup S(nodes, replicas) (goodput model:
 *     gs_goodput_speedup, relative to 1 GPU; linear r without a model or an
 *     application) divided by its speedup at the fair share (speedup_base=fair,
 *     the artifact's Problem: ceil(nodes x share) nodes, ceil(1/(share x J))
 *     replicas; speedup_base=one: 1 GPU), times share x #nodes (a node's worth
 *     of linear scaling scores 1), times the restart factor
 *     max(age - restarts x 30 s, 0) / (age + 30 s) when its allocation would
 *     change;
 *   - the decision maximises the power mean (p = power, default -1) of
 *     (value + 1e-3) over all active jobs: for p < 0 that is minimising
 *     sum (value + 1e-3)^p, a sum of per-job terms, which the search exploits;
 *   - constraints: at most one distributed (multi-node) job per node
 *     (interference_avoid=on), at most max_nodes (16) nodes per job,
 *     replicas <= min(max(2 x most profiled, 1), max_replicas (64),
 *     max batch / min local batch, max_gpus), one replica for the
 *     single_replica_apps (ncf), sizes valid for the job (gs_job_size_valid),
 *     any job may drop to 0 GPUs (min_replicas 0: back to PENDING); a job
 *     naming a GPU type only on nodes whose GPUs are all of that type (the
 *     engine starts it on no other GPU; a node mixing types is not used).
 *
 * Search (deterministic; no randomness at all): the seed is the current
 * allocation (repaired in job order against the caps above); then
 *   fill:     a lazy greedy over "grow job x to r' on free GPUs" moves by gain
 *             per GPU (the first move of a job pays its restart factor;
 *             placement: its own node, else best fit, else its nodes plus the
 *             nodes with most free GPUs);
 *   compact:  distributed jobs onto fewer nodes when that pays;
 *   exchange: ruin and recreate with one donor at a time - the donors from
 *             the end of the job order whose loss per freed GPU is below the
 *             best receiver's gain shrink, the 32 receivers of largest
 *             potential gain refill greedily; kept only if the objective
 *             improves, else undone exactly (undo log);
 * until no exchange improves or search_budget trials are spent.
 *
 * Acting: stops and shrinks first (gs_engine_rescale, POLICY kind; n = 0
 * drains back to PENDING), then grows, moves and starts (gs_engine_start),
 * in sweeps until nothing more applies.  Every rescale carries a reason with
 * the old and new speedup.  A request the engine refuses (GPUs still held by
 * a draining job, the rescale gap) waits for the next decision, and so does a
 * change that would put two distributed jobs on one node because another
 * change was deferred (checked against the engine's allocations).  Rigid jobs
 * (max_gpus 0) start at their size and are pinned while they run.
 *
 * When it decides (elastic_mode): parity - only at multiples of 'interval'
 * (60 s, the artifact's time step; engine timers); event - also at every pass
 * after an arrival, finish, requeue or node change.
 *
 * Pinned (kept as they are): DRAINING and PREEMPTED jobs, running rigid jobs,
 * running elastic jobs whose next policy rescale is not allowed yet
 * (gs_engine_rescale_allowed_at).  Their GPUs are not available to others.
 *
 * Speed (the same decisions at any scale): a decision reads only the candidate
 * jobs - every active job that is pending or elastic (cset, kept from the
 * hooks) - and the nodes' free GPUs from the cluster's cell aggregates; the
 * other active jobs are rigid jobs holding GPUs, pinned whatever the decision
 * (their cost terms are constants, their GPUs are not free, those spanning
 * nodes are in dset for the one-distributed-job rule).  A decision none of
 * whose candidates may move is skipped (it would change nothing).  What is
 * left per decision is O(nodes) (the histograms, best fit) plus the search
 * over the candidates.
 *
 * Invariants: nactive counts the arrived active jobs; cset holds every one
 * that is pending or elastic, dset every other one spanning nodes (checked
 * by px_check against a full walk); the engine's jobs are the truth (speedups
 * are memoised by the goodput model itself, which forgets them whenever a
 * job's learned state changes).  A decision never gives a GPU to two
 * jobs, never more than a node's usable GPUs, never a GPU of another type to a job naming a type,
 * and never leaves two distributed jobs on one node
 * when interference_avoid is on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/goodput.h"
#include "gsched/policy.h"

#define PX_EPS     1e-3
#define GS_PX_HMAX 65 /* nodes of up to 64 GPUs: histograms counted on the stack */

typedef struct px_ent {
    int32_t node, cnt; /* cnt in replicas (tasks) */
} px_ent;

typedef struct px_job {
    gs_job *j;
    int32_t gpt;
    int32_t rmin, rmax; /* replicas: valid sizes are 0 or in [rmin, rmax] (and gs_job_size_valid) */
    int8_t fixed, rigid, running;
    double phi;   /* restart factor */
    double scale; /* share x #nodes / base speedup */
    int32_t n, r; /* current entries, replicas */
    int32_t bn, br;
    int8_t changed;
    double cost; /* current cost term */
    double s0;   /* raw speedup of the base allocation (reasons) */
    int32_t bnodes;
    double key_as; /* attained service (GPU-s) */
} px_job;

typedef struct px_heap_ent {
    double score;
    int32_t x, r, gen;
} px_heap_ent;

typedef struct pollux {
    gs_engine *e;
    gs_goodput *g; /* progress model state, NULL when none */
    /* parameters */
    gs_time interval, delay;
    double power;
    int max_nodes, max_replicas, parity, avoid, base_fair, budget;
    char **single_apps;
    size_t nsingle;
    char **fixed_apps;
    int64_t *fixed_batch;
    size_t nfixed;
    /* timers */
    int timer_armed;
    int tick;  /* parity: a decision is due at this pass */
    int dirty; /* event mode: something changed since the last decision */
    uint64_t decisions;
    /* per slot */
    int32_t *seen_max; /* most replicas a job ran at (jobs without a model) */
    uint8_t *sflag;    /* PX_ACT | PX_INC | PX_IND (below) */
    size_t cap;
    /* the active jobs between decisions (kept from the hooks, checked by px_check) */
    size_t nactive;        /* arrived jobs not final (PX_ACT) */
    int partial;           /* a job could not be put in the sets (out of memory; the engine has
                              latched GS_ENOMEM and stops): px_check compares them no more */
    int32_t *cset;         /* candidates (PX_INC), by slot: every active job that is elastic or
                            * not known to hold GPUs; the others are rigid jobs holding GPUs,
                            * pinned whatever the decision (a hook brings them back) */
    size_t ncset, capcset; /* (entries of finished jobs until the next decision drops them) */
    int32_t *dset;         /* (PX_IND), by slot: active jobs outside cset that may hold GPUs on
                            * several nodes (their nodes take no other distributed job) */
    size_t ndset, capdset;
    /* the cluster's topology, read once (immutable after gs_cluster_finish) */
    const gs_cluster *topo;
    int32_t total;         /* GPUs of all nodes */
    const gs_cell **ncell; /* each node's cell (its free GPUs) */
    /* one decision's scratch */
    px_job *jobs;
    size_t njobs, capjobs;
    int32_t *order; /* jobs indices in job order */
    px_ent *cur, *base;
    size_t capents;
    int32_t nnodes, maxg; /* nodes, most GPUs of a node */
    int32_t *ntouch;      /* nodes a decision changed (node state, rdn/rdo) */
    uint32_t *tst;        /* per node: tstamp when in ntouch */
    uint32_t tstamp;
    size_t nntouch;
    int based;      /* nfree, hf, hd, totfree hold the cluster's free GPUs (between decisions every
                     * node is 'base': free GPUs as the cluster had them at its last change that
                     * gs_cluster_changed_nodes listed and the policy read, no distributed job) */
    int32_t *nfree; /* free GPUs per node in the plan */
    int32_t *ntype; /* GPU type of each node (-2 when it mixes types) */
    int32_t *ndist; /* distributed job on the node (index into jobs), -1 */
    int32_t *ndc;   /* distributed jobs on the node (interference_avoid=off: several) */
    int32_t *rdn, *rdo; /* acting: distributed jobs on the node now, one of their slots */
    int32_t *hf, *hd;   /* histograms: nodes by free GPUs (all; no distributed job) */
    int32_t totfree;
    int32_t *jgen; /* per job: changes during the search; acting: 1 = applied or given up */
    px_heap_ent *heap;
    size_t nheap, capheap;
    /* undo log */
    int32_t *ulog_x;
    px_ent *ulog_e;
    int32_t *ulog_meta; /* n, r, changed per record */
    double *ulog_cost;
    size_t nulog, capulog;
    int32_t *tmp;             /* scratch ints (nodes) */
    size_t capnodes, caphist; /* sizes of the node arrays, of hf, hd, tmp */
    int32_t *gpus;
    size_t capgpus;
    int32_t *claim; /* per GPU: job index the plan gives it to (valid when cstamp = stamp) */
    uint32_t *cstamp;
    uint32_t stamp;
    size_t capclaim;
} pollux;

#define PX_ACT 1 /* counted in nactive */
#define PX_INC 2 /* in cset */
#define PX_IND 4 /* in dset */

/* ---- parameters ----------------------------------------------------------------------------- */

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* "a,b,c" -> strings */
static int split_list(const char *s, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s) return 0;
    size_t cnt = 1;
    for (const char *q = s; *q; q++) cnt += *q == ',';
    char **v = calloc(cnt, sizeof *v);
    if (!v) return GS_ENOMEM;
    size_t k = 0;
    const char *p = s;
    while (1) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len) {
            v[k] = malloc(len + 1);
            if (!v[k]) {
                free_strs(v, k);
                return GS_ENOMEM;
            }
            memcpy(v[k], p, len);
            v[k][len] = 0;
            k++;
        }
        if (!c) break;
        p = c + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

static int px_params(pollux *P, gs_params *p, gs_diag *d)
{
    int rc = gs_params_get_duration(p, "interval", 60 * GS_SEC, &P->interval, d);
    if (!rc && P->interval <= 0)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'interval' must be positive");
    if (!rc) rc = gs_params_get_duration(p, "restart_penalty", 30 * GS_SEC, &P->delay, d);
    if (!rc && P->delay < 0)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'restart_penalty' must be >= 0");
    if (!rc) rc = gs_params_get_double(p, "power", -1.0, -10.0, 1.0, &P->power, d);
    int64_t v;
    if (!rc) rc = gs_params_get_i64(p, "max_nodes", 16, 1, 4096, &v, d);
    if (!rc) P->max_nodes = (int)v;
    if (!rc) rc = gs_params_get_i64(p, "max_replicas", 64, 1, 1 << 20, &v, d);
    if (!rc) P->max_replicas = (int)v;
    if (!rc) rc = gs_params_get_i64(p, "search_budget", 512, 0, 1 << 24, &v, d);
    if (!rc) P->budget = (int)v;
    if (!rc) rc = gs_params_get_bool(p, "interference_avoid", 1, &P->avoid, d);
    if (!rc) {
        const char *m = gs_params_get(p, "elastic_mode");
        if (!m || !strcmp(m, "event"))
            P->parity = 0;
        else if (!strcmp(m, "parity"))
            P->parity = 1;
        else
            rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                             "parameter 'elastic_mode': '%s' is not parity or event", m);
    }
    if (!rc) {
        const char *b = gs_params_get(p, "speedup_base");
        if (!b || !strcmp(b, "fair"))
            P->base_fair = 1;
        else if (!strcmp(b, "one"))
            P->base_fair = 0;
        else
            rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                             "parameter 'speedup_base': '%s' is not fair or one", b);
    }
    if (!rc) {
        const char *s = gs_params_get(p, "single_replica_apps");
        rc = split_list(s ? s : "ncf", &P->single_apps, &P->nsingle);
    }
    if (!rc) {
        const char *s = gs_params_get(p, "fixed_batch");
        char **v2 = NULL;
        size_t n2 = 0;
        rc = split_list(s ? s : "ncf:32768", &v2, &n2);
        if (!rc && n2) {
            P->fixed_apps = calloc(n2, sizeof *P->fixed_apps);
            P->fixed_batch = calloc(n2, sizeof *P->fixed_batch);
            if (!P->fixed_apps || !P->fixed_batch) rc = GS_ENOMEM;
        }
        for (size_t i = 0; !rc && i < n2; i++) {
            char *c = strchr(v2[i], ':');
            char *end = NULL;
            long long b = c ? strtoll(c + 1, &end, 10) : 0;
            if (!c || c == v2[i] || !end || *end || b <= 0) {
                rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                                 "parameter 'fixed_batch': '%s' is not APP:BATCH (BATCH > 0)",
                                 v2[i]);
                break;
            }
            *c = 0;
            P->fixed_apps[i] = v2[i];
            v2[i] = NULL;
            P->fixed_batch[i] = b;
            P->nfixed = i + 1;
        }
        free_strs(v2, n2);
    }
    return rc;
}

/* ---- per-slot state ------------------------------------------------------------------------- */

static int px_grow_slots(pollux *P, size_t slot)
{
    if (slot < P->cap) return 0;
    size_t nc = P->cap ? P->cap : 256;
    while (nc <= slot) nc *= 2;
    int32_t *s = realloc(P->seen_max, nc * sizeof *s);
    if (!s) return GS_ENOMEM;
    P->seen_max = s;
    uint8_t *f = realloc(P->sflag, nc * sizeof *f);
    if (!f) return GS_ENOMEM;
    P->sflag = f;
    for (size_t i = P->cap; i < nc; i++) {
        P->sflag[i] = 0;
        P->seen_max[i] = 0;
    }
    P->cap = nc;
    return 0;
}

/* Insert slot into the sorted set a[0..*n) (nearly always at the tail: slots grow). */
static int px_set_add(int32_t **a, size_t *n, size_t *cap, int32_t slot)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        int32_t *b = realloc(*a, nc * sizeof *b);
        if (!b) return GS_ENOMEM;
        *a = b;
        *cap = nc;
    }
    size_t i = *n;
    while (i > 0 && (*a)[i - 1] > slot) i--;
    memmove(*a + i + 1, *a + i, (*n - i) * sizeof **a);
    (*a)[i] = slot;
    (*n)++;
    return 0;
}

/* Job j (arrived, told by a hook) is active: count it, make it a candidate. */
static int px_track(pollux *P, const gs_job *j)
{
    if (!j || j->slot < 0) return 0;
    int rc = px_grow_slots(P, (size_t)j->slot);
    if (rc) return P->partial = 1, rc;
    uint8_t *f = &P->sflag[j->slot];
    if (!j->arrived || j->deferred || gs_job_state_final(j->state)) return 0;
    if (!(*f & PX_INC)) {
        rc = px_set_add(&P->cset, &P->ncset, &P->capcset, j->slot);
        if (rc) return P->partial = 1, rc;
        *f |= PX_INC;
    }
    if (!(*f & PX_ACT)) {
        *f |= PX_ACT;
        P->nactive++;
    }
    return 0;
}

/* 1 when job j holds (or, draining, has reserved) GPUs on more than one node. */
static int px_multi(const gs_cluster *c, const gs_job *j)
{
    if (j->alloc && j->nalloc > 1 && gs_cluster_count_nodes(c, j->alloc, j->nalloc) > 1) return 1;
    return j->state == GS_JOB_DRAINING && j->resv && j->nresv > 1 &&
           gs_cluster_count_nodes(c, j->resv, j->nresv) > 1;
}

/*
 * Before a decision: drop finished jobs from both sets; a rigid candidate that holds GPUs
 * (RUNNING, DRAINING, PREEMPTED, SUSPENDED) is pinned until a hook tells of it again
 * (requeue, adopt): it leaves cset, for dset when it spans several nodes; dset keeps only
 * such jobs.
 */
static int px_prune(pollux *P)
{
    gs_engine *e = P->e;
    const gs_cluster *c = gs_engine_cluster(e);
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < P->ncset; i++) {
        int32_t s = P->cset[i];
        const gs_job *j = gs_engine_job(e, (size_t)s);
        uint8_t *f = &P->sflag[s];
        if (!(*f & PX_INC)) continue;
        if (!j->arrived || j->deferred || gs_job_state_final(j->state)) {
            *f &= (uint8_t)~PX_INC;
            continue;
        }
        if (j->max_gpus <= 0 && j->state != GS_JOB_PENDING) {
            *f &= (uint8_t)~PX_INC;
            if (!(*f & PX_IND) && px_multi(c, j)) {
                if (!rc) rc = px_set_add(&P->dset, &P->ndset, &P->capdset, s);
                if (!rc) *f |= PX_IND;
                if (rc) P->partial = 1;
            }
            continue;
        }
        P->cset[k++] = s;
    }
    P->ncset = k;
    k = 0;
    for (size_t i = 0; i < P->ndset; i++) {
        int32_t s = P->dset[i];
        const gs_job *j = gs_engine_job(e, (size_t)s);
        uint8_t *f = &P->sflag[s];
        if (!(*f & PX_IND)) continue;
        if ((*f & PX_INC) || gs_job_state_final(j->state) || !px_multi(c, j)) {
            *f &= (uint8_t)~PX_IND;
            continue;
        }
        P->dset[k++] = s;
    }
    P->ndset = k;
    return rc;
}

static int px_in(char **v, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(v[i], s)) return 1;
    return 0;
}

/* ---- speedups ------------------------------------------------------------------------------- */

static int px_model(const pollux *P, const gs_job *j)
{
    return P->g && j->app && gs_goodput_job_app(P->g, j) != NULL;
}

/* Raw speedup of job x at (nodes, r replicas) relative to 1 GPU. */
static double px_speedup(pollux *P, const px_job *x, int nodes, int r)
{
    if (r <= 0) return 0.0;
    const gs_job *j = x->j;
    if (!px_model(P, j)) {
        if (!j->app || !gs_engine_progress_ops(P->e)) return (double)r;
        /* another progress model (throughput tables): its what-if rate, node-blind */
        int t = gs_engine_job_gpu_type(P->e, j);
        double one = gs_engine_job_rate(P->e, j, t, x->gpt);
        return one > 0 ? gs_engine_job_rate(P->e, j, t, r * x->gpt) / one : (double)r;
    }
    return gs_goodput_speedup(P->g, j, nodes, r * x->gpt);
}

static double px_costv(const pollux *P, double v)
{
    if (P->power < 0) return pow(v + PX_EPS, P->power);
    if (P->power == 0) return -log(v > PX_EPS ? v : PX_EPS);
    return -pow(v + PX_EPS, P->power);
}

static double px_cost(pollux *P, const px_job *x, int nodes, int r, int changed)
{
    if (r <= 0) return px_costv(P, 0.0);
    double v = x->scale * px_speedup(P, x, nodes, r);
    if (changed) v *= x->phi;
    if (P->power == -1.0) return 1.0 / (v + PX_EPS);
    return px_costv(P, v);
}

/* ---- allocations ---------------------------------------------------------------------------- */

static px_ent *px_cur(pollux *P, int x)
{
    return P->cur + (size_t)x * (size_t)P->max_nodes;
}
static px_ent *px_base(pollux *P, int x)
{
    return P->base + (size_t)x * (size_t)P->max_nodes;
}

static void px_hist(pollux *P, int node, int d)
{
    int f = P->nfree[node];
    P->hf[f] += d;
    if (P->ndist[node] < 0) P->hd[f] += d;
}

/* Node nd's state will differ from base: restored at the decision's end (px_restore). */
static void px_touch(pollux *P, int nd)
{
    if (P->tst[nd] == P->tstamp) return;
    P->tst[nd] = P->tstamp;
    P->ntouch[P->nntouch++] = nd;
}

/* Add (d = +1) or remove (d = -1) job x's current entries from the node state. */
static void px_apply(pollux *P, int x, int d)
{
    px_job *J = &P->jobs[x];
    px_ent *e = px_cur(P, x);
    int dist = J->n > 1 && P->avoid;
    for (int i = 0; i < J->n; i++) {
        int nd = e[i].node;
        px_touch(P, nd);
        px_hist(P, nd, -1);
        P->nfree[nd] -= d * e[i].cnt * J->gpt;
        P->totfree -= d * e[i].cnt * J->gpt;
        if (dist) P->ndist[nd] = d > 0 ? x : -1;
        if (J->n > 1) P->ndc[nd] += d;
        px_hist(P, nd, +1);
    }
}

static int px_same_as_base(pollux *P, int x)
{
    px_job *J = &P->jobs[x];
    if (J->n != J->bn || J->r != J->br) return 0;
    px_ent *a = px_cur(P, x), *b = px_base(P, x);
    for (int i = 0; i < J->n; i++) {
        int found = 0;
        for (int k = 0; k < J->bn; k++)
            if (b[k].node == a[i].node) {
                found = b[k].cnt == a[i].cnt;
                break;
            }
        if (!found) return 0;
    }
    return 1;
}

static int px_ulog_push(pollux *P, int x)
{
    if (P->nulog == P->capulog) {
        size_t nc = P->capulog ? 2 * P->capulog : 64;
        int32_t *a = realloc(P->ulog_x, nc * sizeof *a);
        if (!a) return GS_ENOMEM;
        P->ulog_x = a;
        px_ent *b = realloc(P->ulog_e, nc * (size_t)P->max_nodes * sizeof *b);
        if (!b) return GS_ENOMEM;
        P->ulog_e = b;
        int32_t *c = realloc(P->ulog_meta, nc * 3 * sizeof *c);
        if (!c) return GS_ENOMEM;
        P->ulog_meta = c;
        double *dd = realloc(P->ulog_cost, nc * sizeof *dd);
        if (!dd) return GS_ENOMEM;
        P->ulog_cost = dd;
        P->capulog = nc;
    }
    px_job *J = &P->jobs[x];
    size_t k = P->nulog++;
    P->ulog_x[k] = x;
    memcpy(P->ulog_e + k * (size_t)P->max_nodes, px_cur(P, x), (size_t)J->n * sizeof(px_ent));
    P->ulog_meta[3 * k] = J->n;
    P->ulog_meta[3 * k + 1] = J->r;
    P->ulog_meta[3 * k + 2] = J->changed;
    P->ulog_cost[k] = J->cost;
    return 0;
}

/* Undo the log back to 'mark'. */
static void px_undo(pollux *P, size_t mark)
{
    while (P->nulog > mark) {
        size_t k = --P->nulog;
        int x = P->ulog_x[k];
        px_job *J = &P->jobs[x];
        px_apply(P, x, -1);
        J->n = P->ulog_meta[3 * k];
        J->r = P->ulog_meta[3 * k + 1];
        J->changed = (int8_t)P->ulog_meta[3 * k + 2];
        J->cost = P->ulog_cost[k];
        memcpy(px_cur(P, x), P->ulog_e + k * (size_t)P->max_nodes, (size_t)J->n * sizeof(px_ent));
        px_apply(P, x, +1);
        P->jgen[x]++;
    }
}

/* Replace job x's entries by ents[0..n) (logged). */
static int px_set(pollux *P, int x, const px_ent *ents, int n)
{
    int rc = px_ulog_push(P, x);
    if (rc) return rc;
    px_job *J = &P->jobs[x];
    px_apply(P, x, -1);
    memcpy(px_cur(P, x), ents, (size_t)n * sizeof *ents);
    J->n = n;
    int r = 0;
    for (int i = 0; i < n; i++) r += ents[i].cnt;
    J->r = r;
    px_apply(P, x, +1);
    J->changed = (int8_t)!px_same_as_base(P, x);
    J->cost = px_cost(P, J, J->n, J->r, J->changed);
    P->jgen[x]++;
    return 0;
}

/* 1 when job x may use node nd's GPUs: any node for a job naming no GPU type, else a node
 * whose GPUs are all of its type (the engine starts a typed job on no other GPU). */
static int px_type_ok(const pollux *P, int x, int nd)
{
    int t = P->jobs[x].j->gpu_type;
    return t < 0 || P->ntype[nd] == t;
}

/* Replicas job x may hold on node nd (its own there plus free). */
static int px_avail(pollux *P, int x, int nd, int own)
{
    if (!px_type_ok(P, x, nd)) return own;
    return P->nfree[nd] / P->jobs[x].gpt + own;
}

static int px_size_ok(const px_job *J, int r)
{
    if (r == 0) return J->rigid ? 1 : 1;
    if (r < J->rmin || r > J->rmax) return 0;
    if (J->rigid) return r == J->j->ntasks;
    return gs_job_size_valid(J->j, r * J->gpt);
}

/* 1 when one of job x's nodes hosts another distributed job (x cannot spread from there). */
static int px_own_blocked(pollux *P, int x)
{
    px_job *J = &P->jobs[x];
    px_ent *e = px_cur(P, x);
    for (int i = 0; P->avoid && i < J->n; i++)
        if (P->ndist[e[i].node] >= 0 && P->ndist[e[i].node] != x) return 1;
    return 0;
}

/*
 * Fewest nodes job x needs for r' > r replicas given the plan's free GPUs,
 * keeping its current nodes (estimate from the histograms; 0 = impossible).
 */
static int px_min_nodes(pollux *P, int x, int rn)
{
    px_job *J = &P->jobs[x];
    px_ent *e = px_cur(P, x);
    int gpt = J->gpt;
    /* single node: its own node (if alone there) or the node with most free GPUs */
    int best1 = 0;
    for (int f = P->maxg; f > 0; f--)
        if (P->hf[f] > 0) {
            best1 = f / gpt;
            break;
        }
    if (J->n == 1 && px_avail(P, x, e[0].node, e[0].cnt) > best1)
        best1 = px_avail(P, x, e[0].node, e[0].cnt);
    if (rn <= best1) return 1;
    /* several nodes: its own nodes kept, unless one hosts another distributed job (then
     * a placement elsewhere) */
    int own = !px_own_blocked(P, x);
    int have = 0, k = 0;
    for (int i = 0; own && i < J->n; i++) {
        have += px_avail(P, x, e[i].node, e[i].cnt);
        k++;
    }
    /* its own nodes are counted in hd when it is not distributed: take them out */
    int *h = P->tmp;
    for (int f = 0; f <= P->maxg; f++) h[f] = P->avoid ? P->hd[f] : P->hf[f];
    if (own && J->n == 1 && P->ndist[e[0].node] < 0) h[P->nfree[e[0].node]]--;
    if (own && !P->avoid && J->n > 1)
        for (int i = 0; i < J->n; i++) h[P->nfree[e[i].node]]--;
    for (int f = P->maxg; f >= gpt && have < rn; f--) {
        int per = f / gpt;
        int cnt = h[f];
        if (cnt <= 0 || per <= 0) continue;
        int need = (rn - have + per - 1) / per;
        int take = need < cnt ? need : cnt;
        have += take * per;
        k += take;
    }
    if (have < rn || k > P->max_nodes) return 0;
    return k;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/*
 * Build a placement for job x at rn replicas into out (as px_min_nodes
 * plans it); returns the entry count, 0 when impossible.
 */
static int px_place(pollux *P, int x, int rn, px_ent *out)
{
    px_job *J = &P->jobs[x];
    px_ent *e = px_cur(P, x);
    int gpt = J->gpt;
    if (rn <= J->r) {
        /* shrink: drop replicas from the nodes where it has fewest */
        memcpy(out, e, (size_t)J->n * sizeof *e);
        int n = J->n, drop = J->r - rn;
        while (drop > 0 && n > 0) {
            int m = 0;
            for (int i = 1; i < n; i++)
                if (out[i].cnt < out[m].cnt ||
                    (out[i].cnt == out[m].cnt && out[i].node > out[m].node))
                    m = i;
            int t = out[m].cnt < drop ? out[m].cnt : drop;
            out[m].cnt -= t;
            drop -= t;
            if (!out[m].cnt) out[m] = out[--n];
        }
        return rn == 0 ? 0 : n;
    }
    /* single node: stay on its node if it can, else best fit (smallest free that fits) */
    if (J->n == 1 && px_avail(P, x, e[0].node, e[0].cnt) >= rn) {
        out[0].node = e[0].node;
        out[0].cnt = rn;
        return 1;
    }
    int bestn = -1, bestf = 0;
    if (gpt == 1 && J->j->gpu_type < 0) {
        /* (the same walk without the type test and division) */
        const int32_t *nf = P->nfree;
        for (int nd = 0; nd < P->nnodes; nd++) {
            int a = nf[nd];
            if (a >= rn && (bestn < 0 || a < bestf)) {
                bestn = nd, bestf = a;
                if (a == rn) break;
            }
        }
    } else
        for (int nd = 0; nd < P->nnodes; nd++) {
            int a = px_type_ok(P, x, nd) ? P->nfree[nd] / gpt : 0;
            if (a >= rn && (bestn < 0 || a < bestf)) {
                bestn = nd, bestf = a;
                if (a == rn) break; /* none smaller can fit; ties keep the first */
            }
        }
    if (bestn >= 0) {
        out[0].node = bestn;
        out[0].cnt = rn;
        return 1;
    }
    /* several nodes: its own nodes filled up (unless one hosts another distributed job:
     * then elsewhere), then the nodes with most free GPUs */
    int n = 0, have = 0, nown = px_own_blocked(P, x) ? 0 : J->n;
    for (int i = 0; i < nown; i++) {
        int nd = e[i].node;
        out[n].node = nd;
        out[n].cnt = px_avail(P, x, nd, e[i].cnt);
        have += out[n].cnt;
        n++;
    }
    while (have < rn) {
        /* most free GPUs first; without the rule, nodes no distributed job uses first */
        int bn = -1, ba = 0, bs = 1;
        for (int nd = 0; nd < P->nnodes; nd++) {
            if (P->avoid && P->ndist[nd] >= 0) continue;
            if (!px_type_ok(P, x, nd)) continue;
            int a = P->nfree[nd] / gpt;
            int sh = P->ndc[nd] > 0;
            if (a <= 0 || sh > bs || (sh == bs && a <= ba)) continue;
            int mine = 0;
            for (int i = 0; i < n; i++) mine |= out[i].node == nd;
            if (!mine) bn = nd, ba = a, bs = sh;
        }
        if (bn < 0 || n >= P->max_nodes) return 0;
        out[n].node = bn;
        out[n].cnt = ba;
        have += ba;
        n++;
    }
    /* trim the surplus from the last nodes taken (they are the emptiest of the new ones) */
    int surplus = have - rn;
    for (int i = n - 1; i >= 0 && surplus > 0; i--) {
        int own = 0;
        for (int k = 0; k < J->n; k++)
            if (e[k].node == out[i].node) own = e[k].cnt;
        int can = i < nown ? out[i].cnt - own : out[i].cnt;
        int t = can < surplus ? can : surplus;
        out[i].cnt -= t;
        surplus -= t;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (out[i].cnt > 0) out[m++] = out[i];
    (void)cmp_int;
    return m;
}

/* ---- the heap of grow moves ----------------------------------------------------------------- */

static int px_heap_push(pollux *P, px_heap_ent h)
{
    if (P->nheap == P->capheap) {
        size_t nc = P->capheap ? 2 * P->capheap : 256;
        px_heap_ent *a = realloc(P->heap, nc * sizeof *a);
        if (!a) return GS_ENOMEM;
        P->heap = a;
        P->capheap = nc;
    }
    size_t i = P->nheap++;
    P->heap[i] = h;
    while (i) {
        size_t p = (i - 1) / 2;
        px_heap_ent *a = &P->heap[p], *b = &P->heap[i];
        /* max-heap by score, ties: earlier in job order (smaller x) */
        if (a->score > b->score || (a->score == b->score && a->x < b->x)) break;
        px_heap_ent t = *a;
        *a = *b;
        *b = t;
        i = p;
    }
    return 0;
}

static px_heap_ent px_heap_pop(pollux *P)
{
    px_heap_ent top = P->heap[0];
    P->heap[0] = P->heap[--P->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < P->nheap && (P->heap[l].score > P->heap[m].score ||
                             (P->heap[l].score == P->heap[m].score && P->heap[l].x < P->heap[m].x)))
            m = l;
        if (r < P->nheap && (P->heap[r].score > P->heap[m].score ||
                             (P->heap[r].score == P->heap[m].score && P->heap[r].x < P->heap[m].x)))
            m = r;
        if (m == i) break;
        px_heap_ent t = P->heap[m];
        P->heap[m] = P->heap[i];
        P->heap[i] = t;
        i = m;
    }
    return top;
}

/* Best grow move of job x on free GPUs: score = cost decrease per GPU added (0: none). */
static double px_best_grow(pollux *P, int x, int *rbest)
{
    px_job *J = &P->jobs[x];
    *rbest = 0;
    if (J->fixed) return 0;
    int lim = J->rmax;
    int room = J->r + P->totfree / J->gpt;
    if (lim > room) lim = room;
    /* sizes up to max(2r, r + a node's worth) per move (later moves go on growing); at
     * least the next valid size */
    int step = J->r > P->maxg / J->gpt ? J->r : P->maxg / J->gpt;
    if (step < 1) step = 1;
    double best = 0;
    int tried = 0;
    for (int rn = J->r + 1; rn <= lim; rn++) {
        if (rn > J->r + step && tried) break;
        if (!px_size_ok(J, rn)) continue;
        tried = 1;
        int nodes = px_min_nodes(P, x, rn);
        if (!nodes) continue;
        double c = px_cost(P, J, nodes, rn, 1);
        double s = (J->cost - c) / (double)((rn - J->r) * J->gpt);
        if (s > best * (1 + 1e-12) + 1e-15) best = s, *rbest = rn;
    }
    return best;
}

/* Lazy greedy over grow moves of the jobs in xs[0..nx) (all when xs is NULL). */
static int px_fill(pollux *P, const int32_t *xs, size_t nx)
{
    P->nheap = 0;
    size_t n = xs ? nx : P->njobs;
    for (size_t i = 0; i < n; i++) {
        int x = xs ? xs[i] : P->order[i];
        int rb;
        double s = px_best_grow(P, x, &rb);
        if (s > 0) {
            int rc = px_heap_push(P, (px_heap_ent){s, x, rb, P->jgen[x]});
            if (rc) return rc;
        }
    }
    px_ent *pl = P->cur + (size_t)P->njobs * (size_t)P->max_nodes; /* scratch row */
    while (P->nheap && P->totfree > 0) {
        px_heap_ent h = px_heap_pop(P);
        int rb;
        double s = px_best_grow(P, h.x, &rb);
        if (s <= 0) continue;
        if (P->nheap && (s < P->heap[0].score || (s == P->heap[0].score && P->heap[0].x < h.x))) {
            int rc = px_heap_push(P, (px_heap_ent){s, h.x, rb, P->jgen[h.x]});
            if (rc) return rc;
            continue;
        }
        int m = px_place(P, h.x, rb, pl);
        if (!m) continue;
        double before = P->jobs[h.x].cost;
        int rc = px_set(P, h.x, pl, m);
        if (rc) return rc;
        if (!(P->jobs[h.x].cost < before)) {
            /* the real placement is worse than the estimate: take it back */
            px_undo(P, P->nulog - 1);
            continue;
        }
        double s2 = px_best_grow(P, h.x, &rb);
        if (s2 > 0) {
            rc = px_heap_push(P, (px_heap_ent){s2, h.x, rb, P->jgen[h.x]});
            if (rc) return rc;
        }
    }
    return 0;
}

/* Move distributed jobs onto fewer nodes where free GPUs allow it and it pays. */
static int px_compact(pollux *P)
{
    px_ent *pl = P->cur + (size_t)P->njobs * (size_t)P->max_nodes; /* scratch row */
    for (size_t oi = 0; oi < P->njobs; oi++) {
        int x = P->order[oi];
        px_job *J = &P->jobs[x];
        if (J->fixed || J->n < 2) continue;
        size_t mark = P->nulog;
        int r = J->r, n0 = J->n;
        double before = J->cost;
        /* take it off, then place it afresh at the same size (fewest nodes first) */
        int rc = px_set(P, x, pl, 0);
        if (rc) return rc;
        int m = px_place(P, x, r, pl);
        if (m && m < n0) {
            rc = px_set(P, x, pl, m);
            if (rc) return rc;
            if (P->jobs[x].cost < before) continue;
        }
        px_undo(P, mark);
    }
    return 0;
}

/* ---- one decision --------------------------------------------------------------------------- */

static int px_jobs_reserve(pollux *P, size_t n)
{
    if (n <= P->capjobs) return 0;
    size_t nc = P->capjobs ? P->capjobs : 64;
    while (nc < n) nc *= 2;
    px_job *a = realloc(P->jobs, nc * sizeof *a);
    if (!a) return GS_ENOMEM;
    P->jobs = a;
    int32_t *o = realloc(P->order, nc * sizeof *o);
    if (!o) return GS_ENOMEM;
    P->order = o;
    int32_t *g = realloc(P->jgen, nc * sizeof *g);
    if (!g) return GS_ENOMEM;
    P->jgen = g;
    P->capjobs = nc;
    return 0;
}

static int px_ents_reserve(pollux *P, size_t njobs)
{
    size_t need = (njobs + 1) * (size_t)P->max_nodes;
    if (need <= P->capents) return 0;
    size_t nc = P->capents ? P->capents : 1024;
    while (nc < need) nc *= 2;
    px_ent *a = realloc(P->cur, nc * sizeof *a);
    if (!a) return GS_ENOMEM;
    P->cur = a;
    px_ent *b = realloc(P->base, nc * sizeof *b);
    if (!b) return GS_ENOMEM;
    P->base = b;
    P->capents = nc;
    return 0;
}

/* A job's place in the job order: (pinned first, attained service, submission, id). */
typedef struct px_okey {
    int32_t fixed, x;
    double as;
    gs_time submit;
    int64_t id;
} px_okey;

static int px_cmp_order(const void *a, const void *b)
{
    const px_okey *x = a, *y = b;
    if (x->fixed != y->fixed) return x->fixed ? -1 : 1;
    if (x->as != y->as) return x->as < y->as ? -1 : 1;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Group j's GPUs (alloc) by node into ents (replica counts); returns entries. */
static int px_group(const gs_cluster *c, const int32_t *gpus, int n, int gpt, px_ent *ents,
                    int maxe)
{
    int m = 0;
    for (int t = 0; t + gpt <= n; t += gpt) {
        int nd = gs_cluster_gpu(c, gpus[t])->node;
        int i = 0;
        while (i < m && ents[i].node != nd) i++;
        if (i == m) {
            if (m == maxe) return -1;
            ents[m].node = nd;
            ents[m].cnt = 0;
            m++;
        }
        ents[i].cnt++;
    }
    return m;
}

static int px_collect(pollux *P)
{
    gs_engine *e = P->e;
    gs_cluster *c = gs_engine_cluster(e);
    size_t nj = gs_engine_njobs(e);
    int rc = px_grow_slots(P, nj ? nj - 1 : 0);
    if (!rc) rc = px_prune(P);
    if (rc) return rc;
    /* the candidates (a superset of the jobs a decision may move) */
    size_t cnt = P->ncset;
    rc = px_jobs_reserve(P, cnt + 1);
    if (!rc) rc = px_ents_reserve(P, cnt + 1);
    if (rc) return rc;
    P->njobs = 0;
    /* nodes (topology: once) */
    if (P->topo != c) {
        P->nnodes = (int32_t)gs_cluster_nnodes(c);
        size_t nn = (size_t)P->nnodes;
        const gs_cell **nc = realloc(P->ncell, (nn ? nn : 1) * sizeof *nc);
        int32_t *nt = realloc(P->ntype, (nn ? nn : 1) * sizeof *nt);
        if (nc) P->ncell = nc;
        if (nt) P->ntype = nt;
        if (!nc || !nt) return GS_ENOMEM;
        int maxg = 0, total = 0;
        for (int nd = 0; nd < P->nnodes; nd++) {
            const gs_node *n = gs_cluster_node(c, nd);
            if (n->gpu_hi - n->gpu_lo > maxg) maxg = n->gpu_hi - n->gpu_lo;
            total += n->gpu_hi - n->gpu_lo;
            P->ncell[nd] = gs_cluster_cell(c, n->cell);
            P->ntype[nd] = n->gpu_hi > n->gpu_lo ? gs_cluster_gpu(c, n->gpu_lo)->type : -2;
            for (int g0 = n->gpu_lo; g0 < n->gpu_hi; g0++)
                if (gs_cluster_gpu(c, g0)->type != P->ntype[nd]) P->ntype[nd] = -2;
        }
        P->maxg = maxg;
        P->total = total;
        P->topo = c;
    }
    return 0;
}

static int px_node_arrays(pollux *P)
{
    size_t nn = (size_t)P->nnodes;
    size_t nh = (size_t)P->maxg + 1;
    if (nn <= P->capnodes && nh + nn + 1 <= P->caphist) return 0;
    int32_t **arrs[] = {&P->ntouch, &P->nfree, &P->ndist, &P->ndc, &P->rdn, &P->rdo};
    for (size_t i = 0; i < 6; i++) {
        int32_t *a = realloc(*arrs[i], (nn ? nn : 1) * sizeof *a);
        if (!a) return GS_ENOMEM;
        *arrs[i] = a;
    }
    uint32_t *t = realloc(P->tst, (nn ? nn : 1) * sizeof *t);
    if (!t) return GS_ENOMEM;
    P->tst = t;
    memset(P->tst, 0, (nn ? nn : 1) * sizeof *t);
    P->tstamp = 0;
    P->nntouch = 0;
    P->based = 0;
    int32_t **h[] = {&P->hf, &P->hd, &P->tmp};
    for (size_t i = 0; i < 3; i++) {
        int32_t *a = realloc(*h[i], (nh + nn + 1) * sizeof *a);
        if (!a) return GS_ENOMEM;
        *h[i] = a;
    }
    P->capnodes = nn;
    P->caphist = nh + nn + 1;
    return 0;
}

static double px_restart_factor(const pollux *P, const gs_job *j, gs_time now)
{
    /* event mode decides at arrivals (age 0): a first start is no restart there */
    if (!P->parity && j->generation == 0) return 1.0;
    double age = gs_time_to_sec(now - j->submit);
    if (age < 0) age = 0;
    int restarts = j->generation > 0 ? (int)j->generation - 1 : 0;
    double dl = gs_time_to_sec(P->delay);
    double num = age - restarts * dl;
    if (num < 0) num = 0;
    return age + dl > 0 ? num / (age + dl) : 1.0;
}

static int px_decide(pollux *P);

/* The reason a rescale carries (what the user reads in describe and the records). */
static void px_fmt_reason(char *buf, size_t cap, int from, int to, int n0, int n1, double s0,
                          double s1, double phi, gs_time delay)
{
    double d = gs_time_to_sec(delay);
    if (to == 0)
        snprintf(buf, cap,
                 "pollux: stopped (%d->0 GPUs, speedup %.2f): its GPUs do more for jobs with less "
                 "attained service (power mean)",
                 from, s0);
    else if (to > from)
        snprintf(buf, cap,
                 "pollux: grew %d->%d GPUs: speedup %.2f->%.2f outweighs the %.0f s restart", from,
                 to, s0, s1, d);
    else if (to < from)
        snprintf(buf, cap,
                 "pollux: shrank %d->%d GPUs: speedup %.2f->%.2f; the GPUs do more for others "
                 "(power mean, restart factor %.2f)",
                 from, to, s0, s1, phi);
    else
        snprintf(buf, cap,
                 "pollux: moved %d GPUs from %d to %d nodes: speedup %.2f->%.2f outweighs the %.0f "
                 "s restart",
                 to, n0, n1, s0, s1, d);
}

/* Order a plan's GPU ids: per node keep the job's own GPUs first, then free ones. */
static int px_gpus_reserve(pollux *P, size_t n)
{
    if (n <= P->capgpus) return 0;
    size_t nc = P->capgpus ? P->capgpus : 256;
    while (nc < n) nc *= 2;
    int32_t *a = realloc(P->gpus, nc * sizeof *a);
    if (!a) return GS_ENOMEM;
    P->gpus = a;
    P->capgpus = nc;
    return 0;
}

/* Count (d = +1) or uncount (-1) gpus[0..n) of job 'slot' as distributed per node. */
static void px_dist_mark(pollux *P, const gs_cluster *c, const int32_t *gpus, int n, int slot,
                         int d)
{
    int nd0 = gs_cluster_gpu(c, gpus[0])->node, multi = 0;
    for (int i = 1; i < n && !multi; i++) multi = gs_cluster_gpu(c, gpus[i])->node != nd0;
    if (!multi) return;
    for (int i = 0; i < n; i++) {
        int nd = gs_cluster_gpu(c, gpus[i])->node, dup = 0;
        for (int q = 0; q < i && !dup; q++) dup = gs_cluster_gpu(c, gpus[q])->node == nd;
        if (dup) continue;
        px_touch(P, nd);
        P->rdn[nd] += d;
        if (d > 0) P->rdo[nd] = slot;
    }
}

/* A job's GPUs and reservation as the engine has them. */
static void px_dist_job(pollux *P, const gs_cluster *c, const gs_job *j, int d)
{
    if (j->alloc && j->nalloc > 0) px_dist_mark(P, c, j->alloc, j->nalloc, j->slot, d);
    if (j->state == GS_JOB_DRAINING && j->resv && j->nresv > 0)
        px_dist_mark(P, c, j->resv, j->nresv, j->slot, d);
}

/* Would job 'slot' on gpus[0..n) share a node with another distributed job? */
static int px_dist_blocked(pollux *P, const gs_cluster *c, const int32_t *gpus, int n, int slot)
{
    int nd0 = gs_cluster_gpu(c, gpus[0])->node, multi = 0;
    for (int i = 1; i < n && !multi; i++) multi = gs_cluster_gpu(c, gpus[i])->node != nd0;
    if (!multi) return 0;
    for (int i = 0; i < n; i++) {
        int nd = gs_cluster_gpu(c, gpus[i])->node;
        if (P->rdn[nd] > 1 || (P->rdn[nd] == 1 && P->rdo[nd] != slot)) return 1;
    }
    return 0;
}

/* The job index the plan gives GPU g to, -1. */
static int32_t px_claimed(const pollux *P, int g)
{
    return P->cstamp[g] == P->stamp ? P->claim[g] : -1;
}

static void px_claim(pollux *P, int g, int32_t x)
{
    P->claim[g] = x;
    P->cstamp[g] = P->stamp;
}

/* Apply the plan. */
static int px_act(pollux *P)
{
    gs_engine *e = P->e;
    gs_cluster *c = gs_engine_cluster(e);
    size_t ng = gs_cluster_ngpus(c);
    if (ng > P->capclaim) {
        int32_t *a = realloc(P->claim, ng * sizeof *a);
        if (!a) return GS_ENOMEM;
        P->claim = a;
        uint32_t *b = realloc(P->cstamp, ng * sizeof *b);
        if (!b) return GS_ENOMEM;
        P->cstamp = b;
        for (size_t gi = P->capclaim; gi < ng; gi++) P->cstamp[gi] = 0;
        P->capclaim = ng;
    }
    /* claims: every job keeps its own GPUs on nodes where it keeps replicas (a claim is
     * valid when its stamp is this decision's: no claim otherwise) */
    if (++P->stamp == 0) {
        for (size_t gi = 0; gi < P->capclaim; gi++) P->cstamp[gi] = 0;
        P->stamp = 1;
    }
    for (size_t x = 0; x < P->njobs; x++) {
        px_job *J = &P->jobs[x];
        if (!J->running) continue;
        px_ent *e2 = px_cur(P, (int)x);
        const gs_job *j = J->j;
        for (int i = 0; i < J->n; i++) {
            int keep = e2[i].cnt;
            for (int t = 0; t + J->gpt <= j->nalloc && keep > 0; t += J->gpt) {
                int g0 = j->alloc[t];
                if (gs_cluster_gpu(c, g0)->node != e2[i].node) continue;
                for (int k = 0; k < J->gpt; k++) px_claim(P, j->alloc[t + k], (int32_t)x);
                keep--;
            }
        }
    }
    int rc = px_gpus_reserve(P, (size_t)P->maxg * (size_t)P->max_nodes + 1);
    if (rc) return rc;
    char why[192];
    /* distributed jobs per node as the engine has them now (allocations and reservations):
     * a change is applied only if it keeps at most one there, whatever else is deferred */
    /* (rdn, rdo: 0 and -1 on every node the decision did not touch, px_restore) */
    if (P->avoid) {
        /* every job that may span nodes, in slot order: the candidates and dset */
        size_t di = 0;
        for (size_t x = 0; x <= P->njobs; x++) {
            int32_t s = x < P->njobs ? P->jobs[x].j->slot : INT32_MAX;
            for (; di < P->ndset && P->dset[di] < s; di++)
                px_dist_job(P, c, gs_engine_job(e, (size_t)P->dset[di]), +1);
            if (x < P->njobs) px_dist_job(P, c, P->jobs[x].j, +1);
        }
    }
    for (size_t x = 0; x < P->njobs; x++) P->jgen[x] = 0; /* 1 = applied or given up */
    /* pass 0: stops and shrinks (GPUs a subset of its own); then the rest, in sweeps until
     * nothing more can be applied (a job may need GPUs another one frees later) */
    for (int pass = 0, progress = 1; pass < 2 || progress; pass++) {
        progress = 0;
        for (size_t oi = 0; oi < P->njobs; oi++) {
            int x = P->order[oi];
            px_job *J = &P->jobs[x];
            if (J->fixed || !J->changed || P->jgen[x]) continue;
            const gs_job *j = J->j;
            int shrink = J->running && J->r <= J->br;
            int sub = 1;
            if (J->running) {
                /* new GPUs needed on some node? */
                px_ent *a = px_cur(P, x), *b = px_base(P, x);
                for (int i = 0; i < J->n; i++) {
                    int own = 0;
                    for (int k = 0; k < J->bn; k++)
                        if (b[k].node == a[i].node) own = b[k].cnt;
                    if (a[i].cnt > own) sub = 0;
                }
            } else {
                sub = 0;
            }
            if (pass == 0 && !(shrink && sub)) continue;
            /* build the GPU list */
            int n = 0;
            px_ent *a = px_cur(P, x);
            int ok = 1;
            for (int i = 0; i < J->n && ok; i++) {
                int want = a[i].cnt * J->gpt;
                const gs_node *nd = gs_cluster_node(c, a[i].node);
                /* own GPUs there first */
                for (int t = 0; t < j->nalloc && want > 0 && J->running; t++) {
                    int g0 = j->alloc[t];
                    if (gs_cluster_gpu(c, g0)->node != a[i].node || px_claimed(P, g0) != x)
                        continue;
                    P->gpus[n++] = g0;
                    want--;
                }
                for (int g0 = nd->gpu_lo; g0 < nd->gpu_hi && want > 0; g0++) {
                    const gs_gpu *gp = gs_cluster_gpu(c, g0);
                    if (px_claimed(P, g0) >= 0 || gp->down || gp->owner >= 0) continue;
                    if (j->gpu_type >= 0 && gp->type != j->gpu_type) continue;
                    if (gs_engine_gpu_outside(e, g0)) continue;
                    P->gpus[n++] = g0;
                    want--;
                }
                if (want > 0) ok = 0;
            }
            if (!ok) continue; /* GPUs still held (a drain in progress): next decision */
            int gn = J->r * J->gpt;
            if (P->avoid && gn > 0 && px_dist_blocked(P, c, P->gpus, gn, j->slot)) continue;
            if (P->avoid) px_dist_job(P, c, j, -1);
            double s1 = px_speedup(P, J, J->n, J->r);
            int r2;
            if (!J->running) {
                if (gn == 0) continue;
                r2 = gs_engine_start(e, j, P->gpus, gn);
            } else {
                if (J->rigid) continue; /* (running rigid jobs are pinned) */
                px_fmt_reason(why, sizeof why, j->nalloc, gn, J->bnodes, J->n, J->s0, s1, J->phi,
                              P->delay);
                r2 = gs_engine_rescale(e, j, P->gpus, gn, GS_RESCALE_POLICY, why);
            }
            if (r2 == GS_ENOMEM) return r2;
            if (gs_engine_error(e)) return gs_engine_error(e);
            P->jgen[x] = 1;
            /* the engine's state after the request (j's GPUs and reservation) */
            if (P->avoid) px_dist_job(P, c, j, +1);
            if (r2) continue; /* refused (busy GPU, gap, state): the next decision retries */
            progress = 1;
            for (int i = 0; i < gn; i++) px_claim(P, P->gpus[i], x);
            if (J->r > P->seen_max[j->slot]) P->seen_max[j->slot] = J->r;
        }
    }
    return 0;
}

/* A pinned job's GPUs (a draining one's: its reservation, and its old nodes for the rule)
 * on several nodes keep other distributed jobs off them; x names it in ndist. */
/* Node nd back to base: the cluster's free GPUs now, no distributed job. */
static void px_rebase(pollux *P, int nd)
{
    int f = P->ncell[nd]->free;
    px_hist(P, nd, -1);
    P->totfree += f - P->nfree[nd];
    P->nfree[nd] = f;
    P->ndist[nd] = -1;
    P->ndc[nd] = 0;
    px_hist(P, nd, +1);
}

/* Bring the base node state up to the cluster: every node at first, then the nodes whose free
 * GPUs or health changed since (gs_cluster_changed_nodes; this policy clears the list). */
static void px_sync(pollux *P, gs_cluster *c)
{
    if (!P->based) {
        memset(P->hf, 0, ((size_t)P->maxg + 1) * sizeof *P->hf);
        int tf = 0;
        for (int nd = 0; nd < P->nnodes; nd++) {
            int f = P->ncell[nd]->free;
            P->nfree[nd] = f;
            P->hf[f]++;
            tf += f;
        }
        memcpy(P->hd, P->hf, ((size_t)P->maxg + 1) * sizeof *P->hd);
        memset(P->ndist, 0xff, (size_t)P->nnodes * sizeof *P->ndist); /* -1 */
        memset(P->ndc, 0, (size_t)P->nnodes * sizeof *P->ndc);
        memset(P->rdn, 0, (size_t)P->nnodes * sizeof *P->rdn);
        memset(P->rdo, 0xff, (size_t)P->nnodes * sizeof *P->rdo);
        P->totfree = tf;
        P->based = 1;
    } else {
        const int32_t *ch;
        size_t n = gs_cluster_changed_nodes(c, &ch);
        for (size_t i = 0; i < n; i++)
            if (ch[i] >= 0 && ch[i] < P->nnodes) px_rebase(P, ch[i]);
    }
    gs_cluster_clear_changed(c);
}

/* Every node this decision changed back to base (the acting's distributed counts too). */
static void px_restore(pollux *P)
{
    for (size_t i = 0; i < P->nntouch; i++) {
        int nd = P->ntouch[i];
        px_rebase(P, nd);
        P->rdn[nd] = 0;
        P->rdo[nd] = -1;
    }
    P->nntouch = 0;
}

static void px_mark_dist(pollux *P, int nd, int32_t x)
{
    if (P->ndist[nd] >= 0) return;
    px_touch(P, nd);
    px_hist(P, nd, -1);
    P->ndist[nd] = x;
    px_hist(P, nd, +1);
}

static void px_block(pollux *P, const gs_cluster *c, const gs_job *j, int gpt, int32_t x)
{
    const int32_t *al = j->state == GS_JOB_DRAINING && j->nresv ? j->resv : j->alloc;
    int na = j->state == GS_JOB_DRAINING && j->nresv ? j->nresv : j->nalloc;
    if (!al || na <= 0) return;
    px_ent tmp[64];
    int m = px_group(c, al, na, gpt, tmp, 64);
    if (m > 1)
        for (int i = 0; i < m; i++) {
            px_touch(P, tmp[i].node);
            P->ndc[tmp[i].node]++;
        }
    if (m > 1 && P->avoid)
        for (int i = 0; i < m; i++) px_mark_dist(P, tmp[i].node, x);
    if (j->state == GS_JOB_DRAINING && j->nresv && j->alloc) {
        m = px_group(c, j->alloc, j->nalloc, gpt, tmp, 64);
        if (m > 1 && P->avoid)
            for (int i = 0; i < m; i++) px_mark_dist(P, tmp[i].node, x);
    }
}

static int px_decide1(pollux *P)
{
    gs_engine *e = P->e;
    gs_cluster *c = gs_engine_cluster(e);
    gs_time now = gs_engine_now(e);
    int rc = px_collect(P);
    if (!rc) rc = px_node_arrays(P);
    if (rc) return rc;
    int total = P->total;
    if (total <= 0) return 0;
    /* jobs: the candidates in slot order (the other active jobs are rigid ones holding GPUs:
     * pinned, their cost terms constant - they only take capacity, below) */
    int movable = 0;
    for (size_t i = 0; i < P->ncset; i++) {
        gs_job *j = gs_policy_job(e, (size_t)P->cset[i]);
        px_job *J = &P->jobs[P->njobs];
        memset(J, 0, sizeof *J);
        J->j = j;
        J->gpt = j->gpus_per_task > 0 ? j->gpus_per_task : 1;
        J->rigid = j->max_gpus <= 0;
        J->running = j->state == GS_JOB_RUNNING;
        J->key_as = gs_job_service(j, now);
        if (j->state == GS_JOB_DRAINING || j->state == GS_JOB_PREEMPTED ||
            j->state == GS_JOB_SUSPENDED)
            J->fixed = 1;
        else if (J->running && J->rigid)
            J->fixed = 1;
        else if (J->running) {
            gs_time at = gs_engine_rescale_allowed_at(e, j);
            if (at == GS_TIME_NONE || at > now) J->fixed = 1;
        }
        if (j->state == GS_JOB_SUSPENDED) {
            /* holds no GPUs and is not ours to resume */
            P->njobs++;
            J->fixed = 1;
            continue;
        }
        movable += !J->fixed;
        P->njobs++;
    }
    size_t J0 = P->njobs;
    /* nothing may move: the search and the acting would change nothing */
    if (!J0 || !movable) return 0;
    /* scratch row for placements, heap gens */
    rc = px_ents_reserve(P, J0 + 1);
    if (rc) return rc;
    for (size_t x = 0; x < J0; x++) P->jgen[x] = 0;
    /* caps, factors, scales */
    double share1 = 1.0 / (double)total;
    for (size_t x = 0; x < J0; x++) {
        px_job *J = &P->jobs[x];
        gs_job *j = J->j;
        if (J->rigid) {
            J->rmin = J->rmax = j->ntasks;
        } else {
            int lo = j->min_gpus > J->gpt ? j->min_gpus : J->gpt;
            J->rmin = (lo + J->gpt - 1) / J->gpt;
            int prof =
                px_model(P, j) ? gs_goodput_max_profiled(P->g, j) / J->gpt : P->seen_max[j->slot];
            if (J->running && j->nalloc / J->gpt > prof && !px_model(P, j))
                prof = j->nalloc / J->gpt;
            int rmax = 2 * prof > 1 ? 2 * prof : 1;
            /* the exploration bound never below the job's smallest size: a job of min_gpus 4
             * never seen running (prof 0) would otherwise be capped at 1 replica, a size it
             * does not have, and wait for ever */
            if (rmax < J->rmin) rmax = J->rmin;
            if (rmax > P->max_replicas) rmax = P->max_replicas;
            if (px_model(P, j)) {
                const gs_app_spec *as = gs_goodput_job_app(P->g, j);
                if (as && as->min_local_bsz > 0 && as->max_batch > 0) {
                    int64_t b = as->max_batch / as->min_local_bsz;
                    if (b < rmax) rmax = (int)b;
                }
            }
            if (j->max_gpus / J->gpt < rmax) rmax = j->max_gpus / J->gpt;
            if (px_in(P->single_apps, P->nsingle, j->app)) rmax = 1;
            if (rmax < 1) rmax = 1;
            J->rmax = rmax;
            if (J->rmin > J->rmax) J->rmin = J->rmax; /* only 0 or rmin is then valid */
        }
        J->phi = px_restart_factor(P, j, now);
    }
    /* job order */
    px_okey *ok = malloc(J0 * sizeof *ok);
    if (!ok) return GS_ENOMEM;
    for (size_t x = 0; x < J0; x++) {
        const px_job *J = &P->jobs[x];
        ok[x] = (px_okey){J->fixed, (int32_t)x, J->key_as, J->j->submit, J->j->id};
    }
    qsort(ok, J0, sizeof *ok, px_cmp_order);
    for (size_t i = 0; i < J0; i++) P->order[i] = ok[i].x;
    free(ok);
    /* node capacity: healthy GPUs free or held by movable jobs.  A node cell's 'free' counts
     * the GPUs no job holds that are not down; a GPU given to outside work is down and held by
     * no job (the engine's invariant, gs_engine_check).  The node state is kept between
     * decisions at base (px_sync: only the nodes the cluster lists as changed are re-read);
     * what this decision changes is restored at its end (px_restore) */
    px_sync(P, c);
    if (++P->tstamp == 0) {
        memset(P->tst, 0, (size_t)P->nnodes * sizeof *P->tst);
        P->tstamp = 1;
    }
    P->nntouch = 0;
    for (size_t x = 0; x < J0; x++) {
        const px_job *J = &P->jobs[x];
        if (!J->running || J->fixed) continue;
        const gs_job *j = J->j;
        for (int i = 0; i < j->nalloc; i++) {
            int g0 = j->alloc[i];
            const gs_gpu *gp = gs_cluster_gpu(c, g0);
            if (gp->owner == j->slot && !gp->down && !gs_engine_gpu_outside(e, g0)) {
                px_touch(P, gp->node);
                px_hist(P, gp->node, -1);
                P->nfree[gp->node]++;
                px_hist(P, gp->node, +1);
                P->totfree++;
            }
        }
    }
    /* fixed distributed jobs block their nodes for other distributed jobs */
    for (size_t x = 0; x < J0; x++)
        if (P->jobs[x].fixed) px_block(P, c, P->jobs[x].j, P->jobs[x].gpt, (int32_t)x);
    for (size_t i = 0; i < P->ndset; i++) {
        const gs_job *j = gs_engine_job(e, (size_t)P->dset[i]);
        px_block(P, c, j, j->gpus_per_task > 0 ? j->gpus_per_task : 1, INT32_MAX);
    }
    /* fair-share base and scales */
    int nact = (int)P->nactive;
    for (size_t x = 0; x < J0; x++) {
        px_job *J = &P->jobs[x];
        double share = share1 * J->gpt;
        double base = 1.0;
        if (P->base_fair) {
            int fr = (int)ceil(1.0 / share / nact - 1e-9);
            int fn = (int)ceil(P->nnodes * share - 1e-9);
            if (fr < 1) fr = 1;
            if (fn < 1) fn = 1;
            if (fn > fr) fn = fr;
            base = px_speedup(P, J, fn, fr);
            if (!(base > 0)) base = 1.0;
        }
        J->scale = share * P->nnodes / base;
    }
    /* seed: current allocations, repaired in job order */
    P->nulog = 0;
    for (size_t oi = 0; oi < J0; oi++) {
        int x = P->order[oi];
        px_job *J = &P->jobs[x];
        const gs_job *j = J->j;
        J->n = J->r = J->bn = J->br = 0;
        J->changed = 0;
        if (J->running && !J->fixed && j->alloc && j->nalloc > 0) {
            int m = px_group(c, j->alloc, j->nalloc, J->gpt, px_base(P, x), P->max_nodes);
            if (m < 0) {
                /* more nodes than max_nodes (started by someone else): keep the first ones */
                px_ent tmp[256];
                m = px_group(c, j->alloc, j->nalloc, J->gpt, tmp, 256);
                if (m < 0) m = 0;
                if (m > P->max_nodes) {
                    memcpy(px_base(P, x), tmp, (size_t)P->max_nodes * sizeof *tmp);
                    J->bn = P->max_nodes; /* the base (for 'changed') is the true one: differs */
                    J->br = -1;
                } else {
                    memcpy(px_base(P, x), tmp, (size_t)m * sizeof *tmp);
                    J->bn = m;
                }
            } else {
                J->bn = m;
            }
            if (J->br == 0)
                for (int i = 0; i < J->bn; i++) J->br += px_base(P, x)[i].cnt;
            int bnodes = J->bn;
            J->bnodes = bnodes;
            J->s0 = px_speedup(P, J, bnodes, J->br > 0 ? J->br : 0);
            /* repair: caps, node limit, one distributed job per node, capacity */
            px_ent *cur = px_cur(P, x);
            int n = J->bn > P->max_nodes ? P->max_nodes : J->bn;
            memcpy(cur, px_base(P, x), (size_t)n * sizeof *cur);
            int r = 0;
            for (int i = 0; i < n; i++) r += cur[i].cnt;
            /* replica cap: drop from the nodes with fewest */
            while (r > J->rmax && n > 0) {
                int m2 = 0;
                for (int i = 1; i < n; i++)
                    if (cur[i].cnt < cur[m2].cnt) m2 = i;
                int t = cur[m2].cnt < r - J->rmax ? cur[m2].cnt : r - J->rmax;
                cur[m2].cnt -= t;
                r -= t;
                if (!cur[m2].cnt) cur[m2] = cur[--n];
            }
            int k = 0;
            for (int i = 0; i < n; i++) {
                int nd = cur[i].node;
                if (n > 1 && P->avoid && P->ndist[nd] >= 0) continue;
                int a = P->nfree[nd] / J->gpt;
                int t = cur[i].cnt < a ? cur[i].cnt : a;
                if (t <= 0) continue;
                cur[k].node = nd;
                cur[k].cnt = t;
                k++;
            }
            r = 0;
            for (int i = 0; i < k; i++) r += cur[i].cnt;
            while (r > 0 && !px_size_ok(J, r)) {
                /* shrink to the next valid size below */
                int m2 = 0;
                for (int i = 1; i < k; i++)
                    if (cur[i].cnt < cur[m2].cnt) m2 = i;
                cur[m2].cnt--;
                r--;
                if (!cur[m2].cnt) cur[m2] = cur[--k];
            }
            J->n = r > 0 ? k : 0;
            J->r = r;
            px_apply(P, x, +1);
        } else if (J->running && J->fixed) {
            J->br = J->r = 0;
        }
        J->changed = J->running && !J->fixed ? (int8_t)!px_same_as_base(P, x) : 0;
        J->cost = J->fixed ? 0 : px_cost(P, J, J->n, J->r, J->changed);
    }
    /* fixed jobs' GPUs were never in the capacity; their terms are constants */
    P->nulog = 0;
    rc = px_fill(P, NULL, 0);
    if (!rc) rc = px_compact(P);
    if (rc) return rc;
    /* exchange: one donor at a time */
    int trials = 0, fails = 0;
    int32_t *recv = NULL;
    size_t nrecv_cap = 32;
    recv = malloc(nrecv_cap * sizeof *recv);
    if (!recv) return GS_ENOMEM;
    px_ent *pl = P->cur + (size_t)J0 * (size_t)P->max_nodes;
    int improved = 1;
    while (improved && trials < P->budget) {
        improved = 0;
        /* receivers: jobs with the largest gain per GPU if GPUs were free */
        /* rank candidates by the gain of their next size on an idle node set */
        size_t nr = 0;
        double rs[32];
        for (size_t oi = 0; oi < J0; oi++) {
            int x = P->order[oi];
            px_job *J = &P->jobs[x];
            if (J->fixed || J->r >= J->rmax) continue;
            int rn = J->r + 1;
            while (rn <= J->rmax && !px_size_ok(J, rn)) rn++;
            if (rn > J->rmax) continue;
            int nodes = (rn * J->gpt + P->maxg - 1) / P->maxg;
            if (nodes < 1) nodes = 1;
            if (J->n > nodes) nodes = J->n;
            if (nodes > P->max_nodes) continue;
            double s = (J->cost - px_cost(P, J, nodes, rn, 1)) / (double)((rn - J->r) * J->gpt);
            if (!(s > 0)) continue;
            /* keep the top 32 by s (stable: earlier in job order wins ties) */
            size_t pos = nr;
            while (pos > 0 && rs[pos - 1] < s) pos--;
            if (pos >= 32) continue;
            size_t end = nr < 32 ? nr : 31;
            memmove(&recv[pos + 1], &recv[pos], (end - pos) * sizeof *recv);
            memmove(&rs[pos + 1], &rs[pos], (end - pos) * sizeof *rs);
            recv[pos] = x;
            rs[pos] = s;
            if (nr < 32) nr++;
        }
        if (!nr) break;
        double best_gain = rs[0];
        /* donors: smallest loss per GPU freed, each tried once per round */
        fails = 0;
        for (size_t oi = J0; oi-- > 0 && trials < P->budget && fails < 24;) {
            /* walk donors from the end of the job order (most attained service) */
            int d = P->order[oi];
            px_job *D = &P->jobs[d];
            if (D->fixed || D->r <= 0) continue;
            int is_recv = 0;
            for (size_t i = 0; i < nr; i++) is_recv |= recv[i] == d;
            /* best shrink: loss per GPU freed */
            double bl = INFINITY;
            int brn = -1;
            for (int rn = D->r - 1; rn >= 0; rn--) {
                if (!px_size_ok(D, rn)) continue;
                int m = px_place(P, d, rn, pl);
                int nodes = m;
                double cst = px_cost(P, D, nodes, rn, 1);
                double l = (cst - D->cost) / (double)((D->r - rn) * D->gpt);
                if (l < bl) bl = l, brn = rn;
                if (D->r - rn >= P->maxg) break;
            }
            if (brn < 0 || !(bl < best_gain)) continue;
            trials++;
            double before = 0;
            for (size_t x = 0; x < J0; x++) before += P->jobs[x].cost;
            size_t mark = P->nulog;
            int m = px_place(P, d, brn, pl);
            rc = px_set(P, d, pl, brn ? m : 0);
            if (rc) break;
            /* refill with the receivers (not the donor) */
            size_t k = 0;
            for (size_t i = 0; i < nr; i++)
                if (recv[i] != d) recv[k++] = recv[i];
            rc = px_fill(P, recv, k);
            if (k < nr) recv[k] = d, k++; /* restore the list size (order is irrelevant) */
            (void)is_recv;
            if (rc) break;
            double after = 0;
            for (size_t x = 0; x < J0; x++) after += P->jobs[x].cost;
            if (after < before - 1e-12 * (before > 0 ? before : 1)) {
                improved = 1;
                fails = 0;
                P->nulog = 0; /* commit */
                break;        /* recompute receivers */
            }
            px_undo(P, mark);
            fails++;
        }
        if (rc) break;
        if (improved) {
            /* spend any GPUs a commit left free */
            rc = px_fill(P, NULL, 0);
            if (rc) break;
            P->nulog = 0;
        }
    }
    free(recv);
    if (!rc) rc = px_compact(P);
    if (!rc) rc = px_fill(P, NULL, 0);
    if (rc) return rc;
    P->nulog = 0;
    P->decisions++;
    return px_act(P);
}

static int px_decide(pollux *P)
{
    int rc = px_decide1(P);
    px_restore(P);
    return rc;
}

/* ---- hooks ---------------------------------------------------------------------------------- */

static int px_arm(pollux *P)
{
    if (P->timer_armed) return 0;
    gs_time now = gs_engine_now(P->e);
    gs_time next = (now / P->interval + 1) * P->interval;
    int rc = gs_engine_set_timer(P->e, next, 1);
    if (!rc) P->timer_armed = 1;
    return rc == GS_ENOMEM ? rc : 0;
}

static int px_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    pollux *P = calloc(1, sizeof *P);
    if (!P) return GS_ENOMEM;
    P->e = e;
    int rc = px_params(P, p, d);
    if (rc) {
        free_strs(P->single_apps, P->nsingle);
        for (size_t i = 0; i < P->nfixed; i++) free(P->fixed_apps[i]);
        free(P->fixed_apps);
        free(P->fixed_batch);
        free(P);
        return rc;
    }
    gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = P;
    return 0;
}

static void px_destroy(void *st)
{
    pollux *P = st;
    if (!P) return;
    free(P->seen_max);
    free(P->sflag);
    free(P->cset);
    free(P->dset);
    free(P->ncell);
    free(P->cstamp);
    free(P->jobs);
    free(P->order);
    free(P->cur);
    free(P->base);
    free(P->ntouch);
    free(P->tst);
    free(P->nfree);
    free(P->ntype);
    free(P->ndist);
    free(P->ndc);
    free(P->rdn);
    free(P->rdo);
    free(P->hf);
    free(P->hd);
    free(P->tmp);
    free(P->jgen);
    free(P->heap);
    free(P->ulog_x);
    free(P->ulog_e);
    free(P->ulog_meta);
    free(P->ulog_cost);
    free(P->gpus);
    free(P->claim);
    free_strs(P->single_apps, P->nsingle);
    for (size_t i = 0; i < P->nfixed; i++) free(P->fixed_apps[i]);
    free(P->fixed_apps);
    free(P->fixed_batch);
    free(P);
}

static int px_event(void *st, gs_job *j)
{
    pollux *P = st;
    (void)j;
    P->dirty = 1;
    /* event mode: decide at this instant (the engine runs a pass unasked only while jobs wait) */
    if (!P->parity) gs_engine_request_pass(P->e);
    P->g = gs_goodput_of(P->e);
    int rc = px_track(P, j);
    if (rc) return rc;
    return px_arm(P);
}

static int px_arrival(void *st, gs_job *j)
{
    pollux *P = st;
    P->g = gs_goodput_of(P->e);
    if (P->g && j->app) {
        for (size_t i = 0; i < P->nfixed; i++)
            if (!strcmp(P->fixed_apps[i], j->app)) {
                int rc = gs_goodput_set_batch_mode(P->g, j, GS_BATCH_FIXED, P->fixed_batch[i]);
                if (rc == GS_ENOMEM) return rc;
            }
    }
    gs_time now = gs_engine_now(P->e);
    if (P->parity && now > 0 && now % P->interval == 0) P->tick = 1; /* the artifact: k >= 1 */
    return px_event(st, j);
}

static int px_finish(void *st, gs_job *j)
{
    pollux *P = st;
    P->dirty = 1;
    /* it leaves both sets at the next decision (px_prune) */
    if (j && j->slot >= 0 && (size_t)j->slot < P->cap) {
        uint8_t *f = &P->sflag[j->slot];
        if (*f & PX_ACT) P->nactive--;
        *f &= (uint8_t) ~(PX_ACT | PX_INC | PX_IND);
    }
    if (!P->parity) gs_engine_request_pass(P->e); /* the survivors may grow now */
    return 0;
}

static int px_node(void *st, int node, int down)
{
    (void)node;
    (void)down;
    return px_event(st, NULL);
}

static int px_timer(void *st, uint64_t tag)
{
    pollux *P = st;
    (void)tag;
    P->timer_armed = 0;
    P->tick = 1;
    gs_engine_request_pass(P->e);
    /* re-arm while any job is active */
    return P->nactive ? px_arm(P) : 0;
}

static int px_schedule(void *st)
{
    pollux *P = st;
    P->g = gs_goodput_of(P->e);
    int due = P->tick || (!P->parity && P->dirty);
    if (!due) return 0;
    P->tick = 0;
    P->dirty = 0;
    return px_decide(P);
}

static int px_check(void *st, gs_diag *d)
{
    pollux *P = st;
    if (P->interval <= 0) return gs_diag_set(d, GS_EINTERNAL, 0, 0, "pollux: bad interval");
    /* out of memory while putting a job in the sets: the engine has latched GS_ENOMEM and
     * steps no more, and that job is in no set (as after a partial reconfiguration, the
     * engine's own check leaves such a policy alone) */
    if (P->partial) return 0;
    /* the kept sets against a full walk: every active job counted; every one a decision may
     * move (pending or elastic) a candidate; every other one spanning nodes in dset */
    const gs_cluster *c = gs_engine_cluster(P->e);
    size_t nj = gs_engine_njobs(P->e), k = 0;
    for (size_t s = 0; s < nj; s++) {
        const gs_job *j = gs_engine_job(P->e, s);
        if (!j->arrived || j->deferred || gs_job_state_final(j->state)) continue;
        k++;
        uint8_t f = s < P->cap ? P->sflag[s] : 0;
        if (!(f & PX_ACT))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "pollux: active job %lld not counted",
                               (long long)j->id);
        if ((j->max_gpus > 0 || j->state == GS_JOB_PENDING) && !(f & PX_INC))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "pollux: job %lld is not a candidate",
                               (long long)j->id);
        if (!(f & (PX_INC | PX_IND)) && px_multi(c, j))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "pollux: job %lld spans nodes but is in no set", (long long)j->id);
    }
    if (k != P->nactive)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "pollux: %zu active jobs, counted %zu", k,
                           P->nactive);
    /* the node state at base: each node's free GPUs as the cluster has them unless it is
     * listed as changed since, no distributed job, histograms and total matching */
    if (!P->based || P->topo != c) return 0;
    const int32_t *ch;
    size_t nch = gs_cluster_changed_nodes(c, &ch);
    int tf = 0;
    for (int nd = 0; nd < P->nnodes; nd++) {
        int listed = 0;
        for (size_t i = 0; i < nch && !listed; i++) listed = ch[i] == nd;
        if ((!listed && P->nfree[nd] != P->ncell[nd]->free) || P->ndist[nd] != -1 ||
            P->ndc[nd] != 0 || P->rdn[nd] != 0 || P->rdo[nd] != -1)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "pollux: node %d: kept %d free GPUs (the cluster: %d), "
                               "distributed %d/%d/%d/%d",
                               nd, P->nfree[nd], P->ncell[nd]->free, P->ndist[nd], P->ndc[nd],
                               P->rdn[nd], P->rdo[nd]);
        tf += P->nfree[nd];
    }
    for (int f = 0; f <= P->maxg; f++) {
        int cnt = 0;
        for (int nd = 0; nd < P->nnodes; nd++) cnt += P->nfree[nd] == f;
        if (P->hf[f] != cnt || P->hd[f] != cnt)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "pollux: %d nodes with %d free GPUs, kept %d and %d", cnt, f,
                               P->hf[f], P->hd[f]);
    }
    if (tf != P->totfree)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "pollux: %d free GPUs, kept %d", tf, P->totfree);
    return 0;
}

static const gs_policy_ops gs_policy_pollux = {
    .name = "pollux",
    .summary = "Pollux: elastic GPU counts by goodput (power mean p=-1 of restart-discounted "
               "speedups), deterministic search",
    .flags = 0, /* it stops elastic jobs by rescaling them to 0, never by gs_engine_preempt */
    .create = px_create,
    .destroy = px_destroy,
    .on_arrival = px_arrival,
    .on_adopt = px_event,
    .on_requeue = px_event,
    .on_finish = px_finish,
    .on_node = px_node,
    .on_timer = px_timer,
    .schedule = px_schedule,
    .check = px_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_pollux[] = {{130, &gs_policy_pollux}, {0, NULL}};
