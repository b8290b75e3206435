/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_grammar.c - the one grammar of durations, priorities and VC quotas (gsched/grammar.h):
 * every accepted form and every error, with its code and column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/gsched.h"
#include "harness.h"

static gs_time dur(const char *s, gs_time bare)
{
    gs_time t = -42;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_parse_duration(s, bare, &t, &d);
    if (rc) { /* the caller's ASSERT_EQ then fails too */
        fprintf(stderr, "  '%s': %s\n", s, d.msg);
        t_failed_now = 1;
    }
    return t;
}

/* the error code, the column and a piece of the message */
static void dur_err(const char *s, int err, int col, const char *msg)
{
    gs_time t = -42;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_parse_duration(s, GS_SEC, &t, &d), err);
    ASSERT_EQ(t, -42); /* untouched */
    ASSERT_EQ(d.col, col);
    ASSERT_CONTAINS(d.msg, msg);
}

static void t_duration_units(void)
{
    ASSERT_EQ(dur("90", GS_SEC), 90 * GS_SEC);
    ASSERT_EQ(dur("0", GS_SEC), 0);
    ASSERT_EQ(dur("1.5", GS_SEC), 1500 * GS_MSEC);
    ASSERT_EQ(dur(".5", GS_SEC), 500 * GS_MSEC);
    ASSERT_EQ(dur("5.", GS_SEC), 5 * GS_SEC);
    ASSERT_EQ(dur("1e3", GS_SEC), 1000 * GS_SEC);
    ASSERT_EQ(dur("1e-3s", GS_SEC), GS_MSEC);
    ASSERT_EQ(dur("0.0000015", GS_SEC), 2); /* rounded to the nearest microsecond */
    /* a number longer than any buffer */
    ASSERT_EQ(
        dur("0.000000000000000000000000000000000000000000000000000000000000000000001s", GS_SEC), 0);
    ASSERT_EQ(dur("000000000000000000000000000000000000000000000000000000000000000000012m", GS_SEC),
              720 * GS_SEC);
    ASSERT_EQ(dur("250us", GS_SEC), 250);
    ASSERT_EQ(dur("500ms", GS_SEC), 500 * GS_MSEC);
    ASSERT_EQ(dur("90s", GS_SEC), 90 * GS_SEC);
    ASSERT_EQ(dur("5m", GS_SEC), 300 * GS_SEC);
    ASSERT_EQ(dur("5min", GS_SEC), 300 * GS_SEC);
    ASSERT_EQ(dur("2h", GS_SEC), 7200 * GS_SEC);
    ASSERT_EQ(dur("1.5h", GS_SEC), 5400 * GS_SEC);
    ASSERT_EQ(dur("1d", GS_SEC), 86400 * GS_SEC);
    ASSERT_EQ(dur("1h30m", GS_SEC), 5400 * GS_SEC);
    ASSERT_EQ(dur("1d2h3m4s", GS_SEC), (86400 + 7200 + 180 + 4) * GS_SEC);
    ASSERT_EQ(dur("1m1m", GS_SEC), 120 * GS_SEC);
    /* the bare unit is the caller's: Slurm's minutes */
    ASSERT_EQ(dur("90", 60 * GS_SEC), 5400 * GS_SEC);
    ASSERT_EQ(dur("1.5", 60 * GS_SEC), 90 * GS_SEC);
    ASSERT_EQ(dur("90s", 60 * GS_SEC), 90 * GS_SEC);
    ASSERT_EQ(dur("1:30", 60 * GS_SEC), 90 * GS_SEC);
}

static void t_duration_slurm(void)
{
    ASSERT_EQ(dur("05:30", GS_SEC), 330 * GS_SEC);                    /* M:S */
    ASSERT_EQ(dur("100:00", GS_SEC), 6000 * GS_SEC);                  /* M unbounded */
    ASSERT_EQ(dur("01:02:03", GS_SEC), 3723 * GS_SEC);                /* H:M:S */
    ASSERT_EQ(dur("100:00:00", GS_SEC), 360000 * GS_SEC);             /* H unbounded */
    ASSERT_EQ(dur("2-12", GS_SEC), (2 * 86400 + 12 * 3600) * GS_SEC); /* D-H */
    ASSERT_EQ(dur("2-12:30", GS_SEC), (2 * 86400 + 45000) * GS_SEC);  /* D-H:M */
    ASSERT_EQ(dur("2-00:00:01", GS_SEC), (2 * 86400 + 1) * GS_SEC);   /* D-H:M:S */
    ASSERT_EQ(dur("0-100", GS_SEC), 100 * 3600 * GS_SEC);             /* hours after D- */
    ASSERT_EQ(dur("0:0", 60 * GS_SEC), 0);
}

