/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_events.c - the event stream's pieces: the CLI's streaming client
 * (gsd_client_stream over the Unix socket and over TCP through libcurl, against a scripted
 * server that cuts its answer at every byte: chunked, Content-Length and to-EOF bodies, an
 * error status, a stop by the caller, an idle timeout, a stream broken in the middle, bad
 * chunking) and the Server-Sent Events parser (gsd_sse: fields, comments, line ends split
 * between pieces, ids kept across events, limits); the event bus (evbus.c) over a real
 * store: events pending until flushed, frames and their fields, filters and visibility (a
 * user sees their own jobs' events and every node and cluster event), a ring too small
 * (BEHIND, then the database replay selects the same), resume points (tail), waking a waiter,
 * per-user / per-client / total stream caps, and closing.
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

#include <jansson.h>
#include <sqlite3.h>

#include "daemon.h"
#include "evbus.h"
#include "harness.h"
#include "store.h"

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

/* ---- the event bus ------------------------------------------------------------------------ */

static char busdir[256];

static gsd_store *bus_store(const char *name, char *path, size_t cap)
{
    if (!busdir[0]) {
        snprintf(busdir, sizeof busdir, "/tmp/gsd-evbus-XXXXXX");
        if (!mkdtemp(busdir)) return NULL;
    }
    snprintf(path, cap, "%s/%s", busdir, name);
    gsd_store *s = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    return gsd_store_open(path, 0, &s, &d) ? NULL : s;
}

static gsd_jobrow jrow(int64_t id, const char *user)
{
    gsd_jobrow r;
    memset(&r, 0, sizeof r);
    r.id = r.grp = id;
    r.user = (char *)user;
    r.vc = (char *)"vca";
    r.name = (char *)"j";
    r.ntasks = 1;
    r.gpus_per_task = 1;
    r.gang = 1;
    r.state = (char *)"PENDING";
    r.exit_code = GSD_NONE;
    r.submit = 1000;
    r.first_start = r.last_start = r.end = GSD_NONE;
    r.gpu_us = GSD_NONE;
    r.spec = (char *)"{\"command\":\"true\"}";
    return r;
}

/* A node (node != NULL) or cluster event row, written as other lanes do: job_id NULL. */
static int raw_event(const char *path, const char *node, const char *type, const char *data)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO events(job_id, t_us, type, reason, node, data) "
                                "VALUES (NULL, 5000000, ?1, 'why', ?2, ?3)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
        if (node) sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
        if (data) sqlite3_bind_text(st, 3, data, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return rc ? -1 : 0;
}

/* The frames' events as "seq:kind:type:user" words (parsed back with gsd_sse). */
typedef struct frames {
    char text[2048];
    int n;
} frames;

static int frame_ev(void *arg, const gsd_sse_event *ev)
{
    frames *f = arg;
    if (ev->comment) return 0;
    json_t *o = json_loads(ev->data, 0, NULL);
    size_t k = strlen(f->text);
    json_t *u = o ? json_object_get(o, "user") : NULL;
    snprintf(f->text + k, sizeof f->text - k, "%s%s:%s:%s:%s", k ? " " : "", ev->id, ev->type,
             o ? json_string_value(json_object_get(o, "type")) : "?",
             json_is_string(u) ? json_string_value(u) : "-");
    /* the id line and the JSON agree; the kind is the event name */
    if (!o || json_integer_value(json_object_get(o, "seq")) != atoll(ev->id) ||
        strcmp(json_string_value(json_object_get(o, "kind")), ev->type))
        snprintf(f->text + strlen(f->text), sizeof f->text - strlen(f->text), "(BAD)");
    json_decref(o);
    f->n++;
    return 0;
}

static void parse_frames(const char *buf, size_t n, frames *f)
{
    memset(f, 0, sizeof *f);
    gsd_sse p;
    gsd_sse_init(&p, frame_ev, f);
    gsd_sse_feed(&p, buf, n);
    gsd_sse_release(&p);
}

/* Take everything visible after *cursor that sel selects (without waiting). */
static int take(gsd_evbus *b, const gsd_evsel *sel, int64_t *cursor, frames *f)
{
    char *out = NULL;
    size_t n = 0, cap = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int w = gsd_evbus_wait(b, sel, cursor, (double)ts.tv_sec + ts.tv_nsec / 1e9, 1 << 20, &out, &n,
                           &cap);
    parse_frames(out ? out : "", n, f);
    free(out);
    return w;
}

/* The database replay of sel after `after`, as frames. */
static int replay_frames(gsd_store *s, const gsd_evsel *sel, frames *f)
{
    gsd_reader *r = gsd_store_reader(s);
    gsd_evrow *rows = NULL;
    size_t n = 0;
    int rc = gsd_reader_events_sel(r, sel, 100, &rows, &n);
    gsd_store_reader_put(s, r);
    char buf[8192] = "";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *fr = gsd_evbus_frame(&rows[i], &len);
        if (k + len < sizeof buf) {
            memcpy(buf + k, fr, len);
            k += len;
        }
        free(fr);
    }
    gsd_evrows_free(rows, n);
    parse_frames(buf, k, f);
    return rc;
}

