/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_jobctl.c - the REST API's job control (issue 16): PATCH /v1/jobs/{id} (update) and
 * POST /v1/jobs/{id}/requeue.
 *
 * Like every handler file it never touches the engine: it checks the request, loads the
 * job's committed row (404 for a job the caller may not see, as cancel) and posts a
 * command that the scheduler thread carries out (jobctl.c) and answers after its commit.
 */
#include <string.h>

#include "http_int.h"
#include "store.h"

/* POST /v1/jobs/{id}/requeue[?hold=1]: stop a running job (its owner or an admin) through
 * the checkpoint protocol, back to its queue (held with hold=1); 202 once committed. */
enum MHD_Result hj_requeue(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    enum MHD_Result ret;
    int hold = hx_flag_arg(h, "hold", &ret);
    if (hold < 0) return ret;
    gsd_jobrow row;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_REQUEUE);
    c->job_id = id;
    c->args = json_pack("{s:b}", "hold", hold);
    return hx_post_and_reply(h, c);
}

/* PATCH /v1/jobs/{id} {"priority": N|"class", "time_limit": SECONDS|"DURATION"|"UNLIMITED",
 * "gpus": N, "vc": "VC", "name": "NAME"} (any non-empty subset): the body's shape is checked
 * here, its values by the scheduler thread (the submit rules, the caller's rights). */
enum MHD_Result hj_update(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    static const char *const keys[] = {"priority", "time_limit", "gpus", "vc", "name"};
    json_error_t err;
    json_t *b = h->rq->len ? json_loadb(h->rq->body, h->rq->len, 0, &err) : NULL;
    if (!json_is_object(b) || !json_object_size(b)) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, NULL,
                          "expected a JSON object with one or more of priority, time_limit, "
                          "gpus, vc, name");
    }
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v)
    {
        size_t i = 0;
        while (i < sizeof keys / sizeof *keys && strcmp(k, keys[i])) i++;
        int ok = i == 0   ? json_is_integer(v) || json_is_string(v)
                 : i == 1 ? json_is_integer(v) || json_is_string(v)
                 : i == 2 ? json_is_integer(v)
                 : i < 5  ? json_is_string(v)
                          : 0;
        if (!ok) {
            json_t *extra = json_pack("{s:s}", "field", k);
            enum MHD_Result r =
                i == 5 ? hx_problem(h, 400, GS_EPARSE, extra,
                                    "'%s' cannot be updated (priority, time_limit, gpus, vc, "
                                    "name can)",
                                    k)
                       : hx_problem(h, 400, GS_EPARSE, extra, "'%s' must be %s", k,
                                    i == 2   ? "an integer (the job's GPUs in all)"
                                    : i >= 3 ? "a string"
                                             : "an integer or a string");
            json_decref(b);
            return r;
        }
    }
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) {
        json_decref(b);
        return ret;
    }
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_UPDATE);
    c->job_id = id;
    c->args = b;
    return hx_post_and_reply(h, c);
}
