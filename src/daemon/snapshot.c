/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.c - the immutable view HTTP threads read: job views (in chunks
 * shared by consecutive snapshots), nodes, GPUs, VCs, counters and
 * metrics, the cluster's topology (built once, shared by every snapshot);
 * publishing a new one after each cycle; queue positions as the policy
 * orders jobs (its queue keys and texts, asked of the engine when a view is
 * built: the daemon knows no policy by name), sorted at most once per
 * snapshot, by the first reader that lists them.
 *
 * Invariants: a published snapshot and its chunks are never written again
 * (reference counted; the last gsd_snap_put frees), except its positions
 * array, set once under posmu and then read-only; g->sh.snap is replaced
 * under snapmu only by the scheduler thread; gsd_publish rebuilds only the
 * chunks whose jobs changed (and all of them every 100 ms).  gsd_snap_get,
 * gsd_snap_put and the lookups are thread-safe; gsd_publish is scheduler
 * thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evbus.h"
#include "gpuhealth.h"
#include "gsd_sched.h"

/* ---- snapshot ------------------------------------------------------------------------------- */

void gsd_chunk_put(gsd_chunk *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1) free(c);
}

gsd_snap *gsd_snap_get(gsd *g)
{
    pthread_mutex_lock(&g->snapmu);
    gsd_snap *s = g->snap;
    if (s) atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&g->snapmu);
    return s;
}

void gsd_snap_put(gsd_snap *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
    for (size_t i = 0; i < s->nchunks; i++) gsd_chunk_put(s->chunks[i]);
    free(s->chunks);
    free(s->jobs);
    free(s->nodes);
    free(s->gpus);
    free(s->vcs);
    free(s->pos);
    pthread_mutex_destroy(&s->posmu);
    if (s->topo && atomic_fetch_sub(&s->topo->refs, 1) == 1) free(s->topo);
    free(s);
}

/* The cluster's cells for GET /v1/cluster (gsd.h, gsd_topo): its topology never changes, so
 * it is built once and shared by every snapshot. */
static gsd_topo *topo_build(const gs_cluster *c)
{
    size_t n = gs_cluster_ncells(c);
    gsd_topo *t = calloc(1, sizeof *t + n * sizeof *t->c);
    if (!t) abort();
    atomic_init(&t->refs, 1);
    t->n = n;
    for (size_t i = 0; i < n; i++) {
        const gs_cell *cl = gs_cluster_cell(c, (int)i);
        gsd_tcell *x = &t->c[i];
        x->name = cl->name ? cl->name : "";
        x->parent = cl->parent;
        x->kind = cl->kind;
        x->node = cl->kind == GS_CELL_NODE ? cl->node_lo : -1;
        x->gpu = cl->kind == GS_CELL_GPU ? cl->gpu_lo : -1;
    }
    /* pre-order: every descendant of a cell comes after it, so one backward pass closes each
     * subtree before its parent's */
    for (size_t i = n; i-- > 0;) {
        gsd_tcell *x = &t->c[i];
        if (x->end < (int32_t)i + 1) x->end = (int32_t)i + 1;
        if (x->parent >= 0 && t->c[x->parent].end < x->end) t->c[x->parent].end = x->end;
    }
    return t;
}

long gsd_snap_index(const gsd_snap *s, int64_t id)
{
    size_t lo = 0, hi = s->njobs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->jobs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->njobs && s->jobs[lo]->id == id ? (long)lo : -1;
}

const gsd_jview *gsd_snap_find(const gsd_snap *s, int64_t id)
{
    long k = gsd_snap_index(s, id);
    return k >= 0 ? s->jobs[k] : NULL;
}

int gsd_view_cmp(const gsd_jview *a, const gsd_jview *b)
{
    return gs_queue_key_cmp(&a->q, a->id, &b->q, b->id);
}

/* Position sort: the pending views in a queue, by queue then the policy's order. */
typedef struct posent {
    const gsd_jview *v;
    size_t idx;
} posent;

static int pos_cmp(const void *a, const void *b)
{
    return gsd_view_cmp(((const posent *)a)->v, ((const posent *)b)->v);
}

