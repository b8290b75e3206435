/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c - cgroup v2 process tracking for the local executor (see
 * cgroup.h): finds the cgroup2 mount and the daemon's own cgroup, decides
 * where task cgroups go (`serve --cgroup auto|off|DIR`) and which limits can
 * be enforced, makes, kills and removes one cgroup per task.
 *
 * Why: a process that leaves its task's process group (setsid, a double
 * fork) survived the task's end and kept its GPUs in use.  A cgroup cannot be
 * left by an unprivileged process, so "the cgroup is empty" is the end of a
 * task and killing the cgroup kills all of it.
 *
 * Invariants:
 *  - nothing here is process-wide state: the chosen base and controllers live in the
 *    caller's gsd_cg;
 *  - "auto" uses cgroups only after proving it can (a child cgroup made and a forked process
 *    moved into it); otherwise cg->why says why and nothing is left behind; an explicit DIR
 *    that cannot be used is an error, never a silent fallback;
 *  - a limit is written only where its controller is enabled; cg->why names every one that
 *    is not, so nothing pretends to be enforced;
 *  - gsd_cg_join is async-signal-safe (called between fork and exec);
 *  - killing never signals a pid that is not listed in the cgroup's cgroup.procs (or uses
 *    the kernel's cgroup.kill), and gsd_cg_remove removes only empty cgroups.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* ---- small file helpers --------------------------------------------------------------------- */

/* The whole file (NUL-terminated, malloc'ed) or NULL with errno set. */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) abort();
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) abort();
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return buf;
}

/* Write s to path (one write, as cgroup files want).  0 or -1 with errno. */
static int put(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t n = strlen(s);
    ssize_t w = write(fd, s, n);
    int e = errno;
    close(fd);
    if (w == (ssize_t)n) return 0;
    errno = w < 0 ? e : EIO;
    return -1;
}

static int join2(char *out, size_t cap, const char *a, const char *b)
{
    size_t la = strlen(a);
    while (la > 1 && a[la - 1] == '/') la--;
    if (la == 1 && a[0] == '/') la = 0;
    int n = snprintf(out, cap, "%.*s/%s", (int)la, a, b[0] == '/' ? b + 1 : b);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* 1 if the space-separated list has word. */
static int has_word(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\n') p++;
        size_t l = strcspn(p, " \n");
        if (l == wl && !strncmp(p, word, wl)) return 1;
        p += l;
    }
    return 0;
}

/* ---- parsing -------------------------------------------------------------------------------- */

/* Copy a mountinfo field of length n, decoding \NNN octal escapes.  0 or -1 (too long). */
static int unescape(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
            s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        }
        if (k + 1 >= cap) return -1;
        out[k++] = c;
    }
    if (!cap) return -1;
    out[k] = '\0';
    return 0;
}

int gsd_cg_parse_mountinfo(const char *text, char *out, size_t cap)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        /* fields: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ... */
        const char *f[5];
        size_t fl[5];
        size_t i = 0;
        int nf = 0;
        while (nf < 5 && i < len) {
            while (i < len && line[i] == ' ') i++;
            if (i >= len) break;
            f[nf] = line + i;
            while (i < len && line[i] != ' ') i++;
            fl[nf] = (size_t)(line + i - f[nf]);
            nf++;
        }
        const char *sep = NULL;
        for (size_t k = i; k + 1 < len; k++)
            if (line[k] == ' ' && line[k + 1] == '-' && (k + 2 == len || line[k + 2] == ' ')) {
                sep = line + k + 2;
                break;
            }
        if (nf == 5 && sep) {
            const char *ft = sep;
            const char *lend = line + len;
            while (ft < lend && *ft == ' ') ft++;
            size_t tl = 0;
            while (ft + tl < lend && ft[tl] != ' ') tl++;
            if (tl == 7 && !strncmp(ft, "cgroup2", 7)) return unescape(f[4], fl[4], out, cap);
        }
        line = end ? end + 1 : NULL;
    }
    return -1;
}

int gsd_cg_parse_self(const char *text, char *out, size_t cap)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len >= 4 && !strncmp(line, "0::/", 4)) {
            if (len - 3 + 1 > cap) return -1;
            memcpy(out, line + 3, len - 3);
            out[len - 3] = '\0';
            return 0;
        }
        line = end ? end + 1 : NULL;
    }
    return -1;
}

