/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_exec.c - the local executor with the real task shim (the
 * gsched binary): task environment (GSCHED_*, CUDA_VISIBLE_DEVICES, RANK,
 * MASTER_*), one process group per task, exit codes, the stop protocol
 * (SIGTERM, grace, SIGKILL), a failed task stopping its peers, suspend /
 * resume, finding tasks again after a "daemon restart" (a second executor
 * on the same state directory), lost and never-started tasks, and the
 * sweep of orphaned tasks.  Checkpoint-based suspend (suspend=cuda) through
 * the fake libcuda (tests/fake_cuda.c): the call sequence, the worker thread
 * (a slow checkpoint never blocks the caller), launches onto GPUs being
 * vacated waiting for it, the failures and what they leave, remaps, and a job
 * without CUDA processes (plain SIGSTOP).  Every wait is bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "exec_local.h"
#include "harness.h"

#ifndef GSCHED_BIN
#define GSCHED_BIN "gsched"
#endif

static char dir[256];

static const char *state_dir(void)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gsched-exec-test-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    return dir;
}

static gs_time now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (gs_time)ts.tv_sec * GS_SEC + ts.tv_nsec / 1000;
}

typedef struct seen {
    int started, exited, done, killed, peer;
    int64_t pids[4];
    int codes[4];
    gsd_xev last;  /* RUN_DONE */
    int susp;      /* GSD_X_SUSPENDED reports */
    gsd_xev lsusp; /* the last one (msg in smsg) */
    char smsg[256];
} seen;

static void on_ev(void *ud, const gsd_xev *ev)
{
    seen *s = ud;
    switch (ev->kind) {
    case GSD_X_TASK_STARTED:
        if (ev->task < 4) s->pids[ev->task] = gsd_local_handle_pid(ev->handle);
        s->started++;
        break;
    case GSD_X_TASK_EXITED:
        if (ev->task < 4) s->codes[ev->task] = ev->exit_code;
        s->exited++;
        break;
    case GSD_X_PEER_FAILED: s->peer++; break;
    case GSD_X_KILLED: s->killed++; break;
    case GSD_X_RUN_DONE:
        s->done++;
        s->last = *ev;
        s->last.msg = NULL;
        break;
    case GSD_X_SUSPENDED:
        s->susp++;
        s->lsusp = *ev;
        s->lsusp.msg = NULL;
        snprintf(s->smsg, sizeof s->smsg, "%s", ev->msg ? ev->msg : "");
        break;
    default: break; /* the local executor reports no cluster events */
    }
}

/* Poll until the run is done (or timeout_s); returns 1 when done. */
static int wait_done(gsd_exec *x, seen *s, double timeout_s)
{
    for (int i = 0; i < (int)(timeout_s * 50); i++) {
        gsd_exec_poll(x, now_us(), on_ev, s);
        if (s->done) return 1;
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}

typedef struct job {
    gsd_spec spec;
    const char *node[4], *cuda[4], *gpus[4];
    gsd_launch l;
} job;

static void make_job(job *j, int64_t id, int ntasks, const char *shell)
{
    memset(j, 0, sizeof *j);
    gsd_spec_init(&j->spec);
    j->spec.shell = strdup(shell);
    j->spec.name = strdup("t");
    j->spec.ntasks = ntasks;
    j->spec.gpus_per_task = 2;
    static const char *cudas[] = {"0,1", "2,3", "4,5", "6,7"};
    for (int i = 0; i < ntasks; i++) {
        j->node[i] = i ? "n1" : "n0";
        j->cuda[i] = cudas[i];
        j->gpus[i] = cudas[i];
    }
    j->l = (gsd_launch){.job_id = id,
                        .run = 1,
                        .ntasks = ntasks,
                        .task_index_base = 0,
                        .world_size = ntasks,
                        .task_node = j->node,
                        .task_cuda = j->cuda,
                        .task_gpus = j->gpus,
                        .spec = &j->spec,
                        .group = id,
                        .master_port = 29555,
                        .grace = 300 * GS_MSEC};
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void env_groups_and_exit_codes(void)
{
    gsd_exec *x;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &x, &d));
    job j;
    /* task 1 fails (exit 1), which stops the rest of the gang: it waits until task 0 has
     * ended (its marker, then a moment for the exit itself), or task 0 could be stopped
     * (143) instead of exiting 0 on a loaded machine */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "echo \"idx=$GSCHED_TASK_INDEX ws=$GSCHED_WORLD_SIZE cuda=$CUDA_VISIBLE_DEVICES "
             "rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT job=$GSCHED_JOB_ID "
             "node=$GSCHED_NODE run=$GSCHED_RUN\"; "
             "echo \"pgid=$(cut -d' ' -f5 /proc/$$/stat) shim=$PPID\"; "
             "m=%s/t11-done; if [ $GSCHED_TASK_INDEX = 0 ]; then : > $m; else "
             "i=0; while [ ! -e $m ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; "
             "sleep 1; fi; exit $GSCHED_TASK_INDEX",
             state_dir());
    make_job(&j, 11, 2, cmd);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT_EQ(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s), GS_EEXIST);
    ASSERT_EQ(s.started, 2);
    ASSERT(wait_done(x, &s, 20));
    ASSERT_EQ(s.exited, 2);
    ASSERT_EQ(s.codes[0], 0);
    ASSERT_EQ(s.codes[1], 1);
    ASSERT_EQ(s.last.exit_code, 1);
    ASSERT_EQ(s.last.failed_task, 1);
    ASSERT_EQ(s.last.killed, 0);
    char path[512], want[256];
    gsd_exec_log_path(x, 11, 1, path, sizeof path);
    char *log = slurp(path);
    ASSERT(log);
    ASSERT_CONTAINS(log, "idx=1 ws=2 cuda=2,3 rank=1 world=2 master=127.0.0.1:29555 job=11 node=n1 "
                         "run=1");
    ASSERT_CONTAINS(log, "=== gsched: task exited with code 1 ===");
    /* the task's shell is in a process group led by its shim, whose pid we recorded */
    snprintf(want, sizeof want, "pgid=%lld shim=%lld", (long long)s.pids[1], (long long)s.pids[1]);
    ASSERT_CONTAINS(log, want);
    gsd_exec_forget(x, 11);
    ASSERT_EQ(gsd_exec_nruns(x), 0);
    struct stat st;
    snprintf(path, sizeof path, "%s/runs/11.1", state_dir());
    ASSERT(stat(path, &st) != 0); /* run directory removed */
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* Poll task 0's log of job ID until it contains TEXT (bounded: about 10 s of polls); a task
 * prints a marker once it has installed its SIGTERM trap, so a stop sent after it sees the
 * trap however slow the machine is.  Returns 1 when found. */
static int wait_log(gsd_exec *x, int64_t id, const char *text)
{
    char path[512];
    gsd_exec_log_path(x, id, 0, path, sizeof path);
    for (int i = 0; i < 500; i++) {
        char *log = slurp(path);
        if (log && strstr(log, text)) return 1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return 0;
}

static void stop_protocol(void)
{
    gsd_exec *x;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &x, &d));
    /* ignores SIGTERM: SIGKILL after the grace period */
    job j;
    make_job(&j, 21, 1, "trap '' TERM; echo ready; sleep 30");
    seen s = {0};
    gs_time t0 = now_us();
    ASSERT_OK(gsd_exec_launch(x, &j.l, t0, on_ev, &s));
    /* stop only once the trap is set: a SIGTERM before it would end the shell at once */
    ASSERT(wait_log(x, 21, "ready"));
    ASSERT_OK(gsd_exec_stop(x, 21, now_us(), 400 * GS_MSEC));
    ASSERT(gsd_exec_next_deadline(x) != GS_TIME_MAX);
    ASSERT(wait_done(x, &s, 20));
    ASSERT_EQ(s.killed, 1);
    ASSERT_EQ(s.last.killed, 1);
    ASSERT_EQ(s.last.exit_code, 137);
    ASSERT(now_us() - t0 >= 400 * GS_MSEC);
    gsd_exec_forget(x, 21);
    gsd_spec_release(&j.spec);
    /* checkpoints on SIGTERM and exits: no SIGKILL */
    make_job(&j, 22, 1,
             "trap 'echo checkpoint; exit 0' TERM; echo ready; while :; do sleep 0.05; done");
    memset(&s, 0, sizeof s);
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 22, "ready"));
    ASSERT_OK(gsd_exec_stop(x, 22, now_us(), 20 * GS_SEC));
    ASSERT(wait_done(x, &s, 15));
    ASSERT_EQ(s.killed, 0);
    ASSERT_EQ(s.last.exit_code, 0);
    char path[512];
    gsd_exec_log_path(x, 22, 0, path, sizeof path);
    ASSERT_CONTAINS(slurp(path), "checkpoint");
    gsd_exec_forget(x, 22);
    ASSERT_EQ(gsd_exec_stop(x, 22, now_us(), 0), GS_ENOENT);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/*
 * The grace period belongs to the whole task, not only to the process the shim started: a
 * string command runs under /bin/sh -c, which dies of SIGTERM at once, while the program it
 * started (python, torchrun) handles SIGTERM and checkpoints.  Its checkpoint must not be
 * cut short by a SIGKILL to the group when the shell is gone.
 */
