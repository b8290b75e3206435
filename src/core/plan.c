/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan.c - count-based target set and its application, and the ordered job
 * sets (kset) that let a pass visit only the waiting jobs it can admit (see
 * gsched/plan.h, public: plugins use them too).
 * Invariants: the target set is the greedy prefix of the priority order by
 * GPU count; a victim is preempted only when a higher-priority start uses
 * one of its GPUs; jobs are started and preempted only through the engine;
 * a kset is a treap by (k1, k2, slot) (heap on a fixed hash of the slot)
 * whose nodes hold their subtree's smallest GPU count; a merged walk visits
 * exactly the jobs of the full walk that can change the plan, in its order.
 */
#include <stdlib.h>

#include "gsched/engine.h"
#include "gsched/policy.h"
#include "gsched/jobq.h"
#include "gsched/plan.h"

void gs_plan_init(gs_plan *p)
{
    p->start = p->vict = NULL;
    p->nstart = p->capstart = p->nvict = p->capvict = 0;
    p->free = 0;
    p->admitted = 0;
    p->err = 0;
}

void gs_plan_release(gs_plan *p)
{
    free(p->start);
    free(p->vict);
    gs_plan_init(p);
}

void gs_plan_begin(gs_plan *p, gs_engine *e)
{
    p->nstart = p->nvict = 0;
    p->admitted = 0;
    p->err = 0;
    p->free = (long)gs_cluster_cell(gs_engine_cluster(e), 0)->healthy - gs_engine_stopping_gpus(e);
    p->now = gs_engine_now(e);
}

static int push(gs_plan *p, gs_job ***v, size_t *n, size_t *cap, gs_job *j)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        gs_job **nv = realloc(*v, nc * sizeof *nv);
        if (!nv) {
            p->err = GS_ENOMEM;
            return 0;
        }
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = j;
    return 1;
}

int gs_plan_visit(gs_plan *p, gs_job *j)
{
    if (j->state == GS_JOB_RUNNING) {
        if (p->free >= j->gpus || p->now < j->protect_until) {
            p->free -= j->gpus;
            return 1;
        }
        push(p, &p->vict, &p->nvict, &p->capvict, j);
        return 0;
    }
    if (j->state == GS_JOB_PENDING && p->free >= j->gpus) {
        if (!push(p, &p->start, &p->nstart, &p->capstart, j)) return 0;
        p->free -= j->gpus;
        p->admitted = 1;
        return 1;
    }
    return 0;
}

int gs_plan_apply(gs_plan *p, gs_engine *e, int level, const char *why)
{
    if (p->err) return p->err;
    /* victims least important first */
    for (size_t a = 0, b = p->nvict; a + 1 < b; a++, b--) {
        gs_job *t = p->vict[a];
        p->vict[a] = p->vict[b - 1];
        p->vict[b - 1] = t;
    }
    int started = 0;
    for (size_t i = 0; i < p->nstart; i++) {
        gs_job *j = p->start[i];
        if (j->state != GS_JOB_PENDING) continue;
        int rc;
        if (p->nvict)
            rc = gs_engine_start_preempting(e, j, (gs_locality)level,
                                            (const gs_job *const *)p->vict, (int)p->nvict, why);
        else
            rc = gs_engine_try_start(e, j, (gs_locality)level);
        if (rc < 0 && gs_engine_error(e)) return gs_engine_error(e);
        if (rc >= 0 && j->state == GS_JOB_RUNNING)
            started++;
        else
            gs_engine_set_reason(e, j, "Resources");
    }
    return started;
}

/* ---- kset: treap of slots by (k1, k2, slot), subtree minimum GPU count ---------------- */

void gs_kset_init(gs_kset *s)
{
    s->key = NULL;
    s->l = s->r = s->gpus = s->mingpus = NULL;
    s->prio = NULL;
    s->in = NULL;
    s->cap = 0;
}

void gs_kset_release(gs_kset *s)
{
    free(s->key);
    free(s->l);
    free(s->r);
    free(s->gpus);
    free(s->mingpus);
    free(s->prio);
    free(s->in);
    gs_kset_init(s);
}

static int kset_grow(gs_kset *s, int32_t slot)
{
    if ((size_t)slot < s->cap) return 0;
    size_t nc = s->cap ? s->cap : 1024;
    while (nc <= (size_t)slot) nc *= 2;
#define G(arr)                                           \
    do {                                                 \
        void *np = realloc(s->arr, nc * sizeof *s->arr); \
        if (!np) return GS_ENOMEM;                       \
        s->arr = np;                                     \
    } while (0)
    G(key);
    G(l);
    G(r);
    G(gpus);
    G(mingpus);
    G(prio);
    G(in);
#undef G
    for (size_t i = s->cap; i < nc; i++) {
        /* a fixed mix of the slot: balanced in expectation, the same on every run */
        uint64_t z = (uint64_t)i + 0x9e3779b97f4a7c15u;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        s->prio[i] = (uint32_t)(z ^ (z >> 31));
        s->in[i] = 0;
        s->l[i] = s->r[i] = -1;
    }
    s->cap = nc;
    return 0;
}

static void pull(gs_kset *s, int32_t x)
{
    int32_t m = s->gpus[x];
    if (s->l[x] >= 0 && s->mingpus[s->l[x]] < m) m = s->mingpus[s->l[x]];
    if (s->r[x] >= 0 && s->mingpus[s->r[x]] < m) m = s->mingpus[s->r[x]];
    s->mingpus[x] = m;
}

