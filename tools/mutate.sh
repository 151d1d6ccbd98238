#!/usr/bin/env bash
# Breaks the code on purpose, one plausible bug at a time (tools/mutants.txt), and checks that a
# test fails for each: a test that still passes with the bug in is a test to strengthen. Works on
# copies of the tree with builds of their own; the checkout is never touched. GPU needed.
#   tools/mutate.sh [NAME...]        default: every mutant; exits 1 if any was missed
# MUTATE_JOBS lanes (default 4), each with its own copy and build, build every mutant's test and
# run it at once, the training tests without their `memory` part. What must run alone comes
# afterwards, one at a time: the `memory` part of each training test that passed the rest (it
# checks that the free device memory does not move during its steps, which another process would
# move), and the compute-sanitizer runs, slow enough alone.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${MUTATE_DIR:-$(mktemp -d)}
lanes=${MUTATE_JOBS:-4}
seed=7  # the tests' random inputs, fixed so that a report can be replayed
# A mutant that makes a kernel wait forever (a barrier that never completes) must not stall the
# run: the test is stopped after as long as Meson gives the GEMM test (MUTATE_TIMEOUT seconds where
# set: a stress-build race that hangs its ring, as 07_no_barrier_before_refill does, waits that
# long), and counts as failing.
test_timeout=${MUTATE_TIMEOUT:-300}
tool_timeout=560  # a whole GEMM test under compute-sanitizer, alone on the GPU
meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }

# make_lane N [OPTION...]: lane N's copy of the tree and its build, configured with the options.
make_lane() {
  local dir=$work/lane$1
  shift
  mkdir -p "$dir/src"
  tar -cf - -C "$root" --exclude='./build*' --exclude=./.git --exclude=./.device \
    --exclude=./data/mnist --exclude=./data/fashion --exclude=./runs . | tar -xf - -C "$dir/src"
  "${meson_cmd[@]}" setup "$dir/build" "$dir/src" "$@" >"$dir/setup.txt" 2>&1 ||
    { echo "error: meson setup failed:"; tail -n 5 "$dir/setup.txt"; return 1; }
}

# build_mutant LANE NAME TARGET FILE OLD NEW: applies the bug in the lane's copy, builds the test
# and keeps its binary as $work/NAME.bin (the build is static: the copy runs on its own), and
# restores the file. Where the bug no longer applies or does not compile, writes the result line
# to $work/NAME.result instead and returns 1.
build_mutant() {
  local dir=$work/lane$1 name=$2 target=$3 file=$4 old=$5 new=$6 result=$work/$2.result
  local program=${target#*:} built=0 folder=tests
  [[ $program == train_* ]] && folder=chapters
  cp "$dir/src/$file" "$dir/original"
  if ! python3 - "$dir/src/$file" "$old" "$new" <<'PY'; then
import sys
path = sys.argv[1]
old, new = (text.strip().replace("\\n", "\n") for text in sys.argv[2:4])
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"error: '{old}' occurs {text.count(old)} times in {path}, not once")
open(path, "w").write(text.replace(old, new))
PY
    echo "error: mutant $name no longer applies" >"$result"
  elif ! ninja -C "$dir/build" "$folder/$program" >"$work/$name.build.txt" 2>&1; then
    echo "caught  $name: does not compile" >"$result"
  else
    cp "$dir/build/$folder/$program" "$work/$name.bin"
    built=1
  fi
  cp "$dir/original" "$dir/src/$file"
  [ $built -eq 1 ] || { cat "$result"; return 1; }
}

