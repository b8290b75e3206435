/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_gandiva_emul.c - the Tiresias simulator's emulation of Gandiva
 * (algorithms.md section 3.10; docs/gandiva.md, "gandiva-emul"), so that
 * gsched can be compared with that simulator's published number.
 *
 * Nodes are grouped into "node sets", one list of them per job size g: a
 * node set spans ceil(g / node GPUs) whole nodes and runs at most
 * capacity = floor(nodes x node GPUs / g) of its jobs at once; the others
 * are time-sliced, and every instant that is a multiple of 60 s the running
 * ones move to the back of their set's list.  The policy decides only at
 * its steps: every 10 s, and at every arrival (the 10-s grid restarts
 * there), as that simulator's loop does.  At a step it (1) re-balances node
 * sets between sizes in proportion to their jobs' GPU demand, (2) rotates,
 * and removes the jobs that ended since the last step, releasing empty node
 * sets, (3) places the jobs that arrived, (4) retries the pending ones if a
 * node set was released.  The running set of every node set is then made
 * real through the engine (suspend, resume, start).
 *
 * Quirks of the original are kept on purpose and listed in docs/gandiva.md:
 * a set's "util" counts jobs placed since it was last re-balanced (ended jobs
 * are not subtracted); a set accepts a job only while util + 1 < capacity;
 * re-balancing after an expansion is skipped when the last new set has one
 * node; the pending retry skips the job after each one it places.
 *
 * Differences that remain: progress is continuous in the engine (a job ends
 * when its work is done, not at the next 10-s step), and the engine runs
 * the set decided at a step until the next step (the original credits the
 * interval to the set decided at its end).  Like the simulator it emulates it
 * charges no mechanism costs by default (GS_POLICY_COSTS_OFF: 'costs' defaults
 * to off; with costs=on its node-set re-deals owe a migration at nearly every
 * resume and 16-GPU jobs starve, docs/gandiva.md).
 *
 * It needs suspend and resume (gs_engine_mech_supported): without them create
 * refuses (GS_EUNSUPPORTED), as in the daemon; so it does with
 * suspend_mech=sigstop, where a suspended job resumes only on the GPUs it left
 * (its node-set re-deals move suspended jobs at almost every step).
 *
 * Invariants: each arrived, non-final job is in exactly one node set or in
 * the pending list; node sets of one size are kept sorted by util (stable,
 * like Python's sort); every walk follows list order, never hash order.
 */
#include <stdlib.h>
#include <string.h>

#include "gsched/policy.h"

#define STEP   (10 * GS_SEC)
#define ROTATE (60 * GS_SEC)

typedef struct nset {
    int32_t *nodes;
    int nn;
    int32_t *jobs; /* slots, list order */
    int njobs, capjobs;
    int util; /* jobs placed since the last re-balance (each counts 1) */
    int capacity;
} nset;

typedef struct sclass {
    int g;
    nset **v; /* kept sorted by util (stable) */
    int n, cap;
} sclass;

typedef struct ejob {
    int32_t set_class; /* class index, -1 = none */
    nset *set;
    uint8_t ended;   /* finished in the engine, still listed until the next step */
    uint8_t arrived; /* arrived at the current instant */
    uint8_t run;     /* RUNNING (this policy's starts and resumes are the only way in): the
                        stop walk reads this array, not every listed job's gs_job */
} ejob;

typedef struct emul {
    gs_engine *e;
    gs_cluster *c;
    int gpn; /* GPUs per node (largest node) */
    sclass *cls;
    int ncls, capcls;
    int32_t *free_nodes; /* FIFO: taken from the front, returned at the back */
    size_t nfree, capfree, headfree;
    int32_t *pending;
    size_t npend, cappend;
    int32_t *arrivals;
    size_t narr, caparr;
    ejob *jobs;
    size_t capjobs;
    uint64_t gen; /* timer generation: only the latest step timer counts */
    int step_due;
    int idle; /* quiet: no step timer; the next job end re-arms it on the 10-s grid */
    gs_time last_step;
    int *scratch;
    size_t capscratch;
    int32_t *all; /* expand()'s list of a class's jobs, kept between steps */
    size_t capall;
    /* the first allocation failure (GS_ENOMEM): every hook returns it.  Helpers
     * that cannot allocate leave the lists consistent (a job is in no set
     * rather than half in one) and the engine is failed (engine.h, "Errors") */
    int err;
    ejob spare;    /* what EJ() hands out when it cannot grow */
    int slow_deal; /* deal=loop: the original's loop even when utils are equal (tests) */
} emul;

static int oom(emul *m)
{
    if (!m->err) m->err = GS_ENOMEM;
    return GS_ENOMEM;
}

/* EJ()'s slow path: grows the per-job array to hold slot. */
static ejob *ej_grow(emul *m, int32_t slot)
{
    size_t nc = m->capjobs ? m->capjobs : 1024;
    while (nc <= (size_t)slot) nc *= 2;
    ejob *n = realloc(m->jobs, nc * sizeof *n);
    if (!n) {
        oom(m);
        m->spare = (ejob){.set_class = -1};
        return &m->spare;
    }
    for (size_t i = m->capjobs; i < nc; i++) n[i] = (ejob){.set_class = -1};
    m->jobs = n;
    m->capjobs = nc;
    return &m->jobs[slot];
}

/* The policy's record of slot (called per listed job at every step: the common case inline). */
static inline ejob *EJ(emul *m, int32_t slot)
{
    if ((size_t)slot < m->capjobs) return &m->jobs[slot];
    return ej_grow(m, slot);
}

/* Room for element n of *p: 0, or GS_ENOMEM with *p and *cap unchanged. */
static int grow(emul *m, void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc <= n) nc *= 2;
    void *q = realloc(*p, nc * sz);
    if (!q) return oom(m);
    *p = q;
    *cap = nc;
    return 0;
}

