/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_kset.c - the ordered job sets of preemptive passes (src/core/plan.c):
 * the treap against a sorted array under random inserts and removals (many
 * ties), the first-fit search against a linear scan, the running-job sort
 * and relink, and a merged walk against visiting every job in key order.
 */
#include <stdlib.h>

#include "gsched/plan.h"
#include "config.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"
#include "harness.h"

static uint64_t rs = 88172645463325252u;
static uint32_t rnd(uint32_t n)
{
    return test_xorshift(&rs, n);
}

static gs_kkey rkey(int32_t slot)
{
    /* few distinct values: ties on k1 and on (k1, k2) are common */
    return (gs_kkey){(double)rnd(6) - 2.5, (int64_t)rnd(3), slot};
}

#define NS   3   /* sets sharing the pool */
#define NMAX 300 /* slots */

/* brute force: first member of set 'set' after 'after' with gpus <= limit */
static int32_t naive_fit(const int *set_of, const gs_kkey *key, const int32_t *gpus, int set,
                         const gs_kkey *after, long limit)
{
    int32_t best = -1;
    for (int32_t s = 0; s < NMAX; s++) {
        if (set_of[s] != set || gpus[s] > limit) continue;
        if (after && !gs_kkey_before(after, &key[s])) continue;
        if (best < 0 || gs_kkey_before(&key[s], &key[best])) best = s;
    }
    return best;
}

static void t_kset_random(void)
{
    gs_kset ks;
    gs_kset_init(&ks);
    int32_t root[NS] = {-1, -1, -1};
    int set_of[NMAX];
    gs_kkey key[NMAX];
    int32_t gpus[NMAX];
    for (int i = 0; i < NMAX; i++) set_of[i] = -1;
    for (int op = 0; op < 20000; op++) {
        int32_t s = (int32_t)rnd(NMAX);
        if (set_of[s] < 0) {
            int set = (int)rnd(NS);
            key[s] = rkey(s);
            gpus[s] = 1 << rnd(5);
            ASSERT_OK(gs_kset_insert(&ks, &root[set], key[s], gpus[s]));
            set_of[s] = set;
        } else {
            gs_kset_remove(&ks, &root[set_of[s]], s);
            set_of[s] = -1;
        }
        ASSERT_EQ(gs_kset_member(&ks, s), set_of[s] >= 0);
        if (op % 7) continue;
        for (int q = 0; q < 20; q++) {
            int set = (int)rnd(NS);
            long limit = (long)rnd(20);
            gs_kkey a = rkey((int32_t)rnd(NMAX + 1) - 1);
            const gs_kkey *after = rnd(4) ? &a : NULL;
            ASSERT_EQ(gs_kset_next_fit(&ks, root[set], after, limit),
                      naive_fit(set_of, key, gpus, set, after, limit));
        }
        /* a full walk lists each set in order */
        for (int set = 0; set < NS; set++) {
            int n = 0, want = 0;
            for (int i = 0; i < NMAX; i++) want += set_of[i] == set;
            gs_kkey cur;
            for (int32_t w = gs_kset_next_fit(&ks, root[set], NULL, 1L << 30); w >= 0;
                 w = gs_kset_next_fit(&ks, root[set], &cur, 1L << 30)) {
                ASSERT_EQ(set_of[w], set);
                if (n) ASSERT(gs_kkey_before(&cur, &ks.key[w]));
                cur = ks.key[w];
                n++;
            }
            ASSERT_EQ(n, want);
        }
    }
    /* double insert is refused; removing a non-member is harmless */
    int32_t r = -1;
    gs_kset k2;
    gs_kset_init(&k2);
    ASSERT_OK(gs_kset_insert(&k2, &r, (gs_kkey){1, 0, 5}, 2));
    ASSERT_EQ(gs_kset_insert(&k2, &r, (gs_kkey){1, 0, 5}, 2), GS_EEXIST);
    gs_kset_remove(&k2, &r, 7);
    gs_kset_remove(&k2, &r, 100000);
    ASSERT_EQ(gs_kset_next_fit(&k2, r, NULL, 1), -1);
    ASSERT_EQ(gs_kset_next_fit(&k2, r, NULL, 2), 5);
    gs_kset_release(&k2);
    gs_kset_release(&ks);
}

static int kent_cmp(const void *a, const void *b)
{
    const gs_kent *x = a, *y = b;
    return gs_kkey_before(&x->k, &y->k) ? -1 : gs_kkey_before(&y->k, &x->k) ? 1 : 0;
}

