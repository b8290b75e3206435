/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * commands.c - the command queue between HTTP threads and the scheduler
 * thread, and the commands themselves: submit (with Idempotency-Key
 * replay; a held job or one with dependencies is submitted deferred and
 * handed to wait.c; a job array, spec "array", is expanded here into one job per index,
 * all in the one command), dry run, cancel (of a job, or of a whole array), hold / release,
 * and an admin's node
 * bad / good mark (stored in the nodes table in the cycle's transaction).
 *
 * HTTP threads call gsd_post (and gsd_cmd_free); everything else runs on
 * the scheduler thread inside a cycle.  Invariants: the queue, cmd->done
 * and cmd->abandoned are guarded by qmu; a command is answered (done = 1)
 * only after the cycle's commit, so a client told "submitted" or
 * "cancelled" finds it durable; a command abandoned by its HTTP thread (it
 * timed out) is freed by the scheduler thread.  New job rows are INSERTed
 * at submission, inside the cycle's transaction.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gsd_sched.h"

/* ---- commands ------------------------------------------------------------------------------- */

void gsd_cmd_fail(gsd_cmd *c, int status, int err, const char *fmt, ...)
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
    if (c->args) json_decref(c->args);
    free(c);
}

/* Parts of a submission: the head slot and, for non-gang jobs, the slots right after it. */
static size_t group_slots(gsd_sched *g, const gs_job *head, int32_t *out, size_t cap)
{
    size_t n = 0;
    size_t nj = gs_engine_njobs(g->e);
    for (size_t s = (size_t)head->slot; s < nj && n < cap; s++) {
        const gs_job *j = gs_engine_job(g->e, s);
        if (s != (size_t)head->slot && j->group != head->id) break;
        if (s == (size_t)head->slot || j->group == head->id) out[n++] = (int32_t)s;
    }
    return n;
}

static json_t *submit_result(gsd_sched *g, const gs_job *head)
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
    if (gsd_jx(g, head->slot)->array_id == head->id) {
        /* an array: its elements (their first parts), consecutive slots from the head's */
        json_t *eids = json_array(), *tasks = json_array();
        size_t nj = gs_engine_njobs(g->e);
        for (size_t s = (size_t)head->slot; s < nj; s++) {
            const gsd_jobx *x = gsd_jx_peek(g, (int32_t)s);
            if (x && x->array_id != head->id) break;
            if (!x || x->gone)
                continue; /* an element ended and forgotten (acct.c): a replay
                           * lists those the engine still has */
            const gs_job *j = gs_engine_job(g->e, s);
            if (j->task_index) continue;
            json_array_append_new(eids, json_integer(j->id));
            json_array_append_new(tasks, json_integer(x->array_task));
        }
        json_object_set_new(o, "array_id", json_integer(head->id));
        json_object_set_new(o, "array_job_ids", eids);
        json_object_set_new(o, "array_tasks", tasks);
    }
    return o;
}

/* gsd_spec_resolve_hived on the scheduler thread (the cluster is its own): 0, or the command
 * failed with 400 naming the field 'hived'. */
static int resolve_hived(gsd_sched *g, gsd_cmd *c, gsd_spec *sp)
{
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gsd_spec_resolve_hived(sp, g->c, &d);
    if (!rc) return 0;
    gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 400, rc, "%s", d.msg);
    c->result = json_pack("{s:s}", "field", "hived");
    return -1;
}

/* The daemon's state of the slots [before, njobs) the engine just added for one submission
 * (a job, its parts, or one array element): the first takes *own (left empty), the others
 * parse json, the canonical spec every one of them stores; deferred ones (held, with
 * dependencies, or elements of a throttled array) enter wait.c's stage.  The idempotency key
 * goes with the first slot when idem (one per command: an array's first element).  Each row
 * is INSERTed now, inside the cycle's transaction. */
