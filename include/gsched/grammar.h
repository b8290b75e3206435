/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/grammar.h - the one grammar of each small value that users type in several places:
 * durations, priorities and VC quotas.  Parameters (--set), job specs, CLI flags, scenario
 * files and traces all call these, so a form accepted in one place is accepted everywhere
 * with the same meaning.
 *
 * Errors are GS_EINVAL (malformed) or GS_ERANGE (too large / out of range), with a message in
 * diag (if given) saying what is wrong and where: diag->col is the 1-based column in the
 * string, and the message names it ("unknown unit 'x' at column 4").  Callers that know the
 * file and line wrap the message in their own.
 */
#ifndef GSCHED_GRAMMAR_H
#define GSCHED_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Duration, into microseconds.  Forms:
 *   NUMBER               a bare number, in units of bare_unit (GS_SEC for seconds,
 *                        60 * GS_SEC for Slurm's minutes)
 *   NUMBER UNIT ...      one or more parts, e.g. 90s, 1.5h, 1h30m, 500ms; units us, ms, s,
 *                        m or min, h, d.  NUMBER is decimal: 12, 1.5, .5, 1e3
 *   Slurm's forms        M:S, H:M:S, D-H, D-H:M, D-H:M:S (whole numbers; every field after
 *                        the first is 0-59, except the hours after "D-")
 * Negative durations are errors.  The largest is GS_DURATION_MAX.
 */
#define GS_DURATION_MAX ((gs_time)9000000000000000000LL)
int gs_parse_duration(const char *s, gs_time bare_unit, gs_time *out, gs_diag *diag);

/*
 * A whole number in [lo, hi], into *out: an optional sign, decimal digits with an optional
 * fraction and exponent that together name a whole number (12, 8.0, 1e3, 2.5e2), blanks
 * around it allowed.  GS_EINVAL when it is not a number or not whole ("1.5"), GS_ERANGE when
 * it is outside [lo, hi] ("1e30": out of range), exactly (no rounding through a double).
 */
int gs_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out, gs_diag *diag);

/*
 * Priority: prod (GS_PRIO_PROD), test (GS_PRIO_TEST), oppo or opportunistic
 * (GS_PRIO_OPPORTUNISTIC), case-insensitive; or an integer in [-1, max] (blanks around it and
 * a zero fraction, "8.0", are allowed: trace files write them).
 */
#define GS_PRIORITY_MAX 1000000 /* the max of traces, scenarios and job specs */
int gs_parse_priority(const char *s, int max, int *out, gs_diag *diag);
/* "prod", "test", "oppo" for the named values, else NULL. */
const char *gs_priority_name(int prio);

/*
 * VC quotas: "VC:GPUS[,VC:GPUS...]", GPUS a positive integer, VC a non-empty name without ':'
 * or ','.  An empty string is no quota; a trailing comma is allowed.  *out is malloc'ed (free
 * it with gs_quotas_release); GS_ENOMEM on allocation failure.
 */
typedef struct gs_quota {
    char *vc;
    int64_t gpus;
} gs_quota;
int gs_parse_quotas(const char *s, gs_quota **out, size_t *n, gs_diag *diag);
void gs_quotas_release(gs_quota *q, size_t n);

#ifdef __cplusplus
}
#endif
#endif
