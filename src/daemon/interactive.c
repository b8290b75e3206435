/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * interactive.c - interactive jobs (issue 16, `gsched run`, like srun) on the scheduler
 * thread: their client's lease, and their stdin.
 *
 * An interactive job (spec 'interactive: true': one task, not elastic, not an array; an
 * executor with a stdin: the local one) lives only as long as its client.  The client
 * renews a lease (POST /v1/jobs/ID/lease {"seconds": N}; every stdin write renews it too);
 * when the lease runs out the job is cancelled as by its owner's `gsched cancel`, pending or
 * running (the stop protocol: SIGTERM, grace, SIGKILL), with cancel_by "lease expiry (gsched
 * run client gone)".  The lease is in memory only: after a daemon restart every interactive
 * job gets a fresh default lease from the restart (its client, if alive, renews it).
 *
 * stdin (POST /v1/jobs/ID/stdin): bytes written without blocking to the pipe the executor
 * gave task 0 (gsd_exec_stdin); the answer says how many were taken (fewer when the task does
 * not read fast enough: the client sends the rest later) and eof closes it.  Only while the
 * job is RUNNING (409 otherwise, or once closed).
 *
 * Invariants: the engine performs every transition (a lease expiry is gsd_do_cancel's
 * cancel); g->leasev holds the slots of the interactive jobs not yet seen final, each once
 * (x->inlease), and acct.c forgets no job while it is there.  Scheduler thread only.
 */
#include <string.h>

#include "gsd_sched.h"
#include "spec.h"

#define LEASE_MIN_S 1
#define LEASE_MAX_S 3600

void gsd_run_track(gsd_sched *g, int32_t slot, gs_time now)
{
    gsd_jobx *x = gsd_jx(g, slot);
    if (x->inlease) return;
    if (g->nlease == g->caplease) {
        g->caplease = g->caplease ? 2 * g->caplease : 16;
        g->leasev = gsd_xrealloc(g->leasev, g->caplease * sizeof *g->leasev);
    }
    g->leasev[g->nlease++] = slot;
    x->inlease = 1;
    x->lease_s = GSD_RUN_LEASE_S;
    x->lease_until = now + (gs_time)GSD_RUN_LEASE_S * GS_SEC;
}

/* The interactive job c->job_id of the caller (its owner or an admin), or NULL after failing
 * c (404 as for any job the caller may not see; 409 not interactive, or final - also once the
 * engine forgot it: the HTTP thread checked that the caller may see its row). */
static const gs_job *caller_job(gsd_sched *g, gsd_cmd *c)
{
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j) { /* the HTTP thread found its row for the caller: final, and forgotten since */
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld has ended", (long long)c->job_id);
        return NULL;
    }
    if (!c->admin && strcmp(j->user, c->user)) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return NULL;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    if (!x->inlease) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is not interactive (gsched run)",
                     (long long)j->id);
        return NULL;
    }
    if (gs_job_state_final(j->state)) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is already %s", (long long)j->id,
                     gs_job_state_name(j->state));
        return NULL;
    }
    return j;
}

void gsd_do_lease(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    const gs_job *j = caller_job(g, c);
    if (!j) return;
    gsd_jobx *x = gsd_jx(g, j->slot);
    json_t *sv = c->args ? json_object_get(c->args, "seconds") : NULL;
    if (sv) {
        json_int_t n = json_integer_value(sv);
        x->lease_s = (int32_t)(n < LEASE_MIN_S ? LEASE_MIN_S : n > LEASE_MAX_S ? LEASE_MAX_S : n);
    }
    x->lease_until = now + (gs_time)x->lease_s * GS_SEC;
    c->status = 200;
    c->result = json_pack("{s:I,s:i,s:s}", "id", (json_int_t)j->id, "lease_seconds", x->lease_s,
                          "state", gs_job_state_name(j->state));
}

void gsd_do_stdin(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    const gs_job *j = caller_job(g, c);
    if (!j) return;
    gsd_jobx *x = gsd_jx(g, j->slot);
    x->lease_until = now + (gs_time)x->lease_s * GS_SEC; /* the client is there */
    if (j->state != GS_JOB_RUNNING) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s: its stdin opens when it runs",
                     (long long)j->id, gs_job_state_name(j->state));
        return;
    }
    json_t *data = json_object_get(c->args, "data");
    int eof = json_is_true(json_object_get(c->args, "eof"));
    size_t written = 0;
    int rc = gsd_exec_stdin(g->x, j->id, json_string_value(data), json_string_length(data), eof,
                            &written);
    if (rc) {
        gsd_cmd_fail(c, 409, rc, "job %lld: %s", (long long)j->id,
                     rc == GS_ESTATE ? "its stdin is closed (EOF given, or its task stopped "
                                       "reading)"
                                     : gs_strerror(rc));
        return;
    }
    c->status = 200;
    c->result = json_pack("{s:I,s:I,s:b}", "id", (json_int_t)j->id, "written", (json_int_t)written,
                          "eof", eof && written == json_string_length(data));
}

gs_time gsd_run_leases(gsd_sched *g, gs_time now)
{
    gs_time next = GS_TIME_MAX;
    size_t w = 0;
    for (size_t i = 0; i < g->nlease; i++) {
        int32_t s = g->leasev[i];
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        gsd_jobx *x = gsd_jx(g, s);
        if (gs_job_state_final(j->state)) {
            x->inlease = 0;
            continue;
        }
        g->leasev[w++] = s;
        if (x->stop == GSD_STOP_CANCEL) continue; /* being cancelled already */
        if (now < x->lease_until) {
            if (x->lease_until < next) next = x->lease_until;
            continue;
        }
        gsd_log("job %lld: its gsched run client renewed no lease for %d s: cancelling it",
                (long long)j->id, (int)x->lease_s);
        gsd_cmd c;
        memset(&c, 0, sizeof c);
        c.kind = GSD_CMD_CANCEL;
        c.job_id = j->id;
        c.admin = 1;
        c.uid = -1;
        snprintf(c.user, sizeof c.user, "%s", "lease expiry (gsched run client gone)");
        gsd_do_cancel(g, &c, now);
        if (c.result) json_decref(c.result);
        g->changed = 1;
    }
    g->nlease = w;
    return next;
}
