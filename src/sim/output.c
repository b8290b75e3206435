/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.c - summary.json, jobs.csv, timeline.csv, compare.csv, the per-VC,
 * per-user and per-size breakdowns (vcs.csv, users.csv, sizes.csv; metrics in
 * docs/metrics.md) and the comparison table on stdout.
 *
 * Invariants: output depends only on the results (wall_s in summary.json is
 * the single exception); numbers are formatted with fixed rules (times as
 * exact decimal seconds, ratios rounded), never with locale-dependent or
 * address-dependent choices; files are written to "<path>.tmp" then renamed
 * so a crash never leaves a half-written file under the final name.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gsched/version.h"
#include "sim.h"

void gs_fmt_sec(char *buf, size_t cap, gs_time t)
{
    int neg = t < 0;
    uint64_t u = neg ? (uint64_t)(-(t + 1)) + 1 : (uint64_t)t;
    uint64_t whole = u / 1000000, frac = u % 1000000;
    if (!frac) {
        snprintf(buf, cap, "%s%llu", neg ? "-" : "", (unsigned long long)whole);
        return;
    }
    char f[8];
    snprintf(f, sizeof f, "%06llu", (unsigned long long)frac);
    for (int i = 5; i > 0 && f[i] == '0'; i--) f[i] = '\0';
    snprintf(buf, cap, "%s%llu.%s", neg ? "-" : "", (unsigned long long)whole, f);
}

static FILE *open_tmp(const char *path, char *tmp, size_t cap)
{
    snprintf(tmp, cap, "%s.tmp", path);
    return fopen(tmp, "w");
}

static int close_tmp(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return GS_EIO;
    }
    return 0;
}

void gs_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ",suspends,packs,..." : the listed mechanisms' keys (GS_MECH_MAP order). */
static void mech_header(FILE *f)
{
    for (int m = 0; m < GS_MECH_N; m++)
        if (gs_mech_get((gs_mech)m)->listed) fprintf(f, ",%s", gs_mech_get((gs_mech)m)->key);
}

/* GPU-seconds all mechanisms cost (GS_MECH_MAP order). */
static double mech_cost(const double *v)
{
    double c = 0;
    for (int m = 0; m < GS_MECH_N; m++) c += v[m];
    return c;
}

/* GPU types of gpus[0..n), '+'-joined in type order ("V100", "K80+V100"); nothing if n == 0. */
static void gpu_types(FILE *f, const gs_cluster *c, const int32_t *gpus, int n)
{
    uint64_t seen = 0;
    for (int k = 0; k < n; k++) {
        int t = gs_cluster_gpu(c, gpus[k])->type;
        if (t >= 0 && t < 64) seen |= (uint64_t)1 << t;
    }
    int first = 1;
    for (int t = 0; t < 64; t++) {
        if (!(seen >> t & 1)) continue;
        if (!first) fputc('+', f);
        first = 0;
        const char *name = gs_cluster_gpu_type_name(c, t);
        gs_csv_field(f, name ? name : "");
    }
}

