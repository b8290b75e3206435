/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_elastic.c - elastic jobs in the engine (issue 13): spec validation, the
 * DRAINING / RESIZING transitions and their refusals in SIM and LIVE mode,
 * reservations, budgets, failures, the progress-model hook, the rescale cost
 * presets; and property tests over random elastic workloads driven by a
 * random rescaling test policy (invariants of job.h checked after every step).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

/* ---- a test policy: schedule() and on_timer() call the test's hook ---------------- */

typedef struct tpol {
    gs_engine *e;
    void (*hook)(struct tpol *p);
    int requeues, finishes, passes;
    void *ud;
} tpol;

static tpol *g_pol; /* the policy instance of the current engine */

static int p_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    tpol *s = calloc(1, sizeof *s);
    if (!s) return GS_ENOMEM;
    s->e = e;
    *st = s;
    g_pol = s;
    return 0;
}
static void p_destroy(void *st)
{
    free(st);
}
static int p_requeue(void *st, gs_job *j)
{
    (void)j;
    ((tpol *)st)->requeues++;
    return 0;
}
static int p_finish(void *st, gs_job *j)
{
    (void)j;
    ((tpol *)st)->finishes++;
    return 0;
}
static int p_schedule(void *st)
{
    tpol *s = st;
    s->passes++;
    if (s->hook) s->hook(s);
    return 0;
}
static int p_timer(void *st, uint64_t tag)
{
    (void)st, (void)tag;
    return 0;
}

static const gs_policy_ops test_ops = {
    .name = "elastic-test",
    .summary = "test",
    .create = p_create,
    .destroy = p_destroy,
    .on_requeue = p_requeue,
    .on_finish = p_finish,
    .on_timer = p_timer,
    .schedule = p_schedule,
};

/* ---- records ------------------------------------------------------------------------ */

typedef struct rec {
    gs_time t;
    int type;
    int64_t id;
    int state, gpus, nalloc, nresv;
    uint32_t generation;
    char reason[80];
} rec;

typedef struct recs {
    rec *v;
    size_t n, cap;
} recs;

static recs g_recs;

static void observe(void *ud, const gs_record *r)
{
    recs *rs = ud;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 256;
        rs->v = realloc(rs->v, rs->cap * sizeof *rs->v);
        if (!rs->v) abort();
    }
    rec *x = &rs->v[rs->n++];
    memset(x, 0, sizeof *x);
    x->t = r->t;
    x->type = (int)r->type;
    if (r->job) {
        x->id = r->job->id;
        x->state = (int)r->job->state;
        x->gpus = r->job->gpus;
        x->nalloc = r->job->nalloc;
        x->nresv = r->job->nresv;
        x->generation = r->job->generation;
    } else {
        x->id = -1 - r->node;
    }
    if (r->reason) snprintf(x->reason, sizeof x->reason, "%s", r->reason);
}

static void recs_reset(recs *rs)
{
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}

/* Index of the k-th record of 'type' for job id (k from 0), -1 if none. */
static int rec_find(const recs *rs, int type, int64_t id, int k)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].type == type && rs->v[i].id == id && k-- == 0) return (int)i;
    return -1;
}

/* ---- rigs ----------------------------------------------------------------------------- */

static gs_engine *mk(const char *spec, gs_engine_mode mode, gs_cluster **cp,
                     const char *const *params)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, cp, &d)) return NULL;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = mode;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    for (; params && *params; params++) gs_params_set_kv(&p, *params);
    gs_engine *e = NULL;
    int rc = gs_engine_create_ops(*cp, &test_ops, &p, &o, &e, &d);
    gs_params_release(&p);
    if (rc) {
        gs_cluster_destroy(*cp);
        return NULL;
    }
    recs_reset(&g_recs);
    gs_engine_set_observer(e, observe, &g_recs);
    return e;
}

static void done(gs_engine *e, gs_cluster *c)
{
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    recs_reset(&g_recs);
}

static void spec_elastic(gs_job_spec *s, int64_t id, double submit, int ntasks, int lo, int hi,
                         double dur)
{
    gs_job_spec_init(s);
    s->id = id;
    s->submit = gs_time_from_sec(submit);
    s->ntasks = ntasks;
    s->gpus_per_task = 1;
    s->min_gpus = lo;
    s->max_gpus = hi;
    s->duration = gs_time_from_sec(dur);
}

static const gs_job *add_elastic(gs_engine *e, int64_t id, double submit, int ntasks, int lo,
                                 int hi, double dur)
{
    gs_job_spec s;
    spec_elastic(&s, id, submit, ntasks, lo, hi, dur);
    const gs_job *j = NULL;
    if (gs_engine_add_job(e, &s, &j, NULL)) return NULL;
    return j;
}

/* SIM: step until the clock reaches t (a timer makes sure an event is there). */
static int run_until(gs_engine *e, double t)
{
    gs_time at = gs_time_from_sec(t);
    int rc = gs_engine_set_timer(e, at, 99);
    while (!rc && gs_engine_now(e) < at) {
        rc = gs_engine_step(e);
        if (rc == 0) break;
        rc = rc > 0 ? 0 : rc;
    }
    return rc;
}

static int check(gs_engine *e)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_engine_check(e, &d);
    if (rc) fprintf(stderr, "  check: %s\n", d.msg);
    return rc;
}

/* ---- spec validation and sizes ----------------------------------------------------------- */

static void t_spec_validation(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, NULL);
    ASSERT(e);
    gs_job_spec s;
    gs_diag d;
    const gs_job *j = NULL;
    /* defaults of gs_job_spec_init */
    gs_job_spec_init(&s);
    ASSERT_EQ(s.max_rescales, -1);
    ASSERT_EQ(s.min_rescale_gap, GS_TIME_NONE);
    ASSERT_EQ(s.deadline, GS_TIME_NONE);
    /* sizes are copied sorted and de-duplicated; the gap defaults to the engine's */
    int32_t sizes[] = {4, 1, 2, 4};
    spec_elastic(&s, 1, 0, 2, 1, 8, 10);
    s.sizes = sizes;
    s.nsizes = 4;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    sizes[0] = 99; /* the engine has its own copy */
    ASSERT_EQ(j->nsizes, 3);
    ASSERT_EQ(j->sizes[0], 1);
    ASSERT_EQ(j->sizes[1], 2);
    ASSERT_EQ(j->sizes[2], 4);
    ASSERT_EQ(j->min_rescale_gap, 60 * GS_SEC);
    ASSERT_EQ(j->max_rescales, -1);
    ASSERT_EQ(j->last_rescale, GS_TIME_NONE);
    ASSERT(gs_job_size_valid(j, 1) && gs_job_size_valid(j, 2) && gs_job_size_valid(j, 4));
    ASSERT(!gs_job_size_valid(j, 3) && !gs_job_size_valid(j, 8) && !gs_job_size_valid(j, 0));
    /* a size outside the range */
    int32_t bad[] = {2, 16};
    spec_elastic(&s, 2, 0, 2, 1, 8, 10);
    s.sizes = bad;
    s.nsizes = 2;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "size 16");
    /* the requested size must be valid */
    int32_t two[] = {2, 4};
    spec_elastic(&s, 3, 0, 3, 1, 8, 10);
    s.sizes = two;
    s.nsizes = 2;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "asks for 3 GPUs");
    /* multiples of gpus_per_task */
    int32_t odd[] = {2, 3};
    spec_elastic(&s, 4, 0, 1, 2, 8, 10);
    s.gpus_per_task = 2;
    s.sizes = odd;
    s.nsizes = 2;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "multiple of gpus_per_task");
    /* an elastic job is one gang; budgets are checked */
    spec_elastic(&s, 5, 0, 2, 1, 8, 10);
    s.gang = 0;
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, NULL), GS_EINVAL);
    spec_elastic(&s, 6, 0, 2, 1, 8, 10);
    s.max_rescales = -2;
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, NULL), GS_EINVAL);
    spec_elastic(&s, 7, 0, 2, 1, 8, 10);
    s.min_rescale_gap = -5;
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, NULL), GS_EINVAL);
    spec_elastic(&s, 8, 0, 2, 1, 8, 10);
    s.max_failures = -1;
    ASSERT_EQ(gs_engine_add_job(e, &s, NULL, NULL), GS_EINVAL);
    /* a rigid job keeps its fields; no size is valid for it */
    gs_job_spec_init(&s);
    s.id = 9;
    s.ntasks = 2;
    s.duration = GS_SEC;
    s.app = "cifar10";
    s.deadline = 77 * GS_SEC;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    ASSERT(!gs_job_size_valid(j, 2));
    ASSERT_STR(j->app, "cifar10");
    ASSERT_EQ(j->deadline, 77 * GS_SEC);
    ASSERT_EQ(gs_engine_rescale_allowed_at(e, j), GS_TIME_NONE);
    done(e, c);
}

static void t_engine_params(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_gap=10s", "drain_timeout=5s", NULL};
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    ASSERT_EQ(gs_engine_drain_timeout(e), 5 * GS_SEC);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 4, 10);
    ASSERT(j);
    ASSERT_EQ(j->min_rescale_gap, 10 * GS_SEC);
    done(e, c);
    const char *const bad[] = {"drain_timeout=soon", NULL};
    ASSERT(!mk("2x4", GS_ENGINE_SIM, &c, bad));
    /* defaults */
    e = mk("2x4", GS_ENGINE_SIM, &c, NULL);
    ASSERT(e);
    ASSERT_EQ(gs_engine_drain_timeout(e), 60 * GS_SEC);
    done(e, c);
}

/* ---- SIM transitions -------------------------------------------------------------------- */

/* an elastic job starts at any valid size; the pending counters follow */
static void t_start_any_size(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, NULL);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 4, 100);
    ASSERT(j);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_EQ(gs_engine_pending_gpus(e), 2);
    int five[] = {0, 1, 2, 3, 4};
    ASSERT_EQ(gs_engine_start(e, j, five, 5), GS_EINVAL); /* above max_gpus */
    ASSERT_EQ(j->gpus, 2);
    int three[] = {0, 1, 2};
    ASSERT_OK(gs_engine_start(e, j, three, 3));
    ASSERT_EQ(j->gpus, 3);
    ASSERT_EQ(j->ntasks, 3);
    ASSERT_EQ(j->generation, 1);
    ASSERT_EQ(gs_engine_pending_gpus(e), 0);
    ASSERT_EQ(gs_engine_allocated(e), 3);
    ASSERT_OK(check(e));
    ASSERT(!gs_job_launching(j, gs_engine_now(e))); /* the first start costs nothing here */
    done(e, c);
}

