/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_daemon.c - live scheduler benchmarks against a real `gsched serve`
 * on loopback TCP (started as a child process, killed at the end; TCP
 * without tokens, --insecure-tcp, and a per-client connection cap of 1024,
 * so the figures measure the same path as before the Unix socket became
 * the default):
 *
 *  1. sustained durable submits per second: C client threads, each with one
 *     keep-alive connection, POST job specs as fast as the daemon
 *     acknowledges them (a submit is acknowledged only after its row is
 *     committed; concurrent submits share one commit per cycle).  One long
 *     job holds 7 of the 8 GPUs and every submitted job needs 2, so every
 *     submit stays pending and the queue grows as in a burst.  R runs,
 *     median printed, for synchronous=FULL and NORMAL.
 *  2. scheduling cycle latency with 10,000 pending jobs: fill the queue,
 *     then 1,100 sequential submits (one cycle each: command, policy pass,
 *     commit, snapshot); report the daemon's own cycle percentiles over its
 *     last 1,024 cycles (GET /v1/health), the mean cycle and commit times
 *     over the sequential phase (/metrics histograms) and the client's
 *     round trips, with synchronous=FULL and NORMAL (the difference is the
 *     fsync).  One GPU stays free and no pending job fits it, so a policy
 *     that looks at every waiting job (fifo-backfill, tiresias-las, srtf)
 *     goes over all 10,000 on every cycle; fifo stops at the head of the
 *     queue by design.
 *  3. `gsched queue` latency with 10,000 and 20,000 pending jobs (issue 16):
 *     the CLI as a user runs it, on the daemon's Unix socket, output to
 *     /dev/null, wall time from fork to exit; the default listing (its first
 *     page) and --all-pages (every job), median of 11 runs each.
 *  4. memory and database over finished jobs (issue 16, accounting): the
 *     daemon's RSS (VmRSS) and database size (file + WAL) after 0, 25,000,
 *     50,000 and 100,000 finished jobs (each submitted while 8 GPUs are held,
 *     then cancelled while pending: a row, two events, nothing run), without
 *     and with --retention (1 s: every finished job moves to the acct table).
 *
 * The database is a file under --dir (default $TMPDIR or /tmp); the
 * benchmark prints the file system type, because on tmpfs fsync costs
 * nothing and "durable" would mean little.
 *
 * usage: bench_daemon [--runs R] [--clients C] [--submits N] [--pending P]
 *                     [--policies a,b,...] [--dir DIR] [--sections 1,2,3,4]
 *                     [--queue-pending P1,P2,...] [--finished N1,N2,...]
 * Prints medians; needs nothing but the gsched binary (GSCHED_BIN).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#ifndef GSCHED_BIN
#define GSCHED_BIN "gsched"
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct srv {
    pid_t pid;
    char url[64];
    char dir[512];
} srv;

static const char *base_dir = NULL;

/* sock: also serve on this Unix socket (NULL: TCP only) */
static int start_sock(srv *s, const char *policy, const char *sync, const char *sock)
{
    snprintf(s->dir, sizeof s->dir, "%s/gsched-bench-XXXXXX", base_dir);
    if (!mkdtemp(s->dir)) return -1;
    char db[256], pf[256], log[256], logs[256];
    snprintf(db, sizeof db, "%s/gsched.db", s->dir);
    snprintf(logs, sizeof logs, "%s/logs", s->dir);
    snprintf(pf, sizeof pf, "%s/port", s->dir);
    snprintf(log, sizeof log, "%s/daemon.log", s->dir);
    s->pid = fork();
    if (s->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 2);
        if (chdir(s->dir)) _exit(127);
        if (sock)
            execl(GSCHED_BIN, GSCHED_BIN, "serve", "--cluster", "1x8", "--policy", policy, "--db",
                  db, "--listen", "127.0.0.1:0", "--insecure-tcp", "--port-file", pf, "--sync",
                  sync, "--max-connections", "1024", "--max-conn-per-client", "1024", "--log-dir",
                  logs, "--single-user", "--socket", sock, (char *)NULL);
        else
            execl(GSCHED_BIN, GSCHED_BIN, "serve", "--cluster", "1x8", "--policy", policy, "--db",
                  db, "--listen", "127.0.0.1:0", "--insecure-tcp", "--port-file", pf, "--sync",
                  sync, "--max-connections", "1024", "--max-conn-per-client", "1024", "--log-dir",
                  logs, "--single-user", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 400; i++) {
        FILE *f = fopen(pf, "r");
        int port = 0;
        if (f) {
            if (fscanf(f, "%d", &port) != 1) port = 0;
            fclose(f);
        }
        if (port > 0) {
            snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", port);
            return 0;
        }
        sleep_ms(25);
    }
    return -1;
}

