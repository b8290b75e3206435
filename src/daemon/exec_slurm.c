/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exec_slurm.c - the "slurm" executor (exec.h): gsched decides who runs where and when, Slurm
 * runs the processes.  Every gsched job is one Slurm batch job, submitted held (priority 0)
 * as the job's user, given exactly the nodes and GPUs per node gsched chose
 * (slurm_update_job: req_nodes, node count, GRES, priority INFINITE, begin time now) and
 * reused across runs (a stopped run's job is requeued into hold as soon as the run ends; one
 * that ended by itself stays finished in Slurm until the next launch requeues it into hold).  The
 * backend also reports what happens in Slurm outside the runs gsched launched: node states
 * (GSD_X_NODE), GPUs held by foreign jobs (GSD_X_OUTSIDE), held jobs users submitted with plain
 * sbatch into a managed partition (GSD_X_ADOPT) and jobs users cancelled (GSD_X_GONE).  This is the
 * only file that includes <slurm/slurm.h> (libslurm is GPL-2.0-or-later, and its ABI changes every
 * release: built only with GSCHED_HAVE_SLURM).
 *
 * Threading.  A worker thread owns every libslurm call (slurm_init once per process; never
 * slurm_fini, another executor may be created later).  The scheduler thread's hooks append
 * commands (submit + place, hold, requeue-hold, signal, cancel, tag) to a queue and read
 * results; the worker runs the queue (and what is queued meanwhile), then resynchronises
 * (slurm_load_jobs, slurm_load_node, slurm_load_partitions with SHOW_ALL|SHOW_DETAIL, each
 * asked "changed since my last answer?", so an unchanged poll costs three small answers; a
 * full reload every poll_ms) into a snapshot of plain C data, right after commands and at an
 * interval that adapts to what a resync costs (twice its cost, between poll_min_ms and
 * poll_ms), and calls conf.wake when a result or a changed snapshot is ready.  poll() takes the
 * newest snapshot and turns it into events.  Hooks that need an answer now (cluster, bind,
 * recover, sweep, kill_now) ask the worker for a fresh snapshot and wait for it (bounded).
 * slurmctld unreachable: said once in the log, retried with backoff; no answer never becomes a
 * node failure or a job end (the last snapshot stays), and check() fails (the daemon launches
 * nothing) until it answers again.  A launch it did not answer is no fault of the job:
 * reported as GSD_XLAUNCH_NODE (the daemon drains every node until check() passes, and does
 * not count it against --launch-attempts).
 *
 * Tags.  Every Slurm job this backend submits carries admin_comment "gsched:JOBID" (users
 * cannot set admin_comment); an adopted job gets the tag when it is bound.  The tag is how a
 * restarted gsched finds its jobs: the backend keeps no files of its own besides the logs.  A
 * tag counts only on a job of a managed partition (another daemon may manage other ones).
 *
 * Task environment and logs (mirrors exec_local.c).  The batch job's environment is built from
 * nothing: the operator's --pass-env names, PATH = GSD_JOB_PATH and HOME / USER / LOGNAME /
 * SHELL of the account, the spec's env, then gsched's variables (GSCHED_*, WORLD_SIZE...).
 * What changes from run to run (GSCHED_RUN, GSCHED_RESTARTS, MASTER_ADDR = the first task's
 * node address, MASTER_PORT, GSCHED_GRACE_SECONDS, which task runs on which node) is written
 * by the daemon at each launch to LOGDIR/JOB/run.env (daemon-generated values only) and read
 * by the generated script; per task it sets GSCHED_TASK_INDEX, RANK, NODE_RANK, LOCAL_RANK=0,
 * GSCHED_NODE, GSCHED_LOG and CUDA_VISIBLE_DEVICES (Slurm's, split between the tasks of a
 * node).  One task: the batch script runs the command; N tasks: one srun step, each task
 * finding its gsched index from (SLURMD_NODENAME, SLURM_LOCALID).  An elastic job (issue 13)
 * always runs as one srun step whose task count, WORLD_SIZE, GSCHED_GENERATION and
 * GSCHED_NUM_GPUS come from run.env, so its Slurm job is reused at each generation's size
 * (the launch updates nodes, task count, CPUs and GRES as for any run); a drain is a stop (SIGTERM
 * to the steps, requeue into hold at the drain timeout).  Task I's output goes to
 * LOGDIR/JOB/task-I.log (the batch shell's own to batch.log): the log directory must be on a
 * file system every compute node reaches at the same path.  In multi-user mode LOGDIR/JOB
 * belongs to the job's account (0700): Slurm writes the logs as the user; the daemon opens
 * them without following links, and writes run.env through a fresh file renamed into place.
 *
 * Runs.  A run is LAUNCHING (command queued), PLACED (released, not yet RUNNING: re-held and
 * reported lost after start_timeout), RUNNING (TASK_STARTED sent once Slurm's nodes and GPUs
 * per node were checked against gsched's placement: a mismatch requeues it into hold and
 * loses the run), ENDED (outcome known), DONE (RUN_DONE sent).  RUN_DONE is sent only once a
 * snapshot taken after the backend's last command for the job shows Slurm no longer holds its
 * GPUs (not RUNNING, SUSPENDED or COMPLETING).  Stop = SIGTERM to the tasks (one task: the
 * batch step, whose shell execs the command; several: the steps only, never srun in the batch
 * shell, which would SIGKILL its step), then at the deadline requeue into hold (GSD_X_KILLED). Jobs
 * Slurm requeued by itself (node failure) are re-held at once and their run reported lost.
 * A Slurm job whose run ended while a node of it did not answer is not reused (what ran there
 * may still be alive, and its slurmd's late messages would hit the new allocation): the next
 * launch cancels it and submits a new one.
 *
 * Invariants:
 *  - only the worker thread calls libslurm; it touches scheduler-thread state only through
 *    the queue, the result list and the published snapshot, all under one mutex;
 *  - every command queued is sent, also those queued right before destroy (a retire's cancel);
 *  - a run's state is decided only from a snapshot whose sequence number is at least that of
 *    the last command the backend sent for it (no stale view of its own actions);
 *  - GPUs are released to gsched (RUN_DONE) only when Slurm says they are free;
 *  - no decision is taken from "slurmctld did not answer";
 *  - the backend aborts only when out of memory (its OOM helpers sx_realloc / sx_strdup, the
 *    daemon's rule); libslurm errors come back as GS_E* codes, log lines or run outcomes.
 * Capabilities: MULTINODE, ADOPT (recover / sweep), CLUSTER, EXTERNAL; no SUSPEND (Slurm keeps
 * GRES allocated while a job is suspended) and no RESIZE.  Nor GSD_XCAP_MIXED: a job whose tasks
 * have different GPU counts (issue 14 members) is refused at submit, naming why (one srun step
 * asks one GRES count for every node or task; a heterogeneous Slurm job would be needed).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "exec.h"
#include "ident.h"

/* exported by libslurm 22.05 but not declared in its headers */
extern char *slurm_job_reason_string(enum job_state_reason inx);

#define TAG_PREFIX "gsched:"
#define EXT_PREFIX "slurm:"
/* Tasks of different sizes (issue 14): one srun step's GRES request is one count per node or per
 * task, so such a job would need a heterogeneous Slurm job; not done yet, refused instead. */
#define GSD_SLURM_NO_MIXED                                                                       \
    "the slurm executor cannot run tasks of different GPU counts in one job (a Slurm step asks " \
    "one GRES count per node or per task; a heterogeneous job is not used yet)"

/* ---- small helpers -------------------------------------------------------------------------- */

/* Out of memory is the one thing that aborts (as everywhere in the daemon); an executor may not
 * include the daemon's core (gsd_sched.h), so it has its own two helpers. */
static void *sx_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) abort();
    return q;
}

static void *sx_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) abort();
    return p;
}

static char *sx_strdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p) abort();
    return p;
}

static char *xfmt(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *xfmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = sx_realloc(NULL, (size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    return p;
}

static char *sdup(const char *s)
{
    return s ? sx_strdup(s) : NULL;
}

typedef gsd_envv strv;

static void sv_push(strv *s, char *p)
{
    gsd_envv_push(s, p);
}

static void sv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Shell single quoting: 'it'\''s'. */
static void sh_quote(strv *out, const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++) n += *p == '\'' ? 4 : 1;
    char *q = sx_realloc(NULL, n), *w = q;
    *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    *w++ = '\'';
    *w = '\0';
    sv_push(out, q);
}

/* 1 if s is made of characters safe in a generated shell file without quoting. */
static int safe_word(const char *s)
{
    if (!s || !*s) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-' || *p == '_' || *p == ':'))
            return 0;
    return 1;
}

/* ---- the snapshot (plain data the worker makes from libslurm's answers) ---------------------- */

typedef struct sjob {
    uint32_t id;
    uint32_t state; /* JOB_* base state */
    int completing;
    uint32_t reason;
    char *reason_str;
    uint32_t priority;
    uint16_t restart_cnt;
    int64_t tag; /* gsched job id from admin_comment, -1 none */
    char *partition, *name, *comment, *qos, *account, *work_dir;
    char *tres_per_node, *tres_per_task, *tres_per_job;
    uint32_t user_id, group_id, num_nodes, num_tasks, time_limit, exit_code;
    uint16_t ntasks_per_node, cpus_per_task;
    uint64_t pn_min_memory;
    time_t submit_time;
    char **nodes; /* allocated nodes, expanded, Slurm's order */
    char **gres;  /* gres_detail_str per allocated node (may be fewer) */
    int nnodes, ngres;
} sjob;

typedef struct snode {
    char *name, *addr, *gres, *reason, *rack;
    uint32_t state;
    int cpus;
    int64_t mem_mb;
    int managed;
} snode;

typedef struct snap {
    uint64_t seq; /* every command with seq <= this was done before the loads */
    sjob *j;
    size_t nj;
    struct jix {
        uint32_t id;
        size_t i;
    } * jix; /* (id, index into j) sorted by id: snap_job's binary search */
    snode *n;
    size_t nn;
    char **parts; /* managed partitions */
    size_t nparts;
    uint64_t digest;
} snap;

static void snap_free(snap *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nj; i++) {
        sjob *j = &s->j[i];
        free(j->reason_str);
        free(j->partition);
        free(j->name);
        free(j->comment);
        free(j->qos);
        free(j->account);
        free(j->work_dir);
        free(j->tres_per_node);
        free(j->tres_per_task);
        free(j->tres_per_job);
        for (int k = 0; k < j->nnodes; k++) free(j->nodes[k]);
        for (int k = 0; k < j->ngres; k++) free(j->gres[k]);
        free(j->nodes);
        free(j->gres);
    }
    free(s->j);
    free(s->jix);
    for (size_t i = 0; i < s->nn; i++) {
        free(s->n[i].name);
        free(s->n[i].addr);
        free(s->n[i].gres);
        free(s->n[i].reason);
        free(s->n[i].rack);
    }
    free(s->n);
    for (size_t i = 0; i < s->nparts; i++) free(s->parts[i]);
    free(s->parts);
    free(s);
}