/* grow 2 -> 4 with a drain cost: new GPUs reserved at once, old held until RESIZING */
static void t_sim_grow(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", NULL};
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 4, 1000);
    const gs_job *k = add_elastic(e, 2, 0, 1, 1, 4, 1000);
    ASSERT(j && k);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g01[] = {0, 1};
    ASSERT_OK(gs_engine_start(e, j, g01, 2));
    ASSERT_OK(run_until(e, 100));
    gs_time drain = gs_costs_drain(gs_engine_costs(e), j->model, 2);
    gs_time relaunch = gs_costs_relaunch(gs_engine_costs(e), j->model, 4);
    ASSERT(drain > 0 && relaunch > 0);
    int g0123[] = {0, 1, 2, 3};
    size_t nrec = g_recs.n;
    ASSERT_OK(gs_engine_rescale(e, j, g0123, 4, GS_RESCALE_POLICY, "grew 2->4: test"));
    ASSERT_EQ(j->state, GS_JOB_DRAINING);
    ASSERT_EQ(j->target_gpus, 4);
    ASSERT_EQ(j->nalloc, 2);
    ASSERT_EQ(j->nresv, 4);
    ASSERT_EQ(gs_engine_reserved_gpus(e), 2);
    ASSERT_EQ(gs_engine_allocated(e), 4);
    ASSERT_EQ(gs_cluster_free(c), 4);
    ASSERT_EQ(j->rescales, 1);
    ASSERT_EQ(j->last_rescale, 100 * GS_SEC);
    ASSERT_EQ(j->drain_deadline, 100 * GS_SEC + drain);
    ASSERT_OK(check(e));
    ASSERT_EQ(g_recs.n, nrec + 1);
    ASSERT_EQ(g_recs.v[nrec].type, GS_REC_DRAIN);
    ASSERT_STR(g_recs.v[nrec].reason, "grew 2->4: test");
    /* a reserved GPU is taken: nobody else gets it */
    int g2[] = {2};
    ASSERT_EQ(gs_engine_start(e, k, g2, 1), GS_ECONFLICT);
    /* no progress while draining */
    gs_time rem = gs_job_remaining(j, gs_engine_now(e));
    ASSERT_OK(run_until(e, gs_time_to_sec(100 * GS_SEC + drain)));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->remaining, rem);
    ASSERT_EQ(j->nalloc, 4);
    ASSERT_EQ(j->gpus, 4);
    ASSERT_EQ(j->generation, 2);
    ASSERT_EQ(gs_engine_reserved_gpus(e), 0);
    ASSERT_EQ(gs_engine_allocated(e), 4);
    ASSERT(gs_job_launching(j, gs_engine_now(e)));
    ASSERT_EQ(j->progress_from, 100 * GS_SEC + drain + relaunch);
    ASSERT_OK(check(e));
    int r1 = rec_find(&g_recs, GS_REC_RESCALE, 1, 0), s2 = rec_find(&g_recs, GS_REC_START, 1, 1);
    ASSERT(r1 > 0 && s2 == r1 + 1);
    ASSERT_EQ(g_recs.v[r1].t, 100 * GS_SEC + drain);
    ASSERT_EQ(g_recs.v[s2].generation, 2);
    ASSERT_EQ(g_recs.v[s2].nalloc, 4);
    /* GPU-seconds lost: 4 GPUs x drain (2 held + 2 reserved) + 4 x relaunch */
    ASSERT_NEAR(j->rescale_gpu_s, 4 * gs_time_to_sec(drain) + 4 * gs_time_to_sec(relaunch), 1e-6);
    /* progress follows the scaling curve at 4 GPUs relative to the 2 asked for */
    const gs_costs *co = gs_engine_costs(e);
    double sp = gs_costs_scale(co, j->model, 4) / gs_costs_scale(co, j->model, 2);
    ASSERT_NEAR(j->speed, sp, 1e-12);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(j->state, GS_JOB_DONE);
    double want_end = gs_time_to_sec(j->progress_from) + gs_time_to_sec(rem) / sp;
    ASSERT_NEAR(gs_time_to_sec(j->end), want_end, 1e-5);
    ASSERT_OK(check(e));
    done(e, c);
}

/* shrink 4 -> 2: the old GPUs stay held until RESIZING, then two free */
static void t_sim_shrink(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", NULL};
    gs_engine *e = mk("1x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 4, 1, 4, 1000);
    ASSERT(j);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_start(e, j, g, 4));
    ASSERT_OK(run_until(e, 10));
    int keep[] = {3, 1}; /* any order, a subset */
    ASSERT_OK(gs_engine_rescale(e, j, keep, 2, GS_RESCALE_OPERATOR, "operator"));
    ASSERT_EQ(gs_engine_reserved_gpus(e), 0); /* nothing new to reserve */
    ASSERT_EQ(gs_cluster_free(c), 0);         /* draining GPUs are not reusable */
    ASSERT_OK(check(e));
    ASSERT_OK(run_until(e, 20));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 2);
    ASSERT_EQ(j->alloc[0], 3);
    ASSERT_EQ(j->alloc[1], 1);
    ASSERT_EQ(gs_cluster_free(c), 2);
    ASSERT_EQ(gs_cluster_gpu(c, 0)->owner, -1);
    ASSERT_EQ(gs_cluster_gpu(c, 3)->owner, j->slot);
    ASSERT_EQ(gs_engine_allocated(e), 2);
    ASSERT_EQ(j->rescales, 1);
    ASSERT_OK(check(e));
    done(e, c);
}

/* a save longer than drain_timeout is cut there: forced, the work since the checkpoint lost */
static void t_sim_drain_timeout(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", "drain_timeout=1s", NULL};
    gs_engine *e = mk("1x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 1000);
    s.model = "vgg16";
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    ASSERT(gs_costs_drain(gs_engine_costs(e), "vgg16", 2) > GS_SEC); /* 138 M parameters */
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1, 2};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_OK(run_until(e, 100));
    ASSERT_OK(gs_engine_rescale(e, j, g, 3, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(j->drain_deadline, 101 * GS_SEC);
    ASSERT_OK(run_until(e, 101));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 3);
    ASSERT_EQ(j->progress, 0); /* no checkpoint since its start: 100 s of work lost */
    ASSERT_EQ(j->remaining, 1000 * GS_SEC);
    ASSERT_NEAR(j->lost_work_gpu_s, 2 * 100.0, 1e-6);
    ASSERT_EQ(j->stop_saved, 0);
    ASSERT_OK(check(e));
    done(e, c);
}

/* drain cost 0 (preempt_cost=30): RESIZING at once, the relaunch costs 30 s */
static void t_sim_instant_drain(void)
{
    gs_cluster *c;
    const char *const ps[] = {"preempt_cost=30", NULL};
    gs_engine *e = mk("2x2", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 1, 1, 4, 1000);
    ASSERT(j);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g0[] = {0};
    ASSERT_OK(gs_engine_start(e, j, g0, 1));
    ASSERT_OK(run_until(e, 50));
    int g[] = {0, 1, 2, 3}; /* across both nodes */
    ASSERT_OK(gs_engine_rescale(e, j, g, 4, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 4);
    ASSERT_EQ(j->generation, 2);
    ASSERT_EQ(j->overhead, 30 * GS_SEC);
    ASSERT_EQ(j->progress_from, 80 * GS_SEC);
    int d = rec_find(&g_recs, GS_REC_DRAIN, 1, 0);
    ASSERT(d >= 0);
    ASSERT_EQ(g_recs.v[d + 1].type, GS_REC_RESCALE);
    ASSERT_EQ(g_recs.v[d + 2].type, GS_REC_START);
    ASSERT_EQ(g_recs.v[d + 2].t, 50 * GS_SEC);
    ASSERT_OK(check(e));
    done(e, c);
}

/* k' = 0: DRAINING -> PENDING; a preemption, not a rescale */
static void t_sim_drain_to_pending(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", NULL};
    gs_engine *e = mk("1x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 4, 1000);
    ASSERT(j);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1, 2};
    ASSERT_OK(gs_engine_start(e, j, g, 3));
    ASSERT_OK(run_until(e, 10));
    ASSERT_OK(gs_engine_rescale(e, j, NULL, 0, GS_RESCALE_PREEMPT, "make room for job 9"));
    ASSERT_EQ(j->state, GS_JOB_DRAINING);
    ASSERT_EQ(j->nresv, 0);
    ASSERT_EQ(gs_cluster_free(c), 1);
    ASSERT_EQ(g_pol->requeues, 0);
    ASSERT_OK(run_until(e, 11));
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    ASSERT_EQ(j->gpus, 2); /* back to the size it asked for */
    ASSERT_EQ(gs_cluster_free(c), 4);
    ASSERT_EQ(j->preemptions, 1);
    ASSERT_EQ(j->rescales, 0);
    ASSERT_EQ(j->last_rescale, GS_TIME_NONE);
    ASSERT_EQ(g_pol->requeues, 1);
    ASSERT_STR(j->reason, "make room for job 9");
    int q = rec_find(&g_recs, GS_REC_REQUEUE, 1, 0);
    ASSERT(q >= 0);
    ASSERT_STR(g_recs.v[q].reason, "make room for job 9");
    ASSERT_EQ(gs_engine_npending(e), 1);
    ASSERT_OK(check(e));
    done(e, c);
}

/* every refusal changes nothing */
static void t_refusals(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", NULL};
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 1000);
    s.max_rescales = 2;
    s.min_rescale_gap = 100 * GS_SEC;
    const gs_job *j = NULL, *r = NULL, *o = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    gs_job_spec_init(&s);
    s.id = 2;
    s.ntasks = 1;
    s.duration = 1000 * GS_SEC;
    ASSERT_OK(gs_engine_add_job(e, &s, &r, NULL)); /* rigid */
    o = add_elastic(e, 3, 0, 1, 1, 4, 1000);       /* stays pending */
    ASSERT(j && r && o);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g01[] = {0, 1}, g4[] = {4};
    ASSERT_OK(gs_engine_start(e, j, g01, 2));
    ASSERT_OK(gs_engine_start(e, r, g4, 1));
    size_t nrec = g_recs.n;
    int g012[] = {0, 1, 2};
    ASSERT_EQ(gs_engine_rescale(e, r, g012, 1, GS_RESCALE_OPERATOR, "x"), GS_ESTATE); /* rigid */
    ASSERT_EQ(gs_engine_rescale(e, o, g012, 3, GS_RESCALE_OPERATOR, "x"), GS_ESTATE); /* pending */
    int g5[] = {0, 1, 2, 3, 5};
    ASSERT_EQ(gs_engine_rescale(e, j, g5, 5, GS_RESCALE_OPERATOR, "x"), GS_ERANGE);
    ASSERT_EQ(gs_engine_rescale(e, j, g5, -1, GS_RESCALE_OPERATOR, "x"), GS_ERANGE);
    int busy[] = {0, 4};
    ASSERT_EQ(gs_engine_rescale(e, j, busy, 2, GS_RESCALE_OPERATOR, "x"), GS_ENOFIT);
    int same[] = {1, 0};
    ASSERT_EQ(gs_engine_rescale(e, j, same, 2, GS_RESCALE_OPERATOR, "x"), GS_EINVAL);
    int dup[] = {0, 2, 2};
    ASSERT_EQ(gs_engine_rescale(e, j, dup, 3, GS_RESCALE_OPERATOR, "x"), GS_EINVAL);
    int range[] = {0, 1, 999};
    ASSERT_EQ(gs_engine_rescale(e, j, range, 3, GS_RESCALE_OPERATOR, "x"), GS_EINVAL);
    ASSERT_EQ(gs_engine_rescale(e, j, g012, 3, (gs_rescale_kind)7, "x"), GS_EINVAL);
    ASSERT_EQ(g_recs.n, nrec);
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->rescales, 0);
    ASSERT_EQ(gs_engine_allocated(e), 3);
    ASSERT_OK(check(e));
    /* budgets: a policy rescale, then the gap */
    ASSERT_EQ(gs_engine_rescale_allowed_at(e, j), 0);
    ASSERT_OK(gs_engine_rescale(e, j, g012, 3, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(gs_engine_rescale(e, j, g01, 2, GS_RESCALE_POLICY, "x"), GS_ESTATE); /* draining */
    ASSERT_OK(run_until(e, 10));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_engine_rescale_allowed_at(e, j), 100 * GS_SEC);
    ASSERT_EQ(gs_engine_rescale(e, j, g01, 2, GS_RESCALE_POLICY, "x"), GS_EQUOTA);
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    /* an operator is not held by the gap (and counts) */
    ASSERT_OK(gs_engine_rescale(e, j, g01, 2, GS_RESCALE_OPERATOR, "operator"));
    ASSERT_OK(run_until(e, 20));
    ASSERT_EQ(j->rescales, 2);
    ASSERT_EQ(gs_engine_rescale_allowed_at(e, j), GS_TIME_NONE); /* max_rescales used */
    ASSERT_OK(run_until(e, 500));
    ASSERT_EQ(gs_engine_rescale(e, j, g012, 3, GS_RESCALE_POLICY, "x"), GS_EQUOTA);
    /* a preemption bypasses both and is not counted */
    ASSERT_OK(gs_engine_rescale(e, j, g01 + 1, 1, GS_RESCALE_PREEMPT, "shrink for job 3"));
    ASSERT_OK(run_until(e, 510));
    ASSERT_EQ(j->nalloc, 1);
    ASSERT_EQ(j->rescales, 2);
    ASSERT_OK(check(e));
    done(e, c);
}

/* gs_engine_resize (Gandiva's in-place resize) keeps to the valid sizes too */
static void t_resize_sizes(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x4", GS_ENGINE_SIM, &c, NULL);
    ASSERT(e);
    int32_t sizes[] = {1, 4};
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 1, 1, 4, 100);
    s.sizes = sizes;
    s.nsizes = 2;
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_start(e, j, g, 1));
    ASSERT_EQ(gs_engine_resize(e, j, g, 2, "x"), GS_EINVAL); /* 2 is not in its sizes */
    ASSERT_OK(gs_engine_resize(e, j, g, 4, "x"));
    ASSERT_EQ(j->nalloc, 4);
    ASSERT_OK(check(e));
    done(e, c);
}

