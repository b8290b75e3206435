/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_hived.c - multi-tenant virtual clusters with HiveD's guarantees
 * (OSDI'20; shared/reference/hived.md sections 1-3): "hived", and the two
 * baselines that show the sharing anomaly, "private" (quota-sized private
 * clusters) - the "quota" baseline is yarn-cs with per-VC quotas.
 *
 * Model.  The cluster comes from a HiveD config.  Each top-level cell type
 * is a chain; each virtual cluster (VC) owns "preassigned cells" (pa): a
 * number of cells of given types per chain (virtualCells) plus pinned cells.
 * A VC's pa is bound to a physical cell of the same type only while the VC's
 * guaranteed jobs use GPUs in it (lazy binding: a VC "node" may be a
 * different physical node each time, which defragments for free); pinned
 * cells stay bound.  Binding is buddy allocation over per-chain, per-level
 * free lists: take a free cell of the level, else split the lowest free
 * higher-level cell; releasing merges buddies back.  HiveD's safety
 * invariant holds at every step and is checked by check():
 *
 *     total_left[chain][level] >= all_vc_free[chain][level]
 *
 * (cells obtainable at a level from the free lists >= unbound pa of all VCs
 * at that level), so every VC can always bind all of its cells, whatever the
 * other VCs do.  Ties are broken by cell index, never by map order.
 *
 * Bad hardware (HiveD section 3.10).  A cell is bad when any of its GPUs is
 * out of service (a node failed, drained or marked bad; LIVE: GPUs taken by
 * outside work).  Binding takes a healthy cell of the level; when it must
 * split a higher cell, it splits a bad one that still holds a healthy cell of
 * the level first (the healthy cells obtainable at the split level stay
 * whole).  Doomed cells: per VC and level, when the VC's unbound cells
 * outnumber the healthy cells still obtainable, that many of them are bound
 * ahead of time to bad free cells (doom_sync(); the most healthy GPUs
 * first: its jobs use those before binding anything else), so that its view
 * shows them bad and its jobs go elsewhere; the
 * set is recomputed after every binding change and hardware event and
 * released as healthy cells return.  Jobs on a bad node run on.  inspect()
 * answers vc.*, node.*, cell.* and job.* state keys (docs/hived.md).
 *
 * Jobs.  Every job (HiveD's affinity group: all its tasks) runs inside ONE
 * chain, hence on one GPU type: the chains of its GPU type (any type: all),
 * in config order, are tried in turn and the first that holds it wins; a job
 * no single chain can hold is rejected at arrival.  priority >= 0:
 * guaranteed; only chains where the VC has non-pinned cells (a pinned job:
 * its cell's chain); they run only inside their VC's cells, chosen on the
 * VC's private view of the chain (HiveD's topology-aware scheduler: fill
 * the VC node with the most use first, tasks on one node each, GPUs of a
 * task under the lowest common cell), in two passes: first without touching
 * any of the VC's guaranteed jobs, then (if needed) taking GPUs of the VC's
 * lower-priority jobs - whole gangs are preempted, or, with
 * lazy_preemption, downgraded to opportunistic and left running if the
 * placement can avoid them.  Opportunistic GPUs of any VC under the chosen
 * placement are preempted.  Inside a node, the GPUs taken from running jobs
 * are those that disrupt least (jobs already stopped, fewest new victims,
 * fewest GPUs, youngest).  priority -1: opportunistic; runs on any free
 * physical GPUs of one chain (staying away from guaranteed jobs), never
 * preempts, is preempted first.  A gang larger than its VC's guarantee is
 * rejected at arrival, as OpenPAI does.  overflow=on: guaranteed jobs that
 * do not fit their VC are also tried as opportunistic jobs.  Grouped jobs
 * (tasks of different sizes, nested withinOneCell groups) are placed as
 * HiveD places affinity groups and v2 pod groups: see assign_grouped().
 *
 * Order.  Per VC, waiting jobs are tried by priority, then by the intra-VC
 * order (intra=fifo: arrival; intra=las / tiresias-las: least attained
 * service queue, queues=T1,..; intra=srtf: shortest remaining time), with no
 * head-of-line blocking.  With a preemptive intra order a waiting job also
 * outranks a running job of its VC with the same priority in a worse queue.
 * Opportunistic jobs go after every guaranteed job.
 *
 * private: each VC's cells are bound once at start and never shared; jobs
 * run only there, ordered and preempted by priority inside the VC as above;
 * no opportunistic sharing.
 *
 * Adoption (daemon restart, reconfiguration; HiveD section 3.11; h_adopt): each
 * task of a running job is mapped into one of its VC's cells (an existing binding, else
 * an unbound pa bound at that very physical cell, else a pa taken from the
 * VC's lower-priority jobs, which are lazily preempted), keeping VC safety;
 * when a GPU finds no cell the job is lazily preempted (opportunistic, still
 * running).
 *
 * Queue view (daemon POS, "why pending", VC listing): one queue per VC by
 * priority, then submission; a VC's guarantee is the GPUs of its cells.
 *
 * Cost.  A pass costs about what it starts: views are read from gkey[] and
 * per-node summaries; a job that failed on capacity alone makes every job
 * it dominates fail at once until its VC's capacity grows (fail_cached());
 * a VC's queue is walked only when something changed for it, and then as
 * the merge of its jobs' shapes (walk_vc()), dropping a shape at its first
 * job the cache rules out, so a walk costs its tries, not the queue's
 * length; a try that no_room() shows to fail on capacity is not made (per
 * VC and chain room summaries); sweep() looks only at the pa noted since
 * the last pass.
 *
 * Invariants (checked by check()): the safety inequality above; pa.used =
 * GPUs of the VC's guaranteed jobs inside the pa's cell; a pa with used = 0
 * is unbound unless pinned (or static in private mode) or doomed; a doomed
 * pa is bound to a bad cell, unused, not pinned, counted in its chain's
 * ndoomed, and a VC never has more doomed cells at a level than its unbound
 * cells exceed the healthy cells obtainable there; a chain's nbad counts its
 * GPUs out of service; gpu_pa[g] is the pa bound around GPU g or -1; gkey,
 * node_g, node_o, node_free and node_minp equal a recount from the GPUs and
 * the jobs; a VC's shape lists hold exactly its queued jobs in queue order,
 * and a queued job marked JF_REASON has reason VC_REASON, any other is in
 * its VC's fresh list (check_shapes()); the room summaries and the GPUs a
 * VC holds by priority equal a recount (check_room()).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"

enum { C_INSIDE = 0, C_FREE = 1, C_SPLIT = 2, C_BOUND = 3 };
enum { K_NONE = 0, K_GUAR = 1, K_OPP = 2 };
enum intra { I_FIFO, I_LAS, I_TLAS, I_SRTF };

#define MAXLV 16

typedef struct chain {
    int32_t top_type; /* cell type id of the chain */
    int nlv;          /* levels 1..nlv (1 = GPU leaves) */
    int32_t type_at[MAXLV + 1];
    int32_t kids_at[MAXLV + 1]; /* children per cell of that level */
    int32_t gpus_at[MAXLV + 1]; /* GPUs per cell of that level */
    int32_t gpu_type;
    int32_t nnodes, node_gpus; /* physical nodes, GPUs of the largest */
    int node_lv;               /* level of its node cells */
    int32_t *fl[MAXLV + 1];    /* free lists */
    int nfl[MAXLV + 1], capfl[MAXLV + 1];
    int64_t all_vc_free[MAXLV + 1];
    int32_t nbad;    /* GPUs of the chain out of service (gkey GK_DOWN) */
    int32_t ndoomed; /* pa of the chain bound as doomed */
} chain;

typedef struct pa {
    int32_t vc, chain, level, type;
    int32_t cell; /* bound physical cell or -1 */
    int32_t used; /* GPUs of guaranteed jobs of the VC inside */
    int32_t gpus;
    int8_t pinned, fixed; /* fixed: never unbound (pinned, or private mode) */
    int8_t doomed;        /* bound ahead of time to bad hardware, unused (doom_sync()) */
    int32_t vnodes, vper; /* unbound: the VC sees vnodes whole nodes of vper GPUs */
    int32_t nlo, nhi;     /* bound: the nodes of its cell (build_slots() reads them here) */
    int8_t below;         /* bound: its cell is below node level */
} pa;

/*
 * A waiting queue in the order its jobs are tried, split into runs of equal
 * priority (bk, priority descending) so that an insertion only searches the
 * run of its priority, from both ends at once.
 */
typedef struct wbucket {
    int32_t prio, first, last;
} wbucket;

typedef struct wq {
    gs_jobq q;
    wbucket *bk;
    int nbk, capbk;
} wq;

/*
 * A VC's waiting jobs of one shape - the fields the failure cache compares
 * (gpu_type, pinned cell, GPUs per task, tasks), or every grouped job - in
 * queue order, linked through cnext/cprev of the hived struct.  A pass
 * walks the VC's queue as the merge of its shapes (walk_vc()): once a job
 * of a shape is dominated by the failure cache, so is every later one of
 * that shape until the cache is reset, and the walk passes them over.
 */
typedef struct wcls {
    int32_t gpu_type, pinned, gpt, ntasks;
    int8_t grouped; /* grouped jobs: never dominated (they skip the cache) */
    int8_t dead;    /* walk_vc: dominated from cur on while the cache stays valid */
    int32_t head, tail, cur;
} wcls;

/* A shape that failed on capacity alone (see fail_cached()). */
typedef struct fcent {
    int32_t gpt, ntasks, prio, gpu_type, pinned;
    int64_t rank;
} fcent;

typedef struct vcst {
    const char *name;
    int32_t *pas;
    int npas;
    int64_t guarantee; /* GPUs */
    int maxslots;      /* nodes of all its cells: the most slots a view can have */
    wq waiting;        /* guaranteed waiting jobs in the order they are tried */
    uint64_t gen;      /* bumped whenever the VC's capacity may have grown */
    int walk;          /* its queue must be walked at the next pass */
    int8_t *has;       /* by chain: the VC has non-pinned cells there */
    int32_t *chpas;    /* its pa by chain (stable): chain c's are [choff[c], choff[c + 1]) */
    int *choff;
    fcent *fc; /* failure cache, valid while fc_gen == gen */
    int nfc, capfc;
    uint64_t fc_gen;
    wcls *cls; /* its waiting jobs by shape (see wcls) */
    int ncls, capcls;
    int32_t *fresh; /* waiting jobs whose reason may not be set yet (JF_FRESH) */
    size_t nfresh, capfresh;
    int32_t *pprio, *pgpus; /* GPUs its guaranteed jobs hold, by priority (no_room()) */
    int npp, cappp;
} vcst;

typedef struct vslot {
    int32_t pa;     /* preassigned cell */
    int32_t node;   /* physical node (bound) or -1 */
    int32_t vidx;   /* for unbound pa: index of the virtual node inside it */
    int32_t lo, hi; /* GPU range of the slot (bound) */
    int32_t avail1; /* usable GPUs without preempting the VC's own jobs (pass 1) */
    int32_t avail2; /* usable GPUs when lower-ranked jobs of the VC may be preempted (pass 2) */
    int32_t same, higher, bad;
    int32_t take; /* tasks assigned */
} vslot;

/* jfl bits: the job's pending reason is VC_REASON (set since it was last queued); it is in
 * its VC's fresh list */
enum { JF_REASON = 1, JF_FRESH = 2 };
static const char VC_REASON[] = "insufficient capacity in its VC";

/* gkey values besides a priority (see the hived struct) */
#define GK_NONE INT32_MIN
#define GK_DOWN INT32_MAX

typedef struct hived {
    gs_engine *e;
    gs_cluster *c;
    int private_mode;
    enum intra intra;
    int64_t *qhi; /* intra LAS thresholds (us or GPU-us) */
    int nq;
    chain *ch;
    int nch;
    int32_t *cell_chain; /* by cell: chain or -1 */
    int16_t *cell_level; /* by cell: HiveD level (GPU = 1) */
    int8_t *cell_st;
    int32_t *cell_pa;  /* bound pa or -1 */
    int32_t *cell_end; /* by cell: index just past its subtree (pre-order) */
    int32_t *gpu_pa;   /* by GPU */
    pa *pa;
    int npa;
    vcst *vc;
    int nvc;
    /* per job, by vslot */
    int32_t *jvc;  /* hived VC or -1 */
    int8_t *jkind; /* K_* while holding GPUs */
    int8_t *jlazy; /* 1: a guaranteed job downgraded to opportunistic (lazy preemption) */
    size_t capj;
    wq opp; /* waiting opportunistic jobs, arrival order */
    int dirty;
    int in_pass;
    int err; /* first allocation failure (GS_ENOMEM): hooks return it, passes stop */
    /*
     * Incremental views, so that a pass costs little more than the jobs it
     * starts: gkey[g] is GK_DOWN for a failed GPU, else the priority of the
     * guaranteed job holding it, else GK_NONE (free or opportunistic);
     * node_g / node_o count the GPUs of a node held by guaranteed /
     * opportunistic jobs; node_free / node_minp summarise gkey per node, so
     * that a node with no room for a job is passed over without looking at
     * its GPUs.  check() recounts them all.
     */
    int32_t *gkey;
    int32_t *node_g, *node_o;
    int32_t *node_free; /* by node: GPUs with gkey GK_NONE */
    int32_t *node_minp; /* by node: lowest priority among its guaranteed GPUs, INT32_MAX if none */
    /* overflow=on: guaranteed jobs that do not fit their VC also run opportunistically */
    int overflow;
    int ovf_walk;     /* a VC queue was walked: overflow candidates may be new */
    uint64_t ovf_gen; /* free_gen at the last overflow walk */
    int32_t *ovcur;   /* by VC: cursor of the overflow walk */
    /* opportunistic queue: walk flag and failure cache (valid while no GPU was freed) */
    uint64_t free_gen, oppfc_gen;
    int opp_walk;
    fcent *oppfc;
    int noppfc, capoppfc;
    /* scratch */
    vslot *sl;
    int capsl;
    int *chosen; /* slots chosen by assign_tasks, in order */
    int capch;
    int *gsel;
    int capg;
    char *okg; /* pick_task: usable GPUs of a node */
    int capok;
    gs_job **vict;
    int capv;
    int32_t *walkv; /* snapshot of a queue being walked */
    size_t capwalk;
    /* VC queues by shape (wcls), by job slot: links, shape, walk stamps, flags */
    int32_t *cnext, *cprev, *jcls;
    uint64_t *jstamp; /* walkid when it was queued (walk_vc: queued during this walk) */
    uint64_t *jvis;   /* walkid when walk_vc last visited it */
    int8_t *jfl;      /* JF_* */
    uint64_t walkid;  /* walks so far (64 bits: never comes round) */
    int *alive;       /* walk_vc: shapes not dominated */
    int capalive;
    /*
     * Room summaries of each VC's view of each chain, for no_room(): at
     * vxh + (v * nch + c) * 2 * (hmax + 1), the bound nodes of its non-pinned
     * cells at or above node level by free GPUs (node_free), then the virtual
     * nodes of its unbound non-pinned cells by GPUs (vper); vxsub[v * nch + c]:
     * its bound non-pinned cells below node level.
     */
    int32_t *vxh, *vxsub;
    int hmax;
    /* the same for the whole view, every cell unbound (fixed: h_rejects()): its non-pinned
     * cells' virtual nodes by GPUs at vxs + (v * nch + c) * (hmax + 1), their GPUs in vxg */
    int32_t *vxs;
    int64_t *vxg;
    /* sweep(): pa that may be bound and unused (bound, or their use fell to 0) */
    int32_t *swc, *swtmp;
    int8_t *inswc;
    int nswc;
    uint64_t *ord; /* candidate nodes of an opportunistic placement (sort keys) */
    size_t capord;
    uint32_t *tgen;
    int *tslot, *gpos; /* grouped jobs: by task, its slot and its GPUs' place in gsel */
    size_t captslot, capgpos;
    uint64_t *dcand; /* doom_sync: candidate bad cells (sort keys) */
    int32_t *dprev;  /* doom_sync: the doomed (pa, cell) pairs before it ran */
    size_t capdc;
    int in_doom; /* doom_sync is running (its binds do not call it again) */
} hived;

/* ---- helpers ------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int level_of_type(const hived *h, int ch, int32_t type)
{
    for (int l = 1; l <= h->ch[ch].nlv; l++)
        if (h->ch[ch].type_at[l] == type) return l;
    return 0;
}

/* Smallest task of j. */
static int min_task(const gs_job *j)
{
    int m = gs_job_task_gpus(j, 0);
    for (int t = 1; t < j->ntasks; t++)
        if (gs_job_task_gpus(j, t) < m) m = gs_job_task_gpus(j, t);
    return m;
}

/* Record an allocation failure; every hook then returns it (policy.h, "Errors"). */
static int oom(hived *h)
{
    if (!h->err) h->err = GS_ENOMEM;
    return GS_ENOMEM;
}

static int grow_jobs(hived *h, int32_t slot)
{
    if ((size_t)slot < h->capj) return 0;
    size_t nc = h->capj ? h->capj : 1024;
    while (nc <= (size_t)slot) nc *= 2;
    int32_t *a = realloc(h->jvc, nc * sizeof *a);
    if (!a) return oom(h);
    h->jvc = a;
    int8_t *b = realloc(h->jkind, nc);
    if (!b) return oom(h);
    h->jkind = b;
    uint32_t *t = realloc(h->tgen, nc * sizeof *t);
    if (!t) return oom(h);
    h->tgen = t;
    int8_t *z = realloc(h->jlazy, nc);
    if (!z) return oom(h);
    h->jlazy = z;
    int32_t *cn = realloc(h->cnext, nc * sizeof *cn);
    if (!cn) return oom(h);
    h->cnext = cn;
    int32_t *cp = realloc(h->cprev, nc * sizeof *cp);
    if (!cp) return oom(h);
    h->cprev = cp;
    int32_t *jc = realloc(h->jcls, nc * sizeof *jc);
    if (!jc) return oom(h);
    h->jcls = jc;
    uint64_t *st = realloc(h->jstamp, nc * sizeof *st);
    if (!st) return oom(h);
    h->jstamp = st;
    uint64_t *vi = realloc(h->jvis, nc * sizeof *vi);
    if (!vi) return oom(h);
    h->jvis = vi;
    int8_t *fl = realloc(h->jfl, nc);
    if (!fl) return oom(h);
    h->jfl = fl;
    for (size_t i = h->capj; i < nc; i++) {
        h->jvc[i] = -1, h->jkind[i] = K_NONE, h->tgen[i] = 0, h->jlazy[i] = 0;
        h->cnext[i] = h->cprev[i] = h->jcls[i] = -1;
        h->jstamp[i] = h->jvis[i] = 0;
        h->jfl[i] = 0;
    }
    h->capj = nc;
    return 0;
}

/* Room for 'extra' more cells in free list lv (so that a split cannot fail half-way). */
static int fl_reserve(chain *c, int lv, int extra)
{
    if (c->nfl[lv] + extra <= c->capfl[lv]) return 0;
    int nc = c->capfl[lv] ? c->capfl[lv] * 2 : 16;
    while (nc < c->nfl[lv] + extra) nc *= 2;
    int32_t *n = realloc(c->fl[lv], (size_t)nc * sizeof *n);
    if (!n) return GS_ENOMEM;
    c->fl[lv] = n;
    c->capfl[lv] = nc;
    return 0;
}

static int fl_push(chain *c, int lv, int32_t cell)
{
    if (c->nfl[lv] == c->capfl[lv]) {
        int nc = c->capfl[lv] ? c->capfl[lv] * 2 : 16;
        int32_t *n = realloc(c->fl[lv], (size_t)nc * sizeof *n);
        if (!n) return GS_ENOMEM;
        c->fl[lv] = n;
        c->capfl[lv] = nc;
    }
    c->fl[lv][c->nfl[lv]++] = cell;
    return 0;
}

static void fl_remove(chain *c, int lv, int32_t cell)
{
    for (int i = 0; i < c->nfl[lv]; i++)
        if (c->fl[lv][i] == cell) {
            c->fl[lv][i] = c->fl[lv][--c->nfl[lv]];
            return;
        }
}

/* Cells obtainable at level x from the free lists. */
static int64_t total_left(const hived *h, int ch, int x)
{
    const chain *c = &h->ch[ch];
    int64_t t = 0, mult = 1;
    for (int l = x; l <= c->nlv; l++) {
        if (l > x) mult *= c->kids_at[l];
        t += (int64_t)c->nfl[l] * mult;
    }
    return t;
}

/*
 * GPUs in the cell that are in use (by anyone) / down, from the cluster's
 * aggregates (healthy GPUs in use; a GPU out of service counts as down even
 * while a job on a bad or drained node still holds it).
 */
static void cell_usage(const hived *h, int32_t cell, int *used, int *bad)
{
    const gs_cell *x = gs_cluster_cell(h->c, cell);
    *used = x->healthy - x->free;
    *bad = (x->gpu_hi - x->gpu_lo) - x->healthy;
}

/* Some GPU of the cell is out of service (HiveD: a cell is bad if any leaf is). */
static int cell_bad(const hived *h, int32_t cell)
{
    const gs_cell *x = gs_cluster_cell(h->c, cell);
    return x->healthy < x->gpu_hi - x->gpu_lo;
}

/* The (free) cell holds a healthy cell of level lv. */
static int has_healthy_at(const hived *h, int32_t cell, int lv)
{
    for (int32_t y = cell; y < h->cell_end[cell]; y++) {
        if (h->cell_level[y] < lv) continue;
        if (h->cell_level[y] == lv && !cell_bad(h, y)) return 1;
    }
    return 0;
}

/*
 * Best free cell at level lv to bind a cell of level target (lv == target) or
 * to split for one (lv > target).  Binding: healthy first.  Splitting: a bad
 * cell that still holds a healthy cell of the target level first (splitting
 * it leaves the healthy cells obtainable at its level untouched, so they stay
 * whole for the VCs that need them: HiveD's doomed-bad-cell reasoning), then
 * healthy cells, then bad ones.  Then fewest GPUs in use, lowest index.
 */
static int32_t best_free(const hived *h, int ch, int lv, int target)
{
    const chain *c = &h->ch[ch];
    int32_t best = -1;
    int bu = 0, br = 0;
    for (int i = 0; i < c->nfl[lv]; i++) {
        int32_t cell = c->fl[lv][i];
        int u, b, r;
        cell_usage(h, cell, &u, &b);
        if (lv == target || !b)
            r = b > 0;
        else
            r = has_healthy_at(h, cell, target) ? -1 : 1;
        if (best < 0 || r < br || (r == br && (u < bu || (u == bu && cell < best)))) {
            best = cell;
            bu = u;
            br = r;
        }
    }
    return best;
}

static void set_gpu_pa(hived *h, int32_t cell, int32_t p)
{
    const gs_cell *x = gs_cluster_cell(h->c, cell);
    for (int32_t g = x->gpu_lo; g < x->gpu_hi; g++) h->gpu_pa[g] = p;
}

/* The VC's capacity may have grown: forget its failures, walk its queue again. */
static void vc_changed(hived *h, int v)
{
    if (v < 0 || v >= h->nvc) return;
    h->vc[v].gen++;
    h->vc[v].walk = 1;
    h->dirty = 1;
}

/* GPUs were released (or repaired): opportunistic jobs may fit again. */
static void gpus_freed(hived *h)
{
    h->free_gen++;
    h->opp_walk = 1;
    h->dirty = 1;
}

/* Recompute gkey[g] from the cluster and the jobs (see the hived struct). */
static void gkey_refresh(hived *h, int32_t g)
{
    const gs_gpu *gp = gs_cluster_gpu(h->c, g);
    int32_t o = gp->owner;
    if (gp->down)
        h->gkey[g] = GK_DOWN;
    else if (o >= 0 && (size_t)o < h->capj && h->jkind[o] == K_GUAR)
        h->gkey[g] = gs_policy_job(h->e, (size_t)o)->priority;
    else
        h->gkey[g] = GK_NONE;
}

/* A pa was bound: the nodes of its cell, kept with it. */
static void pa_nodes(const hived *h, pa *a)
{
    const gs_cell *x = gs_cluster_cell(h->c, a->cell);
    a->nlo = x->node_lo;
    a->nhi = x->node_hi;
    a->below = x->kind < GS_CELL_NODE;
}

/* The room summary of VC v's view of chain c (see the hived struct). */
static int32_t *vx_hist(const hived *h, int v, int c)
{
    return h->vxh + ((size_t)v * (size_t)h->nch + (size_t)c) * 2 * (size_t)(h->hmax + 1);
}

/* The non-pinned pa at or above node level bound around node nd, or -1. */
static int32_t view_pa(const hived *h, int32_t nd)
{
    const gs_node *node = gs_cluster_node(h->c, nd);
    if (node->gpu_hi <= node->gpu_lo) return -1;
    int32_t p = h->gpu_pa[node->gpu_lo];
    if (p < 0 || h->pa[p].pinned || h->pa[p].below) return -1;
    return p;
}

/* pa p was bound (delta 1) or is about to be unbound (-1): its VC's room summary. */
static void vx_bind(hived *h, int32_t p, int delta)
{
    const pa *a = &h->pa[p];
    if (a->pinned || !h->vxh) return;
    int32_t *hist = vx_hist(h, a->vc, a->chain), *unb = hist + h->hmax + 1;
    const gs_cell *x = gs_cluster_cell(h->c, a->cell);
    if (x->kind < GS_CELL_NODE)
        h->vxsub[(size_t)a->vc * (size_t)h->nch + (size_t)a->chain] += delta;
    else
        for (int32_t nd = x->node_lo; nd < x->node_hi; nd++) hist[h->node_free[nd]] += delta;
    unb[a->vper] -= delta * a->vnodes;
}

/* Recompute node_free and node_minp of a node from gkey. */
static void node_refresh(hived *h, int32_t nd)
{
    const gs_node *node = gs_cluster_node(h->c, nd);
    int32_t fr = 0, mp = INT32_MAX;
    for (int32_t g = node->gpu_lo; g < node->gpu_hi; g++) {
        int32_t k = h->gkey[g];
        fr += k == GK_NONE;
        if (k != GK_NONE && k != GK_DOWN && k < mp) mp = k;
    }
    if (h->vxh && fr != h->node_free[nd]) {
        int32_t p = view_pa(h, nd);
        if (p >= 0) {
            int32_t *hist = vx_hist(h, h->pa[p].vc, h->pa[p].chain);
            hist[h->node_free[nd]]--;
            hist[fr]++;
        }
    }
    h->node_free[nd] = fr;
    h->node_minp[nd] = mp;
}

/* GPUs gpus[0..n) start (delta 1) or stop (delta -1) being held by a job of this kind. */
static void count_gpus(hived *h, const int32_t *gpus, int n, int kind, int delta)
{
    int32_t last = -1;
    for (int i = 0; i < n; i++) {
        int32_t nd = gs_cluster_gpu(h->c, gpus[i])->node;
        if (kind == K_GUAR)
            h->node_g[nd] += delta;
        else if (kind == K_OPP)
            h->node_o[nd] += delta;
        gkey_refresh(h, gpus[i]);
        if (nd != last && last >= 0) node_refresh(h, last);
        last = nd;
    }
    if (last >= 0) node_refresh(h, last);
}

static void doom_sync(hived *h, int ch);

/* pa p may be bound and unused now: sweep(h, -1) looks at it (see sweep()). */
static void sweep_note(hived *h, int32_t p)
{
    if (h->inswc[p]) return;
    h->inswc[p] = 1;
    h->swc[h->nswc++] = p;
}

/* Bind pa p to free cell 'cell' of its level (taken out of its free list). */
static void bind_cell(hived *h, int32_t p, int32_t cell)
{
    pa *a = &h->pa[p];
    sweep_note(h, p);
    chain *c = &h->ch[a->chain];
    fl_remove(c, a->level, cell);
    h->cell_st[cell] = C_BOUND;
    h->cell_pa[cell] = p;
    a->cell = cell;
    pa_nodes(h, a);
    set_gpu_pa(h, cell, p);
    vx_bind(h, p, 1);
    c->all_vc_free[a->level]--;
}

/* Buddy allocation: bind pa p to a physical cell of its type.  Returns 0 or GS_ENOFIT. */
static int bind_raw(hived *h, int32_t p)
{
    pa *a = &h->pa[p];
    chain *c = &h->ch[a->chain];
    int lv = a->level;
    int l = lv;
    while (l <= c->nlv && c->nfl[l] == 0) l++;
    if (l > c->nlv) return GS_ENOFIT;
    /* room for every split first: a split never stops half-way */
    for (int k = l; k > lv; k--)
        if (fl_reserve(c, k - 1, c->kids_at[k])) return oom(h);
    /* split down to the requested level */
    while (l > lv) {
        int32_t cell = best_free(h, a->chain, l, lv);
        fl_remove(c, l, cell);
        h->cell_st[cell] = C_SPLIT;
        for (int k = 0; k < gs_cluster_cell(h->c, cell)->nkids; k++) {
            int32_t kid = gs_cluster_cell_kid(h->c, cell, k);
            h->cell_st[kid] = C_FREE;
            if (fl_push(c, l - 1, kid)) return oom(h);
        }
        l--;
    }
    bind_cell(h, p, best_free(h, a->chain, lv, lv));
    return 0;
}

static int bind_pa(hived *h, int32_t p)
{
    int rc = bind_raw(h, p);
    if (!rc) doom_sync(h, h->pa[p].chain);
    return rc;
}

/* Release pa p's binding and merge buddies. */
static void unbind_raw(hived *h, int32_t p)
{
    pa *a = &h->pa[p];
    if (a->cell < 0 || a->fixed) return;
    chain *c = &h->ch[a->chain];
    /* room for the cell and every merge first: out of memory it simply stays bound */
    for (int k = a->level; k <= c->nlv; k++)
        if (fl_reserve(c, k, 1)) {
            oom(h);
            return;
        }
    if (a->doomed) {
        a->doomed = 0;
        c->ndoomed--;
    }
    int32_t cell = a->cell;
    vx_bind(h, p, -1);
    set_gpu_pa(h, cell, -1);
    h->cell_pa[cell] = -1;
    h->cell_st[cell] = C_FREE;
    /* an unbound cell looks whole to its VC: with failed GPUs in it, that is more room */
    const gs_cell *cx = gs_cluster_cell(h->c, cell);
    if (cx->healthy < cx->gpu_hi - cx->gpu_lo) vc_changed(h, a->vc);
    fl_push(c, a->level, cell); /* reserved */
    c->all_vc_free[a->level]++;
    a->cell = -1;
    /* merge while every buddy is free */
    int lv = a->level;
    for (;;) {
        int32_t par = gs_cluster_cell(h->c, cell)->parent;
        if (par <= 0 || h->cell_chain[par] != a->chain || h->cell_st[par] != C_SPLIT) break;
        const gs_cell *pc = gs_cluster_cell(h->c, par);
        int all = 1;
        for (int k = 0; k < pc->nkids && all; k++)
            all = h->cell_st[gs_cluster_cell_kid(h->c, par, k)] == C_FREE;
        if (!all) break;
        for (int k = 0; k < pc->nkids; k++) {
            int32_t kid = gs_cluster_cell_kid(h->c, par, k);
            fl_remove(c, lv, kid);
            h->cell_st[kid] = C_INSIDE;
        }
        h->cell_st[par] = C_FREE;
        fl_push(c, lv + 1, par); /* reserved */
        cell = par;
        lv++;
    }
}

static void unbind_pa(hived *h, int32_t p)
{
    if (h->pa[p].cell < 0 || h->pa[p].fixed) return;
    unbind_raw(h, p);
    doom_sync(h, h->pa[p].chain);
}

/* ---- bad hardware: doomed cells (HiveD section 3.10) ---------------------------------------- */

/*
 * Every VC can still bind all its unbound cells from the free lists (HiveD's
 * start-up check, top level down; the safety inequality level by level is
 * implied).  Doomed bindings are made only when this stays true.
 */
static int chain_feasible(const hived *h, int ch)
{
    const chain *c = &h->ch[ch];
    int64_t avail = 0;
    for (int l = c->nlv; l >= 1; l--) {
        avail += c->nfl[l];
        if (avail < c->all_vc_free[l]) return 0;
        avail -= c->all_vc_free[l];
        if (l > 1) avail *= c->kids_at[l];
        if (avail > ((int64_t)1 << 40)) avail = (int64_t)1 << 40;
    }
    return 1;
}

/* bl[l]: bad cells of level l obtainable from the free lists (free cells or inside one). */
static void bad_left(const hived *h, int ch, int64_t *bl)
{
    const chain *c = &h->ch[ch];
    for (int l = 0; l <= MAXLV; l++) bl[l] = 0;
    for (int lv = 1; lv <= c->nlv; lv++)
        for (int i = 0; i < c->nfl[lv]; i++) {
            int32_t x = c->fl[lv][i];
            for (int32_t y = x; y < h->cell_end[x]; y++) {
                if (!cell_bad(h, y)) {
                    y = h->cell_end[y] - 1; /* a healthy subtree */
                    continue;
                }
                int l = h->cell_level[y];
                if (l >= 1 && l <= MAXLV) bl[l]++;
            }
        }
}

/* Unbound pa of VC v at (chain, level), doomed ones counted as unbound (*doomed: those). */
static int vc_free_at(const hived *h, int v, int ch, int lv, int *doomed)
{
    int n = 0, d = 0;
    for (int i = 0; i < h->vc[v].npas; i++) {
        const pa *a = &h->pa[h->vc[v].pas[i]];
        if (a->chain != ch || a->level != lv || a->pinned || a->fixed) continue;
        if (a->cell < 0)
            n++;
        else if (a->doomed)
            n++, d++;
    }
    *doomed = d;
    return n;
}

/* Bind pa p (unbound, level lv) to a bad cell obtainable at lv, keeping every VC's cells
 * bindable.  1 when bound. */
static int doom_bind(hived *h, int32_t p)
{
    pa *a = &h->pa[p];
    chain *c = &h->ch[a->chain];
    int lv = a->level;
    /* candidates: bad level-lv cells inside free cells; keys: direct (in the list) first,
     * then most healthy GPUs (the doomed VC's jobs use them first: bound cells come before
     * unbound ones in its view, so the healthy cells stay for the others), then index */
    size_t n = 0;
    for (int l = lv; l <= c->nlv; l++)
        for (int i = 0; i < c->nfl[l]; i++) {
            int32_t x = c->fl[l][i];
            for (int32_t y = x; y < h->cell_end[x]; y++) {
                if (!cell_bad(h, y)) {
                    y = h->cell_end[y] - 1;
                    continue;
                }
                if (h->cell_level[y] != lv) continue;
                if (n == h->capdc) {
                    size_t nc = h->capdc ? h->capdc * 2 : 64;
                    uint64_t *k = realloc(h->dcand, nc * sizeof *k);
                    if (!k) return oom(h), 0;
                    h->dcand = k;
                    h->capdc = nc;
                }
                h->dcand[n++] =
                    ((uint64_t)(l != lv) << 62) |
                    ((uint64_t)(uint32_t)(INT32_MAX - gs_cluster_cell(h->c, y)->healthy) << 32) |
                    (uint32_t)y;
                y = h->cell_end[y] - 1;
            }
        }
    if (n > 1) qsort(h->dcand, n, sizeof *h->dcand, cmp_u64);
    for (size_t k = 0; k < n; k++) {
        int32_t x = (int32_t)(uint32_t)h->dcand[k];
        /* split its free ancestors, top down */
        int32_t path[MAXLV + 2];
        int np = 0;
        for (int32_t y = x; h->cell_st[y] != C_FREE; y = gs_cluster_cell(h->c, y)->parent)
            path[np++] = gs_cluster_cell(h->c, y)->parent;
        for (int i = 0; i < np; i++)
            if (fl_reserve(c, h->cell_level[path[i]] - 1, c->kids_at[h->cell_level[path[i]]]))
                return oom(h), 0;
        for (int i = np - 1; i >= 0; i--) {
            int32_t y = path[i];
            int l = h->cell_level[y];
            fl_remove(c, l, y);
            h->cell_st[y] = C_SPLIT;
            for (int q = 0; q < gs_cluster_cell(h->c, y)->nkids; q++) {
                int32_t kid = gs_cluster_cell_kid(h->c, y, q);
                h->cell_st[kid] = C_FREE;
                fl_push(c, l - 1, kid); /* reserved */
            }
        }
        bind_cell(h, p, x);
        a->doomed = 1;
        c->ndoomed++;
        if (chain_feasible(h, a->chain)) return 1;
        unbind_raw(h, p); /* merges the split back */
    }
    return 0;
}

/*
 * HiveD's doomed bad cells.  For each VC and level of the chain: when the
 * VC's unbound cells (doomed ones included) outnumber the healthy cells
 * still obtainable there, that many of them can only ever be bound to bad
 * hardware: bind them to bad free cells now ("doomed"), so that the VC's
 * view shows them bad and its jobs are placed elsewhere.  Release doomed
 * bindings when healthy cells come back or their cell is healthy again.  The
 * comparison is per VC (as HiveD's), not against all VCs together.  Runs
 * after every binding change and hardware event; nothing to do on a chain
 * without bad GPUs or doomed cells.
 */
static void doom_sync(hived *h, int ch)
{
    chain *c = &h->ch[ch];
    if ((!c->nbad && !c->ndoomed) || h->in_doom || h->err) return;
    h->in_doom = 1;
    /* the doomed set is a function of the bindings for use and the bad GPUs: recomputed
     * from scratch (so that it never depends on the order hardware went bad), and the
     * VCs are told only when it changed */
    int nprev = 0;
    for (int p = 0; p < h->npa; p++)
        if (h->pa[p].doomed && h->pa[p].chain == ch) {
            h->dprev[2 * nprev] = p;
            h->dprev[2 * nprev + 1] = h->pa[p].cell;
            nprev++;
            unbind_raw(h, p);
        }
    for (int round = 0; round < 4 * h->npa + 8 && !h->err; round++) {
        int changed = 0;
        int64_t bl[MAXLV + 1];
        bad_left(h, ch, bl);
        /* top level first: a doomed cell binds its bad children with it */
        for (int l = c->nlv; l >= 1 && !changed; l--) {
            int64_t healthy = total_left(h, ch, l) - bl[l];
            for (int v = 0; v < h->nvc && !changed; v++) {
                int dm, fr = vc_free_at(h, v, ch, l, &dm);
                if (fr - dm <= 0 || dm >= fr - healthy) continue;
                for (int i = 0; i < h->vc[v].npas; i++) {
                    int32_t p = h->vc[v].pas[i];
                    const pa *a = &h->pa[p];
                    if (a->chain != ch || a->level != l || a->cell >= 0 || a->pinned) continue;
                    changed = doom_bind(h, p);
                    break;
                }
            }
        }
        if (!changed) break;
    }
    /* tell the VCs whose doomed cells changed */
    int same = 1;
    for (int k = 0; k < nprev && same; k++)
        same = h->pa[h->dprev[2 * k]].doomed && h->pa[h->dprev[2 * k]].cell == h->dprev[2 * k + 1];
    if (same && nprev != c->ndoomed) same = 0;
    if (!same) {
        for (int k = 0; k < nprev; k++) vc_changed(h, h->pa[h->dprev[2 * k]].vc);
        for (int p = 0; p < h->npa; p++)
            if (h->pa[p].doomed && h->pa[p].chain == ch) vc_changed(h, h->pa[p].vc);
    }
    h->in_doom = 0;
}

/* ---- intra-VC order --------------------------------------------------------------------- */

/* Rank inside a VC at equal priority: lower goes first (LAS queue index). */
static int64_t rank_of(const hived *h, const gs_job *j, gs_time now)
{
    if (h->intra == I_FIFO) return 0;
    if (h->intra == I_SRTF) /* remaining time on its GPU type (exact on the reference type) */
        return (int64_t)((double)gs_job_remaining(j, now) / gs_engine_job_best_type_rate(h->e, j));
    int64_t a = gs_job_executed(j, now);
    if (h->intra == I_TLAS) a *= j->gpus;
    int q = 0;
    while (q < h->nq - 1 && a >= h->qhi[q]) q++;
    return q;
}

/* ---- placement on a VC's view -------------------------------------------------------------- */

static int ensure_slots(hived *h, int n)
{
    if (n <= h->capsl) return 0;
    int nc = h->capsl ? h->capsl : 64;
    while (nc < n) nc *= 2;
    vslot *s = realloc(h->sl, (size_t)nc * sizeof *s);
    if (!s) return oom(h);
    h->sl = s;
    h->capsl = nc;
    return 0;
}

/* pa (of the chain being tried) usable by this job: leaf type and pinned cell must match. */
static int pa_matches(const hived *h, const pa *a, const gs_job *j)
{
    if (j->gpu_type >= 0 && h->ch[a->chain].gpu_type != j->gpu_type) return 0;
    if (j->pinned_cell >= 0) {
        int32_t pc = j->pinned_cell;
        return a->pinned && a->cell == pc;
    }
    return !a->pinned;
}

/*
 * Build the node slots of VC v in chain ch for job j (a job runs inside one
 * chain: see try_guaranteed()).  Bound pa contribute their physical
 * nodes (or themselves, below node level); unbound pa contribute virtual
 * nodes that are entirely free in the VC's view.  Each slot gets both
 * passes' room (avail1 <= avail2).  *differ is set when some slot has more
 * room in pass 2.  The counts come from gkey[], without job look-ups except
 * for same-priority holders under an intra-VC LAS order (their rank).
 */
static int build_slots(hived *h, const gs_job *j, int v, int ch, gs_time now, int *differ)
{
    int n = 0;
    vcst *vc = &h->vc[v];
    const int32_t p = j->priority, gpt = gs_job_grouped(j) ? min_task(j) : j->gpus_per_task;
    const int las = h->intra == I_LAS || h->intra == I_TLAS;
    const int64_t rj = las ? rank_of(h, j, now) : 0;
    /* a node may hold a preemptible job only if its lowest priority is below pthr */
    const int32_t pthr = las ? p + 1 : p;
    if (ensure_slots(h, vc->maxslots)) return -1;
    int dif = 0;
    for (int i = vc->choff[ch]; i < vc->choff[ch + 1]; i++) {
        int32_t pi = vc->chpas[i];
        pa *a = &h->pa[pi];
        if (!pa_matches(h, a, j)) continue;
        if (a->cell < 0) {
            /* virtual nodes of an unbound pa: entirely free in the VC's view */
            for (int k = 0; k < a->vnodes; k++) {
                vslot *s = &h->sl[n++];
                s->pa = pi;
                s->node = -1;
                s->vidx = k;
                s->lo = s->hi = -1;
                s->avail1 = s->avail2 = a->vper;
                s->same = s->higher = s->bad = 0;
                s->take = 0;
            }
            continue;
        }
        int32_t nlo = a->nlo, nhi = a->nhi;
        int below = a->below;
        for (int32_t nd = nlo; nd < nhi; nd++) {
            /* a node whose free GPUs cannot hold a task and where no job could be
             * preempted has no room: it can never be chosen, leave it out */
            if (h->node_free[nd] < gpt && h->node_minp[nd] >= pthr && !below) continue;
            vslot *s = &h->sl[n++];
            s->pa = pi;
            s->node = nd;
            s->vidx = -1;
            if (below) {
                const gs_cell *x = gs_cluster_cell(h->c, a->cell);
                s->lo = x->gpu_lo;
                s->hi = x->gpu_hi;
            } else {
                const gs_node *node = gs_cluster_node(h->c, nd);
                s->lo = node->gpu_lo;
                s->hi = node->gpu_hi;
            }
            int a1 = 0, lower = 0, same = 0, higher = 0, bad = 0;
            for (int32_t g = s->lo; g < s->hi; g++) {
                int32_t k = h->gkey[g];
                if (k == GK_NONE)
                    a1++;
                else if (k == GK_DOWN)
                    bad++;
                else if (k < p)
                    lower++;
                else if (k > p)
                    higher++;
                else
                    same++;
            }
            if (las && same)
                for (int32_t g = s->lo; g < s->hi; g++)
                    if (h->gkey[g] == p) {
                        const gs_job *o =
                            gs_policy_job(h->e, (size_t)gs_cluster_gpu(h->c, g)->owner);
                        lower += rank_of(h, o, now) > rj;
                    }
            s->avail1 = a1;
            s->avail2 = a1 + lower;
            s->same = same;
            s->higher = higher;
            s->bad = bad;
            s->take = 0;
            dif |= lower;
        }
    }
    *differ = dif != 0;
    return n;
}

static int slot_cmp(const vslot *a, const vslot *b)
{
    /* healthy first; pack: most same-priority use first; fewest higher-priority use */
    if ((a->bad > 0) != (b->bad > 0)) return (a->bad > 0) - (b->bad > 0);
    if (a->same != b->same) return b->same - a->same;
    if (a->higher != b->higher) return a->higher - b->higher;
    /* bound before unbound (binding is the last resort), then stable order */
    if ((a->node < 0) != (b->node < 0)) return (a->node < 0) - (b->node < 0);
    if (a->pa != b->pa) return a->pa - b->pa;
    return a->node >= 0 ? a->node - b->node : a->vidx - b->vidx;
}

/* Room for n entries in h->chosen; GS_ENOMEM (latched by oom()) when it cannot grow. */
static int ensure_chosen(hived *h, int n)
{
    if (n <= h->capch) return 0;
    int nc = h->capch ? h->capch : 64;
    while (nc < n) nc *= 2;
    int *c = realloc(h->chosen, (size_t)nc * sizeof *c);
    if (!c) return oom(h);
    h->chosen = c;
    h->capch = nc;
    return 0;
}

/*
 * HiveD's greedy first fit of the job's tasks over the slots in slot_cmp
 * order: each slot in turn takes as many tasks as its room allows.  Only
 * the slots used are ordered (repeated selection of the best remaining
 * slot with room), so a one-node job costs one scan.  Fills h->chosen with
 * the slots used, in order; returns their number, or 0 if the job does not
 * fit (it fits iff the sum over slots of floor(room / gpus_per_task) covers
 * its tasks).
 */
static int assign_tasks(hived *h, const gs_job *j, int n, int pass2)
{
    const int gpt = j->gpus_per_task;
    int64_t cap = 0;
    for (int i = 0; i < n; i++) cap += (pass2 ? h->sl[i].avail2 : h->sl[i].avail1) / gpt;
    if (cap < j->ntasks) return 0;
    if (ensure_chosen(h, n)) return 0;
    int left = j->ntasks, k = 0;
    while (left > 0) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            const vslot *s = &h->sl[i];
            if (s->take || (pass2 ? s->avail2 : s->avail1) < gpt) continue;
            if (best < 0 || slot_cmp(s, &h->sl[best]) < 0) best = i;
        }
        if (best < 0) return 0; /* cannot happen: cap covers the tasks */
        vslot *s = &h->sl[best];
        int t = (pass2 ? s->avail2 : s->avail1) / gpt;
        s->take = t < left ? t : left;
        left -= s->take;
        h->chosen[k++] = best;
    }
    return k;
}

