/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_submit.c - `gsched submit FILE | -- CMD...`: validate a job spec
 * locally (file:line:col errors, exit 2, no daemon needed), then send its
 * canonical JSON to the daemon.
 *
 * Flags override the file's fields (like sbatch options over #SBATCH
 * lines).  Without a workdir the job runs in the directory it was submitted
 * from.  --parsable prints only the job id; --dry-run asks whether and where
 * the job would start now, changing nothing.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "config.h"
#include "daemon.h"

/* Unit of a bare number in --time (--duration and --grace: seconds).  Slurm's --time means
 * minutes; switching to that is this one definition. */
#define TIME_BARE_UNIT GS_SEC

static void submit_usage(FILE *f)
{
    fprintf(f, "usage: gsched submit [options] FILE        (YAML or JSON job spec; - = stdin)\n"
               "       gsched submit [options] -- CMD [ARG...]\n"
               "\n"
               "  -n, --name NAME         job name\n"
               "  -g, --gpus N            GPUs per task (default 1)\n"
               "  -t, --tasks N[xG]       tasks (default 1); NxG also sets GPUs per task\n"
               "  -q, --vc VC             virtual cluster / queue (default: default)\n"
               "  -p, --priority P        integer, or prod (100), test (10), oppo (-1)\n"
               "      --gpu-type TYPE     GPU model (default: any)\n"
               "      --no-gang           start tasks one by one as GPUs free up\n"
               "      --time LIMIT        time limit (90s, 30m, 2h, HH:MM:SS)\n"
               "      --duration DUR      expected run time (duration-aware policies)\n"
               "      --grace DUR         SIGTERM -> SIGKILL grace period for checkpoints\n"
               "      --checkpoint-dir D  exported to the job as GSCHED_CHECKPOINT_DIR\n"
               "  -C, --workdir DIR       working directory (default: the current one)\n"
               "  -e, --env KEY=VALUE     environment variable, repeatable\n"
               "      --cpus N, --mem SIZE  CPUs and memory per task\n"
               "      --user NAME         submit for another user (admin token only)\n"
               "      --dry-run           only say whether and where it would start now\n"
               "      --idempotency-key K retrying with the same key never submits twice\n"
               "      --parsable          print only the job id\n" CLI_CONN_HELP);
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

enum {
    O_GPUTYPE = 1,
    O_NOGANG,
    O_TIME,
    O_DURATION,
    O_GRACE,
    O_CKPT,
    O_CPUS,
    O_MEM,
    O_USER,
    O_DRY,
    O_IDEM,
    O_PARSABLE
};

typedef struct over {
    const char *name, *vc, *gpu_type, *workdir, *ckpt, *user, *prio, *tasks, *mem;
    int gpus, cpus, nogang;
    gs_time time, duration, grace;
    int has_time, has_duration, has_grace;
    char **env;
    size_t nenv;
} over;

static int set_env(gsd_spec *s, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
        cli_err("--env: expected KEY=VALUE, got '%s'", kv);
        return -1;
    }
    char *key = strndup(kv, (size_t)(eq - kv));
    if (!key) abort();
    for (size_t i = 0; i < s->nenv; i++)
        if (!strcmp(s->env[i].key, key)) {
            free(s->env[i].val);
            s->env[i].val = xstrdup(eq + 1);
            free(key);
            return 0;
        }
    gsd_kv *nv = realloc(s->env, (s->nenv + 1) * sizeof *nv);
    if (!nv) abort();
    s->env = nv;
    s->env[s->nenv].key = key;
    s->env[s->nenv].val = xstrdup(eq + 1);
    s->nenv++;
    return 0;
}

static void replace(char **dst, const char *v)
{
    free(*dst);
    *dst = xstrdup(v);
}

