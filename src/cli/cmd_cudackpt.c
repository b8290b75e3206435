/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_cudackpt.c - `gsched cuda-ckpt state|suspend|resume PID...`: the CUDA driver's process
 * checkpoint API (src/daemon/cudackpt.c) applied by hand to processes of this machine, without
 * the daemon: the operator's tool, and how the GPU tests measure checkpoint and restore times.
 * suspend = lock + checkpoint every PID (all or nothing), resume = restore (optionally onto other
 * GPUs) + unlock; each prints the time it took (and its phases) and every PID's state after.
 *
 * Invariants: input is checked completely before the driver is touched (bad input: exit 2);
 * a PID that is not a CUDA process stops suspend/resume before any driver call (exit 4); a
 * failed operation prints the driver's message (step, pid, error) on stderr and the states
 * the processes were left in on stdout (exit 1).  Data to stdout, diagnostics to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "daemon.h"

#define MAX_PIDS  4096
#define MAX_REMAP 64

static void ckpt_usage(FILE *f)
{
    fprintf(
        f,
        "usage: gsched cuda-ckpt state|suspend|resume PID... [--timeout MS]\n"
        "                        [--remap OLD:NEW,...] [--lib PATH] [--json]\n"
        "\n"
        "The CUDA driver's process checkpoint API (libcuda.so.1 with cuCheckpointProcess*)\n"
        "on processes of this machine, without the daemon.  Needs the rights over the\n"
        "processes (root, or their user).\n"
        "\n"
        "  state     each PID's CUDA state: running, locked, checkpointed, failed (none: not a\n"
        "            CUDA process, or gone)\n"
        "  suspend   lock every PID (its CUDA calls then block), then checkpoint every PID: its\n"
        "            GPU memory goes to host memory and its GPUs' memory is freed.  All or\n"
        "            nothing: after a failure what was done is undone.  The processes are not\n"
        "            stopped (the daemon's executor adds SIGSTOP)\n"
        "  resume    restore every PID (onto other GPUs with --remap), then unlock them\n"
        "\n"
        "      --timeout MS         suspend: how long a lock waits for the process's CUDA work\n"
        "                           (default 30000; 0 = as long as it takes)\n"
        "      --remap OLD:NEW,...  resume onto other GPUs of this machine: local GPU indices\n"
        "                           in PCI bus order (nvidia-smi's), covering every GPU the\n"
        "                           processes used (OLD:OLD keeps one); CUDA driver 12.9+\n"
        "      --lib PATH           the CUDA driver library (default libcuda.so.1)\n"
        "      --json               one JSON object: op, ok, ms and its phases, pids' states\n"
        "\n"
        "Prints the time the operation took in ms (suspend: lock and checkpoint phases;\n"
        "resume: restore and unlock), then PID STATE lines.\n"
        "Exit codes: 0 ok; 1 the operation failed (stderr names step, pid and the driver's\n"
        "error; the states are printed), or no CUDA driver with the checkpoint API; 2 bad\n"
        "input; 4 a PID is not a CUDA process (nothing done).\n");
}

/* A non-negative decimal integer <= max, the whole string; -1 otherwise. */
static long long parse_uint(const char *s, long long max)
{
    if (!s || *s < '0' || *s > '9') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > (unsigned long long)max) return -1;
    return (long long)v;
}

static int parse_remap(const char *s, int *from, int *to, size_t *n)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) {
        cli_err("cuda-ckpt: --remap is too long");
        return -1;
    }
    *n = 0;
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        long long a = -1, b = -1;
        if (colon) {
            *colon = '\0';
            a = parse_uint(item, MAX_REMAP - 1);
            b = parse_uint(colon + 1, MAX_REMAP - 1);
        }
        if (a < 0 || b < 0) {
            cli_err("cuda-ckpt: --remap '%s': expected OLD:NEW,... (GPU indices 0-%d)", s,
                    MAX_REMAP - 1);
            return -1;
        }
        for (size_t i = 0; i < *n; i++)
            if (from[i] == a || to[i] == b) {
                cli_err("cuda-ckpt: --remap '%s': GPU %lld named twice on one side", s,
                        from[i] == a ? a : b);
                return -1;
            }
        if (*n == MAX_REMAP) {
            cli_err("cuda-ckpt: --remap '%s': more than %d pairs", s, MAX_REMAP);
            return -1;
        }
        from[*n] = (int)a;
        to[*n] = (int)b;
        (*n)++;
    }
    if (!*n) {
        cli_err("cuda-ckpt: --remap '%s': expected OLD:NEW,...", s);
        return -1;
    }
    return 0;
}

