#!/usr/bin/env bash
# Breaks the code on purpose, one plausible bug at a time (tools/mutants.txt), and checks that a
# test fails for each: a test that still passes with the bug in is a test to strengthen. Works on
# a copy of the tree with a build of its own; the checkout is never touched. GPU needed.
#   tools/mutate.sh [NAME...]        default: every mutant; exits 1 if any was missed
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${MUTATE_DIR:-$(mktemp -d)}
seed=7  # the tests' random inputs, fixed so that a report can be replayed
# A mutant that makes a kernel wait forever (a barrier that never completes) must not stall the
# run: the test is stopped after as long as Meson gives the GEMM test, and counts as failing.
test_timeout=300
mkdir -p "$work/src"
tar -cf - -C "$root" --exclude='./build*' --exclude=./.git --exclude=./.device --exclude=./data/mnist \
  --exclude=./data/fashion --exclude=./runs . | tar -xf - -C "$work/src"
meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
"${meson_cmd[@]}" setup "$work/build" "$work/src" >"$work/setup.txt" 2>&1 ||
  { echo "error: meson setup failed:"; tail -n 5 "$work/setup.txt"; exit 1; }
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }
caught=0
missed=0
while IFS='|' read -r name target file old new; do
  name=$(trim "$name")
  case $name in "" | \#*) continue ;; esac
  [ $# -gt 0 ] && [[ " $* " != *" $name "* ]] && continue
  target=$(trim "$target")
  file=$(trim "$file")
  cp "$work/src/$file" "$work/original"
  if ! python3 - "$work/src/$file" "$old" "$new" <<'PY'; then
import sys
path = sys.argv[1]
old, new = (text.strip().replace("\\n", "\n") for text in sys.argv[2:4])
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"error: '{old}' occurs {text.count(old)} times in {path}, not once")
open(path, "w").write(text.replace(old, new))
PY
    echo "error: mutant $name no longer applies"
    missed=$((missed + 1))
    continue
  fi
  if ! ninja -C "$work/build" "tests/$target" >"$work/$name.build.txt" 2>&1; then
    echo "caught  $name: does not compile"
    caught=$((caught + 1))
  else
    case $target in
      test_training_*) args=("$root/data/mnist") ;;  # trains on MNIST: tools/device_run.sh fetches it
      test_mlp_kernels) args=("$seed") ;;
      *) args=("$seed" small) ;;
    esac
    timeout "$test_timeout" "$work/build/tests/$target" "${args[@]}" >"$work/$name.txt" 2>&1
    status=$?
    if [ $status -eq 124 ]; then
      echo "caught  $name: $target did not finish in ${test_timeout} s"
      caught=$((caught + 1))
    elif [ $status -eq 77 ]; then
      echo "error: $target skipped (no GPU): mutants need one"
      exit 1
    elif [ $status -eq 0 ]; then
      echo "MISSED  $name: $target passes ($(tail -n 1 "$work/$name.txt"))"
      missed=$((missed + 1))
    else
      echo "caught  $name: $(grep -m 1 -E 'FAIL|error' "$work/$name.txt" | cut -c 1-150)"
      caught=$((caught + 1))
    fi
  fi
  cp "$work/original" "$work/src/$file"
done <"$root/tools/mutants.txt"
echo "mutate: $caught caught, $missed missed"
[ $missed -eq 0 ]
