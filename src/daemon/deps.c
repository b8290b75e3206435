/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deps.c - Slurm-style dependency strings: parser, canonical text and the
 * evaluation of a term against the state of the job it names (deps.h).
 *
 * Invariants: a string that parses is bounded (GSD_DEPS_MAX ids, positive
 * ids) and gsd_deps_format() of it parses back to the same terms; every
 * error names the 1-based position where the input went wrong.  No I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"

static const struct {
    const char *name;
    gsd_dep_type t;
} types[] = {{"afternotok", GSD_DEP_AFTERNOTOK},
             {"afterany", GSD_DEP_AFTERANY},
             {"afterok", GSD_DEP_AFTEROK},
             {"after", GSD_DEP_AFTER}};

const char *gsd_dep_type_name(gsd_dep_type t)
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (types[i].t == t) return types[i].name;
    return "?";
}

static int at(gs_diag *d, int err, const char *s, const char *p, const char *fmt, const char *x)
{
    char what[160];
    snprintf(what, sizeof what, fmt, x);
    return gs_diag_set(d, err, 0, 0, "dependency '%s': position %d: %s", s, (int)(p - s) + 1, what);
}

int gsd_deps_parse(const char *s, gsd_deps *out, gs_diag *d)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s) return gs_diag_set(d, GS_EINVAL, 0, 0, "dependency: empty");
    const char *p = s;
    char sep = 0; /* ',' or '?' once seen */
    for (;;) {
        /* TYPE */
        const char *t0 = p;
        while (isalpha((unsigned char)*p) || *p == '_') p++;
        size_t tl = (size_t)(p - t0);
        int ti = -1;
        for (size_t i = 0; i < sizeof types / sizeof *types; i++)
            if (strlen(types[i].name) == tl && !strncmp(types[i].name, t0, tl)) ti = (int)i;
        if (ti < 0) {
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)(tl < 31 ? tl : 31), t0);
            if (!tl)
                return at(d, GS_EINVAL, s, t0,
                          "expected a dependency type (after, afterany, afterok, afternotok)%s",
                          "");
            if (!strcmp(name, "singleton") || !strcmp(name, "aftercorr") ||
                !strcmp(name, "afterburstbuffer"))
                return at(d, GS_EINVAL, s, t0,
                          "'%s' is not supported (after, afterany, afterok, afternotok are)", name);
            return at(d, GS_EINVAL, s, t0,
                      "unknown dependency type '%s' (after, afterany, afterok, afternotok)", name);
        }
        if (*p != ':')
            return at(d, GS_EINVAL, s, p, "expected ':' and a job id after '%s'", types[ti].name);
        /* :ID[:ID...] */
        while (*p == ':') {
            p++;
            if (!isdigit((unsigned char)*p))
                return at(d, GS_EINVAL, s, p, "expected a job id after '%s:'", types[ti].name);
            errno = 0;
            char *e;
            long long id = strtoll(p, &e, 10);
            if (errno || id <= 0) return at(d, GS_EINVAL, s, p, "job id out of range%s", "");
            if (*e == '+')
                return at(d, GS_EINVAL, s, e, "delays ('+minutes') are not supported%s", "");
            if (*e == '_')
                return at(d, GS_EINVAL, s, e,
                          "array task ids (ID_TASK) are not supported: name the task's job id%s",
                          "");
            if (out->n == GSD_DEPS_MAX)
                return at(d, GS_ETOOBIG, s, p, "more than %s job ids", "64");
            out->v[out->n++] = (gsd_dep){types[ti].t, (int64_t)id};
            p = e;
        }
        if (!*p) break;
        if (*p != ',' && *p != '?')
            return at(d, GS_EINVAL, s, p, "expected ',' (all), '?' (any), ':' or the end%s", "");
        if (sep && *p != sep)
            return at(d, GS_EINVAL, s, p, "',' (all) and '?' (any) cannot be mixed%s", "");
        sep = *p++;
    }
    out->any = sep == '?';
    return 0;
}

void gsd_deps_format(const gsd_deps *p, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < p->n && n < cap; i++) {
        int same = i > 0 && p->v[i].type == p->v[i - 1].type;
        int w = same ? snprintf(buf + n, cap - n, ":%lld", (long long)p->v[i].id)
                     : snprintf(buf + n, cap - n, "%s%s:%lld", i ? (p->any ? "?" : ",") : "",
                                gsd_dep_type_name(p->v[i].type), (long long)p->v[i].id);
        if (w < 0) break;
        n += (size_t)w;
    }
}

int gsd_dep_eval(gsd_dep_type t, int state, int started)
{
    int final = state >= 0 && state < GS_JOB_NSTATES && gs_job_state_final((gs_job_state)state);
    switch (t) {
    case GSD_DEP_AFTER: return started || final ? GSD_DEP_MET : GSD_DEP_WAIT;
    case GSD_DEP_AFTERANY: return final ? GSD_DEP_MET : GSD_DEP_WAIT;
    case GSD_DEP_AFTEROK:
        return !final ? GSD_DEP_WAIT : state == GS_JOB_DONE ? GSD_DEP_MET : GSD_DEP_NEVER;
    case GSD_DEP_AFTERNOTOK:
        return !final ? GSD_DEP_WAIT : state == GS_JOB_DONE ? GSD_DEP_NEVER : GSD_DEP_MET;
    }
    return GSD_DEP_NEVER;
}

int gsd_deps_combine(const gsd_deps *p, const int *st)
{
    int met = 0, never = 0;
    for (int i = 0; i < p->n; i++) {
        met += st[i] == GSD_DEP_MET;
        never += st[i] == GSD_DEP_NEVER;
    }
    if (p->any) return met ? GSD_DEP_MET : never == p->n ? GSD_DEP_NEVER : GSD_DEP_WAIT;
    return never ? GSD_DEP_NEVER : met == p->n ? GSD_DEP_MET : GSD_DEP_WAIT;
}
