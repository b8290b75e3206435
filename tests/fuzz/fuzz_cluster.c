/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_cluster.c - libFuzzer harness for the cluster shorthand ("2x16x8:V100",
 * "9x4:V100,36/4:K80"), the Tiresias cluster spec CSV and Gavel's
 * cluster_specs.json (src/config/cluster_load.c).
 *
 * The first byte picks the reader (even: shorthand; odd: Tiresias CSV, or
 * Gavel's JSON when bit 1 is set too); the rest is the spec.  A cluster that loads must pass
 * gs_cluster_check() and have GPUs; an error must carry a message.
 */
#include "config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int mode = data[0] & 1 ? 1 + ((data[0] >> 1) & 1) : 0;
    data++, size--;
    gs_cluster *c = NULL;
    gs_diag d;
    gs_diag_init(&d, "fuzz");
    int rc;
    if (mode == 0) {
        if (size > 256) return 0; /* a command-line argument */
        char *s = fuzz_strndup(data, size);
        /* up to 4M GPUs are allowed and work, but take seconds under ASan: keep runs fast */
        double gpus = 1;
        for (char *p = s; *p; p++)
            if (*p >= '1' && *p <= '9' && (p == s || p[-1] < '0' || p[-1] > '9'))
                gpus *= strtod(p, NULL);
        if (gpus > 65536) {
            free(s);
            return 0;
        }
        rc = gs_cluster_parse_shorthand(s, &c, &d);
        free(s);
    } else if (mode == 1) {
        rc = gs_cluster_parse_tiresias("fuzz.csv", (const char *)data, size, &c, &d);
    } else {
        /* {"x": ["4000000:0:0"]} is a valid 4M-GPU cluster: keep runs fast (< 10,000 per type) */
        char *s = fuzz_strndup(data, size);
        int run = 0, big = 0;
        for (char *p = s; *p; p++) {
            run = *p >= '0' && *p <= '9' ? run + 1 : 0;
            big |= run > 4;
        }
        free(s);
        if (big) return 0;
        rc = gs_cluster_parse_gavel("fuzz.json", (const char *)data, size, NULL, &c, &d);
    }
    fuzz_check_diag(&d, rc);
    if (rc) {
        if (c) fuzz_die("cluster returned with an error");
        return 0;
    }
    if (!c || gs_cluster_ngpus(c) == 0) fuzz_die("loaded cluster without GPUs");
    if (gs_cluster_check(c, &d)) fuzz_die("gs_cluster_check: %s", d.msg);
    gs_cluster_destroy(c);
    return 0;
}
