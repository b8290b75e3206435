/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_tiresias.c - least-attained-service scheduling with discretized
 * multi-level queues (Tiresias, NSDI'19; algorithms.md section 2):
 *
 *   las               1-D: attained service = executed time
 *   tiresias-las      2-D: attained service = GPUs x executed time (Tiresias-L)
 *   tiresias-gittins  2-D, and inside each queue jobs ordered by their Gittins
 *                     index over a GPU-time distribution (Tiresias-G)
 *
 * A job enters the top queue; while running it is demoted to the next queue
 * when its attained service reaches the queue's threshold (the instant is
 * computed analytically and set as an engine timer, no time stepping).
 * Queues are served in strict priority order, all jobs that fit by GPU count
 * run (no head-of-line blocking) and running jobs that no longer fit are
 * preempted (only if a start actually needs their GPUs: see plan.c).
 *
 * Order inside a queue (las variants) follows Tiresias: "FIFO by start
 * time": after every pass running jobs stand before waiting ones, each group
 * keeping its relative order; arrivals, promotions and demotions join at the
 * tail.  We keep each queue as three lists - running (R), pending (P) and
 * running jobs demoted at this instant (N) - walked R, P, N.  The running
 * list is skipped in O(1) while no waiting job has been admitted before it
 * (all running jobs fit by count then), so a pass costs the jobs it has to
 * look at, not the queue length.
 *
 * Tiresias-G orders each queue by Gittins index instead.  A waiting job's
 * index is constant (its attained service does not grow), so each queue's
 * waiting jobs sit in a kset (gsched/plan.h) keyed once, when they join P; only
 * running jobs are re-keyed at a pass (at most one per GPU), sorted from the
 * last pass's order kept in R, and merged with the waiting jobs that can be
 * admitted: a pass never looks at a waiting job that cannot start.
 *
 * Starvation knob (promote_knob=K > 0): a job that has run and then waited
 * K times its executed time (both counted since its last promotion) goes
 * back to the top queue with both counters reset.
 *
 * Parameters: queues=T1,T2,... thresholds (GPU-seconds; seconds for las),
 * default 3600 (two queues: the paper's default of K=2 and the artifact
 * README's 3600 GPU-s); promote_knob=K (default 0 = off);
 * gittins_samples=FILE (tiresias-gittins: one GPU-time per line, optional
 * header; default: Tiresias' bundled yarn-gput1000.csv, compiled in).
 *
 * Queue view (daemon POS, "why pending"): one queue by submission, which the
 * policy reorders by attained service; the text says so.  Rank (dry run): the
 * order of a pass (tir_rank).
 *
 * Invariants: every active job is in exactly one list of exactly one queue;
 * rsum[q] = GPUs of RUNNING jobs in R[q]; psize[q] counts P[q] by size;
 * tiresias-gittins: the kset set q.pk holds exactly P[q], keyed when it joined.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/jobq.h"
#include "gsched/policy.h"
#include "gsched/plan.h"

enum variant { V_LAS, V_TLAS, V_GITTINS };

typedef struct sizecount {
    int32_t size, count;
} sizecount;

typedef struct mlq {
    gs_jobq r, p, n;
    int32_t pk; /* tiresias-gittins: root of P in the kset (Gittins order) */
    int64_t rsum;
    sizecount *sc; /* pending jobs by size, ascending */
    size_t nsc, capsc;
} mlq;

typedef struct tir {
    gs_engine *e;
    enum variant v;
    int nq;
    int64_t *hi; /* thresholds in service units (us or GPU-us); nq-1 entries */
    double knob;
    mlq *q;
    /* per job, by slot */
    int8_t *qid;    /* -1: not tracked */
    int8_t *where;  /* 'R', 'P', 'N' */
    int8_t *inr;    /* counted in its queue's rsum */
    int64_t *ebase; /* executed (us) at the last promotion */
    int64_t *qbase; /* queued (us) at the last promotion / first start */
    uint32_t *tgen; /* timer generation */
    size_t cap;
    gs_plan plan;
    /* gittins */
    double *gs, *gp; /* sorted samples (GPU-s) and prefix sums (n+1) */
    size_t ngs;
    size_t *hidx; /* per queue: where its threshold falls among the samples */
    size_t *glo;  /* per job: where its attained service fell at its last key */
    gs_kset ks;   /* waiting jobs of every queue in Gittins order (roots: mlq.pk) */
    gs_kent *kv;  /* scratch: one queue's running jobs with their keys */
    size_t capkv;
    int dirty;
    int in_apply; /* preemptions inside our own pass are settled by settle() */
} tir;

/* ---- per-job arrays -------------------------------------------------------------- */

static int grow(tir *t, int32_t slot)
{
    if ((size_t)slot < t->cap) return 0;
    size_t nc = t->cap ? t->cap : 1024;
    while (nc <= (size_t)slot) nc *= 2;
#define G(arr)                                           \
    do {                                                 \
        void *np = realloc(t->arr, nc * sizeof *t->arr); \
        if (!np) return GS_ENOMEM;                       \
        t->arr = np;                                     \
    } while (0)
    G(qid);
    G(where);
    G(inr);
    G(ebase);
    G(qbase);
    G(tgen);
    G(glo);
#undef G
    for (size_t i = t->cap; i < nc; i++) {
        t->qid[i] = -1;
        t->where[i] = 0;
        t->inr[i] = 0;
        t->ebase[i] = t->qbase[i] = 0;
        t->tgen[i] = 0;
        t->glo[i] = 0;
    }
    t->cap = nc;
    return 0;
}

/* ---- pending size histogram --------------------------------------------------------- */

static int sc_add(mlq *q, int32_t size, int d)
{
    size_t i = 0;
    while (i < q->nsc && q->sc[i].size < size) i++;
    if (i < q->nsc && q->sc[i].size == size) {
        q->sc[i].count += d;
        if (!q->sc[i].count) {
            memmove(&q->sc[i], &q->sc[i + 1], (q->nsc - i - 1) * sizeof *q->sc);
            q->nsc--;
        }
        return 0;
    }
    if (d <= 0) return 0;
    if (q->nsc == q->capsc) {
        size_t nc = q->capsc ? q->capsc * 2 : 8;
        sizecount *ns = realloc(q->sc, nc * sizeof *ns);
        if (!ns) return GS_ENOMEM;
        q->sc = ns;
        q->capsc = nc;
    }
    memmove(&q->sc[i + 1], &q->sc[i], (q->nsc - i) * sizeof *q->sc);
    q->sc[i] = (sizecount){size, d};
    q->nsc++;
    return 0;
}

static int32_t min_pending(const mlq *q)
{
    return q->nsc ? q->sc[0].size : INT32_MAX;
}

/* ---- list moves ----------------------------------------------------------------------- */

static void unlink_job(tir *t, gs_job *j)
{
    int q = t->qid[j->slot];
    if (q < 0) return;
    mlq *m = &t->q[q];
    switch (t->where[j->slot]) {
    case 'R':
        gs_jobq_remove(&m->r, j->slot);
        if (t->inr[j->slot]) m->rsum -= j->gpus;
        t->inr[j->slot] = 0;
        break;
    case 'P':
        gs_jobq_remove(&m->p, j->slot);
        sc_add(m, j->gpus, -1);
        gs_kset_remove(&t->ks, &m->pk, j->slot);
        break;
    case 'N': gs_jobq_remove(&m->n, j->slot); break;
    }
    t->where[j->slot] = 0;
    t->qid[j->slot] = -1;
}

static int p_keyed(tir *t, gs_job *j, int q);

/* Out of memory: GS_ENOMEM, and j is on no list (unlink_job is a no-op for it). */
static int to_list(tir *t, gs_job *j, int q, char where, int front)
{
    mlq *m = &t->q[q];
    gs_jobq *l = where == 'R' ? &m->r : where == 'P' ? &m->p : &m->n;
    int rc = front ? gs_jobq_push_front(l, j->slot) : gs_jobq_push_back(l, j->slot);
    if (rc) return rc;
    t->qid[j->slot] = (int8_t)q; /* before p_keyed: the key depends on the queue */
    t->where[j->slot] = where;
    if (where == 'P' && (rc = sc_add(m, j->gpus, +1)) != 0) {
        gs_jobq_remove(l, j->slot);
        t->where[j->slot] = 0;
        t->qid[j->slot] = -1;
        return rc;
    }
    if (where == 'P' && (rc = p_keyed(t, j, q)) != 0) {
        unlink_job(t, j);
        return rc;
    }
    if (where == 'R' && j->state == GS_JOB_RUNNING) {
        m->rsum += j->gpus;
        t->inr[j->slot] = 1;
    }
    return 0;
}

/* ---- service accounting ----------------------------------------------------------------- */

/* attained service for queueing: us (las) or GPU-us, since the last promotion */
static int64_t attained(const tir *t, const gs_job *j, gs_time now)
{
    /* a job not tracked (a dry run's, slot -1) has had no promotion */
    int64_t base = j->slot >= 0 && (size_t)j->slot < t->cap ? t->ebase[j->slot] : 0;
    int64_t ex = gs_job_executed(j, now) - base;
    if (t->v == V_LAS) return ex;
    /* GPU-microseconds: saturate rather than overflow for huge jobs */
    return ex > INT64_MAX / j->gpus ? INT64_MAX : ex * j->gpus;
}

static uint64_t tag_of(tir *t, const gs_job *j)
{
    return ((uint64_t)(uint32_t)j->slot << 32) | t->tgen[j->slot];
}

/* Running job: timer at the instant its service reaches its queue's threshold. */
static int arm_demotion(tir *t, gs_job *j)
{
    int q = t->qid[j->slot];
    t->tgen[j->slot]++;
    if (q < 0 || q >= t->nq - 1 || j->state != GS_JOB_RUNNING) return 0;
    gs_time now = gs_engine_now(t->e);
    int64_t left = t->hi[q] - attained(t, j, now);
    int64_t rate = t->v == V_LAS ? 1 : j->gpus;
    gs_time at = now + (left <= 0 ? 0 : (left + rate - 1) / rate);
    return gs_engine_set_timer(t->e, at, tag_of(t, j));
}

/* Pending job in a lower queue: timer at the instant the knob promotes it. */
static int arm_promotion(tir *t, gs_job *j)
{
    int q = t->qid[j->slot];
    t->tgen[j->slot]++;
    if (t->knob <= 0 || q <= 0 || j->state != GS_JOB_PENDING || j->first_start == GS_TIME_NONE)
        return 0;
    gs_time now = gs_engine_now(t->e);
    int64_t ex = gs_job_executed(j, now) - t->ebase[j->slot];
    if (ex <= 0) return 0;
    int64_t waited = gs_job_queued(j, now) - t->qbase[j->slot];
    double need = t->knob * (double)ex - (double)waited;
    if (need >= (double)(GS_TIME_MAX - now)) return 0; /* never within the clock's range */
    gs_time at = now + (need <= 0 ? 0 : (gs_time)ceil(need));
    return gs_engine_set_timer(t->e, at, tag_of(t, j));
}

/* ---- Gittins index ------------------------------------------------------------------------- */

static size_t upper_bound(const double *v, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* upper_bound(v, n, x) looked for next to h first: exact whatever h is, O(1)
 * when x moved little since h was found (attained service grows slowly) */
static size_t upper_bound_near(const double *v, size_t n, double x, size_t h)
{
    if (h > n) h = n;
    if (h > 0 && v[h - 1] > x) { /* the answer is below h */
        if (h >= 2 && v[h - 2] <= x) return h - 1;
        return upper_bound(v, h - 1, x);
    }
    if (h == n || v[h] > x) return h;
    if (h + 1 == n || v[h + 1] > x) return h + 1;
    return h + 2 + upper_bound(v + h + 2, n - h - 2, x);
}

/*
 * G(a, D) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a] with D the
 * service left before the job leaves its queue (infinite in the last queue).
 * Hints (exactness never depends on them): *lo_hint where a was last time,
 * updated; hi_hint where a + D usually falls (the queue's threshold).
 */
static double gittins(const tir *t, double a, double delta, size_t *lo_hint, size_t hi_hint)
{
    size_t lo = upper_bound_near(t->gs, t->ngs, a, *lo_hint);
    *lo_hint = lo;
    size_t alive = t->ngs - lo;
    if (!alive) return 0;
    size_t hi = isinf(delta) ? t->ngs : upper_bound_near(t->gs, t->ngs, a + delta, hi_hint);
    size_t fin = hi - lo;
    double sum = (t->gp[hi] - t->gp[lo]) - a * (double)fin;
    if (!isinf(delta)) sum += delta * (double)(alive - fin);
    return sum > 0 ? (double)fin / sum : 0;
}

/* The index of a job in queue q with attained service att (GPU-us); *lo_hint as gittins(). */
static double gindex(const tir *t, int q, int64_t att, size_t *lo_hint)
{
    double a = (double)att / 1e6; /* GPU-seconds */
    double delta = q < t->nq - 1 ? (double)t->hi[q] / 1e6 - a : INFINITY;
    if (delta < 0) delta = 0;
    return gittins(t, a, delta, lo_hint, q < t->nq - 1 ? t->hidx[q] : t->ngs);
}

static double gkey(tir *t, const gs_job *j, gs_time now)
{
    return gindex(t, t->qid[j->slot], attained(t, j, now), &t->glo[j->slot]);
}

/* Gittins order inside a queue: index descending, then submit, then slot. */
static gs_kkey gorder(tir *t, const gs_job *j, gs_time now)
{
    return (gs_kkey){-gkey(t, j, now), j->submit, j->slot};
}

/* j joined P[q]: a waiting job's index cannot change while it waits (its
 * attained service does not grow), so it is computed once, here. */
static int p_keyed(tir *t, gs_job *j, int q)
{
    if (t->v != V_GITTINS) return 0;
    return gs_kset_insert(&t->ks, &t->q[q].pk, gorder(t, j, gs_engine_now(t->e)), j->gpus);
}

static int cmp_sample(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_samples(tir *t, const char *buf, const char *src, gs_diag *d)
{
    if (d) d->file = src; /* src outlives the diag: a parameter value or a literal */
    size_t cap = 1024, n = 0;
    double *v = malloc(cap * sizeof *v);
    if (!v) return GS_ENOMEM;
    int line = 0;
    const char *p = buf;
    while (*p) {
        line++;
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char tmp[128];
        if (len >= sizeof tmp) {
            free(v);
            return gs_diag_set(d, GS_EPARSE, line, 1, "line longer than %zu bytes", sizeof tmp - 1);
        }
        memcpy(tmp, p, len);
        tmp[len] = '\0';
        char *s = tmp;
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        char *end;
        double x = strtod(s, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r') end++;
        if (*s && end != s && !*end) {
            if (!(x > 0) || !isfinite(x)) {
                free(v);
                return gs_diag_set(d, GS_EINVAL, line, 1,
                                   "GPU-time samples must be positive numbers");
            }
            if (n == cap) {
                cap *= 2;
                double *nv = realloc(v, cap * sizeof *nv);
                if (!nv) {
                    free(v);
                    return GS_ENOMEM;
                }
                v = nv;
            }
            v[n++] = x;
        } else if (*s && !(line == 1 && end == s)) { /* a header line is allowed */
            free(v);
            return gs_diag_set(d, GS_EPARSE, line, 1, "expected a number of GPU-seconds, got '%s'",
                               s);
        }
        if (!e) break;
        p = e + 1;
    }
    if (n < 2) {
        free(v);
        return gs_diag_set(d, GS_EINVAL, 0, 0, "need at least 2 GPU-time samples");
    }
    /* qsort: a samples file may hold millions of lines (insertion sort took hours) */
    qsort(v, n, sizeof *v, cmp_sample);
    t->gp = malloc((n + 1) * sizeof *t->gp);
    if (!t->gp) {
        free(v);
        return GS_ENOMEM;
    }
    t->gp[0] = 0;
    for (size_t i = 0; i < n; i++) t->gp[i + 1] = t->gp[i] + v[i];
    t->gs = v;
    t->ngs = n;
    return 0;
}

extern const char gs_yarn_gput1000_csv[];

/* ---- lifecycle ------------------------------------------------------------------------------- */

static void tir_destroy(void *st)
{
    tir *t = st;
    if (!t) return;
    for (int i = 0; i < t->nq && t->q; i++) {
        gs_jobq_release(&t->q[i].r);
        gs_jobq_release(&t->q[i].p);
        gs_jobq_release(&t->q[i].n);
        free(t->q[i].sc);
    }
    free(t->q);
    free(t->hi);
    free(t->qid);
    free(t->where);
    free(t->inr);
    free(t->ebase);
    free(t->qbase);
    free(t->tgen);
    free(t->gs);
    free(t->gp);
    free(t->hidx);
    free(t->glo);
    free(t->kv);
    gs_kset_release(&t->ks);
    gs_plan_release(&t->plan);
    free(t);
}

/* Largest queue threshold (seconds): keeps thresholds in microseconds far from overflow. */
#define QUEUE_MAX_S 1e12

static int tir_create_v(gs_engine *e, gs_params *p, void **state, gs_diag *d, enum variant v)
{
    tir *t = calloc(1, sizeof *t);
    if (!t) return GS_ENOMEM;
    t->e = e;
    t->v = v;
    gs_plan_init(&t->plan);
    gs_kset_init(&t->ks);
    double *th = NULL;
    size_t nth = 0;
    int rc = gs_params_get_double_list(p, "queues", &th, &nth, d);
    if (!rc && !th) {
        th = malloc(sizeof *th);
        if (!th)
            rc = GS_ENOMEM;
        else
            th[0] = 3600, nth = 1;
    }
    if (!rc && nth > 32)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0, "parameter 'queues': at most 32 thresholds");
    if (!rc) {
        t->nq = (int)nth + 1;
        t->hi = malloc(nth * sizeof *t->hi);
        t->q = calloc((size_t)t->nq, sizeof *t->q);
        if (!t->hi || !t->q) rc = GS_ENOMEM;
        for (size_t i = 0; !rc && i < nth; i++) {
            if (!(th[i] > 0) || (i && th[i] <= th[i - 1]) || th[i] > QUEUE_MAX_S)
                rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                                 "parameter 'queues': thresholds must be positive, increasing and "
                                 "at most %.0e seconds",
                                 QUEUE_MAX_S);
            else
                t->hi[i] = (int64_t)llround(th[i] * 1e6);
        }
        for (int i = 0; !rc && i < t->nq; i++) {
            gs_jobq_init(&t->q[i].r);
            gs_jobq_init(&t->q[i].p);
            gs_jobq_init(&t->q[i].n);
            t->q[i].pk = -1;
        }
    }
    free(th);
    if (!rc) rc = gs_params_get_double(p, "promote_knob", 0, 0, 1e9, &t->knob, d);
    if (!rc && v == V_GITTINS) {
        const char *f = gs_params_get(p, "gittins_samples");
        if (f) {
            char *buf;
            size_t len;
            rc = gs_engine_read_file(e, f, &buf, &len, d);
            if (!rc) {
                rc = parse_samples(t, buf, f, d);
                free(buf);
            }
        } else {
            rc = parse_samples(t, gs_yarn_gput1000_csv, "yarn-gput1000.csv", d);
        }
    }
    if (!rc && v == V_GITTINS) {
        t->hidx = malloc((size_t)t->nq * sizeof *t->hidx);
        if (!t->hidx) rc = GS_ENOMEM;
        for (int i = 0; !rc && i < t->nq - 1; i++)
            t->hidx[i] = upper_bound(t->gs, t->ngs, (double)t->hi[i] / 1e6);
    }
    if (rc) {
        tir_destroy(t);
        return rc;
    }
    *state = t;
    return 0;
}

static int las_create(gs_engine *e, gs_params *p, void **s, gs_diag *d)
{
    return tir_create_v(e, p, s, d, V_LAS);
}
static int tlas_create(gs_engine *e, gs_params *p, void **s, gs_diag *d)
{
    return tir_create_v(e, p, s, d, V_TLAS);
}
static int tgit_create(gs_engine *e, gs_params *p, void **s, gs_diag *d)
{
    return tir_create_v(e, p, s, d, V_GITTINS);
}

/* ---- hooks ------------------------------------------------------------------------------------
 */

static int tir_arrival(void *st, gs_job *j)
{
    tir *t = st;
    int rc = grow(t, j->slot);
    if (rc) return rc;
    t->ebase[j->slot] = 0;
    t->qbase[j->slot] = 0;
    t->dirty = 1;
    return to_list(t, j, 0, 'P', 0);
}

/* A running job adopted after a daemon restart: queue by its attained service. */
static int tir_adopt(void *st, gs_job *j)
{
    tir *t = st;
    int rc = grow(t, j->slot);
    if (rc) return rc;
    t->ebase[j->slot] = 0;
    t->qbase[j->slot] = j->queued;
    int64_t a = attained(t, j, gs_engine_now(t->e));
    int q = 0;
    while (q < t->nq - 1 && a >= t->hi[q]) q++;
    t->dirty = 1;
    if ((rc = to_list(t, j, q, 'R', 0)) != 0) return rc;
    return arm_demotion(t, j);
}

static int tir_requeue(void *st, gs_job *j)
{
    /* a node failure (SIM) or a finished stop (LIVE): waiting again, ahead of
     * the jobs that were already waiting in its queue, as after a preemption;
     * preemptions inside our own pass are settled by settle() */
    tir *t = st;
    if (t->in_apply) return 0;
    int rc = grow(t, j->slot);
    if (rc) return rc;
    int q = t->qid[j->slot];
    if (q < 0) q = 0;
    unlink_job(t, j);
    t->dirty = 1;
    if ((rc = to_list(t, j, q, 'P', 1)) != 0) return rc;
    return arm_promotion(t, j);
}

static int tir_preemptible(void *st, gs_job *j)
{
    (void)j;
    ((tir *)st)->dirty = 1;
    return 0;
}

static int tir_node(void *st, int node, int down)
{
    (void)node, (void)down;
    ((tir *)st)->dirty = 1;
    return 0;
}

static int tir_finish(void *st, gs_job *j)
{
    tir *t = st;
    if ((size_t)j->slot >= t->cap) return 0;
    unlink_job(t, j);
    t->tgen[j->slot]++;
    t->dirty = 1;
    return 0;
}

static int tir_timer(void *st, uint64_t tag)
{
    tir *t = st;
    int32_t slot = (int32_t)(tag >> 32);
    if ((size_t)slot >= t->cap || t->tgen[slot] != (uint32_t)tag) return 0; /* stale */
    gs_job *j = gs_policy_job(t->e, (size_t)slot);
    int q = t->qid[slot];
    gs_time now = gs_engine_now(t->e);
    if (j->state == GS_JOB_RUNNING && q >= 0 && q < t->nq - 1 && attained(t, j, now) >= t->hi[q]) {
        unlink_job(t, j); /* demote: to the tail of the next queue, walked after its waiters */
        t->dirty = 1;
        int rc = to_list(t, j, q + 1, 'N', 0);
        return rc ? rc : arm_demotion(t, j);
    } else if (j->state == GS_JOB_PENDING && q > 0 && t->knob > 0) {
        unlink_job(t, j); /* promote: counters reset, to the tail of the top queue */
        t->ebase[slot] = gs_job_executed(j, now);
        t->qbase[slot] = gs_job_queued(j, now);
        int rc = to_list(t, j, 0, 'P', 0);
        if (rc) return rc;
        t->tgen[slot]++;
        gs_engine_note(t->e, j, "promoted to the top queue (starvation knob)");
        t->dirty = 1;
    }
    return 0;
}

/* ---- the pass ------------------------------------------------------------------------------- */

static void walk_list(tir *t, gs_jobq *l)
{
    for (int32_t s = gs_jobq_first(l); s >= 0; s = gs_jobq_next(l, s))
        gs_plan_visit(&t->plan, gs_policy_job(t->e, (size_t)s));
}

static void walk_pending(tir *t, mlq *m)
{
    for (int32_t s = gs_jobq_first(&m->p); s >= 0 && t->plan.free >= min_pending(m);
         s = gs_jobq_next(&m->p, s))
        gs_plan_visit(&t->plan, gs_policy_job(t->e, (size_t)s));
}

/* One queue in Gittins order: its running jobs keyed now, merged with its
 * waiting jobs (keyed when they began waiting) that can be admitted. */
static int walk_gittins(tir *t, mlq *m, gs_time now, int pending_only)
{
    size_t k = 0;
    if (!pending_only) {
        size_t n = gs_jobq_len(&m->r) + gs_jobq_len(&m->n);
        if (n > t->capkv) {
            size_t nc = t->capkv ? t->capkv : 256;
            while (nc < n) nc *= 2;
            gs_kent *nv = realloc(t->kv, nc * sizeof *nv);
            if (!nv) return GS_ENOMEM;
            t->kv = nv;
            t->capkv = nc;
        }
        gs_jobq *lists[2] = {&m->r, &m->n};
        for (int l = 0; l < 2; l++)
            for (int32_t s = gs_jobq_first(lists[l]); s >= 0; s = gs_jobq_next(lists[l], s)) {
                gs_job *j = gs_policy_job(t->e, (size_t)s);
                t->kv[k++] = (gs_kent){gorder(t, j, now), j};
            }
        /* R's order means nothing here: keep it sorted so the next pass finds it nearly so */
        if (gs_kent_sort(t->kv, k)) {
            int rc = gs_kent_relink(&m->r, t->kv, k);
            if (rc) return rc;
        }
    }
    gs_plan_visit_merged(&t->plan, t->e, t->kv, k, &t->ks, m->pk);
    return 0;
}

/*
 * After the pass, restore Tiresias' order: in each queue running jobs first,
 * then waiting ones, each group in its previous order.  Only the jobs the
 * pass touched move: victims that were preempted go to the front of their
 * queue's waiting list (in walk order), admitted jobs that started go to the
 * tail of the running list, and this instant's demoted jobs follow them.
 */
static int settle(tir *t)
{
    int rc = 0;
    gs_plan *pl = &t->plan;
    /* victims, in walk order (apply reversed the array); per queue, the first
     * one goes to the front of P, each next one right after the previous */
    int32_t *lastpre = NULL;
    if (pl->nvict) {
        lastpre = malloc((size_t)t->nq * sizeof *lastpre);
        if (!lastpre) return GS_ENOMEM;
        for (int q = 0; q < t->nq; q++) lastpre[q] = -1;
    }
    for (size_t i = pl->nvict; i-- > 0;) {
        gs_job *j = pl->vict[i];
        int32_t s = j->slot;
        int q = t->qid[s];
        if (q < 0) continue;
        mlq *m = &t->q[q];
        if (j->state == GS_JOB_PREEMPTED && t->inr[s]) { /* LIVE: stopping, still in R */
            m->rsum -= j->gpus;
            t->inr[s] = 0;
            continue;
        }
        if (j->state != GS_JOB_PENDING || t->where[s] != 'R') continue;
        unlink_job(t, j);
        if (lastpre[q] < 0)
            rc = gs_jobq_push_front(&m->p, s);
        else if (gs_jobq_next(&m->p, lastpre[q]) >= 0)
            rc = gs_jobq_insert_before(&m->p, gs_jobq_next(&m->p, lastpre[q]), s);
        else
            rc = gs_jobq_push_back(&m->p, s);
        if (rc) break;
        t->qid[s] = (int8_t)q;
        t->where[s] = 'P';
        if ((rc = sc_add(m, j->gpus, +1)) != 0 || (rc = p_keyed(t, j, q)) != 0) break;
        lastpre[q] = s;
        if ((rc = arm_promotion(t, j)) != 0) break;
    }
    free(lastpre);
    if (rc) return rc;
    /* admitted jobs that started: tail of R, in walk order */
    for (size_t i = 0; i < pl->nstart; i++) {
        gs_job *j = pl->start[i];
        int32_t s = j->slot;
        int q = t->qid[s];
        if (q < 0 || t->where[s] != 'P') continue;
        if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PREEMPTED) continue;
        unlink_job(t, j);
        if ((rc = to_list(t, j, q, 'R', 0)) != 0) return rc;
        if (j->restarts == 0 && j->first_start == gs_engine_now(t->e))
            t->qbase[s] = j->queued; /* waiting before the first run does not count */
        if ((rc = arm_demotion(t, j)) != 0) return rc;
    }
    /* this instant's demoted jobs: still running -> tail of R, preempted -> tail of P */
    for (int q = 0; q < t->nq; q++) {
        mlq *m = &t->q[q];
        while (gs_jobq_first(&m->n) >= 0) {
            int32_t s = gs_jobq_first(&m->n);
            gs_job *j = gs_policy_job(t->e, (size_t)s);
            unlink_job(t, j);
            if ((rc = to_list(t, j, q, j->state == GS_JOB_PENDING ? 'P' : 'R', 0)) != 0) return rc;
            if (j->state == GS_JOB_PENDING && (rc = arm_promotion(t, j)) != 0) return rc;
        }
    }
    return 0;
}

static int tir_schedule(void *st)
{
    tir *t = st;
    if (!t->dirty) return 0;
    t->dirty = 0;
    gs_time now = gs_engine_now(t->e);
    gs_plan_begin(&t->plan, t->e);
    /* Fast path: when every waiting job fits the free GPUs by count, the
     * target set is everyone, so running jobs need not be looked at. */
    int fast = gs_engine_pending_gpus(t->e) <= gs_cluster_free(gs_engine_cluster(t->e));
    for (int q = 0; q < t->nq; q++) {
        mlq *m = &t->q[q];
        if (t->v == V_GITTINS) {
            int rc = walk_gittins(t, m, now, fast);
            if (rc) return rc;
            continue;
        }
        if (fast) {
            walk_pending(t, m);
            continue;
        }
        if (!t->plan.admitted)
            t->plan.free -= m->rsum; /* all of them fit: nothing admitted ahead of them */
        else
            walk_list(t, &m->r);
        walk_pending(t, m);
        walk_list(t, &m->n);
    }
    t->in_apply = 1;
    int rc = gs_plan_apply(&t->plan, t->e, GS_LOCALITY_STRICT, "lower priority (attained service)");
    t->in_apply = 0;
    return rc < 0 ? rc : settle(t);
}

/* ---- queue view (daemon): one queue by submission, which a pass reorders ---- */

static int tir_qtext(void *st, int queue, char *buf, size_t cap)
{
    const tir *t = st;
    (void)queue;
    snprintf(buf, cap, "in the queue (by submission; %s reorders it by %s)",
             gs_engine_policy_name(t->e),
             t->v == V_GITTINS ? "attained service (Gittins index)" : "attained service");
    return 0;
}

/*
 * The dry run's rank: a pass's order.  Queues first (a new job joins the top
 * one); inside a queue, las variants walk running jobs (R), then waiting ones
 * (P), then this instant's demoted ones (N), each list in its own order (here:
 * by id); tiresias-gittins by Gittins index now (then by id, as submit, slot).
 */
static int tir_rank(void *st, const gs_job *j, gs_queue_key *k)
{
    const tir *t = st;
    int held = j->slot >= 0 && (size_t)j->slot < t->cap && t->qid[j->slot] >= 0;
    int q = held ? t->qid[j->slot] : 0;
    k->queue = q;
    if (t->v == V_GITTINS) {
        size_t hint = held ? t->glo[j->slot] : 0; /* a copy: the rank changes nothing */
        k->key = gs_kkey_k1_rank(-gindex(t, q, attained(t, j, gs_engine_now(t->e)), &hint));
    } else {
        char w = held ? t->where[j->slot] : 'P';
        k->key = w == 'R' ? 0 : w == 'P' ? 1 : 2;
    }
    return 0;
}

#define TIRESIAS_OPS(var, nm, createfn, sum)             \
    static const gs_policy_ops var = {                   \
        .name = nm,                                      \
        .summary = sum,                                  \
        .flags = GS_POLICY_PREEMPTIVE | GS_POLICY_RIGID, \
        .create = createfn,                              \
        .destroy = tir_destroy,                          \
        .on_arrival = tir_arrival,                       \
        .on_adopt = tir_adopt,                           \
        .on_requeue = tir_requeue,                       \
        .on_finish = tir_finish,                         \
        .on_withdraw = tir_finish,                       \
        .on_preemptible = tir_preemptible,               \
        .on_timer = tir_timer,                           \
        .on_node = tir_node,                             \
        .schedule = tir_schedule,                        \
        .queue_describe = tir_qtext,                     \
        .rank = tir_rank,                                \
    }

TIRESIAS_OPS(gs_policy_las, "las", las_create,
             "least attained service (executed time), discretized queues; preemptive");
TIRESIAS_OPS(gs_policy_tiresias_las, "tiresias-las", tlas_create,
             "Tiresias-L: 2-D attained service (GPUs x time), multi-level queues; preemptive");
TIRESIAS_OPS(gs_policy_tiresias_gittins, "tiresias-gittins", tgit_create,
             "Tiresias-G: 2-D Gittins index over a GPU-time distribution; preemptive");

/* The registry's entry for this file (gsched/policy.h: order in the listing, table). */
const gs_policy_entry gs_policy_file_tiresias[] = {{30, &gs_policy_las},
                                                   {31, &gs_policy_tiresias_las},
                                                   {32, &gs_policy_tiresias_gittins},
                                                   {0, NULL}};
