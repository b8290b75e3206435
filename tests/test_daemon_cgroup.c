/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_cgroup.c - the local executor's process tracking: parsing of
 * /proc/self/mountinfo, /proc/self/cgroup, cgroup.events, task cgroup names
 * and /proc/PID/stat parent links; `--cgroup` modes; the fallback's kill of a
 * subreaper's whole tree (setsid'ed and double-forked descendants); and, where
 * a cgroup2 hierarchy is writable here, a task cgroup killed whole through
 * cgroup.kill and through the freeze + SIGKILL path, limits written only where
 * their controller is enabled (and said otherwise).  Every wait is bounded.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "harness.h"
#include "proctree.h"

static void parse_mountinfo(void)
{
    char out[256];
    /* a hybrid host: v1 hierarchies and the unified one */
    const char *hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                         "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
                         "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    ASSERT_OK(gsd_cg_parse_mountinfo(hybrid, out, sizeof out));
    ASSERT_STR(out, "/sys/fs/cgroup/unified");
    /* pure v2 with optional fields before the separator, no trailing newline */
    const char *v2 = "22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
                     "25 21 0:23 / /sys/fs/cgroup rw,nosuid,nodev shared:9 master:3 - cgroup2 "
                     "cgroup2 rw,nsdelegate,memory_recursiveprot";
    ASSERT_OK(gsd_cg_parse_mountinfo(v2, out, sizeof out));
    ASSERT_STR(out, "/sys/fs/cgroup");
    /* octal escapes in the mount point; a file system *named* cgroup2 elsewhere is no match */
    const char *esc = "30 1 0:40 / /mnt/cgroup2 rw - tmpfs cgroup2 rw\n"
                      "31 1 0:41 / /mnt/my\\040cg\\134x rw - cgroup2 none rw\n";
    ASSERT_OK(gsd_cg_parse_mountinfo(esc, out, sizeof out));
    ASSERT_STR(out, "/mnt/my cg\\x");
    /* none, or no room */
    ASSERT_EQ(gsd_cg_parse_mountinfo("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw\n", out,
                                     sizeof out),
              -1);
    ASSERT_EQ(gsd_cg_parse_mountinfo("", out, sizeof out), -1);
    ASSERT_EQ(gsd_cg_parse_mountinfo("garbage line\n- cgroup2\n", out, sizeof out), -1);
    ASSERT_EQ(gsd_cg_parse_mountinfo(hybrid, out, 8), -1);
}

static void parse_self_and_events(void)
{
    char out[256];
    const char *hybrid = "9:name=systemd:/\n4:memory:/process_api/74c7\n1:cpu:/\n0::/\n";
    ASSERT_OK(gsd_cg_parse_self(hybrid, out, sizeof out));
    ASSERT_STR(out, "/");
    ASSERT_OK(gsd_cg_parse_self("0::/system.slice/gsched.service", out, sizeof out));
    ASSERT_STR(out, "/system.slice/gsched.service");
    ASSERT_EQ(gsd_cg_parse_self("4:memory:/a\n1:cpu:/\n", out, sizeof out), -1); /* v1 only */
    ASSERT_EQ(gsd_cg_parse_self("10::/x\n", out, sizeof out), -1);
    ASSERT_EQ(gsd_cg_parse_self("0::/a/long/path", out, 6), -1);
    ASSERT_EQ(gsd_cg_parse_populated("populated 1\nfrozen 0\n"), 1);
    ASSERT_EQ(gsd_cg_parse_populated("frozen 0\npopulated 0\n"), 0);
    ASSERT_EQ(gsd_cg_parse_populated("frozen 1\n"), -1);
    ASSERT_EQ(gsd_cg_parse_populated("populated x\n"), -1);
}

