/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bad_plugin.c - policy plugins gsched must refuse, one per BAD value (tests/plugin/plugin.sh):
 *   1  no gsched_policy_plugin symbol      3  a name taken by a compiled-in policy (fifo)
 *   2  another policy ABI                  4  a table without schedule()
 */
#include <stddef.h>

#include "gsched/policy.h"

static int bad_create(gs_engine *e, gs_params *p, void **state, gs_diag *d)
{
    (void)e, (void)p, (void)d;
    *state = NULL;
    return 0;
}

static int bad_schedule(void *st)
{
    (void)st;
    return 0;
}

static const gs_policy_ops bad_ops = {
    .name = BAD == 3 ? "fifo" : "bad",
    .summary = "refused",
    .create = bad_create,
    .schedule = BAD == 4 ? NULL : bad_schedule,
};

#if BAD == 1
/* exports something else only */
const gs_policy_ops *other_symbol(void);
const gs_policy_ops *other_symbol(void)
{
    return &bad_ops;
}
#else
const gs_policy_plugin *gsched_policy_plugin(void)
{
    static const gs_policy_plugin plugin = {BAD == 2 ? GS_POLICY_ABI + 1 : GS_POLICY_ABI,
                                            sizeof(gs_policy_ops), sizeof(gs_job), &bad_ops};
    return &plugin;
}
#endif
