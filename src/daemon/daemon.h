/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h - what the gsched program needs from the live scheduler library
 * (gsched_daemon): run the daemon, the task shim, tokens-file lines, the job
 * spec format (spec.h: the CLI validates a spec before sending it), the HTTP
 * client the CLI commands use, NVML's GPU readings (`gsched gpus`) and the CUDA
 * driver's process checkpoint API (cudackpt.h, for `gsched cuda-ckpt`).
 * The CLI includes nothing else from src/daemon (tests/e2e/daemon_includes.sh
 * checks it).
 *
 * The daemon (gsd_serve) runs one scheduler thread that owns every piece of
 * mutable state (engine, cluster, executor, database writer); HTTP threads
 * parse and validate requests, hand commands to the scheduler thread and
 * read from an immutable snapshot published after each scheduling cycle
 * (and from committed database rows).  See docs/daemon.md.
 *
 * Ownership: gsd_opts borrows every string and the params; they must stay
 * valid during gsd_serve().  Client responses own their body until
 * gsd_resp_release().
 */
#ifndef GSCHED_DAEMON_H
#define GSCHED_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "cudackpt.h"
#include "gsched/gsched.h"
#include "spec.h"

#define GSD_DEFAULT_DB      "gsched.db"
#define GSD_DEFAULT_LOG_CAP (1LL << 30) /* serve --log-cap: 1 GiB per task log */

/*
 * The default Unix socket (local.c): for the daemon (for_server 1) /run/gsched/gsched.sock
 * when running as root, else $XDG_RUNTIME_DIR/gsched.sock or /tmp/gsched-UID/gsched.sock;
 * for the CLI the same, except that a non-root user without a per-user socket gets the
 * system one (a root daemon's).  0, or GS_ERANGE when buf is too small.
 */
int gsd_default_socket(int for_server, char *buf, size_t cap);
/* The system socket (a root daemon's), /run/gsched/gsched.sock.  0, or GS_ERANGE. */
int gsd_system_socket(char *buf, size_t cap);
/*
 * May the CLI use the socket at path?  Only when no other user could have put it there: the
 * socket (when present) and its directory are owned by the caller's euid or root, and the
 * directory is not writable by group or others.  0 (also when absent: connecting then fails,
 * nothing is sent), or GS_EPERM with a message in msg saying what is wrong.
 */
int gsd_socket_trusted(const char *path, char *msg, size_t cap);

