#!/usr/bin/env python3
"""The tracked tree speaks of the design and its measurements, never of how it was made: fails on
words of a work log (rounds of work, "call N", "the issue", "the first version", machine-only
paths) in any file git tracks (meson test history_words, suite cpu).
  tests/history_words.py [--root DIR]          one "error: FILE:LINE: ..." line per match
  tests/history_words.py --self-test           plants a word in a scratch tree and expects a failure
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

WORDS = re.compile(
    r"\bsessions?\b|\bsession ?\d+|\bcalls? \d+(\.\d+)?\b|\bthe issue\b(?!\s+slots?)|"
    r"\bthe first version\b|\bgoal set\b|\.device/|\bexp/s\d+",
    re.IGNORECASE)
# .gitignore keeps local folders (a GPU host's data among them) out of the tree: rules, not prose.
IGNORE_RULES = ".gitignore"
# This checker names the words it looks for.
SELF = "tests/history_words.py"


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def check(root, files):
    errors = []
    for path in files:
        if path in (SELF, IGNORE_RULES):
            continue
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue  # binary (gzip, PNG): no prose
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            match = WORDS.search(line)
            if match:
                errors.append(f"error: {path}:{number}: {match.group(0)!r} speaks of how the "
                              f"tree was made, not of the design")
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as scratch:
        def git(*args):
            subprocess.run(["git", "-C", scratch, *args], check=True, capture_output=True)
        git("init", "-q")
        clean = os.path.join(scratch, "doc.md")
        with open(clean, "w") as f:
            f.write("The kernel calls the barrier once per K tile.\n")
        git("add", "doc.md")
        if check(scratch, tracked(scratch)):
            print("error: self-test: a clean file was flagged")
            return 1
        for planted in ("Until session 22 the split took all blocks.",
                        "measured in call 3 of the run", "see the issue for the target",
                        "unzip .device/mnist-gz first"):
            with open(clean, "a") as f:
                f.write(planted + "\n")
            if not check(scratch, tracked(scratch)):
                print(f"error: self-test: {planted!r} was not flagged")
                return 1
            with open(clean, "w") as f:
                f.write("The kernel calls the barrier once per K tile.\n")
    print("history_words self-test: 4 planted words flagged, a clean file passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    errors = check(root, tracked(root))
    for line in errors:
        print(line)
    print(f"history_words: {len(errors)} matches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
