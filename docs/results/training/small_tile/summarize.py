#!/usr/bin/env python3
"""Chapters 14 and 15 side by side, from the files beside this script:
products.csv, a row a product of the step at batch 32, hidden 128, from gemm_b32_h128.csv (the
median of 3 processes each): its 32 x 32 tiles, each chapter's time in µs from CUDA-graph replays,
chapter 15's as a fraction of chapter 14's, and cuBLAS's time in chapter 14's processes; step_times.csv, a row a trainer process from
epochs.csv (3 processes a chapter and model, in turn; epoch 1 of each is warm-up), the median µs a
step of its timed epochs; summary.csv, a row a chapter and model, the median over its processes
and its ratio to chapter 14's."""
import csv
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE, CHAPTER, TILE = "14_weight_update", "15_small_tile", 32


def read(name):
    with open(os.path.join(HERE, name), newline="") as f:
        return list(csv.DictReader(f))


def write(name, rows):
    with open(os.path.join(HERE, name), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


gemm = read("gemm_b32_h128.csv")
us = {(r["chapter"], r["case"]): 1000 * float(r["chapter_graph_ms"]) for r in gemm}
products = []
for r in gemm:
    if r["chapter"] != BASELINE:
        continue
    m, n = int(r["m"]), int(r["n"])
    before, after = us[(BASELINE, r["case"])], us[(CHAPTER, r["case"])]
    products.append({"date": r["date"], "gpu": r["gpu"], "case": r["case"], "m": m, "n": n,
                     "k": r["k"], "tiles": -(-m // TILE) * -(-n // TILE),
                     "us_14": f"{before:.2f}", "us_15": f"{after:.2f}",
                     "of_14": f"{after / before:.3f}",
                     "cublas_us": f"{1000 * float(r['cublas_graph_ms']):.2f}",
                     "sm_clock_mhz": r["sm_clock_max_mhz"]})
write("products.csv", products)

epochs = read("epochs.csv")
runs = list(dict.fromkeys((e["run"], e["chapter"], e["batch"], e["layers"]) for e in epochs))
times = []
for run in runs:
    timed = [e for e in epochs if (e["run"], e["chapter"], e["batch"], e["layers"]) == run
             and int(e["epoch"]) > 1]
    last = timed[-1]
    times.append({"date": last["date"], "gpu": last["gpu"], "sm_clock_mhz": last["sm_clock_mhz"],
                  "driver": last["driver"], "chapter": last["chapter"], "layers": last["layers"],
                  "batch": last["batch"], "process": last["run"], "epochs_timed": len(timed),
                  "kernels_per_step": last["kernels_per_step"],
                  "us_per_step": f"{1000 * statistics.median(float(e['ms_per_step']) for e in timed):.2f}"})
write("step_times.csv", times)

models = list(dict.fromkeys((t["batch"], t["layers"]) for t in times))
summary = []
for batch, layers in models:
    median = {c: statistics.median(float(t["us_per_step"]) for t in times
                                   if (t["chapter"], t["batch"], t["layers"]) == (c, batch, layers))
              for c in (BASELINE, CHAPTER)}
    for c in (BASELINE, CHAPTER):
        first = next(t for t in times if (t["chapter"], t["batch"], t["layers"]) == (c, batch, layers))
        summary.append({"date": first["date"], "gpu": first["gpu"], "chapter": c, "layers": layers,
                        "batch": batch, "processes": 3, "kernels_per_step": first["kernels_per_step"],
                        "us_per_step": f"{median[c]:.2f}",
                        "of_14": f"{median[c] / median[BASELINE]:.3f}"})
write("summary.csv", summary)
