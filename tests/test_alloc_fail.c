/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_alloc_fail.c - allocation failures inside the engine and every policy.
 *
 * The test is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=strdup (tests/CMakeLists.txt): every allocation libgsched makes goes
 * through the wrappers below, which count them while armed and fail exactly
 * the N-th.  For every policy in the registry, on a small trace that makes it
 * use its mechanisms (queues, preemption, time-slicing, packing, migration,
 * a node failure and recovery, two reconfigurations; gandiva once more with
 * suspend_mech=sigstop), the test runs the simulation once unarmed
 * (the reference: a digest of every observer record and of every job's final
 * accounting), then again failing allocation N = 1, 2, ... until a run
 * completes without reaching its N-th allocation.  Each failed run must
 * either return GS_ENOMEM (from creation, adding a job or a step; the engine
 * then reports it through gs_engine_error and is consistent: gs_engine_check
 * passes) or complete with the reference digest (a failure that only cost a
 * cache entry).  A GS_ENOMEM swallowed anywhere changes the schedule or the
 * accounting and so the digest.  Under the ASan build LeakSanitizer checks
 * that a failed engine frees everything.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "harness.h"
#include "solver.h"

/* ---- the failing allocator ------------------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t sz);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static int armed;
static long nallocs, fail_at; /* fail_at 0: never */
static int hit;
static const char *cur_policy; /* for debuggers: break on __wrap_* if cur_policy is ... */
static const char *cur_mech;   /* suspend_mech= for the run, NULL: the default (copy) */

static int fail_now(void)
{
    if (!armed) return 0;
    if (++nallocs != fail_at) return 0;
    hit = 1;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t sz)
{
    return fail_now() ? NULL : __real_calloc(n, sz);
}
void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}
char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

/* ---- one run ----------------------------------------------------------------------------------
 */

#define FNV_PRIME 1099511628211ULL

static void mix(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * FNV_PRIME;
}
static void mix_i(uint64_t *h, int64_t v)
{
    mix(h, &v, sizeof v);
}
static void mix_s(uint64_t *h, const char *s)
{
    if (s) mix(h, s, strlen(s) + 1);
    mix_i(h, s ? 1 : 0);
}

static void observe(void *ud, const gs_record *r)
{
    uint64_t *h = ud;
    mix_i(h, r->t);
    mix_i(h, r->type);
    mix_i(h, r->job ? r->job->id : -1);
    mix_i(h, r->node);
    mix_s(h, r->reason);
}

typedef struct jobdef {
    double submit_s, dur_s;
    int ntasks, gpt;
    const char *model, *vc;
    int priority;
    int grouped; /* 1: two tasks of gpt and 1 GPUs (hived cluster: both on one K80-NODE) */
} jobdef;

/* Plain clusters: overloaded 2x4 GPUs, packable model pairs, gangs, one node failing. */
static const jobdef plain_jobs[] = {
    {0, 900, 1, 1, "resnet18-bs16", NULL, 0},  {0, 700, 1, 1, "lm-bs20", NULL, 0},
    {5, 800, 1, 1, "resnet18-bs16", NULL, 0},  {10, 600, 1, 1, "lm-bs20", NULL, 0},
    {20, 1200, 2, 2, "resnet50", NULL, 0},     {30, 500, 1, 1, "resnet18-bs16", NULL, 0},
    {40, 650, 1, 1, "lm-bs20", NULL, 0},       {50, 400, 1, 4, "resnet50", NULL, 0},
    {60, 300, 1, 1, "resnet18-bs16", NULL, 0}, {70, 350, 1, 1, "lm-bs20", NULL, 0},
    {90, 200, 2, 4, "vgg16", NULL, 0},         {120, 250, 1, 2, "resnet50", NULL, 0},
    {130, 90, 1, 1, "lm-bs20", NULL, 0},       {400, 100, 1, 1, "resnet18-bs16", NULL, 0},
    {410, 100, 2, 2, "resnet50", NULL, 0, 1},
};

/* HiveD's basic example (3 nodes of 4 GPUs, VC1 and VC2): priorities, opportunistic jobs. */
static const jobdef hived_jobs[] = {
    {0, 600, 1, 4, "resnet50", "VC1", 100},     {0, 900, 1, 4, "vgg16", "VC2", -1},
    {10, 500, 1, 1, "bert", "VC2", 10},         {20, 800, 1, 4, "vgg16", "VC2", 100},
    {30, 700, 1, 4, "vgg16", "VC1", -1},        {40, 300, 2, 1, "resnet50", "VC1", 10},
    {50, 400, 1, 2, "bert", "VC2", 100},        {200, 200, 1, 4, "resnet50", "VC1", 100},
    {250, 150, 1, 1, "bert", "VC1", -1},        {300, 100, 1, 2, "resnet50", "VC2", 10},
    {310, 100, 2, 2, "resnet50", "VC1", 10, 1},
};

