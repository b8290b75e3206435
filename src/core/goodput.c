/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * goodput.c - the goodput model of elastic jobs (goodput.h): measured
 * application tables (the truth the simulator runs on), the throughput model
 * a job learns from the configurations it ran (fit + optimize of the batch),
 * the speedup policies ask for, and the engine's progress model (rate and
 * epoch boundaries of each job with an application).
 *
 * After the Pollux OSDI'21 artifact's simulator model (applications.py,
 * goodput.py, speedup.py, simulator.py Job), rewritten from its description:
 *   - true step/sync time of a placement and local batch: the placement's own
 *     rows interpolated linearly over the local batch when it was measured;
 *     else an interpolation over (nodes <= 16, replicas, local batch) of the
 *     measured placements' means and the scalability rows.  The artifact uses
 *     a Delaunay (LinearNDInterpolator) there; we use a deterministic scheme
 *     (interp_nd below) that is exact where the artifact is linear along an
 *     edge and close elsewhere (docs/elastic.md "Goodput model");
 *   - validation curves: progress at an epoch is the minimum over the curves;
 *     iterations and gradient statistics are interpolated linearly between
 *     the two validated batch sizes around the batch;
 *   - efficiency gain (var + sqr) / (var / scale + sqr), scale = batch /
 *     init batch;
 *   - learned model: PerfParams (alpha/beta of compute, inter- and intra-node
 *     network, gamma) fitted by bounded L-BFGS on the same objective as the
 *     artifact, optimize() over 50 geometric batch sizes with accumulation;
 *   - per-job state keyed by the job's slot: epoch, atomic batch and
 *     accumulation steps, profile of observed configurations, learned
 *     parameters, memoised speedups;
 *   - fits remembered by their exact profile (fitent): a fit is a pure function of the
 *     observations in their order, so another job (or a later run after
 *     gs_goodput_reset) observing the same configurations reuses it bit for bit;
 *   - the step order of the artifact's Job.step: a configuration is learned
 *     from when it starts running (rate), the batch re-tuned at placements,
 *     epoch boundaries and (gs_goodput_set_interval) the end of each
 *     scheduling interval, where an epoch crossing takes the whole seconds
 *     the artifact's clock rounds it to.
 *
 * Units: a job's work is its application's progress at the end of the last
 * epoch divided by the reference goodput (1 GPU at the initial batch, epoch 0,
 * progress per second), in microseconds; rate 1 = the reference goodput.
 *
 * Invariants: no I/O, no clock, no randomness; every result depends only on
 * the rows added, the calls made and the jobs passed in (never on hash or
 * memory order: the fit table hashes only to find a profile it compares in
 * full); epoch boundaries are integral work-us values strictly
 * increasing from 0 to gs_goodput_work().
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/cluster.h"
#include "gsched/goodput.h"

/* ---- application tables --------------------------------------------------------------- */

#define PL_MAX 24 /* digits of a placement id (GPUs per node, one digit per node) */

typedef struct prow {
    char pl[PL_MAX + 1];
    int nodes, replicas, bsz;
    double xb; /* bsz as a double (interpolation abscissa) */
    double step, sync;
} prow;

typedef struct srow {
    int nodes, replicas, bsz;
    double step, sync;
} srow;

typedef struct vrow {
    double progress, iteration, metric, sqr, var;
} vrow;

typedef struct vcurve {
    int64_t batch;
    vrow *r;
    size_t n, cap;
} vcurve;

/* one (nodes, replicas) of the interpolation set, points sorted by local batch */
typedef struct group {
    int nodes, replicas;
    size_t first, n; /* into app.pts */
} group;

typedef struct gpt {
    double bsz, step, sync;
} gpt;

typedef struct app {
    char *name;
    gs_app_spec spec; /* spec.name = name */
    prow *pl;
    size_t npl, cappl;
    srow *sc;
    size_t nsc, capsc;
    vcurve *val;
    size_t nval, capval;
    /* derived by finish */
    int finished;
    group *grp;
    size_t ngrp;
    gpt *pts;
    int *levels; /* distinct node counts of the groups, ascending */
    size_t nlevels;
    int (*tri)[3]; /* Delaunay triangles of the groups' (nodes, replicas), counter-clockwise */
    size_t ntri;
    double *prog;       /* progress at the start of epoch e, e = 0..max_epochs */
    gs_time *bound;     /* the same in work-us */
    double ref_good;    /* reference goodput (progress per second) */
    struct cands *cand; /* optimize's candidates for replicas 1..CAND_R - 1 ([0] unused) */
} app;

/* The distinct (atomic, accum) of optimize's 50 batch sizes for one replica count, in the
 * order it tries them (consecutive repeats dropped: the same pair cannot win twice).  They
 * depend on the application's spec only, so finish computes them once per replica count. */
#define CAND_N 50
#define CAND_R 65
typedef struct cands {
    int n;
    int atomic[CAND_N], accum[CAND_N];
} cands;

/* ---- per-job state -------------------------------------------------------------------- */

typedef struct pkey {
    int nodes, replicas, bsz;
    double step, sync;
    double lstep, lacc; /* log(step), log(step - sync): constants of the fit (fit_obj) */
} pkey;

static pkey mk_pkey(int nodes, int replicas, int bsz, double step, double sync)
{
    return (pkey){nodes, replicas, bsz, step, sync, log(step), log(step - sync)};
}

#define MEMO_N 17 /* nodes 0..16 */
#define MEMO_R 65 /* replicas 0..64 */

typedef struct jstate {
    int used, app; /* app = -1: the job's application is unknown */
    int mode;
    int64_t batch; /* GS_BATCH_FIXED: the target global batch */
    int epoch;
    int atomic, accum; /* 0 = no GPUs */
    int recheck;       /* the next boundary only re-evaluates interference */
    int nodes, replicas;
    pkey *prof;
    size_t nprof, capprof;
    int have_perf, have_grad;
    double perf[7];
    double grad_sqr, grad_var;
    double *memo; /* speedups, MEMO_N x MEMO_R, < 0 = unknown */
    double base_good;
} jstate;

/* A fit already made: the fitted parameters of one profile (the exact observations in
 * their order).  fit_perf_arr is a pure function of the profile, and jobs of the same
 * application (in one run and in the runs after a reset) observe the same configurations
 * with the same times, so most fits repeat one made before. */
typedef struct fitent {
    uint64_t h; /* 0 = empty slot */
    size_t n;
    pkey *k;
    double p[7];
} fitent;

struct gs_goodput {
    app *apps;
    size_t napps, capapps;
    jstate *js;
    size_t njs;
    fitent *fits; /* open addressing by the profile's hash; kept by gs_goodput_reset */
    size_t nfits, capfits;
    double interference;
    gs_time interval; /* > 0: also re-tune at every multiple of it (parity) */
};

