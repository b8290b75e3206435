/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client.c - the CLI's HTTP client: a small HTTP/1.1 client of its own for the daemon's Unix
 * socket (the default and the common case), libcurl (loaded with dlopen when first needed) for
 * TCP.  libcurl is not linked: its dependencies (TLS, Kerberos, LDAP...) cost each CLI process
 * about 5 ms to load, more than a whole request over the socket.
 *
 * The server is "unix:PATH" (the daemon's Unix socket: the kernel tells the
 * daemon who the caller is, so no X-Gsched-User is sent), an http:// URL or
 * a bare host:port; none means the default socket (gsd_default_socket), and
 * when that is the user's own socket and it refuses connections (a stale
 * socket of a killed daemon) the system one (a root daemon's) is tried next.
 * One request per call, bounded by a timeout; a transport failure (refused,
 * timed out, unresolvable) is reported as "unreachable" (GS_EIO, status 0)
 * so the CLI can exit with code 3.  A streamed request (gsd_client_stream: the
 * event stream, `gsched run`) hands a 2xx body over piece by piece as it comes
 * (the socket: an incremental chunked decoder, bodydec; TCP: curl's write
 * callback) with no total timeout, only an idle one; gsd_sse parses
 * Server-Sent Events out of such pieces.
 *
 * Invariants: the response body is always NUL-terminated and owned by the
 * gsd_resp; a Unix socket is connected to only when gsd_socket_trusted
 * accepts it (no other user could have planted it), and no Authorization
 * header is ever sent over a Unix socket (the daemon identifies its peer by
 * the kernel's word and ignores tokens there, so sending one could only leak
 * it).  The socket client sends "Connection: close" and reads the response to
 * the end of the stream (a body by Content-Length, chunked or to EOF).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CURL_DISABLE_TYPECHECK 1 /* called through pointers, not curl's macros */
#include <curl/curl.h>

#include "daemon.h"

typedef struct sink {
    char *p;
    size_t n, cap;
    int64_t log_size;
    int retry_after;
    char *ctype;
} sink;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    sink *s = ud;
    size_t k = size * nmemb;
    if (s->n + k + 1 > s->cap) {
        size_t nc = s->cap ? s->cap : 4096;
        while (nc < s->n + k + 1) nc *= 2;
        char *np = realloc(s->p, nc);
        if (!np) return 0;
        s->p = np;
        s->cap = nc;
    }
    memcpy(s->p + s->n, ptr, k);
    s->n += k;
    s->p[s->n] = '\0';
    return k;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    sink *s = ud;
    size_t n = size * nitems;
    if (n > 11 && !strncasecmp(buf, "X-Log-Size:", 11)) s->log_size = strtoll(buf + 11, NULL, 10);
    if (n > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
        /* delta-seconds only (the daemon never sends an HTTP date); buf is not NUL-terminated */
        char v[24];
        size_t l = n - 12 < sizeof v - 1 ? n - 12 : sizeof v - 1;
        memcpy(v, buf + 12, l);
        v[l] = '\0';
        char *p = v, *e;
        while (*p == ' ' || *p == '\t') p++;
        long x = strtol(p, &e, 10);
        while (*e == ' ' || *e == '\t' || *e == '\r' || *e == '\n') e++;
        s->retry_after = e != p && !*e && x >= 0 && x <= 86400 ? (int)x : -1;
    }
    return n;
}

void gsd_resp_release(gsd_resp *r)
{
    if (!r) return;
    free(r->body);
    free(r->content_type);
    r->body = NULL;
    r->content_type = NULL;
}

/* ---- the Unix socket: HTTP/1.1 of its own ------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for fd to be ready for ev until deadline (<= 0: no deadline); 0, or -1 with errno
 * (ETIMEDOUT). */
static int wait_fd(int fd, short ev, double deadline)
{
    for (;;) {
        double left = deadline > 0 ? deadline - now_s() : 1;
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, ev, 0};
        int n = poll(&p, 1, deadline > 0 ? (int)(left * 1000) + 1 : -1);
        if (n > 0) return 0;
        if (n < 0 && errno != EINTR) return -1;
    }
}

static void buf_add(sink *s, const char *p, size_t k)
{
    if (k && !on_data((char *)p, 1, k, s)) abort(); /* out of memory */
}

/* Decode a chunked body in place; the new length, or (size_t)-1 when it is malformed. */
static size_t unchunk(char *b, size_t n)
{
    size_t in = 0, out = 0;
    for (;;) {
        char *e;
        if (in >= n) return (size_t)-1;
        unsigned long long k = strtoull(b + in, &e, 16);
        if (e == b + in) return (size_t)-1;
        char *nl = memchr(e, '\n', n - (size_t)(e - b));
        if (!nl) return (size_t)-1;
        in = (size_t)(nl - b) + 1;
        if (k == 0) return out;
        if (k > n - in) return (size_t)-1;
        memmove(b + out, b + in, (size_t)k);
        out += (size_t)k;
        in += (size_t)k;
        if (in < n && b[in] == '\r') in++;
        if (in < n && b[in] == '\n') in++;
    }
}

