/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.c - tokens file parsing and bearer token verification (see auth.h).
 *
 * Invariants: the entries are replaced only as a whole, by gsd_auth_reload()
 * under the write side of `rw` (checks hold the read side, so a check sees
 * either the old or the new file, never a mix); the verified-token cache is
 * guarded by a mutex, emptied by every reload, and holds only SHA-256
 * digests of tokens, never the tokens themselves.  A tokens file readable by
 * group or others is refused (it holds what a brute-force attack needs).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/memops.h>
#include <nettle/pbkdf2.h>
#include <nettle/sha2.h>

#include "auth.h"
#include "config.h"

#define CACHE 256

typedef struct tok {
    char user[GSD_USER_MAX];
    char unix_user[GSD_USER_MAX]; /* 7th field: the Unix account its jobs run as; "" = rule */
    int admin;
    unsigned iter;
    uint8_t salt[64];
    size_t nsalt;
    uint8_t hash[32];
} tok;

typedef struct centry {
    uint8_t dig[32];
    int idx; /* -1 empty */
} centry;

struct gsd_auth {
    tok *v;
    size_t n;
    pthread_rwlock_t rw; /* v, n: read by checks, written by a reload */
    pthread_mutex_t mu;  /* cache, next */
    centry cache[CACHE];
    unsigned next;
};

void gsd_pbkdf2_sha256(const char *password, const uint8_t *salt, size_t salt_len,
                       unsigned iterations, uint8_t out[32])
{
    pbkdf2_hmac_sha256(strlen(password), (const uint8_t *)password, iterations, salt_len, salt, 32,
                       out);
}

int gsd_user_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n >= GSD_USER_MAX || s[0] == '.' || s[n - 1] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '@' || c == '.'))
            return 0;
    }
    return 1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int unhex(const char *s, size_t len, uint8_t *out, size_t cap, size_t *n)
{
    if (len % 2 || len / 2 > cap) return -1;
    for (size_t i = 0; i < len / 2; i++) {
        int a = hexval(s[2 * i]), b = hexval(s[2 * i + 1]);
        if (a < 0 || b < 0) return -1;
        out[i] = (uint8_t)(a * 16 + b);
    }
    *n = len / 2;
    return 0;
}

static void tohex(const uint8_t *b, size_t n, char *out)
{
    static const char h[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = h[b[i] >> 4];
        out[2 * i + 1] = h[b[i] & 15];
    }
    out[2 * n] = '\0';
}

void gsd_auth_destroy(gsd_auth *a)
{
    if (!a) return;
    pthread_mutex_destroy(&a->mu);
    pthread_rwlock_destroy(&a->rw);
    free(a->v);
    free(a);
}

size_t gsd_auth_count(const gsd_auth *a)
{
    return a ? a->n : 0;
}