typedef struct gsd_opts {
    const char *cluster;   /* cluster spec (see gs_cluster_load); NULL = discover with NVML */
    const char *db;        /* SQLite file (default gsched.db) */
    const char *state_dir; /* run files (default: DB path with ".db" -> ".d") */
    const char *log_dir;   /* task logs (default: outside the database's directory, disk.c) */
    const char *socket;    /* Unix socket path (the API for local users), or NULL */
    const char *listen;    /* TCP ADDR:PORT, or NULL; port 0 = any free port.  Needs tokens
                            * or insecure_tcp; a non-loopback address always needs tokens */
    int insecure_tcp;      /* TCP without tokens: X-Gsched-User is trusted (loopback only) */
    const char *policy;    /* default fifo */
    const char *executor;  /* executor backend (exec.h registry); default "local" */
    const char *tokens;    /* tokens file (TCP clients); NULL = none */
    const char *port_file; /* write the bound TCP port here once ready (tests) */
    const char *log_file;  /* the daemon's log (appended; reopened on SIGHUP); NULL = stderr */
    const char *self_exe;  /* the task shim's binary; NULL = /proc/self/exe, the daemon's own
                            * running one (a path is for tests and embedders: whoever can
                            * replace that file runs code as the daemon's user) */
    /* --pass-env: names of daemon environment variables every job gets (the operator's
     * allow-list; the rest of the daemon's environment never reaches a job). */
    const char *const *pass_env;
    size_t npass_env;
    /* Who jobs run as (ident.h).  A daemon running as root runs each job as its owner's Unix
     * account unless single_user; allow_root_jobs lets an owner whose account is uid 0 run
     * jobs (as root).  A daemon not running as root is always single-user. */
    int single_user;
    int allow_root_jobs;
    /* --cgroup: process tracking of the local executor: "auto" (default: a cgroup v2 per task
     * when one can be made here, otherwise the fallback), "off", or a cgroup2 directory. */
    const char *cgroup;
    gs_params *params; /* --set key=value (engine, policy, costs) */
    gs_place_mode placement;
    int placement_set;
    gs_time grace;            /* default SIGTERM -> SIGKILL grace period (30 s) */
    gs_time default_duration; /* work estimate of jobs without duration/time limit (1 h) */
    int sync_full;            /* PRAGMA synchronous=FULL (1, default) or NORMAL (0) */
    size_t max_body;          /* request body limit in bytes (1 MiB) */
    int64_t log_cap;          /* bytes a task's log may hold, 0 = no cap (GSD_DEFAULT_LOG_CAP) */
    unsigned max_connections; /* concurrent HTTP connections per listener (256) */
    unsigned max_conn_per_client;  /* per client address / socket uid (64; conn.c) */
    double header_timeout;         /* seconds to send a complete request head (5) */
    unsigned idle_timeout;         /* seconds of silence before a connection is closed (30) */
    unsigned max_pending_per_user; /* pending submissions per user, 0 = unlimited */
    double submit_rate;            /* submits per second per user, 0 = unlimited */
    int verbose;                   /* 1: log every request */
    int launch_attempts;           /* launches of a job that fail (the executor could not start it:
                                      workdir, command not executable) before it is FAILED (3) */
    /* Serve this policy ops table instead of looking 'policy' up in the registry (tests,
     * embedders: a policy gsched does not know; see gs_engine_create_ops). */
    const gs_policy_ops *policy_ops;
    /* Run tasks with this executor ops table instead of looking 'executor' up in the registry
     * (tests, embedders: a backend gsched does not know; see exec.h). */
    const struct gsd_exec_ops *executor_ops;
    /* --executor-opt KEY=VALUE (repeatable): the backend's settings (gsd_exec_conf.opts),
     * checked by the backend. */
    const char *const *executor_opts;
    size_t nexecutor_opts;
    /* issue 16 lanes: each adds its options under its own marker */
    /* accounting: retention */
    gs_time retention; /* --retention: finished jobs whose end is older move from jobs / events /
                          tasks into one acct row each (docs/daemon.md); 0 = keep them */

    /* events: stream limits */
    unsigned max_streams;          /* GET /v1/events streams open at once (0: 64) */
    unsigned max_streams_per_user; /* of them per user (0: 8); per client: max_conn_per_client/2 */

    /* dashboard */
    int stats_interval;  /* seconds between cluster samples (GET /v1/stats); 0 = the default
                            (10), < 0 = none */
    int stats_keep_days; /* days of samples kept; 0 = the default (7) */

    /* GPU health (issue 17; gpuhealth.c, docs/daemon.md "GPU health") */
    gs_time gpu_health_interval; /* --gpu-health-interval: NVML read every ...; 0 = auto (10 s,
                                    on when the cluster came from NVML discovery), < 0 = off */
    gs_time gpu_xid_hold;  /* --gpu-xid-hold: a critical Xid keeps a GPU bad so long (5 min) */
    int on_gpu_fault_keep; /* --on-gpu-fault keep: jobs on a bad GPU run on (0: requeue) */
    const char *gpu_health_node; /* --gpu-health-node: the node whose GPUs NVML sees (NULL: the
                                    node named like this machine) */
} gsd_opts;

void gsd_opts_init(gsd_opts *o);
/*
 * Run the daemon until SIGTERM/SIGINT.  Returns a process exit code:
 * 0 after a graceful shutdown, 1 on a runtime failure, 2 on a configuration
 * error (bad cluster, policy, listen address, tokens file...).
 */
int gsd_serve(const gsd_opts *o);

/* `gsched __shim --status FILE -- CMD...`: the task shim (exec_local.c; never returns to the
 * caller's logic). */
int gsd_shim_main(int argc, char **argv);

/* ---- GPU health (nvml.c, gpuhealth.c; docs/daemon.md "GPU health") ------------------------ */

