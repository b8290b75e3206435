/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_forget.c - gs_engine_forget (issue 16, accounting): under every compiled-in policy that
 * runs LIVE, a stream of 2,500 jobs scheduled by two engines, one forgetting each job as soon
 * as it is final and one never forgetting, gives the same records in the same order (the
 * policies see nothing of it), both engines pass gs_engine_check throughout, a forgotten id
 * is no longer found, and whole blocks of forgotten jobs are freed (the ASan build checks no
 * freed job is touched).  Forgetting refuses active jobs (GS_ESTATE) and a second forget
 * (GS_ENOENT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

#define T0    (1700000000LL * GS_SEC)
#define STEPS 2500

static const char *hived_yaml = "physicalCluster:\n  cellTypes:\n"
                                "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                                "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n"
                                "virtualClusters:\n  v:\n    virtualCells:\n"
                                "    - {cellType: N, cellNumber: 1}\n";

typedef struct log {
    char *buf;
    size_t n, cap;
} log_t;

static void observe(void *ud, const gs_record *r)
{
    log_t *l = ud;
    char line[128];
    int k = snprintf(line, sizeof line, "%lld %s %lld\n", (long long)(r->t - T0),
                     gs_rec_type_name(r->type), r->job ? (long long)r->job->id : -1LL);
    if (l->n + (size_t)k + 1 > l->cap) {
        l->cap = (l->cap + (size_t)k + 1) * 2;
        l->buf = realloc(l->buf, l->cap);
        if (!l->buf) abort();
    }
    memcpy(l->buf + l->n, line, (size_t)k + 1);
    l->n += (size_t)k;
}

static gs_engine *mk(const gs_policy_ops *ops, gs_cluster **cp, log_t *l)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    *cp = NULL;
    int rc = (ops->flags & GS_POLICY_HIVED_ONLY)
                 ? gs_cluster_parse_hived("h.yaml", hived_yaml, strlen(hived_yaml), cp, &d)
                 : gs_cluster_parse_shorthand("1x2", cp, &d);
    if (rc) return NULL;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.mode = GS_ENGINE_LIVE;
    gs_params p;
    gs_params_init(&p);
    if (!strcmp(ops->name, "quota")) gs_params_set(&p, "quotas", "default:2");
    gs_engine *e = NULL;
    rc = gs_engine_create_ops(*cp, ops, &p, &o, &e, &d);
    gs_params_release(&p);
    if (rc) {
        gs_cluster_destroy(*cp);
        return NULL;
    }
    gs_engine_set_observer(e, observe, l);
    return e;
}

/* One step of the workload at t on engine e: a new job; jobs that started ended 2 s after (also
 * when preempted or suspended), pending ones cancelled after 60 s.  ids: the jobs not yet final
 * (compacted). */
static int step(gs_engine *e, const gs_policy_ops *ops, gs_time t, uint64_t *rng, int64_t *ids,
                size_t *nids)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.ntasks = 1;
    s.gpus_per_task = 1 + (int)test_xorshift(rng, 2);
    s.duration = 3600 * GS_SEC;
    s.user = "u";
    if (ops->flags & GS_POLICY_HIVED_ONLY) s.vc = "v";
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_engine_submit(e, &s, t, &j, &d);
    if (rc) return rc;
    ids[(*nids)++] = j->id;
    for (size_t i = 0; i < *nids; i++) {
        const gs_job *x = gs_engine_find_job(e, ids[i]);
        if (!x || gs_job_state_final(x->state)) continue;
        if ((x->state != GS_JOB_PENDING && x->last_start <= t - 2 * GS_SEC) ||
            (x->state == GS_JOB_PENDING && x->submit <= t - 60 * GS_SEC)) {
            rc = gs_engine_cancel(e, x, "done", t);
            if (rc) return rc;
        }
    }
    return gs_engine_advance(e, t);
}

static int g_ran;

