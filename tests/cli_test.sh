#!/usr/bin/env bash
# The trainer's command line from the outside: --help works, and every bad input ends with one
# line on stderr that starts with "error:" and a non-zero exit status. Runs with or without a GPU.
#   tests/cli_test.sh build/chapters/train_NN_name
set -u
trainer=$1
failed=0
passed=0

expect_error_saying() {  # expect_error_saying WHAT TEXT ARGS...: the error line holds TEXT
  local what=$1 text=$2
  shift 2
  local err status lines
  err=$("$trainer" "$@" 2>&1 >/dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ $status -ne 0 ] && [ "$lines" -eq 1 ] && [[ $err == error:* ]] && [[ $err == *"$text"* ]]; then
    passed=$((passed + 1))
  else
    echo "FAIL $what: exit $status, stderr: $err"
    failed=$((failed + 1))
  fi
}

expect_error() {  # expect_error WHAT ARGS...
  expect_error_saying "$1" "" "${@:2}"
}

# A valid dataset of 3 training and 2 test images: IDX headers (magic, then each dimension as a
# big-endian uint32) and pixel bytes that are not all equal (load_dataset refuses constant images).
write_tiny_dataset() {  # write_tiny_dataset DIR
  mkdir -p "$1"
  local split count
  for split in train:3 t10k:2; do
    count=${split#*:}
    {
      printf "\x00\x00\x08\x03\x00\x00\x00\x0$count\x00\x00\x00\x1c\x00\x00\x00\x1c"
      yes $'\x01\x80' | head -c $((count * 784))
    } >"$1/${split%:*}-images-idx3-ubyte"
    {
      printf "\x00\x00\x08\x01\x00\x00\x00\x0$count"
      printf '\x07\x00\x09' | head -c "$count"  # labels are bytes 0-9
    } >"$1/${split%:*}-labels-idx1-ubyte"
  done
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
# The training split's size comes from its files, so the check runs on a dataset of 3 images; it
# comes before the GPU is looked for, so it holds on a machine without one too.
write_tiny_dataset "$scratch/tiny"
expect_error_saying "batch larger than the training set" \
  "--batch 4 is larger than the 3 training images" --batch 4 --data-dir "$scratch/tiny"
# So is a model that --launch persistent cannot take: every chapter before 16 has no persistent
# step, chapters 16-19 take hidden widths up to 1024.
expect_error_saying "persistent launch of a model it cannot take" "--launch persistent: " \
  --launch persistent --hidden 4096 --batch 2 --data-dir "$scratch/tiny"
# With a GPU this trains until the loss overflows and must stop on it; without one it stops at
# the GPU check. Either way: one line and a non-zero exit.
expect_error "diverging loss" --lr 1000 --hidden 8 --epochs 1 --out-dir "$scratch/runs"

echo "cli: $passed passed, $failed failed"
[ $failed -eq 0 ]
