/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_report.c - the HTML report: well-formed enough (balanced tags), self-
 * contained (no URL but the SVG namespace, no scripts), names every policy,
 * escapes user strings, stays small when downsampling, and is byte-identical
 * when written twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "report.h"

#define DAY  "data/philly-1day/philly_20171002_tiresias.csv"
#define SPEC "data/philly-1day/n32g8_2sw.csv"

/* Run 'policy' on the bundled 1-day window with default parameters. */
static int run(const gs_trace *t, const char *policy, gs_sim_result *r)
{
    gs_params p;
    gs_params_init(&p);
    gs_sim_opts o = {0};
    o.cluster_spec = test_src(SPEC);
    o.policy = policy;
    o.params = &p;
    gs_engine_opts_init(&o.eopts);
    gs_diag d;
    gs_diag_init(&d, t->path);
    memset(r, 0, sizeof *r);
    int rc = gs_sim_run(&o, t, r, &d);
    if (rc) fprintf(stderr, "  %s\n", d.msg);
    gs_params_release(&p);
    return rc;
}

static char *slurp(const char *path, size_t *len)
{
    char *b;
    size_t n;
    gs_diag d;
    gs_diag_init(&d, path);
    if (gs_read_file(path, &b, &n, &d)) return NULL;
    if (len) *len = n;
    return b;
}

static size_t count(const char *hay, const char *needle)
{
    size_t k = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) k++;
    return k;
}

/* DIR/report.html in a fresh directory per tag (the figures' SVG files go beside it). */
static void tmp_path(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "/tmp/gsched-report-%d-%s", (int)getpid(), tag);
    mkdir(buf, 0700);
    strncat(buf, "/report.html", cap - strlen(buf) - 1);
}

/* Remove a report and its figures' files (report-NN-*.svg), then its directory. */
static void rm_report(const char *path)
{
    char pat[256], dir[256];
    snprintf(pat, sizeof pat, "%.*s-[0-9][0-9]-*.svg", (int)(strlen(path) - 5), path);
    glob_t g;
    if (glob(pat, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++) remove(g.gl_pathv[i]);
    globfree(&g);
    remove(path);
    snprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = '\0';
    rmdir(dir);
}

/* The structural checks every report must pass; returns a message or NULL. */
static const char *check_page(const char *s)
{
    static char msg[160];
    if (strncmp(s, "<!DOCTYPE html>", 15)) return "does not start with <!DOCTYPE html>";
    static const char *const tags[][2] = {
        {"<html", "</html>"},     {"<head>", "</head>"},   {"<body>", "</body>"},
        {"<svg", "</svg>"},       {"<table", "</table>"},  {"<section", "</section>"},
        {"<figure", "</figure>"}, {"<style>", "</style>"}, {"<tr>", "</tr>"},
        {"<dl", "</dl>"},         {"<code", "</code>"},    {"<text", "</text>"},
    };
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
        size_t a = count(s, tags[i][0]), b = count(s, tags[i][1]);
        if (a != b) {
            snprintf(msg, sizeof msg, "%zu '%s' but %zu '%s'", a, tags[i][0], b, tags[i][1]);
            return msg;
        }
    }
    if (count(s, "<html") != 1 || count(s, "<body>") != 1) return "not exactly one html/body";
    /* self-contained: the SVG namespace is the only URL */
    static const char *const schemes[] = {"http://", "https://"};
    for (int k = 0; k < 2; k++)
        for (const char *p = s; (p = strstr(p, schemes[k])); p++)
            if (strncmp(p, "http://www.w3.org/2000/svg\"", 27)) return "external URL";
    if (strstr(s, "<script") || strstr(s, "<link") || strstr(s, "src=") || strstr(s, "@import") ||
        strstr(s, "url("))
        return "script or external resource";
    return NULL;
}

