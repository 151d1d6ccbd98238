#!/usr/bin/env python3
"""tools/check_numbers.py must fail on a number that drifted from the file its section links, and
pass the forms it allows: the value within its printed rounding, a fraction as a percentage, the
ratio of two printed numbers, a line marked derived, a version."""
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "check_numbers.py")
CSV = "case,fraction_of_cublas,ms\nsquare 4096,0.404207,1.6342\nfloor,0.5,0.6743\n"
GOOD = """# Results

## GEMM

Chapter 04 runs at 40.4% of cuBLAS ([gemm.csv](results/gemm.csv)), a step 1.6342 ms against a
floor of 0.6743 ms: 2.42 times the floor. Built with CUDA 13.0.
A step 1.70 times as long as the other's. <!-- derived -->
"""
CASES = [  # (name, text replaced, replacement, expected line in the output)
    ("drifted percentage", "40.4%", "36.9%", "docs/results.md:5: 36.9% is in no file"),
    ("drifted value", "1.6342 ms", "1.6442 ms", "docs/results.md:5: 1.6442 is in no file"),
    ("drifted ratio", "2.42 times", "2.52 times", "docs/results.md:6: 2.52 is in no file"),
    ("no link", "([gemm.csv](results/gemm.csv))", "", "docs/results.md:5: 40.4% is in no file"),
]


def run(root):
    result = subprocess.run([sys.executable, TOOL, "--root", root, "docs/results.md"],
                            capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "results"))
        with open(os.path.join(root, "docs", "results", "gemm.csv"), "w") as f:
            f.write(CSV)
        doc = os.path.join(root, "docs", "results.md")
        with open(doc, "w") as f:
            f.write(GOOD)
        rc, out = run(root)
        if rc != 0:
            print(f"FAIL the good doc: exit {rc}: {out}")
            failures += 1
        for name, old, new, expected in CASES:
            assert old in GOOD, name
            with open(doc, "w") as f:
                f.write(GOOD.replace(old, new))
            rc, out = run(root)
            if rc == 0 or expected not in out:
                print(f"FAIL {name}: exit {rc}, wanted {expected!r}: {out}")
                failures += 1
    if failures:
        return 1
    print(f"check_numbers self-test: the good doc passes, {len(CASES)} planted drifts fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
