/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading plugins with apr_dso. Nothing in a plugin is called before its
 * entry has passed the magic and ABI checks, and a load that fails at any
 * step leaves the registry exactly as it was: the plugin's types are
 * staged during init and committed only at the end, and the plugin's own
 * subpool (which unloads the DSO when destroyed) is dropped.
 */
#include "config.h"
#include "registry_private.h"
#include "fresh.h"
#include "core/fault.h"
#include "os/os.h"

#include <apr_cstr.h>
#include <apr_file_info.h>
#include <apr_strings.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void say(char *err, apr_size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(char *err, apr_size_t errlen, const char *path, const char *fmt, ...)
{
    va_list ap;
    apr_size_t n;

    if (!err || errlen == 0)
        return;
    apr_snprintf(err, errlen, "%s: ", path);
    n = strlen(err);
    if (n + 1 >= errlen)
        return;
    va_start(ap, fmt);
    apr_vsnprintf(err + n, errlen - n, fmt, ap);
    va_end(ap);
}

static const pp__plugin_t *loaded_named(const pp_registry_t *reg, const char *name)
{
    int i;

    for (i = 0; i < reg->plugins->nelts; i++) {
        const pp__plugin_t *pl = APR_ARRAY_IDX(reg->plugins, i, pp__plugin_t *);
        if (strcmp(pl->info.name, name) == 0)
            return pl;
    }
    return NULL;
}

/* apr_dso_load failed on a file that exists. The dynamic loader's own
 * words when it has some (dlerror, or Windows' message: a bad header, a
 * missing dependency), else APR's for the status, never an empty message;
 * and a file that could not be mapped for want of memory is not called
 * "not a loadable object": that is APR_ENOMEM, worth a retry. */
static apr_status_t dso_failure(apr_status_t rv, apr_dso_handle_t *dso, const char *path,
                                char *err, apr_size_t errlen)
{
    char msg[512], status[256];
    const char *why = dso ? apr_dso_error(dso, msg, sizeof(msg)) : NULL;

    if (!why || !*why || strcmp(why, "No Error") == 0)
        why = apr_strerror(rv, status, sizeof(status));
    if (APR_STATUS_IS_ENOMEM(rv) || strstr(why, "memory") || strstr(why, "map segment")) {
        say(err, errlen, path, "cannot load it, out of memory: %s", why);
        return APR_ENOMEM;
    }
    say(err, errlen, path, "not a loadable object: %s", why);
    return PP_EPLUGIN;
}

