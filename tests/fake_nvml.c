/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so.1 (built as that file name in
 * a directory of its own), so the tests exercise gsched's NVML discovery and
 * GPU health watch through dlopen on machines without NVIDIA GPUs.  Only the
 * functions src/daemon/nvml.c looks up exist, with NVML's C signatures.
 * Built twice: fake-nvml/ with the health functions, fake-nvml-old/ (defined
 * FAKE_NVML_NO_HEALTH) without them, as an older driver's library.
 *
 * Behaviour from the environment, GSCHED_FAKE_NVML:
 *   "N:NAME"     N GPUs called NAME (e.g. "2:NVIDIA H100 80GB HBM3"; default 1:NVIDIA A100)
 *   "init-fail"  nvmlInit_v2 fails (as with no driver loaded)
 *   "0"          no GPUs
 * and GSCHED_FAKE_NVML_HEALTH=FILE, read again at every call (so a test changes a GPU's health
 * while a daemon watches it), one line per fact, "IDX WORD [VALUE]":
 *   "0 xid 79"         GPU 0 reports Xid 79: every round of nvmlEventSetWait_v2 calls (until
 *                      one answers NVML_ERROR_TIMEOUT) delivers one event per such line, so
 *                      the Xid repeats at every poll while the line is there
 *   "1 ecc 3"          GPU 1's volatile uncorrected ECC count is 3 (default 0)
 *   "2 lost"           every call about GPU 2 answers NVML_ERROR_GPU_IS_LOST
 *   "1 pending_retire" pages pending retirement
 *   "0 remap_pending"  / "0 remap_failure": row remapping pending / failed
 *   "0 temp 85"        / "0 mem_used MIB": readings (defaults 40 C, 1024 MiB of 81559 MiB;
 *                      nvmlDeviceGetMemoryInfo (v1) adds a 616 MiB reserve to it, _v2 not)
 *   "0 no_events"      registering GPU 0 for events is not supported
 * Lines that match nothing are ignored.  Without the variable every GPU is healthy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_dev *nvmlDevice_t;

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned len);
const char *nvmlErrorString(nvmlReturn_t r);

enum {
    E_UNINIT = 1,
    E_ARG = 2,
    E_NOT_SUPPORTED = 3,
    E_TIMEOUT = 10,
    E_LOST = 15,
};

static int inited;

static const char *conf(void)
{
    const char *c = getenv("GSCHED_FAKE_NVML");
    return c && *c ? c : "1:NVIDIA A100-SXM4-40GB";
}

nvmlReturn_t nvmlInit_v2(void)
{
    if (!strcmp(conf(), "init-fail")) return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    inited = 1;
    return 0;
}

nvmlReturn_t nvmlShutdown(void)
{
    inited = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
    if (!inited) return E_UNINIT;
    *count = (unsigned)strtoul(conf(), NULL, 10);
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev)
{
    unsigned n = 0;
    if (nvmlDeviceGetCount_v2(&n) || index >= n) return E_ARG;
    *dev = (nvmlDevice_t)(size_t)(index + 1);
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned len)
{
    const char *c = strchr(conf(), ':');
    if (!dev || !len) return E_ARG;
    snprintf(name, len, "%s", c ? c + 1 : "GPU");
    return 0;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == 9                 ? "Driver Not Loaded"
           : r == E_UNINIT        ? "Uninitialized"
           : r == E_LOST          ? "GPU is lost"
           : r == E_TIMEOUT       ? "Timeout"
           : r == E_NOT_SUPPORTED ? "Not Supported"
                                  : "Unknown Error";
}

#ifndef FAKE_NVML_NO_HEALTH

typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned gpuInstanceId;
    unsigned computeInstanceId;
} nvmlEventData_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct {
    unsigned gpu, memory;
} nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned len);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter,
                                         unsigned long long *count);
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int *pending);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned *corr, unsigned *unc,
                                       unsigned *pending, unsigned *failure);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned *temp);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types,
                                      nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned timeout_ms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);

#define MAXDEV       64
#define RESERVED_MIB 616 /* the driver's reserve (an idle H200's) */
struct nvmlEventSet_st {
    unsigned long long reg[MAXDEV]; /* event types registered per device */
    int cursor;                     /* xid lines delivered in this round */
};

/* The value of fact WORD for GPU idx in the health file: 1 and *val set when present (the
 * nth such line when nth >= 0: xid lines), 0 when absent. */
