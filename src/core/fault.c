/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "fault.h"

#include <stdatomic.h>

/* Tests arm a point and then run the pool; the pool's own threads may hit
 * it. Only the count matters, nothing is published through it: relaxed. */
static _Atomic apr_uint32_t countdown[PP__FAULT_POINTS];

void pp__fault_arm(int point, apr_uint32_t nth)
{
    atomic_store_explicit(&countdown[point], nth, memory_order_relaxed);
}

int pp__fault_hit(int point)
{
    apr_uint32_t n = atomic_load_explicit(&countdown[point], memory_order_relaxed);

    do {
        if (n == 0)
            return 0;
    } while (!atomic_compare_exchange_weak_explicit(&countdown[point], &n, n - 1,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    return n == 1;
}
