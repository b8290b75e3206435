/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics.c - the daemon's metrics: counters and histograms (gsd_metrics_init,
 * gsd_hist_observe; filled by the scheduler thread) and /metrics in the
 * Prometheus text format (version 0.0.4), rendered by HTTP threads.
 *
 * Names follow the project conventions (style-and-ecosystem.md B5): one
 * "gsched_" prefix, base units (_seconds), counters end in _total,
 * histograms as _bucket{le=...} / _sum / _count, and no high-cardinality
 * labels (no job ids, no users).  Everything is rendered from one immutable
 * snapshot, so a scrape is consistent.
 *
 * Invariant: label values are escaped (\\, \", \n) and every family has one
 * HELP and one TYPE line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsd.h"

/* ---- primitives (scheduler thread) --------------------------------------------------------- */

static const double wait_bounds[] = {0.1, 0.5, 1,    2.5,  5,    10,    30,   60,
                                     300, 600, 1800, 3600, 7200, 21600, 86400};
static const double cycle_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                      0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};

static const double ckpt_bounds[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};

void gsd_metrics_init(gsd_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->wait.bounds = wait_bounds;
    m->wait.nb = (int)(sizeof wait_bounds / sizeof *wait_bounds);
    m->jct = m->wait;
    m->cycle.bounds = cycle_bounds;
    m->cycle.nb = (int)(sizeof cycle_bounds / sizeof *cycle_bounds);
    m->commit = m->cycle;
    m->ckpt.bounds = ckpt_bounds;
    m->ckpt.nb = (int)(sizeof ckpt_bounds / sizeof *ckpt_bounds);
}

void gsd_hist_observe(gsd_hist *h, double v)
{
    int i = 0;
    while (i < h->nb && v > h->bounds[i]) i++;
    if (i < h->nb)
        h->b[i]++;
    else
        h->inf++;
    h->count++;
    h->sum += v;
}

/* ---- the text format (HTTP threads) --------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void bput(buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void bput(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 1;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
}

/* Escape a label value into out. */
static const char *esc(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; s && *s && n + 3 < cap; s++) {
        if (*s == '\\' || *s == '"') {
            out[n++] = '\\';
            out[n++] = *s;
        } else if (*s == '\n') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
    return out;
}

