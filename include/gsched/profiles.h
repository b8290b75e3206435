/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/profiles.h - job profiles: what a model does on a GPU.
 *
 * Gandiva-style mechanisms need to know, per model and GPU type, the
 * iteration (mini-batch) time, the GPU memory a job takes and how busy it
 * keeps the GPU, and, per pair of models packed on the same GPUs, how fast
 * each of them progresses relative to running alone.  The engine charges
 * mechanism costs from these numbers (a suspend waits for the end of the
 * current mini-batch; a pack progresses at the pair's rates); policies read
 * them to decide (pack the least busy jobs first).
 *
 * The text format (docs/gandiva.md, "Profiles") is CSV with four tables, each
 * started by its header line; '#' lines and blank lines are skipped:
 *
 *   model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util
 *   model_a,model_b,gpu_type,gpus,rate_a,rate_b
 *   alias,model
 *   gpu_type,gpu_mem_mb
 *
 * gs_profiles_parse() also reads Gavel's simulation_throughputs.json unchanged
 * (a buffer whose first character is '{'): the same tables derived as
 * tools/gen_profiles.py derives data/profiles/gavel.csv from it, without GPU
 * memory (0), reference type v100 (docs/gandiva.md, "Profiles").
 *
 * Model names are matched after normalisation (lower case, letters, digits
 * and '-' kept: "ResNet-50" and "resnet50" differ, "RESNET50" and "resnet50"
 * do not), first directly, then through the alias table; anything else uses
 * the 'default' row.  gpu_type "any" matches every type; a GPU type without
 * rows of its own uses those of the reference type, the first one of the
 * gpu_type table (V100 in the built-in file).  A pair rate of 0
 * means the two cannot share a GPU (they did not fit when measured).  The
 * built-in file is Gavel's measured throughputs (data/profiles/gavel.csv).
 *
 * Speeds by GPU type (docs/heterogeneity.md, "Speed model"): every model row,
 * at every GPU count, is also a throughput, 1 / iter_time_s steps/s of the
 * whole job (gs_profiles_tput).  A job's progress rate on type k relative to
 * the reference type is tput(model, k, gpus) / tput(model, ref, gpus)
 * (gs_profiles_rate); the 'default' rows of each type stand for models
 * without rows of their own.
 *
 * Ownership: gs_profiles_parse() returns an object owned by the caller, freed
 * by gs_profiles_destroy() (NULL is fine).  Returned pointers are borrowed for
 * the object's lifetime.  No I/O: the caller reads the file.
 */
#ifndef GSCHED_PROFILES_H
#define GSCHED_PROFILES_H

#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_profiles gs_profiles;

typedef struct gs_profile {
    const char *model;    /* normalised profile name ("resnet50-bs64", "default") */
    const char *gpu_type; /* as written ("V100", "any") */
    double iter_s;        /* isolated iteration time on one GPU, seconds (> 0) */
    int gpu_mem_mb;       /* GPU memory per GPU while training (>= 0) */
    double gpu_util;      /* 0..1: how much of the GPU it keeps busy */
} gs_profile;

/* Parse a profile file held in memory; 'file' names it in diagnostics. */
int gs_profiles_parse(const char *file, const char *buf, size_t len, gs_profiles **out, gs_diag *d);
/* The built-in profiles (Gavel's measurements). */
int gs_profiles_builtin(gs_profiles **out, gs_diag *d);
void gs_profiles_destroy(gs_profiles *p);
/* Profiles with only the built-in fallback row (static, read-only; never destroy it). */
const gs_profiles *gs_profiles_empty(void);

/*
 * Profile of 'model' on 'gpu_type' (NULL = any type).  Never NULL: falls back
 * to the model's row of another type, then to the 'default' row (a built-in
 * one if the file has none).
 */
const gs_profile *gs_profiles_get(const gs_profiles *p, const char *model, const char *gpu_type);
/* 1 when 'model' has a profile of its own (directly or through an alias). */
int gs_profiles_known(const gs_profiles *p, const char *model);
/*
 * Rates of a and b packed on the same GPUs (progress per unit time relative
 * to running alone, 0..1).  Measured pair if present (either order), else the
 * 'default' pair, else 0.5 each.  Returns 1 if a measured pair was found.
 */
int gs_profiles_pair(const gs_profiles *p, const char *a, const char *b, const char *gpu_type,
                     double *rate_a, double *rate_b);
/* Memory of one GPU of this type in MiB (table 4; 'default' row; else 16384). */
int gs_profiles_gpu_mem(const gs_profiles *p, const char *gpu_type);
/*
 * The reference GPU type: the first of the gpu_type table (not 'default'),
 * else the type of the first model row written (unless "any"); NULL when
 * neither exists.  Work is measured on it (docs/heterogeneity.md).
 */
const char *gs_profiles_ref_type(const gs_profiles *p);
/* 1 when some model row is of GPU type 'gpu_type' (case-insensitive; "any" is no type). */
int gs_profiles_has_type(const gs_profiles *p, const char *gpu_type);
/*
 * Throughput of 'model' (its own rows, else the 'default' ones) on 'gpus'
 * GPUs of 'gpu_type' (a type without rows, or NULL: the reference type's
 * rows; then "any" rows), in steps/s of the whole job: the row at 'gpus',
 * else the 1-GPU row times 'gpus'.  0 when there is no such row (not
 * measured, or it cannot run there).
 */
double gs_profiles_tput(const gs_profiles *p, const char *model, const char *gpu_type, int gpus);
/*
 * Progress rate of 'model' on 'gpus' GPUs of 'gpu_type' relative to the same
 * on 'ref' (NULL: gs_profiles_ref_type()): tput(type) / tput(ref) at 'gpus'
 * when both rows exist, else at 1 GPU; for a model measured on only one of
 * the two, the 'default' model's ratio; else 1.  1 when gpu_type is NULL, is
 * 'ref', or has no rows.  Always > 0.
 */
double gs_profiles_rate(const gs_profiles *p, const char *model, const char *gpu_type,
                        const char *ref, int gpus);
/* Number of model rows / pairs (tests, reports). */
size_t gs_profiles_nrows(const gs_profiles *p);
size_t gs_profiles_npairs(const gs_profiles *p);

#ifdef __cplusplus
}
#endif
#endif
