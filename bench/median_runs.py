#!/usr/bin/env python3
"""One chapter's GEMM benchmark in several processes, one after the other, and the median of each
case over them: one process says little near cuBLAS's speed, as the clock moves from process to
process.

    python3 bench/median_runs.py CHAPTER --out OUT [--build-dir build] [--processes 3]
        [--only square]

Runs BUILD/bench/bench_gemm_CHAPTER --only PREFIX --csv ... PROCESSES times. Writes, in
OUT/CHAPTER/:
  process_P.csv, process_P.txt   each process's CSV and printout (P = 1, 2, ...)
  median.csv                     one row per case: date,gpu,driver,cuda_runtime,chapter,case,m,n,
                                 k,op_a,op_b,processes,timing, then the median over the processes
                                 of chapter_ms,cublas_ms,fraction_of_cublas,chapter_graph_ms,
                                 chapter_graph_tflops,cublas_graph_ms,cublas_graph_tflops,
                                 graph_fraction_of_cublas (each the median of the processes'
                                 values, the ratios included), then cublas_graph_min_ms and
                                 cublas_graph_max_ms (cuBLAS's fastest and slowest burst in any
                                 process) and sm_clock_min_mhz and sm_clock_max_mhz (the range of
                                 the clock over every process). processes: how many timed the case
                                 (one may skip a slow square); date: the first process's.
Prints a line as each process starts and ends, and the medians at the end. A process that fails
stops the script with its error line and exit status 1.
"""
import argparse
import csv
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROCESS_TIMEOUT_S = 600
KEYS = ["date", "gpu", "driver", "cuda_runtime", "chapter", "case", "m", "n", "k", "op_a", "op_b"]
MEDIANS = ["chapter_ms", "cublas_ms", "fraction_of_cublas", "chapter_graph_ms",
           "chapter_graph_tflops", "cublas_graph_ms", "cublas_graph_tflops",
           "graph_fraction_of_cublas"]
COLUMNS = (KEYS + ["processes", "timing"] + MEDIANS +
           ["cublas_graph_min_ms", "cublas_graph_max_ms", "sm_clock_min_mhz", "sm_clock_max_mhz"])


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as every tool of the repository
        sys.exit(f"error: {message}")


def positive(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return int(text)


def parse_args():
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="e.g. 10_tile_scheduler")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--build-dir", default=Path("build"), type=Path)
    parser.add_argument("--processes", default=3, type=positive)
    parser.add_argument("--only", default="square", help="passed to the benchmark")
    return parser.parse_args()


def run_process(bench, only, csv_path, log_path):
    """Runs one benchmark process; its rows, or exits with its error line."""
    command = [str(bench), "--only", only, "--csv", str(csv_path)]
    csv_path.unlink(missing_ok=True)  # an older run's CSV must not stand in for this one's
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=PROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        sys.exit(f"error: {bench.name} ran longer than {PROCESS_TIMEOUT_S} s")
    log_path.write_text(" ".join(command) + "\n" + result.stdout + result.stderr)
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        sys.exit(lines[-1] if lines else f"error: {bench.name} exited with {result.returncode}")
    if not csv_path.is_file():
        sys.exit(f"error: {bench.name} exited with 0 but wrote no {csv_path}")
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    if any(row.get("timing") != "interleaved" for row in rows):
        sys.exit(f"error: {csv_path} has no interleaved timing (a benchmark built from an older "
                 "tree?)")
    return rows


def median_row(rows):
    """The row of median.csv for one case, from its rows in every process that timed it."""
    row = {key: rows[0][key] for key in KEYS}
    row["processes"] = len(rows)
    row["timing"] = "interleaved"
    for column in MEDIANS:
        row[column] = f"{statistics.median(float(r[column]) for r in rows):.6g}"
    row["cublas_graph_min_ms"] = min(float(r["cublas_graph_min_ms"]) for r in rows)
    row["cublas_graph_max_ms"] = max(float(r["cublas_graph_max_ms"]) for r in rows)
    clocks = [int(r[c]) for r in rows for c in ("sm_clock_min_mhz", "sm_clock_max_mhz")
              if int(r[c]) >= 0]  # -1: NVML gave no clock
    row["sm_clock_min_mhz"] = min(clocks, default=-1)
    row["sm_clock_max_mhz"] = max(clocks, default=-1)
    return row


def main():
    args = parse_args()
    bench = args.build_dir / "bench" / f"bench_gemm_{args.chapter}"
    if not bench.is_file():
        sys.exit(f"error: no {bench} (build it first)")
    out = args.out / args.chapter
    out.mkdir(parents=True, exist_ok=True)
    cases = {}  # case -> its rows, in the order the benchmark runs them
    for p in range(1, args.processes + 1):
        print(f"process {p}/{args.processes}: {bench.name} --only '{args.only}' "
              f"({time.strftime('%H:%M:%S', time.gmtime())} UTC)", flush=True)
        start = time.monotonic()
        rows = run_process(bench, args.only, out / f"process_{p}.csv", out / f"process_{p}.txt")
        for row in rows:
            cases.setdefault(row["case"], []).append(row)
        ratios = ", ".join(f"{r['case']} {float(r['graph_fraction_of_cublas']):.1%}" for r in rows)
        print(f"process {p}/{args.processes}: {len(rows)} cases in "
              f"{time.monotonic() - start:.0f} s; of cuBLAS: {ratios}", flush=True)
    if not cases:
        sys.exit(f"error: no process timed a case starting with '{args.only}'")
    medians = [median_row(rows) for rows in cases.values()]
    with open(out / "median.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(medians)
    print(f"\nmedians over the processes ({out / 'median.csv'}):")
    print(f"{'case':29} {'runs':>4} {'chapter ms':>10} {'cuBLAS ms':>10} {'of cuBLAS':>9} "
          f"{'cuBLAS min-max ms':>19} {'SM MHz':>9}")
    for row in medians:
        print(f"{row['case']:29} {row['processes']:>4} {float(row['chapter_graph_ms']):>10.4f} "
              f"{float(row['cublas_graph_ms']):>10.4f} "
              f"{float(row['graph_fraction_of_cublas']):>9.1%} "
              f"{row['cublas_graph_min_ms']:>9.4f}-{row['cublas_graph_max_ms']:<9.4f} "
              f"{row['sm_clock_min_mhz']:>4}-{row['sm_clock_max_mhz']}")


if __name__ == "__main__":
    main()