int gs_write_jobs(const char *path, const gs_sim_result *r)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) return GS_EIO;
    const gs_engine *e = r->engine;
    const gs_cluster *c = gs_engine_cluster(e);
    fputs("job_id,submit_s,start_s,end_s,jct_s,queue_s,gpus,preemptions,state,placement,vc,reason,"
          "group",
          f);
    mech_header(f);
    fputs(",suspended_s,packed_s,cost_gpu_s,pending_s,ideal_s,slowdown,rho,model,user,gpu_type\n",
          f);
    char a[32], b[32], cc[32], dd[32], q[32];
    size_t capp = 256;
    char *pl = malloc(capp);
    if (!pl) abort();
    for (size_t i = 0; i < gs_engine_njobs(e); i++) {
        const gs_job *j = gs_engine_job(e, i);
        gs_fmt_sec(a, sizeof a, j->submit);
        if (j->first_start != GS_TIME_NONE)
            gs_fmt_sec(b, sizeof b, j->first_start);
        else
            b[0] = '\0';
        if (j->end != GS_TIME_NONE && j->state != GS_JOB_REJECTED) {
            gs_fmt_sec(cc, sizeof cc, j->end);
            gs_fmt_sec(dd, sizeof dd, j->end - j->submit);
        } else {
            cc[0] = dd[0] = '\0';
        }
        if (j->state == GS_JOB_REJECTED)
            q[0] = '\0';
        else
            gs_fmt_sec(q, sizeof q, r->jm[i].queue);
        /* placement of the last run: "node:gpu node:gpu ..." */
        pl[0] = '\0';
        size_t len = 0;
        const int32_t *g = j->alloc ? j->alloc : j->last_alloc;
        int ng = j->alloc ? j->nalloc : j->nlast_alloc;
        for (int k = 0; k < ng; k++) {
            const gs_gpu *gp = gs_cluster_gpu(c, g[k]);
            const char *nn = gs_cluster_node(c, gp->node)->name;
            size_t need = len + strlen(nn) + 16;
            if (need > capp) {
                while (capp < need) capp *= 2;
                char *np = realloc(pl, capp);
                if (!np) abort();
                pl = np;
            }
            len += (size_t)snprintf(pl + len, capp - len, "%s%s:%d", k ? " " : "", nn, gp->local);
        }
        fprintf(f, "%lld,%s,%s,%s,%s,%s,%d,%d,%s,", (long long)j->id, a, b, cc, dd, q, j->gpus,
                j->preemptions, gs_job_state_name(j->state));
        gs_csv_field(f, pl);
        fputc(',', f);
        gs_csv_field(f, j->vc_name);
        fputc(',', f);
        gs_csv_field(f, j->reason && gs_job_state_final(j->state) && j->state != GS_JOB_DONE
                            ? j->reason
                            : "");
        char su[32], pk[32];
        gs_fmt_sec(su, sizeof su, gs_job_suspended(j, j->end != GS_TIME_NONE ? j->end : 0));
        gs_fmt_sec(pk, sizeof pk, gs_job_packed(j, j->end != GS_TIME_NONE ? j->end : 0));
        double costs[GS_MECH_N];
        fprintf(f, ",%lld", (long long)j->group);
        for (int m = 0; m < GS_MECH_N; m++) {
            costs[m] = gs_job_mech_gpu_s(j, (gs_mech)m);
            if (gs_mech_get((gs_mech)m)->listed)
                fprintf(f, ",%llu", (unsigned long long)gs_job_mech_count(j, (gs_mech)m));
        }
        fprintf(f, ",%s,%s,%.3f", su, pk, mech_cost(costs));
        /* issue 15 (docs/metrics.md): queue_s above is pending + suspended, pending_s the
         * pending intervals alone; slowdown and rho for DONE jobs */
        const gs_job_metrics *m = &r->jm[i];
        if (j->state == GS_JOB_REJECTED)
            q[0] = '\0';
        else
            gs_fmt_sec(q, sizeof q, gs_job_queued(j, j->end != GS_TIME_NONE ? j->end : 0));
        gs_fmt_sec(a, sizeof a, m->ideal);
        fprintf(f, ",%s,%s,", q, a);
        if (j->state == GS_JOB_DONE)
            fprintf(f, "%.6f,%.6f", m->slowdown, m->rho);
        else
            fputc(',', f);
        fputc(',', f);
        gs_csv_field(f, j->model ? j->model : "-");
        fputc(',', f);
        gs_csv_field(f, j->user ? j->user : "-");
        fputc(',', f);
        gpu_types(f, c, g, ng);
        fputc('\n', f);
    }
    free(pl);
    return close_tmp(f, tmp, path);
}

