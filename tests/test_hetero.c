/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_hetero.c - the speed model of heterogeneous clusters (docs/heterogeneity.md, "Speed
 * model"): a job's work is measured on the reference GPU type and progresses on type k at
 * tput(model, k, gpus) / tput(model, ref, gpus) from the profiles; jobs without a model use
 * the per-type 'default' rows; a gang over several types runs at the slowest one's rate;
 * type_speed=off and clusters of the reference type (or untyped) keep the old speeds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gsched/gsched.h"
#include "harness.h"

/* A policy that does nothing: tests place jobs themselves. */
static int m_create(gs_engine *e, gs_params *p, void **st, gs_diag *d)
{
    (void)e, (void)p, (void)d;
    *st = NULL;
    return 0;
}
static void m_destroy(void *st)
{
    (void)st;
}
static const gs_policy_ops manual = {.name = "manual", .create = m_create, .destroy = m_destroy};

typedef struct rig {
    gs_cluster *c;
    gs_engine *e;
    gs_params p;
} rig;

/* kv: NULL or "key=value,key=value"; policy NULL = manual.  costs=off always (no placement
 * slowdown, free restarts): the speed of a type is all that changes a run. */
static int rig_open_c(rig *r, gs_cluster *c, const char *policy, const char *kv, gs_diag *d)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    gs_params_init(&r->p);
    char buf[256];
    snprintf(buf, sizeof buf, "costs=off%s%s", kv ? "," : "", kv ? kv : "");
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (gs_params_set_kv(&r->p, t)) return -1;
    gs_engine_opts o;
    gs_engine_opts_init(&o);
    if (policy) return gs_engine_create(r->c, policy, &r->p, &o, &r->e, d);
    return gs_engine_create_ops(r->c, &manual, &r->p, &o, &r->e, d);
}

static int rig_open(rig *r, const char *cluster, const char *policy, const char *kv)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = NULL;
    if (gs_cluster_parse_shorthand(cluster, &c, &d)) return -1;
    return rig_open_c(r, c, policy, kv, &d);
}

static void rig_close(rig *r)
{
    gs_engine_destroy(r->e);
    gs_cluster_destroy(r->c);
    gs_params_release(&r->p);
}

static const gs_job *add(rig *r, int64_t id, int ntasks, int gpt, double dur_s, const char *model)
{
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = id;
    s.ntasks = ntasks;
    s.gpus_per_task = gpt;
    s.duration = gs_time_from_sec(dur_s);
    s.model = model;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_engine_add_job(r->e, &s, &j, &d)) return NULL;
    return j;
}

/* Run time of a lone job of 'model' (NULL: none) on 'cluster' under fifo. */
static gs_time alone(const char *cluster, const char *model, int gpus, const char *kv)
{
    rig r;
    if (rig_open(&r, cluster, "fifo", kv)) return -1;
    const gs_job *j = add(&r, 1, 1, gpus, 3600, model);
    gs_time t = -1;
    if (j && !gs_engine_run(r.e) && j->state == GS_JOB_DONE) t = j->end - j->first_start;
    rig_close(&r);
    return t;
}

/* Isolated iteration time of 'model' on one GPU of 'type', from the built-in profiles. */
static double iter_s(const char *model, const char *type)
{
    gs_profiles *p = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_profiles_builtin(&p, &d)) return -1;
    double t = gs_profiles_get(p, model, type)->iter_s;
    gs_profiles_destroy(p);
    return t;
}

/* Throughput (steps/s) of 'model' on 'gpus' GPUs of 'type', from the built-in profiles. */
static double tput(const char *model, const char *type, int gpus)
{
    gs_profiles *p = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_profiles_builtin(&p, &d)) return -1;
    double t = gs_profiles_tput(p, model, type, gpus);
    gs_profiles_destroy(p);
    return t;
}