static int push_i32(emul *m, int32_t **v, size_t *n, size_t *cap, int32_t x)
{
    void *p = *v;
    if (grow(m, &p, cap, *n, sizeof **v)) return GS_ENOMEM;
    *v = p;
    (*v)[(*n)++] = x;
    return 0;
}

/* ---- free nodes (a FIFO) ---------------------------------------------------------------- */

static size_t nfree(const emul *m)
{
    return m->nfree - m->headfree;
}

static int32_t take_node(emul *m)
{
    return m->free_nodes[m->headfree++];
}

static void give_node(emul *m, int32_t n)
{
    if (m->headfree > 0 && m->headfree == m->nfree) m->headfree = m->nfree = 0;
    push_i32(m, &m->free_nodes, &m->nfree, &m->capfree, n); /* failing: the node is lost */
}

/* ---- size classes and node sets ------------------------------------------------------------ */

/* Index of the class of g GPUs, added if new; -1 when out of memory. */
static int class_of(emul *m, int g)
{
    for (int i = 0; i < m->ncls; i++)
        if (m->cls[i].g == g) return i;
    size_t cap = (size_t)m->capcls;
    void *p = m->cls;
    if (grow(m, &p, &cap, (size_t)m->ncls, sizeof *m->cls)) return -1;
    m->cls = p;
    m->capcls = (int)cap;
    m->cls[m->ncls] = (sclass){.g = g};
    return m->ncls++;
}

static void set_free(nset *s)
{
    if (!s) return;
    free(s->nodes);
    free(s->jobs);
    free(s);
}

/* A new set of nodes taken from the free ones; NULL (nothing taken) when out of memory. */
static nset *set_new(emul *m, int g)
{
    int nn = (g + m->gpn - 1) / m->gpn;
    nset *s = calloc(1, sizeof *s);
    if (s) s->nodes = malloc((size_t)nn * sizeof *s->nodes);
    if (!s || !s->nodes) {
        free(s);
        oom(m);
        return NULL;
    }
    s->nn = nn;
    s->capacity = nn * m->gpn / g;
    for (int i = 0; i < nn; i++) s->nodes[i] = take_node(m);
    return s;
}

