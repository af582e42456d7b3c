/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Timers (timer.h). A timer is in one of three states, under the timer
 * lock: WAIT (in the heap), BUSY (its tick is queued or running, or it is
 * ending: its release hook runs) and DONE (ended; the record stays only
 * while the caller holds its handle). The timer thread moves WAIT to BUSY
 * as the time comes; the tick's release moves BUSY back to WAIT (the next
 * period) or on to DONE; pp_timer_cancel() takes a WAIT timer out of the
 * heap and ends it, and flags a BUSY one so that no next period follows.
 *
 * Groups: a timer holds one count in its group for its next tick from
 * pp_schedule() until it ends, so pp_group_wait() waits for it; a tick
 * that runs takes the count for the one after it before the task runs,
 * so the count never touches zero in between.
 *
 * Accounting: each tick counts as one submitted task (timer_submitted)
 * when it is queued, or when a shutdown or a cancel drops it unqueued, and
 * then as what became of it: completed, failed or cancelled.
 *
 * Lock order: the timer lock is taken alone, never around the queue lock
 * or a group's.
 */
#include "config.h"
#include "timer.h"
#include "sched.h"
#include "theap.h"
#include "abi.h"
#include "os/os.h"

#include <stdlib.h>
#include <string.h>

enum { T_WAIT, T_BUSY, T_DONE };

/* The longest one sleep of the timer thread: a far deadline is slept to
 * in steps, so that no backend sees a timeout near its limits. */
#define LONGEST_NAP (3600 * APR_USEC_PER_SEC)

/* The most ticks the thread takes out of the heap in one lock round
 * before it queues them. */
#define FIRE_BATCH 64

struct pp__timers_t {
    pp_pool_t     *pool;
    apr_pool_t    *p;          /* unmanaged: freed by pp__timers_free() */
    pp__parker_t  *parker;     /* the timer thread's */
    apr_thread_t  *thread;
    const char    *name;       /* "<prefix>-timer" */
    pp__mutex_t   *lock;       /* guards what follows */
    pp__theap_t    heap;
    pp_timer_t    *all;        /* every record not freed, doubly linked */
    int            closed;     /* the pool shut down: nothing ticks again */
    /* The heap's size, stored under the lock, read by the stats. */
    _Atomic apr_uint32_t nwaiting;
};

struct pp_timer_t {
    pp__theap_node_t node;     /* first: a node's address is its timer's */
    pp__timers_t    *ts;
    pp_task_fn       fn;
    void            *arg;
    void           (*release)(void *arg);
    const char      *name;
    pp_group_t      *group;
    apr_interval_time_t period;
    unsigned         level;    /* its ticks' priority level */
    /* Under the timer lock. */
    int              state;
    int              handle;   /* the caller holds it (no free before
                                * pp_timer_cancel) */
    int              cancelled;
    /* The tick's own, written by the worker that runs it (or, for one
     * that never ran, by whoever made it) before its release reads them. */
    int              ran;      /* its function was called */
    int              next_ok;  /* the group count for the next tick is held */
    pp_timer_t      *next, *prev;   /* ts->all */
    pp_timer_t      *taken;    /* a list of those a group cancel takes */
};

static pp_timer_t *of_node(pp__theap_node_t *node)
{
    return (pp_timer_t *)(void *)node;    /* node is the first member */
}

static pp__timers_t *timers_of(pp_pool_t *pool)
{
    /* Acquire: pairs with the release store that published it whole. */
    return atomic_load_explicit(&pool->timers, memory_order_acquire);
}

/* Called with the timer lock held, after the heap changed. */
static void publish_waiting_locked(pp__timers_t *ts)
{
    atomic_store_explicit(&ts->nwaiting, ts->heap.n, memory_order_relaxed);
}

static void unlink_locked(pp__timers_t *ts, pp_timer_t *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        ts->all = t->next;
    if (t->next)
        t->next->prev = t->prev;
}

/* The timer is over: its task's release, then the record goes unless
 * the caller still holds the handle. The caller has t BUSY and may not
 * touch t afterwards. */
static void finish(pp_timer_t *t)
{
    pp__timers_t *ts = t->ts;
    int free_it;

    if (t->release)
        t->release(t->arg);
    pp__mutex_lock(ts->lock);
    t->state = T_DONE;
    free_it = !t->handle;
    if (free_it)
        unlink_locked(ts, t);
    pp__mutex_unlock(ts->lock);
    if (free_it)
        free(t);
}

static apr_status_t tick_fn(void *timer, pp_task_ctx_t *ctx);
static void tick_release(void *timer);

