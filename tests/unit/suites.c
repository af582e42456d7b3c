/* SPDX-License-Identifier: Apache-2.0 */
/* tests/pp_unit: the internals, each on its own (linked with the core). */
#include "config.h"
#include "testutil.h"

const t_suite_fn t_suites[] = {
    t_register_park, t_register_queue, t_register_deque, t_register_budget,
    t_register_sync, t_register_faults, t_register_histo, t_register_inject, NULL
};
