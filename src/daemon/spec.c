/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spec.c - parsing, validation and canonical JSON of live job specs, and
 * the daemon's submit-time check of a spec against this machine
 * (gsd_spec_check_host: the workdir exists and is a directory - on a
 * multi-user daemon, one the job's account can enter, checked as that
 * account so a submit cannot probe what only the daemon can see).
 *
 * Invariant: a spec that parses also validates (gsd_spec_parse ends with
 * gsd_spec_validate), and gsd_spec_to_json() of a valid spec parses back to
 * an equal spec, which restart recovery relies on.  Parsing does no I/O
 * (a stored spec whose workdir went away still loads); only
 * gsd_spec_check_host looks at the file system.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "gsched/jobdeps.h"
#include "spec.h"
#include "yaml.h"

void gsd_spec_init(gsd_spec *s)
{
    memset(s, 0, sizeof *s);
    s->ntasks = 1;
    s->gpus_per_task = 1;
    s->gang = 1;
    s->min_rescale_gap = -1;
    s->max_rescales = -1;
}

void gsd_spec_release(gsd_spec *s)
{
    if (!s) return;
    free(s->name);
    free(s->vc);
    free(s->user);
    free(s->run_as);
    free(s->gpu_type);
    if (s->argv)
        for (int i = 0; i < s->argc; i++) free(s->argv[i]);
    free(s->argv);
    free(s->shell);
    for (size_t i = 0; i < s->nenv; i++) {
        free(s->env[i].key);
        free(s->env[i].val);
    }
    free(s->env);
    free(s->workdir);
    free(s->checkpoint_dir);
    free(s->pinned_cell);
    free(s->dependency);
    free(s->array);
    free(s->external);
    free(s->sizes);
    free(s->app);
    free(s->model);
    free(s->task_gpus);
    for (int i = 0; i < s->ngroups; i++) free((char *)s->groups[i].within);
    free(s->groups);
    free(s->hived);
    gsd_spec_init(s);
}

int gsd_spec_total_gpus(const gsd_spec *s)
{
    if (!s->task_gpus) return s->ntasks * s->gpus_per_task;
    int n = 0;
    for (int t = 0; t < s->ntasks; t++) n += s->task_gpus[t];
    return n;
}

char *gsd_spec_task_gpus_col(const gsd_spec *s)
{
    if (!s->task_gpus) return NULL;
    size_t cap = (size_t)s->ntasks * 6 + 1, n = 0;
    char *p = malloc(cap);
    if (!p) abort();
    p[0] = '\0';
    for (int t = 0; t < s->ntasks; t++)
        n += (size_t)snprintf(p + n, cap - n, t ? ",%d" : "%d", (int)s->task_gpus[t]);
    return p;
}

char *gsd_spec_groups_col(const gsd_spec *s)
{
    if (!s->ngroups) return NULL;
    json_t *a = json_array();
    for (int i = 0; i < s->ngroups; i++) {
        const gs_task_group *g = &s->groups[i];
        json_t *o = json_pack("{s:i,s:i,s:i}", "lo", g->lo, "hi", g->hi, "parent", g->parent);
        if (g->within) json_object_set_new(o, "within", json_string(g->within));
        json_array_append_new(a, o);
    }
    char *out = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(a);
    if (!out) abort();
    return out;
}

void gsd_spec_gpus_text(const gsd_spec *s, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    if (!s->task_gpus) {
        snprintf(buf, cap, "%d", s->ntasks * s->gpus_per_task);
        return;
    }
    for (int t = 0; t < s->ntasks && n < cap;) {
        int k = t;
        while (k < s->ntasks && s->task_gpus[k] == s->task_gpus[t]) k++;
        if (k - t > 1)
            n +=
                (size_t)snprintf(buf + n, cap - n, "%s%dx%d", t ? "+" : "", k - t, s->task_gpus[t]);
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s%d", t ? "+" : "", s->task_gpus[t]);
        t = k;
    }
    if (n >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4); /* cut: say so */
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) abort(); /* programs abort on out-of-memory */
    return p;
}

/* ---- scalar helpers ------------------------------------------------------------------------- */

int gsd_parse_duration(const char *s, gs_time bare_unit, gs_time *out, gs_diag *d)
{
    gs_time t;
    int rc = gs_parse_duration(s, bare_unit, &t, d);
    if (rc) return rc;
    if (t > GSD_DURATION_MAX) return gs_diag_set(d, GS_ERANGE, 0, 0, "longer than 100 years");
    /* whole milliseconds: the canonical form ("500ms", "90s") must give the same value back */
    *out = (t + GS_MSEC / 2) / GS_MSEC * GS_MSEC;
    return 0;
}

int gsd_parse_time_limit(const char *s, gs_time *out, gs_diag *d)
{
    if (!strcasecmp(s, "unlimited") || !strcasecmp(s, "infinite")) {
        *out = 0;
        return 0;
    }
    return gsd_parse_duration(s, 60 * GS_SEC, out, d);
}

void gsd_format_duration(gs_time t, char *buf, size_t cap)
{
    if (t < 0) t = 0;
    long long s = (long long)(t / GS_SEC);
    long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
    if (d)
        snprintf(buf, cap, "%lldd%02lldh", d, h);
    else if (h)
        snprintf(buf, cap, "%lldh%02lldm", h, m);
    else if (m)
        snprintf(buf, cap, "%lldm%02llds", m, sec);
    else
        snprintf(buf, cap, "%llds", sec);
}

int gsd_parse_deadline(const char *s, gs_time *out)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || s[n] ||
        y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
        h < 0 || mi < 0 || sec < 0)
        return GS_EPARSE;
    struct tm tm = {0};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (t <= 0) return GS_EPARSE;
    *out = (gs_time)t * GS_SEC;
    return 0;
}

void gsd_format_deadline(gs_time t, char *buf, size_t cap)
{
    time_t s = (time_t)(t / GS_SEC);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int gsd_env_reserved(const char *key)
{
    static const char *const reserved[] = {
        "CUDA_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT", "RANK",
        "WORLD_SIZE",           "LOCAL_RANK",  "NODE_RANK",   NULL};
    if (!strncmp(key, "GSCHED_", 7)) return strncmp(key, "GSCHED_ARRAY_", 13) != 0;
    for (size_t i = 0; reserved[i]; i++)
        if (!strcmp(key, reserved[i])) return 1;
    return 0;
}

/*
 * Text a person will read in listings and logs: no NUL, no C0 control character other than
 * tab (and newline/CR where allow_newlines: commands and environment values may be several
 * lines), no DEL, no C1 control (U+0080-U+009F) and no bidirectional formatting character
 * (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which would make what is printed
 * differ from what runs. Returns 0, or the code point found (NUL as 0x110000) and its byte
 * offset in *at. The input is UTF-8 (gs_yaml_load checks it).
 */
static unsigned bad_char(const char *s, size_t len, int allow_newlines, size_t *at)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len; i++) {
        unsigned c = p[i], cp = 0;
        if (c == 0)
            cp = 0x110000;
        else if (c == '\t' || (allow_newlines && (c == '\n' || c == '\r')))
            continue;
        else if (c < 0x20 || c == 0x7f)
            cp = c;
        else if (c == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
            cp = p[i + 1];
        else if (c == 0xd8 && i + 1 < len && p[i + 1] == 0x9c)
            cp = 0x61c;
        else if (c == 0xe2 && i + 2 < len && p[i + 1] == 0x80 &&
                 (p[i + 2] == 0x8e || p[i + 2] == 0x8f || (p[i + 2] >= 0xaa && p[i + 2] <= 0xae)))
            cp = 0x2000 + (p[i + 2] - 0x80);
        else if (c == 0xe2 && i + 2 < len && p[i + 1] == 0x81 && p[i + 2] >= 0xa6 &&
                 p[i + 2] <= 0xa9)
            cp = 0x2040 + (p[i + 2] - 0x80);
        if (cp) {
            if (at) *at = i;
            return cp;
        }
    }
    return 0;
}

static int bad_text(const char *s, int allow_newlines)
{
    return bad_char(s, strlen(s), allow_newlines, NULL) != 0;
}

/* "a control character (U+001B)" / "a NUL character" / "a bidirectional control (U+202E)" */
static void describe_char(unsigned cp, char *buf, size_t cap)
{
    if (cp == 0x110000)
        snprintf(buf, cap, "a NUL character");
    else if (cp >= 0x61c)
        snprintf(buf, cap, "a bidirectional formatting character (U+%04X)", cp);
    else
        snprintf(buf, cap, "a control character (U+%04X)", cp);
}

/* 0, or a GS_EINVAL diagnostic naming the field and the character. */
static int text_err(gs_diag *d, const char *field, const char *what, const char *s,
                    int allow_newlines)
{
    size_t at = 0;
    unsigned cp = bad_char(s, strlen(s), allow_newlines, &at);
    if (!cp) return 0;
    char desc[64];
    describe_char(cp, desc, sizeof desc);
    return gs_diag_set(d, GS_EINVAL, 0, 0, "'%s'%s contains %s at byte %zu", field, what, desc, at);
}

int gsd_text_check(const char *field, const char *s, gs_diag *d)
{
    return text_err(d, field, "", s, 0);
}

