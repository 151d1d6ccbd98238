#!/usr/bin/env python3
"""Sessions 15 and 16's square-product experiments on chapter 08, one row per tree of each call: the
median over the call's processes of the chapter's fraction of cuBLAS (CUDA-graph timing), per case.
  docs/results/ladder/squares_calls.py > docs/results/ladder/squares_calls.md
"""
import csv
import io
import os
import statistics
import tarfile
from collections import defaultdict

RESULTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALLS = [  # (call, tarball under docs/results, {tree: what it is})
    ("15.2", "session15/call2/r2.tar.gz", {"old": "HEAD", "new": "clusters, release.cluster arrivals",
                            "cta": "clusters, CTA-scope arrivals"}),
    ("15.3", "session15/call3/r3.tar.gz", {"old": "HEAD", "cta": "clusters, CTA-scope arrivals"}),
    ("15.4", "session15/call4/r4.tar.gz", {"old": "HEAD",
                                           "noepi": "no stores, results unused: no math left"}),
    ("15.5", "session15/call5/r5.tar.gz", {"old": "HEAD", "epi": "stored through TMA"}),
    ("15.6", "session15/call6/r6.tar.gz", {"old": "HEAD", "epi": "stored through TMA",
                                           "s3b4": "TMA, 3 stages, 4 boxes"}),
    ("16.1", "session16/call1/r1.tar.gz", {"old": "HEAD (stored through TMA)",
                                           "alive": "no stores, results used (bound)",
                                           "dead": "no stores, results unused: no math left"}),
    ("16.2", "session16/call2/r2.tar.gz", {"old": "HEAD (stored through TMA)",
                                           "alive": "no stores, results used (bound)"}),
    ("16.3", "session16/call3/r3.tar.gz", {"old": "HEAD (stored through TMA)",
                                           "lag2": "consumers 2 K tiles apart",
                                           "lag4": "consumers 4 K tiles apart"}),
    ("16.4", "session16/call4/squares_ab.tar.gz", {"a": "HEAD", "b": "HEAD again (same code)"}),
]
CASES = ["square 4096", "square 4096 backward-data", "square 4096 backward-weight", "square 8192"]


def main():
    print("Chapter 08's fraction of cuBLAS, median over the call's processes (H100, 2026-11-24);")
    print("call 15.4 is session 15's call 4.\n")
    print("| call | tree | processes | 4096 | 4096 backward-data | 4096 backward-weight | 8192 |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for call, tarball, trees in CALLS:
        fractions = defaultdict(lambda: defaultdict(list))  # tree -> case -> values
        processes = defaultdict(int)
        with tarfile.open(os.path.join(RESULTS, tarball)) as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")
                if not (member.isfile() and parts[-1].startswith("squares_")):
                    continue
                tree = parts[-2]
                processes[tree] += 1
                text = tar.extractfile(member).read().decode()
                for row in csv.DictReader(io.StringIO(text)):
                    fractions[tree][row["case"]].append(float(row["graph_fraction_of_cublas"]))
        for tree, what in trees.items():
            cells = " | ".join(f"{100 * statistics.median(fractions[tree][c]):.1f}%" for c in CASES)
            print(f"| {call} | {what} | {processes[tree]} | {cells} |")


if __name__ == "__main__":
    main()
