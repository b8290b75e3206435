/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cudackpt.c - the CUDA driver's process checkpoint API, loaded at run time.
 *
 * libcuda.so.1 comes with the NVIDIA driver; gsched has no build dependency
 * on it: the few functions and argument structures used are declared here
 * with the layouts of NVIDIA's driver API documentation and looked up with
 * dlsym.  A driver without cuCheckpointProcess* (older than the API) gives
 * GS_ENOENT at open, so callers fall back to SIGSTOP.
 *
 * Operations on a list of pids (one job's CUDA processes):
 *   suspend = lock all (timeout each) -> checkpoint all; all or nothing:
 *             a failure rolls back (restore + unlock the checkpointed, unlock
 *             the locked), so the job is left running as it was.
 *   resume  = restore all (with GPU pairs when remapped) -> unlock all.
 * Remaps name GPUs by local index in PCI bus order (NVML's numbering); the
 * driver wants UUIDs: at open the CUDA devices are listed with their PCI bus
 * ids and UUIDs and sorted by bus id (CUDA's own ordinal order may differ).
 *
 * Invariants: argument structures are 64 bytes, zeroed but for the fields
 * set (checked at compile time); nothing is done when the arguments are
 * invalid; every failure names the step, the pid and the driver's error;
 * the library is opened RTLD_NODELETE (libcuda keeps threads after cuInit
 * and is never unloaded), the handle is released by gsd_cuda_close.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudackpt.h"
#include "gsched/error.h"

typedef int cu_result; /* CUresult: 0 = CUDA_SUCCESS */
typedef int cu_device; /* CUdevice: an ordinal */
typedef struct cu_uuid {
    unsigned char bytes[16];
} cu_uuid;
typedef struct cu_lock_args { /* CUcheckpointLockArgs */
    unsigned timeout_ms;      /* 0: no timeout */
    unsigned reserved0;
    uint64_t reserved1[7];
} cu_lock_args;
typedef struct cu_zero_args { /* CUcheckpointCheckpointArgs, CUcheckpointUnlockArgs */
    uint64_t reserved[8];
} cu_zero_args;
typedef struct cu_gpu_pair { /* CUcheckpointGpuPair */
    cu_uuid old_uuid, new_uuid;
} cu_gpu_pair;
typedef struct cu_restore_args { /* CUcheckpointRestoreArgs */
    cu_gpu_pair *pairs;
    unsigned npairs;
    unsigned char reserved[64 - sizeof(void *) - sizeof(unsigned)];
} cu_restore_args;

_Static_assert(sizeof(cu_lock_args) == 64, "CUcheckpointLockArgs is 64 bytes");
_Static_assert(sizeof(cu_zero_args) == 64, "CUcheckpoint*Args are 64 bytes");
_Static_assert(sizeof(cu_restore_args) == 64, "CUcheckpointRestoreArgs is 64 bytes");
_Static_assert(sizeof(cu_gpu_pair) == 32, "CUcheckpointGpuPair is two 16-byte UUIDs");

#define REMAP_VERSION 12090 /* restore onto other GPUs: CUDA 12.9 */
#define MAX_GPUS      64

struct gsd_cuda {
    void *h;
    int version;
    cu_result (*init)(unsigned);
    cu_result (*lock)(int, cu_lock_args *);
    cu_result (*checkpoint)(int, cu_zero_args *);
    cu_result (*restore)(int, cu_restore_args *);
    cu_result (*unlock)(int, cu_zero_args *);
    cu_result (*getstate)(int, int *);
    cu_result (*errstr)(cu_result, const char **);
    cu_result (*errname)(cu_result, const char **);
    int ngpus;              /* GPUs in PCI bus order, 0: unknown (no remaps) */
    cu_uuid uuid[MAX_GPUS]; /* uuid[i]: local GPU i (the i-th by PCI bus id) */
};

static void setwhy(char *why, size_t cap, const char *fmt, ...)
{
    if (!why || !cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
}

static int64_t mono_usec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* "CUDA_ERROR_UNKNOWN: unknown error" (or "CUDA error 999" when the driver cannot name it). */
static void cu_err(const gsd_cuda *c, cu_result e, char *out, size_t cap)
{
    const char *name = NULL, *text = NULL;
    if (c->errname && c->errname(e, &name) != 0) name = NULL;
    if (c->errstr && c->errstr(e, &text) != 0) text = NULL;
    if (name && text)
        snprintf(out, cap, "%s: %s", name, text);
    else if (name || text)
        snprintf(out, cap, "%s (%d)", name ? name : text, e);
    else
        snprintf(out, cap, "CUDA error %d", e);
}

/* Parse "DDDD:BB:DD.F" (hex) into one sortable number; -1 if it is not one. */
static long long busid_key(const char *s)
{
    unsigned dom, bus, dev, fn;
    char tail;
    if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4) return -1;
    if (bus > 0xff || dev > 0x1f || fn > 7) return -1;
    return ((long long)dom << 16) | (bus << 8) | (dev << 3) | fn;
}

/* List the GPUs by PCI bus id; leaves c->ngpus 0 (no remaps) if any step is missing or fails. */
static void list_gpus(gsd_cuda *c)
{
    cu_result (*count)(int *);
    cu_result (*get)(cu_device *, int);
    cu_result (*busid)(char *, int, cu_device);
    cu_result (*uuid)(cu_uuid *, cu_device);
    *(void **)&count = dlsym(c->h, "cuDeviceGetCount");
    *(void **)&get = dlsym(c->h, "cuDeviceGet");
    *(void **)&busid = dlsym(c->h, "cuDeviceGetPCIBusId");
    *(void **)&uuid = dlsym(c->h, "cuDeviceGetUuid_v2");
    if (!uuid) *(void **)&uuid = dlsym(c->h, "cuDeviceGetUuid");
    int n = 0;
    if (!count || !get || !busid || !uuid || count(&n) != 0 || n <= 0 || n > MAX_GPUS) return;
    long long key[MAX_GPUS];
    for (int i = 0; i < n; i++) {
        cu_device d;
        char b[64] = "";
        if (get(&d, i) != 0 || busid(b, (int)sizeof b, d) != 0 || uuid(&c->uuid[i], d) != 0) return;
        key[i] = busid_key(b); /* "0000:3b:00.0" (NVML writes 8 domain digits: same key) */
        if (key[i] < 0) return;
    }
    for (int i = 1; i < n; i++) /* insertion sort by bus id (n <= 64) */
        for (int j = i; j > 0 && key[j - 1] > key[j]; j--) {
            long long k = key[j];
            key[j] = key[j - 1];
            key[j - 1] = k;
            cu_uuid u = c->uuid[j];
            c->uuid[j] = c->uuid[j - 1];
            c->uuid[j - 1] = u;
        }
    for (int i = 1; i < n; i++)
        if (key[i] == key[i - 1]) return; /* two GPUs on one bus id: not a list to trust */
    c->ngpus = n;
}

int gsd_cuda_open(const char *lib, gsd_cuda **out, char *why, size_t cap)
{
    if (!out) return GS_EINVAL;
    *out = NULL;
    setwhy(why, cap, "%s", "");
    if (!lib || !*lib) lib = "libcuda.so.1";
    dlerror();
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        const char *e = dlerror();
        setwhy(why, cap, "CUDA driver library not available (%s)", e ? e : lib);
        return GS_ENOENT;
    }
    gsd_cuda *c = calloc(1, sizeof *c);
    if (!c) {
        dlclose(h);
        setwhy(why, cap, "out of memory");
        return GS_ENOMEM;
    }
    c->h = h;
    cu_result (*getversion)(int *);
    *(void **)&c->init = dlsym(h, "cuInit");
    *(void **)&getversion = dlsym(h, "cuDriverGetVersion");
    *(void **)&c->errstr = dlsym(h, "cuGetErrorString");
    *(void **)&c->errname = dlsym(h, "cuGetErrorName");
    if (!c->init || !getversion) {
        setwhy(why, cap, "%s is not a CUDA driver library (no cuInit/cuDriverGetVersion)", lib);
        gsd_cuda_close(c);
        return GS_ENOENT;
    }
    if (getversion(&c->version) != 0) c->version = 0;
    static const char *const names[] = {"cuCheckpointProcessLock", "cuCheckpointProcessCheckpoint",
                                        "cuCheckpointProcessRestore", "cuCheckpointProcessUnlock",
                                        "cuCheckpointProcessGetState"};
    void **slots[] = {(void **)&c->lock, (void **)&c->checkpoint, (void **)&c->restore,
                      (void **)&c->unlock, (void **)&c->getstate};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *slots[i] = dlsym(h, names[i]);
        if (!*slots[i]) {
            setwhy(why, cap,
                   "the CUDA driver (version %d.%d) has no checkpoint API (%s missing; a newer "
                   "driver is needed)",
                   c->version / 1000, c->version % 1000 / 10, names[i]);
            gsd_cuda_close(c);
            return GS_ENOENT;
        }
    }
    cu_result e = c->init(0);
    if (e != 0) {
        char t[160];
        cu_err(c, e, t, sizeof t);
        setwhy(why, cap, "cuInit failed: %s", t);
        gsd_cuda_close(c);
        return GS_EIO;
    }
    list_gpus(c);
    *out = c;
    return 0;
}

void gsd_cuda_close(gsd_cuda *c)
{
    if (!c) return;
    if (c->h) dlclose(c->h); /* RTLD_NODELETE: the driver itself stays mapped */
    free(c);
}

int gsd_cuda_version(const gsd_cuda *c)
{
    return c ? c->version : 0;
}

int gsd_cuda_can_remap(const gsd_cuda *c)
{
    return c && c->version >= REMAP_VERSION && c->ngpus > 0;
}

int gsd_cuda_ngpus(const gsd_cuda *c)
{
    return c ? c->ngpus : 0;
}

int gsd_cuda_state(gsd_cuda *c, int pid)
{
    int st = -1;
    if (!c || pid <= 0 || c->getstate(pid, &st) != 0 || st < 0) return GSD_CUDA_NONE;
    return st;
}

const char *gsd_cuda_state_name(int st)
{
    static const char *const names[] = {"running", "locked",        "checkpointed",
                                        "failed",  "checkpointing", "restoring"};
    if (st == GSD_CUDA_NONE) return "none";
    if (st >= 0 && st < (int)(sizeof names / sizeof names[0])) return names[st];
    return "unknown";
}

/* Append "STEP of pid PID: ERROR" to r->msg (after "; " when it holds something already). */
static void fail_msg(const gsd_cuda *c, gsd_cuda_result *r, const char *step, int pid, cu_result e)
{
    char t[160];
    cu_err(c, e, t, sizeof t);
    size_t len = strlen(r->msg);
    snprintf(r->msg + len, sizeof r->msg - len, "%s%s of pid %d: %s", len ? "; " : "", step, pid,
             t);
}

static cu_result do_lock(gsd_cuda *c, int pid, unsigned timeout_ms)
{
    cu_lock_args a;
    memset(&a, 0, sizeof a);
    a.timeout_ms = timeout_ms;
    return c->lock(pid, &a);
}

static cu_result do_checkpoint(gsd_cuda *c, int pid)
{
    cu_zero_args a;
    memset(&a, 0, sizeof a);
    return c->checkpoint(pid, &a);
}

static cu_result do_restore(gsd_cuda *c, int pid, cu_gpu_pair *pairs, unsigned npairs)
{
    cu_restore_args a;
    memset(&a, 0, sizeof a);
    a.pairs = npairs ? pairs : NULL;
    a.npairs = npairs;
    return c->restore(pid, &a);
}

static cu_result do_unlock(gsd_cuda *c, int pid)
{
    cu_zero_args a;
    memset(&a, 0, sizeof a);
    return c->unlock(pid, &a);
}

static void result_init(gsd_cuda_result *r)
{
    memset(r, 0, sizeof *r);
}

static int check_pids(const int *pids, size_t n, gsd_cuda_result *r)
{
    if (n && !pids) return GS_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (pids[i] <= 0) {
            snprintf(r->msg, sizeof r->msg, "invalid pid %d", pids[i]);
            return GS_EINVAL;
        }
    return 0;
}

int gsd_cuda_suspend(gsd_cuda *c, const int *pids, size_t n, unsigned timeout_ms,
                     gsd_cuda_result *r)
{
    gsd_cuda_result dummy;
    if (!r) r = &dummy;
    result_init(r);
    if (!c) return GS_EINVAL;
    int rc = check_pids(pids, n, r);
    if (rc) return rc;
    int64_t t0 = mono_usec();
    size_t locked = 0, done = 0;
    cu_result e = 0;
    for (; locked < n; locked++) {
        e = do_lock(c, pids[locked], timeout_ms);
        if (e != 0) break;
    }
    int64_t t1 = mono_usec();
    r->phase_usec[0] = t1 - t0;
    if (e != 0) {
        r->failed_pid = pids[locked];
        fail_msg(c, r, "lock", pids[locked], e);
    } else {
        for (; done < n; done++) {
            e = do_checkpoint(c, pids[done]);
            if (e != 0) break;
        }
        r->phase_usec[1] = mono_usec() - t1;
        if (e != 0) {
            r->failed_pid = pids[done];
            fail_msg(c, r, "checkpoint", pids[done], e);
        }
    }
    if (e == 0) {
        r->nproc = (int)n;
        r->usec = mono_usec() - t0;
        return 0;
    }
    /* roll back: restore the checkpointed, then unlock every locked pid (the failed checkpoint's
     * too: the driver leaves it locked) */
    for (size_t i = 0; i < done; i++) {
        cu_result f = do_restore(c, pids[i], NULL, 0);
        if (f != 0) fail_msg(c, r, "rollback: restore", pids[i], f);
    }
    for (size_t i = 0; i < locked; i++) {
        cu_result f = do_unlock(c, pids[i]);
        if (f != 0) fail_msg(c, r, "rollback: unlock", pids[i], f);
    }
    r->usec = mono_usec() - t0;
    return GS_EIO;
}

/* Unlock every pid (each one even after a failure: none is left locked that could be
 * unlocked); failures go to r (the first failing pid, a message each).  1 if any failed. */
static int unlock_all(gsd_cuda *c, const int *pids, size_t n, gsd_cuda_result *r)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        cu_result f = do_unlock(c, pids[i]);
        if (f != 0) {
            if (!r->failed_pid) r->failed_pid = pids[i];
            fail_msg(c, r, "unlock", pids[i], f);
            failed = 1;
        }
    }
    return failed;
}

