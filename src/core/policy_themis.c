/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_themis.c - Themis (NSDI'20): finish-time fairness with
 * partial-allocation auctions and leases (algorithms.md section 4;
 * docs/heterogeneity.md, "Themis").
 *
 * Apps are jobs (app=job, the default) or the active jobs of one user
 * (app=user).  An app's finish-time fairness estimate is
 *     rho = T_sh / T_id
 *     T_sh = (now - start) + the time from now to its last job's end, each job
 *            ending after remaining work / gs_engine_job_rate(type, GPUs) -
 *            a job without GPUs now is counted as waiting one lease first
 *     T_id = ideal x max(1, g x N / G)           (app=job; N active apps)
 *            max(max ideal, sum g x ideal x N / G) over its jobs (app=user)
 * (ideal = gs_engine_job_ideal, G = the cluster's GPUs): the run time alone
 * on an equal 1/N share, as the output metric of docs/heterogeneity.md.
 * Remaining work is the job's true one: Themis' agents know their progress,
 * so the policy is flagged as an oracle.
 *
 * An auction round runs at a pass when GPUs are on offer: free GPUs and
 * those of expired leases.  Bidders are the waiting jobs and the jobs whose
 * lease expired (they keep running while nobody else wants their GPUs).  Apps
 * with bidders are sorted by rho without new GPUs (worst first, then start,
 * then first job id); the first ceil((1 - f) N) of them (at least one) form
 * the fairness set P.  GPU types are auctioned one after another, the type
 * the bidders of P run fastest on first: each app of P bids a few
 * consolidated GPU counts on that type (its waiting jobs in order of
 * estimated end, latest first: prefixes of at most 8 jobs; one job for
 * app=job) valued 1 / rho; the PA mechanism (themis.h: Nash social welfare by
 * DP over GPU counts, the N + 1 maximisations, hidden payments c_i) grants
 * each the option nearest to c_i of its optimal share.  Leftover GPUs go to
 * the apps outside P, worst rho first, then to the apps of P that the
 * payments cut, work-conservingly: every bidder that fits starts, on its
 * fastest type with room.  Each start (or a renewal: an expired lease won
 * again on the same GPU type keeps its GPUs) is a lease of 'lease'; at its
 * end the GPUs go back to the auction; a job that loses them is preempted
 * then (never during a lease, never inside the engine's restart protection).
 *
 * mode=lp: instead of the auction, Gavel's finish-time-fairness LP
 * (algorithms.md section 4.8; gs_gavel_ftf in gavel_lp.c) over every active
 * job, through the engine's LP solver, decides: bidders in order of the share
 * of time X_j the LP gives them (then by rho), each on the type with the
 * largest X[j][k] that has room; then work conservation and leases as above.
 * Gavel's T_iso_cum is kept per job across solves.  Refused without a solver.
 *
 * Gang reservation (reserve=on, consolidated placement): when the worst-off
 * app's first waiting job is a gang that cannot be placed on what is free,
 * the nodes that come free soonest are held for it (reserve_for): no other
 * start there, no renewal of an expired lease there.
 *
 * A gang larger than every GPU type it may use bids on no type: work
 * conservation starts it on free GPUs of any types (start_any), where it runs
 * at the slowest one's rate, and reservation holds nodes of any type for it;
 * its expired lease is renewed in place when nobody was granted its GPUs.
 *
 * Parameters: f=0.8 (fairness knob in [0, 1]), lease=10min, app=job|user,
 * mode=auction|lp, reserve=on|off.  Ties are broken by job id everywhere: no decision comes
 * from hash or address order.
 *
 * Lazy leases (SIM on one GPU type; the same answers, without a timer per lease):
 * a lease end at which no job waits only renews the lease - every expired
 * lease wins whole on its own GPUs - so, while no job waited after the last
 * pass, a lease granted gets no timer: it is a chain of ends lease_end +
 * k x lease, renewed in place at each, kept in the class of its phase (end
 * modulo the lease, a hash table).  A pass first expires the lazy leases
 * ending at that instant (the timers the engine would have fired before it);
 * when a job still waits after a pass, every lazy lease gets the real timer
 * of the end it is pending for (and new leases get real ones until no job
 * waits).  A lease whose timer the restart protection re-arms is real and
 * keeps every lease real until it expires (nrearm).  What the skipped timers
 * were is counted exactly: their events (gs_engine_count_events), their
 * uncontended rounds ('auctions': once per instant, per phase class), the
 * timer a lease still has pending when its job ends (set for real, stale) -
 * so every output is that of the run with a timer per lease.  A pass costs
 * O(its bidders + the leases ending then), a lease O(1).
 *
 * Invariants: js[slot].active exactly for the arrived jobs not final;
 * js[slot].expired only for RUNNING jobs (nexpired counts them); a RUNNING
 * job has a lease (lease_end set) and either one live timer (tag generation
 * tgen) or is lazy (cls >= 0: in virtq and in its class, never expired; only
 * while !real_mode); nrearm counts the rearm flags.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gavel_lp.h"
#include "gsched/jobq.h"
#include "gsched/policy.h"
#include "themis.h"

/* ---- the PA mechanism ---------------------------------------------------------------------- */

void gs_themis_pa_release(gs_themis_pa_ws *ws)
{
    if (!ws) return;
    free(ws->pre);
    free(ws->suf);
    free(ws->choice);
    memset(ws, 0, sizeof *ws);
}

#define PA_EPS 1e-12

int gs_themis_pa(const gs_themis_bid *bids, int n, int R, gs_themis_pa_ws *ws, int *star,
                 double *pay, int *grant, double *welfare)
{
    if (n < 0 || R < 0) return GS_EINVAL;
    long demand = 0;
    for (int i = 0; i < n; i++) {
        const gs_themis_bid *b = &bids[i];
        if (b->nopt < 1 || b->nopt > 255 || b->opt[0].gpus != 0) return GS_EINVAL;
        int mx = 0;
        for (int o = 0; o < b->nopt; o++) {
            if (b->opt[o].gpus < 0 || !(b->opt[o].value > 0) || !isfinite(b->opt[o].value))
                return GS_EINVAL;
            if (b->opt[o].gpus > mx) mx = b->opt[o].gpus;
        }
        demand += mx;
    }
    if (demand < R) R = (int)demand; /* more GPUs than anyone can use: same answer */
    size_t w = (size_t)R + 1, cells = ((size_t)n + 1) * w;
    if (cells > ws->cap) {
        double *p = realloc(ws->pre, cells * sizeof *p);
        if (!p) return GS_ENOMEM;
        ws->pre = p;
        double *s = realloc(ws->suf, cells * sizeof *s);
        if (!s) return GS_ENOMEM;
        ws->suf = s;
        ws->cap = cells;
    }
    if ((size_t)n * w > ws->capc) {
        unsigned char *c = realloc(ws->choice, (size_t)n * w);
        if (!c) return GS_ENOMEM;
        ws->choice = c;
        ws->capc = (size_t)n * w;
    }
    double *pre = ws->pre, *suf = ws->suf;
    unsigned char *ch = ws->choice;
    double lv[255]; /* log of the options' values of the bid at hand (computed once) */
    /* pre[i][r]: best log-welfare of apps 0..i-1 with at most r GPUs */
    for (size_t r = 0; r < w; r++) pre[r] = 0;
    for (int i = 0; i < n; i++) {
        const gs_themis_bid *b = &bids[i];
        double *in = pre + (size_t)i * w, *out = pre + (size_t)(i + 1) * w;
        unsigned char *c = ch + (size_t)i * w;
        for (int o = 0; o < b->nopt; o++) lv[o] = log(b->opt[o].value);
        for (size_t r = 0; r < w; r++) {
            double best = in[r] + lv[0];
            int bo = 0;
            for (int o = 1; o < b->nopt; o++) {
                size_t k = (size_t)b->opt[o].gpus;
                if (k > r) continue;
                double v = in[r - k] + lv[o];
                if (v > best + PA_EPS) best = v, bo = o;
            }
            out[r] = best;
            c[r] = (unsigned char)bo;
        }
    }
    /* suf[i][r]: best log-welfare of apps i..n-1 with at most r GPUs */
    double *last = suf + (size_t)n * w;
    for (size_t r = 0; r < w; r++) last[r] = 0;
    for (int i = n - 1; i >= 0; i--) {
        const gs_themis_bid *b = &bids[i];
        double *in = suf + (size_t)(i + 1) * w, *out = suf + (size_t)i * w;
        for (int o = 0; o < b->nopt; o++) lv[o] = log(b->opt[o].value);
        for (size_t r = 0; r < w; r++) {
            double best = in[r] + lv[0];
            for (int o = 1; o < b->nopt; o++) {
                size_t k = (size_t)b->opt[o].gpus;
                if (k <= r && in[r - k] + lv[o] > best) best = in[r - k] + lv[o];
            }
            out[r] = best;
        }
    }
    double wstar = pre[(size_t)n * w + (size_t)R];
    size_t r = (size_t)R;
    for (int i = n - 1; i >= 0; i--) {
        star[i] = ch[(size_t)i * w + r];
        r -= (size_t)bids[i].opt[star[i]].gpus;
    }
    for (int i = 0; i < n; i++) {
        const gs_themis_bid *b = &bids[i];
        /* the others' best without i: a split of the R GPUs between those before and after */
        double wo = -INFINITY;
        for (size_t q = 0; q < w; q++) {
            double v = pre[(size_t)i * w + q] + suf[(size_t)(i + 1) * w + (size_t)R - q];
            if (v > wo) wo = v;
        }
        double others = wstar - log(b->opt[star[i]].value);
        double c = exp(others - wo);
        if (!(c <= 1)) c = 1; /* rounding: the others' share in G* cannot beat their optimum */
        pay[i] = c;
        int k = b->opt[star[i]].gpus, g = 0;
        double target = c * k, bd = INFINITY;
        for (int o = 0; o < b->nopt; o++) {
            int ko = b->opt[o].gpus;
            if (ko > k) continue;
            double d = fabs((double)ko - target);
            if (d < bd - PA_EPS || (d <= bd + PA_EPS && ko > b->opt[g].gpus)) bd = d, g = o;
        }
        grant[i] = g;
    }
    if (welfare) *welfare = wstar;
    return 0;
}

/* ---- state ----------------------------------------------------------------------------------- */

typedef struct thj {
    gs_time lease_end; /* GS_TIME_NONE: holds no lease; a lazy one: its first end */
    double iso_cum, last_rem, last_iso; /* mode=lp: Gavel's T_iso_cum and what it grows from */
    uint32_t tgen;
    int32_t cls, cnext, cprev; /* lazy lease: its phase class and links there (-1: none) */
    int8_t active, expired, rearm;
} thj;

/* Lazy leases of one phase (lease end modulo the lease length), in the order granted; iv:
 * the disjoint ends (lo, hi pairs, sorted) of their uncontended renewals already counted as
 * auction rounds. */
typedef struct vclass {
    gs_time phase;
    int32_t head, tail, n, nadd;
    gs_time *iv;
    int niv, capiv;
} vclass;

typedef struct bidder {
    gs_job *j;
    int app;
    double fin0; /* us from now to its end if it gets nothing now: a lease, then its best rate */
    double best; /* best rate over its types */
    int gtype;   /* type granted this pass, -1 (GT_SPAN: a lease across types renewed) */
    int ctype;   /* expired holder: the type it runs on (-1 mixed) */
    int holder;  /* 1: an expired holder (RUNNING when the round began) */
} bidder;

typedef struct app {
    int64_t key;   /* slot (app=job) or user id (app=user) */
    gs_time start; /* earliest submit of its active jobs */
    double sum_gi, max_i, tid;
    double base; /* us from now to the end of its jobs that hold a lease */
    int b0, nb;  /* its bidders: bid[b0 .. b0+nb) */
    double rho0;
    double order; /* order of service: rho0 (auction), the LP share (mode=lp) */
    int inP;
    int64_t first_id;
} app;

#define MAXOPT     8
#define DP_BUDGET  ((size_t)1 << 20) /* (apps of P + 1) x (GPUs + 1) cells per auction */
#define MAX_TYPES  32
#define LOG_PREFIX "themis"

typedef struct themis {
    gs_engine *e;
    double f;
    gs_time lease;
    int by_user, lp, reserve;
    thj *js;
    size_t cap;
    gs_jobq act;  /* active jobs, in arrival order */
    gs_jobq bidq; /* bidders: waiting jobs and expired leases (and, LIVE, jobs still stopping) */
    size_t nexpired;
    int dirty, in_pass;
    uint64_t auctions;
    /* scratch of a pass */
    bidder *bid;
    size_t capbid;
    app *ap;
    size_t capap;
    int32_t *appof; /* by slot (app=job) or user id (app=user): app index + 1 this pass */
    size_t capappof;
    int *order; /* apps by rho */
    size_t caporder;
    gs_themis_bid *bids;
    gs_themis_opt *opts;
    int *star, *grant, *pidx;
    double *pay;
    int8_t *with; /* one app's bidders in an option */
    size_t capwith;
    size_t capbids, capopts, capstar, capgrant, cappidx, cappay;
    int *place;
    size_t capplace;
    gs_themis_pa_ws ws;
    /* gang reservation during a pass (reserve_for) */
    uint8_t *resv; /* by node */
    size_t capresv;
    int64_t *nodeat;
    size_t capnodeat;
    int resv_on;
    gs_job *resv_job;
    /* mode=lp scratch */
    double *lpd;
    size_t caplpd;
    int *lpi;
    size_t caplpi;
    /* lazy leases (header, "Lazy leases") */
    int lazy_ok;   /* SIM on one GPU type: an uncontended lease end only renews it */
    int real_mode; /* leases get real timers: a job waited after the last pass, or nrearm */
    int at_pass;   /* inside th_schedule: the timers due now have fired */
    size_t nrearm; /* leases that must be real: the restart protection re-arms their timer */
    gs_jobq virtq; /* lazy leases, in the order granted */
    vclass *cls;
    size_t ncls, capcls;
    int32_t freecls;
    int32_t *htab; /* phase -> class (open addressing, linear probing; -1 empty) */
    size_t hcap, hn;
} themis;

static int grow(themis *t, int32_t slot)
{
    if ((size_t)slot < t->cap) return 0;
    size_t nc = t->cap ? t->cap : 256;
    while (nc <= (size_t)slot) nc *= 2;
    thj *n = realloc(t->js, nc * sizeof *n);
    if (!n) return GS_ENOMEM;
    t->js = n;
    for (size_t i = t->cap; i < nc; i++)
        t->js[i] = (thj){.lease_end = GS_TIME_NONE, .cls = -1, .cnext = -1, .cprev = -1};
    t->cap = nc;
    return 0;
}

/* Grow *p (elements of size sz, capacity *cap) to hold n. */
static int need(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap) return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < n) nc *= 2;
    void *q = realloc(*p, nc * sz);
    if (!q) return GS_ENOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

static void th_destroy(void *st)
{
    themis *t = st;
    if (!t) return;
    /* reconfiguration: the timers its lazy leases stood for fired until now, the pending
     * ones are dropped with the engine's */
    for (int32_t s = gs_jobq_first(&t->virtq); s >= 0; s = gs_jobq_next(&t->virtq, s)) {
        gs_time x0 = t->js[s].lease_end, now = gs_engine_now(t->e);
        if (now > x0)
            gs_engine_count_events(t->e, (uint64_t)((now - x0 + t->lease - 1) / t->lease));
    }
    for (size_t i = 0; i < t->ncls; i++) free(t->cls[i].iv);
    free(t->cls);
    free(t->htab);
    gs_jobq_release(&t->virtq);
    gs_jobq_release(&t->act);
    gs_jobq_release(&t->bidq);
    free(t->js);
    free(t->bid);
    free(t->ap);
    free(t->appof);
    free(t->order);
    free(t->bids);
    free(t->opts);
    free(t->star);
    free(t->grant);
    free(t->pidx);
    free(t->pay);
    free(t->place);
    free(t->with);
    free(t->resv);
    free(t->nodeat);
    free(t->lpd);
    free(t->lpi);
    gs_themis_pa_release(&t->ws);
    free(t);
}

static int th_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    themis *t = calloc(1, sizeof *t);
    if (!t) return GS_ENOMEM;
    t->e = e;
    gs_jobq_init(&t->act);
    gs_jobq_init(&t->bidq);
    gs_jobq_init(&t->virtq);
    t->freecls = -1;
    int64_t lease = 0;
    int rc = gs_params_get_double(p, "f", 0.8, 0, 1, &t->f, d);
    if (!rc) rc = gs_params_get_duration(p, "lease", 600 * GS_SEC, &lease, d);
    if (!rc && lease < GS_SEC)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'lease': at least 1 second");
    t->lease = lease;
    const char *a = rc ? NULL : gs_params_get(p, "app");
    if (a && !strcmp(a, "user"))
        t->by_user = 1;
    else if (a && strcmp(a, "job"))
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'app': job or user, not '%s'", a);
    if (!rc) rc = gs_params_get_bool(p, "reserve", 1, &t->reserve, d);
    const char *m = rc ? NULL : gs_params_get(p, "mode");
    if (m && !strcmp(m, "lp"))
        t->lp = 1;
    else if (m && strcmp(m, "auction"))
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'mode': auction or lp, not '%s'", m);
    if (!rc && t->lp && t->by_user)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "themis mode=lp allocates to jobs: app=job only");
    if (!rc && t->lp && !gs_engine_lp(e)) rc = gs_gavel_no_solver("themis (mode=lp)", d);
    t->lazy_ok = gs_engine_opts_get(e)->mode == GS_ENGINE_SIM &&
                 gs_cluster_ngpu_types(gs_engine_cluster(e)) <= 1;
    if (rc) {
        th_destroy(t);
        return rc;
    }
    *state = t;
    return 0;
}

