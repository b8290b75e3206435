/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_common_cluster.h - the fixed clusters the engine-level harnesses use:
 * a 2 racks x 2 nodes x 4 GPU shorthand cluster and a small HiveD config
 * (three 4-GPU K80 nodes and one 8-GPU V100 node; VC1, VC2 with a pinned
 * node, and VC3 on the V100 chain).
 */
#ifndef GSCHED_FUZZ_COMMON_CLUSTER_H
#define GSCHED_FUZZ_COMMON_CLUSTER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const char fuzz_hived_yaml[] =
    "physicalCluster:\n"
    "  skuTypes:\n"
    "    K80: {gpu: 1, cpu: 5, memory: 54Gi}\n"
    "    V100: {gpu: 1, cpu: 8, memory: 64Gi}\n"
    "  cellTypes:\n"
    "    K80-2GPU: {childCellType: K80, childCellNumber: 2}\n"
    "    K80-NODE: {childCellType: K80-2GPU, childCellNumber: 2, isNodeLevel: true}\n"
    "    3-K80-NODE: {childCellType: K80-NODE, childCellNumber: 3}\n"
    "    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}\n"
    "  physicalCells:\n"
    "  - cellType: 3-K80-NODE\n"
    "    cellChildren:\n"
    "    - cellAddress: node1\n"
    "    - cellAddress: node2\n"
    "      pinnedCellId: VC2-K80\n"
    "    - cellAddress: node3\n"
    "  - cellType: V100-NODE\n"
    "    cellAddress: node4\n"
    "virtualClusters:\n"
    "  VC1:\n"
    "    virtualCells:\n"
    "    - {cellType: 3-K80-NODE.K80-NODE, cellNumber: 1}\n"
    "  VC2:\n"
    "    virtualCells:\n"
    "    - {cellType: 3-K80-NODE.K80-NODE.K80-2GPU, cellNumber: 1}\n"
    "    pinnedCells:\n"
    "    - pinnedCellId: VC2-K80\n"
    "  VC3:\n"
    "    virtualCells:\n"
    "    - {cellType: V100-NODE, cellNumber: 1}\n";

/* hived=1: the HiveD config, else "2x2x4:V100".  Aborts if the fixture is broken. */
static inline gs_cluster *fuzz_cluster(int hived)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "fixture");
    int rc = hived ? gs_cluster_parse_hived("fixture.yaml", fuzz_hived_yaml,
                                            strlen(fuzz_hived_yaml), &c, &d)
                   : gs_cluster_parse_shorthand("2x2x4:V100", &c, &d);
    if (rc) {
        fprintf(stderr, "fixture cluster: %d:%d: %s\n", d.line, d.col, d.msg);
        abort();
    }
    return c;
}

#endif
