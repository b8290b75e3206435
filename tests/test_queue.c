/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_queue.c - how pending jobs are shown waiting (src/core/queue.c): each
 * policy's queue, order, queue text, VC guarantees and declared VCs, the
 * engine defaults for a policy that gives none, and the default pending
 * reason.  The texts are the ones the daemon shows (POS, "why pending").
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

static const char HIVED_YAML[] =
    "physicalCluster:\n  cellTypes:\n"
    "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
    "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n"
    "  - {cellType: N, cellAddress: n2}\n"
    "virtualClusters:\n  v:\n    virtualCells:\n"
    "    - {cellType: N, cellNumber: 1}\n"
    "  w:\n    virtualCells:\n"
    "    - {cellType: N, cellNumber: 1}\n";

/* spec: a shorthand cluster, or "hived" for HIVED_YAML. */
static int mk_ops(world *w, const char *spec, const gs_policy_ops *ops, const char *const *sets)
{
    memset(w, 0, sizeof *w);
    gs_params_init(&w->p);
    gs_params_set(&w->p, "slowdown", "off");
    gs_params_set(&w->p, "preempt_cost", "0");
    for (; sets && *sets; sets++)
        if (gs_params_set_kv(&w->p, *sets)) return -1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = strcmp(spec, "hived") == 0
                 ? gs_cluster_parse_hived("h.yaml", HIVED_YAML, strlen(HIVED_YAML), &w->c, &d)
                 : gs_cluster_parse_shorthand(spec, &w->c, &d);
    if (rc) return -1;
    if (!ops) return -1;
    if (gs_engine_create_ops(w->c, ops, &w->p, NULL, &w->e, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        return -1;
    }
    return gs_params_unused(&w->p) ? -2 : 0;
}

static int mk(world *w, const char *spec, const char *policy, const char *const *sets)
{
    return mk_ops(w, spec, gs_policy_find(policy), sets);
}

static void done(world *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
    gs_params_release(&w->p);
}

static const gs_job *job(world *w, int64_t id, int gpus, const char *vc, int prio)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = 0;
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(100);
    s.vc = vc;
    s.priority = prio;
    const gs_job *j = NULL;
    gs_engine_add_job(w->e, &s, &j, NULL);
    return j;
}

static const char *text(world *w, int queue)
{
    static char buf[256];
    int rc = gs_engine_queue_text(w->e, queue, buf, sizeof buf);
    if (rc) {
        fprintf(stderr, "  queue text of %d: %s\n", queue, gs_strerror(rc));
        t_failed_now = 1;
    }
    return buf;
}

static gs_queue_key key(world *w, const gs_job *j)
{
    gs_queue_key k = {-7, -7};
    int rc = gs_engine_queue_key(w->e, j, &k);
    if (rc) {
        fprintf(stderr, "  queue key of job %lld: %s\n", (long long)j->id, gs_strerror(rc));
        t_failed_now = 1;
    }
    return k;
}

