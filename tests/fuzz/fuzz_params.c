/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_params.c - libFuzzer harness for `--set key=value` parameters
 * (src/core/params.c) and every policy's reading of them.
 *
 * Input: byte 0 picks the policy (registry order) and the cluster (bit 7:
 * the HiveD fixture, else 2x2x4); bit 6 picks count placement.  Then one
 * KEY=VALUE per line, parsed as the CLI does; after a line "%%samples", the
 * content of any file a parameter names (gittins_samples).  The typed getters are
 * exercised on every value; then the engine is created with the parameters
 * (unknown keys must be detected by gs_params_unused) and, when that works,
 * a fixed small workload runs to the end under gs_engine_check().
 */
#include "config.h"
#include "fuzz_common_cluster.h"
#include "fuzz_engine_util.h"
#include "gsched/gsched.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The "file" any parameter naming a file (gittins_samples=...) reads: the %%samples section. */
static int read_samples(void *ud, const char *path, char **buf, size_t *len, gs_diag *d)
{
    const char *s = ud;
    (void)path;
    if (!s) return gs_diag_set(d, GS_ENOENT, 0, 0, "no such file");
    *buf = strdup(s);
    if (!*buf) return GS_ENOMEM;
    *len = strlen(s);
    return 0;
}

static void exercise_getters(const gs_params *src)
{
    gs_params p;
    if (gs_params_copy(&p, src)) return;
    for (size_t i = 0; i < p.n; i++) {
        const char *k = p.v[i].key;
        gs_diag d;
        int64_t i64;
        double dbl, *list;
        size_t n;
        int b;
        gs_diag_init(&d, NULL);
        if (gs_params_get_i64(&p, k, 0, -1000, 1000, &i64, &d) == 0 && (i64 < -1000 || i64 > 1000))
            fuzz_die("get_i64 out of range");
        if (gs_params_get_double(&p, k, 0, -1, 1, &dbl, &d) == 0 && !(dbl >= -1 && dbl <= 1))
            fuzz_die("get_double out of range");
        if (gs_params_get_bool(&p, k, 0, &b, &d) == 0 && b != 0 && b != 1) fuzz_die("get_bool");
        if (gs_params_get_duration(&p, k, 0, &i64, &d) == 0 && i64 < 0)
            fuzz_die("negative duration");
        if (gs_params_get_double_list(&p, k, &list, &n, &d) == 0) {
            if (!list || !n) fuzz_die("empty list for a present key");
            free(list);
        }
        /* the grammars of gsched/grammar.h on the raw value (minutes as the bare unit too) */
        const char *v = p.v[i].val;
        gs_time t;
        int prio;
        gs_quota *q;
        if (gs_parse_duration(v, 60 * GS_SEC, &t, &d) == 0 && (t < 0 || t > GS_DURATION_MAX))
            fuzz_die("duration out of range");
        if (gs_parse_priority(v, 1000, &prio, &d) == 0 && (prio < -1 || prio > 1000))
            fuzz_die("priority out of range");
        int rc = gs_parse_quotas(v, &q, &n, &d);
        if (rc == 0) {
            for (size_t j = 0; j < n; j++)
                if (!q[j].vc[0] || strpbrk(q[j].vc, ":,") || q[j].gpus <= 0)
                    fuzz_die("bad quota accepted");
            gs_quotas_release(q, n);
        } else if (rc != GS_EINVAL && rc != GS_ENOMEM) {
            fuzz_die("quotas: unexpected error");
        }
    }
    if (gs_params_unused(&p)) fuzz_die("a key read by a getter is still unused");
    gs_params_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    size_t npol = 0;
    while (gs_policy_at(npol)) npol++;
    const gs_policy_ops *ops = gs_policy_at((data[0] & 0x3f) % npol);
    int hived = data[0] >> 7, count = (data[0] >> 6) & 1;
    char *text = fuzz_strndup(data + 1, size - 1);
    char *samples = NULL;
    for (char *p = text; (p = strstr(p, "%%samples")); p++)
        if ((p == text || p[-1] == '\n') && (p[9] == '\n' || !p[9])) {
            *p = '\0';
            samples = p[9] ? p + 10 : p + 9;
            break;
        }
    gs_params params;
    gs_params_init(&params);
    for (char *save, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        int rc = gs_params_set_kv(&params, line);
        if (rc && rc != GS_EINVAL) fuzz_die("set_kv: %d", rc);
        if (!rc && !strchr(line, '=')) fuzz_die("accepted a line without '='");
    }
    if (params.n > 64) goto out;
    exercise_getters(&params);

    gs_cluster *c = fuzz_cluster(hived);
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    eo.placement = count ? GS_PLACE_COUNT : GS_PLACE_CONSOLIDATE;
    eo.read_file = read_samples;
    eo.read_file_ud = samples;
    gs_diag d;
    gs_diag_init(&d, NULL);
    gs_engine *e = NULL;
    int rc = gs_engine_opts_from_params(&params, &eo, &d);
    if (!rc) rc = gs_engine_create(c, ops->name, &params, &eo, &e, &d);
    fuzz_check_diag(&d, rc);
    if (rc) {
        if (e) fuzz_die("engine returned with an error");
        gs_cluster_destroy(c);
        goto out;
    }
    const char *unused = gs_params_unused(&params);
    for (size_t i = 0; i < params.n; i++)
        if (!params.v[i].used && !unused) fuzz_die("unused key not reported");
    /* a small fixed workload: the parameters must not break the engine */
    static const struct {
        int64_t id, submit, dur;
        int tasks, gpt;
        const char *vc, *model;
        int prio;
    } jobs[] = {{1, 0, 500, 1, 4, "VC1", "resnet50", 0},  {2, 0, 300, 2, 2, "VC2", "vgg16", 100},
                {3, 10, 50, 1, 1, "VC1", "bert", -1},     {4, 20, 900, 4, 1, "VC3", "gpt2", 10},
                {5, 20, 100, 1, 8, "VC3", NULL, 0},       {6, 30, 200, 2, 4, "VC1", "lm", 0},
                {7, 4000, 3700, 1, 2, "VC2", "vgg19", 0}, {8, 4000, 10, 1, 1, "VC2", "bert", -1}};
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = jobs[i].id;
        s.submit = jobs[i].submit * GS_SEC;
        s.duration = jobs[i].dur * GS_SEC;
        s.ntasks = jobs[i].tasks;
        s.gpus_per_task = jobs[i].gpt;
        s.vc = jobs[i].vc;
        s.model = jobs[i].model;
        s.priority = jobs[i].prio;
        gs_diag_init(&d, NULL);
        if (gs_engine_add_job(e, &s, NULL, &d)) fuzz_die("fixture job %zu: %s", i, d.msg);
    }
    fuzz_run_engine(e, 200000, 1, ops->name);
    gs_engine_destroy(e);
    gs_cluster_destroy(c);
out:
    gs_params_release(&params);
    free(text);
    return 0;
}
