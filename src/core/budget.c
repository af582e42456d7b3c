/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "budget.h"

void pp__budget_missed_search(pp__budget_t *b, apr_uint32_t rounds, apr_uint32_t least,
                              apr_time_t polled)
{
    /* Search less next time, so that a pool going idle stops paying for
     * it, but never below the floor. */
    if (rounds > 0)
        b->spin = pp__budget_missed(b->spin, least);
    /* Timed over enough polls to tell: from the first yield to now. */
    if (rounds >= PP__BUDGET_TIMED_MIN && polled) {
        apr_uint32_t polls = rounds - (PP__BUDGET_YIELD_EVERY - 1);
        apr_time_t took = apr_time_now() - polled;

        if (took > 0)
            b->polls_per_us = polls / (apr_uint32_t)(took < polls ? took : polls);
    }
}

/* If a search within the bound would have caught the task that woke the
 * worker, search twice that long next time (within the bound). Without
 * this a pool can settle into parking a moment too early every time: one
 * submitter waiting for each task brings the next task a wake-up later
 * than the last, longer than the shrunken budget, so every round pays two
 * wake-ups where polling would cost far less. A pool whose tasks come in
 * bursts far apart sleeps far longer than any budget and keeps the short
 * one. */
void pp__budget_woke(pp__budget_t *b, apr_uint32_t max, apr_time_t slept)
{
    if (slept > 0)    /* the wall clock may have stepped back */
        b->spin = pp__budget_slept(b->spin, max, (apr_uint64_t)slept * b->polls_per_us);
}
