/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exec_local.c - the "local" executor (exec.h): runs each task of a job as a
 * process tree on this machine, signals it, notices when it ends, and finds
 * it again after a daemon restart.
 *
 * Process model.  Every task runs under a small shim (`gsched __shim`), a
 * child of the daemon started with setsid(): the shim leads its own session
 * and process group, so the task survives a daemon crash and can be
 * signalled as a group.  The shim forks the command, waits for it and writes
 * its exit status to a status file before exiting with the same code.  The
 * command's stdout and stderr are a pipe the shim drains into the task's log
 * (shimlog.c): at most serve --log-cap bytes are kept, and a log that cannot
 * be written (disk full) never blocks or kills the job.  Its stdin is /dev/null, or for
 * task 0 of an interactive job (gsched run) a pipe whose write end the daemon keeps
 * (non-blocking, close-on-exec, closed at EOF or with the run; local_stdin): no file, so no
 * other account can reach it, and a daemon restart closes it (the task reads EOF).  The status file
 * gets a placeholder when the shim starts, which the exit code overwrites in
 * place if a new file cannot be written then.  A forked child that cannot
 * write its pid file does not start the task (exit 126): a task without one
 * could not be found again after a daemon restart and would run twice.
 * Before exec'ing the shim, the forked child writes "PID STARTTIME" (the
 * process start time from /proc/PID/stat, which guards against PID reuse)
 * to a pid file, so a daemon that dies right after fork() still finds the
 * task on restart.
 *
 * The shim's own environment.  The shim is exec'd with an empty environment, never the job's:
 * in multi-user mode it runs as root, and the dynamic loader and libc of a process read
 * LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, GCONV_PATH, GLIBC_TUNABLES... from its environment
 * (a job setting LD_PRELOAD would run its code as root).  The job's environment (build_env)
 * travels in a memory file (memfd; without one, an unlinked 0600 file in the run directory)
 * the daemon writes before fork and the shim gets as descriptor 3 (--env-fd 3).  The shim
 * reads it, closes it, and installs it only in the command's process after the privilege
 * drop, right before execvp (which searches the job's PATH).  An adopted task never needs it
 * again.  The shim binary is the daemon's own running one: /proc/self/exe, not a path (a
 * binary replaced or deleted after the daemon started is never exec'd as root; serve.c).
 *
 * Files (under the state directory, made absolute at create):
 *   runs/JOB.RUN/task-I.pid       "PID STARTTIME" of task I's shim
 *   runs/JOB.RUN/task-I.status    its exit code, written by the shim ("running" until then):
 *                                 "CODE", or "CODE launch MESSAGE" when the command could
 *                                 not be started at all (not the command's own code)
 * and under the log directory (gsd_exec_conf.log_dir; without one, the state directory's
 * logs/; a log that is not there is read from the state directory's logs/, where logs were
 * kept before the log directory moved out):
 *   JOB/task-I.log                stdout and stderr of task I, every run appended
 *
 * Users (gsd_exec_conf.switch_users: a root daemon in multi-user mode, ident.h).  Each task
 * runs as the job's Unix account, resolved at launch (an account gone or root without
 * allow_root fails the tasks with the reason).  The shim keeps root: it writes the status
 * file the daemon trusts and is the subreaper; its command's process drops to the account's
 * groups, gid and uid right before exec (shim_drop_privileges) and enters the workdir as the
 * user.  The job's directory JOB/ (its logs, GSCHED_JOB_DIR) belongs to the account, mode
 * 0700, its logs 0600; the log directory is 0711 (passable, not listable); runs/ and the
 * state directory stay the daemon's, 0700.  Whatever the account may have put in its
 * directory is opened without following links and only if it is a regular file of its own
 * with one link (log_openat), so the daemon never writes or serves another file through it;
 * at launch something else at a log's name is moved aside (log_open_launch), and a failure
 * there is the job's, never the node's (launch_blame).
 *
 * Stop protocol (preemption, cancel, time limit, failed peer): SIGTERM to
 * every task's process group (plus SIGCONT if it was stopped), once more a
 * second later if the tasks still run (a SIGTERM right after the launch can
 * reach a task before its command exists), then SIGKILL once the grace
 * period is over.  The grace period belongs to the whole
 * task: the shim is a child subreaper and, once it got SIGTERM, waits for
 * every descendant before it exits (a shell running a string command dies
 * of SIGTERM at once while the program it started writes its checkpoint).
 * Suspend (docs/daemon.md, "Suspend"; --executor-opt suspend=auto|cuda|sigstop, cuda_lib=PATH).
 * sigstop: SIGSTOP / SIGCONT to the groups (GPU memory stays held while stopped).  cuda (the
 * driver's checkpoint API, cudackpt.h): suspend = lock + checkpoint every CUDA process of the
 * job's process trees (all or nothing, rolled back on failure), then SIGSTOP; resume = SIGCONT,
 * then restore (with remap pairs when the job moves to other GPUs of this machine) + unlock.
 * The driver calls run on one worker thread, FIFO (op_queue / worker_main); the scheduler
 * thread queues them and collects the outcomes at poll (ops_collect: SIGSTOP after a
 * checkpoint, GSD_X_SUSPENDED), woken by gsd_exec_conf.wake.  A launch onto GPUs still being
 * vacated (a checkpoint in flight, or a failed one whose processes still hold the memory)
 * forks its tasks at once, but each waits before exec'ing the shim until the daemon closes
 * the write end of a gate pipe (open_gates).
 *
 * Process tracking (every process a task starts, also one that left its
 * process group with setsid or a double fork).  With cgroups (`serve
 * --cgroup`, cgroup.c): each task gets BASE/job-J.run-R.task-I, the shim in
 * its shim/ child, the command in job/ (joined before exec); a task ends when
 * its cgroup is empty, and at its end everything in it is killed (the shim
 * kills job/ when the command exits; the daemon kills the whole cgroup at the
 * end of a stop's grace period or when the shim died first); BASE is written
 * to runs/JOB.RUN/cgroup so recovery finds the cgroups again.  Without
 * (proctree.c): the shim, a subreaper, kills its remaining descendants when
 * the command exits; at the end of a grace period the daemon stops the shim,
 * kills its descendants, then its group.  Signals of a stop or a suspend also
 * reach every process of the task (the cgroup's, or the shim's descendants).
 *
 * Task handle: "local:PID:STARTTICKS" (the shim's pid and start time).
 * Capabilities: suspend (SIGSTOP / SIGCONT), adopt (tasks outlive the
 * daemon), with suspend=cuda ckpt (and remap when the driver can); not
 * multi-node (every task runs here, whatever node the cluster names) and no
 * resize.  log_path, log_open and task_pid read only what create() set
 * (thread-safe); the worker thread touches only its queues (under the mutex)
 * and the gsd_cuda; everything else is the scheduler thread's.
 *
 * Invariants:
 *  - the executor never calls the engine: poll reports what happened
 *    through the callback;
 *  - the scheduler thread never waits for the CUDA driver: every driver call is the worker's,
 *    in the order asked; a checkpointed job is SIGSTOPped only when no later operation of its
 *    run is queued (a resume may overtake the report), and SIGCONT always precedes a restore;
 *  - a run stays registered (and its run directory on disk) until the daemon
 *    calls forget after committing the outcome, so a crash in between finds
 *    the status files again;
 *  - between fork() and exec() the child calls only async-signal-safe
 *    functions (the daemon is multi-threaded): no malloc, no stdio;
 *  - a task is "done" exactly once: reaped by waitpid (our child) or found
 *    gone through /proc with its start time checked (adopted after restart),
 *    and, with a cgroup, once that cgroup is empty (TS_DRAIN until then);
 *  - signals always go to the task's process group (-pid), never to a pid
 *    whose start time no longer matches;
 *  - every directory it creates (the state directory, runs/, logs/, a run's)
 *    is mode 0700 whatever the umask, except in multi-user mode the log
 *    directory (0711) and each job's directory (0700, owned by its account);
 *  - in multi-user mode no task code runs with the daemon's ids: only the
 *    shim does, and it runs nothing of the job's before dropping them;
 *  - the shim's environment is empty (nothing of the job's reaches a process running with
 *    the daemon's ids); the job's environment reaches only the command, through --env-fd;
 *  - a task's environment holds only gsched's variables, the spec's env, the
 *    operator's allow-list (gsd_exec_conf.pass_env) and fixed defaults (PATH,
 *    the HOME... of the account it runs as): never the rest of the daemon's
 *    environment.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cudackpt.h"
#include "daemon.h"
#include "exec.h"
#include "exec_local.h"
#include "proctree.h"
#include "shimlog.h"
#include "ident.h"

extern char **environ;

/* TS_DRAIN: the shim is gone (exit code known) but the task's cgroup still has processes */
enum { TS_IDLE = 0, TS_RUN = 1, TS_DONE = 2, TS_DRAIN = 3 };

typedef struct xtask {
    int64_t pid, ticks;
    int state;
    int child; /* started by this process: reaped with waitpid */
    int exit_code;
    int lost;
    int reported;
    int launch; /* GSD_XLAUNCH_*: the task could not be started (not the command's own code) */
    char *gpus; /* global GPU indices "3,4" (NULL: unknown, a run found again after a restart) */
    char *cuda; /* the same as node-local indices (CUDA_VISIBLE_DEVICES), NULL: unknown */
    char *vac;  /* GPUs it left by a resume onto others while its checkpoint still ran (its
                   memory is there until the checkpoint is done), NULL none */
    char *cg;   /* the task's cgroup directory, NULL without cgroups */
    char msg[256];
} xtask;

typedef struct xrun {
    int64_t job_id;
    int run, ntasks;
    xtask *t;
    gs_time grace;
    gs_time kill_at;    /* GS_TIME_MAX = none */
    gs_time term_again; /* a stop's second SIGTERM (GS_TIME_MAX = none): see local_stop */
    int stopping, killed, suspended;
    int failed_task, first_code;
    int done_reported;
    int never_started;
    char *cgbase; /* where its tasks' cgroups are (runs/JOB.RUN/cgroup), NULL = none */
    int stdin_fd; /* an interactive job (gsched run): the non-blocking write end of task 0's
                     stdin pipe, -1 when none or closed (EOF given) */
    /* checkpoint-based suspend (suspend=cuda; see "Suspend" above) */
    int ops;         /* worker operations queued or running for this run */
    int susp_ops;    /* ... of which suspends: its GPUs are being vacated */
    int susp_seen;   /* suspended through the worker at least once (its resumes are reported) */
    int ckpt;        /* its last suspend checkpointed CUDA processes (GPU memory freed) */
    int ckpt_failed; /* its last suspend failed: its processes keep their GPU memory */
    int gate_fd;     /* launch deferred until GPUs are vacated: the write end of the pipe its
                        forked children wait on (closing it starts them), -1 none */
    double gate_since;
} xrun;

/* A checkpoint or restore for the worker thread (suspend=cuda).  The scheduler thread fills
 * the request and queues it; the worker fills the result and moves it to the done list. */
typedef struct xop {
    struct xop *next;
    int64_t job_id;
    int run;
    int stop;     /* 1 checkpoint (suspend), 0 restore (resume) */
    int report;   /* resume: report even when nothing was restored */
    pid_t *roots; /* the tasks' shims (their process trees are the job's processes) */
    int nroots;
    int *from, *to; /* resume: move GPUs (node-local indices), nremap pairs */
    size_t nremap;
    int rc; /* 0, or the gsd_cuda_* error */
    gsd_cuda_result res;
} xop;

enum { SUSP_SIGSTOP = 0, SUSP_CUDA = 1 };

/* How long a lock waits for the CUDA work in flight of each process (cuCheckpointProcessLock's
 * timeout): a process that does not reach a lockable point by then is not suspended (the
 * suspend fails and falls back to the stop protocol) rather than holding the worker forever. */
#define GSD_CKPT_LOCK_TIMEOUT_MS 10000u

typedef struct xlocal {
    char *dir, *runs, *logs, *self;
    char *old_logs; /* state_dir/logs when logs are elsewhere: logs of earlier versions, read */
    char **pass;    /* "NAME=VALUE" of the allow-listed daemon variables that were set at create */
    size_t npass;
    int64_t log_cap; /* serve --log-cap: bytes a task's log may hold (0 = no cap), for the shim */
    int switch_users, allow_root; /* gsd_exec_conf: tasks run as their owners' accounts */
    gsd_cg cg;                    /* process tracking: cgroups in use when cg.base[0] (cgroup.h) */
    void (*log)(void *ud, const char *msg); /* gsd_exec_conf.log: the daemon's log (or NULL) */
    void *log_ud;
    xrun **v;
    size_t n, cap;
    double pid_wait_until; /* recovery: wait for missing pid files until then (one deadline) */
    /* suspend=cuda: the driver (used by the worker thread only, after create), the worker and
     * its queues (under mu; the worker touches nothing else of the executor) */
    int susp;       /* SUSP_* */
    gsd_cuda *cuda; /* NULL with SUSP_SIGSTOP */
    int can_remap;
    void (*wake)(void *ud); /* gsd_exec_conf.wake */
    void *wake_ud;
    pthread_t worker;
    int worker_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int quit;           /* under mu: the worker ends */
    xop *qhead, *qtail; /* under mu: FIFO of requests */
    xop *dhead, *dtail; /* under mu: done, for the next poll */
} xlocal;

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p) abort();
    return p;
}

/* One directory, 'mode' (0700, or 0711 for the log directory of a multi-user daemon) whatever
 * the umask when this call creates it (the state directory holds every job's pid files); an
 * existing one is left as it is. */
static int mkdir_mode(const char *dir, mode_t mode)
{
    if (mkdir(dir, mode) == 0) return chmod(dir, mode);
    return errno == EEXIST ? 0 : -1;
}

static int mkdir_p_mode(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir_mode(buf, mode)) return -1;
        *p = '/';
    }
    return mkdir_mode(buf, mode);
}

static int mkdir_p(const char *path)
{
    return mkdir_p_mode(path, 0700);
}

static void local_destroy(void *b);

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p) abort();
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* ---- users and per-job directories (privilege separation) --------------------------------- */

/*
 * Multi-user mode (switch_users): the log directory is 0711 (jobs may pass through to their
 * own directory in it; nobody but the daemon may list it); the state directory and its runs/
 * (pid and status files: the daemon's trusted bookkeeping) stay 0700.  Single-user: 0700.
 */
