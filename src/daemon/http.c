/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http.c - the REST API (/v1/...) and /metrics on libmicrohttpd (and, through the same
 * route table, the web dashboard's files at / and /ui/, http_ui.c).
 *
 * One route table drives dispatch, 405 answers and the GET /v1 index.
 * Handlers run on HTTP threads: they validate, then read the published
 * snapshot and committed rows, or post a command to the scheduler thread
 * and wait for its answer.  They never touch the engine.
 *
 * Before any handler, every request passes the cross-site checks (see
 * docs/daemon.md, Security): Host names the daemon (on loopback), Origin, when
 * present, is the daemon's own; a request body is JSON or YAML (415); a
 * state-changing method carries X-Gsched-Client (403), which browsers cannot
 * send cross-origin without a CORS preflight the daemon never grants.
 *
 * Errors are RFC 9457 application/problem+json bodies with a stable "code"
 * (gs_err_name: "GS_EPARSE", ...).  Limits: request bodies (--max-body,
 * 413), headers (MHD memory limit), ids, page sizes, log reads; anything
 * malformed is a 4xx, never a crash.
 *
 * Invariant: every request gets exactly one response; per-request memory
 * (struct hreq) is freed by on_completed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "config.h"
#include "evbus.h"
#include "gsched/jobdeps.h"
#include "gsd.h"
#include "http_int.h"

#define WAIT_MS       30000
#define MAX_LIMIT     10000
#define DEFAULT_LIMIT 1000
#define MAX_LOG_READ  (8 * 1024 * 1024)

double hx_now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- responses ------------------------------------------------------------------------------ */

enum MHD_Result hx_send_buf(hctx *h, int status, const char *ctype, char *buf, size_t len,
                            const char *const *hdrs)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    for (size_t i = 0; hdrs && hdrs[i]; i += 2) MHD_add_response_header(r, hdrs[i], hdrs[i + 1]);
    enum MHD_Result ret = MHD_queue_response(h->c, (unsigned)status, r);
    MHD_destroy_response(r);
    h->rq->status = status;
    return ret;
}

static enum MHD_Result send_json_flags(hctx *h, int status, json_t *o, size_t flags,
                                       const char *const *hdrs)
{
    char *s = json_dumps(o, flags | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s) return MHD_NO;
    size_t n = strlen(s);
    char *b = realloc(s, n + 2);
    if (!b) abort();
    b[n] = '\n';
    b[n + 1] = '\0';
    return hx_send_buf(h, status, "application/json", b, n + 1, hdrs);
}

enum MHD_Result hx_send_json(hctx *h, int status, json_t *o, const char *const *hdrs)
{
    return send_json_flags(h, status, o, JSON_INDENT(2), hdrs);
}

enum MHD_Result hx_send_json_compact(hctx *h, int status, json_t *o, const char *const *hdrs)
{
    return send_json_flags(h, status, o, JSON_COMPACT, hdrs);
}

enum MHD_Result hx_problem_v(hctx *h, int status, int err, json_t *extra, const char *const *hdrs,
                             const char *fmt, va_list ap)
{
    char detail[1024];
    vsnprintf(detail, sizeof detail, fmt, ap);
    json_t *o = json_object();
    char type[64];
    snprintf(type, sizeof type, "urn:gsched:error:%s", gs_err_name(err));
    json_object_set_new(o, "type", json_string(type));
    json_object_set_new(o, "title", json_string(gs_strerror(err)));
    json_object_set_new(o, "status", json_integer(status));
    json_object_set_new(o, "detail", json_string(detail));
    json_object_set_new(o, "instance", json_string(h->url));
    json_object_set_new(o, "code", json_string(gs_err_name(err)));
    if (extra) {
        json_object_update(o, extra);
        json_decref(extra);
    }
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s) return MHD_NO;
    size_t n = strlen(s);
    char *b = realloc(s, n + 2);
    if (!b) abort();
    b[n] = '\n';
    b[n + 1] = '\0';
    static const char *const auth_hdr[] = {"WWW-Authenticate", "Bearer realm=\"gsched\"", NULL};
    static const char *const retry_hdr[] = {"Retry-After", "5", NULL};
    if (status == 401) hdrs = auth_hdr;
    if (status == 503 && !hdrs) hdrs = retry_hdr; /* read-only mode, shutting down, busy */
    return hx_send_buf(h, status, "application/problem+json", b, n + 1, hdrs);
}

enum MHD_Result hx_problem(hctx *h, int status, int err, json_t *extra, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result r = hx_problem_v(h, status, err, extra, NULL, fmt, ap);
    va_end(ap);
    return r;
}

enum MHD_Result hx_problem_hdr(hctx *h, int status, int err, json_t *extra, const char *const *hdrs,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result r = hx_problem_v(h, status, err, extra, hdrs, fmt, ap);
    va_end(ap);
    return r;
}

const char *hx_arg(hctx *h, const char *key)
{
    return MHD_lookup_connection_value(h->c, MHD_GET_ARGUMENT_KIND, key);
}

const char *hx_header(hctx *h, const char *key)
{
    return MHD_lookup_connection_value(h->c, MHD_HEADER_KIND, key);
}

/* Integer query argument in [lo, hi]; 0 ok, -1 after sending a 400. */
int hx_int_arg(hctx *h, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out,
               enum MHD_Result *ret)
{
    const char *v = hx_arg(h, key);
    if (!v || !*v) {
        *out = def;
        return 0;
    }
    char *e;
    errno = 0;
    long long x = strtoll(v, &e, 10);
    if (errno || *e || x < lo || x > hi) {
        *ret = hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", key),
                          "query parameter '%s' must be an integer between %lld and %lld, got '%s'",
                          key, (long long)lo, (long long)hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

int hx_parse_id(const char *s, int64_t *id)
{
    if (!s || !*s || strlen(s) > 18) return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    *id = strtoll(s, NULL, 10);
    return *id >= 1 ? 0 : -1;
}

int hx_truthy(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !*v);
}

/* A boolean query flag, strictly: absent 0; present bare ("?dry_run") or 1/true/yes 1; 0/false/
 * no 0 (case-insensitive); anything else -1 after sending a 400 naming the parameter, so that
 * "?dry_run=2" never falls through to a real submit. */
int hx_flag_arg(hctx *h, const char *key, enum MHD_Result *ret)
{
    const char *v = hx_arg(h, key);
    if (!v) {
        /* "?dry_run" without '=' has no value but is present: the flag is set */
        const char *nv = NULL;
        return MHD_lookup_connection_value_n(h->c, MHD_GET_ARGUMENT_KIND, key, strlen(key), &nv,
                                             NULL) == MHD_YES;
    }
    if (hx_truthy(v)) return 1;
    if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no")) return 0;
    *ret = hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", key),
                      "query parameter '%s' must be 1, 0, true, false, yes or no", key);
    return -1;
}

/* ---- JSON of jobs --------------------------------------------------------------------------- */

void hx_put_time(json_t *o, const char *key, const char *key_us, int64_t t)
{
    if (t == GSD_NONE || t == GS_TIME_NONE) {
        json_object_set_new(o, key, json_null());
        json_object_set_new(o, key_us, json_null());
        return;
    }
    char b[48];
    gsd_time_str(t, b, sizeof b);
    json_object_set_new(o, key, json_string(b));
    json_object_set_new(o, key_us, json_integer(t));
}

/* An elastic job's part of a job's JSON ("elastic"): from the live view when the job is
 * active, else from its row (the durable state, jobs.elastic, and its spec). */
static json_t *elastic_json(const gsd_jview *v, const char *row_elastic, const char *spec)
{
    json_t *o;
    if (v) {
        if (v->max_gpus <= 0) return NULL;
        const char *phase = v->state == GS_JOB_DRAINING  ? "DRAINING"
                            : v->state != GS_JOB_RUNNING ? gs_job_state_name((gs_job_state)v->state)
                            : v->launching               ? "LAUNCHING"
                                                         : "RUNNING";
        o = json_pack("{s:i,s:i,s:i,s:i,s:i,s:s,s:I,s:I}", "min_gpus", v->min_gpus, "max_gpus",
                      v->max_gpus, "generation", v->generation, "rescales", v->rescales, "failures",
                      v->failures, "phase", phase, "hints", (json_int_t)v->hints, "hints_bad",
                      (json_int_t)v->hints_bad);
        json_object_set_new(o, "ckpt_step",
                            v->ckpt_step >= 0 ? json_integer(v->ckpt_step) : json_null());
        json_object_set_new(o, "model_hints",
                            v->model_hints >= 0 ? json_integer(v->model_hints) : json_null());
        json_object_set_new(o, "target_gpus",
                            v->state == GS_JOB_DRAINING ? json_integer(v->target_gpus)
                                                        : json_null());
        return o;
    }
    if (!row_elastic) return NULL;
    o = json_loads(row_elastic, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return NULL;
    }
    json_t *sp = spec ? json_loads(spec, 0, NULL) : NULL;
    json_t *mn = sp ? json_object_get(sp, "min_gpus") : NULL,
           *mx = sp ? json_object_get(sp, "max_gpus") : NULL;
    json_object_set_new(o, "min_gpus",
                        json_integer(json_is_integer(mn) ? json_integer_value(mn) : 0));
    json_object_set_new(o, "max_gpus",
                        json_integer(json_is_integer(mx) ? json_integer_value(mx) : 0));
    json_decref(sp);
    json_object_del(o, "hints_off");
    json_object_del(o, "hint_gen");
    return o;
}

/* Keys of a job's JSON (GET /v1/jobs, /v1/jobs/{id}): what ?fields= may select.  The views'
 * objects (active jobs) have a subset of the rows' (any job). */
enum {
    JK_ID,
    JK_GROUP,
    JK_TASK_INDEX,
    JK_NAME,
    JK_USER,
    JK_VC,
    JK_PRIORITY,
    JK_STATE,
    JK_ST,
    JK_TASKS,
    JK_GPUS_PER_TASK,
    JK_GPUS,
    JK_MEMBERS,
    JK_TASK_GPUS,
    JK_GROUPS,
    JK_GANG,
    JK_SUBMIT_TIME,
    JK_SUBMIT_US,
    JK_START_TIME,
    JK_START_US,
    JK_LAST_START_TIME,
    JK_LAST_START_US,
    JK_END_TIME,
    JK_END_US,
    JK_REASON,
    JK_POSITION,
    JK_PLACEMENT,
    JK_RUNS,
    JK_PREEMPTIONS,
    JK_EXIT_CODE,
    JK_STOPPING,
    JK_CANCELLED_BY,
    JK_QUEUED_US,
    JK_EXECUTED_US,
    JK_TIME_LIMIT_US,
    JK_ELASTIC,
    JK_ARRAY_ID, /* job arrays (issue 16): null for other jobs */
    JK_ARRAY_TASK,
    JK_N
};

static const char *const jkey_name[JK_N] = {"id",
                                            "group",
                                            "task_index",
                                            "name",
                                            "user",
                                            "vc",
                                            "priority",
                                            "state",
                                            "st",
                                            "tasks",
                                            "gpus_per_task",
                                            "gpus",
                                            "members",
                                            "task_gpus",
                                            "groups",
                                            "gang",
                                            "submit_time",
                                            "submit_us",
                                            "start_time",
                                            "start_us",
                                            "last_start_time",
                                            "last_start_us",
                                            "end_time",
                                            "end_us",
                                            "reason",
                                            "position",
                                            "placement",
                                            "runs",
                                            "preemptions",
                                            "exit_code",
                                            "stopping",
                                            "cancelled_by",
                                            "queued_us",
                                            "executed_us",
                                            "time_limit_us",
                                            "elastic",
                                            "array_id",
                                            "array_task"};

