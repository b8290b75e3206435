/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_daemon_spec.c - the live job spec: YAML and JSON parsing, named
 * priorities, durations, COUNTxGPUS, positioned errors naming the field,
 * limits, and the canonical JSON round trip restart recovery relies on;
 * elastic jobs' fields (issue 13): range, sizes, budgets, deadline, their
 * validation and their core spec; members of different sizes and nested
 * withinOneCell groups (issue 14): parsing, the core spec, the canonical
 * round trip, and bad inputs with their messages and positions; the
 * hived: block (HiveD's pod-scheduling spec, v1 and v2) kept verbatim,
 * checked as HiveD checks it and resolved against a HiveD cluster.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "config.h"
#include "spec.h"

static int parse(const char *text, gsd_spec *s, gs_diag *d, const char **field)
{
    gs_diag_init(d, "job.yaml");
    return gsd_spec_parse("job.yaml", text, strlen(text), s, d, field);
}

static void yaml_full(void)
{
    const char *y = "name: bert\n"
                    "vc: research\n"
                    "priority: prod\n"
                    "tasks: 2\n"
                    "gpus: 4\n"
                    "gpu_type: V100\n"
                    "command: python train.py --epochs 3\n"
                    "env: {NCCL_DEBUG: INFO, SEED: \"7\"}\n"
                    "workdir: /tmp\n"
                    "time_limit: 2h\n"
                    "duration: 30m\n"
                    "cpus: 8\n"
                    "memory: 32Gi\n"
                    "checkpoint: {dir: /ckpt/bert, grace_period: 90s}\n";
    gsd_spec s;
    gs_diag d;
    const char *f;
    ASSERT_OK(parse(y, &s, &d, &f));
    ASSERT_STR(s.name, "bert");
    ASSERT_STR(s.vc, "research");
    ASSERT_EQ(s.priority, GS_PRIO_PROD);
    ASSERT_EQ(s.ntasks, 2);
    ASSERT_EQ(s.gpus_per_task, 4);
    ASSERT_EQ(s.gang, 1);
    ASSERT_STR(s.gpu_type, "V100");
    ASSERT_STR(s.shell, "python train.py --epochs 3");
    ASSERT(s.argv == NULL);
    ASSERT_EQ(s.nenv, 2);
    ASSERT_STR(s.env[0].key, "NCCL_DEBUG");
    ASSERT_STR(s.env[1].val, "7");
    ASSERT_STR(s.workdir, "/tmp");
    ASSERT_EQ(s.time_limit, 2 * 3600 * GS_SEC);
    ASSERT_EQ(s.duration, 30 * 60 * GS_SEC);
    ASSERT_EQ(s.cpus_per_task, 8);
    ASSERT_EQ(s.mem_mb_per_task, 32 * 1024);
    ASSERT_STR(s.checkpoint_dir, "/ckpt/bert");
    ASSERT_EQ(s.grace, 90 * GS_SEC);
    gs_job_spec js;
    gsd_spec_job(&s, 3600 * GS_SEC, &js);
    ASSERT_EQ(js.duration, 30 * 60 * GS_SEC);
    ASSERT_EQ(js.ntasks, 2);
    ASSERT_STR(js.vc, "research");
    gsd_spec_release(&s);
}

static void json_and_list_command(void)
{
    const char *j = "{\"name\": \"x\", \"tasks\": \"3x2\", \"gang\": false, \"priority\": \"oppo\","
                    " \"command\": [\"sleep\", \"1\"]}";
    gsd_spec s;
    gs_diag d;
    const char *f;
    ASSERT_OK(parse(j, &s, &d, &f));
    ASSERT_EQ(s.ntasks, 3);
    ASSERT_EQ(s.gpus_per_task, 2);
    ASSERT_EQ(s.gang, 0);
    ASSERT_EQ(s.priority, -1);
    ASSERT_EQ(s.argc, 2);
    ASSERT_STR(s.argv[0], "sleep");
    ASSERT_STR(s.argv[1], "1");
    ASSERT(s.argv[2] == NULL);
    gsd_spec_release(&s);
}

static void defaults(void)
{
    gsd_spec s;
    gs_diag d;
    const char *f;
    ASSERT_OK(parse("command: true\n", &s, &d, &f));
    ASSERT_EQ(s.ntasks, 1);
    ASSERT_EQ(s.gpus_per_task, 1);
    ASSERT_EQ(s.priority, 0);
    ASSERT_EQ(s.gang, 1);
    ASSERT(s.vc == NULL && s.name == NULL && s.workdir == NULL);
    gs_job_spec js;
    gsd_spec_job(&s, 42 * GS_SEC, &js);
    ASSERT_EQ(js.duration, 42 * GS_SEC); /* default estimate */
    gsd_spec_release(&s);
}

/* Each bad spec: expected error, field, line, column and a message fragment. */
static void errors_name_field_and_position(void)
{
    static const struct {
        const char *text, *field;
        int line, col;
        const char *msg;
    } cases[] = {
        {"command: true\ntasks: 0\n", "tasks", 2, 8, "'tasks' must be between 1"},
        {"command: true\ntaks: 2\n", "", 2, 1, "did you mean 'tasks'"},
        {"command: true\npriority: urgent\n", "priority", 2, 11, "prod (100)"},
        {"command: true\ngpus: many\n", "gpus", 2, 7, "must be an integer"},
        {"command: true\ntime_limit: 3 days\n", "time_limit", 2, 13, "is not a duration"},
        {"command: true\nenv: {CUDA_VISIBLE_DEVICES: \"0\"}\n", "env", 2, 7, "set by the executor"},
        {"command: true\nenv: {1BAD: x}\n", "env", 2, 7, "not a valid variable name"},
        {"command: true\nworkdir: rel/path\n", "workdir", 2, 10, "absolute path"},
        {"command: true\nmemory: lots\n", "memory", 2, 9, "'memory' must be a size"},
        {"command: true\ncheckpoint: {dri: /x}\n", "checkpoint", 2, 14, "did you mean 'dir'"},
        {"command: []\n", "command", 1, 1, "list is empty"},
        {"command: {a: b}\n", "command", 1, 11, "string or a list"},
        {"name: x\n", "command", 0, 0, "missing field 'command'"},
        {"- a\n- b\n", "", 1, 3, "must be a mapping"},
        {"command: true\ntasks: 3x0\n", "tasks", 2, 8, "between 1 and"},
        {"command: true\ngpus: 2\ntasks: 2x2\n", "gpus", 2, 7, "already given"},
        {"command: true\ngpus: 5000\n", "gpus", 2, 7, "between 1 and 4096"},
        {"command: true\ntasks: 100\ngpus: 100\n", "tasks", 0, 0, "more than the limit"},
        {"command: [sleep, 1\n", "", 2, 1, "invalid YAML"}, /* end of input: line 2, col 1 */
        /* truncated input: the position is libfyaml's end-of-input guess, not checked */
        {"{\"command\": [\"sleep\", ", "", -1, -1, "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gsd_spec s;
        gs_diag d;
        const char *f = "?";
        int rc = parse(cases[i].text, &s, &d, &f);
        if (rc == 0) T_FAIL("case %zu parsed: %s", i, cases[i].text);
        if (strcmp(f, cases[i].field))
            T_FAIL("case %zu: field '%s', want '%s'", i, f, cases[i].field);
        if (cases[i].line >= 0 && (d.line != cases[i].line || d.col != cases[i].col))
            T_FAIL("case %zu: at %d:%d, want %d:%d (%s)", i, d.line, d.col, cases[i].line,
                   cases[i].col, d.msg);
        if (!strstr(d.msg, cases[i].msg))
            T_FAIL("case %zu: message '%s' lacks '%s'", i, d.msg, cases[i].msg);
        char buf[1024];
        gs_diag_format(&d, buf, sizeof buf);
        ASSERT_CONTAINS(buf, "job.yaml");
    }
}

static void limits_and_control_chars(void)
{
    gsd_spec s;
    gs_diag d;
    const char *f;
    char *big = malloc(GSD_MAX_CMD_BYTES + 64);
    ASSERT(big);
    strcpy(big, "command: \"");
    size_t n = strlen(big);
    memset(big + n, 'x', GSD_MAX_CMD_BYTES + 1);
    strcpy(big + n + GSD_MAX_CMD_BYTES + 1, "\"\n");
    int rc = parse(big, &s, &d, &f);
    free(big);
    ASSERT_NE(rc, 0);
    ASSERT_STR(f, "command");
    ASSERT_NE(parse("command: true\nname: \"a\\u0007b\"\n", &s, &d, &f), 0);
    ASSERT_STR(f, "name");
    ASSERT_CONTAINS(d.msg, "control character (U+0007)");
    const char nul[] = "command: true\0\n";
    gs_diag_init(&d, "x");
    ASSERT_NE(gsd_spec_parse("x", nul, sizeof nul - 1, &s, &d, &f), 0);
    ASSERT_CONTAINS(d.msg, "NUL");
}

/* Issue 11: a NUL inside a scalar (JSON "\u0000", YAML "\0") would silently truncate the C
 * string; C1 controls and bidi overrides would print differently from what runs. Each is an
 * error naming the field. */
static void nul_bidi_c1_name_the_field(void)
{
    static const struct {
        const char *text, *field, *msg;
    } cases[] = {
        {"{\"command\":\"true\",\"name\":\"a\\u0000b\"}", "name", "NUL"},
        {"{\"command\":[\"echo\",\"a\\u0000b\"]}", "command", "NUL"},
        {"{\"command\":\"true\",\"env\":{\"A\":\"x\\u0000y\"}}", "env", "NUL"},
        {"command: \"true\"\nvc: \"a\\0b\"\n", "vc", "NUL"},
        {"command: \"true\"\ncheckpoint: {dir: \"/a\\0b\"}\n", "checkpoint", "NUL"},
        {"{\"command\":\"true\",\"name\":\"a\\u202eb\"}", "name", "U+202E"},
        {"{\"command\":\"true\",\"name\":\"a\\u202ab\"}", "name", "U+202A"},
        {"{\"command\":\"true\",\"user\":\"a\\u2069b\"}", "user", "U+2069"},
        {"{\"command\":\"true\",\"name\":\"a\\u200fb\"}", "name", "U+200F"},
        {"{\"command\":\"true\",\"name\":\"a\\u0085b\"}", "name", "U+0085"},
        {"{\"command\":\"true\",\"name\":\"a\\u009bb\"}", "name", "U+009B"},
        {"{\"command\":\"true\",\"name\":\"a\\u007fb\"}", "name", "U+007F"},
        {"{\"command\":\"echo \\u2066x\"}", "command", "bidirectional"},
        {"{\"command\":[\"echo\",\"\\u001b[2J\"]}", "command", "argument 1"},
        {"{\"command\":\"true\",\"env\":{\"A\":\"\\u202d\"}}", "env", "value of A"},
        {"{\"command\":\"true\",\"gpu_type\":\"V\\u0080\"}", "gpu_type", "U+0080"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gsd_spec s;
        gs_diag d;
        const char *f = "?";
        if (!parse(cases[i].text, &s, &d, &f)) T_FAIL("case %zu parsed: %s", i, cases[i].text);
        if (strcmp(f, cases[i].field))
            T_FAIL("case %zu: field '%s', want '%s' (%s)", i, f, cases[i].field, d.msg);
        if (!strstr(d.msg, cases[i].msg))
            T_FAIL("case %zu: message '%s' lacks '%s'", i, d.msg, cases[i].msg);
    }
    /* allowed: tabs and newlines in commands and env values, non-control Unicode anywhere */
    gsd_spec s;
    gs_diag d;
    const char *f;
    ASSERT_EQ(parse("{\"command\":\"printf 'a\\tb'\\necho c\",\"name\":\"caf\\u00e9 \\u2014 "
                    "\\u65e5\",\"env\":{\"A\":\"1\\n2\"}}",
                    &s, &d, &f),
              0);
    ASSERT_CONTAINS(s.name, "caf");
    gsd_spec_release(&s);
    ASSERT_NE(parse("{\"command\":\"true\",\"name\":\"a\\tb\"}", &s, &d, &f), 0);
    ASSERT_STR(f, "name");
}

/* Numbers and booleans given as strings are type errors, in JSON and in quoted YAML; YAML's
 * plain (unquoted) scalars keep parsing as numbers. */
static void strict_types(void)
{
    static const struct {
        const char *text, *field;
    } bad[] = {
        {"{\"command\":\"true\",\"gpus\":\"2\"}", "gpus"},
        {"{\"command\":\"true\",\"gpus_per_task\":\"2\"}", "gpus_per_task"},
        {"{\"command\":\"true\",\"tasks\":\"2\"}", "tasks"},
        {"{\"command\":\"true\",\"cpus\":\"2\"}", "cpus"},
        {"{\"command\":\"true\",\"priority\":\"5\"}", "priority"},
        {"{\"command\":\"true\",\"priority\":\"-1\"}", "priority"},
        {"{\"command\":\"true\",\"gang\":\"false\"}", "gang"},
        {"{\"command\":\"true\",\"lazy_preemption\":\"true\"}", "lazy_preemption"},
        {"command: \"true\"\ngpus: \"2\"\n", "gpus"},
        {"command: \"true\"\ncpus: '2'\n", "cpus"},
        {"command: \"true\"\ngang: 'no'\n", "gang"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gsd_spec s;
        gs_diag d;
        const char *f = "?";
        if (!parse(bad[i].text, &s, &d, &f)) T_FAIL("case %zu parsed: %s", i, bad[i].text);
        if (strcmp(f, bad[i].field))
            T_FAIL("case %zu: field '%s', want '%s' (%s)", i, f, bad[i].field, d.msg);
        if (!strstr(d.msg, "string")) T_FAIL("case %zu: message '%s'", i, d.msg);
    }
    static const char *const good[] = {
        "{\"command\":\"true\",\"gpus\":2,\"cpus\":2,\"priority\":5,\"gang\":false}",
        "{\"command\":\"true\",\"tasks\":\"2x2\",\"priority\":\"prod\"}",
        "command: \"true\"\ngpus: 2\ncpus: 2\ngang: no\npriority: 5\ntasks: 2\n",
        "command: \"true\"\ntasks: \"2x2\"\npriority: \"oppo\"\nmemory: \"32G\"\n",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        gsd_spec s;
        gs_diag d;
        const char *f;
        if (parse(good[i], &s, &d, &f)) T_FAIL("good case %zu: %s", i, d.msg);
        gsd_spec_release(&s);
    }
}

static void durations_and_priorities(void)
{
    gs_time t;
    ASSERT_OK(gsd_parse_duration("90", GS_SEC, &t, NULL));
    ASSERT_EQ(t, 90 * GS_SEC);
    ASSERT_OK(gsd_parse_duration("1h30m", GS_SEC, &t, NULL));
    ASSERT_EQ(t, 5400 * GS_SEC);
    ASSERT_OK(gsd_parse_duration("500ms", GS_SEC, &t, NULL));
    ASSERT_EQ(t, 500 * GS_MSEC);
    ASSERT_OK(gsd_parse_duration("01:02:03", GS_SEC, &t, NULL));
    ASSERT_EQ(t, 3723 * GS_SEC);
    ASSERT_OK(gsd_parse_duration("2-00:00:01", GS_SEC, &t, NULL));
    ASSERT_EQ(t, (2 * 86400 + 1) * GS_SEC);
    ASSERT_OK(gsd_parse_duration("05:30", GS_SEC, &t, NULL));
    ASSERT_EQ(t, 330 * GS_SEC);
    ASSERT_NE(gsd_parse_duration("", GS_SEC, &t, NULL), 0);
    ASSERT_NE(gsd_parse_duration("10x", GS_SEC, &t, NULL), 0);
    ASSERT_NE(gsd_parse_duration("1:99:00", GS_SEC, &t, NULL), 0);
    ASSERT_NE(gsd_parse_duration("-5", GS_SEC, &t, NULL), 0);
    ASSERT_NE(gsd_parse_duration("1:2:3:4", GS_SEC, &t, NULL), 0);
    /* fuzzing: huge Slurm fields and long sums must be range errors, not overflows (UBSan) */
    ASSERT_EQ(gsd_parse_duration("310:5555555555557555555:555555", GS_SEC, &t, NULL), GS_ERANGE);
    ASSERT_EQ(gsd_parse_duration("99999999999-00:00:00", GS_SEC, &t, NULL), GS_ERANGE);
    ASSERT_EQ(gsd_parse_duration("9223372036854775807:00", GS_SEC, &t, NULL), GS_ERANGE);
    char many[4096] = "";
    for (int i = 0; i < 300; i++) strcat(many, "3000000000s");
    ASSERT_EQ(gsd_parse_duration(many, GS_SEC, &t, NULL), GS_ERANGE);
    int p;
    ASSERT_OK(gs_parse_priority("TEST", GSD_PRIO_MAX, &p, NULL));
    ASSERT_EQ(p, 10);
    ASSERT_OK(gs_parse_priority("opportunistic", GSD_PRIO_MAX, &p, NULL));
    ASSERT_EQ(p, -1);
    ASSERT_OK(gs_parse_priority("250", GSD_PRIO_MAX, &p, NULL));
    ASSERT_EQ(p, 250);
    ASSERT_NE(gs_parse_priority("-2", GSD_PRIO_MAX, &p, NULL), 0);
    ASSERT_NE(gs_parse_priority("1e3", GSD_PRIO_MAX, &p, NULL), 0);
    ASSERT_STR(gs_priority_name(100), "prod");
    ASSERT(gs_priority_name(5) == NULL);
    char b[32];
    gsd_format_duration(3723 * GS_SEC, b, sizeof b);
    ASSERT_STR(b, "1h02m");
    gsd_format_duration(45 * GS_SEC, b, sizeof b);
    ASSERT_STR(b, "45s");
}

static void json_round_trip(void)
{
    const char *y = "name: \"quote \\\" and \\\\ back\"\n"
                    "vc: a\npriority: test\ntasks: 4x2\ngang: false\n"
                    "command: [python, \"-c\", \"print('hi there')\"]\n"
                    "env: {A: \"1\", B: \"two words\"}\nworkdir: /w\ntime_limit: 1m\n"
                    "duration: 1500ms\ncheckpoint: {grace_period: 5s}\nuser: alice\n"
                    "pinned_cell: c1\nlazy_preemption: true\nmemory: 512M\ncpus: 2\n"
                    "run_as: \"#1000\"\nexternal: \"slurm:57\"\n";
    gsd_spec a, b;
    gs_diag d;
    const char *f;
    ASSERT_OK(parse(y, &a, &d, &f));
    char *j1 = gsd_spec_to_json(&a);
    ASSERT(j1);
    gs_diag_init(&d, "json");
    if (gsd_spec_parse("json", j1, strlen(j1), &b, &d, &f)) T_FAIL("re-parse: %s in %s", d.msg, j1);
    char *j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j1, j2);
    ASSERT_STR(b.name, "quote \" and \\ back");
    ASSERT_EQ(b.ntasks, 4);
    ASSERT_EQ(b.gpus_per_task, 2);
    ASSERT_EQ(b.gang, 0);
    ASSERT_EQ(b.duration, 1500 * GS_MSEC);
    ASSERT_EQ(b.grace, 5 * GS_SEC);
    ASSERT_EQ(b.argc, 3);
    ASSERT_STR(b.argv[2], "print('hi there')");
    ASSERT_EQ(b.lazy_preemption, 1);
    ASSERT_EQ(b.mem_mb_per_task, 512);
    ASSERT_STR(b.run_as, "#1000");
    ASSERT_STR(b.external, "slurm:57"); /* stored rows of adopted jobs (the daemon sets it) */
    ASSERT_CONTAINS(j1, "\"external\":\"slurm:57\"");
    free(j1);
    free(j2);
    gsd_spec_release(&a);
    gsd_spec_release(&b);
}

/* issue 14: `members` of different sizes, nested `groups` with `within`. */
static void members_and_groups(void)
{
    gsd_spec s, b;
    gs_diag d;
    const char *f;
    /* members 1x2 + 1x1: tasks of different sizes, gpus_per_task the largest */
    ASSERT_OK(parse("command: true\nmembers: [{tasks: 1, gpus_per_task: 2}, {tasks: 1, "
                    "gpus_per_task: 1}]\n",
                    &s, &d, &f));
    ASSERT_EQ(s.ntasks, 2);
    ASSERT_EQ(s.gpus_per_task, 2);
    ASSERT(s.task_gpus != NULL);
    ASSERT_EQ(s.task_gpus[0], 2);
    ASSERT_EQ(s.task_gpus[1], 1);
    ASSERT_EQ(s.ngroups, 0);
    ASSERT_EQ(gsd_spec_total_gpus(&s), 3);
    char txt[64];
    gsd_spec_gpus_text(&s, txt, sizeof txt);
    ASSERT_STR(txt, "2+1");
    gs_job_spec js;
    gsd_spec_job(&s, GS_SEC, &js);
    ASSERT(js.task_gpus == s.task_gpus);
    ASSERT_EQ(js.ntasks, 2);
    ASSERT_EQ(js.hived_strict, 0);
    char *j = gsd_spec_to_json(&s);
    ASSERT_CONTAINS(j, "\"members\":[{\"tasks\":1,\"gpus_per_task\":2},{\"tasks\":1,"
                       "\"gpus_per_task\":1}]");
    ASSERT(!strstr(j, "\"tasks\":2"));
    free(j);
    gsd_spec_release(&s);

    /* equal members are a plain job (any policy runs it) */
    ASSERT_OK(
        parse("command: true\nmembers: [{tasks: 2, gpus: 4}, {tasks: 1, gpus: 4}]\n", &s, &d, &f));
    ASSERT_EQ(s.ntasks, 3);
    ASSERT_EQ(s.gpus_per_task, 4);
    ASSERT(s.task_gpus == NULL);
    ASSERT(!gsd_spec_grouped(&s));
    gsd_spec_release(&s);

    /* nested groups, pre-order, with top-level members first; JSON gives the same */
    const char *y = "command: true\n"
                    "members: [{tasks: 1, gpus_per_task: 8}]\n"
                    "groups:\n"
                    "  - within: V100-RACK\n"
                    "    groups:\n"
                    "      - {within: V100-NODE, members: [{tasks: 2, gpus_per_task: 4}]}\n"
                    "      - members: [{tasks: 1, gpus_per_task: 2}, {tasks: 2, gpus_per_task: "
                    "1}]\n"
                    "  - {within: K80-NODE, members: [{tasks: 1, gpus_per_task: 1}]}\n";
    ASSERT_OK(parse(y, &s, &d, &f));
    ASSERT_EQ(s.ntasks, 7);
    ASSERT_EQ(s.gpus_per_task, 8);
    static const int32_t want[] = {8, 4, 4, 2, 1, 1, 1};
    for (int t = 0; t < 7; t++) ASSERT_EQ(s.task_gpus[t], want[t]);
    ASSERT_EQ(s.ngroups, 4);
    ASSERT_EQ(s.groups[0].lo, 1);
    ASSERT_EQ(s.groups[0].hi, 6);
    ASSERT_EQ(s.groups[0].parent, -1);
    ASSERT_STR(s.groups[0].within, "V100-RACK");
    ASSERT_EQ(s.groups[1].lo, 1);
    ASSERT_EQ(s.groups[1].hi, 3);
    ASSERT_EQ(s.groups[1].parent, 0);
    ASSERT_STR(s.groups[1].within, "V100-NODE");
    ASSERT_EQ(s.groups[2].lo, 3);
    ASSERT_EQ(s.groups[2].hi, 6);
    ASSERT_EQ(s.groups[2].parent, 0);
    ASSERT(s.groups[2].within == NULL);
    ASSERT_EQ(s.groups[3].lo, 6);
    ASSERT_EQ(s.groups[3].hi, 7);
    ASSERT_EQ(s.groups[3].parent, -1);
    gsd_spec_gpus_text(&s, txt, sizeof txt);
    ASSERT_STR(txt, "8+2x4+2+3x1");
    gsd_spec_job(&s, GS_SEC, &js);
    ASSERT(js.groups == s.groups);
    ASSERT_EQ(js.ngroups, 4);
    j = gsd_spec_to_json(&s);
    gs_diag_init(&d, "json");
    if (gsd_spec_parse("json", j, strlen(j), &b, &d, &f)) T_FAIL("re-parse: %s in %s", d.msg, j);
    char *j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j, j2);
    ASSERT_EQ(b.ngroups, 4);
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(b.groups[i].lo, s.groups[i].lo);
        ASSERT_EQ(b.groups[i].hi, s.groups[i].hi);
        ASSERT_EQ(b.groups[i].parent, s.groups[i].parent);
    }
    free(j);
    free(j2);
    gsd_spec_release(&b);
    gsd_spec_release(&s);

    /* a group of equal tasks: grouped without task_gpus */
    ASSERT_OK(parse("{\"command\": \"true\", \"groups\": [{\"within\": \"V100-NODE\", "
                    "\"members\": [{\"tasks\": 4, \"gpus_per_task\": 1}]}]}",
                    &s, &d, &f));
    ASSERT(s.task_gpus == NULL);
    ASSERT(gsd_spec_grouped(&s));
    ASSERT_EQ(s.ntasks, 4);
    j = gsd_spec_to_json(&s);
    ASSERT_CONTAINS(j, "\"groups\":[{\"within\":\"V100-NODE\",\"members\":[{\"tasks\":4,"
                       "\"gpus_per_task\":1}]}]");
    free(j);
    gsd_spec_release(&s);

    /* 'within' alone: tasks x gpus in one group; with groups: they nest in it */
    ASSERT_OK(parse("command: true\ntasks: 2x4\nwithin: V100-NODE\n", &s, &d, &f));
    ASSERT(s.task_gpus == NULL);
    ASSERT_EQ(s.ngroups, 1);
    ASSERT_EQ(s.groups[0].lo, 0);
    ASSERT_EQ(s.groups[0].hi, 2);
    ASSERT_STR(s.groups[0].within, "V100-NODE");
    gsd_spec_release(&s);
    ASSERT_OK(parse("command: true\nwithin: V100-RACK\nmembers: [{tasks: 1, gpus: 2}]\n"
                    "groups: [{within: V100-NODE, members: [{tasks: 2, gpus: 1}]}]\n",
                    &s, &d, &f));
    ASSERT_EQ(s.ngroups, 2);
    ASSERT_EQ(s.groups[0].lo, 0);
    ASSERT_EQ(s.groups[0].hi, 3);
    ASSERT_EQ(s.groups[0].parent, -1);
    ASSERT_STR(s.groups[0].within, "V100-RACK");
    ASSERT_EQ(s.groups[1].lo, 1);
    ASSERT_EQ(s.groups[1].parent, 0);
    j = gsd_spec_to_json(&s);
    ASSERT_CONTAINS(j, "\"groups\":[{\"within\":\"V100-RACK\",\"members\":[{\"tasks\":1,"
                       "\"gpus_per_task\":2}],\"groups\":[{\"within\":\"V100-NODE\"");
    ASSERT_OK(gsd_spec_parse("json", j, strlen(j), &b, &d, &f));
    j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j, j2);
    free(j);
    free(j2);
    gsd_spec_release(&b);
    gsd_spec_release(&s);

    static const struct {
        const char *text, *field;
        int line, col;
        const char *msg;
    } bad[] = {
        {"command: true\nwithin: [a]\n", "within", 2, 10, "must be a string"},
        {"command: true\ngang: false\ntasks: 2\nwithin: X\n", "gang", 0, 0, "is a gang"},
        {"command: true\ntasks: 2\nmembers: [{tasks: 1, gpus: 1}]\n", "tasks", 2, 8,
         "give either 'tasks' or 'members'"},
        {"command: true\nmembers: []\n", "members", 2, 1, "non-empty list"},
        {"command: true\nmembers: [{tasks: 1}]\n", "members", 2, 12, "needs 'gpus_per_task'"},
        {"command: true\nmembers: [{tasks: 1, gpus_per_task: 0}]\n", "members", 2, 37,
         "between 1 and 4096"},
        {"command: true\nmembers: [{tasks: 1, gpu: 2}]\n", "members", 2, 22, "did you mean"},
        {"command: true\nmembers: [{tasks: 1, gpus: \"2\"}]\n", "members", 2, 29, "not a string"},
        {"command: true\nmembers: [{tasks: 4000, gpus: 1}, {tasks: 100, gpus: 2}]\n", "members", 2,
         43, "more than 4096 tasks"},
        {"command: true\nmembers: [{tasks: 2048, gpus: 2}, {tasks: 1, gpus: 1}]\n", "members", 0, 0,
         "more than the limit of 4096"},
        {"command: true\ngroups: [{within: X}]\n", "groups", 2, 11, "needs 'members' or"},
        {"command: true\ngroups: [{within: \"\", members: [{gpus: 1}]}]\n", "groups", 2, 20,
         "cell type name"},
        {"command: true\ngroups: [{withinOneCell: X, members: [{gpus: 1}]}]\n", "groups", 2, 11,
         "unknown field"},
        {"command: true\ngroups: {within: X}\n", "groups", 2, 10, "non-empty list"},
        {"command: true\ngang: false\nmembers: [{gpus: 2}, {gpus: 1}]\n", "gang", 0, 0,
         "is a gang"},
        {"command: true\nmax_gpus: 8\nmembers: [{gpus: 2}, {gpus: 1}]\n", "max_gpus", 0, 0,
         "not elastic"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *ff = "?";
        int rc = parse(bad[i].text, &s, &d, &ff);
        if (rc == 0) T_FAIL("bad case %zu parsed: %s", i, bad[i].text);
        if (strcmp(ff, bad[i].field))
            T_FAIL("bad case %zu: field '%s', want '%s' (%s)", i, ff, bad[i].field, d.msg);
        if (d.line != bad[i].line || d.col != bad[i].col)
            T_FAIL("bad case %zu: at %d:%d, want %d:%d (%s)", i, d.line, d.col, bad[i].line,
                   bad[i].col, d.msg);
        if (!strstr(d.msg, bad[i].msg))
            T_FAIL("bad case %zu: message '%s' lacks '%s'", i, d.msg, bad[i].msg);
    }

    /* specs built by hand (the CLI) are validated to the same shape */
    gsd_spec_init(&s);
    s.shell = strdup("true");
    int32_t tg[3] = {2, 1, 1};
    gs_task_group gr[2] = {{0, 3, -1, NULL, -1}, {0, 2, 0, NULL, -1}};
    s.task_gpus = tg;
    s.ntasks = 3;
    s.gpus_per_task = 2;
    ASSERT_OK(gsd_spec_validate(&s, &d, &f));
    s.gpus_per_task = 1;
    ASSERT_EQ(gsd_spec_validate(&s, &d, &f), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "the largest");
    s.gpus_per_task = 2;
    s.groups = gr;
    s.ngroups = 2;
    ASSERT_EQ(gsd_spec_validate(&s, &d, &f), GS_EINVAL); /* the child ends before its parent */
    ASSERT_CONTAINS(d.msg, "last child group must end with it");
    gr[1].hi = 3;
    ASSERT_OK(gsd_spec_validate(&s, &d, &f));
    gr[1].parent = 1;
    ASSERT_EQ(gsd_spec_validate(&s, &d, &f), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "parent must come before it");
    s.task_gpus = NULL;
    s.groups = NULL;
    s.ngroups = 0;
    gsd_spec_release(&s);
}

static const char rack_cfg[] =
    "physicalCluster:\n"
    "  skuTypes: {V100: {gpu: 1, cpu: 2, memory: 4096Mi}}\n"
    "  cellTypes:\n"
    "    V100-NODE: {childCellType: V100, childCellNumber: 4, isNodeLevel: true}\n"
    "    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}\n"
    "  physicalCells:\n"
    "  - {cellType: V100-RACK, cellChildren: [{cellAddress: n0}, {cellAddress: n1}]}\n"
    "virtualClusters:\n"
    "  vc1: {virtualCells: [{cellType: V100-RACK, cellNumber: 1}]}\n";

/* issue 14: `hived:` carries HiveD's pod-scheduling spec verbatim. */
static void hived_block(void)
{
    gsd_spec s, b;
    gs_diag d;
    const char *f;
    gs_cluster *c = NULL;
    gs_diag_init(&d, "rack.yaml");
    ASSERT_OK(gs_cluster_parse_hived("rack.yaml", rack_cfg, strlen(rack_cfg), &c, &d));

    /* v1: an affinity group of a 2-GPU and a 1-GPU pod (the current pod: 2 GPUs) */
    const char *v1 = "name: ag\ncommand: true\nhived:\n"
                     "  virtualCluster: vc1\n  priority: 1000\n  leafCellType: V100\n"
                     "  leafCellNumber: 2\n  lazyPreemptionEnable: true\n"
                     "  affinityGroup:\n    name: ag\n    members:\n"
                     "    - {podNumber: 1, leafCellNumber: 2}\n"
                     "    - {podNumber: 1, leafCellNumber: 1}\n";
    ASSERT_OK(parse(v1, &s, &d, &f));
    ASSERT(s.hived != NULL);
    ASSERT(s.vc == NULL); /* until resolved */
    char *j = gsd_spec_to_json(&s);
    ASSERT_CONTAINS(j, "\"hived\":{\"virtualCluster\":\"vc1\",\"priority\":1000,");
    ASSERT(!strstr(j, "\"vc\""));
    ASSERT(!strstr(j, "\"tasks\""));
    gs_diag_init(&d, "json");
    if (gsd_spec_parse("json", j, strlen(j), &b, &d, &f)) T_FAIL("re-parse: %s in %s", d.msg, j);
    char *j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j, j2);
    free(j2);
    ASSERT_OK(gsd_spec_resolve_hived(&b, c, &d));
    ASSERT_STR(b.vc, "vc1");
    ASSERT_EQ(b.priority, 1000);
    ASSERT_STR(b.gpu_type, "V100");
    ASSERT_EQ(b.lazy_preemption, 1);
    ASSERT_EQ(b.ntasks, 2);
    ASSERT_EQ(b.gpus_per_task, 2);
    ASSERT(b.task_gpus && b.task_gpus[0] == 2 && b.task_gpus[1] == 1);
    gs_job_spec js;
    gsd_spec_job(&b, GS_SEC, &js);
    ASSERT_EQ(js.hived_strict, 1);
    /* the canonical form after resolving is still the block alone */
    j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j, j2);
    free(j);
    free(j2);
    gsd_spec_release(&b);
    gsd_spec_release(&s);

    /* v2: a group within one node of a 2-GPU pod and a child group of one 1-GPU pod; the
     * cell types resolve only against the cluster */
    const char *v2 = "{\"command\": \"true\", \"hived\": {\"version\": \"v2\", "
                     "\"virtualCluster\": \"vc1\", \"priority\": 10, \"cellType\": \"V100\", "
                     "\"cellNumber\": 2, \"podRootGroup\": {\"name\": \"g\", \"withinOneCell\": "
                     "\"V100-NODE\", \"pod\": {\"podMinNumber\": 1, \"podMaxNumber\": 1, "
                     "\"cellsPerPod\": {\"cellType\": \"V100\", \"cellNumber\": 2}, "
                     "\"containsCurrentPod\": true}, \"childGroups\": [{\"name\": \"c\", "
                     "\"withinOneCell\": \"\", \"pod\": {\"podMinNumber\": 1, \"podMaxNumber\": 1, "
                     "\"cellsPerPod\": {\"cellType\": \"V100\", \"cellNumber\": 1}}}]}}}";
    ASSERT_OK(parse(v2, &s, &d, &f));
    ASSERT_OK(gsd_spec_resolve_hived(&s, c, &d));
    ASSERT_EQ(s.ntasks, 2);
    ASSERT(s.task_gpus && s.task_gpus[0] == 2 && s.task_gpus[1] == 1);
    ASSERT_EQ(s.ngroups, 1);
    ASSERT_EQ(s.groups[0].lo, 0);
    ASSERT_EQ(s.groups[0].hi, 2);
    ASSERT_STR(s.groups[0].within, "V100-NODE");
    ASSERT_STR(s.name, "g"); /* the group's name when the spec has none */
    gsd_spec_release(&s);
    /* HiveD's shape: a withinOneCell group between tasks outside any (root pod, group a, b) */
    const char *mid = "command: true\nhived:\n  version: v2\n  virtualCluster: vc1\n"
                      "  priority: 1\n  cellType: V100\n  cellNumber: 1\n  podRootGroup:\n"
                      "    name: r\n    pod: {podMinNumber: 1, podMaxNumber: 1, cellsPerPod: "
                      "{cellType: V100, cellNumber: 1}, containsCurrentPod: true}\n"
                      "    childGroups:\n"
                      "    - {name: a, withinOneCell: V100-NODE, pod: {podMinNumber: 2, "
                      "podMaxNumber: 2, cellsPerPod: {cellType: V100, cellNumber: 2}}}\n"
                      "    - {name: b, pod: {podMinNumber: 1, podMaxNumber: 1, cellsPerPod: "
                      "{cellType: V100, cellNumber: 1}}}\n";
    ASSERT_OK(parse(mid, &s, &d, &f));
    if (gsd_spec_resolve_hived(&s, c, &d)) T_FAIL("resolve: %s", d.msg);
    ASSERT_EQ(s.ntasks, 4);
    ASSERT(s.task_gpus && s.task_gpus[0] == 1 && s.task_gpus[1] == 2 && s.task_gpus[3] == 1);
    ASSERT_EQ(s.ngroups, 1);
    ASSERT_EQ(s.groups[0].lo, 1);
    ASSERT_EQ(s.groups[0].hi, 3);
    char gt[8];
    gsd_spec_gpus_text(&s, gt, sizeof gt); /* "1+2x2+1" is 7 characters: it fits */
    ASSERT_STR(gt, "1+2x2+1");
    char small[6];
    gsd_spec_gpus_text(&s, small, sizeof small); /* cut, and says so */
    ASSERT_STR(small, "1+...");
    gsd_spec_release(&s);
    /* a cell type the cluster lacks: refused when resolved, with the field */
    const char *v2bad = "command: true\nhived: {version: v2, virtualCluster: vc1, priority: 1, "
                        "cellType: K80, cellNumber: 1}\n";
    ASSERT_OK(parse(v2bad, &s, &d, &f));
    ASSERT_EQ(gsd_spec_resolve_hived(&s, c, &d), GS_EINVAL);
    ASSERT_CONTAINS(d.msg, "'hived': ");
    ASSERT_CONTAINS(d.msg, "'K80' is not a cell type of the cluster");
    gsd_spec_release(&s);

    /* checked as HiveD checks a pod's spec, at its position in the file */
    static const struct {
        const char *text, *field;
        int line, col;
        const char *msg;
    } bad[] = {
        {"command: true\nhived: {virtualCluster: vc1, priority: 1001, leafCellType: V100, "
         "leafCellNumber: 1}\n",
         "hived", 2, 40, "Priority is greater than 1000"},
        {"command: true\nhived: {virtualCluster: vc1, priority: -2, leafCellType: V100, "
         "leafCellNumber: 1}\n",
         "hived", 2, 40, "Priority is less than -1"},
        {"command: true\nhived: {virtualCluster: \"\", priority: 1, leafCellNumber: 1}\n", "hived",
         2, 26, "VirtualCluster is empty"},
        {"command: true\nhived: {virtualCluster: vc1, leafCellNumber: 0}\n", "hived", 2, 46,
         "LeafCellNumber is non-positive"},
        {"command: true\nhived: {virtualCluster: vc1, leafCellNumber: 1, gpuTyp: V100}\n", "hived",
         2, 49, "unknown field"},
        {"command: true\nhived: {version: v3, virtualCluster: vc1}\n", "hived", 2, 18,
         "Unknown version"},
        {"command: true\nvc: a\nhived: {virtualCluster: vc1, leafCellNumber: 1}\n", "vc", 2, 5,
         "'vc' and 'hived' both given"},
        {"command: true\nmembers: [{gpus: 1}]\nhived: {virtualCluster: vc1, leafCellNumber: "
         "1}\n",
         "members", 2, 12, "'members' and 'hived' both given"},
        {"command: true\nhived: [a]\n", "hived", 2, 9, "must be a mapping"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *ff = "?";
        int rc = parse(bad[i].text, &s, &d, &ff);
        if (rc == 0) T_FAIL("bad case %zu parsed: %s", i, bad[i].text);
        if (strcmp(ff, bad[i].field))
            T_FAIL("bad case %zu: field '%s', want '%s' (%s)", i, ff, bad[i].field, d.msg);
        if (d.line != bad[i].line || d.col != bad[i].col)
            T_FAIL("bad case %zu: at %d:%d, want %d:%d (%s)", i, d.line, d.col, bad[i].line,
                   bad[i].col, d.msg);
        if (!strstr(d.msg, bad[i].msg))
            T_FAIL("bad case %zu: message '%s' lacks '%s'", i, d.msg, bad[i].msg);
    }
    gs_cluster_destroy(c);
}

