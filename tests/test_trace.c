/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_trace.c - trace readers and their error positions. */
#include <fcntl.h>
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

static void t_gavel_model_name(void)
{
    static const char *const cases[][2] = {
        {"ResNet-50 (batch size 64)", "resnet50-bs64"},
        {"ResNet-18 (batch size 128)", "resnet18-bs128"},
        {"LM (batch size 5)", "lm-bs5"},
        {"Recommendation (batch size 8192)", "recommendation-bs8192"},
        {"Transformer (batch size 16)", "transformer-bs16"},
        {"A3C", "a3c"},
        {"CycleGAN", "cyclegan"},
        /* name_of's regex: the first " (batch size N)"; what follows it is dropped */
        {"X (batch size y) (batch size 8) tail", "xbatchsizey-bs8"},
        {"Big_Model v2 (batch size 0)", "bigmodelv2"},
        {"Odd (batch size 12", "oddbatchsize12"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64];
        gs_gavel_model_name(cases[i][0], out, sizeof out);
        ASSERT_STR(out, cases[i][1]);
    }
    char small[6];
    gs_gavel_model_name("ResNet-50 (batch size 64)", small, sizeof small);
    ASSERT_STR(small, "resne"); /* truncated, terminated */
}

static void t_gavel(void)
{
    gs_trace t;
    gs_diag d;
    /* the 10-field format, as in scheduler/traces/physical_cluster/ */
    int rc =
        parse("ResNet-50 (batch size 64)\tpython3 main.py --data_dir=%s/imagenet/\t"
              "image_classification/imagenet\t--num_minibatches\t1\t2931\t4\t2.5\t-1.000000\t"
              "120.5\n"
              "A3C\tpython3 main.py --env PongDeterministic-v4\trl\t--max-steps\t0\t1000\t1\t1\t"
              "-1\t0\r\n"
              "\n"
              "LM (batch size 20)\tpython main.py\tlanguage_modeling\t--steps\t1\t50\t2\t1\t1.2\t"
              "60\n",
              &t, &d);
    if (rc) T_FAIL("%s at %d:%d", d.msg, d.line, d.col);
    ASSERT_EQ(t.format, GS_TRACE_GAVEL);
    ASSERT_STR(gs_trace_format_name(t.format), "gavel");
    ASSERT_EQ(t.n, 3);
    /* sorted by arrival; ids are line order among jobs */
    ASSERT_EQ(t.jobs[0].id, 1);
    ASSERT_STR(t.jobs[0].model, "a3c");
    ASSERT_STR(t.jobs[0].name, "A3C");
    ASSERT_EQ(t.jobs[0].submit, 0);
    ASSERT_EQ(t.jobs[1].id, 2);
    ASSERT_EQ(t.jobs[1].submit, 60 * GS_SEC);
    ASSERT_STR(t.jobs[1].model, "lm-bs20");
    ASSERT_EQ(t.jobs[1].ntasks, 2);
    const gs_job_spec *r50 = &t.jobs[2];
    ASSERT_EQ(r50->id, 0);
    ASSERT_STR(r50->model, "resnet50-bs64");
    ASSERT_STR(r50->name, "ResNet-50 (batch size 64)");
    ASSERT_NEAR(r50->steps, 2931, 0);
    ASSERT_EQ(r50->ntasks, 4); /* scale_factor workers of one GPU */
    ASSERT_EQ(r50->gpus_per_task, 1);
    ASSERT_NEAR(r50->weight, 2.5, 0);
    ASSERT_EQ(r50->submit, 120500000);
    ASSERT_EQ(r50->duration, 0);            /* the work is in steps */
    ASSERT_EQ(r50->deadline, GS_TIME_NONE); /* SLOs ignored, as Gavel does for a trace */
    ASSERT_NEAR(t.jobs[0].weight, 1, 0);
    gs_trace_release(&t);
    /* the legacy 7-field format of scheduler/traces/msr/ */
    rc =
        parse("Transformer (batch size 128)\tcd %s/translation && python3 train.py\t-step\t1\t"
              "5352613\t0.000000\t4\n"
              "Recommendation (batch size 8192)\tpython3 train.py\t-n\t1\t557847\t1456.000000\t1\n",
              &t, &d);
    if (rc) T_FAIL("%s at %d:%d", d.msg, d.line, d.col);
    ASSERT_EQ(t.format, GS_TRACE_GAVEL);
    ASSERT_EQ(t.n, 2);
    ASSERT_STR(t.jobs[0].model, "transformer-bs128");
    ASSERT_NEAR(t.jobs[0].steps, 5352613, 0);
    ASSERT_EQ(t.jobs[0].ntasks, 4);
    ASSERT_EQ(t.jobs[1].submit, 1456 * GS_SEC);
    ASSERT_NEAR(t.jobs[1].weight, 1, 0);
    gs_trace_release(&t);
}