static int env_key_ok(const char *k)
{
    if (!*k || !(isalpha((unsigned char)*k) || *k == '_')) return 0;
    for (const char *p = k; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
    return strlen(k) <= 256;
}

/* ---- validation ----------------------------------------------------------------------------- */

#define FIELD(f) (field ? (void)(*field = (f)) : (void)0)

/* The elastic fields (issue 13): only an elastic job (max_gpus > 0) may set them. */
static int validate_elastic(const gsd_spec *s, gs_diag *d, const char **field)
{
    int gpt = s->gpus_per_task;
    if (s->max_gpus < 0 || s->max_gpus > GSD_MAX_GPUS || s->min_gpus < 0 ||
        s->min_gpus > GSD_MAX_GPUS) {
        FIELD(s->max_gpus < 0 || s->max_gpus > GSD_MAX_GPUS ? "max_gpus" : "min_gpus");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "'min_gpus' and 'max_gpus' must be between 0 and %d",
                           GSD_MAX_GPUS);
    }
    if (!gsd_spec_elastic(s)) {
        const char *f = s->min_gpus               ? "min_gpus"
                        : s->nsizes               ? "sizes"
                        : s->min_rescale_gap >= 0 ? "min_rescale_gap"
                        : s->max_rescales != -1   ? "max_rescales"
                        : s->max_failures         ? "max_failures"
                        : s->drain_timeout        ? "drain_timeout"
                                                  : NULL;
        if (f) {
            FIELD(f);
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "'%s' applies to elastic jobs only: give 'max_gpus' too", f);
        }
    } else {
        int lo = s->min_gpus > gpt ? s->min_gpus : gpt;
        if (!s->gang) {
            FIELD("gang");
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "an elastic job is a gang ('gang: false' "
                               "cannot be elastic)");
        }
        if (s->max_gpus < lo) {
            FIELD("max_gpus");
            return gs_diag_set(d, GS_ERANGE, 0, 0,
                               "'max_gpus' (%d) is below the smallest size %d (min_gpus, and at "
                               "least the GPUs of one task)",
                               s->max_gpus, lo);
        }
        if (s->nsizes < 0 || s->nsizes > GSD_MAX_SIZES || (s->nsizes && !s->sizes)) {
            FIELD("sizes");
            return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'sizes' has more than %d entries",
                               GSD_MAX_SIZES);
        }
        for (int i = 0; i < s->nsizes; i++) {
            int v = s->sizes[i];
            if (v < lo || v > s->max_gpus || v % gpt || (i && v <= s->sizes[i - 1])) {
                FIELD("sizes");
                return gs_diag_set(d, GS_EINVAL, 0, 0,
                                   "'sizes' must be ascending multiples of %d GPU(s) per task in "
                                   "[%d, %d], got %d at entry %d",
                                   gpt, lo, s->max_gpus, v, i + 1);
            }
        }
        if (!gsd_spec_size_valid(s, s->ntasks * gpt)) {
            FIELD("tasks");
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "the initial size of %d GPU(s) (tasks x gpus) is not one of the "
                               "job's sizes",
                               s->ntasks * gpt);
        }
    }
    if (s->max_rescales < -1 || s->max_failures < 0 || s->min_rescale_gap < -1 ||
        s->drain_timeout < 0 || s->deadline < 0 || s->batch_size < 0) {
        FIELD(s->max_rescales < -1   ? "max_rescales"
              : s->max_failures < 0  ? "max_failures"
              : s->deadline < 0      ? "deadline"
              : s->batch_size < 0    ? "batch_size"
              : s->drain_timeout < 0 ? "drain_timeout"
                                     : "min_rescale_gap");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "elastic limits must not be negative");
    }
    if (s->drain_timeout > (gs_time)3600 * GS_SEC) {
        FIELD("drain_timeout");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "'drain_timeout' must be at most 1h");
    }
    return 0;
}

int gsd_spec_size_valid(const gsd_spec *s, int n)
{
    int gpt = s->gpus_per_task > 0 ? s->gpus_per_task : 1;
    int lo = s->min_gpus > gpt ? s->min_gpus : gpt;
    if (!gsd_spec_elastic(s) || n < lo || n > s->max_gpus || n % gpt) return 0;
    if (!s->nsizes) return 1;
    for (int i = 0; i < s->nsizes; i++)
        if (s->sizes[i] == n) return 1;
    return 0;
}

/*
 * Members of different sizes and nested groups (issue 14): the shape `members` / `groups`
 * write (spec.h), so that the canonical JSON gives the same spec back.  Group g's own members
 * are the tasks [lo, first child's lo); its children follow one another up to its hi.
 */
static int validate_groups(const gsd_spec *s, gs_diag *d, const char **field)
{
    if (s->task_gpus) {
        int mx = 0, same = 1;
        long long sum = 0;
        for (int t = 0; t < s->ntasks; t++) {
            int v = s->task_gpus[t];
            if (v < 1 || v > GSD_MAX_GPUS) {
                FIELD("members");
                return gs_diag_set(d, GS_ERANGE, 0, 0,
                                   "'members': GPUs per task must be between 1 and %d, got %d "
                                   "(task %d)",
                                   GSD_MAX_GPUS, v, t);
            }
            if (v > mx) mx = v;
            if (v != s->task_gpus[0]) same = 0;
            sum += v;
        }
        if (sum > GSD_MAX_GPUS) {
            FIELD("members");
            return gs_diag_set(d, GS_ERANGE, 0, 0,
                               "job asks for %lld GPUs, more than the limit of %d", sum,
                               GSD_MAX_GPUS);
        }
        if (same || mx != s->gpus_per_task) {
            FIELD("members");
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "'members': per-task GPUs must differ and gpus_per_task be the "
                               "largest (%d, got %d)",
                               mx, s->gpus_per_task);
        }
    }
    if (s->ngroups < 0 || s->ngroups > GSD_MAX_GROUPS || (s->ngroups && !s->groups)) {
        FIELD("groups");
        return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'groups': more than %d groups", GSD_MAX_GROUPS);
    }
    for (int i = 0; i < s->ngroups; i++) {
        const gs_task_group *g = &s->groups[i];
        int depth = 0;
        for (int p = g->parent; p >= 0 && depth <= GSD_MAX_GROUP_DEPTH; p = s->groups[p].parent)
            depth++;
        const char *bad = NULL;
        if (g->lo < 0 || g->hi <= g->lo || g->hi > s->ntasks)
            bad = "a group's tasks must be a non-empty range of the job's tasks";
        else if (g->parent < -1 || g->parent >= i)
            bad = "a group's parent must come before it";
        else if (depth > GSD_MAX_GROUP_DEPTH)
            bad = "groups nest too deep";
        else if (g->parent >= 0 &&
                 (g->lo < s->groups[g->parent].lo || g->hi > s->groups[g->parent].hi))
            bad = "a group's tasks must lie inside its parent's";
        if (!bad) {
            /* where it must start: after its previous sibling, else anywhere inside its parent
             * after the parent's own members (checked by the sibling chain reaching its hi) */
            int prev = -1;
            for (int k = i - 1; k >= 0; k--)
                if (s->groups[k].parent == g->parent) {
                    prev = k;
                    break;
                }
            /* (a HiveD spec's groups keep HiveD's shape: its canonical form is the block) */
            if (prev >= 0 && (s->hived ? g->lo < s->groups[prev].hi : g->lo != s->groups[prev].hi))
                bad = "sibling groups must follow one another";
            /* pre-order: everything between its parent and it lies in its parent */
            for (int k = g->parent + 1; k < i && !bad && g->parent >= 0; k++) {
                int a = s->groups[k].parent;
                while (a >= 0 && a != g->parent) a = s->groups[a].parent;
                if (a != g->parent) bad = "groups must be listed parent first (pre-order)";
            }
            /* the last child of a group ends where the group does */
            int last = 1;
            for (int k = i + 1; k < s->ngroups; k++)
                if (s->groups[k].parent == g->parent) last = 0;
            if (!bad && last && !s->hived && g->parent >= 0 && g->hi != s->groups[g->parent].hi)
                bad = "a group's last child group must end with it";
            if (!bad && last && !s->hived && g->parent < 0 && g->hi != s->ntasks)
                bad = "the last top-level group must end with the job's last task";
        }
        if (!bad && g->within &&
            (!*g->within || strlen(g->within) > GSD_MAX_NAME || bad_text(g->within, 0) ||
             strchr(g->within, '\t')))
            bad = "'within' must be a cell type name (1-128 characters, no control characters)";
        if (bad) {
            FIELD("groups");
            return gs_diag_set(d, GS_EINVAL, 0, 0, "'groups': group %d: %s", i + 1, bad);
        }
    }
    if (gsd_spec_grouped(s)) {
        const char *f = !s->gang ? "gang" : gsd_spec_elastic(s) ? "max_gpus" : NULL;
        if (f) {
            FIELD(f);
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "a job with members of different sizes or groups is a gang and "
                               "not elastic ('%s' cannot be given with 'members' / 'groups')",
                               s->gang ? "max_gpus" : "gang: false");
        }
    }
    return 0;
}

