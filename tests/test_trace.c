/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_trace.c - trace readers and their error positions. */
#include <string.h>

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

static const test_case tests[] = {
    {"tiresias", t_tiresias},
    {"philly", t_philly},
    {"native", t_native},
    {"errors", t_errors},
};

TEST_MAIN(tests)