/* A tick of t: the entry that runs (or drops) t's next period. */
static void make_tick(pp_timer_t *t, pp__entry_t *e)
{
    pp_pool_t *pool = t->ts->pool;

    t->ran = 0;
    e->fn = tick_fn;
    e->arg = t;
    e->release = tick_release;
    e->name = t->name;
    e->group = t->group;
    e->queued = pool->cfg.timing ? apr_time_now() : 0;
    e->not_after = 0;
}

/* Drop t's next tick unqueued (a shutdown or a cancel came first): it
 * counts as submitted, then as cancelled, and is reported; its release
 * ends the timer. */
static void drop_tick(pp_timer_t *t, apr_status_t why)
{
    pp_pool_t *pool = t->ts->pool;
    pp__entry_t e;

    make_tick(t, &e);
    pp__counter_add_shared(&pool->timer_submitted, 1);
    pp__drop_entry(pool, &e, why);
}

static apr_status_t tick_fn(void *timer, pp_task_ctx_t *ctx)
{
    pp_timer_t *t = timer;

    t->ran = 1;
    /* The count for the next period first: a group wait must not see
     * the group empty between two runs. A cancelled group refuses it,
     * and then this run is the last. */
    if (t->period)
        t->next_ok = !t->group || pp__group_enter(t->group, t->ts->pool, 1) == APR_SUCCESS;
    return t->fn(t->arg, ctx);
}

/* When the next period is due, counted from the last due time: the first
 * multiple of period after now, so that a run that overran skips the
 * ticks it missed rather than running them back to back. */
static apr_time_t next_due(const pp_timer_t *t, apr_time_t now)
{
    apr_time_t due = t->node.due;
    apr_interval_time_t period = t->period;

    if (period >= PP__FOREVER - (due > now ? due : now))
        return PP__FOREVER;
    if (due + period > now)
        return due + period;
    return due + ((now - due) / period + 1) * period;
}

/* The end of a tick, run or dropped (its release hook). */
static void tick_release(void *timer)
{
    pp_timer_t *t = timer;
    pp__timers_t *ts = t->ts;
    pp_pool_t *pool = ts->pool;
    pp_group_t *group = t->group;
    int top, hold = t->next_ok;
    apr_status_t rv;

    if (!t->ran || !t->period) {
        finish(t);    /* dropped (its dropper reports it), or the last run */
        return;
    }
    pp__mutex_lock(ts->lock);
    if (t->cancelled || !hold) {
        pp__mutex_unlock(ts->lock);
        finish(t);
        if (hold && group)
            pp__group_leave(group, APR_SUCCESS, 0, 1);
        return;
    }
    if (ts->closed || load_state(pool) != STATE_RUNNING
        || (group && pp__group_cancelled(group))) {
        pp__mutex_unlock(ts->lock);
        drop_tick(t, PP_ECANCELLED);    /* the next one: as a cancel drops it */
        return;
    }
    t->node.due = next_due(t, pp__clock_mono());
    rv = pp__theap_push(&ts->heap, &t->node);
    if (rv != APR_SUCCESS) {
        pp__mutex_unlock(ts->lock);
        drop_tick(t, rv);
        return;
    }
    t->state = T_WAIT;
    top = pp__theap_top(&ts->heap) == &t->node;
    publish_waiting_locked(ts);
    pp__mutex_unlock(ts->lock);
    if (top)
        pp__unpark(ts->parker);    /* it may sleep to a later time */
}

/* Queue the tick of a timer whose time came (the timer thread). */
static void fire(pp_timer_t *t)
{
    pp_pool_t *pool = t->ts->pool;
    pp__entry_t e;

    make_tick(t, &e);
    /* Counted before a worker can take it. */
    pp__counter_add_shared(&pool->timer_submitted, 1);
    if (pp__enqueue_internal(pool, t->level, &e) != APR_SUCCESS)
        pp__drop_entry(pool, &e, PP_ECANCELLED);    /* the pool is closing */
}

/* The timer thread: queue what is due, then sleep until the earliest
 * timer's time or until an earlier one comes (its inserter unparks). The
 * parker keeps an unpark that comes between the look and the sleep
 * (models/timer.pml). */
