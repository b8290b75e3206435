/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fitq.c - ordered job queue for greedy fits-by-count walks (fitq.h).
 *
 * Invariants: an implicit segment tree over 'cap' positions: node i has
 * children 2i, 2i+1, leaf cap+p is position p; sum/mn/cnt of a node are the
 * sum, least size and flag counts of the live positions below it (empty:
 * 0, INT32_MAX, 0); slot[p] = s iff pos[s] = p, for the nlive queued jobs,
 * all at positions < end <= cap; positions keep the push order.
 */
#include <limits.h>
#include <stdlib.h>

#include "fitq.h"
#include "gsched/error.h"

void gs_fitq_init(gs_fitq *q)
{
    *q = (gs_fitq){0};
}

void gs_fitq_release(gs_fitq *q)
{
    if (!q) return;
    free(q->sum);
    free(q->mn);
    free(q->cnt[0]);
    free(q->cnt[1]);
    free(q->slot);
    free(q->pos);
    gs_fitq_init(q);
}

static void pull(gs_fitq *q, size_t i)
{
    size_t l = 2 * i, r = l + 1;
    q->sum[i] = q->sum[l] + q->sum[r];
    q->mn[i] = q->mn[l] < q->mn[r] ? q->mn[l] : q->mn[r];
    q->cnt[0][i] = q->cnt[0][l] + q->cnt[0][r];
    q->cnt[1][i] = q->cnt[1][l] + q->cnt[1][r];
}

static void set_leaf(gs_fitq *q, size_t p, int live, int32_t size, unsigned flags)
{
    size_t i = q->cap + p;
    q->sum[i] = live ? size : 0;
    q->mn[i] = live ? size : INT32_MAX;
    q->cnt[0][i] = live && (flags & 1u);
    q->cnt[1][i] = live && (flags & 2u);
    for (i >>= 1; i; i >>= 1) pull(q, i);
}

/* Renumber the live positions 0..nlive-1 (in order) in a tree of at least twice as many. */
static int renumber(gs_fitq *q)
{
    size_t nc = 256;
    while (nc < 2 * (q->nlive + 1)) nc *= 2;
    int64_t *sum = calloc(2 * nc, sizeof *sum);
    int32_t *mn = malloc(2 * nc * sizeof *mn), *c0 = calloc(2 * nc, sizeof *c0),
            *c1 = calloc(2 * nc, sizeof *c1), *slot = malloc(nc * sizeof *slot);
    if (!sum || !mn || !c0 || !c1 || !slot) {
        free(sum), free(mn), free(c0), free(c1), free(slot);
        return GS_ENOMEM;
    }
    for (size_t i = 0; i < 2 * nc; i++) mn[i] = INT32_MAX;
    for (size_t i = 0; i < nc; i++) slot[i] = -1;
    size_t k = 0;
    for (size_t p = 0; p < q->end; p++) {
        int32_t s = q->slot[p];
        if (s < 0) continue;
        size_t o = q->cap + p, n = nc + k;
        sum[n] = q->sum[o];
        mn[n] = q->mn[o];
        c0[n] = q->cnt[0][o];
        c1[n] = q->cnt[1][o];
        slot[k] = s;
        q->pos[s] = (int32_t)k++;
    }
    free(q->sum), free(q->mn), free(q->cnt[0]), free(q->cnt[1]), free(q->slot);
    q->sum = sum, q->mn = mn, q->cnt[0] = c0, q->cnt[1] = c1, q->slot = slot;
    q->cap = nc;
    q->end = k;
    for (size_t i = nc - 1; i >= 1; i--) pull(q, i);
    return 0;
}

