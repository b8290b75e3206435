/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h - traces, the simulation driver, metrics and output writers.
 *
 * A trace is read whole into job specs sorted by submit time (stable: file
 * order breaks ties).  gs_sim_run() replays it through one engine/policy and
 * collects per-job results, a timeline, per-job metrics (slowdown, rho, queue
 * time: docs/metrics.md) and summary metrics with their per-VC, per-user and
 * per-size breakdowns; the writers turn those into summary.json, jobs.csv,
 * timeline.csv, vcs/users/sizes.csv and compare.csv.  Same inputs give
 * byte-identical files (wall_s in summary.json excepted).
 */
#ifndef GSCHED_SIM_H
#define GSCHED_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gsched/gsched.h"
#include "simwait.h"

/* ---- traces ----------------------------------------------------------------------- */

typedef enum gs_trace_format {
    GS_TRACE_TIRESIAS,
    GS_TRACE_PHILLY,
    GS_TRACE_NATIVE,
    GS_TRACE_POLLUX,      /* Pollux workload: name,time,application,num_replicas,batch_size */
    GS_TRACE_ELASTICFLOW, /* job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,... */
    GS_TRACE_GAVEL,       /* Gavel's tab-separated traces, 10 or 7 fields; work in steps */
} gs_trace_format;

const char *gs_trace_format_name(gs_trace_format f);
/* Gavel's job type as a profile model name: "ResNet-50 (batch size 64)" -> "resnet50-bs64"
 * (tools/gen_profiles.py's name_of).  out is always NUL-terminated. */
void gs_gavel_model_name(const char *job_type, char *out, size_t size);

typedef struct gs_trace {
    gs_job_spec *jobs; /* sorted by submit time, file order within ties */
    size_t n, cap;
    char **strs; /* owned strings the specs point into */
    size_t nstrs, capstrs;
    void **blobs; /* owned arrays the specs point into (task_gpus, groups) */
    size_t nblobs, capblobs;
    gs_trace_format format;
    char sha256[65];
    char *path;
    /* Pollux workloads: the goodput model of the applications the jobs name (owned; NULL
     * for other formats) and the directory its tables were read from */
    gs_goodput *goodput;
    char *goodput_dir;
    /* ElasticFlow traces: the throughput tables their jobs progress by (owned; NULL for
     * other formats; gs_tput_load_dir + gs_trace_apply_tput) */
    gs_tput *tput;
    /* holds, dependencies and job array throttles of its jobs (native CSV columns hold,
     * dependency, array_id, array_limit; simwait.h); NULL when no job has any */
    struct gs_simwait *wait;
} gs_trace;

/* Read and validate a trace; format detected from the header line.  A Pollux workload's
 * application traces are read from <dir of path>/../traces/<app>/ (gs_trace_attach_apps). */
int gs_trace_load(const char *path, gs_trace *t, gs_diag *d);
/* The same with the Pollux application traces read from 'pollux_traces' (NULL = default). */
int gs_trace_load_ex(const char *path, const char *pollux_traces, gs_trace *t, gs_diag *d);
/* Parse from a buffer (file is used for messages only). */
int gs_trace_parse(const char *file, const char *buf, size_t len, gs_trace *t, gs_diag *d);
void gs_trace_release(gs_trace *t);

/* ---- Pollux application traces (pollux.c) ------------------------------------------------ */

/* The Pollux artifact's constants of application 'name' (APPLICATIONS), NULL if not one. */
const gs_app_spec *gs_pollux_app_spec(const char *name);
/* Read one application directory (placements.csv, scalability.csv, validation-<batch>.csv)
 * into g as application 'name' (the artifact's constants when it is one of its six).
 * Returns the application id or GS_E* (diag: path:line:col in the message). */
int gs_pollux_load_app(gs_goodput *g, const char *dir, const char *name, gs_diag *d);
/* For a Pollux workload: read the applications its jobs name from traces_dir/<app>/ (NULL
 * or "" = <dir of t->path>/../traces), finish the model, set every job's duration to its
 * application's work (gs_goodput_work) and keep the model in t->goodput.  0 for other
 * formats. */
int gs_trace_attach_apps(gs_trace *t, const char *traces_dir, gs_diag *d);

/*
 * Throughput tables (ElasticFlow, src/sim/tput.c): DIR/<model>.csv for every model the
 * trace names (header global_batch_size,1,2,4,...; rows by global batch, iterations/s per GPU
 * count, empty or nan = not measured) into *out.  Then gs_trace_apply_tput gives every job of
 * an ElasticFlow trace its work from the table (iterations / its(num_gpu), the table model's
 * units) and caps max_gpus at the row's largest measured count.
 */