static int fact(unsigned idx, const char *word, int nth, long long *val)
{
    const char *path = getenv("GSCHED_FAKE_NVML_HEALTH");
    FILE *f = path && *path ? fopen(path, "re") : NULL;
    if (!f) return 0;
    char line[256];
    int found = 0, seen = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned i;
        char w[64];
        long long v = 0;
        int k = sscanf(line, "%u %63s %lld", &i, w, &v);
        if (k < 2 || strcmp(w, word)) continue;
        if (i != idx) continue;
        if (nth >= 0 && seen++ != nth) continue;
        if (val) *val = k == 3 ? v : 1;
        found = 1;
    }
    fclose(f);
    return found;
}

/* Device index of a handle, or -1 (and the error to return) when unknown or lost. */
static int dev_index(nvmlDevice_t dev, nvmlReturn_t *err)
{
    unsigned n = 0;
    size_t i = (size_t)dev;
    if (!dev || nvmlDeviceGetCount_v2(&n) || i > n || i > MAXDEV) {
        *err = inited ? E_ARG : E_UNINIT;
        return -1;
    }
    if (fact((unsigned)(i - 1), "lost", -1, NULL)) {
        *err = E_LOST;
        return -1;
    }
    return (int)(i - 1);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned len)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    snprintf(uuid, len, "GPU-fa4e0000-0000-0000-0000-%012d", i);
    return 0;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter,
                                         unsigned long long *count)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    if (type != 1 || counter != 0) return E_ARG; /* only uncorrected, volatile is faked */
    long long v = 0;
    fact((unsigned)i, "ecc", -1, &v);
    *count = (unsigned long long)v;
    return 0;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int *pending)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    *pending = fact((unsigned)i, "pending_retire", -1, NULL);
    return 0;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned *corr, unsigned *unc,
                                       unsigned *pending, unsigned *failure)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    *corr = 0;
    *unc = 0;
    *pending = (unsigned)fact((unsigned)i, "remap_pending", -1, NULL);
    *failure = (unsigned)fact((unsigned)i, "remap_failure", -1, NULL);
    return 0;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned *temp)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    if (sensor != 0) return E_ARG;
    long long v = 40;
    fact((unsigned)i, "temp", -1, &v);
    *temp = (unsigned)v;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    long long used = 1024;
    fact((unsigned)i, "mem_used", -1, &used);
    m->total = 81559ULL << 20;
    m->used = ((unsigned long long)used + RESERVED_MIB) << 20; /* v1 counts the reserve */
    m->free = m->total > m->used ? m->total - m->used : 0;
    return 0;
}

/* As the real driver: the version word must be sizeof | 2 << 24, else
 * NVML_ERROR_ARGUMENT_VERSION_MISMATCH (25); 'used' without the reserve. */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    if (m->version != (unsigned)(sizeof *m | 2u << 24)) return 25;
    long long used = 1024;
    fact((unsigned)i, "mem_used", -1, &used);
    m->total = 81559ULL << 20;
    m->reserved = (unsigned long long)RESERVED_MIB << 20;
    m->used = (unsigned long long)used << 20;
    m->free = m->total > m->used + m->reserved ? m->total - m->used - m->reserved : 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    long long v = 0;
    fact((unsigned)i, "util", -1, &v);
    u->gpu = (unsigned)v;
    u->memory = 0;
    return 0;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (!inited) return E_UNINIT;
    *set = calloc(1, sizeof **set);
    return *set ? 0 : 999;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types,
                                      nvmlEventSet_t set)
{
    nvmlReturn_t e;
    int i = dev_index(dev, &e);
    if (i < 0) return e;
    if (!set) return E_ARG;
    if (fact((unsigned)i, "no_events", -1, NULL)) return E_NOT_SUPPORTED;
    set->reg[i] |= types;
    return 0;
}

/* The next Xid of the round: the k-th xid line (over all registered devices, in index order,
 * then file order) with k = set->cursor; a round ends with a timeout. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned timeout_ms)
{
    (void)timeout_ms; /* never blocks: the daemon polls with 0 */
    unsigned n = 0;
    if (!set || nvmlDeviceGetCount_v2(&n)) return E_ARG;
    int k = 0;
    for (unsigned i = 0; i < n && i < MAXDEV; i++) {
        if (!(set->reg[i] & 8ULL)) continue; /* nvmlEventTypeXidCriticalError */
        long long code;
        for (int m = 0; fact(i, "xid", m, &code); m++, k++) {
            if (k < set->cursor) continue;
            set->cursor++;
            memset(data, 0, sizeof *data);
            data->device = (nvmlDevice_t)(size_t)(i + 1);
            data->eventType = 8ULL;
            data->eventData = (unsigned long long)code;
            return 0;
        }
    }
    set->cursor = 0;
    return E_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    free(set);
    return 0;
}

#endif
