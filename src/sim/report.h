/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - the self-contained HTML comparison report (DIR/report.html).
 *
 * One file, no network access: inline CSS and SVG plots drawn by our own
 * small SVG writer (no JavaScript needed to read it).  Contents:
 *   - header: run parameters (cluster, trace, placement, seed, --set
 *     parameters) and input checksums (SHA-256);
 *   - per-policy table (jobs done/rejected, avg/median/p95/p99 JCT, avg
 *     queue, makespan, utilization, preemptions, events);
 *   - JCT CDF with a logarithmic x axis, queuing-delay CDF, allocated GPUs
 *     over time and pending jobs over time, one line per policy.
 * Output is deterministic: the same results give a byte-identical file
 * (the wall-clock column is excluded).
 */
#ifndef GSCHED_REPORT_H
#define GSCHED_REPORT_H

#include <stddef.h>

#include "sim.h"

/* Write the report for n finished runs.  Returns 0 or GS_EIO / GS_ENOMEM.  Every figure is
 * also written beside it as an SVG file (<name>-NN-<figure>.svg, linked under the figure). */
int gs_write_report(const char *path, gs_sim_result *const *rs, size_t n, const gs_run_info *info);

/*
 * Runs over seeds and sweep values (experiments.md): the aggregates (means and 95 %
 * confidence half-widths, aggregate.c) drawn with error bars - per policy for seeds, against
 * the swept value for a sweep - beside the first run's distributions and time series (rs:
 * one run per policy, the first value's first seed).
 */
typedef struct gs_report_agg {
    const gs_agg *agg;
    const char *sweep_key;     /* NULL: no sweep */
    const char *const *values; /* agg->nv swept values */
    uint64_t seed;             /* the first seed */
} gs_report_agg;

int gs_write_report_ex(const char *path, gs_sim_result *const *rs, size_t n,
                       const gs_run_info *info, const gs_report_agg *ra);

#endif