/* chmod only when needed: a state directory on a read-only file system with the right modes
 * still starts (drained until it is writable, drain.c), not refused at start */
static int chmod_if(const char *path, mode_t mode)
{
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 07777) == mode) return 0;
    return chmod(path, mode);
}

static int state_modes(const xlocal *x)
{
    if (x->switch_users && chmod_if(x->logs, 0711)) return -1;
    return chmod_if(x->runs, 0700);
}

/* The job's own directory logs/JOB (its task logs; GSCHED_JOB_DIR): owned by the task's
 * account, mode 0700.  logs/ belongs to the daemon, so the account cannot swap the entry
 * for a link.  An open O_DIRECTORY descriptor, or -1 with errno set. */
static int job_dir_open(const xlocal *x, int64_t job_id, const gsd_unix_user *u)
{
    char name[32];
    snprintf(name, sizeof name, "%lld", (long long)job_id);
    int lfd = open(x->logs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd < 0) return -1;
    if (mkdirat(lfd, name, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        close(lfd);
        errno = e;
        return -1;
    }
    int dfd = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(lfd);
    if (dfd < 0) {
        errno = e;
        return -1;
    }
    if ((u->uid != geteuid() && fchown(dfd, u->uid, u->gid) != 0) || fchmod(dfd, 0700) != 0) {
        e = errno;
        close(dfd);
        errno = e;
        return -1;
    }
    return dfd;
}

/*
 * Open a task's log in the job's directory (dfd) without trusting what its account may have
 * put there: no link is followed, and the file must be a regular file with a single link,
 * owned by the account (or by the daemon: created now, or by an older gsched).  write:
 * append, create 0600 and give it to the account (uid/gid).  A descriptor, or -1 with errno
 * set (EPERM: something else was there).
 */
static int log_openat(int dfd, int task, int write, uid_t uid, gid_t gid)
{
    char name[32];
    snprintf(name, sizeof name, "task-%d.log", task);
    int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    flags |= write ? O_WRONLY | O_APPEND | O_CREAT : O_RDONLY;
    int fd = openat(dfd, name, flags, 0600);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        (st.st_uid != uid && st.st_uid != geteuid())) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    if (write && st.st_uid != uid && fchown(fd, uid, gid) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/*
 * Open a task's log for a launch, recovering from what the job may have put at its name (its
 * directory is its own: a link, a directory, a FIFO, someone else's file): the entry is moved
 * aside to task-I.log.replaced-RUN (renameat moves the name, never what a link points to) and
 * a fresh log is made, which says so.  A descriptor, or -1 with errno set (the job's failure
 * unless the daemon's own directories fail too: launch_blame).
 */
static int log_open_launch(int dfd, int task, int run, uid_t uid, gid_t gid)
{
    int fd = log_openat(dfd, task, 1, uid, gid);
    if (fd >= 0 || errno == ENOSPC || errno == EROFS || errno == EDQUOT || errno == EIO ||
        errno == ENOMEM || errno == EMFILE || errno == ENFILE)
        return fd;
    char name[32], aside[64];
    snprintf(name, sizeof name, "task-%d.log", task);
    snprintf(aside, sizeof aside, "task-%d.log.replaced-%d", task, run);
    if (renameat(dfd, name, dfd, aside) != 0) {
        errno = EPERM;
        return -1;
    }
    fd = log_openat(dfd, task, 1, uid, gid);
    if (fd >= 0)
        dprintf(fd,
                "=== gsched: the task's log was replaced by something that is not a regular "
                "file of the job's own; moved aside to %s, this is a new log ===\n",
                aside);
    return fd;
}

/* Multi-user mode: jobs reach their directory LOGDIR/JOB (GSCHED_JOB_DIR, and the workdir of
 * a job whose account has no home) only through every directory above it.  One that others
 * may not pass (the log directory itself is made 0711 by state_modes; the directories this
 * daemon creates are 0711) gets a warning at start naming it and the fix. */
static void logs_reach_warn(const char *logs, void (*log)(void *, const char *), void *ud)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", logs);
    for (char *c = p + 1;; c++) {
        int end = *c == '\0';
        if (*c != '/' && !end) continue;
        *c = '\0';
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH) &&
            strcmp(p, logs)) {
            char m[PATH_MAX + 512];
            snprintf(m, sizeof m,
                     "warning: '%s' (mode %04o) cannot be passed by other users: jobs cannot "
                     "reach their directory under the log directory '%s' (GSCHED_JOB_DIR; the "
                     "workdir of a job whose user has no home) - give it o+x (chmod 0711; the "
                     "systemd unit: LogsDirectoryMode=0711) or choose another --log-dir",
                     p, (unsigned)(st.st_mode & 07777), logs);
            log(ud, m);
        }
        if (end) break;
        *c = '/';
    }
}

/* Paths are made absolute once the directories exist (log paths are shown to clients). */
static void *worker_main(void *arg);

#define LOCAL_OPTS "suspend=auto|cuda|sigstop, cuda_lib=PATH"

/* --executor-opt: suspend=auto|cuda|sigstop (*susp: -1 auto), cuda_lib=PATH.  0, or GS_EINVAL
 * with the message in d. */
static int local_opts(const gsd_exec_conf *conf, int *susp, const char **lib, gs_diag *d)
{
    *susp = -1;
    *lib = NULL;
    for (size_t i = 0; i < conf->nopts; i++) {
        const char *o = conf->opts[i], *eq = strchr(o, '=');
        size_t kl = eq ? (size_t)(eq - o) : strlen(o);
        const char *v = eq ? eq + 1 : NULL;
        if (kl == 7 && !strncmp(o, "suspend", kl) && v) {
            if (!strcmp(v, "auto"))
                *susp = -1;
            else if (!strcmp(v, "cuda"))
                *susp = SUSP_CUDA;
            else if (!strcmp(v, "sigstop"))
                *susp = SUSP_SIGSTOP;
            else
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "executor local: suspend=%s: expected auto, cuda or sigstop", v);
        } else if (kl == 8 && !strncmp(o, "cuda_lib", kl) && v) {
            if (!*v)
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "executor local: cuda_lib=: expected the path (or name) of "
                                   "the CUDA driver library");
            *lib = v;
        } else {
            return gs_diag_set(
                d, GS_EINVAL, 0, 0,
                "executor local: unknown --executor-opt '%s' (known: " LOCAL_OPTS ")", o);
        }
    }
    return 0;
}

/* suspend=auto|cuda: open the driver's checkpoint API and start the worker.  auto without it:
 * SIGSTOP, with a log line saying why.  0, or GS_EINVAL (cuda without it) in d. */
static int suspend_setup(xlocal *x, const gsd_exec_conf *conf, int susp, const char *lib,
                         gs_diag *d)
{
    char why[512] = "", msg[768];
    x->susp = SUSP_SIGSTOP;
    if (susp == SUSP_SIGSTOP) {
        if (conf->log)
            conf->log(conf->log_ud, "suspend: SIGSTOP (suspend=sigstop): a suspended job's GPU "
                                    "memory stays held");
        return 0;
    }
    int rc = gsd_cuda_open(lib, &x->cuda, why, sizeof why);
    if (rc) {
        x->cuda = NULL;
        if (susp == SUSP_CUDA)
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "executor local: suspend=cuda: no CUDA checkpoint API: %s",
                               why[0] ? why : gs_strerror(rc));
        if (conf->log) {
            snprintf(msg, sizeof msg,
                     "suspend: SIGSTOP, a suspended job's GPU memory stays held (no CUDA "
                     "checkpoint API: %s)",
                     why[0] ? why : gs_strerror(rc));
            conf->log(conf->log_ud, msg);
        }
        return 0;
    }
    x->susp = SUSP_CUDA;
    x->can_remap = gsd_cuda_can_remap(x->cuda);
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    if (pthread_create(&x->worker, NULL, worker_main, x) != 0) {
        gsd_cuda_close(x->cuda);
        x->cuda = NULL;
        x->susp = SUSP_SIGSTOP;
        return gs_diag_set(d, GS_EINVAL, 0, 0, "executor local: cannot start the worker thread");
    }
    x->worker_on = 1;
    if (conf->log) {
        int v = gsd_cuda_version(x->cuda);
        snprintf(msg, sizeof msg,
                 "suspend: CUDA checkpoint (driver API %d.%d%s): a suspended job's GPU memory is "
                 "moved to host memory and freed",
                 v / 1000, v % 1000 / 10, x->can_remap ? ", resume may move GPUs" : "");
        conf->log(conf->log_ud, msg);
    }
    return 0;
}

static int local_create(const gsd_exec_conf *conf, void **out, gs_diag *d)
{
    int susp;
    const char *cuda_lib;
    if (local_opts(conf, &susp, &cuda_lib, d)) return GS_EINVAL;
    xlocal *x = calloc(1, sizeof *x);
    if (!x) abort();
    x->wake = conf->wake;
    x->wake_ud = conf->wake_ud;
    x->self = xstrdup(conf->self_exe ? conf->self_exe : "/proc/self/exe");
    x->log_cap = conf->log_cap > 0 ? conf->log_cap : 0;
    x->log = conf->log;
    x->log_ud = conf->log_ud;
    if (conf->npass_env) {
        x->pass = calloc(conf->npass_env, sizeof *x->pass);
        if (!x->pass) abort();
    }
    for (size_t k = 0; k < conf->npass_env; k++) {
        const char *name = conf->pass_env[k], *val = name ? getenv(name) : NULL;
        if (!val) continue; /* not set in the daemon: not passed */
        size_t n = strlen(name) + strlen(val) + 2;
        char *e = malloc(n);
        if (!e) abort();
        snprintf(e, n, "%s=%s", name, val);
        x->pass[x->npass++] = e;
    }
    x->runs = path_join(conf->state_dir, "runs");
    x->logs = conf->log_dir ? xstrdup(conf->log_dir) : path_join(conf->state_dir, "logs");
    if (mkdir_p(x->runs)) {
        int e = errno;
        local_destroy(x);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot create state directory '%s': %s",
                           conf->state_dir, strerror(e));
    }
    if (mkdir_p_mode(x->logs, conf->switch_users ? 0711 : 0700)) {
        int e = errno;
        gs_diag_set(d, GS_EIO, 0, 0, "cannot create log directory '%s': %s", x->logs, strerror(e));
        local_destroy(x);
        return GS_EIO;
    }
    x->dir = realpath(conf->state_dir, NULL);
    if (x->dir) {
        free(x->runs);
        x->runs = path_join(x->dir, "runs");
    } else {
        x->dir = xstrdup(conf->state_dir);
    }
    char *abs = realpath(x->logs, NULL);
    if (abs) {
        free(x->logs);
        x->logs = abs;
    }
    char *old = path_join(x->dir, "logs");
    struct stat st;
    if (strcmp(old, x->logs) && stat(old, &st) == 0 && S_ISDIR(st.st_mode))
        x->old_logs = old;
    else
        free(old);
    x->switch_users = conf->switch_users;
    x->allow_root = conf->allow_root;
    if (x->switch_users && conf->log) logs_reach_warn(x->logs, conf->log, conf->log_ud);
    if (state_modes(x)) {
        int e = errno;
        local_destroy(x);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot set the mode of state directory '%s': %s",
                           conf->state_dir, strerror(e));
    }
    char msg[1024];
    if (gsd_cg_setup(&x->cg, conf->cgroup, x->dir, msg, sizeof msg)) {
        local_destroy(x);
        return gs_diag_set(d, GS_EINVAL, 0, 0, "%s", msg);
    }
    if (conf->log) {
        gsd_cg_describe(&x->cg, msg, sizeof msg);
        conf->log(conf->log_ud, msg);
    }
    if (suspend_setup(x, conf, susp, cuda_lib, d)) {
        local_destroy(x);
        return GS_EINVAL;
    }
    *out = x;
    return 0;
}

static void op_free(xop *op)
{
    if (!op) return;
    free(op->roots);
    free(op->from);
    free(op->to);
    free(op);
}

static void op_list_free(xop *op)
{
    while (op) {
        xop *n = op->next;
        op_free(op);
        op = n;
    }
}

static void run_free(xrun *r)
{
    if (!r) return;
    if (r->gate_fd >= 0) close(r->gate_fd);
    for (int i = 0; i < r->ntasks; i++) {
        free(r->t[i].cuda);
        free(r->t[i].vac);
        free(r->t[i].gpus);
        free(r->t[i].cg);
    }
    free(r->t);
    free(r->cgbase);
    if (r->stdin_fd >= 0) close(r->stdin_fd);
    free(r);
}

static void local_destroy(void *b)
{
    xlocal *x = b;
    if (!x) return;
    if (x->worker_on) {
        /* the operation under way is finished (a driver call cannot be interrupted); the
         * queued ones are dropped: their jobs are recovered by the next daemon */
        pthread_mutex_lock(&x->mu);
        x->quit = 1;
        pthread_cond_signal(&x->cv);
        pthread_mutex_unlock(&x->mu);
        pthread_join(x->worker, NULL);
        op_list_free(x->qhead);
        op_list_free(x->dhead);
        pthread_mutex_destroy(&x->mu);
        pthread_cond_destroy(&x->cv);
    }
    if (x->cuda) gsd_cuda_close(x->cuda);
    for (size_t i = 0; i < x->n; i++) run_free(x->v[i]);
    free(x->v);
    free(x->dir);
    free(x->runs);
    free(x->logs);
    free(x->old_logs);
    free(x->self);
    for (size_t i = 0; i < x->npass; i++) free(x->pass[i]);
    free(x->pass);
    if (x->cg.own_base) rmdir(x->cg.base); /* only when no task cgroup is left in it */
    free(x);
}

static xrun *find_run(const xlocal *x, int64_t job_id)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i]->job_id == job_id) return x->v[i];
    return NULL;
}

static int local_has(const void *b, int64_t job_id)
{
    const xlocal *x = b;
    return find_run(x, job_id) != NULL;
}

static size_t local_nruns(const void *b)
{
    const xlocal *x = b;
    return x->n;
}

static xrun *add_run(xlocal *x, int64_t job_id, int run, int ntasks)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 16;
        xrun **nv = realloc(x->v, x->cap * sizeof *nv);
        if (!nv) abort();
        x->v = nv;
    }
    xrun *r = calloc(1, sizeof *r);
    if (!r) abort();
    r->job_id = job_id;
    r->run = run;
    r->ntasks = ntasks;
    r->t = calloc((size_t)ntasks, sizeof *r->t);
    if (!r->t) abort();
    r->stdin_fd = -1;
    r->gate_fd = -1;
    r->kill_at = GS_TIME_MAX;
    r->term_again = GS_TIME_MAX;
    r->failed_task = -1;
    x->v[x->n++] = r;
    return r;
}

