/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobsel.h - choosing jobs the way squeue and scancel do, shared by `gsched queue` and
 * `gsched cancel`: state lists (PD,R,CG,CD,F,CA,... and the long names), users, partitions
 * (VCs), QOS (priority classes), names and ids; the state a listing shows (CG while the
 * tasks of a job that is ending are stopping); every page of GET /v1/jobs.
 *
 * The daemon filters by its own states, one user and one VC; everything else (CG, lists of
 * users or VCs, names, QOS, ids) is filtered here, after fetching a superset.
 *
 * Ownership: a cli_jobsel owns its lists (cli_jobsel_release); the JSON array from
 * cli_jobsel_fetch belongs to the caller (json_decref).
 */
#ifndef GSCHED_CLI_JOBSEL_H
#define GSCHED_CLI_JOBSEL_H

#include <stddef.h>

#include <jansson.h>

#include "client.h"

/* Listing states: the daemon's plus CG (COMPLETING). */
enum { JS_PD, JS_R, JS_CG, JS_PR, JS_S, JS_CD, JS_F, JS_CA, JS_RJ, JS_NSTATES };

typedef struct cli_jobsel {
    unsigned states; /* bit per JS_*; 0 = no state filter */
    int all;         /* fetch finished jobs too (--all, or implied by states / ids) */
    char **users, **vcs, **names;
    size_t nusers, nvcs, nnames;
    int *prios;
    size_t nprios;
    long long *ids;
    size_t nids;
} cli_jobsel;

void cli_jobsel_init(cli_jobsel *s);
void cli_jobsel_release(cli_jobsel *s);

/* Add to the selection from a comma-separated option value.  0, or -1 after printing an
 * error naming 'flag'. */
int cli_jobsel_states(cli_jobsel *s, const char *flag, const char *list);
int cli_jobsel_users(cli_jobsel *s, const char *flag, const char *list);
int cli_jobsel_vcs(cli_jobsel *s, const char *flag, const char *list);
int cli_jobsel_names(cli_jobsel *s, const char *flag, const char *list);
int cli_jobsel_qos(cli_jobsel *s, const char *flag, const char *list);
int cli_jobsel_ids(cli_jobsel *s, const char *flag, const char *list);

/* --me: the caller's user name as the daemon knows it: the token's USER, else the Unix
 * account of this process on the socket, else $USER (TCP). */
int cli_jobsel_me(cli_jobsel *s, const cli_conn *k);

/* A QOS (priority class) name or integer -> priority; -1 = not one (error printed). */
int cli_qos_priority(const char *flag, const char *q, int *out);
/* The class name of a priority: "prod", "test", "normal", "oppo", else NULL. */
const char *cli_qos_name(int prio);

/* The state a listing shows: the daemon's two letters, or CG while a job that is ending
 * (cancel, time limit, failed task) stops its tasks. */
const char *cli_job_st(json_t *j);
/* The long form: PENDING, RUNNING, COMPLETING, PREEMPTED, SUSPENDED, COMPLETED, FAILED,
 * CANCELLED, REJECTED. */
const char *cli_job_state_long(json_t *j);

/* 1 if the job (a GET /v1/jobs entry) is selected. */
int cli_jobsel_match(const cli_jobsel *s, json_t *j);

/*
 * The selected jobs, every page, in the daemon's order; at most 'limit' (-1 = all); 'what'
 * (the command's name) starts error messages.  Returns
 * an exit code (cli_call's) with *out set on success.
 */
int cli_jobsel_fetch(cli_conn *k, const cli_jobsel *s, long long limit, const char *what,
                     json_t **out);

/*
 * One page of the selected jobs: the selection's jobs [offset, offset + count) in the daemon's
 * order (count -1: every job from offset on), each with only the keys 'fields' names
 * (comma-separated GET /v1/jobs keys; NULL: all of them); *total (may be NULL) is set to how
 * many jobs the whole selection has.  Filters the daemon has not (see above) make it read
 * every page to count; otherwise it reads only the page.  Returns an exit code, as
 * cli_jobsel_fetch.
 */
int cli_jobsel_page(cli_conn *k, const cli_jobsel *s, const char *fields, long long offset,
                    long long count, const char *what, json_t **out, long long *total);

#endif
