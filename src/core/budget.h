/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The search budget: how long a worker out of work polls the queues
 * before it parks. Polling finds a task that comes soon without a futex
 * wait or wake on either side (waking a halted vCPU costs far more than
 * the polls); polling for nothing takes a core from whoever brings the
 * work. So each worker adapts its own budget between a floor and the
 * bound cfg.spin, and only while fewer than half of the workers that are
 * up poll at all. Beside it, its twin on the waking side: how many
 * workers a burst wakes at once. docs/design.md, "The search budget", has the reasons
 * and the measurements; sched.c applies these rules, tests/unit checks
 * them.
 */
#ifndef PP_BUDGET_H
#define PP_BUDGET_H

#include <apr.h>
#include <apr_time.h>

typedef struct pp__budget_t {
    apr_uint32_t spin;          /* polls the next search may take */
    apr_uint32_t polls_per_us;  /* polling speed, last measured; 0: unknown */
} pp__budget_t;

/**
 * Whether a worker out of work may poll the queues before it goes idle,
 * with `up` workers not idle (it among them) and `others` besides it
 * searching: only while fewer than half of those up do. More pollers find
 * a task no sooner, but they take cores from the threads that bring the
 * work (with more workers than cores) and fight each other and the
 * submitter for the queue lock, each taking one task where one poller
 * would take several. Go's scheduler caps its spinning threads alike.
 */
static inline int pp__may_poll(apr_uint32_t up, apr_uint32_t others)
{
    return 2 * others < up;
}

/**
 * How many of the `want` workers that tasks on the global queue ask for
 * are worth waking, with `searching` searching and `up` workers neither
 * idle nor in a block section on `ncpus` cores. One is owed, and only
 * with nobody searching: a searcher takes the task, or finds other work
 * and wakes one (sched.c, F4), or sees it before it sleeps. The rest only
 * ramp up, and no further than the cores: a worker woken beyond them runs
 * by taking a core from one that is up, often the submitter's, and a
 * searcher without a core lets the queue grow, which wakes another. With
 * 4 workers on 2 cores one producer of tiny tasks paid 30,000 to 50,000
 * futex wakes per million tasks that way, and 3,000 with this bound.
 * Work beyond the cores still gets hands: each worker that finds work
 * while more waits wakes the next (F4), and with nobody searching every
 * submit wakes one.
 */
static inline apr_uint32_t pp__wake_room(apr_uint32_t want, apr_uint32_t searching,
                                         apr_uint32_t up, apr_uint32_t ncpus)
{
    apr_uint32_t room = ncpus > up ? ncpus - up : 0;

    if (want <= room)
        return want;
    return room > 0 ? room : searching == 0;
}

/** The floor: 1/16 of max, but at least one poll when max allows any, so
 *  that a small budget halved to nothing can still grow back. */
static inline apr_uint32_t pp__budget_floor(apr_uint32_t max)
{
    return max >= 16 ? max / 16 : max > 0 ? 1u : 0u;
}

/** After a search that found work by polling: twice as long, within max. */
static inline apr_uint32_t pp__budget_paid(apr_uint32_t spin, apr_uint32_t max)
{
    return spin > max / 2 ? max : 2 * spin;
}

/** After a search that found nothing: half as long, not below least
 *  (pp__budget_floor). */
static inline apr_uint32_t pp__budget_missed(apr_uint32_t spin, apr_uint32_t least)
{
    return spin / 2 < least ? least : spin / 2;
}

/** After a sleep as long as `need` polls: if a search within max would
 *  have spared it, twice that (within max) when it is more than spin; a
 *  longer sleep says nothing about polling and changes nothing. */
static inline apr_uint32_t pp__budget_slept(apr_uint32_t spin, apr_uint32_t max,
                                            apr_uint64_t need)
{
    if (need == 0 || need > max || 2 * need <= spin)
        return spin;
    return 2 * need < max ? (apr_uint32_t)(2 * need) : max;
}

/** How many rounds a search of b may poll with `up` workers not idle and
 *  `others` besides it searching: b's budget, or none (pp__may_poll). */
static inline apr_uint32_t pp__budget_rounds(const pp__budget_t *b, apr_uint32_t up,
                                             apr_uint32_t others)
{
    return pp__may_poll(up, others) ? b->spin : 0;
}

/** Polls after which a search yields its core and starts its clock
 *  (pp__budget_missed_search), and the least it must have polled for
 *  the clock to tell its speed. */
#define PP__BUDGET_YIELD_EVERY 256u
#define PP__BUDGET_TIMED_MIN   512u

/** A search of `rounds` polls found nothing. polled: when its polling
 *  was first timed (after PP__BUDGET_YIELD_EVERY polls), 0 if never. */
void pp__budget_missed_search(pp__budget_t *b, apr_uint32_t rounds, apr_uint32_t least,
                              apr_time_t polled);

/** Its worker slept `slept` microseconds in a park, within max. */
void pp__budget_woke(pp__budget_t *b, apr_uint32_t max, apr_time_t slept);

#endif