/* Where a task's log is written (launch). */
static void log_file(const xlocal *x, int64_t job_id, int task, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%lld/task-%d.log", x->logs, (long long)job_id, task);
}

/* Where a task's log is read: its file in the log directory or, for a job that ran before the
 * logs moved out of the state directory, the old one there. */
static void local_log_path(const void *b, int64_t job_id, int task, char *buf, size_t cap)
{
    const xlocal *x = b;
    log_file(x, job_id, task, buf, cap);
    if (x->old_logs && access(buf, F_OK) != 0) {
        char old[PATH_MAX];
        snprintf(old, sizeof old, "%s/%lld/task-%d.log", x->old_logs, (long long)job_id, task);
        if (access(old, F_OK) == 0) snprintf(buf, cap, "%s", old);
    }
}

/* A task's handle: "local:PID:STARTTICKS". */
static void local_handle(char *buf, size_t cap, int64_t pid, int64_t ticks)
{
    snprintf(buf, cap, "local:%lld:%lld", (long long)pid, (long long)ticks);
}

static void run_dir(const xlocal *x, int64_t job_id, int run, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%lld.%d", x->runs, (long long)job_id, run);
}

static double mono_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- /proc ---------------------------------------------------------------------------------- */

/* Parse the state and start time out of a /proc/PID/stat text (async-signal-safe). */
static int64_t parse_stat(const char *buf, ssize_t n, char *state)
{
    ssize_t rp = -1;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == ')') rp = i;
    if (rp < 0) return -1;
    /* after ") ": field 3 (state) is token 1, field 22 (starttime) token 20 */
    int tok = 0;
    int64_t v = -1;
    for (ssize_t i = rp + 1; i < n; i++) {
        if (buf[i] == ' ') {
            tok++;
            continue;
        }
        if (tok == 1 && state) *state = buf[i];
        if (tok == 20) {
            v = 0;
            while (i < n && buf[i] >= '0' && buf[i] <= '9') v = v * 10 + (buf[i++] - '0');
            return v;
        }
    }
    return -1;
}

int64_t gsd_proc_start_ticks(int64_t pid, char *state)
{
    char path[64], buf[1024];
    if (pid <= 0) return -1;
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    return parse_stat(buf, n, state);
}

/* 1 if the process is alive, not a zombie, and started at 'ticks'. */
static int alive(int64_t pid, int64_t ticks)
{
    char st = '?';
    int64_t t = gsd_proc_start_ticks(pid, &st);
    return t >= 0 && t == ticks && st != 'Z' && st != 'X';
}

/* ---- process tracking (cgroup.c with cgroups, proctree.c without) -------------------------- */

/* runs/JOB.RUN/cgroup: the base directory of the run's task cgroups (absent without). */
static void cgbase_file(const xlocal *x, int64_t job_id, int run, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%lld.%d/cgroup", x->runs, (long long)job_id, run);
}

static char *read_cgbase(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) return NULL;
    char line[PATH_MAX];
    char *r = fgets(line, sizeof line, f);
    fclose(f);
    if (!r) return NULL;
    line[strcspn(line, "\n")] = '\0';
    return line[0] == '/' ? xstrdup(line) : NULL;
}

/* Every task's cgroup directory, from r->cgbase. */
static void set_task_cgroups(xrun *r)
{
    for (int i = 0; r->cgbase && i < r->ntasks; i++) {
        char p[PATH_MAX];
        gsd_cg_task_dir(r->cgbase, r->job_id, r->run, i, p, sizeof p);
        free(r->t[i].cg);
        r->t[i].cg = xstrdup(p);
    }
}

/* sig to every process of a live task besides its process group: those in its cgroup's job/
 * (also the ones that left the group), or without cgroups every descendant of its shim. */
static void signal_tracked(const xtask *t, int sig)
{
    if (t->cg) {
        char j[PATH_MAX];
        snprintf(j, sizeof j, "%s/job", t->cg);
        gsd_cg_signal(j, sig);
        return;
    }
    pid_t v[4096];
    long n = gsd_proc_descendants((pid_t)t->pid, v, sizeof v / sizeof *v);
    for (long k = 0; k < n && k < (long)(sizeof v / sizeof *v); k++) kill(v[k], sig);
}

/* The shim of t is gone and its exit code is known: the task is done - or, while its cgroup
 * still has processes, drains (TS_DRAIN): they are killed now, unless a stop's grace period is
 * running (then at its end).  The cgroup is removed once empty. */
static void task_gone(const xlocal *x, const xrun *r, xtask *t)
{
    if (t->cg && gsd_cg_populated(t->cg) == 1) {
        t->state = TS_DRAIN;
        if (!r->stopping || r->killed) gsd_cg_kill(t->cg, x->cg.force_freeze);
        return;
    }
    t->state = TS_DONE;
    if (t->cg) gsd_cg_remove(t->cg);
}

/* ---- checkpoint-based suspend: the worker thread -------------------------------------------- */

static void signal_run(xrun *r, int sig);

/* Every process below root (root excluded), up to cap, from the kernel's children lists
 * (/proc/PID/task/TID/children, breadth first): a shim is a subreaper, so every process its
 * task started is below it.  (A walk of /proc can miss processes while others are forked.)
 * Without those lists (a kernel without CONFIG_PROC_CHILDREN): the /proc walk. */
static long tree_pids(pid_t root, pid_t *out, long cap)
{
    long n = 0, files = 0;
    for (long at = -1; at < n; at++) {
        pid_t p = at < 0 ? root : out[at];
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/task", (long)p);
        DIR *dp = opendir(path);
        if (!dp) continue;
        struct dirent *de;
        while ((de = readdir(dp))) {
            if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
            char f[320], buf[8192];
            snprintf(f, sizeof f, "%s/%s/children", path, de->d_name);
            FILE *cf = fopen(f, "re");
            if (!cf) continue;
            files++;
            size_t got = fread(buf, 1, sizeof buf - 1, cf);
            fclose(cf);
            buf[got] = '\0';
            for (char *q = buf; *q;) {
                char *e;
                long c = strtol(q, &e, 10);
                if (e == q) break;
                if (c > 0 && n < cap) out[n++] = (pid_t)c;
                q = e;
            }
        }
        closedir(dp);
    }
    if (!files) {
        long k = gsd_proc_descendants(root, out, (size_t)cap);
        return k < 0 ? 0 : k < cap ? k : cap;
    }
    return n;
}

/* The worker's part of an operation: the CUDA processes of the job's process trees (those the
 * driver knows: running ones for a checkpoint, checkpointed ones for a restore, locked ones for
 * an unlock), then one all-or-nothing gsd_cuda_suspend or gsd_cuda_resume over them.  A job with
 * none: nothing to do (count 0, its tasks are only signalled). */
static void op_run(xlocal *x, xop *op)
{
    double t0 = mono_sec();
    int *pids = NULL, *locked = NULL, stayed = 0;
    size_t n = 0, cap = 0, nl = 0, capl = 0, nrun = 0;
    for (int i = 0; i < op->nroots; i++) {
        pid_t v[4096];
        long k = tree_pids(op->roots[i], v, sizeof v / sizeof *v);
        for (long j = 0; j < k; j++) {
            int st = gsd_cuda_state(x->cuda, (int)v[j]);
            /* a resume also unlocks a process left locked by a checkpoint cut short (a daemon
             * that died between the lock and the checkpoint): its CUDA calls block until then */
            int **lv = &pids;
            size_t *ln = &n, *lc = &cap;
            if (!op->stop && st == GSD_CUDA_RUNNING && !nrun++) stayed = (int)v[j];
            if (!op->stop && st == GSD_CUDA_LOCKED) {
                lv = &locked;
                ln = &nl;
                lc = &capl;
            } else if (st != (op->stop ? GSD_CUDA_RUNNING : GSD_CUDA_CHECKPOINTED)) {
                continue;
            }
            if (*ln == *lc) {
                *lc = *lc ? *lc * 2 : 16;
                int *nv = realloc(*lv, *lc * sizeof *nv);
                if (!nv) abort();
                *lv = nv;
            }
            (*lv)[(*ln)++] = (int)v[j];
        }
    }
    memset(&op->res, 0, sizeof op->res);
    if (!n)
        op->rc = 0;
    else if (op->stop)
        op->rc = gsd_cuda_suspend(x->cuda, pids, n, GSD_CKPT_LOCK_TIMEOUT_MS, &op->res);
    else
        op->rc = gsd_cuda_resume(x->cuda, pids, n, op->from, op->to, op->nremap, &op->res);
    if (nl) {
        gsd_cuda_result ur;
        int urc = gsd_cuda_unlock(x->cuda, locked, nl, &ur);
        if (urc) {
            size_t len = strlen(op->res.msg);
            snprintf(op->res.msg + len, sizeof op->res.msg - len, "%s%s", len ? "; " : "",
                     ur.msg[0] ? ur.msg : gs_strerror(urc));
            if (!op->rc) op->rc = urc;
        }
    }
    if (op->nremap && nrun) {
        /* a move, but processes that were never checkpointed (the checkpoint failed after the
         * resume was asked for, or they appeared since) still run on the GPUs it left: the move
         * cannot be carried out (the daemon stops the job) */
        size_t len = strlen(op->res.msg);
        snprintf(op->res.msg + len, sizeof op->res.msg - len,
                 "%scannot move to other GPUs: %zu CUDA process(es) not checkpointed (pid %d) "
                 "still run on the GPUs it left",
                 len ? "; " : "", nrun, stayed);
        if (!op->rc) op->rc = GS_EIO;
    } else if (op->nremap && !n) {
        /* a move of a job without a checkpointed CUDA process (none yet, or its tasks still
         * wait for their GPUs): nothing carries it over - its tasks see the GPUs they were
         * started on (CUDA_VISIBLE_DEVICES) and would use those the next time they touch
         * CUDA.  The move cannot be carried out (the daemon stops and requeues the job). */
        snprintf(op->res.msg, sizeof op->res.msg,
                 "cannot move to other GPUs: no checkpointed CUDA process to carry over (its "
                 "tasks still see the GPUs they were started on)");
        if (!op->rc) op->rc = GS_EIO;
    }
    if (op->rc && !op->res.msg[0])
        snprintf(op->res.msg, sizeof op->res.msg, "%s", gs_strerror(op->rc));
    op->res.nproc = (int)(n + nl);
    op->res.usec = (int64_t)((mono_sec() - t0) * 1e6);
    free(pids);
    free(locked);
}

/* One thread does every driver call, in the order they were asked for (FIFO: a resume on GPUs
 * another job is leaving runs after that job's checkpoint); the scheduler thread only queues
 * and collects (local_poll), so it never waits for the driver. */