/* fifo gives no queue ops: one queue by submission, no guarantee; the default reasons. */
static void t_defaults_and_reasons(void)
{
    world w;
    ASSERT_OK(mk(&w, "8", "fifo", NULL));
    const gs_job *a = job(&w, 1, 6, NULL, 0), *b = job(&w, 2, 4, "x", 0),
                 *c = job(&w, 3, 1, NULL, 0), *d = job(&w, 4, 3, NULL, 0);
    ASSERT_EQ(gs_engine_step(w.e), 1);
    ASSERT_EQ(a->state, GS_JOB_RUNNING);
    /* b is the blocked head (fifo says why); c and d were not looked at */
    ASSERT_STR(gs_engine_pending_reason(w.e, b), "Resources");
    ASSERT(c->reason == NULL && d->reason == NULL);
    ASSERT_STR(gs_engine_pending_reason(w.e, c), "Priority");  /* 1 GPU, 2 free */
    ASSERT_STR(gs_engine_pending_reason(w.e, d), "Resources"); /* 3 GPUs, 2 free */
    ASSERT(gs_engine_pending_reason(w.e, a) == a->reason);     /* not pending: its own */
    gs_queue_key kb = key(&w, b), kc = key(&w, c);
    ASSERT_EQ(kb.queue, GS_QUEUE_GLOBAL);
    ASSERT_EQ(kc.queue, GS_QUEUE_GLOBAL); /* VCs x and default share the queue */
    ASSERT_EQ(kb.key, kc.key);
    ASSERT(gs_queue_key_cmp(&kb, b->id, &kc, c->id) < 0); /* by submission */
    ASSERT(gs_queue_key_cmp(&kc, c->id, &kb, b->id) > 0);
    ASSERT_EQ(gs_queue_key_cmp(&kc, c->id, &kc, c->id), 0);
    ASSERT_STR(text(&w, GS_QUEUE_GLOBAL), "in the queue (by submission)");
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "x"), -1);
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "default"), -1);
    ASSERT(gs_engine_vc_declared(w.e, 0) == NULL);
    ASSERT_EQ(gs_engine_find_vc(w.e, "x"), b->vc);
    ASSERT_EQ(gs_engine_find_vc(w.e, "default"), a->vc);
    ASSERT_EQ(gs_engine_find_vc(w.e, "nope"), -1);
    done(&w);
    /* the other policies without queue ops */
    const char *plain[] = {"fifo-backfill", "gandiva", "gandiva-emul"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        ASSERT_OK(mk(&w, "2x4", plain[i], NULL));
        ASSERT_STR(text(&w, GS_QUEUE_GLOBAL), "in the queue (by submission)");
        const gs_job *j = job(&w, 1, 2, "q", 5);
        ASSERT_EQ(key(&w, j).queue, GS_QUEUE_GLOBAL);
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "q"), -1);
        done(&w);
    }
}

/* las, tiresias-*, srtf, srsf, sjf: one queue by submission; the text says what reorders it. */
static void t_reordering_policies(void)
{
    static const struct {
        const char *policy, *text;
    } want[] = {
        {"las", "in the queue (by submission; las reorders it by attained service)"},
        {"tiresias-las", "in the queue (by submission; tiresias-las reorders it by attained "
                         "service)"},
        {"tiresias-gittins", "in the queue (by submission; tiresias-gittins reorders it by "
                             "attained service (Gittins index))"},
        {"srtf", "in the queue (by submission; srtf reorders it by expected remaining time)"},
        {"srsf", "in the queue (by submission; srsf reorders it by expected remaining service)"},
        {"sjf", "in the queue (by submission; sjf reorders it by expected run time)"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        world w;
        ASSERT_OK(mk(&w, "8", want[i].policy, NULL));
        const gs_job *a = job(&w, 1, 2, "a", 0), *b = job(&w, 2, 2, "b", 9);
        gs_queue_key ka = key(&w, a), kb = key(&w, b);
        ASSERT_EQ(ka.queue, GS_QUEUE_GLOBAL);
        ASSERT_EQ(kb.queue, GS_QUEUE_GLOBAL);
        ASSERT(gs_queue_key_cmp(&ka, a->id, &kb, b->id) < 0);
        ASSERT_STR(text(&w, GS_QUEUE_GLOBAL), want[i].text);
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "a"), -1);
        done(&w);
    }
}