int gsd_spec_validate(const gsd_spec *s, gs_diag *d, const char **field)
{
    if (s->array) {
        gs_array a;
        int rc = gs_array_parse(s->array, &a, d);
        gs_array_release(&a);
        if (rc) {
            FIELD("array");
            return rc;
        }
    }
    if (s->dependency) {
        gs_deps p;
        int rc = gs_deps_parse(s->dependency, &p, d);
        if (rc) {
            FIELD("dependency");
            return rc;
        }
    }
    if (s->ntasks < 1 || s->ntasks > GSD_MAX_GPUS) {
        FIELD("tasks");
        return gs_diag_set(d, GS_ERANGE, d ? d->line : 0, d ? d->col : 0,
                           "'tasks' must be between 1 and %d, got %d", GSD_MAX_GPUS, s->ntasks);
    }
    if (s->gpus_per_task < 1 || s->gpus_per_task > GSD_MAX_GPUS) {
        FIELD("gpus");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "'gpus' (per task) must be between 1 and %d, got %d",
                           GSD_MAX_GPUS, s->gpus_per_task);
    }
    if (!(s->steps >= 0 && s->steps <= 1e15) || !(s->weight >= 0 && s->weight <= 1e6)) {
        FIELD(!(s->steps >= 0 && s->steps <= 1e15) ? "steps" : "weight");
        return gs_diag_set(d, GS_ERANGE, 0, 0,
                           "'steps' must be between 0 and 1e15 and 'weight' between 0 and 1e6");
    }
    if (s->steps > 0 && s->duration) {
        FIELD("steps");
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "give the job's work as 'duration' or as 'steps' (with 'model'), not "
                           "both");
    }
    if (!s->task_gpus && (long long)s->ntasks * s->gpus_per_task > GSD_MAX_GPUS) {
        FIELD("tasks");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "job asks for %lld GPUs, more than the limit of %d",
                           (long long)s->ntasks * s->gpus_per_task, GSD_MAX_GPUS);
    }
    if (s->priority < -1 || s->priority > GSD_PRIO_MAX) {
        FIELD("priority");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "'priority' must be between -1 and %d",
                           GSD_PRIO_MAX);
    }
    if (!s->shell && !(s->argv && s->argc > 0)) {
        FIELD("command");
        return gs_diag_set(d, GS_EINVAL, 0, 0, "missing field 'command' (a string or a list)");
    }
    if (s->shell && (strlen(s->shell) > GSD_MAX_CMD_BYTES || !*s->shell)) {
        FIELD("command");
        return gs_diag_set(d, GS_EINVAL, 0, 0, "'command' must be 1 to %d bytes",
                           GSD_MAX_CMD_BYTES);
    }
    if (s->shell && bad_text(s->shell, 1)) {
        FIELD("command");
        return text_err(d, "command", "", s->shell, 1);
    }
    if (s->argv) {
        size_t total = 0;
        if (s->argc > GSD_MAX_ARGS) {
            FIELD("command");
            return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'command' has more than %d arguments",
                               GSD_MAX_ARGS);
        }
        for (int i = 0; i < s->argc; i++) {
            total += strlen(s->argv[i]) + 1;
            if (bad_text(s->argv[i], 1)) {
                char what[48];
                snprintf(what, sizeof what, " argument %d", i);
                FIELD("command");
                return text_err(d, "command", what, s->argv[i], 1);
            }
        }
        if (!*s->argv[0]) {
            FIELD("command");
            return gs_diag_set(d, GS_EINVAL, 0, 0, "'command' program name is empty");
        }
        if (total > GSD_MAX_CMD_BYTES) {
            FIELD("command");
            return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'command' is longer than %d bytes",
                               GSD_MAX_CMD_BYTES);
        }
    }
    struct {
        const char *v, *f;
        size_t max;
    } strs[] = {{s->name, "name", GSD_MAX_NAME},
                {s->vc, "vc", GSD_MAX_NAME},
                {s->user, "user", GSD_MAX_NAME},
                {s->run_as, "run_as", GSD_MAX_NAME},
                {s->gpu_type, "gpu_type", GSD_MAX_NAME},
                {s->workdir, "workdir", GSD_MAX_PATH},
                {s->checkpoint_dir, "checkpoint.dir", GSD_MAX_PATH},
                {s->pinned_cell, "pinned_cell", GSD_MAX_NAME},
                {s->external, "external", GSD_MAX_NAME},
                {s->app, "app", GSD_MAX_NAME},
                {s->model, "model", GSD_MAX_NAME}};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        if (!strs[i].v) continue;
        if (strlen(strs[i].v) > strs[i].max) {
            FIELD(strs[i].f);
            return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'%s' is longer than %zu characters", strs[i].f,
                               strs[i].max);
        }
        if (bad_text(strs[i].v, 0) || strchr(strs[i].v, '\t')) {
            FIELD(strs[i].f);
            if (bad_text(strs[i].v, 0)) return text_err(d, strs[i].f, "", strs[i].v, 0);
            return gs_diag_set(d, GS_EINVAL, 0, 0, "'%s' contains a tab", strs[i].f);
        }
    }
    if (s->user && (!*s->user || strchr(s->user, ' ') || strchr(s->user, ':'))) {
        FIELD("user");
        return gs_diag_set(d, GS_EINVAL, 0, 0, "'user' must be non-empty without spaces or ':'");
    }
    if (s->vc && (!*s->vc || strchr(s->vc, ' ') || strchr(s->vc, ','))) {
        FIELD("vc");
        return gs_diag_set(d, GS_EINVAL, 0, 0, "'vc' must be non-empty without spaces or commas");
    }
    if (s->workdir && s->workdir[0] != '/') {
        FIELD("workdir");
        return gs_diag_set(d, GS_EINVAL, 0, 0, "'workdir' must be an absolute path, got '%s'",
                           s->workdir);
    }
    if (s->nenv > GSD_MAX_ENV) {
        FIELD("env");
        return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'env' has more than %d entries", GSD_MAX_ENV);
    }
    for (size_t i = 0; i < s->nenv; i++) {
        if (!env_key_ok(s->env[i].key)) {
            FIELD("env");
            return gs_diag_set(d, GS_EINVAL, 0, 0, "'env': '%s' is not a valid variable name",
                               s->env[i].key);
        }
        if (gsd_env_reserved(s->env[i].key)) {
            FIELD("env");
            return gs_diag_set(d, GS_EINVAL, 0, 0,
                               "'env': %s is set by the executor and cannot be overridden",
                               s->env[i].key);
        }
        if (strlen(s->env[i].val) > GSD_MAX_CMD_BYTES) {
            FIELD("env");
            return gs_diag_set(d, GS_ETOOBIG, 0, 0, "'env': value of %s is longer than %d bytes",
                               s->env[i].key, GSD_MAX_CMD_BYTES);
        }
        if (bad_text(s->env[i].val, 1)) {
            char what[300];
            snprintf(what, sizeof what, " value of %s", s->env[i].key);
            FIELD("env");
            return text_err(d, "env", what, s->env[i].val, 1);
        }
        for (size_t k = 0; k < i; k++)
            if (!strcmp(s->env[k].key, s->env[i].key)) {
                FIELD("env");
                return gs_diag_set(d, GS_EINVAL, 0, 0, "'env': %s is given twice", s->env[i].key);
            }
    }
    if (s->time_limit < 0 || s->duration < 0 || s->grace < 0) {
        FIELD("time_limit");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "durations must not be negative");
    }
    if (s->cpus_per_task < 0 || s->mem_mb_per_task < 0) {
        FIELD("cpus");
        return gs_diag_set(d, GS_ERANGE, 0, 0, "'cpus' and 'memory' must not be negative");
    }
    if (s->interactive && (s->ntasks != 1 || gsd_spec_elastic(s) || s->array || s->hived)) {
        FIELD("interactive");
        return gs_diag_set(d, GS_EINVAL, 0, 0,
                           "'interactive' (gsched run) takes one task, not elastic, not an "
                           "array, no hived block: its stdin goes to that task");
    }
    int rc = validate_groups(s, d, field);
    return rc ? rc : validate_elastic(s, d, field);
}

/* ---- parsing -------------------------------------------------------------------------------- */

typedef struct pctx {
    gs_diag *d;
    const char **field;
} pctx;

static int perr(pctx *c, struct fy_node *n, const char *field, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int perr(pctx *c, struct fy_node *n, const char *field, int err, const char *fmt, ...)
{
    if (c->field) *c->field = field;
    if (!c->d) return err;
    int line = 0, col = 0;
    gs_yaml_pos(n, &line, &col);
    if (!line && n) {
        /* an empty collection has no token of its own: point at its key */
        struct fy_node *parent = fy_node_get_parent(n);
        void *it = NULL;
        struct fy_node_pair *p;
        while (parent && fy_node_is_mapping(parent) && (p = fy_node_mapping_iterate(parent, &it)))
            if (fy_node_pair_value(p) == n) {
                gs_yaml_pos(fy_node_pair_key(p), &line, &col);
                break;
            }
    }
    c->d->line = line;
    c->d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->d->msg, sizeof c->d->msg, fmt, ap);
    va_end(ap);
    return err;
}

static int get_str(pctx *c, struct fy_node *n, const char *field, char **out)
{
    const char *s = gs_yaml_str(n);
    if (!s) return perr(c, n, field, GS_EPARSE, "'%s' must be a string", field);
    free(*out);
    *out = xstrdup(s);
    return 0;
}

/* A quoted scalar ("2" in JSON, "2" or '2' in YAML) is a string: libfyaml keeps the style,
 * so numbers and booleans given as strings are type errors in both formats. */
static int quoted(struct fy_node *n)
{
    enum fy_node_style st = fy_node_get_style(n);
    return st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED;
}

/* A whole number in [lo, hi] (64 bits); a quoted one is refused (it is a string). */
static int get_i64(pctx *c, struct fy_node *n, const char *field, long long lo, long long hi,
                   int64_t *out)
{
    const char *s = gs_yaml_str(n);
    if (!s) return perr(c, n, field, GS_EPARSE, "'%s' must be an integer", field);
    if (quoted(n))
        return perr(c, n, field, GS_EPARSE, "'%s' must be an integer, not a string (\"%s\")", field,
                    s);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return perr(c, n, field, GS_EPARSE, "'%s' must be an integer, got '%s'", field, s);
    if (v < lo || v > hi)
        return perr(c, n, field, GS_ERANGE, "'%s' must be between %lld and %lld, got %lld", field,
                    lo, hi, v);
    *out = (int64_t)v;
    return 0;
}

static int get_int(pctx *c, struct fy_node *n, const char *field, long long lo, long long hi,
                   int *out)
{
    int64_t v;
    int rc = get_i64(c, n, field, lo, hi, &v);
    if (!rc) *out = (int)v;
    return rc;
}

