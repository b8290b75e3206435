/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon_schema_v5.h - the daemon's SQLite schema version 5, exactly as
 * gsched wrote it before issue 16 (events by AUTOINCREMENT seq with node and
 * cluster events, node admin state, arrays, GPU time, acct, samples).
 * Tests build old databases with it to check the in-place upgrade; never
 * change it.
 */
#ifndef GSCHED_TESTS_DAEMON_SCHEMA_V5_H
#define GSCHED_TESTS_DAEMON_SCHEMA_V5_H

static const char *const gsd_test_schema_v5 =
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
    "  elastic TEXT, task_gpus TEXT, groups TEXT) STRICT;\n"
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);\n"
    "CREATE UNIQUE INDEX IF NOT EXISTS jobs_idem ON jobs(user, idem_key)\n"
    "  WHERE idem_key IS NOT NULL;\n"
    "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,\n"
    "  t_us INTEGER NOT NULL, type TEXT NOT NULL, reason TEXT) STRICT;\n"
    "CREATE INDEX IF NOT EXISTS events_job ON events(job_id, seq);\n"
    "CREATE TABLE IF NOT EXISTS tasks(job_id INTEGER NOT NULL, run INTEGER NOT NULL,\n"
    "  idx INTEGER NOT NULL, handle TEXT, exit_code INTEGER, gpus TEXT,\n"
    "  PRIMARY KEY(job_id, run, idx)) STRICT, WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS nodes(name TEXT PRIMARY KEY, bad INTEGER NOT NULL,\n"
    "  reason TEXT, t_us INTEGER NOT NULL) STRICT;\n";

#endif
