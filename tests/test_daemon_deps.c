/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_deps.c - Slurm dependency strings (--dependency): the parser,
 * its positioned errors, the canonical text, and each type's answer for
 * every state of the job it names, alone and combined by ',' and '?'; the
 * spec fields hold, dependency and kill_on_invalid_dep.
 */
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "harness.h"
#include "spec.h"

static void parse_ok(void)
{
    gsd_deps p;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_deps_parse("afterok:12", &p, &d));
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.v[0].type, GSD_DEP_AFTEROK);
    ASSERT_EQ(p.v[0].id, 12);
    ASSERT_EQ(p.any, 0);
    ASSERT_OK(gsd_deps_parse("afterok:3:4,afternotok:5,after:6,afterany:7", &p, &d));
    ASSERT_EQ(p.n, 5);
    ASSERT_EQ(p.v[1].type, GSD_DEP_AFTEROK);
    ASSERT_EQ(p.v[1].id, 4);
    ASSERT_EQ(p.v[2].type, GSD_DEP_AFTERNOTOK);
    ASSERT_EQ(p.v[3].type, GSD_DEP_AFTER);
    ASSERT_EQ(p.v[4].type, GSD_DEP_AFTERANY);
    char buf[256];
    gsd_deps_format(&p, buf, sizeof buf);
    ASSERT_STR(buf, "afterok:3:4,afternotok:5,after:6,afterany:7");
    ASSERT_OK(gsd_deps_parse("afterok:1?afternotok:1", &p, &d));
    ASSERT_EQ(p.any, 1);
    gsd_deps_format(&p, buf, sizeof buf);
    ASSERT_STR(buf, "afterok:1?afternotok:1");
    /* the canonical text parses back to the same terms */
    gsd_deps q;
    ASSERT_OK(gsd_deps_parse(buf, &q, &d));
    ASSERT_EQ(q.n, p.n);
    ASSERT_EQ(memcmp(q.v, p.v, sizeof(gsd_dep) * (size_t)p.n), 0);
}

static void bad(const char *s, int err, const char *msg)
{
    gsd_deps p;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gsd_deps_parse(s, &p, &d), err);
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
    bad("singleton", GS_EINVAL, "position 1: 'singleton' is not supported");
    bad("afterok:3+10", GS_EINVAL, "position 10: delays");
    bad("afterok:3_1", GS_EINVAL, "position 10: array task ids");
    bad("AFTEROK:3", GS_EINVAL, "unknown dependency type 'AFTEROK'");
    /* the message quotes the input */
    bad("afterok:", GS_EINVAL, "dependency 'afterok:'");
    char big[1024] = "afterok";
    for (int i = 0; i < GSD_DEPS_MAX + 1; i++) strcat(big, ":1");
    bad(big, GS_ETOOBIG, "more than 64 job ids");
}

static void eval(void)
{
    /* after: started, or ended without starting */
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTER, GS_JOB_PENDING, 0), GSD_DEP_WAIT);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTER, GS_JOB_RUNNING, 1), GSD_DEP_MET);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTER, GS_JOB_PENDING, 1), GSD_DEP_MET); /* requeued */
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTER, GS_JOB_CANCELLED, 0), GSD_DEP_MET);
    /* afterany: ended */
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERANY, GS_JOB_RUNNING, 1), GSD_DEP_WAIT);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERANY, GS_JOB_FAILED, 1), GSD_DEP_MET);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERANY, GS_JOB_DONE, 1), GSD_DEP_MET);
    /* afterok: DONE; any other end can never satisfy it */
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTEROK, GS_JOB_PREEMPTED, 1), GSD_DEP_WAIT);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTEROK, GS_JOB_DONE, 1), GSD_DEP_MET);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTEROK, GS_JOB_FAILED, 1), GSD_DEP_NEVER);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTEROK, GS_JOB_CANCELLED, 0), GSD_DEP_NEVER);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTEROK, GS_JOB_REJECTED, 0), GSD_DEP_NEVER);
    /* afternotok: a failed end */
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERNOTOK, GS_JOB_SUSPENDED, 1), GSD_DEP_WAIT);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERNOTOK, GS_JOB_FAILED, 1), GSD_DEP_MET);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERNOTOK, GS_JOB_CANCELLED, 1), GSD_DEP_MET);
    ASSERT_EQ(gsd_dep_eval(GSD_DEP_AFTERNOTOK, GS_JOB_DONE, 1), GSD_DEP_NEVER);
}

static void combine(void)
{
    gsd_deps p;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_deps_parse("afterok:1,afterok:2", &p, &d));
    int st[2] = {GSD_DEP_MET, GSD_DEP_WAIT};
    ASSERT_EQ(gsd_deps_combine(&p, st), GSD_DEP_WAIT);
    st[1] = GSD_DEP_MET;
    ASSERT_EQ(gsd_deps_combine(&p, st), GSD_DEP_MET);
    st[0] = GSD_DEP_NEVER;
    st[1] = GSD_DEP_WAIT;
    ASSERT_EQ(gsd_deps_combine(&p, st), GSD_DEP_NEVER); /* one never: all can never hold */
    ASSERT_OK(gsd_deps_parse("afterok:1?afternotok:1", &p, &d));
    st[0] = GSD_DEP_NEVER;
    st[1] = GSD_DEP_WAIT;
    ASSERT_EQ(gsd_deps_combine(&p, st), GSD_DEP_WAIT);
    st[1] = GSD_DEP_MET;
    ASSERT_EQ(gsd_deps_combine(&p, st), GSD_DEP_MET);
    st[1] = GSD_DEP_NEVER;
    ASSERT_EQ(gsd_deps_combine(&p, st), GSD_DEP_NEVER);
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

static const test_case tests[] = {
    {"spec_fields", spec_fields},   {"parse_ok", parse_ok},
    {"parse_errors", parse_errors}, {"eval", eval},
    {"combine", combine},
};

TEST_MAIN(tests)
