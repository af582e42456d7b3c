/* SPDX-License-Identifier: Apache-2.0 */
/* The lock-free injector (src/core/inject.c): FIFO across its blocks,
 * the closing mark, the counts, failed allocations, and a race of
 * pushers and takers in which every entry is taken exactly once. */
#include "config.h"
#include "testutil.h"
#include "core/fault.h"
#include "core/inject.h"

#include <apr_thread_proc.h>
#include <stdlib.h>

static pp__entry_t entry(apr_uintptr_t i)
{
    pp__entry_t e = { NULL, (void *)i, NULL, NULL, NULL, 0, 0 };
    return e;
}

static int pop(pp__inject_t *q, pp__entry_t *e)
{
    apr_uint64_t seen;

    return pp__inject_pop(q, e, &seen);
}

/* Take up to max entries, checking that they come in order from out;
 * returns where the order got to. */
static apr_uintptr_t take_in_order(pp__inject_t *q, apr_uintptr_t out, apr_uintptr_t max)
{
    pp__entry_t e;
    apr_uintptr_t i;

    for (i = 0; i < max && pop(q, &e); i++, out++)
        T_EQ_AT(out, (apr_uintptr_t)e.arg, out);
    return out;
}

/* Several blocks' worth in and out, in rounds of changing sizes, so that
 * the ends cross block boundaries while full, empty and in between. */
static void test_inject_fifo_across_blocks(void)
{
    pp__inject_t q;
    pp__entry_t e;
    apr_uintptr_t in = 0, out = 0, round, i;

    T_OK_FATAL(pp__inject_init(&q));
    CU_ASSERT_FALSE(pop(&q, &e));
    for (round = 1; round < 40; round++) {
        for (i = 0; i < round * 7; i++) {
            e = entry(in++);
            T_OK(pp__inject_push(&q, &e, NULL));
        }
        T_EQ(pp__inject_len(&q), in - out);
        out = take_in_order(&q, out, round * 5);
    }
    T_EQ(pp__inject_pushed(&q), in);
    out = take_in_order(&q, out, (apr_uintptr_t)-1);
    CU_ASSERT_FALSE(pop(&q, &e));
    T_EQ(out, in);
    T_EQ(pp__inject_len(&q), 0);
    pp__inject_destroy(&q);
}

/* A take tells how many waited: every time while the head block is the
 * last, and once a block (at its last slot) while more blocks follow. */
static void test_inject_seen(void)
{
    pp__inject_t q;
    pp__entry_t e;
    apr_uint64_t seen, n = 3 * PP__INJ_CAP - 1, i, most = 0, looks = 0;

    T_OK_FATAL(pp__inject_init(&q));
    for (i = 0; i < n; i++) {
        e = entry(i);
        T_OK(pp__inject_push(&q, &e, NULL));
    }
    for (i = 0; i < n; i++) {
        CU_ASSERT_TRUE_FATAL(pp__inject_pop(&q, &e, &seen));
        if (seen) {
            T_EQ_AT(i, seen, n - i);
            looks++;
        }
        most = seen > most ? seen : most;
    }
    /* The first take looked (and marked the head: more blocks follow),
     * then the last take of the first and of the second block; then
     * every take of the third, which has no next (its last slot is
     * free, so nobody installed a fourth). */
    T_EQ(most, n);
    T_EQ(looks, 2 + PP__INJ_CAP);
    CU_ASSERT_FALSE(pp__inject_pop(&q, &e, &seen));
    T_EQ(seen, 0);
    pp__inject_destroy(&q);
}

/* A closed injector refuses pushes and still gives out what it holds,
 * also when it was closed with its tail at a block's last slot. */
static void test_inject_close(void)
{
    pp__inject_t q;
    pp__entry_t e;
    apr_uintptr_t i, n = PP__INJ_CAP - 1;

    T_OK_FATAL(pp__inject_init(&q));
    for (i = 0; i < n; i++) {
        e = entry(i);
        T_OK(pp__inject_push(&q, &e, NULL));
    }
    CU_ASSERT_FALSE(pp__inject_closed(&q));
    pp__inject_close(&q);
    CU_ASSERT_TRUE(pp__inject_closed(&q));
    T_STATUS(pp__inject_push(&q, &e, NULL), PP_ESHUTDOWN);
    T_EQ(pp__inject_len(&q), n);
    T_EQ(pp__inject_pushed(&q), n);
    T_EQ(take_in_order(&q, 0, (apr_uintptr_t)-1), n);
    pp__inject_destroy(&q);

    /* Closed right after the block's last slot was claimed: the mark
     * survives the tail's step past the lap's end. */
    T_OK_FATAL(pp__inject_init(&q));
    for (i = 0; i < PP__INJ_CAP; i++) {
        e = entry(i);
        T_OK(pp__inject_push(&q, &e, NULL));
    }
    pp__inject_close(&q);
    T_STATUS(pp__inject_push(&q, &e, NULL), PP_ESHUTDOWN);
    T_EQ(pp__inject_len(&q), PP__INJ_CAP);
    pp__inject_destroy(&q);    /* with entries left: nothing leaks */
}

