"""Call 4's A/B: per product, the median CUDA-graph time of the old and new trees over their
processes, new / old, and each tree's median fraction of cuBLAS. python3 ab_table.py CSV_DIR"""
import csv, glob, os, statistics, sys
runs = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    tree = os.path.basename(path).split("_r")[0]
    for row in csv.DictReader(open(path)):
        runs.setdefault(row["case"], {}).setdefault(tree, []).append(row)
print(f"{'case':34} {'old us':>8} {'new us':>8} {'new/old':>8} {'old/cuBLAS':>10} {'new/cuBLAS':>10}")
for case, trees in runs.items():
    if "old" not in trees or "new" not in trees:
        continue
    ms = {t: statistics.median(float(r["chapter_graph_ms"]) for r in rs) for t, rs in trees.items()}
    fr = {t: statistics.median(float(r["graph_fraction_of_cublas"]) for r in rs) for t, rs in trees.items()}
    print(f"{case:34} {ms['old'] * 1e3:8.2f} {ms['new'] * 1e3:8.2f} {ms['new'] / ms['old']:8.3f} "
          f"{fr['old']:10.1%} {fr['new']:10.1%}")
