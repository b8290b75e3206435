/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_ui.c - the web dashboard's side of a real `gsched serve` (issue 16; started as a
 * child process on a random loopback port, spoken to over raw HTTP so that every response
 * header can be checked): the files at / and /ui/NAME are served without a token, byte for
 * byte as web/ has them, with their Content-Type, CSP, nosniff and no-referrer headers; every
 * /v1 call the page makes keeps its auth; GET /v1/cluster is the topology tree (racks, nodes,
 * PCIe switches of a HiveD config, GPU leaves) with each GPU's job shown only to those who may
 * see it; GET /v1/stats has the sampler's rows after a few cycles (counters per step, gauges,
 * VCs), refuses bad ranges, and the samples table keeps --stats-keep days.  Every wait is
 * bounded.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "harness.h"

#ifndef GSCHED_BIN
#define GSCHED_BIN "gsched"
#endif

static char dir[256];

static const char *tmp(const char *name)
{
    static char p[4][512];
    static int k;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gsched-ui-test-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct daemon {
    pid_t pid;
    int port;
    char log[512];
    char db[512];
} daemon_t;

/* gsched serve on 127.0.0.1:0 with extra args (--insecure-tcp unless --tokens is given);
 * 0 once it serves. */
static int start(daemon_t *dm, const char *name, const char *const *extra)
{
    char pf[560], logs[560];
    snprintf(dm->db, sizeof dm->db, "%s.db", tmp(name));
    snprintf(pf, sizeof pf, "%s.port", dm->db);
    snprintf(logs, sizeof logs, "%s-logs", dm->db);
    snprintf(dm->log, sizeof dm->log, "%s.log", dm->db);
    unlink(pf);
    const char *argv[40] = {GSCHED_BIN,     "serve", "--db",    dm->db, "--listen",  "127.0.0.1:0",
                            "--port-file",  pf,      "--grace", "1s",   "--log-dir", logs,
                            "--single-user"};
    int n = 13, tokens = 0;
    for (int i = 0; extra && extra[i] && n < 37; i++) {
        tokens |= !strcmp(extra[i], "--tokens");
        argv[n++] = extra[i];
    }
    if (!tokens) argv[n++] = "--insecure-tcp";
    argv[n] = NULL;
    dm->pid = fork();
    if (dm->pid == 0) {
        int fd = open(dm->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(GSCHED_BIN, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 600; i++) {
        FILE *f = fopen(pf, "r");
        int port = 0;
        if (f) {
            if (fscanf(f, "%d", &port) != 1) port = 0;
            fclose(f);
        }
        if (port > 0) {
            dm->port = port;
            return 0;
        }
        int st;
        if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
            dm->pid = -1;
            return -1;
        }
        sleep_ms(50);
    }
    return -1;
}

static int stop(daemon_t *dm)
{
    if (dm->pid <= 0) return -1;
    kill(dm->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < 400; i++) {
        if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
            dm->pid = -1;
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        }
        sleep_ms(50);
    }
    kill(dm->pid, SIGKILL);
    waitpid(dm->pid, &st, 0);
    dm->pid = -1;
    return -1;
}

static char *slurp_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (!b) abort();
    size_t got = fread(b, 1, (size_t)n, f);
    fclose(f);
    b[got] = '\0';
    if (len) *len = got;
    return b;
}

/* ---- raw HTTP/1.1 (Connection: close), so every header can be read ---------------------- */

typedef struct resp {
    int status;
    char *head; /* status line and headers */
    char *body;
    size_t blen;
    json_t *j;
} resp;

static resp http(const daemon_t *dm, const char *method, const char *path, const char *token,
                 const char *body, const char *extra_hdr)
{
    resp r = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)dm->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        close(fd);
        return r;
    }
    char req[4096];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s%s%s%s%s"
                     "Content-Length: %zu\r\n\r\n%s",
                     method, path, dm->port, token ? "Authorization: Bearer " : "",
                     token ? token : "", token ? "\r\n" : "",
                     body ? "Content-Type: application/json\r\nX-Gsched-Client: 1\r\n" : "",
                     extra_hdr ? extra_hdr : "", body ? strlen(body) : 0, body ? body : "");
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return r;
    }
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    if (!buf) abort();
    for (;;) {
        if (len + 4096 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) abort();
        }
        ssize_t k = read(fd, buf + len, cap - len - 1);
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(fd);
    buf[len] = '\0';
    char *sep = strstr(buf, "\r\n\r\n");
    if (!sep || sscanf(buf, "HTTP/1.%*d %d", &r.status) != 1) {
        free(buf);
        r.status = 0;
        return r;
    }
    *sep = '\0';
    r.head = buf;
    r.body = sep + 4;
    r.blen = len - (size_t)(r.body - buf);
    if (strcmp(method, "HEAD")) r.j = json_loads(r.body, 0, NULL);
    return r;
}

