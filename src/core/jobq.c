/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobq.c - doubly linked job queue with links stored by slot.
 * Invariants: prev[s] == -2 iff s is not queued; head/tail/n describe the
 * chain head -> ... -> tail of exactly n slots.
 */
#include <stdlib.h>

#include "gsched/jobq.h"

#define NOT_QUEUED (-2)

void gs_jobq_init(gs_jobq *q)
{
    q->prev = q->next = NULL;
    q->cap = 0;
    q->head = q->tail = -1;
    q->n = 0;
}

void gs_jobq_release(gs_jobq *q)
{
    if (!q) return;
    free(q->prev);
    free(q->next);
    gs_jobq_init(q);
}

static int grow(gs_jobq *q, int32_t slot)
{
    if ((size_t)slot < q->cap) return 0;
    size_t ncap = q->cap ? q->cap : 64;
    while (ncap <= (size_t)slot) ncap *= 2;
    int32_t *p = realloc(q->prev, ncap * sizeof *p);
    if (!p) return GS_ENOMEM;
    q->prev = p;
    int32_t *n = realloc(q->next, ncap * sizeof *n);
    if (!n) return GS_ENOMEM;
    q->next = n;
    for (size_t i = q->cap; i < ncap; i++) q->prev[i] = NOT_QUEUED, q->next[i] = -1;
    q->cap = ncap;
    return 0;
}

int gs_jobq_contains(const gs_jobq *q, int32_t slot)
{
    return slot >= 0 && (size_t)slot < q->cap && q->prev[slot] != NOT_QUEUED;
}

int gs_jobq_push_back(gs_jobq *q, int32_t slot)
{
    if (slot < 0) return GS_EINVAL;
    int rc = grow(q, slot);
    if (rc) return rc;
    if (q->prev[slot] != NOT_QUEUED) return GS_EEXIST;
    q->prev[slot] = q->tail;
    q->next[slot] = -1;
    if (q->tail >= 0)
        q->next[q->tail] = slot;
    else
        q->head = slot;
    q->tail = slot;
    q->n++;
    return 0;
}

int gs_jobq_push_front(gs_jobq *q, int32_t slot)
{
    if (q->head < 0) return gs_jobq_push_back(q, slot);
    return gs_jobq_insert_before(q, q->head, slot);
}

int gs_jobq_insert_before(gs_jobq *q, int32_t before, int32_t slot)
{
    if (slot < 0 || !gs_jobq_contains(q, before)) return GS_EINVAL;
    int rc = grow(q, slot);
    if (rc) return rc;
    if (q->prev[slot] != NOT_QUEUED) return GS_EEXIST;
    int32_t p = q->prev[before];
    q->prev[slot] = p;
    q->next[slot] = before;
    q->prev[before] = slot;
    if (p >= 0)
        q->next[p] = slot;
    else
        q->head = slot;
    q->n++;
    return 0;
}

int gs_jobq_remove(gs_jobq *q, int32_t slot)
{
    if (!gs_jobq_contains(q, slot)) return 0;
    int32_t p = q->prev[slot], n = q->next[slot];
    if (p >= 0)
        q->next[p] = n;
    else
        q->head = n;
    if (n >= 0)
        q->prev[n] = p;
    else
        q->tail = p;
    q->prev[slot] = NOT_QUEUED;
    q->next[slot] = -1;
    q->n--;
    return 1;
}