static void take_slots(gsd_sched *g, gsd_cmd *c, size_t before, gsd_spec *own, const char *json,
                       int held, int idem, int64_t array_id, int32_t array_task, int32_t throttle,
                       gs_time now)
{
    size_t after = gs_engine_njobs(g->e);
    int deferred = own->hold || own->dependency || throttle > 0;
    for (size_t s = before; s < after; s++) {
        gsd_jobx *x = gsd_jx(g, (int32_t)s);
        const gs_job *j = gs_engine_job(g->e, s);
        if (s == before) {
            x->spec = *own; /* take ownership */
            gsd_spec_init(own);
            x->idem_key = idem && c->idem_key ? gsd_xstrdup(c->idem_key) : NULL;
            x->idem_hash = idem && c->idem_key ? gsd_xstrdup(c->idem_hash) : NULL;
        } else {
            gs_diag dd;
            const char *f;
            if (gsd_spec_parse("spec", json, strlen(json), &x->spec, &dd, &f))
                abort(); /* the canonical form of a valid spec always parses */
        }
        x->spec_json = gsd_xstrdup(json);
        x->submit = now;
        x->runs = 0;
        x->stop = GSD_STOP_NONE;
        x->exit_code = INT32_MIN;
        x->last_reason = NULL;
        x->array_id = array_id;
        x->array_task = array_task;
        x->array_throttle = throttle;
        x->throttled = (int8_t)(throttle > 0);
        if (deferred) {
            gsd_wait_add(g, (int32_t)s, held);
            gsd_track(g, j, x); /* no SUBMIT record until it arrives: count it now */
            if (held)
                gsd_push_rec(g, GSD_EV_HELD, (int32_t)s, now, "submitted held by %s", c->user);
        }
        /* INSERT now, inside the cycle's transaction: a second submit with the same
         * Idempotency-Key later in this cycle finds this row */
        gsd_pin(g, (int32_t)s); /* pending until committed (its idempotency key with it) */
        if (!g->store_failed && gsd_insert_row(g, j, x)) {
            /* the commit fails and the daemon goes read-only; nothing more is written in this
             * transaction (SQLite may have ended it) */
            gsd_log("cannot insert job %lld: %s", (long long)j->id, gsd_store_errmsg(g->sh.store));
            g->store_failed = 1;
        }
        gsd_activate(g, (int32_t)s);
        if (x->spec.interactive) gsd_run_track(g, (int32_t)s, now); /* gsched run's lease */
        g->m.submitted++;
    }
}

/* The GSCHED_ARRAY_* (and Slurm's SLURM_ARRAY_*) variables of one array element. */
static void array_env(gsd_spec *es, int64_t array_id, int32_t task, const gs_array *a)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)array_id);
    gsd_spec_setenv(es, "GSCHED_ARRAY_JOB_ID", v);
    gsd_spec_setenv(es, "SLURM_ARRAY_JOB_ID", v);
    snprintf(v, sizeof v, "%d", task);
    gsd_spec_setenv(es, "GSCHED_ARRAY_TASK_ID", v);
    gsd_spec_setenv(es, "SLURM_ARRAY_TASK_ID", v);
    snprintf(v, sizeof v, "%zu", a->n);
    gsd_spec_setenv(es, "GSCHED_ARRAY_TASK_COUNT", v);
    gsd_spec_setenv(es, "SLURM_ARRAY_TASK_COUNT", v);
    snprintf(v, sizeof v, "%d", a->idx[0]);
    gsd_spec_setenv(es, "SLURM_ARRAY_TASK_MIN", v);
    snprintf(v, sizeof v, "%d", a->idx[a->n - 1]);
    gsd_spec_setenv(es, "SLURM_ARRAY_TASK_MAX", v);
}
#define ARRAY_ENV_VARS 8 /* variables array_env sets */

/* A job array (spec "array"): one job per index, all in this command (one commit, one
 * Idempotency-Key), ids consecutive, the first one's id the array's id.  With a throttle every
 * element starts deferred and wait.c lets N at a time arrive. */
