/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_slurm_exec.c - the "slurm" executor (exec_slurm.c) driven directly against a private
 * Slurm cluster on loopback (tests/slurm/fixture.sh: 4 nodes x 8 GPUs of type v100, racks from
 * a topology.conf, partitions "gpu" (managed, jobs held by job_submit.lua) and "other").  It
 * covers the cluster hook, launches (one task, a two-node gang: environment per task written
 * by the job), exit codes, stop -> requeue-hold -> relaunch of the same Slurm job, retire,
 * adoption of a plain `sbatch` job, GONE on scancel, foreign GPUs (OUTSIDE), node DOWN / UP,
 * recovery after the executor is destroyed and created again (a daemon kill -9) and the sweep
 * of a stray released job.  Skips (exit 77) where `fixture.sh check` fails; every wait is
 * bounded; the fixture it starts is stopped at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "harness.h"

#define PORT "17131"
#define FDIR "/tmp/gs-slurm-backend-test"

static char state[256];
static char conf_opt[300];
static int fixture_up;

static gs_time now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (gs_time)ts.tv_sec * GS_SEC + ts.tv_nsec / 1000;
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Run a shell command with the fixture's environment; its exit status. */
static int sh(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int sh(const char *fmt, ...)
{
    char cmd[4096], full[4600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full,
             "SLURM_FIXTURE_PORT=" PORT " SLURM_FIXTURE_DIR=" FDIR " SLURM_CONF=" FDIR
             "/etc/slurm.conf SLURM_FIXTURE_GPU_TYPE=v100"
             " SLURM_FIXTURE_PARTITIONS=gpu:all,other:all SLURM_FIXTURE_TIMEOUT=3"
             " SLURM_FIXTURE_TOPOLOGY=%s/topology.conf; export SLURM_FIXTURE_PORT"
             " SLURM_FIXTURE_DIR SLURM_CONF SLURM_FIXTURE_GPU_TYPE SLURM_FIXTURE_PARTITIONS"
             " SLURM_FIXTURE_TIMEOUT SLURM_FIXTURE_TOPOLOGY; FX=" GSCHED_SOURCE_DIR
             "/tests/slurm/fixture.sh; %s",
             state, cmd);
    int rc = system(full);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

/* The output of a shell command (first line), in a static buffer. */
static char *sh_out(const char *cmd)
{
    static char buf[1024];
    char full[2048];
    snprintf(full, sizeof full, "SLURM_CONF=" FDIR "/etc/slurm.conf %s", cmd);
    FILE *p = popen(full, "r");
    buf[0] = '\0';
    if (!p) return buf;
    if (!fgets(buf, sizeof buf, p)) buf[0] = '\0';
    pclose(p);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static char *slurp(const char *path)
{
    static char buf[16384];
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ---- events ---------------------------------------------------------------------------------- */

typedef struct seen {
    int started, exited, done, killed, gone, adopt;
    char handle[4][64], gpus[4][64];
    gsd_xev last; /* RUN_DONE */
    char last_msg[512];
    char adopt_ext[32], adopt_user[64], adopt_vc[64], adopt_type[32];
    int adopt_ntasks, adopt_gpt, adopt_prio;
    gs_time adopt_limit;
    int64_t gone_job;
    char node_ev[16][64]; /* "n2=2" */
    int nnode_ev;
    int outside[8]; /* per node index 1..4 */
} seen;

static void on_ev(void *ud, const gsd_xev *ev)
{
    seen *s = ud;
    switch (ev->kind) {
    case GSD_X_TASK_STARTED:
        if (ev->task < 4) {
            snprintf(s->handle[ev->task], sizeof s->handle[0], "%s", ev->handle);
            snprintf(s->gpus[ev->task], sizeof s->gpus[0], "%s", ev->gpus ? ev->gpus : "");
        }
        s->started++;
        break;
    case GSD_X_TASK_EXITED: s->exited++; break;
    case GSD_X_KILLED: s->killed++; break;
    case GSD_X_RUN_DONE:
        s->done++;
        s->last = *ev;
        snprintf(s->last_msg, sizeof s->last_msg, "%s", ev->msg ? ev->msg : "");
        s->last.msg = NULL;
        break;
    case GSD_X_GONE:
        s->gone++;
        s->gone_job = ev->job_id;
        break;
    case GSD_X_ADOPT:
        s->adopt++;
        snprintf(s->adopt_ext, sizeof s->adopt_ext, "%s", ev->adopt->ext);
        snprintf(s->adopt_user, sizeof s->adopt_user, "%s", ev->adopt->user);
        snprintf(s->adopt_vc, sizeof s->adopt_vc, "%s", ev->adopt->vc ? ev->adopt->vc : "");
        snprintf(s->adopt_type, sizeof s->adopt_type, "%s",
                 ev->adopt->gpu_type ? ev->adopt->gpu_type : "");
        s->adopt_ntasks = ev->adopt->ntasks;
        s->adopt_gpt = ev->adopt->gpus_per_task;
        s->adopt_prio = ev->adopt->priority;
        s->adopt_limit = ev->adopt->time_limit;
        break;
    case GSD_X_NODE:
        if (s->nnode_ev < 16)
            snprintf(s->node_ev[s->nnode_ev++], sizeof s->node_ev[0], "%s=%d", ev->node,
                     ev->node_state);
        break;
    case GSD_X_OUTSIDE:
        if (ev->node[0] == 'n' && ev->node[1] >= '1' && ev->node[1] <= '4')
            s->outside[ev->node[1] - '0'] = ev->count;
        break;
    default: break;
    }
}

/* Poll until cond(s) holds, at most timeout_s.  1 when it does. */
static int wait_for(gsd_exec *x, seen *s, int (*cond)(const seen *), double timeout_s)
{
    for (int i = 0; i < (int)(timeout_s * 20); i++) {
        gsd_exec_poll(x, now_us(), on_ev, s);
        if (cond(s)) return 1;
        nap_ms(50);
    }
    return 0;
}

static int c_done(const seen *s)
{
    return s->done > 0;
}

static int c_started(const seen *s)
{
    return s->started > 0;
}

static gsd_exec *make_exec(void)
{
    const char *opts[] = {"partitions=gpu", "poll_ms=100", "start_timeout=20", conf_opt};
    gsd_exec_conf c = {.state_dir = state, .opts = opts, .nopts = 4};
    gsd_exec *x = NULL;
    gs_diag d;
    if (gsd_exec_create("slurm", &c, &x, &d)) {
        fprintf(stderr, "  create: %s\n", d.msg);
        return NULL;
    }
    return x;
}

typedef struct job {
    gsd_spec spec;
    const char *node[4], *cuda[4], *gpus[4];
    gsd_launch l;
} job;

static void make_job(job *j, int64_t id, int run, int ntasks, int gpt, const char *shell,
                     const char *n0, const char *n1)
{
    memset(j, 0, sizeof *j);
    gsd_spec_init(&j->spec);
    j->spec.shell = strdup(shell);
    j->spec.name = strdup("t");
    j->spec.user = strdup("root");
    j->spec.ntasks = ntasks;
    j->spec.gpus_per_task = gpt;
    j->spec.workdir = strdup("/tmp");
    for (int i = 0; i < ntasks; i++) {
        j->node[i] = i ? n1 : n0;
        j->cuda[i] = "x";
        j->gpus[i] = "x";
    }
    j->l = (gsd_launch){.job_id = id,
                        .run = run,
                        .ntasks = ntasks,
                        .task_index_base = 0,
                        .world_size = ntasks,
                        .task_node = j->node,
                        .task_cuda = j->cuda,
                        .task_gpus = j->gpus,
                        .spec = &j->spec,
                        .group = id,
                        .master_port = 29555,
                        .grace = 2 * GS_SEC};
}

/* ---- tests ------------------------------------------------------------------------------------
 */

static void options_checked(void)
{
    const char *opts[] = {"bogus=1"};
    gsd_exec_conf c = {.state_dir = state, .opts = opts, .nopts = 1};
    gsd_exec *x = NULL;
    gs_diag d;
    ASSERT_EQ(gsd_exec_create("slurm", &c, &x, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "unknown option 'bogus'");
    ASSERT_CONTAINS(d.msg,
                    "partitions=LIST, poll_ms=N, poll_min_ms=N, start_timeout=SECONDS, conf=PATH");
    const char *bad[] = {"poll_ms=abc"};
    c.opts = bad;
    ASSERT_EQ(gsd_exec_create("slurm", &c, &x, &d), GS_EINVAL);
    ASSERT(x == NULL);
    const char *bad_min[] = {"poll_min_ms=0"};
    c.opts = bad_min;
    ASSERT_EQ(gsd_exec_create("slurm", &c, &x, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "poll_min_ms='0'");
    ASSERT(x == NULL);
    gsd_exec *y = make_exec();
    ASSERT(y);
    ASSERT(gsd_exec_can(y, GSD_XCAP_MULTINODE | GSD_XCAP_ADOPT | GSD_XCAP_CLUSTER |
                               GSD_XCAP_EXTERNAL));
    ASSERT(!gsd_exec_can(y, GSD_XCAP_SUSPEND));
    char why[256];
    ASSERT_OK(gsd_exec_check(y, why, sizeof why));
    gsd_exec_destroy(y);
}

static void cluster_from_slurm(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    gs_cluster *c = NULL;
    gs_diag d;
    ASSERT_OK(gsd_exec_cluster(x, NULL, &c, &d));
    ASSERT(c);
    ASSERT_EQ(gs_cluster_nnodes(c), 4);
    ASSERT_EQ(gs_cluster_ngpus(c), 32);
    ASSERT_STR(gs_cluster_node(c, 0)->name, "n1");
    ASSERT_STR(gs_cluster_node(c, 3)->name, "n4");
    ASSERT_EQ(gs_cluster_node(c, 0)->cpus, 8);
    ASSERT_EQ(gs_cluster_node(c, 0)->mem_mb, 4096);
    ASSERT_EQ(gs_cluster_find_gpu_type(c, "v100"), 0);
    /* racks from topology.conf: s1 = n1,n2; s2 = n3,n4 */
    const gs_cell *r1 = gs_cluster_cell(c, gs_cluster_node(c, 0)->rack);
    const gs_cell *r4 = gs_cluster_cell(c, gs_cluster_node(c, 3)->rack);
    ASSERT_EQ(r1->kind, GS_CELL_RACK);
    ASSERT_STR(r1->name, "s1");
    ASSERT_STR(r4->name, "s2");
    ASSERT_EQ(gs_cluster_node(c, 1)->rack, gs_cluster_node(c, 0)->rack);
    /* a given model: the same one is accepted; one with a node Slurm lacks is refused */
    gs_cluster *out = NULL;
    ASSERT_OK(gsd_exec_cluster(x, c, &out, &d));
    ASSERT(out == NULL);
    gs_cluster *bad;
    ASSERT_OK(gs_cluster_create(&bad));
    int t = gs_cluster_gpu_type(bad, "v100");
    int nd = gs_cluster_add_cell(bad, 0, GS_CELL_NODE, "n9", -1);
    ASSERT(nd > 0);
    ASSERT_OK(gs_cluster_set_node(bad, nd, 0, 0));
    ASSERT(gs_cluster_add_gpu(bad, nd, 0, t) >= 0);
    nd = gs_cluster_add_cell(bad, 0, GS_CELL_NODE, "n1", -1);
    ASSERT_OK(gs_cluster_set_node(bad, nd, 0, 0));
    for (int g = 0; g < 9; g++) ASSERT(gs_cluster_add_gpu(bad, nd, g, t) >= 0);
    ASSERT_OK(gs_cluster_finish(bad, &d));
    ASSERT_EQ(gsd_exec_cluster(x, bad, &out, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "node 'n9' is not in Slurm");
    ASSERT_CONTAINS(d.msg, "node 'n1' has 8 GPUs in Slurm, the cluster says 9");
    gs_cluster_destroy(bad);
    /* a machine in two HiveD chains (two node cells of one name) is checked with all its GPUs:
     * n2 4 + 4 fits its 8, n3 5 + 4 does not (each cell alone would) */
    gs_cluster *two;
    ASSERT_OK(gs_cluster_create(&two));
    t = gs_cluster_gpu_type(two, "v100");
    const char *cname[] = {"n2", "n3", "n2", "n3"};
    const int cgpus[] = {4, 5, 4, 4};
    for (int k = 0; k < 4; k++) {
        nd = gs_cluster_add_cell(two, 0, GS_CELL_NODE, cname[k], -1);
        ASSERT(nd > 0);
        ASSERT_OK(gs_cluster_set_node(two, nd, 0, 0));
        for (int g = 0; g < cgpus[k]; g++)
            ASSERT(gs_cluster_add_gpu(two, nd, k < 2 ? g : 5 + g, t) >= 0);
    }
    ASSERT_OK(gs_cluster_finish(two, &d));
    ASSERT_EQ(gsd_exec_cluster(x, two, &out, &d), GS_EINVAL);
    ASSERT_STR(d.msg, "cluster does not match Slurm: node 'n3' has 8 GPUs in Slurm, the cluster "
                      "says 9");
    gs_cluster_destroy(two);
    gs_cluster_destroy(c);
    gsd_exec_destroy(x);
}

static void one_task(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    job j;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "env > %s/env-101.txt; echo hello from the job; sleep 1; exit 0",
             state);
    make_job(&j, 101, 1, 1, 2, cmd, "n3", NULL);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT_EQ(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s), GS_EEXIST);
    ASSERT(wait_for(x, &s, c_done, 30));
    ASSERT_EQ(s.started, 1);
    ASSERT_EQ(s.exited, 1);
    ASSERT_EQ(s.last.exit_code, 0);
    ASSERT_EQ(s.last.lost, 0);
    ASSERT_CONTAINS(s.handle[0], "slurm:");
    ASSERT_STR(s.gpus[0], "0,1");
    char path[600];
    snprintf(path, sizeof path, "%s/env-101.txt", state);
    char *env = slurp(path);
    ASSERT(env);
    ASSERT_CONTAINS(env, "GSCHED_JOB_ID=101\n");
    ASSERT_CONTAINS(env, "GSCHED_RUN=1\n");
    ASSERT_CONTAINS(env, "GSCHED_TASK_INDEX=0\n");
    ASSERT_CONTAINS(env, "RANK=0\n");
    ASSERT_CONTAINS(env, "WORLD_SIZE=1\n");
    ASSERT_CONTAINS(env, "MASTER_ADDR=127.0.0.1\n");
    ASSERT_CONTAINS(env, "MASTER_PORT=29555\n");
    ASSERT_CONTAINS(env, "CUDA_VISIBLE_DEVICES=0,1\n");
    ASSERT_CONTAINS(env, "GSCHED_NODE=n3\n");
    ASSERT_CONTAINS(env, "GSCHED_GRACE_SECONDS=2\n");
    ASSERT_CONTAINS(env, "PATH=/usr/local/sbin:");
    ASSERT(!strstr(env, "GSCHED_TASKMAP"));
    /* the task's log, through the executor */
    int fd;
    ASSERT_OK(gsd_exec_log_open(x, 101, 0, &fd));
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    ASSERT(n > 0);
    buf[n] = '\0';
    ASSERT_CONTAINS(buf, "hello from the job");
    ASSERT_CONTAINS(buf, "=== gsched: job 101 run 1 task 0 started");
    gsd_exec_forget(x, 101);
    ASSERT_EQ(gsd_exec_nruns(x), 0);
    ASSERT_EQ(gsd_exec_task_pid(x, "slurm:1:0"), -1);
    gsd_exec_retire(x, 101, NULL, 0, "done");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static void exit_code(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    job j;
    make_job(&j, 102, 1, 1, 1, "echo failing; exit 3", "n1", NULL);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_done, 30));
    ASSERT_EQ(s.last.exit_code, 3);
    ASSERT_EQ(s.last.failed_task, 0);
    ASSERT_EQ(s.last.lost, 0);
    gsd_exec_forget(x, 102);
    gsd_exec_retire(x, 102, NULL, 0, "failed");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static void gang(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    job j;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "env > %s/env-103-$RANK.txt; sleep 1", state);
    make_job(&j, 103, 1, 2, 2, cmd, "n4", "n1");
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_done, 30));
    ASSERT_EQ(s.started, 2);
    ASSERT_EQ(s.exited, 2);
    ASSERT_EQ(s.last.exit_code, 0);
    ASSERT_STR(s.gpus[0], "0,1");
    ASSERT_STR(s.gpus[1], "0,1");
    static const char *const node[] = {"n4", "n1"};
    for (int r = 0; r < 2; r++) {
        char path[600], want[64];
        snprintf(path, sizeof path, "%s/env-103-%d.txt", state, r);
        char *env = slurp(path);
        ASSERT(env);
        snprintf(want, sizeof want, "\nRANK=%d\n", r);
        ASSERT_CONTAINS(env, want);
        snprintf(want, sizeof want, "GSCHED_TASK_INDEX=%d\n", r);
        ASSERT_CONTAINS(env, want);
        snprintf(want, sizeof want, "GSCHED_NODE=%s\n", node[r]);
        ASSERT_CONTAINS(env, want);
        ASSERT_CONTAINS(env, "\nWORLD_SIZE=2\n");
        ASSERT_CONTAINS(env, "MASTER_ADDR=127.0.0.1\n");
        ASSERT_CONTAINS(env, "MASTER_PORT=29555\n");
        ASSERT_CONTAINS(env, "CUDA_VISIBLE_DEVICES=0,1\n");
        ASSERT_CONTAINS(env, "LOCAL_RANK=0\n");
        /* each task's log is its own */
        char log[600];
        gsd_exec_log_path(x, 103, r, log, sizeof log);
        snprintf(want, sizeof want, "run 1 task %d started", r);
        ASSERT_CONTAINS(slurp(log), want);
    }
    gsd_exec_forget(x, 103);
    gsd_exec_retire(x, 103, NULL, 0, "done");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* Issue 14: tasks of different GPU counts cannot be one Slurm step (one GRES count per node or
 * per task): the executor lacks GSD_XCAP_MIXED (the daemon refuses such a job at submit), and a
 * launch of one (a job stored under another executor) fails at once with the reason, submitting
 * nothing. */
static void mixed_sizes_refused(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    ASSERT(!gsd_exec_can(x, GSD_XCAP_MIXED));
    job j;
    make_job(&j, 111, 1, 2, 2, "true", "n1", "n1");
    static const int ng[2] = {2, 1};
    j.l.task_ngpus = ng;
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_done, 10));
    ASSERT_EQ(s.started, 0);
    ASSERT_EQ(s.last.exit_code, 126);
    ASSERT_CONTAINS(s.last_msg, "cannot run tasks of different GPU counts");
    gsd_exec_forget(x, 111);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* The Slurm job's "STATE PRIORITY" (squeue). */
static char *sq(const char *handle)
{
    unsigned id = 0;
    sscanf(handle, "slurm:%u:", &id);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "squeue -h -j %u -o '%%T %%Q' 2>/dev/null", id);
    return sh_out(cmd);
}

static void stop_requeue_relaunch(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    job j;
    /* run 1 ignores SIGTERM (the requeue-hold at the deadline ends it); run 2 exits 0 */
    make_job(&j, 104, 1, 1, 1,
             "[ \"$GSCHED_RUN\" = 2 ] && exit 0; trap 'echo got TERM' TERM; echo ready; "
             "i=0; while [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done",
             "n2", NULL);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_started, 30));
    char first[64];
    snprintf(first, sizeof first, "%s", s.handle[0]);
    ASSERT(!strncmp(sq(first), "RUNNING ", 8));
    nap_ms(500);
    ASSERT_OK(gsd_exec_stop(x, 104, now_us(), GS_SEC));
    ASSERT(gsd_exec_next_deadline(x) < GS_TIME_MAX);
    ASSERT(wait_for(x, &s, c_done, 30));
    ASSERT_EQ(s.killed, 1);
    ASSERT_EQ(s.last.killed, 1);
    ASSERT_EQ(s.last.lost, 0);
    ASSERT_STR(sq(first), "PENDING 0"); /* requeued into hold, kept for the next run */
    char log[600];
    gsd_exec_log_path(x, 104, 0, log, sizeof log);
    ASSERT_CONTAINS(slurp(log), "got TERM");
    gsd_exec_forget(x, 104);
    /* run 2 on another node reuses the same Slurm job */
    job j2;
    make_job(&j2, 104, 2, 1, 1, j.spec.shell, "n3", NULL);
    seen s2 = {0};
    ASSERT_OK(gsd_exec_launch(x, &j2.l, now_us(), on_ev, &s2));
    ASSERT(wait_for(x, &s2, c_done, 30));
    ASSERT_EQ(s2.started, 1);
    ASSERT_STR(s2.handle[0], first);
    ASSERT_EQ(s2.last.exit_code, 0);
    ASSERT_CONTAINS(slurp(log), "=== gsched: job 104 run 2 task 0 started");
    ASSERT_CONTAINS(slurp(log), "on n3,");
    gsd_exec_forget(x, 104);
    gsd_exec_retire(x, 104, NULL, 0, "done");
    gsd_spec_release(&j.spec);
    gsd_spec_release(&j2.spec);
    gsd_exec_destroy(x);
}

