/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - helpers shared inside libgsched's engine (not installed; no policy
 * includes it: what policies use is public, gsched/plan.h and gsched/placement.h).
 *
 * strtab: interns strings and gives each a dense id in order of first
 * appearance.  Lookups go through a hash table, but ids never depend on hash
 * order, so nothing decided from them depends on it either.
 */
#ifndef GSCHED_INTERNAL_H
#define GSCHED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct strtab {
    char **str; /* by id */
    size_t n, cap;
    int32_t *slots; /* hash slots -> id, -1 empty */
    size_t nslots;
} strtab;

void strtab_init(strtab *t);
void strtab_release(strtab *t);
/* Intern s; returns its id (>= 0) or GS_ENOMEM. */
int strtab_intern(strtab *t, const char *s);
/* Id of s or -1. */
int strtab_find(const strtab *t, const char *s);
static inline const char *strtab_str(const strtab *t, int id)
{
    return id >= 0 && (size_t)id < t->n ? t->str[id] : NULL;
}

/* id (int64) -> slot (int32) map, open addressing. */
typedef struct idmap {
    int64_t *keys;
    int32_t *vals; /* -1 empty */
    size_t n, cap;
} idmap;

void idmap_init(idmap *m);
void idmap_release(idmap *m);
int idmap_put(idmap *m, int64_t key, int32_t val); /* GS_EEXIST if present */
int32_t idmap_get(const idmap *m, int64_t key);    /* -1 if absent */
/* Remove key (nothing when absent); the table keeps its capacity (bounded by the most keys it
 * held at once). */
void idmap_del(idmap *m, int64_t key);

/* The engine's policy ops and its state (queue.c asks the policy through them). */
struct gs_engine;
struct gs_policy_ops;
const struct gs_policy_ops *gs_engine_policy_ops(const struct gs_engine *e, void **state);

#endif
