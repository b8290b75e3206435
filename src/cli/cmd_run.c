/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_run.c - `gsched run [options] -- CMD [ARG...]` (like srun): submit one interactive job
 * (spec 'interactive: true', the submit options of cmd_submit.c), wait for it to start
 * (saying why it waits, once per reason), pass this terminal's stdin to its task and its
 * output back, and exit with its exit code.
 *
 * How.  The job's end is learnt by polling it (GET /v1/jobs/ID, every 100 ms while
 * nothing else happens).  Its output is its task 0's log read by offset (GET
 * /v1/jobs/ID/logs?task=0&offset=N), written to stdout as it comes (stdout and stderr of the
 * task are one stream: they are one log), less the lines the daemon writes there itself
 * ("=== gsched: ... ===", even after output that did not end its line: a job's output
 * that holds this text loses that line).  stdin goes in POST /v1/jobs/ID/stdin requests (base64, at
 * most 48 KiB each; what the task did not take yet is sent again), read only once the job runs; its
 * end is sent as eof.  The client renews its lease (POST /v1/jobs/ID/lease) every third of it: a
 * client that dies (kill -9, a lost connection) leaves a job the daemon cancels when the lease runs
 * out.  SIGINT, SIGTERM or SIGHUP cancel the job (the normal stop protocol) and the client waits
 * for its end; a second one leaves at once.
 *
 * Exit codes: the task's (128+N for a signal N), 1 when it was cancelled, ran out of time or
 * could not start (with a message), the usual ones (cli.h) when the submit fails.
 *
 * Invariants: one job per invocation; nothing global besides the signal flag.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"

#define RUN_IN_MAX (48 * 1024) /* stdin bytes per request (the daemon takes 64 KiB) */

static volatile sig_atomic_t g_run_sig;

static void run_on_sig(int s)
{
    g_run_sig = s;
}

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: gsched run [options] -- CMD [ARG...]\n"
            "\n"
            "Run one command as an interactive job (like srun): it waits for its GPUs, runs\n"
            "with this terminal's stdin, its output comes here, and gsched run exits with its\n"
            "exit code.  The job ends when CMD exits, or when gsched run goes away: Ctrl-C\n"
            "(SIGINT, SIGTERM, SIGHUP) cancels it (SIGTERM, grace period, SIGKILL; a second\n"
            "Ctrl-C leaves at once), and a client that dies without a word (kill -9, lost\n"
            "connection) stops renewing its lease: the daemon cancels the job when it runs out.\n"
            "\n"
            "Options: those of 'gsched submit' (-G/--gpus, -n, -g, -t, -p/--vc, -q, -J/--name,\n"
            "-C, --env, --export, -D, ...; see gsched submit --help) except a spec FILE, a\n"
            "SCRIPT, -a/--array, -o/-e, --dry-run and elastic ranges, and:\n"
            "  -Q, --quiet         no 'waiting for resources' lines\n"
            "      --lease SECS    the daemon cancels the job SECS seconds after the last sign\n"
            "                      of this client (default 30; 1..3600)\n"
            "  -h, --help          this text\n"
            "\n"
            "Limits: one task; no terminal (no pty: CMD's stdin is a pipe, isatty() is false);\n"
            "CMD's stdout and stderr both come to stdout, in order; the local executor only.\n"
            "Exit codes: CMD's (128+N after signal N); 1 when the job was cancelled, ran out\n"
            "of time or could not start; 2 usage; 3 daemon unreachable.\n");
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The task's log, less the daemon's own lines ("=== gsched: ... ===\n": the start of each
 * run, and the shim's last line, which follows output that did not end a line). */
typedef struct outflt {
    char carry[16];
    size_t ncarry;
    int skipping;
} outflt;

static const char run_pfx[] = "=== gsched: ";

static void out_bytes(outflt *f, const char *p, size_t n)
{
    size_t lp = sizeof run_pfx - 1;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (f->skipping) {
            if (c == '\n') f->skipping = 0;
            continue;
        }
        if (f->ncarry || c == run_pfx[0]) {
            f->carry[f->ncarry++] = c;
            if (memcmp(f->carry, run_pfx, f->ncarry)) {
                fwrite(f->carry, 1, f->ncarry, stdout);
                f->ncarry = 0;
            } else if (f->ncarry == lp) {
                f->skipping = 1;
                f->ncarry = 0;
            }
            continue;
        }
        fputc(c, stdout);
    }
    fflush(stdout);
}

