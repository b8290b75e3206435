/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_gandiva.c - Gandiva (OSDI'18) introspective scheduling: affinity
 * placement, time-slicing, packing, migration and grow-shrink
 * (algorithms.md section 3; docs/gandiva.md).
 *
 * Every job of at most one node's GPUs gets a home node.  A node's
 * "affinity" is the GPU count of the jobs placed on it; a new job goes, in
 * order, to the least loaded node of its own affinity with room, an empty
 * node, the least loaded node of another affinity with room, or - when no
 * node has room - joins a node of its affinity as a time-sliced member
 * (oversubscription, at most 'oversub' times the node's GPUs); else it
 * queues.  Members of an oversubscribed node take turns every quantum by
 * weighted round robin (deficit counters), suspended and resumed through
 * the engine, which charges the mini-batch wait and the state copies.
 * Every introspection period the policy judges packs it tried (rolling back
 * those whose measured rates sum below 'pack_gain'), packs waiting jobs onto
 * the least busy running jobs during overload, migrates jobs to empty nodes
 * that hold only a few small jobs (defragmentation) and to nodes of their
 * own affinity, and grows elastic jobs onto idle GPUs (shrinking them back
 * when others wait).  Jobs larger than a node take whole nodes
 * (consolidated placement) and are never time-sliced.
 *
 * Mechanisms the program cannot carry out (gs_engine_mech_supported) are
 * planned without: with no suspend a job never joins a full node as a
 * time-sliced member - it waits in the queue, running jobs run to the end -
 * and no slice timer is armed; pack, migrate and grow default to off when
 * the engine refuses packing, migration or resizing, and asking for them
 * then is refused at create.  Where a suspended job keeps its GPU memory and
 * can continue only where it stopped (LIVE with SIGSTOP and no live_remap;
 * SIM with suspend_mech=sigstop) it is resumed on the GPUs it left or not at
 * all; in SIM a job is placed only on GPUs whose parked memory leaves room
 * for it (gs_engine_gpu_fits) and the run set of a quantum is chosen GPU by
 * GPU; a member that finds no room waits for its turn.
 *
 * Invariants: a job is in exactly one of {queue, one node's member list,
 * nowhere (a multi-node job holding GPUs, or a final job)}; a packed guest
 * is a member of its host's node; every decision walks nodes by index and
 * jobs by slot or list order, never by hash or address, so runs are
 * deterministic; the policy acts only through engine requests and keeps
 * working when one is refused.
 *
 * Scale (1,000,000 jobs on 16,384 GPUs): nothing walks every node or job per event.  Kept
 * incrementally, each giving exactly what the full walk it replaces gave (gd_check verifies
 * them): the count of nodes with waiting members (over a list of invalidated nodes); the
 * placement index (choose_node: heaps per node class, affinity and free GPUs, re-keyed from
 * the cluster's changed nodes and the policy's invalidations); per-node counts of members
 * whose utilisation was not looked up (pack_jobs); the list of packed jobs (judge_packs);
 * the bad pairs as a matrix.  Packing draws candidates from heaps only as far as it looks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"

enum { TAG_SLICE = 1, TAG_INTRO = 2 };
enum { DEFRAG_OFF = 0, DEFRAG_DEMAND = 1, DEFRAG_ON = 2 };

typedef struct gnode {
    int32_t head, tail; /* member list (slots) */
    int32_t nmem;
    int32_t aff;   /* 0 = unaffined, else the GPU count of its jobs */
    int32_t ngpus; /* GPUs of the node */
    int32_t cell;
    int8_t dirty;
    int8_t cached;  /* demand and nwait below are current */
    int8_t stale;   /* listed in g->stale (its counts were invalidated since) */
    int32_t demand; /* GPUs of members that are not packed guests */
    int32_t nwait;  /* members waiting (pending or suspended) */
    int32_t nfresh; /* members whose utilisation was not looked up yet (gj.util < 0) */
    gs_time acct;   /* time of the last deficit accounting */
    /* the placement index (see "placement index" below) */
    int32_t cls;    /* node class: index in g->cls */
    int32_t bucket; /* heap the node is in, -1 = none (down) */
    int32_t hpos;   /* its position in that heap */
    int32_t ixdem;  /* demand when keyed */
    double ixload;  /* key: demand / GPUs when keyed (0 for a node without members) */
    int8_t rekey;   /* listed in g->rekey */
    int8_t due;     /* gd_check: listed by gs_cluster_changed_nodes */
    int8_t judge;   /* judge_packs: holds a pack to judge */
} gnode;

typedef struct gj {
    int32_t node; /* home node, -1 = none */
    int32_t next, prev;
    double deficit;  /* WRR: time owed (s) */
    gs_time mark;    /* executed time at the last accounting */
    gs_time pack_at; /* guest: when its pack started; 0 = judged */
    double util;     /* profile GPU utilisation, < 0 until looked up */
    int32_t q;       /* index of its size queue while queued, else -1 */
} gj;

/* Queued jobs of one shape (GPU count, GPU type), in arrival (slot) order. */
typedef struct sizeq {
    int gpus, type;
    gs_jobq q;
} sizeq;

/* Nodes of one shape: GPUs and GPU types (the static part of choose_node's filters). */
typedef struct nclass {
    int32_t ngpus;
    uint32_t types;
} nclass;

/* A binary min-heap of nodes by (ixload, index). */
typedef struct nheap {
    int32_t *v;
    int32_t n, cap;
} nheap;

typedef struct bad_pair {
    int32_t a, b; /* model ids, a <= b */
} bad_pair;

typedef struct gandiva {
    gs_engine *e;
    gs_cluster *c;
    int live;
    int remap;  /* LIVE: a suspended job may resume on other GPUs of its node (live_remap) */
    int slice;  /* the engine can suspend and resume: time-slicing is possible */
    int pinned; /* a suspended job resumes only on the GPUs it left (LIVE without remap; SIM
                 * with suspend_mech=sigstop) */
    int parked; /* SIM, suspend_mech=sigstop: the run set is chosen GPU by GPU */
    /* parameters */
    gs_time quantum, introspect, window;
    double oversub, pack_gain, defrag_free;
    int pack, migrate, defrag, grow, prio_weights;
    int pack_budget, migrate_budget;
    gs_time grow_min;
    /* state */
    gnode *nodes;
    size_t nnodes;
    int maxg; /* largest node */
    gj *jobs;
    size_t capjobs;
    sizeq *sq; /* the queue: one FIFO per shape, merged by arrival order */
    int nsq, capsq;
    size_t nqueued;
    gs_jobq ranq; /* queued jobs that ran before (the only queued ones with a profile) */
    int32_t *dirty;
    size_t ndirty;
    /* nodes whose cached counts were invalidated, to recount before g->nwaitnodes is read;
     * nwaitnodes counts the cached nodes with waiting members */
    int32_t *stale;
    size_t nstale, nwaitnodes;
    /* the placement index: ix = 0 when the cluster has too many node shapes for it (then
     * choose_node scans); heaps by (class, members ? affinity + 1 : 0, free GPUs); rekey lists
     * the nodes whose membership or demand changed since they were keyed (the cluster lists
     * those whose free GPUs or health changed: gs_cluster_changed_nodes) */
    int ix;
    nclass *cls;
    int ncls;
    nheap *heaps;
    size_t nheaps;
    int32_t *rekey;
    size_t nrekey;
    bad_pair *bad;
    size_t nbad, capbad;
    /* the bad pairs as a matrix over model ids [0, nbadm), when it could be allocated
     * (badm_off: it could not once; is_bad then searches the list) */
    unsigned char *badm;
    size_t nbadm;
    int badm_off;
    int32_t *packed; /* jobs whose pack_at was set (a superset of those with a pack to judge) */
    size_t npacked, cappacked;
    int slice_armed, intro_armed, slice_due, intro_due;
    int departed;    /* a job left since the last pass: try to defragment */
    size_t nelastic; /* arrived, unfinished jobs with max_gpus > 0 */
    int *scratch;
    size_t capscratch;
    /* the first allocation failure (GS_ENOMEM): every hook returns it and a pass
     * stops; what failed leaves the lists consistent (a job is queued or a member
     * or neither), the engine is failed (engine.h, "Errors") */
    int err;
    gj spare; /* what J() hands out when it cannot grow */
} gandiva;

/* ---- bookkeeping ------------------------------------------------------------------------ */

static int oom(gandiva *g)
{
    if (!g->err) g->err = GS_ENOMEM;
    return GS_ENOMEM;
}

/* The record of a slot.  Records grow on arrival (gd_arrival/gd_adopt check g->err), so
 * later calls do not allocate; out of memory, a scratch record. */
static gj *J(gandiva *g, int32_t slot)
{
    if ((size_t)slot >= g->capjobs) {
        size_t nc = g->capjobs ? g->capjobs : 1024;
        while (nc <= (size_t)slot) nc *= 2;
        gj *n = realloc(g->jobs, nc * sizeof *n);
        if (!n) {
            oom(g);
            g->spare = (gj){.node = -1, .next = -1, .prev = -1, .util = -1, .q = -1};
            return &g->spare;
        }
        for (size_t i = g->capjobs; i < nc; i++)
            n[i] = (gj){.node = -1, .next = -1, .prev = -1, .util = -1, .q = -1};
        g->jobs = n;
        g->capjobs = nc;
    }
    return &g->jobs[slot];
}

static gs_job *job(gandiva *g, int32_t slot)
{
    return gs_policy_job(g->e, (size_t)slot);
}

static int *scratch(gandiva *g, size_t n)
{
    if (n > g->capscratch) {
        size_t nc = g->capscratch ? g->capscratch : 64;
        while (nc < n) nc *= 2;
        int *p = realloc(g->scratch, nc * sizeof *p);
        if (!p) {
            oom(g);
            return NULL;
        }
        g->scratch = p;
        g->capscratch = nc;
    }
    return g->scratch;
}

/* Something on node n changed: its cached demand and waiting count must be recounted, its
 * place in the index looked at again. */
static void invalidate(gandiva *g, int32_t n)
{
    gnode *nd = &g->nodes[n];
    if (!nd->rekey) {
        nd->rekey = 1;
        g->rekey[g->nrekey++] = n;
    }
    if (!nd->cached) return;
    nd->cached = 0;
    if (nd->nwait) g->nwaitnodes--;
    if (!nd->stale) {
        nd->stale = 1;
        g->stale[g->nstale++] = n;
    }
}

static void mark_dirty(gandiva *g, int32_t n)
{
    if (n < 0) return;
    invalidate(g, n);
    if (g->nodes[n].dirty) return;
    g->nodes[n].dirty = 1;
    g->dirty[g->ndirty++] = n;
}

/* Mark the nodes of a job's current or last GPUs dirty (GPUs may have been freed). */
static void dirty_gpus(gandiva *g, const gs_job *j)
{
    const int32_t *a = j->alloc ? j->alloc : j->last_alloc;
    int n = j->alloc ? j->nalloc : j->nlast_alloc;
    for (int k = 0; a && k < n; k++) mark_dirty(g, gs_cluster_gpu(g->c, a[k])->node);
}

static void mem_add(gandiva *g, int32_t n, int32_t slot)
{
    gnode *nd = &g->nodes[n];
    gj *x = J(g, slot);
    x->node = n;
    x->next = -1;
    x->prev = nd->tail;
    if (nd->tail >= 0)
        J(g, nd->tail)->next = slot;
    else
        nd->head = slot;
    nd->tail = slot;
    if (nd->nmem++ == 0) {
        nd->aff = job(g, slot)->gpus;
        nd->acct = gs_engine_now(g->e);
    }
    x->deficit = 0;
    x->mark = gs_job_executed(job(g, slot), gs_engine_now(g->e));
    if (x->util < 0) nd->nfresh++;
    mark_dirty(g, n);
}

static void mem_del(gandiva *g, int32_t slot)
{
    gj *x = J(g, slot);
    if (x->node < 0) return;
    gnode *nd = &g->nodes[x->node];
    if (x->prev >= 0)
        J(g, x->prev)->next = x->next;
    else
        nd->head = x->next;
    if (x->next >= 0)
        J(g, x->next)->prev = x->prev;
    else
        nd->tail = x->prev;
    if (--nd->nmem == 0) nd->aff = 0;
    if (x->util < 0) nd->nfresh--;
    mark_dirty(g, x->node);
    x->node = -1;
    x->next = x->prev = -1;
}

/* Insert slot into q at its arrival position (slots follow arrival order). */
static int insert_ordered(gs_jobq *q, int32_t slot)
{
    if (q->tail < 0 || q->tail < slot) return gs_jobq_push_back(q, slot);
    for (int32_t s = gs_jobq_first(q); s >= 0; s = gs_jobq_next(q, s))
        if (s > slot) return gs_jobq_insert_before(q, s, slot);
    return gs_jobq_push_back(q, slot);
}

/* Put a job in the queue (at its arrival position).  Out of memory: it stays out. */
static void enqueue(gandiva *g, int32_t slot)
{
    const gs_job *j = job(g, slot);
    int k = 0;
    while (k < g->nsq && (g->sq[k].gpus != j->gpus || g->sq[k].type != j->gpu_type)) k++;
    if (k == g->nsq) {
        if (g->nsq == g->capsq) {
            int nc = g->capsq ? g->capsq * 2 : 8;
            sizeq *n = realloc(g->sq, (size_t)nc * sizeof *n);
            if (!n) {
                oom(g);
                return;
            }
            g->sq = n;
            g->capsq = nc;
        }
        g->sq[k] = (sizeq){.gpus = j->gpus, .type = j->gpu_type};
        gs_jobq_init(&g->sq[k].q);
        g->nsq++;
    }
    if (insert_ordered(&g->sq[k].q, slot)) {
        oom(g);
        return;
    }
    if (j->first_start != GS_TIME_NONE && insert_ordered(&g->ranq, slot)) {
        gs_jobq_remove(&g->sq[k].q, slot);
        oom(g);
        return;
    }
    J(g, slot)->q = k;
    g->nqueued++;
    gs_engine_set_reason(g->e, job(g, slot), "Resources");
}

static void dequeue(gandiva *g, int32_t slot)
{
    gj *x = J(g, slot);
    if (x->q < 0) return;
    gs_jobq_remove(&g->sq[x->q].q, slot);
    gs_jobq_remove(&g->ranq, slot);
    x->q = -1;
    g->nqueued--;
}

static int queued(gandiva *g, int32_t slot)
{
    return J(g, slot)->q >= 0;
}

static int node_free(const gandiva *g, int32_t n)
{
    const gs_node *nd = gs_cluster_node(g->c, n);
    if (nd->down) return 0;
    return gs_cluster_cell(g->c, nd->cell)->free;
}

/*
 * The most free GPUs of one node, from the cluster's aggregates (O(1)): the root's
 * max_node_free is the largest free count of a node cell; a node marked down has all its GPUs
 * down, so its cell counts no free GPU, as node_free() says.  gs_cluster_free() is likewise
 * the sum of node_free() over the nodes.
 */
static int most_free(const gandiva *g)
{
    return gs_cluster_cell(g->c, 0)->max_node_free;
}

static int waiting(const gs_job *j)
{
    return j->state == GS_JOB_PENDING || j->state == GS_JOB_SUSPENDED;
}

static void node_count(gandiva *g, int32_t n, int *demand, int *nwait)
{
    int d = 0, w = 0;
    for (int32_t s = g->nodes[n].head; s >= 0; s = J(g, s)->next) {
        const gs_job *j = job(g, s);
        if (!j->pack_guest) d += j->gpus;
        w += waiting(j);
    }
    *demand = d;
    *nwait = w;
}

/*
 * Members' GPU demand (not counting packed guests) and waiting count of a node,
 * recomputed only after something on the node changed (invalidate).
 */
static void node_stats(gandiva *g, int32_t n)
{
    gnode *nd = &g->nodes[n];
    if (nd->cached) return;
    node_count(g, n, &nd->demand, &nd->nwait);
    nd->cached = 1;
    if (nd->nwait) g->nwaitnodes++;
}

static int node_demand(gandiva *g, int32_t n)
{
    node_stats(g, n);
    return g->nodes[n].demand;
}

static int node_has_waiting(gandiva *g, int32_t n)
{
    node_stats(g, n);
    return g->nodes[n].nwait > 0;
}

/* Does any node have waiting members?  Recounts the nodes invalidated since the last call:
 * O(changed nodes' members), not O(nodes). */
static int any_waiting(gandiva *g)
{
    while (g->nstale) {
        int32_t n = g->stale[--g->nstale];
        g->nodes[n].stale = 0;
        node_stats(g, n);
    }
    return g->nwaitnodes > 0;
}

static double weight(const gandiva *g, const gs_job *j)
{
    return g->prio_weights && j->priority > 0 ? 1.0 + (double)j->priority : 1.0;
}

/*
 * Choose j->gpus free GPUs on node n: the GPUs it left if it is suspended and
 * they are free (required in the daemon, unless its executor can restore a
 * job on other GPUs of its node: live_remap), else the lowest free ones, GPUs
 * not busy with a job that just left first.  Returns 1 and fills out[].
 */
static int pick_gpus(gandiva *g, int32_t n, const gs_job *j, int *out)
{
    const gs_node *nd = gs_cluster_node(g->c, n);
    if (nd->down) return 0;
    int need = j->gpus;
    if (j->state == GS_JOB_SUSPENDED && j->last_alloc && j->nlast_alloc == need) {
        int ok = 1;
        for (int k = 0; k < need && ok; k++) {
            const gs_gpu *gp = gs_cluster_gpu(g->c, j->last_alloc[k]);
            ok = gp->node == n && gp->users == 0 && !gp->down;
        }
        if (ok) {
            for (int k = 0; k < need; k++) out[k] = j->last_alloc[k];
            return 1;
        }
        /* a stopped process can only continue where it was (pinned); a checkpointed one
         * anywhere on its node (live_remap) */
        if (g->pinned) return 0;
        for (int k = 0; g->live && k < need; k++)
            if (gs_cluster_gpu(g->c, j->last_alloc[k])->node != n) return 0;
    }
    gs_time now = gs_engine_now(g->e);
    int k = 0;
    for (int pass = 0; pass < 2 && k < need; pass++)
        for (int32_t x = nd->gpu_lo; x < nd->gpu_hi && k < need; x++) {
            const gs_gpu *gp = gs_cluster_gpu(g->c, x);
            if (gp->users || gp->down || (j->gpu_type >= 0 && gp->type != j->gpu_type)) continue;
            /* memory stopped jobs keep there (suspend_mech=sigstop) must leave room for it */
            if (!gs_engine_gpu_fits(g->e, j, x)) continue;
            int busy = gs_engine_gpu_busy_until(g->e, x) > now;
            if (busy != pass) continue;
            out[k++] = x;
        }
    return k == need;
}

/* Start or resume member j on its node's free GPUs. */
static int run_member_on(gandiva *g, gs_job *j, int32_t n, const int *gpus)
{
    invalidate(g, n);
    int rc = j->state == GS_JOB_PENDING ? gs_engine_start(g->e, j, gpus, j->gpus)
                                        : gs_engine_resume(g->e, j, gpus, j->gpus);
    return rc == GS_ENOMEM ? oom(g) : rc;
}

static int run_member(gandiva *g, gs_job *j, int32_t n)
{
    int *gpus = scratch(g, (size_t)j->gpus);
    if (!gpus) return GS_ENOMEM;
    if (!pick_gpus(g, n, j, gpus)) return GS_ENOFIT;
    return run_member_on(g, j, n, gpus);
}

/* ---- placement (reactive mode) ------------------------------------------------------------ */

/*
 * Placement index.  choose_node's answer depends on each node's class (GPUs, GPU types), down
 * flag, free GPUs, members (none, or their affinity) and demand; every node that is up sits in
 * one heap per (class, members ? affinity + 1 : 0, free GPUs), ordered by (demand / GPUs,
 * index) - the order in which choose_node's scan prefers nodes within a step.  A node is keyed
 * again when the cluster reports its free GPUs or health changed (gs_cluster_changed_nodes) or
 * the policy changed its members or demand (invalidate: g->rekey); ix_refresh does both before
 * every query, so a query sees exactly what a scan of every node would.  A query looks at the
 * heads of the heaps (classes x affinities x free counts, not nodes).
 */
static int ix_less(const gandiva *g, int32_t a, int32_t b)
{
    double x = g->nodes[a].ixload, y = g->nodes[b].ixload;
    return x < y || (x == y && a < b);
}

static void heap_set(gandiva *g, nheap *h, int32_t i, int32_t n)
{
    h->v[i] = n;
    g->nodes[n].hpos = i;
}

static void heap_up(gandiva *g, nheap *h, int32_t i)
{
    int32_t n = h->v[i];
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!ix_less(g, n, h->v[p])) break;
        heap_set(g, h, i, h->v[p]);
        i = p;
    }
    heap_set(g, h, i, n);
}

