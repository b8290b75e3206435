/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_sim.c - whole-pipeline harness: a small fuzzed trace (any of the
 * three formats), optional node events and parameters, simulated on a fixed
 * cluster under one policy, checking gs_engine_check() at every instant.
 *
 * Input: byte 0 picks the policy (low 5 bits, registry order), count
 * placement (bit 5), the gs_sim_run + output-writer path (bit 6) and the
 * HiveD fixture cluster (bit 7; hived, private and quota always use it).
 * The rest is the trace, optionally followed by a line "%%events" and an
 * events file (time,node,down|up), then optionally a line "%%set" and
 * KEY=VALUE lines (in this order).  Inputs are kept small (<= 64 jobs, <= 256 tasks of non-gang
 * jobs,
 * <= 64 events) so one run stays fast.
 *
 * Bugs it looks for: crashes and UB anywhere in the engine and policies,
 * broken invariants, runs that never end, jobs left unfinished on a healthy
 * cluster, GPUs still held at the end.
 */
#include "config.h"
#include "fuzz_common_cluster.h"
#include "fuzz_engine_util.h"
#include "gsched/gsched.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Split off the section starting at a line "marker"; returns it (or NULL) and cuts s. */
static char *section(char *s, const char *marker)
{
    size_t ml = strlen(marker);
    for (char *p = s; (p = strstr(p, marker)); p++) {
        if ((p == s || p[-1] == '\n') && (p[ml] == '\n' || p[ml] == '\0')) {
            *p = '\0';
            return p[ml] ? p + ml + 1 : p + ml;
        }
    }
    return NULL;
}

static int any_down(const gs_cluster *c)
{
    for (size_t g = 0; g < gs_cluster_ngpus(c); g++)
        if (gs_cluster_gpu(c, (int)g)->down) return 1;
    return 0;
}

