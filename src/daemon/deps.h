/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deps.h - job dependencies as Slurm writes them (--dependency), parsed and
 * evaluated (not installed).
 *
 * Grammar: TYPE:ID[:ID...] terms joined by ',' (all must be satisfied) or
 * by '?' (any one suffices), not both; TYPE is after (the job started, or
 * ended without starting), afterany (it ended), afterok (it ended DONE),
 * afternotok (it ended FAILED, CANCELLED or REJECTED).  Slurm's other types
 * (singleton, aftercorr, afterburstbuffer) and its "+minutes" delays are
 * refused by name.  Pure functions: no I/O, no state.
 */
#ifndef GSCHED_DAEMON_DEPS_H
#define GSCHED_DAEMON_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include "gsched/gsched.h"

#define GSD_DEPS_MAX 64 /* job ids one dependency string may name */

typedef enum gsd_dep_type {
    GSD_DEP_AFTER,
    GSD_DEP_AFTERANY,
    GSD_DEP_AFTEROK,
    GSD_DEP_AFTERNOTOK
} gsd_dep_type;

typedef struct gsd_dep {
    gsd_dep_type type;
    int64_t id;
} gsd_dep;

typedef struct gsd_deps {
    gsd_dep v[GSD_DEPS_MAX];
    int n;
    int any; /* '?': one satisfied term suffices; else all must be */
} gsd_deps;

/* What one term, or the whole, says now. */
enum { GSD_DEP_WAIT = 0, GSD_DEP_MET = 1, GSD_DEP_NEVER = 2 };

/*
 * Parse s into out.  GS_EINVAL (or GS_ETOOBIG past GSD_DEPS_MAX ids) with d's
 * message naming the 1-based character position and what was expected
 * ("dependency: position 7: expected a job id after 'afterok:'").
 */
int gsd_deps_parse(const char *s, gsd_deps *out, gs_diag *d);
/* Canonical text ("afterok:3:4,afterany:5"). */
void gsd_deps_format(const gsd_deps *p, char *buf, size_t cap);
const char *gsd_dep_type_name(gsd_dep_type t);
/*
 * One term against the job it names: state (gs_job_state) and whether it
 * ever started.  GSD_DEP_WAIT / MET / NEVER.
 */
int gsd_dep_eval(gsd_dep_type t, int state, int started);
/* Combine the terms' answers st[0..n) by p->any. */
int gsd_deps_combine(const gsd_deps *p, const int *st);

#endif
