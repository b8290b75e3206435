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

static const test_case tests[] = {
    {"spec_validation", t_spec_validation},
    {"engine_params", t_engine_params},
    {"start_any_size", t_start_any_size},
    {"sim_grow", t_sim_grow},
    {"sim_shrink", t_sim_shrink},
    {"sim_instant_drain", t_sim_instant_drain},
    {"sim_drain_to_pending", t_sim_drain_to_pending},
    {"refusals", t_refusals},
    {"unsupported", t_unsupported},
    {"cancel_draining", t_cancel_draining},
    {"node_fails_draining", t_node_fails_draining},
    {"live_drain", t_live_drain},
    {"live_cancel_draining", t_live_cancel_draining},
    {"live_failures", t_live_failures},
    {"cost_presets", t_cost_presets},
    {"progress_model", t_progress_model},
};

TEST_MAIN(tests)
