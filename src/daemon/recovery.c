/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * recovery.c - restart recovery (start-up, before HTTP starts).
 *
 * Every non-final job is re-added to a fresh engine in id order - PENDING
 * jobs are resubmitted with their ids and accounting (deferred again when
 * held or waiting on dependencies: wait.c), RUNNING / PREEMPTED
 * jobs are adopted on their recorded GPUs (gs_engine_adopt) with their task
 * processes found again through the executor (gsd_exec_recover) when it
 * declares GSD_XCAP_ADOPT, and requeued when its tasks die with the daemon;
 * tasks that were lost requeue the job; SUSPENDED jobs are killed and requeued;
 * an elastic job comes back at its last size with its generation, rescale
 * and failure counters (jobs.elastic), and one caught DRAINING is adopted on
 * its old GPUs and drains again to the same target on the same reserved
 * GPUs (redrain: control file again, SIGTERM, a fresh drain timeout) - a job
 * caught RESIZING or LAUNCHING is RUNNING on its new GPUs, adopted if its
 * new generation's tasks started, else requeued like any run that never
 * started;
 * the daemon may restart with a changed config (HiveD's work-preserving
 * reconfiguration): GPUs are matched to the stored cluster layout by chain,
 * node name and index (meta "gpu..." rows, rewritten in the recovery's
 * transaction); a RUNNING job keeps running, adopted on the GPUs the cluster
 * still has, the others not counted (gs_engine_adopt with -1), even one that
 * can never run here again; if it is ever requeued, the engine rejects it with
 * the reason, as the arrival rule rejects pending jobs that can never fit -
 * no job waits forever for GPUs that no longer exist, blocking the queue;
 * a cluster backend is told every live job (gsd_exec_bind, with the external
 * job it was adopted from, if any), and a job whose external job is gone is
 * cancelled; processes no job claims are killed (gsd_exec_sweep); nodes stored
 * as bad are marked bad again after the jobs are back (theirs run on), and
 * nodes an admin drained or took down are so again (nodeadm.c).  The result is
 * committed before any process is started; what is signalled right after
 * (SIGCONT, a stop's SIGTERM again) is what the database already says.  A
 * recovery that cannot be committed leaves the daemon read-only (disk.c).
 *
 * Invariants: no acknowledged job is lost, no GPU is given twice and no
 * job runs twice at once; ids continue after the largest ever handed out
 * (meta next_id).  Scheduler thread only.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd_sched.h"

/* ---- recovery ------------------------------------------------------------------------------- */

typedef struct restop {
    int64_t id;
    gs_time grace;
    int stop;  /* a stop was under way: SIGTERM again */
    int drain; /* that stop is an elastic job's drain: its control file again, then SIGTERM */
} restop;

/*
 * The cluster layout (a restart with a changed config, HiveD's work-preserving
 * reconfiguration): the jobs table records GPUs by index in the cluster the daemon ran;
 * the meta table keeps, for each index, the GPU's identity - chain (cell type of its
 * node's top cell, else its name), node name and index in the node - as a key
 * "gpu<US>chain<US>node<US>local" whose value is the index.  At start-up the stored
 * identities are matched to this cluster's GPUs (chain, node and index; else node and
 * index: a node moved to another chain), giving map[old index] = new index or -1 (the GPU
 * is gone); the current layout is written back in the recovery's transaction.
 */
#define LAYOUT_PREFIX "gpu\x1f"

typedef struct lrow {
    int64_t old;
    char *key; /* chain US node US local */
} lrow;

typedef struct layout {
    int32_t *map; /* old index -> new, -1; NULL: no layout stored (the same cluster) */
    size_t nmap;
    lrow *rows;
    size_t nrows, caprows;
    int changed; /* some stored GPU moved or is gone, or the cluster has others */
} layout;

typedef struct rctx {
    gsd_sched *g;
    gs_time now;
    int64_t max_id;
    size_t pending, adopted, requeued, failed, never, shrunk;
    restop *stops;
    size_t nstops, capstops;
    layout lay;
} rctx;

/* Identity of GPU gi of c ("chain US node US local"). */
static void gpu_ident(const gs_cluster *c, int gi, char *buf, size_t cap)
{
    const gs_gpu *gp = gs_cluster_gpu(c, gi);
    const gs_node *nd = gs_cluster_node(c, gp->node);
    int32_t x = nd->cell;
    while (x > 0 && gs_cluster_cell(c, x)->parent > 0) x = gs_cluster_cell(c, x)->parent;
    const gs_cell *top = gs_cluster_cell(c, x);
    const gs_cell_type *ct = top->type >= 0 ? gs_cluster_cell_type(c, top->type) : NULL;
    snprintf(buf, cap, "%s\x1f%s\x1f%d",
             ct          ? ct->name
             : top->name ? top->name
                         : "",
             nd->name, (int)gp->local);
}

static int layout_row(void *ud, const char *key, int64_t v)
{
    layout *l = ud;
    if (v < 0 || v > INT_MAX) return 0;
    if (l->nrows == l->caprows) {
        l->caprows = l->caprows ? 2 * l->caprows : 256;
        l->rows = gsd_xrealloc(l->rows, l->caprows * sizeof *l->rows);
    }
    l->rows[l->nrows++] = (lrow){v, gsd_xstrdup(key + strlen(LAYOUT_PREFIX))};
    return 0;
}

/* "node US local" of an identity (after its chain). */
static const char *ident_nodepart(const char *id)
{
    const char *p = strchr(id, '\x1f');
    return p ? p + 1 : id;
}

static const gsd_named *named_find(const gsd_named *v, size_t n, const char *k, const int8_t *taken)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (strcmp(v[m].name, k) < 0)
            lo = m + 1;
        else
            hi = m;
    }
    for (; lo < n && !strcmp(v[lo].name, k); lo++)
        if (!taken[v[lo].ix]) return &v[lo];
    return NULL;
}