/* ---- rates and estimates ------------------------------------------------------------------------
 */

static int ntypes(const themis *t)
{
    size_t n = gs_cluster_ngpu_types(gs_engine_cluster(t->e));
    return n ? (int)(n > MAX_TYPES ? MAX_TYPES : n) : 1;
}

/* Rate of j on its requested GPUs of type ty (0 when it cannot run there). */
static double rate_on(const themis *t, const gs_job *j, int ty)
{
    if (j->gpu_type >= 0 && ty != j->gpu_type) return 0;
    if (gs_cluster_ngpu_types(gs_engine_cluster(t->e)) == 0) ty = -1;
    double r = gs_engine_job_rate(t->e, j, ty, j->gpus);
    return r > 0 && isfinite(r) ? r : 0;
}

static double best_rate(const themis *t, const gs_job *j)
{
    double b = 0;
    for (int ty = 0; ty < ntypes(t); ty++) {
        double r = rate_on(t, j, ty);
        if (r > b) b = r;
    }
    return b > 0 ? b : 1;
}

/* Type of the GPUs j holds, -1 when they are of several types (or none). */
static int held_type(const themis *t, const gs_job *j)
{
    const gs_cluster *c = gs_engine_cluster(t->e);
    int ty = -1;
    for (int k = 0; k < j->nalloc; k++) {
        int g = gs_cluster_gpu(c, j->alloc[k])->type;
        if (k == 0)
            ty = g;
        else if (g != ty)
            return -1;
    }
    return ty;
}