static void heap_down(gandiva *g, nheap *h, int32_t i)
{
    int32_t n = h->v[i];
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && ix_less(g, h->v[c + 1], h->v[c])) c++;
        if (!ix_less(g, h->v[c], n)) break;
        heap_set(g, h, i, h->v[c]);
        i = c;
    }
    heap_set(g, h, i, n);
}

static void heap_del(gandiva *g, nheap *h, int32_t i)
{
    int32_t last = h->v[--h->n];
    if (i == h->n) return;
    heap_set(g, h, i, last);
    heap_up(g, h, i);
    heap_down(g, h, g->nodes[last].hpos);
}

static int heap_add(gandiva *g, nheap *h, int32_t n)
{
    if (h->n == h->cap) {
        int32_t nc = h->cap ? h->cap * 2 : 8;
        int32_t *v = realloc(h->v, (size_t)nc * sizeof *v);
        if (!v) return oom(g);
        h->v = v;
        h->cap = nc;
    }
    h->v[h->n] = n;
    heap_up(g, h, h->n++);
    return 0;
}

static size_t ix_bucket(const gandiva *g, int32_t cls, int aff1, int fr)
{
    return ((size_t)cls * (size_t)(g->maxg + 2) + (size_t)aff1) * (size_t)(g->maxg + 1) +
           (size_t)fr;
}

