/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_events.c - the event stream's pieces: the CLI's streaming client
 * (gsd_client_stream over the Unix socket and over TCP through libcurl, against a scripted
 * server that cuts its answer at every byte: chunked, Content-Length and to-EOF bodies, an
 * error status, a stop by the caller, an idle timeout, a stream broken in the middle, bad
 * chunking) and the Server-Sent Events parser (gsd_sse: fields, comments, line ends split
 * between pieces, ids kept across events, limits).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "harness.h"

/* ---- a scripted server: one connection, pieces written one by one ------------------------- */

typedef struct piece {
    const char *data; /* NULL: the end of the script */
    int sleep_ms;     /* before writing it */
} piece;

typedef struct fake_srv {
    int lfd;
    int tcp;
    char path[256];
    int port;
    const piece *script;
    int byte_by_byte; /* write every piece one byte at a time */
    int hold_ms;      /* after the script, before closing */
    char request[4096];
    int peer_closed; /* the client closed before hold_ms ran out */
    pthread_t th;
} fake_srv;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *srv_main(void *arg)
{
    fake_srv *f = arg;
    int c = accept(f->lfd, NULL, NULL);
    if (c < 0) return NULL;
    size_t n = 0;
    while (n + 1 < sizeof f->request) {
        ssize_t k = recv(c, f->request + n, sizeof f->request - 1 - n, 0);
        if (k <= 0) break;
        n += (size_t)k;
        f->request[n] = '\0';
        if (strstr(f->request, "\r\n\r\n")) break;
    }
    int broken = 0;
    for (const piece *p = f->script; p && p->data && !broken; p++) {
        if (p->sleep_ms) sleep_ms(p->sleep_ms);
        size_t l = strlen(p->data);
        for (size_t i = 0; i < l && !broken;) {
            size_t k = f->byte_by_byte ? 1 : l - i;
            ssize_t w = send(c, p->data + i, k, MSG_NOSIGNAL);
            if (w <= 0)
                broken = 1;
            else
                i += (size_t)w;
        }
    }
    /* hold the connection open; notice when the client goes away */
    double end = mono_s() + f->hold_ms / 1000.0;
    while (mono_s() < end) {
        char b[64];
        ssize_t k = recv(c, b, sizeof b, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            f->peer_closed = 1;
            break;
        }
        sleep_ms(10);
    }
    close(c);
    return NULL;
}

/* Start a server (Unix socket in a private directory, or TCP on loopback); its address in
 * server (for gsd_client.server).  0 or -1. */
static int srv_start(fake_srv *f, int tcp, const piece *script, char *server, size_t cap)
{
    memset(f, 0, sizeof *f);
    f->tcp = tcp;
    f->script = script;
    if (tcp) {
        f->lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t al = sizeof a;
        if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) || listen(f->lfd, 4) ||
            getsockname(f->lfd, (struct sockaddr *)&a, &al))
            return -1;
        f->port = ntohs(a.sin_port);
        snprintf(server, cap, "http://127.0.0.1:%d", f->port);
    } else {
        char dir[] = "/tmp/gsd-ev-XXXXXX";
        if (!mkdtemp(dir)) return -1;
        snprintf(f->path, sizeof f->path, "%s/s.sock", dir);
        f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {0};
        a.sun_family = AF_UNIX;
        snprintf(a.sun_path, sizeof a.sun_path, "%s", f->path);
        if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) || listen(f->lfd, 4))
            return -1;
        snprintf(server, cap, "unix:%s", f->path);
    }
    return pthread_create(&f->th, NULL, srv_main, f) ? -1 : 0;
}

static void srv_stop(fake_srv *f)
{
    pthread_join(f->th, NULL);
    close(f->lfd);
    if (!f->tcp) {
        unlink(f->path);
        char *slash = strrchr(f->path, '/');
        if (slash) *slash = '\0';
        rmdir(f->path);
    }
}

/* What the client got: the pieces concatenated, how many calls, and a stop after N bytes. */
typedef struct got {
    char buf[8192];
    size_t n;
    int calls;
    size_t stop_after; /* 0: never */
} got;