static int ensure_g(hived *h, int n)
{
    if (n <= h->capg) return 0;
    int nc = h->capg ? h->capg : 64;
    while (nc < n) nc *= 2;
    int *g = realloc(h->gsel, (size_t)nc * sizeof *g);
    if (!g) return oom(h);
    h->gsel = g;
    h->capg = nc;
    return 0;
}

static int ensure_ok(hived *h, int n)
{
    if (n <= h->capok) return 0;
    int nc = h->capok ? h->capok : 64;
    while (nc < n) nc *= 2;
    char *x = realloc(h->okg, (size_t)nc);
    if (!x) return oom(h);
    h->okg = x;
    h->capok = nc;
    return 0;
}

static int picked(const int *v, int n, int g)
{
    for (int i = 0; i < n; i++)
        if (v[i] == g) return 1;
    return 0;
}

/* preference of a usable GPU: 0 free, 1 opportunistic, 2 lower-ranked job of the VC */
static int gpu_cost(const hived *h, int32_t g)
{
    const gs_gpu *gp = gs_cluster_gpu(h->c, g);
    if (gp->owner < 0) return 0;
    return h->jkind[gp->owner] == K_GUAR ? 2 : 1;
}

/*
 * The GPUs of [blo, bhi) a task still needs after the free ones come from
 * running jobs of one kind (cost 1: opportunistic, 2: lower-ranked jobs of
 * the VC), chosen to disrupt least: first jobs this placement already stops,
 * then the fewest new jobs, then the fewest GPUs stopped in all (a victim's
 * whole gang stops), then the least work lost (youngest runs).  Exhaustive
 * over the candidate jobs of the node (at most 12; greedy beyond).  Takes
 * up to 'need' GPUs into out[n...] and returns how many; with dry set it
 * only adds what it would stop to *vc and returns how many it would take.
 */