int gs_write_timeline(const char *path, const gs_sim_result *r)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) return GS_EIO;
    fputs("time_s,allocated_gpus,running_jobs,pending_jobs,suspended_jobs,packed_gpus", f);
    fputs(r->elastic ? ",goodput\n" : "\n", f);
    char t[32];
    for (size_t i = 0; i < r->ntl; i++) {
        gs_fmt_sec(t, sizeof t, r->tl[i].t);
        fprintf(f, "%s,%d,%d,%d,%d,%d", t, r->tl[i].alloc, r->tl[i].running, r->tl[i].pending,
                r->tl[i].suspended, r->tl[i].packed);
        if (r->elastic)
            fprintf(f, ",%.6f\n", r->tl[i].goodput);
        else
            fputc('\n', f);
    }
    return close_tmp(f, tmp, path);
}

static json_t *jreal(double v)
{
    return json_real(v);
}

/* The users or sizes breakdown as a JSON array (docs/metrics.md). */
static json_t *groups_json(const gs_group_stats *g, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const gs_group_stats *s = &g[i];
        json_t *v = json_object();
        if (s->name)
            json_object_set_new(v, "user", json_string(s->name));
        else
            json_object_set_new(v, "gpus", json_integer(s->gpus));
        json_object_set_new(v, "jobs", json_integer((json_int_t)s->jobs));
        json_object_set_new(v, "jobs_done", json_integer((json_int_t)s->done));
        json_object_set_new(v, "jobs_rejected", json_integer((json_int_t)s->rejected));
        json_object_set_new(v, "gpu_h", jreal(s->gpu_h));
        json_object_set_new(v, "avg_jct_s", jreal(s->avg_jct_s));
        json_object_set_new(v, "avg_queue_s", jreal(s->avg_queue_s));
        json_object_set_new(v, "avg_slowdown", jreal(s->avg_slowdown));
        json_object_set_new(v, "median_slowdown", jreal(s->median_slowdown));
        json_object_set_new(v, "p95_slowdown", jreal(s->p95_slowdown));
        json_object_set_new(v, "avg_rho", jreal(s->avg_rho));
        json_object_set_new(v, "max_rho", jreal(s->max_rho));
        json_array_append_new(a, v);
    }
    return a;
}

