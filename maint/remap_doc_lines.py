#!/usr/bin/env python3
"""Moves the docs' line references along with the code: after an edit that shifts lines of a
file the docs quote, every excerpt range ("<!-- excerpt: PATH:A-B -->") and every #Lnn / #Lnn-Lmm
link into that file is mapped through the diff between BASE (a commit) and the working tree.
A line that the edit changed or removed is left as it was and reported; tools/check_docs.py
then says which excerpts still differ.
    maint/remap_doc_lines.py BASE [FILE...]     default: README.md and docs/**/*.md
"""
import difflib
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from check_docs import EXCERPT  # noqa: E402  the marker as the checker reads it

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A link with a line anchor, and the lines its text names where it names them (gemm.cuh:40-52).
LINE_LINK = re.compile(r"(\[[^\[\]`]*?)(?::(\d+)(?:-(\d+))?)?\]\(([^)\s#]+)#L(\d+)(?:-L(\d+))?\)")


def line_map(base, path):
    """{old line: new line} for the lines of `path` that BASE and the working tree share."""
    try:
        old = subprocess.run(["git", "-C", ROOT, "show", f"{base}:{path}"], check=True,
                             capture_output=True, text=True).stdout.splitlines()
    except subprocess.CalledProcessError:
        return None  # not in BASE
    with open(os.path.join(ROOT, path)) as f:
        new = f.read().splitlines()
    mapping = {}
    for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        for i in range(block.size):
            mapping[block.a + i + 1] = block.b + i + 1
    return mapping


def remap_file(doc, base, maps, problems):
    doc_dir = os.path.dirname(doc)

    def mapped(path, number, where):
        if path not in maps:
            maps[path] = line_map(base, path) if os.path.isfile(os.path.join(ROOT, path)) else None
        mapping = maps[path]
        if mapping is None or number not in mapping:
            if mapping is not None:
                problems.append(f"{where}: {path}:{number} was changed or removed since {base}")
            return number
        return mapping[number]

    with open(os.path.join(ROOT, doc)) as f:
        lines = f.read().split("\n")
    changed = False
    for index, line in enumerate(lines):
        where = f"{doc}:{index + 1}"
        match = EXCERPT.match(line)
        if match:
            path, a, b = match.groups()
            span = str(mapped(path, int(a), where))
            if b:
                span += f"-{mapped(path, int(b), where)}"
            new = line[:match.start(2)] + span + line[match.end(3 if b else 2):]
        else:
            def link(m):
                text, text_first, text_last, path, a, b = m.groups()
                target = os.path.normpath(os.path.join(doc_dir, path))
                first = mapped(target, int(a), where)
                last = mapped(target, int(b), where) if b else None
                if text_first == a and text_last == b:  # the text names the same lines
                    text += f":{first}" + (f"-{last}" if b else "")
                elif text_first:
                    text += f":{text_first}" + (f"-{text_last}" if text_last else "")
                return f"{text}]({path}#L{first}" + (f"-L{last}" if b else "") + ")"
            new = LINE_LINK.sub(link, line)
        if new != line:
            lines[index] = new
            changed = True
    if changed:
        with open(os.path.join(ROOT, doc), "w") as f:
            f.write("\n".join(lines))
    return changed


def main(argv):
    if not argv:
        sys.exit(__doc__)
    base, files = argv[0], argv[1:]
    if not files:
        files = ["README.md"] + sorted(
            os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs/**/*.md"),
                                                        recursive=True))
    maps, problems = {}, []
    moved = [doc for doc in files if remap_file(doc, base, maps, problems)]
    for problem in problems:
        print(f"warning: {problem}")
    print(f"remap_doc_lines: {len(moved)} of {len(files)} files updated")


if __name__ == "__main__":
    main(sys.argv[1:])
