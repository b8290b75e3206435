/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proctree.c - process tracking without cgroups (see proctree.h): the
 * descendants of a task's shim, from the parent links in /proc, and the loop
 * that kills them until none is left.
 *
 * Why it works: the shim is a child subreaper (PR_SET_CHILD_SUBREAPER), so a
 * process whose parent dies - a double fork, a shell killed under its
 * background jobs - is reparented to the shim, not to init, and setsid() does
 * not change the parent.  Every process the task started stays a descendant
 * of the shim while the shim lives.  What escapes: a process reparented
 * outside (started through another service: at, systemd-run, ssh; or every
 * process once the shim itself was killed).  cgroups close that (cgroup.c).
 *
 * When is a tree gone?  Not when one walk of /proc finds nothing below root:
 * a walk is not atomic (a process may fork a child into the part already
 * read, then exit before its own entry is read), so a fork runner - fork,
 * parent exits, child setsid()s, again and again - slips through.  The end
 * condition is root's own children: a live descendant always has a live
 * chain of parents up to root, so once root has no child (the shim reaping
 * its own: waitpid says ECHILD) or only zombie ones (the daemon, reading
 * /proc/ROOT/task/TID/children of the shim, which keeps reaping), nothing is
 * left.  A live child of root is killed the moment the walk reads it (a
 * fork runner's process lives for microseconds).
 *
 * Invariants: a pid is signalled only if the walk just found it below root
 * (root itself is never signalled); zombies are skipped (already dead);
 * every loop is bounded in time, and running out of time is reported (the
 * count left), never taken for success.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proctree.h"

int gsd_proc_parse_ppid(const char *buf, size_t n, int64_t *ppid, char *state)
{
    size_t rp = n;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == ')') rp = i;
    /* ") S PPID ..." */
    if (rp == n || rp + 4 >= n || buf[rp + 1] != ' ' || buf[rp + 3] != ' ') return -1;
    int64_t v = 0;
    size_t i = rp + 4, start = i;
    while (i < n && buf[i] >= '0' && buf[i] <= '9') v = v * 10 + (buf[i++] - '0');
    if (i == start || (i < n && buf[i] != ' ')) return -1;
    *ppid = v;
    if (state) *state = buf[rp + 2];
    return 0;
}

typedef struct pent {
    pid_t pid, ppid;
    char state;
    char below; /* a descendant of the root */
} pent;

static int pent_cmp(const void *a, const void *b)
{
    pid_t x = ((const pent *)a)->pid, y = ((const pent *)b)->pid;
    return (x > y) - (x < y);
}

/* Every process of /proc (sorted by pid) in *out; the count, or -1.  kill_root > 0: a live
 * child of kill_root is SIGKILLed the moment it is read (a fork runner's process lives for
 * microseconds: signalled only after the whole walk, it would be gone, its child forked). */
static long read_procs(pent **out, pid_t kill_root)
{
    DIR *dp = opendir("/proc");
    if (!dp) return -1;
    size_t n = 0, cap = 256;
    pent *v = malloc(cap * sizeof *v);
    if (!v) abort();
    struct dirent *de;
    char path[64], buf[1024];
    while ((de = readdir(dp))) {
        char *e;
        long pid = strtol(de->d_name, &e, 10);
        if (*e || pid <= 0) continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        int64_t pp;
        char st;
        if (r <= 0 || gsd_proc_parse_ppid(buf, (size_t)r, &pp, &st)) continue;
        if (kill_root > 0 && pp == kill_root && st != 'Z' && st != 'X') kill((pid_t)pid, SIGKILL);
        if (n == cap) {
            cap *= 2;
            pent *nv = realloc(v, cap * sizeof *nv);
            if (!nv) abort();
            v = nv;
        }
        v[n++] = (pent){(pid_t)pid, (pid_t)pp, st, 0};
    }
    closedir(dp);
    qsort(v, n, sizeof *v, pent_cmp);
    *out = v;
    return (long)n;
}

