/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_experiment.c - the experiment toolkit (docs/experiments.md): Student t quantiles
 * and confidence intervals, the metric table and its aggregation over seeds, policy items
 * with their own parameters, the measurement window (parsing and its effect on the
 * metrics), sweeps and generator specs, the comparison table's column widths.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "experiment.h"
#include "harness.h"
#include "sim.h"

#define DAY  "data/philly-1day/philly_20171002_tiresias.csv"
#define SPEC "data/philly-1day/n32g8_2sw.csv"

static void t_student_t(void)
{
    /* t_{0.975} from the exact distribution (numerical integration of the density) */
    ASSERT_NEAR(gs_t975(1), 12.706205, 1e-6);
    ASSERT_NEAR(gs_t975(4), 2.776445, 1e-6);
    ASSERT_NEAR(gs_t975(30), 2.042272, 1e-6);
    ASSERT_NEAR(gs_t975(31), 2.039513, 2e-6);
    ASSERT_NEAR(gs_t975(40), 2.021075, 2e-6);
    ASSERT_NEAR(gs_t975(100), 1.983972, 2e-6);
    ASSERT_NEAR(gs_t975(1000), 1.962339, 2e-6);
    ASSERT(isnan(gs_t975(0)));
    double m, ci;
    const double x[] = {1, 2, 3, 4, 5};
    gs_mean_ci95(x, 5, &m, &ci);
    ASSERT_NEAR(m, 3, 1e-12);
    /* sd = sqrt(2.5); half-width = t_{0.975,4} sd / sqrt(5) */
    ASSERT_NEAR(ci, 2.776445 * sqrt(2.5) / sqrt(5.0), 1e-6);
    gs_mean_ci95(x, 1, &m, &ci);
    ASSERT_NEAR(m, 1, 0);
    ASSERT_NEAR(ci, 0, 0);
    const double same[] = {7, 7, 7};
    gs_mean_ci95(same, 3, &m, &ci);
    ASSERT_NEAR(ci, 0, 0);
}

/* Results with only the scalar metrics filled in. */
static void fake(gs_sim_result *r, const char *policy, double jct, size_t done)
{
    memset(r, 0, sizeof *r);
    snprintf(r->policy, sizeof r->policy, "%s", policy);
    snprintf(r->placement, sizeof r->placement, "consolidate");
    r->avg_jct_s = jct;
    r->jobs_done = r->jobs = done;
    r->mech[GS_MECH_SUSPEND] = done;
    r->mech_gpu_s[GS_MECH_SUSPEND] = 1.5;
}

static void t_metric_table_and_agg(void)
{
    gs_sim_result res[4];
    fake(&res[0], "a", 10, 4);
    fake(&res[1], "a", 14, 6);
    fake(&res[2], "b", 20, 5);
    fake(&res[3], "b", 20, 5);
    gs_sim_result *rp[4] = {&res[0], &res[1], &res[2], &res[3]};
    /* every column is named once; the elastic ones only with an elastic run */
    size_t nc = gs_metric_cols(rp, 4, NULL, 0);
    gs_metric_col cols[64];
    ASSERT(nc <= 64);
    ASSERT_EQ(gs_metric_cols(rp, 4, cols, 64), nc);
    int suspends = 0, cost = 0;
    for (size_t c = 0; c < nc; c++) {
        for (size_t k = 0; k < c; k++) ASSERT(strcmp(cols[c].key, cols[k].key));
        ASSERT(strcmp(cols[c].key, "avg_goodput"));
        suspends |= !strcmp(cols[c].key, "suspends");
        cost |= !strcmp(cols[c].key, "cost_gpu_s");
    }
    ASSERT(suspends && cost);
    res[3].elastic = 1;
    size_t nce = gs_metric_cols(rp, 4, cols, 64);
    ASSERT(nce > nc);
    ASSERT_STR(cols[nce - 1].key, "avg_goodput");
    res[3].elastic = 0;

    gs_agg a;
    ASSERT_OK(gs_agg_build(rp, 1, 2, 2, &a));
    long jc = gs_agg_col(&a, "avg_jct_s"), dn = gs_agg_col(&a, "jobs_done");
    long su = gs_agg_col(&a, "suspends"), co = gs_agg_col(&a, "cost_gpu_s");
    ASSERT(jc >= 0 && dn >= 0 && su >= 0 && co >= 0);
    ASSERT_EQ(gs_agg_col(&a, "no_such_metric"), -1);
    /* policy a: 10 and 14 -> mean 12, sd 2 sqrt 2, half-width t_{.975,1} * 2 sqrt 2 / sqrt 2 */
    ASSERT_NEAR(a.mean[jc], 12, 1e-12);
    ASSERT_NEAR(a.ci[jc], 2 * 12.706205, 1e-5);
    ASSERT_NEAR(a.mean[dn], 5, 1e-12);
    ASSERT_NEAR(a.mean[su], 5, 1e-12);
    ASSERT_NEAR(a.mean[co], 1.5, 1e-12);
    /* policy b: equal values, no spread */
    ASSERT_NEAR(a.mean[a.ncols + (size_t)jc], 20, 1e-12);
    ASSERT_NEAR(a.ci[a.ncols + (size_t)jc], 0, 0);

    char path[128];
    snprintf(path, sizeof path, "/tmp/gsched-exp-%d.csv", (int)getpid());
    ASSERT_OK(gs_write_agg(path, &a, NULL, NULL));
    char *buf;
    size_t len;
    gs_diag d;
    gs_diag_init(&d, path);
    ASSERT_OK(gs_read_file(path, &buf, &len, &d));
    ASSERT(!strncmp(buf, "policy,placement,seeds,jobs,jobs_ci95,jobs_done,jobs_done_ci95,", 63));
    ASSERT_CONTAINS(buf, ",avg_jct_s,avg_jct_s_ci95,");
    ASSERT_CONTAINS(buf, "\na,consolidate,2,5.000,");
    ASSERT_CONTAINS(buf, ",12.000,25.412");
    free(buf);
    const char *vals[] = {"x,1"};
    ASSERT_OK(gs_write_agg(path, &a, "load", vals));
    ASSERT_OK(gs_read_file(path, &buf, &len, &d));
    ASSERT(!strncmp(buf, "key,value,policy,placement,seeds,", 33));
    ASSERT_CONTAINS(buf, "\nload,\"x,1\",b,consolidate,2,");
    free(buf);
    remove(path);
    gs_agg_release(&a);
}

