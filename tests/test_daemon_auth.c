/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_auth.c - bearer tokens: PBKDF2-HMAC-SHA256 against the RFC
 * 7914 test vector, tokens-file lines made by gsd_token_line verify only
 * with the right token, roles, the verified-token cache, and tokens-file
 * errors reported as file:line:col.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "harness.h"

static void pbkdf2_vector(void)
{
    /* RFC 7914 section 11: P = "passwd", S = "salt", c = 1, first 32 bytes of dkLen 64 */
    static const uint8_t want[32] = {0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f,
                                     0xec, 0x16, 0x91, 0xc2, 0x25, 0x44, 0xb6, 0x05,
                                     0xf9, 0x41, 0x85, 0x21, 0x6d, 0xde, 0x04, 0x65,
                                     0xe6, 0x8b, 0x9d, 0x57, 0xc2, 0x0d, 0xac, 0xbc};
    uint8_t out[32];
    gsd_pbkdf2_sha256("passwd", (const uint8_t *)"salt", 4, 1, out);
    ASSERT(memcmp(out, want, 32) == 0);
}

static gsd_auth *load(const char *text, gs_diag *d)
{
    gsd_auth *a = NULL;
    gs_diag_init(d, "tokens");
    if (gsd_auth_parse("tokens", text, strlen(text), &a, d)) return NULL;
    return a;
}

static void tokens_verify(void)
{
    char l1[512], l2[512], tok[160], text[1200];
    ASSERT_OK(gsd_token_generate("alice", tok, sizeof tok));
    ASSERT(!strncmp(tok, "alice.", 6));
    ASSERT_EQ(strlen(tok), 6 + 43);
    ASSERT_OK(gsd_token_line("alice", 0, tok, 1000, l1, sizeof l1));
    ASSERT_OK(gsd_token_line("root", 1, "root.s3cret-s3cret-s3cret", 1000, l2, sizeof l2));
    ASSERT(!strstr(l1, tok + 6)); /* the secret is never stored */
    snprintf(text, sizeof text, "# users\n\n%s\n  %s  \n", l1, l2);
    gs_diag d;
    gsd_auth *a = load(text, &d);
    if (!a) T_FAIL("load: %s", d.msg);
    ASSERT_EQ(gsd_auth_count(a), 2);
    char user[GSD_USER_MAX];
    int admin = -1;
    ASSERT_OK(gsd_auth_check(a, tok, user, &admin));
    ASSERT_STR(user, "alice");
    ASSERT_EQ(admin, 0);
    ASSERT_OK(gsd_auth_check(a, tok, user, &admin)); /* cached */
    ASSERT_OK(gsd_auth_check(a, "root.s3cret-s3cret-s3cret", user, &admin));
    ASSERT_STR(user, "root");
    ASSERT_EQ(admin, 1);
    ASSERT_EQ(gsd_auth_check(a, "root.s3cret-s3cret-s3cret!", user, &admin), GS_EPERM);
    ASSERT_EQ(gsd_auth_check(a, "alice.s3cret-s3cret-s3cret", user, &admin),
              GS_EPERM); /* another's secret */
    ASSERT_EQ(gsd_auth_check(a, "nobody.x", user, &admin), GS_EPERM);
    ASSERT_EQ(gsd_auth_check(a, "nodot", user, &admin), GS_EPERM);
    ASSERT_EQ(gsd_auth_check(a, "", user, &admin), GS_EPERM);
    ASSERT_EQ(gsd_auth_check(a, NULL, user, &admin), GS_EPERM);
    gsd_auth_destroy(a);
    /* the same token hashed twice gets different salts */
    char l3[512];
    ASSERT_OK(gsd_token_line("root", 1, "root.s3cret-s3cret-s3cret", 1000, l3, sizeof l3));
    ASSERT(strcmp(l2, l3) != 0);
    ASSERT_EQ(gsd_token_line("bad name", 0, "x.y", 1000, l3, sizeof l3), GS_EINVAL);
    /* a secret shorter than GSD_TOKEN_SECRET_MIN, or a token of another user, is refused */
    ASSERT_EQ(gsd_token_line("root", 1, "root.s3cret", 1000, l3, sizeof l3), GS_EINVAL);
    ASSERT_EQ(gsd_token_line("root", 1, "alice.0123456789abcdef", 1000, l3, sizeof l3), GS_EINVAL);
    ASSERT_EQ(gsd_token_line("ok", 0, "ok.0123456789abcdef", 10, l3, sizeof l3), GS_ERANGE);
}

