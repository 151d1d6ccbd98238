#!/usr/bin/env python3
"""The tables of measured numbers in README.md and docs/**/*.md, generated from committed CSVs.

A table lives between two markers:

    <!-- table: {"file": "docs/results/gemm/cases/03_mma_sync/median.csv", "columns": ["case", ...]} -->
    (anything: rewritten by --write)
    <!-- end table -->

The spec is one line of JSON:
  "file"     the CSV, relative to the repository root; a glob pattern (e.g.
             "docs/results/gemm/cases/*/median.csv"; "**" also matches subfolders) takes
             every match, in sorted order, as one CSV, a column missing from one of them shown
             as "-"
  "columns"  the CSV columns to show, in order
  "headers"  optional, the column titles (same length as "columns"; default: the column names)
  "where"    optional, {column: value or [values]}: keep only those rows, in file order
  "format"   optional, {column: python format string, e.g. "{:.1f}" or "{:.1%}"}, applied to
             numeric cells
Under the table goes one line "Source: [file](link), DATE, GPU", from the CSV's date and gpu
columns where it has them (each distinct value of the rows shown, in order).

  tools/results_tables.py --write    rewrite every table from its CSV
  tools/results_tables.py --check    exit 1, listing each table that is not what its CSV gives
Both print one "error: FILE:LINE: ..." line per bad spec and exit 1 on any.
"""
import argparse
import csv
import glob
import json
import os
import re
import sys

START = re.compile(r"^<!-- table: (.*) -->\s*$")
END = "<!-- end table -->"
KEYS = {"file", "columns", "headers", "where", "format"}


class SpecError(Exception):
    pass


def markdown_files(root):
    """README.md and docs/**/*.md, repository-relative, sorted."""
    paths = ["README.md"] if os.path.isfile(os.path.join(root, "README.md")) else []
    for directory, _, names in os.walk(os.path.join(root, "docs")):
        for name in names:
            if name.endswith(".md"):
                paths.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(paths)


def number(text):
    """The cell as an int or float, or None when it is not a number."""
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return None


def same_value(cell, wanted):
    a, b = number(cell), number(str(wanted))
    if a is not None and b is not None:
        return a == b
    return cell == str(wanted)


def read_rows(root, pattern):
    """The rows of the CSV(s) named by pattern, each a dict, and the files read."""
    if any(c in pattern for c in "*?["):
        paths = sorted(glob.glob(os.path.join(root, pattern), recursive=True))
        if not paths:
            raise SpecError(f"no file matches {pattern}")
    else:
        paths = [os.path.join(root, pattern)]
        if not os.path.isfile(paths[0]):
            raise SpecError(f"no file {pattern}")
    rows, fields = [], set()
    for path in paths:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields.update(reader.fieldnames or [])
            rows.extend(reader)
    return rows, fields, len(paths) > 1


def parse_spec(text):
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"the spec is not JSON: {e}")
    if not isinstance(spec, dict):
        raise SpecError("the spec must be a JSON object")
    unknown = set(spec) - KEYS
    if unknown:
        raise SpecError(f"unknown key(s) {', '.join(sorted(unknown))} (allowed: "
                        f"{', '.join(sorted(KEYS))})")
    if not isinstance(spec.get("file"), str):
        raise SpecError('"file" must name a CSV')
    columns = spec.get("columns")
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise SpecError('"columns" must be a non-empty list of column names')
    headers = spec.get("headers", columns)
    if not isinstance(headers, list) or len(headers) != len(columns):
        raise SpecError('"headers" must be a list as long as "columns"')
    for key in ("where", "format"):
        if not isinstance(spec.get(key, {}), dict):
            raise SpecError(f'"{key}" must be an object')
    return spec


def cell_text(value, fmt):
    if value is None:
        return "-"
    if fmt:
        n = number(value)
        if n is not None:
            try:
                return fmt.format(n)
            except (ValueError, TypeError):
                try:
                    return fmt.format(float(n))
                except (ValueError, TypeError) as e:
                    raise SpecError(f"format {fmt!r} does not apply to {value!r}: {e}")
    return value.replace("|", "\\|")


