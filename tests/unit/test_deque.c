/* SPDX-License-Identifier: Apache-2.0 */
/* The work-stealing deque (src/core/deque.c): its order, its bound, its
 * growth, and every entry taken exactly once while thieves race the owner,
 * as it grows too. */
#include "config.h"
#include "testutil.h"
#include "core/deque.h"

#include <stdlib.h>

/* A deque from t_root that frees what it grew into with t_root. */
static apr_status_t free_deque(void *d)
{
    pp__deque_free(d);
    return APR_SUCCESS;
}

static pp__deque_t *new_deque(apr_uint32_t max)
{
    pp__deque_t *d = apr_palloc(t_root, sizeof(*d));

    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    pp__deque_init(d, max);
    apr_pool_cleanup_register(t_root, d, free_deque, apr_pool_cleanup_null);
    return d;
}

static pp__entry_t entry(apr_uintptr_t i)
{
    pp__entry_t e = { NULL, (void *)i, NULL, NULL, NULL, (apr_time_t)i, -(apr_time_t)i };
    return e;
}

/* The owner pops newest first, a thief takes oldest first; the deque holds
 * PP__DEQUE_SIZE entries and says when it is full, across wrap-around. */
static void test_deque_order_and_bound(void)
{
    pp__deque_t *d = new_deque(PP__DEQUE_SIZE);
    pp__entry_t e;
    apr_uintptr_t i, round;

    for (round = 0; round < 3; round++) {    /* the indices wrap the ring */
        CU_ASSERT_FALSE(pp__deque_pop(d, &e));
        T_EQ_AT(round, pp__deque_steal(d, &e), 0);
        for (i = 0; i < PP__DEQUE_SIZE; i++) {
            CU_ASSERT_FALSE(pp__deque_full(d));
            e = entry(i);
            pp__deque_push(d, &e);
        }
        CU_ASSERT_TRUE(pp__deque_full(d));
        T_EQ(pp__deque_len(d), PP__DEQUE_SIZE);
        T_EQ(pp__deque_steal(d, &e), 1);
        T_EQ((apr_uintptr_t)e.arg, 0);
        T_EQ(e.queued, 0);
        CU_ASSERT_FALSE(pp__deque_full(d));
        CU_ASSERT_TRUE(pp__deque_pop(d, &e));
        T_EQ((apr_uintptr_t)e.arg, PP__DEQUE_SIZE - 1);
        T_EQ(e.queued, PP__DEQUE_SIZE - 1);    /* every field comes back */
        T_EQ(e.not_after, -(apr_time_t)(PP__DEQUE_SIZE - 1));
        for (i = 1; i < PP__DEQUE_SIZE / 2; i++) {
            T_EQ_FATAL(pp__deque_steal(d, &e), 1);
            T_EQ_AT(i, (apr_uintptr_t)e.arg, i);
        }
        for (i = PP__DEQUE_SIZE - 2; i >= PP__DEQUE_SIZE / 2; i--) {
            CU_ASSERT_TRUE_FATAL(pp__deque_pop(d, &e));
            T_EQ_AT(i, (apr_uintptr_t)e.arg, i);
        }
        T_EQ(pp__deque_len(d), 0);
    }
}

/* Past its own slots a deque doubles, keeping its entries in order for
 * both ends, until its bound; and it wraps in a grown ring as well. */
