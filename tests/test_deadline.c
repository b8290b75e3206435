/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_deadline.c - deadlines and ElasticFlow (issue 13, deadline lane): the
 * throughput-table progress model (gs_tput), its file reader and the
 * ElasticFlow trace reader (good and bad input, file:line:col), the policies
 * elasticflow (admission rejects an infeasible deadline, and a job that would
 * make an admitted one miss), edf (deadline order) and afs (the pairwise
 * share rule), and the deadline/rescale metrics in summary.json.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "gsched/goodput.h"
#include "gsched/policy.h"
#include "harness.h"
#include "sim.h"

/* ---- the table model ------------------------------------------------------------------ */

static void t_tput_model(void)
{
    gs_tput *t;
    ASSERT_OK(gs_tput_create(&t));
    ASSERT_OK(gs_tput_add(t, "m", 64, 1, 1.0));
    ASSERT_OK(gs_tput_add(t, "m", 64, 16, 4.0)); /* out of order: kept sorted */
    ASSERT_OK(gs_tput_add(t, "m", 64, 2, 1.8));
    ASSERT_OK(gs_tput_add(t, "m", 64, 4, 3.0));
    ASSERT_OK(gs_tput_add(t, "m", 128, 2, 0.5));
    ASSERT_EQ(gs_tput_add(t, "m", 64, 4, 2.0), GS_EEXIST);
    ASSERT_EQ(gs_tput_add(t, "m", 64, 8, 0.0), GS_EINVAL);
    ASSERT_EQ(gs_tput_add(t, "m", 64, 0, 1.0), GS_EINVAL);
    ASSERT_EQ(gs_tput_nrows(t), 2);
    int r = gs_tput_find(t, "m", 64), r2 = gs_tput_find(t, "m", 128);
    ASSERT_EQ(r, 0);
    ASSERT_EQ(r2, 1);
    ASSERT_EQ(gs_tput_find(t, "m", 32), -1);
    ASSERT_EQ(gs_tput_find(t, "x", 64), -1);
    /* measured, interpolated between 4 and 16, flat above, proportional below */
    ASSERT_NEAR(gs_tput_its(t, r, 2), 1.8, 1e-12);
    ASSERT_NEAR(gs_tput_its(t, r, 8), 3.0 + 4.0 / 12.0, 1e-12);
    ASSERT_NEAR(gs_tput_its(t, r, 64), 4.0, 1e-12);
    ASSERT_NEAR(gs_tput_its(t, r2, 1), 0.25, 1e-12);
    ASSERT_NEAR(gs_tput_its(t, r, 0), 0, 0);
    ASSERT_EQ(gs_tput_max_gpus(t, r), 16);
    ASSERT_EQ(gs_tput_best_gpus(t, r), 16);
    /* work: 180 iterations at the reference size 2 (1.8 it/s) = 100 s */
    gs_time w;
    ASSERT_OK(gs_tput_work(t, r, 2, 180, &w));
    ASSERT_EQ(w, 100 * GS_SEC);
    ASSERT_EQ(gs_tput_work(t, r, 2, 0, &w), GS_EINVAL);
    ASSERT_EQ(gs_tput_work(t, 7, 2, 10, &w), GS_EINVAL);
    ASSERT_EQ(gs_tput_work(t, r2, 1, INT64_MAX / 4, &w), GS_ERANGE);

    /* as a progress model: rate(k) = its(k) / its(req) */
    const gs_progress_ops *ops = gs_tput_progress_ops();
    gs_job j;
    memset(&j, 0, sizeof j);
    j.app = "m";
    j.batch_size = 64;
    j.req_gpus = 2;
    j.gpus = 4;
    j.nalloc = 4;
    double rate = 0;
    gs_time next = 0;
    ASSERT_OK(ops->rate(t, NULL, &j, &rate, &next));
    ASSERT_NEAR(rate, 3.0 / 1.8, 1e-12);
    ASSERT_EQ(next, GS_TIME_NONE);
    ASSERT_NEAR(ops->speed(t, NULL, &j, 16), 4.0 / 1.8, 1e-12);
    ASSERT_NEAR(ops->speed(t, NULL, &j, 0), 0, 0);
    j.batch_size = 32; /* no row */
    ASSERT_EQ(ops->rate(t, NULL, &j, &rate, &next), GS_EINVAL);
    gs_tput_destroy(t);
}

/* ---- the table reader ------------------------------------------------------------------ */

static int tparse(const char *s, gs_tput *t, gs_diag *d)
{
    gs_diag_init(d, "m.csv");
    return gs_tput_parse("m.csv", "m", s, strlen(s), t, d);
}

