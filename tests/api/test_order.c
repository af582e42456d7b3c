/* SPDX-License-Identifier: Apache-2.0 */
/* Which task runs when: priorities, start deadlines (not_after) and
 * strands. */
#include "config.h"
#include "testutil.h"

#include <apr_time.h>
#include <string.h>

#define LOG_MAX 512

/* The order tasks ran in: each logs its tag. */
typedef struct run_log {
    volatile apr_uint32_t n;
    apr_uintptr_t tag[LOG_MAX];
} run_log;

typedef struct logged {
    run_log *log;
    apr_uintptr_t tag;
} logged;

static apr_status_t log_task(void *arg, pp_task_ctx_t *ctx)
{
    logged *l = arg;
    apr_uint32_t i = apr_atomic_inc32(&l->log->n);

    (void)ctx;
    if (i < LOG_MAX)
        l->log->tag[i] = l->tag;
    return APR_SUCCESS;
}

static pp_task_t task_of(pp_task_fn fn, void *arg, int priority)
{
    pp_task_t t;

    memset(&t, 0, sizeof(t));
    t.fn = fn;
    t.arg = arg;
    t.priority = priority;
    return t;
}

/* One worker, held by a gate task until the backlog is queued. */
static pp_pool_t *held_pool(apr_pool_t *p, t_gate *gate)
{
    pp_pool_t *pool = t_pool(p, 1, 0);

    memset(gate, 0, sizeof(*gate));
    T_OK(pp_submit(pool, t_gate_task, gate));
    t_gate_wait_arrived(gate, 1);
    return pool;
}

static const int prio_of[3] = { PP_PRIO_LOW, PP_PRIO_NORMAL, PP_PRIO_HIGH };

/* n tasks tagged 0 to n-1, the i-th at priority prio(i), queued behind a
 * held worker and then run: the order they ran in is in log. */