/* ---- small helpers -------------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) nc *= 2;
    void *n = realloc(*p, nc * size);
    if (!n) return GS_ENOMEM;
    *p = n;
    *cap = nc;
    return 0;
}

static int ceil_eps(double x)
{
    return (int)ceil(x - 1e-8);
}

int gs_goodput_create(gs_goodput **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : GS_ENOMEM;
}

static void js_clear(jstate *s)
{
    free(s->prof);
    free(s->memo);
    memset(s, 0, sizeof *s);
}

void gs_goodput_reset(gs_goodput *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->njs; i++) js_clear(&g->js[i]);
    free(g->js);
    g->js = NULL;
    g->njs = 0;
}

void gs_goodput_destroy(gs_goodput *g)
{
    if (!g) return;
    gs_goodput_reset(g);
    for (size_t i = 0; i < g->napps; i++) {
        app *a = &g->apps[i];
        free(a->name);
        free(a->pl);
        free(a->sc);
        for (size_t k = 0; k < a->nval; k++) free(a->val[k].r);
        free(a->val);
        free(a->grp);
        free(a->pts);
        free(a->levels);
        free(a->tri);
        free(a->prog);
        free(a->bound);
        free(a->cand);
    }
    free(g->apps);
    for (size_t i = 0; i < g->capfits; i++) free(g->fits[i].k);
    free(g->fits);
    free(g);
}

int gs_goodput_find_app(const gs_goodput *g, const char *name)
{
    if (!g || !name) return -1;
    for (size_t i = 0; i < g->napps; i++)
        if (!strcmp(g->apps[i].name, name)) return (int)i;
    return -1;
}

const gs_app_spec *gs_goodput_app(const gs_goodput *g, int id)
{
    if (!g || id < 0 || (size_t)id >= g->napps) return NULL;
    return &g->apps[id].spec;
}

size_t gs_goodput_napps(const gs_goodput *g)
{
    return g ? g->napps : 0;
}

int gs_goodput_add_app(gs_goodput *g, const gs_app_spec *spec)
{
    if (!g || !spec || !spec->name || !*spec->name) return GS_EINVAL;
    if (gs_goodput_find_app(g, spec->name) >= 0) return GS_EEXIST;
    if (spec->init_batch < 0 || spec->max_batch < 0 || spec->min_local_bsz < 0 ||
        spec->max_local_bsz < 0 || spec->max_epochs < 0)
        return GS_ERANGE;
    if (grow((void **)&g->apps, &g->capapps, g->napps + 1, sizeof *g->apps)) return GS_ENOMEM;
    app *a = &g->apps[g->napps];
    memset(a, 0, sizeof *a);
    a->name = strdup(spec->name);
    if (!a->name) return GS_ENOMEM;
    a->spec = *spec;
    a->spec.name = a->name;
    return (int)g->napps++;
}

static app *get_app(gs_goodput *g, int id)
{
    if (!g || id < 0 || (size_t)id >= g->napps) return NULL;
    app *a = &g->apps[id];
    return a->finished ? NULL : a;
}

static int finite_pos(double x)
{
    return isfinite(x) && x >= 0;
}

int gs_goodput_add_placement(gs_goodput *g, int id, const char *placement, int local_bsz,
                             double step_time, double sync_time)
{
    app *a = get_app(g, id);
    if (!a || !placement) return GS_EINVAL;
    size_t len = strlen(placement);
    if (!len || len > PL_MAX) return GS_ERANGE;
    int reps = 0;
    for (size_t i = 0; i < len; i++) {
        if (placement[i] < '1' || placement[i] > '9') return GS_EINVAL;
        reps += placement[i] - '0';
    }
    if (local_bsz < 1 || !finite_pos(step_time) || !finite_pos(sync_time) || step_time <= 0)
        return GS_ERANGE;
    if (grow((void **)&a->pl, &a->cappl, a->npl + 1, sizeof *a->pl)) return GS_ENOMEM;
    prow *r = &a->pl[a->npl++];
    memcpy(r->pl, placement, len + 1);
    r->nodes = (int)len;
    r->replicas = reps;
    r->bsz = local_bsz;
    r->xb = local_bsz;
    r->step = step_time;
    r->sync = sync_time;
    return 0;
}

int gs_goodput_add_scalability(gs_goodput *g, int id, int nodes, int replicas, int local_bsz,
                               double step_time, double sync_time)
{
    app *a = get_app(g, id);
    if (!a) return GS_EINVAL;
    if (nodes < 1 || replicas < nodes || local_bsz < 1 || !finite_pos(step_time) ||
        !finite_pos(sync_time) || step_time <= 0)
        return GS_ERANGE;
    if (grow((void **)&a->sc, &a->capsc, a->nsc + 1, sizeof *a->sc)) return GS_ENOMEM;
    a->sc[a->nsc++] = (srow){nodes, replicas, local_bsz, step_time, sync_time};
    return 0;
}

int gs_goodput_add_validation(gs_goodput *g, int id, int64_t batch, double progress,
                              double iteration, double metric, double grad_sqr, double grad_var)
{
    app *a = get_app(g, id);
    if (!a) return GS_EINVAL;
    if (batch < 1 || !finite_pos(progress) || !finite_pos(iteration) || !isfinite(metric) ||
        !finite_pos(grad_sqr) || !finite_pos(grad_var))
        return GS_ERANGE;
    vcurve *c = NULL;
    for (size_t i = 0; i < a->nval; i++)
        if (a->val[i].batch == batch) c = &a->val[i];
    if (!c) {
        if (grow((void **)&a->val, &a->capval, a->nval + 1, sizeof *a->val)) return GS_ENOMEM;
        c = &a->val[a->nval++];
        memset(c, 0, sizeof *c);
        c->batch = batch;
    }
    if (grow((void **)&c->r, &c->cap, c->n + 1, sizeof *c->r)) return GS_ENOMEM;
    c->r[c->n++] = (vrow){progress, iteration, metric, grad_sqr, grad_var};
    return 0;
}

/* ---- finishing: derived constants and the interpolation set ---------------------------- */

static int cmp_curve(const void *x, const void *y)
{
    const vcurve *a = x, *b = y;
    return (a->batch > b->batch) - (a->batch < b->batch);
}

static int cmp_prow(const void *x, const void *y)
{
    const prow *a = x, *b = y;
    int c = strcmp(a->pl, b->pl);
    if (c) return c;
    return (a->bsz > b->bsz) - (a->bsz < b->bsz);
}

typedef struct npt {
    int nodes, replicas, bsz;
    double step, sync;
    int count;
} npt;

static int cmp_npt(const void *x, const void *y)
{
    const npt *a = x, *b = y;
    if (a->nodes != b->nodes) return a->nodes - b->nodes;
    if (a->replicas != b->replicas) return a->replicas - b->replicas;
    return (a->bsz > b->bsz) - (a->bsz < b->bsz);
}

static double grad_gain(double sqr, double var, double scale)
{
    double denom = var / scale + sqr;
    return denom > 0 ? (var + sqr) / denom : 1.0;
}

static void fixed_config(const app *a, int64_t batch, int replicas, int *atomic, int *accum);
static void make_cands(const gs_app_spec *sp, int replicas, cands *c);
static int true_times(const app *a, const int *counts, int ncounts, int bsz, double *step,
                      double *sync);
static void grad_stats(const app *a, double batch, int epoch, double *sqr, double *var);

/* ---- a Delaunay triangulation of the groups in the (nodes, replicas) plane ---------------- */

#ifdef __SIZEOF_INT128__
typedef __int128 wide;
#else
typedef long double wide;
#endif

typedef struct ipt {
    int64_t x, y;
} ipt;