#define JK_ALL    (((uint64_t)1 << JK_N) - 1)
#define JK_BIT(k) ((uint64_t)1 << (k))

/* Set key k of o to val when mask selects it (val is not evaluated otherwise). */
#define JK_PUT(o, mask, k, val)                                              \
    do {                                                                     \
        if ((mask)&JK_BIT(k)) json_object_set_new((o), jkey_name[k], (val)); \
    } while (0)

static void put_time_mask(json_t *o, uint64_t mask, int k, int k_us, int64_t t)
{
    int none = t == GSD_NONE || t == GS_TIME_NONE;
    if (mask & JK_BIT(k)) {
        char b[48];
        if (!none) gsd_time_str(t, b, sizeof b);
        json_object_set_new(o, jkey_name[k], none ? json_null() : json_string(b));
    }
    JK_PUT(o, mask, k_us, none ? json_null() : json_integer(t));
}

/* A job view's JSON, only the keys mask selects. */
static json_t *job_from_view_mask(const gsd_jview *v, int pos, uint64_t mask)
{
    json_t *o = json_object();
    JK_PUT(o, mask, JK_ID, json_integer(v->id));
    JK_PUT(o, mask, JK_GROUP, json_integer(v->group));
    JK_PUT(o, mask, JK_TASK_INDEX, json_integer(v->task_index));
    JK_PUT(o, mask, JK_ARRAY_ID, v->array_id ? json_integer(v->array_id) : json_null());
    JK_PUT(o, mask, JK_ARRAY_TASK, v->array_id ? json_integer(v->array_task) : json_null());
    JK_PUT(o, mask, JK_NAME, json_string(v->name ? v->name : ""));
    JK_PUT(o, mask, JK_USER, json_string(v->user ? v->user : "-"));
    JK_PUT(o, mask, JK_VC, json_string(v->vc ? v->vc : "default"));
    JK_PUT(o, mask, JK_PRIORITY, json_integer(v->priority));
    JK_PUT(o, mask, JK_STATE, json_string(gs_job_state_name((gs_job_state)v->state)));
    JK_PUT(o, mask, JK_ST, json_string(gs_job_state_abbr((gs_job_state)v->state)));
    JK_PUT(o, mask, JK_TASKS, json_integer(v->ntasks));
    JK_PUT(o, mask, JK_GPUS_PER_TASK, json_integer(v->gpus_per_task));
    JK_PUT(o, mask, JK_GPUS, json_integer(v->gpus));
    if (v->members[0]) JK_PUT(o, mask, JK_MEMBERS, json_string(v->members));
    JK_PUT(o, mask, JK_GANG, json_boolean(v->gang));
    put_time_mask(o, mask, JK_SUBMIT_TIME, JK_SUBMIT_US, v->submit);
    put_time_mask(o, mask, JK_START_TIME, JK_START_US, v->first_start);
    put_time_mask(o, mask, JK_LAST_START_TIME, JK_LAST_START_US, v->last_start);
    JK_PUT(o, mask, JK_REASON, v->reason ? json_string(v->reason) : json_null());
    JK_PUT(o, mask, JK_POSITION, pos ? json_integer(pos) : json_null());
    JK_PUT(o, mask, JK_PLACEMENT, v->where[0] ? json_string(v->where) : json_null());
    JK_PUT(o, mask, JK_RUNS, json_integer(v->runs));
    JK_PUT(o, mask, JK_PREEMPTIONS, json_integer(v->preemptions));
    const char *stop = gsd_stop_name(v->stop);
    JK_PUT(o, mask, JK_STOPPING, stop ? json_string(stop) : json_null());
    JK_PUT(o, mask, JK_TIME_LIMIT_US, v->time_limit ? json_integer(v->time_limit) : json_null());
    JK_PUT(o, mask, JK_EXECUTED_US, json_integer(v->executed));
    if (mask & JK_BIT(JK_ELASTIC)) {
        json_t *el = elastic_json(v, NULL, NULL);
        if (el) json_object_set_new(o, "elastic", el);
    }
    return o;
}

json_t *hx_job_from_view(const gsd_jview *v, int pos)
{
    return job_from_view_mask(v, pos, JK_ALL);
}

/* The time limit of a stored spec (canonical JSON), 0 when none or unreadable. */
static gs_time spec_time_limit(const char *spec)
{
    gs_time t = 0;
    json_t *j = spec ? json_loads(spec, 0, NULL) : NULL;
    const char *s = j ? json_string_value(json_object_get(j, "time_limit")) : NULL;
    if (s && gsd_parse_duration(s, GS_SEC, &t, NULL)) t = 0;
    json_decref(j);
    return t;
}

static json_t *opt_int(int64_t v)
{
    return v == GSD_NONE ? json_null() : json_integer(v);
}

/* "gpus", and for a grouped job (issue 14) "members" ("2+1"), "task_gpus" ([2, 1]) and "groups"
 * ([{"tasks": [lo, hi], "parent", "within"}]), from the row's immutable columns. */
static void groups_json(json_t *o, const gsd_jobrow *r, int ntasks)
{
    int64_t gpus = (int64_t)ntasks * r->gpus_per_task;
    if (r->task_gpus) {
        json_t *a = json_array();
        gsd_spec tmp;
        gsd_spec_init(&tmp);
        int32_t tg[GSD_MAX_GPUS];
        int n = 0;
        gpus = 0;
        for (const char *p = r->task_gpus; *p && n < GSD_MAX_GPUS;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) break;
            tg[n++] = (int32_t)v;
            gpus += v;
            json_array_append_new(a, json_integer(v));
            p = *end == ',' ? end + 1 : end;
        }
        tmp.ntasks = n;
        tmp.task_gpus = tg;
        char txt[64];
        gsd_spec_gpus_text(&tmp, txt, sizeof txt);
        json_object_set_new(o, "members", json_string(txt));
        json_object_set_new(o, "task_gpus", a);
    }
    json_object_set_new(o, "gpus", json_integer(gpus));
    json_t *gr = r->groups ? json_loads(r->groups, 0, NULL) : NULL;
    if (json_is_array(gr)) {
        json_t *a = json_array(), *e;
        size_t i;
        json_array_foreach(gr, i, e)
        {
            json_t *g =
                json_pack("{s:[I,I],s:O}", "tasks", json_integer_value(json_object_get(e, "lo")),
                          json_integer_value(json_object_get(e, "hi")), "parent",
                          json_object_get(e, "parent"));
            json_t *w = json_object_get(e, "within");
            json_object_set(g, "within", w ? w : json_null());
            json_array_append_new(a, g);
        }
        json_object_set_new(o, "groups", a);
    }
    json_decref(gr);
}

json_t *hx_job_from_row(const gsd_jobrow *r, const gsd_jview *v, int pos)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "group", json_integer(r->grp));
    json_object_set_new(o, "task_index", json_integer(r->task_index));
    json_object_set_new(o, "array_id", r->array_id ? json_integer(r->array_id) : json_null());
    json_object_set_new(o, "array_task", r->array_id ? json_integer(r->array_task) : json_null());
    json_object_set_new(o, "name", json_string(r->name ? r->name : ""));
    json_object_set_new(o, "user", json_string(r->user ? r->user : "-"));
    json_object_set_new(o, "vc", json_string(r->vc ? r->vc : "default"));
    json_object_set_new(o, "priority", json_integer(r->priority));
    int st = v ? v->state : gs_job_state_parse(r->state ? r->state : "");
    if (st < 0) st = GS_JOB_PENDING;
    json_object_set_new(o, "state", json_string(gs_job_state_name((gs_job_state)st)));
    json_object_set_new(o, "st", json_string(gs_job_state_abbr((gs_job_state)st)));
    int ntasks = v ? v->ntasks : r->ntasks; /* an elastic job's size changes */
    json_object_set_new(o, "tasks", json_integer(ntasks));
    json_object_set_new(o, "gpus_per_task", json_integer(r->gpus_per_task));
    groups_json(o, r, ntasks);
    json_object_set_new(o, "gang", json_boolean(r->gang));
    hx_put_time(o, "submit_time", "submit_us", r->submit);
    hx_put_time(o, "start_time", "start_us", r->first_start);
    hx_put_time(o, "last_start_time", "last_start_us", r->last_start);
    hx_put_time(o, "end_time", "end_us", r->end);
    const char *reason = v && v->reason ? v->reason : r->reason;
    json_object_set_new(o, "reason", reason ? json_string(reason) : json_null());
    json_object_set_new(o, "position", pos ? json_integer(pos) : json_null());
    const char *where = v && v->where[0] ? v->where : r->placement;
    json_object_set_new(o, "placement", where ? json_string(where) : json_null());
    json_object_set_new(o, "runs", json_integer(v ? v->runs : r->runs));
    json_object_set_new(o, "preemptions", json_integer(v ? v->preemptions : r->preemptions));
    json_object_set_new(o, "exit_code", opt_int(r->exit_code));
    const char *stop = v ? gsd_stop_name(v->stop) : r->stop;
    json_object_set_new(o, "stopping", stop ? json_string(stop) : json_null());
    json_object_set_new(o, "cancelled_by", r->cancel_by ? json_string(r->cancel_by) : json_null());
    json_object_set_new(o, "queued_us", json_integer(r->queued));
    json_object_set_new(o, "executed_us", json_integer(r->executed));
    gs_time tl = v ? v->time_limit : spec_time_limit(r->spec);
    json_object_set_new(o, "time_limit_us", tl ? json_integer(tl) : json_null());
    json_t *el = elastic_json(v, r->elastic, r->spec);
    if (el) json_object_set_new(o, "elastic", el);
    return o;
}

/* ---- identity ------------------------------------------------------------------------------- */

const char *gsd_authn_name(int authn)
{
    switch (authn) {
    case GSD_AUTHN_PEER: return "peer";
    case GSD_AUTHN_TOKEN: return "token";
    case GSD_AUTHN_CLAIMED: return "claimed";
    default: return "anonymous";
    }
}

/* The Unix socket: the kernel's word for who connected (SO_PEERCRED).  Headers (a token,
 * X-Gsched-User) are not consulted.  Admin: root, or the daemon's own uid.  The user name is
 * the account's, only when it names this uid and no other (gsd_peer_name): a uid whose name
 * cannot be a gsched user, or resolves to another uid, is refused (an admin, whom every job
 * is visible to anyway, is labelled uidN).  0, or -1 with why set. */
static int peer_ident(hctx *h, char *why, size_t cap)
{
    uid_t uid = h->k->uid;
    if (uid == (uid_t)-1) {
        snprintf(h->id.user, sizeof h->id.user, "anonymous");
        h->id.authn = GSD_AUTHN_ANON;
        snprintf(why, cap, "cannot read the peer credentials of the socket");
        return -1;
    }
    int named = gsd_peer_name(uid, h->id.user, why, cap) == 0;
    h->id.admin = uid == 0 || uid == geteuid();
    if (!named && !h->id.admin) {
        h->id.authn = GSD_AUTHN_ANON;
        return -1;
    }
    h->id.authn = GSD_AUTHN_PEER;
    h->id.uid = (int64_t)uid;
    return 0;
}

