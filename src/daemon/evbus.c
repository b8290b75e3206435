/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evbus.c - the event bus: committed event rows in a bounded ring of rendered SSE frames,
 * stream threads waiting on a condition variable, stream counts per user and per client.
 * See evbus.h for the contract and its invariants.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "evbus.h"
#include "gsd.h"

typedef struct ring_ev {
    int64_t seq, job;
    unsigned kind; /* GSD_EVK_* */
    char *user;    /* job events: the owner; NULL else */
    char *frame;
    size_t len;
} ring_ev;

typedef struct count {
    char key[GSD_USER_MAX + 16];
    unsigned n;
} count;

struct gsd_evbus {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ring_ev *ev;
    size_t cap, head, n; /* circular: the oldest at head */
    size_t bytes;
    int64_t collected; /* the last seq collected (scheduler thread writes, under mu) */
    int64_t visible;
    int64_t ring_lo;
    int closed;
    gsd_evbus_limits lim;
    unsigned streams;
    count *users, *clients; /* lim.max_streams entries each */
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

gsd_evbus *gsd_evbus_create(size_t ring, int64_t last_seq, const gsd_evbus_limits *lim)
{
    gsd_evbus *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->cap = ring ? ring : GSD_EVBUS_RING_DEFAULT;
    if (lim) b->lim = *lim;
    if (!b->lim.max_streams) b->lim.max_streams = 64;
    if (!b->lim.max_per_user) b->lim.max_per_user = 8;
    b->ev = calloc(b->cap, sizeof *b->ev);
    b->users = calloc(b->lim.max_streams, sizeof *b->users);
    b->clients = calloc(b->lim.max_streams, sizeof *b->clients);
    if (!b->ev || !b->users || !b->clients) {
        free(b->ev);
        free(b->users);
        free(b->clients);
        free(b);
        return NULL;
    }
    b->collected = b->visible = last_seq;
    b->ring_lo = last_seq + 1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
    return b;
}

static void ev_free(ring_ev *e)
{
    free(e->user);
    free(e->frame);
    memset(e, 0, sizeof *e);
}

void gsd_evbus_destroy(gsd_evbus *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) ev_free(&b->ev[(b->head + i) % b->cap]);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b->ev);
    free(b->users);
    free(b->clients);
    free(b);
}

/* ---- frames ---------------------------------------------------------------------------------- */

const char *gsd_evbus_kind(const gsd_evrow *r, unsigned *bit)
{
    unsigned k = r->job_id > 0 ? GSD_EVK_JOB : r->node ? GSD_EVK_NODE : GSD_EVK_CLUSTER;
    if (bit) *bit = k;
    return k == GSD_EVK_JOB ? "job" : k == GSD_EVK_NODE ? "node" : "cluster";
}

int gsd_evbus_kinds(const char *s, unsigned *bits)
{
    *bits = 0;
    while (s && *s) {
        const char *e = strchr(s, ',');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 3 && !strncmp(s, "job", 3))
            *bits |= GSD_EVK_JOB;
        else if (l == 4 && !strncmp(s, "node", 4))
            *bits |= GSD_EVK_NODE;
        else if (l == 7 && !strncmp(s, "cluster", 7))
            *bits |= GSD_EVK_CLUSTER;
        else if (l)
            return GS_EINVAL;
        s = e ? e + 1 : NULL;
    }
    return *bits ? 0 : GS_EINVAL;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

char *gsd_evbus_frame(const gsd_evrow *r, size_t *len)
{
    const char *kind = gsd_evbus_kind(r, NULL);
    char when[64];
    gsd_time_str(r->t, when, sizeof when);
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "seq", json_integer(r->seq));
    json_object_set_new(o, "t_us", json_integer(r->t));
    json_object_set_new(o, "time", json_string(when));
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "type", str_or_null(r->type));
    json_object_set_new(o, "job", r->job_id > 0 ? json_integer(r->job_id) : json_null());
    json_object_set_new(o, "node", str_or_null(r->node));
    json_object_set_new(o, "user", str_or_null(r->user));
    json_object_set_new(o, "vc", str_or_null(r->vc));
    json_object_set_new(o, "reason", str_or_null(r->reason));
    json_object_set_new(o, "state", str_or_null(r->state));
    if (r->data) {
        json_t *d = json_loads(r->data, JSON_DECODE_ANY, NULL);
        json_object_set_new(o, "data", d ? d : json_string(r->data));
    }
    /* compact: one line (strings escape their newlines) */
    char *js = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(o);
    if (!js) return NULL;
    size_t cap = strlen(js) + 64;
    char *f = malloc(cap);
    if (f) {
        int k = snprintf(f, cap, "id: %lld\nevent: %s\ndata: %s\n\n", (long long)r->seq, kind, js);
        *len = (size_t)k;
    }
    free(js);
    return f;
}

