/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The wait for another thread a few instructions into something (an
 * injector claim's write, a block's installation, a slab's carve): spin
 * a little, then give the core away, in case that thread is waiting for
 * this one's.
 */
#ifndef PP_BACKOFF_H
#define PP_BACKOFF_H

#include <apr_thread_proc.h>

#define PP__BACKOFF_SPINS 16u

/** One more round of a wait; *k counts them, from 0. */
static inline void pp__backoff(apr_uint32_t *k)
{
    if (++*k > PP__BACKOFF_SPINS)
        apr_thread_yield();
}

#endif