/* work / rate, as the engine rounds it (ceil of us). */
static gs_time at_rate(double dur_s, double rate)
{
    return (gs_time)ceil((double)gs_time_from_sec(dur_s) / rate);
}

/* A resnet50 job takes the profiles' K80 / V100 iteration-time ratio longer on K80. */
static void test_resnet50_k80_slower(void)
{
    double ratio = iter_s("resnet50", "K80") / iter_s("resnet50", "V100");
    ASSERT(ratio > 2.0); /* Gavel measured ResNet-50 (bs 64) about 7x slower on a K80 */
    ASSERT_EQ(alone("1x4:V100", "resnet50", 1, NULL), gs_time_from_sec(3600));
    ASSERT_EQ(alone("1x4:K80", "resnet50", 1, NULL), at_rate(3600, 1.0 / ratio));
    double rp = iter_s("resnet50", "V100") / iter_s("resnet50", "P100");
    ASSERT(rp < 1.0);
    ASSERT_EQ(alone("1x4:P100", "resnet50", 1, NULL), at_rate(3600, rp));
}

/* A job without a model (or with an unknown one) uses the per-type 'default' rows. */
static void test_default_rows(void)
{
    double r = iter_s(NULL, "V100") / iter_s(NULL, "K80");
    ASSERT(r < 0.5); /* the median of Gavel's K80/V100 throughput ratios is about 0.25 */
    ASSERT_EQ(alone("1x4:K80", NULL, 1, NULL), at_rate(3600, r));
    ASSERT_EQ(alone("1x4:K80", "no-such-model", 1, NULL), at_rate(3600, r));
    double rp = iter_s(NULL, "V100") / iter_s(NULL, "P100");
    ASSERT(rp < 1.0);
    ASSERT_EQ(alone("1x4:P100", NULL, 1, NULL), at_rate(3600, rp));
    /* a type the profiles have no rows of runs at the reference speed; so do untyped GPUs */
    ASSERT_EQ(alone("1x4:M60", NULL, 1, NULL), gs_time_from_sec(3600));
    ASSERT_EQ(alone("1x4", "resnet50", 1, NULL), gs_time_from_sec(3600));
    ASSERT_EQ(alone("1x4", NULL, 4, NULL), gs_time_from_sec(3600));
}

/* type_speed=off: every type runs at the reference speed (the behaviour before issue 15). */
static void test_type_speed_off(void)
{
    ASSERT_EQ(alone("1x4:K80", "resnet50", 1, "type_speed=off"), gs_time_from_sec(3600));
    ASSERT_EQ(alone("1x4:K80", NULL, 2, "type_speed=off"), gs_time_from_sec(3600));
    ASSERT_EQ(alone("1x4:P100", "transformer", 1, "type_speed=off"), gs_time_from_sec(3600));
}

/* ref_gpu_type=K80: work is measured on K80, so a K80 run takes the work and V100 is faster. */
static void test_ref_gpu_type(void)
{
    ASSERT_EQ(alone("1x4:K80", "resnet50", 1, "ref_gpu_type=K80"), gs_time_from_sec(3600));
    double ratio = iter_s("resnet50", "K80") / iter_s("resnet50", "V100");
    ASSERT_EQ(alone("1x4:V100", "resnet50", 1, "ref_gpu_type=k80"), at_rate(3600, ratio));
    rig r;
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = NULL;
    ASSERT_OK(gs_cluster_parse_shorthand("1x4:K80", &c, &d));
    ASSERT_EQ(rig_open_c(&r, c, "fifo", "ref_gpu_type=A100", &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "ref_gpu_type 'A100'");
    ASSERT_CONTAINS(d.msg, "V100");
    gs_cluster_destroy(c);
    gs_params_release(&r.p);
}

/* One node of 2 V100 and one of 2 K80 (nodes n0, n1). */
static gs_cluster *mixed(void)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gs_cluster_create(&c)) return NULL;
    int tv = gs_cluster_gpu_type(c, "V100"), tk = gs_cluster_gpu_type(c, "K80");
    for (int n = 0; n < 2; n++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", n);
        int node = gs_cluster_add_cell(c, 0, GS_CELL_NODE, name, -1);
        if (node < 0 || gs_cluster_set_node(c, node, 0, 0)) return NULL;
        for (int g = 0; g < 2; g++)
            if (gs_cluster_add_gpu(c, node, g, n ? tk : tv) < 0) return NULL;
    }
    if (gs_cluster_finish(c, &d)) {
        gs_cluster_destroy(c);
        return NULL;
    }
    return c;
}

