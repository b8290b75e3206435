/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.c - SQLite persistence of jobs, events, tasks, node marks (bad nodes) and the
 * cluster samples of the dashboard's charts.
 *
 * Invariants: the writer connection is touched only by the scheduler thread;
 * every write happens inside gsd_store_begin()/gsd_store_commit(); prepared
 * statements are reset after each use; reader connections are read-only
 * (SQLITE_OPEN_READONLY + query_only) and never see uncommitted state.  A
 * database this file creates is mode 0600 (and so its -wal / -shm files), the
 * lock file too, whatever the umask.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"

enum {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_META_GET,
    ST_META_SET,
    ST_INSERT,
    ST_UPDATE,
    ST_EVENT,
    ST_TASK,
    ST_IDEM,
    ST_STATE,
    ST_HELD,
    ST_NODE_SET,
    ST_N
};

#define READERS 16

struct gsd_reader {
    sqlite3 *db;
    sqlite3_stmt *job;
    unsigned gen; /* the store's generation it was opened in (gsd_store_reopen) */
};

struct gsd_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
    char *path;
    int lockfd;
    pthread_mutex_t rmu;
    gsd_reader *free_readers[READERS];
    int nfree;
    int upgraded_from; /* schema version before the upgrade at open, 0 if none */
    int sync_full;
    /* opened read-only and immutable (no WAL index could be made: disk full); readers open
     * the same way; gsd_store_reopen makes it writable.  Under rmu with gen. */
    int immutable;
    unsigned gen;
};

static const char *const sql_text[ST_N] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [ST_META_SET] = "INSERT INTO meta(key, value) VALUES (?1, ?2) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    [ST_INSERT] =
        "INSERT INTO jobs(id, grp, task_index, user, vc, name, priority, ntasks, "
        "gpus_per_task, gang, state, reason, exit_code, submit_us, first_start_us, "
        "last_start_us, end_us, queued_us, executed_us, preemptions, runs, alloc, "
        "placement, stop, cancel_by, spec, idem_key, idem_hash, elastic, task_gpus, groups, "
        "array_id, array_task, gpu_us) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34)",
    [ST_UPDATE] = "UPDATE jobs SET state = ?11, reason = ?12, exit_code = ?13, first_start_us = "
                  "?15, last_start_us = ?16, end_us = ?17, queued_us = ?18, executed_us = ?19, "
                  "preemptions = ?20, runs = ?21, alloc = ?22, placement = ?23, stop = ?24, "
                  "cancel_by = ?25, elastic = ?29, gpu_us = ?34 WHERE id = ?1",
    [ST_EVENT] = "INSERT INTO events(job_id, t_us, type, reason) VALUES (?1, ?2, ?3, ?4)",
    [ST_TASK] = "INSERT INTO tasks(job_id, run, idx, handle, exit_code, gpus) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(job_id, run, idx) DO UPDATE SET "
                "handle = coalesce(excluded.handle, handle), exit_code = "
                "coalesce(excluded.exit_code, exit_code), gpus = coalesce(excluded.gpus, gpus)",
    [ST_IDEM] = "SELECT id, idem_hash FROM jobs WHERE user = ?1 AND idem_key = ?2",
    /* (a job retention moved to acct keeps its final state: dependencies on it still resolve) */
    [ST_STATE] = "SELECT state, reason FROM jobs WHERE id = ?1 UNION ALL "
                 "SELECT state, reason FROM acct WHERE id = ?1 LIMIT 1",
    [ST_HELD] = "SELECT type FROM events WHERE job_id = ?1 AND type IN ('held', 'released') "
                "ORDER BY seq DESC LIMIT 1",
    [ST_NODE_SET] = "INSERT INTO nodes(name, bad, reason, t_us) VALUES (?1, ?2, ?3, ?4) "
                    "ON CONFLICT(name) DO UPDATE SET bad = excluded.bad, reason = "
                    "excluded.reason, t_us = excluded.t_us",
};

/* Tables and indexes new in schema 6 (issue 16), shared by a fresh database and the 5 -> 6
 * upgrade: the accounting table that retention moves finished jobs into, the cluster samples
 * the dashboard's charts read, and the indexes of arrays and history queries. */
#define V6_TABLES                                                                                 \
    "CREATE TABLE IF NOT EXISTS acct(id INTEGER PRIMARY KEY, array_id INTEGER,\n"                 \
    "  array_task INTEGER, user TEXT NOT NULL, vc TEXT NOT NULL, name TEXT NOT NULL,\n"           \
    "  state TEXT NOT NULL, exit_code INTEGER, reason TEXT, submit_us INTEGER NOT NULL,\n"        \
    "  start_us INTEGER, end_us INTEGER, elapsed_us INTEGER NOT NULL, gpus INTEGER NOT NULL,\n"   \
    "  gpu_us INTEGER NOT NULL, preemptions INTEGER NOT NULL, resizes INTEGER NOT NULL,\n"        \
    "  runs INTEGER NOT NULL) STRICT;\n"                                                          \
    "CREATE INDEX IF NOT EXISTS acct_end ON acct(end_us);\n"                                      \
    "CREATE INDEX IF NOT EXISTS acct_user ON acct(user, end_us);\n"                               \
    "CREATE INDEX IF NOT EXISTS acct_vc ON acct(vc, end_us);\n"                                   \
    "CREATE TABLE IF NOT EXISTS samples(t_us INTEGER PRIMARY KEY, alloc_gpus INTEGER NOT NULL,\n" \
    "  total_gpus INTEGER NOT NULL, pending INTEGER NOT NULL, running INTEGER NOT NULL,\n"        \
    "  started INTEGER NOT NULL, finished INTEGER NOT NULL, vcs TEXT) STRICT;\n"                  \
    "CREATE INDEX IF NOT EXISTS jobs_array ON jobs(array_id) WHERE array_id IS NOT NULL;\n"       \
    "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_us) WHERE end_us IS NOT NULL;\n"             \
    "CREATE INDEX IF NOT EXISTS events_node ON events(node, seq) WHERE node IS NOT NULL;\n"

static const char *schema =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;\n"
    "CREATE TABLE IF NOT EXISTS jobs(\n"
    "  id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, task_index INTEGER NOT NULL,\n"
    "  user TEXT NOT NULL, vc TEXT NOT NULL, name TEXT NOT NULL,\n"
    "  priority INTEGER NOT NULL, ntasks INTEGER NOT NULL, gpus_per_task INTEGER NOT NULL,\n"
    "  gang INTEGER NOT NULL, state TEXT NOT NULL, reason TEXT, exit_code INTEGER,\n"
    "  submit_us INTEGER NOT NULL, first_start_us INTEGER, last_start_us INTEGER,\n"
    "  end_us INTEGER, queued_us INTEGER NOT NULL, executed_us INTEGER NOT NULL,\n"
    "  preemptions INTEGER NOT NULL, runs INTEGER NOT NULL, alloc TEXT, placement TEXT,\n"
    "  stop TEXT, cancel_by TEXT, spec TEXT NOT NULL, idem_key TEXT, idem_hash TEXT,\n"
    "  elastic TEXT, task_gpus TEXT, groups TEXT, array_id INTEGER, array_task INTEGER,\n"
    "  gpu_us INTEGER) STRICT;\n"
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);\n"
    "CREATE UNIQUE INDEX IF NOT EXISTS jobs_idem ON jobs(user, idem_key)\n"
    "  WHERE idem_key IS NOT NULL;\n"
    "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id INTEGER,\n"
    "  t_us INTEGER NOT NULL, type TEXT NOT NULL, reason TEXT, node TEXT, data TEXT) STRICT;\n"
    "CREATE INDEX IF NOT EXISTS events_job ON events(job_id, seq);\n"
    "CREATE TABLE IF NOT EXISTS tasks(job_id INTEGER NOT NULL, run INTEGER NOT NULL,\n"
    "  idx INTEGER NOT NULL, handle TEXT, exit_code INTEGER, gpus TEXT,\n"
    "  PRIMARY KEY(job_id, run, idx)) STRICT, WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS nodes(name TEXT PRIMARY KEY, bad INTEGER NOT NULL,\n"
    "  reason TEXT, t_us INTEGER NOT NULL, admin_state TEXT, admin_reason TEXT, admin_by TEXT,\n"
    "  admin_t_us INTEGER) STRICT;\n" V6_TABLES;