/* Rate of a job holding GPUs: the slowest type it holds. */
static double held_rate(const themis *t, const gs_job *j)
{
    const gs_cluster *c = gs_engine_cluster(t->e);
    double r = INFINITY;
    for (int k = 0; k < j->nalloc; k++) {
        double x = rate_on(t, j, gs_cluster_gpu(c, j->alloc[k])->type);
        if (x < r) r = x;
    }
    return r > 0 && isfinite(r) ? r : best_rate(t, j);
}

static double remaining(const themis *t, const gs_job *j)
{
    return (double)gs_job_remaining(j, gs_engine_now(t->e));
}

/* ---- leases -------------------------------------------------------------------------------------
 */

static uint64_t tag_of(const themis *t, int32_t slot)
{
    return ((uint64_t)(uint32_t)slot << 32) | t->js[slot].tgen;
}

/* ---- lazy leases: phase classes ---- */

static gs_time phase_of(const themis *t, gs_time x)
{
    gs_time p = x % t->lease;
    return p < 0 ? p + t->lease : p;
}

static size_t hslot(const themis *t, gs_time phase)
{
    return (size_t)(((uint64_t)phase * 0x9e3779b97f4a7c15u) >> 17) & (t->hcap - 1);
}

static int32_t cls_find(const themis *t, gs_time phase)
{
    if (!t->hn) return -1;
    for (size_t h = hslot(t, phase);; h = (h + 1) & (t->hcap - 1)) {
        int32_t c = t->htab[h];
        if (c < 0) return -1;
        if (t->cls[c].phase == phase) return c;
    }
}

static void hput(themis *t, int32_t c)
{
    size_t h = hslot(t, t->cls[c].phase);
    while (t->htab[h] >= 0) h = (h + 1) & (t->hcap - 1);
    t->htab[h] = c;
}

/* The class of phase, created empty if there is none: its index, or GS_ENOMEM. */
static int32_t cls_get(themis *t, gs_time phase)
{
    int32_t c = cls_find(t, phase);
    if (c >= 0) return c;
    if (2 * (t->hn + 1) > t->hcap) {
        size_t nc = t->hcap ? 2 * t->hcap : 256;
        int32_t *n = malloc(nc * sizeof *n);
        if (!n) return GS_ENOMEM;
        for (size_t i = 0; i < nc; i++) n[i] = -1;
        int32_t *o = t->htab;
        size_t oc = t->hcap;
        t->htab = n;
        t->hcap = nc;
        for (size_t i = 0; i < oc; i++)
            if (o[i] >= 0) hput(t, o[i]);
        free(o);
    }
    if (t->freecls >= 0) {
        c = t->freecls;
        t->freecls = t->cls[c].head;
    } else {
        if (need((void **)&t->cls, &t->capcls, t->ncls + 1, sizeof *t->cls)) return GS_ENOMEM;
        c = (int32_t)t->ncls++;
        t->cls[c].iv = NULL;
        t->cls[c].capiv = 0;
    }
    vclass *v = &t->cls[c];
    v->phase = phase;
    v->head = v->tail = -1;
    v->n = v->nadd = v->niv = 0;
    hput(t, c);
    t->hn++;
    return c;
}

/* The class is empty: out of the table (backward-shift deletion), onto the free list. */
static void cls_drop(themis *t, int32_t c)
{
    size_t h = hslot(t, t->cls[c].phase);
    while (t->htab[h] != c) h = (h + 1) & (t->hcap - 1);
    for (size_t k = (h + 1) & (t->hcap - 1);; k = (k + 1) & (t->hcap - 1)) {
        int32_t x = t->htab[k];
        if (x < 0) break;
        size_t home = hslot(t, t->cls[x].phase);
        /* x may move to the hole h when its home is not cyclically within (h, k] */
        if (((k - home) & (t->hcap - 1)) >= ((k - h) & (t->hcap - 1))) {
            t->htab[h] = x;
            h = k;
        }
    }
    t->htab[h] = -1;
    t->hn--;
    t->cls[c].head = t->freecls;
    t->freecls = c;
}

/* Lattice points (step lease) of [a, b] that the class's counted ends do not cover. */
static uint64_t iv_new(const themis *t, const vclass *v, gs_time a, gs_time b)
{
    gs_time L = t->lease;
    uint64_t covered = 0;
    for (int i = 0; i < v->niv; i++) {
        gs_time lo = v->iv[2 * i] > a ? v->iv[2 * i] : a;
        gs_time hi = v->iv[2 * i + 1] < b ? v->iv[2 * i + 1] : b;
        if (hi >= lo) covered += (uint64_t)((hi - lo) / L) + 1;
    }
    return (uint64_t)((b - a) / L) + 1 - covered;
}

/* Count the lattice points [a, b] as covered (capacity reserved by lazy_add). */
static void iv_add(themis *t, vclass *v, gs_time a, gs_time b)
{
    gs_time L = t->lease;
    int i = 0;
    while (i < v->niv && v->iv[2 * i + 1] + L < a) i++;
    int k = i;
    gs_time lo = a, hi = b;
    for (; k < v->niv && v->iv[2 * k] <= b + L; k++) {
        if (v->iv[2 * k] < lo) lo = v->iv[2 * k];
        if (v->iv[2 * k + 1] > hi) hi = v->iv[2 * k + 1];
    }
    if (k == i) { /* a new interval at i */
        memmove(v->iv + 2 * (i + 1), v->iv + 2 * i, (size_t)(v->niv - i) * 2 * sizeof *v->iv);
        v->niv++;
    } else if (k > i + 1) { /* i..k-1 merge into i */
        memmove(v->iv + 2 * (i + 1), v->iv + 2 * k, (size_t)(v->niv - k) * 2 * sizeof *v->iv);
        v->niv -= k - i - 1;
    }
    v->iv[2 * i] = lo;
    v->iv[2 * i + 1] = hi;
}

/* Make j's new lease (lease_end set, no timer) a lazy one.  0 or GS_ENOMEM (then it is not). */
static int lazy_add(themis *t, int32_t slot)
{
    thj *s = &t->js[slot];
    int rc = gs_jobq_push_back(&t->virtq, slot);
    if (rc) return rc;
    int32_t c = cls_get(t, phase_of(t, s->lease_end));
    if (c < 0) {
        gs_jobq_remove(&t->virtq, slot);
        return c;
    }
    vclass *v = &t->cls[c];
    if (v->nadd + 1 > v->capiv) { /* each lease adds at most one interval of counted ends */
        int nc = v->capiv ? 2 * v->capiv : 4;
        gs_time *n = realloc(v->iv, (size_t)nc * 2 * sizeof *n);
        if (!n) {
            gs_jobq_remove(&t->virtq, slot);
            if (!v->n) cls_drop(t, c);
            return GS_ENOMEM;
        }
        v->iv = n;
        v->capiv = nc;
    }
    v->nadd++;
    s->cls = c;
    s->cnext = -1;
    s->cprev = v->tail;
    if (v->tail >= 0)
        t->js[v->tail].cnext = slot;
    else
        v->head = slot;
    v->tail = slot;
    v->n++;
    return 0;
}

