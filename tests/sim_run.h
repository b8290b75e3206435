/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_run.h - run one simulation through the library, for tests: load the trace,
 * apply KEY=VALUE parameters (a NULL-terminated list), simulate on the cluster spec.
 * The caller releases the result with gs_sim_result_release().
 */
#ifndef GSCHED_TEST_SIM_RUN_H
#define GSCHED_TEST_SIM_RUN_H

#include <stdio.h>
#include <string.h>

#include "sim.h"

static inline int sim_run(const char *cluster, const char *trace, const char *policy,
                          gs_place_mode mode, const char *const *sets, gs_sim_result *r)
{
    gs_trace t;
    gs_diag d;
    gs_diag_init(&d, trace);
    if (gs_trace_load(trace, &t, &d)) {
        fprintf(stderr, "  %s\n", d.msg);
        return -1;
    }
    gs_params p;
    gs_params_init(&p);
    for (; sets && *sets; sets++) gs_params_set_kv(&p, *sets);
    gs_sim_opts o = {0};
    o.cluster_spec = cluster;
    o.policy = policy;
    o.params = &p;
    gs_engine_opts_init(&o.eopts);
    o.eopts.placement = mode;
    memset(r, 0, sizeof *r);
    int rc = gs_sim_run(&o, &t, r, &d);
    if (rc) fprintf(stderr, "  %s\n", d.msg);
    gs_trace_release(&t);
    gs_params_release(&p);
    return rc;
}

#endif
