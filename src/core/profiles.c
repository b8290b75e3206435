/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profiles.c - job profiles and packed-pair rates (see gsched/profiles.h).
 *
 * Invariants: rows are sorted by (model, gpu_type) and pairs by (a, b,
 * gpu_type) with a <= b, so lookups are binary searches and never depend on
 * hash or file order; every stored number was range-checked at parse time
 * (iter_s > 0, rates in [0, 1], util in [0, 1], memory >= 0).  Throughputs
 * (every model row at every GPU count) are sorted by (model, type, gpus) with
 * one row per key (the first written).  Two readers fill the same tables: the
 * CSV format and Gavel's JSON (a small reader of that one shape: no JSON
 * library in the core).  No I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gsched/profiles.h"

extern const char gs_profiles_builtin_csv[]; /* generated from data/profiles/gavel.csv */

typedef struct pair_row {
    char *a, *b, *type;
    int gpus;
    double ra, rb;
} pair_row;

typedef struct alias_row {
    char *alias, *model;
} alias_row;

typedef struct mem_row {
    char *type;
    int mb;
} mem_row;

/* One measured throughput: every row of the model table, at every GPU count. */
typedef struct tput_row {
    char *model, *type;
    int gpus;
    double tput; /* steps/s of the whole job (1 / iter_time_s) */
    size_t ord;  /* position in the file (repeated keys: the first one wins) */
} tput_row;

struct gs_profiles {
    gs_profile *rows;
    size_t nrows, caprows;
    pair_row *pairs;
    size_t npairs, cappairs;
    alias_row *aliases;
    size_t naliases, capaliases;
    mem_row *mems;
    size_t nmems, capmems;
    tput_row *tputs; /* sorted by (model, type case-insensitively, gpus) */
    size_t ntputs, captputs;
    char **types; /* distinct GPU types of the throughput rows ("any" excluded), sorted */
    size_t ntypes;
    char *first_type;    /* type of the first model row in file order (reference without table 4) */
    char *ref;           /* the reference type when the source names it (Gavel's JSON: v100) */
    gs_profile fallback; /* used when the file has no 'default' row */
};

static const char *H_MODEL = "model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util";
static const char *H_PAIR = "model_a,model_b,gpu_type,gpus,rate_a,rate_b";
static const char *H_ALIAS = "alias,model";
static const char *H_MEM = "gpu_type,gpu_mem_mb";

/* Normalise a model name into buf: lower case; letters, digits, '-', '.', '_' kept. */
static void norm(const char *s, char *buf, size_t cap)
{
    size_t k = 0;
    for (; s && *s && k + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '-' || c == '.' || c == '_') buf[k++] = (char)tolower(c);
    }
    buf[k] = 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, nc * sz);
    if (!p) return GS_ENOMEM;
    *v = p;
    *cap = nc;
    return 0;
}

static char *dupnorm(const char *s)
{
    char b[128];
    norm(s, b, sizeof b);
    return strdup(b);
}

/* Split one line into at most 'max' comma-separated fields (in place). */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return max + 1;
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0;
        p = c + 1;
    }
    for (int i = 0; i < n; i++) {
        while (*f[i] == ' ' || *f[i] == '\t') f[i]++;
        size_t l = strlen(f[i]);
        while (l && (f[i][l - 1] == ' ' || f[i][l - 1] == '\t' || f[i][l - 1] == '\r'))
            f[i][--l] = 0;
    }
    return n;
}

static int num(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int cmp_row(const void *x, const void *y)
{
    const gs_profile *a = x, *b = y;
    int c = strcmp(a->model, b->model);
    return c ? c : strcmp(a->gpu_type, b->gpu_type);
}

static int cmp_pair(const void *x, const void *y)
{
    const pair_row *a = x, *b = y;
    int c = strcmp(a->a, b->a);
    if (!c) c = strcmp(a->b, b->b);
    if (!c) c = strcasecmp(a->type, b->type);
    return c ? c : (a->gpus > b->gpus) - (a->gpus < b->gpus);
}

static int cmp_tput(const void *x, const void *y)
{
    const tput_row *a = x, *b = y;
    int c = strcmp(a->model, b->model);
    if (!c) c = strcasecmp(a->type, b->type);
    return c ? c : (a->gpus > b->gpus) - (a->gpus < b->gpus);
}

static int cmp_str_case(const void *x, const void *y)
{
    return strcasecmp(*(char *const *)x, *(char *const *)y);
}

static int cmp_alias(const void *x, const void *y)
{
    return strcmp(((const alias_row *)x)->alias, ((const alias_row *)y)->alias);
}

void gs_profiles_destroy(gs_profiles *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nrows; i++) {
        free((char *)p->rows[i].model);
        free((char *)p->rows[i].gpu_type);
    }
    for (size_t i = 0; i < p->npairs; i++) {
        free(p->pairs[i].a);
        free(p->pairs[i].b);
        free(p->pairs[i].type);
    }
    for (size_t i = 0; i < p->naliases; i++) {
        free(p->aliases[i].alias);
        free(p->aliases[i].model);
    }
    for (size_t i = 0; i < p->nmems; i++) free(p->mems[i].type);
    for (size_t i = 0; i < p->ntputs; i++) {
        free(p->tputs[i].model);
        free(p->tputs[i].type);
    }
    free(p->tputs);
    free(p->types); /* borrowed from tputs */
    free(p->first_type);
    free(p->ref);
    free(p->rows);
    free(p->pairs);
    free(p->aliases);
    free(p->mems);
    free(p);
}

