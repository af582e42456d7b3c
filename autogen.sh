#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerate configure and the Makefile.in files from a git checkout.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
exec autoreconf --install --force --warnings=all