/* A gang spanning V100 and K80 GPUs progresses at the K80 rate; gs_engine_job_rate and
 * gs_engine_job_ideal answer per type. */
static void test_mixed_gang_slowest(void)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = mixed();
    ASSERT(c);
    rig r;
    ASSERT_OK(rig_open_c(&r, c, NULL, NULL, &d));
    const gs_job *j = add(&r, 1, 2, 2, 3600, "resnet50");
    ASSERT(j);
    ASSERT_OK(gs_engine_advance(r.e, 0));
    int tv = gs_cluster_find_gpu_type(c, "V100"), tk = gs_cluster_find_gpu_type(c, "K80");
    /* at 4 GPUs: the 4-GPU rows (Gavel's consolidated throughputs), not the 1-GPU ratio */
    double rk = tput("resnet50", "K80", 4) / tput("resnet50", "V100", 4);
    double rk1 = iter_s("resnet50", "V100") / iter_s("resnet50", "K80");
    ASSERT(fabs(rk - rk1) > 0.05);
    ASSERT_NEAR(gs_engine_job_rate(r.e, j, tv, 4), 1.0, 1e-12);
    ASSERT_NEAR(gs_engine_job_rate(r.e, j, -1, 4), 1.0, 1e-12);
    ASSERT_NEAR(gs_engine_job_rate(r.e, j, tk, 4), rk, 1e-12);
    ASSERT_NEAR(gs_engine_job_type_rate(r.e, j, tk, 4), rk, 1e-12);
    ASSERT_STR(gs_engine_ref_gpu_type(r.e), "V100");
    /* the ideal run time: the cluster has only 2 V100s, so the best 4-GPU gang spans both
     * types and runs at the K80 rate */
    ASSERT_EQ(gs_engine_job_ideal(r.e, j), at_rate(3600, rk));
    const gs_job *j2 = add(&r, 2, 1, 2, 3600, "resnet50"); /* 2 GPUs: fit on the V100s */
    ASSERT(j2);
    ASSERT_EQ(gs_engine_job_ideal(r.e, j2), gs_time_from_sec(3600));
    ASSERT_EQ(gs_engine_job_gpu_type(r.e, j), -1); /* waiting, any type: the reference */
    ASSERT_NEAR(gs_engine_job_type_rate_now(r.e, j), 1.0, 0);
    int gpus[4] = {0, 1, 2, 3}; /* tasks on n0 (V100) and n1 (K80) */
    ASSERT_OK(gs_engine_start(r.e, j, gpus, 4));
    ASSERT_NEAR(j->type_rate, rk, 1e-12);
    ASSERT_EQ(gs_engine_job_gpu_type(r.e, j), tk); /* the slowest of its types */
    ASSERT_NEAR(gs_engine_job_type_rate_now(r.e, j), rk, 1e-12);
    ASSERT_OK(gs_engine_run(r.e));
    ASSERT_EQ(j->state, GS_JOB_DONE);
    ASSERT_EQ(j->end, at_rate(3600, rk));
    rig_close(&r);

    /* the same gang on the V100 node alone (2 tasks of 1 GPU) runs at the reference speed */
    c = mixed();
    ASSERT(c);
    ASSERT_OK(rig_open_c(&r, c, NULL, NULL, &d));
    j = add(&r, 1, 2, 1, 3600, "resnet50");
    ASSERT_OK(gs_engine_advance(r.e, 0));
    int v[2] = {0, 1};
    ASSERT_OK(gs_engine_start(r.e, j, v, 2));
    ASSERT_NEAR(j->type_rate, 1.0, 0);
    ASSERT_OK(gs_engine_run(r.e));
    ASSERT_EQ(j->end, gs_time_from_sec(3600));
    rig_close(&r);

    /* K80 only: the ideal run time is the work at the K80 rate */
    ASSERT_OK(rig_open(&r, "1x4:K80", NULL, NULL));
    j = add(&r, 1, 1, 1, 3600, "resnet50");
    ASSERT_EQ(gs_engine_job_ideal(r.e, j), at_rate(3600, rk1));
    rig_close(&r);
}

