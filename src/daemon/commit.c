/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * commit.c - from engine records to durable rows, then to actions.
 *
 * The engine's observer (gsd_observe) turns each record into per-job state
 * and a gsd_rec; gsd_commit writes the cycle's events, the dirty job rows
 * and the task rows, then COMMITs - one transaction per cycle; gsd_act
 * then acts on what is now durable: launches started jobs (an elastic
 * job's new generation too), signals preempted / cancelled / timed-out /
 * draining ones (elastic.c writes a drain's control file first), SIGSTOP / SIGCONT for
 * suspend / resume (or the executor's checkpoint-based suspend, resume_at on the GPUs the
 * engine gave back; the stop of a job whose checkpoint failed), forgets runs whose outcome
 * was committed, and makes the
 * executor calls queued for after the commit (binds of adopted jobs, retires
 * of final ones: events.c).
 *
 * Invariant: nothing is acted on (process started or signalled) before the
 * state change behind it is committed.  No job is ended for a mechanism the
 * executor lacks: the engine refuses those (serve.c masks them), and a
 * suspend record without GSD_XCAP_SUSPEND is a fatal internal error that
 * commits nothing.  A commit that fails (disk full, I/O error) puts the
 * daemon in read-only mode (disk.c): every change since the last commit
 * stays pending - job rows, records, dirty rows, task rows - and nothing of
 * it is acted on or answered until a retry commits it all.  Scheduler
 * thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "evbus.h"
#include "gsd_sched.h"

/* ---- the observer --------------------------------------------------------------------------- */

void gsd_observe(void *ud, const gs_record *r)
{
    gsd_sched *g = ud;
    if (!r->job) {
        /* (drains carry a reason and are logged once for all nodes by drain.c) */
        if ((r->type == GS_REC_NODE_DOWN || r->type == GS_REC_NODE_UP) && !r->reason)
            gsd_log("node %s is %s", gs_cluster_node(g->c, r->node)->name,
                    r->type == GS_REC_NODE_DOWN ? "down" : "up");
        return;
    }
    const gs_job *j = r->job;
    gsd_jobx *x = gsd_jx(g, j->slot);
    gsd_mark_dirty(g, j->slot);
    gsd_track(g, j, x);
    gsd_acct_observe(x, j, r->t);
    if (r->reason) x->last_reason = gsd_intern(g, r->reason);
    if (g->in_recovery) return; /* restoring state that is already durable */
    if (r->type == GS_REC_SUBMIT && x->recovering) {
        x->recovering = 0;
        return;
    }
    switch (r->type) {
    case GS_REC_DRAIN:
    case GS_REC_RESCALE: gsd_el_record(g, j, x, r); return;
    case GS_REC_START:
        if (x->el || gsd_el(x)) {
            x->el->generation = (int32_t)j->generation;
            x->el->rescales = j->rescales;
            x->el->failures = j->failures;
        }
        x->runs++;
        x->stop = GSD_STOP_NONE;
        x->exit_code = INT32_MIN;
        free(x->alloc);
        gsd_describe_job_alloc(g->c, j, x->where, sizeof x->where, &x->alloc);
        if (x->runs == 1) gsd_hist_observe(&g->m.wait, gs_time_to_sec(r->t - x->submit));
        g->m.launches++;
        gsd_push_rec(g, r->type, j->slot, r->t, "run %d on %s", x->runs, x->where);
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
        if (!gsd_exec_can(g->x, GSD_XCAP_SUSPEND)) {
            /* cannot happen: the engine was told the executor cannot suspend (serve.c) and
             * refuses every suspend.  Its tasks could not be stopped and the engine gave
             * their GPUs away: commit nothing of this cycle and stop (fatal), so the
             * database still has the job RUNNING and the next start adopts its tasks (or
             * requeues it, without GSD_XCAP_ADOPT) - never end a user's job for a
             * mechanism the executor lacks */
            gsd_log("FATAL: internal error: job %lld suspended, but executor %s cannot "
                    "suspend; the engine should have refused it",
                    (long long)j->id, gsd_exec_backend(g->x)->name);
            g->fatal = 1;
            return;
        }
        /* the engine released its GPUs (time-slicing); its stopped processes keep their GPU
         * memory - unless the executor checkpoints them (GSD_XCAP_CKPT: the CUDA driver moves
         * it to host memory; the outcome follows as a "checkpointed" event).  The row keeps
         * where it ran (placement), not an allocation. */
        free(x->alloc);
        x->alloc = NULL;
        if (gsd_exec_can(g->x, GSD_XCAP_CKPT))
            gsd_push_rec(g, r->type, j->slot, r->t,
                         "%s%sCUDA checkpoint: GPU memory freed on %s, then SIGSTOP",
                         r->reason ? r->reason : "", r->reason ? ": " : "", x->where);
        else
            gsd_push_rec(g, r->type, j->slot, r->t, "%s%sSIGSTOP; its GPU memory on %s stays held",
                         r->reason ? r->reason : "", r->reason ? ": " : "", x->where);
        return;
    case GS_REC_RESUME:
        free(x->alloc);
        gsd_describe_job_alloc(g->c, j, x->where, sizeof x->where, &x->alloc);
        gsd_push_rec(g, r->type, j->slot, r->t, "%s%sSIGCONT%s on %s", r->reason ? r->reason : "",
                     r->reason ? ": " : "",
                     gsd_exec_can(g->x, GSD_XCAP_CKPT) ? ", CUDA restore" : "", x->where);
        return;
    case GS_REC_FINISH:
    case GS_REC_FAIL:
    case GS_REC_CANCEL:
    case GS_REC_REJECT:
        g->m.finished[j->state]++;
        /* a cluster backend ends what it keeps for the job (its external job) once this is
         * committed; the spec is released at the publish after the commit, so copy now */
        gsd_xq_push(g, GSD_XC_RETIRE, j->id, x->spec.external, j->state, r->reason);
        if (j->state != GS_JOB_REJECTED)
            gsd_hist_observe(&g->m.jct, gs_time_to_sec(r->t - x->submit));
        x->stop = GSD_STOP_NONE;
        free(x->alloc);
        x->alloc = NULL;
        break;
    default: break;
    }
    gsd_push_rec(g, r->type, j->slot, r->t, "%s", r->reason ? r->reason : "");
}

/* ---- rows ----------------------------------------------------------------------------------- */

void gsd_fill_row(gsd_sched *g, const gs_job *j, gsd_jobx *x, gsd_jobrow *r)
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
    const char *reason = j->state == GS_JOB_PENDING && j->deferred ? gsd_wait_reason(x)
                         : j->state == GS_JOB_PENDING && j->reason ? j->reason
                                                                   : x->last_reason;
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
    r->elastic = (char *)gsd_el_json(x);
    r->gpu_us = x->gpu_us;     /* closed intervals (acct.c): a job holding GPUs adds its open one */
    r->array_id = x->array_id; /* written at insert only */
    r->array_task = x->array_task;
    (void)g;
}

int gsd_insert_row(gsd_sched *g, const gs_job *j, gsd_jobx *x)
{
    gsd_jobrow row;
    gsd_fill_row(g, j, x, &row);
    /* the immutable columns of a grouped job (issue 14), from its spec */
    row.task_gpus = gsd_spec_task_gpus_col(&x->spec);
    row.groups = gsd_spec_groups_col(&x->spec);
    int rc = gsd_store_insert_job(g->sh.store, &row);
    free(row.task_gpus);
    free(row.groups);
    return rc;
}

static const char *event_name(int type, const gsd_jobx *x)
{
    switch (type) {
    case GS_REC_START:
        return x->runs <= 1 ? "started" : x->el && x->el->generation > 1 ? "relaunched" : "resumed";
    case GSD_EV_TRAINING: return "training";
    case GSD_EV_UPDATED: return "updated"; /* job control (jobctl.c) */
    case GSD_EV_CANCEL_REQ: return "cancel-requested";
    case GSD_EV_STOPPING: return "stopping";
    case GSD_EV_KILLED: return "killed";
    case GSD_EV_TASK_EXIT: return "task-exited";
    case GSD_EV_ADOPTED: return "adopted";
    case GSD_EV_TIMEOUT: return "time-limit";
    case GSD_EV_LAUNCH_FAIL: return "launch-failed";
    case GSD_EV_HELD: return "held"; /* gsd_store_job_held reads these two */
    case GSD_EV_RELEASED: return "released";
    case GSD_EV_ELIGIBLE: return "eligible";
    case GSD_EV_DEP_NEVER: return "dependency-never-satisfied";
    case GSD_EV_CHECKPOINTED: return "checkpointed";
    case GSD_EV_RESTORED: return "restored";
    case GSD_EV_SUSPEND_FAILED: return "suspend-failed";
    case GSD_EV_RESUME_FAILED: return "resume-failed";
    case GSD_EV_GPU_FAULT: return "gpu-fault";
    case GS_REC_SUSPEND: return "suspended";
    case GS_REC_RESUME: return "continued"; /* SIGCONT; "resumed" is a start after a requeue */
    default: return type < GS_REC_NTYPES ? gs_rec_type_name((gs_rec_type)type) : "event";
    }
}

/* Write what changed since the last commit: the rows of jobs submitted since (only when
 * reinsert: a normal cycle INSERTed them at submission, inside its transaction), the records,
 * the dirty rows, the task rows, next_id.  Stops at the first failure (SQLite may have rolled
 * the transaction back: nothing more may be written outside it).  Clears nothing: the changes
 * stay pending until a COMMIT succeeds (changes_done). */
static int write_changes(gsd_sched *g, int reinsert)
{
    int rc = 0;
    for (size_t i = 0; reinsert && i < g->npins && !rc; i++) {
        int32_t s = g->pins[i];
        gsd_jobx *x = gsd_jx(g, s);
        if (!x->spec_json) continue;
        rc = gsd_insert_row(g, gs_engine_job(g->e, (size_t)s), x);
    }
    for (size_t i = 0; i < g->nrecs && !rc; i++) {
        gsd_rec *r = &g->recs[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)r->slot);
        gsd_jobx *x = gsd_jx(g, r->slot);
        /* a job's arrival after its submission (released from a hold, its dependencies met,
         * its array's throttle, or back after a withdrawal) is "queued": "submitted" is said
         * once, when the job arrives as it is submitted */
        const char *name =
            r->type == GS_REC_SUBMIT && r->t > j->submit ? "queued" : event_name(r->type, x);
        rc = gsd_store_add_event(g->sh.store, j->id, r->t, name, r->reason);
    }
    for (size_t i = 0; i < g->ndirty && !rc; i++) {
        int32_t s = g->dirtyv[i];
        gsd_jobx *x = gsd_jx(g, s);
        if (!x->spec_json) continue; /* a job already forgotten (late event) */
        gsd_jobrow row;
        gsd_fill_row(g, gs_engine_job(g->e, (size_t)s), x, &row);
        rc = gsd_store_update_job(g->sh.store, &row);
        /* job control: an update changed its spec (jobctl.c) */
        if (!rc && x->spec_dirty) rc = gsd_store_update_spec(g->sh.store, &row);
    }
    for (size_t i = 0; i < g->ntput && !rc; i++) {
        gsd_taskput *t = &g->tput[i];
        gsd_taskrow tr = {t->job_id, t->run, t->idx, t->handle, t->exit_code, t->gpus};
        rc = gsd_store_put_task(g->sh.store, &tr);
    }
    size_t nj = gs_engine_njobs(g->e);
    if (!rc && nj != g->meta_njobs)
        rc = gsd_store_meta_set(g->sh.store, "next_id", gs_engine_job(g->e, nj - 1)->id + 1);
    return rc;
}