/* Put node n where its current state belongs. */
static void ix_key(gandiva *g, int32_t n)
{
    gnode *nd = &g->nodes[n];
    int32_t b = -1;
    int dem = 0;
    double ld = 0;
    if (!gs_cluster_node(g->c, n)->down) {
        int fr = node_free(g, n), a1 = 0;
        if (nd->nmem) {
            dem = node_demand(g, n);
            ld = (double)dem / nd->ngpus;
            a1 = nd->aff + 1;
        }
        if (a1 < 0 || a1 > g->maxg + 1 || fr < 0 || fr > nd->ngpus) {
            g->ix = 0; /* cannot happen (members fit a node); scan from now on */
            return;
        }
        b = (int32_t)ix_bucket(g, nd->cls, a1, fr);
    }
    if (b == nd->bucket && ld == nd->ixload) {
        nd->ixdem = dem;
        return;
    }
    if (nd->bucket >= 0) heap_del(g, &g->heaps[nd->bucket], nd->hpos);
    nd->bucket = -1;
    nd->ixload = ld;
    nd->ixdem = dem;
    if (b < 0) return;
    if (heap_add(g, &g->heaps[b], n) == 0) {
        nd->bucket = b;
    } else if (!nd->rekey) { /* out of memory: it stays due (the policy is failed anyway) */
        nd->rekey = 1;
        g->rekey[g->nrekey++] = n;
    }
}

/* Key again the nodes changed since the last query. */
static void ix_refresh(gandiva *g)
{
    const int32_t *ch;
    size_t nch = gs_cluster_changed_nodes(g->c, &ch);
    for (size_t i = 0; i < nch && g->ix; i++) ix_key(g, ch[i]);
    gs_cluster_clear_changed(g->c);
    while (g->nrekey && g->ix && !g->err) {
        int32_t n = g->rekey[--g->nrekey];
        g->nodes[n].rekey = 0;
        ix_key(g, n);
    }
}

/* The least node of heap b other than 'except', or -1. */
static int32_t ix_head(const gandiva *g, size_t b, int32_t except)
{
    const nheap *h = &g->heaps[b];
    if (!h->n) return -1;
    if (h->v[0] != except) return h->v[0];
    /* the second least is a child of the root */
    int32_t x = h->n > 1 ? h->v[1] : -1, y = h->n > 2 ? h->v[2] : -1;
    if (x < 0 || (y >= 0 && ix_less(g, y, x))) x = y;
    return x;
}

/* Keep n as the step's choice if it precedes the current one in the scan's order. */
static void ix_offer(const gandiva *g, int32_t *best, int32_t n)
{
    if (n >= 0 && (*best < 0 || ix_less(g, n, *best))) *best = n;
}

/* choose_node from the index: the same answer as the scan below. */
static int32_t choose_node_ix(gandiva *g, const gs_job *j, int32_t except, int *slice)
{
    int need = j->gpus;
    int32_t best[4] = {-1, -1, -1, -1};
    *slice = 0;
    for (int32_t c = 0; c < g->ncls; c++) {
        const nclass *k = &g->cls[c];
        if (k->ngpus < need) continue;
        if (j->gpu_type >= 0 && !(k->types & (1u << j->gpu_type))) continue;
        for (int fr = need; fr <= k->ngpus; fr++) {
            ix_offer(g, &best[1], ix_head(g, ix_bucket(g, c, 0, fr), except));
            for (int a = 0; a <= g->maxg; a++)
                ix_offer(g, &best[a == need ? 0 : 2],
                         ix_head(g, ix_bucket(g, c, a + 1, fr), except));
        }
        if (!g->slice) continue;
        /* time-slicing: least demand first, and demand only grows along a heap of one class */
        for (int fr = 0; fr < need; fr++) {
            int32_t n = ix_head(g, ix_bucket(g, c, need + 1, fr), except);
            if (n >= 0 && g->nodes[n].ixdem + need <= g->oversub * k->ngpus)
                ix_offer(g, &best[3], n);
        }
    }
    for (int s = 0; s < 4; s++)
        if (best[s] >= 0) {
            *slice = s == 3;
            return best[s];
        }
    return -1;
}

/*
 * A node for j by Gandiva's order, or -1.  *slice = 1 when the only choice is
 * to time-slice on it.
 */
static int32_t choose_node(gandiva *g, const gs_job *j, int32_t except, int *slice)
{
    if (g->ix) ix_refresh(g);
    if (g->err) return -1;
    if (g->ix && j->gpus >= 1 && j->gpus <= g->maxg) return choose_node_ix(g, j, except, slice);
    int need = j->gpus;
    int32_t best[4] = {-1, -1, -1, -1};
    double load[4] = {0, 0, 0, 0};
    *slice = 0;
    for (size_t i = 0; i < g->nnodes; i++) {
        int32_t n = (int32_t)i;
        const gnode *nd = &g->nodes[n];
        if (n == except || nd->ngpus < need || gs_cluster_node(g->c, n)->down) continue;
        if (j->gpu_type >= 0 && !(gs_cluster_cell(g->c, nd->cell)->gpu_types & (1u << j->gpu_type)))
            continue;
        int fr = node_free(g, n);
        double ld = 0;
        int step = -1;
        if (nd->nmem == 0) {
            if (fr >= need) step = 1;
        } else {
            int dem = node_demand(g, n);
            ld = (double)dem / nd->ngpus;
            if (fr >= need)
                step = nd->aff == need ? 0 : 2;
            else if (g->slice && nd->aff == need && dem + need <= g->oversub * nd->ngpus)
                step = 3;
        }
        if (step < 0) continue;
        if (best[step] < 0 || (step != 1 && ld < load[step])) {
            best[step] = n;
            load[step] = ld;
        }
    }
    for (int s = 0; s < 4; s++)
        if (best[s] >= 0) {
            *slice = s == 3;
            return best[s];
        }
    return -1;
}

/*
 * Place queued jobs in arrival order: a merge of the per-shape queues by
 * slot.  When the oldest job of a shape finds nothing, the others of that
 * shape cannot either in this pass: the shape is dropped until the next.
 */
static void place_queue(gandiva *g)
{
    if (!g->nqueued) return;
    unsigned char *failed = calloc((size_t)g->nsq, 1);
    if (!failed) {
        oom(g);
        return;
    }
    while (!g->err) {
        int best = -1;
        for (int k = 0; k < g->nsq; k++) {
            int32_t h = gs_jobq_first(&g->sq[k].q);
            if (!failed[k] && h >= 0 && (best < 0 || h < gs_jobq_first(&g->sq[best].q))) best = k;
        }
        if (best < 0) break;
        int32_t s = gs_jobq_first(&g->sq[best].q);
        gs_job *j = job(g, s);
        if (j->gpus > g->maxg) {
            /* larger than a node: whole nodes, consolidated, never time-sliced */
            if (gs_engine_try_start(g->e, j, GS_LOCALITY_STRICT) == 0)
                dequeue(g, s);
            else
                failed[best] = 1;
            continue;
        }
        int slice;
        int32_t n = choose_node(g, j, -1, &slice);
        if (n < 0) {
            failed[best] = 1;
            continue;
        }
        dequeue(g, s);
        mem_add(g, n, s);
        if (slice) {
            gs_engine_set_reason(g->e, j, "time-sliced: waiting for its turn");
        } else if (run_member(g, j, n) != 0) {
            /* CPU or memory of the node refused it: back to the queue */
            mem_del(g, s);
            enqueue(g, s);
            failed[best] = 1;
        }
    }
    free(failed);
}

