/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strands (strand.h). A strand is idle (no turn anywhere) or scheduled
 * (its turn is queued or running); only a submit that finds it idle
 * queues a turn, and only the turn, finding the strand empty, makes it
 * idle again, both under the strand lock: so there is never more than one
 * turn, and a task pushed while a turn runs is either seen by that turn
 * or finds the strand idle and queues the next.
 *
 * Locks: the pool's strand_lock guards every strand's queue and flags;
 * the queue lock guards the pool's list of strands and the records' reuse.
 * Where both are held the queue lock comes first.
 *
 * Records come from the pool's own memory and are reused: a service that
 * makes a strand per connection keeps as many records as it had strands
 * open at once. A record goes back when its apr pool is gone and no turn
 * holds it.
 */
#include "config.h"
#include "strand.h"
#include "sched.h"

#include <string.h>

struct pp_strand_t {
    pp_pool_t   *pool;      /* NULL once the pool is freed first */
    apr_pool_t  *p;         /* the caller's: the strand closes with it */
    pp__queue_t  q;         /* tasks waiting for their turn, in order */
    unsigned     level;     /* the priority level its turns are queued at */
    int          scheduled; /* a turn is queued or running */
    int          open;      /* p is alive */
    pp_strand_t *next, *prev;    /* the pool's list, or the free list */
};

apr_status_t pp__strand_turn(void *strand, pp_task_ctx_t *ctx)
{
    (void)strand;
    (void)ctx;
    return APR_EGENERAL;    /* never called: run_entry runs turns itself */
}