static int set_add_job(emul *m, nset *s, int32_t slot)
{
    size_t cap = (size_t)s->capjobs, n = (size_t)s->njobs;
    int rc = push_i32(m, &s->jobs, &n, &cap, slot);
    s->capjobs = (int)cap;
    s->njobs = (int)n;
    return rc;
}

/* Stable insertion sort of a class's sets by util (Python's list.sort is stable). */
static void sort_sets(sclass *c)
{
    for (int i = 1; i < c->n; i++) {
        nset *x = c->v[i];
        int k = i - 1;
        while (k >= 0 && c->v[k]->util > x->util) {
            c->v[k + 1] = c->v[k];
            k--;
        }
        c->v[k + 1] = x;
    }
}

/* Never fails right after cls_pop_front (the room is there). */
static int cls_append(emul *m, sclass *c, nset *s)
{
    size_t cap = (size_t)c->cap;
    void *p = c->v;
    if (grow(m, &p, &cap, (size_t)c->n, sizeof *c->v)) return GS_ENOMEM;
    c->v = p;
    c->cap = (int)cap;
    c->v[c->n++] = s;
    return 0;
}

/* A new set of g GPUs appended to class c; NULL (nothing changed) when out of memory. */
static nset *add_set(emul *m, sclass *c, int g)
{
    nset *s = set_new(m, g);
    if (s && cls_append(m, c, s)) {
        for (int k = s->nn; k-- > 0;) m->free_nodes[--m->headfree] = s->nodes[k];
        set_free(s);
        s = NULL;
    }
    return s;
}

static nset *cls_pop_front(sclass *c)
{
    nset *s = c->v[0];
    memmove(c->v, c->v + 1, (size_t)(c->n - 1) * sizeof *c->v);
    c->n--;
    return s;
}

/* Out of memory: the job ends up in no set (it is lost; the engine is failed). */
static void assign(emul *m, int ci, nset *s, int32_t slot)
{
    ejob *x = EJ(m, slot);
    x->set = NULL;
    x->set_class = -1;
    if (x == &m->spare || set_add_job(m, s, slot)) return;
    s->util++;
    x->set = s;
    x->set_class = ci;
}

/*
 * Hand every job of 'jobs' to the least-utilised set of the class, re-sorting each time (the
 * original's loop).  When every set of the class has the same util - always after expand()
 * reset them - that loop deals in rounds whose direction alternates: the front set gets a
 * job and, stably re-sorted, goes behind the others of its old util, so round 0 serves
 * v[0..S-1] and leaves them reversed, round 1 serves them back, and so on.  The deal and the
 * final order are then computed directly, O(n + S) instead of O(n x S) (gandiva-emul crawled
 * on the full Philly trace re-dealing thousands of jobs at every 10-s step); the slow loop
 * stays for unequal utils (after shrink()); deal=loop forces it (tests/test_gandiva.c,
 * emul_deal: the same outputs both ways).
 */
static void redistribute(emul *m, int ci, const int32_t *jobs, size_t n)
{
    sclass *c = &m->cls[ci];
    size_t ns = (size_t)c->n;
    int equal = ns > 0 && n > 0;
    for (size_t k = 1; k < ns && equal; k++) equal = c->v[k]->util == c->v[0]->util;
    nset **base = equal && !m->slow_deal ? malloc(ns * sizeof *base) : NULL;
    if (!base) { /* unequal utils (or no memory for the fast path): the original's loop */
        for (size_t i = 0; i < n; i++) {
            assign(m, ci, c->v[0], jobs[i]);
            sort_sets(c);
        }
        return;
    }
    size_t q = n / ns, rem = n % ns;
    /* room first (a set gets q or q + 1 jobs), so the deal itself cannot fail */
    int room = 1;
    for (size_t k = 0; k < ns && room; k++) {
        nset *s = c->v[k];
        size_t cap = (size_t)s->capjobs;
        void *p = s->jobs;
        room = !grow(m, &p, &cap, (size_t)s->njobs + q, sizeof *s->jobs);
        s->jobs = p;
        s->capjobs = (int)cap;
    }
    for (size_t k = 0, r = 0, p = 0; k < n; k++) {
        nset *s = c->v[r & 1 ? ns - 1 - p : p];
        if (++p == ns) p = 0, r++;
        ejob *x = EJ(m, jobs[k]);
        if (!room || x == &m->spare) { /* assign()'s failure handling */
            assign(m, ci, s, jobs[k]);
            continue;
        }
        s->jobs[s->njobs++] = jobs[k];
        s->util++;
        x->set = s;
        x->set_class = ci;
    }
    /* after q full rounds: v, reversed when q is odd; then the first rem of that order (one
     * more job each) go behind the rest, the last of them first */
    for (size_t k = 0; k < ns; k++) base[k] = c->v[q & 1 ? ns - 1 - k : k];
    size_t w = 0;
    for (size_t k = rem; k < ns; k++) c->v[w++] = base[k];
    for (size_t k = rem; k-- > 0;) c->v[w++] = base[k];
    free(base);
    if (m->err) sort_sets(c); /* a job lost to a failed allocation left its set's util behind */
}

