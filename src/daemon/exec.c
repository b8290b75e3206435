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
 * to the engine mechanisms the backend cannot carry out (one place).  The
 * capabilities that depend on the instance (GSD_XCAP_RUNTIME: checkpoint-based
 * suspend, remap) come from its instance_caps hook and count only with what
 * they build on (caps_of), so gsd_exec_can is the one answer to "can it".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "ident.h"

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

int gsd_exec_can_stdin(const gsd_exec *x)
{
    return x->ops->stdin_write != NULL;
}

int gsd_exec_stdin(gsd_exec *x, int64_t job_id, const void *buf, size_t len, int eof,
                   size_t *written)
{
    *written = 0;
    if (!x->ops->stdin_write) return GS_EUNSUPPORTED;
    return x->ops->stdin_write(x->b, job_id, buf, len, eof, written);
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

/* The table's capabilities and the instance's GSD_XCAP_RUNTIME ones, each only with what it
 * needs (CKPT: SUSPEND; REMAP: CKPT and a resume_at hook). */
static unsigned caps_of(const gsd_exec *x)
{
    unsigned c = x->ops->caps & ~(unsigned)GSD_XCAP_RUNTIME;
    if (x->ops->instance_caps) c |= x->ops->instance_caps(x->b) & (unsigned)GSD_XCAP_RUNTIME;
    if (!(c & GSD_XCAP_SUSPEND)) c &= ~(unsigned)GSD_XCAP_CKPT;
    if (!(c & GSD_XCAP_CKPT) || !x->ops->resume_at) c &= ~(unsigned)GSD_XCAP_REMAP;
    return c;
}

int gsd_exec_can(const gsd_exec *x, unsigned caps)
{
    return (caps_of(x) & caps) == caps;
}

const char *gsd_exec_name(const gsd_exec *x)
{
    return x->ops->name;
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

int gsd_exec_resume_at(gsd_exec *x, int64_t job_id, const char *const *task_gpus,
                       const char *const *task_cuda)
{
    if (!gsd_exec_can(x, GSD_XCAP_SUSPEND) || !x->ops->suspend) return GS_EUNSUPPORTED;
    /* a backend that cannot move a job resumes it where it left: the engine resumes a job
     * elsewhere only when told the executor can (GSD_XCAP_REMAP, serve.c) */
    if (!x->ops->resume_at) return x->ops->suspend(x->b, job_id, 0);
    return x->ops->resume_at(x->b, job_id, task_gpus, task_cuda);
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

/* ---- helpers for backends ---------------------------------------------------------------- */

void gsd_envv_push(gsd_envv *e, char *owned)
{
    if (!owned) abort();
    if (e->n + 1 >= e->cap) {
        e->cap = e->cap ? e->cap * 2 : 64;
        char **nv = realloc(e->v, e->cap * sizeof *nv);
        if (!nv) abort();
        e->v = nv;
    }
    e->v[e->n++] = owned;
    e->v[e->n] = NULL;
}

int gsd_envv_has(const gsd_envv *e, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], key, kl) && e->v[i][kl] == '=') return 1;
    return 0;
}

static void envv_pushf(gsd_envv *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void envv_pushf(gsd_envv *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    char *p = malloc((size_t)n + 1);
    if (!p) abort();
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    gsd_envv_push(e, p);
}

/* 1 if the spec or the executor sets key (so nothing else may). */
static int env_taken(const char *key, const gsd_spec *sp)
{
    if (gsd_env_reserved(key)) return 1;
    for (size_t i = 0; i < sp->nenv; i++)
        if (!strcmp(sp->env[i].key, key)) return 1;
    return 0;
}

/* Push "key=val" unless env has key already or the spec / the executor sets it. */
static void env_default(gsd_envv *env, const gsd_spec *sp, const char *key, const char *val)
{
    if (val && !gsd_envv_has(env, key) && !env_taken(key, sp)) envv_pushf(env, "%s=%s", key, val);
}

void gsd_exec_env_common(gsd_envv *env, const gsd_launch *l, const char *const *pass, size_t npass,
                         const struct gsd_unix_user *u, const char *jobdir)
{
    const gsd_spec *sp = l->spec;
    for (size_t k = 0; k < npass; k++) {
        const char *e = pass[k], *eq = strchr(e, '=');
        char key[256];
        size_t kl = eq ? (size_t)(eq - e) : sizeof key;
        if (kl >= sizeof key) continue;
        memcpy(key, e, kl);
        key[kl] = '\0';
        if (!env_taken(key, sp) && !gsd_envv_has(env, key)) envv_pushf(env, "%s", e);
    }
    env_default(env, sp, "PATH", GSD_JOB_PATH);
    if (u && u->name) {
        env_default(env, sp, "HOME", u->home);
        env_default(env, sp, "USER", u->name);
        env_default(env, sp, "LOGNAME", u->name);
        env_default(env, sp, "SHELL", u->shell);
    }
    for (size_t k = 0; k < sp->nenv; k++) envv_pushf(env, "%s=%s", sp->env[k].key, sp->env[k].val);
    envv_pushf(env, "GSCHED_JOB_ID=%lld", (long long)l->job_id);
    envv_pushf(env, "GSCHED_GROUP_ID=%lld", (long long)l->group);
    envv_pushf(env, "GSCHED_JOB_NAME=%s", sp->name ? sp->name : "");
    envv_pushf(env, "GSCHED_USER=%s", sp->user ? sp->user : "");
    envv_pushf(env, "GSCHED_VC=%s", sp->vc ? sp->vc : "default");
    envv_pushf(env, "GSCHED_WORLD_SIZE=%d", l->world_size);
    envv_pushf(env, "GSCHED_NUM_TASKS=%d", l->world_size);
    /* tasks of different sizes: each task's own count, pushed with its per-task variables */
    if (!l->task_ngpus) envv_pushf(env, "GSCHED_GPUS=%d", sp->gpus_per_task);
    envv_pushf(env, "GSCHED_JOB_DIR=%s", jobdir);
    if (sp->checkpoint_dir) envv_pushf(env, "GSCHED_CHECKPOINT_DIR=%s", sp->checkpoint_dir);
    if (gsd_spec_elastic(sp)) {
        /* elastic (docs/elastic.md): this generation's size, the control file the daemon
         * writes before a drain, the hints file rank 0 appends to, and a checkpoint
         * directory kept across generations (the job's own, unless the spec names one) */
        envv_pushf(env, "GSCHED_GENERATION=%d", l->generation);
        envv_pushf(env, "GSCHED_NUM_GPUS=%d", l->world_size * sp->gpus_per_task);
        envv_pushf(env, "GSCHED_CONTROL=%s/control.json", jobdir);
        envv_pushf(env, "GSCHED_HINTS=%s/hints.jsonl", jobdir);
        if (!sp->checkpoint_dir) envv_pushf(env, "GSCHED_CHECKPOINT_DIR=%s/checkpoint", jobdir);
    }
}