const int32_t *gsd_snap_positions(gsd_snap *s)
{
    pthread_mutex_lock(&s->posmu);
    if (!s->pos) {
        int32_t *pos = calloc(s->njobs ? s->njobs : 1, sizeof *pos);
        posent *v = malloc((s->njobs ? s->njobs : 1) * sizeof *v);
        if (!pos || !v) abort();
        size_t n = 0;
        for (size_t i = 0; i < s->njobs; i++)
            if (s->jobs[i]->state == GS_JOB_PENDING && s->jobs[i]->q.queue != GSD_QUEUE_WAIT)
                v[n++] = (posent){s->jobs[i], i};
        qsort(v, n, sizeof *v, pos_cmp);
        int32_t p = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || v[i].v->q.queue != v[i - 1].v->q.queue) p = 0;
            pos[v[i].idx] = ++p;
        }
        free(v);
        s->pos = pos;
    }
    const int32_t *pos = s->pos;
    pthread_mutex_unlock(&s->posmu);
    return pos;
}

int gsd_snap_position(gsd_snap *s, const gsd_jview *v)
{
    if (v->state != GS_JOB_PENDING || v->q.queue == GSD_QUEUE_WAIT) return 0;
    pthread_mutex_lock(&s->posmu);
    const int32_t *all = s->pos;
    pthread_mutex_unlock(&s->posmu);
    if (all) { /* already sorted for this snapshot */
        long k = gsd_snap_index(s, v->id);
        if (k >= 0 && s->jobs[k] == v) return all[k];
    }
    /* one job: counting those ahead is cheaper than sorting them all */
    int pos = 1;
    for (size_t i = 0; i < s->njobs; i++) {
        const gsd_jview *o = s->jobs[i];
        if (o == v || o->state != GS_JOB_PENDING || o->q.queue != v->q.queue) continue;
        pos += gsd_view_cmp(o, v) < 0;
    }
    return pos;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The text of queue 'queue', asked of the engine once per queue and publish. */
static const char *queue_text(gsd_sched *g, int32_t queue)
{
    size_t h = (uint32_t)queue & (sizeof g->qtext / sizeof *g->qtext - 1);
    if (g->qtext[h].text && g->qtext[h].gen == g->qgen && g->qtext[h].queue == queue)
        return g->qtext[h].text;
    char buf[256];
    gs_engine_queue_text(g->e, queue, buf, sizeof buf); /* on an error: a neutral text */
    g->qtext[h].queue = queue;
    g->qtext[h].text = gsd_intern(g, buf);
    g->qtext[h].gen = g->qgen;
    return g->qtext[h].text;
}

static void fill_view(gsd_sched *g, const gs_job *j, const gsd_jobx *x, gsd_jview *v)
{
    v->id = j->id;
    v->group = j->group;
    v->task_index = j->task_index;
    v->array_id = x->array_id;
    v->array_task = x->array_task;
    v->name = j->name;
    v->user = j->user;
    v->vc = j->vc_name;
    if (j->state == GS_JOB_PENDING && j->deferred) {
        /* not yet eligible (wait.c): in no policy queue */
        v->reason = gsd_wait_reason(x);
        v->q = (gs_queue_key){GSD_QUEUE_WAIT, 0};
        v->qtext = x->held ? "held: waits for a release (gsched release)"
                   : !strcmp(v->reason, "JobArrayTaskLimit")
                       ? "array throttle: waits for a running element of its array to end"
                       : "not eligible: waits on its dependencies";
    } else if (j->state == GS_JOB_PENDING) {
        /* the policy's reason, else the engine's default; its queue as the policy orders it */
        v->reason = gs_engine_pending_reason(g->e, j);
        gs_engine_queue_key(g->e, j, &v->q); /* on an error: the default queue */
        v->qtext = queue_text(g, v->q.queue);
    } else {
        v->reason = x->last_reason;
        v->q = (gs_queue_key){GS_QUEUE_GLOBAL, 0};
        v->qtext = NULL;
    }
    v->state = j->state;
    v->priority = j->priority;
    v->ntasks = j->ntasks;
    v->gpus_per_task = j->gpus_per_task;
    v->gpus = j->gpus;
    v->members[0] = '\0';
    if (x->spec.task_gpus) gsd_spec_gpus_text(&x->spec, v->members, sizeof v->members);
    v->gang = x->spec.gang;
    v->runs = x->runs;
    v->preemptions = j->preemptions;
    v->stop = x->stop;
    v->submit = x->submit;
    v->first_start = j->first_start;
    v->last_start = j->last_start;
    v->time_limit = x->spec.time_limit;
    v->executed = j->executed;
    memcpy(v->where, x->where, sizeof v->where);
    v->min_gpus = x->spec.min_gpus;
    v->max_gpus = x->spec.max_gpus;
    v->ckpt_step = -1;
    v->model_hints = -1;
    if (x->el) {
        v->generation = (int32_t)j->generation;
        v->rescales = j->rescales;
        v->failures = j->failures;
        v->target_gpus = j->state == GS_JOB_DRAINING ? j->target_gpus : 0;
        v->launching = j->state == GS_JOB_RUNNING && x->el->hint_gen < (int32_t)j->generation;
        v->hints = x->el->hints;
        v->hints_bad = x->el->hints_bad;
        v->ckpt_step = x->el->ckpt_step;
        v->model_hints = g->goodput && j->app ? x->el->model_hints : -1;
    }
}

/*
 * Rebuild the view chunk of slots [c << BITS, (c + 1) << BITS).  Final jobs whose
 * row is committed leave it for good (their spec is freed: nothing shows them).
 */
static void rebuild_chunk(gsd_sched *g, size_t c)
{
    size_t lo = c << GSD_CHUNK_BITS, hi = lo + ((size_t)1 << GSD_CHUNK_BITS);
    size_t nj = gs_engine_njobs(g->e);
    if (hi > nj) hi = nj;
    gsd_chunk_put(g->chunk[c]);
    g->chunk[c] = NULL;
    g->chunk_dirty[c] = 0;
    if (!g->chunk_nactive[c]) return;
    gsd_chunk *k = malloc(sizeof *k + (size_t)g->chunk_nactive[c] * sizeof k->v[0]);
    if (!k) abort();
    atomic_init(&k->refs, 1);
    k->n = 0;
    for (size_t slot = lo; slot < hi; slot++) {
        gsd_jobx *x = gsd_jx(g, (int32_t)slot);
        if (!x->active) continue;
        const gs_job *j = gs_engine_job(g->e, slot);
        if (gs_job_state_final(j->state)) {
            if (!x->dirty) {
                x->active = 0;
                g->chunk_nactive[c]--;
                gsd_spec_release(&x->spec);
                gsd_wait_free(x);
                gsd_el_free(x);
                free(x->spec_json);
                x->spec_json = NULL;
                free(x->alloc);
                x->alloc = NULL;
                gsd_acct_forget_later(g, (int32_t)slot); /* issue 16: memory (acct.c) */
            }
            continue;
        }
        fill_view(g, j, x, &k->v[k->n++]);
    }
    if (k->n)
        g->chunk[c] = k;
    else
        free(k);
}

void gsd_publish(gsd_sched *g, gs_time now)
{
    gsd_snap *s = calloc(1, sizeof *s);
    if (!s) abort();
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->posmu, NULL);
    s->now = now;
    g->qgen++; /* queue texts are asked again */
    s->cycle = g->cycle_no;
    /* job views: rebuild the changed chunks (all of them now and then), share the rest */
    int full = !g->sh.snap || now - g->last_full >= 100 * GS_MSEC;
    if (full) g->last_full = now;
    size_t used = (gs_engine_njobs(g->e) + ((size_t)1 << GSD_CHUNK_BITS) - 1) >> GSD_CHUNK_BITS;
    if (used > g->nchunk) used = g->nchunk;
    size_t nch = 0, nv = 0;
    for (size_t c = 0; c < used; c++) {
        if (g->chunk_dirty[c] || (full && g->chunk_nactive[c])) rebuild_chunk(g, c);
        if (g->chunk[c]) nch++, nv += (size_t)g->chunk[c]->n;
    }
    s->chunks = malloc((nch ? nch : 1) * sizeof *s->chunks);
    s->jobs = malloc((nv ? nv : 1) * sizeof *s->jobs);
    if (!s->chunks || !s->jobs) abort();
    for (size_t c = 0; c < used; c++) {
        gsd_chunk *k = g->chunk[c];
        if (!k) continue;
        atomic_fetch_add(&k->refs, 1);
        s->chunks[s->nchunks++] = k;
        for (int i = 0; i < k->n; i++) s->jobs[s->njobs++] = &k->v[i];
    }
    for (int st = 0; st < GS_JOB_NSTATES; st++)
        s->states[st] = gs_job_state_final((gs_job_state)st)
                            ? g->final_counts[st] + (int64_t)g->m.finished[st]
                            : g->live_states[st];
    /* nodes and GPUs */
    size_t nn = gs_cluster_nnodes(g->c), ng = gs_cluster_ngpus(g->c);
    s->nodes = calloc(nn ? nn : 1, sizeof *s->nodes);
    s->gpus = calloc(ng ? ng : 1, sizeof *s->gpus);
    if (!s->nodes || !s->gpus) abort();
    s->nnodes = nn;
    s->ngpus = ng;
    for (size_t n = 0; n < nn; n++) {
        const gs_node *nd = gs_cluster_node(g->c, (int)n);
        gsd_nview *v = &s->nodes[n];
        v->name = nd->name;
        v->chain = gsd_node_chain(g->c, (int)n);
        v->cell_type = gsd_node_cell_type(g->c, (int)n);
        v->first = g->node_first ? g->node_first[n] : (int32_t)n;
        s->nodes[v->first].ncells++; /* on the first; copied to the others below */
        v->gpu_lo = nd->gpu_lo;
        v->gpu_hi = nd->gpu_hi;
        v->gpus = nd->gpu_hi - nd->gpu_lo;
        v->cpus = nd->cpus;
        v->free_cpus = nd->free_cpus;
        v->mem_mb = nd->mem_mb;
        v->free_mem_mb = nd->free_mem_mb;
        v->drain = nd->down ? gsd_node_why(g, (int)n) : NULL;
        v->outside = gs_engine_node_outside(g->e, (int)n, &v->outside_asked);
        if (gsd_exec_can(g->x, GSD_XCAP_CLUSTER) && g->nodest) {
            static const char *const names[] = {"up", "drained", "down"};
            v->mgr = names[g->nodest[n].mgr];
            v->mgr_why = g->nodest[n].mgr_why;
        }
        if (g->nodest && g->nodest[n].bad) {
            v->bad = g->nodest[n].bad_why ? g->nodest[n].bad_why : "";
            v->bad_since = g->nodest[n].bad_since;
        }
        if (g->nodest && g->nodest[n].admin) { /* an admin's drain or down (nodeadm.c) */
            v->admin = gsd_nadm_name(g->nodest[n].admin);
            v->admin_why = g->nodest[n].admin_why;
            v->admin_by = g->nodest[n].admin_by;
            v->admin_since = g->nodest[n].admin_since;
        }
        for (int gi = nd->gpu_lo; gi < nd->gpu_hi; gi++) {
            const gs_gpu *gp = gs_cluster_gpu(g->c, gi);
            gsd_gview *gv = &s->gpus[gi];
            gv->node = (int32_t)n;
            gv->local = gp->local;
            /* unavailable and idle (a drained node's GPUs that jobs still hold count as
             * allocated: they run on) */
            gv->down = (gp->down || nd->down) && gp->owner < 0;
            gv->outside = gs_engine_gpu_outside(g->e, gi);
            gv->type = gs_cluster_gpu_type_name(g->c, gp->type);
            gv->job = gp->owner >= 0 ? gs_engine_job(g->e, (size_t)gp->owner)->id : -1;
            if (gp->owner >= 0) v->alloc++;
            if (gv->down) v->down++;
            if (g->gh_of && g->gh_of[gi] >= 0) { /* GPU health (gpuhealth.c) */
                const gsd_gpuh_gpu *h = &g->ghv[g->gh_of[gi]];
                gv->health = h->readings ? (h->bad ? 2 : 1) : 0;
                gv->health_why = h->bad ? gsd_intern(g, h->why) : NULL;
                gv->health_since = h->since;
                gv->temp_c = h->r.temp_c;
                gv->util = h->r.util;
                gv->xid_last = h->xid_seen;
                gv->mem_used = h->r.mem_used;
                gv->mem_total = h->r.mem_total;
                gv->ecc_uncorrected = h->r.ecc_uncorrected;
                gv->xid_total = h->xid_total;
                if (h->bad) v->unhealthy++;
            }
        }
    }
    for (size_t n = 0; n < nn; n++) s->nodes[n].ncells = s->nodes[s->nodes[n].first].ncells;
    /* VCs: declared (the cluster's HiveD config, then the policy's, e.g. quotas=), then the
     * others accepted jobs used (never one only rejected jobs named); guarantees as the policy
     * promises them; counters kept by gsd_track(). Linear in the number of VCs: engine VC names are
     * unique, so only the few declared ones need a duplicate check. */
    size_t ncl = gs_cluster_nvcs(g->c), nen = gs_engine_nvcs(g->e), npol = 0;
    while (gs_engine_vc_declared(g->e, npol)) npol++;
    size_t ndecl = ncl + npol, cap = ndecl + nen;
    s->vcs = calloc(cap ? cap : 1, sizeof *s->vcs);
    if (!s->vcs) abort();
    for (size_t i = 0; i < ndecl; i++) {
        const char *name =
            i < ncl ? gs_cluster_vc(g->c, (int)i)->name : gs_engine_vc_declared(g->e, i - ncl);
        int dup = 0;
        for (size_t k = 0; k < s->nvcs && !dup; k++) dup = !strcmp(s->vcs[k].name, name);
        if (dup) continue;
        gsd_vcview *v = &s->vcs[s->nvcs++];
        v->name = name;
        v->guaranteed = gs_engine_vc_guarantee(g->e, name);
        for (size_t e = 0; e < nen && e < g->nvcstat; e++) {
            if (strcmp(gs_engine_vc_name(g->e, (int)e), name)) continue;
            v->pending = g->vcstat[e].pending;
            v->pending_gpus = g->vcstat[e].pending_gpus;
            v->running = g->vcstat[e].running;
            v->allocated = g->vcstat[e].allocated;
            break;
        }
    }
    size_t ndeclv = s->nvcs;
    for (size_t e = 0; e < nen; e++) {
        /* a VC only rejected jobs named is no VC: it is not listed (see gsd_track) */
        if (e >= g->nvcstat || g->vcstat[e].jobs <= 0) continue;
        const char *name = gs_engine_vc_name(g->e, (int)e);
        int dup = 0;
        for (size_t k = 0; k < ndeclv && !dup; k++) dup = !strcmp(s->vcs[k].name, name);
        if (dup) continue;
        gsd_vcview *v = &s->vcs[s->nvcs++];
        v->name = name;
        v->guaranteed = gs_engine_vc_guarantee(g->e, name);
        if (e < g->nvcstat) {
            v->pending = g->vcstat[e].pending;
            v->pending_gpus = g->vcstat[e].pending_gpus;
            v->running = g->vcstat[e].running;
            v->allocated = g->vcstat[e].allocated;
        }
    }
    s->m = g->m;
    /* the topology: the previous snapshot's, shared */
    gsd_topo *tp = g->sh.snap ? g->sh.snap->topo : NULL;
    if (tp)
        atomic_fetch_add(&tp->refs, 1);
    else
        tp = topo_build(g->c);
    s->topo = tp;
    /* cycle percentiles over the recent window, at most a few times a second */
    gsd_snap *old = g->sh.snap;
    if (old && now - g->last_publish < 250 * GS_MSEC) {
        s->cycle_p50 = old->cycle_p50;
        s->cycle_p99 = old->cycle_p99;
        s->cycle_window = old->cycle_window;
    } else {
        size_t n = g->ncyc < 1024 ? g->ncyc : 1024;
        double tmp[1024];
        memcpy(tmp, g->cyc, n * sizeof *tmp);
        qsort(tmp, n, sizeof *tmp, cmp_double);
        s->cycle_window = n;
        s->cycle_p50 = n ? tmp[n / 2] : 0;
        size_t k99 = (size_t)((double)n * 0.99);
        s->cycle_p99 = n ? tmp[k99 < n ? k99 : n - 1] : 0;
        g->last_publish = now;
    }
    pthread_mutex_lock(&g->sh.snapmu);
    g->sh.snap = s;
    pthread_mutex_unlock(&g->sh.snapmu);
    gsd_snap_put(old);
    gsd_evbus_flush(g->sh.bus); /* events: what this snapshot shows may now be streamed */
}
