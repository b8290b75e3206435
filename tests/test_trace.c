/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_trace.c - trace readers and their error positions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "sim.h"

static int parse(const char *s, gs_trace *t, gs_diag *d)
{
    gs_diag_init(d, "t.csv");
    return gs_trace_parse("t.csv", s, strlen(s), t, d);
}

static void t_tiresias(void)
{
    gs_trace t;
    gs_diag d;
    ASSERT_OK(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,1,30,606,vgg19,164,30\n"
                    "1,8,0,133,vgg11,147.5,23\n",
                    &t, &d));
    ASSERT_EQ(t.format, GS_TRACE_TIRESIAS);
    ASSERT_EQ(t.n, 2);
    ASSERT_EQ(t.jobs[0].id, 1); /* sorted by submit */
    ASSERT_EQ(t.jobs[0].ntasks, 8);
    ASSERT_EQ(t.jobs[0].gpus_per_task, 1);
    ASSERT_EQ(t.jobs[0].duration, 147500000);
    ASSERT_STR(t.jobs[0].model, "vgg11");
    ASSERT_EQ(t.jobs[1].submit, 30 * GS_SEC);
    ASSERT_EQ(t.jobs[1].iterations, 606);
    gs_trace_release(&t);
}

static void t_philly(void)
{
    gs_trace t;
    gs_diag d;
    ASSERT_OK(parse("timestamp,duration,num_gpus,gpu_time,cluster\n"
                    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                    "2017-10-09 06:13:03,2951.0,2,5902.0,6214e9\n"
                    "2017-10-09 06:13:03,10.5,1,10.5,6214e9\n",
                    &t, &d));
    ASSERT_EQ(t.format, GS_TRACE_PHILLY);
    ASSERT_EQ(t.n, 3);
    /* unsorted input: relative to the earliest; ties keep file order */
    ASSERT_EQ(t.jobs[0].submit, 0);
    ASSERT_EQ(t.jobs[0].id, 1);
    ASSERT_EQ(t.jobs[1].id, 2);
    ASSERT_EQ(t.jobs[1].duration, 10500000);
    ASSERT_EQ(t.jobs[2].submit, (48 * 60 + 52) * GS_SEC);
    ASSERT_STR(t.jobs[2].vc, "11cb48");
    ASSERT_EQ(t.jobs[1].ntasks, 1);
    gs_trace_release(&t);
}

static void t_native(void)
{
    gs_trace t;
    gs_diag d;
    int rc = parse("# a comment line\n"
                   "id,submit,duration,gpus,gpus_per_task,vc,user,priority,gpu_type,model,name\n"
                   "7,0,100,16,8,vcA,alice,prod,V100,resnet50,\"train, v2\"\n"
                   "8,5,10,1,,vcB,bob,oppo,,,\n"
                   "9,5,10,2,,vcB,bob,42,,,\n",
                   &t, &d);
    if (rc) T_FAIL("%s at %d:%d", d.msg, d.line, d.col);
    ASSERT_EQ(t.format, GS_TRACE_NATIVE);
    ASSERT_EQ(t.jobs[0].ntasks, 2);
    ASSERT_EQ(t.jobs[0].gpus_per_task, 8);
    ASSERT_EQ(t.jobs[0].priority, GS_PRIO_PROD);
    ASSERT_STR(t.jobs[0].name, "train, v2");
    ASSERT_STR(t.jobs[0].gpu_type, "V100");
    ASSERT_EQ(t.jobs[1].priority, -1);
    ASSERT_EQ(t.jobs[1].ntasks, 1);
    ASSERT(t.jobs[1].gpu_type == NULL);
    ASSERT_EQ(t.jobs[2].priority, 42);
    gs_trace_release(&t);
}