static int hived_cluster(const gs_policy_ops *ops)
{
    return !strcmp(ops->name, "hived") || !strcmp(ops->name, "private") ||
           !strcmp(ops->name, "quota");
}

/* The cluster of the run (second = 0), and the one it is reconfigured to (second = 1: one node
 * of the two, then the full cluster again; HiveD's basic example read again). */
static gs_cluster *make_cluster(const gs_policy_ops *ops, int second)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = NULL;
    if (!hived_cluster(ops)) {
        if (gs_cluster_parse_shorthand(second == 1 ? "1x4:V100" : "2x4:V100", &c, &d)) return NULL;
        return c;
    }
    const char *path = test_src("data/examples/hived-basic.yaml");
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (gs_cluster_parse_hived(path, buf, n, &c, &d)) return NULL;
    return c;
}

typedef struct outcome {
    int rc;                                     /* 0 or the error of the first failing call */
    long preempts, suspends, packs, migrations; /* mechanisms used (completed runs) */
    int engine_err;  /* gs_engine_error() after the run (0 if no engine) */
    int check;       /* gs_engine_check() after the run (0 if no engine) */
    uint64_t digest; /* records and final accounting (completed runs) */
    char msg[256];
} outcome;

/* Dry runs made while allocation N failed: how many, and how many returned GS_ENOMEM. */
static long probes, probes_enomem;
static char probe_err[256];

/*
 * After each step: dry runs of a few shapes, failing their allocation 1, 2,
 * ... in turn until one gets through.  Each must return 0 or GS_ENOMEM and
 * leave the engine as it was: not failed, consistent (the run's digest, which
 * the caller compares with an unprobed run's, shows the rest).
 */
static void probe_failing(gs_engine *e, const char *vc)
{
    static const int shapes[][2] = {{1, 1}, {1, 4}, {2, 4}, {1, 8}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0] && !probe_err[0]; k++)
        for (long n = 1;; n++) {
            gs_job_spec s;
            gs_job_spec_init(&s);
            s.ntasks = shapes[k][0];
            s.gpus_per_task = shapes[k][1];
            s.duration = 60 * GS_SEC;
            s.vc = vc;
            gs_probe p;
            nallocs = 0;
            fail_at = n;
            hit = 0;
            int rc = gs_engine_probe(e, &s, &p);
            fail_at = 0;
            int h = hit;
            if (rc == 0) gs_probe_release(&p);
            if (!h) break;
            probes++;
            probes_enomem += rc == GS_ENOMEM;
            gs_diag cd;
            gs_diag_init(&cd, NULL);
            if (rc && rc != GS_ENOMEM)
                snprintf(probe_err, sizeof probe_err, "probe: %s", gs_strerror(rc));
            else if (gs_engine_error(e))
                snprintf(probe_err, sizeof probe_err, "a failed probe failed the engine");
            else if (gs_engine_check(e, &cd))
                snprintf(probe_err, sizeof probe_err, "after a failed probe: %s", cd.msg);
            if (probe_err[0]) return;
        }
}

