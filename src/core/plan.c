/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan.c - count-based target set and its application (see internal.h).
 * Invariants: the target set is the greedy prefix of the priority order by
 * GPU count; a victim is preempted only when a higher-priority start uses
 * one of its GPUs; jobs are started and preempted only through the engine.
 */
#include <stdlib.h>

#include "gsched/engine.h"
#include "internal.h"

void gs_plan_init(gs_plan *p)
{
    p->start = p->vict = NULL;
    p->nstart = p->capstart = p->nvict = p->capvict = 0;
    p->free = 0;
    p->admitted = 0;
}

void gs_plan_release(gs_plan *p)
{
    free(p->start);
    free(p->vict);
    gs_plan_init(p);
}

void gs_plan_begin(gs_plan *p, gs_engine *e)
{
    p->nstart = p->nvict = 0;
    p->admitted = 0;
    p->free = (long)gs_cluster_cell(gs_engine_cluster(e), 0)->healthy - gs_engine_stopping_gpus(e);
    p->now = gs_engine_now(e);
}

static int push(gs_job ***v, size_t *n, size_t *cap, gs_job *j)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        gs_job **nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return 0;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = j;
    return 1;
}

int gs_plan_visit(gs_plan *p, gs_job *j)
{
    if (j->state == GS_JOB_RUNNING) {
        if (p->free >= j->gpus || p->now < j->protect_until) {
            p->free -= j->gpus;
            return 1;
        }
        push(&p->vict, &p->nvict, &p->capvict, j);
        return 0;
    }
    if (j->state == GS_JOB_PENDING && p->free >= j->gpus) {
        if (!push(&p->start, &p->nstart, &p->capstart, j)) return 0;
        p->free -= j->gpus;
        p->admitted = 1;
        return 1;
    }
    return 0;
}

int gs_plan_apply(gs_plan *p, gs_engine *e, int level, const char *why)
{
    /* victims least important first */
    for (size_t a = 0, b = p->nvict; a + 1 < b; a++, b--) {
        gs_job *t = p->vict[a];
        p->vict[a] = p->vict[b - 1];
        p->vict[b - 1] = t;
    }
    int started = 0;
    for (size_t i = 0; i < p->nstart; i++) {
        gs_job *j = p->start[i];
        if (j->state != GS_JOB_PENDING) continue;
        int rc;
        if (p->nvict)
            rc = gs_engine_start_preempting(e, j, (gs_locality)level, p->vict, (int)p->nvict, why);
        else
            rc = gs_engine_try_start(e, j, (gs_locality)level);
        if (rc >= 0 && j->state == GS_JOB_RUNNING)
            started++;
        else
            gs_engine_set_reason(e, j, "Resources");
    }
    return started;
}
