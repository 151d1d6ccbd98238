#!/usr/bin/env bash
# The trainer's command line from the outside: --help works, and every bad input ends with one
# line on stderr that starts with "error:" and a non-zero exit status. Runs with or without a GPU.
#   tests/cli_test.sh build/chapters/train_NN_name
set -u
trainer=$1
failed=0
passed=0

expect_error() {  # expect_error WHAT ARGS...
  local what=$1
  shift
  local err status lines
  err=$("$trainer" "$@" 2>&1 >/dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ $status -ne 0 ] && [ "$lines" -eq 1 ] && [[ $err == error:* ]]; then
    passed=$((passed + 1))
  else
    echo "FAIL $what: exit $status, stderr: $err"
    failed=$((failed + 1))
  fi
}

if "$trainer" --help | grep -q "^usage:"; then
  passed=$((passed + 1))
else
  echo "FAIL --help prints no usage"
  failed=$((failed + 1))
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf 'not an idx file' >"$scratch/train-images-idx3-ubyte"

expect_error "batch 0" --batch 0
expect_error "negative epochs" --epochs -1
expect_error "learning rate not a number" --lr fast
expect_error "unknown option" --frobnicate 3
expect_error "missing value" --hidden
expect_error "bad layers" --layers 784-10-3
expect_error "missing data" --data-dir "$scratch/nowhere"
expect_error "corrupt data" --data-dir "$scratch"
# With a GPU this trains until the loss overflows and must stop on it; without one it stops at
# the GPU check. Either way: one line and a non-zero exit.
expect_error "diverging loss" --lr 1000 --hidden 8 --epochs 1 --out-dir "$scratch/runs"

echo "cli: $passed passed, $failed failed"
[ $failed -eq 0 ]
