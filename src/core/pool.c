/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pool's life: create (start the workers, wait until each is idle),
 * shutdown (drain or cancel, with a deadline), join, free; its
 * statistics; what a running task may ask of its context. The workers'
 * loop and the sleep/wake handshake are sched.c's, submitting submit.c's;
 * sched.h holds the state all three share.
 */
#include "config.h"
#include "sched.h"
#include "abi.h"
#include "fault.h"
#include "os/os.h"

#include <apr_strings.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Called with the lock held. */
static void set_state_locked(pp_pool_t *pool, apr_uint32_t state)
{
    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->state, state, memory_order_relaxed);
    /* Not running: the injector takes nobody's tasks any more (a pool's
     * own tasks in a drain go to the locked queue, which asks the state).
     * Closed in the same critical section as the state's change, so that
     * a push the injector took was taken while the pool ran. */
    if (pool->inj && !pp__inject_closed(pool->inj))
        pp__inject_close(pool->inj);
    pp__startable_locked(pool);    /* a shutdown bounds the starts (workers.c) */
}

/* Formats only when someone listens: a silent pool pays one test. */
void pp__pool_log(const pp_pool_t *pool, int level, const char *fmt, ...)
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

void pp__drop_entry(pp_pool_t *pool, const pp__entry_t *e, apr_status_t why)
{
    const pp_config_t *cfg = &pool->cfg;

    if (pp__is_turn(e)) {    /* a strand's: every task waiting on it */
        pp__strand_drop_turn(pool, e);
        return;
    }
    if (cfg->on_task_error)
        cfg->on_task_error(why, e->name ? e->name : "", cfg->baton);
    if (e->release)
        e->release(e->arg);
    /* Cancels may overlap, and workers expire tasks side by side. */
    pp__counter_add_shared(why == PP_EEXPIRED ? &pool->expired : &pool->cancelled, 1);
    if (e->group)
        pp__group_leave(e->group, why, 1, 1);
}

/* Lifetime. The pool's memory is its own (an unmanaged APR pool), not
 * its parent's, so that a pool closed from one of its own tasks can
 * outlive the call: workers (live) and callers busy inside it (inside:
 * a shutdown, a group cancel dropping tasks) each keep it, and it is
 * freed only when both counts are zero and its owner let go: by the
 * closing thread, which waits for that, or, when the close came from one
 * of its own tasks (orphaned), by whichever leaves last. */

static void pool_free(pp_pool_t *pool);

void pp__pool_leave_locked(pp_pool_t *pool)
{
    int last = pool->live == 0 && pool->inside == 0;
    int free_it = last && pool->orphaned;

    ASSERT_LOCKED(pool);

    /* Shutdown callers wait for live, closers for inside, on one cond
     * (pp_pool_create() for nready, too). */
    if (pool->live == 0 || pool->inside == 0)
        pp__cond_broadcast(pool->exited);
    pp__mutex_unlock(pool->lock);
    if (free_it)
        pool_free(pool);
}

/* A caller that counted itself inside (under the lock) leaves. */
static void leave(pp_pool_t *pool)
{
    pp__mutex_lock(pool->lock);
    PP__ASSERT(pool->inside > 0);
    pool->inside--;
    pp__pool_leave_locked(pool);
}

apr_status_t pp__pool_take_group(pp_pool_t *pool, const pp_group_t *g,
                                 pp__queue_t *out)
{
    apr_status_t rv;

    pp__mutex_lock(pool->lock);
    pool->inside++;    /* until pp__pool_drop(): the pool must stay */
    /* A group's tasks are taken out of the middle of a ring: the
     * injector's come over first (those pushed meanwhile are dropped by
     * whoever takes them: the group is cancelled). */
    rv = pp__inject_to_locked(pool, PP__MAX_CAPACITY);
    if (rv == APR_SUCCESS)
        rv = pp__prioq_take_group(&pool->queue, g, out);
    if (rv == APR_SUCCESS)
        rv = pp__strands_take_group_locked(pool, g, out);
    publish_qlen_locked(pool);
    if (rv == APR_SUCCESS && load32(&pool->nwaiting))
        pp__cond_broadcast(pool->not_full);    /* many slots may be free */
    pp__mutex_unlock(pool->lock);
    if (rv == APR_SUCCESS)    /* and those waiting for their time */
        rv = pp__timers_take_group(pool, g, out);
    return rv;
}

