/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The task-type registry and typed submission.
 *
 * Lifetime rule: every task of a registered type holds a reference on its
 * registry, and one on its plugin, from submit until its release has
 * returned. The registry's pre-cleanup waits for the count to reach zero
 * before its plugins' DSOs and its pool go, so plugin code is never
 * unmapped while a worker may still run it; pp_registry_unload() takes a
 * plugin's types away at once and leaves the unmapping to the last of its
 * tasks (as Windows' FreeLibraryWhenCallbackReturns does), or does it
 * itself when none is in flight. Names and summaries are copied into the
 * registry's pool, so reports made after a plugin is gone stay valid.
 *
 * The registry's memory is its own (an unmanaged APR pool), not the
 * caller's: when the caller's pool goes from one of the registry's own
 * tasks (which cannot wait for itself), the registry is freed, and its
 * plugins unloaded, by the last of its tasks to leave.
 *
 * Adding and loading are for one thread at a time (set-up, or a reload
 * with its own lock); lookups and submits may run concurrently with them
 * and with each other.
 */
#include "config.h"
#include "registry_private.h"
#include "task_root.h"
#include "os/fork.h"

#include <apr_lib.h>
#include <apr_fnmatch.h>
#include <apr_strings.h>

#include <stdlib.h>
#include <string.h>

/* The registry whose task the calling thread runs (innermost), or NULL. */
static _Thread_local const pp_registry_t *running_in;

/* Made before a fork, in this child of it (fork.h)? Then it is dead
 * here: its locks and its task pools' allocator may be held by threads
 * that are not here. */
static int reg_forked(const pp_registry_t *reg)
{
    return reg->gen != pp__fork_generation();
}

static apr_status_t registry_cleanup(void *data)
{
    pp_registry_t *reg = data;

    if (reg_forked(reg)) {    /* what it counts in flight ran in the parent */
        pp__registry_free_plugins(reg);
        apr_pool_destroy(reg->p);
        return APR_SUCCESS;
    }
    pp__mutex_lock(reg->lock);
    if (running_in == reg) {
        /* inflight counts the caller, so it is not zero yet. */
        reg->orphaned = 1;
        pp__mutex_unlock(reg->lock);
        return APR_SUCCESS;
    }
    while (reg->inflight > 0) {
        reg->nwaiting++;
        pp__cond_wait(reg->drained, reg->lock);
        reg->nwaiting--;
    }
    pp__mutex_unlock(reg->lock);
    pp__registry_free_plugins(reg);
    apr_pool_destroy(reg->p);
    return APR_SUCCESS;
}

void pp__registry_free_plugins(pp_registry_t *reg)
{
    int i;

    for (i = reg->unloaded->nelts; i-- > 0;)
        apr_pool_destroy(APR_ARRAY_IDX(reg->unloaded, i, pp__plugin_t *)->p);
    for (i = reg->plugins->nelts; i-- > 0;)
        apr_pool_destroy(APR_ARRAY_IDX(reg->plugins, i, pp__plugin_t *)->p);
    apr_array_clear(reg->unloaded);
    apr_array_clear(reg->plugins);
}

apr_status_t pp_registry_create(pp_registry_t **out, apr_pool_t *caller)
{
    pp_registry_t *reg;
    apr_status_t rv;
    apr_pool_t *p;

    if (!out || !caller)
        return APR_EINVAL;
    *out = NULL;
    rv = apr_pool_create_unmanaged_ex(&p, NULL, NULL);
    if (rv != APR_SUCCESS)
        return rv;
    reg = apr_pcalloc(p, sizeof(*reg));
    if (!reg) {
        apr_pool_destroy(p);
        return APR_ENOMEM;
    }
    reg->p = p;
    reg->gen = pp__fork_watch();
    rv = pp__mutex_create(&reg->lock, p);
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&reg->drained, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_rwlock_create(&reg->names, p);
    if (rv == APR_SUCCESS)
        rv = pp__task_root_create(&reg->task_root, p);
    if (rv != APR_SUCCESS)
        goto fail;

    reg->by_name = apr_hash_make(p);
    reg->sorted = apr_array_make(p, 16, sizeof(pp__type_rec_t *));
    reg->plugins = apr_array_make(p, 4, sizeof(pp__plugin_t *));
    reg->unloaded = apr_array_make(p, 4, sizeof(pp__plugin_t *));
    reg->staged = apr_array_make(p, 8, sizeof(pp__type_rec_t *));
    reg->host = apr_pcalloc(p, sizeof(*reg->host));
    reg->host->info.name = "(host)";
    reg->host->info.version = PP_VERSION_STRING;
    reg->host->p = NULL;    /* nothing to unload: the host's code */
    apr_pool_pre_cleanup_register(caller, reg, registry_cleanup);
    *out = reg;
    return APR_SUCCESS;

fail:
    apr_pool_destroy(p);
    return rv;
}

/* "family.verb": letters, digits, '_' and '-', exactly one dot inside. */
static int valid_name(const char *name)
{
    const char *dot = strchr(name, '.'), *c;

    if (!dot || dot == name || !dot[1] || strchr(dot + 1, '.'))
        return 0;
    for (c = name; *c; c++)
        if (!(apr_isalnum(*c) || *c == '_' || *c == '-' || *c == '.'))
            return 0;
    return 1;
}

pp__type_rec_t *pp__registry_lookup(const pp_registry_t *reg, const char *name)
{
    pp__type_rec_t *rec;

    apr_thread_rwlock_rdlock(reg->names);
    rec = apr_hash_get(reg->by_name, name, APR_HASH_KEY_STRING);
    apr_thread_rwlock_unlock(reg->names);
    return rec;
}

static void insert_sorted(pp_registry_t *reg, pp__type_rec_t *rec);

/* Called with names write-locked. */
static void publish_locked(pp_registry_t *reg, pp__type_rec_t *rec)
{
    apr_hash_set(reg->by_name, rec->type.name, APR_HASH_KEY_STRING, rec);
    insert_sorted(reg, rec);
}

static pp__type_rec_t *staged_lookup(const pp_registry_t *reg, const char *name)
{
    int i;

    for (i = 0; i < reg->staged->nelts; i++) {
        pp__type_rec_t *r = APR_ARRAY_IDX(reg->staged, i, pp__type_rec_t *);
        if (strcmp(r->type.name, name) == 0)
            return r;
    }
    return NULL;
}

static void insert_sorted(pp_registry_t *reg, pp__type_rec_t *rec)
{
    int i;

    APR_ARRAY_PUSH(reg->sorted, pp__type_rec_t *) = rec;
    for (i = reg->sorted->nelts - 1; i > 0; i--) {
        pp__type_rec_t **a = &APR_ARRAY_IDX(reg->sorted, i - 1, pp__type_rec_t *);
        if (strcmp(a[0]->type.name, rec->type.name) <= 0)
            break;
        a[1] = a[0];
        a[0] = rec;
    }
}

apr_status_t pp__registry_add(pp_registry_t *reg, const pp_task_type_t *type)
{
    pp__type_rec_t *rec, *dup;
    pp__plugin_t *owner = reg->loading ? reg->loading : reg->host;

    if (!type->name || !type->run || !valid_name(type->name))
        return APR_EINVAL;
    dup = pp__registry_lookup(reg, type->name);
    if (!dup && reg->loading)
        dup = staged_lookup(reg, type->name);
    if (dup) {
        apr_snprintf(reg->load_detail, sizeof(reg->load_detail),
                     "task type '%s' is registered already by plugin '%s'%s%s",
                     type->name, dup->plugin->info.name,
                     dup->plugin->info.path ? " from " : "",
                     dup->plugin->info.path ? dup->plugin->info.path : "");
        return PP_EDUPTYPE;
    }
    rec = apr_pcalloc(reg->p, sizeof(*rec));
    rec->type = *type;
    rec->type.name = apr_pstrdup(reg->p, type->name);
    rec->type.summary = apr_pstrdup(reg->p, type->summary ? type->summary : "");
    rec->type.owner = rec;
    rec->magic = PP__TYPE_MAGIC;
    rec->reg = reg;
    rec->plugin = owner;
    if (reg->loading) {
        APR_ARRAY_PUSH(reg->staged, pp__type_rec_t *) = rec;
        return APR_SUCCESS;
    }
    apr_thread_rwlock_wrlock(reg->names);
    publish_locked(reg, rec);
    apr_thread_rwlock_unlock(reg->names);
    return APR_SUCCESS;
}

apr_status_t pp_registry_add(pp_registry_t *reg, const pp_task_type_t *type)
{
    apr_status_t rv;

    if (!reg || !type)
        return APR_EINVAL;
    rv = pp__registry_add(reg, type);
    /* A plugin's init may ignore a failed add; its load must not succeed. */
    if (rv != APR_SUCCESS && reg->loading && reg->load_status == APR_SUCCESS)
        reg->load_status = rv;
    return rv;
}

void pp__registry_commit(pp_registry_t *reg)
{
    int i;

    apr_thread_rwlock_wrlock(reg->names);
    for (i = 0; i < reg->staged->nelts; i++)
        publish_locked(reg, APR_ARRAY_IDX(reg->staged, i, pp__type_rec_t *));
    apr_thread_rwlock_unlock(reg->names);
    apr_array_clear(reg->staged);
}

const pp_task_type_t *pp_registry_find(const pp_registry_t *reg, const char *name)
{
    pp__type_rec_t *rec;

    if (!reg || !name)
        return NULL;
    rec = pp__registry_lookup(reg, name);
    return rec ? &rec->type : NULL;
}

apr_size_t pp_registry_count(const pp_registry_t *reg)
{
    apr_size_t n;

    if (!reg)
        return 0;
    apr_thread_rwlock_rdlock(reg->names);
    n = (apr_size_t)reg->sorted->nelts;
    apr_thread_rwlock_unlock(reg->names);
    return n;
}

const pp_task_type_t *pp_registry_type(const pp_registry_t *reg, apr_size_t i)
{
    const pp_task_type_t *type = NULL;

    if (!reg)
        return NULL;
    apr_thread_rwlock_rdlock(reg->names);
    if (i < (apr_size_t)reg->sorted->nelts)
        type = &APR_ARRAY_IDX(reg->sorted, i, pp__type_rec_t *)->type;
    apr_thread_rwlock_unlock(reg->names);
    return type;
}

/* The registry record a type is, or is a copy of: its identity is the
 * record its hidden owner field names, not its address, so that a copy of
 * a registered type still keeps its plugin loaded while its task runs. A
 * copy must run the same code under the same name; one that changed them
 * is a type of the caller's own. */
static const pp__type_rec_t *rec_of(const pp_task_type_t *type)
{
    const pp__type_rec_t *rec = type ? type->owner : NULL;

    if (!rec || rec->magic != PP__TYPE_MAGIC)
        return NULL;
    if (&rec->type == type)
        return rec;
    return rec->type.run == type->run && type->name
           && strcmp(rec->type.name, type->name) == 0 ? rec : NULL;
}

const pp_plugin_info_t *pp_registry_owner(const pp_registry_t *reg,
                                          const pp_task_type_t *type)
{
    const pp__type_rec_t *rec = rec_of(type);

    return rec && rec->reg == reg ? &rec->plugin->info : NULL;
}

int pp_registry_idempotent(const pp_registry_t *reg, const pp_task_type_t *type)
{
    const pp_plugin_info_t *info = reg && type ? pp_registry_owner(reg, type) : NULL;
    const char *const *pattern;

    if (!info || !info->idempotent)
        return 0;
    for (pattern = info->idempotent; *pattern; pattern++)
        if (apr_fnmatch(*pattern, type->name, 0) == APR_SUCCESS)
            return 1;
    return 0;
}

/* Edit distance, for "did you mean"; names are short. */
static apr_size_t distance(const char *a, const char *b)
{
    apr_size_t la = strlen(a), lb = strlen(b), i, j, row[64], prev, tmp;

    if (la >= 64 || lb >= 64)
        return (apr_size_t)-1;
    for (j = 0; j <= lb; j++)
        row[j] = j;
    for (i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            apr_size_t best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            tmp = row[j];
            row[j] = best;
            prev = tmp;
        }
    }
    return row[lb];
}