/* 0 with h->id set, or -1 after sending 401 (or 429: too many failed tokens from this
 * client address, see conn.c). */
static int authenticate(hctx *h, enum MHD_Result *ret)
{
    gsd *g = h->g;
    h->id.uid = -1;
    if (h->k && h->k->local) {
        char why[400];
        if (peer_ident(h, why, sizeof why) == 0) return 0;
        if (h->k->uid == (uid_t)-1) {
            *ret = hx_problem(h, 401, GS_EPERM, NULL, "%s", why);
        } else {
            h->id.admin = 0;
            *ret = hx_problem(h, 403, GS_EPERM, NULL,
                              "your Unix account cannot be a gsched user: %s; ask the operator to "
                              "give it a name of its own (docs/daemon.md, Listening and identity)",
                              why);
        }
        return -1;
    }
    if (!g->auth) {
        /* --insecure-tcp: the caller says who it is */
        const char *u = hx_header(h, "X-Gsched-User");
        snprintf(h->id.user, sizeof h->id.user, "%s", u && gsd_user_name_ok(u) ? u : "anonymous");
        h->id.admin = 1;
        h->id.authn = GSD_AUTHN_CLAIMED;
        return 0;
    }
    static const char *const close_hdr[] = {"Connection", "close", NULL};
    const char *a = hx_header(h, "Authorization");
    if (!a) {
        *ret = hx_problem(h, 401, GS_EPERM, NULL,
                          "a bearer token is required (Authorization: Bearer TOKEN; the CLI reads "
                          "--token or GSCHED_TOKEN)");
        return -1;
    }
    if (strncasecmp(a, "Bearer ", 7)) {
        *ret = hx_problem(h, 401, GS_EPERM, NULL, "only 'Authorization: Bearer TOKEN' is accepted");
        return -1;
    }
    const char *tok = a + 7;
    while (*tok == ' ') tok++;
    int wait = gsd_net_authfail_wait(g, h->k);
    if (wait) {
        /* this address failed too often: only a token already verified is looked at (a
         * hash lookup), so guessing costs the daemon nothing and gains the guesser nothing */
        if (!gsd_auth_check_cached(g->auth, tok, h->id.user, &h->id.admin)) {
            h->id.authn = GSD_AUTHN_TOKEN;
            return 0;
        }
        char ra[16];
        snprintf(ra, sizeof ra, "%d", wait);
        const char *hdrs[] = {"Retry-After", ra, "Connection", "close", NULL};
        *ret = hx_problem_hdr(h, 429, GS_EQUOTA, NULL, hdrs,
                              "too many failed token checks from this client (or from all clients "
                              "together): retry in %d s",
                              wait);
        return -1;
    }
    if (gsd_auth_check(g->auth, tok, h->id.user, &h->id.admin)) {
        gsd_net_authfail(g, h->k);
        *ret = hx_problem_hdr(h, 401, GS_EPERM, NULL, close_hdr, "invalid token");
        return -1;
    }
    h->id.authn = GSD_AUTHN_TOKEN;
    return 0;
}

int hx_may_see(const hctx *h, const char *owner)
{
    return h->id.admin || (owner && !strcmp(owner, h->id.user));
}

/* ---- handlers ------------------------------------------------------------------------------- */

/* A request body must be JSON or YAML (parameters such as "; charset=utf-8" allowed).  No
 * text/plain, form or multipart type: those are what a web page can POST cross-site. */
static int ctype_ok(const char *ct)
{
    if (!ct) return 0;
    while (*ct == ' ' || *ct == '\t') ct++;
    static const char *const ok[] = {"application/json", "application/yaml", "application/x-yaml",
                                     "text/yaml", NULL};
    for (size_t i = 0; ok[i]; i++) {
        size_t n = strlen(ok[i]);
        if (strncasecmp(ct, ok[i], n)) continue;
        const char *e = ct + n;
        while (*e == ' ' || *e == '\t') e++;
        if (!*e || *e == ';') return 1;
    }
    return 0;
}

enum MHD_Result hx_reply_cmd(hctx *h, gsd_cmd *c, const char *location)
{
    if (c->err) {
        json_t *extra = c->result;
        c->result = NULL;
        static const char *const replayed[] = {"Idempotent-Replayed", "true", NULL};
        int replay = json_is_true(json_object_get(extra, "idempotent_replay"));
        return hx_problem_hdr(h, c->status ? c->status : 500, c->err, extra,
                              replay ? replayed : NULL, "%s", c->detail);
    }
    json_t *r = c->result;
    c->result = NULL;
    if (!r) r = json_object();
    char loc[64];
    const char *hdrs[5] = {NULL};
    size_t k = 0;
    if (location) {
        snprintf(loc, sizeof loc, "%s", location);
        hdrs[k++] = "Location";
        hdrs[k++] = loc;
    }
    if (json_is_true(json_object_get(r, "idempotent_replay"))) {
        hdrs[k++] = "Idempotent-Replayed";
        hdrs[k++] = "true";
    }
    return hx_send_json(h, c->status ? c->status : 200, r, hdrs);
}

enum MHD_Result hx_post_and_reply(hctx *h, gsd_cmd *c)
{
    if (gsd_post(h->g, c, WAIT_MS)) {
        /* stopping, or no answer in time: the command now belongs to the scheduler thread */
        pthread_mutex_lock(&h->g->qmu);
        int mine = !c->abandoned;
        pthread_mutex_unlock(&h->g->qmu);
        if (mine) gsd_cmd_free(c);
        return hx_problem(h, 503, GS_ESTATE, NULL,
                          "the scheduler did not answer (shutting down or overloaded); retry with "
                          "the same Idempotency-Key");
    }
    char loc[64];
    const char *location = NULL;
    if (c->kind == GSD_CMD_SUBMIT && c->status == 201) {
        snprintf(loc, sizeof loc, "/v1/jobs/%lld", (long long)c->job_id);
        location = loc;
    }
    enum MHD_Result r = hx_reply_cmd(h, c, location);
    gsd_cmd_free(c);
    return r;
}

/* --max-pending-per-user and --submit-rate for a submit of user's; 0, or -1 after a 429.
 * The cap counts jobs, the same way on both sides: every pending job of the user (each part
 * of a non-gang submission is a job, whichever part it is) plus the jobs this submit would
 * add (a gang job is one, a non-gang job of N tasks is N).  Pending jobs are counted in the
 * latest published snapshot (one cycle old at most), so concurrent submits can pass the cap
 * by the number in flight. */
static int user_caps(hctx *h, const gsd_spec *sp, enum MHD_Result *ret)
{
    gsd *g = h->g;
    const char *user = sp->user;
    if (g->o.max_pending_per_user) {
        unsigned lim = g->o.max_pending_per_user;
        unsigned add = sp->gang ? 1u : (unsigned)sp->ntasks;
        gsd_snap *s = gsd_snap_get(g);
        unsigned n = 0;
        for (size_t i = 0; s && i < s->njobs; i++) {
            const gsd_jview *v = s->jobs[i];
            n += v->state == GS_JOB_PENDING && v->user && !strcmp(v->user, user);
        }
        gsd_snap_put(s);
        if (add > lim) {
            /* can never fit: no Retry-After */
            *ret = hx_problem_hdr(
                h, 429, GS_EQUOTA,
                json_pack("{s:s,s:i,s:i,s:i}", "user", user, "limit", (int)lim, "pending", (int)n,
                          "adds", (int)add),
                NULL,
                "this non-gang job of %u tasks would be %u pending jobs, more than this daemon "
                "accepts per user (--max-pending-per-user %u): submit it as a gang job, or in "
                "parts of at most %u tasks",
                add, add, lim, lim);
            return -1;
        }
        if (n + add > lim) {
            static const char *const hdrs[] = {"Retry-After", "10", NULL};
            char what[96] = "";
            if (add > 1)
                snprintf(what, sizeof what, " (this non-gang job of %u tasks adds %u)", add, add);
            *ret = hx_problem_hdr(
                h, 429, GS_EQUOTA,
                json_pack("{s:s,s:i,s:i,s:i}", "user", user, "limit", (int)lim, "pending", (int)n,
                          "adds", (int)add),
                hdrs,
                "user '%s' already has %u pending job(s)%s; this daemon accepts at most %u per "
                "user (--max-pending-per-user %u): wait until some start, or cancel some",
                user, n, what, lim, lim);
            return -1;
        }
    }
    int wait = gsd_net_submit_wait(g, user);
    if (wait) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", wait);
        const char *hdrs[] = {"Retry-After", ra, NULL};
        *ret = hx_problem_hdr(h, 429, GS_EQUOTA, json_pack("{s:s}", "user", user), hdrs,
                              "user '%s' submits faster than this daemon accepts (--submit-rate "
                              "%g/s): retry in %d s",
                              user, g->o.submit_rate, wait);
        return -1;
    }
    return 0;
}

