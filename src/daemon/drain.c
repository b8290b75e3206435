/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drain.c - nodes drained while the executor cannot launch tasks, composed
 * with the cluster manager's node states and an admin's drain or down.
 *
 * When the executor reports a launch that failed for the node's sake
 * (GSD_XLAUNCH_NODE: its run or log directory cannot be created - a
 * read-only or full file system, permissions; never what a job did to its
 * own directory or log: the executor blames the node only while its own
 * check fails too), or its check fails at start,
 * every node is drained through the engine (gs_engine_drain_node): nothing
 * new starts there, jobs already running keep running, and `gsched nodes`
 * and GET /v1/nodes say "drained" with the reason.  Every GSD_DRAIN_RECHECK
 * the executor is asked again (gsd_exec_check); once it can launch, the
 * nodes return to service.  Both changes are logged.
 *
 * Every node, not only the one the failed task was placed on: the executors
 * with a state directory run every task on this machine (no
 * GSD_XCAP_MULTINODE), so the directory is every node's.
 *
 * A node has more reasons to be out of service: an admin drained it or took
 * it down (nodeadm.c), and with a cluster backend the manager drained it or
 * lost it (events.c); both are kept in g->nodest.  gsd_node_sync composes
 * them, and a node returns to service only when no reason remains.
 *
 * gsd_node_chain / gsd_node_cell_type say where a node cell sits in a HiveD
 * config (the views show them: a machine in several chains is one node cell
 * per chain, all with its name).
 *
 * Invariants: scheduler thread only, inside a cycle (the engine's records
 * are committed with the cycle); the engine performs the node changes, the
 * daemon only asks; the executor's drained state is not stored - a restart
 * checks the executor again (gsd_drain_recheck at the first cycle); an
 * admin's is (nodeadm.c, restored by recovery.c).
 */
#include <stdio.h>
#include <string.h>

#include "gsd_sched.h"

const char *gsd_node_why(gsd_sched *g, int n)
{
    const gsd_nodest *ns = g->nodest ? &g->nodest[n] : NULL;
    int mgr = ns && ns->mgr != GSD_XNODE_UP;
    int adm = ns && ns->admin != GSD_NADM_NONE;
    if (!g->drained && !mgr && !adm) return NULL;
    char why[768];
    size_t k = 0;
    if (adm) /* an admin's drain or down (nodeadm.c) */
        k += (size_t)snprintf(why, sizeof why, "%s by %s%s%s",
                              ns->admin == GSD_NADM_DOWN ? "down" : "drained",
                              ns->admin_by ? ns->admin_by : "?", ns->admin_why ? ": " : "",
                              ns->admin_why ? ns->admin_why : "");
    if (mgr && k < sizeof why)
        k += (size_t)snprintf(why + k, sizeof why - k, "%s%s: node %s%s%s", k ? "; " : "",
                              gsd_exec_backend(g->x)->name,
                              ns->mgr == GSD_XNODE_DOWN ? "down" : "drained",
                              ns->mgr_why ? ": " : "", ns->mgr_why ? ns->mgr_why : "");
    if (g->drained && k < sizeof why)
        snprintf(why + k, sizeof why - k, "%s%s", k ? "; " : "", g->drain_why);
    return gsd_intern(g, why);
}

void gsd_node_sync(gsd_sched *g, int n)
{
    const char *why = gsd_node_why(g, n);
    gs_engine_drain_node(g->e, n, why != NULL, why ? why : "back in service");
    g->changed = 1;
}

/* Every node from its reasons (the executor's drain is every node's). */
static void set_all(gsd_sched *g)
{
    size_t nn = gs_cluster_nnodes(g->c);
    for (size_t n = 0; n < nn; n++) gsd_node_sync(g, (int)n);
    g->changed = 1;
}

void gsd_drain(gsd_sched *g, const char *why, gs_time now)
{
    g->drain_next = now + GSD_DRAIN_RECHECK;
    if (g->drained) return;
    g->drained = 1;
    snprintf(g->drain_why, sizeof g->drain_why, "%s", why);
    gsd_log("executor cannot launch tasks: %s: draining every node (running jobs go on; "
            "checking again every %llds)",
            why, (long long)(GSD_DRAIN_RECHECK / GS_SEC));
    set_all(g);
}

gs_time gsd_drain_recheck(gsd_sched *g, gs_time now)
{
    if (g->drain_checked && (!g->drained || now < g->drain_next))
        return g->drained ? g->drain_next : GS_TIME_MAX;
    char why[256];
    int rc = gsd_exec_check(g->x, why, sizeof why);
    if (!g->drain_checked) {
        /* the first cycle: can this daemon launch at all? */
        g->drain_checked = 1;
        if (rc) gsd_drain(g, why, now);
        return g->drained ? g->drain_next : GS_TIME_MAX;
    }
    g->drain_next = now + GSD_DRAIN_RECHECK;
    if (rc) {
        if (strcmp(why, g->drain_why)) {
            gsd_log("executor still cannot launch tasks: %s", why);
            snprintf(g->drain_why, sizeof g->drain_why, "%s", why);
            g->changed = 1; /* the nodes' reason changed */
        }
        return g->drain_next;
    }
    gsd_log("executor can launch tasks again (was: %s): every node back in service", g->drain_why);
    g->drained = 0;
    g->drain_why[0] = '\0';
    set_all(g); /* nodes the cluster manager drained stay out of service */
    return GS_TIME_MAX;
}

/* ---- a node cell's place in a HiveD config --------------------------------------------------- */

const char *gsd_node_chain(const gs_cluster *c, int n)
{
    int32_t x = gs_cluster_node(c, n)->cell;
    while (x > 0 && gs_cluster_cell(c, x)->parent > 0) x = gs_cluster_cell(c, x)->parent;
    int t = x > 0 ? gs_cluster_cell(c, x)->type : -1;
    return t >= 0 ? gs_cluster_cell_type(c, t)->name : NULL;
}

const char *gsd_node_cell_type(const gs_cluster *c, int n)
{
    int t = gs_cluster_cell(c, gs_cluster_node(c, n)->cell)->type;
    return t >= 0 ? gs_cluster_cell_type(c, t)->name : NULL;
}