int gs_tput_load_dir(const char *dir, const gs_trace *t, gs_tput **out, gs_diag *d);
int gs_tput_parse(const char *file, const char *model, const char *buf, size_t len, gs_tput *tp,
                  gs_diag *d);
int gs_trace_apply_tput(gs_trace *t, const gs_tput *tp, const char *dir, gs_diag *d);

/*
 * Cluster events file: "time,node,down|up|bad|good|drain|resume" (time in seconds).  down /
 * up: a node failure (its jobs are requeued) and the recovery; bad / good: the node is marked
 * bad (no new job goes there, its jobs run on) and good again; drain / resume: an admin's
 * drain (no new job goes there, its jobs run to their end) and its end.  "time,JOB,release":
 * not a node event - the hold of the trace's job JOB (its `hold` column: true) ends.
 */
typedef struct gs_node_event {
    gs_time t;
    char *node;
    int down;      /* 1: down (bad, drain), 0: up (good, resume) */
    int bad;       /* 1: a bad / good mark, 0: a failure / recovery */
    int line, col; /* of the node field in the file (messages: file:line:col) */
    int drain;     /* 1: a drain / resume (bad is 0) */
    int release;   /* 1: "time,JOB,release": held job JOB's hold ends (node is its id; simwait.h) */
} gs_node_event;

typedef struct gs_events {
    gs_node_event *v;
    size_t n;
    char sha256[65];
    char *path; /* the file read (messages) */
} gs_events;

int gs_events_load(const char *path, gs_events *ev, gs_diag *d);
void gs_events_release(gs_events *ev);

/* ---- simulation ----------------------------------------------------------------------- */

typedef struct gs_tl_row {
    gs_time t;
    int32_t alloc, running, pending;
    int32_t suspended, packed; /* suspended jobs; GPU slots of packed guests */
    double goodput; /* elastic runs: sum of the progress rates of the running jobs that are
                       progressing (work-us per us: reference jobs' worth), else 0 */
} gs_tl_row;

typedef struct gs_vc_stats {
    char name[64];
    size_t jobs, done, rejected;
    double avg_jct_s, avg_queue_s, median_queue_s, p95_queue_s;
    double avg_slowdown, avg_rho, max_rho; /* done jobs (docs/metrics.md) */
} gs_vc_stats;

/*
 * Per-job derived metrics (docs/metrics.md), one per engine slot, computed at the end of a
 * run.  Slowdown, rho and nbar are those of DONE jobs (0 for the others).
 */
typedef struct gs_job_metrics {
    gs_time ideal;   /* gs_engine_job_ideal: the best alone run time at the requested size */
    gs_time queue;   /* runnable without GPUs of its own: pending + suspended (time-sliced out) */
    double nbar;     /* time-average number of jobs in the system over [submit, end] */
    double slowdown; /* JCT / ideal */
    double rho;      /* finish-time fairness: JCT / (ideal * max(1, gpus * nbar / G)) */
} gs_job_metrics;

/*
 * A breakdown row: the jobs of one user (by name, in order of first appearance) or of one
 * size (requested GPUs, ascending).  Averages over DONE jobs; gpu_h is the GPU-hours they
 * held (all jobs of the group).
 */
typedef struct gs_group_stats {
    char *name; /* user name (owned: the result outlives its engine; "-" = none given) or NULL */
    int gpus;   /* sizes: the requested GPU count; users: 0 */
    size_t jobs, done, rejected;
    double gpu_h;
    double avg_jct_s, avg_queue_s;
    double avg_slowdown, median_slowdown, p95_slowdown;
    double avg_rho, max_rho;
} gs_group_stats;

