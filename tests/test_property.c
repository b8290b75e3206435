/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_property.c - randomized properties over many small workloads, for
 * every registered policy, both placements, with and without costs:
 *   - no GPU allocated twice, gangs atomic, aggregates exact (engine check
 *     after every instant);
 *   - every job ends (done or rejected) and the engine goes idle;
 *   - attained service (GPU-seconds held) never decreases;
 *   - total progress equals total work for finished jobs;
 *   - a restart overhead is charged exactly once per restart when costs are
 *     on, never when they are off;
 *   - time accounting: end - submit = queued + executed for finished jobs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"
#include "solver.h"

typedef struct watch {
    double *service; /* last seen per slot */
    size_t n;
    int bad;
    char why[256];
} watch;

/* Mechanisms seen over all runs: the test is vacuous unless each one happened. */
static unsigned long mech_seen[GS_REC_NTYPES];

static void observe(void *ud, const gs_record *r)
{
    watch *w = ud;
    mech_seen[r->type]++;
    if (!r->job || (size_t)r->job->slot >= w->n) return;
    double s = gs_job_service(r->job, r->t);
    if (s + 1e-9 < w->service[r->job->slot] && !w->bad) {
        w->bad = 1;
        snprintf(w->why, sizeof w->why, "job %lld: service went from %.6f to %.6f",
                 (long long)r->job->id, w->service[r->job->slot], s);
    }
    w->service[r->job->slot] = s;
}

static const char *shapes[] = {"8", "2x4", "1x3x4", "2x2x4", "3x2"};

static int run_one(const char *policy, int consolidate, int costs, uint64_t seed, char *err,
                   size_t cap)
{
    gs_rng r;
    gs_rng_seed(&r, seed);
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(shapes[gs_rng_below(&r, 5)], &c, &d)) return -1;
    gs_params p;
    gs_params_init(&p);
    gs_params_set(&p, "slowdown", costs ? "on" : "off");
    gs_params_set(&p, "preempt_cost", costs ? "model" : "0");
    if (strstr(policy, "tiresias") || !strcmp(policy, "las")) {
        gs_params_set(&p, "queues", gs_rng_below(&r, 2) ? "50,200" : "30");
        if (gs_rng_below(&r, 2)) gs_params_set(&p, "promote_knob", "2");
    }
    int gandiva = !strcmp(policy, "gandiva");
    if (gandiva) {
        static const char *q[] = {"10", "30", "60"};
        gs_params_set(&p, "quantum", q[gs_rng_below(&r, 3)]);
        gs_params_set(&p, "introspect", q[gs_rng_below(&r, 3)]);
        gs_params_set(&p, "profile_window", q[gs_rng_below(&r, 3)]);
        gs_params_set(&p, "grow_min", "30");
        if (gs_rng_below(&r, 2)) gs_params_set(&p, "defrag_free", "0.5");
        if (gs_rng_below(&r, 3) == 0) gs_params_set(&p, "oversub", "3");
    }
    if (!strcmp(policy, "yarn-cs") && gs_rng_below(&r, 2)) {
        gs_params_set(&p, "relax", "on");
        gs_params_set(&p, "relax_rack", "20");
        gs_params_set(&p, "relax_any", "20");
        gs_params_set(&p, "quotas", "a:4,b:4");
    }
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.placement = consolidate ? GS_PLACE_CONSOLIDATE : GS_PLACE_COUNT;
    o.lp = gs_lp_glpk(); /* gavel's LPs */
    gs_engine *e = NULL;
    if (gs_engine_create(c, policy, &p, &o, &e, &d)) {
        snprintf(err, cap, "create: %s", d.msg);
        gs_params_release(&p);
        gs_cluster_destroy(c);
        return -1;
    }
    int n = 5 + (int)gs_rng_below(&r, 30);
    watch w = {calloc((size_t)n, sizeof(double)), (size_t)n, 0, ""};
    gs_engine_set_observer(e, observe, &w);
    int ngpus = (int)gs_cluster_ngpus(c);
    for (int i = 0; i < n; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.submit = (gs_time)gs_rng_below(&r, 200) * GS_SEC / 2;
        s.duration =
            (gs_time)(1 + gs_rng_below(&r, 300)) * GS_SEC + (gs_time)gs_rng_below(&r, 1000);
        int g = 1 << gs_rng_below(&r, 4);
        if (gs_rng_below(&r, 3) == 0) {
            s.gpus_per_task = g > 4 ? 4 : g;
            s.ntasks = 1 + (int)gs_rng_below(&r, 2);
        } else {
            s.ntasks = g;
        }
        if (gs_rng_below(&r, 10) == 0) s.ntasks = ngpus + 1; /* never fits: rejected */
        s.vc = gs_rng_below(&r, 2) ? "a" : "b";
        static const char *models[] = {
            "resnet50",          "vgg16", NULL, "bert", "lm-bs20", "resnet18-bs16",
            "transformer-bs256", "a3c"};
        s.model = models[gs_rng_below(&r, gandiva ? 8 : 4)];
        if (gandiva && gs_rng_below(&r, 4) == 0) {
            /* elastic: the engine must keep it within min..max */
            s.min_gpus = s.gpus_per_task;
            s.max_gpus = s.ntasks * s.gpus_per_task * 2;
        }
        if (gandiva && gs_rng_below(&r, 4) == 0)
            s.gpu_mem_mb = 1000 + 1000 * (int)gs_rng_below(&r, 12);
        if (gs_engine_add_job(e, &s, NULL, &d)) {
            snprintf(err, cap, "add: %s", d.msg);
            goto fail;
        }
    }
    int steps = 0, rc;
    while ((rc = gs_engine_step(e)) > 0) {
        if (gs_engine_check(e, &d)) {
            snprintf(err, cap, "step %d at t=%lld: %s", steps, (long long)gs_engine_now(e), d.msg);
            goto fail;
        }
        if (++steps > 200000) {
            snprintf(err, cap, "no end after %d instants (livelock?)", steps);
            goto fail;
        }
    }
    if (w.bad) {
        snprintf(err, cap, "%s", w.why);
        goto fail;
    }
    if (!gs_engine_idle(e)) {
        snprintf(err, cap, "engine not idle at the end");
        goto fail;
    }
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->state != GS_JOB_DONE && j->state != GS_JOB_REJECTED) {
            snprintf(err, cap, "job %lld ended %s", (long long)j->id, gs_job_state_name(j->state));
            goto fail;
        }
        if (j->state == GS_JOB_REJECTED) continue;
        if (j->progress != j->work) {
            snprintf(err, cap, "job %lld: progress %lld != work %lld", (long long)j->id,
                     (long long)j->progress, (long long)j->work);
            goto fail;
        }
        if (j->end - j->submit != j->queued + j->executed + j->suspended) {
            snprintf(err, cap, "job %lld: jct %lld != queued %lld + executed %lld + suspended %lld",
                     (long long)j->id, (long long)(j->end - j->submit), (long long)j->queued,
                     (long long)j->executed, (long long)j->suspended);
            goto fail;
        }
        int expect = costs ? j->restarts : 0;
        if (j->overhead_charges != expect) {
            snprintf(err, cap, "job %lld: %d overhead charges for %d restarts", (long long)j->id,
                     j->overhead_charges, j->restarts);
            goto fail;
        }
        /* (a grown elastic job may run faster than at its requested size) */
        if (!costs && j->max_gpus == 0 && j->executed < j->work - 1) {
            snprintf(err, cap, "job %lld: executed %lld < work %lld at full speed",
                     (long long)j->id, (long long)j->executed, (long long)j->work);
            goto fail;
        }
    }
    free(w.service);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_params_release(&p);
    return 0;
