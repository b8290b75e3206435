/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - the self-contained HTML comparison report (see report.h).
 *
 * The page is built in memory: a header with the run parameters and input
 * checksums, for runs over seeds or a sweep the aggregates with error bars
 * (write_agg: bars per policy, or lines against the swept value), a
 * per-policy table, the fairness table with the slowdown and finish-time
 * fairness CDFs, the JCT / queue / first-start CDFs, per-VC, per-user and
 * per-size tables (docs/metrics.md), and the time series in views of the
 * time axis (write_timelines: whole run, arrivals, measurement window, 4x
 * wide; radio buttons and CSS, no script), as inline SVG drawn by the small
 * plotting helpers below (frame, axes, legend, step lines, error bars).  Then
 * export_figures copies it to the file and writes every <svg> figure beside
 * it as <report name>-NN-<aria label>.svg, linked under the figure.
 *
 * Invariants:
 *   - self-contained: inline CSS and SVG, no JavaScript, no fonts; the only
 *     URL in the file is the SVG namespace; the only links are the relative
 *     ones to its own figures' SVG files, which hold the same drawings;
 *   - deterministic: the page and the figures depend only on the results,
 *     the run info and the report's file name, through fixed printf formats;
 *     no pointers, no clock, no wall_s;
 *   - bounded: a CDF keeps at most CDF_POINTS quantile points per policy and
 *     a time series at most 2 * TS_BUCKETS vertices per view (the maximum of
 *     each interval; 4x that in the 4x wide view);
 *   - every string that comes from the user (paths, parameters, policy
 *     names, swept values) goes through esc();
 *   - written to "<path>.tmp" then renamed, like the other writers (each
 *     figure file too).
 */
#include <math.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/version.h"
#include "report.h"

#define CDF_POINTS     500  /* quantile points per policy and CDF */
#define TS_MAX_POINTS  1500 /* time series above this many rows are bucketed */
#define TS_BUCKETS     750  /* intervals of a bucketed time series (<= 2 vertices each) */
#define CDF_FLOOR_S    1.0  /* log axes start at 1 s; smaller values are drawn there */
#define CHAR_W         6.8  /* estimated width of a 12px sans-serif character */
#define SVG_NS         "http://www.w3.org/2000/svg"
#define SVG_FONT       "system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
#define COLOR_TEXT     "#3e4c59"
#define COLOR_AXIS     "#9aa5b1"
#define COLOR_GRID     "#e4e7eb"
#define COLOR_GRID_MIN "#f2f4f6"

/* Okabe-Ito, ordered for contrast on white; yellow last. */
static const char *const PALETTE[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#F0E442"};
#define NPALETTE (sizeof PALETTE / sizeof *PALETTE)

static const char *color_of(size_t i)
{
    return PALETTE[i % NPALETTE];
}

/* Beyond the palette, lines are told apart by their dash pattern as well. */
static const char *dash_of(size_t i)
{
    static const char *const d[] = {NULL, "8 4", "2 3"};
    return d[(i / NPALETTE) % 3];
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) abort(); /* programs abort on out-of-memory */
    return p;
}

/* ---- text --------------------------------------------------------------------------------- */

/* HTML-escape s (text and attribute values alike); control characters become '?'. */
static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        case '\t': fputc(' ', f); break;
        default: fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
        }
    }
}

/* v with 'dec' decimals and thousands separators: "12,318.9". */
static void fmt_num(char *buf, size_t cap, double v, int dec)
{
    char tmp[64];
    if (!isfinite(v)) {
        snprintf(buf, cap, "-");
        return;
    }
    snprintf(tmp, sizeof tmp, "%.*f", dec, v);
    const char *p = tmp;
    size_t o = 0;
    if (*p == '-') buf[o++] = *p++;
    size_t nint = strcspn(p, ".");
    for (size_t i = 0; p[i] && o + 2 < cap; i++) {
        if (i && i < nint && (nint - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = p[i];
    }
    buf[o] = '\0';
}

static void fmt_count(char *buf, size_t cap, unsigned long long v)
{
    fmt_num(buf, cap, (double)v, 0);
}

/* A duration for people: "45.0 s", "12.5 min", "3.4 h", "13.2 d". */
static void fmt_human(char *buf, size_t cap, double s)
{
    if (!isfinite(s))
        snprintf(buf, cap, "-");
    else if (s < 59.95)
        snprintf(buf, cap, "%.1f s", s);
    else if (s < 59.95 * 60)
        snprintf(buf, cap, "%.1f min", s / 60);
    else if (s < 23.95 * 3600)
        snprintf(buf, cap, "%.1f h", s / 3600);
    else
        snprintf(buf, cap, "%.1f d", s / 86400);
}

/* Label of a power of ten in seconds: "1 s", "100 s", "1k s", "10M s". */
static void fmt_pow10_s(char *buf, size_t cap, int k)
{
    static const char *const unit[] = {"", "k", "M", "G", "T"};
    if (k < 0 || k >= 15) {
        snprintf(buf, cap, "1e%d s", k);
        return;
    }
    snprintf(buf, cap, "%s%s s", k % 3 == 0 ? "1" : k % 3 == 1 ? "10" : "100", unit[k / 3]);
}

/* Label of a power of ten as a plain number: "0.01", "1", "100", "10k". */
static void fmt_pow10(char *buf, size_t cap, int k)
{
    static const char *const unit[] = {"", "k", "M", "G", "T"};
    if (k < -6 || k >= 15)
        snprintf(buf, cap, "1e%d", k);
    else if (k < 0)
        snprintf(buf, cap, "%.*f", -k, pow(10, k));
    else
        snprintf(buf, cap, "%s%s", k % 3 == 0 ? "1" : k % 3 == 1 ? "10" : "100", unit[k / 3]);
}

/* ---- series ------------------------------------------------------------------------------- */

typedef struct pt {
    double x, y;
} pt;

/*
 * A step line: y = v[i].y from v[i].x up to v[i+1].x.  CDFs start at y = 0
 * (from_zero) and stop at their last point; time series hold their last value
 * until x_end.
 */
typedef struct series {
    pt *v;
    size_t n, cap;
    int from_zero;
    double x_end; /* NAN: stop at the last point */
} series;

static void series_push(series *s, double x, double y)
{
    if (s->n && s->v[s->n - 1].x == x) {
        s->v[s->n - 1].y = y;
        return;
    }
    if (s->n && s->v[s->n - 1].y == y) return; /* no change: the step goes on */
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        pt *nv = realloc(s->v, s->cap * sizeof *nv);
        if (!nv) abort();
        s->v = nv;
    }
    s->v[s->n++] = (pt){x, y};
}

/* Index of an earlier series drawing exactly the same line, or -1. */
static long coincides(const series *ss, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        const series *a = &ss[j], *b = &ss[i];
        if (!a->n || a->n != b->n) continue;
        if (!(a->x_end == b->x_end || (isnan(a->x_end) && isnan(b->x_end)))) continue;
        size_t k = 0;
        while (k < a->n && a->v[k].x == b->v[k].x && a->v[k].y == b->v[k].y) k++;
        if (k == a->n) return (long)j;
    }
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Empirical CDF of sorted v[0..n) as at most maxpts quantile points (min and
 * max included); y = fraction of values <= x; x below 'floor' is drawn at it.
 */
static void cdf_series(const double *v, size_t n, size_t maxpts, double floor_x, series *s)
{
    memset(s, 0, sizeof *s);
    s->from_zero = 1;
    s->x_end = NAN;
    if (!n) return;
    size_t m = n < maxpts ? n : maxpts, next = 0;
    for (size_t j = 0; j < m; j++) {
        size_t i = m == 1 ? n - 1 : (size_t)((unsigned long long)j * (n - 1) / (m - 1));
        if (i < next) continue;
        double x = v[i] < floor_x ? floor_x : v[i];
        /* ties (after the floor): the CDF jumps past all of them */
        size_t u = i;
        while (u + 1 < n && (v[u + 1] < floor_x ? floor_x : v[u + 1]) == x) u++;
        next = u + 1;
        series_push(s, x, (double)(u + 1) / (double)n);
    }
}

enum { TS_ALLOC, TS_PENDING, TS_GOODPUT };

static double tl_val(const gs_tl_row *row, int what)
{
    return what == TS_ALLOC ? row->alloc : what == TS_PENDING ? row->pending : row->goodput;
}

/* Interval of t among nb equal ones over [t0, t0 + span): floor((t - t0) * nb / span). */
static size_t bucket_of(gs_time t, gs_time t0, uint64_t span, size_t nb, int exact)
{
    if (t <= t0) return 0;
    uint64_t d = (uint64_t)(t - t0);
    if (d >= span) return nb - 1;
    size_t k = exact ? (size_t)(d * nb / span) : (size_t)((double)d / (double)span * (double)nb);
    return k < nb ? k : nb - 1;
}

/*
 * Time series of r's timeline over [t0, t1] in hours since t0.  nb == 0:
 * every change; else nb equal intervals, each drawn at the maximum the
 * value reached in it.
 */
static void ts_series(const gs_sim_result *r, int what, gs_time base, gs_time t0, gs_time t1,
                      size_t nb, series *s)
{
    memset(s, 0, sizeof *s);
    double span_h = gs_time_to_sec(t1 - t0) / 3600.0, x0 = gs_time_to_sec(t0 - base) / 3600.0;
    s->x_end = x0 + span_h;
    if (!r->ntl || t1 <= t0) return;
    if (!nb) {
        /* every change inside [t0, t1], starting from the value holding at t0 */
        size_t i = 0;
        while (i + 1 < r->ntl && r->tl[i + 1].t <= t0) i++;
        if (r->tl[i].t > t0)
            series_push(s, x0, 0);
        else
            series_push(s, x0, tl_val(&r->tl[i++], what));
        for (; i < r->ntl && r->tl[i].t <= t1; i++)
            series_push(s, gs_time_to_sec(r->tl[i].t - base) / 3600.0, tl_val(&r->tl[i], what));
        return;
    }
    double *mx = calloc(nb, sizeof *mx);
    if (!mx) abort();
    uint64_t span = (uint64_t)(t1 - t0);
    int exact = span <= UINT64_MAX / nb;
    for (size_t i = 0; i < r->ntl; i++) {
        gs_time a = r->tl[i].t, b = i + 1 < r->ntl ? r->tl[i + 1].t : t1;
        if (a < t0) a = t0;
        if (b > t1) b = t1;
        if (b <= a) continue; /* holds for no time inside [t0, t1) */
        /* integer microseconds: [a, b) is [a, b - 1] */
        size_t ba = bucket_of(a, t0, span, nb, exact), bb = bucket_of(b - 1, t0, span, nb, exact);
        double v = tl_val(&r->tl[i], what);
        for (size_t k = ba; k <= bb; k++)
            if (v > mx[k]) mx[k] = v;
    }
    for (size_t k = 0; k < nb; k++) series_push(s, x0 + span_h * (double)k / (double)nb, mx[k]);
    free(mx);
}

/* ---- plotting ----------------------------------------------------------------------------- */

typedef struct axis {
    double lo, hi;
    int log;
} axis;

typedef struct frame {
    double w, h;       /* viewBox size */
    double l, r, t, b; /* plot area edges */
    axis x, y;
} frame;

static double ax_pos(const axis *a, double v, double from, double to)
{
    double f;
    if (a->log) {
        if (v < a->lo) v = a->lo;
        f = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    } else {
        f = (v - a->lo) / (a->hi - a->lo);
    }
    return from + f * (to - from);
}

static double fx(const frame *fr, double x)
{
    return ax_pos(&fr->x, x, fr->l, fr->r);
}

static double fy(const frame *fr, double y)
{
    return ax_pos(&fr->y, y, fr->b, fr->t);
}

/* Step at most 'target' ticks apart on a 1-2-2.5-5 scale; 'integer': at least 1. */
static double nice_step(double span, int target, int integer)
{
    if (!(span > 0)) return 1;
    double raw = span / target, mag = pow(10, floor(log10(raw))), q = raw / mag;
    double m = q <= 1 ? 1 : q <= 2 ? 2 : q <= 2.5 ? 2.5 : q <= 5 ? 5 : 10;
    double st = m * mag;
    if (integer && st < 1) st = 1;
    if (integer && m == 2.5 && mag < 10) st = 2 * mag; /* 2.5 is not an integer step */
    return st;
}

/* Decimals that show every multiple of step exactly. */
static int step_decimals(double step)
{
    int d = 0;
    while (d < 6 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-9) d++;
    return d;
}

static void svg_text(FILE *f, double x, double y, const char *anchor, const char *extra,
                     const char *text)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
    if (anchor) fprintf(f, " text-anchor=\"%s\"", anchor);
    if (extra) fprintf(f, " %s", extra);
    fputc('>', f);
    esc(f, text);
    fputs("</text>\n", f);
}

