/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * local.c - the daemon's Unix domain socket: its default path (shared by
 * `gsched serve` and the CLI), creating the listening socket, and the peer
 * credentials (SO_PEERCRED) that identify a local client.
 *
 * Default paths (docs/daemon.md, "Listening"):
 *   root daemon              /run/gsched/gsched.sock   mode 0666 when jobs run as their
 *                                                      owners (every local user may
 *                                                      connect; SO_PEERCRED says who),
 *                                                      0600 with --single-user
 *   other daemon             $XDG_RUNTIME_DIR/gsched.sock, or /tmp/gsched-UID/gsched.sock
 *                            when XDG_RUNTIME_DIR is unset; mode 0600 (single user)
 * (the mode is chosen by the caller, http.c)
 *   CLI of root              /run/gsched/gsched.sock
 *   CLI of another user      its own per-user socket when one exists, else the system one
 *                            (so a user finds a root daemon without any option); the
 *                            client falls back to the system one too when the per-user one
 *                            refuses connections (a stale socket of a killed daemon)
 *
 * The CLI trusts a socket only where no other user could have put it
 * (gsd_socket_trusted): the socket and its directory are owned by the
 * caller's uid or by root, and the directory is not writable by group or
 * others, so nobody can plant a listening socket at a path the CLI will use
 * (it would receive the CLI's requests and their job environments).
 *
 * Invariants: a socket path is never taken over from a daemon that still
 * answers on it (connect() succeeds -> refused); the socket appears at its
 * path only once it listens, with its final mode (bound under a temporary
 * name, chmod, listen, then rename()d into place), so a client that sees
 * the file can connect.  A per-user directory this code creates under /tmp
 * is 0700; an existing one must be a real directory owned by the user and
 * not writable by others (no symlink or squatting tricks).
 */
#define _GNU_SOURCE /* struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gsd.h"

#define SYSTEM_DIR "/run/gsched"

static int user_path(char *buf, size_t cap, char *dir, size_t dcap)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    int n;
    if (x && x[0] == '/') {
        snprintf(dir, dcap, "%s", x);
        n = snprintf(buf, cap, "%s/gsched.sock", x);
    } else {
        snprintf(dir, dcap, "/tmp/gsched-%lu", (unsigned long)geteuid());
        n = snprintf(buf, cap, "/tmp/gsched-%lu/gsched.sock", (unsigned long)geteuid());
    }
    return n > 0 && (size_t)n < cap ? 0 : GS_ERANGE;
}

int gsd_default_socket(int for_server, char *buf, size_t cap)
{
    char dir[PATH_MAX];
    int n;
    if (geteuid() == 0) {
        n = snprintf(buf, cap, "%s/gsched.sock", SYSTEM_DIR);
        return n > 0 && (size_t)n < cap ? 0 : GS_ERANGE;
    }
    if (user_path(buf, cap, dir, sizeof dir)) return GS_ERANGE;
    if (for_server) return 0;
    struct stat st;
    if (lstat(buf, &st) == 0) return 0; /* gsd_socket_trusted judges what it is */
    return gsd_system_socket(buf, cap);
}

int gsd_system_socket(char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/gsched.sock", SYSTEM_DIR);
    return n > 0 && (size_t)n < cap ? 0 : GS_ERANGE;
}

int gsd_socket_trusted(const char *path, char *msg, size_t cap)
{
    uid_t me = geteuid();
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s", path);
    if (n < 0 || (size_t)n >= sizeof dir) {
        snprintf(msg, cap, "the socket path %s is too long", path);
        return GS_EPERM;
    }
    char *sl = strrchr(dir, '/');
    if (!sl)
        snprintf(dir, sizeof dir, ".");
    else if (sl == dir)
        dir[1] = '\0';
    else
        *sl = '\0';
    struct stat st;
    if (lstat(dir, &st) != 0) return 0; /* nothing there: connecting fails, nothing is sent */
    if (!S_ISDIR(st.st_mode) || (st.st_uid != me && st.st_uid != 0) || (st.st_mode & 0022)) {
        snprintf(msg, cap,
                 "refusing to use the socket %s: its directory %s is %s (the CLI uses a socket "
                 "only in a directory owned by you or root and writable by nobody else, so no "
                 "other user can plant one there); remove it, or name a socket with --server "
                 "unix:PATH",
                 path, dir,
                 !S_ISDIR(st.st_mode)                  ? "not a directory"
                 : (st.st_uid != me && st.st_uid != 0) ? "owned by another user"
                                                       : "writable by group or others");
        return GS_EPERM;
    }
    if (lstat(path, &st) != 0) return 0;
    if (!S_ISSOCK(st.st_mode) || (st.st_uid != me && st.st_uid != 0)) {
        snprintf(msg, cap,
                 "refusing to use the socket %s: it is %s (a daemon's socket belongs to you or "
                 "root); remove it, or name a socket with --server unix:PATH",
                 path, !S_ISSOCK(st.st_mode) ? "not a socket" : "owned by another user");
        return GS_EPERM;
    }
    return 0;
}

/* The directory of a default socket: created when missing (0755 for the system one, which
 * every user must traverse; 0700 for a per-user one), checked when present. */
static int prepare_dir(const char *path, gs_diag *d)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    if (!sl || sl == dir) return 0;
    *sl = '\0';
    int system = !strcmp(dir, SYSTEM_DIR);
    int mine = !strncmp(dir, "/tmp/gsched-", 12);
    if (!system && !mine) return 0; /* an operator's or XDG directory: theirs to prepare */
    if (mkdir(dir, system ? 0755 : 0700) == 0) {
        if (chmod(dir, system ? 0755 : 0700) != 0)
            return gs_diag_set(d, GS_EIO, 0, 0, "cannot chmod %s: %s", dir, strerror(errno));
        return 0;
    }
    if (errno != EEXIST)
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot create %s: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 0022))
        return gs_diag_set(d, GS_EPERM, 0, 0,
                           "%s is not a directory owned by uid %lu and writable only by it: "
                           "refusing to put the socket there (remove it, or give --socket PATH)",
                           dir, (unsigned long)geteuid());
    return 0;
}

int gsd_local_listen(const char *path, int world, gs_diag *d)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    char tmp[sizeof sa.sun_path];
    if (!*path || strlen(path) + 16 >= sizeof sa.sun_path)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--socket: path '%s' is empty or longer than %zu",
                           path, sizeof sa.sun_path - 17);
    if (prepare_dir(path, d)) return -1;
    /* a daemon that still answers there keeps its socket */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return gs_diag_set(d, GS_EIO, 0, 0, "socket: %s", strerror(errno));
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        close(fd);
        return gs_diag_set(d, GS_ESTATE, 0, 0,
                           "another daemon is serving on %s: stop it first, or give --socket PATH",
                           path);
    }
    close(fd);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return gs_diag_set(d, GS_EIO, 0, 0, "socket: %s", strerror(errno));
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    unlink(tmp);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", tmp);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot bind the socket %s: %s", path, strerror(e));
    }
    if (chmod(tmp, world ? 0666 : 0600) != 0 || listen(fd, 128) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        close(fd);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot listen on the socket %s: %s", path,
                           strerror(e));
    }
    return fd;
}

int gsd_peer_uid(int fd, uid_t *uid)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof cr) return -1;
    *uid = cr.uid;
    return 0;
}
