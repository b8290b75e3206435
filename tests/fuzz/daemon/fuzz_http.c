/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_http.c - libFuzzer harness for the daemon's HTTP request handling:
 * a real `gsched serve` (gsd_serve() on a thread of this process, loopback,
 * a random port, a fresh database) gets each input as the raw bytes of one
 * TCP connection - request line, headers, body, pipelined requests, garbage.
 * So libmicrohttpd's parser, routing, authentication, query parsing, the
 * job-spec parser, submits, cancels, dry runs, listings, logs, nodes, VCs,
 * health and /metrics all see fuzzer data, with coverage from every thread.
 *
 * Safety: tasks of submitted jobs never run the fuzzer's commands - the
 * executor starts /bin/true instead of the task shim (opts.self_exe), which
 * ignores its arguments and exits 0.
 *
 * Invariants: the daemon never crashes (ASan/UBSan abort the process);
 * every answer is a well-formed HTTP status line; no answer from gsched's
 * handlers is a 5xx other than 503 (an internal error on bad input is a bug;
 * libmicrohttpd's own 501/505 protocol answers are fine); the connection is
 * answered or closed within 20 s.
 *
 * Tokens: "root.fuzz-admin-secret" (admin) and "alice.fuzz-user-secret" (user); the seed
 * corpus and dictionary carry them (tests/fuzz/daemon/run.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "daemon.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int port;
static char dir[256];
static char db[320], portf[320], toks[320];
static gsd_opts opts;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_http: invariant broken: %s%s%.300s\n", what, detail ? ": " : "",
            detail ? detail : "");
    abort();
}

static void *serve(void *arg)
{
    int rc = gsd_serve(arg);
    fprintf(stderr, "fuzz_http: the daemon exited with %d\n", rc);
    abort(); /* it never stops by itself */
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/gsched-fuzz-http-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) abort();
    snprintf(db, sizeof db, "%s/gsched.db", dir);
    snprintf(portf, sizeof portf, "%s/port", dir);
    snprintf(toks, sizeof toks, "%s/tokens", dir);
    FILE *f = fopen(toks, "w");
    if (!f) abort();
    char line[512];
    if (gsd_token_line("root", 1, "root.fuzz-admin-secret", 1000, line, sizeof line)) abort();
    fprintf(f, "%s\n", line);
    if (gsd_token_line("alice", 0, "alice.fuzz-user-secret", 1000, line, sizeof line)) abort();
    fprintf(f, "%s\n", line);
    fclose(f);
    if (chmod(toks, 0600)) abort(); /* the daemon refuses a tokens file others can read */
    gsd_opts_init(&opts);
    opts.cluster = "2x4:V100";
    opts.db = db;
    opts.listen = "127.0.0.1:0";
    opts.port_file = portf;
    opts.tokens = toks;
    opts.policy = "fifo-backfill";
    opts.log_dir = dir;          /* not the default under /var/log or ~/.local/state */
    opts.self_exe = "/bin/true"; /* never run the fuzzer's commands */
    opts.sync_full = 0;
    opts.max_body = 64 * 1024;
    opts.grace = GS_SEC;
    opts.single_user = 1; /* token users without Unix accounts may submit */
    signal(SIGPIPE, SIG_IGN);
    pthread_t th;
    if (pthread_create(&th, NULL, serve, &opts)) abort();
    pthread_detach(th);
    for (int i = 0; i < 600 && !port; i++) {
        FILE *p = fopen(portf, "r");
        if (p) {
            if (fscanf(p, "%d", &port) != 1) port = 0;
            fclose(p);
        }
        if (!port) nanosleep(&(struct timespec){0, 50000000L}, NULL);
    }
    if (!port) die("the daemon did not start", dir);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every "HTTP/1.x NNN" status line of the answer: well-formed, and no 5xx but 503. */
static void check_answer(const char *buf, size_t n)
{
    for (size_t i = 0; i + 12 <= n; i++) {
        if ((i && buf[i - 1] != '\n') || memcmp(buf + i, "HTTP/1.", 7)) continue;
        const char *p = buf + i + 9;
        if (buf[i + 8] != ' ' || p[0] < '1' || p[0] > '5' || p[1] < '0' || p[1] > '9' ||
            p[2] < '0' || p[2] > '9')
            die("malformed status line", buf + i);
        int st = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
        /* libmicrohttpd's own protocol answers (501, 505 for an unknown HTTP version) are
         * fine; a 5xx from gsched's handlers (problem+json) other than 503 is a bug */
        const char *hdr_end = strstr(buf + i, "\r\n\r\n");
        const char *pj = strstr(buf + i, "application/problem+json");
        int ours = pj && (!hdr_end || pj < hdr_end);
        if (st >= 500 && st != 503 && (ours || (st != 501 && st != 505)))
            die("server error on a request", buf + i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 128 * 1024) return 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) abort();
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        /* over the connection limit for a moment: not the input's fault */
        close(fd);
        return 0;
    }
    static char buf[1 << 20];
    size_t got = 0, sent = 0;
    int wr_open = 1;
    double deadline = now_s() + 20;
    for (;;) {
        if (wr_open && sent == size) {
            shutdown(fd, SHUT_WR);
            wr_open = 0;
        }
        struct pollfd pfd = {fd, (short)(POLLIN | (wr_open ? POLLOUT : 0)), 0};
        double left = deadline - now_s();
        if (left <= 0) die("no answer within 20 s", (const char *)data);
        int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        if (wr_open && (pfd.revents & POLLOUT)) {
            ssize_t w = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR)
                wr_open = 0; /* the daemon answered early and closed (413, 400) */
        }
        if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
            if (r > 0) {
                got += (size_t)r;
                if (got >= sizeof buf - 1) break;
                continue;
            }
            if (r == 0 || (errno != EAGAIN && errno != EINTR)) break;
        }
    }
    close(fd);
    buf[got] = '\0';
    check_answer(buf, got);
    return 0;
}
