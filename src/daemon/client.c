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
 * so the CLI can exit with code 3.
 *
 * Invariants: the response body is always NUL-terminated and owned by the
 * gsd_resp; a Unix socket is connected to only when gsd_socket_trusted
 * accepts it (no other user could have planted it), and no Authorization
 * header is ever sent over a Unix socket (the daemon identifies its peer by
 * the kernel's word and ignores tokens there, so sending one could only leak
 * it).  The socket client sends "Connection: close" and reads the response to
 * the end of the stream (a body by Content-Length, chunked or to EOF).
 */
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

/* Wait for fd to be ready for ev until deadline; 0, or -1 with errno (ETIMEDOUT). */
static int wait_fd(int fd, short ev, double deadline)
{
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, ev, 0};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
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

/* One request over the socket at path.  0: a response (status, headers into s, body in s);
 * -1 with err set: no response; *refused: the connection was refused or the socket is gone
 * (nothing was sent). */
static int unix_request(const char *path_sock, const char *method, const char *path,
                        const char *body, size_t len, const char *content_type,
                        const char *const *extra, long timeout_s, sink *s, long *status,
                        int *refused, char *err, size_t cap)
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
    double deadline = now_s() + (double)(timeout_s > 0 ? timeout_s : 30);
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
             "\r\nConnection: close\r\nX-Gsched-Client: 1\r\n"
             "Accept: application/json, application/problem+json\r\n",
             method, path);
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
    /* the response, to the end of the stream */
    sink raw = {NULL, 0, 0, -1, -1, NULL};
    while (rc == 0) {
        if (wait_fd(fd, POLLIN, deadline)) {
            rc = -1;
            break;
        }
        char b[16384];
        ssize_t k = recv(fd, b, sizeof b, MSG_DONTWAIT);
        if (k > 0)
            buf_add(&raw, b, (size_t)k);
        else if (k == 0)
            break;
        else if (errno != EINTR && errno != EAGAIN) {
            /* a reset after a complete response (the daemon closed first) still counts */
            if (raw.n && strstr(raw.p, "\r\n\r\n")) break;
            rc = -1;
        }
    }
    int e = errno;
    close(fd);
    if (rc) {
        free(raw.p);
        snprintf(err, cap, "%s", e == ETIMEDOUT ? "Timeout was reached" : strerror(e));
        return -1;
    }
    char *eoh = raw.p ? strstr(raw.p, "\r\n\r\n") : NULL;
    int code = 0;
    if (!eoh || sscanf(raw.p, "HTTP/%*d.%*d %d", &code) != 1 || code < 100 || code > 999) {
        snprintf(err, cap, "%s",
                 raw.n ? "the daemon's answer is not HTTP"
                       : "the daemon closed the connection without an answer");
        free(raw.p);
        return -1;
    }
    *status = code;
    int chunked = 0;
    long long clen = -1;
    for (char *h = strstr(raw.p, "\r\n") + 2; h < eoh;) {
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
                chunked = vl >= 7 && !strncasecmp(v + vl - 7, "chunked", 7);
            } else if (nl == 14 && !strncasecmp(h, "Content-Length", 14)) {
                clen = strtoll(v, NULL, 10);
            }
        }
        h = end + 2;
    }
    char *b = eoh + 4;
    size_t bl = raw.n - (size_t)(b - raw.p);
    if (!strcmp(method, "HEAD") || code == 204 || code == 304) {
        bl = 0;
    } else if (chunked) {
        bl = unchunk(b, bl);
        if (bl == (size_t)-1) {
            free(raw.p);
            snprintf(err, cap, "a malformed chunked answer");
            return -1;
        }
    } else if (clen >= 0 && (unsigned long long)clen < bl) {
        bl = (size_t)clen;
    }
    buf_add(s, b, bl);
    free(raw.p);
    return 0;
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