static void t_policy_items(void)
{
    gs_policy_items it;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_policy_items_parse("gandiva,gandiva:pack=off", &it, &d));
    ASSERT_EQ(it.n, 2);
    ASSERT_STR(it.v[0].label, "gandiva");
    ASSERT_STR(it.v[1].label, "gandiva:pack=off");
    ASSERT_STR(it.v[1].name, "gandiva");
    ASSERT_EQ(it.v[1].params.n, 1);
    ASSERT_STR(gs_params_get(&it.v[1].params, "pack"), "off");
    gs_policy_items_release(&it);
    /* values with commas and colons */
    ASSERT_OK(gs_policy_items_parse(
        "tiresias-las:queues=3250,7200,yarn-cs:quotas=vc1:64,vc2:32:relax=on,fifo", &it, &d));
    ASSERT_EQ(it.n, 3);
    ASSERT_STR(it.v[0].label, "tiresias-las:queues=3250,7200");
    ASSERT_STR(gs_params_get(&it.v[0].params, "queues"), "3250,7200");
    ASSERT_STR(it.v[1].name, "yarn-cs");
    ASSERT_STR(gs_params_get(&it.v[1].params, "quotas"), "vc1:64,vc2:32");
    ASSERT_STR(gs_params_get(&it.v[1].params, "relax"), "on");
    ASSERT_STR(it.v[2].label, "fifo");
    gs_policy_items_release(&it);
    static const struct {
        const char *in, *msg;
    } bad[] = {
        {"fifo,,las", "empty item"},
        {"fifo,", "empty item"},
        {"gandiva:pack", "expected KEY=VALUE"},
        {"gandiva:", "expected KEY=VALUE"},
        {"fifo,fifo", "listed twice"},
        {"gandiva:pack=on:pack=off", "given twice"},
        {":pack=on", "no policy name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_diag_init(&d, NULL);
        if (gs_policy_items_parse(bad[i].in, &it, &d) == 0) T_FAIL("'%s' accepted", bad[i].in);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
        ASSERT_EQ(it.n, 0);
    }
    /* a label of GS_LABEL_MAX characters is kept whole (a result holds it), one more is
     * refused rather than cut (two long items would read the same in every output) */
    char lab[GS_LABEL_MAX + 2];
    memset(lab, '0', sizeof lab);
    memcpy(lab, "tiresias-las:queues=1", 21);
    lab[GS_LABEL_MAX] = '\0';
    ASSERT_OK(gs_policy_items_parse(lab, &it, &d));
    ASSERT_EQ(strlen(it.v[0].label), GS_LABEL_MAX);
    gs_sim_result r;
    ASSERT(sizeof r.policy > GS_LABEL_MAX);
    gs_policy_items_release(&it);
    lab[GS_LABEL_MAX] = '0';
    lab[GS_LABEL_MAX + 1] = '\0';
    gs_diag_init(&d, NULL);
    ASSERT(gs_policy_items_parse(lab, &it, &d) != 0);
    ASSERT_CONTAINS(d.msg, "characters long (at most 255");
    ASSERT_EQ(it.n, 0);
}

