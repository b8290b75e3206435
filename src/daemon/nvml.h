/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvml.h - GPU discovery through NVML (nvml.c): the cluster `gsched serve`
 * runs on when no --cluster is given; and the readings the GPU health watch
 * (gpuhealth.c) and `gsched gpus` take from it.  Independent of the executor.
 */
#ifndef GSCHED_DAEMON_NVML_H
#define GSCHED_DAEMON_NVML_H

#include "daemon.h" /* gsd_gpu_reading */
#include "gsched/gsched.h"

/*
 * Build a one-node cluster of the GPUs NVML reports (libnvidia-ml.so.1 is
 * loaded with dlopen; no build dependency).  GS_ENOENT when NVML or GPUs
 * are absent (message in d), so callers can fall back to a declared
 * cluster.  The GPU type is the model name without vendor words ("H100").
 */
int gsd_nvml_cluster(gs_cluster **out, gs_diag *d);

/*
 * An open NVML session for health readings (one thread at a time).  gsd_nvml_open loads the
 * library, initialises NVML and registers every GPU for critical Xid events.  0; GS_ENOENT
 * (no library, init failed, no GPUs) or GS_EUNSUPPORTED (the library lacks the health
 * functions: an older driver; the session is not opened) with the reason in why.
 */
typedef struct gsd_nvml gsd_nvml;
int gsd_nvml_open(gsd_nvml **out, char *why, size_t cap);
void gsd_nvml_close(gsd_nvml *n); /* NULL is fine */
unsigned gsd_nvml_count(const gsd_nvml *n);
/*
 * Read GPUs [0, n) into r[0..n): lost, ECC, retirement, remapping and the display readings
 * of each, and the Xid events that arrived since the last call (nvmlEventSetWait_v2 with a
 * 0 ms timeout until none is left, at most 256 a call), counted on their GPU.
 */
void gsd_nvml_read(gsd_nvml *s, gsd_gpu_reading *r, unsigned n);
/* The name of a health-critical Xid (one that says the GPU itself is faulty, not a program:
 * 79 "GPU has fallen off the bus"), NULL for any other code. */
const char *gsd_xid_critical(int code);

#endif
