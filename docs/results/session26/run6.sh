#!/usr/bin/env bash
# Session 26, call 6: chapter 02 with 16 x 8 thread tiles, 128 threads and K steps of 64 (the working
# tree): its GEMM benchmark (every case, cuBLAS in the same process), its default model, Nsight
# Compute on the forward 4096^3 product, registers; then suites 02 and 03.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c6; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
git log --oneline -1 | tee -a "$o/gpu.txt"; git status --short | grep -v '^??' | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_02_smem_tiling chapters/train_02_smem_tiling >"$o/build.txt" 2>&1; echo "ninja 02 exit $? ($(date -u +%T))"
( nice -n 19 ninja -C build -j 12 tests/test_gemm_02_smem_tiling tests/test_training_02_smem_tiling tests/test_gemm_03_mma_sync tests/test_training_03_mma_sync chapters/train_03_mma_sync >"$o/build_tests.txt" 2>&1; echo "ninja tests exit $? ($(date -u +%T))" >>"$o/build_tests.txt" ) &
echo "=== bench ($(date -u +%T))"
build/bench/bench_gemm_02_smem_tiling --csv "$o/gemm_02_smem_tiling.csv" >"$o/bench_log.txt" 2>&1; echo "bench exit $?"
grep -E "^square" "$o/bench_log.txt"
echo "=== train ($(date -u +%T))"
build/chapters/train_02_smem_tiling --out-dir "$o/runs" >"$o/train_log.txt" 2>&1; echo "train exit $?"; tail -3 "$o/train_log.txt"
echo "=== ncu ($(date -u +%T))"
tools/ncu_forward.sh "$o/ncu_out" 02 >"$o/ncu_log.txt" 2>&1; echo "ncu exit $?"
tar -xzf "$o/ncu_out/ncu.tar.gz" -C "$o/ncu_out" && python3 tools/ncu_summary.py "$o/ncu_out/ncu" 02 | tee "$o/ncu_summary.txt"
grep -E '"(smsp__inst_executed.sum|smsp__sass_thread_inst_executed_op_ffma_pred_on.sum|sm__inst_executed_pipe_fma.sum|smsp__inst_executed_op_shared_ld.sum)"' "$o/ncu_out/ncu/02.raw.csv" | head -2
python3 - "$o/ncu_out/ncu/02.raw.csv" <<'PY' | tee "$o/ncu_counts.txt"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, units, vals = rows[0], rows[1], rows[2]
for key in ["gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_alu.sum",
            "sm__inst_executed_pipe_lsu.sum", "sm__issue_active.avg.pct_of_peak_sustained_elapsed", "launch__registers_per_thread",
            "smsp__inst_executed_op_shared_ld.sum", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__inst_executed_pipe_fmaheavy.sum", "sm__inst_executed_pipe_fmalite.sum"]:
    if key in head:
        i = head.index(key); print(f"{key} = {vals[i]} {units[i]}")
PY
rm -f "$o"/ncu_out/ncu/*.ncu-rep
cuobjdump -res-usage build/bench/bench_gemm_02_smem_tiling 2>&1 | grep -A1 "_gemm_kernel" | tee "$o/res_usage_02.txt"
cuobjdump -sass build/bench/bench_gemm_02_smem_tiling >"$o/sass_02.txt"; echo "$(grep -cE '\bFFMA' "$o/sass_02.txt") FFMA, $(grep -cE 'HADD2\.F32' "$o/sass_02.txt") HADD2.F32, $(grep -cE '\bLDS' "$o/sass_02.txt") LDS, $(grep -cE '\bBAR\.SYNC' "$o/sass_02.txt") BAR.SYNC in the binary"
gzip "$o/sass_02.txt"
wait; tail -1 "$o/build_tests.txt"
echo "=== tests ($(date -u +%T))"
left=$((590 - $(date +%s) + start))
timeout $left meson test -C build --no-rebuild --suite 02_smem_tiling --suite 03_mma_sync --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build/meson-logs/testlog.txt "$o/testlog.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c6.tgz c6
