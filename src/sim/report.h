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

/* Write the report for n finished runs.  Returns 0 or GS_EIO / GS_ENOMEM. */
int gs_write_report(const char *path, gs_sim_result *const *rs, size_t n, const gs_run_info *info);

#endif