/* A number in [lo, hi] (finite; '1e6', '0.5'). */
static int get_num(pctx *c, struct fy_node *n, const char *field, double lo, double hi, double *out)
{
    const char *s = gs_yaml_str(n);
    if (!s) return perr(c, n, field, GS_EPARSE, "'%s' must be a number", field);
    if (quoted(n))
        return perr(c, n, field, GS_EPARSE, "'%s' must be a number, not a string (\"%s\")", field,
                    s);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || *end || !isfinite(v))
        return perr(c, n, field, GS_EPARSE, "'%s' must be a number, got '%s'", field, s);
    if (v < lo || v > hi)
        return perr(c, n, field, GS_ERANGE, "'%s' must be between %g and %g, got %g", field, lo, hi,
                    v);
    *out = v;
    return 0;
}

static int get_bool(pctx *c, struct fy_node *n, const char *field, int *out)
{
    const char *s = gs_yaml_str(n);
    if (s && quoted(n))
        return perr(c, n, field, GS_EPARSE, "'%s' must be true or false, not a string (\"%s\")",
                    field, s);
    if (s) {
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on"))
            return *out = 1, 0;
        if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off"))
            return *out = 0, 0;
    }
    return perr(c, n, field, GS_EPARSE, "'%s' must be true or false", field);
}

static int get_dur(pctx *c, struct fy_node *n, const char *field, gs_time *out)
{
    const char *s = gs_yaml_str(n);
    if (!s) return perr(c, n, field, GS_EPARSE, "'%s' must be a duration", field);
    gs_diag sub;
    gs_diag_init(&sub, NULL);
    int rc = gsd_parse_duration(s, GS_SEC, out, &sub);
    if (rc)
        return perr(c, n, field, rc == GS_ERANGE ? GS_ERANGE : GS_EPARSE,
                    "'%s': '%s' is not a duration: %s (seconds, 90s, 30m, 2h, 1d, 1h30m, "
                    "HH:MM:SS, D-HH:MM:SS)",
                    field, s, sub.msg);
    return 0;
}

static int parse_command(pctx *c, struct fy_node *n, gsd_spec *s)
{
    if (fy_node_is_scalar(n)) {
        if (get_str(c, n, "command", &s->shell)) return GS_EPARSE;
        if (!*s->shell) return perr(c, n, "command", GS_EINVAL, "'command' is empty");
        return 0;
    }
    if (!fy_node_is_sequence(n))
        return perr(c, n, "command", GS_EPARSE, "'command' must be a string or a list of strings");
    int cnt = fy_node_sequence_item_count(n);
    if (cnt < 1) return perr(c, n, "command", GS_EINVAL, "'command' list is empty");
    if (cnt > GSD_MAX_ARGS)
        return perr(c, n, "command", GS_ETOOBIG, "'command' has more than %d arguments",
                    GSD_MAX_ARGS);
    s->argv = calloc((size_t)cnt + 1, sizeof *s->argv);
    if (!s->argv) abort();
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(n, &it))) {
        const char *v = gs_yaml_str(item);
        if (!v) return perr(c, item, "command", GS_EPARSE, "'command' items must be strings");
        s->argv[s->argc++] = xstrdup(v);
    }
    return 0;
}

static int parse_env(pctx *c, struct fy_node *n, gsd_spec *s)
{
    if (!fy_node_is_mapping(n))
        return perr(c, n, "env", GS_EPARSE, "'env' must be a mapping of NAME: value");
    int cnt = fy_node_mapping_item_count(n);
    if (cnt > GSD_MAX_ENV)
        return perr(c, n, "env", GS_ETOOBIG, "'env' has more than %d entries", GSD_MAX_ENV);
    s->env = calloc((size_t)cnt + 1, sizeof *s->env);
    if (!s->env) abort();
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it))) {
        struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
        const char *ks = gs_yaml_str(k), *vs = gs_yaml_str(v);
        if (!ks) return perr(c, k, "env", GS_EPARSE, "'env' keys must be strings");
        if (!vs)
            return perr(c, v ? v : k, "env", GS_EPARSE, "'env': value of %s must be a string", ks);
        if (!env_key_ok(ks))
            return perr(c, k, "env", GS_EINVAL, "'env': '%s' is not a valid variable name", ks);
        if (gsd_env_reserved(ks))
            return perr(c, k, "env", GS_EINVAL,
                        "'env': %s is set by the executor and cannot be overridden", ks);
        s->env[s->nenv].key = xstrdup(ks);
        s->env[s->nenv].val = xstrdup(vs);
        s->nenv++;
    }
    return 0;
}

static int parse_tasks(pctx *c, struct fy_node *n, gsd_spec *s, int *gpus_in_tasks)
{
    const char *v = gs_yaml_str(n);
    if (!v) return perr(c, n, "tasks", GS_EPARSE, "'tasks' must be a count or COUNTxGPUS");
    const char *x = strpbrk(v, "xX*");
    if (!x) return get_int(c, n, "tasks", 1, GSD_MAX_GPUS, &s->ntasks); /* a number: unquoted */
    char *end;
    errno = 0;
    long a = strtol(v, &end, 10);
    if (errno || end != x || end == v)
        return perr(c, n, "tasks", GS_EPARSE, "'tasks': expected COUNT or COUNTxGPUS, got '%s'", v);
    long b = strtol(x + 1, &end, 10);
    if (errno || *end || end == x + 1)
        return perr(c, n, "tasks", GS_EPARSE, "'tasks': expected COUNT or COUNTxGPUS, got '%s'", v);
    if (a < 1 || a > GSD_MAX_GPUS || b < 1 || b > GSD_MAX_GPUS)
        return perr(c, n, "tasks", GS_ERANGE, "'tasks': counts must be between 1 and %d",
                    GSD_MAX_GPUS);
    s->ntasks = (int)a;
    s->gpus_per_task = (int)b;
    *gpus_in_tasks = 1;
    return 0;
}

/* The first scalar (key or value) under n that holds a NUL byte ("\u0000" in JSON, "\0" in
 * a YAML double-quoted string): C strings would silently end there. */
static struct fy_node *find_nul(struct fy_node *n, int depth)
{
    if (!n || depth > 64) return NULL;
    if (fy_node_is_scalar(n)) {
        size_t len = 0;
        const char *v = fy_node_get_scalar(n, &len);
        return v && memchr(v, '\0', len) ? n : NULL;
    }
    void *it = NULL;
    if (fy_node_is_sequence(n)) {
        struct fy_node *item, *hit;
        while ((item = fy_node_sequence_iterate(n, &it)))
            if ((hit = find_nul(item, depth + 1))) return hit;
        return NULL;
    }
    struct fy_node_pair *p;
    struct fy_node *hit;
    while (fy_node_is_mapping(n) && (p = fy_node_mapping_iterate(n, &it)))
        if ((hit = find_nul(fy_node_pair_key(p), depth + 1)) ||
            (hit = find_nul(fy_node_pair_value(p), depth + 1)))
            return hit;
    return NULL;
}

/* Reject a NUL anywhere, naming the top-level field it is in (before any C string is taken). */
static int check_nul(pctx *c, struct fy_node *root, const char *const *keys)
{
    if (!fy_node_is_mapping(root)) return 0;
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(root, &it))) {
        struct fy_node *k = fy_node_pair_key(p), *hit = find_nul(k, 0);
        if (hit) return perr(c, hit, "", GS_EINVAL, "a field name contains a NUL character");
        if ((hit = find_nul(fy_node_pair_value(p), 0))) {
            const char *ks = gs_yaml_str(k), *field = ""; /* *c->field outlives the document */
            for (size_t i = 0; ks && keys[i]; i++)
                if (!strcmp(keys[i], ks)) field = keys[i];
            return perr(c, hit, field, GS_EINVAL, "'%s' contains a NUL character", ks ? ks : "?");
        }
    }
    return 0;
}

/* 'deadline': Unix seconds (a number) or an RFC 3339 UTC time "2026-11-24T10:00:00Z". */
static int get_deadline(pctx *c, struct fy_node *n, gs_time *out)
{
    const char *v = gs_yaml_str(n);
    if (v && !gsd_parse_deadline(v, out)) return 0;
    if (v && !quoted(n) && strspn(v, "0123456789") == strlen(v) && *v) {
        int64_t sec;
        int rc = get_i64(c, n, "deadline", 1, 253402300799LL, &sec);
        if (!rc) *out = (gs_time)sec * GS_SEC;
        return rc;
    }
    return perr(c, n, "deadline", GS_EPARSE,
                "'deadline' must be Unix seconds or a UTC time like 2026-11-24T10:00:00Z, got "
                "'%s'",
                v ? v : "?");
}