/* Read the stored layout and match it to g->c (see above). */
static void layout_load(gsd_sched *g, layout *l)
{
    memset(l, 0, sizeof *l);
    gsd_store_meta_each(g->sh.store, LAYOUT_PREFIX, layout_row, l);
    size_t ng = gs_cluster_ngpus(g->c);
    if (!l->nrows) return;
    /* this cluster's identities, whole and without the chain, sorted */
    gsd_named *full = gsd_xrealloc(NULL, (ng ? ng : 1) * sizeof *full);
    gsd_named *part = gsd_xrealloc(NULL, (ng ? ng : 1) * sizeof *part);
    char **ids = gsd_xrealloc(NULL, (ng ? ng : 1) * sizeof *ids);
    for (size_t i = 0; i < ng; i++) {
        char b[512];
        gpu_ident(g->c, (int)i, b, sizeof b);
        ids[i] = gsd_xstrdup(b);
        full[i] = (gsd_named){ids[i], (int32_t)i};
        part[i] = (gsd_named){ident_nodepart(ids[i]), (int32_t)i};
    }
    qsort(full, ng, sizeof *full, gsd_named_cmp);
    qsort(part, ng, sizeof *part, gsd_named_cmp);
    int8_t *taken = calloc(ng ? ng : 1, 1);
    if (!taken) abort();
    for (size_t r = 0; r < l->nrows; r++)
        if ((size_t)l->rows[r].old + 1 > l->nmap) l->nmap = (size_t)l->rows[r].old + 1;
    l->map = gsd_xrealloc(NULL, l->nmap * sizeof *l->map);
    for (size_t k = 0; k < l->nmap; k++) l->map[k] = -1;
    for (int pass = 0; pass < 2; pass++)
        for (size_t r = 0; r < l->nrows; r++) {
            if (l->map[l->rows[r].old] >= 0) continue;
            const gsd_named *m = pass == 0
                                     ? named_find(full, ng, l->rows[r].key, taken)
                                     : named_find(part, ng, ident_nodepart(l->rows[r].key), taken);
            if (!m) continue;
            l->map[l->rows[r].old] = m->ix;
            taken[m->ix] = 1;
        }
    l->changed = l->nrows != ng;
    for (size_t k = 0; k < l->nmap; k++)
        if (l->map[k] != (int32_t)k) l->changed = 1;
    for (size_t i = 0; i < ng; i++) free(ids[i]);
    free(ids);
    free(full);
    free(part);
    free(taken);
}

