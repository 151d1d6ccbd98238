#!/usr/bin/env python3
"""Session 24's two tables, from the calls' printouts (run in this folder).
weight_update.csv, from call2/sgd.txt: call 2 timed three builds of time_sgd.cu, "old" (chapter 09
as of 6cc7566), "new" (the weight update waiting for its stores' reads only) and "waitall" (waiting
for the whole bulk group, as committed). Per shape and pass: old_us, new_us (waitall's),
wait_reads_only_us (new's), and the streaming kernel and D2D copy of waitall's process.
crossover.csv, from call6/ab/ab_summary.csv: chapter 10's persistent step against chapter 09's
graph, with each shape's tiles and the rule's choice (hidden <= 1024 and tiles <= 132)."""
import csv
import re

rows = []
variant = None
for line in open("call2/sgd.txt"):
    m = re.match(r"--- (\w+) pass (\d)", line)
    if m:
        variant, pass_ = m.group(1), int(m.group(2))
        continue
    m = re.match(r"\s*(\d+) x\s+(\d+) x\s+(\d+)\s+sgd gemm\s+([\d.]+) us.*stream\s+([\d.]+) us.*copy\s+([\d.]+) us", line)
    if m:
        rows.append((variant, pass_) + tuple(m.groups()))
shapes = sorted({r[2:5] for r in rows}, key=lambda s: [r[2:5] for r in rows].index(s))
with open("weight_update.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["m", "n", "k", "pass", "old_us", "new_us", "wait_reads_only_us", "stream_us",
                "copy_us", "new_over_old", "new_over_stream"])
    for m_, n, k in shapes:
        for p in (1, 2):
            t = {r[0]: r for r in rows if r[1] == p and r[2:5] == (m_, n, k)}
            old, new, reads = float(t["old"][5]), float(t["waitall"][5]), float(t["new"][5])
            stream, copy = float(t["waitall"][6]), float(t["waitall"][7])
            w.writerow([m_, n, k, p, old, new, reads, stream, copy, f"{new / old:.3f}",
                        f"{new / stream:.3f}"])

with open("call6/ab/ab_summary.csv") as f, open("crossover.csv", "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["batch", "hidden", "tiles", "chapter09_us", "persistent_us",
                "persistent_over_09", "rule"])
    for r in csv.DictReader(f):
        b, h = int(r["batch"]), int(r["hidden"])
        tiles = -(-b // 32) * -(-h // 32)
        rule = "persistent" if h <= 1024 and tiles <= 132 else "chapter 09"
        w.writerow([b, h, tiles, r["a_us"], r["b_us"], r["b_over_a"], rule])
