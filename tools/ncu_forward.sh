#!/usr/bin/env bash
# Nsight Compute (`--set full`) on one 4096^3 forward product of each named kernel, the chapter as
# committed or cuBLAS, through tools/tile_sweep's timer (GPU needed): stall reasons, pipe use and
# occupancy, to explain a chapter's distance from its target.
#   tools/ncu_forward.sh OUT_DIR NAME...     NAME: a chapter number (02 .. 08) or cublas
# Leaves OUT_DIR/ncu.tar.gz: per NAME the report (.ncu-rep), its details page (.txt) and its raw
# metrics (.raw.csv). The clocks are left alone (--clock-control none), as every benchmark here.
set -uo pipefail
out=$1
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH=/usr/local/cuda/bin:$PATH
bins=$(mktemp -d)
source tools/tile_sweep/build.sh
mkdir -p "$out/ncu"

build() {  # NAME -> $bins/NAME
  local name=$1 src ns flags=()
  if [ "$name" = cublas ]; then
    src=bench/cublas ns=cublas flags=(-lcublas)
  else
    src=$(ls -d chapters/"$name"_*/ 2>/dev/null | head -n 1)
    [ -n "$src" ] || { echo "error: no chapter $name"; return 1; }
    src=${src%/} ns=$(basename "$src") ns=${ns:3}
  fi
  build_gemm_timer "$src" "$name" "$ns" "$bins/$name" "${flags[@]}" ||
    echo "error: $name does not build"
}

for name in "$@"; do build "$name" & done
wait
for name in "$@"; do
  [ -x "$bins/$name" ] || continue
  regex=gemm_kernel
  [ "$name" = cublas ] && regex='nvjet|sm90|xmma|cutlass|gemm'  # cuBLAS's kernel names vary
  echo "=== ncu $name ($(date -u +%T))"
  timeout 60 ncu --clock-control none --kernel-name regex:"$regex" --launch-count 1 --set full \
    -o "$out/ncu/$name" "$bins/$name" 4096 4096 4096 NT >"$out/ncu/$name.stdout" 2>&1
  echo "rc $?"
  ncu --import "$out/ncu/$name.ncu-rep" --print-summary none >"$out/ncu/$name.txt" 2>&1
  ncu --import "$out/ncu/$name.ncu-rep" --page raw --csv >"$out/ncu/$name.raw.csv" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" \
    "$out/ncu/$name.txt" | head -n 6
done
tar -czf "$out/ncu.tar.gz" -C "$out" ncu && rm -rf "$out/ncu" "$bins"
