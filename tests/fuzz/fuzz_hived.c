/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_hived.c - libFuzzer harness for HiveD scheduler configs (YAML:
 * physicalCluster + virtualClusters; src/config/cluster_load.c, yaml.c).
 *
 * A config that loads must give a consistent cluster (gs_cluster_check)
 * whose VCs only name cell types that exist; an error must carry a message.
 */
#include "config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "fuzz.yaml");
    int rc = gs_cluster_parse_hived("fuzz.yaml", (const char *)data, size, &c, &d);
    fuzz_check_diag(&d, rc);
    if (rc) {
        if (c) fuzz_die("cluster returned with an error");
        return 0;
    }
    if (!c || gs_cluster_ngpus(c) == 0) fuzz_die("loaded cluster without GPUs");
    if (gs_cluster_check(c, &d)) fuzz_die("gs_cluster_check: %s", d.msg);
    size_t nt = gs_cluster_ncell_types(c);
    for (size_t v = 0; v < gs_cluster_nvcs(c); v++) {
        const gs_vc_def *vc = gs_cluster_vc(c, (int)v);
        for (size_t k = 0; k < vc->ncells; k++)
            if (vc->cells[k].chain < 0 || (size_t)vc->cells[k].chain >= nt ||
                vc->cells[k].cell_type < 0 || (size_t)vc->cells[k].cell_type >= nt)
                fuzz_die("VC %zu names an unknown cell type", v);
    }
    gs_cluster_destroy(c);
    return 0;
}
