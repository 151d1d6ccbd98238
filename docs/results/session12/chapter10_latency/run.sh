#!/usr/bin/env bash
# Session 12, call C: chapter 10's latency cuts, one at a time, each against the one before in one
# ab_train call: main -> v1 (the epilogue's inputs loaded before the K loop) -> v2 (+ the labels
# before the output tile) -> v3 (+ the next step's images prefetched into L2); then the per-phase
# clock of main and v3 (phase_patch.py), once each at batch 32, hidden 128.
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv | tee "$OUT/gpu.csv"
date -u
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
patch_dir=docs/results/session12/chapter10_latency
phase_tree() {  # name, source tree: a copy with the phase clock, built
  local dir=/tmp/phase_$1
  mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 $patch_dir/phase_patch.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree main . & phase_tree v3 ab_v3 &
n=0
for pair in ".:ab_v1" "ab_v1:ab_v2" "ab_v2:ab_v3"; do
  n=$((n + 1))
  echo "=== ab$n: ${pair%%:*} -> ${pair##*:} ($(date -u +%T))"
  tools/ab_train.sh "$OUT/ab$n" 10_persistent_step "${pair%%:*}" "${pair##*:}" 32x128 256x128 32x512 2>&1 | tail -n 5
  rm -rf "$OUT/ab$n"/build_*
done
wait
echo "=== phases ($(date -u +%T))"
for v in main v3; do
  for rep in 1 2; do
    /tmp/phase_$v/b/chapters/train_10_persistent_step --batch 32 --hidden 128 --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/phase_runs_$v$rep" >"$OUT/phase_$v$rep.txt" 2>&1 || echo "phase run $v failed"
    echo "$v rep $rep: $(grep phases "$OUT/phase_$v$rep.txt" | tail -1)"
  done
done
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab1 ab2 ab3 && rm -rf "$OUT"/ab1 "$OUT"/ab2 "$OUT"/ab3
echo "=== end ($(date -u +%T))"
