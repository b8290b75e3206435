/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proctree.h - the local executor's process tracking without cgroups
 * (proctree.c): a task's processes are the descendants of its shim, a
 * child subreaper, found by walking /proc and killed until none is left.
 */
#ifndef GSCHED_DAEMON_PROCTREE_H
#define GSCHED_DAEMON_PROCTREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The parent pid and state of a /proc/PID/stat text ("PID (COMM) S PPID ..."; COMM may hold
 * spaces and parentheses).  0, or -1 if it is not one. */
int gsd_proc_parse_ppid(const char *buf, size_t n, int64_t *ppid, char *state);
/* Up to cap live (not zombie) descendants of root, root excluded, into out; returns how many
 * there are (may exceed cap), or -1 if /proc cannot be read. */
long gsd_proc_descendants(pid_t root, pid_t *out, size_t cap);
/*
 * SIGSTOP then SIGKILL every descendant of root, again and again, until root has no live
 * child left (see proctree.c: one walk that finds nothing is not proof) or max_ms passed.
 * reap: root is the caller, so reap its children between walks, and the end is waitpid's
 * ECHILD; else the end is read from root's /proc children lists (only zombies, or none)
 * (where the kernel has none, a walk that finds nothing).  Returns 0 when nothing is left, the
 * number of live descendants of the last walk (at least 1) when time ran out, -1 if /proc
 * cannot be read.
 */
long gsd_proc_kill_tree(pid_t root, int max_ms, int reap);

#endif