/*
 * Upgrades, one per version step, each run inside the opening transaction.
 * 1 -> 2: tasks named by the executor's opaque handle instead of the local
 * executor's pid and process start time (the only executor then).
 * 2 -> 3: jobs.elastic, the live state of an elastic job (issue 13) as JSON
 * (generation, drain target and reservation, rescales, failures, hints read).
 * 3 -> 4: jobs.task_gpus and jobs.groups (issue 14: members of different sizes,
 * withinOneCell groups); NULL in older rows, whose jobs have neither.
 * 4 -> 5: the nodes table: a node's bad mark (issue 14: gsched node bad|good), its reason
 * and when it was set or cleared; a node without a row is good.
 * 5 -> 6 (issue 16): events.seq AUTOINCREMENT (an event id is never reused once retention
 * deletes rows: it is the resume point of GET /v1/events), events.job_id nullable with
 * events.node and events.data (node and cluster events in the same sequence); nodes.admin_*
 * (drain/down by an admin); jobs.array_id/array_task (server-side arrays) and jobs.gpu_us
 * (GPU time used, exact for elastic jobs); the acct and samples tables (V6_TABLES).
 */
static const char *const upgrade[GSD_SCHEMA_VERSION + 1] = {
    [2] = "CREATE TABLE tasks_v2(job_id INTEGER NOT NULL, run INTEGER NOT NULL,\n"
          "  idx INTEGER NOT NULL, handle TEXT, exit_code INTEGER, gpus TEXT,\n"
          "  PRIMARY KEY(job_id, run, idx)) STRICT, WITHOUT ROWID;\n"
          "INSERT INTO tasks_v2(job_id, run, idx, handle, exit_code, gpus)\n"
          "  SELECT job_id, run, idx, CASE WHEN pid IS NULL THEN NULL ELSE\n"
          "    'local:' || pid || ':' || coalesce(start_ticks, -1) END, exit_code, gpus\n"
          "  FROM tasks;\n"
          "DROP TABLE tasks;\n"
          "ALTER TABLE tasks_v2 RENAME TO tasks;\n",
    [3] = "ALTER TABLE jobs ADD COLUMN elastic TEXT;\n",
    [4] = "ALTER TABLE jobs ADD COLUMN task_gpus TEXT;\n"
          "ALTER TABLE jobs ADD COLUMN groups TEXT;\n",
    [5] = "CREATE TABLE nodes(name TEXT PRIMARY KEY, bad INTEGER NOT NULL,\n"
          "  reason TEXT, t_us INTEGER NOT NULL) STRICT;\n",
    [6] =
        "CREATE TABLE events_v6(seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id INTEGER,\n"
        "  t_us INTEGER NOT NULL, type TEXT NOT NULL, reason TEXT, node TEXT, data TEXT) STRICT;\n"
        "INSERT INTO events_v6(seq, job_id, t_us, type, reason)\n"
        "  SELECT seq, job_id, t_us, type, reason FROM events;\n"
        "DROP TABLE events;\n"
        "ALTER TABLE events_v6 RENAME TO events;\n"
        "CREATE INDEX events_job ON events(job_id, seq);\n"
        "ALTER TABLE nodes ADD COLUMN admin_state TEXT;\n"
        "ALTER TABLE nodes ADD COLUMN admin_reason TEXT;\n"
        "ALTER TABLE nodes ADD COLUMN admin_by TEXT;\n"
        "ALTER TABLE nodes ADD COLUMN admin_t_us INTEGER;\n"
        "ALTER TABLE jobs ADD COLUMN array_id INTEGER;\n"
        "ALTER TABLE jobs ADD COLUMN array_task INTEGER;\n"
        "ALTER TABLE jobs ADD COLUMN gpu_us INTEGER;\n" V6_TABLES,
};

static const char *job_cols =
    "id, grp, task_index, user, vc, name, priority, ntasks, gpus_per_task, gang, state, reason, "
    "exit_code, submit_us, first_start_us, last_start_us, end_us, queued_us, executed_us, "
    "preemptions, runs, alloc, placement, stop, cancel_by, spec, idem_key, idem_hash, elastic, "
    "task_gpus, groups, array_id, array_task, gpu_us";

static char *dupcol(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (!t) return NULL;
    char *p = strdup((const char *)t);
    if (!p) abort();
    return p;
}

static int64_t intcol(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? GSD_NONE : sqlite3_column_int64(st, i);
}

void gsd_jobrow_release(gsd_jobrow *r)
{
    if (!r) return;
    free(r->user);
    free(r->vc);
    free(r->name);
    free(r->state);
    free(r->reason);
    free(r->alloc);
    free(r->placement);
    free(r->stop);
    free(r->cancel_by);
    free(r->spec);
    free(r->idem_key);
    free(r->idem_hash);
    free(r->elastic);
    free(r->task_gpus);
    free(r->groups);
    memset(r, 0, sizeof *r);
}

static void read_row(sqlite3_stmt *st, gsd_jobrow *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->grp = sqlite3_column_int64(st, 1);
    r->task_index = sqlite3_column_int(st, 2);
    r->user = dupcol(st, 3);
    r->vc = dupcol(st, 4);
    r->name = dupcol(st, 5);
    r->priority = sqlite3_column_int(st, 6);
    r->ntasks = sqlite3_column_int(st, 7);
    r->gpus_per_task = sqlite3_column_int(st, 8);
    r->gang = sqlite3_column_int(st, 9);
    r->state = dupcol(st, 10);
    r->reason = dupcol(st, 11);
    r->exit_code = intcol(st, 12);
    r->submit = intcol(st, 13);
    r->first_start = intcol(st, 14);
    r->last_start = intcol(st, 15);
    r->end = intcol(st, 16);
    r->queued = sqlite3_column_int64(st, 17);
    r->executed = sqlite3_column_int64(st, 18);
    r->preemptions = sqlite3_column_int(st, 19);
    r->runs = sqlite3_column_int(st, 20);
    r->alloc = dupcol(st, 21);
    r->placement = dupcol(st, 22);
    r->stop = dupcol(st, 23);
    r->cancel_by = dupcol(st, 24);
    r->spec = dupcol(st, 25);
    r->idem_key = dupcol(st, 26);
    r->idem_hash = dupcol(st, 27);
    r->elastic = dupcol(st, 28);
    r->task_gpus = dupcol(st, 29);
    r->groups = dupcol(st, 30);
    r->array_id = sqlite3_column_type(st, 31) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 31);
    r->array_task = sqlite3_column_int(st, 32);
    r->gpu_us = intcol(st, 33);
}

