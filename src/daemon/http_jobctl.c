/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_jobctl.c - the REST API's job control (issue 16): PATCH /v1/jobs/{id} (update) and
 * POST /v1/jobs/{id}/requeue, and gsched run's POST /v1/jobs/{id}/lease and /stdin.
 *
 * Like every handler file it never touches the engine: it checks the request, loads the
 * job's committed row (404 for a job the caller may not see, as cancel) and posts a
 * command that the scheduler thread carries out (jobctl.c) and answers after its commit.
 */
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "store.h"

/* POST /v1/jobs/{id}/requeue[?hold=1]: stop a running job (its owner or an admin) through
 * the checkpoint protocol, back to its queue (held with hold=1); 202 once committed. */
enum MHD_Result hj_requeue(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    enum MHD_Result ret;
    int hold = hx_flag_arg(h, "hold", &ret);
    if (hold < 0) return ret;
    gsd_jobrow row;
    if (hx_load_job(h, ids, &row, &ret)) return ret;
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_REQUEUE);
    c->job_id = id;
    c->args = json_pack("{s:b}", "hold", hold);
    return hx_post_and_reply(h, c);
}

/* PATCH /v1/jobs/{id} {"priority": N|"class", "time_limit": SECONDS|"DURATION"|"UNLIMITED",
 * "gpus": N, "vc": "VC", "name": "NAME"} (any non-empty subset): the body's shape is checked
 * here, its values by the scheduler thread (the submit rules, the caller's rights). */
enum MHD_Result hj_update(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    static const char *const keys[] = {"priority", "time_limit", "gpus", "vc", "name"};
    json_error_t err;
    json_t *b =
        h->rq->len ? json_loadb(h->rq->body, h->rq->len, JSON_REJECT_DUPLICATES, &err) : NULL;
    if (!json_is_object(b) || !json_object_size(b)) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, NULL,
                          "expected a JSON object with one or more of priority, time_limit, "
                          "gpus, vc, name");
    }
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v)
    {
        size_t i = 0;
        while (i < sizeof keys / sizeof *keys && strcmp(k, keys[i])) i++;
        int ok = i == 0   ? json_is_integer(v) || json_is_string(v)
                 : i == 1 ? json_is_integer(v) || json_is_string(v)
                 : i == 2 ? json_is_integer(v)
                 : i < 5  ? json_is_string(v)
                          : 0;
        if (!ok) {
            json_t *extra = json_pack("{s:s}", "field", k);
            enum MHD_Result r =
                i == 5 ? hx_problem(h, 400, GS_EPARSE, extra,
                                    "'%s' cannot be updated (priority, time_limit, gpus, vc, "
                                    "name can)",
                                    k)
                       : hx_problem(h, 400, GS_EPARSE, extra, "'%s' must be %s", k,
                                    i == 2   ? "an integer (the job's GPUs in all)"
                                    : i >= 3 ? "a string"
                                             : "an integer or a string");
            json_decref(b);
            return r;
        }
    }
    gsd_jobrow row;
    enum MHD_Result ret;
    if (hx_load_job(h, ids, &row, &ret)) {
        json_decref(b);
        return ret;
    }
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_UPDATE);
    c->job_id = id;
    c->args = b;
    return hx_post_and_reply(h, c);
}

/* The JSON object body of a POST (NULL after a 400). */
static json_t *object_body(hctx *h, enum MHD_Result *ret, const char *expect)
{
    json_error_t err;
    json_t *b = h->rq->len ? json_loadb(h->rq->body, h->rq->len, JSON_REJECT_DUPLICATES, &err)
                           : json_object();
    if (json_is_object(b)) return b;
    json_decref(b);
    *ret = hx_problem(h, 400, GS_EPARSE, NULL, "expected a JSON object: %s", expect);
    return NULL;
}

/* POST /v1/jobs/{id}/lease {"seconds": N}: the interactive job's client is there; the job is
 * cancelled N seconds (1..3600; default 30 or the last given) after its last renewal. */
