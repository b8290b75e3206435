/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_policies.c - fifo, fifo-backfill and yarn-cs on small hand-checked cases. */
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
    for (; sets && *sets; sets++)
        if (gs_params_set_kv(&w->p, *sets)) return -1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_parse_shorthand(spec, &w->c, &d)) return -1;
    if (gs_engine_create(w->c, policy, &w->p, NULL, &w->e, &d)) return -1;
    return gs_params_unused(&w->p) ? -2 : 0;
}

static void done(world *w)
{
    gs_engine_destroy(w->e);
    gs_cluster_destroy(w->c);
    gs_params_release(&w->p);
}

static gs_job *job(world *w, int64_t id, double t, int gpus, double dur, const char *vc)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(t);
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(dur);
    s.vc = vc;
    gs_job *j = NULL;
    gs_engine_add_job(w->e, &s, &j, NULL);
    return j;
}

static void t_fifo_head_of_line(void)
{
    world w;
    ASSERT_OK(mk(&w, "8", "fifo", NULL));
    gs_job *a = job(&w, 1, 0, 6, 100, NULL), *b = job(&w, 2, 1, 4, 10, NULL),
           *c = job(&w, 3, 2, 2, 10, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 0);
    ASSERT_EQ(b->first_start, 100 * GS_SEC);
    ASSERT_EQ(c->first_start, 100 * GS_SEC); /* blocked behind b although 2 GPUs were free */
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
}

static void t_backfill(void)
{
    world w;
    ASSERT_OK(mk(&w, "8", "fifo-backfill", NULL));
    gs_job *a = job(&w, 1, 0, 6, 100, NULL), *b = job(&w, 2, 1, 4, 10, NULL),
           *c = job(&w, 3, 2, 2, 10, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 0);
    ASSERT_EQ(c->first_start, 2 * GS_SEC);
    ASSERT_EQ(b->first_start, 100 * GS_SEC);
    done(&w);
}

static void t_yarn_single_queue(void)
{
    world w;
    ASSERT_OK(mk(&w, "8", "yarn-cs", NULL));
    gs_job *a = job(&w, 1, 0, 4, 100, "a"), *b = job(&w, 2, 0, 4, 100, "a"),
           *c = job(&w, 3, 0, 4, 100, "b");
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 0);
    ASSERT_EQ(b->first_start, 0);
    ASSERT_EQ(c->first_start, 100 * GS_SEC);
    done(&w);
}

static void t_yarn_quotas(void)
{
    world w;
    const char *sets[] = {"quotas=a:4,b:4", NULL};
    ASSERT_OK(mk(&w, "8", "yarn-cs", sets));
    gs_job *a = job(&w, 1, 0, 4, 100, "a"), *b = job(&w, 2, 0, 4, 100, "a"),
           *c = job(&w, 3, 0, 4, 100, "b");
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 0);
    ASSERT_EQ(c->first_start, 0); /* b is under its quota: served before a's second job */
    ASSERT_EQ(b->first_start, 100 * GS_SEC);
    done(&w);
}

static void t_yarn_borrow(void)
{
    for (int borrow = 0; borrow <= 1; borrow++) {
        world w;
        const char *sets[] = {"quotas=a:4,b:4", borrow ? "borrow=on" : "borrow=off", NULL};
        ASSERT_OK(mk(&w, "8", "yarn-cs", sets));
        job(&w, 1, 0, 4, 100, "a");
        gs_job *b = job(&w, 2, 0, 4, 100, "a");
        ASSERT_OK(gs_engine_run(w.e));
        ASSERT_EQ(b->first_start, borrow ? 0 : 100 * GS_SEC);
        done(&w);
    }
}

static void t_yarn_relax(void)
{
    for (int relax = 0; relax <= 1; relax++) {
        world w;
        const char *sets[] = {relax ? "relax=on" : "relax=off", "relax_rack=180", NULL};
        ASSERT_OK(mk(&w, "1x2x4", "yarn-cs", sets));
        job(&w, 1, 0, 3, 1000, NULL); /* n0: 1 free */
        job(&w, 2, 0, 3, 1000, NULL); /* n1: 1 free */
        gs_job *z = job(&w, 3, 0, 2, 10, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        if (relax) {
            ASSERT_EQ(z->first_start, 180 * GS_SEC);
            ASSERT_EQ(gs_cluster_count_nodes(w.c, z->last_alloc, 2), 2);
        } else {
            ASSERT_EQ(z->first_start, 1000 * GS_SEC);
        }
        done(&w);
    }
}

static void t_unknown_param_detected(void)
{
    world w;
    const char *sets[] = {"quotass=a:4", NULL};
    ASSERT_EQ(mk(&w, "8", "yarn-cs", sets), -2);
    done(&w);
    const char *bad[] = {"quotas=a", NULL};
    ASSERT_EQ(mk(&w, "8", "yarn-cs", bad), -1);
    done(&w);
}

static const test_case tests[] = {
    {"fifo_head_of_line", t_fifo_head_of_line},
    {"backfill", t_backfill},
    {"yarn_single_queue", t_yarn_single_queue},
    {"yarn_quotas", t_yarn_quotas},
    {"yarn_borrow", t_yarn_borrow},
    {"yarn_relax", t_yarn_relax},
    {"unknown_param_detected", t_unknown_param_detected},
};

TEST_MAIN(tests)
