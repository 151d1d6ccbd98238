#!/usr/bin/env bash
# What a GPU session needs, on the device machine, in two parts that each fit one call:
#   tools/device_run.sh OUT_DIR check    build, all tests, the sanitizer, resource usage and SASS
#   tools/device_run.sh OUT_DIR bench [TRAINER_ARGS...]
#                                        build, the GEMM benchmarks, a default training run
# Expects MNIST as .device/mnist-gz/*.gz (carry that folder; the raw files are too big to carry).
# Leaves OUT_DIR/log.txt (everything printed) and OUT_DIR/results.tar.gz (CSVs, test logs, SASS).
set -uo pipefail
out=$1
part=$2
shift 2
case $part in check | bench) ;; *) echo "error: the part must be check or bench, got '$part'"; exit 1 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
results=$(mktemp -d)
exec > >(tee "$out/log.txt") 2>&1

meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step "GPU"
date -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,driver_version \
  --format=csv | tee "$results/gpu.csv"
nvcc --version | tail -n 1

step "data"
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
data/fetch.sh mnist || exit 1

step "build"
"${meson_cmd[@]}" setup build-device >/dev/null || exit 1
ninja -C build-device || exit 1
chapters=$(ls -d chapters/[0-9][0-9]_*/ | xargs -n 1 basename | sort)
newest=$(echo "$chapters" | tail -n 1)

if [ "$part" = check ]; then
  step "tests"
  "${meson_cmd[@]}" test -C build-device --print-errorlogs --num-processes 1
  cp build-device/meson-logs/testlog.txt "$results/testlog.txt"

  step "compute-sanitizer"
  tools/sanitize.sh build-device "$results/sanitizer"

  step "resource usage and SASS"
  for c in $chapters; do
    cuobjdump -res-usage "build-device/bench/bench_gemm_$c" 2>&1 | grep -A1 -E "gemm|Gemm" \
      >"$results/res_usage_$c.txt"
    cuobjdump -sass "build-device/bench/bench_gemm_$c" >"$results/sass_$c.txt"
    echo "$c: $(grep -cE '\bHMMA' "$results/sass_$c.txt") HMMA, $(grep -cE '\bLDSM' "$results/sass_$c.txt") LDSM, $(grep -cE '\bLDGSTS' "$results/sass_$c.txt") LDGSTS, $(grep -cE '\bFFMA' "$results/sass_$c.txt") FFMA in the whole binary"
    grep -B1 -A1 "launch_gemm\|_gemm_kernel" "$results/res_usage_$c.txt" | head -n 20
  done

else
  step "GEMM benchmarks"
  for c in $chapters; do
    "build-device/bench/bench_gemm_$c" --csv "$results/gemm_$c.csv"
  done

  step "training: $newest $*"
  "build-device/chapters/train_$newest" --out-dir "$results/runs" "$@"
fi

tar -czf "$out/results.tar.gz" -C "$results" .
step "done"