static int start(srv *s, const char *policy, const char *sync)
{
    return start_sock(s, policy, sync, NULL);
}

static void stop(srv *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
    }
    /* the long blocker task survives its daemon by design: end it through its pid file */
    char path[512];
    snprintf(path, sizeof path, "%s/gsched.d/runs/1.1/task-0.pid", s->dir);
    FILE *f = fopen(path, "r");
    long long pid = 0;
    if (f) {
        if (fscanf(f, "%lld", &pid) == 1 && pid > 1) kill((pid_t)-pid, SIGKILL);
        fclose(f);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    if (system(cmd) != 0) {
        /* best effort */
    }
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    size_t *k = ud;
    *k += sz * n;
    return sz * n;
}

typedef struct body {
    char *p;
    size_t n;
} body;

static size_t keep(char *p, size_t sz, size_t n, void *ud)
{
    body *b = ud;
    char *np = realloc(b->p, b->n + sz * n + 1);
    if (!np) return 0;
    b->p = np;
    memcpy(b->p + b->n, p, sz * n);
    b->n += sz * n;
    b->p[b->n] = '\0';
    return sz * n;
}

/* One POST on a reused handle; returns the HTTP status. */
static long post(CURL *h, const char *url, const char *json)
{
    size_t got = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    if (curl_easy_perform(h) != CURLE_OK) return 0;
    long st = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
    return st;
}

static CURL *handle(struct curl_slist **hdrs)
{
    CURL *h = curl_easy_init();
    *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    *hdrs = curl_slist_append(*hdrs, "X-Gsched-Client: 1");
    *hdrs = curl_slist_append(*hdrs, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    return h;
}

typedef struct worker {
    const char *url;
    int n;
    int errors;
} worker;

static void *submit_loop(void *arg)
{
    worker *w = arg;
    struct curl_slist *hdrs;
    CURL *h = handle(&hdrs);
    char url[128];
    snprintf(url, sizeof url, "%s/v1/jobs", w->url);
    for (int i = 0; i < w->n; i++)
        if (post(h, url, "{\"command\": [\"true\"], \"gpus\": 2, \"name\": \"bench\"}") != 201)
            w->errors++;
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    return NULL;
}

/* N submits from C threads; returns submits per second (0 on errors). */
static double burst(const char *url, int clients, int n)
{
    pthread_t th[256];
    worker w[256];
    double t0 = now();
    for (int i = 0; i < clients; i++) {
        w[i] = (worker){url, n / clients, 0};
        pthread_create(&th[i], NULL, submit_loop, &w[i]);
    }
    int errors = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(th[i], NULL);
        errors += w[i].errors;
    }
    double dt = now() - t0;
    if (errors) fprintf(stderr, "bench: %d submit(s) failed\n", errors);
    return errors ? 0 : (double)(n / clients * clients) / dt;
}

static int block_cluster(const char *url)
{
    struct curl_slist *hdrs;
    CURL *h = handle(&hdrs);
    char u[128];
    snprintf(u, sizeof u, "%s/v1/jobs", url);
    long st =
        post(h, u, "{\"command\": [\"sleep\", \"3600\"], \"gpus\": 7, \"name\": \"blocker\"}");
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    return st == 201 ? 0 : -1;
}

/* Sum and count of a histogram from /metrics (gsched_NAME_sum / _count). */
static void hist(const char *url, const char *name, double *sum, double *count)
{
    CURL *h = curl_easy_init();
    char u[128];
    snprintf(u, sizeof u, "%s/metrics", url);
    body b = {NULL, 0};
    curl_easy_setopt(h, CURLOPT_URL, u);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_perform(h);
    curl_easy_cleanup(h);
    *sum = *count = 0;
    char key[128];
    const char *p;
    snprintf(key, sizeof key, "\n%s_sum ", name);
    if (b.p && (p = strstr(b.p, key))) *sum = strtod(p + strlen(key), NULL);
    snprintf(key, sizeof key, "\n%s_count ", name);
    if (b.p && (p = strstr(b.p, key))) *count = strtod(p + strlen(key), NULL);
    free(b.p);
}