static void run_behind_gate(run_log *log, logged *l, apr_uint32_t n,
                            int (*prio)(apr_uint32_t i))
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    t_gate gate;
    apr_uint32_t i;

    apr_pool_create(&p, t_root);
    memset(log, 0, sizeof(*log));
    pool = held_pool(p, &gate);
    T_OK(pp_group_create(&g, p));
    for (i = 0; i < n; i++) {
        pp_task_t t = task_of(log_task, &l[i], prio(i));
        l[i].log = log;
        l[i].tag = i;
        T_OK(pp_submit_task(pool, &t, g, 0));
    }
    t_gate_open(&gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

static int prio_mixed(apr_uint32_t i)
{
    return prio_of[i % 3];
}

/* A mixed backlog behind a held worker runs HIGH, then NORMAL, then LOW,
 * each level in submission order. */
static void test_priority_order(void)
{
    run_log log;
    logged l[30];
    apr_uint32_t i, k = 0;
    int level;

    run_behind_gate(&log, l, 30, prio_mixed);
    T_EQ_FATAL(log.n, 30);
    for (level = 2; level >= 0; level--)
        for (i = (apr_uint32_t)level; i < 30; i += 3, k++)
            T_EQ_AT(k, log.tag[k], i);
}

static int prio_high_at_10(apr_uint32_t i)
{
    return i == 10 ? PP_PRIO_HIGH : PP_PRIO_NORMAL;
}

/* NORMAL tasks queued before a pool's first HIGH one (which waited
 * without the lock, in the injector) still run before the NORMAL ones
 * queued after it (which wait behind the lock with it): HIGH, then every
 * NORMAL in submission order. */
static void test_priority_first_use_keeps_order(void)
{
    run_log log;
    logged l[21];
    apr_uint32_t i;

    run_behind_gate(&log, l, 21, prio_high_at_10);
    T_EQ_FATAL(log.n, 21);
    T_EQ(log.tag[0], 10);
    for (i = 1; i < 21; i++)
        T_EQ_AT(i, log.tag[i], i <= 10 ? i - 1 : i);
}

static int prio_low_first(apr_uint32_t i)
{
    return i == 0 ? PP_PRIO_LOW : PP_PRIO_HIGH;
}

/* Under a flood of HIGH tasks a LOW one waits for PP_PRIO_PASS of them,
 * no more. */
static void test_priority_no_starving(void)
{
    run_log log;
    logged l[201];
    apr_uint32_t i;

    run_behind_gate(&log, l, 201, prio_low_first);
    T_EQ_FATAL(log.n, 201);
    for (i = 0; i < PP_PRIO_PASS; i++)
        T_EQ_AT(i, log.tag[i], i + 1);
    T_EQ(log.tag[PP_PRIO_PASS], 0);
}

/* A task's own submits: HIGH and LOW go to the shared queue at their
 * level, NORMAL to its worker's queue (newest first). With one worker:
 * the HIGH ones first, then its NORMAL ones newest first, then LOW. */
typedef struct nester {
    pp_pool_t *pool;
    pp_group_t *g;
    logged l[6];
    apr_uint32_t errors;
} nester;

static apr_status_t nest_mixed(void *arg, pp_task_ctx_t *ctx)
{
    nester *n = arg;
    apr_uint32_t i;

    (void)ctx;
    for (i = 0; i < 6; i++) {
        pp_task_t t = task_of(log_task, &n->l[i], prio_of[i % 3]);
        if (pp_submit_task(n->pool, &t, n->g, 0) != APR_SUCCESS)
            n->errors++;
    }
    return APR_SUCCESS;
}

static void test_priority_nested(void)
{
    static const apr_uintptr_t want[] = { 2, 5, 4, 1, 0, 3 };
    apr_pool_t *p;
    nester n;
    run_log log;
    apr_uint32_t i;

    apr_pool_create(&p, t_root);
    memset(&log, 0, sizeof(log));
    memset(&n, 0, sizeof(n));
    n.pool = t_pool(p, 1, 0);
    T_OK(pp_group_create(&n.g, p));
    for (i = 0; i < 6; i++) {
        n.l[i].log = &log;
        n.l[i].tag = i;
    }
    T_OK(pp_submit_ex(n.pool, nest_mixed, &n, n.g, 0));
    T_OK(pp_group_wait(n.g, apr_time_from_sec(30)));
    T_EQ(n.errors, 0);
    T_EQ_FATAL(log.n, 6);
    for (i = 0; i < 6; i++)
        T_EQ_AT(i, log.tag[i], want[i]);
    pp_pool_destroy(n.pool);
    apr_pool_destroy(p);
}

/* Priorities outside the three levels and negative deadlines are refused,
 * with nothing queued. */
static void test_task_fields_checked(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_task_t t;
    apr_uint32_t ran = 0;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    t = task_of(t_count_task, &ran, 2);
    T_STATUS(pp_submit_task(pool, &t, NULL, 0), APR_EINVAL);
    t.priority = -2;
    T_STATUS(pp_submit_task(pool, &t, NULL, 0), APR_EINVAL);
    t.priority = PP_PRIO_HIGH;
    t.not_after = -1;
    T_STATUS(pp_submit_timed(pool, &t, NULL, 0), APR_EINVAL);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(ran, 0);
    t_assert_accounted(pool);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* ---- start deadlines */

typedef struct outcomes {
    volatile apr_uint32_t expired, other, released, ran;
    char names[128];
} outcomes;

static void on_error(apr_status_t rv, const char *name, void *baton)
{
    outcomes *o = baton;

    if (rv == PP_EEXPIRED) {
        apr_atomic_inc32(&o->expired);
        if (strlen(o->names) + strlen(name) + 2 < sizeof(o->names)) {
            strcat(o->names, name);
            strcat(o->names, " ");
        }
    }
    else {
        apr_atomic_inc32(&o->other);
    }
}

static void count_release(void *arg)
{
    outcomes *o = arg;

    apr_atomic_inc32(&o->released);
}

static apr_status_t ran_task(void *arg, pp_task_ctx_t *ctx)
{
    outcomes *o = arg;

    (void)ctx;
    apr_atomic_inc32(&o->ran);
    return APR_SUCCESS;
}

static pp_task_t deadline_task(outcomes *o, const char *name, apr_time_t not_after)
{
    pp_task_t t = task_of(ran_task, o, PP_PRIO_NORMAL);

    t.release = count_release;
    t.name = name;
    t.not_after = not_after;
    return t;
}

static pp_pool_t *reporting_pool(apr_pool_t *p, outcomes *o, apr_uint32_t threads)
{
    pp_config_t cfg;
    pp_pool_t *pool;

    pp_config_init(&cfg);
    cfg.threads = threads;
    cfg.on_task_error = on_error;
    cfg.baton = o;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    return pool;
}

/* Tasks whose deadline passed while a held worker kept them waiting are
 * dropped, released once, reported as PP_EEXPIRED and counted; the others
 * run, and the group tells of the expiry. */
static void test_not_after_expires(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    outcomes o;
    t_gate gate;
    pp_task_t t;
    apr_time_t soon = apr_time_now() + apr_time_from_msec(20);
    char msg[128];

    apr_pool_create(&p, t_root);
    memset(&o, 0, sizeof(o));
    memset(&gate, 0, sizeof(gate));
    pool = reporting_pool(p, &o, 1);
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    T_OK(pp_group_create(&g, p));
    t = deadline_task(&o, "a", soon);
    T_OK(pp_submit_task(pool, &t, g, 0));
    t = deadline_task(&o, "none", 0);
    T_OK(pp_submit_task(pool, &t, g, 0));
    t = deadline_task(&o, "later", apr_time_now() + apr_time_from_sec(600));
    T_OK(pp_submit_task(pool, &t, g, 0));
    t = deadline_task(&o, "b", soon);
    t.priority = PP_PRIO_HIGH;
    T_OK(pp_submit_task(pool, &t, g, 0));
    while (apr_time_now() <= soon + apr_time_from_msec(5))
        apr_sleep(apr_time_from_msec(5));
    t_gate_open(&gate);
    T_STATUS(pp_group_status(g), APR_SUCCESS);    /* none ended yet */
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_STATUS(pp_group_status(g), PP_EEXPIRED);
    T_EQ(o.ran, 2);
    T_EQ(o.expired, 2);
    T_EQ(o.other, 0);
    T_EQ(o.released, 4);
    CU_ASSERT_STRING_EQUAL(o.names, "b a ");    /* HIGH first */
    pp_pool_stats(pool, &st);
    T_EQ(st.expired, 2);
    T_EQ(st.cancelled, 0);
    T_EQ(st.completed, 3);    /* with the gate task */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    pp_pool_destroy(pool);
    CU_ASSERT_PTR_NOT_NULL(strstr(pp_strerror(PP_EEXPIRED, msg, sizeof(msg)), "deadline"));
    apr_pool_destroy(p);
}

/* A task's own submit with a deadline waits in its worker's queue, and
 * expires there as anywhere. */
typedef struct nest_deadline {
    pp_pool_t *pool;
    pp_group_t *g;
    outcomes *o;
    apr_status_t rv;
} nest_deadline;

static apr_status_t submit_then_linger(void *arg, pp_task_ctx_t *ctx)
{
    nest_deadline *n = arg;
    apr_time_t soon = apr_time_now() + apr_time_from_msec(10);
    pp_task_t t = deadline_task(n->o, "child", soon);

    (void)ctx;
    n->rv = pp_submit_task(n->pool, &t, n->g, 0);
    while (apr_time_now() <= soon + apr_time_from_msec(5))
        apr_sleep(apr_time_from_msec(5));
    return APR_SUCCESS;
}

static void test_not_after_nested(void)
{
    apr_pool_t *p;
    nest_deadline n;
    outcomes o;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    memset(&o, 0, sizeof(o));
    memset(&n, 0, sizeof(n));
    n.o = &o;
    n.pool = reporting_pool(p, &o, 1);
    T_OK(pp_group_create(&n.g, p));
    T_OK(pp_submit_ex(n.pool, submit_then_linger, &n, n.g, 0));
    T_OK(pp_group_wait(n.g, apr_time_from_sec(30)));
    T_STATUS(pp_group_status(n.g), PP_EEXPIRED);
    T_OK(n.rv);
    T_EQ(o.ran, 0);
    T_EQ(o.expired, 1);
    T_EQ(o.released, 1);
    pp_pool_stats(n.pool, &st);
    T_EQ(st.expired, 1);
    T_OK(pp_pool_shutdown(n.pool, PP_DRAIN, -1));
    t_assert_accounted(n.pool);
    pp_pool_destroy(n.pool);
    apr_pool_destroy(p);
}

/* ---- strands */

typedef struct strand_state {
    pp_strand_t *strand;
    volatile apr_uint32_t inside, next, ran;
    volatile apr_uint32_t overlaps, out_of_order;
} strand_state;

typedef struct strand_item {
    strand_state *st;
    apr_uint32_t seq;
    t_gate *gate;    /* wait here first, if set */
} strand_item;

static apr_status_t strand_task(void *arg, pp_task_ctx_t *ctx)
{
    strand_item *it = arg;
    strand_state *st = it->st;

    if (apr_atomic_inc32(&st->inside) != 0)
        apr_atomic_inc32(&st->overlaps);
    if (it->gate)
        t_gate_task(it->gate, ctx);
    if (st->next != it->seq)
        apr_atomic_inc32(&st->out_of_order);
    st->next = it->seq + 1;
    apr_atomic_inc32(&st->ran);
    apr_atomic_dec32(&st->inside);
    return APR_SUCCESS;
}

static apr_status_t strand_submit(pp_pool_t *pool, strand_item *it, pp_group_t *g, int prio)
{
    pp_task_t t = task_of(strand_task, it, prio);

    t.strand = it->st->strand;
    return pp_submit_task(pool, &t, g, 0);
}

/* 8 strands x 2,000 tasks, submitted round-robin from outside to 4
 * workers: each strand's tasks one at a time and in order, all of them
 * run. */
static void test_strand_order(void)
{
    enum { NS = 8, NT = 2000 };
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    strand_state ss[NS];
    strand_item *items;
    apr_uint32_t i, k;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 4, 0);
    T_OK(pp_group_create(&g, p));
    memset(ss, 0, sizeof(ss));
    items = apr_pcalloc(p, NS * NT * sizeof(*items));
    for (k = 0; k < NS; k++)
        T_OK(pp_strand_create(&ss[k].strand, pool, p));
    for (i = 0; i < NT; i++)
        for (k = 0; k < NS; k++) {
            strand_item *it = &items[k * NT + i];
            it->st = &ss[k];
            it->seq = i;
            T_OK(strand_submit(pool, it, g, prio_of[(i + k) % 3]));
        }
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_OK(pp_group_status(g));
    for (k = 0; k < NS; k++) {
        T_EQ_AT(k, ss[k].ran, NT);
        T_EQ_AT(k, ss[k].overlaps, 0);
        T_EQ_AT(k, ss[k].out_of_order, 0);
    }
    pp_pool_stats(pool, &st);
    T_EQ(st.submitted, NS * NT);
    T_EQ(st.completed, NS * NT);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* Strands are independent: one held in its first task holds none of the
 * others, and a task's own submits to a strand keep their order too. */
typedef struct strand_nest {
    pp_pool_t *pool;
    pp_group_t *g;
    strand_item *items;
    apr_uint32_t n;
    volatile apr_uint32_t errors;
} strand_nest;

static apr_status_t submit_to_strand(void *arg, pp_task_ctx_t *ctx)
{
    strand_nest *sn = arg;
    apr_uint32_t i;

    (void)ctx;
    for (i = 0; i < sn->n; i++)
        if (strand_submit(sn->pool, &sn->items[i], sn->g, PP_PRIO_NORMAL) != APR_SUCCESS)
            apr_atomic_inc32(&sn->errors);
    return APR_SUCCESS;
}

static void test_strand_independent(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g, *gb;
    strand_state a, b;
    strand_item held, items[500];
    strand_nest sn;
    t_gate gate;
    apr_uint32_t i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK(pp_group_create(&g, p));
    T_OK(pp_group_create(&gb, p));
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&gate, 0, sizeof(gate));
    T_OK(pp_strand_create(&a.strand, pool, p));
    T_OK(pp_strand_create(&b.strand, pool, p));
    held.st = &a;
    held.seq = 0;
    held.gate = &gate;
    T_OK(strand_submit(pool, &held, g, PP_PRIO_NORMAL));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 500; i++) {
        items[i].st = &b;
        items[i].seq = i;
        items[i].gate = NULL;
    }
    memset(&sn, 0, sizeof(sn));
    sn.pool = pool;
    sn.g = gb;
    sn.items = items;
    sn.n = 500;
    T_OK(pp_submit_ex(pool, submit_to_strand, &sn, gb, 0));
    T_OK(pp_group_wait(gb, apr_time_from_sec(30)));    /* while a is held */
    T_EQ(sn.errors, 0);
    T_EQ(b.ran, 500);
    T_EQ(b.out_of_order, 0);
    T_EQ(b.overlaps, 0);
    T_EQ(a.ran, 0);
    t_gate_open(&gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(a.ran, 1);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* A group cancel drops its tasks waiting on a strand at once (reported,
 * released, counted); a pool cancel drops the rest; the strand goes on
 * with later tasks. */
static void test_strand_cancel(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g, *g2;
    pp_stats_t st;
    outcomes o;
    strand_state ss;
    t_gate gate;
    pp_task_t t;
    apr_uint32_t i;

    apr_pool_create(&p, t_root);
    memset(&o, 0, sizeof(o));
    memset(&ss, 0, sizeof(ss));
    memset(&gate, 0, sizeof(gate));
    pool = reporting_pool(p, &o, 1);
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    T_OK(pp_strand_create(&ss.strand, pool, p));
    T_OK(pp_group_create(&g, p));
    T_OK(pp_group_create(&g2, p));
    for (i = 0; i < 10; i++) {
        t = deadline_task(&o, "s", 0);
        t.strand = ss.strand;
        T_OK(pp_submit_task(pool, &t, i % 2 ? g : g2, 0));
    }
    T_OK(pp_group_cancel(g));
    T_EQ(o.released, 5);       /* before the cancel returned */
    T_EQ(o.other, 5);          /* PP_ECANCELLED */
    t_gate_open(&gate);
    T_OK(pp_group_wait(g2, apr_time_from_sec(30)));
    T_EQ(o.ran, 5);
    /* Held again, with tasks waiting: a pool cancel drops them. */
    memset(&gate, 0, sizeof(gate));
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 7; i++) {
        t = deadline_task(&o, "s", 0);
        t.strand = ss.strand;
        T_OK(pp_submit_task(pool, &t, NULL, 0));
    }
    T_STATUS(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_sec(30)), APR_SUCCESS);
    T_EQ(o.ran, 5);
    T_EQ(o.released, 17);
    pp_pool_stats(pool, &st);
    T_EQ(st.cancelled, 12 + 0);
    t_assert_accounted(pool);
    t = deadline_task(&o, "late", 0);
    t.strand = ss.strand;
    T_STATUS(pp_submit_task(pool, &t, NULL, 0), PP_ESHUTDOWN);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* The strand closes with its apr pool: what waits is dropped; a strand
 * of another pool, bad arguments and a closing pool are refused. A
 * drain runs everything waiting on strands. */
static void test_strand_lifetime(void)
{
    apr_pool_t *p, *sp;
    pp_pool_t *pool, *other;
    pp_strand_t *s;
    outcomes o;
    t_gate gate;
    pp_task_t t;
    apr_uint32_t i;

    apr_pool_create(&p, t_root);
    memset(&o, 0, sizeof(o));
    memset(&gate, 0, sizeof(gate));
    pool = reporting_pool(p, &o, 1);
    other = t_pool(p, 1, 0);
    T_STATUS(pp_strand_create(NULL, pool, p), APR_EINVAL);
    T_STATUS(pp_strand_create(&s, NULL, p), APR_EINVAL);
    CU_ASSERT_PTR_NULL(s);
    T_STATUS(pp_strand_create(&s, pool, NULL), APR_EINVAL);
    T_OK(pp_strand_create(&s, other, p));
    t = deadline_task(&o, "s", 0);
    t.strand = s;
    T_STATUS(pp_submit_task(pool, &t, NULL, 0), APR_EINVAL);
    /* Closed with 6 tasks waiting behind a held worker. */
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 3; i++) {
        apr_pool_create(&sp, p);
        T_OK(pp_strand_create(&s, pool, sp));
        t.strand = s;
        T_OK(pp_submit_task(pool, &t, NULL, 0));
        T_OK(pp_submit_task(pool, &t, NULL, 0));
        apr_pool_destroy(sp);
    }
    T_EQ(o.released, 6);
    T_EQ(o.other, 6);
    /* A drain runs what waits on a strand (new ones, reusing records). */
    apr_pool_create(&sp, p);
    T_OK(pp_strand_create(&s, pool, sp));
    t.strand = s;
    for (i = 0; i < 100; i++)
        T_OK(pp_submit_task(pool, &t, NULL, 0));
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_sec(30)));
    T_EQ(o.ran, 100);
    T_STATUS(pp_strand_create(&s, pool, sp), PP_ESHUTDOWN);
    t_assert_accounted(pool);
    pp_pool_destroy(pool);
    pp_pool_destroy(other);
    apr_pool_destroy(sp);    /* after its pool: nothing left to do */
    apr_pool_destroy(p);
}

void t_register_order(void)
{
    CU_pSuite s = CU_add_suite("order", NULL, NULL);

    CU_add_test(s, "priorities: HIGH, NORMAL, LOW, each in order", test_priority_order);
    CU_add_test(s, "priorities: NORMAL keeps its order across the first HIGH",
                test_priority_first_use_keeps_order);
    CU_add_test(s, "priorities: LOW waits for PP_PRIO_PASS HIGH tasks, no more",
                test_priority_no_starving);
    CU_add_test(s, "priorities: a task's own submits", test_priority_nested);
    CU_add_test(s, "bad priorities and deadlines are refused", test_task_fields_checked);
    CU_add_test(s, "not_after: expired tasks are dropped, reported, released, counted",
                test_not_after_expires);
    CU_add_test(s, "not_after: a task's own submit expires in its worker's queue",
                test_not_after_nested);
    CU_add_test(s, "strands: one task at a time, in order, every one", test_strand_order);
    CU_add_test(s, "strands: independent; a task's own submits keep order",
                test_strand_independent);
    CU_add_test(s, "strands: group and pool cancels drop what waits", test_strand_cancel);
    CU_add_test(s, "strands: closed with their apr pool; bad uses refused; drained",
                test_strand_lifetime);
}