/*
 * End slot's lazy lease at time T (incl: the timers due at T have fired, as in a pass): the
 * timer events it stood for until then are counted, and its uncontended renewals (every end
 * before T) as auction rounds, once per instant.  Returns the end its timer is pending for then
 * (the first end >= T, > T when incl).
 */
static gs_time lazy_end(themis *t, int32_t slot, gs_time T, int incl)
{
    thj *s = &t->js[slot];
    gs_time x0 = s->lease_end, L = t->lease;
    uint64_t nt = T > x0 ? (uint64_t)((T - x0 + L - 1) / L) : 0; /* ends before T */
    uint64_t nf = nt + (incl && T >= x0 && (T - x0) % L == 0);   /* timers fired by T */
    gs_engine_count_events(t->e, nf);
    int32_t c = s->cls;
    vclass *v = &t->cls[c];
    if (nt) {
        gs_time b = x0 + (gs_time)(nt - 1) * L;
        t->auctions += iv_new(t, v, x0, b);
        iv_add(t, v, x0, b);
    }
    if (s->cprev >= 0)
        t->js[s->cprev].cnext = s->cnext;
    else
        v->head = s->cnext;
    if (s->cnext >= 0)
        t->js[s->cnext].cprev = s->cprev;
    else
        v->tail = s->cprev;
    s->cls = s->cnext = s->cprev = -1;
    if (--v->n == 0) cls_drop(t, c);
    gs_jobq_remove(&t->virtq, slot);
    return x0 + (gs_time)nf * L;
}

/* Every lazy lease gets its real timer (at the end it is pending for now): a job waits. */
static int lazy_all_real(themis *t)
{
    gs_time now = gs_engine_now(t->e);
    int32_t s;
    while ((s = gs_jobq_first(&t->virtq)) >= 0) {
        t->js[s].lease_end = lazy_end(t, s, now, t->at_pass);
        int rc = gs_engine_set_timer(t->e, t->js[s].lease_end, tag_of(t, s));
        if (rc) return rc;
    }
    return 0;
}

/* At a pass: the lazy leases ending now expire, as their timers would have made them. */
static int lazy_catch_up(themis *t)
{
    if (!gs_jobq_len(&t->virtq)) return 0;
    gs_time now = gs_engine_now(t->e);
    int32_t c = cls_find(t, phase_of(t, now));
    if (c < 0) return 0;
    for (int32_t s = t->cls[c].head, nx; s >= 0; s = nx) {
        nx = t->js[s].cnext;
        if (t->js[s].lease_end > now) continue; /* granted later: its first end is to come */
        lazy_end(t, s, now, 1);
        thj *x = &t->js[s];
        x->lease_end = now;
        int rc = gs_jobq_contains(&t->bidq, s) ? 0 : gs_jobq_push_back(&t->bidq, s);
        if (rc) return rc;
        x->expired = 1;
        t->nexpired++;
        t->dirty = 1;
    }
    return 0;
}

static int drop_lease(themis *t, int32_t slot)
{
    thj *s = &t->js[slot];
    int rc = 0;
    if (s->cls >= 0) { /* the timer it stood for still fires (stale): a real one does */
        gs_time at = lazy_end(t, slot, gs_engine_now(t->e), t->at_pass);
        rc = gs_engine_set_timer(t->e, at, tag_of(t, slot));
    }
    if (s->rearm) s->rearm = 0, t->nrearm--;
    if (s->expired) t->nexpired--;
    s->expired = 0;
    s->lease_end = GS_TIME_NONE;
    s->tgen++;
    return rc;
}

static int new_lease(themis *t, const gs_job *j)
{
    int rc = drop_lease(t, j->slot);
    if (rc) return rc;
    if (gs_jobq_contains(&t->bidq, j->slot)) gs_jobq_remove(&t->bidq, j->slot);
    thj *s = &t->js[j->slot];
    s->lease_end = gs_engine_now(t->e) + t->lease;
    if (t->lazy_ok &&
        (j->protect_until > s->lease_end || j->nalloc != j->gpus || rate_on(t, j, 0) <= 0)) {
        /* th_timer re-arms it at the protection's end (or, in what cannot happen, a round
         * without contention might not renew it in place): real timers until it expires */
        s->rearm = 1;
        t->nrearm++;
        if (!t->real_mode && (rc = lazy_all_real(t))) return rc;
        t->real_mode = 1;
    } else if (t->lazy_ok && !t->real_mode) {
        return lazy_add(t, j->slot);
    }
    return gs_engine_set_timer(t->e, s->lease_end, tag_of(t, j->slot));
}

/* ---- the auction round
 * ---------------------------------------------------------------------------- */

/* rho of app a when the bidders flagged in 'with' (or already granted) get GPUs of type ty. */
static double app_rho(const themis *t, const app *a, const int8_t *with, int ty)
{
    double fin = a->base;
    for (int k = 0; k < a->nb; k++) {
        const bidder *b = &t->bid[a->b0 + k];
        double x;
        if (b->gtype >= 0)
            x = remaining(t, b->j) / rate_on(t, b->j, b->gtype);
        else if (with && with[k])
            x = remaining(t, b->j) / rate_on(t, b->j, ty);
        else
            x = b->fin0;
        if (x > fin) fin = x;
    }
    double tsh = (double)(gs_engine_now(t->e) - a->start) + fin;
    double rho = tsh / a->tid;
    /* an app of no work that has not waited has rho 0: floor it so its value 1/rho stays
     * finite */
    return rho > 1e-9 ? rho : 1e-9;
}

static int cmp_double_desc(double a, double b)
{
    return (a < b) - (a > b);
}

/* Apps by rho, worst first, then by start, then by first job id (a total order). */
static int app_before(const app *a, const app *b)
{
    if (a->order != b->order) return a->order > b->order;
    if (a->rho0 != b->rho0) return a->rho0 > b->rho0;
    if (a->start != b->start) return a->start < b->start;
    return a->first_id < b->first_id;
}

