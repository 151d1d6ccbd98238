#!/usr/bin/env bash
# Session 29, call 1 (issue 16), on 7f0928f: (1) the comparison grid rerun with the weight update at
# K <= 256 (chapters 08, 09, 10, train_cublas, PyTorch eager and CUDA graph; batch 32 and 256,
# hidden 128 to 8192), as session 27's run6.sh ran it; (2) the plain store of the weight gradients
# at K = 256 on the weight update's kernel (VS: weight_update_takes and launch_weight_update with
# the store allowed kMaxUpdateKTiles K tiles) against the committed tree and cuBLAS, 3 processes
# each in rotating order (tools/tile_sweep/time_gemm.cu); (3) compute-sanitizer's four tools on
# chapter 09's GEMM test and trainer (the multi-K-tile weight update, never sanitized yet).
# Call 1 ran it with a wrong ninja target (nothing built: only (2) ran); call 2 with the target
# fixed and SKIP_STORE=1.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/c1
mkdir -p "$o/cmp" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
git log --oneline -1 | tee -a "$o/gpu.txt"
[ -f build/build.ninja ] || meson setup build >/dev/null
source tools/tile_sweep/build.sh
w=/tmp/w1; rm -rf $w; mkdir -p $w
( mkdir -p $w/main && build_gemm_timer chapters/09_swap_ab_split_k 09_swap_ab_split_k swap_ab_split_k $w/main/t >$w/main/build.txt 2>&1 || echo "build main failed" ) &
( mkdir -p $w/cublas && build_gemm_timer bench/cublas cublas cublas $w/cublas/t -lcublas >$w/cublas/build.txt 2>&1 || echo "build cublas failed" ) &
(
  d=$w/VS; mkdir -p $d/09_swap_ab_split_k
  cp chapters/09_swap_ab_split_k/gemm.cuh $d/; cp chapters/09_swap_ab_split_k/*.cuh $d/09_swap_ab_split_k/
  f=$d/09_swap_ab_split_k/weight_update.cuh
  sed -i 's/const int max_k = (kKind == EpilogueKind::kSgd ? kMaxUpdateKTiles : 1) \* wgmma::kTileK;/const int max_k = kMaxUpdateKTiles * wgmma::kTileK;/; s/if (kKind != EpilogueKind::kSgd || k_tiles == 1) {/if (k_tiles == 1) {/' $f
  sed -i '/^void launch_weight_update(/,/^}/ s/if constexpr (kKind == EpilogueKind::kSgd) {/if constexpr (true) {/' $f
  grep -c 'kMaxUpdateKTiles \* wgmma::kTileK;\|if (k_tiles == 1) {\|if constexpr (true) {' $f >$d/sed_count.txt
  build_gemm_timer $d 09_swap_ab_split_k swap_ab_split_k $d/t >$d/build.txt 2>&1 || echo "build VS failed"
) &
ninja -C build chapters/train_08_warp_specialized chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step bench/train_cublas tests/test_gemm_09_swap_ab_split_k >"$o/build.txt" 2>&1; tail -1 "$o/build.txt"
wait
echo "VS sed lines (want 3): $(cat $w/VS/sed_count.txt)"
echo "built ($(date -u +%T))"
echo "=== grid ($(date -u +%T))"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >"$o/cmp/gpu.txt"; date -u >>"$o/cmp/gpu.txt"
timeout 330 python3 bench/compare.py --out "$o/cmp" --build-dir build \
  --implementations 08_warp_specialized,09_swap_ab_split_k,10_persistent_step,cublas \
  --data-dir data/mnist --pytorch-variants pytorch_eager,pytorch_cudagraph 2>&1 | tee "$o/cmp/log.txt" | tail -n 24
python3 - "$o/cmp" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
keys = ["chapter", "layers", "batch", "launch", "kernels_per_step", "ms_per_step",
        "floor_ms_per_step", "sm_clock_mhz", "date"]
rows = []
for path in sorted(glob.glob(os.path.join(out, "runs", "*", "b*_h*", "*_epochs.csv"))):
    last = list(csv.DictReader(open(path)))[-1]
    rows.append({k: last[k] for k in keys})
rows.sort(key=lambda r: (r["chapter"], int(r["batch"]), int(r["layers"].split("-")[1])))
with open(os.path.join(out, "steps_last_epoch.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, keys)
    w.writeheader()
    w.writerows(rows)
print(f"steps_last_epoch.csv: {len(rows)} rows")
PY
rm -rf "$o/cmp/runs"
: skip <<"SKIP"
[ -n "${SKIP_STORE:-}" ] || {
echo "=== store at K = 256 ($(date -u +%T))"
shapes="8192 784 256 TN 4096 784 256 TN 2048 784 256 TN 1024 784 256 TN 8192 8192 256 TN 4096 4096 256 TN 2048 2048 256 TN 1024 1024 256 TN"
names="cublas main VS"
for r in 0 1 2; do
  for n in $names; do
    echo "== $n r$r $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/times.txt"
    $w/$n/t $shapes >>"$o/times.txt" 2>&1 || echo "$n failed" >>"$o/times.txt"
  done
  names="$(echo $names | cut -d' ' -f2-) $(echo $names | cut -d' ' -f1)"
done
cat "$o/times.txt"
}
SKIP
echo "=== sanitizer ($(date -u +%T))"
left=$((590 - $(date +%s) + start))
SANITIZE_ONLY='^[a-z]+_(09_swap_ab_split_k|train_09_swap_ab_split_k|train_b32_09_swap_ab_split_k)$' SANITIZE_TIMEOUT=$((left - 10)) \
  timeout $left tools/sanitize.sh build "$o/sanitizer" >"$o/sanitizer.txt" 2>&1; echo "sanitize exit $?"; tail -14 "$o/sanitizer.txt"
find "$o/sanitizer" -name "*.csv" -delete 2>/dev/null
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