static void *worker_main(void *arg)
{
    xlocal *x = arg;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        while (!x->qhead && !x->quit) pthread_cond_wait(&x->cv, &x->mu);
        if (x->quit) break;
        xop *op = x->qhead;
        x->qhead = op->next;
        if (!x->qhead) x->qtail = NULL;
        pthread_mutex_unlock(&x->mu);
        op_run(x, op);
        pthread_mutex_lock(&x->mu);
        op->next = NULL;
        if (x->dtail)
            x->dtail->next = op;
        else
            x->dhead = op;
        x->dtail = op;
        pthread_mutex_unlock(&x->mu);
        if (x->wake) x->wake(x->wake_ud);
        pthread_mutex_lock(&x->mu);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* Queue an operation on r for the worker (its roots: the shims of r's live tasks). */
static void op_queue(xlocal *x, xrun *r, int stop, int report, int *from, int *to, size_t nremap)
{
    xop *op = calloc(1, sizeof *op);
    if (!op) abort();
    op->job_id = r->job_id;
    op->run = r->run;
    op->stop = stop;
    op->report = report;
    op->from = from;
    op->to = to;
    op->nremap = nremap;
    op->roots = calloc((size_t)r->ntasks + 1, sizeof *op->roots);
    if (!op->roots) abort();
    for (int i = 0; i < r->ntasks; i++) {
        xtask *t = &r->t[i];
        if (t->state != TS_RUN || t->pid <= 0) continue;
        if (!t->child && !alive(t->pid, t->ticks)) continue;
        op->roots[op->nroots++] = (pid_t)t->pid;
    }
    r->ops++;
    if (stop) r->susp_ops++;
    pthread_mutex_lock(&x->mu);
    if (x->qtail)
        x->qtail->next = op;
    else
        x->qhead = op;
    x->qtail = op;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

/* 1 when the GPU lists "3,4" a and b share a GPU. */
static int gpus_overlap(const char *a, const char *b)
{
    if (!a || !b) return 0;
    for (const char *p = a; *p;) {
        char *e;
        long g = strtol(p, &e, 10);
        if (e == p) break;
        for (const char *q = b; *q;) {
            char *f;
            long h = strtol(q, &f, 10);
            if (f == q) break;
            if (g == h) return 1;
            q = *f == ',' ? f + 1 : f;
        }
        p = *e == ',' ? e + 1 : e;
    }
    return 0;
}

static int run_live(const xrun *r)
{
    for (int i = 0; i < r->ntasks; i++)
        if (r->t[i].state == TS_RUN || r->t[i].state == TS_DRAIN) return 1;
    return 0;
}

/* Are r's GPUs being vacated: a checkpoint of it in flight, or its last one failed and it was
 * not resumed since (its processes hold their GPU memory until they are gone: the daemon stops
 * them, and their grace period counts too)? */
static int vacating(const xrun *r)
{
    return run_live(r) && (r->susp_ops > 0 || r->ckpt_failed);
}

/* The run (other than self) still vacating one of 'gpus', or NULL. */
static const xrun *vacating_on(const xlocal *x, const xrun *self, const char *gpus)
{
    for (size_t i = 0; i < x->n; i++) {
        const xrun *r = x->v[i];
        if (r == self || !vacating(r)) continue;
        for (int k = 0; k < r->ntasks; k++)
            if (gpus_overlap(r->t[k].gpus, gpus) || gpus_overlap(r->t[k].vac, gpus)) return r;
    }
    return NULL;
}

static const xrun *run_blocked_by(const xlocal *x, const xrun *r)
{
    for (int k = 0; k < r->ntasks; k++) {
        const xrun *o = vacating_on(x, r, r->t[k].gpus);
        if (o) return o;
    }
    return NULL;
}

/* Deferred launches whose GPUs are vacated now: their tasks start (the gate closes). */
static void open_gates(xlocal *x)
{
    for (size_t i = 0; i < x->n; i++) {
        xrun *r = x->v[i];
        if (r->gate_fd < 0 || run_blocked_by(x, r)) continue;
        close(r->gate_fd);
        r->gate_fd = -1;
        if (x->log) {
            char m[200];
            snprintf(m, sizeof m, "job %lld: its GPUs are free after %.1f s: its tasks start",
                     (long long)r->job_id, mono_sec() - r->gate_since);
            x->log(x->log_ud, m);
        }
    }
}

/* Operations the worker finished: SIGSTOP after a checkpoint (when the job is still meant to be
 * suspended and nothing later is queued for it), the run's state, and GSD_X_SUSPENDED. */
static void ops_collect(xlocal *x, gsd_xev_fn fn, void *ud)
{
    if (!x->worker_on) return;
    pthread_mutex_lock(&x->mu);
    xop *done = x->dhead;
    x->dhead = x->dtail = NULL;
    pthread_mutex_unlock(&x->mu);
    while (done) {
        xop *op = done;
        done = op->next;
        xrun *r = find_run(x, op->job_id);
        if (!r || r->run != op->run) { /* forgotten meanwhile */
            op_free(op);
            continue;
        }
        r->ops--;
        if (op->stop) {
            int moved = 0;
            for (int k = 0; k < r->ntasks; k++) moved |= r->t[k].vac != NULL;
            r->ckpt = !op->rc && op->res.nproc > 0;
            /* failed and resumed meanwhile on the same GPUs (its restore is queued behind):
             * the rollback left it running on GPUs that are its own again, nothing to keep
             * others off; resumed onto other GPUs: it runs on where it was (the daemon stops
             * it), keep launches off both until it is gone */
            r->ckpt_failed = op->rc != 0 && (r->suspended || moved);
            if (!--r->susp_ops && !r->ckpt_failed) /* the GPUs it left are vacated now */
                for (int k = 0; k < r->ntasks; k++) {
                    free(r->t[k].vac);
                    r->t[k].vac = NULL;
                }
            if (!op->rc && r->suspended && !r->ops && !r->stopping) signal_run(r, SIGSTOP);
        } else if (!op->rc) {
            r->ckpt = 0;
        }
        if (fn && (op->stop || op->report || op->res.nproc > 0 || op->rc)) {
            gsd_xev ev = {.kind = GSD_X_SUSPENDED,
                          .job_id = r->job_id,
                          .run = r->run,
                          .task = -1,
                          .failed_task = -1,
                          .stop = op->stop,
                          .failed = op->rc != 0,
                          .usec = op->res.usec,
                          .count = op->res.nproc,
                          .msg = op->rc ? op->res.msg : NULL};
            fn(ud, &ev);
        }
        op_free(op);
    }
}

/* ---- async-signal-safe helpers for the forked child ----------------------------------------- */

static size_t as_u64(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

/* 0, or -1 when the pid file could not be written (disk full, state directory not writable). */
static int as_write_pidfile(const char *tmp, const char *final)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY);
    int64_t ticks = -1;
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n > 0) ticks = parse_stat(buf, n, NULL);
    }
    char line[64];
    size_t k = as_u64(line, (uint64_t)getpid());
    line[k++] = ' ';
    k += as_u64(line + k, (uint64_t)(ticks < 0 ? 0 : ticks));
    line[k++] = '\n';
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    int ok = write(fd, line, k) == (ssize_t)k;
    ok = fsync(fd) == 0 && ok;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, final) == 0) return 0;
    unlink(tmp);
    return -1;
}

/* The status file of a task whose command could not be started (the child, before the shim
 * runs): "CODE launch MESSAGE". */
static void as_launch_status(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return;
    ssize_t w = write(fd, line, strlen(line));
    (void)w;
    close(fd);
}

static void as_close_from(int lo)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = lo; fd < max; fd++) close(fd);
}

/* ---- launching ------------------------------------------------------------------------------ */

typedef gsd_envv strv;

static void strv_push(strv *s, char *p)
{
    gsd_envv_push(s, p);
}

static void strv_pushf(strv *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void strv_pushf(strv *s, const char *fmt, ...)
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
    strv_push(s, p);
}

static void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/*
 * The job's environment for the shim's --env-fd: "KEY=VALUE\0" entries in a memory file
 * (memfd), or where there is none an unlinked 0600 file in the run directory (dir), written
 * in full and rewound.  Never through the shim's own environment (the loader of a root
 * process reads it) nor its argv (every user may read /proc/PID/cmdline).  A close-on-exec
 * descriptor, or -1 with errno set.
 */
