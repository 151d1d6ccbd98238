#!/usr/bin/env bash
# bench/median_runs.py with a stand-in benchmark (no GPU, no build) that writes the columns
# bench/gemm_bench.cu writes: three processes, "square 4096" in each and "square 8192" in two
# (one skips it), so the medians, cuBLAS's range and the clock's range over the processes are
# known; tools/squares_summary.py reads the process CSVs; a missing benchmark, a failing one, a
# CSV without interleaved timing and --processes 0 each stop it with one error line.
#   tests/median_runs_test.sh SOURCE_ROOT
set -u
root=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "FAIL $*"
  exit 1
}
# The header exactly as gemm_bench.cu writes it: its string literals after `csv << "date,`.
python3 - "$root/bench/gemm_bench.cu" >"$scratch/header.csv" <<'PY' || fail "no CSV header in gemm_bench.cu"
import re, sys
text = open(sys.argv[1]).read()
header = re.search(r'csv << ("date,.*?\\n");', text, re.S).group(1)
print("".join(re.findall(r'"([^"]*)"', header)).replace("\\n", ""))
PY
mkdir -p "$scratch/build/bench"
bench=$scratch/build/bench/bench_gemm_fake
# Process p (counted in a file): square 4096 at chapter, cuBLAS, cuBLAS fastest and slowest
# burst (ms), clock range; square 8192 in processes 1 and 3. TIMING and FAIL change it.
cat >"$bench" <<SH
#!/usr/bin/env python3
import csv, os, sys
if os.environ.get("FAIL"):
    sys.exit("error: no CUDA-capable GPU found")
count = "$scratch/count"
p = int(open(count).read()) + 1 if os.path.exists(count) else 1
open(count, "w").write(str(p))
header = open("$scratch/header.csv").read().strip().split(",")
cases = {1: [("square 4096", 0.20, 0.19, 0.185, 0.200, 1700, 1980),
             ("square 8192", 1.6, 1.5, 1.45, 1.55, 1500, 1900)],
         2: [("square 4096", 0.22, 0.20, 0.190, 0.210, 1600, 1900)],
         3: [("square 4096", 0.21, 0.18, 0.175, 0.190, 1650, 1980),
             ("square 8192", 1.8, 1.6, 1.55, 1.70, 1400, 1800)]}[p]
with open(sys.argv[sys.argv.index("--csv") + 1], "w") as f:
    out = csv.DictWriter(f, fieldnames=header)
    out.writeheader()
    for case, mine, theirs, low, high, clock_low, clock_high in cases:
        n = int(case.split()[1])
        tflops = lambda ms: 2 * n**3 / ms / 1e9
        out.writerow(dict(date="2000-01-01", gpu="Synthetic GPU", sm_clock_mhz=clock_low,
            max_sm_clock_mhz=1980, driver="1.0", cuda_runtime=13000, chapter="fake", case=case,
            m=n, n=n, k=n, op_a="N", op_b="T", chapter_ms=mine, chapter_tflops=tflops(mine),
            cublas_ms=theirs, cublas_tflops=tflops(theirs), fraction_of_cublas=theirs / mine,
            chapter_graph_ms=mine, chapter_graph_tflops=tflops(mine), cublas_graph_ms=theirs,
            cublas_graph_tflops=tflops(theirs), graph_fraction_of_cublas=theirs / mine,
            timing=os.environ.get("TIMING", "interleaved"), pairs=20, cublas_graph_min_ms=low,
            cublas_graph_max_ms=high, sm_clock_min_mhz=clock_low, sm_clock_max_mhz=clock_high))
print("stand-in benchmark, process", p)
SH
chmod +x "$bench"
runs=("$root/bench/median_runs.py" fake --out "$scratch/out" --build-dir "$scratch/build")

output=$("${runs[@]}" 2>&1) || fail "median_runs.py: $output"
median=$scratch/out/fake/median.csv
for p in 1 2 3; do
  [ -s "$scratch/out/fake/process_$p.csv" ] || fail "no process_$p.csv"
  grep -q "stand-in benchmark, process $p" "$scratch/out/fake/process_$p.txt" ||
    fail "process_$p.txt: $(cat "$scratch/out/fake/process_$p.txt")"
  grep -q "^process $p/3: [12] cases in" <<<"$output" || fail "no progress line $p: $output"
done
python3 - "$median" <<'PY' || fail "median.csv: $(cat "$median")"
import csv, sys
rows = {r["case"]: r for r in csv.DictReader(open(sys.argv[1]))}
a, b = rows["square 4096"], rows["square 8192"]
want = [(a, "processes", 3), (a, "chapter_graph_ms", 0.21), (a, "cublas_graph_ms", 0.19),
        (a, "graph_fraction_of_cublas", 0.2 / 0.22), (a, "cublas_graph_min_ms", 0.175),
        (a, "cublas_graph_max_ms", 0.21), (a, "sm_clock_min_mhz", 1600),
        (a, "sm_clock_max_mhz", 1980), (b, "processes", 2), (b, "chapter_graph_ms", 1.7),
        (b, "cublas_graph_ms", 1.55), (b, "fraction_of_cublas", (1.5 / 1.6 + 1.6 / 1.8) / 2)]
wrong = [f"{row['case']} {column} = {row[column]}, not {value}" for row, column, value in want
         if abs(float(row[column]) - value) > 1e-5 * value]
