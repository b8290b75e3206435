/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/jobarray.h - job array index lists as Slurm writes them (sbatch --array), shared by
 * the CLI, the daemon (which expands an array in one submission) and the simulator.
 *
 * Grammar: comma-separated terms, each an index I, a range A-B or a stepped range A-B:S
 * (indices 0..GS_ARRAY_INDEX_MAX), optionally followed by "%N": at most N elements running
 * (or about to start) at once, 1 <= N <= GS_ARRAY_MAX.  The indices are sorted ascending
 * without duplicates; at most GS_ARRAY_MAX of them (Slurm's default MaxArraySize is 1001).
 * Pure: no I/O, no state.
 */
#ifndef GSCHED_JOBARRAY_H
#define GSCHED_JOBARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "gsched/error.h"

#define GS_ARRAY_MAX       1000    /* elements of one array */
#define GS_ARRAY_INDEX_MAX 1000000 /* largest index */

typedef struct gs_array {
    int32_t *idx; /* n indices, ascending, distinct (malloc'ed) */
    size_t n;
    int32_t throttle; /* the "%N": at most N elements running or starting; 0 = no limit */
} gs_array;

/*
 * Parse s into out (released with gs_array_release, also after an error).  GS_EINVAL with d's
 * message quoting s and saying what was expected, GS_ETOOBIG past GS_ARRAY_MAX elements,
 * GS_ENOMEM.
 */
int gs_array_parse(const char *s, gs_array *out, gs_diag *d);
void gs_array_release(gs_array *a);

#endif