void pp__pool_drop(pp_pool_t *pool, pp__queue_t *q)
{
    pp__entry_t e;

    while (pp__queue_pop(q, &e))
        pp__drop_entry(pool, &e, PP_ECANCELLED);
    leave(pool);
}

/* Wait (until deadline) for every worker to leave its loop, then join
 * them once; concurrent callers wait for the one that joins. */
static apr_status_t wait_joined(pp_pool_t *pool, apr_time_t deadline,
                                apr_interval_time_t timeout)
{
    apr_uint32_t i;
    pp_stats_t st;

    pp__mutex_lock(pool->lock);
    while (pool->live > 0 || pool->nlaunching > 0 || pool->join == JOIN_BUSY) {
        if (pp__cond_wait_until(pool->exited, pool->lock, deadline) == APR_SUCCESS)
            continue;
        pp__mutex_unlock(pool->lock);
        if (!pool->cfg.on_log)
            return APR_TIMEUP;
        pp_pool_stats_sized(pool, &st, sizeof(st));
        pp__pool_log(pool, PP_LOG_WARN, "shutdown timed out after %" APR_TIME_T_FMT " ms: %"
                     APR_UINT64_T_FMT " running, %" APR_UINT64_T_FMT " queued",
                     apr_time_as_msec(timeout), st.running, st.queued);
        return APR_TIMEUP;
    }
    if (pool->join == JOIN_NONE) {
        pool->join = JOIN_BUSY;
        pp__mutex_unlock(pool->lock);
        /* Every worker is out and no start is under way: each slot's
         * last thread, retired or not, is ours to join. */
        for (i = 0; i < nused(pool); i++) {
            pp__worker_t *w = worker_at(pool, i);
            apr_status_t ignored;
            if (w->joinable)
                apr_thread_join(&ignored, w->thread);
            w->joinable = 0;
        }
        pp__mutex_lock(pool->lock);
        pool->join = JOIN_DONE;
        pp__cond_broadcast(pool->exited);
        pp__mutex_unlock(pool->lock);
        if (!pool->cfg.on_log)
            return APR_SUCCESS;
        pp_pool_stats_sized(pool, &st, sizeof(st));
        pp__pool_log(pool, PP_LOG_INFO, "stopped: %" APR_UINT64_T_FMT " completed, %"
                     APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT " cancelled",
                     st.completed, st.failed, st.cancelled);
        return APR_SUCCESS;
    }
    pp__mutex_unlock(pool->lock);
    return APR_SUCCESS;
}

/* Drop what a cancel took from the global queue, until the deadline.
 * What is left goes back for the workers, which drop what they take from
 * a cancelling pool, or for the next shutdown call. */
static void drop_until(pp_pool_t *pool, pp__prioq_t *q, apr_time_t deadline)
{
    pp__entry_t e;

    while (pp__prioq_len(q) > 0 && pp__clock_mono() < deadline) {
        pp__prioq_pop(q, &e);
        pp__drop_entry(pool, &e, PP_ECANCELLED);
    }
    /* The injector, closed now, after the locked levels (its tasks are
     * the newer); what the deadline leaves there the workers drop. */
    while (pool->inj && pp__clock_mono() < deadline && pop_injected(pool, &e))
        pp__drop_entry(pool, &e, PP_ECANCELLED);
    if (pp__prioq_len(q) == 0)
        return;
    pp__mutex_lock(pool->lock);
    /* Only a cancel empties the queue, and nothing is queued after it. */
    PP__ASSERT(pp__prioq_len(&pool->queue) == 0);
    pp__prioq_destroy(&pool->queue);
    pp__prioq_move(&pool->queue, q);
    publish_qlen_locked(pool);
    pp__mutex_unlock(pool->lock);
}

/* A cancel takes what waits in the workers' deques as a thief would, until
 * the deadline. Their owners may still be running tasks that submit more;
 * those see the pool cancelling and drop what they take (run_entry), as
 * does a worker that steals what the deadline left. */
