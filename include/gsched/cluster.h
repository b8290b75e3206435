/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/cluster.h - the cluster model: a tree of cells with GPUs as leaves.
 *
 *     cluster (root, synthetic)
 *       └─ pool / rack cells       (optional, above node level)
 *            └─ node cells         (exactly one per machine and chain)
 *                 └─ socket / PCIe-switch cells (optional, intra-node)
 *                      └─ GPU leaves
 *
 * Cells are stored in depth-first pre-order, so every cell's GPUs are the
 * contiguous range [gpu_lo, gpu_hi) and every cell's nodes the range
 * [node_lo, node_hi).  Topology is immutable after gs_cluster_finish().
 *
 * Allocation state lives beside the topology: each GPU has an owner (a job
 * slot or -1), a health flag and a user count; each cell keeps aggregates so
 * placement can find room without scanning the cluster:
 *   free          free healthy GPUs in the subtree
 *   max_node_free the largest 'free' of any single node in the subtree
 *   idle_nodes    nodes in the subtree whose GPUs are all free and healthy
 * Invariant: after every gs_cluster_alloc()/gs_cluster_release()/health
 * change, these aggregates equal what a full recount would give
 * (gs_cluster_check() verifies it; tests call it).
 *
 * Ownership: gs_cluster_create() returns an object owned by the caller and
 * freed with gs_cluster_destroy() (NULL is fine).  Names returned by getters
 * are borrowed for the cluster's lifetime.
 */
#ifndef GSCHED_CLUSTER_H
#define GSCHED_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a cell is, for topology distance and slowdown.  Ordered bottom-up. */
typedef enum gs_cell_kind {
    GS_CELL_GPU = 0,
    GS_CELL_PCIE = 1,   /* PCIe switch (or NVLink island) inside a node */
    GS_CELL_SOCKET = 2, /* CPU socket / NUMA domain inside a node */
    GS_CELL_NODE = 3,
    GS_CELL_RACK = 4, /* ToR switch / RDMA domain (Tiresias' "switch") */
    GS_CELL_POOL = 5, /* anything above a rack */
    GS_CELL_ROOT = 6
} gs_cell_kind;

const char *gs_cell_kind_name(gs_cell_kind k);

typedef struct gs_cell {
    int32_t parent; /* -1 for the root */
    int32_t kids;   /* index into the cluster's child array */
    int32_t nkids;
    int32_t gpu_lo, gpu_hi;
    int32_t node_lo, node_hi; /* for cells below node level: the node, node+1 */
    int16_t kind;             /* gs_cell_kind */
    int16_t depth;            /* root = 0 */
    int32_t type;             /* cell-type id (HiveD cellTypes), -1 if none */
    const char *name;         /* address, e.g. node name; borrowed */
    uint32_t gpu_types;       /* bit mask of GPU types in the subtree */
    /* dynamic aggregates (see header comment) */
    int32_t free;
    int32_t max_node_free;
    int32_t idle_nodes;
    int32_t healthy; /* healthy GPUs in the subtree */
} gs_cell;

typedef struct gs_node {
    int32_t cell;           /* node cell index */
    int32_t gpu_lo, gpu_hi; /* GPUs of the node */
    int32_t rack;           /* nearest rack-or-above ancestor cell, or root */
    const char *name;
    int32_t cpus, mem_mb; /* capacity; 0 = not modelled */
    int32_t free_cpus, free_mem_mb;
    int32_t down; /* whole node marked down */
} gs_node;

typedef struct gs_gpu {
    int32_t node;
    int32_t local;       /* index inside the node (CUDA index / HiveD leaf address) */
    int32_t type;        /* GPU type id */
    int32_t owner;       /* job slot using it exclusively, or -1 */
    int16_t users;       /* number of jobs on it (>1 only when packed) */
    int16_t down;        /* 1 when failed */
    int32_t mem_used_mb; /* memory of the jobs sharing it beyond its owner (packing) */
} gs_gpu;

/* A virtual cluster as declared in a HiveD config (enforced by the hived policy). */
typedef struct gs_vc_cells {
    int32_t chain;     /* index of the chain's top cell type */
    int32_t cell_type; /* cell-type id of the requested cells */
    int32_t count;
} gs_vc_cells;