static int on_body(void *arg, const char *data, size_t len)
{
    got *g = arg;
    if (len == 0) return 1; /* never called empty */
    if (g->n + len < sizeof g->buf) {
        memcpy(g->buf + g->n, data, len);
        g->n += len;
        g->buf[g->n] = '\0';
    }
    g->calls++;
    return g->stop_after && g->n >= g->stop_after;
}

/* One streamed GET against script; the result code, with the response in r and the body in
 * g.  byte_by_byte: the server writes one byte per send. */
static int run_stream(int tcp, const piece *script, int byte_by_byte, int hold_ms, long idle_s,
                      got *g, gsd_resp *r, fake_srv *f)
{
    char server[300];
    if (srv_start(f, tcp, script, server, sizeof server)) return -100;
    f->byte_by_byte = byte_by_byte;
    f->hold_ms = hold_ms;
    gsd_client c = {server, NULL, "alice", 5};
    const char *hdrs[] = {"Last-Event-ID: 41", NULL};
    int rc = gsd_client_stream(&c, "GET", "/v1/events?since=3", NULL, 0, NULL, hdrs, idle_s,
                               on_body, g, r);
    srv_stop(f);
    return rc;
}

static const piece chunked_script[] = {
    {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n", 0},
    {"6\r\nhello \r\n", 20},
    {"1A;ext=1\r\nabcdefghijklmnopqrstuvwxyz\r\n", 20},
    {"0\r\nX-Trailer: t\r\n\r\n", 20},
    {NULL, 0}};

static void stream_chunked(int tcp, int bbb)
{
    got g = {0};
    gsd_resp r;
    fake_srv f;
    int rc = run_stream(tcp, chunked_script, bbb, 2000, 5, &g, &r, &f);
    ASSERT_OK(rc);
    ASSERT_EQ(r.status, 200);
    ASSERT_STR(r.content_type, "text/event-stream");
    ASSERT_STR(g.buf, "hello abcdefghijklmnopqrstuvwxyz");
    ASSERT(g.calls >= 2); /* delivered as it came, not at the end */
    ASSERT_STR(r.body, "");
    ASSERT_CONTAINS(f.request, "GET /v1/events?since=3 HTTP/1.1\r\n");
    ASSERT_CONTAINS(f.request, "Last-Event-ID: 41\r\n");
    ASSERT_CONTAINS(f.request, "text/event-stream");
    if (!tcp)
        ASSERT(!strstr(f.request, "X-Gsched-User")); /* the kernel says who */
    else
        ASSERT_CONTAINS(f.request, "X-Gsched-User: alice\r\n");
    /* the call returned at the final chunk, not when the server closed (2 s later) */
    ASSERT_EQ(f.peer_closed, 1);
    gsd_resp_release(&r);
}

static void stream_chunked_unix(void)
{
    stream_chunked(0, 0);
}
static void stream_chunked_unix_bytewise(void)
{
    stream_chunked(0, 1);
}
static void stream_chunked_tcp(void)
{
    stream_chunked(1, 0);
}
static void stream_chunked_tcp_bytewise(void)
{
    stream_chunked(1, 1);
}

static void stream_length_and_eof(void)
{
    static const piece len_script[] = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123", 0}, {"456789", 30}, {NULL, 0}};
    static const piece eof_script[] = {
        {"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the", 0}, {" end", 30}, {NULL, 0}};
    for (int tcp = 0; tcp < 2; tcp++) {
        got g = {0};
        gsd_resp r;
        fake_srv f;
        ASSERT_OK(run_stream(tcp, len_script, 1, 1000, 5, &g, &r, &f));
        ASSERT_STR(g.buf, "0123456789");
        ASSERT_EQ(f.peer_closed, 1); /* ended by the length, not by the close */
        gsd_resp_release(&r);
        memset(&g, 0, sizeof g);
        ASSERT_OK(run_stream(tcp, eof_script, 0, 0, 5, &g, &r, &f));
        ASSERT_STR(g.buf, "to the end");
        gsd_resp_release(&r);
    }
}

static void stream_error_status(void)
{
    static const piece script[] = {
        {"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/problem+json\r\n"
         "Retry-After: 7\r\nContent-Length: 36\r\n\r\n",
         0},
        {"{\"detail\":\"too many\",\"code\":\"busy\"}\n", 20},
        {NULL, 0}};
    for (int tcp = 0; tcp < 2; tcp++) {
        got g = {0};
        gsd_resp r;
        fake_srv f;
        ASSERT_OK(run_stream(tcp, script, 0, 0, 5, &g, &r, &f));
        ASSERT_EQ(r.status, 429);
        ASSERT_EQ(g.calls, 0); /* an error is not streamed */
        ASSERT_STR(r.body, "{\"detail\":\"too many\",\"code\":\"busy\"}\n");
        ASSERT_EQ(r.retry_after, 7);
        ASSERT_STR(r.content_type, "application/problem+json");
        gsd_resp_release(&r);
    }
}

static void stream_stop_by_caller(void)
{
    static const piece script[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n", 0},
        {"6\r\nsecond\r\n", 50},
        {NULL, 0}};
    for (int tcp = 0; tcp < 2; tcp++) {
        got g = {0};
        g.stop_after = 5;
        gsd_resp r;
        fake_srv f;
        double t0 = mono_s();
        ASSERT_OK(run_stream(tcp, script, 0, 3000, 5, &g, &r, &f));
        ASSERT_STR(g.buf, "first");
        ASSERT_EQ(f.peer_closed, 1); /* the client hung up at once */
        ASSERT(mono_s() - t0 < 2.5);
        gsd_resp_release(&r);
    }
}

static void stream_idle_timeout(void)
{
    static const piece script[] = {{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0},
                                   {"4\r\nping\r\n", 600}, /* within the idle time: no timeout */
                                   {"4\r\npong\r\n", 600},
                                   {NULL, 0}};
    for (int tcp = 0; tcp < 2; tcp++) {
        got g = {0};
        gsd_resp r;
        fake_srv f;
        double t0 = mono_s();
        int rc = run_stream(tcp, script, 0, 4500, 1, &g, &r, &f);
        double dt = mono_s() - t0;
        ASSERT_EQ(rc, GS_EIO);
        ASSERT_EQ(r.status, 200);      /* the head came */
        ASSERT_STR(g.buf, "pingpong"); /* 1.2 s in all: longer than idle_s, no total timeout */
        ASSERT_CONTAINS(r.err, "idle timeout");
        ASSERT(dt >= 2.0 && dt < 4.4); /* 1.2 s of data, then 1 s (curl: up to 2 s) of silence */
        gsd_resp_release(&r);
    }
}

static void stream_broken(void)
{
    static const piece cut[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly", 0}, {NULL, 0}};
    static const piece bad[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n", 0}, {NULL, 0}};
    static const piece nohttp[] = {{"SSH-2.0-OpenSSH\r\n\r\n", 0}, {NULL, 0}};
    for (int tcp = 0; tcp < 2; tcp++) {
        got g = {0};
        gsd_resp r;
        fake_srv f;
        ASSERT_EQ(run_stream(tcp, cut, 0, 0, 5, &g, &r, &f), GS_EIO);
        ASSERT_EQ(r.status, 200);
        ASSERT_STR(g.buf, "only");
        gsd_resp_release(&r);
        memset(&g, 0, sizeof g);
        ASSERT_EQ(run_stream(tcp, bad, 0, 500, 5, &g, &r, &f), GS_EIO);
        ASSERT_STR(g.buf, "abc");
        gsd_resp_release(&r);
        memset(&g, 0, sizeof g);
        ASSERT_EQ(run_stream(tcp, nohttp, 0, 0, 5, &g, &r, &f), GS_EIO);
        ASSERT_EQ(g.calls, 0);
        gsd_resp_release(&r);
    }
}

static void stream_unreachable(void)
{
    char dir[] = "/tmp/gsd-ev-XXXXXX";
    ASSERT(mkdtemp(dir));
    char server[300];
    snprintf(server, sizeof server, "unix:%s/none.sock", dir);
    gsd_client c = {server, NULL, NULL, 2};
    got g = {0};
    gsd_resp r;
    ASSERT_EQ(gsd_client_stream(&c, "GET", "/v1/events", NULL, 0, NULL, NULL, 5, on_body, &g, &r),
              GS_EIO);
    ASSERT_EQ(r.status, 0);
    ASSERT_CONTAINS(r.err, "cannot reach");
    gsd_resp_release(&r);
    rmdir(dir);
}

/* ---- the SSE parser ---------------------------------------------------------------------- */

typedef struct evlog {
    char text[4096];
    int n, comments, stop_at;
} evlog;

static int on_ev(void *arg, const gsd_sse_event *ev)
{
    evlog *l = arg;
    size_t k = strlen(l->text);
    if (ev->comment) {
        l->comments++;
        snprintf(l->text + k, sizeof l->text - k, "[:%s]", ev->data);
        return 0;
    }
    snprintf(l->text + k, sizeof l->text - k, "[%s|%s|%s%s]", ev->id, ev->type, ev->data,
             strlen(ev->data) == ev->len ? "" : "(bad len)");
    l->n++;
    return l->stop_at && l->n >= l->stop_at;
}

static void feed_split(const char *s, size_t step, evlog *l, int *rc)
{
    gsd_sse p;
    gsd_sse_init(&p, on_ev, l);
    size_t n = strlen(s);
    *rc = 0;
    for (size_t i = 0; i < n && !*rc; i += step)
        *rc = gsd_sse_feed(&p, s + i, n - i < step ? n - i : step);
    gsd_sse_release(&p);
}

static void sse_parse(void)
{
    const char *in = "\xEF\xBB\xBF: hello\n"
                     "id: 5\nevent: job\ndata: {\"a\":1}\n\n"
                     "data:x\r\ndata: y\r\n\r\n" /* no id line: keeps 5; type resets */
                     "id: 7\revent: node\rdata: n\r\r"
                     "event: ignored\n\n"               /* no data: not delivered */
                     "retry: 100\nunknown: z\ndata\n\n" /* "data" alone: an empty line */
                     ": ping\n"
                     "id: 9\ndata: cut"; /* unfinished: not delivered */
    const char *want = "[:hello][5|job|{\"a\":1}][5|message|x\ny][7|node|n][7|message|][:ping]";
    for (size_t step = 1; step <= strlen(in); step++) {
        evlog l = {{0}, 0, 0, 0};
        int rc;
        feed_split(in, step, &l, &rc);
        ASSERT_OK(rc);
        if (strcmp(l.text, want)) T_FAIL("step %zu: %s", step, l.text);
        ASSERT_EQ(l.comments, 2);
    }
}

static void sse_stop_and_limits(void)
{
    evlog l = {{0}, 0, 0, 1};
    int rc;
    feed_split("data: a\n\ndata: b\n\n", 100, &l, &rc);
    ASSERT_EQ(rc, 1); /* the callback's value, the rest not parsed */
    ASSERT_STR(l.text, "[|message|a]");
    gsd_sse p;
    evlog m = {{0}, 0, 0, 0};
    gsd_sse_init(&p, on_ev, &m);
    p.max_line = 16;
    ASSERT_OK(gsd_sse_feed(&p, "data: 0123456\n", 14));
    ASSERT_EQ(gsd_sse_feed(&p, "data: 01234567890123456789\n", 27), GS_ETOOBIG);
    gsd_sse_release(&p);
    gsd_sse_init(&p, on_ev, &m);
    p.max_line = 16;
    /* lines that fit, an event that does not */
    ASSERT_EQ(gsd_sse_feed(&p, "data: 01234567\ndata: 01234567\n", 30), GS_ETOOBIG);
    gsd_sse_release(&p);
}

static const test_case tests[] = {
    {"stream_chunked_unix", stream_chunked_unix},
    {"stream_chunked_unix_bytewise", stream_chunked_unix_bytewise},
    {"stream_chunked_tcp", stream_chunked_tcp},
    {"stream_chunked_tcp_bytewise", stream_chunked_tcp_bytewise},
    {"stream_length_and_eof", stream_length_and_eof},
    {"stream_error_status", stream_error_status},
    {"stream_stop_by_caller", stream_stop_by_caller},
    {"stream_idle_timeout", stream_idle_timeout},
    {"stream_broken", stream_broken},
    {"stream_unreachable", stream_unreachable},
    {"sse_parse", sse_parse},
    {"sse_stop_and_limits", sse_stop_and_limits},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