static void one_policy(const gs_policy_ops *ops)
{
    gs_cluster *c1, *c2;
    log_t l1 = {0}, l2 = {0};
    gs_engine *e1 = mk(ops, &c1, &l1), *e2 = e1 ? mk(ops, &c2, &l2) : NULL;
    if (!e1 || !e2) {
        fprintf(stderr, "# %s: cannot run on the test cluster\n", ops->name);
        if (e1) gs_engine_destroy(e1), gs_cluster_destroy(c1);
        free(l1.buf);
        return;
    }
    int64_t *a1 = calloc(STEPS, sizeof *a1), *a2 = calloc(STEPS, sizeof *a2);
    ASSERT(a1 && a2);
    size_t n1 = 0, n2 = 0, forgotten = 0;
    uint64_t r1 = 42, r2 = 42;
    gs_time t = T0;
    int64_t first_id = -1;
    for (int i = 0; i < STEPS; i++) {
        t += GS_SEC;
        if (step(e1, ops, t, &r1, a1, &n1)) T_FAIL("%s: step %d (forgetting) failed", ops->name, i);
        if (step(e2, ops, t, &r2, a2, &n2)) T_FAIL("%s: step %d failed", ops->name, i);
        if (first_id < 0) first_id = a1[0];
        /* e1 forgets every job that is final now */
        size_t w = 0;
        for (size_t k = 0; k < n1; k++) {
            const gs_job *x = gs_engine_find_job(e1, a1[k]);
            if (!x)
                T_FAIL("%s: job %lld lost before it was forgotten", ops->name, (long long)a1[k]);
            if (!gs_job_state_final(x->state)) {
                if (k == n1 - 1 && i == 0) ASSERT_EQ(gs_engine_forget(e1, x), GS_ESTATE);
                a1[w++] = a1[k];
                continue;
            }
            ASSERT_OK(gs_engine_forget(e1, x));
            forgotten++;
            if (gs_engine_find_job(e1, a1[k])) T_FAIL("%s: a forgotten id is found", ops->name);
        }
        n1 = w;
        w = 0;
        for (size_t k = 0; k < n2; k++) {
            const gs_job *x = gs_engine_find_job(e2, a2[k]);
            if (!gs_job_state_final(x->state)) a2[w++] = a2[k];
        }
        n2 = w;
        if (i % 250 == 0 || i == STEPS - 1) {
            gs_diag d;
            gs_diag_init(&d, NULL);
            if (gs_engine_check(e1, &d)) T_FAIL("%s: check (forgetting): %s", ops->name, d.msg);
            if (gs_engine_check(e2, &d)) T_FAIL("%s: check: %s", ops->name, d.msg);
        }
    }
    if (l1.n != l2.n || memcmp(l1.buf, l2.buf, l1.n))
        T_FAIL("%s: forgetting changed the records (%zu vs %zu bytes)", ops->name, l1.n, l2.n);
    if (forgotten < 2000)
        T_FAIL("%s: only %zu jobs ended and were forgotten", ops->name, forgotten);
    /* the first block's jobs are all forgotten: the slot reads as a final stand-in, no id */
    const gs_job *z = gs_engine_job(e1, 0);
    ASSERT(z != NULL);
    for (size_t k = 0; k < 1024 && z->id != -1; k++) {
        const gs_job *y = gs_engine_job(e1, k);
        if (!gs_job_state_final(y->state) || k < 3)
            fprintf(stderr, "# %s slot %zu id %lld %s\n", ops->name, k, (long long)y->id,
                    gs_job_state_name(y->state));
    }
    ASSERT(gs_job_state_final(z->state));
    ASSERT_EQ(z->id, -1);
    ASSERT(gs_engine_find_job(e1, first_id) == NULL);
    ASSERT(gs_engine_find_job(e2, first_id) != NULL);
    /* a second forget of a job still in a live block */
    const gs_job *last = gs_engine_job(e1, gs_engine_njobs(e1) - 1);
    if (gs_job_state_final(last->state)) {
        ASSERT_OK(gs_engine_forget(e1, last));
        ASSERT_EQ(gs_engine_forget(e1, last), GS_ENOENT);
    } else {
        ASSERT_EQ(gs_engine_forget(e1, last), GS_ESTATE);
    }
    gs_engine_destroy(e1);
    gs_engine_destroy(e2);
    gs_cluster_destroy(c1);
    gs_cluster_destroy(c2);
    free(l1.buf), free(l2.buf), free(a1), free(a2);
    g_ran++;
}

static void every_policy(void)
{
    for (size_t i = 0; gs_policy_at(i); i++) {
        one_policy(gs_policy_at(i));
        if (t_failed_now) return;
    }
    fprintf(stderr, "# %d policies ran\n", g_ran);
    if (g_ran < 10) T_FAIL("only %d policies ran", g_ran);
}

static const test_case tests[] = {
    {"every_policy", every_policy},
};

TEST_MAIN(tests)