static void via_sim_run(const char *policy, int hived, gs_params *params, gs_engine_opts *eo,
                        const gs_trace *t, const gs_events *ev)
{
    static char spec[600];
    if (hived)
        snprintf(spec, sizeof spec, "%s",
                 fuzz_write_file("hived.yaml", (const uint8_t *)fuzz_hived_yaml,
                                 strlen(fuzz_hived_yaml)));
    else
        snprintf(spec, sizeof spec, "2x2x4:V100");
    gs_sim_opts o = {spec, policy, params, *eo, ev, NULL, NULL};
    gs_sim_result res;
    memset(&res, 0, sizeof res);
    gs_diag d;
    gs_diag_init(&d, "trace");
    int rc = gs_sim_run(&o, t, &res, &d);
    fuzz_check_diag(&d, rc);
    if (!rc) {
        char path[700];
        gs_run_info info = {"trace", t->sha256, "native", spec, NULL, NULL, NULL, 1, params};
        snprintf(path, sizeof path, "%s/summary.json", fuzz_dir());
        if (gs_write_summary(path, &res, &info)) fuzz_die("summary.json");
        snprintf(path, sizeof path, "%s/jobs.csv", fuzz_dir());
        if (gs_write_jobs(path, &res)) fuzz_die("jobs.csv");
        snprintf(path, sizeof path, "%s/timeline.csv", fuzz_dir());
        if (gs_write_timeline(path, &res)) fuzz_die("timeline.csv");
        gs_sim_result *rp = &res;
        snprintf(path, sizeof path, "%s/vcs.csv", fuzz_dir());
        if (gs_write_vcs(path, &rp, 1)) fuzz_die("vcs.csv");
        snprintf(path, sizeof path, "%s/users.csv", fuzz_dir());
        if (gs_write_users(path, &rp, 1)) fuzz_die("users.csv");
        snprintf(path, sizeof path, "%s/sizes.csv", fuzz_dir());
        if (gs_write_sizes(path, &rp, 1)) fuzz_die("sizes.csv");
        if (res.jobs_done + res.jobs_rejected + res.jobs_failed + res.jobs_unfinished != res.jobs)
            fuzz_die("job counts do not add up");
        /* the metrics of docs/metrics.md: a job is itself in the system (n-bar >= 1), its
         * fair-share time is never below its ideal one (rho <= slowdown), queue time holds
         * pending time, Jain's index and utilisations are fractions, the breakdowns add up */
        for (size_t i = 0; i < gs_engine_njobs(res.engine); i++) {
            const gs_job *j = gs_engine_job(res.engine, i);
            const gs_job_metrics *m = &res.jm[i];
            if (j->state == GS_JOB_DONE &&
                (m->nbar < 1 - 1e-9 || !(m->slowdown > 0) || m->rho > m->slowdown * (1 + 1e-12)))
                fuzz_die("job %lld: nbar %f slowdown %f rho %f", (long long)j->id, m->nbar,
                         m->slowdown, m->rho);
        }
        if (res.avg_queue_s < res.avg_pending_s || res.jain_rho < 0 || res.jain_rho > 1.000001 ||
            res.gpu_util_busy < 0 || res.gpu_util_busy > 1.000001)
            fuzz_die("queue %f < pending %f, jain %f or busy util %f", res.avg_queue_s,
                     res.avg_pending_s, res.jain_rho, res.gpu_util_busy);
        size_t nu = 0, ns = 0;
        for (size_t k = 0; k < res.nusers; k++) nu += res.users[k].jobs;
        for (size_t k = 0; k < res.nsizes; k++) ns += res.sizes[k].jobs;
        if (nu != res.jobs || ns != res.jobs) fuzz_die("breakdowns: %zu, %zu jobs", nu, ns);
        if (res.gpu_util < 0 || res.gpu_util > 1.000001) fuzz_die("utilization %f", res.gpu_util);
    }
    gs_sim_result_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 8192) return 0;
    size_t npol = 0;
    while (gs_policy_at(npol)) npol++;
    const gs_policy_ops *ops = gs_policy_at((data[0] & 0x1f) % npol);
    int count = (data[0] >> 5) & 1, simrun = (data[0] >> 6) & 1, hived = data[0] >> 7;
    if (!strcmp(ops->name, "hived") || !strcmp(ops->name, "private") || !strcmp(ops->name, "quota"))
        hived = 1;
    char *text = fuzz_strndup(data + 1, size - 1);
    char *sets = section(text, "%%set");
    char *evs = section(text, "%%events");
    gs_trace t;
    gs_events ev = {0};
    gs_params params;
    gs_params_init(&params);
    gs_cluster *c = NULL;
    gs_engine *e = NULL;
    gs_diag d;
    gs_diag_init(&d, "trace");
    if (gs_trace_parse("trace", text, strlen(text), &t, &d)) {
        free(text);
        return 0;
    }
    size_t tasks = 0;
    for (size_t i = 0; i < t.n; i++)
        if (!t.jobs[i].gang) tasks += (size_t)t.jobs[i].ntasks;
    if (t.n > 64 || tasks > 256) goto out;
    if (evs) {
        const char *path = fuzz_write_file("events.csv", (const uint8_t *)evs, strlen(evs));
        if (gs_events_load(path, &ev, &d) || ev.n > 64) goto out;
    }
    if (sets)
        for (char *save, *l = strtok_r(sets, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            if (gs_params_set_kv(&params, l)) goto out;

    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.placement = count ? GS_PLACE_COUNT : GS_PLACE_CONSOLIDATE;
    eo.placement_set = count;
    if (gs_engine_opts_from_params(&params, &eo, &d)) goto out;
    if (simrun) {
        via_sim_run(ops->name, hived, &params, &eo, &t, evs ? &ev : NULL);
        goto out;
    }
    c = fuzz_cluster(hived);
    if (gs_engine_create(c, ops->name, &params, &eo, &e, &d)) goto out;
    if (gs_params_unused(&params)) goto out; /* the CLI refuses these */
    int64_t maxid = -1;
    for (size_t i = 0; i < t.n; i++)
        if (t.jobs[i].id > maxid) maxid = t.jobs[i].id;
    gs_engine_reserve_ids(e, maxid + 1);
    for (size_t i = 0; i < t.n; i++) {
        gs_diag_init(&d, NULL);
        int rc = gs_engine_add_job(e, &t.jobs[i], NULL, &d);
        fuzz_check_diag(&d, rc);
        if (rc) goto out; /* the CLI stops here with exit 2 */
    }
    for (size_t i = 0; i < ev.n; i++) {
        int node = gs_cluster_find_node(c, ev.v[i].node);
        if (node < 0) goto out; /* the CLI refuses unknown nodes */
        for (; node >= 0; node = gs_cluster_find_node_next(c, ev.v[i].node, node))
            if (gs_engine_add_node_event(e, ev.v[i].t, node, ev.v[i].down))
                fuzz_die("node event refused");
    }
    fuzz_run_engine(e, 1000000, 0, ops->name);
    if (!any_down(c)) {
        for (size_t i = 0; i < gs_engine_njobs(e); i++) {
            const gs_job *j = gs_engine_job(e, i);
            if (!gs_job_state_final(j->state))
                fuzz_die("%s: job %lld is %s at the end on a healthy cluster", ops->name,
                         (long long)j->id, gs_job_state_name(j->state));
        }
        if (gs_engine_allocated(e)) fuzz_die("%s: GPUs still held at the end", ops->name);
    }
out:
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
    gs_params_release(&params);
    gs_events_release(&ev);
    gs_trace_release(&t);
    free(text);
    return 0;
}