/* ---- the original's steps ------------------------------------------------------------------ */

static int place(emul *m, int32_t slot)
{
    gs_job *j = gs_policy_job(m->e, (size_t)slot);
    int ci = class_of(m, j->gpus);
    if (ci < 0) return 0;
    sclass *c = &m->cls[ci];
    if (c->n > 0) {
        nset *s = cls_pop_front(c);
        if (s->util + 1 < s->capacity) {
            assign(m, ci, s, slot);
            cls_append(m, c, s);
            sort_sets(c);
            return 1;
        }
        cls_append(m, c, s); /* to the back, unsorted, as the original does */
    }
    int nn = (j->gpus + m->gpn - 1) / m->gpn;
    if ((size_t)nn <= nfree(m)) {
        nset *s = add_set(m, c, j->gpus);
        if (!s) return 0;
        assign(m, ci, s, slot);
        sort_sets(c);
        return 1;
    }
    if (c->n > 0) {
        /* no room: time-slice on the least utilised set */
        nset *s = cls_pop_front(c);
        assign(m, ci, s, slot);
        cls_append(m, c, s);
        sort_sets(c);
        return 1;
    }
    return 0;
}

static void expand(emul *m, int ci, int num_ns)
{
    sclass *c = &m->cls[ci];
    int nn = (c->g + m->gpn - 1) / m->gpn;
    int rearrange = 0;
    for (int i = 1; i <= num_ns; i++) {
        if ((size_t)nn <= nfree(m)) {
            if (!add_set(m, c, c->g)) return;
            /* the original's inner loop reuses its counter: after a created set of
             * one node the counter reads 0 and the re-balance below is skipped */
            rearrange = nn - 1 > 0;
        } else {
            rearrange = 1;
        }
    }
    if (!rearrange) return;
    size_t n = 0, total = 0;
    for (int k = 0; k < c->n; k++) total += (size_t)c->v[k]->njobs;
    void *p = m->all;
    int room = !total || !grow(m, &p, &m->capall, total - 1, sizeof *m->all);
    m->all = p;
    for (int k = 0; k < c->n; k++) {
        nset *s = c->v[k];
        if (room && s->njobs) {
            memcpy(m->all + n, s->jobs, (size_t)s->njobs * sizeof *m->all);
            n += (size_t)s->njobs;
        } else if (!room) {
            for (int x = 0; x < s->njobs; x++) EJ(m, s->jobs[x])->set = NULL; /* lost */
        }
        if (s->njobs) {
            s->njobs = 0;
            s->util = 0;
        }
    }
    redistribute(m, ci, m->all, n);
}

static void shrink(emul *m, int ci, int num_ns)
{
    sclass *c = &m->cls[ci];
    if (c->n <= num_ns) num_ns = c->n - 1;
    size_t n = 0, cap = 0;
    int32_t *moved = NULL;
    for (int i = 1; i <= num_ns; i++) {
        nset *s = cls_pop_front(c);
        for (int x = 0; x < s->njobs; x++)
            if (push_i32(m, &moved, &n, &cap, s->jobs[x])) EJ(m, s->jobs[x])->set = NULL;
        for (int k = 0; k < s->nn; k++) give_node(m, s->nodes[k]);
        set_free(s);
    }
    if (num_ns > 0) redistribute(m, ci, moved, n);
    free(moved);
}