static void grace_for_the_whole_task(void)
{
    gsd_exec *x;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &x, &d));
    char script[512], cmd[700];
    snprintf(script, sizeof script, "%s/ckpt-child.sh", state_dir());
    FILE *f = fopen(script, "w");
    ASSERT(f != NULL);
    fputs("trap 'echo saving; sleep 0.5; echo saved; exit 0' TERM\n"
          "echo ready\n"
          "while :; do sleep 0.05; done\n",
          f);
    fclose(f);
    /* the top shell has no trap and does not exec its last command (dash) */
    snprintf(cmd, sizeof cmd, "sh %s; echo after", script);
    job j;
    make_job(&j, 23, 1, cmd);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 23, "ready"));
    ASSERT_OK(gsd_exec_stop(x, 23, now_us(), 20 * GS_SEC));
    char path[512];
    gsd_exec_log_path(x, 23, 0, path, sizeof path);
    ASSERT(wait_done(x, &s, 15));
    ASSERT_EQ(s.killed, 0);
    ASSERT_CONTAINS(slurp(path), "saved");
    gsd_exec_forget(x, 23);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static void failed_task_stops_peers(void)
{
    gsd_exec *x;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &x, &d));
    job j;
    make_job(&j, 31, 2, "if [ $GSCHED_TASK_INDEX = 1 ]; then sleep 0.2; exit 5; fi; sleep 30");
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_done(x, &s, 20));
    ASSERT_EQ(s.peer, 1);
    ASSERT_EQ(s.last.failed_task, 1);
    ASSERT_EQ(s.last.exit_code, 5);
    ASSERT_EQ(s.codes[0], 143); /* SIGTERM */
    gsd_exec_forget(x, 31);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static char proc_state(int64_t pid)
{
    char st = '?';
    gsd_proc_start_ticks(pid, &st);
    return st;
}

/* suspend=sigstop: the suspend tests below do not depend on the machine's driver */
static const char *const sigstop_opt[] = {"suspend=sigstop"};

