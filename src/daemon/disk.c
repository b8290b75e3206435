/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disk.c - the daemon's defences against a full disk (scheduler thread,
 * start-up and every cycle): where task logs go by default, and the read-only mode the
 * daemon enters when it cannot write its database.
 *
 * Task logs are written by jobs (through the shim, capped by --log-cap) and
 * must not share the database's directory: a job filling its log must not be
 * what stops the database from committing, and an operator must be able to
 * put logs on their own filesystem.  Without --log-dir they go to
 *   root:    /var/log/gsched/NAME-ID
 *   others:  $XDG_STATE_HOME/gsched/logs/NAME-ID (default ~/.local/state/...)
 * where NAME is the database's file name without ".db" and ID a random
 * 64-bit number kept in the database (meta "log_dir_id"), so two daemons
 * never share a log directory (not even a new database created where an
 * old one was) and a database that is moved keeps finding its logs.
 *
 * Read-only mode: a commit that fails (commit.c) leaves its changes pending
 * and calls gsd_enter_read_only.  From then on each cycle only answers
 * requests (changes 503 with the reason, dry runs as usual) and, every 2 s,
 * retries: reopen a database opened read-only at start (store.c), write every
 * pending change again, COMMIT.  On success the daemon publishes, answers and
 * acts as the failed cycle would have, and schedules again.  The failed
 * cycle's requests are answered 503 at the first failed retry (their changes
 * take effect only if a retry commits them).
 *
 * Invariants: the log directory is a pure function of the database's
 * contents, the effective uid and the environment, so every restart finds the
 * same directory; its ID is written at most once per database.  While
 * read-only nothing is published, started, signalled or answered positively
 * (record-commit-act); the engine does not advance; HTTP threads see the mode
 * through gsd.read_only and gsd_read_only_state only.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gsd_sched.h"

#define LOG_DIR_ID_KEY "log_dir_id"

static int64_t random_id(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) v = 0;
        close(fd);
    }
    if (!v) v = (uint64_t)gsd_wall_now() ^ ((uint64_t)getpid() << 32);
    v &= INT64_MAX;
    return v ? (int64_t)v : 1;
}

/* FNV-1a of the database's absolute path: the ID when it cannot be stored (disk full). */
static int64_t path_id(const char *db)
{
    char *abs = realpath(db, NULL);
    const char *p = abs ? abs : db;
    uint64_t h = 1469598103934665603ULL;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    free(abs);
    h &= INT64_MAX;
    return h ? (int64_t)h : 1;
}

/* The per-user base directory, or NULL (no home directory). */
static char *base_dir(void)
{
    char buf[4096];
    if (geteuid() == 0) return gsd_xstrdup("/var/log/gsched");
    const char *xdg = getenv("XDG_STATE_HOME");
    if (xdg && xdg[0] == '/') {
        snprintf(buf, sizeof buf, "%s/gsched/logs", xdg);
        return gsd_xstrdup(buf);
    }
    const char *home = getenv("HOME");
    struct passwd pw, *pr = NULL;
    char pwbuf[4096];
    if ((!home || home[0] != '/') && getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &pr) == 0 &&
        pr)
        home = pr->pw_dir;
    if (!home || home[0] != '/') return NULL;
    snprintf(buf, sizeof buf, "%s/.local/state/gsched/logs", home);
    return gsd_xstrdup(buf);
}

char *gsd_default_log_dir(gsd_store *st, const char *db, gs_diag *d)
{
    int64_t id = 0;
    gsd_store_meta_get(st, LOG_DIR_ID_KEY, 0, &id);
    if (id <= 0) {
        id = random_id();
        if (gsd_store_begin(st) || gsd_store_meta_set(st, LOG_DIR_ID_KEY, id) ||
            gsd_store_commit(st)) {
            gsd_store_rollback(st);
            id = path_id(db);
            gsd_log("cannot record the log directory's id in the database (%s): using one made "
                    "from its path",
                    gsd_store_errmsg(st));
        }
    }
    char *base = base_dir();
    if (!base) {
        gs_diag_set(d, GS_EINVAL, 0, 0,
                    "no default log directory: no home directory for uid %ld; give --log-dir DIR",
                    (long)geteuid());
        return NULL;
    }
    /* NAME: the database's file name without ".db", in safe characters */
    const char *slash = strrchr(db, '/');
    const char *name = slash ? slash + 1 : db;
    char nm[65];
    size_t n = 0, len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, ".db")) len -= 3;
    for (size_t i = 0; i < len && n < sizeof nm - 1; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || (c == '.' && n > 0);
        nm[n++] = ok ? c : '_';
    }
    nm[n] = '\0';
    size_t cap = strlen(base) + sizeof nm + 24;
    char *out = gsd_xrealloc(NULL, cap);
    snprintf(out, cap, "%s/%s-%016llx", base, n ? nm : "gsched", (unsigned long long)id);
    free(base);
    return out;
}

