"""The table of call 1: per variant tree, the median fraction of cuBLAS (CUDA-graph timing, cuBLAS
in the same process) over the call's 4 processes for each square product, with the lowest and
highest. Reads call1/csv.tgz, writes call1/variants.md.
  python3 docs/results/session25/variants_table.py"""
import csv
import io
import os
import statistics
import tarfile

here = os.path.dirname(os.path.abspath(__file__))
cases = ["square 4096", "square 4096 backward-data", "square 4096 backward-weight", "square 8192"]
what = {
    "03_base": "chapter 03 as of 232c7c1: K step 32, no register cap",
    "03_bk64": "K step 64",
    "03_bk64_lb2": "K step 64, 2 blocks per SM (128 registers): committed since",
    "03_lb3": "3 blocks per SM (80 registers)",
    "04_base": "chapter 04 as committed: 128 x 128, K step 32, 4 stages",
    "04_bk64_s3": "K step 64, 3 stages",
    "04_bk64_s3_lb2": "K step 64, 3 stages, 2 blocks per SM (128 registers)",
    "04_bm256": "256 x 128 block tile, 16 warps, 4 stages",
    "04_bm256_s5": "256 x 128, 16 warps, 5 stages",
    "04_bm256_bk64_s3": "256 x 128, 16 warps, K step 64, 3 stages",
    "04_bn256": "128 x 256 block tile, 16 warps, 4 stages",
}
fractions = {}
with tarfile.open(os.path.join(here, "call1", "csv.tgz")) as tar:
    for member in tar.getmembers():
        if not member.name.endswith(".csv"):
            continue
        tree = os.path.basename(member.name).rsplit("_r", 1)[0]
        for row in csv.DictReader(io.TextIOWrapper(tar.extractfile(member))):
            fractions.setdefault((tree, row["case"]), []).append(
                float(row["graph_fraction_of_cublas"]))
lines = ["| tree | what | processes | " + " | ".join(cases) + " |",
         "|---|---|---:|" + "---:|" * len(cases)]
for tree in what:
    cells = []
    for case in cases:
        f = fractions[(tree, case)]
        cells.append(f"{statistics.median(f):.1%} ({min(f):.1%}-{max(f):.1%})")
    lines.append(f"| {tree} | {what[tree]} | {len(fractions[(tree, cases[0])])} | "
                 + " | ".join(cells) + " |")
with open(os.path.join(here, "call1", "variants.md"), "w") as out:
    out.write("\n".join(lines) + "\n")
print("\n".join(lines))