/* The end: what was held back as a possible start of a daemon line was output. */
static void out_end(outflt *f)
{
    fwrite(f->carry, 1, f->ncarry, stdout);
    f->ncarry = 0;
    fflush(stdout);
}

/* Read task 0's log from *off to its current end: 0 once a read answered no more bytes; -1
 * when the daemon is unreachable; -2 when it answered something else than the log (busy,
 * rate-limited: 503, 429 ...; not yet the end: try again). */
static int pump_log(cli_conn *k, long long id, long long *off, outflt *f)
{
    for (int i = 0; i < 1000; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/jobs/%lld/logs?task=0&offset=%lld", id, *off);
        gsd_resp r;
        if (gsd_request(&k->c, "GET", path, NULL, 0, NULL, NULL, &r)) {
            gsd_resp_release(&r);
            return -1;
        }
        if (r.status != 200) {
            gsd_resp_release(&r);
            return -2;
        }
        size_t got = r.len;
        if (got) out_bytes(f, r.body, got);
        *off += (long long)got;
        gsd_resp_release(&r);
        if (!got) return 0;
    }
    return 0;
}

static void b64(const unsigned char *p, size_t n, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = '\0';
}

/* POST stdin bytes (and eof); the bytes taken (>= 0), -1 when its stdin is gone (409: stop
 * sending), -2 on another failure (try again). */
static long send_stdin(cli_conn *k, long long id, const unsigned char *p, size_t n, int eof)
{
    static char enc[RUN_IN_MAX / 3 * 4 + 8], body[RUN_IN_MAX / 3 * 4 + 64];
    b64(p, n, enc);
    snprintf(body, sizeof body, "{\"data_b64\":\"%s\",\"eof\":%s}", enc, eof ? "true" : "false");
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld/stdin", id);
    json_t *r = NULL;
    k->quiet = 1;
    int rc = cli_call(k, "POST", path, body, "application/json", NULL, "stdin", &r);
    k->quiet = 0;
    if (rc) return k->status == 409 || k->status == 404 ? -1 : -2;
    long w = (long)cli_jint(r, "written", 0);
    json_decref(r);
    return w;
}

static int renew_lease(cli_conn *k, long long id, long lease)
{
    char path[96], body[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/lease", id);
    snprintf(body, sizeof body, "{\"seconds\":%ld}", lease);
    k->quiet = 1;
    int rc = cli_call(k, "POST", path, body, "application/json", NULL, "lease", NULL);
    k->quiet = 0;
    return rc;
}

static int cancel_job(cli_conn *k, long long id)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    k->quiet = 1;
    int rc = cli_call(k, "DELETE", path, NULL, NULL, NULL, "cancel", NULL);
    k->quiet = 0;
    return rc;
}