const pp_task_type_t *pp_registry_suggest(const pp_registry_t *reg, const char *name)
{
    const pp_task_type_t *best = NULL;
    apr_size_t best_d = (apr_size_t)-1, limit, i;

    if (!reg || !name)
        return NULL;
    limit = strlen(name) / 3 + 1;
    for (i = 0; i < pp_registry_count(reg); i++) {
        const pp_task_type_t *t = pp_registry_type(reg, i);
        apr_size_t d = distance(name, t->name);
        const char *dot = strchr(t->name, '.');
        /* "sha1" for "hash.sha1": the verb alone is a fine guess too. */
        if (dot && strcmp(dot + 1, name) == 0)
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = t;
        }
    }
    return best_d <= limit ? best : NULL;
}

/* ------------------------------------------------------------ submits */

/* A task of rec's type comes: it holds its registry and its plugin, or
 * PP_ENOTYPE if the plugin was unloaded (a copy of a type found before). */
static apr_status_t reg_enter(const pp__type_rec_t *rec)
{
    pp_registry_t *reg = rec->reg;
    apr_status_t rv = APR_SUCCESS;

    pp__mutex_lock(reg->lock);
    if (rec->plugin->unloaded) {
        rv = PP_ENOTYPE;
    }
    else {
        reg->inflight++;
        rec->plugin->inflight++;
    }
    pp__mutex_unlock(reg->lock);
    return rv;
}