static void submit_array(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    gsd_spec *sp = &c->spec;
    gs_array a;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_array_parse(sp->array, &a, &d);
    if (rc) {
        gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 400, rc, "%s", d.msg);
        c->result = json_pack("{s:s}", "field", "array");
        return;
    }
    if (sp->nenv + ARRAY_ENV_VARS > GSD_MAX_ENV) {
        gsd_cmd_fail(c, 400, GS_ETOOBIG,
                     "'env': an array element gets %d GSCHED_ARRAY_* / SLURM_ARRAY_* variables: "
                     "give at most %d others",
                     ARRAY_ENV_VARS, GSD_MAX_ENV - ARRAY_ENV_VARS);
        c->result = json_pack("{s:s}", "field", "env");
        gs_array_release(&a);
        return;
    }
    gs_job_spec js;
    gsd_spec_job(sp, g->sh.o.default_duration, &js);
    if (!g->goodput) js.app = NULL;
    int deferred = sp->hold || sp->dependency || a.throttle > 0;
    int64_t array_id = 0;
    size_t first = gs_engine_njobs(g->e);
    for (size_t k = 0; k < a.n; k++) {
        size_t before = gs_engine_njobs(g->e);
        const gs_job *head = NULL;
        rc = deferred ? gs_engine_submit_deferred(g->e, &js, now, &head, &d)
                      : gs_engine_submit(g->e, &js, now, &head, &d);
        if (rc) {
            /* the same spec was accepted for the elements before: only memory can fail now;
             * the array is all or nothing, so those are cancelled (and say why) */
            gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 400, rc, "array element %d: %s", a.idx[k],
                         d.msg[0] ? d.msg : gs_strerror(rc));
            for (size_t s = first; s < gs_engine_njobs(g->e); s++) {
                const gs_job *j = gs_engine_job(g->e, s);
                if (!gs_job_state_final(j->state))
                    gs_engine_cancel(g->e, j, "the array's submission failed", now);
            }
            break;
        }
        if (!k) array_id = head->id;
        gsd_spec es;
        gsd_spec_init(&es);
        gs_diag dd;
        const char *f;
        if (gsd_spec_parse("spec", c->spec_json, strlen(c->spec_json), &es, &dd, &f))
            abort(); /* the canonical form of a valid spec always parses */
        array_env(&es, array_id, a.idx[k], &a);
        char *json = gsd_spec_to_json(&es);
        if (!json) abort();
        take_slots(g, c, before, &es, json, sp->hold, k == 0, array_id, a.idx[k], a.throttle, now);
        free(json);
        gsd_spec_release(&es);
    }
    if (!rc) c->job_id = array_id;
    g->changed = 1;
    gs_array_release(&a);
}