/*
 * Quiet: nothing pending, no set runs fewer jobs than it holds (no rotation), and
 * re-balancing would change nothing.  The original's steps then do nothing until
 * a job ends or arrives, so no step is simulated until then.
 */
static int quiet(emul *m)
{
    if (m->npend) return 0;
    int64_t total = 0;
    for (int i = 0; i < m->ncls; i++)
        for (int k = 0; k < m->cls[i].n; k++) {
            const nset *s = m->cls[i].v[k];
            if (s->njobs > s->capacity) return 0;
            total += (int64_t)s->njobs * m->cls[i].g;
        }
    int64_t ngpus = (int64_t)gs_cluster_ngpus(m->c);
    for (int i = 0; total && i < m->ncls; i++) {
        int64_t jobs = 0, occ = 0;
        for (int k = 0; k < m->cls[i].n; k++) {
            jobs += m->cls[i].v[k]->njobs;
            occ += (int64_t)m->cls[i].v[k]->nn * m->gpn;
        }
        int64_t dem = jobs * m->cls[i].g;
        if (!dem) continue;
        int64_t plan = dem * ngpus / total;
        int64_t target = plan < dem ? plan : dem;
        /* a shrink of a class with a single set keeps that set: a no-op too */
        if (target != occ && !(target < occ && m->cls[i].n == 1)) return 0;
    }
    return 1;
}

/* Re-balance node sets between sizes in proportion to their GPU demand. */
static void adjust(emul *m)
{
    int64_t total = 0;
    int64_t *dem = calloc((size_t)(m->ncls ? m->ncls : 1), sizeof *dem);
    int64_t *occ = calloc((size_t)(m->ncls ? m->ncls : 1), sizeof *occ);
    if (!dem || !occ) {
        free(dem);
        free(occ);
        oom(m);
        return;
    }
    for (int i = 0; i < m->ncls; i++) {
        int64_t jobs = 0;
        for (int k = 0; k < m->cls[i].n; k++) {
            jobs += m->cls[i].v[k]->njobs;
            occ[i] += (int64_t)m->cls[i].v[k]->nn * m->gpn;
        }
        dem[i] = jobs * m->cls[i].g;
        total += dem[i];
    }
    int64_t ngpus = (int64_t)gs_cluster_ngpus(m->c);
    for (int i = 0; total && i < m->ncls; i++) {
        if (!dem[i]) continue;
        int64_t plan = dem[i] * ngpus / total; /* floor(demand share x GPUs) */
        int64_t target = plan < dem[i] ? plan : dem[i];
        int64_t diff = target - occ[i];
        int g = m->cls[i].g;
        if (diff > 0)
            expand(m, i, (int)((diff + g - 1) / g));
        else if (diff < 0)
            shrink(m, i, (int)((-diff + g - 1) / g));
    }
    free(dem);
    free(occ);
}

/* Rotation (at multiples of 60 s) and removal of ended jobs; returns 1 if a set was released. */
static int slice(emul *m, gs_time now)
{
    int release = 0, rotate = now % ROTATE == 0;
    for (int ci = 0; ci < m->ncls; ci++) {
        sclass *c = &m->cls[ci];
        for (int k = 0; k < c->n; k++) {
            nset *s = c->v[k];
            int conc = s->njobs < s->capacity ? s->njobs : s->capacity;
            if (rotate && s->njobs > conc) {
                /* the running ones go to the back, in order */
                int32_t *tmp = malloc((size_t)conc * sizeof *tmp);
                if (tmp) {
                    memcpy(tmp, s->jobs, (size_t)conc * sizeof *tmp);
                    memmove(s->jobs, s->jobs + conc, (size_t)(s->njobs - conc) * sizeof *tmp);
                    memcpy(s->jobs + s->njobs - conc, tmp, (size_t)conc * sizeof *tmp);
                    free(tmp);
                } else {
                    oom(m); /* not rotated */
                }
            }
            int w = 0;
            for (int x = 0; x < s->njobs; x++) {
                int32_t slot = s->jobs[x];
                if (EJ(m, slot)->ended) {
                    EJ(m, slot)->set = NULL;
                    EJ(m, slot)->set_class = -1;
                    EJ(m, slot)->ended = 0;
                } else {
                    s->jobs[w++] = slot;
                }
            }
            s->njobs = w;
        }
        /* release empty sets */
        int w = 0;
        for (int k = 0; k < c->n; k++) {
            nset *s = c->v[k];
            if (s->njobs == 0) {
                for (int x = 0; x < s->nn; x++) give_node(m, s->nodes[x]);
                set_free(s);
                release = 1;
            } else {
                c->v[w++] = s;
            }
        }
        c->n = w;
    }
    return release;
}

