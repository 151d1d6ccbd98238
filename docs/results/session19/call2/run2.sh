#!/usr/bin/env bash
# Session 19, call 2: the ring across tiles, its integer divisions taken out of the copies' path
# (working tree), and with the epilogue's inputs two tiles ahead (ab_ring2/), against HEAD
# (ab_base/): the phase clock at batch 32 and 256, hidden 1024; Nsight Compute (full set) on
# HEAD's persistent kernel at batch 32, hidden 1024; tools/ab_train.sh of the three.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
mkdir -p data/mnist "$OUT/p" "$OUT/n"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$OUT/gpu.txt"
phase_tree() {
  local dir=/tmp/phase2_$1
  rm -rf "$dir"; mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
plain_base() {
  rm -rf /tmp/plain_base; mkdir -p /tmp/plain_base && tar -cf - -C ab_base --exclude='./build*' . | tar -xf - -C /tmp/plain_base
  meson setup /tmp/plain_base/b /tmp/plain_base >/dev/null && ninja -C /tmp/plain_base/b chapters/train_10_persistent_step >"$OUT/build_plain.txt" 2>&1 || echo "plain build failed"
}
phase_tree base ab_base & phase_tree ring . & phase_tree ring2 ab_ring2 & plain_base &
wait
echo "=== phases ($(date -u +%T))"
for shape in 32x1024 256x1024; do
  for rep in 1 2; do
    for v in base ring ring2; do
      /tmp/phase2_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
        --data-dir data/mnist --out-dir "/tmp/phase_runs_$v$rep" >"$OUT/p/phase_${shape}_$v$rep.txt" 2>&1 || echo "phase run $v failed"
      echo "$shape $v rep $rep: $(grep phases "$OUT/p/phase_${shape}_$v$rep.txt" | tail -1)"
    done
  done
done
tar -czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
echo "=== ncu ($(date -u +%T))"
timeout 150 ncu --set full --import-source yes --clock-control none -k regex:persistent_training --launch-count 1 \
  -o "$OUT/n/base_32x1024" /tmp/plain_base/b/chapters/train_10_persistent_step --batch 32 --hidden 1024 --epochs 1 \
  --max-steps 300 --no-eval --data-dir data/mnist --out-dir /tmp/ncu_runs >"$OUT/n/ncu_run.txt" 2>&1 || echo "ncu failed"
tail -3 "$OUT/n/ncu_run.txt"
ncu -i "$OUT/n/base_32x1024.ncu-rep" --page details --print-details all >"$OUT/n/details.txt" 2>&1
ncu -i "$OUT/n/base_32x1024.ncu-rep" --page raw --csv >"$OUT/n/raw.csv" 2>&1
ncu -i "$OUT/n/base_32x1024.ncu-rep" --page source --csv --print-source sass >"$OUT/n/source_sass.csv" 2>"$OUT/n/source_err.txt" || ncu --help | grep -i -A3 "print-source" >"$OUT/n/help_source.txt"
grep -E "Duration|DRAM Throughput|L2 Hit Rate|Memory Throughput|L1/TEX Hit|Compute \(SM\) Throughput|Warp Cycles Per Issued|Achieved Occupancy|Stall" "$OUT/n/details.txt" | head -40
ls -la "$OUT/n"
tar -czf "$OUT/n.tar.gz" -C "$OUT" n && rm -rf "$OUT/n"
left=$((590 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=2 timeout $((left - 20)) tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . ab_ring2 32x1024 256x1024 2>&1 | tail -n 6
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
cp "$OUT/ab/ab_summary.csv" "$OUT/ab/ab.csv" "$OUT/" 2>/dev/null
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "=== end ($(date -u +%T))"
