#!/usr/bin/env bash
# Fetches MNIST, builds everything and trains the newest chapter; arguments go to the trainer
# (tools/train.sh --help lists them).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
newest=$(ls -d chapters/[0-9][0-9]_*/ | sort | tail -n 1 | xargs basename)
meson compile -C build
exec "build/chapters/train_$newest" "$@"
