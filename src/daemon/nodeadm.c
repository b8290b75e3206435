/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nodeadm.c - an admin's drain, resume and down of a node (gsched node
 * drain|resume|down NAME, POST /v1/nodes/{name}/drain|resume|down; issue 16),
 * as Slurm's `scontrol update nodename=X state=drain|resume|down reason=...`:
 *   drain   nothing new starts on the node; the jobs running there finish
 *           (state "draining" while they run, "drained" once it is empty);
 *   down    the jobs running there are preempted through the checkpoint
 *           protocol (SIGTERM, grace, SIGKILL; requeued once their runs end,
 *           gs_engine_preempt as a cluster manager's DOWN in events.c) and
 *           nothing starts there;
 *   resume  back to service from either.  A bad mark (gsched node bad) is a
 *           reason of its own: resume leaves it (gsched node good clears it).
 * Transitions: none -> drain | down, drain -> down | drain (again: nothing
 * changes), down -> down (nothing changes), drain | down -> none (resume).
 * A drain of a down node (its jobs are gone already: a drain would change
 * nothing but hide that) and a resume of a node in service are refused (409).
 *
 * The admin state is one more reason for the node to be out of service:
 * gsd_node_why (drain.c) composes it with the executor's drain and the
 * cluster manager's state, and the node returns to service only when no
 * reason remains.  A machine in several HiveD chains (one node cell per
 * chain) changes as a whole.
 *
 * Invariants: scheduler thread only, inside a cycle; the change is stored
 * (nodes.admin_*) and its node event written (events row, job_id NULL,
 * node = NAME) in the cycle's transaction before the engine is told, so a
 * failed write changes nothing; what the preemptions signal is acted on only
 * after the commit (gsd_act), like every stop.  A restart sets the stored
 * state again (recovery.c) without preempting anything twice: a down node's
 * jobs were requeued before, and a job still stopping resumes its stop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd_sched.h"

const char *gsd_nadm_name(int st)
{
    return st == GSD_NADM_DRAIN ? "drain" : st == GSD_NADM_DOWN ? "down" : NULL;
}

int gsd_nadm_parse(const char *name)
{
    if (!name) return GSD_NADM_NONE;
    if (!strcmp(name, "drain")) return GSD_NADM_DRAIN;
    if (!strcmp(name, "down")) return GSD_NADM_DOWN;
    return -1;
}

int gsd_node_admin(gsd_sched *g, const char *name, int st, const char *why, const char *by,
                   gs_time t, json_t *ids)
{
    int found = 0;
    char r[600];
    snprintf(r, sizeof r, "node %s down (by %s%s%s): requeued", name, by ? by : "?",
             why && *why ? ": " : "", why && *why ? why : "");
    for (int n = gs_cluster_find_node(g->c, name); n >= 0;
         n = gs_cluster_find_node_next(g->c, name, n)) {
        found++;
        gsd_nodest *ns = &g->nodest[n];
        ns->admin = (int8_t)st;
        ns->admin_why = why && *why ? gsd_intern(g, why) : NULL;
        ns->admin_by = by ? gsd_intern(g, by) : NULL;
        ns->admin_since = t;
        if (st == GSD_NADM_DOWN && ids) {
            /* stop every job running there (its GPUs stay held until its run ends, so none is
             * given twice); the engine requeues it then.  A job on several nodes stops once. */
            const gs_node *nd = gs_cluster_node(g->c, n);
            for (int32_t gi = nd->gpu_lo; gi < nd->gpu_hi; gi++) {
                int32_t owner = gs_cluster_gpu(g->c, gi)->owner;
                if (owner < 0) continue;
                const gs_job *j = gs_engine_job(g->e, (size_t)owner);
                if (j->state != GS_JOB_RUNNING) continue;
                if (gs_engine_preempt(g->e, j, gsd_intern(g, r)) == 0)
                    json_array_append_new(ids, json_integer(j->id));
            }
        }
        gsd_node_sync(g, n);
    }
    if (found) g->changed = 1;
    return found;
}

void gsd_do_node_admin(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    int want = c->kind == GSD_CMD_NODE_DRAIN  ? GSD_NADM_DRAIN
               : c->kind == GSD_CMD_NODE_DOWN ? GSD_NADM_DOWN
                                              : GSD_NADM_NONE;
    const char *verb = c->kind == GSD_CMD_NODE_DRAIN  ? "drain"
                       : c->kind == GSD_CMD_NODE_DOWN ? "down"
                                                      : "resume";
    if (!c->admin) {
        gsd_cmd_fail(c, 403, GS_EPERM, "only an admin may %s nodes", verb);
        return;
    }
    int n = gs_cluster_find_node(g->c, c->node);
    if (n < 0) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no node '%s'", c->node);
        return;
    }
    int was = g->nodest[n].admin; /* every cell of the machine has the same (set together) */
    if (want == GSD_NADM_NONE && was == GSD_NADM_NONE) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "node %s is not drained or down (nothing to resume)",
                     c->node);
        return;
    }
    if (want == GSD_NADM_DRAIN && was == GSD_NADM_DOWN) {
        gsd_cmd_fail(c, 409, GS_ESTATE,
                     "node %s is down: its jobs were requeued; resume it first (then drain it)",
                     c->node);
        return;
    }
    json_t *ids = json_array();
    if (want != was) {
        char ev[600], *data;
        snprintf(ev, sizeof ev, "%s%s(by %s)", c->why, c->why[0] ? " " : "", c->user);
        json_t *d = json_pack("{s:s,s:s?}", "by", c->user, "was", gsd_nadm_name(was));
        data = json_dumps(d, JSON_COMPACT);
        json_decref(d);
        int rc = gsd_store_put_node_admin(g->sh.store, c->node, gsd_nadm_name(want), c->why,
                                          c->user, now);
        if (!rc) rc = gsd_store_add_node_event(g->sh.store, c->node, now, verb, ev, data);
        free(data);
        if (rc) {
            g->store_failed = 1;
            json_decref(ids);
            gsd_cmd_fail(c, 503, GS_EIO, "the daemon cannot write its database");
            return;
        }
        gsd_node_admin(g, c->node, want, c->why, c->user, now, ids);
        gsd_log("node %s: %s by %s%s%s%s", c->node, verb, c->user, c->why[0] ? ": " : "", c->why,
                json_array_size(ids) ? " (its running jobs are stopped and requeued)" : "");
    }
    const gsd_nodest *ns = &g->nodest[n];
    c->status = 200;
    c->result = json_pack("{s:s,s:s?,s:s?,s:b,s:o}", "node", c->node, "admin_state",
                          gsd_nadm_name(ns->admin), "admin_reason", ns->admin_why, "changed",
                          want != was, "preempted", ids);
}