/* Append a throughput row (model normalised, type as written). */
static int add_tput(gs_profiles *p, const char *model, const char *type, int gpus, double tput)
{
    if (grow((void **)&p->tputs, &p->captputs, p->ntputs, sizeof *p->tputs)) return GS_ENOMEM;
    tput_row *r = &p->tputs[p->ntputs];
    r->model = dupnorm(model);
    r->type = strdup(type);
    r->gpus = gpus;
    r->tput = tput;
    r->ord = p->ntputs;
    if (!r->model || !r->type || (!p->first_type && !(p->first_type = strdup(type)))) {
        free(r->model);
        free(r->type);
        return GS_ENOMEM;
    }
    p->ntputs++;
    return 0;
}

/* (key, file order): sorting on it is stable, so of repeated keys the first written wins. */
static int cmp_tput_ord(const void *x, const void *y)
{
    const tput_row *a = x, *b = y;
    int c = cmp_tput(a, b);
    return c ? c : (a->ord > b->ord) - (a->ord < b->ord);
}

/* Sort the throughput rows, drop repeated (model, type, gpus) keys but the first written,
 * list the distinct types. */
static int index_tputs(gs_profiles *p)
{
    if (!p->ntputs) return 0;
    qsort(p->tputs, p->ntputs, sizeof *p->tputs, cmp_tput_ord);
    size_t m = 0;
    for (size_t i = 0; i < p->ntputs; i++) {
        tput_row *r = &p->tputs[i];
        if (m && !cmp_tput(&p->tputs[m - 1], r)) {
            free(r->model);
            free(r->type);
            continue;
        }
        p->tputs[m++] = *r;
    }
    p->ntputs = m;
    p->types = malloc(m * sizeof *p->types);
    if (!p->types) return GS_ENOMEM;
    for (size_t i = 0; i < m; i++)
        if (strcasecmp(p->tputs[i].type, "any")) p->types[p->ntypes++] = p->tputs[i].type;
    if (p->ntypes) qsort(p->types, p->ntypes, sizeof *p->types, cmp_str_case);
    size_t k = 0;
    for (size_t i = 0; i < p->ntypes; i++)
        if (!k || strcasecmp(p->types[k - 1], p->types[i])) p->types[k++] = p->types[i];
    p->ntypes = k;
    return 0;
}

static int parse_json(const char *file, const char *buf, size_t len, gs_profiles **out, gs_diag *d);

