/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/placement.h - choose GPUs for a gang, without allocating them.
 *
 * Placement is a pure function of the cluster's current allocation state and
 * a request; it never changes state.  The engine validates and applies the
 * result, so policies can combine any ordering with any placement.
 *
 * Modes:
 *   GS_PLACE_COUNT        any free GPUs, lowest index first (what the
 *                         Tiresias simulator's "count" scheme amounts to).
 *   GS_PLACE_CONSOLIDATE  as few nodes and as low a level as possible;
 *                         'level' bounds how far a job may spread:
 *     GS_LOCALITY_STRICT  a job that fits one node gets one node; a larger
 *                         job gets whole idle nodes plus at most one partly
 *                         used node, all under one rack (Tiresias "yarn",
 *                         Philly's strict level);
 *     GS_LOCALITY_RACK    any nodes under one rack, fewest nodes first;
 *     GS_LOCALITY_ANY     any nodes of the cluster, fewest nodes first.
 *
 * Node choice among equals: GS_FIT_FIRST takes the lowest-index node (as
 * YARN and the Tiresias simulator do), GS_FIT_BEST the node with the fewest
 * free GPUs that still fits (less fragmentation).  Ties always go to the
 * lowest index, so placement is deterministic.
 *
 * Cost: O(depth x fanout) per node visited; subtrees without enough free
 * GPUs are skipped using the per-cell aggregates, never scanned.
 */
#ifndef GSCHED_PLACEMENT_H
#define GSCHED_PLACEMENT_H

#include <stddef.h>

#include "cluster.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_place_mode { GS_PLACE_COUNT = 0, GS_PLACE_CONSOLIDATE = 1 } gs_place_mode;
typedef enum gs_locality {
    GS_LOCALITY_STRICT = 0,
    GS_LOCALITY_RACK = 1,
    GS_LOCALITY_ANY = 2
} gs_locality;
typedef enum gs_fit { GS_FIT_FIRST = 0, GS_FIT_BEST = 1 } gs_fit;

const char *gs_place_mode_name(gs_place_mode m);
int gs_place_mode_parse(const char *s); /* -1 if unknown */

typedef struct gs_place_req {
    int ntasks;          /* >= 1 */
    int gpus_per_task;   /* >= 1 */
    int gpu_type;        /* -1 = any */
    int cpus_per_task;   /* 0 = not checked */
    int mem_mb_per_task; /* 0 = not checked */
    gs_place_mode mode;
    gs_locality level; /* CONSOLIDATE only */
    gs_fit fit;
    int scope; /* search only under this cell (0 = whole cluster) */
} gs_place_req;

/*
 * Find GPUs for the request.  On success writes ntasks*gpus_per_task GPU
 * indices to out (task by task, each task's GPUs on one node, ascending
 * within a task) and returns 0; GS_ENOFIT when nothing fits now; GS_EINVAL
 * for a malformed request.
 */
int gs_place_find(const gs_cluster *c, const gs_place_req *r, int *out);

/*
 * Could the request fit an empty, healthy cluster at all?  Returns 0, or
 * GS_ENEVER with a human-readable reason in 'why' (e.g. "needs 512 GPUs of
 * type V100, the cluster has 256").
 */
int gs_place_feasible(const gs_cluster *c, const gs_place_req *r, char *why, size_t cap);

/*
 * mostfree: the placement of the Pollux artifact's rigid baselines (Tiresias+TunedJobs,
 * Optimus; src/core/util.c): take the node with the most free GPUs (the lowest index on ties), as
 * many whole tasks of 'gpt' GPUs as it has room for up to what is still needed, and repeat.  GPUs
 * of a node are taken lowest local index first; out[] lists the n GPUs in the order taken, so the
 * node order of the job's placement is the artifact's.  Only free, healthy GPUs of type
 * 'gpu_type' (-1 = any) count.  Returns 0, or GS_ENOFIT when they cannot hold the n GPUs
 * (out[] is then meaningless; nothing is allocated either way).
 */
int gs_mostfree_place(const gs_cluster *c, int n, int gpt, int gpu_type, int *out);

#ifdef __cplusplus
}
#endif
#endif