static void t_tput_reader(void)
{
    gs_tput *t;
    gs_diag d;
    ASSERT_OK(gs_tput_create(&t));
    ASSERT_OK(tparse("global_batch_size,1,2,4\n64,1.0,nan,3.0\n128,0.5,,\n", t, &d));
    ASSERT_EQ(gs_tput_nrows(t), 2);
    int r = gs_tput_find(t, "m", 64);
    ASSERT_NEAR(gs_tput_its(t, r, 2), 1.0 + 2.0 / 3.0, 1e-12); /* nan = not measured */
    ASSERT_EQ(gs_tput_max_gpus(t, gs_tput_find(t, "m", 128)), 1);
    gs_tput_destroy(t);

    struct {
        const char *in;
        int err, line, col;
        const char *msg;
    } bad[] = {
        {"batch,1,2\n64,1,2\n", GS_EPARSE, 1, 1, "global_batch_size"},
        {"global_batch_size,1,x\n64,1,2\n", GS_EPARSE, 1, 21, "GPU count"},
        {"global_batch_size,1,1\n64,1,2\n", GS_EEXIST, 1, 21, "appears twice"},
        {"global_batch_size,1,2\n64,1,fast\n", GS_EPARSE, 2, 6, "not a throughput"},
        {"global_batch_size,1,2\n64,1,-2\n", GS_ERANGE, 2, 6, "> 0"},
        {"global_batch_size,1,2\n64,1\n", GS_EPARSE, 2, 1, "expected 3 fields"},
        {"global_batch_size,1,2\n64,nan,\n", GS_EPARSE, 2, 1, "no measured"},
        {"global_batch_size,1,2\n64,1,2\n64,1,2\n", GS_EEXIST, 3, 1, "appears twice"},
        {"global_batch_size,1,2\n", GS_EPARSE, 0, 1, "no rows"},
        {"", GS_EPARSE, 1, 1, "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ASSERT_OK(gs_tput_create(&t));
        int rc = tparse(bad[i].in, t, &d);
        gs_tput_destroy(t);
        if (rc != bad[i].err) T_FAIL("case %zu: rc %d, want %d (%s)", i, rc, bad[i].err, d.msg);
        if (bad[i].line) ASSERT_EQ(d.line, bad[i].line);
        ASSERT_EQ(d.col, bad[i].col);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
}

/* ---- the ElasticFlow trace reader -------------------------------------------------------- */

static int parse(const char *s, gs_trace *t, gs_diag *d)
{
    gs_diag_init(d, "t.csv");
    return gs_trace_parse("t.csv", s, strlen(s), t, d);
}

#define EF_HDR "job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration\n"

static void t_ef_trace(void)
{
    gs_trace t;
    gs_diag d;
    ASSERT_OK(parse(EF_HDR "0,100,2011,cifar10,4611,4096,1,5644\n"
                           "1,50,1548,ncf,,32768,8,66\n",
                    &t, &d));
    ASSERT_EQ(t.format, GS_TRACE_ELASTICFLOW);
    ASSERT_STR(gs_trace_format_name(t.format), "elasticflow");
    ASSERT_EQ(t.n, 2);
    const gs_job_spec *a = &t.jobs[1], *b = &t.jobs[0]; /* sorted by submit */
    ASSERT_EQ(a->id, 0);
    ASSERT_EQ(a->submit, 100 * GS_SEC);
    ASSERT_EQ(a->deadline, 4611 * GS_SEC);
    ASSERT_EQ(a->iterations, 2011);
    ASSERT_EQ(a->batch_size, 4096);
    ASSERT_STR(a->app, "cifar10");
    ASSERT_STR(a->model, "cifar10");
    ASSERT_EQ(a->ntasks, 1);
    ASSERT_EQ(a->gpus_per_task, 1);
    ASSERT_EQ(a->min_gpus, 1);
    ASSERT_EQ(a->max_gpus, 64);
    ASSERT_EQ(a->duration, 5644 * GS_SEC);
    ASSERT_EQ(b->deadline, GS_TIME_NONE); /* empty ddl: best effort */
    ASSERT_EQ(b->ntasks, 8);

    /* the tables: work = iterations / its(num_gpu), max_gpus capped at the largest count */
    gs_tput *tp;
    ASSERT_OK(gs_tput_create(&tp));
    gs_diag_init(&d, NULL);
    ASSERT_OK(
        gs_tput_parse("c", "cifar10", "global_batch_size,1,2,4\n4096,0.5,0.9,1.6\n", 41, tp, &d));
    ASSERT_OK(gs_tput_parse("n", "ncf", "global_batch_size,1,8\n32768,40,20\n", 34, tp, &d));
    ASSERT_OK(gs_trace_apply_tput(&t, tp, "DIR", &d));
    ASSERT_EQ(a->duration, 4022 * GS_SEC); /* 2011 / 0.5 */
    ASSERT_EQ(a->max_gpus, 4);
    ASSERT_NEAR((double)b->duration, 1548.0 / 20 * 1e6, 1);
    ASSERT_EQ(b->max_gpus, 8);
    gs_tput_destroy(tp);
    ASSERT_OK(gs_tput_create(&tp));
    ASSERT_OK(gs_tput_parse("c", "cifar10", "global_batch_size,1\n2048,1\n", 26, tp, &d));
    ASSERT_EQ(gs_trace_apply_tput(&t, tp, "DIR", &d), GS_EUNKNOWN);
    ASSERT_CONTAINS(d.msg, "job 1: DIR/ncf.csv has no row for global batch size 32768");
    gs_tput_destroy(tp);
    gs_trace_release(&t);

    struct {
        const char *in;
        int err, line, col;
        const char *msg;
    } bad[] = {
        {EF_HDR "0,100,2011,cifar10,90,4096,1,5644\n", GS_ERANGE, 2, 20, "not after"},
        {EF_HDR "0,100,many,cifar10,900,4096,1,5644\n", GS_EPARSE, 2, 7, "iteration"},
        {EF_HDR "0,100,0,cifar10,900,4096,1,5644\n", GS_ERANGE, 2, 7, "iteration"},
        {EF_HDR "0,100,10,,900,4096,1,5644\n", GS_EPARSE, 2, 10, "model_name"},
        {EF_HDR "0,100,10,m,900,4096,0,5644\n", GS_ERANGE, 2, 21, "num_gpu"},
        {EF_HDR "0,100,10,m,9x,4096,1,5644\n", GS_EPARSE, 2, 12, "ddl"},
        {EF_HDR "0,100,10,m,900,4096,1\n", GS_EPARSE, 2, 1, "expected 8 fields"},
        {"job_id,submit_time,iteration,model_name,ddl,num_gpu\n0,1,2,m,9,1\n", GS_EPARSE, 1, 1,
         "'batch_size' column"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = parse(bad[i].in, &t, &d);
        if (rc != bad[i].err) T_FAIL("case %zu: rc %d, want %d (%s)", i, rc, bad[i].err, d.msg);
        ASSERT_EQ(d.line, bad[i].line);
        ASSERT_EQ(d.col, bad[i].col);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
}

/* ---- policies ------------------------------------------------------------------------------ */

/* An engine on 'nodes' x 'gpn' GPUs running 'policy' with a tput table (may be NULL),
 * restarts free (preempt_cost=0) unless the params say otherwise. */
static gs_engine *mk(int nodes, int gpn, const char *policy, const char *kv, gs_tput *tp,
                     gs_cluster **cp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    char spec[32];
    snprintf(spec, sizeof spec, "%dx%d", nodes, gpn);
    if (gs_cluster_parse_shorthand(spec, cp, &d)) return NULL;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    if (kv) gs_params_set_kv(&p, kv);
    gs_engine *e = NULL;
    int rc = gs_engine_create(*cp, policy, &p, NULL, &e, &d);
    gs_params_release(&p);
    if (rc) {
        fprintf(stderr, "  engine: %s\n", d.msg);
        return NULL;
    }
    if (tp && gs_engine_set_progress(e, gs_tput_progress_ops(), tp)) return NULL;
    return e;
}

/* A table: "lin" scales linearly (k it/s at k GPUs), "flat" does not (1 it/s), batch 64. */
static gs_tput *tables(void)
{
    gs_tput *t;
    if (gs_tput_create(&t)) return NULL;
    for (int k = 1; k <= 8; k *= 2) {
        gs_tput_add(t, "lin", 64, k, (double)k);
        gs_tput_add(t, "flat", 64, k, 1.0);
    }
    return t;
}

/* Add the job; say why not on stderr (NULL then). */
static const gs_job *add_job(gs_engine *e, const gs_job_spec *s)
{
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(e, s, &j, &d)) fprintf(stderr, "  add: %s\n", d.msg);
    return j;
}

/* An ElasticFlow-style job: 'iters' iterations of app at batch 64, asking for 'req' GPUs,
 * elastic over 1..8, deadline 'ddl_s' (< 0: none). */
static const gs_job *ejob(gs_engine *e, const gs_tput *tp, int64_t id, const char *app,
                          double submit_s, int64_t iters, int req, double ddl_s)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.app = s.model = app;
    s.batch_size = 64;
    s.iterations = iters;
    s.ntasks = req;
    s.gpus_per_task = 1;
    s.min_gpus = 1;
    s.max_gpus = 8;
    s.submit = gs_time_from_sec(submit_s);
    s.deadline = ddl_s < 0 ? GS_TIME_NONE : gs_time_from_sec(ddl_s);
    if (gs_tput_work(tp, gs_tput_find(tp, app, 64), req, iters, &s.duration)) return NULL;
    return add_job(e, &s);
}

static void t_elasticflow_admission(void)
{
    gs_tput *tp = tables();
    gs_cluster *c;
    gs_engine *e = mk(1, 4, "elasticflow", NULL, tp, &c);
    ASSERT(e);
    /* 1000 iterations by 100 s: 10 it/s, more than 4 GPUs give */
    const gs_job *no = ejob(e, tp, 1, "lin", 0, 1000, 1, 100);
    /* 300 iterations by 100 s: 4 GPUs (4 it/s) can */
    const gs_job *yes = ejob(e, tp, 2, "lin", 0, 300, 1, 100);
    ASSERT(no && yes);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(no->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(no->reason, "elasticflow: rejected: its deadline");
    ASSERT_EQ(yes->state, GS_JOB_DONE);
    ASSERT_LE(yes->end, yes->deadline);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);

    /* A job that is feasible alone but would make an admitted one miss is rejected: job 3
     * needs the 4 GPUs for 100 of its 110 s; job 4 (earlier deadline, planned first) would
     * take one GPU for its first 60 s. */
    e = mk(1, 4, "elasticflow", NULL, tp, &c);
    ASSERT(e);
    const gs_job *big = ejob(e, tp, 3, "lin", 0, 400, 4, 110);
    const gs_job *late = ejob(e, tp, 4, "lin", 1, 50, 1, 61);
    ASSERT(big && late);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(late->state, GS_JOB_REJECTED);
    ASSERT_CONTAINS(late->reason, "would make an admitted job miss its deadline");
    ASSERT_EQ(big->state, GS_JOB_DONE);
    ASSERT_LE(big->end, big->deadline);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_tput_destroy(tp);
}

/* Leftover GPUs go by marginal return, in powers of two; the job that scales gets them. */
static void t_elasticflow_leftovers(void)
{
    gs_tput *tp = tables();
    gs_cluster *c;
    gs_engine *e = mk(1, 8, "elasticflow", NULL, tp, &c);
    ASSERT(e);
    const gs_job *lin = ejob(e, tp, 1, "lin", 0, 100000, 1, 1e6);
    const gs_job *flat = ejob(e, tp, 2, "flat", 0, 1000, 1, 1e6);
    ASSERT(lin && flat);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(lin->state, GS_JOB_RUNNING);
    ASSERT_EQ(flat->state, GS_JOB_RUNNING);
    ASSERT_EQ(lin->gpus, 4); /* 1 each, then 1 -> 2 -> 4 for the job that scales (3 left: no 8) */
    ASSERT_EQ(flat->gpus, 1);
    /* buddy placement: an aligned block */
    ASSERT_EQ(lin->alloc[0] % 4, 0);
    ASSERT_OK(gs_engine_check(e, NULL));
    /* flat ends at 1000 s; lin takes the whole node at that instant, not at the next slot */
    while (flat->state != GS_JOB_DONE && gs_engine_step(e) > 0) {
    }
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(flat->end, 1000 * GS_SEC);
    ASSERT_EQ(lin->rescales, 1);
    ASSERT_EQ(lin->last_rescale, flat->end);
    ASSERT_EQ(lin->gpus, 8);
    ASSERT_CONTAINS(lin->rescale_reason, "elasticflow: grew 4->8 GPUs");
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_tput_destroy(tp);
}

static void t_edf_order(void)
{
    gs_cluster *c;
    gs_engine *e = mk(1, 1, "edf", NULL, NULL, &c);
    ASSERT(e);
    const gs_job *j[4];
    double sub[4] = {0, 1, 2, 2}, ddl[4] = {-1, 1000, 500, -1};
    for (int i = 0; i < 4; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i + 1;
        s.ntasks = 1;
        s.gpus_per_task = 1;
        s.submit = gs_time_from_sec(sub[i]);
        s.duration = 10 * GS_SEC;
        s.deadline = ddl[i] < 0 ? GS_TIME_NONE : gs_time_from_sec(ddl[i]);
        ASSERT_OK(gs_engine_add_job(e, &s, &j[i], NULL));
    }
    ASSERT_OK(gs_engine_run(e));
    for (int i = 0; i < 4; i++) ASSERT_EQ(j[i]->state, GS_JOB_DONE);
    /* job 1 first (alone), then 3 (deadline 500), 2 (1000), 4 (none) */
    ASSERT_EQ(j[0]->first_start, 0);
    ASSERT_EQ(j[2]->first_start, 10 * GS_SEC);
    ASSERT_EQ(j[1]->first_start, 20 * GS_SEC);
    ASSERT_EQ(j[3]->first_start, 30 * GS_SEC);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* edf_gpus=max (the artifact's EDF): in deadline order each job takes the most it may use. */
static void t_edf_max(void)
{
    gs_tput *tp = tables();
    for (int max = 0; max < 2; max++) {
        gs_cluster *c;
        gs_engine *e = mk(1, 4, "edf", max ? "edf_gpus=max" : NULL, tp, &c);
        ASSERT(e);
        const gs_job *late = ejob(e, tp, 1, "lin", 0, 400, 1, 1000);
        const gs_job *early = ejob(e, tp, 2, "lin", 0, 400, 1, 500);
        ASSERT(late && early);
        ASSERT_EQ(gs_engine_step(e), 1);
        if (max) {
            ASSERT_EQ(early->gpus, 4); /* its max_gpus 8, 4 exist */
            ASSERT_EQ(late->state, GS_JOB_PENDING);
        } else {
            ASSERT_EQ(early->gpus, 1); /* rigid at its request */
            ASSERT_EQ(late->gpus, 1);
            ASSERT_EQ(late->state, GS_JOB_RUNNING);
        }
        ASSERT_OK(gs_engine_run(e));
        ASSERT_OK(gs_engine_check(e, NULL));
        ASSERT_EQ(early->end, (max ? 100 : 400) * GS_SEC);
        ASSERT_EQ(late->end, (max ? 200 : 400) * GS_SEC);
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
    }
    gs_tput_destroy(tp);
}

/*
 * AFS on 3 GPUs, two jobs with the same remaining work, "lin" (scales) and "flat" (does
 * not): by algorithms.md 7.1 the first GPU goes to flat (a tie between two jobs holding
 * nothing goes to the second), the second to lin (flat's relative gain from a second GPU is
 * 0), the third to lin (its gain 1 beats flat's 0): lin 2, flat 1.  AFS-P: when lin is much
 * shorter it still wins the third GPU; a new arrival takes GPUs from the others, with the
 * reason naming it.
 */
static void t_afs_shares(void)
{
    gs_tput *tp = tables();
    for (int mode = 0; mode < 2; mode++) {
        gs_cluster *c;
        gs_engine *e = mk(1, 3, "afs", mode ? "afs_mode=p" : NULL, tp, &c);
        ASSERT(e);
        const gs_job *flat = ejob(e, tp, 1, "flat", 0, 10000, 1, -1);
        const gs_job *lin = ejob(e, tp, 2, "lin", 0, 10000, 1, -1);
        ASSERT(flat && lin);
        ASSERT_EQ(gs_engine_step(e), 1);
        ASSERT_EQ(lin->gpus, 2);
        ASSERT_EQ(flat->gpus, 1);
        ASSERT_OK(gs_engine_check(e, NULL));
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
    }
    /* a third job arriving later: shares recomputed, someone shrinks, with the reason */
    gs_cluster *c;
    gs_engine *e = mk(1, 2, "afs", "afs_mode=p", tp, &c);
    ASSERT(e);
    const gs_job *a = ejob(e, tp, 1, "lin", 0, 100000, 1, -1);
    const gs_job *b = ejob(e, tp, 2, "lin", 100, 10, 1, -1);
    ASSERT(a && b);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(a->gpus, 2);
    while (b->state == GS_JOB_PENDING && gs_engine_step(e) > 0) {
    }
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(a->rescales, 1);
    ASSERT_CONTAINS(a->rescale_reason, "afs: shrank 2->1 GPUs: shares recomputed: job 2 arrived");
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    /* b's completion (at 110 s) gives its GPU back to a, though nobody waits: as soon as
     * rescale_gap (60 s) after the shrink at 100 s allows */
    ASSERT_EQ(b->end, 110 * GS_SEC);
    ASSERT_EQ(a->rescales, 2);
    ASSERT_CONTAINS(a->rescale_reason, "afs: grew 1->2 GPUs: shares recomputed: job 2 finished");
    ASSERT_EQ(a->last_rescale, 160 * GS_SEC);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);

    /* a completion with nobody waiting: the survivor grows at that instant (2 + 2 GPUs, then 4) */
    e = mk(1, 4, "afs", "afs_mode=p", tp, &c);
    ASSERT(e);
    a = ejob(e, tp, 1, "lin", 0, 100000, 1, -1);
    b = ejob(e, tp, 2, "lin", 0, 200, 1, -1);
    ASSERT(a && b);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(a->gpus, 2);
    ASSERT_EQ(b->gpus, 2);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(b->end, 100 * GS_SEC);
    ASSERT_EQ(a->rescales, 1);
    ASSERT_EQ(a->last_rescale, 100 * GS_SEC);
    ASSERT_EQ(a->gpus, 4);
    ASSERT_CONTAINS(a->rescale_reason, "afs: grew 2->4 GPUs: shares recomputed: job 2 finished");
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_tput_destroy(tp);
}

/* A rigid job of 'gpus' GPUs (one per task) that runs 'dur_s' seconds. */
static const gs_job *rjob(gs_engine *e, int64_t id, double submit_s, int gpus, double dur_s)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.ntasks = gpus;
    s.gpus_per_task = 1;
    s.submit = gs_time_from_sec(submit_s);
    s.duration = gs_time_from_sec(dur_s);
    return add_job(e, &s);
}

/*
 * AFS-P with rigid jobs only (every job takes one step, its request): the GPUs go by speed at
 * the request (the shortest remaining work first), a tie to the later job, and a job that
 * does not fit what is left is passed over for smaller ones behind it.  4 GPUs; at 0: j1 2 GPUs
 * 100 s, j2 4 GPUs 50 s, j3 2 GPUs 300 s, j4 3 GPUs 100 s, j5 1 GPU 400 s.  j2 first (alone);
 * at 50 s j4 (tied with j1, later) takes 3, j1 and j3 do not fit, j5 takes the last GPU; at
 * 150 s j1 (100 s) takes 2, then j5 (300 s left) ties with j3 (300 s) and, later, keeps its
 * GPU: j3 waits for j1's end at 250 s, nobody is paused.  gs_engine_check after every step
 * (afs_check: the watch list, the kept sums).
 */
static void t_afs_rigid(void)
{
    gs_cluster *c;
    gs_engine *e = mk(1, 4, "afs", "afs_mode=p", NULL, &c);
    ASSERT(e);
    const gs_job *j1 = rjob(e, 1, 0, 2, 100), *j2 = rjob(e, 2, 0, 4, 50);
    const gs_job *j3 = rjob(e, 3, 0, 2, 300), *j4 = rjob(e, 4, 0, 3, 100);
    const gs_job *j5 = rjob(e, 5, 0, 1, 400);
    ASSERT(j1 && j2 && j3 && j4 && j5);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(j2->state, GS_JOB_RUNNING);
    ASSERT_EQ(j1->state, GS_JOB_PENDING);
    ASSERT_CONTAINS(j1->reason, "afs: no share at the last recomputation");
    ASSERT_EQ(j4->state, GS_JOB_PENDING);
    int rc;
    while ((rc = gs_engine_step(e)) > 0) ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(j2->first_start, 0);
    ASSERT_EQ(j4->first_start, 50 * GS_SEC);
    ASSERT_EQ(j5->first_start, 50 * GS_SEC);
    ASSERT_EQ(j1->first_start, 150 * GS_SEC);
    ASSERT_EQ(j3->first_start, 250 * GS_SEC);
    ASSERT_EQ(j5->end, 450 * GS_SEC);
    ASSERT_EQ(j5->preemptions + j3->preemptions + j1->preemptions, 0);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/* Node 1 bad at 700 s and good again at 2,500 s, node 0 down at 1,500 s and up at 2,000 s;
 * then the run to its end, the engine (and the policy) checked after every step. */
static void run_with_node_events(gs_engine *e)
{
    ASSERT_OK(gs_engine_add_node_bad_event(e, gs_time_from_sec(700), 1, 1));
    ASSERT_OK(gs_engine_add_node_bad_event(e, gs_time_from_sec(2500), 1, 0));
    ASSERT_OK(gs_engine_add_node_event(e, gs_time_from_sec(1500), 0, 1));
    ASSERT_OK(gs_engine_add_node_event(e, gs_time_from_sec(2000), 0, 0));
    int rc;
    while ((rc = gs_engine_step(e)) > 0) ASSERT_OK(gs_engine_check(e, NULL));
    ASSERT_EQ(rc, 0);
}

/*
 * AFS on random overloaded workloads, rigid only and with elastic jobs among them, a node
 * marked bad and good again, another failing (its jobs requeued) and back: every job ends, and
 * afs_check (the watch list holds every job not RUNNING at its share, the kept sums of first sizes,
 * the shares when all fit) holds after every step, in both modes.
 */
static void t_afs_random(void)
{
    gs_tput *tp = tables();
    ASSERT(tp);
    for (int round = 0; round < 4; round++) {
        int elastic = round >= 2;
        gs_cluster *c;
        gs_engine *e = mk(2, 4, "afs", round % 2 ? "afs_mode=p" : NULL, elastic ? tp : NULL, &c);
        ASSERT(e);
        gs_rng r;
        gs_rng_seed(&r, 1234u + (uint64_t)round);
        const gs_job *js[160];
        double t = 0;
        for (int i = 0; i < 160; i++) {
            t += (double)gs_rng_below(&r, 40);
            int g = 1 << gs_rng_below(&r, 4);
            if (elastic && i % 4 == 0)
                js[i] = ejob(e, tp, i + 1, i % 8 ? "lin" : "flat", t,
                             10 + (int64_t)gs_rng_below(&r, 400), g, -1);
            else
                js[i] = rjob(e, i + 1, t, g, 10 + (double)gs_rng_below(&r, 600));
            ASSERT(js[i]);
        }
        run_with_node_events(e);
        for (int i = 0; i < 160; i++) ASSERT_EQ(js[i]->state, GS_JOB_DONE);
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
    }
    gs_tput_destroy(tp);
}

/* One run of t_elasticflow_random's workload 'round' with parameters kv: every job's
 * outcome (state, first start, end, rescales) in out[4 * i ...]. */
static void ef_random_run(gs_tput *tp, int round, const char *kv, int64_t *out)
{
    int elastic = round >= 2;
    gs_cluster *c;
    gs_engine *e = mk(2, 4, "elasticflow", kv, elastic ? tp : NULL, &c);
    ASSERT(e);
    gs_rng r;
    gs_rng_seed(&r, 4321u + (uint64_t)round);
    const gs_job *js[160];
    double t = 0;
    for (int i = 0; i < 160; i++) {
        t += (double)gs_rng_below(&r, (const unsigned[]){600, 40, 120, 300}[round]);
        int g = 1 << gs_rng_below(&r, 4);
        if (elastic && i % 3 == 0)
            js[i] =
                ejob(e, tp, i + 1, i % 6 ? "lin" : "flat", t, 10 + (int64_t)gs_rng_below(&r, 400),
                     g, round == 2 || i % 2 ? t + 200 + (double)gs_rng_below(&r, 2000) : -1);
        else
            js[i] = rjob(e, i + 1, t, g, 10 + (double)gs_rng_below(&r, 600));
        ASSERT(js[i]);
    }
    run_with_node_events(e);
    int done = 0, rejected = 0;
    for (int i = 0; i < 160; i++) {
        done += js[i]->state == GS_JOB_DONE;
        rejected += js[i]->state == GS_JOB_REJECTED;
        out[4 * i] = js[i]->state;
        out[4 * i + 1] = js[i]->first_start;
        out[4 * i + 2] = js[i]->end;
        out[4 * i + 3] = js[i]->rescales;
    }
    ASSERT_EQ(done + rejected, 160);
    if (!elastic) ASSERT_EQ(rejected, 0);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

/*
 * ElasticFlow on random workloads, light and overloaded: rigid jobs only (the passes switch
 * between starting the waiting jobs alone, while what the active jobs ask fits, and first
 * fit over the list), then with deadline jobs (some rejected) and elastic ones among them; a
 * node marked bad and good again, another failing (its jobs requeued) and back.  ef_check
 * (the active list's order and keys, its counts, every waiting job in the waiting list) holds
 * after every step, every job ends (done, or rejected at its arrival), and every outcome is
 * that of full_plan=on (a full plan at every pass).
 */
static void t_elasticflow_random(void)
{
    gs_tput *tp = tables();
    ASSERT(tp);
    static int64_t a[4 * 160], b[4 * 160];
    for (int round = 0; round < 4; round++) {
        ef_random_run(tp, round, NULL, a);
        ef_random_run(tp, round, "full_plan=on", b);
        for (int i = 0; i < 4 * 160; i++)
            if (a[i] != b[i])
                T_FAIL("round %d job %d field %d: %lld, full plans %lld", round, i / 4 + 1, i % 4,
                       (long long)a[i], (long long)b[i]);
    }
    gs_tput_destroy(tp);
}

/* ---- metrics --------------------------------------------------------------------------- */

static char tmpdir[] = "/tmp/gsched-deadline-XXXXXX";

static int write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(s, f);
    return fclose(f);
}

static int run_ef(const char *trace, const char *policy, gs_sim_result *r)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, trace);
    if (gs_trace_load(trace, &t, &d)) return -1;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tp", tmpdir);
    int rc = t.format == GS_TRACE_ELASTICFLOW ? gs_tput_load_dir(dir, &t, &t.tput, &d) ||
                                                    gs_trace_apply_tput(&t, t.tput, dir, &d)
                                              : 0;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "preempt_cost", "0");
    gs_sim_opts o = {0};
    o.cluster_spec = "1x4";
    o.policy = policy;
    o.params = &p;
    gs_engine_opts_init(&o.eopts);
    memset(r, 0, sizeof *r);
    if (!rc) rc = gs_sim_run(&o, &t, r, &d);
    if (rc) fprintf(stderr, "  %s\n", d.msg);
    /* the engine uses the trace's tables: done with it before the trace goes (the writers
     * only read the jobs) */
    gs_engine_destroy(r->engine);
    r->engine = NULL;
    gs_trace_release(&t);
    gs_params_release(&p);
    return rc;
}