static int64_t orient(ipt a, ipt b, ipt c)
{
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

/* > 0 when d is strictly inside the circle through the counter-clockwise a, b, c (exact for
 * coordinates up to 2^40) */
static int incircle(ipt a, ipt b, ipt c, ipt d)
{
    wide ax = a.x - d.x, ay = a.y - d.y, bx = b.x - d.x, by = b.y - d.y, cx = c.x - d.x,
         cy = c.y - d.y;
    wide a2 = ax * ax + ay * ay, b2 = bx * bx + by * by, c2 = cx * cx + cy * cy;
    wide det = ax * (by * c2 - b2 * cy) - ay * (bx * c2 - b2 * cx) + a2 * (bx * cy - by * cx);
    return det > 0;
}

/*
 * Bowyer-Watson over the groups' (nodes, replicas) points, inserted in their (sorted) order
 * inside a far super-triangle; a point on a circumcircle leaves that triangle alone, so the
 * result is one deterministic Delaunay triangulation (cocircular points: one of the valid
 * ones).  Triangles touching the super-triangle are dropped at the end.
 */
static int triangulate(app *a)
{
    size_t np = a->ngrp;
    ipt *p = malloc((np + 3) * sizeof *p);
    size_t cap = 2 * (np + 3) + 8, n = 0;
    int(*t)[3] = malloc(cap * sizeof *t);
    int(*edge)[2] = malloc(3 * cap * sizeof *edge);
    char *bad = malloc(cap);
    if (!p || !t || !edge || !bad) {
        free(p), free(t), free(edge), free(bad);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < np; i++) p[i] = (ipt){a->grp[i].nodes, a->grp[i].replicas};
    const int64_t far = INT64_C(1) << 30;
    p[np] = (ipt){-far, -far};
    p[np + 1] = (ipt){far, -far};
    p[np + 2] = (ipt){0, far};
    t[n][0] = (int)np, t[n][1] = (int)np + 1, t[n][2] = (int)np + 2, n++;
    int rc = 0;
    for (size_t k = 0; k < np && !rc; k++) {
        size_t ne = 0;
        for (size_t i = 0; i < n; i++) {
            bad[i] = (char)incircle(p[t[i][0]], p[t[i][1]], p[t[i][2]], p[k]);
            if (!bad[i]) continue;
            for (int e = 0; e < 3; e++) {
                int u = t[i][e], v = t[i][(e + 1) % 3];
                size_t f = 0;
                while (f < ne && !(edge[f][0] == v && edge[f][1] == u)) f++;
                if (f < ne) { /* shared by two cavity triangles: inside the cavity */
                    edge[f][0] = edge[ne - 1][0], edge[f][1] = edge[ne - 1][1];
                    ne--;
                } else {
                    edge[ne][0] = u, edge[ne][1] = v, ne++;
                }
            }
        }
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (!bad[i]) memmove(t[m++], t[i], sizeof *t);
        n = m;
        if (n + ne > cap) {
            size_t nc = 2 * (n + ne);
            int(*nt)[3] = realloc(t, nc * sizeof *t);
            int(*nedge)[2] = nt ? realloc(edge, 3 * nc * sizeof *edge) : NULL;
            char *nb = nedge ? realloc(bad, nc) : NULL;
            if (nt) t = nt;
            if (nedge) edge = nedge;
            if (nb) bad = nb;
            if (!nb) {
                rc = GS_ENOMEM;
                break;
            }
            cap = nc;
        }
        for (size_t f = 0; f < ne; f++) {
            if (!orient(p[edge[f][0]], p[edge[f][1]], p[k])) continue; /* flat: skip */
            t[n][0] = edge[f][0], t[n][1] = edge[f][1], t[n][2] = (int)k, n++;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (t[i][0] < (int)np && t[i][1] < (int)np && t[i][2] < (int)np)
            memmove(t[m++], t[i], sizeof *t);
    free(p);
    free(edge);
    free(bad);
    if (rc) {
        free(t);
        return rc;
    }
    a->tri = t;
    a->ntri = m;
    return 0;
}

static int build_interp(app *a)
{
    /* placement means by (nodes, replicas, local batch), then the scalability rows */
    size_t n = a->npl + a->nsc;
    npt *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return GS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < a->npl; i++)
        v[k++] =
            (npt){a->pl[i].nodes, a->pl[i].replicas, a->pl[i].bsz, a->pl[i].step, a->pl[i].sync, 1};
    for (size_t i = 0; i < a->nsc; i++)
        v[k++] =
            (npt){a->sc[i].nodes, a->sc[i].replicas, a->sc[i].bsz, a->sc[i].step, a->sc[i].sync, 1};
    qsort(v, n, sizeof *v, cmp_npt);
    /* merge equal keys into their mean (the artifact's groupby mean) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && !cmp_npt(&v[m - 1], &v[i])) {
            v[m - 1].step += v[i].step;
            v[m - 1].sync += v[i].sync;
            v[m - 1].count++;
        } else {
            v[m++] = v[i];
        }
    }
    a->pts = malloc((m ? m : 1) * sizeof *a->pts);
    a->grp = malloc((m ? m : 1) * sizeof *a->grp);
    a->levels = malloc((m ? m : 1) * sizeof *a->levels);
    if (!a->pts || !a->grp || !a->levels) {
        free(v);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        a->pts[i] = (gpt){v[i].bsz, v[i].step / v[i].count, v[i].sync / v[i].count};
        if (!i || v[i].nodes != v[i - 1].nodes || v[i].replicas != v[i - 1].replicas)
            a->grp[a->ngrp++] = (group){v[i].nodes, v[i].replicas, i, 0};
        a->grp[a->ngrp - 1].n++;
        if (!a->nlevels || a->levels[a->nlevels - 1] != v[i].nodes)
            a->levels[a->nlevels++] = v[i].nodes;
    }
    free(v);
    return triangulate(a);
}

int gs_goodput_finish(gs_goodput *g, gs_diag *d)
{
    if (!g) return GS_EINVAL;
    for (size_t id = 0; id < g->napps; id++) {
        app *a = &g->apps[id];
        if (a->finished) continue;
        if (!a->npl)
            return gs_diag_set(d, GS_EPARSE, 0, 0, "application %s: no placement rows", a->name);
        if (!a->nval)
            return gs_diag_set(d, GS_EPARSE, 0, 0, "application %s: no validation curves", a->name);
        qsort(a->val, a->nval, sizeof *a->val, cmp_curve);
        qsort(a->pl, a->npl, sizeof *a->pl, cmp_prow);
        for (size_t i = 1; i < a->npl; i++)
            if (!cmp_prow(&a->pl[i - 1], &a->pl[i]))
                return gs_diag_set(d, GS_EPARSE, 0, 0,
                                   "application %s: placement %s, local batch %d given twice",
                                   a->name, a->pl[i].pl, a->pl[i].bsz);
        gs_app_spec *s = &a->spec;
        size_t shortest = SIZE_MAX;
        for (size_t i = 0; i < a->nval; i++)
            if (a->val[i].n < shortest) shortest = a->val[i].n;
        int minl = INT32_MAX, maxl = 0;
        for (size_t i = 0; i < a->npl; i++) {
            if (a->pl[i].bsz < minl) minl = a->pl[i].bsz;
            if (a->pl[i].bsz > maxl) maxl = a->pl[i].bsz;
        }
        if (!s->init_batch) s->init_batch = a->val[0].batch;
        if (!s->max_batch) s->max_batch = a->val[a->nval - 1].batch;
        if (!s->min_local_bsz) s->min_local_bsz = minl;
        if (!s->max_local_bsz) s->max_local_bsz = maxl;
        if (!s->max_epochs) s->max_epochs = (int)(shortest > 100000 ? 100000 : shortest);
        if ((size_t)s->max_epochs > shortest)
            return gs_diag_set(d, GS_EPARSE, 0, 0,
                               "application %s: max_epochs %d but the shortest validation curve "
                               "has %zu epochs",
                               a->name, s->max_epochs, shortest);
        if (s->max_batch < s->min_local_bsz || s->min_local_bsz > s->max_local_bsz ||
            s->init_batch > s->max_batch)
            return gs_diag_set(d, GS_EPARSE, 0, 0,
                               "application %s: inconsistent batch sizes (init %lld, max %lld, "
                               "local %d..%d)",
                               a->name, (long long)s->init_batch, (long long)s->max_batch,
                               s->min_local_bsz, s->max_local_bsz);
        if (s->init_batch < a->val[0].batch || s->max_batch > a->val[a->nval - 1].batch)
            return gs_diag_set(d, GS_EPARSE, 0, 0,
                               "application %s: batch sizes %lld..%lld outside the validated "
                               "%lld..%lld",
                               a->name, (long long)s->init_batch, (long long)s->max_batch,
                               (long long)a->val[0].batch, (long long)a->val[a->nval - 1].batch);
        int rc = build_interp(a);
        if (rc) return rc;
        /* progress at each epoch start: the minimum over the curves */
        a->prog = malloc(((size_t)s->max_epochs + 1) * sizeof *a->prog);
        a->bound = malloc(((size_t)s->max_epochs + 1) * sizeof *a->bound);
        if (!a->prog || !a->bound) return GS_ENOMEM;
        a->prog[0] = 0;
        for (int e = 1; e <= s->max_epochs; e++) {
            double p = a->val[0].r[e - 1].progress;
            for (size_t i = 1; i < a->nval; i++)
                if (a->val[i].r[e - 1].progress < p) p = a->val[i].r[e - 1].progress;
            a->prog[e] = p;
        }
        /* reference goodput: 1 GPU at the initial batch, epoch 0 */
        int atomic, accum;
        fixed_config(a, s->init_batch, 1, &atomic, &accum);
        int one = 1;
        double step, sync, sqr, var;
        if (true_times(a, &one, 1, atomic, &step, &sync))
            return gs_diag_set(d, GS_EPARSE, 0, 0,
                               "application %s: no step time for 1 GPU at local batch %d", a->name,
                               atomic);
        double batch = (double)atomic * (accum + 1);
        grad_stats(a, batch, 0, &sqr, &var);
        double total = step + (step - sync) * accum;
        a->ref_good = grad_gain(sqr, var, batch / (double)s->init_batch) / total;
        if (!(a->ref_good > 0) || !isfinite(a->ref_good))
            return gs_diag_set(d, GS_EPARSE, 0, 0, "application %s: reference goodput is not > 0",
                               a->name);
        for (int e = 0; e <= s->max_epochs; e++) {
            double us = a->prog[e] / a->ref_good * 1e6;
            if (!(us < 1e11 * 1e6))
                return gs_diag_set(d, GS_ERANGE, 0, 0,
                                   "application %s: work of %d epochs exceeds 1e11 s", a->name, e);
            a->bound[e] = (gs_time)llround(us);
            if (e && a->bound[e] <= a->bound[e - 1])
                return gs_diag_set(d, GS_EPARSE, 0, 0,
                                   "application %s: progress does not increase at epoch %d",
                                   a->name, e);
        }
        free(a->cand);
        if (!(a->cand = malloc(CAND_R * sizeof *a->cand))) return GS_ENOMEM;
        for (int r = 1; r < CAND_R; r++) make_cands(s, r, &a->cand[r]);
        a->finished = 1;
    }
    return 0;
}

gs_time gs_goodput_work(const gs_goodput *g, int id)
{
    if (!g || id < 0 || (size_t)id >= g->napps || !g->apps[id].finished) return 0;
    const app *a = &g->apps[id];
    return a->bound[a->spec.max_epochs];
}

/* ---- true tables --------------------------------------------------------------------- */

/* Linear interpolation over x as scipy's interp1d computes it (segment found by a left
 * search, value = slope * (x - x_lo) + y_lo); clamped to the end values outside. */
static void interp_seg(const double *xs, const double *ys0, const double *ys1, size_t stride,
                       size_t n, double x, double *y0, double *y1)
{
#define X(i)  (*(const double *)((const char *)xs + (i)*stride))
#define Y0(i) (*(const double *)((const char *)ys0 + (i)*stride))
#define Y1(i) (*(const double *)((const char *)ys1 + (i)*stride))
    if (n == 1 || x <= X(0)) {
        *y0 = Y0(0);
        *y1 = Y1(0);
        return;
    }
    if (x >= X(n - 1) && x != X(n - 1)) {
        *y0 = Y0(n - 1);
        *y1 = Y1(n - 1);
        return;
    }
    size_t hi = 1;
    while (hi < n - 1 && X(hi) < x) hi++;
    size_t lo = hi - 1;
    double dx = X(hi) - X(lo);
    *y0 = (Y0(hi) - Y0(lo)) / dx * (x - X(lo)) + Y0(lo);
    *y1 = (Y1(hi) - Y1(lo)) / dx * (x - X(lo)) + Y1(lo);
#undef X
#undef Y0
#undef Y1
}

static void group_at(const app *a, const group *gr, double bsz, double *step, double *sync)
{
    const gpt *p = &a->pts[gr->first];
    interp_seg(&p->bsz, &p->step, &p->sync, sizeof *p, gr->n, bsz, step, sync);
}

static const group *find_group(const app *a, int nodes, int replicas)
{
    size_t lo = 0, hi = a->ngrp;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const group *g = &a->grp[mid];
        if (g->nodes < nodes || (g->nodes == nodes && g->replicas < replicas))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->ngrp && a->grp[lo].nodes == nodes && a->grp[lo].replicas == replicas)
        return &a->grp[lo];
    return NULL;
}

/* groups of one node level: [*first, *first + *n) */
static void level_groups(const app *a, int nodes, size_t *first, size_t *n)
{
    size_t i = 0;
    while (i < a->ngrp && a->grp[i].nodes < nodes) i++;
    *first = i;
    while (i < a->ngrp && a->grp[i].nodes == nodes) i++;
    *n = i - *first;
}

