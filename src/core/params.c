/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * params.c - ordered key=value parameters with typed getters.
 * Invariants: keys are unique (a later set replaces the value in place, so
 * the order of first appearance is kept); 'used' marks keys read by a getter.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gsched/grammar.h"
#include "gsched/params.h"

void gs_params_init(gs_params *p)
{
    p->v = NULL;
    p->n = p->cap = 0;
}

void gs_params_release(gs_params *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].key);
        free(p->v[i].val);
    }
    free(p->v);
    gs_params_init(p);
}

static gs_param *lookup(const gs_params *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].key, key) == 0) return &p->v[i];
    return NULL;
}

int gs_params_set(gs_params *p, const char *key, const char *val)
{
    if (!key || !*key || !val) return GS_EINVAL;
    char *v = strdup(val);
    if (!v) return GS_ENOMEM;
    gs_param *e = lookup(p, key);
    if (e) {
        free(e->val);
        e->val = v;
        e->used = 0;
        return 0;
    }
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 8;
        gs_param *nv = realloc(p->v, ncap * sizeof *nv);
        if (!nv) {
            free(v);
            return GS_ENOMEM;
        }
        p->v = nv;
        p->cap = ncap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return GS_ENOMEM;
    }
    p->v[p->n++] = (gs_param){k, v, 0};
    return 0;
}

int gs_params_set_kv(gs_params *p, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) return GS_EINVAL;
    size_t kl = (size_t)(eq - kv);
    char *k = malloc(kl + 1);
    if (!k) return GS_ENOMEM;
    memcpy(k, kv, kl);
    k[kl] = '\0';
    int rc = gs_params_set(p, k, eq + 1);
    free(k);
    return rc;
}

int gs_params_copy(gs_params *dst, const gs_params *src)
{
    gs_params_init(dst);
    for (size_t i = 0; i < src->n; i++) {
        int rc = gs_params_set(dst, src->v[i].key, src->v[i].val);
        if (rc) {
            gs_params_release(dst);
            return rc;
        }
    }
    return 0;
}

const char *gs_params_get(const gs_params *p, const char *key)
{
    if (!p) return NULL;
    gs_param *e = lookup(p, key);
    if (!e) return NULL;
    e->used = 1;
    return e->val;
}

int gs_params_get_i64(const gs_params *p, const char *key, int64_t def, int64_t lo, int64_t hi,
                      int64_t *out, gs_diag *diag)
{
    const char *s = gs_params_get(p, key);
    if (!s) {
        *out = def;
        return 0;
    }
    /* the grammar's whole numbers: 12, 8.0, 1e3; "1e30" is out of range, not "no number" */
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    int64_t v;
    int rc = gs_parse_int(s, lo, hi, &v, &sub);
    if (rc == GS_ERANGE)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "parameter '%s': %s is out of range [%lld, %lld]",
                           key, s, (long long)lo, (long long)hi);
    if (rc)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "parameter '%s': '%s' is not an integer", key, s);
    *out = v;
    return 0;
}

int gs_params_get_double(const gs_params *p, const char *key, double def, double lo, double hi,
                         double *out, gs_diag *diag)
{
    const char *s = gs_params_get(p, key);
    if (!s) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && !*end && isinf(v) && !strpbrk(s, "iInN") && !isspace((unsigned char)*s))
        /* a number too large for a double (1e400): out of range, not "no number" */
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "parameter '%s': %s is out of range [%g, %g]",
                           key, s, lo, hi);
    if (errno || end == s || *end || !isfinite(v))
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "parameter '%s': '%s' is not a number", key, s);
    if (v < lo || v > hi)
        return gs_diag_set(diag, GS_EINVAL, 0, 0, "parameter '%s': %g is outside [%g, %g]", key, v,
                           lo, hi);
    *out = v;
    return 0;
}

int gs_params_get_bool(const gs_params *p, const char *key, int def, int *out, gs_diag *diag)
{
    const char *s = gs_params_get(p, key);
    if (!s) {
        *out = def;
        return 0;
    }
    static const char *yes[] = {"1", "on", "true", "yes"};
    static const char *no[] = {"0", "off", "false", "no"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return gs_diag_set(diag, GS_EINVAL, 0, 0, "parameter '%s': '%s' is not on/off", key, s);
}

int gs_params_get_duration(const gs_params *p, const char *key, int64_t def_us, int64_t *out_us,
                           gs_diag *diag)
{
    const char *s = gs_params_get(p, key);
    if (!s) {
        *out_us = def_us;
        return 0;
    }
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    int rc = gs_parse_duration(s, GS_SEC, out_us, &sub);
    if (rc)
        return gs_diag_set(diag, GS_EINVAL, 0, 0,
                           "parameter '%s': '%s' is not a duration: %s (e.g. 30, 30s, 5m, 2h, "
                           "1h30m, 1-12:00:00)",
                           key, s, sub.msg);
    return 0;
}

int gs_params_get_double_list(const gs_params *p, const char *key, double **out, size_t *n,
                              gs_diag *diag)
{
    *out = NULL;
    *n = 0;
    const char *s = gs_params_get(p, key);
    if (!s) return 0;
    size_t cap = 1;
    for (const char *c = s; *c; c++) cap += *c == ',';
    double *v = malloc(cap * sizeof *v);
    if (!v) return GS_ENOMEM;
    size_t k = 0;
    const char *c = s;
    for (;;) {
        char *end;
        errno = 0;
        double x = strtod(c, &end);
        if (errno || end == c || !isfinite(x) || (*end && *end != ',')) {
            free(v);
            return gs_diag_set(diag, GS_EINVAL, 0, 0,
                               "parameter '%s': '%s' is not a comma-separated list of numbers", key,
                               s);
        }
        v[k++] = x;
        if (!*end) break;
        c = end + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

const char *gs_params_unused(const gs_params *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (!p->v[i].used) return p->v[i].key;
    return NULL;
}

void gs_params_reset_used(gs_params *p)
{
    for (size_t i = 0; i < p->n; i++) p->v[i].used = 0;
}
