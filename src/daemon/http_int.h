/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_int.h - what the REST API's handler files share: the request context, the route
 * type, and the helpers of http.c (responses, problem bodies, query arguments, job JSON,
 * visibility, posting commands to the scheduler thread).
 *
 * http.c owns the route table, dispatch and the cross-site checks; handler files
 * (http_*.c) define handlers declared below and never touch the engine: like http.c's
 * own, they read the published snapshot and committed rows, or post a command.
 */
#ifndef GSCHED_DAEMON_HTTP_INT_H
#define GSCHED_DAEMON_HTTP_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "gsd.h"

typedef struct hreq {
    char *body;
    size_t len, cap;
    int too_big;
    int status;
    double t0;
    char method[8];
} hreq;

typedef struct ident {
    char user[GSD_USER_MAX];
    int admin;
    int authn;   /* GSD_AUTHN_* */
    int64_t uid; /* GSD_AUTHN_PEER: the client's uid; else -1 */
} ident;

typedef struct hctx {
    gsd *g;
    struct MHD_Connection *c;
    const char *url;
    const char *method;
    hreq *rq;
    gsd_conn *k; /* the connection (conn.c); NULL if admission never saw it */
    ident id;
} hctx;

typedef enum MHD_Result (*handler_fn)(hctx *h, const char *arg, const char *sub);

typedef struct route {
    const char *method;
    const char *pattern; /* "/v1/jobs/{id}/events": {x} matches one path segment */
    handler_fn fn;
    const char *doc;
} route;

/* ---- helpers (http.c) ----------------------------------------------------------------------- */

double hx_now_sec(void);
/* Queue a response; buf is malloc'ed and owned by the response. hdrs: name, value, ..., NULL. */
enum MHD_Result hx_send_buf(hctx *h, int status, const char *ctype, char *buf, size_t len,
                            const char *const *hdrs);
/* Queue o (consumed) as an indented JSON body. */
enum MHD_Result hx_send_json(hctx *h, int status, json_t *o, const char *const *hdrs);
/* The same without whitespace (JSON_COMPACT): lists a client asked compact (?compact=1). */
enum MHD_Result hx_send_json_compact(hctx *h, int status, json_t *o, const char *const *hdrs);
/* An RFC 9457 problem body; extra (consumed, may be NULL) is merged into it. */
enum MHD_Result hx_problem_v(hctx *h, int status, int err, json_t *extra, const char *const *hdrs,
                             const char *fmt, va_list ap);
enum MHD_Result hx_problem(hctx *h, int status, int err, json_t *extra, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
enum MHD_Result hx_problem_hdr(hctx *h, int status, int err, json_t *extra, const char *const *hdrs,
                               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
const char *hx_arg(hctx *h, const char *key);    /* query argument or NULL */
const char *hx_header(hctx *h, const char *key); /* request header or NULL */
/* Integer query argument in [lo, hi] (def when absent); 0, or -1 after sending a 400. */
int hx_int_arg(hctx *h, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out,
               enum MHD_Result *ret);
int hx_parse_id(const char *s, int64_t *id); /* a job id >= 1: 0, else -1 */
/* "PD,R,..." (abbreviations or names) -> a mask of (1 << gs_job_state); NULL, "" or "active":
 * the non-final states; "all": 0 (every state).  0, or -1 for a word that is no state. */
int hx_parse_states(const char *s, unsigned *mask);
int hx_truthy(const char *v);
/* Boolean query flag: 0/1, or -1 after sending a 400. */
int hx_flag_arg(hctx *h, const char *key, enum MHD_Result *ret);
void hx_put_time(json_t *o, const char *key, const char *key_us, int64_t t);
json_t *hx_job_from_view(const gsd_jview *v, int pos);
json_t *hx_job_from_row(const gsd_jobrow *r, const gsd_jview *v, int pos);
/* May the caller see (and act on) what owner owns?  Admins see all. */
int hx_may_see(const hctx *h, const char *owner);
/* Answer a command the scheduler thread has done (201 + Location when location). */
enum MHD_Result hx_reply_cmd(hctx *h, gsd_cmd *c, const char *location);
/* Post c to the scheduler thread, wait for it, answer. */
enum MHD_Result hx_post_and_reply(hctx *h, gsd_cmd *c);
/* A command of this kind carrying the caller's identity. */
gsd_cmd *hx_caller_cmd(hctx *h, gsd_cmd_kind kind);
/* Load job ids's row if the caller may see it: 0, or -1 after sending a 4xx. */
int hx_load_job(hctx *h, const char *ids, gsd_jobrow *row, enum MHD_Result *ret);
json_t *hx_events_json(gsd *g, int64_t id);

/* ---- handlers of the issue-16 lanes, one section each -----------------------------------------
 */
/* events (http_events.c) */
enum MHD_Result hx_events_stream(hctx *h, const char *arg, const char *sub); /* GET /v1/events */

/* dashboard (http_ui.c) */
enum MHD_Result h_ui_index(hctx *h, const char *a, const char *sub);   /* GET / */
enum MHD_Result h_ui_file(hctx *h, const char *name, const char *sub); /* GET /ui/{file} */
enum MHD_Result h_cluster(hctx *h, const char *a, const char *sub);    /* GET /v1/cluster */
enum MHD_Result h_stats(hctx *h, const char *a, const char *sub);      /* GET /v1/stats */
/* A node's state as GET /v1/nodes shows it (idle, mixed, allocated, drained, down, ...). */
const char *hx_node_state(const gsd_nview *n);

/* accounting (http_acct.c) */
/* GET /v1/history: finished jobs (live final rows and acct rows), filtered and paged */
enum MHD_Result h_history(hctx *h, const char *arg, const char *sub);

/* node administration (http_nodes.c) */
/* POST /v1/nodes/{name}/drain, /resume, /down {"reason": "..."} (optional): admins only. */
enum MHD_Result hx_node_drain(hctx *h, const char *name, const char *sub);
enum MHD_Result hx_node_resume(hctx *h, const char *name, const char *sub);
enum MHD_Result hx_node_down(hctx *h, const char *name, const char *sub);
/* A node view's admin state into its JSON object o: admin_state ("drain", "down" or null),
 * and when set admin_reason, admin_by, admin_since (RFC 3339). */
void hx_node_admin_json(json_t *o, const gsd_nview *n);
/* GPU health (issue 17, gpuhealth.c): a watched GPU's health as an object: healthy, reason
 * (null when healthy), since, and the readings (null where NVML does not say). */
json_t *hx_gpu_health_json(const gsd_gview *gv);
/* GET /v1/nodes/{name}: its last node events (drain, resume, down, bad, good) as "events". */
void hx_node_events_json(hctx *h, json_t *o, const char *name);

/* job control (http_jobctl.c) */
enum MHD_Result hj_requeue(hctx *h, const char *ids, const char *sub);
enum MHD_Result hj_update(hctx *h, const char *ids, const char *sub);
enum MHD_Result hj_lease(hctx *h, const char *ids, const char *sub);
enum MHD_Result hj_stdin(hctx *h, const char *ids, const char *sub);

/* arrays (http_arrays.c) */
/* "A_T" (element T of array A) as a job id: 0 with *id set, else -1 after sending 400/404/500. */
int hx_array_ref(hctx *h, const char *ids, int64_t *id, enum MHD_Result *ret);
/* DELETE /v1/jobs/{id}?array=1: cancel the whole array id (or, not an array's id, the job). */
enum MHD_Result hx_array_cancel(hctx *h, const char *ids);

#endif
