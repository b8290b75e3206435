/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched.c - `gsched serve`: startup, restart recovery, the scheduling loop
 * and graceful shutdown.
 *
 * One scheduling cycle, all on the scheduler thread:
 *   1. take the queued commands (submit, dry run, cancel) and apply them to
 *      the engine (new rows are INSERTed inside the cycle's transaction);
 *   2. poll the executor: task exits, SIGKILLs due after a grace period;
 *      runs whose tasks are all gone become engine calls
 *      (gs_engine_task_exited, gs_engine_cancel, ...);
 *   3. enforce time limits (start the stop protocol);
 *   4. gs_engine_advance(now): timers and one policy pass;
 *   5. write every observer record of 1-4 (events + job rows) and COMMIT -
 *      one transaction per cycle, so concurrent submits share one commit;
 *   6. publish a new snapshot for the HTTP threads;
 *   7. answer the commands (a submit is acknowledged only now, and the next
 *      listing shows it);
 *   8. act: launch started jobs, signal preempted / cancelled ones.
 * Invariant: nothing is acted on (process started or signalled, client
 * answered) before the state change behind it is committed.  If a commit
 * fails the daemon stops at once (exit 1) rather than act on state that is
 * not durable; the next start recovers from the last commit.
 *
 * Recovery (startup): every non-final job is re-added to a fresh engine in
 * id order - PENDING jobs are resubmitted with their ids and accounting,
 * RUNNING / PREEMPTED jobs are adopted on their recorded GPUs
 * (gs_engine_adopt) with their task processes found again through the run
 * directory (pid file + /proc start time, status files for tasks that
 * ended meanwhile); tasks that were lost requeue the job; processes no job
 * claims are killed.  So no acknowledged job is lost, no GPU is given
 * twice and no job runs twice at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "gsd.h"

/* Signal flags: the only process-wide state (set by handlers, read by the loop). */
static volatile sig_atomic_t g_sig_stop;
static volatile int g_wake_fd = -1;

/* ---- small helpers -------------------------------------------------------------------------- */

gs_time gsd_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (gs_time)ts.tv_sec * GS_SEC + ts.tv_nsec / 1000;
}

static double mono_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gsd_time_str(gs_time t, char *buf, size_t cap)
{
    time_t s = (time_t)(t / GS_SEC);
    struct tm tm;
    gmtime_r(&s, &tm);
    char b[32];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03dZ", b, (int)(t % GS_SEC / 1000));
}

void gsd_log(const char *fmt, ...)
{
    char ts[40], msg[2048];
    gsd_time_str(gsd_wall_now(), ts, sizeof ts);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s gsched: %s\n", ts, msg);
}

const char *gsd_stop_name(int stop)
{
    switch (stop) {
    case GSD_STOP_PREEMPT: return "preempt";
    case GSD_STOP_CANCEL: return "cancel";
    case GSD_STOP_TIMEOUT: return "timeout";
    case GSD_STOP_FAILED: return "failed";
    default: return NULL;
    }
}

static int stop_parse(const char *s)
{
    if (!s) return GSD_STOP_NONE;
    if (!strcmp(s, "preempt")) return GSD_STOP_PREEMPT;
    if (!strcmp(s, "cancel")) return GSD_STOP_CANCEL;
    if (!strcmp(s, "timeout")) return GSD_STOP_TIMEOUT;
    if (!strcmp(s, "failed")) return GSD_STOP_FAILED;
    return GSD_STOP_NONE;
}

static char *xstrdup(const char *s)
{
    if (!s) return NULL;
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q && n) abort();
    return q;
}

static uint64_t strhash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Long-lived copies of reason strings handed to the engine (it keeps the pointers). */
const char *gsd_intern(gsd *g, const char *s)
{
    if (!s) return NULL;
    gsd_strset *t = &g->strs;
    if ((t->n + 1) * 2 > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **nv = calloc(nc, sizeof *nv);
        if (!nv) abort();
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->v[i]) continue;
            size_t k = strhash(t->v[i]) & (nc - 1);
            while (nv[k]) k = (k + 1) & (nc - 1);
            nv[k] = t->v[i];
        }
        free(t->v);
        t->v = nv;
        t->cap = nc;
    }
    size_t k = strhash(s) & (t->cap - 1);
    while (t->v[k]) {
        if (!strcmp(t->v[k], s)) return t->v[k];
        k = (k + 1) & (t->cap - 1);
    }
    t->v[k] = xstrdup(s);
    t->n++;
    return t->v[k];
}

static void strset_release(gsd_strset *t)
{
    for (size_t i = 0; i < t->cap; i++) free(t->v[i]);
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* ---- metrics -------------------------------------------------------------------------------- */

static const double wait_bounds[] = {0.1, 0.5, 1,    2.5,  5,    10,    30,   60,
                                     300, 600, 1800, 3600, 7200, 21600, 86400};
static const double cycle_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                      0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};

void gsd_metrics_init(gsd_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->wait.bounds = wait_bounds;
    m->wait.nb = (int)(sizeof wait_bounds / sizeof *wait_bounds);
    m->jct = m->wait;
    m->cycle.bounds = cycle_bounds;
    m->cycle.nb = (int)(sizeof cycle_bounds / sizeof *cycle_bounds);
    m->commit = m->cycle;
}

void gsd_hist_observe(gsd_hist *h, double v)
{
    int i = 0;
    while (i < h->nb && v > h->bounds[i]) i++;
    if (i < h->nb)
        h->b[i]++;
    else
        h->inf++;
    h->count++;
    h->sum += v;
}

/* ---- per-job state -------------------------------------------------------------------------- */

static gsd_jobx *jx(gsd *g, int32_t slot)
{
    if ((size_t)slot >= g->njx) {
        size_t nc = g->njx ? g->njx : 1024;
        while (nc <= (size_t)slot) nc *= 2;
        g->jx = xrealloc(g->jx, nc * sizeof *g->jx);
        memset(g->jx + g->njx, 0, (nc - g->njx) * sizeof *g->jx);
        for (size_t i = g->njx; i < nc; i++) {
            g->jx[i].exit_code = INT32_MIN;
            g->jx[i].seen = -1;
        }
        g->njx = nc;
    }
    return &g->jx[slot];
}

