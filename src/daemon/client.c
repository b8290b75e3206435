/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client.c - the CLI's HTTP client (libcurl easy interface).
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
 * it).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int gsd_request(const gsd_client *c, const char *method, const char *path, const char *body,
                size_t len, const char *content_type, const char *const *extra_headers, gsd_resp *r)
{
    memset(r, 0, sizeof *r);
    r->log_size = -1;
    r->retry_after = -1;
    static int inited;
    if (!inited) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        inited = 1;
    }
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(r->err, sizeof r->err, "cannot initialise libcurl");
        return GS_EIO;
    }
    char defsock[PATH_MAX + 8], syssock[PATH_MAX + 8];
    const char *server = c->server;
    const char *fallback = NULL; /* the system socket, when the default is the user's own */
    if (!server || !*server) {
        memcpy(defsock, "unix:", 6);
        memcpy(syssock, "unix:", 6);
        if (gsd_default_socket(0, defsock + 5, sizeof defsock - 5) ||
            gsd_system_socket(syssock + 5, sizeof syssock - 5)) {
            snprintf(r->err, sizeof r->err, "the default socket path is too long");
            curl_easy_cleanup(h);
            return GS_EIO;
        }
        server = defsock;
        if (strcmp(defsock, syssock)) fallback = syssock;
    }
    const char *sock = !strncmp(server, "unix:", 5) ? server + 5 : NULL;
    if (sock && gsd_socket_trusted(sock, r->err, sizeof r->err)) {
        curl_easy_cleanup(h);
        return GS_EIO;
    }
    size_t ul = strlen(server) + strlen(path) + 32;
    char *url = malloc(ul);
    if (!url) abort();
    if (sock) {
        /* the Host of a socket request names no port; the daemon checks Origin against it */
        snprintf(url, ul, "http://localhost%s", path);
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
    } else {
        int has_scheme = strstr(server, "://") != NULL;
        size_t sl = strlen(server);
        while (sl && server[sl - 1] == '/') sl--;
        snprintf(url, ul, "%s%.*s%s", has_scheme ? "" : "http://", (int)sl, server, path);
    }
    sink s = {NULL, 0, 0, -1, -1, NULL};
    struct curl_slist *hdrs = NULL;
    char line[1024];
    if (c->token && *c->token && !sock) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", c->token);
        hdrs = curl_slist_append(hdrs, line);
    } else if (c->user && *c->user && !sock) {
        snprintf(line, sizeof line, "X-Gsched-User: %s", c->user);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        hdrs = curl_slist_append(hdrs, line);
    }
    /* every request: the daemon refuses state-changing ones without it (cross-site forgery) */
    hdrs = curl_slist_append(hdrs, "X-Gsched-Client: 1");
    hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    hdrs = curl_slist_append(hdrs, "Accept: application/json, application/problem+json");
    for (size_t i = 0; extra_headers && extra_headers[i]; i++)
        hdrs = curl_slist_append(hdrs, extra_headers[i]);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, c->timeout_s > 0 ? c->timeout_s : 30L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "gsched/" GSCHED_VERSION);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (!strcmp(method, "GET")) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (!strcmp(method, "HEAD")) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L); /* headers only */
    }
    CURLcode cc = curl_easy_perform(h);
    const char *stale = NULL;
    if (cc == CURLE_COULDNT_CONNECT && fallback && s.n == 0) {
        /* the user's own socket refuses connections (its daemon was killed): nothing was
         * sent; a root daemon may be serving on the system socket */
        stale = server;
        server = fallback;
        if (gsd_socket_trusted(server + 5, r->err, sizeof r->err)) {
            curl_slist_free_all(hdrs);
            curl_easy_cleanup(h);
            free(url);
            return GS_EIO;
        }
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, server + 5);
        cc = curl_easy_perform(h);
    }
    int rc = 0;
    if (cc != CURLE_OK) {
        snprintf(r->err, sizeof r->err, "cannot reach the gsched daemon at %s: %s%s%s%s", server,
                 curl_easy_strerror(cc), stale ? " (nor at " : "", stale ? stale : "",
                 stale ? ", a socket that refuses connections: its daemon is gone?)" : "");
        free(s.p);
        rc = GS_EIO;
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        char *ct = NULL;
        curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
        r->content_type = ct ? strdup(ct) : NULL;
        r->body = s.p ? s.p : calloc(1, 1);
        if (!r->body) abort();
        r->len = s.n;
        r->log_size = s.log_size;
        r->retry_after = s.retry_after;
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    free(url);
    return rc;
}
