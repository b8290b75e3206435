/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_store.c - the SQLite store: schema creation, rows and events
 * survive close/reopen (what restart recovery reads), idempotency keys are
 * unique per user, uncommitted writes are invisible and lost, a second
 * daemon cannot open the same database, a newer schema is refused, an
 * older one (version 1, as gsched wrote it before executor handles) is
 * upgraded in place with its rows (version 2 -> 3: an elastic job's state,
 * DRAINING included, is durable), and readers list with filters and
 * pagination.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon_schema_v1.h"
#include "daemon_schema_v2.h"
#include "daemon_schema_v3.h"
#include "daemon_schema_v5.h"
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
    r.gpu_us = GSD_NONE;
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
    gsd_taskrow t = {2, 1, 0, (char *)"local:4242:777", GSD_NONE, (char *)"4,5"};
    ASSERT_OK(gsd_store_put_task(s, &t));
    t.handle = NULL;
    t.exit_code = 3;
    t.gpus = NULL;
    ASSERT_OK(gsd_store_put_task(s, &t)); /* the exit keeps the handle and GPUs */
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
    ASSERT_STR(tr[0].handle, "local:4242:777");
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

/* A daemon killed by SIGKILL right after it forked a task leaves the lock to that child for a
 * moment (it shares the lock's open file description until it closes its inherited
 * descriptors): the restarted daemon waits for it instead of refusing to start. */
static void lock_of_a_dead_daemon_waited_for(void)
{
    char lock[600];
    snprintf(lock, sizeof lock, "%s-lock", dbpath("e.db"));
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    ASSERT(dead > 0);
    int st;
    ASSERT_EQ(waitpid(dead, &st, 0), dead);
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t holder = fork();
    if (holder == 0) {
        /* the "task child": holds the lock whose file names the dead daemon */
        int fd = open(lock, O_RDWR | O_CREAT, 0600);
        if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
        dprintf(fd, "%ld\n", (long)dead);
        if (write(ready[1], "x", 1) != 1) _exit(1);
        nanosleep(&(struct timespec){0, 300000000L}, NULL);
        _exit(0);
    }
    ASSERT(holder > 0);
    close(ready[1]);
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    gsd_store *s = NULL;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(dbpath("e.db"), 1, &s, &d));
    ASSERT_EQ(waitpid(holder, &st, 0), holder);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    gsd_store_close(s);
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
    /* a negative version (a hand-edited or foreign file) is refused, not upgraded from */
    for (int v = -1; v >= -3; v -= 2) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v);
        ASSERT_EQ(sqlite3_open(dbpath("n.db"), &db), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        gs_diag_init(&d, NULL);
        ASSERT_EQ(gsd_store_open(dbpath("n.db"), 1, &s, &d), GS_EINVAL);
        ASSERT(s == NULL);
        ASSERT_CONTAINS(d.msg, "not a gsched database");
    }
}

static void exec1(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) T_FAIL("%s: %s", sql, err);
    sqlite3_free(err);
}

