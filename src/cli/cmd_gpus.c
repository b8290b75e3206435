/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_gpus.c - `gsched gpus`: this machine's GPUs as NVML reports them, with
 * their health readings (lost, uncorrected ECC, pages pending retirement, row
 * remapping, temperature, memory, utilisation), without a daemon; --json for
 * one JSON object.  NVML is loaded with dlopen (gsd_gpus_read, nvml.c).
 *
 * Invariants: exit 0 when NVML answered (whatever the GPUs' health: the
 * HEALTH column says it), 1 when NVML or GPUs are absent (the reason on
 * stderr), 2 on a usage error.  A GPU's verdict here is what one reading
 * shows (gsd_gpu_reading_bad); the daemon's watch adds history (an ECC count
 * that rose, an Xid's hold).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "client.h"
#include "daemon.h"

static void gpus_usage(FILE *f)
{
    fprintf(f,
            "usage: gsched gpus [--json] [-H]\n"
            "\n"
            "This machine's GPUs as NVML (libnvidia-ml.so.1) reports them, with their health\n"
            "readings: INDEX NAME HEALTH TEMP MEMORY UTIL ECC (volatile uncorrected errors)\n"
            "REASON.  No daemon is needed.  A GPU is unhealthy here when it is lost, has\n"
            "pages pending retirement, or its row remapping is pending or failed; `gsched\n"
            "serve` watches more (Xid errors, a rising ECC count: docs/daemon.md).\n"
            "\n"
            "  --json                one JSON object {\"gpus\": [...]} (null: NVML does not say)\n"
            "  -H, --no-headers      no header line\n"
            "  -h, --help            this help\n");
}

static json_t *num(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

int cmd_gpus(int argc, char **argv)
{
    static const struct option lo[] = {{"json", no_argument, NULL, 'j'},
                                       {"no-headers", no_argument, NULL, 'H'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    int json = 0, headers = 1, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "Hh", lo, NULL)) != -1) {
        switch (opt) {
        case 'j': json = 1; break;
        case 'H': headers = 0; break;
        case 'h': gpus_usage(stdout); return EXIT_OK;
        default: gpus_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_err("gpus: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    gsd_gpu_reading *v = NULL;
    size_t n = 0;
    char why[512] = "";
    int rc = gsd_gpus_read(&v, &n, why, sizeof why);
    if (rc) {
        cli_err("gpus: %s", why[0] ? why : gs_strerror(rc));
        return EXIT_RUNTIME;
    }
    if (why[0]) cli_err("gpus: %s", why); /* readings without the health functions */
    if (json) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            char r[512];
            int bad = gsd_gpu_reading_bad(&v[i], r, sizeof r);
            json_t *o = json_object();
            json_object_set_new(o, "index", json_integer(v[i].index));
            json_object_set_new(o, "name", json_string(v[i].name));
            json_object_set_new(o, "uuid", v[i].uuid[0] ? json_string(v[i].uuid) : json_null());
            json_object_set_new(o, "healthy", json_boolean(!bad));
            json_object_set_new(o, "reason", bad ? json_string(r) : json_null());
            json_object_set_new(o, "lost", json_boolean(v[i].lost));
            json_object_set_new(o, "xid_watch", json_boolean(v[i].xid_watch));
            json_object_set_new(o, "xid_last",
                                v[i].nxid ? json_integer(v[i].xid_last) : json_null());
            json_object_set_new(o, "ecc_uncorrected", num(v[i].ecc_uncorrected));
            json_object_set_new(o, "retired_pages_pending",
                                v[i].retire_pending < 0 ? json_null()
                                                        : json_boolean(v[i].retire_pending));
            json_object_set_new(o, "remap_pending",
                                v[i].remap_pending < 0 ? json_null()
                                                       : json_boolean(v[i].remap_pending));
            json_object_set_new(o, "remap_failure",
                                v[i].remap_failure < 0 ? json_null()
                                                       : json_boolean(v[i].remap_failure));
            json_object_set_new(o, "temperature_c", num(v[i].temp_c));
            json_object_set_new(o, "memory_used", num(v[i].mem_used));
            json_object_set_new(o, "memory_total", num(v[i].mem_total));
            json_object_set_new(o, "utilization", num(v[i].util));
            json_array_append_new(a, o);
        }
        json_t *top = json_pack("{s:o,s:s?}", "gpus", a, "note", why[0] ? why : NULL);
        char *s = json_dumps(top, JSON_INDENT(2));
        json_decref(top);
        if (s) printf("%s\n", s);
        free(s);
        free(v);
        return EXIT_OK;
    }
    cli_table t;
    cli_table_init(&t, 8, 1u << 0 | 1u << 3 | 1u << 5 | 1u << 6);
    const char *hdr[] = {"INDEX", "NAME", "HEALTH", "TEMP", "MEMORY", "UTIL", "ECC", "REASON"};
    cli_table_add(&t, hdr);
    for (size_t i = 0; i < n; i++) {
        char ix[16], temp[16] = "-", mem[48] = "-", util[16] = "-", ecc[32] = "-", r[512];
        int bad = gsd_gpu_reading_bad(&v[i], r, sizeof r);
        /* nothing watched (no health functions): no verdict */
        int known = bad || v[i].xid_watch || v[i].ecc_uncorrected >= 0 ||
                    v[i].retire_pending >= 0 || v[i].remap_pending >= 0;
        snprintf(ix, sizeof ix, "%d", v[i].index);
        if (v[i].temp_c >= 0) snprintf(temp, sizeof temp, "%dC", v[i].temp_c);
        if (v[i].mem_total >= 0)
            snprintf(mem, sizeof mem, "%lld/%lldMiB", (long long)(v[i].mem_used >> 20),
                     (long long)(v[i].mem_total >> 20));
        if (v[i].util >= 0) snprintf(util, sizeof util, "%d%%", v[i].util);
        if (v[i].ecc_uncorrected >= 0)
            snprintf(ecc, sizeof ecc, "%lld", (long long)v[i].ecc_uncorrected);
        const char *row[] = {ix,
                             v[i].name[0] ? v[i].name : "?",
                             bad     ? "UNHEALTHY"
                             : known ? "ok"
                                     : "n/a",
                             temp,
                             mem,
                             util,
                             ecc,
                             bad ? r : "-"};
        cli_table_add(&t, row);
    }
    cli_table_print(&t, headers);
    cli_table_release(&t);
    free(v);
    return EXIT_OK;
}
