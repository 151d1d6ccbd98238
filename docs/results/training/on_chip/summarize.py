#!/usr/bin/env python3
"""Step times of chapters 17, 18 and 19 from the trainers' epoch CSVs, gathered in epochs.csv (3
processes a chapter, run in turn, the column `run` naming the process; epoch 1 of each is warm-up):
step_times.csv, a row a process, the median ms a step of its timed epochs; summary.csv, a row a
chapter, the median over its processes and its ratio to chapter 17's."""
import csv
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = "17_step_tile"

with open(os.path.join(HERE, "epochs.csv"), newline="") as f:
    all_epochs = list(csv.DictReader(f))
processes = list(dict.fromkeys((e["run"], e["chapter"]) for e in all_epochs))  # in file order
rows = []
for process, chapter in processes:
    epochs = [e for e in all_epochs if (e["run"], e["chapter"]) == (process, chapter)]
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
                     "of_chapter_17"])
    for c in chapters:
        first = next(r for r in rows if r["chapter"] == c)
        writer.writerow([first["date"], first["gpu"], c, first["layers"], first["batch"],
                         sum(r["chapter"] == c for r in rows), f"{median[c]:.2f}",
                         f"{median[c] / median[BASELINE]:.3f}"])
