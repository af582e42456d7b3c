/* SPDX-License-Identifier: Apache-2.0 */
/* Slabs (slab.h). */
#include "config.h"
#include "slab.h"
#include "fault.h"
#include "os/os.h"

#include <apr_thread_proc.h>

/* The region's first piece holds this; the others are given out. */
struct pp__slab_t {
    _Atomic apr_uint32_t refs;     /* pieces out, +1 while carved */
    apr_uint32_t         next;     /* the next piece to carve; under busy */
};

#define PIECES ((apr_uint32_t)(PP__PAGES_SIZE / PP__SLAB_PIECE))

/* Whoever holds busy is a few instructions from letting go, unless it
 * maps a region: spin a little, then give the core away. */
static void lock(pp__slabs_t *s)
{
    apr_uint32_t k = 0;

    while (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire))
        if (++k > 16)
            apr_thread_yield();
}

static void unlock(pp__slabs_t *s)
{
    atomic_flag_clear_explicit(&s->busy, memory_order_release);
}

void pp__slabs_init(pp__slabs_t *s)
{
    s->cur = NULL;
    atomic_flag_clear_explicit(&s->busy, memory_order_relaxed);
    atomic_init(&s->live, 0);
}

/* acq_rel: every use of the region's pieces, on whatever thread let them
 * go, comes before its unmap. */
void pp__slab_put(pp__slabs_t *s, pp__slab_t *region)
{
    if (atomic_fetch_sub_explicit(&region->refs, 1, memory_order_acq_rel) == 1) {
        pp__pages_unmap(region);
        atomic_fetch_sub_explicit(&s->live, 1, memory_order_relaxed);
    }
}

/* With busy held. */
static void retire_locked(pp__slabs_t *s)
{
    pp__slab_t *r = s->cur;

    s->cur = NULL;
    if (r)
        pp__slab_put(s, r);
}

void *pp__slabs_get(pp__slabs_t *s, pp__slab_t **region)
{
    pp__slab_t *r;
    void *piece = NULL;

    lock(s);
    if (s->cur && s->cur->next == PIECES)
        retire_locked(s);
    if (!s->cur && !pp__fault_hit(PP__FAULT_SLAB_MAP) && (r = pp__pages_map())) {
        atomic_init(&r->refs, 1);
        r->next = 1;
        s->cur = r;
        atomic_fetch_add_explicit(&s->live, 1, memory_order_relaxed);
    }
    if ((r = s->cur)) {
        piece = (char *)r + (apr_size_t)r->next++ * PP__SLAB_PIECE;
        atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
        *region = r;
    }
    unlock(s);
    return piece;
}

void pp__slabs_retire(pp__slabs_t *s)
{
    lock(s);
    retire_locked(s);
    unlock(s);
}