static void chunk_touch(gsd *g, int32_t slot)
{
    size_t c = (size_t)slot >> GSD_CHUNK_BITS;
    if (c >= g->nchunk) {
        size_t nc = g->nchunk ? g->nchunk : 64;
        while (nc <= c) nc *= 2;
        g->chunk = xrealloc(g->chunk, nc * sizeof *g->chunk);
        g->chunk_dirty = xrealloc(g->chunk_dirty, nc * sizeof *g->chunk_dirty);
        g->chunk_nactive = xrealloc(g->chunk_nactive, nc * sizeof *g->chunk_nactive);
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
static void activate(gsd *g, int32_t slot)
{
    gsd_jobx *x = jx(g, slot);
    chunk_touch(g, slot);
    if (x->active) return;
    x->active = 1;
    g->chunk_nactive[(size_t)slot >> GSD_CHUNK_BITS]++;
}

static gsd_rec *push_rec(gsd *g, int type, int32_t slot, gs_time t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static gsd_rec *push_rec(gsd *g, int type, int32_t slot, gs_time t, const char *fmt, ...)
{
    if (g->nrecs == g->caprecs) {
        g->caprecs = g->caprecs ? g->caprecs * 2 : 256;
        g->recs = xrealloc(g->recs, g->caprecs * sizeof *g->recs);
    }
    gsd_rec *r = &g->recs[g->nrecs++];
    chunk_touch(g, slot);
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

static void mark_dirty(gsd *g, int32_t slot)
{
    gsd_jobx *x = jx(g, slot);
    if (!x->dirty) {
        x->dirty = 1;
        if (g->ndirty == g->capdirty) {
            g->capdirty = g->capdirty ? g->capdirty * 2 : 256;
            g->dirtyv = xrealloc(g->dirtyv, g->capdirty * sizeof *g->dirtyv);
        }
        g->dirtyv[g->ndirty++] = slot;
    }
    chunk_touch(g, slot);
    g->changed = 1;
}

/* Keep the per-VC and per-state counters in step with the job's state (O(1) per record). */
static void track(gsd *g, const gs_job *j, gsd_jobx *x)
{
    int st = j->state;
    /* a SUSPENDED job holds no GPUs in the engine (time-slicing gives them to others) */
    int cat = st == GS_JOB_PENDING && j->arrived               ? 1
              : st == GS_JOB_RUNNING || st == GS_JOB_PREEMPTED ? 2
                                                               : 0;
    if ((size_t)j->vc >= g->nvcstat) {
        size_t nn = g->nvcstat ? g->nvcstat * 2 : 16;
        while (nn <= (size_t)j->vc) nn *= 2;
        g->vcstat = xrealloc(g->vcstat, nn * sizeof *g->vcstat);
        memset(g->vcstat + g->nvcstat, 0, (nn - g->nvcstat) * sizeof *g->vcstat);
        g->nvcstat = nn;
    }
    gsd_vcstat *v = &g->vcstat[j->vc];
    if (x->cat == 1) v->pending--, v->pending_gpus -= j->gpus;
    if (x->cat == 2) v->running--, v->allocated -= j->gpus;
    if (cat == 1) v->pending++, v->pending_gpus += j->gpus;
    if (cat == 2) v->running++, v->allocated += j->gpus;
    x->cat = (int8_t)cat;
    if (x->seen != st) {
        if (x->seen >= 0 && !gs_job_state_final((gs_job_state)x->seen)) g->live_states[x->seen]--;
        if (!gs_job_state_final((gs_job_state)st)) g->live_states[st]++;
        x->seen = (int8_t)st;
    }
    if (cat == 2 && !x->inrun) {
        if (g->nrun == g->caprun) {
            g->caprun = g->caprun ? g->caprun * 2 : 64;
            g->runv = xrealloc(g->runv, g->caprun * sizeof *g->runv);
        }
        g->runv[g->nrun++] = j->slot;
        x->inrun = 1;
    }
}

/* "n0:0-3 n1:0,2" from a job's GPUs; also the "3,4,5" list of global indices. */
static void describe_alloc(const gs_cluster *c, const int32_t *gpus, int n, char *where,
                           size_t wcap, char **list)
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

/* ---- the observer --------------------------------------------------------------------------- */

static void observe(void *ud, const gs_record *r)
{
    gsd *g = ud;
    if (!r->job) {
        if (r->type == GS_REC_NODE_DOWN || r->type == GS_REC_NODE_UP)
            gsd_log("node %s is %s", gs_cluster_node(g->c, r->node)->name,
                    r->type == GS_REC_NODE_DOWN ? "down" : "up");
        return;
    }
    gs_job *j = r->job;
    gsd_jobx *x = jx(g, j->slot);
    mark_dirty(g, j->slot);
    track(g, j, x);
    if (r->reason) x->last_reason = gsd_intern(g, r->reason);
    if (g->in_recovery) return; /* restoring state that is already durable */
    if (r->type == GS_REC_SUBMIT && x->recovering) {
        x->recovering = 0;
        return;
    }
    switch (r->type) {
    case GS_REC_START:
        x->runs++;
        x->stop = GSD_STOP_NONE;
        x->exit_code = INT32_MIN;
        free(x->alloc);
        describe_alloc(g->c, j->alloc, j->nalloc, x->where, sizeof x->where, &x->alloc);
        if (x->runs == 1) gsd_hist_observe(&g->m.wait, gs_time_to_sec(r->t - x->submit));
        g->m.launches++;
        push_rec(g, r->type, j->slot, r->t, "run %d on %s", x->runs, x->where);
        return;
    case GS_REC_PREEMPT:
        g->m.preemptions++;
        if (x->stop == GSD_STOP_NONE) x->stop = GSD_STOP_PREEMPT;
        break;
    case GS_REC_REQUEUE:
        g->m.requeues++;
        x->stop = GSD_STOP_NONE;
        free(x->alloc);
        x->alloc = NULL;
        break;
    case GS_REC_SUSPEND:
        /* the engine released its GPUs (time-slicing); its stopped processes keep their GPU
         * memory.  The row keeps where it ran (placement), not an allocation. */
        free(x->alloc);
        x->alloc = NULL;
        push_rec(g, r->type, j->slot, r->t, "%s%sSIGSTOP; its GPU memory on %s stays held",
                 r->reason ? r->reason : "", r->reason ? ": " : "", x->where);
        return;
    case GS_REC_RESUME:
        free(x->alloc);
        describe_alloc(g->c, j->alloc, j->nalloc, x->where, sizeof x->where, &x->alloc);
        push_rec(g, r->type, j->slot, r->t, "%s%sSIGCONT on %s", r->reason ? r->reason : "",
                 r->reason ? ": " : "", x->where);
        return;
    case GS_REC_FINISH:
    case GS_REC_FAIL:
    case GS_REC_CANCEL:
    case GS_REC_REJECT:
        g->m.finished[j->state]++;
        if (j->state != GS_JOB_REJECTED)
            gsd_hist_observe(&g->m.jct, gs_time_to_sec(r->t - x->submit));
        x->stop = GSD_STOP_NONE;
        free(x->alloc);
        x->alloc = NULL;
        break;
    default: break;
    }
    push_rec(g, r->type, j->slot, r->t, "%s", r->reason ? r->reason : "");
}

/* ---- rows ----------------------------------------------------------------------------------- */

static void fill_row(gsd *g, const gs_job *j, gsd_jobx *x, gsd_jobrow *r)
{
    memset(r, 0, sizeof *r);
    r->id = j->id;
    r->grp = j->group;
    r->task_index = j->task_index;
    r->user = (char *)j->user;
    r->vc = (char *)j->vc_name;
    r->name = (char *)j->name;
    r->priority = j->priority;
    r->ntasks = j->ntasks;
    r->gpus_per_task = j->gpus_per_task;
    r->gang = x->spec.gang;
    r->state = (char *)gs_job_state_name(j->state);
    const char *reason = j->state == GS_JOB_PENDING && j->reason ? j->reason : x->last_reason;
    r->reason = (char *)reason;
    r->exit_code = x->exit_code == INT32_MIN ? GSD_NONE : x->exit_code;
    r->submit = x->submit;
    r->first_start = j->first_start == GS_TIME_NONE ? GSD_NONE : j->first_start;
    r->last_start = j->last_start == GS_TIME_NONE ? GSD_NONE : j->last_start;
    r->end = j->end == GS_TIME_NONE ? GSD_NONE : j->end;
    r->queued = j->queued;
    r->executed = j->executed;
    r->preemptions = j->preemptions;
    r->runs = x->runs;
    r->alloc = x->alloc;
    r->placement = x->where[0] ? x->where : NULL;
    r->stop = (char *)gsd_stop_name(x->stop);
    r->cancel_by = (char *)x->cancel_by;
    r->spec = x->spec_json;
    r->idem_key = x->idem_key;
    r->idem_hash = x->idem_hash;
    (void)g;
}

static const char *event_name(int type, const gsd_jobx *x)
{
    switch (type) {
    case GS_REC_START: return x->runs > 1 ? "resumed" : "started";
    case GSD_EV_CANCEL_REQ: return "cancel-requested";
    case GSD_EV_STOPPING: return "stopping";
    case GSD_EV_KILLED: return "killed";
    case GSD_EV_TASK_EXIT: return "task-exited";
    case GSD_EV_ADOPTED: return "adopted";
    case GSD_EV_TIMEOUT: return "time-limit";
    case GSD_EV_LAUNCH_FAIL: return "launch-failed";
    case GS_REC_SUSPEND: return "suspended";
    case GS_REC_RESUME: return "continued"; /* SIGCONT; "resumed" is a start after a requeue */
    default: return type < GS_REC_NTYPES ? gs_rec_type_name((gs_rec_type)type) : "event";
    }
}

/* Write the cycle's records and rows; COMMIT.  Any failure is fatal (see the header). */
static int commit_cycle(gsd *g)
{
    double t0 = mono_sec();
    int rc = 0;
    /* new rows were INSERTed at submission, inside this transaction */
    for (size_t i = 0; i < g->nrecs && !rc; i++) {
        gsd_rec *r = &g->recs[i];
        gs_job *j = gs_engine_job(g->e, (size_t)r->slot);
        gsd_jobx *x = jx(g, r->slot);
        rc = gsd_store_add_event(g->store, j->id, r->t, event_name(r->type, x), r->reason);
    }
    for (size_t i = 0; i < g->ndirty && !rc; i++) {
        int32_t s = g->dirtyv[i];
        gsd_jobx *x = jx(g, s);
        x->dirty = 0;
        if (!x->spec_json) continue; /* a job already forgotten (late event) */
        gsd_jobrow row;
        fill_row(g, gs_engine_job(g->e, (size_t)s), x, &row);
        rc = gsd_store_update_job(g->store, &row);
    }
    g->ndirty = 0;
    for (size_t i = 0; i < g->ntput && !rc; i++) {
        gsd_taskput *t = &g->tput[i];
        gsd_taskrow tr = {t->job_id, t->run, t->idx, t->pid, t->ticks, t->exit_code, t->gpus};
        rc = gsd_store_put_task(g->store, &tr);
    }
    for (size_t i = 0; i < g->ntput; i++) free(g->tput[i].gpus);
    g->ntput = 0;
    size_t nj = gs_engine_njobs(g->e);
    if (!rc && nj != g->meta_njobs) {
        rc = gsd_store_meta_set(g->store, "next_id", gs_engine_job(g->e, nj - 1)->id + 1);
        g->meta_njobs = nj;
    }
    if (!rc) rc = gsd_store_commit(g->store);
    if (rc) {
        gsd_log("FATAL: cannot commit to the database: %s", gsd_store_errmsg(g->store));
        g->fatal = 1;
        return rc;
    }
    g->m.commits++;
    gsd_hist_observe(&g->m.commit, mono_sec() - t0);
    return 0;
}

/* ---- commands ------------------------------------------------------------------------------- */

static void cmd_fail(gsd_cmd *c, int status, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void cmd_fail(gsd_cmd *c, int status, int err, const char *fmt, ...)
{
    c->status = status;
    c->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
}

void gsd_cmd_free(gsd_cmd *c)
{
    if (!c) return;
    gsd_spec_release(&c->spec);
    free(c->spec_json);
    free(c->idem_key);
    if (c->result) json_decref(c->result);
    free(c);
}

/* Parts of a submission: the head slot and, for non-gang jobs, the slots right after it. */
static size_t group_slots(gsd *g, const gs_job *head, int32_t *out, size_t cap)
{
    size_t n = 0;
    size_t nj = gs_engine_njobs(g->e);
    for (size_t s = (size_t)head->slot; s < nj && n < cap; s++) {
        gs_job *j = gs_engine_job(g->e, s);
        if (s != (size_t)head->slot && j->group != head->id) break;
        if (s == (size_t)head->slot || j->group == head->id) out[n++] = (int32_t)s;
    }
    return n;
}

static json_t *submit_result(gsd *g, gs_job *head)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(head->id));
    json_t *ids = json_array();
    int32_t slots[GSD_MAX_GPUS];
    size_t n = group_slots(g, head, slots, GSD_MAX_GPUS);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(ids, json_integer(gs_engine_job(g->e, (size_t)slots[i])->id));
    json_object_set_new(o, "ids", ids);
    json_object_set_new(o, "state", json_string(gs_job_state_name(head->state)));
    return o;
}

static void do_submit(gsd *g, gsd_cmd *c, gs_time now)
{
    c->job_id = -1;
    gsd_spec *sp = &c->spec;
    if (c->idem_key) {
        int64_t id;
        char *hash = NULL;
        int rc = gsd_store_find_idem(g->store, c->user, c->idem_key, &id, &hash);
        if (rc == 0) {
            int same = hash && !strcmp(hash, c->idem_hash);
            free(hash);
            if (!same) {
                cmd_fail(c, 409, GS_ECONFLICT,
                         "Idempotency-Key '%s' was already used for a different request",
                         c->idem_key);
                return;
            }
            /* the first answer again: 422 if the job was rejected, else the ids (200) */
            gs_job *j = gs_engine_find_job(g->e, id);
            char *state = NULL, *reason = NULL;
            if (!j) gsd_store_job_state(g->store, id, &state, &reason);
            int rejected = j ? j->state == GS_JOB_REJECTED : state && !strcmp(state, "REJECTED");
            const char *why = j ? j->reason : reason;
            if (rejected) {
                cmd_fail(c, 422, GS_ENEVER, "job %lld rejected: %s", (long long)id,
                         why ? why : "it can never run here");
                c->result =
                    json_pack("{s:I,s:b}", "job_id", (json_int_t)id, "idempotent_replay", 1);
            } else {
                c->status = 200;
                c->result = j ? submit_result(g, j) : json_pack("{s:I}", "id", (json_int_t)id);
                if (!j && state) json_object_set_new(c->result, "state", json_string(state));
                json_object_set_new(c->result, "idempotent_replay", json_true());
            }
            free(state);
            free(reason);
            return;
        }
        if (rc != GS_ENOENT) {
            cmd_fail(c, 500, GS_EIO, "database error: %s", gsd_store_errmsg(g->store));
            return;
        }
    }
    /* every VC name a job uses becomes a queue, a row in listings and a metrics label:
     * bound how many a (possibly hostile) client can create */
    const char *vcname = sp->vc ? sp->vc : "default";
    size_t nvc = gs_engine_nvcs(g->e);
    if (nvc >= GSD_MAX_VCS) {
        int known = 0;
        for (size_t v = 0; v < nvc && !known; v++)
            known = !strcmp(gs_engine_vc_name(g->e, (int)v), vcname);
        if (!known) {
            cmd_fail(c, 400, GS_ERANGE,
                     "'vc': this daemon already has %d virtual clusters; '%s' would be a new one",
                     GSD_MAX_VCS, vcname);
            c->result = json_pack("{s:s}", "field", "vc");
            return;
        }
    }
    gs_job_spec js;
    gsd_spec_job(sp, g->o.default_duration, &js);
    size_t before = gs_engine_njobs(g->e);
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_job *head = NULL;
    int rc = gs_engine_submit(g->e, &js, now, &head, &d);
    if (rc) {
        cmd_fail(c, rc == GS_ENOMEM ? 500 : 400, rc, "%s", d.msg[0] ? d.msg : gs_strerror(rc));
        return;
    }
    size_t after = gs_engine_njobs(g->e);
    for (size_t s = before; s < after; s++) {
        gsd_jobx *x = jx(g, (int32_t)s);
        gs_job *j = gs_engine_job(g->e, s);
        if (s == before) {
            x->spec = *sp; /* take ownership */
            gsd_spec_init(sp);
            x->idem_key = c->idem_key ? xstrdup(c->idem_key) : NULL;
            x->idem_hash = c->idem_key ? xstrdup(c->idem_hash) : NULL;
        } else {
            gs_diag dd;
            const char *f;
            if (gsd_spec_parse("spec", c->spec_json, strlen(c->spec_json), &x->spec, &dd, &f))
                abort(); /* the canonical form of a valid spec always parses */
        }
        x->spec_json = xstrdup(c->spec_json);
        x->submit = now;
        x->runs = 0;
        x->stop = GSD_STOP_NONE;
        x->exit_code = INT32_MIN;
        x->last_reason = NULL;
        /* INSERT now, inside the cycle's transaction: a second submit with the same
         * Idempotency-Key later in this cycle finds this row */
        gsd_jobrow row;
        fill_row(g, j, x, &row);
        if (gsd_store_insert_job(g->store, &row)) {
            gsd_log("FATAL: cannot insert job %lld: %s", (long long)j->id,
                    gsd_store_errmsg(g->store));
            g->fatal = 1;
        }
        free(x->idem_key);
        free(x->idem_hash);
        x->idem_key = x->idem_hash = NULL;
        activate(g, (int32_t)s);
        g->m.submitted++;
    }
    c->job_id = head->id;
    g->changed = 1;
}

/* Answer a submit after the cycle: 201, or 422 when the job was rejected on arrival. */
static void finish_submit(gsd *g, gsd_cmd *c)
{
    gs_job *head = c->job_id >= 0 ? gs_engine_find_job(g->e, c->job_id) : NULL;
    if (!head) return;
    if (head->state == GS_JOB_REJECTED) {
        cmd_fail(c, 422, GS_ENEVER, "job %lld rejected: %s", (long long)head->id,
                 head->reason ? head->reason : "it can never run here");
        c->result = json_pack("{s:I}", "job_id", (json_int_t)head->id);
        return;
    }
    c->status = 201;
    c->result = submit_result(g, head);
}

static void do_dryrun(gsd *g, gsd_cmd *c)
{
    const gsd_spec *sp = &c->spec;
    json_t *o = json_object();
    gs_job tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.ntasks = sp->gang ? sp->ntasks : 1;
    tmp.gpus_per_task = sp->gpus_per_task;
    tmp.gpus = tmp.ntasks * tmp.gpus_per_task;
    tmp.cpus_per_task = sp->cpus_per_task;
    tmp.mem_mb_per_task = sp->mem_mb_per_task;
    tmp.pinned_cell = -1;
    tmp.gpu_type = -1;
    const char *why = NULL;
    char whyb[256];
    if (sp->gpu_type && *sp->gpu_type) {
        tmp.gpu_type = gs_cluster_find_gpu_type(g->c, sp->gpu_type);
        if (tmp.gpu_type < 0) {
            size_t n = 0;
            n += (size_t)snprintf(whyb, sizeof whyb,
                                  "unknown GPU type '%s' (cluster has:", sp->gpu_type);
            for (size_t t = 0; t < gs_cluster_ngpu_types(g->c) && n < sizeof whyb; t++)
                n += (size_t)snprintf(whyb + n, sizeof whyb - n, " %s",
                                      gs_cluster_gpu_type_name(g->c, (int)t));
            if (n < sizeof whyb) snprintf(whyb + n, sizeof whyb - n, ")");
            why = whyb;
        }
    }
    if (sp->pinned_cell && *sp->pinned_cell) {
        tmp.pinned_cell = gs_cluster_find_pinned(g->c, sp->pinned_cell);
        if (tmp.pinned_cell < 0) why = "unknown pinned cell";
    }
    int feasible = 0, fits = 0;
    gs_place_req r;
    gs_engine_place_req(g->e, &tmp, GS_LOCALITY_ANY, &r);
    if (!why) {
        char fb[256] = "";
        feasible = gs_place_feasible(g->c, &r, fb, sizeof fb) == 0;
        if (!feasible) {
            snprintf(whyb, sizeof whyb, "%s", fb[0] ? fb : "can never fit this cluster");
            why = whyb;
        }
    }
    json_t *pl = json_array();
    if (feasible) {
        int *out = malloc((size_t)tmp.gpus * sizeof *out);
        if (!out) abort();
        gs_engine_place_req(g->e, &tmp, GS_LOCALITY_STRICT, &r);
        int rc = gs_place_find(g->c, &r, out);
        if (rc) {
            gs_engine_place_req(g->e, &tmp, GS_LOCALITY_ANY, &r);
            rc = gs_place_find(g->c, &r, out);
        }
        fits = rc == 0;
        if (fits) {
            for (int t = 0; t < tmp.ntasks; t++) {
                json_t *gl = json_array();
                int node = gs_cluster_gpu(g->c, out[t * tmp.gpus_per_task])->node;
                for (int k = 0; k < tmp.gpus_per_task; k++)
                    json_array_append_new(
                        gl,
                        json_integer(gs_cluster_gpu(g->c, out[t * tmp.gpus_per_task + k])->local));
                json_array_append_new(pl, json_pack("{s:i,s:s,s:o}", "task", t, "node",
                                                    gs_cluster_node(g->c, node)->name, "gpus", gl));
            }
        } else {
            snprintf(whyb, sizeof whyb, "needs %d GPU(s); %d of %d are free now", tmp.gpus,
                     gs_cluster_free(g->c), (int)gs_cluster_ngpus(g->c));
            why = whyb;
        }
        free(out);
    }
    /* jobs that would be ahead of it in its queue */
    int ahead = 0;
    const char *vc = sp->vc ? sp->vc : "default";
    for (size_t i = 0; g->snap && i < g->snap->njobs; i++) {
        const gsd_jview *v = g->snap->jobs[i];
        if (v->state == GS_JOB_PENDING && gsd_queue_same(g->order, v->vc, vc) &&
            gsd_queue_ahead(g->order, v->priority, v->id, sp->priority, INT64_MAX))
            ahead++;
    }
    json_object_set_new(o, "fits_now", json_boolean(fits));
    json_object_set_new(o, "feasible", json_boolean(feasible));
    json_object_set_new(o, "placement", pl);
    json_object_set_new(o, "gpus", json_integer(tmp.gpus));
    json_object_set_new(o, "free_gpus", json_integer(gs_cluster_free(g->c)));
    json_object_set_new(o, "pending_ahead", json_integer(ahead));
    json_object_set_new(o, "policy", json_string(gs_engine_policy_name(g->e)));
    if (why) json_object_set_new(o, "reason", json_string(why));
    json_object_set_new(o, "note",
                        json_string("placement by free GPUs now; the policy may still make the job "
                                    "wait (queue order, quotas, priorities)"));
    c->status = 200;
    c->result = o;
}

static gs_time job_grace(gsd *g, const gsd_jobx *x)
{
    return x->spec.grace > 0 ? x->spec.grace : g->o.grace;
}

static int cancel_one(gsd *g, gs_job *j, const char *by, gs_time now)
{
    gsd_jobx *x = jx(g, j->slot);
    if (gs_job_state_final(j->state)) return GS_ESTATE;
    char why[160];
    snprintf(why, sizeof why, "cancelled by %s", by);
    if (j->state == GS_JOB_PENDING) {
        x->cancel_by = gsd_intern(g, by);
        return gs_engine_cancel(g->e, j, gsd_intern(g, why), now);
    }
    /* holding GPUs: stop the tasks first; the job ends (and frees its GPUs) once they are gone */
    if (x->stop == GSD_STOP_CANCEL) return 0;
    x->stop = GSD_STOP_CANCEL;
    x->cancel_by = gsd_intern(g, by);
    mark_dirty(g, j->slot);
    push_rec(g, GSD_EV_CANCEL_REQ, j->slot, now, "by %s: SIGTERM, SIGKILL after %llds", by,
             (long long)(job_grace(g, x) / GS_SEC));
    return 0;
}

static void do_cancel(gsd *g, gsd_cmd *c, gs_time now)
{
    gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    if (gs_job_state_final(j->state)) {
        cmd_fail(c, 409, GS_ESTATE, "job %lld is already %s", (long long)j->id,
                 gs_job_state_name(j->state));
        return;
    }
    int32_t slots[GSD_MAX_GPUS];
    size_t n = j->group == j->id ? group_slots(g, j, slots, GSD_MAX_GPUS) : 0;
    if (!n) slots[n++] = j->slot;
    json_t *ids = json_array(), *stopping = json_array();
    for (size_t i = 0; i < n; i++) {
        gs_job *p = gs_engine_job(g->e, (size_t)slots[i]);
        if (gs_job_state_final(p->state)) continue;
        if (cancel_one(g, p, c->user, now)) continue;
        json_array_append_new(gs_job_state_final(p->state) ? ids : stopping, json_integer(p->id));
    }
    c->status = 200;
    c->result =
        json_pack("{s:I,s:o,s:o,s:I}", "id", (json_int_t)j->id, "cancelled", ids, "stopping",
                  stopping, "grace_seconds", (json_int_t)(job_grace(g, jx(g, j->slot)) / GS_SEC));
}

/* ---- executor events ------------------------------------------------------------------------ */

static void task_put(gsd *g, int64_t job, int run, int idx, int64_t pid, int64_t ticks,
                     int64_t code, const char *gpus)
{
    if (g->ntput == g->captput) {
        g->captput = g->captput ? g->captput * 2 : 64;
        g->tput = xrealloc(g->tput, g->captput * sizeof *g->tput);
    }
    g->tput[g->ntput++] = (gsd_taskput){job, run, idx, pid, ticks, code, xstrdup(gpus)};
}

static void finalize_run(gsd *g, gs_job *j, const gsd_xev *ev, gs_time now)
{
    gsd_jobx *x = jx(g, j->slot);
    if (g->nforget == g->capforget) {
        g->capforget = g->capforget ? g->capforget * 2 : 64;
        g->forget = xrealloc(g->forget, g->capforget * sizeof *g->forget);
    }
    g->forget[g->nforget++] = j->id;
    if (j->state == GS_JOB_SUSPENDED) {
        /* a suspended job's tasks are gone: cancelled (stopped on request), or ended while
         * stopped (killed from outside); either way it cannot continue */
        x->exit_code = ev->exit_code;
        char why[200];
        if (x->stop == GSD_STOP_CANCEL)
            snprintf(why, sizeof why, "cancelled by %s", x->cancel_by ? x->cancel_by : "?");
        else
            snprintf(why, sizeof why, "its tasks ended while it was suspended (exit code %d)",
                     ev->exit_code);
        gs_engine_cancel(g->e, j, gsd_intern(g, why), now);
        return;
    }
    if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_PREEMPTED) return;
    x->exit_code = ev->exit_code;
    char why[200];
    if (x->stop == GSD_STOP_CANCEL) {
        snprintf(why, sizeof why, "cancelled by %s", x->cancel_by ? x->cancel_by : "?");
        gs_engine_cancel(g->e, j, gsd_intern(g, why), now);
        return;
    }
    if (j->state == GS_JOB_PREEMPTED) {
        snprintf(why, sizeof why, "tasks stopped%s",
                 ev->killed ? " (SIGKILL after grace period)" : "");
        gs_engine_task_exited(g->e, j, ev->exit_code, gsd_intern(g, why), now);
        return;
    }
    if (ev->never_started || (ev->lost && x->stop != GSD_STOP_TIMEOUT && x->lost_requeues < 3)) {
        if (!ev->never_started) x->lost_requeues++;
        const char *r = ev->never_started ? "never started before a daemon restart: requeued"
                                          : "task lost (no exit status): requeued";
        gs_engine_preempt(g->e, j, r);
        gs_engine_task_exited(g->e, j, ev->exit_code, r, now);
        return;
    }
    if (x->stop == GSD_STOP_TIMEOUT) {
        char lim[32];
        gsd_format_duration(x->spec.time_limit, lim, sizeof lim);
        snprintf(why, sizeof why, "time limit of %s exceeded", lim);
        x->exit_code = ev->exit_code ? ev->exit_code : 124;
        gs_engine_task_exited(g->e, j, x->exit_code, gsd_intern(g, why), now);
        return;
    }
    if (ev->exit_code) {
        if (ev->msg)
            snprintf(why, sizeof why, "task %d exited with code %d: %s", ev->failed_task,
                     ev->exit_code, ev->msg);
        else
            snprintf(why, sizeof why, "task %d exited with code %d", ev->failed_task,
                     ev->exit_code);
    } else {
        snprintf(why, sizeof why, "all tasks exited with code 0");
    }
    gs_engine_task_exited(g->e, j, ev->exit_code, gsd_intern(g, why), now);
}

static void on_xev(void *ud, const gsd_xev *ev)
{
    gsd *g = ud;
    gs_job *j = gs_engine_find_job(g->e, ev->job_id);
    if (!j) return;
    gs_time now = g->last_now;
    gsd_jobx *x = jx(g, j->slot);
    switch (ev->kind) {
    case GSD_X_TASK_STARTED:
        task_put(g, ev->job_id, ev->run, ev->task, ev->pid, ev->start_ticks, GSD_NONE, ev->gpus);
        break;
    case GSD_X_TASK_EXITED:
        task_put(g, ev->job_id, ev->run, ev->task, ev->pid ? ev->pid : GSD_NONE, GSD_NONE,
                 ev->exit_code, NULL);
        if (ev->msg && ev->exit_code >= 126 && ev->exit_code <= 127 && !ev->pid) {
            g->m.launch_failures++;
            push_rec(g, GSD_EV_LAUNCH_FAIL, j->slot, now, "task %d: %s", ev->task, ev->msg);
        } else {
            push_rec(g, GSD_EV_TASK_EXIT, j->slot, now, "task %d exited with code %d%s%s", ev->task,
                     ev->exit_code, ev->msg ? ": " : "", ev->msg ? ev->msg : "");
        }
        break;
    case GSD_X_PEER_FAILED:
        if (x->stop == GSD_STOP_NONE) x->stop = GSD_STOP_FAILED;
        mark_dirty(g, j->slot);
        push_rec(g, GSD_EV_STOPPING, j->slot, now,
                 "task %d failed (code %d): stopping the other tasks", ev->task, ev->exit_code);
        break;
    case GSD_X_KILLED:
        g->m.kills++;
        push_rec(g, GSD_EV_KILLED, j->slot, now, "grace period of %llds over: SIGKILL",
                 (long long)(job_grace(g, x) / GS_SEC));
        break;
    case GSD_X_RUN_DONE: finalize_run(g, j, ev, now); break;
    }
}

/* ---- actions after the commit --------------------------------------------------------------- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 29500;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = 29500;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void launch(gsd *g, gs_job *j, gs_time now)
{
    gsd_jobx *x = jx(g, j->slot);
    int nt = j->ntasks;
    const char **node = calloc((size_t)nt, sizeof *node);
    char **cuda = calloc((size_t)nt, sizeof *cuda), **gl = calloc((size_t)nt, sizeof *gl);
    if (!node || !cuda || !gl) abort();
    for (int t = 0; t < nt; t++) {
        size_t cap = (size_t)j->gpus_per_task * 12 + 1;
        cuda[t] = malloc(cap);
        gl[t] = malloc(cap);
        if (!cuda[t] || !gl[t]) abort();
        size_t a = 0, b = 0;
        for (int k = 0; k < j->gpus_per_task; k++) {
            int gi = j->alloc[t * j->gpus_per_task + k];
            const gs_gpu *gp = gs_cluster_gpu(g->c, gi);
            a += (size_t)snprintf(cuda[t] + a, cap - a, k ? ",%d" : "%d", gp->local);
            b += (size_t)snprintf(gl[t] + b, cap - b, k ? ",%d" : "%d", gi);
            node[t] = gs_cluster_node(g->c, gp->node)->name;
        }
    }
    x->master_port = free_port();
    gsd_launch l = {.job_id = j->id,
                    .run = x->runs,
                    .ntasks = nt,
                    .task_index_base = j->task_index,
                    .world_size = x->spec.ntasks,
                    .task_node = node,
                    .task_cuda = (const char *const *)cuda,
                    .task_gpus = (const char *const *)gl,
                    .spec = &x->spec,
                    .group = j->group,
                    .master_port = x->master_port,
                    .grace = job_grace(g, x)};
    if (gsd_exec_launch(g->x, &l, now, on_xev, g) == GS_EEXIST)
        gsd_log("job %lld: a run is still registered; not launching twice", (long long)j->id);
    for (int t = 0; t < nt; t++) {
        free(cuda[t]);
        free(gl[t]);
    }
    free(node);
    free(cuda);
    free(gl);
}

static void act(gsd *g, gs_time now)
{
    /* runs that ended and whose outcome is now durable: forget them first, so a job that
     * was requeued and started again in the same cycle can be launched */
    for (size_t i = 0; i < g->nforget; i++) gsd_exec_forget(g->x, g->forget[i]);
    g->nforget = 0;
    for (size_t i = 0; i < g->nrecs; i++) {
        gsd_rec *r = &g->recs[i];
        gs_job *j = gs_engine_job(g->e, (size_t)r->slot);
        gsd_jobx *x = jx(g, r->slot);
        char ts[40];
        switch (r->type) {
        case GS_REC_START:
            gsd_log("job %lld (%s) %s: %s", (long long)j->id, j->user,
                    x->runs > 1 ? "resumed" : "started", r->reason);
            launch(g, j, now);
            break;
        case GS_REC_PREEMPT:
        case GSD_EV_CANCEL_REQ:
        case GSD_EV_TIMEOUT:
            gsd_log("job %lld %s: %s", (long long)j->id, event_name(r->type, x), r->reason);
            gsd_exec_stop(g->x, j->id, now, job_grace(g, x));
            break;
        case GS_REC_SUSPEND:
        case GS_REC_RESUME:
            /* SIGSTOP / SIGCONT to every task's process group; the stopped processes keep
             * their GPU memory.  A job being stopped (preempted, cancelled, over its time
             * limit) is left to finish its stop: freezing it would only delay its exit. */
            if (r->type == GS_REC_SUSPEND && x->stop != GSD_STOP_NONE) {
                gsd_log("job %lld suspended while stopping (%s): no SIGSTOP", (long long)j->id,
                        gsd_stop_name(x->stop));
                break;
            }
            gsd_log("job %lld %s%s%s", (long long)j->id, event_name(r->type, x),
                    r->reason[0] ? ": " : "", r->reason);
            if (gsd_exec_suspend(g->x, j->id, r->type == GS_REC_SUSPEND) == GS_ENOENT)
                gsd_log("job %lld: no tasks to %s", (long long)j->id,
                        r->type == GS_REC_SUSPEND ? "suspend" : "continue");
            break;
        case GS_REC_FINISH:
        case GS_REC_FAIL:
        case GS_REC_CANCEL:
        case GS_REC_REJECT:
        case GS_REC_REQUEUE:
            gsd_time_str(r->t, ts, sizeof ts);
            gsd_log("job %lld %s%s%s", (long long)j->id, event_name(r->type, x),
                    r->reason[0] ? ": " : "", r->reason);
            break;
        default: break;
        }
    }
}

/* ---- snapshot ------------------------------------------------------------------------------- */

static void gsd_chunk_put(gsd_chunk *c)
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
    free(s);
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

int gsd_order_for_policy(const char *policy)
{
    if (!policy) return GSD_ORDER_GLOBAL;
    if (!strcmp(policy, "hived") || !strcmp(policy, "private")) return GSD_ORDER_VC_PRIORITY;
    if (!strcmp(policy, "yarn-cs") || !strcmp(policy, "quota")) return GSD_ORDER_VC;
    return GSD_ORDER_GLOBAL;
}

int gsd_queue_same(int order, const char *vca, const char *vcb)
{
    return order == GSD_ORDER_GLOBAL || !strcmp(vca ? vca : "default", vcb ? vcb : "default");
}

int gsd_queue_ahead(int order, int prio_a, int64_t id_a, int prio_b, int64_t id_b)
{
    if (order == GSD_ORDER_VC_PRIORITY && prio_a != prio_b) return prio_a > prio_b;
    return id_a < id_b; /* ids follow submission order */
}

void gsd_queue_text(int order, const char *policy, const char *vc, char *buf, size_t cap)
{
    static const struct {
        const char *policy, *how;
    } reorder[] = {{"las", "attained service"},
                   {"tiresias-las", "attained service"},
                   {"tiresias-gittins", "attained service (Gittins index)"},
                   {"srtf", "expected remaining time"},
                   {"srsf", "expected remaining service"},
                   {"sjf", "expected run time"}};
    const char *how = NULL;
    for (size_t i = 0; policy && i < sizeof reorder / sizeof *reorder; i++)
        if (!strcmp(policy, reorder[i].policy)) how = reorder[i].how;
    if (order == GSD_ORDER_VC_PRIORITY)
        snprintf(buf, cap, "in VC %s (by priority, then submission)", vc ? vc : "default");
    else if (order == GSD_ORDER_VC)
        snprintf(buf, cap, "in VC %s (by submission)", vc ? vc : "default");
    else if (how)
        snprintf(buf, cap, "in the queue (by submission; %s reorders it by %s)", policy, how);
    else
        snprintf(buf, cap, "in the queue (by submission)");
}

int gsd_snap_position(const gsd_snap *s, const gsd_jview *v)
{
    if (v->state != GS_JOB_PENDING) return 0;
    int pos = 1;
    for (size_t i = 0; i < s->njobs; i++) {
        const gsd_jview *o = s->jobs[i];
        if (o == v || o->state != GS_JOB_PENDING || !gsd_queue_same(s->order, o->vc, v->vc))
            continue;
        pos += gsd_queue_ahead(s->order, o->priority, o->id, v->priority, v->id);
    }
    return pos;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int64_t vc_guarantee(gsd *g, const char *name)
{
    int k = gs_cluster_find_vc(g->c, name);
    if (k >= 0) return gs_cluster_vc(g->c, k)->gpus;
    for (size_t i = 0; i < g->nquota; i++)
        if (!strcmp(g->quota_vc[i], name)) return g->quota_gpus[i];
    return -1;
}

static void fill_view(const gs_job *j, const gsd_jobx *x, int free_gpus, gsd_jview *v)
{
    v->id = j->id;
    v->group = j->group;
    v->task_index = j->task_index;
    v->name = j->name;
    v->user = j->user;
    v->vc = j->vc_name;
    /* a policy that did not look at the job (e.g. fifo with no free GPU) gave no reason */
    const char *dflt = j->gpus > free_gpus ? "Resources" : "Priority";
    v->reason = j->state == GS_JOB_PENDING ? (j->reason ? j->reason : dflt) : x->last_reason;
    v->state = j->state;
    v->priority = j->priority;
    v->ntasks = j->ntasks;
    v->gpus_per_task = j->gpus_per_task;
    v->gpus = j->gpus;
    v->gang = x->spec.gang;
    v->runs = x->runs;
    v->preemptions = j->preemptions;
    v->stop = x->stop;
    v->submit = x->submit;
    v->first_start = j->first_start;
    v->last_start = j->last_start;
    memcpy(v->where, x->where, sizeof v->where);
}

/*
 * Rebuild the view chunk of slots [c << BITS, (c + 1) << BITS).  Final jobs whose
 * row is committed leave it for good (their spec is freed: nothing shows them).
 */
static void rebuild_chunk(gsd *g, size_t c)
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
        gsd_jobx *x = jx(g, (int32_t)slot);
        if (!x->active) continue;
        const gs_job *j = gs_engine_job(g->e, slot);
        if (gs_job_state_final(j->state)) {
            if (!x->dirty) {
                x->active = 0;
                g->chunk_nactive[c]--;
                gsd_spec_release(&x->spec);
                free(x->spec_json);
                x->spec_json = NULL;
                free(x->alloc);
                x->alloc = NULL;
            }
            continue;
        }
        fill_view(j, x, gs_cluster_free(g->c), &k->v[k->n++]);
    }
    if (k->n)
        g->chunk[c] = k;
    else
        free(k);
}

