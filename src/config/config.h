/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.h - reading files and building clusters from specs (not installed).
 *
 * This layer does the I/O the core must not: it reads files whole and
 * parses them into core objects, reporting problems as "file:line:col:
 * message" through gs_diag.  Used by the simulator and the daemon.
 */
#ifndef GSCHED_CONFIG_H
#define GSCHED_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "gsched/cluster.h"
#include "gsched/error.h"
#include "gsched/job.h"

/* Read a whole file (NUL-terminated, max 1 GiB).  *buf is malloc'ed. */
int gs_read_file(const char *path, char **buf, size_t *len, gs_diag *d);
/* The same as the engine's data-file reader (gs_engine_opts.read_file; ud unused): the
 * message names the file. */
int gs_read_data_file(void *ud, const char *path, char **buf, size_t *len, gs_diag *d);
/* SHA-256 of a buffer as 64 lowercase hex digits + NUL. */
void gs_sha256_hex(const void *data, size_t len, char out[65]);

/* ---- CSV -------------------------------------------------------------------- */

/*
 * A small RFC 4180 reader over a buffer that keeps the 1-based line and
 * column of every field, so errors point at the byte.  Quoted fields may
 * contain commas, doubled quotes and newlines.  Blank lines are skipped;
 * with 'comments' set, lines starting with '#' are skipped too.
 */
typedef struct gs_csv {
    const char *buf;
    size_t len, pos;
    int line; /* line of the next byte */
    int comments;
    /* current record */
    char *rec; /* unescaped field bytes, NUL-separated */
    size_t caprec;
    char **f; /* field pointers into rec */
    int *col; /* 1-based column of each field */
    size_t nf, capf;
    int rec_line; /* line where the current record starts */
} gs_csv;

void gs_csv_init(gs_csv *r, const char *buf, size_t len, int comments);
void gs_csv_release(gs_csv *r);
/* Next record: 1 = got one, 0 = end of input, < 0 = error (diag filled). */
int gs_csv_next(gs_csv *r, gs_diag *d);

/* ---- clusters ------------------------------------------------------------------ */

/*
 * Build a cluster from a spec, which is one of:
 *   - a shorthand:  "8"        one node of 8 GPUs
 *                   "4x8"      4 nodes x 8 GPUs
 *                   "2x16x8"   2 racks x 16 nodes x 8 GPUs
 *                   "36/4"     36 GPUs on servers of 4 (= 9x4)
 *                   "...:V100" any of these with a GPU type
 *                   "9x4:V100,9x4:K80"  several parts (GPU types), racks and nodes
 *                              numbered on across the parts
 *   - a Tiresias cluster spec CSV (num_switch,num_node_p_switch,...; gsched adds an
 *     optional gpu_type column and one row per group of racks)
 *   - a HiveD scheduler config YAML (physicalCluster / virtualClusters)
 *   - Gavel's cluster_specs.json ({"philly": ["500:0:0"]}, V100:P100:K80 counts);
 *     "FILE.json#KEY" chooses a cluster, else the file must have one
 * A spec that names an existing file is read as a file; its format is
 * detected from the content.  On success *out is a finished cluster.
 * docs/cluster-format.md has every form.
 */
int gs_cluster_load(const char *spec, gs_cluster **out, gs_diag *d);
int gs_cluster_parse_shorthand(const char *spec, gs_cluster **out, gs_diag *d);
int gs_cluster_parse_tiresias(const char *file, const char *buf, size_t len, gs_cluster **out,
                              gs_diag *d);
/* Gavel's cluster_specs.json; key NULL = the only cluster of the file. */
int gs_cluster_parse_gavel(const char *file, const char *buf, size_t len, const char *key,
                           gs_cluster **out, gs_diag *d);
int gs_cluster_parse_hived(const char *file, const char *buf, size_t len, gs_cluster **out,
                           gs_diag *d);

/* ---- job shapes (hived_spec.c) ------------------------------------------------------- */

struct fy_node;

/*
 * What a parsed gs_job_spec points to: task sizes, withinOneCell groups and
 * strings.  Zero-initialise; release after gs_engine_add_job (which copies
 * them).  One buffer per spec.
 */
typedef struct gs_spec_buf {
    int32_t *task_gpus;
    int ntasks, captasks;
    gs_task_group *groups;
    int ngroups, capgroups;
    char **strs;
    int nstrs, capstrs;
} gs_spec_buf;
void gs_spec_buf_release(gs_spec_buf *b);

/*
 * A HiveD pod-scheduling spec (a YAML mapping: v1 with virtualCluster,
 * priority, leafCellType, leafCellNumber, affinityGroup ...; or version: v2
 * with cellType, cellNumber, podRootGroup ...) into s: vc, priority,
 * pinned_cell, gpu_type, lazy_preemption, name (the group's, when s has
 * none), the tasks and groups, gang = 1, hived_strict = 1; other fields of s
 * are left as they are.  Validated as HiveD validates a pod's spec, with its
 * messages, as file:line:col.  c resolves cell types (cellsPerPod, cellType,
 * withinOneCell); NULL accepts leaf types only.  Mapping and approximations:
 * the header of src/config/hived_spec.c and docs/job-spec.md.
 */
int gs_hived_spec_parse(struct fy_node *n, const gs_cluster *c, gs_job_spec *s, gs_spec_buf *b,
                        gs_diag *d);
/* The same from YAML text (a daemon's submission); 'file' names it in errors. */
int gs_hived_spec_parse_text(const char *file, const char *buf, size_t len, const gs_cluster *c,
                             gs_job_spec *s, gs_spec_buf *b, gs_diag *d);
/*
 * gsched's plain form in a job mapping: 'members' ([{tasks, gpus_per_task}],
 * tasks of different sizes in order), 'groups' (nested {within, members,
 * groups}: a group's own members first, then its groups') and 'within' (the
 * whole job inside one cell of that type).  Sets s's tasks and groups when
 * any of the three is there (0 and nothing changed otherwise); with 'within'
 * alone the job keeps its tasks x gpus_per_task.  c (may be NULL) checks the
 * cell types.
 */
int gs_job_groups_parse(struct fy_node *job, const gs_cluster *c, gs_job_spec *s, gs_spec_buf *b,
                        gs_diag *d);

/* Parse a memory size such as "54Gi", "32G", "512M", "1024" (MiB). -1 on error. */
int64_t gs_parse_mem_mb(const char *s);

#endif
