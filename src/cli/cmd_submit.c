/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_submit.c - `gsched submit FILE | SCRIPT [ARG...] | -- CMD...`: validate a job spec
 * locally (file:line:col errors, exit 2, no daemon needed), then send its canonical JSON to
 * the daemon.
 *
 * Options have sbatch's meanings where sbatch has them (-J name, -n tasks, -N nodes, -G
 * total GPUs, -t time with bare minutes, -p partition = VC, -q QOS = priority, -o/-e output
 * files, -D workdir, --export, --array, #SBATCH lines of a batch script); gsched's own long
 * options stay (--name, --tasks, --vc, --priority, --workdir, --env, ...).  docs/cli.md has
 * the side-by-side table.  Flags override the file's fields and the script's #SBATCH lines.
 * Without a workdir the job runs in the directory it was submitted from.  --parsable prints
 * only the job id; --dry-run asks whether and where the job would start now, changing nothing.
 *
 * --dependency and --hold become the spec's "dependency" and "hold" (the daemon keeps such a
 * job out of the queue until it is eligible: src/daemon/wait.c).
 *
 * Every submit carries an Idempotency-Key (--idempotency-key, else a fresh random one per
 * invocation; it covers a whole --array): a 503 with Retry-After is retried SUBMIT_RETRIES
 * times with the same key, and a failure that may still become a job prints the key to retry
 * with.
 *
 * --array LIST[%N] becomes the spec's "array": the daemon expands it into one job per index in
 * one submission (src/daemon/commands.c), sets each element's GSCHED_ARRAY_* / SLURM_ARRAY_*
 * variables and keeps at most N elements running or starting (src/daemon/wait.c).
 *
 * Invariants: an option gsched cannot honour is refused with the missing feature named, except
 * a few that batch scripts commonly carry (-A, --mail-*, --exclusive, --ntasks-per-node 1),
 * accepted with a one-line warning saying what gsched does instead - never silently; -o/-e change
 * the job's command (a /bin/sh prefix that redirects its output), visibly in `gsched describe`;
 * an --array list is checked here with the daemon's parser (gsched/jobarray.h) before it is
 * sent.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "config.h"
#include "daemon.h"
#include "jobsel.h"

extern char **environ;

#define SUBMIT_RETRIES 3 /* retries of a submit answered 503 with Retry-After (each <= 30 s) */

