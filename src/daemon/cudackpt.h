/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cudackpt.h - the CUDA driver's process checkpoint API (cudackpt.c), loaded
 * at run time: lock + checkpoint the CUDA processes of a job (their device
 * memory goes to host memory and their GPUs' memory is freed), restore them,
 * on the same GPUs or on other GPUs of this machine, and unlock them.  Used
 * by the local executor's checkpoint-based suspend and by `gsched cuda-ckpt`.
 *
 * A gsd_cuda is used by one thread at a time (the executor's worker).  The
 * functions never block longer than the driver does; every result says what
 * failed in words (msg) and on which pid.
 */
#ifndef GSCHED_DAEMON_CUDACKPT_H
#define GSCHED_DAEMON_CUDACKPT_H

#include <stddef.h>
#include <stdint.h>

typedef struct gsd_cuda gsd_cuda;

enum {
    GSD_CUDA_NONE = -1,
    GSD_CUDA_RUNNING = 0,
    GSD_CUDA_LOCKED = 1,
    GSD_CUDA_CHECKPOINTED = 2,
    GSD_CUDA_FAILED = 3
}; /* other driver states map to their number (newer drivers: 4 checkpointing, 5 restoring) */

/* dlopen libcuda.so.1 (name or path 'lib', NULL = "libcuda.so.1"), dlsym, cuInit(0), and the
 * list of this machine's GPUs in PCI bus order (for remaps).  0, or GS_ENOENT (no library / no
 * checkpoint API in it: why says which) / GS_EIO (cuInit failed) / GS_ENOMEM, with the reason
 * in why (may be NULL).  The caller's CUDA_VISIBLE_DEVICES must not hide GPUs that remaps
 * name (the daemon and the CLI do not set it). */
int gsd_cuda_open(const char *lib, gsd_cuda **out, char *why, size_t cap);
void gsd_cuda_close(gsd_cuda *c);
int gsd_cuda_version(const gsd_cuda *c);   /* cuDriverGetVersion: 13000 = 13.0 */
int gsd_cuda_can_remap(const gsd_cuda *c); /* restore can move GPUs (driver >= 12.9, UUIDs known) */
int gsd_cuda_ngpus(const gsd_cuda *c);     /* GPUs known for remaps (0 when unknown) */
int gsd_cuda_state(gsd_cuda *c, int pid);  /* GSD_CUDA_* ; NONE: no CUDA process (or gone) */
const char *gsd_cuda_state_name(int st);   /* "running", ..., "none"; "unknown" otherwise */

typedef struct gsd_cuda_result {
    int64_t usec;          /* wall time of the whole operation */
    int nproc;             /* CUDA processes acted on */
    int failed_pid;        /* the pid a step failed on, 0 */
    char msg[256];         /* what failed: "checkpoint of pid 123: CUDA_ERROR_...: text", or "" */
    int64_t phase_usec[2]; /* suspend: lock, checkpoint; resume: restore, unlock (all pids) */
} gsd_cuda_result;

/* Lock every pid (timeout_ms each; 0 = wait as long as it takes) then checkpoint every pid: all
 * or nothing.  On failure roll back what was done (restore + unlock the checkpointed, unlock the
 * locked) and return GS_EIO with msg (rollback failures are appended to it).  n = 0: nothing
 * to do, 0.  GS_EINVAL: a pid <= 0. */
int gsd_cuda_suspend(gsd_cuda *c, const int *pids, size_t n, unsigned timeout_ms,
                     gsd_cuda_result *r);

/* Restore every pid, onto other GPUs when nremap > 0 (local GPU indices in PCI bus order, as
 * NVML numbers them and as tasks see them with CUDA_DEVICE_ORDER=PCI_BUS_ID: from[i] -> to[i],
 * covering every GPU the job used; from[i] == to[i] keeps a GPU), then unlock every pid.
 * GS_EIO with msg on failure: the restore stops at the failing pid, what was restored stays
 * restored and is unlocked (so the caller's SIGTERM can let it save a checkpoint); an unlock
 * failure does not stop the other unlocks.  The caller stops the job.
 * GS_EUNSUPPORTED: remap asked but not possible (driver or GPU list).  GS_ERANGE: a GPU index
 * not on this machine; GS_EINVAL: a pid <= 0, a GPU named twice on one side.  Nothing is done
 * on these three. */
int gsd_cuda_resume(gsd_cuda *c, const int *pids, size_t n, const int *from, const int *to,
                    size_t nremap, gsd_cuda_result *r);

/* Unlock every pid (locked, not checkpointed: a checkpoint cut short, e.g. by a daemon that died
 * between the lock and the checkpoint).  GS_EIO with msg when one failed (the others are still
 * unlocked); GS_EINVAL: a pid <= 0. */
int gsd_cuda_unlock(gsd_cuda *c, const int *pids, size_t n, gsd_cuda_result *r);

#endif
