/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so.1 (built as that file name in
 * a directory of its own), so the tests exercise gsched's NVML discovery
 * through dlopen on machines without NVIDIA GPUs.  Only the functions
 * src/daemon/nvml.c looks up exist, with NVML's C signatures.
 *
 * Behaviour from the environment, GSCHED_FAKE_NVML:
 *   "N:NAME"     N GPUs called NAME (e.g. "2:NVIDIA H100 80GB HBM3"; default 1:NVIDIA A100)
 *   "init-fail"  nvmlInit_v2 fails (as with no driver loaded)
 *   "0"          no GPUs
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
    if (!inited) return 1; /* NVML_ERROR_UNINITIALIZED */
    *count = (unsigned)strtoul(conf(), NULL, 10);
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev)
{
    unsigned n = 0;
    if (nvmlDeviceGetCount_v2(&n) || index >= n) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = (nvmlDevice_t)(size_t)(index + 1);
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned len)
{
    const char *c = strchr(conf(), ':');
    if (!dev || !len) return 2;
    snprintf(name, len, "%s", c ? c + 1 : "GPU");
    return 0;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == 9 ? "Driver Not Loaded" : r == 1 ? "Uninitialized" : "Unknown Error";
}
