/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * grammar.c - the one parser of durations, whole numbers, priorities and VC quotas
 * (gsched/grammar.h).
 * Invariants: a value is either fully consumed or rejected (no trailing garbage); every
 * rejection names the column where parsing stopped; *out is written only on success; no
 * locale- or state-dependent parsing beyond strtod/strtoll on an already validated span.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gsched/grammar.h"
#include "gsched/job.h"

#define COL(p, s) ((int)((p) - (s)) + 1)

#define SLURM_FORMS " (Slurm forms: M:S, H:M:S, D-H, D-H:M, D-H:M:S)"

/* "WHAT at column N[HINT]", N the column of p in s */
static int err_hint(gs_diag *d, int err, const char *s, const char *p, const char *what,
                    const char *hint)
{
    return gs_diag_set(d, err, 0, COL(p, s), "%s at column %d%s", what, COL(p, s), hint);
}

static int err_at(gs_diag *d, int err, const char *s, const char *p, const char *what)
{
    return err_hint(d, err, s, p, what, "");
}

/* ---- durations ------------------------------------------------------------------------- */

static const struct {
    const char *name;
    double us;
} units[] = {{"us", 1},   {"ms", 1e3},   {"min", 60e6}, {"s", 1e6},
             {"m", 60e6}, {"h", 3600e6}, {"d", 86400e6}};

/* span of a decimal number at p (digits, '.', exponent); 0 when there is none */
static size_t number_span(const char *p)
{
    const char *q = p;
    size_t digits = 0;
    while (isdigit((unsigned char)*q)) q++, digits++;
    if (*q == '.') {
        q++;
        while (isdigit((unsigned char)*q)) q++, digits++;
    }
    if (!digits) return 0;
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1;
        if (*e == '+' || *e == '-') e++;
        if (isdigit((unsigned char)*e)) {
            while (isdigit((unsigned char)*e)) e++;
            q = e;
        }
    }
    return (size_t)(q - p);
}

/* the value of the number spanning [p, p+len) */
static double number_value(const char *p, size_t len)
{
    char buf[64];
    if (len < sizeof buf) { /* a copy: strtod would read "0x10" as hexadecimal */
        memcpy(buf, p, len);
        buf[len] = '\0';
        return strtod(buf, NULL);
    }
    /* a long span is no hexadecimal prefix ("0x" ends a span after "0"), so strtod stops at
     * its end: digits[.digits][e[+-]digits] is followed by something that cannot extend it */
    return strtod(p, NULL);
}

/* "NUMBER UNIT ..." or a bare NUMBER */
static int unit_form(const char *s, gs_time bare_unit, gs_time *out, gs_diag *d)
{
    const char *p = s;
    double total = 0;
    int64_t sum = 0;
    while (*p) {
        size_t len = number_span(p);
        if (!len) return err_at(d, GS_EINVAL, s, p, "expected a number");
        double v = number_value(p, len);
        const char *num = p;
        p += len;
        double mul = -1;
        size_t ulen = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t l = strlen(units[i].name);
            if (!strncmp(p, units[i].name, l) && !isalpha((unsigned char)p[l])) {
                mul = units[i].us, ulen = l;
                break;
            }
        }
        if (mul < 0 && !*p && num == s) {
            mul = (double)bare_unit; /* the whole string is one number */
        } else if (mul < 0 && !*p) {
            return err_hint(d, GS_EINVAL, s, num, "a unit is needed after the number",
                            " (us, ms, s, m, min, h, d)");
        } else if (mul < 0) {
            char unit[16];
            size_t k = 0;
            while (p[k] && !isdigit((unsigned char)p[k]) && p[k] != '.' && k + 1 < sizeof unit)
                unit[k] = p[k], k++;
            unit[k] = '\0';
            return gs_diag_set(d, GS_EINVAL, 0, COL(p, s),
                               "unknown unit '%s' at column %d (us, ms, s, m, min, h, d)", unit,
                               COL(p, s));
        }
        double us = v * mul;
        if (!isfinite(us) || us > (double)GS_DURATION_MAX)
            return err_at(d, GS_ERANGE, s, num, "too large a duration");
        total += us;
        if (total > (double)GS_DURATION_MAX)
            return err_at(d, GS_ERANGE, s, num, "too large a duration");
        sum += (int64_t)llround(us);
        p += ulen;
    }
    if (p == s) return gs_diag_set(d, GS_EINVAL, 0, 1, "empty duration");
    if (sum > GS_DURATION_MAX) return gs_diag_set(d, GS_ERANGE, 0, 1, "the duration is too large");
    *out = sum;
    return 0;
}