static void publish(gsd *g, gs_time now)
{
    gsd_snap *s = calloc(1, sizeof *s);
    if (!s) abort();
    atomic_init(&s->refs, 1);
    s->order = g->order;
    s->now = now;
    s->cycle = g->cycle_no;
    /* job views: rebuild the changed chunks (all of them now and then), share the rest */
    int full = !g->snap || now - g->last_full >= 100 * GS_MSEC;
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
        v->gpu_lo = nd->gpu_lo;
        v->gpu_hi = nd->gpu_hi;
        v->gpus = nd->gpu_hi - nd->gpu_lo;
        v->cpus = nd->cpus;
        v->free_cpus = nd->free_cpus;
        v->mem_mb = nd->mem_mb;
        v->free_mem_mb = nd->free_mem_mb;
        for (int gi = nd->gpu_lo; gi < nd->gpu_hi; gi++) {
            const gs_gpu *gp = gs_cluster_gpu(g->c, gi);
            gsd_gview *gv = &s->gpus[gi];
            gv->node = (int32_t)n;
            gv->local = gp->local;
            gv->down = gp->down || nd->down;
            gv->type = gs_cluster_gpu_type_name(g->c, gp->type);
            gv->job = gp->owner >= 0 ? gs_engine_job(g->e, (size_t)gp->owner)->id : -1;
            if (gp->owner >= 0) v->alloc++;
            if (gv->down) v->down++;
        }
    }
    /* VCs: declared (HiveD config, quotas=), then the others jobs used; counters kept by
     * track().  Linear in the number of VCs: engine VC names are unique, so only the few
     * declared ones need a duplicate check. */
    size_t ncl = gs_cluster_nvcs(g->c), nen = gs_engine_nvcs(g->e);
    size_t ndecl = ncl + g->nquota, cap = ndecl + nen;
    s->vcs = calloc(cap ? cap : 1, sizeof *s->vcs);
    if (!s->vcs) abort();
    for (size_t i = 0; i < ndecl; i++) {
        const char *name = i < ncl ? gs_cluster_vc(g->c, (int)i)->name : g->quota_vc[i - ncl];
        int dup = 0;
        for (size_t k = 0; k < s->nvcs && !dup; k++) dup = !strcmp(s->vcs[k].name, name);
        if (dup) continue;
        gsd_vcview *v = &s->vcs[s->nvcs++];
        v->name = name;
        v->guaranteed = vc_guarantee(g, name);
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
        const char *name = gs_engine_vc_name(g->e, (int)e);
        int dup = 0;
        for (size_t k = 0; k < ndeclv && !dup; k++) dup = !strcmp(s->vcs[k].name, name);
        if (dup) continue;
        gsd_vcview *v = &s->vcs[s->nvcs++];
        v->name = name;
        v->guaranteed = -1;
        if (e < g->nvcstat) {
            v->pending = g->vcstat[e].pending;
            v->pending_gpus = g->vcstat[e].pending_gpus;
            v->running = g->vcstat[e].running;
            v->allocated = g->vcstat[e].allocated;
        }
    }
    s->m = g->m;
    /* cycle percentiles over the recent window, at most a few times a second */
    gsd_snap *old = g->snap;
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
    pthread_mutex_lock(&g->snapmu);
    g->snap = s;
    pthread_mutex_unlock(&g->snapmu);
    gsd_snap_put(old);
}