int gs_fitq_push(gs_fitq *q, int32_t slot, int32_t size, unsigned flags)
{
    if (slot < 0) return GS_EINVAL;
    if ((size_t)slot >= q->npos) {
        size_t nc = q->npos ? q->npos : 256;
        while (nc <= (size_t)slot) nc *= 2;
        int32_t *p = realloc(q->pos, nc * sizeof *p);
        if (!p) return GS_ENOMEM;
        for (size_t i = q->npos; i < nc; i++) p[i] = -1;
        q->pos = p;
        q->npos = nc;
    }
    if (q->pos[slot] >= 0) return GS_EEXIST;
    if (q->end == q->cap) {
        int rc = renumber(q);
        if (rc) return rc;
    }
    size_t p = q->end++;
    q->slot[p] = slot;
    q->pos[slot] = (int32_t)p;
    q->nlive++;
    set_leaf(q, p, 1, size, flags);
    return 0;
}

int gs_fitq_contains(const gs_fitq *q, int32_t slot)
{
    return slot >= 0 && (size_t)slot < q->npos && q->pos[slot] >= 0;
}

int gs_fitq_remove(gs_fitq *q, int32_t slot)
{
    if (!gs_fitq_contains(q, slot)) return 0;
    size_t p = (size_t)q->pos[slot];
    q->pos[slot] = -1;
    q->slot[p] = -1;
    q->nlive--;
    set_leaf(q, p, 0, 0, 0);
    return 1;
}

void gs_fitq_flag(gs_fitq *q, int32_t slot, int f, int on)
{
    if (!gs_fitq_contains(q, slot)) return;
    size_t i = q->cap + (size_t)q->pos[slot];
    if (q->cnt[f][i] == !!on) return;
    q->cnt[f][i] = !!on;
    for (i >>= 1; i; i >>= 1) q->cnt[f][i] = q->cnt[f][2 * i] + q->cnt[f][2 * i + 1];
}

int gs_fitq_flag_of(const gs_fitq *q, int32_t slot, int f)
{
    return gs_fitq_contains(q, slot) && q->cnt[f][q->cap + (size_t)q->pos[slot]] > 0;
}

int64_t gs_fitq_total(const gs_fitq *q)
{
    return q->cap ? q->sum[1] : 0;
}

int64_t gs_fitq_first_over(const gs_fitq *q, int64_t budget, int64_t *used)
{
    *used = 0;
    if (!q->cap || q->sum[1] <= budget) {
        *used = gs_fitq_total(q);
        return -1;
    }
    size_t i = 1;
    while (i < q->cap) {
        size_t l = 2 * i;
        if (q->sum[l] <= budget) {
            budget -= q->sum[l];
            *used += q->sum[l];
            i = l + 1;
        } else {
            i = l;
        }
    }
    return (int64_t)(i - q->cap);
}

/* First position >= from whose leaf satisfies ok(i) (ok holds on a node iff on some leaf below
 * it): up from the leaf to the first right sibling where ok holds, then down to its first such
 * leaf; -1 when none. */
#define FIND_FIRST(name, ok)                                        \
    static int64_t name(const gs_fitq *q, size_t from, int64_t arg) \
    {                                                               \
        size_t i = q->cap + from;                                   \
        if (!(ok)) {                                                \
            for (;;) {                                              \
                if (i == 1) return -1;                              \
                if (!(i & 1)) {                                     \
                    i++;                                            \
                    if (ok) break;                                  \
                    i--;                                            \
                }                                                   \
                i >>= 1;                                            \
            }                                                       \
            while (i < q->cap) {                                    \
                i *= 2;                                             \
                if (!(ok)) i++;                                     \
            }                                                       \
        }                                                           \
        return (int64_t)(i - q->cap);                               \
    }
FIND_FIRST(find_fit, q->mn[i] <= arg)
FIND_FIRST(find_flag, q->cnt[arg][i] > 0)

int64_t gs_fitq_next_fit(const gs_fitq *q, int64_t from, int64_t v)
{
    if (!q->cap || from < 0 || (size_t)from >= q->end || v < 0) return -1;
    if (v >= INT32_MAX) v = INT32_MAX - 1; /* (empty nodes hold INT32_MAX) */
    return find_fit(q, (size_t)from, v);
}

int64_t gs_fitq_next_flag(const gs_fitq *q, int64_t from, int f)
{
    if (!q->cap || from < 0 || (size_t)from >= q->end) return -1;
    return find_flag(q, (size_t)from, f);
}
