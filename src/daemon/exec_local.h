/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exec_local.h - what the "local" executor (exec_local.c) offers besides
 * its ops table (gsd_exec_local, declared in exec.h): the /proc helper its
 * tests use and the parser of its task handles.
 */
#ifndef GSCHED_DAEMON_EXEC_LOCAL_H
#define GSCHED_DAEMON_EXEC_LOCAL_H

#include <stdint.h>

/* Start time (clock ticks since boot) of a process from /proc/PID/stat; -1 if gone. */
int64_t gsd_proc_start_ticks(int64_t pid, char *state);
/* The pid of a "local:PID:STARTTICKS" handle, -1 if it is not one. */
int64_t gsd_local_handle_pid(const char *handle);

#endif