static const sjob *snap_job(const snap *s, uint32_t id)
{
    if (!s || !id) return NULL;
    size_t lo = 0, hi = s->nj;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t m = s->jix[mid].id;
        if (m == id) return &s->j[s->jix[mid].i];
        if (m < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int jix_cmp(const void *a, const void *b)
{
    uint32_t x = ((const struct jix *)a)->id, y = ((const struct jix *)b)->id;
    return x < y ? -1 : x > y;
}

static const snode *snap_node(const snap *s, const char *name)
{
    if (!s) return NULL;
    for (size_t i = 0; i < s->nn; i++)
        if (!strcmp(s->n[i].name, name)) return &s->n[i];
    return NULL;
}

static int snap_managed_part(const snap *s, const char *part)
{
    if (!s || !part) return 0;
    /* a job may name several partitions: "gpu,other" */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", part);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        for (size_t i = 0; i < s->nparts; i++)
            if (!strcmp(s->parts[i], p)) return 1;
    return 0;
}

static int job_final(const sjob *j)
{
    return j->state >= JOB_COMPLETE && !j->completing;
}

/* Slurm holds the job's resources (GPUs). */
static int job_holds(const sjob *j)
{
    return j->state == JOB_RUNNING || j->state == JOB_SUSPENDED || j->completing;
}

/* Exit code from a wait status as Slurm keeps it. */
static int wait_code(uint32_t st)
{
    if (st & 0x7f) return 128 + (int)(st & 0x7f);
    return (int)((st >> 8) & 0xff);
}

/* "gpu:2(IDX:0-1)" or "gpu:v100:2(IDX:0,3)": the GPU indices in out (at most cap); returns
 * how many GPUs the entry names (-1 if none). */
static int gres_gpus(const char *s, int *out, int cap, int *nidx)
{
    *nidx = 0;
    if (!s) return -1;
    const char *g = strstr(s, "gpu");
    if (!g) return -1;
    int count = -1;
    const char *paren = strchr(g, '(');
    const char *colon = g + 3;
    /* the count is the last :N before '(' */
    for (const char *p = colon; *p && (!paren || p < paren); p++)
        if (*p == ':' && p[1] >= '0' && p[1] <= '9') count = atoi(p + 1);
    const char *idx = strstr(g, "IDX:");
    if (idx) {
        idx += 4;
        while (*idx && *idx != ')') {
            char *end;
            long a = strtol(idx, &end, 10), b = a;
            if (end == idx) break;
            idx = end;
            if (*idx == '-') {
                b = strtol(idx + 1, &end, 10);
                idx = end;
            }
            for (long v = a; v <= b; v++)
                if (*nidx < cap) out[(*nidx)++] = (int)v;
            if (*idx == ',') idx++;
        }
    }
    return count;
}

/* A node's configured GRES "gpu:v100:8(S:0)" / "gpu:8": count and type (type[0]=0 if none). */
static int node_gpus(const char *gres, char *type, size_t cap)
{
    type[0] = '\0';
    if (!gres) return 0;
    const char *g = strstr(gres, "gpu:");
    if (!g) return 0;
    g += 4;
    const char *c2 = strchr(g, ':');
    const char *end = g + strcspn(g, ",(");
    if (c2 && c2 < end) {
        snprintf(type, cap, "%.*s", (int)(c2 - g), g);
        return atoi(c2 + 1);
    }
    return atoi(g);
}

/* "gres:gpu:2", "gres/gpu:v100:2", "gres:gpu:v100:2": count and type. */
static int tres_gpus(const char *tres, char *type, size_t cap)
{
    if (type) type[0] = '\0';
    if (!tres) return 0;
    const char *g = strstr(tres, "gpu");
    if (!g) return 0;
    g += 3;
    if (*g != ':') return 0;
    g++;
    const char *end = g + strcspn(g, ",;");
    const char *c2 = strchr(g, ':');
    if (c2 && c2 < end) {
        if (type) snprintf(type, cap, "%.*s", (int)(c2 - g), g);
        return atoi(c2 + 1);
    }
    return atoi(g);
}

/* ---- options, commands, results, backend state ---------------------------------------------- */

enum { C_LAUNCH, C_HOLD, C_REQHOLD, C_SIGNAL, C_CANCEL, C_TAG, C_NOP };

typedef struct cmd {
    int kind;
    uint64_t seq;
    int64_t job_id;
    int run;
    uint32_t sid;
    /* submit (sid == 0) */
    char *name, *partition, *script, *workdir, *out, *tag;
    strv env;
    uint32_t uid, gid, time_min;
    uint16_t cpt;
    uint64_t mem;
    /* placement */
    char *nodes;
    uint32_t nnodes, ntasks;
    uint16_t tpn; /* tasks per node when even, else 0 */
    char *tres_node, *tres_task;
    int requeue_first;
    int sig;
    int steps_only; /* C_SIGNAL: the tasks are srun's (signal the steps, never the batch shell) */
    char *comment;
    struct cmd *next;
} cmd;

typedef struct result {
    int kind;
    uint64_t seq;
    int64_t job_id;
    int run;
    uint32_t sid;
    int rc;
    int unreach; /* rc: slurmctld did not answer (not the job's fault) */
    char msg[512];
    struct result *next;
} result;

static void cmd_free(cmd *c)
{
    if (!c) return;
    free(c->name);
    free(c->partition);
    free(c->script);
    free(c->workdir);
    free(c->out);
    free(c->tag);
    sv_free(&c->env);
    free(c->nodes);
    free(c->tres_node);
    free(c->tres_task);
    free(c->comment);
    free(c);
}

enum { P_LAUNCHING, P_PLACED, P_RUNNING, P_ENDED, P_DONE };

typedef struct xrun {
    int64_t job_id;
    int run, ntasks, gpt;
    uint32_t sid;
    uint64_t wait_seq; /* decide only from snapshots with seq >= this */
    int phase;
    gs_time start_deadline, grace, kill_at;
    int stopping, killed, signalled;
    int srun_form;    /* the tasks run in an srun step (several tasks, or an elastic job) */
    char **task_node; /* per task */
    int *task_local;  /* index of the task among those of its node */
    uint16_t restart_seen;
    int exit_code, lost, never_started, launch_failed, failed_task;
    char msg[512];
} xrun;

typedef struct xbind {
    int64_t job_id;
    uint32_t sid;  /* 0: not known yet (a job launched later gets one) */
    int adopted;   /* bound to an external job (ext) */
    int seen;      /* the Slurm job was in a snapshot */
    int last_live; /* last seen not final */
    int gone;      /* GONE reported */
    int stale;     /* a run of it ended while a node of it did not answer: not reused */
} xbind;

typedef struct xslurm {
    /* settings (read-only after create) */
    char **parts; /* partitions=..., NULL = Slurm's default */
    size_t nparts;
    int poll_ms;     /* longest time between two resyncs */
    int poll_min_ms; /* shortest (the interval adapts to what a resync costs) */
    int start_timeout_s;
    char *conf_path; /* NULL: $SLURM_CONF / Slurm's default */
    char *logs;
    char **pass;
    size_t npass;
    int switch_users, allow_root;
    char *srun;
    void (*log)(void *ud, const char *msg);
    void *log_ud;
    void (*wake)(void *ud);
    void *wake_ud;

    /* shared with the worker (under mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    pthread_t th;
    int started, quit;
    cmd *q_head, *q_tail;
    result *r_head, *r_tail;
    snap *pub; /* newest snapshot, not yet taken */
    uint64_t seq, pub_seq;
    int want_sync;
    int reach_ok; /* last resync answered */
    char reach_err[256];
    int had_snap;
    /* the worker's own */
    job_info_msg_t *w_jm; /* Slurm's last answers, kept to ask "changed since?" */
    node_info_msg_t *w_nm;
    partition_info_msg_t *w_pm;

    /* the scheduler thread's */
    snap *cur;
    xrun **v;
    size_t n, cap;
    xbind *b;
    size_t nb, capb;
    uint32_t *adopted_seen; /* ADOPT reported (this backend's life) */
    size_t nad, capad;
    uint32_t *retired; /* Slurm jobs gsched cancelled (no GONE for them) */
    size_t nret, capret;
    struct nodestate {
        char *name;
        int state, outside, reported, out_reported;
    } * ns;
    size_t nns;
    int logged_unreach;
} xslurm;

static void xlog(xslurm *x, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void xlog(xslurm *x, const char *fmt, ...)
{
    if (!x->log) return;
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    x->log(x->log_ud, m);
}

/* ---- the worker ------------------------------------------------------------------------------ */

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static char *g_init_conf;

static void do_slurm_init(void)
{
    slurm_init(g_init_conf);
}

static const char *serr(void)
{
    return slurm_strerror(slurm_get_errno());
}

/* 1 if the last libslurm call failed for want of an answer from slurmctld (down, restarting,
 * unreachable, timed out), not because Slurm refused the request. */
static int unreachable(void)
{
    int e = slurm_get_errno();
    return (e >= SLURM_COMMUNICATIONS_CONNECTION_ERROR &&
            e <= SLURM_COMMUNICATIONS_MISSING_SOCKET_ERROR) ||
           (e >= SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR &&
            e <= SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR) ||
           e == SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT || e == SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT ||
           e == ESLURM_IN_STANDBY_MODE || e == ESLURM_IN_STANDBY_USE_BACKUP || e == ECONNREFUSED ||
           e == ETIMEDOUT || e == ECONNRESET || e == EHOSTUNREACH;
}

/* Expand a hostlist expression ("n[1-3],x") into names. */
static char **hl_expand(const char *expr, int *n)
{
    *n = 0;
    if (!expr || !*expr) return NULL;
    hostlist_t hl = slurm_hostlist_create(expr);
    if (!hl) return NULL;
    char **v = NULL;
    int cap = 0;
    char *h;
    while ((h = slurm_hostlist_shift(hl))) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            v = sx_realloc(v, (size_t)cap * sizeof *v);
        }
        v[(*n)++] = sx_strdup(h);
        free(h);
    }
    slurm_hostlist_destroy(hl);
    return v;
}

static void digest_add(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) *h = (*h ^ c[i]) * 1099511628211ULL;
}

static void digest_str(uint64_t *h, const char *s)
{
    if (s)
        digest_add(h, s, strlen(s) + 1);
    else
        digest_add(h, "", 1);
}

/* Leaf switches of topology.conf next to slurm.conf: node -> switch name. */
static void read_topology(const xslurm *x, snap *s)
{
    const char *conf = x->conf_path ? x->conf_path : getenv("SLURM_CONF");
    if (!conf) conf = "/etc/slurm/slurm.conf";
    char path[PATH_MAX];
    const char *slash = strrchr(conf, '/');
    snprintf(path, sizeof path, "%.*stopology.conf", slash ? (int)(slash - conf + 1) : 0, conf);
    FILE *f = fopen(path, "re");
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char sw[256] = "", nodes[3072] = "";
        char *save = NULL;
        for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
            if (!strncasecmp(t, "SwitchName=", 11))
                snprintf(sw, sizeof sw, "%s", t + 11);
            else if (!strncasecmp(t, "Nodes=", 6))
                snprintf(nodes, sizeof nodes, "%s", t + 6);
        }
        if (!sw[0] || !nodes[0]) continue;
        int n;
        char **v = hl_expand(nodes, &n);
        for (int i = 0; i < n; i++) {
            for (size_t k = 0; k < s->nn; k++)
                if (!strcmp(s->n[k].name, v[i]) && !s->n[k].rack) s->n[k].rack = sx_strdup(sw);
            free(v[i]);
        }
        free(v);
    }
    fclose(f);
}

/* Drop the worker's kept answers: the next resync loads everything. */
static void resync_forget(xslurm *x)
{
    if (x->w_jm) slurm_free_job_info_msg(x->w_jm);
    if (x->w_nm) slurm_free_node_info_msg(x->w_nm);
    if (x->w_pm) slurm_free_partition_info_msg(x->w_pm);
    x->w_jm = NULL;
    x->w_nm = NULL;
    x->w_pm = NULL;
}

/* One resync.  Unless full, each list is asked for with the update time of the worker's last
 * answer, so slurmctld answers SLURM_NO_CHANGE_IN_DATA (a few bytes instead of every job) when
 * nothing changed since (slurmctld compares in whole seconds minus one: a change in the second
 * of the last answer still sends the list).  Some fields change without a new update time (a
 * pending job's reason): a full resync (every poll_ms) reloads everything.  The answers are
 * kept for the next resync.  Returns a new snapshot; NULL with *unchanged = 1 when no list
 * changed and !need (the last snapshot is still Slurm's view); NULL with why set when slurmctld
 * did not answer (the kept answers are dropped: the next resync is a full one). */
