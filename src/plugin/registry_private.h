/* SPDX-License-Identifier: Apache-2.0 */
/* What registry.c and loader.c share. Not installed. */
#ifndef PP_REGISTRY_PRIVATE_H
#define PP_REGISTRY_PRIVATE_H

#include "parkpool/plugin.h"
#include "os/sync.h"

#include <apr_dso.h>
#include <apr_hash.h>
#include <apr_tables.h>
#include <apr_thread_mutex.h>
#include <apr_thread_rwlock.h>

#define PP__TYPE_MAGIC 0x50505459u   /* "PPTY": a registry's own record */

typedef struct pp__plugin_t {
    pp_plugin_info_t  info;
    /* Its DSO is unloaded when this goes: an unmanaged pool (NULL for the
     * host), so that the last task of an unloaded plugin can free it on
     * its worker while other threads use the registry's pool. */
    apr_pool_t       *p;
    /* Under the registry's lock: its tasks queued or running, and whether
     * pp_registry_unload() took its types away (then the last of those
     * tasks frees p). */
    apr_uint32_t      inflight;
    int               unloaded;
} pp__plugin_t;

/* The registry's copy of a type; type comes first, so the pointer handed
 * out by pp_registry_find() is the record's. */
typedef struct pp__type_rec_t {
    pp_task_type_t   type;
    apr_uint32_t     magic;
    pp_registry_t   *reg;
    pp__plugin_t    *plugin;
} pp__type_rec_t;

struct pp_registry_t {
    apr_pool_t          *p;          /* ours alone (unmanaged): see registry.c */
    apr_pool_t          *task_root;  /* parent of the per-task pools; thread-safe */
    /* Lookups read these while a load may add to them: readers and
     * writers meet at names (a record, once added, never moves). */
    apr_thread_rwlock_t *names;
    apr_hash_t          *by_name;    /* name -> pp__type_rec_t* */
    apr_array_header_t  *sorted;     /* pp__type_rec_t*, by name */
    apr_array_header_t  *plugins;    /* pp__plugin_t*, loaded */
    apr_array_header_t  *unloaded;   /* pp__plugin_t*, unloaded, p not yet freed */
    pp__plugin_t        *host;       /* owner of types the host adds itself */

    /* While a plugin's init runs, its adds are staged here and committed
     * only if the whole load succeeds. */
    pp__plugin_t        *loading;
    apr_array_header_t  *staged;
    apr_status_t         load_status;
    char                 load_detail[256];

    pp__mutex_t         *lock;       /* guards inflight's zero crossing */
    pp__cond_t          *drained;
    apr_uint32_t         gen;        /* the fork generation it lives in (fork.h) */
    apr_uint32_t         inflight;   /* tasks queued or running */
    apr_uint32_t         nwaiting;
    int                  orphaned;   /* closed from one of its own tasks: the
                                      * last task out frees it */
};

/** Add a type for plugin (NULL = the host), staging it during a load. */
apr_status_t pp__registry_add(pp_registry_t *reg, const pp_task_type_t *type);

/** The committed type rec of that name, or NULL. */
pp__type_rec_t *pp__registry_lookup(const pp_registry_t *reg, const char *name);

/** Commit the staged types of a successful load. */
void pp__registry_commit(pp_registry_t *reg);

/** Free every plugin's pool, newest first (unloading its DSO), at the
 *  registry's end: nothing of theirs runs any more. */
void pp__registry_free_plugins(pp_registry_t *reg);

#endif