/* Connect to the socket at path and send one request (the Accept header: accept); the
 * connected fd, or -1 with err set (*refused: the connection was refused or the socket is
 * gone, nothing was sent). */
static int unix_send(const char *path_sock, const char *method, const char *path, const char *body,
                     size_t len, const char *content_type, const char *const *extra,
                     const char *accept, double deadline, int *refused, char *err, size_t cap)
{
    *refused = 0;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path_sock) >= sizeof a.sun_path) {
        snprintf(err, cap, "socket path too long");
        return -1;
    }
    memcpy(a.sun_path, path_sock, strlen(path_sock) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, cap, "socket: %s", strerror(errno));
        return -1;
    }
    struct timeval tv = {5, 0}; /* a full backlog: connect waits at most 5 s (as curl did) */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        int e = errno;
        close(fd);
        *refused = e == ECONNREFUSED || e == ENOENT;
        snprintf(err, cap, "Couldn't connect to server (%s)", strerror(e));
        return -1;
    }
    sink rq = {NULL, 0, 0, -1, -1, NULL};
    char line[1024];
    snprintf(line, sizeof line,
             "%s %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: gsched/" GSCHED_VERSION
             "\r\nConnection: close\r\nX-Gsched-Client: 1\r\nAccept: %s\r\n",
             method, path, accept);
    buf_add(&rq, line, strlen(line));
    if (content_type) {
        snprintf(line, sizeof line, "Content-Type: %s\r\n", content_type);
        buf_add(&rq, line, strlen(line));
    }
    for (size_t i = 0; extra && extra[i]; i++) {
        buf_add(&rq, extra[i], strlen(extra[i]));
        buf_add(&rq, "\r\n", 2);
    }
    if (body) {
        snprintf(line, sizeof line, "Content-Length: %zu\r\n", len);
        buf_add(&rq, line, strlen(line));
    }
    buf_add(&rq, "\r\n", 2);
    if (body && len) buf_add(&rq, body, len);
    size_t off = 0;
    int rc = 0;
    while (off < rq.n) {
        if (wait_fd(fd, POLLOUT, deadline)) {
            rc = -1;
            break;
        }
        ssize_t w = send(fd, rq.p + off, rq.n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            break; /* the daemon answered early (a body too large) and closed: read it */
        } else if (w < 0 && errno != EINTR && errno != EAGAIN) {
            rc = -1;
            break;
        }
    }
    free(rq.p);
    if (rc) {
        int e = errno;
        close(fd);
        snprintf(err, cap, "%s", e == ETIMEDOUT ? "Timeout was reached" : strerror(e));
        return -1;
    }
    return fd;
}

/* Read from fd into raw until the end of the stream, or (stop_at_head) until the head is
 * complete; each wait ends at deadline.  0, or -1 with errno. */
static int unix_read(int fd, sink *raw, double deadline, int stop_at_head)
{
    for (;;) {
        if (stop_at_head && raw->n && strstr(raw->p, "\r\n\r\n")) return 0;
        if (wait_fd(fd, POLLIN, deadline)) return -1;
        char b[16384];
        ssize_t k = recv(fd, b, sizeof b, MSG_DONTWAIT);
        if (k > 0)
            buf_add(raw, b, (size_t)k);
        else if (k == 0)
            return 0;
        else if (errno != EINTR && errno != EAGAIN) {
            /* a reset after a complete response (the daemon closed first) still counts */
            if (!stop_at_head && raw->n && strstr(raw->p, "\r\n\r\n")) return 0;
            return -1;
        }
    }
}

/* The head of the answer in raw: status, the headers it keeps (into s), the framing.  The
 * start of the body, or NULL with err set. */
static char *parse_head(sink *raw, sink *s, long *status, int *chunked, long long *clen, char *err,
                        size_t cap)
{
    char *eoh = raw->p ? strstr(raw->p, "\r\n\r\n") : NULL;
    int code = 0;
    if (!eoh || sscanf(raw->p, "HTTP/%*d.%*d %d", &code) != 1 || code < 100 || code > 999) {
        snprintf(err, cap, "%s",
                 raw->n ? "the daemon's answer is not HTTP"
                        : "the daemon closed the connection without an answer");
        return NULL;
    }
    *status = code;
    *chunked = 0;
    *clen = -1;
    for (char *h = strstr(raw->p, "\r\n") + 2; h < eoh;) {
        char *end = strstr(h, "\r\n");
        size_t hl = (size_t)(end - h);
        on_header(h, 1, hl + 2, s);
        char *colon = memchr(h, ':', hl);
        if (colon) {
            size_t nl = (size_t)(colon - h);
            char *v = colon + 1;
            while (v < end && (*v == ' ' || *v == '\t')) v++;
            size_t vl = (size_t)(end - v);
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
            if (nl == 12 && !strncasecmp(h, "Content-Type", 12)) {
                free(s->ctype);
                s->ctype = strndup(v, vl);
                if (!s->ctype) abort();
            } else if (nl == 17 && !strncasecmp(h, "Transfer-Encoding", 17)) {
                *chunked = vl >= 7 && !strncasecmp(v + vl - 7, "chunked", 7);
            } else if (nl == 14 && !strncasecmp(h, "Content-Length", 14)) {
                *clen = strtoll(v, NULL, 10);
            }
        }
        h = end + 2;
    }
    return eoh + 4;
}

