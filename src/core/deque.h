/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A worker's local run queue: a fixed-size work-stealing deque after
 * Chase and Lev, in the C11 form of Le, Pop, Cohen and Zappa Nardelli,
 * "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP
 * 2013). The owner pushes and pops at the bottom (LIFO: a task's children
 * run depth-first, on a warm cache); any other thread steals at the top
 * (the oldest, usually the largest piece of work). It starts with
 * PP__DEQUE_SIZE slots in place and, when full, its owner doubles it (up
 * to the bound given to pp__deque_init) as Chase and Lev do; past that
 * bound, or when memory runs out, the owner uses the pool's global queue
 * instead. A ring it outgrew stays until pp__deque_free, since a thief
 * that stalled after loading it may still read it: this is the price of
 * no reclamation scheme, at most as much again as the largest ring.
 *
 * Nothing here locks; only growing allocates. Not installed.
 */
#ifndef PP_DEQUE_H
#define PP_DEQUE_H

#include "queue.h"

#include <stdatomic.h>

#define PP__DEQUE_SIZE 256u      /* slots in place; a power of two */
#define PP__DEQUE_MAX  65536u    /* the most an unbounded pool's deque grows to */
#define PP__CACHE_LINE 64

/* An entry's fields as atomics: a thief may read a slot while the owner
 * rewrites it for a later push (it then loses its CAS and throws the copy
 * away). Relaxed loads and stores cost what plain ones do. */
typedef struct pp__slot_t {
    _Atomic(pp_task_fn)           fn;
    _Atomic(void *)               arg;
    _Atomic(void (*)(void *))     release;
    _Atomic(const char *)         name;
    _Atomic(pp_group_t *)         group;
    _Atomic(apr_time_t)           queued;
    _Atomic(apr_time_t)           not_after;
} pp__slot_t;

/* top and bottom are free-running counters compared by signed difference.
 * 64 bits, as crossbeam's: a thief stalled between reading top and its CAS
 * while top moves on by exactly the counter's range would otherwise win
 * with a stale slot (one task run twice, one lost). 2^32 steals take
 * seconds; 2^64 take centuries. (On a 32-bit target the atomics are
 * still lock-free where the CPU has a double-word CAS: i686, ARMv7.) Each
 * sits on a cache line of its own, since the owner writes one and the
 * thieves the other. */
typedef apr_uint64_t pp__dq_index_t;

/* Where the entries are: the deque's own slots, or a grown array. */
typedef struct pp__ring_t {
    pp__dq_index_t     mask;     /* slots - 1 */
    pp__slot_t        *slot;
    struct pp__ring_t *older;    /* the ring this one replaced, or NULL */
} pp__ring_t;

typedef struct pp__deque_t {
    _Atomic pp__dq_index_t top;
    char pad1[PP__CACHE_LINE - sizeof(pp__dq_index_t)];
    _Atomic pp__dq_index_t bottom;
    char pad2[PP__CACHE_LINE - sizeof(pp__dq_index_t)];
    /* Written by the owner only, when it grows the deque, before the
     * bottom that first counts an entry in the new ring (release): a
     * thief that sees that bottom (acquire) and then loads ring finds the
     * new one or a newer. One that finds an older ring reads a slot that
     * the owner no longer writes, holding what was copied from it. */
    _Atomic(pp__ring_t *)  ring;
    pp__dq_index_t         max;      /* the most slots it may grow to */
    pp__ring_t             first;
    pp__slot_t             slot[PP__DEQUE_SIZE];
} pp__deque_t;

/** Make d empty, with room to grow to max slots (a power of two, at
 *  least PP__DEQUE_SIZE; PP__DEQUE_SIZE keeps it at its own slots). */
void pp__deque_init(pp__deque_t *d, apr_uint32_t max);

/** Free the rings d grew into; no thread may use d any more. */
void pp__deque_free(pp__deque_t *d);

/** Owner only: double d's ring (copying what it holds) unless it is at
 *  its bound or memory runs out; 1 grown, 0 not. */
int pp__deque_grow(pp__deque_t *d);

/**
 * Any thread: take the oldest entry into e. 1 taken, 0 empty, -1 lost a
 * race with another taker (the deque was not empty; try again).
 */