/* The record is done with (closed, no turn): back to the pool. */
static void give_back(pp_strand_t *s)
{
    pp_pool_t *pool = s->pool;

    pp__mutex_lock(pool->lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        pool->strands = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pp__queue_destroy(&s->q);
    s->prev = NULL;
    s->next = pool->strand_free;
    pool->strand_free = s;
    pp__mutex_unlock(pool->lock);
}

/* Drop (PP_ECANCELLED) every task in q, then free its ring. */
static void drop_all(pp_pool_t *pool, pp__queue_t *q)
{
    pp__entry_t e;

    while (pp__queue_pop(q, &e))
        pp__drop_entry(pool, &e, PP_ECANCELLED);
    pp__queue_destroy(q);
}

/* End s's turn: take every waiting task, make it idle; drop the tasks. */
static void end_dropping(pp_strand_t *s)
{
    pp_pool_t *pool = s->pool;
    pp__queue_t q;
    int done;

    pp__mutex_lock(pool->strand_lock);
    pp__queue_move(&q, &s->q);
    s->scheduled = 0;
    done = !s->open;
    pp__mutex_unlock(pool->strand_lock);
    drop_all(pool, &q);
    if (done)
        give_back(s);
}

static apr_status_t queue_turn(pp_strand_t *s)
{
    pp__entry_t turn;

    memset(&turn, 0, sizeof(turn));
    turn.fn = pp__strand_turn;
    turn.arg = s;
    return pp__enqueue_internal(s->pool, s->level, &turn);
}

static apr_status_t strand_cleanup(void *data)
{
    pp_strand_t *s = data;
    pp_pool_t *pool = s->pool;
    pp__queue_t q;
    int idle;

    if (!pool)
        return APR_SUCCESS;
    pp__mutex_lock(pool->strand_lock);
    s->open = 0;
    pp__queue_move(&q, &s->q);
    idle = !s->scheduled;    /* else its turn gives the record back */
    pp__mutex_unlock(pool->strand_lock);
    drop_all(pool, &q);
    if (idle)
        give_back(s);
    return APR_SUCCESS;
}

apr_status_t pp_strand_create(pp_strand_t **out, pp_pool_t *pool, apr_pool_t *p)
{
    pp_strand_t *s;

    if (!out)
        return APR_EINVAL;
    *out = NULL;
    if (!pool || !p)
        return APR_EINVAL;
    if (forked(pool))
        return PP_ESHUTDOWN;
    pp__mutex_lock(pool->lock);
    if (load_state(pool) != STATE_RUNNING) {
        pp__mutex_unlock(pool->lock);
        return PP_ESHUTDOWN;
    }
    if ((s = pool->strand_free) != NULL)
        pool->strand_free = s->next;
    else
        s = apr_palloc(pool->p, sizeof(*s));    /* pool->p: under the queue lock */
    memset(s, 0, sizeof(*s));
    s->pool = pool;
    s->p = p;
    s->open = 1;
    s->next = pool->strands;
    if (s->next)
        s->next->prev = s;
    pool->strands = s;
    pp__mutex_unlock(pool->lock);
    apr_pool_cleanup_register(p, s, strand_cleanup, apr_pool_cleanup_null);
    *out = s;
    return APR_SUCCESS;
}

apr_status_t pp__strand_submit(pp_pool_t *pool, pp_strand_t *s, unsigned level,
                               const pp__entry_t *e)
{
    apr_status_t rv;
    pp__entry_t mine;
    pp__queue_t rest;
    int first;

    if (s->pool != pool)
        return APR_EINVAL;
    if (!accepting(pool, own_worker(pool)))
        return PP_ESHUTDOWN;
    pp__mutex_lock(pool->strand_lock);
    if (!s->open) {
        pp__mutex_unlock(pool->strand_lock);
        return APR_EINVAL;
    }
    rv = pp__queue_push(&s->q, e);
    first = rv == APR_SUCCESS && !s->scheduled;
    if (first) {
        s->scheduled = 1;
        s->level = level;
    }
    else if (rv == APR_SUCCESS) {
        /* Counted before the turn that runs it can see it. */
        pp__counter_add_shared(&pool->strand_submitted, 1);
    }
    pp__mutex_unlock(pool->strand_lock);
    if (!first)
        return rv;
    /* Nobody can run it until the turn is queued: count it first. */
    pp__counter_add_shared(&pool->strand_submitted, 1);
    rv = queue_turn(s);
    if (rv == APR_SUCCESS)
        return rv;
    /* The pool stopped taking tasks meanwhile (or had no memory for the
     * turn). Ours is refused; any that came after it, told they were
     * queued, are dropped as a cancel drops them. */
    pp__mutex_lock(pool->strand_lock);
    pp__queue_pop(&s->q, &mine);
    pp__queue_move(&rest, &s->q);
    s->scheduled = 0;
    first = !s->open;
    pp__mutex_unlock(pool->strand_lock);
    pp__counter_add_shared(&pool->strand_submitted, (apr_uint64_t)-1);
    drop_all(pool, &rest);
    if (first)
        give_back(s);
    return rv;
}

int pp__strand_next(pp_strand_t *s, pp__entry_t *e)
{
    pp_pool_t *pool = s->pool;
    int got, done = 0;

    pp__mutex_lock(pool->strand_lock);
    got = pp__queue_pop(&s->q, e);
    if (!got) {
        s->scheduled = 0;
        done = !s->open;
    }
    pp__mutex_unlock(pool->strand_lock);
    if (done)
        give_back(s);
    return got;
}

void pp__strand_again(pp_strand_t *s)
{
    pp_pool_t *pool = s->pool;
    int empty, done = 0;

    pp__mutex_lock(pool->strand_lock);
    empty = pp__queue_len(&s->q) == 0;
    if (empty) {
        s->scheduled = 0;
        done = !s->open;
    }
    pp__mutex_unlock(pool->strand_lock);
    if (done)
        give_back(s);
    if (!empty && queue_turn(s) != APR_SUCCESS)
        end_dropping(s);
}

void pp__strand_drop_turn(pp_pool_t *pool, const pp__entry_t *turn)
{
    (void)pool;
    end_dropping(turn->arg);
}

apr_status_t pp__strands_take_group_locked(pp_pool_t *pool, const pp_group_t *g,
                                           pp__queue_t *out)
{
    apr_status_t rv = APR_SUCCESS;
    pp_strand_t *s;

    ASSERT_LOCKED(pool);
    for (s = pool->strands; s && rv == APR_SUCCESS; s = s->next) {
        pp__mutex_lock(pool->strand_lock);
        rv = pp__queue_take_group(&s->q, g, out);
        pp__mutex_unlock(pool->strand_lock);
    }
    return rv;
}

void pp__strands_detach(pp_pool_t *pool)
{
    pp_strand_t *s;

    for (s = pool->strands; s; s = s->next) {
        if (s->open)
            apr_pool_cleanup_kill(s->p, s, strand_cleanup);
        pp__queue_destroy(&s->q);
        s->pool = NULL;
    }
    pool->strands = NULL;
}