static snap *resync(xslurm *x, int full, int need, int *unchanged, char *why, size_t cap)
{
    job_info_msg_t *jm = NULL;
    node_info_msg_t *nm = NULL;
    partition_info_msg_t *pm = NULL;
    int changed = 0;
    *unchanged = 0;
    if (full) resync_forget(x);
    if (slurm_load_jobs(x->w_jm ? x->w_jm->last_update : 0, &jm, SHOW_ALL | SHOW_DETAIL) ==
        SLURM_SUCCESS) {
        if (x->w_jm) slurm_free_job_info_msg(x->w_jm);
        x->w_jm = jm;
        changed = 1;
    } else if (!x->w_jm || slurm_get_errno() != SLURM_NO_CHANGE_IN_DATA) {
        snprintf(why, cap, "slurm_load_jobs: %s", serr());
        resync_forget(x);
        return NULL;
    }
    if (slurm_load_node(x->w_nm ? x->w_nm->last_update : 0, &nm, SHOW_ALL | SHOW_DETAIL) ==
        SLURM_SUCCESS) {
        if (x->w_nm) slurm_free_node_info_msg(x->w_nm);
        x->w_nm = nm;
        changed = 1;
    } else if (!x->w_nm || slurm_get_errno() != SLURM_NO_CHANGE_IN_DATA) {
        snprintf(why, cap, "slurm_load_node: %s", serr());
        resync_forget(x);
        return NULL;
    }
    if (slurm_load_partitions(x->w_pm ? x->w_pm->last_update : 0, &pm, SHOW_ALL) == SLURM_SUCCESS) {
        if (x->w_pm) slurm_free_partition_info_msg(x->w_pm);
        x->w_pm = pm;
        changed = 1;
    } else if (!x->w_pm || slurm_get_errno() != SLURM_NO_CHANGE_IN_DATA) {
        snprintf(why, cap, "slurm_load_partitions: %s", serr());
        resync_forget(x);
        return NULL;
    }
    if (!changed && !need) {
        *unchanged = 1;
        return NULL;
    }
    jm = x->w_jm;
    nm = x->w_nm;
    pm = x->w_pm;
    snap *s = sx_calloc(1, sizeof *s);
    uint64_t h = 1469598103934665603ULL;
    /* managed partitions and their nodes */
    char **mnodes = NULL;
    int nmn = 0;
    for (uint32_t i = 0; i < pm->record_count; i++) {
        partition_info_t *p = &pm->partition_array[i];
        int want = 0;
        if (x->nparts) {
            for (size_t k = 0; k < x->nparts; k++)
                if (p->name && !strcmp(p->name, x->parts[k])) want = 1;
        } else {
            want = (p->flags & PART_FLAG_DEFAULT) != 0;
        }
        if (!want) continue;
        s->parts = sx_realloc(s->parts, (s->nparts + 1) * sizeof *s->parts);
        s->parts[s->nparts++] = sx_strdup(p->name);
        int n;
        char **v = hl_expand(p->nodes, &n);
        mnodes = sx_realloc(mnodes, (size_t)(nmn + n + 1) * sizeof *mnodes);
        for (int k = 0; k < n; k++) mnodes[nmn++] = v[k];
        free(v);
        digest_str(&h, p->name);
    }
    s->n = sx_calloc(nm->record_count + 1, sizeof *s->n);
    for (uint32_t i = 0; i < nm->record_count; i++) {
        node_info_t *ni = &nm->node_array[i];
        if (!ni->name) continue;
        snode *sn = &s->n[s->nn++];
        sn->name = sx_strdup(ni->name);
        sn->addr = sdup(ni->node_addr ? ni->node_addr : ni->name);
        sn->gres = sdup(ni->gres);
        sn->reason = sdup(ni->reason);
        sn->state = ni->node_state;
        sn->cpus = ni->cpus;
        sn->mem_mb = (int64_t)ni->real_memory;
        for (int k = 0; k < nmn; k++)
            if (!strcmp(mnodes[k], ni->name)) sn->managed = 1;
        digest_str(&h, sn->name);
        digest_add(&h, &sn->state, sizeof sn->state);
        digest_str(&h, sn->reason);
    }
    for (int k = 0; k < nmn; k++) free(mnodes[k]);
    free(mnodes);
    read_topology(x, s);
    s->j = sx_calloc(jm->record_count + 1, sizeof *s->j);
    for (uint32_t i = 0; i < jm->record_count; i++) {
        slurm_job_info_t *ji = &jm->job_array[i];
        sjob *j = &s->j[s->nj++];
        j->id = ji->job_id;
        j->state = ji->job_state & JOB_STATE_BASE;
        j->completing = (ji->job_state & JOB_COMPLETING) != 0;
        j->reason = ji->state_reason;
        const char *rs = slurm_job_reason_string((enum job_state_reason)ji->state_reason);
        j->reason_str = ji->state_desc && *ji->state_desc
                            ? xfmt("%s (%s)", rs ? rs : "?", ji->state_desc)
                            : sdup(rs ? rs : "?");
        j->priority = ji->priority;
        j->restart_cnt = ji->restart_cnt;
        j->tag = -1;
        /* a tag counts only in a managed partition: another gsched daemon managing other
         * partitions tags its jobs the same way, and its "gsched:5" is not our job 5 */
        if (ji->admin_comment && !strncmp(ji->admin_comment, TAG_PREFIX, strlen(TAG_PREFIX)) &&
            snap_managed_part(s, ji->partition)) {
            char *end;
            long long t = strtoll(ji->admin_comment + strlen(TAG_PREFIX), &end, 10);
            if (end != ji->admin_comment + strlen(TAG_PREFIX) && t >= 0) j->tag = t;
        }
        j->partition = sdup(ji->partition);
        j->name = sdup(ji->name);
        j->comment = sdup(ji->comment);
        j->qos = sdup(ji->qos);
        j->account = sdup(ji->account);
        j->work_dir = sdup(ji->work_dir);
        j->tres_per_node = sdup(ji->tres_per_node);
        j->tres_per_task = sdup(ji->tres_per_task);
        j->tres_per_job = sdup(ji->tres_per_job);
        j->user_id = ji->user_id;
        j->group_id = ji->group_id;
        j->num_nodes = ji->num_nodes;
        j->num_tasks = ji->num_tasks;
        j->time_limit = ji->time_limit;
        j->exit_code = ji->exit_code;
        j->ntasks_per_node = ji->ntasks_per_node;
        j->cpus_per_task = ji->cpus_per_task;
        j->pn_min_memory = ji->pn_min_memory;
        j->submit_time = ji->submit_time;
        if (ji->nodes && *ji->nodes) { /* allocated now, or when it ended */
            j->nodes = hl_expand(ji->nodes, &j->nnodes);
            if (ji->gres_detail_cnt) {
                j->gres = sx_realloc(NULL, ji->gres_detail_cnt * sizeof *j->gres);
                for (uint32_t k = 0; k < ji->gres_detail_cnt; k++)
                    j->gres[j->ngres++] =
                        sx_strdup(ji->gres_detail_str[k] ? ji->gres_detail_str[k] : "");
            }
        }
        digest_add(&h, &j->id, sizeof j->id);
        digest_add(&h, &ji->job_state, sizeof ji->job_state);
        digest_add(&h, &j->priority, sizeof j->priority);
        digest_add(&h, &j->restart_cnt, sizeof j->restart_cnt);
        digest_add(&h, &j->reason, sizeof j->reason);
        digest_str(&h, ji->admin_comment);
        digest_str(&h, ji->nodes);
        for (int k = 0; k < j->ngres; k++) digest_str(&h, j->gres[k]);
    }
    s->digest = h;
    s->jix = sx_calloc(s->nj + 1, sizeof *s->jix);
    for (size_t i = 0; i < s->nj; i++) s->jix[i] = (struct jix){s->j[i].id, i};
    qsort(s->jix, s->nj, sizeof *s->jix, jix_cmp);
    return s;
}

static int do_update(job_desc_msg_t *d, char *msg, size_t cap, const char *what)
{
    if (slurm_update_job(d) == SLURM_SUCCESS) return 0;
    snprintf(msg, cap, "%s of Slurm job %u failed: %s", what, d->job_id, serr());
    return -1;
}

static void run_cmd(xslurm *x, cmd *c, result *r)
{
    (void)x;
    r->kind = c->kind;
    r->seq = c->seq;
    r->job_id = c->job_id;
    r->run = c->run;
    r->sid = c->sid;
    job_desc_msg_t d;
    switch (c->kind) {
    case C_LAUNCH: {
        if (!c->sid) {
            slurm_init_job_desc_msg(&d);
            d.name = c->name;
            d.partition = c->partition;
            d.admin_comment = c->tag;
            d.script = c->script;
            d.environment = c->env.v;
            d.env_size = (uint32_t)c->env.n;
            d.work_dir = c->workdir;
            d.std_out = c->out;
            d.std_err = c->out;
            d.open_mode = OPEN_MODE_APPEND;
            d.user_id = c->uid;
            d.group_id = c->gid;
            d.priority = 0;
            d.num_tasks = c->ntasks;
            d.min_nodes = d.max_nodes = c->nnodes;
            if (c->tpn) d.ntasks_per_node = c->tpn;
            d.tres_per_node = c->tres_node;
            d.tres_per_task = c->tres_task;
            d.cpus_per_task = c->cpt;
            if (c->mem) d.pn_min_memory = c->mem;
            if (c->time_min) d.time_limit = c->time_min;
            d.requeue = 1;
            submit_response_msg_t *resp = NULL;
            if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS || !resp) {
                r->rc = -1;
                r->unreach = unreachable();
                snprintf(r->msg, sizeof r->msg, "%s: %s",
                         r->unreach ? "cannot submit to Slurm" : "Slurm refused the job", serr());
                return;
            }
            r->sid = resp->job_id;
            slurm_free_submit_response_response_msg(resp);
        } else if (c->requeue_first) {
            /* a finished job is put back, held, to be reused; one already pending is fine */
            if (slurm_requeue(c->sid, JOB_REQUEUE_HOLD) != SLURM_SUCCESS &&
                slurm_get_errno() != ESLURM_JOB_PENDING) {
                r->rc = -1;
                r->unreach = unreachable();
                snprintf(r->msg, sizeof r->msg, "cannot requeue Slurm job %u: %s", c->sid, serr());
                return;
            }
        }
        slurm_init_job_desc_msg(&d);
        d.job_id = r->sid;
        d.req_nodes = c->nodes;
        d.min_nodes = d.max_nodes = c->nnodes;
        d.num_tasks = c->ntasks;
        /* the CPUs of this run's task count: a reused job kept its first run's (an elastic
         * job's next generation may have more tasks: srun refused "more processors requested
         * than permitted") */
        d.min_cpus = c->ntasks * (c->cpt ? c->cpt : 1);
        if (c->tpn) d.ntasks_per_node = c->tpn;
        d.tres_per_node = c->tres_node;
        d.tres_per_task = c->tres_task;
        d.admin_comment = c->tag;
        d.priority = INFINITE;
        d.begin_time = time(NULL);
        if (do_update(&d, r->msg, sizeof r->msg, "placing")) {
            r->rc = -1;
            r->unreach = unreachable();
        }
        return;
    }
    case C_HOLD:
        slurm_init_job_desc_msg(&d);
        d.job_id = c->sid;
        d.priority = 0;
        d.begin_time = time(NULL);
        if (do_update(&d, r->msg, sizeof r->msg, "holding")) r->rc = -1;
        return;
    case C_REQHOLD:
        if (slurm_requeue(c->sid, JOB_REQUEUE_HOLD) == SLURM_SUCCESS) return;
        if (slurm_get_errno() == ESLURM_JOB_PENDING) { /* not started: just hold it */
            slurm_init_job_desc_msg(&d);
            d.job_id = c->sid;
            d.priority = 0;
            if (do_update(&d, r->msg, sizeof r->msg, "holding")) r->rc = -1;
            return;
        }
        r->rc = -1;
        snprintf(r->msg, sizeof r->msg, "requeue into hold of Slurm job %u failed: %s", c->sid,
                 serr());
        return;
    case C_SIGNAL:
        /* one task: the command runs in the batch step (its shell execs it); several: they are
         * the tasks of the srun step, and the batch shell is srun, which would cancel its step
         * (SIGKILL to every task) on a SIGTERM: signal the steps only */
        if (slurm_kill_job(c->sid, (uint16_t)c->sig,
                           c->steps_only ? KILL_STEPS_ONLY : KILL_FULL_JOB) != SLURM_SUCCESS &&
            slurm_get_errno() != ESLURM_ALREADY_DONE) {
            r->rc = -1;
            snprintf(r->msg, sizeof r->msg, "signal %d to Slurm job %u failed: %s", c->sig, c->sid,
                     serr());
        }
        return;
    case C_CANCEL:
        if (c->comment) {
            slurm_init_job_desc_msg(&d);
            d.job_id = c->sid;
            d.comment = c->comment;
            slurm_update_job(&d); /* best effort: the reason for its owner */
        }
        if (slurm_kill_job(c->sid, SIGKILL, 0) != SLURM_SUCCESS &&
            slurm_get_errno() != ESLURM_ALREADY_DONE) {
            r->rc = -1;
            snprintf(r->msg, sizeof r->msg, "cancelling Slurm job %u failed: %s", c->sid, serr());
        }
        return;
    case C_TAG:
        slurm_init_job_desc_msg(&d);
        d.job_id = c->sid;
        d.admin_comment = c->tag;
        if (do_update(&d, r->msg, sizeof r->msg, "tagging")) r->rc = -1;
        return;
    default: return;
    }
}

/* A tag command needs no RPC of its own when a placement of the same Slurm job with the
 * same tag follows it in the batch (the placement's update sets admin_comment too). */
static int tag_covered(const cmd *c, const cmd *rest)
{
    for (; rest; rest = rest->next)
        if (rest->kind == C_LAUNCH && rest->sid == c->sid && rest->tag && c->tag &&
            !strcmp(rest->tag, c->tag))
            return 1;
    return 0;
}

static void *worker(void *arg)
{
    xslurm *x = arg;
    pthread_once(&g_init_once, do_slurm_init);
    uint64_t last_digest = 0;
    int backoff_ms = 0;
    int wait_ms = x->poll_min_ms; /* adaptive: see below */
    struct timespec last_full = {0, 0};
    for (;;) {
        pthread_mutex_lock(&x->mu);
        if (!x->q_head && !x->quit && !x->want_sync) {
            int ms = backoff_ms ? backoff_ms : wait_ms;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += ms / 1000;
            ts.tv_nsec += (long)(ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&x->cv_work, &x->mu, &ts);
        }
        int quit = x->quit;
        cmd *q = x->q_head;
        x->q_head = x->q_tail = NULL;
        uint64_t upto = x->seq;
        int sync = x->want_sync;
        x->want_sync = 0;
        pthread_mutex_unlock(&x->mu);

        /* run the queue, and what was queued meanwhile (a scheduling cycle queues its
         * launches one by one, a bind its tag before the launch): one resync after them all */
        result *rh = NULL, *rt = NULL;
        while (q) {
            while (q) {
                cmd *next = q->next;
                result *r = sx_calloc(1, sizeof *r);
                if (q->kind == C_TAG && tag_covered(q, next)) {
                    r->kind = q->kind; /* the placement below sets the same tag */
                    r->seq = q->seq;
                    r->job_id = q->job_id;
                    r->sid = q->sid;
                } else {
                    run_cmd(x, q, r);
                }
                if (rt)
                    rt->next = r;
                else
                    rh = r;
                rt = r;
                cmd_free(q);
                q = next;
            }
            pthread_mutex_lock(&x->mu);
            if (!x->quit) {
                q = x->q_head;
                x->q_head = x->q_tail = NULL;
                upto = x->seq;
                sync |= x->want_sync;
                x->want_sync = 0;
            }
            pthread_mutex_unlock(&x->mu);
        }
        if (quit) { /* what was queued before destroy is sent (a retire's cancel) */
            resync_forget(x);
            while (rh) {
                result *r = rh;
                rh = r->next;
                free(r);
            }
            break;
        }
        char why[256] = "";
        int unchanged = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long since_full = (long)(t0.tv_sec - last_full.tv_sec) * 1000 +
                          (t0.tv_nsec - last_full.tv_nsec) / 1000000;
        int full = !last_full.tv_sec || since_full >= x->poll_ms;
        if (full) last_full = t0;
        snap *s = resync(x, full, rh || sync || !x->had_snap, &unchanged, why, sizeof why);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        /* Poll again after twice what this resync cost (slurmctld's time included), at least
         * poll_min_ms, at most poll_ms: an unchanged list costs one small answer, so a freed
         * GPU or a new sbatch job is seen within tens of ms; a large changing list is asked
         * for less often, and slurmctld never spends more than a third of its time on us. */
        long cost_ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        wait_ms = (int)(2 * cost_ms < x->poll_min_ms ? x->poll_min_ms : 2 * cost_ms);
        if (wait_ms > x->poll_ms) wait_ms = x->poll_ms;
        int changed = 0;
        pthread_mutex_lock(&x->mu);
        if (rh) {
            if (x->r_tail)
                x->r_tail->next = rh;
            else
                x->r_head = rh;
            x->r_tail = rt;
            changed = 1;
        }
        if (s) {
            s->seq = upto;
            if (!x->reach_ok) changed = 1;
            x->reach_ok = 1;
            backoff_ms = 0;
            if (s->digest != last_digest || rh || sync || !x->had_snap) changed = 1;
            last_digest = s->digest;
            snap_free(x->pub);
            x->pub = s;
            x->pub_seq = upto;
            x->had_snap = 1;
        } else if (unchanged) { /* no command, no waiter, Slurm's lists as last published */
            if (!x->reach_ok) changed = 1;
            x->reach_ok = 1;
            backoff_ms = 0;
        } else {
            if (x->reach_ok || !x->reach_err[0]) changed = 1;
            x->reach_ok = 0;
            snprintf(x->reach_err, sizeof x->reach_err, "%s", why);
            backoff_ms = backoff_ms ? (backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2) : 500;
            if (sync) x->pub_seq = upto; /* answer the waiter: no newer view */
        }
        pthread_cond_broadcast(&x->cv_done);
        pthread_mutex_unlock(&x->mu);
        if (changed && x->wake) x->wake(x->wake_ud);
    }
    return NULL;
}

