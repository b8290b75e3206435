/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shimlog.h - the task shim's log pump (shimlog.c): a pipe between the
 * command's stdout/stderr and the task's log file, with the operator's size
 * cap (serve --log-cap) and write errors turned into discarded output
 * instead of a blocked or killed job.  Used by gsd_shim_main only.
 */
#ifndef GSCHED_DAEMON_SHIMLOG_H
#define GSCHED_DAEMON_SHIMLOG_H

#include <stdint.h>

typedef struct gsd_logpump {
    int in;          /* read end of the pipe (non-blocking), -1 once every writer is gone */
    int out;         /* the log file, opened O_APPEND by the daemon */
    int64_t cap;     /* bytes the file may hold before output is discarded; 0 = no cap */
    int64_t size;    /* the file's size as the pump knows it */
    int64_t dropped; /* bytes of output discarded */
    int capped;      /* this run's output reached the cap (marker written) */
    int err;         /* errno of a failed write to the log; output is discarded since */
    int last_nl;     /* the last byte written ended a line */
} gsd_logpump;

/* Make the pipe; *child_fd is its write end (close-on-exec: the command gets it through dup2
 * onto 1 and 2; close it in the shim after the fork).  0, or -1 with errno. */
int gsd_logpump_open(gsd_logpump *p, int logfd, int64_t cap, int *child_fd);
/* Wait up to timeout_ms for output and move what is there to the log.  1 once the pipe is
 * closed (every writer gone), else 0 (also when a signal interrupted the wait). */
int gsd_logpump_step(gsd_logpump *p, int timeout_ms);
/* Step until the pipe closes, or max_ms passed (max_ms < 0: no limit). */
void gsd_logpump_drain(gsd_logpump *p, int max_ms);
/* Close the read end; if a write failed, try once to append a line that says so. */
void gsd_logpump_close(gsd_logpump *p);

#endif
