/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elastic.c - the live elastic controller (issue 13, docs/elastic.md): what
 * the daemon does for elastic jobs (spec max_gpus > 0) around the engine's
 * rescale state machine (gsched/job.h: RUNNING(k) -> DRAINING(k -> k') ->
 * RESIZING -> RUNNING(k'), LAUNCHING until the first hint).
 *
 *   - a DRAIN record (gs_engine_rescale, from a policy, `gsched resize` or a
 *     preemption that drains) is persisted with its kind, target, reserved
 *     GPUs and reason; once committed the job's control file (GSCHED_CONTROL,
 *     JSON {"generation":g,"target_gpus":k',"deadline":unix_s}) is written
 *     (atomically: a temporary file renamed) and the old generation gets the
 *     stop protocol with the drain timeout (the spec's drain_timeout, else
 *     the engine's): SIGTERM to every task's process group, SIGKILL at the
 *     deadline.  Its end is reported as gs_engine_task_exited (events.c):
 *     143 or 0 = checkpointed, anything else = forced;
 *   - the engine's START for the next generation is launched as any start
 *     (commit.c), with the elastic environment (exec.c gsd_exec_env_common:
 *     GSCHED_GENERATION, GSCHED_NUM_GPUS, GSCHED_CONTROL, GSCHED_HINTS,
 *     GSCHED_CHECKPOINT_DIR kept across generations) and a new MASTER_PORT;
 *   - hints: rank 0 appends JSON lines to GSCHED_HINTS; each cycle the daemon
 *     reads the new complete lines of every running elastic job (at most
 *     GSD_HINT_READ bytes per job and cycle; a line that is not a JSON object
 *     with an integer "step", or longer than the read, is skipped and counted
 *     in hints_bad), keeps the last one (shown in views), takes a new ckpt_step
 *     as the job's last checkpoint (gs_engine_checkpointed: a later forced
 *     drain loses only the work after it), and the first hint of a generation ends its
 *     LAUNCHING phase (a "training" event);
 *   - `POST /v1/jobs/ID/resize` (gsd_do_resize): an operator rescale.
 *
 * Durable state: jobs.elastic (store.h, JSON) holds what recovery needs to
 * put a job caught DRAINING back into DRAINING on the same reservation, the
 * engine's counters and how far the hints file was read.
 *
 * Invariants: the control file is written and the stop sent only after the
 * DRAIN is committed (gsd_act); the daemon reads files in the job's
 * directory without following links, and only regular files with one link
 * (the job's account owns the directory); nothing here changes a job's
 * state except through the engine.  Scheduler thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gsd_sched.h"

#define GSD_HINT_READ (64 * 1024) /* bytes of a hints file read per job and cycle */

/* ---- state and its durable form ------------------------------------------------------------ */

gsd_elastic *gsd_el(gsd_jobx *x)
{
    if (!gsd_spec_elastic(&x->spec)) return NULL;
    if (!x->el) {
        x->el = calloc(1, sizeof *x->el);
        if (!x->el) abort();
        x->el->ckpt_step = -1;
    }
    return x->el;
}

void gsd_el_free(gsd_jobx *x)
{
    if (!x->el) return;
    free(x->el->resv);
    free(x->el->reason);
    free(x->el->json);
    free(x->el);
    x->el = NULL;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case GS_RESCALE_OPERATOR: return "operator";
    case GS_RESCALE_PREEMPT: return "preempt";
    default: return "policy";
    }
}

static int kind_parse(const char *s)
{
    if (s && !strcmp(s, "operator")) return GS_RESCALE_OPERATOR;
    if (s && !strcmp(s, "preempt")) return GS_RESCALE_PREEMPT;
    return GS_RESCALE_POLICY;
}

const char *gsd_el_json(gsd_jobx *x)
{
    gsd_elastic *el = gsd_el(x);
    if (!el) return NULL;
    json_t *o = json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:i,s:I}", "generation", el->generation,
                          "rescales", el->rescales, "failures", el->failures, "hints_off",
                          (json_int_t)el->hints_off, "hints", (json_int_t)el->hints, "hints_bad",
                          (json_int_t)el->hints_bad, "ckpt_step", (json_int_t)el->ckpt_step,
                          "hint_gen", el->hint_gen, "model_hints", (json_int_t)el->model_hints);
    if (el->resv || x->stop == GSD_STOP_DRAIN) {
        json_object_set_new(o, "from_gpus", json_integer(el->from_gpus));
        json_object_set_new(o, "target_gpus", json_integer(el->target_gpus));
        json_object_set_new(o, "resv", json_string(el->resv ? el->resv : ""));
        json_object_set_new(o, "kind", json_string(kind_name(el->kind)));
        json_object_set_new(o, "reason", json_string(el->reason ? el->reason : ""));
        json_object_set_new(o, "drain_since_us", json_integer(el->drain_since));
        json_object_set_new(o, "drain_timeout_us", json_integer(el->drain_timeout));
    }
    free(el->json);
    el->json = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    if (!el->json) abort();
    return el->json;
}

static int64_t jint(json_t *o, const char *k, int64_t def)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

int gsd_el_load(gsd_jobx *x, const char *js)
{
    gsd_elastic *el = gsd_el(x);
    if (!el || !js) return 0;
    json_t *o = json_loads(js, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return GS_EPARSE;
    }
    el->generation = (int32_t)jint(o, "generation", 0);
    el->rescales = (int32_t)jint(o, "rescales", 0);
    el->failures = (int32_t)jint(o, "failures", 0);
    el->hints_off = jint(o, "hints_off", 0);
    el->hints = jint(o, "hints", 0);
    el->hints_bad = jint(o, "hints_bad", 0);
    el->ckpt_step = jint(o, "ckpt_step", -1);
    el->hint_gen = (int32_t)jint(o, "hint_gen", 0);
    el->model_hints = jint(o, "model_hints", 0);
    const char *resv = json_string_value(json_object_get(o, "resv"));
    free(el->resv);
    el->resv = NULL;
    if (resv && json_object_get(o, "target_gpus")) {
        el->resv = gsd_xstrdup(resv);
        el->from_gpus = (int32_t)jint(o, "from_gpus", 0);
        el->target_gpus = (int32_t)jint(o, "target_gpus", 0);
        el->kind = kind_parse(json_string_value(json_object_get(o, "kind")));
        free(el->reason);
        el->reason = gsd_xstrdup(json_string_value(json_object_get(o, "reason")));
        el->drain_since = jint(o, "drain_since_us", 0);
        el->drain_timeout = jint(o, "drain_timeout_us", 0);
    }
    json_decref(o);
    return 0;
}

gs_time gsd_el_drain_timeout(gsd_sched *g, const gsd_jobx *x)
{
    if (x->spec.drain_timeout > 0) return x->spec.drain_timeout;
    gs_time t = gs_engine_drain_timeout(g->e);
    return t > 0 ? t : 60 * GS_SEC;
}

void gsd_el_path(const gsd_sched *g, int64_t id, const char *file, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%lld/%s", g->log_dir, (long long)id, file);
}

/* ---- records ------------------------------------------------------------------------------- */

static char *gpu_list(const int32_t *v, int n)
{
    size_t cap = (size_t)n * 12 + 1, k = 0;
    char *s = malloc(cap);
    if (!s) abort();
    s[0] = '\0';
    for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, i ? ",%d" : "%d", v[i]);
    return s;
}

void gsd_el_record(gsd_sched *g, const gs_job *j, gsd_jobx *x, const gs_record *r)
{
    gsd_elastic *el = gsd_el(x);
    if (!el) return;
    el->generation = (int32_t)j->generation;
    el->rescales = j->rescales;
    el->failures = j->failures;
    if (r->type == GS_REC_DRAIN) {
        el->from_gpus = j->gpus;
        el->target_gpus = j->target_gpus;
        free(el->resv);
        el->resv = gpu_list(j->resv, j->nresv);
        el->kind = j->rescale_kind;
        free(el->reason);
        el->reason = gsd_xstrdup(r->reason ? r->reason : "");
        el->drain_since = r->t;
        el->drain_timeout = gsd_el_drain_timeout(g, x);
        if (x->stop == GSD_STOP_NONE) x->stop = GSD_STOP_DRAIN;
        gsd_push_rec(g, GS_REC_DRAIN, j->slot, r->t,
                     "%s rescale %d -> %d GPUs (generation %d): %s; SIGTERM, SIGKILL after %llds",
                     kind_name(el->kind), el->from_gpus, el->target_gpus, el->generation,
                     el->reason, (long long)(el->drain_timeout / GS_SEC));
        return;
    }
    /* RESCALE: the old generation is gone (RESIZING); a START (or a REQUEUE) follows */
    gsd_push_rec(g, GS_REC_RESCALE, j->slot, r->t, "%d -> %d GPUs%s%s%s%s", el->from_gpus,
                 el->target_gpus, el->outcome[0] ? ": " : "", el->outcome,
                 r->reason && *r->reason ? "; " : "", r->reason ? r->reason : "");
    el->outcome[0] = '\0';
    if (x->stop == GSD_STOP_DRAIN) x->stop = GSD_STOP_NONE;
    free(el->resv);
    el->resv = NULL;
    free(el->reason);
    el->reason = NULL;
}

/* Write the control file of job id atomically (a temporary file renamed over it), in the job's
 * directory, following no link.  0 or -1 (errno). */
static int write_control(gsd_sched *g, int64_t id, const char *text)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%lld", g->log_dir, (long long)id);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return -1;
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".control.%ld.tmp", (long)getpid());
    unlinkat(dfd, tmp, 0);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = -1, e = 0;
    if (fd >= 0) {
        size_t len = strlen(text);
        ssize_t w = write(fd, text, len);
        e = errno;
        if (fchmod(fd, 0644) != 0) e = errno;
        close(fd);
        if (w == (ssize_t)len && renameat(dfd, tmp, dfd, "control.json") == 0)
            rc = 0;
        else {
            if (w == (ssize_t)len) e = errno;
            unlinkat(dfd, tmp, 0);
        }
    } else {
        e = errno;
    }
    close(dfd);
    errno = e;
    return rc;
}