static json_t *health(const char *url)
{
    CURL *h = curl_easy_init();
    char u[128];
    snprintf(u, sizeof u, "%s/v1/health", url);
    body b = {NULL, 0};
    curl_easy_setopt(h, CURLOPT_URL, u);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_perform(h);
    curl_easy_cleanup(h);
    json_t *j = b.p ? json_loads(b.p, 0, NULL) : NULL;
    free(b.p);
    return j;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds one `gsched queue [a1]` takes, from fork to exit (stdout to /dev/null); < 0 when it
 * failed.  *cpu: the CLI's own CPU seconds (user + system). */
static double time_cli(const char *server, const char *a1, double *cpu)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, 1);
        execl(GSCHED_BIN, GSCHED_BIN, "queue", "--server", server, a1, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid) return -1;
    double dt = now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? dt : -1;
}

/* CPU seconds a process has used so far (/proc/PID/stat utime + stime), -1 if unknown. */
static double proc_cpu(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    unsigned long long ut = 0, stt = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stt) != 2)
        return -1;
    return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
}

/* 3. `gsched queue` latency at each queue length of the list (ascending). */
static int queue_latency(const char *lengths, int clients)
{
    enum { QRUNS = 11 };
    printf(
        "\n3. `gsched queue` latency (the CLI on the daemon's Unix socket, output to /dev/null,\n"
        "   fork to exit; fifo, 1x8 cluster, 7 GPUs held by one job, 2-GPU jobs pending);\n"
        "   median of %d runs (min-max), the default listing (first page) and --all-pages;\n"
        "   cpu: the CLI's own CPU time (median) + the daemon's (mean over the runs), which a\n"
        "   loaded machine does not inflate as much as the wall time:\n",
        QRUNS);
    srv s;
    char sock[600], server[620];
    /* relative to the daemon's directory (it starts there): a socket path has at most 107
     * bytes */
    if (start_sock(&s, "fifo", "normal", "gsched.sock") || block_cluster(s.url)) {
        fprintf(stderr, "bench: cannot start the daemon\n");
        stop(&s);
        return 1;
    }
    snprintf(sock, sizeof sock, "%s/gsched.sock", s.dir);
    snprintf(server, sizeof server, "unix:%s", sock);
    for (int i = 0; i < 200 && access(sock, F_OK); i++) sleep_ms(25);
    long long have = 0;
    char *list = strdup(lengths), *save = NULL;
    int rc = 0;
    for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        long long want = atoll(p);
        if (want > have) {
            int n = (int)((want - have) / clients * clients);
            if (n > 0 && burst(s.url, clients, n) <= 0) {
                fprintf(stderr, "bench: fill failed\n");
                rc = 1;
                break;
            }
            have += n;
        }
        const char *variants[] = {NULL, "--all-pages"};
        const char *names[] = {"gsched queue", "gsched queue --all-pages"};
        for (int v = 0; v < 2; v++) {
            double t[QRUNS], c[QRUNS];
            int bad = 0;
            double d0 = proc_cpu(s.pid);
            for (int r = 0; r < QRUNS; r++)
                bad |= (t[r] = time_cli(server, variants[v], &c[r])) < 0;
            double d1 = proc_cpu(s.pid);
            double med = median(t, QRUNS); /* sorts t */
            printf("   pending %lld  %-24s %7.1f ms (%.1f-%.1f)  cpu %.1f + %.1f ms%s\n", have,
                   names[v], med * 1e3, t[0] * 1e3, t[QRUNS - 1] * 1e3, median(c, QRUNS) * 1e3,
                   d0 >= 0 && d1 >= 0 ? (d1 - d0) / QRUNS * 1e3 : 0, bad ? " (errors!)" : "");
            fflush(stdout);
        }
    }
    free(list);
    stop(&s);
    return rc;
}

/* ---- 4. memory and database over finished jobs ---------------------------------------------- */

typedef struct churn {
    const char *url;
    int n, errors;
} churn;

