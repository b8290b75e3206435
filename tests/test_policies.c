/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_policies.c - fifo, fifo-backfill and yarn-cs on small hand-checked cases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

int test_read_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d);
int test_read_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d)
{
    (void)ud;
    return gs_read_file(path, buf, len, d);
}

typedef struct world {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
} world;

static int mk(world *w, const char *spec, const char *policy, const char *const *sets)
{
    memset(w, 0, sizeof *w);
    gs_params_init(&w->p);
    /* exact timings: no slowdown and free preemption unless a test sets them */
    gs_params_set(&w->p, "slowdown", "off");
    gs_params_set(&w->p, "preempt_cost", "0");
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

static const gs_job *job(world *w, int64_t id, double t, int gpus, double dur, const char *vc)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.submit = gs_time_from_sec(t);
    s.ntasks = gpus;
    s.duration = gs_time_from_sec(dur);
    s.vc = vc;
    const gs_job *j = NULL;
    gs_engine_add_job(w->e, &s, &j, NULL);
    return j;
}

static void t_fifo_head_of_line(void)
{
    world w;
    ASSERT_OK(mk(&w, "8", "fifo", NULL));
    const gs_job *a = job(&w, 1, 0, 6, 100, NULL), *b = job(&w, 2, 1, 4, 10, NULL),
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
    const gs_job *a = job(&w, 1, 0, 6, 100, NULL), *b = job(&w, 2, 1, 4, 10, NULL),
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
    const gs_job *a = job(&w, 1, 0, 4, 100, "a"), *b = job(&w, 2, 0, 4, 100, "a"),
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
    const gs_job *a = job(&w, 1, 0, 4, 100, "a"), *b = job(&w, 2, 0, 4, 100, "a"),
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
        const gs_job *b = job(&w, 2, 0, 4, 100, "a");
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
        const gs_job *z = job(&w, 3, 0, 2, 10, NULL);
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

/* ---- preemptive policies ---- */

static void t_tiresias_demotion(void)
{
    /* 2 GPUs, one threshold at 100 GPU-s: A (2 GPUs) reaches it at t=50 and
     * B, waiting in the top queue, takes over; with 1-D LAS (100 s) at t=100 */
    for (int las = 0; las <= 1; las++) {
        world w;
        const char *sets[] = {"queues=100", NULL};
        ASSERT_OK(mk(&w, "2", las ? "las" : "tiresias-las", sets));
        const gs_job *a = job(&w, 1, 0, 2, 300, NULL), *b = job(&w, 2, 10, 2, 30, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        gs_time t = las ? 100 * GS_SEC : 50 * GS_SEC;
        ASSERT_EQ(b->first_start, t);
        ASSERT_EQ(b->end, t + 30 * GS_SEC);
        ASSERT_EQ(a->preemptions, 1);
        ASSERT_EQ(a->end, 330 * GS_SEC);
        ASSERT_OK(gs_engine_check(w.e, NULL));
        done(&w);
    }
}

typedef struct starts {
    int64_t id;
    gs_time t[16];
    int n;
} starts;

static void record_starts(void *ud, const gs_record *r)
{
    starts *s = ud;
    if (r->type == GS_REC_START && r->job->id == s->id && s->n < 16) s->t[s->n++] = r->t;
}

static void t_tiresias_promote_knob(void)
{
    /* A is demoted at 50 and then starved by a stream of short top-queue jobs;
     * with promote_knob=1 it returns to the top queue after waiting 50 s */
    for (int knob = 0; knob <= 1; knob++) {
        world w;
        const char *sets[] = {"queues=100", knob ? "promote_knob=1" : "promote_knob=0", NULL};
        ASSERT_OK(mk(&w, "2", "tiresias-las", sets));
        starts st = {1, {0}, 0};
        gs_engine_set_observer(w.e, record_starts, &st);
        const gs_job *a = job(&w, 1, 0, 2, 1000, NULL);
        for (int k = 0; k < 5; k++) job(&w, 10 + k, 50 + 40 * k, 2, 40, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        ASSERT(st.n >= 2);
        ASSERT_EQ(st.t[0], 0);
        /* knob: promoted at 100, runs when the short job started at 90 ends (130) */
        ASSERT_EQ(st.t[1], (knob ? 130 : 250) * GS_SEC);
        ASSERT_EQ(a->state, GS_JOB_DONE);
        ASSERT_OK(gs_engine_check(w.e, NULL));
        done(&w);
    }
}

static void t_gittins_prefers_likely_finishers(void)
{
    /* samples: three jobs of 10 GPU-s, one of 1000.  A job that already has
     * 20 GPU-s is likely a long one; a fresh job is likely short */
    FILE *f = fopen("/tmp/gsched-gittins-test.csv", "w");
    ASSERT(f);
    fputs("gpu_time\n10\n10\n10\n1000\n", f);
    fclose(f);
    world w;
    memset(&w, 0, sizeof w);
    gs_params_init(&w.p);
    gs_params_set(&w.p, "slowdown", "off");
    gs_params_set(&w.p, "preempt_cost", "0");
    gs_params_set(&w.p, "queues", "1000000");
    gs_params_set(&w.p, "gittins_samples", "/tmp/gsched-gittins-test.csv");
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("1", &w.c, &d));
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.read_file = test_read_file;
    if (gs_engine_create(w.c, "tiresias-gittins", &w.p, &o, &w.e, &d)) T_FAIL("%s", d.msg);
    const gs_job *b = job(&w, 2, 0, 1, 500, NULL), *a = job(&w, 1, 20, 1, 5, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(a->first_start, 20 * GS_SEC); /* preempts b at once */
    ASSERT_EQ(b->preemptions, 1);
    ASSERT_EQ(b->end, 505 * GS_SEC);
    done(&w);
    remove("/tmp/gsched-gittins-test.csv");
}

/* Parameters found by tests/fuzz (fuzz_params) to overflow the policies' arithmetic. */
static void t_param_fuzz_regressions(void)
{
    world w;
    /* a huge threshold became INT64_MIN microseconds; the demotion timer then overflowed */
    const char *huge[] = {"queues=180,359,4444444444444444444492700", NULL};
    ASSERT_EQ(mk(&w, "2", "tiresias-las", huge), -1);
    done(&w);
    const char *big[] = {"queues=1e12", NULL};
    ASSERT_OK(mk(&w, "2", "tiresias-las", big));
    done(&w);
    /* promote_knob x executed time overflowed the promotion instant: A (1e6 s) is demoted
     * at 1e5 s, preempted by B, and would be promoted after 1e9 x its service */
    const char *knob[] = {"queues=100000", "promote_knob=1e9", NULL};
    ASSERT_OK(mk(&w, "1", "las", knob));
    const gs_job *a = job(&w, 1, 0, 1, 1000000, NULL), *b = job(&w, 2, 200000, 1, 10, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(b->first_start, 200000 * GS_SEC);
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(a->end, 1000010 * GS_SEC);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
    /* 102,400 GPUs x 9e10 s of service: GPU-microseconds saturate instead of overflowing
     * (tiresias-gittins computes every running job's service at each pass) */
    const char *q[] = {"queues=3600", NULL};
    ASSERT_OK(mk(&w, "100x1024", "tiresias-gittins", q));
    const gs_job *h = job(&w, 1, 0, 102400, 1e11, NULL);
    job(&w, 2, 9e10, 1, 10, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(h->state, GS_JOB_DONE);
    ASSERT_OK(gs_engine_check(w.e, NULL));
    done(&w);
    /* hived's intra-VC queues were not validated at all */
    static const char *hy = "physicalCluster:\n  cellTypes:\n"
                            "    N: {childCellType: G, childCellNumber: 2, isNodeLevel: true}\n"
                            "  physicalCells:\n  - {cellType: N, cellAddress: n1}\n"
                            "virtualClusters:\n  v:\n    virtualCells:\n"
                            "    - {cellType: N, cellNumber: 1}\n";
    const char *bad[] = {"-5", "10,5", "1e300", "nan", NULL};
    for (int i = 0; bad[i]; i++) {
        gs_cluster *c = NULL;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_OK(gs_cluster_parse_hived("h.yaml", hy, strlen(hy), &c, &d));
        gs_params p;
        gs_params_init(&p);
        gs_params_set(&p, "intra", "tiresias-las");
        gs_params_set(&p, "queues", bad[i]);
        gs_engine *e = NULL;
        int rc = gs_engine_create(c, "hived", &p, NULL, &e, &d);
        gs_engine_destroy(e);
        gs_cluster_destroy(c);
        gs_params_release(&p);
        ASSERT_EQ(rc, GS_EINVAL);
    }
}

static void t_gittins_samples_errors(void)
{
    /* a line longer than the reader's buffer was cut and parsed as a shorter number */
    FILE *f = fopen("/tmp/gsched-gittins-long.csv", "w");
    ASSERT(f);
    fputs("gpu_time\n10\n", f);
    for (int i = 0; i < 200; i++) fputc('1', f);
    fputs("\n", f);
    fclose(f);
    world w;
    memset(&w, 0, sizeof w);
    gs_params_init(&w.p);
    gs_params_set(&w.p, "gittins_samples", "/tmp/gsched-gittins-long.csv");
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("1", &w.c, &d));
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    o.read_file = test_read_file;
    ASSERT_EQ(gs_engine_create(w.c, "tiresias-gittins", &w.p, &o, &w.e, &d), GS_EPARSE);
    ASSERT_EQ(d.line, 3);
    ASSERT_CONTAINS(d.msg, "longer than");
    done(&w);
    remove("/tmp/gsched-gittins-long.csv");
}

static void t_srtf_srsf_sjf(void)
{
    const char *pols[] = {"srtf", "srsf", "sjf"};
    for (int k = 0; k < 3; k++) {
        world w;
        ASSERT_OK(mk(&w, "1", pols[k], NULL));
        const gs_job *a = job(&w, 1, 0, 1, 100, NULL), *b = job(&w, 2, 10, 1, 10, NULL),
                     *c = job(&w, 3, 20, 1, 5, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        if (k < 2) { /* preemptive: b at 10, c after b (5 < 10-... b has 0 left at 20) */
            ASSERT_EQ(b->first_start, 10 * GS_SEC);
            ASSERT_EQ(b->end, 20 * GS_SEC);
            ASSERT_EQ(c->first_start, 20 * GS_SEC);
            ASSERT_EQ(a->preemptions, 1);
            ASSERT_EQ(a->end, 115 * GS_SEC);
        } else { /* sjf: no preemption; the shorter waiting job first */
            ASSERT_EQ(a->end, 100 * GS_SEC);
            ASSERT_EQ(c->first_start, 100 * GS_SEC);
            ASSERT_EQ(b->first_start, 105 * GS_SEC);
            ASSERT_EQ(a->preemptions, 0);
        }
        done(&w);
    }
}

static void t_srsf_weighs_gpus(void)
{
    /* 2 GPUs: A (2 GPUs, 50 s left = 100 GPU-s) vs B (1 GPU, 60 s = 60 GPU-s):
     * srsf preempts A for B; srtf does not (60 s > 50 s) */
    for (int srsf = 0; srsf <= 1; srsf++) {
        world w;
        ASSERT_OK(mk(&w, "2", srsf ? "srsf" : "srtf", NULL));
        const gs_job *a = job(&w, 1, 0, 2, 60, NULL), *b = job(&w, 2, 10, 1, 60, NULL);
        ASSERT_OK(gs_engine_run(w.e));
        ASSERT_EQ(b->first_start, (srsf ? 10 : 60) * GS_SEC);
        ASSERT_EQ(a->preemptions, srsf);
        done(&w);
    }
}

static void t_preemption_pays_restart(void)
{
    /* the same srtf case with preempt_cost=20s: A pays 20 s when it restarts */
    world w;
    const char *sets[] = {"preempt_cost=20s", NULL};
    ASSERT_OK(mk(&w, "1", "srtf", sets));
    const gs_job *a = job(&w, 1, 0, 1, 100, NULL), *b = job(&w, 2, 10, 1, 10, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(b->end, 20 * GS_SEC);
    ASSERT_EQ(a->end, 130 * GS_SEC);
    ASSERT_EQ(a->overhead_charges, 1);
    done(&w);
}

static void t_consolidated_preemption_minimal(void)
{
    /* 2 nodes x 4 GPUs.  Low-priority 1-GPU jobs on both nodes; a 4-GPU job
     * needs one whole node: only the jobs on one node are preempted */
    world w;
    const char *sets[] = {"queues=10", NULL};
    ASSERT_OK(mk(&w, "2x4", "tiresias-las", sets));
    const gs_job *small[8];
    for (int i = 0; i < 8; i++) small[i] = job(&w, 10 + i, 0, 1, 1000, NULL);
    const gs_job *big = job(&w, 1, 100, 4, 50, NULL);
    ASSERT_OK(gs_engine_run(w.e));
    ASSERT_EQ(big->first_start, 100 * GS_SEC);
    int pre = 0;
    for (int i = 0; i < 8; i++) pre += small[i]->preemptions;
    ASSERT_EQ(pre, 4);
    ASSERT_EQ(gs_cluster_count_nodes(w.c, big->last_alloc, 4), 1);
    done(&w);
}

/*
 * The registry (generated by CMake from src/core/policy_*.c): every table listed once, names
 * unique and usable in a policy list (a-z, 0-9, '-'), the listing in its documented order,
 * every name found; a program's own tables (gs_engine_opts.policies) come first.
 */
static int t_create_none(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)e, (void)p, (void)d;
    *st = NULL;
    return 0;
}
static int t_schedule_none(void *st)
{
    (void)st;
    return 0;
}

static void t_registry(void)
{
    size_t n = 0;
    while (gs_policy_at(n)) n++;
    ASSERT(n >= 20);
    for (size_t i = 0; i < n; i++) {
        const gs_policy_ops *a = gs_policy_at(i);
        ASSERT(a->name && a->name[0] && a->summary && a->create);
        for (const char *c = a->name; *c; c++)
            ASSERT((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-');
        ASSERT(gs_policy_find(a->name) == a);
        for (size_t k = 0; k < i; k++) ASSERT(strcmp(gs_policy_at(k)->name, a->name) != 0);
    }
    /* the listing order (the orders in the files): families together, fifo first */
    static const char *const first[] = {
        "fifo",    "fifo-backfill", "yarn-cs", "las",   "tiresias-las", "tiresias-gittins",
        "srtf",    "srsf",          "sjf",     "hived", "quota",        "private",
        "gandiva", "gandiva-emul"};
    for (size_t i = 0; i < sizeof first / sizeof *first; i++)
        ASSERT_STR(gs_policy_at(i)->name, first[i]);
    ASSERT(gs_policy_find("no-such-policy") == NULL);

    /* a program's table: found by name before the compiled-in ones, and by the engine */
    static const gs_policy_ops mine = {
        .name = "mine", .summary = "test", .create = t_create_none, .schedule = t_schedule_none};
    static const gs_policy_ops shadow = {
        .name = "fifo", .summary = "test", .create = t_create_none, .schedule = t_schedule_none};
    const gs_policy_ops *const extra[] = {&mine, &shadow};
    ASSERT(gs_policy_find_ex(extra, 2, "mine") == &mine);
    ASSERT(gs_policy_find_ex(extra, 2, "fifo") == &shadow);
    ASSERT(gs_policy_find_ex(extra, 1, "fifo") == gs_policy_find("fifo"));
    ASSERT(gs_policy_find_ex(NULL, 0, "mine") == NULL);
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_cluster_parse_shorthand("1x2", &c, &d));
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    gs_engine *e = NULL;
    ASSERT_EQ(gs_engine_create(c, "mine", NULL, &o, &e, &d), GS_EUNKNOWN);
    o.policies = extra;
    o.npolicies = 1;
    ASSERT_OK(gs_engine_create(c, "mine", NULL, &o, &e, &d));
    ASSERT_STR(gs_engine_policy_name(e), "mine");
    gs_engine_destroy(e);
    /* the suggestion names the program's policies too */
    ASSERT_EQ(gs_engine_create(c, "mini", NULL, &o, &e, &d), GS_EUNKNOWN);
    ASSERT(strstr(d.msg, "did you mean 'mine'") != NULL);
    gs_cluster_destroy(c);
}

static const test_case tests[] = {
    {"registry", t_registry},
    {"fifo_head_of_line", t_fifo_head_of_line},
    {"backfill", t_backfill},
    {"yarn_single_queue", t_yarn_single_queue},
    {"yarn_quotas", t_yarn_quotas},
    {"yarn_borrow", t_yarn_borrow},
    {"yarn_relax", t_yarn_relax},
    {"unknown_param_detected", t_unknown_param_detected},
    {"tiresias_demotion", t_tiresias_demotion},
    {"tiresias_promote_knob", t_tiresias_promote_knob},
    {"gittins_prefers_likely_finishers", t_gittins_prefers_likely_finishers},
    {"srtf_srsf_sjf", t_srtf_srsf_sjf},
    {"srsf_weighs_gpus", t_srsf_weighs_gpus},
    {"preemption_pays_restart", t_preemption_pays_restart},
    {"consolidated_preemption_minimal", t_consolidated_preemption_minimal},
    {"param_fuzz_regressions", t_param_fuzz_regressions},
    {"gittins_samples_errors", t_gittins_samples_errors},
};

TEST_MAIN(tests)
