/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_pollux.c - the pollux policy's constraints and decisions on small
 * clusters with elastic jobs (linear speedup: no goodput model is installed,
 * so a job's speedup is its replica count and its cap doubles per decision):
 * at most one distributed job per node, the node cap per job, the replica
 * cap (2 x most replicas run so far, max_replicas), the restart penalty,
 * (with the goodput model of two Pollux applications: ncf kept at one
 * replica, the 2x exploration cap, sizes that stop growing where the
 * model's speedup flattens),
 * decisions only at interval boundaries (parity), admission of a newcomer
 * by shrinking a grown job, reasons on every rescale, and byte-identical
 * reruns.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/goodput.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "harness.h"
#include "sim.h"

typedef struct world {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
    uint64_t hash;       /* FNV-1a over the record stream */
    int rescales;        /* RESCALE/DRAIN records with a "pollux:" reason */
    int bad_reason;      /* a DRAIN record without a reason */
    int starts_off_tick; /* START records at instants that are not interval multiples */
    gs_time tick;
} world;

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}

static void observe(void *ud, const gs_record *r)
{
    world *w = ud;
    fnv(&w->hash, &r->t, sizeof r->t);
    fnv(&w->hash, &r->type, sizeof r->type);
    if (r->job) {
        fnv(&w->hash, &r->job->id, sizeof r->job->id);
        fnv(&w->hash, &r->job->nalloc, sizeof r->job->nalloc);
        if (r->job->alloc)
            fnv(&w->hash, r->job->alloc, (size_t)r->job->nalloc * sizeof *r->job->alloc);
    }
    if (r->reason) fnv(&w->hash, r->reason, strlen(r->reason));
    if (r->type == GS_REC_DRAIN) {
        if (!r->reason || strncmp(r->reason, "pollux: ", 8))
            w->bad_reason++;
        else
            w->rescales++;
    }
    if (r->type == GS_REC_START && w->tick > 0 && r->t % w->tick) w->starts_off_tick++;
}

static int mk(world *w, const char *spec, const char *const *sets)
{
    memset(w, 0, sizeof *w);
    w->hash = 1469598103934665603ull;
    w->tick = 60 * GS_SEC;
    gs_params_init(&w->p);
    gs_params_set(&w->p, "slowdown", "off");
    gs_params_set(&w->p, "preempt_cost", "30");
    gs_params_set(&w->p, "rescale_gap", "0");
    gs_params_set(&w->p, "elastic_mode", "parity");
    for (; sets && *sets; sets++)
        if (gs_params_set_kv(&w->p, *sets)) return -1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, &w->c, &d)) return -1;
    if (gs_engine_create(w->c, "pollux", &w->p, NULL, &w->e, &d)) {
        fprintf(stderr, "  create: %s\n", d.msg);
        return -1;
    }
    gs_engine_set_observer(w->e, observe, w);
    return gs_params_unused(&w->p) ? -2 : 0;
}

static void done(world *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
    gs_params_release(&w->p);
}

/* An elastic job of 1..maxg GPUs (1 per task) with 'dur' seconds of work at 1 GPU. */
static const gs_job *ejob(world *w, int64_t id, double t, int maxg, double dur)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(t);
    s.ntasks = 1;
    s.gpus_per_task = 1;
    s.min_gpus = 1;
    s.max_gpus = maxg;
    s.duration = gs_time_from_sec(dur);
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(w->e, &s, &j, &d)) fprintf(stderr, "  add_job: %s\n", d.msg);
    return j;
}

/* GPUs a job holds or has reserved, for the per-node checks. */
static int nodes_of(const gs_cluster *c, const int32_t *g, int n, int *mark, int nn)
{
    for (int i = 0; i < nn; i++) mark[i] = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int nd = gs_cluster_gpu(c, g[i])->node;
        if (!mark[nd]) k++;
        mark[nd] = 1;
    }
    return k;
}

typedef struct stats {
    int max_nodes;      /* most nodes any job spanned */
    int max_dist;       /* most distributed jobs on one node */
    int max_gpus;       /* most GPUs any job held */
    int dist_seen;      /* a distributed job was seen */
    int growth_over_2x; /* a job more than doubled its most GPUs so far at once */
} stats;

