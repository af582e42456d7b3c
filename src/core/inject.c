/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The injector (inject.h). The orderings are crossbeam's, whose list
 * channel this follows: every claim is a seq_cst CAS on its index, so
 * that a take's "empty" (its fence, then the tail) and the sleep/wake
 * handshake's fences order against the pushes; a slot's WRITE bit is
 * set by release and looked for by acquire, which publishes the entry;
 * a block's next pointer and the ends' block pointers likewise.
 */
#include "config.h"
#include "inject.h"
#include "backoff.h"
#include "fault.h"

#include <stdlib.h>

#define WRITE   1u    /* the entry is in the slot */
#define READ    2u    /* its taker is done with the slot */
#define DESTROY 4u    /* the slot's taker frees the block when done */

#define STEP ((apr_uint64_t)1 << PP__INJ_SHIFT)

/* An end's index, then its block: the block is stored before the index
 * moves past a lap's end, so the block read after is the index's or a
 * later one (whose claim then fails: the index has moved on). */
static apr_uint64_t load_end(pp__inj_end_t *end, pp__inj_block_t **block)
{
    apr_uint64_t index = atomic_load_explicit(&end->index, memory_order_acquire);

    *block = atomic_load_explicit(&end->block, memory_order_acquire);
    return index;
}

static apr_uint32_t offset_of(apr_uint64_t index)
{
    return (apr_uint32_t)((index >> PP__INJ_SHIFT) % PP__INJ_LAP);
}

_Static_assert(sizeof(pp__inj_block_t) <= PP__SLAB_PIECE, "a block fits a slab's piece");

/* Back where it came from. */
static void block_release(pp__inject_t *q, pp__inj_block_t *b)
{
    if (b && b->slab)
        pp__slab_put(&q->slabs, b->slab);
    else
        free(b);
}

/* An empty block: a spare's, the cached one, or a new one, from a slab
 * when the queue is deep (from malloc when the OS has no region). The
 * cache's exchanges are acq_rel: the takers' last touches of a block
 * (block_free) come before its reuse here. A reused block keeps its
 * slab. */
static pp__inj_block_t *block_new(pp__inject_t *q, pp__inj_block_t **spare, int deep)
{
    pp__inj_block_t *b;
    pp__slab_t *slab;
    apr_uint32_t i;

    if (spare && *spare) {
        b = *spare;
        *spare = atomic_load_explicit(&b->next, memory_order_relaxed);
        atomic_store_explicit(&b->next, NULL, memory_order_relaxed);
        return b;
    }
    b = atomic_exchange_explicit(&q->cache, NULL, memory_order_acq_rel);
    /* A shallow queue reuses no slab's block: that block would keep its
     * whole region from being let go. */
    if (b && b->slab && !deep) {
        block_release(q, b);
        b = NULL;
    }
    if (!b && pp__fault_hit(PP__FAULT_QUEUE_GROW))
        return NULL;
    if (!b && deep && (b = pp__slabs_get(&q->slabs, &slab)))
        b->slab = slab;
    if (b) {    /* used before: the cache's, or a reused region's */
        atomic_store_explicit(&b->next, NULL, memory_order_relaxed);
        for (i = 0; i < PP__INJ_CAP; i++)
            atomic_store_explicit(&b->slots[i].state, 0, memory_order_relaxed);
        return b;
    }
    /* Shallow again: the region being carved is let go once its blocks
     * are back (slab.h), rather than held by this queue until its next
     * spike. */
    if (!deep && pp__slabs_live(&q->slabs))
        pp__slabs_retire(&q->slabs);
    return calloc(1, sizeof(*b));
}

/* A block nobody uses any more: into the cache, and what was there out. */
static void block_free(pp__inject_t *q, pp__inj_block_t *b)
{
    block_release(q, atomic_exchange_explicit(&q->cache, b, memory_order_acq_rel));
}

/* A block made for a push that did not need it after all. */
static void block_unused(pp__inject_t *q, pp__inj_block_t *b, pp__inj_block_t **spare)
{
    if (!b)
        return;
    if (spare) {
        atomic_store_explicit(&b->next, *spare, memory_order_relaxed);
        *spare = b;
    }
    else {
        block_free(q, b);
    }
}