/* ---- the cycle ------------------------------------------------------------------------------ */

static gsd_cmd *take_commands(gsd *g)
{
    pthread_mutex_lock(&g->qmu);
    gsd_cmd *c = g->qhead;
    g->qhead = g->qtail = NULL;
    pthread_mutex_unlock(&g->qmu);
    return c;
}

static void answer(gsd *g, gsd_cmd *list)
{
    gsd_cmd *dead = NULL;
    pthread_mutex_lock(&g->qmu);
    while (list) {
        gsd_cmd *c = list;
        list = c->next;
        if (c->abandoned) {
            c->next = dead;
            dead = c;
        } else {
            c->done = 1;
        }
    }
    pthread_cond_broadcast(&g->qdone);
    pthread_mutex_unlock(&g->qmu);
    while (dead) {
        gsd_cmd *c = dead;
        dead = c->next;
        gsd_cmd_free(c);
    }
}

int gsd_post(gsd *g, gsd_cmd *cmd, int timeout_ms)
{
    pthread_mutex_lock(&g->qmu);
    if (g->stopping) {
        pthread_mutex_unlock(&g->qmu);
        return GS_ESTATE;
    }
    cmd->next = NULL;
    if (g->qtail)
        g->qtail->next = cmd;
    else
        g->qhead = cmd;
    g->qtail = cmd;
    pthread_mutex_unlock(&g->qmu);
    char b = 'c';
    if (write(g->wake[1], &b, 1) < 0) {
        /* the pipe is full: the scheduler is awake anyway */
    }
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&g->qmu);
    while (!cmd->done) {
        if (pthread_cond_timedwait(&g->qdone, &g->qmu, &dl) == ETIMEDOUT && !cmd->done) {
            cmd->abandoned = 1;
            pthread_mutex_unlock(&g->qmu);
            return GS_ESTATE;
        }
    }
    pthread_mutex_unlock(&g->qmu);
    return 0;
}