void gsd_do_submit(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    c->job_id = -1;
    gsd_spec *sp = &c->spec;
    if (c->idem_key) {
        int64_t id;
        char *hash = NULL;
        int rc = gsd_store_find_idem(g->sh.store, c->user, c->idem_key, &id, &hash);
        if (rc == 0) {
            int same = hash && !strcmp(hash, c->idem_hash);
            free(hash);
            if (!same) {
                gsd_cmd_fail(c, 409, GS_ECONFLICT,
                             "Idempotency-Key '%s' was already used for a different request",
                             c->idem_key);
                return;
            }
            /* the first answer again: 422 if the job was rejected, else the ids (200) */
            const gs_job *j = gs_engine_find_job(g->e, id);
            char *state = NULL, *reason = NULL;
            if (!j) gsd_store_job_state(g->sh.store, id, &state, &reason);
            int rejected = j ? j->state == GS_JOB_REJECTED : state && !strcmp(state, "REJECTED");
            const char *why = j ? j->reason : reason;
            if (rejected) {
                gsd_cmd_fail(c, 422, GS_ENEVER, "job %lld rejected: %s", (long long)id,
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
            gsd_cmd_fail(c, 500, GS_EIO, "database error: %s", gsd_store_errmsg(g->sh.store));
            return;
        }
    }
    /* a HiveD spec (hived:) says the VC, priority, tasks and groups, read against the cluster */
    if (resolve_hived(g, c, sp)) return;
    /* every VC name an accepted job uses becomes a row in listings and a metrics label:
     * bound how many a (possibly hostile) client can create. Only VCs with an accepted job
     * count (vcstat.jobs, kept by gsd_track): a rejected submit consumes nothing. */
    const char *vcname = sp->vc ? sp->vc : "default";
    if (g->nvc_used >= GSD_MAX_VCS && !gsd_vc_known(g, vcname)) {
        gsd_cmd_fail(c, 400, GS_ERANGE,
                     "'vc': this daemon already has %d virtual clusters; '%s' would be a new one",
                     GSD_MAX_VCS, vcname);
        c->result = json_pack("{s:s}", "field", "vc");
        return;
    }
    /* an application the goodput model does not know would fail the engine at its start */
    if (sp->app && g->goodput && gs_goodput_find_app(g->goodput, sp->app) < 0) {
        gsd_cmd_fail(c, 400, GS_EINVAL,
                     "'app': the goodput model has no application '%s' (serve --set "
                     "pollux_traces=DIR: its subdirectories)",
                     sp->app);
        c->result = json_pack("{s:s}", "field", "app");
        return;
    }
    /* a model the profiles do not know would silently get their 'default' speeds (fine for a
     * trace's arbitrary names, a typo in a submit) */
    if (sp->model && !gs_profiles_known(gs_engine_profiles(g->e), sp->model)) {
        gsd_cmd_fail(c, 400, GS_EINVAL,
                     "'model': the profiles have no model '%s' (serve --set profiles=FILE; "
                     "docs/heterogeneity.md lists the built-in ones)",
                     sp->model);
        c->result = json_pack("{s:s}", "field", "model");
        return;
    }
    /* tasks of different sizes need an executor that gives each its own GPU count */
    if (sp->task_gpus && !gsd_exec_can(g->x, GSD_XCAP_MIXED)) {
        gsd_cmd_fail(c, 400, GS_EUNSUPPORTED,
                     "'members': the %s executor cannot run tasks of different GPU counts in "
                     "one job%s; give every member the same gpus_per_task",
                     gsd_exec_name(g->x),
                     strcmp(gsd_exec_name(g->x), "slurm")
                         ? ""
                         : " (a Slurm step asks one GRES count per node or per task; a "
                           "heterogeneous Slurm job is not used yet)");
        c->result = json_pack("{s:s}", "field", "members");
        return;
    }
    /* gsched run: task 0's stdin comes from the daemon (gsd_exec_stdin) */
    if (sp->interactive && !gsd_exec_can_stdin(g->x)) {
        gsd_cmd_fail(c, 400, GS_EUNSUPPORTED,
                     "'interactive': the %s executor cannot run interactive jobs (gsched run "
                     "needs the local executor; with Slurm, use srun)",
                     gsd_exec_name(g->x));
        c->result = json_pack("{s:s}", "field", "interactive");
        return;
    }
    if (sp->array) {
        submit_array(g, c, now);
        return;
    }
    gs_job_spec js;
    gsd_spec_job(sp, g->sh.o.default_duration, &js);
    if (!g->goodput) js.app = NULL; /* no model: nothing progresses by one */
    size_t before = gs_engine_njobs(g->e);
    gs_diag d;
    gs_diag_init(&d, NULL);
    const gs_job *head = NULL;
    /* held, or waiting on other jobs: deferred in the engine until wait.c releases it */
    int deferred = sp->hold || sp->dependency;
    int held = sp->hold;
    int rc = deferred ? gs_engine_submit_deferred(g->e, &js, now, &head, &d)
                      : gs_engine_submit(g->e, &js, now, &head, &d);
    if (rc) {
        gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 400, rc, "%s", d.msg[0] ? d.msg : gs_strerror(rc));
        return;
    }
    take_slots(g, c, before, sp, c->spec_json, held, 1, 0, 0, 0, now);
    c->job_id = head->id;
    g->changed = 1;
}

/* Answer a submit after the cycle: 201, or 422 when the job was rejected on arrival. */
void gsd_finish_submit(gsd_sched *g, gsd_cmd *c)
{
    const gs_job *head = c->job_id >= 0 ? gs_engine_find_job(g->e, c->job_id) : NULL;
    if (!head) return;
    if (head->state == GS_JOB_REJECTED) {
        gsd_cmd_fail(c, 422, GS_ENEVER, "job %lld rejected: %s", (long long)head->id,
                     head->reason ? head->reason : "it can never run here");
        c->result = json_pack("{s:I}", "job_id", (json_int_t)head->id);
        return;
    }
    c->status = 201;
    c->result = submit_result(g, head);
}

void gsd_do_dryrun(gsd_sched *g, gsd_cmd *c)
{
    gsd_spec *sp = &c->spec;
    if (resolve_hived(g, c, sp)) return;
    json_t *o = json_object();
    gs_job_spec js;
    gsd_spec_job(sp, g->sh.o.default_duration, &js);
    gs_probe pr;
    int prc = gs_engine_probe(g->e, &js, &pr);
    if (prc) { /* the dry run failed alone (out of memory); the engine goes on */
        json_decref(o);
        gsd_cmd_fail(c, 503, prc, "the dry run failed: %s", gs_strerror(prc));
        return;
    }
    int fits = pr.verdict == GS_PROBE_NOW, feasible = pr.verdict != GS_PROBE_NEVER;
    json_t *pl = json_array();
    for (int t = 0, off = 0; fits && t < pr.ntasks; t++) {
        json_t *gl = json_array();
        /* tasks may differ in size (issue 14): the spec's counts, in task order */
        int n = t < sp->ntasks ? gsd_spec_task_gpus(sp, t) : pr.gpus_per_task;
        const int *tg = pr.placement + off;
        off += n;
        int node = gs_cluster_gpu(g->c, tg[0])->node;
        for (int k = 0; k < n; k++)
            json_array_append_new(gl, json_integer(gs_cluster_gpu(g->c, tg[k])->local));
        json_array_append_new(pl, json_pack("{s:i,s:s,s:o}", "task", t, "node",
                                            gs_cluster_node(g->c, node)->name, "gpus", gl));
    }
    /* jobs that would be ahead of it in its queue, as the policy orders them: it would be
     * the newest job (largest id) */
    gsd_jview me;
    memset(&me, 0, sizeof me);
    me.id = INT64_MAX;
    me.q = pr.key;
    int ahead = 0;
    for (size_t i = 0; g->sh.snap && i < g->sh.snap->njobs; i++) {
        const gsd_jview *v = g->sh.snap->jobs[i];
        if (v->state == GS_JOB_PENDING && v->q.queue == me.q.queue && gsd_view_cmp(v, &me) < 0)
            ahead++;
    }
    const char *why = pr.reason[0] ? pr.reason : NULL;
    int gpus = pr.gpus;
    json_object_set_new(o, "fits_now", json_boolean(fits));
    json_object_set_new(o, "feasible", json_boolean(feasible));
    json_object_set_new(o, "placement", pl);
    json_object_set_new(o, "gpus", json_integer(gpus));
    json_object_set_new(o, "free_gpus", json_integer(gs_cluster_free(g->c)));
    json_object_set_new(o, "pending_ahead", json_integer(ahead));
    char qtext[200];
    gs_engine_queue_text(g->e, pr.key.queue, qtext, sizeof qtext);
    json_object_set_new(o, "queue", json_string(qtext));
    json_object_set_new(o, "policy", json_string(gs_engine_policy_name(g->e)));
    if (why) json_object_set_new(o, "reason", json_string(why));
    if (pr.verdict == GS_PROBE_PREEMPT) {
        json_t *pv = json_array();
        for (int k = 0; k < pr.nvictims; k++)
            json_array_append_new(pv, json_integer((json_int_t)pr.victims[k]));
        json_object_set_new(o, "would_preempt", pv);
    }
    gs_probe_release(&pr);
    json_object_set_new(o, "note",
                        json_string("placement by free GPUs now; the policy may still make the job "
                                    "wait (queue order, quotas, priorities)"));
    c->status = 200;
    c->result = o;
}

static int cancel_one(gsd_sched *g, const gs_job *j, const char *by, gs_time now)
{
    gsd_jobx *x = gsd_jx(g, j->slot);
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
    gsd_mark_dirty(g, j->slot);
    gsd_push_rec(g, GSD_EV_CANCEL_REQ, j->slot, now, "by %s: SIGTERM, SIGKILL after %llds", by,
                 (long long)(gsd_job_grace(g, x) / GS_SEC));
    return 0;
}

/* Cancel every unfinished element of array c->job_id (DELETE /v1/jobs/ID?array=1, scancel
 * ID): 0 when it is an array this daemon has live elements of, else -1 (cancel the job). */
static int cancel_array(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    size_t nj = gs_engine_njobs(g->e), s0 = nj;
    const gs_job *h = gs_engine_find_job(g->e, c->job_id);
    if (h && gsd_jx(g, h->slot)->array_id == h->id)
        s0 = (size_t)h->slot;
    else if (!h) /* its first element ended before a restart: its others follow in slot order */
        for (size_t s = 0; s < nj && s0 == nj; s++) {
            const gsd_jobx *x = gsd_jx_peek(g, (int32_t)s); /* (forgotten jobs: acct.c) */
            if (x && !x->gone && x->array_id == c->job_id) s0 = s;
        }
    if (s0 == nj) return -1;
    const gs_job *first = gs_engine_job(g->e, s0);
    if (!c->admin && strcmp(first->user, c->user)) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return 0;
    }
    json_t *ids = json_array(), *stopping = json_array();
    int n = 0;
    for (size_t s = s0; s < nj; s++) {
        const gsd_jobx *x = gsd_jx_peek(g, (int32_t)s);
        if (x && x->array_id != c->job_id) break;
        if (!x || x->gone) continue; /* elements already ended and forgotten (acct.c) */
        const gs_job *p = gs_engine_job(g->e, s);
        if (gs_job_state_final(p->state)) continue;
        n++;
        if (cancel_one(g, p, c->user, now)) continue;
        json_array_append_new(gs_job_state_final(p->state) ? ids : stopping, json_integer(p->id));
    }
    if (!n) {
        json_decref(ids);
        json_decref(stopping);
        gsd_cmd_fail(c, 409, GS_ESTATE, "array %lld has no unfinished element",
                     (long long)c->job_id);
        return 0;
    }
    c->status = 200;
    c->result =
        json_pack("{s:I,s:I,s:o,s:o,s:I}", "id", (json_int_t)c->job_id, "array_id",
                  (json_int_t)c->job_id, "cancelled", ids, "stopping", stopping, "grace_seconds",
                  (json_int_t)(gsd_job_grace(g, gsd_jx(g, (int32_t)s0)) / GS_SEC));
    return 0;
}

