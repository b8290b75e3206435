/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fitq.c - the ordered queue of the greedy fits-by-count walks
 * (src/core/fitq.c, used by tiresias-tj and optimus): under random pushes,
 * removals, flag changes and renumberings, the admitted set it describes
 * (every job before gs_fitq_first_over, then gs_fitq_next_fit from there)
 * against the naive walk over the queue in order, and gs_fitq_next_flag /
 * gs_fitq_total against scans.
 */
#include <stdlib.h>

#include "../src/core/fitq.h"
#include "gsched/error.h"
#include "harness.h"

static uint64_t rs = 88172645463325252u;
static uint32_t rnd(uint32_t n)
{
    return test_xorshift(&rs, n);
}

#define NMAX 700 /* slots */

static void t_fitq_random(void)
{
    gs_fitq q;
    gs_fitq_init(&q);
    static int32_t order[NMAX * 8], size[NMAX];
    static unsigned flags[NMAX];
    static int in[NMAX], want[NMAX];
    size_t norder = 0; /* push order, with removed slots left in (in[] says) */
    int renumbered = 0;
    for (int round = 0; round < 6000; round++) {
        int32_t s = (int32_t)rnd(NMAX);
        int op = (int)rnd(10);
        if (op < 5 && !in[s]) {
            size[s] = (int32_t)(rnd(10) == 0 ? 0 : 1u << rnd(4)); /* 0, 1, 2, 4, 8 */
            flags[s] = rnd(4);
            size_t cap0 = q.cap;
            ASSERT_OK(gs_fitq_push(&q, s, size[s], flags[s]));
            renumbered += cap0 && q.cap != cap0;
            ASSERT_EQ(gs_fitq_push(&q, s, 1, 0), GS_EEXIST);
            in[s] = 1;
            if (norder == sizeof order / sizeof *order) { /* compact the model */
                size_t k = 0;
                for (size_t i = 0; i < norder; i++)
                    if (order[i] >= 0 && in[order[i]]) order[k++] = order[i];
                norder = k;
            }
            order[norder++] = s;
        } else if (op < 8) {
            ASSERT_EQ(gs_fitq_remove(&q, s), in[s]);
            in[s] = 0;
            for (size_t i = 0; i < norder; i++) /* forget its old place */
                if (order[i] == s) order[i] = -1;
        } else if (in[s]) {
            int f = (int)rnd(2), on = (int)rnd(2);
            gs_fitq_flag(&q, s, f, on);
            flags[s] = on ? flags[s] | 1u << f : flags[s] & ~(1u << f);
        }
        ASSERT_EQ(gs_fitq_contains(&q, s), in[s]);
        /* the naive walk with a random budget, against the fitq's description */
        int64_t budget = rnd(60), left = budget, total = 0;
        for (size_t i = 0; i < norder; i++) {
            int32_t x = order[i];
            if (x < 0 || !in[x]) continue;
            want[x] = size[x] <= left;
            if (want[x]) left -= size[x];
            total += size[x];
        }
        ASSERT_EQ(gs_fitq_total(&q), total);
        int64_t used, k = gs_fitq_first_over(&q, budget, &used), l2 = budget - used;
        static int got[NMAX];
        for (int32_t x = 0; x < NMAX; x++) got[x] = in[x] && (k < 0 || q.pos[x] < k);
        for (int64_t p = k < 0 ? -1 : k + 1; p >= 0; p++) {
            if ((p = gs_fitq_next_fit(&q, p, l2)) < 0) break;
            int32_t x = gs_fitq_slot(&q, p);
            ASSERT(x >= 0 && in[x] && !got[x]);
            got[x] = 1;
            l2 -= size[x];
        }
        ASSERT_EQ(l2, left);
        for (int32_t x = 0; x < NMAX; x++)
            if (in[x] && got[x] != want[x])
                T_FAIL("round %d: slot %d admitted %d, the walk says %d", round, x, got[x],
                       want[x]);
        /* flags: the visit in queue order finds exactly the flagged jobs */
        for (int f = 0; f < 2; f++) {
            int64_t p = 0;
            for (size_t i = 0; i < norder; i++) {
                int32_t x = order[i];
                if (x < 0 || !in[x] || !(flags[x] & 1u << f)) continue;
                if (p >= 0) p = gs_fitq_next_flag(&q, p, f);
                ASSERT_EQ(gs_fitq_slot(&q, p), x);
                ASSERT(gs_fitq_flag_of(&q, x, f));
                p++;
            }
            if (p >= 0) ASSERT_EQ(gs_fitq_next_flag(&q, p, f), -1);
        }
    }
    ASSERT(renumbered > 0); /* positions ran out and were renumbered, keeping the order */
    gs_fitq_release(&q);
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        {"fitq_random", t_fitq_random},
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
