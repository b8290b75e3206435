/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * costs.c - placement slowdown, restart overhead and the cost of each
 * mechanism, suspend/resume by suspend_mech included (see gsched/costs.h).
 * Invariants: every factor is >= 1 and non-decreasing with the spread
 * level; overheads are >= 0 and at most 1e9 s; all functions are pure given
 * the parameters; the default suspend_mech (copy) charges what it always did.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gsched/costs.h"

static const char *class_names[] = {"default", "light", "heavy"};

const char *gs_model_class_name(gs_model_class c)
{
    return (unsigned)c < GS_MODEL_NCLASSES ? class_names[c] : "?";
}

static const double default_factors[GS_MODEL_NCLASSES][GS_SPREAD_LEVELS] = {
    {1.00, 1.02, 1.05, 1.10, 1.50, 1.65},  /* default */
    {1.00, 1.00, 1.02, 1.05, 1.10, 1.155}, /* light */
    {1.00, 1.05, 1.10, 1.25, 2.00, 2.40},  /* heavy */
};

static const char *heavy_default = "vgg,alexnet,bert,gpt,transformer,lm,yolo";
static const char *light_default =
    "resnet,inception,googlenet,mobilenet,deepspeech,cifar,imagenet,ncf,recommendation";

void gs_costs_init(gs_costs *c)
{
    memset(c, 0, sizeof *c);
    c->slowdown = 1;
    memcpy(c->factor, default_factors, sizeof c->factor);
    c->preempt_model = 1;
    c->ckpt_bw = 1e9;
    c->optimizer_slots = 2;
    c->init_base = 5 * GS_SEC;
    c->init_per_gpu = 3750 * GS_MSEC;
    c->suspend_copy = 100 * GS_MSEC;
    c->local_bw = 1e10;
    c->scale_alpha[GS_MODEL_DEFAULT] = 0.1;
    c->scale_alpha[GS_MODEL_LIGHT] = 0.05;
    c->scale_alpha[GS_MODEL_HEAVY] = 0.2;
    c->suspend_mech = GS_SUSPEND_COPY;
    c->ckpt_fixed = GS_CKPT_FIXED_DEFAULT;
    c->ckpt_d2h_bw = GS_CKPT_D2H_BW_DEFAULT;
    c->ckpt_h2d_bw = GS_CKPT_H2D_BW_DEFAULT;
}

static const char *const mech_names[GS_SUSPEND_NMECHS] = {"copy", "sigstop", "cuda", "restart"};

const char *gs_suspend_mech_name(int m)
{
    return m >= 0 && m < GS_SUSPEND_NMECHS ? mech_names[m] : "?";
}

void gs_costs_release(gs_costs *c)
{
    if (!c) return;
    free(c->heavy);
    free(c->light);
    c->heavy = c->light = NULL;
}

/*
 * Bounds that keep every charge inside the microsecond clock whatever the job
 * (at most 2^20 GPUs, traces cap times at 1e11 s): a slowdown of at most 100x,
 * cost durations of at most 1e7 s (115 days), any single charge at most 1e9 s.
 */
#define MAX_FACTOR   100.0
#define MAX_COST_SEC 1e7
#define MAX_CHARGE   (1000000000 * GS_SEC)

/* io + init on g GPUs, exactly in integers, or MAX_CHARGE when it would exceed it. */
static gs_time charge(const gs_costs *c, gs_time io, int gpus)
{
    int64_t k = gpus > 1 ? gpus - 1 : 0;
    double approx = (double)io + (double)c->init_base + (double)c->init_per_gpu * (double)k;
    if (approx >= (double)MAX_CHARGE) return MAX_CHARGE;
    return io + c->init_base + c->init_per_gpu * k;
}

static int read_factors(gs_params *p, const char *key, double out[GS_SPREAD_LEVELS], gs_diag *d)
{
    double *v;
    size_t n;
    int rc = gs_params_get_double_list(p, key, &v, &n, d);
    if (rc || !v) return rc;
    if (n != GS_SPREAD_LEVELS) {
        free(v);
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "parameter '%s': expected %d factors (spread levels 0..5), got %zu", key,
                           GS_SPREAD_LEVELS, n);
    }
    for (size_t i = 0; i < n; i++)
        if (!(v[i] >= 1.0 && v[i] <= MAX_FACTOR) || (i && v[i] < v[i - 1])) {
            free(v);
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "parameter '%s': factors must be between 1 and %g and "
                               "non-decreasing",
                               key, MAX_FACTOR);
        }
    memcpy(out, v, sizeof(double) * GS_SPREAD_LEVELS);
    free(v);
    return 0;
}