/* Runs the checks and init; on success the plugin is the registry's. */
static apr_status_t load(pp_registry_t *reg, const char *path, apr_pool_t *p,
                         char *err, apr_size_t errlen)
{
    apr_dso_handle_t *dso;
    apr_dso_handle_sym_t sym;
    const pp_plugin_entry_t *entry;
    const pp__plugin_t *other;
    pp__plugin_t *pl;
    apr_finfo_t finfo;
    char msg[512];
    apr_status_t rv;

    rv = apr_stat(&finfo, path, APR_FINFO_TYPE, p);
    if (rv != APR_SUCCESS) {
        say(err, errlen, path, "no such file (%s)", apr_strerror(rv, msg, sizeof(msg)));
        return APR_STATUS_IS_ENOENT(rv) ? APR_ENOENT : rv;
    }
    if (finfo.filetype != APR_REG && finfo.filetype != APR_LNK) {
        say(err, errlen, path, "not a regular file");
        return PP_EPLUGIN;
    }
    dso = NULL;
    /* By a name that gets the file at path now, not a module loaded from
     * an older file there (fresh.h). */
    rv = pp__fault_hit(PP__FAULT_DSO_LOAD) ? APR_ENOMEM
                                           : apr_dso_load(&dso, pp__fresh_name(path, p), p);
    if (rv != APR_SUCCESS)
        return dso_failure(rv, dso, path, err, errlen);
    rv = apr_dso_sym(&sym, dso, "pp_plugin_entry");
    if (rv != APR_SUCCESS) {
        say(err, errlen, path, "not a parkpool plugin: no pp_plugin_entry symbol");
        return PP_EPLUGIN;
    }
    entry = (const pp_plugin_entry_t *)sym;
    if (entry->magic != PP_PLUGIN_MAGIC) {
        say(err, errlen, path, "not a parkpool plugin: wrong magic 0x%08x (want 0x%08x)",
            entry->magic, PP_PLUGIN_MAGIC);
        return PP_EPLUGIN;
    }
    if (entry->abi_major != PP_PLUGIN_ABI_MAJOR || entry->abi_minor > PP_PLUGIN_ABI_MINOR) {
        say(err, errlen, path, "ABI mismatch: plugin needs %u.%u, this parkpool has %u.%u",
            entry->abi_major, entry->abi_minor, PP_PLUGIN_ABI_MAJOR, PP_PLUGIN_ABI_MINOR);
        return PP_EABI;
    }
    if (!entry->name || !entry->name[0] || !entry->init) {
        say(err, errlen, path, "not a parkpool plugin: entry without a name or init function");
        return PP_EPLUGIN;
    }
    other = loaded_named(reg, entry->name);
    if (other) {
        say(err, errlen, path, "a plugin named '%s' is loaded already from %s",
            entry->name, other->info.path);
        return PP_EPLUGIN;
    }

    pl = apr_pcalloc(reg->p, sizeof(*pl));
    pl->info.name = apr_pstrdup(reg->p, entry->name);
    pl->info.version = apr_pstrdup(reg->p, entry->version ? entry->version : "");
    pl->info.path = apr_pstrdup(reg->p, path);
    /* Copied: the names outlive an unload in the registry's pool. */
    if (entry->abi_minor >= 1 && entry->idempotent) {
        apr_array_header_t *idem = apr_array_make(reg->p, 4, sizeof(const char *));
        const char *const *name;
        for (name = entry->idempotent; *name; name++)
            APR_ARRAY_PUSH(idem, const char *) = apr_pstrdup(reg->p, *name);
        APR_ARRAY_PUSH(idem, const char *) = NULL;
        pl->info.idempotent = (const char *const *)idem->elts;
    }
    pl->p = p;
    reg->loading = pl;
    reg->load_status = APR_SUCCESS;
    reg->load_detail[0] = '\0';
    apr_array_clear(reg->staged);
    rv = entry->init(reg);
    if (rv == APR_SUCCESS)
        rv = reg->load_status;
    reg->loading = NULL;
    if (rv != APR_SUCCESS) {
        apr_array_clear(reg->staged);
        if (reg->load_detail[0])
            say(err, errlen, path, "%s", reg->load_detail);
        else
            say(err, errlen, path, "init of plugin '%s' failed: %s", pl->info.name,
                pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    pp__registry_commit(reg);
    APR_ARRAY_PUSH(reg->plugins, pp__plugin_t *) = pl;
    return APR_SUCCESS;
}

apr_status_t pp_registry_load(pp_registry_t *reg, const char *path,
                              char *err, apr_size_t errlen)
{
    apr_pool_t *p;
    apr_status_t rv;

    if (err && errlen)
        err[0] = '\0';
    if (!reg || !path)
        return APR_EINVAL;
    if (reg->loading)
        return APR_EINVAL;    /* a plugin's init may not load plugins */
    rv = apr_pool_create_unmanaged_ex(&p, NULL, NULL);
    if (rv != APR_SUCCESS)
        return rv;
    rv = load(reg, path, p, err, errlen);
    if (rv != APR_SUCCESS)
        apr_pool_destroy(p);    /* unloads the DSO, if it got that far */
    return rv;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name ends in the OS's module suffix, compared as the OS compares
 * file names: "GOOD.DLL" is a plugin on Windows. */
static int is_module_name(const char *name)
{
    const char *suffix = pp__dso_suffix();
    apr_size_t n = strlen(name), s = strlen(suffix);

    if (n <= s)
        return 0;
    return pp__names_ignore_case() ? apr_cstr_casecmp(name + n - s, suffix) == 0
                                   : strcmp(name + n - s, suffix) == 0;
}

apr_status_t pp_registry_load_dir(pp_registry_t *reg, const char *dir,
                                  char *err, apr_size_t errlen)
{
    apr_pool_t *p;
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_array_header_t *names;
    apr_status_t rv, first = APR_SUCCESS;
    apr_size_t used = 0;
    char line[1024];
    int i;

    if (err && errlen)
        err[0] = '\0';
    if (!reg || !dir)
        return APR_EINVAL;
    rv = apr_pool_create(&p, reg->p);
    if (rv != APR_SUCCESS)
        return rv;
    rv = apr_dir_open(&d, dir, p);
    if (rv != APR_SUCCESS) {
        char msg[256];
        say(err, errlen, dir, "cannot open plugin folder (%s)",
            apr_strerror(rv, msg, sizeof(msg)));
        apr_pool_destroy(p);
        return rv;
    }
    names = apr_array_make(p, 16, sizeof(char *));
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        /* libtool's .la files and anything else are not plugins. */
        if (fi.name && is_module_name(fi.name))
            APR_ARRAY_PUSH(names, char *) = apr_pstrdup(p, fi.name);
    }
    apr_dir_close(d);
    qsort(names->elts, (size_t)names->nelts, sizeof(char *), cmp_names);
    for (i = 0; i < names->nelts; i++) {
        char *path;
        /* Native: the paths in messages look like the OS's own. */
        apr_filepath_merge(&path, dir, APR_ARRAY_IDX(names, i, char *), APR_FILEPATH_NATIVE, p);
        rv = pp_registry_load(reg, path, line, sizeof(line));
        if (rv == APR_SUCCESS)
            continue;
        if (first == APR_SUCCESS)
            first = rv;
        if (err && used + 1 < errlen) {
            apr_snprintf(err + used, errlen - used, "%s%s", used ? "\n" : "", line);
            used += strlen(err + used);
        }
    }
    apr_pool_destroy(p);
    return first;
}
