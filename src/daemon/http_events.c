/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_events.c - GET /v1/events: the event stream (Server-Sent Events) of the event bus
 * (evbus.h).  docs/daemon.md, "Event stream", is the contract.
 *
 * A stream is a libmicrohttpd callback response (chunked) whose reader runs on the
 * connection's own thread (MHD_USE_THREAD_PER_CONNECTION) and blocks there, on the bus's
 * condition variable, until an event, a ping or the end: a ": ping" comment goes out at least
 * every GSD_EVBUS_PING_S seconds (and at least every half --idle-timeout), so the idle
 * timeout never cuts a healthy stream while a client that stops reading is still cut by it;
 * every second the reader also looks whether the client hung up, so an abandoned stream
 * frees its connection and its place at once.
 *
 * Resume: Last-Event-ID (or ?since=SEQ) starts after that id, from the ring when it still
 * holds what follows, else from SQLite; when neither can (the id is newer than any event, or
 * older than the oldest stored one: purged), an "event: reset" frame tells the client to list
 * afresh, and the stream goes on from now.  ?last=N starts N events back (those the filters
 * select); neither: from now.  ?follow=0 ends the stream once it is caught up (a listing).
 * ?ping=SECS asks for pings more often than the default (a client that wants to notice a
 * dead stream, or to look at its own state, at least that often).
 *
 * Visibility: a non-admin gets the events of their own jobs, and every node and cluster
 * event; ?job=ID of a job they may not see is 404, like GET /v1/jobs/ID.
 *
 * Limits: streams per user (--max-user-streams), per client (half --max-conn-per-client:
 * a user's streams never take all of its address's connections) and in all (--max-streams):
 * 429 with Retry-After beyond.  At shutdown gsd_http_stop closes the bus first: every stream
 * ends with its final chunk and libmicrohttpd can join the threads.
 *
 * Invariants: a stream holds no database reader between two replays and no lock while it
 * writes; its counts in the bus are released exactly once (by the response's free callback,
 * which libmicrohttpd calls once the response is destroyed).
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "evbus.h"
#include "http_int.h"

#define REPLAY_ROWS 500         /* rows read per database replay */
#define FILL_BYTES  (64u << 10) /* frames taken from the ring per fill */

typedef struct evstream {
    gsd *g;
    gsd_evbus *bus;
    gsd_evsel sel; /* after/upto: unused but upto (a listing's end: ?follow=0) */
    char user[GSD_USER_MAX];
    char client[GSD_USER_MAX + 16];
    int filter_user; /* sel.user points at user (a non-admin) */
    int64_t cursor;  /* every event up to here was sent or skipped */
    int fd;          /* the connection's socket (to see a hang-up), -1 unknown */
    double ping_every, next_ping;
    char *out; /* frames not yet handed to libmicrohttpd */
    size_t off, n, cap;
    int end; /* 1: end after out is sent */
} evstream;

static double ping_interval(const gsd *g)
{
    double idle = g->o.idle_timeout ? g->o.idle_timeout : 30;
    double p = idle / 2 < GSD_EVBUS_PING_S ? idle / 2 : GSD_EVBUS_PING_S;
    return p < 1 ? 1 : p;
}

static void out_add(evstream *s, const char *p, size_t k)
{
    if (s->n + k + 1 > s->cap) {
        size_t nc = s->cap ? s->cap : 4096;
        while (nc < s->n + k + 1) nc *= 2;
        char *np = realloc(s->out, nc);
        if (!np) abort();
        s->out = np;
        s->cap = nc;
    }
    memcpy(s->out + s->n, p, k);
    s->n += k;
    s->out[s->n] = '\0';
}

