/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_themis.c - Themis (src/core/policy_themis.c): the partial-allocation
 * mechanism on bid tables checked by hand (Nash-welfare allocation, hidden
 * payments, rounding), leases (no GPU taken before a lease ends; taken at its
 * end), work conservation, the fairness knob (f = 0 serves the largest
 * welfare gain, f -> 1 the worst finish-time fairness), determinism, app=user,
 * parameters, and runs on a cluster of two GPU types.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/themis.h"
#include "config.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "harness.h"
#include "solver.h"

/* ---- the mechanism --------------------------------------------------------------------------- */

static void t_pa_nash_welfare_and_payments(void)
{
    /* R = 2.  A: 1 GPU -> 2, 2 GPUs -> 3; B: 1 GPU -> 3; C: 1 GPU -> 1.5 (valuations, "no GPU"
     * = 1).  Products: A2 = 3, A1B1 = 6, A1C1 = 3, B1C1 = 4.5: G* = A1 B1 C0.
     * Without A the others' best is B1C1 = 4.5, they get 3 in G*: c_A = 2/3.
     * Without B: A2 or A1C1 = 3, they get 2: c_B = 2/3.  Without C: 6 = 6: c_C = 1. */
    gs_themis_opt a[] = {{0, 1}, {1, 2}, {2, 3}}, b[] = {{0, 1}, {1, 3}}, c[] = {{0, 1}, {1, 1.5}};
    gs_themis_bid bids[] = {{a, 3}, {b, 2}, {c, 2}};
    gs_themis_pa_ws ws = {0};
    int star[3], grant[3];
    double pay[3], w;
    ASSERT_OK(gs_themis_pa(bids, 3, 2, &ws, star, pay, grant, &w));
    ASSERT_EQ(star[0], 1);
    ASSERT_EQ(star[1], 1);
    ASSERT_EQ(star[2], 0);
    ASSERT_NEAR(w, log(6), 1e-9);
    ASSERT_NEAR(pay[0], 2.0 / 3, 1e-9);
    ASSERT_NEAR(pay[1], 2.0 / 3, 1e-9);
    ASSERT_NEAR(pay[2], 1.0, 1e-9);
    /* 2/3 of one GPU rounds to the whole GPU */
    ASSERT_EQ(grant[0], 1);
    ASSERT_EQ(grant[1], 1);
    ASSERT_EQ(grant[2], 0);
    /* more GPUs than anyone wants: everyone gets the largest option, no payment */
    ASSERT_OK(gs_themis_pa(bids, 3, 100, &ws, star, pay, grant, &w));
    ASSERT_EQ(star[0], 2);
    ASSERT_EQ(star[1], 1);
    ASSERT_EQ(star[2], 1);
    ASSERT_NEAR(pay[0], 1.0, 1e-9);
    ASSERT_NEAR(w, log(3 * 3 * 1.5), 1e-9);
    gs_themis_pa_release(&ws);
}

