/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_scenario.c - libFuzzer harness for scenario files (src/sim/scenario.c):
 * YAML with a cluster (inline HiveD config, shorthand or a file), a policy,
 * parameters, jobs, node events and expectations.
 *
 * The input is written to a scratch directory that also holds clusters/
 * (a link to tests/scenarios/clusters), so the bundled scenarios work as
 * seeds.  gs_scenario_run checks gs_engine_check() at every instant itself
 * and returns GS_EINTERNAL when an invariant breaks (or the run never ends):
 * that is a bug here; a malformed scenario must come back with a message.
 */
#include "fuzz_util.h"
#include "scenario.h"

#ifndef GSCHED_SOURCE_DIR
#define GSCHED_SOURCE_DIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    static int linked;
    if (!linked) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "ln -sfn '%s/tests/scenarios/clusters' '%s/clusters'",
                 GSCHED_SOURCE_DIR, fuzz_dir());
        if (system(cmd) != 0) abort();
        devnull = fopen("/dev/null", "w");
        if (!devnull) abort();
        linked = 1;
    }
    if (size > 16384) return 0;
    const char *path = fuzz_write_file("scenario.yaml", data, size);
    int passed = 0, failed = 0;
    gs_diag d;
    int rc = gs_scenario_run(path, devnull, &passed, &failed, &d);
    fuzz_check_diag(&d, rc);
    if (rc == GS_EINTERNAL) fuzz_die("scenario run broke an engine invariant: %s", d.msg);
    return 0;
}
