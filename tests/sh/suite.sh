#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The log compiler of the .suite tests: tests/unit/park.suite runs the
# suite park of tests/pp_unit, tests/api/pool.suite the suite pool of
# tests/pp_api, so that each suite passes, fails or hangs on its own line.
set -u
suite=$1
name=$(basename "$suite" .suite)
kind=$(basename "$(dirname "$suite")")
exec "${top_builddir:-.}/tests/pp_$kind" "$name"
