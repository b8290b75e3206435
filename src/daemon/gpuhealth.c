/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpuhealth.c - the GPU health watch (docs/daemon.md "GPU health").
 *
 * A thread of its own (the watch) owns an NVML session (nvml.c) and, every
 * --gpu-health-interval, reads every GPU and judges it (gsd_gpuh_judge: lost,
 * uncorrected ECC errors since its last healthy reading, pages pending
 * retirement, row remapping pending or failed, a critical Xid within
 * --gpu-xid-hold), publishes the verdicts under its mutex and wakes the
 * scheduler loop.  NVML is never called from the scheduler thread, so a slow
 * driver delays only the watch.
 *
 * The scheduler thread (gsd_gpuh_cycle, at the start of a cycle) takes the
 * newest verdicts and, for each GPU whose verdict differs from what the
 * engine was told: writes the node event (gpu_bad / gpu_good, in the cycle's
 * transaction), marks the GPU in the engine (gs_engine_set_gpu_bad: nothing
 * new is placed on it; it returns to service when healthy again and no other
 * reason holds), and with --on-gpu-fault requeue preempts the running job
 * holding it (gs_engine_preempt: SIGTERM, grace, requeued from its
 * checkpoint; acted on after the commit like every stop), and stops and requeues
 * the SUSPENDED jobs that left it and can resume only there (stop_stranded:
 * SIGSTOP time-slicing or no GPU remapping; GSD_STOP_GPU_FAULT).
 *
 * Invariants: only the watch thread calls NVML and touches 'mine'; 'pub' and
 * 'gen' are read and written under 'mu' only; the scheduler thread keeps its
 * own copy (gsd_sched.ghv) and is the only one to call the engine.  NVML's
 * index i is local GPU i of the watched node (the node named like this
 * machine, or --gpu-health-node), the order in which tasks see GPUs with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID.  A failed write of the node event leaves the
 * engine untold (retried at the next cycle).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuhealth.h"
#include "gsd_sched.h"
#include "nvml.h"

/* ---- the rules ------------------------------------------------------------------------------ */

