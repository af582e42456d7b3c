/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Debug builds' record of which thread holds a pp__mutex_t, behind
 * pp__mutex_held() (sync.h), for PP__ASSERT(lock held). Included by each
 * sync backend (sync_posix.c, sync_win32.c); costs nothing in other
 * builds. A thread is known by the address of its own copy of a
 * thread-local, without an OS call. Only the holder writes its own
 * address, so no other thread can read it back as its own: relaxed will do.
 */
#ifndef PP_SYNC_OWNER_H
#define PP_SYNC_OWNER_H

#ifdef PP_DEBUG
#include <stdatomic.h>

static _Thread_local char pp__self_marker;

#define PP__OWNER_FIELD _Atomic(const void *) owner;
#define PP__OWNER_INIT(mx) atomic_init(&(mx)->owner, NULL)
#define PP__OWNER_SET(mx) \
    atomic_store_explicit(&(mx)->owner, &pp__self_marker, memory_order_relaxed)
#define PP__OWNER_CLEAR(mx) atomic_store_explicit(&(mx)->owner, NULL, memory_order_relaxed)
#define PP__OWNER_IS_SELF(mx) \
    (atomic_load_explicit(&(mx)->owner, memory_order_relaxed) == &pp__self_marker)
#else
#define PP__OWNER_FIELD
#define PP__OWNER_INIT(mx) ((void)0)
#define PP__OWNER_SET(mx) ((void)0)
#define PP__OWNER_CLEAR(mx) ((void)0)
#endif

#endif
