/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fork() and the library's objects. A fork copies the memory of the whole
 * process but only the thread that called it: in the child, a pool's
 * workers do not exist, and a lock or condition variable may have been
 * left held, or waited on, by a thread that is not there. Waiting for such
 * a thread hangs for ever (a pool's destroy joining its workers, a group's
 * cleanup waiting for its tasks at apr_terminate()).
 *
 * So each object remembers the generation of the process it was made in:
 * 0 in the process that first used the library, one more in each child of
 * a fork after that. An object from an earlier generation is dead in a
 * child: it refuses work (PP_ESHUTDOWN), never takes its locks, and its
 * destruction frees its memory without waiting or destroying its sync
 * objects (libuv's pool likewise starts afresh in a child).
 */
#ifndef PP_FORK_H
#define PP_FORK_H

#include <apr.h>
#include <stdatomic.h>

/* Only the child handler writes it, while the child has one thread. */
extern _Atomic apr_uint32_t pp__fork_gen;

/** The child's side of a fork: one generation on. */
void pp__fork_child(void);

/** The current generation, after making sure that forks are counted (once
 *  per process: for creating objects, not for hot paths). */
apr_uint32_t pp__fork_watch(void);

/** The current generation: one relaxed load. A fork happens between two
 *  instructions of the forking thread, so that thread sees its own. */
static inline apr_uint32_t pp__fork_generation(void)
{
    return atomic_load_explicit(&pp__fork_gen, memory_order_relaxed);
}

#endif