/* In-plot labels get a white halo so lines behind them do not hide them. */
#define HALO "paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"4\" stroke-linejoin=\"round\""

/* Width of a legend item: swatch, gap, name, space to the next one. */
static double legend_width(const char *name)
{
    return 28 + 6.4 * (double)strlen(name) + 16;
}

/* Legend layout: items flow left to right and wrap; returns the number of rows. */
static int legend_rows(gs_sim_result *const *rs, size_t n, double x0, double x1)
{
    int rows = n ? 1 : 0;
    double x = x0;
    for (size_t i = 0; i < n; i++) {
        double w = legend_width(rs[i]->policy);
        if (x > x0 && x + w > x1) {
            rows++;
            x = x0;
        }
        x += w;
    }
    return rows;
}

static void draw_legend(FILE *f, gs_sim_result *const *rs, size_t n, double x0, double x1,
                        double y0)
{
    double x = x0, y = y0;
    for (size_t i = 0; i < n; i++) {
        double w = legend_width(rs[i]->policy);
        if (x > x0 && x + w > x1) {
            y += 18;
            x = x0;
        }
        const char *d = dash_of(i);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"3\"%s%s%s/>\n",
                x, y - 4, x + 22, y - 4, color_of(i), d ? " stroke-dasharray=\"" : "", d ? d : "",
                d ? "\"" : "");
        svg_text(f, x + 28, y, NULL, NULL, rs[i]->policy);
        x += w;
    }
}

typedef struct ticks {
    size_t n;
    double v[64];
    char lab[64][24];
} ticks;

static void ticks_linear(ticks *tk, double lo, double hi, double step)
{
    int dec = step_decimals(step);
    tk->n = 0;
    for (double k = ceil(lo / step - 1e-9); tk->n < 64; k++) {
        double v = k * step + 0.0; /* never "-0" */
        if (v == 0) v = 0;
        if (v > hi + step * 1e-9) break;
        tk->v[tk->n] = v;
        fmt_num(tk->lab[tk->n], sizeof tk->lab[0], v, dec);
        tk->n++;
    }
}

/* Powers of ten over [lo, hi], labelled in seconds or (ratio) as plain numbers. */
static void ticks_log(ticks *tk, double lo, double hi, int ratio)
{
    tk->n = 0;
    int k0 = (int)lround(log10(lo)), k1 = (int)floor(log10(hi) + 1e-9);
    for (int k = k0; k <= k1 && tk->n < 64; k++) {
        tk->v[tk->n] = pow(10, k);
        if (ratio)
            fmt_pow10(tk->lab[tk->n], sizeof tk->lab[0], k);
        else
            fmt_pow10_s(tk->lab[tk->n], sizeof tk->lab[0], k);
        tk->n++;
    }
}

static void svg_open(FILE *f, const frame *fr, const char *label)
{
    fprintf(f, "<svg xmlns=\"" SVG_NS "\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"",
            fr->w, fr->h);
    esc(f, label);
    fprintf(f, "\" font-family=\"" SVG_FONT "\" font-size=\"12\" fill=\"" COLOR_TEXT "\">\n");
    fprintf(f, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", fr->w, fr->h);
}

/* Grid, axes, tick labels and axis titles. */
static void draw_axes(FILE *f, const frame *fr, const ticks *xt, const ticks *yt,
                      const char *xtitle, const char *ytitle)
{
    fputs("<g shape-rendering=\"crispEdges\">\n", f);
    if (fr->x.log) { /* minor grid at 2..9 x 10^k */
        fprintf(f, "<path stroke=\"" COLOR_GRID_MIN "\" d=\"");
        for (double p = fr->x.lo; p < fr->x.hi; p *= 10)
            for (int m = 2; m <= 9 && p * m < fr->x.hi; m++)
                fprintf(f, "M%.1f %.1fV%.1f", fx(fr, p * m), fr->t, fr->b);
        fputs("\"/>\n", f);
    }
    fprintf(f, "<path stroke=\"" COLOR_GRID "\" d=\"");
    for (size_t i = 0; i < xt->n; i++)
        fprintf(f, "M%.1f %.1fV%.1f", fx(fr, xt->v[i]), fr->t, fr->b);
    for (size_t i = 0; i < yt->n; i++)
        fprintf(f, "M%.1f %.1fH%.1f", fr->l, fy(fr, yt->v[i]), fr->r);
    fputs("\"/>\n", f);
    fprintf(f, "<path stroke=\"" COLOR_AXIS "\" fill=\"none\" d=\"M%.1f %.1fV%.1fH%.1f", fr->l,
            fr->t, fr->b, fr->r);
    for (size_t i = 0; i < xt->n; i++) fprintf(f, "M%.1f %.1fv5", fx(fr, xt->v[i]), fr->b);
    for (size_t i = 0; i < yt->n; i++) fprintf(f, "M%.1f %.1fh-5", fr->l, fy(fr, yt->v[i]));
    fputs("\"/>\n</g>\n", f);
    for (size_t i = 0; i < xt->n; i++)
        svg_text(f, fx(fr, xt->v[i]), fr->b + 19, "middle", NULL, xt->lab[i]);
    for (size_t i = 0; i < yt->n; i++)
        svg_text(f, fr->l - 9, fy(fr, yt->v[i]) + 4, "end", NULL, yt->lab[i]);
    svg_text(f, (fr->l + fr->r) / 2, fr->b + 40, "middle", "font-weight=\"600\"", xtitle);
    char tr[96];
    snprintf(tr, sizeof tr, "font-weight=\"600\" transform=\"rotate(-90 %.1f %.1f)\"", 16.0,
             (fr->t + fr->b) / 2);
    svg_text(f, 16, (fr->t + fr->b) / 2, "middle", tr, ytitle);
}

/* One step line; dashed when it repeats an earlier one, so both stay visible. */
static void draw_series(FILE *f, const frame *fr, const series *s, size_t i, int repeat,
                        const char *name)
{
    if (!s->n) return;
    const char *d = repeat ? "7 5" : dash_of(i);
    fprintf(
        f,
        "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" stroke-linejoin=\"round\"%s%s%s "
        "d=\"",
        color_of(i), d ? " stroke-dasharray=\"" : "", d ? d : "", d ? "\"" : "");
    long cx = lround(fx(fr, s->v[0].x) * 10);
    long cy = lround(fy(fr, s->from_zero ? 0 : s->v[0].y) * 10);
    fprintf(f, "M%.1f %.1f", cx / 10.0, cy / 10.0);
    for (size_t k = s->from_zero ? 0 : 1; k < s->n; k++) {
        long nx = lround(fx(fr, s->v[k].x) * 10), ny = lround(fy(fr, s->v[k].y) * 10);
        if (nx != cx) fprintf(f, "H%.1f", (cx = nx) / 10.0);
        if (ny != cy) fprintf(f, "V%.1f", (cy = ny) / 10.0);
    }
    if (!isnan(s->x_end)) {
        long nx = lround(fx(fr, s->x_end) * 10);
        if (nx != cx) fprintf(f, "H%.1f", nx / 10.0);
    }
    fputs("\"><title>", f);
    esc(f, name);
    fputs("</title></path>\n", f);
}

/* Room for the y tick labels, the legend in the top margin, then the plot area. */
static void frame_init(frame *fr, double w, double h, double right, gs_sim_result *const *rs,
                       size_t n, double extra_top, const ticks *yt)
{
    size_t wide = 0;
    for (size_t i = 0; i < yt->n; i++)
        if (strlen(yt->lab[i]) > wide) wide = strlen(yt->lab[i]);
    fr->w = w;
    fr->h = h;
    fr->l = 40 + CHAR_W * (double)(wide > 3 ? wide : 3);
    fr->r = w - right;
    int rows = legend_rows(rs, n, fr->l, fr->r);
    fr->t = 12 + 18.0 * rows + extra_top;
    fr->b = h - 50;
}

static void draw_lines(FILE *f, const frame *fr, gs_sim_result *const *rs, const series *ss,
                       size_t n)
{
    for (size_t i = 0; i < n; i++)
        draw_series(f, fr, &ss[i], i, coincides(ss, i) >= 0, rs[i]->policy);
}

/* Caption sentence naming lines hidden under others. */
static void caption_repeats(FILE *f, gs_sim_result *const *rs, const series *ss, size_t n)
{
    int groups = 0;
    for (size_t j = 0; j < n; j++) {
        if (coincides(ss, j) >= 0) continue;
        int members = 0;
        for (size_t i = j + 1; i < n; i++) {
            if (coincides(ss, i) != (long)j) continue;
            if (!members++) {
                fputs(groups++ ? "; <b>"
                               : " Identical lines (drawn dashed on top of the first): <b>",
                      f);
                esc(f, rs[j]->policy);
                fputs("</b>", f);
            }
            fputs(" = <b>", f);
            esc(f, rs[i]->policy);
            fputs("</b>", f);
        }
    }
    if (groups) fputc('.', f);
}

/*
 * CDF with a log x axis over [lo, hi] (powers of ten): seconds with guides at familiar
 * durations, or (one_label given) a ratio with a guide at 1 labelled one_label.
 */
static void svg_cdf(FILE *f, gs_sim_result *const *rs, const series *ss, size_t n, double lo,
                    double hi, const char *xtitle, const char *label, const char *one_label)
{
    frame fr;
    ticks xt, yt;
    ticks_log(&xt, lo, hi, one_label != NULL);
    ticks_linear(&yt, 0, 1, 0.2);
    for (size_t i = 0; i < yt.n; i++) snprintf(yt.lab[i], sizeof yt.lab[0], "%.1f", yt.v[i]);
    frame_init(&fr, 560, 390, 54, rs, n, 16, &yt); /* right: room for "median" */
    fr.x = (axis){lo, hi, 1};
    fr.y = (axis){0, 1, 0};
    svg_open(f, &fr, label);
    draw_axes(f, &fr, &xt, &yt, xtitle, "fraction of finished jobs");
    /* familiar durations as dotted guides, labelled above the plot area */
    static const struct {
        double s;
        const char *lab;
    } ref[] = {{60, "1 min"}, {3600, "1 h"}, {86400, "1 d"}, {604800, "1 wk"}, {2592000, "30 d"}};
    for (size_t i = 0; i < sizeof ref / sizeof *ref + (one_label != NULL); i++) {
        int one = i == sizeof ref / sizeof *ref;
        if (one_label && !one) continue; /* a ratio: only the guide at 1 */
        double gx = one ? 1.0 : ref[i].s;
        if (gx <= lo || gx >= hi) continue;
        double x = fx(&fr, gx);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" COLOR_AXIS
                "\" stroke-dasharray=\"2 3\"/>\n",
                x, fr.t, x, fr.b);
        svg_text(f, x, fr.t - 5, "middle", "font-size=\"11\" fill=\"#7b8794\"",
                 one ? one_label : ref[i].lab);
    }
    /* median and p95 guides */
    static const struct {
        double y;
        const char *lab;
    } gy[] = {{0.5, "median"}, {0.95, "p95"}};
    for (size_t i = 0; i < 2; i++) {
        double y = fy(&fr, gy[i].y);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" COLOR_AXIS
                "\" stroke-dasharray=\"2 3\"/>\n",
                fr.l, y, fr.r, y);
        svg_text(f, fr.r + 4, y + 4, NULL, "font-size=\"11\" fill=\"#7b8794\"", gy[i].lab);
    }
    draw_lines(f, &fr, rs, ss, n);
    draw_legend(f, rs, n, fr.l, fr.r, 20);
    fputs("</svg>\n", f);
}