int gs_write_summary(const char *path, const gs_sim_result *r, const gs_run_info *info)
{
    json_t *o = json_object();
    if (!o) abort();
    json_object_set_new(o, "schema", json_string("gsched.sim.summary/1"));
    json_object_set_new(o, "gsched_version", json_string(GSCHED_VERSION));
    json_object_set_new(o, "policy", json_string(r->policy));
    json_object_set_new(o, "placement", json_string(r->placement));
    json_object_set_new(o, "jobs", json_integer((json_int_t)r->jobs));
    json_object_set_new(o, "jobs_done", json_integer((json_int_t)r->jobs_done));
    json_object_set_new(o, "jobs_rejected", json_integer((json_int_t)r->jobs_rejected));
    json_object_set_new(o, "jobs_failed", json_integer((json_int_t)r->jobs_failed));
    json_object_set_new(o, "jobs_unfinished", json_integer((json_int_t)r->jobs_unfinished));
    json_object_set_new(o, "avg_jct_s", jreal(r->avg_jct_s));
    json_object_set_new(o, "median_jct_s", jreal(r->median_jct_s));
    json_object_set_new(o, "p95_jct_s", jreal(r->p95_jct_s));
    json_object_set_new(o, "p99_jct_s", jreal(r->p99_jct_s));
    json_object_set_new(o, "avg_queue_s", jreal(r->avg_queue_s));
    json_object_set_new(o, "median_queue_s", jreal(r->median_queue_s));
    json_object_set_new(o, "avg_pending_s", jreal(r->avg_pending_s));
    json_object_set_new(o, "median_pending_s", jreal(r->median_pending_s));
    json_object_set_new(o, "makespan_s", jreal(r->makespan_s));
    json_object_set_new(o, "gpu_util", jreal(r->gpu_util));
    json_object_set_new(o, "gpu_job_util", jreal(r->gpu_job_util));
    json_object_set_new(o, "gpu_util_busy", jreal(r->gpu_util_busy));
    json_t *bw = json_object();
    json_object_set_new(bw, "from_s", jreal(gs_time_to_sec(r->busy_from)));
    json_object_set_new(bw, "to_s", jreal(gs_time_to_sec(r->busy_to)));
    json_object_set_new(o, "busy_window", bw);
    json_object_set_new(o, "avg_slowdown", jreal(r->avg_slowdown));
    json_object_set_new(o, "median_slowdown", jreal(r->median_slowdown));
    json_object_set_new(o, "p95_slowdown", jreal(r->p95_slowdown));
    json_object_set_new(o, "avg_rho", jreal(r->avg_rho));
    json_object_set_new(o, "p95_rho", jreal(r->p95_rho));
    json_object_set_new(o, "max_rho", jreal(r->max_rho));
    json_object_set_new(o, "jain_rho", jreal(r->jain_rho));
    json_object_set_new(o, "jain_user_slowdown", jreal(r->jain_user_slowdown));
    json_object_set_new(o, "avg_first_start_s", jreal(r->avg_first_s));
    json_object_set_new(o, "median_first_start_s", jreal(r->median_first_s));
    json_object_set_new(o, "p95_first_start_s", jreal(r->p95_first_s));
    json_object_set_new(o, "preemptions", json_integer((json_int_t)r->preemptions));
    json_t *mech = json_object();
    json_t *cost = json_object();
    for (int m = 0; m < GS_MECH_N; m++) {
        const gs_mech_info *mi = gs_mech_get((gs_mech)m);
        json_object_set_new(mech, mi->key, json_integer((json_int_t)r->mech[m]));
        if (mi->costkey) json_object_set_new(cost, mi->costkey, jreal(r->mech_gpu_s[m]));
    }
    json_object_set_new(mech, "cost_gpu_s", cost);
    json_object_set_new(o, "mechanisms", mech);
    if (r->elastic) { /* traces with elastic jobs or deadlines only (issue 13) */
        json_object_set_new(o, "deadline_jobs", json_integer((json_int_t)r->deadline_jobs));
        json_object_set_new(o, "deadline_met", json_integer((json_int_t)r->deadline_met));
        json_object_set_new(o, "deadline_met_ratio", jreal(r->deadline_met_ratio));
        json_object_set_new(o, "rescales", json_integer((json_int_t)r->rescales));
        json_object_set_new(o, "rescales_per_job", jreal(r->rescales_per_job));
        json_object_set_new(o, "rescale_gpu_s", jreal(r->rescale_gpu_s));
        json_object_set_new(o, "lost_work_gpu_s", jreal(r->lost_work_gpu_s));
        json_object_set_new(o, "avg_goodput", jreal(r->avg_goodput));
    }
    if (r->window) { /* --window: the metrics above count the jobs submitted in it */
        json_t *w = json_object();
        json_object_set_new(w, "start_s", jreal(gs_time_to_sec(r->win_start)));
        json_object_set_new(w, "end_s",
                            r->win_end == GS_TIME_MAX ? json_null()
                                                      : jreal(gs_time_to_sec(r->win_end)));
        json_object_set_new(w, "by", json_string("arrival"));
        json_object_set_new(o, "window", w);
    }
    json_object_set_new(o, "events", json_integer((json_int_t)r->events));
    json_object_set_new(o, "cluster_gpus", json_integer((json_int_t)r->total_gpus));
    json_object_set_new(o, "wall_s", jreal(round(r->wall_s * 1e4) / 1e4));
    json_t *vcs = json_array();
    for (size_t i = 0; i < r->nvcs; i++) {
        const gs_vc_stats *s = &r->vcs[i];
        json_t *v = json_object();
        json_object_set_new(v, "vc", json_string(s->name));
        json_object_set_new(v, "jobs", json_integer((json_int_t)s->jobs));
        json_object_set_new(v, "jobs_done", json_integer((json_int_t)s->done));
        json_object_set_new(v, "jobs_rejected", json_integer((json_int_t)s->rejected));
        json_object_set_new(v, "avg_jct_s", jreal(s->avg_jct_s));
        json_object_set_new(v, "avg_queue_s", jreal(s->avg_queue_s));
        json_object_set_new(v, "median_queue_s", jreal(s->median_queue_s));
        json_object_set_new(v, "p95_queue_s", jreal(s->p95_queue_s));
        json_object_set_new(v, "avg_slowdown", jreal(s->avg_slowdown));
        json_object_set_new(v, "avg_rho", jreal(s->avg_rho));
        json_object_set_new(v, "max_rho", jreal(s->max_rho));
        json_array_append_new(vcs, v);
    }
    json_object_set_new(o, "vcs", vcs);
    json_object_set_new(o, "users", groups_json(r->users, r->nusers));
    json_object_set_new(o, "sizes", groups_json(r->sizes, r->nsizes));
    if (info) {
        json_object_set_new(o, "seed", json_integer((json_int_t)info->seed));
        json_t *params = json_object();
        if (info->params)
            for (size_t i = 0; i < info->params->n; i++)
                json_object_set_new(params, info->params->v[i].key,
                                    json_string(info->params->v[i].val));
        json_object_set_new(o, "params", params);
        json_t *in = json_object();
        json_t *tr = json_object();
        json_object_set_new(tr, "path", json_string(info->trace_path ? info->trace_path : ""));
        json_object_set_new(tr, "format",
                            json_string(info->trace_format ? info->trace_format : ""));
        json_object_set_new(tr, "sha256",
                            json_string(info->trace_sha256 ? info->trace_sha256 : ""));
        json_object_set_new(in, "trace", tr);
        json_t *cl = json_object();
        json_object_set_new(cl, "spec", json_string(info->cluster_spec ? info->cluster_spec : ""));
        if (info->cluster_sha256)
            json_object_set_new(cl, "sha256", json_string(info->cluster_sha256));
        json_object_set_new(in, "cluster", cl);
        if (info->events_path) {
            json_t *ev = json_object();
            json_object_set_new(ev, "path", json_string(info->events_path));
            json_object_set_new(ev, "sha256", json_string(info->events_sha256));
            json_object_set_new(in, "events", ev);
        }
        json_object_set_new(o, "inputs", in);
    }
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) {
        json_decref(o);
        return GS_EIO;
    }
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', f);
    json_decref(o);
    if (rc) {
        fclose(f);
        remove(tmp);
        return GS_EIO;
    }
    return close_tmp(f, tmp, path);
}