static int parse_elastic(pctx *c, struct fy_node *root, gsd_spec *s)
{
    struct fy_node *n;
    int rc;
    if ((n = gs_yaml_get(root, "min_gpus")) &&
        (rc = get_int(c, n, "min_gpus", 0, GSD_MAX_GPUS, &s->min_gpus)))
        return rc;
    if ((n = gs_yaml_get(root, "max_gpus")) &&
        (rc = get_int(c, n, "max_gpus", 0, GSD_MAX_GPUS, &s->max_gpus)))
        return rc;
    if ((n = gs_yaml_get(root, "sizes"))) {
        if (!fy_node_is_sequence(n))
            return perr(c, n, "sizes", GS_EPARSE, "'sizes' must be a list of GPU counts");
        int cnt = fy_node_sequence_item_count(n);
        if (cnt < 1 || cnt > GSD_MAX_SIZES)
            return perr(c, n, "sizes", GS_ERANGE, "'sizes' must have 1 to %d entries",
                        GSD_MAX_SIZES);
        free(s->sizes);
        s->sizes = calloc((size_t)cnt, sizeof *s->sizes);
        if (!s->sizes) abort();
        s->nsizes = 0;
        void *it = NULL;
        struct fy_node *item;
        while ((item = fy_node_sequence_iterate(n, &it)))
            if ((rc = get_int(c, item, "sizes", 1, GSD_MAX_GPUS, &s->sizes[s->nsizes++])))
                return rc;
    }
    if ((n = gs_yaml_get(root, "min_rescale_gap")) &&
        (rc = get_dur(c, n, "min_rescale_gap", &s->min_rescale_gap)))
        return rc;
    if ((n = gs_yaml_get(root, "deadline")) && (rc = get_deadline(c, n, &s->deadline))) return rc;
    if ((n = gs_yaml_get(root, "batch_size")) &&
        (rc = get_i64(c, n, "batch_size", 0, (long long)1 << 40, &s->batch_size)))
        return rc;
    if ((n = gs_yaml_get(root, "max_rescales")) &&
        (rc = get_int(c, n, "max_rescales", -1, 1 << 30, &s->max_rescales)))
        return rc;
    if ((n = gs_yaml_get(root, "max_failures")) &&
        (rc = get_int(c, n, "max_failures", 0, 1 << 30, &s->max_failures)))
        return rc;
    if ((n = gs_yaml_get(root, "drain_timeout")) &&
        (rc = get_dur(c, n, "drain_timeout", &s->drain_timeout)))
        return rc;
    if ((n = gs_yaml_get(root, "app")) && get_str(c, n, "app", &s->app)) return GS_EPARSE;
    return 0;
}

/* ---- members and groups (issue 14) ---- */

static int parse_members_groups(pctx *c, struct fy_node *root, gsd_spec *s);

typedef struct gbuild {
    int32_t *gpus; /* per task, in task order */
    int n, cap;
    gs_task_group *g;
    int ng;
} gbuild;

/* `members: [{tasks: N, gpus_per_task: G}, ...]`: N tasks of G GPUs each, appended. */
static int parse_members(pctx *c, struct fy_node *n, const char *field, gbuild *b)
{
    static const char *const mk[] = {"tasks", "gpus_per_task", "gpus", NULL};
    if (!fy_node_is_sequence(n) || fy_node_sequence_item_count(n) < 1)
        return perr(c, n, field, GS_EPARSE,
                    "'%s' must be a non-empty list of {tasks: N, gpus_per_task: G}", field);
    void *it = NULL;
    struct fy_node *m;
    while ((m = fy_node_sequence_iterate(n, &it))) {
        if (!fy_node_is_mapping(m))
            return perr(c, m, field, GS_EPARSE,
                        "'%s' entries must be mappings {tasks: N, gpus_per_task: G}", field);
        int rc = gs_yaml_check_keys(m, mk, "members entry", c->d);
        if (rc) {
            if (c->field) *c->field = field;
            return rc;
        }
        struct fy_node *t = gs_yaml_get(m, "tasks"), *g1 = gs_yaml_get(m, "gpus_per_task"),
                       *g2 = gs_yaml_get(m, "gpus");
        int nt = 1, g = 1;
        if (g1 && g2)
            return perr(c, g2, field, GS_EINVAL, "'%s': give either 'gpus' or 'gpus_per_task'",
                        field);
        if ((t && (rc = get_int(c, t, "tasks", 1, GSD_MAX_GPUS, &nt))) ||
            ((g1 || g2) &&
             (rc = get_int(c, g1 ? g1 : g2, g1 ? "gpus_per_task" : "gpus", 1, GSD_MAX_GPUS, &g)))) {
            if (c->field) *c->field = field; /* the entry's key named the message */
            return rc;
        }
        if (!g1 && !g2)
            return perr(c, m, field, GS_EINVAL, "'%s': an entry needs 'gpus_per_task'", field);
        if (b->n + nt > GSD_MAX_GPUS)
            return perr(c, t ? t : m, field, GS_ERANGE, "'%s': more than %d tasks in all", field,
                        GSD_MAX_GPUS);
        if (b->n + nt > b->cap) {
            b->cap = b->n + nt > 2 * b->cap ? b->n + nt : 2 * b->cap;
            b->gpus = realloc(b->gpus, (size_t)b->cap * sizeof *b->gpus);
            if (!b->gpus) abort();
        }
        for (int k = 0; k < nt; k++) b->gpus[b->n++] = g;
    }
    return 0;
}

/* `groups: [{within: CELLTYPE, members: [...], groups: [...]}, ...]`, pre-order. */
static int parse_groups(pctx *c, struct fy_node *n, int parent, int depth, gbuild *b)
{
    static const char *const gk[] = {"within", "members", "groups", NULL};
    if (!fy_node_is_sequence(n) || fy_node_sequence_item_count(n) < 1)
        return perr(c, n, "groups", GS_EPARSE,
                    "'groups' must be a non-empty list of {within: CELLTYPE, members: [...] "
                    "and/or groups: [...]}");
    if (depth > GSD_MAX_GROUP_DEPTH)
        return perr(c, n, "groups", GS_ERANGE, "'groups' nest more than %d deep",
                    GSD_MAX_GROUP_DEPTH);
    void *it = NULL;
    struct fy_node *m;
    while ((m = fy_node_sequence_iterate(n, &it))) {
        if (!fy_node_is_mapping(m))
            return perr(c, m, "groups", GS_EPARSE,
                        "a group must be a mapping {within: CELLTYPE, members: [...]}");
        int rc = gs_yaml_check_keys(m, gk, "group", c->d);
        if (rc) {
            if (c->field) *c->field = "groups";
            return rc;
        }
        if (b->ng >= GSD_MAX_GROUPS)
            return perr(c, m, "groups", GS_ETOOBIG, "more than %d groups", GSD_MAX_GROUPS);
        int me = b->ng++;
        b->g = realloc(b->g, (size_t)b->ng * sizeof *b->g);
        if (!b->g) abort();
        memset(&b->g[me], 0, sizeof b->g[me]);
        b->g[me].parent = parent;
        b->g[me].lo = b->n;
        b->g[me].within_type = -1;
        struct fy_node *w = gs_yaml_get(m, "within"), *mm = gs_yaml_get(m, "members"),
                       *cg = gs_yaml_get(m, "groups");
        if (w) {
            char *ws = NULL;
            if (get_str(c, w, "groups", &ws)) return GS_EPARSE;
            b->g[me].within = ws;
            if (!*ws || strlen(ws) > GSD_MAX_NAME || bad_text(ws, 0) || strchr(ws, '\t'))
                return perr(c, w, "groups", GS_EINVAL,
                            "'within' must be a cell type name (1-%d characters, "
                            "no control characters)",
                            GSD_MAX_NAME);
        }
        if (!mm && !cg)
            return perr(c, m, "groups", GS_EINVAL, "a group needs 'members' or 'groups'");
        if (mm && (rc = parse_members(c, mm, "groups", b))) return rc;
        if (cg && (rc = parse_groups(c, cg, me, depth + 1, b))) return rc;
        b->g[me].hi = b->n;
    }
    return 0;
}

void gsd_spec_wrap_within(gsd_spec *s, const char *within)
{
    gs_task_group *ng = calloc((size_t)s->ngroups + 1, sizeof *ng);
    if (!ng) abort();
    ng[0] = (gs_task_group){0, s->ntasks, -1, xstrdup(within), -1};
    for (int i = 0; i < s->ngroups; i++) {
        ng[i + 1] = s->groups[i];
        ng[i + 1].parent = s->groups[i].parent + 1; /* top-level ones: inside the new one */
    }
    free(s->groups);
    s->groups = ng;
    s->ngroups++;
}

/* Members and groups into s (after tasks / gpus were read: they may not be given too), then
 * 'within' around all the tasks. */
static int parse_grouping(pctx *c, struct fy_node *root, gsd_spec *s)
{
    struct fy_node *w = gs_yaml_get(root, "within");
    int rc = parse_members_groups(c, root, s);
    if (rc || !w) return rc;
    char *ws = NULL;
    if (get_str(c, w, "within", &ws)) return GS_EPARSE;
    if (!*ws || strlen(ws) > GSD_MAX_NAME || bad_text(ws, 0) || strchr(ws, '\t')) {
        free(ws);
        return perr(c, w, "within", GS_EINVAL,
                    "'within' must be a cell type name (1-%d characters, no control characters)",
                    GSD_MAX_NAME);
    }
    if (s->ngroups >= GSD_MAX_GROUPS) {
        free(ws);
        return perr(c, w, "within", GS_ETOOBIG, "more than %d groups", GSD_MAX_GROUPS);
    }
    gsd_spec_wrap_within(s, ws);
    free(ws);
    return 0;
}

static int parse_members_groups(pctx *c, struct fy_node *root, gsd_spec *s)
{
    struct fy_node *mm = gs_yaml_get(root, "members"), *gg = gs_yaml_get(root, "groups");
    if (!mm && !gg) return 0;
    const char *clash = gs_yaml_get(root, "tasks")           ? "tasks"
                        : gs_yaml_get(root, "gpus")          ? "gpus"
                        : gs_yaml_get(root, "gpus_per_task") ? "gpus_per_task"
                                                             : NULL;
    if (clash)
        return perr(c, gs_yaml_get(root, clash), clash, GS_EINVAL,
                    "give either '%s' or 'members' / 'groups': the members set the tasks and "
                    "their GPUs",
                    clash);
    gbuild b = {0};
    int rc = mm ? parse_members(c, mm, "members", &b) : 0;
    if (!rc && gg) rc = parse_groups(c, gg, -1, 1, &b);
    if (rc) {
        for (int i = 0; i < b.ng; i++) free((char *)b.g[i].within);
        free(b.g);
        free(b.gpus);
        return rc;
    }
    int mx = 0, same = 1;
    for (int t = 0; t < b.n; t++) {
        if (b.gpus[t] > mx) mx = b.gpus[t];
        if (b.gpus[t] != b.gpus[0]) same = 0;
    }
    s->ntasks = b.n;
    s->gpus_per_task = mx;
    if (same)
        free(b.gpus);
    else
        s->task_gpus = b.gpus;
    s->groups = b.g;
    s->ngroups = b.ng;
    return 0;
}