static int64_t query_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void version1_upgraded_in_place(void)
{
    const char *p = dbpath("v1.db");
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(p, &db), SQLITE_OK);
    exec1(db, "PRAGMA journal_mode=WAL");
    exec1(db, gsd_test_schema_v1);
    exec1(db, "PRAGMA user_version = 1");
    /* a running job (run 2: two tasks, one started), a finished one whose task never started */
    exec1(db, "INSERT INTO jobs(id, grp, task_index, user, vc, name, priority, ntasks, "
              "gpus_per_task, gang, state, reason, exit_code, submit_us, first_start_us, "
              "last_start_us, end_us, queued_us, executed_us, preemptions, runs, alloc, "
              "placement, stop, cancel_by, spec, idem_key, idem_hash) VALUES "
              "(7, 7, 0, 'alice', 'default', 'train', 0, 2, 1, 1, 'RUNNING', NULL, NULL, 1000, "
              "2000, 5000, NULL, 1000, 3000, 1, 2, '4,5', 'n0:4-5', NULL, NULL, "
              "'{\"command\":\"true\"}', 'k7', 'h7'), "
              "(8, 8, 0, 'bob', 'default', 'x', 0, 1, 1, 1, 'FAILED', 'task 0 exited with code "
              "127', 127, 1500, 2500, 2500, 2600, 1000, 100, 0, 1, NULL, 'n0:6', NULL, NULL, "
              "'{\"command\":\"nope\"}', NULL, NULL)");
    exec1(db, "INSERT INTO events(job_id, t_us, type, reason) VALUES (7, 2000, 'started', "
              "'run 1 on n0:4-5'), (8, 2600, 'launch-failed', 'task 0: not found')");
    exec1(db, "INSERT INTO tasks(job_id, run, idx, pid, start_ticks, exit_code, gpus) VALUES "
              "(7, 1, 0, 4242, 777, 143, '4'), (7, 2, 0, 5151, 888, NULL, '4'), "
              "(7, 2, 1, NULL, NULL, NULL, '5'), (8, 1, 0, NULL, NULL, 127, NULL)");
    exec1(db, "INSERT INTO meta(key, value) VALUES ('next_id', 9)");
    sqlite3_close(db);

    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 1);
    /* what restart recovery reads is intact */
    int64_t next;
    ASSERT_OK(gsd_store_meta_get(s, "next_id", 1, &next));
    ASSERT_EQ(next, 9);
    int64_t counts[GS_JOB_NSTATES] = {0};
    ASSERT_OK(gsd_store_count_states(s, counts));
    ASSERT_EQ(counts[GS_JOB_FAILED], 1);
    int n = 0;
    ASSERT_OK(gsd_store_each_active(s, count_active, &n));
    ASSERT_EQ(n, 1);
    int64_t id;
    char *h = NULL;
    ASSERT_OK(gsd_store_find_idem(s, "alice", "k7", &id, &h));
    ASSERT_EQ(id, 7);
    free(h);
    /* tasks: pid + start time became the local executor's handle */
    gsd_reader *rd = gsd_store_reader(s);
    ASSERT(rd);
    gsd_taskrow *tr;
    size_t nt;
    ASSERT_OK(gsd_reader_tasks(rd, 7, 1, &tr, &nt));
    ASSERT_EQ(nt, 1);
    ASSERT_STR(tr[0].handle, "local:4242:777");
    ASSERT_EQ(tr[0].exit_code, 143);
    gsd_taskrows_free(tr, nt);
    ASSERT_OK(gsd_reader_tasks(rd, 7, 2, &tr, &nt));
    ASSERT_EQ(nt, 2);
    ASSERT_STR(tr[0].handle, "local:5151:888");
    ASSERT_EQ(tr[0].exit_code, GSD_NONE);
    ASSERT(tr[1].handle == NULL); /* not started yet */
    ASSERT_STR(tr[1].gpus, "5");
    gsd_taskrows_free(tr, nt);
    ASSERT_OK(gsd_reader_tasks(rd, 8, 1, &tr, &nt));
    ASSERT_EQ(nt, 1);
    ASSERT(tr[0].handle == NULL);
    ASSERT_EQ(tr[0].exit_code, 127);
    gsd_taskrows_free(tr, nt);
    gsd_event *ev;
    size_t ne;
    ASSERT_OK(gsd_reader_events(rd, 8, 100, &ev, &ne));
    ASSERT_EQ(ne, 1);
    ASSERT_STR(ev[0].type, "launch-failed");
    gsd_events_free(ev, ne);
    gsd_store_reader_put(s, rd);
    /* the upgraded table takes new rows */
    ASSERT_OK(gsd_store_begin(s));
    gsd_taskrow t = {7, 2, 1, (char *)"local:6000:999", GSD_NONE, NULL};
    ASSERT_OK(gsd_store_put_task(s, &t));
    ASSERT_OK(gsd_store_commit(s));
    gsd_store_close(s);
    ASSERT_EQ(query_int(p, "PRAGMA user_version"), GSD_SCHEMA_VERSION);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM pragma_table_info('tasks') WHERE name = 'pid'"),
              0);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM tasks WHERE handle = 'local:6000:999' AND "
                           "gpus = '5'"),
              1);
    /* opened again: nothing left to upgrade */
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 0);
    gsd_store_close(s);
}

