/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_csv.c - libFuzzer harness for the CSV reader (src/config/csv.c).
 *
 * Checks, for any bytes: every record ends (the reader always advances),
 * lines never go backwards, columns are >= 1, fields lie inside the record
 * buffer and are NUL-terminated, and errors carry a message and position.
 * Both modes (with and without '#' comment lines) are exercised.
 */
#include "config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int comments = 0; comments <= 1; comments++) {
        gs_csv r;
        gs_diag d;
        gs_diag_init(&d, "fuzz.csv");
        gs_csv_init(&r, (const char *)data, size, comments);
        int rc, last_line = 0;
        size_t records = 0, last_pos = r.pos;
        while ((rc = gs_csv_next(&r, &d)) > 0) {
            if (++records > size + 1) fuzz_die("more records than bytes");
            if (r.pos <= last_pos && size) fuzz_die("reader did not advance");
            last_pos = r.pos;
            if (r.rec_line < 1 || r.rec_line < last_line) fuzz_die("line went back");
            last_line = r.rec_line;
            if (r.nf < 1) fuzz_die("record without fields");
            for (size_t i = 0; i < r.nf; i++) {
                if (r.col[i] < 1) fuzz_die("column %d", r.col[i]);
                if (r.f[i] < r.rec || r.f[i] >= r.rec + r.caprec) fuzz_die("field outside record");
                if (!memchr(r.f[i], '\0', (size_t)(r.rec + r.caprec - r.f[i])))
                    fuzz_die("field not terminated");
            }
        }
        fuzz_check_diag(&d, rc);
        if (rc < 0 && d.line < 1) fuzz_die("CSV error without a line");
        gs_csv_release(&r);
    }
    return 0;
}
