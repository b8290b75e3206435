/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.c - replay a trace through one engine and policy; collect metrics.
 *
 * A Pollux workload (trace->goodput) runs with its applications' goodput model
 * installed as the engine's progress model, reset before each run; an
 * ElasticFlow trace (trace->tput) with its throughput tables (stateless).
 * Traces with elastic jobs or deadlines also get the deadline and rescale
 * metrics and a goodput column in the timeline (the sum of the progressing
 * jobs' rates); other runs' results are unchanged.
 *
 * Invariants: the timeline has one row per instant at which allocated GPUs,
 * running or pending jobs changed (the state after everything at that
 * instant); metrics are computed from the final job records only, in slot
 * order, so they do not depend on event interleaving details; every job metric
 * goes through counted().
 *
 * A measurement window (--window, gs_sim_opts.window) restricts every metric to the jobs
 * submitted in it (counted()); utilisation, the busy-window utilisation and goodput are
 * averaged over the window itself, clipped to the run.  Jobs outside it still run, hold
 * GPUs and count in the jobs-in-system average of rho.
 *
 * Fairness metrics (docs/metrics.md): per job the ideal duration
 * (gs_engine_job_ideal), slowdown, finish-time fairness rho, whose n-bar (jobs
 * in the system, averaged over the job's life) comes from exact prefix
 * integrals over the sorted arrivals and ends (O(n log n) for the run), and
 * the queue time pending + suspended; per run their averages and percentiles,
 * Jain's index, the busy-window utilisation and the per-user / per-size
 * breakdowns.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "sim.h"
#include "solver.h"

static int same_row(const gs_tl_row *a, const gs_tl_row *b)
{
    return a->alloc == b->alloc && a->running == b->running && a->pending == b->pending &&
           a->suspended == b->suspended && a->packed == b->packed && a->goodput == b->goodput;
}

/* Elastic runs: the summed progress rate of the jobs progressing now (not paying a restart). */
static double goodput_now(const gs_engine *e)
{
    double g = 0;
    gs_time now = gs_engine_now(e);
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->state == GS_JOB_RUNNING && !gs_job_launching(j, now)) g += j->speed;
    }
    return round(g * 1e6) / 1e6;
}

static void observe(void *ud, const gs_record *rec)
{
    gs_sim_result *r = ud;
    gs_engine *e = r->engine;
    if (!e) return;
    gs_tl_row row = {rec->t,
                     (int32_t)gs_engine_allocated(e),
                     (int32_t)gs_engine_nrunning(e),
                     (int32_t)gs_engine_npending(e),
                     (int32_t)gs_engine_nsuspended(e),
                     (int32_t)gs_engine_packed_gpus(e),
                     r->elastic ? goodput_now(e) : 0.0};
    if (r->ntl) {
        gs_tl_row *last = &r->tl[r->ntl - 1];
        if (last->t == row.t) {
            *last = row;
            /* drop the row if it now equals the one before */
            if (r->ntl >= 2 && same_row(&r->tl[r->ntl - 2], &row)) r->ntl--;
            return;
        }
        if (same_row(last, &row)) return;
    }
    if (r->ntl == r->captl) {
        size_t nc = r->captl ? r->captl * 2 : 4096;
        gs_tl_row *n = realloc(r->tl, nc * sizeof *n);
        if (!n) abort(); /* programs abort on out-of-memory */
        r->tl = n;
        r->captl = nc;
    }
    r->tl[r->ntl++] = row;
}

static void free_users(gs_sim_result *r)
{
    for (size_t u = 0; r->users && u < r->nusers; u++) free(r->users[u].name);
    free(r->users);
}

void gs_sim_result_release(gs_sim_result *r)
{
    if (!r) return;
    gs_engine_destroy(r->engine);
    gs_cluster_destroy(r->cluster);
    free(r->tl);
    free(r->vcs);
    free(r->jm);
    free_users(r);
    free(r->sizes);
    memset(r, 0, sizeof *r);
}

void gs_sim_result_shrink(gs_sim_result *r)
{
    if (!r) return;
    gs_engine_destroy(r->engine);
    gs_cluster_destroy(r->cluster);
    free(r->tl);
    free(r->vcs);
    free(r->jm);
    free_users(r);
    free(r->sizes);
    r->engine = NULL;
    r->cluster = NULL;
    r->tl = NULL;
    r->ntl = r->captl = 0;
    r->vcs = NULL;
    r->nvcs = 0;
    r->jm = NULL;
    r->users = r->sizes = NULL;
    r->nusers = r->nsizes = 0;
}

