#!/usr/bin/env bash
# Prints the newest chapter whose trainer runs on this GPU, and on stderr one line saying which
# and why; exit 1 with one `error:` line when none does. A chapter runs here when one step of
# its trainer does (a trainer refuses a GPU it cannot use with one `error:` line, before any work).
#   tools/pick_chapter.sh [BUILD_DIR]        (default: build)
# PICK_PROBE replaces the probe (a command given the chapter's name; tests/pick_chapter_test.sh).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
probe_trainer() {  # its refusal (stderr) only
  "$build/chapters/train_$1" --epochs 1 --max-steps 1 --no-eval --out-dir "$scratch" 2>&1 >/dev/null
}
probe=${PICK_PROBE:-probe_trainer}
newest_refusal=
for chapter in $(ls -d "$root"/chapters/[0-9][0-9]_*/ | xargs -n 1 basename | sort -r); do
  if why=$($probe "$chapter" 2>&1); then
    if [ -n "$newest_refusal" ]; then
      echo "training $chapter, the newest chapter this GPU runs; $newest_refusal" >&2
    else
      echo "training $chapter, the newest chapter" >&2
    fi
    echo "$chapter"
    exit 0
  fi
  [ -n "$newest_refusal" ] ||
    newest_refusal="$chapter refused: $( (grep -m 1 '^error:' <<<"$why" || head -n 1 <<<"$why") |
      sed 's/^error: //')"
done
echo "error: no chapter's trainer runs on this GPU ($newest_refusal)" >&2
exit 1
