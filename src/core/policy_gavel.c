/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_gavel.c - Gavel (OSDI'20): heterogeneity-aware allocations solved as LPs
 * (gavel_lp.c, through the program's solver) and carried out by Gavel's round-based
 * mechanism (algorithms.md §5.4).
 *
 * Allocation X[e][k]: the fraction of time entry e (a job alone, or a pair of jobs
 * co-located with pack=on) should run on GPU type k, from the objective's LP
 * (objective=las|ftf|makespan|throughput, or fifo without an LP) over the
 * throughputs of the active jobs (gs_engine_job_rate per type at the requested
 * size; hetero=agnostic: every type at the reference type's rate).
 *
 * Mechanism, one round (round=360 s) at a time:
 *   - time received: each entry that ran the last round gets the round's length on
 *     its type (time_received[e][k], and the type's total); an entry whose job
 *     finished in the round is gone (as in Gavel);
 *   - X is recomputed when jobs arrived or finished since the last solve (parity=on:
 *     only inside a counter reset, i.e. at most once per reset=1920 s, Gavel's
 *     simulator quirk); the counters are reset when X changed and reset= elapsed:
 *     deficit += X * (now - last reset) - (received - round/2), received = round/2;
 *   - priorities: per type, X / (received / type total) (X * 1e9 while the type has
 *     no time yet), 0 when X or the throughput is 0; entries sorted by (priority,
 *     deficit, X) descending, per type in type order (fastest first; shuffled per
 *     round by the engine's seed for hetero=agnostic, as Gavel shuffles), and taken
 *     greedily while their GPUs fit the type's remaining count (fifo: priority > 0);
 *     each type's candidates sit in a heap and are ranked only as far as the choices
 *     need (blk_next: until the type's GPUs left fit none of them or every job is
 *     chosen), which gives the order a full sort would;
 *   - placement per type, largest jobs first: a job chosen again on the type it runs
 *     on keeps its GPUs (a lease extension: no restart), others are preempted and
 *     the chosen ones started on free GPUs of the type (engine placement, any
 *     locality); a pair packs its second job onto the first (gs_engine_pack, pair
 *     rates from the profiles); a start that fragmentation prevents is skipped and
 *     the GPUs offered to the next entries in order (work-conserving);
 *   - the round ends after round= or as soon as every job it runs has finished;
 *     with no round running, an arrival starts one at once.
 * When every active job fits the first type in type order (no pairs, not fifo: the common
 * case of a cluster that is not full), the selection chooses them all whatever the ranks, and
 * a round (fast_round) only ranks and starts the jobs not running there, knowing which run
 * from a cache of each job's type (run_k, checked against the cluster's per-type counts
 * every such round and rebuilt from the jobs when they disagree): the same decisions in the
 * same order as the general path.  Max-min fairness and total throughput keep the classes of
 * equal jobs across solves (class_solve: only new arrivals are classified; the LP over the
 * classes is the one gavel_lp.c builds from all jobs) and each job's allocation stays its
 * class's row (ent_x).
 * Jobs progress at the engine's rates on the type they run on (no policy model); a job
 * without a program model has fixed rates, looked up once at its arrival ('rates').
 * A job larger than every GPU type it may use is rejected on arrival (gv_rejects): Gavel
 * places a job on one type only.
 *
 * Invariants: the active set (jobs with gjs.active) is exactly the arrived, non-final
 * jobs, each with one single entry; the list 'act' holds them in arrival order, plus jobs
 * finished since the round began (dropped at the next round, so a finish costs O(1)); pair entries
 * only join two active jobs of equal size; a job is in at most one entry chosen per round; every
 * decision is a function of the engine's state, the clock and the seed (sorts have total orders);
 * sumgpus, nunrated, nrunok[] and each class's count are sums over the active jobs (kept by
 * add_active and gv_finish); usedc[] and nrun over the jobs the cache says run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gavel_lp.h"
#include "gsched/policy.h"
#include "gsched/types.h"

enum { OBJ_LAS, OBJ_FTF, OBJ_MAKESPAN, OBJ_THROUGHPUT, OBJ_FIFO };
static const char *const obj_names[] = {"las", "ftf", "makespan", "throughput", "fifo"};

typedef struct gent {
    int32_t a, b;  /* job slots; b = -1 for a job alone */
    int32_t dead;  /* a member finished: dropped at the next compaction */
    int32_t own;   /* x (with recv and defic) is its own allocation (a pair's), else its job's
                    * block in vchunks */
    double *x;     /* K: allocation */
    double *recv;  /* K: time received since the last reset, seconds */
    double *defic; /* K: deficit */
} gent;

typedef struct gjs {
    int32_t active;  /* arrived and not final */
    int32_t ent;     /* index of its single entry */
    int32_t fifo_k;  /* fifo: the type it was given, -1 */
    int32_t sched;   /* this round: index in 'cand' of its chosen entry, -1 */
    int32_t keep;    /* this round: keeps its GPUs */
    int32_t rated;   /* its rates are in 'rates' (a job without a program model) */
    int32_t gpus;    /* its requested GPUs (req_gpus, fixed) */
    int32_t run_k;   /* the type it runs on, -1 none: kept by start_on, pack and the hooks */
    int32_t held;    /* GPUs it holds while run_k >= 0 */
    int32_t gcls;    /* its class of equal jobs (gcl), -1 none */
    int64_t seq;     /* its arrival number: 'act' is in this order */
    double s_prev;   /* ftf: remaining work at the last solve (s), < 0 none */
    double iso_prev; /* ftf: isolated throughput at the last solve */
    double iso_cum;  /* ftf: T_iso_cum */
} gjs;

typedef struct cand {
    int32_t e, k;
    double prio, defic, x;
} cand;

/* One type's candidates: cands[start, start + ranked) in rank order, the rest in
 * heap[start, start + nheap) as a heap; 'minsz' is the fewest GPUs any of them needs. */
typedef struct blk {
    size_t start, ranked, nheap;
    int minsz;
} blk;

typedef struct sel {
    int32_t sz, i; /* GPUs, index in cands */
} sel;

/* A class of equal jobs (size, weight and LP throughputs bit for bit, as gavel_lp.c merges
 * them) among the active ones, kept across solves; its members in arrival order from qh
 * (those that finished are dropped when they reach the front). */
typedef struct clmem {
    int32_t slot;
    int64_t seq;
} clmem;

typedef struct gcl {
    int32_t scale;
    double weight;
    int64_t count; /* active members */
    clmem *q;
    size_t qh, qn, qcap;
} gcl;

typedef struct gavel {
    gs_engine *e;
    gs_cluster *c;
    int K;
    int objective, agnostic, pack, parity, partners;
    gs_time round, reset_every;
    gs_rng rng;
    /* jobs */
    gjs *js;
    size_t njs;
    double *rates; /* njs x (K + 1): per slot, gs_engine_job_rate on each type at the requested
                    * size (clamped at 0), then on the reference type; valid when 'rated' */
    int32_t *act;  /* active slots in arrival order */
    size_t nact, capact;
    /* entries */
    gent *ents;
    size_t nents, capents;
    size_t ndead;     /* entries marked dead, not compacted yet */
    double **vchunks; /* the single entries' x, recv and defic (3K each), per job slot in
                       * chunks of VCHUNK slots (never moved: entries point into them) */
    size_t nvchunks;
    /* mechanism state */
    double *wtime; /* K: total time received per type since the last reset */
    int stale, x_changed, due, in_round, ever_reset;
    gs_time last_reset, round_start;
    uint64_t round_tag;
    int32_t *ran_e, *ran_k; /* entries run this round and their types */
    size_t nran, capran;
    uint64_t rounds, solves;
    /* scratch */
    cand *cands; /* this round's candidates: a block per type in type order, each
                  * block's prefix in rank order (popped from its heap as far as needed) */
    cand *heap;  /* per block, the candidates not yet ranked: a binary heap (cmp_cand) */
    size_t capcands, capheap;
    blk *blks; /* K: the blocks */
    sel *sels; /* chosen candidates, for the starts */
    size_t capsels;
    size_t unsched; /* this round: active jobs not chosen (sched < 0) */
    /* sums over the active jobs, kept by add_active and gv_finish (what fast_round needs to
     * know that every job fits, without visiting them) */
    int64_t sumgpus;  /* their requested GPUs */
    int64_t nunrated; /* those whose rates are looked up live (no 'rates') */
    int64_t *nrunok;  /* K: those (rated) that can run on type k */
    int64_t *usedc;   /* K: GPUs held per type by the running ones (run_k, held) */
    int64_t nrun;     /* how many run (run_k >= 0) */
    struct wcand *wl; /* fast_round: the jobs not running on its type */
    size_t capwl;
    int64_t seq; /* the next arrival number */
    /* classes of equal jobs (class_solve): valid while clok, for the healthy GPUs clngpus */
    int clok;
    double *clngpus, *clrow; /* K, K (scratch) */
    gcl *cls;
    size_t ncls, capcls;
    double *clt;    /* ncls x K: the classes' LP throughputs */
    int32_t *cltab; /* open addressing over the classes (-1 empty) */
    size_t captab;
    clmem *newq; /* jobs arrived since the last class_solve */
    size_t nnew, capnew;
    struct clfirst *clord; /* scratch: the active classes in order of their first member */
    double *clx;           /* scratch: their allocation */
    int32_t *clsc;         /* scratch: their sizes */
    double *clw;           /* scratch: their weights */
    int *clcount;          /* scratch: their counts */
    double *cltp;          /* scratch: their throughputs */
    size_t capord;
    /* where the entries' allocations are: xcls = 0, in each entry's x; xcls = 1 (after a
     * class_solve), a job arrived before it (seq < xseq) has its class's row gx[gcls], a later
     * one zero */
    int xcls;
    int64_t xseq;
    double *gx, *zero; /* capcls x K, K */
    int32_t *order;    /* type order */
    double *typerate;
} gavel;

static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * sz);
    if (!q) return GS_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

static gs_job *job(gavel *g, int32_t slot)
{
    return gs_policy_job(g->e, (size_t)slot);
}

/* ---- entries ---------------------------------------------------------------- */

enum { VCHUNK = 4096 };

/* The 3K doubles of slot's single entry (its job's: a job has one), NULL out of memory. */
static double *slot_vec(gavel *g, int32_t slot)
{
    size_t c = (size_t)slot / VCHUNK, per = (size_t)g->K * 3;
    if (c >= g->nvchunks) {
        size_t n = g->nvchunks ? 2 * g->nvchunks : 16;
        while (n <= c) n *= 2;
        double **q = realloc(g->vchunks, n * sizeof *q);
        if (!q) return NULL;
        memset(q + g->nvchunks, 0, (n - g->nvchunks) * sizeof *q);
        g->vchunks = q;
        g->nvchunks = n;
    }
    if (!g->vchunks[c] && !(g->vchunks[c] = malloc(VCHUNK * per * sizeof **g->vchunks)))
        return NULL;
    return g->vchunks[c] + (size_t)slot % VCHUNK * per;
}

/* Mark entry i dead (dropped at a later compaction). */
static void ent_kill(gavel *g, size_t i)
{
    if (g->ents[i].dead) return;
    g->ents[i].dead = 1;
    g->ndead++;
}

/* The allocation of entry en (K entries; see xcls). */
static const double *ent_x(const gavel *g, const gent *en)
{
    if (!g->xcls || en->b >= 0) return en->x;
    const gjs *s = &g->js[en->a];
    return s->seq < g->xseq && s->gcls >= 0 ? g->gx + (size_t)s->gcls * (size_t)g->K : g->zero;
}

static int ent_new(gavel *g, int32_t a, int32_t b, int32_t *out)
{
    if (grow((void **)&g->ents, &g->capents, g->nents + 1, sizeof *g->ents)) return GS_ENOMEM;
    double *v = b < 0 ? slot_vec(g, a) : calloc((size_t)g->K * 3, sizeof *v);
    if (!v) return GS_ENOMEM;
    if (b < 0) memset(v, 0, (size_t)g->K * 3 * sizeof *v);
    gent *en = &g->ents[g->nents];
    memset(en, 0, sizeof *en);
    en->own = b >= 0;
    en->a = a, en->b = b;
    en->x = v, en->recv = v + g->K, en->defic = v + 2 * g->K;
    *out = (int32_t)g->nents++;
    return 0;
}

/* Drop dead entries, keeping the order; job -> single entry links follow. */
static void ent_compact(gavel *g)
{
    size_t w = 0;
    for (size_t i = 0; i < g->nents; i++) {
        gent *en = &g->ents[i];
        if (en->dead) {
            if (en->own) free(en->x);
            continue;
        }
        g->ents[w] = *en;
        if (en->b < 0) g->js[en->a].ent = (int32_t)w;
        w++;
    }
    g->nents = w;
    g->ndead = 0;
}

static int ensure_js(gavel *g, int32_t slot)
{
    size_t need = (size_t)slot + 1;
    if (need <= g->njs) return 0;
    size_t n = g->njs ? g->njs : 64;
    while (n < need) n *= 2;
    gjs *q = realloc(g->js, n * sizeof *q);
    if (!q) return GS_ENOMEM;
    memset(q + g->njs, 0, (n - g->njs) * sizeof *q);
    g->js = q;
    double *r = realloc(g->rates, n * (size_t)(g->K + 1) * sizeof *r);
    if (!r) return GS_ENOMEM; /* js grown, njs not: the next call grows rates again */
    g->rates = r;
    g->njs = n;
    return 0;
}

/* ---- throughputs ------------------------------------------------------------ */

static int gpu_free(const gs_cluster *c, int i)
{
    const gs_gpu *u = gs_cluster_gpu(c, i);
    return u->owner < 0 && u->users == 0 && !u->down && !gs_cluster_node(c, u->node)->down;
}

/* Healthy GPUs per type (n[K]); free ones too when fr != NULL: a walk over every GPU (what
 * type_counts must equal; gv_check compares them). */
static void type_counts_scan(gavel *g, double *n, int *fr)
{
    for (int k = 0; k < g->K; k++) {
        n[k] = 0;
        if (fr) fr[k] = 0;
    }
    size_t ng = gs_cluster_ngpus(g->c);
    for (size_t i = 0; i < ng; i++) {
        const gs_gpu *u = gs_cluster_gpu(g->c, (int)i);
        if (u->down || gs_cluster_node(g->c, u->node)->down || u->type < 0 || u->type >= g->K)
            continue;
        n[u->type] += 1;
        if (fr && gpu_free(g->c, (int)i)) fr[u->type]++;
    }
}

/* Adds the cluster's aggregates of cell ci's subtree: a cell whose GPUs are all of one type
 * counts as a whole (its 'healthy' and 'free': a down node's GPUs are down, an owned GPU has
 * a user), a mixed one through its children. */
static void type_walk(gavel *g, int ci, double *n, int *fr)
{
    const gs_cell *cl = gs_cluster_cell(g->c, ci);
    uint32_t m = cl->gpu_types;
    if (!m) return; /* GPUs without a type */
    if (!(m & (m - 1))) {
        int k = 0;
        while (!(m & 1u)) m >>= 1, k++;
        if (k >= g->K) return;
        n[k] += cl->healthy;
        if (fr) fr[k] += cl->free;
        return;
    }
    for (int i = 0; i < cl->nkids; i++) type_walk(g, gs_cluster_cell_kid(g->c, ci, i), n, fr);
}

/* Healthy GPUs per type (n[K]); free ones too when fr != NULL. */
static void type_counts(gavel *g, double *n, int *fr)
{
    if (g->K > 32 || !gs_cluster_ncells(g->c)) {
        type_counts_scan(g, n, fr);
        return;
    }
    for (int k = 0; k < g->K; k++) {
        n[k] = 0;
        if (fr) fr[k] = 0;
    }
    type_walk(g, 0, n, fr);
}

/* gs_engine_job_rate of j on type k (k = -1: the reference type) at its requested size,
 * 0 where not positive.  A job without a program model (no 'app') has fixed rates: its own
 * size, model and the profiles (gsched/engine.h), looked up once at its arrival (rate_fill);
 * a modelled job's speed may change as its model learns: looked up every time. */
static double rate_live(gavel *g, const gs_job *j, int k)
{
    double r = gs_engine_job_rate(g->e, j, k, j->req_gpus);
    return r > 0 ? r : 0;
}

static double rate(gavel *g, const gs_job *j, int k)
{
    if (!g->js[j->slot].rated) return rate_live(g, j, k);
    return g->rates[(size_t)j->slot * (size_t)(g->K + 1) + (size_t)(k < 0 ? g->K : k)];
}

static void rate_fill(gavel *g, const gs_job *j)
{
    gjs *s = &g->js[j->slot];
    s->rated = 0;
    if (j->app) return;
    double *r = g->rates + (size_t)j->slot * (size_t)(g->K + 1);
    for (int k = 0; k < g->K; k++) r[k] = rate_live(g, j, k);
    r[g->K] = rate_live(g, j, -1);
    s->rated = 1;
}

/* The real throughput of j alone on type k (0 where it cannot run). */
static double tput(gavel *g, const gs_job *j, int k, const double *ngpus)
{
    if (j->gpu_type >= 0 && j->gpu_type != k) return 0;
    if (ngpus && ngpus[k] < j->req_gpus) return 0;
    return rate(g, j, k);
}

/* The throughput the LP sees (hetero=agnostic: the reference type's everywhere). */
static double lp_tput(gavel *g, const gs_job *j, int k, const double *ngpus)
{
    double t = tput(g, j, k, ngpus);
    if (!g->agnostic || !(t > 0)) return t;
    double r = rate(g, j, -1);
    return r > 0 ? r : 1.0;
}

/* Pair rates of a and b co-located on type k (0, 0 when they cannot share). */
static void pair_rates(gavel *g, const gs_job *a, const gs_job *b, int k, double *ra, double *rb)
{
    *ra = *rb = 0;
    if (!a->model || !b->model) return;
    const gs_profiles *pr = gs_engine_profiles(g->e);
    const char *tn = gs_cluster_gpu_type_name(g->c, k);
    if (gs_engine_job_gpu_mem(g->e, a) + gs_engine_job_gpu_mem(g->e, b) >
        gs_profiles_gpu_mem(pr, tn))
        return;
    double x, y;
    gs_profiles_pair(pr, a->model, b->model, tn, &x, &y);
    if (x > 0 && y > 0) *ra = x, *rb = y;
}

/* ---- solving ------------------------------------------------------------------- */

typedef struct pcand {
    int32_t a, b; /* slots, a < b */
    double gain;
} pcand;

static int cmp_pair(const void *x, const void *y)
{
    const pcand *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/*
 * Candidate pairs: for every active job, its best 'partners' co-location partners of the
 * same size whose normalised packed throughput (sum of both pair rates) exceeds 1 on some
 * type; deduplicated, in (a, b) slot order.  Rates are looked up once per (model, model,
 * type) and throughputs once per job (an O(J^2) scan of cached numbers).
 */
static int find_pairs(gavel *g, const double *ngpus, pcand **out, size_t *nout)
{
    size_t n = 0, cap = 0, J = g->nact;
    int K = g->K, m = g->partners, M = 0;
    pcand *v = NULL;
    const gs_profiles *pr = gs_engine_profiles(g->e);
    for (size_t i = 0; i < J; i++)
        if (job(g, g->act[i])->model_id + 1 > M) M = job(g, g->act[i])->model_id + 1;
    size_t mm = (size_t)M * (size_t)M * (size_t)K;
    pcand *best = malloc((size_t)(m > 0 ? m : 1) * sizeof *best);
    double *tr = malloc((J ? J : 1) * (size_t)K * sizeof *tr),
           *gmem = malloc((size_t)K * sizeof *gmem);
    double *rc = malloc((mm ? mm : 1) * 2 * sizeof *rc); /* (ra, rb); NaN = not looked up */
    int *mem = malloc((J ? J : 1) * sizeof *mem);
    if (!best || !tr || !gmem || !rc || !mem) {
        free(best), free(tr), free(gmem), free(rc), free(mem);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < mm * 2; i++) rc[i] = NAN;
    for (int k = 0; k < K; k++)
        gmem[k] = gs_profiles_gpu_mem(pr, gs_cluster_gpu_type_name(g->c, k));
    for (size_t i = 0; i < J; i++) {
        const gs_job *a = job(g, g->act[i]);
        mem[i] = gs_engine_job_gpu_mem(g->e, a);
        for (int k = 0; k < K; k++) tr[i * (size_t)K + (size_t)k] = tput(g, a, k, ngpus);
    }
    for (size_t i = 0; i < J; i++) {
        const gs_job *a = job(g, g->act[i]);
        if (!a->model || a->model_id < 0) continue;
        int nb = 0;
        for (size_t l = 0; l < J; l++) {
            const gs_job *b = job(g, g->act[l]);
            if (l == i || !b->model || b->model_id < 0 || b->req_gpus != a->req_gpus) continue;
            double gain = 0;
            for (int k = 0; k < K; k++) {
                if (!(tr[i * (size_t)K + (size_t)k] > 0 && tr[l * (size_t)K + (size_t)k] > 0) ||
                    mem[i] + mem[l] > gmem[k])
                    continue;
                double *r =
                    rc + 2 * (((size_t)a->model_id * (size_t)M + (size_t)b->model_id) * (size_t)K +
                              (size_t)k);
                if (isnan(r[0])) {
                    gs_profiles_pair(pr, a->model, b->model, gs_cluster_gpu_type_name(g->c, k),
                                     &r[0], &r[1]);
                    if (!(r[0] > 0 && r[1] > 0)) r[0] = r[1] = 0;
                }
                if (r[0] + r[1] > gain) gain = r[0] + r[1];
            }
            if (!(gain > 1)) continue;
            /* insert into the top m (by gain, then arrival order) */
            int pos = nb;
            while (pos > 0 && best[pos - 1].gain < gain) pos--;
            if (pos >= m) continue;
            if (nb < m) nb++;
            memmove(best + pos + 1, best + pos, (size_t)(nb - 1 - pos) * sizeof *best);
            best[pos].a = a->slot < b->slot ? a->slot : b->slot;
            best[pos].b = a->slot < b->slot ? b->slot : a->slot;
            best[pos].gain = gain;
        }
        if (grow((void **)&v, &cap, n + (size_t)nb, sizeof *v)) {
            free(v), free(best), free(tr), free(gmem), free(rc), free(mem);
            return GS_ENOMEM;
        }
        if (nb) memcpy(v + n, best, (size_t)nb * sizeof *v);
        n += (size_t)nb;
    }
    free(best), free(tr), free(gmem), free(rc), free(mem);
    if (n) qsort(v, n, sizeof *v, cmp_pair);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (!w || v[w - 1].a != v[i].a || v[w - 1].b != v[i].b) v[w++] = v[i];
    *out = v;
    *nout = w;
    return 0;
}

static int cmp_ent_pair(const void *x, const void *y, const gavel *g)
{
    const gent *p = &g->ents[*(const int32_t *)x], *q = &g->ents[*(const int32_t *)y];
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/* Pair entries matching the candidates (existing ones keep their counters); others die. */
static int sync_pairs(gavel *g, const pcand *pc, size_t np, int32_t *pent)
{
    /* existing pair entries are in creation order; match by a linear merge over both
     * lists sorted by (a, b): sort an index of the existing ones */
    size_t ne = 0;
    for (size_t i = 0; i < g->nents; i++)
        if (g->ents[i].b >= 0 && !g->ents[i].dead) ne++;
    int32_t *idx = malloc((ne ? ne : 1) * sizeof *idx);
    if (!idx) return GS_ENOMEM;
    ne = 0;
    for (size_t i = 0; i < g->nents; i++)
        if (g->ents[i].b >= 0 && !g->ents[i].dead) idx[ne++] = (int32_t)i;
    /* insertion-free merge: entries were created in (a, b) order per solve, but several
     * solves interleave; a simple sort by (a, b) with the entries array as context */
    for (size_t i = 1; i < ne; i++) { /* insertion sort: pair lists are short */
        int32_t t = idx[i];
        size_t j = i;
        while (j > 0 && cmp_ent_pair(&idx[j - 1], &t, g) > 0) idx[j] = idx[j - 1], j--;
        idx[j] = t;
    }
    size_t i = 0;
    for (size_t p = 0; p < np; p++) {
        while (i < ne && (g->ents[idx[i]].a < pc[p].a ||
                          (g->ents[idx[i]].a == pc[p].a && g->ents[idx[i]].b < pc[p].b))) {
            ent_kill(g, (size_t)idx[i]); /* no longer a candidate */
            i++;
        }
        if (i < ne && g->ents[idx[i]].a == pc[p].a && g->ents[idx[i]].b == pc[p].b) {
            pent[p] = idx[i++];
            continue;
        }
        int32_t ei;
        int rc = ent_new(g, pc[p].a, pc[p].b, &ei);
        if (rc) {
            free(idx);
            return rc;
        }
        pent[p] = ei;
    }
    for (; i < ne; i++) ent_kill(g, (size_t)idx[i]);
    free(idx);
    return 0;
}

/* fifo: jobs keep the type they were given; new ones, in arrival order, take one. */
static void solve_fifo(gavel *g, const double *ngpus)
{
    double *left = g->typerate; /* scratch K */
    for (int k = 0; k < g->K; k++) left[k] = ngpus[k];
    for (size_t i = 0; i < g->nact; i++) {
        gjs *s = &g->js[g->act[i]];
        if (s->fifo_k >= 0) left[s->fifo_k] -= job(g, g->act[i])->req_gpus;
    }
    for (size_t i = 0; i < g->nact; i++) {
        gs_job *j = job(g, g->act[i]);
        gjs *s = &g->js[j->slot];
        gent *en = &g->ents[s->ent];
        if (s->fifo_k < 0) {
            int best = -1;
            double bv = 0;
            for (int k = 0; k < g->K; k++) {
                if (left[k] < j->req_gpus || !(tput(g, j, k, ngpus) > 0)) continue;
                double v = g->agnostic ? left[k] : tput(g, j, k, ngpus);
                if (best < 0 || v > bv) best = k, bv = v;
            }
            if (best >= 0) {
                s->fifo_k = best;
                left[best] -= j->req_gpus;
            }
        }
        for (int k = 0; k < g->K; k++) en->x[k] = k == s->fifo_k ? 1.0 : 0.0;
    }
}

/* ---- classes of equal jobs, kept across solves ------------------------------------------ */

/* An active class and the arrival number of its first active member (unique: a job is in
 * one class). */
typedef struct clfirst {
    int64_t seq;
    int32_t c;
} clfirst;

static int cmp_clfirst(const void *x, const void *y)
{
    int64_t p = ((const clfirst *)x)->seq, q = ((const clfirst *)y)->seq;
    return (p > q) - (p < q);
}

static uint64_t cl_hash(int32_t sc, double w, const double *row, int K)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)&sc;
    for (size_t i = 0; i < sizeof sc; i++) h = (h ^ b[i]) * 1099511628211ull;
    b = (const unsigned char *)&w;
    for (size_t i = 0; i < sizeof w; i++) h = (h ^ b[i]) * 1099511628211ull;
    b = (const unsigned char *)row;
    for (size_t i = 0; i < (size_t)K * sizeof *row; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Slot of the class (sc, w, row) in cltab: its id there, or the empty slot (-1) to put it. */
static size_t cl_find(const gavel *g, int32_t sc, double w, const double *row)
{
    int K = g->K;
    size_t i = (size_t)cl_hash(sc, w, row, K) & (g->captab - 1);
    while (g->cltab[i] >= 0) {
        const gcl *c = &g->cls[g->cltab[i]];
        if (c->scale == sc && c->weight == w &&
            !memcmp(g->clt + (size_t)g->cltab[i] * (size_t)K, row, (size_t)K * sizeof *row))
            break;
        i = (i + 1) & (g->captab - 1);
    }
    return i;
}

/* Put active job 'slot' into its class (made when new) under the healthy GPUs ngpus. */
static int cl_assign(gavel *g, int32_t slot, const double *ngpus)
{
    int K = g->K;
    const gs_job *j = job(g, slot);
    gjs *s = &g->js[slot];
    double *row = g->clrow, w = j->weight > 0 ? j->weight : 1.0;
    for (int k = 0; k < K; k++) row[k] = lp_tput(g, j, k, ngpus);
    if (2 * (g->ncls + 1) > g->captab) { /* grow the table: rehash */
        size_t n = g->captab ? 2 * g->captab : 64;
        int32_t *t = malloc(n * sizeof *t);
        if (!t) return GS_ENOMEM;
        free(g->cltab);
        g->cltab = t;
        g->captab = n;
        for (size_t i = 0; i < n; i++) t[i] = -1;
        for (size_t c = 0; c < g->ncls; c++) {
            size_t i =
                (size_t)cl_hash(g->cls[c].scale, g->cls[c].weight, g->clt + c * (size_t)K, K) &
                (n - 1);
            while (t[i] >= 0) i = (i + 1) & (n - 1);
            t[i] = (int32_t)c;
        }
    }
    size_t i = cl_find(g, s->gpus, w, row);
    if (g->cltab[i] < 0) {
        if (g->ncls == g->capcls) {
            size_t n = g->capcls ? 2 * g->capcls : 64;
            gcl *c = realloc(g->cls, n * sizeof *c);
            if (!c) return GS_ENOMEM;
            g->cls = c;
            double *t = realloc(g->clt, n * (size_t)K * sizeof *t);
            if (!t) return GS_ENOMEM;
            g->clt = t;
            double *x = realloc(g->gx, n * (size_t)K * sizeof *x);
            if (!x) return GS_ENOMEM;
            g->gx = x;
            g->capcls = n;
        }
        gcl *c = &g->cls[g->ncls];
        memset(c, 0, sizeof *c);
        c->scale = s->gpus;
        c->weight = w;
        memcpy(g->clt + g->ncls * (size_t)K, row, (size_t)K * sizeof *row);
        g->cltab[i] = (int32_t)g->ncls++;
    }
    gcl *c = &g->cls[g->cltab[i]];
    if (c->qn == c->qcap) {
        if (c->qh > c->qn / 2) { /* drop the front already passed */
            memmove(c->q, c->q + c->qh, (c->qn - c->qh) * sizeof *c->q);
            c->qn -= c->qh, c->qh = 0;
        } else {
            size_t n = c->qcap ? 2 * c->qcap : 16;
            clmem *q = realloc(c->q, n * sizeof *q);
            if (!q) return GS_ENOMEM;
            c->q = q;
            c->qcap = n;
        }
    }
    c->q[c->qn++] = (clmem){slot, s->seq};
    c->count++;
    s->gcls = g->cltab[i];
    return 0;
}

/*
 * Max-min fairness or total throughput over the classes of equal jobs kept across solves:
 * the same problem gavel_lp.c's merge builds from the active jobs (the classes in order of
 * their first job in 'act', with their sizes, weights, throughputs and counts), solved by the
 * same function, without visiting the jobs: only those arrived since the last solve are put
 * into classes (all of them again when the healthy GPUs per type changed).  The allocation
 * stays per class (gx, xcls).
 */
static int class_solve(gavel *g, const double *ngpus, gs_diag *d)
{
    int K = g->K, rc;
    if (!g->clok || memcmp(ngpus, g->clngpus, (size_t)K * sizeof *ngpus)) {
        for (size_t c = 0; c < g->ncls; c++) free(g->cls[c].q);
        g->ncls = 0;
        for (size_t i = 0; i < g->captab; i++) g->cltab[i] = -1;
        memcpy(g->clngpus, ngpus, (size_t)K * sizeof *ngpus);
        g->clok = 0;
        for (size_t i = 0; i < g->nact; i++) g->js[g->act[i]].gcls = -1;
        for (size_t i = 0; i < g->nact; i++)
            if ((rc = cl_assign(g, g->act[i], ngpus))) return rc;
        g->clok = 1;
    } else {
        for (size_t i = 0; i < g->nnew; i++) {
            gjs *s = &g->js[g->newq[i].slot];
            if (s->active && s->seq == g->newq[i].seq && s->gcls < 0 &&
                (rc = cl_assign(g, g->newq[i].slot, ngpus)))
                return rc;
        }
    }
    g->nnew = 0;
    if (g->capord < g->ncls) {
        size_t n = g->ncls;
        free(g->clord), free(g->clx), free(g->clsc), free(g->clw), free(g->clcount);
        free(g->cltp);
        g->clord = malloc(n * sizeof *g->clord);
        g->clx = malloc(n * (size_t)K * sizeof *g->clx);
        g->clsc = malloc(n * sizeof *g->clsc);
        g->clw = malloc(n * sizeof *g->clw);
        g->clcount = malloc(n * sizeof *g->clcount);
        g->cltp = malloc(n * (size_t)K * sizeof *g->cltp);
        g->capord = 0;
        if (!g->clord || !g->clx || !g->clsc || !g->clw || !g->clcount || !g->cltp)
            return GS_ENOMEM;
        g->capord = n;
    }
    size_t n = 0;
    for (size_t c = 0; c < g->ncls; c++) {
        gcl *cl = &g->cls[c];
        if (!cl->count) continue;
        for (;;) { /* the front: its first active member */
            const clmem *m = &cl->q[cl->qh];
            const gjs *s = &g->js[m->slot];
            if (s->active && s->seq == m->seq && s->gcls == (int32_t)c) break;
            cl->qh++;
        }
        g->clord[n++] = (clfirst){cl->q[cl->qh].seq, (int32_t)c};
    }
    qsort(g->clord, n, sizeof *g->clord, cmp_clfirst);
    for (size_t i = 0; i < n; i++) {
        const gcl *cl = &g->cls[g->clord[i].c];
        memcpy(g->cltp + i * (size_t)K, g->clt + (size_t)g->clord[i].c * (size_t)K,
               (size_t)K * sizeof *g->cltp);
        g->clsc[i] = cl->scale;
        g->clw[i] = cl->weight;
        g->clcount[i] = (int)cl->count;
    }
    gs_gavel_in in = {.J = (int)n,
                      .K = K,
                      .tput = g->cltp,
                      .scale = g->clsc,
                      .weight = g->clw,
                      .ngpus = ngpus,
                      .count = g->clcount};
    const gs_lp_solver *lp = gs_engine_lp(g->e);
    rc = g->objective == OBJ_LAS ? gs_gavel_maxmin(lp, &in, g->clx, NULL, d)
                                 : gs_gavel_throughput(lp, &in, g->clx, NULL, d);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        memcpy(g->gx + (size_t)g->clord[i].c * (size_t)K, g->clx + i * (size_t)K,
               (size_t)K * sizeof *g->gx);
    g->xcls = 1;
    g->xseq = g->seq;
    return 0;
}

static int solve(gavel *g, gs_diag *d)
{
    int K = g->K, J = (int)g->nact, rc = 0;
    double *ngpus = calloc((size_t)K, sizeof *ngpus);
    if (!ngpus) return GS_ENOMEM;
    type_counts(g, ngpus, NULL);
    g->solves++;
    if ((g->objective == OBJ_LAS || g->objective == OBJ_THROUGHPUT) && !g->pack && !g->nunrated &&
        J >= 2) {
        rc = class_solve(g, ngpus, d);
        free(ngpus);
        return rc;
    }
    for (size_t i = 0; i < g->nents; i++)
        for (int k = 0; k < K; k++) g->ents[i].x[k] = 0;
    g->xcls = 0;
    if (g->objective == OBJ_FIFO) {
        solve_fifo(g, ngpus);
        free(ngpus);
        return 0;
    }
    if (J == 0) {
        free(ngpus);
        return 0;
    }
    gs_time now = gs_engine_now(g->e);
    size_t nj = (size_t)J;
    double *T = malloc(nj * (size_t)K * sizeof *T), *S = malloc(nj * sizeof *S);
    double *t = malloc(nj * sizeof *t), *cum = malloc(nj * sizeof *cum);
    int *sc = malloc(nj * sizeof *sc);
    double *W = malloc(nj * sizeof *W);
    pcand *pc = NULL;
    size_t np = 0;
    int32_t *pent = NULL;
    double *pta = NULL, *ptb = NULL, *x = NULL;
    int *pa = NULL, *pb = NULL;
    if (!T || !S || !t || !cum || !sc || !W) {
        rc = GS_ENOMEM;
        goto out;
    }
    for (int i = 0; i < J; i++) {
        const gs_job *j = job(g, g->act[i]);
        for (int k = 0; k < K; k++) T[i * K + k] = lp_tput(g, j, k, ngpus);
        S[i] = (double)gs_job_remaining(j, now) / GS_SEC;
        t[i] = (double)(now - j->submit) / GS_SEC;
        sc[i] = j->req_gpus;
        W[i] = j->weight > 0 ? j->weight : 1.0;
        gjs *s = &g->js[j->slot];
        if (g->objective == OBJ_FTF && s->s_prev >= 0 && s->iso_prev > 0)
            s->iso_cum += (s->s_prev - S[i]) / s->iso_prev;
        cum[i] = s->iso_cum;
    }
    if (g->pack) {
        if ((rc = find_pairs(g, ngpus, &pc, &np))) goto out;
        size_t n1 = np ? np : 1;
        pent = malloc(n1 * sizeof *pent);
        pta = calloc(n1 * (size_t)K, sizeof *pta);
        ptb = calloc(n1 * (size_t)K, sizeof *ptb);
        pa = malloc(n1 * sizeof *pa);
        pb = malloc(n1 * sizeof *pb);
        if (!pent || !pta || !ptb || !pa || !pb) {
            rc = GS_ENOMEM;
            goto out;
        }
        if ((rc = sync_pairs(g, pc, np, pent))) goto out;
        /* job slot -> row: act is in arrival order, rows follow it */
        for (int i = 0; i < J; i++) g->js[g->act[i]].sched = i;
        for (size_t p = 0; p < np; p++) {
            const gs_job *a = job(g, pc[p].a), *b = job(g, pc[p].b);
            pa[p] = g->js[a->slot].sched;
            pb[p] = g->js[b->slot].sched;
            for (int k = 0; k < K; k++) {
                double ra, rb;
                pair_rates(g, a, b, k, &ra, &rb);
                pta[p * K + k] = T[pa[p] * K + k] * ra;
                ptb[p * K + k] = T[pb[p] * K + k] * rb;
            }
        }
    }
    gs_gavel_in in = {.J = J,
                      .K = K,
                      .tput = T,
                      .scale = sc,
                      .weight = W,
                      .ngpus = ngpus,
                      .remaining = S,
                      .elapsed = t,
                      .iso_cum = cum,
                      .P = (int)np,
                      .pa = pa,
                      .pb = pb,
                      .ptput_a = pta,
                      .ptput_b = ptb};
    x = malloc((size_t)gs_gavel_nx(&in) * sizeof *x);
    if (!x) {
        rc = GS_ENOMEM;
        goto out;
    }
    const gs_lp_solver *lp = gs_engine_lp(g->e);
    switch (g->objective) {
    case OBJ_LAS: rc = gs_gavel_maxmin(lp, &in, x, NULL, d); break;
    case OBJ_MAKESPAN: rc = gs_gavel_makespan(lp, &in, x, NULL, d); break;
    case OBJ_THROUGHPUT: rc = gs_gavel_throughput(lp, &in, x, NULL, d); break;
    default: rc = gs_gavel_ftf(lp, &in, 0, x, NULL, d); break;
    }
    if (rc) goto out;
    if (g->objective == OBJ_FTF) {
        double *iso = t; /* elapsed no longer needed */
        gs_gavel_isolated(&in, iso);
        for (int i = 0; i < J; i++) {
            gjs *s = &g->js[g->act[i]];
            s->s_prev = S[i];
            s->iso_prev = iso[i];
        }
    }
    for (int i = 0; i < J; i++)
        memcpy(g->ents[g->js[g->act[i]].ent].x, x + (size_t)i * K, (size_t)K * sizeof *x);
    for (size_t p = 0; p < np; p++)
        memcpy(g->ents[pent[p]].x, x + (size_t)(J + (int)p) * K, (size_t)K * sizeof *x);
out:
    free(ngpus), free(T), free(S), free(t), free(cum), free(sc), free(W), free(pc), free(pent);
    free(pta), free(ptb), free(pa), free(pb), free(x);
    return rc;
}

/* ---- the mechanism ------------------------------------------------------------------ */

static void reset_counters(gavel *g, gs_time now)
{
    double el = g->ever_reset ? (double)(now - g->last_reset) / GS_SEC : 0;
    double half = (double)g->round / GS_SEC / 2;
    for (int k = 0; k < g->K; k++) g->wtime[k] = 0;
    for (size_t i = 0; i < g->nents; i++) {
        gent *en = &g->ents[i];
        if (en->dead) continue;
        for (int k = 0; k < g->K; k++) {
            en->defic[k] += ent_x(g, en)[k] * el - (en->recv[k] - half);
            en->recv[k] = half;
            g->wtime[k] += half;
        }
    }
    g->last_reset = now;
    g->ever_reset = 1;
    g->x_changed = 0;
}

static int cmp_cand(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->prio != q->prio) return p->prio > q->prio ? -1 : 1;
    if (p->defic != q->defic) return p->defic > q->defic ? -1 : 1;
    if (p->x != q->x) return p->x > q->x ? -1 : 1;
    return (p->e > q->e) - (p->e < q->e);
}

static int ent_gpus(gavel *g, const gent *en)
{
    return job(g, en->a)->req_gpus;
}

static void heap_down(cand *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cmp_cand(&h[l], &h[m]) < 0) m = l;
        if (r < n && cmp_cand(&h[r], &h[m]) < 0) m = r;
        if (m == i) return;
        cand t = h[i];
        h[i] = h[m], h[m] = t;
        i = m;
    }
}

/*
 * The next candidate of block b in rank order, moved from its heap to the end of its ranked
 * prefix (the order a full sort by cmp_cand gives: it is a total order); NULL when none is
 * left.  A round ranks only as many as its choices need: a type's candidates stop
 * mattering once its GPUs left are fewer than any of them needs.
 */
static cand *blk_next(gavel *g, blk *b)
{
    if (!b->nheap) return NULL;
    cand *h = g->heap + b->start;
    cand *out = &g->cands[b->start + b->ranked++];
    *out = h[0];
    h[0] = h[--b->nheap];
    heap_down(h, b->nheap, 0);
    return out;
}

static int cmp_sel(const void *x, const void *y)
{
    const sel *p = x, *q = y;
    if (p->sz != q->sz) return p->sz > q->sz ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

static int ent_runnable(gavel *g, const gent *en, int k)
{
    const gs_job *a = job(g, en->a);
    if (!(tput(g, a, k, NULL) > 0)) return 0;
    if (en->b < 0) return 1;
    const gs_job *b = job(g, en->b);
    if (!(tput(g, b, k, NULL) > 0)) return 0;
    double ra, rb;
    pair_rates(g, a, b, k, &ra, &rb);
    return ra > 0 && rb > 0;
}

/* Type of the GPUs j holds, -1 when none. */
static int cur_type(gavel *g, const gs_job *j)
{
    if (j->state != GS_JOB_RUNNING || !j->alloc || j->nalloc <= 0) return -1;
    return gs_cluster_gpu(g->c, j->alloc[0])->type;
}

/* The running-job cache: j (active) no longer holds GPUs as far as the cache knows. */
static void run_clear(gavel *g, gjs *s)
{
    if (s->run_k < 0) return;
    g->usedc[s->run_k] -= s->held;
    g->nrun--;
    s->run_k = -1;
    s->held = 0;
}

/* The running-job cache: record where active job j runs now (after a start or a pack). */
static void run_set(gavel *g, const gs_job *j)
{
    gjs *s = &g->js[j->slot];
    run_clear(g, s);
    int k = cur_type(g, j);
    if (k < 0 || k >= g->K) return;
    s->run_k = k;
    s->held = j->nalloc;
    g->usedc[k] += s->held;
    g->nrun++;
}

/* The running-job cache from the jobs themselves (when its sums disagree with the
 * cluster's: something moved a job behind the policy's back, e.g. an operator's resize). */
static void run_rebuild(gavel *g)
{
    for (int k = 0; k < g->K; k++) g->usedc[k] = 0;
    g->nrun = 0;
    for (size_t i = 0; i < g->nact; i++) {
        gjs *s = &g->js[g->act[i]];
        s->run_k = -1, s->held = 0;
        if (s->active) run_set(g, job(g, g->act[i]));
    }
}

/* Entry i's candidate on type k: its priority, deficit and allocation there. */
static cand mkcand(const gavel *g, size_t i, int k)
{
    const gent *en = &g->ents[i];
    double x = ent_x(g, en)[k], prio;
    double frac = g->wtime[k] > 0 ? en->recv[k] / g->wtime[k] : 0;
    if (x <= 0)
        prio = 0;
    else if (frac <= 0)
        prio = x * 1e9;
    else
        prio = x / frac;
    return (cand){(int32_t)i, k, prio, en->defic[k], x};
}

static int engine_err(gavel *g, int rc)
{
    int le = gs_engine_error(g->e);
    if (le) return le;
    return rc == GS_ENOMEM ? rc : 0;
}

/* Start pending job j on free GPUs of type k.  1 started, 0 not now, < 0 error. */
static int start_on(gavel *g, gs_job *j, int k, int *gpus)
{
    if (j->state != GS_JOB_PENDING) return 0;
    gs_place_req r;
    gs_engine_place_req(g->e, j, GS_LOCALITY_ANY, &r);
    r.gpu_type = k;
    int rc = gs_place_find(g->c, &r, gpus);
    if (rc) return rc == GS_ENOMEM ? rc : 0;
    rc = gs_engine_start(g->e, j, gpus, j->gpus);
    if (rc) return engine_err(g, rc);
    run_set(g, j);
    return 1;
}

/* Room for n more entries in the ran list. */
static int ran_reserve(gavel *g, size_t n)
{
    if (g->nran + n > g->capran || !g->ran_k) {
        size_t cap = g->capran;
        if (grow((void **)&g->ran_e, &cap, g->nran + n, sizeof *g->ran_e)) return GS_ENOMEM;
        /* ran_k shares the capacity of ran_e: grown together (capran moves once both are) */
        int32_t *q = realloc(g->ran_k, cap * sizeof *q);
        if (!q) return GS_ENOMEM;
        g->ran_k = q;
        g->capran = cap;
    }
    return 0;
}

static int ran_add(gavel *g, int32_t e, int32_t k)
{
    if (ran_reserve(g, 1)) return GS_ENOMEM;
    g->ran_e[g->nran] = e;
    g->ran_k[g->nran++] = k;
    return 0;
}

/* Backfill candidate i (a job alone, not chosen, whose type has room): start it now.
 * 0 or < 0 on an error. */
static int backfill(gavel *g, size_t i, int *fr, int *gpus)
{
    cand *cd = &g->cands[i];
    gent *en = &g->ents[cd->e];
    if (en->b >= 0 || g->js[en->a].sched >= 0 || fr[cd->k] < ent_gpus(g, en)) return 0;
    if (g->objective == OBJ_FIFO && cd->prio <= 0) return 0;
    gs_job *a = job(g, en->a);
    int rc = start_on(g, a, cd->k, gpus);
    if (rc <= 0) return rc;
    g->js[en->a].sched = (int32_t)i;
    g->unsched--;
    fr[cd->k] -= a->gpus;
    return ran_add(g, cd->e, cd->k);
}

/* fast_round's list of the jobs not running on its type: a candidate each, and what became of
 * its start (0 waits, 1 started, 2 failed: it is tried again as backfill) */
typedef struct wcand {
    cand c;
    int32_t gpus, slot, st;
} wcand;

static int cmp_wstart(const void *x, const void *y)
{
    const wcand *p = x, *q = y;
    if (p->gpus != q->gpus) return p->gpus > q->gpus ? -1 : 1;
    return cmp_cand(&p->c, &q->c);
}

static int cmp_wrank(const void *x, const void *y)
{
    return cmp_cand(&((const wcand *)x)->c, &((const wcand *)y)->c);
}

/*
 * Steps 4-7 of a round when every active job fits type k0, the first in type order (no pairs,
 * not fifo, every active job can run on k0 and their GPUs together are at most k0's healthy
 * ones; cap/fr: the healthy and free GPUs per type).  The greedy selection then chooses every
 * job on k0 whatever the ranks, so the general path's decisions reduce to: the jobs running
 * on k0 keep their GPUs, those running on another type are preempted (in 'act' order), and the
 * rest start on k0 largest first, in rank order among equals; a start that fails is tried
 * again as backfill, per type in type order, in rank order on that type.  Only the jobs not
 * running on k0 are ranked (their relative order is the full ranking's: cmp_cand is a total
 * order), and the running ones are known from the cache (run_k), checked against the
 * cluster's counts first.  Same decisions as the general path, in the same order.
 */
static int fast_round(gavel *g, int k0, double *cap, int *fr, int *gpus)
{
    int K = g->K, rc, same = gs_engine_nrunning(g->e) == (size_t)g->nrun;
    for (int k = 0; k < K && same; k++) same = (int64_t)cap[k] - fr[k] == g->usedc[k];
    if (!same) run_rebuild(g);
    for (size_t i = 0; K > 1 && i < g->nact; i++) { /* 6. running on another type */
        gjs *s = &g->js[g->act[i]];
        if (s->run_k < 0 || s->run_k == k0) continue;
        rc = gs_engine_preempt(g->e, job(g, g->act[i]), "gavel round: not chosen on these GPUs");
        if (rc && (rc = engine_err(g, rc))) return rc;
    }
    if (grow((void **)&g->wl, &g->capwl, 2 * g->nact + 1, sizeof *g->wl)) return GS_ENOMEM;
    size_t nw = 0, nfail = 0;
    if (ran_reserve(g, g->nact)) return GS_ENOMEM; /* the appends below cannot fail */
    for (size_t i = 0; i < g->nact; i++) {
        gjs *s = &g->js[g->act[i]];
        if (s->run_k == k0) { /* a lease extension */
            if (s->gpus >= 1) {
                g->ran_e[g->nran] = s->ent;
                g->ran_k[g->nran++] = k0;
            }
            continue;
        }
        g->wl[nw++] = (wcand){mkcand(g, (size_t)s->ent, k0), s->gpus, g->act[i], 0};
    }
    qsort(g->wl, nw, sizeof *g->wl, cmp_wstart);
    for (size_t i = 0; i < nw; i++) { /* 7. starts, largest first */
        wcand *w = &g->wl[i];
        if (w->gpus < 1) continue; /* chosen, never placed (as in the general path) */
        if ((rc = start_on(g, job(g, w->slot), k0, gpus)) < 0) return rc;
        if (rc > 0) {
            w->st = 1;
            if ((rc = ran_add(g, w->c.e, k0))) return rc;
        } else {
            w->st = 2;
            nfail++;
        }
    }
    if (nfail) {
        type_counts(g, cap, fr);
        /* backfill: the failed starts, per type in type order, in rank order there; their
         * candidates on the type go after the list (wl holds 2 * nact + 1) */
        wcand *bf = g->wl + nw;
        for (int oi = 0; oi < K && nfail; oi++) {
            int k = g->order[oi];
            size_t n = 0;
            for (size_t i = 0; i < nw; i++) {
                wcand *w = &g->wl[i];
                if (w->st != 2 || !ent_runnable(g, &g->ents[w->c.e], k)) continue;
                bf[n] = *w;
                bf[n].c = mkcand(g, (size_t)w->c.e, k);
                bf[n++].st = (int32_t)i; /* where it is in the list */
            }
            qsort(bf, n, sizeof *bf, cmp_wrank);
            for (size_t i = 0; i < n && nfail; i++) {
                gs_job *a = job(g, bf[i].slot);
                if (fr[k] < bf[i].gpus) continue;
                if ((rc = start_on(g, a, k, gpus)) < 0) return rc;
                if (rc == 0) continue;
                g->wl[bf[i].st].st = 1;
                nfail--;
                fr[k] -= a->gpus;
                if ((rc = ran_add(g, bf[i].c.e, k))) return rc;
            }
        }
    }
    for (size_t i = 0; i < nw; i++) {
        gs_job *j = job(g, g->wl[i].slot);
        if (j->state == GS_JOB_PENDING) gs_engine_set_reason(g->e, j, "Priority (gavel round)");
    }
    return 0;
}

static int do_round(gavel *g)
{
    gs_time now = gs_engine_now(g->e);
    int K = g->K, rc;
    /* 0. jobs that finished since the last round leave the active list (kept in order) */
    size_t w = 0;
    for (size_t i = 0; i < g->nact; i++)
        if (g->js[g->act[i]].active) g->act[w++] = g->act[i];
    g->nact = w;
    /* 1. time received in the round that ends */
    double dt = g->in_round ? (double)(now - g->round_start) / GS_SEC : 0;
    for (size_t i = 0; i < g->nran; i++) {
        gent *en = &g->ents[g->ran_e[i]];
        if (en->dead || dt <= 0) continue;
        en->recv[g->ran_k[i]] += dt;
        g->wtime[g->ran_k[i]] += dt;
    }
    g->nran = 0;
    if (4 * g->ndead > g->nents) ent_compact(g); /* dead entries are skipped until then */
    g->rounds++;
    /* 2. allocation and counters */
    int reset_due = !g->ever_reset || now - g->last_reset >= g->reset_every;
    if (g->parity) {
        if (g->stale && reset_due) {
            reset_counters(g, now);
            gs_diag d;
            gs_diag_init(&d, NULL);
            if ((rc = solve(g, &d))) return rc;
            g->stale = 0;
        }
    } else {
        if ((g->stale || g->x_changed) && reset_due) reset_counters(g, now);
        if (g->stale) {
            gs_diag d;
            gs_diag_init(&d, NULL);
            if ((rc = solve(g, &d))) return rc;
            g->stale = 0;
            g->x_changed = 1;
        }
    }
    if (g->nact == 0) {
        g->in_round = 0;
        return 0;
    }
    /* 3. priorities, per type in type order */
    size_t nc = 0;
    for (int k = 0; k < K; k++) g->order[k] = k;
    if (g->agnostic) {
        for (int k = K - 1; k > 0; k--) { /* Fisher-Yates with the engine's seed */
            int r = (int)gs_rng_below(&g->rng, (uint64_t)k + 1), t = g->order[k];
            g->order[k] = g->order[r], g->order[r] = t;
        }
    } else {
        /* fastest first: mean throughput of the active jobs on the type */
        for (int k = 0; k < K; k++) g->typerate[k] = 0;
        for (size_t i = 0; K > 1 && i < g->nact; i++)
            for (int k = 0; k < K; k++) g->typerate[k] += tput(g, job(g, g->act[i]), k, NULL);
        for (int a = 1; a < K; a++) {
            int t = g->order[a], b = a;
            while (b > 0 && g->typerate[g->order[b - 1]] < g->typerate[t]) {
                g->order[b] = g->order[b - 1];
                b--;
            }
            g->order[b] = t;
        }
    }
    int *left = calloc((size_t)K, sizeof *left);
    double *cap = calloc((size_t)K, sizeof *cap);
    int *gpus = malloc(((size_t)gs_cluster_ngpus(g->c) + 1) * sizeof *gpus);
    if (!left || !cap || !gpus) {
        free(left), free(cap), free(gpus);
        return GS_ENOMEM;
    }
    int k0 = g->order[0];
    if (!g->pack && g->objective != OBJ_FIFO && !g->nunrated && g->nrunok[k0] == (int64_t)g->nact) {
        type_counts(g, cap, left);
        if (g->sumgpus <= (int64_t)(int)cap[k0]) {
            rc = fast_round(g, k0, cap, left, gpus);
            if (rc) goto fail;
            goto next;
        }
    }
    if (grow((void **)&g->cands, &g->capcands, g->nents * (size_t)K + 1, sizeof *g->cands) ||
        grow((void **)&g->heap, &g->capheap, g->nents * (size_t)K + 1, sizeof *g->heap)) {
        rc = GS_ENOMEM;
        goto fail;
    }
    for (int oi = 0; oi < K; oi++) {
        int k = g->order[oi];
        blk *b = &g->blks[oi];
        b->start = nc, b->ranked = 0, b->minsz = INT32_MAX;
        for (size_t i = 0; i < g->nents; i++) {
            gent *en = &g->ents[i];
            if (en->dead || !ent_runnable(g, en, k)) continue;
            g->heap[nc++] = mkcand(g, i, k);
            if (ent_gpus(g, en) < b->minsz) b->minsz = ent_gpus(g, en);
        }
        b->nheap = nc - b->start;
        for (size_t i = b->nheap / 2; i-- > 0;) heap_down(g->heap + b->start, b->nheap, i);
    }
    /* 4. greedy selection by GPU counts */
    type_counts(g, cap, NULL);
    for (int k = 0; k < K; k++) left[k] = (int)cap[k];
    for (size_t i = 0; i < g->nact; i++) {
        g->js[g->act[i]].sched = -1;
        g->js[g->act[i]].keep = 0;
    }
    g->unsched = g->nact; /* at 0 every candidate left is skipped: ranking them is moot */
    for (int oi = 0; oi < K; oi++) { /* in rank order while the type has room */
        blk *b = &g->blks[oi];
        cand *cd;
        while (g->unsched && left[g->order[oi]] >= b->minsz && (cd = blk_next(g, b))) {
            size_t i = (size_t)(cd - g->cands);
            gent *en = &g->ents[cd->e];
            if (g->js[en->a].sched >= 0 || (en->b >= 0 && g->js[en->b].sched >= 0)) continue;
            if (g->objective == OBJ_FIFO && cd->prio <= 0) continue;
            int s = ent_gpus(g, en);
            if (s > left[cd->k]) continue;
            left[cd->k] -= s;
            g->js[en->a].sched = (int32_t)i;
            if (en->b >= 0) g->js[en->b].sched = (int32_t)i;
            g->unsched -= en->b >= 0 ? 2 : 1;
        }
    }
    /* 5. lease extensions: chosen again on the type it runs on */
    for (size_t i = 0; i < g->nact; i++) {
        gs_job *j = job(g, g->act[i]);
        gjs *s = &g->js[j->slot];
        int ct = cur_type(g, j);
        if (s->sched < 0 || ct < 0) continue;
        cand *cd = &g->cands[s->sched];
        gent *en = &g->ents[cd->e];
        if (cd->k != ct) continue;
        if (en->b < 0) {
            s->keep = 1;
        } else {
            int32_t other = en->a == j->slot ? en->b : en->a;
            if (j->pack_with == other || j->pack_with < 0) s->keep = 1;
        }
    }
    /* a kept job sharing its GPUs with a job not kept with it in the same entry: the
     * partner leaves; two jobs of one pair entry each running alone: the later one moves */
    for (size_t i = 0; i < g->nact; i++) {
        gs_job *j = job(g, g->act[i]);
        gjs *s = &g->js[j->slot];
        if (!s->keep) continue;
        gent *en = &g->ents[g->cands[s->sched].e];
        if (en->b >= 0) {
            int32_t other = en->a == j->slot ? en->b : en->a;
            if (j->pack_with < 0 && g->js[other].keep && job(g, other)->pack_with < 0 &&
                other < j->slot)
                s->keep = 0;
        }
    }
    for (size_t i = 0; i < g->nact; i++) {
        gs_job *j = job(g, g->act[i]);
        gjs *s = &g->js[j->slot];
        if (!s->keep || j->pack_with < 0) continue;
        gs_job *p = job(g, j->pack_with);
        gjs *ps = &g->js[p->slot];
        if (!ps->keep || ps->sched != s->sched) ps->keep = 0;
    }
    /* 6. preempt what is not kept */
    for (size_t i = 0; i < g->nact; i++) {
        gs_job *j = job(g, g->act[i]);
        if (j->state != GS_JOB_RUNNING || g->js[j->slot].keep) continue;
        rc = gs_engine_preempt(g->e, j, "gavel round: not chosen on these GPUs");
        if (rc && (rc = engine_err(g, rc))) goto fail;
    }
    /* 7. starts, per type largest first (in rank order among equals); then backfill */
    int *fr = left; /* free GPUs per type now */
    type_counts(g, cap, fr);
    /* the chosen candidates by size (largest first), then rank (their index) */
    size_t ns = 0;
    if (grow((void **)&g->sels, &g->capsels, g->nents + 1, sizeof *g->sels)) {
        rc = GS_ENOMEM;
        goto fail;
    }
    for (int oi = 0; oi < K; oi++) {
        const blk *b = &g->blks[oi];
        for (size_t i = b->start; i < b->start + b->ranked; i++) {
            const gent *en = &g->ents[g->cands[i].e];
            if (g->js[en->a].sched == (int32_t)i && ent_gpus(g, en) >= 1)
                g->sels[ns++] = (sel){ent_gpus(g, en), (int32_t)i};
        }
    }
    qsort(g->sels, ns, sizeof *g->sels, cmp_sel);
    for (size_t si = 0; si < ns; si++) {
        size_t i = (size_t)g->sels[si].i;
        cand *cd = &g->cands[i];
        gent *en = &g->ents[cd->e];
        if (g->js[en->a].sched != (int32_t)i) continue;
        gs_job *a = job(g, en->a), *b = en->b >= 0 ? job(g, en->b) : NULL;
        int ka = g->js[a->slot].keep, kb = b && g->js[b->slot].keep;
        int ok = 0;
        if (!b) {
            if (ka) {
                ok = 1;
            } else {
                if ((rc = start_on(g, a, cd->k, gpus)) < 0) goto fail;
                ok = rc > 0;
            }
        } else if (ka && kb) {
            ok = 1;
        } else {
            gs_job *host = ka ? a : kb ? b : a, *guest = host == a ? b : a;
            int hok = g->js[host->slot].keep;
            if (!hok) {
                if ((rc = start_on(g, host, cd->k, gpus)) < 0) goto fail;
                hok = rc > 0;
            }
            if (hok && guest->state == GS_JOB_PENDING) {
                rc = gs_engine_pack(g->e, guest, host);
                if (rc && (rc = engine_err(g, rc))) goto fail;
                if (!rc) run_set(g, guest);
            }
            ok = hok;
        }
        rc = 0;
        if (ok) {
            if ((rc = ran_add(g, cd->e, cd->k))) goto fail;
        } else {
            g->js[en->a].sched = -1;
            if (en->b >= 0) g->js[en->b].sched = -1;
            g->unsched += en->b >= 0 ? 2 : 1;
        }
    }
    type_counts(g, cap, fr);
    for (int oi = 0; oi < K; oi++) { /* backfill: jobs alone, in rank order */
        blk *b = &g->blks[oi];
        int k = g->order[oi];
        for (size_t r = 0; g->unsched; r++) {
            if (r == b->ranked && (fr[k] < b->minsz || !blk_next(g, b))) break;
            size_t i = b->start + r;
            if ((rc = backfill(g, i, fr, gpus)) < 0) goto fail;
        }
    }
    rc = 0;
    for (size_t i = 0; i < g->nact; i++) {
        gs_job *j = job(g, g->act[i]);
        if (j->state == GS_JOB_PENDING) gs_engine_set_reason(g->e, j, "Priority (gavel round)");
    }
next:
    free(left), free(cap), free(gpus);
    /* 8. the next round */
    g->in_round = 1;
    g->round_start = now;
    g->round_tag++;
    return gs_engine_set_timer(g->e, now + g->round, g->round_tag);
fail:
    free(left), free(cap), free(gpus);
    return rc;
}

/* ---- hooks ---------------------------------------------------------------------------- */

static int add_active(gavel *g, gs_job *j)
{
    int rc = ensure_js(g, j->slot);
    if (rc) return rc;
    if (grow((void **)&g->act, &g->capact, g->nact + 1, sizeof *g->act)) return GS_ENOMEM;
    int32_t ei;
    if ((rc = ent_new(g, j->slot, -1, &ei))) return rc;
    double half = (double)g->round / GS_SEC / 2;
    for (int k = 0; k < g->K; k++) g->ents[ei].recv[k] = half; /* as Gavel: not in wtime */
    gjs *s = &g->js[j->slot];
    memset(s, 0, sizeof *s);
    s->active = 1;
    s->ent = ei;
    s->fifo_k = -1;
    s->sched = -1;
    s->s_prev = -1;
    s->run_k = -1;
    s->gcls = -1;
    s->seq = g->seq++;
    rate_fill(g, j);
    s->gpus = j->req_gpus;
    g->sumgpus += s->gpus;
    if (!s->rated)
        g->nunrated++;
    else
        for (int k = 0; k < g->K; k++) g->nrunok[k] += tput(g, j, k, NULL) > 0;
    run_set(g, j); /* adopted: it may run already */
    if ((g->objective == OBJ_LAS || g->objective == OBJ_THROUGHPUT) && !g->pack) {
        if (grow((void **)&g->newq, &g->capnew, g->nnew + 1, sizeof *g->newq)) return GS_ENOMEM;
        g->newq[g->nnew++] = (clmem){j->slot, s->seq};
    }
    g->act[g->nact++] = j->slot;
    g->stale = 1;
    if (!g->in_round) {
        g->due = 1;
        gs_engine_request_pass(g->e);
    }
    return 0;
}

/* Gavel places a job on GPUs of one type: a job larger than every type it may use would wait
 * for ever (and its LP row would be all zero), so it is rejected on arrival. */
static int gv_rejects(void *st, const gs_job *j, char *why, size_t cap)
{
    const gavel *g = st;
    if (gs_cluster_ngpu_types(g->c) < 2) return 0; /* the engine's arrival rule covers it */
    int most = 0;
    for (int k = 0; k < g->K; k++) {
        int n = gs_cluster_type_gpus(g->c, k);
        if ((j->gpu_type < 0 || j->gpu_type == k) && n > most) most = n;
    }
    if (j->req_gpus <= most) return 0;
    snprintf(why, cap,
             "%d GPUs: no GPU type of this cluster has that many (at most %d); gavel places a job "
             "on one type",
             j->req_gpus, most);
    return 1;
}

static int gv_arrival(void *st, gs_job *j)
{
    gavel *g = st;
    char why[160];
    if (gv_rejects(g, j, why, sizeof why)) return gs_engine_reject(g->e, j, why);
    return add_active(g, j);
}

static int gv_adopt(void *st, gs_job *j)
{
    return add_active(st, j);
}

static int gv_requeue(void *st, gs_job *j)
{
    gavel *g = st; /* still active: it competes again at the next round */
    if ((size_t)j->slot < g->njs && g->js[j->slot].active) run_clear(g, &g->js[j->slot]);
    return 0;
}

static int gv_finish(void *st, gs_job *j)
{
    gavel *g = st;
    if ((size_t)j->slot >= g->njs || !g->js[j->slot].active) return 0;
    gjs *s = &g->js[j->slot];
    run_clear(g, s);
    if (s->gcls >= 0) g->cls[s->gcls].count--;
    s->gcls = -1;
    g->sumgpus -= s->gpus;
    if (!s->rated)
        g->nunrated--;
    else
        for (int k = 0; k < g->K; k++) g->nrunok[k] -= tput(g, j, k, NULL) > 0;
    s->active = 0; /* left in 'act' until the next round compacts it */
    ent_kill(g, (size_t)s->ent);
    if (g->pack)
        for (size_t i = 0; i < g->nents; i++)
            if (g->ents[i].b >= 0 && (g->ents[i].a == j->slot || g->ents[i].b == j->slot))
                ent_kill(g, i);
    g->stale = 1;
    /* the round ends early when every job it runs has finished */
    if (gs_engine_nrunning(g->e) == 0) {
        g->due = 1;
        gs_engine_request_pass(g->e);
    }
    return 0;
}

static int gv_node(void *st, int node, int down)
{
    gavel *g = st;
    (void)node, (void)down;
    g->stale = 1; /* capacities changed */
    return 0;
}

static int gv_timer(void *st, uint64_t tag)
{
    gavel *g = st;
    if (tag != g->round_tag || !g->in_round) return 0; /* an earlier round's */
    g->due = 1;
    gs_engine_request_pass(g->e);
    return 0;
}

static int gv_schedule(void *st)
{
    gavel *g = st;
    if (!g->due) return 0;
    g->due = 0;
    return do_round(g);
}

static int gv_check(void *st, gs_diag *d)
{
    gavel *g = st;
    double *n = calloc((size_t)g->K * 2, sizeof *n);
    int *fr = calloc((size_t)g->K * 2, sizeof *fr);
    if (!n || !fr) {
        free(n), free(fr);
        return GS_ENOMEM;
    }
    type_counts(g, n, fr);
    type_counts_scan(g, n + g->K, fr + g->K);
    int bad = -1;
    for (int k = 0; k < g->K; k++)
        if (n[k] != n[g->K + k] || fr[k] != fr[g->K + k]) bad = k;
    int rc = bad < 0 ? 0
                     : gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "gavel: type %d counts %g healthy %d free, a scan %g and %d",
                                   bad, n[bad], fr[bad], n[g->K + bad], fr[g->K + bad]);
    free(n), free(fr);
    if (rc) return rc;
    for (size_t i = 0; i < g->nact; i++) {
        const gs_job *j = job(g, g->act[i]);
        if (!g->js[j->slot].active) continue; /* finished, not compacted yet */
        if (!j->arrived || gs_job_state_final(j->state))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gavel: job %lld listed active",
                               (long long)j->id);
        const gent *en = &g->ents[g->js[j->slot].ent];
        if (en->a != j->slot || en->b >= 0)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gavel: job %lld has no entry",
                               (long long)j->id);
    }
    return 0;
}