/* The whole body after the head (b, bl bytes of raw) into s.  0, or -1 with err set. */
static int whole_body(const char *method, long code, int chunked, long long clen, char *b,
                      size_t bl, sink *s, char *err, size_t cap)
{
    if (!strcmp(method, "HEAD") || code == 204 || code == 304) {
        bl = 0;
    } else if (chunked) {
        bl = unchunk(b, bl);
        if (bl == (size_t)-1) {
            snprintf(err, cap, "a malformed chunked answer");
            return -1;
        }
    } else if (clen >= 0 && (unsigned long long)clen < bl) {
        bl = (size_t)clen;
    }
    buf_add(s, b, bl);
    return 0;
}

/* One request over the socket at path.  0: a response (status, headers into s, body in s);
 * -1 with err set: no response; *refused: the connection was refused or the socket is gone
 * (nothing was sent). */
static int unix_request(const char *path_sock, const char *method, const char *path,
                        const char *body, size_t len, const char *content_type,
                        const char *const *extra, long timeout_s, sink *s, long *status,
                        int *refused, char *err, size_t cap)
{
    double deadline = now_s() + (double)(timeout_s > 0 ? timeout_s : 30);
    int fd = unix_send(path_sock, method, path, body, len, content_type, extra,
                       "application/json, application/problem+json", deadline, refused, err, cap);
    if (fd < 0) return -1;
    /* the response, to the end of the stream */
    sink raw = {NULL, 0, 0, -1, -1, NULL};
    int rc = unix_read(fd, &raw, deadline, 0);
    int e = errno;
    close(fd);
    if (rc) {
        free(raw.p);
        snprintf(err, cap, "%s", e == ETIMEDOUT ? "Timeout was reached" : strerror(e));
        return -1;
    }
    int chunked;
    long long clen;
    char *b = parse_head(&raw, s, status, &chunked, &clen, err, cap);
    rc = b ? whole_body(method, *status, chunked, clen, b, raw.n - (size_t)(b - raw.p), s, err, cap)
           : -1;
    free(raw.p);
    return rc;
}

/* ---- streaming: the body of a 2xx answer, piece by piece ---------------------------------- */

/* An incremental decoder of a body's framing: to the end of the stream, Content-Length bytes,
 * or chunked (RFC 9112 7.1: size line with optional extensions, data, CRLF; a 0 chunk, then
 * trailer lines to a blank one). */
typedef struct bodydec {
    enum { BD_EOF, BD_LENGTH, BD_CHUNKED } mode;
    unsigned long long left; /* bytes left in the body (LENGTH) or the current chunk */
    enum { CK_SIZE, CK_DATA, CK_CRLF, CK_TRAILER, CK_DONE } st;
    char size[24]; /* the hex digits of the size line */
    size_t nsize;
    int ext;      /* past the digits of the size line (extensions, spaces) */
    size_t tline; /* characters on the current trailer line */
    gsd_stream_fn cb;
    void *arg;
    int stopped; /* cb returned nonzero */
} bodydec;

