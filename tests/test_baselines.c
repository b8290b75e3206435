/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_baselines.c - the Pollux paper's rigid baselines on small hand-checked
 * cases: tiresias-tj (ticks, queue order, demotion, most-free placement) and
 * optimus (marginal gain, in parity and in its native elastic mode).  Their
 * fidelity to the artifact on the Pollux workloads is tests/e2e/pollux_parity.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

typedef struct world {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
} world;

static int mk(world *w, const char *spec, const char *policy, const char *const *sets)
{
    memset(w, 0, sizeof *w);
    gs_params_init(&w->p);
    gs_params_set(&w->p, "slowdown", "off");
    gs_params_set(&w->p, "preempt_cost", "0");
    gs_params_set(&w->p, "elastic_mode", "parity");
    for (; sets && *sets; sets++)
        if (gs_params_set_kv(&w->p, *sets)) return -1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, &w->c, &d)) return -1;
    if (gs_engine_create(w->c, policy, &w->p, NULL, &w->e, &d)) {
        fprintf(stderr, "  %s\n", d.msg);
        return -1;
    }
    return gs_params_unused(&w->p) ? -2 : 0;
}

static void done(world *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
    gs_params_release(&w->p);
}

static const gs_job *job(world *w, int64_t id, double t, int gpus, double dur, int max_gpus)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(t);
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(dur);
    if (max_gpus) {
        s.min_gpus = 1;
        s.max_gpus = max_gpus;
    }
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(w->e, &s, &j, &d)) fprintf(stderr, "  add_job: %s\n", d.msg);
    return j;
}

/* Step until time t (the instant at t included); returns the engine's error. */
static int run_until(world *w, double t)
{
    int rc;
    while (!gs_engine_idle(w->e) && gs_engine_next_event_time(w->e) <= gs_time_from_sec(t)) {
        if ((rc = gs_engine_step(w->e)) <= 0) return rc;
    }
    return 0;
}