static void task_names(void)
{
    char dir[256];
    gsd_cg_task_dir("/sys/fs/cgroup/gsched-0a", 12, 3, 1, dir, sizeof dir);
    ASSERT_STR(dir, "/sys/fs/cgroup/gsched-0a/job-12.run-3.task-1");
    int64_t j;
    int r, t;
    ASSERT(gsd_cg_parse_task_name("job-12.run-3.task-1", &j, &r, &t));
    ASSERT(j == 12 && r == 3 && t == 1);
    const char *bad[] = {"job-12.run-3.task-1x", "job-012.run-3.task-1",
                         "job-+1.run-3.task-1",  "probe-123",
                         "job-1.run-1",          "",
                         "job-1.run-1.task-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (gsd_cg_parse_task_name(bad[i], &j, &r, &t)) T_FAIL("accepted '%s'", bad[i]);
}

static void parse_stat_ppid(void)
{
    int64_t pp;
    char st;
    const char *a = "123 (a b) c) S 45 123 123 0 -1 4194560";
    ASSERT_OK(gsd_proc_parse_ppid(a, strlen(a), &pp, &st));
    ASSERT_EQ(pp, 45);
    ASSERT_EQ(st, 'S');
    const char *z = "9 (sleep) Z 1 9 9 0";
    ASSERT_OK(gsd_proc_parse_ppid(z, strlen(z), &pp, &st));
    ASSERT_EQ(pp, 1);
    ASSERT_EQ(st, 'Z');
    const char *bad[] = {"123 (x S 4", "123 (x) S", "123 (x) S x", "", "1 (x) SS 2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (gsd_proc_parse_ppid(bad[i], strlen(bad[i]), &pp, &st) == 0)
            T_FAIL("parsed '%s'", bad[i]);
}

static void setup_modes(void)
{
    gsd_cg cg;
    char msg[512] = "";
    ASSERT_OK(gsd_cg_setup(&cg, "off", "/x", msg, sizeof msg));
    ASSERT_STR(cg.base, "");
    ASSERT_CONTAINS(cg.why, "off");
    ASSERT_OK(gsd_cg_setup(&cg, NULL, "/x", msg, sizeof msg));
    ASSERT_STR(cg.base, "");
    char desc[1024];
    gsd_cg_describe(&cg, desc, sizeof desc);
    ASSERT_CONTAINS(desc, "without cgroups");
    ASSERT_CONTAINS(desc, "not enforced");
    ASSERT_EQ(gsd_cg_setup(&cg, "on", "/x", msg, sizeof msg), -1);
    ASSERT_CONTAINS(msg, "expected auto, off or an absolute directory");
    /* an explicit directory outside a cgroup2 file system is an error, not a silent fallback */
    ASSERT_EQ(gsd_cg_setup(&cg, "/tmp/gsched-not-a-cgroup", "/x", msg, sizeof msg), -1);
    ASSERT_CONTAINS(msg, "is not in a cgroup2 filesystem");
    ASSERT_STR(cg.base, "");
    /* auto: either a base (proven usable) or a reason */
    ASSERT_OK(gsd_cg_setup(&cg, "auto", "/x", msg, sizeof msg));
    if (cg.base[0]) {
        ASSERT_CONTAINS(cg.base, "/gsched-");
        ASSERT_EQ(cg.own_base, 1); /* made by gsched: removed by it once empty */
        gsd_cg_describe(&cg, desc, sizeof desc);
        ASSERT_CONTAINS(desc, "cgroup v2 at ");
        /* an explicit directory next to it: made if missing, but the operator's (never
         * removed by gsched) */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s-explicit", cg.base);
        rmdir(cg.base);
        gsd_cg ex;
        ASSERT_OK(gsd_cg_setup(&ex, dir, "/x", msg, sizeof msg));
        ASSERT_STR(ex.base, dir);
        ASSERT_EQ(ex.own_base, 0);
        ASSERT_OK(rmdir(dir));
    } else {
        ASSERT(cg.why[0]);
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A child that is a subreaper with a setsid'ed child and an orphaned, setsid'ed grandchild
 * (double fork), like a task shim whose command left those behind.  Returns its pid once
 * everything is started; sleepers gets the two sleepers' pids.  join: a cgroup.procs file the
 * child moves into first (NULL = none). */
static pid_t start_tree(pid_t *sleepers, const char *join)
{
    int p[2];
    if (pipe(p)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (join && gsd_cg_join(join) != 0) _exit(3);
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        pid_t a = fork();
        if (a == 0) {
            setsid();
            execl("/bin/sleep", "sleep", "600", (char *)NULL);
            _exit(127);
        }
        int q[2];
        if (pipe(q)) _exit(4);
        pid_t mid = fork();
        if (mid == 0) {
            pid_t b = fork();
            if (b == 0) {
                setsid();
                execl("/bin/sleep", "sleep", "600", (char *)NULL);
                _exit(127);
            }
            ssize_t w = write(q[1], &b, sizeof b);
            (void)w;
            _exit(0); /* b is orphaned: reparented to us, the subreaper */
        }
        pid_t b = 0;
        ssize_t r = read(q[0], &b, sizeof b);
        (void)r;
        waitpid(mid, NULL, 0);
        pid_t both[2] = {a, b};
        ssize_t w = write(p[1], both, sizeof both);
        (void)w;
        for (;;) pause();
    }
    close(p[1]);
    ssize_t r = read(p[0], sleepers, 2 * sizeof *sleepers);
    close(p[0]);
    return r == 2 * (ssize_t)sizeof *sleepers ? pid : -1;
}

static int gone(pid_t pid)
{
    char st = '?';
    for (int i = 0; i < 200; i++) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f) return 1;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        int64_t pp;
        if (gsd_proc_parse_ppid(buf, n, &pp, &st) == 0 && (st == 'Z' || st == 'X')) return 1;
        sleep_ms(10);
    }
    return 0;
}

static void fallback_kills_the_whole_tree(void)
{
    pid_t s[2];
    pid_t root = start_tree(s, NULL);
    ASSERT(root > 0);
    pid_t v[16];
    long n = gsd_proc_descendants(root, v, 16);
    ASSERT(n >= 2); /* both sleepers are below the subreaper, whatever their session */
    int found = 0;
    for (long i = 0; i < n && i < 16; i++) found += v[i] == s[0] || v[i] == s[1];
    ASSERT_EQ(found, 2);
    ASSERT_EQ(gsd_proc_kill_tree(root, 3000, 0), 0);
    ASSERT(gone(s[0]) && gone(s[1]));
    ASSERT_EQ(gsd_proc_descendants(root, v, 16), 0);
    ASSERT_EQ(kill(root, 0), 0); /* the root itself is never signalled */
    kill(root, SIGKILL);
    waitpid(root, NULL, 0);
}

static void cgroup_kill_and_limits(void)
{
    gsd_cg cg;
    char msg[512];
    ASSERT_OK(gsd_cg_setup(&cg, "auto", "test_daemon_cgroup", msg, sizeof msg));
    if (!cg.base[0]) {
        printf("  (skipped: %s)\n", cg.why);
        return;
    }
    for (int freeze = 0; freeze < 2; freeze++) {
        char dir[4200], procs[4300], path[4300];
        gsd_cg_task_dir(cg.base, 7, 1, freeze, dir, sizeof dir);
        ASSERT_OK(gsd_cg_task_create(&cg, dir, 2, 64, msg, sizeof msg));
        ASSERT_EQ(gsd_cg_populated(dir), 0);
        snprintf(procs, sizeof procs, "%s/job/cgroup.procs", dir);
        pid_t s[2];
        pid_t root = start_tree(s, procs);
        ASSERT(root > 0);
        ASSERT_EQ(gsd_cg_populated(dir), 1);
        snprintf(path, sizeof path, "%s/job", dir);
        ASSERT_EQ(gsd_cg_populated(path), 1);
        snprintf(path, sizeof path, "%s/shim", dir);
        ASSERT_EQ(gsd_cg_populated(path), 0);
        /* limits only where the controller is enabled; otherwise the reason is given */
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (cg.ctrl & GSD_CG_CPU) {
            FILE *f = fopen(path, "r");
            char line[64] = "";
            ASSERT(f && fgets(line, sizeof line, f));
            fclose(f);
            ASSERT_CONTAINS(line, "200000 100000");
        } else {
            ASSERT_CONTAINS(cg.why, "cpu");
        }
        if (!(cg.ctrl & GSD_CG_MEMORY)) ASSERT_CONTAINS(cg.why, "memory");
        /* a busy cgroup is not removed */
        ASSERT_EQ(gsd_cg_remove(dir), -1);
        ASSERT_OK(gsd_cg_kill(dir, freeze));
        int w = 0;
        while (gsd_cg_populated(dir) == 1 && w++ < 300) sleep_ms(10);
        ASSERT_EQ(gsd_cg_populated(dir), 0);
        waitpid(root, NULL, 0);
        ASSERT(gone(s[0]) && gone(s[1]));
        ASSERT_OK(gsd_cg_remove(dir));
        ASSERT_EQ(gsd_cg_populated(dir), -1);
        ASSERT_EQ(gsd_cg_kill(dir, 0), -1);
    }
    ASSERT_OK(rmdir(cg.base));
}

static const test_case tests[] = {
    {"parse_mountinfo", parse_mountinfo},
    {"parse_self_and_events", parse_self_and_events},
    {"task_names", task_names},
    {"parse_stat_ppid", parse_stat_ppid},
    {"setup_modes", setup_modes},
    {"fallback_kills_the_whole_tree", fallback_kills_the_whole_tree},
    {"cgroup_kill_and_limits", cgroup_kill_and_limits},
};

TEST_MAIN(tests)