int pp__deque_steal(pp__deque_t *d, pp__entry_t *e);

/**
 * pp__deque_steal in its two steps, for tests that stall a thief between
 * them: read copies the oldest entry into e and its index into *t (0 when
 * empty); claim then takes it unless another taker moved top (1 or -1).
 */
int pp__deque_steal_read(pp__deque_t *d, pp__entry_t *e, pp__dq_index_t *t);
int pp__deque_steal_claim(pp__deque_t *d, pp__dq_index_t t);

/** Any thread: how many entries there are, as of some recent moment. */
apr_uint32_t pp__deque_len(pp__deque_t *d);


/* The owner's side, inline: a nested submit is a push and its run a pop,
 * so a nested task makes no call into deque.c. Their orderings are
 * explained with the thief's side, in deque.c. */

static inline void pp__slot_put(pp__slot_t *s, const pp__entry_t *e)
{
    atomic_store_explicit(&s->fn, e->fn, memory_order_relaxed);
    atomic_store_explicit(&s->arg, e->arg, memory_order_relaxed);
    atomic_store_explicit(&s->release, e->release, memory_order_relaxed);
    atomic_store_explicit(&s->name, e->name, memory_order_relaxed);
    atomic_store_explicit(&s->group, e->group, memory_order_relaxed);
    atomic_store_explicit(&s->queued, e->queued, memory_order_relaxed);
    atomic_store_explicit(&s->not_after, e->not_after, memory_order_relaxed);
}

static inline void pp__slot_get(pp__slot_t *s, pp__entry_t *e)
{
    e->fn = atomic_load_explicit(&s->fn, memory_order_relaxed);
    e->arg = atomic_load_explicit(&s->arg, memory_order_relaxed);
    e->release = atomic_load_explicit(&s->release, memory_order_relaxed);
    e->name = atomic_load_explicit(&s->name, memory_order_relaxed);
    e->group = atomic_load_explicit(&s->group, memory_order_relaxed);
    e->queued = atomic_load_explicit(&s->queued, memory_order_relaxed);
    e->not_after = atomic_load_explicit(&s->not_after, memory_order_relaxed);
}

/** Owner only: how many more entries fit without growing. */
static inline apr_uint32_t pp__deque_room(pp__deque_t *d)
{
    pp__ring_t *r = atomic_load_explicit(&d->ring, memory_order_relaxed);
    pp__dq_index_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    pp__dq_index_t t = atomic_load_explicit(&d->top, memory_order_acquire);

    return (apr_uint32_t)(r->mask + 1 - (b - t));
}

/** Owner only: non-zero when a push would not fit, even after growing. */
static inline int pp__deque_full(pp__deque_t *d)
{
    return pp__deque_room(d) == 0 && !pp__deque_grow(d);
}

/** Owner only: append e at the bottom; the caller checked pp__deque_full. */
static inline void pp__deque_push(pp__deque_t *d, const pp__entry_t *e)
{
    pp__ring_t *r = atomic_load_explicit(&d->ring, memory_order_relaxed);
    pp__dq_index_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);

    pp__slot_put(&r->slot[b & r->mask], e);
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}

/** Owner only: take the newest entry into e; 0 if the deque is empty. */
static inline int pp__deque_pop(pp__deque_t *d, pp__entry_t *e)
{
    pp__dq_index_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    pp__dq_index_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    pp__ring_t *r;
    apr_int64_t left;
    int won;

    /* Empty, and only we could fill it: top only grows, so a stale top
     * overstates the length. Spares the fence on the idle path. */
    if ((apr_int64_t)(b - t) <= 0)
        return 0;
    b--;
    atomic_store_explicit(&d->bottom, b, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    t = atomic_load_explicit(&d->top, memory_order_relaxed);
    left = (apr_int64_t)(b - t);
    if (left < 0) {    /* it was empty */
        atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
        return 0;
    }
    r = atomic_load_explicit(&d->ring, memory_order_relaxed);
    pp__slot_get(&r->slot[b & r->mask], e);
    if (left > 0)      /* more than one: no thief can reach this one */
        return 1;
    /* The last entry: a thief may be taking it right now. */
    won = atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                  memory_order_relaxed);
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
    return won;
}

#endif