static void drop_deques(pp_pool_t *pool, apr_time_t deadline)
{
    pp__entry_t e;
    apr_uint32_t i;
    int r;

    for (i = 0; i < nused(pool); i++)
        while (pp__clock_mono() < deadline && (r = pp__deque_steal(&pool->deques[i], &e)) != 0)
            if (r > 0)
                pp__drop_entry(pool, &e, PP_ECANCELLED);
}

apr_status_t pp_pool_shutdown(pp_pool_t *pool, int how,
                              apr_interval_time_t timeout)
{
    apr_time_t deadline = pp__deadline(timeout);
    pp__prioq_t dropped;
    apr_status_t rv;
    int changed;

    if (!pool || (how != PP_DRAIN && how != PP_CANCEL))
        return APR_EINVAL;
    if (forked(pool))
        return APR_SUCCESS;    /* no worker here to wait for */
    memset(&dropped, 0, sizeof(dropped));

    pp__mutex_lock(pool->lock);
    pool->inside++;
    changed = how == PP_CANCEL ? pool->state != STATE_CANCELLING : pool->state == STATE_RUNNING;
    if (how == PP_CANCEL) {
        set_state_locked(pool, STATE_CANCELLING);
        /* Take the whole ring (what an earlier cancel's deadline left in it
         * too): dropping happens outside the lock. */
        pp__prioq_move(&dropped, &pool->queue);
        publish_qlen_locked(pool);
    }
    else if (pool->state == STATE_RUNNING) {
        set_state_locked(pool, STATE_DRAINING);
    }
    pp__wake_all_locked(pool);
    if (load32(&pool->nwaiting))
        pp__cond_broadcast(pool->not_full);
    pp__mutex_unlock(pool->lock);
    pp__timers_close(pool, deadline);    /* drain or cancel: no tick more */

    if (how == PP_CANCEL) {
        drop_until(pool, &dropped, deadline);
        pp__prioq_destroy(&dropped);
        drop_deques(pool, deadline);
    }
    if (changed && pool->cfg.on_log) {    /* once per step, not per call */
        pp_stats_t st;
        pp_pool_stats_sized(pool, &st, sizeof(st));
        pp__pool_log(pool, PP_LOG_INFO, "shutdown (%s): %" APR_UINT64_T_FMT " queued, %"
                     APR_UINT64_T_FMT " running, %" APR_UINT64_T_FMT " cancelled",
                     how == PP_DRAIN ? "drain" : "cancel", st.queued, st.running, st.cancelled);
    }

    rv = own_worker(pool) ? APR_EINPROGRESS : wait_joined(pool, deadline, timeout);
    leave(pool);
    return rv;
}

/* A pause is a flag the workers read between tasks and before they
 * sleep; it needs no wake-up (they stop as they come by). A resume wakes
 * one idle worker per task queued meanwhile (sched.c). */
apr_status_t pp_pool_pause(pp_pool_t *pool)
{
    apr_status_t rv = APR_SUCCESS;

    if (!pool)
        return APR_EINVAL;
    if (forked(pool))
        return PP_ESHUTDOWN;
    pp__mutex_lock(pool->lock);
    if (pool->state != STATE_RUNNING)
        rv = PP_ESHUTDOWN;
    else
        atomic_store_explicit(&pool->paused, 1, memory_order_relaxed);
    pp__mutex_unlock(pool->lock);
    return rv;
}

apr_status_t pp_pool_resume(pp_pool_t *pool)
{
    pp__worker_t *start = NULL;

    if (!pool)
        return APR_EINVAL;
    if (forked(pool))
        return PP_ESHUTDOWN;
    pp__mutex_lock(pool->lock);
    if (load32(&pool->paused))
        start = pp__resume_locked(pool);
    pp__mutex_unlock(pool->lock);
    if (start)
        pp__launch(pool, start);
    return APR_SUCCESS;
}

/* One worker's started and ended counts as of one moment: ended first,
 * then started, twice, until started held still across the read of ended
 * (then both were true together, when ended was read). A worker that
 * keeps finishing tasks faster than this reads may never hold still; its
 * last read then counts at most one task as running, which is what a
 * worker can run at a time. */