/* Mark the descendants of root (through zombies too: a zombie's children are still below). */
static void mark_below(pent *v, long n, pid_t root)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (long i = 0; i < n; i++) {
            if (v[i].below || v[i].pid == root) continue;
            int below = v[i].ppid == root;
            if (!below && v[i].ppid > 0) {
                pent key = {.pid = v[i].ppid};
                pent *p = bsearch(&key, v, (size_t)n, sizeof *v, pent_cmp);
                below = p && p->below;
            }
            if (below) {
                v[i].below = 1;
                changed = 1;
            }
        }
    }
}

static int live(const pent *p)
{
    return p->below && p->state != 'Z' && p->state != 'X';
}

long gsd_proc_descendants(pid_t root, pid_t *out, size_t cap)
{
    pent *v;
    long n = read_procs(&v, 0);
    if (n < 0) return -1;
    mark_below(v, n, root);
    long k = 0;
    for (long i = 0; i < n; i++) {
        if (!live(&v[i])) continue;
        if ((size_t)k < cap) out[k] = v[i].pid;
        k++;
    }
    free(v);
    return k;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/*
 * Does root still have a live child?  Read from /proc/ROOT/task/TID/children, twice, around the
 * state checks: a child that exits hands its own children to root (a subreaper) before it
 * becomes a zombie, so a list that is the same before and after, with every entry a zombie,
 * means no live descendant is left.  1 = one may be left, 0 = none, -1 = cannot be told (no
 * children files: a kernel without CONFIG_PROC_CHILDREN).
 */
static long read_children(pid_t root, pid_t *out, long cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)root);
    DIR *dp = opendir(path);
    if (!dp) return -1;
    long n = 0, files = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        char f[320], buf[16384];
        snprintf(f, sizeof f, "%s/%s/children", path, de->d_name);
        int fd = open(f, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        files++;
        size_t got = 0;
        ssize_t r;
        while (got < sizeof buf - 1 && (r = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
            got += (size_t)r;
        char more;
        if (got == sizeof buf - 1 && read(fd, &more, 1) > 0) n = cap; /* too many to list */
        close(fd);
        buf[got] = '\0';
        for (char *p = buf, *e; *p && n < cap; p = e) {
            long v = strtol(p, &e, 10);
            if (e == p) break;
            out[n++] = (pid_t)v;
        }
    }
    closedir(dp);
    return files ? n : -1;
}

static int live_child_left(pid_t root)
{
    pid_t a[256], b[256];
    long na = read_children(root, a, 256);
    if (na < 0) return -1;
    if (na >= 256) return 1;
    for (long i = 0; i < na; i++) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%ld/stat", (long)a[i]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue; /* reaped meanwhile */
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        int64_t pp;
        char st;
        if (r <= 0 || gsd_proc_parse_ppid(buf, (size_t)r, &pp, &st)) continue;
        if (st != 'Z' && st != 'X') return 1;
    }
    long nb = read_children(root, b, 256);
    if (nb != na) return 1;
    for (long i = 0; i < na; i++)
        if (a[i] != b[i]) return 1;
    return 0;
}

long gsd_proc_kill_tree(pid_t root, int max_ms, int reap)
{
    double until = mono_ms() + max_ms;
    for (;;) {
        pent *v;
        long n = read_procs(&v, root);
        if (n < 0) return -1;
        mark_below(v, n, root);
        long left = 0;
        /* stop first, then kill: a stopped process forks no more while the others die */
        for (long i = 0; i < n; i++)
            if (live(&v[i])) kill(v[i].pid, SIGSTOP);
        for (long i = 0; i < n; i++)
            if (live(&v[i])) {
                kill(v[i].pid, SIGKILL);
                left++;
            }
        free(v);
        /* one walk that finds nothing proves nothing (it is not atomic: a process may fork a
         * child into the part of /proc already read, then exit before it is read).  The end
         * is told by root's children instead: every live descendant has a live chain of
         * parents up to root, a subreaper, so it is one of root's children or below one. */
        int none;
        if (reap) {
            pid_t w;
            while ((w = waitpid(-1, NULL, WNOHANG)) > 0) {
            }
            none = w < 0 && errno == ECHILD; /* no child at all: no descendant */
        } else {
            int c = live_child_left(root);
            none = c < 0 ? !left : !c; /* no children files: the walk is all there is */
        }
        if (none) return 0;
        if (mono_ms() >= until) return left ? left : 1;
        if (!left) {
            struct timespec ts = {0, 2 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}