static enum MHD_Result h_submit(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    gsd *g = h->g;
    if (h->rq->too_big)
        return hx_problem(h, 413, GS_ETOOBIG, NULL, "request body larger than %zu bytes",
                          g->o.max_body);
    if (!h->rq->len)
        return hx_problem(h, 400, GS_EPARSE, NULL, "empty body: send a job spec (YAML or JSON)");
    enum MHD_Result fr = MHD_NO;
    int dry = hx_flag_arg(h, "dry_run", &fr);
    if (dry < 0) return fr;
    gsd_cmd *c = calloc(1, sizeof *c);
    if (!c) abort();
    gs_diag d;
    gs_diag_init(&d, "request body");
    const char *field = "";
    int rc = gsd_spec_parse("request body", h->rq->body, h->rq->len, &c->spec, &d, &field);
    if (rc) {
        char msg[1024];
        gs_diag_format(&d, msg, sizeof msg);
        json_t *x = json_object();
        if (field && *field) json_object_set_new(x, "field", json_string(field));
        if (d.line) json_object_set_new(x, "line", json_integer(d.line));
        if (d.col) json_object_set_new(x, "column", json_integer(d.col));
        gsd_cmd_free(c);
        /* 400 even for a field over its limit (GS_ETOOBIG): 413 means the body is over
         * --max-body, answered above */
        return hx_problem(h, 400, rc, x, "%s", msg);
    }
    if (c->spec.user && strcmp(c->spec.user, h->id.user) && !h->id.admin) {
        int r = hx_problem(h, 403, GS_EPERM, json_pack("{s:s}", "field", "user"),
                           "user '%s' may not submit jobs for '%s': only an admin token may",
                           h->id.user, c->spec.user);
        gsd_cmd_free(c);
        return r;
    }
    if (!c->spec.user) {
        c->spec.user = strdup(h->id.user);
        if (!c->spec.user) abort();
    }
    if (!gsd_user_name_ok(c->spec.user)) {
        gsd_cmd_free(c);
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "user"),
                          "'user' must be 1-63 characters of letters, digits, _ - @ .");
    }
    if (c->spec.run_as) {
        gsd_cmd_free(c);
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "run_as"),
                          "'run_as' is set by the daemon (the Unix account of the job's user), not "
                          "by a client");
    }
    if (c->spec.external) {
        gsd_cmd_free(c);
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "external"),
                          "'external' is set by the daemon (the cluster manager's job a job was "
                          "adopted from), not by a client");
    }
    if (c->spec.dependency) {
        /* every job it names exists and the submitter may see it (committed rows: an id a
         * client was given is committed) */
        gs_deps dp;
        if (gs_deps_parse(c->spec.dependency, &dp, NULL)) abort(); /* the spec parsed */
        gsd_reader *r = gsd_store_reader(g->store);
        for (int i = 0; i < dp.n; i++) {
            if (dp.v[i].type == GS_DEP_SINGLETON) continue; /* names no job */
            gsd_jobrow row;
            int jr = r ? gsd_reader_job(r, dp.v[i].id, &row) : GS_EIO;
            int seen = !jr && hx_may_see(h, row.user);
            if (!jr) gsd_jobrow_release(&row);
            if (jr == GS_EIO) {
                gsd_store_reader_put(g->store, r);
                gsd_cmd_free(c);
                return hx_problem(h, 500, GS_EIO, NULL, "cannot read the database");
            }
            if (!seen) {
                gsd_store_reader_put(g->store, r);
                gsd_cmd_free(c);
                return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "dependency"),
                                  "'dependency': no job %lld", (long long)dp.v[i].id);
            }
        }
        gsd_store_reader_put(g->store, r);
    }
    char runas[GSD_USER_MAX], mapped[GSD_USER_MAX], why[512];
    int has_map = gsd_auth_unix_user(g->auth, c->spec.user, mapped);
    int st = gsd_runas_decide(&g->runas, h->id.authn, h->id.uid, c->spec.user,
                              has_map ? mapped : NULL, runas, why, sizeof why);
    if (st) {
        gsd_cmd_free(c);
        return hx_problem(h, st, GS_EPERM, json_pack("{s:s}", "field", "user"), "%s", why);
    }
    c->spec.run_as = strdup(runas);
    if (!c->spec.run_as) abort();
    /* the workdir: on a multi-user daemon checked as the job's account (root would tell a
     * user whether a path only root can see exists) */
    char wmsg[600];
    gsd_unix_user acct;
    int as_acct = c->spec.workdir && g->runas.switch_users && geteuid() == 0;
    if (as_acct && gsd_unix_user_lookup(runas, &acct, wmsg, sizeof wmsg)) {
        gsd_cmd_free(c);
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "user"), "%s", wmsg);
    }
    gsd_spec_as as = {0};
    if (as_acct) as = (gsd_spec_as){acct.name, acct.uid, acct.gid, acct.groups, acct.ngroups};
    int wbad = gsd_spec_check_host(&c->spec, as_acct ? &as : NULL, wmsg, sizeof wmsg);
    if (as_acct) gsd_unix_user_release(&acct);
    if (wbad) {
        gsd_cmd_free(c);
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "workdir"), "%s", wmsg);
    }
    const char *key = hx_header(h, "Idempotency-Key");
    if (key) {
        size_t kl = strlen(key);
        int bad = kl == 0 || kl > 128;
        for (size_t i = 0; i < kl && !bad; i++) bad = key[i] < 0x21 || key[i] > 0x7e;
        if (bad) {
            gsd_cmd_free(c);
            return hx_problem(h, 400, GS_EINVAL, NULL,
                              "Idempotency-Key must be 1-128 printable characters without spaces");
        }
        c->idem_key = strdup(key);
        if (!c->idem_key) abort();
    }
    c->spec_json = gsd_spec_to_json(&c->spec);
    if (!c->spec_json) abort();
    gs_sha256_hex(c->spec_json, strlen(c->spec_json), c->idem_hash);
    c->kind = dry ? GSD_CMD_DRYRUN : GSD_CMD_SUBMIT;
    memcpy(c->user, h->id.user, sizeof c->user);
    c->admin = h->id.admin;
    c->authn = h->id.authn;
    c->uid = h->id.uid;
    if (!dry && user_caps(h, &c->spec, &fr)) {
        gsd_cmd_free(c);
        return fr;
    }
    return hx_post_and_reply(h, c);
}

/* ?fields=id,name,...: the keys of each job a list gives (JK_ALL when absent); -1 on an unknown
 * or empty name (*bad: the item, at most cap - 1 characters). */
static int parse_fields(const char *s, uint64_t *mask, char *bad, size_t cap)
{
    *mask = JK_ALL;
    if (!s) return 0;
    *mask = 0;
    for (const char *p = s;;) {
        size_t n = strcspn(p, ",");
        int k = 0;
        while (k < JK_N && (strlen(jkey_name[k]) != n || strncmp(jkey_name[k], p, n))) k++;
        if (k == JK_N) {
            snprintf(bad, cap, "%.*s", (int)(n < 64 ? n : 64), p);
            return -1;
        }
        *mask |= JK_BIT(k);
        if (!p[n]) return 0;
        p += n + 1;
    }
}

/* Only the keys of o that mask selects (o's order kept); a key the table does not name is
 * dropped too, so that an answer never holds a key the client did not ask for. */
static json_t *keep_keys(json_t *o, uint64_t mask)
{
    if (mask == JK_ALL) return o;
    const char *key;
    json_t *val;
    void *tmp;
    json_object_foreach_safe(o, tmp, key, val)
    {
        int k = 0;
        while (k < JK_N && strcmp(jkey_name[k], key)) k++;
        if (k == JK_N || !(mask & JK_BIT(k))) json_object_del(o, key);
    }
    return o;
}

int hx_parse_states(const char *s, unsigned *mask)
{
    *mask = 0;
    if (!s || !*s || !strcasecmp(s, "active")) {
        for (int i = 0; i < GS_JOB_NSTATES; i++)
            if (!gs_job_state_final((gs_job_state)i)) *mask |= 1u << i;
        return 0;
    }
    if (!strcasecmp(s, "all")) return 0;
    char buf[256];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = gs_job_state_parse(t);
        if (k < 0) return -1;
        *mask |= 1u << k;
    }
    return 0;
}

static enum MHD_Result h_list(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    gsd *g = h->g;
    unsigned mask;
    const char *states = hx_arg(h, "state");
    if (hx_parse_states(states, &mask))
        return hx_problem(
            h, 400, GS_EINVAL, json_pack("{s:s}", "field", "state"),
            "'state' must be active, all, or a comma-separated list of states (PENDING, "
            "RUNNING, PD, R, CD, ...), got '%s'",
            states);
    enum MHD_Result ret = MHD_NO;
    int64_t limit, offset;
    if (hx_int_arg(h, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT, &limit, &ret)) return ret;
    if (hx_int_arg(h, "offset", 0, 0, INT64_MAX / 2, &offset, &ret)) return ret;
    uint64_t keys;
    char bad[80];
    const char *fields = hx_arg(h, "fields");
    if (parse_fields(fields, &keys, bad, sizeof bad)) {
        char known[512] = "";
        for (int k = 0; k < JK_N; k++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "",
                     jkey_name[k]);
        return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "fields"),
                          "'fields': unknown job key '%s' (known: %s)", bad, known);
    }
    int compact = hx_flag_arg(h, "compact", &ret);
    if (compact < 0) return ret;
    const char *user = hx_arg(h, "user"), *vc = hx_arg(h, "vc");
    if (user && !*user) user = NULL;
    if (vc && !*vc) vc = NULL;
    if (!h->id.admin) {
        if (user && strcmp(user, h->id.user))
            return hx_problem(h, 403, GS_EPERM, NULL, "you may list only your own jobs");
        user = h->id.user;
    }
    unsigned active = 0;
    for (int i = 0; i < GS_JOB_NSTATES; i++)
        if (!gs_job_state_final((gs_job_state)i)) active |= 1u << i;
    gsd_snap *s = gsd_snap_get(g);
    if (!s) return hx_problem(h, 503, GS_ESTATE, NULL, "not ready");
    const int32_t *pos = gsd_snap_positions(s);
    json_t *arr = json_array();
    int64_t total = 0;
    if (mask && !(mask & ~active)) {
        for (size_t i = 0; i < s->njobs; i++) {
            const gsd_jview *v = s->jobs[i];
            if (!(mask & (1u << v->state))) continue;
            if (user && strcmp(v->user, user)) continue;
            if (vc && strcmp(v->vc, vc)) continue;
            if (total >= offset && total < offset + limit)
                json_array_append_new(arr, job_from_view_mask(v, pos[i], keys));
            total++;
        }
    } else {
        gsd_reader *r = gsd_store_reader(g->store);
        gsd_jobrow *rows = NULL;
        size_t n = 0;
        if (!r || gsd_reader_list(r, mask, user, vc, offset, limit, &rows, &n, &total)) {
            gsd_store_reader_put(g->store, r);
            gsd_snap_put(s);
            json_decref(arr);
            return hx_problem(h, 500, GS_EIO, NULL, "cannot read the database");
        }
        gsd_store_reader_put(g->store, r);
        for (size_t i = 0; i < n; i++) {
            long k = gsd_snap_index(s, rows[i].id);
            json_array_append_new(arr,
                                  keep_keys(hx_job_from_row(&rows[i], k >= 0 ? s->jobs[k] : NULL,
                                                            k >= 0 ? pos[k] : 0),
                                            keys));
        }
        gsd_jobrows_free(rows, n);
    }
    gsd_snap_put(s);
    json_t *o = json_object();
    size_t got = json_array_size(arr);
    json_object_set_new(o, "jobs", arr);
    json_object_set_new(o, "total", json_integer(total));
    json_object_set_new(o, "offset", json_integer(offset));
    json_object_set_new(o, "limit", json_integer(limit));
    json_object_set_new(o, "next_offset",
                        offset + (int64_t)got < total ? json_integer(offset + (int64_t)got)
                                                      : json_null());
    return compact ? hx_send_json_compact(h, 200, o, NULL) : hx_send_json(h, 200, o, NULL);
}

/* Read a job row the caller may see; -1 after sending 404/500. */
int hx_load_job(hctx *h, const char *ids, gsd_jobrow *row, enum MHD_Result *ret)
{
    int64_t id;
    if (ids && strchr(ids, '_')) { /* ARRAY_TASK (http_arrays.c) */
        if (hx_array_ref(h, ids, &id, ret)) return -1;
    } else if (hx_parse_id(ids, &id)) {
        *ret =
            hx_problem(h, 400, GS_EINVAL, NULL, "'%s' is not a job id (a positive integer)", ids);
        return -1;
    }
    gsd_reader *r = gsd_store_reader(h->g->store);
    int rc = r ? gsd_reader_job(r, id, row) : GS_EIO;
    gsd_store_reader_put(h->g->store, r);
    if (rc == GS_ENOENT || (!rc && !hx_may_see(h, row->user))) {
        if (!rc) gsd_jobrow_release(row);
        /* as named: an A_T name says nothing of the id behind it */
        *ret = hx_problem(h, 404, GS_ENOENT, NULL, "no job %s", ids);
        return -1;
    }
    if (rc) {
        *ret = hx_problem(h, 500, GS_EIO, NULL, "cannot read the database");
        return -1;
    }
    return 0;
}

json_t *hx_events_json(gsd *g, int64_t id)
{
    json_t *arr = json_array();
    gsd_reader *r = gsd_store_reader(g->store);
    gsd_event *ev = NULL;
    size_t n = 0;
    if (r && !gsd_reader_events(r, id, 10000, &ev, &n)) {
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_object();
            hx_put_time(e, "time", "time_us", ev[i].t);
            json_object_set_new(e, "type", json_string(ev[i].type));
            json_object_set_new(e, "reason",
                                ev[i].reason ? json_string(ev[i].reason) : json_null());
            json_array_append_new(arr, e);
        }
        gsd_events_free(ev, n);
    }
    gsd_store_reader_put(g->store, r);
    return arr;
}