static void test_deque_grows(void)
{
    const apr_uint32_t max = 8 * PP__DEQUE_SIZE;
    pp__deque_t *d = new_deque(max);
    pp__entry_t e;
    apr_uintptr_t i, next = 0, oldest = 0;
    apr_uint32_t round;

    for (round = 0; round < 3; round++) {    /* the third wraps the grown ring */
        while (next - oldest < max) {
            CU_ASSERT_FALSE_FATAL(pp__deque_full(d));
            e = entry(next++);
            pp__deque_push(d, &e);
        }
        CU_ASSERT_TRUE(pp__deque_full(d));    /* at its bound, no further */
        T_EQ(pp__deque_len(d), max);
        T_EQ(pp__deque_room(d), 0);
        /* Thieves take the oldest third, in order; the owner the newest. */
        for (i = 0; i < max / 3; i++) {
            T_EQ_FATAL(pp__deque_steal(d, &e), 1);
            T_EQ_AT(i, (apr_uintptr_t)e.arg, oldest++);
            T_EQ_AT(i, e.queued, (apr_time_t)e.arg);
            T_EQ_AT(i, e.not_after, -(apr_time_t)e.arg);
        }
        for (i = 0; i < max / 3; i++) {
            CU_ASSERT_TRUE_FATAL(pp__deque_pop(d, &e));
            T_EQ_AT(i, (apr_uintptr_t)e.arg, --next);
        }
        T_EQ(pp__deque_room(d), max - (next - oldest));
    }
    for (i = 0; pp__deque_steal(d, &e) == 1; i++)
        T_EQ_AT(i, (apr_uintptr_t)e.arg, oldest++);
    T_EQ(oldest, next);
    CU_ASSERT_FALSE(pp__deque_pop(d, &e));
}

/* One owner pushing and popping, three thieves stealing, a million
 * entries: each is taken exactly once, by somebody. */
#define RACE_THIEVES 3

typedef struct race {
    pp__deque_t *d;
    volatile apr_uint32_t *hits;
    volatile apr_uint32_t done;
    volatile apr_uint32_t stolen;
} race;

static void take(race *r, const pp__entry_t *e)
{
    apr_atomic_inc32(&r->hits[(apr_uintptr_t)e->arg]);
}

static void thief(void *arg)
{
    race *r = arg;
    pp__entry_t e;
    int rv;

    for (;;) {
        rv = pp__deque_steal(r->d, &e);
        if (rv > 0) {
            take(r, &e);
            apr_atomic_inc32(&r->stolen);
        }
        else if (rv == 0 && apr_atomic_read32(&r->done)) {
            break;
        }
    }
}

static void deque_race(apr_uint32_t max)
{
    apr_uint32_t n = t_scaled(1000000), i, bad = 0, pushed = 0;
    race r;
    t_thread *th[RACE_THIEVES];
    pp__entry_t e;

    r.d = new_deque(max);
    r.hits = calloc(n, sizeof(*r.hits));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.hits);
    r.done = 0;
    r.stolen = 0;
    for (i = 0; i < RACE_THIEVES; i++)
        th[i] = t_spawn(thief, &r);
    /* Bursts of pushes with a pop every third push, as a task that submits
     * children and runs some itself; a full deque is popped down. */
    while (pushed < n) {
        if (pp__deque_full(r.d)) {
            if (pp__deque_pop(r.d, &e))
                take(&r, &e);
            continue;
        }
        e = entry(pushed++);
        pp__deque_push(r.d, &e);
        if (pushed % 3 == 0 && pp__deque_pop(r.d, &e))
            take(&r, &e);
    }
    while (pp__deque_pop(r.d, &e))
        take(&r, &e);
    apr_atomic_set32(&r.done, 1);
    for (i = 0; i < RACE_THIEVES; i++)
        t_join(th[i]);
    for (i = 0; i < n; i++)
        bad += r.hits[i] != 1;
    T_EQ(bad, 0);
    T_EQ(pp__deque_len(r.d), 0);
    /* The race was real: the thieves took a share (on one core too, since
     * the owner yields the CPU at its time-slice ends). */
    CU_ASSERT(r.stolen > 0);
    free((void *)r.hits);
}

static void test_deque_race(void)
{
    deque_race(PP__DEQUE_SIZE);
}

/* The same while the owner grows the deque: the pushes outrun the pops
 * two to one, so it grows to its bound unless the thieves keep up. */
static void test_deque_race_growing(void)
{
    deque_race(PP__DEQUE_MAX);
}

/* Item 20 of issue 10: a thief reads top and the oldest slot, then
 * stalls; meanwhile the deque goes round its index range (here: top and
 * bottom moved on by 2^32, as 2^32 pushes and steals would move them) and
 * the slot holds another entry. Its claim must fail: with 32-bit indices
 * top would read the same again, the CAS would succeed, and the thief
 * would run a copy of an entry already taken. Then the deque still works
 * on both sides of a 32-bit boundary. */
