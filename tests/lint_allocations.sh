#!/usr/bin/env bash
# Device memory is allocated in one place only, the arena (common/device_arena.cu), before
# training starts. Tests and benchmarks may allocate their own buffers; trainers and kernels may not.
#   tests/lint_allocations.sh SOURCE_ROOT
set -u
cd "$1" || exit 1
offenders=$(grep -rlE 'cuda(Malloc|Free|MallocManaged|MallocAsync|FreeAsync)[[:space:]]*\(' common chapters |
  grep -v '^common/device_arena\.cu$')
if [ -n "$offenders" ]; then
  echo "FAIL device allocations outside common/device_arena.cu:"
  echo "$offenders"
  exit 1
fi
echo "lint_allocations: 1 passed, 0 failed"