/* A migration to another type changes the speed from then on; the work done is kept. */
static void test_migrate_across_types(void)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = mixed();
    ASSERT(c);
    rig r;
    ASSERT_OK(rig_open_c(&r, c, NULL, NULL, &d));
    const gs_job *j = add(&r, 1, 1, 1, 3600, NULL);
    ASSERT_OK(gs_engine_advance(r.e, 0));
    int g0 = 0, g2 = 2;
    ASSERT_OK(gs_engine_start(r.e, j, &g0, 1));
    ASSERT_NEAR(j->type_rate, 1.0, 0);
    ASSERT_OK(gs_engine_advance(r.e, gs_time_from_sec(1800))); /* half the work done */
    ASSERT_OK(gs_engine_migrate(r.e, j, &g2, 1, "test"));      /* costs=off: free */
    double rk = iter_s(NULL, "V100") / iter_s(NULL, "K80");
    ASSERT_NEAR(j->type_rate, rk, 1e-12);
    ASSERT_OK(gs_engine_run(r.e));
    ASSERT_EQ(j->end, gs_time_from_sec(1800) + at_rate(1800, rk));
    rig_close(&r);
}

/* The profiles' lookups behind the rates. */
static void test_profiles_rate(void)
{
    gs_profiles *p = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_profiles_builtin(&p, &d));
    ASSERT_STR(gs_profiles_ref_type(p), "V100");
    ASSERT(gs_profiles_has_type(p, "k80"));
    ASSERT(!gs_profiles_has_type(p, "A100"));
    ASSERT(!gs_profiles_has_type(p, "any"));
    const gs_profile *v = gs_profiles_get(p, "resnet50", "V100"),
                     *k = gs_profiles_get(p, "resnet50", "K80");
    ASSERT_NEAR(gs_profiles_tput(p, "resnet50", "V100", 1), 1.0 / v->iter_s, 1e-9);
    ASSERT_NEAR(gs_profiles_rate(p, "resnet50", "K80", NULL, 1), v->iter_s / k->iter_s, 1e-12);
    ASSERT_NEAR(gs_profiles_rate(p, "resnet50", "V100", "K80", 1), k->iter_s / v->iter_s, 1e-12);
    ASSERT_NEAR(gs_profiles_rate(p, "resnet50", "A100", NULL, 1), 1.0, 0);
    ASSERT_NEAR(gs_profiles_rate(p, "resnet50", NULL, NULL, 1), 1.0, 0);
    ASSERT_NEAR(gs_profiles_tput(p, "resnet50", "A100", 1), 1.0 / v->iter_s, 1e-9);
    gs_profiles_destroy(p);

    /* a model measured on the reference only takes the 'default' model's ratio there */
    static const char csv[] = "model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util\n"
                              "default,V100,1,1.0,100,0.5\n"
                              "default,K80,1,4.0,100,0.5\n"
                              "solo,V100,1,2.0,100,0.5\n"
                              "both,V100,1,1.0,100,0.5\n"
                              "both,K80,1,2.0,100,0.5\n"
                              "both,V100,2,0.5,100,0.5\n"
                              "both,K80,2,2.0,100,0.5\n"
                              "both,K80,2,9.0,100,0.5\n"; /* repeated: the first one wins */
    ASSERT_OK(gs_profiles_parse("t.csv", csv, sizeof csv - 1, &p, &d));
    ASSERT_STR(gs_profiles_ref_type(p), "V100"); /* no gpu_type table: the first row's */
    ASSERT_NEAR(gs_profiles_rate(p, "solo", "K80", NULL, 1), 0.25, 1e-12);
    ASSERT_NEAR(gs_profiles_rate(p, "both", "K80", NULL, 1), 0.5, 1e-12);
    ASSERT_NEAR(gs_profiles_rate(p, "both", "K80", NULL, 2), 0.25, 1e-12);
    ASSERT_NEAR(gs_profiles_rate(p, "both", "K80", NULL, 4), 0.5, 1e-12); /* no 4: 1-GPU */
    ASSERT_NEAR(gs_profiles_tput(p, "both", "K80", 2), 0.5, 1e-12);
    ASSERT_NEAR(gs_profiles_tput(p, "both", "K80", 4), 2.0, 1e-12); /* 1-GPU x 4 */
    ASSERT_NEAR(gs_profiles_tput(p, "solo", "K80", 1), 0, 0);       /* not measured */
    gs_profiles_destroy(p);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    *len = (size_t)n;
    return b;
}