static void t_report_two_policies(void)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, DAY);
    ASSERT_OK(gs_trace_load(test_src(DAY), &t, &d));
    gs_sim_result res[2];
    ASSERT_OK(run(&t, "fifo", &res[0]));
    ASSERT_OK(run(&t, "fifo-backfill", &res[1]));
    gs_sim_result *rp[2] = {&res[0], &res[1]};

    gs_params p;
    gs_params_init(&p);
    ASSERT_OK(gs_params_set(&p, "fit", "first"));
    ASSERT_OK(gs_params_set(&p, "note", "<b>&"));
    gs_run_info info = {test_src(DAY),  t.sha256,   gs_trace_format_name(t.format),
                        test_src(SPEC), "0123abcd", NULL,
                        NULL,           7,          &p};

    char a[128], b[128];
    tmp_path(a, sizeof a, "a");
    tmp_path(b, sizeof b, "b");
    ASSERT_OK(gs_write_report(a, rp, 2, &info));
    ASSERT_OK(gs_write_report(b, rp, 2, &info));
    size_t na = 0, nb = 0;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    ASSERT(x && y);
    /* deterministic */
    ASSERT_EQ(na, nb);
    ASSERT(memcmp(x, y, na) == 0);
    /* no temporary file left behind */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", a);
    ASSERT(access(tmp, F_OK) != 0);

    const char *bad = check_page(x);
    if (bad) T_FAIL("report: %s", bad);
    ASSERT_CONTAINS(x, "<title>gsched simulation report</title>");
    ASSERT_CONTAINS(x, ">fifo<");
    ASSERT_CONTAINS(x, ">fifo-backfill<");
    /* 5 CDFs (JCT, queue, first start, slowdown, rho); 2 series in each of 3 views of the time
     * axis (whole run, the arrivals - a day of a 13-day run -, the whole run 4x wide) */
    ASSERT_EQ(count(x, "<svg"), 11);
    ASSERT_CONTAINS(x, "id=\"tv-all\" checked>");
    ASSERT_CONTAINS(x, "id=\"tv-arr\">");
    ASSERT_CONTAINS(x, "id=\"tv-zoom\">");
    ASSERT(!strstr(x, "id=\"tv-win\"")); /* no measurement window */
    /* every figure is also a file beside the report, linked under it */
    ASSERT_EQ(count(x, "<a class=\"svg\" href=\"report-"), 11);
    for (const char *h = x; (h = strstr(h, "<a class=\"svg\" href=\"")); h++) {
        char file[256], fp[512];
        const char *q = h + 21, *e = strchr(q, '"');
        snprintf(file, sizeof file, "%.*s", (int)(e - q), q);
        snprintf(fp, sizeof fp, "%.*s%s", (int)(strrchr(a, '/') + 1 - a), a, file);
        char *sv = slurp(fp, NULL);
        if (!sv) T_FAIL("figure file '%s' missing", fp);
        ASSERT(!strncmp(sv, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=", 49));
        ASSERT_EQ(count(sv, "<svg"), 1);
        ASSERT_EQ(count(sv, "</svg>"), 1);
        ASSERT(strstr(sv, "</svg>")[6] == '\0');
        /* the same drawing as inline */
        size_t fl = strlen(sv) - 39;
        ASSERT(fl < 1000000);
        ASSERT(strstr(x, sv + 39) != NULL);
        free(sv);
    }
    ASSERT_CONTAINS(x, "Job completion time (JCT), CDF");
    ASSERT_CONTAINS(x, "Queuing delay, CDF");
    ASSERT_CONTAINS(x, "Time to first start, CDF");
    ASSERT_CONTAINS(x, "Avg 1st start (s)");
    ASSERT_CONTAINS(x, "Allocated GPUs");
    ASSERT_CONTAINS(x, "Pending jobs");
    /* run parameters and checksums */
    ASSERT_CONTAINS(x, t.sha256);
    ASSERT_CONTAINS(x, "0123abcd");
    ASSERT_CONTAINS(x, "<dt>Seed</dt><dd>7</dd>");
    ASSERT_CONTAINS(x, "fit=first");
    ASSERT_CONTAINS(x, "n32g8_2sw.csv");
    ASSERT_CONTAINS(x, "tiresias format");
    /* user strings are escaped */
    ASSERT_CONTAINS(x, "note=&lt;b&gt;&amp;");
    ASSERT(!strstr(x, "note=<b>"));
    /* the table: fifo-backfill has the lowest average JCT on this day (11,191.9 s) */
    ASSERT_CONTAINS(x, "1,353");
    /* the avg JCT cell and "best", then the fairness table's lowest average slowdown and max
     * rho and highest Jain's index (all fifo-backfill's here) */
    ASSERT_EQ(count(x, "class=\"best\""), 5);
    ASSERT(res[1].avg_slowdown < res[0].avg_slowdown && res[1].max_rho < res[0].max_rho);
    ASSERT(res[1].jain_rho > res[0].jain_rho);
    /* fairness (docs/metrics.md): the table, its CDFs, the per-size breakdown; one user and
     * one VC here, so no per-user table nor VC section */
    ASSERT_CONTAINS(x, "<h2>Fairness</h2>");
    ASSERT_CONTAINS(x, "Slowdown, CDF");
    ASSERT_CONTAINS(x, "Finish-time fairness &rho;, CDF");
    ASSERT_CONTAINS(x, ">fair share</text>");
    ASSERT_CONTAINS(x, "<h3 style=\"margin-top:18px\">Per job size</h3>");
    ASSERT(!strstr(x, "Per user</h3>"));
    ASSERT(!strstr(x, "<h2>Virtual clusters</h2>"));
    ASSERT_CONTAINS(x, "time runnable without GPUs");
    char cell[64];
    snprintf(cell, sizeof cell, "<td class=\"best\">%.2f</td>", res[1].avg_slowdown);
    ASSERT_CONTAINS(x, cell);
    ASSERT(res[1].avg_jct_s < res[0].avg_jct_s);
    const char *best = strstr(x, "class=\"best\"");
    ASSERT(best > strstr(x, ">fifo-backfill<"));
    ASSERT_CONTAINS(x, "Lowest average JCT: <b>fifo-backfill</b>");
    /* the 256-GPU capacity line */
    ASSERT_CONTAINS(x, "cluster capacity: 256 GPUs");
    /* no wall time */
    ASSERT(!strstr(x, "wall"));
    free(x);
    free(y);
    rm_report(a);
    rm_report(b);

    /* without run info: still a complete page, with no run parameters */
    tmp_path(a, sizeof a, "a");
    ASSERT_OK(gs_write_report(a, rp, 2, NULL));
    x = slurp(a, NULL);
    ASSERT(x);
    bad = check_page(x);
    if (bad) T_FAIL("report without info: %s", bad);
    ASSERT(!strstr(x, "Seed"));
    ASSERT(!strstr(x, "SHA-256"));
    ASSERT_CONTAINS(x, ">fifo-backfill<");
    free(x);
    rm_report(a);

    gs_params_release(&p);
    gs_sim_result_release(&res[0]);
    gs_sim_result_release(&res[1]);
    gs_trace_release(&t);
}

/* A trace with users and VCs: the per-user table with its Jain row, and the VC section. */
static void t_report_users_vcs(void)
{
    char trace[128];
    snprintf(trace, sizeof trace, "/tmp/gsched-report-%d-users.csv", (int)getpid());
    FILE *f = fopen(trace, "w");
    ASSERT(f);
    fputs("submit,duration,gpus,user,vc\n", f);
    for (int i = 0; i < 40; i++)
        fprintf(f, "%d,%d,%d,u%d,%s\n", i * 30, 100 + 37 * (i % 9), 1 << (i % 3), i % 3,
                i % 2 ? "research" : "prod");
    fclose(f);
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, trace);
    ASSERT_OK(gs_trace_load(trace, &t, &d));
    gs_sim_result res[2];
    ASSERT_OK(run(&t, "fifo", &res[0]));
    ASSERT_OK(run(&t, "tiresias-las", &res[1]));
    gs_sim_result *rp[2] = {&res[0], &res[1]};
    char a[128];
    tmp_path(a, sizeof a, "users");
    ASSERT_OK(gs_write_report(a, rp, 2, NULL));
    char *x = slurp(a, NULL);
    ASSERT(x);
    const char *bad = check_page(x);
    if (bad) T_FAIL("report with users: %s", bad);
    ASSERT_EQ(res[0].nusers, 3);
    ASSERT_CONTAINS(x, "Per user</h3>");
    ASSERT_CONTAINS(x, "<tr><td class=\"l\">u1</td>");
    ASSERT_CONTAINS(x, "<b>Jain&rsquo;s index</b>");
    char cell[64];
    snprintf(cell, sizeof cell, "<td>%.3f</td>", res[1].jain_user_slowdown);
    ASSERT_CONTAINS(x, cell);
    ASSERT_CONTAINS(x, "<h2>Virtual clusters</h2>");
    ASSERT_CONTAINS(x, "<tr><td class=\"l\">research</td>");
    ASSERT_EQ(count(x, ">research</td>"), 1); /* the VC named once for its rows */
    free(x);
    rm_report(a);
    remove(trace);
    gs_sim_result_release(&res[0]);
    gs_sim_result_release(&res[1]);
    gs_trace_release(&t);
}