static void worker_counts(pp__worker_t *w, apr_uint64_t *started, apr_uint64_t *completed,
                          apr_uint64_t *failed)
{
    apr_uint64_t s1, s2, c, f;
    int tries = 0;

    s2 = pp__counter_read(&w->started);
    do {
        s1 = s2;
        c = pp__counter_read(&w->completed);
        f = pp__counter_read(&w->failed);
        s2 = pp__counter_read(&w->started);
    } while (s2 != s1 && ++tries < 4);
    if (s2 > c + f + 1)
        s2 = c + f + 1;
    *started = s2;
    *completed = c;
    *failed = f;
}

/* The timing percentiles: the workers' histograms summed. */
static void timing_stats(pp_pool_t *pool, pp_stats_t *out)
{
    apr_uint64_t wait[PP__HISTO_BUCKETS] = {0}, run[PP__HISTO_BUCKETS] = {0};
    apr_uint32_t i;

    for (i = 0; i < nused(pool); i++) {
        pp__histo_sum(&pool->histo[2 * i], wait, &out->wait_us_max);
        pp__histo_sum(&pool->histo[2 * i + 1], run, &out->run_us_max);
    }
    out->wait_us_p50 = pp__histo_percentile(wait, out->wait_us_max, 50);
    out->wait_us_p90 = pp__histo_percentile(wait, out->wait_us_max, 90);
    out->wait_us_p99 = pp__histo_percentile(wait, out->wait_us_max, 99);
    out->run_us_p50 = pp__histo_percentile(run, out->run_us_max, 50);
    out->run_us_p90 = pp__histo_percentile(run, out->run_us_max, 90);
    out->run_us_p99 = pp__histo_percentile(run, out->run_us_max, 99);
}

void pp_pool_stats_sized(pp_pool_t *pool, pp_stats_t *caller, apr_size_t size)
{
    apr_uint64_t started = 0, s, c, f, cancelled, expired;
    apr_uint32_t i;
    pp_stats_t st, *out = &st;

    if (!caller || size < PP__STATS_SIZE_4)
        return;
    memset(out, 0, sizeof(*out));
    if (!pool) {
        pp__struct_out(caller, size, out, sizeof(*out));
        return;
    }
    /* Every counter only grows, and each outcome is counted after the
     * counter of the step before it. Reading the later steps first keeps
     * the differences below from going negative while tasks move. */
    for (i = 0; i < nused(pool); i++) {
        pp__worker_t *w = worker_at(pool, i);
        worker_counts(w, &s, &c, &f);
        started += s;
        out->completed += c;
        out->failed += f;
        out->parks += pp__counter_read(&w->parks);
    }
    cancelled = pp__counter_read(&pool->cancelled);
    expired = pp__counter_read(&pool->expired);
    out->submitted = pp__counter_read(&pool->submitted)
                     + pp__counter_read(&pool->strand_submitted)
                     + pp__counter_read(&pool->timer_submitted);
    if (pool->inj) {
        /* The library's own pushes first: each is counted after its push,
         * so never more of them than the pushes read after. */
        apr_uint64_t own = pp__counter_read(&pool->inj_internal);
        out->submitted += pp__inject_pushed(pool->inj) - own;
    }
    for (i = 0; i < nused(pool); i++)
        out->submitted += pp__counter_read(&worker_at(pool, i)->submitted);
    out->unparks = pp__counter_read(&pool->unparks);
    out->cancelled = cancelled;
    out->expired = expired;
    out->timers = pp__timers_waiting(pool);
    out->running = started - out->completed - out->failed;
    out->queued = out->submitted - started - cancelled - expired;
    out->threads = load32(&pool->nlive);
    out->blocked = load32(&pool->nwaiting);
    out->threads_idle = load32(&pool->nidle);
    out->threads_peak = load32(&pool->live_peak);
    out->queued_peak = pp__counter_read(&pool->queued_peak);
    /* The takes raise it (pop_injected); since the last, the queue only
     * grew, so its longest since then is its length now. */
    if (out->queued_peak < global_len(pool))
        out->queued_peak = global_len(pool);
    if (pool->histo)    /* read after the counts: it holds every task they saw end */
        timing_stats(pool, out);
    pp__struct_out(caller, size, out, sizeof(*out));
}