/* value of level 'nodes' at replicas r (linear between the level's replica counts, clamped) */
static void level_at(const app *a, int nodes, double r, double bsz, double *step, double *sync)
{
    size_t f, n;
    level_groups(a, nodes, &f, &n);
    const group *g = &a->grp[f];
    if (n == 1 || r <= g[0].replicas) {
        group_at(a, &g[0], bsz, step, sync);
        return;
    }
    if (r >= g[n - 1].replicas) {
        group_at(a, &g[n - 1], bsz, step, sync);
        return;
    }
    size_t hi = 1;
    while (hi < n - 1 && g[hi].replicas < r) hi++;
    double s0, y0, s1, y1;
    group_at(a, &g[hi - 1], bsz, &s0, &y0);
    group_at(a, &g[hi], bsz, &s1, &y1);
    double t = (r - g[hi - 1].replicas) / (double)(g[hi].replicas - g[hi - 1].replicas);
    *step = s0 + (s1 - s0) * t;
    *sync = y0 + (y1 - y0) * t;
}

/*
 * Unmeasured placement: (nodes, replicas, local batch) in the set of placement means and
 * scalability rows (the artifact: a Delaunay/LinearNDInterpolator over the three).  Ours:
 *   - a (nodes, replicas) present in the set: linear over the local batch (what the
 *     Delaunay gives on the segment between two neighbouring batches of it: exact);
 *   - else the triangle of the groups' (nodes, replicas) Delaunay triangulation that holds
 *     it, each corner interpolated over the local batch, weighted barycentrically (a prism
 *     interpolation: the artifact's tetrahedra mix batches of different groups too, so the
 *     two differ a little: on random placements of 5..16 nodes the step times agree within
 *     1 % in the median, 2-6 % at the 90th percentile; docs/elastic.md);
 *   - outside the triangles (beyond the measured set, where the artifact has no value and
 *     fails): between the two node levels around 'nodes', the replicas mapped to the same
 *     relative position inside each level's range, clamped.
 */
static void interp_nd(const app *a, int nodes, int replicas, double bsz, double *step, double *sync)
{
    if (nodes > 16) nodes = 16;
    const group *gr = find_group(a, nodes, replicas);
    if (gr) {
        group_at(a, gr, bsz, step, sync);
        return;
    }
    /* the triangle of (nodes, replicas): barycentric weights of its three groups */
    ipt q = {nodes, replicas};
    for (size_t i = 0; i < a->ntri; i++) {
        const int *t = a->tri[i];
        ipt p0 = {a->grp[t[0]].nodes, a->grp[t[0]].replicas},
            p1 = {a->grp[t[1]].nodes, a->grp[t[1]].replicas},
            p2 = {a->grp[t[2]].nodes, a->grp[t[2]].replicas};
        int64_t w0 = orient(p1, p2, q), w1 = orient(p2, p0, q), w2 = orient(p0, p1, q);
        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
        double all = (double)(w0 + w1 + w2), st = 0, sy = 0;
        const int64_t w[3] = {w0, w1, w2};
        for (int k = 0; k < 3; k++) {
            double s0, y0;
            group_at(a, &a->grp[t[k]], bsz, &s0, &y0);
            st += (double)w[k] / all * s0;
            sy += (double)w[k] / all * y0;
        }
        *step = st;
        *sync = sy;
        return;
    }
    size_t lo = 0;
    while (lo + 1 < a->nlevels && a->levels[lo + 1] <= nodes) lo++;
    size_t hi = lo;
    if (a->levels[lo] < nodes && lo + 1 < a->nlevels) hi = lo + 1;
    int nl = a->levels[lo], nh = a->levels[hi];
    size_t f, n;
    level_groups(a, nl, &f, &n);
    double rl0 = a->grp[f].replicas, rl1 = a->grp[f + n - 1].replicas;
    level_groups(a, nh, &f, &n);
    double rh0 = a->grp[f].replicas, rh1 = a->grp[f + n - 1].replicas;
    if (nl == nh || nodes <= nl) {
        level_at(a, nl, replicas, bsz, step, sync);
        return;
    }
    if (nodes >= nh) {
        level_at(a, nh, replicas, bsz, step, sync);
        return;
    }
    double t = (double)(nodes - nl) / (double)(nh - nl);
    double r0 = rl0 + (rh0 - rl0) * t, r1 = rl1 + (rh1 - rl1) * t;
    double u = r1 > r0 ? (replicas - r0) / (r1 - r0) : 0;
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    double sl, yl, sh, yh;
    level_at(a, nl, rl0 + (rl1 - rl0) * u, bsz, &sl, &yl);
    level_at(a, nh, rh0 + (rh1 - rh0) * u, bsz, &sh, &yh);
    *step = sl + (sh - sl) * t;
    *sync = yl + (yh - yl) * t;
}

/* Placement id: GPUs per node (nonzero), rotated to the lexicographically smallest. */
static int placement_id(const int *counts, int n, char *out)
{
    int k = 0;
    int v[PL_MAX];
    for (int i = 0; i < n; i++) {
        if (!counts[i]) continue;
        if (counts[i] > 9 || k == PL_MAX) return -1;
        v[k++] = counts[i];
    }
    if (!k) return -1;
    int best = 0;
    for (int s = 1; s < k; s++) {
        for (int i = 0; i < k; i++) {
            int x = v[(s + i) % k], y = v[(best + i) % k];
            if (x != y) {
                if (x < y) best = s;
                break;
            }
        }
    }
    for (int i = 0; i < k; i++) out[i] = (char)('0' + v[(best + i) % k]);
    out[k] = 0;
    return k;
}

