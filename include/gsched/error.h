/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/error.h - the one list of error codes, and parser diagnostics.
 *
 * Every libgsched function that can fail returns 0 on success or a negative
 * GS_E* code from the table below.  The table is an X-macro, so the enum,
 * gs_strerror() and gs_err_name() cannot drift apart.  Codes are stable: the
 * daemon's problem+json bodies and the CLI print the name (e.g. "GS_ENOFIT").
 *
 * Parsers (cluster configs, traces, job specs) additionally fill a gs_diag
 * owned by the caller with file, line, column and a message, which programs
 * print as "file:line:col: message".
 */
#ifndef GSCHED_ERROR_H
#define GSCHED_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XX(name, value, message) */
#define GS_ERRNO_MAP(XX)                                         \
    XX(EINVAL, -1, "invalid argument")                           \
    XX(ENOMEM, -2, "out of memory")                              \
    XX(EIO, -3, "input/output error")                            \
    XX(ENOENT, -4, "no such file or object")                     \
    XX(EPARSE, -5, "malformed input")                            \
    XX(ERANGE, -6, "value out of range")                         \
    XX(ENOFIT, -7, "resources do not fit")                       \
    XX(ENEVER, -8, "request can never fit this cluster")         \
    XX(ESTATE, -9, "operation not allowed in the current state") \
    XX(ECONFLICT, -10, "conflicting request")                    \
    XX(EUNKNOWN, -11, "unknown name")                            \
    XX(EQUOTA, -12, "over quota")                                \
    XX(EEXIST, -13, "already exists")                            \
    XX(EPERM, -14, "permission denied")                          \
    XX(ETOOBIG, -15, "request too large")                        \
    XX(EUNSUPPORTED, -16, "not supported")                       \
    XX(EINTERNAL, -17, "internal error")

typedef enum gs_error {
    GS_OK = 0,
#define GS__ERR_ENUM(name, val, msg) GS_##name = (val),
    GS_ERRNO_MAP(GS__ERR_ENUM)
#undef GS__ERR_ENUM
} gs_error;

/* Human-readable message for an error code; never NULL. */
const char *gs_strerror(int err);
/* Stable symbolic name ("GS_ENOFIT"); never NULL ("GS_E?" when unknown). */
const char *gs_err_name(int err);

/*
 * A diagnostic filled by parsers.  Caller-allocated; 'file' is borrowed and
 * must outlive the diag.  line/col are 1-based, 0 when unknown.
 */
typedef struct gs_diag {
    const char *file;
    int line;
    int col;
    char msg[512];
} gs_diag;

/* Reset a diag to "no error" for the given file name (may be NULL). */
void gs_diag_init(gs_diag *d, const char *file);
/*
 * Record a message (printf-style) at line/col.  d may be NULL.  Always
 * returns 'err' so parsers can write "return gs_diag_set(d, GS_EPARSE, ...)".
 */
int gs_diag_set(gs_diag *d, int err, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Format "file:line:col: message" (omitting unknown parts) into buf. */
void gs_diag_format(const gs_diag *d, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
