#!/usr/bin/env bash
# Session 24, call 10: the weight update's machine code (cuobjdump -sass) as committed and with each
# of the three memory-order mutants that no test caught, to find what a static check can read.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c10; mkdir -p "$o"
flags=(-O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -DCHAPTER_NAME='"09_swap_ab_split_k"' -DCHAPTER_NAMESPACE=swap_ab_split_k)
f=chapters/09_swap_ab_split_k/weight_update.cuh
for v in main no_fence no_barrier no_wait; do
  rm -rf /tmp/$v && mkdir -p /tmp/$v/09_swap_ab_split_k && cp chapters/09_swap_ab_split_k/*.cuh /tmp/$v/09_swap_ab_split_k/
done
python3 - <<'PY'
import re
f = "/tmp/{}/09_swap_ab_split_k/weight_update.cuh"
cuts = {"no_fence": ("  fence_proxy_async();\n  __syncthreads();\n  if (threadIdx.x == 0) {  // chapter 08's", "  __syncthreads();\n  if (threadIdx.x == 0) {  // chapter 08's"),
        "no_barrier": ("  fence_proxy_async();\n  __syncthreads();\n  if (threadIdx.x == 0) {  // chapter 08's", "  fence_proxy_async();\n  if (threadIdx.x == 0) {  // chapter 08's"),
        "no_wait": ("warp_specialized::bulk_wait_all();", ";")}
for v, (a, b) in cuts.items():
    t = open(f.format(v)).read(); assert t.count(a) == 1, v; open(f.format(v), "w").write(t.replace(a, b))
PY
for v in main no_fence no_barrier no_wait; do
  nvcc "${flags[@]}" -I/tmp/$v/09_swap_ab_split_k -I/tmp/$v -Ichapters -Icommon -cubin common/chapter.cu -o /tmp/$v.cubin 2>"$o/build_$v.txt" &
done
wait
for v in main no_fence no_barrier no_wait; do
  cuobjdump -sass /tmp/$v.cubin | awk '/Function : .*weight_update_kernel/{p=1} p&&/Function : / && !/weight_update/{p=0} p' > "$o/sass_$v.txt"
  echo "$v: $(wc -l < "$o/sass_$v.txt") lines; $(grep -cE 'UTMASTG|UTMALDG|FENCE|BAR\.|SYNCS|UTMACMDFLUSH|DEPBAR' "$o/sass_$v.txt") sync/tma lines"
  grep -nE "UTMASTG|FENCE|BAR\.|DEPBAR|UTMACMDFLUSH|MEMBAR|EXIT" "$o/sass_$v.txt" | sed "s/ \+/ /g" | cut -c1-90 | tail -n 12
done
cd $OUT && tar czf c10.tgz c10
