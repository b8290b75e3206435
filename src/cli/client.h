/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client.h - shared pieces of the CLI commands that talk to `gsched serve`:
 * the --server / --token / --json options (with GSCHED_SERVER and
 * GSCHED_TOKEN), turning responses into exit codes and messages, and
 * plain-text tables that size their columns to the data (like kubectl).
 *
 * Exit codes (cli.h): 0 ok, 1 runtime error (5xx, 401/403, 409), 2 usage
 * or input error (bad flag, 400/413/415/422), 3 daemon unreachable, 4 not
 * found (404).
 *
 * Ownership: a cli_table owns copies of its cells; cli_table_release frees
 * them.  json_t results are owned by the caller (json_decref).
 */
#ifndef GSCHED_CLI_CLIENT_H
#define GSCHED_CLI_CLIENT_H

#include <stddef.h>

#include <jansson.h>

#include "daemon.h"

typedef struct cli_conn {
    gsd_client c;
    int json; /* --json */
    char user[64];
    /* the last cli_call: HTTP status (0: unreachable) and Retry-After (-1: none) */
    long status;
    int retry_after;
    /* quiet: cli_call keeps its error line in msg instead of printing it (the caller decides,
     * e.g. to retry) */
    int quiet;
    char msg[1024];
} cli_conn;

/* Defaults from the environment (GSCHED_SERVER, GSCHED_TOKEN, USER). */
void cli_conn_init(cli_conn *k);
/*
 * Handle a common option: --server URL, --token TOKEN, --json.  Returns 1
 * when opt (a getopt_long value from CLI_CONN_LONGOPTS) was one of them.
 */
int cli_conn_opt(cli_conn *k, int opt, const char *arg);

enum { CLI_OPT_SERVER = 1000, CLI_OPT_TOKEN, CLI_OPT_JSON };
/* clang-format off */
#define CLI_CONN_LONGOPTS                                  \
    {"server", required_argument, NULL, CLI_OPT_SERVER},   \
    {"token", required_argument, NULL, CLI_OPT_TOKEN},     \
    {"json", no_argument, NULL, CLI_OPT_JSON}
/* clang-format on */
#define CLI_CONN_HELP                                                                         \
    "  --server ADDR       unix:PATH or http://HOST:PORT (default $GSCHED_SERVER, else the\n" \
    "                      daemon's default socket: see 'gsched serve --help')\n"             \
    "  --token TOKEN       bearer token for TCP daemons (default $GSCHED_TOKEN)\n"            \
    "  --json              machine-readable output\n"

/*
 * Send a request.  On success (2xx) returns EXIT_OK and, when out != NULL,
 * the parsed JSON body.  Otherwise prints "gsched: <what>: <detail>" to
 * stderr and returns the exit code for the status (3 when unreachable).
 */
int cli_call(cli_conn *k, const char *method, const char *path, const char *body, const char *ctype,
             const char *const *headers, const char *what, json_t **out);
/*
 * A streamed call (gsd_client_stream; `events -f`, `queue -w`, `run`): the body of a 2xx
 * answer goes to on_body piece by piece until the daemon ends it, on_body returns nonzero
 * (stop), or nothing arrives for idle_s seconds (idle_s <= 0: wait forever).  Returns
 * EXIT_OK when the stream ended or was stopped; otherwise reports like cli_call (an error
 * status: "gsched: <what>: <detail>"; unreachable, or the stream broke: exit 3) and returns
 * the exit code.  k->status is the answer's status (0: unreachable).
 */
int cli_stream(cli_conn *k, const char *method, const char *path, const char *body,
               const char *ctype, const char *const *headers, long idle_s, gsd_stream_fn on_body,
               void *arg, const char *what);
/*
 * A GET of a text/event-stream (Server-Sent Events) through cli_stream: on_event gets each
 * event and comment (gsd_sse_event, parsed by gsd_sse) and returns 0 to go on, 1 to stop.
 * An answer of another content type is an error (exit 1).  last_id, when not NULL, receives
 * the id of the last event delivered (cap bytes; "" when none), to resume from.
 */
int cli_sse(cli_conn *k, const char *path, const char *const *headers, long idle_s,
            gsd_sse_fn on_event, void *arg, char *last_id, size_t cap, const char *what);
/* After a failed quiet cli_call: print its error line (and hint) as cli_call would have. */
void cli_call_report(const cli_conn *k);
/* Exit code for an HTTP status. */
int cli_exit_for_status(long status);

/* Tables: add a header row, then rows; columns are padded to the widest cell. */
typedef struct cli_table {
    char **cells;
    size_t ncols, nrows, cap;
    unsigned right; /* bit i: right-align column i */
} cli_table;

void cli_table_init(cli_table *t, size_t ncols, unsigned right_mask);
void cli_table_add(cli_table *t, const char *const *row);
void cli_table_print(const cli_table *t, int headers);
void cli_table_release(cli_table *t);

/* Human durations for AGE/TIME columns ("5s", "3m02s", "2h05m", "4d03h"). */
void cli_age(long long us, char *buf, size_t cap);
/* JSON helpers tolerant of missing keys. */
const char *cli_jstr(json_t *o, const char *key, const char *def);
long long cli_jint(json_t *o, const char *key, long long def);
/* Current time in microseconds since the epoch. */
long long cli_now_us(void);

#endif
