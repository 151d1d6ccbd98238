#!/usr/bin/env bash
# Session 19, call 3: where the warps wait, by SASS line: Nsight Compute's warp stall samples of
# the persistent kernel at batch 32, hidden 1024, HEAD (ab_base/) and the ring across tiles
# (working tree), 300 steps each; the top lines, with the SASS around them.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/n"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$OUT/n/gpu.txt"
plain() {
  local dir=/tmp/plain_$1
  [ -x "$dir/b/chapters/train_10_persistent_step" ] && return
  rm -rf "$dir"; mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  meson setup "$dir/b" "$dir" >/dev/null && ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/n/build_$1.txt" 2>&1 || echo "build $1 failed"
}
plain base ab_base & plain ring . &
wait
for v in base ring; do
  echo "=== ncu $v ($(date -u +%T))"
  timeout 120 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --import-source yes --clock-control none \
    -k regex:persistent_training --launch-count 1 -o "$OUT/n/$v" /tmp/plain_$v/b/chapters/train_10_persistent_step \
    --batch 32 --hidden 1024 --epochs 1 --max-steps 300 --no-eval --data-dir data/mnist --out-dir /tmp/ncu_runs_$v >"$OUT/n/run_$v.txt" 2>&1 || echo "ncu $v failed"
  ncu -i "$OUT/n/$v.ncu-rep" --page source --csv --print-source sass >"/tmp/src_$v.csv" 2>&1
  python3 exp/s19/top_stalls.py /tmp/src_$v.csv 45 >"$OUT/n/top_$v.txt" 2>&1
  head -50 "$OUT/n/top_$v.txt" | cut -c1-150
  grep -E "Duration|Warp Cycles Per Issued|Stall Barrier|Stall Long|Stall Wait|Stall Short" <(ncu -i "$OUT/n/$v.ncu-rep" --page details --print-details all 2>&1) | head -8
  gzip -c /tmp/src_$v.csv >"$OUT/n/src_$v.csv.gz"
  rm -f "$OUT/n/$v.ncu-rep"
done
tar -czf "$OUT/n.tar.gz" -C "$OUT" n && rm -rf "$OUT/n"
echo "=== end ($(date -u +%T))"
