/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * harness.h - a small test harness: typed assertions that print both values,
 * one process per test binary, TAP-style lines and an "N passed, N failed"
 * summary (recognised by CI).  A failed assertion ends the current test.
 */
#ifndef GSCHED_TEST_HARNESS_H
#define GSCHED_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

extern int t_failed_now;

#define T_FAIL(...)                                       \
    do {                                                  \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                     \
        fputc('\n', stderr);                              \
        t_failed_now = 1;                                 \
        return;                                           \
    } while (0)

#define ASSERT(c)                                     \
    do {                                              \
        if (!(c)) T_FAIL("assertion failed: %s", #c); \
    } while (0)

#define ASSERT_EQ(a, b)                                                 \
    do {                                                                \
        long long _a = (long long)(a), _b = (long long)(b);             \
        if (_a != _b) T_FAIL("%s == %s: %lld != %lld", #a, #b, _a, _b); \
    } while (0)

#define ASSERT_NE(a, b)                                          \
    do {                                                         \
        long long _a = (long long)(a), _b = (long long)(b);      \
        if (_a == _b) T_FAIL("%s != %s: both %lld", #a, #b, _a); \
    } while (0)

#define ASSERT_LE(a, b)                                                   \
    do {                                                                  \
        long long _a = (long long)(a), _b = (long long)(b);               \
        if (!(_a <= _b)) T_FAIL("%s <= %s: %lld > %lld", #a, #b, _a, _b); \
    } while (0)

#define ASSERT_OK(x)                                     \
    do {                                                 \
        long long _r = (long long)(x);                   \
        if (_r != 0) T_FAIL("%s returned %lld", #x, _r); \
    } while (0)

#define ASSERT_STR(a, b)                                                                          \
    do {                                                                                          \
        const char *_a = (a), *_b = (b);                                                          \
        if (!_a || !_b || strcmp(_a, _b))                                                         \
            T_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, _a ? _a : "(null)", _b ? _b : "(null)"); \
    } while (0)

#define ASSERT_CONTAINS(hay, needle)                                                            \
    do {                                                                                        \
        const char *_h = (hay), *_n = (needle);                                                 \
        if (!_h || !strstr(_h, _n)) T_FAIL("\"%s\" does not contain \"%s\"", _h ? _h : "", _n); \
    } while (0)

#define ASSERT_NEAR(a, b, eps)                                                        \
    do {                                                                              \
        double _a = (double)(a), _b = (double)(b);                                    \
        if (!(_a - _b <= (eps) && _b - _a <= (eps)))                                  \
            T_FAIL("%s ~= %s: %.9g vs %.9g (eps %g)", #a, #b, _a, _b, (double)(eps)); \
    } while (0)

/* Run the table; optional argv[1] filters by substring.  Returns the exit code. */
int test_main(int argc, char **argv, const test_case *tests, size_t n);

#define TEST_MAIN(table)                                                   \
    int main(int argc, char **argv)                                        \
    {                                                                      \
        return test_main(argc, argv, table, sizeof table / sizeof *table); \
    }

/* Path of a file in the source tree (tests/data/..., data/...); static buffer. */
const char *test_src(const char *rel);

/* A small deterministic stream for randomised tests: xorshift64 of *state, reduced to 0..n-1
 * (n > 0). */
static inline uint32_t test_xorshift(uint64_t *state, uint32_t n)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state % n);
}

#endif