/* A view of the time axis: hours [x0, x1] since the first submission, drawn zoom times as
 * wide as the page; wa..wb the measurement window (NAN: none). */
typedef struct tview {
    double x0, x1;
    int zoom;
    double wa, wb;
} tview;

/* Time series over a view; hline > 0 draws the capacity line. */
static void svg_ts(FILE *f, gs_sim_result *const *rs, const series *ss, size_t n, const tview *tv,
                   double ymax, double hline, const char *ytitle, const char *label)
{
    frame fr;
    double x0 = tv->x0, x1 = tv->x1 > tv->x0 ? tv->x1 : tv->x0 + 1;
    double xs = nice_step(x1 - x0, 10 * tv->zoom, 0), ys = nice_step(ymax > 0 ? ymax : 1, 5, 1);
    double top = ceil((ymax > 0 ? ymax : 1) / ys) * ys;
    if (hline > 0 && top - hline < 0.06 * top) top += ys; /* room for the capacity label */
    ticks xt, yt;
    ticks_linear(&xt, x0, x1, xs);
    ticks_linear(&yt, 0, top, ys);
    frame_init(&fr, 1100.0 * tv->zoom, 340, 32, rs, n, 6, &yt);
    fr.x = (axis){x0, x1, 0};
    fr.y = (axis){0, top, 0};
    svg_open(f, &fr, label);
    if (!isnan(tv->wa)) { /* the measurement window, shaded */
        double a = tv->wa < x0 ? x0 : tv->wa, b = tv->wb > x1 ? x1 : tv->wb;
        if (b > a) {
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"#fff3c4\"/>\n",
                    fx(&fr, a), fr.t, fx(&fr, b) - fx(&fr, a), fr.b - fr.t);
            svg_text(f, fx(&fr, a) + 4, fr.t + 12, NULL, "font-size=\"11\" fill=\"#8d6a00\"",
                     "measurement window");
        }
    }
    draw_axes(f, &fr, &xt, &yt, "hours since the first submission", ytitle);
    draw_lines(f, &fr, rs, ss, n);
    if (hline > 0) {
        double y = fy(&fr, hline);
        char lab[64], num[32];
        fmt_num(num, sizeof num, hline, 0);
        snprintf(lab, sizeof lab, "cluster capacity: %s GPUs", num);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#52606d\" "
                "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n",
                fr.l, y, fr.r, y);
        svg_text(f, fr.r - 4, y - 6, "end", "font-size=\"11\" fill=\"#52606d\" " HALO, lab);
    }
    draw_legend(f, rs, n, fr.l, fr.r, 20);
    fputs("</svg>\n", f);
}

/* Smallest 1, 2 or 5 x 10^k >= v (v >= 1), and largest power of ten <= v. */
static double nice_ceil(double v)
{
    for (double p = 1; p < 1e15; p *= 10)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3)
            if (p * m >= v) return p * m;
    return 1e15;
}

static double pow10_floor(double v)
{
    double p = 1;
    while (p * 10 <= v && p < 1e15) p *= 10;
    return p;
}

/* ---- the page ----------------------------------------------------------------------------- */

static const char CSS[] =
    ":root{color-scheme:light}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#f5f7fa;color:#1f2933;"
    "font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif}\n"
    "main{max-width:1320px;margin:0 auto;padding:28px 24px 40px}\n"
    "h1{font-size:26px;font-weight:700;margin:0 0 2px;letter-spacing:-.01em}\n"
    ".sub{color:#616e7c;margin:0 0 20px}\n"
    ".card{background:#fff;border:1px solid #e4e7eb;border-radius:10px;padding:18px 20px;"
    "margin:0 0 20px;box-shadow:0 1px 2px rgba(31,41,51,.04)}\n"
    "h2{font-size:17px;margin:0 0 12px}\n"
    "h3{font-size:15px;margin:0 0 4px}\n"
    ".kv{display:grid;grid-template-columns:max-content 1fr;gap:5px 20px;margin:0}\n"
    ".kv dt{color:#616e7c}.kv dd{margin:0;overflow-wrap:anywhere}\n"
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace;"
    "font-size:12.5px;background:#f0f4f8;border-radius:4px;padding:1px 5px}\n"
    "code.hash{background:none;padding:0;color:#52606d;font-size:12px}\n"
    ".lead{margin:0 0 14px}\n"
    ".scroll{overflow-x:auto}\n"
    "table{border-collapse:collapse;width:100%;font-size:12.5px;font-variant-numeric:tabular-nums}"
    "\n"
    "th,td{padding:7px 8px;text-align:right;white-space:nowrap;vertical-align:top;"
    "border-bottom:1px solid #e4e7eb}\n"
    "thead th{font-size:12px;font-weight:600;color:#52606d;border-bottom:2px solid #cbd2d9;"
    "vertical-align:bottom;white-space:normal;line-height:1.3}\n"
    "th.l,td.l{text-align:left}\n"
    "tbody tr:last-child td{border-bottom:none}\n"
    "td.pol{font-weight:600}\n"
    "td small{display:block;color:#7b8794;font-size:11.5px}\n"
    "td.best{background:#e3f4e8;font-weight:700}\n"
    ".sw{display:inline-block;width:14px;height:4px;border-radius:2px;margin:0 8px 3px 0}\n"
    ".note{color:#616e7c;font-size:12.5px;margin:12px 0 0}\n"
    ".plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:20px}\n"
    "figure{margin:0}\n"
    "svg{display:block;width:100%;height:auto}\n"
    ".plots svg{max-width:720px}\n"
    "figcaption{color:#616e7c;font-size:12.5px;margin-top:6px}\n"
    "footer{color:#7b8794;font-size:12px;text-align:center}\n"
    ".tvsel{font-size:13px;color:#52606d;margin-right:10px}\n"
    ".tv{display:none;margin-top:12px}\n"
    "#tv-all:checked~.tv-all,#tv-arr:checked~.tv-arr,#tv-win:checked~.tv-win,"
    "#tv-zoom:checked~.tv-zoom{display:block}\n"
    ".zoom{overflow-x:auto}\n"
    ".zoom svg{width:400%;max-width:none}\n"
    "a.svg{font-size:12px;color:#52606d;margin-left:4px}\n"
    "@media print{.tv{display:block}}\n"
    "@media print{body{background:#fff}.card{box-shadow:none;break-inside:avoid}}\n";

/* Lowest average JCT among runs that finished jobs (INFINITY if none). */
static double best_avg_jct(gs_sim_result *const *rs, size_t n)
{
    double b = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (rs[i]->jobs_done && rs[i]->avg_jct_s < b) b = rs[i]->avg_jct_s;
    return b;
}

/* Number of runs with the lowest average JCT; *all: every run with finished jobs ties. */
static size_t n_best(gs_sim_result *const *rs, size_t n, int *all)
{
    double best = best_avg_jct(rs, n);
    size_t k = 0, withjobs = 0;
    for (size_t i = 0; i < n; i++) {
        withjobs += rs[i]->jobs_done != 0;
        k += rs[i]->jobs_done && rs[i]->avg_jct_s == best;
    }
    *all = withjobs > 1 && k == withjobs;
    return k;
}

static void td_time(FILE *f, double s, int best)
{
    char a[48], h[32];
    fmt_num(a, sizeof a, s, 1);
    fmt_human(h, sizeof h, s);
    fprintf(f, "<td%s>%s<small>%s</small></td>", best ? " class=\"best\"" : "", a, h);
}

/* Ratio to the best average JCT: "+25.9%" up to twice, then "4.8x". */
static void vs_best(FILE *f, double ratio)
{
    if (ratio < 2)
        fprintf(f, "<td>+%.1f%%</td>", 100.0 * (ratio - 1));
    else
        fprintf(f, "<td>%.1f&times;</td>", ratio);
}

static void td_count(FILE *f, unsigned long long v)
{
    char a[48];
    fmt_count(a, sizeof a, v);
    fprintf(f, "<td>%s</td>", a);
}

