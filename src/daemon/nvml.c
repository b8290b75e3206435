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
 * Invariant: the library is unloaded (nvmlShutdown + dlclose) before
 * returning, whatever happens; nothing NVML-owned escapes.
 */
#include <ctype.h>
#include <dlfcn.h>
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
