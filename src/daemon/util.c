/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.c - small helpers of the daemon: clocks (wall, monotonic), RFC 3339
 * times, the log line and the log file (--log-file, reopened on SIGHUP),
 * stop names, allocation that aborts, and interning of long-lived strings.
 *
 * Invariants: gsd_wall_now, gsd_time_str, gsd_log and gsd_stop_name are
 * thread-safe (HTTP threads call them); the log always goes to stderr, and
 * a log file is put in place as descriptor 2 with dup2 (atomic: a line being
 * written lands whole in the old or the new file); gsd_intern and the
 * string set belong to the scheduler thread.  An interned string lives until the
 * daemon stops (the engine keeps the pointers).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gsd_sched.h"

/* ---- small helpers -------------------------------------------------------------------------- */

gs_time gsd_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (gs_time)ts.tv_sec * GS_SEC + ts.tv_nsec / 1000;
}

double gsd_mono_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gsd_time_str(gs_time t, char *buf, size_t cap)
{
    time_t s = (time_t)(t / GS_SEC);
    struct tm tm;
    gmtime_r(&s, &tm);
    char b[32];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03dZ", b, (int)(t % GS_SEC / 1000));
}

void gsd_log(const char *fmt, ...)
{
    char ts[40], msg[2048];
    gsd_time_str(gsd_wall_now(), ts, sizeof ts);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s gsched: %s\n", ts, msg);
}

int gsd_log_open(const char *path, char *err, size_t cap)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0) {
        snprintf(err, cap, "cannot open log file '%s': %s", path, strerror(errno));
        return GS_EIO;
    }
    fflush(stderr);
    int rc = 0;
    if (fd != STDERR_FILENO) {
        if (dup2(fd, STDERR_FILENO) < 0) {
            snprintf(err, cap, "cannot use log file '%s': %s", path, strerror(errno));
            rc = GS_EIO;
        }
        close(fd);
    }
    return rc;
}

const char *gsd_stop_name(int stop)
{
    switch (stop) {
    case GSD_STOP_PREEMPT: return "preempt";
    case GSD_STOP_CANCEL: return "cancel";
    case GSD_STOP_TIMEOUT: return "timeout";
    case GSD_STOP_FAILED: return "failed";
    case GSD_STOP_DRAIN: return "drain";
    case GSD_STOP_SUSPEND_FAILED: return "suspend-failed";
    case GSD_STOP_GPU_FAULT: return "gpu-fault";
    default: return NULL;
    }
}

int gsd_stop_parse(const char *s)
{
    if (!s) return GSD_STOP_NONE;
    if (!strcmp(s, "preempt")) return GSD_STOP_PREEMPT;
    if (!strcmp(s, "cancel")) return GSD_STOP_CANCEL;
    if (!strcmp(s, "timeout")) return GSD_STOP_TIMEOUT;
    if (!strcmp(s, "failed")) return GSD_STOP_FAILED;
    if (!strcmp(s, "drain")) return GSD_STOP_DRAIN;
    if (!strcmp(s, "suspend-failed")) return GSD_STOP_SUSPEND_FAILED;
    if (!strcmp(s, "gpu-fault")) return GSD_STOP_GPU_FAULT;
    return GSD_STOP_NONE;
}

char *gsd_xstrdup(const char *s)
{
    if (!s) return NULL;
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

void *gsd_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q && n) abort();
    return q;
}

static uint64_t strhash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Long-lived copies of reason strings handed to the engine (it keeps the pointers). */
const char *gsd_intern(gsd_sched *g, const char *s)
{
    if (!s) return NULL;
    gsd_strset *t = &g->strs;
    if ((t->n + 1) * 2 > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **nv = calloc(nc, sizeof *nv);
        if (!nv) abort();
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->v[i]) continue;
            size_t k = strhash(t->v[i]) & (nc - 1);
            while (nv[k]) k = (k + 1) & (nc - 1);
            nv[k] = t->v[i];
        }
        free(t->v);
        t->v = nv;
        t->cap = nc;
    }
    size_t k = strhash(s) & (t->cap - 1);
    while (t->v[k]) {
        if (!strcmp(t->v[k], s)) return t->v[k];
        k = (k + 1) & (t->cap - 1);
    }
    t->v[k] = gsd_xstrdup(s);
    t->n++;
    return t->v[k];
}

void gsd_strset_release(gsd_strset *t)
{
    for (size_t i = 0; i < t->cap; i++) free(t->v[i]);
    free(t->v);
    memset(t, 0, sizeof *t);
}

int gsd_named_cmp(const void *a, const void *b)
{
    const gsd_named *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->ix > y->ix) - (x->ix < y->ix);
}
