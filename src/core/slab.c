/* SPDX-License-Identifier: Apache-2.0 */
/* Slabs (slab.h). */
#include "config.h"
#include "slab.h"
#include "backoff.h"
#include "fault.h"
#include "os/os.h"

/* The region's first piece holds this; the others are given out. */
struct pp__slab_t {
    _Atomic apr_uint32_t refs;     /* pieces out, +1 while carved */
    apr_uint32_t         next;     /* the next piece to carve; under busy */
};

#define PIECES ((apr_uint32_t)(PP__PAGES_SIZE / PP__SLAB_PIECE))

/* Whoever holds busy is a few instructions from letting go, unless it
 * maps a region. */
static void lock(pp__slabs_t *s)
{
    apr_uint32_t k = 0;

    while (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire))
        pp__backoff(&k);
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

/* Regions whose pieces are all back, kept for the next carve of any
 * injector in the process: a queue that spikes again, or a new pool's,
 * would otherwise touch fresh pages again, each a fault (with huge pages,
 * a 2 MiB clear), where malloc would have reused its heap. At most KEEP
 * (8 MiB); one CAS or exchange per slot, no lock, so a fork cannot leave
 * the cache locked (a region on its way in or out is only lost to the
 * child). */
#define KEEP 4
static _Atomic(pp__slab_t *) kept[KEEP];

static void keep_or_unmap(pp__slab_t *r)
{
    unsigned i;

    for (i = 0; i < KEEP; i++) {
        pp__slab_t *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&kept[i], &none, r, memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    pp__pages_unmap(r);
}

apr_uint32_t pp__slabs_kept(void)
{
    apr_uint32_t n = 0;
    unsigned i;

    for (i = 0; i < KEEP; i++)
        n += atomic_load_explicit(&kept[i], memory_order_relaxed) != NULL;
    return n;
}

/* A kept region, or a new one; NULL when the OS has none. acquire: the
 * last uses of its pieces (before its keep) come before their reuse. */
static pp__slab_t *region_new(void)
{
    pp__slab_t *r;
    unsigned i;

    if (pp__fault_hit(PP__FAULT_SLAB_MAP))
        return NULL;
    for (i = 0; i < KEEP; i++)
        if (atomic_load_explicit(&kept[i], memory_order_relaxed)
            && (r = atomic_exchange_explicit(&kept[i], NULL, memory_order_acquire)))
            return r;
    return pp__pages_map();
}

/* acq_rel: every use of the region's pieces, on whatever thread let them
 * go, comes before its reuse or unmap. */
void pp__slab_put(pp__slabs_t *s, pp__slab_t *region)
{
    if (atomic_fetch_sub_explicit(&region->refs, 1, memory_order_acq_rel) == 1) {
        atomic_fetch_sub_explicit(&s->live, 1, memory_order_relaxed);
        keep_or_unmap(region);
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
    if (!s->cur && (r = region_new())) {
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