/* Slurm: M:S, H:M:S, D-H, D-H:M, D-H:M:S */
static int slurm_form(const char *s, gs_time *out, gs_diag *d)
{
    static const char *const names[] = {"hours", "minutes", "seconds"};
    const char *p = s;
    long long days = -1, f[3];
    const char *fp[3];
    int n = 0;
    for (;;) {
        if (!isdigit((unsigned char)*p))
            return err_at(d, GS_EINVAL, s, p, "expected a whole number");
        const char *start = p;
        long long v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v > 1000000000000LL) return err_at(d, GS_ERANGE, s, start, "too large a number");
            v = v * 10 + (*p++ - '0');
        }
        if (*p == '-') {
            if (days >= 0 || n > 0)
                return err_hint(d, GS_EINVAL, s, p, "unexpected '-'", SLURM_FORMS);
            days = v;
            p++;
            continue;
        }
        if (n == 3) return err_hint(d, GS_EINVAL, s, start, "too many fields", SLURM_FORMS);
        fp[n] = start;
        f[n++] = v;
        if (*p == ':') {
            p++;
            continue;
        }
        if (*p) return err_at(d, GS_EINVAL, s, p, "unexpected character");
        break;
    }
    long long h = 0, m = 0, sec = 0;
    int first_named; /* index into names of f[0] */
    if (days >= 0) {
        h = f[0], first_named = 0; /* D-H[:M[:S]] */
        if (n > 1) m = f[1];
        if (n > 2) sec = f[2];
    } else if (n == 3) {
        h = f[0], m = f[1], sec = f[2], first_named = 0; /* H:M:S */
    } else if (n == 2) {
        m = f[0], sec = f[1], first_named = 1; /* M:S */
    } else {
        return GS_EINVAL; /* not reached: a '-' or ':' made it two fields or days */
    }
    for (int i = 1; i < n; i++)
        if (f[i] > 59)
            return gs_diag_set(d, GS_EINVAL, 0, COL(fp[i], s),
                               "%s must be 0-59, got %lld at column %d", names[first_named + i],
                               f[i], COL(fp[i], s));
    long long secs = (days > 0 ? days : 0) * 86400 + h * 3600 + m * 60 + sec;
    if (secs > GS_DURATION_MAX / GS_SEC)
        return gs_diag_set(d, GS_ERANGE, 0, 1, "the duration is too large");
    *out = (gs_time)secs * GS_SEC;
    return 0;
}

int gs_parse_duration(const char *s, gs_time bare_unit, gs_time *out, gs_diag *d)
{
    if (!s || !*s) return gs_diag_set(d, GS_EINVAL, 0, 0, "empty duration");
    if (*s == '-') return gs_diag_set(d, GS_EINVAL, 0, 1, "negative duration at column 1");
    /* Slurm's forms have ':' or a '-' after a digit ("1e-3s" is a number with an exponent) */
    int slurm = strchr(s, ':') != NULL;
    for (const char *m = strchr(s, '-'); m && !slurm; m = strchr(m + 1, '-'))
        slurm = isdigit((unsigned char)m[-1]);
    if (slurm) return slurm_form(s, out, d);
    return unit_form(s, bare_unit, out, d);
}

/* ---- whole numbers --------------------------------------------------------------------- */

/*
 * The whole number spelled by [p, end) (an optional sign, then number_span's form and nothing
 * else), exactly: 0 and *v, 1 when it is not such a number, 2 not whole, 3 beyond int64.
 */
static int whole_value(const char *p, const char *end, int64_t *v)
{
    int neg = 0;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    if (p >= end || number_span(p) != (size_t)(end - p)) return 1;
    char dig[24]; /* significant digits, leading zeros dropped */
    int nd = 0, nfrac = 0, more = 0, frac = 0;
    long exp = 0;
    for (; p < end && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            frac = 1;
            continue;
        }
        nfrac += frac;
        if (nd == 0 && *p == '0') continue;
        if (nd < (int)sizeof dig) {
            dig[nd++] = *p;
        } else { /* a digit past 24, dropped: x10 before the point, nothing after it */
            more |= *p != '0';
            nfrac--;
        }
    }
    if (p < end) { /* the exponent, clamped: far beyond int64 either way */
        p++;
        int eneg = *p == '-';
        if (*p == '+' || *p == '-') p++;
        for (; p < end; p++)
            if (exp < 100000) exp = exp * 10 + (*p - '0');
        if (eneg) exp = -exp;
    }
    long e10 = exp - nfrac;
    while (nd > 0 && dig[nd - 1] == '0') nd--, e10++;
    if (nd == 0) return *v = 0, 0;
    if (more) return nd + e10 > 19 ? 3 : 2;
    if (e10 < 0) return 2;
    if (nd + e10 > 19) return 3;
    uint64_t x = 0;
    for (int i = 0; i < nd; i++) x = x * 10 + (uint64_t)(dig[i] - '0');
    for (long i = 0; i < e10; i++) x *= 10; /* nd + e10 <= 19 digits: no overflow */
    if (x > (uint64_t)INT64_MAX + (uint64_t)neg) return 3;
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    return 0;
}