void gsd_el_drain_act(gsd_sched *g, const gs_job *j, gs_time now)
{
    gsd_jobx *x = gsd_jx(g, j->slot);
    gsd_elastic *el = gsd_el(x);
    if (!el) return;
    gs_time to = el->drain_timeout > 0 ? el->drain_timeout : gsd_el_drain_timeout(g, x);
    char text[160];
    snprintf(text, sizeof text, "{\"generation\":%d,\"target_gpus\":%d,\"deadline\":%lld}\n",
             el->generation, el->target_gpus, (long long)((now + to) / GS_SEC));
    if (write_control(g, j->id, text) != 0)
        gsd_log("job %lld: cannot write its control file under %s/%lld: %s (the drain goes on: "
                "SIGTERM)",
                (long long)j->id, g->log_dir, (long long)j->id, strerror(errno));
    gsd_log("job %lld draining (generation %d, %d -> %d GPUs): SIGTERM, SIGKILL after %llds",
            (long long)j->id, el->generation, el->from_gpus, el->target_gpus,
            (long long)(to / GS_SEC));
    if (gsd_exec_stop(g->x, j->id, now, to) == GS_ENOENT)
        gsd_log("job %lld: no tasks to drain", (long long)j->id);
}

/* ---- hints --------------------------------------------------------------------------------- */