/* ---- the hived: block (issue 14) ---- */

/* A YAML node as JSON, for the spec's canonical form: mappings and sequences as they are, a
 * quoted scalar a string, a plain one an integer, a number, true/false, null (~, empty) or
 * else a string - as YAML's core schema reads them, so the JSON parses back to the same. */
static json_t *node_json(struct fy_node *n, int depth)
{
    if (!n || depth > 64) return json_null();
    if (fy_node_is_mapping(n)) {
        json_t *o = json_object();
        void *it = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(n, &it))) {
            const char *k = gs_yaml_str(fy_node_pair_key(p));
            json_object_set_new(o, k ? k : "", node_json(fy_node_pair_value(p), depth + 1));
        }
        return o;
    }
    if (fy_node_is_sequence(n)) {
        json_t *a = json_array();
        void *it = NULL;
        struct fy_node *item;
        while ((item = fy_node_sequence_iterate(n, &it)))
            json_array_append_new(a, node_json(item, depth + 1));
        return a;
    }
    const char *v = gs_yaml_str(n);
    if (!v) return json_null();
    if (quoted(n)) return json_string(v);
    if (!*v || !strcmp(v, "~") || !strcasecmp(v, "null")) return json_null();
    if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE")) return json_true();
    if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE")) return json_false();
    char *end;
    errno = 0;
    long long i = strtoll(v, &end, 10);
    if (!*end && !errno && end != v && (isdigit((unsigned char)*v) || *v == '-' || *v == '+'))
        return json_integer(i);
    errno = 0;
    double dv = strtod(v, &end);
    if (!*end && !errno && end != v && (isdigit((unsigned char)*v) || *v == '-' || *v == '.'))
        return json_real(dv);
    return json_string(v);
}

/* The keys a hived: block sets (refused beside it, as in scenario files). */
static const char *const hived_owns[] = {
    "vc",       "queue",       "priority",        "tasks",   "gpus",   "gpus_per_task", "gang",
    "gpu_type", "pinned_cell", "lazy_preemption", "members", "groups", "within",        NULL};

/*
 * `hived:` - HiveD's pod-scheduling spec (v1 or v2), kept verbatim (as JSON) in s->hived; the
 * job's VC, priority, tasks and groups come from it when the daemon resolves it against its
 * cluster (gsd_spec_resolve_hived).  A v1 spec needs no cluster: it is checked here as HiveD
 * checks it, at its file:line:col; a v2 spec names cell types, checked at submit.
 */
static int parse_hived(pctx *c, struct fy_node *root, struct fy_node *n, gsd_spec *s)
{
    if (!fy_node_is_mapping(n))
        return perr(c, n, "hived", GS_EPARSE,
                    "'hived' must be a mapping: HiveD's pod-scheduling spec (virtualCluster, "
                    "priority, leafCellType, ... or version: v2, cellType, podRootGroup, ...)");
    for (const char *const *k = hived_owns; *k; k++)
        if (gs_yaml_get(root, *k))
            return perr(c, gs_yaml_get(root, *k), *k, GS_EINVAL,
                        "'%s' and 'hived' both given: the job's HiveD spec says it", *k);
    const char *ver = gs_yaml_str(gs_yaml_get(n, "version"));
    if (!ver || strcmp(ver, "v2")) { /* v1, or a version HiveD refuses: checked now */
        gs_job_spec js;
        gs_spec_buf b = {0};
        gs_job_spec_init(&js);
        int rc = gs_hived_spec_parse(n, NULL, &js, &b, c->d);
        gs_spec_buf_release(&b);
        if (rc) {
            if (c->field) *c->field = "hived";
            return rc;
        }
    }
    json_t *j = node_json(n, 0);
    free(s->hived);
    s->hived = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!s->hived) abort();
    return 0;
}

static int parse_root(pctx *c, struct fy_node *root, gsd_spec *s)
{
    static const char *const keys[] = {"name",
                                       "vc",
                                       "queue",
                                       "user",
                                       "priority",
                                       "tasks",
                                       "gpus",
                                       "gpus_per_task",
                                       "gang",
                                       "gpu_type",
                                       "command",
                                       "env",
                                       "workdir",
                                       "time_limit",
                                       "duration",
                                       "cpus",
                                       "memory",
                                       "checkpoint",
                                       "pinned_cell",
                                       "lazy_preemption",
                                       "run_as",
                                       "hold",
                                       "interactive",
                                       "dependency",
                                       "kill_on_invalid_dep",
                                       "array",
                                       "external",
                                       "min_gpus",
                                       "max_gpus",
                                       "sizes",
                                       "min_rescale_gap",
                                       "deadline",
                                       "batch_size",
                                       "max_rescales",
                                       "max_failures",
                                       "drain_timeout",
                                       "app",
                                       "model",
                                       "steps",
                                       "weight",
                                       "members",
                                       "groups",
                                       "within",
                                       "hived",
                                       NULL};
    if (!fy_node_is_mapping(root))
        return perr(c, root, "", GS_EPARSE,
                    "a job spec must be a mapping (name: ..., command: ...)");
    gs_diag *d = c->d;
    int rc = check_nul(c, root, keys);
    if (rc) return rc;
    rc = gs_yaml_check_keys(root, keys, "job spec", d);
    if (rc) {
        if (c->field) *c->field = "";
        return rc;
    }
    struct fy_node *n;
    int gpus_in_tasks = 0;
    if ((n = gs_yaml_get(root, "name")) && get_str(c, n, "name", &s->name)) return GS_EPARSE;
    if ((n = gs_yaml_get(root, "vc")) && get_str(c, n, "vc", &s->vc)) return GS_EPARSE;
    if ((n = gs_yaml_get(root, "queue"))) {
        if (s->vc) return perr(c, n, "queue", GS_EINVAL, "give either 'vc' or 'queue', not both");
        if (get_str(c, n, "queue", &s->vc)) return GS_EPARSE;
    }
    if ((n = gs_yaml_get(root, "user")) && get_str(c, n, "user", &s->user)) return GS_EPARSE;
    if ((n = gs_yaml_get(root, "run_as")) && get_str(c, n, "run_as", &s->run_as)) return GS_EPARSE;
    if ((n = gs_yaml_get(root, "external")) && get_str(c, n, "external", &s->external))
        return GS_EPARSE;
    if ((n = gs_yaml_get(root, "priority"))) {
        const char *v = gs_yaml_str(n);
        if (v && quoted(n) && (isdigit((unsigned char)*v) || *v == '-' || *v == '+'))
            return perr(c, n, "priority", GS_EPARSE,
                        "'priority' must be an integer or a class name, not a numeric string "
                        "(\"%s\")",
                        v);
        int r = v ? gs_parse_priority(v, GSD_PRIO_MAX, &s->priority, NULL) : GS_EPARSE;
        if (r)
            return perr(c, n, "priority", r == GS_ERANGE ? GS_ERANGE : GS_EPARSE,
                        "'priority' must be an integer between -1 and %d or one of prod (%d), "
                        "test (%d), oppo (%d)",
                        GSD_PRIO_MAX, GS_PRIO_PROD, GS_PRIO_TEST, GS_PRIO_OPPORTUNISTIC);
    }
    if ((n = gs_yaml_get(root, "tasks")) && (rc = parse_tasks(c, n, s, &gpus_in_tasks))) return rc;
    struct fy_node *g1 = gs_yaml_get(root, "gpus"), *g2 = gs_yaml_get(root, "gpus_per_task");
    if (g1 && g2) return perr(c, g2, "gpus", GS_EINVAL, "give either 'gpus' or 'gpus_per_task'");
    if (g1 || g2) {
        if (gpus_in_tasks)
            return perr(c, g1 ? g1 : g2, "gpus", GS_EINVAL,
                        "GPUs per task are already given in 'tasks: COUNTxGPUS'");
        if ((rc = get_int(c, g1 ? g1 : g2, g1 ? "gpus" : "gpus_per_task", 1, GSD_MAX_GPUS,
                          &s->gpus_per_task)))
            return rc;
    }
    if ((n = gs_yaml_get(root, "hived")) && (rc = parse_hived(c, root, n, s))) return rc;
    if ((rc = parse_grouping(c, root, s))) return rc;
    if ((n = gs_yaml_get(root, "gang")) && (rc = get_bool(c, n, "gang", &s->gang))) return rc;
    if ((n = gs_yaml_get(root, "gpu_type")) && get_str(c, n, "gpu_type", &s->gpu_type))
        return GS_EPARSE;
    if ((n = gs_yaml_get(root, "command")) && (rc = parse_command(c, n, s))) return rc;
    if ((n = gs_yaml_get(root, "env")) && (rc = parse_env(c, n, s))) return rc;
    if ((n = gs_yaml_get(root, "workdir"))) {
        if (get_str(c, n, "workdir", &s->workdir)) return GS_EPARSE;
        if (s->workdir[0] != '/')
            return perr(c, n, "workdir", GS_EINVAL, "'workdir' must be an absolute path, got '%s'",
                        s->workdir);
    }
    if ((n = gs_yaml_get(root, "time_limit")) && (rc = get_dur(c, n, "time_limit", &s->time_limit)))
        return rc;
    if ((n = gs_yaml_get(root, "duration")) && (rc = get_dur(c, n, "duration", &s->duration)))
        return rc;
    if ((n = gs_yaml_get(root, "model")) && get_str(c, n, "model", &s->model)) return GS_EPARSE;
    if ((n = gs_yaml_get(root, "steps")) && (rc = get_num(c, n, "steps", 0, 1e15, &s->steps)))
        return rc;
    if ((n = gs_yaml_get(root, "weight")) && (rc = get_num(c, n, "weight", 0, 1e6, &s->weight)))
        return rc;
    if ((n = gs_yaml_get(root, "cpus")) &&
        (rc = get_int(c, n, "cpus", 0, 1 << 20, &s->cpus_per_task)))
        return rc;
    if ((n = gs_yaml_get(root, "memory"))) {
        const char *v = gs_yaml_str(n);
        int64_t mb = v ? gs_parse_mem_mb(v) : -1;
        if (mb < 0 || mb > (1LL << 30))
            return perr(c, n, "memory", GS_EPARSE,
                        "'memory' must be a size such as 512M, 32G, 32Gi or MiB, got '%s'",
                        v ? v : "?");
        s->mem_mb_per_task = (int)mb;
    }
    if ((n = gs_yaml_get(root, "checkpoint"))) {
        static const char *const ck[] = {"dir", "grace_period", NULL};
        if ((rc = gs_yaml_check_keys(n, ck, "checkpoint", d))) {
            if (c->field) *c->field = "checkpoint";
            return rc;
        }
        struct fy_node *m;
        if ((m = gs_yaml_get(n, "dir")) && get_str(c, m, "checkpoint.dir", &s->checkpoint_dir))
            return GS_EPARSE;
        if ((m = gs_yaml_get(n, "grace_period")) &&
            (rc = get_dur(c, m, "checkpoint.grace_period", &s->grace)))
            return rc;
        if (s->grace > (gs_time)3600 * GS_SEC)
            return perr(c, m, "checkpoint.grace_period", GS_ERANGE,
                        "'checkpoint.grace_period' must be at most 1h");
    }
    if ((n = gs_yaml_get(root, "pinned_cell")) && get_str(c, n, "pinned_cell", &s->pinned_cell))
        return GS_EPARSE;
    if ((n = gs_yaml_get(root, "lazy_preemption")) &&
        (rc = get_bool(c, n, "lazy_preemption", &s->lazy_preemption)))
        return rc;
    if ((n = gs_yaml_get(root, "hold")) && (rc = get_bool(c, n, "hold", &s->hold))) return rc;
    if ((n = gs_yaml_get(root, "dependency"))) {
        if (get_str(c, n, "dependency", &s->dependency)) return GS_EPARSE;
        gs_deps p;
        if ((rc = gs_deps_parse(s->dependency, &p, d))) {
            if (c->field) *c->field = "dependency";
            return rc;
        }
        char canon[2048];
        gs_deps_format(&p, canon, sizeof canon);
        free(s->dependency);
        s->dependency = xstrdup(canon);
    }
    if ((n = gs_yaml_get(root, "interactive")) &&
        (rc = get_bool(c, n, "interactive", &s->interactive)))
        return rc;
    if ((n = gs_yaml_get(root, "kill_on_invalid_dep")) &&
        (rc = get_bool(c, n, "kill_on_invalid_dep", &s->kill_invalid_dep)))
        return rc;
    if ((n = gs_yaml_get(root, "array"))) {
        if (get_str(c, n, "array", &s->array)) return GS_EPARSE;
        gs_array a;
        rc = gs_array_parse(s->array, &a, d);
        gs_array_release(&a);
        if (rc) {
            if (c->field) *c->field = "array";
            return rc;
        }
    }
    return parse_elastic(c, root, s);
}

