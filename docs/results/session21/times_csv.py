#!/usr/bin/env python3
"""Session 21's times.txt (tools/tile_sweep's timer, one block per variant and pass) as a CSV:
one row per product, the mean over the two passes of each variant's CUDA-graph median in us.
  python3 times_csv.py call2/times.txt > call2/batch_tiles.csv"""
import collections
import re
import sys

times = collections.defaultdict(lambda: collections.defaultdict(list))
variants = []
variant = None
for line in open(sys.argv[1]):
    header = re.match(r"== (\S+) pass (\d)", line)
    if header:
        variant = header.group(1)
        if variant not in variants:
            variants.append(variant)
        continue
    row = re.match(r"\s+(\d+)x\s*(\d+)x\s*(\d+) (\w\w)\s+([\d.]+) us", line)
    if row:
        times[row.group(1, 2, 3, 4)][variant].append(float(row.group(5)))
print("m,n,k,ops," + ",".join(f"{v}_us" for v in variants))
for (m, n, k, ops), by_variant in times.items():
    means = [sum(by_variant[v]) / len(by_variant[v]) for v in variants]
    print(f"{m},{n},{k},{ops}," + ",".join(f"{t:.2f}" for t in means))