#ifndef PP_UNTESTABLE
void pp__pool_hold_lock(pp_pool_t *pool, int hold)
{
    if (hold)
        pp__mutex_lock(pool->lock);
    else
        pp__mutex_unlock(pool->lock);
}
#endif

int pp_task_cancelled(const pp_task_ctx_t *ctx)
{
    if (!ctx)
        return 0;
    if (load_state(ctx->worker->pool) == STATE_CANCELLING)
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

void pp_task_write(pp_task_ctx_t *ctx, const char *data, apr_size_t len)
{
    const pp_config_t *cfg;
    const char *name, *end, *nl;

    if (!ctx || !data)
        return;
    cfg = &ctx->worker->pool->cfg;
    name = ctx->entry->name ? ctx->entry->name : "";
    if (cfg->on_write) {
        cfg->on_write(data, len, name, cfg->baton);
        return;
    }
    if (!cfg->on_output)
        return;
    /* A line per LF for hosts that only take lines (a CR before the LF is
     * part of the ending, as in the job line grammar, so cmd.exe's lines
     * read as Unix ones); the piece after the last LF is a line of its
     * own. Each is NUL-terminated in a copy. */
    for (end = data + len; data < end; data = nl + 1) {
        char line[512], *copy = line;
        apr_size_t n;

        nl = memchr(data, '\n', (apr_size_t)(end - data));
        if (!nl)
            nl = end;
        n = (apr_size_t)(nl - data);
        if (nl < end && n > 0 && data[n - 1] == '\r')
            n--;
        if (n >= sizeof(line) && (copy = malloc(n + 1)) == NULL)
            return;    /* no memory for it: the output is dropped, as with no hook */
        memcpy(copy, data, n);
        copy[n] = '\0';
        cfg->on_output(copy, name, cfg->baton);
        if (copy != line)
            free(copy);
    }
}

/* The last of the pool: its threads are out of their loops, and nobody
 * is inside. Threads nobody joined (the pool was closed from one of its
 * own tasks) are detached, so the OS reaps them; they touch nothing of
 * the pool after their last leave (and APR's thread wrapper nothing of
 * its thread record after the function returns). */
static void pool_free(pp_pool_t *pool)
{
    apr_uint32_t i;

    pp__timers_free(pool);
    for (i = 0; pool->slots && i < nused(pool); i++) {
        pp__worker_t *w = worker_at(pool, i);
        if (w->joinable && !forked(pool))
            apr_thread_detach(w->thread);
        free(w->nested);
        pp__deque_free(w->deque);
        if (w->tp)
            apr_pool_destroy(w->tp);
    }
    pp__prioq_destroy(&pool->queue);
    if (pool->inj)
        pp__inject_destroy(pool->inj);
    pp__strands_detach(pool);
    free(pool->deques_mem);
    free(pool->histo_mem);
    apr_pool_destroy(pool->p);
}

/* The owner lets go (pp_pool_destroy, or the parent's destruction). From
 * outside: drain, wait for everyone inside, free. From one of the pool's
 * own tasks, which cannot wait for itself: start the drain and leave the
 * freeing to the last worker or caller out. */
static void pool_close(pp_pool_t *pool)
{
    if (forked(pool)) {
        /* Its lock may be held by a thread that is not here, and its
         * queued tasks are the parent's to run: touch neither, free the
         * memory (sync.h leaves the abandoned locks alone). */
        pool_free(pool);    /* the threads it detaches are not here */
        return;
    }
    if (own_worker(pool)) {
        pp__mutex_lock(pool->lock);
        pool->orphaned = 1;
        pp__mutex_unlock(pool->lock);
        /* Inside while it starts the drain, so the last worker cannot free
         * the pool under this very call. */
        pp_pool_shutdown(pool, PP_DRAIN, 0);
        return;
    }
    pp_pool_shutdown(pool, PP_DRAIN, -1);
    pp__mutex_lock(pool->lock);
    while (pool->inside > 0)
        pp__cond_wait(pool->exited, pool->lock);
    pp__mutex_unlock(pool->lock);
    pool_free(pool);
}

/* A pre-cleanup of the parent: the pool drains while what its tasks use
 * in the parent's subpools still exists. */
static apr_status_t parent_cleanup(void *data)
{
    pool_close(data);
    return APR_SUCCESS;
}

void pp_pool_destroy(pp_pool_t *pool)
{
    if (!pool)
        return;
    apr_pool_cleanup_kill(pool->parent, pool, parent_cleanup);
    pool_close(pool);
}

/* "<prefix><suffix>", cutting the prefix rather than the suffix when the
 * OS limit is short: names that differ only in a lost suffix help nobody. */
const char *pp__thread_label(apr_pool_t *p, const char *prefix, const char *suffix)
{
    apr_size_t max = pp__thread_name_max(), n = strlen(suffix), keep = strlen(prefix);

    if (keep + n > max)
        keep = max > n ? max - n : 0;
    return apr_pstrcat(p, apr_pstrndup(p, prefix, keep), suffix, NULL);
}

/* "<prefix>-<i>". */
static const char *worker_name(apr_pool_t *p, const char *prefix, apr_uint32_t i)
{
    char suffix[16];

    apr_snprintf(suffix, sizeof(suffix), "-%u", i);
    return pp__thread_label(p, prefix, suffix);
}

static apr_status_t start_workers(pp_pool_t *pool)
{
    apr_status_t rv;
    apr_uint32_t i;

    rv = apr_threadattr_create(&pool->attr, pool->p);
    if (rv == APR_SUCCESS)
        rv = apr_threadattr_stacksize_set(pool->attr, pool->cfg.stack_size);
    for (i = 0; rv == APR_SUCCESS && i < pool->nmin; i++)
        rv = pp__start_first(pool, i);    /* on_log has told what failed */
    return rv;
}

/* size zeroed bytes on a cache line of their own from calloc (freed with
 * *mem), or NULL: for the big arrays, which only get pages as they are
 * used. */
/* raw (allocated CACHE_LINE bytes larger than needed) moved up to the
 * next cache line, or NULL. */
static void *line_aligned(void *raw)
{
    if (!raw)
        return NULL;
    return (void *)(((apr_uintptr_t)raw + CACHE_LINE - 1) & ~(apr_uintptr_t)(CACHE_LINE - 1));
}

static void *lazy_zalloc(void **mem, apr_size_t size)
{
    *mem = pp__fault_hit(PP__FAULT_POOL_ALLOC) ? NULL : calloc(1, size + CACHE_LINE);
    return line_aligned(*mem);
}

/* size zeroed bytes from p on a cache line of their own, or NULL. */
static void *aligned_zalloc(apr_pool_t *p, apr_size_t size)
{
    return line_aligned(pp__fault_hit(PP__FAULT_POOL_ALLOC) ? NULL
                                                            : apr_pcalloc(p, size + CACHE_LINE));
}

apr_status_t pp_pool_create_sized(pp_pool_t **out, const pp_config_t *cfg, apr_size_t size,
                                  apr_pool_t *parent)
{
    pp_pool_t *pool;
    apr_pool_t *p;
    apr_status_t rv;
    apr_uint32_t i;

    if (!out || !parent)
        return APR_EINVAL;
    *out = NULL;

    rv = apr_pool_create_unmanaged_ex(&p, NULL, NULL);
    if (rv != APR_SUCCESS)
        return rv;
    pool = apr_pcalloc(p, sizeof(*pool));
    if (!pool) {
        apr_pool_destroy(p);
        return APR_ENOMEM;
    }
    pool->p = p;
    pool->gen = pp__fork_watch();
    pool->parent = parent;
    if (cfg)
        rv = pp__struct_in(&pool->cfg, sizeof(pool->cfg), cfg, size, PP__CONFIG_SIZE_4);
    else
        pp_config_init_sized(&pool->cfg, sizeof(pool->cfg));
    if (rv == APR_SUCCESS)
        rv = pp__config_resolve(&pool->cfg);
    if (rv != APR_SUCCESS)
        goto fail;
    pool->cfg.name_prefix = apr_pstrdup(p, pool->cfg.name_prefix);

    rv = pp__mutex_create(&pool->lock, p);
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&pool->not_full, p);
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&pool->exited, p);
    if (rv == APR_SUCCESS)
        rv = pp__mutex_create(&pool->strand_lock, p);
    if (rv == APR_SUCCESS)
        rv = pp__prioq_init(&pool->queue, pool->cfg.queue_capacity
                                          ? pool->cfg.queue_capacity : 256);
    if (rv == APR_SUCCESS && pool->cfg.queue_capacity == 0) {
        rv = pp__inject_init(&pool->inject);
        if (rv == APR_SUCCESS)
            pool->inj = &pool->inject;
    }
    if (rv != APR_SUCCESS)
        goto fail;

    /* Every slot a worker may ever take, the ones for block sections
     * too; the deques and histograms (most of the memory) come zeroed
     * from calloc, whose large blocks are untouched pages until a worker
     * takes the slot (workers.c initialises a deque then). */
    pool->nmin = pool->cfg.min_threads;
    pool->nslots = pool->cfg.threads + pool->cfg.max_blocking;
    pool->slots = aligned_zalloc(p, pool->nslots * sizeof(worker_slot));
    pool->idle = apr_pcalloc(p, pool->nslots * sizeof(*pool->idle));
    pool->deques = lazy_zalloc(&pool->deques_mem, pool->nslots * sizeof(pp__deque_t));
    if (!pool->slots || !pool->idle || !pool->deques) {
        rv = APR_ENOMEM;
        goto fail;
    }
    pool->observe = pool->cfg.on_task_end || pool->cfg.timing;
    if (pool->cfg.timing
        && !(pool->histo = lazy_zalloc(&pool->histo_mem, 2 * pool->nslots * sizeof(pp__histo_t)))) {
        rv = APR_ENOMEM;
        goto fail;
    }
    pool->min_spin = pp__budget_floor(pool->cfg.spin);
    pool->ncpus = pp__cpu_count();
    for (i = 0; i < pool->nslots; i++) {
        pp__worker_t *w = worker_at(pool, i);
        w->pool = pool;
        w->index = i;
        w->deque = &pool->deques[i];
        w->budget.spin = pool->cfg.spin;
        w->fair = FAIR_EVERY;
        w->name = worker_name(p, pool->cfg.name_prefix, i);
        rv = pp__parker_create(&w->parker, p);
        if (rv != APR_SUCCESS)
            goto fail;
    }
    pp__mutex_lock(pool->lock);
    pp__startable_locked(pool);
    pp__mutex_unlock(pool->lock);
    rv = start_workers(pool);
    if (rv != APR_SUCCESS)
        goto fail;
    pp__mutex_lock(pool->lock);
    while (pool->nready < pool->nmin)
        pp__cond_wait(pool->exited, pool->lock);
    rv = pool->start_rv;
    pp__mutex_unlock(pool->lock);
    if (rv != APR_SUCCESS)
        goto fail;    /* an on_thread_start failed (sched.c, start_failed) */
    if (pool->cfg.on_log) {
        char cap[16] = "unbounded";
        if (pool->cfg.queue_capacity)
            apr_snprintf(cap, sizeof(cap), "%u", pool->cfg.queue_capacity);
        pp__pool_log(pool, PP_LOG_INFO, "started %u worker%s %s-0..%u, park backend %s, stack %"
                     APR_SIZE_T_FMT " KiB, queue %s", pool->cfg.threads,
                     pool->cfg.threads == 1 ? "" : "s", pool->cfg.name_prefix,
                     pool->cfg.threads - 1, pp__park_backend_name(), pool->cfg.stack_size / 1024, cap);
    }
    apr_pool_pre_cleanup_register(parent, pool, parent_cleanup);
    *out = pool;
    return APR_SUCCESS;

fail:
    /* One unwinding path: stop and join the workers already started (none
     * is inside a task: nobody could submit one yet) and free it all. */
    if (nused(pool) > 0)
        pool_close(pool);
    else
        pool_free(pool);
    return rv;
}