typedef struct vcost {
    int64_t gjobs, ojobs, gpus, work; /* new guaranteed / opportunistic victims, their GPUs, work */
} vcost;

static int vcost_cmp(const vcost *a, const vcost *b)
{
    if (a->gjobs != b->gjobs) return a->gjobs < b->gjobs ? -1 : 1;
    if (a->ojobs != b->ojobs) return a->ojobs < b->ojobs ? -1 : 1;
    if (a->gpus != b->gpus) return a->gpus < b->gpus ? -1 : 1;
    if (a->work != b->work) return a->work < b->work ? -1 : 1;
    return 0;
}

static int take_victims(hived *h, gs_time now, int32_t lo, int32_t blo, int32_t bhi, char *ok,
                        int cost, int need, int *out, int n, int dry, vcost *vc)
{
    enum { MAXC = 12 };
    int32_t cj[64];
    int ck[64], nc = 0, got = 0;
    /* candidate owners with their usable GPUs in range */
    for (int32_t g = blo; g < bhi; g++) {
        if (!ok[g - lo] || gpu_cost(h, g) != cost) continue;
        int32_t o = gs_cluster_gpu(h->c, g)->owner;
        int c = 0;
        while (c < nc && cj[c] != o) c++;
        if (c == nc) {
            if (nc == 64) continue;
            cj[nc] = o;
            ck[nc++] = 0;
        }
        ck[c]++;
    }
    if (!nc) return 0;
    /* 1 = take this job's GPUs: jobs already stopped by this placement are free to take */
    char take[64] = {0};
    int left = need;
    for (int c = 0; c < nc && left > 0; c++)
        for (int i = 0; i < n; i++)
            if (gs_cluster_gpu(h->c, out[i])->owner == cj[c]) {
                take[c] = 1;
                left -= ck[c];
                break;
            }
    if (left > 0) {
        int idx[64], m = 0;
        for (int c = 0; c < nc; c++)
            if (!take[c]) idx[m++] = c;
        if (m <= MAXC) {
            /* best subset: fewest jobs, then fewest GPUs in all, then least work lost */
            uint32_t best = 0;
            int64_t bj = INT64_MAX, bg = 0, bw = 0;
            for (uint32_t set = 1; set < (1u << m); set++) {
                int64_t cover = 0, nj = 0, ng = 0, work = 0;
                for (int i = 0; i < m; i++)
                    if (set & (1u << i)) {
                        const gs_job *v = gs_policy_job(h->e, (size_t)cj[idx[i]]);
                        cover += ck[idx[i]];
                        nj++;
                        ng += v->gpus;
                        work += now - v->last_start;
                    }
                if (cover < left) continue;
                if (nj < bj || (nj == bj && (ng < bg || (ng == bg && work < bw)))) {
                    best = set;
                    bj = nj;
                    bg = ng;
                    bw = work;
                }
            }
            for (int i = 0; i < m; i++)
                if (best & (1u << i)) take[idx[i]] = 1;
        } else {
            /* greedy: most GPUs here first, then smaller, then younger jobs */
            while (left > 0) {
                int b = -1;
                for (int i = 0; i < m; i++) {
                    int c = idx[i];
                    if (take[c]) continue;
                    const gs_job *x = gs_policy_job(h->e, (size_t)cj[c]);
                    const gs_job *y = b >= 0 ? gs_policy_job(h->e, (size_t)cj[b]) : NULL;
                    if (!y || ck[c] > ck[b] ||
                        (ck[c] == ck[b] && (x->gpus < y->gpus ||
                                            (x->gpus == y->gpus && x->last_start > y->last_start))))
                        b = c;
                }
                if (b < 0) break;
                take[b] = 1;
                left -= ck[b];
            }
        }
    }
    if (dry) {
        int cover = 0;
        for (int c = 0; c < nc; c++) {
            if (!take[c]) continue;
            cover += ck[c];
            int already = 0;
            for (int i = 0; i < n && !already; i++)
                already = gs_cluster_gpu(h->c, out[i])->owner == cj[c];
            if (already) continue;
            const gs_job *v = gs_policy_job(h->e, (size_t)cj[c]);
            if (cost == 2)
                vc->gjobs++;
            else
                vc->ojobs++;
            vc->gpus += v->gpus;
            vc->work += now - v->last_start;
        }
        return cover < need ? cover : need;
    }
    for (int32_t g = blo; g < bhi && got < need; g++) {
        if (!ok[g - lo] || gpu_cost(h, g) != cost) continue;
        int32_t o = gs_cluster_gpu(h->c, g)->owner;
        int c = 0;
        while (c < nc && cj[c] != o) c++;
        if (c == nc || !take[c]) continue;
        ok[g - lo] = 0;
        out[n + got++] = g;
    }
    return got;
}

/* usable() from gkey: free or opportunistic, or (pass 2) held by a job j outranks */
static int gusable(const hived *h, const gs_job *j, int32_t g, int pass2, int64_t rj, gs_time now)
{
    int32_t k = h->gkey[g];
    if (k == GK_NONE) return 1;
    if (!pass2 || k == GK_DOWN || k > j->priority) return 0;
    if (k < j->priority) return 1;
    if (h->intra != I_LAS && h->intra != I_TLAS) return 0;
    return rank_of(h, gs_policy_job(h->e, (size_t)gs_cluster_gpu(h->c, g)->owner), now) > rj;
}

/*
 * Pick k usable GPUs in [lo,hi) (inside one node) for one task: inside the
 * lowest cell (PCIe switch before socket before node) that still has k
 * usable GPUs, tightest first; then the cheapest GPUs (free, opportunistic,
 * lower-ranked).
 */
static int pick_task(hived *h, const gs_job *j, int pass2, gs_time now, int32_t lo, int32_t hi,
                     int k, int *out, int nout)
{
    const int las = h->intra == I_LAS || h->intra == I_TLAS;
    const int64_t rj = las ? rank_of(h, j, now) : 0;
    /* usable and not yet picked, by GPU of [lo, hi) */
    if (ensure_ok(h, hi - lo)) return GS_ENOMEM;
    char *ok = h->okg;
    for (int32_t g = lo; g < hi; g++) ok[g - lo] = (char)gusable(h, j, g, pass2, rj, now);
    for (int i = 0; i < nout; i++)
        if (out[i] >= lo && out[i] < hi) ok[out[i] - lo] = 0;
    int32_t blo = lo, bhi = hi;
    int best_kind = 99, best_cnt = 1 << 30;
    vcost best_v = {0, 0, 0, 0};
    const gs_node *nd = gs_cluster_node(h->c, gs_cluster_gpu(h->c, lo)->node);
    int32_t end = h->cell_end[nd->cell];
    for (int32_t x = nd->cell + 1; x < end; x++) {
        const gs_cell *cx = gs_cluster_cell(h->c, x);
        if (cx->kind == GS_CELL_GPU || cx->gpu_lo < lo || cx->gpu_hi > hi) continue;
        int cnt = 0, fr = 0;
        for (int32_t g = cx->gpu_lo; g < cx->gpu_hi; g++) {
            cnt += ok[g - lo];
            fr += ok[g - lo] && gpu_cost(h, g) == 0;
        }
        if (cnt < k) continue;
        /* what taking the task's GPUs here would stop */
        vcost v = {0, 0, 0, 0};
        int r = k - fr;
        for (int c = 1; c <= 2 && r > 0; c++)
            r -= take_victims(h, now, lo, cx->gpu_lo, cx->gpu_hi, ok, c, r, out, nout, 1, &v);
        /* lowest cell first (affinity), then least disruption, then tightest */
        int vc = vcost_cmp(&v, &best_v);
        if (cx->kind < best_kind ||
            (cx->kind == best_kind && (vc < 0 || (vc == 0 && cnt < best_cnt)))) {
            best_kind = cx->kind;
            best_cnt = cnt;
            best_v = v;
            blo = cx->gpu_lo;
            bhi = cx->gpu_hi;
        }
    }
    int got = 0;
    for (int32_t g = blo; g < bhi && got < k; g++) {
        if (!ok[g - lo] || gpu_cost(h, g) != 0) continue;
        ok[g - lo] = 0;
        out[nout + got++] = g;
    }
    for (int cost = 1; cost <= 2 && got < k; cost++)
        got += take_victims(h, now, lo, blo, bhi, ok, cost, k - got, out, nout + got, 0, NULL);
    return got == k ? 0 : GS_ENOFIT;
}

/*
 * The GPU range of the lowest cell inside [slo, shi) that contains [lo, hi):
 * the tasks of one node are then picked inside it.  Returns its low end and
 * stores its high end in *ohi.
 */
static int32_t common_range_lo(const hived *h, int32_t lo, int32_t hi, int32_t slo, int32_t shi,
                               int32_t *ohi)
{
    const gs_node *nd = gs_cluster_node(h->c, gs_cluster_gpu(h->c, lo)->node);
    int32_t best_lo = slo, best_hi = shi;
    size_t ncells = gs_cluster_ncells(h->c);
    const gs_cell *ncell = gs_cluster_cell(h->c, nd->cell);
    for (size_t x = (size_t)nd->cell + 1; x < ncells; x++) {
        const gs_cell *cx = gs_cluster_cell(h->c, (int)x);
        if (cx->gpu_lo >= ncell->gpu_hi || cx->depth <= ncell->depth) break;
        if (cx->kind == GS_CELL_GPU || cx->gpu_lo < slo || cx->gpu_hi > shi) continue;
        if (cx->gpu_lo <= lo && hi <= cx->gpu_hi && cx->gpu_hi - cx->gpu_lo < best_hi - best_lo) {
            best_lo = cx->gpu_lo;
            best_hi = cx->gpu_hi;
        }
    }
    *ohi = best_hi;
    return best_lo;
}

/* GPUs ascending inside each task (readable placements, same set). */
static void sort_tasks(int *g, int ntasks, int gpt)
{
    for (int t = 0; t < ntasks; t++) {
        int *x = g + t * gpt;
        for (int i = 1; i < gpt; i++) {
            int v = x[i], k = i;
            while (k > 0 && x[k - 1] > v) x[k] = x[k - 1], k--;
            x[k] = v;
        }
    }
}

/* ---- starting jobs --------------------------------------------------------------------------- */

/*
 * VC v counts the GPUs of its guaranteed jobs of priority prio (an entry, 0 GPUs, if new):
 * made when such a job is queued or adopted, so that vx_prio() at its start allocates
 * nothing and the counts stay exact out of memory.  0 or GS_ENOMEM (latched).
 */
static int vx_prio_reserve(hived *h, int v, int32_t prio)
{
    if (v < 0 || v >= h->nvc) return 0;
    vcst *vc = &h->vc[v];
    for (int i = 0; i < vc->npp; i++)
        if (vc->pprio[i] == prio) return 0;
    if (vc->npp == vc->cappp) {
        int nc = vc->cappp ? vc->cappp * 2 : 4;
        int32_t *a = realloc(vc->pprio, (size_t)nc * sizeof *a);
        if (!a) return oom(h);
        vc->pprio = a;
        int32_t *b = realloc(vc->pgpus, (size_t)nc * sizeof *b);
        if (!b) return oom(h);
        vc->pgpus = b;
        vc->cappp = nc;
    }
    vc->pprio[vc->npp] = prio;
    vc->pgpus[vc->npp++] = 0;
    return 0;
}

/* VC v's guaranteed jobs of priority prio hold delta more GPUs (see no_room()). */
static void vx_prio(hived *h, int v, int32_t prio, int delta)
{
    if (v < 0 || v >= h->nvc) return;
    vcst *vc = &h->vc[v];
    for (int i = 0; i < vc->npp; i++)
        if (vc->pprio[i] == prio) {
            vc->pgpus[i] += delta;
            return;
        }
    if (vc->npp == vc->cappp) {
        int nc = vc->cappp ? vc->cappp * 2 : 4;
        int32_t *a = realloc(vc->pprio, (size_t)nc * sizeof *a);
        if (!a) {
            oom(h);
            return;
        }
        vc->pprio = a;
        int32_t *b = realloc(vc->pgpus, (size_t)nc * sizeof *b);
        if (!b) {
            oom(h);
            return;
        }
        vc->pgpus = b;
        vc->cappp = nc;
    }
    vc->pprio[vc->npp] = prio;
    vc->pgpus[vc->npp++] = delta;
}

/*
 * Job j (not grouped, not pinned) certainly finds no room in VC v's view of
 * chain c in either pass of try_in_chain(), which would then fail on
 * capacity alone without a side effect: pass 1 has fewer than j's tasks
 * (sum over the view's nodes of floor(free GPUs / GPUs per task), from the
 * room summary), and pass 2 is skipped because no GPU of the VC is held by
 * a job j could outrank (none of a lower priority; under an intra-VC LAS
 * order none of its own priority either).  Views with bound cells below
 * node level are left to the placement.
 */
static int no_room(const hived *h, const gs_job *j, int v, int c)
{
    if (j->pinned_cell >= 0 || gs_job_grouped(j) || !h->vxh ||
        h->vxsub[(size_t)v * (size_t)h->nch + (size_t)c])
        return 0;
    const vcst *vc = &h->vc[v];
    const int las = h->intra == I_LAS || h->intra == I_TLAS;
    for (int i = 0; i < vc->npp; i++)
        if (vc->pgpus[i] > 0 &&
            (vc->pprio[i] < j->priority || (las && vc->pprio[i] == j->priority)))
            return 0;
    const int32_t *hist = vx_hist(h, v, c), *unb = hist + h->hmax + 1;
    const int gpt = j->gpus_per_task;
    int64_t cap = 0;
    for (int f = gpt; f <= h->hmax; f++) cap += (int64_t)(hist[f] + unb[f]) * (f / gpt);
    return cap < j->ntasks;
}

static void account_start(hived *h, gs_job *j, int kind)
{
    h->jkind[j->slot] = (int8_t)kind;
    h->jlazy[j->slot] = 0;
    count_gpus(h, j->alloc, j->nalloc, kind, 1);
    if (kind != K_GUAR) return;
    vx_prio(h, h->jvc[j->slot], j->priority, j->nalloc);
    for (int i = 0; i < j->nalloc; i++) {
        int32_t p = h->gpu_pa[j->alloc[i]];
        if (p < 0) continue;
        h->pa[p].used++;
        if (h->pa[p].doomed) {
            /* a job uses the healthy part of a doomed cell: it is simply bound now */
            h->pa[p].doomed = 0;
            h->ch[h->pa[p].chain].ndoomed--;
            doom_sync(h, h->pa[p].chain);
        }
    }
}