/* A block that cannot be had refuses that one push and queues nothing;
 * the next push works, and spares serve the pushes that need blocks. */
static void test_inject_alloc_failure(void)
{
    pp__inject_t q;
    pp__inj_block_t *spare = NULL;
    pp__entry_t e;
    apr_uintptr_t i, in = 0, out = 0, refused = 0;

    T_OK_FATAL(pp__inject_init(&q));
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 1);
    for (i = 0; i < 3 * PP__INJ_CAP; i++) {
        e = entry(in);
        if (pp__inject_push(&q, &e, NULL) == APR_SUCCESS)
            in++;
        else
            refused++;
    }
    T_EQ(refused, 1);
    T_EQ(pp__inject_pushed(&q), in);
    out = take_in_order(&q, out, (apr_uintptr_t)-1);
    T_EQ(out, in);

    /* A block the takes were done with serves the next push that needs
     * one: no allocation, so the armed fault is not reached. */
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 1);
    for (i = 0; i < PP__INJ_CAP; i++) {
        e = entry(in++);
        T_OK(pp__inject_push(&q, &e, NULL));
    }
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 0);
    out = take_in_order(&q, out, (apr_uintptr_t)-1);
    T_EQ(out, in);

    pp__fault_arm(PP__FAULT_QUEUE_GROW, 2);
    T_STATUS(pp__inject_spares(&q, &spare, 3), APR_ENOMEM);
    T_OK(pp__inject_spares(&q, &spare, 3));
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 1);    /* malloc would fail: spares serve */
    for (i = 0; i < 3 * PP__INJ_CAP; i++) {
        e = entry(in++);
        T_OK(pp__inject_push(&q, &e, &spare));
    }
    CU_ASSERT_PTR_NULL(spare);
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 0);
    out = take_in_order(&q, out, (apr_uintptr_t)-1);
    T_EQ(out, in);
    pp__inject_free_spares(&q, spare);
    pp__inject_destroy(&q);
}

/* Push entries up to (not including) number `to`. */
static apr_uintptr_t push_to(pp__inject_t *q, apr_uintptr_t in, apr_uintptr_t to)
{
    pp__entry_t e;

    for (; in < to; in++) {
        e = entry(in);
        T_OK(pp__inject_push(q, &e, NULL));
    }
    return in;
}

/* A deep queue's blocks come from a slab (a region of the OS's); once
 * the queue is shallow again and its blocks are back, it holds no
 * region, and the regions it let go serve another injector's spike; the
 * destroy lets go of one that still holds entries. With no region to be
 * had, malloc serves. */
static void test_inject_slabs(void)
{
    /* The push of entry number c (counted from 0) installs the next
     * block when c is a block's last slot; deep from PP__INJ_DEEP on. */
    const apr_uintptr_t first_deep = PP__INJ_DEEP + PP__INJ_CAP - 1;
    pp__inject_t q, other;
    apr_uint32_t kept;
    pp__entry_t e;
    apr_uintptr_t in = 0, out = 0, i;

    T_OK_FATAL(pp__inject_init(&q));
    in = push_to(&q, in, first_deep);
    T_EQ(pp__slabs_live(&q.slabs), 0);
    in = push_to(&q, in, first_deep + 1);
    T_EQ(pp__slabs_live(&q.slabs), 1);
    in = push_to(&q, in, first_deep + 600 * PP__INJ_CAP);    /* beyond 511 blocks */
    T_EQ(pp__slabs_live(&q.slabs), 2);
    out = take_in_order(&q, out, (apr_uintptr_t)-1);
    T_EQ(out, in);
    /* Shallow now: three blocks' worth, one at a time. */
    for (i = 0; i < 3 * PP__INJ_CAP; i++) {
        in = push_to(&q, in, in + 1);
        out = take_in_order(&q, out, 1);
    }
    T_EQ(out, in);
    T_EQ(pp__slabs_live(&q.slabs), 0);
    /* Both regions are kept (the process keeps up to four), and the next
     * spike, of this injector or another, carves a kept one. */
    kept = pp__slabs_kept();
    CU_ASSERT_TRUE(kept >= 2);
    T_OK_FATAL(pp__inject_init(&other));
    push_to(&other, 0, first_deep + 1);
    T_EQ(pp__slabs_live(&other.slabs), 1);
    T_EQ(pp__slabs_kept(), kept - 1);
    pp__inject_destroy(&other);
    T_EQ(pp__slabs_kept(), kept);

    /* No region to be had: malloc serves that block, and the next
     * block's region comes. */
    pp__fault_arm(PP__FAULT_SLAB_MAP, 1);
    in = push_to(&q, in, out + first_deep + 1);
    T_EQ(pp__slabs_live(&q.slabs), 0);
    in = push_to(&q, in, out + first_deep + 1 + PP__INJ_CAP);
    T_EQ(pp__slabs_live(&q.slabs), 1);
    pp__fault_arm(PP__FAULT_SLAB_MAP, 0);
    out = take_in_order(&q, out, 2 * PP__INJ_CAP);
    CU_ASSERT_TRUE(pop(&q, &e));
    pp__inject_destroy(&q);    /* with a region's entries left */
    T_EQ(pp__slabs_live(&q.slabs), 0);
}

