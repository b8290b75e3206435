/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_spec.c - libFuzzer harness for the live job-spec parser
 * (src/daemon/spec.c): YAML or JSON bytes, as a request body or a spec file.
 *
 * The input is handed over in a buffer of exactly its size (no terminating
 * NUL), so a read past 'len' is caught by ASan.  Invariants checked:
 *  - an error has a negative GS_E* code, a message and a field name that is
 *    a string (possibly empty), and leaves nothing allocated;
 *  - an accepted spec passes gsd_spec_validate(), its canonical JSON parses
 *    back to a spec whose canonical JSON is byte-identical (the daemon stores
 *    the canonical form and re-parses it after a restart), and it converts
 *    to a core job spec with at least one GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_spec: invariant broken: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    char *buf = malloc(size ? size : 1);
    if (!buf) abort();
    if (size) memcpy(buf, data, size);
    gsd_spec s;
    gs_diag d;
    gs_diag_init(&d, "fuzz");
    const char *field = NULL;
    int rc = gsd_spec_parse("fuzz", buf, size, &s, &d, &field);
    free(buf);
    if (rc) {
        if (rc > 0) die("positive error code", NULL);
        if (!d.msg[0]) die("error without a message", NULL);
        if (!memchr(d.msg, '\0', sizeof d.msg)) die("unterminated message", NULL);
        if (!field) die("no field name on error", d.msg);
        if (d.line < 0 || d.col < 0) die("negative position", d.msg);
        gsd_spec_release(&s); /* must be a no-op on a released spec */
        return 0;
    }
    gs_diag_init(&d, "fuzz");
    if (gsd_spec_validate(&s, &d, &field)) die("accepted spec fails validation", d.msg);
    if (s.ntasks < 1 || s.gpus_per_task < 1 || (long)s.ntasks * s.gpus_per_task > GSD_MAX_GPUS)
        die("task/GPU counts out of range", NULL);
    if (!s.shell && !(s.argv && s.argc > 0)) die("no command", NULL);
    char *j1 = gsd_spec_to_json(&s);
    if (!j1) die("canonical JSON failed", NULL);
    gsd_spec s2;
    gs_diag_init(&d, "canonical");
    if (gsd_spec_parse("canonical", j1, strlen(j1), &s2, &d, &field))
        die("canonical JSON does not parse back", d.msg);
    char *j2 = gsd_spec_to_json(&s2);
    if (!j2 || strcmp(j1, j2)) die("canonical JSON is not stable", j1);
    gs_job_spec js;
    gsd_spec_job(&s, 3600 * GS_SEC, &js);
    if (js.ntasks < 1 || js.gpus_per_task < 1) die("core job spec without GPUs", j1);
    free(j1);
    free(j2);
    gsd_spec_release(&s2);
    gsd_spec_release(&s);
    return 0;
}