enum MHD_Result hj_lease(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    enum MHD_Result ret;
    json_t *b = object_body(h, &ret, "{\"seconds\": N}");
    if (!b) return ret;
    json_t *sv = json_object_get(b, "seconds");
    if ((sv && !json_is_integer(sv)) || json_object_size(b) > (sv ? 1u : 0u)) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, NULL,
                          "expected {\"seconds\": N} (an integer) or an empty body");
    }
    gsd_jobrow row;
    if (hx_load_job(h, ids, &row, &ret)) {
        json_decref(b);
        return ret;
    }
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_LEASE);
    c->job_id = id;
    c->args = b;
    return hx_post_and_reply(h, c);
}

#define STDIN_MAX (64 * 1024)

/* base64 (RFC 4648, padding optional) of s into out (cap >= 3 * len / 4 + 3): the bytes, or
 * -1 when s is not base64. */
static long b64_decode(const char *s, size_t len, unsigned char *out)
{
    unsigned acc = 0, nb = 0;
    long n = 0;
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i], v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else if (c == '=')
            break;
        else
            return -1;
        acc = (acc << 6) | (unsigned)v;
        if ((nb += 6) >= 8) {
            nb -= 8;
            out[n++] = (unsigned char)(acc >> nb);
            acc &= (1u << nb) - 1;
        }
    }
    return n;
}

/* POST /v1/jobs/{id}/stdin {"data": "TEXT" | "data_b64": "BASE64", "eof": bool}: bytes for
 * a running interactive job's task 0 (interactive.c); 200 {"written": N} (N may be fewer:
 * send the rest later), 409 when it is not running or its stdin is closed, 413 over 64 KiB. */
enum MHD_Result hj_stdin(hctx *h, const char *ids, const char *sub)
{
    (void)sub;
    enum MHD_Result ret;
    json_t *b = object_body(h, &ret, "{\"data\": TEXT or \"data_b64\": BASE64, \"eof\": bool}");
    if (!b) return ret;
    json_t *d = json_object_get(b, "data"), *d64 = json_object_get(b, "data_b64");
    json_t *eof = json_object_get(b, "eof");
    if ((d && !json_is_string(d)) || (d64 && !json_is_string(d64)) || (d && d64) ||
        (eof && !json_is_boolean(eof)) || json_object_size(b) != (size_t)(!!d + !!d64 + !!eof)) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, NULL,
                          "expected {\"data\": TEXT or \"data_b64\": BASE64, \"eof\": "
                          "bool} (one of data, data_b64)");
    }
    size_t len = d ? json_string_length(d) : d64 ? json_string_length(d64) / 4 * 3 + 3 : 0;
    if (len > STDIN_MAX + (d64 ? 3 : 0)) {
        json_decref(b);
        return hx_problem(h, 413, GS_ETOOBIG, NULL, "at most %d bytes of stdin per request",
                          STDIN_MAX);
    }
    json_t *bytes = NULL;
    if (d64) {
        unsigned char *buf = malloc(len + 1);
        if (!buf) abort();
        long n = b64_decode(json_string_value(d64), json_string_length(d64), buf);
        if (n > STDIN_MAX) n = -2;
        bytes = n >= 0 ? json_stringn_nocheck((const char *)buf, (size_t)n) : NULL;
        free(buf);
        if (n < 0) {
            json_decref(b);
            return n == -2 ? hx_problem(h, 413, GS_ETOOBIG, NULL,
                                        "at most %d bytes of stdin per request", STDIN_MAX)
                           : hx_problem(h, 400, GS_EPARSE, NULL, "'data_b64' is not base64");
        }
    } else {
        bytes = json_stringn_nocheck(d ? json_string_value(d) : "", d ? json_string_length(d) : 0);
    }
    gsd_jobrow row;
    if (hx_load_job(h, ids, &row, &ret)) {
        json_decref(b);
        json_decref(bytes);
        return ret;
    }
    int64_t id = row.id;
    gsd_jobrow_release(&row);
    gsd_cmd *c = hx_caller_cmd(h, GSD_CMD_STDIN);
    c->job_id = id;
    c->args = json_pack("{s:o,s:b}", "data", bytes, "eof", json_is_true(eof));
    json_decref(b);
    return hx_post_and_reply(h, c);
}