static void t_gavel_files(void)
{
    /* Gavel's own files read unchanged */
    static const struct {
        const char *path;
        size_t n;
    } files[] = {
        {"data/gavel/traces/physical_cluster/artifact_evaluation.trace", 15},
        {"data/gavel/traces/physical_cluster/max_min_fairness.trace", 96},
        {"data/gavel/traces/physical_cluster/minimize_makespan.trace", 100},
        {"data/gavel/traces/physical_cluster/small_test.trace", 20},
        {"data/gavel/traces/msr/seed=0/2869ce.trace", 533},
        {"data/gavel/traces/msr/seed=0/51b7ef.trace", 18},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", GSCHED_SOURCE_DIR, files[i].path);
        gs_trace t;
        gs_diag d;
        gs_diag_init(&d, path);
        int rc = gs_trace_load(path, &t, &d);
        if (rc) T_FAIL("%s: %s at %d:%d", files[i].path, d.msg, d.line, d.col);
        ASSERT_EQ(t.format, GS_TRACE_GAVEL);
        ASSERT_EQ(t.n, files[i].n);
        for (size_t k = 0; k < t.n; k++) {
            ASSERT(t.jobs[k].steps >= 1);
            ASSERT(t.jobs[k].model && t.jobs[k].model[0]);
            ASSERT(t.jobs[k].ntasks >= 1); /* up to 32 in the msr traces */
        }
        gs_trace_release(&t);
    }
    /* max_min_fairness: the last arrival at 46,317 s */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", GSCHED_SOURCE_DIR,
             "data/gavel/traces/physical_cluster/max_min_fairness.trace");
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, path);
    ASSERT_OK(gs_trace_load(path, &t, &d));
    ASSERT_EQ(t.jobs[t.n - 1].submit / GS_SEC, 46317);
    gs_trace_release(&t);
}