int gs_profiles_parse(const char *file, const char *buf, size_t len, gs_profiles **out, gs_diag *d)
{
    size_t lead = 0;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) lead = 3; /* a UTF-8 byte order mark */
    while (lead < len && strchr(" \t\r\n", buf[lead]) && buf[lead]) lead++;
    if (lead < len && buf[lead] == '{') return parse_json(file, buf, len, out, d);
    gs_profiles *p = calloc(1, sizeof *p);
    if (!p) return GS_ENOMEM;
    p->fallback = (gs_profile){"default", "any", 0.1, 2048, 0.5};
    int table = -1, rc = 0, line = 0;
    size_t pos = 0;
    char lb[1024];
    while (pos < len && !rc) {
        size_t e = pos;
        while (e < len && buf[e] != '\n') e++;
        line++;
        size_t l = e - pos;
        if (l >= sizeof lb) {
            rc = gs_diag_set(d, GS_EPARSE, line, 1, "line too long (max %zu characters)",
                             sizeof lb - 1);
            break;
        }
        memcpy(lb, buf + pos, l);
        lb[l] = 0;
        pos = e + 1;
        if (memchr(lb, 0, l)) {
            rc = gs_diag_set(d, GS_EPARSE, line, 1, "NUL byte in profile file");
            break;
        }
        char *s = lb;
        while (*s == ' ' || *s == '\t') s++;
        size_t sl = strlen(s);
        while (sl && (s[sl - 1] == '\r' || s[sl - 1] == ' ' || s[sl - 1] == '\t')) s[--sl] = 0;
        if (!*s || *s == '#') continue;
        if (!strcmp(s, H_MODEL)) {
            table = 0;
            continue;
        }
        if (!strcmp(s, H_PAIR)) {
            table = 1;
            continue;
        }
        if (!strcmp(s, H_ALIAS)) {
            table = 2;
            continue;
        }
        if (!strcmp(s, H_MEM)) {
            table = 3;
            continue;
        }
        if (table < 0) {
            rc = gs_diag_set(d, GS_EPARSE, line, 1,
                             "expected a table header line (e.g. '%s') before data", H_MODEL);
            break;
        }
        static const int nf[] = {6, 6, 2, 2};
#define COL(p) ((int)((p)-lb) + 1)
        char *f[8];
        int n = split(s, f, 7);
        if (n != nf[table]) {
            rc = gs_diag_set(d, GS_EPARSE, line, 1, "expected %d fields, got %d", nf[table], n);
            break;
        }
        for (int i = 0; i < n; i++)
            if (!*f[i]) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[i]), "field %d is empty", i + 1);
                break;
            }
        if (rc) break;
        double g, x, y, z;
        if (table == 0) {
            if (num(f[2], 1, 1 << 20, &g) || g != floor(g)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[2]),
                                 "gpus: expected a positive integer, got '%s'", f[2]);
            } else if (num(f[3], 1e-9, 1e9, &x)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[3]),
                                 "iter_time_s: expected a positive number of seconds, got '%s'",
                                 f[3]);
            } else if (num(f[4], 0, 1e9, &y)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[4]),
                                 "gpu_mem_mb: expected a number >= 0, got '%s'", f[4]);
            } else if (num(f[5], 0, 1, &z)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[5]),
                                 "gpu_util: expected a number in [0, 1], got '%s'", f[5]);
            }
            if (rc) break;
            if ((rc = add_tput(p, f[0], f[1], (int)g, 1.0 / x))) break;
            if ((int)g != 1) continue; /* multi-GPU rows: throughputs only */
            if ((rc = grow((void **)&p->rows, &p->caprows, p->nrows, sizeof *p->rows))) break;
            gs_profile *r = &p->rows[p->nrows];
            r->model = dupnorm(f[0]);
            r->gpu_type = strdup(f[1]);
            r->iter_s = x;
            r->gpu_mem_mb = (int)y;
            r->gpu_util = z;
            if (!r->model || !r->gpu_type) {
                free((char *)r->model);
                free((char *)r->gpu_type);
                rc = GS_ENOMEM;
                break;
            }
            p->nrows++;
        } else if (table == 1) {
            if (num(f[3], 1, 1 << 20, &g) || g != floor(g)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[3]),
                                 "gpus: expected a positive integer, got '%s'", f[3]);
            } else if (num(f[4], 0, 1, &x)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[4]),
                                 "rate_a: expected a number in [0, 1], got '%s'", f[4]);
            } else if (num(f[5], 0, 1, &y)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[5]),
                                 "rate_b: expected a number in [0, 1], got '%s'", f[5]);
            }
            if (rc) break;
            if ((rc = grow((void **)&p->pairs, &p->cappairs, p->npairs, sizeof *p->pairs))) break;
            pair_row *r = &p->pairs[p->npairs];
            char *a = dupnorm(f[0]), *b = dupnorm(f[1]);
            r->type = strdup(f[2]);
            if (!a || !b || !r->type) {
                free(a);
                free(b);
                free(r->type);
                rc = GS_ENOMEM;
                break;
            }
            if (strcmp(a, b) > 0) { /* store with a <= b */
                char *t = a;
                a = b;
                b = t;
                double tr = x;
                x = y;
                y = tr;
            }
            r->a = a;
            r->b = b;
            r->gpus = (int)g;
            r->ra = x;
            r->rb = y;
            p->npairs++;
        } else if (table == 2) {
            if ((rc = grow((void **)&p->aliases, &p->capaliases, p->naliases, sizeof *p->aliases)))
                break;
            alias_row *r = &p->aliases[p->naliases];
            r->alias = dupnorm(f[0]);
            r->model = dupnorm(f[1]);
            if (!r->alias || !r->model) {
                free(r->alias);
                free(r->model);
                rc = GS_ENOMEM;
                break;
            }
            p->naliases++;
        } else {
            if (num(f[1], 1, 1e9, &x)) {
                rc = gs_diag_set(d, GS_EPARSE, line, COL(f[1]),
                                 "gpu_mem_mb: expected a positive number, got '%s'", f[1]);
                break;
            }
            if ((rc = grow((void **)&p->mems, &p->capmems, p->nmems, sizeof *p->mems))) break;
            if (!(p->mems[p->nmems].type = strdup(f[0]))) {
                rc = GS_ENOMEM;
                break;
            }
            p->mems[p->nmems++].mb = (int)x;
        }
    }
    if (!rc && p->nrows + p->npairs + p->naliases + p->nmems == 0)
        rc = gs_diag_set(d, GS_EPARSE, line, 1, "no profile data (expected a '%s' table)", H_MODEL);
    if (rc) {
        if (d && !d->file) d->file = file;
        gs_profiles_destroy(p);
        return rc;
    }
    if (p->nrows) qsort(p->rows, p->nrows, sizeof *p->rows, cmp_row);
    if (p->npairs) qsort(p->pairs, p->npairs, sizeof *p->pairs, cmp_pair);
    if (p->naliases) qsort(p->aliases, p->naliases, sizeof *p->aliases, cmp_alias);
    if ((rc = index_tputs(p))) {
        gs_profiles_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* Read-only profiles with nothing but the fallback row (used if loading fails). */
static const gs_profiles empty_profiles = {.fallback = {"default", "any", 0.1, 2048, 0.5}};

const gs_profiles *gs_profiles_empty(void)
{
    return &empty_profiles;
}

int gs_profiles_builtin(gs_profiles **out, gs_diag *d)
{
    return gs_profiles_parse("gavel.csv (built in)", gs_profiles_builtin_csv,
                             strlen(gs_profiles_builtin_csv), out, d);
}

/* First row index of 'model' (normalised), or -1. */
static long find_model(const gs_profiles *p, const char *m)
{
    size_t lo = 0, hi = p->nrows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(p->rows[mid].model, m) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nrows && !strcmp(p->rows[lo].model, m) ? (long)lo : -1;
}

static const char *resolve(const gs_profiles *p, const char *model, char *buf, size_t cap)
{
    norm(model, buf, cap);
    if (!*buf) return NULL;
    if (find_model(p, buf) >= 0) return buf;
    alias_row key = {buf, NULL};
    const alias_row *a =
        p->naliases ? bsearch(&key, p->aliases, p->naliases, sizeof *p->aliases, cmp_alias) : NULL;
    if (a && find_model(p, a->model) >= 0) return a->model;
    return NULL;
}

/* The reference GPU type: the first of the gpu_type table (rows for unknown types). */
static const char *ref_type(const gs_profiles *p)
{
    if (p->ref) return p->ref;
    for (size_t i = 0; i < p->nmems; i++)
        if (strcasecmp(p->mems[i].type, "default")) return p->mems[i].type;
    return NULL;
}

static const gs_profile *row_of(const gs_profiles *p, const char *m, const char *type)
{
    long i = find_model(p, m);
    if (i < 0) return NULL;
    const gs_profile *any = NULL, *ref = NULL;
    const char *rt = ref_type(p);
    for (size_t k = (size_t)i; k < p->nrows && !strcmp(p->rows[k].model, m); k++) {
        if (type && !strcasecmp(p->rows[k].gpu_type, type)) return &p->rows[k];
        if (!strcasecmp(p->rows[k].gpu_type, "any")) any = &p->rows[k];
        if (rt && !strcasecmp(p->rows[k].gpu_type, rt)) ref = &p->rows[k];
    }
    return any ? any : ref ? ref : &p->rows[i];
}

const gs_profile *gs_profiles_get(const gs_profiles *p, const char *model, const char *gpu_type)
{
    char b[128];
    const char *m = resolve(p, model, b, sizeof b);
    const gs_profile *r = m ? row_of(p, m, gpu_type) : NULL;
    if (!r) r = row_of(p, "default", gpu_type);
    return r ? r : &p->fallback;
}

int gs_profiles_known(const gs_profiles *p, const char *model)
{
    char b[128];
    return resolve(p, model, b, sizeof b) != NULL;
}

static const pair_row *pair_of(const gs_profiles *p, const char *a, const char *b, const char *type)
{
    int swap = strcmp(a, b) > 0;
    pair_row key = {(char *)(swap ? b : a), (char *)(swap ? a : b), (char *)"", 0, 0, 0};
    /* lower bound of (a, b, *) */
    size_t lo = 0, hi = p->npairs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const pair_row *r = &p->pairs[mid];
        int c = strcmp(r->a, key.a);
        if (!c) c = strcmp(r->b, key.b);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const pair_row *any = NULL, *first = NULL, *ref = NULL;
    const char *rt = ref_type(p);
    for (size_t k = lo;
         k < p->npairs && !strcmp(p->pairs[k].a, key.a) && !strcmp(p->pairs[k].b, key.b); k++) {
        if (p->pairs[k].gpus != 1) continue;
        if (!first) first = &p->pairs[k];
        if (type && !strcasecmp(p->pairs[k].type, type)) return &p->pairs[k];
        if (!strcasecmp(p->pairs[k].type, "any")) any = &p->pairs[k];
        if (rt && !strcasecmp(p->pairs[k].type, rt)) ref = &p->pairs[k];
    }
    return any ? any : ref ? ref : first;
}

int gs_profiles_pair(const gs_profiles *p, const char *a, const char *b, const char *gpu_type,
                     double *rate_a, double *rate_b)
{
    char ba[128], bb[128];
    const char *ma = resolve(p, a, ba, sizeof ba), *mb = resolve(p, b, bb, sizeof bb);
    const pair_row *r = ma && mb ? pair_of(p, ma, mb, gpu_type) : NULL;
    int measured = r != NULL;
    if (!r) r = pair_of(p, "default", "default", gpu_type);
    if (!r) {
        *rate_a = *rate_b = 0.5;
        return 0;
    }
    int swap = measured && strcmp(ma, mb) > 0;
    *rate_a = swap ? r->rb : r->ra;
    *rate_b = swap ? r->ra : r->rb;
    return measured;
}

int gs_profiles_gpu_mem(const gs_profiles *p, const char *gpu_type)
{
    int dflt = 16384;
    for (size_t i = 0; i < p->nmems; i++) {
        if (gpu_type && !strcasecmp(p->mems[i].type, gpu_type)) return p->mems[i].mb;
        if (!strcasecmp(p->mems[i].type, "default")) dflt = p->mems[i].mb;
    }
    return dflt;
}

size_t gs_profiles_nrows(const gs_profiles *p)
{
    return p->nrows;
}

size_t gs_profiles_npairs(const gs_profiles *p)
{
    return p->npairs;
}

/* ---- throughputs by (model, GPU type, GPU count) ---------------------------------------- */

const char *gs_profiles_ref_type(const gs_profiles *p)
{
    const char *t = ref_type(p);
    if (t) return t;
    return p->first_type && strcasecmp(p->first_type, "any") ? p->first_type : NULL;
}

int gs_profiles_has_type(const gs_profiles *p, const char *gpu_type)
{
    if (!gpu_type || !p->ntypes) return 0;
    return bsearch(&gpu_type, p->types, p->ntypes, sizeof *p->types, cmp_str_case) != NULL;
}

/* Throughput row (m, type, gpus), else (m, "any", gpus); NULL when neither exists. */
static const tput_row *tput_of(const gs_profiles *p, const char *m, const char *type, int gpus)
{
    const char *ts[2] = {type, "any"};
    for (int i = 0; i < 2; i++) {
        if (!ts[i]) continue;
        tput_row key = {(char *)m, (char *)ts[i], gpus, 0, 0};
        const tput_row *r =
            p->ntputs ? bsearch(&key, p->tputs, p->ntputs, sizeof *p->tputs, cmp_tput) : NULL;
        if (r) return r;
    }
    return NULL;
}

/* The profile name of 'model' in the throughput table: its own (directly or through an
 * alias), else "default"; NULL when neither has throughput rows. */
static const char *tput_model(const gs_profiles *p, const char *model, char *buf, size_t cap)
{
    const char *m = resolve(p, model, buf, cap);
    return m ? m : "default";
}

/* The type whose rows stand for 'type': itself when the profiles have rows of it, else the
 * reference type (NULL: only "any" rows apply). */
static const char *row_type(const gs_profiles *p, const char *type)
{
    return gs_profiles_has_type(p, type) ? type : gs_profiles_ref_type(p);
}

double gs_profiles_tput(const gs_profiles *p, const char *model, const char *gpu_type, int gpus)
{
    if (gpus <= 0) return 0;
    char b[128];
    const char *m = tput_model(p, model, b, sizeof b);
    const char *t = row_type(p, gpu_type);
    const tput_row *r = tput_of(p, m, t, gpus);
    if (r) return r->tput;
    r = gpus != 1 ? tput_of(p, m, t, 1) : NULL;
    return r ? r->tput * gpus : 0;
}

/* tput(m, type, g) / tput(m, ref, g) when both rows exist; 0 when not. */
static double ratio_at(const gs_profiles *p, const char *m, const char *type, const char *ref,
                       int gpus)
{
    const tput_row *k = tput_of(p, m, type, gpus), *r = tput_of(p, m, ref, gpus);
    return k && r && r->tput > 0 ? k->tput / r->tput : 0;
}

double gs_profiles_rate(const gs_profiles *p, const char *model, const char *gpu_type,
                        const char *ref_type_name, int gpus)
{
    const char *ref = ref_type_name ? ref_type_name : gs_profiles_ref_type(p);
    if (!gpu_type || !ref || !strcasecmp(gpu_type, ref) || !gs_profiles_has_type(p, gpu_type))
        return 1.0;
    char b[128];
    const char *m = tput_model(p, model, b, sizeof b);
    for (int pass = 0; pass < 2; pass++) {
        double r = gpus > 1 ? ratio_at(p, m, gpu_type, ref, gpus) : 0;
        if (!(r > 0)) r = ratio_at(p, m, gpu_type, ref, 1);
        if (r > 0) return r;
        if (!strcmp(m, "default")) break;
        m = "default"; /* the model was not measured on one of the two types */
    }
    return 1.0;
}

/* ---- Gavel's simulation_throughputs.json ------------------------------------------------ */
/*
 * The shape read (stanford-futuredata/gavel, scheduler/simulation_throughputs.json, as
 * published): { GPU_TYPE: { JOB: { "null": steps/s alone, JOB2: [steps/s of JOB, of JOB2]
 * packed, ... }, ... }, ... } with JOB a Python tuple "('ResNet-50 (batch size 64)', 2)"
 * (job type, scale factor = GPUs).  Types named *_unconsolidated (a job's GPUs spread over
 * servers) are skipped: gsched's placement slowdown models spreading.  The same table as
 * tools/gen_profiles.py derives from the file (docs/gandiva.md, "Profiles"), except GPU
 * memory, which Gavel does not publish (0: unknown).
 */

typedef struct jrd {
    const char *b;
    size_t n, i;
    int line;
    size_t lstart; /* offset of the current line's first byte */
    gs_diag *d;
} jrd;

static int jerr(jrd *r, const char *what)
{
    return gs_diag_set(r->d, GS_EPARSE, r->line, (int)(r->i - r->lstart) + 1, "%s", what);
}

static void jws(jrd *r)
{
    while (r->i < r->n) {
        char c = r->b[r->i];
        if (c == '\n') {
            r->line++;
            r->lstart = r->i + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            break;
        }
        r->i++;
    }
}

/* Expect the character c (after white space). */
static int jchar(jrd *r, char c)
{
    jws(r);
    if (r->i < r->n && r->b[r->i] == c) {
        r->i++;
        return 0;
    }
    char m[48];
    snprintf(m, sizeof m, "expected '%c'", c);
    return jerr(r, m);
}

/* A JSON string into out (escapes decoded; \u only below 0x80), at most cap - 1 bytes. */
static int jstr(jrd *r, char *out, size_t cap)
{
    jws(r);
    if (r->i >= r->n || r->b[r->i] != '"') return jerr(r, "expected a string");
    r->i++;
    size_t k = 0;
    while (r->i < r->n && r->b[r->i] != '"') {
        char c = r->b[r->i++];
        if ((unsigned char)c < 0x20) return jerr(r, "control character in a string");
        if (c == '\\') {
            if (r->i >= r->n) break;
            char e = r->b[r->i++];
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *f = strchr(from, e);
            if (e && f) {
                c = to[f - from];
            } else if (e == 'u' && r->i + 4 <= r->n) {
                unsigned v = 0;
                for (int q = 0; q < 4; q++) {
                    char h = r->b[r->i++];
                    v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0'
                                            : isxdigit((unsigned char)h)
                                                ? (tolower((unsigned char)h) - 'a' + 10)
                                                : 99);
                }
                if (v >= 0x80) return jerr(r, "\\u escape beyond ASCII in a name");
                c = (char)v;
            } else {
                return jerr(r, "bad escape in a string");
            }
        }
        if (k + 1 >= cap) return jerr(r, "string too long");
        out[k++] = c;
    }
    if (r->i >= r->n) return jerr(r, "unterminated string");
    r->i++;
    out[k] = 0;
    return 0;
}