static void write_table(FILE *f, gs_sim_result *const *rs, size_t n)
{
    int any_failed = 0, any_unfinished = 0;
    for (size_t i = 0; i < n; i++) {
        any_failed |= rs[i]->jobs_failed != 0;
        any_unfinished |= rs[i]->jobs_unfinished != 0;
    }
    double best = best_avg_jct(rs, n);
    int tie_all;
    n_best(rs, n, &tie_all);
    fputs("<div class=\"scroll\"><table>\n<thead><tr><th class=\"l\">Policy</th>"
          "<th class=\"l\">Placement</th><th>Jobs done</th><th>Rejected</th>",
          f);
    if (any_failed) fputs("<th>Failed</th>", f);
    if (any_unfinished) fputs("<th>Unfinished</th>", f);
    fputs("<th>Avg JCT (s)</th><th>vs best</th><th>Median JCT (s)</th><th>p95 JCT (s)</th>"
          "<th>p99 JCT (s)</th><th>Avg queue (s)</th><th>Avg 1st start (s)</th>"
          "<th>Makespan (s)</th><th>GPU util</th>"
          "<th>Preemptions</th><th>Events</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        int is_best = r->jobs_done && r->avg_jct_s == best && !tie_all;
        fprintf(f, "<tr><td class=\"l pol\"><span class=\"sw\" style=\"background:%s\"></span>",
                color_of(i));
        esc(f, r->policy);
        fputs("</td><td class=\"l\">", f);
        esc(f, r->placement);
        fputs("</td>", f);
        td_count(f, r->jobs_done);
        td_count(f, r->jobs_rejected);
        if (any_failed) td_count(f, r->jobs_failed);
        if (any_unfinished) td_count(f, r->jobs_unfinished);
        if (r->jobs_done) {
            td_time(f, r->avg_jct_s, is_best);
            if (is_best && n > 1)
                fputs("<td class=\"best\">best</td>", f);
            else if (n > 1 && best > 0)
                vs_best(f, r->avg_jct_s / best);
            else
                fputs("<td>-</td>", f);
            td_time(f, r->median_jct_s, 0);
            td_time(f, r->p95_jct_s, 0);
            td_time(f, r->p99_jct_s, 0);
            td_time(f, r->avg_queue_s, 0);
            td_time(f, r->avg_first_s, 0);
        } else {
            fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>", f);
        }
        td_time(f, r->makespan_s, 0);
        fprintf(f, "<td>%.1f%%</td>", 100.0 * r->gpu_util);
        td_count(f, (unsigned long long)r->preemptions);
        td_count(f, (unsigned long long)r->events);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

static void td_gpuh(FILE *f, double gpu_s)
{
    char a[48];
    fmt_num(a, sizeof a, gpu_s / 3600.0, 1);
    fprintf(f, "<td>%s</td>", a);
}

/* Mechanisms each policy used and what they cost (only when some policy used one). */
static void write_mechanisms(FILE *f, gs_sim_result *const *rs, size_t n)
{
    int any = 0; /* (a resume implies a suspend: any counter will do) */
    for (size_t i = 0; i < n; i++)
        for (int m = 0; m < GS_MECH_N; m++) any |= rs[i]->mech[m] != 0;
    if (!any) return;
    fputs("<h3 style=\"margin-top:22px\">Mechanisms and their cost</h3>\n<div "
          "class=\"scroll\"><table>\n<thead><tr>"
          "<th class=\"l\">Policy</th>",
          f);
    /* every mechanism's count, then the job utilisation, then every cost (GS_MECH_MAP) */
    for (int m = 0; m < GS_MECH_N; m++) {
        const char *k = gs_mech_get((gs_mech)m)->key;
        fprintf(f, "<th>%c%s</th>", toupper((unsigned char)k[0]), k + 1);
    }
    fputs("<th>Job util</th>", f);
    for (int m = 0; m < GS_MECH_N; m++) {
        const char *k = gs_mech_get((gs_mech)m)->costkey;
        if (k) fprintf(f, "<th>%c%s GPU-h</th>", toupper((unsigned char)k[0]), k + 1);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        fprintf(f, "<tr><td class=\"l pol\"><span class=\"sw\" style=\"background:%s\"></span>",
                color_of(i));
        esc(f, r->policy);
        fputs("</td>", f);
        for (int m = 0; m < GS_MECH_N; m++) td_count(f, (unsigned long long)r->mech[m]);
        fprintf(f, "<td>%.1f%%</td>", 100.0 * r->gpu_job_util);
        for (int m = 0; m < GS_MECH_N; m++)
            if (gs_mech_get((gs_mech)m)->costkey) td_gpuh(f, r->mech_gpu_s[m]);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n<p class=\"note\">Restarts: starts after a preemption "
          "or a node failure. Job util counts a GPU shared by two packed jobs twice. GPU-h: "
          "GPU-hours held without progress because of each mechanism (docs/costs.md, "
          "docs/gandiva.md).</p>\n",
          f);
}

/* Deadlines and rescaling (runs with elastic jobs or deadlines only; issue 13). */
static void write_elastic(FILE *f, gs_sim_result *const *rs, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) any |= rs[i]->elastic;
    if (!any) return;
    fputs("<h3 style=\"margin-top:22px\">Deadlines and rescaling</h3>\n<div "
          "class=\"scroll\"><table>\n<thead><tr><th class=\"l\">Policy</th><th>Deadlines "
          "met</th><th>Met ratio</th><th>Rejected</th><th>Rescales/job</th><th>Rescale "
          "GPU-h</th><th>Lost work GPU-h</th><th>Avg goodput</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        fprintf(f, "<tr><td class=\"l pol\"><span class=\"sw\" style=\"background:%s\"></span>",
                color_of(i));
        esc(f, r->policy);
        if (r->deadline_jobs) /* no job with a deadline: nothing to meet */
            fprintf(f, "</td><td>%zu / %zu</td><td>%.3f</td>", r->deadline_met, r->deadline_jobs,
                    r->deadline_met_ratio);
        else
            fputs("</td><td>&ndash;</td><td>&ndash;</td>", f);
        td_count(f, (unsigned long long)r->jobs_rejected);
        fprintf(f, "<td>%.2f</td>", r->rescales_per_job);
        td_gpuh(f, r->rescale_gpu_s);
        td_gpuh(f, r->lost_work_gpu_s);
        fprintf(f, "<td>%.2f</td></tr>\n", r->avg_goodput);
    }
    fputs("</tbody></table></div>\n<p class=\"note\">Met ratio: jobs with a deadline that "
          "finished by it over all jobs with a deadline (a rejected job counts as missed), "
          "ElasticFlow's deadline satisfactory ratio. Rescales: size changes by the policy or "
          "an operator. Rescale GPU-h: GPU-hours held without progress for drains and "
          "relaunches, plus work thrown away. Goodput: progress rate of the running jobs, in "
          "jobs at their reference rate, averaged over the makespan "
          "(docs/elastic.md).</p>\n",
          f);
}

/* One sentence on who wins, for readers who stop after the table. */
static void write_lead(FILE *f, gs_sim_result *const *rs, size_t n)
{
    double best = best_avg_jct(rs, n);
    if (n < 2 || !isfinite(best)) return;
    int tie_all;
    size_t nbest = n_best(rs, n, &tie_all), k = 0;
    char h[32];
    fmt_human(h, sizeof h, best);
    if (tie_all) {
        fprintf(f, "<p class=\"lead\">All %zu policies give the same average JCT (%s).</p>\n",
                nbest, h);
        return;
    }
    fputs("<p class=\"lead\">Lowest average JCT: ", f);
    for (size_t i = 0; i < n; i++) {
        if (!rs[i]->jobs_done || rs[i]->avg_jct_s != best) continue;
        fputs(!k ? "<b>" : k + 1 < nbest ? ", <b>" : " and <b>", f);
        esc(f, rs[i]->policy);
        fputs("</b>", f);
        k++;
    }
    fprintf(f, " (%s)", h);
    double second = INFINITY;
    size_t si = 0;
    for (size_t i = 0; i < n; i++)
        if (rs[i]->jobs_done && rs[i]->avg_jct_s > best && rs[i]->avg_jct_s < second) {
            second = rs[i]->avg_jct_s;
            si = i;
        }
    if (isfinite(second) && second > 0) {
        fmt_human(h, sizeof h, second);
        fprintf(f, ", %.1f%% below the next best, <b>", 100.0 * (1 - best / second));
        esc(f, rs[si]->policy);
        fprintf(f, "</b> (%s)", h);
    }
    fputs(".</p>\n", f);
}

static void write_run_info(FILE *f, gs_sim_result *const *rs, size_t n, const gs_run_info *info,
                           const gs_report_agg *ra)
{
    char num[48];
    size_t gpus = n ? rs[0]->total_gpus : 0, jobs = n ? rs[0]->jobs : 0;
    /* with --window, r->jobs counts the measured jobs; the trace has every job */
    size_t all = n && rs[0]->window && rs[0]->engine ? gs_engine_njobs(rs[0]->engine) : jobs;
    fputs("<section class=\"card\"><h2>Run</h2><dl class=\"kv\">\n", f);
    if (info && info->cluster_spec) {
        fputs("<dt>Cluster</dt><dd><code>", f);
        esc(f, info->cluster_spec);
        fmt_count(num, sizeof num, gpus);
        fprintf(f, "</code> &middot; %s GPUs</dd>\n", num);
    } else {
        fmt_count(num, sizeof num, gpus);
        fprintf(f, "<dt>Cluster</dt><dd>%s GPUs</dd>\n", num);
    }
    char win[96] = "";
    if (all != jobs) {
        fmt_count(num, sizeof num, jobs);
        snprintf(win, sizeof win, " (%s submitted in the measurement window)", num);
    }
    fmt_count(num, sizeof num, all);
    if (info && info->trace_path) {
        fputs("<dt>Trace</dt><dd><code>", f);
        esc(f, info->trace_path);
        fputs("</code>", f);
        if (info->trace_format) {
            fputs(" (", f);
            esc(f, info->trace_format);
            fputs(" format)", f);
        }
        fprintf(f, " &middot; %s jobs%s</dd>\n", num, win);
    } else {
        fprintf(f, "<dt>Jobs</dt><dd>%s%s</dd>\n", num, win);
    }
    if (info && info->events_path) {
        fputs("<dt>Cluster events</dt><dd><code>", f);
        esc(f, info->events_path);
        fputs("</code></dd>\n", f);
    }
    /* placement: one value when all agree */
    int same = 1;
    for (size_t i = 1; i < n; i++) same &= !strcmp(rs[i]->placement, rs[0]->placement);
    fputs("<dt>Placement</dt><dd>", f);
    for (size_t i = 0; i < n; i++) {
        if (same) {
            esc(f, rs[0]->placement);
            if (n > 1) fputs(" (all policies)", f);
            break;
        }
        if (i) fputs(", ", f);
        esc(f, rs[i]->policy);
        fputs(": ", f);
        esc(f, rs[i]->placement);
    }
    fputs("</dd>\n", f);
    if (info) {
        if (ra && ra->agg && ra->agg->ns > 1)
            fprintf(f, "<dt>Seeds</dt><dd>%llu to %llu (%zu runs per policy%s)</dd>\n",
                    (unsigned long long)info->seed,
                    (unsigned long long)(info->seed + ra->agg->ns - 1), ra->agg->ns,
                    ra->sweep_key ? " and value" : "");
        else
            fprintf(f, "<dt>Seed</dt><dd>%llu</dd>\n", (unsigned long long)info->seed);
        if (n && rs[0]->window) {
            char a[32], b[32];
            fmt_human(a, sizeof a, gs_time_to_sec(rs[0]->win_start));
            if (rs[0]->win_end == GS_TIME_MAX)
                snprintf(b, sizeof b, "the end");
            else
                fmt_human(b, sizeof b, gs_time_to_sec(rs[0]->win_end));
            fprintf(f,
                    "<dt>Measurement window</dt><dd>jobs submitted from %s to %s (every metric "
                    "counts these jobs; utilisation is over the window)</dd>\n",
                    a, b);
        }
        fputs("<dt>Parameters</dt><dd>", f);
        if (!info->params || !info->params->n) fputs("none (defaults)", f);
        for (size_t i = 0; info->params && i < info->params->n; i++) {
            fputs(i ? " <code>" : "<code>", f);
            esc(f, info->params->v[i].key);
            fputc('=', f);
            esc(f, info->params->v[i].val);
            fputs("</code>", f);
        }
        fputs("</dd>\n", f);
    }
    if (info && (info->trace_sha256 || info->cluster_sha256 || info->events_sha256)) {
        static const char *const what[] = {"Trace SHA-256", "Cluster SHA-256", "Events SHA-256"};
        const char *const val[] = {info->trace_sha256, info->cluster_sha256,
                                   info->events_path ? info->events_sha256 : NULL};
        for (int i = 0; i < 3; i++) {
            if (!val[i] || !*val[i]) continue;
            fprintf(f, "<dt>%s</dt><dd><code class=\"hash\">", what[i]);
            esc(f, val[i]);
            fputs("</code>", f);
            /* a generated workload differs per seed (and per swept generator value): the
             * hash is that of the runs drawn below */
            if (!i && ra && ra->agg && (ra->agg->ns > 1 || ra->sweep_key) && info->trace_path &&
                !strncmp(info->trace_path, "gen:", 4))
                fprintf(f,
                        " (the workload of seed %llu%s, drawn below; every run's summary.json "
                        "names its own)",
                        (unsigned long long)info->seed,
                        ra->sweep_key ? " and the first value" : "");
            fputs("</dd>\n", f);
        }
    }
    fputs("</dl></section>\n", f);
}