/* Feed n bytes: 0 (more wanted), 1 (the body is complete or cb stopped), -1 (malformed). */
static int bd_feed(bodydec *d, const char *p, size_t n)
{
    if (d->mode == BD_EOF) {
        if (n && d->cb(d->arg, p, n)) d->stopped = 1;
        return d->stopped;
    }
    if (d->mode == BD_LENGTH) {
        size_t k = n < d->left ? n : (size_t)d->left;
        if (k && d->cb(d->arg, p, k)) d->stopped = 1;
        d->left -= k;
        return d->stopped || !d->left;
    }
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        switch (d->st) {
        case CK_SIZE:
            i++;
            if (c == '\n') {
                if (!d->nsize) return -1;
                d->size[d->nsize] = '\0';
                d->left = strtoull(d->size, NULL, 16);
                d->nsize = 0;
                d->ext = 0;
                d->st = d->left ? CK_DATA : CK_TRAILER;
                d->tline = 0;
            } else if (!d->ext && isxdigit((unsigned char)c)) {
                if (d->nsize + 1 >= sizeof d->size) return -1; /* over 2^88: not a size */
                d->size[d->nsize++] = c;
            } else if (c == ';' || c == ' ' || c == '\t' || c == '\r') {
                d->ext = 1; /* extensions are ignored */
            } else if (!d->ext) {
                return -1;
            }
            break;
        case CK_DATA: {
            size_t k = n - i < d->left ? n - i : (size_t)d->left;
            if (d->cb(d->arg, p + i, k)) {
                d->stopped = 1;
                return 1;
            }
            i += k;
            d->left -= k;
            if (!d->left) d->st = CK_CRLF;
            break;
        }
        case CK_CRLF:
            i++;
            if (c == '\n')
                d->st = CK_SIZE;
            else if (c != '\r')
                return -1;
            break;
        case CK_TRAILER:
            i++;
            if (c == '\n') {
                if (!d->tline) {
                    d->st = CK_DONE;
                    return 1;
                }
                d->tline = 0;
            } else if (c != '\r') {
                d->tline++;
            }
            break;
        case CK_DONE: return 1;
        }
    }
    return d->st == CK_DONE;
}

/* A streamed request over the socket.  As unix_request, except that a 2xx body goes to cb;
 * -1 after the head keeps *status and sets err. */
static int unix_stream(const char *path_sock, const char *method, const char *path,
                       const char *body, size_t len, const char *content_type,
                       const char *const *extra, long timeout_s, long idle_s, gsd_stream_fn cb,
                       void *arg, gsd_resp *r, sink *s, int *refused, char *err, size_t cap)
{
    double t = now_s();
    double deadline = t + (double)(timeout_s > 0 ? timeout_s : 30);
    int fd = unix_send(path_sock, method, path, body, len, content_type, extra,
                       "text/event-stream, application/json, application/problem+json", deadline,
                       refused, err, cap);
    if (fd < 0) return -1;
    sink raw = {NULL, 0, 0, -1, -1, NULL};
    int rc = unix_read(fd, &raw, idle_s > 0 ? now_s() + (double)idle_s : 0, 1);
    char *b = NULL;
    int chunked = 0;
    long long clen = -1;
    if (rc)
        snprintf(err, cap, "%s", errno == ETIMEDOUT ? "Timeout was reached" : strerror(errno));
    else
        b = parse_head(&raw, s, &r->status, &chunked, &clen, err, cap);
    if (!b) {
        close(fd);
        free(raw.p);
        return -1;
    }
    size_t bl = raw.n - (size_t)(b - raw.p);
    if (r->status < 200 || r->status > 299 || !strcmp(method, "HEAD") || r->status == 204) {
        /* not streamed: collect the rest (an error's problem+json) as gsd_request would */
        size_t off = (size_t)(b - raw.p);
        rc = unix_read(fd, &raw, deadline, 0);
        close(fd);
        if (rc) {
            snprintf(err, cap, "%s", errno == ETIMEDOUT ? "Timeout was reached" : strerror(errno));
            free(raw.p);
            return -1;
        }
        rc = whole_body(method, r->status, chunked, clen, raw.p + off, raw.n - off, s, err, cap);
        free(raw.p);
        return rc;
    }
    r->content_type = s->ctype;
    s->ctype = NULL;
    bodydec d = {chunked ? BD_CHUNKED : clen >= 0 ? BD_LENGTH : BD_EOF,
                 0,
                 CK_SIZE,
                 {0},
                 0,
                 0,
                 0,
                 cb,
                 arg,
                 0};
    if (d.mode == BD_LENGTH) d.left = (unsigned long long)clen;
    int st = d.mode == BD_LENGTH && !d.left ? 1 : bd_feed(&d, b, bl);
    free(raw.p);
    while (st == 0) {
        if (wait_fd(fd, POLLIN, idle_s > 0 ? now_s() + (double)idle_s : 0)) {
            snprintf(err, cap, "%s",
                     errno == ETIMEDOUT ? "nothing came from the daemon for too long (idle timeout)"
                                        : strerror(errno));
            st = -2;
            break;
        }
        char buf[16384];
        ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (k > 0) {
            st = bd_feed(&d, buf, (size_t)k);
            if (st < 0) snprintf(err, cap, "a malformed chunked answer");
        } else if (k == 0) {
            /* the end of the stream: the end of the body only when it has no framing (or the
             * trailer of a final chunk is cut short) */
            st = d.mode == BD_EOF || (d.mode == BD_CHUNKED && d.st == CK_TRAILER) ? 1 : -2;
            if (st < 0) snprintf(err, cap, "the daemon closed the stream in the middle of it");
        } else if (errno != EINTR && errno != EAGAIN) {
            snprintf(err, cap, "%s", strerror(errno));
            st = -2;
        }
    }
    close(fd);
    return st > 0 ? 0 : -1;
}

