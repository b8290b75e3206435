/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exec.c - the executor registry and the daemon's executor calls (see
 * exec.h): each gsd_exec_* call dispatches to the backend's ops table.
 *
 * Invariants: the registry is a const table (no registration at run time);
 * a table is checked when an executor is created (every hook the daemon calls
 * is there; suspend exactly with GSD_XCAP_SUSPEND, recover and sweep exactly
 * with GSD_XCAP_ADOPT), so no call dispatches to NULL; a backend's suspend
 * hook is called only when it declares GSD_XCAP_SUSPEND (GS_EUNSUPPORTED
 * otherwise) and recover / sweep only with GSD_XCAP_ADOPT, so the daemon can
 * rely on the capability flags; gsd_exec_mech_unsupported maps those flags
 * to the engine mechanisms the backend cannot carry out (one place).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"

struct gsd_exec {
    const gsd_exec_ops *ops;
    void *b; /* the backend's state */
};

static const gsd_exec_ops *const registry[] = {
    &gsd_exec_local,
#ifdef GSCHED_HAVE_SLURM
    &gsd_exec_slurm,
#endif
};
#define NREG (sizeof registry / sizeof *registry)

const gsd_exec_ops *gsd_exec_find(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (!strcmp(registry[i]->name, name)) return registry[i];
    return NULL;
}

void gsd_exec_names(char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    for (size_t i = 0; i < NREG && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", registry[i]->name);
}

int gsd_exec_lookup(const char *name, const gsd_exec_ops **out, gs_diag *d)
{
    *out = gsd_exec_find(name ? name : "local");
    if (*out) return 0;
    char names[256];
    gsd_exec_names(names, sizeof names);
#ifndef GSCHED_HAVE_SLURM
    if (name && !strcmp(name, "slurm"))
        return gs_diag_set(d, GS_ENOENT, 0, 0,
                           "executor 'slurm': this gsched was built without libslurm (install "
                           "Debian's libslurm-dev and rebuild; known: %s)",
                           names);
#endif
    return gs_diag_set(d, GS_ENOENT, 0, 0, "unknown executor '%s' (known: %s)", name, names);
}

unsigned gsd_exec_mech_unsupported(const gsd_exec_ops *ops)
{
    unsigned m = 0;
    if (!(ops->caps & GSD_XCAP_SUSPEND) || !ops->suspend)
        m |= GS_MECH_BIT(GS_MECH_SUSPEND) | GS_MECH_BIT(GS_MECH_RESUME);
    if (!(ops->caps & GSD_XCAP_RESIZE)) m |= GS_MECH_BIT(GS_MECH_RESIZE);
    return m;
}

int gsd_exec_check(gsd_exec *x, char *why, size_t cap)
{
    if (cap) why[0] = '\0';
    return x->ops->check ? x->ops->check(x->b, why, cap) : 0;
}

int gsd_exec_cluster(gsd_exec *x, const gs_cluster *given, gs_cluster **out, gs_diag *d)
{
    *out = NULL;
    if (!(x->ops->caps & GSD_XCAP_CLUSTER))
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                           "executor '%s' does not know the cluster: give --cluster", x->ops->name);
    return x->ops->cluster(x->b, given, out, d);
}

int gsd_exec_bind(gsd_exec *x, int64_t job_id, const char *ext)
{
    if (!(x->ops->caps & GSD_XCAP_EXTERNAL)) return GS_EUNSUPPORTED;
    return x->ops->bind(x->b, job_id, ext);
}

void gsd_exec_retire(gsd_exec *x, int64_t job_id, const char *ext, int state, const char *why)
{
    if (x->ops->caps & GSD_XCAP_EXTERNAL) x->ops->retire(x->b, job_id, ext, state, why);
}

int gsd_exec_create(const char *name, const gsd_exec_conf *conf, gsd_exec **out, gs_diag *d)
{
    *out = NULL;
    const gsd_exec_ops *ops;
    int rc = gsd_exec_lookup(name, &ops, d);
    return rc ? rc : gsd_exec_create_ops(ops, conf, out, d);
}