/* Submit a 1-GPU job (pending: the cluster is full) and cancel it, n times. */
static void *churn_loop(void *arg)
{
    churn *w = arg;
    struct curl_slist *hdrs;
    CURL *h = handle(&hdrs);
    char url[128], del[160];
    snprintf(url, sizeof url, "%s/v1/jobs", w->url);
    for (int i = 0; i < w->n; i++) {
        body b = {NULL, 0};
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{\"command\": [\"true\"], \"gpus\": 1}");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
        long st = 0;
        if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        const char *idp = b.p ? strstr(b.p, "\"id\"") : NULL;
        long long id = idp ? atoll(idp + 5 + strspn(idp + 5, " :")) : 0;
        free(b.p);
        if (st != 201 || id <= 0) {
            w->errors++;
            continue;
        }
        snprintf(del, sizeof del, "%s/%lld", url, id);
        size_t got = 0;
        curl_easy_setopt(h, CURLOPT_URL, del);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
        st = 0;
        if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        if (st != 200) w->errors++;
        curl_easy_setopt(h, CURLOPT_HTTPGET, 0L);
    }
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    return NULL;
}

static long long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = atoll(line + 6);
    if (f) fclose(f);
    return kb;
}

static long long file_size(const char *dir, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long long n = ftell(f);
    fclose(f);
    return n;
}