static int env_file(const strv *env, const char *dir, int task)
{
    int fd = -1;
#ifdef SYS_memfd_create
    fd = (int)syscall(SYS_memfd_create, "gsched-task-env", 1U /* MFD_CLOEXEC */);
#endif
    if (fd < 0) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/task-%d.env", dir, task);
        unlink(p);
        fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) return -1;
        unlink(p);
    }
    for (size_t k = 0; k < env->n; k++) {
        const char *e = env->v[k];
        size_t n = strlen(e) + 1, off = 0;
        while (off < n) {
            ssize_t w = write(fd, e + off, n - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                int err = w < 0 ? errno : EIO;
                close(fd);
                errno = err;
                return -1;
            }
            off += (size_t)w;
        }
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/*
 * A task's environment, built from nothing: the daemon's own environment (which may hold the
 * operator's secrets) never reaches a job.  Each name is set once, by the first of:
 *   1. gsched's variables (reserved names: nothing else may set them; pushed last);
 *   2. the spec's env;
 *   3. the operator's allow-list (--pass-env, values read at create);
 *   4. defaults: PATH = GSD_JOB_PATH and the HOME, USER, LOGNAME and SHELL of the account
 *      the task runs as (u: the job's owner in multi-user mode, else the daemon's user).
 * Steps 2-4 and the job-level GSCHED_* are gsd_exec_env_common (shared with every backend);
 * the per-task variables are pushed here.
 */
static void build_env(strv *env, const xlocal *x, const gsd_launch *l, int i, const char *log,
                      const gsd_unix_user *u, const char *jobdir)
{
    gsd_exec_env_common(env, l, (const char *const *)x->pass, x->npass, u, jobdir);
    int rank = l->task_index_base + i;
    strv_pushf(env, "GSCHED_RUN=%d", l->run);
    strv_pushf(env, "GSCHED_RESTARTS=%d", l->run - 1);
    strv_pushf(env, "GSCHED_TASK_INDEX=%d", rank);
    strv_pushf(env, "GSCHED_NODE=%s", l->task_node[i]);
    strv_pushf(env, "GSCHED_GRACE_SECONDS=%lld", (long long)(l->grace / GS_SEC));
    strv_pushf(env, "GSCHED_LOG=%s", log);
    strv_pushf(env, "CUDA_VISIBLE_DEVICES=%s", l->task_cuda[i]);
    /* CUDA numbers GPUs fastest first by default; gsched's local indices (NVML's, the remap
     * pairs of a checkpoint restore) are PCI bus order: make CUDA's the same */
    if (!gsd_envv_has(env, "CUDA_DEVICE_ORDER")) strv_pushf(env, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
    if (l->task_ngpus) strv_pushf(env, "GSCHED_GPUS=%d", l->task_ngpus[i]);
    strv_pushf(env, "MASTER_ADDR=127.0.0.1");
    strv_pushf(env, "MASTER_PORT=%d", l->master_port);
    strv_pushf(env, "RANK=%d", rank);
    strv_pushf(env, "WORLD_SIZE=%d", l->world_size);
    strv_pushf(env, "LOCAL_RANK=0");
    strv_pushf(env, "NODE_RANK=%d", rank);
}

/* Shim options for the task's credentials (multi-user mode): --uid U --gid G --groups a,b
 * --workdir DIR.  The shim keeps root (it writes the status file the daemon trusts) and drops
 * to them in the command's process only (shim_drop_privileges). */
static void push_cred_args(strv *argv, const gsd_unix_user *u, const char *wd)
{
    strv_push(argv, xstrdup("--uid"));
    strv_pushf(argv, "%lld", (long long)u->uid);
    strv_push(argv, xstrdup("--gid"));
    strv_pushf(argv, "%lld", (long long)u->gid);
    size_t n = 1;
    for (int k = 0; k < u->ngroups; k++) n += 21;
    char *g = malloc(n), *p = g;
    if (!g) abort();
    *p = '\0';
    for (int k = 0; k < u->ngroups; k++)
        p += sprintf(p, "%s%lld", k ? "," : "", (long long)u->groups[k]);
    strv_push(argv, xstrdup("--groups"));
    strv_push(argv, g);
    if (wd) {
        strv_push(argv, xstrdup("--workdir"));
        strv_push(argv, xstrdup(wd));
    }
}

static void task_fail(xtask *t, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void task_fail(xtask *t, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->msg, sizeof t->msg, fmt, ap);
    va_end(ap);
    t->state = TS_DONE;
    t->exit_code = code;
    t->launch = GSD_XLAUNCH_JOB; /* callers of node-wide failures say GSD_XLAUNCH_NODE */
}

static void stamp(char *buf, size_t cap, gs_time now)
{
    time_t s = (time_t)(now / GS_SEC);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A line in the task's log when its spec asks for cpus / memory that this machine does not
 * enforce (never pretend it does). */
static void limits_note(const xlocal *x, const gsd_spec *sp, int fd)
{
    int cpu = sp->cpus_per_task > 0 && !(x->cg.base[0] && (x->cg.ctrl & GSD_CG_CPU));
    int mem = sp->mem_mb_per_task > 0 && !(x->cg.base[0] && (x->cg.ctrl & GSD_CG_MEMORY));
    if (cpu || mem)
        dprintf(fd, "=== gsched: %s%s%s not enforced on this machine: %s ===\n", cpu ? "cpus" : "",
                cpu && mem ? " and " : "", mem ? "memory" : "", x->cg.why);
}

/* With cgroups: note the base in runs/JOB.RUN/cgroup (for recovery) and name every task's
 * cgroup.  0, or -1 with *err = errno. */
static int record_cgroups(const xlocal *x, xrun *r, int *err)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    cgbase_file(x, r->job_id, r->run, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f) {
        *err = errno;
        return -1;
    }
    int ok = fprintf(f, "%s\n", x->cg.base) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        *err = errno ? errno : EIO;
        return -1;
    }
    r->cgbase = xstrdup(x->cg.base);
    set_task_cgroups(r);
    return 0;
}

static int local_check(void *b, char *why, size_t cap);

/* A launch failed in the job's own directory or its log: the node's failure (drain every node,
 * not counted against the job) only when the daemon's own directories fail the executor's
 * check now too (read-only, full); otherwise it is the job's (counted against
 * --launch-attempts): what a job does to its own directory never drains a node. */
static void launch_blame(xlocal *x, xtask *t)
{
    char why[256];
    if (local_check(x, why, sizeof why)) t->launch = GSD_XLAUNCH_NODE;
}

static int local_launch(void *b, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud)
{
    xlocal *x = b;
    if (find_run(x, l->job_id)) return GS_EEXIST;
    xrun *r = add_run(x, l->job_id, l->run, l->ntasks);
    r->grace = l->grace;
    const gsd_spec *sp = l->spec;
    char dir[PATH_MAX], logdir[PATH_MAX];
    run_dir(x, l->job_id, l->run, dir, sizeof dir);
    snprintf(logdir, sizeof logdir, "%s/%lld", x->logs, (long long)l->job_id);
    int dir_ok = mkdir_p(dir) == 0;
    int dir_errno = errno;
    /* who the tasks run as, and the job's own directory (owned by that account) */
    gsd_unix_user acct;
    char acct_msg[320];
    int acct_ok = gsd_launch_account(sp->run_as, sp->user, x->switch_users, x->allow_root, &acct,
                                     acct_msg, sizeof acct_msg) == 0;
    int jdfd = acct_ok ? job_dir_open(x, l->job_id, &acct) : -1, jd_errno = errno;
    /* an elastic job's checkpoints live in its directory across generations, its account's */
    if (jdfd >= 0 && gsd_spec_elastic(sp) && !sp->checkpoint_dir &&
        mkdirat(jdfd, "checkpoint", 0700) == 0 && acct.uid != geteuid())
        fchownat(jdfd, "checkpoint", acct.uid, acct.gid, AT_SYMLINK_NOFOLLOW);
    if (dir_ok && x->cg.base[0]) dir_ok = record_cgroups(x, r, &dir_errno) == 0;
    struct stat st;
    const char *wd = sp->workdir;
    if (!wd && x->switch_users && acct_ok)
        wd = stat(acct.home, &st) == 0 && S_ISDIR(st.st_mode) ? acct.home : logdir;
    int wd_ok = !wd || (stat(wd, &st) == 0 && S_ISDIR(st.st_mode));
    for (int i = 0; i < l->ntasks; i++) {
        r->t[i].gpus = xstrdup(l->task_gpus[i]);
        r->t[i].cuda = xstrdup(l->task_cuda[i]);
    }
    /* GPUs still being vacated by a checkpoint (or held by a job whose checkpoint failed):
     * the tasks are forked now but wait, before the shim starts, until the daemon closes the
     * write end of this pipe (open_gates) - so the command never meets the other job's memory
     * on its GPUs.  A daemon that dies meanwhile closes it too. */
    const xrun *vac = x->cuda ? run_blocked_by(x, r) : NULL;
    int gate_rd = -1;
    if (vac) {
        int gp[2];
        if (pipe(gp) == 0) {
            fcntl(gp[0], F_SETFD, FD_CLOEXEC); /* (the forked children dup it to 4) */
            fcntl(gp[1], F_SETFD, FD_CLOEXEC);
            gate_rd = gp[0];
            r->gate_fd = gp[1];
            r->gate_since = mono_sec();
            if (x->log) {
                char m[200];
                snprintf(m, sizeof m,
                         "job %lld: its GPUs are being vacated by job %lld (checkpoint): its "
                         "tasks wait",
                         (long long)l->job_id, (long long)vac->job_id);
                x->log(x->log_ud, m);
            }
        }
    }
    for (int i = 0; i < l->ntasks; i++) {
        xtask *t = &r->t[i];
        if (!acct_ok) {
            task_fail(t, 126, "%s", acct_msg);
            continue;
        }
        if (!dir_ok) {
            task_fail(t, 126, "cannot create run directory '%s': %s", dir, strerror(dir_errno));
            t->launch = GSD_XLAUNCH_NODE;
            continue;
        }
        if (jdfd < 0) {
            task_fail(t, 126, "cannot prepare the job's directory '%s': %s", logdir,
                      strerror(jd_errno));
            launch_blame(x, t); /* the node's only if the log directory itself fails */
            continue;
        }
        if (!wd_ok) {
            task_fail(t, 126, "workdir '%s' is not an existing directory", wd);
            continue;
        }
        char log[PATH_MAX], pidf[PATH_MAX], pidtmp[PATH_MAX], statf[PATH_MAX];
        char cgprocs[PATH_MAX + 32] = "", cgerr[512];
        if (t->cg && gsd_cg_task_create(&x->cg, t->cg, sp->cpus_per_task, sp->mem_mb_per_task,
                                        cgerr, sizeof cgerr) == 0)
            snprintf(cgprocs, sizeof cgprocs, "%s/shim/cgroup.procs", t->cg);
        else if (t->cg) {
            task_fail(t, 126, "%s", cgerr);
            continue;
        }
        log_file(x, l->job_id, i, log, sizeof log);
        snprintf(pidf, sizeof pidf, "%s/task-%d.pid", dir, i);
        snprintf(pidtmp, sizeof pidtmp, "%s/task-%d.pid.tmp", dir, i);
        snprintf(statf, sizeof statf, "%s/task-%d.status", dir, i);
        int logfd = log_open_launch(jdfd, i, l->run, acct.uid, acct.gid);
        if (logfd < 0) {
            int oe = errno;
            task_fail(t, 126, "cannot open log '%s': %s", log,
                      oe == EPERM ? "not a regular file of the job's own, and it cannot be moved "
                                    "aside"
                                  : strerror(oe));
            launch_blame(x, t); /* the job's, unless the log directory itself fails */
            continue;
        }
        /* task 0 of an interactive job reads its stdin from a pipe whose write end the daemon
         * keeps (local_stdin): no file, so nobody else can open it; the others read nothing */
        int inp[2] = {-1, -1};
        if (sp->interactive && i == 0 && pipe(inp) == 0) {
            fcntl(inp[0], F_SETFD, FD_CLOEXEC); /* the child's dup2 to 0 clears it */
            fcntl(inp[1], F_SETFD, FD_CLOEXEC); /* never in any task */
        }
        int nullfd = inp[0] >= 0 ? inp[0] : open("/dev/null", O_RDONLY | O_CLOEXEC);
        char ts[32];
        stamp(ts, sizeof ts, now);
        dprintf(logfd, "=== gsched: job %lld run %d task %d started %s on %s, GPUs %s ===\n",
                (long long)l->job_id, l->run, l->task_index_base + i, ts, l->task_node[i],
                l->task_cuda[i]);
        limits_note(x, sp, logfd);
        if (gate_rd >= 0)
            dprintf(logfd, "=== gsched: waiting until job %lld's checkpoint frees GPUs %s ===\n",
                    (long long)vac->job_id, l->task_gpus[i]);
        strv env = {0}, argv = {0};
        build_env(&env, x, l, i, log, &acct, logdir);
        int envfd = env_file(&env, dir, i), env_errno = errno;
        strv_free(&env);
        if (envfd < 0) {
            close(logfd);
            if (nullfd >= 0) close(nullfd);
            if (inp[1] >= 0) close(inp[1]);
            task_fail(t, 126, "cannot pass the job's environment to its shim: %s",
                      strerror(env_errno));
            t->launch = GSD_XLAUNCH_NODE; /* out of memory or disk: the node's failure */
            continue;
        }
        /* the shim's own environment: empty (not the job's: see the header) */
        char *shim_env[] = {NULL};
        /* argv[0] is a name only: what runs is x->self, the daemon's own binary */
        strv_push(&argv, xstrdup("gsched"));
        strv_push(&argv, xstrdup("__shim"));
        strv_push(&argv, xstrdup("--env-fd"));
        strv_push(&argv, xstrdup("3"));
        strv_push(&argv, xstrdup("--status"));
        strv_push(&argv, xstrdup(statf));
        strv_push(&argv, xstrdup("--log-cap"));
        strv_pushf(&argv, "%lld", (long long)x->log_cap);
        if (x->switch_users) push_cred_args(&argv, &acct, wd);
        if (t->cg) {
            strv_push(&argv, xstrdup("--cgroup"));
            strv_push(&argv, xstrdup(t->cg));
        }
        strv_push(&argv, xstrdup("--"));
        if (sp->shell) {
            strv_push(&argv, xstrdup("/bin/sh"));
            strv_push(&argv, xstrdup("-c"));
            strv_push(&argv, xstrdup(sp->shell));
        } else {
            for (int k = 0; k < sp->argc; k++) strv_push(&argv, xstrdup(sp->argv[k]));
        }
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pid_t pid = fork();
        if (pid == 0) {
            /* child: async-signal-safe calls only.  Close the inherited descriptors first:
             * one of them holds the store's lock (shared with the daemon's), and a daemon
             * killed now could not restart while this child still held it (the pid file
             * write below waits for fsync) */
            setsid();
            /* the environment's descriptor above 2 first (not clobbered by the dup2s below,
             * whatever its number), then to 3 without close-on-exec: the shim's --env-fd */
            int ef = fcntl(envfd, F_DUPFD, 3);
            int gf = gate_rd >= 0 ? fcntl(gate_rd, F_DUPFD, 5) : -1; /* the gate: to 4 below */
            if (nullfd >= 0) dup2(nullfd, 0);
            dup2(logfd, 1);
            dup2(logfd, 2);
            if (ef < 0 || (ef != 3 && dup2(ef, 3) != 3)) {
                as_launch_status(statf, "126 launch cannot pass the environment to the shim\n");
                _exit(126);
            }
            if (gate_rd >= 0 && (gf < 0 || dup2(gf, 4) != 4)) {
                as_launch_status(statf, "126 launch cannot wait for the GPUs to be vacated\n");
                _exit(126);
            }
            as_close_from(gate_rd >= 0 ? 5 : 4);
            if (cgprocs[0] && gsd_cg_join(cgprocs) != 0) {
                static const char m[] = "gsched: cannot join the task's cgroup\n";
                ssize_t w = write(2, m, sizeof m - 1);
                (void)w;
                _exit(126);
            }
            if (as_write_pidfile(pidtmp, pidf)) {
                /* a task whose pid is not on disk could not be found (or killed) after a daemon
                 * restart, and would run twice: do not start it */
                static const char nopid[] = "gsched: cannot write the task's pid file (disk full "
                                            "or state directory not writable): task not started\n";
                ssize_t w = write(2, nopid, sizeof nopid - 1);
                (void)w;
                _exit(126);
            }
            if (wd && chdir(wd) != 0) {
                as_launch_status(statf, "126 launch cannot enter the workdir\n");
                _exit(126);
            }
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            for (int s = 1; s < 32; s++) sigaction(s, &dfl, NULL);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            if (gate_rd >= 0) {
                /* wait for the gate (EOF); a stop's SIGTERM ends the wait (default action) */
                char gc;
                for (;;) {
                    ssize_t gr = read(4, &gc, 1);
                    if (gr == 0 || (gr < 0 && errno != EINTR)) break;
                }
                close(4);
            }
            execve(x->self, argv.v, shim_env);
            static const char msg[] = "gsched: cannot start the task shim\n";
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            as_launch_status(statf, "127 launch cannot start the task shim\n");
            _exit(127);
        }
        int fork_errno = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(logfd);
        close(envfd);
        if (nullfd >= 0) close(nullfd);
        strv_free(&argv);
        if (inp[1] >= 0) {
            if (pid < 0 || fcntl(inp[1], F_SETFL, O_NONBLOCK) != 0) {
                close(inp[1]); /* the task reads EOF */
            } else {
                r->stdin_fd = inp[1];
            }
        }
        if (pid < 0) {
            task_fail(t, 126, "fork failed: %s", strerror(fork_errno));
            continue;
        }
        t->pid = pid;
        t->child = 1;
        t->state = TS_RUN;
        char stc;
        t->ticks = gsd_proc_start_ticks(pid, &stc);
        if (fn) {
            char handle[64];
            local_handle(handle, sizeof handle, pid, t->ticks);
            gsd_xev ev = {.kind = GSD_X_TASK_STARTED,
                          .job_id = l->job_id,
                          .run = l->run,
                          .task = i,
                          .handle = handle,
                          .failed_task = -1,
                          .gpus = t->gpus};
            fn(ud, &ev);
        }
    }
    if (jdfd >= 0) close(jdfd);
    if (gate_rd >= 0) close(gate_rd);
    gsd_unix_user_release(&acct);
    return 0;
}

/* An interactive job's stdin (gsched run): up to len bytes of buf written to task 0's pipe
 * without blocking (*written: how many; fewer when the pipe is full), then with eof its write
 * end closed.  GS_ENOENT: no run of job_id here; GS_ESTATE: it has no stdin (not interactive,
 * EOF given already, or its task ended and closed it: EPIPE). */
static int local_stdin(void *b, int64_t job_id, const void *buf, size_t len, int eof,
                       size_t *written)
{
    xlocal *x = b;
    xrun *r = find_run(x, job_id);
    *written = 0;
    if (!r) return GS_ENOENT;
    if (r->stdin_fd < 0) return GS_ESTATE;
    while (*written < len) {
        ssize_t w = write(r->stdin_fd, (const char *)buf + *written, len - *written);
        if (w > 0) {
            *written += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return 0; /* full: the client sends the rest later */
        close(r->stdin_fd);                     /* EPIPE: nobody reads any more */
        r->stdin_fd = -1;
        return GS_ESTATE;
    }
    if (eof) {
        close(r->stdin_fd);
        r->stdin_fd = -1;
    }
    return 0;
}

/* sig to every process of the run's live tasks: each shim's process group and what process
 * tracking finds besides (signal_tracked). */
static void signal_run(xrun *r, int sig)
{
    for (int i = 0; i < r->ntasks; i++) {
        xtask *t = &r->t[i];
        if (t->state != TS_RUN || t->pid <= 0) continue;
        if (!t->child && !alive(t->pid, t->ticks)) continue; /* pid may be reused */
        kill((pid_t)-t->pid, sig);
        signal_tracked(t, sig);
    }
}

/* Hard-kill every process of the run: each task's whole cgroup (shim included); without
 * cgroups, each shim's descendants are killed until the shim has no live child left (the
 * shim keeps reaping them, and exits only once it has no child at all: orphans stay below
 * it), then its process group. */
static void kill_run(const xlocal *x, xrun *r)
{
    signal_run(r, SIGCONT);
    for (int i = 0; i < r->ntasks; i++) {
        xtask *t = &r->t[i];
        if (t->cg && (t->state == TS_RUN || t->state == TS_DRAIN))
            gsd_cg_kill(t->cg, x->cg.force_freeze);
        if (t->state != TS_RUN || t->pid <= 0) continue;
        if (!t->child && !alive(t->pid, t->ticks)) continue;
        if (!t->cg) {
            long left = gsd_proc_kill_tree((pid_t)t->pid, 10000, 0);
            if (left && x->log) {
                char m[256];
                snprintf(m, sizeof m,
                         "job %lld task %d: %ld process(es) still alive after 10s of killing the "
                         "task's process tree: they may outlive it (run the daemon with cgroups)",
                         (long long)r->job_id, i, left);
                x->log(x->log_ud, m);
            }
        }
        kill((pid_t)-t->pid, SIGKILL);
    }
}

#define GSD_TERM_AGAIN GS_SEC

static int local_stop(void *b, int64_t job_id, gs_time now, gs_time grace)
{
    xlocal *x = b;
    xrun *r = find_run(x, job_id);
    if (!r) return GS_ENOENT;
    if (r->suspended) {
        signal_run(r, SIGCONT);
        r->suspended = 0;
        /* checkpointed processes are restored (and unlocked), so that the job can write its
         * own checkpoint on SIGTERM: its CUDA calls would block until then (also those a
         * failed checkpoint's rollback could not unlock) */
        if (x->worker_on && (r->ckpt || r->susp_ops || r->ckpt_failed) && !r->stopping)
            op_queue(x, r, 0, 0, NULL, NULL, 0);
    }
    signal_run(r, SIGTERM);
    gs_time at = now + (grace > 0 ? grace : 0);
    if (!r->stopping || at < r->kill_at) r->kill_at = at;
    /* a SIGTERM sent while a task is still being set up (its process group or command not
     * there yet: a stop or a drain right after the launch) is lost; once more a second later
     * when the tasks still run, before the hard kill */
    if (!r->stopping && now + GSD_TERM_AGAIN < r->kill_at) r->term_again = now + GSD_TERM_AGAIN;
    r->stopping = 1;
    return 0;
}

/* Suspend / resume.  sigstop: SIGSTOP / SIGCONT to the groups now.  cuda: a suspend queues a
 * checkpoint (lock, checkpoint every CUDA process) and SIGSTOP follows when the worker is done
 * (ops_collect); a resume sends SIGCONT now, then queues the restore (restore, unlock): the
 * driver restores through a thread of the process, which must not be stopped, and its CUDA
 * calls stay blocked by the lock until the unlock.  from / to (owned, nremap pairs of
 * node-local GPUs): move the job's GPUs at the restore. */
static int suspend_run(xlocal *x, xrun *r, int stop, int *from, int *to, size_t nremap)
{
    if (!x->worker_on) {
        signal_run(r, stop ? SIGSTOP : SIGCONT);
        r->suspended = stop;
        return 0;
    }
    if (stop) {
        r->suspended = 1;
        r->susp_seen = 1;
        op_queue(x, r, 1, 1, NULL, NULL, 0);
        return 0;
    }
    signal_run(r, SIGCONT);
    r->suspended = 0;
    r->ckpt_failed = 0; /* resumed on GPUs given back to it: they are its own again */
    for (int k = 0; !r->susp_ops && k < r->ntasks; k++) {
        free(r->t[k].vac);
        r->t[k].vac = NULL;
    }
    op_queue(x, r, 0, r->susp_seen, from, to, nremap);
    return 0;
}

static int local_suspend(void *b, int64_t job_id, int stop)
{
    xlocal *x = b;
    xrun *r = find_run(x, job_id);
    if (!r) return GS_ENOENT;
    return suspend_run(x, r, stop, NULL, NULL, 0);
}

/* Node-local GPU indices "0,1" into v (at most cap); how many, -1 if malformed. */
static int parse_idx(const char *s, int *v, int cap)
{
    int n = 0;
    for (const char *p = s; p && *p;) {
        char *e;
        long g = strtol(p, &e, 10);
        if (e == p || g < 0 || g > 1000000 || n == cap || (*e && *e != ',')) return -1;
        v[n++] = (int)g;
        p = *e ? e + 1 : e;
    }
    return n;
}

/* Resume on task_gpus (global) / task_cuda (node-local): where it left, a plain resume; on
 * other GPUs a restore with remap pairs old local -> new local, each task's GPUs in order. */
static int local_resume_at(void *b, int64_t job_id, const char *const *task_gpus,
                           const char *const *task_cuda)
{
    xlocal *x = b;
    xrun *r = find_run(x, job_id);
    if (!r) return GS_ENOENT;
    /* a run found again after a restart learns where it runs from the daemon's first resume
     * (recovery resumes every adopted run on its GPUs): so that launches wait for its
     * checkpoints and a later resume may move it */
    for (int i = 0; task_gpus && task_cuda && i < r->ntasks; i++)
        if (!r->t[i].gpus && !r->t[i].cuda && task_gpus[i] && task_cuda[i]) {
            r->t[i].gpus = xstrdup(task_gpus[i]);
            r->t[i].cuda = xstrdup(task_cuda[i]);
        }
    int same = 1;
    for (int i = 0; task_gpus && i < r->ntasks; i++)
        if (r->t[i].gpus && task_gpus[i] && strcmp(r->t[i].gpus, task_gpus[i])) same = 0;
    if (same) return suspend_run(x, r, 0, NULL, NULL, 0);
    if (!x->worker_on || !x->can_remap || !task_cuda) return GS_EUNSUPPORTED;
    size_t cap = 0, n = 0;
    for (int i = 0; i < r->ntasks; i++) {
        if (!r->t[i].cuda || !task_cuda[i]) return GS_EUNSUPPORTED; /* found after a restart */
        cap += strlen(r->t[i].cuda) / 2 + 1;
    }
    int *from = calloc(cap, sizeof *from), *to = calloc(cap, sizeof *to);
    if (!from || !to) abort();
    for (int i = 0; i < r->ntasks; i++) {
        int a = parse_idx(r->t[i].cuda, from + n, (int)(cap - n));
        int c = a < 0 ? -1 : parse_idx(task_cuda[i], to + n, (int)(cap - n));
        if (a < 0 || c != a) {
            free(from);
            free(to);
            return GS_EINVAL;
        }
        n += (size_t)a;
    }
    for (int i = 0; i < r->ntasks; i++) {
        /* its checkpoint still runs: its memory stays on the GPUs it leaves until that is done,
         * launches onto them wait for it (vacating_on) */
        if (r->susp_ops > 0 && !r->t[i].vac)
            r->t[i].vac = r->t[i].gpus;
        else
            free(r->t[i].gpus);
        free(r->t[i].cuda);
        r->t[i].gpus = xstrdup(task_gpus[i]);
        r->t[i].cuda = xstrdup(task_cuda[i]);
    }
    return suspend_run(x, r, 0, from, to, n);
}

static unsigned local_instance_caps(const void *b)
{
    const xlocal *x = b;
    if (!x->worker_on) return 0;
    return GSD_XCAP_CKPT | (x->can_remap ? GSD_XCAP_REMAP : 0u);
}

static gs_time local_next_deadline(const void *b)
{
    const xlocal *x = b;
    gs_time t = GS_TIME_MAX;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i]->stopping && !x->v[i]->killed) {
            if (x->v[i]->kill_at < t) t = x->v[i]->kill_at;
            if (x->v[i]->term_again < t) t = x->v[i]->term_again;
        }
    return t;
}

