/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvml.c - GPU discovery through NVML, loaded at run time.
 *
 * libnvidia-ml.so.1 comes with the NVIDIA driver; gsched has no build
 * dependency on it: the few functions used are declared here with NVML's
 * documented C signatures and looked up with dlsym.  Without the library
 * (or without GPUs) gsd_nvml_cluster() returns GS_ENOENT and the daemon
 * uses the GPUs declared in the cluster config instead (fake GPUs).
 *
 * Health readings (gsd_nvml_open / gsd_nvml_read, used by the daemon's
 * GPU health watch, gpuhealth.c, and `gsched gpus`): ECC, retired pages,
 * remapped rows, lost GPUs, Xid events through an event set polled with a
 * 0 ms timeout, and temperature / memory / utilisation for display.  A
 * library without the health functions (older drivers) still discovers
 * GPUs; only the health session refuses (GS_EUNSUPPORTED, saying which
 * function is missing).
 *
 * Invariants: gsd_nvml_cluster unloads the library (nvmlShutdown +
 * dlclose) before returning, whatever happens; a health session holds its
 * own load of the library (dlopen counts references) until gsd_nvml_close;
 * nothing NVML-owned escapes either.  NVML error codes are declared here
 * (NVML's documented values), never taken from nvml.h.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml.h"

typedef int nvml_return;              /* nvmlReturn_t; 0 = NVML_SUCCESS */
typedef struct nvml_dev *nvml_device; /* nvmlDevice_t (opaque pointer) */

typedef struct nvml_api {
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*count)(unsigned *);
    nvml_return (*handle)(unsigned, nvml_device *);
    nvml_return (*name)(nvml_device, char *, unsigned);
    const char *(*errstr)(nvml_return);
} nvml_api;

/* "NVIDIA H100 80GB HBM3" -> "H100"; "Tesla V100-SXM2-16GB" -> "V100-SXM2-16GB". */
static void short_type(const char *name, char *out, size_t cap)
{
    const char *p = name;
    for (;;) {
        while (*p == ' ') p++;
        if (!strncmp(p, "NVIDIA ", 7))
            p += 7;
        else if (!strncmp(p, "Tesla ", 6))
            p += 6;
        else if (!strncmp(p, "GeForce ", 8))
            p += 8;
        else
            break;
    }
    size_t n = 0;
    while (p[n] && p[n] != ' ' && n + 1 < cap) {
        out[n] = isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_' ? p[n] : '_';
        n++;
    }
    out[n] = '\0';
    if (!n) snprintf(out, cap, "GPU");
}

int gsd_nvml_cluster(gs_cluster **out, gs_diag *d)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return gs_diag_set(d, GS_ENOENT, 0, 0, "NVML not available (libnvidia-ml.so.1: %s)",
                           dlerror());
    nvml_api a;
    *(void **)&a.init = dlsym(h, "nvmlInit_v2");
    *(void **)&a.shutdown = dlsym(h, "nvmlShutdown");
    *(void **)&a.count = dlsym(h, "nvmlDeviceGetCount_v2");
    *(void **)&a.handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&a.name = dlsym(h, "nvmlDeviceGetName");
    *(void **)&a.errstr = dlsym(h, "nvmlErrorString");
    if (!a.init || !a.shutdown || !a.count || !a.handle || !a.name) {
        dlclose(h);
        return gs_diag_set(d, GS_ENOENT, 0, 0, "NVML library lacks the functions gsched needs");
    }
    nvml_return r = a.init();
    if (r != 0) {
        int rc = gs_diag_set(d, GS_ENOENT, 0, 0, "nvmlInit failed: %s",
                             a.errstr ? a.errstr(r) : "error");
        dlclose(h);
        return rc;
    }
    unsigned n = 0;
    int rc = 0;
    gs_cluster *c = NULL;
    if (a.count(&n) != 0 || n == 0) {
        rc = gs_diag_set(d, GS_ENOENT, 0, 0, "NVML reports no GPUs");
        goto done;
    }
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    if ((rc = gs_cluster_create(&c))) goto done;
    int node = gs_cluster_add_cell(c, 0, GS_CELL_NODE, host, -1);
    if (node < 0 || (rc = gs_cluster_set_node(c, node, 0, 0))) {
        rc = node < 0 ? node : rc;
        goto done;
    }
    for (unsigned i = 0; i < n; i++) {
        nvml_device dev;
        char name[96] = "GPU", type[64];
        if (a.handle(i, &dev) == 0) a.name(dev, name, sizeof name);
        short_type(name, type, sizeof type);
        int t = gs_cluster_gpu_type(c, type);
        if (t < 0) {
            rc = t;
            goto done;
        }
        int g = gs_cluster_add_gpu(c, node, (int)i, t);
        if (g < 0) {
            rc = g;
            goto done;
        }
    }
    rc = gs_cluster_finish(c, d);