static int gv_inspect(void *st, const char *key, char *buf, size_t cap)
{
    gavel *g = st;
    int n;
    if (!strcmp(key, "rounds"))
        n = snprintf(buf, cap, "%llu", (unsigned long long)g->rounds);
    else if (!strcmp(key, "solves"))
        n = snprintf(buf, cap, "%llu", (unsigned long long)g->solves);
    else if (!strncmp(key, "x.", 2)) {
        /* x.ID: the job's total allocation alone; x.ID.TYPE: on one type */
        char *end;
        long long id = strtoll(key + 2, &end, 10);
        const gs_job *j = gs_engine_find_job(g->e, id);
        if (end == key + 2 || !j || (size_t)j->slot >= g->njs || !g->js[j->slot].active)
            return GS_ENOENT;
        const gent *en = &g->ents[g->js[j->slot].ent];
        double v = 0;
        if (*end == '.') {
            int k = gs_cluster_find_gpu_type(g->c, end + 1);
            if (k < 0) return GS_ENOENT;
            v = ent_x(g, en)[k];
        } else if (*end) {
            return GS_ENOENT;
        } else {
            for (int k = 0; k < g->K; k++) v += ent_x(g, en)[k];
        }
        n = snprintf(buf, cap, "%.6f", v);
    } else {
        return GS_ENOENT;
    }
    return n < 0 || (size_t)n >= cap ? GS_ERANGE : 0;
}

