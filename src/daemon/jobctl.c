/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobctl.c - job control on the scheduler thread (issue 16): a queued job taken
 * back out of its policy's queue (the hold of an eligible job), and the requeue of a
 * running job by hand.
 *
 * A hold of a job already in its policy's queue asks the engine to withdraw it
 * (gs_engine_withdraw: the policy forgets it, the job is deferred again, as if
 * submitted held) and puts it in wait.c's stage, held, with its dependencies
 * satisfied (it had arrived, so they were).  wait.c then releases it like any
 * held job (gs_engine_release: it arrives anew, behind the jobs already queued
 * in arrival-ordered policies).  A policy without the on_withdraw op keeps its
 * jobs: the command fails with 409 and nothing changes.
 *
 * Requeue (like scontrol requeue / requeuehold): a RUNNING job is stopped through the
 * stop protocol of a preemption (gs_engine_preempt: SIGTERM, the grace period, SIGKILL;
 * the job checkpoints on SIGTERM), and once its tasks are gone the engine requeues it
 * (event 'requeued').  With a hold, the job is in g->rqholdv (x->rqhold) until then;
 * gsd_jobctl_requeued, run right after the executor's poll and before the policy's pass,
 * withdraws and holds it at the cycle its stop is done, so it never starts again first.
 * That pending hold lives in memory only: a daemon restart during the stop requeues the
 * job without the hold.
 *
 * Invariants: the engine performs every transition; the daemon writes no job
 * field; the durable record of a hold is its 'held' event (gsd_store_job_held),
 * committed with the cycle, so a restart brings the job back held.  Scheduler
 * thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gsched/jobdeps.h"
#include "gsd_sched.h"
#include "spec.h"

/* The 409 of a policy without on_withdraw. */
static void fail_unsupported(gsd_sched *g, gsd_cmd *c, const gs_job *j, const char *what)
{
    gsd_cmd_fail(c, 409, GS_EUNSUPPORTED,
                 "policy '%s' cannot take a queued job back out (it has no on_withdraw op): "
                 "job %lld cannot be %s",
                 gs_engine_policy_name(g->e), (long long)j->id, what);
}

int gsd_jobctl_withdraw(gsd_sched *g, gsd_cmd *c, const gs_job *j, gs_time now)
{
    int rc = gs_engine_withdraw(g->e, j, now);
    if (rc && !c) {
        gsd_log("job %lld: cannot hold it: %s", (long long)j->id, gs_strerror(rc));
        return rc;
    }
    if (rc == GS_EUNSUPPORTED) {
        gsd_cmd_fail(c, 409, rc,
                     "job %lld is already in the queue of policy '%s', which cannot take a "
                     "queued job back out (it has no on_withdraw op): only jobs not yet "
                     "eligible (submitted with --hold, or waiting on dependencies) can be "
                     "held or updated under it",
                     (long long)j->id, gs_engine_policy_name(g->e));
        return rc;
    }
    if (rc) {
        gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 409, rc, "job %lld: %s", (long long)j->id,
                     gs_strerror(rc));
        return rc;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    gsd_track(g, j, x); /* no longer among its VC's pending jobs (no engine record says so) */
    gsd_wait_add(g, j->slot, 1);
    /* it had arrived: its dependencies were satisfied, and such answers are final - except
     * singleton's (another job of its name may run by its release): that one is asked again */
    if (!x->spec.dependency || !strstr(x->spec.dependency, "singleton")) {
        gsd_wait_free(x);
        x->depst = GS_DEP_MET;
    }
    gsd_mark_dirty(g, j->slot);
    return 0;
}