/* ---- scheduler-thread side: queue, snapshot ------------------------------------------------ */

static cmd *cmd_new(int kind, int64_t job_id, int run, uint32_t sid)
{
    cmd *c = sx_calloc(1, sizeof *c);
    c->kind = kind;
    c->job_id = job_id;
    c->run = run;
    c->sid = sid;
    return c;
}

/* Queue a command; returns its sequence number. */
static uint64_t enqueue(xslurm *x, cmd *c)
{
    pthread_mutex_lock(&x->mu);
    c->seq = ++x->seq;
    if (x->q_tail)
        x->q_tail->next = c;
    else
        x->q_head = c;
    x->q_tail = c;
    uint64_t s = c->seq;
    pthread_cond_signal(&x->cv_work);
    pthread_mutex_unlock(&x->mu);
    return s;
}

static uint64_t simple_cmd(xslurm *x, int kind, int64_t job_id, uint32_t sid)
{
    return enqueue(x, cmd_new(kind, job_id, 0, sid));
}

/* Take the newest published snapshot, if any. */
static void take_snap(xslurm *x)
{
    pthread_mutex_lock(&x->mu);
    if (x->pub) {
        snap_free(x->cur);
        x->cur = x->pub;
        x->pub = NULL;
    }
    pthread_mutex_unlock(&x->mu);
}

/* Ask for a fresh snapshot (after every queued command) and wait for it, at most timeout_s.
 * 1 when the current snapshot is that fresh. */
static int sync_snap(xslurm *x, double timeout_s)
{
    pthread_mutex_lock(&x->mu);
    uint64_t want = x->seq;
    x->want_sync = 1;
    pthread_cond_signal(&x->cv_work);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = (long long)(timeout_s * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec += (long)(ns % 1000000000LL);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (x->want_sync && rc == 0) rc = pthread_cond_timedwait(&x->cv_done, &x->mu, &ts);
    while (x->pub_seq < want && rc == 0) rc = pthread_cond_timedwait(&x->cv_done, &x->mu, &ts);
    int ok = x->reach_ok && x->pub_seq >= want;
    pthread_mutex_unlock(&x->mu);
    take_snap(x);
    return ok && x->cur && x->cur->seq >= want;
}

/* ---- bindings -------------------------------------------------------------------------------- */

static xbind *find_bind(xslurm *x, int64_t job_id)
{
    for (size_t i = 0; i < x->nb; i++)
        if (x->b[i].job_id == job_id) return &x->b[i];
    return NULL;
}

static xbind *bind_sid(xslurm *x, uint32_t sid)
{
    for (size_t i = 0; i < x->nb; i++)
        if (sid && x->b[i].sid == sid) return &x->b[i];
    return NULL;
}

static xbind *add_bind(xslurm *x, int64_t job_id, uint32_t sid, int adopted)
{
    xbind *b = find_bind(x, job_id);
    if (!b) {
        if (x->nb == x->capb) {
            x->capb = x->capb ? x->capb * 2 : 16;
            x->b = sx_realloc(x->b, x->capb * sizeof *x->b);
        }
        b = &x->b[x->nb++];
        memset(b, 0, sizeof *b);
        b->job_id = job_id;
    }
    if (sid && b->sid != sid) {
        b->sid = sid;
        b->seen = b->gone = b->stale = 0;
    }
    if (adopted) b->adopted = 1;
    return b;
}

static void drop_bind(xslurm *x, int64_t job_id)
{
    for (size_t i = 0; i < x->nb; i++)
        if (x->b[i].job_id == job_id) {
            x->b[i] = x->b[--x->nb];
            return;
        }
}

static void u32_add(uint32_t **v, size_t *n, size_t *cap, uint32_t id)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i] == id) return;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *v = sx_realloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = id;
}

static int u32_has(const uint32_t *v, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == id) return 1;
    return 0;
}

/* The newest non-final Slurm job tagged for job_id (or a final one when none is live). */
static const sjob *tagged(const snap *s, int64_t job_id)
{
    const sjob *best = NULL;
    if (!s) return NULL;
    for (size_t i = 0; i < s->nj; i++) {
        const sjob *j = &s->j[i];
        if (j->tag != job_id) continue;
        if (!best || (job_final(best) && !job_final(j)) ||
            (job_final(best) == job_final(j) && j->id > best->id))
            best = j;
    }
    return best;
}

/* The Slurm job of gsched job job_id: bound, else found by tag.  0 if none. */
static uint32_t job_sid(xslurm *x, int64_t job_id)
{
    xbind *b = find_bind(x, job_id);
    if (b && b->sid) return b->sid;
    const sjob *j = tagged(x->cur, job_id);
    return j ? j->id : 0;
}

static int parse_ext(const char *ext, uint32_t *sid)
{
    if (!ext || strncmp(ext, EXT_PREFIX, strlen(EXT_PREFIX))) return -1;
    char *end;
    unsigned long v = strtoul(ext + strlen(EXT_PREFIX), &end, 10);
    if (end == ext + strlen(EXT_PREFIX) || *end || v == 0 || v > UINT32_MAX) return -1;
    *sid = (uint32_t)v;
    return 0;
}

/* ---- create / destroy ------------------------------------------------------------------------ */

static void slurm_destroy(void *b);

static int mkdir_p_mode(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
    for (char *p = buf + 1;; p++) {
        int end = *p == '\0';
        if (*p != '/' && !end) continue;
        *p = '\0';
        if (mkdir(buf, mode) == 0)
            chmod(buf, mode);
        else if (errno != EEXIST)
            return -1;
        if (end) break;
        *p = '/';
    }
    return 0;
}

static int slurm_create(const gsd_exec_conf *conf, void **out, gs_diag *d)
{
    xslurm *x = calloc(1, sizeof *x);
    if (!x) return GS_ENOMEM;
    x->poll_ms = 250;
    x->poll_min_ms = 20;
    x->start_timeout_s = 60;
    x->log = conf->log;
    x->log_ud = conf->log_ud;
    x->wake = conf->wake;
    x->wake_ud = conf->wake_ud;
    x->switch_users = conf->switch_users;
    x->allow_root = conf->allow_root;
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv_work, NULL);
    pthread_cond_init(&x->cv_done, NULL);
    static const char known[] =
        "partitions=LIST, poll_ms=N, poll_min_ms=N, start_timeout=SECONDS, conf=PATH";
    for (size_t i = 0; i < conf->nopts; i++) {
        const char *o = conf->opts[i], *eq = o ? strchr(o, '=') : NULL;
        if (!eq) {
            slurm_destroy(x);
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "executor slurm: option '%s' is not KEY=VALUE (known: %s)",
                               o ? o : "", known);
        }
        size_t kl = (size_t)(eq - o);
        const char *v = eq + 1;
        char *end = NULL;
        if (kl == 10 && !strncmp(o, "partitions", kl)) {
            char *buf = sx_strdup(v), *save = NULL;
            for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                x->parts = sx_realloc(x->parts, (x->nparts + 1) * sizeof *x->parts);
                x->parts[x->nparts++] = sx_strdup(p);
            }
            free(buf);
            if (!x->nparts) {
                slurm_destroy(x);
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "executor slurm: partitions= needs at least one name");
            }
        } else if (kl == 7 && !strncmp(o, "poll_ms", kl)) {
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 10 || n > 60000) {
                slurm_destroy(x);
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "executor slurm: poll_ms='%s': a number of milliseconds "
                                   "between 10 and 60000",
                                   v);
            }
            x->poll_ms = (int)n;
        } else if (kl == 11 && !strncmp(o, "poll_min_ms", kl)) {
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 60000) {
                slurm_destroy(x);
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "executor slurm: poll_min_ms='%s': a number of milliseconds "
                                   "between 1 and 60000",
                                   v);
            }
            x->poll_min_ms = (int)n;
        } else if (kl == 13 && !strncmp(o, "start_timeout", kl)) {
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 86400) {
                slurm_destroy(x);
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "executor slurm: start_timeout='%s': a number of seconds "
                                   "between 1 and 86400",
                                   v);
            }
            x->start_timeout_s = (int)n;
        } else if (kl == 4 && !strncmp(o, "conf", kl)) {
            if (!*v) {
                slurm_destroy(x);
                return gs_diag_set(d, GS_EINVAL, 0, 0, "executor slurm: conf= needs a path");
            }
            free(x->conf_path);
            x->conf_path = sx_strdup(v);
        } else {
            slurm_destroy(x);
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "executor slurm: unknown option '%.*s' (known: %s)", (int)kl, o,
                               known);
        }
    }
    if (x->conf_path && access(x->conf_path, R_OK) != 0) {
        int e = errno;
        gs_diag_set(d, GS_EINVAL, 0, 0, "executor slurm: conf=%s: %s", x->conf_path, strerror(e));
        slurm_destroy(x);
        return GS_EINVAL;
    }
    /* slurm_init once per process: the first executor's conf (or $SLURM_CONF) wins */
    if (!g_init_conf && x->conf_path) g_init_conf = sx_strdup(x->conf_path);
    for (size_t k = 0; k < conf->npass_env; k++) {
        const char *name = conf->pass_env[k], *val = name ? getenv(name) : NULL;
        if (!val) continue;
        x->pass = sx_realloc(x->pass, (x->npass + 1) * sizeof *x->pass);
        x->pass[x->npass++] = xfmt("%s=%s", name, val);
    }
    x->logs = conf->log_dir ? sx_strdup(conf->log_dir) : xfmt("%s/logs", conf->state_dir);
    if (mkdir_p_mode(x->logs, conf->switch_users ? 0711 : 0700)) {
        int e = errno;
        gs_diag_set(d, GS_EIO, 0, 0, "cannot create log directory '%s': %s", x->logs, strerror(e));
        slurm_destroy(x);
        return GS_EIO;
    }
    if (conf->switch_users) chmod(x->logs, 0711);
    char *abs = realpath(x->logs, NULL);
    if (abs) {
        free(x->logs);
        x->logs = abs;
    }
    static const char *const sruns[] = {"/usr/bin/srun", "/usr/local/bin/srun"};
    x->srun = sx_strdup("srun");
    for (size_t i = 0; i < sizeof sruns / sizeof *sruns; i++)
        if (access(sruns[i], X_OK) == 0) {
            free(x->srun);
            x->srun = sx_strdup(sruns[i]);
            break;
        }
    if (pthread_create(&x->th, NULL, worker, x) != 0) {
        slurm_destroy(x);
        return gs_diag_set(d, GS_EIO, 0, 0, "executor slurm: cannot start its thread");
    }
    x->started = 1;
    xlog(x,
         "executor slurm: jobs run through Slurm (slurm.conf %s; partitions %s; task logs in %s, "
         "which every compute node must reach at that path)",
         x->conf_path           ? x->conf_path
         : getenv("SLURM_CONF") ? getenv("SLURM_CONF")
                                : "default",
         x->nparts ? "as given" : "Slurm's default", x->logs);
    *out = x;
    return 0;
}

static void run_free(xrun *r)
{
    if (!r) return;
    for (int i = 0; i < r->ntasks; i++) free(r->task_node ? r->task_node[i] : NULL);
    free(r->task_node);
    free(r->task_local);
    free(r);
}

static void slurm_destroy(void *b)
{
    xslurm *x = b;
    if (!x) return;
    if (x->started) {
        pthread_mutex_lock(&x->mu);
        x->quit = 1;
        pthread_cond_signal(&x->cv_work);
        pthread_mutex_unlock(&x->mu);
        pthread_join(x->th, NULL);
    }
    while (x->q_head) {
        cmd *c = x->q_head;
        x->q_head = c->next;
        cmd_free(c);
    }
    while (x->r_head) {
        result *r = x->r_head;
        x->r_head = r->next;
        free(r);
    }
    snap_free(x->pub);
    snap_free(x->cur);
    for (size_t i = 0; i < x->n; i++) run_free(x->v[i]);
    free(x->v);
    free(x->b);
    free(x->adopted_seen);
    free(x->retired);
    for (size_t i = 0; i < x->nns; i++) free(x->ns[i].name);
    free(x->ns);
    for (size_t i = 0; i < x->nparts; i++) free(x->parts[i]);
    free(x->parts);
    for (size_t i = 0; i < x->npass; i++) free(x->pass[i]);
    free(x->pass);
    free(x->conf_path);
    free(x->logs);
    free(x->srun);
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv_work);
    pthread_cond_destroy(&x->cv_done);
    free(x);
}