int gs_costs_from_params(gs_costs *c, gs_params *p, gs_diag *d)
{
    return gs_costs_from_params_def(c, p, 1, d);
}

int gs_costs_from_params_def(gs_costs *c, gs_params *p, int costs_default, gs_diag *d)
{
    int on = costs_default;
    int rc = gs_params_get_bool(p, "costs", costs_default, &on, d);
    if (rc) return rc;
    if (!on) {
        /* the published simulators: no slowdown, free restarts and mechanisms;
         * explicit settings of the individual keys below still win */
        if (!gs_params_get(p, "slowdown")) c->slowdown = 0;
        if (!gs_params_get(p, "preempt_cost")) {
            c->preempt_model = 0;
            c->preempt_fixed = 0;
        }
    }
    rc = gs_params_get_bool(p, "slowdown", c->slowdown, &c->slowdown, d);
    if (!rc) rc = read_factors(p, "slowdown_default", c->factor[GS_MODEL_DEFAULT], d);
    if (!rc) rc = read_factors(p, "slowdown_light", c->factor[GS_MODEL_LIGHT], d);
    if (!rc) rc = read_factors(p, "slowdown_heavy", c->factor[GS_MODEL_HEAVY], d);
    if (rc) return rc;
    const char *h = gs_params_get(p, "heavy_models"), *l = gs_params_get(p, "light_models");
    if (h && !(c->heavy = strdup(h))) return GS_ENOMEM;
    if (l && !(c->light = strdup(l))) return GS_ENOMEM;
    const char *pc = gs_params_get(p, "preempt_cost");
    if (pc && strcmp(pc, "model")) {
        c->preempt_model = 0;
        rc = gs_params_get_duration(p, "preempt_cost", 0, &c->preempt_fixed, d);
        if (rc)
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "parameter 'preempt_cost': expected 'model' or a duration "
                               "(0 = free), got '%s'",
                               pc);
    }
    if (!rc) rc = gs_params_get_double(p, "ckpt_bw", 1e9, 1e3, 1e15, &c->ckpt_bw, d);
    if (!rc) rc = gs_params_get_double(p, "optimizer_slots", 2, 0, 16, &c->optimizer_slots, d);
    if (!rc) rc = gs_params_get_duration(p, "init_base", 5 * GS_SEC, &c->init_base, d);
    if (!rc) rc = gs_params_get_duration(p, "init_per_gpu", 3750 * GS_MSEC, &c->init_per_gpu, d);
    if (!rc) rc = gs_params_get_duration(p, "suspend_copy", 100 * GS_MSEC, &c->suspend_copy, d);
    if (!rc) rc = gs_params_get_double(p, "local_bw", 1e10, 1e3, 1e15, &c->local_bw, d);
    if (!rc) rc = gs_params_get_duration(p, "ckpt_fixed", GS_CKPT_FIXED_DEFAULT, &c->ckpt_fixed, d);
    if (!rc)
        rc = gs_params_get_double(p, "ckpt_d2h_bw", GS_CKPT_D2H_BW_DEFAULT, 1e3, 1e15,
                                  &c->ckpt_d2h_bw, d);
    if (!rc)
        rc = gs_params_get_double(p, "ckpt_h2d_bw", GS_CKPT_H2D_BW_DEFAULT, 1e3, 1e15,
                                  &c->ckpt_h2d_bw, d);
    if (!rc) {
        double *v = NULL;
        size_t n = 0;
        rc = gs_params_get_double_list(p, "scale_alpha", &v, &n, d);
        if (!rc && v) {
            if (n != GS_MODEL_NCLASSES) {
                free(v);
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "parameter 'scale_alpha': expected 3 values (default, light, "
                                   "heavy class), got %zu",
                                   n);
            }
            for (size_t i = 0; i < n; i++)
                if (!(v[i] >= 0 && v[i] <= 10)) {
                    free(v);
                    return gs_diag_set(d, GS_EINVAL, 0, 0,
                                       "parameter 'scale_alpha': values must be in [0, 10]");
                }
            memcpy(c->scale_alpha, v, sizeof c->scale_alpha);
            free(v);
        }
    }
    if (rc) return rc;
    const char *rs = gs_params_get(p, "rescale_cost");
    if (rs) {
        static const char *const presets[] = {"preempt", "analytic", "pollux30", "elasticflow",
                                              "zero"};
        int k = -1;
        for (int i = 0; i < (int)(sizeof presets / sizeof *presets); i++)
            if (!strcmp(rs, presets[i])) k = i;
        if (k < 0)
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "parameter 'rescale_cost': expected analytic, pollux30, "
                               "elasticflow, zero or preempt, got '%s'",
                               rs);
        c->rescale = k;
    }
    const char *sm = gs_params_get(p, "suspend_mech");
    if (sm) {
        int k = -1;
        for (int i = 0; i < GS_SUSPEND_NMECHS; i++)
            if (!strcmp(sm, mech_names[i])) k = i;
        if (k < 0)
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "parameter 'suspend_mech': expected copy, sigstop, cuda or "
                               "restart, got '%s'",
                               sm);
        c->suspend_mech = k;
    }
    const struct {
        const char *key;
        gs_time v;
    } dur[] = {{"preempt_cost", c->preempt_fixed},
               {"init_base", c->init_base},
               {"init_per_gpu", c->init_per_gpu},
               {"suspend_copy", c->suspend_copy},
               {"ckpt_fixed", c->ckpt_fixed}};
    for (size_t i = 0; i < sizeof dur / sizeof *dur; i++)
        if (dur[i].v < 0 || dur[i].v > gs_time_from_sec(MAX_COST_SEC))
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "parameter '%s': must be between 0 and %.0f s (115 days)",
                               dur[i].key, MAX_COST_SEC);
    return 0;
}