/* ---- time-slicing ----------------------------------------------------------------------- */

typedef struct cand {
    int32_t slot;
    int32_t order; /* list order */
    int32_t running;
    double deficit; /* in units of a tenth of a quantum: closer deficits are a tie */
} cand;

/* Largest deficit first; on a tie a waiting job before a running one (round robin), then list
 * order. */
static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->deficit != y->deficit) return x->deficit > y->deficit ? -1 : 1;
    if (x->running != y->running) return x->running - y->running;
    return (x->order > y->order) - (x->order < y->order);
}

/* Members that take part in time-slicing (not packed), sorted by deficit; returns count. */
static size_t slice_members(gandiva *g, int32_t n, cand **out)
{
    size_t k = 0;
    for (int32_t s = g->nodes[n].head; s >= 0; s = J(g, s)->next) k++;
    cand *v = malloc((k ? k : 1) * sizeof *v);
    *out = v;
    if (!v) return oom(g), 0;
    k = 0;
    int32_t ord = 0;
    for (int32_t s = g->nodes[n].head; s >= 0; s = J(g, s)->next, ord++) {
        const gs_job *j = job(g, s);
        if (j->pack_with >= 0) continue;
        /* a tenth of a quantum apart is a tie: wall-clock jitter in the daemon must not
         * decide, a job that waited goes first (round robin) */
        double unit = 0.1 * gs_time_to_sec(g->quantum);
        v[k++] = (cand){s, ord, j->state == GS_JOB_RUNNING, floor(J(g, s)->deficit / unit + 0.5)};
    }
    qsort(v, k, sizeof *v, cmp_cand);
    *out = v;
    return k;
}

/* Deficit accounting on node n up to now: each member is owed its weighted share. */
static void account(gandiva *g, int32_t n)
{
    gnode *nd = &g->nodes[n];
    gs_time now = gs_engine_now(g->e);
    double dt = gs_time_to_sec(now - nd->acct);
    nd->acct = now;
    if (dt <= 0) return;
    double cap = 0, wsum = 0;
    for (int32_t s = nd->head; s >= 0; s = J(g, s)->next) {
        const gs_job *j = job(g, s);
        if (j->pack_with >= 0) continue;
        wsum += weight(g, j) * j->gpus;
        if (j->state == GS_JOB_RUNNING) cap += j->gpus;
    }
    cap += node_free(g, n);
    for (int32_t s = nd->head; s >= 0; s = J(g, s)->next) {
        gs_job *j = job(g, s);
        gj *x = J(g, s);
        gs_time ex = gs_job_executed(j, now);
        double ran = gs_time_to_sec(ex - x->mark);
        x->mark = ex;
        if (j->pack_with >= 0) continue;
        double share = wsum > 0 ? cap * weight(g, j) / wsum : 0;
        if (share > 1) share = 1;
        x->deficit += dt * share - ran;
    }
}

/*
 * The run set where a stopped job keeps its GPUs and memory (g->parked), GPU by GPU: largest
 * deficit first, a running member on its own GPUs and a suspended one on those it left, if no
 * member chosen before claimed them; a pending member on unclaimed GPUs where it fits next to
 * the memory parked there - counting, when 'rotating', the memory of the running member it
 * would displace, which would be parked there too - preferring GPUs no suspended member waits
 * for.  Claimable: GPUs that are up and free, and with 'rotating' those of running candidates
 * (rotate() decides who keeps running, fill() who starts).  run[i] = 1 for the chosen;
 * pick[i * node GPUs ..] holds a chosen pending member's GPUs.  Never a deadlock: when no
 * member runs, every suspended one's GPUs are free, so the first of them is chosen.
 */
static void run_set_parked(gandiva *g, int32_t n, const cand *v, size_t k, unsigned char *run,
                           int *pick, int rotating)
{
    const gs_node *nd = gs_cluster_node(g->c, n);
    int lo = nd->gpu_lo, ng = nd->gpu_hi - nd->gpu_lo;
    size_t sz = ng > 0 ? (size_t)ng : 1;
    unsigned char *taken = malloc(sz), *waited = calloc(sz, 1);
    int *held = calloc(sz, sizeof *held); /* MB a displaced running member would park */
    if (!taken || !waited || !held) {
        free(taken), free(waited), free(held);
        oom(g);
        return;
    }
    for (int x = 0; x < ng; x++) {
        const gs_gpu *gp = gs_cluster_gpu(g->c, lo + x);
        taken[x] = gp->down || gp->users;
    }
    for (size_t i = 0; i < k; i++) {
        const gs_job *j = job(g, v[i].slot);
        if (j->state == GS_JOB_RUNNING && rotating)
            for (int a = 0; a < j->nalloc; a++)
                if (j->alloc[a] >= lo && j->alloc[a] < lo + ng) {
                    taken[j->alloc[a] - lo] = 0;
                    held[j->alloc[a] - lo] = gs_engine_job_gpu_mem(g->e, j);
                }
        if (j->state == GS_JOB_SUSPENDED && j->last_alloc)
            for (int a = 0; a < j->nlast_alloc; a++)
                if (j->last_alloc[a] >= lo && j->last_alloc[a] < lo + ng)
                    waited[j->last_alloc[a] - lo] = 1;
    }
    for (size_t i = 0; i < k; i++) {
        const gs_job *j = job(g, v[i].slot);
        if (j->state == GS_JOB_PENDING) {
            int need = j->gpus, got = 0, mem = gs_engine_job_gpu_mem(g->e, j);
            int *out = pick + i * sz;
            for (int pass = 0; pass < 2 && got < need; pass++)
                for (int x = 0; x < ng && got < need; x++) {
                    const gs_gpu *gp = gs_cluster_gpu(g->c, lo + x);
                    if (taken[x] || waited[x] != pass) continue;
                    if (j->gpu_type >= 0 && gp->type != j->gpu_type) continue;
                    int64_t there = (int64_t)gs_engine_gpu_parked_mem(g->e, lo + x) + held[x];
                    const char *tn = gs_cluster_gpu_type_name(g->c, gp->type);
                    if (there > 0 &&
                        there + mem > gs_profiles_gpu_mem(gs_engine_profiles(g->e), tn))
                        continue;
                    out[got++] = lo + x;
                }
            if (got < need) continue;
            for (int a = 0; a < need; a++) taken[out[a] - lo] = 1;
            run[i] = 1;
            continue;
        }
        if (j->state == GS_JOB_RUNNING && !rotating) continue;
        const int32_t *on = j->state == GS_JOB_RUNNING ? j->alloc : j->last_alloc;
        int non = j->state == GS_JOB_RUNNING ? j->nalloc : j->nlast_alloc;
        int ok = on && non == j->gpus;
        for (int a = 0; ok && a < non; a++)
            ok = on[a] >= lo && on[a] < lo + ng && !taken[on[a] - lo];
        if (!ok) continue;
        for (int a = 0; a < non; a++) taken[on[a] - lo] = 1;
        run[i] = 1;
    }
    free(taken), free(waited), free(held);
}

/* Start waiting members of n, largest deficit first, while they fit (g->parked: those
 * run_set_parked chooses, on the GPUs it chose). */
static void fill(gandiva *g, int32_t n)
{
    if (!node_free(g, n) || !node_has_waiting(g, n)) return;
    cand *v;
    size_t k = slice_members(g, n, &v);
    unsigned char *run = NULL;
    int *pick = NULL;
    if (g->parked) {
        const gs_node *nd = gs_cluster_node(g->c, n);
        size_t ng = nd->gpu_hi > nd->gpu_lo ? (size_t)(nd->gpu_hi - nd->gpu_lo) : 1;
        run = calloc(k ? k : 1, 1);
        pick = malloc((k ? k : 1) * ng * sizeof *pick);
        if (!run || !pick) {
            free(run), free(pick), free(v);
            oom(g);
            return;
        }
        run_set_parked(g, n, v, k, run, pick, 0);
        for (size_t i = 0; i < k && !g->err; i++) {
            gs_job *j = job(g, v[i].slot);
            if (!run[i] || !waiting(j)) continue;
            if (j->state == GS_JOB_PENDING)
                run_member_on(g, j, n, pick + i * ng);
            else
                run_member(g, j, n);
        }
    }
    for (size_t i = 0; i < k && !g->parked; i++) {
        gs_job *j = job(g, v[i].slot);
        if (!waiting(j) || j->gpus > node_free(g, n)) continue;
        if (run_member(g, j, n) == 0) continue;
    }
    free(run), free(pick);
    free(v);
}

/* Quantum boundary on an oversubscribed node: suspend those that had their turn. */
static void rotate(gandiva *g, int32_t n)
{
    if (!node_has_waiting(g, n)) return;
    account(g, n);
    cand *v;
    size_t k = slice_members(g, n, &v);
    int cap = node_free(g, n);
    for (size_t i = 0; i < k; i++)
        if (job(g, v[i].slot)->state == GS_JOB_RUNNING) cap += job(g, v[i].slot)->gpus;
    /* the run set: largest deficit first, greedily by size */
    unsigned char *run = calloc(k ? k : 1, 1);
    if (!run) {
        free(v);
        oom(g);
        return;
    }
    int left = cap;
    if (g->parked) {
        const gs_node *nd = gs_cluster_node(g->c, n);
        size_t ng = nd->gpu_hi > nd->gpu_lo ? (size_t)(nd->gpu_hi - nd->gpu_lo) : 1;
        int *pick = malloc((k ? k : 1) * ng * sizeof *pick);
        if (!pick) {
            free(run), free(v);
            oom(g);
            return;
        }
        run_set_parked(g, n, v, k, run, pick, 1);
        free(pick);
    }
    for (size_t i = 0; i < k && !g->parked; i++) {
        int need = job(g, v[i].slot)->gpus;
        if (need <= left) {
            run[i] = 1;
            left -= need;
        }
    }
    for (size_t i = 0; i < k; i++) {
        gs_job *j = job(g, v[i].slot);
        /* refused only if it is about to end (g->slice: the engine can suspend); a
         * refused job keeps running and fill() starts nobody in its place */
        if (!run[i] && j->state == GS_JOB_RUNNING &&
            gs_engine_suspend(g->e, j, "time slice") == GS_ENOMEM)
            oom(g);
    }
    invalidate(g, n);
    free(run);
    free(v);
    fill(g, n);
}

