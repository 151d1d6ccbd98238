#!/usr/bin/env bash
# A learner without an H100, played on one: builds BUILD_DIR with compute_80 PTX alone
# (-Dgpu_arch=compute_80: no machine code, the driver compiles the PTX for the GPU when a program
# starts, as it would for any GPU from compute capability 8.0 on), then checks that
#   - the chapters that run on any such GPU (kNeedsSm90a = false) pass their command-line test and
#     their GEMM test (seed 7, small), and the newest of them its training test;
#   - the chapters that need sm_90a refuse: their trainer and benchmark exit non-zero with one
#     `error:` line on stderr that says sm_90a and names the GPU, printing nothing else, and their
#     GEMM and training tests SKIP (exit 77) with one line that says sm_90a;
#   - tools/pick_chapter.sh, tools/train.sh's choice, names the newest chapter that runs.
# Builds only the targets it runs. GPU needed for the checks; without one it stops after the build
# (exit 77). About 5 minutes on a 16-core machine with an H100.
#   maint/check_portable.sh BUILD_DIR OUT_DIR      OUT_DIR/check_portable.txt: everything printed;
#                                                  OUT_DIR/portable/: each program's output
# Exits 0 when every check passes. JOBS=N limits ninja to N jobs.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$2/portable"
build=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$(cd "$2" && pwd)
logs=$out/portable
cd "$root" || exit 1
export PATH="/usr/local/cuda/bin:$PATH"
exec > >(tee "$out/check_portable.txt") 2>&1
start=$SECONDS
meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
data=$root/data/mnist
passed=0
failed=0
summary=()