/* ---- the scheduler thread's side --------------------------------------------------------------
 */

/* Drop the oldest event (mu held). */
static void evict(gsd_evbus *b)
{
    ring_ev *e = &b->ev[b->head];
    b->ring_lo = e->seq + 1;
    b->bytes -= e->len;
    ev_free(e);
    b->head = (b->head + 1) % b->cap;
    b->n--;
}

int gsd_evbus_collect(gsd_evbus *b, gsd_store *s)
{
    if (!b) return 0;
    /* one query in the common case (a commit writes a few events, or none) */
    int64_t after = b->collected, max;
    int skip = 0;
    gsd_evrow *rows = NULL;
    size_t n = 0;
    if (gsd_store_events_after(s, after, b->cap + 1, &rows, &n)) return GS_EIO;
    if (!n) return 0;
    if (n > b->cap) { /* more than the ring holds: keep the newest */
        gsd_evrows_free(rows, n);
        if (gsd_store_event_seq_max(s, &max)) return GS_EIO;
        after = max - (int64_t)b->cap;
        skip = 1;
        if (gsd_store_events_after(s, after, b->cap, &rows, &n)) return GS_EIO;
    }
    max = n ? rows[n - 1].seq : after;
    /* render outside the lock: stream threads are not kept waiting */
    ring_ev *add = calloc(n ? n : 1, sizeof *add);
    if (!add) abort();
    for (size_t i = 0; i < n; i++) {
        add[i].seq = rows[i].seq;
        add[i].job = rows[i].job_id;
        gsd_evbus_kind(&rows[i], &add[i].kind);
        add[i].frame = gsd_evbus_frame(&rows[i], &add[i].len);
        if (!add[i].frame) abort();
        if (rows[i].user && rows[i].job_id > 0) { /* the row's string, taken over */
            add[i].user = rows[i].user;
            rows[i].user = NULL;
        }
    }
    gsd_evrows_free(rows, n);
    pthread_mutex_lock(&b->mu);
    if (skip) {
        /* the events in (collected, after] are only in the database: the ring starts over */
        while (b->n) evict(b);
        b->ring_lo = after + 1;
    }
    for (size_t i = 0; i < n; i++) {
        while (b->n && (b->n == b->cap || b->bytes + add[i].len > GSD_EVBUS_RING_BYTES)) evict(b);
        b->ev[(b->head + b->n) % b->cap] = add[i];
        b->n++;
        b->bytes += add[i].len;
    }
    b->collected = max;
    pthread_mutex_unlock(&b->mu);
    free(add);
    return n > 0x7fffffff ? 0x7fffffff : n ? (int)n : 1; /* 1: the ring started over */
}