int gs_write_compare(const char *path, gs_sim_result *const *rs, size_t n)
{
    /* the columns of aggregate.c's metric table */
    size_t nc = gs_metric_cols(rs, n, NULL, 0);
    gs_metric_col *cols = malloc((nc ? nc : 1) * sizeof *cols);
    if (!cols) abort(); /* programs abort on out-of-memory */
    gs_metric_cols(rs, n, cols, nc);
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) {
        free(cols);
        return GS_EIO;
    }
    fputs("policy,placement", f);
    for (size_t c = 0; c < nc; c++) fprintf(f, ",%s", cols[c].key);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        gs_csv_field(f, rs[i]->policy);
        fprintf(f, ",%s", rs[i]->placement);
        for (size_t c = 0; c < nc; c++) {
            fputc(',', f);
            gs_metric_print(f, &cols[c], gs_metric_value(&cols[c], rs[i]));
        }
        fputc('\n', f);
    }
    free(cols);
    return close_tmp(f, tmp, path);
}

int gs_write_vcs(const char *path, gs_sim_result *const *rs, size_t n)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) return GS_EIO;
    fputs("policy,vc,jobs,jobs_done,jobs_rejected,avg_jct_s,avg_queue_s,median_queue_s,p95_queue_s,"
          "avg_slowdown,avg_rho,max_rho\n",
          f);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < rs[i]->nvcs; k++) {
            const gs_vc_stats *s = &rs[i]->vcs[k];
            gs_csv_field(f, rs[i]->policy);
            fputc(',', f);
            gs_csv_field(f, s->name);
            fprintf(f, ",%zu,%zu,%zu,%.3f,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f\n", s->jobs, s->done,
                    s->rejected, s->avg_jct_s, s->avg_queue_s, s->median_queue_s, s->p95_queue_s,
                    s->avg_slowdown, s->avg_rho, s->max_rho);
        }
    return close_tmp(f, tmp, path);
}