/* Does 'model' start with one of the comma-separated prefixes (case-insensitive)? */
static int matches(const char *list, const char *model)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && strncasecmp(model, p, len) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

gs_model_class gs_costs_class(const gs_costs *c, const char *model)
{
    if (!model || !*model || !strcmp(model, "-")) return GS_MODEL_DEFAULT;
    if (matches(c->heavy ? c->heavy : heavy_default, model)) return GS_MODEL_HEAVY;
    if (matches(c->light ? c->light : light_default, model)) return GS_MODEL_LIGHT;
    return GS_MODEL_DEFAULT;
}

double gs_model_params_m(const char *model)
{
    static const struct {
        const char *prefix;
        double m;
    } t[] = {
        {"resnet152", 60.2},  {"resnet101", 44.5},   {"resnet50", 25.6}, {"resnet18", 11.7},
        {"vgg19", 143.7},     {"vgg16", 138.4},      {"vgg11", 132.9},   {"alexnet", 61.1},
        {"inception4", 42.7}, {"inception3", 23.8},  {"googlenet", 6.8}, {"bert", 110.0},
        {"gpt2", 1500.0},     {"transformer", 65.0}, {"lm", 66.0},       {"yolo", 61.9},
        {"deepspeech", 38.0}, {"cifar", 11.7},       {"imagenet", 25.6}, {"ncf", 5.0},
        {"mobilenet", 4.2},
    };
    if (model)
        for (size_t i = 0; i < sizeof t / sizeof *t; i++)
            if (strncasecmp(model, t[i].prefix, strlen(t[i].prefix)) == 0) return t[i].m;
    return 25.6;
}

int gs_costs_spread_level(const gs_cluster *cl, const int32_t *gpus, int n)
{
    if (n <= 1) return 0;
    gs_cell_kind k = gs_cluster_spread(cl, (const int *)gpus, n);
    switch (k) {
    case GS_CELL_GPU: return 0;
    case GS_CELL_PCIE: return 1;
    case GS_CELL_SOCKET: return 2;
    case GS_CELL_NODE: {
        /* what does the node declare inside it? */
        const gs_node *nd = gs_cluster_node(cl, gs_cluster_gpu(cl, gpus[0])->node);
        const gs_cell *nc = gs_cluster_cell(cl, nd->cell);
        int has_socket = 0, has_pcie = 0;
        for (int i = 0; i < nc->nkids; i++) {
            int kind = gs_cluster_cell(cl, gs_cluster_cell_kid(cl, nd->cell, i))->kind;
            has_socket |= kind == GS_CELL_SOCKET;
            has_pcie |= kind == GS_CELL_PCIE;
        }
        return has_socket ? 3 : has_pcie ? 2 : 0;
    }
    case GS_CELL_RACK: return 4;
    default: {
        /* above racks, or the root of a cluster without racks */
        const gs_node *nd = gs_cluster_node(cl, gs_cluster_gpu(cl, gpus[0])->node);
        return nd->rack == 0 && k == GS_CELL_ROOT ? 4 : 5;
    }
    }
}

double gs_costs_slowdown(const gs_costs *c, const gs_cluster *cl, const char *model,
                         const int32_t *gpus, int n)
{
    if (!c->slowdown || n <= 1) return 1.0;
    int lv = gs_costs_spread_level(cl, gpus, n);
    return c->factor[gs_costs_class(c, model)][lv];
}

/* Time to write or read a model's state (weights + optimizer slots) at bw bytes/s. */
static gs_time state_io(const gs_costs *c, const char *model, double bw)
{
    double bytes = gs_model_params_m(model) * 1e6 * 4.0 * (1.0 + c->optimizer_slots);
    return gs_time_from_sec(bytes / bw); /* at most ~1e8 s: bw >= 1e3 B/s */
}

