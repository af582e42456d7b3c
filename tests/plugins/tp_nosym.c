/* SPDX-License-Identifier: Apache-2.0 */
/* A shared object that is no parkpool plugin: it has no pp_plugin_entry. */
__attribute__((visibility("default"))) int tp_nosym_marker;
int tp_nosym_marker = 42;