/* Old GPU indices -> this cluster's (-1: gone). */
static void layout_apply(const layout *l, int *gpus, int n)
{
    if (!l->map) return;
    for (int i = 0; i < n; i++)
        gpus[i] = gpus[i] >= 0 && (size_t)gpus[i] < l->nmap ? l->map[gpus[i]] : -1;
}

/* Write this cluster's layout (in the recovery's transaction) when it is not the stored one. */
static void layout_save(gsd_sched *g, layout *l)
{
    if (l->nrows && !l->changed) return;
    if (gsd_store_meta_delete_prefix(g->sh.store, LAYOUT_PREFIX)) return;
    for (size_t i = 0; i < gs_cluster_ngpus(g->c); i++) {
        char b[512], key[560];
        gpu_ident(g->c, (int)i, b, sizeof b);
        snprintf(key, sizeof key, "%s%s", LAYOUT_PREFIX, b);
        if (gsd_store_meta_set(g->sh.store, key, (int64_t)i)) return;
    }
}

static void layout_release(layout *l)
{
    for (size_t r = 0; r < l->nrows; r++) free(l->rows[r].key);
    free(l->rows);
    free(l->map);
}

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
        if (e == p || x < -1 || x > INT_MAX) { /* -1: a GPU the cluster lacked already */
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

/* 1 when the job can never run on this cluster (the engine's probe: no placement on the empty
 * cluster, or the policy's arrival rule), with the reason in why. */
static int never_fits(gsd_sched *g, const gs_job_spec *js, char *why, size_t cap)
{
    gs_probe p;
    memset(&p, 0, sizeof p);
    int never = gs_engine_probe(g->e, js, &p) == 0 && p.verdict == GS_PROBE_NEVER;
    if (never) snprintf(why, cap, "%s", p.reason);
    gs_probe_release(&p);
    return never;
}

/* An elastic job caught DRAINING: adopted RUNNING on its old GPUs, it drains again to the same
 * target on the same reserved GPUs (recorded in jobs.elastic), so no GPU is bound to two jobs:
 * the reservation is taken again before any other job can start.  The rescale is made as a
 * preemption (no budget applies a second time) and the counters are restored after it.  If the
 * reservation cannot be taken again, the job is stopped and requeued instead. */
static void redrain(gsd_sched *g, const layout *lay, const gs_job *j, gsd_jobx *x)
{
    gsd_elastic *el = x->el;
    int *gpus = NULL, n = 0, rc = GS_EINVAL, gone = 0;
    if (el && el->resv && el->target_gpus != 0 && !parse_alloc(el->resv, &gpus, &n)) {
        layout_apply(lay, gpus, n);
        for (int i = 0; i < n; i++) gone |= gpus[i] < 0;
    }
    if (el && el->resv && !gone && (el->target_gpus == 0 || gpus)) {
        char why[400];
        snprintf(why, sizeof why, "%s (drain resumed after a daemon restart)",
                 el->reason && *el->reason ? el->reason : "rescale");
        int32_t gen = el->generation, resc = el->rescales, fail = el->failures;
        rc = gs_engine_rescale(g->e, j, gpus, n, GS_RESCALE_PREEMPT, gsd_intern(g, why));
        if (!rc) {
            gs_job_accounting a;
            gs_job_accounting_init(&a);
            a.generation = gen;
            a.rescales = resc;
            a.failures = fail;
            gs_engine_restore_accounting(g->e, j, &a);
            x->stop = GSD_STOP_DRAIN;
        }
    }
    free(gpus);
    if (rc) {
        gsd_log("job %lld: cannot drain it again to its reserved GPUs (%s): it is stopped and "
                "requeued",
                (long long)j->id, gs_strerror(rc));
        gs_engine_preempt(g->e, j, "its drain could not resume after a daemon restart");
        x->stop = GSD_STOP_PREEMPT;
    }
}

static int recover_row(void *ud, gsd_jobrow *r)
{
    rctx *rc = ud;
    gsd_sched *g = rc->g;
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
        if (!g->store_failed) gsd_store_update_job(g->sh.store, &u); /* else at a later start */
        rc->failed++;
        return 0;
    }
    /* a HiveD spec is read against the cluster again (its cell types give the tasks) */
    if (gsd_spec_resolve_hived(&sp, g->c, &d)) {
        gsd_log("job %lld: its HiveD spec does not fit this cluster (%s): marking it FAILED",
                (long long)r->id, d.msg);
        gsd_spec_release(&sp);
        char why[300];
        snprintf(why, sizeof why, "after a restart: %s", d.msg);
        gsd_jobrow u = *r;
        u.state = (char *)"FAILED";
        u.reason = why;
        u.end = rc->now;
        u.alloc = NULL;
        if (!g->store_failed) gsd_store_update_job(g->sh.store, &u);
        rc->failed++;
        return 0;
    }
    gs_job_spec js;
    gsd_spec_job(&sp, g->sh.o.default_duration, &js);
    if (!sp.gang && sp.ntasks > 1) js.ntasks = 1; /* one part of a non-gang job */
    /* an application the goodput model (no longer) knows: the job runs without it */
    if (js.app && (!g->goodput || gs_goodput_find_app(g->goodput, js.app) < 0)) {
        if (g->goodput)
            gsd_log("job %lld: the goodput model has no application '%s' now: it runs without",
                    (long long)r->id, js.app);
        js.app = NULL;
    }
    /* an elastic job comes back at the size it had (its row's tasks), not its first size */
    if (gsd_spec_elastic(&sp) && gsd_spec_size_valid(&sp, r->ntasks * sp.gpus_per_task))
        js.ntasks = r->ntasks;
    js.gang = 1;
    js.id = r->id;
    js.submit = r->submit;
    int st = gs_job_state_parse(r->state);
    size_t slot = gs_engine_njobs(g->e);
    const gs_job *j = NULL;
    int adopted = 0, alive = 0, exited = 0, lost = 0;
    const char *requeue_why = NULL;
    char never[256];
    int held = 0, deferred = 0;
    if (st == GS_JOB_PENDING) {
        /* not yet eligible when it is held or has dependencies (evaluated again at the first
         * cycle: a job eligible before the restart is again) */
        int hr = gsd_store_job_held(g->sh.store, r->id, &held);
        if (hr == GS_ENOENT) held = sp.hold;
        /* an element of a throttled array waits in the stage too: wait.c lets its array's
         * limit of elements arrive again, in index order */
        gs_array arr;
        int32_t throttle = 0;
        if (r->array_id && sp.array) {
            if (!gs_array_parse(sp.array, &arr, NULL)) throttle = arr.throttle;
            gs_array_release(&arr);
        }
        deferred = held || sp.dependency || throttle > 0;
        if ((deferred ? gs_engine_submit_deferred(g->e, &js, rc->now, &j, &d)
                      : gs_engine_submit(g->e, &js, rc->now, &j, &d)))
            j = NULL;
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
    } else if (!gsd_exec_can(g->x, GSD_XCAP_ADOPT)) {
        /* the executor's tasks do not outlive the daemon: nothing to find again */
        if (gs_engine_submit(g->e, &js, rc->now, &j, &d)) j = NULL;
        requeue_why = "the daemon restarted and its executor cannot find running tasks again: "
                      "the job is requeued";
        rc->requeued++;
    } else {
        /* a running job keeps running, also on a changed cluster (HiveD's work-preserving
         * reconfiguration): its GPUs the cluster no longer has are -1 for the engine, which
         * adopts it on the others and does not count those (gs_engine_adopt); one that can
         * never run here again is only logged - it is rejected if it is ever requeued */
        int *gpus = NULL, n = 0, gone = 0;
        int pa = parse_alloc(r->alloc, &gpus, &n);
        if (!pa) {
            layout_apply(&rc->lay, gpus, n);
            for (int i = 0; i < n; i++) gone += gpus[i] < 0;
        }
        if (gone) {
            rc->shrunk++;
            gsd_log("job %lld: %d of its %d GPU(s) are not in this cluster: it runs on, their use "
                    "is not counted",
                    (long long)r->id, gone, n);
        }
        if (never_fits(g, &js, never, sizeof never)) {
            rc->never++;
            gsd_log("job %lld: can never run on this cluster again (%s): it runs on to its end",
                    (long long)r->id, never);
        }
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
    gsd_jobx *x = gsd_jx(g, (int32_t)slot);
    x->spec = sp;
    x->spec_json = gsd_xstrdup(r->spec);
    if (gsd_el_load(x, r->elastic))
        gsd_log("job %lld: its elastic state is unreadable: counters start again",
                (long long)r->id);
    x->submit = r->submit;
    x->runs = r->runs;
    x->stop = adopted ? gsd_stop_parse(r->stop) : GSD_STOP_NONE;
    x->cancel_by = r->cancel_by ? gsd_intern(g, r->cancel_by) : NULL;
    x->last_reason = r->reason ? gsd_intern(g, r->reason) : NULL;
    x->exit_code = r->exit_code == GSD_NONE ? INT32_MIN : (int)r->exit_code;
    x->recovering = !adopted; /* its arrival (SUBMIT) at the first advance is not news */
    if (x->spec.interactive) gsd_run_track(g, (int32_t)slot, rc->now); /* a fresh lease */
    x->array_id = r->array_id;
    x->array_task = r->array_task;
    if (r->array_id && x->spec.array) {
        gs_array arr;
        if (!gs_array_parse(x->spec.array, &arr, NULL)) x->array_throttle = arr.throttle;
        gs_array_release(&arr);
        x->throttled = (int8_t)(deferred && x->array_throttle > 0);
    }
    if (deferred) {
        gsd_wait_add(g, (int32_t)slot, held);
        gsd_track(g, j, x); /* no SUBMIT record until it arrives */
    }
    gsd_mark_dirty(g, (int32_t)slot);
    gs_job_accounting acct;
    gs_job_accounting_init(&acct);
    acct.group = r->grp;
    acct.task_index = (int32_t)r->task_index;
    acct.restarts = (int32_t)(r->runs > 1 ? r->runs - 1 : 0);
    if (x->el) {
        acct.generation = x->el->generation;
        acct.rescales = x->el->rescales;
        acct.failures = x->el->failures;
    }
    if (!adopted) {
        acct.queued = r->queued;
        acct.executed = r->executed;
        acct.service = gs_time_to_sec(r->executed) * j->gpus;
        if (r->first_start != GSD_NONE) acct.first_start = r->first_start;
    }
    gs_engine_restore_accounting(g->e, j, &acct);
    if (!adopted) {
        if (x->stop == GSD_STOP_NONE && x->cancel_by && st != GS_JOB_PENDING) {
            /* it was being cancelled: it ends now that its tasks are gone */
            gs_engine_cancel(g->e, j, gsd_intern(g, "cancelled (completed after a daemon restart)"),
                             rc->now);
        }
    } else {
        free(x->alloc);
        gsd_describe_job_alloc(g->c, j, x->where, sizeof x->where, &x->alloc);
        if (st == GS_JOB_PREEMPTED) {
            gs_engine_preempt(g->e, j, "stop resumed after a daemon restart");
            if (x->stop == GSD_STOP_NONE) x->stop = GSD_STOP_PREEMPT;
        }
        if (st == GS_JOB_DRAINING) redrain(g, &rc->lay, j, x);
        if (alive) {
            /* after the commit: SIGCONT (the engine adopts every job as running, and the old
             * daemon may have died between committing a resume and sending SIGCONT), then
             * SIGTERM again if a stop was under way */
            if (rc->nstops == rc->capstops) {
                rc->capstops = rc->capstops ? rc->capstops * 2 : 16;
                rc->stops = gsd_xrealloc(rc->stops, rc->capstops * sizeof *rc->stops);
            }
            int drain = x->stop == GSD_STOP_DRAIN;
            rc->stops[rc->nstops++] =
                (restop){j->id, drain ? gsd_el_drain_timeout(g, x) : gsd_job_grace(g, x),
                         x->stop != GSD_STOP_NONE, drain};
        }
        gsd_push_rec(g, GSD_EV_ADOPTED, (int32_t)slot, rc->now,
                     "daemon restarted: %d task(s) still running, %d exited, %d lost", alive,
                     exited, lost);
        if (st == GS_JOB_SUSPENDED)
            gsd_push_rec(g, GS_REC_RESUME, (int32_t)slot, rc->now,
                         "daemon restarted: a suspended job is adopted as running (SIGCONT)");
    }
    gs_job_accounting_init(&acct); /* after the preemption above: the stored count stands */
    acct.preemptions = (int32_t)r->preemptions;
    gs_engine_restore_accounting(g->e, j, &acct);
    if (requeue_why && j->state == GS_JOB_PENDING)
        gsd_push_rec(g, GS_REC_REQUEUE, (int32_t)slot, rc->now, "%s", requeue_why);
    gsd_acct_restore(x, j, r->gpu_us, r->executed); /* GPU time (issue 16, acct.c) */
    gsd_activate(g, (int32_t)slot);
    return 0;
}

static void sweep_log(void *ud, const char *msg)
{
    (void)ud;
    gsd_log("%s", msg);
}

/* A node an admin drained or took down: so again (a node no longer in the cluster is skipped,
 * logged).  Its jobs are not stopped again: a down node's were requeued before the restart, and
 * a job whose stop was under way resumes it (recover_row). */
static int readmin(void *ud, const char *name, const char *state, const char *why, const char *by,
                   gs_time t)
{
    gsd_sched *g = ud;
    int st = gsd_nadm_parse(state);
    if (st <= 0) {
        gsd_log("node %s has an unknown admin state '%s': ignored", name, state ? state : "");
        return 0;
    }
    if (!gsd_node_admin(g, name, st, why, by, t, NULL))
        gsd_log("node %s is %s but is not in the cluster: ignored", name, state);
    else
        gsd_log("node %s stays %s (by %s%s%s)", name, st == GSD_NADM_DOWN ? "down" : "drained",
                by ? by : "?", why ? ": " : "", why ? why : "");
    return 0;
}

/* A node stored as bad: bad again (a node no longer in the cluster is skipped, logged). */
static int remark(void *ud, const char *name, const char *why, gs_time t)
{
    gsd_sched *g = ud;
    if (!gsd_node_mark(g, name, 1, why, t))
        gsd_log("node %s is marked bad but is not in the cluster: mark ignored", name);
    else
        gsd_log("node %s stays bad: %s", name, why ? why : "(no reason)");
    return 0;
}

int gsd_recover(gsd_sched *g, gs_diag *d)
{
    rctx rc = {.g = g, .now = gsd_wall_now()};
    layout_load(g, &rc.lay);
    g->last_now = rc.now;
    gs_engine_advance(g->e, rc.now); /* set the engine's clock */
    gsd_store_count_states(g->sh.store, g->final_counts);
    if (gsd_store_begin(g->sh.store)) {
        /* a database that cannot be written (opened read-only on a full disk): recover in
         * memory; the commit below fails and the daemon starts read-only (disk.c) */
        if (!gsd_store_immutable(g->sh.store)) {
            layout_release(&rc.lay);
            return gs_diag_set(d, GS_EIO, 0, 0, "%s", gsd_store_errmsg(g->sh.store));
        }
        g->store_failed = 1;
    }
    g->in_recovery = 1;
    int r = gsd_store_each_active(g->sh.store, recover_row, &rc);
    g->in_recovery = 0;
    if (!r && !g->store_failed) layout_save(g, &rc.lay);
    layout_release(&rc.lay);
    if (r) {
        gsd_store_rollback(g->sh.store);
        free(rc.stops);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot read jobs: %s", gsd_store_errmsg(g->sh.store));
    }
    if (gs_engine_error(g->e)) {
        gsd_store_rollback(g->sh.store);
        free(rc.stops);
        return gs_diag_set(d, gs_engine_error(g->e), 0, 0, "scheduling engine failed: %s",
                           gs_strerror(gs_engine_error(g->e)));
    }
    /* nodes marked bad stay bad (their jobs, adopted above, run on) */
    if (gsd_store_each_bad_node(g->sh.store, remark, g)) {
        gsd_store_rollback(g->sh.store);
        free(rc.stops);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot read node marks: %s",
                           gsd_store_errmsg(g->sh.store));
    }
    /* nodes an admin drained or took down stay so */
    if (gsd_store_each_admin_node(g->sh.store, readmin, g)) {
        gsd_store_rollback(g->sh.store);
        free(rc.stops);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot read node admin states: %s",
                           gsd_store_errmsg(g->sh.store));
    }
    int64_t next = 0;
    gsd_store_meta_get(g->sh.store, "next_id", 1, &next);
    if (next <= rc.max_id) next = rc.max_id + 1;
    if (next < 1) next = 1;
    gs_engine_reserve_ids(g->e, next);
    /* next_id is written again only when a job is submitted (the newest id + 1): the last job
     * recovered may be older than the newest job ever (finished ones are not loaded), and
     * writing its id + 1 would hand the newer ids out a second time after the next restart */
    g->meta_njobs = gs_engine_njobs(g->e);
    /* a cluster backend learns which jobs are live (and which external job each was adopted
     * from) before its sweep; a job whose external job is gone is cancelled */
    size_t gone = 0;
    for (size_t s = 0; gsd_exec_can(g->x, GSD_XCAP_EXTERNAL) && s < gs_engine_njobs(g->e); s++) {
        const gs_job *j = gs_engine_job(g->e, s);
        if (gs_job_state_final(j->state)) continue;
        const char *ext = gsd_jx(g, (int32_t)s)->spec.external;
        if (gsd_exec_bind(g->x, j->id, ext) != GS_ENOENT || !ext) continue;
        gsd_log("job %lld: its external job %s is gone: cancelled", (long long)j->id, ext);
        gone++;
        if (gsd_cancel_outside(g, j, "its external job is gone", rc.now)) {
            if (rc.nstops == rc.capstops) {
                rc.capstops = rc.capstops ? rc.capstops * 2 : 16;
                rc.stops = gsd_xrealloc(rc.stops, rc.capstops * sizeof *rc.stops);
            }
            rc.stops[rc.nstops++] = (restop){j->id, gsd_job_grace(g, gsd_jx(g, j->slot)), 1};
        }
    }
    int killed = gsd_exec_sweep(g->x, sweep_log, NULL);
    /* a recovery that cannot be committed (disk full) starts the daemon read-only with the
     * recovery's changes pending (disk.c): it serves what it read, starts nothing and commits
     * them as soon as it can */
    int ro = gsd_commit(g) != 0;
    /* adopted runs continue (SIGCONT); stops that were under way when the old daemon died
     * get SIGTERM again, with a fresh grace period - both act on what the database already
     * says (running; stopping), committed or not now */
    for (size_t i = 0; i < rc.nstops; i++) {
        const gs_job *aj = gs_engine_find_job(g->e, rc.stops[i].id);
        if (gsd_exec_can(g->x, GSD_XCAP_SUSPEND)) {
            if (aj && aj->state == GS_JOB_RUNNING && aj->alloc && aj->gpus > 0 &&
                aj->nalloc == aj->gpus)
                gsd_resume_at(g, aj); /* SIGCONT, and the executor learns its GPUs */
            else
                gsd_exec_suspend(g->x, rc.stops[i].id, 0);
        }
        const gs_job *sj = rc.stops[i].drain ? aj : NULL;
        if (sj && sj->state == GS_JOB_DRAINING)
            gsd_el_drain_act(g, sj, rc.now); /* the control file again, SIGTERM */
        else if (rc.stops[i].stop)
            gsd_exec_stop(g->x, rc.stops[i].id, rc.now, rc.stops[i].grace);
    }
    free(rc.stops);
    if (!ro) g->nrecs = 0; /* else pending: written, then acted on, by the retry */
    for (int s = 0; s < GS_JOB_NSTATES; s++)
        if (!gs_job_state_final((gs_job_state)s)) g->final_counts[s] = 0;
    if (gone) gsd_log("cancelled %zu job(s) whose external job is gone", gone);
    if (rc.pending || rc.adopted || rc.requeued || killed || rc.failed || rc.never)
        gsd_log("recovered %zu pending and %zu running job(s) (%zu requeued, %zu unreadable, "
                "%zu running on GPUs this cluster lacks, %zu that can never run here again); "
                "killed %d orphaned task(s)",
                rc.pending, rc.adopted, rc.requeued, rc.failed, rc.shrunk, rc.never, killed);
    return 0;
}
