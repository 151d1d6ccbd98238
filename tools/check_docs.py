#!/usr/bin/env python3
"""Checks README.md and docs/**/*.md (meson test check_docs, suite cpu):
  excerpts   "<!-- excerpt: PATH:A-B -->" and the fenced block right under it equal lines A-B of
             PATH (repository-relative);
  links      every relative link's target exists (http(s) and mailto links are not followed);
             #Lnn and #Lnn-Lmm anchors lie inside the target file, and a link whose text names
             lines ([gemm.cuh:40-52](...)) names the anchor's; any other anchor on a .md file
             (the file itself for "#id") names an <a id="..."> there or a GitHub heading slug;
  tables     every "<!-- table: ... -->" block is what tools/results_tables.py generates.
One "error: FILE:LINE: ..." line per problem; exit status 1 if there is any.
  tools/check_docs.py [--root DIR] [FILE...]     default: README.md and docs/**/*.md
"""
import argparse
import os
import re
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_tables  # noqa: E402

EXCERPT = re.compile(r"^<!-- excerpt: (\S+?):(\d+)(?:-(\d+))? -->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")
# [text](target) and ![alt](target), target up to the first space or closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
ANCHOR_ID = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LINE_ANCHOR = re.compile(r"^L(\d+)(?:-L(\d+))?$")
# A link that names its lines, [gemm.cuh:40-52](...#L40-L52): the text must name the anchor's lines.
NAMED_LINES = re.compile(r"\[[^\[\]`]*?:(\d+)(?:-(\d+))?\]\([^)#\s]+#L(\d+)(?:-L(\d+))?\)")