/* The Slurm job id of a handle "slurm:ID:TASK". */
static unsigned hid(const char *handle)
{
    unsigned id = 0;
    sscanf(handle, "slurm:%u:", &id);
    return id;
}

/* Submit with sbatch (as root): the job id, 0 on failure. */
static unsigned sbatch(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sbatch --parsable %s 2>&1", args);
    return (unsigned)strtoul(sh_out(cmd), NULL, 10);
}

static char *state_of(unsigned id)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "squeue -h -t all -j %u -o '%%T %%Q' 2>/dev/null", id);
    return sh_out(cmd);
}

static void retire_cancels_held_job(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    job j;
    make_job(&j, 105, 1, 1, 1, "sleep 60", "n1", NULL);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_started, 30));
    ASSERT_OK(gsd_exec_stop(x, 105, now_us(), 0));
    ASSERT(wait_for(x, &s, c_done, 30));
    unsigned id = hid(s.handle[0]);
    ASSERT_STR(state_of(id), "PENDING 0");
    gsd_exec_forget(x, 105);
    gsd_exec_retire(x, 105, NULL, 4, "cancelled by its owner");
    int ok = 0;
    for (int i = 0; i < 100 && !ok; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        ok = !strncmp(state_of(id), "CANCELLED", 9);
        if (!ok) nap_ms(100);
    }
    ASSERT(ok);
    /* gsched cancelled it: no GONE */
    for (int i = 0; i < 5; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    ASSERT_EQ(s.gone, 0);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static int c_adopt(const seen *s)
{
    return s->adopt > 0;
}

static int c_gone(const seen *s)
{
    return s->gone > 0;
}

static void adopt_sbatch_job(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    seen s = {0};
    char args[512];
    snprintf(args, sizeof args,
             "-H -p gpu -N1 --gres=gpu:v100:2 -t 10 -J adopted --comment 'vc=research priority=5' "
             "-D /tmp -o %s/adopted.out --wrap 'echo adopted job ran on $SLURMD_NODENAME "
             "cvd=$CUDA_VISIBLE_DEVICES'",
             state);
    unsigned id = sbatch(args);
    ASSERT(id > 0);
    ASSERT(wait_for(x, &s, c_adopt, 20));
    char ext[32];
    snprintf(ext, sizeof ext, "slurm:%u", id);
    ASSERT_STR(s.adopt_ext, ext);
    ASSERT_STR(s.adopt_user, "root");
    ASSERT_STR(s.adopt_vc, "research");
    ASSERT_STR(s.adopt_type, "v100");
    ASSERT_EQ(s.adopt_ntasks, 1);
    ASSERT_EQ(s.adopt_gpt, 2);
    ASSERT_EQ(s.adopt_prio, 5);
    ASSERT_EQ(s.adopt_limit, 600 * GS_SEC);
    /* reported once */
    for (int i = 0; i < 5; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    ASSERT_EQ(s.adopt, 1);
    ASSERT_EQ(gsd_exec_bind(x, 201, "slurm:4000000"), GS_ENOENT);
    ASSERT_OK(gsd_exec_bind(x, 201, ext));
    /* gsched places it: the same Slurm job runs on n2 */
    job j;
    make_job(&j, 201, 1, 1, 2, "unused", "n2", NULL);
    seen r = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &r));
    ASSERT(wait_for(x, &r, c_done, 30));
    if (!r.started) fprintf(stderr, "  run ended: %d %s\n", r.last.exit_code, r.last_msg);
    ASSERT_EQ(hid(r.handle[0]), id);
    ASSERT_EQ(r.last.exit_code, 0);
    char path[600];
    snprintf(path, sizeof path, "%s/adopted.out", state);
    ASSERT_CONTAINS(slurp(path), "adopted job ran on n2 cvd=0,1");
    gsd_exec_forget(x, 201);
    gsd_exec_retire(x, 201, ext, 3, "done");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* The interval between resyncs adapts to what one costs: with poll_ms=20000 (the longest) an
 * idle cluster is still asked every few tens of ms ("changed since?" answers are small), so a
 * new sbatch job is reported in well under a second, not after 20 s. */
static void adaptive_poll(void)
{
    const char *opts[] = {"partitions=gpu", "poll_ms=20000", "start_timeout=20", conf_opt};
    gsd_exec_conf c = {.state_dir = state, .opts = opts, .nopts = 4};
    gsd_exec *x = NULL;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("slurm", &c, &x, &d));
    seen s = {0};
    for (int i = 0; i < 10; i++) { /* the first resync is done, the worker waits */
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    ASSERT_EQ(s.adopt, 0);
    unsigned id = sbatch("-H -p gpu -N1 --gres=gpu:v100:1 -D /tmp -o /dev/null --wrap true");
    ASSERT(id > 0);
    gs_time t0 = now_us();
    ASSERT(wait_for(x, &s, c_adopt, 5));
    gs_time took = now_us() - t0;
    if (took > 2 * GS_SEC) fprintf(stderr, "  adopt seen after %lld us\n", (long long)took);
    ASSERT(took < 2 * GS_SEC);
    char ext[32];
    snprintf(ext, sizeof ext, "slurm:%u", id);
    ASSERT_STR(s.adopt_ext, ext);
    gsd_exec_retire(x, -1, ext, GS_JOB_REJECTED, "test: refused");
    gsd_exec_destroy(x);
    ASSERT_CONTAINS(state_of(id), "CANCELLED");
}

/* A job an operator holds (JobHeldAdmin) is not adopted while the hold lasts; a comment's
 * priority past what a spec accepts is clamped. */
static void adopt_admin_hold_and_prio(void)
{
    unsigned held = sbatch("-H -p gpu --gres=gpu:1 -J adminheld --wrap 'sleep 1'");
    ASSERT(held > 0);
    ASSERT_EQ(sh("scontrol hold %u", held), 0);
    gsd_exec *x = make_exec();
    ASSERT(x);
    seen s = {0};
    unsigned big =
        sbatch("-H -p gpu --gres=gpu:1 -J bigprio --comment priority=99999999999 --wrap 'sleep 1'");
    ASSERT(big > 0);
    ASSERT(wait_for(x, &s, c_adopt, 20));
    for (int i = 0; i < 10; i++) { /* a few more polls: the admin-held job stays unadopted */
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    char ext[32];
    snprintf(ext, sizeof ext, "slurm:%u", big);
    ASSERT_EQ(s.adopt, 1);
    ASSERT_STR(s.adopt_ext, ext);
    ASSERT_EQ(s.adopt_prio, GSD_PRIO_MAX);
    ASSERT_EQ(sh("scancel %u %u", held, big), 0);
    gsd_exec_destroy(x);
}

static void gone_on_scancel(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    seen s = {0};
    /* a held adopted job cancelled by its user */
    unsigned id = sbatch("-H -p gpu --gres=gpu:1 --wrap 'sleep 1'");
    ASSERT(id > 0);
    ASSERT(wait_for(x, &s, c_adopt, 20));
    char ext[32], cmd[64];
    snprintf(ext, sizeof ext, "slurm:%u", id);
    ASSERT_OK(gsd_exec_bind(x, 202, ext));
    snprintf(cmd, sizeof cmd, "scancel %u", id);
    ASSERT_EQ(sh("%s", cmd), 0);
    ASSERT(wait_for(x, &s, c_gone, 20));
    ASSERT_EQ(s.gone_job, 202);
    gsd_exec_retire(x, 202, ext, 4, "cancelled in Slurm");
    /* a running gsched job cancelled in Slurm: GONE, then its run ends */
    job j;
    make_job(&j, 203, 1, 1, 1, "sleep 60", "n1", NULL);
    seen r = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &r));
    ASSERT(wait_for(x, &r, c_started, 30));
    snprintf(cmd, sizeof cmd, "scancel %u", hid(r.handle[0]));
    ASSERT_EQ(sh("%s", cmd), 0);
    ASSERT(wait_for(x, &r, c_done, 30));
    ASSERT_EQ(r.gone, 1);
    ASSERT_EQ(r.gone_job, 203);
    ASSERT_NE(r.last.exit_code, 0);
    gsd_exec_forget(x, 203);
    gsd_exec_retire(x, 203, NULL, 4, "cancelled");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static int c_out4(const seen *s)
{
    return s->outside[4] == 3;
}

static int c_out4_full(const seen *s)
{
    return s->outside[4] == 8;
}

static int c_out4_zero(const seen *s)
{
    return s->outside[4] == 0;
}

static void outside_gpus(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    seen s = {0};
    unsigned id = sbatch("-p other -w n4 --gres=gpu:3 --wrap 'sleep 60'");
    ASSERT(id > 0);
    ASSERT(wait_for(x, &s, c_out4, 20));
    ASSERT_EQ(s.outside[1], 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "scancel %u", id);
    ASSERT_EQ(sh("%s", cmd), 0);
    ASSERT(wait_for(x, &s, c_out4_zero, 20));
    ASSERT_EQ(s.adopt, 0); /* not in a managed partition: never adopted */
    gsd_exec_destroy(x);
}

/* Placed on a node whose GPUs a foreign job holds: not started within start_timeout, re-held and
 * reported lost with Slurm's pending reason. */
static void start_timeout(void)
{
    const char *opts[] = {"partitions=gpu", "poll_ms=100", "start_timeout=3", conf_opt};
    gsd_exec_conf c = {.state_dir = state, .opts = opts, .nopts = 4};
    gsd_exec *x = NULL;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("slurm", &c, &x, &d));
    seen s = {0};
    unsigned fid = sbatch("-p other -w n4 --gres=gpu:8 --wrap 'sleep 60'");
    ASSERT(fid > 0);
    ASSERT(wait_for(x, &s, c_out4_full, 20));
    job j;
    make_job(&j, 106, 1, 1, 2, "sleep 1", "n4", NULL);
    seen r = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &r));
    ASSERT(wait_for(x, &r, c_done, 30));
    ASSERT_EQ(r.started, 0);
    ASSERT_EQ(r.last.lost, 1);
    ASSERT_CONTAINS(r.last_msg, "Slurm did not start it within 3 s: ");
    ASSERT_CONTAINS(r.last_msg, "Resources");
    char cmd[64];
    snprintf(cmd, sizeof cmd, "scancel %u", fid);
    ASSERT_EQ(sh("%s", cmd), 0);
    gsd_exec_forget(x, 106);
    gsd_exec_retire(x, 106, NULL, 4, "cancelled");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

