/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * yaml.c - strict YAML access on top of libfyaml with positioned errors.
 * Invariant: every error returned names a position when the node has one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "yaml.h"

/*
 * 1 and the position and value of the first byte that is not part of
 * well-formed UTF-8 (or is a NUL); 0 when the buffer is clean.  YAML text is
 * UTF-8 here; libfyaml 0.7.12 loops forever on some malformed input (e.g.
 * the two bytes "%\x9b"), so such input never reaches it.
 */
static int bad_utf8(const unsigned char *s, size_t len, int *line, int *col, unsigned *byte)
{
    int ln = 1, cl = 1;
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n = c < 0x80             ? 1
                   : (c & 0xE0) == 0xC0 ? 2
                   : (c & 0xF0) == 0xE0 ? 3
                   : (c & 0xF8) == 0xF0 ? 4
                                        : 0;
        int ok = n && c != 0 && i + n <= len && !(n == 2 && c < 0xC2) && !(n == 4 && c > 0xF4);
        for (size_t k = 1; ok && k < n; k++) ok = (s[i + k] & 0xC0) == 0x80;
        if (ok && n == 3) {
            unsigned cp = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6);
            ok = cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF);
        }
        if (ok && n == 4) {
            unsigned cp = ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12);
            ok = cp >= 0x10000 && cp <= 0x10FFFF;
        }
        if (!ok) {
            *line = ln;
            *col = cl;
            *byte = c;
            return 1;
        }
        if (c == '\n')
            ln++, cl = 1;
        else
            cl++;
        i += n;
    }
    return 0;
}

int gs_yaml_load(gs_yaml *y, const char *file, const char *buf, size_t len, gs_diag *d)
{
    memset(y, 0, sizeof *y);
    y->file = file;
    int bl, bc;
    unsigned byte;
    if (bad_utf8((const unsigned char *)buf, len, &bl, &bc, &byte))
        return gs_diag_set(d, GS_EPARSE, bl, bc, "invalid YAML: byte 0x%02x is not UTF-8 text",
                           byte);
    struct fy_diag_cfg dc;
    fy_diag_cfg_default(&dc);
    dc.fp = NULL;
    dc.output_fn = NULL;
    dc.colorize = false;
    y->diag = fy_diag_create(&dc);
    if (!y->diag) return GS_ENOMEM;
    fy_diag_set_collect_errors(y->diag, true);
    struct fy_parse_cfg pc = {0};
    pc.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG;
    pc.diag = y->diag;
    y->doc = fy_document_build_from_string(&pc, buf, len);
    if (!y->doc || fy_diag_got_error(y->diag)) {
        void *it = NULL;
        struct fy_diag_error *e = fy_diag_errors_iterate(y->diag, &it);
        int rc;
        /* libfyaml's collected errors are 1-based already (node marks are 0-based) */
        if (e)
            rc = gs_diag_set(d, GS_EPARSE, e->line > 0 ? e->line : 0, e->column > 0 ? e->column : 0,
                             "invalid YAML: %s", e->msg ? e->msg : "syntax error");
        else
            rc = gs_diag_set(d, GS_EPARSE, 0, 0, "invalid YAML");
        gs_yaml_release(y);
        return rc;
    }
    if (!fy_document_root(y->doc)) {
        gs_yaml_release(y);
        return gs_diag_set(d, GS_EPARSE, 1, 1, "empty document");
    }
    return 0;
}

void gs_yaml_release(gs_yaml *y)
{
    if (y->doc) fy_document_destroy(y->doc);
    if (y->diag) fy_diag_destroy(y->diag);
    y->doc = NULL;
    y->diag = NULL;
}

struct fy_node *gs_yaml_root(const gs_yaml *y)
{
    return fy_document_root(y->doc);
}

