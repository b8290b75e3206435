/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobs.c - the scheduler thread's per-job state: the gsd_jobx array (by
 * engine slot), the rows that need an UPDATE at this cycle's commit, the
 * snapshot view chunks that need a rebuild, the records collected during a
 * cycle, and the per-VC / per-state counters.
 *
 * Invariants: every change to a job's row goes through gsd_mark_dirty (so
 * the commit writes it once) and touches its view chunk (so the next
 * publish shows it); gsd_track keeps the counters in step with each job's
 * state in O(1) per record.  Scheduler thread only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd_sched.h"

/* ---- per-job state -------------------------------------------------------------------------- */

gsd_jobx *gsd_jx(gsd_sched *g, int32_t slot)
{
    size_t b = (size_t)slot >> GSD_JX_BITS, nb = g->njx >> GSD_JX_BITS;
    if (b >= nb) {
        size_t nc = nb ? nb : 4;
        while (nc <= b) nc *= 2;
        g->jx = gsd_xrealloc(g->jx, nc * sizeof *g->jx);
        g->jx_gone = gsd_xrealloc(g->jx_gone, nc * sizeof *g->jx_gone);
        memset(g->jx + nb, 0, (nc - nb) * sizeof *g->jx);
        memset(g->jx_gone + nb, 0, (nc - nb) * sizeof *g->jx_gone);
        g->njx = nc << GSD_JX_BITS;
    }
    if (!g->jx[b]) {
        /* (a forgotten block is never asked again: only jobs the engine still has are) */
        gsd_jobx *k = calloc(GSD_JX_BLOCK, sizeof *k);
        if (!k) abort();
        for (size_t i = 0; i < GSD_JX_BLOCK; i++) {
            k[i].exit_code = INT32_MIN;
            k[i].seen = -1;
        }
        g->jx[b] = k;
        g->jx_gone[b] = 0;
    }
    return &g->jx[b][(size_t)slot & (GSD_JX_BLOCK - 1)];
}

gsd_jobx *gsd_jx_peek(gsd_sched *g, int32_t slot)
{
    size_t b = (size_t)slot >> GSD_JX_BITS;
    if (slot < 0 || b >= g->njx >> GSD_JX_BITS || !g->jx[b]) return NULL;
    return &g->jx[b][(size_t)slot & (GSD_JX_BLOCK - 1)];
}

static void jx_free(gsd_jobx *x)
{
    gsd_spec_release(&x->spec);
    gsd_wait_free(x);
    gsd_el_free(x);
    free(x->spec_json);
    free(x->idem_key);
    free(x->idem_hash);
    free(x->alloc);
}

void gsd_jx_forget(gsd_sched *g, int32_t slot)
{
    size_t b = (size_t)slot >> GSD_JX_BITS;
    gsd_jobx *x = gsd_jx(g, slot);
    int64_t array_id = x->array_id; /* kept: an array's slots are scanned as one run */
    jx_free(x);
    memset(x, 0, sizeof *x);
    x->array_id = array_id;
    x->exit_code = INT32_MIN;
    x->seen = -1;
    x->gone = 1;
    /* the whole block once all of its slots are forgotten (slots are never reused: the block
     * of the newest slots still fills, and is never complete before it is) */
    if (++g->jx_gone[b] == GSD_JX_BLOCK) {
        free(g->jx[b]);
        g->jx[b] = NULL;
    }
}

void gsd_jx_release(gsd_sched *g)
{
    for (size_t b = 0; b < g->njx >> GSD_JX_BITS; b++) {
        if (!g->jx[b]) continue;
        for (size_t i = 0; i < GSD_JX_BLOCK; i++) jx_free(&g->jx[b][i]);
        free(g->jx[b]);
    }
    free(g->jx);
    free(g->jx_gone);
    g->jx = NULL;
    g->jx_gone = NULL;
    g->njx = 0;
}

void gsd_chunk_touch(gsd_sched *g, int32_t slot)
{
    size_t c = (size_t)slot >> GSD_CHUNK_BITS;
    if (c >= g->nchunk) {
        size_t nc = g->nchunk ? g->nchunk : 64;
        while (nc <= c) nc *= 2;
        g->chunk = gsd_xrealloc(g->chunk, nc * sizeof *g->chunk);
        g->chunk_dirty = gsd_xrealloc(g->chunk_dirty, nc * sizeof *g->chunk_dirty);
        g->chunk_nactive = gsd_xrealloc(g->chunk_nactive, nc * sizeof *g->chunk_nactive);
        for (size_t i = g->nchunk; i < nc; i++) {
            g->chunk[i] = NULL;
            g->chunk_dirty[i] = 0;
            g->chunk_nactive[i] = 0;
        }
        g->nchunk = nc;
    }
    g->chunk_dirty[c] = 1;
}