/* ---- TCP: libcurl, loaded when first needed ------------------------------------------------- */

static struct {
    int tried, ok;
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*setopt)(CURL *, CURLoption, ...);
    CURLcode (*perform)(CURL *);
    CURLcode (*getinfo)(CURL *, CURLINFO, ...);
    void (*cleanup)(CURL *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    const char *(*strerror)(CURLcode);
} cu;

static int curl_load(char *err, size_t cap)
{
    if (cu.tried) {
        if (!cu.ok) snprintf(err, cap, "cannot load libcurl (libcurl.so.4)");
        return cu.ok ? 0 : -1;
    }
    cu.tried = 1;
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL); /* its soname since 2006 */
    if (!h) {
        snprintf(err, cap, "cannot load libcurl (libcurl.so.4), needed for TCP: %s", dlerror());
        return -1;
    }
#define CU_SYM(field, name)                               \
    do {                                                  \
        *(void **)(&cu.field) = dlsym(h, name);           \
        if (!cu.field) {                                  \
            snprintf(err, cap, "libcurl lacks %s", name); \
            return -1;                                    \
        }                                                 \
    } while (0)
    CU_SYM(global_init, "curl_global_init");
    CU_SYM(easy_init, "curl_easy_init");
    CU_SYM(setopt, "curl_easy_setopt");
    CU_SYM(perform, "curl_easy_perform");
    CU_SYM(getinfo, "curl_easy_getinfo");
    CU_SYM(cleanup, "curl_easy_cleanup");
    CU_SYM(slist_append, "curl_slist_append");
    CU_SYM(slist_free_all, "curl_slist_free_all");
    CU_SYM(strerror, "curl_easy_strerror");
#undef CU_SYM
    cu.global_init(CURL_GLOBAL_DEFAULT);
    cu.ok = 1;
    return 0;
}

/* A curl handle for one request to server (headers into *hdrs, the URL into *url: both the
 * caller's to free after the transfer), or NULL with r->err set. */
static CURL *tcp_prepare(const gsd_client *c, const char *server, const char *method,
                         const char *path, const char *body, size_t len, const char *content_type,
                         const char *const *extra_headers, const char *accept,
                         struct curl_slist **hdrs, char **url, gsd_resp *r)
{
    if (curl_load(r->err, sizeof r->err)) return NULL;
    CURL *h = cu.easy_init();
    if (!h) {
        snprintf(r->err, sizeof r->err, "cannot initialise libcurl");
        return NULL;
    }
    size_t ul = strlen(server) + strlen(path) + 32;
    *url = malloc(ul);
    if (!*url) abort();
    int has_scheme = strstr(server, "://") != NULL;
    size_t sl = strlen(server);
    while (sl && server[sl - 1] == '/') sl--;
    snprintf(*url, ul, "%s%.*s%s", has_scheme ? "" : "http://", (int)sl, server, path);
    *hdrs = NULL;
    char line[1024];
    if (c->token && *c->token) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", c->token);
        *hdrs = cu.slist_append(*hdrs, line);
    } else if (c->user && *c->user) {
        snprintf(line, sizeof line, "X-Gsched-User: %s", c->user);
        *hdrs = cu.slist_append(*hdrs, line);
    }
    if (content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        *hdrs = cu.slist_append(*hdrs, line);
    }
    /* every request: the daemon refuses state-changing ones without it (cross-site forgery) */
    *hdrs = cu.slist_append(*hdrs, "X-Gsched-Client: 1");
    *hdrs = cu.slist_append(*hdrs, "Expect:"); /* no 100-continue round trip */
    snprintf(line, sizeof line, "Accept: %s", accept);
    *hdrs = cu.slist_append(*hdrs, line);
    for (size_t i = 0; extra_headers && extra_headers[i]; i++)
        *hdrs = cu.slist_append(*hdrs, extra_headers[i]);
    cu.setopt(h, CURLOPT_URL, *url);
    cu.setopt(h, CURLOPT_CUSTOMREQUEST, method);
    cu.setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    cu.setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu.setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
    cu.setopt(h, CURLOPT_USERAGENT, "gsched/" GSCHED_VERSION);
    if (body) {
        cu.setopt(h, CURLOPT_POSTFIELDS, body);
        cu.setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (!strcmp(method, "GET")) {
        cu.setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (!strcmp(method, "HEAD")) {
        cu.setopt(h, CURLOPT_NOBODY, 1L); /* headers only */
    }
    return h;
}

static int tcp_request(const gsd_client *c, const char *server, const char *method,
                       const char *path, const char *body, size_t len, const char *content_type,
                       const char *const *extra_headers, gsd_resp *r)
{
    struct curl_slist *hdrs;
    char *url;
    CURL *h = tcp_prepare(c, server, method, path, body, len, content_type, extra_headers,
                          "application/json, application/problem+json", &hdrs, &url, r);
    if (!h) return GS_EIO;
    sink s = {NULL, 0, 0, -1, -1, NULL};
    cu.setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    cu.setopt(h, CURLOPT_WRITEDATA, &s);
    cu.setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    cu.setopt(h, CURLOPT_HEADERDATA, &s);
    cu.setopt(h, CURLOPT_TIMEOUT, c->timeout_s > 0 ? c->timeout_s : 30L);
    CURLcode cc = cu.perform(h);
    int rc = 0;
    if (cc != CURLE_OK) {
        snprintf(r->err, sizeof r->err, "cannot reach the gsched daemon at %s: %s", server,
                 cu.strerror(cc));
        free(s.p);
        rc = GS_EIO;
    } else {
        cu.getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        char *ct = NULL;
        cu.getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
        r->content_type = ct ? strdup(ct) : NULL;
        r->body = s.p ? s.p : calloc(1, 1);
        if (!r->body) abort();
        r->len = s.n;
        r->log_size = s.log_size;
        r->retry_after = s.retry_after;
    }
    cu.slist_free_all(hdrs);
    cu.cleanup(h);
    free(url);
    return rc;
}

/* A streamed transfer's state: the answer's status decides, at its first body byte, whether
 * the body goes to cb (2xx) or is collected (an error's problem+json). */
typedef struct tstream {
    CURL *h;
    gsd_resp *r;
    sink s;
    gsd_stream_fn cb;
    void *arg;
    int head, stopped;
    long idle_s; /* > 0: give up after this many seconds without a byte */
    double last; /* when the last byte came (monotonic seconds) */
    int idle;    /* given up for idleness */
} tstream;

/* curl's progress callback (at least once a second): the idle timeout, exact to the second
 * (CURLOPT_LOW_SPEED_TIME averages the speed over several seconds: it fires late). */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    tstream *t = ud;
    if (t->idle_s > 0 && now_s() - t->last > (double)t->idle_s) {
        t->idle = 1;
        return 1; /* abort the transfer */
    }
    return 0;
}

