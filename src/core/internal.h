/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - helpers shared inside libgsched (not installed).
 *
 * strtab: interns strings and gives each a dense id in order of first
 * appearance.  Lookups go through a hash table, but ids never depend on hash
 * order, so nothing decided from them depends on it either.
 */
#ifndef GSCHED_INTERNAL_H
#define GSCHED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct strtab {
    char **str; /* by id */
    size_t n, cap;
    int32_t *slots; /* hash slots -> id, -1 empty */
    size_t nslots;
} strtab;

void strtab_init(strtab *t);
void strtab_release(strtab *t);
/* Intern s; returns its id (>= 0) or GS_ENOMEM. */
int strtab_intern(strtab *t, const char *s);
/* Id of s or -1. */
int strtab_find(const strtab *t, const char *s);
static inline const char *strtab_str(const strtab *t, int id)
{
    return id >= 0 && (size_t)id < t->n ? t->str[id] : NULL;
}

/* id (int64) -> slot (int32) map, open addressing. */
typedef struct idmap {
    int64_t *keys;
    int32_t *vals; /* -1 empty */
    size_t n, cap;
} idmap;

void idmap_init(idmap *m);
void idmap_release(idmap *m);
int idmap_put(idmap *m, int64_t key, int32_t val); /* GS_EEXIST if present */
int32_t idmap_get(const idmap *m, int64_t key);    /* -1 if absent */

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
struct gs_engine;
struct gs_job;

typedef struct gs_plan {
    struct gs_job **start;
    size_t nstart, capstart;
    struct gs_job **vict;
    size_t nvict, capvict;
    long free;    /* GPUs left by count during the walk */
    int admitted; /* a pending job was admitted (later running jobs may not fit) */
    int64_t now;  /* running jobs still protected at this instant always stay */
    int err;      /* GS_ENOMEM when the walk could not record a job; gs_plan_apply returns it */
} gs_plan;

void gs_plan_init(gs_plan *p);
void gs_plan_release(gs_plan *p);
/* Start a walk: free = healthy GPUs not held by stopping jobs. */
void gs_plan_begin(gs_plan *p, struct gs_engine *e);
/* Visit the next job in priority order.  Returns 1 if it belongs to the target set
 * (out of memory: 0, and p->err is set). */
int gs_plan_visit(gs_plan *p, struct gs_job *j);
/* Start admitted jobs, preempting victims as needed.  Returns the number started, or
 * the walk's error (nothing is applied) or the engine's (gs_engine_error) if it failed. */
int gs_plan_apply(gs_plan *p, struct gs_engine *e, int level, const char *why);

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
    struct gs_job *j;
} gs_kent;

/* Sort by key (insertion sort: cheap on the nearly sorted arrays passes keep).
 * Returns 1 if the order changed. */
int gs_kent_sort(gs_kent *v, size_t n);
/* Put the members of q listed in v[0..n) (all of them must be) in v's order,
 * moving only the ones out of place.  Returns 0 or a gs_jobq error. */
struct gs_jobq;
int gs_kent_relink(struct gs_jobq *q, const gs_kent *v, size_t n);
/*
 * Visit, in key order, the running entries v[0..n) (sorted) merged with the
 * waiting members of the set at root that fit the GPUs left when their turn
 * comes.  Equivalent to visiting all of them: a waiting job that does not fit
 * changes nothing, and the GPUs left only shrink during a walk.
 */
void gs_plan_visit_merged(gs_plan *p, struct gs_engine *e, const gs_kent *v, size_t n,
                          const gs_kset *s, int32_t root);

/*
 * mostfree: the placement of the Pollux artifact's rigid baselines (Tiresias+TunedJobs,
 * Optimus): take the node with the most free GPUs (the lowest index on ties), as many whole
 * tasks of 'gpt' GPUs as it has room for up to what is still needed, and repeat.  GPUs of a
 * node are taken lowest local index first; out[] lists the n GPUs in the order taken, so the
 * node order of the job's placement is the artifact's.  Only free, healthy GPUs of type
 * 'gpu_type' (-1 = any) count.  Returns 0, or GS_ENOFIT when they cannot hold the n GPUs
 * (out[] is then meaningless; nothing is allocated either way).
 */
struct gs_cluster;
int gs_mostfree_place(const struct gs_cluster *c, int n, int gpt, int gpu_type, int *out);

/* The engine's policy ops and its state (queue.c asks the policy through them). */
struct gs_policy_ops;
const struct gs_policy_ops *gs_engine_policy_ops(const struct gs_engine *e, void **state);

#endif
