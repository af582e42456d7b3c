/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counters for the hot path. The pool's statistics counters each have one
 * writer at a time (a worker's own, or the queue lock's holder), so they
 * need no read-modify-write: a load and a release store do, where
 * apr_atomic_inc64 is an out-of-line call with a locked instruction and a
 * full barrier. Readers load with acquire, which keeps pp_pool_stats()'s
 * "read the later step first" argument (src/core/pool.c). configure insists on
 * C11 atomics (the scheduler's fences need them anyway).
 */
#ifndef PP_COUNTER_H
#define PP_COUNTER_H

#include <apr.h>
#include <stdatomic.h>

typedef _Atomic apr_uint64_t pp__counter_t;

/** Add n; only one thread at a time may add to a given counter. */
static inline void pp__counter_add(pp__counter_t *c, apr_uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_release);
}

/** Raise to v if below it (a high-water mark); one writer at a time. */
static inline void pp__counter_raise(pp__counter_t *c, apr_uint64_t v)
{
    if (v > atomic_load_explicit(c, memory_order_relaxed))
        atomic_store_explicit(c, v, memory_order_release);
}

/** Raise to v if below it, from any number of threads at once. */
static inline void pp__counter_raise_shared(pp__counter_t *c, apr_uint64_t v)
{
    apr_uint64_t old = atomic_load_explicit(c, memory_order_relaxed);

    while (v > old && !atomic_compare_exchange_weak_explicit(c, &old, v, memory_order_release,
                                                             memory_order_relaxed))
        ;
}

/** Add n from any number of threads at once. */
static inline void pp__counter_add_shared(pp__counter_t *c, apr_uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_acq_rel);
}

static inline apr_uint64_t pp__counter_read(pp__counter_t *c)
{
    return atomic_load_explicit(c, memory_order_acquire);
}

#endif
