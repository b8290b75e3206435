/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_events.c - libFuzzer harness for the cluster-events file of
 * `gsched sim --events` (time,node,down|up; src/sim/trace.c).
 *
 * The reader takes a path, so the input is written to a scratch file.
 * Accepted events have a time >= 0, a node name and a state; an error
 * names its line.
 */
#include "config.h"
#include "fuzz_util.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file("events.csv", data, size);
    gs_events ev;
    gs_diag d;
    gs_diag_init(&d, path);
    int rc = gs_events_load(path, &ev, &d);
    fuzz_check_diag(&d, rc);
    if (rc) {
        if (rc != GS_ENOMEM && d.line < 1) fuzz_die("events error without a line: %s", d.msg);
        if (ev.v || ev.n) fuzz_die("events kept after an error");
        return 0;
    }
    for (size_t i = 0; i < ev.n; i++) {
        if (ev.v[i].t < 0) fuzz_die("negative event time");
        if (!ev.v[i].node) fuzz_die("event without node");
        if (ev.v[i].down != 0 && ev.v[i].down != 1) fuzz_die("bad state");
    }
    if (strlen(ev.sha256) != 64) fuzz_die("no checksum");
    gs_events_release(&ev);
    return 0;
}
