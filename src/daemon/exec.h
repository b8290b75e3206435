/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exec.h - the executor interface: what runs a job's tasks, signals them,
 * notices when they end and finds them again after a daemon restart.  A
 * backend is a const ops table (gsd_exec_ops) looked up by name, like the
 * policies (`gsched serve --executor NAME`, default "local"); exec.c keeps
 * the registry and the calls the daemon makes (gsd_exec_*), each a dispatch
 * to the backend.  Backends: "local" (exec_local.c: every task a process
 * tree on this machine, under a shim).  A cluster backend (e.g. Slurm) is
 * one more table in the registry.
 *
 * Contract every backend keeps:
 *  - asynchronous reporting: launch, poll and stop never call the engine;
 *    what happened comes back through the gsd_xev_fn callback (the daemon
 *    turns it into engine calls on its scheduler thread);
 *  - a launch that cannot start a task reports it as exited (code 126/127
 *    with a message) at the next poll: launching never fails half-way
 *    silently; such an exit carries launch_failed (GSD_XLAUNCH_*), which
 *    tells the backend's own failure to start the command (the job's:
 *    workdir, command not executable; the node's: its state directory cannot
 *    be written) from the command's own exit codes, which never carry it;
 *  - check (optional) says whether the backend can launch at all now (e.g.
 *    its state directory is writable): the daemon drains the nodes while it
 *    cannot and asks again periodically;
 *  - stop = graceful stop (SIGTERM or the backend's equivalent), then a hard
 *    kill once the grace period is over (reported as GSD_X_KILLED);
 *  - a run stays registered until gsd_exec_forget(), which the daemon calls
 *    only after committing the outcome, so a crash in between finds it
 *    again through recover();
 *  - a task is named to the database by an opaque handle string the backend
 *    chooses ("local:PID:STARTTICKS"); the daemon stores it and shows it,
 *    never parses it (task_pid extracts a process id for display, or -1);
 *  - capabilities (GSD_XCAP_*) say what it can do; the daemon checks them
 *    instead of assuming, and tells the engine before it creates it what it
 *    cannot do (gsd_exec_mech_unsupported), so no policy is ever allowed a
 *    mechanism (suspend / resume without GSD_XCAP_SUSPEND) the backend lacks;
 *  - a task's environment is gsched's variables, the spec's env, the names
 *    of gsd_exec_conf.pass_env set in the daemon, and fixed defaults (PATH =
 *    GSD_JOB_PATH): nothing else of the daemon's environment.
 *
 * Threading: an executor object belongs to the scheduler thread, except
 * the calls that take a const gsd_exec * and are marked thread-safe (log
 * access, task_pid): they read only what create() set, so HTTP threads may
 * call them through a const pointer.
 * Ownership: gsd_exec_create() returns an object freed by gsd_exec_destroy()
 * (NULL is fine); strings passed in are copied or used during the call only;
 * strings in a gsd_xev live during the callback only.
 */
#ifndef GSCHED_DAEMON_EXEC_H
#define GSCHED_DAEMON_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "gsched/gsched.h"
#include "spec.h"

/* An executor: a backend's ops and its state. */
typedef struct gsd_exec gsd_exec;

typedef struct gsd_launch {
    int64_t job_id;
    int run; /* 1 for the first run, +1 after each requeue */
    int ntasks;
    int task_index_base;          /* rank of the first task (non-gang parts carry their index) */
    int world_size;               /* tasks in the whole job */
    const char *const *task_node; /* node name per task */
    const char *const *task_cuda; /* CUDA_VISIBLE_DEVICES per task */
    const char *const *task_gpus; /* global GPU indices per task ("3,4"), for the task rows */
    const int *task_ngpus;        /* GPUs of each task when tasks differ in size (issue 14:
                                     GSCHED_GPUS per task); NULL = the spec's gpus_per_task */
    const gsd_spec *spec;
    int64_t group;   /* id of the job it belongs to (non-gang parts) */
    int master_port; /* MASTER_PORT for the job */
    gs_time grace;   /* exported as GSCHED_GRACE_SECONDS */
    int generation;  /* elastic jobs (spec max_gpus > 0): the generation this run is
                        (1 = first launch); 0 for a rigid job */
} gsd_launch;

typedef enum gsd_xev_kind {
    GSD_X_TASK_STARTED, /* a task started: handle */
    GSD_X_TASK_EXITED,  /* one task ended: exit_code, lost (handle if it had started) */
    GSD_X_PEER_FAILED,  /* a task failed while others run: stopping the others */
    GSD_X_KILLED,       /* grace period over: hard kill sent */
    GSD_X_RUN_DONE,     /* every task of the run is gone: exit_code, lost, killed */
    /* Cluster backends (GSD_XCAP_CLUSTER / GSD_XCAP_EXTERNAL) also report what happens outside
     * the runs gsched launched (job_id / run / task are -1 / 0 / -1 unless said): */
    GSD_X_NODE,    /* node 'node' changed state in the cluster manager: node_state
                      (GSD_XNODE_*), msg = the manager's reason */
    GSD_X_OUTSIDE, /* 'count' GPUs of node 'node' are held by work gsched does not schedule
                      (foreign jobs); replaces the node's previous count (0 = none) */
    GSD_X_ADOPT,   /* a job submitted outside gsched (plain sbatch into a managed partition)
                      waits, held, for gsched to schedule it: 'adopt' */
    GSD_X_GONE,    /* job_id's external job was cancelled or removed outside gsched (a user's
                      scancel): msg; the daemon cancels the job (a registered run then ends
                      with its own RUN_DONE) */
    /* GSD_XCAP_CKPT: a checkpoint-based suspend (stop = 1) or resume (stop = 0) of job_id's run
     * finished (asynchronously, after gsd_exec_suspend / gsd_exec_resume_at returned): failed
     * (0 ok, else msg says what failed), usec (its wall time), count (CUDA processes acted on;
     * 0 = the job has none: plain SIGSTOP / SIGCONT).  A failed suspend left the processes
     * running with their GPU memory (rolled back, no SIGSTOP); a failed resume left them
     * continued but some not restored: the daemon stops the job either way. */
    GSD_X_SUSPENDED,
} gsd_xev_kind;

/* GSD_X_NODE states, from the cluster manager's view of the node. */
enum {
    GSD_XNODE_UP = 0,    /* in service (again) */
    GSD_XNODE_DRAIN = 1, /* no new work, running work goes on (Slurm DRAIN) */
    GSD_XNODE_DOWN = 2,  /* failed or unreachable: its work is lost (Slurm DOWN, FAIL, not
                            responding) */
};

/*
 * A job submitted outside gsched (GSD_X_ADOPT): what the daemon makes its spec from.  Strings
 * live during the callback only.  The daemon submits it like a client's job, with 'ext' in
 * the spec (gsd_spec.external), as 'user' running as 'run_as' ("#UID"), and binds it
 * (gsd_exec_bind) once its row is committed; a job it refuses (no such VC, too big) is
 * retired (gsd_exec_retire) with the reason, which the backend passes on to the user.
 */
typedef struct gsd_adopt {
    const char *ext;     /* the backend's name for it, unique ("slurm:57") */
    const char *name;    /* job name */
    const char *user;    /* the owner's account name */
    const char *run_as;  /* "#UID" */
    const char *vc;      /* NULL = the default VC */
    const char *workdir; /* NULL = none */
    const char *gpu_type;
    int priority; /* 0..GSD_PRIO_MAX, or -1 opportunistic */
    int ntasks, gpus_per_task, gang, cpus_per_task, mem_mb_per_task;
    gs_time time_limit; /* 0 = none */
    gs_time submitted;  /* when the user submitted it (wall clock, GS_TIME_NONE unknown) */
} gsd_adopt;

/* Why a task could not be started (gsd_xev.launch_failed). */
enum {
    GSD_XLAUNCH_NONE = 0, /* it started (its exit code is the command's) */
    GSD_XLAUNCH_JOB = 1,  /* this job's launch failed: workdir, command cannot be executed, fork,
                             anything in the job's own directory or log */
    GSD_XLAUNCH_NODE = 2, /* the node cannot launch anything: its run or log directory cannot be
                             created (read-only, full, permissions; gsd_exec_check fails too) */
};

typedef struct gsd_xev {
    gsd_xev_kind kind;
    int64_t job_id;
    int run;
    int task;               /* task index (TASK_*), -1 otherwise */
    const char *handle;     /* the task's handle (TASK_STARTED; TASK_EXITED if it had started) */
    int exit_code;          /* TASK_EXITED: the task's; RUN_DONE: first non-zero, else 0 */
    int failed_task;        /* RUN_DONE: index of the first failed task, -1 if none */
    int lost;               /* the task ended without a known exit status */
    int never_started;      /* RUN_DONE after recovery: no task was ever started */
    int killed;             /* the hard kill was needed */
    int launch_failed;      /* TASK_EXITED: GSD_XLAUNCH_*; RUN_DONE: the worst of its tasks' */
    const char *gpus;       /* TASK_STARTED: the task's GPUs */
    const char *msg;        /* human explanation, may be NULL */
    const char *node;       /* NODE, OUTSIDE: the node's name (as in the cluster) */
    int node_state;         /* NODE: GSD_XNODE_* */
    int count;              /* OUTSIDE: GPUs */
    const gsd_adopt *adopt; /* ADOPT */
    int stop;               /* SUSPENDED: 1 suspend, 0 resume */
    int failed;             /* SUSPENDED: 0 ok, 1 the step failed (msg) */
    int64_t usec;           /* SUSPENDED: wall time of the checkpoint / restore */
} gsd_xev;

typedef void (*gsd_xev_fn)(void *ud, const gsd_xev *ev);

/* ---- capabilities ------------------------------------------------------------------------- */

enum {
    GSD_XCAP_SUSPEND = 1u << 0,   /* suspend / resume a run's tasks (SIGSTOP / SIGCONT) */
    GSD_XCAP_RESIZE = 1u << 1,    /* change a running job's GPUs without a restart */
    GSD_XCAP_MULTINODE = 1u << 2, /* tasks run on the node the cluster names (not all here) */
    GSD_XCAP_ADOPT = 1u << 3,     /* tasks outlive the daemon and are found again (recover) */
    GSD_XCAP_CLUSTER = 1u << 4,   /* the cluster comes from the backend (cluster hook) and it
                                     reports node states and outside use (NODE, OUTSIDE) */
    GSD_XCAP_EXTERNAL = 1u << 5,  /* jobs submitted outside gsched are adopted (ADOPT, GONE,
                                     bind) and final jobs are retired */
    GSD_XCAP_MIXED = 1u << 6,     /* a run's tasks may have different GPU counts (issue 14:
                                     gsd_launch.task_ngpus); without it such a job is refused
                                     at submit */
    GSD_XCAP_CKPT = 1u << 7,      /* suspend frees the job's GPU memory (checkpoint-based: the
                                     CUDA driver moves it to host memory), reported later as
                                     GSD_X_SUSPENDED; without it a suspended job keeps it */
    GSD_XCAP_REMAP = 1u << 8,     /* with CKPT: a resume may move the job to other GPUs of the
                                     node it left (gsd_exec_resume_at) */
};
/* Capabilities that depend on the executor's configuration and the machine (a driver that
 * has the checkpoint API): a backend declares them in its instance hook (gsd_exec_ops.
 * instance_caps), not in its ops table. */
#define GSD_XCAP_RUNTIME (GSD_XCAP_CKPT | GSD_XCAP_REMAP)

/* ---- the ops table a backend provides ------------------------------------------------------- */

/* PATH of a job whose spec does not set it (unless the operator passes the daemon's PATH). */
#define GSD_JOB_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

typedef struct gsd_exec_conf {
    const char *state_dir; /* where the backend may keep files (logs, run records) */
    const char *self_exe;  /* the gsched binary (e.g. for a task shim); NULL = /proc/self/exe */
    /* The operator's allow-list: names of variables of the daemon's environment copied into
     * every task's environment (a name not set there is not passed).  Nothing else of the
     * daemon's environment reaches a task.  NULL / 0 = none.  Read at create. */
    const char *const *pass_env;
    size_t npass_env;
    /* serve --log-cap: the most bytes of output a task's log file may hold; past it the output
     * is discarded after one marker line (0 = no cap).  Backends that keep logs honour it. */
    int64_t log_cap;
    /* serve --log-dir: where task logs go (NULL: state_dir/logs).  Logs of earlier runs that
     * are still under state_dir/logs stay readable. */
    const char *log_dir;
    /* Jobs run as their owners' Unix accounts (gsd_spec.run_as, resolved at launch): the
     * daemon is root and multi-user (ident.h).  0: every task runs as the daemon's user. */
    int switch_users;
    int allow_root; /* with switch_users: an account with uid 0 may run tasks */
    /* Process tracking of the local executor: NULL or "off" (no cgroups: the task shim's
     * process tree), "auto" (a cgroup per task when a cgroup2 hierarchy is writable here,
     * otherwise off), or a cgroup2 directory (an error at create if it cannot be used). */
    const char *cgroup;
    /* Where a backend says once, at create, how it runs tasks, and what went wrong later that
     * no task reports (a process tree it could not kill); NULL = nowhere. */
    void (*log)(void *ud, const char *msg);
    void *log_ud;
    /* A backend with threads of its own calls wake(wake_ud) from any thread when it has
     * something to report: the daemon then polls soon.  NULL = none (poll_within bounds it). */
    void (*wake)(void *ud);
    void *wake_ud;
    /* serve --executor-opt KEY=VALUE (repeatable): backend settings, checked by its create
     * (an unknown key is an error naming the known ones).  NULL / 0 = none. */
    const char *const *opts;
    size_t nopts;
} gsd_exec_conf;

/*
 * Every hook takes the backend's state as created by create().  The hooks
 * mirror the gsd_exec_* calls below (see them for the semantics); suspend
 * is NULL without GSD_XCAP_SUSPEND.  log_path, log_open and task_pid are
 * thread-safe.
 */
typedef struct gsd_exec_ops {
    const char *name;
    const char *desc;
    unsigned caps; /* GSD_XCAP_* */
    int (*create)(const gsd_exec_conf *conf, void **out, gs_diag *d);
    void (*destroy)(void *b);
    int (*launch)(void *b, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud);
    int (*stop)(void *b, int64_t job_id, gs_time now, gs_time grace);
    int (*suspend)(void *b, int64_t job_id, int stop);
    void (*poll)(void *b, gs_time now, gsd_xev_fn fn, void *ud);
    gs_time (*next_deadline)(const void *b);
    gs_time (*poll_within)(const void *b);
    size_t (*nruns)(const void *b);
    int (*has)(const void *b, int64_t job_id);
    void (*kill_now)(void *b, int64_t job_id);
    void (*forget)(void *b, int64_t job_id);
    int (*recover)(void *b, int64_t job_id, int run, int ntasks, gs_time now, int *alive,
                   int *exited, int *lost);
    int (*sweep)(void *b, void (*log)(void *ud, const char *msg), void *ud);
    void (*log_path)(const void *b, int64_t job_id, int task, char *buf, size_t cap);
    int (*log_open)(const void *b, int64_t job_id, int task, int *fd);
    int64_t (*task_pid)(const char *handle);      /* -1 if none */
    int (*check)(void *b, char *why, size_t cap); /* optional; see gsd_exec_check */
    /* optional (NULL: no interactive jobs; gsd_exec_stdin) */
    int (*stdin_write)(void *b, int64_t job_id, const void *buf, size_t len, int eof,
                       size_t *written);
    /* exactly with GSD_XCAP_CLUSTER; see gsd_exec_cluster */
    int (*cluster)(void *b, const gs_cluster *given, gs_cluster **out, gs_diag *d);
    /* exactly with GSD_XCAP_EXTERNAL; see gsd_exec_bind / gsd_exec_retire */
    int (*bind)(void *b, int64_t job_id, const char *ext);
    void (*retire)(void *b, int64_t job_id, const char *ext, int state, const char *why);
    /* optional: the GSD_XCAP_RUNTIME capabilities this instance has (others are ignored);
     * NULL = none.  CKPT needs GSD_XCAP_SUSPEND in caps, REMAP needs CKPT and resume_at. */
    unsigned (*instance_caps)(const void *b);
    /* optional: see gsd_exec_resume_at (NULL: resume on the GPUs it left, suspend(0)) */
    int (*resume_at)(void *b, int64_t job_id, const char *const *task_gpus,
                     const char *const *task_cuda);
} gsd_exec_ops;

/* The registry: a backend by name (NULL if unknown); names "local, ..." for messages. */
const gsd_exec_ops *gsd_exec_find(const char *name);
void gsd_exec_names(char *buf, size_t cap);
/* The backend 'name' (NULL = "local") in *out: 0, or GS_ENOENT (the message lists the known). */
int gsd_exec_lookup(const char *name, const gsd_exec_ops **out, gs_diag *d);
/*
 * The engine mechanisms (GS_MECH_BIT, gsched/engine.h) a backend cannot carry
 * out, for gs_engine_opts.mech_unsupported: suspend and resume without
 * GSD_XCAP_SUSPEND (or a suspend hook), resize without GSD_XCAP_RESIZE.
 */
unsigned gsd_exec_mech_unsupported(const gsd_exec_ops *ops);

/* The backends (exec_local.c, exec_slurm.c when built with libslurm: GSCHED_HAVE_SLURM). */
extern const gsd_exec_ops gsd_exec_local;
extern const gsd_exec_ops gsd_exec_slurm;

/* ---- helpers for backends ------------------------------------------------------------------- */

/* A growing NULL-terminated string vector (malloc'ed strings; aborts when out of memory). */
typedef struct gsd_envv {
    char **v;
    size_t n, cap;
} gsd_envv;
void gsd_envv_push(gsd_envv *e, char *owned);
int gsd_envv_has(const gsd_envv *e, const char *key); /* 1 if "key=..." is there */

struct gsd_unix_user;
/*
 * The part of a task's environment every backend builds the same way (the contract above),
 * appended to env: the operator's allow-list (pass: "KEY=VALUE" strings read at create),
 * the defaults PATH = GSD_JOB_PATH and the HOME, USER, LOGNAME and SHELL of the account the
 * task runs as (u, when it has a name), the spec's env, and gsched's job-level variables
 * (GSCHED_JOB_ID, _GROUP_ID, _JOB_NAME, _USER, _VC, _WORLD_SIZE, _NUM_TASKS, _GPUS,
 * _JOB_DIR = jobdir, _CHECKPOINT_DIR; for an elastic job also _GENERATION, _NUM_GPUS,
 * _CONTROL = jobdir/control.json, _HINTS = jobdir/hints.jsonl and, without a spec
 * checkpoint dir, _CHECKPOINT_DIR = jobdir/checkpoint). A name the spec or gsched sets is never
 * taken from the allow-list or the defaults. The backend adds the per-run and per-task ones (RANK,
 * CUDA_VISIBLE_DEVICES, GSCHED_RUN, ...).
 */
void gsd_exec_env_common(gsd_envv *env, const gsd_launch *l, const char *const *pass, size_t npass,
                         const struct gsd_unix_user *u, const char *jobdir);

/* ---- the calls the daemon makes ------------------------------------------------------------- */

/*
 * Create the executor 'name' (NULL = "local").  GS_ENOENT for an unknown
 * name (the message lists the known ones); the backend's error otherwise.
 */
int gsd_exec_create(const char *name, const gsd_exec_conf *conf, gsd_exec **out, gs_diag *d);
/* The same with a backend that need not be in the registry. */
int gsd_exec_create_ops(const gsd_exec_ops *ops, const gsd_exec_conf *conf, gsd_exec **out,
                        gs_diag *d);
void gsd_exec_destroy(gsd_exec *x);
const gsd_exec_ops *gsd_exec_backend(const gsd_exec *x);
/* 1 if the executor has every capability in caps (GSD_XCAP_*: its table's and, for
 * GSD_XCAP_RUNTIME, its instance's). */
int gsd_exec_can(const gsd_exec *x, unsigned caps);
/* The backend's name ("local", "slurm"). */
const char *gsd_exec_name(const gsd_exec *x);

/*
 * Start every task of a run.  A task that cannot be started is reported as
 * exited (code 126/127 with a message) at the next poll.  Returns 0 or
 * GS_EEXIST (run already registered).
 */
int gsd_exec_launch(gsd_exec *x, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud);
/* Graceful stop now, hard kill at now + grace (an earlier deadline is kept).  GS_ENOENT if
 * unknown. */
int gsd_exec_stop(gsd_exec *x, int64_t job_id, gs_time now, gs_time grace);
/* Suspend (stop=1) or resume (0) every live task of the job (on the GPUs it left).
 * GS_ENOENT if unknown, GS_EUNSUPPORTED without GSD_XCAP_SUSPEND.  With GSD_XCAP_CKPT the
 * work is done later, off the calling thread, and its outcome comes back as GSD_X_SUSPENDED
 * at a poll; calls on the same executor are carried out in the order they were made. */
int gsd_exec_suspend(gsd_exec *x, int64_t job_id, int stop);
/*
 * Resume the job on these GPUs: per task, task_gpus the global indices ("3,4", as in
 * gsd_launch.task_gpus) and task_cuda the node-local ones (as in gsd_launch.task_cuda), in
 * the order of the GPUs it left.  On the GPUs it left this is gsd_exec_suspend(x, job_id, 0);
 * on others of the same node it needs GSD_XCAP_REMAP (GS_EUNSUPPORTED without, nothing done).
 * GS_ENOENT if unknown, GS_EINVAL for a task count or GPU count that differs from its run's.
 */
int gsd_exec_resume_at(gsd_exec *x, int64_t job_id, const char *const *task_gpus,
                       const char *const *task_cuda);
/* Check tasks, send due hard kills, report through fn. */
void gsd_exec_poll(gsd_exec *x, gs_time now, gsd_xev_fn fn, void *ud);
/* Earliest hard-kill deadline, or GS_TIME_MAX. */
gs_time gsd_exec_next_deadline(const gsd_exec *x);
/* Longest the daemon may wait before the next poll (e.g. tasks that are not our children are
 * checked by polling), GS_TIME_MAX if it may wait for a deadline or a wake-up. */
gs_time gsd_exec_poll_within(const gsd_exec *x);
/* Number of registered runs. */
size_t gsd_exec_nruns(const gsd_exec *x);
/* 1 if the job has a registered run. */
int gsd_exec_has(const gsd_exec *x, int64_t job_id);
/* Hard-kill every live task of the job and wait (a few seconds at most) until they are gone. */
void gsd_exec_kill_now(gsd_exec *x, int64_t job_id);
/* Forget a finished run and what the backend keeps for it (after the outcome is committed). */
void gsd_exec_forget(gsd_exec *x, int64_t job_id);
/*
 * Restart recovery: register run 'run' of a job from what the backend kept.
 * Each task is alive, exited (its exit status is known) or lost.  Counts go
 * to *alive, *exited and *lost.  The run is registered even when nothing is
 * alive; the next poll reports RUN_DONE.  Without GSD_XCAP_ADOPT (tasks die
 * with the daemon): GS_EUNSUPPORTED, every task counted lost, nothing
 * registered - the daemon requeues the job instead of adopting it.
 */
int gsd_exec_recover(gsd_exec *x, int64_t job_id, int run, int ntasks, gs_time now, int *alive,
                     int *exited, int *lost);
/*
 * After recovery: kill every task no registered run claims and forget it.
 * Returns the number of tasks killed; 'log' gets one line per action.  0
 * without GSD_XCAP_ADOPT.
 */
int gsd_exec_sweep(gsd_exec *x, void (*log)(void *ud, const char *msg), void *ud);

/*
 * Can the backend launch tasks now (its state directory is writable, ...)?  0, or GS_EIO
 * with the reason in why.  A backend without a check hook: always 0.
 */
int gsd_exec_check(gsd_exec *x, char *why, size_t cap);

/*
 * GSD_XCAP_CLUSTER: the cluster the backend runs on.  given = NULL: build the model (nodes
 * named as the manager names them, their CPUs, memory, GPUs and GPU types, racks from the
 * manager's topology) into *out.  given (the operator's --cluster, e.g. a HiveD config):
 * check that every node of it exists in the manager with at least its GPUs (GS_EINVAL
 * naming each mismatch), *out = NULL.  GS_EUNSUPPORTED without the capability.
 */
int gsd_exec_cluster(gsd_exec *x, const gs_cluster *given, gs_cluster **out, gs_diag *d);
/*
 * GSD_XCAP_EXTERNAL: job_id is the gsched job of the external job 'ext' (an adopted job,
 * after its row is committed; and at restart recovery for every job not final, with ext =
 * its spec's external name or NULL when it has none: "job_id is live", so that the backend's
 * sweep keeps what belongs to it).  The backend no longer reports ADOPT for ext, and launches
 * of job_id use that external job instead of creating one.  0, GS_ENOENT (ext is gone: the daemon
 * cancels the job), GS_EUNSUPPORTED without the capability.
 */
int gsd_exec_bind(gsd_exec *x, int64_t job_id, const char *ext);
/*
 * GSD_XCAP_EXTERNAL: job_id reached a final state (gs_job_state 'state': done, failed,
 * cancelled, rejected; why = its reason) and that is committed: end what the backend keeps
 * for it outside gsched (a held Slurm job is cancelled, with 'why' shown to its owner).
 * ext: the spec's external name, or NULL (a job gsched submitted).  No-op without the
 * capability.
 */
void gsd_exec_retire(gsd_exec *x, int64_t job_id, const char *ext, int state, const char *why);

/* Thread-safe: the log file of a task (does not check that it exists). */
void gsd_exec_log_path(const gsd_exec *x, int64_t job_id, int task, char *buf, size_t cap);
/* Thread-safe: open a task's log for reading.  0 and *fd, or GS_ENOENT (no log yet). */
int gsd_exec_log_open(const gsd_exec *x, int64_t job_id, int task, int *fd);
/* Thread-safe: the process id a handle names, for display; -1 if none. */
int64_t gsd_exec_task_pid(const gsd_exec *x, const char *handle);
/* Interactive jobs (spec 'interactive', gsched run): the backend gives task 0 of such a job
 * a stdin the daemon writes.  gsd_exec_can_stdin: the backend can; gsd_exec_stdin writes up
 * to len bytes without blocking (*written: how many, fewer when the task does not read fast
 * enough) and with eof closes it.  GS_ENOENT no run of the job, GS_ESTATE it has no stdin
 * (closed), GS_EUNSUPPORTED the backend has none.  Scheduler thread. */
int gsd_exec_can_stdin(const gsd_exec *x);
int gsd_exec_stdin(gsd_exec *x, int64_t job_id, const void *buf, size_t len, int eof,
                   size_t *written);

#endif
