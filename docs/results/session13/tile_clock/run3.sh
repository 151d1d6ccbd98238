#!/usr/bin/env bash
# Session 13, call 3: the tile and barrier clocks (tile_clock_patch.py) with the phase clock
# (tools/phase_clock.py) on HEAD's chapter 10, at batch 32 and 256, hidden 128.
export PATH=/usr/local/cuda/bin:$PATH
echo "=== GPU ($(date -u +%T))"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
mkdir -p data/mnist && for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
dir=/tmp/tile_clock
mkdir -p $dir && tar -cf - --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./data/mnist . | tar -xf - -C $dir
python3 docs/results/session13/tile_clock/tile_clock_patch.py $dir && python3 tools/phase_clock.py $dir &&
  meson setup $dir/b $dir >/dev/null && ninja -C $dir/b chapters/train_10_persistent_step >"$OUT/build.txt" 2>&1 || echo "build failed"
for rep in 1 2; do
  for shape in "32 128" "256 128" "32 512"; do
    set -- $shape
    echo "=== b$1 h$2 rep $rep ($(date -u +%T))"
    $dir/b/chapters/train_10_persistent_step --batch $1 --hidden $2 --epochs 2 --no-eval --data-dir data/mnist \
      --out-dir /tmp/runs >/tmp/log.txt 2>&1 || echo "run failed"
    grep -E "^tile|^barrier|^phases" /tmp/log.txt | tail -n 9
  done
done
echo "=== end ($(date -u +%T))"