/* The job's GPUs are gone (finish/preempt/requeue) or downgraded: release the VC's use. */
static void account_stop(hived *h, gs_job *j, const int32_t *gpus, int n)
{
    int kind = h->jkind[j->slot];
    h->jkind[j->slot] = K_NONE;
    h->jlazy[j->slot] = 0;
    count_gpus(h, gpus, n, kind, -1);
    if (kind != K_GUAR) return;
    vx_prio(h, h->jvc[j->slot], j->priority, -n);
    vc_changed(h, h->jvc[j->slot]);
    for (int i = 0; i < n; i++) {
        int32_t p = h->gpu_pa[gpus[i]];
        if (p < 0) continue;
        /* inside a pass the cell may be about to be reused by the preemptor:
         * unused cells are released by sweep() when the pass ends */
        if (--h->pa[p].used == 0) {
            if (!h->in_pass)
                unbind_pa(h, p);
            else
                sweep_note(h, p);
        }
    }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/*
 * Release every bound, unused, non-fixed cell of VC v (all VCs if v < 0), in
 * pa order.  A pa gets there only by being bound (bind_cell) or by its use
 * or doom ending (account_stop, adopt_task), each of which notes it
 * (sweep_note): for all VCs only the noted pa are looked at.
 */
static void sweep(hived *h, int v)
{
    if (v < 0) {
        int n = h->nswc;
        int32_t *c = h->swc;
        h->swc = h->swtmp; /* notes made while releasing go to the other buffer */
        h->swtmp = c;
        h->nswc = 0;
        for (int i = 0; i < n; i++) h->inswc[c[i]] = 0;
        if (n > 1) qsort(c, (size_t)n, sizeof *c, cmp_i32);
        for (int i = 0; i < n; i++) {
            int32_t p = c[i];
            if (h->pa[p].cell >= 0 && !h->pa[p].used && !h->pa[p].fixed && !h->pa[p].doomed)
                unbind_pa(h, p);
        }
        return;
    }
    for (int p = 0; p < h->npa; p++)
        if ((v < 0 || h->pa[p].vc == v) && h->pa[p].cell >= 0 && !h->pa[p].used &&
            !h->pa[p].fixed && !h->pa[p].doomed)
            unbind_pa(h, p);
}

/* Downgrade a running guaranteed job to opportunistic (lazy preemption). */
static void downgrade(hived *h, gs_job *j)
{
    account_stop(h, j, j->alloc, j->nalloc);
    h->jkind[j->slot] = K_OPP;
    h->jlazy[j->slot] = 1;
    count_gpus(h, j->alloc, j->nalloc, K_OPP, 1);
    /* its cells may now be free for the VC to take elsewhere */
    sweep(h, h->jvc[j->slot]);
    gs_engine_note(h->e, j, "lazily preempted: downgraded to opportunistic, keeps running");
}

static int collect_victims(hived *h, const int *gpus, int n, gs_job *self)
{
    int nv = 0;
    for (int i = 0; i < n; i++) {
        int32_t o = gs_cluster_gpu(h->c, gpus[i])->owner;
        if (o < 0 || o == self->slot) continue;
        gs_job *vj = gs_policy_job(h->e, (size_t)o);
        int dup = 0;
        for (int k = 0; k < nv && !dup; k++) dup = h->vict[k] == vj;
        if (dup) continue;
        if (nv == h->capv) {
            int nc = h->capv ? h->capv * 2 : 32;
            gs_job **nvv = realloc(h->vict, (size_t)nc * sizeof *nvv);
            if (!nvv) return oom(h), -1;
            h->vict = nvv;
            h->capv = nc;
        }
        h->vict[nv++] = vj;
    }
    return nv;
}

/* ---- grouped jobs: tasks of different sizes, withinOneCell groups ------------------------------
 */

/*
 * A grouped job (gs_job_grouped) is placed as HiveD places an affinity group
 * of members of different sizes (v1) or a pod group with nested
 * withinOneCell child groups (v2, its cell-as-sku branch): per group, the
 * candidate cells of its 'within' type are tried in preference order (the
 * order of their best node); inside one, the group's own tasks go first-fit
 * over its nodes in preference order without going back (v1: smallest task
 * first; v2: largest first), then its child groups (largest first), each
 * inside that cell.  A 'within' type at or above node level is a cell of the
 * VC's view (a VC cell below that level counts as one such cell, as in
 * HiveD); below node level the group's tasks share a node and their GPUs
 * are picked inside one cell of that type there.
 */

/* GPUs of tasks [lo, hi) of j. */
static int span_gpus(const gs_job *j, int lo, int hi)
{
    return gs_job_task_first(j, hi) - gs_job_task_first(j, lo);
}

/* Level in chain ch of group gi's within type: 0 = no within, -1 = not a type of the chain. */
static int group_level(const hived *h, const gs_job *j, int ch, int gi)
{
    if (gi < 0 || j->groups[gi].within_type < 0) return 0;
    int l = level_of_type(h, ch, j->groups[gi].within_type);
    return l ? l : -1;
}

/*
 * Which cell of level L (above node level) slot i lies in, as a key: the
 * physical cell for a bound slot (the VC cell itself when it is lower than
 * L), the VC cell and the index of its virtual level-L cell for an unbound
 * one.  At or below node level: the slot itself.
 */
static int64_t unit_key(const hived *h, int ch, int i, int L)
{
    const chain *c = &h->ch[ch];
    const vslot *s = &h->sl[i];
    if (L <= c->node_lv) return i;
    if (s->node >= 0) {
        if (s->pa >= 0 && h->pa[s->pa].level < L) return h->pa[s->pa].cell;
        int32_t x = gs_cluster_node(h->c, s->node)->cell;
        while (x > 0 && h->cell_level[x] < L) x = gs_cluster_cell(h->c, x)->parent;
        return x;
    }
    const pa *a = &h->pa[s->pa];
    if (a->level < L) return -1 - ((int64_t)s->pa << 24);
    int per = c->gpus_at[L] / (a->vper ? a->vper : 1);
    return -1 - ((int64_t)s->pa << 24) - (per > 0 ? s->vidx / per : s->vidx);
}

/* The level of the cell unit_key() names for slot i: L, or that of a lower VC cell. */
static int unit_level(const hived *h, int ch, int i, int L)
{
    const vslot *s = &h->sl[i];
    if (L <= h->ch[ch].node_lv || s->pa < 0 || h->pa[s->pa].level >= L) return L;
    return h->pa[s->pa].level;
}

/* Stable merge sort of slot indices by slot_cmp (or by the opportunistic key in h->ord). */
static void sort_slots(hived *h, int *v, int *tmp, int n, int opp)
{
    for (int w = 1; w < n; w *= 2)
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                int first_b =
                    opp ? h->ord[v[b]] < h->ord[v[a]] : slot_cmp(&h->sl[v[b]], &h->sl[v[a]]) < 0;
                tmp[k++] = first_b ? v[b++] : v[a++];
            }
            while (a < mid) tmp[k++] = v[a++];
            while (b < hi) tmp[k++] = v[b++];
            memcpy(v + lo, tmp + lo, (size_t)(hi - lo) * sizeof *v);
        }
}

typedef struct gplace {
    const gs_job *j;
    int ch, desc;
    int *room;  /* by slot: GPUs left for this job */
    int *tslot; /* by task: its slot */
    int *order; /* scratch: tasks or groups being sorted */
} gplace;

/* Task t of j lies in a child group of gi (a group whose parent is gi). */
static int in_child(const gs_job *j, int gi, int t)
{
    for (int k = gi + 1; k < j->ngroups; k++)
        if (j->groups[k].parent == gi && t >= j->groups[k].lo && t < j->groups[k].hi) return 1;
    return 0;
}

/*
 * Place group gi (-1: the whole job) on slots[0..m) (in preference order).
 * Returns 1 with room and tslot updated, 0 with them as they were.
 */
static int place_group(hived *h, gplace *g, int gi, const int *slots, int m)
{
    const gs_job *j = g->j;
    int L = group_level(h, j, g->ch, gi);
    if (L < 0) return 0;
    int lo = gi < 0 ? 0 : j->groups[gi].lo, hi = gi < 0 ? j->ntasks : j->groups[gi].hi;
    /* own tasks, sorted (stable) by size: ascending without groups (v1), else descending */
    int nt = 0, *tasks = malloc((size_t)(hi - lo) * sizeof *tasks);
    int nkid = 0, *kids = malloc((size_t)(j->ngroups + 1) * sizeof *kids);
    int *sub = malloc((size_t)(m ? m : 1) * sizeof *sub);
    int *saved = malloc((size_t)(m ? m : 1) * sizeof *saved);
    int64_t *keys = malloc((size_t)(m ? m : 1) * sizeof *keys);
    int ok = 0;
    if (!tasks || !kids || !sub || !saved || !keys) {
        oom(h);
        goto out;
    }
    for (int t = lo; t < hi; t++) {
        if (in_child(j, gi, t)) continue;
        int k = nt++;
        int sz = gs_job_task_gpus(j, t);
        while (k > 0 && (g->desc ? gs_job_task_gpus(j, tasks[k - 1]) < sz
                                 : gs_job_task_gpus(j, tasks[k - 1]) > sz))
            tasks[k] = tasks[k - 1], k--;
        tasks[k] = t;
    }
    for (int k = gi + 1; k < j->ngroups; k++) {
        if (j->groups[k].parent != gi) continue;
        int q = nkid++, sz = span_gpus(j, j->groups[k].lo, j->groups[k].hi);
        while (q > 0 && span_gpus(j, j->groups[kids[q - 1]].lo, j->groups[kids[q - 1]].hi) < sz)
            kids[q] = kids[q - 1], q--;
        kids[q] = k;
    }
    for (int i = 0; i < m; i++) keys[i] = L ? unit_key(h, g->ch, slots[i], L) : 0;
    /* candidate cells, lower ones first (a VC cell below L), then in the order of their
     * best slot (HiveD sorts them by health, level, then packing) */
    for (int lv = L ? 1 : 0; lv <= L && !ok && !h->err; lv++)
        for (int i = 0; i < m && !ok && !h->err; i++) {
            if (L && unit_level(h, g->ch, slots[i], L) != lv) continue;
            int seen = 0;
            for (int q = 0; q < i && !seen; q++) seen = keys[q] == keys[i];
            if (seen) continue;
            int ms = 0;
            for (int q = i; q < m; q++)
                if (keys[q] == keys[i]) sub[ms++] = slots[q];
            for (int q = 0; q < ms; q++) saved[q] = g->room[sub[q]];
            /* the group's own tasks: first fit, never going back */
            int idx = 0, fit = 1;
            for (int k = 0; k < nt && fit; k++) {
                int sz = gs_job_task_gpus(j, tasks[k]);
                while (idx < ms && g->room[sub[idx]] < sz) idx++;
                if (idx == ms) {
                    fit = 0;
                    break;
                }
                g->room[sub[idx]] -= sz;
                g->tslot[tasks[k]] = sub[idx];
            }
            for (int k = 0; k < nkid && fit; k++) fit = place_group(h, g, kids[k], sub, ms);
            if (fit) {
                ok = 1;
                break;
            }
            for (int q = 0; q < ms; q++) g->room[sub[q]] = saved[q];
            if (!L) break; /* no within: one candidate, the slots given */
        }
out:
    free(tasks);
    free(kids);
    free(sub);
    free(saved);
    free(keys);
    return ok;
}

/*
 * Assign the tasks of grouped job j to the n slots in h->sl (room: avail1 /
 * avail2, or h->sl[i].avail1 for opportunistic slots ordered by h->ord) in
 * chain ch.  Fills h->tslot (by task), each used slot's take, and h->chosen
 * with the slots used in order; returns their number, 0 if it does not fit.
 */
static int assign_grouped(hived *h, const gs_job *j, int ch, int n, int pass2, int opp)
{
    if (ensure_chosen(h, n)) return 0;
    if ((size_t)j->ntasks > h->captslot) {
        int *t = realloc(h->tslot, (size_t)j->ntasks * sizeof *t);
        if (!t) return oom(h), 0;
        h->tslot = t;
        h->captslot = (size_t)j->ntasks;
    }
    int *v = malloc((size_t)(n ? n : 1) * sizeof *v),
        *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    int *room = malloc((size_t)(n ? n : 1) * sizeof *room);
    if (!v || !tmp || !room) {
        free(v), free(tmp), free(room);
        return oom(h), 0;
    }
    for (int i = 0; i < n; i++) {
        v[i] = i;
        room[i] = pass2 ? h->sl[i].avail2 : h->sl[i].avail1;
        h->sl[i].take = 0;
    }
    sort_slots(h, v, tmp, n, opp);
    gplace g = {j, ch, j->ngroups > 0, room, h->tslot, NULL};
    int k = 0;
    if (place_group(h, &g, -1, v, n)) {
        for (int t = 0; t < j->ntasks; t++) {
            vslot *s = &h->sl[h->tslot[t]];
            if (!s->take++) h->chosen[k++] = h->tslot[t];
        }
    }
    free(v);
    free(tmp);
    free(room);
    return k;
}

/* GPU g is inside one cell of level L of chain ch together with [lo, hi): the cell's range. */
static int level_range(const hived *h, int32_t g, int L, int32_t *clo, int32_t *chi)
{
    /* the cells of the node in pre-order: the deepest one of level L holding g */
    const gs_node *nd = gs_cluster_node(h->c, gs_cluster_gpu(h->c, g)->node);
    int32_t end = h->cell_end[nd->cell];
    for (int32_t x = nd->cell; x < end; x++) {
        const gs_cell *cx = gs_cluster_cell(h->c, x);
        if (h->cell_level[x] != L || g < cx->gpu_lo || g >= cx->gpu_hi) continue;
        *clo = cx->gpu_lo;
        *chi = cx->gpu_hi;
        return 1;
    }
    return 0;
}

/* The innermost group of j below node level that holds task t in chain ch (-1: none). */
static int subnode_group(const hived *h, const gs_job *j, int ch, int t)
{
    int best = -1;
    for (int k = 0; k < j->ngroups; k++) {
        const gs_task_group *gr = &j->groups[k];
        if (t < gr->lo || t >= gr->hi) continue;
        int L = group_level(h, j, ch, k);
        if (L > 1 && L < h->ch[ch].node_lv) best = k; /* pre-order: later = deeper */
    }
    return best;
}

/* Free GPUs (not held, not down, of j's type) of [lo, hi) not in out[0..n): k of them. */
static int opp_pick(hived *h, const gs_job *j, int32_t lo, int32_t hi, int k, int *out, int n)
{
    int got = 0;
    for (int32_t g = lo; g < hi && got < k; g++) {
        const gs_gpu *gp = gs_cluster_gpu(h->c, g);
        if (gp->users || gp->down || picked(out, n + got, g)) continue;
        if (j->gpu_type >= 0 && gp->type != j->gpu_type) continue;
        out[n + got++] = g;
    }
    return got == k ? 0 : GS_ENOFIT;
}

/*
 * Pick the GPUs of grouped job j's tasks on the slots chosen (h->tslot):
 * per slot, the tasks of each group below node level inside one cell of its
 * type, then the others, each set under the lowest cell that holds it, as
 * for equal tasks.  GPUs go to h->gsel in pick order, task t's at
 * h->gpos[t].  Returns 0, or GS_ENOFIT.
 */
static int pick_grouped(hived *h, const gs_job *j, int ch, int pass2, gs_time now, int nch, int opp)
{
    if ((size_t)j->ntasks > h->capgpos) {
        int *p = realloc(h->gpos, (size_t)j->ntasks * sizeof *p);
        if (!p) return oom(h);
        h->gpos = p;
        h->capgpos = (size_t)j->ntasks;
    }
    int nout = 0;
    for (int i = 0; i < nch; i++) {
        int si = h->chosen[i];
        const vslot *s = &h->sl[si];
        /* sets of tasks on this slot: one per group below node level, then the rest (-1) */
        for (int pass = 0; pass < 2; pass++)
            for (int t0 = 0; t0 < j->ntasks; t0++) {
                if (h->tslot[t0] != si) continue;
                int grp = subnode_group(h, j, ch, t0);
                if ((pass == 0) != (grp >= 0)) continue;
                /* t0 is the first task of its set on this slot? */
                int first = 1;
                for (int t = 0; t < t0 && first; t++)
                    first = !(h->tslot[t] == si && subnode_group(h, j, ch, t) == grp);
                if (!first) continue;
                int k = 0;
                for (int t = t0; t < j->ntasks; t++)
                    if (h->tslot[t] == si && subnode_group(h, j, ch, t) == grp)
                        k += gs_job_task_gpus(j, t);
                int32_t lo = s->lo, hi = s->hi;
                int L = grp >= 0 ? group_level(h, j, ch, grp) : 0;
                if (opp) {
                    if (L) { /* the first cell of level L with room for the set */
                        int found = 0;
                        int32_t end = h->cell_end[gs_cluster_node(h->c, s->node)->cell];
                        for (int32_t x = gs_cluster_node(h->c, s->node)->cell; x < end && !found;
                             x++) {
                            if (h->cell_level[x] != L) continue;
                            const gs_cell *cx = gs_cluster_cell(h->c, x);
                            if (opp_pick(h, j, cx->gpu_lo, cx->gpu_hi, k, h->gsel, nout) == 0)
                                found = 1, lo = cx->gpu_lo, hi = cx->gpu_hi;
                        }
                        if (!found) return GS_ENOFIT;
                    }
                } else if (pick_task(h, j, pass2, now, s->lo, s->hi, k, h->gsel, nout) == 0) {
                    lo = hi = h->gsel[nout];
                    for (int q = 0; q < k; q++) {
                        if (h->gsel[nout + q] < lo) lo = h->gsel[nout + q];
                        if (h->gsel[nout + q] + 1 > hi) hi = h->gsel[nout + q] + 1;
                    }
                    lo = common_range_lo(h, lo, hi, s->lo, s->hi, &hi);
                    int32_t clo, chi;
                    if (L && (!level_range(h, lo, L, &clo, &chi) || hi > chi || lo < clo))
                        return GS_ENOFIT; /* no cell of the group's type has room for it */
                } else if (L) {
                    return GS_ENOFIT;
                }
                for (int t = t0; t < j->ntasks; t++) {
                    if (h->tslot[t] != si || subnode_group(h, j, ch, t) != grp) continue;
                    int sz = gs_job_task_gpus(j, t);
                    int rc = opp ? opp_pick(h, j, lo, hi, sz, h->gsel, nout)
                                 : pick_task(h, j, pass2, now, lo, hi, sz, h->gsel, nout);
                    if (rc) return rc == GS_ENOMEM ? oom(h) : GS_ENOFIT;
                    h->gpos[t] = nout;
                    nout += sz;
                }
            }
    }
    return 0;
}

/* h->gsel (picked by pick_grouped) in task order into pl, GPUs ascending inside each task. */
static void grouped_alloc(const hived *h, const gs_job *j, int *pl)
{
    for (int t = 0; t < j->ntasks; t++) {
        int *x = pl + gs_job_task_first(j, t), sz = gs_job_task_gpus(j, t);
        memcpy(x, h->gsel + h->gpos[t], (size_t)sz * sizeof *x);
        for (int i = 1; i < sz; i++) {
            int v = x[i], k = i;
            while (k > 0 && x[k - 1] > v) x[k] = x[k - 1], k--;
            x[k] = v;
        }
    }
}

/* Every withinOneCell group of j inside one cell of its type on alloc pl (task order). */
static int groups_hold(const hived *h, const gs_job *j, const int *pl)
{
    for (int k = 0; k < j->ngroups; k++) {
        const gs_task_group *gr = &j->groups[k];
        if (gr->within_type < 0) continue;
        int lo = gs_job_task_first(j, gr->lo), hi = gs_job_task_first(j, gr->hi);
        if (gs_cluster_cell_type(h->c, gr->within_type)->child < 0) {
            if (hi - lo > 1) return 0; /* within a leaf cell type: one GPU */
            continue;
        }
        /* the cell of that type holding the first GPU: an ancestor of its node, or below it */
        int32_t cell = -1;
        int32_t nc = gs_cluster_node(h->c, gs_cluster_gpu(h->c, pl[lo])->node)->cell;
        for (int32_t a = nc; a >= 0 && cell < 0; a = gs_cluster_cell(h->c, a)->parent)
            if (gs_cluster_cell(h->c, a)->type == gr->within_type) cell = a;
        for (int32_t x = nc; x < h->cell_end[nc] && cell < 0; x++) {
            const gs_cell *cx = gs_cluster_cell(h->c, x);
            if (cx->type == gr->within_type && pl[lo] >= cx->gpu_lo && pl[lo] < cx->gpu_hi)
                cell = x;
        }
        if (cell < 0) return 0;
        const gs_cell *cx = gs_cluster_cell(h->c, cell);
        for (int q = lo; q < hi; q++)
            if (pl[q] < cx->gpu_lo || pl[q] >= cx->gpu_hi) return 0;
    }
    return 1;
}

/*
 * Try to start guaranteed job j of VC v inside chain ch: pass 1 without
 * preempting the VC's own jobs, then pass 2.  Returns 1 if started (or
 * victims are stopping in LIVE mode), 0 if it does not fit there now; clears
 * *pure when it failed for another reason than the VC's capacity in the
 * chain, or after a side effect.
 */
static int try_in_chain(hived *h, gs_job *j, int v, int ch, gs_time now, int *pure)
{
    int more2 = 1; /* does pass 2 see more room than pass 1? */
    int cpure = 1; /* this chain failed on capacity alone so far */
    for (int pass2 = 0; pass2 <= 1; pass2++) {
        if (pass2 && !more2 && cpure) return 0; /* pass 2 would see exactly the same */
        for (int attempt = 0; attempt < 4; attempt++) {
            /* assign tasks on the VC's view; bind the unbound cells the assignment
             * uses and assign again on the now physical view, until it is all physical */
            int nch = 0, ok = 1, placed = 0;
            for (int iter = 0; iter <= h->vc[v].npas && ok; iter++) {
                int differ;
                int n = build_slots(h, j, v, ch, now, &differ);
                if (n < 0) {
                    cpure = 0, *pure = 0;
                    return 0;
                }
                if (iter == 0 && attempt == 0 && !pass2) more2 = differ;
                nch = gs_job_grouped(j) ? assign_grouped(h, j, ch, n, pass2, 0)
                                        : assign_tasks(h, j, n, pass2);
                if (!nch) {
                    ok = 0;
                    if (iter || attempt) cpure = 0, *pure = 0;
                    break;
                }
                int any_virtual = 0;
                for (int i = 0; i < nch && ok; i++) {
                    vslot *s = &h->sl[h->chosen[i]];
                    if (s->node >= 0) continue;
                    any_virtual = 1;
                    if (h->pa[s->pa].cell < 0 && bind_pa(h, s->pa) != 0) ok = 0;
                }
                if (!any_virtual) {
                    placed = 1;
                    break;
                }
            }
            /* cells bound for nothing are released by sweep() when the pass ends */
            if (ok && !placed) ok = 0;
            if (!ok) {
                if (nch) cpure = 0, *pure = 0; /* failed after binding */
                break;                         /* next pass */
            }
            cpure = 0, *pure = 0;
            if (ensure_g(h, j->gpus)) return 0;
            int nout = 0;
            if (gs_job_grouped(j)) {
                if (pick_grouped(h, j, ch, pass2, now, nch, 0)) break;
                int *tmp = malloc((size_t)j->gpus * sizeof *tmp);
                if (!tmp) return oom(h), 0;
                grouped_alloc(h, j, tmp);
                int held = groups_hold(h, j, tmp);
                free(tmp);
                if (!held) break; /* a group below node level found no cell with room */
                nout = j->gpus;
                nch = 0; /* picked */
            }
            for (int i = 0; i < nch && ok; i++) {
                vslot *s = &h->sl[h->chosen[i]];
                /* all tasks of this node under the lowest cell that holds them together */
                int32_t lo = s->lo, hi = s->hi;
                if (s->take > 1) {
                    int k = s->take * j->gpus_per_task;
                    if (pick_task(h, j, pass2, now, s->lo, s->hi, k, h->gsel, nout) == 0) {
                        lo = hi = h->gsel[nout];
                        for (int q = 0; q < k; q++) {
                            if (h->gsel[nout + q] < lo) lo = h->gsel[nout + q];
                            if (h->gsel[nout + q] + 1 > hi) hi = h->gsel[nout + q] + 1;
                        }
                        lo = common_range_lo(h, lo, hi, s->lo, s->hi, &hi);
                    }
                }
                for (int t = 0; t < s->take && ok; t++) {
                    if (pick_task(h, j, pass2, now, lo, hi, j->gpus_per_task, h->gsel, nout))
                        ok = 0;
                    else
                        nout += j->gpus_per_task;
                }
            }
            if (!ok) break;
            int nv = collect_victims(h, h->gsel, nout, j);
            if (nv < 0) return 0;
            /* lazy preemption: downgrade lazy guaranteed victims and try again */
            int lazy = 0;
            for (int k = 0; k < nv; k++) {
                gs_job *vj = h->vict[k];
                if (h->jkind[vj->slot] == K_GUAR && vj->lazy_preemption) {
                    downgrade(h, vj);
                    lazy = 1;
                }
            }
            if (lazy) continue;
            for (int k = 0; k < nv; k++) {
                gs_job *vj = h->vict[k];
                const char *why = h->jkind[vj->slot] == K_GUAR
                                      ? "preempted by a higher-priority job of its VC"
                                      : "opportunistic job preempted: its GPUs belong to a VC";
                if (gs_engine_preempt(h->e, vj, why) == GS_ENOMEM) return oom(h), 0;
            }
            int *pl = malloc((size_t)j->gpus * sizeof *pl);
            if (!pl) return oom(h), 0;
            if (gs_job_grouped(j)) {
                grouped_alloc(h, j, pl);
            } else {
                memcpy(pl, h->gsel, (size_t)j->gpus * sizeof *pl);
                sort_tasks(pl, j->ntasks, j->gpus_per_task);
            }
            int rc = gs_engine_start(h->e, j, pl, j->gpus);
            free(pl);
            if (rc == 0) {
                account_start(h, j, K_GUAR);
                return 1;
            }
            if (rc == GS_ENOMEM) return oom(h), 0;
            /* LIVE: victims are stopping; sweep() releases bindings not used yet */
            return nv > 0;
        }
    }
    return 0;
}

