/*
 * A worker's local run queue: a fixed-size work-stealing deque after
 * Chase and Lev, in the C11 form of Le, Pop, Cohen and Zappa Nardelli,
 * "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP
 * 2013). The owner pushes and pops at the bottom (LIFO: a task's children
 * run depth-first, on a warm cache); any other thread steals at the top
 * (the oldest, usually the largest piece of work). It never grows: a full
 * deque makes its owner use the pool's global queue instead.
 *
 * Nothing here locks or allocates. Not installed.
 */
#ifndef PP_DEQUE_H
#define PP_DEQUE_H

#include "queue.h"

#include <stdatomic.h>

#define PP__DEQUE_SIZE 256u    /* a power of two */
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
} pp__slot_t;

/* top and bottom are free-running 32-bit counters compared by signed
 * difference; each sits on a cache line of its own, since the owner
 * writes one and the thieves the other. */
typedef struct pp__deque_t {
    _Atomic apr_uint32_t top;
    char pad1[PP__CACHE_LINE - sizeof(apr_uint32_t)];
    _Atomic apr_uint32_t bottom;
    char pad2[PP__CACHE_LINE - sizeof(apr_uint32_t)];
    pp__slot_t slot[PP__DEQUE_SIZE];
} pp__deque_t;

/** Make d empty. */
void pp__deque_init(pp__deque_t *d);

/** Owner only: non-zero when a push would not fit. */
int pp__deque_full(pp__deque_t *d);

/** Owner only: append e at the bottom; the caller checked pp__deque_full. */
void pp__deque_push(pp__deque_t *d, const pp__entry_t *e);

/** Owner only: take the newest entry into e; 0 if the deque is empty. */
int pp__deque_pop(pp__deque_t *d, pp__entry_t *e);

/**
 * Any thread: take the oldest entry into e. 1 taken, 0 empty, -1 lost a
 * race with another taker (the deque was not empty; try again).
 */
int pp__deque_steal(pp__deque_t *d, pp__entry_t *e);

/** Any thread: how many entries there are, as of some recent moment. */
apr_uint32_t pp__deque_len(pp__deque_t *d);

#endif
