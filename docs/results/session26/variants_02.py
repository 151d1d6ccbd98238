"""Chapter 02's thread-tile variants (calls 1, 4 and 5 of session 26): per call, tree and square
product, the median TFLOP/s of the chapter over the processes, its range, and cuBLAS's median.
   python3 variants_02.py OUT.csv CALL=CSV_DIR...      (CSV_DIR: a call's csv/, from its csv.tgz)"""
import csv, glob, os, statistics, sys

DESCRIBE = {  # tree -> (thread tile, threads per block, blocks per SM, block tile, K per read)
    "base": ("8 x 8", 256, 2, "128 x 128 x 32", 4),
    "t8x8_b2_k4": ("8 x 8", 256, 2, "128 x 128 x 32", 4),
}


def describe(tree):
    if tree in DESCRIBE:
        return DESCRIBE[tree]
    parts = tree.split("_")  # tTMxTN_bBPS_kKPR[_BMxBNxBK]
    tm, tn = (int(x) for x in parts[0][1:].split("x"))
    block = parts[3] if len(parts) > 3 else "128x128x32"
    bm, bn, bk = (int(x) for x in block.split("x"))
    return (f"{tm} x {tn}", (bm // tm) * (bn // tn), int(parts[1][1:]), f"{bm} x {bn} x {bk}",
            int(parts[2][1:]))


rows = []
for arg in sys.argv[2:]:
    call, folder = arg.split("=")
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        tree = os.path.basename(path).rsplit("_r", 1)[0]
        for r in csv.DictReader(open(path)):
            runs.setdefault((tree, r["case"]), []).append(r)
    for (tree, case), rs in sorted(runs.items()):
        t = [float(r["chapter_graph_tflops"]) for r in rs]
        tile, threads, blocks, block_tile, per_read = describe(tree)
        rows.append({"call": call, "variant": tree, "thread_tile": tile, "threads": threads,
                     "blocks_per_sm": blocks, "block_tile": block_tile, "k_per_read": per_read,
                     "case": case, "processes": len(rs),
                     "tflops_median": f"{statistics.median(t):.2f}", "tflops_min": f"{min(t):.2f}",
                     "tflops_max": f"{max(t):.2f}",
                     "cublas_tflops_median": f"{statistics.median(float(r['cublas_graph_tflops']) for r in rs):.1f}",
                     "sm_clock_mhz_min": min(int(r["sm_clock_mhz"]) for r in rs),
                     "date": rs[0]["date"], "gpu": rs[0]["gpu"]})
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, list(rows[0]))
    w.writeheader()
    w.writerows(rows)
print(f"{sys.argv[1]}: {len(rows)} rows")