/* users.csv / sizes.csv rows: the group's key column, then its statistics. */
static int write_groups(const char *path, gs_sim_result *const *rs, size_t n, int users)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) return GS_EIO;
    fprintf(f,
            "policy,%s,jobs,jobs_done,jobs_rejected,gpu_h,avg_jct_s,avg_queue_s,avg_slowdown,"
            "median_slowdown,p95_slowdown,avg_rho,max_rho\n",
            users ? "user" : "gpus");
    for (size_t i = 0; i < n; i++) {
        size_t ng = users ? rs[i]->nusers : rs[i]->nsizes;
        for (size_t k = 0; k < ng; k++) {
            const gs_group_stats *s = users ? &rs[i]->users[k] : &rs[i]->sizes[k];
            gs_csv_field(f, rs[i]->policy);
            fputc(',', f);
            if (users)
                gs_csv_field(f, s->name ? s->name : "-");
            else
                fprintf(f, "%d", s->gpus);
            fprintf(f, ",%zu,%zu,%zu,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f,%.6f,%.6f\n", s->jobs, s->done,
                    s->rejected, s->gpu_h, s->avg_jct_s, s->avg_queue_s, s->avg_slowdown,
                    s->median_slowdown, s->p95_slowdown, s->avg_rho, s->max_rho);
        }
    }
    return close_tmp(f, tmp, path);
}

int gs_write_users(const char *path, gs_sim_result *const *rs, size_t n)
{
    return write_groups(path, rs, n, 1);
}

int gs_write_sizes(const char *path, gs_sim_result *const *rs, size_t n)
{
    return write_groups(path, rs, n, 0);
}