static int apply(gsd_spec *s, const over *o)
{
    if (o->name) replace(&s->name, o->name);
    if (o->vc) replace(&s->vc, o->vc);
    if (o->gpu_type) replace(&s->gpu_type, o->gpu_type);
    if (o->ckpt) replace(&s->checkpoint_dir, o->ckpt);
    if (o->user) replace(&s->user, o->user);
    if (o->workdir) {
        if (o->workdir[0] == '/') {
            replace(&s->workdir, o->workdir);
        } else {
            char *abs = realpath(o->workdir, NULL);
            if (!abs) {
                cli_err("--workdir: '%s': %s", o->workdir, strerror(errno));
                return -1;
            }
            free(s->workdir);
            s->workdir = abs;
        }
    }
    gs_diag d;
    gs_diag_init(&d, NULL);
    if (o->prio && gs_parse_priority(o->prio, GSD_PRIO_MAX, &s->priority, &d)) {
        cli_err("--priority: %s", d.msg);
        return -1;
    }
    if (o->tasks) {
        char *e;
        long a = strtol(o->tasks, &e, 10);
        if (e == o->tasks || a < 1 || a > GSD_MAX_GPUS || (*e && *e != 'x' && *e != 'X')) {
            cli_err("--tasks: expected N or NxG, got '%s'", o->tasks);
            return -1;
        }
        s->ntasks = (int)a;
        if (*e) {
            char *e2;
            long b = strtol(e + 1, &e2, 10);
            if (*e2 || e2 == e + 1 || b < 1 || b > GSD_MAX_GPUS) {
                cli_err("--tasks: expected N or NxG, got '%s'", o->tasks);
                return -1;
            }
            s->gpus_per_task = (int)b;
        }
    }
    if (o->gpus) s->gpus_per_task = o->gpus;
    if (o->nogang) s->gang = 0;
    if (o->has_time) s->time_limit = o->time;
    if (o->has_duration) s->duration = o->duration;
    if (o->has_grace) s->grace = o->grace;
    if (o->cpus) s->cpus_per_task = o->cpus;
    if (o->mem) {
        int64_t mb = gs_parse_mem_mb(o->mem);
        if (mb < 0 || mb > (1LL << 30)) {
            cli_err("--mem: '%s' is not a size (512M, 32G, 32Gi)", o->mem);
            return -1;
        }
        s->mem_mb_per_task = (int)mb;
    }
    for (size_t i = 0; i < o->nenv; i++)
        if (set_env(s, o->env[i])) return -1;
    return 0;
}

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