/* A policy name needing escapes, identical runs, and a long timeline to downsample. */
static void t_report_synthetic(void)
{
    gs_sim_result r[2];
    memset(r, 0, sizeof r);
    snprintf(r[0].policy, sizeof r[0].policy, "a<&>\"b");
    snprintf(r[1].policy, sizeof r[1].policy, "copy");
    const size_t rows = 200000;
    for (int k = 0; k < 2; k++) {
        snprintf(r[k].placement, sizeof r[k].placement, "count");
        r[k].total_gpus = 64;
        r[k].tl = malloc(rows * sizeof *r[k].tl);
        ASSERT(r[k].tl);
        r[k].ntl = r[k].captl = rows;
        for (size_t i = 0; i < rows; i++) {
            /* one 10 s spike of 1,000 pending jobs must survive downsampling */
            int32_t pending = i == rows / 2 ? 1000 : (int32_t)(i % 13);
            r[k].tl[i] = (gs_tl_row){(gs_time)i * 10 * GS_SEC, (int32_t)(i % 7), 1, pending};
        }
    }
    gs_sim_result *rp[2] = {&r[0], &r[1]};
    char a[128];
    tmp_path(a, sizeof a, "syn");
    ASSERT_OK(gs_write_report(a, rp, 2, NULL));
    size_t n = 0;
    char *x = slurp(a, &n);
    ASSERT(x);
    const char *bad = check_page(x);
    if (bad) T_FAIL("synthetic report: %s", bad);
    ASSERT_CONTAINS(x, "a&lt;&amp;&gt;&quot;b");
    ASSERT(!strstr(x, "a<&>"));
    ASSERT_CONTAINS(x, "max per interval");
    ASSERT_CONTAINS(x, "Identical lines");
    ASSERT_CONTAINS(x, "a&lt;&amp;&gt;&quot;b</b> = <b>copy</b>");
    /* 2 x 200,000 rows x 2 series drawn with at most 2 x 750 vertices each */
    ASSERT_LE(n, 150000);
    /* the spike sets the pending axis: its top tick is 1,000 */
    ASSERT_CONTAINS(x, ">1,000</text>");
    free(x);
    rm_report(a);
    for (int k = 0; k < 2; k++) free(r[k].tl);
}