/*
 * Try to start guaranteed job j of VC v.  HiveD places a job (an affinity
 * group) inside one chain: the chains of its GPU type (any type: every
 * chain), in config order, where the VC has non-pinned cells (a pinned job:
 * its pinned cell's chain); the first chain where it fits wins, preempting
 * there if need be before a later chain is tried.  Returns 1 if started (or
 * victims are stopping in LIVE mode), 0 if it does not fit now.  On 0, *pure
 * says that it failed on the VC's capacity alone, before any side effect:
 * then every job it dominates fails too until the VC's capacity grows
 * (fail_cached()).
 */
static int try_guaranteed(hived *h, gs_job *j, int v, gs_time now, int *pure)
{
    *pure = 1;
    if (j->pinned_cell >= 0) return try_in_chain(h, j, v, h->cell_chain[j->pinned_cell], now, pure);
    for (int c = 0; c < h->nch && !h->err; c++) {
        if (!h->vc[v].has[c] || (j->gpu_type >= 0 && h->ch[c].gpu_type != j->gpu_type)) continue;
        if (no_room(h, j, v, c)) continue; /* what try_in_chain would find, at once */
        if (try_in_chain(h, j, v, c, now, pure)) return 1;
    }
    return 0;
}

/* Every within type of j's groups is a cell type of chain c. */
static int groups_in_chain(const hived *h, int c, const gs_job *j)
{
    for (int k = 0; k < j->ngroups; k++)
        if (j->groups[k].within_type >= 0 && !level_of_type(h, c, j->groups[k].within_type))
            return 0;
    return 1;
}

/* Could chain c hold j if it were idle?  (Grouped jobs: its GPUs and its largest task.) */
static int opp_fits(const hived *h, int c, const gs_job *j)
{
    const chain *x = &h->ch[c];
    if (j->gpu_type >= 0 && x->gpu_type != j->gpu_type) return 0;
    if (!gs_job_grouped(j))
        return (int64_t)x->nnodes * (x->node_gpus / j->gpus_per_task) >= j->ntasks;
    return groups_in_chain(h, c, j) && x->node_gpus >= j->gpus_per_task &&
           (int64_t)x->nnodes * x->node_gpus >= j->gpus;
}

/*
 * A grouped opportunistic job on the m candidate nodes of chain ch in h->ord
 * (sorted): as a guaranteed one on its VC's view (assign_grouped), with
 * free GPUs only.
 */
static int opp_grouped(hived *h, gs_job *j, int ch, int m)
{
    if (ensure_slots(h, m)) return 0;
    for (int i = 0; i < m; i++) {
        int32_t nd = (int32_t)(uint32_t)h->ord[i];
        const gs_node *node = gs_cluster_node(h->c, nd);
        vslot *s = &h->sl[i];
        *s = (vslot){-1, nd, -1, node->gpu_lo, node->gpu_hi, 0, 0, 0, 0, 0, 0};
        s->avail1 = s->avail2 = gs_cluster_cell(h->c, node->cell)->free;
        h->ord[i] = (uint64_t)i; /* keep this order */
    }
    int nch = assign_grouped(h, j, ch, m, 0, 1);
    if (!nch || pick_grouped(h, j, ch, 0, 0, nch, 1)) return 0;
    int *pl = malloc((size_t)j->gpus * sizeof *pl);
    if (!pl) return oom(h), 0;
    grouped_alloc(h, j, pl);
    int rc = groups_hold(h, j, pl) ? gs_engine_start(h->e, j, pl, j->gpus) : GS_ENOFIT;
    free(pl);
    if (rc == GS_ENOMEM) oom(h);
    if (rc) return 0;
    account_start(h, j, K_OPP);
    return 1;
}

/*
 * Opportunistic, inside chain ch: free physical GPUs, away from guaranteed
 * jobs: nodes in order of guaranteed use ascending, opportunistic use
 * descending, index.  Candidate nodes are found by descending only into
 * cells of the chain whose largest node has room for a task (the cluster's
 * max_node_free aggregate).
 */
static int opp_in_chain(hived *h, gs_job *j, int ch)
{
    const int gpt = gs_job_grouped(j) ? min_task(j) : j->gpus_per_task;
    size_t m = 0, ncell = gs_cluster_ncells(h->c);
    for (size_t x = 1; x < ncell;) {
        const gs_cell *cx = gs_cluster_cell(h->c, (int)x);
        if (cx->max_node_free < gpt || h->cell_chain[x] != ch ||
            (j->gpu_type >= 0 && !(cx->gpu_types & (1u << j->gpu_type)))) {
            x = (size_t)h->cell_end[x]; /* skip the subtree */
            continue;
        }
        if (cx->kind != GS_CELL_NODE) {
            x++;
            continue;
        }
        if (cx->free >= gpt) {
            if (m == h->capord) {
                size_t nc = h->capord ? h->capord * 2 : 256;
                uint64_t *o = realloc(h->ord, nc * sizeof *o);
                if (!o) return oom(h), 0;
                h->ord = o;
                h->capord = nc;
            }
            int32_t nd = cx->node_lo;
            /* sort key: guaranteed GPUs, then opportunistic GPUs descending, then index */
            h->ord[m++] = ((uint64_t)(uint16_t)h->node_g[nd] << 48) |
                          ((uint64_t)(uint16_t)(0xffff - h->node_o[nd]) << 32) | (uint32_t)nd;
        }
        x = (size_t)h->cell_end[x];
    }
    if (m > 1) qsort(h->ord, m, sizeof *h->ord, cmp_u64); /* h->ord may be NULL when m == 0 */
    if (gs_job_grouped(j)) return opp_grouped(h, j, ch, (int)m);
    int nout = 0, left = j->ntasks;
    for (size_t i = 0; i < m && left; i++) {
        const gs_node *node = gs_cluster_node(h->c, (int)(uint32_t)h->ord[i]);
        for (;;) {
            if (!left) break;
            int got = 0;
            for (int32_t g = node->gpu_lo; g < node->gpu_hi && got < gpt; g++) {
                const gs_gpu *gp = gs_cluster_gpu(h->c, g);
                if (gp->users || gp->down || picked(h->gsel, nout + got, g)) continue;
                if (j->gpu_type >= 0 && gp->type != j->gpu_type) continue;
                h->gsel[nout + got++] = g;
            }
            if (got < gpt) break;
            nout += got;
            left--;
        }
    }
    if (left) return 0;
    int *pl = malloc((size_t)j->gpus * sizeof *pl);
    if (!pl) return oom(h), 0;
    memcpy(pl, h->gsel, (size_t)j->gpus * sizeof *pl);
    int rc = gs_engine_start(h->e, j, pl, j->gpus);
    free(pl);
    if (rc == GS_ENOMEM) oom(h);
    if (rc) return 0;
    account_start(h, j, K_OPP);
    return 1;
}

/*
 * Opportunistic: free physical GPUs anywhere, inside one chain: the chains
 * of its GPU type (any type: every chain) in config order, the first where
 * it fits.
 */
static int try_opportunistic(hived *h, gs_job *j)
{
    if (ensure_g(h, j->gpus)) return 0;
    for (int c = 0; c < h->nch && !h->err; c++) {
        if (!opp_fits(h, c, j)) continue; /* never fits this chain */
        if (opp_in_chain(h, j, c)) return 1;
    }
    return 0;
}

/* ---- policy hooks -----------------------------------------------------------------------------
 */

static int job_vc(const hived *h, const gs_job *j)
{
    for (int v = 0; v < h->nvc; v++)
        if (!strcmp(h->vc[v].name, j->vc_name)) return v;
    return -1;
}

/*
 * Order of a queue: in a VC's, priority desc, intra rank asc, then arrival
 * (submit, slot); the opportunistic queue is in arrival order.
 */
static int queued_before(const hived *h, const gs_jobq *q, const gs_job *a, const gs_job *b,
                         gs_time now)
{
    if (q != &h->opp.q) {
        if (a->priority != b->priority) return a->priority > b->priority;
        int64_t ra = rank_of(h, a, now), rb = rank_of(h, b, now);
        if (ra != rb) return ra < rb;
    }
    if (a->submit != b->submit) return a->submit < b->submit;
    return a->slot < b->slot;
}

/* Insert a waiting job at its place (a waiting job's rank does not change while it waits). */
static int enqueue(hived *h, wq *w, gs_job *j)
{
    gs_jobq *q = &w->q;
    gs_time now = gs_engine_now(h->e);
    int b = 0;
    while (b < w->nbk && w->bk[b].prio > j->priority) b++;
    if (b == w->nbk || w->bk[b].prio != j->priority) {
        /* a new run, before the next lower priority */
        if (w->nbk == w->capbk) {
            int nc = w->capbk ? w->capbk * 2 : 4;
            wbucket *x = realloc(w->bk, (size_t)nc * sizeof *x);
            if (!x) return oom(h);
            w->bk = x;
            w->capbk = nc;
        }
        if (b < w->nbk ? gs_jobq_insert_before(q, w->bk[b].first, j->slot)
                       : gs_jobq_push_back(q, j->slot))
            return oom(h);
        memmove(w->bk + b + 1, w->bk + b, (size_t)(w->nbk - b) * sizeof *w->bk);
        w->bk[b] = (wbucket){j->priority, j->slot, j->slot};
        w->nbk++;
        return 0;
    }
    wbucket *k = &w->bk[b];
    /* walk inwards from both ends of the run */
    int32_t f = k->first, l = k->last;
    for (;;) {
        if (!queued_before(h, q, j, gs_policy_job(h->e, (size_t)l), now)) {
            if (q->next[l] >= 0 ? gs_jobq_insert_before(q, q->next[l], j->slot)
                                : gs_jobq_push_back(q, j->slot))
                return oom(h);
            if (l == k->last) k->last = j->slot;
            return 0;
        }
        if (queued_before(h, q, j, gs_policy_job(h->e, (size_t)f), now)) {
            if (gs_jobq_insert_before(q, f, j->slot)) return oom(h);
            if (f == k->first) k->first = j->slot;
            return 0;
        }
        /* f is before j and j is before l: f != l */
        f = q->next[f];
        l = q->prev[l];
    }
}

/* Remove a job from a waiting queue (if it is there). */
static void dequeue(wq *w, const gs_job *j)
{
    gs_jobq *q = &w->q;
    if (!gs_jobq_contains(q, j->slot)) return;
    for (int b = 0; b < w->nbk; b++) {
        wbucket *k = &w->bk[b];
        if (k->prio != j->priority) continue;
        if (k->first == j->slot && k->last == j->slot) {
            memmove(w->bk + b, w->bk + b + 1, (size_t)(w->nbk - b - 1) * sizeof *w->bk);
            w->nbk--;
        } else if (k->first == j->slot) {
            k->first = q->next[j->slot];
        } else if (k->last == j->slot) {
            k->last = q->prev[j->slot];
        }
        break;
    }
    gs_jobq_remove(q, j->slot);
}

/* The shape of waiting job j in VC v (added if new), or -1 (GS_ENOMEM latched). */
static int vc_shape(hived *h, vcst *vc, const gs_job *j)
{
    int grouped = gs_job_grouped(j) != 0;
    for (int c = 0; c < vc->ncls; c++) {
        const wcls *k = &vc->cls[c];
        if (grouped ? k->grouped
                    : !k->grouped && k->gpu_type == j->gpu_type && k->pinned == j->pinned_cell &&
                          k->gpt == j->gpus_per_task && k->ntasks == j->ntasks)
            return c;
    }
    if (vc->ncls == vc->capcls) {
        int nc = vc->capcls ? vc->capcls * 2 : 4;
        wcls *x = realloc(vc->cls, (size_t)nc * sizeof *x);
        if (!x) return oom(h), -1;
        vc->cls = x;
        vc->capcls = nc;
    }
    vc->cls[vc->ncls] = (wcls){
        j->gpu_type, j->pinned_cell, j->gpus_per_task, j->ntasks, (int8_t)grouped, 0, -1, -1, -1};
    return vc->ncls++;
}

/*
 * Queue waiting job j in its VC v: in the VC's queue (enqueue()) and in its
 * shape's list at the same place (walking in from both ends), stamped with
 * the current walk; its reason is to be set by the next walk (fresh list).
 */
static int vc_enqueue(hived *h, int v, gs_job *j)
{
    vcst *vc = &h->vc[v];
    /* everything that allocates first: out of memory, j is in neither list (check_shapes) */
    if (vx_prio_reserve(h, v, j->priority)) return h->err;
    int c = vc_shape(h, vc, j);
    if (c < 0) return h->err;
    if (!(h->jfl[j->slot] & JF_FRESH) && vc->nfresh == vc->capfresh) {
        size_t nc = vc->capfresh ? vc->capfresh * 2 : 64;
        int32_t *x = realloc(vc->fresh, nc * sizeof *x);
        if (!x) return oom(h);
        vc->fresh = x;
        vc->capfresh = nc;
    }
    if (enqueue(h, &vc->waiting, j)) return h->err;
    if (!(h->jfl[j->slot] & JF_FRESH)) vc->fresh[vc->nfresh++] = j->slot;
    h->jfl[j->slot] = JF_FRESH;
    h->jstamp[j->slot] = h->walkid;
    h->jcls[j->slot] = c;
    wcls *k = &vc->cls[c];
    const gs_jobq *q = &vc->waiting.q;
    gs_time now = gs_engine_now(h->e);
    int32_t s = j->slot, before = -1; /* s goes before 'before' (-1: at the tail) */
    for (int32_t f = k->head, l = k->tail; l >= 0;) {
        if (!queued_before(h, q, j, gs_policy_job(h->e, (size_t)l), now)) {
            before = h->cnext[l];
            break;
        }
        if (queued_before(h, q, j, gs_policy_job(h->e, (size_t)f), now)) {
            before = f;
            break;
        }
        /* f is before j and j is before l: f != l */
        f = h->cnext[f];
        l = h->cprev[l];
    }
    int32_t after = before >= 0 ? h->cprev[before] : k->tail;
    h->cprev[s] = after;
    h->cnext[s] = before;
    if (after >= 0)
        h->cnext[after] = s;
    else
        k->head = s;
    if (before >= 0)
        h->cprev[before] = s;
    else
        k->tail = s;
    return 0;
}

/* Take j out of VC v's queue and its shape's list (if it is there). */
static void vc_dequeue(hived *h, int v, const gs_job *j)
{
    vcst *vc = &h->vc[v];
    int32_t s = j->slot, c = (size_t)s < h->capj ? h->jcls[s] : -1;
    if (c >= 0) {
        wcls *k = &vc->cls[c];
        if (h->cprev[s] >= 0)
            h->cnext[h->cprev[s]] = h->cnext[s];
        else
            k->head = h->cnext[s];
        if (h->cnext[s] >= 0)
            h->cprev[h->cnext[s]] = h->cprev[s];
        else
            k->tail = h->cprev[s];
        h->cnext[s] = h->cprev[s] = h->jcls[s] = -1;
    }
    dequeue(&vc->waiting, j);
}

/*
 * The most tasks of j that the cells of VC v in chain c that j may use can
 * ever hold (a task inside one of the VC's nodes, or one of its cells below
 * node level), and their GPUs in *gpus.
 */
static int64_t vc_chain_tasks(const hived *h, int v, int c, const gs_job *j, int64_t *gpus,
                              int *maxv)
{
    int64_t t = 0;
    *gpus = 0;
    *maxv = 0;
    if (j->pinned_cell < 0) { /* the non-pinned cells: from the fixed summary */
        const int32_t *vs =
            h->vxs + ((size_t)v * (size_t)h->nch + (size_t)c) * (size_t)(h->hmax + 1);
        for (int f = 1; f <= h->hmax; f++) {
            if (!vs[f]) continue;
            t += (int64_t)vs[f] * (f / j->gpus_per_task);
            *maxv = f;
        }
        *gpus = h->vxg[(size_t)v * (size_t)h->nch + (size_t)c];
        return t;
    }
    for (int i = 0; i < h->vc[v].npas; i++) {
        const pa *a = &h->pa[h->vc[v].pas[i]];
        if (a->chain != c || (j->pinned_cell >= 0) != (a->pinned != 0)) continue;
        if (j->pinned_cell >= 0 && a->cell != j->pinned_cell) continue;
        t += (int64_t)a->vnodes * (a->vper / j->gpus_per_task);
        *gpus += a->gpus;
        if (a->vper > *maxv) *maxv = a->vper;
    }
    return t;
}

/*
 * Does grouped job j fit chain c when it is idle: VC v's view of it with no
 * cell bound (v >= 0), or every node of the chain free (v < 0, an
 * opportunistic job)?  The placement itself (assign_grouped) on that view:
 * a job it cannot place there is never placed.
 */
static int fits_idle(hived *h, const gs_job *j, int c, int v)
{
    int n = 0;
    if (v >= 0) {
        int want = 0;
        for (int i = 0; i < h->vc[v].npas; i++) want += h->pa[h->vc[v].pas[i]].vnodes;
        if (ensure_slots(h, want)) return 0;
        for (int i = 0; i < h->vc[v].npas; i++) {
            int32_t pi = h->vc[v].pas[i];
            const pa *a = &h->pa[pi];
            if (a->chain != c || (j->pinned_cell >= 0) != (a->pinned != 0)) continue;
            if (j->pinned_cell >= 0 && a->cell != j->pinned_cell) continue;
            for (int k = 0; k < a->vnodes; k++)
                h->sl[n++] = (vslot){pi, -1, k, -1, -1, a->vper, a->vper, 0, 0, 0, 0};
        }
    } else {
        size_t nn = gs_cluster_nnodes(h->c);
        if (ensure_slots(h, (int)nn)) return 0;
        if (nn > h->capord) {
            uint64_t *o = realloc(h->ord, nn * sizeof *o);
            if (!o) return oom(h), 0;
            h->ord = o;
            h->capord = nn;
        }
        for (size_t nd = 0; nd < nn; nd++) {
            const gs_node *node = gs_cluster_node(h->c, (int)nd);
            if (h->cell_chain[node->cell] != c) continue;
            int g = node->gpu_hi - node->gpu_lo;
            h->ord[n] = (uint64_t)n;
            h->sl[n++] = (vslot){-1, (int32_t)nd, -1, node->gpu_lo, node->gpu_hi, g, g, 0, 0, 0, 0};
        }
    }
    return assign_grouped(h, j, c, n, 0, v < 0) > 0;
}

/* Rejected on arrival: an unknown VC, a pinned cell not the VC's (or for an opportunistic
 * job), more GPUs than the VC's cells of its kind hold, or a job that fits no single chain
 * (of the VC's cells; of the cluster for an opportunistic job). */