static outcome run_once(const gs_policy_ops *ops, long fail, int probing)
{
    outcome o = {0};
    gs_cluster *c = make_cluster(ops, 0), *c1 = make_cluster(ops, 1), *c2 = make_cluster(ops, 2);
    if (!c || !c1 || !c2) {
        gs_cluster_destroy(c);
        gs_cluster_destroy(c1);
        gs_cluster_destroy(c2);
        o.rc = GS_EINTERNAL;
        snprintf(o.msg, sizeof o.msg, "cannot build the cluster");
        return o;
    }
    int hv = hived_cluster(ops);
    const jobdef *jobs = hv ? hived_jobs : plain_jobs;
    size_t njobs =
        hv ? sizeof hived_jobs / sizeof *hived_jobs : sizeof plain_jobs / sizeof *plain_jobs;
    gs_params p;
    gs_params_init(&p);
    /* Gandiva's policies allocate per pass: a shorter run with shorter periods keeps the
     * number of allocations (and so of runs) small while it still slices, packs, migrates */
    double scale = 1.0;
    if (!strcmp(ops->name, "tiresias-tj"))
        gs_params_set(&p, "tj_threshold", "300s"); /* demoted after minutes: preemptions */
    else if (!strcmp(ops->name, "las") || !strncmp(ops->name, "tiresias", 8))
        gs_params_set(&p, "queues", "60,200"); /* short queues: jobs of minutes are demoted */
    else if (!strcmp(ops->name, "themis"))
        gs_params_set(&p, "lease", "60s"); /* leases of a minute: jobs of minutes lose theirs */
    else if (!strcmp(ops->name, "gavel"))
        gs_params_set(&p, "round", "60s"); /* rounds of a minute: jobs of minutes are preempted */
    if (cur_mech) gs_params_set(&p, "suspend_mech", cur_mech);
    if (!strncmp(ops->name, "gandiva", 7)) {
        scale = 0.25;
        if (!strcmp(ops->name, "gandiva")) {
            gs_params_set(&p, "quantum", "15s");
            gs_params_set(&p, "introspect", "15s");
            gs_params_set(&p, "profile_window", "15s");
        }
    }
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.lp = gs_lp_glpk(); /* gavel's LPs (its allocations in the adapter fail too) */
    gs_diag d;
    gs_diag_init(&d, NULL);
    uint64_t h = 1469598103934665603ULL;
    gs_engine *e = NULL;

    cur_policy = ops->name;
    nallocs = 0;
    fail_at = fail;
    hit = 0;
    armed = 1;
    int rc = gs_engine_create_ops(c, ops, &p, &eo, &e, &d);
    if (rc) e = NULL;
    if (e) gs_engine_set_observer(e, observe, &h);
    for (size_t i = 0; !rc && i < njobs; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = (int64_t)i + 1;
        s.submit = gs_time_from_sec(jobs[i].submit_s * scale);
        s.duration = gs_time_from_sec(jobs[i].dur_s * scale);
        s.ntasks = jobs[i].ntasks;
        s.gpus_per_task = jobs[i].gpt;
        s.model = jobs[i].model;
        s.vc = jobs[i].vc;
        s.priority = jobs[i].priority;
        /* tasks of different sizes (and a withinOneCell group): the engine's copies */
        int32_t tg[2] = {jobs[i].gpt, 1};
        gs_task_group g = {0, 2, -1, "K80-NODE", -1};
        if (jobs[i].grouped) {
            s.task_gpus = tg;
            s.groups = hv ? &g : NULL;
            s.ngroups = hv;
        }
        rc = gs_engine_add_job(e, &s, NULL, &d);
    }
    if (!rc) rc = gs_engine_add_node_event(e, gs_time_from_sec(150 * scale), 1, 1);
    if (!rc) rc = gs_engine_add_node_event(e, gs_time_from_sec(450 * scale), 1, 0);
    /* work-preserving reconfigurations (issue 14): jobs running on GPUs that vanish, the policy
     * created again and told of every job */
    int rcf = ops->on_adopt != NULL; /* a policy without it cannot be reconfigured */
    /* (gandiva: after its migration, which an earlier re-creation would change) */
    double rt = strncmp(ops->name, "gandiva", 7) ? 200 : 1300;
    if (!rc && rcf) rc = gs_engine_add_reconfig_event(e, gs_time_from_sec(rt * scale), c1);
    if (!rc && rcf) rc = gs_engine_add_reconfig_event(e, gs_time_from_sec((rt + 100) * scale), c2);
    if (!rc && !probing) rc = gs_engine_run(e);
    while (!rc && probing && !probe_err[0] && (rc = gs_engine_step(e)) == 1) {
        probe_failing(e, hv ? "VC1" : NULL);
        rc = 0;
    }
    armed = 0;

    o.rc = rc;
    if (e) {
        o.engine_err = gs_engine_error(e);
        gs_diag cd;
        gs_diag_init(&cd, NULL);
        o.check = gs_engine_check(e, &cd);
        if (o.check) snprintf(o.msg, sizeof o.msg, "%s", cd.msg);
        for (size_t i = 0; i < gs_engine_njobs(e); i++) {
            const gs_job *j = gs_engine_job(e, i);
            mix_i(&h, j->id);
            mix_i(&h, j->state);
            mix_i(&h, j->end);
            mix_i(&h, j->first_start);
            mix_i(&h, j->queued);
            mix_i(&h, j->executed);
            mix_i(&h, j->preemptions);
            mix_i(&h, j->restarts);
            mix_i(&h, j->suspends);
            mix_i(&h, j->migrations);
            mix_i(&h, j->packs);
            mix_i(&h, j->resizes);
            mix_s(&h, j->reason);
            o.preempts += j->preemptions;
            o.suspends += j->suspends;
            o.packs += j->packs;
            o.migrations += j->migrations;
        }
        mix_i(&h, (int64_t)gs_engine_events(e));
    } else if (!rc) {
        o.rc = GS_EINTERNAL;
    }
    if (!o.msg[0] && rc) snprintf(o.msg, sizeof o.msg, "%s", d.msg);
    o.digest = h;
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_cluster_destroy(c1);
    gs_cluster_destroy(c2);
    gs_params_release(&p);
    return o;
}

/* ---- the test ---------------------------------------------------------------------------------
 */

#define MAX_N 20000