/* True step and sync time (s) of a placement (GPUs per node) at local batch bsz. */
static int true_times(const app *a, const int *counts, int ncounts, int bsz, double *step,
                      double *sync)
{
    int nodes = 0, reps = 0;
    for (int i = 0; i < ncounts; i++)
        if (counts[i] > 0) nodes++, reps += counts[i];
    if (!reps) return GS_EINVAL;
    char id[PL_MAX + 1];
    if (placement_id(counts, ncounts, id) > 0) {
        size_t lo = 0, hi = a->npl;
        prow key;
        memcpy(key.pl, id, sizeof id);
        key.bsz = 0;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cmp_prow(&a->pl[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t n = 0;
        while (lo + n < a->npl && !strcmp(a->pl[lo + n].pl, id)) n++;
        if (n) { /* the placement's own rows, over the local batch */
            const prow *r = &a->pl[lo];
            interp_seg(&r->xb, &r->step, &r->sync, sizeof *r, n, bsz, step, sync);
            return 0;
        }
    }
    interp_nd(a, nodes, reps, bsz, step, sync);
    return 0;
}

/* Validated batch sizes around 'batch' (may be equal); clamped to the validated range. */
static void bracket(const app *a, double batch, size_t *lo, size_t *hi)
{
    size_t l = 0, h = a->nval - 1;
    int have_l = 0;
    for (size_t i = 0; i < a->nval; i++) {
        if ((double)a->val[i].batch <= batch) l = i, have_l = 1;
        if ((double)a->val[i].batch >= batch) {
            h = i;
            break;
        }
    }
    if (!have_l) l = h = 0;
    if ((double)a->val[h].batch < batch) h = l; /* above the largest */
    *lo = l;
    *hi = h;
}

static double lin_batch(const app *a, size_t lo, size_t hi, double batch, double vlo, double vhi)
{
    if (lo == hi) return vlo;
    double bl = (double)a->val[lo].batch, bh = (double)a->val[hi].batch;
    return ((batch - bl) * vhi + (bh - batch) * vlo) / (bh - bl);
}

static void grad_stats(const app *a, double batch, int epoch, double *sqr, double *var)
{
    size_t lo, hi;
    bracket(a, batch, &lo, &hi);
    const vrow *l = &a->val[lo].r[epoch], *h = &a->val[hi].r[epoch];
    *sqr = lin_batch(a, lo, hi, batch, l->sqr, h->sqr);
    *var = lin_batch(a, lo, hi, batch, l->var, h->var);
}

static double iteration_at(const app *a, double batch, int epoch)
{
    size_t lo, hi;
    bracket(a, batch, &lo, &hi);
    return lin_batch(a, lo, hi, batch, a->val[lo].r[epoch].iteration,
                     a->val[hi].r[epoch].iteration);
}

/* TunedJobs' rule: a fixed global batch split over replicas (update_local_bsz). */
static void fixed_config(const app *a, int64_t batch, int replicas, int *atomic, int *accum)
{
    int local = ceil_eps((double)batch / replicas);
    int acc = ceil_eps((double)local / a->spec.max_local_bsz) - 1;
    if (replicas == 1 && batch > a->spec.init_batch && acc < 1) acc = 1;
    if (acc < 0) acc = 0;
    *accum = acc;
    *atomic = ceil_eps((double)local / (acc + 1));
}

static const app *finished_app(const gs_goodput *g, int id)
{
    if (!g || id < 0 || (size_t)id >= g->napps || !g->apps[id].finished) return NULL;
    return &g->apps[id];
}

int gs_goodput_app_times(const gs_goodput *g, int id, const int *per_node, int n, int local_bsz,
                         double *step, double *sync)
{
    const app *a = finished_app(g, id);
    if (!a || !per_node || n < 1 || local_bsz < 1) return GS_EINVAL;
    for (int i = 0; i < n; i++)
        if (per_node[i] < 0) return GS_EINVAL;
    return true_times(a, per_node, n, local_bsz, step, sync);
}

int gs_goodput_app_grad(const gs_goodput *g, int id, double batch, int epoch, double *sqr,
                        double *var)
{
    const app *a = finished_app(g, id);
    if (!a || epoch < 0 || epoch >= a->spec.max_epochs || !(batch > 0)) return GS_EINVAL;
    grad_stats(a, batch, epoch, sqr, var);
    return 0;
}

double gs_goodput_app_progress(const gs_goodput *g, int id, int epoch)
{
    const app *a = finished_app(g, id);
    if (!a || epoch < 0 || epoch > a->spec.max_epochs) return -1;
    return a->prog[epoch];
}

/* ---- the learned throughput model (AdaptDL's PerfParams) ------------------------------- */

enum { P_AC, P_BC, P_AN, P_BN, P_AR, P_BR, P_G, NP };

static double net_time(const double *p, double nodes, double replicas)
{
    double bott, retro;
    if (nodes > 1)
        bott = p[P_AN], retro = p[P_BN];
    else if (replicas > 1)
        bott = p[P_AR], retro = p[P_BR];
    else
        bott = 1e-8, retro = 1e-8;
    double r = replicas - 2;
    return bott + retro * (r > 1e-8 ? r : 1e-8);
}

/* netg = pow(net_time(p, nodes, replicas), p[P_G]), which optimize_p computes once */
static double model_throughput(const double *p, double netg, int replicas, int atomic, int accum)
{
    double acc_t = p[P_AC] + p[P_BC] * atomic;
    double g = p[P_G];
    double optim = exp(log(pow(acc_t, g) + netg) / g);
    double total = accum * acc_t + optim;
    return (double)replicas * atomic * (accum + 1) / total;
}

static double model_efficiency(double sqr, double var, double init, double batch)
{
    double scale = batch / init;
    return grad_gain(sqr, var, scale) / scale;
}

/* Objective of the fit (RMSLE of accumulation and optimizer step times + priors) and its
 * gradient. */
typedef struct fitdata {
    const pkey *k;
    size_t n;
    const double *lo, *hi; /* bounds of the parameters */
    int logs;              /* the search runs on the logs of the positive parameters */
} fitdata;

static double fit_obj(const double *p, const fitdata *fd, double *grad)
{
    size_t m = fd->n;
    double s1 = 0, s2 = 0;
    double g1[NP] = {0}, g2[NP] = {0};
    double gm = p[P_G];
    for (size_t i = 0; i < m; i++) {
        const pkey *k = &fd->k[i];
        double A = p[P_AC] + p[P_BC] * k->bsz;
        double N = net_time(p, k->nodes, k->replicas);
        double Ag = pow(A, gm), Ng = pow(N, gm), S = Ag + Ng;
        double lS = log(S), lA = log(A); /* each once: the same values as before */
        double L = lS / gm;
        double r1 = lA - k->lacc;
        double r2 = L - k->lstep;
        s1 += r1 * r1;
        s2 += r2 * r2;
        /* d log A */
        g1[P_AC] += r1 / A;
        g1[P_BC] += r1 * k->bsz / A;
        /* d L */
        double dA = Ag / A / S, dN = Ng / N / S;
        double dg = -lS / (gm * gm) + (Ag * lA + Ng * log(N)) / (gm * S);
        g2[P_AC] += r2 * dA;
        g2[P_BC] += r2 * dA * k->bsz;
        double rr = k->replicas - 2.0;
        rr = rr > 1e-8 ? rr : 1e-8;
        if (k->nodes > 1) {
            g2[P_AN] += r2 * dN;
            g2[P_BN] += r2 * dN * rr;
        } else if (k->replicas > 1) {
            g2[P_AR] += r2 * dN;
            g2[P_BR] += r2 * dN * rr;
        }
        g2[P_G] += r2 * dg;
    }
    double e1 = sqrt(s1 / m), e2 = sqrt(s2 / m);
    double qn = p[P_BN] / p[P_AN], qr = p[P_BR] / p[P_AR];
    double f = e1 + e2 + 1e-3 * (gm - 1) * (gm - 1) + 1e-2 * (qn * qn + qr * qr);
    if (grad) {
        for (int i = 0; i < NP; i++) {
            grad[i] = (e1 > 0 ? g1[i] / (m * e1) : 0) + (e2 > 0 ? g2[i] / (m * e2) : 0);
        }
        grad[P_G] += 2e-3 * (gm - 1);
        grad[P_BN] += 2e-2 * qn / p[P_AN];
        grad[P_AN] -= 2e-2 * qn * qn / p[P_AN];
        grad[P_BR] += 2e-2 * qr / p[P_AR];
        grad[P_AR] -= 2e-2 * qr * qr / p[P_AR];
    }
    return f;
}

static double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* The search variables: log of the six positive parameters (their scales differ by orders
 * of magnitude: beta_c ~ 1e-6 s per sample next to alpha ~ 0.1 s), gamma itself.  A fixed
 * parameter (lower == upper) keeps its exact value. */
static void from_search(const double *u, const fitdata *fd, double *p)
{
    for (int i = 0; i < NP; i++) {
        if (fd->lo[i] == fd->hi[i])
            p[i] = fd->lo[i];
        else
            p[i] = i < P_G && fd->logs ? clampd(exp(u[i]), fd->lo[i], fd->hi[i]) : u[i];
    }
}

static double search_obj(const double *u, const fitdata *fd, double *grad)
{
    double p[NP];
    from_search(u, fd, p);
    double f = fit_obj(p, fd, grad);
    if (grad && fd->logs)
        for (int i = 0; i < P_G; i++) grad[i] *= p[i];
    return f;
}

/*
 * Bounded minimisation: projected L-BFGS (memory 10) with a backtracking Armijo search
 * along the projected path; variables at a bound with the gradient pushing out are held.
 * Stops like L-BFGS-B's defaults: relative reduction <= 2.2e-9 or projected gradient
 * <= 1e-5.
 */
static void minimize_bounded(double *x, const double *lo, const double *hi, const fitdata *fd)
{
    enum { M = 10, MAXIT = 3000 };
    double S[M][NP], Y[M][NP], rho[M];
    int ns = 0, head = 0;
    double g[NP], xn[NP], gn[NP], d[NP], q[NP], al[M];
    for (int i = 0; i < NP; i++) x[i] = clampd(x[i], lo[i], hi[i]);
    double f = search_obj(x, fd, g);
    for (int it = 0; it < MAXIT; it++) {
        int freev[NP];
        double pg = 0;
        for (int i = 0; i < NP; i++) {
            double t = clampd(x[i] - g[i], lo[i], hi[i]) - x[i];
            if (fabs(t) > pg) pg = fabs(t);
            freev[i] =
                lo[i] < hi[i] && !((x[i] <= lo[i] && g[i] > 0) || (x[i] >= hi[i] && g[i] < 0));
        }
        if (pg <= 1e-5) break;
        /* two-loop recursion on the free variables */
        for (int i = 0; i < NP; i++) q[i] = freev[i] ? g[i] : 0;
        for (int k = 0; k < ns; k++) {
            int idx = (head - 1 - k + M) % M;
            double s = 0;
            for (int i = 0; i < NP; i++) s += freev[i] ? S[idx][i] * q[i] : 0;
            al[k] = rho[idx] * s;
            for (int i = 0; i < NP; i++)
                if (freev[i]) q[i] -= al[k] * Y[idx][i];
        }
        if (ns) {
            int idx = (head - 1 + M) % M;
            double sy = 0, yy = 0;
            for (int i = 0; i < NP; i++) sy += S[idx][i] * Y[idx][i], yy += Y[idx][i] * Y[idx][i];
            double gam = yy > 0 ? sy / yy : 1;
            for (int i = 0; i < NP; i++) q[i] *= gam;
        }
        for (int k = ns - 1; k >= 0; k--) {
            int idx = (head - 1 - k + M) % M;
            double s = 0;
            for (int i = 0; i < NP; i++) s += freev[i] ? Y[idx][i] * q[i] : 0;
            double b = rho[idx] * s;
            for (int i = 0; i < NP; i++)
                if (freev[i]) q[i] += S[idx][i] * (al[k] - b);
        }
        double dg = 0;
        for (int i = 0; i < NP; i++) {
            d[i] = freev[i] ? -q[i] : 0;
            dg += d[i] * g[i];
        }
        if (!(dg < 0)) { /* not a descent direction: steepest descent, forget the memory */
            ns = 0;
            dg = 0;
            for (int i = 0; i < NP; i++) {
                d[i] = freev[i] ? -g[i] : 0;
                dg += d[i] * g[i];
            }
            if (!(dg < 0)) break;
        }
        double step = 1;
        if (!ns) { /* first step: at most a unit move in the largest coordinate */
            double mx = 0;
            for (int i = 0; i < NP; i++)
                if (fabs(d[i]) > mx) mx = fabs(d[i]);
            if (mx > 0) step = fmin(1.0, 0.1 / mx * (fabs(x[P_G]) + 1));
        }
        double fn = f;
        int ok = 0;
        for (int ls = 0; ls < 60; ls++) {
            double decr = 0;
            for (int i = 0; i < NP; i++) {
                xn[i] = clampd(x[i] + step * d[i], lo[i], hi[i]);
                decr += g[i] * (xn[i] - x[i]);
            }
            fn = search_obj(xn, fd, gn);
            if (isfinite(fn) && fn <= f + 1e-4 * decr) {
                ok = 1;
                break;
            }
            step *= 0.5;
        }
        if (!ok) break;
        double sy = 0;
        double *sv = S[head], *yv = Y[head];
        for (int i = 0; i < NP; i++) {
            sv[i] = xn[i] - x[i];
            yv[i] = gn[i] - g[i];
            sy += sv[i] * yv[i];
        }
        if (sy > 1e-18) {
            rho[head] = 1 / sy;
            head = (head + 1) % M;
            if (ns < M) ns++;
        }
        double fold = f;
        memcpy(x, xn, sizeof xn);
        memcpy(g, gn, sizeof gn);
        f = fn;
        double den = fmax(fmax(fabs(fold), fabs(f)), 1.0);
        if ((fold - f) / den <= 2.2e-9) break;
    }
}

/* fit_perf_params: the artifact's initial values, bounds, fixed parameters and prior. */
static void fit_perf_arr(const pkey *prof, size_t nprof, double *out)
{
    double p[NP] = {1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3};
    double lo[NP] = {1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1.0};
    double hi[NP] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, 10.0};
    int one_bsz = 1, multi_node = 0, multi_rep_one_node = 0, over2 = 0;
    double mean_acc = 0;
    for (size_t i = 0; i < nprof; i++) {
        const pkey *k = &prof[i];
        if (k->bsz != prof[0].bsz) one_bsz = 0;
        if (k->nodes > 1) multi_node = 1;
        if (k->nodes == 1 && k->replicas > 1) multi_rep_one_node = 1;
        if (k->replicas > 2) over2 = 1;
        mean_acc += k->step - k->sync;
    }
    mean_acc /= (double)nprof;
    if (one_bsz) p[P_AC] = lo[P_AC] = hi[P_AC] = mean_acc / 2;
    if (!multi_node) {
        p[P_AN] = hi[P_AN] = lo[P_AN];
        p[P_BN] = hi[P_BN] = lo[P_BN];
    }
    if (!multi_rep_one_node) {
        p[P_AR] = hi[P_AR] = lo[P_AR];
        p[P_BR] = hi[P_BR] = lo[P_BR];
    }
    if (!over2) {
        p[P_BN] = hi[P_BN] = lo[P_BN];
        p[P_BR] = hi[P_BR] = lo[P_BR];
    }
    /* two searches from the artifact's start, on the parameters and on their logs (a bound
     * or a kink stops either now and then); the lower objective wins, the first on ties */
    double best[NP], bestf = INFINITY;
    for (int logs = 0; logs < 2; logs++) {
        fitdata fd = {prof, nprof, lo, hi, logs};
        double u[NP], ulo[NP], uhi[NP], q[NP];
        for (int i = 0; i < NP; i++) {
            int lg = logs && i < P_G;
            u[i] = lg ? log(p[i]) : p[i];
            ulo[i] = lg ? log(lo[i]) : lo[i];
            uhi[i] = lg && !isinf(hi[i]) ? log(hi[i]) : hi[i];
            if (lo[i] == hi[i]) uhi[i] = ulo[i] = u[i];
        }
        minimize_bounded(u, ulo, uhi, &fd);
        from_search(u, &fd, q);
        double f = fit_obj(q, &fd, NULL);
        if (!logs || f < bestf) {
            memcpy(best, q, sizeof q);
            bestf = f;
        }
    }
    memcpy(p, best, sizeof best);
    if (!multi_node) {
        p[P_AN] = fmax(p[P_AN], p[P_AR] * 1.1);
        p[P_BN] = fmax(p[P_BN], p[P_BR] * 1.1);
    }
    memcpy(out, p, sizeof p);
}

/* FNV-1a over the fields of the profile (the doubles by their bits) */
static uint64_t prof_hash(const pkey *k, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t f[5] = {(uint64_t)(uint32_t)k[i].nodes, (uint64_t)(uint32_t)k[i].replicas,
                         (uint64_t)(uint32_t)k[i].bsz, 0, 0};
        memcpy(&f[3], &k[i].step, sizeof(double));
        memcpy(&f[4], &k[i].sync, sizeof(double));
        for (int q = 0; q < 5; q++) {
            h ^= f[q];
            h *= 1099511628211ULL;
        }
    }
    return h ? h : 1;
}

