/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_trace.c - libFuzzer harness for the trace readers (src/sim/trace.c):
 * Tiresias CSV, Philly per-job CSV, the Pollux workload CSV (parsed only: its
 * durations come from the application traces, gs_trace_attach_apps), the
 * ElasticFlow CSV, Gavel's tab-separated traces and the native gsched CSV,
 * detected from the header exactly as `gsched sim --trace` does.
 *
 * On success it checks the reader's documented invariants: every job has
 * >= 1 task of >= 1 GPU, non-negative submit and duration, sorted submit
 * times, unique ids; Gavel's jobs >= 1 step, a positive weight and a model.
 * On failure: a message and a line.
 */
#include "config.h"
#include "fuzz_util.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, "fuzz.csv");
    int rc = gs_trace_parse("fuzz.csv", (const char *)data, size, &t, &d);
    fuzz_check_diag(&d, rc);
    if (rc) {
        if (rc != GS_ENOMEM && d.line < 1) fuzz_die("trace error without a line: %s", d.msg);
        return 0;
    }
    if (t.n == 0) fuzz_die("success without jobs");
    for (size_t i = 0; i < t.n; i++) {
        const gs_job_spec *s = &t.jobs[i];
        if (s->ntasks < 1 || s->gpus_per_task < 1) fuzz_die("job %zu: empty gang", i);
        if ((int64_t)s->ntasks * s->gpus_per_task > INT32_MAX)
            fuzz_die("job %zu: GPU count overflows", i);
        if (s->submit < 0 || s->duration < 0) fuzz_die("job %zu: negative time", i);
        if (i && s->submit < t.jobs[i - 1].submit) fuzz_die("jobs not sorted");
        if (s->id < 0) fuzz_die("negative id");
        if (t.format == GS_TRACE_GAVEL && (!(s->steps >= 1) || !(s->weight > 0) || !s->model))
            fuzz_die("job %zu: Gavel job without steps, weight or model", i);
        for (size_t k = 0; k < i && t.n < 64; k++)
            if (t.jobs[k].id == s->id) fuzz_die("duplicate id %lld", (long long)s->id);
    }
    gs_trace_release(&t);
    return 0;
}