void gs_print_compare(FILE *f, gs_sim_result *const *rs, size_t n)
{
    /* the label column fits the longest label (an item such as gavel:hetero=agnostic), at
     * least 18 wide so that short labels keep the table's historical layout */
    int w = 18;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(rs[i]->policy);
        if (l > (size_t)w) w = (int)l;
    }
    fprintf(f, "%-*s %-11s %6s %11s %11s %11s %11s %11s %6s %8s %8s\n", w, "POLICY", "PLACEMENT",
            "DONE", "AVG_JCT_S", "MEDIAN_S", "P95_S", "AVG_QUEUE_S", "1ST_START_S", "UTIL",
            "PREEMPT", "WALL_S");
    int mech = 0;
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        fprintf(f, "%-*s %-11s %6zu %11.1f %11.1f %11.1f %11.1f %11.1f %5.1f%% %8llu %8.3f\n", w,
                r->policy, r->placement, r->jobs_done, r->avg_jct_s, r->median_jct_s, r->p95_jct_s,
                r->avg_queue_s, r->avg_first_s, 100.0 * r->gpu_util,
                (unsigned long long)r->preemptions, r->wall_s);
        for (int m = 0; m < GS_MECH_N; m++) mech |= gs_mech_get((gs_mech)m)->listed && r->mech[m];
    }
    /* fairness and honest queueing (issue 15, docs/metrics.md) */
    fprintf(f, "\n%-*s %8s %8s %8s %8s %8s %9s %11s %6s\n", w, "FAIRNESS", "SLOWDOWN", "P95_SLOW",
            "AVG_RHO", "MAX_RHO", "JAIN_RHO", "JAIN_USER", "PENDING_S", "BUSY%");
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        fprintf(f, "%-*s %8.2f %8.2f %8.2f %8.2f %8.3f %9.3f %11.1f %5.1f%%\n", w, r->policy,
                r->avg_slowdown, r->p95_slowdown, r->avg_rho, r->max_rho, r->jain_rho,
                r->jain_user_slowdown, r->avg_pending_s, 100.0 * r->gpu_util_busy);
    }
    int el = 0;
    for (size_t i = 0; i < n; i++) el |= rs[i]->elastic;
    if (el) { /* elastic jobs or deadlines (issue 13) */
        fprintf(f, "\n%-*s %9s %8s %9s %12s %13s %9s\n", w, "ELASTIC", "DEADLINES", "MET%",
                "REJECTED", "RESCALES/JOB", "RESCALE_GPU_H", "GOODPUT");
        for (size_t i = 0; i < n; i++) {
            const gs_sim_result *r = rs[i];
            char met[32], pct[16];
            /* no job with a deadline: nothing to meet, '-' rather than "0/0 0.0%" */
            snprintf(met, sizeof met, "%zu/%zu", r->deadline_met, r->deadline_jobs);
            snprintf(pct, sizeof pct, "%.1f%%", 100.0 * r->deadline_met_ratio);
            fprintf(f, "%-*s %9s %8s %9zu %12.2f %13.2f %9.2f\n", w, r->policy,
                    r->deadline_jobs ? met : "-", r->deadline_jobs ? pct : "-", r->jobs_rejected,
                    r->rescales_per_job, r->rescale_gpu_s / 3600.0, r->avg_goodput);
        }
    }
    if (!mech) return;
    /* columns in the table's own order (GS_MECH_MAP's tcol); column 2 is the packed share */
    int ncol = 0;
    gs_mech col[GS_MECH_N + 1];
    for (int c = 0; c <= GS_MECH_N; c++) {
        col[c] = GS_MECH_N; /* the packed share */
        for (int m = 0; m < GS_MECH_N; m++)
            if (gs_mech_get((gs_mech)m)->tcol == c) col[c] = (gs_mech)m;
        if (col[c] != GS_MECH_N || c == 2) ncol = c + 1;
    }
    fprintf(f, "\n%-*s", w, "MECHANISMS");
    for (int c = 0; c < ncol; c++) {
        if (col[c] == GS_MECH_N) {
            fprintf(f, " %8s", "PACKED%");
            continue;
        }
        const gs_mech_info *mi = gs_mech_get(col[c]);
        char up[32];
        size_t k = 0;
        for (; mi->key[k] && k + 1 < sizeof up; k++)
            up[k] = (char)toupper((unsigned char)mi->key[k]);
        up[k] = '\0';
        fprintf(f, " %*s", mi->twidth, up);
    }
    fprintf(f, " %12s\n", "COST_GPU_H");
    for (size_t i = 0; i < n; i++) {
        const gs_sim_result *r = rs[i];
        double packed = r->gpu_util > 0 ? 100.0 * (r->gpu_job_util - r->gpu_util) / r->gpu_util : 0;
        fprintf(f, "%-*s", w, r->policy);
        for (int c = 0; c < ncol; c++) {
            if (col[c] == GS_MECH_N)
                fprintf(f, " %7.1f%%", packed);
            else
                fprintf(f, " %*llu", gs_mech_get(col[c])->twidth,
                        (unsigned long long)r->mech[col[c]]);
        }
        fprintf(f, " %12.1f\n", mech_cost(r->mech_gpu_s) / 3600.0);
    }
}