static void t_window_parse(void)
{
    gs_time a, b;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_window_parse("2h:10h", &a, &b, &d));
    ASSERT_EQ(a, 2 * 3600 * GS_SEC);
    ASSERT_EQ(b, 10 * 3600 * GS_SEC);
    ASSERT_OK(gs_window_parse("7200:36000", &a, &b, &d));
    ASSERT_EQ(a, 7200 * GS_SEC);
    ASSERT_EQ(b, 36000 * GS_SEC);
    ASSERT_OK(gs_window_parse(":1h", &a, &b, &d));
    ASSERT_EQ(a, 0);
    ASSERT_OK(gs_window_parse("1h:", &a, &b, &d));
    ASSERT_EQ(b, GS_TIME_MAX);
    ASSERT_OK(gs_window_parse("1:30:2h", &a, &b, &d)); /* M:S on the left, the only split */
    ASSERT_EQ(a, 90 * GS_SEC);
    ASSERT(gs_window_parse("1:30:2:00", &a, &b, &d) != 0);
    ASSERT_CONTAINS(d.msg, "several ways");
    ASSERT(gs_window_parse("5h:1h", &a, &b, &d) != 0);
    ASSERT_CONTAINS(d.msg, "END must be after START");
    ASSERT(gs_window_parse("soon", &a, &b, &d) != 0);
    ASSERT_CONTAINS(d.msg, "expected START:END");
    ASSERT(gs_window_parse("-1h:2h", &a, &b, &d) != 0);
    ASSERT_CONTAINS(d.msg, "START '-1h': negative duration");
    /* one split: the message says which side and why */
    ASSERT(gs_window_parse("1e30:", &a, &b, &d) != 0);
    ASSERT_CONTAINS(d.msg, "--window '1e30:': START '1e30': too large a duration");
    ASSERT(gs_window_parse("2h:5x", &a, &b, &d) != 0);
    ASSERT_CONTAINS(d.msg, "END '5x': unknown unit 'x'");
}

static void t_sweep_and_spec(void)
{
    gs_sweep s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gs_sweep_parse("load=0.5,0.7,0.9", &s, &d));
    ASSERT_STR(s.key, "load");
    ASSERT_EQ(s.n, 3);
    ASSERT_STR(s.values[2], "0.9");
    gs_sweep_release(&s);
    ASSERT(gs_sweep_parse("load", &s, &d) != 0);
    ASSERT(gs_sweep_parse("load=1,,2", &s, &d) != 0);
    ASSERT(gs_sweep_parse("load=1,1", &s, &d) != 0);
    ASSERT_CONTAINS(d.msg, "listed twice");
    char *x = gs_spec_with("jobs=100,load=0.5,mix=gavel", "load", "0.9");
    ASSERT_STR(x, "jobs=100,load=0.9,mix=gavel");
    free(x);
    x = gs_spec_with("jobs=100", "load", "0.9");
    ASSERT_STR(x, "jobs=100,load=0.9");
    free(x);
    x = gs_spec_with("", "jobs", "5");
    ASSERT_STR(x, "jobs=5");
    free(x);
}

static int run(const gs_trace *t, const char *policy, int window, gs_time a, gs_time b,
               gs_sim_result *r)
{
    gs_params p;
    gs_params_init(&p);
    gs_sim_opts o = {0};
    o.cluster_spec = test_src(SPEC);
    o.policy = policy;
    o.params = &p;
    gs_engine_opts_init(&o.eopts);
    o.window = window;
    o.win_start = a;
    o.win_end = b;
    gs_diag d;
    gs_diag_init(&d, t->path);
    memset(r, 0, sizeof *r);
    int rc = gs_sim_run(&o, t, r, &d);
    if (rc) fprintf(stderr, "  %s\n", d.msg);
    gs_params_release(&p);
    return rc;
}