/* ---- runs ------------------------------------------------------------------------------------ */

static xrun *find_run(const xslurm *x, int64_t job_id)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i]->job_id == job_id) return x->v[i];
    return NULL;
}

static xrun *add_run(xslurm *x, int64_t job_id, int run, int ntasks)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 16;
        x->v = sx_realloc(x->v, x->cap * sizeof *x->v);
    }
    xrun *r = sx_calloc(1, sizeof *r);
    r->job_id = job_id;
    r->run = run;
    r->ntasks = ntasks;
    r->kill_at = GS_TIME_MAX;
    r->start_deadline = GS_TIME_MAX;
    r->failed_task = -1;
    r->task_node = sx_calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *r->task_node);
    r->task_local = sx_calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *r->task_local);
    x->v[x->n++] = r;
    return r;
}

static int slurm_has(const void *b, int64_t job_id)
{
    return find_run(b, job_id) != NULL;
}

static size_t slurm_nruns(const void *b)
{
    return ((const xslurm *)b)->n;
}

/* The outcome of a run is known: RUN_DONE once Slurm no longer holds its GPUs. */
static void run_end(xrun *r, int code, int lost, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void run_end(xrun *r, int code, int lost, const char *fmt, ...)
{
    if (r->phase >= P_ENDED) return;
    r->phase = P_ENDED;
    r->exit_code = code;
    r->lost = lost;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg, sizeof r->msg, fmt, ap);
        va_end(ap);
    }
}

/* ---- logs ------------------------------------------------------------------------------------ */

static void slurm_log_path(const void *b, int64_t job_id, int task, char *buf, size_t cap)
{
    const xslurm *x = b;
    snprintf(buf, cap, "%s/%lld/task-%d.log", x->logs, (long long)job_id, task);
}

static int slurm_log_open(const void *b, int64_t job_id, int task, int *fd)
{
    const xslurm *x = b;
    char dir[PATH_MAX], name[32];
    snprintf(dir, sizeof dir, "%s/%lld", x->logs, (long long)job_id);
    snprintf(name, sizeof name, "task-%d.log", task);
    *fd = -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return GS_ENOENT;
    struct stat dst, st;
    int f = -1;
    if (fstat(dfd, &dst) == 0)
        f = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
    if (f < 0) return GS_ENOENT;
    /* a regular file with one link, the job's own (or the daemon's): never what a link in the
     * account's directory points to */
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        (st.st_uid != dst.st_uid && st.st_uid != geteuid())) {
        close(f);
        return GS_ENOENT;
    }
    fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    *fd = f;
    return 0;
}

static int64_t slurm_task_pid(const char *handle)
{
    (void)handle;
    return -1;
}

/* The job's directory LOGDIR/JOB, owned by the account (mode 0700).  An O_DIRECTORY fd or -1. */
static int job_dir(const xslurm *x, int64_t job_id, uid_t uid, gid_t gid)
{
    char name[32];
    snprintf(name, sizeof name, "%lld", (long long)job_id);
    int lfd = open(x->logs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd < 0) return -1;
    if (mkdirat(lfd, name, 0700) != 0 && errno != EEXIST) {
        close(lfd);
        return -1;
    }
    int dfd = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(lfd);
    if (dfd < 0) return -1;
    if ((uid != geteuid() && fchown(dfd, uid, gid) != 0) || fchmod(dfd, 0700) != 0) {
        close(dfd);
        return -1;
    }
    return dfd;
}

/* Write run.env in the job's directory: a fresh file renamed over whatever is there. */
static int write_run_env(int dfd, const char *text, uid_t uid, gid_t gid)
{
    unlinkat(dfd, "run.env.tmp", 0);
    int fd = openat(dfd, "run.env.tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    size_t n = strlen(text), off = 0;
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    if (uid != geteuid() && fchown(fd, uid, gid) != 0) {
        close(fd);
        return -1;
    }
    close(fd);
    return renameat(dfd, "run.env.tmp", dfd, "run.env");
}

/* ---- launch ---------------------------------------------------------------------------------- */

/*
 * The per-task part of the generated script (run by the batch shell for one task, by each srun
 * task for several): finds the task's gsched index from its node and local id, sends its output
 * to its log, sets the per-task variables and execs the command ("$@").  No user text in it.
 */
static const char task_sh[] =
    ". \"$GSCHED_JOB_DIR/run.env\" || exit 126\n"
    "T=\n"
    "for e in $GSCHED_TASKMAP; do\n"
    "  case \"$e\" in \"$SLURMD_NODENAME:${SLURM_LOCALID:-0}:\"*) T=${e##*:} ;; esac\n"
    "done\n"
    "if [ -z \"$T\" ]; then\n"
    "  echo \"gsched: no task of this job for node $SLURMD_NODENAME, local id "
    "${SLURM_LOCALID:-0}\" >&2\n"
    "  exit 126\n"
    "fi\n"
    "L=\"$GSCHED_JOB_DIR/task-$T.log\"\n"
    "exec >>\"$L\" 2>&1\n"
    "R=$((GSCHED_TASK_BASE + T))\n"
    "G=${CUDA_VISIBLE_DEVICES:-}\n"
    "if [ \"${GSCHED_TPN:-1}\" -gt 1 ]; then\n"
    "  lo=$(( ${SLURM_LOCALID:-0} * GSCHED_GPUS )); i=0; G=\n"
    "  IFS=,; for g in ${CUDA_VISIBLE_DEVICES:-}; do\n"
    "    if [ $i -ge $lo ] && [ $i -lt $((lo + GSCHED_GPUS)) ]; then G=${G:+$G,}$g; fi\n"
    "    i=$((i + 1))\n"
    "  done; unset IFS\n"
    "fi\n"
    "export GSCHED_TASK_INDEX=$R RANK=$R NODE_RANK=$R LOCAL_RANK=0 GSCHED_NODE=$SLURMD_NODENAME "
    "GSCHED_LOG=\"$L\" CUDA_VISIBLE_DEVICES=\"$G\"\n"
    "unset GSCHED_TASKMAP GSCHED_TPN GSCHED_TASK_BASE GSCHED_SRUN_NTASKS T L R G e lo i g\n"
    "echo \"=== gsched: job $GSCHED_JOB_ID run $GSCHED_RUN task $GSCHED_TASK_INDEX started "
    "$(date -u +%Y-%m-%dT%H:%M:%SZ) on $GSCHED_NODE, GPUs $CUDA_VISIBLE_DEVICES ===\"\n"
    "exec \"$@\"\n";

/* The batch script: one task runs task_sh itself; N tasks run it in one srun step. */
static char *make_script(const xslurm *x, const gsd_launch *l)
{
    const gsd_spec *sp = l->spec;
    strv words = {0};
    if (sp->shell) {
        sh_quote(&words, "/bin/sh");
        sh_quote(&words, "-c");
        sh_quote(&words, sp->shell);
    } else {
        for (int k = 0; k < sp->argc; k++) sh_quote(&words, sp->argv[k]);
    }
    size_t n = 1;
    for (size_t i = 0; i < words.n; i++) n += strlen(words.v[i]) + 1;
    char *cmdline = sx_realloc(NULL, n);
    cmdline[0] = '\0';
    for (size_t i = 0; i < words.n; i++) {
        if (i) strcat(cmdline, " ");
        strcat(cmdline, words.v[i]);
    }
    sv_free(&words);
    char *s;
    /* an elastic job's Slurm job is reused at other sizes: always one srun step, its task count
     * from run.env (written at each launch) */
    if (l->ntasks == 1 && !gsd_spec_elastic(sp))
        s = xfmt("#!/bin/sh\n# gsched job %lld (generated by gsched's slurm executor)\n"
                 "GSCHED_TASK_SH='%s'\nexec /bin/sh -c \"$GSCHED_TASK_SH\" gsched-task %s\n",
                 (long long)l->job_id, task_sh, cmdline);
    else
        s = xfmt("#!/bin/sh\n# gsched job %lld (generated by gsched's slurm executor)\n"
                 ". \"$GSCHED_JOB_DIR/run.env\" || exit 126\n"
                 "GSCHED_TASK_SH='%s'\n"
                 "exec %s --ntasks=${GSCHED_SRUN_NTASKS:-%d} "
                 "${GSCHED_SRUN_TPN:+--ntasks-per-node=$GSCHED_SRUN_TPN} "
                 "--kill-on-bad-exit=1 /bin/sh -c \"$GSCHED_TASK_SH\" gsched-task %s\n",
                 (long long)l->job_id, task_sh, x->srun, l->ntasks, cmdline);
    free(cmdline);
    return s;
}

/* The batch job's environment (the part that stays the same across runs). */
static void make_env(const xslurm *x, const gsd_launch *l, const gsd_unix_user *u,
                     const char *jobdir, strv *env)
{
    gsd_exec_env_common(env, l, (const char *const *)x->pass, x->npass, u, jobdir);
    sv_push(env, xfmt("WORLD_SIZE=%d", l->world_size));
}

static int slurm_launch(void *b, const gsd_launch *l, gs_time now, gsd_xev_fn fn, void *ud)
{
    xslurm *x = b;
    (void)fn;
    (void)ud;
    if (find_run(x, l->job_id)) return GS_EEXIST;
    take_snap(x);
    if (!x->cur) sync_snap(x, 5.0); /* node addresses, the job's Slurm job */
    xrun *r = add_run(x, l->job_id, l->run, l->ntasks);
    const gsd_spec *sp = l->spec;
    r->gpt = sp->gpus_per_task;
    r->srun_form = l->ntasks > 1 || gsd_spec_elastic(sp);
    r->grace = l->grace;
    /* the node set in task order of first appearance, tasks per node */
    char **nodes = sx_realloc(NULL, (size_t)l->ntasks * sizeof *nodes);
    int *per = sx_calloc((size_t)l->ntasks, sizeof *per), nn = 0;
    int bad_name = 0;
    for (int i = 0; i < l->ntasks; i++) {
        r->task_node[i] = sx_strdup(l->task_node[i]);
        if (!safe_word(l->task_node[i])) bad_name = 1;
        int k = 0;
        while (k < nn && strcmp(nodes[k], l->task_node[i])) k++;
        if (k == nn) nodes[nn++] = (char *)l->task_node[i];
        r->task_local[i] = per[k]++;
    }
    int even = 1;
    for (int k = 1; k < nn; k++)
        if (per[k] != per[0]) even = 0;
    int tpn_max = 0;
    for (int k = 0; k < nn; k++)
        if (per[k] > tpn_max) tpn_max = per[k];
    /* the account, the job's directory, run.env */
    gsd_unix_user acct;
    char msg[512] = "";
    int ok = gsd_launch_account(sp->run_as, sp->user, x->switch_users, x->allow_root, &acct, msg,
                                sizeof msg) == 0,
        have_acct = ok;
    int dfd = -1;
    char jobdir[PATH_MAX];
    snprintf(jobdir, sizeof jobdir, "%s/%lld", x->logs, (long long)l->job_id);
    if (ok && bad_name) {
        snprintf(msg, sizeof msg, "node name '%s' cannot be used in a Slurm job script",
                 l->task_node[0]);
        ok = 0;
    }
    if (ok && (dfd = job_dir(x, l->job_id, acct.uid, acct.gid)) < 0) {
        snprintf(msg, sizeof msg, "cannot prepare the job's directory '%s': %s", jobdir,
                 strerror(errno));
        ok = 0;
    }
    /* an elastic job's checkpoints live in its directory across generations, its account's */
    if (ok && gsd_spec_elastic(sp) && !sp->checkpoint_dir &&
        mkdirat(dfd, "checkpoint", 0700) == 0 && acct.uid != geteuid())
        fchownat(dfd, "checkpoint", acct.uid, acct.gid, AT_SYMLINK_NOFOLLOW);
    const snode *first = snap_node(x->cur, l->task_node[0]);
    const char *maddr = first && safe_word(first->addr) ? first->addr : l->task_node[0];
    if (ok) {
        strv map = {0};
        size_t mlen = 1;
        for (int i = 0; i < l->ntasks; i++) {
            sv_push(&map, xfmt("%s:%d:%d", l->task_node[i], r->task_local[i], i));
            mlen += strlen(map.v[i]) + 1;
        }
        char *m = sx_realloc(NULL, mlen);
        m[0] = '\0';
        for (size_t i = 0; i < map.n; i++) {
            if (i) strcat(m, " ");
            strcat(m, map.v[i]);
        }
        sv_free(&map);
        char tpn[16] = "";
        if (even && nn > 0) snprintf(tpn, sizeof tpn, "%d", per[0]);
        /* an elastic job's size is this generation's (its Slurm job's environment is the
         * first launch's): WORLD_SIZE and the GSCHED_ size variables come from here */
        char *el = gsd_spec_elastic(sp)
                       ? xfmt("WORLD_SIZE=%d\nGSCHED_WORLD_SIZE=%d\nGSCHED_NUM_TASKS=%d\n"
                              "GSCHED_GENERATION=%d\nGSCHED_NUM_GPUS=%d\n"
                              "export WORLD_SIZE GSCHED_WORLD_SIZE GSCHED_NUM_TASKS "
                              "GSCHED_GENERATION GSCHED_NUM_GPUS\n",
                              l->world_size, l->world_size, l->world_size, l->generation,
                              l->world_size * sp->gpus_per_task)
                       : sx_strdup("");
        char *text =
            xfmt("# gsched job %lld run %d (written by gsched at launch)\n"
                 "GSCHED_RUN=%d\nGSCHED_RESTARTS=%d\nGSCHED_GRACE_SECONDS=%lld\n"
                 "MASTER_ADDR=%s\nMASTER_PORT=%d\n"
                 "export GSCHED_RUN GSCHED_RESTARTS GSCHED_GRACE_SECONDS MASTER_ADDR "
                 "MASTER_PORT\n%s"
                 "GSCHED_TASKMAP='%s'\nGSCHED_TPN=%d\nGSCHED_TASK_BASE=%d\n"
                 "GSCHED_SRUN_TPN=%s\nGSCHED_SRUN_NTASKS=%d\n",
                 (long long)l->job_id, l->run, l->run, l->run - 1, (long long)(l->grace / GS_SEC),
                 maddr, l->master_port, el, m, tpn_max, l->task_index_base, tpn, l->ntasks);
        free(el);
        free(m);
        if (write_run_env(dfd, text, acct.uid, acct.gid)) {
            snprintf(msg, sizeof msg, "cannot write '%s/run.env': %s", jobdir, strerror(errno));
            ok = 0;
        }
        free(text);
    }
    if (ok && l->task_ngpus) {
        /* the submit refuses such jobs (no GSD_XCAP_MIXED); one stored under another executor */
        snprintf(msg, sizeof msg, "%s", GSD_SLURM_NO_MIXED);
        ok = 0;
    }
    if (dfd >= 0) close(dfd);
    if (!ok) {
        run_end(r, 126, 0, "%s", msg);
        r->launch_failed = GSD_XLAUNCH_JOB;
        r->failed_task = 0;
        free(nodes);
        free(per);
        if (have_acct) gsd_unix_user_release(&acct);
        return 0;
    }
    cmd *c = cmd_new(C_LAUNCH, l->job_id, l->run, 0);
    /* placement */
    size_t len = 1;
    for (int k = 0; k < nn; k++) len += strlen(nodes[k]) + 1;
    c->nodes = sx_realloc(NULL, len);
    c->nodes[0] = '\0';
    for (int k = 0; k < nn; k++) {
        if (k) strcat(c->nodes, ",");
        strcat(c->nodes, nodes[k]);
    }
    c->nnodes = (uint32_t)nn;
    c->ntasks = (uint32_t)l->ntasks;
    /* reuse the job's Slurm job when it has one, unless an earlier run of it may still live on
     * a node that stopped answering: when that node comes back, its slurmd's late messages for
     * the job (epilog, batch completion) would hit the new allocation (Slurm requeues it and
     * loses count of its GPUs).  Such a job is cancelled and replaced by a new one. */
    uint32_t sid = job_sid(x, l->job_id);
    xbind *bd = find_bind(x, l->job_id);
    if (sid && bd && bd->sid == sid && bd->stale && !bd->adopted) {
        xlog(x,
             "executor slurm: job %lld: Slurm job %u ran on a node that did not answer; a new "
             "Slurm job replaces it",
             (long long)l->job_id, sid);
        simple_cmd(x, C_CANCEL, l->job_id, sid);
        u32_add(&x->retired, &x->nret, &x->capret, sid);
        sid = 0;
    }
    const sjob *sj = snap_job(x->cur, sid);
    /* GRES: "gres:gpu[:TYPE]:N" per node when the tasks are spread evenly, else per task.  A
     * reused job keeps its kind of request and its GPU type (Slurm refuses to drop a type). */
    char jtype[64] = "";
    int per_task = !even;
    if (sj) {
        if (tres_gpus(sj->tres_per_node, jtype, sizeof jtype) > 0)
            per_task = 0;
        else if (tres_gpus(sj->tres_per_task, jtype, sizeof jtype) > 0)
            per_task = 1;
    }
    const char *gt = sp->gpu_type ? sp->gpu_type : jtype[0] ? jtype : NULL;
    int count = per_task ? sp->gpus_per_task : tpn_max * sp->gpus_per_task;
    char *tres = gt ? xfmt("gres:gpu:%s:%d", gt, count) : xfmt("gres:gpu:%d", count);
    if (per_task)
        c->tres_task = tres;
    else
        c->tres_node = tres;
    if (even) c->tpn = (uint16_t)per[0];
    c->tag = xfmt(TAG_PREFIX "%lld", (long long)l->job_id);
    c->cpt = (uint16_t)(sp->cpus_per_task > 0 ? sp->cpus_per_task : 1);
    if (sid && (!x->cur || sj)) {
        c->sid = sid;
        if (sj && sj->state != JOB_PENDING) c->requeue_first = 1;
    } else {
        c->name = sx_strdup(sp->name ? sp->name : "gsched");
        c->partition = sdup(x->nparts                  ? x->parts[0]
                            : x->cur && x->cur->nparts ? x->cur->parts[0]
                                                       : NULL);
        c->script = make_script(x, l);
        make_env(x, l, &acct, jobdir, &c->env);
        char cwd[PATH_MAX];
        struct stat st;
        const char *wd = sp->workdir;
        if (!wd && x->switch_users && acct.home)
            wd = stat(acct.home, &st) == 0 && S_ISDIR(st.st_mode) ? acct.home : jobdir;
        if (!wd) wd = getcwd(cwd, sizeof cwd) ? cwd : "/";
        c->workdir = sx_strdup(wd);
        c->out = !r->srun_form ? xfmt("%s/task-0.log", jobdir) : xfmt("%s/batch.log", jobdir);
        c->uid = (uint32_t)acct.uid;
        c->gid = (uint32_t)acct.gid;
        c->cpt = (uint16_t)(sp->cpus_per_task > 0 ? sp->cpus_per_task : 1);
        if (sp->mem_mb_per_task > 0 && even)
            c->mem = (uint64_t)sp->mem_mb_per_task * (uint64_t)per[0];
        if (sp->time_limit > 0)
            c->time_min = (uint32_t)((sp->time_limit + 60 * GS_SEC - 1) / (60 * GS_SEC));
    }
    gsd_unix_user_release(&acct);
    free(nodes);
    free(per);
    r->sid = c->sid;
    r->phase = P_LAUNCHING;
    r->start_deadline = now + (gs_time)x->start_timeout_s * GS_SEC;
    r->wait_seq = enqueue(x, c);
    return 0;
}

/* ---- stop / kill ----------------------------------------------------------------------------- */

static int slurm_stop(void *b, int64_t job_id, gs_time now, gs_time grace)
{
    xslurm *x = b;
    xrun *r = find_run(x, job_id);
    if (!r) return GS_ENOENT;
    gs_time at = now + (grace > 0 ? grace : 0);
    if (!r->stopping || at < r->kill_at) r->kill_at = at;
    r->stopping = 1;
    /* no grace: no SIGTERM, the requeue into hold at the next poll ends it (a signal first
     * would race with it: the job could end on the signal and not be KILLED) */
    if (r->phase == P_RUNNING && r->sid && !r->signalled && at > now) {
        cmd *c = cmd_new(C_SIGNAL, job_id, r->run, r->sid);
        c->sig = SIGTERM;
        c->ntasks = (uint32_t)r->ntasks;
        c->steps_only = r->srun_form;
        r->wait_seq = enqueue(x, c);
        r->signalled = 1;
    }
    return 0;
}

static gs_time slurm_next_deadline(const void *b)
{
    const xslurm *x = b;
    gs_time t = GS_TIME_MAX;
    for (size_t i = 0; i < x->n; i++) {
        const xrun *r = x->v[i];
        if (r->stopping && !r->killed && r->kill_at < t) t = r->kill_at;
        if (r->phase == P_PLACED && r->start_deadline < t) t = r->start_deadline;
    }
    return t;
}

static gs_time slurm_poll_within(const void *b)
{
    const xslurm *x = b;
    if (x->wake) return GS_TIME_MAX;
    return (gs_time)x->poll_ms * GS_MSEC;
}

static void slurm_forget(void *b, int64_t job_id)
{
    xslurm *x = b;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i]->job_id == job_id) {
            run_free(x->v[i]);
            x->v[i] = x->v[--x->n];
            return;
        }
}

