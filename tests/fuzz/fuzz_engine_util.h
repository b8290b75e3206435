/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_engine_util.h - run an engine to the end while checking every
 * invariant gs_engine_check() knows, for the engine-level harnesses.
 */
#ifndef GSCHED_FUZZ_ENGINE_UTIL_H
#define GSCHED_FUZZ_ENGINE_UTIL_H

#include "fuzz_util.h"
#include "gsched/gsched.h"

/*
 * Step until idle.  A run that does not end within 'max_steps' instants is a
 * hang (the inputs are small); a negative step result or a failed check is a
 * bug.  With 'require_final' (every node healthy at the end) every job must
 * then be final and no GPU held.
 */
static inline void fuzz_run_engine(gs_engine *e, long max_steps, int require_final,
                                   const char *what)
{
    gs_diag d;
    long steps = 0;
    int rc;
    gs_time last = gs_engine_now(e);
    while ((rc = gs_engine_step(e)) > 0) {
        gs_diag_init(&d, NULL);
        if (gs_engine_check(e, &d))
            fuzz_die("%s: gs_engine_check at t=%lld: %s", what, (long long)gs_engine_now(e), d.msg);
        if (gs_engine_now(e) < last) fuzz_die("%s: time went back", what);
        last = gs_engine_now(e);
        if (++steps > max_steps)
            fuzz_die("%s: no end after %ld instants (t=%lld)", what, steps,
                     (long long)gs_engine_now(e));
    }
    if (rc < 0) fuzz_die("%s: gs_engine_step returned %d", what, rc);
    if (!require_final) return;
    size_t n = gs_engine_njobs(e);
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (!gs_job_state_final(j->state))
            fuzz_die("%s: job %lld ends the run in state %s", what, (long long)j->id,
                     gs_job_state_name(j->state));
        if (j->state == GS_JOB_DONE && j->end < j->submit)
            fuzz_die("%s: job %lld ends before it arrives", what, (long long)j->id);
    }
    if (gs_engine_allocated(e) != 0) fuzz_die("%s: GPUs still allocated at the end", what);
}

#endif