static void submit_usage(FILE *f)
{
    fprintf(
        f, "usage: gsched submit [options] FILE        (YAML or JSON job spec; - = stdin)\n"
           "       gsched submit [options] SCRIPT [ARG...]  (batch script: #! and #SBATCH "
           "lines)\n"
           "       gsched submit [options] -- CMD [ARG...]\n"
           "\n"
           "Slurm (sbatch) options, with sbatch's meanings:\n"
           "  -J, --job-name NAME     job name (also --name)\n"
           "  -n, --ntasks N          tasks (each task's GPUs are on one node)\n"
           "  -N, --nodes N           N tasks, each on one node (tasks may share a node);\n"
           "                          with -n, N must equal it\n"
           "  -G, --gpus [TYPE:]N     GPUs of the whole job, split evenly over its tasks\n"
           "  -g, --gpus-per-task N   GPUs per task (default 1); --gpus-per-node and\n"
           "                          --gres=gpu[:TYPE]:N set the same (a task is on one node)\n"
           "  -t, --time LIMIT        time limit: MM (minutes), MM:SS, HH:MM:SS, D-HH, "
           "D-HH:MM,\n"
           "                          D-HH:MM:SS, UNLIMITED (also gsched's 90s, 2h)\n"
           "  -p, --partition VC      virtual cluster (also --vc, --queue; default: default)\n"
           "  -q, --qos CLASS         priority class: prod (100), test (10), normal (0), oppo "
           "(-1)\n"
           "                          or an integer (also --priority)\n"
           "  -o, --output FILE       the job's stdout (and stderr without -e) appended to "
           "FILE\n"
           "  -e, --error FILE        the job's stderr appended to FILE\n"
           "                          (%%j job id, %%x name, %%u user, %%a array index, %%t task, "
           "%%N node)\n"
           "  -D, --chdir DIR         working directory (also --workdir; default: the current "
           "one)\n"
           "  -C, --constraint TYPE   GPU model (also --gpu-type; default: any)\n"
           "  -c, --cpus-per-task N   CPUs per task (also --cpus)\n"
           "      --mem SIZE          memory per task\n"
           "      --export LIST       ALL, NONE, or VAR[=VALUE],... into the job's environment\n"
           "                          (default NONE: the job environment starts empty)\n"
           "  -a, --array LIST[%%N]   a job array, one job per index: 0-7, 1,3,5, 0-15:2 (at most\n"
           "                          1000); each gets GSCHED_ARRAY_TASK_ID, GSCHED_ARRAY_JOB_ID,\n"
           "                          GSCHED_ARRAY_TASK_COUNT (and SLURM_ARRAY_*); %%N: at most\n"
           "                          N elements run at once (the others: JobArrayTaskLimit)\n"
           "      --wrap CMD          run CMD under /bin/sh -c\n"
           "      --parsable          print only the job id(s)\n"
           "  -A, --account, --mail-type, --mail-user, --exclusive, --ntasks-per-node 1:\n"
           "                          accepted with a warning saying what gsched does instead\n"
           "  -d, --dependency LIST   start only after other jobs: afterok:ID[:ID...] (ended\n"
           "                          DONE), afternotok:ID (ended otherwise), afterany:ID "
           "(ended),\n"
           "                          after:ID (started), singleton (no other job of your\n"
           "                          name runs or is queued); ',' = all, '?' = any.  A\n"
           "                          dependency that\n"
           "                          can never be met leaves the job pending\n"
           "                          (DependencyNeverSatisfied) until cancelled\n"
           "      --kill-on-invalid-dep yes|no  yes: cancel such a job instead\n"
           "  -H, --hold              submit held (reason JobHeldUser): it waits for\n"
           "                          `gsched release ID`\n"
           "\n"
           "gsched options:\n"
           "      --tasks N[xG]       tasks; NxG also sets GPUs per task\n"
           "      --priority P        integer, or prod (100), test (10), normal (0), oppo (-1)\n"
           "      --env KEY=VALUE     environment variable, repeatable\n"
           "      --no-gang           start tasks one by one as GPUs free up\n"
           "      --duration DUR      expected run time (duration-aware policies; bare "
           "seconds)\n"
           "      --grace DUR         SIGTERM -> SIGKILL grace period (bare seconds)\n"
           "      --checkpoint-dir D  exported to the job as GSCHED_CHECKPOINT_DIR\n"
           "      --members LIST      tasks of different sizes: TASKSxGPUS,... in task order\n"
           "                          (1x2,1x1: a task of 2 GPUs and one of 1; a gang; the\n"
           "                          policy must support groups: hived)\n"
           "      --within TYPE       all tasks inside one cell of this cell type (HiveD's\n"
           "                          withinOneCell, e.g. V100-NODE; the spec's groups nest\n"
           "                          in it; hived only)\n"
           "\n"
           "Elastic jobs (docs/elastic.md; the job runs at a size in [MIN, MAX] GPUs that\n"
           "the policy or `gsched resize` changes through checkpoint and relaunch):\n"
           "  -G, --gpus MIN-MAX      elastic: starts at MIN GPUs (or tasks x GPUs per task)\n"
           "      --min-gpus N, --max-gpus N   the same range, one bound each\n"
           "      --sizes LIST        only these sizes, e.g. 1,2,4,8\n"
           "      --min-rescale-gap D least time between two policy rescales (default: the\n"
           "                          daemon's rescale_gap, 60s)\n"
           "      --max-rescales N    policy rescales allowed (default: unlimited)\n"
           "      --max-failures N    failed generations requeued before the job fails (0)\n"
           "      --drain-timeout D   SIGTERM -> SIGKILL of a drain (default: drain_timeout)\n"
           "      --deadline T        finish by T: UTC 2026-11-24T10:00:00Z, Unix seconds, or\n"
           "                          +DUR from now (+2h)\n"
           "      --batch-size N      global batch size (goodput model)\n"
           "      --app NAME          goodput-model application (e.g. cifar10)\n"
           "      --model NAME        the profiles' model: its speed on each GPU type\n"
           "                          (docs/heterogeneity.md; e.g. resnet50-bs64)\n"
           "      --steps N           work in training steps at the model's throughput (instead\n"
           "                          of --duration)\n"
           "      --weight W          priority weight (gavel, themis; default 1)\n"
           "      --user NAME         submit for another user (admin token only)\n"
           "      --dry-run           only say whether and where it would start now\n"
           "      --idempotency-key K retrying with the same key never submits twice (default: a\n"
           "                          fresh key per invocation, printed if the submit fails; a\n"
           "                          503 with Retry-After is retried 3 times with "
           "it)\n" CLI_CONN_HELP);
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

enum {
    O_GPUTYPE = 256, /* past every char: getopt_long returns 1 for a non-option word (shortopts
                        starts with -) */
    O_NOGANG,
    O_DURATION,
    O_GRACE,
    O_CKPT,
    O_CPUS,
    O_MEM,
    O_USER,
    O_DRY,
    O_IDEM,
    O_PARSABLE,
    O_TASKS,
    O_VC,
    O_PRIO,
    O_ENV,
    O_GPN,
    O_GRES,
    O_EXPORT,
    O_WRAP,
    O_NAME,
    O_KDEP,
    O_NTPN,
    O_MAIL_TYPE,
    O_MAIL_USER,
    O_EXCLUSIVE,
    O_MINGPUS,
    O_MAXGPUS,
    O_SIZES,
    O_RGAP,
    O_MAXRESC,
    O_MAXFAIL,
    O_DRAINTO,
    O_DEADLINE,
    O_BATCH,
    O_APP,
    O_MEMBERS,
    O_WITHIN,
    O_MODEL,
    O_STEPS,
    O_WEIGHT
};

static const struct option longopts[] = {{"job-name", required_argument, NULL, 'J'},
                                         {"name", required_argument, NULL, O_NAME},
                                         {"ntasks", required_argument, NULL, 'n'},
                                         {"tasks", required_argument, NULL, O_TASKS},
                                         {"nodes", required_argument, NULL, 'N'},
                                         {"gpus", required_argument, NULL, 'G'},
                                         {"gpus-per-task", required_argument, NULL, 'g'},
                                         {"gpus-per-node", required_argument, NULL, O_GPN},
                                         {"gres", required_argument, NULL, O_GRES},
                                         {"time", required_argument, NULL, 't'},
                                         {"partition", required_argument, NULL, 'p'},
                                         {"vc", required_argument, NULL, O_VC},
                                         {"queue", required_argument, NULL, O_VC},
                                         {"qos", required_argument, NULL, 'q'},
                                         {"priority", required_argument, NULL, O_PRIO},
                                         {"output", required_argument, NULL, 'o'},
                                         {"error", required_argument, NULL, 'e'},
                                         {"chdir", required_argument, NULL, 'D'},
                                         {"workdir", required_argument, NULL, 'D'},
                                         {"constraint", required_argument, NULL, 'C'},
                                         {"gpu-type", required_argument, NULL, O_GPUTYPE},
                                         {"cpus-per-task", required_argument, NULL, 'c'},
                                         {"cpus", required_argument, NULL, O_CPUS},
                                         {"mem", required_argument, NULL, O_MEM},
                                         {"env", required_argument, NULL, O_ENV},
                                         {"export", required_argument, NULL, O_EXPORT},
                                         {"array", required_argument, NULL, 'a'},
                                         {"dependency", required_argument, NULL, 'd'},
                                         {"hold", no_argument, NULL, 'H'},
                                         {"kill-on-invalid-dep", required_argument, NULL, O_KDEP},
                                         {"wrap", required_argument, NULL, O_WRAP},
                                         {"account", required_argument, NULL, 'A'},
                                         {"ntasks-per-node", required_argument, NULL, O_NTPN},
                                         {"mail-type", required_argument, NULL, O_MAIL_TYPE},
                                         {"mail-user", required_argument, NULL, O_MAIL_USER},
                                         {"exclusive", optional_argument, NULL, O_EXCLUSIVE},
                                         {"no-gang", no_argument, NULL, O_NOGANG},
                                         {"duration", required_argument, NULL, O_DURATION},
                                         {"grace", required_argument, NULL, O_GRACE},
                                         {"checkpoint-dir", required_argument, NULL, O_CKPT},
                                         {"user", required_argument, NULL, O_USER},
                                         {"min-gpus", required_argument, NULL, O_MINGPUS},
                                         {"max-gpus", required_argument, NULL, O_MAXGPUS},
                                         {"sizes", required_argument, NULL, O_SIZES},
                                         {"min-rescale-gap", required_argument, NULL, O_RGAP},
                                         {"max-rescales", required_argument, NULL, O_MAXRESC},
                                         {"max-failures", required_argument, NULL, O_MAXFAIL},
                                         {"drain-timeout", required_argument, NULL, O_DRAINTO},
                                         {"deadline", required_argument, NULL, O_DEADLINE},
                                         {"batch-size", required_argument, NULL, O_BATCH},
                                         {"app", required_argument, NULL, O_APP},
                                         {"model", required_argument, NULL, O_MODEL},
                                         {"steps", required_argument, NULL, O_STEPS},
                                         {"weight", required_argument, NULL, O_WEIGHT},
                                         {"members", required_argument, NULL, O_MEMBERS},
                                         {"within", required_argument, NULL, O_WITHIN},
                                         {"dry-run", no_argument, NULL, O_DRY},
                                         {"idempotency-key", required_argument, NULL, O_IDEM},
                                         {"parsable", no_argument, NULL, O_PARSABLE},
                                         {"help", no_argument, NULL, 'h'},
                                         CLI_CONN_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
/* '-': non-options come back in order as 1 (the FILE / SCRIPT and its arguments) */
static const char shortopts[] = "-J:n:N:G:g:t:p:q:o:e:D:C:c:a:d:A:Hh";

/* Every option's value, as the last occurrence set it (#SBATCH lines first, then the command
 * line).  0 / NULL = not given. */
typedef struct over {
    const char *name, *vc, *gpu_type, *workdir, *ckpt, *user, *prio, *prio_flag, *mem;
    const char *output, *error, *export_, *array, *wrap, *idem, *dependency;
    int hold;
    int killdep; /* --kill-on-invalid-dep: 1 yes, -1 no, 0 not given */
    int ntasks, nodes, gpus_total, gpt, cpus, has_cpus, nogang, dry, parsable;
    gs_time time, duration, grace;
    int has_time, has_duration, has_grace;
    const char **env;
    size_t nenv;
    /* elastic (0 / -1 / NULL = not given) */
    int min_gpus, max_gpus, nsizes, sizes[GSD_MAX_SIZES];
    int max_rescales, max_failures, has_max_rescales, has_max_failures;
    gs_time rgap, drain_to, deadline;
    int has_rgap, has_drain_to;
    int64_t batch;
    const char *app;
    /* heterogeneity (issue 15): 'model' NULL, steps/weight < 0 = not given */
    const char *model;
    double steps, weight;
    /* tasks of different sizes and one withinOneCell group (issue 14) */
    int nmembers, member_tasks[GSD_MAX_GPUS], member_gpus[GSD_MAX_GPUS];
    const char *within;
    char **own; /* strings this struct owns (parsed types, #SBATCH tokens) */
    size_t nown;
    int run;        /* gsched run (cli_submit_interactive): an interactive job, nothing printed */
    int64_t run_id; /* its id once submitted */
} over;

static const char *own(over *o, char *s)
{
    char **n = realloc(o->own, (o->nown + 1) * sizeof *n);
    if (!n || !s) abort();
    o->own = n;
    o->own[o->nown++] = s;
    return s;
}

static void over_release(over *o)
{
    for (size_t i = 0; i < o->nown; i++) free(o->own[i]);
    free(o->own);
    free(o->env);
}

/* "where" prefixes messages about #SBATCH lines ("job.sh:3: "); "" for the command line. */
static char g_where[PATH_MAX + 32];

static void oerr(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void oerr(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_err("%s%s", g_where, msg);
}

/* A Slurm option gsched accepts without honouring it: one line on stderr saying so. */
static void owarn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void owarn(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gsched: %swarning: %s\n", g_where, msg);
}

static int parse_count(const char *flag, const char *s, int min, int *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || *e || errno || v < min || v > GSD_MAX_GPUS) {
        oerr("%s: '%s' is not a count from %d to %d", flag, s, min, GSD_MAX_GPUS);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* "[TYPE:]N" (-G, --gpus-per-node) or "gpu[:TYPE]:N" (--gres): the count and maybe a type. */
static int parse_typed_count(over *o, const char *flag, const char *s, int gres, int *n)
{
    const char *v = s;
    if (gres) {
        if (strncmp(s, "gpu:", 4) && strcmp(s, "gpu")) {
            oerr("%s: '%s': gsched schedules only GPUs (gpu[:TYPE]:N)", flag, s);
            return -1;
        }
        v = s[3] ? s + 4 : "1";
    }
    if (strchr(v, ',')) {
        oerr("%s: '%s': one GPU type per job", flag, s);
        return -1;
    }
    const char *colon = strrchr(v, ':');
    if (colon) {
        if (colon == v) {
            oerr("%s: '%s': empty GPU type", flag, s);
            return -1;
        }
        o->gpu_type = own(o, strndup(v, (size_t)(colon - v)));
        v = colon + 1;
    }
    return parse_count(flag, v, 1, n);
}

/*
 * One option (from the command line or an #SBATCH line).  0, -1 after an error message, 1
 * after printing the usage (--help).
 */
static int handle(over *o, cli_conn *k, int opt, const char *arg)
{
    if (cli_conn_opt(k, opt, arg)) return 0;
    switch (opt) {
    case 'J':
    case O_NAME: o->name = arg; return 0;
    case 'p':
    case O_VC: o->vc = arg; return 0;
    case 'q':
    case O_PRIO:
        o->prio = arg;
        o->prio_flag = opt == 'q' ? "--qos" : "--priority";
        return 0;
    case 'D': o->workdir = arg; return 0;
    case 'C':
        if (strpbrk(arg, "&|[]*,")) {
            oerr("--constraint: '%s': gsched takes one GPU type (no feature expressions)", arg);
            return -1;
        }
        o->gpu_type = arg;
        return 0;
    case O_GPUTYPE: o->gpu_type = arg; return 0;
    case O_NOGANG: o->nogang = 1; return 0;
    case O_CKPT: o->ckpt = arg; return 0;
    case O_USER: o->user = arg; return 0;
    case O_MEM: o->mem = arg; return 0;
    case O_DRY: o->dry = 1; return 0;
    case O_IDEM: o->idem = arg; return 0;
    case O_PARSABLE: o->parsable = 1; return 0;
    case 'o': o->output = arg; return 0;
    case 'e': o->error = arg; return 0;
    case O_EXPORT: o->export_ = arg; return 0;
    case O_WRAP: o->wrap = arg; return 0;
    case O_ENV: {
        const char **ne = realloc(o->env, (o->nenv + 1) * sizeof *ne);
        if (!ne) abort();
        o->env = ne;
        o->env[o->nenv++] = arg;
        return 0;
    }
    case 'n': return parse_count("--ntasks", arg, 1, &o->ntasks);
    case 'g': return parse_count("--gpus-per-task", arg, 1, &o->gpt);
    case O_GPN: return parse_typed_count(o, "--gpus-per-node", arg, 0, &o->gpt);
    case O_GRES: return parse_typed_count(o, "--gres", arg, 1, &o->gpt);
    case 'G': {
        /* [TYPE:]MIN-MAX: an elastic range */
        const char *colon = strrchr(arg, ':'), *v = colon ? colon + 1 : arg, *dash = strchr(v, '-');
        if (!dash) return parse_typed_count(o, "--gpus", arg, 0, &o->gpus_total);
        char *a = strndup(arg, (size_t)(dash - arg));
        if (!a) abort();
        int rc = parse_typed_count(o, "--gpus", a, 0, &o->min_gpus);
        free(a);
        if (rc || parse_count("--gpus", dash + 1, 1, &o->max_gpus)) return -1;
        if (o->max_gpus < o->min_gpus) {
            oerr("--gpus %s: MAX is below MIN", arg);
            return -1;
        }
        return 0;
    }
    case O_MINGPUS: return parse_count("--min-gpus", arg, 1, &o->min_gpus);
    case O_MAXGPUS: return parse_count("--max-gpus", arg, 1, &o->max_gpus);
    case O_SIZES: {
        o->nsizes = 0;
        const char *p = arg;
        while (*p) {
            char *e;
            long v = strtol(p, &e, 10);
            if (e == p || v < 1 || v > GSD_MAX_GPUS || (*e && *e != ',') ||
                o->nsizes == GSD_MAX_SIZES) {
                oerr("--sizes: expected GPU counts like 1,2,4 (at most %d), got '%s'",
                     GSD_MAX_SIZES, arg);
                return -1;
            }
            o->sizes[o->nsizes++] = (int)v;
            p = *e ? e + 1 : e;
        }
        return 0;
    }
    case O_MAXRESC:
        o->has_max_rescales = 1;
        return parse_count("--max-rescales", arg, 0, &o->max_rescales);
    case O_MAXFAIL:
        o->has_max_failures = 1;
        return parse_count("--max-failures", arg, 0, &o->max_failures);
    case O_BATCH: {
        char *e;
        errno = 0;
        long long v = strtoll(arg, &e, 10);
        if (e == arg || *e || errno || v < 1 || v > (1LL << 40)) {
            oerr("--batch-size: '%s' is not a positive integer", arg);
            return -1;
        }
        o->batch = v;
        return 0;
    }
    case O_APP: o->app = arg; return 0;
    case O_MODEL: o->model = arg; return 0;
    case O_STEPS:
    case O_WEIGHT: {
        const char *name = opt == O_STEPS ? "--steps" : "--weight";
        double hi = opt == O_STEPS ? 1e15 : 1e6;
        char *e;
        errno = 0;
        double v = strtod(arg, &e);
        if (e == arg || *e || errno || !(v >= 0 && v <= hi)) {
            oerr("%s: '%s' is not a number between 0 and %g", name, arg, hi);
            return -1;
        }
        *(opt == O_STEPS ? &o->steps : &o->weight) = v;
        return 0;
    }
    case O_MEMBERS: {
        /* NxG[,NxG...]: N tasks of G GPUs each, in task order */
        o->nmembers = 0;
        int total = 0;
        for (const char *p = arg; *p;) {
            char *e, *e2;
            long n = strtol(p, &e, 10), g = 0;
            int ok = e != p && n >= 1 && (*e == 'x' || *e == 'X');
            if (ok) {
                g = strtol(e + 1, &e2, 10);
                ok = e2 != e + 1 && g >= 1 && g <= GSD_MAX_GPUS && (!*e2 || *e2 == ',');
            }
            if (!ok || total + n > GSD_MAX_GPUS) {
                oerr("--members: expected TASKSxGPUS[,TASKSxGPUS...] (e.g. 1x2,1x1; at most %d "
                     "tasks), got '%s'",
                     GSD_MAX_GPUS, arg);
                return -1;
            }
            total += (int)n;
            o->member_tasks[o->nmembers] = (int)n;
            o->member_gpus[o->nmembers++] = (int)g;
            p = *e2 ? e2 + 1 : e2;
        }
        return 0;
    }
    case O_WITHIN:
        if (!*arg) {
            oerr("--within: give a cell type of the cluster (e.g. V100-NODE)");
            return -1;
        }
        o->within = arg;
        return 0;
    case O_DEADLINE: {
        gs_time t = 0;
        char *e;
        if (arg[0] == '+') {
            gs_diag d;
            gs_diag_init(&d, NULL);
            if (gsd_parse_duration(arg + 1, GS_SEC, &t, &d)) {
                oerr("--deadline: '%s': %s", arg, d.msg);
                return -1;
            }
            t += (gs_time)time(NULL) * GS_SEC;
            t = t / GS_SEC * GS_SEC;
        } else if (gsd_parse_deadline(arg, &t)) {
            errno = 0;
            long long v = strtoll(arg, &e, 10);
            if (e == arg || *e || errno || v < 1 || v > 253402300799LL) {
                oerr("--deadline: '%s' is not a UTC time (2026-11-24T10:00:00Z), Unix seconds or "
                     "+DURATION",
                     arg);
                return -1;
            }
            t = (gs_time)v * GS_SEC;
        }
        o->deadline = t;
        return 0;
    }
    case O_RGAP:
    case O_DRAINTO: {
        gs_diag d;
        gs_diag_init(&d, NULL);
        gs_time t;
        if (gsd_parse_duration(arg, GS_SEC, &t, &d)) {
            oerr("--%s: '%s' is not a duration: %s",
                 opt == O_RGAP ? "min-rescale-gap" : "drain-timeout", arg, d.msg);
            return -1;
        }
        if (opt == O_RGAP)
            o->rgap = t, o->has_rgap = 1;
        else
            o->drain_to = t, o->has_drain_to = 1;
        return 0;
    }
    case 'c':
    case O_CPUS: {
        if (parse_count(opt == 'c' ? "--cpus-per-task" : "--cpus", arg, 0, &o->cpus)) return -1;
        o->has_cpus = 1;
        return 0;
    }
    case 'N': {
        /* N or MIN-MAX; gsched places exactly the tasks it is given */
        const char *dash = strchr(arg, '-');
        int lo, hi;
        if (dash) {
            char *a = strndup(arg, (size_t)(dash - arg));
            if (!a) abort();
            int bad = parse_count("--nodes", a, 1, &lo) || parse_count("--nodes", dash + 1, 1, &hi);
            free(a);
            if (bad) return -1;
            if (lo != hi) {
                oerr("--nodes: '%s': gsched needs one node count (a job gets exactly its tasks)",
                     arg);
                return -1;
            }
        } else if (parse_count("--nodes", arg, 1, &lo)) {
            return -1;
        }
        o->nodes = lo;
        return 0;
    }
    case O_TASKS: {
        char *e;
        long a = strtol(arg, &e, 10);
        if (e == arg || a < 1 || a > GSD_MAX_GPUS || (*e && *e != 'x' && *e != 'X')) {
            oerr("--tasks: expected N or NxG, got '%s'", arg);
            return -1;
        }
        if (*e) {
            char *e2;
            long b = strtol(e + 1, &e2, 10);
            if (*e2 || e2 == e + 1 || b < 1 || b > GSD_MAX_GPUS) {
                oerr("--tasks: expected N or NxG, got '%s'", arg);
                return -1;
            }
            o->gpt = (int)b;
        }
        o->ntasks = (int)a;
        return 0;
    }
    case 't':
    case O_DURATION:
    case O_GRACE: {
        gs_time t;
        gs_diag d;
        gs_diag_init(&d, NULL);
        int rc = opt == 't' ? gsd_parse_time_limit(arg, &t, &d)
                            : gsd_parse_duration(arg, GS_SEC, &t, &d);
        if (rc) {
            if (opt == 't')
                oerr("--time: '%s' is not a time limit: %s (minutes: 30, MM:SS, HH:MM:SS, "
                     "D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED; or 90s, 2h)",
                     arg, d.msg);
            else
                oerr("--%s: '%s' is not a duration: %s (90s, 30m, 2h, 1h30m, HH:MM:SS, "
                     "D-HH:MM:SS)",
                     opt == O_DURATION ? "duration" : "grace", arg, d.msg);
            return -1;
        }
        if (opt == 't') o->time = t, o->has_time = 1;
        if (opt == O_DURATION) o->duration = t, o->has_duration = 1;
        if (opt == O_GRACE) o->grace = t, o->has_grace = 1;
        return 0;
    }
    case 'a': o->array = arg; return 0; /* checked with the spec (gsched/jobarray.h) */
    case 'd':
        o->dependency = arg;
        return 0; /* checked with the spec (deps.h) */
    /* Slurm options that batch scripts often carry: accepted, never silently (docs/cli.md) */
    case 'A':
        owarn("--account '%s' ignored: gsched has no accounts (a job is accounted to its user "
              "and its VC, -p)",
              arg);
        return 0;
    case O_MAIL_TYPE:
    case O_MAIL_USER:
        owarn("--%s '%s' ignored: gsched sends no mail (follow a job with gsched queue -j ID -i "
              "SECS, or gsched logs ID -f)",
              opt == O_MAIL_TYPE ? "mail-type" : "mail-user", arg);
        return 0;
    case O_EXCLUSIVE:
        owarn("--exclusive: gsched never shares a GPU between jobs, but reserves no whole node: "
              "other jobs may use the node's other GPUs (ask for all its GPUs to have it alone)");
        return 0;
    case O_NTPN: {
        int n;
        if (parse_count("--ntasks-per-node", arg, 1, &n)) return -1;
        if (n != 1) {
            oerr("--ntasks-per-node %d: a gsched task is one process holding its GPUs on one "
                 "node, and gsched cannot place %d per node; give the total with -n (tasks may "
                 "share a node), or start the processes of a node yourself (e.g. torchrun "
                 "--nproc-per-node)",
                 n, n);
            return -1;
        }
        owarn("--ntasks-per-node 1: accepted (each gsched task is one process with its GPUs on "
              "one node), but tasks are not spread over distinct nodes: two may share one");
        return 0;
    }
    case 'H': o->hold = 1; return 0;
    case O_KDEP:
        if (strcasecmp(arg, "yes") && strcasecmp(arg, "no")) {
            oerr("--kill-on-invalid-dep: '%s': give yes or no", arg);
            return -1;
        }
        o->killdep = !strcasecmp(arg, "yes") ? 1 : -1;
        return 0;
    case 'h': submit_usage(stdout); return 1;
    default: submit_usage(stderr); return -1;
    }
}

/* --members: the tasks and their GPUs (replacing the spec's members and groups). */
static int apply_members(gsd_spec *s, const over *o)
{
    int n = 0, mx = 0, same = 1;
    for (int i = 0; i < o->nmembers; i++) {
        n += o->member_tasks[i];
        if (o->member_gpus[i] > mx) mx = o->member_gpus[i];
        if (o->member_gpus[i] != o->member_gpus[0]) same = 0;
    }
    free(s->task_gpus);
    s->task_gpus = NULL;
    for (int i = 0; i < s->ngroups; i++) free((char *)s->groups[i].within);
    free(s->groups);
    s->groups = NULL;
    s->ngroups = 0;
    s->ntasks = n;
    s->gpus_per_task = mx;
    if (same) return 0;
    s->task_gpus = calloc((size_t)n, sizeof *s->task_gpus);
    if (!s->task_gpus) abort();
    for (int i = 0, t = 0; i < o->nmembers; i++)
        for (int k = 0; k < o->member_tasks[i]; k++) s->task_gpus[t++] = o->member_gpus[i];
    return 0;
}

static int set_env(gsd_spec *s, const char *flag, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
        cli_err("%s: expected KEY=VALUE, got '%s'", flag, kv);
        return -1;
    }
    char *key = strndup(kv, (size_t)(eq - kv));
    if (!key) abort();
    gsd_spec_setenv(s, key, eq + 1);
    free(key);
    return 0;
}

/* 1 if KEY=VAL of the submitter's environment may go into a job spec as it is. */
static int exportable(const char *key, const char *val)
{
    gsd_spec t;
    gsd_spec_init(&t);
    char *argv[] = {"true", NULL};
    gsd_kv kv = {(char *)key, (char *)val};
    t.argv = argv;
    t.argc = 1;
    t.env = &kv;
    t.nenv = 1;
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *field;
    return gsd_spec_validate(&t, &d, &field) == 0;
}

/*
 * --export: ALL (the submitter's environment, minus names a spec cannot carry: GSCHED_*,
 * CUDA_VISIBLE_DEVICES, ...), NONE (nothing: gsched's default), VAR=VALUE, VAR (its value
 * here; skipped with a note when unset), comma-separated.
 */
static int apply_export(gsd_spec *s, const char *arg)
{
    char *buf = xstrdup(arg), *save = NULL;
    int all = 0, none = 0, rc = 0;
    size_t nitems = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        nitems++;
        if (!strcmp(t, "ALL"))
            all = 1;
        else if (!strcmp(t, "NONE") || !strcmp(t, "NIL"))
            none = 1;
    }
    if (!nitems || (all && none)) {
        cli_err("--export: '%s': expected ALL, NONE, or VAR[=VALUE],...", arg);
        free(buf);
        return -1;
    }
    if (all) {
        size_t skipped = 0;
        for (char **e = environ; *e; e++) {
            const char *eq = strchr(*e, '=');
            if (!eq || eq == *e) continue;
            char *key = strndup(*e, (size_t)(eq - *e));
            if (!key) abort();
            if (exportable(key, eq + 1))
                gsd_spec_setenv(s, key, eq + 1);
            else
                skipped++;
            free(key);
        }
        if (s->nenv > GSD_MAX_ENV) {
            cli_err("--export=ALL: your environment has %zu variables; a job takes at most %d "
                    "(name them: --export=VAR,...)",
                    s->nenv, GSD_MAX_ENV);
            free(buf);
            return -1;
        }
        if (skipped)
            fprintf(stderr,
                    "gsched: --export=ALL: %zu variable(s) not exported (names gsched sets, such "
                    "as GSCHED_*, or values a job spec cannot carry)\n",
                    skipped);
    }
    strcpy(buf, arg);
    save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "ALL") || !strcmp(t, "NONE") || !strcmp(t, "NIL")) continue;
        if (strchr(t, '=')) {
            rc = set_env(s, "--export", t);
        } else {
            const char *v = getenv(t);
            if (v)
                gsd_spec_setenv(s, t, v);
            else
                fprintf(stderr, "gsched: --export: %s is not set here; not exported\n", t);
        }
    }
    free(buf);
    return rc;
}