/* Remove pl from arr (pointers), if it is there. */
static void array_remove(apr_array_header_t *arr, const pp__plugin_t *pl)
{
    int i;

    for (i = 0; i < arr->nelts; i++)
        if (APR_ARRAY_IDX(arr, i, pp__plugin_t *) == pl) {
            memmove(&APR_ARRAY_IDX(arr, i, pp__plugin_t *),
                    &APR_ARRAY_IDX(arr, i + 1, pp__plugin_t *),
                    (apr_size_t)(arr->nelts - i - 1) * sizeof(pp__plugin_t *));
            arr->nelts--;
            return;
        }
}

/* Under the lock, like a group's leave: the registry may be freed the
 * moment the cleanup sees zero and the lock is released. The last task of
 * an unloaded plugin unmaps it first (its code has returned), while its
 * own count still keeps the registry. */
static void reg_leave(const pp__type_rec_t *rec)
{
    pp_registry_t *reg = rec->reg;
    pp__plugin_t *pl = rec->plugin;
    int free_it;

    pp__mutex_lock(reg->lock);
    if (--pl->inflight == 0 && pl->unloaded) {
        apr_pool_t *unmap = pl->p;

        array_remove(reg->unloaded, pl);
        pp__mutex_unlock(reg->lock);
        apr_pool_destroy(unmap);    /* the registry is still held: ours */
        pp__mutex_lock(reg->lock);
    }
    if (--reg->inflight == 0 && reg->nwaiting)
        pp__cond_broadcast(reg->drained);
    free_it = reg->inflight == 0 && reg->orphaned;
    pp__mutex_unlock(reg->lock);
    if (free_it) {
        pp__registry_free_plugins(reg);    /* the plugins' code has returned */
        apr_pool_destroy(reg->p);
    }
}