/* The pending changes are durable: forget them. */
static void changes_done(gsd_sched *g)
{
    for (size_t i = 0; i < g->npins; i++) {
        gsd_jobx *x = gsd_jx(g, g->pins[i]);
        free(x->idem_key);
        free(x->idem_hash);
        x->idem_key = x->idem_hash = NULL;
    }
    g->npins = 0;
    for (size_t i = 0; i < g->ndirty; i++)
        gsd_jx(g, g->dirtyv[i])->dirty = gsd_jx(g, g->dirtyv[i])->spec_dirty = 0;
    g->ndirty = 0;
    for (size_t i = 0; i < g->ntput; i++) {
        free(g->tput[i].handle);
        free(g->tput[i].gpus);
    }
    g->ntput = 0;
    g->meta_njobs = gs_engine_njobs(g->e);
}

/* Write the pending changes and COMMIT (see the header).  A failure puts the daemon in read-only
 * mode (disk.c) with the changes still pending; in read-only mode this is the retry, which
 * first re-INSERTs the rows of the jobs submitted since the last commit. */
int gsd_commit(gsd_sched *g)
{
    double t0 = gsd_mono_sec();
    int rc = g->store_failed ? GS_EIO : write_changes(g, g->read_only);
    /* SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR):
     * COMMIT only what is still one transaction */
    if (!rc && !gsd_store_in_txn(g->sh.store)) rc = GS_EIO;
    if (!rc) rc = gsd_store_commit(g->sh.store);
    if (rc) {
        char why[256];
        snprintf(why, sizeof why, "%s",
                 gsd_store_immutable(g->sh.store)
                     ? "the disk was full when the daemon started: database opened read-only"
                     : gsd_store_errmsg(g->sh.store));
        gsd_store_rollback(g->sh.store);
        g->store_failed = 0;
        gsd_enter_read_only(g, why);
        return rc;
    }
    changes_done(g);
    /* events: the rows just committed go to the bus (streamed once the next snapshot, forced
     * here, shows them) */
    if (gsd_evbus_collect(g->sh.bus, g->sh.store) > 0) g->changed = 1;
    g->m.commits++;
    gsd_hist_observe(&g->m.commit, gsd_mono_sec() - t0);
    return 0;
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

/* Per task: its global GPU indices ("3,4") in gl, node-local ones (CUDA_VISIBLE_DEVICES) in
 * cuda, its node's name in node; task_gpus (issue 14: tasks of different sizes) in ng when
 * given.  Malloc'ed strings: job_gpus_free. */
static void job_gpus(gsd_sched *g, const gs_job *j, const char **node, char **cuda, char **gl,
                     int *ng)
{
    for (int t = 0; t < j->ntasks; t++) {
        /* tasks may differ in size (issue 14): each gets its own GPUs, in alloc from its offset */
        int tg = gs_job_task_gpus(j, t), first = gs_job_task_first(j, t);
        if (ng) ng[t] = tg;
        size_t cap = (size_t)tg * 12 + 1;
        cuda[t] = malloc(cap);
        gl[t] = malloc(cap);
        if (!cuda[t] || !gl[t]) abort();
        cuda[t][0] = gl[t][0] = '\0';
        size_t a = 0, b = 0;
        for (int k = 0; k < tg; k++) {
            int gi = j->alloc[first + k];
            const gs_gpu *gp = gs_cluster_gpu(g->c, gi);
            a += (size_t)snprintf(cuda[t] + a, cap - a, k ? ",%d" : "%d", gp->local);
            b += (size_t)snprintf(gl[t] + b, cap - b, k ? ",%d" : "%d", gi);
            if (node) node[t] = gs_cluster_node(g->c, gp->node)->name;
        }
    }
}

static void job_gpus_free(int nt, char **cuda, char **gl)
{
    for (int t = 0; t < nt; t++) {
        free(cuda[t]);
        free(gl[t]);
    }
    free(cuda);
    free(gl);
}

/* A resume: on the GPUs the engine gave back (the same ones, or with GSD_XCAP_REMAP others of
 * the same node: gs_engine_opts.live_remap). */
void gsd_resume_at(gsd_sched *g, const gs_job *j)
{
    int nt = j->ntasks;
    char **cuda = calloc((size_t)nt, sizeof *cuda), **gl = calloc((size_t)nt, sizeof *gl);
    if (!cuda || !gl) abort();
    job_gpus(g, j, NULL, cuda, gl, NULL);
    int rc = gsd_exec_resume_at(g->x, j->id, (const char *const *)gl, (const char *const *)cuda);
    if (rc == GS_ENOENT)
        gsd_log("job %lld: no tasks to continue", (long long)j->id);
    else if (rc)
        gsd_log("job %lld: executor %s cannot resume it on GPUs %s: %s", (long long)j->id,
                gsd_exec_name(g->x), nt ? gl[0] : "", gs_strerror(rc));
    job_gpus_free(nt, cuda, gl);
}

static void launch(gsd_sched *g, const gs_job *j, gs_time now)
{
    gsd_jobx *x = gsd_jx(g, j->slot);
    int nt = j->ntasks;
    const char **node = calloc((size_t)nt, sizeof *node);

    char **cuda = calloc((size_t)nt, sizeof *cuda), **gl = calloc((size_t)nt, sizeof *gl);
    if (!node || !cuda || !gl) abort();
    int *ng = j->task_gpus ? calloc((size_t)nt, sizeof *ng) : NULL;
    if (j->task_gpus && !ng) abort();
    job_gpus(g, j, node, cuda, gl, ng);
    x->master_port = free_port();
    gsd_launch l = {.job_id = j->id,
                    .run = x->runs,
                    .ntasks = nt,
                    .task_index_base = j->task_index,
                    /* an elastic job's world is the tasks of this generation */
                    .world_size = x->el ? nt : x->spec.ntasks,
                    .task_node = node,
                    .task_cuda = (const char *const *)cuda,
                    .task_gpus = (const char *const *)gl,
                    .task_ngpus = ng,
                    .spec = &x->spec,
                    .group = j->group,
                    .master_port = x->master_port,
                    .grace = gsd_job_grace(g, x),
                    .generation = x->el ? (int)j->generation : 0};
    if (gsd_exec_launch(g->x, &l, now, gsd_on_xev, g) == GS_EEXIST)
        gsd_log("job %lld: a run is still registered; not launching twice", (long long)j->id);
    job_gpus_free(nt, cuda, gl);
    free(node);
    free(ng);
}

void gsd_act(gsd_sched *g, gs_time now)
{
    /* runs that ended and whose outcome is now durable: forget them first, so a job that
     * was requeued and started again in the same cycle can be launched */
    for (size_t i = 0; i < g->nforget; i++) gsd_exec_forget(g->x, g->forget[i]);
    g->nforget = 0;
    /* binds of adopted jobs (before any launch of theirs below) and retires of final jobs */
    gsd_xq_run(g);
    for (size_t i = 0; i < g->nrecs; i++) {
        gsd_rec *r = &g->recs[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)r->slot);
        gsd_jobx *x = gsd_jx(g, r->slot);
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
            gsd_exec_stop(g->x, j->id, now, gsd_job_grace(g, x));
            break;
        case GS_REC_DRAIN: gsd_el_drain_act(g, j, now); break;
        case GS_REC_SUSPEND:
        case GS_REC_RESUME:
            /* SIGSTOP / SIGCONT to every task's process group; the stopped processes keep
             * their GPU memory - or with GSD_XCAP_CKPT checkpoint then SIGSTOP, SIGCONT then
             * restore, done by the executor's worker (its outcome: GSD_X_SUSPENDED).  A job
             * being stopped (preempted, cancelled, over its time limit, its checkpoint failed)
             * is left to finish its stop: freezing it would only delay its exit, and the stop
             * continues a suspended job itself. */
            if (x->stop != GSD_STOP_NONE) {
                gsd_log("job %lld %s while stopping (%s): no %s", (long long)j->id,
                        event_name(r->type, x), gsd_stop_name(x->stop),
                        r->type == GS_REC_SUSPEND ? "SIGSTOP" : "SIGCONT");
                break;
            }
            /* (an executor without GSD_XCAP_SUSPEND never gets here: the engine refuses
             * suspends for it, and gsd_observe treats one as a fatal internal error) */
            gsd_log("job %lld %s%s%s", (long long)j->id, event_name(r->type, x),
                    r->reason[0] ? ": " : "", r->reason);
            if (r->type == GS_REC_RESUME)
                gsd_resume_at(g, j);
            else if (gsd_exec_suspend(g->x, j->id, 1) == GS_ENOENT)
                gsd_log("job %lld: no tasks to suspend", (long long)j->id);
            break;
        case GSD_EV_SUSPEND_FAILED:
        case GSD_EV_GPU_FAULT:
            /* the fallback of a failed checkpoint-based suspend, or a suspended job whose GPU
             * went bad under it: the stop protocol, then the requeue (finalize_run) */
            if (x->stop !=
                (r->type == GSD_EV_GPU_FAULT ? GSD_STOP_GPU_FAULT : GSD_STOP_SUSPEND_FAILED))
                break;
            gsd_log("job %lld %s: %s", (long long)j->id, event_name(r->type, x), r->reason);
            gsd_exec_stop(g->x, j->id, now, gsd_job_grace(g, x));
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
