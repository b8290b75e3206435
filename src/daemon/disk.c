/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disk.c - the daemon's defences against a full disk (scheduler thread,
 * start-up): where task logs go by default.
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
 * Invariant: the choice is a pure function of the database's contents, the
 * effective uid and the environment, so every restart finds the same
 * directory; the ID is written at most once per database.
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
