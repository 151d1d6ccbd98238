#!/usr/bin/env bash
# Fetches MNIST, builds everything and trains the newest chapter this GPU runs (one line says
# which and why, tools/pick_chapter.sh); arguments go to the trainer (tools/train.sh --help).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
meson compile -C build
chapter=$(tools/pick_chapter.sh build)
exec "build/chapters/train_$chapter" "$@"
