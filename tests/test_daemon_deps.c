/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_deps.c - Slurm dependency strings (--dependency): the parser,
 * its positioned errors, the canonical text, and each type's answer for
 * every state of the job it names, alone and combined by ',' and '?'; the
 * spec fields hold, dependency and kill_on_invalid_dep; job array index
 * lists (gsched/jobarray.h: ranges, steps, lists, duplicates, the %N
 * throttle, the limits) and the spec field array.
 */
#include <stdlib.h>
#include <string.h>

#include "gsched/gsched.h"
#include "harness.h"
#include "spec.h"

/* singleton: a bare term (no id), alone or with others, canonical text, found by
 * gs_deps_singleton; gs_dep_eval leaves it to the caller */
static void singleton(void)
{
    gs_deps p, q;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_deps_parse("singleton", &p, &d));
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.v[0].type, GS_DEP_SINGLETON);
    ASSERT_EQ(p.v[0].id, 0);
    ASSERT(gs_deps_singleton(&p));
    ASSERT_OK(gs_deps_parse("afterok:3:4,singleton,afterany:5", &p, &d));
    ASSERT_EQ(p.n, 4);
    ASSERT(gs_deps_singleton(&p));
    char buf[128];
    gs_deps_format(&p, buf, sizeof buf);
    ASSERT_STR(buf, "afterok:3:4,singleton,afterany:5");
    ASSERT_OK(gs_deps_parse(buf, &q, &d));
    ASSERT_EQ(q.n, 4);
    ASSERT_EQ(q.v[2].type, GS_DEP_SINGLETON);
    ASSERT_OK(gs_deps_parse("singleton?afterok:2", &p, &d));
    gs_deps_format(&p, buf, sizeof buf);
    ASSERT_STR(buf, "singleton?afterok:2");
    ASSERT_OK(gs_deps_parse("afterok:2", &p, &d));
    ASSERT(!gs_deps_singleton(&p));
    ASSERT_STR(gs_dep_type_name(GS_DEP_SINGLETON), "singleton");
    ASSERT_EQ(gs_dep_eval(GS_DEP_SINGLETON, GS_JOB_DONE, 1), GS_DEP_NEVER);
}

static void parse_ok(void)
{
    gs_deps p;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_deps_parse("afterok:12", &p, &d));
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.v[0].type, GS_DEP_AFTEROK);
    ASSERT_EQ(p.v[0].id, 12);
    ASSERT_EQ(p.any, 0);
    ASSERT_OK(gs_deps_parse("afterok:3:4,afternotok:5,after:6,afterany:7", &p, &d));
    ASSERT_EQ(p.n, 5);
    ASSERT_EQ(p.v[1].type, GS_DEP_AFTEROK);
    ASSERT_EQ(p.v[1].id, 4);
    ASSERT_EQ(p.v[2].type, GS_DEP_AFTERNOTOK);
    ASSERT_EQ(p.v[3].type, GS_DEP_AFTER);
    ASSERT_EQ(p.v[4].type, GS_DEP_AFTERANY);
    char buf[256];
    gs_deps_format(&p, buf, sizeof buf);
    ASSERT_STR(buf, "afterok:3:4,afternotok:5,after:6,afterany:7");
    ASSERT_OK(gs_deps_parse("afterok:1?afternotok:1", &p, &d));
    ASSERT_EQ(p.any, 1);
    gs_deps_format(&p, buf, sizeof buf);
    ASSERT_STR(buf, "afterok:1?afternotok:1");
    /* the canonical text parses back to the same terms */
    gs_deps q;
    ASSERT_OK(gs_deps_parse(buf, &q, &d));
    ASSERT_EQ(q.n, p.n);
    ASSERT_EQ(memcmp(q.v, p.v, sizeof(gs_dep) * (size_t)p.n), 0);
}

static void bad(const char *s, int err, const char *msg)
{
    gs_deps p;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_deps_parse(s, &p, &d), err);
    ASSERT_CONTAINS(d.msg, msg);
}

static void parse_errors(void)
{
    bad("", GS_EINVAL, "empty");
    bad("afterok", GS_EINVAL, "position 8: expected ':' and a job id after 'afterok'");
    bad("afterok:", GS_EINVAL, "position 9: expected a job id after 'afterok:'");
    bad("afterok:x", GS_EINVAL, "position 9: expected a job id");
    bad("afterok:0", GS_EINVAL, "position 9: job id out of range");
    bad("afterok:99999999999999999999", GS_EINVAL, "position 9: job id out of range");
    bad("afterok:-3", GS_EINVAL, "position 9");
    bad("afterok:3,", GS_EINVAL, "position 11: expected a dependency type");
    bad("afterok:3 ", GS_EINVAL, "position 10: expected ',' (all), '?' (any)");
    bad("afterok:3,afterany:4?after:5", GS_EINVAL, "position 21: ',' (all) and '?' (any)");
    bad("before:3", GS_EINVAL, "position 1: unknown dependency type 'before'");
    bad("aftercorr:3", GS_EINVAL, "position 1: 'aftercorr' is not supported");
    bad("singleton:3", GS_EINVAL, "position 10: 'singleton' takes no job id");
    bad("singletonx", GS_EINVAL, "unknown dependency type 'singletonx'");
    bad("afterok:3+10", GS_EINVAL, "position 10: delays");
    bad("afterok:3_1", GS_EINVAL, "position 10: array task ids");
    bad("AFTEROK:3", GS_EINVAL, "unknown dependency type 'AFTEROK'");
    /* the message quotes the input */
    bad("afterok:", GS_EINVAL, "dependency 'afterok:'");
    char big[1024] = "afterok";
    for (int i = 0; i < GS_DEPS_MAX + 1; i++) strcat(big, ":1");
    bad(big, GS_ETOOBIG, "more than 64 job ids");
}

