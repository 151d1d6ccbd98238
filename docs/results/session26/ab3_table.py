"""Per product where cuBLAS takes >= 10 us, each tree's median CUDA-graph time and median
fraction of cuBLAS over its processes. python3 ab3_table.py CSV_DIR [TREE,TREE,...]"""
import csv, glob, os, statistics, sys
runs = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    tree = os.path.basename(path).split("_r")[0]
    for row in csv.DictReader(open(path)):
        runs.setdefault(row["case"], {}).setdefault(tree, []).append(row)
trees = sys.argv[2].split(",") if len(sys.argv) > 2 else ["base", "V1", "V2"]
print(f"{'case':34} {'cuBLAS us':>9} " + " ".join(f"{t + ' us':>9} {t + ' %':>7}" for t in trees))
for case, by_tree in runs.items():
    cb = statistics.median(float(r["cublas_graph_ms"]) for rs in by_tree.values() for r in rs) * 1e3
    cells = []
    for t in trees:
        rs = by_tree.get(t, [])
        if not rs:
            cells.append(f"{'-':>9} {'-':>7}")
            continue
        ms = statistics.median(float(r["chapter_graph_ms"]) for r in rs) * 1e3
        fr = statistics.median(float(r["graph_fraction_of_cublas"]) for r in rs)
        cells.append(f"{ms:9.2f} {fr:7.1%}")
    mark = "" if cb >= 10 else "  (cuBLAS < 10 us)"
    print(f"{case:34} {cb:9.2f} " + " ".join(cells) + mark)