static int fail(gsd_store *s, gs_diag *d, const char *what)
{
    return gs_diag_set(d, GS_EIO, 0, 0, "%s: %s", what, s->db ? sqlite3_errmsg(s->db) : "?");
}

const char *gsd_store_errmsg(const gsd_store *s)
{
    return s && s->db ? sqlite3_errmsg(s->db) : "no database";
}

const char *gsd_store_path(const gsd_store *s)
{
    return s->path;
}

/* Open s->db (immutable: read-only, no WAL index, for a full disk), check or create the schema,
 * prepare the statements.  On failure the caller closes (close_db). */
static int connect_db(gsd_store *s, int immutable, gs_diag *d)
{
    const char *path = s->path;
    char uri[4200];
    snprintf(uri, sizeof uri, "file:%s?immutable=1", path);
    int rc =
        immutable
            ? sqlite3_open_v2(uri, &s->db,
                              SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL)
            : sqlite3_open_v2(path, &s->db,
                              SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                              NULL);
    if (rc != SQLITE_OK) return fail(s, d, "cannot open database");
    sqlite3_busy_timeout(s->db, 10000);
    sqlite3_stmt *st = NULL;
    if (!immutable) {
        if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW) {
            sqlite3_finalize(st);
            return fail(s, d, "cannot open database");
        }
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        int wal = mode && !strcmp(mode, "wal");
        sqlite3_finalize(st);
        if (!wal)
            return gs_diag_set(d, GS_EIO, 0, 0, "database '%s': cannot switch to WAL mode", path);
    }
    char *err = NULL;
    const char *pragmas = s->sync_full ? "PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF;"
                                       : "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;";
    if (sqlite3_exec(s->db, pragmas, NULL, NULL, &err) != SQLITE_OK) {
        rc = gs_diag_set(d, GS_EIO, 0, 0, "database '%s': %s", path, err ? err : "?");
        sqlite3_free(err);
        return rc;
    }
    /* schema version */
    int64_t ver = 0;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        ver = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (ver < 0) {
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "database '%s' has schema version %lld: not a gsched database", path,
                           (long long)ver);
    }
    if (ver > GSD_SCHEMA_VERSION) {
        return gs_diag_set(d, GS_EUNSUPPORTED, 0, 0,
                           "database '%s' has schema version %lld, newer than this gsched "
                           "understands (%d)",
                           path, (long long)ver, GSD_SCHEMA_VERSION);
    }
    if (ver < GSD_SCHEMA_VERSION && immutable)
        return gs_diag_set(d, GS_EIO, 0, 0,
                           "database '%s' must be %s (schema version %lld) and cannot be written",
                           path, ver ? "upgraded" : "created", (long long)ver);
    if (ver < GSD_SCHEMA_VERSION) {
        /* a new database gets the current schema; an older one each upgrade step in turn */
        char sql[8192];
        size_t n = (size_t)snprintf(sql, sizeof sql, "BEGIN IMMEDIATE; ");
        if (ver == 0)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s", schema);
        else
            for (int64_t v = ver + 1; v <= GSD_SCHEMA_VERSION && n < sizeof sql; v++)
                n += (size_t)snprintf(sql + n, sizeof sql - n, "%s", upgrade[v]);
        if (n < sizeof sql)
            n += (size_t)snprintf(sql + n, sizeof sql - n, " PRAGMA user_version = %d; COMMIT;",
                                  GSD_SCHEMA_VERSION);
        if (n >= sizeof sql || sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
            rc = gs_diag_set(d, GS_EIO, 0, 0, "database '%s': cannot %s schema version %lld: %s",
                             path, ver ? "upgrade" : "create", (long long)ver,
                             err ? err : "statement too long");
            sqlite3_free(err);
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return rc;
        }
        s->upgraded_from = (int)ver;
    }
    for (int i = 0; i < ST_N; i++) {
        if (sqlite3_prepare_v3(s->db, sql_text[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL) != SQLITE_OK)
            return fail(s, d, "cannot prepare statement");
    }
    return 0;
}

static void close_db(gsd_store *s)
{
    for (int i = 0; i < ST_N; i++) {
        sqlite3_finalize(s->st[i]);
        s->st[i] = NULL;
    }
    if (s->db) sqlite3_close(s->db);
    s->db = NULL;
}

/* 1 if the last error on s->db is one a full disk gives. */
static int full_error(gsd_store *s)
{
    int e = s->db ? sqlite3_errcode(s->db) & 0xff : 0;
    return e == SQLITE_FULL || e == SQLITE_IOERR || e == SQLITE_CANTOPEN;
}

/* 1 if the database's WAL holds nothing (absent or empty): the file alone is the database. */
static int wal_empty(const char *path)
{
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat st;
    return stat(wal, &st) != 0 || st.st_size == 0;
}

