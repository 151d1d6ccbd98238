#!/usr/bin/env bash
# Session 26, call 9: Nsight Compute on chapter 10's two persistent kernels, one launch of 20 steps
# each: the on-chip kernel (batch 32, hidden 128) and the grid kernel (batch 256, hidden 128).
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c9; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build chapters/train_10_persistent_step >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
run() {  # NAME KERNEL_REGEX TRAINER_ARGS...
  local name=$1 regex=$2; shift 2
  timeout 150 ncu --clock-control none --kernel-name regex:"$regex" --launch-count 1 --set full -o "$o/$name" \
    build/chapters/train_10_persistent_step --epochs 1 --max-steps 20 --no-eval --out-dir /tmp/runs_$name "$@" >"$o/$name.stdout" 2>&1
  echo "ncu $name: $? ($(date -u +%T))"
  ncu --import "$o/$name.ncu-rep" --print-summary none >"$o/$name.txt" 2>&1
  ncu --import "$o/$name.ncu-rep" --page raw --csv >"$o/$name.raw.csv" 2>&1
  python3 tools/ncu_summary.py "$o" "$name" 2>&1 | tee "$o/${name}_summary.txt"
  grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|Grid Size|Block Size|Cluster Size" "$o/$name.txt" | head -12
  rm -f "$o/$name.ncu-rep"
}
run on_chip_b32_h128 on_chip_training --hidden 128 --batch 32
run grid_b256_h128 persistent_training --hidden 128 --batch 256
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c9.tgz c9
