/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * csv.c - RFC 4180 records with line/column positions.
 *
 * Why not libcsv: its callback interface reports neither the line nor the
 * column of a field, and the error messages we promise point at the byte
 * ("trace.csv:12:7: ...").  The grammar is small enough to keep exact.
 *
 * Invariants: 'line' counts newlines consumed so far + 1; every returned
 * field is NUL-terminated inside 'rec'; a record never spans into the next
 * except through a quoted newline.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"

void gs_csv_init(gs_csv *r, const char *buf, size_t len, int comments)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->line = 1;
    r->comments = comments;
    /* skip a UTF-8 byte order mark */
    if (len >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
        (unsigned char)buf[2] == 0xBF)
        r->pos = 3;
}

void gs_csv_release(gs_csv *r)
{
    free(r->rec);
    free(r->f);
    free(r->col);
    memset(r, 0, sizeof *r);
}

static int put(gs_csv *r, size_t *n, char ch)
{
    if (*n + 1 >= r->caprec) {
        size_t nc = r->caprec ? r->caprec * 2 : 256;
        char *p = realloc(r->rec, nc);
        if (!p) return GS_ENOMEM;
        r->rec = p;
        r->caprec = nc;
    }
    r->rec[(*n)++] = ch;
    return 0;
}

static int add_field(gs_csv *r, size_t off, int col)
{
    if (r->nf == r->capf) {
        size_t nc = r->capf ? r->capf * 2 : 16;
        char **f = realloc(r->f, nc * sizeof *f);
        if (!f) return GS_ENOMEM;
        r->f = f;
        int *c = realloc(r->col, nc * sizeof *c);
        if (!c) return GS_ENOMEM;
        r->col = c;
        r->capf = nc;
    }
    r->f[r->nf] = (char *)(uintptr_t)off; /* fixed up to pointers at the end */
    r->col[r->nf++] = col;
    return 0;
}

int gs_csv_next(gs_csv *r, gs_diag *d)
{
    const char *b = r->buf;
    /* skip blank and comment lines */
    for (;;) {
        if (r->pos >= r->len) return 0;
        size_t p = r->pos;
        while (p < r->len && (b[p] == ' ' || b[p] == '\t')) p++;
        if (p < r->len && (b[p] == '\n' || b[p] == '\r')) {
            if (b[p] == '\r' && p + 1 < r->len && b[p + 1] == '\n') p++;
            r->pos = p + 1;
            r->line++;
            continue;
        }
        if (p >= r->len) {
            r->pos = p;
            return 0;
        }
        if (r->comments && b[p] == '#') {
            while (p < r->len && b[p] != '\n') p++;
            r->pos = p < r->len ? p + 1 : p;
            r->line++;
            continue;
        }
        break;
    }
    r->nf = 0;
    r->rec_line = r->line;
    size_t n = 0;
    size_t line_start = r->pos;
    int rc;
    for (;;) { /* one field per iteration */
        int col = (int)(r->pos - line_start) + 1;
        size_t off = n;
        if (r->pos < r->len && b[r->pos] == '"') {
            int qline = r->line, qcol = col;
            r->pos++;
            for (;;) {
                if (r->pos >= r->len)
                    return gs_diag_set(d, GS_EPARSE, qline, qcol, "unterminated quoted field");
                char ch = b[r->pos++];
                if (ch == '"') {
                    if (r->pos < r->len && b[r->pos] == '"') {
                        r->pos++;
                        if ((rc = put(r, &n, '"'))) return rc;
                        continue;
                    }
                    break;
                }
                if (ch == '\n') {
                    r->line++;
                    line_start = r->pos;
                }
                if (ch == '\0') /* would cut the field short without a word */
                    return gs_diag_set(d, GS_EPARSE, r->line, (int)(r->pos - line_start),
                                       "NUL byte in input");
                if ((rc = put(r, &n, ch))) return rc;
            }
            if (r->pos < r->len && b[r->pos] != ',' && b[r->pos] != '\n' && b[r->pos] != '\r')
                return gs_diag_set(d, GS_EPARSE, r->line, (int)(r->pos - line_start) + 1,
                                   "unexpected character after closing quote");
        } else {
            while (r->pos < r->len && b[r->pos] != ',' && b[r->pos] != '\n' && b[r->pos] != '\r') {
                if (b[r->pos] == '\0')
                    return gs_diag_set(d, GS_EPARSE, r->line, (int)(r->pos - line_start) + 1,
                                       "NUL byte in input");
                if ((rc = put(r, &n, b[r->pos++]))) return rc;
            }
        }
        if ((rc = put(r, &n, '\0'))) return rc;
        if ((rc = add_field(r, off, col))) return rc;
        if (r->pos < r->len && b[r->pos] == ',') {
            r->pos++;
            continue;
        }
        /* end of record */
        if (r->pos < r->len && b[r->pos] == '\r') r->pos++;
        if (r->pos < r->len && b[r->pos] == '\n') r->pos++;
        r->line++;
        break;
    }
    for (size_t i = 0; i < r->nf; i++) r->f[i] = r->rec + (uintptr_t)r->f[i];
    return 1;
}