/* ---- poll ------------------------------------------------------------------------------------ */

static void emit(gsd_xev_fn fn, void *ud, gsd_xev ev)
{
    if (fn) fn(ud, &ev);
}

/* The GPUs Slurm gave on node 'node' to job j, as "0,1" for the local-th task of gpt GPUs. */
static void task_gpus(const sjob *j, const char *node, int local, int gpt, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int k = 0; k < j->nnodes && k < j->ngres; k++) {
        if (strcmp(j->nodes[k], node)) continue;
        int idx[1024], ni;
        gres_gpus(j->gres[k], idx, 1024, &ni);
        size_t n = 0;
        for (int g = local * gpt; g < (local + 1) * gpt && g < ni; g++)
            n += (size_t)snprintf(buf + n, cap > n ? cap - n : 0, "%s%d", n ? "," : "", idx[g]);
        return;
    }
}

/* Did Slurm place j where gsched asked?  0, or -1 with why. */
static int verify(const xrun *r, const sjob *j, char *why, size_t cap)
{
    char asked[1024] = "", got[1024] = "";
    size_t a = 0, g = 0;
    int bad = 0;
    /* asked: node -> GPUs */
    for (int i = 0; i < r->ntasks; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            if (!strcmp(r->task_node[k], r->task_node[i])) seen = 1;
        if (seen) continue;
        int cnt = 0;
        for (int k = 0; k < r->ntasks; k++)
            if (!strcmp(r->task_node[k], r->task_node[i])) cnt += r->gpt;
        a += (size_t)snprintf(asked + a, sizeof asked > a ? sizeof asked - a : 0, "%s%s:%d",
                              a ? "," : "", r->task_node[i], cnt);
        int found = 0;
        for (int k = 0; k < j->nnodes; k++) {
            if (strcmp(j->nodes[k], r->task_node[i])) continue;
            found = 1;
            int idx[1024], ni;
            int c = k < j->ngres ? gres_gpus(j->gres[k], idx, 1024, &ni) : -1;
            if (c != cnt) bad = 1;
        }
        if (!found) bad = 1;
    }
    int distinct = 0;
    for (int i = 0; i < r->ntasks; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            if (!strcmp(r->task_node[k], r->task_node[i])) seen = 1;
        distinct += !seen;
    }
    if (j->nnodes != distinct) bad = 1;
    if (!bad) return 0;
    for (int k = 0; k < j->nnodes; k++) {
        int idx[1024], ni;
        int c = k < j->ngres ? gres_gpus(j->gres[k], idx, 1024, &ni) : 0;
        g += (size_t)snprintf(got + g, sizeof got > g ? sizeof got - g : 0, "%s%s:%d", g ? "," : "",
                              j->nodes[k], c < 0 ? 0 : c);
    }
    snprintf(why, cap, "Slurm placed it on %s, gsched asked for %s", got[0] ? got : "nothing",
             asked);
    return -1;
}

static void end_from_slurm(xslurm *x, xrun *r, const sjob *j)
{
    int code = wait_code(j->exit_code);
    switch (j->state) {
    case JOB_COMPLETE:
    case JOB_FAILED: run_end(r, code, 0, NULL); break;
    case JOB_TIMEOUT: run_end(r, code ? code : 143, 0, "Slurm time limit"); break;
    case JOB_CANCELLED:
        run_end(r, code ? code : 137, 0, "cancelled in Slurm (Slurm job %u)", j->id);
        break;
    case JOB_OOM: run_end(r, code ? code : 137, 0, "Slurm: out of memory"); break;
    case JOB_NODE_FAIL:
    case JOB_BOOT_FAIL: run_end(r, 137, 1, "node failed (Slurm job %u)", j->id); break;
    default: run_end(r, code ? code : 137, 1, "ended in Slurm: %s", j->reason_str); break;
    }
    (void)x;
    r->killed = r->killed && j->state != JOB_COMPLETE;
}

static void report_started(const xrun *r, const sjob *j, gsd_xev_fn fn, void *ud)
{
    for (int i = 0; i < r->ntasks; i++) {
        char handle[64], gpus[256];
        snprintf(handle, sizeof handle, "slurm:%u:%d", j->id, i);
        task_gpus(j, r->task_node[i], r->task_local[i], r->gpt, gpus, sizeof gpus);
        emit(fn, ud,
             (gsd_xev){.kind = GSD_X_TASK_STARTED,
                       .job_id = r->job_id,
                       .run = r->run,
                       .task = i,
                       .handle = handle,
                       .failed_task = -1,
                       .gpus = gpus});
    }
}

static int node_xstate(uint32_t st)
{
    uint32_t base = st & NODE_STATE_BASE;
    if (base == NODE_STATE_DOWN || (st & (NODE_STATE_FAIL | NODE_STATE_NO_RESPOND)))
        return GSD_XNODE_DOWN;
    if (st & NODE_STATE_DRAIN) return GSD_XNODE_DRAIN;
    return GSD_XNODE_UP;
}

