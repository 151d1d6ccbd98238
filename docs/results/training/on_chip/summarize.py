#!/usr/bin/env python3
"""Step times of chapters 17, 18 and 19 from the trainers' epoch CSVs, gathered in FOLDER/epochs.csv
(3 rounds, each running every trainer once in turn, the column `run` naming the round; `variant`
the code: `main` the chapters as they are, others chapter 18's alternatives; epoch 1 of each
process is warm-up): FOLDER/step_times.csv, a row a process, the median ms a step of its timed
epochs; FOLDER/summary.csv, a row a chapter and variant, the median over its processes and its
ratio to chapter 17's.
    python3 summarize.py [FOLDER]      default: this script's folder"""
import csv
import os
import statistics
import sys

HERE = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
BASELINE = ("17_step_tile", "main")

with open(os.path.join(HERE, "epochs.csv"), newline="") as f:
    all_epochs = list(csv.DictReader(f))
key = lambda e: (e["chapter"], e["variant"])  # noqa: E731
processes = list(dict.fromkeys((e["run"],) + key(e) for e in all_epochs))  # in file order
rows = []
for process, chapter, variant in processes:
    epochs = [e for e in all_epochs if (e["run"],) + key(e) == (process, chapter, variant)]
    timed = [e for e in epochs if int(e["epoch"]) > 1]
    last = timed[-1]
    rows.append({"date": last["date"], "gpu": last["gpu"], "sm_clock_mhz": last["sm_clock_mhz"],
                 "driver": last["driver"], "chapter": chapter, "variant": variant,
                 "layers": last["layers"], "batch": last["batch"], "process": process,
                 "epochs_timed": len(timed),
                 "us_per_step": f"{1000 * statistics.median(float(e['ms_per_step']) for e in timed):.3f}"})
with open(os.path.join(HERE, "step_times.csv"), "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)

groups = sorted({key(r) for r in rows})
median = {g: statistics.median(float(r["us_per_step"]) for r in rows if key(r) == g)
          for g in groups}
with open(os.path.join(HERE, "summary.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["date", "gpu", "chapter", "variant", "layers", "batch", "processes",
                     "us_per_step", "of_chapter_17"])
    for g in groups:
        first = next(r for r in rows if key(r) == g)
        writer.writerow([first["date"], first["gpu"], g[0], g[1], first["layers"], first["batch"],
                         sum(key(r) == g for r in rows), f"{median[g]:.2f}",
                         f"{median[g] / median[BASELINE]:.3f}"])