/* A job is shown in snapshots from now on (until it is final and published as gone). */
void gsd_activate(gsd_sched *g, int32_t slot)
{
    gsd_jobx *x = gsd_jx(g, slot);
    gsd_chunk_touch(g, slot);
    if (x->active) return;
    x->active = 1;
    g->chunk_nactive[(size_t)slot >> GSD_CHUNK_BITS]++;
}

gsd_rec *gsd_push_rec(gsd_sched *g, int type, int32_t slot, gs_time t, const char *fmt, ...)
{
    if (g->nrecs == g->caprecs) {
        g->caprecs = g->caprecs ? g->caprecs * 2 : 256;
        g->recs = gsd_xrealloc(g->recs, g->caprecs * sizeof *g->recs);
    }
    gsd_rec *r = &g->recs[g->nrecs++];
    gsd_chunk_touch(g, slot);
    r->type = type;
    r->slot = slot;
    r->t = t;
    r->reason[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->reason, sizeof r->reason, fmt, ap);
        va_end(ap);
    }
    g->changed = 1;
    return r;
}

void gsd_pin(gsd_sched *g, int32_t slot)
{
    if (g->npins == g->cappins) {
        g->cappins = g->cappins ? g->cappins * 2 : 64;
        g->pins = gsd_xrealloc(g->pins, g->cappins * sizeof *g->pins);
    }
    g->pins[g->npins++] = slot;
}

void gsd_mark_dirty(gsd_sched *g, int32_t slot)
{
    gsd_jobx *x = gsd_jx(g, slot);
    if (!x->dirty) {
        x->dirty = 1;
        if (g->ndirty == g->capdirty) {
            g->capdirty = g->capdirty ? g->capdirty * 2 : 256;
            g->dirtyv = gsd_xrealloc(g->dirtyv, g->capdirty * sizeof *g->dirtyv);
        }
        g->dirtyv[g->ndirty++] = slot;
    }
    gsd_chunk_touch(g, slot);
    g->changed = 1;
}

/* Keep the per-VC and per-state counters in step with the job's state (O(1) per record). */
void gsd_track(gsd_sched *g, const gs_job *j, gsd_jobx *x)
{
    int st = j->state;
    /* a SUSPENDED job holds no GPUs in the engine (time-slicing gives them to others) */
    int cat = st == GS_JOB_PENDING && j->arrived                                        ? 1
              : st == GS_JOB_RUNNING || st == GS_JOB_PREEMPTED || st == GS_JOB_DRAINING ? 2
                                                                                        : 0;
    if ((size_t)j->vc >= g->nvcstat) {
        size_t nn = g->nvcstat ? g->nvcstat * 2 : 16;
        while (nn <= (size_t)j->vc) nn *= 2;
        g->vcstat = gsd_xrealloc(g->vcstat, nn * sizeof *g->vcstat);
        memset(g->vcstat + g->nvcstat, 0, (nn - g->nvcstat) * sizeof *g->vcstat);
        g->nvcstat = nn;
    }
    gsd_vcstat *v = &g->vcstat[j->vc];
    /* (an elastic job's size changes: take back what was counted, not its size now) */
    if (x->cat == 1) v->pending--, v->pending_gpus -= x->cat_gpus;
    if (x->cat == 2) v->running--, v->allocated -= x->cat_gpus;
    if (cat == 1) v->pending++, v->pending_gpus += j->gpus;
    if (cat == 2) v->running++, v->allocated += j->gpus;
    x->cat = (int8_t)cat;
    x->cat_gpus = j->gpus;
    /* a rejected submit leaves no VC behind: only accepted jobs make a VC visible and count
     * towards GSD_MAX_VCS (the engine interns the name of every job it is given) */
    int acc = (j->arrived || j->deferred) && st != GS_JOB_REJECTED;
    if (acc != x->accepted) {
        v->jobs += acc ? 1 : -1;
        if (acc && v->jobs == 1) g->nvc_used++;
        if (!acc && v->jobs == 0) g->nvc_used--;
        x->accepted = (int8_t)acc;
    }
    if (x->seen != st) {
        if (x->seen >= 0 && !gs_job_state_final((gs_job_state)x->seen)) g->live_states[x->seen]--;
        if (!gs_job_state_final((gs_job_state)st)) g->live_states[st]++;
        x->seen = (int8_t)st;
    }
    if (cat == 2 && !x->inrun) {
        if (g->nrun == g->caprun) {
            g->caprun = g->caprun ? g->caprun * 2 : 64;
            g->runv = gsd_xrealloc(g->runv, g->caprun * sizeof *g->runv);
        }
        g->runv[g->nrun++] = j->slot;
        x->inrun = 1;
    }
}

