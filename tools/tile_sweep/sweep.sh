#!/usr/bin/env bash
# Times one chapter's GEMM with other values of its named constants, to choose them by
# measurement (GPU needed). Each variant is a list of NAME=VALUE overrides of the chapter's
# `constexpr int NAME = ...;` lines; an empty string is the chapter as it stands.
#   tools/tile_sweep/sweep.sh CHAPTER VARIANT... [-- M N K OPS ...]
#   tools/tile_sweep/sweep.sh 04_cp_async "" "kBlockTileN=256 kWarpTileN=64 kStages=3"
# Prints per variant the registers and spills ptxas reports and the timings of time_gemm.cu.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
chapter=$1
shift
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants+=("$1"); shift; done
[ $# -gt 0 ] && shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096 4096 4096 NT 32 1024 1024 NT 32 784 8192 NN
  32 8192 8192 NT 256 1024 1024 NT)
source_file="$root/chapters/$chapter/gemm.cuh"
[ -f "$source_file" ] || { echo "error: no chapter $chapter"; exit 1; }
work=$(mktemp -d)
source "$root/tools/tile_sweep/build.sh"

build() {  # variant index, overrides
  local dir="$work/v$1/$chapter"  # a copy of the folder, read by its compiled-once .cu too
  mkdir -p "$dir"
  cp "$root/chapters/$chapter"/*.cuh "$dir/"
  for override in $2; do
    local name=${override%%=*} value=${override#*=}
    grep -qE "constexpr int $name = " "$dir/gemm.cuh" || { echo "no constant $name" >"$dir/error"; return; }
    sed -i -E "s/(constexpr int $name = )[0-9]+;/\1$value;/" "$dir/gemm.cuh"
  done
  # shellcheck disable=SC2086  # LIBS: extra libraries, split on spaces
  build_gemm_timer "$dir" "$chapter" "${chapter:3}" "$dir/time_gemm" -Xptxas -v ${LIBS:-} \
    >"$dir/ptxas.txt" || echo "build failed: $(grep -m1 error "$dir/ptxas.txt")" >"$dir/error"
}

for i in "${!variants[@]}"; do build "$i" "${variants[$i]}" & done
wait
for i in "${!variants[@]}"; do
  dir="$work/v$i/$chapter"
  echo "== $chapter ${variants[$i]:-(as committed)}"
  if [ -f "$dir/error" ]; then cat "$dir/error"; continue; fi
  echo "  ptxas: $(grep -oE 'Used [0-9]+ registers' "$dir/ptxas.txt" | sort -u | tr '\n' ' ')" \
    "$(grep -oE '[0-9]+ bytes spill stores' "$dir/ptxas.txt" | sort -u | tr '\n' ' ')"
  "$dir/time_gemm" "${shapes[@]}"
done
rm -rf "$work"