wrong += [] if a["timing"] == "interleaved" else ["timing"]
sys.exit("; ".join(wrong) or None)
PY
summary=$(python3 "$root/tools/squares_summary.py" "$scratch/out/fake"/process_*.csv) ||
  fail "squares_summary.py: $summary"
grep -qxF '| square 4096 | 654 | 723 (687-764) | 90.9% | 8.3% | 1600-1980 |' <<<"$summary" ||
  fail "squares_summary.py on interleaved CSVs: $summary"

# One error line (a failing process follows its progress line), the one wanted.
refused() {  # the error wanted, then the command's environment and arguments
  local wanted=$1
  shift
  rm -f "$scratch/count"
  output=$(env "$@" 2>&1) && fail "taken: $*"
  [ "$(grep -c '^error: ' <<<"$output")" -eq 1 ] && grep -q "^error: $wanted" <<<"$output" ||
    fail "$*: $output"
}
refused "no .*bench_gemm_none" "${runs[@]/fake/none}"
refused "no CUDA-capable GPU" FAIL=1 "${runs[@]}"
refused ".*process_1.csv has no interleaved timing" TIMING=chapter "${runs[@]}"
refused "argument --processes" "${runs[@]}" --processes 0
# bench/fp8_median.py gives the committed FP8 median from the committed processes, byte for byte,
# and refuses a process CSV it cannot read with one line.
for fp8 in "$root"/docs/results/fp8/bench "$root"/docs/results/fp8/two_parts/bench; do
  python3 "$root/bench/fp8_median.py" "$scratch/fp8_median.csv" "$fp8"/process_{1,2,3}.csv ||
    fail "fp8_median.py on the committed processes of $fp8"
  cmp -s "$scratch/fp8_median.csv" "$fp8/median.csv" ||
    fail "fp8_median.py: $(diff "$scratch/fp8_median.csv" "$fp8/median.csv" | head -3)"
done
output=$(python3 "$root/bench/fp8_median.py" "$scratch/none.csv" "$scratch/missing.csv" 2>&1) &&
  fail "fp8_median.py took a missing CSV"
[ "$(grep -c '^error: ' <<<"$output")" -eq 1 ] || fail "fp8_median.py on a missing CSV: $output"
# maint/fp8_kernel_times.py gives each committed kernel_times.csv from the committed Nsight
# Compute printouts beside it (ncu/), byte for byte, and refuses a printout with no whole step with
# one line. kernel_times_reproduced FOLDER CHAPTER:LAYERS:PRINTOUT...
kernel_times_reproduced() {
  local folder=$1 spec specs=()
  shift
  for spec in "$@"; do specs+=("${spec%:*}:$folder/ncu/${spec##*:}"); done
  python3 "$root/maint/fp8_kernel_times.py" "$scratch/kernel_times.csv" "${specs[@]}" ||
    fail "fp8_kernel_times.py on the printouts of $folder"
  cmp -s "$scratch/kernel_times.csv" "$folder/kernel_times.csv" ||
    fail "fp8_kernel_times.py: $(diff "$scratch/kernel_times.csv" "$folder/kernel_times.csv" | head -3)"
}
ncu=$root/docs/results/fp8/ncu
big=784-8192-8192-8192-10 small=784-1024-1024-1024-10
kernel_times_reproduced "$root/docs/results/fp8" \
  "20_fp8_gemm:$big:b256_20_fp8_gemm.csv" \
  "21_fp8_fused_epilogue:$big:b256_21_fp8_fused_epilogue.csv" \
  "22_fp8_swap_ab:$big:b256_22_fp8_swap_ab.csv" \
  "20_fp8_gemm:$small:default_20_fp8_gemm.csv" \
  "21_fp8_fused_epilogue:$small:default_21_fp8_fused_epilogue.csv"
kernel_times_reproduced "$root/docs/results/fp8/weight_update" \
  "22_fp8_swap_ab:$big:b256_22_fp8_swap_ab.csv" \
  "23_fp8_weight_update:$big:b256_23_fp8_weight_update.csv" \
  "22_fp8_swap_ab:$small:default_22_fp8_swap_ab.csv" \
  "23_fp8_weight_update:$small:default_23_fp8_weight_update.csv"
kernel_times_reproduced "$root/docs/results/fp8/two_parts" \
  "23_fp8_weight_update:$big:b256_23_fp8_weight_update.csv" \
  "24_fp8_two_parts:$big:b256_24_fp8_two_parts.csv" \
  "23_fp8_weight_update:$small:default_23_fp8_weight_update.csv" \
  "24_fp8_two_parts:$small:default_24_fp8_two_parts.csv"
head -n 20 "$ncu/b256_20_fp8_gemm.csv" > "$scratch/short.csv"
output=$(python3 "$root/maint/fp8_kernel_times.py" "$scratch/none.csv" \
  "20_fp8_gemm:$big:$scratch/short.csv" 2>&1) && fail "fp8_kernel_times.py took a printout without a whole step"
[ "$(grep -c '^error: ' <<<"$output")" -eq 1 ] || fail "fp8_kernel_times.py on a short printout: $output"

echo "median_runs: medians, ranges and skipped cases over 3 stand-in processes, the summary" \
  "reads them, 4 bad inputs refused with one line; fp8_median.py reproduces the FP8 median," \
  "fp8_kernel_times.py the FP8 step's kernel times"