static void t_duration_errors(void)
{
    dur_err("", GS_EINVAL, 0, "empty duration");
    dur_err("-5", GS_EINVAL, 1, "negative duration at column 1");
    dur_err("abc", GS_EINVAL, 1, "expected a number at column 1");
    dur_err(".", GS_EINVAL, 1, "expected a number at column 1");
    dur_err("1hh", GS_EINVAL, 2, "unknown unit 'hh' at column 2");
    dur_err("1h.", GS_EINVAL, 3, "expected a number at column 3");
    dur_err("10x", GS_EINVAL, 3, "unknown unit 'x' at column 3");
    dur_err("5 parsecs", GS_EINVAL, 2, "unknown unit ' parsecs' at column 2");
    dur_err("5mins", GS_EINVAL, 2, "unknown unit 'mins'");
    dur_err("1h30", GS_EINVAL, 3, "a unit is needed after the number at column 3 (us, ms");
    dur_err("0x10", GS_EINVAL, 2, "unknown unit 'x' at column 2");
    dur_err("1e400", GS_ERANGE, 1, "too large a duration at column 1");
    dur_err("1e12d", GS_ERANGE, 1, "too large a duration");
    dur_err("50000000d50000000d50000000d", GS_ERANGE, 19, "too large a duration at column 19");
    /* Slurm forms */
    dur_err("1:99:00", GS_EINVAL, 3, "minutes must be 0-59, got 99 at column 3");
    dur_err("1:00:60", GS_EINVAL, 6, "seconds must be 0-59, got 60 at column 6");
    dur_err("5:75", GS_EINVAL, 3, "seconds must be 0-59");
    dur_err("1-2:60", GS_EINVAL, 5, "minutes must be 0-59");
    dur_err("1:2:3:4", GS_EINVAL, 7, "too many fields at column 7");
    dur_err("1-2:3:4:5", GS_EINVAL, 9, "too many fields at column 9");
    dur_err("1-2-3", GS_EINVAL, 4, "unexpected '-' at column 4");
    dur_err("1:", GS_EINVAL, 3, "expected a whole number at column 3");
    dur_err(":5", GS_EINVAL, 1, "expected a whole number at column 1");
    dur_err("5-", GS_EINVAL, 3, "expected a whole number at column 3");
    dur_err("1.5:30", GS_EINVAL, 2, "unexpected character at column 2");
    dur_err("1:2x", GS_EINVAL, 4, "unexpected character at column 4");
    dur_err("99999999999999:00", GS_ERANGE, 1, "too large a number at column 1");
    dur_err("99999999999-00:00:00", GS_ERANGE, 1, "the duration is too large");
}

/* --set: the same grammar, bare numbers in seconds, the error names the key */
static void t_duration_params(void)
{
    gs_params p;
    gs_params_init(&p);
    ASSERT_OK(gs_params_set(&p, "a", "1-00:00:00"));
    ASSERT_OK(gs_params_set(&p, "b", "1h3x"));
    int64_t us;
    ASSERT_OK(gs_params_get_duration(&p, "a", 0, &us, NULL));
    ASSERT_EQ(us, 86400 * GS_SEC);
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_params_get_duration(&p, "b", 0, &us, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "parameter 'b': '1h3x' is not a duration: unknown unit 'x' at column 4");
    gs_params_release(&p);
}

