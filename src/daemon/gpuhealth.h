/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpuhealth.h - the daemon's GPU health watch (gpuhealth.c; docs/daemon.md
 * "GPU health"): a thread of its own reads NVML (nvml.c) every interval and
 * judges each GPU; the scheduler thread takes the verdicts and applies the
 * changes (the engine's per-GPU bad mark, preemptions, node events).
 */
#ifndef GSCHED_DAEMON_GPUHEALTH_H
#define GSCHED_DAEMON_GPUHEALTH_H

#include <stdint.h>

#include "daemon.h"

/* One watched GPU: its last reading and the verdict the rules give (gsd_gpuh_judge). */
typedef struct gsd_gpuh_gpu {
    gsd_gpu_reading r; /* the last reading */
    int bad;           /* unhealthy */
    char why[256];     /* why ("Xid 79: GPU has fallen off the bus"), "" when healthy */
    gs_time since;     /* when 'bad' last changed (0: never) */
    int64_t ecc_base;  /* the uncorrected ECC count at the last healthy reading (-1: none yet) */
    int64_t ecc_last;  /* the last count NVML gave (-1: none yet); judged while it says none */
    gs_time xid_until; /* unhealthy until then: a critical Xid's hold (0: none) */
    int xid_code;      /* that Xid */
    int64_t xid_total; /* Xid events seen since the watch started (all codes) */
    int xid_seen;      /* the last Xid seen (any code; 0 none) */
    int64_t readings;  /* readings taken */
} gsd_gpuh_gpu;

/*
 * The rules, applied to reading r taken at 'now' (t holds the GPU's history; zero it, with
 * ecc_base and ecc_last -1, before the first reading).  Unhealthy while: lost; its uncorrected ECC
 * count is above the count of its last healthy reading (a lower count - the driver was reloaded or
 * the GPU reset - becomes the new base; a reading without a count is judged on the last count);
 * pages pending retirement; row remapping pending or failed; or within 'hold' of its last critical
 * Xid (gsd_xid_critical).  Healthy again when none holds.  Returns 1 when the verdict changed.
 */
int gsd_gpuh_judge(gsd_gpuh_gpu *t, const gsd_gpu_reading *r, gs_time now, gs_time hold);

typedef struct gsd_gpuh gsd_gpuh;
typedef struct gsd_gpuh_conf {
    gs_time interval;       /* between readings */
    gs_time hold;           /* a critical Xid's hold */
    void (*wake)(void *ud); /* a new reading is ready (any thread may call it) */
    void *wake_ud;
} gsd_gpuh_conf;

/*
 * Open NVML (gsd_nvml_open) and start the watch thread; its first reading follows at once.
 * 0; GS_ENOENT / GS_EUNSUPPORTED with the reason in why (no NVML, no GPUs, no health
 * functions); GS_ENOMEM / GS_EIO (no thread).
 */
int gsd_gpuh_start(const gsd_gpuh_conf *conf, gsd_gpuh **out, char *why, size_t cap);
/* Stop the thread, close NVML, free (NULL is fine). */
void gsd_gpuh_stop(gsd_gpuh *h);
unsigned gsd_gpuh_count(const gsd_gpuh *h); /* the GPUs NVML sees */
/* The latest verdicts into out[0..count) when there is a reading newer than *gen (then *gen
 * is updated and 1 returned), else 0. */
int gsd_gpuh_take(gsd_gpuh *h, uint64_t *gen, gsd_gpuh_gpu *out);

#endif