int gsd_store_open(const char *path, int sync_full, gsd_store **out, gs_diag *d)
{
    gsd_store *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->lockfd = -1;
    pthread_mutex_init(&s->rmu, NULL);
    s->path = strdup(path);
    char lock[4200];
    snprintf(lock, sizeof lock, "%s-lock", path);
    s->lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->lockfd < 0) {
        int e = errno;
        gsd_store_close(s);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot open lock file '%s': %s", lock, strerror(e));
    }
    /* A task child that a daemon killed by SIGKILL forked a moment before shares the lock's
     * open file description until it closes its inherited descriptors (exec_local.c does that
     * first thing): when the daemon that wrote its pid into the lock file is gone, wait for
     * the lock a while (bounded: 10 s) instead of refusing to start.  A live holder is
     * refused at once. */
    for (int tries = 0; flock(s->lockfd, LOCK_EX | LOCK_NB) != 0; tries++) {
        char pid[32] = "";
        ssize_t k = pread(s->lockfd, pid, sizeof pid - 1, 0);
        if (k > 0) pid[k] = '\0';
        char *nl = strchr(pid, '\n');
        if (nl) *nl = '\0';
        long holder = strtol(pid, NULL, 10);
        if (tries < 200 && holder > 0 && kill((pid_t)holder, 0) != 0 && errno == ESRCH) {
            nanosleep(&(struct timespec){0, 50000000L}, NULL);
            continue;
        }
        gsd_store_close(s);
        return gs_diag_set(d, GS_ESTATE, 0, 0,
                           "database '%s' is in use by another gsched serve (pid %s)", path,
                           *pid ? pid : "?");
    }
    char pid[32];
    int pl = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(s->lockfd, 0) == 0 && pwrite(s->lockfd, pid, (size_t)pl, 0) < 0) {
        /* the pid is only informative */
    }
    /* a new database is created here, 0600 whatever the umask (it holds every spec's env);
     * SQLite gives its -wal / -shm files the database's mode */
    int nfd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (nfd >= 0) {
        if (fchmod(nfd, 0600) != 0) {
            /* cannot happen for our own new file; sqlite reports a real problem below */
        }
        close(nfd);
    }
    s->sync_full = sync_full;
    int rc = connect_db(s, 0, d);
    if (rc && full_error(s) && wal_empty(path)) {
        /* the disk is full: no WAL index (-shm) can be made.  Every change is in the database
         * file itself (the WAL is empty), so read it as immutable: the daemon starts read-only
         * and makes it writable as soon as it can (gsd_store_reopen) */
        close_db(s);
        gs_diag d2;
        gs_diag_init(&d2, NULL);
        if (connect_db(s, 1, &d2) == 0) {
            s->immutable = 1;
            rc = 0;
        }
    }
    if (rc) {
        gsd_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void reader_close(gsd_reader *r)
{
    if (!r) return;
    sqlite3_finalize(r->job);
    sqlite3_close(r->db);
    free(r);
}

int gsd_store_upgraded_from(const gsd_store *s)
{
    return s->upgraded_from;
}

void gsd_store_close(gsd_store *s)
{
    if (!s) return;
    for (int i = 0; i < ST_N; i++) sqlite3_finalize(s->st[i]);
    for (int i = 0; i < s->nfree; i++) reader_close(s->free_readers[i]);
    if (s->db) sqlite3_close(s->db);
    if (s->lockfd >= 0) {
        /* unlock explicitly: a task child between fork() and exec() still shares the lock's
         * open file description, and closing ours alone would leave the database locked
         * until it execs (a restart right after a shutdown was refused) */
        flock(s->lockfd, LOCK_UN);
        close(s->lockfd);
    }
    pthread_mutex_destroy(&s->rmu);
    free(s->path);
    free(s);
}

static int run_simple(gsd_store *s, int k)
{
    sqlite3_stmt *st = s->st[k];
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_begin(gsd_store *s)
{
    return run_simple(s, ST_BEGIN);
}

int gsd_store_commit(gsd_store *s)
{
    return run_simple(s, ST_COMMIT);
}

void gsd_store_rollback(gsd_store *s)
{
    (void)run_simple(s, ST_ROLLBACK);
}

int gsd_store_immutable(gsd_store *s)
{
    pthread_mutex_lock(&s->rmu);
    int v = s->immutable;
    pthread_mutex_unlock(&s->rmu);
    return v;
}

int gsd_store_reopen(gsd_store *s, gs_diag *d)
{
    if (!gsd_store_immutable(s)) return 0;
    sqlite3 *old = s->db;
    sqlite3_stmt *oldst[ST_N];
    memcpy(oldst, s->st, sizeof oldst);
    s->db = NULL;
    memset(s->st, 0, sizeof s->st);
    int rc = connect_db(s, 0, d);
    if (rc) {
        close_db(s);
        s->db = old;
        memcpy(s->st, oldst, sizeof oldst);
        return rc;
    }
    for (int i = 0; i < ST_N; i++) sqlite3_finalize(oldst[i]);
    sqlite3_close(old);
    /* readers opened immutable are closed as they come back */
    pthread_mutex_lock(&s->rmu);
    s->immutable = 0;
    s->gen++;
    gsd_reader *drop[READERS];
    int n = s->nfree;
    memcpy(drop, s->free_readers, sizeof drop);
    s->nfree = 0;
    pthread_mutex_unlock(&s->rmu);
    for (int i = 0; i < n; i++) reader_close(drop[i]);
    return 0;
}

int gsd_store_in_txn(const gsd_store *s)
{
    return s->db && !sqlite3_get_autocommit(s->db);
}

int gsd_store_meta_get(gsd_store *s, const char *key, int64_t def, int64_t *out)
{
    sqlite3_stmt *st = s->st[ST_META_GET];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : def;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_meta_set(gsd_store *s, const char *key, int64_t v)
{
    sqlite3_stmt *st = s->st[ST_META_SET];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, v);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_meta_each(gsd_store *s, const char *prefix,
                        int (*fn)(void *ud, const char *key, int64_t v), void *ud)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT key, value FROM meta WHERE substr(key, 1, length(?1)) = ?1 "
                           "ORDER BY key",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
    int rc, out = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && !out)
        out = fn(ud, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    if (out) return out;
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : GS_EIO;
}

int gsd_store_meta_delete_prefix(gsd_store *s, const char *prefix)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "DELETE FROM meta WHERE substr(key, 1, length(?1)) = ?1", -1, &st,
                           NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

static void bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == GSD_NONE)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void bind_row(sqlite3_stmt *st, const gsd_jobrow *r, int all)
{
    sqlite3_bind_int64(st, 1, r->id);
    if (all) {
        sqlite3_bind_int64(st, 2, r->grp);
        sqlite3_bind_int(st, 3, r->task_index);
        sqlite3_bind_text(st, 4, r->user ? r->user : "-", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, r->vc ? r->vc : "default", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, r->name ? r->name : "", -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 7, r->priority);
        sqlite3_bind_int(st, 8, r->ntasks);
        sqlite3_bind_int(st, 9, r->gpus_per_task);
        sqlite3_bind_int(st, 10, r->gang);
        sqlite3_bind_int64(st, 14, r->submit);
        sqlite3_bind_text(st, 26, r->spec ? r->spec : "{}", -1, SQLITE_STATIC);
        bind_opt_text(st, 27, r->idem_key);
        bind_opt_text(st, 28, r->idem_hash);
        bind_opt_text(st, 30, r->task_gpus);
        bind_opt_text(st, 31, r->groups);
        bind_opt_int(st, 32, r->array_id ? r->array_id : GSD_NONE);
        bind_opt_int(st, 33, r->array_id ? r->array_task : GSD_NONE);
    }
    sqlite3_bind_text(st, 11, r->state, -1, SQLITE_STATIC);
    bind_opt_text(st, 12, r->reason);
    bind_opt_int(st, 13, r->exit_code);
    bind_opt_int(st, 15, r->first_start);
    bind_opt_int(st, 16, r->last_start);
    bind_opt_int(st, 17, r->end);
    sqlite3_bind_int64(st, 18, r->queued);
    sqlite3_bind_int64(st, 19, r->executed);
    sqlite3_bind_int(st, 20, r->preemptions);
    sqlite3_bind_int(st, 21, r->runs);
    bind_opt_text(st, 22, r->alloc);
    bind_opt_text(st, 23, r->placement);
    bind_opt_text(st, 24, r->stop);
    bind_opt_text(st, 25, r->cancel_by);
    bind_opt_text(st, 29, r->elastic);
    bind_opt_int(st, 34, r->gpu_us);
}

int gsd_store_insert_job(gsd_store *s, const gsd_jobrow *r)
{
    sqlite3_stmt *st = s->st[ST_INSERT];
    bind_row(st, r, 1);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc == SQLITE_CONSTRAINT) return GS_EEXIST;
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_update_job(gsd_store *s, const gsd_jobrow *r)
{
    sqlite3_stmt *st = s->st[ST_UPDATE];
    bind_row(st, r, 0);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_add_event(gsd_store *s, int64_t job_id, gs_time t, const char *type,
                        const char *reason)
{
    sqlite3_stmt *st = s->st[ST_EVENT];
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int64(st, 2, t);
    sqlite3_bind_text(st, 3, type, -1, SQLITE_STATIC);
    bind_opt_text(st, 4, reason && *reason ? reason : NULL);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_put_task(gsd_store *s, const gsd_taskrow *t)
{
    sqlite3_stmt *st = s->st[ST_TASK];
    sqlite3_bind_int64(st, 1, t->job_id);
    sqlite3_bind_int(st, 2, t->run);
    sqlite3_bind_int(st, 3, t->idx);
    bind_opt_text(st, 4, t->handle);
    bind_opt_int(st, 5, t->exit_code);
    bind_opt_text(st, 6, t->gpus);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_find_idem(gsd_store *s, const char *user, const char *key, int64_t *id, char **hash)
{
    sqlite3_stmt *st = s->st[ST_IDEM];
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int ret = GS_ENOENT;
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        if (hash) *hash = dupcol(st, 1);
        ret = 0;
    } else if (rc != SQLITE_DONE) {
        ret = GS_EIO;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

int gsd_store_job_state(gsd_store *s, int64_t id, char **state, char **reason)
{
    sqlite3_stmt *st = s->st[ST_STATE];
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    int ret = GS_ENOENT;
    if (rc == SQLITE_ROW) {
        *state = dupcol(st, 0);
        if (reason) *reason = dupcol(st, 1);
        ret = 0;
    } else if (rc != SQLITE_DONE) {
        ret = GS_EIO;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

int gsd_store_job_held(gsd_store *s, int64_t id, int *held)
{
    sqlite3_stmt *st = s->st[ST_HELD];
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    int ret = GS_ENOENT;
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        *held = t && !strcmp((const char *)t, "held");
        ret = 0;
    } else if (rc != SQLITE_DONE) {
        ret = GS_EIO;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

int gsd_store_each_active(gsd_store *s, int (*fn)(void *ud, gsd_jobrow *r), void *ud)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT %s FROM jobs WHERE state IN ('PENDING', 'RUNNING', 'PREEMPTED', "
             "'SUSPENDED', 'DRAINING') ORDER BY id",
             job_cols);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gsd_jobrow r;
        read_row(st, &r);
        ret = fn(ud, &r);
        gsd_jobrow_release(&r);
        if (ret) break;
    }
    if (!ret && rc != SQLITE_DONE) ret = GS_EIO;
    sqlite3_finalize(st);
    return ret;
}

int gsd_store_put_node(gsd_store *s, const char *name, int bad, const char *reason, gs_time t)
{
    sqlite3_stmt *st = s->st[ST_NODE_SET];
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, bad ? 1 : 0);
    if (reason)
        sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, t);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_each_bad_node(gsd_store *s,
                            int (*fn)(void *ud, const char *name, const char *reason, gs_time t),
                            void *ud)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT name, reason, t_us FROM nodes WHERE bad = 1 ORDER BY name", -1,
                           &st, NULL) != SQLITE_OK)
        return GS_EIO;
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ret = fn(ud, (const char *)sqlite3_column_text(st, 0),
                 (const char *)sqlite3_column_text(st, 1), sqlite3_column_int64(st, 2));
        if (ret) break;
    }
    if (!ret && rc != SQLITE_DONE) ret = GS_EIO;
    sqlite3_finalize(st);
    return ret;
}

int gsd_store_count_states(gsd_store *s, int64_t counts[GS_JOB_NSTATES])
{
    for (int i = 0; i < GS_JOB_NSTATES; i++) counts[i] = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT state, count(*) FROM jobs GROUP BY state", -1, &st,
                           NULL) != SQLITE_OK)
        return GS_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int k = name ? gs_job_state_parse(name) : -1;
        if (k >= 0) counts[k] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return 0;
}