static void elastic_fields(void)
{
    const char *y = "command: train\ntasks: 2\nmin_gpus: 1\nmax_gpus: 8\nsizes: [1, 2, 4, 8]\n"
                    "min_rescale_gap: 2m\ndeadline: \"2026-11-24T10:00:00Z\"\nbatch_size: 512\n"
                    "max_rescales: 5\nmax_failures: 2\ndrain_timeout: 90s\napp: cifar10\n";
    gsd_spec a, b;
    gs_diag d;
    const char *f;
    ASSERT_OK(parse(y, &a, &d, &f));
    ASSERT(gsd_spec_elastic(&a));
    ASSERT_EQ(a.min_gpus, 1);
    ASSERT_EQ(a.max_gpus, 8);
    ASSERT_EQ(a.nsizes, 4);
    ASSERT_EQ(a.sizes[3], 8);
    ASSERT_EQ(a.min_rescale_gap, 120 * GS_SEC);
    ASSERT_EQ(a.deadline, (gs_time)1795514400 * GS_SEC);
    ASSERT_EQ(a.batch_size, 512);
    ASSERT_EQ(a.max_rescales, 5);
    ASSERT_EQ(a.max_failures, 2);
    ASSERT_EQ(a.drain_timeout, 90 * GS_SEC);
    ASSERT_STR(a.app, "cifar10");
    ASSERT(gsd_spec_size_valid(&a, 4));
    ASSERT(!gsd_spec_size_valid(&a, 3));
    ASSERT(!gsd_spec_size_valid(&a, 16));
    /* the canonical JSON parses back to the same spec (restart recovery) */
    char *j1 = gsd_spec_to_json(&a);
    gs_diag_init(&d, "json");
    if (gsd_spec_parse("json", j1, strlen(j1), &b, &d, &f)) T_FAIL("re-parse: %s in %s", d.msg, j1);
    char *j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j1, j2);
    ASSERT_CONTAINS(j1, "\"deadline\":\"2026-11-24T10:00:00Z\"");
    ASSERT_CONTAINS(j1, "\"sizes\":[1,2,4,8]");
    /* the core spec gets them */
    gs_job_spec js;
    gsd_spec_job(&b, GS_SEC, &js);
    ASSERT_EQ(js.max_gpus, 8);
    ASSERT_EQ(js.nsizes, 4);
    ASSERT_EQ(js.min_rescale_gap, 120 * GS_SEC);
    ASSERT_EQ(js.max_rescales, 5);
    ASSERT_EQ(js.max_failures, 2);
    ASSERT_EQ(js.batch_size, 512);
    ASSERT_STR(js.app, "cifar10");
    free(j1);
    free(j2);
    gsd_spec_release(&a);
    gsd_spec_release(&b);
    /* a deadline as Unix seconds; the engine's default gap when none is given */
    ASSERT_OK(parse("command: x\nmax_gpus: 2\ndeadline: 1795514400\n", &a, &d, &f));
    ASSERT_EQ(a.deadline, (gs_time)1795514400 * GS_SEC);
    ASSERT_EQ(a.min_rescale_gap, -1);
    gsd_spec_job(&a, GS_SEC, &js);
    ASSERT_EQ(js.min_rescale_gap, GS_TIME_NONE);
    ASSERT_EQ(js.max_rescales, -1);
    gsd_spec_release(&a);
    /* errors name the field */
    static const struct {
        const char *y, *field, *msg;
    } bad[] = {
        {"command: x\nmin_gpus: 2\n", "min_gpus", "elastic jobs only"},
        {"command: x\nsizes: [1]\n", "sizes", "elastic jobs only"},
        {"command: x\nmax_failures: 1\n", "max_failures", "elastic jobs only"},
        {"command: x\nmax_gpus: 4\ngpus: 2\nsizes: [2, 3]\n", "sizes", "ascending multiples"},
        {"command: x\nmax_gpus: 4\nsizes: [2, 1]\n", "sizes", "ascending"},
        {"command: x\nmax_gpus: 4\nsizes: [2, 4]\n", "tasks", "initial size"},
        {"command: x\nmax_gpus: 4\ntasks: 8\n", "tasks", "initial size"},
        {"command: x\nmax_gpus: 1\ngpus: 2\n", "max_gpus", "below the smallest size"},
        {"command: x\nmax_gpus: 4\ngang: false\n", "gang", "a gang"},
        {"command: x\nmax_gpus: 4\nsizes: \"1,2\"\n", "sizes", "list"},
        {"command: x\nmax_gpus: 4\nmax_rescales: -2\n", "max_rescales", "between"},
        {"command: x\nmax_gpus: 4\ndeadline: tomorrow\n", "deadline", "Unix seconds"},
        {"command: x\nmax_gpus: 4\ndrain_timeout: 2h\n", "drain_timeout", "at most 1h"},
        {"command: x\nmax_gpus: \"4\"\n", "max_gpus", "not a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gsd_spec s;
        if (parse(bad[i].y, &s, &d, &f) == 0) T_FAIL("accepted: %s", bad[i].y);
        ASSERT_STR(f, bad[i].field);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
}

/* model, steps and weight (issue 15): parsed, kept by the canonical JSON, given to the core */
static void hetero_fields(void)
{
    gsd_spec a, b;
    gs_diag d;
    const char *f;
    ASSERT_OK(parse("command: train\ngpus: 2\nmodel: resnet50-bs64\nsteps: 1e6\nweight: 2.5\n", &a,
                    &d, &f));
    ASSERT_STR(a.model, "resnet50-bs64");
    ASSERT(a.steps == 1e6);
    ASSERT(a.weight == 2.5);
    char *j1 = gsd_spec_to_json(&a);
    gs_diag_init(&d, "json");
    if (gsd_spec_parse("json", j1, strlen(j1), &b, &d, &f)) T_FAIL("re-parse: %s in %s", d.msg, j1);
    char *j2 = gsd_spec_to_json(&b);
    ASSERT_STR(j1, j2);
    ASSERT_CONTAINS(j1, "\"model\":\"resnet50-bs64\"");
    gs_job_spec js;
    gsd_spec_job(&b, 3600 * GS_SEC, &js); /* steps: no default duration */
    ASSERT_STR(js.model, "resnet50-bs64");
    ASSERT(js.steps == 1e6);
    ASSERT(js.weight == 2.5);
    ASSERT_EQ(js.duration, 0);
    free(j1);
    free(j2);
    gsd_spec_release(&a);
    gsd_spec_release(&b);
    /* without steps the duration rules are unchanged */
    ASSERT_OK(parse("command: x\nmodel: lm-bs40\n", &a, &d, &f));
    gsd_spec_job(&a, 3600 * GS_SEC, &js);
    ASSERT_EQ(js.duration, 3600 * GS_SEC);
    ASSERT(js.steps == 0);
    gsd_spec_release(&a);
    static const struct {
        const char *y, *field, *msg;
    } bad[] = {
        {"command: x\nsteps: -1\n", "steps", "between 0 and"},
        {"command: x\nsteps: many\n", "steps", "must be a number"},
        {"command: x\nsteps: \"5\"\n", "steps", "not a string"},
        {"command: x\nweight: 1e7\n", "weight", "between 0 and"},
        {"command: x\nweight: nan\n", "weight", "must be a number"},
        {"command: x\nsteps: 100\nduration: 1h\n", "steps", "not both"},
        {"command: x\nmodel: [a]\n", "model", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gsd_spec s;
        if (parse(bad[i].y, &s, &d, &f) == 0) T_FAIL("accepted: %s", bad[i].y);
        ASSERT_STR(f, bad[i].field);
        ASSERT_CONTAINS(d.msg, bad[i].msg);
    }
}

static void reserved_env_names(void)
{
    ASSERT(gsd_env_reserved("GSCHED_JOB_ID"));
    ASSERT(gsd_env_reserved("CUDA_VISIBLE_DEVICES"));
    ASSERT(gsd_env_reserved("MASTER_PORT"));
    ASSERT(!gsd_env_reserved("PATH"));
    ASSERT(!gsd_env_reserved("GSCHEDX"));
    /* set by `gsched submit --array`, never by the executor */
    ASSERT(!gsd_env_reserved("GSCHED_ARRAY_TASK_ID"));
    ASSERT(gsd_env_reserved("GSCHED_ARRAY"));
}

/* Slurm's --time (sbatch -t): a bare number is minutes, then its colon and dash forms. */
static void slurm_time_limits(void)
{
    static const struct {
        const char *in;
        gs_time want;
    } ok[] = {
        {"30", 30 * 60 * GS_SEC},                           /* MM: minutes, not seconds or tasks */
        {"0", 0},                                           /* no limit */
        {"1.5", 90 * GS_SEC},                               /* fractional minutes */
        {"5:30", (5 * 60 + 30) * GS_SEC},                   /* MM:SS */
        {"90:00", 90 * 60 * GS_SEC},                        /* MM:SS with more than 59 minutes */
        {"01:02:03", (3600 + 120 + 3) * GS_SEC},            /* HH:MM:SS */
        {"2-0", 2 * 86400 * GS_SEC},                        /* D-HH */
        {"1-12", (86400 + 12 * 3600) * GS_SEC},             /* D-HH */
        {"1-02:30", (86400 + 2 * 3600 + 30 * 60) * GS_SEC}, /* D-HH:MM */
        {"1-02:30:04", (86400 + 2 * 3600 + 1804) * GS_SEC}, /* D-HH:MM:SS */
        {"UNLIMITED", 0},
        {"unlimited", 0},
        {"infinite", 0},
        {"Infinite", 0},
        {"90s", 90 * GS_SEC}, /* gsched's units still work */
        {"2h", 2 * 3600 * GS_SEC},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        gs_time t = -1;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT_OK(gsd_parse_time_limit(ok[i].in, &t, &d));
        ASSERT_EQ(t, ok[i].want);
    }
    static const char *const bad[] = {"",    "-5",         "1:60",    "1-02:60", "forever",
                                      "30x", "unlimitedx", "1:2:3:4", "60000000"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gs_time t;
        gs_diag d;
        gs_diag_init(&d, NULL);
        ASSERT(gsd_parse_time_limit(bad[i], &t, &d) != 0);
        ASSERT(d.msg[0] != '\0');
    }
    /* the spec's own time_limit keeps bare seconds */
    gs_time t;
    ASSERT_OK(gsd_parse_duration("30", GS_SEC, &t, NULL));
    ASSERT_EQ(t, 30 * GS_SEC);
}

/*
 * Regression inputs from fuzzing (tests/fuzz/daemon): the parser gets a buffer of exactly
 * 'len' bytes with no NUL after it (ASan builds catch a read past it), and inputs that
 * used to hang libfyaml or read past the end must fail with a message.
 */
static void fuzz_regressions(void)
{
    static const struct {
        const char *text;
        size_t len;
    } in[] = {
        {" ", 1},    /* whitespace-only: the JSON/YAML guess read past the buffer */
        {"\n", 1},   /* same */
        {"\t\r", 2}, /* same */
        {"%", 1},    /* a lone directive marker */
        {"command: f\ncheckpoint: {grace_period: 0.4ms}\ntasks: 0", 53}, /* error after it */
        {"{", 1},                                                        /* truncated JSON */
        {"[1, 2", 5},                                                    /* truncated JSON list */
        {"command: \"", 10}, /* unterminated string at the end of the buffer */
    };
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        char *buf = malloc(in[i].len);
        ASSERT(buf != NULL);
        memcpy(buf, in[i].text, in[i].len);
        gsd_spec s;
        gs_diag d;
        gs_diag_init(&d, "fuzz");
        const char *f = NULL;
        int rc = gsd_spec_parse("fuzz", buf, in[i].len, &s, &d, &f);
        free(buf);
        if (rc >= 0) T_FAIL("input %zu parsed, want an error", i);
        ASSERT(d.msg[0] != '\0');
        ASSERT(f != NULL);
    }
}

/* Durations have millisecond resolution, so the canonical JSON gives the same spec back
 * (fuzzing found "grace_period: 0.5ms" stored as "0ms", i.e. the daemon's default). */
static void sub_millisecond_durations(void)
{
    static const char *const in[] = {"command: f\ncheckpoint: {grace_period: 0.5ms}\n",
                                     "command: f\ncheckpoint: {grace_period: 1.4ms}\n",
                                     "command: f\ntime_limit: 0.0004s\n",
                                     "command: f\nduration: 2.0009s\n"};
    static const gs_time want[] = {GS_MSEC, GS_MSEC, 0, 2001 * GS_MSEC};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        gsd_spec s, s2;
        gs_diag d;
        const char *f;
        ASSERT_OK(parse(in[i], &s, &d, &f));
        gs_time got = i < 2 ? s.grace : i == 2 ? s.time_limit : s.duration;
        ASSERT_EQ(got, want[i]);
        char *j1 = gsd_spec_to_json(&s);
        ASSERT_OK(parse(j1, &s2, &d, &f));
        char *j2 = gsd_spec_to_json(&s2);
        ASSERT_STR(j1, j2);
        free(j1);
        free(j2);
        gsd_spec_release(&s);
        gsd_spec_release(&s2);
    }
}

