/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/jobq.h - an ordered queue of jobs with O(1) insert and remove.
 *
 * Links are kept in arrays indexed by job slot and owned by the queue, so a
 * job can sit in several queues (one per policy layer) without allocation
 * per operation.  A job is in a queue at most once.  Used by policies for
 * FIFO queues; iteration order is insertion order.
 *
 * Ownership: caller-allocated; gs_jobq_init()/gs_jobq_release().
 */
#ifndef GSCHED_JOBQ_H
#define GSCHED_JOBQ_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_jobq {
    int32_t *prev, *next; /* by slot; prev == -2 means "not in queue" */
    size_t cap;
    int32_t head, tail;
    size_t n;
} gs_jobq;

void gs_jobq_init(gs_jobq *q);
void gs_jobq_release(gs_jobq *q);
/* Append slot at the tail (GS_ENOMEM, or GS_EEXIST if already queued). */
int gs_jobq_push_back(gs_jobq *q, int32_t slot);
int gs_jobq_push_front(gs_jobq *q, int32_t slot);
/* Insert 'slot' before 'before' (which must be queued). */
int gs_jobq_insert_before(gs_jobq *q, int32_t before, int32_t slot);
/* Remove if present; returns 1 if it was queued. */
int gs_jobq_remove(gs_jobq *q, int32_t slot);
int gs_jobq_contains(const gs_jobq *q, int32_t slot);
static inline int32_t gs_jobq_first(const gs_jobq *q)
{
    return q->head;
}
static inline int32_t gs_jobq_next(const gs_jobq *q, int32_t slot)
{
    return q->next[slot];
}
static inline size_t gs_jobq_len(const gs_jobq *q)
{
    return q->n;
}

#ifdef __cplusplus
}
#endif
#endif