apr_status_t pp__inject_spares(pp__inject_t *q, pp__inj_block_t **spare, apr_uint32_t n)
{
    pp__inj_block_t *list = NULL, *b;

    while (n-- > 0) {
        if (pp__fault_hit(PP__FAULT_QUEUE_GROW) || !(b = calloc(1, sizeof(*b)))) {
            pp__inject_free_spares(q, list);
            return APR_ENOMEM;
        }
        atomic_store_explicit(&b->next, list, memory_order_relaxed);
        list = b;
    }
    *spare = list;
    return APR_SUCCESS;
}

void pp__inject_free_spares(pp__inject_t *q, pp__inj_block_t *spare)
{
    while (spare) {
        pp__inj_block_t *next = atomic_load_explicit(&spare->next, memory_order_relaxed);
        block_release(q, spare);
        spare = next;
    }
}

apr_status_t pp__inject_init(pp__inject_t *q)
{
    pp__inj_block_t *b = calloc(1, sizeof(*b));

    if (!b)
        return APR_ENOMEM;
    atomic_init(&q->head.index, 0);
    atomic_init(&q->head.block, b);
    atomic_init(&q->tail.index, 0);
    atomic_init(&q->tail.block, b);
    atomic_init(&q->cache, NULL);
    pp__slabs_init(&q->slabs);
    return APR_SUCCESS;
}

void pp__inject_destroy(pp__inject_t *q)
{
    apr_uint64_t head = atomic_load_explicit(&q->head.index, memory_order_relaxed) & ~PP__INJ_MARK;
    apr_uint64_t tail = atomic_load_explicit(&q->tail.index, memory_order_relaxed) & ~PP__INJ_MARK;
    pp__inj_block_t *b = atomic_load_explicit(&q->head.block, memory_order_relaxed), *next;

    /* Blocks behind the head were freed by their takers. */
    for (; head != tail; head += STEP) {
        if (offset_of(head) == PP__INJ_CAP) {
            next = atomic_load_explicit(&b->next, memory_order_relaxed);
            block_release(q, b);
            b = next;
        }
    }
    block_release(q, b);
    block_release(q, atomic_load_explicit(&q->cache, memory_order_relaxed));
    atomic_store_explicit(&q->cache, NULL, memory_order_relaxed);
    pp__slabs_retire(&q->slabs);
    atomic_store_explicit(&q->head.block, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->tail.block, NULL, memory_order_relaxed);
}

void pp__inject_close(pp__inject_t *q)
{
    atomic_fetch_or_explicit(&q->tail.index, PP__INJ_MARK, memory_order_seq_cst);
}

/* Whether the queue is PP__INJ_DEEP long at this tail: a look at the
 * takers' line once a block, by the pusher that will install the next. */
static int is_deep(pp__inject_t *q, apr_uint64_t tail)
{
    apr_uint64_t t = pp__inj_count(tail);
    apr_uint64_t h = pp__inj_count(atomic_load_explicit(&q->head.index, memory_order_relaxed));

    return t > h && t - h >= PP__INJ_DEEP;    /* the head may be ahead of a stale tail */
}

apr_status_t pp__inject_push(pp__inject_t *q, const pp__entry_t *e, pp__inj_block_t **spare)
{
    pp__inj_block_t *block, *next = NULL;
    apr_uint64_t tail = load_end(&q->tail, &block);
    pp__inj_slot_t *slot;
    apr_uint32_t offset, k = 0;

    for (;;) {
        if (tail & PP__INJ_MARK) {
            block_unused(q, next, spare);
            return PP_ESHUTDOWN;
        }
        offset = offset_of(tail);
        if (offset == PP__INJ_CAP) {    /* the next block is on its way */
            pp__backoff(&k);
            tail = load_end(&q->tail, &block);
            continue;
        }
        /* The block's last slot: its claimer installs the next block, so
         * make that before claiming (a failure then queues nothing). */
        if (offset + 1 == PP__INJ_CAP && !next
            && !(next = block_new(q, spare, is_deep(q, tail))))
            return APR_ENOMEM;
        if (atomic_compare_exchange_weak_explicit(&q->tail.index, &tail, tail + STEP,
                                                  memory_order_seq_cst, memory_order_acquire))
            break;
        /* tail is the new value; its block was stored before it */
        block = atomic_load_explicit(&q->tail.block, memory_order_acquire);
    }
    if (offset + 1 == PP__INJ_CAP) {
        /* Block first, then the index past the lap's last (which is no
         * slot): an add, not a store, so that a close's mark set
         * meanwhile stays. */
        atomic_store_explicit(&q->tail.block, next, memory_order_release);
        atomic_fetch_add_explicit(&q->tail.index, STEP, memory_order_release);
        atomic_store_explicit(&block->next, next, memory_order_release);
        next = NULL;
    }
    block_unused(q, next, spare);
    slot = &block->slots[offset];
    slot->e = *e;
    atomic_fetch_or_explicit(&slot->state, WRITE, memory_order_release);
    return APR_SUCCESS;
}