/* ---- readers -------------------------------------------------------------------------------- */

gsd_reader *gsd_store_reader(gsd_store *s)
{
    pthread_mutex_lock(&s->rmu);
    gsd_reader *r = s->nfree ? s->free_readers[--s->nfree] : NULL;
    pthread_mutex_unlock(&s->rmu);
    if (r) return r;
    r = calloc(1, sizeof *r);
    if (!r) abort();
    pthread_mutex_lock(&s->rmu);
    int immutable = s->immutable;
    r->gen = s->gen;
    pthread_mutex_unlock(&s->rmu);
    char uri[4200];
    snprintf(uri, sizeof uri, "file:%s?immutable=1", s->path);
    if (sqlite3_open_v2(immutable ? uri : s->path, &r->db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
                            (immutable ? SQLITE_OPEN_URI : 0),
                        NULL) != SQLITE_OK) {
        reader_close(r);
        return NULL;
    }
    sqlite3_busy_timeout(r->db, 10000);
    sqlite3_exec(r->db, "PRAGMA query_only=1", NULL, NULL, NULL);
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT %s FROM jobs WHERE id = ?1", job_cols);
    if (sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &r->job, NULL) != SQLITE_OK) {
        reader_close(r);
        return NULL;
    }
    return r;
}

void gsd_store_reader_put(gsd_store *s, gsd_reader *r)
{
    if (!r) return;
    pthread_mutex_lock(&s->rmu);
    if (s->nfree < READERS && r->gen == s->gen) {
        s->free_readers[s->nfree++] = r;
        r = NULL;
    }
    pthread_mutex_unlock(&s->rmu);
    reader_close(r);
}

int gsd_reader_job(gsd_reader *r, int64_t id, gsd_jobrow *out)
{
    sqlite3_bind_int64(r->job, 1, id);
    int rc = sqlite3_step(r->job);
    int ret = GS_ENOENT;
    if (rc == SQLITE_ROW) {
        read_row(r->job, out);
        ret = 0;
    } else if (rc != SQLITE_DONE) {
        ret = GS_EIO;
    }
    sqlite3_reset(r->job);
    return ret;
}

static void where_clause(char *w, size_t cap, unsigned states, const char *user, const char *vc)
{
    size_t n = 0;
    n += (size_t)snprintf(w + n, cap - n, " WHERE 1");
    if (states) {
        n += (size_t)snprintf(w + n, cap - n, " AND state IN (");
        int first = 1;
        for (int i = 0; i < GS_JOB_NSTATES; i++) {
            if (!(states & (1u << i))) continue;
            n += (size_t)snprintf(w + n, cap - n, "%s'%s'", first ? "" : ", ",
                                  gs_job_state_name((gs_job_state)i));
            first = 0;
        }
        n += (size_t)snprintf(w + n, cap - n, ")");
    }
    if (user) n += (size_t)snprintf(w + n, cap - n, " AND user = ?1");
    if (vc) n += (size_t)snprintf(w + n, cap - n, " AND vc = ?2");
}

int gsd_reader_list(gsd_reader *r, unsigned states, const char *user, const char *vc,
                    int64_t offset, int64_t limit, gsd_jobrow **rows, size_t *n, int64_t *total)
{
    char w[512], sql[2048];
    where_clause(w, sizeof w, states, user, vc);
    *rows = NULL;
    *n = 0;
    *total = 0;
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM jobs%s", w);
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    if (user) sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    if (vc) sqlite3_bind_text(st, 2, vc, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *total = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    snprintf(sql, sizeof sql, "SELECT %s FROM jobs%s ORDER BY id LIMIT ?3 OFFSET ?4", job_cols, w);
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    if (user) sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    if (vc) sqlite3_bind_text(st, 2, vc, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, limit);
    sqlite3_bind_int64(st, 4, offset);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            gsd_jobrow *nr = realloc(*rows, cap * sizeof *nr);
            if (!nr) abort();
            *rows = nr;
        }
        read_row(st, &(*rows)[(*n)++]);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

void gsd_jobrows_free(gsd_jobrow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) gsd_jobrow_release(&rows[i]);
    free(rows);
}

