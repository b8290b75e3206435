/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * themis.h - Themis' partial-allocation (PA) mechanism over bid tables
 * (algorithms.md section 4.4), used by policy_themis.c and tested on its own
 * (tests/test_themis.c).  Not installed.
 *
 * Each app i offers a bid: a few options (GPU count k, valuation v = 1/rho >
 * 0), option 0 being "no GPU" (k = 0).  With R GPUs offered the mechanism
 *   - picks one option per app maximising the Nash social welfare, the
 *     product of the valuations, under sum k <= R (a DP over GPU counts);
 *   - for every app i, the welfare of the others without i (the N extra
 *     maximisations, from prefix and suffix DP tables), and the hidden
 *     payment c_i = prod_{k != i} v_k(G*) / prod_{k != i} v_k(G*_{-i}), in (0, 1];
 *   - grants i the option nearest to c_i x G*_i GPUs among its options of at
 *     most G*_i GPUs (ties to the larger: rigid gangs cannot use a fraction).
 * Ties between equally good choices go to the earlier option, then the
 * earlier app: the result depends only on the input order.
 */
#ifndef GSCHED_THEMIS_H
#define GSCHED_THEMIS_H

#include <stddef.h>

typedef struct gs_themis_opt {
    int gpus;     /* >= 0; the first option of every bid has 0 */
    double value; /* > 0: 1 / rho with these GPUs */
} gs_themis_opt;

typedef struct gs_themis_bid {
    const gs_themis_opt *opt; /* nopt >= 1 options, opt[0].gpus == 0, at most 255 */
    int nopt;
} gs_themis_bid;

/* Scratch of the DP (grown as needed; zero-initialise, free with gs_themis_pa_release). */
typedef struct gs_themis_pa_ws {
    double *pre, *suf;
    unsigned char *choice;
    size_t cap, capc;
} gs_themis_pa_ws;

void gs_themis_pa_release(gs_themis_pa_ws *ws);

/*
 * Run the mechanism on n bids for R GPUs.  star[i] (option index of G*), pay[i] (c_i) and
 * grant[i] (option index granted) are filled; *welfare (may be NULL) gets log of the
 * optimal product.  0, GS_EINVAL for a malformed bid, GS_ENOMEM.
 */
int gs_themis_pa(const gs_themis_bid *bids, int n, int R, gs_themis_pa_ws *ws, int *star,
                 double *pay, int *grant, double *welfare);

#endif