/* Let b go, unless a slot from start on is still being read: then its
 * taker will (it finds DESTROY set when it is done). The last slot is
 * not looked at: its taker is the caller, or called this earlier. */
static void block_destroy(pp__inject_t *q, pp__inj_block_t *b, apr_uint32_t start)
{
    apr_uint32_t i;

    for (i = start; i + 1 < PP__INJ_CAP; i++) {
        _Atomic apr_uint32_t *state = &b->slots[i].state;
        if (!(atomic_load_explicit(state, memory_order_acquire) & READ)
            && !(atomic_fetch_or_explicit(state, DESTROY, memory_order_acq_rel) & READ))
            return;
    }
    block_free(q, b);
}

int pp__inject_pop(pp__inject_t *q, pp__entry_t *e, apr_uint64_t *seen)
{
    pp__inj_block_t *block, *next;
    apr_uint64_t head = load_end(&q->head, &block), new_head, tail, index;
    pp__inj_slot_t *slot;
    apr_uint32_t offset, k = 0;

    *seen = 0;
    for (;;) {
        offset = offset_of(head);
        if (offset == PP__INJ_CAP) {    /* the next block is on its way */
            pp__backoff(&k);
            head = load_end(&q->head, &block);
            continue;
        }
        new_head = head + STEP;
        /* Without the "has a next block" mark, the tail may be in this
         * block: look (after a fence, so that a push whose CAS came
         * first is seen) whether anything is left. */
        if (!(new_head & PP__INJ_MARK)) {
            atomic_thread_fence(memory_order_seq_cst);
            tail = atomic_load_explicit(&q->tail.index, memory_order_relaxed);
            if (head >> PP__INJ_SHIFT == tail >> PP__INJ_SHIFT)
                return 0;
            *seen = pp__inj_count(tail) - pp__inj_count(head);
            if ((head >> PP__INJ_SHIFT) / PP__INJ_LAP != (tail >> PP__INJ_SHIFT) / PP__INJ_LAP)
                new_head |= PP__INJ_MARK;
        }
        if (atomic_compare_exchange_weak_explicit(&q->head.index, &head, new_head,
                                                  memory_order_seq_cst, memory_order_acquire))
            break;
        block = atomic_load_explicit(&q->head.block, memory_order_acquire);
    }
    if (offset + 1 == PP__INJ_CAP) {
        /* The block's last slot: move the head on to the next block,
         * once its pusher has linked it. */
        while (!(next = atomic_load_explicit(&block->next, memory_order_acquire)))
            pp__backoff(&k);
        index = (new_head & ~PP__INJ_MARK) + STEP;
        if (atomic_load_explicit(&next->next, memory_order_relaxed))
            index |= PP__INJ_MARK;
        if (!*seen) {    /* once a block, for the longest it has been */
            tail = atomic_load_explicit(&q->tail.index, memory_order_relaxed);
            *seen = pp__inj_count(tail) - pp__inj_count(head);
        }
        atomic_store_explicit(&q->head.block, next, memory_order_release);
        atomic_store_explicit(&q->head.index, index, memory_order_release);
    }
    slot = &block->slots[offset];
    while (!(atomic_load_explicit(&slot->state, memory_order_acquire) & WRITE))
        pp__backoff(&k);
    *e = slot->e;
    if (offset + 1 == PP__INJ_CAP)
        block_destroy(q, block, 0);
    else if (atomic_fetch_or_explicit(&slot->state, READ, memory_order_acq_rel) & DESTROY)
        block_destroy(q, block, offset + 1);
    return 1;
}
