/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elastic_util.h - helpers the elastic policies share (not installed):
 * choosing GPUs for a size and carrying a target size out through the
 * engine's requests (start, rescale).  Used by policy_elasticflow.c and
 * policy_afs.c.
 */
#ifndef GSCHED_ELASTIC_UTIL_H
#define GSCHED_ELASTIC_UTIL_H

#include "gsched/engine.h"
#include "gsched/job.h"

/*
 * Choose n GPUs for job j: GPUs it holds (kept first) plus free healthy ones.
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

/* Largest power of two <= n (0 for n < 1). */
int eu_floor_pow2(int n);

#endif