fail:
    free(w.service);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_params_release(&p);
    return -1;
}

static void t_properties_all_policies(void)
{
    int runs = 0;
    for (size_t pi = 0; gs_policy_at(pi); pi++) {
        const char *pol = gs_policy_at(pi)->name;
        /* hived and private need HiveD configs: tests/test_hived.c covers them */
        if (!strcmp(pol, "hived") || !strcmp(pol, "private") || !strcmp(pol, "quota")) continue;
        if (!gs_lp_glpk() && !strcmp(pol, "gavel")) continue; /* built without GLPK */
        for (uint64_t seed = 1; seed <= 40; seed++)
            for (int cons = 0; cons <= 1; cons++)
                for (int costs = 0; costs <= 1; costs++) {
                    char err[512] = "";
                    if (run_one(pol, cons, costs, seed * 7919 + pi, err, sizeof err))
                        T_FAIL("%s seed %llu %s costs %s: %s", pol, (unsigned long long)seed,
                               cons ? "consolidate" : "count", costs ? "on" : "off", err);
                    runs++;
                }
    }
    ASSERT(runs >= 9 * 160);
    ASSERT(mech_seen[GS_REC_SUSPEND] > 0);
    ASSERT(mech_seen[GS_REC_RESUME] > 0);
    ASSERT(mech_seen[GS_REC_PACK] > 0);
    ASSERT(mech_seen[GS_REC_UNPACK] > 0);
    ASSERT(mech_seen[GS_REC_MIGRATE] > 0);
    ASSERT(mech_seen[GS_REC_RESIZE] > 0);
}

static const test_case tests[] = {
    {"properties_all_policies", t_properties_all_policies},
};

TEST_MAIN(tests)
