/* SPDX-License-Identifier: GPL-2.0-or-later */
/* harness.c - runs a table of tests and prints TAP lines and a summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int t_failed_now;

#ifndef GSCHED_SOURCE_DIR
#define GSCHED_SOURCE_DIR "."
#endif

const char *test_src(const char *rel)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", GSCHED_SOURCE_DIR, rel);
    return buf[k];
}

int test_main(int argc, char **argv, const test_case *tests, size_t n)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0, run = 0;
    for (size_t i = 0; i < n; i++)
        if (!filter || strstr(tests[i].name, filter)) run++;
    printf("1..%d\n", run);
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        t_failed_now = 0;
        tests[i].fn();
        fflush(stderr);
        k++;
        if (t_failed_now) {
            printf("not ok %d - %s\n", k, tests[i].name);
            failed++;
        } else {
            printf("ok %d - %s\n", k, tests[i].name);
            passed++;
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
