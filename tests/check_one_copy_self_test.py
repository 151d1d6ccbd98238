#!/usr/bin/env python3
"""tests/check_one_copy.py on dumps written by hand: a kernel in one ELF a target passes, the same
kernel in two ELFs of one target fails, and the same kernel built for two targets passes. Needs no
GPU and no CUDA toolkit (meson test, suite cpu)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_one_copy  # noqa: E402


def elf(arch, *kernels):
    return f"\nFatbin elf code:\n================\narch = {arch}\ncode version = [1,8]\n" + "".join(
        f"\tFunction : {k}\n\t/*0000*/ EXIT ;\n" for k in kernels)


def main():
    failures = []
    cases = [
        ("one copy each", elf("sm_90a", "_Z1av") + elf("sm_90a", "_Z1bv"), 0),
        ("a kernel in two units", elf("sm_90a", "_Z1av", "_Z1bv") + elf("sm_90a", "_Z1bv"), 1),
        ("a kernel for two targets", elf("sm_80", "_Z1av") + elf("sm_90a", "_Z1av"), 0),
    ]
    for name, dump, expected in cases:
        found = sum(1 for n in check_one_copy.copies(dump).values() if n > 1)
        if found != expected:
            failures.append(f"{name}: {found} kernels in two units, expected {expected}")
    for failure in failures:
        print("FAIL", failure)
    print(f"check_one_copy self-test: {len(cases) - len(failures)} of {len(cases)} cases right")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
