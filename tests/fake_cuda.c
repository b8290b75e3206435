/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_cuda.c - a stand-in for the CUDA driver library libcuda.so.1 (built
 * as that file name in a directory of its own: tests/fake-cuda/), so the
 * tests exercise src/daemon/cudackpt.c's checkpoint calls through dlopen on
 * machines without NVIDIA GPUs.  Built a second time with FAKE_CUDA_OLD
 * (tests/fake-cuda-old/): a driver before the checkpoint API, exporting only
 * cuInit, cuDriverGetVersion and cuGetErrorString.  Only the functions
 * gsched looks up exist, with the driver API's C signatures.
 *
 * Behaviour, from the environment of the process that loads it:
 *   GSCHED_FAKE_CUDA_DIR=DIR  (unset: no CUDA process exists)
 *     DIR/proc.PID   PID is a CUDA process iff this exists; line 1 is its state word
 *                    (running|locked|checkpointed|failed|checkpointing|restoring), kept up to
 *                    date by the fake; an optional line "gpu=N" names the GPU it uses (by
 *                    index in PCI bus order), updated by remaps.  A process registers itself:
 *                    echo running > $DIR/proc.$$
 *     DIR/calls.log  every call appended, one line each (one write, O_APPEND): "init",
 *                    "lock PID TIMEOUT_MS", "checkpoint PID", "restore PID" or
 *                    "restore PID pairs OLD>NEW,..." (GPU indices), "unlock PID", "state PID"
 *     DIR/fail       lines "STEP" or "STEP PID" (STEP: init lock checkpoint restore unlock):
 *                    that call fails (lock: CUDA_ERROR_TIMEOUT; others CUDA_ERROR_UNKNOWN)
 *                    and leaves the state the driver would: a failed lock leaves it running,
 *                    a failed checkpoint or unlock leaves it locked, a failed restore leaves
 *                    it checkpointed
 *     DIR/delay_ms   each checkpoint and restore sleeps that many milliseconds first
 *   GSCHED_FAKE_CUDA_VERSION  cuDriverGetVersion (default 13000)
 *   GSCHED_FAKE_CUDA_GPUS     device count (default 8).  GPU k (PCI bus order) has PCI bus id
 *                    0000:(k+1 in hex):00.0 and a UUID whose last byte is k; CUDA ordinals
 *                    run in REVERSE bus order (ordinal 0 = the last GPU), as CUDA's default
 *                    "fastest first" order may differ from the bus order: a caller that does
 *                    not sort by bus id remaps the wrong GPUs.
 * States are checked as the driver does: lock needs running, checkpoint locked, restore
 * checkpointed, unlock locked (else CUDA_ERROR_ILLEGAL_STATE); a pid without a file is
 * CUDA_ERROR_NOT_FOUND; every call before cuInit is CUDA_ERROR_NOT_INITIALIZED.  A restore
 * with pairs must name the process's GPU (line gpu=) among the old ones (else
 * CUDA_ERROR_INVALID_VALUE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUuuid {
    unsigned char bytes[16];
} CUuuid;

enum {
    OK = 0,
    E_INVALID_VALUE = 1,
    E_NOT_INITIALIZED = 3,
    E_INVALID_DEVICE = 101,
    E_ILLEGAL_STATE = 401,
    E_NOT_FOUND = 500,
    E_TIMEOUT = 909,
    E_UNKNOWN = 999
};

CUresult cuInit(unsigned flags);
CUresult cuDriverGetVersion(int *v);
CUresult cuGetErrorString(CUresult e, const char **s);

static int inited;

static const char *err_text(CUresult e, int name)
{
    switch (e) {
    case OK: return name ? "CUDA_SUCCESS" : "no error";
    case E_INVALID_VALUE: return name ? "CUDA_ERROR_INVALID_VALUE" : "invalid argument";
    case E_NOT_INITIALIZED: return name ? "CUDA_ERROR_NOT_INITIALIZED" : "initialization error";
    case E_INVALID_DEVICE: return name ? "CUDA_ERROR_INVALID_DEVICE" : "invalid device ordinal";
    case E_ILLEGAL_STATE:
        return name ? "CUDA_ERROR_ILLEGAL_STATE" : "the operation is not permitted in this state";
    case E_NOT_FOUND: return name ? "CUDA_ERROR_NOT_FOUND" : "named symbol not found";
    case E_TIMEOUT: return name ? "CUDA_ERROR_TIMEOUT" : "wait operation timed out";
    case E_UNKNOWN: return name ? "CUDA_ERROR_UNKNOWN" : "unknown error";
    default: return NULL;
    }
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
    *s = err_text(e, 0);
    return *s ? OK : E_INVALID_VALUE;
}

static const char *dir(void)
{
    const char *d = getenv("GSCHED_FAKE_CUDA_DIR");
    return d && *d ? d : NULL;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    const char *d = dir();
    if (!d) return;
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/calls.log", d);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) < 0) { /* a test fixture: nothing more to do */
    }
    close(fd);
}