/* ---- introspection: packing ------------------------------------------------------------- */

static int is_bad(const gandiva *g, int32_t a, int32_t b)
{
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    if (!g->badm_off && a >= 0) /* a model id past the matrix is in no bad pair */
        return (size_t)b < g->nbadm && g->badm[(size_t)a * g->nbadm + (size_t)b];
    for (size_t i = 0; i < g->nbad; i++)
        if (g->bad[i].a == a && g->bad[i].b == b) return 1;
    return 0;
}

static void add_bad(gandiva *g, int32_t a, int32_t b)
{
    if (is_bad(g, a, b)) return;
    if (g->nbad == g->capbad) {
        size_t nc = g->capbad ? g->capbad * 2 : 16;
        bad_pair *p = realloc(g->bad, nc * sizeof *p);
        if (!p) { /* forgetting a bad pair would try it again: a different schedule */
            oom(g);
            return;
        }
        g->bad = p;
        g->capbad = nc;
    }
    g->bad[g->nbad++] = (bad_pair){a < b ? a : b, a < b ? b : a};
    if (g->badm_off) return;
    int32_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (lo < 0) {
        g->badm_off = 1; /* not a matrix index */
        return;
    }
    if ((size_t)hi >= g->nbadm) {
        size_t nn = g->nbadm ? g->nbadm : 16;
        while (nn <= (size_t)hi) nn *= 2;
        unsigned char *m = nn <= 4096 ? calloc(nn * nn, 1) : NULL; /* at most 16 MB */
        if (!m) {
            g->badm_off = 1; /* the list still has every pair; not out of memory */
            free(g->badm);
            g->badm = NULL;
            return;
        }
        for (size_t i = 0; i < g->nbadm; i++) memcpy(m + i * nn, g->badm + i * g->nbadm, g->nbadm);
        free(g->badm);
        g->badm = m;
        g->nbadm = nn;
    }
    g->badm[(size_t)lo * g->nbadm + (size_t)hi] = 1;
}

static int profiled(gandiva *g, const gs_job *j, gs_time now)
{
    return gs_job_executed(j, now) - gs_job_packed(j, now) >= g->window;
}

/* The job's GPU utilisation from its profile (cached: profiles do not change - but on a
 * cluster of several GPU types the profile is that of the type it runs on when first looked
 * up, so when that happens is part of the schedule). */
static double util_of(gandiva *g, const gs_job *j)
{
    gj *x = J(g, j->slot);
    if (x->util < 0) {
        x->util = gs_engine_job_profile(g->e, j)->gpu_util;
        if (x->node >= 0) g->nodes[x->node].nfresh--;
    }
    return x->util;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/*
 * Judge packs that have run one profiling window; roll back those that lose.  Nodes by index,
 * members in list order, as a walk of every node would - but only the nodes holding a job
 * whose pack_at is set (g->packed lists every such job; pack_jobs adds them).
 */
static void judge_packs(gandiva *g)
{
    gs_time now = gs_engine_now(g->e);
    size_t k = 0, nn = 0;
    for (size_t i = 0; i < g->npacked; i++) {
        int32_t s = g->packed[i];
        if (!J(g, s)->pack_at || gs_job_state_final(job(g, s)->state)) continue;
        g->packed[k++] = s;
        int32_t n = J(g, s)->node;
        if (n >= 0 && !g->nodes[n].judge) {
            g->nodes[n].judge = 1;
            nn++;
        }
    }
    g->npacked = k;
    if (!nn) return;
    int32_t *nodes = malloc(nn * sizeof *nodes);
    nn = 0;
    for (size_t i = 0; i < k; i++) {
        int32_t n = J(g, g->packed[i])->node;
        if (n < 0 || !g->nodes[n].judge) continue;
        g->nodes[n].judge = 0;
        if (nodes) nodes[nn++] = n;
    }
    if (!nodes) {
        oom(g);
        return;
    }
    qsort(nodes, nn, sizeof *nodes, cmp_i32);
    for (size_t ni = 0; ni < nn; ni++) {
        size_t i = (size_t)nodes[ni];
        for (int32_t s = g->nodes[i].head, nx; s >= 0; s = nx) {
            nx = J(g, s)->next;
            gs_job *j = job(g, s);
            gj *x = J(g, s);
            if (!j->pack_guest || !x->pack_at || now - x->pack_at < g->window) continue;
            gs_job *h = job(g, j->pack_with);
            x->pack_at = 0;
            if (j->pack_rate + h->pack_rate >= g->pack_gain) continue; /* it pays */
            add_bad(g, j->model_id, h->model_id);
            /* refused (about to end, or the program cannot suspend): the pack stays, judged
             * once (pack_at is 0), and the pair is not tried again */
            int rc = gs_engine_suspend(g->e, j, "pack rolled back: slower than time-slicing");
            if (rc == 0)
                mark_dirty(g, (int32_t)i);
            else if (rc == GS_ENOMEM)
                oom(g);
        }
    }
    free(nodes);
}

typedef struct ucand {
    int32_t slot;
    int32_t gpus; /* its size (pack_jobs groups hosts by it) */
    double util;
} ucand;

static int cmp_ucand(const void *a, const void *b)
{
    const ucand *x = a, *y = b;
    if (x->util != y->util) return x->util < y->util ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

/* Min-heap of candidates by cmp_ucand, in v[0..n): sift v[i] down. */
static void ucand_down(ucand *v, size_t n, size_t i)
{
    ucand x = v[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && cmp_ucand(&v[c + 1], &v[c]) < 0) c++;
        if (cmp_ucand(&v[c], &x) >= 0) break;
        v[i] = v[c];
        i = c;
    }
    v[i] = x;
}

static void ucand_heapify(ucand *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) ucand_down(v, n, i);
}

/* The least candidate of the heap v[0..*n), removed. */
static ucand ucand_pop(ucand *v, size_t *n)
{
    ucand top = v[0];
    v[0] = v[--*n];
    if (*n) ucand_down(v, *n, 0);
    return top;
}

/*
 * Pack waiting, profiled jobs onto the least busy running jobs (only under overload): waiting
 * jobs by utilisation, each onto the first host of its size by utilisation that takes it.
 * The order is that of sorting every candidate, but drawn from heaps as far as it is used:
 * the waiting jobs until the budget is spent, per size the hosts as far as a waiting job
 * looked; only hosts of a size some waiting job has are gathered.
 */
static void pack_jobs(gandiva *g)
{
    gs_time now = gs_engine_now(g->e);
    if (!g->nqueued && !any_waiting(g)) return; /* packing is for overload only */
    /* no member runs alone: no host (and nothing is looked up) */
    int hosts = 0;
    for (size_t i = 0; i < g->nnodes && !hosts; i++)
        for (int32_t s = g->nodes[i].head; s >= 0 && !hosts; s = J(g, s)->next) {
            const gs_job *j = job(g, s);
            hosts = j->state == GS_JOB_RUNNING && j->pack_with < 0;
        }
    if (!hosts) return;
    /* every profiled candidate's utilisation is looked up now, before any pack (util_of) */
    for (size_t i = 0; i < g->nnodes; i++)
        for (int32_t s = g->nodes[i].head; s >= 0 && g->nodes[i].nfresh; s = J(g, s)->next) {
            const gs_job *j = job(g, s);
            if (J(g, s)->util < 0 &&
                (waiting(j) || (j->state == GS_JOB_RUNNING && j->pack_with < 0)) &&
                profiled(g, j, now))
                util_of(g, j);
        }
    size_t cw = gs_jobq_len(&g->ranq), cm = 0;
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].nmem) {
            cm += (size_t)g->nodes[i].nmem;
            if (node_has_waiting(g, (int32_t)i)) cw += (size_t)g->nodes[i].nwait;
        }
    if (!cw || !cm) return;
    size_t ns = (size_t)g->maxg + 1, nw = 0;
    ucand *w = malloc(cw * sizeof *w), *h = malloc(2 * cm * sizeof *h);
    /* per size: start, heap size, prefix length, wanted */
    size_t *off = calloc(4 * ns, sizeof *off);
    if (!w || !h || !off) {
        free(w);
        free(h);
        free(off);
        oom(g);
        return;
    }
    size_t *hn = off + ns, *pn = off + 2 * ns, *want = off + 3 * ns;
    for (size_t i = 0; i < g->nnodes; i++) {
        if (!g->nodes[i].nmem || !g->nodes[i].nwait) continue; /* counted just above */
        for (int32_t s = g->nodes[i].head; s >= 0; s = J(g, s)->next) {
            const gs_job *j = job(g, s);
            /* new jobs run alone first */
            if (waiting(j) && profiled(g, j, now))
                w[nw++] = (ucand){.slot = s, .gpus = j->gpus, .util = util_of(g, j)};
        }
    }
    for (int32_t s = gs_jobq_first(&g->ranq); s >= 0; s = gs_jobq_next(&g->ranq, s)) {
        const gs_job *j = job(g, s);
        if (j->gpus <= g->maxg && profiled(g, j, now))
            w[nw++] = (ucand){.slot = s, .gpus = j->gpus, .util = util_of(g, j)};
    }
    /* hosts of the sizes wanted, grouped by size: h[off[k] ..) a heap of hn[k], and the
     * sorted prefix drawn from it at h[cm + off[k] ..) */
    for (size_t a = 0; a < nw; a++) {
        int k = w[a].gpus;
        if (k >= 0 && (size_t)k < ns) want[k] = 1;
    }
    size_t nt = 0; /* gathered at h + cm first, then grouped */
    for (size_t i = 0; i < g->nnodes && nw; i++)
        for (int32_t s = g->nodes[i].head; s >= 0; s = J(g, s)->next) {
            const gs_job *j = job(g, s);
            if (j->state == GS_JOB_RUNNING && j->pack_with < 0 && j->gpus >= 0 &&
                (size_t)j->gpus < ns && want[j->gpus] && profiled(g, j, now)) {
                h[cm + nt++] = (ucand){.slot = s, .gpus = j->gpus, .util = util_of(g, j)};
                hn[j->gpus]++;
            }
        }
    for (size_t k = 1; k < ns; k++) off[k] = off[k - 1] + hn[k - 1];
    memset(hn, 0, ns * sizeof *hn);
    for (size_t t = 0; t < nt; t++) {
        size_t k = (size_t)h[cm + t].gpus;
        h[off[k] + hn[k]++] = h[cm + t];
    }
    for (size_t k = 0; k < ns; k++) ucand_heapify(h + off[k], hn[k]);
    ucand_heapify(w, nw);
    int budget = g->pack_budget;
    while (nw && budget > 0) {
        ucand wa = ucand_pop(w, &nw);
        gs_job *j = job(g, wa.slot);
        if (j->gpus < 0 || (size_t)j->gpus >= ns) continue; /* no host of its size */
        size_t k = (size_t)j->gpus;
        ucand *pre = h + cm + off[k];
        for (size_t b = 0;; b++) {
            if (b == pn[k]) {
                if (!hn[k]) break;
                pre[pn[k]++] = ucand_pop(h + off[k], &hn[k]);
            }
            if (pre[b].slot < 0) continue;
            gs_job *host = job(g, pre[b].slot);
            if (host->gpus != j->gpus || host->pack_with >= 0 || host->state != GS_JOB_RUNNING ||
                is_bad(g, j->model_id, host->model_id))
                continue;
            int rc = gs_engine_pack(g->e, j, host);
            if (rc == GS_ENOMEM) oom(g);
            if (rc) continue;
            int32_t hnode = J(g, pre[b].slot)->node;
            if (J(g, wa.slot)->node >= 0)
                mem_del(g, wa.slot);
            else
                dequeue(g, wa.slot);
            if (hnode >= 0) mem_add(g, hnode, wa.slot);
            J(g, wa.slot)->pack_at = now > 0 ? now : 1;
            if (g->npacked == g->cappacked) {
                size_t nc = g->cappacked ? 2 * g->cappacked : 64;
                int32_t *np = realloc(g->packed, nc * sizeof *np);
                if (np) {
                    g->packed = np;
                    g->cappacked = nc;
                }
            }
            if (g->npacked < g->cappacked)
                g->packed[g->npacked++] = wa.slot;
            else
                oom(g); /* it would not be judged: the policy is failed */
            pre[b].slot = -1;
            budget--;
            break;
        }
    }
    free(w);
    free(h);
    free(off);
}

