/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn.c - who may hold a connection and how fast a client may fail or
 * submit: connection admission (per-client caps, headroom, a request-head
 * deadline), failed-authentication backoff per client address and the
 * per-user submit rate.  http.c calls in here; nothing here parses HTTP.
 *
 * Connections (docs/daemon.md, Security, "Connections and rates"):
 *   - every connection has a client key: the peer's uid on the Unix socket;
 *     on TCP the peer's IPv4 address, except that all of 127.0.0.0/8 (and
 *     ::1, and IPv4-mapped loopback) is one key, "loopback" (any local user
 *     may pick any source address there), and an IPv6 address is keyed by
 *     its /64 (one host or site usually holds a whole /64);
 *   - a connection must send a complete request head within
 *     --header-timeout seconds of connecting (and of finishing its previous
 *     request on a kept-alive connection); a watchdog thread shuts down the
 *     ones that do not (a slow-loris client cannot keep one open by
 *     trickling bytes, which libmicrohttpd's idle timeout allows);
 *   - a client key holds at most --max-conn-per-client connections; a new
 *     one beyond that first closes that client's oldest connection still
 *     waiting for its request head, and is refused if there is none;
 *   - connections waiting for their request head may fill a listener only
 *     up to --max-connections minus a reserve (1/8, at least 4): past that a
 *     new one closes the oldest waiting one.  A client that sends its request
 *     at once (the CLI, a token holder) always finds room, whatever idle or
 *     half-open connections others pile up; the Unix socket has its own
 *     listener, so TCP floods never reach local users.
 *
 * Rates: token buckets.  A failed bearer-token check costs the client
 * key one of GSD_AUTHFAIL_BURST tokens, refilled at GSD_AUTHFAIL_RATE
 * per second, and one of the daemon-wide budget (GSD_AUTHFAIL_GLOBAL_BURST,
 * refilled at GSD_AUTHFAIL_GLOBAL_RATE per second), so that many addresses
 * together cannot make more PBKDF2 checks than that; with none left in
 * either, a request whose token is not already verified (cached) is answered
 * 429 without being checked.  --submit-rate R gives
 * each user a bucket of max(1, R) submits refilled at R per second.
 *
 * Invariants: the connection list, the buckets and the counters are guarded
 * by net->mu; a connection is in the list from its STARTED notification to
 * its CLOSED one, so its file descriptor is open while the watchdog may
 * shut it down (shutdown(), never close(): libmicrohttpd owns the fd).
 * Bucket tables are fixed-size (memory does not grow with the number of
 * clients); when full, the entry idle longest is reused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "gsd.h"

#define NBUCKETS 512

typedef struct bucket {
    char key[GSD_USER_MAX];
    double tokens, last;
} bucket;

struct gsd_net {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t watchdog;
    int running, stop;
    gsd_conn *head, *tail; /* in arrival order: the oldest first */
    unsigned waiting[2];   /* connections waiting for a request head: [0] TCP, [1] socket */
    uint64_t refused, closed_slow;
    bucket authfail[NBUCKETS];
    bucket authfail_all; /* the daemon-wide failed-check budget */
    bucket submits[NBUCKETS];
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int same_client(const gsd_conn *a, const gsd_conn *b)
{
    if (a->local != b->local) return 0;
    return a->local ? a->uid == b->uid : !strcmp(a->addr, b->addr);
}

/* Close a connection still waiting for its request head (net->mu held). */
static void cut(gsd_net *n, gsd_conn *k)
{
    if (k->cut || k->head) return;
    k->cut = 1;
    n->waiting[k->local]--;
    shutdown(k->fd, SHUT_RDWR);
}

static void *watchdog(void *arg)
{
    gsd *g = arg;
    gsd_net *n = g->net;
    double limit = g->o.header_timeout > 0 ? g->o.header_timeout : 5;
    pthread_mutex_lock(&n->mu);
    while (!n->stop) {
        double now = mono();
        for (gsd_conn *k = n->head; k; k = k->next)
            if (!k->head && !k->cut && now - k->t0 > limit) {
                cut(n, k);
                n->closed_slow++;
            }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 200 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&n->cv, &n->mu, &ts);
    }
    pthread_mutex_unlock(&n->mu);
    return NULL;
}

int gsd_net_start(gsd *g, gs_diag *d)
{
    gsd_net *n = calloc(1, sizeof *n);
    if (!n) return gs_diag_set(d, GS_ENOMEM, 0, 0, "out of memory");
    pthread_mutex_init(&n->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->cv, &ca);
    pthread_condattr_destroy(&ca);
    g->net = n;
    if (pthread_create(&n->watchdog, NULL, watchdog, g) != 0) {
        gsd_net_stop(g);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot start the connection watchdog thread");
    }
    n->running = 1;
    return 0;
}

void gsd_net_stop(gsd *g)
{
    gsd_net *n = g->net;
    if (!n) return;
    if (n->running) {
        pthread_mutex_lock(&n->mu);
        n->stop = 1;
        pthread_cond_signal(&n->cv);
        pthread_mutex_unlock(&n->mu);
        pthread_join(n->watchdog, NULL);
    }
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cv);
    free(n);
    g->net = NULL;
}