void gsd_do_cancel(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    if (c->args && json_is_true(json_object_get(c->args, "array")) && !cancel_array(g, c, now))
        return;
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j) { /* forgotten (its memory given back) or moved by retention: issue 16, acct.c */
        gsd_acct_gone(g, c, "already ", "");
        return;
    }
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    if (gs_job_state_final(j->state)) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is already %s", (long long)j->id,
                     gs_job_state_name(j->state));
        return;
    }
    int32_t slots[GSD_MAX_GPUS];
    size_t n = j->group == j->id ? group_slots(g, j, slots, GSD_MAX_GPUS) : 0;
    if (!n) slots[n++] = j->slot;
    json_t *ids = json_array(), *stopping = json_array();
    for (size_t i = 0; i < n; i++) {
        const gs_job *p = gs_engine_job(g->e, (size_t)slots[i]);
        if (gs_job_state_final(p->state)) continue;
        if (cancel_one(g, p, c->user, now)) continue;
        json_array_append_new(gs_job_state_final(p->state) ? ids : stopping, json_integer(p->id));
    }
    c->status = 200;
    c->result = json_pack("{s:I,s:o,s:o,s:I}", "id", (json_int_t)j->id, "cancelled", ids,
                          "stopping", stopping, "grace_seconds",
                          (json_int_t)(gsd_job_grace(g, gsd_jx(g, j->slot)) / GS_SEC));
}