/* ---- introspection: migration ------------------------------------------------------------- */

/* Move member j (running, exclusive) from its node to node m. */
static int move_running(gandiva *g, gs_job *j, int32_t m, const char *why)
{
    int *gpus = scratch(g, (size_t)j->gpus);
    if (!gpus) return GS_ENOMEM;
    if (!pick_gpus(g, m, j, gpus)) return GS_ENOFIT;
    int rc = gs_engine_migrate(g->e, j, gpus, j->gpus, why);
    if (rc) return rc == GS_ENOMEM ? oom(g) : rc;
    mem_del(g, j->slot);
    mem_add(g, m, j->slot);
    return 0;
}

/* Waiting members of crowded nodes go where GPUs are free (migration (a)). */
static void balance(gandiva *g)
{
    int maxfree = most_free(g);
    if (!maxfree) return;
    unsigned char failed[65] = {0}; /* sizes with no node to go to in this pass */
    for (size_t i = 0; i < g->nnodes; i++) {
        int32_t n = (int32_t)i;
        if (!node_has_waiting(g, n)) continue;
        for (int32_t s = g->nodes[n].head, nx; s >= 0 && !g->err; s = nx) {
            nx = J(g, s)->next;
            gs_job *j = job(g, s);
            int sz = j->gpus > 64 ? 64 : j->gpus;
            if (!waiting(j) || j->gpus > maxfree || failed[sz]) continue;
            int slice;
            int32_t m = choose_node(g, j, n, &slice);
            if (m < 0 || slice) {
                failed[sz] = 1;
                continue;
            }
            /* a waiting job that never ran moves for free; a suspended one pays a migration,
             * and a stopped one (pinned) cannot move */
            if (j->state == GS_JOB_SUSPENDED && (!g->migrate || g->pinned)) continue;
            mem_del(g, s);
            mem_add(g, m, s);
            if (run_member(g, j, m) != 0) {
                /* back home, at the end of its list (this walk meets it again): its size is
                 * done for this pass, or two refused jobs would take turns there forever */
                mem_del(g, s);
                mem_add(g, n, s);
                failed[sz] = 1;
            }
        }
    }
}

/*
 * Defragmentation: a node whose free fraction is at least defrag_free holds
 * only a few small jobs; move them all into nodes of their affinity that have
 * room (fullest first) if that empties it.  Also moves jobs sitting on a
 * node of another affinity to a node of their own.  At most migrate_budget
 * migrations per period.
 */
static void defrag(gandiva *g)
{
    if (!g->migrate || g->defrag == DEFRAG_OFF) return;
    if (g->defrag == DEFRAG_DEMAND) {
        /* only when a waiting job fits no node although enough GPUs are free in total */
        int maxfree = most_free(g), total = gs_cluster_free(g->c), want = 0;
        for (int k = 0; k < g->nsq; k++) {
            int need = g->sq[k].gpus;
            if (gs_jobq_len(&g->sq[k].q) && need <= g->maxg && need > maxfree && need <= total)
                want = 1;
        }
        if (!want) return;
    }
    int budget = g->migrate_budget;
    int *freec = malloc(g->nnodes * sizeof *freec);
    unsigned char *src = calloc(g->nnodes, 1);
    int32_t *tgt = malloc(g->nnodes * sizeof *tgt);
    if (!freec || !src || !tgt) {
        free(freec);
        free(src);
        free(tgt);
        oom(g);
        return;
    }
    for (size_t i = 0; i < g->nnodes; i++) freec[i] = node_free(g, (int32_t)i);
    /* 1) jobs on a node of another affinity go to a node of their own */
    for (size_t i = 0; i < g->nnodes && budget > 0; i++)
        for (int32_t s = g->nodes[i].head, nx; s >= 0 && budget > 0; s = nx) {
            nx = J(g, s)->next;
            gs_job *j = job(g, s);
            if (j->state != GS_JOB_RUNNING || j->pack_with >= 0 || j->gpus == g->nodes[i].aff)
                continue;
            /* the fullest node of its affinity with room, else an empty node */
            int32_t best = -1, empty = -1;
            for (size_t m = 0; m < g->nnodes; m++) {
                if (m == i || freec[m] < j->gpus || gs_cluster_node(g->c, (int32_t)m)->down)
                    continue;
                if (!g->nodes[m].nmem) {
                    if (empty < 0 && freec[m] == g->nodes[m].ngpus) empty = (int32_t)m;
                } else if (g->nodes[m].aff == j->gpus && (best < 0 || freec[m] < freec[best])) {
                    best = (int32_t)m;
                }
            }
            if (best < 0) best = empty;
            if (best >= 0 &&
                move_running(g, j, best, "defragment: to a node of its affinity") == 0) {
                freec[best] -= j->gpus;
                freec[i] += j->gpus;
                budget--;
            }
        }
    /* 2) empty nearly idle nodes into fuller ones; targets: nodes with members, some room, not
     * themselves nearly idle (usually few, so the search is cheap) */
    size_t ntgt = 0;
    for (size_t m = 0; m < g->nnodes; m++)
        if (g->nodes[m].nmem && freec[m] > 0 && !gs_cluster_node(g->c, (int32_t)m)->down &&
            (double)freec[m] < g->defrag_free * g->nodes[m].ngpus)
            tgt[ntgt++] = (int32_t)m;
    for (size_t i = 0; i < g->nnodes && budget > 0 && ntgt; i++) {
        gnode *nd = &g->nodes[i];
        if (!nd->nmem || gs_cluster_node(g->c, (int32_t)i)->down) continue;
        if ((double)freec[i] < g->defrag_free * nd->ngpus) continue;
        int ok = 1, moves = 0;
        for (int32_t s = nd->head; s >= 0 && ok; s = J(g, s)->next) {
            const gs_job *j = job(g, s);
            ok = j->state == GS_JOB_RUNNING && j->pack_with < 0;
            moves++;
        }
        if (!ok || moves > budget) continue;
        /* plan: every member to a target node (not a source) of its affinity */
        int32_t *plan = malloc((size_t)moves * sizeof *plan);
        if (!plan) {
            oom(g);
            break;
        }
        int k = 0;
        for (int32_t s = nd->head; s >= 0 && ok; s = J(g, s)->next, k++) {
            const gs_job *j = job(g, s);
            int32_t best = -1;
            for (size_t t = 0; t < ntgt; t++) {
                int32_t m = tgt[t];
                if ((size_t)m == i || src[m] || g->nodes[m].aff != j->gpus) continue;
                if (freec[m] >= j->gpus && (best < 0 || freec[m] < freec[best])) best = m;
            }
            if (best < 0)
                ok = 0;
            else {
                plan[k] = best;
                freec[best] -= j->gpus;
            }
        }
        if (!ok) {
            /* undo the tentative reservations */
            int u = 0;
            for (int32_t s = nd->head; s >= 0 && u < k - 1; s = J(g, s)->next, u++)
                freec[plan[u]] += job(g, s)->gpus;
            free(plan);
            continue;
        }
        src[i] = 1;
        k = 0;
        for (int32_t s = nd->head, nx; s >= 0; s = nx, k++) {
            nx = J(g, s)->next;
            gs_job *j = job(g, s);
            if (move_running(g, j, plan[k], "defragment: consolidate") == 0) {
                freec[i] += j->gpus;
                budget--;
            } else {
                freec[plan[k]] += j->gpus;
            }
        }
        free(plan);
    }
    free(tgt);
    free(freec);
    free(src);
}