static void replace(char **dst, const char *v)
{
    free(*dst);
    *dst = xstrdup(v);
}

static int apply(gsd_spec *s, const over *o)
{
    /* a HiveD spec (hived:) says these itself; a flag would be dropped silently */
    const char *clash = !s->hived                 ? NULL
                        : o->vc                   ? "-p/--vc"
                        : o->prio                 ? "-q/--priority"
                        : o->gpu_type             ? "-C/--gpu-type"
                        : o->ntasks || o->nodes   ? "-n/-N"
                        : o->gpt || o->gpus_total ? "-g/-G"
                        : o->nmembers             ? "--members"
                        : o->within               ? "--within"
                        : o->nogang               ? "--no-gang"
                                                  : NULL;
    if (clash) {
        cli_err("%s: the spec's 'hived' block (HiveD's pod-scheduling spec) sets this itself",
                clash);
        return -1;
    }
    if (o->name) replace(&s->name, o->name);
    if (o->vc) replace(&s->vc, o->vc);
    if (o->gpu_type) replace(&s->gpu_type, o->gpu_type);
    if (o->ckpt) replace(&s->checkpoint_dir, o->ckpt);
    if (o->user) replace(&s->user, o->user);
    if (o->dependency) replace(&s->dependency, o->dependency);
    if (o->array) replace(&s->array, o->array);
    if (o->hold) s->hold = 1;
    if (o->killdep) s->kill_invalid_dep = o->killdep > 0;
    if (o->workdir) {
        if (o->workdir[0] == '/') {
            replace(&s->workdir, o->workdir);
        } else {
            char *abs = realpath(o->workdir, NULL);
            if (!abs) {
                cli_err("--chdir: '%s': %s", o->workdir, strerror(errno));
                return -1;
            }
            free(s->workdir);
            s->workdir = abs;
        }
    }
    if (o->prio && cli_qos_priority(o->prio_flag, o->prio, &s->priority)) return -1;
    /* tasks, then GPUs per task, then the job's total */
    if (o->nodes && o->ntasks && o->nodes != o->ntasks) {
        cli_err("--nodes %d with --ntasks %d: a gsched task holds one node's share of the job "
                "(one process per task, its GPUs on one node); use -N %d -G TOTAL, or -n %d "
                "alone",
                o->nodes, o->ntasks, o->nodes, o->ntasks);
        return -1;
    }
    if ((o->ntasks || o->nodes || o->gpt || o->gpus_total) &&
        (o->nmembers || gsd_spec_grouped(s))) {
        cli_err("-n, -N, -g and -G give every task the same GPUs: with members of different sizes "
                "or groups (--members, 'members' / 'groups' in the spec) use --members");
        return -1;
    }
    if (o->nmembers && apply_members(s, o)) return -1;
    if (o->ntasks) s->ntasks = o->ntasks;
    if (o->nodes) s->ntasks = o->nodes;
    if (o->gpt) s->gpus_per_task = o->gpt;
    if (o->gpus_total) {
        if (o->gpt && !o->ntasks && !o->nodes) {
            if (o->gpus_total % o->gpt) {
                cli_err("--gpus %d is not a multiple of --gpus-per-task %d", o->gpus_total, o->gpt);
                return -1;
            }
            s->ntasks = o->gpus_total / o->gpt;
        } else if (o->gpt) {
            if ((long)s->ntasks * o->gpt != o->gpus_total) {
                cli_err("--gpus %d does not match %d task(s) x --gpus-per-task %d", o->gpus_total,
                        s->ntasks, o->gpt);
                return -1;
            }
        } else {
            if (o->gpus_total % s->ntasks) {
                cli_err("--gpus %d cannot be split evenly over %d task(s) (gsched gives every "
                        "task the same GPU count)",
                        o->gpus_total, s->ntasks);
                return -1;
            }
            s->gpus_per_task = o->gpus_total / s->ntasks;
        }
    }
    if (o->within) gsd_spec_wrap_within(s, o->within); /* after the tasks are known */
    if (o->nogang) s->gang = 0;
    /* elastic: --gpus MIN-MAX (or --min-gpus / --max-gpus) starts at MIN unless tasks say */
    if (o->min_gpus) s->min_gpus = o->min_gpus;
    if (o->max_gpus) s->max_gpus = o->max_gpus;
    if ((o->min_gpus || o->max_gpus) && !o->ntasks && !o->nodes && !o->gpus_total) {
        int lo = s->min_gpus > s->gpus_per_task ? s->min_gpus : s->gpus_per_task;
        if (o->nsizes) lo = o->sizes[0];
        if (lo % s->gpus_per_task == 0) s->ntasks = lo / s->gpus_per_task;
    }
    if (o->nsizes) {
        free(s->sizes);
        s->sizes = calloc((size_t)o->nsizes, sizeof *s->sizes);
        if (!s->sizes) abort();
        memcpy(s->sizes, o->sizes, (size_t)o->nsizes * sizeof *s->sizes);
        s->nsizes = o->nsizes;
    }
    if (o->has_rgap) s->min_rescale_gap = o->rgap;
    if (o->has_drain_to) s->drain_timeout = o->drain_to;
    if (o->has_max_rescales) s->max_rescales = o->max_rescales;
    if (o->has_max_failures) s->max_failures = o->max_failures;
    if (o->deadline) s->deadline = o->deadline;
    if (o->batch) s->batch_size = o->batch;
    if (o->app) replace(&s->app, o->app);
    if (o->model) replace(&s->model, o->model);
    if (o->steps >= 0) s->steps = o->steps;
    if (o->weight >= 0) s->weight = o->weight;
    if (o->has_time) s->time_limit = o->time;
    if (o->has_duration) s->duration = o->duration;
    if (o->has_grace) s->grace = o->grace;
    if (o->has_cpus) s->cpus_per_task = o->cpus;
    if (o->mem) {
        int64_t mb = gs_parse_mem_mb(o->mem);
        if (mb < 0 || mb > (1LL << 30)) {
            cli_err("--mem: '%s' is not a size (512M, 32G, 32Gi)", o->mem);
            return -1;
        }
        s->mem_mb_per_task = (int)mb;
    }
    if (o->export_ && apply_export(s, o->export_)) return -1;
    for (size_t i = 0; i < o->nenv; i++)
        if (set_env(s, "--env", o->env[i])) return -1;
    return 0;
}