/* The client closed its end (or the connection broke). */
static int hung_up(const evstream *s)
{
    if (s->fd < 0) return 0;
    struct pollfd p = {s->fd, POLLRDHUP, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Frames of the database rows after the cursor (up to the visible seq), for a stream behind
 * the ring.  0, or -1 when the database cannot be read. */
static int replay(evstream *s)
{
    int64_t upto = gsd_evbus_visible(s->bus);
    if (s->sel.upto > 0 && s->sel.upto < upto) upto = s->sel.upto;
    gsd_evsel q = s->sel;
    q.after = s->cursor;
    q.upto = upto;
    gsd_reader *r = gsd_store_reader(s->g->store);
    gsd_evrow *rows = NULL;
    size_t n = 0;
    int rc = r ? gsd_reader_events_sel(r, &q, REPLAY_ROWS, &rows, &n) : GS_EIO;
    gsd_store_reader_put(s->g->store, r);
    if (rc) return -1;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *f = gsd_evbus_frame(&rows[i], &len);
        if (!f) abort();
        out_add(s, f, len);
        free(f);
    }
    s->cursor = n == REPLAY_ROWS ? rows[n - 1].seq : upto;
    gsd_evrows_free(rows, n);
    return 0;
}

/* Fill s->out: events, a ping, or the end. */
static void fill(evstream *s)
{
    while (s->off == s->n && !s->end) {
        s->off = s->n = 0;
        if (s->sel.upto > 0 && s->cursor >= s->sel.upto) { /* a listing, caught up */
            s->end = 1;
            return;
        }
        double now = hx_now_sec();
        if (now >= s->next_ping) {
            out_add(s, ": ping\n\n", 8);
            s->next_ping = now + s->ping_every;
            return;
        }
        double until = now + 1 < s->next_ping ? now + 1 : s->next_ping;
        int w =
            gsd_evbus_wait(s->bus, &s->sel, &s->cursor, until, FILL_BYTES, &s->out, &s->n, &s->cap);
        if (w == GSD_EVW_CLOSED) {
            s->end = 1;
        } else if (w == GSD_EVW_BEHIND) {
            if (replay(s)) {
                out_add(s, ": the daemon cannot read its database\n\n", 40);
                s->end = 1;
            }
        } else if (w == GSD_EVW_TIMEOUT && hung_up(s)) {
            s->end = 2;
        }
    }
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    evstream *s = cls;
    fill(s);
    if (s->off == s->n) {
        (void)0; /* also when the client is gone (end 2): the final chunk goes nowhere */
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    size_t k = s->n - s->off < max ? s->n - s->off : max;
    memcpy(buf, s->out + s->off, k);
    s->off += k;
    return (ssize_t)k;
}

static void stream_free(void *cls)
{
    evstream *s = cls;
    gsd_evbus_stream_close(s->bus, s->user, s->client);
    free(s->out);
    free(s);
}

/* The client key conn.c counts connections by: the peer's uid on the socket, its address (or
 * "loopback") on TCP. */
static void client_key(const hctx *h, char *out, size_t cap)
{
    if (!h->k)
        snprintf(out, cap, "?");
    else if (h->k->local)
        snprintf(out, cap, "uid:%ld", h->k->uid == (uid_t)-1 ? -1L : (long)h->k->uid);
    else
        snprintf(out, cap, "ip:%s", h->k->addr);
}

/* Where a resumed stream starts: 0 (the cursor is after), or 1 with a reset frame queued
 * (the events after it cannot all be given), or -1 (the database cannot be read). */
static int resume_at(evstream *s, int64_t since)
{
    int64_t vis = gsd_evbus_visible(s->bus);
    const char *why = NULL;
    if (since > vis) {
        why = "the event id is newer than every event of this daemon (another database?)";
    } else if (since + 1 < gsd_evbus_ring_lo(s->bus)) {
        int64_t lo = 0;
        gsd_reader *r = gsd_store_reader(s->g->store);
        int rc = r ? gsd_reader_event_seq_min(r, &lo) : GS_EIO;
        gsd_store_reader_put(s->g->store, r);
        if (rc) return -1;
        if (since < vis && (lo == 0 || since + 1 < lo))
            why = "the events after that id are no longer stored (purged)";
    }
    if (!why) {
        s->cursor = since;
        return 0;
    }
    json_t *o = json_pack("{s:I,s:I,s:s}", "seq", (json_int_t)vis, "since", (json_int_t)since,
                          "reason", why);
    char *js = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!js) abort();
    char head[96];
    int k = snprintf(head, sizeof head, "id: %lld\nevent: reset\ndata: ", (long long)vis);
    out_add(s, head, (size_t)k);
    out_add(s, js, strlen(js));
    out_add(s, "\n\n", 2);
    free(js);
    s->cursor = vis;
    return 1;
}

enum MHD_Result hx_events_stream(hctx *h, const char *arg, const char *sub)
{
    (void)arg, (void)sub;
    gsd *g = h->g;
    enum MHD_Result ret;
    if (!g->bus) return hx_problem(h, 503, GS_ESTATE, NULL, "the event stream is not running");
    gsd_evsel sel = {0, 0, 0, 0, NULL};
    const char *kinds = hx_arg(h, "kind");
    if (kinds && gsd_evbus_kinds(kinds, &sel.kinds))
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "kind"),
                          "kind must be a list of job, node, cluster (e.g. kind=job,node), got "
                          "'%s'",
                          kinds);
    const char *jobs = hx_arg(h, "job");
    if (jobs) {
        gsd_jobrow row;
        if (hx_load_job(h, jobs, &row, &ret)) return ret; /* 404: not theirs */
        sel.job = row.id;
        gsd_jobrow_release(&row);
    }
    int follow = 1;
    if (hx_arg(h, "follow")) {
        follow = hx_flag_arg(h, "follow", &ret);
        if (follow < 0) return ret;
    }
    int64_t since = -1, last = 0;
    const char *lei = hx_header(h, "Last-Event-ID");
    if (lei && *lei) {
        char *e;
        errno = 0;
        long long x = strtoll(lei, &e, 10);
        if (*e || x < 0 || errno || *lei < '0' || *lei > '9') /* "+5", " 5", an overflow */
            return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "Last-Event-ID"),
                              "Last-Event-ID must be an event id (a number), got '%s'", lei);
        since = x;
    } else if (hx_int_arg(h, "since", -1, 0, INT64_MAX, &since, &ret)) {
        return ret;
    }
    if (hx_int_arg(h, "last", 0, 0, 100000, &last, &ret)) return ret;
    int64_t ping = 0; /* a client may want pings more often (to notice a dead stream sooner) */
    if (hx_int_arg(h, "ping", 0, 1, 3600, &ping, &ret)) return ret;
    if (since >= 0 && last)
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "last"),
                          "give either since (or Last-Event-ID) or last, not both");
    evstream *s = calloc(1, sizeof *s);
    if (!s) return MHD_NO;
    s->g = g;
    s->bus = g->bus;
    s->sel = sel;
    snprintf(s->user, sizeof s->user, "%s", h->id.user);
    if (!h->id.admin) s->sel.user = s->user;
    client_key(h, s->client, sizeof s->client);
    s->fd = h->k ? h->k->fd : -1;
    const char *which = NULL;
    int rc = gsd_evbus_stream_open(s->bus, s->user, s->client, &which);
    if (rc) {
        free(s);
        if (rc == GS_ESTATE)
            return hx_problem(h, 503, GS_ESTATE, NULL, "the daemon is shutting down");
        static const char *const retry[] = {"Retry-After", "10", NULL};
        return hx_problem_hdr(h, 429, GS_EQUOTA, json_pack("{s:s}", "limit", which), retry,
                              "too many event streams open (%s)%s",
                              !strcmp(which, "user")     ? "for this user: --max-user-streams"
                              : !strcmp(which, "client") ? "from this client address or uid"
                                                         : "in the daemon: --max-streams",
                              "; close one (or poll GET /v1/jobs) and retry");
    }
    /* from where: a resume, a tail, or now */
    out_add(s, ": gsched event stream\n\n", 23); /* the client knows at once it is open */
    int64_t vis = gsd_evbus_visible(s->bus);
    int bad = 0;
    if (since >= 0) {
        bad = resume_at(s, since) < 0;
    } else if (last) {
        gsd_evsel q = s->sel;
        q.upto = vis;
        int64_t at = 0;
        gsd_reader *r = gsd_store_reader(g->store);
        bad = !r || gsd_reader_events_tail(r, &q, (size_t)last, &at);
        gsd_store_reader_put(g->store, r);
        s->cursor = at > 0 ? at - 1 : 0; /* fewer than last: all of them */
    } else {
        s->cursor = vis;
    }
    if (bad) {
        stream_free(s);
        return hx_problem(h, 500, GS_EIO, NULL, "cannot read the database");
    }
    if (!follow) s->sel.upto = vis > s->cursor ? vis : s->cursor;
    if (!follow && s->sel.upto == 0) s->end = 1; /* no event at all */
    s->ping_every = ping_interval(g);
    if (ping > 0 && (double)ping < s->ping_every) s->ping_every = (double)ping;
    s->next_ping = hx_now_sec() + s->ping_every;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, reader, s, stream_free);
    if (!resp) {
        stream_free(s);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no"); /* proxies: do not buffer */
    ret = MHD_queue_response(h->c, 200, resp);
    MHD_destroy_response(resp);
    h->rq->status = 200;
    return ret;
}
