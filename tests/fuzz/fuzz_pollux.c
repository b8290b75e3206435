/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_pollux.c - libFuzzer harness for the readers of a Pollux application
 * trace directory (src/sim/pollux.c) and the goodput model built from it
 * (src/core/goodput.c).
 *
 * The first input byte picks the file the rest becomes (0: placements.csv,
 * 1: scalability.csv, 2: validation-8.csv, 3: a second validation curve,
 * validation-16.csv); the other files get small valid contents.  The reader
 * takes a directory, so they are written under the scratch directory.  On
 * success the model must answer: a positive work, epoch progress increasing,
 * finite positive step times for every placement of up to 6 nodes x 4 GPUs at
 * the local batch bounds, gradient statistics >= 0; on failure a message.
 */
#include <math.h>

#include "config.h"
#include "fuzz_util.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const good[4] = {
    "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.01\n1,8,1.0,0.01\n2,4,0.6,0.1\n",
    "num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,6,4,1.5,1.0\n6,12,8,2.0,1.0\n",
    "progress,iteration,metric,grad_sqr,grad_var\n10,10,1.0,2.0,1.0\n20,20,2.0,1.0,1.0\n",
    "progress,iteration,metric,grad_sqr,grad_var\n12,6,1.0,2.0,1.0\n24,12,2.0,1.0,1.0\n",
};
static const char *const names[4] = {"placements.csv", "scalability.csv", "validation-8.csv",
                                     "validation-16.csv"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    int which = data[0] % 4;
    char dir[700], cmd[800];
    snprintf(dir, sizeof dir, "%s/toy", fuzz_dir());
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) abort();
    for (int i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "toy/%s", names[i]);
        if (i == which)
            fuzz_write_file(rel, data + 1, size - 1);
        else
            fuzz_write_file(rel, (const uint8_t *)good[i], strlen(good[i]));
    }
    gs_goodput *g = NULL;
    if (gs_goodput_create(&g)) return 0;
    gs_diag d;
    gs_diag_init(&d, NULL);
    int rc = gs_pollux_load_app(g, dir, "toy", &d);
    if (rc >= 0) rc = gs_goodput_finish(g, &d);
    fuzz_check_diag(&d, rc);
    if (rc >= 0) {
        int app = gs_goodput_find_app(g, "toy");
        const gs_app_spec *s = gs_goodput_app(g, app);
        if (!s || gs_goodput_work(g, app) <= 0) fuzz_die("no work");
        for (int e = 1; e <= s->max_epochs; e++)
            if (!(gs_goodput_app_progress(g, app, e) > gs_goodput_app_progress(g, app, e - 1)))
                fuzz_die("progress does not increase at epoch %d", e);
        int bs[2] = {s->min_local_bsz, s->max_local_bsz};
        for (int n = 1; n <= 6; n++)
            for (int k = 1; k <= 4; k++)
                for (int b = 0; b < 2; b++) {
                    int per[6] = {k, k, k, k, k, k};
                    double st = -1, sy = -1;
                    if (gs_goodput_app_times(g, app, per, n, bs[b], &st, &sy))
                        fuzz_die("no step time for %d x %d", n, k);
                    if (!isfinite(st) || !isfinite(sy) || st < 0 || sy < 0)
                        fuzz_die("bad step time %g %g", st, sy);
                }
        double sqr, var;
        if (gs_goodput_app_grad(g, app, (double)s->init_batch, 0, &sqr, &var) || sqr < 0 || var < 0)
            fuzz_die("bad gradient statistics");
    }
    gs_goodput_destroy(g);
    return 0;
}
