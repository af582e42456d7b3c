/*
 * The pool core: workers, the sleep/wake protocol, shutdown and stats.
 *
 * Sleep/wake protocol (design.md section 3; models/sleepwake.pml checks it)
 * -----------------------------------------------------------------------
 * Invariant: a worker is on the idle stack only if, at the moment it was
 * pushed, the queue was empty and it held the queue lock. A submitter
 * pushes its task and pops at most one idle worker under that same lock,
 * then unparks it after unlocking.
 *
 * So there is no window between "saw the queue empty" and "announced I am
 * idle": both happen in one critical section, and a submitter either runs
 * before it (the worker sees the task) or after it (the submitter sees the
 * worker). The unpark may reach the parker before the worker parks; the
 * parker's token keeps it (park.h). Each submit wakes at most one worker,
 * and only when one is idle: no herd. A worker popped from the stack is
 * owed exactly one token, by the thread that popped it; nobody else can
 * unpark it, so after park() returns it is no longer on the stack.
 *
 * The idle stack is LIFO: the most recently idle worker has the warmest
 * cache and the others stay asleep longest.
 *
 * The lock is held only to move a task in or out of the queue, never while
 * a task runs. Shutdown changes state under the lock and wakes every idle
 * worker; a worker that finds the queue empty in any state but RUNNING exits
 * instead of going idle, so no worker can sleep through a shutdown.
 */
#include "config.h"
#include "pool_private.h"
#include "fault.h"
#include "atomic.h"
#include "park.h"
#include "platform.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>

#include <stdarg.h>
#include <string.h>

enum { STATE_RUNNING, STATE_DRAINING, STATE_CANCELLING };
enum { JOIN_NONE, JOIN_BUSY, JOIN_DONE };

/* Counters a worker alone writes sit on its own cache lines, so the hot
 * path never bounces a line between cores; pp_pool_stats() sums them. */
#define CACHE_LINE 64

typedef struct pp__worker_t {
    pp_pool_t      *pool;
    pp__parker_t   *parker;
    apr_thread_t   *thread;
    pp_task_ctx_t  *ctx;        /* the running task, NULL between tasks */
    const char     *name;
    apr_uint32_t    index;
    pp__counter_t completed, failed, parks;    /* this worker's only */
} pp__worker_t;

typedef union worker_slot {
    pp__worker_t w;
    char pad[2 * CACHE_LINE];
} worker_slot;

struct pp_task_ctx_t {
    pp__worker_t      *worker;
    const pp__entry_t *entry;
};

struct pp_pool_t {
    apr_pool_t          *p;
    pp_config_t          cfg;
    worker_slot         *slots;
    apr_uint32_t         nstarted;  /* threads created; joined at the end */

    apr_thread_mutex_t  *lock;      /* the queue lock: guards what follows */
    pp__queue_t          queue;
    pp__worker_t       **idle;      /* LIFO stack of parked workers */
    apr_uint32_t         nidle;
    apr_uint32_t         live;      /* workers not yet out of their loop */
    apr_uint32_t         nwaiting;  /* submitters blocked on not_full */
    int                  join;
    apr_thread_cond_t   *not_full;  /* bounded queue: submitters wait here */
    apr_thread_cond_t   *exited;    /* shutdown callers wait here */
    volatile apr_uint32_t state;    /* written under lock, read anywhere */

    /* Written under the lock (so already serialised) but read without it. */
    pp__counter_t submitted, started, unparks;
    pp__counter_t cancelled;
};

/* Set on each worker thread: tells nested submits and self-waits apart. */
static _Thread_local pp__worker_t *current;

static pp__worker_t *worker_at(pp_pool_t *pool, apr_uint32_t i)
{
    return &pool->slots[i].w;
}

/* Called with the lock held: take the most recently idle worker. */
static pp__worker_t *pop_idle(pp_pool_t *pool)
{
    if (pool->nidle == 0)
        return NULL;
    pp__counter_add(&pool->unparks, 1);    /* under the lock */
    return pool->idle[--pool->nidle];
}