/* Check every job's allocation (and reservation) now. */
static void scan(world *w, stats *st, int *mark, int *dist, int *best)
{
    size_t nn = gs_cluster_nnodes(w->c);
    for (size_t i = 0; i < nn; i++) dist[i] = 0;
    for (size_t s = 0; s < gs_engine_njobs(w->e); s++) {
        const gs_job *j = gs_engine_job(w->e, s);
        for (int which = 0; which < 2; which++) {
            const int32_t *g = which ? j->resv : j->alloc;
            int n =
                which ? (j->state == GS_JOB_DRAINING ? j->nresv : 0) : (j->alloc ? j->nalloc : 0);
            if (!g || n <= 0) continue;
            int k = nodes_of(w->c, g, n, mark, (int)nn);
            if (k > st->max_nodes) st->max_nodes = k;
            if (n > st->max_gpus) st->max_gpus = n;
            if (n > 2 * best[s] && best[s] > 0) st->growth_over_2x++;
            if (k > 1) {
                st->dist_seen = 1;
                for (size_t i = 0; i < nn; i++)
                    if (mark[i] && ++dist[i] > st->max_dist) st->max_dist = dist[i];
            }
        }
        if (j->alloc && j->nalloc > best[s]) best[s] = j->nalloc;
    }
}

static int run_until(world *w, double until_s, stats *st)
{
    size_t nn = gs_cluster_nnodes(w->c);
    int *mark = calloc(nn, sizeof *mark), *dist = calloc(nn, sizeof *dist);
    int *best = calloc(4096, sizeof *best);
    int rc = 1;
    while (rc == 1 && gs_engine_next_event_time(w->e) <= gs_time_from_sec(until_s)) {
        rc = gs_engine_step(w->e);
        if (rc < 0) break;
        if (st) scan(w, st, mark, dist, best);
        if (gs_engine_check(w->e, NULL)) {
            rc = -1000;
            break;
        }
    }
    free(mark);
    free(dist);
    free(best);
    return rc < 0 ? rc : 0;
}

/* 3 long elastic jobs on 4 nodes x 4 GPUs: they spread over nodes, never two
 * distributed jobs on one node. */
static void t_one_distributed_per_node(void)
{
    world w;
    ASSERT_OK(mk(&w, "4x4", NULL));
    for (int i = 0; i < 3; i++) ASSERT(ejob(&w, i + 1, 0, 16, 1e6));
    stats st = {0};
    ASSERT_OK(run_until(&w, 3600, &st));
    ASSERT(st.dist_seen);
    ASSERT_EQ(st.max_dist, 1);
    ASSERT_EQ(w.bad_reason, 0);
    ASSERT(w.rescales > 0);
    done(&w);

    /* the same without the rule: two distributed jobs do share a node (so the check can fail) */
    const char *off[] = {"interference_avoid=off", NULL};
    ASSERT_OK(mk(&w, "4x4", off));
    for (int i = 0; i < 3; i++) ASSERT(ejob(&w, i + 1, 0, 16, 1e6));
    stats st2 = {0};
    ASSERT_OK(run_until(&w, 3600, &st2));
    ASSERT(st2.max_dist > 1);
    done(&w);
}

