/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/jobdeps.h - job dependencies as Slurm writes them (--dependency), parsed and
 * evaluated (not installed): shared by the daemon (src/daemon/wait.c) and the simulator
 * (trace and scenario dependencies).
 *
 * Grammar: TYPE:ID[:ID...] terms, or the bare term singleton, joined by ',' (all must be
 * satisfied) or by '?' (any one suffices), not both; TYPE is after (the job started, or
 * ended without starting), afterany (it ended), afterok (it ended DONE), afternotok (it
 * ended FAILED, CANCELLED or REJECTED); singleton (Slurm's): no other job of the same user
 * and name runs or waits in a queue (the caller decides; gs_dep_eval cannot).  Slurm's
 * other types (aftercorr, afterburstbuffer) and its "+minutes" delays are refused by name.
 * Pure functions: no I/O, no state.
 */
#ifndef GSCHED_JOBDEPS_H
#define GSCHED_JOBDEPS_H

#include <stddef.h>
#include <stdint.h>

#include "gsched/error.h"

#define GS_DEPS_MAX 64 /* job ids one dependency string may name */

typedef enum gs_dep_type {
    GS_DEP_AFTER,
    GS_DEP_AFTERANY,
    GS_DEP_AFTEROK,
    GS_DEP_AFTERNOTOK,
    GS_DEP_SINGLETON /* id 0: no job named */
} gs_dep_type;

typedef struct gs_dep {
    gs_dep_type type;
    int64_t id;
} gs_dep;

typedef struct gs_deps {
    gs_dep v[GS_DEPS_MAX];
    int n;
    int any; /* '?': one satisfied term suffices; else all must be */
} gs_deps;

/* What one term, or the whole, says now. */
enum { GS_DEP_WAIT = 0, GS_DEP_MET = 1, GS_DEP_NEVER = 2 };

/* Whether p has a singleton term. */
int gs_deps_singleton(const gs_deps *p);
/*
 * Parse s into out.  GS_EINVAL (or GS_ETOOBIG past GS_DEPS_MAX ids) with d's
 * message naming the 1-based character position and what was expected
 * ("dependency: position 7: expected a job id after 'afterok:'").
 */
int gs_deps_parse(const char *s, gs_deps *out, gs_diag *d);
/* Canonical text ("afterok:3:4,afterany:5"). */
void gs_deps_format(const gs_deps *p, char *buf, size_t cap);
const char *gs_dep_type_name(gs_dep_type t);
/*
 * One term against the job it names: state (gs_job_state) and whether it
 * ever started.  GS_DEP_WAIT / MET / NEVER (singleton: not a job's term, NEVER).
 */
int gs_dep_eval(gs_dep_type t, int state, int started);
/* Combine the terms' answers st[0..n) by p->any. */
int gs_deps_combine(const gs_deps *p, const int *st);

#endif