/* CPU/memory: a draining job holds per node max(old, new) tasks' worth; settled at RESIZING */
static void t_cpus(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *csv = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
                      "1,2,4,4,64\n";
    ASSERT_OK(gs_cluster_parse_tiresias("t.csv", csv, strlen(csv), &c, &d));
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "rescale_cost", "analytic");
    gs_engine *e = NULL;
    ASSERT_OK(gs_engine_create_ops(c, &test_ops, &p, &o, &e, &d));
    gs_params_release(&p);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 4, 1, 8, 1000);
    s.cpus_per_task = 1;
    const gs_job *a = NULL, *b = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &a, NULL));
    gs_job_spec_init(&s);
    s.id = 2;
    s.cpus_per_task = 3;
    s.duration = 1000 * GS_SEC;
    ASSERT_OK(gs_engine_add_job(e, &s, &b, NULL));
    ASSERT_EQ(gs_engine_step(e), 1);
    const gs_node *n0 = gs_cluster_node(c, 0), *n1 = gs_cluster_node(c, 1);
    int g[] = {0, 1, 2, 3}, g7[] = {7};
    ASSERT_OK(gs_engine_start(e, a, g, 4));
    ASSERT_OK(gs_engine_start(e, b, g7, 1));
    ASSERT_EQ(n0->free_cpus, 0);
    ASSERT_EQ(n1->free_cpus, 1);
    /* two tasks on node 1: only one CPU left there */
    int grow[] = {0, 1, 2, 3, 4, 5};
    ASSERT_EQ(gs_engine_rescale(e, a, grow, 6, GS_RESCALE_OPERATOR, "x"), GS_ENOFIT);
    ASSERT_EQ(n0->free_cpus, 0);
    ASSERT_EQ(n1->free_cpus, 1);
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    /* one more task on node 1 fits; during the drain node 0 keeps its 4 */
    int grow5[] = {0, 1, 2, 3, 4};
    ASSERT_OK(gs_engine_rescale(e, a, grow5, 5, GS_RESCALE_OPERATOR, "x"));
    ASSERT_EQ(n0->free_cpus, 0);
    ASSERT_EQ(n1->free_cpus, 0);
    ASSERT_OK(check(e));
    ASSERT_OK(run_until(e, 10));
    ASSERT_EQ(a->nalloc, 5);
    ASSERT_EQ(n0->free_cpus, 0);
    ASSERT_EQ(n1->free_cpus, 0);
    /* shrink to node 1's task alone: node 0's CPUs free at RESIZING, not before */
    int one[] = {4};
    ASSERT_OK(gs_engine_rescale(e, a, one, 1, GS_RESCALE_OPERATOR, "x"));
    ASSERT_EQ(n0->free_cpus, 0);
    ASSERT_OK(run_until(e, 20));
    ASSERT_EQ(a->nalloc, 1);
    ASSERT_EQ(n0->free_cpus, 4);
    ASSERT_EQ(n1->free_cpus, 0);
    /* grow back to node 0, cancel while draining: everything returns */
    int back[] = {4, 0, 1};
    ASSERT_OK(gs_engine_rescale(e, a, back, 3, GS_RESCALE_OPERATOR, "x"));
    ASSERT_EQ(n0->free_cpus, 2);
    ASSERT_OK(gs_engine_cancel(e, a, "user", gs_engine_now(e)));
    ASSERT_EQ(n0->free_cpus, 4);
    ASSERT_EQ(n1->free_cpus, 1);
    ASSERT_OK(check(e));
    done(e, c);
}

/* a program that cannot resize (SIM mask): refused up front */
static void t_unsupported(void)
{
    gs_cluster *c;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("1x4", &c, &d));
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mech_unsupported = GS_MECH_BIT(GS_MECH_RESIZE);
    gs_engine *e = NULL;
    ASSERT_OK(gs_engine_create_ops(c, &test_ops, NULL, &o, &e, &d));
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 100);
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1, 2};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_EQ(gs_engine_rescale(e, j, g, 3, GS_RESCALE_OPERATOR, "x"), GS_EUNSUPPORTED);
    gs_engine_destroy(e);
    /* a policy whose state is sized at start (GS_POLICY_RIGID): no rescale, not even an
     * operator's or a preemption's */
    gs_policy_ops rigid = test_ops;
    rigid.flags = GS_POLICY_RIGID;
    gs_cluster_destroy(c); /* the engine leaves its allocations in the cluster */
    ASSERT_OK(gs_cluster_parse_shorthand("1x4", &c, &d));
    gs_engine_opts_init(&o);
    ASSERT_OK(gs_engine_create_ops(c, &rigid, NULL, &o, &e, &d));
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_EQ(gs_engine_rescale(e, j, g, 3, GS_RESCALE_OPERATOR, "x"), GS_EUNSUPPORTED);
    ASSERT_EQ(gs_engine_rescale(e, j, NULL, 0, GS_RESCALE_PREEMPT, "x"), GS_EUNSUPPORTED);
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    gs_engine_destroy(e);
    /* the built-in policies that keep such state say so */
    const char *names[] = {"tiresias-las", "yarn-cs", "gandiva", "hived"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const gs_policy_ops *ops = gs_policy_find(names[i]);
        ASSERT(ops && (ops->flags & GS_POLICY_RIGID));
    }
    ASSERT(!(gs_policy_find("fifo")->flags & GS_POLICY_RIGID));
    gs_cluster_destroy(c);
}