static int hint_num(json_t *o, const char *k, double *out)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v)) return -1;
    *out = json_number_value(v);
    return 0;
}

/* One line: 0 and the hint, or -1 (not a hint). */
static int parse_hint(const char *line, size_t len, gs_hint *h, int *gen)
{
    json_error_t err;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    memset(h, 0, sizeof *h);
    h->grad_sqr = h->grad_var = -1;
    h->ckpt_step = -1;
    *gen = 0;
    double st = -1, sa = 0, stt = 0, syt = 0, lb = 0, ac = 0, gs = -1, gv = -1, ck = -1, ge = 0;
    int bad = !json_is_integer(json_object_get(o, "step")) || hint_num(o, "step", &st) ||
              hint_num(o, "samples", &sa) || hint_num(o, "step_time", &stt) ||
              hint_num(o, "sync_time", &syt) || hint_num(o, "local_bsz", &lb) ||
              hint_num(o, "accum", &ac) || hint_num(o, "grad_sqr", &gs) ||
              hint_num(o, "grad_var", &gv) || hint_num(o, "ckpt_step", &ck) ||
              hint_num(o, "generation", &ge);
    json_decref(o);
    if (bad || st < 0 || sa < 0 || stt < 0 || syt < 0 || lb < 0 || ac < 0 || st > 9e15 ||
        sa > 9e15 || ck > 9e15 || lb > 1e9 || ac > 1e9)
        return -1;
    h->step = (int64_t)st;
    h->samples = (int64_t)sa;
    h->step_time = stt;
    h->sync_time = syt;
    h->local_bsz = (int)lb;
    h->accum = (int)ac;
    h->grad_sqr = gs;
    h->grad_var = gv;
    h->ckpt_step = ck >= 0 ? (int64_t)ck : -1;
    *gen = ge > 0 && ge < 1e9 ? (int)ge : 0;
    return 0;
}

