/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue.c - how pending jobs are shown waiting: the queue a job is in and its
 * place there, the text that names a queue, a VC's guarantee, the VCs a
 * policy declares, and why a job waits.
 *
 * Each answer comes from the policy's optional ops (queue_key,
 * queue_describe, vc_guarantee, vc_declared), so that a program showing a
 * queue (the daemon's POS column and "why pending") needs no knowledge of
 * policy names; where a policy leaves an op NULL the default here applies:
 * one global queue by submission, "in the queue (by submission)", no
 * guarantee, no declared VC.
 *
 * Invariants: nothing here changes the engine or the policy (every call is a
 * read); the order is total and deterministic: (queue, key, job id), job ids
 * following submission order.
 */
#include <stdio.h>
#include <string.h>

#include "gsched/engine.h"
#include "gsched/policy.h"
#include "internal.h"

int gs_engine_queue_key(const gs_engine *e, const gs_job *j, gs_queue_key *k)
{
    void *st;
    const gs_policy_ops *ops = gs_engine_policy_ops(e, &st);
    k->queue = GS_QUEUE_GLOBAL;
    k->key = 0;
    if (!ops->queue_key) return 0;
    int rc = ops->queue_key(st, j, k);
    if (rc) {
        k->queue = GS_QUEUE_GLOBAL;
        k->key = 0;
    }
    return rc;
}

int gs_queue_key_cmp(const gs_queue_key *a, int64_t ida, const gs_queue_key *b, int64_t idb)
{
    if (a->queue != b->queue) return a->queue < b->queue ? -1 : 1;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (ida > idb) - (ida < idb);
}

int gs_engine_queue_text(const gs_engine *e, int queue, char *buf, size_t cap)
{
    if (!cap) return GS_EINVAL;
    void *st;
    const gs_policy_ops *ops = gs_engine_policy_ops(e, &st);
    if (!ops->queue_describe) {
        snprintf(buf, cap, "in the queue (by submission)");
        return 0;
    }
    buf[0] = '\0';
    int rc = ops->queue_describe(st, queue, buf, cap);
    if (rc) snprintf(buf, cap, "in queue %d", queue);
    return rc;
}

int64_t gs_engine_vc_guarantee(const gs_engine *e, const char *vc)
{
    void *st;
    const gs_policy_ops *ops = gs_engine_policy_ops(e, &st);
    return ops->vc_guarantee && vc ? ops->vc_guarantee(st, vc) : -1;
}

const char *gs_engine_vc_declared(const gs_engine *e, size_t i)
{
    void *st;
    const gs_policy_ops *ops = gs_engine_policy_ops(e, &st);
    return ops->vc_declared ? ops->vc_declared(st, i) : NULL;
}

int gs_engine_find_vc(const gs_engine *e, const char *name)
{
    size_t n = gs_engine_nvcs(e);
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(gs_engine_vc_name(e, (int)i), name) == 0) return (int)i;
    return -1;
}

const char *gs_engine_pending_reason(const gs_engine *e, const gs_job *j)
{
    if (j->state != GS_JOB_PENDING || j->reason) return j->reason;
    /* a policy that did not look at the job (e.g. fifo behind a blocked head) gave no reason */
    return j->gpus > gs_cluster_free(gs_engine_cluster(e)) ? "Resources" : "Priority";
}
