/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the daemon's durable state in SQLite (WAL).
 *
 * Tables: meta (key/value: next job id, ...), jobs (one row per job, the
 * canonical spec as JSON plus its current state and accounting), events
 * (one row per observer record or daemon action, per job), tasks (the
 * executor's opaque handle, exit code and GPUs per task of each run), samples (the
 * cluster over time for the dashboard's charts: samples.c writes, GET /v1/stats reads).
 * Schema version in PRAGMA user_version; a database from a newer gsched is
 * refused, an older one is upgraded in place, in one transaction, when it
 * is opened (version 1 -> 2: the tasks table's pid / start_ticks columns
 * become handle = "local:PID:STARTTICKS", the local executor's handle;
 * 2 -> 3: jobs.elastic, an elastic job's live state as JSON; 3 -> 4: jobs.task_gpus and
 * jobs.groups, the members of different sizes and the withinOneCell groups of issue 14).
 *
 * Writer: one connection, used only by the scheduler thread, inside
 * gsd_store_begin() / gsd_store_commit() (one transaction per scheduling
 * cycle: group commit).  Readers: gsd_store_reader() hands out read-only
 * connections (a small pool) to HTTP threads; WAL lets them read the last
 * committed state while the writer writes.
 *
 * A lock file (DB + "-lock", flock) keeps a second daemon off the same
 * database; the kernel drops it when the process dies, even on kill -9.
 *
 * Ownership: gsd_store_open() returns a store freed by gsd_store_close()
 * (NULL is fine).  Rows read into gsd_jobrow own their strings until
 * gsd_jobrow_release().
 */
#ifndef GSCHED_DAEMON_STORE_H
#define GSCHED_DAEMON_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "gsched/gsched.h"

typedef struct gsd_store gsd_store;
typedef struct gsd_reader gsd_reader;

#define GSD_SCHEMA_VERSION 6
#define GSD_NONE           INT64_MIN /* NULL integer columns */

typedef struct gsd_jobrow {
    int64_t id, grp;
    int task_index;
    char *user, *vc, *name;
    int priority, ntasks, gpus_per_task, gang;
    char *state; /* gs_job_state_name() */
    char *reason;
    int64_t exit_code;                            /* GSD_NONE when unknown */
    int64_t submit, first_start, last_start, end; /* us since the epoch; GSD_NONE = never */
    int64_t queued, executed;                     /* us */
    int preemptions, runs;
    char *alloc;     /* current GPUs "3,4,5" (global indices), NULL when none */
    char *placement; /* "n0:0-3 n1:0-3", the current or last run */
    char *stop;      /* stop in progress: "preempt", "cancel", "timeout", "failed", NULL */
    char *cancel_by; /* who asked to cancel */
    char *spec;      /* canonical JSON */
    char *idem_key, *idem_hash;
    char *elastic;    /* elastic jobs (issue 13): {"generation", "target_gpus", "resv", "kind",
                         "rescales", "failures", "drain_since_us", "hints_off", ...}; NULL else */
    char *task_gpus;  /* issue 14: GPUs of each task when they differ, "2,1"; NULL = ntasks x
                         gpus_per_task (written at insert, immutable) */
    char *groups;     /* issue 14: the withinOneCell groups as JSON, [{"lo": 0, "hi": 2, "parent":
                         -1, "within": "V100-NODE"}, ...] in pre-order; NULL = none */
    int64_t array_id; /* issue 16: the array this job is an element of (its first job's id),
                         0 = none (written at insert, immutable) */
    int array_task;   /* its index in the array (GSCHED_ARRAY_TASK_ID); 0 when not in one */
    int64_t gpu_us;   /* GPU time used so far, GPU x us (elastic-exact); GSD_NONE unknown */
} gsd_jobrow;

void gsd_jobrow_release(gsd_jobrow *r);

typedef struct gsd_event {
    int64_t seq, job_id, t;
    char *type, *reason;
} gsd_event;

typedef struct gsd_taskrow {
    int64_t job_id;
    int run, idx;
    char *handle;      /* the executor's name for the task ("local:PID:TICKS"); NULL unknown */
    int64_t exit_code; /* GSD_NONE when unknown */
    char *gpus;
} gsd_taskrow;

/* ---- writer (scheduler thread) -------------------------------------------------------------- */

/* sync_full: PRAGMA synchronous=FULL (else NORMAL).  GS_EIO/GS_ESTATE with a message. */
int gsd_store_open(const char *path, int sync_full, gsd_store **out, gs_diag *d);
void gsd_store_close(gsd_store *s);
const char *gsd_store_path(const gsd_store *s);
/* The schema version the database had before gsd_store_open upgraded it; 0 if it did not. */
int gsd_store_upgraded_from(const gsd_store *s);

int gsd_store_begin(gsd_store *s);
int gsd_store_commit(gsd_store *s);
void gsd_store_rollback(gsd_store *s);
/* 1 while a transaction is open (SQLite ends one by itself on SQLITE_FULL and some I/O
 * errors). */
int gsd_store_in_txn(const gsd_store *s);
/* 1 if the database was opened read-only because the disk was full when the daemon started
 * (no WAL index could be created; the WAL was empty): every write fails until
 * gsd_store_reopen succeeds.  Thread-safe. */
int gsd_store_immutable(gsd_store *s);
/* Make an immutable store writable (0; nothing to do when it is not immutable), or GS_EIO with
 * d set (still immutable).  Scheduler thread (the writer's owner). */
int gsd_store_reopen(gsd_store *s, gs_diag *d);
/* Message of the last SQLite error on the writer. */
const char *gsd_store_errmsg(const gsd_store *s);

int gsd_store_meta_get(gsd_store *s, const char *key, int64_t def, int64_t *out);
int gsd_store_meta_set(gsd_store *s, const char *key, int64_t v);
/* Every meta row whose key starts with prefix, in key order (fn's non-zero answer stops
 * and is returned), and deleting them: the cluster layout of recovery.c. */
int gsd_store_meta_each(gsd_store *s, const char *prefix,
                        int (*fn)(void *ud, const char *key, int64_t v), void *ud);
int gsd_store_meta_delete_prefix(gsd_store *s, const char *prefix);

/* Insert a new job (all columns). */
int gsd_store_insert_job(gsd_store *s, const gsd_jobrow *r);
/* Update the mutable columns of an existing job. */
int gsd_store_update_job(gsd_store *s, const gsd_jobrow *r);
int gsd_store_add_event(gsd_store *s, int64_t job_id, gs_time t, const char *type,
                        const char *reason);
int gsd_store_put_task(gsd_store *s, const gsd_taskrow *t);
/* Id of the job submitted by user with this idempotency key (0 + *id, or GS_ENOENT). */
int gsd_store_find_idem(gsd_store *s, const char *user, const char *key, int64_t *id, char **hash);

/* State and reason of a job (malloc'ed strings; reason may be NULL), or GS_ENOENT. */
int gsd_store_job_state(gsd_store *s, int64_t id, char **state, char **reason);

/* A job's hold as its last 'held' / 'released' event says (*held 1 / 0), or GS_ENOENT when it
 * has neither (then its spec's "hold" stands). */
int gsd_store_job_held(gsd_store *s, int64_t id, int *held);

/* Call fn for every job not in a final state, in id order.  fn returns 0 or an error (stops). */
int gsd_store_each_active(gsd_store *s, int (*fn)(void *ud, gsd_jobrow *r), void *ud);
/* A node's bad mark (bad 1: marked bad, 0: good again), its reason (may be NULL) and when. */
int gsd_store_put_node(gsd_store *s, const char *name, int bad, const char *reason, gs_time t);
/* Call fn for every node marked bad, by name.  fn returns 0 or an error (stops). */
int gsd_store_each_bad_node(gsd_store *s,
                            int (*fn)(void *ud, const char *name, const char *reason, gs_time t),
                            void *ud);
/* Counts of final jobs by state (index gs_job_state) for metrics at startup. */
int gsd_store_count_states(gsd_store *s, int64_t counts[GS_JOB_NSTATES]);

/* issue 16 lanes (writer calls): each adds its declarations under its own marker */
/* events (bus: rows since a seq) */
/*
 * An event row as the event stream sends it (GET /v1/events): the row, and for a job's event
 * the job's user, VC and state from its row (the state after the commit that wrote the
 * event).  job_id 0: a node event (node set) or a cluster event (neither).
 */
typedef struct gsd_evrow {
    int64_t seq, job_id, t;
    char *type, *reason, *node, *data; /* data: JSON text or NULL */
    char *user, *vc, *state;           /* job events; NULL otherwise */
} gsd_evrow;
void gsd_evrows_free(gsd_evrow *rows, size_t n);
/* Which rows a replay reads: after < seq <= upto; job > 0: that job's only; kinds: bits
 * GSD_EVK_* (0 = all); user: job events of that user only (node and cluster events too). */
enum { GSD_EVK_JOB = 1, GSD_EVK_NODE = 2, GSD_EVK_CLUSTER = 4 };
typedef struct gsd_evsel {
    int64_t after, upto, job;
    unsigned kinds;
    const char *user;
} gsd_evsel;
/* Rows after sel->after in seq order (at most max; the other fields of sel are ignored), on
 * the writer (the scheduler thread, after a commit). */
int gsd_store_events_after(gsd_store *s, int64_t after, size_t max, gsd_evrow **rows, size_t *n);
/* The highest event seq ever given (0 when none: sqlite_sequence survives deletes). */
int gsd_store_event_seq_max(gsd_store *s, int64_t *seq);

/* node administration (node events, admin state) */
/* A node's admin state (state "drain" / "down", NULL: none), its reason (may be NULL), who set
 * it and when; the bad mark is kept (a new row is good). */
int gsd_store_put_node_admin(gsd_store *s, const char *name, const char *state, const char *reason,
                             const char *by, gs_time t);
/* Call fn for every node with an admin state, by name.  fn returns 0 or an error (stops). */
int gsd_store_each_admin_node(gsd_store *s,
                              int (*fn)(void *ud, const char *name, const char *state,
                                        const char *reason, const char *by, gs_time t),
                              void *ud);
/* A node event: a row of events with job_id NULL and node = name; type "drain", "resume",
 * "down", "up", "bad", "good"; reason and data (a JSON text) may be NULL. */
int gsd_store_add_node_event(gsd_store *s, const char *node, gs_time t, const char *type,
                             const char *reason, const char *data);

/* accounting (acct rows, retention purge) */
/* Owner and state of job id, from jobs or (moved by retention) acct: 0, or GS_ENOENT.
 * Strings malloc'ed. */
int gsd_store_job_owner(gsd_store *s, int64_t id, char **user, char **state);
/* Retention: move up to max final jobs that ended before 'before' (us since the epoch), oldest
 * first, from jobs / events / tasks into one acct row each (inside the cycle's transaction:
 * the caller commits).  Active jobs are never touched.  *moved: how many; *ids (malloc'ed,
 * may be NULL) their ids, for the caller to forget. */
int gsd_store_purge(gsd_store *s, gs_time before, int64_t max, int64_t **ids, size_t *moved);

/* dashboard (samples) */
/* One row of the samples table: the cluster at t (us since the epoch); started / finished
 * count the job runs that started and the jobs that ended since the previous row; vcs is JSON
 * (gsd_sample_of, samples.c). */
typedef struct gsd_sample {
    int64_t t;
    int64_t alloc_gpus, total_gpus, pending, running, started, finished;
    char *vcs; /* read rows: owned (gsd_samples_free); written rows: borrowed */
} gsd_sample;
/* Insert a sample and delete the rows older than keep_from (us; 0 keeps all). */
int gsd_store_add_sample(gsd_store *s, const gsd_sample *x, int64_t keep_from);

/* job control */
/* An updated job (PATCH /v1/jobs/{id}): its vc, name, priority, gpus_per_task and spec columns
 * from r (inside the cycle's transaction). */
int gsd_store_update_spec(gsd_store *s, const gsd_jobrow *r);

/* arrays */

/* ---- readers (HTTP threads) ----------------------------------------------------------------- */

/* Borrow a read-only connection (blocks only to open one); give it back with _put. */
gsd_reader *gsd_store_reader(gsd_store *s);
void gsd_store_reader_put(gsd_store *s, gsd_reader *r);

int gsd_reader_job(gsd_reader *r, int64_t id, gsd_jobrow *out); /* GS_ENOENT if absent */
/*
 * List jobs in id order.  states: bit mask of (1 << gs_job_state), 0 = all;
 * user/vc NULL = any.  Fills up to 'limit' rows from 'offset'; *total gets
 * the number of matching rows.  rows is malloc'ed; free with gsd_jobrows_free.
 */
int gsd_reader_list(gsd_reader *r, unsigned states, const char *user, const char *vc,
                    int64_t offset, int64_t limit, gsd_jobrow **rows, size_t *n, int64_t *total);
void gsd_jobrows_free(gsd_jobrow *rows, size_t n);
int gsd_reader_events(gsd_reader *r, int64_t job_id, size_t max, gsd_event **ev, size_t *n);
void gsd_events_free(gsd_event *ev, size_t n);
int gsd_reader_tasks(gsd_reader *r, int64_t job_id, int run, gsd_taskrow **t, size_t *n);
void gsd_taskrows_free(gsd_taskrow *t, size_t n);
/* issue 16 lanes (reader calls): each adds its declarations under its own marker */
/* events (replay from a seq) */
/* Rows selected by sel in seq order, at most max (readers' side of gsd_store_events_after). */
int gsd_reader_events_sel(gsd_reader *r, const gsd_evsel *sel, size_t max, gsd_evrow **rows,
                          size_t *n);
/* The seq of the newest row selected by sel (ignoring sel->after) that has max - 1 newer ones
 * selected, i.e. where a tail of max rows starts; 0 when fewer than max rows are selected. */
int gsd_reader_events_tail(gsd_reader *r, const gsd_evsel *sel, size_t max, int64_t *seq);
/* The lowest seq still stored (0 when there is no event). */
int gsd_reader_event_seq_min(gsd_reader *r, int64_t *seq);

/* node administration: a node's last 'max' events, oldest first (gsd_event.job_id is 0) */
int gsd_reader_node_events(gsd_reader *r, const char *node, size_t max, gsd_event **ev, size_t *n);

/* accounting (history) */
/* One finished job as history answers it: a final row of jobs, or an acct row (retention).
 * start: first start (GSD_NONE never ran); elapsed: time holding GPUs, all runs (us); gpus: as
 * asked at submission; gpu_us: GPU x us held; resizes: an elastic job's rescales. */
typedef struct gsd_acctrow {
    int64_t id, array_id; /* array_id 0: not in an array */
    int array_task;
    char *user, *vc, *name, *state, *reason;
    int64_t exit_code; /* GSD_NONE when none */
    int64_t submit, start, end, elapsed;
    int gpus;
    int64_t gpu_us;
    int preemptions, resizes, runs;
} gsd_acctrow;
/* Filters (0 / NULL = any): end in [from, to), user, vc, states (bit mask of final states),
 * job (its id or its array's id); paging by offset / limit; ordered by end, then id. */
typedef struct gsd_histq {
    int64_t from, to;
    const char *user, *vc;
    unsigned states;
    int64_t job;
    int64_t offset, limit;
} gsd_histq;
int gsd_reader_history(gsd_reader *r, const gsd_histq *q, gsd_acctrow **rows, size_t *n,
                       int64_t *total);
void gsd_acctrows_free(gsd_acctrow *rows, size_t n);

/* dashboard (samples, cluster events) */
/* Samples with from <= t < to, one per step (us, >= 1) at most: of each step's rows the last
 * one's gauges (alloc_gpus, total_gpus, pending, running, vcs; t is its time) and the sums of
 * their counters (started, finished); at most max rows, in time order.  *out is malloc'ed:
 * free with gsd_samples_free. */
int gsd_reader_samples(gsd_reader *r, int64_t from, int64_t to, int64_t step, size_t max,
                       gsd_sample **out, size_t *n);
void gsd_samples_free(gsd_sample *v, size_t n);

/* arrays */
/* The job id of element 'task' of array array_id (its first part): 0, GS_ENOENT, GS_EIO. */
int gsd_reader_array_task(gsd_reader *r, int64_t array_id, int32_t task, int64_t *id);

#endif