int gsd_spec_parse(const char *file, const char *buf, size_t len, gsd_spec *s, gs_diag *d,
                   const char **field)
{
    gsd_spec_init(s);
    if (field) *field = "";
    if (d) d->file = file;
    if (len > 1024 * 1024) return gs_diag_set(d, GS_ETOOBIG, 0, 0, "job spec larger than 1 MiB");
    if (memchr(buf, '\0', len))
        return gs_diag_set(d, GS_EPARSE, 0, 0, "job spec contains a NUL byte");
    gs_yaml y;
    int rc = gs_yaml_load(&y, file, buf, len, d);
    if (rc) {
        /* JSON is parsed as YAML: name the format the user wrote */
        size_t lead = 0; /* buf is not NUL-terminated */
        while (lead < len && strchr(" \t\r\n", buf[lead]) && buf[lead]) lead++;
        if (d && lead < len && (buf[lead] == '{' || buf[lead] == '[') &&
            !strncmp(d->msg, "invalid YAML", 12)) {
            char tmp[sizeof d->msg];
            snprintf(tmp, sizeof tmp, "invalid JSON%s", d->msg + 12);
            snprintf(d->msg, sizeof d->msg, "%s", tmp);
        }
        return rc;
    }
    pctx c = {d, field};
    rc = parse_root(&c, gs_yaml_root(&y), s);
    gs_yaml_release(&y);
    if (!rc) {
        if (d) d->line = d->col = 0;
        rc = gsd_spec_validate(s, d, field);
    }
    if (rc) gsd_spec_release(s);
    return rc;
}

/* ---- output --------------------------------------------------------------------------------- */

static void dur_str(gs_time t, char *buf, size_t cap)
{
    if (t % GS_SEC == 0)
        snprintf(buf, cap, "%llds", (long long)(t / GS_SEC));
    else
        snprintf(buf, cap, "%lldms", (long long)(t / GS_MSEC));
}

/* The workdir as the account as, in a child process made by a raw clone() that signals
 * nothing at its end: the executor reaps every child with waitpid(-1) (exec_local.c), which
 * does not take such a "clone" child, so only this waitpid(__WCLONE) does.  The child makes
 * only raw system calls (the daemon is multi-threaded; glibc's setuid would wait for threads
 * that the child does not have).  0 = a directory it can enter, 1 = it cannot see or enter
 * it (or it does not exist: not told apart), 2 = not a directory, 3 = the check failed. */