int cmd_run(int argc, char **argv)
{
    char **av = calloc((size_t)argc + 1, sizeof *av);
    if (!av) abort();
    int ac = 0, quiet = 0, i;
    long lease = 30;
    av[ac++] = argv[0];
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            free(av);
            return EXIT_OK;
        }
        if (!strcmp(a, "-Q") || !strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (!strcmp(a, "--lease") || !strncmp(a, "--lease=", 8)) {
            const char *v = a[7] == '=' ? a + 8 : i + 1 < argc ? argv[++i] : NULL;
            char *end;
            lease = v ? strtol(v, &end, 10) : 0;
            if (!v || !*v || *end || lease < 1 || lease > 3600) {
                cli_err("run: --lease takes seconds, 1 to 3600");
                free(av);
                return EXIT_USAGE;
            }
            continue;
        }
        av[ac++] = argv[i];
    }
    if (i == argc) {
        cli_err("run needs a command: gsched run [options] -- CMD [ARG...]");
        run_usage(stderr);
        free(av);
        return EXIT_USAGE;
    }
    for (; i < argc; i++) av[ac++] = argv[i];
    cli_conn k;
    cli_conn_init(&k);
    int64_t id;
    int rc = cli_submit_interactive(ac, av, &k, &id);
    free(av);
    if (rc) return rc;
    if (id < 0) {
        cli_err("run: the daemon answered the submit without a job id");
        return EXIT_RUNTIME;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = run_on_sig; /* no SA_RESTART: a signal ends the wait at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    renew_lease(&k, id, lease);
    long long last_lease = mono_ms(), last_ok = mono_ms();
    long long off = 0;
    outflt flt = {.ncarry = 0};
    int cancelled = 0, in_open = 1, in_eof = 0;
    unsigned char *in = malloc(RUN_IN_MAX);
    if (!in) abort();
    size_t nin = 0;
    char reason[512] = "";
    rc = EXIT_RUNTIME;
    for (;;) {
        if (g_run_sig) {
            int s = g_run_sig;
            g_run_sig = 0;
            if (cancelled) {
                cli_err("job %lld: not waiting for its end (it is being cancelled)", (long long)id);
                break;
            }
            cancelled = 1;
            if (!quiet)
                cli_err("job %lld: cancelling it (%s)", (long long)id,
                        s == SIGINT    ? "interrupted"
                        : s == SIGTERM ? "terminated"
                                       : "hangup");
            cancel_job(&k, id);
        }
        long long now = mono_ms();
        if (now - last_lease >= lease * 1000 / 3) {
            renew_lease(&k, id, lease);
            last_lease = now;
        }
        char path[96];
        snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
        json_t *j = NULL;
        k.quiet = 1;
        int grc = cli_call(&k, "GET", path, NULL, NULL, NULL, "job", &j);
        k.quiet = 0;
        if (grc) {
            if (k.status == 404 || now - last_ok > 60000) {
                cli_call_report(&k);
                rc = grc;
                break;
            }
            usleep(500000);
            continue;
        }
        last_ok = now;
        const char *st = cli_jstr(j, "state", "");
        int final = !strcmp(st, "DONE") || !strcmp(st, "FAILED") || !strcmp(st, "CANCELLED") ||
                    !strcmp(st, "REJECTED");
        if (strcmp(st, "PENDING") && pump_log(&k, id, &off, &flt) == 0) last_ok = now;
        if (final) {
            /* the job has ended, so its log is complete: read it to its end, past a busy
             * daemon's refusals (a 503 or 429 is no end of the output) */
            for (int t = 0; t < 100 && pump_log(&k, id, &off, &flt) == -2; t++) usleep(100000);
            out_end(&flt);
            json_t *ec = json_object_get(j, "exit_code");
            const char *why = cli_jstr(j, "reason", "");
            if (!strcmp(st, "DONE")) {
                rc = EXIT_OK;
            } else if (!strcmp(st, "FAILED") && json_is_integer(ec) && json_integer_value(ec) > 0 &&
                       !strstr(why, "launch") && !strstr(why, "time limit")) {
                rc = (int)json_integer_value(ec);
            } else {
                cli_err("job %lld %s%s%s", (long long)id, st, *why ? ": " : "", why);
                rc = EXIT_RUNTIME;
            }
            json_decref(j);
            break;
        }
        if (!strcmp(st, "PENDING")) {
            const char *why = cli_jstr(j, "reason", "");
            if (!quiet && !cancelled && strcmp(why, reason)) {
                fprintf(stderr, "gsched: job %lld waiting for resources: %s\n", (long long)id,
                        *why ? why : "queued");
                snprintf(reason, sizeof reason, "%s", why);
            }
        }
        int running = !strcmp(st, "RUNNING");
        json_decref(j);
        /* stdin, once it runs: read what is there, send it; wait up to 100 ms for more */
        int waited = 0;
        if (running && in_open && !cancelled) {
            if (!nin && !in_eof) {
                struct pollfd p = {.fd = 0, .events = POLLIN};
                waited = 1;
                if (poll(&p, 1, 100) > 0) {
                    ssize_t n = read(0, in, RUN_IN_MAX);
                    if (n > 0)
                        nin = (size_t)n;
                    else if (n == 0 || errno != EINTR)
                        in_eof = 1;
                }
            }
            if (nin || in_eof) {
                long w = send_stdin(&k, id, in, nin, in_eof);
                if (w == -1) {
                    in_open = 0; /* closed: the task reads no more */
                } else if (w >= 0) {
                    memmove(in, in + w, nin - (size_t)w);
                    nin -= (size_t)w;
                    if (!nin && in_eof) in_open = 0;
                    last_lease = mono_ms(); /* a stdin write renews the lease */
                }
                if (w < 0 || nin) usleep(50000), waited = 1; /* full: the task reads slowly */
            }
        }
        if (!waited) usleep(100000);
    }
    free(in);
    return rc;
}
