/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/policy.h - the policy ops table, the compiled-in registry and the
 * plugin interface: everything a policy needs, with engine.h (its requests),
 * job.h, cluster.h, placement.h, jobq.h and plan.h (helpers of priority
 * policies).  A policy never includes libgsched's private headers; a policy
 * outside gsched is a shared object (below, "Plugins"; docs/writing-a-policy.md).
 *
 * A policy decides who runs and where; the engine decides nothing.  It is a
 * const table of callbacks, compiled in from one file src/core/policy_STEM.c
 * (which may define a family of tables, e.g. srtf/srsf/sjf) or loaded from a
 * plugin, looked up by name.  Callbacks run on the engine's thread with the
 * engine's clock (gs_engine_now()); they act only through the gs_engine_* requests.
 *
 * Order of calls at one instant: the event hooks (on_arrival, on_finish,
 * on_requeue, on_node, on_preemptible, on_timer, in event order), then at
 * most one schedule().  on_withdraw comes between instants (a request from
 * outside, like a cancel), never from inside schedule().
 *
 * Re-entry (the one exception to that order): a request made from inside a
 * hook runs the hooks of the transitions it causes at once, before the
 * request returns.  In practice that is on_requeue: gs_engine_preempt() (and
 * gs_engine_start_preempting(), which preempts) called from schedule() - or
 * from any other hook - calls on_requeue(victim) synchronously, with the
 * victim already PENDING, and schedule() then continues.  So on_requeue must
 * not assume that no pass is running, and schedule() must expect the job it
 * just preempted to be back in its queues when the request returns.  The
 * engine never calls schedule() from inside a hook or a request.  (Every
 * policy's results are defined by this order; tests/test_engine.c checks it.)
 *
 * Errors: every hook returns 0 or a negative GS_E* code (error.h) - in
 * particular GS_ENOMEM when it could not record something it must not lose
 * (a queue insertion, a timer).  A hook that gets an error from a gs_engine_*
 * request it cannot do without (GS_ENOMEM above all; refusals such as
 * GS_ENOFIT or GS_ESTATE are answers, not errors) returns it.  The engine
 * then stops what it was doing, latches the error and returns it from the
 * entry point that ran the hook (engine.h, "Errors"); no hook is called
 * after that except destroy() and check().  A hook that fails must leave its
 * own state consistent enough for check() and destroy() (nothing
 * half-linked, nothing leaked); it need not still know about every job.
 *
 * Ownership: create() allocates the policy state; destroy() frees it and
 * must accept NULL.
 */
#ifndef GSCHED_POLICY_H
#define GSCHED_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "job.h"
#include "params.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gs_policy_flags {
    GS_POLICY_PREEMPTIVE = 1 << 0, /* may call gs_engine_preempt() */
    GS_POLICY_ORACLE = 1 << 1,     /* reads true job durations */
    /* keeps per-job state sized when a job starts (queue sums, VC usage, cells): the engine
     * refuses gs_engine_rescale() for its jobs with GS_EUNSUPPORTED (an operator's resize
     * included), so no job changes size behind its back */
    GS_POLICY_RIGID = 1 << 2,
    /* places jobs whose tasks differ in size or form withinOneCell groups (gs_job_grouped());
     * without it the engine rejects such jobs on arrival, saying why */
    GS_POLICY_GROUPS = 1 << 3,
    /* runs only on a HiveD config (cells and virtual clusters): create() refuses any other
     * cluster; a program comparing several policies may skip it there (gsched sim does) */
    GS_POLICY_HIVED_ONLY = 1 << 4,
    /* emulates a published simulator that charges nothing for restarts, suspends and
     * migrations and has no placement slowdown: the engine's 'costs' parameter defaults to
     * off for it (docs/costs.md); costs=on still charges */
    GS_POLICY_COSTS_OFF = 1 << 5,
};

struct gs_policy_ops {
    const char *name;
    const char *summary; /* one line, shown by `gsched policies` */
    unsigned flags;
    /* Read parameters, allocate state.  Return 0 or a GS_E* code (+ diag). */
    int (*create)(gs_engine *e, gs_params *p, void **state, gs_diag *diag);
    void (*destroy)(void *state);
    /* Hooks: each returns 0 or a negative GS_E* code (see "Errors" above). */
    /* A job is PENDING for the first time. */
    int (*on_arrival)(void *state, gs_job *j);
    /* A job that is already RUNNING was adopted (daemon restart recovery). */
    int (*on_adopt)(void *state, gs_job *j);
    /* A job is PENDING again after preemption or a node failure (see "Re-entry"). */
    int (*on_requeue)(void *state, gs_job *j);
    /* A job reached a final state (done, failed, cancelled) from any state. */
    int (*on_finish)(void *state, gs_job *j);
    /* A restarted job's preemption protection ended (see gs_job.protect_until). */
    int (*on_preemptible)(void *state, gs_job *j);
    /* A node failed (down = 1) or came back (down = 0); jobs on it were requeued first. */
    int (*on_node)(void *state, int node, int down);
    /* A timer set with gs_engine_set_timer() fired. */
    int (*on_timer)(void *state, uint64_t tag);
    /* One scheduling pass at the current time. */
    int (*schedule)(void *state);
    /* Optional: verify the policy's own invariants (tests; gs_engine_check calls it). */
    int (*check)(void *state, gs_diag *diag);