static void bus_events_and_visibility(void)
{
    char path[512];
    gsd_store *s = bus_store("a.db", path, sizeof path);
    ASSERT(s);
    int64_t last = -1;
    ASSERT_OK(gsd_store_event_seq_max(s, &last));
    ASSERT_EQ(last, 0);
    gsd_evbus *b = gsd_evbus_create(16, last, NULL);
    ASSERT(b);
    gsd_jobrow a = jrow(1, "alice"), c = jrow(2, "bob");
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_insert_job(s, &a));
    ASSERT_OK(gsd_store_insert_job(s, &c));
    ASSERT_OK(gsd_store_add_event(s, 1, 1000000, "submitted", NULL));
    ASSERT_OK(gsd_store_add_event(s, 2, 1000001, "submitted", "by bob"));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT_OK(raw_event(path, "n1", "bad", "{\"by\":\"root\"}"));
    ASSERT_OK(raw_event(path, NULL, "started", NULL));
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_add_event(s, 1, 1000002, "started", "run 1 on n0:0"));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT(gsd_evbus_collect(b, s) > 0);
    gsd_evsel all = {0, 0, 0, 0, NULL};
    int64_t cur = 0;
    frames f;
    /* collected is not visible until the snapshot is published */
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_TIMEOUT);
    ASSERT_EQ(gsd_evbus_visible(b), 0);
    gsd_evbus_flush(b);
    ASSERT_EQ(gsd_evbus_visible(b), 5);
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "1:job:submitted:alice 2:job:submitted:bob 3:node:bad:- "
                       "4:cluster:started:- 5:job:started:alice");
    ASSERT_EQ(cur, 5);
    ASSERT_EQ(gsd_evbus_collect(b, s), 0); /* nothing new */
    /* a user: their own jobs' events, every node and cluster event */
    gsd_evsel alice = {0, 0, 0, 0, "alice"};
    cur = 0;
    ASSERT_EQ(take(b, &alice, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "1:job:submitted:alice 3:node:bad:- 4:cluster:started:- "
                       "5:job:started:alice");
    ASSERT_EQ(cur, 5); /* past bob's event too */
    /* the database replay selects the same */
    gsd_evsel q = alice;
    q.upto = 5;
    ASSERT_OK(replay_frames(s, &q, &f));
    ASSERT_STR(f.text, "1:job:submitted:alice 3:node:bad:- 4:cluster:started:- "
                       "5:job:started:alice");
    /* filters: one job; kinds */
    gsd_evsel j2 = {0, 0, 2, 0, NULL}, nodes = {0, 0, 0, GSD_EVK_NODE | GSD_EVK_CLUSTER, NULL};
    cur = 0;
    ASSERT_EQ(take(b, &j2, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "2:job:submitted:bob");
    cur = 0;
    ASSERT_EQ(take(b, &nodes, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "3:node:bad:- 4:cluster:started:-");
    q = nodes;
    q.upto = 5;
    ASSERT_OK(replay_frames(s, &q, &f));
    ASSERT_STR(f.text, "3:node:bad:- 4:cluster:started:-");
    /* bob may not see alice's job, even asking for it */
    gsd_evsel bob1 = {0, 0, 1, 0, "bob"};
    cur = 0;
    ASSERT_EQ(take(b, &bob1, &cur, &f), GSD_EVW_DATA);
    ASSERT_EQ(f.n, 0);
    /* a listing's end (upto) caps what is taken; resume after an id */
    gsd_evsel capped = {0, 3, 0, 0, NULL};
    cur = 1;
    ASSERT_EQ(take(b, &capped, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "2:job:submitted:bob 3:node:bad:-");
    ASSERT_EQ(cur, 3);
    ASSERT_EQ(take(b, &capped, &cur, &f), GSD_EVW_TIMEOUT);
    /* the tail: where the last 2 of alice's start */
    gsd_reader *r = gsd_store_reader(s);
    int64_t at = -1;
    gsd_evsel t = alice;
    t.upto = 5;
    ASSERT_OK(gsd_reader_events_tail(r, &t, 2, &at));
    ASSERT_EQ(at, 4);
    ASSERT_OK(gsd_reader_events_tail(r, &t, 10, &at));
    ASSERT_EQ(at, 0); /* fewer than 10: from the start */
    int64_t lo = -1;
    ASSERT_OK(gsd_reader_event_seq_min(r, &lo));
    ASSERT_EQ(lo, 1);
    gsd_store_reader_put(s, r);
    /* the frame of a node event carries its data as JSON */
    gsd_evrow row = {3, 0, 5000000, "bad", "fan", "n1", "{\"by\":\"root\"}", NULL, NULL, NULL};
    size_t len;
    char *fr = gsd_evbus_frame(&row, &len);
    ASSERT_EQ(strlen(fr), len);
    ASSERT_CONTAINS(fr, "id: 3\nevent: node\ndata: {\"seq\":3,\"t_us\":5000000,");
    ASSERT_CONTAINS(fr, "\"kind\":\"node\",\"type\":\"bad\",\"job\":null,\"node\":\"n1\","
                        "\"user\":null,\"vc\":null,\"reason\":\"fan\",\"state\":null,"
                        "\"data\":{\"by\":\"root\"}}\n\n");
    free(fr);
    gsd_evbus_destroy(b);
    gsd_store_close(s);
}

static void bus_ring_overflow(void)
{
    char path[512];
    gsd_store *s = bus_store("b.db", path, sizeof path);
    ASSERT(s);
    gsd_jobrow a = jrow(1, "alice");
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_insert_job(s, &a));
    ASSERT_OK(gsd_store_add_event(s, 1, 1, "old", NULL));
    ASSERT_OK(gsd_store_commit(s));
    int64_t last;
    ASSERT_OK(gsd_store_event_seq_max(s, &last));
    ASSERT_EQ(last, 1);
    gsd_evbus *b = gsd_evbus_create(4, last, NULL); /* starts after event 1 */
    ASSERT_EQ(gsd_evbus_ring_lo(b), 2);
    gsd_evsel all = {0, 0, 0, 0, NULL};
    int64_t cur = 0;
    frames f;
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_BEHIND); /* event 1: in the database only */
    cur = 1;
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_TIMEOUT); /* nothing after 1 yet */
    for (int round = 0; round < 2; round++) {
        ASSERT_OK(gsd_store_begin(s));
        for (int i = 0; i < 3; i++) ASSERT_OK(gsd_store_add_event(s, 1, 2 + i, "e", NULL));
        ASSERT_OK(gsd_store_commit(s));
        ASSERT(gsd_evbus_collect(b, s) > 0);
    }
    gsd_evbus_flush(b);
    /* 6 new events, a ring of 4: events 2 and 3 were evicted */
    ASSERT_EQ(gsd_evbus_visible(b), 7);
    ASSERT_EQ(gsd_evbus_ring_lo(b), 4);
    cur = 0;
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_BEHIND);
    ASSERT_EQ(cur, 0);
    cur = 2;
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_BEHIND);
    cur = 3; /* right before the ring */
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "4:job:e:alice 5:job:e:alice 6:job:e:alice 7:job:e:alice");
    /* a commit of more than the ring holds: only the newest are kept, the ring starts over */
    ASSERT_OK(gsd_store_begin(s));
    for (int i = 0; i < 10; i++) ASSERT_OK(gsd_store_add_event(s, 1, 10 + i, "f", NULL));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT(gsd_evbus_collect(b, s) > 0);
    gsd_evbus_flush(b);
    ASSERT_EQ(gsd_evbus_visible(b), 17);
    ASSERT_EQ(gsd_evbus_ring_lo(b), 14);
    cur = 7;
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_BEHIND);
    /* what the ring lost, the database gives */
    gsd_evsel q = {7, 13, 0, 0, NULL};
    ASSERT_OK(replay_frames(s, &q, &f));
    ASSERT_EQ(f.n, 6);
    cur = 13;
    ASSERT_EQ(take(b, &all, &cur, &f), GSD_EVW_DATA);
    ASSERT_STR(f.text, "14:job:f:alice 15:job:f:alice 16:job:f:alice 17:job:f:alice");
    /* max_bytes: a fill stops early, the cursor where it stopped */
    cur = 13;
    char *out = NULL;
    size_t n = 0, cap = 0;
    ASSERT_EQ(gsd_evbus_wait(b, &all, &cur, 0, 1, &out, &n, &cap), GSD_EVW_DATA);
    parse_frames(out, n, &f);
    free(out);
    ASSERT_STR(f.text, "14:job:f:alice");
    ASSERT_EQ(cur, 14);
    gsd_evbus_destroy(b);
    gsd_store_close(s);
}