int cmd_submit(int argc, char **argv)
{
    static const struct option longopts[] = {{"name", required_argument, NULL, 'n'},
                                             {"gpus", required_argument, NULL, 'g'},
                                             {"tasks", required_argument, NULL, 't'},
                                             {"vc", required_argument, NULL, 'q'},
                                             {"queue", required_argument, NULL, 'q'},
                                             {"priority", required_argument, NULL, 'p'},
                                             {"gpu-type", required_argument, NULL, O_GPUTYPE},
                                             {"no-gang", no_argument, NULL, O_NOGANG},
                                             {"time", required_argument, NULL, O_TIME},
                                             {"duration", required_argument, NULL, O_DURATION},
                                             {"grace", required_argument, NULL, O_GRACE},
                                             {"checkpoint-dir", required_argument, NULL, O_CKPT},
                                             {"workdir", required_argument, NULL, 'C'},
                                             {"env", required_argument, NULL, 'e'},
                                             {"cpus", required_argument, NULL, O_CPUS},
                                             {"mem", required_argument, NULL, O_MEM},
                                             {"user", required_argument, NULL, O_USER},
                                             {"dry-run", no_argument, NULL, O_DRY},
                                             {"idempotency-key", required_argument, NULL, O_IDEM},
                                             {"parsable", no_argument, NULL, O_PARSABLE},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_CONN_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    cli_conn k;
    cli_conn_init(&k);
    over o;
    memset(&o, 0, sizeof o);
    int dry = 0, parsable = 0, opt, rc = EXIT_USAGE;
    const char *idem = NULL;
    gsd_spec spec;
    gsd_spec_init(&spec);
    char *buf = NULL, *json = NULL;
    optind = 1;
    /* options may follow FILE; everything after "--" is the command */
    while ((opt = getopt_long(argc, argv, "n:g:t:q:p:C:e:h", longopts, NULL)) != -1) {
        if (cli_conn_opt(&k, opt, optarg)) continue;
        switch (opt) {
        case 'n': o.name = optarg; break;
        case 'q': o.vc = optarg; break;
        case 'p': o.prio = optarg; break;
        case 't': o.tasks = optarg; break;
        case 'C': o.workdir = optarg; break;
        case O_GPUTYPE: o.gpu_type = optarg; break;
        case O_NOGANG: o.nogang = 1; break;
        case O_CKPT: o.ckpt = optarg; break;
        case O_USER: o.user = optarg; break;
        case O_MEM: o.mem = optarg; break;
        case O_DRY: dry = 1; break;
        case O_IDEM: idem = optarg; break;
        case O_PARSABLE: parsable = 1; break;
        case 'e': {
            char **ne = realloc(o.env, (o.nenv + 1) * sizeof *ne);
            if (!ne) abort();
            o.env = ne;
            o.env[o.nenv++] = optarg;
            break;
        }
        case 'g':
        case O_CPUS: {
            char *e;
            long v = strtol(optarg, &e, 10);
            if (*e || e == optarg || v < (opt == 'g' ? 1 : 0) || v > (1 << 20)) {
                cli_err("--%s: '%s' is not a valid count", opt == 'g' ? "gpus" : "cpus", optarg);
                goto done;
            }
            if (opt == 'g')
                o.gpus = (int)v;
            else
                o.cpus = (int)v;
            break;
        }
        case O_TIME:
        case O_DURATION:
        case O_GRACE: {
            gs_time t;
            gs_diag d;
            gs_diag_init(&d, NULL);
            if (gsd_parse_duration(optarg, opt == O_TIME ? TIME_BARE_UNIT : GS_SEC, &t, &d)) {
                cli_err("--%s: '%s' is not a duration: %s (90s, 30m, 2h, 1h30m, HH:MM:SS, "
                        "D-HH:MM:SS)",
                        opt == O_TIME       ? "time"
                        : opt == O_DURATION ? "duration"
                                            : "grace",
                        optarg, d.msg);
                goto done;
            }
            if (opt == O_TIME) o.time = t, o.has_time = 1;
            if (opt == O_DURATION) o.duration = t, o.has_duration = 1;
            if (opt == O_GRACE) o.grace = t, o.has_grace = 1;
            break;
        }
        case 'h':
            submit_usage(stdout);
            rc = EXIT_OK;
            goto done;
        default: submit_usage(stderr); goto done;
        }
    }
    int dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");
    if (optind >= argc) {
        cli_err("submit needs a job spec FILE or -- CMD [ARG...]");
        submit_usage(stderr);
        goto done;
    }
    if (dashdash) {
        /* the command line form */
        spec.argc = argc - optind;
        spec.argv = calloc((size_t)spec.argc + 1, sizeof *spec.argv);
        if (!spec.argv) abort();
        for (int i = 0; i < spec.argc; i++) spec.argv[i] = xstrdup(argv[optind + i]);
    } else {
        if (optind + 1 < argc) {
            cli_err("submit: unexpected argument '%s' (put a command after --)", argv[optind + 1]);
            goto done;
        }
        const char *file = argv[optind];
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
            goto done;
        }
        const char *field;
        if (gsd_spec_parse(file, buf, len, &spec, &d, &field)) {
            cli_diag(&d);
            goto done;
        }
    }
    if (apply(&spec, &o)) goto done;
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
    json = gsd_spec_to_json(&spec);
    if (!json) abort();
    char idem_hdr[300];
    const char *hdrs[2] = {NULL, NULL};
    if (idem) {
        snprintf(idem_hdr, sizeof idem_hdr, "Idempotency-Key: %s", idem);
        hdrs[0] = idem_hdr;
    }
    json_t *r = NULL;
    rc = cli_call(&k, "POST", dry ? "/v1/jobs?dry_run=1" : "/v1/jobs", json, "application/json",
                  hdrs, dry ? "dry run" : "submit", &r);
    if (rc) goto done;
    if (k.json) {
        char *s = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("%s\n", s);
        free(s);
        if (dry) rc = json_is_true(json_object_get(r, "feasible")) ? EXIT_OK : EXIT_USAGE;
    } else if (dry) {
        rc = print_dryrun(r);
    } else if (parsable) {
        printf("%lld\n", cli_jint(r, "id", -1));
    } else {
        json_t *ids = json_object_get(r, "ids");
        size_t n = json_array_size(ids);
        if (n > 1)
            printf("Submitted job %lld (%zu tasks started independently as jobs %lld-%lld)\n",
                   cli_jint(r, "id", -1), n, (long long)json_integer_value(json_array_get(ids, 0)),
                   (long long)json_integer_value(json_array_get(ids, n - 1)));
        else
            printf("Submitted job %lld%s\n", cli_jint(r, "id", -1),
                   json_is_true(json_object_get(r, "idempotent_replay"))
                       ? " (already submitted with this idempotency key)"
                       : "");
    }
    json_decref(r);
done:
    gsd_spec_release(&spec);
    free(buf);
    free(json);
    free(o.env);
    return rc;
}