static int memory_over_finished(const char *points, int clients)
{
    printf("\n4. daemon memory and database over finished jobs (fifo, 1x8 cluster, 8 GPUs held by\n"
           "   one job; each job submitted then cancelled while pending; sync=normal); RSS =\n"
           "   VmRSS, DB = database file + WAL:\n");
    const char *ret[] = {NULL, "1"};
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        srv s;
        snprintf(s.dir, sizeof s.dir, "%s/gsched-bench-XXXXXX", base_dir);
        if (!mkdtemp(s.dir)) return 1;
        char db[600], pf[600], log[600], logs[600];
        snprintf(db, sizeof db, "%s/gsched.db", s.dir);
        snprintf(logs, sizeof logs, "%s/logs", s.dir);
        snprintf(pf, sizeof pf, "%s/port", s.dir);
        snprintf(log, sizeof log, "%s/daemon.log", s.dir);
        s.pid = fork();
        if (s.pid == 0) {
            int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) dup2(fd, 2);
            if (chdir(s.dir)) _exit(127);
            if (ret[k])
                execl(GSCHED_BIN, GSCHED_BIN, "serve", "--cluster", "1x8", "--db", db, "--listen",
                      "127.0.0.1:0", "--insecure-tcp", "--port-file", pf, "--sync", "normal",
                      "--max-connections", "1024", "--max-conn-per-client", "1024", "--log-dir",
                      logs, "--single-user", "--retention", "1s", (char *)NULL);
            else
                execl(GSCHED_BIN, GSCHED_BIN, "serve", "--cluster", "1x8", "--db", db, "--listen",
                      "127.0.0.1:0", "--insecure-tcp", "--port-file", pf, "--sync", "normal",
                      "--max-connections", "1024", "--max-conn-per-client", "1024", "--log-dir",
                      logs, "--single-user", (char *)NULL);
            _exit(127);
        }
        s.url[0] = 0;
        for (int i = 0; i < 400 && !s.url[0]; i++) {
            FILE *f = fopen(pf, "r");
            int port = 0;
            if (f) {
                if (fscanf(f, "%d", &port) != 1) port = 0;
                fclose(f);
            }
            if (port > 0)
                snprintf(s.url, sizeof s.url, "http://127.0.0.1:%d", port);
            else
                sleep_ms(25);
        }
        struct curl_slist *hdrs;
        CURL *h = handle(&hdrs);
        char u[128];
        snprintf(u, sizeof u, "%s/v1/jobs", s.url);
        long st = s.url[0] ? post(h, u,
                                  "{\"command\": [\"sleep\", \"3600\"], \"gpus\": 8, "
                                  "\"name\": \"blocker\"}")
                           : 0;
        curl_easy_cleanup(h);
        curl_slist_free_all(hdrs);
        if (st != 201) {
            fprintf(stderr, "bench: cannot start the daemon\n");
            stop(&s);
            return 1;
        }
        sleep_ms(500);
        printf("   %s:\n", ret[k] ? "--retention 1s (finished jobs move to acct)" : "no retention");
        long long done = 0, rss0 = 0, db0 = 0;
        char *list = strdup(points), *save = NULL;
        for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            long long want = atoll(p), before = done;
            double t0 = now();
            if (want > done) {
                pthread_t th[256];
                churn w[256];
                int n = (int)((want - done) / clients);
                for (int i = 0; i < clients; i++) {
                    w[i] = (churn){s.url, n, 0};
                    pthread_create(&th[i], NULL, churn_loop, &w[i]);
                }
                int errors = 0;
                for (int i = 0; i < clients; i++) {
                    pthread_join(th[i], NULL);
                    errors += w[i].errors;
                }
                if (errors) fprintf(stderr, "bench: %d request(s) failed\n", errors);
                done += (long long)n * clients;
            }
            double dt = now() - t0;
            sleep_ms(ret[k] ? 3000 : 1500); /* a publish, forgetting, a retention pass */
            long long rss = rss_kb(s.pid),
                      dbb = file_size(s.dir, "gsched.db") + file_size(s.dir, "gsched.db-wal");
            printf("     finished %7lld  RSS %6.1f MB  DB %6.1f MB", done, (double)rss / 1024,
                   (double)dbb / 1048576);
            if (done > before && before > 0) /* the slope since the previous point */
                printf("  (since %lld: RSS %+5.0f B/job, DB %+4.0f B/job; %.0f jobs/s)", before,
                       (double)(rss - rss0) * 1024 / (double)(done - before),
                       (double)(dbb - db0) / (double)(done - before),
                       (double)(done - before) / (dt > 0 ? dt : 1));
            rss0 = rss, db0 = dbb;
            printf("\n");
            fflush(stdout);
        }
        free(list);
        stop(&s);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int runs = 5, clients = 16, submits = 4000, pending = 10000;
    const char *policies = "fifo,fifo-backfill,tiresias-las,srtf";
    const char *sections = "1,2,3,4", *queue_pending = "10000,20000";
    const char *finished = "0,25000,50000,100000";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--clients"))
            clients = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--submits"))
            submits = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pending"))
            pending = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--policies"))
            policies = argv[i + 1];
        else if (!strcmp(argv[i], "--dir"))
            base_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--sections"))
            sections = argv[i + 1];
        else if (!strcmp(argv[i], "--queue-pending"))
            queue_pending = argv[i + 1];
        else if (!strcmp(argv[i], "--finished"))
            finished = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench_daemon [--runs R] [--clients C] [--submits N] "
                            "[--pending P] [--policies a,b] [--dir DIR] [--sections 1,2,3,4] "
                            "[--queue-pending P1,P2] [--finished N1,N2]\n");
            return 2;
        }
    }
    if (!base_dir) {
        const char *t = getenv("TMPDIR");
        base_dir = t && *t ? t : "/tmp";
    }
    struct statfs fs;
    const char *fstype = "unknown";
    if (statfs(base_dir, &fs) == 0)
        fstype = fs.f_type == 0x01021994   ? "tmpfs: fsync is free, NOT a durability figure"
                 : fs.f_type == 0xEF53     ? "ext2/3/4"
                 : fs.f_type == 0x58465342 ? "xfs"
                 : fs.f_type == 0x9123683E ? "btrfs"
                 : fs.f_type == 0x794c7630 ? "overlayfs"
                                           : "other (not tmpfs)";
    if (runs < 1 || runs > 50 || clients < 1 || clients > 256 || submits < clients) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    printf("gsched live scheduler benchmark (%s)\n", GSCHED_BIN);
    printf("databases under %s (file system: %s)\n", base_dir, fstype);
    const char *syncs[] = {"full", "normal"};
    if (!strchr(sections, '1')) goto section2;
    printf("\n1. durable submits per second: %d clients, keep-alive, %d submits per run, %d runs,\n"
           "   1x8 cluster, 7 GPUs held by one job, 2-GPU jobs: every submit stays pending\n"
           "   (queue grows to %d)\n",
           clients, submits, runs, submits * runs);
    for (int k = 0; k < 2; k++) {
        srv s;
        if (start(&s, "fifo", syncs[k]) || block_cluster(s.url)) {
            fprintf(stderr, "bench: cannot start the daemon\n");
            stop(&s);
            return 1;
        }
        double v[50];
        printf("   synchronous=%-6s runs:", syncs[k]);
        for (int r = 0; r < runs; r++) {
            v[r] = burst(s.url, clients, submits);
            printf(" %.0f", v[r]);
            fflush(stdout);
        }
        printf("   median %.0f submits/s\n", median(v, runs));
        stop(&s);
    }