static int workdir_as(const char *wd, const gsd_spec_as *as)
{
    pid_t pid = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
    if (pid < 0) return 3;
    if (pid == 0) {
        struct stat st;
        if (syscall(SYS_setgroups, (size_t)as->ngroups, as->groups) != 0 ||
            syscall(SYS_setgid, as->gid) != 0 || syscall(SYS_setuid, as->uid) != 0)
            syscall(SYS_exit_group, 3);
        int r = 0;
        if (stat(wd, &st) != 0)
            r = 1;
        else if (!S_ISDIR(st.st_mode))
            r = 2;
        else if (access(wd, X_OK) != 0)
            r = 1;
        syscall(SYS_exit_group, r);
    }
    int status;
    while (waitpid(pid, &status, __WCLONE) < 0)
        if (errno != EINTR) return 3;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

int gsd_spec_check_host(const gsd_spec *s, const gsd_spec_as *as, char *msg, size_t cap)
{
    struct stat st;
    if (!s->workdir) return 0;
    if (as) {
        switch (workdir_as(s->workdir, as)) {
        case 0: return 0;
        case 2: snprintf(msg, cap, "'workdir' %s is not a directory", s->workdir); return GS_EINVAL;
        case 1:
            snprintf(msg, cap,
                     "'workdir' %s: no directory there that Unix user '%s' can enter on the "
                     "daemon's machine",
                     s->workdir, as->name ? as->name : "");
            return GS_EINVAL;
        default:
            snprintf(msg, cap, "'workdir' %s: cannot check it as Unix user '%s'", s->workdir,
                     as->name ? as->name : "");
            return GS_EINVAL;
        }
    }
    if (stat(s->workdir, &st) != 0) {
        snprintf(msg, cap, "'workdir' %s: %s on the daemon's machine", s->workdir, strerror(errno));
        return GS_EINVAL;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(msg, cap, "'workdir' %s is not a directory", s->workdir);
        return GS_EINVAL;
    }
    return 0;
}

/* [{"tasks": N, "gpus_per_task": G}, ...] for the tasks [lo, hi), runs of equal sizes as one. */
static json_t *members_json(const gsd_spec *s, int lo, int hi)
{
    json_t *a = json_array();
    for (int t = lo; t < hi;) {
        int k = t, g = gsd_spec_task_gpus(s, t);
        while (k < hi && gsd_spec_task_gpus(s, k) == g) k++;
        json_array_append_new(a, json_pack("{s:i,s:i}", "tasks", k - t, "gpus_per_task", g));
        t = k;
    }
    return a;
}

/* The groups whose parent is 'parent', as the spec writes them (validate_groups: a group's own
 * members, then its children up to its end). */
static json_t *groups_json(const gsd_spec *s, int parent)
{
    json_t *a = json_array();
    for (int i = 0; i < s->ngroups; i++) {
        const gs_task_group *g = &s->groups[i];
        if (g->parent != parent) continue;
        json_t *o = json_object();
        if (g->within) json_object_set_new(o, "within", json_string(g->within));
        int first = g->hi;
        for (int k = i + 1; k < s->ngroups; k++)
            if (s->groups[k].parent == i) {
                first = s->groups[k].lo;
                break;
            }
        if (first > g->lo) json_object_set_new(o, "members", members_json(s, g->lo, first));
        if (first < g->hi) json_object_set_new(o, "groups", groups_json(s, i));
        json_array_append_new(a, o);
    }
    return a;
}

void gsd_spec_setenv(gsd_spec *s, const char *key, const char *val)
{
    for (size_t i = 0; i < s->nenv; i++)
        if (!strcmp(s->env[i].key, key)) {
            free(s->env[i].val);
            s->env[i].val = xstrdup(val);
            return;
        }
    gsd_kv *nv = realloc(s->env, (s->nenv + 1) * sizeof *nv);
    if (!nv) abort();
    s->env = nv;
    s->env[s->nenv].key = xstrdup(key);
    s->env[s->nenv].val = xstrdup(val);
    s->nenv++;
}

char *gsd_spec_to_json(const gsd_spec *s)
{
    json_t *o = json_object();
    char b[64];
    if (s->name) json_object_set_new(o, "name", json_string(s->name));
    if (s->vc && !s->hived) json_object_set_new(o, "vc", json_string(s->vc));
    if (s->user) json_object_set_new(o, "user", json_string(s->user));
    if (s->run_as) json_object_set_new(o, "run_as", json_string(s->run_as));
    if (!s->hived) json_object_set_new(o, "priority", json_integer(s->priority));
    if (s->hived) {
        /* the HiveD spec says the VC, priority, tasks and groups: only it is written */
        json_t *h = json_loads(s->hived, 0, NULL);
        if (!h) abort(); /* written by parse_hived */
        json_object_set_new(o, "hived", h);
    } else if (gsd_spec_grouped(s)) {
        int top = s->ngroups ? s->groups[0].lo : s->ntasks;
        if (top > 0) json_object_set_new(o, "members", members_json(s, 0, top));
        if (s->ngroups) json_object_set_new(o, "groups", groups_json(s, -1));
    } else {
        json_object_set_new(o, "tasks", json_integer(s->ntasks));
        json_object_set_new(o, "gpus", json_integer(s->gpus_per_task));
    }
    if (!s->hived) json_object_set_new(o, "gang", json_boolean(s->gang));
    if (s->gpu_type && !s->hived) json_object_set_new(o, "gpu_type", json_string(s->gpu_type));
    if (s->shell) {
        json_object_set_new(o, "command", json_string(s->shell));
    } else {
        json_t *a = json_array();
        for (int i = 0; i < s->argc; i++) json_array_append_new(a, json_string(s->argv[i]));
        json_object_set_new(o, "command", a);
    }
    if (s->nenv) {
        json_t *e = json_object();
        for (size_t i = 0; i < s->nenv; i++)
            json_object_set_new(e, s->env[i].key, json_string(s->env[i].val));
        json_object_set_new(o, "env", e);
    }
    if (s->workdir) json_object_set_new(o, "workdir", json_string(s->workdir));
    if (s->time_limit) {
        dur_str(s->time_limit, b, sizeof b);
        json_object_set_new(o, "time_limit", json_string(b));
    }
    if (s->duration) {
        dur_str(s->duration, b, sizeof b);
        json_object_set_new(o, "duration", json_string(b));
    }
    if (s->model) json_object_set_new(o, "model", json_string(s->model));
    if (s->steps > 0) json_object_set_new(o, "steps", json_real(s->steps));
    if (s->weight > 0) json_object_set_new(o, "weight", json_real(s->weight));
    if (s->cpus_per_task) json_object_set_new(o, "cpus", json_integer(s->cpus_per_task));
    if (s->mem_mb_per_task) {
        snprintf(b, sizeof b, "%dMi", s->mem_mb_per_task);
        json_object_set_new(o, "memory", json_string(b));
    }
    if (s->checkpoint_dir || s->grace) {
        json_t *ck = json_object();
        if (s->checkpoint_dir) json_object_set_new(ck, "dir", json_string(s->checkpoint_dir));
        if (s->grace) {
            dur_str(s->grace, b, sizeof b);
            json_object_set_new(ck, "grace_period", json_string(b));
        }
        json_object_set_new(o, "checkpoint", ck);
    }
    if (s->pinned_cell && !s->hived)
        json_object_set_new(o, "pinned_cell", json_string(s->pinned_cell));
    if (s->lazy_preemption && !s->hived) json_object_set_new(o, "lazy_preemption", json_true());
    if (s->hold) json_object_set_new(o, "hold", json_true());
    if (s->dependency) json_object_set_new(o, "dependency", json_string(s->dependency));
    if (s->kill_invalid_dep) json_object_set_new(o, "kill_on_invalid_dep", json_true());
    if (s->interactive) json_object_set_new(o, "interactive", json_true());
    if (s->array) json_object_set_new(o, "array", json_string(s->array));
    if (s->external) json_object_set_new(o, "external", json_string(s->external));
    if (s->min_gpus) json_object_set_new(o, "min_gpus", json_integer(s->min_gpus));
    if (s->max_gpus) json_object_set_new(o, "max_gpus", json_integer(s->max_gpus));
    if (s->nsizes) {
        json_t *a = json_array();
        for (int i = 0; i < s->nsizes; i++) json_array_append_new(a, json_integer(s->sizes[i]));
        json_object_set_new(o, "sizes", a);
    }
    if (s->min_rescale_gap >= 0) {
        dur_str(s->min_rescale_gap, b, sizeof b);
        json_object_set_new(o, "min_rescale_gap", json_string(b));
    }
    if (s->deadline) {
        gsd_format_deadline(s->deadline, b, sizeof b);
        json_object_set_new(o, "deadline", json_string(b));
    }
    if (s->batch_size) json_object_set_new(o, "batch_size", json_integer(s->batch_size));
    if (s->max_rescales != -1)
        json_object_set_new(o, "max_rescales", json_integer(s->max_rescales));
    if (s->max_failures) json_object_set_new(o, "max_failures", json_integer(s->max_failures));
    if (s->drain_timeout) {
        dur_str(s->drain_timeout, b, sizeof b);
        json_object_set_new(o, "drain_timeout", json_string(b));
    }
    if (s->app) json_object_set_new(o, "app", json_string(s->app));
    char *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return out;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = v && *v ? xstrdup(v) : NULL;
}

int gsd_spec_resolve_hived(gsd_spec *s, const gs_cluster *c, gs_diag *d)
{
    if (!s->hived) return 0;
    gs_job_spec js;
    gs_spec_buf b = {0};
    gs_job_spec_init(&js);
    gs_diag sub;
    gs_diag_init(&sub, "hived");
    int rc = gs_hived_spec_parse_text("hived", s->hived, strlen(s->hived), c, &js, &b, &sub);
    if (rc) {
        gs_spec_buf_release(&b);
        /* the block is the stored JSON, one line: its message is what helps */
        return gs_diag_set(d, rc == GS_ENOMEM ? GS_ENOMEM : GS_EINVAL, 0, 0, "'hived': %s",
                           sub.msg);
    }
    set_str(&s->vc, js.vc);
    s->priority = js.priority;
    set_str(&s->pinned_cell, js.pinned_cell);
    set_str(&s->gpu_type, js.gpu_type);
    s->lazy_preemption = js.lazy_preemption;
    if (!s->name && js.name && *js.name) s->name = xstrdup(js.name);
    s->gang = 1;
    s->ntasks = js.ntasks;
    s->gpus_per_task = js.gpus_per_task;
    free(s->task_gpus);
    s->task_gpus = NULL;
    for (int t = 1; js.task_gpus && t < js.ntasks; t++)
        if (js.task_gpus[t] != js.task_gpus[0]) {
            s->task_gpus = calloc((size_t)js.ntasks, sizeof *s->task_gpus);
            if (!s->task_gpus) abort();
            memcpy(s->task_gpus, js.task_gpus, (size_t)js.ntasks * sizeof *s->task_gpus);
            break;
        }
    for (int i = 0; i < s->ngroups; i++) free((char *)s->groups[i].within);
    free(s->groups);
    s->groups = NULL;
    s->ngroups = 0;
    if (js.ngroups > 0) {
        s->groups = calloc((size_t)js.ngroups, sizeof *s->groups);
        if (!s->groups) abort();
        for (int i = 0; i < js.ngroups; i++) {
            s->groups[i] = js.groups[i];
            s->groups[i].within =
                js.groups[i].within && *js.groups[i].within ? xstrdup(js.groups[i].within) : NULL;
            s->groups[i].within_type = -1;
        }
        s->ngroups = js.ngroups;
    }
    gs_spec_buf_release(&b);
    /* gsched's limits (4096 GPUs, 256 groups, ...) and the shape its canonical form writes */
    const char *f = NULL;
    gs_diag vd;
    gs_diag_init(&vd, NULL);
    rc = gsd_spec_validate(s, &vd, &f);
    if (rc) return gs_diag_set(d, rc, 0, 0, "'hived': %s", vd.msg);
    return 0;
}

void gsd_spec_job(const gsd_spec *s, gs_time default_duration, gs_job_spec *out)
{
    gs_job_spec_init(out);
    out->name = s->name;
    out->user = s->user;
    out->vc = s->vc;
    out->priority = s->priority;
    out->ntasks = s->ntasks;
    out->gpus_per_task = s->gpus_per_task;
    out->gang = s->gang;
    out->gpu_type = s->gpu_type;
    out->duration = s->duration ? s->duration : s->time_limit ? s->time_limit : default_duration;
    out->cpus_per_task = s->cpus_per_task;
    out->mem_mb_per_task = s->mem_mb_per_task;
    out->pinned_cell = s->pinned_cell;
    out->lazy_preemption = s->lazy_preemption;
    if (gsd_spec_elastic(s)) {
        out->min_gpus = s->min_gpus;
        out->max_gpus = s->max_gpus;
        out->sizes = s->sizes;
        out->nsizes = s->nsizes;
        out->min_rescale_gap = s->min_rescale_gap >= 0 ? s->min_rescale_gap : GS_TIME_NONE;
        out->max_rescales = s->max_rescales;
        out->max_failures = s->max_failures;
    }
    out->deadline = s->deadline ? s->deadline : GS_TIME_NONE;
    out->batch_size = s->batch_size;
    out->app = s->app;
    out->model = s->model;
    out->steps = s->steps;
    out->weight = s->weight;
    if (s->steps > 0)
        out->duration = 0; /* the work is the steps (with a duration too the spec
                              is refused by gsd_spec_validate) */
    out->task_gpus = s->task_gpus;
    out->groups = s->groups;
    out->ngroups = s->ngroups;
    out->hived_strict = s->hived != NULL;
}