/* The client key of a TCP peer: "loopback" for 127.0.0.0/8, ::1 and IPv4-mapped loopback;
 * "PREFIX::/64" for another IPv6 address; the address itself for IPv4; "?" when unknown. */
static void client_key(const struct sockaddr *sa, char *out, size_t cap)
{
    snprintf(out, cap, "?");
    if (!sa) return;
    if (sa->sa_family == AF_INET) {
        const struct in_addr *a = &((const struct sockaddr_in *)sa)->sin_addr;
        if ((ntohl(a->s_addr) >> 24) == 127)
            snprintf(out, cap, "loopback");
        else
            inet_ntop(AF_INET, a, out, (socklen_t)cap);
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127)) {
            snprintf(out, cap, "loopback");
        } else if (IN6_IS_ADDR_V4MAPPED(a)) {
            inet_ntop(AF_INET, &a->s6_addr[12], out, (socklen_t)cap);
        } else {
            struct in6_addr p = *a;
            memset(&p.s6_addr[8], 0, 8);
            char t[INET6_ADDRSTRLEN];
            inet_ntop(AF_INET6, &p, t, sizeof t);
            snprintf(out, cap, "%s/64", t);
        }
    }
}

static unsigned reserve_of(unsigned max)
{
    unsigned r = max / 8;
    if (r < 4) r = 4;
    return r < max ? r : max - 1;
}

void gsd_net_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                    enum MHD_ConnectionNotificationCode code)
{
    gsd *g = cls;
    gsd_net *n = g->net;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        gsd_conn *k = *socket_context;
        if (!k) return;
        pthread_mutex_lock(&n->mu);
        if (!k->head && !k->cut) n->waiting[k->local]--;
        if (k->prev)
            k->prev->next = k->next;
        else
            n->head = k->next;
        if (k->next)
            k->next->prev = k->prev;
        else
            n->tail = k->prev;
        pthread_mutex_unlock(&n->mu);
        free(k);
        *socket_context = NULL;
        return;
    }
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!fi) return;
    gsd_conn *k = calloc(1, sizeof *k);
    if (!k) {
        shutdown(fi->connect_fd, SHUT_RDWR);
        return;
    }
    k->fd = fi->connect_fd;
    k->uid = (uid_t)-1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(k->fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_UNIX) {
        k->local = 1;
        if (gsd_peer_uid(k->fd, &k->uid)) k->uid = (uid_t)-1;
    } else {
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        client_key(ai ? ai->client_addr : NULL, k->addr, sizeof k->addr);
    }
    k->t0 = mono();
    *socket_context = k;
    unsigned per = g->o.max_conn_per_client ? g->o.max_conn_per_client : 64;
    unsigned pool = g->o.max_connections - reserve_of(g->o.max_connections);
    pthread_mutex_lock(&n->mu);
    /* this client at its cap: its oldest connection still waiting for a head makes room */
    unsigned mine = 0;
    gsd_conn *oldest_mine = NULL, *oldest_any = NULL;
    for (gsd_conn *o = n->head; o; o = o->next) {
        if (o->cut) continue;
        int waits = !o->head;
        if (same_client(o, k)) {
            mine++;
            if (waits && !oldest_mine) oldest_mine = o;
        }
        if (waits && o->local == k->local && !oldest_any) oldest_any = o;
    }
    int refuse = 0;
    if (mine >= per) {
        if (oldest_mine)
            cut(n, oldest_mine);
        else
            refuse = 1;
    }
    if (!refuse && n->waiting[k->local] >= pool) {
        /* the waiting pool is full: the oldest waiting connection of this listener goes */
        gsd_conn *o = oldest_any;
        if (o && o->cut)
            for (o = n->head; o && (o->cut || o->head || o->local != k->local); o = o->next) {
            }
        if (o)
            cut(n, o);
        else
            refuse = 1;
    }
    k->prev = n->tail;
    if (n->tail)
        n->tail->next = k;
    else
        n->head = k;
    n->tail = k;
    n->waiting[k->local]++;
    if (refuse) {
        cut(n, k);
        n->refused++;
    }
    pthread_mutex_unlock(&n->mu);
}

