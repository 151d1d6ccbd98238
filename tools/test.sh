#!/usr/bin/env bash
# Fetches MNIST, builds everything and runs the tests; arguments go to `meson test`, e.g.
#   tools/test.sh --suite 01_naive
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec meson test -C build --print-errorlogs "$@"