static void t_gavel_errors(void)
{
    gs_trace t;
    gs_diag d;
    static const char ok10[] = "A3C\tcmd\trl\t--s\t0\t1000\t1\t1\t-1\t0\n";
    static const struct {
        const char *line2; /* after a valid first line */
        int err, col;
        const char *msg;
    } bad[] = {
        {"A3C\tcmd\trl\t--s\t0\t1000\t1\t1\t-1\n", GS_EPARSE, 1,
         "expected 10 tab-separated fields (Gavel's physical_cluster format), found 9"},
        {"A3C\tcmd\t--s\t0\t1000\t0\t1\n", GS_EPARSE, 1, "expected 10 tab-separated fields"},
        {"A3C\tcmd\trl\t--s\t0\t1e3\t1\t1\t-1\t0\n", GS_EPARSE, 18,
         "total_steps: '1e3' is not an integer"},
        {"A3C\tcmd\trl\t--s\t0\t0\t1\t1\t-1\t0\n", GS_ERANGE, 18, "total_steps must be between 1"},
        {"A3C\tcmd\trl\t--s\t0\t10\t0\t1\t-1\t0\n", GS_ERANGE, 21,
         "scale_factor must be between 1"},
        {"A3C\tcmd\trl\t--s\t0\t10\tfour\t1\t-1\t0\n", GS_EPARSE, 21,
         "scale_factor: 'four' is not an integer"},
        {"A3C\tcmd\trl\t--s\t0\t10\t1\t0\t-1\t0\n", GS_ERANGE, 23,
         "priority_weight must be positive"},
        {"A3C\tcmd\trl\t--s\t0\t10\t1\tnan\t-1\t0\n", GS_EPARSE, 23,
         "priority_weight: 'nan' is not a number"},
        {"A3C\tcmd\trl\t--s\t0\t10\t1\t1\tsoon\t0\n", GS_EPARSE, 25, "SLO: 'soon' is not a number"},
        {"A3C\tcmd\trl\t--s\t0\t10\t1\t1\t-1\t-5\n", GS_ERANGE, 28,
         "arrival_time must not be negative"},
        {"A3C\tcmd\trl\t--s\t0\t10\t1\t1\t-1\tlater\n", GS_EPARSE, 28,
         "arrival_time: 'later' is not a number of seconds"},
        {"A3C\tcmd\trl\t--s\t2\t10\t1\t1\t-1\t0\n", GS_ERANGE, 16,
         "needs_data_dir must be between 0"},
        {"\tcmd\trl\t--s\t0\t10\t1\t1\t-1\t0\n", GS_EPARSE, 1, "job_type: empty"},
        {"()\tcmd\trl\t--s\t0\t10\t1\t1\t-1\t0\n", GS_EPARSE, 1, "has no letters or digits"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, "# a comment\n%s%s", ok10, bad[i].line2);
        int rc = parse(buf, &t, &d);
        if (rc != bad[i].err) T_FAIL("case %zu: rc %d, want %d (%s)", i, rc, bad[i].err, d.msg);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        if (d.line != 3 || d.col != bad[i].col)
            T_FAIL("case %zu: at %d:%d, want 3:%d (%s)", i, d.line, d.col, bad[i].col, d.msg);
    }
    /* a first line with 8 fields */
    ASSERT_EQ(parse("A3C\tcmd\trl\t--s\t0\t1000\t1\t1\n", &t, &d), GS_EPARSE);
    ASSERT_EQ(d.line, 1);
    ASSERT_CONTAINS(d.msg, "expected 10 tab-separated fields");
    /* legacy lines after a 10-field one, and the other way round */
    ASSERT_EQ(
        parse("A3C\tcmd\t--s\t0\t1000\t0\t1\nA3C\tcmd\trl\t--s\t0\t1000\t1\t1\t-1\t0\n", &t, &d),
        GS_EPARSE);
    ASSERT_EQ(d.line, 2);
    ASSERT_CONTAINS(d.msg, "expected 7 tab-separated fields (Gavel's legacy msr format), found 10");
}