void gsd_evbus_flush(gsd_evbus *b)
{
    if (!b) return;
    pthread_mutex_lock(&b->mu);
    if (b->visible != b->collected) {
        b->visible = b->collected;
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
}

void gsd_evbus_close(gsd_evbus *b, double seconds)
{
    if (!b) return;
    pthread_mutex_lock(&b->mu);
    b->closed = 1;
    pthread_cond_broadcast(&b->cv);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_nsec + (long long)(seconds * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    while (b->streams && pthread_cond_timedwait(&b->cv, &b->mu, &ts) == 0) {
    }
    pthread_mutex_unlock(&b->mu);
}

int64_t gsd_evbus_visible(gsd_evbus *b)
{
    pthread_mutex_lock(&b->mu);
    int64_t v = b->visible;
    pthread_mutex_unlock(&b->mu);
    return v;
}

int64_t gsd_evbus_ring_lo(gsd_evbus *b)
{
    pthread_mutex_lock(&b->mu);
    int64_t v = b->ring_lo;
    pthread_mutex_unlock(&b->mu);
    return v;
}

/* ---- streams ----------------------------------------------------------------------------------
 */

static count *find_count(count *t, size_t nt, const char *key, int add)
{
    count *free_slot = NULL;
    for (size_t i = 0; i < nt; i++) {
        if (t[i].n && !strcmp(t[i].key, key)) return &t[i];
        if (!t[i].n && !free_slot) free_slot = &t[i];
    }
    if (!add || !free_slot) return NULL;
    snprintf(free_slot->key, sizeof free_slot->key, "%s", key);
    return free_slot;
}

int gsd_evbus_stream_open(gsd_evbus *b, const char *user, const char *client, const char **which)
{
    *which = NULL;
    pthread_mutex_lock(&b->mu);
    int rc = 0;
    count *u = find_count(b->users, b->lim.max_streams, user, 0);
    count *c = client ? find_count(b->clients, b->lim.max_streams, client, 0) : NULL;
    if (b->closed) {
        rc = GS_ESTATE;
    } else if (b->streams >= b->lim.max_streams) {
        rc = GS_EQUOTA;
        *which = "daemon";
    } else if (u && u->n >= b->lim.max_per_user) {
        rc = GS_EQUOTA;
        *which = "user";
    } else if (c && b->lim.max_per_client && c->n >= b->lim.max_per_client) {
        rc = GS_EQUOTA;
        *which = "client";
    } else {
        /* fewer streams than entries: a free entry exists in each table */
        if (!u) u = find_count(b->users, b->lim.max_streams, user, 1);
        if (client && !c) c = find_count(b->clients, b->lim.max_streams, client, 1);
        u->n++;
        if (c) c->n++;
        b->streams++;
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void gsd_evbus_stream_close(gsd_evbus *b, const char *user, const char *client)
{
    pthread_mutex_lock(&b->mu);
    count *u = find_count(b->users, b->lim.max_streams, user, 0);
    count *c = client ? find_count(b->clients, b->lim.max_streams, client, 0) : NULL;
    if (u) u->n--;
    if (c) c->n--;
    if (b->streams) b->streams--;
    if (b->closed) pthread_cond_broadcast(&b->cv); /* gsd_evbus_close waits for the last */
    pthread_mutex_unlock(&b->mu);
}

/* Index (0..n) of the first ring event with seq > after (mu held). */
static size_t first_after(const gsd_evbus *b, int64_t after)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->ev[(b->head + mid) % b->cap].seq <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int selected(const ring_ev *e, const gsd_evsel *sel)
{
    if (sel->kinds && !(sel->kinds & e->kind)) return 0;
    if (sel->job > 0 && e->job != sel->job) return 0;
    if (sel->user && e->kind == GSD_EVK_JOB && (!e->user || strcmp(e->user, sel->user))) return 0;
    return 1;
}

static void append(char **out, size_t *n, size_t *cap, const char *p, size_t k)
{
    if (*n + k + 1 > *cap) {
        size_t nc = *cap ? *cap : 4096;
        while (nc < *n + k + 1) nc *= 2;
        char *np = realloc(*out, nc);
        if (!np) abort();
        *out = np;
        *cap = nc;
    }
    memcpy(*out + *n, p, k);
    *n += k;
    (*out)[*n] = '\0';
}

int gsd_evbus_wait(gsd_evbus *b, const gsd_evsel *sel, int64_t *cursor, double until,
                   size_t max_bytes, char **out, size_t *n, size_t *cap)
{
    pthread_mutex_lock(&b->mu);
    for (;;) {
        if (b->closed) {
            pthread_mutex_unlock(&b->mu);
            return GSD_EVW_CLOSED;
        }
        if (b->visible > *cursor && (sel->upto <= 0 || *cursor < sel->upto)) break;
        double left = until - mono_now();
        if (left <= 0) {
            pthread_mutex_unlock(&b->mu);
            return GSD_EVW_TIMEOUT;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(left * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    }
    if (*cursor + 1 < b->ring_lo) {
        pthread_mutex_unlock(&b->mu);
        return GSD_EVW_BEHIND;
    }
    int64_t last = b->visible;
    if (sel->upto > 0 && sel->upto < last) last = sel->upto;
    size_t start = *n;
    size_t i = first_after(b, *cursor);
    for (; i < b->n; i++) {
        const ring_ev *e = &b->ev[(b->head + i) % b->cap];
        if (e->seq > last) break;
        if (*n > start && *n - start >= max_bytes) break;
        if (selected(e, sel)) append(out, n, cap, e->frame, e->len);
        *cursor = e->seq;
    }
    if (i == b->n || b->ev[(b->head + i) % b->cap].seq > last) *cursor = last;
    pthread_mutex_unlock(&b->mu);
    return GSD_EVW_DATA;
}