static void pool_log(const pp_pool_t *pool, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats only when someone listens: a silent pool pays one test. */
static void pool_log(const pp_pool_t *pool, int level, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (!pool->cfg.on_log)
        return;
    va_start(ap, fmt);
    apr_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pool->cfg.on_log(level, msg, pool->cfg.baton);
}

static void run_entry(pp__worker_t *w, const pp__entry_t *e)
{
    pp_task_ctx_t ctx;
    apr_status_t rv;
    const pp_config_t *cfg = &w->pool->cfg;

    ctx.worker = w;
    ctx.entry = e;
    w->ctx = &ctx;
    rv = e->fn(e->arg, &ctx);
    w->ctx = NULL;
    /* Report before release: the name may belong to what release lets go
     * (a plugin's registry). Count after both, then tell the group, so that
     * whoever sees the group done or the counters settled sees it all. */
    if (rv != APR_SUCCESS && cfg->on_task_error)
        cfg->on_task_error(rv, e->name ? e->name : "", cfg->baton);
    if (e->release)
        e->release(e->arg);
    if (rv != APR_SUCCESS)
        pp__counter_add(&w->failed, 1);
    else
        pp__counter_add(&w->completed, 1);
    if (e->group)
        pp__group_leave(e->group, rv, 1, 1);
}

static void *APR_THREAD_FUNC worker_main(apr_thread_t *thread, void *data)
{
    pp__worker_t *w = data;
    pp_pool_t *pool = w->pool;
    pp__entry_t e;
    apr_uint32_t i;

    (void)thread;
    pp__thread_set_name(w->name);
    current = w;

    apr_thread_mutex_lock(pool->lock);
    for (;;) {
        if (pp__queue_pop(&pool->queue, &e)) {
            pp__counter_add(&pool->started, 1);
            if (pool->nwaiting)
                apr_thread_cond_signal(pool->not_full);
            apr_thread_mutex_unlock(pool->lock);
            run_entry(w, &e);
            apr_thread_mutex_lock(pool->lock);
            continue;
        }
        if (pool->state != STATE_RUNNING)
            break;
        /* Queue empty, lock held: announce idleness in the same critical
         * section as the check. This is the whole no-lost-wakeup argument. */
        pool->idle[pool->nidle++] = w;
        apr_thread_mutex_unlock(pool->lock);
        /* A short spin catches a token that is about to arrive without the
         * cost of sleeping; it is bounded, so an idle pool still sleeps. */
        for (i = 0; i < pool->cfg.spin && !pp__park_notified(w->parker); i++)
            ;
        pp__counter_add(&w->parks, 1);
        pp__park(w->parker);
        apr_thread_mutex_lock(pool->lock);
    }
    if (--pool->live == 0)
        apr_thread_cond_broadcast(pool->exited);
    apr_thread_mutex_unlock(pool->lock);
    current = NULL;
    return NULL;
}

/* Called with the lock held: wait until n more entries fit (or fail with
 * PP_ESHUTDOWN, or PP_EFULL under PP_NOWAIT). A worker must never wait for
 * room in its own pool's queue: if every worker did, nobody would make
 * room. Its submits go past the capacity. */
static apr_status_t wait_room(pp_pool_t *pool, apr_uint32_t n, apr_uint32_t flags)
{
    apr_uint32_t cap = pool->cfg.queue_capacity;
    int own = current && current->pool == pool;

    for (;;) {
        if (pool->state != STATE_RUNNING)
            return PP_ESHUTDOWN;
        if (cap == 0 || own || pp__queue_len(&pool->queue) + n <= cap)
            return APR_SUCCESS;
        if (flags & PP_NOWAIT)
            return PP_EFULL;
        pool->nwaiting++;
        apr_thread_cond_wait(pool->not_full, pool->lock);
        pool->nwaiting--;
    }
}

static apr_status_t enqueue(pp_pool_t *pool, const pp__entry_t *e,
                            apr_uint32_t flags)
{
    apr_status_t rv;
    pp__worker_t *wake = NULL;

    apr_thread_mutex_lock(pool->lock);
    rv = wait_room(pool, 1, flags);
    if (rv != APR_SUCCESS)
        goto out;
    rv = pp__queue_push(&pool->queue, e);
    if (rv != APR_SUCCESS)
        goto out;
    pp__counter_add(&pool->submitted, 1);
    wake = pop_idle(pool);
out:
    apr_thread_mutex_unlock(pool->lock);
    if (wake)
        pp__unpark(wake->parker);
    return rv;
}

apr_status_t pp_submit_task(pp_pool_t *pool, const pp_task_t *task,
                            pp_group_t *group, apr_uint32_t flags)
{
    pp__entry_t e;
    apr_status_t rv;

    if (!pool || !task || !task->fn || (flags & ~PP_NOWAIT))
        return APR_EINVAL;
    e.fn = task->fn;
    e.arg = task->arg;
    e.release = task->release;
    e.name = task->name;
    e.group = group;
    if (group) {
        rv = pp__group_enter(group, pool, 1);
        if (rv != APR_SUCCESS)
            return rv;
    }
    rv = enqueue(pool, &e, flags);
    if (rv != APR_SUCCESS && group)
        pp__group_leave(group, rv, 0, 1);
    return rv;
}

apr_status_t pp_submit_ex(pp_pool_t *pool, pp_task_fn fn, void *arg,
                          pp_group_t *group, apr_uint32_t flags)
{
    pp_task_t t;

    t.fn = fn;
    t.arg = arg;
    t.release = NULL;
    t.name = NULL;
    return pp_submit_task(pool, &t, group, flags);
}

apr_status_t pp_submit(pp_pool_t *pool, pp_task_fn fn, void *arg)
{
    return pp_submit_ex(pool, fn, arg, NULL, 0);
}

/* Wake-ups a batch makes after unlocking; more idle workers than this are
 * unparked under the lock, which is correct, only slower. */
#define BATCH_WAKE_MAX 64

apr_status_t pp_submit_batch(pp_pool_t *pool, const pp_task_fn *fns, void *const *args,
                             apr_uint32_t n, pp_group_t *group)
{
    pp__worker_t *wake[BATCH_WAKE_MAX], *w;
    apr_uint32_t i, nwake = 0, cap = pool ? pool->cfg.queue_capacity : 0;
    apr_status_t rv = APR_SUCCESS;
    pp__entry_t e;

    if (!pool || !fns || (n && !args))
        return APR_EINVAL;
    for (i = 0; i < n; i++)
        if (!fns[i])
            return APR_EINVAL;
    if (n == 0)
        return APR_SUCCESS;
    if (cap && !(current && current->pool == pool) && n > cap)
        return APR_EINVAL;    /* it could never fit */
    if (group) {
        rv = pp__group_enter(group, pool, n);
        if (rv != APR_SUCCESS)
            return rv;
    }
    e.release = NULL;
    e.name = NULL;
    e.group = group;

    apr_thread_mutex_lock(pool->lock);
    rv = wait_room(pool, n, 0);
    if (rv != APR_SUCCESS)
        goto out;
    for (i = 0; i < n; i++) {
        e.fn = fns[i];
        e.arg = args[i];
        rv = pp__queue_push(&pool->queue, &e);
        if (rv != APR_SUCCESS) {
            /* All or nothing: take back what this batch pushed. */
            pool->queue.tail -= i;
            goto out;
        }
    }
    pp__counter_add(&pool->submitted, n);
    /* At most one wake-up per task, and only for workers that are idle. */
    for (i = 0; i < n && (w = pop_idle(pool)) != NULL; i++) {
        if (nwake < BATCH_WAKE_MAX)
            wake[nwake++] = w;
        else
            pp__unpark(w->parker);
    }
out:
    apr_thread_mutex_unlock(pool->lock);
    for (i = 0; i < nwake; i++)
        pp__unpark(wake[i]->parker);
    if (rv != APR_SUCCESS && group)
        pp__group_leave(group, rv, 0, n);
    return rv;
}

void pp__pool_drop(pp_pool_t *pool, pp__queue_t *q)
{
    const pp_config_t *cfg = &pool->cfg;
    pp__entry_t e;

    while (pp__queue_pop(q, &e)) {
        if (cfg->on_task_error)
            cfg->on_task_error(PP_ECANCELLED, e.name ? e.name : "", cfg->baton);
        if (e.release)
            e.release(e.arg);
        pp__counter_add_shared(&pool->cancelled, 1);    /* cancels may overlap */
        if (e.group)
            pp__group_leave(e.group, PP_ECANCELLED, 1, 1);
    }
}

apr_status_t pp__pool_take_group(pp_pool_t *pool, const pp_group_t *g,
                                 pp__queue_t *out)
{
    apr_status_t rv;

    apr_thread_mutex_lock(pool->lock);
    rv = pp__queue_take_group(&pool->queue, g, out);
    if (rv == APR_SUCCESS && pool->nwaiting)
        apr_thread_cond_broadcast(pool->not_full);
    apr_thread_mutex_unlock(pool->lock);
    return rv;
}

pp_group_t *pp__current_group(void)
{
    return current && current->ctx ? current->ctx->entry->group : NULL;
}

/* Wait (up to timeout) until every worker left its loop, then join them
 * once; concurrent callers wait for the one that joins. */
static apr_status_t wait_joined(pp_pool_t *pool, apr_interval_time_t timeout)
{
    apr_time_t deadline = timeout > 0 ? apr_time_now() + timeout : 0;
    apr_uint32_t i;
    pp_stats_t st;

    apr_thread_mutex_lock(pool->lock);
    while (pool->live > 0 || pool->join == JOIN_BUSY) {
        if (timeout < 0) {
            apr_thread_cond_wait(pool->exited, pool->lock);
            continue;
        }
        apr_interval_time_t left = deadline - apr_time_now();
        if (timeout == 0 || left <= 0) {
            apr_thread_mutex_unlock(pool->lock);
            if (!pool->cfg.on_log)
                return APR_TIMEUP;
            pp_pool_stats(pool, &st);
            pool_log(pool, PP_LOG_WARN, "shutdown timed out after %" APR_TIME_T_FMT " ms: %"
                     APR_UINT64_T_FMT " running, %" APR_UINT64_T_FMT " queued",
                     apr_time_as_msec(timeout), st.running, st.queued);
            return APR_TIMEUP;
        }
        apr_thread_cond_timedwait(pool->exited, pool->lock, left);
    }
    if (pool->join == JOIN_NONE) {
        pool->join = JOIN_BUSY;
        apr_thread_mutex_unlock(pool->lock);
        for (i = 0; i < pool->nstarted; i++) {
            apr_status_t ignored;
            apr_thread_join(&ignored, worker_at(pool, i)->thread);
        }
        apr_thread_mutex_lock(pool->lock);
        pool->join = JOIN_DONE;
        apr_thread_cond_broadcast(pool->exited);
        apr_thread_mutex_unlock(pool->lock);
        if (!pool->cfg.on_log)
            return APR_SUCCESS;
        pp_pool_stats(pool, &st);
        pool_log(pool, PP_LOG_INFO, "stopped: %" APR_UINT64_T_FMT " completed, %"
                 APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT " cancelled",
                 st.completed, st.failed, st.cancelled);
        return APR_SUCCESS;
    }
    apr_thread_mutex_unlock(pool->lock);
    return APR_SUCCESS;
}

apr_status_t pp_pool_shutdown(pp_pool_t *pool, int how,
                              apr_interval_time_t timeout)
{
    pp__queue_t dropped;
    pp__worker_t *w;
    int changed;

    if (!pool || (how != PP_DRAIN && how != PP_CANCEL))
        return APR_EINVAL;
    memset(&dropped, 0, sizeof(dropped));

    apr_thread_mutex_lock(pool->lock);
    changed = how == PP_CANCEL ? pool->state != STATE_CANCELLING : pool->state == STATE_RUNNING;
    if (how == PP_CANCEL && pool->state != STATE_CANCELLING) {
        apr_atomic_set32(&pool->state, STATE_CANCELLING);
        /* Take the whole ring: dropping happens outside the lock. */
        dropped = pool->queue;
        memset(&pool->queue, 0, sizeof(pool->queue));
    }
    else if (pool->state == STATE_RUNNING) {
        apr_atomic_set32(&pool->state, STATE_DRAINING);
    }
    while ((w = pop_idle(pool)) != NULL)
        pp__unpark(w->parker);
    if (pool->nwaiting)
        apr_thread_cond_broadcast(pool->not_full);
    apr_thread_mutex_unlock(pool->lock);

    pp__pool_drop(pool, &dropped);
    pp__queue_destroy(&dropped);
    if (changed && pool->cfg.on_log) {    /* once per step, not per call */
        pp_stats_t st;
        pp_pool_stats(pool, &st);
        pool_log(pool, PP_LOG_INFO, "shutdown (%s): %" APR_UINT64_T_FMT " queued, %"
                 APR_UINT64_T_FMT " running, %" APR_UINT64_T_FMT " cancelled",
                 how == PP_DRAIN ? "drain" : "cancel", st.queued, st.running, st.cancelled);
    }

    if (current && current->pool == pool)
        return APR_EINPROGRESS;
    return wait_joined(pool, timeout);
}

void pp_pool_stats(pp_pool_t *pool, pp_stats_t *out)
{
    apr_uint64_t done = 0, started, cancelled;
    apr_uint32_t i;

    memset(out, 0, sizeof(*out));
    if (!pool)
        return;
    /* Every counter only grows, and each outcome is counted after the
     * counter of the step before it. Reading the later steps first keeps
     * the differences below from going negative while tasks move. */
    for (i = 0; i < pool->nstarted; i++) {
        pp__worker_t *w = worker_at(pool, i);
        out->completed += pp__counter_read(&w->completed);
        out->failed += pp__counter_read(&w->failed);
        out->parks += pp__counter_read(&w->parks);
    }
    done = out->completed + out->failed;
    started = pp__counter_read(&pool->started);
    cancelled = pp__counter_read(&pool->cancelled);
    out->submitted = pp__counter_read(&pool->submitted);
    out->unparks = pp__counter_read(&pool->unparks);
    out->cancelled = cancelled;
    out->running = started - done;
    out->queued = out->submitted - started - cancelled;
    out->threads = pool->nstarted;
}

int pp_task_cancelled(const pp_task_ctx_t *ctx)
{
    if (!ctx)
        return 0;
    if (apr_atomic_read32(&ctx->worker->pool->state) == STATE_CANCELLING)
        return 1;
    return ctx->entry->group && pp__group_cancelled(ctx->entry->group);
}

apr_uint32_t pp_task_worker(const pp_task_ctx_t *ctx)
{
    return ctx ? ctx->worker->index : 0;
}

void pp_task_emit(pp_task_ctx_t *ctx, const char *line)
{
    const pp_config_t *cfg;

    if (!ctx || !line)
        return;
    cfg = &ctx->worker->pool->cfg;
    if (cfg->on_output)
        cfg->on_output(line, ctx->entry->name ? ctx->entry->name : "", cfg->baton);
}

/* Runs before the pool's subpools (those of the threads among them) go:
 * the workers are joined while everything they use still exists. */
static apr_status_t pool_cleanup(void *data)
{
    pp_pool_t *pool = data;

    pp_pool_shutdown(pool, PP_DRAIN, -1);
    pp__queue_destroy(&pool->queue);
    return APR_SUCCESS;
}

void pp_pool_destroy(pp_pool_t *pool)
{
    if (pool)
        apr_pool_destroy(pool->p);
}

/* "<prefix>-<i>", cutting the prefix rather than the index when the OS
 * limit is short: names that differ only in a lost suffix help nobody. */
static const char *worker_name(apr_pool_t *p, const char *prefix, apr_uint32_t i)
{
    char suffix[16];
    apr_size_t max = pp__thread_name_max(), keep;
    int n = apr_snprintf(suffix, sizeof(suffix), "-%u", i);

    keep = strlen(prefix);
    if (keep + (apr_size_t)n > max)
        keep = max > (apr_size_t)n ? max - (apr_size_t)n : 0;
    return apr_pstrcat(p, apr_pstrndup(p, prefix, keep), suffix, NULL);
}

static apr_status_t start_workers(pp_pool_t *pool)
{
    apr_threadattr_t *attr;
    apr_status_t rv;
    apr_uint32_t i;

    rv = apr_threadattr_create(&attr, pool->p);
    if (rv == APR_SUCCESS)
        rv = apr_threadattr_stacksize_set(attr, pool->cfg.stack_size);
    for (i = 0; rv == APR_SUCCESS && i < pool->cfg.threads; i++) {
        pp__worker_t *w = worker_at(pool, i);

        apr_thread_mutex_lock(pool->lock);
        pool->live++;
        apr_thread_mutex_unlock(pool->lock);
        rv = pp__fault_hit(PP__FAULT_THREAD_CREATE)
             ? APR_EAGAIN
             : apr_thread_create(&w->thread, attr, worker_main, w, pool->p);
        if (rv != APR_SUCCESS) {
            char msg[128];
            apr_thread_mutex_lock(pool->lock);
            pool->live--;
            apr_thread_mutex_unlock(pool->lock);
            pool_log(pool, PP_LOG_ERROR, "cannot start worker %u of %u: %s", i,
                     pool->cfg.threads, pp_strerror(rv, msg, sizeof(msg)));
            break;
        }
        pool->nstarted++;
    }
    return rv;
}

apr_status_t pp_pool_create(pp_pool_t **out, const pp_config_t *cfg,
                            apr_pool_t *parent)
{
    pp_pool_t *pool;
    apr_pool_t *p;
    apr_status_t rv;
    apr_uint32_t i;
    char *raw;

    if (!out || !parent)
        return APR_EINVAL;
    *out = NULL;

    rv = apr_pool_create(&p, parent);
    if (rv != APR_SUCCESS)
        return rv;
    pool = apr_pcalloc(p, sizeof(*pool));
    pool->p = p;
    if (cfg)
        pool->cfg = *cfg;
    else
        pp_config_init(&pool->cfg);
    rv = pp__config_resolve(&pool->cfg);
    if (rv != APR_SUCCESS)
        goto fail;
    pool->cfg.name_prefix = apr_pstrdup(p, pool->cfg.name_prefix);

    rv = apr_thread_mutex_create(&pool->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&pool->not_full, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&pool->exited, p);
    if (rv == APR_SUCCESS)
        rv = pp__queue_init(&pool->queue, pool->cfg.queue_capacity
                                          ? pool->cfg.queue_capacity : 256);
    if (rv != APR_SUCCESS)
        goto fail;
    /* From here on the cleanup owns the queue and joins whatever started. */
    apr_pool_pre_cleanup_register(p, pool, pool_cleanup);

    raw = apr_pcalloc(p, (pool->cfg.threads + 1) * sizeof(worker_slot));
    pool->slots = (worker_slot *)(((apr_uintptr_t)raw + CACHE_LINE - 1)
                                  & ~(apr_uintptr_t)(CACHE_LINE - 1));
    pool->idle = apr_pcalloc(p, pool->cfg.threads * sizeof(*pool->idle));
    for (i = 0; i < pool->cfg.threads; i++) {
        pp__worker_t *w = worker_at(pool, i);
        w->pool = pool;
        w->index = i;
        w->name = worker_name(p, pool->cfg.name_prefix, i);
        rv = pp__parker_create(&w->parker, p);
        if (rv != APR_SUCCESS)
            goto fail;
    }
    rv = start_workers(pool);
    if (rv != APR_SUCCESS)
        goto fail;
    if (pool->cfg.on_log) {
        char cap[16] = "unbounded";
        if (pool->cfg.queue_capacity)
            apr_snprintf(cap, sizeof(cap), "%u", pool->cfg.queue_capacity);
        pool_log(pool, PP_LOG_INFO, "started %u worker%s %s-0..%u, park backend %s, stack %"
                 APR_SIZE_T_FMT " KiB, queue %s", pool->cfg.threads,
                 pool->cfg.threads == 1 ? "" : "s", pool->cfg.name_prefix,
                 pool->cfg.threads - 1, pp__park_backend_name(), pool->cfg.stack_size / 1024, cap);
    }
    *out = pool;
    return APR_SUCCESS;

fail:
    /* One unwinding path: the pre-cleanup (if registered) stops and joins
     * the workers already started; the subpool takes all the memory. */
    apr_pool_destroy(p);
    return rv;
}
