#!/usr/bin/env python3
"""The square cases of several benchmark processes (tools/device_run.sh ... squares), as one
markdown table per chapter: median TFLOP/s of the chapter and of cuBLAS (CUDA-graph timing) over
the processes, cuBLAS's spread, the median ratio with each one timed first and over all, and the
SM clocks read after each case.
  tools/squares_summary.py docs/results/ladder/squares_*.csv
"""
import csv
import statistics
import sys
from collections import defaultdict


def main(paths):
    runs = defaultdict(list)  # (chapter, case) -> rows
    for path in paths:
        with open(path) as f:
            for row in csv.DictReader(f):
                runs[(row["chapter"], row["case"])].append(row)
    chapter_now = None
    for (chapter, case), rows in sorted(runs.items()):
        if chapter != chapter_now:
            chapter_now = chapter
            first = rows[0]
            print(f"\n{chapter}: {len(rows)} processes per case, {first['gpu']}, "
                  f"driver {first['driver']}, {first['date']}\n")
            print("| case | chapter TFLOP/s | cuBLAS TFLOP/s (min-max) | chapter first | "
                  "cuBLAS first | all | SM MHz |")
            print("|---|---:|---:|---:|---:|---:|---:|")
        mine = [float(r["chapter_graph_tflops"]) for r in rows]
        theirs = [float(r["cublas_graph_tflops"]) for r in rows]

        def ratio(order):
            values = [float(r["graph_fraction_of_cublas"]) for r in rows
                      if order is None or r["first"] == order]
            return f"{100 * statistics.median(values):.1f}%"

        clocks = [int(r["sm_clock_mhz"]) for r in rows]
        print(f"| {case} | {statistics.median(mine):.0f} | {statistics.median(theirs):.0f} "
              f"({min(theirs):.0f}-{max(theirs):.0f}) | {ratio('chapter')} | "
              f"{ratio('cublas')} | {ratio(None)} | {min(clocks)}-{max(clocks)} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: tools/squares_summary.py SQUARES_CSV...")
    main(sys.argv[1:])