static void resp_free(resp *r)
{
    json_decref(r->j);
    free(r->head);
    memset(r, 0, sizeof *r);
}

/* The value of header name in r (static buffer), "" when absent. */
static const char *hdr(const resp *r, const char *name)
{
    static char v[1024];
    v[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = r->head ? strstr(r->head, "\r\n") : NULL; p; p = strstr(p + 2, "\r\n")) {
        const char *l = p + 2;
        if (!strncasecmp(l, name, nl) && l[nl] == ':') {
            l += nl + 1;
            while (*l == ' ') l++;
            const char *e = strstr(l, "\r\n");
            size_t k = e ? (size_t)(e - l) : strlen(l);
            if (k >= sizeof v) k = sizeof v - 1;
            memcpy(v, l, k);
            v[k] = '\0';
            return v;
        }
    }
    return v;
}

static long long jint(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -999;
}

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* Submit {"command": "sleep 300", "gpus": gpus, "vc": vc}; the job id, or -1. */
static long long submit(const daemon_t *dm, const char *token, int gpus, const char *vc)
{
    char body[256];
    snprintf(body, sizeof body, "{\"command\": \"sleep 300\", \"gpus\": %d, \"vc\": \"%s\"}", gpus,
             vc);
    resp r = http(dm, "POST", "/v1/jobs", token, body, NULL);
    long long id = r.status == 201 ? jint(r.j, "id") : -1;
    if (id < 0) fprintf(stderr, "  submit: %d %s\n", r.status, r.body ? r.body : "");
    resp_free(&r);
    return id;
}

/* Wait (bounded) until job id is RUNNING. */
static int wait_running(const daemon_t *dm, const char *token, long long id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    for (int i = 0; i < 200; i++) {
        resp r = http(dm, "GET", path, token, NULL, NULL);
        int ok = r.status == 200 && !strcmp(jstr(r.j, "state"), "RUNNING");
        resp_free(&r);
        if (ok) return 0;
        sleep_ms(50);
    }
    return -1;
}

static const char *tokfile;

/* A tokens file for alice, bob (users) and root (admin). */
static int make_tokens(void)
{
    if (tokfile) return 0;
    static char path[512];
    snprintf(path, sizeof path, "%s", tmp("tokens"));
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const char *users[][3] = {{"alice", "alice.a-secret-a-secret", ""},
                              {"bob", "bob.b-secret-b-secret", ""},
                              {"root", "root.r-secret-r-secret", "--admin"}};
    for (int i = 0; i < 3; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s token hash --user %s --token %s --iterations 1000 %s",
                 GSCHED_BIN, users[i][0], users[i][1], users[i][2]);
        FILE *p = popen(cmd, "r");
        if (!p) return -1;
        char line[1024];
        while (fgets(line, sizeof line, p)) fputs(line, f);
        if (pclose(p)) return -1;
    }
    fclose(f);
    chmod(path, 0600);
    tokfile = path;
    return 0;
}

#define ALICE "alice.a-secret-a-secret"
#define BOB   "bob.b-secret-b-secret"
#define ROOT  "root.r-secret-r-secret"

/* ---- tests ------------------------------------------------------------------------------- */