/*
 * Sorted JCTs (what = 0), queue times (1: pending + suspended), times to first start (2),
 * slowdowns (3) or finish-time fairness rho (4) of r's finished jobs.
 */
static double *done_values(const gs_sim_result *r, int what, size_t *k)
{
    size_t nj = gs_engine_njobs(r->engine);
    double *v = xmalloc(nj * sizeof *v);
    *k = 0;
    for (size_t i = 0; i < nj; i++) {
        const gs_job *j = gs_engine_job(r->engine, i);
        if (j->state != GS_JOB_DONE) continue;
        if (what >= 3) {
            v[(*k)++] = r->jm ? (what == 3 ? r->jm[i].slowdown : r->jm[i].rho) : 0;
            continue;
        }
        v[(*k)++] = gs_time_to_sec(what == 2   ? j->first_start - j->submit
                                   : what == 1 ? (r->jm ? r->jm[i].queue : j->queued)
                                               : j->end - j->submit);
    }
    qsort(v, *k, sizeof *v, cmp_double);
    return v;
}

static void write_cdfs(FILE *f, gs_sim_result *const *rs, size_t n)
{
    series *ss[3];
    double lo[3], hi[3], top[3];
    int clamped[3] = {0, 0, 0}, any[3] = {0, 0, 0};
    for (int w = 0; w < 3; w++) {
        ss[w] = xmalloc(n * sizeof **ss);
        double mn = INFINITY, mx = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = 0;
            double *v = rs[i]->engine ? done_values(rs[i], w, &k) : NULL;
            cdf_series(v, k, CDF_POINTS, CDF_FLOOR_S, &ss[w][i]);
            if (k) {
                any[w] = 1;
                if (v[0] < mn) mn = v[0];
                if (v[k - 1] > mx) mx = v[k - 1];
                if (v[0] < CDF_FLOOR_S) clamped[w] = 1;
            }
            free(v);
        }
        top[w] = mx;
        lo[w] = pow10_floor(mn < CDF_FLOOR_S || !isfinite(mn) ? CDF_FLOOR_S : mn);
        hi[w] = nice_ceil(mx);
        if (hi[w] < lo[w] * 10) hi[w] = lo[w] * 10; /* at least a decade */
    }
    fputs("<section class=\"card\"><h2>Distributions</h2><div class=\"plots\">\n", f);

    /* one figure per distribution: title, x label, what it shows, the note when nothing is
     * at or above the 1-s floor */
    static const struct {
        const char *title, *xlabel, *aria, *caption, *below_floor;
    } fig[3] = {
        {"Job completion time (JCT), CDF", "JCT = end \xe2\x88\x92 submit (log scale)",
         "CDF of job completion time per policy",
         "Share of each policy's finished jobs that completed within a given time after "
         "submission. Further left and higher is better; the dotted lines mark the median and "
         "the 95th percentile.",
         NULL},
        {"Queuing delay, CDF", "time runnable without GPUs (log scale)",
         "CDF of queuing delay per policy",
         "Total time each finished job was runnable but held no GPUs of its own: pending (the "
         "first wait, after a preemption or a requeue) and suspended (time-sliced out). The x "
         "axis is logarithmic and starts at 1 s: delays under 1 s, including jobs that started "
         "at once, are drawn at 1 s, so a line's height at the left edge is the share of jobs "
         "that hardly waited.",
         " No finished job waited 1 s or more."},
        {"Time to first start, CDF", "first start \xe2\x88\x92 submit (log scale)",
         "CDF of time to first start per policy",
         "How soon each finished job first ran: early feedback, what time-slicing buys (a "
         "preempted or time-sliced job counts its first start only). Times under 1 s are drawn "
         "at 1 s.",
         " Every finished job started within 1 s."},
    };
    for (int w = 0; w < 3; w++) {
        fprintf(f, "<figure><h3>%s</h3>\n", fig[w].title);
        if (any[w]) svg_cdf(f, rs, ss[w], n, lo[w], hi[w], fig[w].xlabel, fig[w].aria, NULL);
        fprintf(f, "<figcaption>%s", fig[w].caption);
        if (w == 0 && clamped[0]) fputs(" JCTs under 1 s are drawn at 1 s.", f);
        if (!any[w]) fputs(" No job finished.", f);
        if (any[w] && fig[w].below_floor && top[w] < CDF_FLOOR_S) fputs(fig[w].below_floor, f);
        caption_repeats(f, rs, ss[w], n);
        fputs("</figcaption></figure>\n", f);
    }
    fputs("</div></section>\n", f);
    for (int w = 0; w < 3; w++) {
        for (size_t i = 0; i < n; i++) free(ss[w][i].v);
        free(ss[w]);
    }
}

/* ---- fairness and breakdowns (docs/metrics.md) ------------------------------------------- */

/* "2.97" with its JCT for people under it. */
static void td_ratio(FILE *f, double v, int dec, int best, const char *small)
{
    char a[48];
    fmt_num(a, sizeof a, v, dec);
    fprintf(f, "<td%s>%s", best ? " class=\"best\"" : "", a);
    if (small) fprintf(f, "<small>%s</small>", small);
    fputs("</td>", f);
}

/* Index of the run with the best value of column c (lowest, or highest when 'high'), -1 if
 * there are fewer than two runs with finished jobs or they all tie. */
static long best_of(gs_sim_result *const *rs, size_t n, double (*col)(const gs_sim_result *),
                    int high)
{
    long b = -1;
    size_t with = 0, ties = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rs[i]->jobs_done) continue;
        with++;
        double v = col(rs[i]);
        if (b < 0 || (high ? v > col(rs[b]) : v < col(rs[b]))) b = (long)i;
    }
    for (size_t i = 0; b >= 0 && i < n; i++) ties += rs[i]->jobs_done && col(rs[i]) == col(rs[b]);
    return with > 1 && ties == 1 ? b : -1;
}

static double col_slowdown(const gs_sim_result *r)
{
    return r->avg_slowdown;
}
static double col_max_rho(const gs_sim_result *r)
{
    return r->max_rho;
}
static double col_jain(const gs_sim_result *r)
{
    return r->jain_rho;
}

/* CDF of slowdown (what = 3) or rho (4) per policy on a log axis of plain numbers. */
static void ratio_cdf(FILE *f, gs_sim_result *const *rs, size_t n, int what, const char *title,
                      const char *xlabel, const char *aria, const char *caption,
                      const char *one_label)
{
    series *ss = xmalloc(n * sizeof *ss);
    double **vals = xmalloc(n * sizeof *vals);
    size_t *nv = xmalloc(n * sizeof *nv);
    double mn = INFINITY, mx = 0;
    int any = 0;
    const double floor_x = 1e-3;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        double *v = vals[i] = rs[i]->engine ? done_values(rs[i], what, &k) : NULL;
        nv[i] = k;
        if (k) {
            any = 1;
            if (v[0] < mn) mn = v[0];
            if (v[k - 1] > mx) mx = v[k - 1];
        }
    }
    double lo = pow(10, floor(log10(mn > floor_x && isfinite(mn) ? mn : floor_x) + 1e-9));
    double hi = nice_ceil(mx > 1 ? mx : 1);
    if (hi < lo * 10) hi = lo * 10;
    for (size_t i = 0; i < n; i++) {
        cdf_series(vals[i], nv[i], CDF_POINTS, lo, &ss[i]);
        free(vals[i]);
    }
    free(vals);
    free(nv);
    fprintf(f, "<figure><h3>%s</h3>\n", title);
    if (any) svg_cdf(f, rs, ss, n, lo, hi, xlabel, aria, one_label);
    fprintf(f, "<figcaption>%s", caption);
    if (!any) fputs(" No job finished.", f);
    caption_repeats(f, rs, ss, n);
    fputs("</figcaption></figure>\n", f);
    for (size_t i = 0; i < n; i++) free(ss[i].v);
    free(ss);
}

/* Slowdown, finish-time fairness and honest queueing per policy, then their CDFs. */
static void write_fairness(FILE *f, gs_sim_result *const *rs, size_t n)
{
    long bs = best_of(rs, n, col_slowdown, 0), bm = best_of(rs, n, col_max_rho, 0),
         bj = best_of(rs, n, col_jain, 1);
    fputs("<section class=\"card\"><h2>Fairness</h2>\n<div class=\"scroll\"><table>\n<thead><tr>"
          "<th class=\"l\">Policy</th><th>Avg slowdown</th><th>Median slowdown</th>"
          "<th>p95 slowdown</th><th>Avg &rho;</th><th>p95 &rho;</th><th>Max &rho;</th>"
          "<th>Jain&rsquo;s index (&rho;)</th><th>Jain&rsquo;s index (users&rsquo; slowdown)</th>"
          "<th>Avg queue (s)</th><th>Avg pending (s)</th><th>GPU util (busy window)</th>"
          "</tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        fprintf(f, "<tr><td class=\"l pol\"><span class=\"sw\" style=\"background:%s\"></span>",
                color_of(i));
        esc(f, r->policy);
        fputs("</td>", f);
        if (!r->jobs_done) {
            fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>"
                  "<td>-</td><td>-</td>",
                  f);
        } else {
            td_ratio(f, r->avg_slowdown, 2, (long)i == bs, NULL);
            td_ratio(f, r->median_slowdown, 2, 0, NULL);
            td_ratio(f, r->p95_slowdown, 2, 0, NULL);
            td_ratio(f, r->avg_rho, 2, 0, NULL);
            td_ratio(f, r->p95_rho, 2, 0, NULL);
            td_ratio(f, r->max_rho, 2, (long)i == bm, NULL);
            td_ratio(f, r->jain_rho, 3, (long)i == bj, NULL);
            if (r->nusers > 1)
                td_ratio(f, r->jain_user_slowdown, 3, 0, NULL);
            else
                fputs("<td>-</td>", f); /* one user (or none named): nothing to compare */
            td_time(f, r->avg_queue_s, 0);
            td_time(f, r->avg_pending_s, 0);
        }
        fprintf(f, "<td>%.1f%%</td></tr>\n", 100.0 * r->gpu_util_busy);
    }
    fputs("</tbody></table></div>\n<p class=\"note\">Slowdown: JCT / the job's ideal duration "
          "(alone on the best GPU type at its requested size). &rho; (finish-time fairness, "
          "Themis): JCT / (ideal &times; max(1, GPUs &times; n&#772; / cluster GPUs)), n&#772; the "
          "average number of jobs in the system over the job's life: &rho; &le; 1 is at least "
          "as good as an equal share of the cluster. Jain's index (&Sigma;x)&sup2; / "
          "(n&Sigma;x&sup2;): 1 when all are equal. Avg queue counts the time pending and "
          "suspended (time-sliced out); avg pending the pending intervals only. GPU util (busy "
          "window): allocated GPU-time from the first to the last arrival. Lowest average "
          "slowdown and max &rho;, highest Jain's index highlighted (docs/metrics.md).</p>\n",
          f);
    fputs("<div class=\"plots\" style=\"margin-top:16px\">\n", f);
    ratio_cdf(f, rs, n, 3, "Slowdown, CDF", "slowdown = JCT / ideal duration (log scale)",
              "CDF of slowdown per policy",
              "Share of each policy's finished jobs whose completion time was within a given "
              "multiple of their ideal duration. Further left and higher is better.",
              "ideal");
    ratio_cdf(f, rs, n, 4, "Finish-time fairness &rho;, CDF",
              "\xcf\x81 = JCT / fair-share time (log scale)",
              "CDF of finish-time fairness per policy",
              "Share of each policy's finished jobs with at most a given &rho;; left of the dotted "
              "line at 1, jobs did at least as well as with an equal share of the cluster. A "
              "long tail to the right is unfairness.",
              "fair share");
    fputs("</div></section>\n", f);
}