static void t_kent_sort_relink(void)
{
    enum { N = 200 };
    gs_job jobs[N];
    gs_kent v[N], w[N];
    memset(jobs, 0, sizeof jobs);
    for (int round = 0; round < 200; round++) {
        size_t n = rnd(N) + 1;
        gs_jobq q;
        gs_jobq_init(&q);
        for (size_t i = 0; i < n; i++) {
            jobs[i].slot = (int32_t)i;
            v[i] = (gs_kent){rkey((int32_t)i), &jobs[i]};
            if (rnd(5)) ASSERT_OK(gs_jobq_push_back(&q, (int32_t)i)); /* others: not listed */
        }
        /* shuffle the listed order too */
        for (int k = 0; k < 50; k++) {
            int32_t s = (int32_t)rnd((uint32_t)n);
            if (gs_jobq_remove(&q, s)) gs_jobq_push_back(&q, s);
        }
        memcpy(w, v, n * sizeof *v);
        qsort(w, n, sizeof *w, kent_cmp);
        int changed = memcmp(v, w, n * sizeof *v) != 0;
        ASSERT_EQ(gs_kent_sort(v, n), changed);
        ASSERT(!memcmp(v, w, n * sizeof *v));
        ASSERT_EQ(gs_kent_sort(v, n), 0);
        size_t listed = gs_jobq_len(&q);
        gs_kent_relink(&q, v, n);
        ASSERT_EQ(gs_jobq_len(&q), listed);
        int32_t s = gs_jobq_first(&q);
        for (size_t i = 0; i < n; i++) {
            if (!gs_jobq_contains(&q, v[i].j->slot)) continue;
            ASSERT_EQ(s, v[i].j->slot);
            s = gs_jobq_next(&q, s);
        }
        ASSERT_EQ(s, -1);
        gs_jobq_release(&q);
    }
}

/* The merged walk leaves the plan exactly as visiting every job in key order. */
static void t_merged_walk(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("2x4x8", &c, &d));
    gs_engine *e = NULL;
    ASSERT_OK(gs_engine_create(c, "fifo", NULL, NULL, &e, &d));
    enum { N = 120 };
    const gs_job *jobs[N];
    for (int i = 0; i < N; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.duration = 1000000;
        ASSERT_OK(gs_engine_add_job(e, &s, &jobs[i], &d));
    }
    gs_plan a, b;
    gs_plan_init(&a);
    gs_plan_init(&b);
    gs_kset ks;
    gs_kset_init(&ks);
    gs_kent run[N], all[N];
    for (int round = 0; round < 500; round++) {
        int32_t root = -1;
        size_t nr = 0, na = 0;
        for (int i = 0; i < N; i++) {
            gs_job *j = gs_policy_job(e, (size_t)jobs[i]->slot); /* the test is the policy */
            j->gpus = 1 << rnd(4);
            j->protect_until = rnd(4) ? 0 : 100;
            gs_kkey k = rkey(j->slot);
            uint32_t what = rnd(10);
            if (what < 4) {
                j->state = GS_JOB_RUNNING;
                run[nr++] = (gs_kent){k, j};
            } else if (what < 9) {
                j->state = GS_JOB_PENDING;
                ASSERT_OK(gs_kset_insert(&ks, &root, k, j->gpus));
            } else {
                j->state = GS_JOB_PREEMPTED; /* stopping: visiting it changes nothing */
                run[nr++] = (gs_kent){k, j};
            }
            all[na++] = (gs_kent){k, j};
        }
        gs_kent_sort(run, nr);
        gs_kent_sort(all, na);
        long free = (long)rnd(300);
        a.nstart = a.nvict = b.nstart = b.nvict = 0;
        a.admitted = b.admitted = 0;
        a.free = b.free = free;
        a.now = b.now = 50;
        gs_plan_visit_merged(&a, e, run, nr, &ks, root);
        for (size_t i = 0; i < na; i++) gs_plan_visit(&b, all[i].j);
        ASSERT_EQ(a.free, b.free);
        ASSERT_EQ(a.admitted, b.admitted);
        ASSERT_EQ(a.nstart, b.nstart);
        ASSERT_EQ(a.nvict, b.nvict);
        for (size_t i = 0; i < a.nstart; i++) ASSERT_EQ(a.start[i]->slot, b.start[i]->slot);
        for (size_t i = 0; i < a.nvict; i++) ASSERT_EQ(a.vict[i]->slot, b.vict[i]->slot);
        for (int i = 0; i < N; i++) gs_kset_remove(&ks, &root, jobs[i]->slot);
        ASSERT_EQ(root, -1);
    }
    for (int i = 0; i < N; i++) { /* leave the jobs as the engine expects them */
        gs_policy_job(e, (size_t)jobs[i]->slot)->state = GS_JOB_PENDING;
        gs_policy_job(e, (size_t)jobs[i]->slot)->gpus = 1;
    }
    gs_kset_release(&ks);
    gs_plan_release(&a);
    gs_plan_release(&b);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        {"kset_random", t_kset_random},
        {"kent_sort_relink", t_kent_sort_relink},
        {"merged_walk", t_merged_walk},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
