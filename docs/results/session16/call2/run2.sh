#!/usr/bin/env bash
# Session 16, call 2: call 1's bound again, with more processes: HEAD (old) against alive only, 10 rounds.
# Call 1's header, for the trees: is session 15's "no epilogue" bound real? HEAD (old) against two trees whose
# consumers store nothing: dead (session 15's call 4 patch: the accumulators are never read after
# the main loop) and alive (each thread sums its accumulators and stores the sum only if it has an
# impossible bit pattern, so every wgmma's result is used). The SASS of each says how many HGMMA
# instructions ptxas kept; 4 rounds of both orders of the squares, trees rotating, with
# nvidia-smi sampling clocks, power and throttle reasons every 100 ms.
export PATH=/usr/local/cuda/bin:$PATH
D=docs/results/session16/call1
nvidia-smi -q -d POWER | grep -iE 'limit|draw' | head -12
T=$PWD/build-s16
mkdir -p "$OUT/r/old" "$OUT/r/alive" $T
for v in old alive; do
  rm -rf $T/$v && mkdir -p $T/$v
  tar -cf - --exclude=./.device --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/$v
done
python3 $D/alive.py $T/alive/chapters/08_warp_specialized/gemm.cuh
for v in alive; do sed -i 's/if (!(relative < 1e-4)) {/if (false) {/' $T/$v/bench/gemm_bench.cu; done
for v in old alive; do
  (meson setup $T/$v/b $T/$v >/dev/null 2>&1; ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized >"$OUT/r/build_$v.txt" 2>&1 || { echo "build $v failed"; tail "$OUT/r/build_$v.txt"; }) &
done
wait
for v in old alive; do
  cuobjdump -sass $T/$v/b/bench/bench_gemm_08_warp_specialized > "$OUT/r/sass_$v.txt"
  echo "$v: HGMMA per kStore kernel: $(awk '/Function :/{if (f) print n; f=($0 ~ /warp_specialized_gemm_kernel/ && $0 ~ /EpilogueKindE0/); n=0} /HGMMA/{n++} END{if (f) print n}' "$OUT/r/sass_$v.txt" | tr '\n' ' ')"
  echo "$v: HGMMA in the whole binary: $(grep -c HGMMA "$OUT/r/sass_$v.txt")"
done
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > "$OUT/r/smi.csv" 2>&1 &
SMI=$!
order=(old alive)
for round in $(seq 1 10); do
  for first in chapter cublas; do
    flag=()
    [ $first = cublas ] && flag=(--cublas-first)
    for v in "${order[@]}"; do
      echo "$(date -u +%T.%N) start $v $round $first" >> "$OUT/r/timeline.txt"
      timeout 60 $T/$v/b/bench/bench_gemm_08_warp_specialized --only square "${flag[@]}" \
        --csv "$OUT/r/$v/squares_${round}_$first.csv" >>"$OUT/r/bench_$v.txt" 2>&1 || { echo "bench $v round $round failed"; tail -3 "$OUT/r/bench_$v.txt"; }
    done
    order=("${order[@]:1}" "${order[0]}")
  done
done
kill $SMI
for v in old alive; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
echo "power and clock while each tree ran (median of the 100 ms samples):"
python3 - "$OUT/r" <<'PY'
import csv, sys, statistics, datetime
r = sys.argv[1]
events = [l.split() for l in open(f"{r}/timeline.txt")]
def t(s): return datetime.datetime.strptime(s[:15], "%H:%M:%S.%f").time()
rows = []
for row in csv.reader(open(f"{r}/smi.csv")):
    try:
        ts = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").time()
        rows.append((ts, float(row[1].split()[0]), float(row[2].split()[0]), row[4].strip()))
    except (ValueError, IndexError):
        pass
spans = {}
for i, e in enumerate(events):
    end = t(events[i + 1][0]) if i + 1 < len(events) else datetime.time(23, 59)
    spans.setdefault(e[2], []).append((t(e[0]), end))
for v, ss in spans.items():
    sel = [x for x in rows if any(a <= x[0] < b for a, b in ss)]
    busy = [x for x in sel if x[2] > 300]
    if busy:
        reasons = {}
        for x in busy: reasons[x[3]] = reasons.get(x[3], 0) + 1
        print(f"{v}: {len(busy)} samples over 300 W, SM clock median {statistics.median(x[1] for x in busy):.0f} MHz, "
              f"power median {statistics.median(x[2] for x in busy):.0f} W, reasons {reasons}")
PY
tar -czf "$OUT/r2.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== end ($(date -u +%T))"
