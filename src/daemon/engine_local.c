/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine that runs tasks in this process (engine.h): a parkpool pool
 * and a load of the plugin folder.
 *
 * Lifetimes: the loads live in a pool created before the parkpool pool's,
 * so that however the parent pool goes, the workers drain and stop before
 * any plugin is unloaded (APR destroys subpools newest first). A load
 * replaced by reload() is destroyed (its plugins unloaded, its memory
 * freed) when the last task of its types has ended, so reloads under load
 * neither run old code for new tasks nor pile up. That last task may end
 * on any worker: the loads' pool has a locked allocator, and a load's
 * count of tasks the engine's lock.
 *
 * Threads: find, suggest, run and reload are the owner's (the service's
 * loop, or the worker process's reader): a task's argument is parsed on
 * the thread that replaces loads, so its plugin cannot go meanwhile.
 */
#include "engine.h"
#include "plugin/task_root.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <string.h>

#define LOG(e, level, ...) svc_logf((e)->cfg.log, (e)->cfg.baton, level, __VA_ARGS__)

typedef struct load_t {
    apr_pool_t    *p;
    pp_registry_t *reg;
    apr_uint64_t   inflight;    /* under the engine's lock */
    int            retired;     /* under the engine's lock */
} load_t;

typedef struct local_t local_t;

/* A task, in a pool of its own (from task_root) with its argument. */
typedef struct ltask_t {
    apr_pool_t           *p;
    local_t              *e;
    load_t               *load;
    const pp_task_type_t *type;
    void                 *arg;
    void                 *job;
    int                   ran;
    apr_status_t          status;
} ltask_t;

struct local_t {
    svc_engine_t         base;
    apr_pool_t          *p;
    svc_engine_config_t  cfg;
    svc_sink_t           sink;
    apr_pool_t          *loads_p;
    apr_thread_mutex_t  *lock;
    load_t              *load;       /* the current one */
    apr_pool_t          *task_root;
    pp_pool_t           *pool;
    int                  shut;       /* the pool was shut down */
};

/* The task the calling worker runs, for the output hook. */
static _Thread_local ltask_t *current;

/* ------------------------------------------------------------ pool hooks */

static void on_task_error(apr_status_t status, const char *task_name, void *baton)
{
    char msg[256];

    LOG((local_t *)baton, status == PP_ECANCELLED ? PP_LOG_INFO : PP_LOG_WARN, "task %s %s: %s",
        task_name, status == PP_ECANCELLED ? "cancelled" : "failed",
        pp_strerror(status, msg, sizeof(msg)));
}

static void on_pool_log(int level, const char *message, void *baton)
{
    LOG((local_t *)baton, level, "pool: %s", message);
}

static void on_output(const char *line, const char *task_name, void *baton)
{
    local_t *e = baton;

    if (current)
        e->sink.output(current->job, line, e->sink.baton);
    else
        LOG(e, PP_LOG_INFO, "%s: %s", task_name, line);
}

/* ------------------------------------------------------------ loads */

static apr_status_t load_new(local_t *e, load_t **out)
{
    apr_pool_t *p;
    load_t *load;
    char err[8192], *line, *last;
    apr_status_t rv;

    if ((rv = apr_pool_create(&p, e->loads_p)) != APR_SUCCESS)
        return rv;
    load = apr_pcalloc(p, sizeof(*load));
    load->p = p;
    if ((rv = pp_registry_create(&load->reg, p)) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return rv;
    }
    err[0] = '\0';
    rv = pp_registry_load_dir(load->reg, e->cfg.plugin_dir, err, sizeof(err));
    for (line = apr_strtok(err, "\n", &last); line; line = apr_strtok(NULL, "\n", &last))
        LOG(e, PP_LOG_WARN, "plugins: %s", line);
    if (pp_registry_count(load->reg) == 0) {
        /* A folder gone or emptied by mistake must not leave the service
         * unable to run anything: the caller keeps what it had. */
        apr_pool_destroy(p);
        return rv != APR_SUCCESS ? rv : PP_ENOTYPE;
    }
    LOG(e, PP_LOG_INFO, "plugins: %" APR_SIZE_T_FMT " task types from %s",
        pp_registry_count(load->reg), e->cfg.plugin_dir);
    *out = load;
    return APR_SUCCESS;
}

/* Each plugin of reg, "name version", keyed by name. */
static apr_hash_t *plugins_of(pp_registry_t *reg, apr_pool_t *p)
{
    apr_hash_t *h = apr_hash_make(p);
    apr_size_t i;

    for (i = 0; i < pp_registry_count(reg); i++) {
        const pp_plugin_info_t *info = pp_registry_owner(reg, pp_registry_type(reg, i));
        if (info && info->name)
            apr_hash_set(h, info->name, APR_HASH_KEY_STRING,
                         info->version ? info->version : "?");
    }
    return h;
}