/* Tasks that are not our children (adopted after a restart) are checked through /proc, and
 * draining tasks (shim gone, cgroup not yet empty) through their cgroup: every 200 ms; runs of
 * our own children every 500 ms (SIGCHLD wakes the loop sooner). */
static gs_time local_poll_within(const void *b)
{
    const xlocal *x = b;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i]->gate_fd >= 0 || x->v[i]->ops) return 100 * GS_MSEC; /* (the worker wakes) */
    for (size_t i = 0; i < x->n; i++)
        for (int k = 0; k < x->v[i]->ntasks; k++)
            if ((x->v[i]->t[k].state == TS_RUN && !x->v[i]->t[k].child) ||
                x->v[i]->t[k].state == TS_DRAIN)
                return 200 * GS_MSEC;
    return x->n ? 500 * GS_MSEC : GS_TIME_MAX;
}

/* A status file: "CODE", or "CODE launch MESSAGE" (the command could not be started: *launch
 * = 1 and the message in msg).  0, or -1 when there is none (yet). */
static int read_status(const char *path, int *code, int *launch, char *msg, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char line[512];
    int c, ok = fgets(line, sizeof line, f) && sscanf(line, "%d", &c) == 1;
    fclose(f);
    if (!ok) return -1;
    *code = c;
    *launch = 0;
    const char *p = strstr(line, " launch ");
    if (p) {
        *launch = 1;
        p += strlen(" launch ");
        snprintf(msg, cap, "%.*s", (int)strcspn(p, "\n"), p);
    }
    return 0;
}

static void status_path(const xlocal *x, const xrun *r, int i, char *buf, size_t cap)
{
    char dir[PATH_MAX];
    run_dir(x, r->job_id, r->run, dir, sizeof dir);
    snprintf(buf, cap, "%s/task-%d.status", dir, i);
}

static int wait_code(int st)
{
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 255;
}

/* A child that exited 126 or 127: did it start the command at all?  Its status file says so
 * ("CODE launch MESSAGE", written by the forked child or the shim); the command's own 126 /
 * 127 has no such mark. */
static void launch_status(const xlocal *x, const xrun *r, int k, xtask *t)
{
    if (t->exit_code != 126 && t->exit_code != 127) return;
    char sp[PATH_MAX], msg[sizeof t->msg];
    status_path(x, r, k, sp, sizeof sp);
    int code, launch;
    if (read_status(sp, &code, &launch, msg, sizeof msg) == 0) {
        if (launch && code == t->exit_code) {
            t->launch = GSD_XLAUNCH_JOB;
            snprintf(t->msg, sizeof t->msg, "%s", msg);
        }
        return;
    }
    /* no status at all and no pid file: the child could not write its pid file (the first
     * thing it does) and did not start the task - the state directory is full or read-only */
    char dir[PATH_MAX], pidf[PATH_MAX + 32];
    struct stat stb;
    run_dir(x, r->job_id, r->run, dir, sizeof dir);
    snprintf(pidf, sizeof pidf, "%s/task-%d.pid", dir, k);
    if (t->exit_code == 126 && stat(pidf, &stb) != 0) {
        t->launch = GSD_XLAUNCH_NODE;
        snprintf(t->msg, sizeof t->msg,
                 "cannot write the task's pid file in '%s' (disk full or not writable)", dir);
    }
}

static void local_poll(void *b, gs_time now, gsd_xev_fn fn, void *ud)
{
    xlocal *x = b;
    /* checkpoints and restores the worker finished */
    ops_collect(x, fn, ud);
    /* our children */
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (size_t i = 0; i < x->n; i++) {
            xrun *r = x->v[i];
            for (int k = 0; k < r->ntasks; k++) {
                xtask *t = &r->t[k];
                if (t->state == TS_RUN && t->child && t->pid == pid) {
                    t->exit_code = wait_code(st);
                    if (WIFSIGNALED(st))
                        snprintf(t->msg, sizeof t->msg, "task shim killed by signal %d",
                                 WTERMSIG(st));
                    launch_status(x, r, k, t);
                    /* leftovers of the task (background processes) go with it */
                    kill((pid_t)-pid, SIGKILL);
                    task_gone(x, r, t);
                }
            }
        }
    }
    /* adopted tasks: check through /proc */
    for (size_t i = 0; i < x->n; i++) {
        xrun *r = x->v[i];
        for (int k = 0; k < r->ntasks; k++) {
            xtask *t = &r->t[k];
            if (t->state != TS_RUN || t->child || alive(t->pid, t->ticks)) continue;
            char sp[PATH_MAX];
            status_path(x, r, k, sp, sizeof sp);
            int code, launch;
            if (read_status(sp, &code, &launch, t->msg, sizeof t->msg) == 0) {
                t->exit_code = code;
                if (launch) t->launch = GSD_XLAUNCH_JOB;
            } else {
                t->exit_code = 137;
                t->lost = 1;
                snprintf(t->msg, sizeof t->msg, "task ended without an exit status (killed)");
            }
            task_gone(x, r, t);
        }
    }
    /* tasks whose shim is gone: done once their cgroup is empty */
    for (size_t i = 0; i < x->n; i++)
        for (int k = 0; k < x->v[i]->ntasks; k++)
            if (x->v[i]->t[k].state == TS_DRAIN) task_gone(x, x->v[i], &x->v[i]->t[k]);
    /* report, stop peers of failed tasks, kill after the grace period */
    for (size_t i = 0; i < x->n; i++) {
        xrun *r = x->v[i];
        int running = 0;
        for (int k = 0; k < r->ntasks; k++) {
            xtask *t = &r->t[k];
            if (t->state == TS_RUN || t->state == TS_DRAIN) running++;
            if (t->state != TS_DONE || t->reported) continue;
            t->reported = 1;
            if (t->exit_code != 0 && r->failed_task < 0) {
                r->failed_task = k;
                r->first_code = t->exit_code;
            }
            if (fn) {
                char handle[64];
                if (t->pid) local_handle(handle, sizeof handle, t->pid, t->ticks);
                gsd_xev ev = {.kind = GSD_X_TASK_EXITED,
                              .job_id = r->job_id,
                              .run = r->run,
                              .task = k,
                              .handle = t->pid ? handle : NULL,
                              .exit_code = t->exit_code,
                              .failed_task = -1,
                              .lost = t->lost,
                              .launch_failed = t->launch,
                              .msg = t->msg[0] ? t->msg : NULL};
                fn(ud, &ev);
            }
        }
        if (running && r->failed_task >= 0 && !r->stopping) {
            local_stop(x, r->job_id, now, r->grace);
            if (fn) {
                gsd_xev ev = {.kind = GSD_X_PEER_FAILED,
                              .job_id = r->job_id,
                              .run = r->run,
                              .task = r->failed_task,
                              .exit_code = r->first_code,
                              .failed_task = r->failed_task};
                fn(ud, &ev);
            }
        }
        if (running && r->stopping && !r->killed && now >= r->term_again && now < r->kill_at) {
            signal_run(r, SIGTERM);
            r->term_again = GS_TIME_MAX;
        }
        if (running && r->stopping && !r->killed && now >= r->kill_at) {
            kill_run(x, r);
            r->killed = 1;
            if (fn) {
                gsd_xev ev = {.kind = GSD_X_KILLED,
                              .job_id = r->job_id,
                              .run = r->run,
                              .task = -1,
                              .failed_task = -1,
                              .killed = 1};
                fn(ud, &ev);
            }
        }
        if (!running && !r->done_reported) {
            r->done_reported = 1;
            int lost = 0, launch = GSD_XLAUNCH_NONE;
            const char *msg = NULL;
            for (int k = 0; k < r->ntasks; k++) {
                lost |= r->t[k].lost;
                if (r->t[k].launch > launch) launch = r->t[k].launch;
                if (!msg && r->t[k].msg[0] && (r->t[k].exit_code || r->t[k].lost))
                    msg = r->t[k].msg;
            }
            if (fn) {
                gsd_xev ev = {.kind = GSD_X_RUN_DONE,
                              .job_id = r->job_id,
                              .run = r->run,
                              .task = -1,
                              .exit_code = r->failed_task >= 0 ? r->first_code : 0,
                              .failed_task = r->failed_task,
                              .lost = lost,
                              .never_started = r->never_started,
                              .killed = r->killed,
                              .launch_failed = launch,
                              .msg = msg};
                fn(ud, &ev);
            }
        }
    }
    /* deferred launches whose GPUs are free now start */
    if (x->worker_on) open_gates(x);
}

