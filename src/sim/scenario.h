/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scenario.h - scenario files: run a small timed experiment and check
 * expectations (format: docs/scenarios.md).
 */
#ifndef GSCHED_SCENARIO_H
#define GSCHED_SCENARIO_H

#include <stdio.h>

#include "sim.h"

/*
 * Run one scenario file; print one "ok"/"not ok" line per expectation to
 * 'out' and add to *passed / *failed.  Returns 0 when the scenario ran
 * (whatever the verdicts), or a GS_E* code with file:line:col in d for a
 * malformed scenario.
 */
int gs_scenario_run(const char *path, FILE *out, int *passed, int *failed, gs_diag *d);

#endif