/* Log what a reload changed: plugins added, gone, or of another version. */
static void log_changes(local_t *e, pp_registry_t *old, pp_registry_t *now)
{
    apr_pool_t *p;
    apr_hash_t *before, *after;
    apr_hash_index_t *hi;
    const char *said = "";

    apr_pool_create(&p, e->p);
    before = plugins_of(old, p);
    after = plugins_of(now, p);
    for (hi = apr_hash_first(p, after); hi; hi = apr_hash_next(hi)) {
        const char *name = apr_hash_this_key(hi), *version = apr_hash_this_val(hi);
        const char *was = apr_hash_get(before, name, APR_HASH_KEY_STRING);
        if (!was)
            said = apr_psprintf(p, "%s, %s %s added", said, name, version);
        else if (strcmp(was, version) != 0)
            said = apr_psprintf(p, "%s, %s %s -> %s", said, name, was, version);
    }
    for (hi = apr_hash_first(p, before); hi; hi = apr_hash_next(hi))
        if (!apr_hash_get(after, apr_hash_this_key(hi), APR_HASH_KEY_STRING))
            said = apr_psprintf(p, "%s, %s removed", said, (const char *)apr_hash_this_key(hi));
    LOG(e, PP_LOG_INFO, "reload: %s", *said ? said + 2 : "no plugin added, removed or "
        "of another version (each loaded again from its file)");
    apr_pool_destroy(p);
}

/* Destroying the load's pool unloads its plugins: no task of it is
 * queued or running any more. */
static void load_drop(local_t *e, load_t *load)
{
    LOG(e, PP_LOG_INFO, "plugins: the old load unloaded");
    apr_pool_destroy(load->p);
}

/* A task of load has ended, or was never queued: the last one of a
 * retired load drops it. */
static void load_leave(local_t *e, load_t *load)
{
    int last;

    apr_thread_mutex_lock(e->lock);
    last = --load->inflight == 0 && load->retired;
    apr_thread_mutex_unlock(e->lock);
    if (last)
        load_drop(e, load);
}

/* ------------------------------------------------------------ tasks */

static apr_status_t task_run(void *arg, pp_task_ctx_t *ctx)
{
    ltask_t *t = arg;
    local_t *e = t->e;

    if (e->sink.started)
        e->sink.started(t->job, e->sink.baton);
    current = t;
    t->ran = 1;
    t->status = t->type->run(t->arg, ctx);
    current = NULL;
    return t->status;
}

/* Once per task, after task_run or instead of it (a cancel dropped it). */
static void task_release(void *arg)
{
    ltask_t *t = arg;
    local_t *e = t->e;
    load_t *load = t->load;
    char msg[256];

    if (t->type->release)
        t->type->release(t->arg);
    if (!t->ran || t->status == PP_ECANCELLED)
        e->sink.done(t->job, SVC_OUTCOME_CANCELLED, NULL, e->sink.baton);
    else if (t->status == APR_SUCCESS)
        e->sink.done(t->job, SVC_OUTCOME_OK, NULL, e->sink.baton);
    else
        e->sink.done(t->job, SVC_OUTCOME_FAILED, pp_strerror(t->status, msg, sizeof(msg)),
                     e->sink.baton);
    apr_pool_destroy(t->p);
    /* Last: it may unload the code release just ran. */
    load_leave(e, load);
}

static apr_status_t l_run(svc_engine_t *be, void *job, apr_uint64_t id, const char *type_name,
                          const char *text)
{
    local_t *e = (local_t *)be;
    const pp_task_type_t *type = pp_registry_find(e->load->reg, type_name);
    pp_task_t task;
    apr_pool_t *p;
    ltask_t *t;
    char msg[256], why[320];
    apr_status_t rv;

    (void)id;
    if (!type) {
        /* The service looked before, in a load since replaced. */
        e->sink.done(job, SVC_OUTCOME_FAILED, "unknown task type (the plugins were reloaded)",
                     e->sink.baton);
        return APR_SUCCESS;
    }
    if ((rv = apr_pool_create(&p, e->task_root)) != APR_SUCCESS)
        return rv;
    t = apr_pcalloc(p, sizeof(*t));
    t->p = p;
    t->e = e;
    t->type = type;
    t->job = job;
    rv = type->parse ? type->parse(&t->arg, text, p) : APR_SUCCESS;
    if (!type->parse)
        t->arg = apr_pstrdup(p, text);
    if (rv != APR_SUCCESS) {
        /* A task that cannot start, as a task that failed: whoever runs
         * the plugins elsewhere could not tell before taking it. */
        apr_snprintf(why, sizeof(why), "bad argument: %s", pp_strerror(rv, msg, sizeof(msg)));
        e->sink.done(job, SVC_OUTCOME_FAILED, why, e->sink.baton);
        apr_pool_destroy(p);
        return APR_SUCCESS;
    }
    t->load = e->load;
    apr_thread_mutex_lock(e->lock);
    t->load->inflight++;
    apr_thread_mutex_unlock(e->lock);
    memset(&task, 0, sizeof(task));
    task.fn = task_run;
    task.arg = t;
    task.release = task_release;
    task.name = type->name;
    /* The pool is unbounded: the service bounds what each client has in
     * flight instead, so this never waits. */
    rv = pp_submit_task(e->pool, &task, NULL, 0);
    if (rv != APR_SUCCESS) {
        if (type->release)
            type->release(t->arg);
        apr_pool_destroy(p);
        load_leave(e, e->load);    /* the current load: never its last */
    }
    return rv;
}