static gs_time check_time_limits(gsd *g, gs_time now)
{
    gs_time next = GS_TIME_MAX;
    size_t w = 0;
    for (size_t i = 0; i < g->nrun; i++) {
        int32_t s = g->runv[i];
        gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = jx(g, s);
        if (x->cat != 2) { /* no longer holds GPUs: drop it from the list */
            x->inrun = 0;
            continue;
        }
        g->runv[w++] = s;
        if (j->state != GS_JOB_RUNNING || !x->spec.time_limit || x->stop != GSD_STOP_NONE) continue;
        gs_time used = gs_job_executed(j, now);
        if (used >= x->spec.time_limit) {
            char lim[32];
            gsd_format_duration(x->spec.time_limit, lim, sizeof lim);
            x->stop = GSD_STOP_TIMEOUT;
            mark_dirty(g, s);
            push_rec(g, GSD_EV_TIMEOUT, s, now,
                     "time limit of %s reached: SIGTERM, SIGKILL after %llds", lim,
                     (long long)(job_grace(g, x) / GS_SEC));
        } else if (now + (x->spec.time_limit - used) < next) {
            next = now + (x->spec.time_limit - used);
        }
    }
    g->nrun = w;
    return next;
}

/* One cycle.  Returns the next instant something is due (GS_TIME_MAX if nothing). */
static gs_time cycle(gsd *g, int heartbeat)
{
    double t0 = mono_sec();
    gs_time now = gsd_wall_now();
    if (now < g->last_now) now = g->last_now; /* the wall clock went back: hold time */
    g->last_now = now;
    g->nrecs = 0;
    g->changed = 0;
    gsd_cmd *cmds = take_commands(g);
    if (gsd_store_begin(g->store)) {
        gsd_log("FATAL: cannot begin a transaction: %s", gsd_store_errmsg(g->store));
        g->fatal = 1;
        answer(g, cmds);
        return GS_TIME_MAX;
    }
    size_t ncmd = 0;
    for (gsd_cmd *c = cmds; c; c = c->next, ncmd++) {
        switch (c->kind) {
        case GSD_CMD_SUBMIT: do_submit(g, c, now); break;
        case GSD_CMD_DRYRUN: do_dryrun(g, c); break;
        case GSD_CMD_CANCEL: do_cancel(g, c, now); break;
        }
    }
    gsd_exec_poll(g->x, now, on_xev, g);
    gs_time next_limit = check_time_limits(g, now);
    int work = ncmd || g->changed || heartbeat || gs_engine_next_event_time(g->e) <= now;
    if (work) gs_engine_advance(g->e, now);
    for (gsd_cmd *c = cmds; c; c = c->next)
        if (c->kind == GSD_CMD_SUBMIT && !c->status) finish_submit(g, c);
    if (g->fatal || commit_cycle(g)) {
        if (g->fatal) gsd_store_rollback(g->store);
        /* not durable: answer nothing positive, act on nothing */
        for (gsd_cmd *c = cmds; c; c = c->next) {
            if (c->result) json_decref(c->result);
            c->result = NULL;
            cmd_fail(c, 503, GS_EIO, "the daemon cannot write its database");
        }
        answer(g, cmds);
        return GS_TIME_MAX;
    }
    /* publish before answering, so a client that was told "submitted" or "cancelled" sees
     * that in the next listing (read your writes); then act on what is now durable */
    g->cycle_no++;
    if (g->changed || !g->snap || now - g->last_publish > 5 * GS_SEC) publish(g, now);
    answer(g, cmds);
    act(g, now);
    if (work) {
        g->m.cycles++;
        double dt = mono_sec() - t0;
        gsd_hist_observe(&g->m.cycle, dt);
        g->cyc[g->ncyc++ % 1024] = dt;
    }
    gs_time next = gs_engine_next_event_time(g->e);
    gs_time kd = gsd_exec_next_deadline(g->x);
    if (kd < next) next = kd;
    if (next_limit < next) next = next_limit;
    return next;
}

