/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobarray.c - the parser of job array index lists (gsched/jobarray.h).
 *
 * Invariants: a list that parses has 1..GS_ARRAY_MAX distinct indices in
 * [0, GS_ARRAY_INDEX_MAX], ascending, and a throttle in [0, GS_ARRAY_MAX];
 * the work done is bounded by the input's length times GS_ARRAY_MAX (a huge
 * range is refused as soon as it has too many distinct indices).  No I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/jobarray.h"

void gs_array_release(gs_array *a)
{
    free(a->idx);
    memset(a, 0, sizeof *a);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sort and drop duplicates: the new count. */
static size_t uniq(int32_t *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_i32);
    size_t w = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[w - 1]) v[w++] = v[i];
    return w;
}

/* A decimal number at *p (digits only) into *out; -1 if none or past GS_ARRAY_INDEX_MAX. */
static int num(const char **p, long *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9') return -1;
    long v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > GS_ARRAY_INDEX_MAX) return -1;
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

int gs_array_parse(const char *s, gs_array *out, gs_diag *d)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "array: empty (give e.g. 0-7, 1,3,5, 0-15:2, 0-99%%8)");
    /* room for 2 * GS_ARRAY_MAX indices: compacted whenever full, so duplicates never make
     * a valid list fail and a list with too many distinct indices stops early */
    size_t cap = 2 * GS_ARRAY_MAX, n = 0;
    int32_t *v = malloc(cap * sizeof *v);
    if (!v) return gs_diag_set(d, GS_ENOMEM, 0, 0, "array: out of memory");
    const char *p = s;
    int rc = 0;
    for (;;) {
        long lo, hi, step = 1;
        if (num(&p, &lo)) goto syntax;
        hi = lo;
        if (*p == '-') {
            p++;
            if (num(&p, &hi) || hi < lo) goto syntax;
            if (*p == ':') {
                p++;
                if (num(&p, &step) || step < 1) goto syntax;
            }
        }
        for (long i = lo; i <= hi; i += step) {
            if (n == cap) {
                n = uniq(v, n);
                if (n > GS_ARRAY_MAX) goto toobig;
            }
            v[n++] = (int32_t)i;
        }
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (*p == '%') {
        p++;
        long m;
        if (num(&p, &m) || m < 1 || m > GS_ARRAY_MAX || *p) {
            rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                             "array '%s': after '%%' give how many elements may run at once "
                             "(1-%d)",
                             s, GS_ARRAY_MAX);
            goto fail;
        }
        out->throttle = (int32_t)m;
    }
    if (*p) goto syntax;
    n = uniq(v, n);
    if (n > GS_ARRAY_MAX) goto toobig;
    out->idx = v;
    out->n = n;
    return 0;
syntax:
    rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                     "array '%s' is not an index list (0-7, 1,3,5, 0-15:2, then an optional %%N; "
                     "indices 0..%d)",
                     s, GS_ARRAY_INDEX_MAX);
    goto fail;
toobig:
    rc = gs_diag_set(d, GS_ETOOBIG, 0, 0, "array '%s' has more than %d elements", s, GS_ARRAY_MAX);
fail:
    free(v);
    out->throttle = 0;
    return rc;
}