gsd_conn *gsd_net_conn(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

void gsd_net_head(gsd *g, gsd_conn *k)
{
    if (!k) return;
    pthread_mutex_lock(&g->net->mu);
    if (!k->head && !k->cut) g->net->waiting[k->local]--;
    k->head = 1;
    pthread_mutex_unlock(&g->net->mu);
}

void gsd_net_done(gsd *g, gsd_conn *k)
{
    if (!k) return;
    pthread_mutex_lock(&g->net->mu);
    if (k->head && !k->cut) {
        k->head = 0;
        k->t0 = mono();
        g->net->waiting[k->local]++;
    }
    pthread_mutex_unlock(&g->net->mu);
}

/* The bucket of key (net->mu held), refilled to now; a full table reuses the entry idle
 * longest (it would be full again by now anyway, or nearly). */
static bucket *take(bucket *t, int nt, const char *key, double cap, double rate, double now)
{
    bucket *b = NULL, *idle = &t[0];
    for (int i = 0; i < nt; i++) {
        if (t[i].key[0] && !strcmp(t[i].key, key)) {
            b = &t[i];
            break;
        }
        if (!t[i].key[0]) {
            if (idle->key[0]) idle = &t[i];
        } else if (idle->key[0] && t[i].last < idle->last) {
            idle = &t[i];
        }
    }
    if (!b) {
        b = idle;
        snprintf(b->key, sizeof b->key, "%s", key);
        b->tokens = cap;
        b->last = now;
    }
    b->tokens += (now - b->last) * rate;
    if (b->tokens > cap) b->tokens = cap;
    b->last = now;
    return b;
}

static int wait_s(const bucket *b, double rate)
{
    double w = (1.0 - b->tokens) / rate;
    return w < 1 ? 1 : (int)ceil(w);
}

int gsd_net_authfail_wait(gsd *g, const gsd_conn *k)
{
    if (!k || k->local) return 0;
    gsd_net *n = g->net;
    double now = mono();
    pthread_mutex_lock(&n->mu);
    bucket *b = take(n->authfail, NBUCKETS, k->addr, GSD_AUTHFAIL_BURST, GSD_AUTHFAIL_RATE, now);
    int w = b->tokens >= 1 ? 0 : wait_s(b, GSD_AUTHFAIL_RATE);
    bucket *all =
        take(&n->authfail_all, 1, "*", GSD_AUTHFAIL_GLOBAL_BURST, GSD_AUTHFAIL_GLOBAL_RATE, now);
    if (!w && all->tokens < 1) w = wait_s(all, GSD_AUTHFAIL_GLOBAL_RATE);
    pthread_mutex_unlock(&n->mu);
    return w;
}

void gsd_net_authfail(gsd *g, const gsd_conn *k)
{
    if (!k || k->local) return;
    gsd_net *n = g->net;
    double now = mono();
    pthread_mutex_lock(&n->mu);
    bucket *b = take(n->authfail, NBUCKETS, k->addr, GSD_AUTHFAIL_BURST, GSD_AUTHFAIL_RATE, now);
    b->tokens -= 1;
    if (b->tokens < 0) b->tokens = 0;
    b = take(&n->authfail_all, 1, "*", GSD_AUTHFAIL_GLOBAL_BURST, GSD_AUTHFAIL_GLOBAL_RATE, now);
    b->tokens -= 1;
    if (b->tokens < 0) b->tokens = 0;
    pthread_mutex_unlock(&n->mu);
}

int gsd_net_submit_wait(gsd *g, const char *user)
{
    double rate = g->o.submit_rate;
    if (rate <= 0) return 0;
    double cap = rate < 1 ? 1 : rate;
    pthread_mutex_lock(&g->net->mu);
    bucket *b = take(g->net->submits, NBUCKETS, user, cap, rate, mono());
    int w = 0;
    if (b->tokens >= 1)
        b->tokens -= 1;
    else
        w = wait_s(b, rate);
    pthread_mutex_unlock(&g->net->mu);
    return w;
}

void gsd_net_counts(gsd *g, uint64_t *refused, uint64_t *closed_slow)
{
    pthread_mutex_lock(&g->net->mu);
    *refused = g->net->refused;
    *closed_slow = g->net->closed_slow;
    pthread_mutex_unlock(&g->net->mu);
}