static void addf(char *why, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void addf(char *why, size_t cap, const char *fmt, ...)
{
    size_t l = strlen(why);
    if (l + 3 >= cap) return;
    if (l) {
        memcpy(why + l, "; ", 3);
        l += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + l, cap - l, fmt, ap);
    va_end(ap);
}

int gsd_gpuh_judge(gsd_gpuh_gpu *t, const gsd_gpu_reading *r, gs_time now, gs_time hold)
{
    t->r = *r;
    t->readings++;
    t->xid_total += r->nxid;
    if (r->nxid) t->xid_seen = r->xid_last;
    if (r->xid_crit) {
        t->xid_until = now + hold;
        t->xid_code = r->xid_crit;
    }
    /* what this reading says alone (lost, retirement, remapping), the Xid left to its hold */
    gsd_gpu_reading now_r = *r;
    now_r.xid_crit = 0;
    char why[sizeof t->why];
    int bad = gsd_gpu_reading_bad(&now_r, why, sizeof why);
    if (t->xid_until && now < t->xid_until) {
        /* the newest critical Xid first: it is usually the cause of the rest */
        char rest[sizeof why];
        snprintf(rest, sizeof rest, "%s", why);
        snprintf(why, sizeof why, "Xid %d: %s", t->xid_code, gsd_xid_critical(t->xid_code));
        if (rest[0]) addf(why, sizeof why, "%s", rest);
        bad = 1;
    } else {
        t->xid_until = 0;
    }
    if (r->ecc_uncorrected >= 0) t->ecc_last = r->ecc_uncorrected;
    int64_t ecc = t->ecc_last; /* NVML did not answer this time: the last count it gave */
    if (ecc >= 0) {
        if (t->ecc_base < 0 || ecc < t->ecc_base)
            t->ecc_base = ecc; /* the first reading, or the counter was reset */
        if (ecc > t->ecc_base) {
            addf(why, sizeof why, "ECC: %lld uncorrected error(s) since the GPU was last healthy",
                 (long long)(ecc - t->ecc_base));
            bad = 1;
        }
        if (!bad) t->ecc_base = ecc;
    }
    snprintf(t->why, sizeof t->why, "%s", bad ? why : "");
    if (bad == t->bad && t->readings > 1) return 0;
    int changed = bad != t->bad;
    t->bad = bad;
    if (changed) t->since = now;
    return changed;
}

/* ---- the watch thread ----------------------------------------------------------------------- */

struct gsd_gpuh {
    gsd_gpuh_conf conf;
    gsd_nvml *nv;
    unsigned n;
    gsd_gpuh_gpu *mine; /* the watch thread's */
    gsd_gpu_reading *rd;
    pthread_t th;
    int started;
    pthread_mutex_t mu; /* guards pub, gen, stop */
    pthread_cond_t cv;
    gsd_gpuh_gpu *pub;
    uint64_t gen;
    int stop;
};

static void *watch(void *arg)
{
    gsd_gpuh *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        pthread_mutex_unlock(&h->mu);
        gsd_nvml_read(h->nv, h->rd, h->n);
        gs_time now = gsd_wall_now();
        for (unsigned i = 0; i < h->n; i++)
            gsd_gpuh_judge(&h->mine[i], &h->rd[i], now, h->conf.hold);
        pthread_mutex_lock(&h->mu);
        memcpy(h->pub, h->mine, h->n * sizeof *h->pub);
        h->gen++;
        pthread_mutex_unlock(&h->mu);
        if (h->conf.wake) h->conf.wake(h->conf.wake_ud);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t us = h->conf.interval;
        ts.tv_sec += (time_t)(us / GS_SEC);
        ts.tv_nsec += (long)(us % GS_SEC) * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&h->mu);
        while (!h->stop && pthread_cond_timedwait(&h->cv, &h->mu, &ts) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

void gsd_gpuh_stop(gsd_gpuh *h)
{
    if (!h) return;
    if (h->started) {
        pthread_mutex_lock(&h->mu);
        h->stop = 1;
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->th, NULL);
    }
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    gsd_nvml_close(h->nv);
    free(h->mine);
    free(h->pub);
    free(h->rd);
    free(h);
}

int gsd_gpuh_start(const gsd_gpuh_conf *conf, gsd_gpuh **out, char *why, size_t cap)
{
    *out = NULL;
    gsd_gpuh *h = calloc(1, sizeof *h);
    if (!h) return GS_ENOMEM;
    h->conf = *conf;
    pthread_mutex_init(&h->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    int rc = gsd_nvml_open(&h->nv, why, cap);
    if (!rc) {
        h->n = gsd_nvml_count(h->nv);
        h->mine = calloc(h->n, sizeof *h->mine);
        h->pub = calloc(h->n, sizeof *h->pub);
        h->rd = calloc(h->n, sizeof *h->rd);
        if (!h->mine || !h->pub || !h->rd) rc = GS_ENOMEM;
    }
    for (unsigned i = 0; !rc && i < h->n; i++) h->mine[i].ecc_base = h->mine[i].ecc_last = -1;
    if (!rc) {
        int e = pthread_create(&h->th, NULL, watch, h);
        if (e) {
            snprintf(why, cap, "cannot start the GPU health thread: %s", strerror(e));
            rc = GS_EIO;
        }
        h->started = !e;
    }
    if (rc) {
        gsd_gpuh_stop(h);
        return rc;
    }
    *out = h;
    return 0;
}

unsigned gsd_gpuh_count(const gsd_gpuh *h)
{
    return h ? h->n : 0;
}

int gsd_gpuh_take(gsd_gpuh *h, uint64_t *gen, gsd_gpuh_gpu *out)
{
    pthread_mutex_lock(&h->mu);
    int fresh = h->gen != *gen;
    if (fresh) {
        memcpy(out, h->pub, h->n * sizeof *out);
        *gen = h->gen;
    }
    pthread_mutex_unlock(&h->mu);
    return fresh;
}

/* ---- the scheduler thread ------------------------------------------------------------------- */

static void gh_wake(void *ud)
{
    const gsd *sh = ud;
    char b = 'h';
    ssize_t w = write(sh->wake[1], &b, 1);
    (void)w;
}

int gsd_gpuh_setup(gsd_sched *g, int discovered)
{
    const gsd_opts *o = &g->sh.o;
    if (o->gpu_health_interval < 0) return 0; /* off */
    /* auto: on for discovered GPUs, or when a node is named for it */
    if (!o->gpu_health_interval && !discovered && !o->gpu_health_node) return 0;
    /* the node whose GPUs NVML sees: --gpu-health-node, else the one named like this machine */
    char host[256] = "localhost";
    const char *name = o->gpu_health_node;
    if (!name) {
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        name = host;
    }
    int node = gs_cluster_find_node(g->c, name);
    if (node < 0) {
        gsd_log("GPU health: off: no node of the cluster is named '%s'%s", name,
                o->gpu_health_node ? "" : " (this machine; give --gpu-health-node NAME)");
        return o->gpu_health_node ? -1 : 0;
    }
    char why[512] = "";
    gsd_gpuh_conf hc = {.interval =
                            o->gpu_health_interval > 0 ? o->gpu_health_interval : 10 * GS_SEC,
                        .hold = o->gpu_xid_hold,
                        .wake = gh_wake,
                        .wake_ud = &g->sh};
    int rc = gsd_gpuh_start(&hc, &g->gh, why, sizeof why);
    if (rc == GS_ENOMEM) abort();
    if (rc) {
        gsd_log("GPU health: off: %s", why);
        return 0;
    }
    unsigned n = gsd_gpuh_count(g->gh);
    size_t ng = gs_cluster_ngpus(g->c);
    g->gh_n = n;
    g->ghv = calloc(n, sizeof *g->ghv);
    g->gh_gpu = calloc(n, sizeof *g->gh_gpu);
    g->gh_told = calloc(n, sizeof *g->gh_told);
    g->gh_of = calloc(ng ? ng : 1, sizeof *g->gh_of);
    if (!g->ghv || !g->gh_gpu || !g->gh_told || !g->gh_of) abort();
    for (size_t gi = 0; gi < ng; gi++) g->gh_of[gi] = -1;
    unsigned mapped = 0;
    for (unsigned i = 0; i < n; i++) {
        g->gh_gpu[i] = -1;
        for (int nd = node; nd >= 0 && g->gh_gpu[i] < 0;
             nd = gs_cluster_find_node_next(g->c, name, nd)) {
            const gs_node *c = gs_cluster_node(g->c, nd);
            for (int gi = c->gpu_lo; gi < c->gpu_hi; gi++)
                if (gs_cluster_gpu(g->c, gi)->local == (int)i) {
                    g->gh_gpu[i] = gi;
                    g->gh_of[gi] = (int32_t)i;
                    mapped++;
                    break;
                }
        }
    }
    g->gh_node = node;
    /* (intervals under a second are allowed: "200ms", not "0s") */
    char every[32], hold[32];
    snprintf(every, sizeof every, hc.interval % GS_SEC ? "%lldms" : "%llds",
             (long long)(hc.interval % GS_SEC ? hc.interval / GS_MSEC : hc.interval / GS_SEC));
    snprintf(hold, sizeof hold, hc.hold % GS_SEC ? "%lldms" : "%llds",
             (long long)(hc.hold % GS_SEC ? hc.hold / GS_MSEC : hc.hold / GS_SEC));
    gsd_log("GPU health: watching %u of node %s's GPUs through NVML every %s (Xid hold %s, "
            "on a fault: %s)%s",
            mapped, name, every, hold,
            o->on_gpu_fault_keep ? "keep its jobs running" : "requeue its jobs",
            mapped < n ? "; NVML sees more GPUs than the node has: those are not watched" : "");
    return 0;
}

void gsd_gpuh_release(gsd_sched *g)
{
    gsd_gpuh_stop(g->gh);
    g->gh = NULL;
    free(g->ghv);
    free(g->gh_gpu);
    free(g->gh_told);
    free(g->gh_of);
}

/*
 * GPU gi just went bad: SUSPENDED jobs that left it and can resume only on the GPUs they left
 * (an executor without checkpoint-based suspend with GPU remapping: a SIGSTOPped process keeps
 * its memory there) would wait for it for ever.  Each is stopped with the checkpoint protocol
 * and requeued (GSD_STOP_GPU_FAULT: the act after the commit sends SIGTERM, finalize_run
 * requeues it).  Returns how many.
 */
static int stop_stranded(gsd_sched *g, int gi, const char *node, const char *why, gs_time now)
{
    if (gsd_exec_can(g->x, GSD_XCAP_CKPT | GSD_XCAP_REMAP)) return 0; /* it can move */
    const gs_gpu *gp = gs_cluster_gpu(g->c, gi);
    int n = 0;
    size_t nj = gs_engine_njobs(g->e);
    for (size_t s = 0; s < nj; s++) {
        const gs_job *j = gs_engine_job(g->e, s);
        if (!j || j->state != GS_JOB_SUSPENDED) continue;
        int left = 0;
        for (int k = 0; k < j->nlast_alloc && !left; k++) left = j->last_alloc[k] == gi;
        if (!left) continue;
        gsd_jobx *x = gsd_jx(g, (int32_t)s);
        if (x->stop != GSD_STOP_NONE) continue;
        char r[600];
        snprintf(r, sizeof r, "GPU %s:%d unhealthy: %s", node, gp->local, why);
        x->stop = GSD_STOP_GPU_FAULT;
        x->ckpt_why = gsd_intern(g, r);
        gsd_mark_dirty(g, (int32_t)s);
        gsd_push_rec(g, GSD_EV_GPU_FAULT, (int32_t)s, now,
                     "%s: suspended there, it cannot resume elsewhere; SIGTERM, SIGKILL after "
                     "%llds, then requeued",
                     r, (long long)(gsd_job_grace(g, x) / GS_SEC));
        n++;
    }
    return n;
}

/* Tell the engine about GPU i's new verdict: the node event first (in the cycle's
 * transaction), then the mark and the preemptions.  0, or -1 when the write failed. */
static int apply(gsd_sched *g, unsigned i, gs_time now)
{
    const gsd_gpuh_gpu *t = &g->ghv[i];
    int gi = g->gh_gpu[i];
    const gs_gpu *gp = gs_cluster_gpu(g->c, gi);
    const char *node = gs_cluster_node(g->c, gp->node)->name;
    int bad = t->bad;
    json_t *ids = json_array();
    char reason[600];
    snprintf(reason, sizeof reason, "GPU %s:%d unhealthy: %s; requeued", node, gp->local, t->why);
    const gs_job *j = gp->owner >= 0 ? gs_engine_job(g->e, (size_t)gp->owner) : NULL;
    int stop = bad && !g->sh.o.on_gpu_fault_keep && j && j->state == GS_JOB_RUNNING;
    if (j && bad) json_array_append_new(ids, json_integer(j->id));
    json_t *dj =
        json_pack("{s:i,s:i,s:O,s:s?}", "gpu", gp->local, "index", gi, "jobs", ids, "action",
                  !bad   ? NULL
                  : stop ? "requeue"
                  : j    ? "keep"
                         : NULL);
    char *data = json_dumps(dj, JSON_COMPACT);
    json_decref(dj);
    char ev[400];
    if (bad)
        snprintf(ev, sizeof ev, "GPU %d: %s", gp->local, t->why);
    else
        snprintf(ev, sizeof ev, "GPU %d healthy again", gp->local);
    int rc =
        gsd_store_add_node_event(g->sh.store, node, now, bad ? "gpu_bad" : "gpu_good", ev, data);
    free(data);
    if (rc) {
        json_decref(ids);
        g->store_failed = 1;
        return -1;
    }
    rc = gs_engine_set_gpu_bad(g->e, gi, bad, bad ? gsd_intern(g, t->why) : NULL);
    if (rc)
        gsd_log("GPU health: the engine refused GPU %s:%d: %s", node, gp->local, gs_strerror(rc));
    g->gh_told[i] = (int8_t)bad;
    g->changed = 1;
    if (stop && gs_engine_preempt(g->e, j, gsd_intern(g, reason)) != 0) stop = 0;
    int stranded = bad && !g->sh.o.on_gpu_fault_keep ? stop_stranded(g, gi, node, t->why, now) : 0;
    gsd_log("GPU %s:%d %s%s%s%s", node, gp->local, bad ? "unhealthy: " : "healthy again",
            bad ? t->why : "", stop ? "; its job is stopped and requeued" : "",
            bad && j && !stop ? "; its job runs on" : "");
    if (stranded)
        gsd_log("GPU %s:%d: %d suspended job(s) that can resume only there stopped and requeued",
                node, gp->local, stranded);
    json_decref(ids);
    return 0;
}

void gsd_gpuh_cycle(gsd_sched *g, gs_time now)
{
    if (!g->gh) return;
    if (!gsd_gpuh_take(g->gh, &g->gh_gen, g->ghv) && !g->gh_retry) return;
    g->gh_retry = 0;
    g->changed = 1; /* new readings: the snapshot shows them */
    for (unsigned i = 0; i < g->gh_n; i++) {
        if (g->gh_gpu[i] < 0 || g->ghv[i].bad == g->gh_told[i]) continue;
        if (apply(g, i, now)) {
            g->gh_retry = 1; /* the database refused: again at the next cycle */
            return;
        }
    }
}
