/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ident.h - who a job runs as: the one place that turns the identity of a
 * request (a gsched user name and how it was established) into the Unix
 * account the job's tasks run as, and the account lookup the executor does
 * at launch.
 *
 * Modes (gsd_runas_conf):
 *  - multi-user (the daemon runs as root and was not started with
 *    --single-user): every job runs as its owner's Unix account.  The
 *    owner must be authenticated (a bearer token, or the peer credentials
 *    of the Unix socket).  A socket peer's jobs run as the peer's uid
 *    itself (stored as run_as "#UID", never looked up by name again, so no
 *    other account of the same or a similar name can stand in).  A token
 *    user's account is named by the rule: the gsched user name is the Unix
 *    user name, unless the tokens file names another account for that user
 *    (its optional 7th field, gsd_auth_unix_user).  A claimed identity
 * (X-Gsched-User over TCP without tokens) or an anonymous one is refused, and so is an account with
 * uid 0 unless the operator passed --allow-root-jobs.
 *  - single-user (the daemon is not root, or --single-user): the daemon
 *    cannot (or must not) switch users; every job runs as the daemon's own
 *    user, whoever submitted it.
 *
 * Invariants: the decision is made once, at submit, and stored with the job
 * (gsd_spec.run_as); the executor resolves that name again at launch
 * (the account may be gone by then: the job fails, it is not requeued) and
 * re-checks uid 0 there.  Thread-safe: every function here uses only the
 * reentrant passwd/group calls and its arguments.
 */
#ifndef GSCHED_DAEMON_IDENT_H
#define GSCHED_DAEMON_IDENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"

/* How a request's user was established.  PEER and TOKEN are authenticated (the kernel's
 * SO_PEERCRED on the Unix socket; a verified bearer token); CLAIMED is the X-Gsched-User
 * header of a TCP daemon without tokens, which anyone can set; ANON: none. */
enum { GSD_AUTHN_ANON = 0, GSD_AUTHN_CLAIMED, GSD_AUTHN_TOKEN, GSD_AUTHN_PEER };

typedef struct gsd_runas_conf {
    int switch_users; /* 1: jobs run as their owners' accounts (multi-user mode) */
    int allow_root;   /* --allow-root-jobs: an owner whose account is uid 0 may run jobs */
} gsd_runas_conf;

/* The mode of a daemon running with effective uid 'euid' and these options. */
void gsd_runas_conf_init(gsd_runas_conf *c, uid_t euid, int single_user, int allow_root);

/*
 * The Unix account a job owned by gsched user 'user' runs as, for a request
 * whose identity was established as 'authn' (GSD_AUTHN_*); 'peer_uid' is the
 * socket peer's uid (GSD_AUTHN_PEER; -1 otherwise); 'mapped' is the account
 * the tokens file names for user (NULL: the rule, user itself).  0 with out
 * set (a socket peer's "#UID"; a token user's account name; in single-user
 * mode the daemon's own user), or 403 (an HTTP status) with a message in msg
 * saying why and what to do.
 */
int gsd_runas_decide(const gsd_runas_conf *c, int authn, int64_t peer_uid, const char *user,
                     const char *mapped, char out[GSD_USER_MAX], char *msg, size_t cap);

/*
 * The gsched user name of a socket peer's uid: its account name when that is
 * a usable gsched user name (gsd_user_name_ok) and names this uid and no
 * other (getpwnam_r of it gives the same uid back), so a name never stands
 * for two accounts.  0 with out set, or -1 with out set to "uidN" and a
 * message in msg saying why the account cannot be a gsched user.
 */
int gsd_peer_name(uid_t uid, char out[GSD_USER_MAX], char *msg, size_t cap);

/* A Unix account resolved at launch. */
typedef struct gsd_unix_user {
    char *name, *home, *shell;
    uid_t uid;
    gid_t gid;
    gid_t *groups; /* supplementary groups (getgrouplist), the primary one included */
    int ngroups;
} gsd_unix_user;

/* Look an account up by name (getpwnam_r, getgrouplist); "#UID" (a run_as of a socket peer's
 * job) looks the uid up instead.  0, or GS_ENOENT (no such account) / GS_EIO (the lookup
 * failed) with a message in msg. */
int gsd_unix_user_lookup(const char *name, gsd_unix_user *u, char *msg, size_t cap);
/* The same by uid. */
int gsd_unix_user_by_uid(uid_t uid, gsd_unix_user *u, char *msg, size_t cap);
void gsd_unix_user_release(gsd_unix_user *u);

/*
 * The account a job's tasks run as, for every executor (one rule): on a multi-user daemon
 * (switch_users) the job's own - run_as ("#UID" of a socket peer, or an account name), else
 * its user - refused when it is gone, or is root without allow_root (--allow-root-jobs);
 * otherwise the daemon's own account (for HOME...; a daemon uid without an account gets
 * just its uid and gid).  0, or -1 with the reason in msg (the tasks fail with it).
 */
int gsd_launch_account(const char *run_as, const char *user, int switch_users, int allow_root,
                       gsd_unix_user *u, char *msg, size_t cap);

#endif
