/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gsched/params.h - ordered key=value parameters (the CLI's --set).
 *
 * Components read the keys they understand with the typed getters, which
 * mark a key as used.  After every component has read its keys, the caller
 * asks gs_params_unused() for the first key nobody read, so a typo such as
 * "--set queus=..." is an error instead of being silently ignored.
 *
 * Ownership: gs_params owns copies of keys and values.  Strings returned by
 * the getters are borrowed until the params are released.
 */
#ifndef GSCHED_PARAMS_H
#define GSCHED_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_param {
    char *key;
    char *val;
    int used;
} gs_param;

typedef struct gs_params {
    gs_param *v;
    size_t n, cap;
} gs_params;

void gs_params_init(gs_params *p);
void gs_params_release(gs_params *p);
/* Set key to val (a later set of the same key wins).  GS_ENOMEM on failure. */
int gs_params_set(gs_params *p, const char *key, const char *val);
/* Parse "key=value" and set it; GS_EINVAL if there is no '=' or no key. */
int gs_params_set_kv(gs_params *p, const char *kv);
/* Deep copy. */
int gs_params_copy(gs_params *dst, const gs_params *src);

/* Raw lookup; NULL when absent.  Marks the key used. */
const char *gs_params_get(const gs_params *p, const char *key);
/*
 * Typed getters: store the default when the key is absent and return 0;
 * return GS_EINVAL (with a message in diag, if given) when it is present but
 * malformed or outside [lo, hi].
 */
int gs_params_get_i64(const gs_params *p, const char *key, int64_t def, int64_t lo, int64_t hi,
                      int64_t *out, gs_diag *diag);
int gs_params_get_double(const gs_params *p, const char *key, double def, double lo, double hi,
                         double *out, gs_diag *diag);
/* Accepts on/off, true/false, yes/no, 1/0. */
int gs_params_get_bool(const gs_params *p, const char *key, int def, int *out, gs_diag *diag);
/* Duration (gsched/grammar.h), a bare number being seconds: 30, 90s, 1h30m, 1-12:00:00. */
int gs_params_get_duration(const gs_params *p, const char *key, int64_t def_us, int64_t *out_us,
                           gs_diag *diag);
/*
 * Comma-separated list of doubles, e.g. "3250,7200".  *out is malloc'ed (free
 * it); *n receives the count.  Absent key: *out = NULL, *n = 0.
 */
int gs_params_get_double_list(const gs_params *p, const char *key, double **out, size_t *n,
                              gs_diag *diag);

/* First key never read by a getter, or NULL when all were used. */
const char *gs_params_unused(const gs_params *p);
/* Mark every key unused again (before handing params to a fresh component). */
void gs_params_reset_used(gs_params *p);

#ifdef __cplusplus
}
#endif
#endif
