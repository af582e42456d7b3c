/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The work-stealing deque (deque.h): setup and the thieves' side here, the
 * owner's push and pop inline in deque.h. Orderings, as in Le et al. 2013,
 * except that every store to bottom is a release: the paper's release
 * fence before a relaxed store orders the same things, but
 * ThreadSanitizer does not see fences, and on x86 both are one plain mov.
 *
 * - push: the slot is written before bottom moves (release), so a thief
 *   that sees the new bottom (acquire) sees the entry, and what the task's
 *   submitter wrote before submitting it.
 * - pop: bottom is lowered before top is read, with a seq_cst fence between
 *   them; a thief reads top, then (after its own fence) bottom. Of an owner
 *   and a thief racing for the last entry, at least one sees the other, and
 *   the CAS on top decides which of them has it.
 * - steal: the CAS on top claims the slot read just before it; a thief that
 *   loses throws its copy away. The owner rewrites a slot only once top has
 *   passed it (pp__deque_full reads top with acquire), so a winning thief's
 *   copy was never torn.
 */
#include "config.h"
#include "deque.h"

void pp__deque_init(pp__deque_t *d)
{
    pp__entry_t none = { NULL, NULL, NULL, NULL, NULL, 0, 0 };
    unsigned i;

    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    for (i = 0; i < PP__DEQUE_SIZE; i++)
        pp__slot_put(&d->slot[i], &none);
}

int pp__deque_steal_read(pp__deque_t *d, pp__entry_t *e, pp__dq_index_t *t)
{
    pp__dq_index_t b;

    *t = atomic_load_explicit(&d->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);
    b = atomic_load_explicit(&d->bottom, memory_order_acquire);
    if ((apr_int64_t)(b - *t) <= 0)
        return 0;
    pp__slot_get(&d->slot[*t & PP__DEQUE_MASK], e);
    return 1;
}

int pp__deque_steal_claim(pp__deque_t *d, pp__dq_index_t t)
{
    return atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                   memory_order_relaxed) ? 1 : -1;
}

int pp__deque_steal(pp__deque_t *d, pp__entry_t *e)
{
    pp__dq_index_t t;

    if (!pp__deque_steal_read(d, e, &t))
        return 0;
    return pp__deque_steal_claim(d, t);
}

apr_uint32_t pp__deque_len(pp__deque_t *d)
{
    pp__dq_index_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    pp__dq_index_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    apr_int64_t n = (apr_int64_t)(b - t);

    return n > 0 ? (apr_uint32_t)n : 0;
}
