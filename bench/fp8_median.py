#!/usr/bin/env python3
"""The median over processes of bench_gemm_fp8's CSVs: one row per case and accumulation.

    python3 bench/fp8_median.py OUT/median.csv OUT/process_1.csv OUT/process_2.csv ...

Each row: date, gpu, driver, cuda_runtime, case, m, n, k, accumulation, processes, then the median
over the processes of fp8_graph_ms, fp8_graph_tflops, cublaslt_graph_ms, cublaslt_graph_tflops,
graph_fraction_of_cublaslt (each process's own ratio, interleaved), fp16_graph_tflops and
fp8_over_fp16 (where timed), then cuBLASLt's fastest and slowest burst and the SM clock's range
over every process. date: the first process's.
"""
import csv
import statistics
import sys

KEYS = ["date", "gpu", "driver", "cuda_runtime", "case", "m", "n", "k", "accumulation"]
MEDIANS = ["fp8_graph_ms", "fp8_graph_tflops", "cublaslt_graph_ms", "cublaslt_graph_tflops",
           "graph_fraction_of_cublaslt", "fp16_graph_tflops", "fp8_over_fp16"]
RANGES = [("cublaslt_graph_min_ms", min), ("cublaslt_graph_max_ms", max),
          ("sm_clock_min_mhz", min), ("sm_clock_max_mhz", max)]


def main():
    if len(sys.argv) < 3:
        sys.exit("error: usage: fp8_median.py OUT.csv PROCESS.csv [PROCESS.csv ...]")
    groups = {}
    for path in sys.argv[2:]:
        try:
            rows = list(csv.DictReader(open(path)))
        except OSError as error:
            sys.exit(f"error: cannot read {path}: {error.strerror}")
        for row in rows:
            key = (row["case"], row["accumulation"])
            groups.setdefault(key, []).append(row)
    with open(sys.argv[1], "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(KEYS + ["processes"] + MEDIANS + [name for name, _ in RANGES])
        for rows in groups.values():
            line = [rows[0][k] for k in KEYS]
            line.append(len(rows))
            for name in MEDIANS:
                values = [float(r[name]) for r in rows if r[name] != ""]
                line.append(f"{statistics.median(values):.6g}" if values else "")
            for name, pick in RANGES:
                line.append(f"{pick(float(r[name]) for r in rows):.6g}")
            writer.writerow(line)


if __name__ == "__main__":
    main()