/* An event naming a node the cluster lacks: FILE:LINE:COL: unknown node, the nodes there are. */
static int unknown_node(const gs_events *evs, const gs_node_event *ev, const gs_cluster *c,
                        gs_diag *d)
{
    size_t nn = gs_cluster_nnodes(c);
    d->file = evs->path;
    return gs_diag_set(d, GS_EUNKNOWN, ev->line, ev->col,
                       "unknown node '%s' (this cluster's %zu node%s: %s%s%s)", ev->node, nn,
                       nn == 1 ? "" : "s", nn ? gs_cluster_node(c, 0)->name : "none",
                       nn > 1 ? " ... " : "", nn > 1 ? gs_cluster_node(c, (int)nn - 1)->name : "");
}

int gs_sim_prepare(const gs_sim_opts *o, gs_sim_result *res, gs_diag *d)
{
    if (res->engine) return 0;
    memset(res, 0, sizeof *res);
    int rc = gs_cluster_load(o->cluster_spec, &res->cluster, d);
    if (rc) return rc;
    /* events naming nodes the cluster lacks fail here, before any run */
    for (size_t i = 0; o->events && i < o->events->n; i++)
        if (!o->events->v[i].release &&
            gs_cluster_find_node(res->cluster, o->events->v[i].node) < 0)
            return unknown_node(o->events, &o->events->v[i], res->cluster, d);
    gs_engine_opts eo = o->eopts;
    if (!eo.read_file) eo.read_file = gs_read_data_file;
    if (!eo.lp) eo.lp = gs_lp_glpk(); /* NULL without GLPK: LP policies refuse */
    rc = gs_engine_opts_from_params(o->params, &eo, d);
    if (rc) return rc;
    d->file = NULL;
    rc = gs_engine_create(res->cluster, o->policy, o->params, &eo, &res->engine, d);
    if (rc) return rc;
    snprintf(res->policy, sizeof res->policy, "%s", o->label ? o->label : o->policy);
    res->window = o->window;
    res->win_start = o->win_start;
    res->win_end = o->win_end;
    snprintf(res->placement, sizeof res->placement, "%s", gs_place_mode_name(eo.placement));
    res->total_gpus = gs_cluster_ngpus(res->cluster);
    gs_engine_set_observer(res->engine, observe, res);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Sorting a million values with qsort's callbacks costs about 0.1 s each, and a run sorts a
 * dozen such arrays: values are sorted here by LSD radix on order-preserving 64-bit keys
 * (16-bit digits, a pass skipped where every key has the same digit); short arrays by qsort.
 */
static void radix_u64(uint64_t *k, size_t n)
{
    uint64_t *tmp = malloc(n * sizeof *tmp);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!tmp || !cnt) abort(); /* programs abort on out-of-memory */
    for (int shift = 0; shift < 64; shift += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(k[i] >> shift) & 0xffff]++;
        if (cnt[(k[0] >> shift) & 0xffff] == n) continue; /* one digit: the order stays */
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[cnt[(k[i] >> shift) & 0xffff]++] = k[i];
        memcpy(k, tmp, n * sizeof *k);
    }
    free(tmp);
    free(cnt);
}

#define RADIX_MIN 4096 /* below this qsort is as fast */
#define SIGN64    ((uint64_t)1 << 63)

/* v ascending (finite values). */
static void sort_doubles(double *v, size_t n)
{
    if (n < RADIX_MIN) {
        qsort(v, n, sizeof *v, cmp_double);
        return;
    }
    uint64_t *k = malloc(n * sizeof *k);
    if (!k) abort();
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        k[i] = u & SIGN64 ? ~u : u | SIGN64; /* negatives reversed below positives */
    }
    radix_u64(k, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = k[i] & SIGN64 ? k[i] & ~SIGN64 : ~k[i];
        memcpy(&v[i], &u, sizeof u);
    }
    free(k);
}

/* Percentile as in the Tiresias reference table: sorted[floor(p * n)], clamped. */
static double pct(const double *v, size_t n, double p)
{
    if (!n) return 0;
    size_t i = (size_t)floor(p * (double)n);
    if (i >= n) i = n - 1;
    return v[i];
}

