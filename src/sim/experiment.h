/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * experiment.h - the pieces of an experiment `gsched sim` runs (docs/experiments.md):
 * policy items with their own parameters, the measurement window, sweeps.
 *
 * A policy list is "ITEM[,ITEM...]", an item "NAME[:KEY=VALUE[:KEY=VALUE...]]" labelled as
 * typed.  A value may contain ',' and ':' (queues=3250,7200; quotas=vc1:64): a comma starts
 * a new item only when what follows is a policy name alone or a name followed by
 * ":KEY=", and inside an item a ':' starts a new pair only when KEY= follows it.
 *
 * Ownership: gs_policy_items_parse fills a caller-owned gs_policy_items released with
 * gs_policy_items_release (NULL-safe); the sweep likewise.
 */
#ifndef GSCHED_EXPERIMENT_H
#define GSCHED_EXPERIMENT_H

#include <stddef.h>

#include "gsched/gsched.h"

/* The longest item label (bytes, without the NUL): gs_sim_result.policy holds it whole, so
 * every output tells the items apart. */
#define GS_LABEL_MAX 255

typedef struct gs_policy_item {
    char *label;      /* the item as typed */
    char *name;       /* the policy's name */
    gs_params params; /* its own KEY=VALUE pairs, in order */
} gs_policy_item;

typedef struct gs_policy_items {
    gs_policy_item *v;
    size_t n;
} gs_policy_items;

/* Split a --policy list.  Errors (GS_EINVAL with a message): an empty item or name, a pair
 * without '=', a key given twice in one item, an item listed twice, an item longer than
 * GS_LABEL_MAX. */
int gs_policy_items_parse(const char *list, gs_policy_items *out, gs_diag *d);
void gs_policy_items_release(gs_policy_items *it);

/* "START:END" (durations; either may be empty: from 0, to the end).  A ':' inside a
 * duration (Slurm's M:S forms) is allowed when only one split parses.  *end is
 * GS_TIME_MAX when open.  END must be after START. */
int gs_window_parse(const char *s, gs_time *start, gs_time *end, gs_diag *d);

/* A sweep: KEY=V1,V2,...; values in order, no value twice. */
typedef struct gs_sweep {
    char *key;
    char **values;
    size_t n;
} gs_sweep;

int gs_sweep_parse(const char *s, gs_sweep *out, gs_diag *d);
void gs_sweep_release(gs_sweep *s);

/* A generator spec ("k=v,k=v") with KEY set to VALUE (replaced, else appended); malloc'd. */
char *gs_spec_with(const char *spec, const char *key, const char *value);

#endif