static int rel_close(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* Gavel's simulation_throughputs.json read unchanged gives the rates of the CSV that
 * tools/gen_profiles.py derives from it (to the CSV's printed precision). */
static void test_json_equals_csv(void)
{
    size_t lj, lc;
    char *js = slurp(test_src("data/gavel/simulation_throughputs.json"), &lj);
    char *cs = slurp(test_src("data/profiles/gavel.csv"), &lc);
    ASSERT(js && cs);
    gs_profiles *pj = NULL, *pc = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_profiles_parse("simulation_throughputs.json", js, lj, &pj, &d));
    ASSERT_OK(gs_profiles_builtin(&pc, &d));
    ASSERT(!strcasecmp(gs_profiles_ref_type(pj), gs_profiles_ref_type(pc)));
    ASSERT_EQ(gs_profiles_nrows(pj), gs_profiles_nrows(pc));
    ASSERT_EQ(gs_profiles_npairs(pj), gs_profiles_npairs(pc));
    static const char *types[] = {"V100", "P100", "K80"};
    static const int sizes[] = {1, 2, 4, 8};
    int models = 0, pairs = 0;
    int table = 0;
    for (char *line = strtok(cs, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "model,", 6)) table = 0;
        if (!strncmp(line, "model_a,", 8)) table = 1;
        if (!strncmp(line, "alias,", 6)) table = 2;
        if (!strncmp(line, "gpu_type,", 9)) table = 3;
        char f[6][64];
        if (table == 0 &&
            sscanf(line, "%63[^,],%63[^,],%63[^,],%63[^,],%63[^,],%63s", f[0], f[1], f[2], f[3],
                   f[4], f[5]) == 6 &&
            !strcmp(f[2], "1") && !strcmp(f[1], "V100")) {
            models++;
            for (int t = 0; t < 3; t++) {
                const gs_profile *a = gs_profiles_get(pj, f[0], types[t]),
                                 *b = gs_profiles_get(pc, f[0], types[t]);
                if (!rel_close(a->iter_s, b->iter_s, 5e-5) ||
                    fabs(a->gpu_util - b->gpu_util) > 6e-4)
                    T_FAIL("%s on %s: iteration %.9g vs %.9g, utilisation %.4f vs %.4f", f[0],
                           types[t], a->iter_s, b->iter_s, a->gpu_util, b->gpu_util);
                for (int g = 0; g < 4; g++) {
                    double rj = gs_profiles_rate(pj, f[0], types[t], NULL, sizes[g]),
                           rc = gs_profiles_rate(pc, f[0], types[t], NULL, sizes[g]);
                    double tj = gs_profiles_tput(pj, f[0], types[t], sizes[g]),
                           tc = gs_profiles_tput(pc, f[0], types[t], sizes[g]);
                    if (!rel_close(rj, rc, 1.2e-4) || !rel_close(tj, tc, 6e-5))
                        T_FAIL("%s on %d %s: rate %.9g vs %.9g, tput %.9g vs %.9g", f[0], sizes[g],
                               types[t], rj, rc, tj, tc);
                }
            }
        }
        if (table == 1 &&
            sscanf(line, "%63[^,],%63[^,],%63[^,],%63[^,],%63[^,],%63s", f[0], f[1], f[2], f[3],
                   f[4], f[5]) == 6 &&
            strcmp(f[0], "model_a")) {
            pairs++;
            double ja, jb, ca, cb;
            int mj = gs_profiles_pair(pj, f[0], f[1], f[2], &ja, &jb);
            int mc = gs_profiles_pair(pc, f[0], f[1], f[2], &ca, &cb);
            if (mj != mc || fabs(ja - ca) > 6e-5 || fabs(jb - cb) > 6e-5)
                T_FAIL("pair %s,%s on %s: %.5f,%.5f vs %.5f,%.5f", f[0], f[1], f[2], ja, jb, ca,
                       cb);
        }
    }
    ASSERT(models >= 26);
    ASSERT(pairs >= 1000);
    /* models without a profile, aliases, the default pair */
    for (int t = 0; t < 3; t++)
        for (int g = 0; g < 4; g++) {
            ASSERT(rel_close(gs_profiles_rate(pj, NULL, types[t], NULL, sizes[g]),
                             gs_profiles_rate(pc, NULL, types[t], NULL, sizes[g]), 1.2e-4));
            ASSERT(rel_close(gs_profiles_rate(pj, "ResNet50", types[t], NULL, sizes[g]),
                             gs_profiles_rate(pc, "resnet50", types[t], NULL, sizes[g]), 1.2e-4));
            ASSERT(rel_close(gs_profiles_tput(pj, "unknown", types[t], sizes[g]),
                             gs_profiles_tput(pc, "unknown", types[t], sizes[g]), 6e-5));
        }
    double a, b, c, e;
    ASSERT_EQ(gs_profiles_pair(pj, "x", "y", "V100", &a, &b), 0);
    gs_profiles_pair(pc, "x", "y", "V100", &c, &e);
    ASSERT_NEAR(a, c, 6e-5);
    ASSERT_NEAR(b, e, 6e-5);
    gs_profiles_destroy(pj);
    gs_profiles_destroy(pc);
    free(js);
    free(cs);
}

