/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_arrays.c - job arrays in the API (issue 16): a job named "A_T" (element T of array
 * A, as squeue and scancel write it) wherever a job id is accepted in a path, and
 * DELETE /v1/jobs/{id}?array=1, which cancels every unfinished element of array id (when id
 * is an array's id, its first element's; otherwise just that job, like a plain DELETE).
 *
 * Invariants: "A_T" resolves through the database (every element has its row from its
 * submission on), so it means the same job to every reader and after a restart; a caller
 * who may not see the job gets 404 for both spellings alike.  HTTP threads only.
 */
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "store.h"

int hx_array_ref(hctx *h, const char *ids, int64_t *id, enum MHD_Result *ret)
{
    const char *us = strchr(ids, '_');
    char a[24];
    int64_t aid, task;
    size_t al = us ? (size_t)(us - ids) : 0;
    if (!us || al >= sizeof a || strchr(us + 1, '_')) goto bad;
    memcpy(a, ids, al);
    a[al] = 0;
    if (hx_parse_id(a, &aid)) goto bad;
    /* the index: digits, 0 allowed */
    if (!us[1] || strlen(us + 1) > 9) goto bad;
    for (const char *p = us + 1; *p; p++)
        if (*p < '0' || *p > '9') goto bad;
    task = strtoll(us + 1, NULL, 10);
    gsd_reader *r = gsd_store_reader(h->g->store);
    int rc = r ? gsd_reader_array_task(r, aid, (int32_t)task, id) : GS_EIO;
    gsd_store_reader_put(h->g->store, r);
    if (rc == GS_ENOENT) {
        *ret = hx_problem(h, 404, GS_ENOENT, NULL, "no job %s (array %lld has no element %lld)",
                          ids, (long long)aid, (long long)task);
        return -1;
    }
    if (rc) {
        *ret = hx_problem(h, 500, GS_EIO, NULL, "cannot read the database");
        return -1;
    }
    return 0;
bad:
    *ret =
        hx_problem(h, 400, GS_EINVAL, NULL,
                   "'%s' is not a job id (a positive integer, or ARRAY_TASK such as 123_7)", ids);
    return -1;
}

enum MHD_Result hx_array_cancel(hctx *h, const char *ids)
{
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_CANCEL);
    c->job_id = id;
    c->args = json_pack("{s:b}", "array", 1);
    return hx_post_and_reply(h, c);
}