/* Pushers and takers at once: every entry taken exactly once, each
 * pusher's entries in its order. The takers start once the queue is
 * deep (or the pushers are done), so that its blocks come from slabs
 * and go back to them while pushers carve more. */
#define RACE_PUSHERS 3
#define RACE_TAKERS  3

typedef struct race {
    pp__inject_t q;
    apr_uint32_t per;          /* entries per pusher */
    volatile apr_uint32_t *hits;
    volatile apr_uint32_t pushers_done, taken, disorder;
    volatile apr_uint32_t next_id;
} race;

static void pusher(void *arg)
{
    race *r = arg;
    apr_uint32_t id = apr_atomic_inc32(&r->next_id), i;    /* the old value */
    pp__entry_t e;

    for (i = 0; i < r->per; i++) {
        e = entry((apr_uintptr_t)id * r->per + i);
        while (pp__inject_push(&r->q, &e, NULL) != APR_SUCCESS)
            ;
    }
    apr_atomic_inc32(&r->pushers_done);
}

static void taker(void *arg)
{
    race *r = arg;
    apr_uint32_t last[RACE_PUSHERS], k, v;
    pp__entry_t e;

    for (k = 0; k < RACE_PUSHERS; k++)
        last[k] = 0;
    while (apr_atomic_read32(&r->pushers_done) < RACE_PUSHERS
           && pp__inject_len(&r->q) < 4 * PP__INJ_DEEP)
        apr_thread_yield();
    for (;;) {
        if (pop(&r->q, &e)) {
            v = (apr_uint32_t)(apr_uintptr_t)e.arg;
            apr_atomic_inc32(&r->hits[v]);
            apr_atomic_inc32(&r->taken);
            /* One taker sees one pusher's entries in increasing order. */
            k = v / r->per;
            if (v % r->per + 1 <= last[k])
                apr_atomic_inc32(&r->disorder);
            last[k] = v % r->per + 1;
        }
        else if (apr_atomic_read32(&r->pushers_done) == RACE_PUSHERS) {
            if (!pop(&r->q, &e))
                break;
            apr_atomic_inc32(&r->hits[(apr_uintptr_t)e.arg]);
            apr_atomic_inc32(&r->taken);
        }
    }
}

static void test_inject_race(void)
{
    race r;
    t_thread *th[RACE_PUSHERS + RACE_TAKERS];
    apr_uint32_t n, i, bad = 0;

    r.per = t_scaled(300000);
    n = r.per * RACE_PUSHERS;
    r.hits = calloc(n, sizeof(*r.hits));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.hits);
    r.pushers_done = r.taken = r.disorder = r.next_id = 0;
    T_OK_FATAL(pp__inject_init(&r.q));
    for (i = 0; i < RACE_TAKERS; i++)
        th[i] = t_spawn(taker, &r);
    for (i = 0; i < RACE_PUSHERS; i++)
        th[RACE_TAKERS + i] = t_spawn(pusher, &r);
    for (i = 0; i < RACE_PUSHERS + RACE_TAKERS; i++)
        t_join(th[i]);
    for (i = 0; i < n; i++)
        bad += r.hits[i] != 1;
    T_EQ(bad, 0);
    T_EQ(r.taken, n);
    T_EQ(r.disorder, 0);
    T_EQ(pp__inject_pushed(&r.q), n);
    T_EQ(pp__inject_len(&r.q), 0);
    pp__inject_destroy(&r.q);
    T_EQ(pp__slabs_live(&r.q.slabs), 0);
    free((void *)r.hits);
}

void t_register_inject(void)
{
    CU_pSuite s = CU_add_suite("inject", NULL, NULL);

    CU_add_test(s, "FIFO across blocks", test_inject_fifo_across_blocks);
    CU_add_test(s, "a take tells how many waited", test_inject_seen);
    CU_add_test(s, "closed: pushes refused, contents still taken", test_inject_close);
    CU_add_test(s, "a failed block allocation queues nothing; cached blocks and spares serve",
                test_inject_alloc_failure);
    CU_add_test(s, "a deep queue's blocks come from slabs, which go back", test_inject_slabs);
    CU_add_test(s, "pushers and takers race: each entry taken once, in order per pusher",
                test_inject_race);
}