/* ---- making the running sets real ------------------------------------------------------------ */

static int in_set(emul *m, const gs_job *j, const nset *s)
{
    if (!j->alloc) return 0;
    for (int a = 0; a < j->nalloc; a++) {
        int node = gs_cluster_gpu(m->c, j->alloc[a])->node, ok = 0;
        for (int k = 0; k < s->nn && !ok; k++) ok = s->nodes[k] == node;
        if (!ok) return 0;
    }
    return 1;
}

/* Free GPUs on the set's nodes for j, task by task on one node each. */
static int pick(emul *m, const nset *s, const gs_job *j, int *out)
{
    int k = 0, gpt = j->gpus_per_task;
    for (int t = 0; t < s->nn && k < j->gpus; t++) {
        const gs_node *nd = gs_cluster_node(m->c, s->nodes[t]);
        if (nd->down) continue;
        int got = 0, base = k;
        for (int32_t x = nd->gpu_lo; x < nd->gpu_hi && k < j->gpus; x++) {
            const gs_gpu *gp = gs_cluster_gpu(m->c, x);
            if (gp->users || gp->down || (j->gpu_type >= 0 && gp->type != j->gpu_type)) continue;
            out[k++] = x;
            got++;
        }
        /* keep whole tasks only */
        k = base + got / gpt * gpt;
    }
    return k == j->gpus;
}

static void apply(emul *m)
{
    /* 1) stop what should not run, or runs outside its set (every running job is in a set) */
    for (int ci = 0; ci < m->ncls; ci++)
        for (int k = 0; k < m->cls[ci].n; k++) {
            nset *s = m->cls[ci].v[k];
            int conc = s->njobs < s->capacity ? s->njobs : s->capacity;
            for (int x = 0; x < s->njobs; x++) {
                ejob *ej = EJ(m, s->jobs[x]);
                if (!ej->run) continue; /* not RUNNING: nothing to stop */
                gs_job *j = gs_policy_job(m->e, (size_t)s->jobs[x]);
                if (j->state != GS_JOB_RUNNING) {
                    ej->run = 0;
                    continue;
                }
                /* a slot is listed once in its set: it runs when among the first conc */
                if (x < conc && in_set(m, j, s)) continue;
                /* refused only when about to end */
                int rc = gs_engine_suspend(m->e, j, "time slice");
                if (rc == GS_ENOMEM) oom(m);
                if (j->state != GS_JOB_RUNNING) ej->run = 0;
            }
        }
    /* 2) run the running set of every node set */
    for (int ci = 0; ci < m->ncls; ci++)
        for (int k = 0; k < m->cls[ci].n; k++) {
            nset *s = m->cls[ci].v[k];
            int conc = s->njobs < s->capacity ? s->njobs : s->capacity;
            for (int x = 0; x < conc; x++) {
                gs_job *j = gs_policy_job(m->e, (size_t)s->jobs[x]);
                if (j->state == GS_JOB_RUNNING) continue;
                void *p = m->scratch;
                if (grow(m, &p, &m->capscratch, (size_t)j->gpus, sizeof(int))) return;
                m->scratch = p;
                if (!pick(m, s, j, m->scratch)) continue;
                int rc = 0;
                if (j->state == GS_JOB_PENDING)
                    rc = gs_engine_start(m->e, j, m->scratch, j->gpus);
                else if (j->state == GS_JOB_SUSPENDED)
                    rc = gs_engine_resume(m->e, j, m->scratch, j->gpus);
                if (rc == GS_ENOMEM) oom(m);
                if (j->state == GS_JOB_RUNNING) EJ(m, s->jobs[x])->run = 1;
            }
        }
}