static int prof_same(const pkey *a, const pkey *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].nodes != b[i].nodes || a[i].replicas != b[i].replicas || a[i].bsz != b[i].bsz ||
            memcmp(&a[i].step, &b[i].step, sizeof(double)) ||
            memcmp(&a[i].sync, &b[i].sync, sizeof(double)))
            return 0;
    return 1;
}

/* Slot of profile (k, n) with hash h in the table: its entry or the empty slot for it. */
static fitent *fit_slot(fitent *t, size_t cap, uint64_t h, const pkey *k, size_t n)
{
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!t[i].h || (t[i].h == h && t[i].n == n && prof_same(t[i].k, k, n))) return &t[i];
}

/* Remember a fit; out of memory it is simply not remembered (the next one refits). */
static void fit_remember(gs_goodput *g, uint64_t h, const pkey *k, size_t n, const double *p)
{
    if ((g->nfits + 1) * 2 > g->capfits) {
        size_t nc = g->capfits ? g->capfits * 2 : 256;
        fitent *t = calloc(nc, sizeof *t);
        if (!t) return;
        for (size_t i = 0; i < g->capfits; i++)
            if (g->fits[i].h)
                *fit_slot(t, nc, g->fits[i].h, g->fits[i].k, g->fits[i].n) = g->fits[i];
        free(g->fits);
        g->fits = t;
        g->capfits = nc;
    }
    pkey *c = malloc(n * sizeof *c);
    if (!c) return;
    memcpy(c, k, n * sizeof *c);
    fitent *e = fit_slot(g->fits, g->capfits, h, k, n);
    *e = (fitent){h, n, c, {0}};
    memcpy(e->p, p, sizeof e->p);
    g->nfits++;
}

static void fit_perf(gs_goodput *g, jstate *s)
{
    uint64_t h = prof_hash(s->prof, s->nprof);
    fitent *e = g->capfits ? fit_slot(g->fits, g->capfits, h, s->prof, s->nprof) : NULL;
    if (e && e->h) {
        memcpy(s->perf, e->p, sizeof s->perf);
    } else {
        fit_perf_arr(s->prof, s->nprof, s->perf);
        fit_remember(g, h, s->prof, s->nprof, s->perf);
    }
    s->have_perf = 1;
}

int gs_goodput_fit_perf(const gs_perf_obs *obs, size_t n, gs_perf_params *out)
{
    if (!obs || !n || !out) return GS_EINVAL;
    pkey *k = malloc(n * sizeof *k);
    if (!k) return GS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const gs_perf_obs *o = &obs[i];
        if (o->nodes < 1 || o->replicas < o->nodes || o->local_bsz < 1 || !(o->step_time > 0) ||
            !(o->sync_time >= 0) || !(o->sync_time < o->step_time) || !isfinite(o->step_time)) {
            free(k);
            return GS_ERANGE;
        }
        k[i] = mk_pkey(o->nodes, o->replicas, o->local_bsz, o->step_time, o->sync_time);
    }
    double p[NP];
    fit_perf_arr(k, n, p);
    free(k);
    *out = (gs_perf_params){p[0], p[1], p[2], p[3], p[4], p[5], p[6]};
    return 0;
}

/* GoodputFunction.optimize's candidates: 50 global batch sizes in geometric progression
 * from max(init batch, min local batch x replicas) to the max batch, as (atomic, accum). */
static void make_cands(const gs_app_spec *sp, int replicas, cands *c)
{
    double init = (double)sp->init_batch;
    double minb = fmax(init, (double)sp->min_local_bsz * replicas);
    double maxb = (double)sp->max_batch;
    double ls = log10(minb), le = log10(maxb), st = (le - ls) / 49;
    c->n = 0;
    for (int i = 0; i < CAND_N; i++) {
        double b = i == 0 ? minb : i == 49 ? maxb : pow(10.0, (double)i * st + ls);
        double local = b / replicas;
        int acc = (int)ceil(local / sp->max_local_bsz - 1e-8) - 1;
        if (replicas == 1 && local > init + 1e-8 && acc < 1) acc = 1;
        int atomic = (int)ceil(local / (acc + 1) - 1e-8);
        if (c->n && c->atomic[c->n - 1] == atomic && c->accum[c->n - 1] == acc) continue;
        c->atomic[c->n] = atomic;
        c->accum[c->n++] = acc;
    }
}

/* GoodputFunction.optimize with accumulation: the best (goodput, atomic, accum) among the
 * candidates (c, or computed here when NULL); the first of equal goodputs wins. */
static double optimize_p(const double *perf, double sqr, double var, const gs_app_spec *sp,
                         const cands *c, int nodes, int replicas, int *best_atomic, int *best_accum)
{
    cands own;
    if (!c) {
        make_cands(sp, replicas, &own);
        c = &own;
    }
    double init = (double)sp->init_batch;
    double best = 0;
    int ba = 0, bc = 0, have = 0;
    double netg = pow(net_time(perf, nodes, replicas), perf[P_G]);
    for (int i = 0; i < c->n; i++) {
        int atomic = c->atomic[i], acc = c->accum[i];
        double gp = 0;
        if (sp->min_local_bsz <= atomic && atomic <= sp->max_local_bsz)
            gp = model_throughput(perf, netg, replicas, atomic, acc) *
                 model_efficiency(sqr, var, init, (double)replicas * atomic * (acc + 1));
        if (!have || gp > best) {
            best = gp;
            ba = atomic;
            bc = acc;
            have = 1;
        }
    }
    if (best_atomic) *best_atomic = ba;
    if (best_accum) *best_accum = bc;
    return best;
}

static double optimize(const jstate *s, const app *a, int nodes, int replicas, int *best_atomic,
                       int *best_accum)
{
    const cands *c = a->cand && replicas < CAND_R ? &a->cand[replicas] : NULL;
    return optimize_p(s->perf, s->grad_sqr, s->grad_var, &a->spec, c, nodes, replicas, best_atomic,
                      best_accum);
}