typedef struct gs_sim_result {
    char policy[256]; /* the policy item's label, whole (GS_LABEL_MAX in experiment.h) */
    char placement[32];
    size_t jobs, jobs_done, jobs_rejected, jobs_failed, jobs_unfinished;
    double avg_jct_s, median_jct_s, p95_jct_s, p99_jct_s;
    double avg_queue_s, median_queue_s;
    double makespan_s, gpu_util;
    /* time to first start (early feedback), done jobs */
    double avg_first_s, median_first_s, p95_first_s;
    /* allocated GPU-time plus packed guests' GPU-time over the makespan (> gpu_util when packing)
     */
    double gpu_job_util;
    /* mechanisms (GS_MECH_MAP): counts and the GPU-seconds each cost (restarts = runs that
     * paid a restart cost) */
    uint64_t mech[GS_MECH_N];
    double mech_gpu_s[GS_MECH_N];
    uint64_t preemptions, events;
    double wall_s;
    size_t total_gpus;
    /* elastic jobs and deadlines (issue 13); the writers add them only when 'elastic' (the
     * trace has an elastic job or a deadline), so other outputs stay as they were */
    int elastic;
    size_t deadline_jobs, deadline_met; /* jobs with a deadline; DONE by it (rejected = missed) */
    double deadline_met_ratio;          /* deadline_met / deadline_jobs (0 when none) */
    uint64_t rescales;                  /* policy and operator rescales, all jobs */
    double rescales_per_job;            /* rescales / jobs */
    double rescale_gpu_s, lost_work_gpu_s; /* GPU-seconds lost to rescaling; of which lost work */
    double avg_goodput; /* time average of the timeline's goodput over the makespan */
    /* --window: the metrics count the jobs submitted in [win_start, win_end) only, and
     * utilisation is over that interval (clipped to the run) */
    int window;
    gs_time win_start, win_end; /* win_end GS_TIME_MAX: open */
    gs_vc_stats *vcs;           /* per virtual cluster, in order of first appearance */
    size_t nvcs;
    /* fairness and honest queueing (issue 15, docs/metrics.md); done jobs.  avg_queue_s and
     * median_queue_s above count every interval runnable without GPUs of its own (pending and
     * suspended); avg_pending_s / median_pending_s the pending intervals only */
    double avg_pending_s, median_pending_s;
    double avg_slowdown, median_slowdown, p95_slowdown;
    double avg_rho, p95_rho, max_rho, jain_rho; /* finish-time fairness, Jain's index over it */
    double jain_user_slowdown;                  /* Jain's index over the users' average slowdowns */
    /* allocated GPU-time / (GPUs x busy window); the window is [first arrival, last arrival]
     * (the makespan's when every job arrives at once) */
    double gpu_util_busy;
    gs_time busy_from, busy_to;
    gs_job_metrics *jm; /* per engine slot */
    gs_group_stats *users, *sizes;
    size_t nusers, nsizes;
    /* per run data, kept for the writers */
    gs_tl_row *tl;
    size_t ntl, captl;
    gs_cluster *cluster; /* owned */
    gs_engine *engine;   /* owned; jobs hold the per-job results */
} gs_sim_result;

typedef void (*gs_sim_progress_fn)(void *ud, const gs_sim_result *r, gs_time now, size_t done,
                                   size_t total);

typedef struct gs_sim_opts {
    const char *cluster_spec; /* loaded once per run (the engine changes it) */
    const char *policy;
    gs_params *params; /* read by engine and policy (used flags set) */
    gs_engine_opts eopts;
    const gs_events *events; /* may be NULL */
    gs_sim_progress_fn progress;
    void *progress_ud;
    const char *label;   /* the run's name in outputs (NULL = policy): parity mode runs
                            "tiresias" as tiresias-tj but keeps the name the user typed */
    double interference; /* goodput model (a Pollux workload's trace->goodput): slowdown of
                            distributed jobs sharing a node with another (0 = none) */
    gs_time retune;      /* goodput model: re-tune every job at each multiple of this (the
                            parity mode's interval, as the artifact's steps), 0 = never */
    int window;          /* 1: measure over the jobs submitted in [win_start, win_end) */
    gs_time win_start, win_end;
} gs_sim_opts;

/* Load the cluster and create the engine without running (parameter checks). */
int gs_sim_prepare(const gs_sim_opts *o, gs_sim_result *res, gs_diag *d);
/* Prepare (if not yet) and replay the trace to the end. */
int gs_sim_run(const gs_sim_opts *o, const gs_trace *t, gs_sim_result *res, gs_diag *d);
/* Allocated GPU-time over [from, to] divided by (cluster GPUs x (to - from)), from the
 * timeline (0 when the window is empty). */
double gs_sim_util_over(const gs_sim_result *r, gs_time from, gs_time to);
/* Jain's fairness index (sum x)^2 / (n sum x^2) of x[0..n): 1 when all are equal, 1/n when
 * one has everything; 0 when n == 0 or every x is 0. */
double gs_jain(const double *x, size_t n);
void gs_sim_result_release(gs_sim_result *r);
/* Keep a finished run's scalar metrics only: its engine, cluster, timeline, per-job metrics
 * and breakdowns are freed (the writers that need them are done). */
void gs_sim_result_shrink(gs_sim_result *r);

/* ---- output ------------------------------------------------------------------------------ */

/* A CSV field, quoted only when it contains a comma, quote or newline. */
void gs_csv_field(FILE *f, const char *s);
/* Seconds with up to 6 decimals, trailing zeros trimmed ("12", "0.5"). */
void gs_fmt_sec(char *buf, size_t cap, gs_time t);

typedef struct gs_run_info {
    const char *trace_path, *trace_sha256, *trace_format;
    const char *cluster_spec, *cluster_sha256;
    const char *events_path, *events_sha256;
    uint64_t seed;
    const gs_params *params;
} gs_run_info;