/* Sort idx[0..n) by app_before (merge sort into tmp: qsort has no context argument). */
static void sort_apps(const app *ap, int *idx, int *tmp, int n)
{
    if (n < 2) return;
    int h = n / 2;
    sort_apps(ap, idx, tmp, h);
    sort_apps(ap, idx + h, tmp, n - h);
    int i = 0, k = h, o = 0;
    while (i < h && k < n) tmp[o++] = app_before(&ap[idx[k]], &ap[idx[i]]) ? idx[k++] : idx[i++];
    while (i < h) tmp[o++] = idx[i++];
    while (k < n) tmp[o++] = idx[k++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

static int cmp_bidder(const void *x, const void *y)
{
    const bidder *a = x, *b = y;
    if (a->app != b->app) return a->app - b->app;
    int c = cmp_double_desc(a->fin0, b->fin0);
    if (c) return c;
    return (a->j->id > b->j->id) - (a->j->id < b->j->id);
}

/* Free healthy GPUs per type, plus those of expired leases (the GPUs on offer). */
static void offered(const themis *t, long *R)
{
    const gs_cluster *c = gs_engine_cluster(t->e);
    int nt = ntypes(t);
    for (int ty = 0; ty < nt; ty++) R[ty] = 0;
    if (gs_cluster_ngpu_types(c) <= 1) {
        R[0] = gs_cluster_free(c);
    } else {
        for (size_t n = 0; n < gs_cluster_nnodes(c); n++) {
            const gs_node *nd = gs_cluster_node(c, (int)n);
            const gs_cell *cell = gs_cluster_cell(c, nd->cell);
            if (!cell->free) continue;
            uint32_t m = cell->gpu_types;
            if (m && !(m & (m - 1))) {
                int ty = 0;
                while (!(m & 1u)) m >>= 1, ty++;
                if (ty < nt) R[ty] += cell->free;
                continue;
            }
            for (int g = nd->gpu_lo; g < nd->gpu_hi; g++) {
                const gs_gpu *gp = gs_cluster_gpu(c, g);
                if (gp->owner < 0 && !gp->down && !gp->users && !nd->down && gp->type < nt)
                    R[gp->type]++;
            }
        }
    }
    for (int32_t s = gs_jobq_first(&t->bidq); s >= 0; s = gs_jobq_next(&t->bidq, s)) {
        if (!t->js[s].expired) continue;
        const gs_job *j = gs_engine_job(t->e, (size_t)s);
        for (int k = 0; k < j->nalloc; k++) {
            int ty = gs_cluster_gpu(c, j->alloc[k])->type;
            if (ty >= 0 && ty < nt) R[ty]++;
        }
    }
}

/* Start pending j on GPUs of type ty (-1: any its request allows).  0, GS_ENOFIT or an error. */
static int start_on(themis *t, gs_job *j, int ty)
{
    gs_place_req r;
    gs_engine_place_req(t->e, j, GS_LOCALITY_STRICT, &r);
    if (gs_cluster_ngpu_types(gs_engine_cluster(t->e)) > 1 && ty >= 0) r.gpu_type = ty;
    int rc = need((void **)&t->place, &t->capplace, (size_t)j->gpus, sizeof *t->place);
    if (rc) return rc;
    rc = gs_place_find(gs_engine_cluster(t->e), &r, t->place);
    if (rc) return rc;
    if (t->resv_on && j != t->resv_job)
        for (int k = 0; k < j->gpus; k++)
            if (t->resv[gs_cluster_gpu(gs_engine_cluster(t->e), t->place[k])->node])
                return GS_ENOFIT;
    rc = gs_engine_start(t->e, j, t->place, j->gpus);
    if (rc == GS_ENOMEM || gs_engine_error(t->e)) return rc ? rc : gs_engine_error(t->e);
    if (rc) return GS_ENOFIT;
    return new_lease(t, j);
}

/* Whether j's gang is larger than every GPU type it may use: it runs only across types (at the
 * slowest one's rate, as the engine defines it). */
static int spans_types(const themis *t, const gs_job *j)
{
    const gs_cluster *c = gs_engine_cluster(t->e);
    if (gs_cluster_ngpu_types(c) < 2 || j->gpu_type >= 0) return 0;
    for (int ty = 0; ty < ntypes(t); ty++)
        if (gs_cluster_type_gpus(c, ty) >= j->gpus) return 0;
    return 1;
}

/* gtype of an expired lease across types that keeps its GPUs (renewed in place) */
#define GT_SPAN (-3)

/* An expired lease of a gang across types (spans_types) is renewed in place when its GPUs of
 * each type are still on offer after the grants (nobody else took them): 1, and they are taken
 * from R; else 0 (it loses them, and starts again when enough are free). */
static int keeps_across(const themis *t, bidder *b, long *R)
{
    const gs_cluster *c = gs_engine_cluster(t->e);
    long need[MAX_TYPES] = {0};
    if (!spans_types(t, b->j)) return 0;
    for (int k = 0; k < b->j->nalloc; k++) {
        int ty = gs_cluster_gpu(c, b->j->alloc[k])->type;
        if (ty >= 0 && ty < MAX_TYPES) need[ty]++;
    }
    for (int ty = 0; ty < ntypes(t); ty++)
        if (need[ty] > R[ty]) return 0;
    for (int ty = 0; ty < ntypes(t); ty++) R[ty] -= need[ty];
    b->gtype = GT_SPAN;
    return 1;
}

/* Start pending j on its fastest type where it can be placed now (a gang larger than every
 * type: on free GPUs of any types).  0 (started or not), or an error. */
static int start_any(themis *t, gs_job *j)
{
    int nt = ntypes(t), tried = 0;
    if (spans_types(t, j)) {
        int rc = start_on(t, j, -1);
        return rc == GS_ENOFIT ? 0 : rc;
    }
    for (;;) {
        int best = -1;
        double br = 0;
        for (int ty = 0; ty < nt; ty++) {
            double r = rate_on(t, j, ty);
            if (!(tried & (1 << ty)) && r > br) br = r, best = ty;
        }
        if (best < 0) return 0;
        tried |= 1 << best;
        int rc = start_on(t, j, nt > 1 ? best : -1);
        if (rc != GS_ENOFIT) return rc;
    }
}

/*
 * Gang reservation (consolidated placement): the worst-off app's gang j cannot start on what is
 * free, so nodes are held for it - those of its fastest type (with room for it in all) that
 * come free soonest (every GPU free, else the latest lease end of their holders; ties by
 * index), until they hold j's GPUs.  While held, no other job starts there and no expired
 * lease there is renewed: j starts when the last lease there ends, instead of being starved by
 * smaller jobs taking every GPU that frees.  Sets t->resv[node] and t->resv_on.
 */
static int reserve_for(themis *t, gs_job *j)
{
    gs_engine *e = t->e;
    const gs_cluster *c = gs_engine_cluster(e);
    size_t nn = gs_cluster_nnodes(c);
    int rc = need((void **)&t->resv, &t->capresv, nn, sizeof *t->resv);
    if (!rc) rc = need((void **)&t->nodeat, &t->capnodeat, 2 * nn, sizeof *t->nodeat);
    if (rc) return rc;
    memset(t->resv, 0, nn * sizeof *t->resv);
    int ty = -1;
    double br = 0;
    for (int k = 0; k < ntypes(t); k++) {
        double r = rate_on(t, j, k);
        int cap = gs_cluster_ngpu_types(c) ? gs_cluster_type_gpus(c, k) : (int)gs_cluster_ngpus(c);
        if (r > br && cap >= j->gpus) br = r, ty = k;
    }
    int typed = gs_cluster_ngpu_types(c) > 1;
    if (ty < 0 && spans_types(t, j))
        typed = 0; /* larger than every type: nodes of any type */
    else if (ty < 0)
        return 0;
    gs_time now = gs_engine_now(e);
    size_t m = 0;
    for (size_t n = 0; n < nn; n++) {
        const gs_node *nd = gs_cluster_node(c, (int)n);
        if (nd->down || gs_engine_node_state(e, (int)n)) continue;
        gs_time at = now;
        int cap = 0;
        for (int g = nd->gpu_lo; g < nd->gpu_hi; g++) {
            const gs_gpu *gp = gs_cluster_gpu(c, g);
            if (gp->down || (typed && gp->type != ty)) continue;
            cap++;
            gs_time x = now;
            if (gp->owner >= 0) {
                const thj *h = (size_t)gp->owner < t->cap ? &t->js[gp->owner] : NULL;
                x = !h || h->lease_end == GS_TIME_NONE ? GS_TIME_MAX
                    : h->expired                       ? now
                                                       : h->lease_end;
            }
            if (x > at) at = x;
        }
        if (!cap || at == GS_TIME_MAX) continue;
        t->nodeat[2 * m] = at;
        t->nodeat[2 * m + 1] = ((int64_t)cap << 32) | (int64_t)n;
        m++;
    }
    /* by (time free, index): insertion into the sorted prefix is enough for the few taken */
    long got = 0;
    while (got < j->gpus) {
        size_t bi = m;
        for (size_t q = 0; q < m; q++) {
            if (t->resv[t->nodeat[2 * q + 1] & 0xffffffff]) continue;
            if (bi == m || t->nodeat[2 * q] < t->nodeat[2 * bi]) bi = q;
        }
        if (bi == m) break;
        t->resv[t->nodeat[2 * bi + 1] & 0xffffffff] = 1;
        got += t->nodeat[2 * bi + 1] >> 32;
    }
    if (got < j->gpus) return 0; /* no set of nodes can ever hold it: nothing held */
    t->resv_on = 1;
    t->resv_job = j;
    return 0;
}

/* Types by how fast the given bidders run there (mean rate, fastest first; ties by id). */
static void type_order(const themis *t, const int *apps, int napps, const long *R, int *tord,
                       int *ntord)
{
    int nt = ntypes(t);
    double score[MAX_TYPES];
    int n = 0;
    for (int ty = 0; ty < nt; ty++) {
        if (R[ty] <= 0) continue;
        double sum = 0;
        long cnt = 0;
        for (int i = 0; i < napps; i++) {
            const app *a = &t->ap[apps[i]];
            for (int k = 0; k < a->nb; k++, cnt++) sum += rate_on(t, t->bid[a->b0 + k].j, ty);
        }
        score[ty] = cnt ? sum / (double)cnt : 0;
        int p = n++;
        while (p > 0 && score[tord[p - 1]] < score[ty]) tord[p] = tord[p - 1], p--;
        tord[p] = ty;
    }
    *ntord = n;
}

/* The fastest type with room for b; an expired lease stays on its own type unless one at least
 * MOVE_GAIN times faster has room (a move costs a restart). */
#define MOVE_GAIN 1.25

static int leftover_type(const themis *t, const bidder *b, const long *R)
{
    int g = b->j->gpus;
    int best = -1;
    double br = 0;
    for (int ty = 0; ty < ntypes(t); ty++) {
        double r = rate_on(t, b->j, ty);
        if (R[ty] >= g && r > br) br = r, best = ty;
    }
    if (b->ctype >= 0 && R[b->ctype] >= g) {
        double own = rate_on(t, b->j, b->ctype);
        if (own > 0 && !(br >= MOVE_GAIN * own)) return b->ctype;
    }
    return best;
}

/*
 * mode=lp: Gavel's finish-time-fairness LP over every active job (holders bound the room left
 * to the others), then the bidders in order of their share of time, each given the type with
 * the largest share that still has room (count level; placement follows in th_schedule).
 */
static int lp_decide(themis *t, int napps, long *R)
{
    gs_engine *e = t->e;
    const gs_cluster *c = gs_engine_cluster(e);
    gs_time now = gs_engine_now(e);
    int K = ntypes(t), J = (int)gs_jobq_len(&t->act);
    size_t nd = (size_t)J * (size_t)(3 * K + 6) + (size_t)K;
    int rc = need((void **)&t->lpd, &t->caplpd, nd, sizeof *t->lpd);
    if (!rc) rc = need((void **)&t->lpi, &t->caplpi, (size_t)J + t->cap, sizeof *t->lpi);
    if (rc) return rc;
    double *tput = t->lpd, *x = tput + (size_t)J * K, *rem = x + (size_t)J * K, *el = rem + J,
           *iso = el + J, *thr_iso = iso + J, *ngpus = thr_iso + J, *share = ngpus + K,
           *spare = share + J;
    (void)spare;
    int *scale = t->lpi, *rowof = t->lpi + J; /* rowof: by slot */
    int i = 0;
    for (int32_t s = gs_jobq_first(&t->act); s >= 0; s = gs_jobq_next(&t->act, s), i++) {
        const gs_job *j = gs_engine_job(e, (size_t)s);
        thj *h = &t->js[s];
        for (int k = 0; k < K; k++) tput[(size_t)i * K + k] = rate_on(t, j, k);
        scale[i] = j->gpus;
        rem[i] = remaining(t, j) / (double)GS_SEC;
        el[i] = (double)(now - j->submit) / (double)GS_SEC;
        /* Gavel: T_iso_cum += (S at the last solve - S now) / thr_iso at the last solve */
        if (h->last_iso > 0) h->iso_cum += (h->last_rem - rem[i]) / h->last_iso;
        iso[i] = h->iso_cum;
        rowof[s] = i;
    }
    for (int k = 0; k < K; k++)
        ngpus[k] = gs_cluster_ngpu_types(c) ? (double)gs_cluster_type_gpus(c, k)
                                            : (double)gs_cluster_ngpus(c);
    gs_gavel_in in = {.J = J,
                      .K = K,
                      .tput = tput,
                      .scale = scale,
                      .ngpus = ngpus,
                      .remaining = rem,
                      .elapsed = el,
                      .iso_cum = iso};
    gs_diag d;
    gs_diag_init(&d, NULL);
    rc = gs_gavel_ftf(gs_engine_lp(e), &in, 0, x, NULL, &d);
    if (rc) return rc;
    gs_gavel_isolated(&in, thr_iso);
    i = 0;
    for (int32_t s = gs_jobq_first(&t->act); s >= 0; s = gs_jobq_next(&t->act, s), i++) {
        t->js[s].last_rem = rem[i];
        t->js[s].last_iso = thr_iso[i];
        share[i] = 0;
        for (int k = 0; k < K; k++) share[i] += x[(size_t)i * K + k];
    }
    for (int q = 0; q < napps; q++) {
        app *a = &t->ap[t->order[q]]; /* app=job: one bidder each */
        /* to 1e-6: shares equal but for the solver's rounding are ties (then by rho) */
        a->order = floor(share[rowof[t->bid[a->b0].j->slot]] * 1e6 + 0.5);
        a->inP = 0;
    }
    sort_apps(t->ap, t->order, t->order + gs_jobq_len(&t->act), napps);
    for (int q = 0; q < napps; q++) {
        bidder *b = &t->bid[t->ap[t->order[q]].b0];
        const double *xr = x + (size_t)rowof[b->j->slot] * K;
        int best = -1;
        /* an expired lease the LP gives time on its own type: kept there (no restart) */
        int keep = b->ctype >= 0 && R[b->ctype] >= b->j->gpus && xr[b->ctype] > 0;
        if (keep) best = b->ctype;
        for (int k = 0; k < K && !keep; k++) {
            if (R[k] < b->j->gpus || rate_on(t, b->j, k) <= 0) continue;
            if (best < 0 || xr[k] > xr[best] ||
                (xr[k] == xr[best] && rate_on(t, b->j, k) > rate_on(t, b->j, best)))
                best = k;
        }
        if (best < 0) continue;
        b->gtype = best;
        R[best] -= b->j->gpus;
    }
    return 0;
}

static int th_round(themis *t);

/* A pass: the lazy leases ending now expire first; after it, while a job waits (or a lease's
 * timer is re-armed by the restart protection), every lease has a real timer. */
static int th_schedule(void *st)
{
    themis *t = st;
    t->at_pass = 1;
    int rc = lazy_catch_up(t);
    if (!rc) rc = th_round(t);
    if (!rc && t->lazy_ok) {
        int real = gs_engine_npending(t->e) > 0 || t->nrearm > 0;
        if (real && !t->real_mode) rc = lazy_all_real(t);
        t->real_mode = real;
    }
    t->at_pass = 0;
    return rc;
}

static int th_round(themis *t)
{
    if (!t->dirty) return 0;
    t->dirty = 0;
    gs_engine *e = t->e;
    gs_cluster *c = gs_engine_cluster(e);
    if (gs_cluster_free(c) <= 0 && t->nexpired == 0) return 0;
    if (gs_engine_npending(e) == 0 && t->nexpired == 0) return 0;
    int nt = ntypes(t);
    long R[MAX_TYPES];
    offered(t, R);
    double G = (double)gs_cluster_ngpus(c);
    if (G < 1) G = 1;

    /* ---- apps and bidders ---- */
    size_t nact = gs_jobq_len(&t->act);
    int rc = need((void **)&t->bid, &t->capbid, nact, sizeof *t->bid);
    if (!rc) rc = need((void **)&t->ap, &t->capap, nact, sizeof *t->ap);
    if (!rc) rc = need((void **)&t->order, &t->caporder, 2 * nact, sizeof *t->order);
    if (!rc) rc = need((void **)&t->with, &t->capwith, nact, sizeof *t->with);
    if (rc) return rc;
    int nap = 0, nb = 0;
    /* app=job: only the bidders are apps of the round (the holders count in N alone);
     * app=user: every active job (a holder's end is part of its user's rho) */
    const gs_jobq *src = t->by_user ? &t->act : &t->bidq;
    if (t->by_user) {
        for (int32_t s = gs_jobq_first(src); s >= 0; s = gs_jobq_next(src, s)) {
            gs_job *j = gs_policy_job(e, (size_t)s);
            if ((rc = need((void **)&t->appof, &t->capappof, (size_t)j->user_id + 1,
                           sizeof *t->appof)))
                return rc;
        }
        for (int32_t s = gs_jobq_first(src); s >= 0; s = gs_jobq_next(src, s))
            t->appof[gs_policy_job(e, (size_t)s)->user_id] = 0;
    }
    for (int32_t s = gs_jobq_first(src); s >= 0; s = gs_jobq_next(src, s)) {
        gs_job *j = gs_policy_job(e, (size_t)s);
        int bidding =
            j->state == GS_JOB_PENDING || (j->state == GS_JOB_RUNNING && t->js[s].expired);
        if (!bidding && !t->by_user) continue; /* LIVE: a job still stopping */
        int ai;
        if (t->by_user) {
            ai = t->appof[j->user_id] - 1;
            if (ai < 0) {
                ai = nap++;
                t->appof[j->user_id] = ai + 1;
                t->ap[ai] = (app){.key = j->user_id, .start = j->submit, .first_id = j->id};
            }
        } else {
            ai = nap++;
            t->ap[ai] = (app){.key = s, .start = j->submit, .first_id = j->id};
        }
        app *a = &t->ap[ai];
        if (j->submit < a->start) a->start = j->submit;
        if (j->id < a->first_id) a->first_id = j->id;
        double ideal = (double)gs_engine_job_ideal(e, j);
        a->sum_gi += ideal * j->gpus;
        if (ideal > a->max_i) a->max_i = ideal;
        if (bidding) {
            bidder *b = &t->bid[nb++];
            b->j = j;
            b->app = ai;
            b->best = best_rate(t, j);
            b->fin0 = (double)t->lease + remaining(t, j) / b->best;
            b->gtype = -1;
            b->holder = j->state == GS_JOB_RUNNING;
            b->ctype = b->holder ? held_type(t, j) : -1;
        } else if (j->state == GS_JOB_RUNNING) {
            double x = remaining(t, j) / held_rate(t, j);
            if (x > a->base) a->base = x;
        }
    }
    if (t->by_user)
        for (int32_t s = gs_jobq_first(src); s >= 0; s = gs_jobq_next(src, s))
            t->appof[gs_policy_job(e, (size_t)s)->user_id] = 0;
    if (nb == 0) return 0;
    double N = t->by_user ? nap : (double)nact; /* active apps */
    for (int i = 0; i < nap; i++) {
        app *a = &t->ap[i];
        a->tid = a->sum_gi * N / G;
        if (a->tid < a->max_i) a->tid = a->max_i;
        if (!(a->tid > 0)) a->tid = 1;
    }
    qsort(t->bid, (size_t)nb, sizeof *t->bid, cmp_bidder);
    for (int k = 0; k < nb; k++) {
        app *a = &t->ap[t->bid[k].app];
        if (!a->nb) a->b0 = k;
        a->nb++;
    }
    int napps = 0; /* apps with bidders, by rho (worst first) */
    for (int i = 0; i < nap; i++) {
        app *a = &t->ap[i];
        if (!a->nb) continue;
        a->rho0 = a->order = app_rho(t, a, NULL, -1);
        t->order[napps++] = i;
    }
    sort_apps(t->ap, t->order, t->order + nact, napps);
    t->auctions++;
    long Rtot = 0, demand = 0;
    for (int ty = 0; ty < nt; ty++) Rtot += R[ty];
    for (int k = 0; k < nb; k++) demand += t->bid[k].j->gpus;

    if (demand <= Rtot) {
        /* no contention: every bidder's best bid wins whole (c_i = 1), no LP needed either -
         * each takes its fastest type with room (an expired lease its own), worst rho first */
        for (int i = 0; i < napps; i++) t->ap[t->order[i]].inP = 0;
    } else if (t->lp) {
        rc = lp_decide(t, napps, R);
        if (rc) return rc;
    } else {
        /* ---- the fairness set P and its auctions, one GPU type at a time ---- */
        int np = (int)ceil((1 - t->f) * napps - 1e-9);
        if (np < 1) np = 1;
        if (np > napps) np = napps;
        while (np > 1 && ((size_t)np + 1) * ((size_t)Rtot + 1) > DP_BUDGET) np--;
        for (int i = 0; i < napps; i++) t->ap[t->order[i]].inP = i < np;
        int tord[MAX_TYPES], ntord;
        type_order(t, t->order, np, R, tord, &ntord);
        if ((rc = need((void **)&t->bids, &t->capbids, (size_t)np, sizeof *t->bids)) ||
            (rc = need((void **)&t->star, &t->capstar, (size_t)np, sizeof *t->star)) ||
            (rc = need((void **)&t->grant, &t->capgrant, (size_t)np, sizeof *t->grant)) ||
            (rc = need((void **)&t->pidx, &t->cappidx, (size_t)np, sizeof *t->pidx)) ||
            (rc = need((void **)&t->pay, &t->cappay, (size_t)np, sizeof *t->pay)) ||
            (rc = need((void **)&t->opts, &t->capopts, (size_t)np * (MAXOPT + 1), sizeof *t->opts)))
            return rc;
        for (int ti = 0; ti < ntord; ti++) {
            int ty = tord[ti];
            if (R[ty] <= 0) continue;
            int n = 0;
            for (int i = 0; i < np; i++) {
                app *a = &t->ap[t->order[i]];
                gs_themis_opt *o = t->opts + (size_t)i * (MAXOPT + 1);
                int no = 0;
                o[no++] = (gs_themis_opt){0, 1 / app_rho(t, a, NULL, ty)};
                int8_t *with = t->with;
                memset(with, 0, (size_t)a->nb);
                long cum = 0;
                for (int k = 0; k < a->nb && no <= MAXOPT; k++) {
                    const bidder *b = &t->bid[a->b0 + k];
                    if (b->gtype >= 0 || rate_on(t, b->j, ty) <= 0) continue;
                    if (cum + b->j->gpus > R[ty]) break;
                    cum += b->j->gpus;
                    with[k] = 1;
                    o[no++] = (gs_themis_opt){(int)cum, 1 / app_rho(t, a, with, ty)};
                }
                if (no < 2) continue;
                t->bids[n] = (gs_themis_bid){o, no};
                t->pidx[n++] = i;
            }
            if (!n) continue;
            rc = gs_themis_pa(t->bids, n, (int)R[ty], &t->ws, t->star, t->pay, t->grant, NULL);
            if (rc) return rc;
            for (int q = 0; q < n; q++) {
                int m = t->grant[q]; /* the number of its eligible bidders granted */
                app *a = &t->ap[t->order[t->pidx[q]]];
                for (int k = 0; k < a->nb && m > 0; k++) {
                    bidder *b = &t->bid[a->b0 + k];
                    if (b->gtype >= 0 || rate_on(t, b->j, ty) <= 0) continue;
                    b->gtype = ty;
                    R[ty] -= b->j->gpus;
                    m--;
                }
            }
        }
    }
    /* ---- leftovers: apps outside P (worst first), then those of P the payments cut (mode=lp:
     * those the LP left without a type) ---- */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < napps; i++) {
            app *a = &t->ap[t->order[i]];
            if (a->inP != pass) continue;
            for (int k = 0; k < a->nb; k++) {
                bidder *b = &t->bid[a->b0 + k];
                if (b->gtype >= 0 || b->gtype == GT_SPAN) continue;
                int ty = leftover_type(t, b, R);
                if (ty < 0 && b->holder && b->ctype < 0 && keeps_across(t, b, R)) continue;
                if (ty < 0) continue;
                b->gtype = ty;
                R[ty] -= b->j->gpus;
            }
        }

    /* ---- carry it out: expired leases first (renewed or ended), then the starts ---- */
    t->in_pass = 1;
    t->resv_on = 0;
    t->resv_job = NULL;
    /* the worst-off app's first waiting gang, if it cannot start now: nodes held for it */
    gs_job *head = NULL;
    if (t->reserve && napps && gs_engine_opts_get(e)->placement == GS_PLACE_CONSOLIDATE) {
        const app *a = &t->ap[t->order[0]];
        for (int k = 0; k < a->nb && !head; k++)
            if (t->bid[a->b0 + k].j->state == GS_JOB_PENDING) head = t->bid[a->b0 + k].j;
        if (head && head->gpus < 2) head = NULL;
    }
    if (head && !(rc = start_any(t, head)) && head->state == GS_JOB_PENDING)
        rc = reserve_for(t, head);
    for (int k = 0; k < nb && !rc; k++) {
        bidder *b = &t->bid[k];
        if (!b->holder || b->j->state != GS_JOB_RUNNING) continue;
        int held = 0;
        for (int q = 0; t->resv_on && q < b->j->nalloc; q++)
            held |= t->resv[gs_cluster_gpu(c, b->j->alloc[q])->node];
        if (((b->gtype >= 0 && b->gtype == b->ctype) || b->gtype == GT_SPAN) && !held) {
            rc = new_lease(t, b->j);
            b->gtype = -2; /* done */
            continue;
        }
        rc = drop_lease(t, b->j->slot);
        if (!rc)
            rc = gs_engine_preempt(
                e, b->j,
                held ? "lease expired: its node is held for a waiting gang (themis)"
                     : "lease expired: its GPUs went to others (themis auction)");
    }
    if (!rc && t->resv_on && (rc = start_any(t, head)) == 0 && head->state != GS_JOB_PENDING)
        t->resv_on = 0; /* the expired leases there made room */
    /* granted jobs in the order of the apps, then of their bids */
    for (int i = 0; i < napps && !rc; i++) {
        app *a = &t->ap[t->order[i]];
        for (int k = 0; k < a->nb && !rc; k++) {
            bidder *b = &t->bid[a->b0 + k];
            if (b->gtype < 0 || b->j->state != GS_JOB_PENDING) continue;
            rc = start_on(t, b->j, b->gtype);
            if (rc == GS_ENOFIT) rc = 0;
        }
    }
    /* work conservation on real placements: whoever still fits, in the leftover order */
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (int i = 0; i < napps && !rc && gs_cluster_free(c) > 0; i++) {
            app *a = &t->ap[t->order[i]];
            if (a->inP != pass) continue;
            for (int k = 0; k < a->nb && !rc; k++) {
                bidder *b = &t->bid[a->b0 + k];
                if (b->j->state != GS_JOB_PENDING || b->j->gpus > gs_cluster_free(c)) {
                    if (b->j->state == GS_JOB_PENDING) gs_engine_set_reason(e, b->j, "Resources");
                    continue;
                }
                rc = start_any(t, b->j);
                if (!rc && b->j->state == GS_JOB_PENDING)
                    gs_engine_set_reason(e, b->j, "Resources");
            }
        }
    t->in_pass = 0;
    t->resv_on = 0;
    return rc;
}

/* ---- hooks
 * ---------------------------------------------------------------------------------------- */

static int th_arrival(void *st, gs_job *j)
{
    themis *t = st;
    int rc = grow(t, j->slot);
    if (rc) return rc;
    if ((rc = gs_jobq_push_back(&t->act, j->slot))) return rc;
    if (j->state == GS_JOB_PENDING && (rc = gs_jobq_push_back(&t->bidq, j->slot))) {
        gs_jobq_remove(&t->act, j->slot); /* not known at all rather than half */
        return rc;
    }
    t->js[j->slot].active = 1;
    t->dirty = 1;
    return 0;
}

/* A running job adopted (daemon restart, reconfiguration): a fresh lease from now. */
static int th_adopt(void *st, gs_job *j)
{
    themis *t = st;
    int rc = th_arrival(st, j);
    return rc ? rc : new_lease(t, j);
}

static int th_requeue(void *st, gs_job *j)
{
    themis *t = st;
    if ((size_t)j->slot >= t->cap || !t->js[j->slot].active) return 0;
    int rc = drop_lease(t, j->slot);
    if (!t->in_pass) t->dirty = 1;
    if (gs_jobq_contains(&t->bidq, j->slot)) return rc;
    int rq = gs_jobq_push_back(&t->bidq, j->slot);
    if (rq) { /* forget it rather than know it half (policy.h, "Errors") */
        gs_jobq_remove(&t->act, j->slot);
        t->js[j->slot].active = 0;
    }
    return rc ? rc : rq;
}

static int th_finish(void *st, gs_job *j)
{
    themis *t = st;
    if ((size_t)j->slot >= t->cap || !t->js[j->slot].active) return 0;
    int rc = drop_lease(t, j->slot);
    t->js[j->slot].active = 0;
    gs_jobq_remove(&t->act, j->slot);
    if (gs_jobq_contains(&t->bidq, j->slot)) gs_jobq_remove(&t->bidq, j->slot);
    t->dirty = 1;
    return rc;
}

static int th_timer(void *st, uint64_t tag)
{
    themis *t = st;
    int32_t slot = (int32_t)(tag >> 32);
    if ((size_t)slot >= t->cap || t->js[slot].tgen != (uint32_t)tag) return 0; /* stale */
    gs_job *j = gs_policy_job(t->e, (size_t)slot);
    thj *s = &t->js[slot];
    gs_time now = gs_engine_now(t->e);
    if (j->state != GS_JOB_RUNNING || s->expired || s->lease_end == GS_TIME_NONE) return 0;
    if (j->protect_until > now) /* the engine's restart protection outlasts the lease */
        return gs_engine_set_timer(t->e, j->protect_until, tag);
    int rc = gs_jobq_contains(&t->bidq, slot) ? 0 : gs_jobq_push_back(&t->bidq, slot);
    if (rc) return rc;
    s->expired = 1;
    if (s->rearm) s->rearm = 0, t->nrearm--;
    t->nexpired++;
    t->dirty = 1;
    gs_engine_request_pass(t->e);
    return 0;
}

static int th_dirty(void *st, gs_job *j)
{
    (void)j;
    ((themis *)st)->dirty = 1;
    return 0;
}

static int th_node(void *st, int node, int down)
{
    (void)node, (void)down;
    ((themis *)st)->dirty = 1;
    return 0;
}

/* What it tracks is consistent (after a failed hook it need not know every job: policy.h). */
static int th_check(void *st, gs_diag *d)
{
    const themis *t = st;
    size_t nexp = 0, nact = 0, nlazy = 0, nrearm = 0;
    for (size_t s = 0; s < t->cap && s < gs_engine_njobs(t->e); s++) {
        const gs_job *j = gs_engine_job(t->e, s);
        const thj *x = &t->js[s];
        if (x->active != gs_jobq_contains(&t->act, (int32_t)s))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: job %lld active %d, listed %d",
                               (long long)j->id, x->active, gs_jobq_contains(&t->act, (int32_t)s));
        if (!x->active) continue;
        nact++;
        if (!j->arrived || gs_job_state_final(j->state))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: job %lld tracked but %s",
                               (long long)j->id, gs_job_state_name(j->state));
        if ((j->state == GS_JOB_PENDING || x->expired) && !gs_jobq_contains(&t->bidq, (int32_t)s))
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: job %lld bids but is not listed",
                               (long long)j->id);
        if (x->expired && j->state != GS_JOB_RUNNING)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: job %lld %s with an expired lease",
                               (long long)j->id, gs_job_state_name(j->state));
        nexp += x->expired;
        nrearm += x->rearm;
        if (x->cls >= 0) {
            nlazy++;
            if (j->state != GS_JOB_RUNNING || x->expired ||
                !gs_jobq_contains(&t->virtq, (int32_t)s) || t->real_mode)
                return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: job %lld: a lazy lease %s",
                                   (long long)j->id, gs_job_state_name(j->state));
        } else if (j->state == GS_JOB_RUNNING && x->lease_end == GS_TIME_NONE) {
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: job %lld runs without a lease",
                               (long long)j->id);
        }
    }
    if (nlazy != gs_jobq_len(&t->virtq) || nrearm != t->nrearm)
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: counts (lazy %zu/%zu, re-armed %zu/%zu)",
                           nlazy, gs_jobq_len(&t->virtq), nrearm, t->nrearm);
    for (int32_t s = gs_jobq_first(&t->bidq); s >= 0; s = gs_jobq_next(&t->bidq, s))
        if ((size_t)s >= t->cap || !t->js[s].active)
            return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: slot %d listed, not active", s);
    if (nexp != t->nexpired || nact != gs_jobq_len(&t->act))
        return gs_diag_set(d, GS_EINTERNAL, 0, 0, "themis: counts (expired %zu/%zu, active %zu)",
                           nexp, t->nexpired, nact);
    return 0;
}

