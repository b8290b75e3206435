/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * experiment.c - parsing the pieces of an experiment (see experiment.h): policy items
 * with their own parameters, the measurement window, sweeps, generator specs.
 *
 * Invariants: pure functions of their text (no I/O); every error names the offending
 * text; nothing is partly filled on error (the output is released).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

static char *xstrndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Length of a KEY= at s (KEY: a letter or '_', then letters, digits, '_', '.', '-'), else 0. */
static size_t key_eq_at(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
    size_t k = 1;
    while (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.' || s[k] == '-') k++;
    return s[k] == '=' ? k + 1 : 0;
}

/* Length of a policy name at s (a letter, then letters, digits, '_', '.', '-'), else 0. */
static size_t name_at(const char *s)
{
    if (!isalpha((unsigned char)*s)) return 0;
    size_t k = 1;
    while (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.' || s[k] == '-') k++;
    return k;
}

/* Does a new item start at s (just after a comma)? */
static int item_starts(const char *s)
{
    size_t k = name_at(s);
    if (!k) return 0;
    return s[k] == '\0' || s[k] == ',' || (s[k] == ':' && key_eq_at(s + k + 1));
}

void gs_policy_items_release(gs_policy_items *it)
{
    if (!it) return;
    for (size_t i = 0; i < it->n; i++) {
        free(it->v[i].label);
        free(it->v[i].name);
        gs_params_release(&it->v[i].params);
    }
    free(it->v);
    it->v = NULL;
    it->n = 0;
}

static int parse_item(const char *s, size_t len, gs_policy_item *it, gs_diag *d)
{
    memset(it, 0, sizeof *it);
    gs_params_init(&it->params);
    it->label = xstrndup(s, len);
    if (!it->label) return GS_ENOMEM;
    if (len > GS_LABEL_MAX)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "--policy: item '%.40s...' is %zu characters long (at most %d: its "
                           "label names its outputs)",
                           it->label, len, GS_LABEL_MAX);
    const char *colon = memchr(s, ':', len);
    size_t nl = colon ? (size_t)(colon - s) : len;
    if (!nl)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--policy: item '%s' has no policy name", it->label);
    it->name = xstrndup(s, nl);
    if (!it->name) return GS_ENOMEM;
    const char *p = colon ? colon + 1 : s + len, *end = s + len;
    if (colon && p == end)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--policy: item '%s': expected KEY=VALUE after ':'",
                           it->label);
    while (p < end) {
        size_t k = key_eq_at(p);
        if (!k || p + k > end)
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "--policy: item '%s': expected KEY=VALUE, got '%.*s'", it->label,
                               (int)(end - p), p);
        /* the value runs to the next ':' followed by KEY=, or to the end */
        const char *v = p + k, *q = v;
        while (q < end && !(*q == ':' && key_eq_at(q + 1))) q++;
        char *key = xstrndup(p, k - 1), *val = xstrndup(v, (size_t)(q - v));
        if (!key || !val) {
            free(key);
            free(val);
            return GS_ENOMEM;
        }
        int dup = gs_params_get(&it->params, key) != NULL;
        int rc = dup ? 0 : gs_params_set(&it->params, key, val);
        if (dup)
            gs_diag_set(d, GS_EINVAL, 0, 0, "--policy: item '%s': '%s' given twice", it->label,
                        key);
        free(key);
        free(val);
        if (dup) return GS_EINVAL;
        if (rc) return rc;
        p = q < end ? q + 1 : end;
    }
    gs_params_reset_used(&it->params);
    return 0;
}

int gs_policy_items_parse(const char *list, gs_policy_items *out, gs_diag *d)
{
    out->v = NULL;
    out->n = 0;
    size_t cap = 0;
    const char *s = list;
    for (;;) {
        /* this item runs to the next comma at which a new item starts */
        const char *e = s;
        for (;;) {
            e += strcspn(e, ",");
            if (!*e || item_starts(e + 1) || e[1] == ',' || !e[1]) break;
            /* a comma inside a value belongs to an item with parameters only */
            if (!memchr(s, ':', (size_t)(e - s))) break;
            e++;
        }
        size_t len = (size_t)(e - s);
        if (!len) {
            gs_policy_items_release(out);
            return gs_diag_set(d, GS_EINVAL, 0, 0, "--policy: empty item in '%s'", list);
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 8;
            gs_policy_item *nv = realloc(out->v, cap * sizeof *nv);
            if (!nv) {
                gs_policy_items_release(out);
                return GS_ENOMEM;
            }
            out->v = nv;
        }
        int rc = parse_item(s, len, &out->v[out->n], d);
        out->n++;
        if (rc) {
            gs_policy_items_release(out);
            return rc;
        }
        for (size_t k = 0; k + 1 < out->n; k++)
            if (!strcmp(out->v[k].label, out->v[out->n - 1].label)) {
                gs_diag_set(d, GS_EINVAL, 0, 0, "--policy: '%s' listed twice",
                            out->v[out->n - 1].label);
                gs_policy_items_release(out);
                return GS_EINVAL;
            }
        if (!*e) break;
        s = e + 1;
        if (!*s) {
            gs_policy_items_release(out);
            return gs_diag_set(d, GS_EINVAL, 0, 0, "--policy: empty item in '%s'", list);
        }
    }
    return 0;
}

