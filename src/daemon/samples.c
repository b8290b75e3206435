/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * samples.c - the cluster over time, for the dashboard's charts (GET /v1/stats; issue 16).
 *
 * The sampler (gsd_sample_tick) runs on the scheduler thread once per cycle, inside the
 * cycle's transaction: every --stats-interval seconds (10 by default) it writes one row of
 * the samples table when something changed since the last row (GPUs allocated, jobs pending
 * or running, a VC's numbers, a run started, a job ended), and at least every
 * GSD_SAMPLE_IDLE_MAX otherwise, so a chart of a quiet cluster still has recent points; then
 * it deletes the rows older than --stats-keep days (7 by default).  gsd_sample_of reads one
 * sample off a published snapshot: the sampler's rows, and the "now" point of GET /v1/stats
 * on HTTP threads (it only reads the immutable snapshot).
 *
 * Invariants: a row describes the latest published snapshot (what the API showed at its
 * time); its started / finished count the runs that started and the jobs that ended since
 * the previous row of this daemon's run (the first row of a run: since the daemon started);
 * the table keeps at most --stats-keep days of rows, about 86400 / interval rows a day at
 * most (fewer when idle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd_sched.h"

void gsd_sample_of(const gsd_snap *s, gsd_sample *out, json_t **vcs)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < s->ngpus; i++) out->alloc_gpus += s->gpus[i].job >= 0;
    out->total_gpus = (int64_t)s->ngpus;
    for (int st = 0; st < GS_JOB_NSTATES; st++) {
        if (gs_job_state_final((gs_job_state)st)) {
            out->finished += (int64_t)s->m.finished[st]; /* since the daemon started */
            continue;
        }
        if (st == GS_JOB_PENDING)
            out->pending += s->states[st];
        else
            out->running += s->states[st]; /* holding GPUs, or being stopped */
    }
    out->started = (int64_t)s->m.launches; /* since the daemon started */
    json_t *o = json_object();
    for (size_t i = 0; i < s->nvcs; i++) {
        const gsd_vcview *v = &s->vcs[i];
        if (v->guaranteed < 0 && !v->allocated && !v->running && !v->pending) continue;
        json_object_set_new(
            o, v->name,
            json_pack("{s:o,s:I,s:i,s:i,s:I}", "guaranteed",
                      v->guaranteed >= 0 ? json_integer(v->guaranteed) : json_null(), "allocated",
                      (json_int_t)v->allocated, "running", v->running, "pending", v->pending,
                      "pending_gpus", (json_int_t)v->pending_gpus));
    }
    *vcs = o;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

void gsd_sample_tick(gsd_sched *g, gs_time now)
{
    const gsd_opts *o = &g->sh.o;
    if (o->stats_interval < 0) return; /* --stats-interval 0: no samples */
    gs_time every = (o->stats_interval ? o->stats_interval : GSD_SAMPLE_INTERVAL) * GS_SEC;
    const gsd_snap *s = g->sh.snap; /* only this thread replaces it */
    if (!s || (g->smp.last_t && now - g->smp.last_t < every)) return;
    gsd_sample x;
    json_t *vcs;
    gsd_sample_of(s, &x, &vcs);
    char *vj = json_dumps(vcs, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(vcs);
    if (!vj) abort();
    int64_t launches = x.started, ended = x.finished;
    x.started = launches - g->smp.launches;
    x.finished = ended - g->smp.finished;
    uint64_t h = 14695981039346656037ull;
    int64_t gauges[] = {x.alloc_gpus, x.total_gpus, x.pending, x.running};
    h = fnv(h, gauges, sizeof gauges);
    h = fnv(h, vj, strlen(vj));
    int quiet = h == g->smp.hash && !x.started && !x.finished;
    if (g->smp.last_t && quiet && now - g->smp.last_t < GSD_SAMPLE_IDLE_MAX) {
        free(vj);
        return;
    }
    x.t = now;
    x.vcs = vj;
    int64_t days = o->stats_keep_days ? o->stats_keep_days : GSD_SAMPLE_KEEP_DAYS;
    if (gsd_store_add_sample(g->sh.store, &x, now - days * 86400 * GS_SEC)) {
        if (!g->smp.failed) gsd_log("cannot write a cluster sample (GET /v1/stats misses it)");
        g->smp.failed = 1;
    } else {
        g->smp.failed = 0;
    }
    free(vj);
    g->smp.last_t = now;
    g->smp.launches = launches;
    g->smp.finished = ended;
    g->smp.hash = h;
}