/* Malformed JSON: the line and column of the fault. */
static void test_json_errors(void)
{
    static const struct {
        const char *text, *msg;
        int line;
    } bad[] = {
        {"{\n \"v100\": {\"('A', 1)\": {\"null\": x}}}", "expected a number", 2},
        {"{\"v100\": {\"A\": {\"null\": 1}}}", "expected a job", 1},
        {"{\"v100\": {\"('A', 1)\": {\"('B', 1)\": [1, 2]}}}", "without its \"null\"", 1},
        {"{\"v100\": {\"('A', 1)\": {\"null\": 1}}", "expected '}'", 1},
        {"{\"v100\": {\"('A', 1)\": {\"null\": -1}}}", "negative", 1},
        {"{}", "no GPU types", 1},
        {"{\"v100\": {}} x", "text after", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_profiles *p = NULL;
        gs_diag d;
        gs_diag_init(&d, NULL);
        int rc = gs_profiles_parse("t.json", bad[i].text, strlen(bad[i].text), &p, &d);
        if (rc != GS_EPARSE || !strstr(d.msg, bad[i].msg) || d.line != bad[i].line)
            T_FAIL("%s: rc %d, line %d, '%s'", bad[i].text, rc, d.line, d.msg);
    }
    /* a small valid one: the unconsolidated types are skipped, v100 is the reference */
    static const char ok[] =
        "{\"k80\": {\"('M (batch size 8)', 1)\": {\"null\": 1.0}},\n"
        " \"k80_unconsolidated\": {\"('M (batch size 8)', 1)\": {\"null\": 9}},\n"
        " \"v100\": {\"('M (batch size 8)', 1)\": {\"null\": 4.0,\n"
        "   \"('M (batch size 8)', 1)\": [1.0, 1.0]}}}";
    gs_profiles *p = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_profiles_parse("t.json", ok, sizeof ok - 1, &p, &d));
    ASSERT_STR(gs_profiles_ref_type(p), "v100");
    ASSERT_NEAR(gs_profiles_rate(p, "m-bs8", "K80", NULL, 1), 0.25, 1e-12);
    ASSERT_NEAR(gs_profiles_rate(p, "m", "K80", NULL, 1), 0.25, 1e-12); /* family alias */
    ASSERT(!gs_profiles_has_type(p, "k80_unconsolidated"));
    double ra, rb;
    ASSERT_EQ(gs_profiles_pair(p, "m", "m", "V100", &ra, &rb), 1);
    ASSERT_NEAR(ra, 0.25, 1e-12);
    gs_profiles_destroy(p);
}