typedef struct gs_vc_def {
    const char *name;
    gs_vc_cells *cells;
    size_t ncells;
    const char **pinned; /* pinned cell ids */
    size_t npinned;
    int64_t gpus; /* total GPUs guaranteed (virtual + pinned) */
} gs_vc_def;

/* A cell type as declared in a HiveD config. */
typedef struct gs_cell_type {
    const char *name;
    int32_t child; /* child cell-type id, -1 for a leaf type */
    int32_t nchild;
    int32_t is_node;
    int32_t level; /* 1 for leaves */
    int32_t gpus;  /* leaves under one cell of this type */
} gs_cell_type;

typedef struct gs_cluster gs_cluster;

/* ---- building ---------------------------------------------------------- */

/* Start an empty cluster (only the root cell).  GS_ENOMEM on failure. */
int gs_cluster_create(gs_cluster **out);
void gs_cluster_destroy(gs_cluster *c);

/* Intern a GPU type name ("V100"); returns its id (>= 0) or GS_ENOMEM / GS_ERANGE (max 32). */
int gs_cluster_gpu_type(gs_cluster *c, const char *name);
/*
 * Add a cell under 'parent' (0 = root).  Cells must be added in depth-first
 * pre-order (a cell's whole subtree before its next sibling).  Returns the
 * new cell index or a negative error.  'name' is copied.
 */
int gs_cluster_add_cell(gs_cluster *c, int parent, gs_cell_kind kind, const char *name,
                        int cell_type);
/* Make a cell a node with the given CPU/memory capacity (0 = not modelled). */
int gs_cluster_set_node(gs_cluster *c, int cell, int cpus, int mem_mb);
/* Add a GPU leaf under 'parent' (a node or an intra-node cell). */
int gs_cluster_add_gpu(gs_cluster *c, int parent, int local_index, int gpu_type);
/*
 * Freeze the topology: compute ranges, nodes and aggregates, check that every
 * GPU sits under exactly one node and every node has at least one GPU.
 */
int gs_cluster_finish(gs_cluster *c, gs_diag *diag);

/* HiveD declarations (kept for the hived policy; see gsched/hived.h later). */
int gs_cluster_add_cell_type(gs_cluster *c, const char *name, int child, int nchild, int is_node);
int gs_cluster_add_vc(gs_cluster *c, const gs_vc_def *vc);
/* Record that 'cell' carries HiveD pinnedCellId 'id'. */
int gs_cluster_set_pinned(gs_cluster *c, int cell, const char *id);

/* Build the standard tree "racks x nodes x gpus" (racks may be 0 = no rack level). */
int gs_cluster_build_uniform(gs_cluster *c, int racks, int nodes_per_rack, int gpus_per_node,
                             const char *gpu_type, int cpus_per_node, int mem_mb_per_node);

/* ---- queries ----------------------------------------------------------- */

size_t gs_cluster_ncells(const gs_cluster *c);
size_t gs_cluster_nnodes(const gs_cluster *c);
size_t gs_cluster_ngpus(const gs_cluster *c);
size_t gs_cluster_ngpu_types(const gs_cluster *c);
const char *gs_cluster_gpu_type_name(const gs_cluster *c, int type);
int gs_cluster_find_gpu_type(const gs_cluster *c, const char *name); /* -1 if absent */

const gs_cell *gs_cluster_cell(const gs_cluster *c, int idx);
int gs_cluster_cell_kid(const gs_cluster *c, int cell, int i); /* i-th child index */
/* Nodes at or under 'cell' with exactly v free healthy GPUs (0 below node level). */
int gs_cluster_nodes_free_eq(const gs_cluster *c, int cell, int v);
const gs_node *gs_cluster_node(const gs_cluster *c, int idx);
const gs_gpu *gs_cluster_gpu(const gs_cluster *c, int idx);
/*
 * Nodes by name.  A machine whose GPUs belong to several HiveD chains (cell
 * types) is one node cell per chain, all with the machine's name; anything
 * addressed to a machine by name (node events, `--events`, scenario events)
 * applies to every node of that name:
 *
 *     for (int n = gs_cluster_find_node(c, nm); n >= 0; n = gs_cluster_find_node_next(c, nm, n))
 *
 * gs_cluster_find_node() returns the first node of that name (lowest index,
 * i.e. first in the config), -1 if none; gs_cluster_find_node_next() the next
 * one after node 'after' (-1 = from the start), -1 when there is no more.
 */