int gsd_cg_parse_populated(const char *text)
{
    for (const char *line = text; line && *line;) {
        if (!strncmp(line, "populated ", 10)) {
            if (line[10] == '0' || line[10] == '1') return line[10] - '0';
            return -1;
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
    return -1;
}

void gsd_cg_task_dir(const char *base, int64_t job, int run, int task, char *out, size_t cap)
{
    snprintf(out, cap, "%s/job-%lld.run-%d.task-%d", base, (long long)job, run, task);
}

int gsd_cg_parse_task_name(const char *name, int64_t *job, int *run, int *task)
{
    long long j;
    int r, t, n = -1;
    if (sscanf(name, "job-%lld.run-%d.task-%d%n", &j, &r, &t, &n) != 3 || n < 0 || name[n])
        return 0;
    char chk[128];
    snprintf(chk, sizeof chk, "job-%lld.run-%d.task-%d", j, r, t);
    if (strcmp(chk, name)) return 0; /* one spelling per task: no "+1", no leading zeros */
    *job = j;
    *run = r;
    *task = t;
    return 1;
}

/* ---- setup ---------------------------------------------------------------------------------- */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Make base (if missing) and prove a process can be moved into a child of it: a probe cgroup
 * and a forked child that joins it.  0, or -1 with why set (and nothing left that we made). */
static int make_and_probe(const char *base, char *why, size_t cap)
{
    int made = 0;
    if (mkdir(base, 0755) == 0)
        made = 1;
    else if (errno != EEXIST) {
        snprintf(why, cap, "cannot create the cgroup %s: %s", base, strerror(errno));
        return -1;
    }
    /* one daemon per state directory (its database lock), so one probe name: a daemon killed
     * right here leaves it behind, empty, and the next one removes it */
    char probe[PATH_MAX], procs[PATH_MAX + 16];
    snprintf(probe, sizeof probe, "%s/probe", base);
    snprintf(procs, sizeof procs, "%s/cgroup.procs", probe);
    if (mkdir(probe, 0755) != 0 && errno != EEXIST) {
        snprintf(why, cap, "cannot create a cgroup in %s: %s", base, strerror(errno));
        if (made) rmdir(base);
        return -1;
    }
    int e = 0;
    pid_t pid = fork();
    if (pid == 0) _exit(gsd_cg_join(procs) == 0 ? 0 : (errno & 0x7f) ? (errno & 0x7f) : 1);
    if (pid < 0) {
        e = errno;
    } else {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        e = WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
    }
    for (int i = 0; i < 100 && rmdir(probe) != 0 && errno == EBUSY; i++) sleep_ms(10);
    if (e) {
        snprintf(why, cap, "cannot move a process into a cgroup under %s: %s", base, strerror(e));
        if (made) rmdir(base);
        return -1;
    }
    return 0;
}

/* Enable cpu and memory for the children of cg->base (in its parent first, where they must be
 * enabled to be available in base); record what is and why the rest is not. */
static void enable_controllers(gsd_cg *cg)
{
    static const struct {
        const char *name;
        unsigned bit;
    } cs[] = {{"cpu", GSD_CG_CPU}, {"memory", GSD_CG_MEMORY}};
    char parent[4096], path[4200];
    snprintf(parent, sizeof parent, "%s", cg->base);
    char *sl = strrchr(parent, '/');
    if (sl && sl != parent)
        *sl = '\0';
    else if (sl)
        sl[1] = '\0';
    cg->ctrl = 0;
    char missing[256] = "", reason[512] = "";
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char plus[32];
        snprintf(plus, sizeof plus, "+%s", cs[i].name);
        snprintf(path, sizeof path, "%s/cgroup.controllers", cg->base);
        char *have = slurp(path);
        int perr = 0;
        if (!has_word(have, cs[i].name)) {
            snprintf(path, sizeof path, "%s/cgroup.subtree_control", parent);
            if (put(path, plus) != 0) perr = errno;
            free(have);
            snprintf(path, sizeof path, "%s/cgroup.controllers", cg->base);
            have = slurp(path);
        }
        int ok = has_word(have, cs[i].name);
        free(have);
        if (ok) {
            snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg->base);
            if (put(path, plus) == 0) {
                cg->ctrl |= cs[i].bit;
                continue;
            }
            perr = errno;
        }
        size_t ml = strlen(missing);
        snprintf(missing + ml, sizeof missing - ml, "%s%s", ml ? " and " : "", cs[i].name);
        if (!reason[0]) {
            snprintf(path, sizeof path, "%s/cgroup.controllers", parent);
            char *avail = slurp(path);
            if (avail) avail[strcspn(avail, "\n")] = '\0';
            if (!ok && !has_word(avail, cs[i].name))
                snprintf(reason, sizeof reason, "%s offers only '%s'", parent, avail ? avail : "?");
            else
                snprintf(reason, sizeof reason,
                         "cannot enable them in %s/cgroup.subtree_control: %s",
                         ok ? cg->base : parent, strerror(perr ? perr : EPERM));
            free(avail);
        }
    }
    if (cg->ctrl == (GSD_CG_CPU | GSD_CG_MEMORY))
        cg->why[0] = '\0';
    else
        snprintf(cg->why, sizeof cg->why, "the %s controller%s not available (%s)", missing,
                 strchr(missing, ' ') ? "s are" : " is", reason);
}