done:
    a.shutdown();
    dlclose(h);
    if (rc) {
        gs_cluster_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* ---- health readings ------------------------------------------------------------------------ */

enum {
    NVML_ERR_NOT_SUPPORTED = 3,
    NVML_ERR_TIMEOUT = 10,
    NVML_ERR_GPU_IS_LOST = 15,
};
#define NVML_EVENT_XID_CRITICAL 0x8ULL /* nvmlEventTypeXidCriticalError */
#define NVML_MAX_EVENTS         256    /* Xid events taken per read at most */

typedef struct nvml_evset *nvml_event_set;
typedef struct nvml_event_data { /* nvmlEventData_t */
    nvml_device device;
    unsigned long long type, data;
    unsigned gi, ci;
} nvml_event_data;
typedef struct nvml_memory { /* nvmlMemory_t */
    unsigned long long total, free, used;
} nvml_memory;
typedef struct nvml_memory2 { /* nvmlMemory_v2_t: used without the driver's reserved memory */
    unsigned version;
    unsigned long long total, reserved, free, used;
} nvml_memory2;
#define NVML_MEMORY2_VERSION ((unsigned)(sizeof(nvml_memory2) | (2u << 24)))
typedef struct nvml_util { /* nvmlUtilization_t */
    unsigned gpu, memory;
} nvml_util;

struct gsd_nvml {
    void *h;
    nvml_api a;
    nvml_return (*uuid)(nvml_device, char *, unsigned);
    nvml_return (*ecc)(nvml_device, int, int, unsigned long long *);
    nvml_return (*retire)(nvml_device, int *);
    nvml_return (*remap)(nvml_device, unsigned *, unsigned *, unsigned *, unsigned *);
    nvml_return (*temp)(nvml_device, int, unsigned *);
    nvml_return (*mem)(nvml_device, nvml_memory *);
    nvml_return (*mem2)(nvml_device, nvml_memory2 *);
    nvml_return (*util)(nvml_device, nvml_util *);
    nvml_return (*set_create)(nvml_event_set *);
    nvml_return (*reg)(nvml_device, unsigned long long, nvml_event_set);
    nvml_return (*wait)(nvml_event_set, nvml_event_data *, unsigned);
    nvml_return (*set_free)(nvml_event_set);
    nvml_event_set set;
    int inited; /* nvmlInit succeeded: nvmlShutdown at close */
    unsigned n;
    nvml_device *dev; /* by index; NULL where no handle was had */
    uint8_t *watched; /* registered for Xid events */
};

const char *gsd_xid_critical(int code)
{
    /* NVIDIA's Xid catalog: the codes that mean the GPU (its memory, its bus, its firmware) is
     * faulty; codes a program causes (13, 31, 43, 45...) are counted, never held against the
     * GPU */
    switch (code) {
    case 48: return "double-bit ECC error";
    case 61: return "internal micro-controller breakpoint";
    case 62: return "internal micro-controller halt";
    case 63: return "ECC page retirement or row remapping recorded";
    case 64: return "ECC page retirement or row remapping failed";
    case 74: return "NVLink error";
    case 79: return "GPU has fallen off the bus";
    case 92: return "high single-bit ECC error rate";
    case 94: return "contained ECC error";
    case 95: return "uncontained ECC error";
    case 119: return "GSP RPC timeout";
    case 120: return "GSP error";
    case 140: return "unrecovered ECC error";
    default: return NULL;
    }
}

static const char *errs(const gsd_nvml *s, nvml_return r)
{
    return s->a.errstr ? s->a.errstr(r) : "error";
}

void gsd_nvml_close(gsd_nvml *s)
{
    if (!s) return;
    if (s->set && s->set_free) s->set_free(s->set);
    if (s->inited) s->a.shutdown();
    if (s->h) dlclose(s->h);
    free(s->dev);
    free(s->watched);
    free(s);
}

unsigned gsd_nvml_count(const gsd_nvml *s)
{
    return s ? s->n : 0;
}

/* Load the library and its functions; health 1: refuse without the health functions. */
static int nvml_load(gsd_nvml **out, int health, char *why, size_t cap)
{
    gsd_nvml *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!s->h) {
        snprintf(why, cap, "NVML not available (libnvidia-ml.so.1: %s)", dlerror());
        free(s);
        return GS_ENOENT;
    }
    struct {
        void *dst;
        const char *name;
        int need; /* 1: discovery needs it; 2: the health watch needs it; 0: optional */
    } fn[] = {
        {&s->a.init, "nvmlInit_v2", 1},
        {&s->a.shutdown, "nvmlShutdown", 1},
        {&s->a.count, "nvmlDeviceGetCount_v2", 1},
        {&s->a.handle, "nvmlDeviceGetHandleByIndex_v2", 1},
        {&s->a.name, "nvmlDeviceGetName", 1},
        {&s->a.errstr, "nvmlErrorString", 0},
        {&s->ecc, "nvmlDeviceGetTotalEccErrors", 2},
        {&s->set_create, "nvmlEventSetCreate", 2},
        {&s->reg, "nvmlDeviceRegisterEvents", 2},
        {&s->wait, "nvmlEventSetWait_v2", 2},
        {&s->set_free, "nvmlEventSetFree", 2},
        {&s->retire, "nvmlDeviceGetRetiredPagesPendingStatus", 0},
        {&s->remap, "nvmlDeviceGetRemappedRows", 0},
        {&s->uuid, "nvmlDeviceGetUUID", 0},
        {&s->temp, "nvmlDeviceGetTemperature", 0},
        {&s->mem, "nvmlDeviceGetMemoryInfo", 0},
        {&s->mem2, "nvmlDeviceGetMemoryInfo_v2", 0},
        {&s->util, "nvmlDeviceGetUtilizationRates", 0},
    };
    const char *missing = NULL;
    int rc = 0;
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        *(void **)fn[i].dst = dlsym(s->h, fn[i].name);
        if (*(void **)fn[i].dst || !fn[i].need) continue;
        if (fn[i].need == 1) {
            snprintf(why, cap, "NVML library lacks the functions gsched needs (%s)", fn[i].name);
            rc = GS_ENOENT;
            break;
        }
        if (!missing) missing = fn[i].name;
    }
    if (!rc && missing && health) {
        snprintf(why, cap,
                 "NVML library lacks the GPU health functions (%s): an older driver; GPU health "
                 "is not watched",
                 missing);
        rc = GS_EUNSUPPORTED;
    }
    if (!rc && missing) { /* readings without health: the health calls stay NULL */
        s->ecc = NULL;
        s->set_create = NULL;
        s->set_free = NULL;
        s->reg = NULL;
        s->wait = NULL;
        s->retire = NULL;
        s->remap = NULL;
        snprintf(why, cap, "NVML library lacks the GPU health functions (%s): an older driver",
                 missing);
    }
    nvml_return r;
    if (!rc && (r = s->a.init()) != 0) {
        snprintf(why, cap, "nvmlInit failed: %s", errs(s, r));
        rc = GS_ENOENT;
    }
    s->inited = !rc;
    if (!rc && (s->a.count(&s->n) != 0 || s->n == 0)) {
        snprintf(why, cap, "NVML reports no GPUs");
        rc = GS_ENOENT;
    }
    if (!rc && (!(s->dev = calloc(s->n, sizeof *s->dev)) ||
                !(s->watched = calloc(s->n, sizeof *s->watched))))
        rc = GS_ENOMEM;
    if (rc) {
        gsd_nvml_close(s);
        return rc;
    }
    for (unsigned i = 0; i < s->n; i++)
        if (s->a.handle(i, &s->dev[i]) != 0) s->dev[i] = NULL;
    if (s->set_create && s->set_create(&s->set) != 0) s->set = NULL;
    for (unsigned i = 0; s->set && i < s->n; i++)
        s->watched[i] = s->dev[i] && s->reg(s->dev[i], NVML_EVENT_XID_CRITICAL, s->set) == 0;
    *out = s;
    return 0;
}

