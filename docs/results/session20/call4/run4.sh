#!/usr/bin/env bash
# Session 20, call 4: where the split tree's time goes, by the phase clock alone, at batch 32,
# hidden 1024 and batch 256, hidden 512. Trees: base (28d713b, ab_base/); split (working tree);
# nosplit (working tree, split_k_of's plan never applied: the code there, never run); nosum (nosplit,
# and the partial-sum call compiled out); floor (base, every tile and bias group skipped: the phases'
# barriers and loops only); onek (base, every product cut to its first K tile). Each tree is
# patched by tools/phase_clock.py; the printouts in $OUT/s4.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s4
mkdir -p data/mnist "$o/p"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
copy() {  # copy NAME SOURCE: the tree at /tmp/p4_NAME
  rm -rf /tmp/p4_$1; mkdir -p /tmp/p4_$1
  tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C /tmp/p4_$1
}
copy base ab_base; copy split .; copy nosplit .; copy nosum .; copy floor ab_base; copy onek ab_base
sed -i 's/x.split = split_k_of(/(void)split_k_of(/' /tmp/p4_nosplit/chapters/10_persistent_step/steps.cuh /tmp/p4_nosum/chapters/10_persistent_step/steps.cuh
sed -i 's/if (splits > 1 \&\& !sum_splits_if_last/if (false \&\& !sum_splits_if_last/' /tmp/p4_nosum/chapters/10_persistent_step/tile.cuh
sed -i 's/^__device__ void multiply_tile(const Product& x, int tile, uint8_t\* smem) {/&\n  if (x.p.m >= 0) return;/' /tmp/p4_floor/chapters/10_persistent_step/tile.cuh
sed -i '/^__device__ inline void bias_sgd(const Model& m/,/{$/ s/{$/{\n  if (rows >= 0) return;/' /tmp/p4_floor/chapters/10_persistent_step/steps.cuh
sed -i 's/  const int k_tiles = (p.k + kTileK - 1) \/ kTileK;/  const int k_tiles = 1;/' /tmp/p4_onek/chapters/10_persistent_step/tile.cuh
for v in nosplit nosum floor onek; do diff -r /tmp/p4_$v/chapters /tmp/p4_$([ $v = nosplit ] || [ $v = nosum ] && echo split || echo base)/chapters | sed "s/^/$v: /" | head -8; done
for v in base split nosplit nosum floor onek; do
  ( python3 tools/phase_clock.py /tmp/p4_$v && meson setup /tmp/p4_$v/b /tmp/p4_$v >/dev/null &&
    ninja -C /tmp/p4_$v/b chapters/train_10_persistent_step >"$o/build_$v.txt" 2>&1 || echo "build $v failed" ) &
done
wait
echo "=== phases ($(date -u +%T))"
for shape in 32x1024 256x512; do
  for v in base split nosplit nosum floor onek base split; do
    /tmp/p4_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/p4_runs_$v" >>"$o/p/phase_${shape}_$v.txt" 2>&1 || echo "run $v $shape failed"
    echo "$shape $v: $(grep phases "$o/p/phase_${shape}_$v.txt" | tail -1)"
  done
done
tar -czf "$OUT/s4.tar.gz" -C "$OUT" s4 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
