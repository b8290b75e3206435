/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fitq.h - an ordered queue of jobs for greedy "fits by count" walks (not
 * installed).  Used by policy_tiresias_tj.c and policy_optimus.c.
 *
 * Their passes walk an ordered list of jobs with a GPU budget and admit each
 * job whose size still fits what is left (no head-of-line blocking).  Done
 * naively that costs O(queue) per pass; with the queue kept here (a segment
 * tree over positions: sum and least size of the live jobs, counts of two
 * flags) the same admitted set is found in O(log n) per boundary: all jobs
 * before the first one that does not fit (gs_fitq_first_over), then the few
 * after it that still fit (gs_fitq_next_fit: fewer than the budget left, as
 * each takes at least one GPU of it, zero-size jobs aside).  The flags
 * (GS_FITQ_RUN, GS_FITQ_PEND) let a pass visit only the jobs that may be
 * running past the boundary (to stop) or pending before it (to start): the
 * caller keeps them a superset of the true states and clears stale ones when
 * it visits them.
 *
 * Positions are handed out in push order (the queue's order); a removed job
 * leaves an empty position; when positions run out the live ones are
 * renumbered in order (amortised O(1) per push).  A job (slot) is in a queue
 * at most once.  Ownership: caller-allocated; gs_fitq_init()/gs_fitq_release().
 */
#ifndef GSCHED_FITQ_H
#define GSCHED_FITQ_H

#include <stddef.h>
#include <stdint.h>

enum { GS_FITQ_RUN = 0, GS_FITQ_PEND = 1 };

typedef struct gs_fitq {
    size_t cap;      /* leaves (a power of two, or 0) */
    size_t end;      /* positions handed out: 0..end-1 */
    size_t nlive;    /* jobs in the queue */
    int64_t *sum;    /* by tree node 1..2cap-1 (leaf cap+p: the size at position p) */
    int32_t *mn;     /* least size below the node, INT32_MAX when none */
    int32_t *cnt[2]; /* flagged jobs below the node */
    int32_t *slot;   /* by position: the job there, -1 when empty */
    int32_t *pos;    /* by slot: its position, -1 when not queued */
    size_t npos;
} gs_fitq;

void gs_fitq_init(gs_fitq *q);
void gs_fitq_release(gs_fitq *q);
/* Append slot with 'size' (>= 0) and flags (bit f = flag f) at the tail: 0, GS_ENOMEM, or
 * GS_EEXIST when already queued. */
int gs_fitq_push(gs_fitq *q, int32_t slot, int32_t size, unsigned flags);
/* Remove slot if queued; returns 1 if it was. */
int gs_fitq_remove(gs_fitq *q, int32_t slot);
int gs_fitq_contains(const gs_fitq *q, int32_t slot);
/* Set (on = 1) or clear flag f of a queued slot (no-op when not queued). */
void gs_fitq_flag(gs_fitq *q, int32_t slot, int f, int on);
/* Whether queued slot has flag f (0 when not queued). */
int gs_fitq_flag_of(const gs_fitq *q, int32_t slot, int f);
/* Sum of the sizes in the queue. */
int64_t gs_fitq_total(const gs_fitq *q);
/* The job at position p (-1: none). */
static inline int32_t gs_fitq_slot(const gs_fitq *q, int64_t p)
{
    return p >= 0 && (size_t)p < q->end ? q->slot[p] : -1;
}
/* The first position whose job makes the sizes from the head exceed 'budget' (the first job
 * a greedy walk with that budget rejects), -1 when all fit; *used = the sizes before it (all
 * of the queue's when -1). */
int64_t gs_fitq_first_over(const gs_fitq *q, int64_t budget, int64_t *used);
/* The first position >= from holding a job of size <= v, -1 when none. */
int64_t gs_fitq_next_fit(const gs_fitq *q, int64_t from, int64_t v);
/* The first position >= from holding a job with flag f set, -1 when none. */
int64_t gs_fitq_next_flag(const gs_fitq *q, int64_t from, int f);

#endif