/* Hold or release a pending job (every part of a non-gang head), with the rules of cancel:
 * its owner or an admin (others: 404, as for any job they cannot see).  A job already in its
 * policy's queue is taken back out first (jobctl.c). */
void gsd_do_hold(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    int hold = c->kind == GSD_CMD_HOLD;
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j) { /* forgotten (its memory given back) or moved by retention: issue 16, acct.c */
        gsd_acct_gone(g, c, "",
                      hold ? ": only pending jobs can be held"
                           : ": only pending jobs can be released");
        return;
    }
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    if (j->state != GS_JOB_PENDING) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s: only pending jobs can be %s",
                     (long long)j->id, gs_job_state_name(j->state), hold ? "held" : "released");
        return;
    }
    int32_t slots[GSD_MAX_GPUS];
    size_t n = j->group == j->id ? group_slots(g, j, slots, GSD_MAX_GPUS) : 0;
    if (!n) slots[n++] = j->slot;
    /* the parts already in their policy's queue are taken back out first (jobctl.c): a
     * policy that cannot do so refuses the first one, before anything changed */
    uint8_t queued[GSD_MAX_GPUS] = {0};
    for (size_t i = 0; hold && i < n; i++) {
        const gs_job *p = gs_engine_job(g->e, (size_t)slots[i]);
        if (p->state != GS_JOB_PENDING || p->deferred) continue;
        if (gsd_jobctl_withdraw(g, c, p, now)) return;
        queued[i] = 1;
    }
    json_t *ids = json_array();
    for (size_t i = 0; i < n; i++) {
        const gs_job *p = gs_engine_job(g->e, (size_t)slots[i]);
        gsd_jobx *x = gsd_jx(g, p->slot);
        if (p->state != GS_JOB_PENDING) continue;
        if (!hold && (!p->deferred || !x->held)) continue;
        json_array_append_new(ids, json_integer(p->id));
        if (x->held == hold && !queued[i]) continue; /* already so */
        x->held = (int8_t)hold;
        gsd_push_rec(g, hold ? GSD_EV_HELD : GSD_EV_RELEASED, p->slot, now,
                     queued[i] ? "by %s (taken out of the queue)" : "by %s", c->user);
        gsd_mark_dirty(g, p->slot);
    }
    if (!hold && !json_array_size(ids)) {
        json_decref(ids);
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is not held", (long long)j->id);
        return;
    }
    c->status = 200;
    c->result = json_pack("{s:I,s:o,s:b}", "id", (json_int_t)j->id, "ids", ids, "held", hold);
}