    /*
     * Optional: how the policy's queues look from outside (the daemon's POS,
     * "why pending" text and VC listing; see gs_engine_queue_key() and the
     * calls after it for the defaults used when these are NULL).  They only
     * read the policy's state and the job; they run on the engine's thread.
     */
    /* Which queue pending job j waits in and its sort key there (smaller = ahead; equal keys
     * by job id).  j may be a job the engine does not hold (a dry run: slot -1, vc -1 when
     * no job used its VC yet): read only its fields. */
    int (*queue_key)(void *state, const gs_job *j, gs_queue_key *k);
    /* Text for queue 'queue' (an id queue_key returned), e.g. "in VC a (by submission)". */
    int (*queue_describe)(void *state, int queue, char *buf, size_t cap);
    /* GPUs promised to VC 'vc' (by name), -1 for none. */
    int64_t (*vc_guarantee)(void *state, const char *vc);
    /* VCs the policy declares before any job uses them (i = 0, 1, ... until NULL). */
    const char *(*vc_declared)(void *state, size_t i);

    /*
     * Optional, for the dry run (gs_engine_probe).  Like the queue view they
     * only read the policy's state and the job, and j may be a job the engine
     * does not hold (slot -1, vc -1 when no job used its VC yet).
     */
    /* The policy's importance of active job j (pending or running) now, in the order its
     * schedule() serves jobs: smaller (queue, then key) = more important, equal keys by job
     * id.  A preemptive policy with this op lets the dry run name the running jobs it would
     * stop for a new job (those ranked strictly after it); without it the dry run names none. */
    int (*rank)(void *state, const gs_job *j, gs_queue_key *k);
    /* Whether the policy rejects job j on arrival: 1 with the reason in why (cap > 0 bytes),
     * else 0.  The policy's on_arrival rejects by this same rule; the dry run answers NEVER. */
    int (*rejects)(void *state, const gs_job *j, char *why, size_t cap);

    /*
     * Optional (issue 14): the value of a named quantity of the policy's
     * state as text, for scenario expectations, tests and the daemon's
     * describe (e.g. hived: "vc.VC1.doomed" -> "1", "cell.<address>.state" ->
     * "bad"; each policy documents its keys).  Only reads.  0, or GS_ENOENT
     * for a key it does not know (GS_ERANGE when cap is too small).
     */
    int (*inspect)(void *state, const char *key, char *buf, size_t cap);

    /*
     * Optional (issue 16, GS_POLICY_ABI 2): arrived PENDING job j leaves the
     * policy's queues without ending (gs_engine_withdraw: the daemon holds or
     * updates a queued job).  The policy forgets it as it forgets a waiting job
     * that is cancelled; if the job comes back, it arrives again (on_arrival).
     * Without this op the engine refuses withdrawals (GS_EUNSUPPORTED).
     */
    int (*on_withdraw)(void *state, gs_job *j);
};

/*
 * The job at a slot, writable: policies get jobs from their hooks and from
 * here (gs_engine_job() gives read-only jobs to everyone else); they still
 * change them only through the gs_engine_* requests.  NULL past the end.
 */
gs_job *gs_policy_job(gs_engine *e, size_t slot);

/*
 * The compiled-in registry needs no hand edit: CMake lists every
 * src/core/policy_STEM.c (STEM a C identifier) and the generated registry
 * refers to one array per file, named by that rule:
 *
 *     const gs_policy_entry gs_policy_file_STEM[] = {{10, &fifo_ops}, {0, NULL}};
 *
 * (its tables static in the file, the array ending with a NULL ops).  'order'
 * places a table in the listing (`gsched policies`, gs_policy_at): smaller
 * first, equal orders by name (docs/writing-a-policy.md lists the orders
 * taken); names are unique (tests/test_policies.c).
 */
typedef struct gs_policy_entry {
    int order;
    const gs_policy_ops *ops;
} gs_policy_entry;

/* Look a compiled-in policy up by name; NULL if unknown. */
const gs_policy_ops *gs_policy_find(const char *name);
/* The same among 'extra' (n tables a program adds, e.g. plugins; searched first) and then
 * the compiled-in ones. */
const gs_policy_ops *gs_policy_find_ex(const gs_policy_ops *const *extra, size_t n,
                                       const char *name);
/* Registry iteration in listing order: i = 0, 1, ... until NULL. */
const gs_policy_ops *gs_policy_at(size_t i);

/*
 * Plugins: a shared object (cc -shared -fPIC, against these headers) that
 * defines one function,
 *
 *     const gs_policy_plugin *gsched_policy_plugin(void);
 *
 * returning a pointer to a static const gs_policy_plugin: { GS_POLICY_ABI,
 * sizeof(gs_policy_ops), sizeof(gs_job), &its_ops }.  The program loads it
 * (`gsched sim|serve --policy-plugin FILE.so`: dlopen in the CLI, never in
 * the core) and refuses it, saying why, when the symbol is missing, 'abi' or
 * the two sizes differ from its own (built against other headers: rebuild
 * it), the table lacks a name, create() or schedule(), or its name is taken.
 * The table then goes to the engine through gs_engine_opts.policies; the
 * plugin calls the public gs_* functions, which the gsched program exports.
 * 'abi' is the first member in every version, so any plugin's can be read;
 * GS_POLICY_ABI changes whenever a public type a policy reads changes layout.
 */
#define GS_POLICY_ABI           2
#define GS_POLICY_PLUGIN_SYMBOL "gsched_policy_plugin"

typedef struct gs_policy_plugin {
    uint32_t abi;      /* GS_POLICY_ABI the plugin was compiled with */
    uint32_t ops_size; /* sizeof(gs_policy_ops) */
    uint32_t job_size; /* sizeof(gs_job) */
    const gs_policy_ops *ops;
} gs_policy_plugin;

/* What a plugin defines (declared here for it; the program finds it with dlsym). */
const gs_policy_plugin *gsched_policy_plugin(void);
typedef const gs_policy_plugin *(*gs_policy_plugin_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