static void gv_destroy(void *st)
{
    gavel *g = st;
    if (!g) return;
    for (size_t i = 0; i < g->nents; i++)
        if (g->ents[i].own) free(g->ents[i].x);
    for (size_t c = 0; c < g->nvchunks; c++) free(g->vchunks[c]);
    free(g->vchunks);
    free(g->ents);
    free(g->js);
    free(g->rates);
    free(g->act);
    free(g->wtime);
    free(g->ran_e);
    free(g->ran_k);
    free(g->cands);
    free(g->heap);
    free(g->blks);
    free(g->sels);
    free(g->order);
    free(g->typerate);
    free(g->nrunok);
    free(g->usedc);
    free(g->wl);
    for (size_t c = 0; c < g->ncls; c++) free(g->cls[c].q);
    free(g->cls), free(g->clt), free(g->cltab), free(g->newq), free(g->clord), free(g->clx);
    free(g->clsc), free(g->clw), free(g->clcount), free(g->cltp), free(g->gx), free(g->zero);
    free(g->clngpus), free(g->clrow);
    free(g);
}

static int pick(gs_params *p, const char *key, const char *const *names, int n, int def, int *out,
                gs_diag *d)
{
    const char *v = gs_params_get(p, key);
    if (!v) {
        *out = def;
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "|" : "", names[i]);
    return gs_diag_set(d, GS_EINVAL, 0, 0, "parameter '%s': expected %s, got '%s'", key, list, v);
}