/* One GPU as NVML reports it at one reading; -1 where NVML does not say (not supported). */
typedef struct gsd_gpu_reading {
    int index;         /* NVML's index: the local GPU index (PCI bus order) */
    char name[96];     /* "NVIDIA H200" */
    char uuid[96];     /* "GPU-..." ("" unknown) */
    int lost;          /* NVML_ERROR_GPU_IS_LOST from a call about it, or its handle is gone */
    char lost_why[96]; /* what NVML said then */
    int xid_watch;     /* registered for critical Xid events */
    int nxid;          /* Xid events since the previous reading */
    int xid_last;      /* the last of them (0 none) */
    int xid_crit;      /* the last health-critical one (gsd_xid_critical; 0 none) */
    int64_t ecc_uncorrected;     /* volatile uncorrected ECC errors (since the driver loaded) */
    int retire_pending;          /* pages pending retirement (reset the GPU to retire them) */
    int remap_pending;           /* row remapping pending (reset the GPU) */
    int remap_failure;           /* a row remapping failed */
    int temp_c;                  /* GPU temperature, Celsius */
    int64_t mem_used, mem_total; /* bytes */
    int util;                    /* GPU utilisation, percent */
} gsd_gpu_reading;

/*
 * The conditions of one reading that make a GPU unhealthy by themselves (lost, pages pending
 * retirement, row remapping pending or failed, a critical Xid in it): 1 and their text in why
 * ("GPU lost (GPU is lost); pages pending retirement"), 0 when none.  The daemon's watch adds
 * what needs history (an ECC count that rose, an Xid's hold time; gpuhealth.c).
 */
int gsd_gpu_reading_bad(const gsd_gpu_reading *r, char *why, size_t cap);
/*
 * `gsched gpus`: this machine's GPUs as NVML reports them, one reading each (no daemon).
 * 0 with *out (free() it) and *n; GS_ENOENT when NVML or GPUs are absent (why says which).
 * When the library lacks the health functions the names come back alone (readings -1) and
 * why says so (0 returned).
 */
int gsd_gpus_read(gsd_gpu_reading **out, size_t *n, char *why, size_t cap);

/* ---- tokens (auth.c) ------------------------------------------------------------------------ */

#define GSD_TOKEN_ITERATIONS 100000 /* default PBKDF2 iterations */
/* The shortest SECRET of a token "USER.SECRET": `gsched token hash --token` refuses a shorter
 * one and the daemon refuses it as a bearer token (generated secrets have 43). */
#define GSD_TOKEN_SECRET_MIN 16

/* A tokens-file line for user/role/token with a fresh random salt.  0 or GS_EINVAL (bad user
 * name, or a token that is not "USER.SECRET" with a SECRET of GSD_TOKEN_SECRET_MIN characters
 * or more) / GS_ERANGE / GS_EIO. */
int gsd_token_line(const char *user, int admin, const char *token, unsigned iterations, char *out,
                   size_t cap);
/* A new token "USER.SECRET" (43 characters of base64url secret).  0 or GS_EIO. */
int gsd_token_generate(const char *user, char *out, size_t cap);
/* 1 if name is a valid user name ([A-Za-z0-9_@-], 1..63 characters, dots allowed inside). */
int gsd_user_name_ok(const char *name);

/* ---- HTTP client, for the CLI (its own over the Unix socket, libcurl via dlopen for TCP) ---- */

typedef struct gsd_client {
    const char *server; /* "unix:PATH", "http://HOST:PORT" (a bare host:port is accepted);
                         * NULL: the default socket (gsd_default_socket) */
    const char *token;  /* bearer token or NULL */
    const char *user;   /* sent as X-Gsched-User over TCP without a token (--insecure-tcp
                         * daemons; ignored on the socket, where the kernel says who) */
    long timeout_s;     /* whole request; default 30 */
} gsd_client;

typedef struct gsd_resp {
    long status; /* HTTP status; 0 when the daemon could not be reached */
    char *body;  /* NUL-terminated */
    size_t len;
    char *content_type;
    char err[768];    /* transport error when status == 0 */
    int64_t log_size; /* X-Log-Size header, -1 if absent */
    int retry_after;  /* Retry-After header in seconds, -1 if absent or not a number */
} gsd_resp;

