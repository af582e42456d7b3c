#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The shared library exports the public pp_ API and nothing else: no pp__
# internals, no helpers without the prefix, and carries no test controls.
set -u
lib="${top_builddir:-.}/.libs/libparkpool.so"
[ -f "$lib" ] || { echo "abi: $lib not built (static-only build?)"; exit 77; }
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ { print $3 }' | sort)
bad=$(printf '%s\n' "$syms" | grep -v '^pp_[a-z]' || true)
internal=$(printf '%s\n' "$syms" | grep '^pp__' || true)
count=$(printf '%s\n' "$syms" | grep -c '^pp_')
status=0
[ -z "$bad$internal" ] || { echo "abi: unexpected exports:"; echo "$bad$internal"; status=1; }
for want in pp_pool_create pp_submit pp_submit_ex pp_pool_shutdown pp_pool_stats \
            pp_group_create pp_group_wait pp_group_cancel pp_group_status \
            pp_task_cancelled pp_task_worker pp_task_emit pp_task_write pp_strerror pp_config_init pp_config_init_sized \
            pp_pool_create_sized pp_pool_stats_sized pp_submit_task_sized pp_submit_timed_sized \
            pp_pool_pause pp_pool_resume pp_task_block_begin pp_task_block_end \
            pp_registry_create pp_registry_add pp_registry_load pp_registry_load_dir \
            pp_registry_find pp_submit_typed pp_submit_named pp_submit_batch \
            pp_job_line_split pp_job_record_split pp_registry_idempotent; do
    printf '%s\n' "$syms" | grep -qx "$want" || { echo "abi: $want not exported"; status=1; }
done
# A program built against the 4.x layouts (tests/abi/v4.h) runs with this
# library: its structs are read and written at their old sizes.
old="${top_builddir:-.}/tests/abi/old_layout"
if [ -x "$old" ]; then
    "$old" || { echo "abi: a program of the 4.x layouts fails with this library"; status=1; }
else
    echo "abi: $old not built"; status=1
fi
# Built with PP_UNTESTABLE: no fault point or other test control is left
# in it, exported or not (those live in the tests' copy of the core).
controls=$(nm "$lib" | grep -E 'pp__fault_|pp__pool_hold_lock' || true)
[ -z "$controls" ] || { echo "abi: test controls in the shipped library:"; echo "$controls"; status=1; }
# The pkg-config file tells out-of-tree plugins where to go.
pc="${top_builddir:-.}/parkpool.pc"
if command -v pkg-config >/dev/null 2>&1 && [ -f "$pc" ]; then
    dir=$(PKG_CONFIG_PATH="${top_builddir:-.}" pkg-config --variable=plugindir parkpool)
    case "$dir" in
        */parkpool/plugins) ;;
        *) echo "abi: parkpool.pc has no plugindir (got '$dir')"; status=1 ;;
    esac
fi
echo "abi: $count pp_ symbols exported"
[ $status -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $status