/* yarn-cs and quota: one queue per VC by submission; quotas= are guarantees and declared. */
static void t_yarn_quota(void)
{
    const char *pols[] = {"yarn-cs", "quota"};
    for (int i = 0; i < 2; i++) {
        world w;
        const char *sets[] = {"quotas=a:4,b:2", NULL};
        ASSERT_OK(mk(&w, "8", pols[i], sets));
        const gs_job *a1 = job(&w, 1, 1, "a", 0), *b1 = job(&w, 2, 1, "b", 0),
                     *a2 = job(&w, 3, 1, "a", 50);
        gs_queue_key k1 = key(&w, a1), k2 = key(&w, b1), k3 = key(&w, a2);
        ASSERT_EQ(k1.queue, a1->vc);
        ASSERT_EQ(k2.queue, b1->vc);
        ASSERT(k1.queue != k2.queue);
        ASSERT_EQ(k3.queue, k1.queue);
        ASSERT(gs_queue_key_cmp(&k1, a1->id, &k3, a2->id) < 0); /* priority does not matter */
        ASSERT_STR(text(&w, a1->vc), "in VC a (by submission)");
        ASSERT_STR(text(&w, b1->vc), "in VC b (by submission)");
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "a"), 4);
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "b"), 2);
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "c"), -1);
        ASSERT_STR(gs_engine_vc_declared(w.e, 0), "a");
        ASSERT_STR(gs_engine_vc_declared(w.e, 1), "b");
        ASSERT(gs_engine_vc_declared(w.e, 2) == NULL);
        /* a dry-run job of a VC no job used yet: vc -1, no queue any pending job is in */
        gs_job tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.slot = -1;
        tmp.vc = gs_engine_find_vc(w.e, "c");
        ASSERT_EQ(tmp.vc, -1);
        gs_queue_key kt = key(&w, &tmp);
        ASSERT(kt.queue != k1.queue && kt.queue != k2.queue);
        done(&w);
    }
    /* guarantees from the HiveD config's cells when quotas= does not name the VC */
    world w;
    const char *sets[] = {"quotas=w:1", NULL};
    ASSERT_OK(mk(&w, "hived", "yarn-cs", sets));
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "v"), 2);
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "w"), 1); /* the quota it enforces */
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "z"), -1);
    done(&w);
    ASSERT_OK(mk(&w, "8", "yarn-cs", NULL));
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "default"), -1);
    ASSERT(gs_engine_vc_declared(w.e, 0) == NULL);
    /* no quotas and no cluster VCs: yarn-cs runs one global FIFO whatever the VCs, and the
     * view says so (a job of VC b waits behind the earlier jobs of VC a) */
    const gs_job *ga = job(&w, 1, 1, "a", 0), *gb = job(&w, 2, 1, "b", 0);
    gs_queue_key qa = key(&w, ga), qb = key(&w, gb);
    ASSERT_EQ(qa.queue, GS_QUEUE_GLOBAL);
    ASSERT_EQ(qb.queue, GS_QUEUE_GLOBAL);
    ASSERT(gs_queue_key_cmp(&qa, ga->id, &qb, gb->id) < 0);
    ASSERT_STR(text(&w, qb.queue), "in the queue (by submission)");
    done(&w);
}

/* hived and private: one queue per VC by priority, then submission; cells are guarantees. */
static void t_hived_private(void)
{
    const char *pols[] = {"hived", "private"};
    for (int i = 0; i < 2; i++) {
        world w;
        ASSERT_OK(mk(&w, "hived", pols[i], NULL));
        const gs_job *lo = job(&w, 1, 1, "v", 10), *hi = job(&w, 2, 1, "v", 100),
                     *hi2 = job(&w, 3, 1, "v", 100), *o = job(&w, 4, 1, "w", 100);
        gs_queue_key kl = key(&w, lo), kh = key(&w, hi), kh2 = key(&w, hi2), ko = key(&w, o);
        ASSERT_EQ(kl.queue, lo->vc);
        ASSERT_EQ(ko.queue, o->vc);
        ASSERT(kl.queue != ko.queue);
        ASSERT(gs_queue_key_cmp(&kh, hi->id, &kl, lo->id) < 0);   /* higher priority ahead */
        ASSERT(gs_queue_key_cmp(&kh, hi->id, &kh2, hi2->id) < 0); /* then submission */
        ASSERT_STR(text(&w, lo->vc), "in VC v (by priority, then submission)");
        ASSERT_STR(text(&w, o->vc), "in VC w (by priority, then submission)");
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "v"), 2);
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "w"), 2);
        ASSERT_EQ(gs_engine_vc_guarantee(w.e, "nope"), -1);
        done(&w);
    }
}

/* A policy the registry does not know: the engine asks its ops, and reports their errors. */
typedef struct tq {
    gs_engine *e;
} tq;
static int tq_fail; /* the test policy's queue ops fail */