static void step_run(xslurm *x, xrun *r, gs_time now, gsd_xev_fn fn, void *ud)
{
    const snap *s = x->cur;
    if (r->phase == P_DONE) return;
    if (r->phase != P_ENDED && (!s || s->seq < r->wait_seq || r->phase == P_LAUNCHING)) return;
    const sjob *j = snap_job(s, r->sid);
    if (r->phase == P_PLACED) {
        if (!j) {
            run_end(r, 137, 1, "Slurm job %u is gone", r->sid);
        } else if (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED || j->completing ||
                   (job_final(j) && j->state != JOB_CANCELLED)) {
            char why[1024];
            if ((j->state == JOB_RUNNING || j->state == JOB_SUSPENDED) &&
                verify(r, j, why, sizeof why)) {
                r->wait_seq = simple_cmd(x, C_REQHOLD, r->job_id, r->sid);
                run_end(r, 137, 1, "%s", why);
            } else {
                report_started(r, j, fn, ud);
                r->phase = P_RUNNING;
                r->restart_seen = j->restart_cnt;
                if (r->stopping && !r->signalled && now < r->kill_at) {
                    cmd *c = cmd_new(C_SIGNAL, r->job_id, r->run, r->sid);
                    c->sig = SIGTERM;
                    c->ntasks = (uint32_t)r->ntasks;
                    c->steps_only = r->srun_form;
                    r->wait_seq = enqueue(x, c);
                    r->signalled = 1;
                    return;
                }
            }
        } else if (j->state == JOB_PENDING) {
            if (r->stopping) {
                r->wait_seq = simple_cmd(x, C_HOLD, r->job_id, r->sid);
                run_end(r, 143, 0, "stopped before Slurm started it");
                r->never_started = 1;
            } else if (now >= r->start_deadline) {
                r->wait_seq = simple_cmd(x, C_HOLD, r->job_id, r->sid);
                run_end(r, 137, 1, "Slurm did not start it within %d s: %s", x->start_timeout_s,
                        j->reason_str);
                r->never_started = 1;
            }
        } else {
            end_from_slurm(x, r, j);
        }
    }
    if (r->phase == P_RUNNING) {
        j = snap_job(s, r->sid);
        if (!j) {
            run_end(r, 137, 1, "Slurm job %u is gone", r->sid);
        } else if (j->state == JOB_PENDING && !j->completing) {
            if (r->killed) {
                run_end(r, 137, 0, NULL);
            } else {
                /* Slurm requeued it by itself (node failure): hold it, gsched decides */
                r->wait_seq = simple_cmd(x, C_HOLD, r->job_id, r->sid);
                run_end(r, 137, 1, "node failed: Slurm requeued it");
            }
        } else if (job_final(j) || (j->completing && j->state != JOB_PENDING)) {
            if (job_final(j)) {
                end_from_slurm(x, r, j);
                /* a stopped run that ended (its tasks exited on SIGTERM): back into hold now,
                 * so that Slurm shows it held and the next launch reuses it */
                if (r->stopping && !r->killed && j->state != JOB_CANCELLED)
                    r->wait_seq = simple_cmd(x, C_REQHOLD, r->job_id, r->sid);
            }
        } else if (r->stopping && !r->killed && now >= r->kill_at) {
            r->wait_seq = simple_cmd(x, C_REQHOLD, r->job_id, r->sid);
            r->killed = 1;
            emit(fn, ud,
                 (gsd_xev){.kind = GSD_X_KILLED,
                           .job_id = r->job_id,
                           .run = r->run,
                           .task = -1,
                           .failed_task = -1,
                           .killed = 1});
        }
    }
    if (r->phase == P_ENDED) {
        /* RUN_DONE once a snapshot after our last command says Slurm holds no GPUs for it */
        if (!s || s->seq < r->wait_seq) return;
        j = snap_job(s, r->sid);
        if (j && job_holds(j)) {
            if (j->state == JOB_RUNNING && !j->completing) /* released again: put it back */
                r->wait_seq = simple_cmd(x, C_REQHOLD, r->job_id, r->sid);
            return;
        }
        r->phase = P_DONE;
        /* a node of the run does not answer: what ran there may still be alive (see launch) */
        for (int i = 0; i < r->ntasks && r->sid; i++) {
            const snode *n = snap_node(s, r->task_node[i] ? r->task_node[i] : "");
            xbind *bd = find_bind(x, r->job_id);
            if (n && bd && bd->sid == r->sid && node_xstate(n->state) == GSD_XNODE_DOWN)
                bd->stale = 1;
        }
        if (r->exit_code && r->failed_task < 0) r->failed_task = 0;
        for (int i = 0; i < r->ntasks; i++) {
            char handle[64];
            snprintf(handle, sizeof handle, "slurm:%u:%d", r->sid, i);
            emit(fn, ud,
                 (gsd_xev){.kind = GSD_X_TASK_EXITED,
                           .job_id = r->job_id,
                           .run = r->run,
                           .task = i,
                           .handle = r->sid ? handle : NULL,
                           .exit_code = r->exit_code,
                           .failed_task = -1,
                           .lost = r->lost,
                           .launch_failed = r->launch_failed,
                           .msg = r->msg[0] ? r->msg : NULL});
        }
        emit(fn, ud,
             (gsd_xev){.kind = GSD_X_RUN_DONE,
                       .job_id = r->job_id,
                       .run = r->run,
                       .task = -1,
                       .exit_code = r->exit_code,
                       .failed_task = r->exit_code ? r->failed_task : -1,
                       .lost = r->lost,
                       .never_started = r->never_started,
                       .killed = r->killed,
                       .launch_failed = r->launch_failed,
                       .msg = r->msg[0] ? r->msg : NULL});
    }
}

static struct nodestate *nstate(xslurm *x, const char *name)
{
    for (size_t i = 0; i < x->nns; i++)
        if (!strcmp(x->ns[i].name, name)) return &x->ns[i];
    x->ns = sx_realloc(x->ns, (x->nns + 1) * sizeof *x->ns);
    struct nodestate *n = &x->ns[x->nns++];
    memset(n, 0, sizeof *n);
    n->name = sx_strdup(name);
    return n;
}

/* A job's GPUs are gsched's (not foreign): tagged or bound, in a managed partition. */
static int job_ours(xslurm *x, const sjob *j)
{
    if (!snap_managed_part(x->cur, j->partition)) return 0;
    return j->tag >= 0 || bind_sid(x, j->id) != NULL;
}

static void report_nodes(xslurm *x, gsd_xev_fn fn, void *ud)
{
    const snap *s = x->cur;
    for (size_t i = 0; i < s->nn; i++) {
        const snode *n = &s->n[i];
        if (!n->managed) continue;
        struct nodestate *ns = nstate(x, n->name);
        int st = node_xstate(n->state);
        if ((!ns->reported && st != GSD_XNODE_UP) || (ns->reported && st != ns->state)) {
            emit(fn, ud,
                 (gsd_xev){.kind = GSD_X_NODE,
                           .job_id = -1,
                           .task = -1,
                           .failed_task = -1,
                           .node = n->name,
                           .node_state = st,
                           .msg = n->reason});
        }
        ns->reported = 1;
        ns->state = st;
        /* GPUs held there by foreign jobs */
        int out = 0;
        for (size_t k = 0; k < s->nj; k++) {
            const sjob *j = &s->j[k];
            if (!job_holds(j) || job_ours(x, j)) continue;
            for (int m = 0; m < j->nnodes && m < j->ngres; m++) {
                if (strcmp(j->nodes[m], n->name)) continue;
                int idx[1], ni;
                int c = gres_gpus(j->gres[m], idx, 0, &ni);
                if (c > 0) out += c;
            }
        }
        if (out != ns->outside || (!ns->out_reported && out)) {
            emit(fn, ud,
                 (gsd_xev){.kind = GSD_X_OUTSIDE,
                           .job_id = -1,
                           .task = -1,
                           .failed_task = -1,
                           .node = n->name,
                           .count = out});
            ns->out_reported = 1;
        }
        ns->outside = out;
    }
}

static void report_adopt(xslurm *x, gsd_xev_fn fn, void *ud)
{
    const snap *s = x->cur;
    for (size_t i = 0; i < s->nj; i++) {
        const sjob *j = &s->j[i];
        /* an operator's hold (JobHeldAdmin) is theirs to lift: such a job is not adopted
         * while it lasts */
        if (j->state != JOB_PENDING || j->priority != 0 || j->tag >= 0 || j->reason == WAIT_HELD ||
            !snap_managed_part(s, j->partition) || bind_sid(x, j->id) ||
            u32_has(x->adopted_seen, x->nad, j->id) || u32_has(x->retired, x->nret, j->id))
            continue;
        /* gsched's own submissions not yet tagged (submit and tag are one command) */
        int mine = 0;
        for (size_t k = 0; k < x->n; k++)
            if (x->v[k]->sid == j->id) mine = 1;
        if (mine) continue;
        u32_add(&x->adopted_seen, &x->nad, &x->capad, j->id);
        char ext[32], run_as[32], type[64] = "", vc[128] = "", user[128];
        snprintf(ext, sizeof ext, EXT_PREFIX "%u", j->id);
        snprintf(run_as, sizeof run_as, "#%u", j->user_id);
        gsd_unix_user u;
        char why[128];
        if (gsd_unix_user_by_uid(j->user_id, &u, why, sizeof why) == 0) {
            snprintf(user, sizeof user, "%s", u.name);
            gsd_unix_user_release(&u);
        } else {
            snprintf(user, sizeof user, "%u", j->user_id);
        }
        int nodes = j->num_nodes ? (int)j->num_nodes : 1;
        int ntasks = nodes, gpt = 0;
        int tpn =
            j->ntasks_per_node && j->ntasks_per_node != (uint16_t)NO_VAL ? j->ntasks_per_node : 0;
        int per_node = tres_gpus(j->tres_per_node, type, sizeof type);
        int per_task = tres_gpus(j->tres_per_task, type[0] ? NULL : type, sizeof type);
        int per_job = tres_gpus(j->tres_per_job, type[0] ? NULL : type, sizeof type);
        if (tpn > 1)
            ntasks = (int)(j->num_tasks && j->num_tasks != NO_VAL ? j->num_tasks
                                                                  : (uint32_t)(tpn * nodes));
        if (per_task > 0) {
            gpt = per_task;
            if (j->num_tasks && j->num_tasks != NO_VAL) ntasks = (int)j->num_tasks;
        } else if (per_node > 0) {
            gpt = per_node * nodes / (ntasks ? ntasks : 1);
        } else if (per_job > 0) {
            gpt = per_job / (ntasks ? ntasks : 1);
        }
        const char *vcp = NULL;
        if (j->comment && strstr(j->comment, "vc=")) {
            const char *v = strstr(j->comment, "vc=") + 3;
            snprintf(vc, sizeof vc, "%.*s", (int)strcspn(v, " ,;"), v);
            vcp = vc;
        } else if (j->qos && *j->qos && strcmp(j->qos, "normal")) {
            vcp = j->qos;
        } else if (j->account && *j->account) {
            vcp = j->account;
        }
        int prio = 0;
        if (j->comment && strstr(j->comment, "priority=")) {
            /* clamped to what a spec accepts: -1 (opportunistic) .. GSD_PRIO_MAX */
            long v = strtol(strstr(j->comment, "priority=") + 9, NULL, 10);
            prio = v < -1 ? -1 : v > GSD_PRIO_MAX ? GSD_PRIO_MAX : (int)v;
        }
        gsd_adopt a = {
            .ext = ext,
            .name = j->name,
            .user = user,
            .run_as = run_as,
            .vc = vcp,
            .workdir = j->work_dir,
            .gpu_type = type[0] ? type : NULL,
            .priority = prio,
            .ntasks = ntasks,
            .gpus_per_task = gpt,
            .gang = 1,
            .cpus_per_task =
                j->cpus_per_task && j->cpus_per_task != (uint16_t)NO_VAL ? j->cpus_per_task : 0,
            .mem_mb_per_task = 0,
            .time_limit = j->time_limit == INFINITE || j->time_limit == NO_VAL
                              ? 0
                              : (gs_time)j->time_limit * 60 * GS_SEC,
            .submitted = j->submit_time ? (gs_time)j->submit_time * GS_SEC : GS_TIME_NONE};
        emit(fn, ud,
             (gsd_xev){
                 .kind = GSD_X_ADOPT, .job_id = -1, .task = -1, .failed_task = -1, .adopt = &a});
    }
}

/* Jobs gsched knows whose Slurm job was cancelled or removed outside gsched. */
static void report_gone(xslurm *x, gsd_xev_fn fn, void *ud)
{
    for (size_t i = 0; i < x->nb; i++) {
        xbind *b = &x->b[i];
        if (!b->sid) {
            const sjob *t = tagged(x->cur, b->job_id);
            if (t) b->sid = t->id;
        }
        if (!b->sid || b->gone) continue;
        const sjob *j = snap_job(x->cur, b->sid);
        if (j) {
            b->seen = 1;
            b->last_live = !job_final(j);
            if (j->state != JOB_CANCELLED || u32_has(x->retired, x->nret, j->id)) continue;
        } else if (!b->seen || !b->last_live) {
            continue;
        }
        b->gone = 1;
        char m[128];
        snprintf(m, sizeof m, "Slurm job %u was %s outside gsched", b->sid,
                 j ? "cancelled" : "removed");
        emit(fn, ud,
             (gsd_xev){
                 .kind = GSD_X_GONE, .job_id = b->job_id, .task = -1, .failed_task = -1, .msg = m});
    }
}

