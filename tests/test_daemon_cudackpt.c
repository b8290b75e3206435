/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_cudackpt.c - src/daemon/cudackpt.c against the fake CUDA driver
 * (tests/fake_cuda.c, built as fake-cuda/libcuda.so.1 and, without the
 * checkpoint API, fake-cuda-old/libcuda.so.1): the call sequence of suspend
 * and resume, the rollback after a failure at each step, GPU pairs of a
 * remap (by PCI bus order, which the fake's CUDA ordinals reverse), an old
 * driver, no library, cuInit failing, the lock timeout passed through, and
 * the driver's states as GSD_CUDA_*.  The fake's processes are files (no
 * real process is touched).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudackpt.h"
#include "gsched/error.h"
#include "harness.h"

#ifndef FAKE_CUDA_DIR
#define FAKE_CUDA_DIR "fake-cuda"
#endif
#ifndef FAKE_CUDA_OLD_DIR
#define FAKE_CUDA_OLD_DIR "fake-cuda-old"
#endif
#define FAKE_LIB FAKE_CUDA_DIR "/libcuda.so.1"

static char dir[256];
static char text[8192];

/* A fresh fake driver directory: no processes, no log, no failures. */
static void fresh(void)
{
    char cmd[600];
    if (dir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) abort();
    }
    snprintf(dir, sizeof dir, "/tmp/gsched-cudackpt-test-XXXXXX");
    if (!mkdtemp(dir)) abort();
    setenv("GSCHED_FAKE_CUDA_DIR", dir, 1);
    unsetenv("GSCHED_FAKE_CUDA_VERSION");
    unsetenv("GSCHED_FAKE_CUDA_GPUS");
}

static void put(const char *name, const char *content)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(content, f);
    fclose(f);
}

