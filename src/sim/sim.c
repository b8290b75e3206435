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
 * order, so they do not depend on event interleaving details.
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

void gs_sim_result_release(gs_sim_result *r)
{
    if (!r) return;
    gs_engine_destroy(r->engine);
    gs_cluster_destroy(r->cluster);
    free(r->tl);
    free(r->vcs);
    memset(r, 0, sizeof *r);
}

int gs_sim_prepare(const gs_sim_opts *o, gs_sim_result *res, gs_diag *d)
{
    if (res->engine) return 0;
    memset(res, 0, sizeof *res);
    int rc = gs_cluster_load(o->cluster_spec, &res->cluster, d);
    if (rc) return rc;
    gs_engine_opts eo = o->eopts;
    if (!eo.read_file) eo.read_file = gs_read_data_file;
    if (!eo.lp) eo.lp = gs_lp_glpk(); /* NULL without GLPK: LP policies refuse */
    rc = gs_engine_opts_from_params(o->params, &eo, d);
    if (rc) return rc;
    d->file = NULL;
    rc = gs_engine_create(res->cluster, o->policy, o->params, &eo, &res->engine, d);
    if (rc) return rc;
    snprintf(res->policy, sizeof res->policy, "%s", o->label ? o->label : o->policy);
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

static void compute_metrics(gs_sim_result *r)
{
    gs_engine *e = r->engine;
    size_t n = gs_engine_njobs(e);
    double *jct = malloc((n ? n : 1) * sizeof *jct);
    double *queue = malloc((n ? n : 1) * sizeof *queue);
    double *first = malloc((n ? n : 1) * sizeof *first);
    if (!jct || !queue || !first) abort(); /* programs abort on out-of-memory */
    size_t k = 0;
    double sum_jct = 0, sum_q = 0, sum_first = 0;
    gs_time tmin = GS_TIME_MAX, tmax = GS_TIME_NONE;
    r->jobs = n;
    for (size_t i = 0; i < n; i++) {
        const gs_job *j = gs_engine_job(e, i);
        if (j->submit < tmin) tmin = j->submit;
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
        double q = gs_time_to_sec(j->queued);
        double fs = gs_time_to_sec(j->first_start - j->submit);
        jct[k] = jc;
        queue[k] = q;
        first[k] = fs;
        k++;
        sum_jct += jc;
        sum_q += q;
        sum_first += fs;
    }
    if (k) {
        qsort(jct, k, sizeof *jct, cmp_double);
        qsort(queue, k, sizeof *queue, cmp_double);
        qsort(first, k, sizeof *first, cmp_double);
        r->avg_first_s = ms_round(sum_first / (double)k);
        r->median_first_s = ms_round(median(first, k));
        r->p95_first_s = ms_round(pct(first, k, 0.95));
        r->avg_jct_s = ms_round(sum_jct / (double)k);
        r->median_jct_s = ms_round(median(jct, k));
        r->p95_jct_s = ms_round(pct(jct, k, 0.95));
        r->p99_jct_s = ms_round(pct(jct, k, 0.99));
        r->avg_queue_s = ms_round(sum_q / (double)k);
        r->median_queue_s = ms_round(median(queue, k));
    }
    free(jct);
    free(queue);
    free(first);
    for (int m = 0; m < GS_MECH_N; m++) r->mech_gpu_s[m] = ms_round(r->mech_gpu_s[m]);
    if (tmax != GS_TIME_NONE && tmax > tmin) {
        r->makespan_s = ms_round(gs_time_to_sec(tmax - tmin));
        /* integrate allocated GPUs over [tmin, tmax] from the timeline */
        double area = 0, jarea = 0;
        for (size_t i = 0; i < r->ntl; i++) {
            gs_time a = r->tl[i].t, b = i + 1 < r->ntl ? r->tl[i + 1].t : tmax;
            if (a < tmin) a = tmin;
            if (b > tmax) b = tmax;
            if (b > a) {
                area += (double)r->tl[i].alloc * gs_time_to_sec(b - a);
                jarea += (double)(r->tl[i].alloc + r->tl[i].packed) * gs_time_to_sec(b - a);
            }
        }
        double denom = (double)r->total_gpus * gs_time_to_sec(tmax - tmin);
        r->gpu_util = denom > 0 ? round(area / denom * 1e6) / 1e6 : 0;
        r->gpu_job_util = denom > 0 ? round(jarea / denom * 1e6) / 1e6 : 0;
    }
    r->events = gs_engine_events(e);
    if (r->elastic) {
        double rg = 0, lw = 0;
        for (size_t i = 0; i < n; i++) {
            const gs_job *j = gs_engine_job(e, i);
            r->rescales += (uint64_t)j->rescales;
            rg += j->rescale_gpu_s;
            lw += j->lost_work_gpu_s;
            if (j->deadline == GS_TIME_NONE) continue;
            r->deadline_jobs++;
            if (j->state == GS_JOB_DONE && j->end <= j->deadline) r->deadline_met++;
        }
        r->rescale_gpu_s = ms_round(rg);
        r->lost_work_gpu_s = ms_round(lw);
        r->rescales_per_job = n ? round((double)r->rescales / (double)n * 1e6) / 1e6 : 0;
        r->deadline_met_ratio =
            r->deadline_jobs ? round((double)r->deadline_met / (double)r->deadline_jobs * 1e6) / 1e6
                             : 0;
        if (tmax != GS_TIME_NONE && tmax > tmin) {
            double area = 0;
            for (size_t i = 0; i < r->ntl; i++) {
                gs_time a = r->tl[i].t, b = i + 1 < r->ntl ? r->tl[i + 1].t : tmax;
                if (a < tmin) a = tmin;
                if (b > tmax) b = tmax;
                if (b > a) area += r->tl[i].goodput * gs_time_to_sec(b - a);
            }
            r->avg_goodput = round(area / gs_time_to_sec(tmax - tmin) * 1e6) / 1e6;
        }
    }
    /* per VC */
    size_t nv = gs_engine_nvcs(e);
    r->vcs = calloc(nv ? nv : 1, sizeof *r->vcs);
    double *q = malloc((n ? n : 1) * sizeof *q);
    if (!r->vcs || !q) abort();
    r->nvcs = nv;
    for (size_t v = 0; v < nv; v++) {
        gs_vc_stats *s = &r->vcs[v];
        snprintf(s->name, sizeof s->name, "%s", gs_engine_vc_name(e, (int)v));
        size_t nk = 0;
        double sj = 0, sq = 0;
        for (size_t i = 0; i < n; i++) {
            const gs_job *j = gs_engine_job(e, i);
            if ((size_t)j->vc != v) continue;
            s->jobs++;
            if (j->state == GS_JOB_REJECTED) s->rejected++;
            if (j->state != GS_JOB_DONE) continue;
            s->done++;
            sj += gs_time_to_sec(j->end - j->submit);
            q[nk] = gs_time_to_sec(j->queued);
            sq += q[nk++];
        }
        if (nk) {
            qsort(q, nk, sizeof *q, cmp_double);
            s->avg_jct_s = ms_round(sj / (double)nk);
            s->avg_queue_s = ms_round(sq / (double)nk);
            s->median_queue_s = ms_round(median(q, nk));
            s->p95_queue_s = ms_round(pct(q, nk, 0.95));
        }
    }
    free(q);
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
        rc = gs_engine_add_job(res->engine, &t->jobs[i], NULL, d);
        if (rc) {
            char msg[sizeof d->msg];
            snprintf(msg, sizeof msg, "job %lld: %s", (long long)t->jobs[i].id, d->msg);
            return gs_diag_set(d, rc, 0, 0, "%s", msg);
        }
    }
    if (o->events) {
        d->file = NULL;
        for (size_t i = 0; i < o->events->n; i++) {
            const gs_node_event *ev = &o->events->v[i];
            int node = gs_cluster_find_node(res->cluster, ev->node);
            if (node < 0)
                return gs_diag_set(d, GS_EUNKNOWN, 0, 0, "events: unknown node '%s'", ev->node);
            /* a machine in several HiveD chains is one node per chain: the event hits each */
            for (; node >= 0; node = gs_cluster_find_node_next(res->cluster, ev->node, node)) {
                rc = ev->bad ? gs_engine_add_node_bad_event(res->engine, ev->t, node, ev->down)
                             : gs_engine_add_node_event(res->engine, ev->t, node, ev->down);
                if (rc) return rc;
            }
        }
    }
    size_t steps = 0;
    while ((rc = gs_engine_step(res->engine)) > 0) {
        if (o->progress && (++steps & 0xffff) == 0) {
            size_t done = 0;
            for (size_t i = 0; i < gs_engine_njobs(res->engine); i++)
                done += gs_job_state_final(gs_engine_job(res->engine, i)->state);
            o->progress(o->progress_ud, res, gs_engine_now(res->engine), done,
                        gs_engine_njobs(res->engine));
        }
    }
    if (rc < 0) return gs_diag_set(d, rc, 0, 0, "simulation failed: %s", gs_strerror(rc));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    compute_metrics(res);
    res->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return 0;
}