static double median(const double *v, size_t n)
{
    if (!n) return 0;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double ms_round(double x)
{
    return round(x * 1000.0) / 1000.0;
}

/* Is j one of the measured jobs (submitted inside the window, when there is one)? */
static int counted(const gs_sim_result *r, const gs_job *j)
{
    return !r->window || (j->submit >= r->win_start && j->submit < r->win_end);
}

/* Time integral of the timeline's value (alloc, alloc + packed, goodput) over [t0, t1). */
static double tl_area(const gs_sim_result *r, gs_time t0, gs_time t1, int what)
{
    double area = 0;
    for (size_t i = 0; i < r->ntl; i++) {
        gs_time a = r->tl[i].t, b = i + 1 < r->ntl ? r->tl[i + 1].t : t1;
        if (a < t0) a = t0;
        if (b > t1) b = t1;
        if (b <= a) continue;
        double v = what == 0   ? (double)r->tl[i].alloc
                   : what == 1 ? (double)(r->tl[i].alloc + r->tl[i].packed)
                               : r->tl[i].goodput;
        area += v * gs_time_to_sec(b - a);
    }
    return area;
}

double gs_jain(const double *x, size_t n)
{
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    return n && s2 > 0 ? s * s / ((double)n * s2) : 0;
}

/* Six decimals, for ratios. */
static double r6(double x)
{
    return round(x * 1e6) / 1e6;
}

double gs_sim_util_over(const gs_sim_result *r, gs_time from, gs_time to)
{
    if (to <= from || !r->total_gpus) return 0;
    double area = 0;
    for (size_t i = 0; i < r->ntl; i++) {
        gs_time a = r->tl[i].t, b = i + 1 < r->ntl ? r->tl[i + 1].t : to;
        if (a < from) a = from;
        if (b > to) b = to;
        if (b > a) area += (double)r->tl[i].alloc * gs_time_to_sec(b - a);
    }
    return r6(area / ((double)r->total_gpus * gs_time_to_sec(to - from)));
}

/* ---- jobs in the system over time (finish-time fairness) ------------------------------ */

#ifdef __SIZEOF_INT128__
typedef __int128 wide; /* job-microseconds: exact */
#else
typedef long double wide;
#endif

/*
 * The number of jobs in the system (arrived, not final) as a step function: cnt[k] jobs on
 * [bt[k], bt[k+1]), and cum[k] = the exact integral of that count from bt[0] to bt[k] in
 * job-microseconds.  A job is in the system on [submit, end); one never final stays to the
 * end.  Built from the sorted arrivals and ends in O(n log n); each query is a binary search.
 */
typedef struct occupancy {
    gs_time *bt;
    int64_t *cnt;
    wide *cum;
    size_t nb;
} occupancy;

static int cmp_time(const void *a, const void *b)
{
    gs_time x = *(const gs_time *)a, y = *(const gs_time *)b;
    return (x > y) - (x < y);
}

/* t ascending. */
static void sort_times(gs_time *t, size_t n)
{
    if (n < RADIX_MIN) {
        qsort(t, n, sizeof *t, cmp_time);
        return;
    }
    uint64_t *k = (uint64_t *)t; /* same size: keys in place */
    for (size_t i = 0; i < n; i++) k[i] = (uint64_t)t[i] ^ SIGN64;
    radix_u64(k, n);
    for (size_t i = 0; i < n; i++) t[i] = (gs_time)(k[i] ^ SIGN64);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort(); /* programs abort on out-of-memory */
    return p;
}

static char *xstrdup(const char *v)
{
    char *c = strdup(v);
    if (!c) abort(); /* a program may abort on out-of-memory */
    return c;
}

static void occ_build(const gs_engine *e, occupancy *o)
{
    size_t n = gs_engine_njobs(e), ni = 0, no = 0;
    gs_time *in = xcalloc(n, sizeof *in), *out = xcalloc(n, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (!j->arrived) continue;
        in[ni++] = j->submit;
        if (gs_job_state_final(j->state) && j->end != GS_TIME_NONE) out[no++] = j->end;
    }
    sort_times(in, ni);
    sort_times(out, no);
    o->bt = xcalloc(ni + no, sizeof *o->bt);
    o->cnt = xcalloc(ni + no, sizeof *o->cnt);
    o->cum = xcalloc(ni + no, sizeof *o->cum);
    o->nb = 0;
    size_t a = 0, b = 0;
    int64_t c = 0;
    while (a < ni || b < no) {
        gs_time t = a < ni && (b >= no || in[a] <= out[b]) ? in[a] : out[b];
        for (; a < ni && in[a] == t; a++) c++;
        for (; b < no && out[b] == t; b++) c--;
        size_t k = o->nb++;
        o->bt[k] = t;
        o->cnt[k] = c;
        o->cum[k] = k ? o->cum[k - 1] + (wide)o->cnt[k - 1] * (wide)(t - o->bt[k - 1]) : 0;
    }
    free(in);
    free(out);
}

/*
 * The integral of the count from the first breakpoint to t; *hint: a breakpoint index at or
 * before t's (0 will do), updated to t's, so queries in rising order cost O(1) each.
 */
static wide occ_integral(const occupancy *o, gs_time t, size_t *hint)
{
    if (!o->nb || t <= o->bt[0]) return 0;
    size_t lo = *hint < o->nb && o->bt[*hint] <= t ? *hint : 0, hi = lo + 1, step = 1;
    while (hi < o->nb && o->bt[hi] <= t) { /* gallop: the answer is in [lo, hi) */
        lo = hi;
        hi += step;
        step *= 2;
    }
    if (hi > o->nb) hi = o->nb;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->bt[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    *hint = lo;
    return o->cum[lo] + (wide)o->cnt[lo] * (wide)(t - o->bt[lo]);
}

static void occ_free(occupancy *o)
{
    free(o->bt);
    free(o->cnt);
    free(o->cum);
}

/* ---- breakdowns ------------------------------------------------------------------------ */

/* What the aggregations need of each job, gathered in one pass (job records are large). */
typedef struct jfact {
    double jct_s, gpu_h; /* JCT of a DONE job; GPU-hours it held */
    int32_t state;       /* its gs_job_state; -1 when it is not counted (outside the window) */
    int32_t vc, user, gpus;
} jfact;

/*
 * Sort the DONE jobs' values val(i) by group key[i] (counting sort) and each group's
 * ascending; returns them, group g's starting at the sum of the done counts before it.
 */
static double *by_group(const jfact *jf, const gs_job_metrics *jm, size_t n, const int32_t *key,
                        const size_t *done, size_t ng, int queue)
{
    size_t *off = xcalloc(ng + 1, sizeof *off);
    for (size_t g = 0; g < ng; g++) off[g + 1] = off[g] + done[g];
    double *vals = xcalloc(off[ng], sizeof *vals);
    for (size_t i = 0; i < n; i++)
        if (jf[i].state == GS_JOB_DONE)
            vals[off[key[i]]++] = queue ? gs_time_to_sec(jm[i].queue) : jm[i].slowdown;
    for (size_t g = 0, i = 0; g < ng; i += done[g++]) sort_doubles(vals + i, done[g]);
    free(off);
    return vals;
}

/* Fill gs[0..ng) from the jobs, job i in group key[i]. */
static void group_stats(const jfact *jf, const gs_job_metrics *jm, size_t n, const int32_t *key,
                        size_t ng, gs_group_stats *gs)
{
    double *sj = xcalloc(ng, sizeof *sj), *sq = xcalloc(ng, sizeof *sq);
    double *ss = xcalloc(ng, sizeof *ss), *sr = xcalloc(ng, sizeof *sr);
    size_t *done = xcalloc(ng, sizeof *done);
    for (size_t i = 0; i < n; i++) {
        if (jf[i].state < 0) continue;
        size_t g = (size_t)key[i];
        gs_group_stats *s = &gs[g];
        s->jobs++;
        s->gpu_h += jf[i].gpu_h;
        if (jf[i].state == GS_JOB_REJECTED) s->rejected++;
        if (jf[i].state != GS_JOB_DONE) continue;
        done[g]++;
        sj[g] += jf[i].jct_s;
        sq[g] += gs_time_to_sec(jm[i].queue);
        ss[g] += jm[i].slowdown;
        sr[g] += jm[i].rho;
        if (jm[i].rho > s->max_rho) s->max_rho = jm[i].rho;
    }
    double *vals = by_group(jf, jm, n, key, done, ng, 0);
    for (size_t i = 0, g = 0; g < ng; g++) {
        gs_group_stats *s = &gs[g];
        s->done = done[g];
        s->gpu_h = round(s->gpu_h * 1e3) / 1e3;
        if (!s->done) continue;
        double k = (double)s->done;
        s->avg_jct_s = ms_round(sj[g] / k);
        s->avg_queue_s = ms_round(sq[g] / k);
        s->avg_slowdown = r6(ss[g] / k);
        s->avg_rho = r6(sr[g] / k);
        s->max_rho = r6(s->max_rho);
        s->median_slowdown = r6(median(vals + i, s->done));
        s->p95_slowdown = r6(pct(vals + i, s->done, 0.95));
        i += s->done;
    }
    free(vals);
    free(done);
    free(sj);
    free(sq);
    free(ss);
    free(sr);
}

/* Per VC (engine order): counts, averages, the queue's median and p95. */
static void vc_stats(gs_sim_result *r, const jfact *jf, size_t n)
{
    const gs_engine *e = r->engine;
    size_t nv = gs_engine_nvcs(e);
    r->vcs = xcalloc(nv, sizeof *r->vcs);
    r->nvcs = nv;
    int32_t *key = xcalloc(n, sizeof *key);
    double *sj = xcalloc(nv, sizeof *sj), *sq = xcalloc(nv, sizeof *sq);
    double *ss = xcalloc(nv, sizeof *ss), *sr = xcalloc(nv, sizeof *sr);
    size_t *done = xcalloc(nv, sizeof *done);
    for (size_t i = 0; i < n; i++) {
        size_t v = (size_t)(key[i] = jf[i].vc);
        if (jf[i].state < 0) continue;
        gs_vc_stats *s = &r->vcs[v];
        s->jobs++;
        if (jf[i].state == GS_JOB_REJECTED) s->rejected++;
        if (jf[i].state != GS_JOB_DONE) continue;
        done[v]++;
        sj[v] += jf[i].jct_s;
        sq[v] += gs_time_to_sec(r->jm[i].queue);
        ss[v] += r->jm[i].slowdown;
        sr[v] += r->jm[i].rho;
        if (r->jm[i].rho > s->max_rho) s->max_rho = r->jm[i].rho;
    }
    double *q = by_group(jf, r->jm, n, key, done, nv, 1);
    for (size_t v = 0, i = 0; v < nv; v++) {
        gs_vc_stats *s = &r->vcs[v];
        snprintf(s->name, sizeof s->name, "%s", gs_engine_vc_name(e, (int)v));
        size_t nk = s->done = done[v];
        if (!nk) continue;
        s->avg_jct_s = ms_round(sj[v] / (double)nk);
        s->avg_queue_s = ms_round(sq[v] / (double)nk);
        s->median_queue_s = ms_round(median(q + i, nk));
        s->p95_queue_s = ms_round(pct(q + i, nk, 0.95));
        s->avg_slowdown = r6(ss[v] / (double)nk);
        s->avg_rho = r6(sr[v] / (double)nk);
        s->max_rho = r6(s->max_rho);
        i += nk;
    }
    free(q);
    free(key);
    free(done);
    free(sj);
    free(sq);
    free(ss);
    free(sr);
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Per-user (in order of first appearance) and per-size (requested GPUs) breakdowns. */
static void breakdowns(gs_sim_result *r, const jfact *jf, size_t n)
{
    const gs_engine *e = r->engine;
    int32_t *key = xcalloc(n, sizeof *key);
    /* users: the engine's interned ids are dense, in order of first appearance */
    size_t nu = 0;
    for (size_t i = 0; i < n; i++) {
        key[i] = jf[i].user;
        if ((size_t)jf[i].user + 1 > nu) nu = (size_t)jf[i].user + 1;
    }
    r->users = xcalloc(nu, sizeof *r->users);
    r->nusers = nu;
    for (size_t i = 0; i < n; i++) /* interned: every job of a user has the same string */
        if (!r->users[key[i]].name && gs_engine_job(e, i)->user)
            r->users[key[i]].name = xstrdup(gs_engine_job(e, i)->user);
    group_stats(jf, r->jm, n, key, nu, r->users);
    double *avg = xcalloc(nu, sizeof *avg);
    size_t na = 0;
    for (size_t u = 0; u < nu; u++)
        if (r->users[u].done) avg[na++] = r->users[u].avg_slowdown;
    r->jain_user_slowdown = r6(gs_jain(avg, na));
    free(avg);
    /* sizes: the distinct requested GPU counts, ascending */
    gs_time *all = xcalloc(n, sizeof *all);
    for (size_t i = 0; i < n; i++) all[i] = jf[i].gpus;
    sort_times(all, n);
    int32_t *sz = xcalloc(n, sizeof *sz);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (!ns || sz[ns - 1] != (int32_t)all[i]) sz[ns++] = (int32_t)all[i];
    free(all);
    for (size_t i = 0; i < n; i++) {
        const int32_t *f = bsearch(&jf[i].gpus, sz, ns, sizeof *sz, cmp_int32);
        key[i] = (int32_t)(f - sz);
    }
    r->sizes = xcalloc(ns, sizeof *r->sizes);
    r->nsizes = ns;
    for (size_t k = 0; k < ns; k++) r->sizes[k].gpus = sz[k];
    group_stats(jf, r->jm, n, key, ns, r->sizes);
    free(sz);
    free(key);
}

/*
 * Per-job metrics (docs/metrics.md): ideal duration, queue time (pending + suspended), and
 * for DONE jobs nbar, slowdown and rho; and what the aggregations need (jf).
 */
static void job_metrics(gs_sim_result *r, jfact *jf)
{
    const gs_engine *e = r->engine;
    size_t n = gs_engine_njobs(e), hint = 0;
    r->jm = xcalloc(n, sizeof *r->jm);
    occupancy o;
    occ_build(e, &o);
    gs_time now = gs_engine_now(e);
    double G = (double)r->total_gpus;
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(e, i);
        gs_job_metrics *m = &r->jm[i];
        gs_time t = gs_job_state_final(j->state) && j->end != GS_TIME_NONE ? j->end : now;
        jf[i] = (jfact){0,
                        gs_job_service(j, now) / 3600.0,
                        counted(r, j) ? (int32_t)j->state : -1,
                        j->vc,
                        j->user_id,
                        j->req_gpus};
        m->ideal = gs_engine_job_ideal(e, j);
        m->queue = gs_job_queued(j, t) + gs_job_suspended(j, t);
        if (j->state != GS_JOB_DONE) continue;
        if (j->end <= j->submit) { /* done the instant it came: as fast as it could be */
            m->nbar = 1;
            m->slowdown = m->rho = 1;
            continue;
        }
        double jct = gs_time_to_sec(j->end - j->submit);
        /* a job of no work that still waited: its ideal counts as 1 s, not 1 us */
        double ideal = m->ideal > 0 ? gs_time_to_sec(m->ideal) : 1.0;
        /* submits come in (nearly) rising order: the hint makes that query O(1) */
        wide from = occ_integral(&o, j->submit, &hint);
        size_t h2 = hint;
        m->nbar = (double)(occ_integral(&o, j->end, &h2) - from) / (double)(j->end - j->submit);
        double share = G > 0 ? (double)j->req_gpus * m->nbar / G : 1;
        jf[i].jct_s = jct;
        m->slowdown = jct / ideal;
        m->rho = jct / (ideal * (share > 1 ? share : 1));
    }
    occ_free(&o);
}

static void compute_metrics(gs_sim_result *r)
{
    gs_engine *e = r->engine;
    size_t n = gs_engine_njobs(e);
    jfact *jf = xcalloc(n, sizeof *jf);
    job_metrics(r, jf);
    double *jct = xcalloc(n, sizeof *jct);
    double *queue = xcalloc(n, sizeof *queue);
    double *pend = xcalloc(n, sizeof *pend);
    double *first = xcalloc(n, sizeof *first);
    double *sd = xcalloc(n, sizeof *sd);
    double *rho = xcalloc(n, sizeof *rho);
    size_t k = 0;
    double sum_jct = 0, sum_q = 0, sum_p = 0, sum_first = 0, sum_sd = 0, sum_rho = 0;
    gs_time tmin = GS_TIME_MAX, tmax = GS_TIME_NONE, amax = GS_TIME_NONE;
    /* the run's own span (utilisation over a window is clipped to it) */
    gs_time rmin = GS_TIME_MAX, rmax = GS_TIME_NONE;
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->submit < rmin) rmin = j->submit;
        if (j->state != GS_JOB_REJECTED && gs_job_state_final(j->state) && j->end > rmax)
            rmax = j->end;
    }
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (!counted(r, j)) continue;
        r->jobs++;
        if (j->submit < tmin) tmin = j->submit;
        if (j->submit > amax) amax = j->submit;
        r->preemptions += (uint64_t)j->preemptions;
        for (int m = 0; m < GS_MECH_N; m++) {
            r->mech[m] += gs_job_mech_count(j, (gs_mech)m);
            r->mech_gpu_s[m] += gs_job_mech_gpu_s(j, (gs_mech)m);
        }
        switch (j->state) {
        case GS_JOB_DONE: r->jobs_done++; break;
        case GS_JOB_REJECTED: r->jobs_rejected++; continue;
        case GS_JOB_FAILED:
        case GS_JOB_CANCELLED: r->jobs_failed++; break;
        default: r->jobs_unfinished++; continue;
        }
        if (j->end > tmax) tmax = j->end;
        if (j->state != GS_JOB_DONE) continue;
        double jc = gs_time_to_sec(j->end - j->submit);
        double q = gs_time_to_sec(r->jm[i].queue);
        double pq = gs_time_to_sec(j->queued);
        double fs = gs_time_to_sec(j->first_start - j->submit);
        jct[k] = jc;
        queue[k] = q;
        pend[k] = pq;
        first[k] = fs;
        sd[k] = r->jm[i].slowdown;
        rho[k] = r->jm[i].rho;
        k++;
        sum_jct += jc;
        sum_q += q;
        sum_p += pq;
        sum_first += fs;
        sum_sd += r->jm[i].slowdown;
        sum_rho += r->jm[i].rho;
    }
    if (k) {
        r->jain_rho = r6(gs_jain(rho, k));
        sort_doubles(jct, k);
        sort_doubles(queue, k);
        sort_doubles(pend, k);
        sort_doubles(first, k);
        sort_doubles(sd, k);
        sort_doubles(rho, k);
        r->avg_first_s = ms_round(sum_first / (double)k);
        r->median_first_s = ms_round(median(first, k));
        r->p95_first_s = ms_round(pct(first, k, 0.95));
        r->avg_jct_s = ms_round(sum_jct / (double)k);
        r->median_jct_s = ms_round(median(jct, k));
        r->p95_jct_s = ms_round(pct(jct, k, 0.95));
        r->p99_jct_s = ms_round(pct(jct, k, 0.99));
        r->avg_queue_s = ms_round(sum_q / (double)k);
        r->median_queue_s = ms_round(median(queue, k));
        r->avg_pending_s = ms_round(sum_p / (double)k);
        r->median_pending_s = ms_round(median(pend, k));
        r->avg_slowdown = r6(sum_sd / (double)k);
        r->median_slowdown = r6(median(sd, k));
        r->p95_slowdown = r6(pct(sd, k, 0.95));
        r->avg_rho = r6(sum_rho / (double)k);
        r->p95_rho = r6(pct(rho, k, 0.95));
        r->max_rho = r6(rho[k - 1]);
    }
    free(jct);
    free(queue);
    free(pend);
    free(first);
    free(sd);
    free(rho);
    for (int m = 0; m < GS_MECH_N; m++) r->mech_gpu_s[m] = ms_round(r->mech_gpu_s[m]);
    if (tmax != GS_TIME_NONE && tmax > tmin) r->makespan_s = ms_round(gs_time_to_sec(tmax - tmin));
    /* utilisation: over the makespan of the measured jobs, or over the window */
    gs_time u0 = tmin, u1 = tmax;
    if (r->window) {
        u0 = r->win_start > rmin ? r->win_start : rmin;
        u1 = r->win_end < rmax ? r->win_end : rmax;
    }
    if (u1 != GS_TIME_NONE && u0 != GS_TIME_MAX && u1 > u0) {
        double denom = (double)r->total_gpus * gs_time_to_sec(u1 - u0);
        r->gpu_util = denom > 0 ? round(tl_area(r, u0, u1, 0) / denom * 1e6) / 1e6 : 0;
        r->gpu_job_util = denom > 0 ? round(tl_area(r, u0, u1, 1) / denom * 1e6) / 1e6 : 0;
    }
    /* the busy window: while the workload is offered (the makespan's if all arrive at once),
     * or the measurement window */
    if (r->window && u1 != GS_TIME_NONE && u0 != GS_TIME_MAX && u1 > u0) {
        r->busy_from = u0;
        r->busy_to = u1;
        r->gpu_util_busy = gs_sim_util_over(r, r->busy_from, r->busy_to);
    } else if (!r->window && n) {
        r->busy_from = tmin;
        r->busy_to = amax > tmin ? amax : tmax != GS_TIME_NONE ? tmax : tmin;
        r->gpu_util_busy = gs_sim_util_over(r, r->busy_from, r->busy_to);
    }
    r->events = gs_engine_events(e);
    if (r->elastic) {
        double rg = 0, lw = 0;
        size_t nc = 0;
        for (size_t i = 0; i < n; i++) {
            const gs_job *j = gs_engine_job(e, i);
            if (!counted(r, j)) continue;
            nc++;
            r->rescales += (uint64_t)j->rescales;
            rg += j->rescale_gpu_s;
            lw += j->lost_work_gpu_s;
            if (j->deadline == GS_TIME_NONE) continue;
            r->deadline_jobs++;
            if (j->state == GS_JOB_DONE && j->end <= j->deadline) r->deadline_met++;
        }
        r->rescale_gpu_s = ms_round(rg);
        r->lost_work_gpu_s = ms_round(lw);
        r->rescales_per_job = nc ? round((double)r->rescales / (double)nc * 1e6) / 1e6 : 0;
        r->deadline_met_ratio =
            r->deadline_jobs ? round((double)r->deadline_met / (double)r->deadline_jobs * 1e6) / 1e6
                             : 0;
        if (u1 != GS_TIME_NONE && u0 != GS_TIME_MAX && u1 > u0)
            r->avg_goodput = round(tl_area(r, u0, u1, 2) / gs_time_to_sec(u1 - u0) * 1e6) / 1e6;
    }
    vc_stats(r, jf, n);
    breakdowns(r, jf, n);
    free(jf);
}

