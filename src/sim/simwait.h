/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * simwait.h - the simulator's stage before the queue: trace and scenario jobs held (until a
 * time, or until a `release` event), waiting on other jobs (a Slurm dependency,
 * gsched/jobdeps.h), or elements of a throttled job array - what src/daemon/wait.c does live.
 */
#ifndef GSCHED_SIM_SIMWAIT_H
#define GSCHED_SIM_SIMWAIT_H

#include "gsched/gsched.h"

typedef struct gs_simwait gs_simwait;

/* Hold values: not held, or held until a release event. */
#define GS_SIMWAIT_NOHOLD GS_TIME_NONE
#define GS_SIMWAIT_HELD   GS_TIME_MAX

/*
 * Job id's waiting conditions (*w created on first use): dep (NULL = none; parsed, GS_EINVAL
 * with d set), hold (GS_SIMWAIT_NOHOLD, GS_SIMWAIT_HELD or the time it is released),
 * array_id (0 = none) and throttle (at most that many elements of the array running or
 * starting, 0 = no limit; the elements wait in id order).  A job with none of them is not
 * added.  GS_EEXIST when id was added already.
 */
int gs_simwait_add(gs_simwait **w, int64_t id, const char *dep, gs_time hold, int64_t array_id,
                   int32_t throttle, gs_diag *d);
/* Whether job id is in the stage (it must be added with gs_engine_add_job_deferred). */
int gs_simwait_has(const gs_simwait *w, int64_t id);
/* A release event of this run (after gs_simwait_bind): job id's hold ends at t (GS_ENOENT
 * when it is not in the stage). */
int gs_simwait_release(gs_simwait *w, int64_t id, gs_time t);
/*
 * Once every job is in the engine (each run: it starts the stage afresh, so one trace serves
 * the runs of several policies): the jobs each term names must exist (GS_EINVAL naming
 * them, else).  Then after every engine step (and once before the first): jobs whose
 * dependencies are satisfied and whose hold has ended arrive (gs_engine_release_at, at
 * max(submit, hold end, now)); a dependency that can never be satisfied cancels the job
 * (reason DependencyNeverSatisfied, Slurm's --kill-on-invalid-dep=yes).
 */
int gs_simwait_bind(gs_simwait *w, gs_engine *e, gs_diag *d);
int gs_simwait_check(gs_simwait *w, gs_engine *e);
/* The run ended: jobs still waiting (held with no release, a dependency on a job that never
 * ended) are cancelled ("never released"), so every job ends. */
int gs_simwait_finish(gs_simwait *w, gs_engine *e);
void gs_simwait_destroy(gs_simwait *w);

#endif