static void t_window_metrics(void)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, DAY);
    ASSERT_OK(gs_trace_load(test_src(DAY), &t, &d));
    gs_sim_result all, wide, win;
    ASSERT_OK(run(&t, "fifo", 0, 0, 0, &all));
    /* a window holding every job measures what no window does */
    ASSERT_OK(run(&t, "fifo", 1, 0, GS_TIME_MAX, &wide));
    ASSERT_EQ(wide.jobs, all.jobs);
    ASSERT_NEAR(wide.avg_jct_s, all.avg_jct_s, 0);
    ASSERT_NEAR(wide.gpu_util, all.gpu_util, 0);
    ASSERT_NEAR(wide.makespan_s, all.makespan_s, 0);
    gs_time a = 2 * 3600 * GS_SEC, b = 10 * 3600 * GS_SEC;
    ASSERT_OK(run(&t, "fifo", 1, a, b, &win));
    /* the jobs submitted in [a, b), their mean JCT from the job records */
    size_t n = 0;
    double sum = 0;
    for (size_t i = 0; i < gs_engine_njobs(win.engine); i++) {
        const gs_job *j = gs_engine_job(win.engine, i);
        if (j->submit < a || j->submit >= b) continue;
        n++;
        if (j->state == GS_JOB_DONE) sum += gs_time_to_sec(j->end - j->submit);
    }
    ASSERT(n > 0 && n < all.jobs);
    ASSERT_EQ(win.jobs, n);
    ASSERT_NEAR(win.avg_jct_s, round(sum / (double)win.jobs_done * 1000) / 1000, 1e-9);
    /* utilisation over [a, b) from the timeline */
    double area = 0;
    for (size_t i = 0; i < win.ntl; i++) {
        gs_time x = win.tl[i].t, y = i + 1 < win.ntl ? win.tl[i + 1].t : b;
        if (x < a) x = a;
        if (y > b) y = b;
        if (y > x) area += win.tl[i].alloc * gs_time_to_sec(y - x);
    }
    ASSERT_NEAR(win.gpu_util, area / (256.0 * gs_time_to_sec(b - a)), 1e-6);
    ASSERT(win.gpu_util > 2 * all.gpu_util); /* the busy hours, not the long tail */
    gs_sim_result_release(&all);
    gs_sim_result_release(&wide);
    gs_sim_result_release(&win);
    gs_trace_release(&t);
}

/* The plain comparison table (gs_print_compare): every block's columns line up whatever the
 * labels' lengths - the label column is as wide as the longest label (an item such as
 * gavel:hetero=agnostic is longer than the old fixed 18 columns and shifted its row). */
static void t_compare_table_width(void)
{
    gs_sim_result res[3];
    fake(&res[0], "gavel", 10, 4);
    fake(&res[1], "gavel:hetero=agnostic:round=10m", 14, 6);
    fake(&res[2], "fifo", 20, 5);
    res[2].elastic = 1; /* the ELASTIC block too */
    gs_sim_result *rp[3] = {&res[0], &res[1], &res[2]};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT(f != NULL);
    gs_print_compare(f, rp, 3);
    ASSERT_EQ(fclose(f), 0);
    /* each block: a header line and one row per run; every line of a block has the same
     * length (its columns are fixed-width), and in the first block a row's placement (left
     * aligned) starts where the header's PLACEMENT does */
    int blocks = 0;
    char *save = NULL;
    size_t hlen = 0, hcol = 0;
    int rows = -1;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t l = strlen(line), col = strcspn(line, " ");
        col += strspn(line + col, " ");
        if (rows < 0 || rows == 3) { /* a header */
            ASSERT(isupper((unsigned char)line[0]));
            hlen = l;
            if (!blocks) hcol = col;
            rows = 0;
            blocks++;
            continue;
        }
        if (blocks == 1) ASSERT_EQ(col, hcol);
        ASSERT_EQ(l, hlen);
        rows++;
    }
    ASSERT_EQ(rows, 3);
    ASSERT_EQ(blocks, 4); /* results, FAIRNESS, ELASTIC, MECHANISMS */
    /* the label column is as wide as the longest label plus one space */
    ASSERT_EQ(hcol, strlen("gavel:hetero=agnostic:round=10m") + 1);
    free(buf);
    /* short labels keep the 18-column layout */
    res[1].policy[5] = '\0';
    f = open_memstream(&buf, &len);
    ASSERT(f != NULL);
    gs_print_compare(f, rp, 3);
    ASSERT_EQ(fclose(f), 0);
    ASSERT(!strncmp(buf, "POLICY             PLACEMENT", 28));
    free(buf);
}

static const test_case tests[] = {
    {"student_t", t_student_t},
    {"metric_table_and_agg", t_metric_table_and_agg},
    {"policy_items", t_policy_items},
    {"window_parse", t_window_parse},
    {"sweep_and_spec", t_sweep_and_spec},
    {"window_metrics", t_window_metrics},
    {"compare_table_width", t_compare_table_width},
};

TEST_MAIN(tests)