/* Per-VC statistics (only when some run has several VCs). */
static void write_vc_section(FILE *f, gs_sim_result *const *rs, size_t n)
{
    int many = 0;
    for (size_t i = 0; i < n; i++) many |= rs[i]->nvcs > 1;
    if (!many) return;
    fputs("<section class=\"card\"><h2>Virtual clusters</h2>\n<div class=\"scroll\"><table>\n"
          "<thead><tr><th class=\"l\">VC</th><th class=\"l\">Policy</th><th>Jobs</th>"
          "<th>Done</th><th>Rejected</th><th>Avg JCT (s)</th><th>Avg queue (s)</th>"
          "<th>p95 queue (s)</th><th>Avg slowdown</th><th>Avg &rho;</th><th>Max &rho;</th>"
          "</tr></thead>\n<tbody>\n",
          f);
    /* VCs in order of first appearance over the runs, each with every run that has it */
    for (size_t i = 0; i < n; i++)
        for (size_t v = 0; v < rs[i]->nvcs; v++) {
            const char *name = rs[i]->vcs[v].name;
            int seen = 0;
            for (size_t p = 0; p < i && !seen; p++)
                for (size_t w = 0; w < rs[p]->nvcs && !seen; w++)
                    seen = !strcmp(rs[p]->vcs[w].name, name);
            if (seen) continue;
            int first = 1;
            for (size_t p = i; p < n; p++)
                for (size_t w = 0; w < rs[p]->nvcs; w++) {
                    const gs_vc_stats *s = &rs[p]->vcs[w];
                    if (strcmp(s->name, name)) continue;
                    fputs("<tr><td class=\"l\">", f);
                    if (first) esc(f, name); /* once per VC */
                    first = 0;
                    fprintf(f,
                            "</td><td class=\"l pol\"><span class=\"sw\" "
                            "style=\"background:%s\"></span>",
                            color_of(p));
                    esc(f, rs[p]->policy);
                    fputs("</td>", f);
                    td_count(f, s->jobs);
                    td_count(f, s->done);
                    td_count(f, s->rejected);
                    if (s->done) {
                        td_time(f, s->avg_jct_s, 0);
                        td_time(f, s->avg_queue_s, 0);
                        td_time(f, s->p95_queue_s, 0);
                        td_ratio(f, s->avg_slowdown, 2, 0, NULL);
                        td_ratio(f, s->avg_rho, 2, 0, NULL);
                        td_ratio(f, s->max_rho, 2, 0, NULL);
                    } else {
                        fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>", f);
                    }
                    fputs("</tr>\n", f);
                }
        }
    fputs("</tbody></table></div>\n<p class=\"note\">Per virtual cluster (queue): queue time "
          "and slowdown as above, over the VC's finished jobs (compare-vcs.csv).</p></section>\n",
          f);
}

#define TOP_USERS 20 /* users shown in the report (users.csv has all) */

static const gs_group_stats *find_group(const gs_sim_result *r, int users, const gs_group_stats *g)
{
    size_t ng = users ? r->nusers : r->nsizes;
    const gs_group_stats *v = users ? r->users : r->sizes;
    for (size_t k = 0; k < ng; k++)
        if (users ? v[k].name && g->name && !strcmp(v[k].name, g->name) : v[k].gpus == g->gpus)
            return &v[k];
    return NULL;
}

/* One breakdown table: a row per user (the TOP_USERS with most jobs) or per size, a column
 * per policy with the group's average slowdown (its average JCT under it). */
static void breakdown_table(FILE *f, gs_sim_result *const *rs, size_t n, int users)
{
    const gs_sim_result *r0 = rs[0];
    size_t ng = users ? r0->nusers : r0->nsizes, shown = ng;
    const gs_group_stats *g0 = users ? r0->users : r0->sizes;
    size_t *ord = xmalloc(ng * sizeof *ord);
    for (size_t k = 0; k < ng; k++) ord[k] = k;
    if (users) { /* most jobs first, first appearance among equals (stable insertion) */
        for (size_t k = 1; k < ng; k++)
            for (size_t m = k; m > 0 && g0[ord[m]].jobs > g0[ord[m - 1]].jobs; m--) {
                size_t t = ord[m];
                ord[m] = ord[m - 1];
                ord[m - 1] = t;
            }
        if (shown > TOP_USERS) shown = TOP_USERS;
    }
    fprintf(f, "<h3 style=\"margin-top:18px\">%s</h3>\n<div class=\"scroll\"><table>\n<thead><tr>",
            users ? "Per user" : "Per job size");
    fprintf(f, "<th class=\"l\">%s</th><th>Jobs</th>", users ? "User" : "GPUs");
    for (size_t i = 0; i < n; i++) {
        fputs("<th>", f);
        esc(f, rs[i]->policy);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t k = 0; k < shown; k++) {
        const gs_group_stats *g = &g0[ord[k]];
        fputs("<tr><td class=\"l\">", f);
        if (users)
            esc(f, g->name);
        else
            fprintf(f, "%d", g->gpus);
        fputs("</td>", f);
        td_count(f, g->jobs);
        for (size_t i = 0; i < n; i++) {
            const gs_group_stats *s = find_group(rs[i], users, g);
            if (!s || !s->done) {
                fputs("<td>-</td>", f);
                continue;
            }
            char h[32];
            fmt_human(h, sizeof h, s->avg_jct_s);
            td_ratio(f, s->avg_slowdown, 2, 0, h);
        }
        fputs("</tr>\n", f);
    }
    if (users) {
        fputs("<tr><td class=\"l\"><b>Jain&rsquo;s index</b></td><td></td>", f);
        for (size_t i = 0; i < n; i++) td_ratio(f, rs[i]->jain_user_slowdown, 3, 0, NULL);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    if (shown < ng)
        fprintf(f,
                "<p class=\"note\">The %zu users with the most jobs, of %zu "
                "(compare-users.csv has them all).</p>\n",
                shown, ng);
    free(ord);
}

/* Per-user (when the trace names several users) and per-size breakdowns. */
static void write_breakdowns(FILE *f, gs_sim_result *const *rs, size_t n)
{
    fputs("<section class=\"card\"><h2>Breakdowns</h2>\n<p class=\"note\" style=\"margin:0\">"
          "Average slowdown of each group's finished jobs per policy, their average JCT "
          "under it.",
          f);
    if (rs[0]->nusers > 1)
        fputs(" Jain&rsquo;s index over the users&rsquo; average slowdowns: 1 when every user "
              "is slowed down alike.",
              f);
    else
        fputs(" The trace names no users (or one), so there is no per-user table.", f);
    fputs("</p>\n", f);
    if (rs[0]->nusers > 1) breakdown_table(f, rs, n, 1);
    breakdown_table(f, rs, n, 0);
    fputs("</section>\n", f);
}

/* ---- runs over seeds and sweeps --------------------------------------------------------- */

/* The metrics drawn with error bars (when the metric table has them). */
static const char *const AGG_FIGS[][2] = {
    {"avg_jct_s", "Average JCT (s)"},
    {"p95_jct_s", "p95 JCT (s)"},
    {"avg_queue_s", "Average queue (s)"},
    {"avg_slowdown", "Average slowdown"},
    {"max_rho", "Max finish-time fairness \xcf\x81"},
    {"gpu_util", "GPU utilisation (%)"},
};

static double agg_scale(const gs_agg *a, long c)
{
    return (a->cols[c].def->flags & GS_MF_PERCENT) ? 100 : 1;
}

/* "12,345.6 ± 78.9" (the value alone for one seed). */
static void agg_cell(FILE *f, const gs_agg *a, size_t row, long c)
{
    size_t k = row * a->ncols + (size_t)c;
    double sc = agg_scale(a, c);
    int dec = (a->cols[c].def->flags & GS_MF_PERCENT) || a->cols[c].def->dec < 6 ? 1 : 3;
    char m[48], h[48];
    fmt_num(m, sizeof m, a->mean[k] * sc, dec);
    if (a->ns < 2) {
        fprintf(f, "<td>%s</td>", m);
        return;
    }
    fmt_num(h, sizeof h, a->ci[k] * sc, dec);
    fprintf(f, "<td>%s<small>&plusmn; %s</small></td>", m, h);
}

/* Do all values parse as numbers?  Then the x axis is numeric. */
static int values_numeric(const char *const *v, size_t n, double *x)
{
    for (size_t i = 0; i < n; i++) {
        char *e;
        x[i] = strtod(v[i], &e);
        if (e == v[i] || *e || !isfinite(x[i])) return 0;
    }
    return 1;
}

/* An error bar from lo to hi at x (vertical) or y (horizontal), with caps. */
static void whisker(FILE *f, double x0, double y0, double x1, double y1, int vertical,
                    const char *color)
{
    fprintf(f,
            "<path class=\"err\" stroke=\"%s\" stroke-width=\"1.3\" fill=\"none\" "
            "d=\"M%.1f %.1f%c%.1f",
            color, x0, y0, vertical ? 'V' : 'H', vertical ? y1 : x1);
    if (vertical)
        fprintf(f, "M%.1f %.1fh8M%.1f %.1fh8\"/>\n", x0 - 4, y0, x0 - 4, y1);
    else
        fprintf(f, "M%.1f %.1fv8M%.1f %.1fv8\"/>\n", x0, y0 - 4, x1, y1 - 4);
}

/* Metric c against the swept value, one line per policy, error bars = 95 % CI. */
static void svg_sweep(FILE *f, gs_sim_result *const *rs, const gs_report_agg *ra, long c,
                      const char *title)
{
    const gs_agg *a = ra->agg;
    double *xv = xmalloc(a->nv * sizeof *xv);
    int num = values_numeric(ra->values, a->nv, xv);
    if (!num)
        for (size_t v = 0; v < a->nv; v++) xv[v] = (double)v;
    double sc = agg_scale(a, c), ymax = 0, xlo = xv[0], xhi = xv[0];
    for (size_t v = 0; v < a->nv; v++) {
        if (xv[v] < xlo) xlo = xv[v];
        if (xv[v] > xhi) xhi = xv[v];
        for (size_t p = 0; p < a->np; p++) {
            size_t k = (v * a->np + p) * a->ncols + (size_t)c;
            double top = (a->mean[k] + a->ci[k]) * sc;
            if (top > ymax) ymax = top;
        }
    }
    if (xhi <= xlo) xhi = xlo + 1;
    double pad = num ? 0.05 * (xhi - xlo) : 0.5;
    ticks xt, yt;
    double ys = nice_step(ymax > 0 ? ymax : 1, 5, 0);
    double top = ceil((ymax > 0 ? ymax : 1) / ys) * ys;
    ticks_linear(&yt, 0, top, ys);
    xt.n = 0;
    for (size_t v = 0; v < a->nv && xt.n < 64; v++) {
        xt.v[xt.n] = xv[v];
        snprintf(xt.lab[xt.n], sizeof xt.lab[0], "%s", ra->values[v]);
        xt.n++;
    }
    frame fr;
    frame_init(&fr, 560, 390, 24, rs, a->np, 6, &yt);
    fr.x = (axis){xlo - pad, xhi + pad, 0};
    fr.y = (axis){0, top, 0};
    char aria[160];
    snprintf(aria, sizeof aria, "%s against %s per policy", title, ra->sweep_key);
    svg_open(f, &fr, aria);
    draw_axes(f, &fr, &xt, &yt, ra->sweep_key, title);
    for (size_t p = 0; p < a->np; p++) {
        const char *d = dash_of(p);
        fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s%s%s d=\"", color_of(p),
                d ? " stroke-dasharray=\"" : "", d ? d : "", d ? "\"" : "");
        for (size_t v = 0; v < a->nv; v++) {
            size_t k = (v * a->np + p) * a->ncols + (size_t)c;
            fprintf(f, "%c%.1f %.1f", v ? 'L' : 'M',
                    fx(&fr, xv[v]) + 5.0 * ((double)p - (double)(a->np - 1) / 2),
                    fy(&fr, a->mean[k] * sc));
        }
        fputs("\"><title>", f);
        esc(f, rs[p]->policy);
        fputs("</title></path>\n", f);
        for (size_t v = 0; v < a->nv; v++) {
            size_t k = (v * a->np + p) * a->ncols + (size_t)c;
            /* policies side by side (dodged a few pixels) so their bars do not overlap */
            double x = fx(&fr, xv[v]) + 5.0 * ((double)p - (double)(a->np - 1) / 2);
            double y = fy(&fr, a->mean[k] * sc);
            if (a->ns > 1 && a->ci[k] > 0) /* drawn from the axis at 0 up */
                whisker(f, x, fy(&fr, fmax(a->mean[k] - a->ci[k], 0) * sc), x,
                        fy(&fr, (a->mean[k] + a->ci[k]) * sc), 1, color_of(p));
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x, y,
                    color_of(p));
        }
    }
    draw_legend(f, rs, a->np, fr.l, fr.r, 20);
    fputs("</svg>\n", f);
    free(xv);
}