static void static_files_need_no_token(void)
{
    ASSERT_OK(make_tokens());
    daemon_t D;
    const char *extra[] = {"--cluster", "1x2", "--tokens", tokfile, NULL};
    if (start(&D, "files", extra)) T_FAIL("daemon did not start");
    static const struct {
        const char *path, *file, *ctype;
    } files[] = {{"/", "web/index.html", "text/html; charset=utf-8"},
                 {"/ui/index.html", "web/index.html", "text/html; charset=utf-8"},
                 {"/ui/app.js", "web/app.js", "text/javascript; charset=utf-8"},
                 {"/ui/app.css", "web/app.css", "text/css; charset=utf-8"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        resp r = http(&D, "GET", files[i].path, NULL, NULL, NULL);
        ASSERT_EQ(r.status, 200);
        ASSERT_STR(hdr(&r, "Content-Type"), files[i].ctype);
        ASSERT_CONTAINS(hdr(&r, "Content-Security-Policy"), "default-src 'self'");
        ASSERT_CONTAINS(hdr(&r, "Content-Security-Policy"), "frame-ancestors 'none'");
        ASSERT_STR(hdr(&r, "X-Content-Type-Options"), "nosniff");
        ASSERT_STR(hdr(&r, "Referrer-Policy"), "no-referrer");
        /* byte for byte what web/ has (compiled in at build time) */
        size_t len;
        char *want = slurp_file(test_src(files[i].file), &len);
        ASSERT(want);
        ASSERT_EQ(r.blen, len);
        ASSERT(!memcmp(r.body, want, len));
        free(want);
        resp_free(&r);
    }
    resp r = http(&D, "GET", "/", NULL, NULL, NULL);
    ASSERT_CONTAINS(r.body, "id=\"token\"");
    ASSERT_CONTAINS(r.body, "src=\"/ui/app.js\"");
    resp_free(&r);
    r = http(&D, "HEAD", "/ui/app.js", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    resp_free(&r);
    r = http(&D, "GET", "/ui/nothing.js", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 404);
    ASSERT_STR(jstr(r.j, "code"), "GS_ENOENT");
    resp_free(&r);
    r = http(&D, "GET", "/ui/../gsched.db", NULL, NULL, NULL);
    ASSERT(r.status == 404 || r.status == 400);
    resp_free(&r);
    r = http(&D, "POST", "/", NULL, "{}", NULL);
    ASSERT_EQ(r.status, 405);
    resp_free(&r);
    /* the data keeps its auth: the page sends the token */
    static const char *const data[] = {"/v1/cluster", "/v1/stats", "/v1/jobs", "/v1/vcs"};
    for (size_t i = 0; i < sizeof data / sizeof *data; i++) {
        r = http(&D, "GET", data[i], NULL, NULL, NULL);
        ASSERT_EQ(r.status, 401);
        resp_free(&r);
        r = http(&D, "GET", data[i], ALICE, NULL, NULL);
        ASSERT_EQ(r.status, 200);
        resp_free(&r);
    }
    /* what the page's own calls look like pass the cross-site checks: same Origin as Host,
     * X-Gsched-Client on a state-changing call; another site's Origin does not */
    char origin[128];
    snprintf(origin, sizeof origin, "Origin: http://127.0.0.1:%d\r\n", D.port);
    r = http(&D, "POST", "/v1/jobs", ALICE, "{\"command\": \"true\", \"gpus\": 1}", origin);
    ASSERT_EQ(r.status, 201);
    resp_free(&r);
    r = http(&D, "POST", "/v1/jobs", ALICE, "{\"command\": \"true\", \"gpus\": 1}",
             "Origin: http://evil.example\r\n");
    ASSERT_EQ(r.status, 403);
    resp_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

/* The GPU leaves under a cell, in order (depth-first). */
static void leaves(json_t *cell, json_t *out)
{
    if (!strcmp(jstr(cell, "kind"), "gpu")) {
        json_array_append(out, cell);
        return;
    }
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(cell, "children"), i, k) leaves(k, out);
}

static json_t *find_node(json_t *cell, const char *name)
{
    if (!strcmp(jstr(cell, "kind"), "node") && !strcmp(jstr(cell, "name"), name)) return cell;
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(cell, "children"), i, k)
    {
        json_t *f = find_node(k, name);
        if (f) return f;
    }
    return NULL;
}

static void cluster_tree_and_visibility(void)
{
    ASSERT_OK(make_tokens());
    daemon_t D;
    const char *extra[] = {"--cluster", "2x2x4:V100", "--tokens", tokfile, NULL};
    if (start(&D, "cluster", extra)) T_FAIL("daemon did not start");
    long long a = submit(&D, ALICE, 2, "vca"), b = submit(&D, BOB, 4, "vcb");
    ASSERT(a > 0 && b > 0);
    ASSERT_OK(wait_running(&D, ALICE, a));
    ASSERT_OK(wait_running(&D, BOB, b));
    resp r = http(&D, "GET", "/v1/cluster", ALICE, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_STR(jstr(r.j, "user"), "alice");
    ASSERT(json_is_false(json_object_get(r.j, "admin")));
    json_t *g = json_object_get(r.j, "gpus");
    ASSERT_EQ(jint(g, "total"), 16);
    ASSERT_EQ(jint(g, "allocated"), 6);
    ASSERT_EQ(jint(r.j, "nodes"), 4);
    /* cluster -> racks r0, r1 -> two nodes each -> four GPUs each */
    json_t *tree = json_object_get(r.j, "tree");
    ASSERT_STR(jstr(tree, "kind"), "cluster");
    json_t *racks = json_object_get(tree, "children");
    ASSERT_EQ(json_array_size(racks), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *rk = json_array_get(racks, i);
        char want[8];
        snprintf(want, sizeof want, "r%zu", i);
        ASSERT_STR(jstr(rk, "kind"), "rack");
        ASSERT_STR(jstr(rk, "name"), want);
        json_t *nodes = json_object_get(rk, "children");
        ASSERT_EQ(json_array_size(nodes), 2);
        for (size_t k = 0; k < 2; k++) {
            json_t *nd = json_array_get(nodes, k);
            char nn[8];
            snprintf(nn, sizeof nn, "n%zu", i * 2 + k);
            ASSERT_STR(jstr(nd, "kind"), "node");
            ASSERT_STR(jstr(nd, "name"), nn);
            ASSERT_EQ(jint(nd, "gpus"), 4);
            json_t *gl = json_object_get(nd, "children");
            ASSERT_EQ(json_array_size(gl), 4);
            for (size_t x = 0; x < 4; x++) {
                json_t *gp = json_array_get(gl, x);
                ASSERT_STR(jstr(gp, "kind"), "gpu");
                ASSERT_EQ(jint(gp, "local"), x);
                ASSERT_EQ(jint(gp, "index"), (i * 2 + k) * 4 + x);
                ASSERT_STR(jstr(gp, "type"), "V100");
            }
        }
    }
    /* alice sees her job on its GPUs, not bob's (allocated, no job, no user, no VC) */
    json_t *all = json_array();
    leaves(tree, all);
    ASSERT_EQ(json_array_size(all), 16);
    int mine = 0, hidden = 0, idle = 0;
    size_t i;
    json_t *gp;
    json_array_foreach(all, i, gp)
    {
        const char *st = jstr(gp, "state");
        json_t *job = json_object_get(gp, "job");
        if (json_is_integer(job)) {
            ASSERT_EQ(json_integer_value(job), a);
            ASSERT_STR(jstr(gp, "user"), "alice");
            ASSERT_STR(jstr(gp, "vc"), "vca");
            ASSERT_STR(st, "allocated");
            mine++;
        } else if (!strcmp(st, "allocated")) {
            ASSERT(json_is_null(json_object_get(gp, "user")));
            ASSERT(json_is_null(json_object_get(gp, "vc")));
            hidden++;
        } else {
            ASSERT_STR(st, "idle");
            idle++;
        }
    }
    ASSERT_EQ(mine, 2);
    ASSERT_EQ(hidden, 4);
    ASSERT_EQ(idle, 10);
    json_decref(all);
    resp_free(&r);
    /* an admin sees both jobs; a node marked bad shows its state and reason */
    resp m = http(&D, "POST", "/v1/nodes/n3/bad", ROOT, "{\"reason\": \"fan noise\"}", NULL);
    ASSERT_EQ(m.status, 200);
    resp_free(&m);
    r = http(&D, "GET", "/v1/cluster", ROOT, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT(json_is_true(json_object_get(r.j, "admin")));
    all = json_array();
    leaves(json_object_get(r.j, "tree"), all);
    int ja = 0, jb = 0;
    json_array_foreach(all, i, gp)
    {
        long long j = jint(gp, "job");
        ja += j == a;
        jb += j == b;
        if (j == b) ASSERT_STR(jstr(gp, "user"), "bob");
    }
    json_decref(all);
    ASSERT_EQ(ja, 2);
    ASSERT_EQ(jb, 4);
    json_t *n3 = find_node(json_object_get(r.j, "tree"), "n3");
    ASSERT(n3);
    ASSERT_STR(jstr(n3, "state"), "bad");
    ASSERT_CONTAINS(jstr(n3, "reason"), "fan noise");
    resp_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

/* A HiveD config's PCIe-switch cells inside a node are levels of the tree. */
static void cluster_tree_of_hived_config(void)
{
    const char *cfg = tmp("hived.yaml");
    FILE *f = fopen(cfg, "w");
    ASSERT(f);
    fputs("physicalCluster:\n"
          "  cellTypes:\n"
          "    K80-2GPU: {childCellType: K80, childCellNumber: 2}\n"
          "    K80-NODE: {childCellType: K80-2GPU, childCellNumber: 2, isNodeLevel: true}\n"
          "    K80-RACK: {childCellType: K80-NODE, childCellNumber: 2}\n"
          "  physicalCells:\n"
          "  - cellType: K80-RACK\n"
          "    cellChildren:\n"
          "    - cellAddress: w0\n"
          "    - cellAddress: w1\n",
          f);
    fclose(f);
    daemon_t D;
    const char *extra[] = {"--cluster", cfg, NULL};
    if (start(&D, "hived", extra)) T_FAIL("daemon did not start");
    resp r = http(&D, "GET", "/v1/cluster", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    json_t *w1 = find_node(json_object_get(r.j, "tree"), "w1");
    ASSERT(w1);
    json_t *kids = json_object_get(w1, "children");
    ASSERT_EQ(json_array_size(kids), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *sw = json_array_get(kids, i);
        ASSERT_STR(jstr(sw, "kind"), "pcie");
        json_t *gl = json_object_get(sw, "children");
        ASSERT_EQ(json_array_size(gl), 2);
        ASSERT_STR(jstr(json_array_get(gl, 0), "kind"), "gpu");
        ASSERT_EQ(jint(json_array_get(gl, 1), "index"), 4 + 2 * i + 1);
    }
    resp_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

static long long sum_of(json_t *samples, const char *key)
{
    long long s = 0;
    size_t i;
    json_t *x;
    json_array_foreach(samples, i, x) s += jint(x, key);
    return s;
}

static void stats_after_cycles(void)
{
    daemon_t D;
    const char *extra[] = {"--cluster", "1x4", "--stats-interval", "1", NULL};
    if (start(&D, "stats", extra)) T_FAIL("daemon did not start");
    sleep_ms(1200);
    long long a = submit(&D, NULL, 3, "train");
    ASSERT(a > 0);
    ASSERT_OK(wait_running(&D, NULL, a));
    long long q = submit(&D, NULL, 2, "train"); /* waits: 1 GPU free */
    ASSERT(q > 0);
    /* rows are written at most once a second, when something changed: wait for the one that
     * shows the job running and the other pending */
    json_t *last = NULL;
    resp r = {0};
    for (int i = 0; i < 100; i++) {
        resp_free(&r);
        r = http(&D, "GET", "/v1/stats?from=-120", NULL, NULL, NULL);
        ASSERT_EQ(r.status, 200);
        json_t *s = json_object_get(r.j, "samples");
        last = json_array_get(s, json_array_size(s) - 1);
        if (last && jint(last, "pending") == 1) break;
        sleep_ms(100);
    }
    ASSERT(last);
    json_t *samples = json_object_get(r.j, "samples");
    ASSERT(json_array_size(samples) >= 2);
    ASSERT_EQ(jint(json_array_get(samples, 0), "alloc_gpus"), 0); /* before the submit */
    ASSERT_EQ(jint(last, "alloc_gpus"), 3);
    ASSERT_EQ(jint(last, "total_gpus"), 4);
    ASSERT_EQ(jint(last, "running"), 1);
    ASSERT_EQ(jint(last, "pending"), 1);
    ASSERT_EQ(sum_of(samples, "started"), 1);
    ASSERT_EQ(sum_of(samples, "finished"), 0);
    json_t *vc = json_object_get(json_object_get(last, "vcs"), "train");
    ASSERT(vc);
    ASSERT_EQ(jint(vc, "allocated"), 3);
    ASSERT_EQ(jint(vc, "pending"), 1);
    ASSERT(json_is_null(json_object_get(vc, "guaranteed")));
    ASSERT_EQ(jint(r.j, "interval_seconds"), 1);
    /* times ascend; "now" is the current state, without counters */
    for (size_t i = 1; i < json_array_size(samples); i++)
        ASSERT(jint(json_array_get(samples, i), "t_us") >
               jint(json_array_get(samples, i - 1), "t_us"));
    json_t *now = json_object_get(r.j, "now");
    ASSERT_EQ(jint(now, "alloc_gpus"), 3);
    ASSERT(json_is_null(json_object_get(now, "started")));
    resp_free(&r);
    /* cancel the running job: the other starts; counters add up per step */
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", a);
    r = http(&D, "DELETE", path, NULL, NULL, "X-Gsched-Client: 1\r\n");
    ASSERT_EQ(r.status, 200);
    resp_free(&r);
    ASSERT_OK(wait_running(&D, NULL, q));
    for (int i = 0; i < 100; i++) {
        resp_free(&r);
        r = http(&D, "GET", "/v1/stats?from=-120", NULL, NULL, NULL);
        samples = json_object_get(r.j, "samples");
        if (sum_of(samples, "finished") == 1 && sum_of(samples, "started") == 2) break;
        sleep_ms(100);
    }
    ASSERT_EQ(sum_of(samples, "started"), 2);
    ASSERT_EQ(sum_of(samples, "finished"), 1);
    size_t rows = json_array_size(samples);
    resp_free(&r);
    /* one step over the whole range: one point, the sums of the rows, the last gauges */
    r = http(&D, "GET", "/v1/stats?from=-120&step=1000", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    samples = json_object_get(r.j, "samples");
    ASSERT(rows >= 3);
    ASSERT_EQ(json_array_size(samples), 1);
    ASSERT_EQ(jint(json_array_get(samples, 0), "started"), 2);
    ASSERT_EQ(jint(json_array_get(samples, 0), "finished"), 1);
    ASSERT_EQ(jint(json_array_get(samples, 0), "alloc_gpus"), 2);
    resp_free(&r);
    /* bad ranges */
    r = http(&D, "GET", "/v1/stats?from=-10&to=-20", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 400);
    ASSERT_STR(jstr(r.j, "field"), "from");
    resp_free(&r);
    r = http(&D, "GET", "/v1/stats?from=yesterday", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 400);
    resp_free(&r);
    r = http(&D, "GET", "/v1/stats?step=-5", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 400);
    resp_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

static long long count_rows(const char *db, const char *where)
{
    sqlite3 *s;
    if (sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM samples WHERE %s", where);
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(s);
    return n;
}

static void samples_are_bounded(void)
{
    daemon_t D;
    const char *off[] = {"--cluster", "1x2", "--stats-interval", "0", NULL};
    if (start(&D, "keep", off)) T_FAIL("daemon did not start");
    sleep_ms(1500);
    resp r = http(&D, "GET", "/v1/stats", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(json_array_size(json_object_get(r.j, "samples")), 0); /* --stats-interval 0 */
    ASSERT(json_is_null(json_object_get(r.j, "interval_seconds")));
    resp_free(&r);
    ASSERT_EQ(stop(&D), 0);
    ASSERT_EQ(count_rows(D.db, "1"), 0);
    /* rows of 10 and 2 days ago: --stats-keep 7 drops the first at the next row */
    sqlite3 *s;
    ASSERT_EQ(sqlite3_open(D.db, &s), SQLITE_OK);
    long long now = (long long)time(NULL) * 1000000LL, day = 86400LL * 1000000LL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO samples VALUES (%lld, 1, 2, 0, 1, 0, 0, '{}'), "
             "(%lld, 2, 2, 0, 1, 0, 0, '{}')",
             now - 10 * day, now - 2 * day);
    ASSERT_EQ(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    const char *keep[] = {"--cluster", "1x2", "--stats-interval", "1", "--stats-keep", "7", NULL};
    if (start(&D, "keep", keep)) T_FAIL("daemon did not restart");
    char where[128];
    snprintf(where, sizeof where, "t_us > %lld", now - day);
    for (int i = 0; i < 100 && count_rows(D.db, where) < 1; i++) sleep_ms(50);
    /* nothing changes on this idle cluster: no more rows for a while, though one is due every
     * second when something changes */
    sleep_ms(2500);
    ASSERT_EQ(count_rows(D.db, where), 1);
    ASSERT_EQ(stop(&D), 0);
    snprintf(where, sizeof where, "t_us < %lld", now - 7 * day);
    ASSERT_EQ(count_rows(D.db, where), 0);
    snprintf(where, sizeof where, "t_us = %lld", now - 2 * day);
    ASSERT_EQ(count_rows(D.db, where), 1);
    /* the API reads the kept one back */
    if (start(&D, "keep", keep)) T_FAIL("daemon did not restart");
    r = http(&D, "GET", "/v1/stats?from=-259200", NULL, NULL, NULL);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(jint(json_array_get(json_object_get(r.j, "samples"), 0), "alloc_gpus"), 2);
    resp_free(&r);
    ASSERT_EQ(stop(&D), 0);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cannot remove %s", dir);
}

static const test_case tests[] = {
    {"static_files_need_no_token", static_files_need_no_token},
    {"cluster_tree_and_visibility", cluster_tree_and_visibility},
    {"cluster_tree_of_hived_config", cluster_tree_of_hived_config},
    {"stats_after_cycles", stats_after_cycles},
    {"samples_are_bounded", samples_are_bounded},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
