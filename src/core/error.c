/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * error.c - error names/messages from the GS_ERRNO_MAP table, and diags.
 * Invariant: every code in the table has exactly one name and message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gsched/error.h"

const char *gs_strerror(int err)
{
    switch (err) {
    case 0: return "success";
#define GS__ERR_MSG(name, val, msg) \
    case val: return msg;
        GS_ERRNO_MAP(GS__ERR_MSG)
#undef GS__ERR_MSG
    default: return "unknown error";
    }
}

const char *gs_err_name(int err)
{
    switch (err) {
    case 0: return "GS_OK";
#define GS__ERR_NAME(name, val, msg) \
    case val: return "GS_" #name;
        GS_ERRNO_MAP(GS__ERR_NAME)
#undef GS__ERR_NAME
    default: return "GS_E?";
    }
}

void gs_diag_init(gs_diag *d, const char *file)
{
    if (!d) return;
    d->file = file;
    d->line = 0;
    d->col = 0;
    d->msg[0] = '\0';
}

int gs_diag_set(gs_diag *d, int err, int line, int col, const char *fmt, ...)
{
    if (!d) return err;
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return err;
}

void gs_diag_format(const gs_diag *d, char *buf, size_t cap)
{
    if (!cap) return;
    const char *msg = d->msg[0] ? d->msg : "error";
    if (d->file && d->line > 0 && d->col > 0)
        snprintf(buf, cap, "%s:%d:%d: %s", d->file, d->line, d->col, msg);
    else if (d->file && d->line > 0)
        snprintf(buf, cap, "%s:%d: %s", d->file, d->line, msg);
    else if (d->file)
        snprintf(buf, cap, "%s: %s", d->file, msg);
    else
        snprintf(buf, cap, "%s", msg);
}