/* FNV-1a: a short stable name for a state directory. */
static uint32_t fnv32(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int gsd_cg_setup(gsd_cg *cg, const char *mode, const char *instance, char *msg, size_t cap)
{
    memset(cg, 0, sizeof *cg);
    if (!mode || !strcmp(mode, "off")) {
        snprintf(cg->why, sizeof cg->why, "cgroups are off (--cgroup off)");
        return 0;
    }
    char mnt[PATH_MAX], self[PATH_MAX], parent[4096];
    if (!strcmp(mode, "auto")) {
        char *mi = slurp("/proc/self/mountinfo");
        int ok = mi && gsd_cg_parse_mountinfo(mi, mnt, sizeof mnt) == 0;
        free(mi);
        if (!ok) {
            snprintf(cg->why, sizeof cg->why, "no cgroup2 filesystem is mounted");
            return 0;
        }
        char *sc = slurp("/proc/self/cgroup");
        ok = sc && gsd_cg_parse_self(sc, self, sizeof self) == 0;
        free(sc);
        if (!ok) {
            snprintf(cg->why, sizeof cg->why,
                     "this process has no cgroup v2 path in /proc/self/cgroup");
            return 0;
        }
        char name[32];
        snprintf(name, sizeof name, "gsched-%08x", (unsigned)fnv32(instance ? instance : ""));
        if (join2(parent, sizeof parent, mnt, self) ||
            join2(cg->base, sizeof cg->base, parent, name)) {
            snprintf(cg->why, sizeof cg->why, "cgroup path too long");
            cg->base[0] = '\0';
            return 0;
        }
        if (make_and_probe(cg->base, cg->why, sizeof cg->why)) {
            cg->base[0] = '\0';
            return 0;
        }
        cg->own_base = 1;
    } else if (mode[0] == '/') {
        if (strlen(mode) >= sizeof cg->base - 64) {
            snprintf(msg, cap, "--cgroup: directory name too long");
            return -1;
        }
        snprintf(cg->base, sizeof cg->base, "%s", mode);
        size_t l = strlen(cg->base);
        while (l > 1 && cg->base[l - 1] == '/') cg->base[--l] = '\0';
        snprintf(parent, sizeof parent, "%s", cg->base);
        char *sl = strrchr(parent, '/');
        if (sl == parent)
            sl[1] = '\0';
        else
            *sl = '\0';
        struct statfs sf;
        if (statfs(parent, &sf) != 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC) {
            snprintf(msg, cap, "--cgroup %s: %s is not in a cgroup2 filesystem", mode, parent);
            cg->base[0] = '\0';
            return -1;
        }
        char why[512];
        if (make_and_probe(cg->base, why, sizeof why)) {
            snprintf(msg, cap, "--cgroup %s: %s", mode, why);
            cg->base[0] = '\0';
            return -1;
        }
    } else {
        snprintf(msg, cap, "--cgroup: expected auto, off or an absolute directory, got '%s'", mode);
        return -1;
    }
    enable_controllers(cg);
    return 0;
}

void gsd_cg_describe(const gsd_cg *cg, char *buf, size_t cap)
{
    if (!cg->base[0])
        snprintf(buf, cap,
                 "tasks: process tracking without cgroups (%s): the task shim kills what is "
                 "left of its process tree; cpus and memory are not enforced",
                 cg->why);
    else if (cg->why[0])
        snprintf(buf, cap,
                 "tasks: process tracking in cgroup v2 at %s (one cgroup per task); cpus and "
                 "memory of job specs not fully enforced: %s",
                 cg->base, cg->why);
    else
        snprintf(buf, cap,
                 "tasks: process tracking in cgroup v2 at %s (one cgroup per task); cpus and "
                 "memory enforced through cpu.max and memory.max",
                 cg->base);
}

/* ---- one task's cgroup ---------------------------------------------------------------------- */

int gsd_cg_task_create(const gsd_cg *cg, const char *dir, int cpus, int mem_mb, char *err,
                       size_t cap)
{
    char p[4200];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, cap, "cannot create cgroup %s: %s", dir, strerror(errno));
        return -1;
    }
    const char *sub[] = {"shim", "job"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            snprintf(err, cap, "cannot create cgroup %s: %s", p, strerror(errno));
            gsd_cg_remove(dir);
            return -1;
        }
    }
    char v[64];
    if (cpus > 0 && (cg->ctrl & GSD_CG_CPU)) {
        snprintf(p, sizeof p, "%s/cpu.max", dir);
        snprintf(v, sizeof v, "%lld 100000", (long long)cpus * 100000);
        if (put(p, v) != 0) {
            snprintf(err, cap, "cannot write %s: %s", p, strerror(errno));
            gsd_cg_remove(dir);
            return -1;
        }
    }
    if (mem_mb > 0 && (cg->ctrl & GSD_CG_MEMORY)) {
        snprintf(p, sizeof p, "%s/memory.max", dir);
        snprintf(v, sizeof v, "%lld", (long long)mem_mb * 1024 * 1024);
        if (put(p, v) != 0) {
            snprintf(err, cap, "cannot write %s: %s", p, strerror(errno));
            gsd_cg_remove(dir);
            return -1;
        }
        /* memory means memory: no swapping past it (the file exists only with swap accounting) */
        snprintf(p, sizeof p, "%s/memory.swap.max", dir);
        if (access(p, F_OK) == 0) put(p, "0");
    }
    return 0;
}