apr_status_t pp_registry_unload(pp_registry_t *reg, const char *plugin_name)
{
    pp__plugin_t *pl = NULL;
    apr_pool_t *unmap = NULL;
    int i;

    if (!reg || !plugin_name || reg->loading)
        return APR_EINVAL;
    if (reg_forked(reg))
        return PP_ESHUTDOWN;
    for (i = 0; i < reg->plugins->nelts && !pl; i++)
        if (strcmp(APR_ARRAY_IDX(reg->plugins, i, pp__plugin_t *)->info.name, plugin_name) == 0)
            pl = APR_ARRAY_IDX(reg->plugins, i, pp__plugin_t *);
    if (!pl)
        return APR_ENOENT;
    /* Its types go first: a lookup after this finds none of them. Their
     * records stay (in the registry's pool) for the tasks in flight and
     * for copies callers hold, which reg_enter() refuses. */
    apr_thread_rwlock_wrlock(reg->names);
    for (i = 0; i < reg->sorted->nelts;) {
        pp__type_rec_t *rec = APR_ARRAY_IDX(reg->sorted, i, pp__type_rec_t *);
        if (rec->plugin != pl) {
            i++;
            continue;
        }
        apr_hash_set(reg->by_name, rec->type.name, APR_HASH_KEY_STRING, NULL);
        memmove(&APR_ARRAY_IDX(reg->sorted, i, pp__type_rec_t *),
                &APR_ARRAY_IDX(reg->sorted, i + 1, pp__type_rec_t *),
                (apr_size_t)(reg->sorted->nelts - i - 1) * sizeof(pp__type_rec_t *));
        reg->sorted->nelts--;
    }
    apr_thread_rwlock_unlock(reg->names);
    pp__mutex_lock(reg->lock);
    pl->unloaded = 1;
    array_remove(reg->plugins, pl);    /* its name may be loaded again */
    if (pl->inflight == 0)
        unmap = pl->p;
    else
        APR_ARRAY_PUSH(reg->unloaded, pp__plugin_t *) = pl;
    pp__mutex_unlock(reg->lock);
    if (unmap)
        apr_pool_destroy(unmap);
    return APR_SUCCESS;
}

