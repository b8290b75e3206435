/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fileio.c - whole-file reads and SHA-256 digests (via nettle).
 * Invariant: buffers handed out are NUL-terminated and owned by the caller.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nettle/sha2.h>

#include "config.h"

#define MAX_FILE ((size_t)1 << 30)

int gs_read_file(const char *path, char **buf, size_t *len, gs_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return gs_diag_set(d, e == ENOENT ? GS_ENOENT : GS_EIO, 0, 0, "cannot open: %s",
                           strerror(e));
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return gs_diag_set(d, GS_EIO, 0, 0, "is a directory, not a file");
    }
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    if (!b) {
        fclose(f);
        return GS_ENOMEM;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= MAX_FILE) {
                free(b);
                fclose(f);
                return gs_diag_set(d, GS_ETOOBIG, 0, 0, "file larger than 1 GiB");
            }
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                fclose(f);
                return GS_ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        size_t k = fread(b + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(b);
        return gs_diag_set(d, GS_EIO, 0, 0, "read error");
    }
    b[n] = '\0';
    *buf = b;
    if (len) *len = n;
    return 0;
}

void gs_sha256_hex(const void *data, size_t len, char out[65])
{
    struct sha256_ctx ctx;
    uint8_t dig[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, data);
    sha256_digest(&ctx, sizeof dig, dig);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
        out[2 * i] = hex[dig[i] >> 4];
        out[2 * i + 1] = hex[dig[i] & 15];
    }
    out[64] = '\0';
}

int gs_read_data_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d)
{
    (void)ud;
    gs_diag sub;
    gs_diag_init(&sub, path);
    int rc = gs_read_file(path, buf, len, &sub);
    if (rc) return gs_diag_set(d, rc, 0, 0, "%s: %s", path, sub.msg);
    return 0;
}