/* cancel while draining: old GPUs and the reservation go back */
static void t_cancel_draining(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", NULL};
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 8, 1000);
    ASSERT(j);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    int g6[] = {0, 1, 4, 5, 6, 7};
    ASSERT_OK(gs_engine_rescale(e, j, g6, 6, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(gs_engine_reserved_gpus(e), 4);
    ASSERT_EQ(gs_cluster_free(c), 2);
    ASSERT_OK(gs_engine_cancel(e, j, "user", gs_engine_now(e)));
    ASSERT_EQ(j->state, GS_JOB_CANCELLED);
    ASSERT_EQ(gs_engine_reserved_gpus(e), 0);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    ASSERT_EQ(gs_cluster_free(c), 8);
    ASSERT(!j->resv);
    ASSERT_OK(check(e));
    ASSERT_OK(gs_engine_run(e)); /* the stale drain end is dropped */
    ASSERT_OK(check(e));
    done(e, c);
}

/* the node of a reservation fails while draining: requeued, reservation released */
static void t_node_fails_draining(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=analytic", NULL};
    gs_engine *e = mk("2x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 8, 1000);
    ASSERT(j);
    ASSERT_OK(gs_engine_add_node_event(e, gs_time_from_sec(5) + 1, 1, 1));
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_OK(run_until(e, 5));
    int g4[] = {0, 1, 4, 5};
    ASSERT_OK(gs_engine_rescale(e, j, g4, 4, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(j->state, GS_JOB_DRAINING);
    ASSERT_OK(run_until(e, 5.1));
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    ASSERT_EQ(j->failures, 1);
    ASSERT_EQ(j->rescales, 1);
    ASSERT_EQ(gs_engine_reserved_gpus(e), 0);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    ASSERT_OK(check(e));
    done(e, c);
}

/* ---- LIVE ------------------------------------------------------------------------------ */

static void t_live_drain(void)
{
    gs_cluster *c;
    const char *const ps[] = {"drain_timeout=20s", NULL};
    gs_engine *e = mk("2x4", GS_ENGINE_LIVE, &c, ps);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 100000); /* work: its progress is counted */
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, 0, &j, NULL));
    ASSERT_OK(gs_engine_advance(e, 0));
    int g[] = {0, 1};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_EQ(j->generation, 1);
    ASSERT_OK(gs_engine_advance(e, 100 * GS_SEC));
    int g4[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_rescale(e, j, g4, 4, GS_RESCALE_OPERATOR, "gsched resize 1 --gpus 4"));
    ASSERT_EQ(j->state, GS_JOB_DRAINING);
    ASSERT_EQ(j->drain_deadline, 120 * GS_SEC);
    int d = rec_find(&g_recs, GS_REC_DRAIN, 1, 0);
    ASSERT(d >= 0 && (size_t)d == g_recs.n - 1);
    /* time passes, nothing happens until the daemon reports the exit */
    ASSERT_OK(gs_engine_advance(e, 110 * GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_DRAINING);
    ASSERT_EQ(gs_cluster_free(c), 4);
    ASSERT_OK(check(e));
    gs_time prog = j->progress;
    ASSERT_OK(gs_engine_task_exited(e, j, 143, "checkpointed", 112 * GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 4);
    ASSERT_EQ(j->generation, 2);
    ASSERT_EQ(j->progress, prog); /* nothing lost */
    ASSERT_EQ(j->lost_work_gpu_s, 0);
    int r = rec_find(&g_recs, GS_REC_RESCALE, 1, 0), st = rec_find(&g_recs, GS_REC_START, 1, 1);
    ASSERT(r > d && st == r + 1);
    ASSERT_EQ(g_recs.v[st].t, 112 * GS_SEC);
    ASSERT_EQ(g_recs.v[st].generation, 2);
    ASSERT_OK(check(e));
    /* a forced drain (SIGKILL at the deadline: 137) loses the work since the checkpoint */
    ASSERT_OK(gs_engine_advance(e, 200 * GS_SEC));
    ASSERT_OK(gs_engine_rescale(e, j, g, 2, GS_RESCALE_OPERATOR, "shrink"));
    ASSERT(j->progress > j->last_ckpt);
    gs_time lost = j->progress - j->last_ckpt;
    double sp = j->speed; /* the old generation's */
    ASSERT_OK(gs_engine_task_exited(e, j, 137, "killed at the drain deadline", 220 * GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 2);
    ASSERT_EQ(j->generation, 3);
    ASSERT_EQ(j->progress, j->last_ckpt);
    ASSERT_NEAR(j->lost_work_gpu_s, 4 * gs_time_to_sec(lost) / sp, 1e-6);
    ASSERT_NEAR(j->lost_work_gpu_s, 4 * 88.0, 1e-5); /* its 4 GPUs from 112 s to 200 s */
    ASSERT_EQ(j->stop_saved, 0);
    ASSERT_EQ(gs_cluster_free(c), 6);
    ASSERT_OK(check(e));
    /* drained to 0: PENDING after the exit */
    ASSERT_OK(gs_engine_rescale(e, j, NULL, 0, GS_RESCALE_PREEMPT, "preempted"));
    ASSERT_EQ(j->state, GS_JOB_DRAINING);
    ASSERT_OK(gs_engine_task_exited(e, j, 143, "checkpointed", 230 * GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    ASSERT_EQ(gs_cluster_free(c), 8);
    ASSERT_OK(check(e));
    done(e, c);
}

static void t_live_cancel_draining(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x4", GS_ENGINE_LIVE, &c, NULL);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 1, 1, 4, 0);
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, 0, &j, NULL));
    ASSERT_OK(gs_engine_advance(e, 0));
    int g[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_start(e, j, g, 1));
    ASSERT_OK(gs_engine_rescale(e, j, g, 4, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(gs_engine_reserved_gpus(e), 3);
    ASSERT_OK(gs_engine_cancel(e, j, "user", GS_SEC));
    ASSERT_EQ(gs_engine_reserved_gpus(e), 0);
    ASSERT_EQ(gs_cluster_free(c), 4);
    ASSERT_OK(check(e));
    done(e, c);
}

/* LIVE: a node of the next generation drained while the old one drains: no launch there */
static void t_live_node_drained(void)
{
    gs_cluster *c;
    gs_engine *e = mk("2x2", GS_ENGINE_LIVE, &c, NULL);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 0);
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, 0, &j, NULL));
    ASSERT_OK(gs_engine_advance(e, 0));
    int g[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_OK(gs_engine_rescale(e, j, g, 4, GS_RESCALE_OPERATOR, "grow"));
    ASSERT_OK(gs_engine_drain_node(e, 1, 1, "maintenance"));
    ASSERT_EQ(j->state, GS_JOB_DRAINING); /* draining a node takes nothing away */
    ASSERT_OK(gs_engine_task_exited(e, j, 143, "checkpointed", GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    ASSERT_STR(j->reason, "a node of its next generation went out of service");
    ASSERT_EQ(j->generation, 1);
    ASSERT_EQ(gs_engine_reserved_gpus(e), 0);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    ASSERT_OK(check(e));
    /* the same rescale with node 1 in service launches there */
    ASSERT_OK(gs_engine_drain_node(e, 1, 0, NULL));
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_OK(gs_engine_rescale(e, j, g, 4, GS_RESCALE_OPERATOR, "grow"));
    ASSERT_OK(gs_engine_task_exited(e, j, 143, "checkpointed", 2 * GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_RUNNING);
    ASSERT_EQ(j->nalloc, 4);
    ASSERT_OK(check(e));
    done(e, c);
}

/* failures have their own budget and are never rescales */
static void t_live_failures(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x4", GS_ENGINE_LIVE, &c, NULL);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 0);
    s.max_failures = 1;
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, 0, &j, NULL));
    ASSERT_OK(gs_engine_advance(e, 0));
    int g[] = {0, 1};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_OK(gs_engine_task_exited(e, j, 1, "exit 1", GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_PENDING);
    ASSERT_EQ(j->failures, 1);
    ASSERT_EQ(j->rescales, 0);
    ASSERT_STR(j->reason, "exit 1");
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_EQ(j->generation, 2);
    ASSERT_OK(gs_engine_task_exited(e, j, 1, "exit 1 again", 2 * GS_SEC));
    ASSERT_EQ(j->state, GS_JOB_FAILED);
    ASSERT_EQ(j->failures, 2);
    ASSERT_EQ(j->rescales, 0);
    ASSERT_OK(check(e));
    done(e, c);
}

/* a checkpoint reported by the job bounds what a forced drain loses */
static void t_live_checkpointed(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x4", GS_ENGINE_LIVE, &c, NULL);
    ASSERT(e);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 4, 1, 4, 100000);
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_submit(e, &s, 0, &j, NULL));
    ASSERT_OK(gs_engine_advance(e, 0));
    int g[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_start(e, j, g, 4));
    ASSERT_OK(gs_engine_checkpointed(e, j, 150 * GS_SEC));
    ASSERT_EQ(j->last_ckpt, j->progress);
    ASSERT(j->last_ckpt > 0);
    gs_time ck = j->last_ckpt;
    ASSERT_OK(gs_engine_advance(e, 200 * GS_SEC));
    ASSERT_OK(gs_engine_rescale(e, j, g, 2, GS_RESCALE_POLICY, "shrink"));
    ASSERT_EQ(gs_engine_checkpointed(e, j, 201 * GS_SEC), GS_ESTATE); /* draining */
    ASSERT_OK(gs_engine_task_exited(e, j, 9, "killed", 210 * GS_SEC));
    ASSERT_EQ(j->progress, ck);
    ASSERT_NEAR(j->lost_work_gpu_s, 4 * 50.0, 1e-6); /* 4 GPUs from 150 s to 200 s */
    ASSERT_OK(check(e));
    done(e, c);
}

/* launch_cost=on: the first start pays the relaunch cost too (the Pollux artifact) */
static void t_launch_cost(void)
{
    gs_cluster *c;
    const char *const ps[] = {"rescale_cost=pollux30", "launch_cost=on", NULL};
    gs_engine *e = mk("1x4", GS_ENGINE_SIM, &c, ps);
    ASSERT(e);
    const gs_job *j = add_elastic(e, 1, 0, 2, 1, 4, 100);
    ASSERT(j);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g[] = {0, 1};
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT(gs_job_launching(j, 0));
    ASSERT_EQ(j->progress_from, 30 * GS_SEC);
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(j->end, 130 * GS_SEC);
    ASSERT_EQ(j->restarts, 0);
    ASSERT_EQ(j->overhead_total, 30 * GS_SEC);
    ASSERT_NEAR(gs_job_service(j, j->end), 2 * 130.0, 1e-9); /* service accrues meanwhile */
    done(e, c);
    /* off by default: the first start is free */
    const char *const ps2[] = {"rescale_cost=pollux30", NULL};
    e = mk("1x4", GS_ENGINE_SIM, &c, ps2);
    ASSERT(e);
    j = add_elastic(e, 1, 0, 2, 1, 4, 100);
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_OK(gs_engine_start(e, j, g, 2));
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(j->end, 100 * GS_SEC);
    done(e, c);
}

/* ---- cost presets ------------------------------------------------------------------------ */

static void t_cost_presets(void)
{
    gs_costs co;
    gs_params p;
    gs_diag d;
    struct {
        const char *preset;
        double drain1, relaunch1, relaunch4;
    } cases[] = {
        {"pollux30", 0, 30, 30},
        {"elasticflow", 0, 4, 8}, /* 2 + 2 (log2 g + 1) */
        {"zero", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gs_costs_init(&co);
        gs_params_init(&p);
        gs_params_set(&p, "rescale_cost", cases[i].preset);
        gs_diag_init(&d, NULL);
        ASSERT_OK(gs_costs_from_params(&co, &p, &d));
        ASSERT_NEAR(gs_time_to_sec(gs_costs_drain(&co, "resnet50", 1)), cases[i].drain1, 1e-9);
        ASSERT_NEAR(gs_time_to_sec(gs_costs_relaunch(&co, "resnet50", 1)), cases[i].relaunch1,
                    1e-6);
        ASSERT_NEAR(gs_time_to_sec(gs_costs_relaunch(&co, "resnet50", 4)), cases[i].relaunch4,
                    1e-6);
        gs_costs_release(&co);
        gs_params_release(&p);
    }
    /* analytic and the default (preempt_cost=model): save, then restore + init */
    const char *modes[] = {"analytic", NULL};
    for (int m = 0; m < 2; m++) {
        gs_costs_init(&co);
        gs_params_init(&p);
        if (modes[m]) gs_params_set(&p, "rescale_cost", modes[m]);
        ASSERT_OK(gs_costs_from_params(&co, &p, NULL));
        gs_time save = gs_costs_drain(&co, "resnet50", 4);
        ASSERT(save > 0);
        ASSERT_EQ(save + gs_costs_relaunch(&co, "resnet50", 4),
                  gs_costs_restart(&co, "resnet50", 4, 1));
        gs_costs_release(&co);
        gs_params_release(&p);
    }
    /* the default follows a fixed preempt_cost: no drain, the fixed relaunch */
    gs_costs_init(&co);
    gs_params_init(&p);
    gs_params_set(&p, "preempt_cost", "12s");
    ASSERT_OK(gs_costs_from_params(&co, &p, NULL));
    ASSERT_EQ(gs_costs_drain(&co, "vgg16", 8), 0);
    ASSERT_EQ(gs_costs_relaunch(&co, "vgg16", 8), 12 * GS_SEC);
    gs_costs_release(&co);
    gs_params_release(&p);
    /* a typo is refused with the choices */
    gs_costs_init(&co);
    gs_params_init(&p);
    gs_params_set(&p, "rescale_cost", "pollux");
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_costs_from_params(&co, &p, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "pollux30");
    gs_costs_release(&co);
    gs_params_release(&p);
}

/* ---- the progress-model hook ---------------------------------------------------------- */

/* A model with one boundary: 0.5 work-us per us and GPU until 'edge' work-us, then 1 per GPU. */
typedef struct fake_model {
    gs_time edge;
    int placed, boundaries, released, rates;
} fake_model;

static int fm_rate(void *st, const gs_engine *e, const gs_job *j, double *rate, gs_time *next)
{
    (void)e;
    fake_model *m = st;
    m->rates++;
    int before = j->progress < m->edge;
    *rate = (before ? 0.5 : 1.0) * j->nalloc;
    *next = before ? m->edge : GS_TIME_NONE;
    return 0;
}
static int fm_advance(void *st, const gs_engine *e, const gs_job *j, int placed)
{
    (void)e, (void)j;
    fake_model *m = st;
    if (placed)
        m->placed++;
    else
        m->boundaries++;
    return 0;
}
static void fm_release(void *st, const gs_engine *e, const gs_job *j)
{
    (void)e, (void)j;
    ((fake_model *)st)->released++;
}
static double fm_speed(void *st, const gs_engine *e, const gs_job *j, int gpus)
{
    (void)st, (void)e, (void)j;
    return 0.75 * gpus;
}
static const gs_progress_ops fake_ops = {fm_rate, fm_advance, fm_release, fm_speed};

static void t_progress_model(void)
{
    gs_cluster *c;
    gs_engine *e = mk("1x4", GS_ENGINE_SIM, &c, NULL);
    ASSERT(e);
    fake_model m = {.edge = 100 * GS_SEC};
    gs_progress_ops noop = {0};
    ASSERT_EQ(gs_engine_set_progress(e, &noop, &m), GS_EINVAL); /* rate is required */
    ASSERT_OK(gs_engine_set_progress(e, &fake_ops, &m));
    ASSERT(gs_engine_progress_state(e) == &m);
    ASSERT(gs_engine_progress_ops(e) == &fake_ops);
    gs_job_spec s;
    spec_elastic(&s, 1, 0, 2, 1, 4, 300);
    s.app = "cifar10";
    const gs_job *j = NULL, *r = NULL;
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    spec_elastic(&s, 2, 0, 2, 1, 4, 300); /* no app: the old rates */
    ASSERT_OK(gs_engine_add_job(e, &s, &r, NULL));
    ASSERT_EQ(gs_engine_set_progress(e, NULL, NULL), GS_ESTATE); /* jobs exist */
    ASSERT_NEAR(gs_engine_job_speed(e, j, 3), 2.25, 1e-12);
    ASSERT_NEAR(gs_engine_job_speed(e, r, 2), 1.0, 1e-12);
    const gs_costs *co = gs_engine_costs(e);
    ASSERT_NEAR(gs_engine_job_speed(e, r, 4),
                gs_costs_scale(co, r->model, 4) / gs_costs_scale(co, r->model, 2), 1e-12);
    ASSERT_EQ(gs_engine_job_speed(e, r, 0), 0);
    ASSERT_EQ(gs_engine_step(e), 1);
    int g01[] = {0, 1}, g23[] = {2, 3};
    ASSERT_OK(gs_engine_start(e, j, g01, 2));
    ASSERT_OK(gs_engine_start(e, r, g23, 2));
    ASSERT_EQ(m.placed, 1);
    ASSERT_NEAR(j->speed, 1.0, 1e-12);
    ASSERT_NEAR(r->speed, 1.0, 1e-12);
    /* 100 work-us at 1.0, then 200 at 2.0: the boundary at 100 s, the end at 200 s */
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(m.boundaries, 1);
    ASSERT_EQ(j->state, GS_JOB_DONE);
    ASSERT_EQ(j->end, 200 * GS_SEC);
    ASSERT_EQ(r->end, 300 * GS_SEC);
    ASSERT_EQ(m.released, 1); /* only the modelled job */
    ASSERT_OK(check(e));
    done(e, c);

    /* a rescale re-tunes the model for the new generation (advance with placed = 1) */
    e = mk("1x4", GS_ENGINE_SIM, &c, NULL);
    ASSERT(e);
    fake_model m2 = {.edge = 1000 * GS_SEC};
    ASSERT_OK(gs_engine_set_progress(e, &fake_ops, &m2));
    spec_elastic(&s, 1, 0, 2, 1, 4, 300);
    s.app = "cifar10";
    ASSERT_OK(gs_engine_add_job(e, &s, &j, NULL));
    ASSERT_EQ(gs_engine_step(e), 1);
    ASSERT_OK(gs_engine_start(e, j, g01, 2));
    ASSERT_OK(run_until(e, 100));
    int g4[] = {0, 1, 2, 3};
    ASSERT_OK(gs_engine_rescale(e, j, g4, 4, GS_RESCALE_POLICY, "grow"));
    ASSERT_EQ(m2.placed, 2);
    ASSERT_NEAR(j->speed, 2.0, 1e-12); /* the model's rate at 4 GPUs, not the scaling curve */
    /* 100 work-us done at 0.5 x 2 GPUs; the 200 left at 0.5 x 4 (free drain and relaunch) */
    ASSERT_OK(gs_engine_run(e));
    ASSERT_EQ(j->end, 200 * GS_SEC);
    ASSERT_EQ(m2.released, 1);
    done(e, c);
}

/* ---- property tests: random elastic workloads, a random rescaling policy ----------------- */

#define PJ 12 /* jobs per workload at most */

typedef struct prng {
    uint64_t s;
} prng;

static uint64_t rnd(prng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

/* uniform in [lo, hi] */
static int rint_in(prng *r, int lo, int hi)
{
    return lo + (int)(rnd(r) % (uint64_t)(hi - lo + 1));
}

static int chance(prng *r, int percent)
{
    return (int)(rnd(r) % 100) < percent;
}

typedef struct world {
    gs_engine *e;
    gs_cluster *c;
    prng r; /* the policy's and the daemon's randomness */
    int live;
    char fail[512]; /* the first invariant broken, "" while none */
    uint64_t hash;  /* of the record stream */
    size_t nrec;
    /* per job slot, from the records */
    int rescales[PJ], failures[PJ];
    gs_time last_rescale[PJ];
    gs_time drain_t0[PJ], drain_deadline[PJ];
    int draining[PJ];
    /* LIVE: the test's daemon plan for a drain: when the old generation exits, and how */
    gs_time exit_at[PJ];
    int exit_code[PJ];
    /* statistics, to see that the workloads exercise what they should */
    long drains, resizes, to_pending, quota, nofit, cpu_short, forced, node_fail_drain,
        cancel_drain;
} world;

static world *g_w;

#define WFAIL(...)                                                             \
    do {                                                                       \
        if (!g_w->fail[0]) snprintf(g_w->fail, sizeof g_w->fail, __VA_ARGS__); \
    } while (0)

static int gpu_free(const gs_cluster *c, int g)
{
    const gs_gpu *gp = gs_cluster_gpu(c, g);
    return gp->owner < 0 && gp->users == 0 && !gp->down && !gs_cluster_node(c, gp->node)->down;
}

/*
 * Pick n GPUs (n / gpt tasks of gpt GPUs on one node each) that are free or j's own (when
 * own != NULL), in random node order, preferring j's own GPUs half the time.  1 if found.
 */
static int pick(world *w, const gs_job *j, const gs_job *own, int n, int *out)
{
    int nn = (int)gs_cluster_nnodes(w->c), k = 0, gpt = j->gpus_per_task, cpt = j->cpus_per_task;
    char used[64] = {0}; /* the workloads have at most 12 GPUs */
    int taken[16] = {0}; /* tasks placed per node */
    int start = rint_in(&w->r, 0, nn - 1), prefer_own = own && chance(&w->r, 50);
    int mind_cpus = cpt && chance(&w->r, 80); /* else CPU-short sets, to be refused */
    for (int pass = prefer_own ? 0 : 1; pass < 2 && k < n; pass++)
        for (int i = 0; i < nn && k < n; i++) {
            int ni = (start + i) % nn;
            const gs_node *nd = gs_cluster_node(w->c, ni);
            int cap = 1 << 20; /* tasks the node's CPUs allow: its own ones plus the free CPUs */
            if (mind_cpus && nd->cpus) {
                int mine = 0;
                for (int t = 0; own && t < own->ntasks; t++)
                    mine += gs_cluster_gpu(w->c, own->alloc[t * gpt])->node == ni;
                cap = mine + nd->free_cpus / cpt;
            }
            while (taken[ni] < cap) {
                int got = 0, cand[64];
                for (int g = nd->gpu_lo; g < nd->gpu_hi && got < gpt; g++) {
                    int mine = 0;
                    for (int a = 0; own && a < own->nalloc; a++) mine |= own->alloc[a] == g;
                    if (used[g] || (pass == 0 && !mine) || !(mine || gpu_free(w->c, g))) continue;
                    cand[got++] = g;
                }
                if (got < gpt || k >= n) break;
                for (int q = 0; q < gpt; q++) {
                    used[cand[q]] = 1;
                    out[k++] = cand[q];
                }
                taken[ni]++;
            }
        }
    return k == n;
}

/* A random valid size of elastic job j (never its current one when 'other'), 0 if none. */
static int pick_size(world *w, const gs_job *j, int other)
{
    int cand[64], nc = 0;
    for (int n = 1; n <= j->max_gpus && nc < 64; n++)
        if (gs_job_size_valid(j, n) && (!other || n != j->nalloc)) cand[nc++] = n;
    return nc ? cand[rint_in(&w->r, 0, nc - 1)] : 0;
}

/* Tasks of the n/gpt-task set g on node. */
static int tasks_on(const gs_cluster *c, const int32_t *g, int n, int gpt, int node)
{
    int k = 0;
    for (int t = 0; t < n / gpt; t++) k += gs_cluster_gpu(c, g[t * gpt])->node == node;
    return k;
}

/* 1 if j's tasks on gpus fit the free CPUs, beyond the tasks it runs on each node already. */
static int cpus_fit(world *w, const gs_job *j, const int *gpus, int n)
{
    if (!j->cpus_per_task) return 1;
    int32_t g32[64];
    for (int i = 0; i < n; i++) g32[i] = gpus[i];
    for (int nd = 0; nd < (int)gs_cluster_nnodes(w->c); nd++) {
        const gs_node *node = gs_cluster_node(w->c, nd);
        int more = tasks_on(w->c, g32, n, j->gpus_per_task, nd) -
                   (j->alloc ? tasks_on(w->c, j->alloc, j->nalloc, j->gpus_per_task, nd) : 0);
        if (node->cpus > 0 && more > 0 && more * j->cpus_per_task > node->free_cpus) return 0;
    }
    return 1;
}

/* Every invariant of job.h that can be seen at one instant. */
static void invariants(world *w)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_check(w->e, &d)) WFAIL("gs_engine_check: %s", d.msg);
    int ng = (int)gs_cluster_ngpus(w->c), extra = 0;
    int owner[64]; /* the workloads have at most 12 GPUs */
    for (int g = 0; g < ng; g++) owner[g] = -1;
    gs_time now = gs_engine_now(w->e);
    for (size_t s = 0; s < gs_engine_njobs(w->e); s++) {
        const gs_job *j = gs_engine_job(w->e, s);
        /* a GPU belongs to at most one job generation: held or reserved by one job */
        for (int pass = 0; pass < 2; pass++) {
            const int32_t *l = pass ? j->resv : j->alloc;
            int n = pass ? j->nresv : j->nalloc;
            for (int k = 0; k < n; k++) {
                if (owner[l[k]] >= 0 && owner[l[k]] != j->slot)
                    WFAIL("GPU %d held/reserved by jobs in slots %d and %d", l[k], owner[l[k]],
                          j->slot);
                owner[l[k]] = j->slot;
                if (gs_cluster_gpu(w->c, l[k])->owner != j->slot)
                    WFAIL("job %lld: GPU %d not owned by it in the cluster", (long long)j->id,
                          l[k]);
            }
        }
        if (j->max_gpus > 0 && j->nalloc && !gs_job_size_valid(j, j->nalloc))
            WFAIL("job %lld holds %d GPUs, not a valid size", (long long)j->id, j->nalloc);
        if (j->state == GS_JOB_DRAINING) {
            if (j->target_gpus && !gs_job_size_valid(j, j->target_gpus))
                WFAIL("job %lld drains to %d, not a valid size", (long long)j->id, j->target_gpus);
            if (j->drain_deadline - j->drain_since > gs_engine_drain_timeout(w->e))
                WFAIL("job %lld: drain longer than the timeout", (long long)j->id);
            if (now > j->drain_deadline)
                WFAIL("job %lld still draining at %lld, deadline %lld", (long long)j->id,
                      (long long)now, (long long)j->drain_deadline);
            for (int k = 0; k < j->nresv; k++) {
                int held = 0;
                for (int a = 0; a < j->nalloc; a++) held |= j->alloc[a] == j->resv[k];
                extra += !held;
            }
        } else if (j->resv || j->nresv) {
            WFAIL("job %lld (%s) keeps a reservation", (long long)j->id,
                  gs_job_state_name(j->state));
        }
    }
    if (extra != gs_engine_reserved_gpus(w->e))
        WFAIL("reserved %d, jobs reserve %d", gs_engine_reserved_gpus(w->e), extra);
    /* CPUs: per node, each job's tasks there, max(old, new) while it drains */
    for (int nd = 0; nd < (int)gs_cluster_nnodes(w->c); nd++) {
        const gs_node *node = gs_cluster_node(w->c, nd);
        if (!node->cpus) continue;
        int used = 0;
        for (size_t s = 0; s < gs_engine_njobs(w->e); s++) {
            const gs_job *j = gs_engine_job(w->e, s);
            if (!j->alloc) continue;
            int old = tasks_on(w->c, j->alloc, j->nalloc, j->gpus_per_task, nd);
            int nw = j->resv ? tasks_on(w->c, j->resv, j->nresv, j->gpus_per_task, nd) : 0;
            used += (old > nw ? old : nw) * j->cpus_per_task;
        }
        if (node->cpus - node->free_cpus != used)
            WFAIL("node %d: %d CPUs charged, jobs use %d", nd, node->cpus - node->free_cpus, used);
    }
}

static void w_observe(void *ud, const gs_record *r)
{
    world *w = ud;
    const gs_job *j = r->job;
    uint64_t h = w->hash ^ (uint64_t)r->t;
    h = (h ^ (uint64_t)r->type) * 1099511628211ull;
    if (j) {
        h = (h ^ (uint64_t)j->id) * 1099511628211ull;
        h = (h ^ (uint64_t)j->nalloc ^ ((uint64_t)j->nresv << 16) ^
             ((uint64_t)j->generation << 32)) *
            1099511628211ull;
        for (int k = 0; k < j->nalloc; k++) h = (h ^ (uint64_t)j->alloc[k]) * 1099511628211ull;
    }
    for (const char *p = r->reason; p && *p; p++)
        h = (h ^ (uint64_t)(unsigned char)*p) * 1099511628211ull;
    w->hash = h;
    w->nrec++;
    if (!j || j->slot >= PJ) return;
    int s = j->slot;
    switch (r->type) {
    case GS_REC_DRAIN:
        w->drains++;
        if (j->state != GS_JOB_DRAINING) WFAIL("DRAIN record, job %s", gs_job_state_name(j->state));
        if (j->rescale_kind == GS_RESCALE_POLICY) {
            if (w->last_rescale[s] != GS_TIME_NONE &&
                r->t < w->last_rescale[s] + j->min_rescale_gap)
                WFAIL("job %lld: policy rescale at %lld, %lld after the last (gap %lld)",
                      (long long)j->id, (long long)r->t, (long long)(r->t - w->last_rescale[s]),
                      (long long)j->min_rescale_gap);
            if (j->max_rescales >= 0 && w->rescales[s] >= j->max_rescales)
                WFAIL("job %lld: policy rescale %d past max_rescales %d", (long long)j->id,
                      w->rescales[s] + 1, j->max_rescales);
        }
        if (j->rescale_kind != GS_RESCALE_PREEMPT) {
            w->rescales[s]++;
            w->last_rescale[s] = r->t;
        }
        w->draining[s] = 1;
        w->drain_t0[s] = r->t;
        {
            gs_time to = gs_engine_drain_timeout(w->e),
                    save =
                        w->live ? to : gs_costs_drain(gs_engine_costs(w->e), j->model, j->nalloc);
            w->drain_deadline[s] = r->t + (save < to ? save : to);
            w->forced += save > to;
        }
        if (j->drain_deadline != w->drain_deadline[s])
            WFAIL("job %lld: drain deadline %lld, expected %lld", (long long)j->id,
                  (long long)j->drain_deadline, (long long)w->drain_deadline[s]);
        w->exit_at[s] = GS_TIME_NONE;
        break;
    case GS_REC_RESCALE:
    case GS_REC_REQUEUE:
    case GS_REC_CANCEL:
    case GS_REC_FAIL:
    case GS_REC_FINISH:
        if (r->type == GS_REC_REQUEUE && r->reason && !strcmp(r->reason, "node failed")) {
            w->failures[s]++;
            w->node_fail_drain += w->draining[s];
        }
        if (r->type == GS_REC_CANCEL) w->cancel_drain += w->draining[s];
        if (r->type == GS_REC_REQUEUE && r->reason && strstr(r->reason, "out of service"))
            w->node_fail_drain++;
        if (r->type == GS_REC_RESCALE && !w->draining[s]) WFAIL("RESCALE without a drain");
        if (w->draining[s]) {
            /* every drain ends by its deadline; in SIM exactly then unless cut short */
            if (r->t > w->drain_deadline[s])
                WFAIL("job %lld: drain from %lld ended at %lld, deadline %lld", (long long)j->id,
                      (long long)w->drain_t0[s], (long long)r->t, (long long)w->drain_deadline[s]);
            if (!w->live && r->type == GS_REC_RESCALE && r->t != w->drain_deadline[s])
                WFAIL("job %lld: SIM drain ended at %lld, not at %lld", (long long)j->id,
                      (long long)r->t, (long long)w->drain_deadline[s]);
            if (r->type == GS_REC_RESCALE) w->resizes++;
            if (r->type == GS_REC_REQUEUE && j->state == GS_JOB_PENDING) w->to_pending++;
            w->draining[s] = 0;
        }
        break;
    default: break;
    }
}

/* The random rescaling policy: starts pending jobs at random sizes on random GPUs, rescales
 * running elastic jobs at random (sizes, GPUs, kinds), and checks every answer. */
static void rescale_some(world *w, const gs_job *j)
{
    gs_engine *e = w->e;
    int kind = chance(&w->r, 60)   ? GS_RESCALE_POLICY
               : chance(&w->r, 50) ? GS_RESCALE_OPERATOR
                                   : GS_RESCALE_PREEMPT;
    int n = chance(&w->r, 10) ? 0 : pick_size(w, j, 0);
    int gpus[64];
    if (n > 0 && !pick(w, j, j, n, gpus)) return;
    int same = n == j->nalloc;
    for (int i = 0; i < n && same; i++) {
        int held = 0;
        for (int a = 0; a < j->nalloc; a++) held |= j->alloc[a] == gpus[i];
        same = held;
    }
    int taken = -1; /* sometimes a GPU someone else holds: must be refused */
    if (n > 0 && chance(&w->r, 10)) {
        for (int g = 0; g < (int)gs_cluster_ngpus(w->c) && taken < 0; g++) {
            const gs_gpu *gp = gs_cluster_gpu(w->c, g);
            int mine = 0;
            for (int a = 0; a < j->nalloc; a++) mine |= j->alloc[a] == g;
            if (gp->owner >= 0 && !mine && j->gpus_per_task == 1) taken = g;
        }
        if (taken >= 0) gpus[rint_in(&w->r, 0, n - 1)] = taken;
    }
    gs_time now = gs_engine_now(e), at = gs_engine_rescale_allowed_at(e, j);
    int quota = kind == GS_RESCALE_POLICY && (at == GS_TIME_NONE || at > now);
    int fit = n == 0 || cpus_fit(w, j, gpus, n);
    size_t nrec = w->nrec;
    int alloc0 = gs_engine_allocated(e), rescales0 = j->rescales, n0 = j->nalloc;
    char why[64];
    snprintf(why, sizeof why, "test: %d->%d (%d)", j->nalloc, n, kind);
    int rc = gs_engine_rescale(e, j, gpus, n, (gs_rescale_kind)kind, why);
    int want = quota        ? GS_EQUOTA
               : taken >= 0 ? GS_ENOFIT
               : same && n  ? GS_EINVAL
               : !fit       ? GS_ENOFIT
                            : 0;
    if (rc != want)
        WFAIL("rescale job %lld %d->%d kind %d at %lld: %d, expected %d", (long long)j->id, n0, n,
              kind, (long long)now, rc, want);
    w->quota += rc == GS_EQUOTA;
    w->nofit += rc == GS_ENOFIT;
    w->cpu_short += rc == GS_ENOFIT && taken < 0;
    if (rc) {
        if (w->nrec != nrec || gs_engine_allocated(e) != alloc0 || j->rescales != rescales0 ||
            j->state != GS_JOB_RUNNING || j->nalloc != n0)
            WFAIL("a refused rescale (%d) changed the engine", rc);
        return;
    }
    /* the new GPUs are reserved at decision time (or already held, when the drain was free) */
    if (j->state == GS_JOB_DRAINING) {
        if (j->nresv != n) WFAIL("reserved %d of %d", j->nresv, n);
        for (int i = 0; i < j->nresv; i++)
            if (j->resv[i] != gpus[i] || gs_cluster_gpu(w->c, gpus[i])->owner != j->slot)
                WFAIL("job %lld: GPU %d not reserved", (long long)j->id, gpus[i]);
    } else if (n > 0) {
        if (j->state != GS_JOB_RUNNING || j->nalloc != n)
            WFAIL("job %lld: %s on %d GPUs after a free drain to %d", (long long)j->id,
                  gs_job_state_name(j->state), j->nalloc, n);
        for (int i = 0; i < n && j->nalloc == n; i++)
            if (j->alloc[i] != gpus[i]) WFAIL("job %lld: not on the GPUs asked", (long long)j->id);
    }
}

static int w_schedule(void *st)
{
    world *w = st;
    gs_engine *e = w->e;
    for (size_t s = 0; s < gs_engine_njobs(e); s++) {
        const gs_job *j = gs_engine_job(e, s);
        if (j->state == GS_JOB_PENDING && j->arrived && chance(&w->r, 70)) {
            int n = j->max_gpus > 0 && chance(&w->r, 60) ? pick_size(w, j, 0) : j->gpus;
            int gpus[64];
            if (n > 0 && pick(w, j, NULL, n, gpus)) {
                int want = cpus_fit(w, j, gpus, n) ? 0 : GS_ENOFIT;
                int rc = gs_engine_start(e, j, gpus, n);
                if (rc != want)
                    WFAIL("start job %lld on %d free GPUs: %d, expected %d", (long long)j->id, n,
                          rc, want);
                invariants(w);
            }
        } else if (j->state == GS_JOB_RUNNING && j->max_gpus > 0 && chance(&w->r, 25) &&
                   gs_engine_now(e) < 3000 * GS_SEC) { /* then let them finish: forced drains
                                                          lose work, rescales could go on */
            rescale_some(w, j);
            invariants(w);
        }
    }
    return 0;
}

static int w_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)p, (void)d;
    g_w->e = e;
    *st = g_w;
    return 0;
}
static void w_destroy(void *st)
{
    (void)st;
}
static int w_timer(void *st, uint64_t tag)
{
    world *w = st;
    gs_engine_request_pass(w->e);
    size_t live = 0;
    for (size_t s = 0; s < gs_engine_njobs(w->e); s++)
        live += !gs_job_state_final(gs_engine_job(w->e, s)->state);
    if (live && !w->live) return gs_engine_set_timer(w->e, gs_engine_now(w->e) + 7 * GS_SEC, tag);
    return 0;
}

static const gs_policy_ops world_ops = {
    .name = "elastic-random",
    .summary = "test",
    .create = w_create,
    .destroy = w_destroy,
    .on_timer = w_timer,
    .schedule = w_schedule,
};

/* One random workload (cluster, jobs, node failures, cancels) from 'seed'. */
typedef struct workload {
    char cluster[160];
    int cpus; /* per node; 0 = not modelled (shorthand cluster) */
    int njobs;
    gs_job_spec spec[PJ];
    int32_t sizes[PJ][8];
    int nnode_ev;
    gs_time node_t[4];
    int node_idx[4], node_down[4];
    int cancel_pct;
    const char *cost, *drain_timeout;
} workload;

static void gen_workload(uint64_t seed, workload *wl)
{
    prng r = {seed * 2654435761u + 0x9e3779b97f4a7c15ull};
    rnd(&r);
    int nodes = rint_in(&r, 1, 3), per = rint_in(&r, 2, 4);
    snprintf(wl->cluster, sizeof wl->cluster, "%dx%d", nodes, per);
    static const char *costs[] = {"rescale_cost=analytic", "rescale_cost=pollux30",
                                  "rescale_cost=zero", "rescale_cost=elasticflow",
                                  "preempt_cost=model"};
    wl->cost = costs[rint_in(&r, 0, 4)];
    wl->drain_timeout = chance(&r, 25) ? "drain_timeout=1s" : "drain_timeout=15s";
    wl->njobs = rint_in(&r, 1, PJ);
    wl->cpus = chance(&r, 30) ? rint_in(&r, 2, 6) : 0;
    if (wl->cpus)
        snprintf(wl->cluster, sizeof wl->cluster,
                 "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
                 "1,%d,%d,%d,64\n",
                 nodes, per, wl->cpus);
    for (int i = 0; i < wl->njobs; i++) {
        gs_job_spec *s = &wl->spec[i];
        gs_job_spec_init(s);
        s->id = i + 1;
        s->submit = gs_time_from_sec(rint_in(&r, 0, 300));
        s->duration = gs_time_from_sec(rint_in(&r, 5, 600));
        s->gpus_per_task = chance(&r, 80) ? 1 : 2;
        if (s->gpus_per_task > per) s->gpus_per_task = 1;
        s->model = chance(&r, 50) ? "resnet50" : "vgg16";
        s->cpus_per_task = wl->cpus ? rint_in(&r, 0, 2) : 0;
        int total = nodes * per;
        if (chance(&r, 85)) { /* elastic */
            int gpt = s->gpus_per_task;
            s->max_gpus = gpt * rint_in(&r, 1, total / gpt);
            s->min_gpus = chance(&r, 50) ? 0 : gpt * rint_in(&r, 1, s->max_gpus / gpt);
            int lo = s->min_gpus > gpt ? s->min_gpus : gpt;
            int ns = 0;
            if (chance(&r, 40))
                for (int n = lo; n <= s->max_gpus && ns < 8; n += gpt)
                    if (chance(&r, 50)) wl->sizes[i][ns++] = n;
            if (ns) {
                s->sizes = wl->sizes[i];
                s->nsizes = ns;
            }
            int first = ns ? wl->sizes[i][rint_in(&r, 0, ns - 1)]
                           : gpt * rint_in(&r, lo / gpt, s->max_gpus / gpt);
            s->ntasks = first / gpt;
            s->min_rescale_gap =
                chance(&r, 30) ? GS_TIME_NONE : gs_time_from_sec(rint_in(&r, 0, 90));
            s->max_rescales = rint_in(&r, -1, 4);
            s->max_failures = rint_in(&r, 0, 2);
        } else {
            s->ntasks = rint_in(&r, 1, total / s->gpus_per_task);
        }
    }
    wl->nnode_ev = nodes > 1 ? rint_in(&r, 0, 2) * 2 : 0;
    for (int k = 0; k < wl->nnode_ev; k += 2) {
        int node = rint_in(&r, 0, nodes - 1);
        gs_time t = gs_time_from_sec(rint_in(&r, 1, 600)) + rint_in(&r, 0, 999);
        wl->node_idx[k] = wl->node_idx[k + 1] = node;
        wl->node_t[k] = t;
        wl->node_t[k + 1] = t + gs_time_from_sec(rint_in(&r, 1, 200));
        wl->node_down[k] = 1;
        wl->node_down[k + 1] = 0;
    }
    wl->cancel_pct = rint_in(&r, 0, 3);
}

static gs_engine *world_engine(world *w, const workload *wl, gs_engine_mode mode)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (wl->cpus ? gs_cluster_parse_tiresias("w.csv", wl->cluster, strlen(wl->cluster), &w->c, &d)
                 : gs_cluster_parse_shorthand(wl->cluster, &w->c, &d))
        return NULL;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = mode;
    gs_params p;
    gs_params_init(&p);
    gs_params_set_kv(&p, wl->cost);
    gs_params_set(&p, "rescale_gap", "20s");
    gs_params_set_kv(&p, wl->drain_timeout);
    gs_engine *e = NULL;
    g_w = w;
    int rc = gs_engine_create_ops(w->c, &world_ops, &p, &o, &e, &d);
    gs_params_release(&p);
    if (rc) return NULL;
    gs_engine_set_observer(e, w_observe, w);
    return e;
}

static void world_init(world *w, uint64_t seed, int live)
{
    memset(w, 0, sizeof *w);
    w->r.s = seed * 0x9e3779b97f4a7c15ull + 12345;
    w->live = live;
    for (int i = 0; i < PJ; i++) w->last_rescale[i] = GS_TIME_NONE;
}

/* After the run: counters agree with the records (rescales and failures apart). */
static void world_final(world *w, int live_failures[PJ])
{
    for (size_t s = 0; s < gs_engine_njobs(w->e) && s < PJ; s++) {
        const gs_job *j = gs_engine_job(w->e, s);
        if (j->rescales != w->rescales[s])
            WFAIL("job %lld: %d rescales, records say %d", (long long)j->id, j->rescales,
                  w->rescales[s]);
        int f = w->failures[s] + (live_failures ? live_failures[s] : 0);
        if (j->failures != f)
            WFAIL("job %lld: %d failures, expected %d", (long long)j->id, j->failures, f);
    }
}

/* SIM: one workload; returns the record-stream hash (0 and w->fail on a broken invariant). */
static uint64_t run_sim(uint64_t seed, world *w)
{
    workload wl;
    gen_workload(seed, &wl);
    world_init(w, seed, 0);
    gs_engine *e = world_engine(w, &wl, GS_ENGINE_SIM);
    if (!e) {
        WFAIL("seed %llu: engine", (unsigned long long)seed);
        gs_cluster_destroy(w->c);
        return 0;
    }
    for (int i = 0; i < wl.njobs; i++)
        if (gs_engine_add_job(e, &wl.spec[i], NULL, NULL)) WFAIL("add job %d", i);
    for (int k = 0; k < wl.nnode_ev; k++)
        gs_engine_add_node_event(e, wl.node_t[k], wl.node_idx[k], wl.node_down[k]);
    gs_engine_set_timer(e, 0, 1);
    long steps = 0;
    int rc;
    while (!w->fail[0] && (rc = gs_engine_step(e)) > 0) {
        invariants(w);
        if (++steps > 200000) WFAIL("no end after %ld steps", steps);
        if (chance(&w->r, wl.cancel_pct)) {
            const gs_job *j = gs_engine_job(e, (size_t)rint_in(&w->r, 0, wl.njobs - 1));
            if (!gs_job_state_final(j->state)) {
                if (gs_engine_cancel(e, j, "random cancel", gs_engine_now(e)))
                    WFAIL("cancel failed");
                invariants(w);
            }
        }
    }
    if (!w->fail[0] && gs_engine_error(e)) WFAIL("engine failed: %d", gs_engine_error(e));
    for (size_t s = 0; s < gs_engine_njobs(e) && !w->fail[0]; s++)
        if (!gs_job_state_final(gs_engine_job(e, s)->state))
            WFAIL("job %lld left %s", (long long)gs_engine_job(e, s)->id,
                  gs_job_state_name(gs_engine_job(e, s)->state));
    world_final(w, NULL);
    gs_engine_destroy(e);
    gs_cluster_destroy(w->c);
    return w->fail[0] ? 0 : w->hash;
}

/*
 * LIVE: the test plays the daemon: submits at the submit times, reports a job done when its
 * work is done, fails one now and then (exit 1), and ends each drain as a daemon would: the
 * old generation exits by itself (143, or a crash code) before the deadline, or never - then
 * the daemon kills it exactly at the deadline (137).
 */
static uint64_t run_live(uint64_t seed, world *w)
{
    workload wl;
    gen_workload(seed, &wl);
    world_init(w, seed, 1);
    gs_engine *e = world_engine(w, &wl, GS_ENGINE_LIVE);
    if (!e) {
        WFAIL("seed %llu: engine", (unsigned long long)seed);
        gs_cluster_destroy(w->c);
        return 0;
    }
    const gs_job *jobs[PJ] = {0};
    int submitted = 0, fails[PJ] = {0};
    gs_time now = 0;
    for (int round = 0; round < 5000 && !w->fail[0]; round++) {
        for (; submitted < wl.njobs && wl.spec[submitted].submit <= now; submitted++)
            if (gs_engine_submit(e, &wl.spec[submitted], now, &jobs[submitted], NULL))
                WFAIL("submit %d", submitted);
        /* the daemon: drains, completions, crashes, cancels */
        for (int i = 0; i < submitted; i++) {
            const gs_job *j = jobs[i];
            int s = j->slot;
            if (j->state == GS_JOB_DRAINING) {
                if (w->exit_at[s] == GS_TIME_NONE) { /* first seen: plan its end */
                    int how = rint_in(&w->r, 0, 9);
                    gs_time span = j->drain_deadline - j->drain_since;
                    w->exit_at[s] =
                        how < 7 ? j->drain_since + (gs_time)(rnd(&w->r) % (uint64_t)(span + 1))
                                : j->drain_deadline;
                    w->exit_code[s] = how < 1   ? 0
                                      : how < 5 ? 143
                                      : how < 7 ? 1
                                                : 137; /* 137: killed */
                    w->forced += how >= 5;
                }
                if (w->exit_at[s] <= now) {
                    if (gs_engine_task_exited(e, j, w->exit_code[s], "old generation gone",
                                              w->exit_at[s] > gs_engine_now(e) ? w->exit_at[s]
                                                                               : now))
                        WFAIL("task_exited while draining");
                    w->exit_at[s] = GS_TIME_NONE;
                }
            } else if (j->state == GS_JOB_RUNNING) {
                if (gs_job_remaining(j, now) == 0) {
                    if (gs_engine_task_exited(e, j, 0, "done", now)) WFAIL("task_exited 0");
                } else if (chance(&w->r, 1)) {
                    fails[s]++;
                    if (gs_engine_task_exited(e, j, 1, "crashed", now)) WFAIL("task_exited 1");
                    int want = fails[s] > j->max_failures ? GS_JOB_FAILED : GS_JOB_PENDING;
                    if ((int)j->state != want)
                        WFAIL("job %lld: %s after failure %d of max %d", (long long)j->id,
                              gs_job_state_name(j->state), fails[s], j->max_failures);
                }
            }
            if (!gs_job_state_final(j->state) && chance(&w->r, wl.cancel_pct))
                if (gs_engine_cancel(e, j, "random cancel", now)) WFAIL("cancel");
            invariants(w);
        }
        if (chance(&w->r, 3)) { /* an operator drains a node, or returns one to service */
            int nd = rint_in(&w->r, 0, (int)gs_cluster_nnodes(w->c) - 1);
            if (gs_engine_drain_node(e, nd, !gs_cluster_node(w->c, nd)->down, "test"))
                WFAIL("drain_node");
        }
        if (gs_engine_advance(e, now)) WFAIL("advance: %d", gs_engine_error(e));
        invariants(w);
        int active = submitted < wl.njobs;
        for (int i = 0; i < submitted; i++) active |= !gs_job_state_final(jobs[i]->state);
        if (!active) break;
        /* next instant: a random step, but never past a drain's deadline or planned exit */
        gs_time next = now + gs_time_from_sec(rint_in(&w->r, 1, 20));
        for (int i = 0; i < submitted; i++) {
            const gs_job *j = jobs[i];
            if (j->state != GS_JOB_DRAINING) continue;
            gs_time t =
                w->exit_at[j->slot] != GS_TIME_NONE ? w->exit_at[j->slot] : j->drain_deadline;
            if (t < next) next = t > now ? t : now;
        }
        if (submitted < wl.njobs && wl.spec[submitted].submit > now &&
            wl.spec[submitted].submit < next)
            next = wl.spec[submitted].submit;
        now = next;
    }
    for (int i = 0; i < submitted && !w->fail[0]; i++)
        if (jobs[i]->state == GS_JOB_DRAINING) WFAIL("a drain never ended");
    world_final(w, fails);
    gs_engine_destroy(e);
    gs_cluster_destroy(w->c);
    return w->fail[0] ? 0 : w->hash;
}

static int iterations(int dflt)
{
    const char *s = getenv("GSCHED_ELASTIC_ITERS");
    int n = s ? atoi(s) : dflt;
    return n > 0 ? n : dflt;
}

/* ---- the elastic policies on a cluster of two GPU types ----------------------------------- */

/* Node 0: 4 M60 GPUs, node 1: 4 K80 GPUs (the M60 node first: a choice over GPUs of every type
 * finds it first). */
static const char two_types_yaml[] =
    "physicalCluster:\n  skuTypes:\n    K80: {gpu: 1}\n    M60: {gpu: 1}\n"
    "  cellTypes:\n"
    "    M60-N: {childCellType: M60, childCellNumber: 4, isNodeLevel: true}\n"
    "    K80-N: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}\n"
    "  physicalCells:\n  - cellType: M60-N\n    cellAddress: B0\n"
    "  - cellType: K80-N\n    cellAddress: A0\n"
    "virtualClusters:\n  v0:\n    virtualCells:\n    - {cellType: M60-N, cellNumber: 1}\n"
    "    - {cellType: K80-N, cellNumber: 1}\n";

typedef struct typed_watch {
    int bad;    /* a typed job started on a GPU of another type */
    int maxk80; /* most GPUs the elastic K80 job (id 2) held */
} typed_watch;

static void typed_observe(void *ud, const gs_record *r)
{
    typed_watch *w = ud;
    if (r->type != GS_REC_START || !r->job) return;
    const gs_job *j = r->job;
    if (j->id == 2 && j->nalloc > w->maxk80) w->maxk80 = j->nalloc;
}

/*
 * afs, elasticflow and pollux on two GPU types, never reconfigured: every job runs to its end.
 * Job 1 (rigid, one task of 4 K80s) used to be given the M60 node (afs and elasticflow: the GPU
 * choice took any type; pollux: its nodes' free counts ignored the type), which the engine
 * refuses, for ever; job 2 (elastic K80, up to 8 GPUs) used to be given a share of 8 of the 8
 * GPUs (afs, elasticflow: shares counted GPUs of every type), which 4 K80s never hold.
 */
static void typed_run(const char *pol)
{
    gs_diag d;
    gs_diag_init(&d, "two.yaml");
    gs_cluster *c = NULL;
    ASSERT_OK(gs_cluster_parse_hived("two.yaml", two_types_yaml, strlen(two_types_yaml), &c, &d));
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", "off");
    gs_params_set(&p, "preempt_cost", "0");
    gs_engine *e = NULL;
    ASSERT_OK(gs_engine_create(c, pol, &p, NULL, &e, &d));
    gs_params_release(&p);
    typed_watch w = {0, 0};
    gs_engine_set_observer(e, typed_observe, &w);
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 1;
    s.ntasks = 1;
    s.gpus_per_task = 4;
    s.gpu_type = "K80";
    s.duration = gs_time_from_sec(100);
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    spec_elastic(&s, 2, 0, 1, 1, 8, 300);
    s.gpu_type = "K80";
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    gs_job_spec_init(&s); /* one of any type */
    s.id = 3;
    s.ntasks = 2;
    s.gpus_per_task = 1;
    s.duration = gs_time_from_sec(50);
    ASSERT_OK(gs_engine_add_job(e, &s, NULL, &d));
    int steps = 0, st;
    while ((st = gs_engine_step(e)) > 0 && steps++ < 10000) {
        for (size_t i = 0; i < gs_engine_njobs(e); i++) {
            const gs_job *j = gs_engine_job(e, i);
            for (int g = 0; j->gpu_type >= 0 && g < j->nalloc; g++)
                if (j->alloc[g] >= 0 && gs_cluster_gpu(c, j->alloc[g])->type != j->gpu_type)
                    w.bad = 1;
        }
        ASSERT_OK(check(e));
    }
    ASSERT(st >= 0);
    if (st > 0) printf("# %s: does not end\n", pol);
    ASSERT_EQ(st, 0);
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->state != GS_JOB_DONE)
            printf("# %s: job %lld %s (%s)\n", pol, (long long)j->id, gs_job_state_name(j->state),
                   j->reason ? j->reason : "");
        ASSERT_EQ(j->state, GS_JOB_DONE);
    }
    ASSERT_EQ(w.bad, 0);
    ASSERT(w.maxk80 >= 1 && w.maxk80 <= 4);
    ASSERT_EQ(gs_engine_allocated(e), 0);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

