/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen.h - the workload generator (`gsched gen`, and `gsched sim --trace gen:SPEC`).
 *
 * A generator spec is a comma-separated KEY=VALUE list (docs/workload-generator.md):
 * the number of jobs, the arrival process (Poisson at a target load of the cluster's
 * GPUs or at a rate, or arrivals sampled from a real trace), the job mix (Gavel's
 * distribution of sizes, durations and job types, or the distributions of a real trace)
 * and the GPU profile table the job types come from.  Generation is a pure function of
 * (spec, cluster GPU count, seed): the same three give the same trace, on every machine.
 *
 * Ownership: gs_gen_spec_parse() returns a spec owned by the caller (gs_gen_spec_destroy,
 * NULL is fine).  gs_gen_generate() fills a zero-initialised gs_trace the caller releases
 * with gs_trace_release().
 */
#ifndef GSCHED_GEN_H
#define GSCHED_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

typedef struct gs_gen_spec gs_gen_spec;

/* Parse "jobs=1000,load=0.9,mix=gavel,..."; 'src' names it in diagnostics. */
int gs_gen_spec_parse(const char *src, const char *text, gs_gen_spec **out, gs_diag *d);
void gs_gen_spec_destroy(gs_gen_spec *s);
/* Generate the workload for a cluster of 'total_gpus' GPUs with this seed.  t->path is
 * "gen:SPEC"; t->sha256 is the digest of what gs_gen_write() writes for the same three. */
int gs_gen_generate(const gs_gen_spec *s, size_t total_gpus, uint64_t seed, gs_trace *t,
                    gs_diag *d);
/* Write a generated trace as gsched's native CSV (a '#' line naming spec, seed and GPUs,
 * then id,submit,duration,gpus[,gpus_per_task][,model][,user][,vc]); 0 or GS_EIO. */
int gs_gen_write(const gs_gen_spec *s, size_t total_gpus, uint64_t seed, const gs_trace *t,
                 FILE *out, gs_diag *d);

/* What a generated workload offers (gsched gen prints it). */
typedef struct gs_gen_stats {
    double rate_per_h;        /* target arrival rate, jobs/hour (0: a trace's own gaps) */
    double mix_mean_gpu_s;    /* mean GPU-seconds of a job of the mix (reference type) */
    double gpu_s;             /* GPU-seconds of the generated jobs */
    double span_s;            /* last arrival - first arrival */
    double rate_per_h_actual; /* (jobs - 1) / span */
    double load_actual;       /* offered load: mean GPU-time x actual rate / GPUs */
} gs_gen_stats;
void gs_gen_describe(const gs_gen_spec *s, size_t total_gpus, const gs_trace *t, gs_gen_stats *st);

#endif