int gs_cluster_find_node(const gs_cluster *c, const char *name);
int gs_cluster_find_node_next(const gs_cluster *c, const char *name, int after);

/* Largest GPU count of any node (of type t; t < 0 = any type). */
int gs_cluster_max_node_gpus(const gs_cluster *c, int t);
/* Total GPUs of type t (t < 0 = all). */
int gs_cluster_type_gpus(const gs_cluster *c, int t);
/* GPUs currently allocated (owner >= 0 or users > 0). */
int gs_cluster_allocated(const gs_cluster *c);
/* Free healthy GPUs in the whole cluster. */
static inline int gs_cluster_free(const gs_cluster *c)
{
    return gs_cluster_cell(c, 0)->free;
}

/* Lowest common ancestor kind of a set of GPUs (GS_CELL_GPU for one GPU). */
gs_cell_kind gs_cluster_spread(const gs_cluster *c, const int *gpus, int n);
/* Number of distinct nodes among gpus[0..n). */
int gs_cluster_count_nodes(const gs_cluster *c, const int *gpus, int n);

/* HiveD declarations. */
size_t gs_cluster_ncell_types(const gs_cluster *c);
const gs_cell_type *gs_cluster_cell_type(const gs_cluster *c, int id);
int gs_cluster_find_cell_type(const gs_cluster *c, const char *name);
size_t gs_cluster_nvcs(const gs_cluster *c);
const gs_vc_def *gs_cluster_vc(const gs_cluster *c, int idx);
int gs_cluster_find_vc(const gs_cluster *c, const char *name);
/* Cell carrying pinnedCellId 'id', or -1. */
int gs_cluster_find_pinned(const gs_cluster *c, const char *id);
const char *gs_cluster_cell_pinned(const gs_cluster *c, int cell); /* NULL if not pinned */

/* ---- allocation state --------------------------------------------------- */

/*
 * Give GPUs exclusively to 'owner' (>= 0).  Every GPU must be free and
 * healthy, else nothing changes and GS_ECONFLICT is returned.  cpus/mem are
 * charged to each GPU's node per task: 'task_gpus' GPUs form one task.
 */
int gs_cluster_alloc(gs_cluster *c, const int *gpus, int n, int owner);
/* Return GPUs taken by gs_cluster_alloc(); GS_ECONFLICT if not owned by 'owner'. */
int gs_cluster_release(gs_cluster *c, const int *gpus, int n, int owner);
/* Charge / refund CPU and memory on a node (validated: GS_ENOFIT if short). */
int gs_cluster_node_charge(gs_cluster *c, int node, int cpus, int mem_mb);
void gs_cluster_node_refund(gs_cluster *c, int node, int cpus, int mem_mb);

/*
 * Packing (shared GPUs): add/remove a user with 'mem_mb' GPU memory on an
 * already allocated GPU.  Users beyond the owner do not change free counts.
 */
int gs_cluster_share(gs_cluster *c, int gpu, int mem_mb, int gpu_mem_mb);
void gs_cluster_unshare(gs_cluster *c, int gpu, int mem_mb);
/*
 * The owner 'from' of shared GPUs leaves: 'to' (a user sharing them, with
 * 'to_mem_mb' on each) becomes their owner.  GS_ECONFLICT unless every GPU is
 * owned by 'from' and shared.  Free counts do not change.
 */
int gs_cluster_handover(gs_cluster *c, const int *gpus, int n, int from, int to, int to_mem_mb);

/* Mark a node (all its GPUs) or one GPU down/up.  Owners are not changed. */
int gs_cluster_set_node_down(gs_cluster *c, int node, int down);
int gs_cluster_set_gpu_down(gs_cluster *c, int gpu, int down);

/*
 * Nodes whose free GPU count or down flag changed since the last gs_cluster_clear_changed()
 * (or since gs_cluster_finish()), each once, in the order of their first change: *nodes is
 * borrowed until the next allocation, health change or clear.  For a policy that keeps nodes
 * indexed by their free GPUs (gandiva): it re-reads only these instead of every node.
 */
size_t gs_cluster_changed_nodes(const gs_cluster *c, const int32_t **nodes);
void gs_cluster_clear_changed(gs_cluster *c);

/* Recount aggregates from scratch and compare; GS_EINTERNAL with a message on mismatch. */
int gs_cluster_check(const gs_cluster *c, gs_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
