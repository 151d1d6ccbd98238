#!/usr/bin/env python3
"""The square cases of several benchmark processes (bench/median_runs.py, maint/squares_ab.sh), as
one markdown table per chapter: median TFLOP/s of the chapter and of cuBLAS (CUDA-graph timing)
over the processes, cuBLAS's range over them, the median ratio, and the SM clock. Interleaved
timing adds cuBLAS's spread over its own bursts (slowest - fastest, over the median, the median
over the processes) and the clock's range during the bursts; CSVs of the older timing, one
implementation after the other, give the ratio with each one timed first and the clock read
after each case.
  tools/squares_summary.py OUT/10_tile_scheduler/process_*.csv
  tools/squares_summary.py docs/results/gemm/six_processes/squares_*.csv
"""
import csv
import statistics
import sys
from collections import defaultdict


def percent(values):
    return f"{100 * statistics.median(values):.1f}%"


def main(paths):
    runs = defaultdict(list)  # (chapter, case) -> rows
    for path in paths:
        with open(path) as f:
            for row in csv.DictReader(f):
                runs[(row["chapter"], row["case"])].append(row)
    chapter_now = None
    for (chapter, case), rows in sorted(runs.items()):
        interleaved = all(r.get("timing") == "interleaved" for r in rows)
        if chapter != chapter_now:
            chapter_now = chapter
            first = rows[0]
            print(f"\n{chapter}: {len(rows)} processes per case, {first['gpu']}, "
                  f"driver {first['driver']}, {first['date']}\n")
            if interleaved:
                print("| case | chapter TFLOP/s | cuBLAS TFLOP/s (min-max) | of cuBLAS | "
                      "cuBLAS burst spread | SM MHz |")
            else:
                print("| case | chapter TFLOP/s | cuBLAS TFLOP/s (min-max) | chapter first | "
                      "cuBLAS first | all | SM MHz |")
            print("|---|---:|---:|---:|---:|---:|" + ("" if interleaved else "---:|"))
        mine = [float(r["chapter_graph_tflops"]) for r in rows]
        theirs = [float(r["cublas_graph_tflops"]) for r in rows]
        ratios = [float(r["graph_fraction_of_cublas"]) for r in rows]
        cells = [case, f"{statistics.median(mine):.0f}",
                 f"{statistics.median(theirs):.0f} ({min(theirs):.0f}-{max(theirs):.0f})"]
        if interleaved:
            spreads = [(float(r["cublas_graph_max_ms"]) - float(r["cublas_graph_min_ms"])) /
                       float(r["cublas_graph_ms"]) for r in rows]
            clocks = [int(r[c]) for r in rows for c in ("sm_clock_min_mhz", "sm_clock_max_mhz")]
            cells += [percent(ratios), percent(spreads)]
        else:
            cells += [percent([x for x, r in zip(ratios, rows) if r["first"] == order])
                      for order in ("chapter", "cublas")] + [percent(ratios)]
            clocks = [int(r["sm_clock_mhz"]) for r in rows]
        cells.append(f"{min(clocks)}-{max(clocks)}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("error: usage: tools/squares_summary.py SQUARES_CSV...")
    main(sys.argv[1:])
