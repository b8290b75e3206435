/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profiles.c - job profiles and packed-pair rates (see gsched/profiles.h).
 *
 * Invariants: rows are sorted by (model, gpu_type) and pairs by (a, b,
 * gpu_type) with a <= b, so lookups are binary searches and never depend on
 * hash or file order; every stored number was range-checked at parse time
 * (iter_s > 0, rates in [0, 1], util in [0, 1], memory >= 0).  No I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
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

int gs_profiles_parse(const char *file, const char *buf, size_t len, gs_profiles **out, gs_diag *d)
{
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