static void t_pa_payment_cuts_a_gang(void)
{
    /* R = 1: A values the GPU 3, B 2.5.  G* gives it to A; without A, B would have 2.5 instead
     * of 1: c_A = 1 / 2.5 = 0.4, nearer to 0 GPUs than to 1: A is granted nothing (the GPU
     * becomes a leftover). */
    gs_themis_opt a[] = {{0, 1}, {1, 3}}, b[] = {{0, 1}, {1, 2.5}};
    gs_themis_bid bids[] = {{a, 2}, {b, 2}};
    gs_themis_pa_ws ws = {0};
    int star[2], grant[2];
    double pay[2];
    ASSERT_OK(gs_themis_pa(bids, 2, 1, &ws, star, pay, grant, NULL));
    ASSERT_EQ(star[0], 1);
    ASSERT_EQ(star[1], 0);
    ASSERT_NEAR(pay[0], 0.4, 1e-9);
    ASSERT_EQ(grant[0], 0);
    /* B at 1.9: c_A = 1/1.9 = 0.526, nearer to the whole GPU */
    b[1].value = 1.9;
    ASSERT_OK(gs_themis_pa(bids, 2, 1, &ws, star, pay, grant, NULL));
    ASSERT_NEAR(pay[0], 1 / 1.9, 1e-9);
    ASSERT_EQ(grant[0], 1);
    /* an 8-GPU option cut to 5 GPUs is granted the 4-GPU option (nearest usable below) */
    gs_themis_opt g[] = {{0, 1}, {4, 2}, {8, 4}}, h[] = {{0, 1}, {4, 1.6}};
    gs_themis_bid b2[] = {{g, 3}, {h, 2}};
    /* R = 8: G* = g8 (4 x 1 = 4 > g4 h4 = 3.2); without g: h4 = 1.6, c_g = 1/1.6 = 0.625 -> 5 */
    ASSERT_OK(gs_themis_pa(b2, 2, 8, &ws, star, pay, grant, NULL));
    ASSERT_EQ(star[0], 2);
    ASSERT_NEAR(pay[0], 0.625, 1e-9);
    ASSERT_EQ(grant[0], 1);
    /* malformed bids */
    gs_themis_opt bad[] = {{1, 1}};
    gs_themis_bid bb[] = {{bad, 1}};
    ASSERT_EQ(gs_themis_pa(bb, 1, 1, &ws, star, pay, grant, NULL), GS_EINVAL);
    gs_themis_opt neg[] = {{0, 1}, {1, -2}};
    gs_themis_bid bn[] = {{neg, 2}};
    ASSERT_EQ(gs_themis_pa(bn, 1, 1, &ws, star, pay, grant, NULL), GS_EINVAL);
    gs_themis_pa_release(&ws);
}

/* Brute force over every choice of options: the DP's optimum and payments match. */
static void t_pa_against_brute_force(void)
{
    uint64_t rs = 88172645463325252u;
    gs_themis_pa_ws ws = {0};
    for (int round = 0; round < 300; round++) {
        int n = 1 + (int)(rs % 4), R;
        rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
        R = (int)(rs % 9);
        gs_themis_opt o[4][4];
        gs_themis_bid b[4];
        for (int i = 0; i < n; i++) {
            rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
            int no = 1 + (int)(rs % 4);
            o[i][0] = (gs_themis_opt){0, 0.2 + (double)(rs % 97) / 50};
            for (int k = 1; k < no; k++) {
                rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
                o[i][k] = (gs_themis_opt){1 + (int)(rs % 5), 0.2 + (double)(rs % 89) / 20};
            }
            b[i] = (gs_themis_bid){o[i], no};
        }
        int star[4], grant[4];
        double pay[4], w;
        ASSERT_OK(gs_themis_pa(b, n, R, &ws, star, pay, grant, &w));
        /* best product overall and without each app */
        double best = -INFINITY, without[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        int ch[4] = {0};
        for (;;) {
            int used = 0;
            double lw = 0;
            for (int i = 0; i < n; i++)
                used += b[i].opt[ch[i]].gpus, lw += log(b[i].opt[ch[i]].value);
            if (used <= R) {
                if (lw > best) best = lw;
                for (int i = 0; i < n; i++) {
                    double x = lw - log(b[i].opt[ch[i]].value);
                    if (x > without[i]) without[i] = x;
                }
            }
            int i = 0;
            while (i < n && ++ch[i] == b[i].nopt) ch[i++] = 0;
            if (i == n) break;
        }
        ASSERT_NEAR(w, best, 1e-9);
        int used = 0;
        double lw = 0;
        for (int i = 0; i < n; i++)
            used += b[i].opt[star[i]].gpus, lw += log(b[i].opt[star[i]].value);
        ASSERT_LE(used, R);
        ASSERT_NEAR(lw, best, 1e-9);
        for (int i = 0; i < n; i++) {
            double c = exp(best - log(b[i].opt[star[i]].value) - without[i]);
            ASSERT_NEAR(pay[i], c > 1 ? 1 : c, 1e-9);
            ASSERT(b[i].opt[grant[i]].gpus <= b[i].opt[star[i]].gpus);
        }
    }
    gs_themis_pa_release(&ws);
}

/* ---- the policy ------------------------------------------------------------------------------ */

typedef struct world {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
} world;

static const gs_lp_solver *use_lp; /* the solver the next mk_on passes (NULL: none) */

static int mk_on(world *w, gs_cluster *c, const char *const *sets, gs_place_mode mode)
{
    gs_params_init(&w->p);
    gs_params_set(&w->p, "slowdown", "off");
    gs_params_set(&w->p, "preempt_cost", "0");
    for (; sets && *sets; sets++)
        if (gs_params_set_kv(&w->p, *sets)) return -1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    w->c = c;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.placement = mode;
    o.lp = use_lp;
    int rc = gs_engine_create(w->c, "themis", &w->p, &o, &w->e, &d);
    if (rc) {
        fprintf(stderr, "  %s\n", d.msg);
        return rc;
    }
    return gs_params_unused(&w->p) ? -2 : 0;
}

static int mk(world *w, const char *spec, const char *const *sets)
{
    memset(w, 0, sizeof *w);
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = NULL;
    if (gs_cluster_parse_shorthand(spec, &c, &d)) return -1;
    return mk_on(w, c, sets, GS_PLACE_CONSOLIDATE);
}

static void done(world *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
    gs_params_release(&w->p);
}

static const gs_job *job(world *w, int64_t id, double t, int gpus, double dur, const char *user)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(t);
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(dur);
    s.user = user;
    const gs_job *j = NULL;
    gs_engine_add_job(w->e, &s, &j, NULL);
    return j;
}

