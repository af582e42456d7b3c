/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "fork.h"
#include "os.h"

_Atomic apr_uint32_t pp__fork_gen;

void pp__fork_child(void)
{
    atomic_fetch_add_explicit(&pp__fork_gen, 1, memory_order_relaxed);
}

apr_uint32_t pp__fork_watch(void)
{
    pp__watch_forks();
    return pp__fork_generation();
}
