/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_nodes.c - node administration in the REST API (issue 16):
 * POST /v1/nodes/{name}/drain, /resume and /down with an optional body
 * {"reason": "..."} (admins only: 401 without a token where tokens are
 * required - http.c's dispatch -, 403 for others, 404 for an unknown node,
 * 409 for a transition that makes no sense: nodeadm.c), and what GET
 * /v1/nodes and /v1/nodes/{name} add for it: the admin state (admin_state,
 * admin_reason, admin_by, admin_since) and the node's last events; and
 * each watched GPU's health (issue 17: hx_gpu_health_json).
 *
 * Invariants: like every handler file, nothing here touches the engine: the
 * change is a command for the scheduler thread (gsd_do_node_admin), the
 * views come from the published snapshot and committed rows.
 */
#include <stdio.h>
#include <string.h>

#include "http_int.h"

/* The body {"reason": "text"} (or none), then the command. */
static enum MHD_Result admin_cmd(hctx *h, const char *name, gsd_cmd_kind kind, const char *verb)
{
    if (!h->id.admin) return hx_problem(h, 403, GS_EPERM, NULL, "only an admin may %s nodes", verb);
    json_error_t err;
    json_t *b =
        h->rq->len ? json_loadb(h->rq->body, h->rq->len, JSON_REJECT_DUPLICATES, &err) : NULL;
    json_t *r = b ? json_object_get(b, "reason") : NULL;
    if ((h->rq->len && !json_is_object(b)) || (r && !json_is_string(r)) ||
        (b && json_object_size(b) != (r ? 1u : 0u)) ||
        (r && strlen(json_string_value(r)) >= sizeof((gsd_cmd *)0)->why)) {
        json_decref(b);
        return hx_problem(h, 400, GS_EPARSE, json_pack("{s:s}", "field", "reason"),
                          "expected no body or a JSON body {\"reason\": \"text\"} (under 256 "
                          "bytes)");
    }
    if (strlen(name) >= sizeof((gsd_cmd *)0)->node) {
        json_decref(b);
        return hx_problem(h, 404, GS_ENOENT, NULL, "no such node (name too long)");
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

enum MHD_Result hx_node_drain(hctx *h, const char *name, const char *sub)
{
    (void)sub;
    return admin_cmd(h, name, GSD_CMD_NODE_DRAIN, "drain");
}

enum MHD_Result hx_node_resume(hctx *h, const char *name, const char *sub)
{
    (void)sub;
    return admin_cmd(h, name, GSD_CMD_NODE_RESUME, "resume");
}

enum MHD_Result hx_node_down(hctx *h, const char *name, const char *sub)
{
    (void)sub;
    return admin_cmd(h, name, GSD_CMD_NODE_DOWN, "take down");
}

void hx_node_admin_json(json_t *o, const gsd_nview *n)
{
    json_object_set_new(o, "admin_state", n->admin ? json_string(n->admin) : json_null());
    if (!n->admin) return;
    char ts[40];
    gsd_time_str(n->admin_since, ts, sizeof ts);
    json_object_set_new(o, "admin_reason", n->admin_why ? json_string(n->admin_why) : json_null());
    json_object_set_new(o, "admin_by", n->admin_by ? json_string(n->admin_by) : json_null());
    json_object_set_new(o, "admin_since", json_string(ts));
}

/* How many of a node's events GET /v1/nodes/{name} shows (the newest). */
#define NODE_EVENTS_MAX 20

void hx_node_events_json(hctx *h, json_t *o, const char *name)
{
    gsd_reader *rd = gsd_store_reader(h->g->store);
    if (!rd) return;
    gsd_event *ev = NULL;
    size_t n = 0;
    json_t *arr = json_array();
    if (!gsd_reader_node_events(rd, name, NODE_EVENTS_MAX, &ev, &n)) {
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_pack("{s:I,s:s}", "seq", (json_int_t)ev[i].seq, "type",
                                  ev[i].type ? ev[i].type : "?");
            hx_put_time(e, "time", "time_us", ev[i].t);
            json_object_set_new(e, "reason",
                                ev[i].reason ? json_string(ev[i].reason) : json_null());
            json_array_append_new(arr, e);
        }
    }
    gsd_events_free(ev, n);
    gsd_store_reader_put(h->g->store, rd);
    json_object_set_new(o, "events", arr);
}

static json_t *num_or_null(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

json_t *hx_gpu_health_json(const gsd_gview *gv)
{
    char ts[40] = "";
    if (gv->health_since) gsd_time_str(gv->health_since, ts, sizeof ts);
    json_t *o = json_object();
    json_object_set_new(o, "healthy", json_boolean(gv->health == 1));
    json_object_set_new(o, "reason", gv->health_why ? json_string(gv->health_why) : json_null());
    json_object_set_new(o, "since", ts[0] ? json_string(ts) : json_null());
    json_object_set_new(o, "temperature_c", num_or_null(gv->temp_c));
    json_object_set_new(o, "utilization", num_or_null(gv->util));
    json_object_set_new(o, "memory_used", num_or_null(gv->mem_used));
    json_object_set_new(o, "memory_total", num_or_null(gv->mem_total));
    json_object_set_new(o, "ecc_uncorrected", num_or_null(gv->ecc_uncorrected));
    json_object_set_new(o, "xid_errors", json_integer(gv->xid_total));
    json_object_set_new(o, "xid_last", gv->xid_last ? json_integer(gv->xid_last) : json_null());
    return o;
}