/*
 * One request.  body may be NULL.  extra_headers: NULL-terminated "Name:
 * value" strings or NULL.  Returns 0 when a response came back (any
 * status), GS_EIO when the daemon is unreachable (r->err says why).
 */
int gsd_request(const gsd_client *c, const char *method, const char *path, const char *body,
                size_t len, const char *content_type, const char *const *extra_headers,
                gsd_resp *r);
void gsd_resp_release(gsd_resp *r);

/*
 * A streamed request (client.c; `gsched events -f`, `queue -w`, `run`): the same request as
 * gsd_request (socket or TCP, the same headers, the same socket checks), but the body of a
 * 2xx answer is handed to on_body piece by piece as it arrives, with its chunked framing
 * removed, instead of being collected.  There is no total timeout: the call gives up only when
 * nothing at all (no byte, not even an SSE comment) arrives for idle_s seconds (idle_s <= 0:
 * never; connecting and sending the request stay bounded by c->timeout_s).
 *
 * on_body(arg, data, len) gets len >= 1 bytes (not NUL-terminated; a piece may end anywhere,
 * even inside a line or a UTF-8 sequence); it returns 0 to go on, anything else to stop (the
 * connection is closed and the call returns 0).  r->status and r->content_type are set before
 * its first call.  An answer that is not 2xx (or a HEAD, 204, 304) is not streamed: its body is
 * collected into r->body, as gsd_request does, within c->timeout_s.
 *
 * Returns 0 when the answer ended (the daemon finished the body), on_body stopped it, or it
 * was not 2xx (r->status says which; r->body is "" for a streamed one); GS_EIO when the daemon
 * could not be reached (r->status 0), or the stream broke after the headers (reset, idle
 * timeout, malformed chunking: r->status kept, r->err says why).  Release r with
 * gsd_resp_release in every case.
 */
typedef int (*gsd_stream_fn)(void *arg, const char *data, size_t len);
int gsd_client_stream(const gsd_client *c, const char *method, const char *path, const char *body,
                      size_t len, const char *content_type, const char *const *extra_headers,
                      long idle_s, gsd_stream_fn on_body, void *arg, gsd_resp *r);

/*
 * An incremental parser of a text/event-stream body (Server-Sent Events, the WHATWG rules):
 * feed it the pieces gsd_client_stream hands over, in order; it calls on_event once per
 * complete event (a blank line ends one): `id:` sets the event's id (kept for the events after
 * it, like a browser's last event id), `event:` its type ("message" when none), `data:` lines
 * are joined by "\n"; an event without data is not delivered.  Comment lines (": ping") are
 * delivered too, with comment 1 and the text after the colon in data, so a caller may count
 * heartbeats; `retry:` and unknown fields are ignored.  Lines end in LF, CRLF or CR (also when
 * a CRLF is split between two pieces); a BOM at the very start is skipped.
 *
 * Ownership: the strings of a gsd_sse_event are the parser's, valid during the call only.
 */
typedef struct gsd_sse_event {
    const char *id;   /* the last id seen ("" when none) */
    const char *type; /* "message" when the event had no `event:` line */
    const char *data; /* NUL-terminated; len bytes */
    size_t len;
    int comment; /* 1: a comment line (data = its text, type and id as above) */
} gsd_sse_event;
typedef int (*gsd_sse_fn)(void *arg, const gsd_sse_event *ev);
typedef struct gsd_sse {
    gsd_sse_fn on_event;
    void *arg;
    size_t max_line; /* longest line or event accepted (bytes); default 1 MiB */
    /* internal state */
    char *line, *data;
    size_t nline, capline, ndata, capdata;
    char id[128], type[64];
    int cr, started, bom, has_data;
} gsd_sse;
void gsd_sse_init(gsd_sse *p, gsd_sse_fn on_event, void *arg);
/* Parse n more bytes.  0; or the first nonzero value on_event returned (the rest of buf is not
 * parsed); or GS_ETOOBIG (a line or an event over max_line) / GS_ENOMEM. */
int gsd_sse_feed(gsd_sse *p, const char *buf, size_t n);
void gsd_sse_release(gsd_sse *p);

#endif