/* ---- introspection: grow-shrink ----------------------------------------------------------- */

static void grow_shrink(gandiva *g)
{
    if (!g->grow) return;
    gs_time now = gs_engine_now(g->e);
    int waits = g->nqueued || any_waiting(g);
    for (size_t i = 0; i < g->nnodes; i++)
        for (int32_t s = g->nodes[i].head, nx; s >= 0; s = nx) {
            nx = J(g, s)->next;
            gs_job *j = job(g, s);
            if (j->state != GS_JOB_RUNNING || j->max_gpus <= 0 || j->pack_with >= 0) continue;
            int gpt = j->gpus_per_task;
            if (waits) {
                /* others wait: give back what it grew into */
                if (j->gpus <= j->req_gpus) continue;
                if (gs_engine_resize(g->e, j, j->alloc, j->req_gpus, "shrink: others wait") ==
                    GS_ENOMEM)
                    oom(g);
                mark_dirty(g, (int32_t)i);
                continue;
            }
            int fr = node_free(g, (int32_t)i);
            int n = j->gpus + fr;
            if (n > j->max_gpus) n = j->max_gpus;
            n -= n % gpt;
            if (n <= j->gpus) continue;
            /* worth a restart only if it still has a while to run */
            double left = (double)gs_job_remaining(j, now) / j->type_rate; /* on its type */
            if (left < (double)g->grow_min) continue;
            int *gpus = scratch(g, (size_t)n);
            if (!gpus) return;
            for (int k = 0; k < j->nalloc; k++) gpus[k] = j->alloc[k];
            int k = j->nalloc;
            const gs_node *nd = gs_cluster_node(g->c, (int32_t)i);
            for (int32_t x = nd->gpu_lo; x < nd->gpu_hi && k < n; x++) {
                const gs_gpu *gp = gs_cluster_gpu(g->c, x);
                if (!gp->users && !gp->down && (j->gpu_type < 0 || gp->type == j->gpu_type))
                    gpus[k++] = x;
            }
            if (k == n && gs_engine_resize(g->e, j, gpus, n, "grow: idle GPUs") == 0)
                mark_dirty(g, (int32_t)i);
        }
}

/* ---- hooks -------------------------------------------------------------------------------- */

/* Could an elastic job grow now (running below its maximum, its node has idle GPUs)? */
static int may_grow(gandiva *g)
{
    if (!g->grow || !g->nelastic) return 0;
    for (size_t i = 0; i < g->nnodes; i++) {
        if (!g->nodes[i].nmem || !node_free(g, (int32_t)i)) continue;
        for (int32_t s = g->nodes[i].head; s >= 0; s = J(g, s)->next) {
            const gs_job *j = job(g, s);
            if (j->state == GS_JOB_RUNNING && j->max_gpus > j->gpus) return 1;
        }
    }
    return 0;
}

/*
 * Timers only while they can change something: time-slicing while some node has
 * waiting members; introspection while jobs wait (packing, defragmentation,
 * shrinking), packs await judgement, or an elastic job could grow.  A job running
 * alone for years costs no events.
 */
static void arm(gandiva *g)
{
    gs_time now = gs_engine_now(g->e);
    int crowded = any_waiting(g);
    if (crowded && g->slice && !g->slice_armed) {
        g->slice_armed = 1;
        if (gs_engine_set_timer(g->e, now + g->quantum, TAG_SLICE)) oom(g);
    }
    int useful = g->nqueued > 0 || crowded || gs_engine_packed_gpus(g->e) > 0 || may_grow(g);
    if (useful && !g->intro_armed && (g->pack || g->migrate || g->grow)) {
        g->intro_armed = 1;
        if (gs_engine_set_timer(g->e, now + g->introspect, TAG_INTRO)) oom(g);
    }
}

static int gd_schedule(void *st)
{
    gandiva *g = st;
    if (g->slice_due) {
        g->slice_due = 0;
        for (size_t i = 0; i < g->nnodes && !g->err; i++) rotate(g, (int32_t)i);
    }
    if (g->intro_due && !g->err) {
        g->intro_due = 0;
        g->departed = 0;
        if (g->pack && gs_engine_packed_gpus(g->e)) judge_packs(g);
        if (g->nelastic && !g->err) grow_shrink(g);
        if (!g->err) defrag(g);
        if (g->pack && !g->err) pack_jobs(g);
    }
    /* reactive: queued jobs, then free GPUs on nodes where something changed */
    if (!g->err) place_queue(g);
    if (g->departed && !g->err) {
        /* migration is triggered by departures too (GPUs just became free) */
        g->departed = 0;
        defrag(g);
    }
    while (g->ndirty && !g->err) {
        int32_t n = g->dirty[--g->ndirty];
        g->nodes[n].dirty = 0;
        fill(g, n);
    }
    if (!g->err && any_waiting(g)) balance(g);
    if (!g->err) arm(g);
    return g->err;
}

static int gd_timer(void *st, uint64_t tag)
{
    gandiva *g = st;
    if (tag == TAG_SLICE) {
        g->slice_armed = 0;
        g->slice_due = 1;
    } else if (tag == TAG_INTRO) {
        g->intro_armed = 0;
        g->intro_due = 1;
    }
    gs_engine_request_pass(g->e);
    return g->err;
}

static int gd_arrival(void *st, gs_job *j)
{
    gandiva *g = st;
    if (J(g, j->slot) == &g->spare) return g->err;
    if (j->max_gpus > 0) g->nelastic++;
    enqueue(g, j->slot);
    return g->err;
}

static int gd_adopt(void *st, gs_job *j)
{
    gandiva *g = st;
    if (J(g, j->slot) == &g->spare) return g->err;
    /* a job that survived a daemon restart or a reconfiguration: make it a member of its
     * node (one whose GPUs all vanished in a reconfiguration has none) */
    if (j->gpus > g->maxg || !j->alloc || j->nalloc <= 0) return g->err;
    int32_t n = gs_cluster_gpu(g->c, j->alloc[0])->node;
    for (int k = 1; k < j->nalloc; k++)
        if (gs_cluster_gpu(g->c, j->alloc[k])->node != n) return g->err; /* spans nodes */
    mem_add(g, n, j->slot);
    return g->err;
}

static int gd_requeue(void *st, gs_job *j)
{
    gandiva *g = st;
    dirty_gpus(g, j);
    mem_del(g, j->slot);
    J(g, j->slot)->pack_at = 0;
    if (!queued(g, j->slot)) enqueue(g, j->slot);
    return g->err;
}

static int gd_finish(void *st, gs_job *j)
{
    gandiva *g = st;
    if (j->max_gpus > 0 && g->nelastic) g->nelastic--;
    if (j->alloc || j->last_alloc) {
        g->departed = 1;
        gs_engine_request_pass(g->e); /* departures trigger placement and migration */
    }
    dirty_gpus(g, j);
    mem_del(g, j->slot);
    dequeue(g, j->slot);
    return g->err;
}

static int gd_node(void *st, int node, int down)
{
    gandiva *g = st;
    mark_dirty(g, node);
    if (!down) return g->err;
    /* members that never started wait in the queue instead */
    for (int32_t s = g->nodes[node].head, nx; s >= 0; s = nx) {
        nx = J(g, s)->next;
        if (job(g, s)->state == GS_JOB_PENDING) {
            mem_del(g, s);
            enqueue(g, s);
        }
    }
    return g->err;
}

/* The index holds every node that is not due to be keyed again where its state puts it. */
static int ix_check(gandiva *g, gs_diag *d)
{
    if (!g->ix) return 0;
    const int32_t *ch;
    size_t nch = gs_cluster_changed_nodes(g->c, &ch);
    for (size_t i = 0; i < nch; i++) g->nodes[ch[i]].due = 1;
    int rc = 0;
    for (size_t i = 0; i < g->nnodes && !rc; i++) {
        const gnode *nd = &g->nodes[i];
        int32_t n = (int32_t)i;
        if (nd->bucket >= 0 &&
            (g->heaps[nd->bucket].n <= nd->hpos || g->heaps[nd->bucket].v[nd->hpos] != n)) {
            rc = gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: n%zu lost in the index", i);
            break;
        }
        if (nd->rekey || nd->due) continue;
        int32_t b = -1, dem = 0;
        if (!gs_cluster_node(g->c, n)->down) {
            int nw;
            if (nd->nmem) node_count(g, n, &dem, &nw);
            b = (int32_t)ix_bucket(g, nd->cls, nd->nmem ? nd->aff + 1 : 0, node_free(g, n));
        }
        if (b != nd->bucket || dem != nd->ixdem ||
            (nd->nmem && (double)dem / nd->ngpus != nd->ixload))
            rc = gs_diag_set(
                d, GS_EINTERNAL, 0, 0,
                "gandiva: n%zu indexed in heap %d with demand %d, belongs in %d with %d", i,
                nd->bucket, nd->ixdem, b, dem);
    }
    for (size_t b = 0; b < g->nheaps && !rc; b++)
        for (int32_t k = 1; k < g->heaps[b].n && !rc; k++)
            if (ix_less(g, g->heaps[b].v[k], g->heaps[b].v[(k - 1) / 2]))
                rc = gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: heap %zu out of order", b);
    for (size_t i = 0; i < nch; i++) g->nodes[ch[i]].due = 0;
    return rc;
}