/* A label right-aligned at x in at most max characters: a longer one keeps its head and
 * tail around an ellipsis (cut on UTF-8 character boundaries), the whole label in its
 * tooltip - gavel:objective=makespan:hetero=agnostic ran off the figure's left edge. */
static void bar_label(FILE *f, double x, double y, size_t max, const char *label)
{
    size_t n = strlen(label);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"><title>", x, y);
    esc(f, label);
    fputs("</title>", f);
    if (n <= max || max < 5) {
        esc(f, label);
    } else {
        size_t head = (max - 1) / 2, tail = max - 1 - head;
        while (head > 0 && ((unsigned char)label[head] & 0xc0) == 0x80) head--;
        size_t from = n - tail;
        while (from < n && ((unsigned char)label[from] & 0xc0) == 0x80) from++;
        char *h = malloc(head + 1);
        if (h) {
            memcpy(h, label, head);
            h[head] = '\0';
            esc(f, h);
            free(h);
        }
        fputs("\xe2\x80\xa6", f); /* ... */
        esc(f, label + from);
    }
    fputs("</text>\n", f);
}

/* Metric c per policy (the first value): bars at the mean, whiskers over the 95 % CI. */
static void svg_bars(FILE *f, gs_sim_result *const *rs, const gs_report_agg *ra, long c,
                     const char *title)
{
    const gs_agg *a = ra->agg;
    double sc = agg_scale(a, c), xmax = 0;
    size_t wide = 0;
    for (size_t p = 0; p < a->np; p++) {
        size_t k = p * a->ncols + (size_t)c;
        if ((a->mean[k] + a->ci[k]) * sc > xmax) xmax = (a->mean[k] + a->ci[k]) * sc;
        if (strlen(rs[p]->policy) > wide) wide = strlen(rs[p]->policy);
    }
    double xs = nice_step(xmax > 0 ? xmax : 1, 5, 0);
    double right = ceil((xmax > 0 ? xmax : 1) / xs) * xs;
    ticks xt, yt;
    ticks_linear(&xt, 0, right, xs);
    yt.n = 0;
    frame fr;
    double row = 30;
    fr.w = 560;
    fr.h = 70 + row * (double)a->np;
    fr.l = 20 + CHAR_W * (double)(wide > 4 ? wide : 4);
    if (fr.l > 260) fr.l = 260;
    fr.r = fr.w - 30;
    fr.t = 10;
    fr.b = fr.h - 50;
    fr.x = (axis){0, right, 0};
    fr.y = (axis){0, (double)a->np, 0};
    char aria[160];
    snprintf(aria, sizeof aria, "%s per policy over seeds", title);
    svg_open(f, &fr, aria);
    draw_axes(f, &fr, &xt, &yt, title, "");
    for (size_t p = 0; p < a->np; p++) {
        size_t k = p * a->ncols + (size_t)c;
        double yc = fr.t + row * ((double)p + 0.5), m = a->mean[k] * sc;
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                "fill-opacity=\"0.8\"><title>",
                fr.l, yc - 9, fx(&fr, m) - fr.l, 18.0, color_of(p));
        esc(f, rs[p]->policy);
        fputs("</title></rect>\n", f);
        if (a->ns > 1 && a->ci[k] > 0) /* drawn from the axis at 0 on */
            whisker(f, fx(&fr, fmax(a->mean[k] - a->ci[k], 0) * sc), yc,
                    fx(&fr, (a->mean[k] + a->ci[k]) * sc), yc, 0, "#1f2933");
        bar_label(f, fr.l - 8, yc + 4, (size_t)((fr.l - 12) / CHAR_W), rs[p]->policy);
    }
    fputs("</svg>\n", f);
}

static void write_agg(FILE *f, gs_sim_result *const *rs, size_t n, const gs_report_agg *ra)
{
    const gs_agg *a = ra->agg;
    (void)n;
    fputs("<section class=\"card\"><h2>", f);
    if (ra->sweep_key) {
        fputs("Sweep over <code>", f);
        esc(f, ra->sweep_key);
        fputs("</code>", f);
    } else {
        fputs("Across seeds", f);
    }
    fputs("</h2>\n<p class=\"lead\">", f);
    if (a->ns > 1)
        fprintf(f,
                "%zu seeds per point (%llu to %llu): means with their 95%% confidence intervals "
                "(Student t, %zu degrees of freedom; &plusmn; the half-width). ",
                a->ns, (unsigned long long)ra->seed, (unsigned long long)(ra->seed + a->ns - 1),
                a->ns - 1);
    if (ra->sweep_key) {
        fprintf(f, "%zu values of <code>", a->nv);
        esc(f, ra->sweep_key);
        fputs("</code>. ", f);
    }
    fprintf(f, "The sections below show the run with seed %llu", (unsigned long long)ra->seed);
    if (ra->sweep_key) {
        fputs(" and <code>", f);
        esc(f, ra->sweep_key);
        fputc('=', f);
        esc(f, ra->values[0]);
        fputs("</code>", f);
    }
    fputs("; every run is in <code>runs.csv</code>.</p>\n", f);
    /* the table: the metrics marked for tables */
    fputs("<div class=\"scroll\"><table>\n<thead><tr>", f);
    if (ra->sweep_key) {
        fputs("<th class=\"l\">", f);
        esc(f, ra->sweep_key);
        fputs("</th>", f);
    }
    fputs("<th class=\"l\">Policy</th>", f);
    for (size_t c = 0; c < a->ncols; c++)
        if (a->cols[c].def->flags & GS_MF_TABLE) {
            fputs("<th>", f);
            esc(f, a->cols[c].key);
            fputs(a->cols[c].def->flags & GS_MF_PERCENT ? " (%)</th>" : "</th>", f);
        }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t p = 0; p < a->np; p++) {
            fputs("<tr>", f);
            if (ra->sweep_key) {
                fputs("<td class=\"l\">", f);
                esc(f, ra->values[v]);
                fputs("</td>", f);
            }
            fprintf(f, "<td class=\"l pol\"><span class=\"sw\" style=\"background:%s\"></span>",
                    color_of(p));
            esc(f, rs[p]->policy);
            fputs("</td>", f);
            for (size_t c = 0; c < a->ncols; c++)
                if (a->cols[c].def->flags & GS_MF_TABLE) agg_cell(f, a, v * a->np + p, (long)c);
            fputs("</tr>\n", f);
        }
    fputs("</tbody></table></div>\n<div class=\"plots\" style=\"margin-top:16px\">\n", f);
    for (size_t i = 0; i < sizeof AGG_FIGS / sizeof *AGG_FIGS; i++) {
        long c = gs_agg_col(a, AGG_FIGS[i][0]);
        if (c < 0) continue;
        fputs("<figure><h3>", f);
        esc(f, AGG_FIGS[i][1]);
        fputs("</h3>\n", f);
        if (ra->sweep_key)
            svg_sweep(f, rs, ra, c, AGG_FIGS[i][1]);
        else
            svg_bars(f, rs, ra, c, AGG_FIGS[i][1]);
        fputs("<figcaption>", f);
        if (a->ns > 1)
            fputs("Mean over the seeds; the error bars span the 95% confidence interval.", f);
        else
            fputs("One seed: no interval.", f);
        fputs("</figcaption></figure>\n", f);
    }
    fputs("</div></section>\n", f);
}

/* The time series of one view: allocated GPUs, pending jobs (and goodput). */
static void write_view(FILE *f, gs_sim_result *const *rs, size_t n, gs_time base, gs_time t0,
                       gs_time t1, const char *vname, const tview *tv)
{
    char lab[3][96];
    snprintf(lab[0], sizeof lab[0], "allocated GPUs over time per policy, %s", vname);
    snprintf(lab[1], sizeof lab[1], "pending jobs over time per policy, %s", vname);
    snprintf(lab[2], sizeof lab[2], "goodput over time per policy, %s", vname);
    double cap = 0;
    for (size_t i = 0; i < n; i++)
        if (rs[i]->total_gpus > cap) cap = (double)rs[i]->total_gpus;
    /* rows inside the view decide whether it is bucketed */
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (size_t j = 0; j < rs[i]->ntl; j++) k += rs[i]->tl[j].t >= t0 && rs[i]->tl[j].t <= t1;
        if (k > rows) rows = k;
    }
    size_t nb = rows > TS_MAX_POINTS * (size_t)tv->zoom ? TS_BUCKETS * (size_t)tv->zoom : 0;
    char how[200];
    if (nb)
        snprintf(how, sizeof how,
                 " Each line shows the maximum within each of %zu equal intervals (max per "
                 "interval), so short peaks stay visible.",
                 nb);
    else
        snprintf(how, sizeof how, " Every change is drawn.");
    series *ss = xmalloc(n * sizeof *ss);
    int el = 0;
    for (size_t i = 0; i < n; i++) el |= rs[i]->elastic;
    for (int w = 0; w < (el ? 3 : 2); w++) {
        double ymax = w == TS_ALLOC ? cap : 0;
        for (size_t i = 0; i < n; i++) {
            ts_series(rs[i], w, base, t0, t1, nb, &ss[i]);
            for (size_t k = 0; k < ss[i].n; k++)
                if (ss[i].v[k].y > ymax) ymax = ss[i].v[k].y;
        }
        fputs(tv->zoom > 1 ? "<figure class=\"wide\"" : "<figure", f);
        fputs(w ? " style=\"margin-top:20px\">" : ">", f);
        if (w == TS_ALLOC) {
            fputs("<h3>Allocated GPUs</h3>\n", f);
            svg_ts(f, rs, ss, n, tv, ymax, cap, "allocated GPUs", lab[0]);
            fputs("<figcaption>GPUs held by running jobs; the dashed line is the cluster's "
                  "capacity.",
                  f);
        } else if (w == TS_PENDING) {
            fputs("<h3>Pending jobs</h3>\n", f);
            svg_ts(f, rs, ss, n, tv, ymax, 0, "pending jobs", lab[1]);
            fputs("<figcaption>Jobs that have arrived and wait for GPUs.", f);
        } else {
            fputs("<h3>Goodput</h3>\n", f);
            svg_ts(f, rs, ss, n, tv, ymax, 0, "goodput", lab[2]);
            fputs("<figcaption>Sum of the progress rates of the running jobs that are "
                  "progressing (not restarting), in jobs' worth at their reference rate: a job "
                  "at its requested size counts 1 (docs/elastic.md).",
                  f);
        }
        fputs(how, f);
        if (!isnan(tv->wa)) fputs(" The shaded band is the measurement window (--window).", f);
        caption_repeats(f, rs, ss, n);
        fputs("</figcaption></figure>\n", f);
        for (size_t i = 0; i < n; i++) free(ss[i].v);
    }
    free(ss);
}

