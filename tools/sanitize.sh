#!/usr/bin/env bash
# compute-sanitizer on every chapter's GEMM test, its small shapes only: memcheck (out-of-bounds
# and misaligned accesses, errors of CUDA calls), racecheck (shared-memory races, e.g. a missing
# barrier), initcheck (reads of device memory nothing wrote) and synccheck (barriers some threads
# of a block never reach); then the same four on a few training steps of every chapter's trainer,
# launched the chapter's way (a CUDA graph from chapter 06 on), with the MNIST files in data/mnist.
# Needs a GPU and a build with the chapters in it.
#   tools/sanitize.sh [BUILD_DIR] [LOG_DIR]     defaults: build, BUILD_DIR/sanitizer
# SANITIZE_ONLY=REGEX runs only the runs whose label (e.g. initcheck_02_smem_tiling,
# memcheck_train_10_tile_scheduler) matches it, as grep -E does.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
logs=${2:-$build/sanitizer}
seed=7  # fixed, so that a report can be replayed; the test draws random inputs from it
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer not found"; exit 1; }
mkdir -p "$logs"
# The runs are independent (no test here compares free device memory), and compute-sanitizer
# spends most of its time on the host, so several run at once: SANITIZE_JOBS (default 8).
jobs_max=${SANITIZE_JOBS:-8}
run_timeout=${SANITIZE_TIMEOUT:-600}  # seconds per run: a hung or very slow run fails alone
labels=()
# sanitize TOOL LABEL COMMAND...: one compute-sanitizer run in the background, its log in
# $logs/LABEL.txt and its verdict in $logs/LABEL.status; reported in order at the end.
sanitize() {
  local tool=$1 label=$2
  shift 2
  [ -z "${SANITIZE_ONLY:-}" ] || grep -qE "$SANITIZE_ONLY" <<<"$label" || return 0
  labels+=("$label")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  (
    timeout "$run_timeout" compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" \
      >"$logs/$label.txt" 2>&1
    case $? in
      0) echo ok >"$logs/$label.status" ;;
      124) echo "did not finish in $run_timeout s" >"$logs/$label.txt.timeout"; echo FAIL >"$logs/$label.status" ;;
      *) echo FAIL >"$logs/$label.status" ;;
    esac
    echo "$(cat "$logs/$label.status") $label"  # progress, in the order the runs end
  ) &
}
for test in "$build"/tests/test_gemm_*; do
  [ -f "$test" ] && [ -x "$test" ] || continue  # skip Meson's object folders
  chapter=${test##*/test_gemm_}
  for tool in memcheck racecheck initcheck synccheck; do
    sanitize "$tool" "${tool}_$chapter" "$test" "$seed" sanitize
  done
done
# Every tool on the trainers too: the kernels of chapters 16-19, which run the whole step, run
# only there, at batch 96 the grid kernels of chapters 16 and 17 and at batch 32 the cluster
# kernels of chapters 18-19 (batches up to 32); at batch 40, hidden 1000 chapter 17's grid kernel
# takes its weight gradients on the 64 x 64 tile, and at batch 128, hidden 1024, the widest the
# rule takes, the grid kernels run at the most tiles (128).
# At batch 32 chapter 14's weight update takes the first layer's weight gradient (64 x 784 x 32).
for trainer in "$build"/chapters/train_*; do
  [ -f "$trainer" ] && [ -x "$trainer" ] || continue
  chapter=${trainer##*/train_}
  for tool in memcheck racecheck initcheck synccheck; do
    for shape in 96x64 32x64 40x1000 128x1024; do
      case $shape in
        96x64) label=${tool}_train_$chapter ;;
        32x64) label=${tool}_train_b32_$chapter ;;
        40x1000) [[ $chapter == 17_* ]] || continue; label=${tool}_train_wide_$chapter ;;
        128x1024) [[ $chapter == 1[67]_* ]] || continue; label=${tool}_train_widest_$chapter ;;
      esac
      sanitize "$tool" "$label" "$trainer" --hidden ${shape#*x} --batch ${shape%x*} --epochs 1 \
        --max-steps 3 --out-dir "$logs/$label"
    done
  done
done
wait
passed=0
failed=0
for label in "${labels[@]}"; do
  log="$logs/$label.txt"
  if [ "$(cat "$logs/$label.status" 2>/dev/null)" = ok ]; then
    passed=$((passed + 1))
    echo "ok   $label: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)"
  else
    failed=$((failed + 1))
    echo "FAIL $label: see $log $(cat "$log.timeout" 2>/dev/null)"
    grep -E '^=========|^error' "$log" | head -n 5
  fi
done
echo "sanitize: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