/* ------------------------------------------------------------ the engine */

static const pp_task_type_t *l_find(svc_engine_t *be, const char *type)
{
    return pp_registry_find(((local_t *)be)->load->reg, type);
}

static const pp_task_type_t *l_suggest(svc_engine_t *be, const char *type)
{
    return pp_registry_suggest(((local_t *)be)->load->reg, type);
}

/* Shared with engine_child.c's stand-ins. */
const char *svc__types_of(const pp_registry_t *reg, apr_pool_t *p)
{
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    apr_size_t i;

    for (i = 0; i < pp_registry_count(reg); i++)
        APR_ARRAY_PUSH(names, const char *) = pp_registry_type(reg, i)->name;
    return apr_array_pstrcat(p, names, ' ');
}

static const char *l_types(svc_engine_t *be, apr_pool_t *p)
{
    return svc__types_of(((local_t *)be)->load->reg, p);
}

static void l_reload(svc_engine_t *be)
{
    local_t *e = (local_t *)be;
    load_t *load, *old = e->load;
    char msg[256];
    int unused;
    apr_status_t rv = load_new(e, &load);

    if (rv != APR_SUCCESS) {
        LOG(e, PP_LOG_ERROR, "reload of %s failed (%s): the old plugins stay",
            e->cfg.plugin_dir, pp_strerror(rv, msg, sizeof(msg)));
        return;
    }
    log_changes(e, old->reg, load->reg);
    e->load = load;
    apr_thread_mutex_lock(e->lock);
    old->retired = 1;
    unused = old->inflight == 0;
    if (!unused)
        LOG(e, PP_LOG_INFO, "plugins: the old load stays for its %" APR_UINT64_T_FMT
            " task%s in flight", old->inflight, old->inflight == 1 ? "" : "s");
    apr_thread_mutex_unlock(e->lock);
    if (unused)
        load_drop(e, old);
}

static apr_status_t l_start(svc_engine_t *be, const svc_sink_t *sink, apr_pollset_t *ps)
{
    local_t *e = (local_t *)be;
    pp_config_t pcfg;
    char msg[256];
    apr_status_t rv;

    (void)ps;
    e->sink = *sink;
    /* Before the pool's own pool: see the top of this file. */
    rv = pp__task_root_create(&e->loads_p, e->p);
    if (rv == APR_SUCCESS)
        rv = pp__task_root_create(&e->task_root, e->p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_mutex_create(&e->lock, APR_THREAD_MUTEX_DEFAULT, e->p);
    if (rv == APR_SUCCESS && (rv = load_new(e, &e->load)) != APR_SUCCESS) {
        LOG(e, PP_LOG_ERROR, "no plugins in %s: %s", e->cfg.plugin_dir,
            pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    if (rv == APR_SUCCESS) {
        pp_config_init(&pcfg);
        pcfg.threads = e->cfg.threads;
        pcfg.name_prefix = "ppsvc";
        pcfg.on_output = on_output;
        pcfg.on_task_error = on_task_error;
        pcfg.on_log = on_pool_log;
        pcfg.baton = e;
        rv = pp_pool_create(&e->pool, &pcfg, e->p);
    }
    if (rv != APR_SUCCESS)
        LOG(e, PP_LOG_ERROR, "cannot start the workers: %s", pp_strerror(rv, msg, sizeof(msg)));
    return rv;
}

static void l_event(svc_engine_t *be, const apr_pollfd_t *pfd)
{
    (void)be;
    (void)pfd;
}

static apr_interval_time_t l_tend(svc_engine_t *be)
{
    (void)be;
    return -1;
}

static void l_cancel(svc_engine_t *be, apr_interval_time_t grace)
{
    local_t *e = (local_t *)be;

    if (!e->shut) {
        e->shut = 1;
        pp_pool_shutdown(e->pool, PP_CANCEL, grace);
    }
}

static void l_stop(svc_engine_t *be)
{
    local_t *e = (local_t *)be;

    /* After a cancel, what still runs is left to the process's end:
     * waiting for a task that ignores its cancel could take for ever. */
    if (!e->shut) {
        e->shut = 1;
        pp_pool_shutdown(e->pool, PP_DRAIN, -1);
    }
}

static const svc_engine_ops_t local_ops = {
    l_start, l_find, l_suggest, l_types, l_run, l_reload, l_event, l_tend, l_cancel, l_stop
};

apr_status_t svc_engine_local_create(svc_engine_t **out, const svc_engine_config_t *cfg,
                                     apr_pool_t *p)
{
    local_t *e;

    if (!out || !cfg || !cfg->plugin_dir || !p)
        return APR_EINVAL;
    e = apr_pcalloc(p, sizeof(*e));
    e->base.ops = &local_ops;
    e->p = p;
    e->cfg = *cfg;
    *out = &e->base;
    return APR_SUCCESS;
}