static void t_header_case(void)
{
    gs_trace t;
    gs_diag d;
    /* column names in any case */
    int rc = parse("Job_ID,NUM_GPU,Submit_Time,Iterations,Model_Name,Duration,Interval\n"
                   "0,2,30,606,vgg19,164,30\n",
                   &t, &d);
    if (rc) T_FAIL("%s", d.msg);
    ASSERT_EQ(t.format, GS_TRACE_TIRESIAS);
    ASSERT_EQ(t.jobs[0].ntasks, 2);
    gs_trace_release(&t);
    rc = parse("ID,Submit,DURATION,Gpus,GPU_Type\n3,1,10,2,V100\n", &t, &d);
    if (rc) T_FAIL("%s", d.msg);
    ASSERT_EQ(t.format, GS_TRACE_NATIVE);
    ASSERT_EQ(t.jobs[0].id, 3);
    ASSERT_STR(t.jobs[0].gpu_type, "V100");
    gs_trace_release(&t);
    ASSERT_EQ(parse("id,submit,duration,gpus,ID\n1,0,1,1,2\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "appears twice");
    /* the unknown-header message names every format, Gavel's tab-separated ones included */
    ASSERT_EQ(parse("a,b,c\n1,2,3\n", &t, &d), GS_EPARSE);
    ASSERT_CONTAINS(d.msg, "Tiresias");
    ASSERT_CONTAINS(d.msg, "Philly");
    ASSERT_CONTAINS(d.msg, "Pollux");
    ASSERT_CONTAINS(d.msg, "ElasticFlow");
    ASSERT_CONTAINS(d.msg, "gsched (submit,duration,gpus,...)");
    ASSERT_CONTAINS(d.msg, "comma-separated columns (any case)");
    ASSERT_CONTAINS(d.msg, "Gavel's tab-separated lines without a header (10 fields: job_type");
    ASSERT_CONTAINS(d.msg, "legacy 7 of its msr traces)");
    ASSERT(strlen(d.msg) < sizeof d.msg - 1); /* not cut */
}

static void t_native_steps_weight(void)
{
    gs_trace t;
    gs_diag d;
    int rc = parse("submit,duration,steps,weight,gpus,model\n"
                   "0,,2931,2.5,4,resnet50-bs64\n"
                   "1,60,,,1,\n",
                   &t, &d);
    if (rc) T_FAIL("%s at %d:%d", d.msg, d.line, d.col);
    ASSERT_NEAR(t.jobs[0].steps, 2931, 0);
    ASSERT_EQ(t.jobs[0].duration, 0);
    ASSERT_NEAR(t.jobs[0].weight, 2.5, 0);
    ASSERT_NEAR(t.jobs[1].steps, 0, 0);
    ASSERT_EQ(t.jobs[1].duration, 60 * GS_SEC);
    ASSERT_NEAR(t.jobs[1].weight, 1, 0); /* default */
    gs_trace_release(&t);
    /* steps without a duration column */
    ASSERT_OK(parse("submit,steps,gpus\n0,10.5,1\n", &t, &d));
    ASSERT_NEAR(t.jobs[0].steps, 10.5, 0);
    gs_trace_release(&t);
    static const struct {
        const char *csv, *msg;
        int err, line, col;
    } bad[] = {
        {"submit,duration,steps,gpus\n0,10,5,1\n", "give either duration or steps, not both",
         GS_EPARSE, 2, 6},
        {"submit,duration,steps,gpus\n0,,,1\n", "job needs a 'duration' or 'steps'", GS_EPARSE, 2,
         3},
        {"submit,steps,gpus\n0,0,1\n", "steps must be positive", GS_ERANGE, 2, 3},
        {"submit,steps,gpus\n0,many,1\n", "steps: 'many' is not a number", GS_EPARSE, 2, 3},
        {"submit,duration,weight,gpus\n0,1,0,1\n", "weight must be positive", GS_ERANGE, 2, 5},
        {"submit,duration,weight,gpus\n0,1,-2,1\n", "weight must be at least 0", GS_ERANGE, 2, 5},
        {"submit,gpus\n0,1\n", "needs 'submit' and 'duration' (or 'steps')", GS_EPARSE, 1, 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = parse(bad[i].csv, &t, &d);
        if (rc != bad[i].err) T_FAIL("case %zu: rc %d, want %d (%s)", i, rc, bad[i].err, d.msg);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        if (d.line != bad[i].line || d.col != bad[i].col)
            T_FAIL("case %zu: at %d:%d, want %d:%d", i, d.line, d.col, bad[i].line, bad[i].col);
    }
}

/* native columns hold, dependency, array_id, array_limit (issue 16): parsed into the trace's
 * stage before the queue, errors with their position; then simulated (simwait.c): afterok
 * waits for the end, afternotok on a DONE job cancels, a timed hold starts then, a hold
 * without release is cancelled at the end, and an array throttle of 1 runs its elements one
 * after another although GPUs are free */
static void t_native_wait(void)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *csv = "id,submit,duration,gpus,dependency,hold,array_id,array_limit\n"
                      "1,0,100,1,,,,\n"
                      "2,0,50,1,afterok:1,,,\n"
                      "3,0,10,1,afternotok:1,,,\n"
                      "4,0,10,1,,25,,\n"
                      "5,0,10,1,,true,,\n"
                      "6,0,10,1,,,6,1\n"
                      "7,0,10,1,,,6,1\n"
                      "8,0,10,1,,no,,\n";
    ASSERT_OK(parse(csv, &t, &d));
    ASSERT(t.wait != NULL);
    ASSERT(!gs_simwait_has(t.wait, 1));
    ASSERT(gs_simwait_has(t.wait, 2));
    ASSERT(gs_simwait_has(t.wait, 4));
    ASSERT(gs_simwait_has(t.wait, 6));
    ASSERT(!gs_simwait_has(t.wait, 8)); /* hold: no */
    char path[] = "/tmp/gsched-trace-wait-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, csv, strlen(csv)), (ssize_t)strlen(csv));
    close(fd);
    gs_trace_release(&t);
    gs_trace lt;
    ASSERT_OK(gs_trace_load(path, &lt, &d));
    gs_sim_opts o = {0};
    gs_params p;
    gs_params_init(&p);
    o.cluster_spec = "1x8";
    o.policy = "fifo";
    o.params = &p;
    gs_engine_opts_init(&o.eopts);
    gs_sim_result r;
    memset(&r, 0, sizeof r);
    ASSERT_OK(gs_sim_run(&o, &lt, &r, &d));
    const gs_job *j2 = gs_engine_find_job(r.engine, 2), *j3 = gs_engine_find_job(r.engine, 3),
                 *j4 = gs_engine_find_job(r.engine, 4), *j5 = gs_engine_find_job(r.engine, 5),
                 *j6 = gs_engine_find_job(r.engine, 6), *j7 = gs_engine_find_job(r.engine, 7);
    ASSERT_EQ(j2->state, GS_JOB_DONE);
    ASSERT_EQ(j2->first_start, gs_time_from_sec(100));
    ASSERT_EQ(j3->state, GS_JOB_CANCELLED);
    ASSERT_STR(j3->reason, "DependencyNeverSatisfied");
    ASSERT_EQ(j4->first_start, gs_time_from_sec(25));
    ASSERT_EQ(j5->state, GS_JOB_CANCELLED);
    ASSERT_STR(j5->reason, "never released");
    ASSERT_EQ(j6->first_start, 0);
    ASSERT_EQ(j7->first_start, gs_time_from_sec(10)); /* array_limit 1 */
    gs_sim_result_release(&r);
    /* --events: "time,JOB,release" ends job 5's hold; a job not held is refused */
    char epath[] = "/tmp/gsched-trace-wait-ev-XXXXXX";
    fd = mkstemp(epath);
    ASSERT(fd >= 0);
    const char *evs = "time,node,state\n40,5,release\n";
    ASSERT_EQ(write(fd, evs, strlen(evs)), (ssize_t)strlen(evs));
    close(fd);
    gs_events ev;
    ASSERT_OK(gs_events_load(epath, &ev, &d));
    o.events = &ev;
    memset(&r, 0, sizeof r);
    ASSERT_OK(gs_sim_run(&o, &lt, &r, &d));
    j5 = gs_engine_find_job(r.engine, 5);
    ASSERT_EQ(j5->state, GS_JOB_DONE);
    ASSERT_EQ(j5->first_start, gs_time_from_sec(40));
    gs_sim_result_release(&r);
    gs_events_release(&ev);
    fd = open(epath, O_WRONLY | O_TRUNC);
    ASSERT(fd >= 0);
    evs = "40,1,release\n";
    ASSERT_EQ(write(fd, evs, strlen(evs)), (ssize_t)strlen(evs));
    close(fd);
    ASSERT_OK(gs_events_load(epath, &ev, &d));
    memset(&r, 0, sizeof r);
    ASSERT_EQ(gs_sim_run(&o, &lt, &r, &d), GS_EUNKNOWN);
    ASSERT_CONTAINS(d.msg, "release: job 1 is not held");
    gs_sim_result_release(&r);
    gs_events_release(&ev);
    unlink(epath);
    gs_trace_release(&lt);
    gs_params_release(&p);
    unlink(path);
    /* errors */
    ASSERT(parse("id,submit,duration,gpus,dependency\n1,0,1,1,afterok:\n", &t, &d) != 0);
    ASSERT_CONTAINS(d.msg, "expected a job id");
    ASSERT(parse("id,submit,duration,gpus,array_limit\n1,0,1,1,2\n", &t, &d) != 0);
    ASSERT_CONTAINS(d.msg, "needs an array_id");
    ASSERT(parse("id,submit,duration,gpus,hold\n1,0,1,1,soon\n", &t, &d) != 0);
    ASSERT_CONTAINS(d.msg, "hold");
}

static const test_case tests[] = {
    {"native_wait", t_native_wait},
    {"tiresias", t_tiresias},
    {"philly", t_philly},
    {"native", t_native},
    {"errors", t_errors},
    {"fuzz_regressions", t_fuzz_regressions},
    {"events_file", t_events_file},
    {"gavel_model_name", t_gavel_model_name},
    {"gavel", t_gavel},
    {"gavel_files", t_gavel_files},
    {"gavel_errors", t_gavel_errors},
    {"header_case", t_header_case},
    {"native_steps_weight", t_native_steps_weight},
};

TEST_MAIN(tests)