int gsd_cg_join(const char *procs)
{
    int fd = open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t w = write(fd, "0", 1);
    int e = errno;
    close(fd);
    if (w == 1) return 0;
    errno = w < 0 ? e : EIO;
    return -1;
}

int gsd_cg_populated(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/cgroup.events", dir);
    char *t = slurp(p);
    if (!t) return -1;
    int v = gsd_cg_parse_populated(t);
    free(t);
    return v < 0 ? 1 : v; /* unreadable state: assume something is there */
}

/* sig to every pid listed in dir/cgroup.procs and in its child cgroups. */
static void signal_listed(const char *dir, int sig, int depth)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/cgroup.procs", dir);
    char *t = slurp(p);
    for (char *s = t; s && *s;) {
        char *e;
        long pid = strtol(s, &e, 10);
        if (e == s) break;
        if (pid > 0) kill((pid_t)pid, sig);
        s = e;
        while (*s == '\n' || *s == ' ') s++;
    }
    free(t);
    if (depth > 32) return;
    DIR *dp = opendir(dir);
    if (!dp) return;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (de->d_name[0] == '.') continue;
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) signal_listed(p, sig, depth + 1);
    }
    closedir(dp);
}

int gsd_cg_signal(const char *dir, int sig)
{
    struct stat st;
    if (stat(dir, &st) != 0) return -1;
    signal_listed(dir, sig, 0);
    return 0;
}

int gsd_cg_kill(const char *dir, int force_freeze)
{
    char p[4200];
    struct stat st;
    if (stat(dir, &st) != 0) return -1;
    snprintf(p, sizeof p, "%s/cgroup.kill", dir);
    if (!force_freeze && put(p, "1") == 0) return 0;
    /* no cgroup.kill (kernels before 5.14): freeze, so nothing forks meanwhile, then SIGKILL
     * every listed pid (a fatal signal ends frozen processes too) until it is empty */
    snprintf(p, sizeof p, "%s/cgroup.freeze", dir);
    int frozen = put(p, "1") == 0;
    for (int round = 0; round < 100; round++) {
        signal_listed(dir, SIGKILL, 0);
        if (gsd_cg_populated(dir) != 1) break;
        sleep_ms(10);
    }
    if (frozen) put(p, "0");
    return 0;
}

static int remove_tree(const char *dir, int depth)
{
    DIR *dp = opendir(dir);
    if (!dp) return errno == ENOENT ? 0 : -1;
    struct dirent *de;
    char p[4200];
    while ((de = readdir(dp))) {
        if (de->d_name[0] == '.') continue;
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (depth < 32 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p, depth + 1);
    }
    closedir(dp);
    if (rmdir(dir) == 0 || errno == ENOENT) return 0;
    return -1;
}

int gsd_cg_remove(const char *dir)
{
    return remove_tree(dir, 0);
}
