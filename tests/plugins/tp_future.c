/* SPDX-License-Identifier: Apache-2.0 */
/* Built for a newer ABI minor than the host has: its init must never run. */
#include "config.h"
#include "parkpool/plugin.h"

#include <stdlib.h>

static apr_status_t never_init(pp_registry_t *reg)
{
    (void)reg;
    abort();
}

PP_PLUGIN_EXPORT extern const pp_plugin_entry_t pp_plugin_entry;
const pp_plugin_entry_t pp_plugin_entry = {
    PP_PLUGIN_MAGIC, PP_PLUGIN_ABI_MAJOR, PP_PLUGIN_ABI_MINOR + 1, "future", "9.9", never_init,
    NULL
};