int gs_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out, gs_diag *d)
{
    const char *p = s, *end = s + strlen(s);
    while (isspace((unsigned char)*p)) p++;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    int64_t v;
    int rc = whole_value(p, end, &v);
    if (rc == 1)
        return gs_diag_set(d, GS_EINVAL, 0, COL(p, s),
                           "'%s' is not a number (a whole number such as 12, 8.0 or 1e3)", s);
    if (rc == 2) return gs_diag_set(d, GS_EINVAL, 0, COL(p, s), "'%s' is not a whole number", s);
    if (rc == 3 || v < lo || v > hi)
        return gs_diag_set(d, GS_ERANGE, 0, COL(p, s), "%s is out of range [%lld, %lld]", s,
                           (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

/* ---- priorities ------------------------------------------------------------------------ */

int gs_parse_priority(const char *s, int max, int *out, gs_diag *d)
{
    if (!s || !*s) return gs_diag_set(d, GS_EINVAL, 0, 0, "empty priority");
    if (!strcasecmp(s, "prod")) return *out = GS_PRIO_PROD, 0;
    if (!strcasecmp(s, "test")) return *out = GS_PRIO_TEST, 0;
    if (!strcasecmp(s, "oppo") || !strcasecmp(s, "opportunistic"))
        return *out = GS_PRIO_OPPORTUNISTIC, 0;
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end != p && *end == '.') { /* "8.0": a whole number written as a float */
        const char *q = end + 1;
        while (*q == '0') q++;
        end = (char *)q;
    }
    while (isspace((unsigned char)*end)) end++;
    if (end == p || *end)
        return gs_diag_set(d, GS_EINVAL, 0, COL(end == p ? p : end, s),
                           "'%s' is not a priority (an integer >= -1 or prod, test, oppo): "
                           "unexpected character at column %d",
                           s, COL(end == p ? p : end, s));
    if (errno || v < -1 || v > max)
        return gs_diag_set(d, GS_ERANGE, 0, COL(p, s), "priority %s is outside [-1, %d]", s, max);
    *out = (int)v;
    return 0;
}

const char *gs_priority_name(int prio)
{
    switch (prio) {
    case GS_PRIO_PROD: return "prod";
    case GS_PRIO_TEST: return "test";
    case GS_PRIO_OPPORTUNISTIC: return "oppo";
    default: return NULL;
    }
}

/* ---- quotas ---------------------------------------------------------------------------- */

void gs_quotas_release(gs_quota *q, size_t n)
{
    if (!q) return;
    for (size_t i = 0; i < n; i++) free(q[i].vc);
    free(q);
}

int gs_parse_quotas(const char *s, gs_quota **out, size_t *nout, gs_diag *d)
{
    *out = NULL;
    *nout = 0;
    size_t cap = 1;
    for (const char *c = s; *c; c++) cap += *c == ',';
    gs_quota *q = calloc(cap, sizeof *q);
    if (!q) return GS_ENOMEM;
    size_t n = 0;
    const char *p = s;
    int rc = 0;
    while (*p) {
        const char *comma = strchr(p, ',');
        if (!comma) comma = p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(comma - p));
        if (!colon) {
            rc = gs_diag_set(d, GS_EINVAL, 0, COL(comma, s),
                             "expected VC:GPUS[,VC:GPUS...], got '%s': no ':' before column %d", s,
                             COL(comma, s));
            break;
        }
        if (colon == p) {
            rc = gs_diag_set(d, GS_EINVAL, 0, COL(p, s),
                             "expected VC:GPUS[,VC:GPUS...], got '%s': no VC name at column %d", s,
                             COL(p, s));
            break;
        }
        const char *g = colon + 1;
        while (*g == ' ' || *g == '\t') g++;
        if (*g == '+') g++;
        const char *digits = g;
        long long v = 0;
        while (g < comma && isdigit((unsigned char)*g) && v <= 1000000000000LL)
            v = v * 10 + (*g++ - '0');
        if (g == digits || g != comma || v <= 0) {
            const char *at = g == digits || g != comma ? g : digits;
            rc = gs_diag_set(d, GS_EINVAL, 0, COL(at, s),
                             "bad GPU count in '%s' at column %d (a positive integer)", s,
                             COL(at, s));
            break;
        }
        size_t len = (size_t)(colon - p);
        char *name = malloc(len + 1);
        if (!name) {
            rc = GS_ENOMEM;
            break;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        q[n].vc = name;
        q[n++].gpus = v;
        p = *comma ? comma + 1 : comma;
    }
    if (rc) {
        gs_quotas_release(q, n);
        return rc;
    }
    *out = q;
    *nout = n;
    return 0;
}