/* 1 when DIR/fail has a line "STEP" or "STEP PID" for this call. */
static int should_fail(const char *step, int pid)
{
    const char *d = dir();
    if (!d) return 0;
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s/fail", d);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int hit = 0;
    size_t sl = strlen(step);
    while (!hit && fgets(line, sizeof line, f)) {
        if (strncmp(line, step, sl) || (line[sl] && line[sl] != ' ' && line[sl] != '\n')) continue;
        char *p = line + sl;
        while (*p == ' ') p++;
        if (!*p || *p == '\n' || atoi(p) == pid) hit = 1;
    }
    fclose(f);
    return hit;
}

CUresult cuInit(unsigned flags)
{
    logf_("init");
    if (flags != 0) return E_INVALID_VALUE;
    if (should_fail("init", 0)) return E_UNKNOWN;
    inited = 1;
    return OK;
}

CUresult cuDriverGetVersion(int *v)
{
    if (!v) return E_INVALID_VALUE;
    const char *s = getenv("GSCHED_FAKE_CUDA_VERSION");
    *v = s && *s ? atoi(s) : 13000;
    return OK;
}

#ifndef FAKE_CUDA_OLD

CUresult cuGetErrorName(CUresult e, const char **s);
CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGet(CUdevice *d, int ordinal);
CUresult cuDeviceGetPCIBusId(char *buf, int len, CUdevice d);
CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d);
CUresult cuCheckpointProcessLock(int pid, void *args);
CUresult cuCheckpointProcessCheckpoint(int pid, void *args);
CUresult cuCheckpointProcessRestore(int pid, void *args);
CUresult cuCheckpointProcessUnlock(int pid, void *args);
CUresult cuCheckpointProcessGetState(int pid, int *state);
CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int *tid);

/* the documented argument layouts (64 bytes each) */
typedef struct lock_args {
    unsigned timeout_ms, reserved0;
    uint64_t reserved1[7];
} lock_args;
typedef struct pair {
    CUuuid old_uuid, new_uuid;
} pair;
typedef struct restore_args {
    pair *pairs;
    unsigned npairs;
    unsigned char reserved[64 - sizeof(void *) - sizeof(unsigned)];
} restore_args;

CUresult cuGetErrorName(CUresult e, const char **s)
{
    *s = err_text(e, 1);
    return *s ? OK : E_INVALID_VALUE;
}

static int ngpus(void)
{
    const char *s = getenv("GSCHED_FAKE_CUDA_GPUS");
    return s && *s ? atoi(s) : 8;
}

CUresult cuDeviceGetCount(int *n)
{
    if (!inited) return E_NOT_INITIALIZED;
    *n = ngpus();
    return OK;
}

/* The CUdevice value is the GPU's bus-order index k; ordinal i is GPU n-1-i. */
CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!inited) return E_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= ngpus()) return E_INVALID_DEVICE;
    *d = ngpus() - 1 - ordinal;
    return OK;
}

CUresult cuDeviceGetPCIBusId(char *buf, int len, CUdevice d)
{
    if (!inited) return E_NOT_INITIALIZED;
    if (d < 0 || d >= ngpus() || len < 13) return E_INVALID_VALUE;
    snprintf(buf, (size_t)len, "0000:%02X:00.0", d + 1);
    return OK;
}

CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    if (!inited) return E_NOT_INITIALIZED;
    if (d < 0 || d >= ngpus()) return E_INVALID_VALUE;
    static const unsigned char base[15] = {0x6a, 0x1f, 0xc0, 0xde, 0x00, 0x11, 0x47, 0x22,
                                           0x93, 0x5e, 0x0b, 0xad, 0xf0, 0x0d, 0x17};
    memcpy(u->bytes, base, 15);
    u->bytes[15] = (unsigned char)d;
    return OK;
}

static int uuid_index(const CUuuid *u)
{
    CUuuid ref;
    if (u->bytes[15] >= ngpus() || cuDeviceGetUuid_v2(&ref, u->bytes[15]) != OK ||
        memcmp(ref.bytes, u->bytes, 16))
        return -1;
    return u->bytes[15];
}

static const char *const words[] = {"running", "locked",        "checkpointed",
                                    "failed",  "checkpointing", "restoring"};

/* The process's state (0-5) and GPU (-1 if not given); E_NOT_FOUND when it is no CUDA process. */
static CUresult read_proc(int pid, int *st, int *gpu)
{
    const char *d = dir();
    if (!d || pid <= 0) return E_NOT_FOUND;
    char path[4096], line[128];
    snprintf(path, sizeof path, "%s/proc.%d", d, pid);
    FILE *f = fopen(path, "r");
    if (!f) return E_NOT_FOUND;
    *st = -1;
    *gpu = -1;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, " \r\n")] = '\0';
        for (int i = 0; i < (int)(sizeof words / sizeof words[0]); i++)
            if (!strcmp(line, words[i])) *st = i;
    }
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "gpu=", 4)) *gpu = atoi(line + 4);
    fclose(f);
    return *st < 0 ? E_UNKNOWN : OK;
}