static const char *get(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    text[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return text;
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* The fake's process PID in state ST (and on GPU gpu when >= 0). */
static void proc(int pid, const char *st, int gpu)
{
    char name[32], body[64];
    snprintf(name, sizeof name, "proc.%d", pid);
    if (gpu >= 0)
        snprintf(body, sizeof body, "%s\ngpu=%d\n", st, gpu);
    else
        snprintf(body, sizeof body, "%s\n", st);
    put(name, body);
}

static const char *proc_file(int pid)
{
    char name[32];
    snprintf(name, sizeof name, "proc.%d", pid);
    return get(name);
}

static void clear_log(void)
{
    put("calls.log", "");
}

static gsd_cuda *open_fake(void)
{
    gsd_cuda *c = NULL;
    char why[256];
    int rc = gsd_cuda_open(FAKE_LIB, &c, why, sizeof why);
    if (rc) {
        fprintf(stderr, "  gsd_cuda_open: %d: %s\n", rc, why);
        return NULL;
    }
    clear_log();
    return c;
}

static void call_sequence(void)
{
    fresh();
    proc(1001, "running", -1);
    proc(1002, "running", -1);
    gsd_cuda *c = NULL;
    char why[256];
    ASSERT_OK(gsd_cuda_open(FAKE_LIB, &c, why, sizeof why));
    ASSERT_STR(get("calls.log"), "init\n"); /* cuInit(0), once, at open */
    ASSERT_EQ(gsd_cuda_version(c), 13000);
    ASSERT_EQ(gsd_cuda_ngpus(c), 8);
    ASSERT_EQ(gsd_cuda_can_remap(c), 1);
    clear_log();
    int pids[] = {1001, 1002};
    gsd_cuda_result r;
    put("delay_ms", "20");
    ASSERT_OK(gsd_cuda_suspend(c, pids, 2, 5000, &r));
    ASSERT_EQ(r.nproc, 2);
    ASSERT_EQ(r.failed_pid, 0);
    ASSERT_STR(r.msg, "");
    ASSERT_LE(40000, r.usec); /* two checkpoints of 20 ms each */
    ASSERT_LE(40000, r.phase_usec[1]);
    ASSERT_LE(r.phase_usec[0] + r.phase_usec[1], r.usec);
    ASSERT_STR(get("calls.log"),
               "lock 1001 5000\nlock 1002 5000\ncheckpoint 1001\ncheckpoint 1002\n");
    ASSERT_EQ(gsd_cuda_state(c, 1001), GSD_CUDA_CHECKPOINTED);
    ASSERT_EQ(gsd_cuda_state(c, 1002), GSD_CUDA_CHECKPOINTED);
    clear_log();
    ASSERT_OK(gsd_cuda_resume(c, pids, 2, NULL, NULL, 0, &r));
    ASSERT_EQ(r.nproc, 2);
    ASSERT_LE(40000, r.phase_usec[0]);
    ASSERT_STR(get("calls.log"), "restore 1001\nrestore 1002\nunlock 1001\nunlock 1002\n");
    ASSERT_EQ(gsd_cuda_state(c, 1001), GSD_CUDA_RUNNING);
    ASSERT_EQ(gsd_cuda_state(c, 1002), GSD_CUDA_RUNNING);
    /* nothing to do is no call; a bad pid is refused before any call */
    clear_log();
    ASSERT_OK(gsd_cuda_suspend(c, pids, 0, 0, &r));
    ASSERT_EQ(r.nproc, 0);
    int bad[] = {1001, 0};
    ASSERT_EQ(gsd_cuda_suspend(c, bad, 2, 0, &r), GS_EINVAL);
    ASSERT_EQ(gsd_cuda_resume(c, bad, 2, NULL, NULL, 0, &r), GS_EINVAL);
    ASSERT_STR(get("calls.log"), "");
    gsd_cuda_close(c);
}

static void timeout_passed(void)
{
    fresh();
    proc(7, "running", -1);
    gsd_cuda *c = open_fake();
    ASSERT(c);
    int pid = 7;
    gsd_cuda_result r;
    ASSERT_OK(gsd_cuda_suspend(c, &pid, 1, 0, &r));
    ASSERT_OK(gsd_cuda_resume(c, &pid, 1, NULL, NULL, 0, &r));
    ASSERT_OK(gsd_cuda_suspend(c, &pid, 1, 123456, &r));
    ASSERT_CONTAINS(get("calls.log"), "lock 7 0\n");
    ASSERT_CONTAINS(get("calls.log"), "lock 7 123456\n");
    gsd_cuda_close(c);
}

static void lock_failure_rolls_back(void)
{
    fresh();
    proc(1001, "running", -1);
    proc(1002, "running", -1);
    proc(1003, "running", -1);
    gsd_cuda *c = open_fake();
    ASSERT(c);
    int pids[] = {1001, 1002, 1003};
    gsd_cuda_result r;
    put("fail", "lock 1002\n");
    ASSERT_EQ(gsd_cuda_suspend(c, pids, 3, 1000, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1002);
    ASSERT_EQ(r.nproc, 0);
    ASSERT_STR(r.msg, "lock of pid 1002: CUDA_ERROR_TIMEOUT: wait operation timed out");
    ASSERT_STR(get("calls.log"), "lock 1001 1000\nlock 1002 1000\nunlock 1001\n");
    for (int i = 0; i < 3; i++) ASSERT_EQ(gsd_cuda_state(c, pids[i]), GSD_CUDA_RUNNING);
    /* the first lock failing: nothing to undo */
    clear_log();
    put("fail", "lock\n");
    ASSERT_EQ(gsd_cuda_suspend(c, pids, 3, 1000, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1001);
    ASSERT_STR(get("calls.log"), "lock 1001 1000\n");
    /* a pid that is no CUDA process fails its lock the same way */
    clear_log();
    put("fail", "");
    int with_gone[] = {1001, 4242};
    ASSERT_EQ(gsd_cuda_suspend(c, with_gone, 2, 0, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 4242);
    ASSERT_CONTAINS(r.msg, "lock of pid 4242: CUDA_ERROR_NOT_FOUND");
    ASSERT_STR(get("calls.log"), "lock 1001 0\nlock 4242 0\nunlock 1001\n");
    ASSERT_EQ(gsd_cuda_state(c, 1001), GSD_CUDA_RUNNING);
    gsd_cuda_close(c);
}

static void checkpoint_failure_rolls_back(void)
{
    fresh();
    proc(1001, "running", -1);
    proc(1002, "running", -1);
    proc(1003, "running", -1);
    gsd_cuda *c = open_fake();
    ASSERT(c);
    int pids[] = {1001, 1002, 1003};
    gsd_cuda_result r;
    put("fail", "checkpoint 1002\n");
    ASSERT_EQ(gsd_cuda_suspend(c, pids, 3, 0, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1002);
    ASSERT_STR(r.msg, "checkpoint of pid 1002: CUDA_ERROR_UNKNOWN: unknown error");
    ASSERT_STR(get("calls.log"), "lock 1001 0\nlock 1002 0\nlock 1003 0\n"
                                 "checkpoint 1001\ncheckpoint 1002\n"
                                 "restore 1001\n"
                                 "unlock 1001\nunlock 1002\nunlock 1003\n");
    for (int i = 0; i < 3; i++) ASSERT_EQ(gsd_cuda_state(c, pids[i]), GSD_CUDA_RUNNING);
    /* the last checkpoint failing: the two before are restored */
    clear_log();
    put("fail", "checkpoint 1003\n");
    ASSERT_EQ(gsd_cuda_suspend(c, pids, 3, 0, &r), GS_EIO);
    ASSERT_CONTAINS(get("calls.log"), "checkpoint 1003\nrestore 1001\nrestore 1002\nunlock 1001\n");
    for (int i = 0; i < 3; i++) ASSERT_EQ(gsd_cuda_state(c, pids[i]), GSD_CUDA_RUNNING);
    /* a rollback step failing too is said, after the first failure */
    clear_log();
    put("fail", "checkpoint 1002\nrestore 1001\n");
    ASSERT_EQ(gsd_cuda_suspend(c, pids, 3, 0, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1002);
    ASSERT_CONTAINS(r.msg, "checkpoint of pid 1002: CUDA_ERROR_UNKNOWN");
    ASSERT_CONTAINS(r.msg, "; rollback: restore of pid 1001: CUDA_ERROR_UNKNOWN");
    ASSERT_CONTAINS(r.msg, "; rollback: unlock of pid 1001: CUDA_ERROR_ILLEGAL_STATE");
    ASSERT_EQ(gsd_cuda_state(c, 1001), GSD_CUDA_CHECKPOINTED);
    ASSERT_EQ(gsd_cuda_state(c, 1002), GSD_CUDA_RUNNING);
    ASSERT_EQ(gsd_cuda_state(c, 1003), GSD_CUDA_RUNNING);
    gsd_cuda_close(c);
}

static void resume_failures(void)
{
    fresh();
    proc(1001, "running", -1);
    proc(1002, "running", -1);
    proc(1003, "running", -1);
    gsd_cuda *c = open_fake();
    ASSERT(c);
    int pids[] = {1001, 1002, 1003};
    gsd_cuda_result r;
    ASSERT_OK(gsd_cuda_suspend(c, pids, 3, 0, &r));
    clear_log();
    /* a restore failing: the restored ones are unlocked, the rest stay checkpointed */
    put("fail", "restore 1002\n");
    ASSERT_EQ(gsd_cuda_resume(c, pids, 3, NULL, NULL, 0, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1002);
    ASSERT_EQ(r.nproc, 1);
    ASSERT_STR(r.msg, "restore of pid 1002: CUDA_ERROR_UNKNOWN: unknown error");
    ASSERT_STR(get("calls.log"), "restore 1001\nrestore 1002\nunlock 1001\n");
    ASSERT_EQ(gsd_cuda_state(c, 1001), GSD_CUDA_RUNNING);
    ASSERT_EQ(gsd_cuda_state(c, 1002), GSD_CUDA_CHECKPOINTED);
    ASSERT_EQ(gsd_cuda_state(c, 1003), GSD_CUDA_CHECKPOINTED);
    /* an unlock failing does not stop the other unlocks */
    int rest[] = {1002, 1003};
    clear_log();
    put("fail", "unlock 1002\n");
    ASSERT_EQ(gsd_cuda_resume(c, rest, 2, NULL, NULL, 0, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1002);
    ASSERT_STR(r.msg, "unlock of pid 1002: CUDA_ERROR_UNKNOWN: unknown error");
    ASSERT_STR(get("calls.log"), "restore 1002\nrestore 1003\nunlock 1002\nunlock 1003\n");
    ASSERT_EQ(gsd_cuda_state(c, 1002), GSD_CUDA_LOCKED);
    ASSERT_EQ(gsd_cuda_state(c, 1003), GSD_CUDA_RUNNING);
    gsd_cuda_close(c);
}

static void remap_pairs(void)
{
    fresh();
    setenv("GSCHED_FAKE_CUDA_GPUS", "4", 1);
    proc(1001, "running", 0);
    proc(1002, "running", 1);
    gsd_cuda *c = open_fake();
    ASSERT(c);
    ASSERT_EQ(gsd_cuda_ngpus(c), 4);
    int pids[] = {1001, 1002};
    gsd_cuda_result r;
    ASSERT_OK(gsd_cuda_suspend(c, pids, 2, 0, &r));
    clear_log();
    /* GPUs by PCI bus order (the fake's CUDA ordinals run backwards): 0 -> 2, 1 -> 3 */
    int from[] = {0, 1}, to[] = {2, 3};
    ASSERT_OK(gsd_cuda_resume(c, pids, 2, from, to, 2, &r));
    ASSERT_STR(get("calls.log"), "restore 1001 pairs 0>2,1>3\nrestore 1002 pairs 0>2,1>3\n"
                                 "unlock 1001\nunlock 1002\n");
    ASSERT_STR(proc_file(1001), "running\ngpu=2\n");
    ASSERT_STR(proc_file(1002), "running\ngpu=3\n");
    /* a swap, and a GPU that stays (3 -> 3) */
    ASSERT_OK(gsd_cuda_suspend(c, pids, 2, 0, &r));
    clear_log();
    int from2[] = {2, 3}, to2[] = {1, 3};
    ASSERT_OK(gsd_cuda_resume(c, pids, 2, from2, to2, 2, &r));
    ASSERT_CONTAINS(get("calls.log"), "restore 1001 pairs 2>1,3>3\n");
    ASSERT_STR(proc_file(1001), "running\ngpu=1\n");
    ASSERT_STR(proc_file(1002), "running\ngpu=3\n");
    /* bad remaps: refused before any call */
    ASSERT_OK(gsd_cuda_suspend(c, pids, 2, 0, &r));
    clear_log();
    int out_of_range[] = {4};
    ASSERT_EQ(gsd_cuda_resume(c, pids, 2, from, out_of_range, 1, &r), GS_ERANGE);
    ASSERT_CONTAINS(r.msg, "this machine has GPUs 0-3");
    int neg[] = {-1};
    ASSERT_EQ(gsd_cuda_resume(c, pids, 2, neg, to, 1, &r), GS_ERANGE);
    int dup_to[] = {2, 2};
    ASSERT_EQ(gsd_cuda_resume(c, pids, 2, from, dup_to, 2, &r), GS_EINVAL);
    ASSERT_CONTAINS(r.msg, "GPU 2 named twice");
    int dup_from[] = {1, 1};
    ASSERT_EQ(gsd_cuda_resume(c, pids, 2, dup_from, to, 2, &r), GS_EINVAL);
    ASSERT_STR(get("calls.log"), "");
    /* pairs that miss a process's GPU: the driver refuses that restore */
    int f1[] = {1}, t1[] = {0};
    ASSERT_EQ(gsd_cuda_resume(c, pids, 2, f1, t1, 1, &r), GS_EIO);
    ASSERT_EQ(r.failed_pid, 1002);
    ASSERT_CONTAINS(r.msg, "restore of pid 1002: CUDA_ERROR_INVALID_VALUE");
    ASSERT_STR(proc_file(1001), "running\ngpu=0\n");
    gsd_cuda_close(c);
}

static void remap_needs_new_driver(void)
{
    fresh();
    setenv("GSCHED_FAKE_CUDA_VERSION", "12080", 1);
    proc(1001, "running", 0);
    gsd_cuda *c = open_fake();
    ASSERT(c);
    ASSERT_EQ(gsd_cuda_version(c), 12080);
    ASSERT_EQ(gsd_cuda_can_remap(c), 0);
    int pid = 1001;
    gsd_cuda_result r;
    ASSERT_OK(gsd_cuda_suspend(c, &pid, 1, 0, &r));
    clear_log();
    int from[] = {0}, to[] = {1};
    ASSERT_EQ(gsd_cuda_resume(c, &pid, 1, from, to, 1, &r), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(r.msg, "needs CUDA driver 12.9 or newer (this is 12.8)");
    ASSERT_STR(get("calls.log"), "");
    ASSERT_OK(gsd_cuda_resume(c, &pid, 1, NULL, NULL, 0, &r)); /* in place it works */
    gsd_cuda_close(c);
    /* no GPU list (no devices): no remap either */
    setenv("GSCHED_FAKE_CUDA_VERSION", "13000", 1);
    setenv("GSCHED_FAKE_CUDA_GPUS", "0", 1);
    c = open_fake();
    ASSERT(c);
    ASSERT_EQ(gsd_cuda_can_remap(c), 0);
    ASSERT_OK(gsd_cuda_suspend(c, &pid, 1, 0, &r));
    ASSERT_EQ(gsd_cuda_resume(c, &pid, 1, from, to, 1, &r), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(r.msg, "GPU list");
    gsd_cuda_close(c);
}

static void old_driver_and_no_library(void)
{
    fresh();
    gsd_cuda *c = (gsd_cuda *)&c;
    char why[256];
    setenv("GSCHED_FAKE_CUDA_VERSION", "12020", 1);
    ASSERT_EQ(gsd_cuda_open(FAKE_CUDA_OLD_DIR "/libcuda.so.1", &c, why, sizeof why), GS_ENOENT);
    ASSERT(c == NULL);
    ASSERT_CONTAINS(why, "the CUDA driver (version 12.2) has no checkpoint API");
    ASSERT_CONTAINS(why, "cuCheckpointProcessLock missing");
    ASSERT_STR(get("calls.log"), ""); /* refused before cuInit */
    ASSERT_EQ(gsd_cuda_open("/nonexistent/gsched-test/libcuda.so.1", &c, why, sizeof why),
              GS_ENOENT);
    ASSERT(c == NULL);
    ASSERT_CONTAINS(why, "CUDA driver library not available");
    ASSERT_CONTAINS(why, "/nonexistent/gsched-test/libcuda.so.1");
    /* a library that is not a CUDA driver at all (libc) */
    ASSERT_EQ(gsd_cuda_open("libc.so.6", &c, why, sizeof why), GS_ENOENT);
    ASSERT_CONTAINS(why, "not a CUDA driver library");
    /* why may be NULL */
    ASSERT_EQ(gsd_cuda_open("/nonexistent/gsched-test/libcuda.so.1", &c, NULL, 0), GS_ENOENT);
    gsd_cuda_close(NULL);
}

static void init_failure(void)
{
    fresh();
    put("fail", "init\n");
    gsd_cuda *c = NULL;
    char why[256];
    ASSERT_EQ(gsd_cuda_open(FAKE_LIB, &c, why, sizeof why), GS_EIO);
    ASSERT(c == NULL);
    ASSERT_STR(why, "cuInit failed: CUDA_ERROR_UNKNOWN: unknown error");
    ASSERT_STR(get("calls.log"), "init\n");
}

static void state_mapping(void)
{
    fresh();
    gsd_cuda *c = open_fake();
    ASSERT(c);
    static const char *const words[] = {"running", "locked",        "checkpointed",
                                        "failed",  "checkpointing", "restoring"};
    static const int want[] = {
        GSD_CUDA_RUNNING, GSD_CUDA_LOCKED, GSD_CUDA_CHECKPOINTED, GSD_CUDA_FAILED, 4, 5};
    for (int i = 0; i < 6; i++) {
        proc(300 + i, words[i], -1);
        ASSERT_EQ(gsd_cuda_state(c, 300 + i), want[i]);
        ASSERT_STR(gsd_cuda_state_name(want[i]), words[i]);
    }
    ASSERT_STR(get("calls.log"), "state 300\nstate 301\nstate 302\nstate 303\nstate 304\n"
                                 "state 305\n");
    ASSERT_EQ(gsd_cuda_state(c, 399), GSD_CUDA_NONE); /* no such CUDA process */
    ASSERT_EQ(gsd_cuda_state(c, 0), GSD_CUDA_NONE);
    ASSERT_EQ(gsd_cuda_state(c, -5), GSD_CUDA_NONE);
    ASSERT_STR(gsd_cuda_state_name(GSD_CUDA_NONE), "none");
    ASSERT_STR(gsd_cuda_state_name(17), "unknown");
    unsetenv("GSCHED_FAKE_CUDA_DIR"); /* the fake's "no CUDA process exists" */
    ASSERT_EQ(gsd_cuda_state(c, 300), GSD_CUDA_NONE);
    setenv("GSCHED_FAKE_CUDA_DIR", dir, 1);
    ASSERT_EQ(gsd_cuda_state(c, 300), GSD_CUDA_RUNNING);
    gsd_cuda_close(c);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cleanup failed");
}

static const test_case tests[] = {
    {"call_sequence", call_sequence},
    {"timeout_passed", timeout_passed},
    {"lock_failure_rolls_back", lock_failure_rolls_back},
    {"checkpoint_failure_rolls_back", checkpoint_failure_rolls_back},
    {"resume_failures", resume_failures},
    {"remap_pairs", remap_pairs},
    {"remap_needs_new_driver", remap_needs_new_driver},
    {"old_driver_and_no_library", old_driver_and_no_library},
    {"init_failure", init_failure},
    {"state_mapping", state_mapping},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