int gsd_node_mark(gsd_sched *g, const char *name, int bad, const char *why, gs_time t)
{
    int found = 0;
    for (int n = gs_cluster_find_node(g->c, name); n >= 0;
         n = gs_cluster_find_node_next(g->c, name, n)) {
        found++;
        gsd_nodest *ns = &g->nodest[n];
        ns->bad = (int8_t)bad;
        ns->bad_why = why && *why ? gsd_intern(g, why) : NULL;
        ns->bad_since = t;
        gs_engine_set_node_bad(g->e, n, bad, why && *why ? why : NULL);
    }
    if (found) g->changed = 1;
    return found;
}

/* Mark a node bad (no new job goes there, its jobs run on) or good again: admins only.  The
 * mark is stored by name (a restart keeps it) and logged; it applies to the machine, i.e. every
 * node cell of that name (one per HiveD chain the machine is in). */
void gsd_do_node(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    int bad = c->kind == GSD_CMD_NODE_BAD;
    if (!c->admin) {
        gsd_cmd_fail(c, 403, GS_EPERM, "only an admin may mark nodes %s", bad ? "bad" : "good");
        return;
    }
    int n = gs_cluster_find_node(g->c, c->node);
    if (n < 0) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no node '%s'", c->node);
        return;
    }
    /* a machine in several chains is several node cells: marked together, so they agree */
    int was = bad;
    for (; n >= 0; n = gs_cluster_find_node_next(g->c, c->node, n))
        if (g->nodest[n].bad != bad) was = !bad;
    char why[512];
    snprintf(why, sizeof why, "%s%s(by %s)", c->why, c->why[0] ? " " : "", c->user);
    if (was != bad) {
        /* the mark and its node event (nodeadm.c's kind: job_id NULL, node = name) */
        json_t *dj = json_pack("{s:s}", "by", c->user);
        char *data = json_dumps(dj, JSON_COMPACT);
        json_decref(dj);
        int rc = gsd_store_put_node(g->sh.store, c->node, bad, why, now);
        if (!rc)
            rc = gsd_store_add_node_event(g->sh.store, c->node, now, bad ? "bad" : "good", why,
                                          data);
        free(data);
        if (rc) {
            g->store_failed = 1;
            gsd_cmd_fail(c, 503, GS_EIO, "the daemon cannot write its database");
            return;
        }
        gsd_node_mark(g, c->node, bad, why, now);
        gsd_log("node %s marked %s by %s%s%s", c->node, bad ? "bad" : "good", c->user,
                c->why[0] ? ": " : "", c->why);
    }
    c->status = 200;
    c->result = json_pack("{s:s,s:b,s:b,s:s}", "node", c->node, "bad", bad, "changed", was != bad,
                          "reason", why);
}

gsd_cmd *gsd_take_commands(gsd_sched *g)
{
    pthread_mutex_lock(&g->sh.qmu);
    gsd_cmd *c = g->sh.qhead;
    g->sh.qhead = g->sh.qtail = NULL;
    pthread_mutex_unlock(&g->sh.qmu);
    return c;
}

void gsd_answer(gsd_sched *g, gsd_cmd *list)
{
    gsd_cmd *dead = NULL;
    pthread_mutex_lock(&g->sh.qmu);
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
    pthread_cond_broadcast(&g->sh.qdone);
    pthread_mutex_unlock(&g->sh.qmu);
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