static void rm_run_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    if (dp) {
        struct dirent *de;
        char p[PATH_MAX];
        while ((de = readdir(dp))) {
            if (de->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
        closedir(dp);
    }
    rmdir(dir);
}

static void local_forget(void *b, int64_t job_id)
{
    xlocal *x = b;
    for (size_t i = 0; i < x->n; i++) {
        xrun *r = x->v[i];
        if (r->job_id != job_id) continue;
        char dir[PATH_MAX];
        run_dir(x, r->job_id, r->run, dir, sizeof dir);
        rm_run_dir(dir);
        for (int k = 0; k < r->ntasks; k++)
            if (r->t[k].cg) gsd_cg_remove(r->t[k].cg); /* empty ones only */
        run_free(r);
        x->v[i] = x->v[--x->n];
        return;
    }
}

static void local_kill_now(void *b, int64_t job_id)
{
    xlocal *x = b;
    xrun *r = find_run(x, job_id);
    if (!r) return;
    kill_run(x, r);
    r->killed = 1;
    for (int w = 0; w < 100; w++) {
        int left = 0;
        for (int k = 0; k < r->ntasks; k++) {
            xtask *t = &r->t[k];
            if (t->state == TS_DRAIN) task_gone(x, r, t);
            if (t->state != TS_RUN) {
                left += t->state == TS_DRAIN;
                continue;
            }
            if (t->child) {
                int st;
                if (waitpid((pid_t)t->pid, &st, WNOHANG) == (pid_t)t->pid) {
                    t->exit_code = wait_code(st);
                    task_gone(x, r, t);
                    left += t->state == TS_DRAIN;
                    continue;
                }
            } else if (!alive(t->pid, t->ticks)) {
                t->exit_code = 137;
                task_gone(x, r, t);
                left += t->state == TS_DRAIN;
                continue;
            }
            left++;
        }
        if (!left) return;
        sleep_ms(50);
    }
}

/* ---- recovery ------------------------------------------------------------------------------- */

static int read_pidfile(const char *path, int64_t *pid, int64_t *ticks)
{
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    long long p, t;
    int ok = fscanf(f, "%lld %lld", &p, &t) == 2;
    fclose(f);
    if (!ok || p <= 0) return -1;
    *pid = p;
    *ticks = t;
    return 0;
}

static int local_recover(void *b, int64_t job_id, int run, int ntasks, gs_time now, int *nalive,
                         int *nexited, int *nlost)
{
    xlocal *x = b;
    (void)now;
    *nalive = *nexited = *nlost = 0;
    if (find_run(x, job_id)) return GS_EEXIST;
    xrun *r = add_run(x, job_id, run, ntasks);
    char dir[PATH_MAX];
    run_dir(x, job_id, run, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0) {
        /* the daemon died before it launched anything */
        r->never_started = 1;
        for (int i = 0; i < ntasks; i++) {
            r->t[i].state = TS_DONE;
            r->t[i].lost = 1;
            r->t[i].exit_code = 137;
            snprintf(r->t[i].msg, sizeof r->t[i].msg, "never started (daemon restart)");
            r->t[i].reported = 1;
        }
        *nlost = ntasks;
        return 0;
    }
    char cgf[PATH_MAX];
    cgbase_file(x, job_id, run, cgf, sizeof cgf);
    r->cgbase = read_cgbase(cgf); /* where the old daemon put its cgroups, whatever ours is */
    set_task_cgroups(r);
    for (int i = 0; i < ntasks; i++) {
        xtask *t = &r->t[i];
        char pidf[PATH_MAX], statf[PATH_MAX];
        snprintf(pidf, sizeof pidf, "%s/task-%d.pid", dir, i);
        snprintf(statf, sizeof statf, "%s/task-%d.status", dir, i);
        int64_t pid = 0, ticks = 0;
        int got = read_pidfile(pidf, &pid, &ticks) == 0;
        /* a child forked just before the old daemon died writes its pid file any moment;
         * one deadline for the whole recovery, so a big gang cut in the middle of its launch
         * (and several of them) costs a few seconds, not a few seconds per task */
        if (!got && x->pid_wait_until == 0) x->pid_wait_until = mono_sec() + 5.0;
        while (!got && mono_sec() < x->pid_wait_until) {
            sleep_ms(50);
            got = read_pidfile(pidf, &pid, &ticks) == 0;
        }
        int code, launch;
        if (got && alive(pid, ticks)) {
            t->pid = pid;
            t->ticks = ticks;
            t->state = TS_RUN;
            t->child = 0;
            (*nalive)++;
        } else if (t->cg && gsd_cg_populated(t->cg) == 1) {
            /* the shim is gone but processes of the task live on in its cgroup: alive until
             * they are gone (the next poll kills them, or the stop under way at its end) */
            t->pid = got ? pid : 0;
            t->ticks = got ? ticks : 0;
            t->state = TS_DRAIN;
            if (read_status(statf, &code, &launch, t->msg, sizeof t->msg) == 0) {
                t->exit_code = code;
                if (launch) t->launch = GSD_XLAUNCH_JOB;
            } else {
                t->exit_code = 137;
                t->lost = 1;
                snprintf(t->msg, sizeof t->msg,
                         "task shim gone without an exit status (daemon restart); what was left "
                         "in its cgroup was killed");
            }
            (*nalive)++;
        } else if (read_status(statf, &code, &launch, t->msg, sizeof t->msg) == 0) {
            t->pid = got ? pid : 0;
            t->ticks = got ? ticks : 0; /* its handle stays the one it started with */
            t->state = TS_DONE;
            t->exit_code = code;
            if (launch) t->launch = GSD_XLAUNCH_JOB;
            (*nexited)++;
        } else {
            t->state = TS_DONE;
            t->lost = 1;
            t->exit_code = 137;
            snprintf(t->msg, sizeof t->msg,
                     got ? "task ended without an exit status (lost in daemon restart)"
                         : "task never started (daemon restart)");
            (*nlost)++;
        }
    }
    for (int i = 0; i < ntasks; i++)
        if (r->t[i].state == TS_DONE && r->t[i].cg) gsd_cg_remove(r->t[i].cg);
    if (*nlost == ntasks && !*nexited) r->never_started = 1;
    return 0;
}

/* Kill and remove every task cgroup under base that no registered run claims.  Returns how
 * many held processes. */
static int sweep_cgroups(const xlocal *x, const char *base, void (*log)(void *ud, const char *msg),
                         void *ud)
{
    DIR *dp = opendir(base);
    if (!dp) return 0;
    int killed = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        int64_t id;
        int run, idx;
        if (!gsd_cg_parse_task_name(de->d_name, &id, &run, &idx)) continue;
        const xrun *r = find_run(x, id);
        if (r && r->run == run) continue;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", base, de->d_name);
        if (gsd_cg_populated(dir) == 1) {
            gsd_cg_kill(dir, x->cg.force_freeze);
            for (int w = 0; w < 100 && gsd_cg_populated(dir) == 1; w++) sleep_ms(50);
            killed++;
            if (log) {
                char msg[PATH_MAX + 128];
                snprintf(msg, sizeof msg,
                         "killed the processes of cgroup %s: no running job claims it", dir);
                log(ud, msg);
            }
        }
        gsd_cg_remove(dir);
    }
    closedir(dp);
    return killed;
}

static int local_sweep(void *b, void (*log)(void *ud, const char *msg), void *ud)
{
    xlocal *x = b;
    int killed = x->cg.base[0] ? sweep_cgroups(x, x->cg.base, log, ud) : 0;
    DIR *dp = opendir(x->runs);
    if (!dp) return killed;
    struct dirent *de;
    char msg[512];
    while ((de = readdir(dp))) {
        long long id;
        int run;
        char tail;
        if (sscanf(de->d_name, "%lld.%d%c", &id, &run, &tail) != 2) continue;
        xrun *r = find_run(x, id);
        if (r && r->run == run) continue;
        char dir[PATH_MAX], cgf[PATH_MAX + 8];
        snprintf(dir, sizeof dir, "%s/%s", x->runs, de->d_name);
        snprintf(cgf, sizeof cgf, "%s/cgroup", dir);
        char *cgbase = read_cgbase(cgf);
        if (cgbase && strcmp(cgbase, x->cg.base)) killed += sweep_cgroups(x, cgbase, log, ud);
        free(cgbase);
        DIR *td = opendir(dir);
        if (td) {
            struct dirent *te;
            while ((te = readdir(td))) {
                int idx;
                if (sscanf(te->d_name, "task-%d.pid%c", &idx, &tail) != 1) continue;
                char pidf[PATH_MAX];
                snprintf(pidf, sizeof pidf, "%s/%s", dir, te->d_name);
                int64_t pid, ticks;
                if (read_pidfile(pidf, &pid, &ticks) || !alive(pid, ticks)) continue;
                kill((pid_t)-pid, SIGKILL);
                for (int w = 0; w < 100 && alive(pid, ticks); w++) sleep_ms(50);
                killed++;
                if (log) {
                    snprintf(msg, sizeof msg,
                             "killed orphaned task %d of job %lld run %d (pid %lld): no running "
                             "job claims it",
                             idx, id, run, (long long)pid);
                    log(ud, msg);
                }
            }
            closedir(td);
        }
        rm_run_dir(dir);
    }
    closedir(dp);
    return killed;
}

/* A task's log under one log root: -1 if it is not there (or not a file to trust). */
static int log_open_under(const char *root, int64_t job_id, int task)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%lld", root, (long long)job_id);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd = -1;
    if (dfd < 0) return -1;
    struct stat st;
    if (fstat(dfd, &st) == 0) fd = log_openat(dfd, task, 0, st.st_uid, st.st_gid);
    close(dfd);
    return fd;
}

/* The job's directory belongs to the job's account (multi-user mode): the log is opened the
 * way launch opens it (log_openat), so a link or someone else's file put in its place is not
 * read with the daemon's privileges.  Logs of jobs that ran before the logs moved out of the
 * state directory are read there. */
static int local_log_open(const void *b, int64_t job_id, int task, int *fd)
{
    const xlocal *x = b;
    *fd = log_open_under(x->logs, job_id, task);
    if (*fd < 0 && x->old_logs) *fd = log_open_under(x->old_logs, job_id, task);
    return *fd < 0 ? GS_ENOENT : 0;
}

int64_t gsd_local_handle_pid(const char *handle)
{
    long long pid;
    if (!handle || sscanf(handle, "local:%lld:", &pid) != 1) return -1;
    return pid;
}

/* Can tasks be launched here: do runs/ and logs/ take a new directory and a written file
 * (not read-only, not full, permitted)?  The daemon drains the nodes while they do not. */
static int local_check(void *b, char *why, size_t cap)
{
    xlocal *x = b;
    const char *dirs[] = {x->runs, x->logs};
    for (int i = 0; i < 2; i++) {
        char p[PATH_MAX], f[PATH_MAX + 8];
        snprintf(p, sizeof p, "%s/.check-%ld", dirs[i], (long)getpid());
        snprintf(f, sizeof f, "%s/probe", p);
        if (mkdir_p(dirs[i]) || (mkdir(p, 0700) != 0 && errno != EEXIST)) {
            snprintf(why, cap, "cannot create a directory in '%s': %s", dirs[i], strerror(errno));
            return GS_EIO;
        }
        int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int ok = fd >= 0 && write(fd, "x", 1) == 1;
        int e = errno;
        if (fd >= 0) close(fd);
        unlink(f);
        rmdir(p);
        if (!ok) {
            snprintf(why, cap, "cannot write a file in '%s': %s", dirs[i], strerror(e));
            return GS_EIO;
        }
    }
    return 0;
}

const gsd_exec_ops gsd_exec_local = {
    .name = "local",
    .desc = "every task a process tree on this machine, under a shim; survives daemon restarts",
    .caps = GSD_XCAP_SUSPEND | GSD_XCAP_ADOPT | GSD_XCAP_MIXED,
    .create = local_create,
    .destroy = local_destroy,
    .launch = local_launch,
    .stop = local_stop,
    .suspend = local_suspend,
    .poll = local_poll,
    .next_deadline = local_next_deadline,
    .poll_within = local_poll_within,
    .nruns = local_nruns,
    .has = local_has,
    .kill_now = local_kill_now,
    .forget = local_forget,
    .recover = local_recover,
    .sweep = local_sweep,
    .log_path = local_log_path,
    .log_open = local_log_open,
    .task_pid = gsd_local_handle_pid,
    .check = local_check,
    .stdin_write = local_stdin,
    .instance_caps = local_instance_caps,
    .resume_at = local_resume_at,
};

/* ---- the shim ------------------------------------------------------------------------------- */

static volatile sig_atomic_t shim_got_term;

static void shim_on_term(int sig)
{
    (void)sig;
    shim_got_term = 1;
}

/* SIGCHLD only interrupts the log pump's poll, so the shim notices the command's end at once. */
static void shim_on_chld(int sig)
{
    (void)sig;
}

static void shim_usage(void)
{
    fputs("usage: gsched __shim --status FILE [--log-cap BYTES] [--cgroup DIR] [--env-fd FD]\n"
          "                     [--uid U --gid G --groups G1,G2... [--workdir DIR]]\n"
          "                     -- COMMAND [ARG...]\n"
          "(internal: started by 'gsched serve' for every task; the command gets the\n"
          "environment read from FD, NUL-separated NAME=VALUE entries, else the shim's own)\n",
          stderr);
}

/* The status file's placeholder, written when the shim starts (while there is room): the exit
 * code later overwrites it in place when a new file cannot be written (disk full), so a task
 * that ends while the disk is full still leaves its exit status for an adopting daemon.  Not a
 * number, so read_status treats it as "no status yet". */
static const char shim_status_placeholder[] = "running        \n"; /* 16 bytes */