static void t_priority(void)
{
    static const struct {
        const char *s;
        int want;
    } ok[] = {{"prod", GS_PRIO_PROD},
              {"PROD", GS_PRIO_PROD},
              {"test", GS_PRIO_TEST},
              {"oppo", GS_PRIO_OPPORTUNISTIC},
              {"Opportunistic", -1},
              {"0", 0},
              {"-1", -1},
              {"250", 250},
              {" 7 ", 7},
              {"8.0", 8},
              {"8.", 8},
              {"+5", 5},
              {"1000", 1000}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int p = -42;
        ASSERT_OK(gs_parse_priority(ok[i].s, 1000, &p, NULL));
        ASSERT_EQ(p, ok[i].want);
    }
    static const struct {
        const char *s;
        int err, col;
        const char *msg;
    } bad[] = {{"", GS_EINVAL, 0, "empty priority"},
               {"x", GS_EINVAL, 1, "unexpected character at column 1"},
               {"5x", GS_EINVAL, 2, "unexpected character at column 2"},
               {"8.5", GS_EINVAL, 3, "at column 3"},
               {"1e3", GS_EINVAL, 2, "'1e3' is not a priority"},
               {"prod2", GS_EINVAL, 1, "or prod, test, oppo"},
               {"-2", GS_ERANGE, 1, "priority -2 is outside [-1, 1000]"},
               {"1001", GS_ERANGE, 1, "outside"},
               {"99999999999999999999", GS_ERANGE, 1, "outside"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int p = -42;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_EQ(gs_parse_priority(bad[i].s, 1000, &p, &d), bad[i].err);
        ASSERT_EQ(p, -42);
        ASSERT_EQ(d.col, bad[i].col);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
    ASSERT_STR(gs_priority_name(GS_PRIO_PROD), "prod");
    ASSERT_STR(gs_priority_name(GS_PRIO_TEST), "test");
    ASSERT_STR(gs_priority_name(GS_PRIO_OPPORTUNISTIC), "oppo");
    ASSERT(gs_priority_name(5) == NULL);
}

static void t_quotas(void)
{
    gs_quota *q;
    size_t n;
    ASSERT_OK(gs_parse_quotas("a:4,vc-b:8", &q, &n, NULL));
    ASSERT_EQ(n, 2);
    ASSERT_STR(q[0].vc, "a");
    ASSERT_EQ(q[0].gpus, 4);
    ASSERT_STR(q[1].vc, "vc-b");
    ASSERT_EQ(q[1].gpus, 8);
    gs_quotas_release(q, n);
    ASSERT_OK(gs_parse_quotas("", &q, &n, NULL));
    ASSERT_EQ(n, 0);
    gs_quotas_release(q, n);
    ASSERT_OK(gs_parse_quotas("a:4,", &q, &n, NULL)); /* trailing comma */
    ASSERT_EQ(n, 1);
    gs_quotas_release(q, n);
    ASSERT_OK(gs_parse_quotas("a: 4,b:+2", &q, &n, NULL));
    ASSERT_EQ(q[0].gpus, 4);
    ASSERT_EQ(q[1].gpus, 2);
    gs_quotas_release(q, n);
    static const struct {
        const char *s;
        int col;
        const char *msg;
    } bad[] = {{"a", 2, "no ':' before column 2"},
               {"a:4,b", 6, "no ':' before column 6"},
               {"a:4,,b:2", 5, "no ':' before column 5"},
               {":4", 1, "no VC name at column 1"},
               {"a:", 3, "bad GPU count in 'a:' at column 3"},
               {"a:0", 3, "bad GPU count"},
               {"a:-1", 3, "bad GPU count"},
               {"a:4x", 4, "bad GPU count in 'a:4x' at column 4"},
               {"a:b:3", 3, "bad GPU count"},
               {"a:99999999999999999999", 16, "bad GPU count"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gs_diag d;
        gs_diag_init(&d, NULL);
        q = (gs_quota *)&d; /* must be reset */
        n = 99;
        ASSERT_EQ(gs_parse_quotas(bad[i].s, &q, &n, &d), GS_EINVAL);
        ASSERT(q == NULL);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(d.col, bad[i].col);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
}

/* Whole numbers: exponents and zero fractions are numbers; too large ones are out of range. */
static void t_whole_numbers(void)
{
    static const struct {
        const char *s;
        int64_t want;
    } ok[] = {{"12", 12},
              {" 7 ", 7},
              {"8.0", 8},
              {"1e3", 1000},
              {"1E3", 1000},
              {"2.5e2", 250},
              {"-3", -3},
              {"+4", 4},
              {"1000e-3", 1},
              {"0.0e5", 0},
              {"9223372036854775807", INT64_MAX},
              {"-9223372036854775808", INT64_MIN},
              {"9.223372036854775807e18", INT64_MAX},
              {"000000000000000000000000000001", 1},
              {"100000000000000000000000000000e-28", 10}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int64_t v = 42;
        gs_diag d;
        gs_diag_init(&d, NULL);
        if (gs_parse_int(ok[i].s, INT64_MIN, INT64_MAX, &v, &d)) T_FAIL("%s: %s", ok[i].s, d.msg);
        ASSERT_EQ(v, ok[i].want);
    }
    static const struct {
        const char *s;
        int err;
        const char *msg;
    } bad[] = {{"1e30", GS_ERANGE, "1e30 is out of range [0, 100]"},
               {"101", GS_ERANGE, "out of range"},
               {"-1", GS_ERANGE, "out of range"},
               {"9223372036854775808", GS_ERANGE, "out of range"},
               {"1e99999999999", GS_ERANGE, "out of range"},
               {"1.5", GS_EINVAL, "not a whole number"},
               {"1e-3", GS_EINVAL, "not a whole number"},
               {"1.0000000000000000000000001", GS_EINVAL, "not a whole number"},
               {"x", GS_EINVAL, "not a number"},
               {"", GS_EINVAL, "not a number"},
               {"1e", GS_EINVAL, "not a number"},
               {"0x10", GS_EINVAL, "not a number"},
               {"inf", GS_EINVAL, "not a number"},
               {"5 5", GS_EINVAL, "not a number"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t v = 42;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_EQ(gs_parse_int(bad[i].s, 0, 100, &v, &d), bad[i].err);
        ASSERT_EQ(v, 42);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
}

static const test_case tests[] = {
    {"whole_numbers", t_whole_numbers},
    {"duration_units", t_duration_units},
    {"duration_slurm", t_duration_slurm},
    {"duration_errors", t_duration_errors},
    {"duration_params", t_duration_params},
    {"priority", t_priority},
    {"quotas", t_quotas},
};

TEST_MAIN(tests)