static void *APR_THREAD_FUNC timer_main(apr_thread_t *thread, void *data)
{
    pp__timers_t *ts = data;
    pp_timer_t *due[FIRE_BATCH];
    pp__theap_node_t *top;
    apr_uint32_t n, i;
    apr_time_t now;
    apr_interval_time_t wait;

    (void)thread;
    pp__thread_set_name(ts->name);
    pp__mutex_lock(ts->lock);
    while (!ts->closed) {
        now = pp__clock_mono();
        for (n = 0; n < FIRE_BATCH && (top = pp__theap_top(&ts->heap)) && top->due <= now; n++) {
            pp__theap_remove(&ts->heap, top);
            due[n] = of_node(top);
            due[n]->state = T_BUSY;
        }
        publish_waiting_locked(ts);
        if (n > 0) {
            pp__mutex_unlock(ts->lock);
            for (i = 0; i < n; i++)
                fire(due[i]);
            pp__mutex_lock(ts->lock);
            continue;
        }
        /* Read under the lock: once it is released, a cancel may free
         * the top timer. */
        top = pp__theap_top(&ts->heap);
        wait = top ? top->due - now : -1;
        pp__mutex_unlock(ts->lock);
        if (wait < 0)
            pp__park(ts->parker);
        else
            pp__park_timed(ts->parker, wait < LONGEST_NAP ? wait : LONGEST_NAP);
        pp__mutex_lock(ts->lock);
    }
    pp__mutex_unlock(ts->lock);
    return NULL;
}

/* The pool's timers, made with its first timer (under the queue lock, so
 * once, and only while the pool runs). */
static apr_status_t timers_get(pp__timers_t **out, pp_pool_t *pool)
{
    pp__timers_t *ts;
    apr_threadattr_t *attr;
    apr_pool_t *p = NULL;
    apr_status_t rv = APR_SUCCESS;

    pp__mutex_lock(pool->lock);
    ts = atomic_load_explicit(&pool->timers, memory_order_relaxed);
    if (pool->state != STATE_RUNNING)
        rv = PP_ESHUTDOWN;
    else if (!ts) {
        rv = apr_pool_create_unmanaged_ex(&p, NULL, NULL);
        if (rv == APR_SUCCESS) {
            ts = apr_pcalloc(p, sizeof(*ts));
            ts->pool = pool;
            ts->p = p;
            ts->name = pp__thread_label(p, pool->cfg.name_prefix, "-timer");
            rv = pp__mutex_create(&ts->lock, p);
        }
        if (rv == APR_SUCCESS)
            rv = pp__parker_create(&ts->parker, p);
        if (rv == APR_SUCCESS)
            rv = apr_threadattr_create(&attr, p);
        if (rv == APR_SUCCESS)
            rv = apr_threadattr_stacksize_set(attr, pool->cfg.stack_size);
        if (rv == APR_SUCCESS)
            rv = apr_thread_create(&ts->thread, attr, timer_main, ts, p);
        if (rv == APR_SUCCESS)
            atomic_store_explicit(&pool->timers, ts, memory_order_release);
        else if (p)
            apr_pool_destroy(p);
    }
    pp__mutex_unlock(pool->lock);
    *out = ts;
    return rv;
}

apr_status_t pp_schedule_sized(pp_timer_t **timer, pp_pool_t *pool, const pp_task_t *task,
                               apr_size_t size, apr_interval_time_t delay,
                               apr_interval_time_t period, pp_group_t *group)
{
    pp__timers_t *ts;
    pp_timer_t *t;
    pp_task_t copy;
    apr_status_t rv;
    unsigned level;
    int top = 0;

    if (task && size != sizeof(*task)) {    /* another layout: take it into ours */
        rv = pp__struct_in(&copy, sizeof(copy), task, size, PP__TASK_SIZE_4);
        if (rv != APR_SUCCESS)
            return rv;
        task = &copy;
    }
    if (!pool || !task || !task->fn || delay < 0 || period < 0 || task->not_after
        || task->strand || (level = pp__prio_level(task->priority)) == PP__LEVELS)
        return APR_EINVAL;
    if (forked(pool))
        return PP_ESHUTDOWN;
    rv = timers_get(&ts, pool);
    if (rv != APR_SUCCESS)
        return rv;
    t = calloc(1, sizeof(*t));
    if (!t)
        return APR_ENOMEM;
    t->ts = ts;
    t->fn = task->fn;
    t->arg = task->arg;
    t->release = task->release;
    t->name = task->name;
    t->group = group;
    t->period = period;
    t->level = level;
    t->handle = timer != NULL;
    if (group && (rv = pp__group_enter(group, pool, 1)) != APR_SUCCESS) {
        free(t);
        return rv;
    }
    pp__mutex_lock(ts->lock);
    rv = ts->closed ? PP_ESHUTDOWN : APR_SUCCESS;
    if (rv == APR_SUCCESS) {
        t->node.due = pp__deadline(delay);
        rv = pp__theap_push(&ts->heap, &t->node);
    }
    if (rv == APR_SUCCESS) {
        t->state = T_WAIT;
        t->next = ts->all;
        if (ts->all)
            ts->all->prev = t;
        ts->all = t;
        top = pp__theap_top(&ts->heap) == &t->node;
        publish_waiting_locked(ts);
        if (timer)
            *timer = t;    /* before it can run: its task may read it */
    }
    pp__mutex_unlock(ts->lock);
    if (rv != APR_SUCCESS) {
        if (group)
            pp__group_leave(group, rv, 0, 1);
        free(t);
        return rv;
    }
    if (top)
        pp__unpark(ts->parker);    /* it sleeps to a later time, or for ever */
    return APR_SUCCESS;
}