int gsd_cuda_resume(gsd_cuda *c, const int *pids, size_t n, const int *from, const int *to,
                    size_t nremap, gsd_cuda_result *r)
{
    gsd_cuda_result dummy;
    if (!r) r = &dummy;
    result_init(r);
    if (!c) return GS_EINVAL;
    int rc = check_pids(pids, n, r);
    if (rc) return rc;
    cu_gpu_pair pairs[MAX_GPUS];
    if (nremap > 0) {
        if (!from || !to) return GS_EINVAL;
        if (!gsd_cuda_can_remap(c)) {
            if (c->version < REMAP_VERSION)
                snprintf(r->msg, sizeof r->msg,
                         "restore onto other GPUs needs CUDA driver 12.9 or newer (this is %d.%d)",
                         c->version / 1000, c->version % 1000 / 10);
            else
                snprintf(r->msg, sizeof r->msg,
                         "restore onto other GPUs: this machine's GPU list (UUIDs by PCI bus id) "
                         "is not known");
            return GS_EUNSUPPORTED;
        }
        if (nremap > (size_t)c->ngpus) {
            snprintf(r->msg, sizeof r->msg, "%zu GPU pairs for %d GPUs", nremap, c->ngpus);
            return GS_ERANGE;
        }
        for (size_t i = 0; i < nremap; i++) {
            if (from[i] < 0 || from[i] >= c->ngpus || to[i] < 0 || to[i] >= c->ngpus) {
                snprintf(r->msg, sizeof r->msg, "GPU %d -> %d: this machine has GPUs 0-%d", from[i],
                         to[i], c->ngpus - 1);
                return GS_ERANGE;
            }
            for (size_t j = 0; j < i; j++)
                if (from[j] == from[i] || to[j] == to[i]) {
                    snprintf(r->msg, sizeof r->msg, "GPU %d named twice in the remap",
                             from[j] == from[i] ? from[i] : to[i]);
                    return GS_EINVAL;
                }
            pairs[i].old_uuid = c->uuid[from[i]];
            pairs[i].new_uuid = c->uuid[to[i]];
        }
    }
    int64_t t0 = mono_usec();
    size_t restored = 0;
    cu_result e = 0;
    for (; restored < n; restored++) {
        e = do_restore(c, pids[restored], pairs, (unsigned)nremap);
        if (e != 0) break;
    }
    int64_t t1 = mono_usec();
    r->phase_usec[0] = t1 - t0;
    if (e != 0) {
        r->failed_pid = pids[restored];
        fail_msg(c, r, "restore", pids[restored], e);
    }
    int unlock_failed = unlock_all(c, pids, restored, r);
    r->phase_usec[1] = mono_usec() - t1;
    r->usec = mono_usec() - t0;
    r->nproc = (int)restored;
    return e != 0 || unlock_failed ? GS_EIO : 0;
}

int gsd_cuda_unlock(gsd_cuda *c, const int *pids, size_t n, gsd_cuda_result *r)
{
    gsd_cuda_result dummy;
    if (!r) r = &dummy;
    result_init(r);
    if (!c) return GS_EINVAL;
    int rc = check_pids(pids, n, r);
    if (rc) return rc;
    int64_t t0 = mono_usec();
    int failed = unlock_all(c, pids, n, r);
    r->phase_usec[1] = mono_usec() - t0;
    r->usec = r->phase_usec[1];
    r->nproc = (int)n;
    return failed ? GS_EIO : 0;
}