void gsd_do_requeue(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    int hold = c->args && json_is_true(json_object_get(c->args, "hold"));
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j) { /* forgotten (its memory given back) or moved by retention: issue 16, acct.c */
        gsd_acct_gone(g, c, "", ": only running jobs can be requeued");
        return;
    }
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    if (j->state != GS_JOB_RUNNING) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s: only running jobs can be requeued%s",
                     (long long)j->id, gs_job_state_name(j->state),
                     j->state == GS_JOB_PENDING ? " (a pending job is in its queue already)" : "");
        return;
    }
    if (x->stop != GSD_STOP_NONE) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is being stopped already (%s)", (long long)j->id,
                     gsd_stop_name(x->stop));
        return;
    }
    if (hold && !gs_engine_can_withdraw(g->e)) {
        fail_unsupported(g, c, j, "requeued held (requeue it without a hold)");
        return;
    }
    char why[160];
    snprintf(why, sizeof why, "requeued by %s%s", c->user, hold ? " (held)" : "");
    int rc = gs_engine_preempt(g->e, j, gsd_intern(g, why));
    if (rc) {
        gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 409, rc, "job %lld: %s", (long long)j->id,
                     gs_strerror(rc));
        return;
    }
    gsd_mark_dirty(g, j->slot);
    if (hold && !x->rqhold) {
        if (g->nrqhold == g->caprqhold) {
            g->caprqhold = g->caprqhold ? 2 * g->caprqhold : 16;
            g->rqholdv = gsd_xrealloc(g->rqholdv, g->caprqhold * sizeof *g->rqholdv);
        }
        g->rqholdv[g->nrqhold++] = j->slot;
        x->rqhold = 1;
    }
    c->status = 202;
    c->result = json_pack("{s:I,s:b,s:b,s:I}", "id", (json_int_t)j->id, "requeued", 1, "held", hold,
                          "grace_seconds", (json_int_t)(gsd_job_grace(g, x) / GS_SEC));
}

void gsd_jobctl_requeued(gsd_sched *g, gs_time now)
{
    size_t w = 0;
    for (size_t i = 0; i < g->nrqhold; i++) {
        int32_t s = g->rqholdv[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = gsd_jx(g, s);
        if (j->state == GS_JOB_PREEMPTED) { /* still stopping */
            g->rqholdv[w++] = s;
            continue;
        }
        x->rqhold = 0;
        if (j->state != GS_JOB_PENDING || !j->arrived) continue; /* it ended meanwhile */
        if (gsd_jobctl_withdraw(g, NULL, j, now)) continue;      /* logged */
        gsd_push_rec(g, GSD_EV_HELD, s, now, "requeued held");
    }
    g->nrqhold = w;
}

/* ---- update (PATCH /v1/jobs/{id}) ---------------------------------------------------------- */

/* The changed spec n (a copy of the job's, fields applied from args), reparsed from its
 * canonical form: the validation of a submission.  0, or fails c (400). */
static int apply_args(gsd_cmd *c, const gsd_spec *old, json_t *args, gsd_spec *n, char **json)
{
    const char *f = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    char *oj = gsd_spec_to_json(old);
    gsd_spec t;
    gsd_spec_init(&t);
    if (!oj || gsd_spec_parse("spec", oj, strlen(oj), &t, &d, &f)) abort(); /* it parsed once */
    free(oj);
    json_t *v;
    if ((v = json_object_get(args, "priority"))) {
        if (json_is_integer(v)) {
            t.priority = (int)json_integer_value(v);
            if (json_integer_value(v) != t.priority) t.priority = GSD_PRIO_MAX + 1; /* range */
        } else if (gs_parse_priority(json_string_value(v), GSD_PRIO_MAX, &t.priority, &d)) {
            gsd_spec_release(&t);
            gsd_cmd_fail(c, 400, GS_EINVAL, "'priority': %s", d.msg);
            return -1;
        }
    }
    if ((v = json_object_get(args, "time_limit"))) {
        const char *s = json_string_value(v);
        if (json_is_integer(v)) {
            json_int_t sec = json_integer_value(v);
            if (sec > GSD_DURATION_MAX / GS_SEC) { /* before the product overflows */
                gsd_spec_release(&t);
                gsd_cmd_fail(c, 400, GS_ERANGE,
                             "'time_limit': %lld seconds is longer than 100 years", (long long)sec);
                return -1;
            }
            t.time_limit = sec < 0 ? -1 : sec * GS_SEC;
        } else if (!strcasecmp(s, "UNLIMITED") || !strcmp(s, "0")) {
            t.time_limit = 0;
        } else if (gsd_parse_duration(s, GS_SEC, &t.time_limit, &d)) {
            gsd_spec_release(&t);
            gsd_cmd_fail(c, 400, GS_EINVAL, "'time_limit': '%s' is not a duration: %s", s, d.msg);
            return -1;
        }
        if (t.time_limit < 0) {
            gsd_spec_release(&t);
            gsd_cmd_fail(c, 400, GS_ERANGE, "'time_limit' must not be negative");
            return -1;
        }
    }
    if ((v = json_object_get(args, "gpus"))) {
        json_int_t g = json_integer_value(v);
        if (g < 1 || g > GSD_MAX_GPUS || g % t.ntasks) {
            gsd_spec_release(&t);
            gsd_cmd_fail(c, 400, GS_EINVAL,
                         "'gpus': %lld GPUs cannot be split evenly over the job's %d task(s) "
                         "(1 to %d, a multiple of the tasks)",
                         (long long)g, t.ntasks, GSD_MAX_GPUS);
            return -1;
        }
        t.gpus_per_task = (int)(g / t.ntasks);
    }
    if ((v = json_object_get(args, "vc"))) {
        free(t.vc);
        t.vc = gsd_xstrdup(json_string_value(v));
    }
    if ((v = json_object_get(args, "name"))) {
        free(t.name);
        t.name = gsd_xstrdup(json_string_value(v));
    }
    *json = gsd_spec_to_json(&t);
    gsd_spec_release(&t);
    gsd_spec_init(n);
    if (!*json) abort();
    int rc = gsd_spec_parse("update", *json, strlen(*json), n, &d, &f);
    if (rc) {
        gsd_cmd_fail(c, 400, rc, "%s", d.msg);
        if (f) c->result = json_pack("{s:s}", "field", f);
        free(*json);
        *json = NULL;
        gsd_spec_release(n);
        return -1;
    }
    return 0;
}

static void add_change(char *buf, size_t cap, const char *what, const char *from, const char *to)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s %s -> %s", n ? ", " : "", what, from, to);
}