static size_t on_stream_header(char *buf, size_t size, size_t nitems, void *ud)
{
    tstream *t = ud;
    t->last = now_s();
    return on_header(buf, size, nitems, &t->s);
}

static void tstream_head(tstream *t)
{
    if (t->head) return;
    t->head = 1;
    cu.getinfo(t->h, CURLINFO_RESPONSE_CODE, &t->r->status);
    char *ct = NULL;
    cu.getinfo(t->h, CURLINFO_CONTENT_TYPE, &ct);
    t->r->content_type = ct ? strdup(ct) : NULL;
}

static size_t on_stream_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    tstream *t = ud;
    size_t k = size * nmemb;
    t->last = now_s();
    tstream_head(t);
    if (t->r->status < 200 || t->r->status > 299) return on_data(ptr, size, nmemb, &t->s);
    if (k && t->cb(t->arg, ptr, k)) {
        t->stopped = 1;
        return 0; /* curl ends the transfer (CURLE_WRITE_ERROR) */
    }
    return k;
}

static int tcp_stream(const gsd_client *c, const char *server, const char *method, const char *path,
                      const char *body, size_t len, const char *content_type,
                      const char *const *extra_headers, long idle_s, gsd_stream_fn cb, void *arg,
                      gsd_resp *r)
{
    struct curl_slist *hdrs;
    char *url;
    CURL *h = tcp_prepare(c, server, method, path, body, len, content_type, extra_headers,
                          "text/event-stream, application/json, application/problem+json", &hdrs,
                          &url, r);
    if (!h) return GS_EIO;
    tstream t = {h, r, {NULL, 0, 0, -1, -1, NULL}, cb, arg, 0, 0, idle_s, now_s(), 0};
    cu.setopt(h, CURLOPT_WRITEFUNCTION, on_stream_data);
    cu.setopt(h, CURLOPT_WRITEDATA, &t);
    cu.setopt(h, CURLOPT_HEADERFUNCTION, on_stream_header);
    cu.setopt(h, CURLOPT_HEADERDATA, &t);
    /* no total timeout: the idle one, by the progress callback */
    cu.setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    cu.setopt(h, CURLOPT_XFERINFODATA, &t);
    cu.setopt(h, CURLOPT_NOPROGRESS, 0L);
    CURLcode cc = cu.perform(h);
    tstream_head(&t);
    int rc = 0;
    if (cc != CURLE_OK && !t.stopped) {
        long st = 0;
        cu.getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        r->status = st;
        if (st)
            snprintf(r->err, sizeof r->err, "the stream from the gsched daemon at %s broke: %s",
                     server,
                     t.idle ? "nothing came from the daemon for too long (idle timeout)"
                            : cu.strerror(cc));
        else
            snprintf(r->err, sizeof r->err, "cannot reach the gsched daemon at %s: %s", server,
                     cu.strerror(cc));
        free(t.s.p);
        rc = GS_EIO;
    } else {
        r->body = t.s.p ? t.s.p : calloc(1, 1);
        if (!r->body) abort();
        r->len = t.s.n;
        r->log_size = t.s.log_size;
        r->retry_after = t.s.retry_after;
    }
    free(t.s.ctype);
    cu.slist_free_all(hdrs);
    cu.cleanup(h);
    free(url);
    return rc;
}