apr_status_t pp_timer_cancel(pp_timer_t *timer)
{
    pp__timers_t *ts;
    pp_group_t *group;

    if (!timer)
        return APR_EINVAL;
    ts = timer->ts;
    pp__mutex_lock(ts->lock);
    timer->handle = 0;
    switch (timer->state) {
    case T_WAIT:
        pp__theap_remove(&ts->heap, &timer->node);
        publish_waiting_locked(ts);
        timer->state = T_BUSY;
        pp__mutex_unlock(ts->lock);
        group = timer->group;
        finish(timer);
        if (group)
            pp__group_leave(group, APR_SUCCESS, 0, 1);
        return APR_SUCCESS;
    case T_DONE:
        unlink_locked(ts, timer);
        pp__mutex_unlock(ts->lock);
        free(timer);
        return APR_SUCCESS;
    default:
        timer->cancelled = 1;    /* its tick's release ends it */
        pp__mutex_unlock(ts->lock);
        return APR_EBUSY;
    }
}

/* Take the earliest waiting timer out of the heap (BUSY), or NULL. */
static pp_timer_t *take_top(pp__timers_t *ts)
{
    pp__theap_node_t *top;

    pp__mutex_lock(ts->lock);
    top = pp__theap_top(&ts->heap);
    if (top) {
        pp__theap_remove(&ts->heap, top);
        of_node(top)->state = T_BUSY;
        publish_waiting_locked(ts);
    }
    pp__mutex_unlock(ts->lock);
    return top ? of_node(top) : NULL;
}

void pp__timers_close(pp_pool_t *pool, apr_time_t deadline)
{
    pp__timers_t *ts = timers_of(pool);
    pp_timer_t *t;

    if (!ts)
        return;
    pp__mutex_lock(ts->lock);
    ts->closed = 1;
    pp__mutex_unlock(ts->lock);
    pp__unpark(ts->parker);    /* the thread leaves */
    while (pp__clock_mono() < deadline && (t = take_top(ts)) != NULL)
        drop_tick(t, PP_ECANCELLED);
}

apr_status_t pp__timers_take_group(pp_pool_t *pool, const pp_group_t *g, pp__queue_t *out)
{
    pp__timers_t *ts = timers_of(pool);
    pp_timer_t *t, *taken = NULL;
    apr_uint32_t i, n = 0;
    apr_status_t rv = APR_SUCCESS;
    pp__entry_t e;

    if (!ts)
        return APR_SUCCESS;
    pp__mutex_lock(ts->lock);
    for (i = 0; i < ts->heap.n; i++) {
        t = of_node(ts->heap.v[i]);
        if (t->group == g) {
            t->taken = taken;
            taken = t;
            n++;
        }
    }
    if (n > 0)
        rv = pp__queue_reserve(out, n);
    for (t = taken; rv == APR_SUCCESS && t; t = t->taken) {
        pp__theap_remove(&ts->heap, &t->node);
        t->state = T_BUSY;
        make_tick(t, &e);
        pp__counter_add_shared(&pool->timer_submitted, 1);
        pp__queue_push(out, &e);    /* reserved: cannot fail */
    }
    publish_waiting_locked(ts);
    pp__mutex_unlock(ts->lock);
    return rv;
}

apr_uint32_t pp__timers_waiting(pp_pool_t *pool)
{
    pp__timers_t *ts = timers_of(pool);

    return ts ? atomic_load_explicit(&ts->nwaiting, memory_order_relaxed) : 0;
}

void pp__timers_free(pp_pool_t *pool)
{
    pp__timers_t *ts = timers_of(pool);
    apr_status_t ignored;
    pp_timer_t *t;

    if (!ts)
        return;
    if (!forked(pool)) {
        pp__timers_close(pool, PP__FOREVER);    /* what a timed-out close left */
        apr_thread_join(&ignored, ts->thread);
    }
    while ((t = ts->all) != NULL) {
        ts->all = t->next;
        free(t);
    }
    pp__theap_destroy(&ts->heap);
    apr_pool_destroy(ts->p);
}