typedef struct waiter {
    gsd_evbus *b;
    int64_t cursor;
    int result;
    double took;
} waiter;

static void *wait_main(void *arg)
{
    waiter *w = arg;
    gsd_evsel all = {0, 0, 0, 0, NULL};
    char *out = NULL;
    size_t n = 0, cap = 0;
    double t0 = mono_s();
    w->result = gsd_evbus_wait(w->b, &all, &w->cursor, t0 + 10, 1 << 16, &out, &n, &cap);
    w->took = mono_s() - t0;
    free(out);
    return NULL;
}

static void *late_close(void *arg)
{
    sleep_ms(300);
    gsd_evbus_stream_close(arg, "x", NULL);
    return NULL;
}

static void bus_wakeups_caps_close(void)
{
    char path[512];
    gsd_store *s = bus_store("c.db", path, sizeof path);
    ASSERT(s);
    gsd_evbus_limits lim = {4, 2, 3};
    gsd_evbus *b = gsd_evbus_create(8, 0, &lim);
    /* a waiter wakes when events become visible, not at its deadline */
    waiter w = {b, 0, 0, 0};
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, wait_main, &w));
    sleep_ms(100);
    ASSERT_OK(raw_event(path, "n0", "drain", NULL));
    ASSERT(gsd_evbus_collect(b, s) > 0);
    sleep_ms(100); /* collected only: the waiter sleeps on */
    gsd_evbus_flush(b);
    pthread_join(th, NULL);
    ASSERT_EQ(w.result, GSD_EVW_DATA);
    ASSERT_EQ(w.cursor, 1);
    ASSERT(w.took >= 0.15 && w.took < 5);
    /* caps: per user 2, per client 3, 4 in all */
    const char *which;
    ASSERT_OK(gsd_evbus_stream_open(b, "alice", "uid:1", &which));
    ASSERT_OK(gsd_evbus_stream_open(b, "alice", "uid:1", &which));
    ASSERT_EQ(gsd_evbus_stream_open(b, "alice", "uid:1", &which), GS_EQUOTA);
    ASSERT_STR(which, "user");
    ASSERT_OK(gsd_evbus_stream_open(b, "bob", "uid:1", &which));
    ASSERT_EQ(gsd_evbus_stream_open(b, "carol", "uid:1", &which), GS_EQUOTA);
    ASSERT_STR(which, "client");
    ASSERT_OK(gsd_evbus_stream_open(b, "carol", "ip:loopback", &which));
    ASSERT_EQ(gsd_evbus_stream_open(b, "dave", "ip:10.0.0.1", &which), GS_EQUOTA);
    ASSERT_STR(which, "daemon");
    gsd_evbus_stream_close(b, "alice", "uid:1");
    ASSERT_OK(gsd_evbus_stream_open(b, "alice", "uid:1", &which)); /* a place again */
    for (int i = 0; i < 2; i++) gsd_evbus_stream_close(b, "alice", "uid:1");
    gsd_evbus_stream_close(b, "bob", "uid:1");
    gsd_evbus_stream_close(b, "carol", "ip:loopback");
    ASSERT_OK(gsd_evbus_stream_open(b, "dave", "ip:10.0.0.1", &which));
    gsd_evbus_stream_close(b, "dave", "ip:10.0.0.1");
    /* close: a waiter ends at once, no stream opens, and close waits for the open ones to end
     * (their final chunk) */
    waiter w2 = {b, 1, 0, 0};
    ASSERT_OK(pthread_create(&th, NULL, wait_main, &w2));
    ASSERT_OK(gsd_evbus_stream_open(b, "x", NULL, &which));
    pthread_t th2;
    ASSERT_OK(pthread_create(&th2, NULL, late_close, b));
    sleep_ms(100);
    double t0 = mono_s();
    gsd_evbus_close(b, 10);
    double took = mono_s() - t0;
    pthread_join(th, NULL);
    pthread_join(th2, NULL);
    ASSERT_EQ(w2.result, GSD_EVW_CLOSED);
    ASSERT(w2.took < 5);
    ASSERT(took >= 0.1 && took < 5); /* until the stream ended, not the 10 s */
    t0 = mono_s();
    ASSERT_OK(gsd_evbus_stream_open(b, "y", NULL, &which) == GS_ESTATE ? 0 : -1);
    gsd_evbus_close(b, 10); /* none open: at once */
    ASSERT(mono_s() - t0 < 1);
    ASSERT_EQ(gsd_evbus_stream_open(b, "alice", "uid:1", &which), GS_ESTATE);
    gsd_evbus_destroy(b);
    gsd_store_close(s);
}

static void bus_kinds(void)
{
    unsigned k;
    ASSERT_OK(gsd_evbus_kinds("job,node", &k));
    ASSERT_EQ(k, GSD_EVK_JOB | GSD_EVK_NODE);
    ASSERT_OK(gsd_evbus_kinds("cluster", &k));
    ASSERT_EQ(k, GSD_EVK_CLUSTER);
    ASSERT_EQ(gsd_evbus_kinds("job,nodes", &k), GS_EINVAL);
    ASSERT_EQ(gsd_evbus_kinds("", &k), GS_EINVAL);
    ASSERT_EQ(gsd_evbus_kinds(",", &k), GS_EINVAL);
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
    {"bus_events_and_visibility", bus_events_and_visibility},
    {"bus_ring_overflow", bus_ring_overflow},
    {"bus_wakeups_caps_close", bus_wakeups_caps_close},
    {"bus_kinds", bus_kinds},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
