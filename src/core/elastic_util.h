/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elastic_util.h - helpers the elastic policies share (not installed):
 * choosing GPUs for a size and carrying a target size out through the
 * engine's requests (start, rescale).  Used by policy_elasticflow.c and
 * policy_afs.c.
 */
#ifndef GSCHED_ELASTIC_UTIL_H
#define GSCHED_ELASTIC_UTIL_H

#include "gsched/cluster.h"
#include "gsched/engine.h"
#include "gsched/job.h"

/*
 * Choose n GPUs for job j: GPUs it holds (kept first) plus free healthy ones
 * (of j's GPU type when it names one: the engine starts a typed job on no other).
 * buddy = 1 (power-of-two n): a block of n GPUs aligned on n inside one node
 * when n fits a node, whole nodes beyond (ElasticFlow's buddy placement);
 * otherwise the fewest nodes, best fit.  A shrink keeps a subset of its GPUs.
 * Writes n indices grouped by task (gpus_per_task each, one node per task) to
 * out; GS_ENOFIT when no such set exists now.
 */
int eu_pick(gs_engine *e, const gs_job *j, int n, int buddy, int *out);

/*
 * Carry out target size n for arrived job j (PENDING or RUNNING; other states
 * are left alone): start it at n, rescale it to n (kind POLICY, or PREEMPT
 * when n = 0), or nothing when it already has n.  'reason' is the user's
 * text.  Returns 0 when done, 1 when it could not be done now (no GPUs yet,
 * the rescale gap or budget, a drain in progress), or GS_ENOMEM.
 */
int eu_apply(gs_engine *e, const gs_job *j, int n, int buddy, const char *reason);

/* Healthy GPUs of type t in c (t < 0: of every type); a job of type t never holds more. */
int eu_healthy(const gs_cluster *c, int t);

/*
 * GPUs left to hand out when sharing a cluster among jobs: in all, and per GPU type.  A job
 * naming a type draws on both, one of any type on the total only; so the shares taken never
 * exceed the healthy GPUs, nor those of any type (every share can be counted out of GPUs of
 * the right types).  With one GPU type the per-type bound never binds.
 */
#define EU_MAX_TYPES 32 /* the most GPU types a cluster holds (cluster.c) */
typedef struct eu_budget {
    int all;
    int ntypes;
    int type[EU_MAX_TYPES];
} eu_budget;

/* Every healthy GPU of c left. */
void eu_budget_init(eu_budget *b, const gs_cluster *c);
/* GPUs left that j may take (of its type when it names one). */
int eu_budget_left(const eu_budget *b, const gs_job *j);
/* Take k GPUs for j (k <= eu_budget_left(b, j)). */
void eu_budget_take(eu_budget *b, const gs_job *j, int k);

/* Largest power of two <= n (0 for n < 1). */
int eu_floor_pow2(int n);

#endif
