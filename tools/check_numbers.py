#!/usr/bin/env python3
"""Checks that every decimal number and percentage in a doc's prose is in a file its section links
(meson test check_numbers, suite cpu): a number printed with d decimals matches a value of a
linked CSV, log or markdown file that rounds to it (a percentage also matches a fraction: 0.404207
is 40.4%). The prose is every line outside code blocks, tables and HTML comments; a section is
the text under one heading; the files are the section's relative links into docs/results/ (a
folder: every file under it; .gz files read unpacked, a .tar.gz's CSV and text members). A
number worked out in the text may also be the ratio of two numbers printed in the same section
(1.6342 ms against a floor of 0.6743 ms: 2.42 times); one worked out otherwise, or quoted from a
datasheet, carries the marker <!-- derived --> on its line. Versions and settings (compute
capability 8.0, CUDA 13.0, lr 0.05) are not measurements.
One "error: FILE:LINE: ..." line per number not found; exit status 1 if there is any.
  tools/check_numbers.py [--root DIR] [FILE...]      default: README.md and docs/*.md
"""
import argparse
import gzip
import os
import re
import sys
import tarfile
import urllib.parse

def default_files(root):
    """README.md and every doc."""
    return ["README.md"] + sorted(
        os.path.join("docs", name) for name in os.listdir(os.path.join(root, "docs"))
        if name.endswith(".md"))
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?\s*\)")
# A decimal number or a percentage, not part of a version (13.0.1), a date or a name (sm_90a).
NUMBER = re.compile(r"(?<![\w.\-/])(\d+\.\d+|\d+)(%?)(?![\w.]*\d)(?![\w/])")
VALUE = re.compile(r"-?\d{1,3}(?:,\d{3})+(?![\d.])|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# The first number of a range whose second carries the unit: 33.7-38.1%.
RANGE_PERCENT = re.compile(r"^[-–]\d+(?:\.\d+)?%")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK_MARKUP = re.compile(r"\[[^\]]*\]\([^)]*\)")
DERIVED = "<!-- derived -->"
# Words before a number that make it a version or a setting, not a measurement.
SETTING = re.compile(r"(capability|meson|CUDA|PyTorch|Python|toolkit|version|lr|learning rate)\s+$",
                     re.IGNORECASE)


def sections(lines):
    """(first line number, lines) per heading, code blocks, tables and comments blanked."""
    out, current, start, in_code, in_comment = [], [], 1, False, False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_code = not in_code
            current.append((number, ""))
            continue
        if in_comment or line.lstrip().startswith("<!--") and DERIVED not in line:
            in_comment = "-->" not in line
            current.append((number, ""))
            continue
        if in_code or line.lstrip().startswith("|"):
            current.append((number, ""))
            continue
        if line.startswith("Source: "):  # a generated table's file: linked, not prose
            current.append((number, " ".join(LINK_MARKUP.findall(line))))
            continue
        if HEADING.match(line):
            out.append((start, current))
            current, start = [], number
        current.append((number, line))
    out.append((start, current))
    return out


def linked_files(root, doc, text):
    files = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = os.path.normpath(os.path.join(os.path.dirname(doc),
                                             urllib.parse.unquote(target.split("#")[0])))
        full = os.path.join(root, path)
        if not path.startswith("docs/results"):
            continue
        if os.path.isdir(full):
            for directory, _, names in os.walk(full):
                files += [os.path.join(directory, name) for name in names]
        elif os.path.isfile(full):
            files.append(full)
    return files


_values = {}


def values_of(path):
    if path not in _values:
        text = ""
        try:
            if path.endswith(".tar.gz"):  # its text members: reports' CSVs and pages
                with tarfile.open(path) as archive:
                    for member in archive.getmembers():
                        if member.isfile() and member.name.endswith((".csv", ".txt")):
                            text += archive.extractfile(member).read().decode("utf-8", "replace")
            else:
                opener = gzip.open if path.endswith(".gz") else open
                with opener(path, "rt", errors="replace") as f:
                    text = f.read()
        except (OSError, EOFError, tarfile.TarError):
            pass
        _values[path] = [float(v.replace(",", "")) for v in VALUE.findall(text)]
    return _values[path]


def matches(printed, percent, values, scale=1.0):
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    target = float(printed) * scale
    half = (0.5 * 10 ** -decimals + 1e-12) * scale
    for v in values:
        if abs(v - target) <= half or (percent and abs(100 * v - target) <= half):
            return True
    return False


def check(root, doc):
    with open(os.path.join(root, doc)) as f:
        lines = f.read().splitlines()
    errors, checked = [], 0
    for _, body in sections(lines):
        text = "\n".join(line for _, line in body)
        files = linked_files(root, doc, text)
        values = [v for path in files for v in values_of(path)]
        printed_here = []
        for _, line in body:
            if DERIVED in line:
                continue
            printed_here += [float(m.group(1)) for m in NUMBER.finditer(line)
                             if "." in m.group(1) and not SETTING.search(line[:m.start()])]
        ratios = [a / b for a in printed_here for b in printed_here if b and a is not b]
        for number, line in body:
            if not line or DERIVED in line:
                continue
            prose = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
            prose = LINK_MARKUP.sub(lambda m: " " * len(m.group(0)), prose)
            for match in NUMBER.finditer(prose):
                printed, percent = match.group(1), match.group(2) == "%"
                after = prose[match.end():]
                percent = percent or bool(RANGE_PERCENT.match(after))
                scale = 1e6 if re.match(r"\s+(million|M)\b", after) else 1.0
                if "." not in printed and not percent:
                    continue  # an integer: a size, a count, a date, a chapter
                if SETTING.search(prose[:match.start()]):
                    continue
                checked += 1
                if not matches(printed, percent, values, scale) and \
                        not matches(printed, False, ratios):
                    errors.append(f"error: {doc}:{number}: {printed}{match.group(2)} is in no "
                                  f"file the section links ({len(files)} files)")
    return errors, checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.join(here, ".."))
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    errors, checked = [], 0
    for doc in args.files or default_files(root):
        e, c = check(root, doc)
        errors += e
        checked += c
    for line in errors:
        print(line)
    print(f"check_numbers: {checked} numbers, {len(errors)} not found")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