static int h_rejects(void *st, const gs_job *j, char *why, size_t cap)
{
    hived *h = st; /* fits_idle uses the placement's scratch */
    int v = job_vc(h, j);
    if (v < 0) {
        snprintf(why, cap, "unknown virtual cluster '%s'", j->vc_name);
        return 1;
    }
    int opp = j->priority < 0 && !h->private_mode;
    if (j->pinned_cell >= 0) {
        int ok = 0;
        for (int i = 0; i < h->vc[v].npas; i++) ok |= h->pa[h->vc[v].pas[i]].cell == j->pinned_cell;
        if (!ok || opp) {
            snprintf(why, cap, "pinned cell %s does not belong to VC '%s'%s",
                     gs_cluster_cell_pinned(h->c, j->pinned_cell), j->vc_name,
                     opp ? " (opportunistic jobs may not use pinned cells)" : "");
            return 1;
        }
    }
    if (opp) {
        for (int c = 0; c < h->nch; c++)
            if (opp_fits(h, c, j) && (!gs_job_grouped(j) || fits_idle(h, j, c, -1))) return 0;
        snprintf(why, cap,
                 "job's %d tasks of %d GPUs%s%s fit in no single chain of the cluster (a gang runs "
                 "inside one chain)",
                 j->ntasks, j->gpus_per_task, j->gpu_type >= 0 ? " of type " : "",
                 j->gpu_type >= 0 ? gs_cluster_gpu_type_name(h->c, j->gpu_type) : "");
        return 1;
    }
    /* GPUs of the VC that this job could ever use (its type, pinned or not) */
    int64_t gpus = 0;
    for (int c = 0; c < h->nch && j->pinned_cell < 0; c++)
        if (j->gpu_type < 0 || h->ch[c].gpu_type == j->gpu_type)
            gpus += h->vxg[(size_t)v * (size_t)h->nch + (size_t)c];
    for (int i = 0; i < h->vc[v].npas && j->pinned_cell >= 0; i++) {
        const pa *a = &h->pa[h->vc[v].pas[i]];
        if (j->gpu_type >= 0 && h->ch[a->chain].gpu_type != j->gpu_type) continue;
        if ((j->pinned_cell >= 0) != (a->pinned != 0)) continue;
        if (j->pinned_cell >= 0 && a->cell != j->pinned_cell) continue;
        gpus += a->gpus;
    }
    const char *tof = j->gpu_type >= 0 ? " of type " : "";
    const char *tname = j->gpu_type >= 0 ? gs_cluster_gpu_type_name(h->c, j->gpu_type) : "";
    if (j->gpus > gpus) {
        snprintf(why, cap, "job requests %d GPUs%s%s, exceeds the %lld GPUs guaranteed to VC '%s'",
                 j->gpus, tof, tname, (long long)gpus, j->vc_name);
        return 1;
    }
    /* a job runs inside one chain: one of them must hold it (see try_guaranteed()) */
    int64_t most = 0;
    for (int c = 0; c < h->nch; c++) {
        if (j->gpu_type >= 0 && h->ch[c].gpu_type != j->gpu_type) continue;
        if (j->pinned_cell >= 0 && c != h->cell_chain[j->pinned_cell]) continue;
        int64_t g;
        int maxv;
        int64_t t = vc_chain_tasks(h, v, c, j, &g, &maxv);
        /* a grouped job: its GPUs, its largest task, each group in one cell of the view */
        if (gs_job_grouped(j) ? g >= j->gpus && maxv >= j->gpus_per_task &&
                                    groups_in_chain(h, c, j) && fits_idle(h, j, c, v)
                              : t >= j->ntasks)
            return 0;
        if (g > most) most = g;
    }
    if (j->gpus > most)
        snprintf(why, cap,
                 "job requests %d GPUs%s%s, exceeds the %lld GPUs guaranteed to VC '%s' in any "
                 "one chain (a gang runs inside one chain)",
                 j->gpus, tof, tname, (long long)most, j->vc_name);
    else
        snprintf(why, cap,
                 "job's %d tasks of %d GPUs%s%s do not fit the cells of VC '%s' in any one chain "
                 "(a task runs inside one of its nodes, a gang inside one chain)",
                 j->ntasks, j->gpus_per_task, tof, tname, j->vc_name);
    return 1;
}

static int h_arrival(void *st, gs_job *j)
{
    hived *h = st;
    if (grow_jobs(h, j->slot)) return h->err;
    int v = job_vc(h, j);
    h->jvc[j->slot] = v;
    char why[256];
    if (h_rejects(h, j, why, sizeof why)) return gs_engine_reject(h->e, j, why);
    if (j->priority >= 0 || h->private_mode) {
        vc_enqueue(h, v, j);
        h->vc[v].walk = 1;
    } else {
        enqueue(h, &h->opp, j);
        h->opp_walk = 1;
    }
    h->dirty = 1;
    return h->err;
}

static int h_requeue(void *st, gs_job *j)
{
    hived *h = st;
    if (grow_jobs(h, j->slot)) return h->err;
    account_stop(h, j, j->last_alloc, j->nlast_alloc);
    gpus_freed(h);
    int v = h->jvc[j->slot];
    if ((j->priority < 0 && !h->private_mode) || v < 0) {
        enqueue(h, &h->opp, j);
    } else {
        vc_enqueue(h, v, j);
        h->vc[v].walk = 1;
    }
    h->dirty = 1;
    return h->err;
}

static int h_finish(void *st, gs_job *j)
{
    hived *h = st;
    if ((size_t)j->slot >= h->capj) return h->err;
    if (h->jkind[j->slot] != K_NONE) {
        account_stop(h, j, j->last_alloc, j->nlast_alloc);
        gpus_freed(h);
    }
    int v = h->jvc[j->slot];
    dequeue(&h->opp, j);
    if (v >= 0) vc_dequeue(h, v, j);
    h->dirty = 1;
    return h->err;
}

/*
 * Adoption (a daemon restart, or a reconfiguration: gs_engine_reconfigure), HiveD section
 * 3.11.  A running job's tasks are mapped onto its VC's cells one by one, each task into ONE
 * cell (as HiveD maps a pod into one preassigned cell; after GPUs vanished, GPU by GPU): a
 * task inside a cell already bound to one of the VC's pa keeps it; otherwise a pa of the VC
 * that is unbound (largest level first) is bound to the physical cell of its level around
 * the task's GPUs,
 * splitting the free cell that contains it (buddy allocation, as bind_pa, but at that very
 * cell; a doomed binding gives way); failing that, a pa of the VC bound elsewhere whose
 * guaranteed jobs all rank below this one is taken: they are lazily preempted.  A binding
 * that would leave some VC unable to bind all its cells (chain_feasible) is undone.  When some GPU
 * finds no cell (its VC shrank or is gone, the cell type moved, the chain changed), the job is
 * lazily preempted: it keeps running as opportunistic and may be preempted later.  A job whose GPUs
 * all vanished runs on unaccounted.
 */

/* The free cell that x lies in (x itself, or the ancestor it was not split out of), or -1
 * when x is bound, split or inside a bound cell. */
static int32_t free_around(const hived *h, int32_t x)
{
    int ch = h->cell_chain[x];
    while (x > 0 && h->cell_chain[x] == ch) {
        if (h->cell_st[x] == C_FREE) return x;
        if (h->cell_st[x] != C_INSIDE) return -1;
        x = gs_cluster_cell(h->c, x)->parent;
    }
    return -1;
}

/* Bind unbound pa p to cell x (its level and chain; free_around(x) >= 0): split the free
 * cell around x down to it.  0, or GS_ENOMEM (nothing changed). */
static int bind_pa_at(hived *h, int32_t p, int32_t x)
{
    pa *a = &h->pa[p];
    chain *c = &h->ch[a->chain];
    int32_t y = free_around(h, x);
    int ly = h->cell_level[y];
    for (int k = ly; k > a->level; k--)
        if (fl_reserve(c, k - 1, c->kids_at[k])) return oom(h);
    while (y != x) {
        int l = h->cell_level[y];
        fl_remove(c, l, y);
        h->cell_st[y] = C_SPLIT;
        int32_t next = -1;
        const gs_cell *cy = gs_cluster_cell(h->c, y);
        for (int k = 0; k < cy->nkids; k++) {
            int32_t kid = gs_cluster_cell_kid(h->c, y, k);
            h->cell_st[kid] = C_FREE;
            fl_push(c, l - 1, kid); /* reserved */
            const gs_cell *ck = gs_cluster_cell(h->c, kid);
            if (ck->gpu_lo <= gs_cluster_cell(h->c, x)->gpu_lo &&
                gs_cluster_cell(h->c, x)->gpu_hi <= ck->gpu_hi)
                next = kid;
        }
        y = next;
    }
    bind_cell(h, p, x);
    return 0;
}

/* The cell of chain ch at level lv around GPU g, or -1. */
static int32_t gpu_cell_at(const hived *h, int32_t g, int ch, int lv)
{
    int32_t x = gs_cluster_node(h->c, gs_cluster_gpu(h->c, g)->node)->cell;
    if (h->cell_chain[x] != ch) return -1;
    if (h->cell_level[x] > lv) { /* below node level: walk down to the cell holding g */
        while (x >= 0 && h->cell_level[x] > lv) {
            const gs_cell *cx = gs_cluster_cell(h->c, x);
            int32_t next = -1;
            for (int k = 0; k < cx->nkids && next < 0; k++) {
                int32_t kid = gs_cluster_cell_kid(h->c, x, k);
                const gs_cell *ck = gs_cluster_cell(h->c, kid);
                if (ck->gpu_lo <= g && g < ck->gpu_hi) next = kid;
            }
            x = next;
        }
        return x >= 0 && h->cell_level[x] == lv ? x : -1;
    }
    while (x > 0 && h->cell_chain[x] == ch && h->cell_level[x] < lv)
        x = gs_cluster_cell(h->c, x)->parent;
    return x > 0 && h->cell_chain[x] == ch && h->cell_level[x] == lv ? x : -1;
}

/* Take pa q of VC v (bound elsewhere) from its guaranteed jobs when they all rank below j:
 * they are lazily preempted (downgrade) and q is unbound.  1 when q is free now. */
static int take_pa_from_lower(hived *h, int32_t q, const gs_job *j)
{
    pa *a = &h->pa[q];
    if (a->cell < 0 || a->fixed) return a->cell < 0;
    const gs_cell *cx = gs_cluster_cell(h->c, a->cell);
    for (int32_t g = cx->gpu_lo; g < cx->gpu_hi; g++) {
        int32_t o = gs_cluster_gpu(h->c, g)->owner;
        if (o < 0 || o == j->slot || h->jkind[o] != K_GUAR) continue;
        if (gs_policy_job(h->e, (size_t)o)->priority >= j->priority) return 0;
    }
    for (int32_t g = cx->gpu_lo; g < cx->gpu_hi && a->cell >= 0; g++) {
        int32_t o = gs_cluster_gpu(h->c, g)->owner;
        if (o >= 0 && o != j->slot && h->jkind[o] == K_GUAR)
            downgrade(h, gs_policy_job(h->e, (size_t)o));
    }
    return a->cell < 0;
}

/* Map the GPUs g[0..n) of one task of job j (or one GPU) onto ONE cell of VC v, as HiveD
 * maps a pod into one preassigned cell (see above).  1 mapped, 0 not. */
static int adopt_task(hived *h, const gs_job *j, int v, const int32_t *g, int n)
{
    int32_t p = h->gpu_pa[g[0]];
    for (int i = 1; i < n; i++)
        if (h->gpu_pa[g[i]] != p) return 0; /* across cells (or partly outside one) */
    if (p >= 0 && h->pa[p].vc == v && h->pa[p].doomed) {
        /* doomed to bad hardware ahead of time, now used: an ordinary binding */
        h->pa[p].doomed = 0;
        h->ch[h->pa[p].chain].ndoomed--;
        sweep_note(h, p);
    }
    if (p >= 0) return h->pa[p].vc == v; /* bound: to one of its VC's cells or not */
    for (int pass = 0; pass < 2; pass++)
        for (int lv = MAXLV; lv >= 1; lv--)
            for (int k = 0; k < h->vc[v].npas; k++) {
                int32_t q = h->vc[v].pas[k];
                pa *a = &h->pa[q];
                if (a->level != lv || a->pinned || a->fixed) continue;
                if ((pass == 0) != (a->cell < 0 || a->doomed)) continue;
                int32_t x = gpu_cell_at(h, g[0], a->chain, lv);
                if (x < 0) continue;
                const gs_cell *cx = gs_cluster_cell(h->c, x);
                int inside = 1;
                for (int i = 1; i < n && inside; i++)
                    inside = g[i] >= cx->gpu_lo && g[i] < cx->gpu_hi;
                if (!inside) continue; /* the task does not fit one cell of this level */
                if (a->doomed)
                    unbind_raw(h, q); /* its doomed binding gives way (doom_sync
                                         binds again what must be) */
                if (free_around(h, x) < 0) continue;
                if (pass == 1 && !take_pa_from_lower(h, q, j)) continue;
                if (pass == 1 && free_around(h, x) < 0) continue; /* the downgrades moved it */
                if (bind_pa_at(h, q, x)) return 0;
                if (chain_feasible(h, a->chain)) return 1;
                unbind_raw(h, q); /* another VC could no longer bind all its cells */
            }
    return 0;
}

static int h_adopt(void *st, gs_job *j)
{
    hived *h = st;
    if (grow_jobs(h, j->slot)) return h->err;
    int v = job_vc(h, j);
    h->jvc[j->slot] = v;
    int want = j->priority >= 0 || h->private_mode; /* a guaranteed job */
    int guar = want && v >= 0 && j->nalloc > 0;
    if (!j->vanished) {
        /* task by task: each task's GPUs in one cell of the VC */
        for (int t = 0; guar && t < j->ntasks && !h->err; t++)
            guar = adopt_task(h, j, v, j->alloc + gs_job_task_first(j, t), gs_job_task_gpus(j, t));
    } else {
        /* some GPUs vanished: alloc is no longer grouped by task, each GPU on its own */
        for (int i = 0; guar && i < j->nalloc && !h->err; i++)
            guar = adopt_task(h, j, v, j->alloc + i, 1);
    }
    if (!h->err && guar) vx_prio_reserve(h, v, j->priority);
    if (h->err) return h->err;
    account_start(h, j, guar ? K_GUAR : K_OPP);
    if (!guar && v >= 0) sweep(h, v);                 /* cells it bound before a GPU found none */
    for (int c = 0; c < h->nch; c++) doom_sync(h, c); /* the cells bound above */
    if (want && !guar) {
        h->jlazy[j->slot] = 1; /* inspect: "downgraded" */
        char why[256];
        snprintf(why, sizeof why,
                 "lazily preempted: %s; downgraded to opportunistic, keeps running",
                 j->nalloc == 0 ? "none of its GPUs is in the cluster"
                 : v < 0        ? "its virtual cluster is not in the configuration"
                                : "its VC has no cell for its GPUs");
        gs_engine_note(h->e, j, why);
    }
    for (int w = 0; w < h->nvc; w++) h->vc[w].walk = 1;
    h->opp_walk = 1;
    h->dirty = 1;
    return h->err;
}

static int h_node(void *st, int node, int down)
{
    hived *h = st;
    (void)down;
    const gs_node *nd = gs_cluster_node(h->c, node);
    int delta = 0;
    for (int32_t g = nd->gpu_lo; g < nd->gpu_hi; g++) {
        delta -= h->gkey[g] == GK_DOWN;
        gkey_refresh(h, g);
        delta += h->gkey[g] == GK_DOWN;
    }
    node_refresh(h, node);
    int ch = h->cell_chain[nd->cell];
    if (ch >= 0) {
        h->ch[ch].nbad += delta;
        doom_sync(h, ch); /* cells turned bad or healthy: doomed bindings follow */
    }
    for (int v = 0; v < h->nvc; v++) vc_changed(h, v);
    gpus_freed(h);
    return h->err;
}

/* intra LAS: wake up when a running job crosses a queue threshold */
static void arm_rank_timer(hived *h, gs_job *j, gs_time now)
{
    if (h->intra != I_LAS && h->intra != I_TLAS) return;
    h->tgen[j->slot]++;
    int64_t a = gs_job_executed(j, now), rate = 1;
    if (h->intra == I_TLAS) a *= j->gpus, rate = j->gpus;
    for (int q = 0; q < h->nq - 1; q++)
        if (a < h->qhi[q]) {
            if (gs_engine_set_timer(h->e, now + (h->qhi[q] - a + rate - 1) / rate,
                                    ((uint64_t)(uint32_t)j->slot << 32) | h->tgen[j->slot]))
                oom(h);
            return;
        }
}

static int h_timer(void *st, uint64_t tag)
{
    hived *h = st;
    int32_t slot = (int32_t)(tag >> 32);
    if ((size_t)slot >= h->capj || h->tgen[slot] != (uint32_t)tag) return h->err;
    /* a running job moved to a worse queue: its VC's waiting jobs may now outrank it */
    vc_changed(h, h->jvc[slot]);
    gs_job *j = gs_policy_job(h->e, (size_t)slot);
    if (j->state == GS_JOB_RUNNING) arm_rank_timer(h, j, gs_engine_now(h->e));
    return h->err;
}

static int h_preemptible(void *st, gs_job *j)
{
    (void)j;
    ((hived *)st)->dirty = 1;
    return ((hived *)st)->err;
}

static int fc_dominated(const fcent *e, const gs_job *j, int64_t rank)
{
    return e->gpu_type == j->gpu_type && e->pinned == j->pinned_cell &&
           e->gpt <= j->gpus_per_task && e->ntasks <= j->ntasks &&
           (j->priority < e->prio || (j->priority == e->prio && rank >= e->rank));
}

static void fc_add(fcent **fc, int *n, int *cap, const gs_job *j, int32_t prio, int64_t rank)
{
    if (*n == *cap) {
        if (*cap >= 64) return; /* enough: a cache, not a record */
        int nc = *cap ? *cap * 2 : 8;
        fcent *x = realloc(*fc, (size_t)nc * sizeof *x);
        if (!x) return;
        *fc = x;
        *cap = nc;
    }
    (*fc)[(*n)++] =
        (fcent){j->gpus_per_task, j->ntasks, j->priority, j->gpu_type, j->pinned_cell, rank};
}

/*
 * Does j certainly fail in VC v right now?  True when a job it dominates
 * (same GPU type and pinned cell; no fewer GPUs per task, no fewer tasks;
 * no higher priority, or equal priority and no better intra rank) failed on
 * capacity alone and the VC's capacity has not grown since.  Sound because
 * a job fits a VC's view iff the sum over its nodes of floor(room / GPUs
 * per task) covers its tasks, room only shrinks for a dominated job, and
 * starting jobs never gives room back (stops, downgrades, unbinding bad
 * cells and hardware events bump the VC's generation).
 */
static int fail_cached(hived *h, int v, const gs_job *j, int64_t rank)
{
    vcst *vc = &h->vc[v];
    if (vc->fc_gen != vc->gen) {
        vc->nfc = 0;
        vc->fc_gen = vc->gen;
    }
    for (int i = 0; i < vc->nfc; i++)
        if (fc_dominated(&vc->fc[i], j, rank)) return 1;
    return 0;
}

/*
 * The same for opportunistic placements (any free GPUs; priority plays no
 * part, entries carry INT32_MAX): valid while no GPU was freed.
 */
static int opp_fail_cached(hived *h, const gs_job *j)
{
    if (h->oppfc_gen != h->free_gen) {
        h->noppfc = 0;
        h->oppfc_gen = h->free_gen;
    }
    for (int i = 0; i < h->noppfc; i++)
        if (fc_dominated(&h->oppfc[i], j, 0)) return 1;
    return 0;
}

/* Copy a queue into h->walkv (it may change while it is walked). */
static size_t snapshot(hived *h, const gs_jobq *q)
{
    size_t n = gs_jobq_len(q);
    if (n > h->capwalk) {
        size_t nc = h->capwalk ? h->capwalk : 1024;
        while (nc < n) nc *= 2;
        int32_t *w = realloc(h->walkv, nc * sizeof *w);
        if (!w) return oom(h), 0;
        h->walkv = w;
        h->capwalk = nc;
    }
    size_t k = 0;
    for (int32_t s = gs_jobq_first(q); s >= 0 && k < n; s = gs_jobq_next(q, s)) h->walkv[k++] = s;
    return k;
}

/* overflow order across VCs: priority desc, then arrival */
static int ovf_before(const gs_job *a, const gs_job *b)
{
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->submit != b->submit) return a->submit < b->submit;
    return a->slot < b->slot;
}

/*
 * overflow=on: waiting guaranteed jobs that did not fit their VC are tried
 * as opportunistic jobs on free GPUs anywhere (any VC's, or nobody's): they
 * never preempt and are preempted like any opportunistic job; preempted,
 * they wait in their VC again as guaranteed jobs.  The VCs' queues are
 * merged by priority and arrival; the walk ends when no GPU is free.
 */
static void overflow_walk(hived *h)
{
    h->ovf_walk = 0;
    h->ovf_gen = h->free_gen;
    for (int v = 0; v < h->nvc; v++) h->ovcur[v] = gs_jobq_first(&h->vc[v].waiting.q);
    while (gs_cluster_free(h->c) > 0 && !h->err) {
        int best = -1;
        for (int v = 0; v < h->nvc; v++)
            if (h->ovcur[v] >= 0 &&
                (best < 0 || ovf_before(gs_policy_job(h->e, (size_t)h->ovcur[v]),
                                        gs_policy_job(h->e, (size_t)h->ovcur[best]))))
                best = v;
        if (best < 0) break;
        gs_job *j = gs_policy_job(h->e, (size_t)h->ovcur[best]);
        h->ovcur[best] = gs_jobq_next(&h->vc[best].waiting.q, j->slot);
        if (j->state != GS_JOB_PENDING || j->pinned_cell >= 0 || j->gpus > gs_cluster_free(h->c))
            continue;
        if (!gs_job_grouped(j) && opp_fail_cached(h, j)) continue;
        if (try_opportunistic(h, j)) {
            vc_dequeue(h, best, j);
            gs_engine_note(h->e, j, "runs opportunistically beyond its VC's guarantee (overflow)");
            continue;
        }
        if (!gs_job_grouped(j)) fc_add(&h->oppfc, &h->noppfc, &h->capoppfc, j, INT32_MAX, 0);
    }
}

/*
 * Walk VC v's waiting queue, as it is when the walk starts, in queue order:
 * every waiting job that the failure cache does not rule out is tried; the
 * others (and those that fail) get the reason VC_REASON.  Jobs of a shape
 * (wcls) come in queue order and the failure cache only grows while it is
 * valid (fail_cached()), so once a job of a shape is ruled out, so is every
 * later one of that shape until the VC's generation moves: the walk is the
 * merge of the shapes' lists and drops a shape there (its reasons are set
 * already, or from the fresh list at the end), picking it up again after
 * the current job when a try moved the generation.  The same jobs are
 * tried in the same order as a job-by-job walk over a copy of the queue,
 * at a cost of the tries and the shapes instead of the queue's length.
 */