/* every key of a before every key of b */
static int32_t kmerge(gs_kset *s, int32_t a, int32_t b)
{
    if (a < 0) return b;
    if (b < 0) return a;
    if (s->prio[a] > s->prio[b]) {
        s->r[a] = kmerge(s, s->r[a], b);
        pull(s, a);
        return a;
    }
    s->l[b] = kmerge(s, a, s->l[b]);
    pull(s, b);
    return b;
}

/* *a: keys before k; *b: the others */
static void ksplit(gs_kset *s, int32_t x, const gs_kkey *k, int32_t *a, int32_t *b)
{
    if (x < 0) {
        *a = *b = -1;
        return;
    }
    if (gs_kkey_before(&s->key[x], k)) {
        ksplit(s, s->r[x], k, &s->r[x], b);
        pull(s, x);
        *a = x;
    } else {
        ksplit(s, s->l[x], k, a, &s->l[x]);
        pull(s, x);
        *b = x;
    }
}

static int32_t kinsert(gs_kset *s, int32_t x, int32_t n)
{
    if (x < 0) return n;
    if (s->prio[n] > s->prio[x]) {
        ksplit(s, x, &s->key[n], &s->l[n], &s->r[n]);
        pull(s, n);
        return n;
    }
    if (gs_kkey_before(&s->key[n], &s->key[x]))
        s->l[x] = kinsert(s, s->l[x], n);
    else
        s->r[x] = kinsert(s, s->r[x], n);
    pull(s, x);
    return x;
}

int gs_kset_insert(gs_kset *s, int32_t *root, gs_kkey k, int32_t gpus)
{
    if (k.slot < 0) return GS_EINVAL;
    if (kset_grow(s, k.slot)) return GS_ENOMEM;
    int32_t n = k.slot;
    if (s->in[n]) return GS_EEXIST;
    s->key[n] = k;
    s->gpus[n] = s->mingpus[n] = gpus;
    s->l[n] = s->r[n] = -1;
    s->in[n] = 1;
    *root = kinsert(s, *root, n);
    return 0;
}

static int32_t kdelete(gs_kset *s, int32_t x, int32_t n)
{
    if (x < 0) return -1; /* not in this set */
    if (x == n) return kmerge(s, s->l[x], s->r[x]);
    if (gs_kkey_before(&s->key[n], &s->key[x]))
        s->l[x] = kdelete(s, s->l[x], n);
    else
        s->r[x] = kdelete(s, s->r[x], n);
    pull(s, x);
    return x;
}

void gs_kset_remove(gs_kset *s, int32_t *root, int32_t slot)
{
    if (!gs_kset_member(s, slot)) return;
    *root = kdelete(s, *root, slot);
    s->in[slot] = 0;
    s->l[slot] = s->r[slot] = -1;
}

/* First member of subtree x after 'after' (NULL: any) needing at most limit GPUs.
 * Only subtrees straddling 'after' are searched without a guaranteed hit, and
 * those lie on one path: O(depth). */
static int32_t kfit(const gs_kset *s, int32_t x, const gs_kkey *after, long limit)
{
    while (x >= 0 && s->mingpus[x] <= limit) {
        if (after && !gs_kkey_before(after, &s->key[x])) {
            x = s->r[x]; /* x and its left subtree are not after 'after' */
            continue;
        }
        int32_t y = kfit(s, s->l[x], after, limit);
        if (y >= 0) return y;
        if (s->gpus[x] <= limit) return x;
        x = s->r[x];
        after = NULL; /* everything right of x is after it */
    }
    return -1;
}

int32_t gs_kset_next_fit(const gs_kset *s, int32_t root, const gs_kkey *after, long limit)
{
    return kfit(s, root, after, limit);
}

int gs_kent_sort(gs_kent *v, size_t n)
{
    int moved = 0;
    for (size_t i = 1; i < n; i++) {
        if (!gs_kkey_before(&v[i].k, &v[i - 1].k)) continue;
        gs_kent x = v[i];
        size_t k = i;
        do {
            v[k] = v[k - 1];
            k--;
        } while (k > 0 && gs_kkey_before(&x.k, &v[k - 1].k));
        v[k] = x;
        moved = 1;
    }
    return moved;
}

int gs_kent_relink(gs_jobq *q, const gs_kent *v, size_t n)
{
    int32_t cur = gs_jobq_first(q); /* members before cur are in v's order already */
    for (size_t i = 0; i < n; i++) {
        int32_t s = v[i].j->slot;
        if (!gs_jobq_contains(q, s)) continue;
        if (s == cur) {
            cur = gs_jobq_next(q, cur);
            continue;
        }
        gs_jobq_remove(q, s); /* s is after cur */
        int rc = cur >= 0 ? gs_jobq_insert_before(q, cur, s) : gs_jobq_push_back(q, s);
        if (rc) return rc;
    }
    return 0;
}

void gs_plan_visit_merged(gs_plan *p, gs_engine *e, const gs_kent *v, size_t n, const gs_kset *s,
                          int32_t root)
{
    size_t i = 0;
    int32_t w = gs_kset_next_fit(s, root, NULL, p->free);
    for (;;) {
        if (i < n && (w < 0 || gs_kkey_before(&v[i].k, &s->key[w]))) {
            gs_plan_visit(p, v[i++].j);
            /* fewer GPUs left: w may no longer fit, and nothing before it does */
            if (w >= 0 && s->gpus[w] > p->free) w = gs_kset_next_fit(s, root, &s->key[w], p->free);
            continue;
        }
        if (w < 0) break;
        gs_plan_visit(p, gs_policy_job(e, (size_t)w));
        w = gs_kset_next_fit(s, root, &s->key[w], p->free);
    }
}