/* ---- recovery ------------------------------------------------------------------------------- */

typedef struct restop {
    int64_t id;
    gs_time grace;
    int stop; /* a stop was under way: SIGTERM again */
} restop;

typedef struct rctx {
    gsd *g;
    gs_time now;
    int64_t max_id;
    size_t pending, adopted, requeued, failed;
    restop *stops;
    size_t nstops, capstops;
} rctx;

static int parse_alloc(const char *s, int **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s) return GS_EINVAL;
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    int *v = malloc(cap * sizeof *v);
    if (!v) abort();
    const char *p = s;
    while (*p) {
        char *e;
        long x = strtol(p, &e, 10);
        if (e == p || x < 0 || x > INT_MAX) {
            free(v);
            return GS_EINVAL;
        }
        v[(*n)++] = (int)x;
        p = *e == ',' ? e + 1 : e;
        if (*e && *e != ',') {
            free(v);
            return GS_EINVAL;
        }
    }
    *out = v;
    return 0;
}

static int recover_row(void *ud, gsd_jobrow *r)
{
    rctx *rc = ud;
    gsd *g = rc->g;
    if (r->id > rc->max_id) rc->max_id = r->id;
    gsd_spec sp;
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *field;
    if (gsd_spec_parse("stored spec", r->spec, strlen(r->spec), &sp, &d, &field)) {
        gsd_log("job %lld: stored spec unreadable (%s): marking it FAILED", (long long)r->id,
                d.msg);
        gsd_jobrow u = *r;
        u.state = (char *)"FAILED";
        u.reason = (char *)"stored spec unreadable after a restart";
        u.end = rc->now;
        u.alloc = NULL;
        gsd_store_update_job(g->store, &u);
        rc->failed++;
        return 0;
    }
    gs_job_spec js;
    gsd_spec_job(&sp, g->o.default_duration, &js);
    if (!sp.gang && sp.ntasks > 1) js.ntasks = 1; /* one part of a non-gang job */
    js.gang = 1;
    js.id = r->id;
    js.submit = r->submit;
    int st = gs_job_state_parse(r->state);
    size_t slot = gs_engine_njobs(g->e);
    gs_job *j = NULL;
    int adopted = 0, alive = 0, exited = 0, lost = 0;
    const char *requeue_why = NULL;
    if (st == GS_JOB_PENDING) {
        if (gs_engine_submit(g->e, &js, rc->now, &j, &d)) j = NULL;
        rc->pending++;
    } else if (st == GS_JOB_SUSPENDED) {
        /* A suspended job holds no GPUs in the engine (others may have been given them, time-
         * slicing) and the engine cannot adopt a job as suspended: its stopped tasks are
         * killed and it is requeued, to restart from its last checkpoint. */
        gsd_exec_recover(g->x, r->id, r->runs, js.ntasks, rc->now, &alive, &exited, &lost);
        gsd_exec_kill_now(g->x, r->id);
        gsd_exec_forget(g->x, r->id);
        if (gs_engine_submit(g->e, &js, rc->now, &j, &d)) j = NULL;
        requeue_why = "the daemon restarted while the job was suspended: its stopped tasks were "
                      "killed and it is requeued";
        rc->requeued++;
    } else {
        int *gpus = NULL, n = 0;
        int pa = parse_alloc(r->alloc, &gpus, &n);
        gsd_exec_recover(g->x, r->id, r->runs, js.ntasks, rc->now, &alive, &exited, &lost);
        int arc = pa ? pa
                     : gs_engine_adopt(g->e, &js, gpus, n,
                                       r->last_start == GSD_NONE ? rc->now : r->last_start,
                                       r->queued, r->executed, &j, &d);
        free(gpus);
        if (arc == 0) {
            adopted = 1;
            rc->adopted++;
        } else {
            gsd_log("job %lld: cannot adopt it on its GPUs (%s): its tasks are killed and it is "
                    "requeued",
                    (long long)r->id, d.msg[0] ? d.msg : gs_strerror(arc));
            gsd_exec_kill_now(g->x, r->id);
            gsd_exec_forget(g->x, r->id);
            /* adopt leaves the job pending when only the start failed; otherwise resubmit */
            if (!j && gs_engine_submit(g->e, &js, rc->now, &j, &d)) j = NULL;
            requeue_why = "the daemon restarted and could not adopt the job on its GPUs: its "
                          "tasks were killed and it is requeued";
            rc->requeued++;
        }
    }
    if (!j) {
        gsd_log("job %lld: cannot restore it (%s)", (long long)r->id, d.msg);
        gsd_spec_release(&sp);
        return 0;
    }
    gsd_jobx *x = jx(g, (int32_t)slot);
    x->spec = sp;
    x->spec_json = xstrdup(r->spec);
    x->submit = r->submit;
    x->runs = r->runs;
    x->stop = adopted ? stop_parse(r->stop) : GSD_STOP_NONE;
    x->cancel_by = r->cancel_by ? gsd_intern(g, r->cancel_by) : NULL;
    x->last_reason = r->reason ? gsd_intern(g, r->reason) : NULL;
    x->exit_code = r->exit_code == GSD_NONE ? INT32_MIN : (int)r->exit_code;
    x->recovering = !adopted; /* its arrival (SUBMIT) at the first advance is not news */
    mark_dirty(g, (int32_t)slot);
    j->group = r->grp;
    j->task_index = r->task_index;
    j->restarts = r->runs > 1 ? r->runs - 1 : 0;
    if (!adopted) {
        j->queued = r->queued;
        j->executed = r->executed;
        j->service = gs_time_to_sec(r->executed) * j->gpus;
        if (r->first_start != GSD_NONE) j->first_start = r->first_start;
        if (x->stop == GSD_STOP_NONE && x->cancel_by && st != GS_JOB_PENDING) {
            /* it was being cancelled: it ends now that its tasks are gone */
            gs_engine_cancel(g->e, j, gsd_intern(g, "cancelled (completed after a daemon restart)"),
                             rc->now);
        }
    } else {
        free(x->alloc);
        describe_alloc(g->c, j->alloc, j->nalloc, x->where, sizeof x->where, &x->alloc);
        if (st == GS_JOB_PREEMPTED) {
            gs_engine_preempt(g->e, j, "stop resumed after a daemon restart");
            if (x->stop == GSD_STOP_NONE) x->stop = GSD_STOP_PREEMPT;
        }
        if (alive) {
            /* after the commit: SIGCONT (the engine adopts every job as running, and the old
             * daemon may have died between committing a resume and sending SIGCONT), then
             * SIGTERM again if a stop was under way */
            if (rc->nstops == rc->capstops) {
                rc->capstops = rc->capstops ? rc->capstops * 2 : 16;
                rc->stops = xrealloc(rc->stops, rc->capstops * sizeof *rc->stops);
            }
            rc->stops[rc->nstops++] = (restop){j->id, job_grace(g, x), x->stop != GSD_STOP_NONE};
        }
        push_rec(g, GSD_EV_ADOPTED, (int32_t)slot, rc->now,
                 "daemon restarted: %d task(s) still running, %d exited, %d lost", alive, exited,
                 lost);
        if (st == GS_JOB_SUSPENDED)
            push_rec(g, GS_REC_RESUME, (int32_t)slot, rc->now,
                     "daemon restarted: a suspended job is adopted as running (SIGCONT)");
    }
    j->preemptions = r->preemptions;
    if (requeue_why && j->state == GS_JOB_PENDING)
        push_rec(g, GS_REC_REQUEUE, (int32_t)slot, rc->now, "%s", requeue_why);
    activate(g, (int32_t)slot);
    return 0;
}