void gs_yaml_pos(struct fy_node *n, int *line, int *col)
{
    *line = *col = 0;
    while (n) {
        if (fy_node_is_scalar(n)) {
            struct fy_token *t = fy_node_get_scalar_token(n);
            const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
            if (m) {
                *line = m->line + 1;
                *col = m->column + 1;
            }
            return;
        }
        /* a collection: use its first key or item */
        void *it = NULL;
        if (fy_node_is_mapping(n)) {
            struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
            n = p ? fy_node_pair_key(p) : NULL;
        } else if (fy_node_is_sequence(n)) {
            n = fy_node_sequence_iterate(n, &it);
        } else {
            return;
        }
    }
}

int gs_yaml_err(gs_diag *d, struct fy_node *n, int err, const char *fmt, ...)
{
    if (!d) return err;
    int line = 0, col = 0;
    gs_yaml_pos(n, &line, &col);
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return err;
}

struct fy_node *gs_yaml_get(struct fy_node *m, const char *key)
{
    if (!m || !fy_node_is_mapping(m)) return NULL;
    return fy_node_mapping_lookup_by_string(m, key, strlen(key));
}

int gs_yaml_is_null(struct fy_node *n)
{
    if (!n || fy_node_is_null(n)) return 1;
    if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_PLAIN) return 0;
    const char *s = fy_node_get_scalar0(n);
    return !s || !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

const char *gs_yaml_str(struct fy_node *n)
{
    if (!n || !fy_node_is_scalar(n)) return NULL;
    return fy_node_get_scalar0(n);
}

int gs_yaml_int(struct fy_node *n, const char *what, int64_t lo, int64_t hi, int64_t *out,
                gs_diag *d)
{
    const char *s = gs_yaml_str(n);
    if (!s) return gs_yaml_err(d, n, GS_EPARSE, "'%s' must be an integer", what);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return gs_yaml_err(d, n, GS_EPARSE, "'%s' must be an integer, got '%s'", what, s);
    if (v < lo || v > hi)
        return gs_yaml_err(d, n, GS_ERANGE, "'%s' must be between %lld and %lld, got %lld", what,
                           (long long)lo, (long long)hi, v);
    *out = v;
    return 0;
}

int gs_yaml_bool(struct fy_node *n, const char *what, int *out, gs_diag *d)
{
    const char *s = gs_yaml_str(n);
    if (s) {
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") ||
            !strcmp(s, "1"))
            return *out = 1, 0;
        if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off") ||
            !strcmp(s, "0"))
            return *out = 0, 0;
    }
    return gs_yaml_err(d, n, GS_EPARSE, "'%s' must be true or false", what);
}

int gs_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    int row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int v = prev + cost;
            if (row[j] + 1 < v) v = row[j] + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            prev = cur;
        }
    }
    return row[lb];
}

int gs_yaml_check_keys(struct fy_node *m, const char *const *allowed, const char *what, gs_diag *d)
{
    if (!m || !fy_node_is_mapping(m))
        return gs_yaml_err(d, m, GS_EPARSE, "%s must be a mapping", what);
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(m, &it))) {
        struct fy_node *k = fy_node_pair_key(p);
        const char *ks = gs_yaml_str(k);
        if (!ks) return gs_yaml_err(d, k, GS_EPARSE, "%s: keys must be plain strings", what);
        int ok = 0;
        const char *best = NULL;
        int bestd = 3;
        for (size_t i = 0; allowed[i]; i++) {
            if (!strcmp(ks, allowed[i])) {
                ok = 1;
                break;
            }
            int dist = gs_edit_distance(ks, allowed[i]);
            if (dist < bestd) bestd = dist, best = allowed[i];
        }
        if (!ok) {
            if (best)
                return gs_yaml_err(d, k, GS_EPARSE, "unknown field '%s' in %s (did you mean '%s'?)",
                                   ks, what, best);
            return gs_yaml_err(d, k, GS_EPARSE, "unknown field '%s' in %s", ks, what);
        }
    }
    return 0;
}