static int jnum(jrd *r, double *v)
{
    jws(r);
    size_t s = r->i;
    while (r->i < r->n && strchr("+-0123456789.eE", r->b[r->i])) r->i++;
    char t[64];
    if (r->i == s || r->i - s >= sizeof t) {
        r->i = s;
        return jerr(r, "expected a number");
    }
    memcpy(t, r->b + s, r->i - s);
    t[r->i - s] = 0;
    if (num(t, -1e300, 1e300, v)) {
        r->i = s;
        return jerr(r, "expected a number");
    }
    return 0;
}

/* Skip any JSON value (nesting bounded). */
static int jskip(jrd *r, int depth)
{
    jws(r);
    if (depth > 64) return jerr(r, "nested too deep");
    if (r->i >= r->n) return jerr(r, "unexpected end of file");
    char c = r->b[r->i];
    char buf[512];
    if (c == '"') return jstr(r, buf, sizeof buf);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->i++;
        jws(r);
        if (r->i < r->n && r->b[r->i] == close) {
            r->i++;
            return 0;
        }
        for (;;) {
            int rc = 0;
            if (c == '{' && ((rc = jstr(r, buf, sizeof buf)) || (rc = jchar(r, ':')))) return rc;
            if ((rc = jskip(r, depth + 1))) return rc;
            jws(r);
            if (r->i < r->n && r->b[r->i] == ',') {
                r->i++;
                continue;
            }
            return jchar(r, close);
        }
    }
    static const char *words[] = {"true", "false", "null"};
    for (int w = 0; w < 3; w++)
        if (r->n - r->i >= strlen(words[w]) && !memcmp(r->b + r->i, words[w], strlen(words[w]))) {
            r->i += strlen(words[w]);
            return 0;
        }
    double v;
    return jnum(r, &v);
}