static void sweep_log(void *ud, const char *msg)
{
    (void)ud;
    gsd_log("%s", msg);
}

static int recover(gsd *g, gs_diag *d)
{
    rctx rc = {.g = g, .now = gsd_wall_now()};
    g->last_now = rc.now;
    gs_engine_advance(g->e, rc.now); /* set the engine's clock */
    gsd_store_count_states(g->store, g->final_counts);
    if (gsd_store_begin(g->store))
        return gs_diag_set(d, GS_EIO, 0, 0, "%s", gsd_store_errmsg(g->store));
    g->in_recovery = 1;
    int r = gsd_store_each_active(g->store, recover_row, &rc);
    g->in_recovery = 0;
    if (r) {
        gsd_store_rollback(g->store);
        free(rc.stops);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot read jobs: %s", gsd_store_errmsg(g->store));
    }
    int64_t next = 0;
    gsd_store_meta_get(g->store, "next_id", 1, &next);
    if (next <= rc.max_id) next = rc.max_id + 1;
    if (next < 1) next = 1;
    gs_engine_reserve_ids(g->e, next);
    int killed = gsd_exec_sweep(g->x, sweep_log, NULL);
    if (commit_cycle(g)) {
        free(rc.stops);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot commit recovery");
    }
    /* adopted runs continue (SIGCONT); stops that were under way when the old daemon died
     * get SIGTERM again, with a fresh grace period */
    for (size_t i = 0; i < rc.nstops; i++) {
        gsd_exec_suspend(g->x, rc.stops[i].id, 0);
        if (rc.stops[i].stop) gsd_exec_stop(g->x, rc.stops[i].id, rc.now, rc.stops[i].grace);
    }
    free(rc.stops);
    g->nrecs = 0;
    for (int s = 0; s < GS_JOB_NSTATES; s++)
        if (!gs_job_state_final((gs_job_state)s)) g->final_counts[s] = 0;
    if (rc.pending || rc.adopted || rc.requeued || killed || rc.failed)
        gsd_log("recovered %zu pending and %zu running job(s) (%zu requeued, %zu unreadable); "
                "killed %d orphaned task(s)",
                rc.pending, rc.adopted, rc.requeued, rc.failed, killed);
    return 0;
}

/* ---- startup and the loop ------------------------------------------------------------------- */

static void on_signal(int sig)
{
    if (sig == SIGTERM || sig == SIGINT) g_sig_stop = 1;
    int fd = g_wake_fd;
    if (fd >= 0) {
        char b = 's';
        ssize_t w = write(fd, &b, 1);
        (void)w;
    }
}

void gsd_opts_init(gsd_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = GSD_DEFAULT_DB;
    o->listen = GSD_DEFAULT_LISTEN;
    o->policy = "fifo";
    o->grace = 30 * GS_SEC;
    o->default_duration = 3600 * GS_SEC;
    o->sync_full = 1;
    o->max_body = 1024 * 1024;
    o->max_connections = 256;
    o->placement = GS_PLACE_CONSOLIDATE;
}

static char *default_state_dir(const char *db)
{
    size_t n = strlen(db);
    char *s = malloc(n + 4);
    if (!s) abort();
    if (n > 3 && !strcmp(db + n - 3, ".db"))
        snprintf(s, n + 4, "%.*s.d", (int)(n - 3), db);
    else
        snprintf(s, n + 4, "%s.d", db);
    return s;
}