static void t_typed_afs(void)
{
    typed_run("afs");
}

static void t_typed_elasticflow(void)
{
    typed_run("elasticflow");
}

static void t_typed_pollux(void)
{
    typed_run("pollux");
}

static void t_property_sim(void)
{
    int n = iterations(10000);
    long drains = 0, resizes = 0, pend = 0, quota = 0, nofit = 0, nfd = 0, cd = 0, cpu = 0;
    long forced = 0;
    for (int i = 0; i < n; i++) {
        world w;
        uint64_t h = run_sim((uint64_t)i + 1, &w);
        if (w.fail[0]) T_FAIL("SIM seed %d: %s", i + 1, w.fail);
        if (i % 16 == 0) { /* same inputs, same record stream */
            world w2;
            uint64_t h2 = run_sim((uint64_t)i + 1, &w2);
            if (h2 != h || w2.nrec != w.nrec) T_FAIL("SIM seed %d: a rerun differs", i + 1);
        }
        drains += w.drains, resizes += w.resizes, pend += w.to_pending, quota += w.quota;
        nofit += w.nofit, nfd += w.node_fail_drain, cd += w.cancel_drain, cpu += w.cpu_short;
        forced += w.forced;
    }
    printf("# SIM %d workloads: %ld drains, %ld resized, %ld to pending, %ld refused by budget, "
           "%ld by a taken GPU or short CPUs (%ld), %ld node failures and %ld cancels while "
           "draining, %ld saves cut at the drain timeout\n",
           n, drains, resizes, pend, quota, nofit, cpu, nfd, cd, forced);
    /* the workloads exercise every path */
    ASSERT(drains > n && resizes > 0 && pend > 0 && quota > 0 && nofit > 0 && nfd > 0 && cd > 0 &&
           cpu > 0 && forced > 0);
}

