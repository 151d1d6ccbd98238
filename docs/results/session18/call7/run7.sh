#!/usr/bin/env bash
# Session 18, call 7: where the step goes at hidden 1024, now on the grid kernel: the phase clock
# (tools/phase_clock.py) of main (33882b2) at batch 32 and 256, two runs each.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/p"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$OUT/gpu.txt"
dir=/tmp/phase_main
mkdir -p "$dir" && tar -cf - --exclude='./build*' --exclude=./.device --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
  ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/build_phase.txt" 2>&1 || echo "phase build failed"
echo "=== phases ($(date -u +%T))"
for shape in 32x1024 256x1024; do
  for rep in 1 2; do
    "$dir/b/chapters/train_10_persistent_step" --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/phase_runs_$rep" >"$OUT/p/phase_${shape}_$rep.txt" 2>&1 || echo "phase run failed"
    echo "$shape rep $rep: $(grep phases "$OUT/p/phase_${shape}_$rep.txt" | tail -1)"
  done
done
tar -czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
echo "=== end ($(date -u +%T))"
