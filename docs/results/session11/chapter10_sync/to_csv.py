#!/usr/bin/env python3
"""run_log_before_after.txt -> before_after.csv (every epoch of every run), summary.csv (the median
over repetitions of epochs 2 and 3, before and after side by side), phases.csv (the phase_* runs:
microseconds a phase at the logged SM clock) and phases_side_by_side.csv (the same, before and
after in one row). Run from this folder."""
import csv
import re
import statistics

LINE = re.compile(r"^(\w+) b(\d+) h(\d+) rep(\d+): us/step by epoch, MHz: ([\d. ]+?) (\d+) \|(.*)$")
PHASES = ["forward 0", "forward 1", "forward 2", "forward 3", "loss", "backward 0", "backward 1",
          "backward 2", "backward 3"]
META = {"date": "2026-11-24", "gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"}

epochs, phases = [], []
for line in open("run_log_before_after.txt"):
    m = LINE.match(line.strip())
    if not m:
        continue
    variant, batch, hidden, rep, us, mhz, rest = m.groups()
    for e, value in enumerate(us.split(), start=1):
        epochs.append({**META, "sm_clock_mhz": mhz, "variant": variant, "batch": batch,
                       "hidden": hidden, "rep": rep, "epoch": e, "us_per_step": value})
    p = re.search(r"phases grid (\d+) steps (\d+) total (\d+) cycles/step: ([\d ]+)", rest)
    if p:
        for name, cycles in zip(PHASES, p.group(4).split()):
            phases.append({**META, "sm_clock_mhz": mhz, "variant": variant[len("phase_"):],
                           "batch": batch, "hidden": hidden, "blocks": p.group(1),
                           "phase": name, "us": f"{int(cycles) / int(mhz):.2f}"})

with open("before_after.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(epochs[0]))
    w.writeheader()
    w.writerows(epochs)
with open("phases.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(phases[0]))
    w.writeheader()
    w.writerows(phases)

summary = []
shapes = sorted({(int(r["batch"]), int(r["hidden"])) for r in epochs})
for batch, hidden in shapes:
    median = {}
    for variant in ("before", "after"):
        values = [float(r["us_per_step"]) for r in epochs
                  if r["variant"] == variant and int(r["batch"]) == batch
                  and int(r["hidden"]) == hidden and r["epoch"] >= 2]
        median[variant] = statistics.median(values)
    summary.append({**META, "sm_clock_mhz": 1980, "batch": batch, "hidden": hidden,
                    "before_us": f"{median['before']:.2f}", "after_us": f"{median['after']:.2f}",
                    "after_over_before": f"{median['after'] / median['before']:.3f}"})
with open("summary.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(summary[0]))
    w.writeheader()
    w.writerows(summary)

side = []
for batch, hidden in shapes:
    for name in PHASES + ["step"]:
        row = {**META, "sm_clock_mhz": 1980, "batch": batch, "hidden": hidden, "phase": name}
        for variant in ("before", "after"):
            mine = [r for r in phases if r["variant"] == variant and int(r["batch"]) == batch
                    and int(r["hidden"]) == hidden]
            value = sum(float(r["us"]) for r in mine) if name == "step" else \
                next(float(r["us"]) for r in mine if r["phase"] == name)
            row[f"{variant}_us"] = f"{value:.2f}"
        side.append(row)
with open("phases_side_by_side.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(side[0]))
    w.writeheader()
    w.writerows(side)