gs_time gs_costs_restart(const gs_costs *c, const char *model, int gpus, int saved)
{
    if (!c->preempt_model) return c->preempt_fixed;
    gs_time io = state_io(c, model, c->ckpt_bw);
    return charge(c, saved ? 2 * io : io, gpus);
}

gs_time gs_costs_migrate(const gs_costs *c, const char *model, int gpus, int inter_node)
{
    if (!c->preempt_model) return c->preempt_fixed;
    return charge(c, 2 * state_io(c, model, inter_node ? c->ckpt_bw : c->local_bw), gpus);
}

gs_time gs_costs_drain(const gs_costs *c, const char *model, int gpus)
{
    (void)gpus; /* every rank writes its shard in parallel: the old size does not matter */
    switch (c->rescale) {
    case GS_RESCALE_COST_PREEMPT: return c->preempt_model ? state_io(c, model, c->ckpt_bw) : 0;
    case GS_RESCALE_COST_ANALYTIC: return state_io(c, model, c->ckpt_bw);
    default: return 0;
    }
}

gs_time gs_costs_relaunch(const gs_costs *c, const char *model, int gpus)
{
    switch (c->rescale) {
    case GS_RESCALE_COST_PREEMPT: return gs_costs_restart(c, model, gpus, 0);
    case GS_RESCALE_COST_ANALYTIC: return charge(c, state_io(c, model, c->ckpt_bw), gpus);
    case GS_RESCALE_COST_POLLUX30: return 30 * GS_SEC;
    case GS_RESCALE_COST_ELASTICFLOW: {
        double g = gpus > 1 ? (double)gpus : 1.0;
        return gs_time_from_sec(2.0 + 2.0 * (log2(g) + 1.0));
    }
    default: return 0;
    }
}

/* Mechanisms are free: costs=off or preempt_cost=0. */
static int mechs_free(const gs_costs *c)
{
    return !c->preempt_model && c->preempt_fixed == 0;
}

gs_time gs_costs_suspend_copy(const gs_costs *c)
{
    if (mechs_free(c)) return 0;
    return c->suspend_copy;
}

/* A CUDA checkpoint or restore: the fixed part, then one GPU's copy of mem_mb MB (MiB, as
 * the profiles count) at bw bytes/s (the GPUs copy in parallel); at most MAX_CHARGE. */
static gs_time ckpt_time(const gs_costs *c, int mem_mb, double bw)
{
    double s = (double)(mem_mb > 0 ? mem_mb : 0) * 1048576.0 / bw;
    if (s >= 1e9) return MAX_CHARGE;
    gs_time t = c->ckpt_fixed + gs_time_from_sec(s);
    return t < MAX_CHARGE ? t : MAX_CHARGE;
}

gs_time gs_costs_suspend(const gs_costs *c, const char *model, int mem_mb)
{
    if (mechs_free(c)) return 0;
    switch (c->suspend_mech) {
    case GS_SUSPEND_SIGSTOP: return 0;
    case GS_SUSPEND_CUDA: return ckpt_time(c, mem_mb, c->ckpt_d2h_bw);
    case GS_SUSPEND_RESTART: return c->preempt_model ? state_io(c, model, c->ckpt_bw) : 0;
    default: return c->suspend_copy;
    }
}

gs_time gs_costs_resume(const gs_costs *c, const char *model, int gpus, int mem_mb)
{
    if (mechs_free(c)) return 0;
    switch (c->suspend_mech) {
    case GS_SUSPEND_SIGSTOP: return 0;
    case GS_SUSPEND_CUDA: return ckpt_time(c, mem_mb, c->ckpt_h2d_bw);
    case GS_SUSPEND_RESTART: return gs_costs_restart(c, model, gpus, 0); /* t_restore + t_init */
    default: return c->suspend_copy;
    }
}

int gs_costs_suspend_waits(const gs_costs *c)
{
    return c->suspend_mech == GS_SUSPEND_COPY && gs_costs_suspend_copy(c) > 0;
}

int gs_costs_suspend_parks(const gs_costs *c)
{
    return c->suspend_mech == GS_SUSPEND_SIGSTOP;
}

int gs_costs_resume_anywhere(const gs_costs *c)
{
    return c->suspend_mech == GS_SUSPEND_RESTART;
}

double gs_costs_scale(const gs_costs *c, const char *model, int n)
{
    if (n <= 1) return n < 1 ? 0.0 : 1.0;
    double a = c->scale_alpha[gs_costs_class(c, model)];
    return (double)n / (1.0 + a * (double)(n - 1));
}
