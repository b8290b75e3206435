/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.h - cgroup v2 process tracking for the local executor (cgroup.c):
 * where task cgroups go, making one per task (with the spec's cpus / memory
 * as cpu.max / memory.max when those controllers can be enabled), joining,
 * "is anything left", killing everything in one, removing it.
 *
 * Layout: BASE/job-J.run-R.task-I/{shim,job}.  The shim sits in shim/, the
 * task's command and everything it starts in job/ (so job/ can be killed
 * whole while the shim lives on to record the exit status); limits are set
 * on the task's cgroup, which holds both.  BASE is `serve --cgroup DIR`, or
 * with auto the daemon's own cgroup (from /proc/self/cgroup) in the cgroup2
 * mount found in /proc/self/mountinfo + "/gsched-HASH", HASH naming the
 * state directory (two daemons on one machine never share task cgroups).
 */
#ifndef GSCHED_DAEMON_CGROUP_H
#define GSCHED_DAEMON_CGROUP_H

#include <stddef.h>
#include <stdint.h>

enum { GSD_CG_CPU = 1u << 0, GSD_CG_MEMORY = 1u << 1 };

typedef struct gsd_cg {
    char base[4096];  /* where task cgroups are made; "" = not in use (fallback) */
    unsigned ctrl;    /* GSD_CG_* controllers enabled for task cgroups */
    int force_freeze; /* tests: kill through cgroup.freeze even where cgroup.kill exists */
    int own_base;     /* auto: base is gsched's to remove once empty (an explicit DIR is not) */
    char why[512];    /* not in use: why; in use: what is not enforced and why ("" = all) */
} gsd_cg;

/* ---- parsing (pure; unit-tested) ------------------------------------------------------------ */

/* The mount point of the first cgroup2 filesystem in a /proc/self/mountinfo text (octal
 * escapes such as \040 decoded).  0, or -1 when there is none (or it does not fit in cap). */
int gsd_cg_parse_mountinfo(const char *text, char *out, size_t cap);
/* The cgroup v2 path ("0::PATH" line) of a /proc/PID/cgroup text.  0, or -1 when there is
 * none (a pure v1 host) or it does not fit. */
int gsd_cg_parse_self(const char *text, char *out, size_t cap);
/* "populated N" of a cgroup.events text: 1, 0, or -1 when absent. */
int gsd_cg_parse_populated(const char *text);
/* The task cgroup of job/run/task under base. */
void gsd_cg_task_dir(const char *base, int64_t job, int run, int task, char *out, size_t cap);
/* 1 if name is a task cgroup's ("job-J.run-R.task-I"), with *job, *run, *task set. */
int gsd_cg_parse_task_name(const char *name, int64_t *job, int *run, int *task);

/* ---- setup ---------------------------------------------------------------------------------- */

/*
 * Decide how tasks are tracked.  mode: NULL or "off" (no cgroups), "auto" (the daemon's own
 * cgroup + "/gsched-HASH", HASH of instance (the state directory), when a cgroup2 hierarchy is
 * mounted and a child cgroup can be made and joined there; otherwise not in use, cg->why says why),
 * or an absolute directory in a cgroup2 filesystem (made if missing).  Tries to enable cpu and
 * memory for the task cgroups (cg->ctrl; cg->why names what is missing).  Returns 0, or -1 with msg
 * set when an explicit directory cannot be used (a configuration error) or mode is none of these.
 */
int gsd_cg_setup(gsd_cg *cg, const char *mode, const char *instance, char *msg, size_t cap);
/* One line saying how tasks are tracked, for the daemon's log. */
void gsd_cg_describe(const gsd_cg *cg, char *buf, size_t cap);

/* ---- one task's cgroup ---------------------------------------------------------------------- */

/* Make dir, dir/shim and dir/job; cpu.max = cpus CPUs and memory.max = mem_mb MiB on dir
 * where cg->ctrl has the controller (0 = no limit).  0, or -1 with err set (nothing left). */
int gsd_cg_task_create(const gsd_cg *cg, const char *dir, int cpus, int mem_mb, char *err,
                       size_t cap);
/* Move the calling process into the cgroup whose cgroup.procs file is procs (its path made
 * before fork: async-signal-safe).  0 or -1 (errno set). */
int gsd_cg_join(const char *procs);
/* 1 if a process is in dir or below, 0 if none, -1 if dir does not exist. */
int gsd_cg_populated(const char *dir);
/* Send sig to every process listed in dir and below.  0, or -1 if dir does not exist. */
int gsd_cg_signal(const char *dir, int sig);
/* Kill every process in dir and below: cgroup.kill where the kernel has it, otherwise freeze
 * and SIGKILL each pid of cgroup.procs until empty (bounded; the caller checks populated).
 * 0, or -1 if dir does not exist. */
int gsd_cg_kill(const char *dir, int force_freeze);
/* Remove dir and its child cgroups (empty ones only).  0, or -1 (errno: EBUSY if a process is
 * left; ENOENT is success). */
int gsd_cg_remove(const char *dir);

#endif
