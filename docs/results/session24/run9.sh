#!/usr/bin/env bash
# Session 24, call 9: Nsight Compute on the weight gradient 8192 x 8192 x 32 through the SGD
# epilogue, chapter 09 before (chapter 06's kernel on chapter 08's path) and with the weight update:
# DRAM throughput and bytes, duration, occupancy, shared-memory bank conflicts. Clocks left alone.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c9; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
flags=(-O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -DCHAPTER_NAME='"09_swap_ab_split_k"' -DCHAPTER_NAMESPACE=swap_ab_split_k)
nvcc "${flags[@]}" -Ichapters/09_swap_ab_split_k -Ichapters -Icommon common/chapter.cu common/epilogue.cu exp/s24/time_sgd.cu -o /tmp/t_new &
nvcc "${flags[@]}" -Iexp/s24/old09/09_swap_ab_split_k -Iexp/s24/old09 -Ichapters -Icommon common/chapter.cu common/epilogue.cu exp/s24/time_sgd.cu -o /tmp/t_old
wait
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum
echo "=== new ($(date -u +%T))"
ncu --clock-control none --kernel-name regex:weight_update_kernel --launch-skip 3 --launch-count 1 --metrics $m /tmp/t_new 8192 8192 32 >"$o/ncu_new.txt" 2>&1; echo "exit $?"
grep -E "weight_update|gpu__time|dram__|sm__warps|launch__|l1tex__|smsp__inst" "$o/ncu_new.txt"
echo "=== old ($(date -u +%T))"
ncu --clock-control none --kernel-name regex:fused_gemm_kernel --launch-skip 3 --launch-count 1 --metrics $m /tmp/t_old 8192 8192 32 >"$o/ncu_old.txt" 2>&1; echo "exit $?"
grep -E "fused_gemm|gpu__time|dram__|sm__warps|launch__|l1tex__|smsp__inst" "$o/ncu_old.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c9.tgz c9
