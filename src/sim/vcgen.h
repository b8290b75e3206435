/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcgen.h - HiveD configs for a trace's virtual clusters (see vcgen.c). */
#ifndef GSCHED_VCGEN_H
#define GSCHED_VCGEN_H

#include <stdio.h>

#include "sim.h"

typedef struct gs_vc_nodes {
    const char *vc;
    int nodes;
} gs_vc_nodes;

typedef struct gs_vcgen_opts {
    int nodes;                   /* nodes to share out (proportional mode) */
    int gpus_per_node;           /* default 8 */
    int nodes_per_rack;          /* default 32 */
    const char *gpu_type;        /* default "GPU" */
    const gs_vc_nodes *vc_nodes; /* sizes from a CSV instead (NULL: proportional) */
    size_t nvc_nodes;
} gs_vcgen_opts;

/* Write a HiveD config for the VCs of trace t to 'out'. */
int gs_vcgen(const gs_trace *t, const gs_vcgen_opts *o, FILE *out, gs_diag *d);

/*
 * Write trace t in gsched's native CSV with node-affinity task shapes: a job
 * of g GPUs in 1-GPU tasks (Philly, Tiresias) becomes the fewest equal tasks
 * of at most gpus_per_node GPUs each (8 -> 1x8, 16 -> 2x8, 12 -> 2x6), each
 * on one node, as a HiveD job asks for them; jobs that already have tasks of
 * several GPUs keep their shape.  Returns 0 or GS_EIO.
 */
int gs_vcgen_write_trace(const gs_trace *t, int gpus_per_node, FILE *out, gs_diag *d);

#endif