static int gv_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    gavel *g = calloc(1, sizeof *g);
    if (!g) return GS_ENOMEM;
    g->e = e;
    g->c = gs_engine_cluster(e);
    g->K = (int)gs_cluster_ngpu_types(g->c);
    if (g->K < 1) g->K = 1;
    static const char *const het[] = {"aware", "agnostic"};
    int64_t partners = 2;
    int can_pack = gs_engine_mech_supported(e, GS_MECH_PACK);
    int rc = gs_params_get_duration(p, "round", 360 * GS_SEC, &g->round, d);
    if (!rc && g->round < GS_SEC)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'round': at least 1 second");
    if (!rc) rc = gs_params_get_duration(p, "reset", 1920 * GS_SEC, &g->reset_every, d);
    if (!rc) rc = pick(p, "objective", obj_names, 5, OBJ_LAS, &g->objective, d);
    if (!rc) rc = pick(p, "hetero", het, 2, 0, &g->agnostic, d);
    if (!rc) rc = gs_params_get_bool(p, "pack", 0, &g->pack, d);
    if (!rc) rc = gs_params_get_bool(p, "parity", 0, &g->parity, d);
    if (!rc) rc = gs_params_get_i64(p, "partners", 2, 1, 64, &partners, d);
    if (!rc && g->round <= 0) rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'round' must be > 0");
    if (!rc && g->pack && !can_pack)
        rc = gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                         "gavel: this program cannot pack jobs (space sharing): set pack=off");
    if (!rc && g->pack && g->objective == OBJ_FIFO)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                         "gavel: pack=on needs an LP objective (las, ftf, makespan, throughput)");
    if (!rc && g->objective != OBJ_FIFO && !gs_engine_lp(e)) rc = gs_gavel_no_solver("gavel", d);
    if (rc) {
        free(g);
        return rc;
    }
    g->partners = (int)partners;
    gs_rng_seed(&g->rng, gs_engine_opts_get(e)->seed ^ 0x6761766c); /* "gavl" */
    g->wtime = calloc((size_t)g->K, sizeof *g->wtime);
    g->order = calloc((size_t)g->K, sizeof *g->order);
    g->typerate = calloc((size_t)g->K, sizeof *g->typerate);
    g->blks = calloc((size_t)g->K, sizeof *g->blks);
    g->nrunok = calloc((size_t)g->K, sizeof *g->nrunok);
    g->usedc = calloc((size_t)g->K, sizeof *g->usedc);
    g->zero = calloc((size_t)g->K, sizeof *g->zero);
    g->clngpus = calloc((size_t)g->K, sizeof *g->clngpus);
    g->clrow = calloc((size_t)g->K, sizeof *g->clrow);
    if (!g->wtime || !g->order || !g->typerate || !g->blks || !g->nrunok || !g->usedc || !g->zero ||
        !g->clngpus || !g->clrow) {
        gv_destroy(g);
        return GS_ENOMEM;
    }
    gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = g;
    return 0;
}

static const gs_policy_ops gs_policy_gavel = {
    .name = "gavel",
    .summary = "Gavel: heterogeneity-aware LP allocations (objective=las|ftf|makespan|"
               "throughput|fifo) in 6-minute rounds with lease extensions",
    .flags = GS_POLICY_PREEMPTIVE,
    .create = gv_create,
    .destroy = gv_destroy,
    .on_arrival = gv_arrival,
    .on_adopt = gv_adopt,
    .on_requeue = gv_requeue,
    .on_finish = gv_finish,
    .on_node = gv_node,
    .on_timer = gv_timer,
    .schedule = gv_schedule,
    .check = gv_check,
    .inspect = gv_inspect,
    .rejects = gv_rejects,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_gavel[] = {{150, &gs_policy_gavel}, {0, NULL}};
