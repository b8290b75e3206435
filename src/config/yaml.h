/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * yaml.h - a thin layer over libfyaml for strict, well-reported parsing.
 *
 * Loads a document from a buffer; syntax errors come back as
 * "file:line:col: message".  Helpers look up mapping keys, convert scalars
 * with range checks and name the offending node's position; unknown keys
 * are reported with a "did you mean" suggestion when one is close.
 */
#ifndef GSCHED_YAML_H
#define GSCHED_YAML_H

#include <stddef.h>
#include <stdint.h>

#include <libfyaml.h>

#include "gsched/error.h"

typedef struct gs_yaml {
    struct fy_document *doc;
    struct fy_diag *diag;
    const char *file;
} gs_yaml;

/* Parse buf; on a syntax error fill d and return GS_EPARSE. */
int gs_yaml_load(gs_yaml *y, const char *file, const char *buf, size_t len, gs_diag *d);
void gs_yaml_release(gs_yaml *y);
struct fy_node *gs_yaml_root(const gs_yaml *y);

/* 1-based position of a node (of its first scalar token); 0/0 if unknown. */
void gs_yaml_pos(struct fy_node *n, int *line, int *col);
/* Report an error at node n. */
int gs_yaml_err(gs_diag *d, struct fy_node *n, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Value of key in mapping m, or NULL. */
struct fy_node *gs_yaml_get(struct fy_node *m, const char *key);
/*
 * 1 when n is absent or a YAML null: an empty value, or a plain (unquoted) scalar
 * null, Null, NULL or ~ (what YAML 1.1/1.2 core schemas and Go's yaml read as nil).
 */
int gs_yaml_is_null(struct fy_node *n);
/* Scalar text (NUL-terminated, borrowed) or NULL if n is not a scalar. */
const char *gs_yaml_str(struct fy_node *n);
/* Typed scalars; errors name the key and position. */
int gs_yaml_int(struct fy_node *n, const char *what, int64_t lo, int64_t hi, int64_t *out,
                gs_diag *d);
int gs_yaml_bool(struct fy_node *n, const char *what, int *out, gs_diag *d);
/*
 * Check that mapping m has only keys from 'allowed' (NULL-terminated).
 * On an unknown key report it at its position, suggesting the closest
 * allowed key when the edit distance is small.
 */
int gs_yaml_check_keys(struct fy_node *m, const char *const *allowed, const char *what, gs_diag *d);
/* Edit distance helper (also used for CLI suggestions). */
int gs_edit_distance(const char *a, const char *b);

#endif
