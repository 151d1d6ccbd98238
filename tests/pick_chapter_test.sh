#!/usr/bin/env bash
# tools/pick_chapter.sh with stand-in probes (no GPU): on a GPU where chapters 07 on refuse it
# picks the newest of 01-06 and names the newest refusal; where every chapter runs, the newest;
# where none does, one error line and exit 1.
#   tests/pick_chapter_test.sh SOURCE_ROOT
set -uo pipefail
root=$1
fail() { echo "FAIL $*"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chapters=$(ls -d "$root"/chapters/[0-9][0-9]_*/ | xargs -n 1 basename | sort)
newest=$(tail -n 1 <<<"$chapters")
newest_pre_hopper=$(grep -E '^0[1-6]_' <<<"$chapters" | tail -n 1)
ampere() {  # an A100: chapters 07 on need sm_90a
  case $1 in 0[1-6]_*) return 0 ;; esac
  echo "error: chapter $1 needs an sm_90a GPU (H100/H200); this is NVIDIA A100-SXM4-80GB"; return 1
}
hopper() { return 0; }
none() { echo "error: no CUDA device"; return 1; }
export -f ampere hopper none
out=$(PICK_PROBE=ampere "$root/tools/pick_chapter.sh" 2>"$scratch/err") || fail "ampere: exit $?"
err=$(cat "$scratch/err")
[ "$out" = "$newest_pre_hopper" ] || fail "ampere: picked '$out', not $newest_pre_hopper"
wanted="training $newest_pre_hopper.*$newest refused: chapter $newest needs an sm_90a"
[ "$(wc -l <<<"$err")" = 1 ] && grep -q "$wanted" <<<"$err" ||
  fail "ampere: the line says '$err'"
out=$(PICK_PROBE=hopper "$root/tools/pick_chapter.sh" 2>/dev/null) || fail "hopper: exit $?"
[ "$out" = "$newest" ] || fail "hopper: picked '$out', not $newest"
err=$(PICK_PROBE=none "$root/tools/pick_chapter.sh" 2>&1 >/dev/null) && fail "none: exit 0"
[ "$(wc -l <<<"$err")" = 1 ] && grep -q '^error: no chapter' <<<"$err" || fail "none: '$err'"
echo "pick_chapter: $newest_pre_hopper on an A100 stand-in, $newest on an H100 stand-in," \
  "one error line with no GPU"