int gsd_reader_events(gsd_reader *r, int64_t job_id, size_t max, gsd_event **ev, size_t *n)
{
    *ev = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, job_id, t_us, type, reason FROM events WHERE job_id = ?1 "
                           "ORDER BY seq LIMIT ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int64(st, 2, (int64_t)max);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            gsd_event *ne = realloc(*ev, cap * sizeof *ne);
            if (!ne) abort();
            *ev = ne;
        }
        gsd_event *e = &(*ev)[(*n)++];
        e->seq = sqlite3_column_int64(st, 0);
        e->job_id = sqlite3_column_int64(st, 1);
        e->t = sqlite3_column_int64(st, 2);
        e->type = dupcol(st, 3);
        e->reason = dupcol(st, 4);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

void gsd_events_free(gsd_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ev[i].type);
        free(ev[i].reason);
    }
    free(ev);
}

int gsd_reader_tasks(gsd_reader *r, int64_t job_id, int run, gsd_taskrow **t, size_t *n)
{
    *t = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT job_id, run, idx, handle, exit_code, gpus FROM tasks "
                           "WHERE job_id = ?1 AND run = ?2 ORDER BY idx",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int(st, 2, run);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            gsd_taskrow *nt = realloc(*t, cap * sizeof *nt);
            if (!nt) abort();
            *t = nt;
        }
        gsd_taskrow *x = &(*t)[(*n)++];
        x->job_id = sqlite3_column_int64(st, 0);
        x->run = sqlite3_column_int(st, 1);
        x->idx = sqlite3_column_int(st, 2);
        x->handle = dupcol(st, 3);
        x->exit_code = intcol(st, 4);
        x->gpus = dupcol(st, 5);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

void gsd_taskrows_free(gsd_taskrow *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].handle);
        free(t[i].gpus);
    }
    free(t);
}

/* ---- issue 16 lanes: each adds its functions under its own marker ---- */
/* events */

void gsd_evrows_free(gsd_evrow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].type);
        free(rows[i].reason);
        free(rows[i].node);
        free(rows[i].data);
        free(rows[i].user);
        free(rows[i].vc);
        free(rows[i].state);
    }
    free(rows);
}

/* The event columns and the job's, for every query of the stream. */
#define EV_COLS                                                                               \
    "SELECT e.seq, coalesce(e.job_id, 0), e.t_us, e.type, e.reason, e.node, e.data, j.user, " \
    "j.vc, j.state FROM events e LEFT JOIN jobs j ON j.id = e.job_id "

/* sel's WHERE clause after "WHERE e.seq > ?1 AND e.seq <= ?2" (binds from ?3). */
static void ev_where(const gsd_evsel *sel, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    if (sel->job > 0) k += (size_t)snprintf(buf + k, cap - k, " AND e.job_id = ?3");
    if (sel->kinds && sel->kinds != (GSD_EVK_JOB | GSD_EVK_NODE | GSD_EVK_CLUSTER)) {
        k += (size_t)snprintf(
            buf + k, cap - k, " AND (0%s%s%s)",
            sel->kinds & GSD_EVK_JOB ? " OR e.job_id IS NOT NULL" : "",
            sel->kinds & GSD_EVK_NODE ? " OR (e.job_id IS NULL AND e.node IS NOT NULL)" : "",
            sel->kinds & GSD_EVK_CLUSTER ? " OR (e.job_id IS NULL AND e.node IS NULL)" : "");
    }
    if (sel->user) snprintf(buf + k, cap - k, " AND (e.job_id IS NULL OR j.user = ?4)");
}

static int ev_read(sqlite3_stmt *st, size_t max, gsd_evrow **rows, size_t *n)
{
    size_t cap = 0;
    int rc = SQLITE_DONE;
    while (*n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            gsd_evrow *nr = realloc(*rows, cap * sizeof *nr);
            if (!nr) abort();
            *rows = nr;
        }
        gsd_evrow *e = &(*rows)[(*n)++];
        e->seq = sqlite3_column_int64(st, 0);
        e->job_id = sqlite3_column_int64(st, 1);
        e->t = sqlite3_column_int64(st, 2);
        e->type = dupcol(st, 3);
        e->reason = dupcol(st, 4);
        e->node = dupcol(st, 5);
        e->data = dupcol(st, 6);
        e->user = dupcol(st, 7);
        e->vc = dupcol(st, 8);
        e->state = dupcol(st, 9);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) rc = SQLITE_DONE; /* stopped at max */
    if (rc != SQLITE_DONE) {
        gsd_evrows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
        return GS_EIO;
    }
    return 0;
}

static int ev_select(sqlite3 *db, const gsd_evsel *sel, size_t max, gsd_evrow **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    char where[400], sql[1200];
    ev_where(sel, where, sizeof where);
    snprintf(sql, sizeof sql, EV_COLS "WHERE e.seq > ?1 AND e.seq <= ?2%s ORDER BY e.seq LIMIT ?5",
             where);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    sqlite3_bind_int64(st, 1, sel->after);
    sqlite3_bind_int64(st, 2, sel->upto);
    if (sel->job > 0) sqlite3_bind_int64(st, 3, sel->job);
    if (sel->user) sqlite3_bind_text(st, 4, sel->user, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, max > INT64_MAX ? INT64_MAX : (int64_t)max);
    return ev_read(st, max, rows, n);
}

int gsd_store_events_after(gsd_store *s, int64_t after, size_t max, gsd_evrow **rows, size_t *n)
{
    gsd_evsel sel = {after, INT64_MAX, 0, 0, NULL};
    return ev_select(s->db, &sel, max, rows, n);
}