/* Split a line into ':'-separated fields in place; returns the count. */
static int split(char *line, char **f, int *col, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return max + 1;
        f[n] = p;
        col[n] = (int)(p - line) + 1;
        n++;
        char *c = strchr(p, ':');
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

int gsd_auth_parse(const char *file, const char *buf, size_t len, gsd_auth **out, gs_diag *d)
{
    gsd_auth *a = calloc(1, sizeof *a);
    if (!a) abort();
    pthread_mutex_init(&a->mu, NULL);
    pthread_rwlock_init(&a->rw, NULL);
    for (int i = 0; i < CACHE; i++) a->cache[i].idx = -1;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    const char *p = buf, *end = buf + len;
    if (d) d->file = file;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        char line[1024];
        if (ll >= sizeof line) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, 1, "line longer than %zu bytes", sizeof line);
            goto fail;
        }
        memcpy(line, p, ll);
        line[ll] = '\0';
        p = nl ? nl + 1 : end;
        while (ll && (line[ll - 1] == '\r' || line[ll - 1] == ' ' || line[ll - 1] == '\t'))
            line[--ll] = '\0';
        size_t lead = strspn(line, " \t");
        if (!line[lead] || line[lead] == '#') continue;
        char *f[7];
        int col[7];
        int nf = split(line + lead, f, col, 7);
        for (int k = 0; k < nf && k < 7; k++) col[k] += (int)lead;
        if (nf != 6 && nf != 7) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, 1,
                             "expected USER:ROLE:pbkdf2-sha256:ITERATIONS:SALT:HASH[:UNIX_USER] "
                             "(6 or 7 fields, got %d); create lines with 'gsched token hash'",
                             nf > 7 ? 8 : nf);
            goto fail;
        }
        if (nf == 7 && !gsd_user_name_ok(f[6])) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[6], "invalid Unix user name '%s'", f[6]);
            goto fail;
        }
        if (!gsd_user_name_ok(f[0])) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[0], "invalid user name '%s'", f[0]);
            goto fail;
        }
        int admin;
        if (!strcmp(f[1], "admin"))
            admin = 1;
        else if (!strcmp(f[1], "user"))
            admin = 0;
        else {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[1],
                             "role must be 'user' or 'admin', got '%s'", f[1]);
            goto fail;
        }
        if (strcmp(f[2], "pbkdf2-sha256")) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[2],
                             "unknown hash scheme '%s' (expected pbkdf2-sha256)", f[2]);
            goto fail;
        }
        char *e;
        errno = 0;
        unsigned long it = strtoul(f[3], &e, 10);
        if (errno || *e || e == f[3] || it < 1000 || it > 10000000) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[3],
                             "iterations must be an integer between 1000 and 10000000");
            goto fail;
        }
        tok t;
        memset(&t, 0, sizeof t);
        snprintf(t.user, sizeof t.user, "%s", f[0]);
        if (nf == 7) snprintf(t.unix_user, sizeof t.unix_user, "%s", f[6]);
        t.admin = admin;
        t.iter = (unsigned)it;
        size_t nh;
        if (unhex(f[4], strlen(f[4]), t.salt, sizeof t.salt, &t.nsalt) || t.nsalt < 8) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[4], "salt must be 16 to 128 hex digits");
            goto fail;
        }
        if (unhex(f[5], strlen(f[5]), t.hash, sizeof t.hash, &nh) || nh != 32) {
            rc = gs_diag_set(d, GS_EPARSE, lineno, col[5], "hash must be 64 hex digits");
            goto fail;
        }
        if (a->n == cap) {
            cap = cap ? cap * 2 : 16;
            tok *nv = realloc(a->v, cap * sizeof *nv);
            if (!nv) abort();
            a->v = nv;
        }
        a->v[a->n++] = t;
    }
    if (!a->n) {
        rc = gs_diag_set(d, GS_EPARSE, 0, 0, "no tokens in the file");
        goto fail;
    }
    *out = a;
    return 0;
fail:
    gsd_auth_destroy(a);
    return rc;
}

int gsd_auth_load(const char *path, gsd_auth **out, gs_diag *d)
{
    if (d) d->file = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gs_diag_set(d, GS_EIO, 0, 0, "cannot open: %s", strerror(errno));
    struct stat st;
    int bad = fstat(fd, &st) != 0 ? -1 : (st.st_mode & 077) != 0;
    close(fd);
    if (bad < 0) return gs_diag_set(d, GS_EIO, 0, 0, "cannot stat: %s", strerror(errno));
    if (bad)
        return gs_diag_set(d, GS_EPERM, 0, 0,
                           "mode %04o: the tokens file must not be readable or writable by group "
                           "or others (chmod 600 %s)",
                           (unsigned)(st.st_mode & 07777), path);
    char *buf;
    size_t len;
    int rc = gs_read_file(path, &buf, &len, d);
    if (rc) return rc;
    rc = gsd_auth_parse(path, buf, len, out, d);
    free(buf);
    return rc;
}

int gsd_auth_reload(gsd_auth *a, const char *path, gs_diag *d)
{
    gsd_auth *n;
    int rc = gsd_auth_load(path, &n, d);
    if (rc) return rc;
    pthread_rwlock_wrlock(&a->rw);
    tok *old = a->v;
    a->v = n->v;
    a->n = n->n;
    n->v = old;
    pthread_mutex_lock(&a->mu);
    for (int i = 0; i < CACHE; i++) a->cache[i].idx = -1;
    pthread_mutex_unlock(&a->mu);
    pthread_rwlock_unlock(&a->rw);
    gsd_auth_destroy(n);
    return 0;
}

/* cached_only: look the token up among those already verified, never hash it (the path of
 * a client address that failed too often, conn.c). */
