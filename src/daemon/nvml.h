/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvml.h - GPU discovery through NVML (nvml.c): the cluster `gsched serve`
 * runs on when no --cluster is given.  Independent of the executor.
 */
#ifndef GSCHED_DAEMON_NVML_H
#define GSCHED_DAEMON_NVML_H

#include "gsched/gsched.h"

/*
 * Build a one-node cluster of the GPUs NVML reports (libnvidia-ml.so.1 is
 * loaded with dlopen; no build dependency).  GS_ENOENT when NVML or GPUs
 * are absent (message in d), so callers can fall back to a declared
 * cluster.  The GPU type is the model name without vendor words ("H100").
 */
int gsd_nvml_cluster(gs_cluster **out, gs_diag *d);

#endif