def render(spec, root, doc_path):
    """The markdown between the markers, for the doc at doc_path (repository-relative)."""
    rows, fields, several = read_rows(root, spec["file"])
    columns = spec["columns"]
    where = spec.get("where", {})
    formats = spec.get("format", {})
    for name in list(columns) + list(where) + list(formats):
        if name not in fields:
            raise SpecError(f"no column '{name}' in {spec['file']}")
    kept = []
    for row in rows:
        ok = True
        for name, wanted in where.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            cell = row.get(name)
            if cell is None or not any(same_value(cell, v) for v in values):
                ok = False
                break
        if ok:
            kept.append(row)
    if not kept:
        raise SpecError(f"no row of {spec['file']} matches {json.dumps(where)}")

    numeric = [all(number(r[c]) is not None for r in kept if r.get(c) is not None)
               for c in columns]
    headers = spec.get("headers", columns)
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for row in kept:
        lines.append("| " + " | ".join(cell_text(row.get(c), formats.get(c)) for c in columns)
                     + " |")

    target = os.path.relpath(os.path.join(root, spec["file"]),
                             os.path.join(root, os.path.dirname(doc_path)))
    if several:  # a glob: link the folder above its first wildcard
        fixed = []
        for part in spec["file"].split("/"):
            if any(c in part for c in "*?["):
                break
            fixed.append(part)
        target = os.path.relpath(os.path.join(root, *fixed),
                                 os.path.join(root, os.path.dirname(doc_path))) + "/"
    source = [f"Source: [{spec['file']}]({target})"]
    for name in ("date", "gpu"):
        seen = []
        for row in kept:
            value = row.get(name)
            if value and value not in seen:
                seen.append(value)
        if seen:
            source.append(", ".join(seen))
    return "\n" + "\n".join(lines) + "\n\n" + ", ".join(source) + "\n\n"


def process(root, doc_path):
    """(new text, [(line, error)], [line of each stale table]) for one markdown file."""
    with open(os.path.join(root, doc_path)) as f:
        text = f.read()
    lines = text.splitlines(keepends=True)
    out, errors, stale = [], [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        match = START.match(line)
        i += 1
        if not match:
            continue
        start = i  # 1-based line of the marker
        end = i
        while end < len(lines) and lines[end].rstrip("\n") != END:
            if START.match(lines[end]):
                break
            end += 1
        if end >= len(lines) or lines[end].rstrip("\n") != END:
            errors.append((start, f"table marker without '{END}'"))
            continue
        current = "".join(lines[i:end])
        try:
            wanted = render(parse_spec(match.group(1)), root, doc_path)
        except SpecError as e:
            errors.append((start, str(e)))
            out.extend(lines[i:end])
        else:
            if wanted != current:
                stale.append(start)
            out.append(wanted)
        i = end
    return "".join(out), errors, stale


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every table from its CSV")
    mode.add_argument("--check", action="store_true", help="fail on a table that is stale")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.join(here, ".."),
                        help="the repository root (default: this script's repository)")
    parser.add_argument("files", nargs="*", help="markdown files, repository-relative "
                        "(default: README.md and docs/**/*.md)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    failed = False
    written = tables = 0
    for doc in args.files or markdown_files(root):
        new, errors, stale = process(root, doc)
        tables += new.count("<!-- table: ")
        for line, message in errors:
            print(f"error: {doc}:{line}: {message}")
            failed = True
        if args.check:
            for line in stale:
                print(f"error: {doc}:{line}: table is not what its CSV gives "
                      f"(run tools/results_tables.py --write)")
                failed = True
        elif stale:
            with open(os.path.join(root, doc), "w") as f:
                f.write(new)
            written += len(stale)
    if args.write:
        print(f"results_tables: {written} of {tables} tables rewritten")
    elif not failed:
        print(f"results_tables: {tables} tables up to date")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