/*
 * The time series, in views of the time axis chosen with radio buttons (CSS only, no
 * script): the whole run, the arrivals (first to last submission: the busy period, not the
 * long tail), the measurement window when there is one, and the whole run 4 times as wide
 * in a scrolling box.
 */
static void write_timelines(FILE *f, gs_sim_result *const *rs, size_t n)
{
    gs_time t0 = GS_TIME_MAX, t1 = GS_TIME_NONE, a0 = GS_TIME_MAX, a1 = GS_TIME_NONE;
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        if (!r->ntl) continue;
        if (r->tl[0].t < t0) t0 = r->tl[0].t;
        if (r->tl[r->ntl - 1].t > t1) t1 = r->tl[r->ntl - 1].t;
        for (size_t k = 0; r->engine && k < gs_engine_njobs(r->engine); k++) {
            gs_time s = gs_engine_job(r->engine, k)->submit;
            if (s < a0) a0 = s;
            if (s > a1) a1 = s;
        }
    }
    fputs("<section class=\"card\"><h2>Over time</h2>\n", f);
    if (t1 == GS_TIME_NONE || t1 <= t0) {
        fputs("<p class=\"note\">The runs have no timeline to plot.</p></section>\n", f);
        return;
    }
    const gs_sim_result *r0 = rs[0];
    double wa = NAN, wb = NAN;
    gs_time w0 = 0, w1 = 0;
    if (r0->window) {
        w0 = r0->win_start > t0 ? r0->win_start : t0;
        w1 = r0->win_end < t1 ? r0->win_end : t1;
        if (w1 > w0) {
            wa = gs_time_to_sec(w0 - t0) / 3600.0;
            wb = gs_time_to_sec(w1 - t0) / 3600.0;
        }
    }
    double span = gs_time_to_sec(t1 - t0) / 3600.0;
    struct tv_def {
        const char *id, *name, *vname; /* radio id, its label, the figures' label */
        gs_time a, b;
        int zoom;
    } v[4];
    size_t nv = 0;
    v[nv++] = (struct tv_def){"tv-all", "Whole run", "whole run", t0, t1, 1};
    if (a0 != GS_TIME_MAX && a1 > a0 && (a0 > t0 || a1 < t1) &&
        gs_time_to_sec(a1 - a0) < 0.9 * gs_time_to_sec(t1 - t0))
        v[nv++] = (struct tv_def){"tv-arr", "Arrivals", "arrivals", a0 < t0 ? t0 : a0, a1, 1};
    if (!isnan(wa)) v[nv++] = (struct tv_def){"tv-win", "Measurement window", "window", w0, w1, 1};
    v[nv++] = (struct tv_def){"tv-zoom", "Whole run, 4\xc3\x97 wide", "4x wide", t0, t1, 4};
    /* the radio buttons are the views' siblings: the CSS shows the checked one's view */
    fputs("<span class=\"tvsel\">Time axis:</span>", f);
    for (size_t k = 0; k < nv; k++)
        fprintf(f,
                " <input type=\"radio\" name=\"tv\" id=\"%s\"%s><label class=\"tvsel\" "
                "for=\"%s\">%s</label>",
                v[k].id, k ? "" : " checked", v[k].id, v[k].name);
    fputs("\n", f);
    for (size_t k = 0; k < nv; k++) {
        tview tv = {gs_time_to_sec(v[k].a - t0) / 3600.0, gs_time_to_sec(v[k].b - t0) / 3600.0,
                    v[k].zoom, wa, wb};
        if (k == 0) tv.x0 = 0, tv.x1 = span;
        if (!strcmp(v[k].id, "tv-win")) tv.wa = tv.wb = NAN; /* the window is the whole view */
        fprintf(f, "<div class=\"tv %s%s\">\n", v[k].id, v[k].zoom > 1 ? " zoom" : "");
        write_view(f, rs, n, t0, v[k].a, v[k].b, v[k].vname, &tv);
        fputs("</div>\n", f);
    }
    fputs("</section>\n", f);
}

static void write_page(FILE *f, gs_sim_result *const *rs, size_t n, const gs_run_info *info,
                       const gs_report_agg *ra)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"gsched " GSCHED_VERSION "\">\n"
          "<title>gsched simulation report</title>\n<style>\n",
          f);
    fputs(CSS, f);
    fputs("</style>\n</head>\n<body>\n<main>\n<header>\n<h1>gsched simulation report</h1>\n"
          "<p class=\"sub\">",
          f);
    char num[48], meas[48] = "";
    size_t jobs = n ? rs[0]->jobs : 0;
    if (n && rs[0]->window && rs[0]->engine && gs_engine_njobs(rs[0]->engine) != jobs) {
        fmt_count(num, sizeof num, jobs);
        snprintf(meas, sizeof meas, " (%s measured)", num);
        jobs = gs_engine_njobs(rs[0]->engine);
    }
    fmt_count(num, sizeof num, jobs);
    fprintf(f, "%zu polic%s", n, n == 1 ? "y" : "ies");
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : ": ", f);
        esc(f, rs[i]->policy);
    }
    fprintf(f, " &middot; %s jobs%s", num, meas);
    fmt_count(num, sizeof num, n ? rs[0]->total_gpus : 0);
    fprintf(f, " &middot; %s GPUs", num);
    if (info && info->trace_path) {
        const char *base = strrchr(info->trace_path, '/');
        fputs(" &middot; ", f);
        esc(f, base ? base + 1 : info->trace_path);
    }
    fputs("</p>\n</header>\n", f);

    write_run_info(f, rs, n, info, ra);
    if (ra && ra->agg && n) write_agg(f, rs, n, ra);

    fputs("<section class=\"card\"><h2>Results</h2>\n", f);
    write_lead(f, rs, n);
    if (n) write_table(f, rs, n);
    fputs("<p class=\"note\">JCT (job completion time) = end &minus; submit, over finished jobs; "
          "percentiles are <code>sorted[floor(p&middot;n)]</code> as in the Tiresias simulator. "
          "Avg queue: time runnable without GPUs of its own (pending, suspended or time-sliced "
          "out; docs/metrics.md). Makespan: last end &minus; first submit. GPU util: "
          "allocated / total GPUs, averaged over the makespan. Avg 1st start: time from "
          "submission to first start (early feedback). The lowest average JCT is "
          "highlighted.</p>\n",
          f);
    if (n) write_mechanisms(f, rs, n);
    if (n) write_elastic(f, rs, n);
    fputs("</section>\n", f);

    if (n) {
        write_fairness(f, rs, n);
        write_cdfs(f, rs, n);
        write_vc_section(f, rs, n);
        write_breakdowns(f, rs, n);
        write_timelines(f, rs, n);
    }
    fputs("<footer>Generated by gsched " GSCHED_VERSION
          ". Self-contained: no scripts, no external resources.</footer>\n</main>\n</body>\n"
          "</html>\n",
          f);
}

/* Write text[0..len) to path (through path.tmp). */
static int write_whole(const char *path, const char *head, const char *text, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return GS_EIO;
    fputs(head, f);
    fwrite(text, 1, len, f);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return GS_EIO;
    }
    return 0;
}

/*
 * Copy the page to out; every figure (an <svg> element) is also written as a file beside
 * the report, <report name>-NN-<what it shows>.svg, and linked under the figure.
 */
static int export_figures(FILE *out, const char *page, size_t len, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    const char *name = path + dl;
    size_t bl = strlen(name);
    if (bl > 5 && !strcmp(name + bl - 5, ".html")) bl -= 5;
    const char *p = page, *end = page + len;
    int k = 0, rc = 0;
    for (;;) {
        const char *a = strstr(p, "<svg xmlns=");
        const char *b = a ? strstr(a, "</svg>") : NULL;
        if (!a || !b) break;
        b += 6;
        fwrite(p, 1, (size_t)(a - p), out);
        /* the file name: the aria-label, lower case, words joined by '-' */
        char slug[48] = "";
        const char *lab = strstr(a, "aria-label=\"");
        size_t sl = 0;
        if (lab && lab < b)
            for (lab += 12; *lab && *lab != '"' && sl + 1 < sizeof slug; lab++) {
                char c = (char)tolower((unsigned char)*lab);
                if (isalnum((unsigned char)c))
                    slug[sl++] = c;
                else if (sl && slug[sl - 1] != '-')
                    slug[sl++] = '-';
            }
        if (lab && *lab != '"' && *lab) /* cut: end at the last whole word */
            while (sl && slug[sl - 1] != '-') sl--;
        while (sl && slug[sl - 1] == '-') sl--;
        slug[sl] = '\0';
        char file[512], fpath[4096];
        snprintf(file, sizeof file, "%.*s-%02d-%s.svg", (int)(bl > 400 ? 400 : bl), name, ++k,
                 sl ? slug : "figure");
        snprintf(fpath, sizeof fpath, "%.*s%s", (int)dl, path, file);
        if (!rc)
            rc = write_whole(fpath, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", a,
                             (size_t)(b - a));
        fwrite(a, 1, (size_t)(b - a), out);
        fputs("<a class=\"svg\" href=\"", out);
        esc(out, file);
        fputs("\" download>SVG</a>", out);
        p = b;
    }
    fwrite(p, 1, (size_t)(end - p), out);
    return rc;
}

int gs_write_report(const char *path, gs_sim_result *const *rs, size_t n, const gs_run_info *info)
{
    return gs_write_report_ex(path, rs, n, info, NULL);
}

int gs_write_report_ex(const char *path, gs_sim_result *const *rs, size_t n,
                       const gs_run_info *info, const gs_report_agg *ra)
{
    char *page = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&page, &len);
    if (!m) return GS_ENOMEM;
    write_page(m, rs, n, info, ra);
    if (fclose(m) != 0) {
        free(page);
        return GS_ENOMEM;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(page);
        return GS_EIO;
    }
    /* the page is written in many small pieces: a large buffer keeps that cheap */
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    int rc = export_figures(f, page, len, path);
    free(page);
    int bad = ferror(f) || rc;
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return GS_EIO;
    }
    return 0;
}
