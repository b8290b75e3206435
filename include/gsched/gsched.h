/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/gsched.h - umbrella header for libgsched, the scheduling core.
 *
 * The core has no globals, performs no I/O, reads no clock and calls no
 * rand(): time, state and a seeded PRNG are passed in.  The simulator
 * (gsched sim) and the daemon (gsched serve) link the same core.
 */
#ifndef GSCHED_GSCHED_H
#define GSCHED_GSCHED_H

#include "gsched/cluster.h"
#include "gsched/engine.h"
#include "gsched/error.h"
#include "gsched/goodput.h"
#include "gsched/grammar.h"
#include "gsched/job.h"
#include "gsched/jobarray.h"
#include "gsched/jobdeps.h"
#include "gsched/lp.h"
#include "gsched/jobq.h"
#include "gsched/params.h"
#include "gsched/placement.h"
#include "gsched/plan.h"
#include "gsched/policy.h"
#include "gsched/profiles.h"
#include "gsched/types.h"
#include "gsched/version.h"

#endif