/* ---- hooks ------------------------------------------------------------------------------------
 */

static int step(emul *m)
{
    gs_time now = gs_engine_now(m->e);
    m->last_step = now;
    adjust(m);
    int release = slice(m, now);
    for (size_t i = 0; i < m->narr; i++)
        if (!place(m, m->arrivals[i]))
            push_i32(m, &m->pending, &m->npend, &m->cappend, m->arrivals[i]);
    m->narr = 0;
    if (release) {
        /* the original removes a placed job from the list it iterates: the next one is skipped */
        size_t idx = 0;
        while (idx < m->npend) {
            if (place(m, m->pending[idx])) {
                memmove(m->pending + idx, m->pending + idx + 1,
                        (m->npend - idx - 1) * sizeof *m->pending);
                m->npend--;
            }
            idx++;
        }
    }
    for (size_t i = 0; i < m->npend; i++)
        gs_engine_set_reason(m->e, gs_policy_job(m->e, (size_t)m->pending[i]), "Resources");
    apply(m);
    int active = m->npend > 0;
    for (int ci = 0; ci < m->ncls && !active; ci++) active = m->cls[ci].n > 0;
    m->idle = active && quiet(m);
    if (active && !m->idle && gs_engine_set_timer(m->e, now + STEP, ++m->gen)) oom(m);
    return m->err;
}

static int em_schedule(void *st)
{
    emul *m = st;
    if (m->narr || m->step_due) {
        m->step_due = 0;
        return step(m);
    }
    return m->err;
}

static int em_timer(void *st, uint64_t tag)
{
    emul *m = st;
    if (tag != m->gen) return m->err; /* superseded: an arrival restarted the 10-s grid */
    m->step_due = 1;
    gs_engine_request_pass(m->e);
    return m->err;
}

static int em_arrival(void *st, gs_job *j)
{
    emul *m = st;
    EJ(m, j->slot);
    push_i32(m, &m->arrivals, &m->narr, &m->caparr, j->slot);
    m->gen++; /* the pending step timer is superseded by the step at this arrival */
    return m->err;
}

static int em_finish(void *st, gs_job *j)
{
    emul *m = st;
    ejob *x = EJ(m, j->slot);
    x->run = 0;
    if (x->set) {
        x->ended = 1; /* leaves its set at the next step, as in the original */
        if (m->idle) {
            /* the next step of the 10-s grid the original would have taken */
            gs_time now = gs_engine_now(m->e);
            gs_time k = (now - m->last_step + STEP - 1) / STEP;
            m->idle = 0;
            if (gs_engine_set_timer(m->e, m->last_step + k * STEP, ++m->gen)) oom(m);
        }
        return m->err;
    }
    for (size_t i = 0; i < m->npend; i++)
        if (m->pending[i] == j->slot) {
            memmove(m->pending + i, m->pending + i + 1, (m->npend - i - 1) * sizeof *m->pending);
            m->npend--;
            break;
        }
    return m->err;
}

static int em_requeue(void *st, gs_job *j)
{
    /* a failed node: the job leaves its set and is placed again at the next step */
    emul *m = st;
    ejob *x = EJ(m, j->slot);
    x->run = 0;
    if (x->set) {
        nset *s = x->set;
        int w = 0;
        for (int k = 0; k < s->njobs; k++)
            if (s->jobs[k] != j->slot) s->jobs[w++] = s->jobs[k];
        s->njobs = w;
        x->set = NULL;
        x->set_class = -1;
    }
    push_i32(m, &m->arrivals, &m->narr, &m->caparr, j->slot);
    gs_engine_request_pass(m->e);
    return m->err;
}

