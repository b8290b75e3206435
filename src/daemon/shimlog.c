/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shimlog.c - the task shim's log pump: the command's stdout and stderr go
 * to a pipe that the shim drains into the task's log file, so a job can
 * neither fill the disk past the operator's cap (serve --log-cap) nor be
 * stopped or killed by its log: once the file reaches the cap the pump
 * writes one marker line and discards the rest; a write error (ENOSPC,
 * EIO) is remembered and the rest discarded, and a line saying so is
 * attempted when the pump closes.  The pump never stops reading, so a
 * writer never blocks on a full pipe.
 *
 * Invariants: the log file grows by at most cap bytes of output plus one
 * marker line per run (and the shim's own "=== gsched: ... ===" lines);
 * the command never holds the log file's descriptor (it gets only the
 * pipe's write end), so it cannot write around the cap; the pump is used
 * only by the shim process (single-threaded, no allocation after open).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shimlog.h"

int gsd_logpump_open(gsd_logpump *p, int logfd, int64_t cap, int *child_fd)
{
    memset(p, 0, sizeof *p);
    p->out = logfd;
    p->cap = cap > 0 ? cap : 0;
    struct stat st;
    p->size = fstat(logfd, &st) == 0 ? (int64_t)st.st_size : 0;
    p->last_nl = 1;
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC); /* the command gets it through dup2 onto 1 and 2 */
    p->in = fds[0];
    *child_fd = fds[1];
    return 0;
}

/* write(2) all of buf, retrying on EINTR; 0 or the errno of the failure. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        if (w == 0) return EIO;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static void put(gsd_logpump *p, const char *buf, size_t n)
{
    if (p->err || !n) return;
    int e = write_all(p->out, buf, n);
    if (e) {
        p->err = e; /* ENOSPC, EIO, EFBIG...: discard from now on, never block the job */
        return;
    }
    p->size += (int64_t)n;
    p->last_nl = buf[n - 1] == '\n';
}

/* The output of this run reached the cap: one marker line, then nothing more. */
static void mark_capped(gsd_logpump *p)
{
    char line[200];
    int n = snprintf(line, sizeof line,
                     "%s=== gsched: log truncated at %lld bytes (serve --log-cap); later output "
                     "of this run is discarded ===\n",
                     p->last_nl ? "" : "\n", (long long)p->cap);
    p->capped = 1;
    put(p, line, (size_t)n);
}

static void consume(gsd_logpump *p, const char *buf, size_t n)
{
    if (p->capped || p->err) {
        p->dropped += (int64_t)n;
        return;
    }
    if (p->cap) {
        int64_t room = p->cap - p->size;
        if (room < 0) room = 0;
        if ((int64_t)n > room) {
            put(p, buf, (size_t)room);
            p->dropped += (int64_t)n - room;
            mark_capped(p);
            return;
        }
    }
    put(p, buf, n);
    if (p->err) p->dropped += (int64_t)n;
}

int gsd_logpump_step(gsd_logpump *p, int timeout_ms)
{
    if (p->in < 0) return 1;
    struct pollfd pfd = {p->in, POLLIN, 0};
    int pr = poll(&pfd, 1, timeout_ms);
    if (pr <= 0) return 0; /* timeout or EINTR (SIGCHLD, SIGTERM): the caller looks again */
    char buf[65536];
    for (int rounds = 0; rounds < 64; rounds++) { /* at most 4 MiB per step */
        ssize_t r = read(p->in, buf, sizeof buf);
        if (r > 0) {
            consume(p, buf, (size_t)r);
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return 0;
        close(p->in); /* EOF (every writer is gone) or a read error */
        p->in = -1;
        return 1;
    }
    return 0;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void gsd_logpump_drain(gsd_logpump *p, int max_ms)
{
    double until = mono_ms() + max_ms;
    while (p->in >= 0) {
        double left = until - mono_ms();
        if (max_ms >= 0 && left <= 0) break;
        gsd_logpump_step(p, max_ms < 0 ? 100 : (int)(left < 100 ? left + 1 : 100));
    }
}

void gsd_logpump_close(gsd_logpump *p)
{
    if (p->in >= 0) close(p->in);
    p->in = -1;
    if (p->err) {
        /* one try to say so (the disk may have room again by now) */
        char line[256];
        int n = snprintf(line, sizeof line,
                         "%s=== gsched: log write failed at %lld bytes (%s); %lld bytes of output "
                         "were discarded ===\n",
                         p->last_nl ? "" : "\n", (long long)p->size, strerror(p->err),
                         (long long)p->dropped);
        p->err = 0;
        put(p, line, (size_t)n);
    }
}