static int first_active_elastic(void *ud, gsd_jobrow *r)
{
    char **out = ud;
    if (!*out) {
        *out = r->elastic ? strdup(r->elastic) : strdup("(null)");
        if (!*out) abort();
    }
    return 0;
}

/* Version 2 -> 3: jobs.elastic added (issue 13); old rows have none; an elastic job's state
 * (DRAINING with its reservation) is written and read back, and a DRAINING job is active. */
static void version2_upgraded_with_elastic(void)
{
    const char *p = dbpath("v2.db");
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(p, &db), SQLITE_OK);
    exec1(db, "PRAGMA journal_mode=WAL");
    exec1(db, gsd_test_schema_v2);
    exec1(db, "PRAGMA user_version = 2");
    exec1(db, "INSERT INTO jobs(id, grp, task_index, user, vc, name, priority, ntasks, "
              "gpus_per_task, gang, state, reason, exit_code, submit_us, first_start_us, "
              "last_start_us, end_us, queued_us, executed_us, preemptions, runs, alloc, "
              "placement, stop, cancel_by, spec, idem_key, idem_hash) VALUES "
              "(3, 3, 0, 'alice', 'default', 'old', 0, 1, 1, 1, 'RUNNING', NULL, NULL, 1000, "
              "2000, 2000, NULL, 1000, 0, 0, 1, '0', 'n0:0', NULL, NULL, "
              "'{\"command\":\"true\"}', NULL, NULL)");
    sqlite3_close(db);
    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 2);
    char *el = NULL;
    ASSERT_OK(gsd_store_each_active(s, first_active_elastic, &el));
    ASSERT_STR(el, "(null)"); /* a row from before has no elastic state */
    free(el);
    el = NULL;
    /* an elastic job caught draining: state, target and reservation are durable */
    gsd_jobrow r = row(3, "alice", "DRAINING");
    r.alloc = (char *)"0";
    r.stop = (char *)"drain";
    r.elastic = (char *)"{\"generation\":1,\"target_gpus\":2,\"resv\":\"0,1\"}";
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_update_job(s, &r));
    ASSERT_OK(gsd_store_commit(s));
    ASSERT_OK(gsd_store_each_active(s, first_active_elastic, &el));
    ASSERT_STR(el, "{\"generation\":1,\"target_gpus\":2,\"resv\":\"0,1\"}");
    free(el);
    gsd_reader *rd = gsd_store_reader(s);
    gsd_jobrow got;
    ASSERT_OK(gsd_reader_job(rd, 3, &got));
    ASSERT_STR(got.state, "DRAINING");
    ASSERT_STR(got.stop, "drain");
    ASSERT(got.elastic && strstr(got.elastic, "\"resv\":\"0,1\""));
    gsd_jobrow_release(&got);
    gsd_store_reader_put(s, rd);
    gsd_store_close(s);
    ASSERT_EQ(query_int(p, "PRAGMA user_version"), GSD_SCHEMA_VERSION);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 0);
    gsd_store_close(s);
}

/* Version 3 -> 4: jobs.task_gpus and jobs.groups added (issue 14); an old row has neither, a new
 * grouped job's are written at insert and read back (lists and single rows). */