static enum MHD_Result h_get(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    gsd *g = h->g;
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    gsd_snap *s = gsd_snap_get(g);
    const gsd_jview *v = s ? gsd_snap_find(s, row.id) : NULL;
    int pos = v ? gsd_snap_position(s, v) : 0;
    json_t *o = hx_job_from_row(&row, v, pos);
    json_t *spec = json_loads(row.spec ? row.spec : "{}", 0, NULL);
    json_object_set_new(o, "spec", spec ? spec : json_null());
    if (v && v->state == GS_JOB_PENDING && v->q.queue == GSD_QUEUE_WAIT) {
        /* not yet eligible (held, dependencies): in no queue */
        json_t *dep = spec ? json_object_get(spec, "dependency") : NULL;
        char why[768];
        snprintf(why, sizeof why, "%s: %s%s%s%s", v->reason ? v->reason : "waiting",
                 v->qtext ? v->qtext : "not eligible", json_is_string(dep) ? " (dependency " : "",
                 json_is_string(dep) ? json_string_value(dep) : "", json_is_string(dep) ? ")" : "");
        json_object_set_new(o, "why_pending", json_string(why));
    } else if (v && v->state == GS_JOB_PENDING) {
        char why[768];
        int free_gpus = 0, total = (int)s->ngpus;
        for (size_t i = 0; i < s->ngpus; i++) free_gpus += s->gpus[i].job < 0 && !s->gpus[i].down;
        char shape[64]; /* tasks of different sizes (issue 14): "2+1" */
        if (v->members[0])
            snprintf(shape, sizeof shape, "tasks of %s", v->members);
        else
            snprintf(shape, sizeof shape, "%d x %d", v->ntasks, v->gpus_per_task);
        snprintf(why, sizeof why, "%s: needs %d GPU(s) (%s), %d of %d free now; position %d %s",
                 v->reason ? v->reason : "waiting", v->gpus, shape, free_gpus, total, pos,
                 v->qtext ? v->qtext : "in the queue");
        json_object_set_new(o, "why_pending", json_string(why));
    }
    gsd_snap_put(s);
    json_object_set_new(o, "events", hx_events_json(g, row.id));
    /* tasks of the current (or last) run */
    json_t *tasks = json_array();
    gsd_reader *r = gsd_store_reader(g->store);
    gsd_taskrow *t = NULL;
    size_t n = 0;
    if (r && row.runs > 0 && !gsd_reader_tasks(r, row.id, row.runs, &t, &n)) {
        for (size_t i = 0; i < n; i++) {
            char log[PATH_MAX];
            gsd_exec_log_path(g->xlog, row.id, t[i].idx, log, sizeof log);
            int64_t pid = gsd_exec_task_pid(g->xlog, t[i].handle);
            json_array_append_new(tasks, json_pack("{s:i,s:o,s:o,s:s?,s:s}", "index", t[i].idx,
                                                   "pid", opt_int(pid < 0 ? GSD_NONE : pid),
                                                   "exit_code", opt_int(t[i].exit_code), "gpus",
                                                   t[i].gpus, "log", log));
        }
        gsd_taskrows_free(t, n);
    }
    gsd_store_reader_put(g->store, r);
    json_object_set_new(o, "task_list", tasks);
    gsd_jobrow_release(&row);
    return hx_send_json(h, 200, o, NULL);
}

static enum MHD_Result h_events(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    json_t *o =
        json_pack("{s:I,s:o}", "id", (json_int_t)row.id, "events", hx_events_json(h->g, row.id));
    gsd_jobrow_release(&row);
    return hx_send_json(h, 200, o, NULL);
}

static enum MHD_Result h_logs(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    int64_t task, offset, limit;
    int ntasks = row.ntasks;
    if (row.spec) { /* an elastic job: a task of an earlier, larger generation keeps its log */
        json_t *sp = json_loads(row.spec, 0, NULL);
        json_t *mx = sp ? json_object_get(sp, "max_gpus") : NULL;
        int gpt = row.gpus_per_task > 0 ? row.gpus_per_task : 1;
        if (json_is_integer(mx) && json_integer_value(mx) / gpt > ntasks)
            ntasks = (int)(json_integer_value(mx) / gpt);
        json_decref(sp);
    }
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    if (hx_int_arg(h, "task", 0, 0, ntasks - 1, &task, &ret)) return ret;
    if (hx_int_arg(h, "offset", 0, 0, INT64_MAX / 2, &offset, &ret)) return ret;
    if (hx_int_arg(h, "limit", 1024 * 1024, 1, MAX_LOG_READ, &limit, &ret)) return ret;
    int fd;
    if (gsd_exec_log_open(h->g->xlog, id, (int)task, &fd))
        return hx_problem(h, 404, GS_ENOENT, NULL,
                          "job %lld task %lld has no log yet (not started)", (long long)id,
                          (long long)task);
    struct stat st;
    fstat(fd, &st);
    int64_t size = st.st_size;
    if (offset > size) offset = size;
    int64_t n = size - offset < limit ? size - offset : limit;
    char *buf = malloc((size_t)n + 1);
    if (!buf) abort();
    ssize_t got = n > 0 ? pread(fd, buf, (size_t)n, offset) : 0;
    close(fd);
    if (got < 0) got = 0;
    char sz[32], end[32];
    snprintf(sz, sizeof sz, "%lld", (long long)size);
    snprintf(end, sizeof end, "%lld", (long long)(offset + got));
    const char *hdrs[] = {"X-Log-Size", sz, "X-Log-Offset", end, NULL};
    return hx_send_buf(h, 200, "text/plain; charset=utf-8", buf, (size_t)got, hdrs);
}

/* A new command of 'kind' on behalf of the request's caller (who, admin, how authenticated). */
gsd_cmd *hx_caller_cmd(hctx *h, gsd_cmd_kind kind)
{
    gsd_cmd *c = calloc(1, sizeof *c);
    if (!c) abort();
    gsd_spec_init(&c->spec);
    c->kind = kind;
    memcpy(c->user, h->id.user, sizeof c->user);
    c->admin = h->id.admin;
    c->authn = h->id.authn;
    c->uid = h->id.uid;
    return c;
}

/* A command on one job by its owner or an admin: DELETE /v1/jobs/{id} (cancel),
 * POST /v1/jobs/{id}/hold and /release (like scontrol hold / release, cancel's rules) and
 * /resize (gpus: the size asked for; 0 for the others). */
static enum MHD_Result job_cmd(hctx *h, const char *ids, gsd_cmd_kind kind, int gpus)
{
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, kind);
    c->job_id = id;
    c->gpus = gpus;
    return hx_post_and_reply(h, c);
}

static enum MHD_Result h_cancel(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    enum MHD_Result ret;
    int whole = hx_flag_arg(h, "array", &ret); /* the whole array (http_arrays.c) */
    if (whole < 0) return ret;
    if (whole) return hx_array_cancel(h, ids);
    return job_cmd(h, ids, GSD_CMD_CANCEL, 0);
}

static enum MHD_Result h_hold(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    return job_cmd(h, ids, GSD_CMD_HOLD, 0);
}

static enum MHD_Result h_release(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    return job_cmd(h, ids, GSD_CMD_RELEASE, 0);
}

/* POST /v1/jobs/{id}/resize {"gpus": N}: an operator rescale of a running elastic job (its
 * owner or an admin; docs/elastic.md).  202 once the drain is committed. */
static enum MHD_Result h_resize(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    json_error_t err;
    json_t *b =
        h->rq->len ? json_loadb(h->rq->body, h->rq->len, JSON_REJECT_DUPLICATES, &err) : NULL;
    json_t *n = b ? json_object_get(b, "gpus") : NULL;
    if (!json_is_object(b) || !json_is_integer(n) || json_object_size(b) != 1 ||
        json_integer_value(n) < 0 || json_integer_value(n) > GSD_MAX_GPUS) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, json_pack("{s:s}", "field", "gpus"),
                          "expected a JSON body {\"gpus\": N} with N from 0 to %d", GSD_MAX_GPUS);
    }
    int gpus = (int)json_integer_value(n);
    json_decref(b);
    return job_cmd(h, ids, GSD_CMD_RESIZE, gpus);
}

/* POST /v1/nodes/{name}/bad and /good {"reason": "..."} (optional): an admin marks a node bad
 * (no new job goes there, the jobs on it run on) or good again; 403 for others. */
static enum MHD_Result node_cmd(hctx *h, const char *name, gsd_cmd_kind kind)
{
    if (!h->id.admin)
        return hx_problem(h, 403, GS_EPERM, NULL, "only an admin may mark nodes %s",
                          kind == GSD_CMD_NODE_BAD ? "bad" : "good");
    json_error_t err;
    json_t *b =
        h->rq->len ? json_loadb(h->rq->body, h->rq->len, JSON_REJECT_DUPLICATES, &err) : NULL;
    json_t *r = b ? json_object_get(b, "reason") : NULL;
    if ((h->rq->len && !json_is_object(b)) || (r && !json_is_string(r)) ||
        (b && json_object_size(b) != (r ? 1u : 0u)) ||
        (r && strlen(json_string_value(r)) >= sizeof((gsd_cmd *)0)->why) ||
        strlen(name) >= sizeof((gsd_cmd *)0)->node) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, json_pack("{s:s}", "field", "reason"),
                          "expected no body or a JSON body {\"reason\": \"text\"} (under 256 "
                          "bytes)");
    }
    if (r) { /* printed in `gsched nodes` and the dashboard: one line, no escapes */
        gs_diag d;
        gs_diag_init(&d, NULL);
        if (gsd_text_check("reason", json_string_value(r), &d)) {
            json_decref(b);
            return hx_problem(h, 400, GS_EINVAL, json_pack("{s:s}", "field", "reason"), "%s",
                              d.msg);
        }
    }
    gsd_cmd *c = hx_caller_cmd(h, kind);
    snprintf(c->node, sizeof c->node, "%s", name);
    snprintf(c->why, sizeof c->why, "%s", r ? json_string_value(r) : "");
    json_decref(b);
    return hx_post_and_reply(h, c);
}

static enum MHD_Result h_node_bad(hctx *h, const char *name, const char *sub)
{
    (void)sub;
    return node_cmd(h, name, GSD_CMD_NODE_BAD);
}

static enum MHD_Result h_node_good(hctx *h, const char *name, const char *sub)
{
    (void)sub;
    return node_cmd(h, name, GSD_CMD_NODE_GOOD);
}

static const char *node_state(const gsd_nview *n)
{
    if (n->mgr && !strcmp(n->mgr, "down")) return "down";     /* the cluster manager lost it */
    if (n->admin && !strcmp(n->admin, "down")) return "down"; /* an admin took it down */
    if (n->drain) return n->alloc ? "draining" : "drained";   /* jobs running there go on */
    if (n->bad) return "bad";                                 /* jobs running there go on */
    if (n->down == n->gpus) return "down";
    if (n->alloc == 0) return n->down ? "degraded" : "idle";
    if (n->alloc + n->down >= n->gpus) return "allocated";
    return "mixed";
}

const char *hx_node_state(const gsd_nview *n)
{
    return node_state(n);
}

