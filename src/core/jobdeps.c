/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobdeps.c - Slurm-style dependency strings: parser, canonical text and the
 * evaluation of a term against the state of the job it names (gsched/jobdeps.h).
 *
 * Invariants: a string that parses is bounded (GS_DEPS_MAX terms, positive
 * ids; a singleton term has id 0) and gs_deps_format() of it parses back to the same terms; every
 * error names the 1-based position where the input went wrong.  No I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsched/job.h"
#include "gsched/jobdeps.h"

static const struct {
    const char *name;
    gs_dep_type t;
} types[] = {{"singleton", GS_DEP_SINGLETON},
             {"afternotok", GS_DEP_AFTERNOTOK},
             {"afterany", GS_DEP_AFTERANY},
             {"afterok", GS_DEP_AFTEROK},
             {"after", GS_DEP_AFTER}};

const char *gs_dep_type_name(gs_dep_type t)
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

int gs_deps_parse(const char *s, gs_deps *out, gs_diag *d)
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
                          "expected a dependency type (after, afterany, afterok, afternotok, "
                          "singleton)%s",
                          "");
            if (!strcmp(name, "aftercorr") || !strcmp(name, "afterburstbuffer"))
                return at(d, GS_EINVAL, s, t0,
                          "'%s' is not supported (after, afterany, afterok, afternotok, "
                          "singleton are)",
                          name);
            return at(d, GS_EINVAL, s, t0,
                      "unknown dependency type '%s' (after, afterany, afterok, afternotok, "
                      "singleton)",
                      name);
        }
        if (types[ti].t == GS_DEP_SINGLETON) {
            if (*p == ':') return at(d, GS_EINVAL, s, p, "'singleton' takes no job id%s", "");
            if (out->n == GS_DEPS_MAX) return at(d, GS_ETOOBIG, s, t0, "more than %s terms", "64");
            out->v[out->n++] = (gs_dep){GS_DEP_SINGLETON, 0};
        } else {
            if (*p != ':')
                return at(d, GS_EINVAL, s, p, "expected ':' and a job id after '%s'",
                          types[ti].name);
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
                    return at(
                        d, GS_EINVAL, s, e,
                        "array task ids (ID_TASK) are not supported: name the task's job id%s", "");
                if (out->n == GS_DEPS_MAX)
                    return at(d, GS_ETOOBIG, s, p, "more than %s job ids", "64");
                out->v[out->n++] = (gs_dep){types[ti].t, (int64_t)id};
                p = e;
            }
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

void gs_deps_format(const gs_deps *p, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < p->n && n < cap; i++) {
        int same = i > 0 && p->v[i].type == p->v[i - 1].type && p->v[i].type != GS_DEP_SINGLETON;
        int w = p->v[i].type == GS_DEP_SINGLETON
                    ? snprintf(buf + n, cap - n, "%ssingleton", i ? (p->any ? "?" : ",") : "")
                : same ? snprintf(buf + n, cap - n, ":%lld", (long long)p->v[i].id)
                       : snprintf(buf + n, cap - n, "%s%s:%lld", i ? (p->any ? "?" : ",") : "",
                                  gs_dep_type_name(p->v[i].type), (long long)p->v[i].id);
        if (w < 0) break;
        n += (size_t)w;
    }
}

int gs_dep_eval(gs_dep_type t, int state, int started)
{
    int final = state >= 0 && state < GS_JOB_NSTATES && gs_job_state_final((gs_job_state)state);
    switch (t) {
    case GS_DEP_AFTER: return started || final ? GS_DEP_MET : GS_DEP_WAIT;
    case GS_DEP_AFTERANY: return final ? GS_DEP_MET : GS_DEP_WAIT;
    case GS_DEP_AFTEROK:
        return !final ? GS_DEP_WAIT : state == GS_JOB_DONE ? GS_DEP_MET : GS_DEP_NEVER;
    case GS_DEP_AFTERNOTOK:
        return !final ? GS_DEP_WAIT : state == GS_JOB_DONE ? GS_DEP_NEVER : GS_DEP_MET;
    case GS_DEP_SINGLETON: break; /* not about one job: the caller answers it */
    }
    return GS_DEP_NEVER;
}

int gs_deps_singleton(const gs_deps *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->v[i].type == GS_DEP_SINGLETON) return 1;
    return 0;
}

int gs_deps_combine(const gs_deps *p, const int *st)
{
    int met = 0, never = 0;
    for (int i = 0; i < p->n; i++) {
        met += st[i] == GS_DEP_MET;
        never += st[i] == GS_DEP_NEVER;
    }
    if (p->any) return met ? GS_DEP_MET : never == p->n ? GS_DEP_NEVER : GS_DEP_WAIT;
    return never ? GS_DEP_NEVER : met == p->n ? GS_DEP_MET : GS_DEP_WAIT;
}