static void slurm_poll(void *b, gs_time now, gsd_xev_fn fn, void *ud)
{
    xslurm *x = b;
    pthread_mutex_lock(&x->mu);
    result *res = x->r_head;
    x->r_head = x->r_tail = NULL;
    int reach = x->reach_ok;
    char err[256];
    snprintf(err, sizeof err, "%s", x->reach_err);
    pthread_mutex_unlock(&x->mu);
    take_snap(x);
    if (!reach && err[0] && !x->logged_unreach) {
        xlog(x, "executor slurm: slurmctld does not answer (%s); retrying", err);
        x->logged_unreach = 1;
    } else if (reach && x->logged_unreach) {
        xlog(x, "executor slurm: slurmctld answers again");
        x->logged_unreach = 0;
    }
    while (res) {
        result *r = res;
        res = r->next;
        xrun *run = find_run(x, r->job_id);
        if (r->kind == C_LAUNCH && run && run->run == r->run && run->phase == P_LAUNCHING) {
            if (r->sid) {
                run->sid = r->sid;
                add_bind(x, r->job_id, r->sid, 0);
            }
            if (r->rc) {
                /* slurmctld not answering is no fault of the job: the daemon drains until
                 * check() passes (a placing it applied after all is undone at RUN_DONE) */
                run_end(run, 126, 0, "%s", r->msg);
                run->launch_failed = r->unreach ? GSD_XLAUNCH_NODE : GSD_XLAUNCH_JOB;
                run->failed_task = 0;
            } else {
                run->phase = P_PLACED;
            }
        } else if (r->rc) {
            xlog(x, "executor slurm: job %lld: %s", (long long)r->job_id, r->msg);
        }
        free(r);
    }
    if (!x->cur) {
        /* nothing known of Slurm yet: launch failures can still be reported */
        for (size_t i = 0; i < x->n; i++)
            if (x->v[i]->phase == P_ENDED && !x->v[i]->sid) step_run(x, x->v[i], now, fn, ud);
        return;
    }
    report_nodes(x, fn, ud);
    report_adopt(x, fn, ud);
    report_gone(x, fn, ud);
    for (size_t i = 0; i < x->n; i++) step_run(x, x->v[i], now, fn, ud);
}

static void slurm_kill_now(void *b, int64_t job_id)
{
    xslurm *x = b;
    xrun *r = find_run(x, job_id);
    if (!r) return;
    uint32_t sid = r->sid ? r->sid : job_sid(x, job_id);
    if (!sid) return;
    simple_cmd(x, C_REQHOLD, job_id, sid);
    r->killed = 1;
    for (int w = 0; w < 20; w++) {
        if (!sync_snap(x, 2.0)) return;
        const sjob *j = snap_job(x->cur, sid);
        if (!j || !job_holds(j)) return;
        struct timespec ts = {0, 200000000L};
        nanosleep(&ts, NULL);
    }
}

/* ---- recovery and sweep ---------------------------------------------------------------------- */

static int slurm_recover(void *b, int64_t job_id, int run, int ntasks, gs_time now, int *alive,
                         int *exited, int *lost)
{
    xslurm *x = b;
    *alive = *exited = *lost = 0;
    if (find_run(x, job_id)) return GS_EEXIST;
    if (!x->cur || x->cur->seq < x->seq) sync_snap(x, 10.0);
    xrun *r = add_run(x, job_id, run, ntasks);
    uint32_t sid = job_sid(x, job_id);
    const sjob *j = snap_job(x->cur, sid);
    r->sid = sid;
    r->restart_seen = j ? j->restart_cnt : 0;
    if (sid) add_bind(x, job_id, sid, 0);
    if (!j) {
        run_end(r, 137, 1, "no Slurm job found for it (daemon restart)");
        r->never_started = 1;
        *lost = ntasks;
    } else if (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED || j->completing) {
        r->phase = P_RUNNING;
        /* the tasks' nodes as Slurm has them (their order is not known after a restart) */
        for (int i = 0; i < ntasks; i++) {
            r->task_node[i] = sx_strdup(j->nnodes ? j->nodes[i % j->nnodes] : "?");
            r->task_local[i] = j->nnodes ? i / j->nnodes : 0;
        }
        *alive = ntasks;
    } else if (job_final(j)) {
        end_from_slurm(x, r, j);
        if (r->lost)
            *lost = ntasks;
        else
            *exited = ntasks;
    } else {
        /* pending (held or released): hold it; the run never started */
        r->wait_seq = simple_cmd(x, C_HOLD, job_id, sid);
        run_end(r, 137, 1, "not started by Slurm before the daemon restart");
        r->never_started = 1;
        *lost = ntasks;
    }
    (void)now;
    return 0;
}

static int slurm_sweep(void *b, void (*log)(void *ud, const char *msg), void *ud)
{
    xslurm *x = b;
    if (!sync_snap(x, 10.0) && !x->cur) return 0;
    int acted = 0;
    char m[256];
    for (size_t i = 0; i < x->cur->nj; i++) {
        const sjob *j = &x->cur->j[i];
        if (job_final(j)) continue;
        const xbind *bd = bind_sid(x, j->id);
        int64_t owner = bd ? bd->job_id : j->tag;
        if (owner < 0) continue;
        const xrun *r = find_run(x, owner);
        if (!bd && !find_bind(x, owner) && !r) {
            simple_cmd(x, C_CANCEL, owner, j->id);
            u32_add(&x->retired, &x->nret, &x->capret, j->id);
            snprintf(m, sizeof m, "cancelled Slurm job %u: its gsched job %lld is final or unknown",
                     j->id, (long long)owner);
            if (log) log(ud, m);
            acted++;
        } else if (!r && (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED ||
                          (j->state == JOB_PENDING && j->priority != 0))) {
            simple_cmd(x, j->state == JOB_PENDING ? C_HOLD : C_REQHOLD, owner, j->id);
            snprintf(m, sizeof m,
                     "requeued Slurm job %u of gsched job %lld into hold: a stray released job",
                     j->id, (long long)owner);
            if (log) log(ud, m);
            acted++;
        }
    }
    return acted;
}

/* ---- external jobs: bind, retire ------------------------------------------------------------ */

static int slurm_bind(void *b, int64_t job_id, const char *ext)
{
    xslurm *x = b;
    if (!x->cur)
        sync_snap(x, 10.0);
    else
        take_snap(x);
    if (!ext) {
        const sjob *t = tagged(x->cur, job_id);
        add_bind(x, job_id, t ? t->id : 0, 0);
        return 0;
    }
    uint32_t sid;
    if (parse_ext(ext, &sid)) return GS_ENOENT;
    if (x->cur) {
        const sjob *j = snap_job(x->cur, sid);
        if (!j || (job_final(j) && j->state == JOB_CANCELLED)) return GS_ENOENT;
    }
    xbind *bd = add_bind(x, job_id, sid, 1);
    bd->seen = 0;
    cmd *c = cmd_new(C_TAG, job_id, 0, sid);
    c->tag = xfmt(TAG_PREFIX "%lld", (long long)job_id);
    enqueue(x, c);
    return 0;
}

static void slurm_retire(void *b, int64_t job_id, const char *ext, int state, const char *why)
{
    xslurm *x = b;
    (void)state;
    take_snap(x);
    uint32_t sid = 0;
    if (ext && parse_ext(ext, &sid)) sid = 0;
    if (!sid && job_id >= 0) sid = job_sid(x, job_id);
    if (job_id >= 0) drop_bind(x, job_id);
    if (!sid) return;
    const sjob *j = snap_job(x->cur, sid);
    u32_add(&x->retired, &x->nret, &x->capret, sid);
    if (j && job_final(j)) return;
    cmd *c = cmd_new(C_CANCEL, job_id, 0, sid);
    if (ext && why) c->comment = xfmt("gsched: %s", why);
    enqueue(x, c);
}

/* ---- cluster --------------------------------------------------------------------------------- */

static int slurm_cluster(void *b, const gs_cluster *given, gs_cluster **out, gs_diag *d)
{
    xslurm *x = b;
    *out = NULL;
    if (!sync_snap(x, 15.0)) {
        char err[256];
        pthread_mutex_lock(&x->mu);
        snprintf(err, sizeof err, "%s", x->reach_err);
        pthread_mutex_unlock(&x->mu);
        return gs_diag_set(d, GS_EIO, 0, 0, "executor slurm: slurmctld does not answer: %s",
                           err[0] ? err : "timeout");
    }
    const snap *s = x->cur;
    char type[64];
    for (size_t k = 0; k < x->nparts; k++) {
        size_t i = 0;
        while (i < s->nparts && strcmp(s->parts[i], x->parts[k])) i++;
        if (i == s->nparts)
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "executor slurm: partition '%s' is not in Slurm (sinfo -s lists "
                               "them; --executor-opt partitions=NAME,...)",
                               x->parts[k]);
    }
    if (given) {
        char msg[2048] = "";
        size_t m = 0;
        for (size_t i = 0; i < gs_cluster_nnodes(given); i++) {
            const gs_node *gn = gs_cluster_node(given, (int)i);
            /* a machine in several HiveD chains is one node cell per chain, all with its name
             * (the name jobs are submitted to Slurm with): checked once, with all its GPUs */
            if (gs_cluster_find_node(given, gn->name) != (int)i) continue;
            const snode *sn = snap_node(s, gn->name);
            int want = 0;
            for (int k = (int)i; k >= 0; k = gs_cluster_find_node_next(given, gn->name, k))
                want += gs_cluster_node(given, k)->gpu_hi - gs_cluster_node(given, k)->gpu_lo;
            int have = sn ? node_gpus(sn->gres, type, sizeof type) : 0;
            if (sn && sn->managed && have >= want) continue;
            m += (size_t)snprintf(msg + m, sizeof msg > m ? sizeof msg - m : 0, "%s%s",
                                  m ? "; " : "", "");
            if (!sn)
                m += (size_t)snprintf(msg + m, sizeof msg > m ? sizeof msg - m : 0,
                                      "node '%s' is not in Slurm", gn->name);
            else if (!sn->managed)
                m += (size_t)snprintf(msg + m, sizeof msg > m ? sizeof msg - m : 0,
                                      "node '%s' is in no managed partition", gn->name);
            else
                m += (size_t)snprintf(msg + m, sizeof msg > m ? sizeof msg - m : 0,
                                      "node '%s' has %d GPUs in Slurm, the cluster says %d",
                                      gn->name, have, want);
        }
        if (m) return gs_diag_set(d, GS_EINVAL, 0, 0, "cluster does not match Slurm: %s", msg);
        return 0;
    }
    gs_cluster *c;
    int rc = gs_cluster_create(&c);
    if (rc) return rc;
    int nodes = 0;
    char **racks = NULL;
    int *rack_cell = NULL, nracks = 0;
    /* racks first seen order; nodes under their rack (pre-order: a rack's nodes together) */
    for (size_t i = 0; i < s->nn; i++)
        if (s->n[i].managed && s->n[i].rack) {
            int k = 0;
            while (k < nracks && strcmp(racks[k], s->n[i].rack)) k++;
            if (k == nracks) {
                racks = sx_realloc(racks, (size_t)(nracks + 1) * sizeof *racks);
                racks[nracks++] = s->n[i].rack;
            }
        }
    rack_cell = sx_realloc(NULL, ((size_t)nracks + 1) * sizeof *rack_cell);
    for (int pass = 0; pass <= nracks && !rc; pass++) {
        int parent = 0;
        if (pass < nracks) {
            parent = gs_cluster_add_cell(c, 0, GS_CELL_RACK, racks[pass], -1);
            if (parent < 0) {
                rc = parent;
                break;
            }
            rack_cell[pass] = parent;
        }
        for (size_t i = 0; i < s->nn && !rc; i++) {
            const snode *sn = &s->n[i];
            if (!sn->managed) continue;
            if (pass < nracks ? !sn->rack || strcmp(sn->rack, racks[pass]) : sn->rack != NULL)
                continue;
            int g = node_gpus(sn->gres, type, sizeof type);
            if (g <= 0) continue; /* a node without GPUs schedules nothing here */
            int t = gs_cluster_gpu_type(c, type[0] ? type : NULL);
            int nd = t < 0 ? t : gs_cluster_add_cell(c, parent, GS_CELL_NODE, sn->name, -1);
            if (nd < 0) {
                rc = nd;
                break;
            }
            rc = gs_cluster_set_node(c, nd, sn->cpus,
                                     sn->mem_mb > INT32_MAX ? INT32_MAX : (int)sn->mem_mb);
            for (int k = 0; k < g && !rc; k++) {
                int r2 = gs_cluster_add_gpu(c, nd, k, t);
                if (r2 < 0) rc = r2;
            }
            nodes++;
        }
    }
    free(racks);
    free(rack_cell);
    if (!rc && !nodes)
        rc = gs_diag_set(d, GS_EINVAL, 0, 0,
                         "executor slurm: no node with GPUs in the managed partitions");
    if (!rc) rc = gs_cluster_finish(c, d);
    if (rc) {
        gs_cluster_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int slurm_check(void *b, char *why, size_t cap)
{
    xslurm *x = b;
    pthread_mutex_lock(&x->mu);
    int ok = x->reach_ok || !x->had_snap;
    if (!ok) snprintf(why, cap, "slurmctld does not answer: %s", x->reach_err);
    pthread_mutex_unlock(&x->mu);
    return ok ? 0 : GS_EIO;
}

const gsd_exec_ops gsd_exec_slurm = {
    .name = "slurm",
    .desc = "every job a Slurm batch job, held and placed by gsched (libslurm)",
    .caps = GSD_XCAP_MULTINODE | GSD_XCAP_ADOPT | GSD_XCAP_CLUSTER | GSD_XCAP_EXTERNAL,
    .create = slurm_create,
    .destroy = slurm_destroy,
    .launch = slurm_launch,
    .stop = slurm_stop,
    .poll = slurm_poll,
    .next_deadline = slurm_next_deadline,
    .poll_within = slurm_poll_within,
    .nruns = slurm_nruns,
    .has = slurm_has,
    .kill_now = slurm_kill_now,
    .forget = slurm_forget,
    .recover = slurm_recover,
    .sweep = slurm_sweep,
    .log_path = slurm_log_path,
    .log_open = slurm_log_open,
    .task_pid = slurm_task_pid,
    .check = slurm_check,
    .cluster = slurm_cluster,
    .bind = slurm_bind,
    .retire = slurm_retire,
};