static int em_check(void *st, gs_diag *d)
{
    emul *m = st;
    for (int ci = 0; ci < m->ncls; ci++)
        for (int k = 0; k < m->cls[ci].n; k++) {
            nset *s = m->cls[ci].v[k];
            for (int x = 0; x < s->njobs; x++) {
                if (EJ(m, s->jobs[x])->set != s)
                    return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                       "gandiva-emul: slot %d listed in a set it is not in",
                                       s->jobs[x]);
                const gs_job *j = gs_policy_job(m->e, (size_t)s->jobs[x]);
                if (!EJ(m, s->jobs[x])->run && j->state == GS_JOB_RUNNING)
                    return gs_diag_set(d, GS_EINTERNAL, 0, 0,
                                       "gandiva-emul: job %lld runs unnoticed", (long long)j->id);
            }
            if (k && m->cls[ci].v[k - 1]->util > s->util)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0, "gandiva-emul: sets not sorted");
        }
    return 0;
}

static void em_destroy(void *st)
{
    emul *m = st;
    if (!m) return;
    for (int ci = 0; ci < m->ncls; ci++) {
        for (int k = 0; k < m->cls[ci].n; k++) set_free(m->cls[ci].v[k]);
        free(m->cls[ci].v);
    }
    free(m->cls);
    free(m->free_nodes);
    free(m->pending);
    free(m->arrivals);
    free(m->jobs);
    free(m->scratch);
    free(m->all);
    free(m);
}

static int em_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    const char *deal = gs_params_get(p, "deal");
    if (deal && strcmp(deal, "fast") && strcmp(deal, "loop"))
        return gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'deal': expected fast or loop, got '%s'",
                           deal);
    emul *m = calloc(1, sizeof *m);
    if (!m) return GS_ENOMEM;
    m->slow_deal = deal && !strcmp(deal, "loop");
    m->e = e;
    m->c = gs_engine_cluster(e);
    if (gs_engine_opts_get(e)->mode == GS_ENGINE_LIVE) {
        em_destroy(m);
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                           "gandiva-emul emulates a simulator; use gandiva in the daemon");
    }
    if (!gs_engine_mech_supported(e, GS_MECH_SUSPEND)) {
        /* its node sets run more jobs than they hold by time-slicing: nothing to emulate */
        em_destroy(m);
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                           "gandiva-emul time-slices its node sets: it needs suspend and resume, "
                           "which this program cannot carry out");
    }
    if (gs_costs_suspend_parks(gs_engine_costs(e))) {
        /* its re-deals resume jobs on whatever GPUs their node set has now */
        em_destroy(m);
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                           "gandiva-emul resumes suspended jobs on other GPUs at almost every "
                           "step; with suspend_mech=sigstop a stopped job continues only where "
                           "it was: use gandiva, or suspend_mech=copy, cuda or restart");
    }
    size_t nn = gs_cluster_nnodes(m->c);
    for (size_t i = 0; i < nn; i++) {
        const gs_node *nd = gs_cluster_node(m->c, (int32_t)i);
        if (nd->gpu_hi - nd->gpu_lo > m->gpn) m->gpn = nd->gpu_hi - nd->gpu_lo;
        give_node(m, (int32_t)i);
    }
    /* the original's size classes, in its order; other sizes are added as they come */
    static const int sizes[] = {1, 2, 4, 8, 12, 16, 24, 32, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) class_of(m, sizes[i]);
    if (m->err) {
        em_destroy(m);
        return GS_ENOMEM;
    }
    *state = m;
    return 0;
}

static const gs_policy_ops gs_policy_gandiva_emul = {
    .name = "gandiva-emul",
    .summary = "the Tiresias simulator's Gandiva emulation: node sets per job size, 10-s steps, "
               "60-s rotation (for comparison with its published result; costs default to off)",
    .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_RIGID | GS_POLICY_COSTS_OFF,
    .create = em_create,
    .destroy = em_destroy,
    .on_arrival = em_arrival,
    .on_requeue = em_requeue,
    .on_finish = em_finish,
    .on_timer = em_timer,
    .schedule = em_schedule,
    .check = em_check,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_gandiva_emul[] = {{70, &gs_policy_gandiva_emul}, {0, NULL}};