static int one_int(sqlite3 *db, const char *sql, int64_t *out)
{
    *out = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_event_seq_max(gsd_store *s, int64_t *seq)
{
    int64_t a, b;
    /* AUTOINCREMENT keeps the highest seq ever given in sqlite_sequence (a fresh database
     * has no row there until the first event) */
    int rc = one_int(s->db, "SELECT seq FROM sqlite_sequence WHERE name = 'events'", &a);
    if (!rc) rc = one_int(s->db, "SELECT max(seq) FROM events", &b);
    *seq = rc ? 0 : a > b ? a : b;
    return rc;
}

int gsd_reader_events_sel(gsd_reader *r, const gsd_evsel *sel, size_t max, gsd_evrow **rows,
                          size_t *n)
{
    return ev_select(r->db, sel, max, rows, n);
}

int gsd_reader_events_tail(gsd_reader *r, const gsd_evsel *sel, size_t max, int64_t *seq)
{
    *seq = 0;
    if (!max) return 0;
    char where[400], sql[1200];
    ev_where(sel, where, sizeof where);
    snprintf(sql, sizeof sql,
             "SELECT e.seq FROM events e LEFT JOIN jobs j ON j.id = e.job_id WHERE e.seq > ?1 "
             "AND e.seq <= ?2%s ORDER BY e.seq DESC LIMIT 1 OFFSET ?5",
             where);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    sqlite3_bind_int64(st, 1, 0);
    sqlite3_bind_int64(st, 2, sel->upto);
    if (sel->job > 0) sqlite3_bind_int64(st, 3, sel->job);
    if (sel->user) sqlite3_bind_text(st, 4, sel->user, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, (int64_t)(max - 1));
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *seq = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_reader_event_seq_min(gsd_reader *r, int64_t *seq)
{
    return one_int(r->db, "SELECT min(seq) FROM events", seq);
}

/* node administration */

/* One write of a rarely used statement (an admin's command): prepared for the call. */
static int node_exec(gsd_store *s, const char *sql, const char *const *text, int ntext,
                     const int64_t *num, int nnum)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    for (int i = 0; i < ntext; i++) bind_opt_text(st, i + 1, text[i]);
    for (int i = 0; i < nnum; i++) sqlite3_bind_int64(st, ntext + i + 1, num[i]);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_store_put_node_admin(gsd_store *s, const char *name, const char *state, const char *reason,
                             const char *by, gs_time t)
{
    const char *text[] = {name, state, reason && *reason ? reason : NULL, by};
    int64_t num[] = {t};
    return node_exec(s,
                     "INSERT INTO nodes(name, bad, t_us, admin_state, admin_reason, admin_by, "
                     "admin_t_us) VALUES (?1, 0, 0, ?2, ?3, ?4, ?5) ON CONFLICT(name) DO UPDATE "
                     "SET admin_state = excluded.admin_state, admin_reason = "
                     "excluded.admin_reason, admin_by = excluded.admin_by, admin_t_us = "
                     "excluded.admin_t_us",
                     text, 4, num, 1);
}

int gsd_store_each_admin_node(gsd_store *s,
                              int (*fn)(void *ud, const char *name, const char *state,
                                        const char *reason, const char *by, gs_time t),
                              void *ud)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT name, admin_state, admin_reason, admin_by, admin_t_us FROM "
                           "nodes WHERE admin_state IS NOT NULL ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ret = fn(ud, (const char *)sqlite3_column_text(st, 0),
                 (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                 (const char *)sqlite3_column_text(st, 3), sqlite3_column_int64(st, 4));
        if (ret) break;
    }
    if (!ret && rc != SQLITE_DONE) ret = GS_EIO;
    sqlite3_finalize(st);
    return ret;
}

int gsd_store_add_node_event(gsd_store *s, const char *node, gs_time t, const char *type,
                             const char *reason, const char *data)
{
    const char *text[] = {node, type, reason && *reason ? reason : NULL, data};
    int64_t num[] = {t};
    return node_exec(s,
                     "INSERT INTO events(job_id, node, type, reason, data, t_us) "
                     "VALUES (NULL, ?1, ?2, ?3, ?4, ?5)",
                     text, 4, num, 1);
}

int gsd_reader_node_events(gsd_reader *r, const char *node, size_t max, gsd_event **ev, size_t *n)
{
    *ev = NULL;
    *n = 0;
    sqlite3_stmt *st;
    /* the newest 'max' (the index events_node), then oldest first */
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, t_us, type, reason FROM (SELECT seq, t_us, type, reason "
                           "FROM events WHERE node = ?1 ORDER BY seq DESC LIMIT ?2) ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)max);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            gsd_event *ne = realloc(*ev, cap * sizeof *ne);
            if (!ne) abort();
            *ev = ne;
        }
        gsd_event *e = &(*ev)[(*n)++];
        memset(e, 0, sizeof *e);
        e->seq = sqlite3_column_int64(st, 0);
        e->t = sqlite3_column_int64(st, 1);
        e->type = dupcol(st, 2);
        e->reason = dupcol(st, 3);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

/* accounting */

/* A final jobs row as an acct row (history and retention): the acct table's columns. */
#define ACCT_FROM_JOBS                                                                     \
    "id, array_id, array_task, user, vc, name, state, exit_code, reason, submit_us, "      \
    "first_start_us, end_us, executed_us, "                                                \
    "CASE WHEN task_gpus IS NULL THEN ntasks * gpus_per_task ELSE "                        \
    "(SELECT CAST(total(value) AS INTEGER) FROM json_each('[' || task_gpus || ']')) END, " \
    "coalesce(gpu_us, executed_us * ntasks * gpus_per_task), preemptions, "                \
    "coalesce(json_extract(elastic, '$.rescales'), 0), runs"
#define ACCT_COLS                                                                               \
    "id, array_id, array_task, user, vc, name, state, exit_code, reason, submit_us, start_us, " \
    "end_us, elapsed_us, gpus, gpu_us, preemptions, resizes, runs"
#define FINAL_STATES "('DONE', 'FAILED', 'CANCELLED', 'REJECTED')"

int gsd_store_job_owner(gsd_store *s, int64_t id, char **user, char **state)
{
    sqlite3_stmt *st;
    *user = *state = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT user, state FROM jobs WHERE id = ?1 UNION ALL "
                           "SELECT user, state FROM acct WHERE id = ?1 LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st), ret = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? GS_ENOENT : GS_EIO;
    if (!ret) {
        *user = dupcol(st, 0);
        *state = dupcol(st, 1);
    }
    sqlite3_finalize(st);
    return ret;
}

int gsd_store_purge(gsd_store *s, gs_time before, int64_t max, int64_t **ids, size_t *moved)
{
    static const char *const sql[] = {
        "SELECT id FROM jobs WHERE end_us IS NOT NULL AND end_us < ?1 AND state IN " FINAL_STATES
        " ORDER BY end_us, id LIMIT ?2",
        "INSERT OR REPLACE INTO acct(" ACCT_COLS ") SELECT " ACCT_FROM_JOBS
        " FROM jobs WHERE id = ?1 AND state IN " FINAL_STATES,
        "DELETE FROM events WHERE job_id = ?1",
        "DELETE FROM tasks WHERE job_id = ?1",
        "DELETE FROM jobs WHERE id = ?1 AND state IN " FINAL_STATES,
    };
    enum { NSQL = sizeof sql / sizeof *sql };
    sqlite3_stmt *st[NSQL] = {0};
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    int ret = 0;
    if (ids) *ids = NULL;
    *moved = 0;
    for (int i = 0; i < NSQL; i++)
        if (sqlite3_prepare_v2(s->db, sql[i], -1, &st[i], NULL) != SQLITE_OK) ret = GS_EIO;
    if (!ret) {
        sqlite3_bind_int64(st[0], 1, before);
        sqlite3_bind_int64(st[0], 2, max);
        int rc;
        while ((rc = sqlite3_step(st[0])) == SQLITE_ROW) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                int64_t *nv = realloc(v, cap * sizeof *nv);
                if (!nv) abort();
                v = nv;
            }
            v[n++] = sqlite3_column_int64(st[0], 0);
        }
        if (rc != SQLITE_DONE) ret = GS_EIO;
    }
    for (size_t k = 0; k < n && !ret; k++) {
        for (int i = 1; i < NSQL && !ret; i++) {
            sqlite3_bind_int64(st[i], 1, v[k]);
            if (sqlite3_step(st[i]) != SQLITE_DONE) ret = GS_EIO;
            sqlite3_reset(st[i]);
        }
    }
    for (int i = 0; i < NSQL; i++) sqlite3_finalize(st[i]);
    if (ret || !ids) {
        free(v);
        v = NULL;
    }
    if (!ret) *moved = n;
    if (ids) *ids = v;
    return ret;
}