/* ---- batch scripts -------------------------------------------------------------------------- */

typedef struct strbuf {
    char *p;
    size_t n, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        b->cap = (b->n + len + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_str(strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* Split an #SBATCH line into words: blanks separate, '...' and "..." quote, a word starting
 * with '#' starts a comment.  Words are owned by o.  -1 on an unterminated quote. */
static int split_words(over *o, const char *s, const char ***words, size_t *n)
{
    *words = NULL;
    *n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') return 0;
        strbuf w = {0};
        sb_add(&w, "", 0);
        while (*s && *s != ' ' && *s != '\t') {
            if (*s == '\'' || *s == '"') {
                char q = *s++;
                const char *end = strchr(s, q);
                if (!end) {
                    free(w.p);
                    return -1;
                }
                sb_add(&w, s, (size_t)(end - s));
                s = end + 1;
            } else {
                sb_add(&w, s++, 1);
            }
        }
        const char **nw = realloc(*words, (*n + 1) * sizeof *nw);
        if (!nw) abort();
        *words = nw;
        (*words)[(*n)++] = own(o, w.p);
    }
}

/* The options of the #SBATCH lines at the top of a script (up to its first command line). */
static int sbatch_lines(over *o, cli_conn *k, const char *path, const char *buf)
{
    int lineno = 0, rc = 0;
    const char *line = buf;
    while (*line && !rc) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        lineno++;
        char *l = strndup(line, len);
        if (!l) abort();
        if (len && l[len - 1] == '\r') l[len - 1] = '\0';
        line = eol ? eol + 1 : line + len;
        const char *p = l;
        while (*p == ' ' || *p == '\t') p++;
        if (lineno > 1 && *p && *p != '#') {
            free(l); /* the first command: sbatch reads no further */
            break;
        }
        if (strncmp(l, "#SBATCH", 7) || (l[7] && l[7] != ' ' && l[7] != '\t')) {
            free(l);
            continue;
        }
        snprintf(g_where, sizeof g_where, "%s:%d: ", path, lineno);
        const char **words;
        size_t n;
        if (split_words(o, l + 7, &words, &n)) {
            oerr("#SBATCH: unterminated quote");
            rc = -1;
        }
        free(l);
        if (rc || !n) {
            free(words);
            continue;
        }
        char **av = calloc(n + 2, sizeof *av);
        if (!av) abort();
        av[0] = "#SBATCH";
        for (size_t i = 0; i < n; i++) av[i + 1] = (char *)words[i];
        int ac = (int)n + 1, opt;
        optind = 0;
        opterr = 0;
        while (!rc && (opt = getopt_long(ac, av, shortopts, longopts, NULL)) != -1) {
            if (opt == 1) {
                oerr("#SBATCH: unexpected word '%s' (not an option)", optarg);
                rc = -1;
            } else if (opt == '?' || opt == ':') {
                const char *bad = av[optind - 1 < ac ? optind - 1 : ac - 1];
                oerr("#SBATCH: %s option '%s'",
                     opt == ':' ? "missing value for" : "unknown or unsupported", bad);
                rc = -1;
            } else if (opt == 'h') {
                oerr("#SBATCH: --help is not an option for a script");
                rc = -1;
            } else {
                rc = handle(o, k, opt, optarg) ? -1 : 0;
            }
        }
        opterr = 1;
        free(av);
        free(words);
    }
    g_where[0] = '\0';
    return rc;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/*
 * The command of a batch script: its interpreter (the #! line, through /usr/bin/env too) runs
 * the script's text, read now (like sbatch, later edits of the file do not change the job):
 * INTERP [ARG] -c TEXT SCRIPT ARGS... for shells ($0 = the script's path), INTERP [ARG] -c
 * TEXT ARGS... for python.
 */
static int script_command(gsd_spec *s, const char *path, const char *buf, char **args, int nargs)
{
    const char *eol = strchr(buf, '\n');
    size_t len = eol ? (size_t)(eol - buf) : strlen(buf);
    char *first = strndup(buf + 2, len - 2);
    if (!first) abort();
    char *words[8], *save = NULL;
    int nw = 0;
    for (char *t = strtok_r(first, " \t\r", &save); t && nw < 8; t = strtok_r(NULL, " \t\r", &save))
        words[nw++] = t;
    int prog = nw > 1 && !strcmp(base_name(words[0]), "env") ? 1 : 0;
    static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", NULL};
    int shell = 0, python = 0;
    if (nw > prog) {
        const char *b = base_name(words[prog]);
        for (size_t i = 0; shells[i]; i++) shell |= !strcmp(b, shells[i]);
        python = !strncmp(b, "python", 6);
    }
    if (!shell && !python) {
        cli_err("%s: cannot run a script for '%s' (gsched runs sh, bash, zsh, ksh and python "
                "scripts); use: gsched submit [options] -- INTERPRETER %s",
                path, nw ? words[prog < nw ? prog : 0] : "(no interpreter)", path);
        free(first);
        return -1;
    }
    int n = nw + 2 + (shell ? 1 : 0) + nargs;
    s->argv = calloc((size_t)n + 1, sizeof *s->argv);
    if (!s->argv) abort();
    int i = 0;
    for (int w = 0; w < nw; w++) s->argv[i++] = xstrdup(words[w]);
    s->argv[i++] = xstrdup("-c");
    s->argv[i++] = xstrdup(buf);
    if (shell) s->argv[i++] = xstrdup(path);
    for (int a = 0; a < nargs; a++) s->argv[i++] = xstrdup(args[a]);
    s->argc = i;
    free(first);
    return 0;
}

/* ---- -o / -e -------------------------------------------------------------------------------- */

/* A file name pattern as one /bin/sh word: literal text single-quoted, %j and friends as the
 * job's variables (set by the executor at start). */
static int pattern_word(strbuf *w, const char *flag, const char *pat, int array)
{
    if (!*pat) {
        cli_err("%s: empty file name", flag);
        return -1;
    }
    sb_str(w, "'");
    for (const char *p = pat; *p; p++) {
        if (*p == '\'') {
            sb_str(w, "'\\''");
            continue;
        }
        if (*p != '%') {
            sb_add(w, p, 1);
            continue;
        }
        const char *var = NULL;
        switch (p[1]) {
        case '%':
            sb_str(w, "%");
            p++;
            continue;
        case 'j': var = "GSCHED_JOB_ID"; break;
        case 'x': var = "GSCHED_JOB_NAME"; break;
        case 'u': var = "GSCHED_USER"; break;
        case 'N': var = "GSCHED_NODE"; break;
        case 't': var = "GSCHED_TASK_INDEX"; break;
        case 'a':
            if (!array) {
                cli_err("%s: '%%a' (array index) needs --array", flag);
                return -1;
            }
            var = "GSCHED_ARRAY_TASK_ID";
            break;
        default:
            cli_err("%s: '%s': unsupported '%%%c' (gsched knows %%j job id, %%x name, %%u user, "
                    "%%a array index, %%t task, %%N node, %%%%)",
                    flag, pat, p[1] ? p[1] : ' ');
            return -1;
        }
        sb_str(w, "'\"${");
        sb_str(w, var);
        sb_str(w, "}\"'");
        p++;
    }
    sb_str(w, "'");
    return 0;
}

/*
 * -o FILE / -e FILE: the job's own /bin/sh appends its stdout / stderr to FILE (relative to
 * the workdir; opened as the job's user, when it starts) before running the command:
 *   shell string S  ->  exec >>FILE 2>&1 <newline> S
 *   list CMD ARG... ->  /bin/sh -c 'exec >>FILE 2>&1 <newline> exec "$0" "$@"' CMD ARG...
 * Without -e, stderr goes to the -o file as with sbatch.  `gsched logs` keeps only gsched's
 * start and exit lines then.
 */
static int redirect_output(gsd_spec *s, const over *o)
{
    if (!o->output && !o->error) return 0;
    strbuf pre = {0};
    sb_str(&pre, "exec");
    if (o->output) {
        sb_str(&pre, " >>");
        if (pattern_word(&pre, "--output", o->output, o->array != NULL)) goto fail;
    }
    if (o->error && (!o->output || strcmp(o->error, o->output))) {
        sb_str(&pre, " 2>>");
        if (pattern_word(&pre, "--error", o->error, o->array != NULL)) goto fail;
    } else {
        sb_str(&pre, " 2>&1");
    }
    sb_str(&pre, "\n");
    if (s->shell) {
        sb_str(&pre, s->shell);
        free(s->shell);
        s->shell = pre.p;
        return 0;
    }
    sb_str(&pre, "exec \"$0\" \"$@\"");
    char **av = calloc((size_t)s->argc + 4, sizeof *av);
    if (!av) abort();
    av[0] = xstrdup("/bin/sh");
    av[1] = xstrdup("-c");
    av[2] = pre.p;
    for (int i = 0; i < s->argc; i++) av[i + 3] = s->argv[i];
    free(s->argv);
    s->argv = av;
    s->argc += 3;
    return 0;
fail:
    free(pre.p);
    return -1;
}

/* ---- sending -------------------------------------------------------------------------------- */

static int read_all(FILE *f, char **buf, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    if (!b) abort();
    size_t k;
    while ((k = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 >= cap) {
            if (cap > (8u << 20)) {
                free(b);
                return -1;
            }
            cap *= 2;
            b = realloc(b, cap);
            if (!b) abort();
        }
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

static int print_dryrun(json_t *r)
{
    int fits = json_is_true(json_object_get(r, "fits_now"));
    int feasible = json_is_true(json_object_get(r, "feasible"));
    const char *reason = cli_jstr(r, "reason", NULL);
    if (fits) {
        printf("would start now (by free GPUs):");
        json_t *pl = json_object_get(r, "placement"), *t;
        size_t i;
        json_array_foreach(pl, i, t)
        {
            printf(" %s:", cli_jstr(t, "node", "?"));
            json_t *g, *gl = json_object_get(t, "gpus");
            size_t k;
            json_array_foreach(gl, k, g)
                printf("%s%lld", k ? "," : "", (long long)json_integer_value(g));
        }
        printf("\n");
    } else if (json_is_array(json_object_get(r, "would_preempt"))) {
        printf("would start by preempting job(s)");
        json_t *v;
        size_t i;
        json_array_foreach(json_object_get(r, "would_preempt"), i, v)
            printf("%s %lld", i ? "," : "", (long long)json_integer_value(v));
        printf(" (%s)\n", reason ? reason : "no room on free GPUs");
    } else if (feasible) {
        printf("would wait: %s\n", reason ? reason : "no room now");
    } else {
        printf("can never run here: %s\n", reason ? reason : "does not fit the cluster");
    }
    printf("%lld job(s) ahead of it %s; policy %s\n", cli_jint(r, "pending_ahead", 0),
           cli_jstr(r, "queue", "in its queue"), cli_jstr(r, "policy", "?"));
    return feasible ? EXIT_OK : EXIT_USAGE;
}

/* "gsched-" and 32 random hex digits (the kernel's CSPRNG); 0 or -1 (errno set). */
static int new_idem_key(char *buf, size_t cap)
{
    unsigned char r[16];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    if (cap < 8 + 2 * sizeof r) {
        errno = ERANGE;
        return -1;
    }
    memcpy(buf, "gsched-", 7);
    for (size_t i = 0; i < sizeof r; i++) {
        buf[7 + 2 * i] = hex[r[i] >> 4];
        buf[8 + 2 * i] = hex[r[i] & 15];
    }
    buf[7 + 2 * sizeof r] = '\0';
    return 0;
}

/* Send the spec (a job, or a whole --array); prints what the daemon said. */
static int send_one(cli_conn *k, const gsd_spec *spec, const over *o, int *printed)
{
    char *json = gsd_spec_to_json(spec);
    if (!json) abort();
    char idem_hdr[400];
    const char *hdrs[2] = {NULL, NULL};
    if (o->idem && !o->dry) {
        snprintf(idem_hdr, sizeof idem_hdr, "Idempotency-Key: %s", o->idem);
        hdrs[0] = idem_hdr;
    }
    json_t *r = NULL;
    int rc;
    /* 503 with Retry-After (read-only daemon, shutting down, busy): the same request again,
     * with the same key, a bounded number of times; the key makes a retry harmless */
    k->quiet = 1;
    for (int retry = 0;; retry++) {
        rc = cli_call(k, "POST", o->dry ? "/v1/jobs?dry_run=1" : "/v1/jobs", json,
                      "application/json", hdrs, o->dry ? "dry run" : "submit", &r);
        if (!rc || o->dry || k->status != 503 || k->retry_after < 0 || retry == SUBMIT_RETRIES)
            break;
        int wait = k->retry_after < 1 ? 1 : k->retry_after > 30 ? 30 : k->retry_after;
        cli_err("%s", k->msg);
        cli_err("retrying in %d s with the same Idempotency-Key %s (retry %d of %d)", wait,
                hdrs[0] ? hdrs[0] + strlen("Idempotency-Key: ") : "(none)", retry + 1,
                SUBMIT_RETRIES);
        sleep((unsigned)wait);
    }
    k->quiet = 0;
    free(json);
    if (rc) {
        cli_call_report(k);
        if (!o->dry && (k->status == 0 || k->status >= 500))
            cli_err("the daemon may still record this job: to find out, or to retry without "
                    "submitting it twice, run the same command with --idempotency-key %s",
                    o->idem);
        return rc;
    }
    if (o->run) {
        ((over *)o)->run_id = cli_jint(r, "id", -1);
    } else if (k->json) {
        char *s = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("%s\n", s);
        free(s);
        if (o->dry) rc = json_is_true(json_object_get(r, "feasible")) ? EXIT_OK : EXIT_USAGE;
    } else if (o->dry) {
        rc = print_dryrun(r);
    } else if (o->parsable) {
        printf("%s%lld", *printed ? " " : "", cli_jint(r, "id", -1));
    } else {
        json_t *ids = json_object_get(r, "ids");
        json_t *aids = json_object_get(r, "array_job_ids");
        size_t n = json_array_size(ids), na = json_array_size(aids);
        const char *replay = json_is_true(json_object_get(r, "idempotent_replay"))
                                 ? " (already submitted with this idempotency key)"
                                 : "";
        if (na)
            printf("Submitted array job %lld (%zu element(s): jobs %lld-%lld, listed as "
                   "%lld_INDEX)%s\n",
                   cli_jint(r, "id", -1), na,
                   (long long)json_integer_value(json_array_get(aids, 0)),
                   (long long)json_integer_value(json_array_get(aids, na - 1)),
                   cli_jint(r, "id", -1), replay);
        else if (n > 1)
            printf("Submitted job %lld (%zu tasks started independently as jobs %lld-%lld)\n",
                   cli_jint(r, "id", -1), n, (long long)json_integer_value(json_array_get(ids, 0)),
                   (long long)json_integer_value(json_array_get(ids, n - 1)));
        else
            printf("Submitted job %lld%s\n", cli_jint(r, "id", -1), replay);
    }
    (*printed)++;
    json_decref(r);
    return rc;
}

typedef struct optarg_pair {
    int opt;
    const char *arg;
} optarg_pair;

static int submit_main(int argc, char **argv, cli_conn *kp, int64_t *run_id);

int cmd_submit(int argc, char **argv)
{
    cli_conn k;
    cli_conn_init(&k);
    return submit_main(argc, argv, &k, NULL);
}

int cli_submit_interactive(int argc, char **argv, cli_conn *k, int64_t *id)
{
    *id = -1;
    return submit_main(argc, argv, k, id);
}

/* submit, or with run_id (gsched run) an interactive job of the command after -- whose id goes
 * to *run_id (no spec FILE or SCRIPT, no array, no dry run; nothing printed on success) */
static int submit_main(int argc, char **argv, cli_conn *kp, int64_t *run_id)
{
    over o;
    memset(&o, 0, sizeof o);
    o.run = run_id != NULL;
    o.steps = o.weight = -1; /* not given */
    g_where[0] = '\0';
    int opt, rc = EXIT_USAGE;
    gsd_spec spec;
    gsd_spec_init(&spec);
    char *buf = NULL;
    optarg_pair *pairs = calloc((size_t)argc + 1, sizeof *pairs);
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pairs || !pos) abort();
    size_t npairs = 0, npos = 0;
    /* The command line is read first (to find the FILE / SCRIPT) and applied last, so that it
     * overrides a script's #SBATCH lines.  Words before "--" are FILE [ARG...]; after it, the
     * command (or, after a SCRIPT, more of its arguments). */
    optind = 0;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (opt == 1) {
            pos[npos++] = optarg;
        } else if (opt == 'h') {
            submit_usage(stdout);
            rc = EXIT_OK;
            goto done;
        } else if (opt == '?' || opt == ':') {
            if (run_id) /* gsched run's options are submit's: not submit's usage (FILE...) */
                fprintf(stderr,
                        "usage: gsched run [options] -- CMD [ARG...]  (gsched run --help)\n");
            else
                submit_usage(stderr);
            goto done;
        } else {
            pairs[npairs++] = (optarg_pair){opt, optarg};
        }
    }
    char **post = argv + optind;
    int npost = argc - optind;
    int script = 0;
    if (o.run && npos) {
        cli_err("run: unexpected argument '%s' (put the command after --: gsched run [options] "
                "-- CMD [ARG...])",
                pos[0]);
        goto done;
    }
    if (npos) {
        const char *file = pos[0];
        size_t len;
        gs_diag d;
        gs_diag_init(&d, file);
        if (!strcmp(file, "-")) {
            if (read_all(stdin, &buf, &len)) {
                cli_err("stdin: job spec larger than 8 MiB");
                goto done;
            }
            file = "<stdin>";
        } else if (gs_read_file(file, &buf, &len, &d)) {
            cli_diag(&d);
            if (npos > 1 || access(file, F_OK))
                cli_err(
                    "(to run a program, put a command after --: gsched submit [options] -- %s ...)",
                    file);
            goto done;
        }
        script = len >= 2 && buf[0] == '#' && buf[1] == '!';
        if (script) {
            if (memchr(buf, '\0', len)) {
                cli_err("%s: a batch script cannot contain NUL bytes", file);
                goto done;
            }
            if (sbatch_lines(&o, kp, file, buf)) goto done;
        } else {
            if (npos > 1 || npost) {
                cli_err("submit: unexpected argument '%s' after the job spec %s (put a command "
                        "after --)",
                        npos > 1 ? pos[1] : post[0], file);
                goto done;
            }
            const char *field;
            if (gsd_spec_parse(file, buf, len, &spec, &d, &field)) {
                cli_diag(&d);
                goto done;
            }
        }
    }
    for (size_t i = 0; i < npairs; i++) {
        int h = handle(&o, kp, pairs[i].opt, pairs[i].arg);
        if (h) {
            if (h > 0) rc = EXIT_OK;
            goto done;
        }
    }
    if (script) {
        /* SCRIPT ARG... [-- ARG...]: the script's arguments */
        char **args = calloc((size_t)(npos + npost) + 1, sizeof *args);
        if (!args) abort();
        int na = 0;
        for (size_t i = 1; i < npos; i++) args[na++] = pos[i];
        for (int i = 0; i < npost; i++) args[na++] = post[i];
        int bad =
            script_command(&spec, strcmp(pos[0], "-") ? pos[0] : "gsched-script", buf, args, na);
        free(args);
        if (bad) goto done;
        if (!o.name && !spec.name) spec.name = xstrdup(base_name(pos[0]));
    } else if (!npos) {
        if (o.wrap && npost) {
            cli_err("submit: --wrap and a command after -- are two commands; give one");
            goto done;
        }
        if (o.wrap) {
            spec.shell = xstrdup(o.wrap);
            if (!spec.name) spec.name = xstrdup("wrap"); /* sbatch's name; -J overrides */
        } else if (npost) {
            spec.argc = npost;
            spec.argv = calloc((size_t)spec.argc + 1, sizeof *spec.argv);
            if (!spec.argv) abort();
            for (int i = 0; i < spec.argc; i++) spec.argv[i] = xstrdup(post[i]);
        } else {
            cli_err("submit needs a job spec FILE, a batch SCRIPT, or -- CMD [ARG...]");
            submit_usage(stderr);
            goto done;
        }
    } else if (o.wrap) {
        cli_err("submit: --wrap and %s are two commands; give one", pos[0]);
        goto done;
    }
    if (apply(&spec, &o)) goto done;
    if (o.run && (o.dry || o.output || o.error)) {
        cli_err("run: %s cannot be given (the output comes here)", o.dry ? "--dry-run" : "-o/-e");
        goto done;
    }
    spec.interactive = o.run;
    if (redirect_output(&spec, &o)) goto done;
    if (!spec.workdir) {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd)) spec.workdir = xstrdup(cwd);
    }
    gs_diag d;
    gs_diag_init(&d, NULL);
    const char *field = "";
    if (gsd_spec_validate(&spec, &d, &field)) {
        cli_err("invalid job: %s", d.msg);
        goto done;
    }
    char key[64];
    if (!o.idem && !o.dry) {
        /* a fresh key per invocation: retries of this submit (below, or by the user with
         * --idempotency-key after a failure) never make a second job */
        if (new_idem_key(key, sizeof key)) {
            cli_err("submit: cannot read random bytes for an Idempotency-Key: %s", strerror(errno));
            rc = EXIT_RUNTIME;
            goto done;
        }
        o.idem = key;
    }
    {
        int printed = 0;
        rc = send_one(kp, &spec, &o, &printed);
        if (run_id) *run_id = o.run_id;
        if (!rc && o.parsable && !o.dry && !kp->json) printf("\n");
        if (!rc && o.dry && spec.array && !kp->json) {
            gs_array a;
            if (!gs_array_parse(spec.array, &a, NULL))
                printf("(each of the %zu array elements is the same job)\n", a.n);
            gs_array_release(&a);
        }
    }
done:
    gsd_spec_release(&spec);
    free(buf);
    free(pairs);
    free(pos);
    over_release(&o);
    return rc;
}