/* One job of the file: a type's entry. */
typedef struct jjob {
    int type;       /* index in the type list */
    char name[128]; /* gsched profile name ("resnet50-bs64") */
    char fam[128];  /* family ("resnet50") */
    int bs, gpus;
    double iso; /* steps/s alone */
} jjob;

typedef struct jpack {
    size_t a;    /* the jjob whose entry lists it */
    char b[128]; /* the partner's profile name */
    int bgpus;
    double va, vb; /* steps/s of a and of b, packed */
} jpack;

/* "('ResNet-50 (batch size 64)', 2)" -> profile name, family, batch size, GPUs. */
static int job_key(const char *k, jjob *j)
{
    while (*k == ' ') k++;
    if (*k++ != '(') return -1;
    while (*k == ' ') k++;
    char q = *k++;
    if (q != '\'' && q != '"') return -1;
    const char *e = strchr(k, q);
    if (!e || (size_t)(e - k) >= sizeof j->fam) return -1;
    char raw[128];
    memcpy(raw, k, (size_t)(e - k));
    raw[e - k] = 0;
    k = e + 1;
    while (*k == ' ') k++;
    if (*k++ != ',') return -1;
    char *end;
    long g = strtol(k, &end, 10);
    while (*end == ' ') end++;
    if (end == k || g < 1 || g > (1 << 20) || *end != ')' || end[1]) return -1;
    j->gpus = (int)g;
    /* "Family (batch size N)" as tools/gen_profiles.py reads it; the family keeps [a-z0-9] */
    j->bs = 0;
    char *bsz = strstr(raw, " (batch size ");
    if (bsz) {
        long b = strtol(bsz + 13, &end, 10);
        if (end != bsz + 13 && *end == ')' && b > 0 && b < 1000000) {
            j->bs = (int)b;
            *bsz = 0;
        }
    }
    size_t f = 0;
    for (const char *c = raw; *c; c++)
        if (isalnum((unsigned char)*c)) j->fam[f++] = (char)tolower((unsigned char)*c);
    j->fam[f] = 0;
    if (!f) return -1;
    if (j->bs)
        snprintf(j->name, sizeof j->name, "%s-bs%d", j->fam, j->bs);
    else
        snprintf(j->name, sizeof j->name, "%s", j->fam);
    return 0;
}

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of v[0..n) (sorted in place; the mean of the middle two for even n); 0 for n = 0. */
static double median(double *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct jset {
    char types[8][32];
    int ntypes;
    jjob *jobs;
    size_t njobs, capjobs;
    jpack *packs;
    size_t npacks, cappacks;
} jset;

/* The job of 'type' named 'name' at 'gpus' GPUs, or NULL. */
static const jjob *jfind(const jset *s, int type, const char *name, int gpus)
{
    for (size_t i = 0; i < s->njobs; i++)
        if (s->jobs[i].type == type && s->jobs[i].gpus == gpus && !strcmp(s->jobs[i].name, name))
            return &s->jobs[i];
    return NULL;
}

/* Read the file into s. */
static int jread(jrd *r, jset *s)
{
    int rc;
    char key[512];
    if ((rc = jchar(r, '{'))) return rc;
    jws(r);
    if (r->i < r->n && r->b[r->i] == '}') return jerr(r, "no GPU types");
    for (;;) {
        if ((rc = jstr(r, key, sizeof key)) || (rc = jchar(r, ':'))) return rc;
        size_t kl = strlen(key);
        if ((kl >= 15 && !strcasecmp(key + kl - 15, "_unconsolidated")) || !kl) {
            if ((rc = jskip(r, 1))) return rc;
        } else {
            if (s->ntypes == 8 || kl >= sizeof s->types[0]) return jerr(r, "too many GPU types");
            int t = s->ntypes++;
            snprintf(s->types[t], sizeof s->types[t], "%s", key);
            if ((rc = jchar(r, '{'))) return rc;
            jws(r);
            int empty = r->i < r->n && r->b[r->i] == '}';
            if (empty) r->i++;
            while (!empty) {
                jjob j = {.type = t};
                if ((rc = jstr(r, key, sizeof key))) return rc;
                if (job_key(key, &j))
                    return jerr(r, "expected a job such as \"('ResNet-50 (batch size 64)', 1)\"");
                if ((rc = jchar(r, ':')) || (rc = jchar(r, '{'))) return rc;
                size_t me = s->njobs;
                if (grow((void **)&s->jobs, &s->capjobs, s->njobs, sizeof *s->jobs))
                    return GS_ENOMEM;
                s->jobs[s->njobs++] = j;
                int have_iso = 0;
                for (;;) {
                    if ((rc = jstr(r, key, sizeof key)) || (rc = jchar(r, ':'))) return rc;
                    if (!strcmp(key, "null")) {
                        double v;
                        if ((rc = jnum(r, &v))) return rc;
                        if (v < 0) return jerr(r, "a throughput must not be negative");
                        s->jobs[me].iso = v;
                        have_iso = 1;
                    } else {
                        jpack pk = {.a = me};
                        jjob o;
                        if (job_key(key, &o)) return jerr(r, "expected a job as the partner");
                        snprintf(pk.b, sizeof pk.b, "%s", o.name);
                        pk.bgpus = o.gpus;
                        if ((rc = jchar(r, '[')) || (rc = jnum(r, &pk.va)) ||
                            (rc = jchar(r, ',')) || (rc = jnum(r, &pk.vb)) || (rc = jchar(r, ']')))
                            return rc;
                        if (pk.va < 0 || pk.vb < 0)
                            return jerr(r, "a throughput must not be negative");
                        if (grow((void **)&s->packs, &s->cappacks, s->npacks, sizeof *s->packs))
                            return GS_ENOMEM;
                        s->packs[s->npacks++] = pk;
                    }
                    jws(r);
                    if (r->i < r->n && r->b[r->i] == ',') {
                        r->i++;
                        continue;
                    }
                    if ((rc = jchar(r, '}'))) return rc;
                    break;
                }
                if (!have_iso) return jerr(r, "a job without its \"null\" (alone) throughput");
                jws(r);
                if (r->i < r->n && r->b[r->i] == ',') {
                    r->i++;
                    continue;
                }
                if ((rc = jchar(r, '}'))) return rc;
                break;
            }
        }
        jws(r);
        if (r->i < r->n && r->b[r->i] == ',') {
            r->i++;
            continue;
        }
        if ((rc = jchar(r, '}'))) return rc;
        break;
    }
    jws(r);
    if (r->i < r->n) return jerr(r, "text after the JSON object");
    if (!s->ntypes) return jerr(r, "no consolidated GPU types");
    return 0;
}

static int add_row(gs_profiles *p, const char *model, const char *type, double iter, int mem,
                   double util)
{
    if (grow((void **)&p->rows, &p->caprows, p->nrows, sizeof *p->rows)) return GS_ENOMEM;
    gs_profile *r = &p->rows[p->nrows];
    r->model = dupnorm(model);
    r->gpu_type = strdup(type);
    r->iter_s = iter;
    r->gpu_mem_mb = mem;
    r->gpu_util = util;
    if (!r->model || !r->gpu_type) {
        free((char *)r->model);
        free((char *)r->gpu_type);
        return GS_ENOMEM;
    }
    p->nrows++;
    return 0;
}

static int add_pair(gs_profiles *p, const char *a, const char *b, const char *type, double ra,
                    double rb)
{
    if (grow((void **)&p->pairs, &p->cappairs, p->npairs, sizeof *p->pairs)) return GS_ENOMEM;
    pair_row *r = &p->pairs[p->npairs];
    int sw = strcmp(a, b) > 0;
    r->a = strdup(sw ? b : a);
    r->b = strdup(sw ? a : b);
    r->type = strdup(type);
    r->gpus = 1;
    r->ra = sw ? rb : ra;
    r->rb = sw ? ra : rb;
    if (!r->a || !r->b || !r->type) {
        free(r->a);
        free(r->b);
        free(r->type);
        return GS_ENOMEM;
    }
    p->npairs++;
    return 0;
}

/* A 'default' model row of 'type' at g GPUs: a throughput, and a profile when g = 1. */
static int add_row_or_tput(gs_profiles *p, const char *type, int g, double iter, double util)
{
    int rc = add_tput(p, "default", type, g, 1.0 / iter);
    return !rc && g == 1 ? add_row(p, "default", type, iter, 0, util) : rc;
}

/* Build the profile tables from the file's jobs, as tools/gen_profiles.py does. */
static int jbuild(const jset *s, gs_profiles *p)
{
    int rc = 0, ref = 0;
    for (int t = 0; t < s->ntypes; t++)
        if (!strcasecmp(s->types[t], "v100")) ref = t;
    if (!(p->ref = strdup(s->types[ref]))) return GS_ENOMEM;
    size_t n = s->njobs + 1, nw = 2 * s->npacks + s->njobs + 1;
    double *v = malloc((n + nw) * sizeof *v), *w = v ? v + n : NULL;
    double *util = calloc(s->njobs ? s->njobs : 1, sizeof *util);
    if (!v || !util) {
        free(v);
        free(util);
        return GS_ENOMEM;
    }
    /* pairs (1-GPU jobs), and each job's utilisation: 1 - mean partner rate beside it */
    size_t nv1 = 0;
    for (size_t i = 0; i < s->njobs && !rc; i++) {
        const jjob *a = &s->jobs[i];
        double sum = 0;
        int cnt = 0;
        for (size_t k = 0; k < s->npacks && !rc; k++) {
            const jpack *pk = &s->packs[k];
            if (pk->a != i || a->gpus != 1 || pk->bgpus != 1) continue;
            const jjob *b = jfind(s, a->type, pk->b, 1);
            if (!b) continue;
            double ra = a->iso > 0 ? pk->va / a->iso : 0, rb = b->iso > 0 ? pk->vb / b->iso : 0;
            if (ra > 0 && rb > 0) sum += rb, cnt++;
            if (strcmp(a->name, b->name) > 0) continue; /* the other one's entry says it */
            ra = ra < 1 ? ra : 1;
            rb = rb < 1 ? rb : 1;
            rc = add_pair(p, a->name, b->name, s->types[a->type], ra, rb);
            if (a->type == ref && ra > 0 && rb > 0) w[nv1++] = ra, w[nv1++] = rb;
        }
        double u = cnt ? 1.0 - sum / cnt : 0.5;
        util[i] = u < 0.05 ? 0.05 : u > 1 ? 1 : u;
    }
    double dpair = nv1 ? median(w, nv1) : 0.5;
    /* model rows (1-GPU rows also as profiles) and the reference's medians */
    size_t nv = 0, nu = 0;
    for (size_t i = 0; i < s->njobs && !rc; i++) {
        const jjob *j = &s->jobs[i];
        if (!(j->iso > 0)) continue;
        const jjob *one = j->gpus == 1 ? j : jfind(s, j->type, j->name, 1);
        double u = one ? util[one - s->jobs] : 0.5;
        rc = add_tput(p, j->name, s->types[j->type], j->gpus, j->iso);
        if (!rc && j->gpus == 1) rc = add_row(p, j->name, s->types[j->type], 1.0 / j->iso, 0, u);
        if (j->gpus == 1 && j->type == ref) v[nv++] = 1.0 / j->iso;
    }
    for (size_t i = 0; i < s->njobs; i++)
        if (s->jobs[i].gpus == 1 && s->jobs[i].type == ref && s->jobs[i].iso > 0) w[nu++] = util[i];
    double diter = nv ? median(v, nv) : 0.1, dutil = nu ? median(w, nu) : 0.5;
    /* 'default' rows: the reference's medians, other types slowed by the median ratio */
    static const int sizes[] = {1, 2, 4, 8};
    for (int si = 0; si < 4 && !rc && nv; si++) {
        int g = sizes[si];
        double it = diter;
        if (g > 1) {
            size_t m = 0;
            for (size_t i = 0; i < s->njobs; i++) {
                const jjob *j = &s->jobs[i], *o;
                if (j->type == ref && j->gpus == g && j->iso > 0 &&
                    (o = jfind(s, ref, j->name, 1)) && o->iso > 0)
                    v[m++] = j->iso / o->iso;
            }
            if (!m) continue;
            it = diter / median(v, m);
        }
        rc = add_row_or_tput(p, "any", g, it, dutil);
        for (int t = 0; t < s->ntypes && !rc; t++) {
            if (t == ref) continue;
            size_t m = 0;
            for (size_t i = 0; i < s->njobs; i++) {
                const jjob *j = &s->jobs[i], *o;
                if (j->type == t && j->gpus == g && j->iso > 0 && (o = jfind(s, ref, j->name, g)) &&
                    o->iso > 0)
                    v[m++] = j->iso / o->iso;
            }
            if (m) rc = add_row_or_tput(p, s->types[t], g, it / median(v, m), dutil);
        }
    }
    if (!rc) rc = add_pair(p, "default", "default", "any", dpair, dpair);
    /* aliases: a family with batch sizes -> its middle measured one (gen_profiles.py's) */
    for (size_t i = 0; i < s->njobs && !rc; i++) {
        const jjob *j = &s->jobs[i];
        if (j->type != ref || j->gpus != 1 || !j->bs) continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = s->jobs[k].type == ref && s->jobs[k].gpus == 1 && s->jobs[k].bs &&
                   !strcmp(s->jobs[k].fam, j->fam);
        if (seen) continue;
        size_t m = 0;
        for (size_t k = i; k < s->njobs; k++)
            if (s->jobs[k].type == ref && s->jobs[k].gpus == 1 && s->jobs[k].bs &&
                !strcmp(s->jobs[k].fam, j->fam))
                v[m++] = s->jobs[k].bs;
        qsort(v, m, sizeof *v, cmp_dbl);
        char to[160];
        snprintf(to, sizeof to, "%s-bs%d", j->fam, (int)v[m / 2]);
        if (grow((void **)&p->aliases, &p->capaliases, p->naliases, sizeof *p->aliases)) {
            rc = GS_ENOMEM;
            break;
        }
        alias_row *a = &p->aliases[p->naliases];
        a->alias = strdup(j->fam);
        a->model = strdup(to);
        if (!a->alias || !a->model) {
            free(a->alias);
            free(a->model);
            rc = GS_ENOMEM;
            break;
        }
        p->naliases++;
    }
    free(v);
    free(util);
    return rc;
}

static int parse_json(const char *file, const char *buf, size_t len, gs_profiles **out, gs_diag *d)
{
    jrd r = {.b = buf, .n = len, .line = 1, .d = d};
    jset s = {0};
    gs_profiles *p = calloc(1, sizeof *p);
    int rc = p ? jread(&r, &s) : GS_ENOMEM;
    if (!rc) {
        p->fallback = (gs_profile){"default", "any", 0.1, 2048, 0.5};
        rc = jbuild(&s, p);
    }
    if (!rc) {
        if (p->nrows) qsort(p->rows, p->nrows, sizeof *p->rows, cmp_row);
        if (p->npairs) qsort(p->pairs, p->npairs, sizeof *p->pairs, cmp_pair);
        if (p->naliases) qsort(p->aliases, p->naliases, sizeof *p->aliases, cmp_alias);
        rc = index_tputs(p);
    }
    free(s.jobs);
    free(s.packs);
    if (rc) {
        if (rc == GS_ENOMEM) gs_diag_set(d, rc, 0, 0, "out of memory");
        if (d && !d->file) d->file = file;
        gs_profiles_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}