static void t_errors(void)
{
    gs_trace t;
    gs_diag d;
    ASSERT_EQ(parse("", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "empty trace");
    ASSERT_EQ(parse("a,b,c\n1,2,3\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "unknown trace header");
    ASSERT_EQ(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,0,0,1,m,10,0\n",
                    &t, &d),
              GS_ERANGE);
    ASSERT_EQ(d.line, 2);
    ASSERT_EQ(d.col, 3);
    ASSERT_CONTAINS(d.msg, "num_gpu must be between 1");
    ASSERT_EQ(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,-2,0,1,m,10,0\n",
                    &t, &d),
              GS_ERANGE);
    ASSERT_EQ(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,1,0,1,m,ten,0\n",
                    &t, &d),
              GS_EPARSE);
    ASSERT_EQ(d.col, 11);
    ASSERT_EQ(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,1,0,1,m,10,0\n"
                    "0,1,5,1,m,10,0\n",
                    &t, &d),
              GS_EEXIST);
    ASSERT_EQ(d.line, 3);
    ASSERT_CONTAINS(d.msg, "duplicate job id 0 (first on line 2)");
    ASSERT_EQ(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,1,0,1,m\n",
                    &t, &d),
              GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "expected 7 fields, found 5");
    ASSERT_EQ(parse("submit,duration,gpus,gpus_per_tsk\n0,1,1,1\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "did you mean 'gpus_per_task'");
    ASSERT_EQ(d.col, 22);
    ASSERT_EQ(parse("submit,duration,gpus,gpus_per_task\n0,1,6,4\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "not a multiple");
    ASSERT_EQ(parse("submit,duration,gpus\n0,-5,1\n", &t, &d), GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "must not be negative");
    ASSERT_EQ(parse("submit,duration,gpus,priority\n0,5,1,urgent\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "prod, test, oppo");
    ASSERT_EQ(parse("timestamp,duration,num_gpus,gpu_time,cluster\n2017-13-09 07:01:55,1,1,1,x\n",
                    &t, &d),
              GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "not a timestamp");
    ASSERT_EQ(parse("submit,duration,gpus\n0,1,\"1\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "unterminated");
    ASSERT_EQ(parse("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n", &t, &d),
              GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "no jobs");
}

/* Inputs found by tests/fuzz (fuzz_trace, fuzz_sim, fuzz_events). */
static void t_fuzz_regressions(void)
{
    gs_trace t;
    gs_diag d;
    /* "nan" seconds passed the range check and reached a double -> int64 conversion (UB) */
    ASSERT_EQ(parse("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:nan,1,1,1,x\n",
                    &t, &d),
              GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "not a timestamp");
    ASSERT_EQ(d.line, 2);
    /* text after the seconds was ignored */
    ASSERT_EQ(parse("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55pm,1,1,1,x\n",
                    &t, &d),
              GS_EPARSE);
    ASSERT_OK(parse(
        "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09T07:01:55.5 ,1,1,1,x\n", &t, &d));
    gs_trace_release(&t);
    /* submit + duration overflowed the engine's microsecond clock (engine.c schedule_finish) */
    ASSERT_EQ(parse("submit,duration,gpus\n9000000000000,9000000000000,1\n", &t, &d), GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "too large (at most 1e11 seconds)");
    ASSERT_EQ(d.col, 1);
    ASSERT_EQ(parse("submit,duration,gpus\n0,100000000001,1\n", &t, &d), GS_ERANGE);
    ASSERT_EQ(d.col, 3);
    ASSERT_OK(parse("submit,duration,gpus\n100000000000,100000000000.999999,1\n", &t, &d));
    ASSERT_EQ(t.jobs[0].duration, 100000000000 * GS_SEC + 999999);
    gs_trace_release(&t);
    /* Philly timestamps far apart: relative submit times are bounded the same way */
    ASSERT_EQ(parse("timestamp,duration,num_gpus,gpu_time,cluster\n"
                    "9999-12-31 00:00:00,1,1,1,x\n"
                    "0001-01-01 00:00:00,1,1,1,x\n",
                    &t, &d),
              GS_ERANGE);
    ASSERT_EQ(d.line, 2);
    ASSERT_CONTAINS(d.msg, "more than 1e11 seconds after the earliest job");
    /* 2^20 tasks x 4096 GPUs: the GPU count overflowed int */
    /* "nan" as a memory size reached a double -> int64 conversion (UB) */
    ASSERT_EQ(parse("submit,duration,gpus,mem\n0,1,1,nan\n", &t, &d), GS_EPARSE);
    ASSERT_EQ(d.col, 7);
    ASSERT_EQ(parse("submit,duration,gpus,gpu_mem\n0,1,1,-nan\n", &t, &d), GS_EPARSE);
    /* a NUL inside a quoted field cut the field short silently */
    ASSERT_EQ(gs_trace_parse("t.csv", "submit,duration,gpus,name\n0,1,1,\"a\0b\"\n", 38, &t, &d),
              GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "NUL byte");
    ASSERT_EQ(parse("submit,duration,tasks,gpus_per_task\n0,1,1048576,4096\n", &t, &d), GS_ERANGE);
    ASSERT_CONTAINS(d.msg, "more than 1048576 GPUs");
    ASSERT_EQ(d.col, 5);
}

static void t_events_file(void)
{
    char path[] = "/tmp/gsched-test-events-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ASSERT(f);
    fputs("time,node,state\n# maintenance\n10,n0,down\n20.5,n0,up\n30,n1,bad\n40,n1,good\n", f);
    fclose(f);
    gs_events ev;
    gs_diag d;
    gs_diag_init(&d, path);
    int rc = gs_events_load(path, &ev, &d);
    if (rc) T_FAIL("%s", d.msg);
    ASSERT_EQ(ev.n, 4);
    ASSERT_EQ(ev.v[1].t, 20500000);
    ASSERT_EQ(ev.v[1].down, 0);
    ASSERT_EQ(ev.v[1].bad, 0);
    ASSERT_STR(ev.v[0].node, "n0");
    ASSERT_EQ(ev.v[0].bad, 0);
    ASSERT_EQ(ev.v[2].down, 1); /* bad */
    ASSERT_EQ(ev.v[2].bad, 1);
    ASSERT_EQ(ev.v[3].down, 0); /* good */
    ASSERT_EQ(ev.v[3].bad, 1);
    gs_events_release(&ev);
    /* an event time beyond the clock's safe range, found by fuzz_events */
    f = fopen(path, "w");
    ASSERT(f);
    fputs("10,n0,down\n99999999999999,n0,up\n", f);
    fclose(f);
    ASSERT_EQ(gs_events_load(path, &ev, &d), GS_ERANGE);
    ASSERT_EQ(d.line, 2);
    ASSERT_EQ(ev.n, 0);
    f = fopen(path, "w");
    ASSERT(f);
    fputs("10,n0,sideways\n", f);
    fclose(f);
    ASSERT_EQ(gs_events_load(path, &ev, &d), GS_EPARSE);
    ASSERT_EQ(d.col, 7);
    unlink(path);
}

static const test_case tests[] = {
    {"tiresias", t_tiresias},
    {"philly", t_philly},
    {"native", t_native},
    {"errors", t_errors},
    {"fuzz_regressions", t_fuzz_regressions},
    {"events_file", t_events_file},
};

TEST_MAIN(tests)
