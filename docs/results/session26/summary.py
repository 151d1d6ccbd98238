"""Medians per tree and case of the square benchmarks: python3 summary.py CSV_DIR"""
import csv, glob, os, statistics, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    tree = os.path.basename(path).rsplit("_r", 1)[0]
    for row in csv.DictReader(open(path)):
        rows.setdefault((tree, row["case"]), []).append(row)
print(f"{'tree':22} {'case':28} {'n':>2} {'TFLOP/s':>8} {'of cuBLAS':>9} {'min':>6} {'max':>6} {'cuBLAS':>7} {'MHz':>10}")
for (tree, case), rs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    f = [float(r["graph_fraction_of_cublas"]) for r in rs]
    t = [float(r["chapter_graph_tflops"]) for r in rs]
    cb = [float(r["cublas_graph_tflops"]) for r in rs]
    mhz = [int(r["sm_clock_mhz"]) for r in rs]
    print(f"{tree:22} {case:28} {len(rs):2} {statistics.median(t):8.1f} {statistics.median(f):9.1%} "
          f"{min(f):6.1%} {max(f):6.1%} {statistics.median(cb):7.1f} {min(mhz):4}-{max(mhz):4}")
