/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ident.c - who a job runs as (see ident.h): the run-as decision at submit
 * and the account lookup at launch.
 *
 * Invariants: a multi-user daemon never decides from an unauthenticated
 * name, never picks uid 0 without --allow-root-jobs, and refuses a name
 * without an account instead of falling back to the daemon's user; a socket
 * peer's jobs run as its uid ("#UID"), and a peer's user name is one that
 * names its uid and no other account; only
 * reentrant lookups (getpwnam_r, getpwuid_r, getgrouplist), so HTTP threads
 * and the scheduler thread may call it at once.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "ident.h"

void gsd_runas_conf_init(gsd_runas_conf *c, uid_t euid, int single_user, int allow_root)
{
    c->switch_users = euid == 0 && !single_user;
    c->allow_root = allow_root != 0;
}

static char *dup_or_die(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p) abort();
    return p;
}

/* Fill u from a passwd entry, with the account's groups. */
static int fill(const struct passwd *pw, gsd_unix_user *u, char *msg, size_t cap)
{
    memset(u, 0, sizeof *u);
    int n = 32;
    gid_t *g = NULL;
    for (int tries = 0; tries < 8; tries++) {
        gid_t *ng = realloc(g, (size_t)n * sizeof *g);
        if (!ng) abort();
        g = ng;
        int want = n;
        if (getgrouplist(pw->pw_name, pw->pw_gid, g, &want) >= 0) {
            n = want;
            u->groups = g;
            u->ngroups = n;
            break;
        }
        n = want > n ? want : n * 2;
    }
    if (!u->groups) {
        free(g);
        snprintf(msg, cap, "cannot list the groups of Unix user '%s'", pw->pw_name);
        return GS_EIO;
    }
    u->name = dup_or_die(pw->pw_name);
    u->home = dup_or_die(pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/");
    u->shell = dup_or_die(pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
    u->uid = pw->pw_uid;
    u->gid = pw->pw_gid;
    return 0;
}

/* getpwnam_r (name) or getpwuid_r (!name) with a buffer that grows on ERANGE. */
static int lookup(const char *name, uid_t uid, gsd_unix_user *u, char *msg, size_t cap)
{
    long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t n = sz > 0 ? (size_t)sz : 4096;
    for (;;) {
        char *buf = malloc(n);
        if (!buf) abort();
        struct passwd pw, *pr = NULL;
        int e = name ? getpwnam_r(name, &pw, buf, n, &pr) : getpwuid_r(uid, &pw, buf, n, &pr);
        if (e == ERANGE && n < (1u << 20)) {
            free(buf);
            n *= 2;
            continue;
        }
        int rc;
        if (pr) {
            rc = fill(pr, u, msg, cap);
        } else if (e == 0 || e == ENOENT || e == ESRCH || e == EBADF || e == EPERM) {
            if (name)
                snprintf(msg, cap, "there is no Unix user '%s' on this machine", name);
            else
                snprintf(msg, cap, "uid %lld has no Unix account on this machine", (long long)uid);
            rc = GS_ENOENT;
        } else {
            snprintf(msg, cap, "cannot look up Unix user '%s': %s", name ? name : "?", strerror(e));
            rc = GS_EIO;
        }
        free(buf);
        return rc;
    }
}

int gsd_unix_user_lookup(const char *name, gsd_unix_user *u, char *msg, size_t cap)
{
    memset(u, 0, sizeof *u);
    if (!name || !*name) {
        snprintf(msg, cap, "no Unix user name");
        return GS_ENOENT;
    }
    if (name[0] == '#') {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(name + 1, &end, 10);
        if (!name[1] || *end || errno || v >= (unsigned long long)(uid_t)-1 || (uid_t)v != v) {
            snprintf(msg, cap, "'%s' is not a valid uid", name);
            return GS_ENOENT;
        }
        return lookup(NULL, (uid_t)v, u, msg, cap);
    }
    return lookup(name, 0, u, msg, cap);
}

int gsd_unix_user_by_uid(uid_t uid, gsd_unix_user *u, char *msg, size_t cap)
{
    memset(u, 0, sizeof *u);
    return lookup(NULL, uid, u, msg, cap);
}

void gsd_unix_user_release(gsd_unix_user *u)
{
    if (!u) return;
    free(u->name);
    free(u->home);
    free(u->shell);
    free(u->groups);
    memset(u, 0, sizeof *u);
}

int gsd_peer_name(uid_t uid, char out[GSD_USER_MAX], char *msg, size_t cap)
{
    gsd_unix_user u, back;
    char why[256];
    snprintf(out, GSD_USER_MAX, "uid%lu", (unsigned long)uid);
    if (gsd_unix_user_by_uid(uid, &u, why, sizeof why)) {
        snprintf(msg, cap, "%s", why);
        return -1;
    }
    int rc = -1;
    if (!gsd_user_name_ok(u.name)) {
        snprintf(msg, cap,
                 "the name of Unix user '%.64s' (uid %lu) is not a gsched user name (1-63 "
                 "letters, digits, _ - @ .)",
                 u.name, (unsigned long)uid);
    } else if (gsd_unix_user_lookup(u.name, &back, why, sizeof why) == 0) {
        if (back.uid == uid) {
            snprintf(out, GSD_USER_MAX, "%s", u.name);
            rc = 0;
        } else {
            snprintf(msg, cap,
                     "the Unix user name '%s' of uid %lu names uid %lu (two accounts share the "
                     "name)",
                     u.name, (unsigned long)uid, (unsigned long)back.uid);
        }
        gsd_unix_user_release(&back);
    } else {
        snprintf(msg, cap, "the name '%s' of uid %lu does not resolve back to it: %s", u.name,
                 (unsigned long)uid, why);
    }
    gsd_unix_user_release(&u);
    return rc;
}

int gsd_runas_decide(const gsd_runas_conf *c, int authn, int64_t peer_uid, const char *user,
                     const char *mapped, char out[GSD_USER_MAX], char *msg, size_t cap)
{
    gsd_unix_user u;
    char why[256];
    if (!c->switch_users) {
        /* single-user: the daemon's own account, whoever asks */
        if (gsd_unix_user_by_uid(geteuid(), &u, why, sizeof why) == 0) {
            snprintf(out, GSD_USER_MAX, "%s", u.name);
            gsd_unix_user_release(&u);
        } else {
            snprintf(out, GSD_USER_MAX, "%lld", (long long)geteuid());
        }
        return 0;
    }
    if (authn != GSD_AUTHN_TOKEN && authn != GSD_AUTHN_PEER) {
        snprintf(msg, cap,
                 "this daemon runs as root and runs each job as its owner's Unix account, but "
                 "the user name of this request is not authenticated (X-Gsched-User): use a "
                 "bearer token (serve --tokens, then --token or GSCHED_TOKEN) or the daemon's "
                 "Unix socket; or start the daemon with --single-user to run every job as "
                 "root");
        return 403;
    }
    if (authn == GSD_AUTHN_PEER) {
        /* the kernel named the uid: the job runs as that uid, whatever its name */
        if (peer_uid < 0 || gsd_unix_user_by_uid((uid_t)peer_uid, &u, why, sizeof why)) {
            snprintf(msg, cap, "jobs of '%s' would run as its uid %lld, and %s", user ? user : "",
                     (long long)peer_uid, peer_uid < 0 ? "that uid is unknown" : why);
            return 403;
        }
        if (u.uid == 0 && !c->allow_root) {
            snprintf(msg, cap,
                     "jobs of '%s' would run as root (uid 0): refused; the operator may allow "
                     "it with 'gsched serve --allow-root-jobs'",
                     user ? user : "");
            gsd_unix_user_release(&u);
            return 403;
        }
        snprintf(out, GSD_USER_MAX, "#%lu", (unsigned long)u.uid);
        gsd_unix_user_release(&u);
        return 0;
    }
    const char *acct = mapped && *mapped ? mapped : user;
    int rc = gsd_unix_user_lookup(acct, &u, why, sizeof why);
    if (rc) {
        snprintf(msg, cap,
                 "jobs of gsched user '%s' run as the Unix user %s, and %s: ask the operator to "
                 "create it or to name another one in the tokens file (docs/daemon.md, Security)",
                 user ? user : "", acct == user ? "of the same name" : "the tokens file names",
                 why);
        return 403;
    }
    if (u.uid == 0 && !c->allow_root) {
        snprintf(msg, cap,
                 "jobs of '%s' would run as root (uid 0): refused; the operator may allow it "
                 "with 'gsched serve --allow-root-jobs'",
                 user);
        gsd_unix_user_release(&u);
        return 403;
    }
    snprintf(out, GSD_USER_MAX, "%s", u.name);
    gsd_unix_user_release(&u);
    return 0;
}

int gsd_launch_account(const char *run_as, const char *user, int switch_users, int allow_root,
                       gsd_unix_user *u, char *msg, size_t cap)
{
    char why[256];
    if (!switch_users) {
        if (gsd_unix_user_by_uid(geteuid(), u, why, sizeof why)) {
            memset(u, 0, sizeof *u);
            u->uid = geteuid();
            u->gid = getegid();
        }
        return 0;
    }
    const char *who = run_as ? run_as : user;
    if (gsd_unix_user_lookup(who, u, why, sizeof why)) {
        snprintf(msg, cap, "cannot run the job as Unix user '%s': %s", who ? who : "", why);
        return -1;
    }
    if (u->uid == 0 && !allow_root) {
        snprintf(msg, cap,
                 "refusing to run a job as root (Unix user '%s', uid 0): the operator did not "
                 "pass 'gsched serve --allow-root-jobs'",
                 u->name);
        gsd_unix_user_release(u);
        return -1;
    }
    return 0;
}