static void t_metrics(void)
{
    ASSERT(mkdtemp(tmpdir));
    char p[600], tr[600];
    snprintf(p, sizeof p, "%s/tp", tmpdir);
    ASSERT_OK(mkdir(p, 0755));
    snprintf(p, sizeof p, "%s/tp/lin.csv", tmpdir);
    ASSERT_OK(write_file(p, "global_batch_size,1,2,4\n64,1,2,4\n"));
    snprintf(tr, sizeof tr, "%s/ef.csv", tmpdir);
    /* 1: feasible; 2: impossible (rejected, missed); 3: no deadline */
    ASSERT_OK(write_file(tr, EF_HDR "1,0,200,lin,100,64,1,\n"
                                    "2,0,5000,lin,100,64,1,\n"
                                    "3,0,40,lin,,64,1,\n"));
    gs_sim_result r;
    ASSERT_OK(run_ef(tr, "elasticflow", &r));
    ASSERT_EQ(r.elastic, 1);
    ASSERT_EQ(r.deadline_jobs, 2);
    ASSERT_EQ(r.deadline_met, 1);
    ASSERT_NEAR(r.deadline_met_ratio, 0.5, 1e-12);
    ASSERT_EQ(r.jobs_rejected, 1);
    ASSERT(r.avg_goodput > 0);
    snprintf(p, sizeof p, "%s/summary.json", tmpdir);
    ASSERT_OK(gs_write_summary(p, &r, NULL));
    json_error_t je;
    json_t *o = json_load_file(p, 0, &je);
    ASSERT(o);
    ASSERT_NEAR(json_real_value(json_object_get(o, "deadline_met_ratio")), 0.5, 1e-12);
    ASSERT_EQ(json_integer_value(json_object_get(o, "deadline_jobs")), 2);
    ASSERT(json_object_get(o, "rescales_per_job"));
    ASSERT(json_object_get(o, "rescale_gpu_s"));
    json_decref(o);
    snprintf(p, sizeof p, "%s/timeline.csv", tmpdir);
    ASSERT_OK(gs_write_timeline(p, &r));
    char *buf;
    size_t len;
    gs_diag d;
    ASSERT_OK(gs_read_file(p, &buf, &len, &d));
    const char *hdr = "time_s,allocated_gpus,running_jobs,pending_jobs,suspended_jobs,"
                      "packed_gpus,goodput\n";
    ASSERT(!strncmp(buf, hdr, strlen(hdr)));
    free(buf);
    gs_sim_result_release(&r);

    /* no deadline and no elastic job: none of these keys, the timeline as before */
    snprintf(tr, sizeof tr, "%s/rigid.csv", tmpdir);
    ASSERT_OK(write_file(tr, "submit,duration,gpus\n0,10,1\n5,10,2\n"));
    ASSERT_OK(run_ef(tr, "fifo", &r));
    ASSERT_EQ(r.elastic, 0);
    snprintf(p, sizeof p, "%s/summary2.json", tmpdir);
    ASSERT_OK(gs_write_summary(p, &r, NULL));
    o = json_load_file(p, 0, &je);
    ASSERT(o);
    ASSERT(!json_object_get(o, "deadline_met_ratio"));
    ASSERT(!json_object_get(o, "rescales_per_job"));
    json_decref(o);
    gs_sim_result_release(&r);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    ASSERT_OK(system(cmd));
}

static const test_case tests[] = {
    {"tput_model", t_tput_model},
    {"tput_reader", t_tput_reader},
    {"ef_trace", t_ef_trace},
    {"elasticflow_admission", t_elasticflow_admission},
    {"elasticflow_leftovers", t_elasticflow_leftovers},
    {"edf_order", t_edf_order},
    {"edf_max", t_edf_max},
    {"afs_shares", t_afs_shares},
    {"afs_rigid", t_afs_rigid},
    {"afs_random", t_afs_random},
    {"elasticflow_random", t_elasticflow_random},
    {"metrics", t_metrics},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