static int gd_check(void *st, gs_diag *d)
{
    gandiva *g = st;
    size_t nwn = 0;
    for (size_t i = 0; i < g->nnodes; i++) {
        int k = 0, fresh = 0;
        for (int32_t s = g->nodes[i].head; s >= 0; s = J(g, s)->next, k++) {
            const gs_job *j = job(g, s);
            fresh += J(g, s)->util < 0;
            if (J(g, s)->node != (int32_t)i)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: job %lld listed on n%zu",
                                   (long long)j->id, i);
            if (gs_job_state_final(j->state) || queued(g, s))
                return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "gandiva: job %lld (%s) is a member of n%zu", (long long)j->id,
                                   gs_job_state_name(j->state), i);
            if (j->alloc)
                for (int a = 0; a < j->nalloc; a++)
                    if (gs_cluster_gpu(g->c, j->alloc[a])->node != (int32_t)i)
                        return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                           "gandiva: job %lld runs outside its node n%zu",
                                           (long long)j->id, i);
        }
        if (g->nodes[i].cached) {
            int dem, nw;
            node_count(g, (int32_t)i, &dem, &nw);
            if (dem != g->nodes[i].demand || nw != g->nodes[i].nwait)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "gandiva: n%zu cached demand %d/%d waiting %d/%d", i,
                                   g->nodes[i].demand, dem, g->nodes[i].nwait, nw);
            nwn += nw > 0;
        } else if (!g->nodes[i].stale) {
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: n%zu invalidated, not listed", i);
        }
        if (fresh != g->nodes[i].nfresh)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "gandiva: n%zu counts %d members not looked up, has %d", i,
                               g->nodes[i].nfresh, fresh);
        if (k != g->nodes[i].nmem)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: n%zu counts %d members, has %d", i,
                               g->nodes[i].nmem, k);
    }
    int rc = ix_check(g, d);
    if (rc) return rc;
    if (nwn != g->nwaitnodes)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                           "gandiva: %zu nodes with waiting members, %zu counted", nwn,
                           g->nwaitnodes);
    size_t nq = 0;
    for (int k = 0; k < g->nsq; k++)
        for (int32_t s = gs_jobq_first(&g->sq[k].q); s >= 0; s = gs_jobq_next(&g->sq[k].q, s)) {
            const gs_job *j = job(g, s);
            nq++;
            if (j->state != GS_JOB_PENDING || J(g, s)->q != k || J(g, s)->node >= 0 ||
                j->gpus != g->sq[k].gpus)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: queued job %lld is %s",
                                   (long long)j->id, gs_job_state_name(j->state));
        }
    if (nq != g->nqueued)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva: %zu queued, %zu counted", nq,
                           g->nqueued);
    return 0;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static void gd_destroy(void *st)
{
    gandiva *g = st;
    if (!g) return;
    for (int k = 0; k < g->nsq; k++) gs_jobq_release(&g->sq[k].q);
    free(g->sq);
    gs_jobq_release(&g->ranq);
    free(g->nodes);
    free(g->jobs);
    free(g->dirty);
    free(g->stale);
    free(g->rekey);
    free(g->cls);
    for (size_t b = 0; b < g->nheaps; b++) free(g->heaps[b].v);
    free(g->heaps);
    free(g->bad);
    free(g->badm);
    free(g->packed);
    free(g->scratch);
    free(g);
}

/* Node classes and the index's heaps; more than IX_MAX_CLASSES shapes: no index (ix = 0). */
enum { IX_MAX_CLASSES = 16 };

static int ix_create(gandiva *g)
{
    g->cls = malloc(IX_MAX_CLASSES * sizeof *g->cls);
    if (!g->cls) return GS_ENOMEM;
    for (size_t i = 0; i < g->nnodes; i++) {
        gnode *nd = &g->nodes[i];
        uint32_t types = gs_cluster_cell(g->c, nd->cell)->gpu_types;
        int c = 0;
        while (c < g->ncls && (g->cls[c].ngpus != nd->ngpus || g->cls[c].types != types)) c++;
        if (c == IX_MAX_CLASSES) return 0; /* g->ix stays 0: choose_node scans */
        if (c == g->ncls) g->cls[g->ncls++] = (nclass){nd->ngpus, types};
        nd->cls = c;
    }
    size_t nh = ix_bucket(g, g->ncls, 0, 0);
    g->heaps = calloc(nh ? nh : 1, sizeof *g->heaps);
    if (!g->heaps) return GS_ENOMEM;
    g->nheaps = nh;
    g->ix = 1;
    return 0;
}

static int gd_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    gandiva *g = calloc(1, sizeof *g);
    if (!g) return GS_ENOMEM;
    g->e = e;
    g->c = gs_engine_cluster(e);
    g->live = gs_engine_opts_get(e)->mode == GS_ENGINE_LIVE;
    g->remap = g->live && gs_engine_opts_get(e)->live_remap;
    g->slice = gs_engine_mech_supported(e, GS_MECH_SUSPEND);
    g->pinned = g->live ? !g->remap : gs_costs_suspend_parks(gs_engine_costs(e));
    g->parked = !g->live && gs_costs_suspend_parks(gs_engine_costs(e));
    int can_pack = gs_engine_mech_supported(e, GS_MECH_PACK);
    int can_migrate = gs_engine_mech_supported(e, GS_MECH_MIGRATE);
    int can_grow = gs_engine_mech_supported(e, GS_MECH_RESIZE);
    gs_jobq_init(&g->ranq);
    int64_t pb = 8, mb = 4;
    int rc = gs_params_get_duration(p, "quantum", 60 * GS_SEC, &g->quantum, d);
    if (!rc) rc = gs_params_get_duration(p, "introspect", 60 * GS_SEC, &g->introspect, d);
    if (!rc) rc = gs_params_get_duration(p, "profile_window", 60 * GS_SEC, &g->window, d);
    if (!rc) rc = gs_params_get_double(p, "oversub", 2.0, 1.0, 64.0, &g->oversub, d);
    if (!rc) rc = gs_params_get_double(p, "pack_gain", 1.0, 0.0, 2.0, &g->pack_gain, d);
    if (!rc) rc = gs_params_get_double(p, "defrag_free", 0.75, 0.0, 1.0, &g->defrag_free, d);
    if (!rc) rc = gs_params_get_bool(p, "pack", can_pack, &g->pack, d);
    if (!rc) rc = gs_params_get_bool(p, "migrate", can_migrate, &g->migrate, d);
    if (!rc) rc = gs_params_get_bool(p, "grow", can_grow, &g->grow, d);
    if (!rc) rc = gs_params_get_i64(p, "pack_budget", 8, 0, 1 << 20, &pb, d);
    if (!rc) rc = gs_params_get_i64(p, "migrate_budget", 4, 0, 1 << 20, &mb, d);
    if (!rc) rc = gs_params_get_duration(p, "grow_min", 600 * GS_SEC, &g->grow_min, d);
    if (!rc) {
        const char *df = gs_params_get(p, "defrag");
        if (!df || !strcmp(df, "demand"))
            g->defrag = DEFRAG_DEMAND;
        else if (!strcmp(df, "on"))
            g->defrag = DEFRAG_ON;
        else if (!strcmp(df, "off"))
            g->defrag = DEFRAG_OFF;
        else
            rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                             "parameter 'defrag': expected on, demand or off, got '%s'", df);
    }
    if (!rc) {
        const char *w = gs_params_get(p, "weights");
        if (!w || !strcmp(w, "equal"))
            g->prio_weights = 0;
        else if (!strcmp(w, "priority"))
            g->prio_weights = 1;
        else
            rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                             "parameter 'weights': expected equal or priority, got '%s'", w);
    }
    if (!rc && (g->quantum <= 0 || g->introspect <= 0))
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameters 'quantum' and 'introspect' must be > 0");
    if (!rc && ((g->pack && !can_pack) || (g->migrate && !can_migrate) || (g->grow && !can_grow))) {
        if (g->live && g->slice)
            rc = gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                             "gandiva in the daemon supports time-slicing only (SIGSTOP/SIGCONT): "
                             "pack, migrate and grow must be off");
        else if (g->pack && !can_pack)
            rc = gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                             "gandiva: this program cannot pack jobs: set pack=off");
        else if (g->migrate && !can_migrate)
            rc = gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                             "gandiva: this program cannot migrate jobs: set migrate=off");
        else
            rc = gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                             "gandiva: this program cannot resize jobs: set grow=off");
    }
    if (rc) {
        gd_destroy(g);
        return rc;
    }
    g->pack_budget = (int)pb;
    g->migrate_budget = (int)mb;
    g->nnodes = gs_cluster_nnodes(g->c);
    g->nodes = calloc(g->nnodes ? g->nnodes : 1, sizeof *g->nodes);
    g->dirty = calloc(g->nnodes ? g->nnodes : 1, sizeof *g->dirty);
    g->stale = calloc(g->nnodes ? g->nnodes : 1, sizeof *g->stale);
    g->rekey = calloc(g->nnodes ? g->nnodes : 1, sizeof *g->rekey);
    if (!g->nodes || !g->dirty || !g->stale || !g->rekey) {
        gd_destroy(g);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const gs_node *nd = gs_cluster_node(g->c, (int32_t)i);
        /* no members: demand and waiting count 0 are current */
        g->nodes[i] = (gnode){.head = -1,
                              .tail = -1,
                              .ngpus = nd->gpu_hi - nd->gpu_lo,
                              .cell = nd->cell,
                              .cached = 1,
                              .bucket = -1,
                              .rekey = 1};
        g->rekey[g->nrekey++] = (int32_t)i; /* keyed at the first query */
        if (g->nodes[i].ngpus > g->maxg) g->maxg = g->nodes[i].ngpus;
    }
    if (ix_create(g)) {
        gd_destroy(g);
        return GS_ENOMEM;
    }
    *state = g;
    return 0;
}

static const gs_policy_ops gs_policy_gandiva = {
    .name = "gandiva",
    .summary = "Gandiva: affinity placement, time-slicing, packing, migration, grow-shrink; "
               "mechanism costs charged",
    .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_RIGID,
    .create = gd_create,
    .destroy = gd_destroy,
    .on_arrival = gd_arrival,
    .on_adopt = gd_adopt,
    .on_requeue = gd_requeue,
    .on_finish = gd_finish,
    .on_node = gd_node,
    .on_timer = gd_timer,
    .schedule = gd_schedule,
    .check = gd_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_gandiva[] = {{60, &gs_policy_gandiva}, {0, NULL}};
