/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool plugins: named task types, a registry, and the ABI that
 * loadable plugins (.so / .dll) export.
 *
 * A plugin defines its types and one entry point:
 *
 *     static const pp_task_type_t sleep_type = {
 *         "demo.sleep", "sleep for ARG milliseconds", parse_ms, run_sleep, NULL
 *     };
 *     static apr_status_t demo_init(pp_registry_t *reg)
 *     {
 *         return pp_registry_add(reg, &sleep_type);
 *     }
 *     PP_PLUGIN_DEFINE("demo", "1.0.0", demo_init);
 */
#ifndef PARKPOOL_PLUGIN_H
#define PARKPOOL_PLUGIN_H

#include "parkpool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_registry_t pp_registry_t;

typedef struct pp_task_type_t {
    const char  *name;      /**< unique, "family.verb", e.g. "hash.sha1" */
    const char  *summary;   /**< one line for `parkpool plugins` */
    /** Turn the text after the type name into a task argument, allocated
     *  from p (a pool of the task's own, gone after release). NULL: the
     *  argument is the text itself, copied into p. */
    apr_status_t (*parse)(void **arg, const char *text, apr_pool_t *p);
    pp_task_fn    run;
    /** Optional: called once after run, or when the task is cancelled. */
    void        (*release)(void *arg);
    /** Set by the registry in the copy that pp_registry_find() returns, so
     *  that its tasks keep their plugin loaded. Leave it NULL. */
    const void  *owner;
} pp_task_type_t;

/*
 * The plugin ABI. The loader checks magic and ABI before it calls anything
 * in the plugin: abi_major must equal the host's, abi_minor must not be
 * newer. Minor versions only ever add at the end of structures.
 */
#define PP_PLUGIN_MAGIC     0x50504c47u   /* "PPLG" */
#define PP_PLUGIN_ABI_MAJOR 1
/** The newest minor version this parkpool loads. 1.1 added idempotent. */
#define PP_PLUGIN_ABI_MINOR 1

typedef struct pp_plugin_entry_t {
    apr_uint32_t magic;
    apr_uint32_t abi_major;
    apr_uint32_t abi_minor;
    const char  *name;        /**< the plugin's name, e.g. "hash" */
    const char  *version;     /**< its version string */
    /** Registers the plugin's types with pp_registry_add(). */
    apr_status_t (*init)(pp_registry_t *reg);
    /** Since 1.1 (read only when abi_minor >= 1): the plugin's types whose
     *  tasks may run twice with the effect of once, names or globs
     *  ("hash.*"), NULL-terminated; NULL: none. A queue of workers runs a
     *  task at least once (parkpoold(8), QUEUE); parkpool plugins shows it. */
    const char *const *idempotent;
} pp_plugin_entry_t;

#if defined(_WIN32) || defined(__CYGWIN__)
#define PP_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PP_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/** Export this plugin's entry point (the data symbol pp_plugin_entry). It
 *  asks for ABI 1.0, so that a parkpool of any 1.x loads it. */
#define PP_PLUGIN_DEFINE(name, version, init)                              \
    PP_PLUGIN_EXPORT extern const pp_plugin_entry_t pp_plugin_entry;       \
    const pp_plugin_entry_t pp_plugin_entry = {                            \
        PP_PLUGIN_MAGIC, PP_PLUGIN_ABI_MAJOR, 0,                           \
        (name), (version), (init), (const char *const *)0                   \
    }

/** PP_PLUGIN_DEFINE, and the types whose tasks may run twice (a
 *  NULL-terminated array of names or globs): ABI 1.1. */
#define PP_PLUGIN_DEFINE_IDEMPOTENT(name, version, init, idempotent)      \
    PP_PLUGIN_EXPORT extern const pp_plugin_entry_t pp_plugin_entry;       \
    const pp_plugin_entry_t pp_plugin_entry = {                            \
        PP_PLUGIN_MAGIC, PP_PLUGIN_ABI_MAJOR, 1,                           \
        (name), (version), (init), (idempotent)                            \
    }

/** Where a registry found its types: one per loaded plugin. */
typedef struct pp_plugin_info_t {
    const char *name;
    const char *version;
    const char *path;          /**< NULL for types added by the host */
    /** The types it says may run twice (pp_plugin_entry_t.idempotent),
     *  NULL-terminated, or NULL. */
    const char *const *idempotent;
} pp_plugin_info_t;

/**
 * A registry in p. Destroying p waits until no task of its types is queued
 * or running, then unloads its plugins: code a worker may still run is
 * never unmapped.
 */
PP_API apr_status_t pp_registry_create(pp_registry_t **reg, apr_pool_t *p);

/**
 * Register a type (copied; its strings must outlive the registry).
 * @return PP_EDUPTYPE if the name is taken, APR_EINVAL for a type without a
 *         name or run function, or a name that is not "family.verb".
 */