record() {  # record PASS|FAIL WHAT DETAIL
  summary+=("$(printf '%-5s %s: %s' "$1" "$2" "$3")")
  echo "${summary[-1]}"
  if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
step() { echo; echo "=== $* ($((SECONDS - start)) s)"; }
first_line() { head -n 1 "$1" | cut -c 1-220; }

step "GPU and toolkit"
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm --format=csv 2>&1 || true
nvcc --version | tail -n 1

step "data"
if [ -n "${MNIST_GZ_DIR:-}" ] && [ ! -f "$data/train-images-idx3-ubyte" ]; then
  mkdir -p "$data"
  for f in "$MNIST_GZ_DIR"/*.gz; do gunzip -c "$f" >"$data/$(basename "${f%.gz}")"; done
fi
data/fetch.sh mnist || { echo "error: MNIST is missing (data/fetch.sh mnist)"; exit 1; }

# Which chapters need sm_90a, as they declare it.
portable=()
hopper=()
for dir in chapters/[0-9][0-9]_*/; do
  chapter=$(basename "$dir")
  if grep -q "constexpr bool kNeedsSm90a = true;" "$dir/gemm.cuh"; then
    hopper+=("$chapter")
  else
    portable+=("$chapter")
  fi
done
newest_portable=${portable[-1]}
echo "run on any GPU from compute capability 8.0: ${portable[*]}"
echo "need sm_90a: ${hopper[*]}"

step "configure $build with -Dgpu_arch=compute_80"
if [ -f "$build/build.ninja" ]; then
  "${meson_cmd[@]}" configure "$build" -Dgpu_arch=compute_80 >"$logs/configure.txt" 2>&1
else
  "${meson_cmd[@]}" setup "$build" -Dgpu_arch=compute_80 >"$logs/configure.txt" 2>&1
fi || { tail -n 20 "$logs/configure.txt"; echo "error: configuring $build failed"; exit 1; }
targets=()
for chapter in "${portable[@]}" "${hopper[@]}"; do
  targets+=("chapters/train_$chapter" "tests/test_gemm_$chapter")
done
targets+=("tests/test_training_$newest_portable")
for chapter in "${hopper[@]}"; do
  targets+=("tests/test_training_$chapter" "bench/bench_gemm_$chapter")
done
step "build ${#targets[@]} targets"
ninja -C "$build" ${JOBS:+-j "$JOBS"} "${targets[@]}" >"$logs/build.txt" 2>&1 ||
  { tail -n 30 "$logs/build.txt"; echo "error: the build failed"; exit 1; }
tail -n 1 "$logs/build.txt"

# The build holds compute_80 PTX and nothing else: every nvcc command says so, and (where
# cuobjdump is installed) no binary holds machine code.
gencodes=$(grep -o -- '-gencode=[^ ]*' "$build/build.ninja" | sort -u | tr '\n' ' ')
if [ "$gencodes" = "-gencode=arch=compute_80,code=compute_80 " ]; then
  record PASS "build" "every CUDA compile has $gencodes"
else
  record FAIL "build" "the CUDA compiles have: $gencodes"
fi
if command -v cuobjdump >/dev/null; then
  with_sass=()
  for target in "${targets[@]}"; do
    elf=$(cuobjdump --list-elf "$build/$target" 2>/dev/null)
    [ -n "$elf" ] && with_sass+=("$target") && printf '%s:\n%s\n' "$target" "$elf" >>"$logs/elf_list.txt"
    cuobjdump --list-ptx "$build/$target" >>"$logs/ptx_list.txt" 2>&1
  done
  ptx=$(grep -oE 'sm_[0-9]+a?\.ptx' "$logs/ptx_list.txt" | sort -u | tr '\n' ' ')
  if [ ${#with_sass[@]} -eq 0 ] && [ "$ptx" = "sm_80.ptx " ]; then
    record PASS "binaries" "${#targets[@]} programs, no machine code, PTX: $ptx"
  else
    record FAIL "binaries" "machine code in: ${with_sass[*]:-none}; PTX: $ptx"
  fi
else
  echo "cuobjdump not installed: the binaries' contents are not checked"
fi

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU: built $build; the checks below need one"
  exit 77
fi

# check_passes WHAT LOG COMMAND...: exit 0
check_passes() {
  local what=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1
  local status=$?
  if [ $status -eq 0 ]; then
    record PASS "$what" "$(tail -n 1 "$log" | cut -c 1-160)"
  else
    local why
    why=$(grep -m 1 -E 'FAIL|error' "$log" || head -n 1 "$log")
    record FAIL "$what" "exit $status: ${why:0:200} (see $log)"
  fi
}

# check_refuses WHAT LOG COMMAND...: non-zero exit, stdout empty, stderr one line starting
# "error:" that says sm_90a and names the GPU.
check_refuses() {
  local what=$1 log=$2
  shift 2
  "$@" >"$log.stdout" 2>"$log"
  local status=$? lines
  lines=$(grep -c . "$log")
  if [ $status -ne 0 ] && [ "$lines" -eq 1 ] && [ ! -s "$log.stdout" ] &&
    grep -q '^error: .*sm_90a.*' "$log" && grep -qF "$gpu_name" "$log"; then
    record PASS "$what" "exit $status, \"$(first_line "$log")\""
  else
    record FAIL "$what" "exit $status, $lines line(s) on stderr, $(grep -c . "$log.stdout") on stdout: $(first_line "$log")"
  fi
}

# check_skips WHAT LOG COMMAND...: exit 77, one line "SKIP ..." that says sm_90a.
check_skips() {
  local what=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1
  local status=$?
  if [ $status -eq 77 ] && [ "$(grep -c . "$log")" -eq 1 ] && grep -q '^SKIP .*sm_90a' "$log"; then
    record PASS "$what" "exit 77, \"$(first_line "$log")\""
  else
    record FAIL "$what" "exit $status: $(first_line "$log")"
  fi
}

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
for chapter in "${portable[@]}"; do
  step "$chapter"
  check_passes "$chapter cli" "$logs/cli_$chapter.txt" \
    tests/cli_test.sh "$build/chapters/train_$chapter"
  check_passes "$chapter gemm (seed 7, small)" "$logs/gemm_$chapter.txt" \
    "$build/tests/test_gemm_$chapter" 7 small
done
step "$newest_portable training"
check_passes "$newest_portable training" "$logs/training_$newest_portable.txt" \
  "$build/tests/test_training_$newest_portable" "$data"
for chapter in "${hopper[@]}"; do
  step "$chapter"
  check_passes "$chapter cli" "$logs/cli_$chapter.txt" \
    tests/cli_test.sh "$build/chapters/train_$chapter"
  check_refuses "$chapter trainer refuses" "$logs/train_$chapter.txt" \
    "$build/chapters/train_$chapter" --epochs 1 --out-dir "$logs/runs"
  check_refuses "$chapter benchmark refuses" "$logs/bench_$chapter.txt" \
    "$build/bench/bench_gemm_$chapter"
  check_skips "$chapter gemm test SKIPs" "$logs/gemm_$chapter.txt" \
    "$build/tests/test_gemm_$chapter" 7 small
  check_skips "$chapter training test SKIPs" "$logs/training_$chapter.txt" \
    "$build/tests/test_training_$chapter" "$data"
done

# tools/train.sh trains the chapter tools/pick_chapter.sh names: the newest portable one here, with
# one line on stderr that names it and the newer chapter's refusal.
step "tools/train.sh's chapter (tools/pick_chapter.sh)"
picked=$(tools/pick_chapter.sh "$build" 2>"$logs/pick_chapter.txt")
said=$(cat "$logs/pick_chapter.txt")
if [ "$picked" = "$newest_portable" ] && [ "$(wc -l <"$logs/pick_chapter.txt")" -eq 1 ] &&
  grep -q "^training $newest_portable, the newest chapter this GPU runs; ${hopper[-1]} refused: .*sm_90a" \
    <<<"$said"; then
  record PASS "tools/pick_chapter.sh" "$picked, \"$(cut -c 1-160 <<<"$said")\""
else
  record FAIL "tools/pick_chapter.sh" "picked '$picked', said \"$(head -c 300 <<<"$said")\""
fi

step "summary"
echo "GPU: $gpu_name; build $build, -Dgpu_arch=compute_80"
printf '%s\n' "${summary[@]}"
echo "check_portable: $passed passed, $failed failed ($((SECONDS - start)) s)"
[ $failed -eq 0 ]
