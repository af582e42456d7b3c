/* SPDX-License-Identifier: Apache-2.0 */
/* The parker (src/park/park.h), tested directly on whichever backend is built. */
#include "config.h"
#include "testutil.h"
#include "park/park.h"

#include <apr_time.h>

static pp__parker_t *new_parker(apr_pool_t *p)
{
    pp__parker_t *k = NULL;

    T_OK_FATAL(pp__parker_create(&k, p));
    return k;
}

static void test_unpark_before_park(void)
{
    apr_pool_t *p;
    pp__parker_t *k;

    apr_pool_create(&p, t_root);
    k = new_parker(p);
    CU_ASSERT_FALSE(pp__park_notified(k));
    pp__unpark(k);
    CU_ASSERT_TRUE(pp__park_notified(k));
    /* A zero timeout never sleeps: only a token already there succeeds. */
    T_OK(pp__park_timed(k, 0));
    CU_ASSERT_FALSE(pp__park_notified(k));
    pp__unpark(k);
    pp__park(k);    /* hangs (and the alarm fails the run) if the token was lost */
    T_STATUS(pp__park_timed(k, 0), APR_TIMEUP);
    apr_pool_destroy(p);
}

typedef struct parked {
    pp__parker_t *k;
    volatile apr_uint32_t returned;
    apr_status_t rv;
} parked;

static void park_then_mark(void *arg)
{
    parked *x = arg;

    pp__park(x->k);
    apr_atomic_set32(&x->returned, 1);
}

static void timed_park_then_mark(void *arg)
{
    parked *x = arg;

    x->rv = pp__park_timed(x->k, apr_time_from_sec(10));
    apr_atomic_set32(&x->returned, 1);
}

/* The parker must still be blocked after 50 ms, then one unpark frees it. */
static void check_blocks_then_wakes(t_thread_fn parker_fn)
{
    apr_pool_t *p;
    parked x = { NULL, 0, APR_EGENERAL };
    t_thread *t;

    apr_pool_create(&p, t_root);
    x.k = new_parker(p);
    t = t_spawn(parker_fn, &x);
    apr_sleep(apr_time_from_msec(50));
    T_EQ(apr_atomic_read32(&x.returned), 0);
    pp__unpark(x.k);
    t_join(t);
    T_EQ(apr_atomic_read32(&x.returned), 1);
    CU_ASSERT_FALSE(pp__park_notified(x.k));
    apr_pool_destroy(p);
}

static void test_park_blocks_until_unpark(void)
{
    check_blocks_then_wakes(park_then_mark);
}

static void test_park_timed_woken(void)
{
    check_blocks_then_wakes(timed_park_then_mark);
}

static void test_park_timed_timeout(void)
{
    apr_pool_t *p;
    pp__parker_t *k;
    apr_time_t t0, dt;

    apr_pool_create(&p, t_root);
    k = new_parker(p);
    t0 = apr_time_now();
    T_STATUS(pp__park_timed(k, apr_time_from_msec(30)), APR_TIMEUP);
    dt = apr_time_now() - t0;
    CU_ASSERT(dt >= apr_time_from_msec(29));
    /* The timeout left neither a token nor a PARKED state behind. */
    CU_ASSERT_FALSE(pp__park_notified(k));
    T_STATUS(pp__park_timed(k, 0), APR_TIMEUP);
    T_STATUS(pp__park_timed(k, -5), APR_TIMEUP);
    pp__unpark(k);
    T_OK(pp__park_timed(k, apr_time_from_sec(5)));
    apr_pool_destroy(p);
}

static void test_many_unparks_one_token(void)
{
    apr_pool_t *p;
    pp__parker_t *k;
    int i;

    apr_pool_create(&p, t_root);
    k = new_parker(p);
    for (i = 0; i < 10; i++)
        pp__unpark(k);
    T_OK(pp__park_timed(k, 0));
    T_STATUS(pp__park_timed(k, apr_time_from_msec(10)), APR_TIMEUP);
    apr_pool_destroy(p);
}

/* Ping-pong between two threads, each parking on its own parker: any lost
 * token hangs the pair, any extra one lets a side run twice in a row. */
typedef struct pingpong {
    pp__parker_t *me, *peer;
    volatile apr_uint32_t *turn;  /* whose turn: 0 or 1 */
    apr_uint32_t id, rounds;
} pingpong;

static void pingpong_side(void *arg)
{
    pingpong *s = arg;
    apr_uint32_t i;

    for (i = 0; i < s->rounds; i++) {
        while (apr_atomic_read32(s->turn) != s->id)
            pp__park(s->me);
        apr_atomic_set32(s->turn, 1 - s->id);
        pp__unpark(s->peer);
    }
}

static void test_park_pingpong(void)
{
    apr_pool_t *p;
    volatile apr_uint32_t turn = 0;
    pingpong a, b;
    void *args[2] = { &a, &b };

    apr_pool_create(&p, t_root);
    a.me = b.peer = new_parker(p);
    b.me = a.peer = new_parker(p);
    a.turn = b.turn = &turn;
    a.id = 0;
    b.id = 1;
    a.rounds = b.rounds = t_scaled(100000);
    t_run_threads(2, pingpong_side, args);
    T_EQ(turn, 0);
    apr_pool_destroy(p);
}

void t_register_park(void)
{
    CU_pSuite s = CU_add_suite("park", NULL, NULL);

    CU_add_test(s, "unpark before park returns at once", test_unpark_before_park);
    CU_add_test(s, "park blocks until unparked", test_park_blocks_until_unpark);
    CU_add_test(s, "timed park woken before its timeout", test_park_timed_woken);
    CU_add_test(s, "timed park times out", test_park_timed_timeout);
    CU_add_test(s, "many unparks leave one token", test_many_unparks_one_token);
    CU_add_test(s, "two-thread ping-pong", test_park_pingpong);
}