static json_t *node_json(hctx *h, const gsd_snap *s, const gsd_nview *n, int detail)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(n->name));
    if (n->chain) json_object_set_new(o, "chain", json_string(n->chain));
    if (n->cell_type) json_object_set_new(o, "cell_type", json_string(n->cell_type));
    if (n->ncells > 1) json_object_set_new(o, "node_cells", json_integer(n->ncells));
    json_object_set_new(o, "state", json_string(node_state(n)));
    json_object_set_new(o, "gpus", json_integer(n->gpus));
    json_object_set_new(o, "allocated", json_integer(n->alloc));
    json_object_set_new(o, "free", json_integer(n->gpus - n->alloc - n->down));
    json_object_set_new(o, "down", json_integer(n->down));
    json_object_set_new(o, "reason", n->drain ? json_string(n->drain) : json_null());
    json_object_set_new(o, "bad", json_boolean(n->bad != NULL));
    if (n->bad) {
        char ts[40];
        gsd_time_str(n->bad_since, ts, sizeof ts);
        json_object_set_new(o, "bad_reason", json_string(n->bad));
        json_object_set_new(o, "bad_since", json_string(ts));
    }
    hx_node_admin_json(o, n); /* admin_state, ... (http_nodes.c) */
    json_object_set_new(o, "outside", json_integer(n->outside));
    json_object_set_new(o, "unhealthy_gpus", json_integer(n->unhealthy)); /* GPU health */
    if (n->outside_asked != n->outside)
        json_object_set_new(o, "outside_asked", json_integer(n->outside_asked));
    if (n->mgr) {
        json_object_set_new(o, "manager_state", json_string(n->mgr));
        json_object_set_new(o, "manager_reason",
                            n->mgr_why ? json_string(n->mgr_why) : json_null());
    }
    if (n->cpus) {
        json_object_set_new(o, "cpus", json_integer(n->cpus));
        json_object_set_new(o, "free_cpus", json_integer(n->free_cpus));
    }
    if (n->mem_mb) {
        json_object_set_new(o, "memory_mb", json_integer(n->mem_mb));
        json_object_set_new(o, "free_memory_mb", json_integer(n->free_mem_mb));
    }
    json_t *types = json_array(), *jobs = json_array(), *gl = json_array();
    json_t *faults = n->unhealthy ? json_array() : NULL; /* GPU health: the unhealthy GPUs */
    for (int gi = n->gpu_lo; gi < n->gpu_hi; gi++) {
        const gsd_gview *gv = &s->gpus[gi];
        if (faults && gv->health == 2)
            json_array_append_new(faults, json_pack("{s:i,s:s}", "gpu", gv->local, "reason",
                                                    gv->health_why ? gv->health_why : ""));
        int seen = 0;
        for (size_t k = 0; k < json_array_size(types) && !seen; k++)
            seen = !strcmp(json_string_value(json_array_get(types, k)), gv->type);
        if (!seen) json_array_append_new(types, json_string(gv->type));
        int visible = gv->job >= 0;
        if (visible && !h->id.admin) {
            const gsd_jview *v = gsd_snap_find(s, gv->job);
            visible = v && !strcmp(v->user, h->id.user);
        }
        if (visible) {
            int dup = 0;
            for (size_t k = 0; k < json_array_size(jobs) && !dup; k++)
                dup = json_integer_value(json_array_get(jobs, k)) == gv->job;
            if (!dup) json_array_append_new(jobs, json_integer(gv->job));
        }
        if (detail) {
            json_t *e = json_pack("{s:i,s:i,s:s,s:s,s:o}", "index", gi, "local", gv->local, "type",
                                  gv->type, "state",
                                  gv->outside                                         ? "outside"
                                  : gv->health == 2                                   ? "unhealthy"
                                  : gv->down && n->admin && !strcmp(n->admin, "down") ? "down"
                                  : gv->down && n->drain                              ? "drained"
                                  : gv->down && n->bad                                ? "bad"
                                  : gv->down                                          ? "down"
                                  : gv->job >= 0                                      ? "allocated"
                                                                                      : "idle",
                                  "job", visible ? json_integer(gv->job) : json_null());
            if (n->chain) json_object_set_new(e, "chain", json_string(n->chain));
            if (gv->health) json_object_set_new(e, "health", hx_gpu_health_json(gv));
            json_array_append_new(gl, e);
        }
    }
    json_object_set_new(o, "gpu_types", types);
    json_object_set_new(o, "jobs", jobs);
    if (faults) json_object_set_new(o, "gpu_faults", faults);
    if (detail)
        json_object_set_new(o, "gpu_list", gl);
    else
        json_decref(gl);
    return o;
}

/* The daemon's read-only mode (disk.c), as GET /v1/health and /v1/nodes show it. */
static json_t *read_only_json(gs_time since, const char *why)
{
    char ts[40];
    gsd_time_str(since, ts, sizeof ts);
    return json_pack("{s:s,s:s,s:s}", "since", ts, "reason", why, "effect",
                     "the database cannot be written: submits and cancels get 503, nothing new "
                     "starts, running jobs go on");
}

/* Append the strings or integers of array 'from' to 'to' that it does not have yet. */
static void json_union(json_t *to, const json_t *from)
{
    size_t i, k;
    json_t *x, *y;
    json_array_foreach(from, i, x)
    {
        int seen = 0;
        json_array_foreach(to, k, y) seen |= json_equal(x, y);
        if (!seen) json_array_append(to, x);
    }
}

/* A machine in several HiveD chains (node cells s->nodes[i] with first == 'first'): the sums
 * of its cells (GPUs, allocated, free, down, outside), their GPU types, jobs and GPUs (each
 * GPU with its chain), and "cells": every cell's own object (chain, cell type, its GPUs). */
static json_t *machine_json(hctx *h, const gsd_snap *s, size_t first)
{
    gsd_nview m = s->nodes[first];
    m.gpus = m.alloc = m.down = m.outside = m.outside_asked = 0;
    m.cpus = m.free_cpus = m.mem_mb = m.free_mem_mb = 0; /* each cell's own, in "cells" */
    m.gpu_lo = m.gpu_hi = 0;
    m.chain = m.cell_type = NULL;
    json_t *cells = json_array(), *types = json_array(), *jobs = json_array(), *gl = json_array();
    json_t *faults = json_array();
    m.unhealthy = 0;
    for (size_t i = first; i < s->nnodes; i++) {
        const gsd_nview *c = &s->nodes[i];
        if ((size_t)c->first != first) continue;
        m.gpus += c->gpus;
        m.alloc += c->alloc;
        m.down += c->down;
        m.outside += c->outside;
        m.outside_asked += c->outside_asked;
        if (!m.drain) m.drain = c->drain;
        json_t *co = node_json(h, s, c, 1);
        json_union(types, json_object_get(co, "gpu_types"));
        json_union(jobs, json_object_get(co, "jobs"));
        json_array_extend(gl, json_object_get(co, "gpu_list"));
        if (json_object_get(co, "gpu_faults"))
            json_array_extend(faults, json_object_get(co, "gpu_faults"));
        m.unhealthy += c->unhealthy;
        json_array_append_new(cells, co);
    }
    json_t *o = node_json(h, s, &m, 1);
    json_object_set_new(o, "gpu_types", types);
    json_object_set_new(o, "jobs", jobs);
    if (json_array_size(faults)) /* GPU health: every cell's unhealthy GPUs */
        json_object_set_new(o, "gpu_faults", faults);
    else
        json_decref(faults);
    json_object_set_new(o, "unhealthy_gpus", json_integer(m.unhealthy));
    json_object_set_new(o, "gpu_list", gl);
    json_object_set_new(o, "cells", cells);
    return o;
}

static enum MHD_Result h_nodes(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    gsd_snap *s = gsd_snap_get(h->g);
    if (!s) return hx_problem(h, 503, GS_ESTATE, NULL, "not ready");
    json_t *arr = json_array();
    for (size_t i = 0; i < s->nnodes; i++)
        json_array_append_new(arr, node_json(h, s, &s->nodes[i], hx_truthy(hx_arg(h, "gpus"))));
    gsd_snap_put(s);
    json_t *o = json_pack("{s:o}", "nodes", arr);
    gs_time ro_since = 0;
    char ro_why[256];
    if (gsd_read_only_state(h->g, &ro_since, ro_why, sizeof ro_why))
        json_object_set_new(o, "read_only", read_only_json(ro_since, ro_why));
    return hx_send_json(h, 200, o, NULL);
}

static enum MHD_Result h_node(hctx *h, const char *name, const char *sub)
{
    (void)sub;
    gsd_snap *s = gsd_snap_get(h->g);
    if (!s) return hx_problem(h, 503, GS_ESTATE, NULL, "not ready");
    for (size_t i = 0; i < s->nnodes; i++) {
        if (strcmp(s->nodes[i].name, name)) continue;
        /* the machine: its only node cell, or all of them (one per chain it is in) */
        json_t *o =
            s->nodes[i].ncells > 1 ? machine_json(h, s, i) : node_json(h, s, &s->nodes[i], 1);
        gsd_snap_put(s);
        hx_node_events_json(h, o, name); /* its node events (http_nodes.c) */
        return hx_send_json(h, 200, o, NULL);
    }
    gsd_snap_put(s);
    return hx_problem(h, 404, GS_ENOENT, NULL, "no node '%s'", name);
}

static enum MHD_Result h_vcs(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    gsd_snap *s = gsd_snap_get(h->g);
    if (!s) return hx_problem(h, 503, GS_ESTATE, NULL, "not ready");
    json_t *arr = json_array();
    for (size_t i = 0; i < s->nvcs; i++) {
        const gsd_vcview *v = &s->vcs[i];
        json_array_append_new(
            arr,
            json_pack("{s:s,s:o,s:I,s:i,s:i,s:I}", "name", v->name, "guaranteed_gpus",
                      v->guaranteed >= 0 ? json_integer(v->guaranteed) : json_null(),
                      "allocated_gpus", (json_int_t)v->allocated, "running_jobs", v->running,
                      "pending_jobs", v->pending, "pending_gpus", (json_int_t)v->pending_gpus));
    }
    gsd_snap_put(s);
    return hx_send_json(h, 200, json_pack("{s:o}", "vcs", arr), NULL);
}

static enum MHD_Result h_health(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    gsd *g = h->g;
    gsd_snap *s = gsd_snap_get(g);
    if (!s) return hx_problem(h, 503, GS_ESTATE, NULL, "not ready");
    int alloc = 0, down = 0;
    for (size_t i = 0; i < s->ngpus; i++) {
        alloc += s->gpus[i].job >= 0;
        down += s->gpus[i].down;
    }
    json_t *o = json_object();
    gs_time ro_since = 0;
    char ro_why[256] = "";
    int ro = gsd_read_only_state(g, &ro_since, ro_why, sizeof ro_why);
    json_object_set_new(o, "status", json_string(ro ? "read-only" : "ok"));
    if (ro) json_object_set_new(o, "read_only", read_only_json(ro_since, ro_why));
    json_object_set_new(o, "version", json_string(GSCHED_VERSION));
    json_object_set_new(o, "policy", json_string(g->o.policy)); /* the engine's (serve.c) */
    json_object_set_new(o, "uptime_seconds",
                        json_real(gs_time_to_sec(gsd_wall_now() - g->started)));
    json_object_set_new(o, "cycles", json_integer((json_int_t)s->m.cycles));
    json_object_set_new(o, "pending_jobs", json_integer(s->states[GS_JOB_PENDING]));
    json_object_set_new(o, "running_jobs",
                        json_integer(s->states[GS_JOB_RUNNING] + s->states[GS_JOB_PREEMPTED] +
                                     s->states[GS_JOB_SUSPENDED]));
    json_object_set_new(o, "gpus",
                        json_pack("{s:I,s:i,s:I,s:i}", "total", (json_int_t)s->ngpus, "allocated",
                                  alloc, "free", (json_int_t)s->ngpus - alloc - down, "down",
                                  down));
    json_object_set_new(o, "cycle_p50_seconds", json_real(s->cycle_p50));
    json_object_set_new(o, "cycle_p99_seconds", json_real(s->cycle_p99));
    json_object_set_new(o, "cycle_window", json_integer((json_int_t)s->cycle_window));
    json_object_set_new(o, "authentication", json_boolean(g->auth != NULL));
    json_object_set_new(o, "user", json_string(h->id.user));
    json_object_set_new(o, "admin", json_boolean(h->id.admin));
    json_object_set_new(o, "identity", json_string(gsd_authn_name(h->id.authn)));
    gsd_snap_put(s);
    return hx_send_json(h, 200, o, NULL);
}