double gs_goodput_optimize(const gs_perf_params *p, double grad_sqr, double grad_var,
                           const gs_app_spec *as, int nodes, int replicas, int *atomic, int *accum)
{
    int a0 = 0, c0 = 0;
    if (!p || !as || nodes < 1 || replicas < nodes || as->init_batch < 1 || as->max_local_bsz < 1) {
        if (atomic) *atomic = 0;
        if (accum) *accum = 0;
        return 0;
    }
    double v[NP] = {p->alpha_c, p->beta_c, p->alpha_n, p->beta_n, p->alpha_r, p->beta_r, p->gamma};
    double r = optimize_p(v, grad_sqr, grad_var, as, NULL, nodes, replicas, &a0, &c0);
    if (atomic) *atomic = a0;
    if (accum) *accum = c0;
    return r;
}

/* ---- per-job state ----------------------------------------------------------------------- */

static jstate *job_state(gs_goodput *g, const gs_job *j)
{
    if (!j || j->slot < 0) return NULL;
    size_t slot = (size_t)j->slot;
    if (slot >= g->njs) {
        size_t nc = g->njs ? g->njs : 64;
        while (nc <= slot) nc *= 2;
        jstate *n = realloc(g->js, nc * sizeof *n);
        if (!n) return NULL;
        memset(n + g->njs, 0, (nc - g->njs) * sizeof *n);
        g->js = n;
        g->njs = nc;
    }
    jstate *s = &g->js[slot];
    if (!s->used) {
        s->used = 1;
        s->app = gs_goodput_find_app(g, j->app);
        if (s->app >= 0 && !g->apps[s->app].finished) s->app = -1;
        s->mode = GS_BATCH_ADAPTIVE;
    }
    return s;
}

static const jstate *job_state_c(const gs_goodput *g, const gs_job *j)
{
    if (!g || !j || j->slot < 0 || (size_t)j->slot >= g->njs) return NULL;
    const jstate *s = &g->js[j->slot];
    return s->used ? s : NULL;
}

static void memo_clear(jstate *s)
{
    if (s->memo)
        for (int i = 0; i < MEMO_N * MEMO_R; i++) s->memo[i] = -1;
    s->base_good = -1;
}

/* update_params: remember the gradient statistics and, for a new configuration, refit. */
static int observe(gs_goodput *g, jstate *s, int nodes, int replicas, int bsz, double step,
                   double sync, double sqr, double var)
{
    int changed = !s->have_grad || s->grad_sqr != sqr || s->grad_var != var;
    s->grad_sqr = sqr;
    s->grad_var = var;
    s->have_grad = 1;
    for (size_t i = 0; i < s->nprof; i++)
        if (s->prof[i].nodes == nodes && s->prof[i].replicas == replicas && s->prof[i].bsz == bsz) {
            if (changed) memo_clear(s);
            return 0;
        }
    if (grow((void **)&s->prof, &s->capprof, s->nprof + 1, sizeof *s->prof)) return GS_ENOMEM;
    s->prof[s->nprof++] = mk_pkey(nodes, replicas, bsz, step, sync);
    fit_perf(g, s);
    memo_clear(s);
    return 0;
}

/* update_local_bsz: the batch configuration for a placement of 'replicas' GPUs. */
static void retune(const jstate *s, const app *a, int nodes, int replicas, int *atomic, int *accum)
{
    const gs_app_spec *sp = &a->spec;
    int64_t batch = s->mode == GS_BATCH_FIXED ? s->batch : 0;
    if (!batch && !s->have_perf) {
        batch = sp->init_batch;
        if ((int64_t)sp->min_local_bsz * replicas > batch)
            batch = (int64_t)sp->min_local_bsz * replicas;
    }
    if (batch)
        fixed_config(a, batch, replicas, atomic, accum);
    else
        optimize(s, a, nodes, replicas, atomic, accum);
    int count = replicas * (*accum + 1);
    int cap = (int)((double)sp->max_batch / count);
    if (*atomic > cap) *atomic = cap;
    if (*atomic < 1) *atomic = 1;
}

/* GPUs per node of j's allocation, nodes in order of first appearance. */
static int job_counts(const gs_engine *e, const int32_t *gpus, int n, int *counts, int *nodes)
{
    const gs_cluster *c = gs_engine_cluster(e);
    int *node_ids = malloc((size_t)n * sizeof *node_ids);
    if (!node_ids) return GS_ENOMEM;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const gs_gpu *gp = gs_cluster_gpu(c, gpus[i]);
        if (!gp) {
            free(node_ids);
            return GS_EINVAL;
        }
        int f = -1;
        for (int q = 0; q < k && f < 0; q++)
            if (node_ids[q] == gp->node) f = q;
        if (f < 0) {
            node_ids[k] = gp->node;
            counts[k++] = 0;
            f = k - 1;
        }
        counts[f]++;
    }
    free(node_ids);
    *nodes = k;
    return 0;
}

/* Interference: j is distributed and one of its nodes hosts another distributed job. */
static int interfered(const gs_engine *e, const gs_job *j)
{
    const gs_cluster *c = gs_engine_cluster(e);
    int jn[64], k = 0;
    for (int i = 0; i < j->nalloc; i++) {
        int node = gs_cluster_gpu(c, j->alloc[i])->node, f = 0;
        for (int q = 0; q < k; q++) f |= jn[q] == node;
        if (!f && k < 64) jn[k++] = node;
    }
    if (k < 2) return 0;
    size_t nj = gs_engine_njobs(e);
    for (size_t s = 0; s < nj; s++) {
        const gs_job *o = gs_engine_job(e, s);
        if (o == j || o->nalloc < 2 || gs_job_state_final(o->state)) continue;
        int first = gs_cluster_gpu(c, o->alloc[0])->node, multi = 0, touches = 0;
        for (int i = 0; i < o->nalloc; i++) {
            int node = gs_cluster_gpu(c, o->alloc[i])->node;
            multi |= node != first;
            for (int q = 0; q < k; q++) touches |= jn[q] == node;
        }
        if (multi && touches) return 1;
    }
    return 0;
}

/* True goodput (progress per second) of configuration (atomic, accum) on 'counts'. */
static double true_goodput(const app *a, const int *counts, int nc, int replicas, int atomic,
                           int accum, int epoch, double *step, double *sync, double *sqr,
                           double *var)
{
    if (true_times(a, counts, nc, atomic, step, sync)) return 0;
    double batch = (double)replicas * atomic * (accum + 1);
    grad_stats(a, batch, epoch, sqr, var);
    double gain = (*var + *sqr) / (*var / (batch / (double)a->spec.init_batch) + *sqr);
    double total = *step + (*step - *sync) * accum;
    return gain / total;
}

static int pg_rate(void *st, const gs_engine *e, const gs_job *j, double *rate, gs_time *next)
{
    gs_goodput *g = st;
    jstate *s = job_state(g, j);
    if (!s) return GS_ENOMEM;
    *next = GS_TIME_NONE;
    if (s->app < 0) { /* no tables for this application: ideal speed */
        *rate = 1.0;
        return 0;
    }
    const app *a = &g->apps[s->app];
    int nc;
    if (!j->alloc || j->nalloc < 1) return GS_ESTATE;
    int *counts = malloc((size_t)j->nalloc * sizeof *counts); /* GPUs per node, <= nalloc nodes */
    if (!counts) return GS_ENOMEM;
    int rc = job_counts(e, j->alloc, j->nalloc, counts, &nc);
    if (rc) {
        free(counts);
        return rc;
    }
    int replicas = j->nalloc;
    if (s->epoch >= a->spec.max_epochs) s->epoch = a->spec.max_epochs - 1;
    int fresh = !s->atomic; /* the first rate of a new placement */
    if (!s->atomic || s->replicas != replicas || s->nodes != nc)
        retune(s, a, nc, replicas, &s->atomic, &s->accum);
    s->nodes = nc;
    s->replicas = replicas;
    /* run the configuration and learn from it (update_params: the profile and the epoch's
     * gradient statistics); the batch is re-tuned at the next boundary or tick (advance) */
    double step = 0, sync = 0, sqr = 0, var = 0;
    double good = true_goodput(a, counts, nc, replicas, s->atomic, s->accum, s->epoch, &step, &sync,
                               &sqr, &var);
    free(counts);
    if ((rc = observe(g, s, nc, replicas, s->atomic, step, sync, sqr, var))) return rc;
    if (g->interference > 0 && interfered(e, j)) good *= 1.0 - g->interference;
    *rate = good / a->ref_good;
    if (!(*rate > 0) || !isfinite(*rate)) return GS_ERANGE;
    *next = a->bound[s->epoch + 1];
    if (g->interval > 0) {
        /* the artifact re-tunes at the end of every scheduling interval too: a boundary at
         * the progress j will have at the next multiple of the interval after it starts */
        gs_time now = gs_engine_now(e);
        gs_time start = j->progress_from > now ? j->progress_from : now;
        gs_time tick = ((start + GS_MSEC) / g->interval + 1) * g->interval;
        /* just after the tick (by one work-us): the artifact's step ends with the re-tune,
         * then the scheduler decides; a policy acting at the tick sees the job as the
         * artifact's does, and the new configuration sees the new neighbours */
        double adv = ceil(*rate * (double)(tick - start)) + 1;
        double rem = (double)(*next - j->progress);
        if (fresh && g->interference > 0 && rem > 1) {
            /* placed in a scheduling round: look again at the neighbours once the round is
             * over (when its progress starts), as the artifact's next step does */
            *next = j->progress + 1;
            s->recheck = 1;
        } else if (adv < rem) {
            *next = j->progress + (gs_time)adv;
        } else if (rem > 0) {
            /* it crosses the boundary before the tick: the artifact's clock counts whole
             * seconds and rounds that crossing (ties to even, Python's round); run the
             * segment at the rate that gets there exactly then (1 us when it rounds to 0) */
            gs_time whole = (start + GS_SEC / 2) / GS_SEC * GS_SEC; /* its clock: seconds */
            double secs = nearbyint(rem / *rate / 1e6);
            double dt = (double)(whole - start) + secs * 1e6;
            *rate = rem / (dt >= 1 ? dt : 1.0);
        }
    }
    return 0;
}

