/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_scenario.c - `gsched scenario FILE...`: run scenario files and check
 * their expectations (docs/scenarios.md).  Exit 0 when every expectation
 * holds, 1 when one fails, 2 for a malformed scenario.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "scenario.h"

int cmd_scenario(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: gsched scenario FILE...\n"
                "Runs each scenario (a cluster, a policy, timed jobs and events) in the\n"
                "simulator and checks its expectations; see docs/scenarios.md.\n");
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    int passed = 0, failed = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        gs_diag d;
        if (gs_scenario_run(argv[i], stdout, &passed, &failed, &d)) {
            cli_diag(&d);
            bad = 1;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    if (bad) return EXIT_USAGE;
    return failed ? EXIT_RUNTIME : EXIT_OK;
}
