/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - helpers shared inside libgsched (not installed).
 *
 * strtab: interns strings and gives each a dense id in order of first
 * appearance.  Lookups go through a hash table, but ids never depend on hash
 * order, so nothing decided from them depends on it either.
 */
#ifndef GSCHED_INTERNAL_H
#define GSCHED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/*
 * plan: one pass of a preemptive priority policy (Tiresias, SRTF, ...).
 * The policy visits every active job in priority order; the plan admits a
 * job when the GPU count left allows it (no head-of-line blocking), marks
 * running jobs that no longer fit as victims, then applies: each admitted
 * pending job starts in priority order, preempting only the victims its
 * placement actually needs (least important first).  With count placement
 * this is exactly "re-plan from scratch"; with consolidated placement it
 * never preempts a job for a start that fragmentation would prevent anyway.
 * A running job inside its restart protection (gs_job.protect_until) always
 * stays: it is never a victim, even if that leaves less room for others.
 */
struct gs_engine;
struct gs_job;

typedef struct gs_plan {
    struct gs_job **start;
    size_t nstart, capstart;
    struct gs_job **vict;
    size_t nvict, capvict;
    long free;    /* GPUs left by count during the walk */
    int admitted; /* a pending job was admitted (later running jobs may not fit) */
    int64_t now;  /* running jobs still protected at this instant always stay */
} gs_plan;

void gs_plan_init(gs_plan *p);
void gs_plan_release(gs_plan *p);
/* Start a walk: free = healthy GPUs not held by stopping jobs. */
void gs_plan_begin(gs_plan *p, struct gs_engine *e);
/* Visit the next job in priority order.  Returns 1 if it belongs to the target set. */
int gs_plan_visit(gs_plan *p, struct gs_job *j);
/* Start admitted jobs, preempting victims as needed.  Returns the number started. */
int gs_plan_apply(gs_plan *p, struct gs_engine *e, int level, const char *why);

#endif
