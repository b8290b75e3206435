/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine_opts.c - engine options read from parameters (fit=first|best), shared by every
 * program that creates an engine (simulator, scenarios, daemon).
 * Invariants: only keys given in params change *o (the caller's gs_engine_opts_init defaults
 * stay otherwise); a key it reads is marked used; a bad value is GS_EINVAL with a diag and
 * leaves *o unchanged.
 */
#include <string.h>

#include "gsched/engine.h"

int gs_engine_opts_from_params(gs_params *p, gs_engine_opts *o, gs_diag *d)
{
    const char *fit = gs_params_get(p, "fit");
    if (fit) {
        if (!strcmp(fit, "first"))
            o->fit = GS_FIT_FIRST;
        else if (!strcmp(fit, "best"))
            o->fit = GS_FIT_BEST;
        else
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "parameter 'fit': expected first or best, got '%s'", fit);
    }
    return 0;
}
