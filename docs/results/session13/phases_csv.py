#!/usr/bin/env python3
"""The phase clock's lines (tools/phase_clock.py) of two variants, as one CSV for the doc.

    phases_csv.py DIR BEFORE AFTER > phases.csv

Reads DIR/phase_BEFORE*.txt and DIR/phase_AFTER*.txt (the trainer's output, 2 epochs at batch 32,
hidden 128), takes each run's last "phases" line (epoch 2), averages the runs and writes µs at the
SM clock of 1980 MHz that every run of the call reported (the runs' gpu.csv).
"""
import glob
import sys

NAMES = ["forward 0", "forward 1", "forward 2", "forward 3 and loss",
         "backward 0", "backward 1", "backward 2", "backward 3"]
CLOCK_MHZ = 1980


def phases(pattern):
    runs = []
    for path in sorted(glob.glob(pattern)):
        lines = [l for l in open(path) if l.startswith("phases")]
        runs.append([float(x) for x in lines[-1].split(":")[1].split()])
    if not runs:
        sys.exit(f"error: no phase lines in {pattern}")
    return [sum(r[i] for r in runs) / len(runs) / CLOCK_MHZ for i in range(len(NAMES))], len(runs)


directory, before, after = sys.argv[1:4]
b, nb = phases(f"{directory}/phase_{before}*.txt")
a, na = phases(f"{directory}/phase_{after}*.txt")
print("phase,before_us,after_us,runs_each,sm_clock_mhz,date,gpu")
for name, x, y in zip(NAMES + ["step"], b + [sum(b)], a + [sum(a)]):
    print(f"{name},{x:.2f},{y:.2f},{min(nb, na)},{CLOCK_MHZ},2026-11-24,NVIDIA H100 80GB HBM3")