static void eval(void)
{
    /* after: started, or ended without starting */
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTER, GS_JOB_PENDING, 0), GS_DEP_WAIT);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTER, GS_JOB_RUNNING, 1), GS_DEP_MET);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTER, GS_JOB_PENDING, 1), GS_DEP_MET); /* requeued */
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTER, GS_JOB_CANCELLED, 0), GS_DEP_MET);
    /* afterany: ended */
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERANY, GS_JOB_RUNNING, 1), GS_DEP_WAIT);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERANY, GS_JOB_FAILED, 1), GS_DEP_MET);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERANY, GS_JOB_DONE, 1), GS_DEP_MET);
    /* afterok: DONE; any other end can never satisfy it */
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTEROK, GS_JOB_PREEMPTED, 1), GS_DEP_WAIT);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTEROK, GS_JOB_DONE, 1), GS_DEP_MET);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTEROK, GS_JOB_FAILED, 1), GS_DEP_NEVER);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTEROK, GS_JOB_CANCELLED, 0), GS_DEP_NEVER);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTEROK, GS_JOB_REJECTED, 0), GS_DEP_NEVER);
    /* afternotok: a failed end */
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERNOTOK, GS_JOB_SUSPENDED, 1), GS_DEP_WAIT);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERNOTOK, GS_JOB_FAILED, 1), GS_DEP_MET);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERNOTOK, GS_JOB_CANCELLED, 1), GS_DEP_MET);
    ASSERT_EQ(gs_dep_eval(GS_DEP_AFTERNOTOK, GS_JOB_DONE, 1), GS_DEP_NEVER);
}

static void combine(void)
{
    gs_deps p;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_deps_parse("afterok:1,afterok:2", &p, &d));
    int st[2] = {GS_DEP_MET, GS_DEP_WAIT};
    ASSERT_EQ(gs_deps_combine(&p, st), GS_DEP_WAIT);
    st[1] = GS_DEP_MET;
    ASSERT_EQ(gs_deps_combine(&p, st), GS_DEP_MET);
    st[0] = GS_DEP_NEVER;
    st[1] = GS_DEP_WAIT;
    ASSERT_EQ(gs_deps_combine(&p, st), GS_DEP_NEVER); /* one never: all can never hold */
    ASSERT_OK(gs_deps_parse("afterok:1?afternotok:1", &p, &d));
    st[0] = GS_DEP_NEVER;
    st[1] = GS_DEP_WAIT;
    ASSERT_EQ(gs_deps_combine(&p, st), GS_DEP_WAIT);
    st[1] = GS_DEP_MET;
    ASSERT_EQ(gs_deps_combine(&p, st), GS_DEP_MET);
    st[1] = GS_DEP_NEVER;
    ASSERT_EQ(gs_deps_combine(&p, st), GS_DEP_NEVER);
}

/* the spec fields: canonical text stored, round trip, errors naming the field */
static void spec_fields(void)
{
    const char *y = "{\"command\": \"true\", \"hold\": true, \"dependency\": "
                    "\"afterok:3,afterok:4,afterany:5\", \"kill_on_invalid_dep\": true}";
    gsd_spec s, t;
    gs_diag d;
    const char *f;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_spec_parse("body", y, strlen(y), &s, &d, &f));
    ASSERT_EQ(s.hold, 1);
    ASSERT_EQ(s.kill_invalid_dep, 1);
    ASSERT_STR(s.dependency, "afterok:3:4,afterany:5"); /* canonical */
    char *json = gsd_spec_to_json(&s);
    ASSERT_OK(gsd_spec_parse("stored", json, strlen(json), &t, &d, &f));
    ASSERT_EQ(t.hold, 1);
    ASSERT_EQ(t.kill_invalid_dep, 1);
    ASSERT_STR(t.dependency, s.dependency);
    free(json);
    gsd_spec_release(&s);
    gsd_spec_release(&t);
    const char *bad = "{\"command\": \"true\", \"dependency\": \"afterok:3,\"}";
    ASSERT_EQ(gsd_spec_parse("body", bad, strlen(bad), &s, &d, &f), GS_EINVAL);
    ASSERT_STR(f, "dependency");
    ASSERT_CONTAINS(d.msg, "position 11");
    const char *badh = "{\"command\": \"true\", \"hold\": \"yes\"}";
    ASSERT(gsd_spec_parse("body", badh, strlen(badh), &s, &d, &f) != 0);
    ASSERT_STR(f, "hold");
    /* a spec built by the CLI is checked the same way */
    gsd_spec_init(&s);
    s.shell = strdup("true");
    s.dependency = strdup("after:");
    ASSERT_EQ(gsd_spec_validate(&s, &d, &f), GS_EINVAL);
    ASSERT_STR(f, "dependency");
    gsd_spec_release(&s);
}