static void file_errors(void)
{
    static const struct {
        const char *text;
        int line, col;
        const char *msg;
    } cases[] = {
        {"alice:user:pbkdf2-sha256:1000:00\n", 1, 1, "6 or 7 fields"},
        {"alice:user:pbkdf2-sha256:1000:0011223344556677:"
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff:bad name\n",
         1, 113, "invalid Unix user name 'bad name'"},
        {"alice:user:pbkdf2-sha256:1000:0011223344556677:"
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff:a:b\n",
         1, 1, "got 8"},
        {"\nal ice:user:pbkdf2-sha256:1000:0011223344556677:" /* 64 hex */
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
         2, 1, "invalid user name"},
        {"alice:root:pbkdf2-sha256:1000:0011223344556677:"
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
         1, 7, "role must be"},
        {"alice:user:md5:1000:0011223344556677:"
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
         1, 12, "unknown hash scheme"},
        {"alice:user:pbkdf2-sha256:10:0011223344556677:"
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
         1, 26, "iterations"},
        {"alice:user:pbkdf2-sha256:1000:zz:"
         "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
         1, 31, "salt"},
        {"alice:user:pbkdf2-sha256:1000:0011223344556677:abcd\n", 1, 48, "hash must be"},
        {"# only comments\n\n", 0, 0, "no tokens"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gs_diag d;
        gsd_auth *a = load(cases[i].text, &d);
        if (a) {
            gsd_auth_destroy(a);
            T_FAIL("case %zu loaded", i);
        }
        if (d.line != cases[i].line || d.col != cases[i].col)
            T_FAIL("case %zu: at %d:%d, want %d:%d (%s)", i, d.line, d.col, cases[i].line,
                   cases[i].col, d.msg);
        ASSERT_CONTAINS(d.msg, cases[i].msg);
    }
}

static void user_names(void)
{
    ASSERT(gsd_user_name_ok("alice"));
    ASSERT(gsd_user_name_ok("a.b-c_d@e"));
    ASSERT(!gsd_user_name_ok(""));
    ASSERT(!gsd_user_name_ok(".x"));
    ASSERT(!gsd_user_name_ok("x:y"));
    ASSERT(!gsd_user_name_ok("a b"));
    char longname[80];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ASSERT(!gsd_user_name_ok(longname));
}

/* The optional 7th field names the Unix account a user's jobs run as (ident.h). */
static void unix_user_column(void)
{
    char l1[512], l2[512], text[1200];
    ASSERT_OK(
        gsd_token_line("alice@lab", 0, "alice@lab.s3cret-s3cret-s3cret", 1000, l1, sizeof l1));
    ASSERT_OK(gsd_token_line("bob", 0, "bob.s3cret-s3cret-s3cret", 1000, l2, sizeof l2));
    snprintf(text, sizeof text, "%s:alice\n%s\n", l1, l2);
    gs_diag d;
    gsd_auth *a = load(text, &d);
    if (!a) T_FAIL("load: %s", d.msg);
    char out[GSD_USER_MAX], user[GSD_USER_MAX];
    int admin;
    ASSERT_OK(gsd_auth_check(a, "alice@lab.s3cret-s3cret-s3cret", user, &admin));
    ASSERT_STR(user, "alice@lab"); /* the gsched user stays the token's */
    ASSERT_EQ(gsd_auth_unix_user(a, "alice@lab", out), 1);
    ASSERT_STR(out, "alice");
    ASSERT_EQ(gsd_auth_unix_user(a, "bob", out), 0); /* no column: the rule */
    ASSERT_EQ(gsd_auth_unix_user(a, "nobody", out), 0);
    ASSERT_EQ(gsd_auth_unix_user(NULL, "bob", out), 0);
    gsd_auth_destroy(a);
}

static const test_case tests[] = {
    {"pbkdf2_vector", pbkdf2_vector}, {"unix_user_column", unix_user_column},
    {"tokens_verify", tokens_verify}, {"file_errors", file_errors},
    {"user_names", user_names},
};

TEST_MAIN(tests)
