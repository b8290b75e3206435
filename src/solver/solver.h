/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * solver.h - the LP solvers the gsched program passes to the engine
 * (gs_engine_opts.lp, include/gsched/lp.h).
 *
 * gs_lp_glpk() is GLPK's simplex (lp_glpk.c), built when CMake found GLPK
 * (GSCHED_GLPK=AUTO|ON|OFF defines GSCHED_HAVE_GLPK).  Without GLPK it is
 * NULL, and policies needing an LP refuse with GS_EUNSUPPORTED and a message
 * naming GLPK.  libgsched itself never links a solver (core purity gate).
 */
#ifndef GSCHED_SOLVER_H
#define GSCHED_SOLVER_H

#include "gsched/lp.h"

#ifdef GSCHED_HAVE_GLPK
/* GLPK's primal simplex with presolve, messages off; never aborts (see lp_glpk.c). */
const gs_lp_solver *gs_lp_glpk(void);
#else
static inline const gs_lp_solver *gs_lp_glpk(void)
{
    return NULL;
}
#endif

#endif