static int parse_quotas(gsd *g, const char *q)
{
    if (!q) return 0;
    char *copy = xstrdup(q), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(t, ':');
        if (!colon) continue;
        *colon = '\0';
        g->quota_vc = xrealloc(g->quota_vc, (g->nquota + 1) * sizeof *g->quota_vc);
        g->quota_gpus = xrealloc(g->quota_gpus, (g->nquota + 1) * sizeof *g->quota_gpus);
        g->quota_vc[g->nquota] = xstrdup(t);
        g->quota_gpus[g->nquota] = strtoll(colon + 1, NULL, 10);
        g->nquota++;
    }
    free(copy);
    return 0;
}

static int read_data_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d)
{
    (void)ud;
    gs_diag sub;
    gs_diag_init(&sub, path);
    int rc = gs_read_file(path, buf, len, &sub);
    if (rc) return gs_diag_set(d, rc, 0, 0, "%s: %s", path, sub.msg);
    return 0;
}

static void write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f) {
        gsd_log("cannot write port file '%s': %s", path, strerror(errno));
        return;
    }
    fprintf(f, "%d\n", port);
    fclose(f);
    if (rename(tmp, path) != 0) gsd_log("cannot write port file '%s': %s", path, strerror(errno));
}

static void release_all(gsd *g)
{
    gsd_http_stop(g);
    gsd_snap_put(g->snap);
    g->snap = NULL;
    gsd_store_close(g->store);
    gsd_exec_destroy(g->x);
    gs_engine_destroy(g->e);
    gs_cluster_destroy(g->c);
    gsd_auth_destroy(g->auth);
    for (size_t i = 0; i < g->njx; i++) {
        gsd_spec_release(&g->jx[i].spec);
        free(g->jx[i].spec_json);
        free(g->jx[i].idem_key);
        free(g->jx[i].idem_hash);
        free(g->jx[i].alloc);
    }
    free(g->jx);
    for (size_t i = 0; i < g->nchunk; i++) gsd_chunk_put(g->chunk[i]);
    free(g->chunk);
    free(g->chunk_dirty);
    free(g->chunk_nactive);
    free(g->dirtyv);
    free(g->runv);
    free(g->vcstat);
    free(g->recs);
    free(g->forget);
    for (size_t i = 0; i < g->ntput; i++) free(g->tput[i].gpus);
    free(g->tput);
    for (size_t i = 0; i < g->nquota; i++) free(g->quota_vc[i]);
    free(g->quota_vc);
    free(g->quota_gpus);
    strset_release(&g->strs);
    free(g->state_dir);
    if (g->wake[0] >= 0) close(g->wake[0]);
    if (g->wake[1] >= 0) close(g->wake[1]);
    pthread_mutex_destroy(&g->qmu);
    pthread_cond_destroy(&g->qdone);
    pthread_mutex_destroy(&g->snapmu);
}

int gsd_serve(const gsd_opts *o)
{
    gsd g;
    memset(&g, 0, sizeof g);
    g.o = *o;
    g.wake[0] = g.wake[1] = -1;
    pthread_mutex_init(&g.qmu, NULL);
    pthread_mutex_init(&g.snapmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g.qdone, &ca);
    pthread_condattr_destroy(&ca);
    gsd_metrics_init(&g.m);
    g.started = gsd_wall_now();
    int exit_code = 2;
    gs_diag d;
    gs_diag_init(&d, NULL);
    char msg[1024];

    /* cluster: declared, or discovered through NVML */
    if (o->cluster) {
        gs_diag_init(&d, o->cluster);
        if (gs_cluster_load(o->cluster, &g.c, &d)) {
            gs_diag_format(&d, msg, sizeof msg);
            gsd_log("cluster: %s", msg);
            goto out;
        }
    } else if (gsd_nvml_cluster(&g.c, &d)) {
        gsd_log("no cluster: %s; give --cluster SPEC (e.g. --cluster 1x4 for four fake GPUs)",
                d.msg);
        goto out;
    }
    if (o->tokens) {
        gs_diag_init(&d, o->tokens);
        if (gsd_auth_load(o->tokens, &g.auth, &d)) {
            gs_diag_format(&d, msg, sizeof msg);
            gsd_log("tokens file: %s", msg);
            goto out;
        }
    }
    /* engine: LIVE mode, the same policies as the simulator */
    gs_params empty;
    gs_params_init(&empty);
    gs_params *params = o->params ? o->params : &empty;
    if (!gs_params_get(params, "preempt_cost")) gs_params_set(params, "preempt_cost", "0");
    if (!gs_params_get(params, "slowdown")) gs_params_set(params, "slowdown", "off");
    gs_params_reset_used(params);
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.mode = GS_ENGINE_LIVE;
    eo.placement = o->placement;
    eo.placement_set = o->placement_set;
    eo.read_file = read_data_file;
    gs_diag_init(&d, NULL);
    if (gs_engine_opts_from_params(params, &eo, &d) ||
        gs_engine_create(g.c, o->policy ? o->policy : "fifo", params, &eo, &g.e, &d)) {
        gsd_log("%s", d.msg);
        gs_params_release(&empty);
        goto out;
    }
    const char *unused = gs_params_unused(params);
    if (unused) {
        gsd_log("parameter '%s' is not used by policy %s or the engine (see docs/policies.md)",
                unused, gs_engine_policy_name(g.e));
        gs_params_release(&empty);
        goto out;
    }
    parse_quotas(&g, gs_params_get(params, "quotas"));
    gs_params_release(&empty);
    gs_engine_set_observer(g.e, observe, &g);
    g.order = gsd_order_for_policy(gs_engine_policy_name(g.e));
    /* database and executor */
    g.state_dir = o->state_dir ? xstrdup(o->state_dir) : default_state_dir(o->db);
    gs_diag_init(&d, NULL);
    if (gsd_store_open(o->db, o->sync_full, &g.store, &d)) {
        gsd_log("%s", d.msg);
        goto out;
    }
    if (gsd_exec_create(g.state_dir, o->self_exe ? o->self_exe : "/proc/self/exe", &g.x, &d)) {
        gsd_log("%s", d.msg);
        goto out;
    }
    char *abs = realpath(g.state_dir, NULL);
    if (abs) {
        free(g.state_dir);
        g.state_dir = abs;
    }
    if (pipe(g.wake) != 0) {
        gsd_log("pipe: %s", strerror(errno));
        exit_code = 1;
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(g.wake[i], F_SETFL, fcntl(g.wake[i], F_GETFL) | O_NONBLOCK);
        fcntl(g.wake[i], F_SETFD, FD_CLOEXEC);
    }
    exit_code = 1;
    if (recover(&g, &d)) {
        gsd_log("recovery failed: %s", d.msg);
        goto out;
    }
    publish(&g, gsd_wall_now());
    /* signals, then HTTP */
    g_sig_stop = 0;
    g_wake_fd = g.wake[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    gs_diag_init(&d, NULL);
    if (gsd_http_start(&g, &d)) {
        gsd_log("%s", d.msg);
        exit_code = 2;
        goto out;
    }
    char where[300];
    snprintf(where, sizeof where, "%s", o->listen);
    char *pc = strrchr(where, ':');
    if (pc) snprintf(pc + 1, sizeof where - (size_t)(pc + 1 - where), "%d", g.port);
    gsd_log("serving on http://%s: policy %s, %zu node(s), %zu GPU(s), database %s, "
            "state %s, %s",
            where, gs_engine_policy_name(g.e), gs_cluster_nnodes(g.c), gs_cluster_ngpus(g.c), o->db,
            g.state_dir, g.auth ? "bearer tokens required" : "no authentication (loopback only)");
    if (o->port_file) write_port_file(o->port_file, g.port);

    gs_time next = GS_TIME_MAX, last_heartbeat = gsd_wall_now();
    while (!g_sig_stop && !g.fatal) {
        gs_time now = gsd_wall_now();
        gs_time until = next < now + GS_SEC ? next : now + GS_SEC;
        if (gsd_exec_has_adopted(g.x) && until > now + 200 * GS_MSEC) until = now + 200 * GS_MSEC;
        if (gsd_exec_nruns(g.x) && until > now + 500 * GS_MSEC) until = now + 500 * GS_MSEC;
        int ms = until <= now ? 0 : (int)((until - now + 999) / 1000);
        struct pollfd pfd = {g.wake[0], POLLIN, 0};
        int pr = poll(&pfd, 1, ms);
        if (pr > 0) {
            char buf[256];
            while (read(g.wake[0], buf, sizeof buf) > 0) {
            }
        }
        if (g_sig_stop) break;
        now = gsd_wall_now();
        int hb = now - last_heartbeat >= GS_SEC;
        if (hb) last_heartbeat = now;
        next = cycle(&g, hb);
    }
    exit_code = g.fatal ? 1 : 0;
    gsd_log("shutting down%s: %zu run(s) keep running and will be adopted at the next start",
            g.fatal ? " after a fatal error" : "", gsd_exec_nruns(g.x));
    pthread_mutex_lock(&g.qmu);
    g.stopping = 1;
    gsd_cmd *left = g.qhead;
    g.qhead = g.qtail = NULL;
    pthread_mutex_unlock(&g.qmu);
    for (gsd_cmd *c = left; c; c = c->next)
        cmd_fail(c, 503, GS_ESTATE, "the daemon is shutting down");
    answer(&g, left);
out:
    g_wake_fd = -1;
    release_all(&g);
    return exit_code;
}