# run_built NAME TARGET: runs the mutant's test binary (whole:TARGET on every shape; TOOL:TARGET
# under compute-sanitizer's TOOL, in the GEMM test's sanitize mode; fences:TARGET through
# tests/check_fences.py, tma_stores:TARGET through tests/check_tma_stores.py) and writes one line
# to $work/NAME.result: "caught ...", "MISSED ..." or "error: ...". A TARGET train_CHAPTER is the
# chapter's trainer, run as tools/sanitize.sh runs it (3 steps at batch 96, hidden 64): for a race
# in a kernel that only the trainer launches, under TOOL; program:train_CHAPTER runs the chapter's
# end-to-end test (tests/gpu/test_program.cu, built unbroken) on the broken trainer.
# A training test runs its `curves` part (PART unset) or its `memory` part (PART=memory); one that
# passes its curves leaves $work/NAME.memory, and its binary, for the memory part.
run_built() {
  local name=$1 target=$2 result=$work/$1.result
  local tool="" program=$target timeout=$test_timeout args runner=()
  if [[ $target == *:* ]]; then tool=${target%%:*} program=${target#*:}; fi
  case $program in
    test_training_*) args=("$root/data/mnist" "${PART:-curves}") ;;  # trains on MNIST
    test_reference) args=("$root/data/mnist") ;;
    test_mlp_kernels) args=("$seed") ;;
    train_*) args=(--data-dir "$root/data/mnist" --hidden 64 --batch 96 --epochs 1 --max-steps 3
                   --no-eval --out-dir "$work/$name.runs") ;;
    *) args=("$seed" small) ;;
  esac
  if [ "$tool" = whole ]; then  # the GEMM test on every shape, not only the small ones
    args=("$seed")
  elif [ "$tool" = stress ]; then  # built with -Drace_stress=true (the stress lane): runs as is
    :
  elif [ "$tool" = fences ]; then  # the machine code read for a fence before each atomic add
    runner=(python3 "$root/tests/check_fences.py")
    args=()
  elif [ "$tool" = tma_stores ]; then  # ... for the fence, barrier and wait of each TMA store
    runner=(python3 "$root/tests/check_tma_stores.py")
    args=()
  elif [ "$tool" = wgmma_waits ]; then  # ... for the wait before each stage handed back
    runner=(python3 "$root/tests/check_wgmma_waits.py")
    args=()
  elif [ "$tool" = program ]; then  # the trainer end to end, run by its chapter's program test
    local checker=tests/test_program_${program#train_}  # built from lane 0's tree, restored by now
    if ! ninja -C "$work/lane0/build" "$checker" >"$work/$name.checker.txt" 2>&1; then
      echo "error: $name: $checker does not build" >"$result"
      cat "$result"
      return
    fi
    runner=("$work/lane0/build/$checker")
    args=("$root/data/mnist")
  elif [ -n "$tool" ]; then
    runner=(compute-sanitizer --tool "$tool" --error-exitcode 1)
    [[ $program == train_* ]] || args=("$seed" sanitize)
    timeout=$tool_timeout
  fi
  timeout "$timeout" "${runner[@]}" "$work/$name.bin" "${args[@]}" >"$work/$name.txt" 2>&1
  local status=$?
  if [ $status -eq 124 ] && [[ -z $tool || $tool == stress ]]; then
    echo "caught  $name: $target did not finish in $timeout s" >"$result"
  elif [ $status -eq 124 ]; then  # slower than its timeout: says nothing about the bug
    echo "error: $name: $target did not finish in $timeout s under $tool" >"$result"
  elif [ $status -eq 77 ]; then
    echo "error: $target skipped (no GPU): mutants need one" >"$result"
  elif [ $status -eq 0 ] && [[ -z $tool && $program == test_training_* && -z ${PART:-} ]]; then
    touch "$work/$name.memory"
    echo "pending $name: $target passes its curves; its memory part runs alone later" >"$result"
    cat "$result"
    return
  elif [ $status -eq 0 ]; then
    echo "MISSED  $name: $target passes ($(tail -n 1 "$work/$name.txt"))" >"$result"
  else
    echo "caught  $name: $(grep -m 1 -E 'FAIL|error' "$work/$name.txt" | cut -c 1-150)" >"$result"
  fi
  rm -f "$work/$name.bin"
  cat "$result"  # as it comes, so that a run cut short still shows what it had
}

# The chosen mutants, in file order, each as one '|'-separated record; what runs alone apart.
names=()
parallel=()
serial=()
stressed=()  # built and run in lanes of their own, configured with -Drace_stress=true
while IFS='|' read -r name target file old new; do
  name=$(trim "$name")
  case $name in "" | \#*) continue ;; esac
  [ $# -gt 0 ] && [[ " $* " != *" $name "* ]] && continue
  target=$(trim "$target")
  names+=("$name")
  record="$name|$target|$(trim "$file")|$old|$new"
  case $target in
    stress:*) stressed+=("$record") ;;
    *:*) serial+=("$record") ;;
    *) parallel+=("$record") ;;
  esac
done <"$root/tools/mutants.txt"
[ ${#names[@]} -gt 0 ] || { echo "error: no mutant of that name"; exit 1; }

# Every lane builds its share of the mutants; it runs its share of the parallel ones at once, and
# the serial ones (compute-sanitizer runs, machine-code reads, programs) and the training tests'
# memory parts one at a time after all builds are done.
# build_list LANE RUN RECORD...: the lane's mutants one after another, each run where RUN is 1.
build_list() {
  local lane=$1 run=$2 record
  shift 2
  for record in "$@"; do
    IFS='|' read -r name target file old new <<<"$record"
    build_mutant "$lane" "$name" "$target" "$file" "$old" "$new" &&
      { [ "$run" -eq 0 ] || run_built "$name" "$target"; }
  done
}

all=$((${#parallel[@]} + ${#serial[@]}))
used=$((all < lanes ? all : lanes))
for ((lane = 0; lane < used; ++lane)); do make_lane $lane || exit 1; done
stress_lanes=$((${#stressed[@]} < lanes ? ${#stressed[@]} : lanes))
for ((lane = 0; lane < stress_lanes; ++lane)); do
  make_lane stress$lane -Drace_stress=true || exit 1
  mine=()
  for ((i = lane; i < ${#stressed[@]}; i += stress_lanes)); do mine+=("${stressed[i]}"); done
  build_list stress$lane 1 "${mine[@]}" &
done
for ((lane = 0; lane < used; ++lane)); do
  mine=()
  for ((i = lane; i < ${#parallel[@]}; i += used)); do mine+=("${parallel[i]}"); done
  theirs=()
  for ((i = lane; i < ${#serial[@]}; i += used)); do theirs+=("${serial[i]}"); done
  { build_list $lane 1 "${mine[@]}"; build_list $lane 0 "${theirs[@]}"; } &
done
wait
for record in "${serial[@]}"; do
  IFS='|' read -r name target _ <<<"$record"
  [ -f "$work/$name.bin" ] && run_built "$name" "$target"
done
for record in "${parallel[@]}"; do
  IFS='|' read -r name target _ <<<"$record"
  [ -f "$work/$name.memory" ] && PART=memory run_built "$name" "$target"
done

caught=0
missed=0
for name in "${names[@]}"; do
  line=$(cat "$work/$name.result" 2>/dev/null || echo "error: mutant $name left no result")
  echo "$line"
  case $line in caught*) caught=$((caught + 1)) ;; *) missed=$((missed + 1)) ;; esac
done
echo "mutate: $caught caught, $missed missed"
[ $missed -eq 0 ]
