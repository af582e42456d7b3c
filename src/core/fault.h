/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection, SQLite style: a test arms a point to fail on its n-th
 * hit, so the unwinding of paths that real systems rarely take (a thread
 * that cannot be created, a queue that cannot grow) is exercised on every
 * run. Disarmed, a hit costs one atomic read. The state is process-wide on
 * purpose: it is a test control, not pool state. The shipped library is
 * built with PP_UNTESTABLE (as SQLite's release builds are with
 * SQLITE_UNTESTABLE): no fault point is left in it, and a hit is a
 * constant 0 that the compiler folds away.
 */
#ifndef PP_FAULT_H
#define PP_FAULT_H

#include <apr.h>

enum {
    PP__FAULT_THREAD_CREATE, /* apr_thread_create of a worker */
    PP__FAULT_QUEUE_GROW,    /* growing a queue ring */
    PP__FAULT_GROUP_CREATE,  /* a group's mutex */
    PP__FAULT_POOL_ALLOC,    /* pp_pool_create's arrays (workers, deques) */
    PP__FAULT_DSO_LOAD,      /* apr_dso_load of a plugin: ENOMEM, no message */
    PP__FAULT_SLAB_MAP,      /* a slab's region, kept or from the OS */
    PP__FAULT_POINTS
};

#ifdef PP_UNTESTABLE
#define pp__fault_hit(point) 0
#else
/** Make the nth hit (1 = next) of point fail; 0 disarms it. */
void pp__fault_arm(int point, apr_uint32_t nth);

/** Count a hit; non-zero when this one is to fail (then the point disarms). */
int pp__fault_hit(int point);
#endif

#endif