static int has_node_ev(const seen *s, const char *ev)
{
    for (int i = 0; i < s->nnode_ev; i++)
        if (!strcmp(s->node_ev[i], ev)) return 1;
    return 0;
}

static int c_n2_down(const seen *s)
{
    return has_node_ev(s, "n2=2");
}

static int c_n2_up(const seen *s)
{
    return has_node_ev(s, "n2=0");
}

static void node_down_up(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    seen s = {0};
    for (int i = 0; i < 5; i++) { /* a healthy cluster: no node event at first */
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    ASSERT_EQ(s.nnode_ev, 0);
    ASSERT_EQ(sh("\"$FX\" stop-node n2"), 0);
    int down = wait_for(x, &s, c_n2_down, 60);
    ASSERT_EQ(sh("\"$FX\" cont-node n2"), 0);
    ASSERT(down);
    ASSERT(wait_for(x, &s, c_n2_up, 90));
    gsd_exec_destroy(x);
}

static void recover_after_restart(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    job j;
    make_job(&j, 301, 1, 1, 1, "sleep 60", "n3", NULL);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_started, 30));
    unsigned id = hid(s.handle[0]);
    gsd_exec_destroy(x); /* the daemon dies (kill -9): Slurm keeps the job running */
    x = make_exec();
    ASSERT(x);
    int alive, exited, lost;
    ASSERT_OK(gsd_exec_recover(x, 301, 1, 1, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(alive, 1);
    ASSERT_EQ(lost, 0);
    ASSERT_OK(gsd_exec_bind(x, 301, NULL));
    /* a job with no Slurm job at all: lost, never started */
    ASSERT_OK(gsd_exec_recover(x, 302, 1, 1, now_us(), &alive, &exited, &lost));
    ASSERT_EQ(lost, 1);
    ASSERT_OK(gsd_exec_bind(x, 302, NULL));
    ASSERT_EQ(gsd_exec_sweep(x, NULL, NULL), 0);
    seen r = {0};
    ASSERT(wait_for(x, &r, c_done, 10));
    ASSERT_EQ(r.done, 1);
    ASSERT_EQ(r.last.job_id, 302);
    ASSERT_EQ(r.last.never_started, 1);
    gsd_exec_forget(x, 302);
    ASSERT(!strncmp(state_of(id), "RUNNING ", 8));
    /* the recovered run is stopped like any other */
    r.done = 0;
    ASSERT_OK(gsd_exec_stop(x, 301, now_us(), 0));
    ASSERT(wait_for(x, &r, c_done, 30));
    ASSERT_EQ(r.last.job_id, 301);
    ASSERT_EQ(r.last.killed, 1);
    gsd_exec_forget(x, 301);
    gsd_exec_destroy(x);
    /* the held job of 301, released behind gsched's back while no daemon ran */
    char cmd[64];
    snprintf(cmd, sizeof cmd, "scontrol release %u", id);
    ASSERT_EQ(sh("%s", cmd), 0);
    x = make_exec();
    ASSERT(x);
    ASSERT_OK(gsd_exec_bind(x, 301, NULL));
    ASSERT_EQ(gsd_exec_sweep(x, NULL, NULL), 1);
    int held = 0;
    for (int i = 0; i < 50 && !held; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &r);
        held = !strcmp(state_of(id), "PENDING 0");
        if (!held) nap_ms(100);
    }
    ASSERT(held);
    gsd_exec_destroy(x);
    /* a restart where 301 is final (not bound): the sweep cancels its Slurm job */
    x = make_exec();
    ASSERT(x);
    ASSERT_EQ(gsd_exec_sweep(x, NULL, NULL), 1);
    int cancelled = 0;
    for (int i = 0; i < 50 && !cancelled; i++) {
        cancelled = !strncmp(state_of(id), "CANCELLED", 9);
        if (!cancelled) nap_ms(100);
    }
    ASSERT(cancelled);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* Another gsched daemon managing partition "other" tags its Slurm jobs the same way: its
 * "gsched:401" is not this daemon's job 401.  The sweep leaves it alone and a launch of this
 * daemon's job 401 submits its own Slurm job instead of releasing the other one (someone
 * else's command and account). */
static void other_partition_tag_not_ours(void)
{
    unsigned id = sbatch("-H -p other --gres=gpu:1 -D /tmp -o /dev/null --wrap 'sleep 60'");
    ASSERT(id > 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "scontrol update jobid=%u admincomment=gsched:401", id);
    ASSERT_EQ(sh("%s", cmd), 0);
    gsd_exec *x = make_exec();
    ASSERT(x);
    ASSERT_EQ(gsd_exec_sweep(x, NULL, NULL), 0);
    job j;
    make_job(&j, 401, 1, 1, 1, "true", "n1", NULL);
    seen s = {0};
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    ASSERT(wait_for(x, &s, c_done, 30));
    ASSERT_EQ(s.started, 1);
    ASSERT(hid(s.handle[0]) != id);
    ASSERT_STR(state_of(id), "PENDING 0");
    gsd_exec_forget(x, 401);
    gsd_exec_retire(x, 401, NULL, 3, "done");
    snprintf(cmd, sizeof cmd, "scancel %u", id);
    sh("%s", cmd);
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* slurmctld down when gsched launches: not the job's fault (a launch failure of the job is
 * counted against --launch-attempts and fails it at the last), the node's: GSD_XLAUNCH_NODE,
 * so the daemon drains until check() passes again, and the next launch works. */
static void launch_while_ctld_down(void)
{
    gsd_exec *x = make_exec();
    ASSERT(x);
    seen s = {0};
    for (int i = 0; i < 3; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    ASSERT_EQ(sh("kill -TERM $(\"$FX\" pids | awk '$1 == \"slurmctld\" { print $2 }')"), 0);
    nap_ms(1000);
    job j;
    make_job(&j, 501, 1, 1, 1, "true", "n2", NULL);
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &s));
    /* the submit and the resync after it go unanswered (libslurm tries ~9 s each) */
    char why[256] = "";
    int down = 0;
    for (int i = 0; i < 600 && !down; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        down = gsd_exec_check(x, why, sizeof why) != 0;
        if (!down) nap_ms(100);
    }
    /* the worker may have been inside a resync when the launch came: give it the time to
     * try the submit too (~9 s) and the resync after it */
    for (int i = 0; i < 200; i++) {
        gsd_exec_poll(x, now_us(), on_ev, &s);
        nap_ms(100);
    }
    int early = s.done;
    ASSERT_EQ(sh("\"$FX\" restart-ctld > /dev/null 2>&1"), 0);
    ASSERT(down);
    ASSERT_EQ(early, 0); /* no RUN_DONE before Slurm can say the job holds no GPUs */
    ASSERT(wait_for(x, &s, c_done, 60));
    ASSERT_EQ(s.last.job_id, 501);
    ASSERT_EQ(s.last.launch_failed, GSD_XLAUNCH_NODE);
    ASSERT_CONTAINS(s.last_msg, "cannot submit to Slurm");
    gsd_exec_forget(x, 501);
    ASSERT_OK(gsd_exec_check(x, why, sizeof why));
    seen r = {0};
    j.l.run = 2;
    ASSERT_OK(gsd_exec_launch(x, &j.l, now_us(), on_ev, &r));
    ASSERT(wait_for(x, &r, c_done, 60));
    ASSERT_EQ(r.started, 1);
    ASSERT_EQ(r.last.exit_code, 0);
    gsd_exec_forget(x, 501);
    gsd_exec_retire(x, 501, NULL, 3, "done");
    gsd_spec_release(&j.spec);
    gsd_exec_destroy(x);
}