static int pg_advance(void *st, const gs_engine *e, const gs_job *j, int placed)
{
    (void)e;
    gs_goodput *g = st;
    jstate *s = job_state(g, j);
    if (!s) return GS_ENOMEM;
    if (s->app < 0) return 0;
    const app *a = &g->apps[s->app];
    if (placed) {
        /* the epoch from the progress kept (work lost in a forced stop moves it back) */
        int ep = 0;
        while (ep + 1 < a->spec.max_epochs && a->bound[ep + 1] <= j->progress) ep++;
        s->epoch = ep;
        s->atomic = 0; /* re-tuned for the new GPUs at the next rate() */
        s->recheck = 0;
        s->nodes = s->replicas = 0;
    } else {
        if (s->recheck) { /* a second look at the neighbours: nothing to re-tune */
            s->recheck = 0;
            return 0;
        }
        /* an epoch boundary (or an interval tick, gs_goodput_set_interval): re-tune */
        if (j->progress >= a->bound[s->epoch + 1] && s->epoch + 1 < a->spec.max_epochs) s->epoch++;
        if (s->replicas) retune(s, a, s->nodes, s->replicas, &s->atomic, &s->accum);
    }
    return 0;
}

static void pg_release(void *st, const gs_engine *e, const gs_job *j)
{
    (void)e;
    gs_goodput *g = st;
    if (!j || j->slot < 0 || (size_t)j->slot >= g->njs) return;
    jstate *s = &g->js[j->slot];
    if (gs_job_state_final(j->state)) {
        js_clear(s);
        return;
    }
    s->atomic = s->accum = s->recheck = 0;
    s->nodes = s->replicas = 0;
}

/* What-if: the true rate on 'gpus' GPUs packed on as few nodes as the cluster allows, with
 * the batch the job would choose there. */
static double pg_speed(void *st, const gs_engine *e, const gs_job *j, int gpus)
{
    gs_goodput *g = st;
    if (gpus <= 0) return 0;
    jstate *s = job_state(g, j);
    if (!s) return 0;
    if (s->app < 0) return 1.0;
    const app *a = &g->apps[s->app];
    int per = gs_cluster_max_node_gpus(gs_engine_cluster(e), j->gpu_type);
    if (per < 1) per = 1;
    if (per > 9) per = 9;
    int counts[64], nc = 0, left = gpus;
    while (left > 0 && nc < 64) {
        counts[nc] = left < per ? left : per;
        left -= counts[nc++];
    }
    if (left > 0) return 0;
    int atomic, accum;
    retune(s, a, nc, gpus, &atomic, &accum);
    double step, sync, sqr, var;
    int ep = s->epoch < a->spec.max_epochs ? s->epoch : a->spec.max_epochs - 1;
    double good = true_goodput(a, counts, nc, gpus, atomic, accum, ep, &step, &sync, &sqr, &var);
    return good / a->ref_good;
}

static const gs_progress_ops goodput_ops = {pg_rate, pg_advance, pg_release, pg_speed};

const gs_progress_ops *gs_goodput_progress_ops(void)
{
    return &goodput_ops;
}

gs_goodput *gs_goodput_of(const gs_engine *e)
{
    return gs_engine_progress_ops(e) == &goodput_ops ? gs_engine_progress_state(e) : NULL;
}

int gs_goodput_set_batch_mode(gs_goodput *g, const gs_job *j, int mode, int64_t batch)
{
    if (!g || (mode != GS_BATCH_ADAPTIVE && mode != GS_BATCH_FIXED)) return GS_EINVAL;
    if (mode == GS_BATCH_FIXED && batch < 1) return GS_ERANGE;
    jstate *s = job_state(g, j);
    if (!s) return j ? GS_ENOMEM : GS_EINVAL;
    s->mode = mode;
    s->batch = mode == GS_BATCH_FIXED ? batch : 0;
    return 0;
}

void gs_goodput_set_interval(gs_goodput *g, gs_time interval)
{
    if (g) g->interval = interval > 0 ? interval : 0;
}

void gs_goodput_set_interference(gs_goodput *g, double slowdown)
{
    if (!g) return;
    g->interference = slowdown > 0 && slowdown < 1 ? slowdown : 0;
}

/* ---- what policies ask ---------------------------------------------------------------- */

double gs_goodput_speedup(gs_goodput *g, const gs_job *j, int nodes, int replicas)
{
    if (!g || replicas <= 0 || nodes <= 0) return 0;
    jstate *s = job_state(g, j);
    if (!s || s->app < 0 || !s->have_perf) return replicas;
    const app *a = &g->apps[s->app];
    if (nodes > replicas) nodes = replicas;
    if (s->base_good < 0 || !s->memo) {
        if (!s->memo) {
            s->memo = malloc(MEMO_N * MEMO_R * sizeof *s->memo);
            if (s->memo)
                for (int i = 0; i < MEMO_N * MEMO_R; i++) s->memo[i] = -1;
        }
        s->base_good = optimize(s, a, 1, 1, NULL, NULL);
    }
    int in_memo = s->memo && nodes < MEMO_N && replicas < MEMO_R;
    if (in_memo && s->memo[nodes * MEMO_R + replicas] >= 0)
        return s->memo[nodes * MEMO_R + replicas];
    double v = s->base_good > 0 ? optimize(s, a, nodes, replicas, NULL, NULL) / s->base_good : 0;
    if (in_memo) s->memo[nodes * MEMO_R + replicas] = v;
    return v;
}

int gs_goodput_max_profiled(const gs_goodput *g, const gs_job *j)
{
    const jstate *s = job_state_c(g, j);
    int m = 0;
    if (s)
        for (size_t i = 0; i < s->nprof; i++)
            if (s->prof[i].replicas > m) m = s->prof[i].replicas;
    return m;
}

double gs_goodput_step_time(const gs_goodput *g, const gs_job *j, int replicas, int64_t batch)
{
    if (!g || !j || replicas < 1 || batch < 1) return -1;
    int id = gs_goodput_find_app(g, j->app);
    if (id < 0 || !g->apps[id].finished) return -1;
    const app *a = &g->apps[id];
    int counts[64], nc = 0, left = replicas;
    while (left > 0 && nc < 64) {
        counts[nc] = left < 4 ? left : 4;
        left -= counts[nc++];
    }
    if (left > 0) return -1;
    int atomic, accum;
    int local = ceil_eps((double)batch / replicas);
    accum = ceil_eps((double)local / a->spec.max_local_bsz) - 1;
    if (replicas == 1 && accum < 1) accum = 1;
    if (accum < 0) accum = 0;
    atomic = ceil_eps((double)local / (accum + 1));
    int cap = (int)((double)a->spec.max_batch / (replicas * (accum + 1)));
    if (atomic > cap) atomic = cap;
    if (atomic < 1) atomic = 1;
    double step, sync;
    if (true_times(a, counts, nc, atomic, &step, &sync)) return -1;
    return step + (step - sync) * accum;
}

double gs_goodput_remaining_iters(const gs_goodput *g, const gs_job *j, int64_t batch)
{
    if (!g || !j) return 0;
    int id = gs_goodput_find_app(g, j->app);
    if (id < 0 || !g->apps[id].finished) return 0;
    const app *a = &g->apps[id];
    const jstate *s = job_state_c(g, j);
    int epoch = s ? s->epoch : 0;
    int done = a->spec.max_epochs - 1;
    if (done <= epoch) return 1;
    return iteration_at(a, (double)batch, done) - iteration_at(a, (double)batch, epoch);
}

const gs_app_spec *gs_goodput_job_app(const gs_goodput *g, const gs_job *j)
{
    if (!g || !j) return NULL;
    int id = gs_goodput_find_app(g, j->app);
    return id >= 0 ? &g->apps[id].spec : NULL;
}

int gs_goodput_epoch(const gs_goodput *g, const gs_job *j)
{
    const jstate *s = job_state_c(g, j);
    return s ? s->epoch : 0;
}

/* ---- live hints ------------------------------------------------------------------------ */

int gs_goodput_hint(gs_goodput *g, const gs_job *j, const gs_hint *h)
{
    if (!g || !j || !h) return GS_EINVAL;
    if (h->local_bsz < 1 || !(h->step_time > 0) || !isfinite(h->step_time) ||
        !(h->sync_time >= 0) || !(h->sync_time < h->step_time) || h->accum < 0)
        return GS_ERANGE;
    jstate *s = job_state(g, j);
    if (!s) return GS_ENOMEM;
    int replicas = j->nalloc > 0 ? j->nalloc : 1;
    int nodes = s->replicas == replicas && s->nodes > 0 ? s->nodes : 1;
    double sqr = h->grad_sqr >= 0 && isfinite(h->grad_sqr) ? h->grad_sqr : s->grad_sqr;
    double var = h->grad_var >= 0 && isfinite(h->grad_var) ? h->grad_var : s->grad_var;
    int had = s->have_grad;
    int rc = observe(g, s, nodes, replicas, h->local_bsz, h->step_time, h->sync_time, sqr, var);
    if (!had && (h->grad_sqr < 0 || h->grad_var < 0)) s->have_grad = 0;
    return rc;
}
