#!/usr/bin/env bash
# compute-sanitizer on every chapter's GEMM test, its small shapes only: memcheck (out-of-bounds
# and misaligned accesses, errors of CUDA calls), racecheck (shared-memory races, e.g. a missing
# barrier), initcheck (reads of device memory nothing wrote) and synccheck (barriers some threads
# of a block never reach); then memcheck on a few training steps of every chapter's trainer,
# launched the chapter's way (a CUDA graph from chapter 06 on), with the MNIST files in data/mnist.
# Needs a GPU and a build with the chapters in it.
#   tools/sanitize.sh [BUILD_DIR] [LOG_DIR]     defaults: build, BUILD_DIR/sanitizer
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
logs=${2:-$build/sanitizer}
seed=7  # fixed, so that a report can be replayed; the test draws random inputs from it
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer not found"; exit 1; }
mkdir -p "$logs"
passed=0
failed=0
# sanitize TOOL LABEL COMMAND...: one compute-sanitizer run, its log in $logs/LABEL.txt.
sanitize() {
  local tool=$1 label=$2 log="$logs/$2.txt"
  shift 2
  if compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $label: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)"
  else
    failed=$((failed + 1))
    echo "FAIL $label: see $log"
    grep -E '^=========|^error' "$log" | head -n 5
  fi
}
for test in "$build"/tests/test_gemm_*; do
  [ -f "$test" ] && [ -x "$test" ] || continue  # skip Meson's object folders
  chapter=${test##*/test_gemm_}
  for tool in memcheck racecheck initcheck synccheck; do
    sanitize "$tool" "${tool}_$chapter" "$test" "$seed" small
  done
done
for trainer in "$build"/chapters/train_*; do
  [ -f "$trainer" ] && [ -x "$trainer" ] || continue
  chapter=${trainer##*/train_}
  sanitize memcheck "memcheck_train_$chapter" "$trainer" --hidden 64 --batch 96 --epochs 1 \
    --max-steps 3 --out-dir "$logs/train_$chapter"
done
echo "sanitize: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
