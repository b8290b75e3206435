/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_jobctl.c - the REST API's job control (issue 16): POST /v1/jobs/{id}/requeue.
 *
 * Like every handler file it never touches the engine: it checks the request, loads the
 * job's committed row (404 for a job the caller may not see, as cancel) and posts a
 * command that the scheduler thread carries out (jobctl.c) and answers after its commit.
 */
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
