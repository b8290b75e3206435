/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugin.c - policy plugins: `--policy-plugin FILE.so` of `gsched sim`, `gsched serve` and
 * `gsched policies` (docs/writing-a-policy.md).
 *
 * The program, not the core, loads them: dlopen(FILE) (a name without '/' is taken as
 * ./FILE, never searched on the library path), dlsym(GS_POLICY_PLUGIN_SYMBOL), checks of the
 * ABI and of the table (gsched/policy.h, "Plugins"), then the table goes to the engine
 * through gs_engine_opts.policies.  The gsched program exports the public gs_* functions the
 * plugin calls (CMakeLists.txt: ENABLE_EXPORTS).
 * Invariants: a loaded table's name is unique among the compiled-in policies and the
 * plugins loaded before it; a plugin stays loaded (its code mapped) until
 * cli_plugins_release, after every engine that uses it is destroyed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A policy name others can list: a-z, 0-9, '-' (no ',' or ':' of the --policy grammar). */
static int name_ok(const char *n)
{
    if (!n || !n[0] || strlen(n) > 63) return 0;
    for (const char *c = n; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-')) return 0;
    return 1;
}

int cli_plugin_load(cli_plugins *p, const char *path)
{
    char buf[4096];
    const char *open_path = path;
    if (!strchr(path, '/')) { /* dlopen would search the library path for a bare name */
        snprintf(buf, sizeof buf, "./%s", path);
        open_path = buf;
    }
    dlerror();
    void *h = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        cli_err("--policy-plugin %s: cannot load it: %s", path, why ? why : "unknown error");
        return -1;
    }
    dlerror();
    void *sym = dlsym(h, GS_POLICY_PLUGIN_SYMBOL);
    if (!sym) {
        cli_err("--policy-plugin %s: not a gsched policy plugin: it does not define '%s' "
                "(docs/writing-a-policy.md)",
                path, GS_POLICY_PLUGIN_SYMBOL);
        dlclose(h);
        return -1;
    }
    gs_policy_plugin_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object to function pointer, as POSIX allows */
    const gs_policy_plugin *pl = fn();
    if (!pl) {
        cli_err("--policy-plugin %s: %s() returned NULL", path, GS_POLICY_PLUGIN_SYMBOL);
        dlclose(h);
        return -1;
    }
    if (pl->abi != GS_POLICY_ABI || pl->ops_size != sizeof(gs_policy_ops) ||
        pl->job_size != sizeof(gs_job)) {
        cli_err("--policy-plugin %s: built for policy ABI %u (ops %u bytes, job %u bytes), this "
                "gsched has ABI %u (ops %zu, job %zu): rebuild it against this gsched's headers",
                path, (unsigned)pl->abi, (unsigned)pl->ops_size, (unsigned)pl->job_size,
                (unsigned)GS_POLICY_ABI, sizeof(gs_policy_ops), sizeof(gs_job));
        dlclose(h);
        return -1;
    }
    const gs_policy_ops *ops = pl->ops;
    const char *why = !ops                  ? "it has no ops table"
                      : !name_ok(ops->name) ? "its name must be 1-63 characters of a-z, 0-9, '-'"
                      : !ops->summary       ? "it has no summary"
                      : !ops->create        ? "it has no create()"
                      : !ops->schedule      ? "it has no schedule()"
                                            : NULL;
    if (why) {
        cli_err("--policy-plugin %s: its policy table is not usable: %s", path, why);
        dlclose(h);
        return -1;
    }
    const char *clash = gs_policy_find(ops->name) ? "a compiled-in policy" : NULL;
    for (size_t i = 0; !clash && i < p->n; i++)
        if (!strcmp(p->ops[i]->name, ops->name)) clash = p->path[i];
    if (clash) {
        cli_err("--policy-plugin %s: policy '%s' is already defined (%s%s)", path, ops->name,
                gs_policy_find(ops->name) ? "" : "by ", clash);
        dlclose(h);
        return -1;
    }
    void **nh = realloc(p->handle, (p->n + 1) * sizeof *nh);
    if (nh) p->handle = nh;
    const gs_policy_ops **no = realloc(p->ops, (p->n + 1) * sizeof *no);
    if (no) p->ops = no;
    const char **np = realloc(p->path, (p->n + 1) * sizeof *np);
    if (np) p->path = np;
    if (!nh || !no || !np) abort(); /* programs abort on out-of-memory */
    p->handle[p->n] = h;
    p->ops[p->n] = ops;
    p->path[p->n] = path;
    p->n++;
    return 0;
}

void cli_plugins_release(cli_plugins *p)
{
    for (size_t i = p->n; i-- > 0;) dlclose(p->handle[i]);
    free(p->handle);
    free(p->ops);
    free(p->path);
    memset(p, 0, sizeof *p);
}