/* A job whose work is given in steps: the engine makes it time at the reference type's
 * throughput at the requested size; weight copied (1 by default); bad values refused. */
static void test_steps_and_weight(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "1x8:K80", "fifo", NULL));
    gs_job_spec s;
    gs_job_spec_init(&s);
    ASSERT_NEAR(s.weight, 1.0, 0);
    s.id = 1;
    s.steps = 1000;
    s.model = "resnet50";
    s.weight = 2.5;
    const gs_job *j = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(r.e, &s, &j, &d));
    /* 1,000 steps at Gavel's V100 throughput of ResNet-50 (bs 64) on one GPU */
    double t1 = tput("resnet50", "V100", 1);
    ASSERT_EQ(j->work, (gs_time)ceil(1000 / t1 * 1e6));
    ASSERT_NEAR(j->steps, 1000, 0);
    ASSERT_NEAR(j->weight, 2.5, 0);
    /* 4 GPUs: at the 4-GPU throughput; no model: the 'default' rows; weight 0 = 1 */
    s.id = 2;
    s.gpus_per_task = 4;
    s.model = NULL;
    s.weight = 0;
    const gs_job *j2 = NULL;
    ASSERT_OK(gs_engine_add_job(r.e, &s, &j2, &d));
    ASSERT_EQ(j2->work, (gs_time)ceil(1000 / tput(NULL, "V100", 4) * 1e6));
    ASSERT_NEAR(j2->weight, 1.0, 0);
    /* on the K80 cluster each runs at its K80 rate */
    ASSERT_OK(gs_engine_run(r.e));
    ASSERT_EQ(j->state, GS_JOB_DONE);
    double rk = tput("resnet50", "K80", 1) / t1;
    ASSERT_EQ(j->end - j->first_start, (gs_time)ceil((double)j->work / rk));
    rig_close(&r);

    ASSERT_OK(rig_open(&r, "1x8:V100", NULL, "ref_gpu_type=K80"));
    gs_job_spec_init(&s);
    s.steps = 1000;
    s.model = "resnet50";
    ASSERT_OK(gs_engine_add_job(r.e, &s, &j, &d));
    ASSERT_EQ(j->work, (gs_time)ceil(1000 / tput("resnet50", "K80", 1) * 1e6));
    /* refused: steps and a duration, negative or non-finite steps or weight */
    static const struct {
        double steps, weight;
        gs_time dur;
        const char *msg;
    } bad[] = {
        {100, 1, 10 * GS_SEC, "not both"},    {-1, 1, 0, "steps must be"},
        {NAN, 1, 0, "steps must be"},         {100, -2, 0, "weight must be"},
        {100, INFINITY, 0, "weight must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_job_spec_init(&s);
        s.steps = bad[i].steps;
        s.weight = bad[i].weight;
        s.duration = bad[i].dur;
        gs_diag_init(&d, NULL);
        size_t n = gs_engine_njobs(r.e);
        if (gs_engine_add_job(r.e, &s, NULL, &d) != GS_EINVAL || !strstr(d.msg, bad[i].msg))
            T_FAIL("case %zu: '%s'", i, d.msg);
        ASSERT_EQ(gs_engine_njobs(r.e), n); /* nothing added */
    }
    rig_close(&r);
}