static void t_property_live(void)
{
    int n = iterations(10000) / 4;
    long drains = 0, resizes = 0, forced = 0, cd = 0, nd = 0;
    for (int i = 0; i < n; i++) {
        world w;
        uint64_t h = run_live((uint64_t)i + 100001, &w);
        if (w.fail[0]) T_FAIL("LIVE seed %d: %s", i + 100001, w.fail);
        if (i % 16 == 0) {
            world w2;
            uint64_t h2 = run_live((uint64_t)i + 100001, &w2);
            if (h2 != h) T_FAIL("LIVE seed %d: a rerun differs", i + 100001);
        }
        drains += w.drains, resizes += w.resizes, forced += w.forced, cd += w.cancel_drain;
        nd += w.node_fail_drain;
    }
    printf("# LIVE %d workloads: %ld drains, %ld resized, %ld forced, %ld cancels while "
           "draining, %ld next generations on a drained node\n",
           n, drains, resizes, forced, cd, nd);
    ASSERT(drains > n && resizes > 0 && forced > 0 && cd > 0 && nd > 0);
}

static const test_case tests[] = {
    {"spec_validation", t_spec_validation},
    {"engine_params", t_engine_params},
    {"start_any_size", t_start_any_size},
    {"sim_grow", t_sim_grow},
    {"sim_shrink", t_sim_shrink},
    {"sim_instant_drain", t_sim_instant_drain},
    {"sim_drain_timeout", t_sim_drain_timeout},
    {"sim_drain_to_pending", t_sim_drain_to_pending},
    {"refusals", t_refusals},
    {"unsupported", t_unsupported},
    {"resize_sizes", t_resize_sizes},
    {"cpus", t_cpus},
    {"cancel_draining", t_cancel_draining},
    {"node_fails_draining", t_node_fails_draining},
    {"live_drain", t_live_drain},
    {"live_cancel_draining", t_live_cancel_draining},
    {"live_node_drained", t_live_node_drained},
    {"live_failures", t_live_failures},
    {"live_checkpointed", t_live_checkpointed},
    {"launch_cost", t_launch_cost},
    {"cost_presets", t_cost_presets},
    {"progress_model", t_progress_model},
    {"typed_afs", t_typed_afs},
    {"typed_elasticflow", t_typed_elasticflow},
    {"typed_pollux", t_typed_pollux},
    {"property_sim", t_property_sim},
    {"property_live", t_property_live},
};

TEST_MAIN(tests)
