# Sourced by tools/tile_sweep/sweep.sh and tools/ncu_forward.sh: builds tools/tile_sweep's GEMM
# timer around one GEMM (a chapter's gemm.cuh, or bench/cublas), the way Meson builds a chapter
# (common/chapter.cu with the GEMM's folder, chapters/ and common/ on the include path, and the .cu
# of every chapter up to this one: the GEMMs compiled once, chapters/meson.build, with meson.build's
# one_stub).
#   build_gemm_timer GEMM_DIR NAME NAMESPACE OUT [NVCC_ARGS...]
# NAME starts with the chapter's number (04, 04_cp_async) or is cublas. A chapter's GEMM_DIR may be
# a copy of its folder (DIR/NN_name, as sweep.sh makes): DIR then comes before chapters/ on the
# include path, so that the chapter's own .cu compiles the copy's headers too.
# GPU_ARCH picks the target (default 90a, the H100). nvcc's output goes to stdout.
build_gemm_timer() {
  local dir=$1 name=$2 namespace=$3 output=$4 arch=${GPU_ARCH:-90a}
  local repo compiled_once=() chapter_includes=()
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  shift 4
  if [[ $name =~ ^[0-9][0-9] ]]; then
    chapter_includes=(-I"$(dirname "$dir")")
    for source in "$repo"/chapters/[0-9][0-9]_*/*.cu; do
      [ -e "$source" ] || continue
      local number=${source#"$repo"/chapters/}
      [ "${number:0:2}" \> "${name:0:2}" ] || compiled_once+=("$source")
    done
  fi
  nvcc -O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -gencode="arch=compute_$arch,code=sm_$arch" \
    -static-global-template-stub=false \
    -I"$dir" "${chapter_includes[@]}" -I"$repo/chapters" -I"$repo/common" \
    -DCHAPTER_NAME="\"$name\"" -DCHAPTER_NAMESPACE="$namespace" "$repo/common/chapter.cu" \
    "$repo/common/epilogue.cu" "$repo/common/gpu_info.cu" "$repo/common/device_arena.cu" \
    "${compiled_once[@]}" "$repo/tools/tile_sweep/time_gemm.cu" "$@" -o "$output" 2>&1
}
