/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.c - the compiled-in policy registry, looked up by name.
 * Invariant: names are unique; the table order is the listing order.
 */
#include <string.h>

#include "gsched/policy.h"

extern const gs_policy_ops gs_policy_fifo;
extern const gs_policy_ops gs_policy_fifo_backfill;
extern const gs_policy_ops gs_policy_yarn_cs;
extern const gs_policy_ops gs_policy_las;
extern const gs_policy_ops gs_policy_tiresias_las;
extern const gs_policy_ops gs_policy_tiresias_gittins;
extern const gs_policy_ops gs_policy_srtf;
extern const gs_policy_ops gs_policy_srsf;
extern const gs_policy_ops gs_policy_sjf;
extern const gs_policy_ops gs_policy_hived;
extern const gs_policy_ops gs_policy_private;
extern const gs_policy_ops gs_policy_quota;
extern const gs_policy_ops gs_policy_gandiva;
extern const gs_policy_ops gs_policy_gandiva_emul;
extern const gs_policy_ops gs_policy_tiresias_tj;
extern const gs_policy_ops gs_policy_optimus;
extern const gs_policy_ops gs_policy_elasticflow;
extern const gs_policy_ops gs_policy_edf;
extern const gs_policy_ops gs_policy_afs;
extern const gs_policy_ops gs_policy_pollux;
extern const gs_policy_ops gs_policy_themis;

/* clang-format off */
static const gs_policy_ops *const registry[] = {
    &gs_policy_fifo,
    &gs_policy_fifo_backfill,
    &gs_policy_yarn_cs,
    &gs_policy_las,
    &gs_policy_tiresias_las,
    &gs_policy_tiresias_gittins,
    &gs_policy_srtf,
    &gs_policy_srsf,
    &gs_policy_sjf,
    &gs_policy_hived,
    &gs_policy_quota,
    &gs_policy_private,
    &gs_policy_gandiva,
    &gs_policy_gandiva_emul,
    &gs_policy_tiresias_tj,
    &gs_policy_optimus,
    &gs_policy_elasticflow,
    &gs_policy_edf,
    &gs_policy_afs,
    &gs_policy_pollux,
    &gs_policy_themis,
};
/* clang-format on */

const gs_policy_ops *gs_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof *registry; i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

const gs_policy_ops *gs_policy_at(size_t i)
{
    return i < sizeof registry / sizeof *registry ? registry[i] : NULL;
}