section2:
    if (!strchr(sections, '2')) goto section3;
    printf("\n2. scheduling cycle latency with %d pending jobs (1 GPU free, no pending job fits):\n"
           "   1,100 sequential submits, one scheduling cycle each.  cycle p50/p99: the daemon's\n"
           "   own percentiles over its last 1,024 cycles (GET /v1/health); mean cycle and\n"
           "   commit: from /metrics over the sequential phase; rtt: the client's round trip\n",
           pending);
    char *list = strdup(policies), *save = NULL;
    for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        for (int k = 0; k < 2; k++) {
            srv s;
            if (start(&s, p, syncs[k]) || block_cluster(s.url)) {
                fprintf(stderr, "bench: cannot start the daemon (%s)\n", p);
                stop(&s);
                continue;
            }
            if (burst(s.url, clients, pending) <= 0) fprintf(stderr, "bench: fill failed\n");
            double cs0, cc0, ms0, mc0, cs1, cc1, ms1, mc1;
            hist(s.url, "gsched_schedule_cycle_duration_seconds", &cs0, &cc0);
            hist(s.url, "gsched_db_commit_duration_seconds", &ms0, &mc0);
            enum { SEQ = 1100 };
            static double rtt[SEQ];
            struct curl_slist *hdrs;
            CURL *hc = handle(&hdrs);
            char u[128];
            snprintf(u, sizeof u, "%s/v1/jobs", s.url);
            int errors = 0;
            for (int i = 0; i < SEQ; i++) {
                double t0 = now();
                if (post(hc, u, "{\"command\": [\"true\"], \"gpus\": 2, \"name\": \"seq\"}") != 201)
                    errors++;
                rtt[i] = now() - t0;
            }
            /* the daemon recomputes its percentiles at most every 250 ms, when it publishes:
             * one more submit after a pause makes them cover the whole sequential phase */
            sleep_ms(300);
            if (post(hc, u, "{\"command\": [\"true\"], \"gpus\": 2, \"name\": \"seq\"}") != 201)
                errors++;
            curl_easy_cleanup(hc);
            curl_slist_free_all(hdrs);
            hist(s.url, "gsched_schedule_cycle_duration_seconds", &cs1, &cc1);
            hist(s.url, "gsched_db_commit_duration_seconds", &ms1, &mc1);
            json_t *h = health(s.url);
            double p50 = h ? json_real_value(json_object_get(h, "cycle_p50_seconds")) : 0;
            double p99 = h ? json_real_value(json_object_get(h, "cycle_p99_seconds")) : 0;
            long long pend =
                h ? (long long)json_integer_value(json_object_get(h, "pending_jobs")) : 0;
            double r50 = median(rtt, SEQ);
            double r99 = rtt[(int)(SEQ * 0.99)]; /* sorted by median() */
            printf("   %-14s sync=%-6s pending %lld  cycle p50 %.2f ms p99 %.2f ms  mean cycle "
                   "%.2f ms, commit %.2f ms  rtt p50 %.2f ms p99 %.2f ms%s\n",
                   p, syncs[k], pend, p50 * 1e3, p99 * 1e3,
                   cc1 > cc0 ? (cs1 - cs0) / (cc1 - cc0) * 1e3 : 0,
                   mc1 > mc0 ? (ms1 - ms0) / (mc1 - mc0) * 1e3 : 0, r50 * 1e3, r99 * 1e3,
                   errors ? " (submit errors!)" : "");
            fflush(stdout);
            if (h) json_decref(h);
            stop(&s);
        }
    }
    free(list);
section3:;
    int rc = strchr(sections, '3') ? queue_latency(queue_pending, clients) : 0;
    if (!rc && strchr(sections, '4')) rc = memory_over_finished(finished, clients);
    curl_global_cleanup();
    return rc;
}
