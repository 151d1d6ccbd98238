#!/usr/bin/env bash
# A batch of GPU work on a remote GPU host, in parts that each fit a short job; a part after the
# first reuses the build when it runs on the same host.
#   maint/device_run.sh OUT_DIR check                build, every test, resource usage and SASS
#   maint/device_run.sh OUT_DIR tests SUITE...       `meson test --suite SUITE` for each suite
#   maint/device_run.sh OUT_DIR sanitize             tools/sanitize.sh on every chapter
#   maint/device_run.sh OUT_DIR bench CHAPTER...     the GEMM benchmark of each chapter
#   maint/device_run.sh OUT_DIR squares CHAPTER...   the square cases only, in 3 processes, and
#                                                    their medians (bench/median_runs.py)
#   maint/device_run.sh OUT_DIR cases CHAPTER...     every case, in 3 processes, and the medians
#   maint/device_run.sh OUT_DIR train CHAPTER...     the default model (5 epochs) of each chapter
#   maint/device_run.sh OUT_DIR train-graph CHAPTER...  the same, the step replayed as a CUDA graph
#                                                    (--launch graph), CSVs in runs_graph/
#   maint/device_run.sh OUT_DIR mutate [NAME...]     tools/mutate.sh: a test must fail for each bug
# Several parts may follow each other: maint/device_run.sh OUT check -- bench 02_smem_tiling.
# MNIST: data/fetch.sh fetches it; on a host without network, set MNIST_GZ_DIR to a folder of the
# four gzipped IDX files copied there.
# Leaves OUT_DIR/log.txt (everything printed) and OUT_DIR/results.tar.gz (CSVs, logs, SASS).
set -uo pipefail
out=$1
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
results=$(mktemp -d)
exec > >(tee -a "$out/log.txt") 2>&1

meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
build=build-device

step "GPU"
date -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,driver_version \
  --format=csv | tee -a "$results/gpu.csv"
nvcc --version | tail -n 1

step "data and build"
mkdir -p data/mnist
if [ -n "${MNIST_GZ_DIR:-}" ]; then
  for f in "$MNIST_GZ_DIR"/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
fi
data/fetch.sh mnist || exit 1
[ -f "$build/build.ninja" ] || "${meson_cmd[@]}" setup "$build" >/dev/null || exit 1
ninja -C "$build" | tail -n 1 || exit 1
all_chapters=$(ls -d chapters/[0-9][0-9]_*/ | xargs -n 1 basename | sort)

while [ $# -gt 0 ]; do
  part=$1
  shift
  chapters=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do chapters+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  case $part in
    check)
      step "tests"
      "${meson_cmd[@]}" test -C "$build" --print-errorlogs
      cp "$build/meson-logs/testlog.txt" "$results/testlog.txt"
      step "resource usage and SASS"
      for c in $all_chapters; do
        cuobjdump -res-usage "$build/bench/bench_gemm_$c" 2>&1 | grep -A1 "_gemm_kernel" \
          >"$results/res_usage_$c.txt"
        cuobjdump -sass "$build/bench/bench_gemm_$c" >"$results/sass_$c.txt"
        echo "$c: $(grep -cE '\bHGMMA' "$results/sass_$c.txt") HGMMA, $(grep -cE '\bHMMA' "$results/sass_$c.txt") HMMA, $(grep -cE '\bLDSM' "$results/sass_$c.txt") LDSM, $(grep -cE '\bLDGSTS' "$results/sass_$c.txt") LDGSTS, $(grep -cE '\bUTMALDG' "$results/sass_$c.txt") UTMALDG, $(grep -cE '\bFFMA' "$results/sass_$c.txt") FFMA, $(grep -cE '\bLDS\.128' "$results/sass_$c.txt") LDS.128 in the whole binary"
      done
      ;;
    tests)
      step "tests: ${chapters[*]}"
      "${meson_cmd[@]}" test -C "$build" --print-errorlogs \
        $(printf -- '--suite %s ' "${chapters[@]}")
      cp "$build/meson-logs/testlog.txt" "$results/testlog_suites.txt"
      ;;
    sanitize)
      step "compute-sanitizer"
      tools/sanitize.sh "$build" "$results/sanitizer"
      ;;
    bench)
      for c in "${chapters[@]}"; do
        step "GEMM benchmark $c"
        "$build/bench/bench_gemm_$c" --csv "$results/gemm_$c.csv"
      done
      ;;
    squares | cases)
      only=square
      [ "$part" = cases ] && only=  # every case starts with the empty prefix
      for c in "${chapters[@]}"; do
        step "$part $c"
        python3 bench/median_runs.py "$c" --out "$results/$part" --build-dir "$build" --only "$only"
      done
      ;;
    mutate)
      step "mutants"
      MUTATE_DIR="$results/mutate" tools/mutate.sh "${chapters[@]}"
      rm -rf "$results"/mutate/lane*
      ;;
    train)
      for c in "${chapters[@]}"; do
        step "default model $c"
        "$build/chapters/train_$c" --out-dir "$results/runs"
      done
      ;;
    train-graph)
      for c in "${chapters[@]}"; do
        step "default model $c, step replayed as a CUDA graph"
        "$build/chapters/train_$c" --launch graph --out-dir "$results/runs_graph"
      done
      ;;
    *)
      echo "error: unknown part '$part' (check, tests, sanitize, bench, squares, cases, train, train-graph or mutate)"
      exit 1
      ;;
  esac
  # Packed after every part: a call that runs out of time keeps the parts it finished.
  tar -czf "$out/results.tar.gz" -C "$results" .
done

tar -czf "$out/results.tar.gz" -C "$results" .
step "done"