static void write_proc(int pid, int st, int gpu)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/proc.%d", dir(), pid);
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "%s\n", words[st]);
    if (gpu >= 0) fprintf(f, "gpu=%d\n", gpu);
    if (fclose(f) == 0) rename(tmp, path);
}

static void delay(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/delay_ms", dir());
    FILE *f = fopen(path, "r");
    if (!f) return;
    long ms = 0;
    if (fscanf(f, "%ld", &ms) != 1) ms = 0;
    fclose(f);
    if (ms > 0) {
        struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
        while (nanosleep(&ts, &ts) && errno == EINTR) {
        }
    }
}

/* The common part of lock/checkpoint/restore/unlock: 'need' the state required, 'ok' the state
 * after success, 'bad' the state after an injected failure, 'ferr' its error. */
static CUresult step(const char *name, int pid, int need, int ok, int bad, CUresult ferr, int slow,
                     int newgpu)
{
    if (!inited) return E_NOT_INITIALIZED;
    int st, gpu;
    CUresult e = read_proc(pid, &st, &gpu);
    if (e) return e;
    if (st != need) return E_ILLEGAL_STATE;
    if (slow) delay();
    if (should_fail(name, pid)) {
        write_proc(pid, bad, gpu);
        return ferr;
    }
    write_proc(pid, ok, newgpu >= -1 ? newgpu : gpu);
    return OK;
}

CUresult cuCheckpointProcessLock(int pid, void *args)
{
    if (!args) return E_INVALID_VALUE;
    const lock_args *a = args;
    logf_("lock %d %u", pid, a->timeout_ms);
    for (int i = 0; i < 7; i++)
        if (a->reserved0 || a->reserved1[i]) return E_INVALID_VALUE;
    return step("lock", pid, 0, 1, 0, E_TIMEOUT, 0, -2);
}

static int zero64(const void *args)
{
    const unsigned char *p = args;
    for (int i = 0; args && i < 64; i++)
        if (p[i]) return 0;
    return 1;
}

CUresult cuCheckpointProcessCheckpoint(int pid, void *args)
{
    logf_("checkpoint %d", pid);
    if (!zero64(args)) return E_INVALID_VALUE;
    return step("checkpoint", pid, 1, 2, 1, E_UNKNOWN, 1, -2);
}

CUresult cuCheckpointProcessRestore(int pid, void *args)
{
    const restore_args *a = args;
    char line[1024];
    int n = snprintf(line, sizeof line, "restore %d", pid);
    int newgpu = -2, cur = -1, st;
    if (a && a->npairs) {
        n += snprintf(line + n, sizeof line - (size_t)n, " pairs ");
        for (unsigned i = 0; i < a->npairs && n < (int)sizeof line - 16; i++)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%d>%d", i ? "," : "",
                          uuid_index(&a->pairs[i].old_uuid), uuid_index(&a->pairs[i].new_uuid));
    }
    logf_("%s", line);
    if (a) {
        for (size_t i = 0; i < sizeof a->reserved; i++)
            if (a->reserved[i]) return E_INVALID_VALUE;
        if (a->npairs && !a->pairs) return E_INVALID_VALUE;
    }
    if (inited && a && a->npairs && read_proc(pid, &st, &cur) == OK) {
        int covered = cur < 0;
        for (unsigned i = 0; i < a->npairs; i++) {
            int o = uuid_index(&a->pairs[i].old_uuid), w = uuid_index(&a->pairs[i].new_uuid);
            if (o < 0 || w < 0) return E_INVALID_VALUE;
            if (o == cur) {
                covered = 1;
                newgpu = w;
            }
        }
        if (!covered) return E_INVALID_VALUE;
    }
    return step("restore", pid, 2, 1, 2, E_UNKNOWN, 1, newgpu);
}

CUresult cuCheckpointProcessUnlock(int pid, void *args)
{
    logf_("unlock %d", pid);
    if (!zero64(args)) return E_INVALID_VALUE;
    return step("unlock", pid, 1, 0, 1, E_UNKNOWN, 0, -2);
}

CUresult cuCheckpointProcessGetState(int pid, int *state)
{
    logf_("state %d", pid);
    if (!inited) return E_NOT_INITIALIZED;
    int gpu;
    return read_proc(pid, state, &gpu);
}

CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int *tid)
{
    if (!inited) return E_NOT_INITIALIZED;
    int st, gpu;
    CUresult e = read_proc(pid, &st, &gpu);
    if (!e) *tid = pid;
    return e;
}

#endif /* FAKE_CUDA_OLD */