/* No runs at all: still a valid page. */
static void t_report_empty(void)
{
    char a[128];
    tmp_path(a, sizeof a, "empty");
    ASSERT_OK(gs_write_report(a, NULL, 0, NULL));
    char *x = slurp(a, NULL);
    ASSERT(x);
    const char *bad = check_page(x);
    if (bad) T_FAIL("empty report: %s", bad);
    free(x);
    rm_report(a);
    ASSERT_EQ(gs_write_report("/nonexistent-dir/report.html", NULL, 0, NULL), GS_EIO);
}

/*
 * Runs over seeds and a sweep (experiments.md): the aggregated table and the error bars; the
 * measurement window in the run info and as a view of the time axis.
 */
static void t_report_agg(void)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, DAY);
    ASSERT_OK(gs_trace_load(test_src(DAY), &t, &d));
    gs_sim_result res[2];
    ASSERT_OK(run(&t, "fifo", &res[0]));
    ASSERT_OK(run(&t, "fifo-backfill", &res[1]));
    /* a second "seed" of each: the same run with another average JCT (scalars only) */
    gs_sim_result other[2] = {res[0], res[1]};
    other[0].avg_jct_s += 1000;
    other[1].avg_jct_s -= 500;
    gs_sim_result *runs[4] = {&res[0], &other[0], &res[1], &other[1]};
    /* a label longer than the bars' label column (policy items are labelled as typed) */
    const char *lng = "fifo-backfill:objective=makespan:hetero=agnostic";
    snprintf(res[1].policy, sizeof res[1].policy, "%s", lng);
    gs_agg agg;
    ASSERT_OK(gs_agg_build(runs, 1, 2, 2, &agg));
    gs_run_info info = {test_src(DAY), t.sha256, "tiresias", test_src(SPEC), NULL, NULL,
                        NULL,          7,        NULL};
    gs_report_agg ra = {&agg, NULL, NULL, 7};
    gs_sim_result *rp[2] = {&res[0], &res[1]};
    /* a measurement window from 2 h to 10 h */
    for (int i = 0; i < 2; i++) {
        res[i].window = 1;
        res[i].win_start = 2 * 3600 * GS_SEC;
        res[i].win_end = 10 * 3600 * GS_SEC;
        res[i].jobs = 1000; /* the jobs submitted in the window (as the metrics count them) */
    }
    char a[128];
    tmp_path(a, sizeof a, "agg");
    ASSERT_OK(gs_write_report_ex(a, rp, 2, &info, &ra));
    char *x = slurp(a, NULL);
    ASSERT(x);
    const char *bad = check_page(x);
    if (bad) T_FAIL("report: %s", bad);
    ASSERT_CONTAINS(x, "<h2>Across seeds</h2>");
    ASSERT_CONTAINS(x, "<dt>Seeds</dt><dd>7 to 8 (2 runs per policy)</dd>");
    ASSERT_CONTAINS(x, "Student t, 1 degrees of freedom");
    /* fifo's mean JCT and its half-width t(0.975, 1) * 1000 / sqrt 2 * sqrt 2 / ... */
    char cell[96], m[32], h[32];
    double mean = res[0].avg_jct_s + 500, hw = 12.706205 * 1000 / sqrt(2.0) / sqrt(2.0);
    snprintf(m, sizeof m, "%.1f", mean);
    snprintf(h, sizeof h, "%.1f", hw);
    snprintf(cell, sizeof cell, "%c%c,%s<small>&plusmn; %c,%s</small>", m[0], m[1], m + 2, h[0],
             h + 1);
    ASSERT_CONTAINS(x, cell);
    /* six metrics with error bars: only the average JCT differs between the seeds, so it
     * alone has bars, one per policy */
    ASSERT_CONTAINS(x, "<h3>Average JCT (s)</h3>");
    ASSERT_CONTAINS(x, "<h3>GPU utilisation (%)</h3>");
    ASSERT_EQ(count(x, "class=\"err\""), 2);
    /* the long label is shortened around an ellipsis beside the bars, whole in the tooltip,
     * never drawn whole past the figure's left edge */
    char full[160];
    snprintf(full, sizeof full, "<title>%s</title>%s</text>", lng, lng);
    ASSERT(!strstr(x, full));
    snprintf(full, sizeof full, "<title>%s</title>fifo-backfill:obj\xe2\x80\xa6", lng);
    ASSERT_EQ(count(x, full), 6);
    /* the window: in the run info, shaded on the time series, and a view of its own */
    ASSERT_CONTAINS(x, "<dt>Measurement window</dt><dd>jobs submitted from 2.0 h to 10.0 h");
    /* the trace has all its jobs; the window's count (1,000 here) is said beside it */
    ASSERT_CONTAINS(x, "(tiresias format) &middot; 1,353 jobs (1,000 submitted in the "
                       "measurement window)</dd>");
    ASSERT_CONTAINS(x, "&middot; 1,353 jobs (1,000 measured) &middot;");
    ASSERT_CONTAINS(x, "id=\"tv-win\">");
    ASSERT_CONTAINS(x, ">measurement window</text>");
    free(x);
    rm_report(a);

    /* a sweep over two values: metric against the value, one line per policy */
    gs_sim_result *sw[8] = {&res[0], &other[0], &res[1], &other[1],
                            &res[0], &res[0],   &res[1], &res[1]};
    gs_agg_release(&agg);
    ASSERT_OK(gs_agg_build(sw, 2, 2, 2, &agg));
    const char *vals[] = {"0.5", "0.9"};
    gs_report_agg rs = {&agg, "gen.load", vals, 7};
    tmp_path(a, sizeof a, "sweep");
    ASSERT_OK(gs_write_report_ex(a, rp, 2, &info, &rs));
    x = slurp(a, NULL);
    ASSERT(x);
    bad = check_page(x);
    if (bad) T_FAIL("sweep report: %s", bad);
    ASSERT_CONTAINS(x, "<h2>Sweep over <code>gen.load</code></h2>");
    ASSERT_CONTAINS(x, "<dt>Seeds</dt><dd>7 to 8 (2 runs per policy and value)</dd>");
    /* 6 figures x 2 policies x 2 values; bars where the seeds differ (value 0.5, JCT) */
    ASSERT_EQ(count(x, "<circle "), 24);
    ASSERT_EQ(count(x, "class=\"err\""), 2);
    ASSERT_CONTAINS(x, ">0.9</text>");
    ASSERT_CONTAINS(x, "href=\"report-01-average-jct-s-against-gen-load-per-policy.svg\"");
    free(x);
    rm_report(a);
    gs_agg_release(&agg);
    gs_sim_result_release(&res[0]);
    gs_sim_result_release(&res[1]);
    gs_trace_release(&t);
}

static const test_case tests[] = {
    {"report_agg", t_report_agg},
    {"report_two_policies", t_report_two_policies},
    {"report_users_vcs", t_report_users_vcs},
    {"report_synthetic", t_report_synthetic},
    {"report_empty", t_report_empty},
};

TEST_MAIN(tests)