static enum MHD_Result h_metrics(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    gsd_snap *s = gsd_snap_get(h->g);
    if (!s) return hx_problem(h, 503, GS_ESTATE, NULL, "not ready");
    size_t len;
    char *text = gsd_metrics_text(h->g, s, &len);
    gsd_snap_put(s);
    return hx_send_buf(h, 200, "text/plain; version=0.0.4; charset=utf-8", text, len, NULL);
}

static enum MHD_Result h_index(hctx *h, const char *a, const char *sub);

static const route routes[] = {
    {"GET", "/v1", h_index, "this list"},
    {"POST", "/v1/jobs", h_submit,
     "submit a job (YAML or JSON spec; Idempotency-Key header; ?dry_run=1)"},
    {"GET", "/v1/jobs", h_list,
     "list jobs "
     "(?state=active|all|PD,R,...&user=&vc=&limit=&offset=&fields=id,name,...&compact=1)"},
    {"GET", "/v1/jobs/{id}", h_get, "one job with its events, tasks and why it waits"},
    {"DELETE", "/v1/jobs/{id}", h_cancel,
     "cancel a job (running jobs: SIGTERM, grace, SIGKILL); ?array=1: a whole job array"},
    {"POST", "/v1/jobs/{id}/hold", h_hold,
     "hold a pending job (one already queued is taken back out of its policy's queue)"},
    {"POST", "/v1/jobs/{id}/release", h_release, "release a held job"},
    {"POST", "/v1/jobs/{id}/resize", h_resize,
     "resize a running elastic job: {\"gpus\": N} (checkpoint, drain, relaunch at N GPUs)"},
    {"GET", "/v1/jobs/{id}/events", h_events, "the job's events"},
    {"GET", "/v1/jobs/{id}/logs", h_logs, "a task's log (?task=N&offset=&limit=), text/plain"},
    {"GET", "/v1/nodes", h_nodes, "nodes with GPU counts and state (?gpus=1: per GPU)"},
    {"GET", "/v1/nodes/{name}", h_node, "one node with its GPUs"},
    {"POST", "/v1/nodes/{name}/bad", h_node_bad,
     "mark a node bad: {\"reason\": \"...\"} (admin; no new job there, its jobs run on)"},
    {"POST", "/v1/nodes/{name}/good", h_node_good, "mark a bad node good again (admin)"},
    {"GET", "/v1/vcs", h_vcs, "virtual clusters: guarantee, usage, queue"},
    {"GET", "/v1/health", h_health, "liveness, version, policy, cycle latency (no token needed)"},
    {"GET", "/metrics", h_metrics, "Prometheus metrics (text format; no token needed)"},
    /* -- issue 16 lanes: each adds its routes under its own marker (handlers in http_int.h) -- */
    /* events: GET /v1/events (http_events.c) */
    {"GET", "/v1/events", hx_events_stream,
     "the event stream (text/event-stream; Last-Event-ID or ?since=SEQ, ?last=N, ?job=ID, "
     "?kind=job,node,cluster, ?follow=0, ?ping=SECS)"},

    /* dashboard: GET /, /ui/..., /v1/cluster, /v1/stats (http_ui.c) */
    {"GET", "/", h_ui_index, "the web dashboard (docs/dashboard.md; no token needed)"},
    {"GET", "/ui/{file}", h_ui_file, "the dashboard's files (no token needed)"},
    {"GET", "/v1/cluster", h_cluster,
     "the cluster's topology (racks, nodes, sockets, switches) with every GPU's state and job"},
    {"GET", "/v1/stats", h_stats,
     "the cluster over time (?from=&to=&step= in seconds; from/to <= 0: relative to now)"},

    /* accounting: GET /v1/history (http_acct.c) */
    {"GET", "/v1/history", h_history,
     "finished jobs, by end time (?from=&to= us since the epoch, user=, vc=, "
     "state=CD,F,CA,RJ, job=ID (or its array), limit=, offset=)"},

    /* node administration: POST /v1/nodes/{name}/drain|resume|down (http_nodes.c) */
    {"POST", "/v1/nodes/{name}/drain", hx_node_drain,
     "drain a node: {\"reason\": \"...\"} (admin; its jobs finish, no new job starts there)"},
    {"POST", "/v1/nodes/{name}/resume", hx_node_resume,
     "return a drained or down node to service (admin)"},
    {"POST", "/v1/nodes/{name}/down", hx_node_down,
     "take a node down: {\"reason\": \"...\"} (admin; its jobs are preempted and requeued)"},

    /* job control: PATCH /v1/jobs/{id}, requeue, attach, stdin (http_jobctl.c) */
    {"PATCH", "/v1/jobs/{id}", hj_update,
     "change a job: {\"priority\", \"time_limit\", \"gpus\", \"vc\", \"name\"} (pending; "
     "a running job's time limit)"},
    {"POST", "/v1/jobs/{id}/requeue", hj_requeue,
     "stop a running job (SIGTERM, grace, SIGKILL: it checkpoints) and queue it again; "
     "?hold=1: held"},
    {"POST", "/v1/jobs/{id}/lease", hj_lease,
     "an interactive job's client is there: {\"seconds\": N} (gsched run; its job is "
     "cancelled when the lease runs out)"},
    {"POST", "/v1/jobs/{id}/stdin", hj_stdin,
     "bytes for a running interactive job's stdin: {\"data\": TEXT or \"data_b64\": "
     "BASE64, \"eof\": bool} (at most 64 KiB; answers how many were written)"},

    /* arrays: (http_arrays.c if any) */
};

static enum MHD_Result h_index(hctx *h, const char *a, const char *sub)
{
    (void)a, (void)sub;
    json_t *arr = json_array();
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "method", routes[i].method, "path",
                                             routes[i].pattern, "doc", routes[i].doc));
    return hx_send_json(h, 200, json_pack("{s:s,s:o}", "version", GSCHED_VERSION, "routes", arr),
                        NULL);
}

/* Match url against a pattern; captures the first {x} segment and a trailing literal. */
static int match(const char *pattern, const char *url, char *cap, size_t capn)
{
    const char *p = pattern, *u = url;
    cap[0] = '\0';
    while (*p && *u) {
        if (*p == '{') {
            const char *pe = strchr(p, '}');
            const char *ue = strchr(u, '/');
            size_t n = ue ? (size_t)(ue - u) : strlen(u);
            if (!n || n >= capn) return 0;
            memcpy(cap, u, n);
            cap[n] = '\0';
            p = pe + 1;
            u += n;
            continue;
        }
        if (*p != *u) return 0;
        p++, u++;
    }
    if (*u == '/' && !u[1] && !*p) return 1; /* trailing slash */
    return !*p && !*u;
}

static enum MHD_Result dispatch(hctx *h)
{
    char cap[256];
    const route *found = NULL;
    int path_ok = 0;
    char allow[64] = "";
    /* HEAD is GET without a body (libmicrohttpd leaves the body out) */
    const char *method = strcmp(h->method, "HEAD") ? h->method : "GET";
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        if (!match(routes[i].pattern, h->url, cap, sizeof cap)) continue;
        path_ok = 1;
        if (strlen(allow) + 16 < sizeof allow)
            snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s%s",
                     *allow ? ", " : "", routes[i].method,
                     strcmp(routes[i].method, "GET") ? "" : ", HEAD");
        if (!strcmp(routes[i].method, method)) {
            found = &routes[i];
            break;
        }
    }
    if (!found) {
        if (!path_ok)
            return hx_problem(h, 404, GS_ENOENT, NULL, "no such endpoint: %s %s (see GET /v1)",
                              h->method, h->url);
        json_t *x = json_pack("{s:s}", "allow", allow);
        const char *hdrs[] = {"Allow", allow, NULL};
        return hx_problem_hdr(h, 405, GS_EUNSUPPORTED, x, hdrs,
                              "%s is not allowed on %s (allowed: %s)", h->method, h->url, allow);
    }
    enum MHD_Result ret;
    int open = found->fn == h_health || found->fn == h_metrics || found->fn == h_index ||
               found->fn == h_ui_index || found->fn == h_ui_file; /* the dashboard's files */
    if (!open && authenticate(h, &ret)) return ret;
    if (open) {
        /* identify when possible (socket peers, --insecure-tcp), never refuse */
        char why[400];
        if (h->k && h->k->local) {
            h->id.uid = -1;
            if (peer_ident(h, why, sizeof why)) {
                snprintf(h->id.user, sizeof h->id.user, "anonymous");
                h->id.admin = 0;
                h->id.authn = GSD_AUTHN_ANON;
                h->id.uid = -1;
            }
        } else if (!h->g->auth) {
            authenticate(h, &ret);
        } else {
            snprintf(h->id.user, sizeof h->id.user, "anonymous");
            h->id.admin = 0;
            h->id.authn = GSD_AUTHN_ANON;
            h->id.uid = -1;
        }
    }
    return found->fn(h, cap, NULL);
}

/* ---- cross-site checks ------------------------------------------------------------------- */

/* Host (a "name[:port]" header value) names this daemon listening on loopback: localhost,
 * 127.0.0.0/8 or [::1], with no port or the daemon's own.  Anything else is how a DNS
 * rebinding page reaches a loopback daemon. */
static int host_ok(const gsd *g, const char *host)
{
    char name[256];
    const char *port = NULL;
    if (host[0] == '[') {
        const char *e = strchr(host, ']');
        if (!e || (size_t)(e - host - 1) >= sizeof name) return 0;
        memcpy(name, host + 1, (size_t)(e - host - 1));
        name[e - host - 1] = '\0';
        if (e[1] == ':')
            port = e + 2;
        else if (e[1])
            return 0;
        struct in6_addr a6;
        if (inet_pton(AF_INET6, name, &a6) != 1 || !IN6_IS_ADDR_LOOPBACK(&a6)) return 0;
    } else {
        const char *c = strchr(host, ':');
        size_t n = c ? (size_t)(c - host) : strlen(host);
        if (n >= sizeof name) return 0;
        memcpy(name, host, n);
        name[n] = '\0';
        if (c) port = c + 1;
        struct in_addr a4;
        if (strcasecmp(name, "localhost") &&
            (inet_pton(AF_INET, name, &a4) != 1 || (ntohl(a4.s_addr) >> 24) != 127))
            return 0;
    }
    if (!port) return 1;
    if (!*port || strlen(port) > 5 || strspn(port, "0123456789") != strlen(port)) return 0;
    return atoi(port) == g->port;
}