/* One side of a window: empty = 'def'.  The duration parser's message goes to dd. */
static int side(const char *s, size_t n, gs_time def, gs_time *out, gs_diag *dd)
{
    if (!n) {
        *out = def;
        return 0;
    }
    char *t = xstrndup(s, n);
    if (!t) return GS_ENOMEM;
    gs_diag_init(dd, NULL);
    int rc = gs_parse_duration(t, GS_SEC, out, dd);
    free(t);
    return rc;
}

int gs_window_parse(const char *s, gs_time *start, gs_time *end, gs_diag *d)
{
    int found = 0;
    gs_time a = 0, b = 0;
    for (const char *c = strchr(s, ':'); c; c = strchr(c + 1, ':')) {
        gs_time x, y;
        gs_diag dd;
        if (side(s, (size_t)(c - s), 0, &x, &dd) ||
            side(c + 1, strlen(c + 1), GS_TIME_MAX, &y, &dd))
            continue;
        if (found++) break;
        a = x;
        b = y;
    }
    const char *c = strchr(s, ':');
    if (!found && c && !strchr(c + 1, ':')) { /* one split: say what is wrong with its side */
        gs_time x;
        gs_diag dd;
        int left = side(s, (size_t)(c - s), 0, &x, &dd) != 0;
        if (left || side(c + 1, strlen(c + 1), GS_TIME_MAX, &x, &dd))
            return gs_diag_set(d, GS_EINVAL, 0, 0, "--window '%s': %s '%.*s': %s", s,
                               left ? "START" : "END", left ? (int)(c - s) : (int)strlen(c + 1),
                               left ? s : c + 1, dd.msg);
    }
    if (!found)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "--window: expected START:END (durations such as 2h:10h or 7200:36000; "
                           "either may be empty), got '%s'",
                           s);
    if (found > 1)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "--window: '%s' splits into START:END in several ways; give the times "
                           "with units (e.g. 1h30m:2h)",
                           s);
    if (b <= a)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--window: '%s': END must be after START", s);
    *start = a;
    *end = b;
    return 0;
}

void gs_sweep_release(gs_sweep *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->values[i]);
    free(s->values);
    free(s->key);
    memset(s, 0, sizeof *s);
}

int gs_sweep_parse(const char *s, gs_sweep *out, gs_diag *d)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1])
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--sweep: expected KEY=V1,V2,..., got '%s'", s);
    out->key = xstrndup(s, (size_t)(eq - s));
    if (!out->key) return GS_ENOMEM;
    const char *p = eq + 1;
    for (;;) {
        size_t n = strcspn(p, ",");
        if (!n) {
            gs_sweep_release(out);
            return gs_diag_set(d, GS_EINVAL, 0, 0, "--sweep: empty value in '%s'", s);
        }
        char *v = xstrndup(p, n);
        char **nv = realloc(out->values, (out->n + 1) * sizeof *nv);
        if (!v || !nv) {
            free(v);
            if (nv) out->values = nv;
            gs_sweep_release(out);
            return GS_ENOMEM;
        }
        out->values = nv;
        for (size_t k = 0; k < out->n; k++)
            if (!strcmp(out->values[k], v)) {
                gs_diag_set(d, GS_EINVAL, 0, 0, "--sweep: value '%s' listed twice", v);
                free(v);
                gs_sweep_release(out);
                return GS_EINVAL;
            }
        out->values[out->n++] = v;
        if (!p[n]) break;
        p += n + 1;
    }
    return 0;
}

char *gs_spec_with(const char *spec, const char *key, const char *value)
{
    size_t kl = strlen(key), cap = strlen(spec) + kl + strlen(value) + 3;
    char *o = malloc(cap);
    if (!o) return NULL;
    size_t n = 0;
    int done = 0;
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, ",");
        const char *item = p;
        p += len;
        if (*p) p++;
        if (!len) continue;
        if (n) o[n++] = ',';
        if (len > kl && !strncmp(item, key, kl) && item[kl] == '=') {
            n += (size_t)snprintf(o + n, cap - n, "%s=%s", key, value);
            done = 1;
        } else {
            memcpy(o + n, item, len);
            n += len;
        }
    }
    if (!done) n += (size_t)snprintf(o + n, cap - n, "%s%s=%s", n ? "," : "", key, value);
    o[n] = '\0';
    return o;
}