static void walk_vc(hived *h, int v, gs_time now, int las)
{
    vcst *vc = &h->vc[v];
    const gs_jobq *q = &vc->waiting.q;
    uint64_t w = ++h->walkid; /* jobs queued from now on (victims) are not in this walk */
    if (vc->ncls > h->capalive) {
        int *a = realloc(h->alive, (size_t)vc->ncls * sizeof *a);
        if (!a) {
            oom(h);
            return;
        }
        h->alive = a;
        h->capalive = vc->ncls;
    }
    int na = 0, ndead = 0;
    for (int c = 0; c < vc->ncls; c++) {
        vc->cls[c].dead = 0;
        vc->cls[c].cur = vc->cls[c].head;
        if (vc->cls[c].head >= 0) h->alive[na++] = c;
    }
    while (!h->err) {
        /* the next job in queue order: the first of the live shapes' next jobs */
        int best = -1;
        gs_job *j = NULL;
        for (int i = 0; i < na;) {
            wcls *k = &vc->cls[h->alive[i]];
            while (k->cur >= 0 && h->jstamp[k->cur] == w) k->cur = h->cnext[k->cur];
            if (k->cur < 0) {
                h->alive[i] = h->alive[--na];
                continue;
            }
            gs_job *cj = gs_policy_job(h->e, (size_t)k->cur);
            if (!j || queued_before(h, q, cj, j, now)) best = i, j = cj;
            i++;
        }
        if (!j) break;
        wcls *k = &vc->cls[h->alive[best]];
        k->cur = h->cnext[j->slot];
        h->jvis[j->slot] = w;
        if (j->state != GS_JOB_PENDING) continue;
        int64_t rank = las ? rank_of(h, j, now) : 0;
        int pure = 1;
        if (!k->grouped && fail_cached(h, v, j, rank)) {
            /* ruled out, and so is the rest of its shape while the cache holds */
            gs_engine_set_reason(h->e, j, VC_REASON);
            h->jfl[j->slot] |= JF_REASON;
            k->dead = 1;
            ndead++;
            h->alive[best] = h->alive[--na];
            continue;
        }
        uint64_t gen = vc->gen;
        const int grouped = k->grouped;
        int ok = try_guaranteed(h, j, v, now, &pure); /* victims may add shapes: k moves */
        if (ok) {
            if (j->state == GS_JOB_RUNNING) {
                vc_dequeue(h, v, j);
                arm_rank_timer(h, j, now);
            } else {
                vc->walk = 1; /* LIVE: starts once its victims are gone */
            }
        } else {
            if (pure && gen == vc->gen && !grouped)
                fc_add(&vc->fc, &vc->nfc, &vc->capfc, j, j->priority, rank);
            else if (!pure)
                vc->walk = 1; /* not a capacity failure: try again next pass */
            gs_engine_set_reason(h->e, j, VC_REASON);
            h->jfl[j->slot] |= JF_REASON;
        }
        if (ndead && vc->fc_gen != vc->gen) {
            /* the cache will be reset: the dropped shapes live again after j */
            for (int c = 0; c < vc->ncls; c++) {
                wcls *x = &vc->cls[c];
                if (!x->dead) continue;
                while (x->cur >= 0 &&
                       (h->jstamp[x->cur] == w ||
                        queued_before(h, q, gs_policy_job(h->e, (size_t)x->cur), j, now)))
                    x->cur = h->cnext[x->cur];
                x->dead = 0;
                h->alive[na++] = c;
            }
            ndead = 0;
        }
    }
    if (h->err) return;
    /* jobs passed over as ruled out: the reason a job-by-job walk gives them */
    size_t keep = 0;
    for (size_t i = 0; i < vc->nfresh; i++) {
        int32_t s = vc->fresh[i];
        if (h->jcls[s] >= 0 && h->jstamp[s] != w && h->jvis[s] != w && !(h->jfl[s] & JF_REASON)) {
            const gs_job *j = gs_policy_job(h->e, (size_t)s);
            if (j->state == GS_JOB_PENDING) {
                gs_engine_set_reason(h->e, j, VC_REASON);
                h->jfl[s] |= JF_REASON;
            }
        }
        if (h->jcls[s] >= 0 && !(h->jfl[s] & JF_REASON))
            vc->fresh[keep++] = s; /* queued during the walk, or visited without a reason */
        else
            h->jfl[s] &= (int8_t)~JF_FRESH;
    }
    vc->nfresh = keep;
}

/*
 * One pass.  A VC's queue is walked only when something may have changed
 * for it (a job arrived or came back, its capacity may have grown, or a job
 * failed for a reason other than capacity last time): otherwise every job
 * in it would fail again exactly as before.
 */
static void pass_once(hived *h)
{
    gs_time now = gs_engine_now(h->e);
    const int las = h->intra == I_LAS || h->intra == I_TLAS;
    for (int v = 0; v < h->nvc; v++) {
        vcst *vc = &h->vc[v];
        if (!vc->walk) continue;
        vc->walk = 0;
        h->ovf_walk = 1;
        walk_vc(h, v, now, las);
    }
    if (!h->private_mode && h->opp_walk) {
        h->opp_walk = 0;
        size_t n = snapshot(h, &h->opp.q);
        for (size_t i = 0; i < n && !h->err; i++) {
            int32_t s = h->walkv[i];
            gs_job *j = gs_policy_job(h->e, (size_t)s);
            if (j->state != GS_JOB_PENDING) continue;
            if (gs_job_grouped(j) || !opp_fail_cached(h, j)) {
                if (gs_cluster_free(h->c) >= j->gpus && try_opportunistic(h, j)) {
                    dequeue(&h->opp, j);
                    continue;
                }
                if (!gs_job_grouped(j))
                    fc_add(&h->oppfc, &h->noppfc, &h->capoppfc, j, INT32_MAX, 0);
            }
            gs_engine_set_reason(h->e, j, "no free GPUs for opportunistic jobs");
        }
    }
    if (h->overflow && (h->ovf_walk || h->ovf_gen != h->free_gen)) overflow_walk(h);
    sweep(h, -1);
}

static int h_schedule(void *st)
{
    hived *h = st;
    /* jobs preempted during a round (requeues set dirty) get another round at
     * the same instant: a preempted job may fit what is left right away */
    for (int round = 0; round < 8 && h->dirty && !h->err; round++) {
        h->dirty = 0;
        h->in_pass = 1;
        pass_once(h);
        h->in_pass = 0;
    }
    return h->err;
}

static int h_requeue_wrap(void *st, gs_job *j)
{
    return h_requeue(st, j);
}

/* ---- invariants ---------------------------------------------------------------------------------
 */

/*
 * Doomed cells: bound, unused, not pinned, on bad hardware; counted per
 * chain; never more per VC and level than its unbound cells exceed the
 * healthy cells obtainable there (doom_sync() releases the others).
 */
static int check_doomed(const hived *h, gs_diag *d)
{
    for (int c = 0; c < h->nch; c++) {
        int nd = 0, bad = 0;
        for (int p = 0; p < h->npa; p++) {
            const pa *a = &h->pa[p];
            if (a->chain != c || !a->doomed) continue;
            nd++;
            if (a->cell < 0 || a->used || a->fixed || !cell_bad(h, a->cell))
                return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "hived: doomed pa %d: cell %d, used %d, fixed %d, bad %d", p,
                                   a->cell, a->used, a->fixed,
                                   a->cell >= 0 ? cell_bad(h, a->cell) : -1);
        }
        if (nd != h->ch[c].ndoomed)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "hived: chain %d has %d doomed pa, counted %d", c, nd,
                               h->ch[c].ndoomed);
        size_t ng = gs_cluster_ngpus(h->c);
        for (size_t g = 0; g < ng; g++)
            bad +=
                h->gkey[g] == GK_DOWN &&
                h->cell_chain[gs_cluster_node(h->c, gs_cluster_gpu(h->c, (int)g)->node)->cell] == c;
        if (bad != h->ch[c].nbad)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "hived: chain %d has %d bad GPUs, counted %d",
                               c, bad, h->ch[c].nbad);
        int64_t bl[MAXLV + 1];
        bad_left(h, c, bl);
        for (int v = 0; v < h->nvc; v++)
            for (int l = 1; l <= h->ch[c].nlv; l++) {
                int dm, fr = vc_free_at(h, v, c, l, &dm);
                int64_t healthy = total_left(h, c, l) - bl[l];
                if (dm > 0 && dm > fr - healthy)
                    return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                       "hived: VC %s has %d doomed cells at chain %d level %d, but "
                                       "only %d unbound for %lld healthy",
                                       h->vc[v].name, dm, c, l, fr, (long long)healthy);
            }
    }
    return 0;
}

/*
 * A VC's shape lists hold exactly its queued jobs, each in its shape, in
 * queue order; a queued job is marked JF_REASON only while its reason is
 * VC_REASON, and is in the fresh list otherwise.
 */
static int check_shapes(const hived *h, gs_diag *d)
{
    gs_time now = gs_engine_now(h->e);
    for (int v = 0; v < h->nvc; v++) {
        const vcst *vc = &h->vc[v];
        size_t n = 0;
        for (int c = 0; c < vc->ncls; c++) {
            const wcls *k = &vc->cls[c];
            for (int32_t s = k->head, prev = -1; s >= 0; prev = s, s = h->cnext[s], n++) {
                const gs_job *j = gs_policy_job(h->e, (size_t)s);
                const gs_job *pj = prev >= 0 ? gs_policy_job(h->e, (size_t)prev) : NULL;
                int fresh = 0;
                for (size_t i = 0; i < vc->nfresh && !fresh; i++) fresh = vc->fresh[i] == s;
                if (h->jcls[s] != c || h->cprev[s] != prev ||
                    !gs_jobq_contains(&vc->waiting.q, s) ||
                    (pj && !queued_before(h, &vc->waiting.q, pj, j, now)) ||
                    (k->grouped ? !gs_job_grouped(j)
                                : gs_job_grouped(j) || k->gpu_type != j->gpu_type ||
                                      k->pinned != j->pinned_cell || k->gpt != j->gpus_per_task ||
                                      k->ntasks != j->ntasks) ||
                    ((h->jfl[s] & JF_REASON) && j->reason != VC_REASON) ||
                    (!(h->jfl[s] & JF_REASON) && !((h->jfl[s] & JF_FRESH) && fresh)))
                    return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                       "hived: job %lld misplaced in the shape lists of VC %s",
                                       (long long)j->id, vc->name);
            }
        }
        if (n != gs_jobq_len(&vc->waiting.q))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "hived: VC %s queues %zu jobs, its shapes %zu", vc->name,
                               gs_jobq_len(&vc->waiting.q), n);
    }
    return 0;
}

/* The room summaries and the GPUs held by priority equal a recount (see no_room()). */
static int check_room(const hived *h, gs_diag *d)
{
    size_t w = 2 * (size_t)(h->hmax + 1);
    int32_t *r = calloc(w + 1, sizeof *r);
    if (!r) return GS_ENOMEM;
    for (int v = 0; v < h->nvc; v++)
        for (int c = 0; c < h->nch; c++) {
            memset(r, 0, w * sizeof *r);
            int32_t sub = 0;
            for (int p = 0; p < h->npa; p++) {
                const pa *a = &h->pa[p];
                if (a->vc != v || a->chain != c || a->pinned) continue;
                if (a->cell < 0) {
                    r[h->hmax + 1 + a->vper] += a->vnodes;
                    continue;
                }
                const gs_cell *x = gs_cluster_cell(h->c, a->cell);
                if (x->kind < GS_CELL_NODE)
                    sub++;
                else
                    for (int32_t nd = x->node_lo; nd < x->node_hi; nd++) r[h->node_free[nd]]++;
            }
            int bad = memcmp(r, vx_hist(h, v, c), w * sizeof *r) != 0 ||
                      sub != h->vxsub[(size_t)v * (size_t)h->nch + (size_t)c];
            if (bad) {
                free(r);
                return gs_diag_set(
                    d, GS_EINTERNAL, 0, 0,
                    "hived: room summary of VC %s in chain %d differs from a recount",
                    h->vc[v].name, c);
            }
        }
    free(r);
    size_t ng = gs_cluster_ngpus(h->c);
    for (int v = 0; v < h->nvc; v++) {
        const vcst *vc = &h->vc[v];
        int64_t all = 0, sum = 0;
        for (size_t g = 0; g < ng; g++) {
            int32_t o = gs_cluster_gpu(h->c, (int)g)->owner;
            all += o >= 0 && (size_t)o < h->capj && h->jkind[o] == K_GUAR && h->jvc[o] == v;
        }
        for (int i = 0; i < vc->npp; i++) sum += vc->pgpus[i];
        if (all != sum)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "hived: VC %s counts %lld guaranteed GPUs, its jobs hold %lld",
                               vc->name, (long long)sum, (long long)all);
        for (int i = 0; i < vc->npp; i++) {
            int64_t held = 0;
            for (size_t g = 0; g < ng; g++) {
                int32_t o = gs_cluster_gpu(h->c, (int)g)->owner;
                if (o >= 0 && (size_t)o < h->capj && h->jkind[o] == K_GUAR && h->jvc[o] == v &&
                    gs_policy_job(h->e, (size_t)o)->priority == vc->pprio[i])
                    held++;
            }
            if (held != vc->pgpus[i])
                return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "hived: VC %s counts %d GPUs at priority %d, its jobs hold %lld",
                                   vc->name, vc->pgpus[i], vc->pprio[i], (long long)held);
        }
    }
    return 0;
}

static int h_check(void *st, gs_diag *d)
{
    hived *h = st;
    int rc = check_shapes(h, d);
    if (!rc) rc = check_room(h, d);
    if (rc) return rc;
    for (int c = 0; c < h->nch; c++)
        for (int l = 1; l <= h->ch[c].nlv; l++) {
            int64_t left = total_left(h, c, l), need = h->ch[c].all_vc_free[l];
            if (left < need)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                   "VC safety broken: chain %d level %d has %lld cells left, VCs "
                                   "still need %lld",
                                   c, l, (long long)left, (long long)need);
        }
    /* the incremental views equal a recount */
    size_t nnode = gs_cluster_nnodes(h->c);
    for (size_t nd = 0; nd < nnode; nd++) {
        const gs_node *node = gs_cluster_node(h->c, (int)nd);
        int gg = 0, oo = 0;
        int32_t fr = 0, mp = INT32_MAX;
        for (int32_t g = node->gpu_lo; g < node->gpu_hi; g++) {
            const gs_gpu *gp = gs_cluster_gpu(h->c, g);
            int32_t o = gp->owner;
            int k = o >= 0 && (size_t)o < h->capj ? h->jkind[o] : K_NONE;
            gg += k == K_GUAR;
            oo += k == K_OPP;
            int32_t want = gp->down      ? GK_DOWN
                           : k == K_GUAR ? gs_policy_job(h->e, (size_t)o)->priority
                                         : GK_NONE;
            fr += want == GK_NONE;
            if (want != GK_NONE && want != GK_DOWN && want < mp) mp = want;
            if (h->gkey[g] != want)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0, "hived: GPU %d key %d, expected %d", g,
                                   h->gkey[g], want);
        }
        if (fr != h->node_free[nd] || mp != h->node_minp[nd])
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "hived: node %zu summary %d/%d, recount %d/%d", nd, h->node_free[nd],
                               h->node_minp[nd], fr, mp);
        if (gg != h->node_g[nd] || oo != h->node_o[nd])
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "hived: node %zu counts %d/%d GPUs guaranteed/opportunistic, "
                               "jobs hold %d/%d",
                               nd, h->node_g[nd], h->node_o[nd], gg, oo);
    }
    /* pa usage equals what the VC's guaranteed jobs hold */
    int *cnt = calloc((size_t)(h->npa ? h->npa : 1), sizeof *cnt);
    if (!cnt) return GS_ENOMEM;
    size_t ng = gs_cluster_ngpus(h->c);
    for (size_t g = 0; g < ng; g++) {
        int32_t o = gs_cluster_gpu(h->c, (int)g)->owner;
        if (o < 0 || (size_t)o >= h->capj || h->jkind[o] != K_GUAR) continue;
        int32_t p = h->gpu_pa[g];
        if (p < 0 || h->pa[p].vc != h->jvc[o]) {
            free(cnt);
            return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                               "guaranteed job %lld uses GPU %zu outside its VC's cells",
                               (long long)gs_policy_job(h->e, (size_t)o)->id, g);
        }
        cnt[p]++;
    }
    for (int p = 0; p < h->npa; p++) {
        if (cnt[p] != h->pa[p].used ||
            (h->pa[p].cell >= 0 && !h->pa[p].fixed && !cnt[p] && !h->pa[p].doomed)) {
            int u = h->pa[p].used, held = cnt[p];
            free(cnt);
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "pa %d: used %d, jobs hold %d, bound %d", p,
                               u, held, h->pa[p].cell);
        }
    }
    free(cnt);
    return check_doomed(h, d);
}

/* ---- construction -------------------------------------------------------------------------------
 */

static void h_destroy(void *st)
{
    hived *h = st;
    if (!h) return;
    /* creation may have failed after counting chains or VCs, before allocating them */
    for (int c = 0; h->ch && c < h->nch; c++)
        for (int l = 0; l <= MAXLV; l++) free(h->ch[c].fl[l]);
    for (int v = 0; h->vc && v < h->nvc; v++) {
        free(h->vc[v].pas);
        free(h->vc[v].has);
        free(h->vc[v].chpas);
        free(h->vc[v].choff);
        free(h->vc[v].fc);
        free(h->vc[v].cls);
        free(h->vc[v].fresh);
        free(h->vc[v].pprio);
        free(h->vc[v].pgpus);
        gs_jobq_release(&h->vc[v].waiting.q);
        free(h->vc[v].waiting.bk);
    }
    free(h->gkey);
    free(h->node_g);
    free(h->node_o);
    free(h->node_free);
    free(h->node_minp);
    free(h->cell_end);
    free(h->oppfc);
    free(h->chosen);
    free(h->walkv);
    free(h->ord);
    gs_jobq_release(&h->opp.q);
    free(h->opp.bk);
    free(h->ch);
    free(h->vc);
    free(h->pa);
    free(h->cell_chain);
    free(h->cell_level);
    free(h->cell_st);
    free(h->cell_pa);
    free(h->gpu_pa);
    free(h->jvc);
    free(h->jkind);
    free(h->jlazy);
    free(h->cnext);
    free(h->cprev);
    free(h->jcls);
    free(h->jstamp);
    free(h->jvis);
    free(h->jfl);
    free(h->alive);
    free(h->vxh);
    free(h->vxsub);
    free(h->vxs);
    free(h->vxg);
    free(h->swc);
    free(h->swtmp);
    free(h->inswc);
    free(h->dcand);
    free(h->dprev);
    free(h->tgen);
    free(h->sl);
    free(h->gsel);
    free(h->tslot);
    free(h->gpos);
    free(h->okg);
    free(h->ovcur);
    free(h->vict);
    free(h->qhi);
    free(h);
}

static int find_chain(hived *h, int32_t top_type)
{
    for (int c = 0; c < h->nch; c++)
        if (h->ch[c].top_type == top_type) return c;
    return -1;
}