static void t_params(void)
{
    const char *bad[][2] = {{"f=1.5", NULL}, {"lease=0", NULL}, {"app=team", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        world w;
        ASSERT(mk(&w, "4", bad[i]) != 0);
        done(&w);
    }
    world w;
    const char *ok[] = {"f=0", "lease=90s", "app=user", NULL};
    ASSERT_OK(mk(&w, "4", ok));
    char buf[64];
    ASSERT_OK(gs_engine_inspect(w.e, "auctions", buf, sizeof buf));
    ASSERT_STR(buf, "0");
    done(&w);
}

/* A lease is never cut short, and a lost one ends exactly at its end. */
static void t_lease_respected(void)
{
    world w;
    const char *sets[] = {"lease=600s", NULL};
    ASSERT_OK(mk(&w, "1", sets));
    const gs_job *a = job(&w, 1, 0, 1, 5000, NULL), *b = job(&w, 2, 10, 1, 100, NULL);
    /* b arrives at 10 s: worse off than a at once, yet it waits for a's lease */
    for (int k = 0; k < 2; k++) ASSERT(gs_engine_step(w.e) == 1);
    ASSERT_EQ(gs_engine_now(w.e), 10 * GS_SEC);
    ASSERT_EQ(b->state, GS_JOB_PENDING);
    char buf[64];
    ASSERT_OK(gs_engine_inspect(w.e, "lease.1", buf, sizeof buf));
    ASSERT_STR(buf, "600.000000");
    ASSERT_OK(gs_engine_inspect(w.e, "lease.2", buf, sizeof buf));
    ASSERT_STR(buf, "none");
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(b->first_start, 600 * GS_SEC);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT_EQ(b->end, 700 * GS_SEC);
    ASSERT_EQ(a->end, 5100 * GS_SEC); /* back at 700 s, nothing lost (preempt_cost=0) */
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

/* Alone, a job's lease is renewed at its end: no preemption. */
static void t_lease_renewed(void)
{
    world w;
    const char *sets[] = {"lease=60s", NULL};
    ASSERT_OK(mk(&w, "2", sets));
    const gs_job *a = job(&w, 1, 0, 2, 1000, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->preemptions, 0);
    ASSERT_EQ(a->end, 1000 * GS_SEC);
    char buf[64];
    ASSERT_OK(gs_engine_inspect(w.e, "auctions", buf, sizeof buf));
    ASSERT(atoi(buf) >= 16); /* one auction at arrival and at every minute's lease end */
    done(&w);
}

/*
 * Lease ends while nobody waits renew without a timer of their own (lazy leases): what the run
 * shows is still that of a timer per lease - the events, one auction per lease end, the lease
 * end inspected mid-run - and a job arriving exactly at a lease end bids against it then.
 */
static void t_lazy_leases_exact(void)
{
    world w;
    const char *sets[] = {"lease=60s", NULL};
    ASSERT_OK(mk(&w, "2", sets));
    const gs_job *a = job(&w, 1, 0, 2, 1000, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->end, 1000 * GS_SEC);
    /* arrival, finish, and 17 lease timers: set at 0 s and renewed at 60 s ... 960 s */
    ASSERT_EQ(gs_engine_events(w.e), 19);
    char buf[64];
    ASSERT_OK(gs_engine_inspect(w.e, "auctions", buf, sizeof buf));
    ASSERT_STR(buf, "17"); /* at 0 s and at each of the 16 lease ends */
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);

    /* two GPUs: a runs (renewed at 600 s), c comes and goes on the other GPU (1100 s - 1150 s),
     * gang b arrives exactly at a's lease end at 1200 s and bids against it then */
    const char *sets2[] = {"lease=600s", NULL};
    ASSERT_OK(mk(&w, "2", sets2));
    a = job(&w, 1, 0, 1, 5000, NULL);
    const gs_job *c = job(&w, 3, 1100, 1, 50, NULL);
    const gs_job *b = job(&w, 2, 1200, 2, 100, NULL);
    while (gs_engine_now(w.e) < 1100 * GS_SEC) ASSERT(gs_engine_step(w.e) == 1);
    ASSERT_EQ(c->state, GS_JOB_RUNNING);
    ASSERT_OK(gs_engine_inspect(w.e, "lease.1", buf, sizeof buf));
    ASSERT_STR(buf, "1200.000000");
    ASSERT_OK(gs_engine_inspect(w.e, "auctions", buf, sizeof buf));
    ASSERT_STR(buf, "3"); /* a's arrival, its lease end at 600 s, c's arrival */
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(c->end, 1150 * GS_SEC);
    ASSERT_EQ(b->first_start, 1200 * GS_SEC);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT_EQ(b->end, 1300 * GS_SEC);
    ASSERT_EQ(a->end, 5100 * GS_SEC);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

/* After every instant no waiting job fits the free GPUs (count placement: room by count). */
static void t_work_conserving(void)
{
    for (int fi = 0; fi < 3; fi++) {
        world w;
        memset(&w, 0, sizeof w);
        const char *f[] = {"f=0", "f=0.8", "f=1"};
        const char *sets[] = {f[fi], "lease=120s", NULL};
        gs_cluster *c = NULL;
        ASSERT_OK(gs_cluster_parse_shorthand("2x8", &c, NULL));
        ASSERT_OK(mk_on(&w, c, sets, GS_PLACE_COUNT));
        uint64_t rs = 0x9e3779b97f4a7c15u;
        for (int i = 0; i < 60; i++) {
            rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
            int g = 1 << (rs % 4);
            job(&w, i + 1, (double)(i * 37 % 700), g, 30 + (double)(rs % 1500), NULL);
        }
        int rc;
        while ((rc = gs_engine_step(w.e)) == 1) {
            int free = gs_cluster_free(w.c);
            for (size_t s = 0; s < gs_engine_njobs(w.e); s++) {
                const gs_job *j = gs_engine_job(w.e, s);
                if (j->arrived && j->state == GS_JOB_PENDING && j->gpus <= free)
                    T_FAIL("f %s: job %lld (%d GPUs) waits at %.0f s with %d GPUs free", f[fi],
                           (long long)j->id, j->gpus, gs_time_to_sec(gs_engine_now(w.e)), free);
            }
            ASSERT_OK(gs_engine_check(w.e, NULL));
        }
        ASSERT_OK(rc);
        for (size_t s = 0; s < gs_engine_njobs(w.e); s++)
            ASSERT_EQ(gs_engine_job(w.e, s)->state, GS_JOB_DONE);
        done(&w);
    }
}

/*
 * One GPU freed at 599 s, two bidders: L (waiting since 1 s, 100 s of work) and S (arrived at
 * 598 s, 60 s).  rho without the GPU (lease 600 s, N = 2, G = 1):
 *   L: (598 + 600 + 100) / 200 = 6.49, worst;   S: (1 + 600 + 60) / 120 = 5.51.
 * Nash welfare: the GPU to S gives (120/61) x (200/1298) = 0.303, to L (120/661) x (200/698) =
 * 0.052: S wins, and pays c_S = rho_L(1) / rho_L(0) = 698/1298 = 0.54 (kept: nearer to 1).
 * f = 0 (everyone bids): S first.  f -> 1 (only the worst bids): L first.
 */
static void t_fairness_knob(void)
{
    for (int fi = 0; fi < 2; fi++) {
        world w;
        const char *sets[] = {fi ? "f=0.99" : "f=0", "lease=600s", NULL};
        ASSERT_OK(mk(&w, "1", sets));
        job(&w, 1, 0, 1, 599, NULL);
        const gs_job *l = job(&w, 2, 1, 1, 100, NULL), *s = job(&w, 3, 598, 1, 60, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        if (fi == 0) {
            ASSERT_EQ(s->first_start, 599 * GS_SEC);
            ASSERT_EQ(l->first_start, 659 * GS_SEC);
        } else {
            ASSERT_EQ(l->first_start, 599 * GS_SEC);
            ASSERT_EQ(s->first_start, 699 * GS_SEC);
        }
        done(&w);
    }
}

#define FNV 1099511628211ULL

static void observe(void *ud, const gs_record *r)
{
    uint64_t *h = ud;
    int64_t v[4] = {r->t, r->type, r->job ? r->job->id : -1, r->node};
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++) *h = (*h ^ b[i]) * FNV;
}

static uint64_t digest_run(const char *spec, const char *app, const char *users[], int nusers)
{
    world w;
    const char *sets[] = {app, "lease=300s", NULL};
    if (mk(&w, spec, sets)) return 0;
    uint64_t h = 1469598103934665603ULL;
    gs_engine_set_observer(w.e, observe, &h);
    uint64_t rs = 88172645463325252u;
    for (int i = 0; i < 120; i++) {
        rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
        job(&w, i + 1, (double)(i * 53 % 3000), 1 << (rs % 3), 20 + (double)(rs % 4000),
            users[rs % (uint64_t)nusers]);
    }
    int rc = gs_engine_run(w.e);
    int ok = !rc && !gs_engine_check(w.e, NULL);
    for (size_t s = 0; s < gs_engine_njobs(w.e); s++)
        ok &= gs_engine_job(w.e, s)->state == GS_JOB_DONE;
    done(&w);
    return ok ? h : 0;
}

static void t_deterministic(void)
{
    const char *users[] = {"ann", "bob", "cyd"};
    for (int a = 0; a < 2; a++) {
        const char *app = a ? "app=user" : "app=job";
        uint64_t h1 = digest_run("2x2x4", app, users, 3), h2 = digest_run("2x2x4", app, users, 3);
        ASSERT(h1 != 0);
        ASSERT(h1 == h2);
    }
    /* app=user changes decisions (users are apps) */
    ASSERT(digest_run("2x2x4", "app=job", users, 3) != digest_run("2x2x4", "app=user", users, 3));
}

/* app=user: a user with many jobs does not starve a user with one. */
static void t_app_user(void)
{
    world w;
    const char *sets[] = {"app=user", "lease=300s", NULL};
    ASSERT_OK(mk(&w, "2", sets));
    for (int i = 0; i < 6; i++) job(&w, i + 1, 0, 1, 3000, "many");
    const gs_job *one = job(&w, 7, 10, 1, 600, "one");
    ASSERT_OK(gs_engine_run(w.e));
    /* at the first lease end its app is far worse off than 'many' (which holds both GPUs) */
    ASSERT_EQ(one->first_start, 300 * GS_SEC);
    ASSERT_EQ(one->end, 900 * GS_SEC);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

/* Two GPU types (one node of each): jobs naming a type run there, the others anywhere; both
 * modes (mode=lp where GLPK is built in). */
static void hetero_run(const char *mode)
{
    gs_cluster *c = NULL;
    ASSERT_OK(gs_cluster_create(&c));
    int k80 = gs_cluster_gpu_type(c, "K80"), v100 = gs_cluster_gpu_type(c, "V100");
    const char *names[] = {"n0", "n1"};
    int types[] = {k80, v100};
    for (int n = 0; n < 2; n++) {
        int cell = gs_cluster_add_cell(c, 0, GS_CELL_NODE, names[n], -1);
        ASSERT(cell > 0);
        for (int g = 0; g < 4; g++) ASSERT(gs_cluster_add_gpu(c, cell, g, types[n]) >= 0);
    }
    ASSERT_OK(gs_cluster_finish(c, NULL));
    world w;
    memset(&w, 0, sizeof w);
    const char *sets[] = {"lease=200s", mode, NULL};
    use_lp = gs_lp_glpk();
    int made = mk_on(&w, c, sets, GS_PLACE_CONSOLIDATE);
    use_lp = NULL;
    ASSERT_OK(made);
    uint64_t rs = 0x243f6a8885a308d3u;
    for (int i = 0; i < 40; i++) {
        rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i + 1;
        s.submit = gs_time_from_sec(i * 20);
        s.ntasks = 1 << (rs % 3);
        s.duration = gs_time_from_sec(50 + (double)(rs % 900));
        s.model = i % 2 ? "resnet50" : "lm-bs20";
        s.gpu_type = i % 5 == 0 ? "V100" : i % 5 == 1 ? "K80" : NULL;
        ASSERT_OK(gs_engine_add_job(w.e, &s, NULL, NULL));
    }
    int rc;
    while ((rc = gs_engine_step(w.e)) == 1) {
        for (size_t s = 0; s < gs_engine_njobs(w.e); s++) {
            const gs_job *j = gs_engine_job(w.e, s);
            if (j->state != GS_JOB_RUNNING || j->gpu_type < 0) continue;
            for (int k = 0; k < j->nalloc; k++)
                ASSERT_EQ(gs_cluster_gpu(w.c, j->alloc[k])->type, j->gpu_type);
        }
        ASSERT_OK(gs_engine_check(w.e, NULL));
    }
    ASSERT_OK(rc);
    int preempted = 0;
    for (size_t s = 0; s < gs_engine_njobs(w.e); s++) {
        ASSERT_EQ(gs_engine_job(w.e, s)->state, GS_JOB_DONE);
        preempted += gs_engine_job(w.e, s)->preemptions;
    }
    ASSERT(preempted > 0); /* contended: leases were lost */
    done(&w);
}

/* Heterogeneity-aware: with a K80 node listed first and a V100 node, a resnet50 job (about 7x
 * faster on V100 with the built-in profiles) takes V100s; when they are taken, the next one
 * takes K80s rather than wait (work conservation); at its lease end (601 s) the V100s are free
 * again and it moves there (one restart) rather than renew on K80s. */
static void t_fastest_type(void)
{
    gs_cluster *c = NULL;
    ASSERT_OK(gs_cluster_create(&c));
    int k80 = gs_cluster_gpu_type(c, "K80"), v100 = gs_cluster_gpu_type(c, "V100");
    int types[] = {k80, v100};
    const char *names[] = {"k", "v"};
    for (int n = 0; n < 2; n++) {
        int cell = gs_cluster_add_cell(c, 0, GS_CELL_NODE, names[n], -1);
        ASSERT(cell > 0);
        for (int g = 0; g < 2; g++) ASSERT(gs_cluster_add_gpu(c, cell, g, types[n]) >= 0);
    }
    ASSERT_OK(gs_cluster_finish(c, NULL));
    world w;
    memset(&w, 0, sizeof w);
    ASSERT_OK(mk_on(&w, c, NULL, GS_PLACE_CONSOLIDATE));
    const gs_job *j[2];
    for (int i = 0; i < 2; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i + 1;
        s.submit = gs_time_from_sec(i);
        s.ntasks = 2;
        s.duration = gs_time_from_sec(600);
        s.model = "resnet50";
        ASSERT_OK(gs_engine_add_job(w.e, &s, &j[i], NULL));
    }
    ASSERT(gs_engine_step(w.e) == 1);
    ASSERT_EQ(j[0]->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(w.c, j[0]->alloc[0])->type, v100);
    ASSERT(gs_engine_step(w.e) == 1);
    ASSERT_EQ(j[1]->state, GS_JOB_RUNNING);
    ASSERT_EQ(gs_cluster_gpu(w.c, j[1]->alloc[0])->type, k80);
    double k80_rate = gs_engine_job_rate(w.e, j[1], k80, 2);
    ASSERT(k80_rate > 0 && k80_rate < 0.5);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(j[0]->end, 600 * GS_SEC);
    ASSERT_EQ(j[1]->preemptions, 1);
    ASSERT_EQ(gs_cluster_gpu(w.c, j[1]->last_alloc[0])->type, v100);
    /* 601 s on K80s did 601 x k80_rate of its 600 s of work, the rest on V100s from 601 s */
    ASSERT_NEAR(gs_time_to_sec(j[1]->end), 601 + 600 - 601 * k80_rate, 1.0);
    done(&w);
}

static void t_heterogeneous(void)
{
    hetero_run("mode=auction");
    if (t_failed_now) return;
    if (gs_lp_glpk()) hetero_run("mode=lp");
}

/*
 * mode=lp: Gavel's finish-time-fairness LP decides.  The case of t_fairness_knob at 599 s
 * (thr_iso = 1/2, no isolated time accumulated): rho_L(x) = (598 + 100/x) / 200, rho_S(y) =
 * (1 + 60/y) / 120, x + y <= 1: the min-max has x ~ 0.85 (rho ~ 3.6; at x = 1/2 rho_L would be
 * 3.99): L gets the larger share and starts first, whatever f.  Then a lease lost to the LP:
 * A (2000 s) alone from 0, B (100 s) at 10 s: at A's lease end (600 s) the LP gives B ~ 0.88.
 * Without a solver mode=lp is refused, naming GLPK.
 */
static void t_mode_lp(void)
{
    world w;
    const char *sets[] = {"mode=lp", "f=0", "lease=600s", NULL};
    use_lp = NULL;
    memset(&w, 0, sizeof w);
    gs_cluster *c0 = NULL;
    ASSERT_OK(gs_cluster_parse_shorthand("1", &c0, NULL));
    gs_params_init(&w.p);
    gs_params_set(&w.p, "mode", "lp");
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gs_engine_create(c0, "themis", &w.p, NULL, &w.e, &d), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "GLPK");
    gs_params_release(&w.p);
    gs_cluster_destroy(c0);
    if (!gs_lp_glpk()) {
        printf("  (built without GLPK: mode=lp runs not checked)\n");
        return;
    }
    use_lp = gs_lp_glpk();
    ASSERT_OK(mk(&w, "1", sets));
    job(&w, 1, 0, 1, 599, NULL);
    const gs_job *l = job(&w, 2, 1, 1, 100, NULL), *s = job(&w, 3, 598, 1, 60, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(l->first_start, 599 * GS_SEC);
    ASSERT_EQ(s->first_start, 699 * GS_SEC);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
    ASSERT_OK(mk(&w, "1", sets));
    const gs_job *a = job(&w, 1, 0, 1, 2000, NULL), *b = job(&w, 2, 10, 1, 100, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(b->first_start, 600 * GS_SEC);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT_EQ(a->end, 2100 * GS_SEC);
    done(&w);
    use_lp = NULL;
}

/*
 * Gang reservation: 2 nodes of 4 GPUs, eight 1-GPU jobs of 20000 s started 30 s apart (leases
 * of 300 s ending 30 s apart), a 4-GPU gang of 1000 s at 250 s.  Every lease end frees one GPU:
 * without reservation the gang never finds a free node before the small jobs end; with it,
 * once the gang is the worst off, the node whose leases end first is held and it starts
 * within a lease.
 */
static void t_gang_reservation(void)
{
    gs_time start[2];
    for (int r = 0; r < 2; r++) {
        world w;
        const char *sets[] = {"lease=300s", r ? "reserve=on" : "reserve=off", NULL};
        ASSERT_OK(mk(&w, "2x4", sets));
        for (int i = 0; i < 8; i++) job(&w, i + 1, i * 30, 1, 20000, NULL);
        const gs_job *g = job(&w, 9, 250, 4, 1000, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        start[r] = g->first_start;
        ASSERT_OK(gs_engine_check(w.e, NULL));
        done(&w);
    }
    printf("  gang starts at %.0f s without reservation, %.0f s with\n", gs_time_to_sec(start[0]),
           gs_time_to_sec(start[1]));
    ASSERT(start[0] >= 20000 * GS_SEC);
    ASSERT(start[1] < 5000 * GS_SEC);
}

/* A job of no work bids with rho 0 the instant it arrives: the auction still runs (its value
 * 1/rho was infinite and failed the run with GS_EINVAL). */
static void t_zero_work(void)
{
    world w;
    ASSERT_OK(mk(&w, "2", NULL));
    const gs_job *a = job(&w, 1, 0, 1, 1000, NULL), *b = job(&w, 2, 0, 1, 0, NULL),
                 *c = job(&w, 3, 0, 2, 500, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_EQ(c->state, GS_JOB_DONE);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

/*
 * A gang larger than every GPU type (review R7): 64 GPUs on 36 V100 + 36 P100 + 36 K80 runs
 * across types at the slowest one's rate, as the engine defines it (it stayed pending, never
 * started), its 10-minute leases renewed in place while nobody else wants its GPUs; a job
 * larger than the whole cluster is rejected.  Under contention (4 V100 + 4 K80,
 * eight 1-GPU jobs holding leases, an 8-GPU gang at 250 s) the gang reservation holds nodes of
 * any type for it, so it starts within a few leases instead of after the small jobs end.
 */
static void t_gang_across_types(void)
{
    const char *modes[] = {"mode=auction", "mode=lp"};
    for (int m = 0; m < 2; m++) {
        if (m && !gs_lp_glpk()) break;
        world w;
        const char *sets[] = {modes[m], NULL};
        use_lp = gs_lp_glpk();
        ASSERT_OK(mk(&w, "36:V100,36:P100,36:K80", sets));
        use_lp = NULL;
        const gs_job *big = job(&w, 1, 0, 64, 3600, NULL), *small = job(&w, 2, 0, 1, 100, NULL);
        const gs_job *huge = job(&w, 3, 10, 200, 100, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        ASSERT_EQ(big->state, GS_JOB_DONE);
        ASSERT_EQ(small->state, GS_JOB_DONE);
        ASSERT_EQ(huge->state, GS_JOB_REJECTED);
        ASSERT_EQ(big->first_start, 0);
        ASSERT(big->end > 3600 * GS_SEC); /* no type of its gang is faster than V100 */
        ASSERT_EQ(big->preemptions, 0);   /* its expired leases renewed in place */
        ASSERT_OK(gs_engine_check(w.e, NULL));
        done(&w);
    }
    gs_time start[2];
    for (int r = 0; r < 2; r++) {
        world w;
        const char *sets[] = {"lease=300s", r ? "reserve=on" : "reserve=off", NULL};
        ASSERT_OK(mk(&w, "4:V100,4:K80", sets));
        for (int i = 0; i < 8; i++) job(&w, i + 1, i * 30, 1, 20000, NULL);
        const gs_job *g = job(&w, 9, 250, 8, 100, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        ASSERT_EQ(g->state, GS_JOB_DONE);
        start[r] = g->first_start;
        ASSERT_OK(gs_engine_check(w.e, NULL));
        done(&w);
    }
    printf("  8-GPU gang over 2 types starts at %.0f s without reservation, %.0f s with\n",
           gs_time_to_sec(start[0]), gs_time_to_sec(start[1]));
    ASSERT(start[1] < start[0]);
}

static const test_case tests[] = {
    {"PA: Nash welfare and payments by hand", t_pa_nash_welfare_and_payments},
    {"PA: a payment cuts a gang to a usable option", t_pa_payment_cuts_a_gang},
    {"PA: against brute force", t_pa_against_brute_force},
    {"parameters", t_params},
    {"a lease is never cut short", t_lease_respected},
    {"a lease is renewed when nobody else bids", t_lease_renewed},
    {"lazy leases: the same events, auctions and answers", t_lazy_leases_exact},
    {"work conserving", t_work_conserving},
    {"fairness knob: f=0 vs f->1", t_fairness_knob},
    {"deterministic", t_deterministic},
    {"app=user", t_app_user},
    {"two GPU types", t_heterogeneous},
    {"the fastest type first", t_fastest_type},
    {"mode=lp: Gavel's FTF LP decides", t_mode_lp},
    {"gang reservation against fragmentation", t_gang_reservation},
    {"a job of no work", t_zero_work},
    {"a gang larger than every GPU type runs across types", t_gang_across_types},
};

TEST_MAIN(tests)