/* job array index lists: sbatch --array's grammar, sorted and without duplicates */
static void array_parse(void)
{
    gs_array a;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_array_parse("0-3", &a, &d));
    ASSERT_EQ(a.n, 4);
    ASSERT_EQ(a.idx[0], 0);
    ASSERT_EQ(a.idx[3], 3);
    ASSERT_EQ(a.throttle, 0);
    gs_array_release(&a);
    ASSERT_OK(gs_array_parse("7,1-5:2,3,0-99%8", &a, &d));
    ASSERT_EQ(a.n, 100); /* 0..99 holds 1, 3, 5 and 7 */
    ASSERT_EQ(a.throttle, 8);
    gs_array_release(&a);
    ASSERT_OK(gs_array_parse("10-30:10,5", &a, &d));
    ASSERT_EQ(a.n, 4);
    int32_t want[] = {5, 10, 20, 30};
    for (int i = 0; i < 4; i++) ASSERT_EQ(a.idx[i], want[i]);
    gs_array_release(&a);
    /* duplicates never count twice: 3000 terms naming 1000 indices */
    char big[16000] = "0-999";
    for (int i = 0; i < 2000; i++) strcat(big, ",5");
    ASSERT_OK(gs_array_parse(big, &a, &d));
    ASSERT_EQ(a.n, 1000);
    ASSERT_EQ(a.idx[999], 999);
    gs_array_release(&a);
    ASSERT_OK(gs_array_parse("1000000", &a, &d));
    ASSERT_EQ(a.idx[0], 1000000);
    gs_array_release(&a);
    /* errors */
    ASSERT_EQ(gs_array_parse("0-1000", &a, &d), GS_ETOOBIG);
    ASSERT_CONTAINS(d.msg, "more than 1000 elements");
    ASSERT_EQ(gs_array_parse("0-1000000", &a, &d), GS_ETOOBIG);
    const char *bad[] = {"",     "-1",    "5-3",      "1-5:0",  "a",       "1,",    "1-",
                         "0-3%", "0-3%0", "0-3%1001", "0-3%2x", "1000001", "1 - 3", "0-3:2:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ASSERT_EQ(gs_array_parse(bad[i], &a, &d), GS_EINVAL);
        ASSERT_EQ(a.n, 0);
        ASSERT(a.idx == NULL);
    }
    ASSERT_EQ(gs_array_parse("0-3%0", &a, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "after '%' give how many elements may run at once (1-1000)");
}

/* the spec field array: kept as given, round trip, errors naming the field */
static void array_spec(void)
{
    const char *y = "{\"command\": \"true\", \"array\": \"0-9%2\"}";
    gsd_spec s, t;
    gs_diag d;
    const char *f;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_spec_parse("body", y, strlen(y), &s, &d, &f));
    ASSERT_STR(s.array, "0-9%2");
    char *json = gsd_spec_to_json(&s);
    ASSERT_OK(gsd_spec_parse("stored", json, strlen(json), &t, &d, &f));
    ASSERT_STR(t.array, "0-9%2");
    free(json);
    gsd_spec_setenv(&t, "GSCHED_ARRAY_TASK_ID", "3");
    gsd_spec_setenv(&t, "GSCHED_ARRAY_TASK_ID", "4"); /* replaced, not added */
    ASSERT_EQ(t.nenv, 1);
    ASSERT_STR(t.env[0].val, "4");
    gsd_spec_release(&s);
    gsd_spec_release(&t);
    const char *bad = "{\"command\": \"true\", \"array\": \"0-3,x\"}";
    ASSERT_EQ(gsd_spec_parse("body", bad, strlen(bad), &s, &d, &f), GS_EINVAL);
    ASSERT_STR(f, "array");
    gsd_spec_init(&s);
    s.shell = strdup("true");
    s.array = strdup("0-5000");
    ASSERT_EQ(gsd_spec_validate(&s, &d, &f), GS_ETOOBIG);
    ASSERT_STR(f, "array");
    gsd_spec_release(&s);
}

static const test_case tests[] = {
    {"array_parse", array_parse},
    {"array_spec", array_spec},
    {"singleton", singleton},
    {"spec_fields", spec_fields},
    {"parse_ok", parse_ok},
    {"parse_errors", parse_errors},
    {"eval", eval},
    {"combine", combine},
};

TEST_MAIN(tests)