static void version3_upgraded_with_groups(void)
{
    const char *p = dbpath("v3.db");
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(p, &db), SQLITE_OK);
    exec1(db, "PRAGMA journal_mode=WAL");
    exec1(db, gsd_test_schema_v3);
    exec1(db, "PRAGMA user_version = 3");
    exec1(db, "INSERT INTO jobs(id, grp, task_index, user, vc, name, priority, ntasks, "
              "gpus_per_task, gang, state, reason, exit_code, submit_us, first_start_us, "
              "last_start_us, end_us, queued_us, executed_us, preemptions, runs, alloc, "
              "placement, stop, cancel_by, spec, idem_key, idem_hash, elastic) VALUES "
              "(3, 3, 0, 'alice', 'default', 'old', 0, 2, 1, 1, 'PENDING', NULL, NULL, 1000, "
              "NULL, NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, "
              "'{\"command\":\"true\"}', NULL, NULL, NULL)");
    sqlite3_close(db);
    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 3);
    gsd_jobrow r = row(4, "alice", "PENDING");
    r.ntasks = 2;
    r.gpus_per_task = 2;
    r.task_gpus = (char *)"2,1";
    r.groups = (char *)"[{\"lo\":0,\"hi\":2,\"parent\":-1,\"within\":\"V100-NODE\"}]";
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_insert_job(s, &r));
    r.state = (char *)"RUNNING"; /* an update keeps them (immutable columns) */
    ASSERT_OK(gsd_store_update_job(s, &r));
    ASSERT_OK(gsd_store_commit(s));
    gsd_reader *rd = gsd_store_reader(s);
    gsd_jobrow got;
    ASSERT_OK(gsd_reader_job(rd, 3, &got));
    ASSERT(got.task_gpus == NULL && got.groups == NULL);
    gsd_jobrow_release(&got);
    ASSERT_OK(gsd_reader_job(rd, 4, &got));
    ASSERT_STR(got.task_gpus, "2,1");
    ASSERT_CONTAINS(got.groups, "\"within\":\"V100-NODE\"");
    ASSERT_STR(got.state, "RUNNING");
    gsd_jobrow_release(&got);
    gsd_jobrow *rows;
    size_t n;
    int64_t total;
    ASSERT_OK(gsd_reader_list(rd, 0, NULL, NULL, 0, 10, &rows, &n, &total));
    ASSERT_EQ(n, 2);
    ASSERT_STR(rows[1].task_gpus, "2,1");
    gsd_jobrows_free(rows, n);
    gsd_store_reader_put(s, rd);
    gsd_store_close(s);
    ASSERT_EQ(query_int(p, "PRAGMA user_version"), GSD_SCHEMA_VERSION);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 0);
    gsd_store_close(s);
}

static int each_bad(void *ud, const char *name, const char *reason, gs_time t)
{
    char *out = ud;
    size_t l = strlen(out);
    snprintf(out + l, 256 - l, "%s%s=%s@%lld", l ? " " : "", name, reason ? reason : "-",
             (long long)t);
    return 0;
}

/* Version 4 -> 5: the nodes table (bad marks, issue 14).  A version-4 database is the current
 * one without it; after the upgrade marks are written, replaced and read back (bad ones only). */
static void version4_upgraded_with_node_marks(void)
{
    const char *p = dbpath("v4.db");
    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(p, &db), SQLITE_OK);
    exec1(db, "PRAGMA journal_mode=WAL");
    exec1(db, gsd_test_schema_v5);
    exec1(db, "DROP TABLE nodes");
    exec1(db, "PRAGMA user_version = 4");
    sqlite3_close(db);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 4);
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_put_node(s, "n1", 1, "ECC errors", 5));
    ASSERT_OK(gsd_store_put_node(s, "n0", 1, NULL, 6));
    ASSERT_OK(gsd_store_put_node(s, "n2", 1, "fan", 7));
    ASSERT_OK(gsd_store_put_node(s, "n2", 0, "fixed", 8)); /* good again */
    ASSERT_OK(gsd_store_commit(s));
    char got[256] = "";
    ASSERT_OK(gsd_store_each_bad_node(s, each_bad, got));
    ASSERT_STR(got, "n0=-@6 n1=ECC errors@5");
    gsd_store_close(s);
    ASSERT_EQ(query_int(p, "PRAGMA user_version"), GSD_SCHEMA_VERSION);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 0);
    got[0] = '\0';
    ASSERT_OK(gsd_store_each_bad_node(s, each_bad, got));
    ASSERT_STR(got, "n0=-@6 n1=ECC errors@5");
    gsd_store_close(s);
}