/* The server to call: c->server, else the default socket, with the system socket as the
 * fallback when the default is the user's own (into the caller's buffers).  0, or GS_EIO with
 * r->err set. */
static int pick_server(const gsd_client *c, char *defsock, char *syssock, size_t cap,
                       const char **server, const char **fallback, gsd_resp *r)
{
    *server = c->server;
    *fallback = NULL;
    if (*server && **server) return 0;
    memcpy(defsock, "unix:", 6);
    memcpy(syssock, "unix:", 6);
    if (gsd_default_socket(0, defsock + 5, cap - 5) || gsd_system_socket(syssock + 5, cap - 5)) {
        snprintf(r->err, sizeof r->err, "the default socket path is too long");
        return GS_EIO;
    }
    *server = defsock;
    if (strcmp(defsock, syssock)) *fallback = syssock;
    return 0;
}

static void resp_init(gsd_resp *r)
{
    memset(r, 0, sizeof *r);
    r->log_size = -1;
    r->retry_after = -1;
}

/* After a socket request: its result (rc, err) into r. */
static int unix_done(int rc, const char *server, const char *stale, const char *err, sink *s,
                     gsd_resp *r)
{
    if (rc) {
        if (r->status) /* the head came: the stream broke after it */
            snprintf(r->err, sizeof r->err, "the stream from the gsched daemon at %s broke: %s",
                     server, err);
        else
            snprintf(r->err, sizeof r->err, "cannot reach the gsched daemon at %s: %s%s%s%s",
                     server, err, stale ? " (nor at " : "", stale ? stale : "",
                     stale ? ", a socket that refuses connections: its daemon is gone?)" : "");
        free(s->p);
        free(s->ctype);
        return GS_EIO;
    }
    if (s->ctype) {
        free(r->content_type);
        r->content_type = s->ctype;
    }
    r->body = s->p ? s->p : calloc(1, 1);
    if (!r->body) abort();
    r->len = s->n;
    r->log_size = s->log_size;
    r->retry_after = s->retry_after;
    return 0;
}

int gsd_request(const gsd_client *c, const char *method, const char *path, const char *body,
                size_t len, const char *content_type, const char *const *extra_headers, gsd_resp *r)
{
    resp_init(r);
    char defsock[PATH_MAX + 8], syssock[PATH_MAX + 8];
    const char *server, *fallback;
    if (pick_server(c, defsock, syssock, sizeof defsock, &server, &fallback, r)) return GS_EIO;
    if (strncmp(server, "unix:", 5))
        return tcp_request(c, server, method, path, body, len, content_type, extra_headers, r);
    if (gsd_socket_trusted(server + 5, r->err, sizeof r->err)) return GS_EIO;
    sink s = {NULL, 0, 0, -1, -1, NULL};
    char err[512];
    int refused = 0;
    int rc = unix_request(server + 5, method, path, body, len, content_type, extra_headers,
                          c->timeout_s, &s, &r->status, &refused, err, sizeof err);
    const char *stale = NULL;
    if (rc && refused && fallback) {
        /* the user's own socket refuses connections (its daemon was killed): nothing was
         * sent; a root daemon may be serving on the system socket */
        stale = server;
        server = fallback;
        if (gsd_socket_trusted(server + 5, r->err, sizeof r->err)) return GS_EIO;
        rc = unix_request(server + 5, method, path, body, len, content_type, extra_headers,
                          c->timeout_s, &s, &r->status, &refused, err, sizeof err);
    }
    if (rc) r->status = 0;
    return unix_done(rc, server, stale, err, &s, r);
}