static void shim_status_reserve(const char *status)
{
    int fd = open(status, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t w = write(fd, shim_status_placeholder, sizeof shim_status_placeholder - 1);
    (void)w;
    close(fd);
}

/* Write the exit code: a new file renamed over the old one; if that fails, over the placeholder
 * in place (one 16-byte write at offset 0). */
static void shim_status_write(const char *status, int code, const char *launch_why)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", status);
    FILE *f = fopen(tmp, "we");
    if (f) {
        /* "CODE launch WHY": the command could not be started (a launch failure, exec.h) */
        if (launch_why)
            fprintf(f, "%d launch %s\n", code, launch_why);
        else
            fprintf(f, "%d\n", code);
        int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
        ok = fclose(f) == 0 && ok;
        if (ok && rename(tmp, status) == 0) return;
        unlink(tmp);
    }
    char line[sizeof shim_status_placeholder];
    snprintf(line, sizeof line, "%-15d\n", code);
    int fd = open(status, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t w = pwrite(fd, line, sizeof line - 1, 0);
    (void)w;
    fsync(fd);
    close(fd);
}

/*
 * The command's environment from descriptor fd (--env-fd): "NAME=VALUE\0" entries, read from
 * offset 0 to the end; fd is closed.  A NULL-terminated array in one allocation (*buf holds
 * the text), or NULL with errno set.  Read by the root shim but never interpreted by it: it
 * becomes the environment of the command's process after the privilege drop.
 */
static char **shim_read_env(int fd, char **buf)
{
    char **v = NULL, *b = NULL;
    size_t n = 0, cap = 0;
    int e = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 1 << 20;
            if (cap > (size_t)256 << 20) { /* far beyond any spec (256 x 64 KiB) */
                e = E2BIG;
                goto out;
            }
            char *nb = realloc(b, cap);
            if (!nb) {
                e = ENOMEM;
                goto out;
            }
            b = nb;
        }
        ssize_t r = pread(fd, b + n, cap - n - 1, (off_t)n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            e = errno;
            goto out;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    if (n && b[n - 1] != '\0') b[n++] = '\0'; /* a last entry without its NUL */
    size_t cnt = 0;
    for (size_t k = 0; k < n; k++) cnt += b[k] == '\0';
    v = calloc(cnt + 1, sizeof *v);
    if (!v) {
        e = ENOMEM;
        goto out;
    }
    size_t j = 0;
    for (size_t k = 0; k < n; k += strlen(b + k) + 1)
        if (strchr(b + k, '=')) v[j++] = b + k; /* not NAME=VALUE: not an entry */
    v[j] = NULL;
out:
    close(fd);
    if (e) {
        free(v);
        free(b);
        errno = e;
        return NULL;
    }
    *buf = b;
    return v;
}

/* Wait for the command, moving its output to the log meanwhile (lp NULL: no pump). */
static int shim_wait_command(pid_t pid, gsd_logpump *lp)
{
    for (;;) {
        int st, pumping = lp && lp->in >= 0;
        pid_t r = waitpid(pid, &st, pumping ? WNOHANG : 0);
        if (r == pid) return st;
        if (r < 0 && errno != EINTR) return 255 << 8;
        if (r == 0) gsd_logpump_step(lp, 100);
    }
}

/* During a stop: wait for every descendant (the shim is their subreaper), still draining. */
static void shim_wait_all(gsd_logpump *lp)
{
    for (;;) {
        int st2, pumping = lp && lp->in >= 0;
        pid_t p = waitpid(-1, &st2, pumping ? WNOHANG : 0);
        if (p > 0 || (p < 0 && errno == EINTR)) continue;
        if (p < 0) break; /* ECHILD: nobody left */
        gsd_logpump_step(lp, 100);
    }
}

/* The credentials the command runs with (multi-user mode); set = 0: the shim's own. */
typedef struct shim_cred {
    int set;
    uid_t uid;
    gid_t gid;
    gid_t *groups;
    size_t ngroups;
    const char *workdir;
} shim_cred;

/* One --uid / --gid / --groups value: a decimal id below (uid_t)-1.  0, or -1. */
static int shim_id(const char *s, long long *out)
{
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (errno || e == s || *e || v < 0 || v >= (long long)(uid_t)-1) return -1;
    *out = v;
    return 0;
}

/* Parse one credentials option at argv[*i] into c.  1 if it was one (and valid), 0 if the
 * option is not a credentials option, -1 if its value is bad. */
static int shim_cred_opt(shim_cred *c, int argc, char **argv, int *i)
{
    const char *o = argv[*i];
    if (strcmp(o, "--uid") && strcmp(o, "--gid") && strcmp(o, "--groups") && strcmp(o, "--workdir"))
        return 0;
    if (*i + 1 >= argc) return -1;
    const char *v = argv[++*i];
    long long id;
    if (!strcmp(o, "--workdir")) {
        c->workdir = v;
    } else if (!strcmp(o, "--groups")) {
        free(c->groups);
        c->groups = NULL;
        c->ngroups = 0;
        size_t n = 1;
        for (const char *p = v; *p; p++) n += *p == ',';
        c->groups = calloc(n, sizeof *c->groups);
        if (!c->groups) abort();
        char *dup = strdup(v), *save = NULL;
        if (!dup) abort();
        for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (shim_id(t, &id)) {
                free(dup);
                return -1;
            }
            c->groups[c->ngroups++] = (gid_t)id;
        }
        free(dup);
    } else {
        if (shim_id(v, &id)) return -1;
        if (!strcmp(o, "--uid"))
            c->uid = (uid_t)id, c->set |= 1;
        else
            c->gid = (gid_t)id, c->set |= 2;
    }
    return 1;
}

/*
 * In the command's process, right before exec: become the job's account the way slurmstepd
 * does (supplementary groups, then the group, then the user; real, effective and saved ids
 * all), check that root cannot be regained, then enter the working directory as that user.
 * The shim itself keeps its privileges: it writes the status file the daemon trusts and is
 * the task's subreaper, out of the job's reach.  0, or 126 after a message on stderr (the
 * task's log).
 */
/* Set in the command's process when the credentials were set but the workdir could not be
 * entered: the error sent back says so (SHIM_CHDIR_ERR + errno), not "cannot become the
 * user". */
static int shim_chdir_failed;
#define SHIM_CHDIR_ERR 4096

static int shim_drop_privileges(const shim_cred *c)
{
    if (!c->set) return 0;
    const char *step = "setgroups";
    if (setgroups(c->ngroups, c->groups) != 0) goto fail;
    /* as root, setgid / setuid set the real, effective and saved ids */
    step = "setgid";
    if (setgid(c->gid) != 0) goto fail;
    step = "setuid";
    if (setuid(c->uid) != 0) goto fail;
    if (getuid() != c->uid || geteuid() != c->uid || getgid() != c->gid || getegid() != c->gid) {
        fprintf(stderr, "gsched: the task's ids are not uid %lld gid %lld after the switch\n",
                (long long)c->uid, (long long)c->gid);
        return 126;
    }
    /* a saved uid 0 would let the job take root back */
    if (c->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
        fprintf(stderr, "gsched: the task could regain root after dropping it: not started\n");
        return 126;
    }
    if (c->workdir && chdir(c->workdir) != 0) {
        int e = errno;
        fprintf(stderr, "gsched: cannot enter workdir '%s' as uid %lld: %s\n", c->workdir,
                (long long)c->uid, strerror(e));
        shim_chdir_failed = 1;
        errno = e;
        return 126;
    }
    return 0;
fail:
    fprintf(stderr, "gsched: cannot run the task as uid %lld gid %lld (%s): %s\n",
            (long long)c->uid, (long long)c->gid, step, strerror(errno));
    return 126;
}

/*
 * After the command: nothing of the task may outlive it.  In a stop (SIGTERM) the grace
 * period belongs to the whole task, so wait for every process (the daemon's kill at the end of
 * the grace period bounds this); otherwise kill what is left at once - the processes of the
 * job cgroup (cg_job), or without cgroups every descendant (we are a subreaper: orphans,
 * setsid'ed or double-forked ones included, are below us) - and wait until none is left.
 * The log pump (lp, NULL = none) keeps draining meanwhile.
 */
static void shim_end_task(const char *cg_job, gsd_logpump *lp)
{
    if (shim_got_term) {
        shim_wait_all(lp);
        while (cg_job && gsd_cg_populated(cg_job) == 1) {
            if (lp && lp->in >= 0)
                gsd_logpump_step(lp, 50);
            else
                sleep_ms(50);
        }
        return;
    }
    if (cg_job) {
        gsd_cg_kill(cg_job, 0);
        for (int w = 0; w < 200 && gsd_cg_populated(cg_job) == 1; w++) {
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
            sleep_ms(25);
            if (w % 20 == 19) gsd_cg_kill(cg_job, 0);
        }
    } else {
        long left = gsd_proc_kill_tree(getpid(), 30000, 1);
        if (left)
            fprintf(stderr,
                    "gsched: %ld process(es) of the task still alive after 30s of killing its "
                    "process tree: they may outlive the task (run the daemon with cgroups)\n",
                    left);
    }
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int gsd_shim_main(int argc, char **argv)
{
    const char *status = NULL, *cgroup = NULL;
    long long log_cap = 0, env_fd = -1;
    shim_cred cred = {0};
    int i = 1, cr;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--status") && i + 1 < argc) {
            status = argv[++i];
        } else if ((cr = shim_cred_opt(&cred, argc, argv, &i)) != 0) {
            if (cr < 0) {
                free(cred.groups);
                shim_usage();
                return 2;
            }
        } else if (!strcmp(argv[i], "--log-cap") && i + 1 < argc) {
            char *e;
            log_cap = strtoll(argv[++i], &e, 10);
            if (*e || log_cap < 0) {
                free(cred.groups);
                shim_usage();
                return 2;
            }
        } else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
            cgroup = argv[++i];
        } else if (!strcmp(argv[i], "--env-fd") && i + 1 < argc) {
            char *e;
            env_fd = strtoll(argv[++i], &e, 10);
            if (*e || env_fd < 0 || env_fd > INT_MAX) {
                free(cred.groups);
                shim_usage();
                return 2;
            }
        } else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            shim_usage();
            return 2;
        }
    }
    if (!status || i >= argc || (cred.set && cred.set != 3)) {
        free(cred.groups);
        shim_usage();
        return 2;
    }
    /* the shim outlives SIGTERM so it can record how the command ended; it notes that a
     * stop is under way */
    struct sigaction ign, dfl, term, chld;
    memset(&ign, 0, sizeof ign);
    memset(&dfl, 0, sizeof dfl);
    memset(&term, 0, sizeof term);
    memset(&chld, 0, sizeof chld);
    ign.sa_handler = SIG_IGN;
    dfl.sa_handler = SIG_DFL;
    term.sa_handler = shim_on_term;
    chld.sa_handler = shim_on_chld; /* no SA_RESTART: wakes the pump's poll */
    int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) sigaction(sigs[k], &ign, NULL);
    sigaction(SIGTERM, &term, NULL);
    sigaction(SIGCHLD, &chld, NULL);
    /* descendants whose parent dies (a shell killed by SIGTERM while the program it started
     * checkpoints) become our children, so we can wait for them */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    shim_status_reserve(status);
    /* the job's environment, for the command only (the shim runs with the daemon's) */
    char **job_env = NULL, *job_env_buf = NULL;
    if (env_fd >= 0) {
        job_env = shim_read_env((int)env_fd, &job_env_buf);
        if (!job_env) {
            char why[160];
            snprintf(why, sizeof why, "cannot read the job's environment: %s", strerror(errno));
            fprintf(stderr, "gsched: %s\n", why);
            free(cred.groups);
            shim_status_write(status, 126, why);
            return 126;
        }
    }
    char cg_job[PATH_MAX], cg_procs[PATH_MAX + 16];
    if (cgroup) {
        snprintf(cg_job, sizeof cg_job, "%s/job", cgroup);
        snprintf(cg_procs, sizeof cg_procs, "%s/cgroup.procs", cg_job);
    }
    fflush(stdout);
    /* the command writes into a pipe the shim drains into the log (stdout), capped; without a
     * pipe (out of descriptors) it writes to the log directly, as before */
    gsd_logpump lp;
    int pw = -1;
    int piped = gsd_logpump_open(&lp, 1, (int64_t)log_cap, &pw) == 0;
    /* the command's exec error comes back through a close-on-exec pipe: end of file = it
     * runs; an errno = it could not be started (a launch failure, not its own exit code) */
    int ep[2];
    int have_ep = pipe(ep) == 0; /* the shim is single-threaded: no race before FD_CLOEXEC */
    if (have_ep) {
        fcntl(ep[0], F_SETFD, FD_CLOEXEC);
        fcntl(ep[1], F_SETFD, FD_CLOEXEC);
    }
    /* a SIGTERM that reaches the shim before the command exists (a stop or a drain right after
     * the launch) must still reach the command: blocked across fork, then passed on */
    sigset_t termset, oldset;
    sigemptyset(&termset);
    sigaddset(&termset, SIGTERM);
    sigprocmask(SIG_BLOCK, &termset, &oldset);
    pid_t pid = fork();
    if (pid != 0) {
        sigprocmask(SIG_SETMASK, &oldset, NULL); /* a pending SIGTERM runs shim_on_term now */
        if (pid > 0 && shim_got_term) kill(pid, SIGTERM);
    }
    if (pid < 0) {
        fprintf(stderr, "gsched: fork failed: %s\n", strerror(errno));
        shim_status_write(status, 126, "fork failed");
        free(cred.groups);
        free(job_env);
        free(job_env_buf);
        return 126;
    }
    if (pid == 0) {
        /* the command and everything it starts live in the task's job cgroup */
        if (cgroup && gsd_cg_join(cg_procs) != 0) {
            fprintf(stderr, "gsched: cannot join cgroup %s: %s\n", cg_job, strerror(errno));
            _exit(126);
        }
        for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) sigaction(sigs[k], &dfl, NULL);
        sigaction(SIGCHLD, &dfl, NULL);
        sigprocmask(SIG_SETMASK, &oldset, NULL);
        if (piped) {
            dup2(pw, 1);
            dup2(pw, 2);
        }
        if (have_ep) close(ep[0]);
        int dc = shim_drop_privileges(&cred);
        if (dc) {
            /* could not become the job's user or enter its workdir as that user: a launch
             * failure too (-errno through the pipe; the details are in the log) */
            int e = -(errno ? errno : EPERM);
            if (shim_chdir_failed) e -= SHIM_CHDIR_ERR;
            if (have_ep) {
                ssize_t w = write(ep[1], &e, sizeof e);
                (void)w;
            }
            _exit(dc);
        }
        /* now, as the job's user: its environment (execvp searches its PATH) */
        if (job_env) environ = job_env;
        execvp(argv[i], argv + i);
        int e = errno;
        if (have_ep) {
            ssize_t w = write(ep[1], &e, sizeof e);
            (void)w;
        }
        fprintf(stderr, "gsched: cannot run '%s': %s\n", argv[i], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    int exec_errno = 0;
    if (have_ep) {
        close(ep[1]);
        ssize_t n;
        while ((n = read(ep[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
        }
        if (n != (ssize_t)sizeof exec_errno) exec_errno = 0;
        close(ep[0]);
    }
    if (piped) close(pw);
    int st = shim_wait_command(pid, piped ? &lp : NULL), code = wait_code(st);
    free(cred.groups);
    free(job_env);
    free(job_env_buf);
    /* During a stop (SIGTERM) the grace period belongs to the whole task: the command may be
     * gone (a shell dies of SIGTERM at once) while the program it started still writes its
     * checkpoint; otherwise what is left is killed at once (shim_end_task), then the output it
     * wrote before is drained. */
    shim_end_task(cgroup ? cg_job : NULL, piped ? &lp : NULL);
    if (piped) {
        gsd_logpump_drain(&lp, shim_got_term ? 1000 : 500);
        gsd_logpump_close(&lp);
    }
    char why[PATH_MAX + 128];
    if (exec_errno <= -SHIM_CHDIR_ERR)
        snprintf(why, sizeof why, "cannot enter the workdir '%s' as the job's user (uid %lld): %s",
                 cred.workdir ? cred.workdir : "", (long long)cred.uid,
                 strerror(-exec_errno - SHIM_CHDIR_ERR));
    else if (exec_errno < 0)
        snprintf(why, sizeof why, "cannot start the task as the job's user: %s",
                 strerror(-exec_errno));
    else if (exec_errno)
        snprintf(why, sizeof why, "cannot run '%s': %s", argv[i], strerror(exec_errno));
    shim_status_write(status, code, exec_errno ? why : NULL);
    if (WIFSIGNALED(st))
        printf("=== gsched: task killed by signal %d (exit code %d) ===\n", WTERMSIG(st), code);
    else
        printf("=== gsched: task exited with code %d ===\n", code);
    fflush(stdout);
    return code;
}