static void limit_text(gs_time t, char *buf, size_t cap)
{
    if (t)
        gsd_format_duration(t, buf, cap);
    else
        snprintf(buf, cap, "UNLIMITED");
}

void gsd_do_update(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j) { /* forgotten (its memory given back) or moved by retention: issue 16, acct.c */
        gsd_acct_gone(g, c, "", ": only active jobs can be updated");
        return;
    }
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    const gsd_spec *o = &x->spec;
    if (gs_job_state_final(j->state)) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s: only active jobs can be updated",
                     (long long)j->id, gs_job_state_name(j->state));
        return;
    }
    if (o->hived || (!o->gang && o->ntasks > 1) || o->max_gpus > 0 || gsd_spec_grouped(o)) {
        gsd_cmd_fail(c, 409, GS_EUNSUPPORTED,
                     "job %lld cannot be updated: %s (cancel it and submit it again)",
                     (long long)j->id,
                     o->hived              ? "its HiveD spec says its VC, priority and tasks"
                     : o->max_gpus > 0     ? "it is elastic (resize a running one)"
                     : gsd_spec_grouped(o) ? "its tasks differ in size or are grouped"
                                           : "it is a non-gang submission of several jobs");
        return;
    }
    gsd_spec n;
    char *nj = NULL;
    if (apply_args(c, o, c->args, &n, &nj)) return;
    /* what changes, and who may change it */
    int pri = n.priority != o->priority, lim = n.time_limit != o->time_limit;
    int gpus = n.gpus_per_task != o->gpus_per_task;
    int vc = strcmp(n.vc ? n.vc : "default", o->vc ? o->vc : "default") != 0;
    int name = strcmp(n.name ? n.name : "", o->name ? o->name : "") != 0;
    const char *why = NULL;
    int status = 409;
    if (j->state != GS_JOB_PENDING && (pri || gpus || vc || name))
        why = "only its time limit can change while it runs (the rest only while pending)";
    else if (pri && n.priority > o->priority && !c->admin)
        why = "only an admin can raise a job's priority", status = 403;
    else if (lim && j->state != GS_JOB_PENDING && !c->admin &&
             (!n.time_limit || (o->time_limit && n.time_limit > o->time_limit)))
        why = "only an admin can raise the time limit of a running job", status = 403;
    else if (vc && g->nvc_used >= GSD_MAX_VCS && !gsd_vc_known(g, n.vc ? n.vc : "default"))
        why = "this daemon has its most virtual clusters: the VC would be a new one", status = 400;
    if (why) {
        gsd_cmd_fail(c, status, status == 403 ? GS_EPERM : GS_ESTATE, "job %lld: %s",
                     (long long)j->id, why);
        gsd_spec_release(&n);
        free(nj);
        return;
    }
    /* a pending job changed in the engine: it must still fit this cluster (submit's dry run) */
    gs_job_spec js;
    gsd_spec_job(&n, g->sh.o.default_duration, &js);
    if (!g->goodput) js.app = NULL;
    js.id = -1;
    int eng = j->state == GS_JOB_PENDING && (pri || gpus || vc || name);
    if (eng && (gpus || vc)) {
        gs_probe pr;
        int prc = gs_engine_probe(g->e, &js, &pr);
        int never = !prc && pr.verdict == GS_PROBE_NEVER;
        char r[256];
        snprintf(r, sizeof r, "%s", prc ? gs_strerror(prc) : pr.reason);
        if (!prc) gs_probe_release(&pr);
        if (prc || never) {
            gsd_cmd_fail(c, prc ? 503 : 400, prc ? prc : GS_ENEVER, "job %lld: %s: %s",
                         (long long)j->id, prc ? "the dry run failed" : "it could never run here",
                         r);
            gsd_spec_release(&n);
            free(nj);
            return;
        }
    }
    int queued = eng && !j->deferred;
    if (queued && !gs_engine_can_withdraw(g->e)) {
        gsd_cmd_fail(c, 409, GS_EUNSUPPORTED,
                     "job %lld is in the queue of policy '%s', which cannot take a queued job "
                     "back out (it has no on_withdraw op): only its time limit can change; "
                     "hold it before it is queued (submit --hold), or cancel it and submit it "
                     "again",
                     (long long)j->id, gs_engine_policy_name(g->e));
        gsd_spec_release(&n);
        free(nj);
        return;
    }
    if (eng) {
        gs_diag d;
        gs_diag_init(&d, NULL);
        int rc = queued ? gs_engine_withdraw(g->e, j, now) : 0;
        if (!rc) {
            gsd_track(g, j, x); /* out of its VC's pending jobs while it changes */
            if (vc && x->accepted) {
                /* it leaves its VC's accepted jobs (jobs.c's rule); gsd_track counts it in
                 * the new one below */
                gsd_vcstat *v = &g->vcstat[j->vc];
                if (--v->jobs == 0) g->nvc_used--;
                x->accepted = 0;
            }
            rc = gs_engine_update_deferred(g->e, j, &js, &d);
            gsd_track(g, j, x);
        }
        if (!rc && queued) rc = gs_engine_release(g->e, j, now);
        if (rc) {
            /* validated above: only out of memory (latched: the engine stops) or a check of
             * the engine's own that the spec parser does not make */
            gsd_cmd_fail(c, rc == GS_ENOMEM ? 500 : 400, rc, "job %lld: %s", (long long)j->id,
                         d.msg[0] ? d.msg : gs_strerror(rc));
            gsd_spec_release(&n);
            free(nj);
            return;
        }
    }
    char what[512] = "", a[64], b[64];
    if (pri) {
        snprintf(a, sizeof a, "%d", o->priority);
        snprintf(b, sizeof b, "%d", n.priority);
        add_change(what, sizeof what, "priority", a, b);
    }
    if (lim) {
        limit_text(o->time_limit, a, sizeof a);
        limit_text(n.time_limit, b, sizeof b);
        add_change(what, sizeof what, "time limit", a, b);
    }
    if (gpus) {
        snprintf(a, sizeof a, "%d", o->ntasks * o->gpus_per_task);
        snprintf(b, sizeof b, "%d", n.ntasks * n.gpus_per_task);
        add_change(what, sizeof what, "gpus", a, b);
    }
    if (vc) add_change(what, sizeof what, "vc", o->vc ? o->vc : "default", n.vc ? n.vc : "default");
    if (name) add_change(what, sizeof what, "name", o->name ? o->name : "", n.name ? n.name : "");
    json_t *changed = json_array();
    if (pri) json_array_append_new(changed, json_string("priority"));
    if (lim) json_array_append_new(changed, json_string("time_limit"));
    if (gpus) json_array_append_new(changed, json_string("gpus"));
    if (vc) json_array_append_new(changed, json_string("vc"));
    if (name) json_array_append_new(changed, json_string("name"));
    if (json_array_size(changed)) {
        gsd_spec_release(&x->spec);
        x->spec = n;
        free(x->spec_json);
        x->spec_json = nj;
        x->spec_dirty = 1;
        gsd_push_rec(g, GSD_EV_UPDATED, j->slot, now, "by %s: %s%s", c->user, what,
                     queued ? " (queued again)" : "");
        gsd_mark_dirty(g, j->slot);
    } else {
        gsd_spec_release(&n);
        free(nj);
    }
    c->status = 200;
    c->result =
        json_pack("{s:I,s:o,s:s}", "id", (json_int_t)j->id, "changed", changed, "what", what);
}
