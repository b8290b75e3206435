/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spec.h - the live job spec: what a user submits to `gsched serve`.
 *
 * One parser for YAML and JSON (JSON is read as YAML 1.2 flow style by
 * libfyaml, so both give "file:line:col: message" diagnostics naming the
 * field).  Unknown fields are errors with a "did you mean" hint.  The
 * canonical form is JSON (gsd_spec_to_json): the CLI sends it, the daemon
 * stores it, and restart recovery parses it back with the same parser.
 *
 * Invariants after a successful gsd_spec_parse(): ntasks >= 1,
 * gpus_per_task >= 1, ntasks * gpus_per_task <= GSD_MAX_GPUS, a command is
 * present (argv or shell), every string is valid, bounded and free of NUL,
 * C0/C1 control and bidirectional formatting characters (tabs and newlines
 * only in the command and env values), numeric and boolean fields were not
 * given as quoted strings, env keys are shell identifiers and none is
 * reserved (GSCHED_*, CUDA_VISIBLE_DEVICES, RANK, ...: the executor sets
 * those); an elastic job (max_gpus > 0) is a gang whose sizes are multiples of
 * gpus_per_task in [max(min_gpus, gpus_per_task), max_gpus] (and in 'sizes',
 * ascending, when given), and its initial size ntasks * gpus_per_task is one of
 * them.  Members and groups (issue 14): task_gpus, when set, has ntasks entries in
 * 1..GSD_MAX_GPUS that are not all equal, gpus_per_task is the largest and their sum is at most
 * GSD_MAX_GPUS; groups are nested task ranges in pre-order in the shape the spec's `members` /
 * `groups` keys write them (a range's own members first, then its child groups, contiguous up to
 * its end; the top-level groups contiguous up to the last task; a spec with a `hived:` block
 * keeps HiveD's shape: nested, in pre-order, siblings not overlapping); such a job is a gang and
 * not elastic.
 *
 * Ownership: a gsd_spec owns all its strings; gsd_spec_release() frees them
 * (and accepts a zeroed spec).  gsd_spec_job() fills a gs_job_spec whose
 * strings are borrowed from the gsd_spec.
 */
#ifndef GSCHED_DAEMON_SPEC_H
#define GSCHED_DAEMON_SPEC_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "gsched/gsched.h"

#define GSD_MAX_GPUS      4096
#define GSD_MAX_NAME      128
#define GSD_MAX_ARGS      1024
#define GSD_MAX_CMD_BYTES (64 * 1024)
#define GSD_MAX_ENV       256
#define GSD_MAX_PATH      4096
#define GSD_PRIO_MAX      GS_PRIORITY_MAX

typedef struct gsd_kv {
    char *key, *val;
} gsd_kv;

typedef struct gsd_spec {
    char *name;        /* optional */
    char *vc;          /* optional; NULL = "default" */
    char *user;        /* set by the server (token or header); spec value only for admins */
    char *run_as;      /* the Unix account the tasks run as: set by the daemon at submit
                        * (ident.h), never by a client; NULL in specs stored before it */
    int priority;      /* -1 opportunistic, 0..GSD_PRIO_MAX */
    int ntasks;        /* >= 1 */
    int gpus_per_task; /* >= 1 */
    int gang;          /* 1 (default): all tasks start together */
    char *gpu_type;    /* NULL = any */
    char **argv;       /* command as a list (execvp), NULL-terminated; or NULL */
    int argc;          /* entries in argv */
    char *shell;       /* command as a string, run by /bin/sh -c; or NULL */
    gsd_kv *env;       /* extra environment */
    size_t nenv;
    char *workdir;        /* NULL = the daemon's working directory */
    gs_time time_limit;   /* total executed time allowed; 0 = none */
    gs_time duration;     /* expected run time for duration-aware policies; 0 = unset */
    gs_time grace;        /* SIGTERM -> SIGKILL grace period; 0 = the daemon's default */
    char *checkpoint_dir; /* exported as GSCHED_CHECKPOINT_DIR */
    int cpus_per_task;    /* 0 = not modelled */
    int mem_mb_per_task;  /* 0 = not modelled */
    char *pinned_cell;    /* HiveD pinnedCellId */
    int lazy_preemption;  /* HiveD lazy preemption */
    int hold;             /* submitted held (Slurm --hold): waits for a release */
    char *dependency;     /* Slurm --dependency text, canonical (deps.h); NULL = none */
    int kill_invalid_dep; /* kill_on_invalid_dep: cancel it when its dependency never can be */
    int interactive;      /* gsched run (issue 16): task 0's stdin comes from the API (POST
                             /v1/jobs/ID/stdin) and the job is cancelled when its client's lease
                             runs out; one task, not elastic, not an array */
    char *array;    /* job array index list "0-99%8" (gsched/jobarray.h); NULL = not an array.  The
                       daemon expands it at submit into one job per index; each element's stored
                       spec keeps it (its throttle) and gets its GSCHED_ARRAY_* variables */
    char *external; /* the executor's name of the job it was adopted from ("slurm:57"):
                     * set by the daemon at adoption (exec.h, GSD_X_ADOPT), never by a
                     * client; NULL for a job submitted to gsched */
    /* ---- elastic (issue 13, docs/elastic.md): max_gpus > 0 makes the job elastic ---- */
    int min_gpus, max_gpus; /* GPU range of its sizes; 0 = rigid (min 0: gpus per task) */
    int *sizes;             /* valid GPU counts, ascending; NULL = every multiple of the GPUs
                               per task in [min_gpus, max_gpus] */
    int nsizes;
    gs_time min_rescale_gap; /* least time between two policy rescales; < 0 = the engine's
                                default (--set rescale_gap) */
    gs_time deadline;        /* finish by (wall clock, us since the epoch); 0 = none */
    int64_t batch_size;      /* global batch size; 0 = unknown */
    int max_rescales;        /* policy rescales allowed; -1 = unlimited */
    int max_failures;        /* failed generations tolerated (requeued) before FAILED */
    gs_time drain_timeout;   /* SIGTERM -> SIGKILL of a drain; 0 = the engine's drain_timeout */
    char *app;               /* goodput-model application name; NULL = none */
    /* ---- heterogeneity (issue 15, docs/heterogeneity.md) ---- */
    char *model;   /* the profiles' model (its speed on each GPU type); NULL = 'default' rows */
    double steps;  /* work in training steps at the model's reference-type throughput; 0 = the
                      work is 'duration' (they exclude each other) */
    double weight; /* priority weight of Gavel's and Themis' objectives; 0 = unset (1) */
    /* ---- affinity groups (issue 14, docs/job-spec.md#members-and-groups) ---- */
    int32_t *task_gpus;    /* GPUs of each task (ntasks entries) when they differ; NULL = each
                              task has gpus_per_task (then gpus_per_task is the largest entry) */
    gs_task_group *groups; /* nested withinOneCell groups, pre-order (gs_task_group; 'within'
                              owned, within_type unused); NULL when ngroups is 0 */
    int ngroups;
    char *hived; /* the `hived:` block (HiveD's pod-scheduling spec) as compact JSON, verbatim;
                    NULL = none.  vc, priority, tasks and groups then come from it */
} gsd_spec;

/* Largest number of groups in a spec, and how deep they nest. */
#define GSD_MAX_GROUPS      256
#define GSD_MAX_GROUP_DEPTH 16
/* 1 when the spec has tasks of different sizes or groups (a policy with groups must place it:
 * hived). */
static inline int gsd_spec_grouped(const gsd_spec *s)
{
    return s->task_gpus != NULL || s->ngroups > 0;
}
/* GPUs of task t of s, and of the whole job. */
static inline int gsd_spec_task_gpus(const gsd_spec *s, int t)
{
    return s->task_gpus ? s->task_gpus[t] : s->gpus_per_task;
}
int gsd_spec_total_gpus(const gsd_spec *s);
/* Put all of s's tasks in one new top-level group within that cell type (the spec's `within`,
 * submit --within); its groups so far become its children. */
void gsd_spec_wrap_within(gsd_spec *s, const char *within);
/* The store's columns (store.h jobs.task_gpus, jobs.groups), malloc'ed: "2,1" and
 * [{"lo":0,"hi":2,"parent":-1,"within":"V100-NODE"}, ...]; NULL when the spec has none. */
char *gsd_spec_task_gpus_col(const gsd_spec *s);
char *gsd_spec_groups_col(const gsd_spec *s);
/* "2+1" (tasks of different sizes, in task order; runs of equal ones as "2x4") or "8"
 * (ntasks x gpus_per_task) into buf; a text longer than cap ends in "...". */
void gsd_spec_gpus_text(const gsd_spec *s, char *buf, size_t cap);

/* Largest number of entries in an elastic job's 'sizes'. */
#define GSD_MAX_SIZES 64
/* 1 when the spec describes an elastic job (max_gpus > 0). */
static inline int gsd_spec_elastic(const gsd_spec *s)
{
    return s->max_gpus > 0;
}

void gsd_spec_init(gsd_spec *s);
void gsd_spec_release(gsd_spec *s);

/*
 * Parse a spec from YAML or JSON.  'file' names the source in messages
 * ("job.yaml", "request body").  On error returns GS_EPARSE / GS_ERANGE /
 * GS_EINVAL / GS_ETOOBIG with d filled (line:col when known) and *field set
 * to the offending field (static string, "" when none) if field != NULL.
 */
int gsd_spec_parse(const char *file, const char *buf, size_t len, gsd_spec *s, gs_diag *d,
                   const char **field);
/* Check the invariants above (used after building a spec from CLI flags). */
int gsd_spec_validate(const gsd_spec *s, gs_diag *d, const char **field);
/* 1 if n GPUs is a valid size of elastic job s (in its range, a multiple of its GPUs per
 * task, in 'sizes' when given); 0 for a rigid job. */
int gsd_spec_size_valid(const gsd_spec *s, int n);

/*
 * The daemon's check of a submitted spec against this machine (the parse itself does no I/O,
 * so stored specs still load after a directory went away): the workdir, when given, must be
 * an existing directory.  0, or GS_EINVAL with the reason in msg (field "workdir").  The
 * executor checks it again when a task starts.  as (not NULL): the check is made by a child
 * process running as that account (groups, gid, uid), and "does not exist" and "cannot be
 * entered" get one answer, so a user cannot probe paths through the daemon's privileges.
 */
/* Who the check runs as (the job's account on a multi-user daemon); NULL: the daemon itself. */
typedef struct gsd_spec_as {
    const char *name;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int ngroups;
} gsd_spec_as;
int gsd_spec_check_host(const gsd_spec *s, const gsd_spec_as *as, char *msg, size_t cap);

/* Canonical JSON (a malloc'ed string; NULL on OOM).  Stable key order. */
char *gsd_spec_to_json(const gsd_spec *s);
/* Set (or replace) the environment variable key of s to val; aborts when out of memory. */
void gsd_spec_setenv(gsd_spec *s, const char *key, const char *val);

/*
 * Fill a core job spec: strings borrowed from s.  'default_duration' is used
 * as the work estimate when the spec has neither duration nor time limit.
 */
void gsd_spec_job(const gsd_spec *s, gs_time default_duration, gs_job_spec *out);

/*
 * A spec with a `hived:` block: its VC, priority, pinned cell, GPU type, lazy preemption, name
 * (when the spec has none), tasks and groups from HiveD's spec, read as HiveD reads it against
 * the cluster c (its cell types: cellsPerPod, withinOneCell; src/config/hived_spec.c).  The
 * canonical JSON still writes only the block, so a stored spec is resolved again after a
 * restart.  0 (nothing to do without a block), or GS_EINVAL with "'hived': HiveD's message" in
 * d (field "hived").  The daemon calls it on the scheduler thread, before gsd_spec_job.
 */
int gsd_spec_resolve_hived(gsd_spec *s, const gs_cluster *c, gs_diag *d);

/* Helpers shared with the CLI. */
/*
 * A spec duration: the core grammar (gs_parse_duration: "90", "90s", "1h30m", "2d", "500ms",
 * "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM:SS", ...; a bare number is in bare_unit, GS_SEC
 * today), at most GSD_DURATION_MAX (GS_ERANGE), rounded to whole milliseconds so that the
 * canonical JSON form parses back to the same value.  Priorities: gs_parse_priority with
 * GSD_PRIO_MAX.
 */
#define GSD_DURATION_MAX ((gs_time)100 * 365 * 86400 * GS_SEC)
int gsd_parse_duration(const char *s, gs_time bare_unit, gs_time *out, gs_diag *d);
/*
 * A time limit as Slurm's --time writes it: a bare number is minutes ("30" = 30 min), then
 * MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, and gsched's units ("90s", "2h"); "UNLIMITED",
 * "infinite" (any case) and "0" mean no limit (*out = 0).  Same bounds and rounding as
 * gsd_parse_duration.  (A spec's time_limit field keeps the spec grammar: bare seconds.)
 */
int gsd_parse_time_limit(const char *s, gs_time *out, gs_diag *d);
/* A deadline as an RFC 3339 UTC time "2026-11-24T10:00:00Z" (whole seconds): 0 and *out (us
 * since the epoch), or GS_EPARSE; and back (the canonical JSON form). */
int gsd_parse_deadline(const char *s, gs_time *out);
void gsd_format_deadline(gs_time t, char *buf, size_t cap);
/* Format a duration as "1h02m03s" / "45s" / "2d03h". */
void gsd_format_duration(gs_time t, char *buf, size_t cap);
/* 1 if s is a name the executor reserves in the task environment: GSCHED_* (except
 * GSCHED_ARRAY_*, which `gsched submit --array` sets and the executor never does),
 * CUDA_VISIBLE_DEVICES, RANK, ... */
int gsd_env_reserved(const char *key);
/* 0, or GS_EINVAL with "'FIELD' contains a control character (U+001B) at byte N" in d when
 * s (one line of text: a reason, a name) holds a NUL, C0/C1 control (tab allowed) or
 * bidirectional formatting character, which would make what is printed differ from what was
 * meant (the spec's own rule). */
int gsd_text_check(const char *field, const char *s, gs_diag *d);

#endif