int gs_write_summary(const char *path, const gs_sim_result *r, const gs_run_info *info);
int gs_write_jobs(const char *path, const gs_sim_result *r);
int gs_write_timeline(const char *path, const gs_sim_result *r);
int gs_write_compare(const char *path, gs_sim_result *const *rs, size_t n);
/* Per-VC statistics of one or several runs: policy,vc,jobs,done,rejected,avg_jct_s,... */
int gs_write_vcs(const char *path, gs_sim_result *const *rs, size_t n);
/* Per-user and per-size (requested GPUs) breakdowns of one or several runs
 * (docs/metrics.md): policy,user,... and policy,gpus,... */
int gs_write_users(const char *path, gs_sim_result *const *rs, size_t n);
int gs_write_sizes(const char *path, gs_sim_result *const *rs, size_t n);
void gs_print_compare(FILE *f, gs_sim_result *const *rs, size_t n);

/* ---- comparison metrics and their aggregation over seeds (aggregate.c) ----------------- */

/*
 * The scalar metrics a comparison reports, one row each in aggregate.c's METRICS table
 * (compare.csv's column order): a new metric of gs_sim_result is listed by adding its row.
 */
typedef enum gs_metric_kind {
    GS_MK_DOUBLE, /* double field at 'off' */
    GS_MK_SIZE,   /* size_t field */
    GS_MK_U64,    /* uint64_t field */
    GS_MK_MECH,   /* expands to the listed mechanisms' counts (GS_MECH_MAP) */
    GS_MK_FN,     /* computed by fn */
} gs_metric_kind;

#define GS_MF_ELASTIC 1u /* listed only when a run is elastic (elastic jobs or deadlines) */
#define GS_MF_TABLE   2u /* shown in the stdout table of an aggregated comparison */
#define GS_MF_PERCENT 4u /* a ratio shown as a percentage in that table */

typedef struct gs_metric_def {
    const char *key;                      /* column name */
    gs_metric_kind kind;                  /* where the value lives */
    size_t off;                           /* offsetof(gs_sim_result, field) */
    int dec;                              /* decimals in compare.csv, -1 = an integer */
    unsigned flags;                       /* GS_MF_* */
    double (*fn)(const gs_sim_result *r); /* GS_MK_FN */
} gs_metric_def;

typedef struct gs_metric_col { /* one column: a row, or one mechanism of a GS_MK_MECH row */
    const char *key;
    const gs_metric_def *def;
    int mech; /* GS_MK_MECH: the mechanism, else -1 */
} gs_metric_col;

/* The columns for these runs (flagged rows when some run needs them); returns how many,
 * writing at most cap into out (out may be NULL with cap 0). */
size_t gs_metric_cols(gs_sim_result *const *rs, size_t n, gs_metric_col *out, size_t cap);
double gs_metric_value(const gs_metric_col *c, const gs_sim_result *r);
/* The value as compare.csv writes it (the row's decimals). */
void gs_metric_print(FILE *f, const gs_metric_col *c, double v);

/* Student t quantile t_{0.975} with dof degrees of freedom (NAN for 0). */
double gs_t975(size_t dof);
/* Mean and 95 % confidence half-width (Student t, n - 1 dof; 0 when n < 2) of x[0..n). */
void gs_mean_ci95(const double *x, size_t n, double *mean, double *ci);

/*
 * Aggregated runs: runs[(v * np + p) * ns + s] is sweep value v, policy p, seed s (nv = 1
 * without a sweep).  mean / ci[(v * np + p) * ncols + c] per column over the seeds.  The
 * runs are borrowed (their scalar metrics are read; engines may be gone).
 */
typedef struct gs_agg {
    gs_metric_col *cols;
    size_t ncols, nv, np, ns;
    gs_sim_result *const *runs;
    double *mean, *ci;
} gs_agg;

int gs_agg_build(gs_sim_result *const *runs, size_t nv, size_t np, size_t ns, gs_agg *a);
void gs_agg_release(gs_agg *a);
/* Column index of metric 'key', or -1. */
long gs_agg_col(const gs_agg *a, const char *key);
/* compare.csv of seeded runs (sweep_key NULL) or sweep.csv (key,value first): policy,
 * placement,seeds, then every metric and its _ci95. */
int gs_write_agg(const char *path, const gs_agg *a, const char *sweep_key,
                 const char *const *values);
/* runs.csv: one row per run, [key,value,]policy,placement,seed, every metric (runs in the
 * order above; values[i / per_value] is run i's sweep value). */
int gs_write_runs(const char *path, gs_sim_result *const *runs, size_t n, const uint64_t *seeds,
                  const char *sweep_key, const char *const *values, size_t per_value);
/* The stdout table of an aggregated comparison: MEAN ± CI95 of the GS_MF_TABLE metrics. */
void gs_print_agg(FILE *f, const gs_agg *a, const char *sweep_key, const char *const *values);

#endif
