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
 *   passed it (pp__deque_room reads top with acquire), so a winning thief's
 *   copy was never torn.
 * - grow: the owner copies the entries between top and bottom into a ring
 *   twice the size, then publishes it (release; deque.h says why a thief
 *   sees it in time). A thief may take the oldest of them meanwhile: its
 *   copy in the new ring then lies below top, where nobody reads. The old
 *   ring is never written again, so a thief still reading it reads what it
 *   would read in the new one, and its CAS on top decides as before.
 *
 * The CAS claims one entry, even where a thief wants half: a range claimed
 * with one CAS from top to top + n races the owner's pops from the bottom,
 * which take no CAS while they leave more than one entry: an owner that
 * pops down into the range while the thief stalls before its CAS runs
 * entries that the CAS then claims for the thief too. Work-stealing queues that take ranges so (Go's
 * run queue, crossbeam's FIFO flavour) have their owner take from the top
 * with a CAS as well; crossbeam's LIFO flavour, like this deque, steals a
 * batch one CAS at a time.
 */
#include "config.h"
#include "deque.h"

#include <stdlib.h>

/* A grown ring and its slots, in one allocation. */
typedef struct grown_t {
    pp__ring_t ring;
    pp__slot_t slot[];
} grown_t;

void pp__deque_init(pp__deque_t *d, apr_uint32_t max)
{
    pp__entry_t none = { NULL, NULL, NULL, NULL, NULL, 0, 0 };
    unsigned i;

    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    d->max = max < PP__DEQUE_SIZE ? PP__DEQUE_SIZE : max;
    d->first.mask = PP__DEQUE_SIZE - 1;
    d->first.slot = d->slot;
    d->first.older = NULL;
    atomic_init(&d->ring, &d->first);
    for (i = 0; i < PP__DEQUE_SIZE; i++)
        pp__slot_put(&d->slot[i], &none);
}

void pp__deque_free(pp__deque_t *d)
{
    pp__ring_t *r = atomic_load_explicit(&d->ring, memory_order_relaxed), *older;

    for (; r && r != &d->first; r = older) {
        older = r->older;
        free(r);
    }
    atomic_store_explicit(&d->ring, &d->first, memory_order_relaxed);
}

int pp__deque_grow(pp__deque_t *d)
{
    pp__ring_t *old = atomic_load_explicit(&d->ring, memory_order_relaxed);
    pp__dq_index_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    pp__dq_index_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    pp__dq_index_t size = 2 * (old->mask + 1), i;
    pp__entry_t e;
    grown_t *g;

    if (size > d->max)
        return 0;
    g = malloc(sizeof(*g) + size * sizeof(g->slot[0]));
    if (!g)
        return 0;
    g->ring.mask = size - 1;
    g->ring.slot = g->slot;
    g->ring.older = old;
    for (i = t; i != b; i++) {
        pp__slot_get(&old->slot[i & old->mask], &e);
        pp__slot_put(&g->slot[i & g->ring.mask], &e);
    }
    atomic_store_explicit(&d->ring, &g->ring, memory_order_release);
    return 1;
}

int pp__deque_steal_read(pp__deque_t *d, pp__entry_t *e, pp__dq_index_t *t)
{
    pp__dq_index_t b;
    pp__ring_t *r;

    *t = atomic_load_explicit(&d->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);
    b = atomic_load_explicit(&d->bottom, memory_order_acquire);
    if ((apr_int64_t)(b - *t) <= 0)
        return 0;
    r = atomic_load_explicit(&d->ring, memory_order_acquire);
    pp__slot_get(&r->slot[*t & r->mask], e);
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