/* The first hook a table lacks (or has without its capability), or NULL when it is complete. */
static const char *ops_missing(const gsd_exec_ops *o)
{
    static const char *const names[] = {
        "create", "destroy", "launch",   "stop",   "poll",     "next_deadline", "poll_within",
        "nruns",  "has",     "kill_now", "forget", "log_path", "log_open",      "task_pid"};
    const int have[] = {!!o->create,   !!o->destroy,       !!o->launch,      !!o->stop,
                        !!o->poll,     !!o->next_deadline, !!o->poll_within, !!o->nruns,
                        !!o->has,      !!o->kill_now,      !!o->forget,      !!o->log_path,
                        !!o->log_open, !!o->task_pid};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!have[i]) return names[i];
    if (!(o->caps & GSD_XCAP_SUSPEND) != !o->suspend) return "suspend (with GSD_XCAP_SUSPEND)";
    if (!(o->caps & GSD_XCAP_ADOPT) != !o->recover) return "recover (with GSD_XCAP_ADOPT)";
    if (!(o->caps & GSD_XCAP_ADOPT) != !o->sweep) return "sweep (with GSD_XCAP_ADOPT)";
    if (!(o->caps & GSD_XCAP_CLUSTER) != !o->cluster) return "cluster (with GSD_XCAP_CLUSTER)";
    if (!(o->caps & GSD_XCAP_EXTERNAL) != !o->bind) return "bind (with GSD_XCAP_EXTERNAL)";
    if (!(o->caps & GSD_XCAP_EXTERNAL) != !o->retire) return "retire (with GSD_XCAP_EXTERNAL)";
    return NULL;
}

int gsd_exec_create_ops(const gsd_exec_ops *ops, const gsd_exec_conf *conf, gsd_exec **out,
                        gs_diag *d)
{
    *out = NULL;
    const char *miss = ops_missing(ops);
    if (miss)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "executor '%s': hook %s missing, or set against its capabilities",
                           ops->name ? ops->name : "?", miss);
    gsd_exec *x = calloc(1, sizeof *x);
    if (!x) return GS_ENOMEM;
    x->ops = ops;
    int rc = ops->create(conf, &x->b, d);
    if (rc) {
        free(x);
        return rc;
    }
    *out = x;
    return 0;
}

void gsd_exec_destroy(gsd_exec *x)
{
    if (!x) return;
    x->ops->destroy(x->b);
    free(x);
}

const gsd_exec_ops *gsd_exec_backend(const gsd_exec *x)
{
    return x->ops;
}

int gsd_exec_can(const gsd_exec *x, unsigned caps)
{
    return (x->ops->caps & caps) == caps;
}

int gsd_exec_launch(gsd_exec *x, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud)
{
    return x->ops->launch(x->b, l, now, fn, ud);
}

int gsd_exec_stop(gsd_exec *x, int64_t job_id, gs_time now, gs_time grace)
{
    return x->ops->stop(x->b, job_id, now, grace);
}

int gsd_exec_suspend(gsd_exec *x, int64_t job_id, int stop)
{
    if (!gsd_exec_can(x, GSD_XCAP_SUSPEND) || !x->ops->suspend) return GS_EUNSUPPORTED;
    return x->ops->suspend(x->b, job_id, stop);
}

void gsd_exec_poll(gsd_exec *x, gs_time now, gsd_xev_fn fn, void *ud)
{
    x->ops->poll(x->b, now, fn, ud);
}

gs_time gsd_exec_next_deadline(const gsd_exec *x)
{
    return x->ops->next_deadline(x->b);
}

gs_time gsd_exec_poll_within(const gsd_exec *x)
{
    return x->ops->poll_within(x->b);
}

size_t gsd_exec_nruns(const gsd_exec *x)
{
    return x->ops->nruns(x->b);
}

int gsd_exec_has(const gsd_exec *x, int64_t job_id)
{
    return x->ops->has(x->b, job_id);
}

void gsd_exec_kill_now(gsd_exec *x, int64_t job_id)
{
    x->ops->kill_now(x->b, job_id);
}

void gsd_exec_forget(gsd_exec *x, int64_t job_id)
{
    x->ops->forget(x->b, job_id);
}

int gsd_exec_recover(gsd_exec *x, int64_t job_id, int run, int ntasks, gs_time now, int *alive,
                     int *exited, int *lost)
{
    if (!gsd_exec_can(x, GSD_XCAP_ADOPT)) { /* its tasks did not outlive the old daemon */
        *alive = *exited = 0;
        *lost = ntasks;
        return GS_EUNSUPPORTED;
    }
    return x->ops->recover(x->b, job_id, run, ntasks, now, alive, exited, lost);
}

int gsd_exec_sweep(gsd_exec *x, void (*log)(void *ud, const char *msg), void *ud)
{
    return gsd_exec_can(x, GSD_XCAP_ADOPT) ? x->ops->sweep(x->b, log, ud) : 0;
}

void gsd_exec_log_path(const gsd_exec *x, int64_t job_id, int task, char *buf, size_t cap)
{
    x->ops->log_path(x->b, job_id, task, buf, cap);
}

int gsd_exec_log_open(const gsd_exec *x, int64_t job_id, int task, int *fd)
{
    return x->ops->log_open(x->b, job_id, task, fd);
}

int64_t gsd_exec_task_pid(const gsd_exec *x, const char *handle)
{
    return handle ? x->ops->task_pid(handle) : -1;
}