/* tiresias-tj decides at multiples of the interval only: a job waits for the next tick. */
static void t_tj_ticks(void)
{
    world w;
    ASSERT_OK(mk(&w, "2x4", "tiresias-tj", NULL));
    const gs_job *a = job(&w, 1, 10, 4, 100, 0), *b = job(&w, 2, 130, 8, 30, 0),
                 *c = job(&w, 3, 180, 2, 10, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 60 * GS_SEC); /* arrived at 10, first tick at 60 */
    ASSERT_EQ(a->end, 160 * GS_SEC);
    ASSERT_EQ(b->first_start, 180 * GS_SEC); /* a finished at 160: the 180 tick */
    /* c arrives at the 180 tick itself and is seen by it, but b (first in queue) took all 8 */
    ASSERT_EQ(c->first_start, 240 * GS_SEC);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
    const char *sets[] = {"interval=30s", NULL};
    ASSERT_OK(mk(&w, "2x4", "tiresias-tj", sets));
    a = job(&w, 1, 10, 4, 100, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 30 * GS_SEC);
    done(&w);
    /* the parity costs: every allocation costs 30 s, the first one included */
    const char *p30[] = {"rescale_cost=pollux30", "preempt_cost=30", "launch_cost=on", NULL};
    ASSERT_OK(mk(&w, "2x4", "tiresias-tj", p30));
    a = job(&w, 1, 10, 4, 100, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_EQ(a->end, 190 * GS_SEC);
    ASSERT_EQ(a->restarts, 0);
    done(&w);
    /* event mode: waiting jobs start at any pass; the ticks still demote */
    const char *ev[] = {"elastic_mode=event", NULL};
    ASSERT_OK(mk(&w, "2x4", "tiresias-tj", ev));
    a = job(&w, 1, 10, 4, 100, 0);
    b = job(&w, 2, 130, 8, 30, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 10 * GS_SEC);
    ASSERT_EQ(b->first_start, 130 * GS_SEC);
    done(&w);
}

/* Most-free placement: the node with the most free GPUs first, lowest index on ties,
 * and a running job keeps its GPUs. */
static void t_tj_mostfree(void)
{
    world w;
    ASSERT_OK(mk(&w, "3x4", "tiresias-tj", NULL));
    const gs_job *a = job(&w, 1, 0, 1, 1000, 0), *b = job(&w, 2, 0, 2, 1000, 0),
                 *c = job(&w, 3, 100, 6, 100, 0);
    ASSERT_OK(run_until(&w, 120));
    /* a: node 0 (all tie at 4); b: nodes 1 and 2 have 4, node 0 3 -> node 1 */
    ASSERT_EQ(gs_cluster_gpu(w.c, a->alloc[0])->node, 0);
    ASSERT_EQ(gs_cluster_gpu(w.c, b->alloc[0])->node, 1);
    ASSERT_EQ(gs_cluster_gpu(w.c, b->alloc[1])->node, 1);
    /* c (6): node 2 has 4 free, then node 0 (3 free) beats node 1 (2 free) */
    ASSERT_EQ(c->state, GS_JOB_RUNNING);
    ASSERT_EQ(c->first_start, 120 * GS_SEC);
    for (int i = 0; i < 4; i++) ASSERT_EQ(gs_cluster_gpu(w.c, c->alloc[i])->node, 2);
    for (int i = 4; i < 6; i++) ASSERT_EQ(gs_cluster_gpu(w.c, c->alloc[i])->node, 0);
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_EQ(a->preemptions + b->preemptions, 0);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

/* The scan gs_mostfree_place replaced (one pass over every node per node taken), as the
 * reference for its order. */
static int naive_mostfree(const gs_cluster *c, int n, int gpt, int *out)
{
    int nnodes = (int)gs_cluster_nnodes(c), k = 0;
    if (gpt < 1 || n < gpt || n % gpt) return GS_ENOFIT;
    while (k < n) {
        int best = -1, bestfree = 0;
        for (int i = 0; i < nnodes; i++) {
            const gs_node *nd = gs_cluster_node(c, i);
            int used = 0, f = 0;
            for (int t = 0; t < k && !used; t += gpt) used = gs_cluster_gpu(c, out[t])->node == i;
            if (nd->down || used) continue;
            for (int g = nd->gpu_lo; g < nd->gpu_hi; g++) {
                const gs_gpu *u = gs_cluster_gpu(c, g);
                f += u->owner < 0 && !u->users && !u->down;
            }
            f = f / gpt * gpt;
            if (f > bestfree) best = i, bestfree = f;
        }
        if (best < 0) return GS_ENOFIT;
        const gs_node *nd = gs_cluster_node(c, best);
        for (int g = nd->gpu_lo, take = bestfree < n - k ? bestfree : n - k; g < nd->gpu_hi && take;
             g++) {
            const gs_gpu *u = gs_cluster_gpu(c, g);
            if (u->owner >= 0 || u->users || u->down) continue;
            out[k++] = g;
            take--;
        }
    }
    return 0;
}

/* gs_mostfree_place against the scan, on random states of a rack tree (some GPUs down). */
static void t_mostfree_random(void)
{
    gs_cluster *c;
    ASSERT_OK(gs_cluster_create(&c));
    ASSERT_OK(gs_cluster_build_uniform(c, 3, 5, 8, "V100", 0, 0));
    ASSERT_OK(gs_cluster_finish(c, NULL));
    int ng = (int)gs_cluster_ngpus(c), a[128], b[128];
    uint64_t r = 12345;
    for (int round = 0; round < 3000; round++) {
        r = r * 6364136223846793005u + 1442695040888963407u;
        int g = (int)((r >> 33) % (uint64_t)ng), op = (int)((r >> 20) % 8);
        const gs_gpu *u = gs_cluster_gpu(c, g);
        if (op < 4 && u->owner < 0 && !u->users && !u->down)
            ASSERT_OK(gs_cluster_alloc(c, &g, 1, 7));
        else if (op < 7 && u->owner == 7)
            ASSERT_OK(gs_cluster_release(c, &g, 1, 7));
        else if (op == 7 && u->owner < 0)
            ASSERT_OK(gs_cluster_set_gpu_down(c, g, !u->down));
        int gpt = 1 << ((r >> 40) % 3), n = gpt * (1 + (int)((r >> 45) % 12));
        int ra = gs_mostfree_place(c, n, gpt, -1, a), rb = naive_mostfree(c, n, gpt, b);
        ASSERT_EQ(ra, rb);
        for (int i = 0; i < n && !ra; i++)
            if (a[i] != b[i])
                T_FAIL("round %d: n %d gpt %d: GPU %d is %d, not %d", round, n, gpt, i, a[i], b[i]);
    }
    gs_cluster_destroy(c);
}

/* Two queues: a job that attained the threshold (executed x requested GPUs) goes behind
 * the first queue and is preempted for a new job that needs its GPUs. */
static void t_tj_demotion(void)
{
    world w;
    const char *sets[] = {"tj_threshold=400s", NULL};
    ASSERT_OK(mk(&w, "1x4", "tiresias-tj", sets));
    const gs_job *a = job(&w, 1, 0, 4, 1000, 0), *b = job(&w, 2, 70, 4, 50, 0);
    ASSERT_OK(gs_engine_run(w.e));
    /* a runs from 60; at 120 it has 60 s x 4 = 240 GPU-s (< 400): b waits; at 180 it has
     * 480 GPU-s: demoted, b (queue 0) runs at 180 and a waits until b ends */
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_EQ(b->first_start, 180 * GS_SEC);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT_EQ(b->end, 230 * GS_SEC);
    /* a resumes at the 240 tick, with its 120 s of work done kept */
    ASSERT_EQ(a->end, (240 + 880) * GS_SEC);
    done(&w);
    /* without demotion (the default 16 GPU-hours) b waits for a */
    ASSERT_OK(mk(&w, "1x4", "tiresias-tj", NULL));
    a = job(&w, 1, 0, 4, 1000, 0);
    b = job(&w, 2, 70, 4, 50, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->preemptions, 0);
    ASSERT_EQ(b->first_start, 1080 * GS_SEC);
    done(&w);
}

/* Arrival order inside a queue, and no head-of-line blocking: a later job that fits runs. */
static void t_tj_order(void)
{
    world w;
    ASSERT_OK(mk(&w, "1x4", "tiresias-tj", NULL));
    const gs_job *a = job(&w, 1, 5, 3, 100, 0), *b = job(&w, 2, 6, 2, 100, 0),
                 *c = job(&w, 3, 7, 1, 100, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_EQ(c->first_start, 60 * GS_SEC); /* b does not fit, c does */
    ASSERT_EQ(b->first_start, 180 * GS_SEC);
    done(&w);
}

/* optimus (native): marginal gain over the scaling curve; a running elastic job changes size
 * by rescales that say why; a rigid job runs at its size or waits. */
static void t_optimus_native(void)
{
    world w;
    const char *ev[] = {"elastic_mode=event", NULL};
    ASSERT_OK(mk(&w, "1x8", "optimus", ev));
    const gs_job *a = job(&w, 1, 0, 1, 1000, 8), *b = job(&w, 2, 100, 1, 1000, 8);
    ASSERT_OK(run_until(&w, 60));
    ASSERT_EQ(a->state, GS_JOB_RUNNING); /* alone: every GPU has a positive gain */
    ASSERT_EQ(a->nalloc, 8);
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_OK(run_until(&w, 200));
    /* b came at 100; at the 120 tick, per GPU, with t(n) = (1 + 0.1 (n - 1)) / n and work
     * left a 718 s (60 s at 8 GPUs: 4.7x), b 1000 s: b 450, a 323, b 150, a 108, b 75, a 54:
     * 4 GPUs each, a shrank for b */
    ASSERT(a->rescales >= 1);
    ASSERT_CONTAINS(a->rescale_reason, "optimus: shrank 8->4 GPUs");
    ASSERT_EQ(b->state, GS_JOB_RUNNING);
    ASSERT_EQ(b->nalloc, 4);
    ASSERT_EQ(a->nalloc, 4);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
    /* rigid jobs: each at its size, the one that does not fit waits */
    ASSERT_OK(mk(&w, "1x8", "optimus", ev));
    a = job(&w, 1, 0, 6, 100, 0);
    b = job(&w, 2, 0, 4, 100, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_EQ(a->gpus, 6);
    ASSERT_EQ(b->first_start, 180 * GS_SEC); /* a ends at 160: the 180 tick */
    ASSERT_EQ(a->rescales + b->rescales, 0);
    done(&w);
}

/* optimus in parity without a goodput model: 1 GPU each first, then by marginal gain; a job
 * whose size changes stops and starts again (the artifact re-places it), no rescale. */
static void t_optimus_parity(void)
{
    world w;
    ASSERT_OK(mk(&w, "2x4", "optimus", NULL));
    const gs_job *a = job(&w, 1, 0, 1, 1000, 8);
    const gs_job *b = job(&w, 2, 0, 1, 10, 8), *c = job(&w, 3, 70, 1, 1000, 8);
    ASSERT_OK(run_until(&w, 60));
    /* a (1000 s left) gains more per GPU than b (10 s): a gets the most */
    ASSERT(a->nalloc > b->nalloc);
    ASSERT_EQ(a->nalloc + b->nalloc, 8);
    ASSERT_OK(run_until(&w, 120));
    ASSERT_EQ(c->state, GS_JOB_RUNNING);
    ASSERT(a->preemptions >= 1); /* resized by a stop and a start on the most-free nodes */
    ASSERT_EQ(a->rescales, 0);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(c->state, GS_JOB_DONE);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

static const test_case tests[] = {
    {"optimus_native", t_optimus_native},
    {"optimus_parity", t_optimus_parity},
    {"tj_ticks", t_tj_ticks},
    {"tj_mostfree", t_tj_mostfree},
    {"mostfree_random", t_mostfree_random},
    {"tj_demotion", t_tj_demotion},
    {"tj_order", t_tj_order},
};

TEST_MAIN(tests)