int gsd_reader_history(gsd_reader *r, const gsd_histq *q, gsd_acctrow **rows, size_t *n,
                       int64_t *total)
{
    char w[768], sql[4096];
    size_t k = 0;
    *rows = NULL;
    *n = 0;
    *total = 0;
    k += (size_t)snprintf(w + k, sizeof w - k, " WHERE end_us IS NOT NULL");
    if (q->from) k += (size_t)snprintf(w + k, sizeof w - k, " AND end_us >= ?1");
    if (q->to) k += (size_t)snprintf(w + k, sizeof w - k, " AND end_us < ?2");
    if (q->user) k += (size_t)snprintf(w + k, sizeof w - k, " AND user = ?3");
    if (q->vc) k += (size_t)snprintf(w + k, sizeof w - k, " AND vc = ?4");
    if (q->job) k += (size_t)snprintf(w + k, sizeof w - k, " AND (id = ?5 OR array_id = ?5)");
    k += (size_t)snprintf(w + k, sizeof w - k, " AND state IN (");
    int first = 1;
    for (int i = 0; i < GS_JOB_NSTATES; i++) {
        if (!gs_job_state_final((gs_job_state)i) || (q->states && !(q->states & (1u << i))))
            continue;
        k += (size_t)snprintf(w + k, sizeof w - k, "%s'%s'", first ? "" : ", ",
                              gs_job_state_name((gs_job_state)i));
        first = 0;
    }
    if (first) k += (size_t)snprintf(w + k, sizeof w - k, "NULL");
    snprintf(w + k, sizeof w - k, ")");
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM jobs%s) + (SELECT count(*) FROM acct%s)", w, w);
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
#define BIND_HQ(st)                                                        \
    do {                                                                   \
        if (q->from) sqlite3_bind_int64(st, 1, q->from);                   \
        if (q->to) sqlite3_bind_int64(st, 2, q->to);                       \
        if (q->user) sqlite3_bind_text(st, 3, q->user, -1, SQLITE_STATIC); \
        if (q->vc) sqlite3_bind_text(st, 4, q->vc, -1, SQLITE_STATIC);     \
        if (q->job) sqlite3_bind_int64(st, 5, q->job);                     \
    } while (0)
    BIND_HQ(st);
    if (sqlite3_step(st) == SQLITE_ROW) *total = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    snprintf(sql, sizeof sql,
             "SELECT * FROM (SELECT " ACCT_FROM_JOBS " FROM jobs%s UNION ALL SELECT " ACCT_COLS
             " FROM acct%s) ORDER BY 12, 1 LIMIT ?6 OFFSET ?7",
             w, w);
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return GS_EIO;
    BIND_HQ(st);
#undef BIND_HQ
    sqlite3_bind_int64(st, 6, q->limit);
    sqlite3_bind_int64(st, 7, q->offset);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            gsd_acctrow *nr = realloc(*rows, cap * sizeof *nr);
            if (!nr) abort();
            *rows = nr;
        }
        gsd_acctrow *a = &(*rows)[(*n)++];
        a->id = sqlite3_column_int64(st, 0);
        a->array_id = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 1);
        a->array_task = sqlite3_column_int(st, 2);
        a->user = dupcol(st, 3);
        a->vc = dupcol(st, 4);
        a->name = dupcol(st, 5);
        a->state = dupcol(st, 6);
        a->exit_code = intcol(st, 7);
        a->reason = dupcol(st, 8);
        a->submit = intcol(st, 9);
        a->start = intcol(st, 10);
        a->end = intcol(st, 11);
        a->elapsed = sqlite3_column_int64(st, 12);
        a->gpus = sqlite3_column_int(st, 13);
        a->gpu_us = sqlite3_column_int64(st, 14);
        a->preemptions = sqlite3_column_int(st, 15);
        a->resizes = sqlite3_column_int(st, 16);
        a->runs = sqlite3_column_int(st, 17);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

void gsd_acctrows_free(gsd_acctrow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].user);
        free(rows[i].vc);
        free(rows[i].name);
        free(rows[i].state);
        free(rows[i].reason);
    }
    free(rows);
}

/* dashboard */
int gsd_store_add_sample(gsd_store *s, const gsd_sample *x, int64_t keep_from)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR REPLACE INTO samples(t_us, alloc_gpus, total_gpus, pending, "
                           "running, started, finished, vcs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                           "?8)",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, x->t);
    sqlite3_bind_int64(st, 2, x->alloc_gpus);
    sqlite3_bind_int64(st, 3, x->total_gpus);
    sqlite3_bind_int64(st, 4, x->pending);
    sqlite3_bind_int64(st, 5, x->running);
    sqlite3_bind_int64(st, 6, x->started);
    sqlite3_bind_int64(st, 7, x->finished);
    bind_opt_text(st, 8, x->vcs);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return GS_EIO;
    if (keep_from <= 0) return 0;
    if (sqlite3_prepare_v2(s->db, "DELETE FROM samples WHERE t_us < ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, keep_from);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

int gsd_reader_samples(gsd_reader *r, int64_t from, int64_t to, int64_t step, size_t max,
                       gsd_sample **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (step < 1) step = 1;
    sqlite3_stmt *st;
    /* one max() aggregate: SQLite takes the bare columns from the row holding it (the last
     * of the step) */
    if (sqlite3_prepare_v2(r->db,
                           "SELECT max(t_us), alloc_gpus, total_gpus, pending, running, "
                           "sum(started), sum(finished), vcs FROM samples WHERE t_us >= ?1 AND "
                           "t_us < ?2 GROUP BY (t_us - ?1) / ?3 ORDER BY 1 LIMIT ?4",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, from);
    sqlite3_bind_int64(st, 2, to);
    sqlite3_bind_int64(st, 3, step);
    sqlite3_bind_int64(st, 4, (int64_t)max);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            gsd_sample *nv = realloc(*out, cap * sizeof *nv);
            if (!nv) abort();
            *out = nv;
        }
        gsd_sample *x = &(*out)[(*n)++];
        x->t = sqlite3_column_int64(st, 0);
        x->alloc_gpus = sqlite3_column_int64(st, 1);
        x->total_gpus = sqlite3_column_int64(st, 2);
        x->pending = sqlite3_column_int64(st, 3);
        x->running = sqlite3_column_int64(st, 4);
        x->started = sqlite3_column_int64(st, 5);
        x->finished = sqlite3_column_int64(st, 6);
        x->vcs = dupcol(st, 7);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

void gsd_samples_free(gsd_sample *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].vcs);
    free(v);
}

/* job control */

int gsd_store_update_spec(gsd_store *s, const gsd_jobrow *r)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE jobs SET vc = ?2, name = ?3, priority = ?4, gpus_per_task = ?5, "
                           "spec = ?6 WHERE id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_text(st, 2, r->vc, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, r->priority);
    sqlite3_bind_int(st, 5, r->gpus_per_task);
    sqlite3_bind_text(st, 6, r->spec, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : GS_EIO;
}

/* arrays */
int gsd_reader_array_task(gsd_reader *r, int64_t array_id, int32_t task, int64_t *id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT id FROM jobs WHERE array_id = ?1 AND array_task = ?2 "
                           "ORDER BY id LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return GS_EIO;
    sqlite3_bind_int64(st, 1, array_id);
    sqlite3_bind_int(st, 2, task);
    int rc = sqlite3_step(st), ret = GS_ENOENT;
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        ret = 0;
    } else if (rc != SQLITE_DONE) {
        ret = GS_EIO;
    }
    sqlite3_finalize(st);
    return ret;
}
