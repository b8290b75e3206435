/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_acct.c - accounting (issue 16): GPU time is exact across an elastic job's size
 * changes, suspensions and requeues (acct.c); history reads final rows of jobs and acct rows
 * alike, with its filters and pages; retention moves only final jobs, oldest end first, in
 * batches, and history answers the same before and after it, also after a reopen (restart);
 * a moved job's state still answers dependency lookups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "gsd_sched.h"
#include "harness.h"
#include "store.h"

static char dir[256];

static const char *dbpath(const char *name)
{
    static char p[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gsched-acct-test-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

/* job j enters state st holding n GPUs (0: none) since 'since' */
static void set(gs_job *j, gs_job_state st, int n, gs_time since)
{
    static int32_t gpus[8];
    j->state = st;
    j->alloc = n ? gpus : NULL;
    j->nalloc = n;
    if (n) j->last_start = since;
}

static void gpu_time_exact_across_sizes(void)
{
    gsd_jobx x;
    memset(&x, 0, sizeof x);
    gs_job j;
    memset(&j, 0, sizeof j);
    j.gpus = 4;
    set(&j, GS_JOB_PENDING, 0, 0);
    gsd_acct_observe(&x, &j, 0); /* submitted */
    ASSERT_EQ(gsd_acct_gpu_us(&x, 50), 0);
    set(&j, GS_JOB_RUNNING, 4, 10);
    gsd_acct_observe(&x, &j, 10); /* started on 4 */
    ASSERT_EQ(x.gpu_us, 0);
    ASSERT_EQ(gsd_acct_gpu_us(&x, 60), 200);
    set(&j, GS_JOB_DRAINING, 4, 10);
    gsd_acct_observe(&x, &j, 100); /* draining: still the old 4 */
    ASSERT_EQ(x.gpu_us, 0);
    set(&j, GS_JOB_RUNNING, 2, 150);
    gsd_acct_observe(&x, &j, 150); /* RESIZING to 2 */
    ASSERT_EQ(x.gpu_us, 4 * 140);
    set(&j, GS_JOB_SUSPENDED, 0, 0);
    gsd_acct_observe(&x, &j, 200); /* suspended: holds none */
    ASSERT_EQ(x.gpu_us, 4 * 140 + 2 * 50);
    ASSERT_EQ(gsd_acct_gpu_us(&x, 1000), 4 * 140 + 2 * 50);
    set(&j, GS_JOB_RUNNING, 2, 300);
    gsd_acct_observe(&x, &j, 300); /* resumed */
    set(&j, GS_JOB_PREEMPTED, 2, 300);
    gsd_acct_observe(&x, &j, 400); /* stopping: GPUs still held */
    set(&j, GS_JOB_PENDING, 0, 0);
    gsd_acct_observe(&x, &j, 450); /* requeued */
    ASSERT_EQ(x.gpu_us, 4 * 140 + 2 * 50 + 2 * 150);
    set(&j, GS_JOB_RUNNING, 3, 500);
    gsd_acct_observe(&x, &j, 500);
    /* a restart: the row's closed time comes back, the open interval from the engine */
    gsd_jobx y;
    memset(&y, 0, sizeof y);
    gsd_acct_restore(&y, &j, x.gpu_us, 0);
    ASSERT_EQ(gsd_acct_gpu_us(&y, 550), gsd_acct_gpu_us(&x, 550));
    set(&j, GS_JOB_DONE, 0, 0);
    gsd_acct_observe(&x, &j, 600);
    ASSERT_EQ(x.gpu_us, 4 * 140 + 2 * 50 + 2 * 150 + 3 * 100);
    ASSERT_EQ(x.held_gpus, 0);
    /* a row older than schema 6 (no gpu_us): executed x GPUs */
    gsd_acct_restore(&y, &j, GSD_NONE, 1000);
    ASSERT_EQ(y.gpu_us, 4000);
}

static gsd_jobrow row(int64_t id, const char *user, const char *vc, const char *state, int64_t end)
{
    gsd_jobrow r;
    memset(&r, 0, sizeof r);
    r.id = id;
    r.grp = id;
    r.user = (char *)user;
    r.vc = (char *)vc;
    r.name = (char *)"job";
    r.ntasks = 1;
    r.gpus_per_task = 2;
    r.gang = 1;
    r.state = (char *)state;
    r.exit_code = GSD_NONE;
    r.submit = 1000 + id;
    r.first_start = r.last_start = end == GSD_NONE ? GSD_NONE : 2000 + id;
    r.end = end;
    r.executed = end == GSD_NONE ? 0 : end - r.first_start;
    r.gpu_us = GSD_NONE;
    r.runs = end == GSD_NONE ? 0 : 1;
    r.spec = (char *)"{\"command\":\"true\"}";
    return r;
}

/* jobs 1..8: 2 and 7 active; the rest final, ending at 10000 - 1000 * id (8 first) */
static void fill(gsd_store *s)
{
    ASSERT_OK(gsd_store_begin(s));
    for (int64_t id = 1; id <= 8; id++) {
        int active = id == 2 || id == 7;
        const char *st = active        ? (id == 2 ? "RUNNING" : "PENDING")
                         : id % 3 == 0 ? "FAILED"
                         : id == 5     ? "CANCELLED"
                                       : "DONE";
        gsd_jobrow r = row(id, id % 2 ? "alice" : "bob", id < 5 ? "a" : "b", st,
                           active ? GSD_NONE : 10000 - 1000 * id);
        if (id == 3) {
            r.exit_code = 3;
            r.task_gpus = (char *)"2,1";
            r.ntasks = 2;
        }
        if (id == 4) {
            r.gpu_us = 123456;
            r.elastic = (char *)"{\"generation\": 3, \"rescales\": 2}";
            r.preemptions = 1;
            r.array_id = 4;
            r.array_task = 0;
        }
        if (id == 6) r.array_id = 4, r.array_task = 2;
        ASSERT_OK(gsd_store_insert_job(s, &r));
        ASSERT_OK(gsd_store_add_event(s, id, 1000 + id, "submitted", NULL));
        gsd_taskrow t = {id, 1, 0, (char *)"local:1:1", 0, (char *)"0,1"};
        ASSERT_OK(gsd_store_put_task(s, &t));
    }
    ASSERT_OK(gsd_store_commit(s));
}

static int count(gsd_store *s, const char *sql)
{
    (void)s;
    sqlite3 *db;
    if (sqlite3_open_v2(dbpath("h.db"), &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The whole history (every filter off) as text, one line per job. */
static char *dump(gsd_store *s, const gsd_histq *q0)
{
    gsd_histq q = q0 ? *q0 : (gsd_histq){.limit = 1000};
    gsd_reader *rd = gsd_store_reader(s);
    gsd_acctrow *a = NULL;
    size_t n = 0;
    int64_t total = 0;
    if (!rd || gsd_reader_history(rd, &q, &a, &n, &total)) abort();
    gsd_store_reader_put(s, rd);
    size_t cap = 64 + n * 256, k = 0;
    char *out = malloc(cap);
    if (!out) abort();
    k += (size_t)snprintf(out + k, cap - k, "total %lld\n", (long long)total);
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(
            out + k, cap - k,
            "%lld %lld/%d %s %s %s %s ec=%lld sub=%lld st=%lld end=%lld el=%lld g=%d gu=%lld "
            "p=%d rz=%d r=%d\n",
            (long long)a[i].id, (long long)a[i].array_id, a[i].array_task, a[i].user, a[i].vc,
            a[i].name, a[i].state, (long long)a[i].exit_code, (long long)a[i].submit,
            (long long)a[i].start, (long long)a[i].end, (long long)a[i].elapsed, a[i].gpus,
            (long long)a[i].gpu_us, a[i].preemptions, a[i].resizes, a[i].runs);
    gsd_acctrows_free(a, n);
    return out;
}

static int count_active_rows(void *ud, gsd_jobrow *r)
{
    (void)r;
    (*(int *)ud)++;
    return 0;
}

static void history_filters_and_retention(void)
{
    const char *p = dbpath("h.db");
    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    fill(s);
    char *all = dump(s, NULL);
    /* final jobs only, oldest end first: 8 6 5 4 3 1 */
    ASSERT_CONTAINS(all, "total 6\n8 ");
    ASSERT(strstr(all, "\n6 ") < strstr(all, "\n5 ") && strstr(all, "\n4 ") < strstr(all, "\n1 "));
    ASSERT(!strstr(all, "\n2 ") && !strstr(all, "\n7 "));
    /* GPUs of tasks of different sizes, elastic rescales, stored GPU time, array ids */
    ASSERT_CONTAINS(all, "\n3 0/0 alice a job FAILED ec=3 ");
    ASSERT_CONTAINS(all, " g=3 gu=");
    ASSERT_CONTAINS(all, "\n4 4/0 bob a job DONE ec=");
    ASSERT_CONTAINS(all, "g=2 gu=123456 p=1 rz=2 r=1\n");
    /* filters */
    gsd_histq q = {.limit = 1000, .user = "alice"};
    char *t = dump(s, &q);
    ASSERT_CONTAINS(t, "total 3\n5 ");
    free(t);
    q = (gsd_histq){.limit = 1000, .vc = "b", .states = 1u << GS_JOB_DONE};
    t = dump(s, &q);
    ASSERT_CONTAINS(t, "total 1\n8 ");
    free(t);
    q = (gsd_histq){.limit = 1000, .from = 5000, .to = 7000}; /* ends 5000 (5), 6000 (4) */
    t = dump(s, &q);
    ASSERT_CONTAINS(t, "total 2\n5 ");
    free(t);
    q = (gsd_histq){.limit = 1000, .job = 4}; /* the array: 4 and 6 */
    t = dump(s, &q);
    ASSERT_CONTAINS(t, "total 2\n6 ");
    free(t);
    q = (gsd_histq){.limit = 2, .offset = 2}; /* page 2 of 2: 5, 4 */
    t = dump(s, &q);
    ASSERT_CONTAINS(t, "total 6\n5 ");
    ASSERT(strstr(t, "\n4 ") && !strstr(t, "\n3 "));
    free(t);
    q = (gsd_histq){.limit = 10, .user = "x' OR '1'='1"};
    t = dump(s, &q);
    ASSERT_CONTAINS(t, "total 0\n");
    free(t);

    /* retention: the two oldest final jobs (8 ends at 2000, 6 at 4000), ending before 4500 */
    int64_t *ids = NULL;
    size_t moved = 0;
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_purge(s, 4500, 1000, &ids, &moved));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT_EQ(moved, 2);
    ASSERT_EQ(ids[0], 8);
    ASSERT_EQ(ids[1], 6);
    free(ids);
    ASSERT_EQ(count(s, "SELECT count(*) FROM acct"), 2);
    ASSERT_EQ(count(s, "SELECT count(*) FROM events WHERE job_id IN (6, 8)"), 0);
    ASSERT_EQ(count(s, "SELECT count(*) FROM tasks WHERE job_id IN (6, 8)"), 0);
    ASSERT_EQ(count(s, "SELECT count(*) FROM jobs"), 6);
    t = dump(s, NULL);
    ASSERT_STR(t, all);
    free(t);
    /* a moved job is gone from jobs but its state still answers (dependencies) */
    gsd_reader *rd = gsd_store_reader(s);
    gsd_jobrow jr;
    ASSERT_EQ(gsd_reader_job(rd, 8, &jr), GS_ENOENT);
    gsd_store_reader_put(s, rd);
    char *st = NULL, *why = NULL;
    ASSERT_OK(gsd_store_job_state(s, 8, &st, &why));
    ASSERT_STR(st, "DONE");
    free(st);
    free(why);
    /* batches: at most 'max' per call; active jobs are never moved, whatever the cutoff */
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_purge(s, INT64_MAX, 3, NULL, &moved));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT_EQ(moved, 3);
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_purge(s, INT64_MAX, 1000, NULL, &moved));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT_EQ(moved, 1);
    ASSERT_EQ(count(s, "SELECT count(*) FROM jobs"), 2);
    ASSERT_EQ(count(s, "SELECT count(*) FROM events"), 2);
    t = dump(s, NULL);
    ASSERT_STR(t, all);
    free(t);
    /* new events never reuse the ids of deleted ones */
    int maxseq = count(s, "SELECT max(seq) FROM sqlite_sequence WHERE name = 'events'");
    ASSERT_EQ(maxseq, 8);
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_add_event(s, 2, 9000, "note", NULL));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT_EQ(count(s, "SELECT max(seq) FROM events"), 9);
    gsd_store_close(s);
    /* a restart after the purge: the same history, the active jobs to recover */
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    t = dump(s, NULL);
    ASSERT_STR(t, all);
    free(t);
    int n = 0;
    ASSERT_OK(gsd_store_each_active(s, count_active_rows, &n));
    ASSERT_EQ(n, 2);
    gsd_store_close(s);
    free(all);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cleanup failed");
}

static const test_case tests[] = {
    {"gpu_time_exact_across_sizes", gpu_time_exact_across_sizes},
    {"history_filters_and_retention", history_filters_and_retention},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
