/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The injector: the shared queue's NORMAL level in a pool without a
 * queue_capacity, a lock-free multi-producer, multi-consumer FIFO, so that
 * outside submits and the workers that take them do not meet on the queue
 * lock (docs/design.md, "The injector"). The layout is crossbeam's
 * unbounded queue (SegQueue, and its list channel's closing mark): a list
 * of blocks of PP__INJ_CAP slots; a push claims the tail's next index with
 * one CAS, then writes its slot and sets the slot's WRITE bit; a take
 * claims the head's next index with one CAS, waits for that bit (the
 * pusher is between its CAS and its write, a few instructions), then
 * copies the entry out. The last index of each lap is never a slot: while
 * an index sits there, the thread that claimed the block's last slot is
 * installing the next block, and the others wait. A block is freed by
 * whoever reads its last slot, or, if some slot is still being read then,
 * by that slot's reader (the DESTROY bit hands the job over).
 *
 * The tail index's low bit closes the injector: the shutdown sets it
 * (under the queue lock), and a push's CAS compares the whole word, so a
 * push and its look at the bit are one atomic step (models/sleepwake.pml,
 * INJECTOR, whose mutant SHUT_THEN_PUSH shows why). In the head index the
 * same bit says that the head block has a next one, which spares a take
 * the look at the tail while the queue is long.
 *
 * Indexes are 64 bits, as the deques' are: a claimer stalled between its
 * load and its CAS while the index moves on by the counter's whole range
 * would otherwise win with a stale block. Not installed.
 */
#ifndef PP_INJECT_H
#define PP_INJECT_H

#include "queue.h"
#include "slab.h"

#include <stdatomic.h>

#define PP__INJ_LAP   64u                /* indexes per block, a power of 2 */
#define PP__INJ_CAP   (PP__INJ_LAP - 1)  /* slots per block */
#define PP__INJ_SHIFT 1                  /* the low bit is a mark */
#define PP__INJ_MARK  ((apr_uint64_t)1)
#define PP__INJ_LINE  64

typedef struct pp__inj_slot_t {
    pp__entry_t          e;
    _Atomic apr_uint32_t state;    /* WRITE, READ, DESTROY bits (inject.c) */
} pp__inj_slot_t;

typedef struct pp__inj_block_t {
    _Atomic(struct pp__inj_block_t *) next;
    pp__slab_t                       *slab;    /* NULL: from malloc */
    pp__inj_slot_t                    slots[PP__INJ_CAP];
} pp__inj_block_t;

/* A queue this long (16 blocks, 64 KiB) or longer takes its blocks from
 * slabs; a shorter one from malloc, and gives its slab back. */
#define PP__INJ_DEEP (16 * PP__INJ_CAP)

typedef struct pp__inj_end_t {
    _Atomic apr_uint64_t          index;
    _Atomic(pp__inj_block_t *)    block;
} pp__inj_end_t;

/* The head and the tail on lines of their own: takers write the one,
 * pushers the other. cache: a block the takers were done with, kept for
 * the next push that needs one (with the head: a taker writes it, once a
 * block). Without it every block was a malloc on the pushing thread and
 * a free on a taking one, and glibc's arena lock and its heap's trimming
 * between the two cost more than the queue (W1: futex waits and page
 * faults were 25 % of the profile). */
typedef struct pp__inject_t {
    pp__inj_end_t head;
    _Atomic(pp__inj_block_t *) cache;
    char          pad1[PP__INJ_LINE - sizeof(pp__inj_end_t) - sizeof(void *)];
    pp__inj_end_t tail;
    pp__slabs_t   slabs;    /* the pushers make blocks */
    char          pad2[PP__INJ_LINE - sizeof(pp__inj_end_t) - sizeof(pp__slabs_t)];
} pp__inject_t;

/** An empty, open injector with its first block (APR_ENOMEM). */
apr_status_t pp__inject_init(pp__inject_t *q);

/** Free every block; entries still in it are forgotten, not released.
 *  Nobody may push or take any more. */
void pp__inject_destroy(pp__inject_t *q);

/**
 * Append a copy of e. PP_ESHUTDOWN once closed (nothing queued), or
 * APR_ENOMEM when a block was needed and none could be had (nothing
 * queued). A block comes from *spare when that list (linked by next)
 * has one, else from the injector's cache, a slab (deep) or malloc.
 */
apr_status_t pp__inject_push(pp__inject_t *q, const pp__entry_t *e, pp__inj_block_t **spare);

/** Take the oldest entry into e; 0 if the injector is empty. *seen is
 *  how many entries waited (e's included) when the take looked at the
 *  tail, which it does unless the head block has a next one, and then
 *  once a block at the block's last slot; else 0. The longest the
 *  injector has been is the most a take saw (it only grows between
 *  takes), within the 62 takes a block's length may go unlooked at. */
int pp__inject_pop(pp__inject_t *q, pp__entry_t *e, apr_uint64_t *seen);

/** Close: every push from now on fails (one atomic step with it). */
void pp__inject_close(pp__inject_t *q);

/** A list of n blocks for pp__inject_push (APR_ENOMEM: none made). */
apr_status_t pp__inject_spares(pp__inject_t *q, pp__inj_block_t **spare, apr_uint32_t n);

/** Free what a list of spares still holds (blocks from q's cache may
 *  have joined it). */
void pp__inject_free_spares(pp__inject_t *q, pp__inj_block_t *spare);

/* Entries an index has passed: every lap of PP__INJ_LAP indexes holds
 * PP__INJ_CAP slots. */
static inline apr_uint64_t pp__inj_count(apr_uint64_t index)
{
    apr_uint64_t i = index >> PP__INJ_SHIFT;

    return i - i / PP__INJ_LAP;
}

/** Every entry ever pushed (a push counts from its CAS, before its
 *  entry can be taken). */
static inline apr_uint64_t pp__inject_pushed(pp__inject_t *q)
{
    return pp__inj_count(atomic_load_explicit(&q->tail.index, memory_order_relaxed));
}

/** How many entries wait. The head is read first, by acquire, so the
 *  tail read after it is at least what the head's last taker saw: never
 *  negative. A caller that must see a given push fences first (the
 *  sleep/wake handshake's F1, F3, F4, F6). */
static inline apr_uint64_t pp__inject_len(pp__inject_t *q)
{
    apr_uint64_t head = atomic_load_explicit(&q->head.index, memory_order_acquire);

    return pp__inject_pushed(q) - pp__inj_count(head);
}

/** Is the injector closed? */
static inline int pp__inject_closed(pp__inject_t *q)
{
    return (atomic_load_explicit(&q->tail.index, memory_order_relaxed) & PP__INJ_MARK) != 0;
}

#endif
