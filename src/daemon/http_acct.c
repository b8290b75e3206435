/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_acct.c - accounting in the REST API (issue 16): GET /v1/history, finished jobs (sacct).
 *
 * Reads committed rows only (the final rows of jobs and the acct rows retention moved them
 * into: gsd_reader_history), never the engine or the snapshot, so a job's history answer is
 * the same before and after retention moved it and after the daemon forgot it.  Visibility as
 * GET /v1/jobs: a non-admin sees only their own jobs (asking for another user's is 403).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_int.h"

#define HIST_MAX_LIMIT     10000
#define HIST_DEFAULT_LIMIT 1000

/* "DONE,F,CA" -> mask of final states; "all" / empty = 0 (every final state).  -1: not a
 * state or not a final one. */
static int final_states(const char *s, unsigned *mask)
{
    *mask = 0;
    if (!s || !*s || !strcasecmp(s, "all")) return 0;
    if (hx_parse_states(s, mask)) return -1;
    for (int k = 0; k < GS_JOB_NSTATES; k++)
        if ((*mask & (1u << k)) && !gs_job_state_final((gs_job_state)k)) return -1;
    return 0;
}

static json_t *acct_json(const gsd_acctrow *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(a->id));
    json_object_set_new(o, "array_id", a->array_id ? json_integer(a->array_id) : json_null());
    json_object_set_new(o, "array_task", a->array_id ? json_integer(a->array_task) : json_null());
    json_object_set_new(o, "user", json_string(a->user ? a->user : ""));
    json_object_set_new(o, "vc", json_string(a->vc ? a->vc : ""));
    json_object_set_new(o, "name", json_string(a->name ? a->name : ""));
    json_object_set_new(o, "state", json_string(a->state ? a->state : ""));
    json_object_set_new(o, "exit_code",
                        a->exit_code == GSD_NONE ? json_null() : json_integer(a->exit_code));
    json_object_set_new(o, "reason", a->reason ? json_string(a->reason) : json_null());
    hx_put_time(o, "submit_time", "submit_us", a->submit);
    hx_put_time(o, "start_time", "start_us", a->start);
    hx_put_time(o, "end_time", "end_us", a->end);
    json_object_set_new(o, "elapsed_us", json_integer(a->elapsed));
    json_object_set_new(o, "gpus", json_integer(a->gpus));
    json_object_set_new(o, "gpu_us", json_integer(a->gpu_us));
    json_object_set_new(o, "gpu_hours", json_real((double)a->gpu_us / 3.6e9));
    json_object_set_new(o, "preemptions", json_integer(a->preemptions));
    json_object_set_new(o, "resizes", json_integer(a->resizes));
    json_object_set_new(o, "runs", json_integer(a->runs));
    return o;
}

enum MHD_Result h_history(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    enum MHD_Result ret = MHD_NO;
    gsd_histq q = {0};
    const char *states = hx_arg(h, "state");
    if (final_states(states, &q.states))
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "state"),
                          "'state' must be all or a comma-separated list of final states (DONE, "
                          "FAILED, CANCELLED, REJECTED, CD, F, CA, RJ), got '%s'",
                          states);
    if (hx_int_arg(h, "from", 0, 0, INT64_MAX, &q.from, &ret)) return ret;
    if (hx_int_arg(h, "to", 0, 0, INT64_MAX, &q.to, &ret)) return ret;
    if (hx_int_arg(h, "limit", HIST_DEFAULT_LIMIT, 1, HIST_MAX_LIMIT, &q.limit, &ret)) return ret;
    if (hx_int_arg(h, "offset", 0, 0, INT64_MAX / 2, &q.offset, &ret)) return ret;
    const char *job = hx_arg(h, "job");
    if (job && *job && hx_parse_id(job, &q.job))
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "job"),
                          "'job' must be a job id (a positive integer), got '%s'", job);
    q.user = hx_arg(h, "user");
    q.vc = hx_arg(h, "vc");
    if (q.user && !*q.user) q.user = NULL;
    if (q.vc && !*q.vc) q.vc = NULL;
    if (!h->id.admin) {
        if (q.user && strcmp(q.user, h->id.user))
            return hx_problem(h, 403, GS_EPERM, NULL, "you may see only your own jobs' history");
        q.user = h->id.user;
    }
    gsd_reader *r = gsd_store_reader(h->g->store);
    gsd_acctrow *rows = NULL;
    size_t n = 0;
    int64_t total = 0;
    int rc = r ? gsd_reader_history(r, &q, &rows, &n, &total) : GS_EIO;
    gsd_store_reader_put(h->g->store, r);
    if (rc) {
        gsd_acctrows_free(rows, n);
        return hx_problem(h, 500, GS_EIO, NULL, "cannot read the database");
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, acct_json(&rows[i]));
    gsd_acctrows_free(rows, n);
    json_t *o = json_object();
    json_object_set_new(o, "jobs", arr);
    json_object_set_new(o, "total", json_integer(total));
    json_object_set_new(o, "offset", json_integer(q.offset));
    json_object_set_new(o, "limit", json_integer(q.limit));
    json_object_set_new(o, "next_offset",
                        q.offset + (int64_t)n < total ? json_integer(q.offset + (int64_t)n)
                                                      : json_null());
    return hx_send_json(h, 200, o, NULL);
}