/* srtf orders by remaining time on the GPU type: a job with little work left that crawls on a
 * K80 gives way to one with more work that runs fast there. */
static void test_srtf_by_time(void)
{
    rig r;
    ASSERT_OK(rig_open(&r, "1x1:K80", "srtf", NULL));
    const gs_job *a = add(&r, 1, 1, 1, 100, "resnet18-bs256"); /* about 0.09 of V100 speed */
    gs_job_spec s;
    gs_job_spec_init(&s);
    s.id = 2;
    s.submit = 10 * GS_SEC;
    s.duration = 300 * GS_SEC;
    s.model = "recommendation-bs1024"; /* faster on a K80 than on a V100 in Gavel's data */
    const gs_job *b = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_engine_add_job(r.e, &s, &b, &d));
    double ra = tput("resnet18-bs256", "K80", 1) / tput("resnet18-bs256", "V100", 1);
    double rb = tput("recommendation-bs1024", "K80", 1) / tput("recommendation-bs1024", "V100", 1);
    ASSERT(100 / ra > 300 / rb && 100 < 300); /* by time b is shorter, by work a */
    ASSERT_OK(gs_engine_run(r.e));
    ASSERT_EQ(a->state, GS_JOB_DONE);
    ASSERT_EQ(b->state, GS_JOB_DONE);
    ASSERT_EQ(a->preemptions, 1);
    ASSERT(b->end < a->end);
    ASSERT_EQ(b->end, 10 * GS_SEC + at_rate(300, rb));
    rig_close(&r);
}

/* On a mixed cluster srtf's order does not depend on where jobs run: jobs that all arrive at
 * once are never preempted (keyed by where they ran, those on the K80s would swap places
 * with the waiting ones, and back). */
static void test_srtf_no_swap(void)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_cluster *c = mixed();
    ASSERT(c);
    rig r;
    ASSERT_OK(rig_open_c(&r, c, "srtf", NULL, &d));
    const gs_job *j[8];
    for (int i = 0; i < 8; i++) ASSERT(j[i] = add(&r, i + 1, 1, 1, 600 + 100 * i, "resnet50"));
    ASSERT_OK(gs_engine_run(r.e));
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(j[i]->state, GS_JOB_DONE);
        ASSERT_EQ(j[i]->preemptions, 0);
    }
    /* keyed at the best type rate: V100 here, 1 */
    ASSERT_NEAR(gs_engine_job_best_type_rate(r.e, j[0]), 1.0, 0);
    rig_close(&r);
}

static const test_case tests[] = {
    {"resnet50_k80_slower", test_resnet50_k80_slower},
    {"default_rows", test_default_rows},
    {"type_speed_off", test_type_speed_off},
    {"ref_gpu_type", test_ref_gpu_type},
    {"mixed_gang_slowest", test_mixed_gang_slowest},
    {"migrate_across_types", test_migrate_across_types},
    {"profiles_rate", test_profiles_rate},
    {"json_equals_csv", test_json_equals_csv},
    {"json_errors", test_json_errors},
    {"steps_and_weight", test_steps_and_weight},
    {"srtf_by_time", test_srtf_by_time},
    {"srtf_no_swap", test_srtf_no_swap},
};

TEST_MAIN(tests)