PP_API apr_status_t pp_registry_add(pp_registry_t *reg, const pp_task_type_t *type);

/**
 * Load one plugin. On failure the registry is as it was, and err (if not
 * NULL) says what is wrong, naming path.
 * @return APR_ENOENT (no such file), PP_EPLUGIN (not a loadable object, no
 *         pp_plugin_entry, wrong magic, or a name loaded already), PP_EABI,
 *         PP_EDUPTYPE, or the init function's own failure.
 */
PP_API apr_status_t pp_registry_load(pp_registry_t *reg, const char *path,
                                     char *err, apr_size_t errlen);

/**
 * Load every plugin (".so", or ".dll" in any case on Windows) in dir, in
 * name order, going on past bad ones. err collects one line per failure.
 * @return APR_SUCCESS if all loaded, else the first failure's status.
 */
PP_API apr_status_t pp_registry_load_dir(pp_registry_t *reg, const char *dir,
                                         char *err, apr_size_t errlen);

/**
 * Split a job record, "TYPE ARG", in place. The grammar (parkpool(1), JOB
 * LINES): blanks (spaces, tabs) before TYPE are skipped; TYPE runs to the
 * first blank; exactly one blank separates it from ARG, which is the rest
 * of the record exactly as written (blanks, '#', CRs and newlines
 * included; it may be empty: "TYPE " has an empty ARG). Nothing is
 * stripped from the end: the caller has removed the record's terminator
 * (a NUL-separated stream's records may end in a newline).
 * *type and *arg point into rec.
 * @return APR_SUCCESS; APR_EOF for a record of blanks only or a comment
 *         ('#' first after the blanks), which hold no task; APR_EINVAL for
 *         a TYPE with nothing after it (*type is set, for the message) or
 *         a NULL argument.
 */
PP_API apr_status_t pp_job_record_split(char *rec, char **type, char **arg);

/**
 * Split a job line: as pp_job_record_split() once the line's ending is
 * removed, a final LF or CR LF (one of them: "a\r\r\n" keeps "a\r").
 */
PP_API apr_status_t pp_job_line_split(char *line, char **type, char **arg);

/**
 * Take the types of one loaded plugin out of reg at once: lookups stop
 * finding them and new submits of them (by name, or of a type found
 * before) fail with PP_ENOTYPE. The plugin's code stays mapped until the
 * last of its tasks queued or running has ended, then the task that ended
 * last unloads it on its worker; the caller never waits. Its name may be
 * loaded again at once (a new version of the file). Like loading, not for
 * two threads at once, nor from a plugin's init.
 * @return APR_ENOENT if no plugin of that name is loaded.
 */
PP_API apr_status_t pp_registry_unload(pp_registry_t *reg, const char *plugin_name);

/** The type registered under name, or NULL. */
PP_API const pp_task_type_t *pp_registry_find(const pp_registry_t *reg, const char *name);

/** The registered type whose name is closest to name (for "did you mean"), or NULL. */
PP_API const pp_task_type_t *pp_registry_suggest(const pp_registry_t *reg, const char *name);

/** Non-zero when type's plugin says its tasks may run twice with the
 *  effect of once (pp_plugin_entry_t.idempotent); 0 for a type added by
 *  the host, of a plugin that says nothing, or not of reg. */
PP_API int pp_registry_idempotent(const pp_registry_t *reg, const pp_task_type_t *type);

/** Number of registered types; pp_registry_type(reg, i) walks them in name order. */
PP_API apr_size_t pp_registry_count(const pp_registry_t *reg);
PP_API const pp_task_type_t *pp_registry_type(const pp_registry_t *reg, apr_size_t i);

/** The plugin a registered type came from. */
PP_API const pp_plugin_info_t *pp_registry_owner(const pp_registry_t *reg,
                                                 const pp_task_type_t *type);

/** Queue type->run(arg) with type->release(arg) after it; arg is the
 *  caller's. A type from pp_registry_find() keeps its plugin loaded until
 *  the task has ended. */
PP_API apr_status_t pp_submit_typed(pp_pool_t *pool, const pp_task_type_t *type, void *arg,
                                    pp_group_t *group);

/**
 * Parse text with the named type and queue the task. The argument lives in
 * a pool of the task's own, freed after it ran or was cancelled, so a
 * stream of millions of tasks uses memory only for those in flight.
 * @return PP_ENOTYPE for an unknown name, the parser's failure, or what
 *         pp_submit_task() returns.
 */
PP_API apr_status_t pp_submit_named(pp_pool_t *pool, const pp_registry_t *reg,
                                    const char *name, const char *text, pp_group_t *group);

#ifdef __cplusplus
}
#endif

#endif /* PARKPOOL_PLUGIN_H */