typedef struct typed_task {
    const pp__type_rec_t *rec;
    void                 *arg;
    apr_pool_t           *p;      /* the task's own pool, or NULL */
} typed_task;

static apr_status_t typed_run(void *data, pp_task_ctx_t *ctx)
{
    typed_task *t = data;
    const pp_registry_t *outer = running_in;
    apr_status_t rv;

    running_in = t->rec->reg;
    rv = t->rec->type.run(t->arg, ctx);
    running_in = outer;
    return rv;
}

/* Frees the wrapper and drops the registry reference; with release set,
 * the argument is released first (the argument is the pool's by then). */
static void typed_finish(typed_task *t, int release)
{
    const pp__type_rec_t *rec = t->rec;

    if (release && rec->type.release)
        rec->type.release(t->arg);
    if (t->p)
        apr_pool_destroy(t->p);    /* t lives in it */
    else
        free(t);
    reg_leave(rec);
}

static void typed_release(void *data)
{
    typed_finish(data, 1);
}

/* t's task entered its registry and plugin (reg_enter). On refusal the
 * argument is released only if the caller never saw it (pp_submit_named
 * parsed it); pp_submit_typed's caller keeps its own. */
static apr_status_t submit_wrapped(pp_pool_t *pool, typed_task *t, pp_group_t *group,
                                   int release_refused)
{
    pp_task_t task;
    apr_status_t rv;

    memset(&task, 0, sizeof(task));
    task.fn = typed_run;
    task.arg = t;
    task.release = typed_release;
    task.name = t->rec->type.name;
    rv = pp_submit_task_sized(pool, &task, sizeof(task), group, 0);
    if (rv != APR_SUCCESS)
        typed_finish(t, release_refused);
    return rv;
}

apr_status_t pp_submit_typed(pp_pool_t *pool, const pp_task_type_t *type, void *arg,
                             pp_group_t *group)
{
    const pp__type_rec_t *rec = rec_of(type);
    typed_task *t;
    pp_task_t task;
    apr_status_t rv;

    if (!pool || !type || !type->run)
        return APR_EINVAL;
    if (rec && reg_forked(rec->reg))
        return PP_ESHUTDOWN;
    if (!rec) {
        /* Not from a registry: nothing to keep loaded, no wrapper needed. */
        memset(&task, 0, sizeof(task));
        task.fn = type->run;
        task.arg = arg;
        task.release = type->release;
        task.name = type->name;
        return pp_submit_task_sized(pool, &task, sizeof(task), group, 0);
    }
    rv = reg_enter(rec);    /* PP_ENOTYPE: its plugin was unloaded */
    if (rv != APR_SUCCESS)
        return rv;
    t = malloc(sizeof(*t));
    if (!t) {
        reg_leave(rec);
        return APR_ENOMEM;
    }
    t->rec = rec;
    t->arg = arg;
    t->p = NULL;
    return submit_wrapped(pool, t, group, 0);
}

apr_status_t pp_submit_named(pp_pool_t *pool, const pp_registry_t *reg,
                             const char *name, const char *text, pp_group_t *group)
{
    pp__type_rec_t *rec;
    typed_task *t;
    apr_pool_t *p;
    apr_status_t rv;

    if (!pool || !reg || !name)
        return APR_EINVAL;
    if (reg_forked(reg))
        return PP_ESHUTDOWN;
    rec = pp__registry_lookup(reg, name);
    if (!rec)
        return PP_ENOTYPE;
    /* Held from here, so that its parse (plugin code) runs mapped; an
     * unload since the lookup refuses it. */
    rv = reg_enter(rec);
    if (rv != APR_SUCCESS)
        return rv;
    rv = apr_pool_create(&p, reg->task_root);
    if (rv != APR_SUCCESS) {
        reg_leave(rec);
        return rv;
    }
    t = apr_palloc(p, sizeof(*t));
    t->rec = rec;
    t->p = p;
    t->arg = NULL;
    if (!text)
        text = "";
    if (rec->type.parse)
        rv = rec->type.parse(&t->arg, text, p);
    else
        t->arg = apr_pstrdup(p, text);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(p);    /* nothing to release: parse failed */
        reg_leave(rec);
        return rv;
    }
    return submit_wrapped(pool, t, group, 1);
}
