/* SPDX-License-Identifier: Apache-2.0 */
/* tests/pp_api: the public API, as a program using the shipped library
 * sees it (only include/parkpool). */
#include "config.h"
#include "testutil.h"

const t_suite_fn t_suites[] = {
    t_register_pool, t_register_shutdown, t_register_group, t_register_config,
    t_register_plugin, t_register_bundled, t_register_edges, t_register_nested,
    t_register_service, t_register_order, t_register_timer, NULL
};