int gs_sim_run(const gs_sim_opts *o, const gs_trace *t, gs_sim_result *res, gs_diag *d)
{
    int rc = gs_sim_prepare(o, res, d);
    if (rc) return rc;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    d->file = t->path;
    for (size_t i = 0; i < t->n && !res->elastic; i++)
        res->elastic = t->jobs[i].max_gpus > 0 || t->jobs[i].deadline != GS_TIME_NONE;
    /* automatic ids (tasks of non-gang jobs) come after every id of the trace */
    int64_t maxid = -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->jobs[i].id > maxid) maxid = t->jobs[i].id;
    gs_engine_reserve_ids(res->engine, maxid + 1);
    if (t->goodput) {
        /* a Pollux workload: its applications' goodput model drives the jobs' progress; one
         * model serves the runs of a trace one after the other */
        gs_goodput_reset(t->goodput);
        gs_goodput_set_interference(t->goodput, o->interference);
        gs_goodput_set_interval(t->goodput, o->retune);
        if ((rc = gs_engine_set_progress(res->engine, gs_goodput_progress_ops(), t->goodput)))
            return gs_diag_set(d, rc, 0, 0, "cannot install the goodput model: %s",
                               gs_strerror(rc));
    }
    if (t->tput && (rc = gs_engine_set_progress(res->engine, gs_tput_progress_ops(), t->tput)))
        /* an ElasticFlow trace: its throughput tables (read-only, shared by the runs) */
        return gs_diag_set(d, rc, 0, 0, "cannot install the throughput tables: %s",
                           gs_strerror(rc));
    for (size_t i = 0; i < t->n; i++) {
        /* held, waiting on other jobs, a throttled array's element: deferred (simwait.c) */
        rc = gs_simwait_has(t->wait, t->jobs[i].id)
                 ? gs_engine_add_job_deferred(res->engine, &t->jobs[i], NULL, d)
                 : gs_engine_add_job(res->engine, &t->jobs[i], NULL, d);
        if (rc) {
            char msg[sizeof d->msg];
            snprintf(msg, sizeof msg, "job %lld: %s", (long long)t->jobs[i].id, d->msg);
            return gs_diag_set(d, rc, 0, 0, "%s", msg);
        }
    }
    /* the stage before the queue starts afresh (release events below apply to this run) */
    if (t->wait && (rc = gs_simwait_bind(t->wait, res->engine, d))) return rc;
    if (o->events) {
        d->file = NULL;
        for (size_t i = 0; i < o->events->n; i++) {
            const gs_node_event *ev = &o->events->v[i];
            if (ev->release) { /* "time,JOB,release": a held job's hold ends (simwait.h) */
                if (gs_simwait_release(t->wait, strtoll(ev->node, NULL, 10), ev->t)) {
                    d->file = o->events->path;
                    return gs_diag_set(d, GS_EUNKNOWN, ev->line, ev->col,
                                       "release: job %s is not held in this trace", ev->node);
                }
                continue;
            }
            int node = gs_cluster_find_node(res->cluster, ev->node);
            if (node < 0) return unknown_node(o->events, ev, res->cluster, d);
            /* a machine in several HiveD chains is one node per chain: the event hits each */
            for (; node >= 0; node = gs_cluster_find_node_next(res->cluster, ev->node, node)) {
                rc = ev->drain ? gs_engine_add_node_drain_event(res->engine, ev->t, node, ev->down)
                     : ev->bad ? gs_engine_add_node_bad_event(res->engine, ev->t, node, ev->down)
                               : gs_engine_add_node_event(res->engine, ev->t, node, ev->down);
                if (rc) return rc;
            }
        }
    }
    if (t->wait && (rc = gs_simwait_check(t->wait, res->engine))) return rc;
    size_t steps = 0;
    while ((rc = gs_engine_step(res->engine)) > 0) {
        if (t->wait && (rc = gs_simwait_check(t->wait, res->engine)) != 0) break;
        if (o->progress && (++steps & 0xffff) == 0) {
            size_t done = 0;
            for (size_t i = 0; i < gs_engine_njobs(res->engine); i++)
                done += gs_job_state_final(gs_engine_job(res->engine, i)->state);
            o->progress(o->progress_ud, res, gs_engine_now(res->engine), done,
                        gs_engine_njobs(res->engine));
        }
    }
    if (!rc && t->wait) rc = gs_simwait_finish(t->wait, res->engine);
    if (rc < 0) return gs_diag_set(d, rc, 0, 0, "simulation failed: %s", gs_strerror(rc));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    compute_metrics(res);
    res->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return 0;
}
