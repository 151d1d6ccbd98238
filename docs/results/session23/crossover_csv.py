"""Session 23's crossover measurements (call1/ab, call2/ab: tools/ab_train.sh, A = chapter 09's
graph, B = the persistent step at every width) as one CSV, with each shape's 32 x 32 tiles of
batch x hidden and whether the rule of chapters/10_persistent_step/schedule.cuh takes it.
    python3 docs/results/session23/crossover_csv.py  (writes crossover.csv beside this script)"""
import csv
import os

here = os.path.dirname(os.path.abspath(__file__))
MAX_WIDTH, MAX_TILES, TILE = 2048, 132, 32  # schedule.cuh: kMaxWidth, kMaxActivationTiles
rows = []
for call in ("call1", "call2"):
    with open(os.path.join(here, call, "ab", "ab_summary.csv")) as f:
        for r in csv.DictReader(f):
            batch, hidden = int(r["batch"]), int(r["hidden"])
            tiles = -(-batch // TILE) * -(-hidden // TILE)
            rows.append({"batch": batch, "hidden": hidden, "tiles": tiles,
                         "chapter09_us": r["a_us"], "persistent_us": r["b_us"],
                         "persistent_over_09": r["b_over_a"],
                         "rule": "persistent" if hidden <= MAX_WIDTH and tiles <= MAX_TILES
                         else "chapter 09", "call": call})
rows.sort(key=lambda r: (r["batch"], r["hidden"]))
with open(os.path.join(here, "crossover.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
