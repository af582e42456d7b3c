/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Slabs: 4 KiB pieces carved from 2 MiB regions of the OS's (os.h,
 * pp__pages_map), for the injector's blocks while its queue is deep. A
 * million queued tasks are 64 MB of blocks; from malloc, each of their
 * pages cost a page fault on first touch, and on a VM a fault is an exit
 * to the hypervisor (docs/design.md, "The injector": 14 us each here,
 * nearly half of a bench W2 profile). A region is one huge page where the OS
 * gives them, one fault for 511 pieces.
 *
 * A region's header counts the pieces it gave out and not yet back, and
 * one more while it is the one being carved; the last to let go keeps it
 * for reuse (up to four regions in the process) or unmaps it. A piece
 * is zero when carved from a new region, not from a reused one. Carving
 * takes a spinlock: it happens once per block, a few instructions, and
 * once per region a map.
 */
#ifndef PP_SLAB_H
#define PP_SLAB_H

#include <apr.h>

#include <stdatomic.h>

#define PP__SLAB_PIECE ((apr_size_t)4096)

typedef struct pp__slab_t pp__slab_t;

typedef struct pp__slabs_t {
    pp__slab_t          *cur;      /* being carved; under busy */
    atomic_flag          busy;
    _Atomic apr_uint32_t live;     /* regions mapped now */
} pp__slabs_t;

/** No region yet: the first get maps one. */
void pp__slabs_init(pp__slabs_t *s);

/** A piece of PP__SLAB_PIECE bytes (not zeroed) and, in *region, where
 *  it came from (for pp__slab_put); NULL when the OS had no region to
 *  give. */
void *pp__slabs_get(pp__slabs_t *s, pp__slab_t **region);

/** A piece of region is back: when the region is no longer carved and
 *  this was its last piece out, it is kept for reuse or goes back to the
 *  OS. */
void pp__slab_put(pp__slabs_t *s, pp__slab_t *region);

/** Stop carving the current region, if any: it is let go (as above)
 *  once its pieces are back. For a queue that became shallow again, and
 *  at the end. */
void pp__slabs_retire(pp__slabs_t *s);

/** How many regions the process keeps for reuse now (tests). */
apr_uint32_t pp__slabs_kept(void);

/** How many regions s carves or has pieces out of now (tests). */
static inline apr_uint32_t pp__slabs_live(pp__slabs_t *s)
{
    return atomic_load_explicit(&s->live, memory_order_relaxed);
}

#endif
