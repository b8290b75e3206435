/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_vcgen.c - `gsched vcgen`: write a HiveD config whose virtual clusters
 * are the VCs of a trace, sized by demand or from a "vc,nodes" CSV.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "vcgen.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gsched vcgen --trace FILE (--nodes N | --vc-nodes CSV) [options] > hived.yaml\n"
            "\n"
            "  --trace FILE          trace whose VCs become virtual clusters (its 'vc' /\n"
            "                        Philly 'cluster' column)\n"
            "  --nodes N             share N nodes in proportion to each VC's GPU-seconds\n"
            "  --vc-nodes CSV        take VC sizes from a 'vc,nodes' CSV instead\n"
            "  --gpus-per-node G     default 8\n"
            "  --nodes-per-rack R    default 32\n"
            "  --gpu-type NAME       default GPU\n"
            "  --trace-out FILE      also write the trace as gsched CSV with node-affinity\n"
            "                        tasks (a job of g 1-GPU tasks becomes the fewest equal\n"
            "                        tasks of at most G GPUs, each on one node)\n"
            "Every VC gets at least the nodes its largest job needs.\n");
}

int cmd_vcgen(int argc, char **argv)
{
    static const struct option lo[] = {{"trace", required_argument, NULL, 't'},
                                       {"nodes", required_argument, NULL, 'n'},
                                       {"vc-nodes", required_argument, NULL, 'v'},
                                       {"gpus-per-node", required_argument, NULL, 'g'},
                                       {"nodes-per-rack", required_argument, NULL, 'r'},
                                       {"gpu-type", required_argument, NULL, 'T'},
                                       {"trace-out", required_argument, NULL, 'o'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    gs_vcgen_opts o = {0, 8, 32, NULL, NULL, 0};
    const char *trace = NULL, *vcn = NULL, *tout = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        char *end;
        long v;
        switch (opt) {
        case 't': trace = optarg; break;
        case 'v': vcn = optarg; break;
        case 'T': o.gpu_type = optarg; break;
        case 'o': tout = optarg; break;
        case 'n':
        case 'g':
        case 'r':
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || *end || v < 1 || v > 1000000) {
                cli_err("--%s: expected a positive integer, got '%s'",
                        opt == 'n'   ? "nodes"
                        : opt == 'g' ? "gpus-per-node"
                                     : "nodes-per-rack",
                        optarg);
                return EXIT_USAGE;
            }
            if (opt == 'n') o.nodes = (int)v;
            if (opt == 'g') o.gpus_per_node = (int)v;
            if (opt == 'r') o.nodes_per_rack = (int)v;
            break;
        case 'h': usage(stdout); return EXIT_OK;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (!trace || (!o.nodes && !vcn)) {
        cli_err("vcgen needs --trace and --nodes or --vc-nodes");
        usage(stderr);
        return EXIT_USAGE;
    }
    gs_diag d;
    gs_diag_init(&d, trace);
    gs_trace t;
    if (gs_trace_load(trace, &t, &d)) {
        cli_diag(&d);
        return EXIT_USAGE;
    }
    gs_vc_nodes *vn = NULL;
    char *buf = NULL;
    int rc = EXIT_OK;
    if (vcn) {
        size_t len;
        gs_diag_init(&d, vcn);
        if (gs_read_file(vcn, &buf, &len, &d)) {
            cli_diag(&d);
            gs_trace_release(&t);
            return EXIT_USAGE;
        }
        gs_csv r;
        gs_csv_init(&r, buf, len, 1);
        size_t cap = 0;
        int first = 1, k;
        while ((k = gs_csv_next(&r, &d)) > 0) {
            if (r.nf < 2) {
                gs_diag_set(&d, GS_EPARSE, r.rec_line, 1, "expected 'vc,nodes'");
                k = -1;
                break;
            }
            char *end;
            long nodes = strtol(r.f[1], &end, 10);
            if (first && (end == r.f[1] || *end)) { /* header */
                first = 0;
                continue;
            }
            first = 0;
            if (end == r.f[1] || *end || nodes < 1) {
                gs_diag_set(&d, GS_EPARSE, r.rec_line, r.col[1],
                            "nodes: '%s' is not a positive integer", r.f[1]);
                k = -1;
                break;
            }
            gs_vc_nodes *nv = realloc(vn, (cap + 1) * sizeof *nv);
            char *name = strdup(r.f[0]);
            if (!nv || !name) abort();
            vn = nv;
            vn[cap++] = (gs_vc_nodes){name, (int)nodes};
        }
        gs_csv_release(&r);
        if (k < 0) {
            cli_diag(&d);
            rc = EXIT_USAGE;
            goto out;
        }
        o.vc_nodes = vn;
        o.nvc_nodes = cap;
    }
    gs_diag_init(&d, NULL);
    if (gs_vcgen(&t, &o, stdout, &d)) {
        cli_diag(&d);
        rc = EXIT_USAGE;
        goto out;
    }
    if (tout) {
        FILE *f = fopen(tout, "w");
        if (!f) {
            cli_err("%s: %s", tout, strerror(errno));
            rc = EXIT_USAGE;
            goto out;
        }
        gs_diag_init(&d, tout);
        int wr = gs_vcgen_write_trace(&t, o.gpus_per_node, f, &d);
        if (fclose(f) && !wr) wr = gs_diag_set(&d, GS_EIO, 0, 0, "cannot write the trace");
        if (wr) {
            cli_diag(&d);
            rc = EXIT_RUNTIME;
        }
    }
out:
    for (size_t i = 0; i < o.nvc_nodes; i++) free((char *)vn[i].vc);
    free(vn);
    free(buf);
    gs_trace_release(&t);
    return rc;
}