/* ---- read-only mode ------------------------------------------------------------------------- */

#define RO_RETRY (2 * GS_SEC)   /* retry the commit this often */
#define RO_RELOG (300 * GS_SEC) /* say "still read-only" this often */

int gsd_read_only_state(gsd *g, gs_time *since, char *why, size_t cap)
{
    if (!atomic_load(&g->read_only)) return 0;
    pthread_mutex_lock(&g->qmu);
    if (since) *since = g->ro_since;
    if (why && cap) snprintf(why, cap, "%s", g->ro_why);
    pthread_mutex_unlock(&g->qmu);
    return 1;
}

void gsd_enter_read_only(gsd_sched *g, const char *why)
{
    gs_time now = gsd_wall_now();
    g->ro_retry_at = now + RO_RETRY;
    pthread_mutex_lock(&g->sh.qmu);
    snprintf(g->sh.ro_why, sizeof g->sh.ro_why, "%s", why && *why ? why : "unknown error");
    if (!g->read_only) g->sh.ro_since = now;
    pthread_mutex_unlock(&g->sh.qmu);
    if (g->read_only) return; /* a retry failed: stay */
    g->read_only = 1;
    g->ro_since = g->ro_logged_at = now;
    atomic_store(&g->sh.read_only, 1);
    gsd_log("database %s cannot be written (%s): read-only mode: submits and cancels get 503, "
            "reads go on, nothing new starts, running tasks keep running; retrying every %llds",
            g->sh.o.db, why && *why ? why : "unknown error", (long long)(RO_RETRY / GS_SEC));
}

static void leave_read_only(gsd_sched *g, gs_time now)
{
    g->read_only = 0;
    atomic_store(&g->sh.read_only, 0);
    gsd_log("database %s writable again after %.0fs: leaving read-only mode", g->sh.o.db,
            gs_time_to_sec(now - g->ro_since));
}

gs_time gsd_read_only_cycle(gsd_sched *g, gs_time now)
{
    gsd_cmd *cmds = gsd_take_commands(g);
    char since[40], why[256];
    gsd_time_str(g->ro_since, since, sizeof since);
    gsd_read_only_state(&g->sh, NULL, why, sizeof why);
    for (gsd_cmd *c = cmds; c; c = c->next) {
        if (c->kind == GSD_CMD_DRYRUN) { /* changes nothing */
            gsd_do_dryrun(g, c);
            continue;
        }
        gsd_cmd_fail(c, 503, GS_EIO,
                     "the daemon is read-only since %s: its database cannot be written (%s); "
                     "nothing can be submitted or cancelled until it can (running jobs go on); "
                     "retry later",
                     since, why);
    }
    gsd_answer(g, cmds);
    if (now < g->ro_retry_at) return g->ro_retry_at;
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (gsd_store_reopen(g->sh.store, &d) == 0 && gsd_store_begin(g->sh.store) == 0 &&
        gsd_commit(g) == 0) {
        /* what the failed cycle did not do: publish, answer, act (in cycle order) */
        leave_read_only(g, now);
        g->cycle_no++;
        gsd_publish(g, now);
        gsd_cmd *held = g->held;
        g->held = NULL;
        gsd_answer(g, held);
        gsd_act(g, now);
        return now; /* a normal cycle next */
    }
    /* the failed cycle's requests: their changes are pending, not durable - say so now rather
     * than keep the clients waiting (they take effect if a retry commits them) */
    for (gsd_cmd *c = g->held; c; c = c->next) {
        if (c->result) json_decref(c->result);
        c->result = NULL;
        gsd_cmd_fail(c, 503, GS_EIO,
                     "the daemon could not record this request: its database cannot be written "
                     "(%s); it takes effect only if the database becomes writable before the "
                     "daemon stops - retry with the same Idempotency-Key to find out",
                     why);
    }
    gsd_answer(g, g->held);
    g->held = NULL;
    if (now - g->ro_logged_at >= RO_RELOG) {
        g->ro_logged_at = now;
        gsd_log("still read-only since %s: %s", since, why);
    }
    return g->ro_retry_at;
}

void gsd_read_only_shutdown(gsd_sched *g)
{
    if (!g->read_only) return;
    size_t n = 0;
    for (gsd_cmd *c = g->held; c; c = c->next, n++) {
        if (c->result) json_decref(c->result);
        c->result = NULL;
        gsd_cmd_fail(c, 503, GS_EIO, "the daemon stopped before its database could be written");
    }
    gsd_answer(g, g->held);
    g->held = NULL;
    gsd_log("stopping in read-only mode: %zu record(s) and %zu job row(s) not committed are "
            "dropped (%zu request(s) answered 503); the next start recovers from the database",
            g->nrecs, g->ndirty + g->npins, n);
}
