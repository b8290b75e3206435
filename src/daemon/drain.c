/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drain.c - nodes drained while the executor cannot launch tasks.
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
 * Invariants: scheduler thread only, inside a cycle (the engine's records
 * are committed with the cycle); the engine performs the node changes, the
 * daemon only asks; the drained state is not stored - a restart checks the
 * executor again (gsd_drain_recheck at the first cycle).
 */
#include <stdio.h>
#include <string.h>

#include "gsd_sched.h"

static void set_all(gsd_sched *g, int drain, const char *why)
{
    size_t nn = gs_cluster_nnodes(g->c);
    for (size_t n = 0; n < nn; n++) gs_engine_drain_node(g->e, (int)n, drain, why);
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
    set_all(g, 1, gsd_intern(g, g->drain_why));
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
    set_all(g, 0, "the executor can launch tasks again");
    return GS_TIME_MAX;
}
