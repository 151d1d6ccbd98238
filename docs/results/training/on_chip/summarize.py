#!/usr/bin/env python3
"""Step times of chapters 15, 17 and 18 from the trainers' epoch CSVs in epochs/ (3 processes a
chapter, run in turn; epoch 1 of each is warm-up): step_times.csv, a row a process, the median
ms a step of its timed epochs; summary.csv, a row a chapter, the median over its processes and its
ratio to chapter 16's."""
import csv
import glob
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = "16_step_tile"

rows = []
for path in sorted(glob.glob(os.path.join(HERE, "epochs", "r*_epochs.csv"))):
    process = os.path.basename(path).split("_")[0]
    with open(path, newline="") as f:
        epochs = list(csv.DictReader(f))
    timed = [e for e in epochs if int(e["epoch"]) > 1]
    last = timed[-1]
    rows.append({"date": last["date"], "gpu": last["gpu"], "sm_clock_mhz": last["sm_clock_mhz"],
                 "driver": last["driver"], "chapter": last["chapter"], "layers": last["layers"],
                 "batch": last["batch"], "process": process, "epochs_timed": len(timed),
                 "us_per_step": f"{1000 * statistics.median(float(e['ms_per_step']) for e in timed):.3f}"})
with open(os.path.join(HERE, "step_times.csv"), "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)

chapters = sorted({r["chapter"] for r in rows})
median = {c: statistics.median(float(r["us_per_step"]) for r in rows if r["chapter"] == c)
          for c in chapters}
with open(os.path.join(HERE, "summary.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["date", "gpu", "chapter", "layers", "batch", "processes", "us_per_step",
                     "of_chapter_16"])
    for c in chapters:
        first = next(r for r in rows if r["chapter"] == c)
        writer.writerow([first["date"], first["gpu"], c, first["layers"], first["batch"],
                         sum(r["chapter"] == c for r in rows), f"{median[c]:.2f}",
                         f"{median[c] / median[BASELINE]:.3f}"])