static void family(buf *b, const char *name, const char *type, const char *help)
{
    bput(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void hist(buf *b, const char *name, const char *help, const gsd_hist *h)
{
    family(b, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < h->nb; i++) {
        cum += h->b[i];
        bput(b, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i], (unsigned long long)cum);
    }
    bput(b, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
    bput(b, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name, (unsigned long long)h->count);
}

static void counter(buf *b, const char *name, const char *help, uint64_t v)
{
    family(b, name, "counter", help);
    bput(b, "%s %llu\n", name, (unsigned long long)v);
}

static void lower(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++) out[n++] = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
    out[n] = '\0';
}

char *gsd_metrics_text(const gsd *g, const gsd_snap *s, size_t *len)
{
    buf b = {malloc(16384), 0, 16384};
    if (!b.p) abort();
    char e1[256], e2[256];
    const gsd_metrics *m = &s->m;

    family(&b, "gsched_build_info", "gauge",
           "Version and policy of the running daemon (always 1).");
    bput(&b, "gsched_build_info{version=\"%s\",policy=\"%s\"} 1\n", GSCHED_VERSION,
         esc(g->o.policy, e1, sizeof e1));
    family(&b, "gsched_start_time_seconds", "gauge", "Start time of the daemon (Unix seconds).");
    bput(&b, "gsched_start_time_seconds %.3f\n", gs_time_to_sec(g->started));
    family(&b, "gsched_read_only", "gauge",
           "1 while the daemon cannot write its database (read-only mode: disk full).");
    bput(&b, "gsched_read_only %d\n", atomic_load((atomic_int *)&g->read_only) ? 1 : 0);

    family(&b, "gsched_jobs", "gauge",
           "Jobs by state: active jobs now, final states counted over the whole database.");
    for (int st = 0; st < GS_JOB_NSTATES; st++) {
        char l[32];
        lower(gs_job_state_name((gs_job_state)st), l, sizeof l);
        bput(&b, "gsched_jobs{state=\"%s\"} %lld\n", l, (long long)s->states[st]);
    }
    counter(&b, "gsched_jobs_submitted_total", "Jobs accepted since the daemon started.",
            m->submitted);
    family(&b, "gsched_jobs_finished_total", "counter",
           "Jobs that reached a final state since the daemon started, by result.");
    static const struct {
        int st;
        const char *name;
    } res[] = {{GS_JOB_DONE, "done"},
               {GS_JOB_FAILED, "failed"},
               {GS_JOB_CANCELLED, "cancelled"},
               {GS_JOB_REJECTED, "rejected"}};
    for (size_t i = 0; i < sizeof res / sizeof *res; i++)
        bput(&b, "gsched_jobs_finished_total{result=\"%s\"} %llu\n", res[i].name,
             (unsigned long long)m->finished[res[i].st]);
    counter(&b, "gsched_preemptions_total", "Preemptions requested by the policy.", m->preemptions);
    counter(&b, "gsched_requeues_total", "Jobs put back in the queue after their tasks stopped.",
            m->requeues);
    counter(&b, "gsched_job_starts_total", "Job runs started (first starts and restarts).",
            m->launches);
    counter(&b, "gsched_task_launch_failures_total", "Tasks that could not be started.",
            m->launch_failures);
    counter(&b, "gsched_task_kills_total",
            "Runs that needed SIGKILL because the grace period ran out.", m->kills);
    counter(&b, "gsched_ckpt_suspends_total",
            "Checkpoint-based suspends done (CUDA processes checkpointed, GPU memory freed).",
            m->ckpt_suspends);
    counter(&b, "gsched_ckpt_resumes_total", "Checkpoint-based resumes done (restored).",
            m->ckpt_resumes);
    counter(&b, "gsched_ckpt_failures_total",
            "Checkpoint-based suspends or resumes that failed (the job was stopped, requeued).",
            m->ckpt_failures);
    counter(&b, "gsched_schedule_cycles_total", "Scheduling cycles run.", m->cycles);
    counter(&b, "gsched_db_commits_total", "Database transactions committed.", m->commits);
    hist(&b, "gsched_job_wait_seconds", "Time from submission to first start.", &m->wait);
    hist(&b, "gsched_ckpt_duration_seconds",
         "Duration of a checkpoint-based suspend or resume (driver calls).", &m->ckpt);
    hist(&b, "gsched_job_completion_seconds",
         "Time from submission to the end (done, failed, cancelled).", &m->jct);
    hist(&b, "gsched_schedule_cycle_duration_seconds",
         "Duration of a scheduling cycle: commands, policy pass, commit, actions.", &m->cycle);
    hist(&b, "gsched_db_commit_duration_seconds", "Duration of a cycle's database commit.",
         &m->commit);

    int alloc = 0, down = 0;
    for (size_t i = 0; i < s->ngpus; i++) {
        alloc += s->gpus[i].job >= 0;
        down += s->gpus[i].down;
    }
    family(&b, "gsched_gpus", "gauge", "GPUs by state.");
    bput(&b, "gsched_gpus{state=\"allocated\"} %d\n", alloc);
    bput(&b, "gsched_gpus{state=\"idle\"} %d\n", (int)s->ngpus - alloc - down);
    bput(&b, "gsched_gpus{state=\"down\"} %d\n", down);
    /* per machine: a machine in several HiveD chains (one node cell per chain, all with its
     * name) is one series, the sum of its cells */
    int32_t *mg = calloc(s->nnodes ? s->nnodes : 1, 2 * sizeof *mg);
    if (!mg) abort();
    for (size_t i = 0; i < s->nnodes; i++) {
        mg[2 * s->nodes[i].first] += s->nodes[i].gpus;
        mg[2 * s->nodes[i].first + 1] += s->nodes[i].alloc;
    }
    family(&b, "gsched_node_gpus", "gauge", "GPUs per node.");
    for (size_t i = 0; i < s->nnodes; i++)
        if ((size_t)s->nodes[i].first == i)
            bput(&b, "gsched_node_gpus{node=\"%s\"} %d\n", esc(s->nodes[i].name, e1, sizeof e1),
                 mg[2 * i]);
    family(&b, "gsched_node_gpus_allocated", "gauge", "Allocated GPUs per node.");
    for (size_t i = 0; i < s->nnodes; i++)
        if ((size_t)s->nodes[i].first == i)
            bput(&b, "gsched_node_gpus_allocated{node=\"%s\"} %d\n",
                 esc(s->nodes[i].name, e1, sizeof e1), mg[2 * i + 1]);
    free(mg);
    family(&b, "gsched_vc_gpus_allocated", "gauge", "GPUs held by each VC's running jobs.");
    for (size_t i = 0; i < s->nvcs; i++)
        bput(&b, "gsched_vc_gpus_allocated{vc=\"%s\"} %lld\n", esc(s->vcs[i].name, e2, sizeof e2),
             (long long)s->vcs[i].allocated);
    family(&b, "gsched_vc_gpus_guaranteed", "gauge",
           "GPUs guaranteed to each VC (HiveD cells or quotas); VCs without one are left out.");
    for (size_t i = 0; i < s->nvcs; i++)
        if (s->vcs[i].guaranteed >= 0)
            bput(&b, "gsched_vc_gpus_guaranteed{vc=\"%s\"} %lld\n",
                 esc(s->vcs[i].name, e2, sizeof e2), (long long)s->vcs[i].guaranteed);
    family(&b, "gsched_vc_jobs_pending", "gauge", "Pending jobs per VC.");
    for (size_t i = 0; i < s->nvcs; i++)
        bput(&b, "gsched_vc_jobs_pending{vc=\"%s\"} %d\n", esc(s->vcs[i].name, e2, sizeof e2),
             s->vcs[i].pending);
    /* GPU health (issue 17, gpuhealth.c): the watched GPUs only */
    static const struct {
        const char *name, *type, *help;
        int what;
    } gh[] = {
        {"gsched_gpu_healthy", "gauge", "1 when the GPU health watch finds the GPU healthy.", 0},
        {"gsched_gpu_xid_errors_total", "counter",
         "Xid error events NVML reported for the GPU since the daemon started.", 1},
        {"gsched_gpu_ecc_uncorrected", "gauge",
         "Volatile uncorrected ECC errors of the GPU (since the driver loaded).", 2},
        {"gsched_gpu_temperature_celsius", "gauge", "GPU temperature.", 3},
    };
    int watched = 0;
    for (size_t gi = 0; gi < s->ngpus && !watched; gi++) watched = s->gpus[gi].health != 0;
    for (size_t k = 0; watched && k < sizeof gh / sizeof gh[0]; k++) {
        family(&b, gh[k].name, gh[k].type, gh[k].help);
        for (size_t gi = 0; gi < s->ngpus; gi++) {
            const gsd_gview *gv = &s->gpus[gi];
            if (!gv->health) continue;
            long long v = gh[k].what == 0   ? gv->health == 1
                          : gh[k].what == 1 ? gv->xid_total
                          : gh[k].what == 2 ? gv->ecc_uncorrected
                                            : gv->temp_c;
            if (v < 0) continue; /* NVML does not say */
            bput(&b, "%s{node=\"%s\",gpu=\"%d\"} %lld\n", gh[k].name,
                 esc(s->nodes[gv->node].name, e1, sizeof e1), gv->local, v);
        }
    }
    *len = b.n;
    return b.p;
}