/* Origin, when a browser sends one, is this daemon's own: scheme://HOST where HOST is the
 * (checked) Host header of the request. */
static int origin_ok(const char *origin, const char *host)
{
    if (!host) return 0;
    const char *p;
    if (!strncasecmp(origin, "http://", 7))
        p = origin + 7;
    else if (!strncasecmp(origin, "https://", 8))
        p = origin + 8;
    else
        return 0;
    return !strcasecmp(p, host);
}

static int state_changing(const char *method)
{
    return !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH") ||
           !strcmp(method, "DELETE");
}

/* Host and Origin; 0 ok, -1 after sending the answer. */
static int check_site(hctx *h, enum MHD_Result *ret)
{
    const char *host = hx_header(h, "Host");
    /* the Unix socket: no browser reaches it, and its Host (curl: localhost) has no port */
    int local = h->k && h->k->local;
    if (h->g->loopback && !local && host && !host_ok(h->g, host)) {
        *ret = hx_problem(h, 421, GS_EPERM, json_pack("{s:s}", "field", "Host"),
                          "Host '%s' does not name this daemon: it listens on loopback and answers "
                          "only localhost, 127.0.0.1 or [::1] (port %d)",
                          host, h->g->port);
        return -1;
    }
    const char *origin = hx_header(h, "Origin");
    if (origin && !origin_ok(origin, host)) {
        *ret = hx_problem(h, 403, GS_EPERM, json_pack("{s:s}", "field", "Origin"),
                          "cross-origin request refused: Origin '%s' is not this daemon's own "
                          "(http://%s)",
                          origin, host ? host : "?");
        return -1;
    }
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    gsd *g = cls;
    hreq *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq) return MHD_NO;
        rq->t0 = hx_now_sec();
        snprintf(rq->method, sizeof rq->method, "%s", method);
        *con_cls = rq;
        gsd_net_head(g, gsd_net_conn(c)); /* the request head is complete */
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > g->o.max_body) rq->too_big = 1;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->too_big) {
            if (rq->len + *upload_size > g->o.max_body) {
                rq->too_big = 1;
                free(rq->body);
                rq->body = NULL;
                rq->len = rq->cap = 0;
            } else {
                if (rq->len + *upload_size + 1 > rq->cap) {
                    size_t nc = rq->cap ? rq->cap : 4096;
                    while (nc < rq->len + *upload_size + 1) nc *= 2;
                    char *nb = realloc(rq->body, nc);
                    if (!nb) abort();
                    rq->body = nb;
                    rq->cap = nc;
                }
                memcpy(rq->body + rq->len, upload, *upload_size);
                rq->len += *upload_size;
                rq->body[rq->len] = '\0';
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    hctx h = {.g = g, .c = c, .url = url, .method = method, .rq = rq, .k = gsd_net_conn(c)};
    enum MHD_Result ret;
    if (!hx_header(&h, "Host") && version && !strcmp(version, MHD_HTTP_VERSION_1_1))
        return hx_problem(&h, 400, GS_EINVAL, json_pack("{s:s}", "field", "Host"),
                          "HTTP/1.1 requests must carry a Host header");
    if (check_site(&h, &ret)) return ret;
    if (rq->too_big)
        return hx_problem(&h, 413, GS_ETOOBIG, NULL, "request body larger than %zu bytes",
                          g->o.max_body);
    if (rq->len && strcmp(method, "POST") && strcmp(method, "PUT") && strcmp(method, "PATCH"))
        return hx_problem(&h, 400, GS_EINVAL, NULL, "%s requests take no body", method);
    if (rq->len && !ctype_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")))
        return hx_problem(&h, 415, GS_EUNSUPPORTED, json_pack("{s:s}", "field", "Content-Type"),
                          "Content-Type must be application/json or application/yaml (or "
                          "application/x-yaml, text/yaml), got '%s'",
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")
                              ? MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")
                              : "(none)");
    if (state_changing(method)) {
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Gsched-Client");
        if (!cl || !*cl)
            return hx_problem(&h, 403, GS_EPERM, json_pack("{s:s}", "field", "X-Gsched-Client"),
                              "%s requests must carry the header 'X-Gsched-Client: 1' (the gsched "
                              "CLI sends it; web pages cannot, which stops cross-site requests)",
                              method);
    }
    return dispatch(&h);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c, (void)toe;
    gsd *g = cls;
    hreq *rq = *con_cls;
    if (!rq) return;
    gsd_conn *k = gsd_net_conn(c);
    gsd_net_done(g, k); /* a kept-alive connection must send its next head in time */
    if (g->o.verbose && k && k->local) {
        gsd_log("uid %ld %s -> %d (%.1f ms)", k->uid == (uid_t)-1 ? -1L : (long)k->uid, rq->method,
                rq->status, (hx_now_sec() - rq->t0) * 1e3);
    } else if (g->o.verbose) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        char addr[64] = "?";
        if (ci && ci->client_addr) {
            const struct sockaddr *sa = ci->client_addr;
            if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr, sizeof addr);
            else if (sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr,
                          sizeof addr);
        }
        gsd_log("%s %s -> %d (%.1f ms)", addr, rq->method, rq->status,
                (hx_now_sec() - rq->t0) * 1e3);
    }
    free(rq->body);
    free(rq);
    *con_cls = NULL;
}

/* ---- startup -------------------------------------------------------------------------------- */

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a)) return 1;
        if (IN6_IS_ADDR_V4MAPPED(a)) return a->s6_addr[12] == 127;
    }
    return 0;
}

/* libmicrohttpd's error messages, to stderr (the daemon's log) as before, but for the one an
 * event stream makes when its client has gone away (a closed dashboard tab, a Ctrl-C'ed
 * `gsched events -f`): its final chunk cannot be sent, which is expected. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (strstr(buf, "Failed to send the footers") && strstr(buf, "`/v1/events'")) return;
    fputs(buf, stderr);
}

/* Options every listener shares: per-listener connection limit, idle timeout (seconds of
 * silence), header memory, admission (conn.c), the request-completed hook, the error log. */
static struct MHD_Daemon *start_mhd(gsd *g, unsigned flags, enum MHD_OPTION where, const void *arg)
{
    unsigned idle = g->o.idle_timeout ? g->o.idle_timeout : 30;
    flags |= MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (where == MHD_OPTION_LISTEN_SOCKET)
        return MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, g, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
            MHD_OPTION_LISTEN_SOCKET, *(const int *)arg, MHD_OPTION_CONNECTION_LIMIT,
            g->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, idle,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
            gsd_net_notify, g, MHD_OPTION_NOTIFY_COMPLETED, on_completed, g, MHD_OPTION_END);
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, g, MHD_OPTION_EXTERNAL_LOGGER,
                            mhd_log, NULL, MHD_OPTION_SOCK_ADDR, arg, MHD_OPTION_CONNECTION_LIMIT,
                            g->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, idle,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
                            MHD_OPTION_NOTIFY_CONNECTION, gsd_net_notify, g,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, g, MHD_OPTION_END);
}

/* The Unix socket: every local user may connect to a root daemon that runs jobs as their
 * owners (the kernel says who they are); only the daemon's own user to any other daemon (a
 * single-user one: its jobs all run as the daemon's user, root included). */
static int start_local(gsd *g, gs_diag *d)
{
    int fd = gsd_local_listen(g->o.socket, geteuid() == 0 && g->runas.switch_users, d);
    if (fd < 0) return GS_EIO;
    g->mhd_local = start_mhd(g, 0, MHD_OPTION_LISTEN_SOCKET, &fd);
    if (!g->mhd_local) {
        close(fd);
        unlink(g->o.socket);
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot serve on the socket %s", g->o.socket);
    }
    snprintf(g->sock_path, sizeof g->sock_path, "%s", g->o.socket);
    return 0;
}

static int start_tcp(gsd *g, gs_diag *d)
{
    const char *listen = g->o.listen;
    char host[256], port[16];
    const char *colon = strrchr(listen, ':');
    if (!colon || !colon[1] || strlen(colon + 1) >= sizeof port)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--listen: expected ADDR:PORT, got '%s'", listen);
    size_t hl = (size_t)(colon - listen);
    if (hl >= sizeof host) return gs_diag_set(d, GS_EINVAL, 0, 0, "--listen: address too long");
    memcpy(host, listen, hl);
    host[hl] = '\0';
    snprintf(port, sizeof port, "%s", colon + 1);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9')
            return gs_diag_set(d, GS_EINVAL, 0, 0, "--listen: port '%s' is not a number", port);
    if (atoi(port) > 65535) return gs_diag_set(d, GS_EINVAL, 0, 0, "--listen: port out of range");
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int e = getaddrinfo(*host ? host : "127.0.0.1", port, &hints, &ai);
    if (e || !ai)
        return gs_diag_set(d, GS_EINVAL, 0, 0, "--listen: cannot resolve '%s': %s", listen,
                           gai_strerror(e));
    if (!is_loopback(ai->ai_addr) && !g->auth) {
        freeaddrinfo(ai);
        return gs_diag_set(d, GS_EPERM, 0, 0,
                           "refusing to listen on %s without --tokens FILE: anyone who can reach "
                           "it could run commands; listen on a loopback address or give a tokens "
                           "file (see 'gsched token hash')",
                           listen);
    }
    if (!g->auth && !g->o.insecure_tcp) {
        freeaddrinfo(ai);
        return gs_diag_set(d, GS_EPERM, 0, 0,
                           "refusing to listen on %s without --tokens FILE: every local user "
                           "could connect and name any user in X-Gsched-User; local users "
                           "reach the daemon through its Unix socket (--socket), where the "
                           "kernel says who they are.  Give --tokens FILE, or --insecure-tcp "
                           "to accept that risk",
                           listen);
    }
    g->loopback = is_loopback(ai->ai_addr);
    g->mhd = start_mhd(g, ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0, MHD_OPTION_SOCK_ADDR,
                       ai->ai_addr);
    freeaddrinfo(ai);
    if (!g->mhd)
        return gs_diag_set(d, GS_EIO, 0, 0, "cannot listen on %s: %s", listen,
                           errno ? strerror(errno) : "address in use?");
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(g->mhd, MHD_DAEMON_INFO_BIND_PORT);
    g->port = di ? di->port : atoi(port);
    if (!g->auth)
        gsd_log("WARNING: --insecure-tcp: HTTP on %s without tokens. Anyone who can connect "
                "to it (every local user, any program) is an admin and may claim to be any "
                "user (X-Gsched-User), including root: jobs, cancels, logs of everyone. Use "
                "the Unix socket or --tokens instead",
                listen);
    return 0;
}

int gsd_http_start(gsd *g, gs_diag *d)
{
    if (!g->o.socket && !g->o.listen)
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "nothing to serve on: give --socket PATH or --listen ADDR:PORT");
    int rc = gsd_net_start(g, d);
    if (!rc && g->o.socket) rc = start_local(g, d);
    if (!rc && g->o.listen) rc = start_tcp(g, d);
    return rc;
}

void gsd_http_stop(gsd *g)
{
    gsd_evbus_close(g->bus, 2); /* open event streams end (their final chunk sent, within 2 s) */
    if (g->mhd) MHD_stop_daemon(g->mhd);
    if (g->mhd_local) MHD_stop_daemon(g->mhd_local);
    g->mhd = g->mhd_local = NULL;
    if (g->sock_path[0]) {
        unlink(g->sock_path);
        g->sock_path[0] = '\0';
    }
    gsd_net_stop(g);
}
