#!/usr/bin/env bash
# compute-sanitizer on every chapter's GEMM test, its small shapes only: memcheck (out-of-bounds
# and misaligned accesses, errors of CUDA calls) and racecheck (shared-memory races, e.g. a
# missing barrier); then memcheck on a few training steps of every chapter's trainer, launched
# the chapter's way (a CUDA graph from chapter 06 on), with the MNIST files in data/mnist.
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
for test in "$build"/tests/test_gemm_*; do
  [ -f "$test" ] && [ -x "$test" ] || continue  # skip Meson's object folders
  chapter=${test##*/test_gemm_}
  for tool in memcheck racecheck; do
    log="$logs/${tool}_$chapter.txt"
    if compute-sanitizer --tool "$tool" --error-exitcode 1 "$test" "$seed" small >"$log" 2>&1; then
      passed=$((passed + 1))
      echo "ok   $tool $chapter: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)"
    else
      failed=$((failed + 1))
      echo "FAIL $tool $chapter: see $log"
      grep -E '^=========' "$log" | head -n 5
    fi
  done
done
for trainer in "$build"/chapters/train_*; do
  [ -f "$trainer" ] && [ -x "$trainer" ] || continue
  chapter=${trainer##*/train_}
  log="$logs/memcheck_train_$chapter.txt"
  if compute-sanitizer --tool memcheck --error-exitcode 1 "$trainer" --hidden 64 --batch 96 \
    --epochs 1 --max-steps 3 --out-dir "$logs/train_$chapter" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   memcheck train_$chapter: $(grep -E 'ERROR SUMMARY' "$log" | tail -n 1)"
  else
    failed=$((failed + 1))
    echo "FAIL memcheck train_$chapter: see $log"
    grep -E '^=========|^error' "$log" | head -n 5
  fi
done
echo "sanitize: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