static void test_deque_stalled_thief(void)
{
    pp__deque_t *d = new_deque(PP__DEQUE_SIZE);
    const pp__dq_index_t lap = (pp__dq_index_t)((apr_uint64_t)1 << 32);
    pp__dq_index_t t, base;
    pp__entry_t e = entry(1), got;
    apr_uintptr_t i;

    pp__deque_push(d, &e);
    T_EQ_FATAL(pp__deque_steal_read(d, &got, &t), 1);
    T_EQ(got.arg, (void *)1);
    /* The entry is taken, and 2^32 laps later the same slot holds entry 2. */
    CU_ASSERT_TRUE_FATAL(pp__deque_pop(d, &got));
    atomic_store(&d->top, t + lap);
    atomic_store(&d->bottom, t + lap);
    e = entry(2);
    pp__deque_push(d, &e);
    T_EQ(pp__deque_steal_claim(d, t), -1);
    T_EQ(pp__deque_len(d), 1);
    T_EQ(pp__deque_steal(d, &got), 1);
    T_EQ(got.arg, (void *)2);

    base = lap - PP__DEQUE_SIZE / 2;
    atomic_store(&d->top, base);
    atomic_store(&d->bottom, base);
    for (i = 0; i < PP__DEQUE_SIZE; i++) {
        e = entry(i);
        pp__deque_push(d, &e);
    }
    CU_ASSERT_TRUE(pp__deque_full(d));
    T_EQ(pp__deque_len(d), PP__DEQUE_SIZE);
    T_EQ(pp__deque_steal(d, &got), 1);
    T_EQ(got.arg, (void *)0);
    CU_ASSERT_TRUE(pp__deque_pop(d, &got));
    T_EQ(got.arg, (void *)(PP__DEQUE_SIZE - 1));
    T_EQ(pp__deque_len(d), PP__DEQUE_SIZE - 2);
}

/* A thief reads the oldest entry from the deque's own slots and stalls;
 * the owner grows the deque to a new ring. The thief's claim still holds,
 * for the entry it read, and the next steal reads the new ring. */
static void test_deque_thief_across_growth(void)
{
    pp__deque_t *d = new_deque(PP__DEQUE_MAX);
    pp__entry_t e, got;
    pp__dq_index_t t;
    apr_uintptr_t i;

    for (i = 0; i < PP__DEQUE_SIZE; i++) {
        e = entry(i);
        pp__deque_push(d, &e);
    }
    T_EQ_FATAL(pp__deque_steal_read(d, &got, &t), 1);
    CU_ASSERT_FALSE_FATAL(pp__deque_full(d));    /* grows */
    CU_ASSERT(atomic_load(&d->ring) != &d->first);
    e = entry(PP__DEQUE_SIZE);
    pp__deque_push(d, &e);
    T_EQ(pp__deque_steal_claim(d, t), 1);
    T_EQ(got.arg, (void *)0);
    T_EQ(pp__deque_steal(d, &got), 1);
    T_EQ(got.arg, (void *)1);
    CU_ASSERT_TRUE(pp__deque_pop(d, &got));
    T_EQ(got.arg, (void *)PP__DEQUE_SIZE);
    T_EQ(pp__deque_len(d), PP__DEQUE_SIZE - 2);
}

void t_register_deque(void)
{
    CU_pSuite s = CU_add_suite("deque", NULL, NULL);

    CU_add_test(s, "owner LIFO, thief FIFO, bounded, wrapping", test_deque_order_and_bound);
    CU_add_test(s, "grows to its bound, in order, wrapping", test_deque_grows);
    CU_add_test(s, "1,000,000 entries, owner and 3 thieves: each taken once", test_deque_race);
    CU_add_test(s, "the same while it grows", test_deque_race_growing);
    CU_add_test(s, "a thief stalled across a growth keeps its claim", test_deque_thief_across_growth);
    CU_add_test(s, "a thief stalled for 2^32 steals loses its claim", test_deque_stalled_thief);
}
