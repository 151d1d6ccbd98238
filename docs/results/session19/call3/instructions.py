#!/usr/bin/env python3
"""Session 19, call 3: warp instructions executed by the persistent kernel (Nsight Compute's
source counters, `--page source --csv --print-source sass`, 300 steps at batch 32, hidden 1024),
HEAD (src_base.csv.gz) and the ring across tiles (src_ring.csv.gz): in all, by opcode family, and
per weight tile of HEAD's first weight-gradient call (dw[0], 2,080 tiles a step at that size:
layers 3, 2 and 1, 32 + 1,024 + 1,024): lines 3799-4719 of HEAD's listing, the stretch that
starts and ends with lines executed 2,080 x 8 warps x 300 steps times. Writes instructions.csv.
    python3 instructions.py > instructions.csv"""
import collections
import csv
import gzip

STEPS, WARPS, WEIGHT_TILES = 300, 8, 2080
print("tree,warp_instructions,hmma,imad,integer_division_parts,weight_tile_instructions_per_warp")
for tree in ["base", "ring"]:
    rows = list(csv.reader(gzip.open(f"src_{tree}.csv.gz", "rt")))
    head, lines = rows[1], rows[2:]
    executed = head.index("Instructions Executed")
    ops = collections.Counter()
    for r in lines:
        words = r[1].split()
        op = words[1] if words[0].startswith("@") else words[0]
        ops[op.split(".")[0]] += int(r[executed])
    total = sum(ops.values())
    # each integer division by a value known only at run time is one MUFU.RCP with I2F and F2I
    division = ops["MUFU"]
    per_tile = WEIGHT_TILES * WARPS * STEPS
    tile_code = 0
    if tree == "base":  # the first weight-gradient tile's code: lines 3799-4719 of the listing
        tile_code = sum(int(lines[i][executed]) for i in range(3799, 4720)) / per_tile
    per_warp = f"{tile_code:.0f}" if tree == "base" else ""
    print(f"{tree},{total},{ops['HMMA']},{ops['IMAD']},{division},{per_warp}")
