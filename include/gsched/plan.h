/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/plan.h - helpers for priority policies: the preemption plan of one
 * pass and ordered sets of waiting jobs (src/core/plan.c).
 *
 * Public so that a policy outside libgsched (a plugin, docs/writing-a-policy.md)
 * can use them as the compiled-in ones do (tiresias, las, srtf, srsf, sjf).
 * Like every policy helper they act on jobs only through the gs_engine_*
 * requests, and they keep no state but what the caller passes in.
 */
#ifndef GSCHED_PLAN_H
#define GSCHED_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "job.h"
#include "jobq.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * plan: one pass of a preemptive priority policy (Tiresias, SRTF, ...).
 * The policy visits every active job in priority order; the plan admits a
 * job when the GPU count left allows it (no head-of-line blocking), marks
 * running jobs that no longer fit as victims, then applies: each admitted
 * pending job starts in priority order, preempting only the victims its
 * placement actually needs (least important first).  With count placement
 * this is exactly "re-plan from scratch"; with consolidated placement it
 * never preempts a job for a start that fragmentation would prevent anyway.
 * A running job inside its restart protection (gs_job.protect_until) always
 * stays: it is never a victim, even if that leaves less room for others.
 */
typedef struct gs_plan {
    gs_job **start;
    size_t nstart, capstart;
    gs_job **vict;
    size_t nvict, capvict;
    long free;    /* GPUs left by count during the walk */
    int admitted; /* a pending job was admitted (later running jobs may not fit) */
    int64_t now;  /* running jobs still protected at this instant always stay */
    int err;      /* GS_ENOMEM when the walk could not record a job; gs_plan_apply returns it */
} gs_plan;

void gs_plan_init(gs_plan *p);
void gs_plan_release(gs_plan *p);
/* Start a walk: free = healthy GPUs not held by stopping jobs. */
void gs_plan_begin(gs_plan *p, gs_engine *e);
/* Visit the next job in priority order.  Returns 1 if it belongs to the target set
 * (out of memory: 0, and p->err is set). */
int gs_plan_visit(gs_plan *p, gs_job *j);
/* Start admitted jobs, preempting victims as needed.  Returns the number started, or
 * the walk's error (nothing is applied) or the engine's (gs_engine_error) if it failed. */
int gs_plan_apply(gs_plan *p, gs_engine *e, int level, const char *why);

/*
 * kset: ordered sets of job slots, keyed by (k1, k2, slot) ascending, each
 * member carrying a GPU count.  Several disjoint sets (identified by their
 * root, kept by the caller, -1 when empty) share one pool of nodes indexed by
 * slot: a slot is in at most one set of a pool.  A treap whose node priorities
 * are a hash of the slot (so its shape is deterministic; it never affects an
 * order), each node keeping the smallest GPU count of its subtree: the first
 * member after a key that needs at most L GPUs is found in O(log n), so a pass
 * can skip every waiting job that cannot be admitted without looking at it.
 */
typedef struct gs_kkey {
    double k1;
    int64_t k2;
    int32_t slot;
} gs_kkey;

static inline int gs_kkey_before(const gs_kkey *a, const gs_kkey *b)
{
    if (a->k1 != b->k1) return a->k1 < b->k1;
    if (a->k2 != b->k2) return a->k2 < b->k2;
    return a->slot < b->slot;
}

/* An int64 that orders as the double x does (x not NaN): a kkey's k1 as a queue key. */
static inline int64_t gs_kkey_k1_rank(double x)
{
    int64_t b;
    if (x == 0) x = 0; /* -0 as +0 */
    memcpy(&b, &x, sizeof b);
    return b >= 0 ? b : b ^ INT64_MAX; /* negatives: larger magnitude, smaller */
}

typedef struct gs_kset {
    gs_kkey *key;                    /* by slot */
    int32_t *l, *r, *gpus, *mingpus; /* by slot; l/r -1 = none */
    uint32_t *prio;                  /* by slot */
    int8_t *in;                      /* by slot: member of some set of the pool */
    size_t cap;
} gs_kset;

void gs_kset_init(gs_kset *s);
void gs_kset_release(gs_kset *s);
/* Add k.slot (not a member) to the set at *root.  0 or GS_ENOMEM. */
int gs_kset_insert(gs_kset *s, int32_t *root, gs_kkey k, int32_t gpus);
/* Remove slot from the set at *root if it is a member (of that set). */
void gs_kset_remove(gs_kset *s, int32_t *root, int32_t slot);
static inline int gs_kset_member(const gs_kset *s, int32_t slot)
{
    return slot >= 0 && (size_t)slot < s->cap && s->in[slot];
}
/* First member after 'after' (NULL: from the start) with gpus <= limit, or -1. */
int32_t gs_kset_next_fit(const gs_kset *s, int32_t root, const gs_kkey *after, long limit);

/* A running job and its key at this instant, for merging with a kset. */
typedef struct gs_kent {
    gs_kkey k;
    gs_job *j;
} gs_kent;

/* Sort by key (insertion sort: cheap on the nearly sorted arrays passes keep).
 * Returns 1 if the order changed. */
int gs_kent_sort(gs_kent *v, size_t n);
/* Put the members of q listed in v[0..n) (all of them must be) in v's order,
 * moving only the ones out of place.  Returns 0 or a gs_jobq error. */
int gs_kent_relink(gs_jobq *q, const gs_kent *v, size_t n);
/*
 * Visit, in key order, the running entries v[0..n) (sorted) merged with the
 * waiting members of the set at root that fit the GPUs left when their turn
 * comes.  Equivalent to visiting all of them: a waiting job that does not fit
 * changes nothing, and the GPUs left only shrink during a walk.
 */
void gs_plan_visit_merged(gs_plan *p, gs_engine *e, const gs_kent *v, size_t n, const gs_kset *s,
                          int32_t root);

#ifdef __cplusplus
}
#endif
#endif