int gsd_nvml_open(gsd_nvml **out, char *why, size_t cap)
{
    *out = NULL;
    return nvml_load(out, 1, why, cap);
}

/* A call about GPU r answered r: NVML_ERROR_GPU_IS_LOST marks it lost.  1 when it succeeded. */
static int ok(const gsd_nvml *s, gsd_gpu_reading *g, nvml_return r)
{
    if (r == NVML_ERR_GPU_IS_LOST && !g->lost) {
        g->lost = 1;
        snprintf(g->lost_why, sizeof g->lost_why, "%s", errs(s, r));
    }
    return r == 0;
}

void gsd_nvml_read(gsd_nvml *s, gsd_gpu_reading *rv, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        gsd_gpu_reading *g = &rv[i];
        memset(g, 0, sizeof *g);
        g->index = (int)i;
        g->ecc_uncorrected = g->mem_used = g->mem_total = -1;
        g->retire_pending = g->remap_pending = g->remap_failure = g->temp_c = g->util = -1;
        nvml_device d = i < s->n ? s->dev[i] : NULL;
        nvml_return r;
        if (!d && i < s->n && (r = s->a.handle(i, &s->dev[i])) == 0) d = s->dev[i];
        if (!d) {
            g->lost = 1;
            snprintf(g->lost_why, sizeof g->lost_why, "no handle for GPU %u", i);
            continue;
        }
        g->xid_watch = s->watched[i];
        ok(s, g, s->a.name(d, g->name, sizeof g->name));
        if (s->uuid && !ok(s, g, s->uuid(d, g->uuid, sizeof g->uuid))) g->uuid[0] = '\0';
        unsigned long long c;
        if (s->ecc && ok(s, g, s->ecc(d, 1 /* uncorrected */, 0 /* volatile */, &c)))
            g->ecc_uncorrected = (int64_t)c;
        int pend;
        if (s->retire && ok(s, g, s->retire(d, &pend))) g->retire_pending = pend != 0;
        unsigned corr, unc, rp, rf;
        if (s->remap && ok(s, g, s->remap(d, &corr, &unc, &rp, &rf))) {
            g->remap_pending = rp != 0;
            g->remap_failure = rf != 0;
        }
        unsigned t;
        if (s->temp && ok(s, g, s->temp(d, 0 /* NVML_TEMPERATURE_GPU */, &t))) g->temp_c = (int)t;
        /* used memory as nvidia-smi shows it (without the driver's reserve) where the driver
         * has the v2 call; v1 counts the reserve as used (616 MiB on an idle H200) */
        nvml_memory2 m2 = {.version = NVML_MEMORY2_VERSION};
        nvml_memory m;
        if (s->mem2 && ok(s, g, s->mem2(d, &m2))) {
            g->mem_used = (int64_t)m2.used;
            g->mem_total = (int64_t)m2.total;
        } else if (s->mem && ok(s, g, s->mem(d, &m))) {
            g->mem_used = (int64_t)m.used;
            g->mem_total = (int64_t)m.total;
        }
        nvml_util u;
        if (s->util && ok(s, g, s->util(d, &u))) g->util = (int)u.gpu;
    }
    /* the Xid events since the last read, on their GPU */
    nvml_event_data ev;
    for (int k = 0; s->set && k < NVML_MAX_EVENTS; k++) {
        memset(&ev, 0, sizeof ev);
        nvml_return r = s->wait(s->set, &ev, 0);
        if (r != 0) break; /* NVML_ERROR_TIMEOUT: none left (any other error: next time) */
        if (!(ev.type & NVML_EVENT_XID_CRITICAL)) continue;
        for (unsigned i = 0; i < n && i < s->n; i++) {
            if (s->dev[i] != ev.device) continue;
            rv[i].nxid++;
            rv[i].xid_last = (int)ev.data;
            if (gsd_xid_critical((int)ev.data)) rv[i].xid_crit = (int)ev.data;
            break;
        }
    }
}