static void suspend_resume(void)
{
    gsd_exec *x;
    gs_diag d;
    ASSERT_OK(gsd_exec_create(
        "local",
        &(gsd_exec_conf){
            .state_dir = state_dir(), .self_exe = GSCHED_BIN, .opts = sigstop_opt, .nopts = 1},
        &x, &d));
    job j;
    make_job(&j, 41, 1, "echo ready; sleep 30");
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    /* once the task runs (not after a fixed delay: its process group must exist) */
    ASSERT(wait_log(x, 41, "ready"));
    ASSERT_OK(gsd_exec_suspend(x, 41, 1));
    int stopped = 0;
    for (int i = 0; i < 100 && !stopped; i++) {
        stopped = proc_state(s.pids[0]) == 'T';
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(stopped);
    ASSERT_OK(gsd_exec_suspend(x, 41, 0));
    int resumed = 0;
    for (int i = 0; i < 100 && !resumed; i++) {
        resumed = proc_state(s.pids[0]) != 'T';
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(resumed);
    /* stopping a suspended task resumes it first, so SIGTERM is handled */
    ASSERT_OK(gsd_exec_suspend(x, 41, 1));
    ASSERT_OK(gsd_exec_stop(x, 41, now_us(), 10 * GS_SEC));
    ASSERT(wait_done(x, &s, 8));
    ASSERT_EQ(s.last.killed, 0);
    gsd_exec_forget(x, 41);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/*
 * Processes in process group pgid (scanning /proc): how many, and how many are stopped.  A
 * zombie counts as stopped: a child that exited just before SIGSTOP stays unreaped while its
 * parent is stopped, and it cannot run either.  So does a process in uninterruptible sleep
 * (D): a shell that vfork()ed stays in D until its child execs, which a child stopped before
 * exec never does; the kernel cannot stop it meanwhile, and it cannot run either.  Whether
 * work really stopped is checked by the counters.
 */
static void group_states(int64_t pgid, int *n, int *stopped)
{
    *n = *stopped = 0;
    DIR *dp = opendir("/proc");
    if (!dp) return;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *rp = strrchr(buf, ')');
        char st;
        long long ppid, pg;
        if (!rp || sscanf(rp + 1, " %c %lld %lld", &st, &ppid, &pg) != 3 || pg != pgid) continue;
        (*n)++;
        *stopped += st == 'T' || st == 'Z' || st == 'D';
    }
    closedir(dp);
}

static long counter(int task)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cnt-%d", state_dir(), task);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

/* Wait until every process of both tasks' groups is stopped (want=1) or none is (want=0). */
static int wait_groups(const seen *s, int want)
{
    for (int i = 0; i < 250; i++) {
        int ok = 1;
        for (int t = 0; t < 2; t++) {
            int n, st;
            group_states(s->pids[t], &n, &st);
            /* the shim and the command at least */
            ok &= n >= 2 && (want ? st == n : st == 0);
        }
        if (ok) return 1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return 0;
}

/* Both task counters advance within a few seconds. */
static int progressing(void)
{
    long a = counter(0), b = counter(1);
    for (int i = 0; i < 250; i++) {
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
        if (counter(0) > a + 2 && counter(1) > b + 2) return 1;
    }
    return 0;
}

/*
 * Suspend / resume as a policy asks for it (records SUSPEND / RESUME): SIGSTOP stops every
 * process of every task (shim, command, its children), no work is done and nothing is
 * reported while suspended, SIGCONT continues it; a suspended run survives a daemon
 * restart and the new executor can continue it (what the daemon does at recovery);
 * stopping a suspended, adopted run continues it first so SIGTERM is handled.
 */
static void suspend_stops_work_and_survives_restart(void)
{
    gsd_exec *a, *b;
    gs_diag d;
    gsd_exec_conf sc = {
        .state_dir = state_dir(), .self_exe = GSCHED_BIN, .opts = sigstop_opt, .nopts = 1};
    ASSERT_OK(gsd_exec_create("local", &sc, &a, &d));
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "trap 'exit 143' TERM; f=%s/cnt-$GSCHED_TASK_INDEX; i=0; "
             "while :; do i=$((i+1)); echo $i > $f.tmp; mv $f.tmp $f; sleep 0.02; done",
             state_dir());
    job j;
    make_job(&j, 71, 2, cmd);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(a, &j.l, now_us(), on_ev, &s));
    ASSERT(progressing());
    ASSERT_OK(gsd_exec_suspend(a, 71, 1));
    ASSERT(wait_groups(&s, 1));
    long c0 = counter(0), c1 = counter(1);
    for (int i = 0; i < 15; i++) { /* 300 ms: no progress, nothing reported */
        gsd_exec_poll(a, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT_EQ(counter(0), c0);
    ASSERT_EQ(counter(1), c1);
    ASSERT_EQ(s.exited, 0);
    ASSERT_EQ(s.done, 0);
    ASSERT_OK(gsd_exec_suspend(a, 71, 0));
    ASSERT(wait_groups(&s, 0));
    ASSERT(progressing());
    /* suspended when the daemon dies: still suspended after it, continued by the new one */
    ASSERT_OK(gsd_exec_suspend(a, 71, 1));
    ASSERT(wait_groups(&s, 1));
    gsd_exec_destroy(a);
    ASSERT_OK(gsd_exec_create("local", &sc, &b, &d));
    int alive, exited, lost;
    ASSERT_OK(gsd_exec_recover(b, 71, 1, 2, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(alive, 2);
    ASSERT(wait_groups(&s, 1));
    ASSERT_OK(gsd_exec_suspend(b, 71, 0));
    ASSERT(wait_groups(&s, 0));
    ASSERT(progressing());
    /* stop a suspended adopted run: SIGCONT first, then SIGTERM is handled (no SIGKILL) */
    ASSERT_OK(gsd_exec_suspend(b, 71, 1));
    ASSERT(wait_groups(&s, 1));
    seen r = {0};
    ASSERT_OK(gsd_exec_stop(b, 71, now_us(), 20 * GS_SEC));
    ASSERT(wait_done(b, &r, 15));
    ASSERT_EQ(r.killed, 0);
    ASSERT_EQ(r.last.exit_code, 143);
    ASSERT_EQ(gsd_exec_suspend(b, 72, 1), GS_ENOENT);
    gsd_exec_forget(b, 71);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(b);
}

static void recovery_after_restart(void)
{
    gs_diag d;
    gsd_exec *a, *b;
    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &a, &d));
    job j1, j2, j3;
    /* job 51 survives and ends after the restart, when the test creates its flag file (no
     * timing assumption); 52 is killed while nobody watches: lost; 53 is claimed by nobody:
     * swept.  Each prints "ready" once it runs, so the "daemon" dies only after every task
     * has written its pid file and started its command. */
    char flag[400], cmd1[600];
    snprintf(flag, sizeof flag, "%s/t51-go", state_dir());
    snprintf(cmd1, sizeof cmd1, "echo ready; while [ ! -e %s ]; do sleep 0.02; done; exit 7", flag);
    make_job(&j1, 51, 1, cmd1);
    make_job(&j2, 52, 1, "echo ready; sleep 30");
    make_job(&j3, 53, 1, "echo ready; sleep 30");
    seen s1 = {0}, s2 = {0}, s3 = {0};
    ASSERT_OK(gsd_exec_launch(a, &j1.l, now_us(), on_ev, &s1));
    ASSERT_OK(gsd_exec_launch(a, &j2.l, now_us(), on_ev, &s2));
    ASSERT_OK(gsd_exec_launch(a, &j3.l, now_us(), on_ev, &s3));
    ASSERT(wait_log(a, 51, "ready") && wait_log(a, 52, "ready") && wait_log(a, 53, "ready"));
    gsd_exec_destroy(a); /* the "daemon" dies; its tasks do not */
    ASSERT_EQ(kill((pid_t)s1.pids[0], 0), 0);
    kill((pid_t)-s2.pids[0], SIGKILL);
    int st;
    waitpid((pid_t)s2.pids[0], &st, 0); /* as init would */

    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &b, &d));
    int alive, exited, lost;
    ASSERT_OK(gsd_exec_recover(b, 51, 1, 1, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(alive, 1);
    ASSERT_EQ(lost, 0);
    ASSERT_OK(gsd_exec_recover(b, 52, 1, 1, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(alive, 0);
    ASSERT_EQ(lost, 1);
    ASSERT_OK(gsd_exec_recover(b, 54, 1, 2, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(lost, 2);                                /* no run directory: never started */
    ASSERT_EQ(gsd_exec_poll_within(b), 200 * GS_MSEC); /* adopted tasks: /proc polling */
    ASSERT_EQ(gsd_exec_sweep(b, NULL, NULL), 1);       /* job 53 */
    char sp[512];
    snprintf(sp, sizeof sp, "%s/runs/53.1", state_dir());
    struct stat stt;
    ASSERT(stat(sp, &stt) != 0);
    ASSERT(kill((pid_t)s3.pids[0], 0) != 0 || proc_state(s3.pids[0]) == 'Z');
    waitpid((pid_t)s3.pids[0], &st, WNOHANG);
    /* the adopted task's exit code comes from its status file */
    FILE *go = fopen(flag, "w");
    ASSERT(go != NULL);
    fclose(go);
    seen r = {0};
    for (int i = 0; i < 500; i++) {
        gsd_exec_poll(b, now_us(), on_ev, &r);
        if (r.done == 3) break;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT_EQ(r.done, 3);
    ASSERT_EQ(r.codes[0], 7);
    ASSERT_EQ(gsd_exec_poll_within(b), 500 * GS_MSEC); /* registered runs, none adopted alive */
    gsd_exec_forget(b, 51);
    gsd_exec_forget(b, 52);
    gsd_exec_forget(b, 54);
    gsd_spec_release(&j1.spec);
    gsd_spec_release(&j2.spec);
    gsd_spec_release(&j3.spec);
    gsd_exec_destroy(b);
}

static void launch_failures(void)
{
    gs_diag d;
    gsd_exec *x;
    ASSERT_OK(gsd_exec_create("local", &(gsd_exec_conf){state_dir(), GSCHED_BIN}, &x, &d));
    job j;
    make_job(&j, 61, 1, "true");
    j.spec.workdir = strdup("/nonexistent/dir");
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_done(x, &s, 5));
    ASSERT_EQ(s.last.exit_code, 126);
    ASSERT_EQ(s.last.launch_failed, GSD_XLAUNCH_JOB); /* the executor's failure, not the job's */
    gsd_exec_forget(x, 61);
    gsd_spec_release(&j.spec);
    make_job(&j, 62, 1, "x");
    free(j.spec.shell);
    j.spec.shell = NULL;
    j.spec.argv = calloc(2, sizeof *j.spec.argv);
    j.spec.argv[0] = strdup("/no/such/program");
    j.spec.argc = 1;
    memset(&s, 0, sizeof s);
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_done(x, &s, 10));
    ASSERT_EQ(s.last.exit_code, 127);
    ASSERT_EQ(s.last.launch_failed, GSD_XLAUNCH_JOB); /* the shim could not exec it */
    char path[512];
    gsd_exec_log_path(x, 62, 0, path, sizeof path);
    ASSERT_CONTAINS(slurp(path), "cannot run '/no/such/program'");
    gsd_exec_forget(x, 62);
    gsd_spec_release(&j.spec);
    /* the command's own 127 is its exit code, not a launch failure */
    make_job(&j, 63, 1, "exit 127");
    memset(&s, 0, sizeof s);
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_done(x, &s, 10));
    ASSERT_EQ(s.last.exit_code, 127);
    ASSERT_EQ(s.last.launch_failed, GSD_XLAUNCH_NONE);
    gsd_exec_forget(x, 63);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* The pid a task wrote to file F (bounded wait), or -1. */
static int64_t read_pid_file(const char *path)
{
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(path, "r");
        long long p = -1;
        if (f) {
            int ok = fscanf(f, "%lld", &p) == 1;
            fclose(f);
            if (ok && p > 0) return p;
        }
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return -1;
}

/* 1 if pid is gone (or a zombie) within about 2 s. */
static int pid_gone(int64_t pid)
{
    for (int i = 0; i < 100; i++) {
        char st = '?';
        if (gsd_proc_start_ticks(pid, &st) < 0 || st == 'Z' || st == 'X') return 1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return 0;
}

/* A command that leaves a setsid'ed sleep (new session: out of the shim's process group) and
 * a double-forked one behind, their pids in ID-a and ID-b under the state directory. */
static void escaping_cmd(char *cmd, size_t cap, int id, const char *tail)
{
    snprintf(cmd, cap,
             "setsid sleep 600 & echo $! > %s/esc%d-a; "
             "sh -c 'setsid sleep 600 & echo $! > %s/esc%d-b'; %s",
             state_dir(), id, state_dir(), id, tail);
}

static int escaped_gone(int id, int64_t *pa, int64_t *pb)
{
    char a[400], b[400];
    snprintf(a, sizeof a, "%s/esc%d-a", state_dir(), id);
    snprintf(b, sizeof b, "%s/esc%d-b", state_dir(), id);
    *pa = read_pid_file(a);
    *pb = read_pid_file(b);
    return *pa > 0 && *pb > 0 && pid_gone(*pa) && pid_gone(*pb);
}

/*
 * Process tracking (issue 11 item 4): processes a task left behind with setsid or a double
 * fork die with it - when the command exits, and at the end of a stop's grace period - with
 * cgroups ("auto", where a cgroup2 hierarchy is writable here) and without ("off").
 */
static void escaped_processes_die_with_the_task(void)
{
    const char *modes[] = {"off", "auto"};
    for (int m = 0; m < 2; m++) {
        gsd_exec *x;
        gs_diag d;
        gsd_exec_conf conf = {.state_dir = state_dir(), .self_exe = GSCHED_BIN, .cgroup = modes[m]};
        ASSERT_OK(gsd_exec_create("local", &conf, &x, &d));
        int id = 81 + 2 * m;
        char cmd[1200];
        escaping_cmd(cmd, sizeof cmd, id, "echo started; exit 3");
        job j;
        make_job(&j, id, 1, cmd);
        seen s = {0};
        ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
        ASSERT(wait_done(x, &s, 20));
        ASSERT_EQ(s.last.exit_code, 3);
        int64_t a, b;
        if (!escaped_gone(id, &a, &b))
            T_FAIL("%s: escaped %lld %lld alive", modes[m], (long long)a, (long long)b);
        gsd_exec_forget(x, id);
        gsd_spec_release(&j.spec);
        /* a stop: the command ignores SIGTERM, everything dies at the end of the grace */
        escaping_cmd(cmd, sizeof cmd, id + 1, "trap '' TERM; echo ready; sleep 600");
        make_job(&j, id + 1, 1, cmd);
        memset(&s, 0, sizeof s);
        ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
        ASSERT(wait_log(x, id + 1, "ready"));
        ASSERT_OK(gsd_exec_stop(x, id + 1, now_us(), 300 * GS_MSEC));
        ASSERT(wait_done(x, &s, 20));
        ASSERT_EQ(s.last.killed, 1);
        if (!escaped_gone(id + 1, &a, &b))
            T_FAIL("%s: escaped %lld %lld alive after the stop", modes[m], (long long)a,
                   (long long)b);
        gsd_exec_forget(x, id + 1);
        gsd_spec_release(&j.spec);
        gsd_exec_destroy(x);
    }
}

/*
 * With cgroups, recovery treats a task whose shim is gone but whose cgroup still has
 * processes as alive (its GPUs stay taken), kills what is left and reports it done only once
 * the cgroup is empty; the cgroup is then removed.
 */
static void cgroup_recovery_finds_leftovers(void)
{
    gs_diag d;
    gsd_exec *a, *b;
    gsd_exec_conf conf = {.state_dir = state_dir(), .self_exe = GSCHED_BIN, .cgroup = "auto"};
    ASSERT_OK(gsd_exec_create("local", &conf, &a, &d));
    char cg[600];
    snprintf(cg, sizeof cg, "%s/runs/91.1/cgroup", state_dir());
    job j;
    char cmd[1200];
    escaping_cmd(cmd, sizeof cmd, 91, "echo ready; sleep 600");
    make_job(&j, 91, 1, cmd);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(a, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_log(a, 91, "ready"));
    char base[512] = "";
    FILE *f = fopen(cg, "r");
    if (!f) { /* no cgroups here: nothing to recover from */
        printf("  (skipped: no cgroup2 hierarchy writable here)\n");
        gsd_exec_kill_now(a, 91);
        int64_t pa, pb;
        if (escaped_gone(91, &pa, &pb) == 0) {
            if (pa > 0) kill((pid_t)pa, SIGKILL);
            if (pb > 0) kill((pid_t)pb, SIGKILL);
        }
        gsd_exec_forget(a, 91);
        gsd_spec_release(&j.spec);
        gsd_exec_destroy(a);
        return;
    }
    ASSERT(fgets(base, sizeof base, f) != NULL);
    fclose(f);
    base[strcspn(base, "\n")] = '\0';
    gsd_exec_destroy(a); /* the "daemon" dies; then the shim is killed while nobody watches */
    kill((pid_t)s.pids[0], SIGKILL);
    int st;
    waitpid((pid_t)s.pids[0], &st, 0);
    ASSERT_OK(gsd_exec_create("local", &conf, &b, &d));
    int alive, exited, lost;
    ASSERT_OK(gsd_exec_recover(b, 91, 1, 1, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(alive, 1); /* its cgroup is not empty */
    ASSERT_EQ(lost, 0);
    seen r = {0};
    ASSERT(wait_done(b, &r, 20));
    ASSERT_EQ(r.last.exit_code, 137);
    int64_t pa, pb;
    ASSERT(escaped_gone(91, &pa, &pb));
    char tdir[700];
    snprintf(tdir, sizeof tdir, "%s/job-91.run-1.task-0", base);
    struct stat stt;
    ASSERT(stat(tdir, &stt) != 0); /* removed once empty */
    gsd_exec_forget(b, 91);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(b);
}

static void shim_usage(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s __shim 2>/dev/null", GSCHED_BIN);
    int rc = system(cmd);
    ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
}

/* serve --log-cap: the shim keeps at most the cap of output (plus its marker line) and the
 * job runs to its end, not stopped by its log. */
static void log_cap(void)
{
    gsd_exec *x;
    gs_diag d;
    gsd_exec_conf conf = {state_dir(), GSCHED_BIN};
    conf.log_cap = 4096;
    ASSERT_OK(gsd_exec_create("local", &conf, &x, &d));
    job j;
    make_job(&j, 71, 1, "yes | head -c 300000; echo after-the-flood >&2");
    seen s;
    memset(&s, 0, sizeof s);
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_done(x, &s, 10));
    ASSERT_EQ(s.last.exit_code, 0);
    char path[512];
    gsd_exec_log_path(x, 71, 0, path, sizeof path);
    struct stat st;
    ASSERT_OK(stat(path, &st));
    ASSERT(st.st_size > 4096 && st.st_size < 4096 + 300);
    const char *log = slurp(path);
    ASSERT_CONTAINS(log, "=== gsched: job 71 run 1 task 0 started");
    ASSERT_CONTAINS(log, "=== gsched: log truncated at 4096 bytes (serve --log-cap)");
    ASSERT_CONTAINS(log, "=== gsched: task exited with code 0 ===");
    ASSERT(!strstr(log, "after-the-flood"));
    gsd_exec_forget(x, 71);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* A log that cannot be written (/dev/full: ENOSPC) neither kills nor blocks the job: the shim
 * discards the output and the command runs to its end with its own exit code. */
static void log_write_error(void)
{
    char cmd[1200], done[512], status[512];
    snprintf(done, sizeof done, "%s/full-done", state_dir());
    snprintf(status, sizeof status, "%s/full.status", state_dir());
    snprintf(cmd, sizeof cmd,
             "%s __shim --status %s --log-cap 0 -- sh -c 'yes | head -c 2000000 || exit 9; echo x "
             ">&2 || exit 8; "
             "touch %s; exit 5' >/dev/full 2>&1",
             GSCHED_BIN, status, done);
    int rc = system(cmd);
    ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 5);
    ASSERT(access(done, F_OK) == 0);
    ASSERT_CONTAINS(slurp(status), "5");
}

/* --env-fd: the command's environment is exactly the NUL-separated entries read from the
 * descriptor (none of the shim's own, which the daemon keeps empty), and execvp searches the
 * PATH found there. */
static void shim_env_fd(void)
{
    char envf[512], out[512], status[512], bindir[512], prog[600], cmd[2400];
    snprintf(envf, sizeof envf, "%s/shim-env", state_dir());
    snprintf(out, sizeof out, "%s/shim-env.out", state_dir());
    snprintf(status, sizeof status, "%s/shim-env.status", state_dir());
    snprintf(bindir, sizeof bindir, "%s/shim-env-bin", state_dir());
    snprintf(prog, sizeof prog, "%s/gst-only-here", bindir);
    ASSERT(mkdir(bindir, 0700) == 0);
    FILE *f = fopen(prog, "w");
    ASSERT(f != NULL);
    fputs("#!/bin/sh\necho \"found on the job's PATH: $FOO\"\n", f);
    ASSERT(fclose(f) == 0);
    ASSERT(chmod(prog, 0700) == 0);
    static const char entries[] = "FOO=bar baz\0PATH=/usr/bin:/bin\0";
    f = fopen(envf, "w");
    ASSERT(f != NULL);
    ASSERT(fwrite(entries, 1, sizeof entries - 1, f) == sizeof entries - 1);
    ASSERT(fclose(f) == 0);
    snprintf(cmd, sizeof cmd,
             "GSCHED_SHIM_OWN=leak %s __shim --status %s --env-fd 3 -- env 3<%s >%s 2>&1",
             GSCHED_BIN, status, envf, out);
    int rc = system(cmd);
    ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    ASSERT_STR(slurp(out), "FOO=bar baz\nPATH=/usr/bin:/bin\n"
                           "=== gsched: task exited with code 0 ===\n");
    /* the job's PATH (not the shim's) finds the program */
    f = fopen(envf, "w");
    ASSERT(f != NULL);
    fprintf(f, "FOO=x%cPATH=%s%c", 0, bindir, 0);
    ASSERT(fclose(f) == 0);
    snprintf(cmd, sizeof cmd, "%s __shim --status %s --env-fd 3 -- gst-only-here 3<%s >%s 2>&1",
             GSCHED_BIN, status, envf, out);
    rc = system(cmd);
    ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    ASSERT_CONTAINS(slurp(out), "found on the job's PATH: x");
}

/* ---- checkpoint-based suspend through the fake libcuda -------------------------------------- */

#ifdef FAKE_CUDA_DIR
static char logbuf[8192]; /* what the executor logged (gsd_exec_conf.log) */

static void test_log(void *ud, const char *msg)
{
    (void)ud;
    size_t n = strlen(logbuf);
    snprintf(logbuf + n, sizeof logbuf - n, "%s\n", msg);
}

/* The fake's directory (GSCHED_FAKE_CUDA_DIR), emptied: no CUDA process, no failure, no delay. */
static const char *cuda_dir(void)
{
    static char cd[300];
    snprintf(cd, sizeof cd, "%s/cuda", state_dir());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", cd, cd);
    if (system(cmd) != 0) abort();
    setenv("GSCHED_FAKE_CUDA_DIR", cd, 1);
    return cd;
}

static void cuda_put(const char *name, const char *text)
{
    char p[400];
    snprintf(p, sizeof p, "%s/cuda/%s", state_dir(), name);
    FILE *f = fopen(p, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static char *cuda_file(const char *name)
{
    char p[400];
    snprintf(p, sizeof p, "%s/cuda/%s", state_dir(), name);
    return slurp(p);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static gsd_exec *cuda_exec(const char *mode, const char *lib, gs_diag *d, int *rc)
{
    static char o1[64], o2[400];
    snprintf(o1, sizeof o1, "suspend=%s", mode);
    snprintf(o2, sizeof o2, "cuda_lib=%s/libcuda.so.1", lib);
    const char *opts[] = {o1, o2};
    logbuf[0] = '\0';
    gsd_exec_conf c = {.state_dir = state_dir(),
                       .self_exe = GSCHED_BIN,
                       .log = test_log,
                       .opts = opts,
                       .nopts = 2};
    gsd_exec *x = NULL;
    gs_diag_init(d, NULL);
    *rc = gsd_exec_create("local", &c, &x, d);
    return x;
}

/* A job whose one task registers its shell as a CUDA process with the fake (cuda = 1) and says
 * "ready" with its pid in STATE/pid-ID; it then runs until stopped. */
static void cuda_job(job *j, int64_t id, const char *gpus, int cuda)
{
    char cmd[900];
    snprintf(cmd, sizeof cmd,
             "%s echo $$ > %s/pid-%lld; echo \"order=$CUDA_DEVICE_ORDER task-is-up\"; "
             "touch %s/started-%lld; while :; do sleep 0.05; done",
             cuda ? "echo running > $GSCHED_TEST_CUDA/proc.$$;" : "", state_dir(), (long long)id,
             state_dir(), (long long)id);
    make_job(j, id, 1, cmd);
    gsd_spec_setenv(&j->spec, "GSCHED_TEST_CUDA", getenv("GSCHED_FAKE_CUDA_DIR"));
    j->gpus[0] = gpus;
    j->cuda[0] = gpus;
}

static int64_t job_pid(int64_t id)
{
    char p[400];
    snprintf(p, sizeof p, "%s/pid-%lld", state_dir(), (long long)id);
    char *t = slurp(p);
    return t ? atoll(t) : -1;
}

static int started(int64_t id)
{
    char p[400];
    snprintf(p, sizeof p, "%s/started-%lld", state_dir(), (long long)id);
    return exists(p);
}

/* Poll until s has n GSD_X_SUSPENDED reports (timeout_s); 1 when it has. */
static int wait_susp(gsd_exec *x, seen *s, int n, double timeout_s)
{
    for (int i = 0; i < (int)(timeout_s * 50); i++) {
        gsd_exec_poll(x, now_us(), on_ev, s);
        if (s->susp >= n) return 1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return 0;
}

/* The executor in suspend=cuda mode on the fake driver (NULL when it cannot be created). */
static gsd_exec *cuda_start(void)
{
    gs_diag d;
    int rc;
    gsd_exec *x = cuda_exec("cuda", FAKE_CUDA_DIR, &d, &rc);
    return rc ? NULL : x;
}

/* Wait for the n-th GSD_X_SUSPENDED report and check it: a suspend (stop 1) or a resume (0),
 * failed or not, over 'count' CUDA processes.  1 when it came and matches, else 0 (saying
 * what came). */
static int got_susp(gsd_exec *x, seen *s, int n, int stop, int failed, int count)
{
    if (!wait_susp(x, s, n, 10)) {
        fprintf(stderr, "  no GSD_X_SUSPENDED #%d within 10 s (%d came)\n", n, s->susp);
        return 0;
    }
    if (s->lsusp.stop == stop && s->lsusp.failed == failed && s->lsusp.count == count) return 1;
    fprintf(stderr, "  GSD_X_SUSPENDED #%d: stop %d, failed %d, count %d; wanted %d, %d, %d\n", n,
            (int)s->lsusp.stop, (int)s->lsusp.failed, (int)s->lsusp.count, stop, failed, count);
    return 0;
}

/* 1 when the process's state becomes (stopped = 1) or leaves (0) 'T' within a second. */
static int wait_stopped(int64_t pid, int stopped)
{
    for (int i = 0; i < 50; i++) {
        if ((proc_state(pid) == 'T') == stopped) return 1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return 0;
}

/* position of needle in hay, -1 if absent */
static long pos(const char *hay, const char *needle)
{
    const char *p = hay ? strstr(hay, needle) : NULL;
    return p ? (long)(p - hay) : -1;
}

static void end_job(gsd_exec *x, int64_t id, job *j)
{
    seen s = {0};
    gsd_exec_stop(x, id, now_us(), 2 * GS_SEC);
    ASSERT(wait_done(x, &s, 10));
    gsd_exec_forget(x, id);
    gsd_spec_release(&j->spec);
}

/* lock + checkpoint, then SIGSTOP; SIGCONT, then restore + unlock: in that order, reported as
 * GSD_X_SUSPENDED at a poll; tasks see CUDA_DEVICE_ORDER=PCI_BUS_ID. */
static void ckpt_suspend_resume(void)
{
    cuda_dir();
    gsd_exec *x = cuda_start();
    ASSERT(x);
    ASSERT(gsd_exec_can(x, GSD_XCAP_SUSPEND | GSD_XCAP_CKPT | GSD_XCAP_REMAP));
    ASSERT_CONTAINS(logbuf, "suspend: CUDA checkpoint (driver API 13.0, resume may move GPUs)");
    job j;
    cuda_job(&j, 81, "0,1", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 81, "task-is-up"));
    char path[512];
    gsd_exec_log_path(x, 81, 0, path, sizeof path);
    ASSERT_CONTAINS(slurp(path), "order=PCI_BUS_ID task-is-up");
    int64_t pid = job_pid(81);
    ASSERT(pid > 0);
    ASSERT_OK(gsd_exec_suspend(x, 81, 1));
    ASSERT(got_susp(x, &s, 1, 1, 0, 1));
    ASSERT_EQ(s.lsusp.job_id, 81);
    ASSERT(wait_stopped(pid, 1));
    char pf[64], lk[64], ck[64], rs[64], ul[64];
    snprintf(pf, sizeof pf, "proc.%lld", (long long)pid);
    ASSERT_CONTAINS(cuda_file(pf), "checkpointed");
    snprintf(lk, sizeof lk, "lock %lld ", (long long)pid);
    snprintf(ck, sizeof ck, "checkpoint %lld\n", (long long)pid);
    snprintf(rs, sizeof rs, "restore %lld\n", (long long)pid);
    snprintf(ul, sizeof ul, "unlock %lld\n", (long long)pid);
    char *calls = cuda_file("calls.log");
    ASSERT(pos(calls, lk) >= 0);
    ASSERT(pos(calls, ck) > pos(calls, lk));
    ASSERT_EQ(pos(calls, rs), -1);
    /* resume: SIGCONT at once, restore + unlock on the worker */
    ASSERT_OK(gsd_exec_suspend(x, 81, 0));
    ASSERT(wait_stopped(pid, 0));
    ASSERT(got_susp(x, &s, 2, 0, 0, 1));
    calls = cuda_file("calls.log");
    ASSERT(pos(calls, rs) > pos(calls, ck));
    ASSERT(pos(calls, ul) > pos(calls, rs));
    ASSERT_CONTAINS(cuda_file(pf), "running");
    end_job(x, 81, &j);
    gsd_exec_destroy(x);
}

/* A slow checkpoint (delay_ms 3 s: time for the other job to start under a loaded sanitizer
 * build) runs on the worker: suspend returns at once and the caller keeps
 * polling; a launch onto the GPUs being vacated waits for it (its tasks start only once the
 * checkpoint is done), a launch onto other GPUs does not. */
static void ckpt_async_and_launch_waits(void)
{
    cuda_dir();
    cuda_put("delay_ms", "3000\n");
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a, b, c;
    cuda_job(&a, 82, "0,1", 1);
    cuda_job(&b, 83, "0,1", 0);
    cuda_job(&c, 84, "2,3", 0);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 82, "task-is-up"));
    gs_time t0 = now_us();
    ASSERT_OK(gsd_exec_suspend(x, 82, 1));
    ASSERT(now_us() - t0 < 500 * GS_MSEC); /* the caller never waits for the driver */
    ASSERT_OK(gsd_exec_launch(x, &b.l, now_us(), on_ev, &s));
    ASSERT_OK(gsd_exec_launch(x, &c.l, now_us(), on_ev, &s));
    ASSERT_CONTAINS(logbuf, "job 83: its GPUs are being vacated by job 82 (checkpoint)");
    int waited = 0;
    for (int i = 0; i < 1000 && !s.susp; i++) {
        gs_time p0 = now_us();
        gsd_exec_poll(x, now_us(), on_ev, &s);
        ASSERT(now_us() - p0 < 500 * GS_MSEC); /* nor does a poll */
        if (!s.susp) {
            ASSERT(!started(83));
            waited += started(84);
        }
        nanosleep(&(struct timespec){0, 10000000L}, NULL);
    }
    ASSERT_EQ(s.susp, 1);
    ASSERT_EQ(s.lsusp.failed, 0);
    ASSERT(s.lsusp.usec >= 2900 * 1000);
    ASSERT(waited > 0); /* the job on other GPUs ran during the checkpoint */
    char path[512];
    gsd_exec_log_path(x, 83, 0, path, sizeof path);
    ASSERT_CONTAINS(slurp(path), "waiting until job 82's checkpoint frees GPUs 0,1");
    for (int i = 0; i < 250 && !started(83); i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(started(83));
    ASSERT_CONTAINS(logbuf, "job 83: its GPUs are free after");
    cuda_put("delay_ms", "0\n");
    end_job(x, 82, &a);
    end_job(x, 83, &b);
    end_job(x, 84, &c);
    gsd_exec_destroy(x);
}

/* A failed checkpoint is rolled back (the process runs on, never SIGSTOPped: the daemon stops
 * it) and keeps new tasks off its GPUs until it is gone; a failed restore is reported. */
static void ckpt_failures(void)
{
    cuda_dir();
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a, b, c;
    cuda_job(&a, 85, "0,1", 1);
    cuda_job(&b, 86, "1", 0);
    cuda_job(&c, 87, "4,5", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 85, "task-is-up"));
    int64_t pid = job_pid(85);
    cuda_put("fail", "checkpoint\n");
    ASSERT_OK(gsd_exec_suspend(x, 85, 1));
    ASSERT(wait_susp(x, &s, 1, 10));
    ASSERT_EQ(s.lsusp.stop, 1);
    ASSERT_EQ(s.lsusp.failed, 1);
    ASSERT_CONTAINS(s.smsg, "checkpoint");
    char pf[64], ul[64];
    snprintf(pf, sizeof pf, "proc.%lld", (long long)pid);
    snprintf(ul, sizeof ul, "unlock %lld\n", (long long)pid);
    ASSERT_CONTAINS(cuda_file(pf), "running"); /* rolled back */
    ASSERT_CONTAINS(cuda_file("calls.log"), ul);
    for (int i = 0; i < 10; i++) { /* never stopped */
        gsd_exec_poll(x, now_us(), on_ev, &s);
        ASSERT(proc_state(pid) != 'T');
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    /* its memory stays on GPUs 0,1: a launch onto GPU 1 waits until the job is gone */
    ASSERT_OK(gsd_exec_launch(x, &b.l, now_us(), on_ev, &s));
    for (int i = 0; i < 25; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(!started(86));
    end_job(x, 85, &a);
    for (int i = 0; i < 250 && !started(86); i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(started(86));
    end_job(x, 86, &b);
    /* a failed restore */
    cuda_put("fail", "");
    seen t = {0};
    ASSERT_OK(gsd_exec_launch(x, &c.l, now_us(), on_ev, &t));
    ASSERT(wait_log(x, 87, "task-is-up"));
    ASSERT_OK(gsd_exec_suspend(x, 87, 1));
    ASSERT(wait_susp(x, &t, 1, 10));
    ASSERT_EQ(t.lsusp.failed, 0);
    cuda_put("fail", "restore\n");
    ASSERT_OK(gsd_exec_suspend(x, 87, 0));
    ASSERT(wait_susp(x, &t, 2, 10));
    ASSERT_EQ(t.lsusp.stop, 0);
    ASSERT_EQ(t.lsusp.failed, 1);
    ASSERT_CONTAINS(t.smsg, "restore");
    cuda_put("fail", "");
    end_job(x, 87, &c);
    gsd_exec_destroy(x);
}

/* A checkpoint that fails after the job was resumed meanwhile (the resume is queued behind it)
 * leaves the job running on its own GPUs: it does not hold back later launches onto them as a
 * failed suspend whose processes are being stopped does. */
static void ckpt_failed_after_resume(void)
{
    cuda_dir();
    cuda_put("delay_ms", "800\n");
    cuda_put("fail", "checkpoint\n");
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a, b;
    cuda_job(&a, 92, "0,1", 1);
    cuda_job(&b, 93, "1", 0);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 92, "task-is-up"));
    ASSERT_OK(gsd_exec_suspend(x, 92, 1));
    ASSERT_OK(gsd_exec_suspend(x, 92, 0)); /* resumed before the checkpoint is done */
    ASSERT(wait_susp(x, &s, 2, 10));
    ASSERT_EQ(s.lsusp.stop, 0);
    cuda_put("fail", "");
    cuda_put("delay_ms", "0\n");
    /* job 92 runs on GPUs 0,1 as before; a job packed onto GPU 1 starts at once */
    ASSERT_OK(gsd_exec_launch(x, &b.l, now_us(), on_ev, &s));
    for (int i = 0; i < 250 && !started(93); i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(started(93));
    ASSERT(!strstr(logbuf, "job 93: its GPUs are being vacated"));
    end_job(x, 93, &b);
    end_job(x, 92, &a);
    gsd_exec_destroy(x);
}

/* A resume unlocks a process left locked but not checkpointed (a daemon killed between the lock
 * and the checkpoint: the next one adopts the job as running and resumes it), restoring only
 * what is checkpointed: otherwise its CUDA calls would block for good. */
static void ckpt_resume_unlocks_locked(void)
{
    cuda_dir();
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a;
    cuda_job(&a, 94, "0", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 94, "task-is-up"));
    int64_t pid = job_pid(94);
    char pf[64], ul[64], rs[64];
    snprintf(pf, sizeof pf, "proc.%lld", (long long)pid);
    snprintf(ul, sizeof ul, "unlock %lld\n", (long long)pid);
    snprintf(rs, sizeof rs, "restore %lld", (long long)pid);
    cuda_put(pf, "locked\n");
    ASSERT_OK(gsd_exec_suspend(x, 94, 0));
    ASSERT(got_susp(x, &s, 1, 0, 0, 1));
    ASSERT_CONTAINS(cuda_file("calls.log"), ul);
    ASSERT_EQ(pos(cuda_file("calls.log"), rs), -1);
    ASSERT_CONTAINS(cuda_file(pf), "running");
    end_job(x, 94, &a);
    gsd_exec_destroy(x);
}

/* A job resumed onto other GPUs while its checkpoint still runs keeps the GPUs it left until
 * the checkpoint is done (its memory is there): a launch onto them waits for it. */
static void ckpt_remap_during_checkpoint(void)
{
    cuda_dir();
    cuda_put("delay_ms", "1500\n");
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a, c;
    cuda_job(&a, 95, "0", 1);
    cuda_job(&c, 96, "0", 0);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 95, "task-is-up"));
    ASSERT_OK(gsd_exec_suspend(x, 95, 1));
    const char *to[] = {"1"};
    ASSERT_OK(gsd_exec_resume_at(x, 95, to, to)); /* before its checkpoint is done */
    ASSERT_OK(gsd_exec_launch(x, &c.l, now_us(), on_ev, &s));
    ASSERT_CONTAINS(logbuf, "job 96: its GPUs are being vacated by job 95");
    for (int i = 0; i < 1000 && !s.susp; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        if (!s.susp) ASSERT(!started(96));
        nanosleep(&(struct timespec){0, 10000000L}, NULL);
    }
    ASSERT(s.susp >= 1);
    for (int i = 0; i < 250 && !started(96); i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(started(96));
    cuda_put("delay_ms", "0\n");
    ASSERT(wait_susp(x, &s, 2, 10)); /* the restore, onto GPU 1 */
    ASSERT_EQ(s.lsusp.stop, 0);
    ASSERT_EQ(s.lsusp.failed, 0);
    char want[80];
    snprintf(want, sizeof want, "restore %lld pairs 0>1\n", (long long)job_pid(95));
    ASSERT_CONTAINS(cuda_file("calls.log"), want);
    end_job(x, 96, &c);
    end_job(x, 95, &a);
    gsd_exec_destroy(x);
}

/* A resume onto other GPUs queued behind a checkpoint that then fails cannot move the job (its
 * processes run on where they were): the resume is reported failed, saying why, and launches
 * onto the GPUs it was to leave wait until it is gone. */
static void ckpt_remap_after_failed_checkpoint(void)
{
    cuda_dir();
    cuda_put("delay_ms", "800\n");
    cuda_put("fail", "checkpoint\n");
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a;
    cuda_job(&a, 97, "0", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 97, "task-is-up"));
    ASSERT_OK(gsd_exec_suspend(x, 97, 1));
    const char *to[] = {"1"};
    ASSERT_OK(gsd_exec_resume_at(x, 97, to, to));
    ASSERT(wait_susp(x, &s, 2, 10));
    cuda_put("fail", "");
    cuda_put("delay_ms", "0\n");
    ASSERT_EQ(s.lsusp.stop, 0);
    ASSERT_EQ(s.lsusp.failed, 1);
    ASSERT_CONTAINS(s.smsg, "cannot move to other GPUs: 1 CUDA process(es) not checkpointed");
    /* its memory is still on GPU 0: a launch there waits until the job is gone */
    job c;
    cuda_job(&c, 98, "0", 0);
    ASSERT_OK(gsd_exec_launch(x, &c.l, now_us(), on_ev, &s));
    ASSERT_CONTAINS(logbuf, "job 98: its GPUs are being vacated by job 97");
    end_job(x, 97, &a);
    for (int i = 0; i < 250 && !started(98); i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT(started(98));
    end_job(x, 98, &c);
    gsd_exec_destroy(x);
}

/* A run found again after a restart learns its GPUs from the first resume (recovery resumes
 * every adopted run on its GPUs): a later suspend and resume onto other GPUs moves it (before:
 * GS_EUNSUPPORTED, the job stayed checkpointed while the engine had moved it). */
static void ckpt_recovered_run_moves(void)
{
    cuda_dir();
    gs_diag d;
    int rc;
    gsd_exec *x = cuda_exec("cuda", FAKE_CUDA_DIR, &d, &rc);
    ASSERT_OK(rc);
    job a;
    cuda_job(&a, 99, "0", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 99, "task-is-up"));
    int64_t pid = job_pid(99);
    gsd_exec_destroy(x); /* the daemon restarts: the task runs on */
    x = cuda_exec("cuda", FAKE_CUDA_DIR, &d, &rc);
    ASSERT_OK(rc);
    int alive = 0, exited = 0, lost = 0;
    ASSERT_OK(gsd_exec_recover(x, 99, 1, 1, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(alive, 1);
    const char *at[] = {"0"}, *to[] = {"1"};
    ASSERT_OK(gsd_exec_resume_at(x, 99, at, at)); /* recovery: continue where it runs */
    ASSERT_OK(gsd_exec_suspend(x, 99, 1));
    ASSERT(wait_susp(x, &s, 1, 10));
    ASSERT_EQ(s.lsusp.failed, 0);
    ASSERT_OK(gsd_exec_resume_at(x, 99, to, to));
    ASSERT(wait_susp(x, &s, 2, 10));
    ASSERT_EQ(s.lsusp.stop, 0);
    ASSERT_EQ(s.lsusp.failed, 0);
    char want[80];
    snprintf(want, sizeof want, "restore %lld pairs 0>1\n", (long long)pid);
    ASSERT_CONTAINS(cuda_file("calls.log"), want);
    end_job(x, 99, &a);
    gsd_exec_destroy(x);
}

/* A failed checkpoint whose rollback could not unlock the process: the stop that follows (the
 * daemon's fallback) unlocks it, so that the job can save on SIGTERM. */
static void ckpt_stop_unlocks_failed_rollback(void)
{
    cuda_dir();
    cuda_put("fail", "checkpoint\nunlock\n");
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a;
    cuda_job(&a, 100, "0", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 100, "task-is-up"));
    int64_t pid = job_pid(100);
    ASSERT_OK(gsd_exec_suspend(x, 100, 1));
    ASSERT(wait_susp(x, &s, 1, 10));
    ASSERT_EQ(s.lsusp.failed, 1);
    char pf[64];
    snprintf(pf, sizeof pf, "proc.%lld", (long long)pid);
    ASSERT_CONTAINS(cuda_file(pf), "locked"); /* the rollback's unlock failed */
    cuda_put("fail", "");
    /* the fallback: stop (the shell's own trap-less SIGTERM ends it; the unlock comes first) */
    ASSERT_OK(gsd_exec_stop(x, 100, now_us(), 2 * GS_SEC));
    for (int i = 0; i < 250 && !strstr(cuda_file(pf), "running"); i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ASSERT_CONTAINS(cuda_file(pf), "running");
    seen t = {0};
    ASSERT(wait_done(x, &t, 10));
    gsd_exec_forget(x, 100);
    gsd_spec_release(&a.spec);
    gsd_exec_destroy(x);
}

/* A job without CUDA processes is simply SIGSTOPped (reported ok, count 0), with no driver call
 * but state queries; resume moves GPUs through remap pairs (node-local, in task order). */
static void ckpt_no_cuda_and_remap(void)
{
    cuda_dir();
    gsd_exec *x = cuda_start();
    ASSERT(x);
    job a, b;
    cuda_job(&a, 88, "0,1", 0);
    cuda_job(&b, 89, "0,1", 1);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 88, "task-is-up"));
    int64_t pid = job_pid(88);
    ASSERT_OK(gsd_exec_suspend(x, 88, 1));
    ASSERT(wait_susp(x, &s, 1, 10));
    ASSERT_EQ(s.lsusp.failed, 0);
    ASSERT_EQ(s.lsusp.count, 0);
    ASSERT(wait_stopped(pid, 1));
    char *calls = cuda_file("calls.log");
    ASSERT_EQ(pos(calls, "lock "), -1);
    ASSERT_OK(gsd_exec_suspend(x, 88, 0));
    ASSERT(wait_stopped(pid, 0));
    ASSERT(wait_susp(x, &s, 2, 10));
    ASSERT_EQ(s.lsusp.count, 0);
    /* moving it cannot be carried out: nothing checkpointed carries it, its tasks see GPUs 0,1 */
    ASSERT_OK(gsd_exec_suspend(x, 88, 1));
    ASSERT(wait_susp(x, &s, 3, 10));
    const char *other[] = {"2,3"};
    ASSERT_OK(gsd_exec_resume_at(x, 88, other, other));
    ASSERT(wait_susp(x, &s, 4, 10));
    ASSERT_EQ(s.lsusp.stop, 0);
    ASSERT_EQ(s.lsusp.failed, 1);
    ASSERT_CONTAINS(s.smsg, "no checkpointed CUDA process to carry over");
    end_job(x, 88, &a);
    /* remap: 0,1 -> 4,5 */
    seen t = {0};
    ASSERT_OK(gsd_exec_launch(x, &b.l, now_us(), on_ev, &t));
    ASSERT(wait_log(x, 89, "task-is-up"));
    pid = job_pid(89);
    ASSERT_OK(gsd_exec_suspend(x, 89, 1));
    ASSERT(wait_susp(x, &t, 1, 10));
    const char *bad[] = {"4"}, *to[] = {"4,5"};
    ASSERT_EQ(gsd_exec_resume_at(x, 89, bad, bad), GS_EINVAL); /* one GPU for two */
    ASSERT_EQ(gsd_exec_resume_at(x, 90, to, to), GS_ENOENT);
    ASSERT_OK(gsd_exec_resume_at(x, 89, to, to));
    ASSERT(wait_susp(x, &t, 2, 10));
    ASSERT_EQ(t.lsusp.failed, 0);
    ASSERT_EQ(t.lsusp.count, 1);
    char want[80];
    snprintf(want, sizeof want, "restore %lld pairs 0>4,1>5\n", (long long)pid);
    ASSERT_CONTAINS(cuda_file("calls.log"), want);
    /* and back where it is now: no pairs */
    ASSERT_OK(gsd_exec_suspend(x, 89, 1));
    ASSERT(wait_susp(x, &t, 3, 10));
    ASSERT_OK(gsd_exec_resume_at(x, 89, to, to));
    ASSERT(wait_susp(x, &t, 4, 10));
    snprintf(want, sizeof want, "restore %lld\n", (long long)pid);
    ASSERT_CONTAINS(cuda_file("calls.log"), want);
    end_job(x, 89, &b);
    gsd_exec_destroy(x);
}

/* suspend=auto|cuda|sigstop and cuda_lib: a driver without the API is an error for cuda and
 * SIGSTOP (said in the log) for auto; sigstop never loads it; unknown keys name the known. */
static void ckpt_options(void)
{
    cuda_dir();
    gs_diag d;
    int rc;
    gsd_exec *x = cuda_exec("cuda", FAKE_CUDA_OLD_DIR, &d, &rc);
    ASSERT_EQ(rc, GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "suspend=cuda: no CUDA checkpoint API");
    ASSERT(!x);
    x = cuda_exec("auto", FAKE_CUDA_OLD_DIR, &d, &rc);
    ASSERT_OK(rc);
    ASSERT(!gsd_exec_can(x, GSD_XCAP_CKPT));
    ASSERT(gsd_exec_can(x, GSD_XCAP_SUSPEND));
    ASSERT_CONTAINS(logbuf, "suspend: SIGSTOP, a suspended job's GPU memory stays held (no CUDA "
                            "checkpoint API");
    /* without remap a resume elsewhere is refused, where it left it is a SIGCONT */
    job a;
    cuda_job(&a, 91, "0", 0);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &a.l, now_us(), on_ev, &s));
    ASSERT(wait_log(x, 91, "task-is-up"));
    int64_t pid = job_pid(91);
    ASSERT_OK(gsd_exec_suspend(x, 91, 1));
    ASSERT(wait_stopped(pid, 1));
    const char *other[] = {"3"}, *same[] = {"0"};
    ASSERT_EQ(gsd_exec_resume_at(x, 91, other, other), GS_EUNSUPPORTED);
    ASSERT(proc_state(pid) == 'T');
    ASSERT_OK(gsd_exec_resume_at(x, 91, same, same));
    ASSERT(wait_stopped(pid, 0));
    ASSERT_EQ(s.susp, 0); /* SIGSTOP mode reports nothing */
    end_job(x, 91, &a);
    gsd_exec_destroy(x);
    x = cuda_exec("sigstop", FAKE_CUDA_DIR, &d, &rc);
    ASSERT_OK(rc);
    ASSERT(!gsd_exec_can(x, GSD_XCAP_CKPT));
    ASSERT_CONTAINS(logbuf, "suspend: SIGSTOP (suspend=sigstop)");
    gsd_exec_destroy(x);
    x = cuda_exec("sometimes", FAKE_CUDA_DIR, &d, &rc);
    ASSERT_EQ(rc, GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "expected auto, cuda or sigstop");
    const char *bogus[] = {"colour=blue"};
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gsd_exec_create("local",
                              &(gsd_exec_conf){.state_dir = state_dir(), .opts = bogus, .nopts = 1},
                              &x, &d),
              GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "known: suspend=auto|cuda|sigstop, cuda_lib=PATH");
    const char *empty[] = {"cuda_lib="};
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gsd_exec_create("local",
                              &(gsd_exec_conf){.state_dir = state_dir(), .opts = empty, .nopts = 1},
                              &x, &d),
              GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "cuda_lib=: expected the path");
}
#endif

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cleanup failed");
}

static const test_case tests[] = {
    {"env_groups_and_exit_codes", env_groups_and_exit_codes},
    {"stop_protocol", stop_protocol},
    {"grace_for_the_whole_task", grace_for_the_whole_task},
    {"failed_task_stops_peers", failed_task_stops_peers},
    {"suspend_resume", suspend_resume},
    {"suspend_stops_work_and_survives_restart", suspend_stops_work_and_survives_restart},
    {"recovery_after_restart", recovery_after_restart},
    {"launch_failures", launch_failures},
    {"escaped_processes_die_with_the_task", escaped_processes_die_with_the_task},
    {"cgroup_recovery_finds_leftovers", cgroup_recovery_finds_leftovers},
    {"shim_usage", shim_usage},
    {"log_cap", log_cap},
    {"log_write_error", log_write_error},
    {"shim_env_fd", shim_env_fd},
#ifdef FAKE_CUDA_DIR
    {"ckpt_suspend_resume", ckpt_suspend_resume},
    {"ckpt_async_and_launch_waits", ckpt_async_and_launch_waits},
    {"ckpt_failed_after_resume", ckpt_failed_after_resume},
    {"ckpt_resume_unlocks_locked", ckpt_resume_unlocks_locked},
    {"ckpt_remap_during_checkpoint", ckpt_remap_during_checkpoint},
    {"ckpt_remap_after_failed_checkpoint", ckpt_remap_after_failed_checkpoint},
    {"ckpt_recovered_run_moves", ckpt_recovered_run_moves},
    {"ckpt_stop_unlocks_failed_rollback", ckpt_stop_unlocks_failed_rollback},
    {"ckpt_failures", ckpt_failures},
    {"ckpt_no_cuda_and_remap", ckpt_no_cuda_and_remap},
    {"ckpt_options", ckpt_options},
#endif
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
