/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evbus.h - the event bus behind GET /v1/events: committed event rows, rendered once as
 * Server-Sent Events frames, in a bounded in-memory ring that HTTP stream threads wait on.
 *
 * Every event is a row in the events table, written inside the scheduler thread's
 * transaction by whoever makes it (commit.c for job records, commands, node administration):
 * nobody calls the bus to emit one.  After each successful commit the scheduler thread
 * collects the rows after the last one it saw (gsd_evbus_collect: pending, not yet visible);
 * after the snapshot that reflects them is published it makes them visible (gsd_evbus_flush),
 * so a client that reacts to an event by listing sees what the event says.  Stream threads
 * take the frames after their cursor (gsd_evbus_wait); one that fell behind the ring (or
 * asks for older events) replays from SQLite (gsd_reader_events_sel), never past the visible
 * seq.  See docs/daemon.md, "Event stream".
 *
 * Frame: "id: SEQ\nevent: KIND\ndata: JSON\n\n", KIND job (a job id), node (a node, no
 * job) or cluster (neither); JSON on one line: {"seq", "t_us", "time", "kind", "type", "job",
 * "node", "user", "vc", "reason", "state"} plus "data" (the row's JSON) when it has one.
 *
 * Invariants: the ring holds events in ascending seq; it covers every stored event from
 * ring_lo to the last collected one (an event evicted, or skipped when a commit wrote more
 * than the ring holds, raises ring_lo); visible never decreases and never passes the last
 * collected seq.  Memory: at most `ring` events and GSD_EVBUS_RING_BYTES of frames.  Streams:
 * counted per user and per client (gsd_evbus_stream_open), bounded in all.  Thread safety:
 * collect and flush on the scheduler thread; everything else from any thread, under the
 * bus's mutex; gsd_evbus_close wakes every waiter (shutdown: streams end, none may start).
 */
#ifndef GSCHED_DAEMON_EVBUS_H
#define GSCHED_DAEMON_EVBUS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef struct gsd_evbus gsd_evbus;

#define GSD_EVBUS_RING_DEFAULT 4096       /* events kept in memory (--event-ring) */
#define GSD_EVBUS_RING_BYTES   (8u << 20) /* and at most this much of frames */
#define GSD_EVBUS_PING_S       15         /* ": ping" at least this often */

typedef struct gsd_evbus_limits {
    unsigned max_streams;    /* streams in all (0: 64) */
    unsigned max_per_user;   /* per user (0: 8) */
    unsigned max_per_client; /* per client key (conn.c: a uid, an address; 0: no cap) */
} gsd_evbus_limits;

/* A bus that has seen every event up to last_seq (gsd_store_event_seq_max); ring events at
 * most (0: GSD_EVBUS_RING_DEFAULT).  NULL when out of memory. */
gsd_evbus *gsd_evbus_create(size_t ring, int64_t last_seq, const gsd_evbus_limits *lim);
/* After every thread is done with it (gsd_http_stop). */
void gsd_evbus_destroy(gsd_evbus *b);

/* Scheduler thread, after a successful commit: the rows after the last collected one into the
 * ring, pending.  The number collected (> 0: a publish should follow), 0, or GS_EIO. */
int gsd_evbus_collect(gsd_evbus *b, gsd_store *s);
/* Scheduler thread, after a snapshot is published: the pending events become visible. */
void gsd_evbus_flush(gsd_evbus *b);
/* Shutdown: every waiter returns GSD_EVW_CLOSED; no stream opens any more.  Idempotent.  Then
 * wait (up to seconds) until every open stream has ended, so that each sends its final chunk
 * before the connections are shut down (a clean end for its client).  NULL: nothing. */
void gsd_evbus_close(gsd_evbus *b, double seconds);

/* The highest visible seq; the lowest seq the ring still holds from (events after
 * ring_lo - 1 are all in memory). */
int64_t gsd_evbus_visible(gsd_evbus *b);
int64_t gsd_evbus_ring_lo(gsd_evbus *b);

/* A stream starts (0), or not: GS_EQUOTA (too many: *which says whose cap, "user", "client"
 * or "daemon"), GS_ESTATE (closed).  Each 0 needs one gsd_evbus_stream_close. */
int gsd_evbus_stream_open(gsd_evbus *b, const char *user, const char *client, const char **which);
void gsd_evbus_stream_close(gsd_evbus *b, const char *user, const char *client);

enum { GSD_EVW_DATA = 1, GSD_EVW_TIMEOUT = 2, GSD_EVW_CLOSED = 3, GSD_EVW_BEHIND = 4 };
/*
 * Wait until an event after *cursor is visible, the bus closes, or until (CLOCK_MONOTONIC
 * seconds) passes.  GSD_EVW_DATA: the frames of the visible events after *cursor that sel
 * selects (sel->after/upto ignored; upto > 0 caps the events taken) are appended to *out
 * (*n bytes of *cap, realloc'ed; about max_bytes at most) and *cursor moves past every event
 * looked at (also those not selected).  GSD_EVW_BEHIND: the ring no longer holds the events
 * right after *cursor: read them from the database (up to gsd_evbus_visible), then wait again.
 */
int gsd_evbus_wait(gsd_evbus *b, const gsd_evsel *sel, int64_t *cursor, double until,
                   size_t max_bytes, char **out, size_t *n, size_t *cap);

/* The SSE frame of a row (malloc'ed, *len bytes, NUL-terminated), or NULL (out of memory). */
char *gsd_evbus_frame(const gsd_evrow *r, size_t *len);
/* "job", "node" or "cluster": the kind of a row, and its GSD_EVK_* bit. */
const char *gsd_evbus_kind(const gsd_evrow *r, unsigned *bit);
/* Parse a ?kind= list ("job,node,cluster"): 0 and the bits, or GS_EINVAL. */
int gsd_evbus_kinds(const char *s, unsigned *bits);

#endif