static void t_every_policy_every_allocation(void)
{
    size_t npol = 0;
    /* every policy, then gandiva again with suspend_mech=sigstop (memory parked on GPUs) */
    for (size_t i = 0; gs_policy_at(i) || !cur_mech; i++, npol++) {
        const gs_policy_ops *ops = gs_policy_at(i);
        if (!ops) {
            cur_mech = "sigstop";
            ops = gs_policy_find("gandiva");
            if (!ops) break;
        }
        const char *only = getenv("GS_ALLOC_FAIL_ONLY"); /* debugging: one policy */
        if (only && strcmp(only, ops->name)) continue;
        if (!gs_lp_glpk() && !strcmp(ops->name, "gavel")) continue; /* built without GLPK */
        outcome ref = run_once(ops, 0, 0);
        if (ref.rc || ref.check)
            T_FAIL("%s: the reference run failed: %s (%s)", ops->name, gs_strerror(ref.rc),
                   ref.msg);
        long total = nallocs;
        if (getenv("GS_ALLOC_FAIL_ONLY")) printf("  reference: %ld allocations\n", total);
        long n = 1, enomem = 0;
        for (; n <= MAX_N; n++) {
            if (getenv("GS_ALLOC_FAIL_TRACE")) fprintf(stderr, "n=%ld\n", n);
            outcome o = run_once(ops, n, 0);
            if (!hit) break; /* it never reached its n-th allocation: every one was tried */
            if (o.check)
                T_FAIL("%s: allocation %ld failed: engine inconsistent: %s", ops->name, n, o.msg);
            if (o.rc == 0) {
                if (o.digest != ref.digest)
                    T_FAIL("%s: allocation %ld failed but the run completed with other results "
                           "(a GS_ENOMEM was swallowed)",
                           ops->name, n);
                continue;
            }
            if (o.rc != GS_ENOMEM)
                T_FAIL("%s: allocation %ld failed: %s (%s), not GS_ENOMEM", ops->name, n,
                       gs_strerror(o.rc), o.msg);
            if (o.engine_err && o.engine_err != GS_ENOMEM)
                T_FAIL("%s: allocation %ld failed: engine error %d", ops->name, n, o.engine_err);
            enomem++;
        }
        if (n > MAX_N) T_FAIL("%s: more than %d allocations", ops->name, MAX_N);
        /* the run that got through makes exactly the reference's allocations */
        ASSERT_EQ(n - 1, total);
        /* most failures must surface: a test where none did would prove nothing */
        ASSERT(enomem * 2 > total);
        printf("  %-16s %5ld allocations, %5ld runs failed with GS_ENOMEM (run: %ld preemptions, "
               "%ld suspends, %ld packs, %ld migrations)\n",
               cur_mech ? "gandiva sigstop" : ops->name, total, enomem, ref.preempts, ref.suspends,
               ref.packs, ref.migrations);
        if (!strcmp(ops->name, "gandiva"))
            ASSERT(ref.packs > 0 && (ref.migrations > 0 || cur_mech)); /* sigstop: none here */
        if (ops->flags & GS_POLICY_PREEMPTIVE) ASSERT(ref.preempts + ref.suspends > 0);
    }
    cur_mech = NULL;
    ASSERT(npol >= 14);
}

/* A dry run whose allocation fails fails alone: GS_ENOMEM to its caller, the engine not
 * failed, consistent, and the run's results those of a run without dry runs. */
static void t_failed_probe_fails_alone(void)
{
    cur_mech = NULL;
    for (size_t i = 0; gs_policy_at(i); i++) {
        const gs_policy_ops *ops = gs_policy_at(i);
        if (!gs_lp_glpk() && !strcmp(ops->name, "gavel")) continue; /* built without GLPK */
        outcome ref = run_once(ops, 0, 0);
        probes = probes_enomem = 0;
        probe_err[0] = '\0';
        outcome o = run_once(ops, 0, 1);
        if (probe_err[0]) T_FAIL("%s: %s", ops->name, probe_err);
        ASSERT_OK(ref.rc);
        ASSERT_OK(o.rc);
        ASSERT_OK(o.engine_err);
        ASSERT_OK(o.check);
        if (o.digest != ref.digest) T_FAIL("%s: dry runs changed the run's results", ops->name);
        /* allocations failed inside dry runs, and most of those surfaced */
        printf("  %-16s %ld dry runs failed an allocation, %ld returned GS_ENOMEM\n", ops->name,
               probes, probes_enomem);
        ASSERT(probes > 0 && probes_enomem * 2 > probes);
    }
}

static const test_case tests[] = {
    {"every policy, every allocation fails in turn", t_every_policy_every_allocation},
    {"a failed dry run fails alone", t_failed_probe_fails_alone},
};

TEST_MAIN(tests)