static int tcp_request(const gsd_client *c, const char *server, const char *method,
                       const char *path, const char *body, size_t len, const char *content_type,
                       const char *const *extra_headers, gsd_resp *r)
{
    if (curl_load(r->err, sizeof r->err)) return GS_EIO;
    CURL *h = cu.easy_init();
    if (!h) {
        snprintf(r->err, sizeof r->err, "cannot initialise libcurl");
        return GS_EIO;
    }
    size_t ul = strlen(server) + strlen(path) + 32;
    char *url = malloc(ul);
    if (!url) abort();
    int has_scheme = strstr(server, "://") != NULL;
    size_t sl = strlen(server);
    while (sl && server[sl - 1] == '/') sl--;
    snprintf(url, ul, "%s%.*s%s", has_scheme ? "" : "http://", (int)sl, server, path);
    sink s = {NULL, 0, 0, -1, -1, NULL};
    struct curl_slist *hdrs = NULL;
    char line[1024];
    if (c->token && *c->token) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", c->token);
        hdrs = cu.slist_append(hdrs, line);
    } else if (c->user && *c->user) {
        snprintf(line, sizeof line, "X-Gsched-User: %s", c->user);
        hdrs = cu.slist_append(hdrs, line);
    }
    if (content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        hdrs = cu.slist_append(hdrs, line);
    }
    /* every request: the daemon refuses state-changing ones without it (cross-site forgery) */
    hdrs = cu.slist_append(hdrs, "X-Gsched-Client: 1");
    hdrs = cu.slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    hdrs = cu.slist_append(hdrs, "Accept: application/json, application/problem+json");
    for (size_t i = 0; extra_headers && extra_headers[i]; i++)
        hdrs = cu.slist_append(hdrs, extra_headers[i]);
    cu.setopt(h, CURLOPT_URL, url);
    cu.setopt(h, CURLOPT_CUSTOMREQUEST, method);
    cu.setopt(h, CURLOPT_HTTPHEADER, hdrs);
    cu.setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    cu.setopt(h, CURLOPT_WRITEDATA, &s);
    cu.setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    cu.setopt(h, CURLOPT_HEADERDATA, &s);
    cu.setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu.setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
    cu.setopt(h, CURLOPT_TIMEOUT, c->timeout_s > 0 ? c->timeout_s : 30L);
    cu.setopt(h, CURLOPT_USERAGENT, "gsched/" GSCHED_VERSION);
    if (body) {
        cu.setopt(h, CURLOPT_POSTFIELDS, body);
        cu.setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (!strcmp(method, "GET")) {
        cu.setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (!strcmp(method, "HEAD")) {
        cu.setopt(h, CURLOPT_NOBODY, 1L); /* headers only */
    }
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

int gsd_request(const gsd_client *c, const char *method, const char *path, const char *body,
                size_t len, const char *content_type, const char *const *extra_headers, gsd_resp *r)
{
    memset(r, 0, sizeof *r);
    r->log_size = -1;
    r->retry_after = -1;
    char defsock[PATH_MAX + 8], syssock[PATH_MAX + 8];
    const char *server = c->server;
    const char *fallback = NULL; /* the system socket, when the default is the user's own */
    if (!server || !*server) {
        memcpy(defsock, "unix:", 6);
        memcpy(syssock, "unix:", 6);
        if (gsd_default_socket(0, defsock + 5, sizeof defsock - 5) ||
            gsd_system_socket(syssock + 5, sizeof syssock - 5)) {
            snprintf(r->err, sizeof r->err, "the default socket path is too long");
            return GS_EIO;
        }
        server = defsock;
        if (strcmp(defsock, syssock)) fallback = syssock;
    }
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
    if (rc) {
        snprintf(r->err, sizeof r->err, "cannot reach the gsched daemon at %s: %s%s%s%s", server,
                 err, stale ? " (nor at " : "", stale ? stale : "",
                 stale ? ", a socket that refuses connections: its daemon is gone?)" : "");
        free(s.p);
        free(s.ctype);
        r->status = 0;
        return GS_EIO;
    }
    r->content_type = s.ctype;
    r->body = s.p ? s.p : calloc(1, 1);
    if (!r->body) abort();
    r->len = s.n;
    r->log_size = s.log_size;
    r->retry_after = s.retry_after;
    return 0;
}