/* Version 5 -> 6 (issue 16): events keep their seq and a deleted event's seq is never given
 * again (AUTOINCREMENT: the resume point of the event stream); node events have no job; arrays
 * and GPU time are written at insert / update and read back; the new tables exist. */
static void version5_upgraded_with_event_ids(void)
{
    const char *p = dbpath("v5.db");
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(p, &db), SQLITE_OK);
    exec1(db, "PRAGMA journal_mode=WAL");
    exec1(db, gsd_test_schema_v5);
    exec1(db, "PRAGMA user_version = 5");
    exec1(db, "INSERT INTO events(seq, job_id, t_us, type, reason) VALUES (1, 3, 10, "
              "'submitted', NULL), (2, 3, 20, 'started', 'run 1'), (3, 3, 30, 'done', NULL)");
    exec1(db, "INSERT INTO nodes(name, bad, reason, t_us) VALUES ('n0', 1, 'fan', 5)");
    sqlite3_close(db);
    gsd_store *s;
    gs_diag d;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 5);
    gsd_store_close(s);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM events WHERE seq <= 3 AND job_id = 3"), 3);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM nodes WHERE bad = 1 AND admin_state IS NULL"), 1);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM acct"), 0);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM samples"), 0);
    /* the last event deleted (as retention does): the next one still gets a new id */
    ASSERT_EQ(sqlite3_open(p, &db), SQLITE_OK);
    exec1(db, "DELETE FROM events WHERE seq = 3");
    exec1(db, "INSERT INTO events(job_id, node, t_us, type) VALUES (NULL, 'n0', 40, 'drained')");
    sqlite3_close(db);
    ASSERT_EQ(query_int(p, "SELECT max(seq) FROM events"), 4);
    ASSERT_EQ(query_int(p, "SELECT count(*) FROM events WHERE job_id IS NULL AND node = 'n0'"), 1);
    /* array columns at insert (immutable), GPU time at update */
    ASSERT_OK(gsd_store_open(p, 1, &s, &d));
    ASSERT_EQ(gsd_store_upgraded_from(s), 0);
    gsd_jobrow r = row(5, "alice", "PENDING");
    r.array_id = 5;
    r.array_task = 7;
    gsd_jobrow r2 = row(6, "alice", "PENDING");
    ASSERT_OK(gsd_store_begin(s));
    ASSERT_OK(gsd_store_insert_job(s, &r));
    ASSERT_OK(gsd_store_insert_job(s, &r2));
    r.state = (char *)"COMPLETED";
    r.gpu_us = 123456;
    r.array_task = 99; /* not written by an update */
    ASSERT_OK(gsd_store_update_job(s, &r));
    ASSERT_OK(gsd_store_commit(s));
    gsd_reader *rd = gsd_store_reader(s);
    gsd_jobrow got;
    ASSERT_OK(gsd_reader_job(rd, 5, &got));
    ASSERT_EQ(got.array_id, 5);
    ASSERT_EQ(got.array_task, 7);
    ASSERT_EQ(got.gpu_us, 123456);
    gsd_jobrow_release(&got);
    ASSERT_OK(gsd_reader_job(rd, 6, &got));
    ASSERT_EQ(got.array_id, 0);
    ASSERT_EQ(got.gpu_us, GSD_NONE);
    gsd_jobrow_release(&got);
    gsd_store_reader_put(s, rd);
    gsd_store_close(s);
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
    {"lock_of_a_dead_daemon_waited_for", lock_of_a_dead_daemon_waited_for},
    {"newer_schema_refused", newer_schema_refused},
    {"version1_upgraded_in_place", version1_upgraded_in_place},
    {"version2_upgraded_with_elastic", version2_upgraded_with_elastic},
    {"version3_upgraded_with_groups", version3_upgraded_with_groups},
    {"version4_upgraded_with_node_marks", version4_upgraded_with_node_marks},
    {"version5_upgraded_with_event_ids", version5_upgraded_with_event_ids},
    {"list_filters_and_pages", list_filters_and_pages},
    {"cleanup", cleanup},
};

TEST_MAIN(tests)