static double ms(int64_t usec)
{
    return (double)usec / 1000.0;
}

/* Every pid's state now: a JSON array, or PID STATE lines. */
static json_t *states(gsd_cuda *c, const int *pids, size_t n, int json)
{
    json_t *a = json ? json_array() : NULL;
    if (!json) printf("%-10s %s\n", "PID", "STATE");
    for (size_t i = 0; i < n; i++) {
        int st = gsd_cuda_state(c, pids[i]);
        const char *name = gsd_cuda_state_name(st);
        char other[32];
        if (!strcmp(name, "unknown")) {
            snprintf(other, sizeof other, "state-%d", st);
            name = other;
        }
        if (a)
            json_array_append_new(a, json_pack("{s:i,s:s}", "pid", pids[i], "state", name));
        else
            printf("%-10d %s\n", pids[i], name);
    }
    return a;
}

static void print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    if (s) puts(s);
    free(s);
    json_decref(o);
}

int cmd_cudackpt(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"timeout", required_argument, NULL, 't'}, {"remap", required_argument, NULL, 'r'},
        {"lib", required_argument, NULL, 'l'},     {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    long long timeout = 30000;
    int have_timeout = 0, json = 0;
    const char *remap = NULL, *lib = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            timeout = parse_uint(optarg, UINT_MAX);
            if (timeout < 0) {
                cli_err("cuda-ckpt: --timeout '%s': expected milliseconds (0 = no timeout)",
                        optarg);
                return EXIT_USAGE;
            }
            have_timeout = 1;
            break;
        case 'r': remap = optarg; break;
        case 'l': lib = optarg; break;
        case 'j': json = 1; break;
        case 'h': ckpt_usage(stdout); return EXIT_OK;
        default: ckpt_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        cli_err("cuda-ckpt: which operation? state, suspend or resume "
                "(gsched cuda-ckpt --help)");
        return EXIT_USAGE;
    }
    const char *op = argv[optind++];
    if (strcmp(op, "state") && strcmp(op, "suspend") && strcmp(op, "resume")) {
        cli_err("cuda-ckpt: unknown operation '%s' (state, suspend or resume)", op);
        return EXIT_USAGE;
    }
    if (have_timeout && strcmp(op, "suspend")) {
        cli_err("cuda-ckpt: --timeout is for suspend (the lock's timeout)");
        return EXIT_USAGE;
    }
    if (remap && strcmp(op, "resume")) {
        cli_err("cuda-ckpt: --remap is for resume");
        return EXIT_USAGE;
    }
    int from[MAX_REMAP], to[MAX_REMAP];
    size_t nremap = 0;
    if (remap && parse_remap(remap, from, to, &nremap)) return EXIT_USAGE;
    size_t n = (size_t)(argc - optind);
    if (!n) {
        cli_err("cuda-ckpt %s: no PID given", op);
        return EXIT_USAGE;
    }
    if (n > MAX_PIDS) {
        cli_err("cuda-ckpt %s: more than %d PIDs", op, MAX_PIDS);
        return EXIT_USAGE;
    }
    int *pids = malloc(n * sizeof *pids);
    if (!pids) {
        cli_err("cuda-ckpt: out of memory");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n; i++) {
        long long v = parse_uint(argv[optind + (int)i], INT_MAX);
        if (v <= 0) {
            cli_err("cuda-ckpt %s: '%s' is not a process id", op, argv[optind + (int)i]);
            free(pids);
            return EXIT_USAGE;
        }
        pids[i] = (int)v;
        for (size_t j = 0; j < i; j++)
            if (pids[j] == pids[i]) {
                cli_err("cuda-ckpt %s: pid %d named twice", op, pids[i]);
                free(pids);
                return EXIT_USAGE;
            }
    }

    /* GPU indices of --remap are this machine's: no CUDA_VISIBLE_DEVICES of the caller's
     * shell may hide or renumber GPUs in the list the driver gives. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    gsd_cuda *c = NULL;
    char why[512];
    int rc = gsd_cuda_open(lib, &c, why, sizeof why);
    if (rc) {
        cli_err("cuda-ckpt: %s", why);
        free(pids);
        return EXIT_RUNTIME;
    }
    int version = gsd_cuda_version(c);
    if (!strcmp(op, "state")) {
        int missing = 0;
        for (size_t i = 0; i < n; i++) missing |= gsd_cuda_state(c, pids[i]) == GSD_CUDA_NONE;
        json_t *st = states(c, pids, n, json);
        if (json)
            print_json(json_pack("{s:s,s:b,s:i,s:o}", "op", "state", "ok", !missing,
                                 "driver_version", version, "pids", st));
        gsd_cuda_close(c);
        free(pids);
        return missing ? EXIT_NOTFOUND : EXIT_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (gsd_cuda_state(c, pids[i]) == GSD_CUDA_NONE) {
            cli_err("cuda-ckpt %s: pid %d is not a CUDA process (or gone, or not yours): "
                    "nothing done",
                    op, pids[i]);
            gsd_cuda_close(c);
            free(pids);
            return EXIT_NOTFOUND;
        }

    gsd_cuda_result r;
    int suspend = !strcmp(op, "suspend");
    if (suspend)
        rc = gsd_cuda_suspend(c, pids, n, (unsigned)timeout, &r);
    else
        rc = gsd_cuda_resume(c, pids, n, from, to, nremap, &r);
    int code = EXIT_OK;
    if (rc == GS_ERANGE || rc == GS_EINVAL) {
        cli_err("cuda-ckpt %s: %s", op, r.msg); /* nothing was done */
        gsd_cuda_close(c);
        free(pids);
        return EXIT_USAGE;
    }
    if (rc) {
        cli_err("cuda-ckpt %s: %s%s", op, r.msg[0] ? r.msg : gs_strerror(rc),
                suspend && rc == GS_EIO ? " (rolled back)" : "");
        code = EXIT_RUNTIME;
    }
    const char *p0 = suspend ? "lock" : "restore", *p1 = suspend ? "checkpoint" : "unlock";
    if (json) {
        json_t *o = json_pack("{s:s,s:b,s:i,s:f,s:i}", "op", op, "ok", rc == 0, "driver_version",
                              version, "ms", ms(r.usec), "processes", r.nproc);
        char k0[32], k1[32];
        snprintf(k0, sizeof k0, "%s_ms", p0);
        snprintf(k1, sizeof k1, "%s_ms", p1);
        json_object_set_new(o, k0, json_real(ms(r.phase_usec[0])));
        json_object_set_new(o, k1, json_real(ms(r.phase_usec[1])));
        if (nremap) {
            json_t *m = json_array();
            for (size_t i = 0; i < nremap; i++)
                json_array_append_new(m, json_pack("[i,i]", from[i], to[i]));
            json_object_set_new(o, "remap", m);
        }
        if (rc) {
            json_object_set_new(o, "error", json_string(r.msg[0] ? r.msg : gs_strerror(rc)));
            if (r.failed_pid) json_object_set_new(o, "failed_pid", json_integer(r.failed_pid));
        }
        json_object_set_new(o, "pids", states(c, pids, n, 1));
        print_json(o);
    } else {
        if (rc == 0) {
            printf("%s %d CUDA process%s in %.1f ms (%s %.1f ms, %s %.1f ms)",
                   suspend ? "suspended" : "resumed", r.nproc, r.nproc == 1 ? "" : "es", ms(r.usec),
                   p0, ms(r.phase_usec[0]), p1, ms(r.phase_usec[1]));
            if (nremap) {
                printf(" onto GPUs");
                for (size_t i = 0; i < nremap; i++)
                    printf("%s%d->%d", i ? "," : " ", from[i], to[i]);
            }
            printf("\n");
        } else {
            printf("%s failed after %.1f ms\n", op, ms(r.usec));
        }
        states(c, pids, n, 0);
    }
    gsd_cuda_close(c);
    free(pids);
    return code;
}