/* max_nodes caps the nodes of one job; the replica cap doubles per decision. */
static void t_node_and_replica_caps(void)
{
    world w;
    const char *sets[] = {"max_nodes=2", NULL};
    ASSERT_OK(mk(&w, "8x2", sets));
    const gs_job *a = ejob(&w, 1, 0, 16, 1e6);
    ASSERT(a);
    stats st = {0};
    ASSERT_OK(run_until(&w, 60, &st));
    ASSERT_EQ(a->nalloc, 1); /* first decision: nothing run yet, cap max(2 x 0, 1) = 1 */
    ASSERT_OK(run_until(&w, 120, &st));
    ASSERT_EQ(a->nalloc, 2); /* then 2 x 1 */
    ASSERT_OK(run_until(&w, 1200, &st));
    ASSERT_EQ(st.max_nodes, 2); /* 2 nodes x 2 GPUs although 16 are free */
    ASSERT_EQ(st.max_gpus, 4);
    ASSERT_EQ(st.growth_over_2x, 0);
    done(&w);

    const char *sets2[] = {"max_replicas=3", NULL};
    ASSERT_OK(mk(&w, "2x4", sets2));
    a = ejob(&w, 1, 0, 16, 1e6);
    stats st2 = {0};
    ASSERT_OK(run_until(&w, 1200, &st2));
    ASSERT_EQ(st2.max_gpus, 3);
    ASSERT_EQ(a->nalloc, 3);
    done(&w);

    /* the job's own max_gpus caps too */
    ASSERT_OK(mk(&w, "2x4", NULL));
    a = ejob(&w, 1, 0, 2, 1e6);
    stats st3 = {0};
    ASSERT_OK(run_until(&w, 1200, &st3));
    ASSERT_EQ(st3.max_gpus, 2);
    done(&w);
}

/* The restart factor max(age - restarts x D, 0) / (age + D): with a huge D a job that
 * runs is never changed (its factor is ~0); with the default it grows. */
static void t_restart_penalty(void)
{
    world w;
    ASSERT_OK(mk(&w, "1x4", NULL));
    const gs_job *a = ejob(&w, 1, 0, 4, 1e6);
    ASSERT_OK(run_until(&w, 600, NULL));
    ASSERT_EQ(a->nalloc, 4);
    int resc = w.rescales;
    ASSERT(resc >= 2); /* 1 -> 2 -> 4 */
    done(&w);

    const char *sets[] = {"restart_penalty=100000h", NULL};
    ASSERT_OK(mk(&w, "1x4", sets));
    a = ejob(&w, 1, 0, 4, 1e6);
    ASSERT_OK(run_until(&w, 600, NULL));
    ASSERT_EQ(a->nalloc, 1); /* started (1000 -> ~0 is still a gain), never rescaled */
    ASSERT_EQ(w.rescales, 0);
    done(&w);
}

/* Parity: decisions at multiples of the interval only; a newcomer is admitted at the
 * next boundary by shrinking the grown job (power mean p = -1 favours 1 GPU for
 * everyone over 4 for one). */
static void t_parity_ticks_and_admission(void)
{
    world w;
    ASSERT_OK(mk(&w, "1x4", NULL));
    const gs_job *a = ejob(&w, 1, 10, 4, 1e6);
    ASSERT_OK(run_until(&w, 59, NULL));
    ASSERT_EQ(a->state, GS_JOB_PENDING);
    ASSERT_OK(run_until(&w, 60, NULL));
    ASSERT_EQ(a->first_start, 60 * GS_SEC);
    ASSERT_OK(run_until(&w, 900, NULL));
    ASSERT_EQ(a->nalloc, 4);
    const gs_job *b = ejob(&w, 2, 905, 4, 1e6);
    ASSERT(b);
    ASSERT_OK(run_until(&w, 955, NULL));
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    ASSERT_OK(run_until(&w, 960, NULL));
    ASSERT_EQ(b->state, GS_JOB_RUNNING);
    ASSERT_EQ(b->first_start, 960 * GS_SEC);
    ASSERT(a->nalloc + (a->state == GS_JOB_DRAINING ? 0 : 0) < 4 || a->target_gpus < 4);
    ASSERT_EQ(w.starts_off_tick, 0);
    ASSERT_CONTAINS(a->rescale_reason, "pollux: shrank 4->");
    done(&w);
}