int gsd_vc_known(const gsd_sched *g, const char *vc)
{
    for (size_t i = 0, n = gs_cluster_nvcs(g->c); i < n; i++)
        if (!strcmp(gs_cluster_vc(g->c, (int)i)->name, vc)) return 1;
    const char *d;
    for (size_t i = 0; (d = gs_engine_vc_declared(g->e, i)); i++)
        if (!strcmp(d, vc)) return 1;
    for (size_t e = 0, n = gs_engine_nvcs(g->e); e < n && e < g->nvcstat; e++)
        if (g->vcstat[e].jobs > 0 && !strcmp(gs_engine_vc_name(g->e, (int)e), vc)) return 1;
    return 0;
}

/* "n0:0-3 n1:0,2" from a job's GPUs; also the "3,4,5" list of global indices. */
void gsd_describe_alloc(const gs_cluster *c, const int32_t *gpus, int n, char *where, size_t wcap,
                        char **list)
{
    size_t w = 0, cap = (size_t)n * 8 + 8;
    char *l = malloc(cap);
    if (!l) abort();
    size_t ln = 0;
    l[0] = '\0';
    where[0] = '\0';
    for (int i = 0; i < n; i++) ln += (size_t)snprintf(l + ln, cap - ln, i ? ",%d" : "%d", gpus[i]);
    *list = l;
    int i = 0;
    while (i < n) {
        const gs_gpu *gp = gs_cluster_gpu(c, gpus[i]);
        int node = gp->node;
        char part[256];
        size_t pn = (size_t)snprintf(part, sizeof part, "%s%s:", w ? " " : "",
                                     gs_cluster_node(c, node)->name);
        int first = 1;
        while (i < n && gs_cluster_gpu(c, gpus[i])->node == node) {
            int lo = gs_cluster_gpu(c, gpus[i])->local, hi = lo;
            while (i + 1 < n && gs_cluster_gpu(c, gpus[i + 1])->node == node &&
                   gs_cluster_gpu(c, gpus[i + 1])->local == hi + 1)
                hi++, i++;
            i++;
            if (pn < sizeof part)
                pn += (size_t)snprintf(part + pn, sizeof part - pn, lo == hi ? "%s%d" : "%s%d-%d",
                                       first ? "" : ",", lo, hi);
            first = 0;
        }
        if (w + strlen(part) + 4 >= wcap) {
            snprintf(where + w, wcap - w, " ...");
            return;
        }
        w += (size_t)snprintf(where + w, wcap - w, "%s", part);
    }
}

/* The same for job j, whose GPUs the cluster lacks (gs_job.vanished: a restart with a changed
 * config) are -1 in the list - so that the next start adopts it again on the GPUs it has,
 * the others still not counted - and "(+N gone)" in the summary. */
void gsd_describe_job_alloc(const gs_cluster *c, const gs_job *j, char *where, size_t wcap,
                            char **list)
{
    gsd_describe_alloc(c, j->alloc, j->nalloc, where, wcap, list);
    if (j->vanished <= 0) return;
    size_t ln = strlen(*list), cap = ln + (size_t)j->vanished * 3 + 1;
    char *l = realloc(*list, cap);
    if (!l) abort();
    for (int k = 0; k < j->vanished; k++)
        ln += (size_t)snprintf(l + ln, cap - ln, ln ? ",-1" : "-1");
    *list = l;
    size_t w = strlen(where);
    if (w + 16 < wcap) snprintf(where + w, wcap - w, "%s(+%d gone)", w ? " " : "", j->vanished);
}

gs_time gsd_job_grace(gsd_sched *g, const gsd_jobx *x)
{
    return x->spec.grace > 0 ? x->spec.grace : g->sh.o.grace;
}