static int th_qtext(void *st, int queue, char *buf, size_t cap)
{
    (void)st, (void)queue;
    snprintf(buf, cap,
             "in the queue (by submission; themis auctions GPUs by finish-time fairness)");
    return 0;
}

/* Keys: "auctions" (rounds so far), "lease.ID" (end of job ID's lease in seconds, "none"),
 * "expired.ID" (1 while its lease is over and its GPUs are on offer). */
static int th_inspect(void *st, const char *key, char *buf, size_t cap)
{
    const themis *t = st;
    if (!strcmp(key, "auctions")) {
        /* the rounds so far, with the uncontended renewals of the lazy leases up to now (once
         * per instant: a class's leases end together) */
        uint64_t na = t->auctions;
        gs_time now = gs_engine_now(t->e);
        for (size_t c = 0; c < t->ncls; c++) {
            const vclass *v = &t->cls[c];
            gs_time a = GS_TIME_MAX;
            for (int32_t s = v->n ? v->head : -1; s >= 0; s = t->js[s].cnext)
                if (t->js[s].lease_end <= now && t->js[s].lease_end < a) a = t->js[s].lease_end;
            if (a != GS_TIME_MAX) na += iv_new(t, v, a, a + (now - a) / t->lease * t->lease);
        }
        int n = snprintf(buf, cap, "%llu", (unsigned long long)na);
        return n < 0 || (size_t)n >= cap ? GS_ERANGE : 0;
    }
    const char *dot = strchr(key, '.');
    if (!dot) return GS_ENOENT;
    char *end;
    long long id = strtoll(dot + 1, &end, 10);
    if (*end || end == dot + 1) return GS_ENOENT;
    const gs_job *j = gs_engine_find_job(t->e, id);
    if (!j || (size_t)j->slot >= t->cap) return GS_ENOENT;
    const thj *x = &t->js[j->slot];
    gs_time le = x->lease_end, now = gs_engine_now(t->e);
    if (x->cls >= 0 && now >= le) le += ((now - le) / t->lease + 1) * t->lease; /* renewed */
    int n;
    if ((size_t)(dot - key) == 5 && !strncmp(key, "lease", 5))
        n = le == GS_TIME_NONE ? snprintf(buf, cap, "none")
                               : snprintf(buf, cap, "%.6f", (double)le / (double)GS_SEC);
    else if ((size_t)(dot - key) == 7 && !strncmp(key, "expired", 7))
        n = snprintf(buf, cap, "%d", x->expired);
    else
        return GS_ENOENT;
    return n < 0 || (size_t)n >= cap ? GS_ERANGE : 0;
}

static const gs_policy_ops gs_policy_themis = {
    .name = "themis",
    .summary =
        "Themis: finish-time fairness, partial-allocation auctions of GPU leases; preemptive",
    .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_ORACLE,
    .create = th_create,
    .destroy = th_destroy,
    .on_arrival = th_arrival,
    .on_adopt = th_adopt,
    .on_requeue = th_requeue,
    .on_finish = th_finish,
    .on_preemptible = th_dirty,
    .on_timer = th_timer,
    .on_node = th_node,
    .schedule = th_schedule,
    .check = th_check,
    .queue_describe = th_qtext,
    .inspect = th_inspect,
};

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_themis[] = {{140, &gs_policy_themis}, {0, NULL}};