/* Event mode: an arrival is served at once, not at the next boundary. */
static void t_event_mode(void)
{
    world w;
    const char *sets[] = {"elastic_mode=event", NULL};
    ASSERT_OK(mk(&w, "1x4", sets));
    const gs_job *a = ejob(&w, 1, 10, 4, 1e6);
    ASSERT_OK(run_until(&w, 11, NULL));
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    ASSERT_EQ(a->first_start, 10 * GS_SEC);
    done(&w);

    /* a finish is served at once too: the survivor grows at that instant (no job waits, so
     * only the policy's request makes the engine run a pass) */
    ASSERT_OK(mk(&w, "1x4", sets));
    const gs_job *b = ejob(&w, 1, 0, 4, 1e6);
    const gs_job *c = ejob(&w, 2, 0, 4, 100);
    ASSERT(b && c);
    ASSERT_OK(run_until(&w, 1000, NULL));
    ASSERT_EQ(c->state, GS_JOB_DONE);
    ASSERT(c->end % (60 * GS_SEC) != 0); /* not at a tick */
    ASSERT_EQ(b->nalloc, 4);
    ASSERT_EQ(b->last_rescale, c->end);
    done(&w);
}

/* Rigid jobs (max_gpus 0) start at their size and are never rescaled. */
static void t_rigid(void)
{
    world w;
    ASSERT_OK(mk(&w, "2x4", NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 7;
    s.ntasks = 3;
    s.duration = gs_time_from_sec(500);
    const gs_job *r = NULL;
    ASSERT_OK(gs_engine_add_job(w.e, &s, &r, NULL));
    const gs_job *a = ejob(&w, 8, 0, 8, 1e6);
    ASSERT_OK(run_until(&w, 60, NULL));
    ASSERT_EQ(r->state, GS_JOB_RUNNING);
    ASSERT_EQ(r->nalloc, 3);
    ASSERT_EQ(a->nalloc, 1);
    ASSERT_OK(run_until(&w, 2000, NULL));
    ASSERT_EQ(r->state, GS_JOB_DONE);
    done(&w);
}

/*
 * An elastic job without a goodput application whose smallest size is 4 GPUs, never seen
 * running: Pollux's exploration bound (twice the most GPUs seen) must not fall below that
 * size, or the job waits for ever on an idle cluster (it was capped at 1 replica).
 */
static void t_min_size_unseen(void)
{
    world w;
    ASSERT_OK(mk(&w, "1x8", NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 1;
    s.ntasks = 4;
    s.gpus_per_task = 1;
    s.min_gpus = 4;
    s.max_gpus = 8;
    s.duration = gs_time_from_sec(1000);
    const gs_job *j = NULL;
    ASSERT_OK(gs_engine_add_job(w.e, &s, &j, NULL));
    ASSERT_OK(run_until(&w, 61, NULL));
    ASSERT_EQ(j->state == GS_JOB_RUNNING || j->state == GS_JOB_DRAINING, 1);
    ASSERT(j->nalloc >= 4);
    ASSERT_OK(run_until(&w, 5000, NULL));
    ASSERT_EQ(j->state, GS_JOB_DONE);
    done(&w);
}

/* A seeded random elastic workload twice: identical record streams, and the
 * invariants hold all along. */
static uint64_t random_run(uint64_t seed, const char *mode, int *ok)
{
    world w;
    char m[64];
    snprintf(m, sizeof m, "elastic_mode=%s", mode);
    const char *sets[] = {m, NULL};
    *ok = 0;
    if (mk(&w, "6x4", sets)) return 0;
    gs_rng r;
    gs_rng_seed(&r, seed);
    for (int i = 0; i < 40; i++) {
        double t = (double)gs_rng_below(&r, 4000);
        int maxg = 1 + (int)gs_rng_below(&r, 24);
        double dur = 200 + (double)gs_rng_below(&r, 5000);
        if (!ejob(&w, i + 1, t, maxg, dur)) return 0;
    }
    stats st = {0};
    int rc = run_until(&w, 1e9, &st);
    int all_done = 1;
    for (size_t s = 0; s < gs_engine_njobs(w.e); s++)
        all_done &= gs_engine_job(w.e, s)->state == GS_JOB_DONE;
    *ok = !rc && all_done && st.max_dist <= 1 && st.max_nodes <= 16 && !w.bad_reason &&
          w.rescales > 0;
    uint64_t h = w.hash;
    done(&w);
    return h;
}

static void t_deterministic(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        int ok1, ok2, ok3, ok4;
        uint64_t a = random_run(seed, "parity", &ok1), b = random_run(seed, "parity", &ok2);
        ASSERT(ok1 && ok2);
        ASSERT_EQ(a, b);
        uint64_t c = random_run(seed, "event", &ok3), d = random_run(seed, "event", &ok4);
        ASSERT(ok3 && ok4);
        ASSERT_EQ(c, d);
        ASSERT_NE(a, c);
    }
}

/* With the goodput model (the bundled Pollux traces): ncf stays at 1 replica, cifar10
 * grows by at most 2x per decision and stops growing where its speedup flattens
 * (well below the 64 GPUs that are free), and reruns are identical. */
static void goodput_run(uint64_t *hash, int *ncf_max, int *cifar_max, int *over2x)
{
    world w;
    *hash = 0;
    *ncf_max = *cifar_max = -1;
    if (mk(&w, "16x4", NULL)) return;
    gs_goodput *g = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    static const char *const apps[] = {"ncf", "cifar10"};
    int rc = gs_goodput_create(&g);
    for (int i = 0; !rc && i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/data/pollux/traces/%s", GSCHED_SOURCE_DIR, apps[i]);
        rc = gs_pollux_load_app(g, path, apps[i], &d);
        if (rc > 0) rc = 0;
    }
    if (!rc) rc = gs_goodput_finish(g, &d);
    if (!rc) rc = gs_engine_set_progress(w.e, gs_goodput_progress_ops(), g);
    if (rc) {
        fprintf(stderr, "  model: %s\n", d.msg);
        goto out;
    }
    const gs_job *j[2];
    for (int i = 0; i < 2; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i + 1;
        s.ntasks = 1;
        s.min_gpus = 1;
        s.max_gpus = 64;
        s.app = apps[i];
        s.duration = gs_goodput_work(g, gs_goodput_find_app(g, apps[i]));
        if (gs_engine_add_job(w.e, &s, &j[i], &d)) goto out;
    }
    *ncf_max = *cifar_max = 0;
    *over2x = 0;
    int best = 0;
    while (gs_engine_next_event_time(w.e) <= 3600 * GS_SEC && !gs_engine_idle(w.e)) {
        if (gs_engine_step(w.e) < 0) goto out;
        if (j[0]->alloc && j[0]->nalloc > *ncf_max) *ncf_max = j[0]->nalloc;
        if (j[1]->alloc) {
            if (best && j[1]->nalloc > 2 * best) (*over2x)++;
            if (j[1]->nalloc > best) best = j[1]->nalloc;
        }
    }
    *cifar_max = best;
    *hash = w.hash;
out:
    done(&w);
    gs_goodput_destroy(g);
}

static void t_goodput_caps(void)
{
    uint64_t h1, h2;
    int n1, c1, o1, n2, c2, o2;
    goodput_run(&h1, &n1, &c1, &o1);
    goodput_run(&h2, &n2, &c2, &o2);
    ASSERT_EQ(n1, 1);
    ASSERT(c1 >= 4);
    ASSERT(c1 < 64);
    ASSERT_EQ(o1, 0);
    ASSERT(h1 != 0);
    ASSERT_EQ(h1, h2);
    ASSERT_EQ(c1, c2);
}

static void t_params(void)
{
    world w;
    const char *bad[][2] = {{"elastic_mode=sometimes", NULL},
                            {"speedup_base=two", NULL},
                            {"fixed_batch=ncf", NULL},
                            {"interval=0", NULL},
                            {"power=3", NULL},
                            {"max_nodes=0", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ASSERT_EQ(mk(&w, "1x4", bad[i]), -1);
        gs_engine_destroy(w.e);
        gs_cluster_destroy(w.c);
        gs_params_release(&w.p);
    }
    ASSERT(gs_policy_find("pollux") != NULL);
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        {"one_distributed_per_node", t_one_distributed_per_node},
        {"node_and_replica_caps", t_node_and_replica_caps},
        {"restart_penalty", t_restart_penalty},
        {"parity_ticks_and_admission", t_parity_ticks_and_admission},
        {"event_mode", t_event_mode},
        {"rigid", t_rigid},
        {"min_size_unseen", t_min_size_unseen},
        {"deterministic", t_deterministic},
        {"goodput_caps", t_goodput_caps},
        {"params", t_params},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
