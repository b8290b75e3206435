/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/types.h - basic scalar types shared by every public header.
 *
 * Time is an integer count of microseconds (gs_time).  In the simulator it is
 * virtual time since the start of the trace; in the daemon it is wall-clock
 * time since the Unix epoch.  The core never reads a clock: every call that
 * needs "now" takes it as an argument.
 */
#ifndef GSCHED_TYPES_H
#define GSCHED_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t gs_time;

#define GS_USEC      ((gs_time)1)
#define GS_MSEC      ((gs_time)1000)
#define GS_SEC       ((gs_time)1000000)
#define GS_TIME_MAX  INT64_MAX
#define GS_TIME_NONE INT64_MIN /* "never happened" */

/* Seconds (double) <-> gs_time, rounding to the nearest microsecond. */
static inline gs_time gs_time_from_sec(double s)
{
    double us = s * 1e6;
    return (gs_time)(us < 0 ? us - 0.5 : us + 0.5);
}
static inline double gs_time_to_sec(gs_time t)
{
    return (double)t / 1e6;
}

/*
 * A small deterministic PRNG (xoshiro256**, seeded through splitmix64) owned
 * by whoever needs randomness.  Same seed, same sequence, on every platform.
 */
typedef struct gs_rng {
    uint64_t s[4];
} gs_rng;

void gs_rng_seed(gs_rng *r, uint64_t seed);
uint64_t gs_rng_next(gs_rng *r);
/* Uniform integer in [0, n); n > 0. */
uint64_t gs_rng_below(gs_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double gs_rng_double(gs_rng *r);

#ifdef __cplusplus
}
#endif
#endif