int gsd_client_stream(const gsd_client *c, const char *method, const char *path, const char *body,
                      size_t len, const char *content_type, const char *const *extra_headers,
                      long idle_s, gsd_stream_fn on_body, void *arg, gsd_resp *r)
{
    resp_init(r);
    char defsock[PATH_MAX + 8], syssock[PATH_MAX + 8];
    const char *server, *fallback;
    if (pick_server(c, defsock, syssock, sizeof defsock, &server, &fallback, r)) return GS_EIO;
    if (strncmp(server, "unix:", 5))
        return tcp_stream(c, server, method, path, body, len, content_type, extra_headers, idle_s,
                          on_body, arg, r);
    if (gsd_socket_trusted(server + 5, r->err, sizeof r->err)) return GS_EIO;
    sink s = {NULL, 0, 0, -1, -1, NULL};
    char err[512];
    int refused = 0;
    int rc = unix_stream(server + 5, method, path, body, len, content_type, extra_headers,
                         c->timeout_s, idle_s, on_body, arg, r, &s, &refused, err, sizeof err);
    const char *stale = NULL;
    if (rc && refused && fallback) {
        stale = server;
        server = fallback;
        if (gsd_socket_trusted(server + 5, r->err, sizeof r->err)) return GS_EIO;
        rc = unix_stream(server + 5, method, path, body, len, content_type, extra_headers,
                         c->timeout_s, idle_s, on_body, arg, r, &s, &refused, err, sizeof err);
    }
    return unix_done(rc, server, stale, err, &s, r);
}

/* ---- Server-Sent Events: an incremental parser ----------------------------------------------- */

void gsd_sse_init(gsd_sse *p, gsd_sse_fn on_event, void *arg)
{
    memset(p, 0, sizeof *p);
    p->on_event = on_event;
    p->arg = arg;
    p->max_line = (size_t)1 << 20;
}

void gsd_sse_release(gsd_sse *p)
{
    free(p->line);
    free(p->data);
    p->line = p->data = NULL;
    p->nline = p->capline = p->ndata = p->capdata = 0;
}

static int sse_grow(char **b, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need) nc *= 2;
    char *nb = realloc(*b, nc);
    if (!nb) return GS_ENOMEM;
    *b = nb;
    *cap = nc;
    return 0;
}

/* One complete line (p->line, NUL-terminated): a field, a comment or (empty) the end of an
 * event.  0 or the callback's value / GS_E*. */
static int sse_line(gsd_sse *p)
{
    char *l = p->line ? p->line : (char *)"";
    size_t n = p->nline;
    if (!n) { /* dispatch */
        int rc = 0;
        if (p->has_data) {
            if (p->ndata && p->data[p->ndata - 1] == '\n') p->ndata--; /* the last LF */
            p->data[p->ndata] = '\0';
            gsd_sse_event ev = {p->id, p->type[0] ? p->type : "message", p->data, p->ndata, 0};
            rc = p->on_event(p->arg, &ev);
        }
        p->ndata = 0;
        p->has_data = 0;
        p->type[0] = '\0';
        return rc;
    }
    if (l[0] == ':') {
        const char *t = l + 1;
        if (*t == ' ') t++;
        gsd_sse_event ev = {p->id, p->type[0] ? p->type : "message", t, strlen(t), 1};
        return p->on_event(p->arg, &ev);
    }
    char *colon = strchr(l, ':');
    const char *v = "";
    if (colon) {
        *colon = '\0';
        v = colon + 1;
        if (*v == ' ') v++;
    }
    size_t vl = strlen(v);
    if (!strcmp(l, "data")) {
        if (p->ndata + vl + 2 > p->max_line) return GS_ETOOBIG;
        if (sse_grow(&p->data, &p->capdata, p->ndata + vl + 2)) return GS_ENOMEM;
        memcpy(p->data + p->ndata, v, vl);
        p->ndata += vl;
        p->data[p->ndata++] = '\n';
        p->has_data = 1;
    } else if (!strcmp(l, "event")) {
        snprintf(p->type, sizeof p->type, "%s", v);
    } else if (!strcmp(l, "id")) {
        snprintf(p->id, sizeof p->id, "%s", v);
    } /* retry and unknown fields: ignored */
    return 0;
}

int gsd_sse_feed(gsd_sse *p, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (!p->started) { /* a UTF-8 BOM at the very start (EF BB BF) is skipped */
            static const char bom[] = "\xEF\xBB\xBF";
            if (c == bom[p->bom]) {
                p->started = ++p->bom == 3;
                continue;
            }
            p->started = 1;
            if (p->bom) { /* not a BOM after all: its bytes belong to the line */
                if (sse_grow(&p->line, &p->capline, p->bom + 1)) return GS_ENOMEM;
                memcpy(p->line, bom, p->bom);
                p->nline = p->bom;
            }
        }
        if (p->cr && c == '\n') { /* the LF of a CRLF */
            p->cr = 0;
            continue;
        }
        p->cr = c == '\r';
        if (c == '\r' || c == '\n') {
            if (sse_grow(&p->line, &p->capline, p->nline + 1)) return GS_ENOMEM;
            p->line[p->nline] = '\0';
            int rc = sse_line(p);
            p->nline = 0;
            if (rc) return rc;
            continue;
        }
        if (p->nline + 2 > p->max_line) return GS_ETOOBIG;
        if (sse_grow(&p->line, &p->capline, p->nline + 2)) return GS_ENOMEM;
        p->line[p->nline++] = c;
    }
    return 0;
}