static void add(char *why, size_t cap, const char *fmt, const char *a, long long b)
{
    size_t l = strlen(why);
    if (l + 3 >= cap) return;
    if (l) {
        snprintf(why + l, cap - l, "; ");
        l += 2;
    }
    snprintf(why + l, cap - l, fmt, a ? a : "", b);
}

int gsd_gpu_reading_bad(const gsd_gpu_reading *r, char *why, size_t cap)
{
    if (cap) why[0] = '\0';
    int bad = 0;
    if (r->lost) {
        add(why, cap, "GPU lost (%s)", r->lost_why, 0);
        bad = 1;
    }
    if (r->xid_crit) {
        char t[160];
        snprintf(t, sizeof t, "Xid %d: %s", r->xid_crit, gsd_xid_critical(r->xid_crit));
        add(why, cap, "%s", t, 0);
        bad = 1;
    }
    if (r->retire_pending > 0) {
        add(why, cap, "%spages pending retirement (reset the GPU)", NULL, 0);
        bad = 1;
    }
    if (r->remap_failure > 0) {
        add(why, cap, "%srow remapping failed", NULL, 0);
        bad = 1;
    }
    if (r->remap_pending > 0) {
        add(why, cap, "%srow remapping pending (reset the GPU)", NULL, 0);
        bad = 1;
    }
    return bad;
}

int gsd_gpus_read(gsd_gpu_reading **out, size_t *n, char *why, size_t cap)
{
    *out = NULL;
    *n = 0;
    if (cap) why[0] = '\0';
    gsd_nvml *s = NULL;
    int rc = nvml_load(&s, 0, why, cap);
    if (rc) return rc;
    gsd_gpu_reading *v = calloc(s->n, sizeof *v);
    if (!v) {
        gsd_nvml_close(s);
        return GS_ENOMEM;
    }
    gsd_nvml_read(s, v, s->n);
    *out = v;
    *n = s->n;
    gsd_nvml_close(s);
    return 0;
}