static int check(gsd_auth *a, const char *token, char user[GSD_USER_MAX], int *admin,
                 int cached_only)
{
    if (!token || strlen(token) > 512) return GS_EPERM;
    uint8_t dig[32];
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, strlen(token), (const uint8_t *)token);
    sha256_digest(&ctx, sizeof dig, dig);
    int rc = GS_EPERM;
    pthread_rwlock_rdlock(&a->rw);
    pthread_mutex_lock(&a->mu);
    for (int i = 0; i < CACHE; i++) {
        if (a->cache[i].idx >= 0 && memeql_sec(a->cache[i].dig, dig, sizeof dig)) {
            const tok *t = &a->v[a->cache[i].idx];
            memcpy(user, t->user, GSD_USER_MAX);
            *admin = t->admin;
            pthread_mutex_unlock(&a->mu);
            pthread_rwlock_unlock(&a->rw);
            return 0;
        }
    }
    pthread_mutex_unlock(&a->mu);
    if (cached_only) goto out;
    const char *dot = strrchr(token, '.');
    if (!dot || dot == token || (size_t)(dot - token) >= GSD_USER_MAX ||
        strlen(dot + 1) < GSD_TOKEN_SECRET_MIN)
        goto out;
    char name[GSD_USER_MAX];
    memcpy(name, token, (size_t)(dot - token));
    name[dot - token] = '\0';
    for (size_t i = 0; i < a->n; i++) {
        const tok *t = &a->v[i];
        if (strcmp(t->user, name)) continue;
        uint8_t h[32];
        gsd_pbkdf2_sha256(token, t->salt, t->nsalt, t->iter, h);
        if (!memeql_sec(h, t->hash, sizeof h)) continue;
        memcpy(user, t->user, GSD_USER_MAX);
        *admin = t->admin;
        pthread_mutex_lock(&a->mu);
        centry *c = &a->cache[a->next++ % CACHE];
        memcpy(c->dig, dig, sizeof dig);
        c->idx = (int)i;
        pthread_mutex_unlock(&a->mu);
        rc = 0;
        break;
    }
out:
    pthread_rwlock_unlock(&a->rw);
    return rc;
}

int gsd_auth_check(gsd_auth *a, const char *token, char user[GSD_USER_MAX], int *admin)
{
    return check(a, token, user, admin, 0);
}

int gsd_auth_check_cached(gsd_auth *a, const char *token, char user[GSD_USER_MAX], int *admin)
{
    return check(a, token, user, admin, 1);
}

int gsd_auth_unix_user(gsd_auth *a, const char *user, char out[GSD_USER_MAX])
{
    int found = 0;
    if (!a || !user) return 0;
    pthread_rwlock_rdlock(&a->rw);
    for (size_t i = 0; i < a->n && !found; i++) {
        if (strcmp(a->v[i].user, user) || !a->v[i].unix_user[0]) continue;
        memcpy(out, a->v[i].unix_user, GSD_USER_MAX);
        found = 1;
    }
    pthread_rwlock_unlock(&a->rw);
    return found;
}

static int random_bytes(uint8_t *b, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return GS_EIO;
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, b + got, n - got);
        if (k <= 0) {
            if (k < 0 && errno == EINTR) continue;
            close(fd);
            return GS_EIO;
        }
        got += (size_t)k;
    }
    close(fd);
    return 0;
}

int gsd_token_generate(const char *user, char *out, size_t cap)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if (!gsd_user_name_ok(user)) return GS_EINVAL;
    uint8_t r[32];
    if (random_bytes(r, sizeof r)) return GS_EIO;
    char sec[64];
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < sizeof r; i++) {
        acc = (acc << 8) | r[i];
        bits += 8;
        while (bits >= 6) {
            sec[k++] = b64[(acc >> (bits - 6)) & 63];
            bits -= 6;
        }
    }
    if (bits) sec[k++] = b64[(acc << (6 - bits)) & 63];
    sec[k] = '\0';
    if ((size_t)snprintf(out, cap, "%s.%s", user, sec) >= cap) return GS_ERANGE;
    return 0;
}

int gsd_token_line(const char *user, int admin, const char *token, unsigned iterations, char *out,
                   size_t cap)
{
    if (!gsd_user_name_ok(user)) return GS_EINVAL;
    size_t ul = strlen(user);
    if (strncmp(token, user, ul) || token[ul] != '.' ||
        strlen(token + ul + 1) < GSD_TOKEN_SECRET_MIN)
        return GS_EINVAL;
    if (iterations < 1000 || iterations > 10000000) return GS_ERANGE;
    uint8_t salt[16], h[32];
    if (random_bytes(salt, sizeof salt)) return GS_EIO;
    gsd_pbkdf2_sha256(token, salt, sizeof salt, iterations, h);
    char sh[33], hh[65];
    tohex(salt, sizeof salt, sh);
    tohex(h, sizeof h, hh);
    if ((size_t)snprintf(out, cap, "%s:%s:pbkdf2-sha256:%u:%s:%s", user, admin ? "admin" : "user",
                         iterations, sh, hh) >= cap)
        return GS_ERANGE;
    return 0;
}
