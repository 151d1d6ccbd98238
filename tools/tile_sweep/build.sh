# Sourced by tools/tile_sweep/sweep.sh and tools/ncu_forward.sh: builds tools/tile_sweep's GEMM
# timer around one GEMM (a chapter's gemm.cuh, or bench/cublas), the way Meson builds a chapter
# (common/chapter.cu with the GEMM's folder, chapters/ and common/ on the include path).
#   build_gemm_timer GEMM_DIR NAME NAMESPACE OUT [NVCC_ARGS...]
# GPU_ARCH picks the target (default 90a, the H100). nvcc's output goes to stdout.
build_gemm_timer() {
  local dir=$1 name=$2 namespace=$3 output=$4 arch=${GPU_ARCH:-90a}
  local repo
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  shift 4
  nvcc -O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -gencode="arch=compute_$arch,code=sm_$arch" \
    -I"$dir" -I"$repo/chapters" -I"$repo/common" -DCHAPTER_NAME="\"$name\"" \
    -DCHAPTER_NAMESPACE="$namespace" "$repo/common/chapter.cu" "$repo/common/epilogue.cu" \
    "$repo/tools/tile_sweep/time_gemm.cu" "$@" -o "$output" 2>&1
}