/* An operator's typo in partitions=: said as such, not "no node with GPUs". */
static void unknown_partition(void)
{
    const char *opts[] = {"partitions=gpu,gpux", conf_opt};
    gsd_exec_conf c = {.state_dir = state, .opts = opts, .nopts = 2};
    gsd_exec *x = NULL;
    gs_diag d;
    ASSERT_OK(gsd_exec_create("slurm", &c, &x, &d));
    gs_cluster *cl = NULL;
    ASSERT_EQ(gsd_exec_cluster(x, NULL, &cl, &d), GS_EINVAL);
    ASSERT(!cl);
    ASSERT_CONTAINS(d.msg, "partition 'gpux' is not in Slurm");
    gsd_exec_destroy(x);
}

static void cleanup(void)
{
    /* nothing: the fixture is stopped at exit */
}

static const test_case tests[] = {
    {"options_checked", options_checked},
    {"cluster_from_slurm", cluster_from_slurm},
    {"one_task", one_task},
    {"exit_code", exit_code},
    {"gang", gang},
    {"mixed_sizes_refused", mixed_sizes_refused},
    {"stop_requeue_relaunch", stop_requeue_relaunch},
    {"retire_cancels_held_job", retire_cancels_held_job},
    {"adopt_sbatch_job", adopt_sbatch_job},
    {"adopt_admin_hold_and_prio", adopt_admin_hold_and_prio},
    {"adaptive_poll", adaptive_poll},
    {"gone_on_scancel", gone_on_scancel},
    {"outside_gpus", outside_gpus},
    {"start_timeout", start_timeout},
    {"node_down_up", node_down_up},
    {"recover_after_restart", recover_after_restart},
    {"other_partition_tag_not_ours", other_partition_tag_not_ours},
    {"launch_while_ctld_down", launch_while_ctld_down},
    {"unknown_partition", unknown_partition},
    {"cleanup", cleanup},
};

