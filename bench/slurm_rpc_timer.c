/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurm_rpc_timer.c - an LD_PRELOAD library for bench/bench_slurm.sh: times every libslurm
 * call a process makes that talks to slurmctld (one RPC each), without touching the caller.
 *
 * Each wrapper looks the real function up with dlsym(RTLD_NEXT) on first use, takes
 * CLOCK_REALTIME before and after, and appends one line to the file named by
 * $GSCHED_RPC_TIMES (opened O_APPEND once; nothing is written when the variable is unset):
 *
 *     NAME START_EPOCH_SECONDS DURATION_SECONDS RC
 *
 * One write(2) per line, so lines from the daemon's threads never interleave.  The
 * prototypes below are libslurm 22.05's with every struct pointer as void *: this file does
 * not include <slurm/slurm.h> (src/daemon/exec_slurm.c is the only file that does) and needs
 * no libslurm to build; in a process without libslurm nothing calls these names.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int out_fd = -1;
static pthread_once_t out_once = PTHREAD_ONCE_INIT;

static void out_open(void)
{
    const char *p = getenv("GSCHED_RPC_TIMES");
    if (p && *p) out_fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void record(const char *name, double t0, int rc)
{
    double t1 = wall();
    pthread_once(&out_once, out_open);
    if (out_fd < 0) return;
    char line[160];
    int n = snprintf(line, sizeof line, "%s %.6f %.6f %d\n", name, t0, t1 - t0, rc);
    if (n > 0 && (size_t)n < sizeof line) {
        ssize_t w = write(out_fd, line, (size_t)n);
        (void)w;
    }
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "slurm_rpc_timer: %s not found: %s\n", name, dlerror());
        abort();
    }
    return f;
}

/* one wrapper per call: the real function's pointer is looked up once (a data race on a
 * pointer-sized store of the same value at worst) */
#define WRAP(ret, name, params, args)         \
    ret name params;                          \
    ret name params                           \
    {                                         \
        static ret(*fn) params;               \
        if (!fn) *(void **)&fn = real(#name); \
        double t0 = wall();                   \
        ret rc = fn args;                     \
        record(#name, t0, (int)rc);           \
        return rc;                            \
    }

WRAP(int, slurm_submit_batch_job, (void *desc, void **resp), (desc, resp))
WRAP(int, slurm_update_job, (void *desc), (desc))
WRAP(int, slurm_update_job2, (void *desc, void **resp), (desc, resp))
WRAP(int, slurm_load_jobs, (time_t t, void **resp, uint16_t flags), (t, resp, flags))
WRAP(int, slurm_load_job, (void **resp, uint32_t id, uint16_t flags), (resp, id, flags))
WRAP(int, slurm_load_node, (time_t t, void **resp, uint16_t flags), (t, resp, flags))
WRAP(int, slurm_load_partitions, (time_t t, void **resp, uint16_t flags), (t, resp, flags))
WRAP(int, slurm_requeue, (uint32_t id, uint32_t flags), (id, flags))
WRAP(int, slurm_kill_job, (uint32_t id, uint16_t sig, uint16_t flags), (id, sig, flags))
WRAP(int, slurm_signal_job, (uint32_t id, uint16_t sig), (id, sig))
WRAP(int, slurm_signal_job_step, (uint32_t id, uint32_t step, uint32_t sig), (id, step, sig))
WRAP(int, slurm_kill_job_step, (uint32_t id, uint32_t step, uint16_t sig), (id, step, sig))
