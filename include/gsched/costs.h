/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/costs.h - what mechanisms cost: placement slowdown and restart
 * overhead.  The engine charges these; policies only decide.  Which
 * mechanisms are counted, and how outputs list them: GS_MECH_MAP in job.h.
 *
 * Slowdown: a job's iteration time is multiplied by a factor that depends on
 * how far its GPUs are spread and on its model class:
 *
 *   spread level                                   heavy  light  default
 *   0 one GPU, or one node with no declared inner  1.00   1.00   1.00
 *     topology (taken to be NVLink/NVSwitch)
 *   1 one node, same PCIe switch                   1.05   1.00   1.02
 *   2 one node, across PCIe switches, same socket  1.10   1.02   1.05
 *   3 one node, across sockets                     1.25   1.05   1.10
 *   4 several nodes of one rack                    2.00   1.10   1.50
 *   5 several racks                                2.40   1.155  1.65
 *
 * (algorithms.md section 10.4, calibrated on Gavel's consolidated/spread
 * throughput ratios and Pollux's measured step times).  Model classes:
 * "heavy" = communication-heavy models whose largest tensor dominates or
 * that synchronise a lot (vgg*, alexnet, bert*, gpt*, transformer*, lm*,
 * yolo*), "light" = resnet*, inception*, googlenet, mobilenet*,
 * deepspeech*, cifar*, imagenet; anything else "default".
 *
 * Restart overhead (section 11): a job that starts again after a preemption
 * or a node failure holds its new GPUs for
 *     t_save(old) + t_restore(new) + t_init(gpus)
 * without progress, with t_save = t_restore = state_bytes / ckpt_bw,
 * state_bytes = params x 4 B x (1 + optimizer_slots), and
 * t_init(g) = init_base + init_per_gpu x (g - 1) (5 s + 3.75 s/GPU: "a few
 * seconds" for 1 GPU, ~35 s for 8).  A node failure cannot checkpoint, so it
 * costs t_restore + t_init only.
 *
 * Mechanisms (Gandiva; algorithms.md section 11):
 *   suspend   the job finishes its current mini-batch (exactly: the engine
 *             knows where in its iteration it is), then copies its GPU state
 *             to host memory (suspend_copy, default 100 ms); resuming on the
 *             same node copies it back (suspend_copy again).  Resuming on
 *             another node costs a migration.
 *   migrate   t_save + t_restore + t_init(g), with save/restore through host
 *             memory (local_bw, default 10 GB/s) when every destination node
 *             is a source node, else through shared storage (ckpt_bw).
 *   resize    a checkpoint-restart with the new GPU count: the restart
 *             overhead above for the new size.  The progress rate follows the
 *             scaling curve S(n) = n / (1 + alpha (n - 1)) relative to the
 *             requested size, alpha per model class (scale_alpha).
 *   preempt_cost=SECONDS makes restarts, migrations and resizes cost that
 *   fixed time and suspends/resumes free when it is 0; costs=off is
 *   slowdown=off plus preempt_cost=0 (the published simulators).
 *
 * Suspend mechanisms (suspend_mech=, simulation only; docs/costs.md):
 *   copy      (default) the Gandiva mechanism above: mini-batch wait, then
 *             suspend_copy out and suspend_copy back.
 *   sigstop   SIGSTOP / SIGCONT: suspend and resume cost nothing and do not
 *             wait, but the stopped process keeps its GPU memory on the GPUs
 *             it left ("parked"): it resumes only there (a pack onto other
 *             GPUs too is refused, GS_EUNSUPPORTED), and a job placed on a
 *             GPU with parked memory (start, resume, pack, migrate, resize)
 *             needs parked + its own (+ its pack partner's) memory to fit
 *             the GPU's memory, else GS_ENOFIT.  A constraint, not a cost:
 *             it holds with costs=off too.
 *   cuda      the CUDA driver's process checkpoint (lock + checkpoint /
 *             restore + unlock): no mini-batch wait (transparent to the
 *             framework); the GPUs copy in parallel, each its share of the
 *             job's per-GPU memory m (gs_engine_job_gpu_mem):
 *                 suspend = ckpt_fixed + m / ckpt_d2h_bw
 *                 resume  = ckpt_fixed + m / ckpt_h2d_bw
 *             Resuming on other nodes is a migration, as with copy.
 *   restart   kill-restart time-slicing: suspend = t_save (the job
 *             checkpoints to storage and exits), resume = t_restore +
 *             t_init(g) on any nodes (the checkpoint is on shared storage:
 *             never a migration); together exactly a preemption's restart
 *             overhead.  With preempt_cost=SECONDS: 0 and that fixed time.
 *   costs=off / preempt_cost=0 make all four free.
 *
 * Rescales of elastic jobs (issue 13, gs_engine_rescale): the old
 * generation drains (gs_costs_drain: holds its GPUs without progress), then
 * the new one relaunches (gs_costs_relaunch: holds the new GPUs without
 * progress).  rescale_cost= picks the pair:
 *   (unset)      follows preempt_cost: drain = t_save(old), relaunch =
 *                t_restore + t_init(new) with the model; 0 and the fixed cost
 *                with preempt_cost=SECONDS
 *   analytic     the model above whatever preempt_cost says
 *   pollux30     drain 0, relaunch 30 s (the Pollux artifact)
 *   elasticflow  drain 0, relaunch 2 + 2 (log2 g + 1) s (ElasticFlow's simulator)
 *   zero         both 0
 *
 * Parameters (--set): slowdown=on|off, slowdown_heavy / slowdown_light /
 * slowdown_default = six comma-separated factors (levels 0..5),
 * heavy_models / light_models = comma-separated name prefixes (replace the
 * built-in lists), preempt_cost=model|SECONDS (0 = free, as the published
 * simulators), ckpt_bw (bytes/s, default 1e9), optimizer_slots (default 2),
 * init_base (default 5s), init_per_gpu (default 3.75s), suspend_copy
 * (default 100ms), local_bw (bytes/s, default 1e10), scale_alpha = three
 * comma-separated values for the default, light and heavy classes (default
 * 0.1,0.05,0.2), costs=on|off, rescale_cost=analytic|pollux30|elasticflow|zero,
 * suspend_mech=copy|sigstop|cuda|restart (default copy), ckpt_fixed (default
 * GS_CKPT_FIXED_DEFAULT), ckpt_d2h_bw / ckpt_h2d_bw (bytes/s, defaults
 * GS_CKPT_D2H_BW_DEFAULT / GS_CKPT_H2D_BW_DEFAULT).
 */
#ifndef GSCHED_COSTS_H
#define GSCHED_COSTS_H

#include "cluster.h"
#include "error.h"
#include "job.h"
#include "params.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_SPREAD_LEVELS 6

/* Defaults of suspend_mech=cuda (one fixed cost per checkpoint or restore, then the per-GPU
 * memory at these rates): fits to the CUDA checkpoint measured on an NVIDIA H200 (driver
 * 580.159.04, CUDA 13.0; one process holding 2.7 to 49 GiB of GPU memory: checkpoint 1.8 to
 * 32.7 s, restore 0.56 to 8.9 s), within about 25 % (35 % at worst; docs/costs.md has the
 * points).  The checkpoint's device-to-host rate is far below PCIe bandwidth: the driver
 * copies into freshly allocated pageable host memory.  Change them here (docs/costs.md,
 * docs/gandiva.md, docs/policies.md and gsched sim --help quote them and figures computed
 * with them). */
#define GS_CKPT_FIXED_DEFAULT  (200 * GS_MSEC) /* lock + checkpoint (or restore + unlock) */
#define GS_CKPT_D2H_BW_DEFAULT 1.7e9           /* bytes/s, device to host (suspend) */
#define GS_CKPT_H2D_BW_DEFAULT 5.5e9           /* bytes/s, host to device (resume) */

typedef enum gs_suspend_mech {
    GS_SUSPEND_COPY = 0,    /* Gandiva's: mini-batch wait, suspend_copy each way (default) */
    GS_SUSPEND_SIGSTOP = 1, /* free, but the memory stays parked on the GPUs it left */
    GS_SUSPEND_CUDA = 2,    /* CUDA checkpoint: ckpt_fixed + memory / bandwidth each way */
    GS_SUSPEND_RESTART = 3, /* kill-restart: t_save out, t_restore + t_init back */
    GS_SUSPEND_NMECHS
} gs_suspend_mech;

/* "copy", "sigstop", "cuda", "restart"; "?" out of range. */
const char *gs_suspend_mech_name(int m);

typedef enum gs_model_class {
    GS_MODEL_DEFAULT = 0,
    GS_MODEL_LIGHT = 1,
    GS_MODEL_HEAVY = 2,
    GS_MODEL_NCLASSES
} gs_model_class;

const char *gs_model_class_name(gs_model_class c);

typedef struct gs_costs {
    int slowdown;                                       /* 0 = off */
    double factor[GS_MODEL_NCLASSES][GS_SPREAD_LEVELS]; /* >= 1 */
    char *heavy, *light;                                /* comma lists of prefixes (owned) */
    int preempt_model;                                  /* 1 = the model above */
    gs_time preempt_fixed;                              /* when !preempt_model */
    double ckpt_bw;                                     /* bytes per second */
    double optimizer_slots;
    gs_time init_base, init_per_gpu;
    gs_time suspend_copy;                  /* GPU <-> host state copy per suspend/resume */
    double local_bw;                       /* bytes/s of an intra-node state move */
    double scale_alpha[GS_MODEL_NCLASSES]; /* scaling-curve contention per class */
    int rescale;                           /* gs_rescale_cost: rescale_cost= preset */
    int suspend_mech;                      /* gs_suspend_mech: suspend_mech= */
    gs_time ckpt_fixed;                    /* cuda: fixed part of a checkpoint or restore */
    double ckpt_d2h_bw, ckpt_h2d_bw;       /* cuda: bytes/s of its copies (per GPU) */
} gs_costs;

typedef enum gs_rescale_cost {
    GS_RESCALE_COST_PREEMPT = 0, /* follow preempt_cost (default) */
    GS_RESCALE_COST_ANALYTIC = 1,
    GS_RESCALE_COST_POLLUX30 = 2,
    GS_RESCALE_COST_ELASTICFLOW = 3,
    GS_RESCALE_COST_ZERO = 4,
} gs_rescale_cost;

/* Defaults: slowdown on, restart overhead from the model. */
void gs_costs_init(gs_costs *c);
void gs_costs_release(gs_costs *c);
/* Read the parameters above (marking them used). */
int gs_costs_from_params(gs_costs *c, gs_params *p, gs_diag *d);
/* The same with 'costs' defaulting to costs_default (0: as if costs=off were given; the
 * engine passes 0 for a policy flagged GS_POLICY_COSTS_OFF). */
int gs_costs_from_params_def(gs_costs *c, gs_params *p, int costs_default, gs_diag *d);

gs_model_class gs_costs_class(const gs_costs *c, const char *model);
/* Parameters of a model in millions (approximate; default 25.6, ResNet-50). */
double gs_model_params_m(const char *model);
/* Spread level (0..5) of a placement. */
int gs_costs_spread_level(const gs_cluster *cl, const int32_t *gpus, int n);
/* Slowdown factor (>= 1) of a placement for a job's model. */
double gs_costs_slowdown(const gs_costs *c, const gs_cluster *cl, const char *model,
                         const int32_t *gpus, int n);
/* Restart overhead; 'saved' = 1 if the job could checkpoint (preemption). */
gs_time gs_costs_restart(const gs_costs *c, const char *model, int gpus, int saved);
/* Migration of a job of 'gpus' GPUs; 'inter_node' = 1 when it leaves its nodes. */
gs_time gs_costs_migrate(const gs_costs *c, const char *model, int gpus, int inter_node);
/* State copy of one suspend or one resume on the same node (0 when costs are off). */
gs_time gs_costs_suspend_copy(const gs_costs *c);
/* One suspend of a job of 'model' whose GPUs hold mem_mb MB each (>= 0; after any mini-batch
 * wait): the time its GPUs stay busy without progress, by suspend_mech. */
gs_time gs_costs_suspend(const gs_costs *c, const char *model, int mem_mb);
/* One resume on 'gpus' GPUs on the nodes it left (restart: on any nodes), by suspend_mech. */
gs_time gs_costs_resume(const gs_costs *c, const char *model, int gpus, int mem_mb);
/* 1 when a suspend first finishes the mini-batch in flight (copy, with costs on). */
int gs_costs_suspend_waits(const gs_costs *c);
/* 1 when a suspended job keeps its GPU memory where it was and resumes only there (sigstop). */
int gs_costs_suspend_parks(const gs_costs *c);
/* 1 when a resume on other nodes costs what one on its nodes does, not a migration (restart). */
int gs_costs_resume_anywhere(const gs_costs *c);
/* Rescale: drain of the old generation of 'gpus' GPUs (checkpoint save; >= 0). */
gs_time gs_costs_drain(const gs_costs *c, const char *model, int gpus);
/* Rescale: relaunch of the new generation on 'gpus' GPUs (restore + init; >= 0). */
gs_time gs_costs_relaunch(const gs_costs *c, const char *model, int gpus);
/* Scaling curve: relative throughput at n GPUs, S(n) = n / (1 + alpha (n - 1)). */
double gs_costs_scale(const gs_costs *c, const char *model, int n);

#ifdef __cplusplus
}
#endif
#endif