/* Read the new complete lines of job j's hints file (bounded).  1 when something changed. */
static int read_hints(gsd_sched *g, const gs_job *j, gsd_jobx *x, gs_time now)
{
    gsd_elastic *el = x->el;
    char path[PATH_MAX];
    gsd_el_path(g, j->id, "hints.jsonl", path, sizeof path);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        return 0;
    }
    if (st.st_size < el->hints_off) el->hints_off = 0; /* replaced or truncated: from the top */
    if (st.st_size == el->hints_off) {
        close(fd);
        return 0;
    }
    static char buf[GSD_HINT_READ];
    ssize_t n = pread(fd, buf, sizeof buf, el->hints_off);
    close(fd);
    if (n <= 0) return 0;
    size_t used = 0;
    int changed = 0;
    if (el->skipping) { /* the rest of a line too long to read: up to its newline */
        char *nl = memchr(buf, '\n', (size_t)n);
        used = nl ? (size_t)(nl - buf) + 1 : (size_t)n;
        el->skipping = !nl;
        changed = 1;
    }
    while (used < (size_t)n) {
        char *nl = memchr(buf + used, '\n', (size_t)n - used);
        if (!nl) break;
        size_t len = (size_t)(nl - (buf + used));
        gs_hint h;
        int gen;
        if (len == 0) {
            used++;
            continue;
        }
        if (parse_hint(buf + used, len, &h, &gen) != 0) {
            el->hints_bad++;
        } else {
            el->hints++;
            el->step = h.step;
            el->samples = h.samples;
            el->step_time = h.step_time;
            el->sync_time = h.sync_time;
            el->local_bsz = h.local_bsz;
            el->accum = h.accum;
            /* the goodput model learns from it (its throughput fit, gradient statistics); a hint
             * the model refuses (no step time, no local batch) is kept all the same */
            if (g->goodput && j->app && j->state == GS_JOB_RUNNING) {
                int mr = gs_goodput_hint(g->goodput, j, &h);
                if (mr == GS_ENOMEM) abort();
                if (mr == 0) el->model_hints++;
            }
            if (h.ckpt_step > el->ckpt_step) {
                /* a checkpoint: a later forced drain loses only what follows it */
                el->ckpt_step = h.ckpt_step;
                if (j->state == GS_JOB_RUNNING) gs_engine_checkpointed(g->e, j, now);
            }
            /* the first hint of a generation ends its LAUNCHING phase (a line that names an
             * older generation is a late one of the old processes) */
            if (j->state == GS_JOB_RUNNING && el->hint_gen < (int32_t)j->generation &&
                (!gen || gen == (int)j->generation)) {
                el->hint_gen = (int32_t)j->generation;
                gsd_push_rec(g, GSD_EV_TRAINING, j->slot, now,
                             "generation %u on %d GPUs: first step reported (step %lld)",
                             j->generation, j->gpus, (long long)h.step);
            }
        }
        used += len + 1;
        changed = 1;
    }
    if (used == 0 && (size_t)n == sizeof buf) {
        /* a line longer than a whole read: skip it (counted once) */
        el->hints_bad++;
        el->skipping = 1;
        used = (size_t)n;
        changed = 1;
    }
    el->hints_off += (int64_t)used;
    return changed;
}

void gsd_el_hints_drained(gsd_sched *g, const gs_job *j, gs_time now)
{
    gsd_jobx *x = gsd_jx(g, j->slot);
    if (!x->el) return;
    for (int i = 0; i < 64 && read_hints(g, j, x, now); i++) {
    }
    gsd_mark_dirty(g, j->slot);
}

void gsd_el_hints(gsd_sched *g, gs_time now)
{
    for (size_t i = 0; i < g->nrun; i++) {
        int32_t s = g->runv[i];
        gsd_jobx *x = gsd_jx(g, s);
        if (!x->el || x->cat != 2) continue;
        const gs_job *j = gs_engine_job(g->e, (size_t)s);
        if (j->state != GS_JOB_RUNNING && j->state != GS_JOB_DRAINING) continue;
        if (read_hints(g, j, x, now)) {
            gsd_mark_dirty(g, s);
            gsd_chunk_touch(g, s);
            g->changed = 1;
        }
    }
}

/* ---- the resize command -------------------------------------------------------------------- */

