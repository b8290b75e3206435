/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/goodput.h - the goodput model of elastic jobs (issue 13).
 *
 * goodput = throughput(placement, batch) x statistical efficiency(batch,
 * progress) (Pollux, OSDI'21; algorithms.md section 7.2.1, elastic.md
 * section 1.2).  Two sources of the same model:
 *   - applications (gs_app): measured tables, as the Pollux artifact ships
 *     them per application - step/sync time by placement and local batch,
 *     scalability rows for unmeasured placements, and per-batch validation
 *     curves (progress, iterations, metric, gradient square and variance by
 *     epoch).  The program reads the files (the core does no I/O) and adds
 *     the rows here; the simulator uses them as the truth;
 *   - learned parameters per job (what Pollux's scheduler sees): the
 *     throughput model fitted from the configurations a job has run, and
 *     the last gradient statistics; LIVE they come from worker hints.
 *
 * The model is a gs_progress_ops (engine.h): installed in an engine, it sets
 * the progress rate of every job whose spec names an application, re-tunes
 * its batch size at each epoch boundary and at each new generation, and
 * answers the policies' questions (speedup of n GPUs on m nodes, step time).
 *
 * Units: a job's work is its application's total progress to completion
 * expressed in work-us at a reference goodput (gs_goodput_work); rate 1 =
 * the reference goodput.  Deterministic: no randomness, no hash order.
 */
#ifndef GSCHED_GOODPUT_H
#define GSCHED_GOODPUT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "error.h"
#include "job.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_goodput gs_goodput;

/* ---- building: the program loads files and adds rows ---------------------- */

/* An application's constants (Pollux artifact: APPLICATIONS). 0 = derive from the rows
 * (init batch = smallest validated batch, max batch = largest, local batch bounds
 * from the placement rows, max_epochs = shortest validation curve). */
typedef struct gs_app_spec {
    const char *name;
    int64_t init_batch, max_batch;
    int min_local_bsz, max_local_bsz;
    int max_epochs;
} gs_app_spec;

int gs_goodput_create(gs_goodput **out);
void gs_goodput_destroy(gs_goodput *g);
/* Forget every job's state (epoch, batch, profile, learned parameters); the tables stay.
 * The state is keyed by job slot, so one model serves one engine at a time: reset it
 * before installing it in the next one (the simulator does, once per run). */
void gs_goodput_reset(gs_goodput *g);
/* Declare an application; returns its id (>= 0) or GS_E*. */
int gs_goodput_add_app(gs_goodput *g, const gs_app_spec *spec);
/* placements.csv row: placement digits (GPUs per node, e.g. "22"), local batch, times (s). */
int gs_goodput_add_placement(gs_goodput *g, int app, const char *placement, int local_bsz,
                             double step_time, double sync_time);
/* scalability.csv row. */
int gs_goodput_add_scalability(gs_goodput *g, int app, int nodes, int replicas, int local_bsz,
                               double step_time, double sync_time);
/* validation-<batch>.csv row (in epoch order). */
int gs_goodput_add_validation(gs_goodput *g, int app, int64_t batch, double progress,
                              double iteration, double metric, double grad_sqr, double grad_var);
/* After all rows: derive constants, check the tables (GS_EPARSE + diag naming the app). */
int gs_goodput_finish(gs_goodput *g, gs_diag *d);
int gs_goodput_find_app(const gs_goodput *g, const char *name); /* -1 if unknown */
/* Application 'app's constants (derived ones filled in by finish); NULL for a bad id. */
const gs_app_spec *gs_goodput_app(const gs_goodput *g, int app);
size_t gs_goodput_napps(const gs_goodput *g);

/* Work (work-us) of a job of application 'app' to completion (all max_epochs). */
gs_time gs_goodput_work(const gs_goodput *g, int app);

/* ---- the tables themselves (the truth the simulator runs on) ------------------- */

/* Step and sync time (s) of one step of application 'app' on a placement (GPUs per node,
 * per_node[0..n), zeros skipped) at local batch 'local_bsz': the placement's own rows when
 * measured, else interpolated over (nodes, replicas, local batch). */
int gs_goodput_app_times(const gs_goodput *g, int app, const int *per_node, int n, int local_bsz,
                         double *step, double *sync);
/* Gradient square and variance of 'app' during 'epoch' at global batch 'batch'
 * (interpolated between validated batches). */
int gs_goodput_app_grad(const gs_goodput *g, int app, double batch, int epoch, double *sqr,
                        double *var);
/* Progress of 'app' at the start of 'epoch' (0 .. max_epochs), in the curves' units. */
double gs_goodput_app_progress(const gs_goodput *g, int app, int epoch);

/* ---- the learned throughput model (AdaptDL's PerfParams), pure functions ------------ */

typedef struct gs_perf_params {
    double alpha_c, beta_c; /* compute: alpha_c + beta_c x atomic batch */
    double alpha_n, beta_n; /* inter-node network: alpha_n + beta_n x (replicas - 2) */
    double alpha_r, beta_r; /* intra-node network */
    double gamma;           /* overlap of compute and network, 1..10 */
} gs_perf_params;
typedef struct gs_perf_obs {
    int nodes, replicas, local_bsz;
    double step_time, sync_time; /* s */
} gs_perf_obs;
/* Fit the parameters to n >= 1 observations (the artifact's fit_perf_params: RMSLE of
 * compute and step times plus its priors, bounded minimisation). */
int gs_goodput_fit_perf(const gs_perf_obs *obs, size_t n, gs_perf_params *out);
/* Best (atomic batch, accumulation steps) of 'app' on (nodes, replicas) under the learned
 * parameters and gradient statistics; returns the predicted goodput (0 when none fits). */
double gs_goodput_optimize(const gs_perf_params *p, double grad_sqr, double grad_var,
                           const gs_app_spec *app, int nodes, int replicas, int *atomic,
                           int *accum);

/* ---- as the engine's progress model ---------------------------------------- */

/* The ops to install with gs_engine_set_progress(e, gs_goodput_progress_ops(), g). */
const gs_progress_ops *gs_goodput_progress_ops(void);
/* The goodput model installed in e; NULL when e runs another progress model or none. */
gs_goodput *gs_goodput_of(const gs_engine *e);

/* Per-job batch mode (set by the policy before the job first runs):
 *   GS_BATCH_ADAPTIVE  Pollux: the batch is chosen for the best goodput at each
 *                      generation and epoch from the learned parameters;
 *   GS_BATCH_FIXED     TunedJobs: the job's spec batch_size, split over replicas. */
enum { GS_BATCH_ADAPTIVE = 0, GS_BATCH_FIXED = 1 };
int gs_goodput_set_batch_mode(gs_goodput *g, const gs_job *j, int mode, int64_t batch);

/* Parity with the artifact's time-stepped simulator: besides at placements and epoch
 * boundaries, re-tune every job's batch at each multiple of 'interval' (its scheduling
 * interval; the job learns from the new configuration at once).  0 (default) = never. */
void gs_goodput_set_interval(gs_goodput *g, gs_time interval);

/* Interference: slowdown factor (0..1) applied to distributed jobs that share a node
 * with another distributed job (Pollux --interference), 0 = none. */
void gs_goodput_set_interference(gs_goodput *g, double slowdown);

/* ---- what policies ask ------------------------------------------------------ */

/* Learned speedup of (nodes, replicas) for job j relative to 1 GPU on 1 node with the best
 * batch (Pollux's SpeedupFunction; linear 'replicas' while nothing is learned). */
double gs_goodput_speedup(gs_goodput *g, const gs_job *j, int nodes, int replicas);
/* Most replicas job j has been profiled at (0 = none yet). */
int gs_goodput_max_profiled(const gs_goodput *g, const gs_job *j);
/* True (table) time of one optimizer step of job j at 'replicas' GPUs packed 4 per node
 * with batch 'batch' (Optimus' predict_step_time); -1 when unknown. */
double gs_goodput_step_time(const gs_goodput *g, const gs_job *j, int replicas, int64_t batch);
/* Iterations left for job j at batch 'batch' from its current epoch to completion. */
double gs_goodput_remaining_iters(const gs_goodput *g, const gs_job *j, int64_t batch);
/* Job j's application constants (NULL when j has none). */
const gs_app_spec *gs_goodput_job_app(const gs_goodput *g, const gs_job *j);
/* Job j's current epoch (0 before the first). */
int gs_goodput_epoch(const gs_goodput *g, const gs_job *j);

/* ---- live hints (worker reports; the daemon feeds them) ----------------------- */

typedef struct gs_hint {
    int64_t step, samples;
    double step_time, sync_time; /* s per step */
    int local_bsz, accum;
    double grad_sqr, grad_var; /* < 0 = not reported */
    int64_t ckpt_step;         /* -1 = none */
} gs_hint;
/* Record a hint for job j (running on j->alloc): refits its throughput parameters. */
int gs_goodput_hint(gs_goodput *g, const gs_job *j, const gs_hint *h);

/* ---- throughput tables (ElasticFlow): a second progress model ------------------------
 *
 * ElasticFlow's jobs run a fixed number of iterations at a fixed global batch (strong
 * scaling) and its authors measured, per model and global batch, iterations/s at 1, 2, 4,
 * ..., 64 GPUs.  gs_tput holds those rows (the program reads the files: src/sim/tput.c) and
 * is a gs_progress_ops of its own: a job with app = the model name and batch_size = a
 * measured global batch progresses at
 *     rate(k) = tput(k) / tput(ref),  ref = j->req_gpus (the size the trace asked for),
 * and its work is its iterations at the reference rate, iterations / tput(ref) seconds
 * (gs_tput_work), so a job run at its requested size takes exactly that long.  tput(k)
 * between measured counts is interpolated linearly in k, below the smallest measured count
 * proportionally (k / k_min), above the largest it stays at the largest's value.  The model
 * keeps no per-job state (no boundaries: next = GS_TIME_NONE).
 */
typedef struct gs_tput gs_tput;

int gs_tput_create(gs_tput **out);
void gs_tput_destroy(gs_tput *t);
/* Add a measured value: model 'model' (copied) at global batch 'batch' runs 'its'
 * iterations/s (> 0, finite) on 'gpus' GPUs (>= 1).  GS_EEXIST when already given. */
int gs_tput_add(gs_tput *t, const char *model, int64_t batch, int gpus, double its);
/* Row (model, batch), >= 0, or -1 when not measured. */
int gs_tput_find(const gs_tput *t, const char *model, int64_t batch);
size_t gs_tput_nrows(const gs_tput *t);
/* Iterations/s of row 'row' on 'gpus' GPUs (interpolated as above); 0 for gpus <= 0. */
double gs_tput_its(const gs_tput *t, int row, int gpus);
/* Largest measured GPU count of a row; the count with the highest measured throughput
 * (the smallest such count on ties). */
int gs_tput_max_gpus(const gs_tput *t, int row);
int gs_tput_best_gpus(const gs_tput *t, int row);
/* Work (us) of 'iterations' iterations of row 'row' at the reference size 'ref_gpus':
 * iterations / its(ref) seconds, rounded to the microsecond; GS_ERANGE when it would exceed
 * 1e11 s, GS_EINVAL for a bad row or iterations < 1. */
int gs_tput_work(const gs_tput *t, int row, int ref_gpus, int64_t iterations, gs_time *out);
/* The ops to install with gs_engine_set_progress(e, gs_tput_progress_ops(), t); rate()
 * fails with GS_EINVAL for a job whose (app, batch_size) has no row.  t is only read, so one
 * table may serve several engines. */
const gs_progress_ops *gs_tput_progress_ops(void);
/* The table installed in e, NULL when the engine's model is not a gs_tput. */
const gs_tput *gs_tput_of(const gs_engine *e);

#ifdef __cplusplus
}
#endif
#endif