static int h_create_mode(gs_engine *e, gs_params *p, void **state, gs_diag *d, int private_mode)
{
    gs_cluster *cl = gs_engine_cluster(e);
    if (gs_cluster_ncell_types(cl) == 0 || gs_cluster_nvcs(cl) == 0)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "policy '%s' needs a HiveD cluster config with virtualClusters "
                           "(--cluster hived.yaml)",
                           private_mode ? "private" : "hived");
    hived *h = calloc(1, sizeof *h);
    if (!h) return GS_ENOMEM;
    h->e = e;
    h->c = cl;
    h->private_mode = private_mode;
    gs_jobq_init(&h->opp.q);
    int rc = 0;
    const char *intra = gs_params_get(p, "intra");
    if (!intra || !strcmp(intra, "fifo"))
        h->intra = I_FIFO;
    else if (!strcmp(intra, "las"))
        h->intra = I_LAS;
    else if (!strcmp(intra, "tiresias-las"))
        h->intra = I_TLAS;
    else if (!strcmp(intra, "srtf"))
        h->intra = I_SRTF;
    else
        rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                         "parameter 'intra': expected fifo, las, tiresias-las or srtf, got '%s'",
                         intra);
    if (!rc && !private_mode) rc = gs_params_get_bool(p, "overflow", 0, &h->overflow, d);
    if (!rc && (h->intra == I_LAS || h->intra == I_TLAS)) {
        double *th = NULL;
        size_t nth = 0;
        rc = gs_params_get_double_list(p, "queues", &th, &nth, d);
        if (!rc) {
            if (!th) {
                th = malloc(sizeof *th);
                if (th) th[0] = 3600, nth = 1;
            }
            h->qhi = malloc((nth ? nth : 1) * sizeof *h->qhi);
            if (!th || !h->qhi) rc = GS_ENOMEM;
            if (!rc && nth > 32)
                rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'queues': at most 32 thresholds");
            for (size_t i = 0; !rc && i < nth; i++) {
                /* as tiresias-las: positive, increasing, small enough for microseconds */
                if (!(th[i] > 0) || (i && th[i] <= th[i - 1]) || th[i] > 1e12)
                    rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                                     "parameter 'queues': thresholds must be positive, increasing "
                                     "and at most 1e+12 seconds");
                else
                    h->qhi[i] = (int64_t)llround(th[i] * 1e6);
            }
            h->nq = (int)nth + 1;
        }
        free(th);
    }
    size_t ncell = gs_cluster_ncells(cl);
    h->cell_chain = malloc(ncell * sizeof *h->cell_chain);
    h->cell_level = malloc(ncell * sizeof *h->cell_level);
    h->cell_st = calloc(ncell, 1);
    h->cell_pa = malloc(ncell * sizeof *h->cell_pa);
    h->gpu_pa = malloc(gs_cluster_ngpus(cl) * sizeof *h->gpu_pa);
    h->cell_end = malloc(ncell * sizeof *h->cell_end);
    h->gkey = malloc((gs_cluster_ngpus(cl) + 1) * sizeof *h->gkey);
    h->node_g = calloc(gs_cluster_nnodes(cl) + 1, sizeof *h->node_g);
    h->node_o = calloc(gs_cluster_nnodes(cl) + 1, sizeof *h->node_o);
    h->node_free = calloc(gs_cluster_nnodes(cl) + 1, sizeof *h->node_free);
    h->node_minp = calloc(gs_cluster_nnodes(cl) + 1, sizeof *h->node_minp);
    if (!h->cell_chain || !h->cell_level || !h->cell_st || !h->cell_pa || !h->gpu_pa ||
        !h->cell_end || !h->gkey || !h->node_g || !h->node_o || !h->node_free || !h->node_minp)
        rc = GS_ENOMEM;
    if (rc) goto fail;
    for (size_t i = 0; i < gs_cluster_ngpus(cl); i++) h->gpu_pa[i] = -1;
    for (size_t i = 0; i < gs_cluster_ngpus(cl); i++) gkey_refresh(h, (int32_t)i);
    for (size_t i = 0; i < gs_cluster_nnodes(cl); i++) node_refresh(h, (int32_t)i);
    /* subtree ends: a cell's subtree is [x, cell_end[x]) in pre-order */
    for (size_t i = 0; i < ncell; i++) h->cell_end[i] = (int32_t)i + 1;
    for (size_t i = ncell; i-- > 1;) {
        int32_t par = gs_cluster_cell(cl, (int)i)->parent;
        if (par >= 0 && h->cell_end[par] < h->cell_end[i]) h->cell_end[par] = h->cell_end[i];
    }
    /* chains: the cell types of the root's children */
    for (size_t i = 0; i < ncell; i++)
        h->cell_chain[i] = -1, h->cell_level[i] = 0, h->cell_pa[i] = -1;
    const gs_cell *root = gs_cluster_cell(cl, 0);
    h->ch = calloc((size_t)root->nkids, sizeof *h->ch);
    if (!h->ch) {
        rc = GS_ENOMEM;
        goto fail;
    }
    for (int k = 0; k < root->nkids; k++) {
        int32_t top = gs_cluster_cell_kid(cl, 0, k);
        int32_t tt = gs_cluster_cell(cl, top)->type;
        int c = find_chain(h, tt);
        if (c < 0) {
            c = h->nch++;
            chain *ch = &h->ch[c];
            ch->top_type = tt;
            int lv = gs_cluster_cell_type(cl, tt)->level;
            if (lv > MAXLV) {
                rc = gs_diag_set(d, GS_EUNSUPPORTED, 0, 0, "cell hierarchy deeper than %d levels",
                                 MAXLV);
                goto fail;
            }
            ch->nlv = lv;
            for (int32_t t = tt; t >= 0; t = gs_cluster_cell_type(cl, t)->child) {
                const gs_cell_type *ct = gs_cluster_cell_type(cl, t);
                ch->type_at[ct->level] = t;
                ch->kids_at[ct->level] = ct->nchild;
                ch->gpus_at[ct->level] = ct->gpus;
                if (ct->child < 0) ch->gpu_type = gs_cluster_find_gpu_type(cl, ct->name);
            }
        }
        if ((rc = fl_push(&h->ch[c], h->ch[c].nlv, top))) goto fail;
        h->cell_st[top] = C_FREE;
        /* label every cell of the subtree with chain and level */
        const gs_cell *tc = gs_cluster_cell(cl, top);
        for (size_t x = (size_t)top; x < ncell; x++) {
            const gs_cell *cx = gs_cluster_cell(cl, (int)x);
            if (x != (size_t)top && (cx->gpu_lo >= tc->gpu_hi || cx->depth <= tc->depth)) break;
            h->cell_chain[x] = c;
            if (cx->kind == GS_CELL_NODE) {
                h->ch[c].nnodes++;
                h->ch[c].node_lv = gs_cluster_cell_type(cl, cx->type)->level;
                if (cx->gpu_hi - cx->gpu_lo > h->ch[c].node_gpus)
                    h->ch[c].node_gpus = cx->gpu_hi - cx->gpu_lo;
            }
            h->cell_level[x] =
                cx->kind == GS_CELL_GPU ? 1 : (int16_t)gs_cluster_cell_type(cl, cx->type)->level;
        }
    }
    /* VCs and their preassigned cells */
    h->nvc = (int)gs_cluster_nvcs(cl);
    h->vc = calloc((size_t)h->nvc, sizeof *h->vc);
    size_t npa = 0;
    for (int v = 0; v < h->nvc; v++) {
        const gs_vc_def *vd = gs_cluster_vc(cl, v);
        for (size_t i = 0; i < vd->ncells; i++) npa += (size_t)vd->cells[i].count;
        npa += vd->npinned;
    }
    h->pa = calloc(npa ? npa : 1, sizeof *h->pa);
    h->dprev = malloc((npa ? npa : 1) * 2 * sizeof *h->dprev);
    h->swc = malloc((npa ? npa : 1) * sizeof *h->swc);
    h->swtmp = malloc((npa ? npa : 1) * sizeof *h->swtmp);
    h->inswc = calloc(npa ? npa : 1, 1);
    h->ovcur = calloc((size_t)h->nvc + 1, sizeof *h->ovcur);
    if (!h->vc || !h->pa || !h->ovcur || !h->dprev || !h->swc || !h->swtmp || !h->inswc) {
        rc = GS_ENOMEM;
        goto fail;
    }
    for (int v = 0; v < h->nvc; v++) {
        const gs_vc_def *vd = gs_cluster_vc(cl, v);
        vcst *vc = &h->vc[v];
        vc->name = vd->name;
        gs_jobq_init(&vc->waiting.q);
        size_t n = vd->npinned;
        for (size_t i = 0; i < vd->ncells; i++) n += (size_t)vd->cells[i].count;
        vc->pas = malloc((n ? n : 1) * sizeof *vc->pas);
        vc->has = calloc((size_t)h->nch, 1);
        if (!vc->pas || !vc->has) {
            rc = GS_ENOMEM;
            goto fail;
        }
        for (size_t i = 0; i < vd->npinned; i++) {
            int32_t cell = gs_cluster_find_pinned(cl, vd->pinned[i]);
            int c = h->cell_chain[cell];
            pa *a = &h->pa[h->npa];
            *a = (pa){v,
                      c,
                      h->cell_level[cell],
                      gs_cluster_cell(cl, cell)->type,
                      -1,
                      0,
                      gs_cluster_cell(cl, cell)->gpu_hi - gs_cluster_cell(cl, cell)->gpu_lo,
                      1,
                      1};
            vc->pas[vc->npas++] = h->npa++;
            vc->guarantee += a->gpus;
        }
        for (size_t i = 0; i < vd->ncells; i++) {
            int c = find_chain(h, vd->cells[i].chain);
            if (c < 0) {
                rc = gs_diag_set(d, GS_EINVAL, 0, 0, "VC '%s': chain not in the cluster", vd->name);
                goto fail;
            }
            int lv = level_of_type(h, c, vd->cells[i].cell_type);
            if (vd->cells[i].count > 0) vc->has[c] = 1;
            for (int k = 0; k < vd->cells[i].count; k++) {
                pa *a = &h->pa[h->npa];
                *a = (pa){v, c, lv, vd->cells[i].cell_type, -1, 0, h->ch[c].gpus_at[lv], 0, 0};
                h->ch[c].all_vc_free[lv]++;
                vc->pas[vc->npas++] = h->npa++;
                vc->guarantee += a->gpus;
            }
        }
    }
    /* each VC's cells by chain, for build_slots() */
    for (int v = 0; v < h->nvc; v++) {
        vcst *vc = &h->vc[v];
        vc->chpas = malloc(((size_t)vc->npas + 1) * sizeof *vc->chpas);
        vc->choff = calloc((size_t)h->nch + 1, sizeof *vc->choff);
        if (!vc->chpas || !vc->choff) {
            rc = GS_ENOMEM;
            goto fail;
        }
        int n = 0;
        for (int c = 0; c < h->nch; c++) {
            vc->choff[c] = n;
            for (int i = 0; i < vc->npas; i++)
                if (h->pa[vc->pas[i]].chain == c) vc->chpas[n++] = vc->pas[i];
        }
        vc->choff[h->nch] = n;
    }
    /* how a VC sees each of its cells: whole nodes (or one sub-node cell) */
    for (int pi = 0; pi < h->npa; pi++) {
        pa *a = &h->pa[pi];
        const chain *c = &h->ch[a->chain];
        a->vnodes = 1;
        a->vper = a->gpus;
        for (int l = a->level; l > 1; l--) {
            const gs_cell_type *ct = gs_cluster_cell_type(cl, c->type_at[l]);
            if (ct && ct->is_node) {
                a->vnodes = a->gpus / c->gpus_at[l];
                a->vper = c->gpus_at[l];
                break;
            }
        }
        h->vc[a->vc].maxslots += a->vnodes;
    }
    /* room summaries: every non-pinned cell unbound so far */
    h->hmax = 0;
    for (size_t nd = 0; nd < gs_cluster_nnodes(cl); nd++) {
        const gs_node *node = gs_cluster_node(cl, (int)nd);
        if (node->gpu_hi - node->gpu_lo > h->hmax) h->hmax = node->gpu_hi - node->gpu_lo;
    }
    for (int pi = 0; pi < h->npa; pi++)
        if (h->pa[pi].vper > h->hmax) h->hmax = h->pa[pi].vper;
    h->vxh =
        calloc((size_t)h->nvc * (size_t)h->nch * 2 * (size_t)(h->hmax + 1) + 1, sizeof *h->vxh);
    h->vxsub = calloc((size_t)h->nvc * (size_t)h->nch + 1, sizeof *h->vxsub);
    if (!h->vxh || !h->vxsub) {
        rc = GS_ENOMEM;
        goto fail;
    }
    h->vxs = calloc((size_t)h->nvc * (size_t)h->nch * (size_t)(h->hmax + 1) + 1, sizeof *h->vxs);
    h->vxg = calloc((size_t)h->nvc * (size_t)h->nch + 1, sizeof *h->vxg);
    if (!h->vxs || !h->vxg) {
        rc = GS_ENOMEM;
        goto fail;
    }
    for (int pi = 0; pi < h->npa; pi++) {
        const pa *a = &h->pa[pi];
        if (a->pinned) continue;
        size_t vc = (size_t)a->vc * (size_t)h->nch + (size_t)a->chain;
        vx_hist(h, a->vc, a->chain)[h->hmax + 1 + a->vper] += a->vnodes;
        h->vxs[vc * (size_t)(h->hmax + 1) + (size_t)a->vper] += a->vnodes;
        h->vxg[vc] += a->gpus;
    }
    /* pinned cells leave the free lists for good (split their ancestors) */
    for (int pi = 0; pi < h->npa; pi++) {
        pa *a = &h->pa[pi];
        if (!a->pinned) continue;
        int32_t cell = -1;
        const gs_vc_def *vd = gs_cluster_vc(cl, a->vc);
        /* the k-th pinned pa of this VC is its k-th pinned id */
        int k = 0;
        for (int q = 0; q < pi; q++) k += h->pa[q].vc == a->vc && h->pa[q].pinned;
        cell = gs_cluster_find_pinned(cl, vd->pinned[k]);
        /* split every free ancestor down to the pinned cell */
        int32_t path[MAXLV + 2];
        int np = 0;
        for (int32_t x = cell; x > 0; x = gs_cluster_cell(cl, x)->parent) path[np++] = x;
        chain *ch = &h->ch[a->chain];
        for (int i = np - 1; i > 0; i--) {
            int32_t x = path[i];
            if (h->cell_st[x] != C_FREE) continue;
            fl_remove(ch, h->cell_level[x], x);
            h->cell_st[x] = C_SPLIT;
            for (int q = 0; q < gs_cluster_cell(cl, x)->nkids; q++) {
                int32_t kid = gs_cluster_cell_kid(cl, x, q);
                h->cell_st[kid] = C_FREE;
                if (fl_push(ch, h->cell_level[kid], kid)) {
                    rc = GS_ENOMEM;
                    goto fail;
                }
            }
        }
        fl_remove(ch, a->level, cell);
        h->cell_st[cell] = C_BOUND;
        h->cell_pa[cell] = pi;
        a->cell = cell;
        pa_nodes(h, a);
        set_gpu_pa(h, cell, pi);
    }
    /* private: bind every cell of every VC once, for good */
    if (private_mode)
        for (int pi = 0; pi < h->npa && !rc; pi++)
            if (h->pa[pi].cell < 0) {
                if ((rc = bind_pa(h, pi)) == GS_ENOMEM) break;
                if (rc) rc = gs_diag_set(d, GS_EINTERNAL, 0, 0, "cannot bind VC cells");
                h->pa[pi].fixed = 1;
            }
    if (rc) goto fail;
    /* GPUs already out of service (a policy created again under a running engine) */
    for (size_t g = 0; g < gs_cluster_ngpus(cl); g++) {
        if (h->gkey[g] != GK_DOWN) continue;
        int c = h->cell_chain[gs_cluster_node(cl, gs_cluster_gpu(cl, (int)g)->node)->cell];
        if (c >= 0) h->ch[c].nbad++;
    }
    for (int c = 0; c < h->nch; c++) doom_sync(h, c);
    if (h->err) {
        rc = h->err;
        goto fail;
    }
    if (private_mode)
        gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    else
        gs_engine_set_max_locality(e, GS_LOCALITY_ANY);
    *state = h;
    return 0;
fail:
    h_destroy(h);
    return rc;
}

static int hived_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    return h_create_mode(e, p, st, d, 0);
}
static int private_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    return h_create_mode(e, p, st, d, 1);
}

/* ---- queue view (daemon): one queue per VC, by priority then submission ---- */

static int h_queue_key(void *st, const gs_job *j, gs_queue_key *k)
{
    (void)st;
    k->queue = j->vc;
    k->key = -(int64_t)j->priority; /* higher priority ahead */
    return 0;
}

static int h_queue_describe(void *st, int queue, char *buf, size_t cap)
{
    const hived *h = st;
    const char *vc = gs_engine_vc_name(h->e, queue);
    snprintf(buf, cap, "in VC %s (by priority, then submission)", vc ? vc : "default");
    return 0;
}

/* The GPUs of the VC's cells in the HiveD config. */
static int64_t h_vc_guarantee(void *st, const char *vc)
{
    const hived *h = st;
    int v = gs_cluster_find_vc(h->c, vc);
    return v >= 0 ? gs_cluster_vc(h->c, v)->gpus : -1;
}

/* ---- inspect (docs/hived.md, "State keys") -------------------------------------------------- */

/* Cell of an address: a node name, a pinned cell id or a top cell's position among the
 * cluster's top cells, then '/'-separated child positions.  -1 if none. */
static int32_t cell_at(const hived *h, const char *addr, size_t len)
{
    char buf[256];
    size_t k = 0;
    while (k < len && addr[k] != '/') k++;
    if (k >= sizeof buf || !k) return -1;
    memcpy(buf, addr, k);
    buf[k] = '\0';
    int32_t x = -1;
    int nd = gs_cluster_find_node(h->c, buf);
    if (nd >= 0)
        x = gs_cluster_node(h->c, nd)->cell;
    else if ((x = gs_cluster_find_pinned(h->c, buf)) < 0) {
        char *end;
        long i = strtol(buf, &end, 10);
        if (*end || i < 0 || i >= gs_cluster_cell(h->c, 0)->nkids) return -1;
        x = gs_cluster_cell_kid(h->c, 0, (int)i);
    }
    while (k < len) {
        size_t s0 = ++k;
        while (k < len && addr[k] != '/') k++;
        if (k == s0 || k - s0 >= 12) return -1;
        memcpy(buf, addr + s0, k - s0);
        buf[k - s0] = '\0';
        char *end;
        long i = strtol(buf, &end, 10);
        if (*end || i < 0 || i >= gs_cluster_cell(h->c, x)->nkids) return -1;
        x = gs_cluster_cell_kid(h->c, x, (int)i);
    }
    return x;
}

/* A cell's state: bound:VC / doomed:VC (it or an ancestor is bound to a VC's cell), else
 * bad (a GPU out of service), split (part of it is bound), used (a job on it), free. */
static int cell_state(const hived *h, int32_t x, char *buf, size_t cap)
{
    for (int32_t y = x; y > 0; y = gs_cluster_cell(h->c, y)->parent)
        if (h->cell_pa[y] >= 0) {
            const pa *a = &h->pa[h->cell_pa[y]];
            return snprintf(buf, cap, "%s:%s", a->doomed ? "doomed" : "bound", h->vc[a->vc].name);
        }
    if (cell_bad(h, x)) return snprintf(buf, cap, "bad");
    if (h->cell_st[x] == C_SPLIT) return snprintf(buf, cap, "split");
    const gs_cell *cx = gs_cluster_cell(h->c, x);
    if (cx->free < cx->healthy) return snprintf(buf, cap, "used");
    return snprintf(buf, cap, "free");
}

/*
 * Keys: vc.<VC>.{doomed,bound,free_cells,used_gpus}, node.<name>.state,
 * cell.<address>.state, job.<id>.state (docs/hived.md lists the values).
 */
static int h_inspect(void *st, const char *key, char *buf, size_t cap)
{
    const hived *h = st;
    const char *d1 = strchr(key, '.'), *d2 = strrchr(key, '.');
    if (!d1 || d2 == d1) return GS_ENOENT;
    size_t kl = (size_t)(d1 - key), nl = (size_t)(d2 - d1 - 1);
    const char *name = d1 + 1, *field = d2 + 1;
    char nm[256];
    if (nl >= sizeof nm) return GS_ENOENT;
    memcpy(nm, name, nl);
    nm[nl] = '\0';
    int n = -1;
    if (kl == 2 && !strncmp(key, "vc", 2)) {
        int v = 0;
        while (v < h->nvc && strcmp(h->vc[v].name, nm)) v++;
        if (v == h->nvc) return GS_ENOENT;
        int64_t doomed = 0, bound = 0, fr = 0, used = 0;
        for (int i = 0; i < h->vc[v].npas; i++) {
            const pa *a = &h->pa[h->vc[v].pas[i]];
            doomed += a->doomed;
            bound += a->cell >= 0 && !a->doomed;
            fr += a->cell < 0;
            used += a->used;
        }
        int64_t x = !strcmp(field, "doomed")       ? doomed
                    : !strcmp(field, "bound")      ? bound
                    : !strcmp(field, "free_cells") ? fr
                    : !strcmp(field, "used_gpus")  ? used
                                                   : -1;
        if (x < 0) return GS_ENOENT;
        n = snprintf(buf, cap, "%lld", (long long)x);
    } else if (kl == 4 && !strncmp(key, "node", 4) && !strcmp(field, "state")) {
        int nd = gs_cluster_find_node(h->c, nm);
        if (nd < 0) return GS_ENOENT;
        n = snprintf(buf, cap, "%s", gs_node_state_name(gs_engine_node_state(h->e, nd)));
    } else if (kl == 4 && !strncmp(key, "cell", 4) && !strcmp(field, "state")) {
        int32_t x = cell_at(h, nm, nl);
        if (x < 0 || h->cell_chain[x] < 0) return GS_ENOENT;
        n = cell_state(h, x, buf, cap);
    } else if (kl == 3 && !strncmp(key, "job", 3) && !strcmp(field, "state")) {
        char *end;
        long long id = strtoll(nm, &end, 10);
        const gs_job *j = *nm && !*end ? gs_engine_find_job(h->e, id) : NULL;
        if (!j) return GS_ENOENT;
        int k = (size_t)j->slot < h->capj ? h->jkind[j->slot] : K_NONE;
        const char *w = k == K_GUAR                       ? "guaranteed"
                        : k == K_OPP && h->jlazy[j->slot] ? "downgraded"
                        : k == K_OPP && j->priority >= 0  ? "overflow"
                        : k == K_OPP                      ? "opportunistic"
                        : j->state == GS_JOB_PENDING      ? "waiting"
                        : gs_job_state_final(j->state)    ? "ended"
                                                          : gs_job_state_name(j->state);
        n = snprintf(buf, cap, "%s", w);
    } else {
        return GS_ENOENT;
    }
    return n < 0 || (size_t)n >= cap ? GS_ERANGE : 0;
}

static const gs_policy_ops gs_policy_hived = {
    .name = "hived",
    .summary = "HiveD: virtual clusters of topology cells with guarantees, buddy allocation, "
               "priorities, opportunistic jobs (needs a HiveD config)",
    .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_RIGID | GS_POLICY_GROUPS | GS_POLICY_HIVED_ONLY,
    .create = hived_create,
    .destroy = h_destroy,
    .on_arrival = h_arrival,
    .on_adopt = h_adopt,
    .on_requeue = h_requeue_wrap,
    .on_finish = h_finish,
    .on_withdraw = h_finish, /* forgets a waiting job, as a cancel */
    .on_preemptible = h_preemptible,
    .on_timer = h_timer,
    .on_node = h_node,
    .schedule = h_schedule,
    .check = h_check,
    .queue_key = h_queue_key,
    .rejects = h_rejects,
    .queue_describe = h_queue_describe,
    .vc_guarantee = h_vc_guarantee,
    .inspect = h_inspect,
};

static const gs_policy_ops gs_policy_private = {
    .name = "private",
    .summary = "baseline: each VC gets a private, quota-sized slice of the cluster (HiveD config)",
    .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_RIGID | GS_POLICY_GROUPS |
             GS_POLICY_HIVED_ONLY, /* by priority in a VC */
    .create = private_create,
    .destroy = h_destroy,
    .on_arrival = h_arrival,
    .on_adopt = h_adopt,
    .on_requeue = h_requeue_wrap,
    .on_finish = h_finish,
    .on_withdraw = h_finish, /* forgets a waiting job, as a cancel */
    .on_timer = h_timer,
    .on_node = h_node,
    .schedule = h_schedule,
    .check = h_check,
    .queue_key = h_queue_key,
    .rejects = h_rejects,
    .queue_describe = h_queue_describe,
    .vc_guarantee = h_vc_guarantee,
    .inspect = h_inspect,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_hived[] = {
    {50, &gs_policy_hived}, {52, &gs_policy_private}, {0, NULL}};
