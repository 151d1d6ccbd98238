#!/usr/bin/env bash
# Session 14, call 1: chapter 10 variants (exp/V/*.cuh over the tree) by the phase clock, ncu of
# HEAD's persistent kernel, then the A/B of the combined variant against HEAD.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/r"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
date -u; nvidia-smi --query-gpu=name,clocks.sm,driver_version --format=csv,noheader
tree() {  # name, [variant dir]
  local dir=/tmp/t_$1
  mkdir -p "$dir" && tar -cf - --exclude=./exp --exclude=./.device --exclude=./data/mnist . | tar -xf - -C "$dir"
  [ -n "${2:-}" ] && cp exp/$2/*.cuh "$dir/chapters/10_persistent_step/"
}
tree head; tree abB PLB
for v in base P L B PLB; do
  tree ph_$v $([ $v = base ] || echo $v)
  python3 tools/phase_clock.py /tmp/t_ph_$v
done
for d in head abB ph_base ph_P ph_L ph_B ph_PLB; do
  (meson setup /tmp/t_$d/b /tmp/t_$d >/dev/null && ninja -C /tmp/t_$d/b chapters/train_10_persistent_step >"$OUT/r/build_$d.txt" 2>&1 || echo "build $d failed") &
done
wait; date -u
cuobjdump -sass /tmp/t_head/b/chapters/train_10_persistent_step | awk '/Function : .*persistent_training/{p=1} p&&/Function : /&&!/persistent/{p=0} p' >"$OUT/r/sass_persistent.txt"
wc -l "$OUT/r/sass_persistent.txt"
echo "=== phases"
for rep in 1 2; do for v in base P L B PLB; do
  /tmp/t_ph_$v/b/chapters/train_10_persistent_step --batch 32 --hidden 128 --epochs 2 --no-eval \
    --data-dir data/mnist --out-dir /tmp/pr_$v$rep >"$OUT/r/phase_$v$rep.txt" 2>&1 || echo "phase $v failed"
  echo "$v $rep: $(grep phases "$OUT/r/phase_$v$rep.txt" | tail -1)"
done; done
echo "=== ncu ($(date -u +%T))"
timeout 200 ncu --clock-control none -k regex:persistent --launch-count 1 --set full --import-source yes \
  -o "$OUT/r/ncu_head" /tmp/t_head/b/chapters/train_10_persistent_step --batch 32 --hidden 128 --epochs 1 \
  --no-eval --data-dir data/mnist --out-dir /tmp/ncu_run >"$OUT/r/ncu_log.txt" 2>&1; echo "ncu rc $?"
tail -3 "$OUT/r/ncu_log.txt"
ncu -i "$OUT/r/ncu_head.ncu-rep" --page details >"$OUT/r/ncu_details.txt" 2>&1
ncu -i "$OUT/r/ncu_head.ncu-rep" --page raw --csv >"$OUT/r/ncu_raw.csv" 2>&1
ncu -i "$OUT/r/ncu_head.ncu-rep" --page source --csv --print-source sass >"$OUT/r/ncu_source.csv" 2>&1 || ncu --help | grep -i -A2 'source' >"$OUT/r/ncu_help.txt"
grep -i -E "stall|warp cycles|No Instruction|issued" "$OUT/r/ncu_details.txt" | head -40
tar -czf "$OUT/r1.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== ab ($(date -u +%T))"
mkdir -p "$OUT/ab" && ln -s /tmp/t_head/b "$OUT/ab/build_a" && ln -s /tmp/t_abB/b "$OUT/ab/build_b"
timeout 250 tools/ab_train.sh "$OUT/ab" 10_persistent_step /tmp/t_head /tmp/t_abB 32x128 256x128 32x512 2>&1 | tail -n 6
rm -rf "$OUT"/ab/build_*; tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "=== end ($(date -u +%T))"
