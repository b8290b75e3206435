/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_util.h - helpers shared by the libFuzzer harnesses (tests/fuzz).
 *
 * Harnesses feed fuzzer bytes to the parsers exactly as the programs do.
 * Some readers take a path (the events file, scenario files): for them the
 * bytes are written to a private file under $TMPDIR (default /tmp) first.
 * A broken invariant is reported with fuzz_die(), which aborts so libFuzzer
 * saves the input.
 */
#ifndef GSCHED_FUZZ_UTIL_H
#define GSCHED_FUZZ_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gsched/error.h"

__attribute__((noreturn, format(printf, 1, 2))) static inline void fuzz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* A parser that failed must say why: a message, and (for input errors) a position. */
static inline void fuzz_check_diag(const gs_diag *d, int rc)
{
    if (rc >= 0) return;
    if (rc == GS_ENOMEM) return;
    if (!d->msg[0]) fuzz_die("error %d without a message", rc);
    if (d->line < 0 || d->col < 0) fuzz_die("negative position %d:%d", d->line, d->col);
    if (!memchr(d->msg, '\0', sizeof d->msg)) fuzz_die("unterminated message");
}

/* NUL-terminated private copy of the input (parsers may rely on it). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Path of this process's scratch directory (created once). */
static inline const char *fuzz_dir(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/gsched-fuzz-%ld", t && *t ? t : "/tmp", (long)getpid());
        char cmd[600];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
        if (system(cmd) != 0) abort();
    }
    return dir;
}

/* Write the input to DIR/name and return the path (static buffer). */
static inline const char *fuzz_write_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    return path;
}

#endif
