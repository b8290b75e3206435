/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_store.c - the SQLite store: schema creation, rows and events
 * survive close/reopen (what restart recovery reads), idempotency keys are
 * unique per user, uncommitted writes are invisible and lost, a second
 * daemon cannot open the same database, a newer schema is refused, and
 * readers list with filters and pagination.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness.h"
#include "store.h"

static char dir[256];

static const char *dbpath(const char *name)
{
    static char p[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gsched-store-test-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static gsd_jobrow row(int64_t id, const char *user, const char *state)
{
    gsd_jobrow r;
    memset(&r, 0, sizeof r);
    r.id = id;
    r.grp = id;
    r.user = (char *)user;
    r.vc = (char *)"default";
    r.name = (char *)"job";
    r.ntasks = 1;
    r.gpus_per_task = 2;
    r.gang = 1;
    r.state = (char *)state;
    r.exit_code = GSD_NONE;
    r.submit = 1000;
    r.first_start = r.last_start = r.end = GSD_NONE;
    r.spec = (char *)"{\"command\":\"true\"}";
    return r;
}

static int count_active(void *ud, gsd_jobrow *r)
{
    int *n = ud;
    (*n)++;
    if (r->id == 2 && strcmp(r->alloc ? r->alloc : "", "4,5")) return GS_EINVAL;
    return 0;
}

static void roundtrip_and_recovery_view(void)
{
    const char *p = dbpath("a.db");
    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_OK(gsd_store_begin(s));
    gsd_jobrow r1 = row(1, "alice", "PENDING"), r2 = row(2, "bob", "PENDING");
    r1.idem_key = (char *)"k1";
    r1.idem_hash = (char *)"h1";
    ASSERT_OK(gsd_store_insert_job(s, &r1));
    ASSERT_OK(gsd_store_insert_job(s, &r2));
    ASSERT_EQ(gsd_store_insert_job(s, &r2), GS_EEXIST);
    r2.state = (char *)"RUNNING";
    r2.alloc = (char *)"4,5";
    r2.runs = 1;
    r2.last_start = 2000;
    ASSERT_OK(gsd_store_update_job(s, &r2));
    ASSERT_OK(gsd_store_add_event(s, 2, 2000, "started", "run 1 on n0:0-1"));
    gsd_taskrow t = {2, 1, 0, 4242, 777, GSD_NONE, (char *)"4,5"};
    ASSERT_OK(gsd_store_put_task(s, &t));
    t.pid = GSD_NONE;
    t.start_ticks = GSD_NONE;
    t.exit_code = 3;
    t.gpus = NULL;
    ASSERT_OK(gsd_store_put_task(s, &t)); /* the exit keeps pid and GPUs */
    ASSERT_OK(gsd_store_meta_set(s, "next_id", 3));
    ASSERT_OK(gsd_store_commit(s));
    /* an uncommitted write is lost when the process goes away */
    ASSERT_OK(gsd_store_begin(s));
    gsd_jobrow r3 = row(3, "carol", "PENDING");
    ASSERT_OK(gsd_store_insert_job(s, &r3));
    gsd_store_rollback(s);
    gsd_store_close(s);

    ASSERT_OK(gsd_store_open(p, 0, &s, &d));
    int64_t next;
    ASSERT_OK(gsd_store_meta_get(s, "next_id", 1, &next));
    ASSERT_EQ(next, 3);
    int n = 0;
    ASSERT_OK(gsd_store_each_active(s, count_active, &n));
    ASSERT_EQ(n, 2);
    int64_t id;
    char *h = NULL;
    ASSERT_OK(gsd_store_find_idem(s, "alice", "k1", &id, &h));
    ASSERT_EQ(id, 1);
    ASSERT_STR(h, "h1");
    free(h);
    ASSERT_EQ(gsd_store_find_idem(s, "bob", "k1", &id, NULL), GS_ENOENT); /* per user */
    gsd_reader *rd = gsd_store_reader(s);
    ASSERT(rd);
    gsd_jobrow got;
    ASSERT_OK(gsd_reader_job(rd, 2, &got));
    ASSERT_STR(got.state, "RUNNING");
    ASSERT_EQ(got.last_start, 2000);
    ASSERT_EQ(got.first_start, GSD_NONE);
    gsd_jobrow_release(&got);
    ASSERT_EQ(gsd_reader_job(rd, 3, &got), GS_ENOENT);
    gsd_event *ev;
    size_t ne;
    ASSERT_OK(gsd_reader_events(rd, 2, 100, &ev, &ne));
    ASSERT_EQ(ne, 1);
    ASSERT_STR(ev[0].type, "started");
    gsd_events_free(ev, ne);
    gsd_taskrow *tr;
    size_t nt;
    ASSERT_OK(gsd_reader_tasks(rd, 2, 1, &tr, &nt));
    ASSERT_EQ(nt, 1);
    ASSERT_EQ(tr[0].pid, 4242);
    ASSERT_EQ(tr[0].exit_code, 3);
    ASSERT_STR(tr[0].gpus, "4,5");
    gsd_taskrows_free(tr, nt);
    gsd_store_reader_put(s, rd);
    gsd_store_close(s);
}

static void unique_idempotency_key(void)
{
    gsd_store *s;
    gs_diag d;
    ASSERT_OK(gsd_store_open(dbpath("b.db"), 1, &s, &d));
    ASSERT_OK(gsd_store_begin(s));
    gsd_jobrow a = row(1, "alice", "PENDING"), b = row(2, "alice", "PENDING");
    a.idem_key = b.idem_key = (char *)"same";
    ASSERT_OK(gsd_store_insert_job(s, &a));
    ASSERT_EQ(gsd_store_insert_job(s, &b), GS_EEXIST);
    gsd_store_rollback(s);
    gsd_store_close(s);
}

static void second_daemon_refused(void)
{
    gsd_store *s, *s2 = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(dbpath("c.db"), 1, &s, &d));
    int rc = gsd_store_open(dbpath("c.db"), 1, &s2, &d);
    ASSERT_EQ(rc, GS_ESTATE);
    ASSERT_CONTAINS(d.msg, "in use by another gsched serve");
    gsd_store_close(s);
    ASSERT_OK(gsd_store_open(dbpath("c.db"), 1, &s2, &d)); /* free again after close */
    gsd_store_close(s2);
}

static void newer_schema_refused(void)
{
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(dbpath("d.db"), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    gsd_store *s = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_EQ(gsd_store_open(dbpath("d.db"), 1, &s, &d), GS_EUNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "newer than this gsched");
}

static void list_filters_and_pages(void)
{
    gsd_store *s;
    gs_diag d;
    ASSERT_OK(gsd_store_open(dbpath("e.db"), 0, &s, &d));
    ASSERT_OK(gsd_store_begin(s));
    for (int i = 1; i <= 25; i++) {
        gsd_jobrow r = row(i, i % 2 ? "alice" : "bob", i <= 10 ? "DONE" : "PENDING");
        ASSERT_OK(gsd_store_insert_job(s, &r));
    }
    ASSERT_OK(gsd_store_commit(s));
    int64_t counts[GS_JOB_NSTATES];
    ASSERT_OK(gsd_store_count_states(s, counts));
    ASSERT_EQ(counts[GS_JOB_DONE], 10);
    ASSERT_EQ(counts[GS_JOB_PENDING], 15);
    gsd_reader *rd = gsd_store_reader(s);
    gsd_jobrow *rows;
    size_t n;
    int64_t total;
    ASSERT_OK(gsd_reader_list(rd, 0, "alice", NULL, 5, 4, &rows, &n, &total));
    ASSERT_EQ(total, 13);
    ASSERT_EQ(n, 4);
    ASSERT_EQ(rows[0].id, 11); /* alice's 6th job */
    gsd_jobrows_free(rows, n);
    ASSERT_OK(gsd_reader_list(rd, 1u << GS_JOB_DONE, NULL, NULL, 0, 100, &rows, &n, &total));
    ASSERT_EQ(total, 10);
    ASSERT_EQ(n, 10);
    gsd_jobrows_free(rows, n);
    /* hostile filter values are bound, not spliced */
    ASSERT_OK(gsd_reader_list(rd, 0, "x' OR '1'='1", NULL, 0, 100, &rows, &n, &total));
    ASSERT_EQ(total, 0);
    gsd_jobrows_free(rows, n);
    gsd_store_reader_put(s, rd);
    gsd_store_close(s);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) T_FAIL("cleanup failed");
}

static const test_case tests[] = {
    {"roundtrip_and_recovery_view", roundtrip_and_recovery_view},
    {"unique_idempotency_key", unique_idempotency_key},
    {"second_daemon_refused", second_daemon_refused},
    {"newer_schema_refused", newer_schema_refused},
    {"list_filters_and_pages", list_filters_and_pages},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