static int tq_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    (void)p, (void)d;
    tq *t = calloc(1, sizeof *t);
    if (!t) return GS_ENOMEM;
    t->e = e;
    *state = t;
    return 0;
}
static void tq_destroy(void *st)
{
    free(st);
}
static int tq_schedule(void *st)
{
    (void)st;
    return 0;
}
static int tq_key(void *st, const gs_job *j, gs_queue_key *k)
{
    (void)st;
    if (tq_fail) return GS_EINVAL;
    k->queue = j->gpus; /* one queue per size */
    k->key = -j->id;    /* newest first */
    return 0;
}
static int tq_describe(void *st, int queue, char *buf, size_t cap)
{
    (void)st;
    if (tq_fail) return GS_ENOMEM;
    snprintf(buf, cap, "among %d-GPU jobs (newest first)", queue);
    return 0;
}
static int64_t tq_guarantee(void *st, const char *vc)
{
    (void)st;
    return strcmp(vc, "gold") == 0 ? 3 : -1;
}
static const char *tq_declared(void *st, size_t i)
{
    (void)st;
    return i == 0 ? "gold" : NULL;
}
static const gs_policy_ops tq_ops = {
    .name = "test-queue",
    .create = tq_create,
    .destroy = tq_destroy,
    .schedule = tq_schedule,
    .queue_key = tq_key,
    .queue_describe = tq_describe,
    .vc_guarantee = tq_guarantee,
    .vc_declared = tq_declared,
};
static const gs_policy_ops tq_bare = {
    .name = "test-bare",
    .create = tq_create,
    .destroy = tq_destroy,
    .schedule = tq_schedule,
};

static void t_unknown_policy(void)
{
    world w;
    ASSERT_OK(mk_ops(&w, "8", &tq_ops, NULL));
    const gs_job *a = job(&w, 1, 2, NULL, 0), *b = job(&w, 2, 2, NULL, 0),
                 *c = job(&w, 3, 1, NULL, 0);
    ASSERT_EQ(gs_engine_step(w.e), 1);
    gs_queue_key ka = key(&w, a), kb = key(&w, b), kc = key(&w, c);
    ASSERT_EQ(ka.queue, 2);
    ASSERT_EQ(kc.queue, 1);
    ASSERT(gs_queue_key_cmp(&kb, b->id, &ka, a->id) < 0); /* newest first */
    ASSERT(gs_queue_key_cmp(&kc, c->id, &kb, b->id) < 0); /* queue 1 sorts before queue 2 */
    ASSERT_STR(text(&w, 2), "among 2-GPU jobs (newest first)");
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "gold"), 3);
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "default"), -1);
    ASSERT_STR(gs_engine_vc_declared(w.e, 0), "gold");
    ASSERT(gs_engine_vc_declared(w.e, 1) == NULL);
    ASSERT_STR(gs_engine_pending_reason(w.e, a), "Priority"); /* 2 of 8 free: not resources */
    /* errors come back, with the defaults in place */
    tq_fail = 1;
    gs_queue_key k = {5, 5};
    ASSERT_EQ(gs_engine_queue_key(w.e, a, &k), GS_EINVAL);
    ASSERT_EQ(k.queue, GS_QUEUE_GLOBAL);
    ASSERT_EQ(k.key, 0);
    char buf[64];
    ASSERT_EQ(gs_engine_queue_text(w.e, 2, buf, sizeof buf), GS_ENOMEM);
    ASSERT_STR(buf, "in queue 2");
    tq_fail = 0;
    done(&w);
    ASSERT_OK(mk_ops(&w, "8", &tq_bare, NULL));
    a = job(&w, 1, 2, "gold", 0);
    ASSERT_EQ(key(&w, a).queue, GS_QUEUE_GLOBAL);
    ASSERT_STR(text(&w, 0), "in the queue (by submission)");
    ASSERT_EQ(gs_engine_vc_guarantee(w.e, "gold"), -1);
    ASSERT(gs_engine_vc_declared(w.e, 0) == NULL);
    done(&w);
}

static const test_case tests[] = {
    {"defaults_and_reasons", t_defaults_and_reasons},
    {"reordering_policies", t_reordering_policies},
    {"yarn_quota", t_yarn_quota},
    {"hived_private", t_hived_private},
    {"unknown_policy", t_unknown_policy},
};

TEST_MAIN(tests)