void gsd_do_resize(gsd_sched *g, gsd_cmd *c, gs_time now)
{
    (void)now;
    const gs_job *j = gs_engine_find_job(g->e, c->job_id);
    if (!j) { /* forgotten (its memory given back) or moved by retention: issue 16, acct.c */
        gsd_acct_gone(g, c, "", ": only a running job can be resized");
        return;
    }
    if (!j || (!c->admin && strcmp(j->user, c->user))) {
        gsd_cmd_fail(c, 404, GS_ENOENT, "no job %lld", (long long)c->job_id);
        return;
    }
    gsd_jobx *x = gsd_jx(g, j->slot);
    if (gs_job_state_final(j->state)) { /* (its spec is released once that is published) */
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s: only a running job can be resized",
                     (long long)j->id, gs_job_state_name(j->state));
        return;
    }
    if (!gsd_spec_elastic(&x->spec)) {
        gsd_cmd_fail(c, 409, GS_ESTATE,
                     "job %lld is not elastic (submit it with --gpus MIN-MAX or max_gpus)",
                     (long long)j->id);
        return;
    }
    int n = c->gpus;
    if (!gsd_spec_size_valid(&x->spec, n)) {
        char sizes[400] = "";
        size_t k = 0;
        if (x->spec.nsizes)
            for (int i = 0; i < x->spec.nsizes && k < sizeof sizes - 16; i++)
                k += (size_t)snprintf(sizes + k, sizeof sizes - k, i ? ",%d" : "%d",
                                      x->spec.sizes[i]);
        else
            snprintf(sizes, sizeof sizes, "multiples of %d in [%d, %d]", j->gpus_per_task,
                     x->spec.min_gpus > j->gpus_per_task ? x->spec.min_gpus : j->gpus_per_task,
                     x->spec.max_gpus);
        gsd_cmd_fail(c, 400, GS_ERANGE, "'gpus': %d is not a size of job %lld (sizes: %s)", n,
                     (long long)j->id, sizes);
        c->result = json_pack("{s:s}", "field", "gpus");
        return;
    }
    if (j->state != GS_JOB_RUNNING || x->stop != GSD_STOP_NONE) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld is %s%s%s: only a running job can be resized",
                     (long long)j->id, gs_job_state_name(j->state),
                     x->stop != GSD_STOP_NONE ? ", stopping: " : "",
                     x->stop != GSD_STOP_NONE ? gsd_stop_name(x->stop) : "");
        return;
    }
    if (n == j->gpus) {
        gsd_cmd_fail(c, 409, GS_ESTATE, "job %lld already runs on %d GPUs", (long long)j->id, n);
        return;
    }
    /* its GPUs: a shrink keeps its first tasks; a growth keeps them all and adds free GPUs,
     * placed as a gang of the extra tasks */
    int *gpus = calloc((size_t)n, sizeof *gpus);
    if (!gpus) abort();
    int keep = n < j->nalloc ? n : j->nalloc;
    for (int i = 0; i < keep; i++) gpus[i] = j->alloc[i];
    if (n > keep) {
        gs_place_req rq = {.ntasks = (n - keep) / j->gpus_per_task,
                           .gpus_per_task = j->gpus_per_task,
                           .gpu_type = j->gpu_type,
                           .cpus_per_task = j->cpus_per_task,
                           .mem_mb_per_task = j->mem_mb_per_task,
                           .mode = GS_PLACE_CONSOLIDATE,
                           .level = GS_LOCALITY_ANY,
                           .fit = GS_FIT_FIRST,
                           .scope = 0};
        if (gs_place_find(g->c, &rq, gpus + keep) != 0) {
            free(gpus);
            gsd_cmd_fail(c, 409, GS_ENOFIT,
                         "job %lld cannot grow to %d GPUs now: %d more free GPU(s) needed, %d "
                         "free",
                         (long long)j->id, n, n - keep, gs_cluster_free(g->c));
            return;
        }
    }
    char why[200];
    snprintf(why, sizeof why, "resized by %s: %d -> %d GPUs", c->user, j->gpus, n);
    int from = j->gpus;
    int rc = gs_engine_rescale(g->e, j, gpus, n, GS_RESCALE_OPERATOR, gsd_intern(g, why));
    free(gpus);
    if (rc) {
        int status = rc == GS_ERANGE ? 400 : rc == GS_ENOMEM ? 500 : 409;
        gsd_cmd_fail(c, status, rc, "job %lld cannot be resized to %d GPUs: %s", (long long)j->id,
                     n, gs_strerror(rc));
        return;
    }
    g->changed = 1;
    c->status = 202;
    c->result = json_pack("{s:I,s:i,s:i,s:s,s:I}", "id", (json_int_t)j->id, "from", from, "to", n,
                          "state", gs_job_state_name(j->state), "drain_timeout_seconds",
                          (json_int_t)(gsd_el_drain_timeout(g, x) / GS_SEC));
}