/* gsched run (issue 16): 'interactive' parses, round-trips, and is refused with several
 * tasks, an elastic range or an array, naming the field */
static void interactive_field(void)
{
    const char *y = "{\"command\": \"cat\", \"interactive\": true}";
    gsd_spec s, t;
    gs_diag d;
    const char *f;
    gs_diag_init(&d, NULL);
    ASSERT_OK(gsd_spec_parse("body", y, strlen(y), &s, &d, &f));
    ASSERT_EQ(s.interactive, 1);
    char *json = gsd_spec_to_json(&s);
    ASSERT_CONTAINS(json, "\"interactive\":true");
    ASSERT_OK(gsd_spec_parse("stored", json, strlen(json), &t, &d, &f));
    ASSERT_EQ(t.interactive, 1);
    free(json);
    gsd_spec_release(&s);
    gsd_spec_release(&t);
    const char *no = "{\"command\": \"cat\"}";
    ASSERT_OK(gsd_spec_parse("body", no, strlen(no), &s, &d, &f));
    ASSERT_EQ(s.interactive, 0);
    json = gsd_spec_to_json(&s);
    ASSERT(strstr(json, "interactive") == NULL);
    free(json);
    gsd_spec_release(&s);
    static const char *const bad[] = {
        "{\"command\": \"cat\", \"interactive\": true, \"tasks\": 2}",
        "{\"command\": \"cat\", \"interactive\": true, \"max_gpus\": 4}",
        "{\"command\": \"cat\", \"interactive\": true, \"array\": \"0-3\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ASSERT_EQ(gsd_spec_parse("body", bad[i], strlen(bad[i]), &s, &d, &f), GS_EINVAL);
        ASSERT_STR(f, "interactive");
        ASSERT_CONTAINS(d.msg, "one task");
    }
    const char *nb = "{\"command\": \"cat\", \"interactive\": 1}";
    ASSERT(gsd_spec_parse("body", nb, strlen(nb), &s, &d, &f) != 0);
    ASSERT_STR(f, "interactive");
}

static const test_case tests[] = {
    {"fuzz_regressions", fuzz_regressions},
    {"sub_millisecond_durations", sub_millisecond_durations},
    {"yaml_full", yaml_full},
    {"json_and_list_command", json_and_list_command},
    {"defaults", defaults},
    {"errors_name_field_and_position", errors_name_field_and_position},
    {"limits_and_control_chars", limits_and_control_chars},
    {"nul_bidi_c1_name_the_field", nul_bidi_c1_name_the_field},
    {"strict_types", strict_types},
    {"durations_and_priorities", durations_and_priorities},
    {"json_round_trip", json_round_trip},
    {"elastic_fields", elastic_fields},
    {"hetero_fields", hetero_fields},
    {"members_and_groups", members_and_groups},
    {"hived_block", hived_block},
    {"reserved_env_names", reserved_env_names},
    {"slurm_time_limits", slurm_time_limits},
    {"interactive_field", interactive_field},
};

TEST_MAIN(tests)