def strip_code_spans(line):
    """The line with the contents of `code spans` blanked, so that links in them are ignored."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading: the rendered text, lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def source_lines(path):
    """The lines of a file as GitHub numbers them: ended by "\n" alone (a lone "\r", as a progress
    bar writes, ends no line), "\r\n" taken as "\n"."""
    with open(path, errors="replace", newline="") as f:
        lines = [line.removesuffix("\r") for line in f.read().split("\n")]
    if lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    return lines


class Doc:
    """A markdown file: its lines, which of them are inside fenced code, its anchors."""

    def __init__(self, root, path):
        self.path = path
        with open(os.path.join(root, path)) as f:
            self.lines = f.read().splitlines()
        self.in_code = []
        fence = None
        for line in self.lines:
            match = FENCE.match(line.lstrip())
            if fence is None and match:
                fence = match.group(1)
                self.in_code.append(True)
            elif fence is not None:
                self.in_code.append(True)
                if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                    fence = None
            else:
                self.in_code.append(False)
        self._anchors = None

    def anchors(self):
        if self._anchors is None:
            anchors, counts = set(), {}
            for line, code in zip(self.lines, self.in_code):
                if code:
                    continue
                anchors.update(ANCHOR_ID.findall(line))
                match = HEADING.match(line)
                if match:
                    base = slug(match.group(2))
                    n = counts.get(base, 0)
                    counts[base] = n + 1
                    anchors.add(base if n == 0 else f"{base}-{n}")
            self._anchors = anchors
        return self._anchors


class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []
        self.docs = {}
        self.counts = {"excerpts": 0, "links": 0, "tables": 0}

    def error(self, path, line, message):
        self.errors.append(f"error: {path}:{line}: {message}")

    def doc(self, path):
        if path not in self.docs:
            self.docs[path] = Doc(self.root, path)
        return self.docs[path]

    def check(self, path):
        doc = self.doc(path)
        self.check_excerpts(doc)
        self.check_links(doc)
        self.check_tables(path)

    def check_excerpts(self, doc):
        for i, line in enumerate(doc.lines):
            match = EXCERPT.match(line)
            if not match or doc.in_code[i]:
                continue
            self.counts["excerpts"] += 1
            number = i + 1
            source, first = match.group(1), int(match.group(2))
            last = int(match.group(3) or first)
            full = os.path.join(self.root, source)
            if not os.path.isfile(full):
                self.error(doc.path, number, f"excerpt of {source}: no such file")
                continue
            wanted = source_lines(full)
            if not 1 <= first <= last <= len(wanted):
                self.error(doc.path, number, f"excerpt of {source}:{first}-{last}: the file has "
                           f"{len(wanted)} lines")
                continue
            if i + 1 >= len(doc.lines) or not FENCE.match(doc.lines[i + 1]):
                self.error(doc.path, number, "excerpt marker not followed by a fenced code block")
                continue
            fence = FENCE.match(doc.lines[i + 1]).group(1)
            body, j = [], i + 2
            while j < len(doc.lines) and doc.lines[j].rstrip() != fence:
                body.append(doc.lines[j])
                j += 1
            if j >= len(doc.lines):
                self.error(doc.path, number, "excerpt's code block is never closed")
                continue
            wanted = wanted[first - 1:last]
            if body == wanted:
                continue
            for k in range(max(len(body), len(wanted))):
                got = body[k] if k < len(body) else "(nothing)"
                want = wanted[k] if k < len(wanted) else "(nothing)"
                if got != want:
                    self.error(doc.path, i + 3 + k, f"excerpt differs from {source}:{first + k}: "
                               f"has {got.strip()!r}, the file {want.strip()!r} "
                               f"({len(body)} lines quoted, {len(wanted)} in the range)")
                    break

    def check_links(self, doc):
        for i, line in enumerate(doc.lines):
            if doc.in_code[i]:
                continue
            text = strip_code_spans(line)
            for target in LINK.findall(text) + HTML_LINK.findall(text):
                self.counts["links"] += 1
                self.check_link(doc, i + 1, target)
            for match in NAMED_LINES.finditer(text):
                first, last, anchor_first, anchor_last = match.groups()
                if (first, last) != (anchor_first, anchor_last):
                    self.error(doc.path, i + 1, f"link {match.group(0)}: its text names other "
                               f"lines than its anchor")

    def check_link(self, doc, number, target):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            return  # http:, https:, mailto:, ...: not followed
        path_part, _, anchor = target.partition("#")
        path_part = urllib.parse.unquote(path_part)
        if path_part:
            relative = os.path.normpath(os.path.join(os.path.dirname(doc.path), path_part))
            if relative.startswith(".."):
                self.error(doc.path, number, f"link to {target}: outside the repository")
                return
        else:
            relative = doc.path
        full = os.path.join(self.root, relative)
        if not os.path.exists(full):
            self.error(doc.path, number, f"link to {target}: {relative} does not exist")
            return
        if not anchor:
            return
        lines = LINE_ANCHOR.match(anchor)
        if lines:
            if os.path.isdir(full):
                self.error(doc.path, number, f"link to {target}: a line anchor on a folder")
                return
            count = len(source_lines(full))
            first, last = int(lines.group(1)), int(lines.group(2) or lines.group(1))
            if not 1 <= first <= last <= count:
                self.error(doc.path, number, f"link to {target}: {relative} has {count} lines")
            return
        if not relative.endswith(".md") or os.path.isdir(full):
            self.error(doc.path, number, f"link to {target}: #{anchor} is neither #Lnn nor "
                       f"an anchor of a markdown file")
            return
        if anchor not in self.doc(relative).anchors():
            self.error(doc.path, number, f"link to {target}: no <a id=\"{anchor}\"> or heading "
                       f"with that anchor in {relative}")

    def check_tables(self, path):
        _, errors, stale = results_tables.process(self.root, path)
        self.counts["tables"] += sum(1 for line in self.doc(path).lines
                                     if results_tables.START.match(line))
        for line, message in errors:
            self.error(path, line, message)
        for line in stale:
            self.error(path, line, "table is not what its CSV gives (run tools/results_tables.py "
                       "--write)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.join(here, ".."),
                        help="the repository root (default: this script's repository)")
    parser.add_argument("files", nargs="*", help="markdown files, repository-relative")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    files = args.files or results_tables.markdown_files(root)
    checker = Checker(root)
    for path in files:
        if not os.path.isfile(os.path.join(root, path)):
            checker.error(path, 0, "no such file")
            continue
        checker.check(path)
    for line in checker.errors:
        print(line)
    c = checker.counts
    print(f"check_docs: {len(files)} files, {c['excerpts']} excerpts, {c['links']} links, "
          f"{c['tables']} tables: {len(checker.errors)} problems")
    return 1 if checker.errors else 0


if __name__ == "__main__":
    sys.exit(main())
