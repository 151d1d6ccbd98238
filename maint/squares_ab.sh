#!/usr/bin/env bash
# One chapter's square products in several variants of this checkout, timed against each other in
# one job on a GPU host:
#   maint/squares_ab.sh OUT_DIR CHAPTER ROUNDS NAME[=PATCH]...
# Each NAME is a copy of the working tree in build-ab/NAME (build folders, data/mnist and hidden
# folders left out), changed by PATCH, a shell command run at the copy's root (none: the tree as it is);
# bench_gemm_CHAPTER is built in every copy at once. Then ROUNDS rounds, each running every copy's
# `bench_gemm_CHAPTER --only square` once (the benchmark interleaves the chapter with cuBLAS), the
# copies' order rotating from one round to the next so that none always runs on the hottest GPU.
# The benchmark still checks every product against cuBLAS; a patch that leaves C unwritten
# has to switch that off itself, and then the SASS must show that the work it times was kept
# (docs/10_tile_scheduler.md, "Alternatives measured").
# Leaves OUT_DIR/squares_ab.tar.gz (OUT_DIR/r/NAME/squares_ROUND.csv, the build and bench
# logs) and prints tools/squares_summary.py's rows for each copy.
#   maint/squares_ab.sh "$OUT" 10_tile_scheduler 4 old \
#     three_stages='sed -i "s/kStages = 4; /kStages = 3; /" chapters/10_tile_scheduler/persistent_gemm.cuh'
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "error: usage: maint/squares_ab.sh OUT_DIR CHAPTER ROUNDS NAME[=PATCH]..." >&2
  exit 2
fi
out=$1 chapter=$2 rounds=$3
shift 3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
[ -d "chapters/$chapter" ] || { echo "error: no chapter $chapter" >&2; exit 2; }
case $rounds in '' | *[!0-9]*) echo "error: ROUNDS must be a number, not '$rounds'" >&2; exit 2 ;; esac
trees=$root/build-ab
mkdir -p "$out/r" "$trees"

names=()
for spec in "$@"; do
  name=${spec%%=*}
  patch=
  [ "$name" != "$spec" ] && patch=${spec#*=}
  names+=("$name")
  rm -rf "${trees:?}/$name" && mkdir -p "$trees/$name" "$out/r/$name"
  tar -cf - --exclude='./.[!.]*' --exclude=./data/mnist --exclude='./build*' . |
    tar -xf - -C "$trees/$name"
  if [ -n "$patch" ]; then
    (cd "$trees/$name" && bash -c "$patch") >"$out/r/patch_$name.txt" 2>&1 ||
      { echo "error: the patch of $name failed:"; cat "$out/r/patch_$name.txt"; exit 1; }
  fi
done
for name in "${names[@]}"; do
  ("${meson_cmd[@]}" setup "$trees/$name/b" "$trees/$name" >/dev/null 2>&1
   ninja -C "$trees/$name/b" "bench/bench_gemm_$chapter" >"$out/r/build_$name.txt" 2>&1) &
done
wait
for name in "${names[@]}"; do
  [ -x "$trees/$name/b/bench/bench_gemm_$chapter" ] ||
    { echo "error: $name did not build:"; tail "$out/r/build_$name.txt"; exit 1; }
  # What each copy kept of the tensor-core work: a variant whose results nobody reads can lose
  # its wgmmas or mmas to ptxas (docs/10_tile_scheduler.md), and then times something else.
  if command -v cuobjdump >/dev/null; then
    sass=$(cuobjdump -sass "$trees/$name/b/bench/bench_gemm_$chapter")
    echo "$name: $(grep -c 'HGMMA' <<<"$sass") HGMMA, $(grep -c 'HMMA' <<<"$sass") HMMA in the binary"
  fi
done

order=("${names[@]}")
for round in $(seq 1 "$rounds"); do
  for name in "${order[@]}"; do
    timeout 120 "$trees/$name/b/bench/bench_gemm_$chapter" --only square \
      --csv "$out/r/$name/squares_$round.csv" >>"$out/r/bench_$name.txt" 2>&1 ||
      { echo "bench $name, round $round: failed"; tail -3 "$out/r/bench_$name.txt"; }
  done
  order=("${order[@]:1}" "${order[0]}")
done
for name in "${names[@]}"; do
  echo "== $name"
  python3 tools/squares_summary.py "$out/r/$name"/*.csv | grep -E '^\| square'
done
tar -czf "$out/squares_ab.tar.gz" -C "$out" r && rm -rf "$out/r"