static void fixture_down(void)
{
    if (!fixture_up) return;
    fixture_up = 0;
    sh("\"$FX\" down > /dev/null 2>&1");
}

int main(int argc, char **argv)
{
    snprintf(state, sizeof state, "/tmp/gs-slurm-backend-state-XXXXXX");
    if (!mkdtemp(state)) return 1;
    chmod(state, 0755);
    if (sh("\"$FX\" check") != 0) return 77; /* check printed "SKIP: reason" */
    /* one Slurm test at a time on this machine (tests/e2e/lib/root.sh's lock) */
    int lk = open("/tmp/gsched-slurm.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (lk >= 0) {
        for (int i = 0; i < 6000 && flock(lk, LOCK_EX | LOCK_NB) != 0; i++) nap_ms(100);
    }
    char topo[400];
    snprintf(topo, sizeof topo, "%s/topology.conf", state);
    FILE *f = fopen(topo, "w");
    if (!f) return 1;
    fprintf(f, "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\nSwitchName=top "
               "Switches=s[1-2]\n");
    fclose(f);
    sh("\"$FX\" down > /dev/null 2>&1");
    if (sh("\"$FX\" up") != 0) {
        printf("Bail out! the Slurm fixture did not start\n");
        sh("\"$FX\" down");
        return 1;
    }
    fixture_up = 1;
    atexit(fixture_down);
    snprintf(conf_opt, sizeof conf_opt, "conf=%s/etc/slurm.conf", FDIR);
    setenv("SLURM_CONF", FDIR "/etc/slurm.conf", 1);
    int rc = test_main(argc, argv, tests, sizeof tests / sizeof *tests);
    fixture_down();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", state);
    if (system(rm) != 0) rc = 1;
    return rc;
}
