/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.h - bearer tokens checked against a tokens file of salted hashes.
 *
 * Tokens file: one line per token, '#' comments and blank lines ignored:
 *
 *     USER:ROLE:pbkdf2-sha256:ITERATIONS:SALT_HEX:HASH_HEX[:UNIX_USER]
 *
 * UNIX_USER (optional) names the Unix account the jobs of USER run as on a
 * daemon running as root (ident.h); without it the account is USER itself.
 * ROLE is "user" (sees and cancels only its own jobs) or "admin" (may do
 * everything).  HASH = PBKDF2-HMAC-SHA256(token, salt, iterations, 32 bytes)
 * computed with nettle.  A token is "USER.SECRET" (`gsched token hash`
 * creates one with 32 random bytes), so a request names the line to check
 * and costs one PBKDF2 at most; verified tokens are remembered (by their
 * SHA-256) so later requests cost one hash.  Hashes are compared in
 * constant time.
 *
 * Thread-safe: gsd_auth_check() and gsd_auth_reload() may be called from
 * any thread.
 * Ownership: gsd_auth_load() returns an object freed by gsd_auth_destroy()
 * (NULL is fine).
 */
#ifndef GSCHED_DAEMON_AUTH_H
#define GSCHED_DAEMON_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "gsched/error.h"

#define GSD_USER_MAX 64

typedef struct gsd_auth gsd_auth;

/* Read and validate a tokens file (errors as file:line:col); GS_EPERM when
 * the file is readable or writable by group or others. */
int gsd_auth_load(const char *path, gsd_auth **out, gs_diag *d);
/* Replace a's tokens by those of the file (SIGHUP); on error a is unchanged. */
int gsd_auth_reload(gsd_auth *a, const char *path, gs_diag *d);
/* Parse tokens-file text (tests). */
int gsd_auth_parse(const char *file, const char *buf, size_t len, gsd_auth **out, gs_diag *d);
void gsd_auth_destroy(gsd_auth *a);
size_t gsd_auth_count(const gsd_auth *a);

/*
 * Check a bearer token.  0: *user (NUL-terminated, < GSD_USER_MAX) and
 * *admin are set.  GS_EPERM: unknown user or wrong token.
 */
int gsd_auth_check(gsd_auth *a, const char *token, char user[GSD_USER_MAX], int *admin);
/* The same, answering only from the tokens already verified (no PBKDF2): for a client that
 * is being rate-limited, whose valid token must still work. */
int gsd_auth_check_cached(gsd_auth *a, const char *token, char user[GSD_USER_MAX], int *admin);

/* The Unix account the tokens file names for user (its first line with a 7th field): 1 and
 * out set, or 0 (none: the account is the user name).  a may be NULL. */
int gsd_auth_unix_user(gsd_auth *a, const char *user, char out[GSD_USER_MAX]);

/* PBKDF2-HMAC-SHA256 (nettle). */
void gsd_pbkdf2_sha256(const char *password, const uint8_t *salt, size_t salt_len,
                       unsigned iterations, uint8_t out[32]);
/* gsd_token_line, gsd_token_generate, gsd_user_name_ok: daemon.h (the CLI uses them). */

#endif
