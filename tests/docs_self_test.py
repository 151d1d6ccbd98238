#!/usr/bin/env python3
"""tools/check_docs.py and tools/results_tables.py must fail where the docs are wrong: on a small
repository made here, which passes as made, each break below (an excerpt that no longer matches
its file, a link to nothing, a line anchor past the end, a glossary id that does not exist, a
table its CSV no longer gives, a bad table spec) must give exactly one error line naming the file
and line, and a non-zero exit. Also checks the markdown a table spec generates, character for
character.
  tests/docs_self_test.py SOURCE_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile

CODE = "".join(f"line {i}\n" for i in range(1, 11))
CSV_A = "date,gpu,case,tflops,fraction\n" \
        "2026-01-01,GPU X,square,12.345,0.5\n" \
        "2026-01-01,GPU X,small,1.5,0.25\n"
CSV_B = "date,gpu,case,tflops\n2026-01-02,GPU X,square,20\n"
SPEC = ('{"file": "docs/results/a.csv", "where": {"case": "square"}, "columns": ["case", '
        '"tflops", "fraction"], "headers": ["case", "TFLOP/s", "share"], "format": {"tflops": '
        '"{:.1f}", "fraction": "{:.0%}"}}')
GLOB_SPEC = '{"file": "docs/results/**/*.csv", "columns": ["case", "fraction"]}'
DOC = f"""# A lesson

<!-- excerpt: code.txt:2-4 -->
```text
line 2
line 3
line 4
```

See [line 3](../code.txt#L3), [lines 2-5](../code.txt#L2-L5), a [warp tile](glossary.md#warp-tile),
[below](#a-heading), [the web](https://example.com/missing) and `[not a link](nowhere.md)`.

## A heading

<!-- table: {SPEC} -->
<!-- end table -->

<!-- table: {GLOB_SPEC} -->
<!-- end table -->
"""
GLOSSARY = """# Glossary

<a id="warp-tile"></a>
## Warp tile

The piece of a block tile one warp computes.
"""
README = "Start at [the lesson](docs/a.md) or the [glossary](docs/glossary.md#warp-tile).\n"
TABLE = """
| case | TFLOP/s | share |
|---|---:|---:|
| square | 12.3 | 50% |

Source: [docs/results/a.csv](results/a.csv), 2026-01-01, GPU X

"""
GLOB_TABLE = """
| case | fraction |
|---|---:|
| square | 0.5 |
| small | 0.25 |
| square | - |

Source: [docs/results/**/*.csv](results/), 2026-01-01, 2026-01-02, GPU X

"""


def make(root):
    files = {"code.txt": CODE, "docs/results/a.csv": CSV_A, "docs/results/more/b.csv": CSV_B,
             "docs/a.md": DOC, "docs/glossary.md": GLOSSARY, "README.md": README}
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)


def edit(root, path, old, new):
    full = os.path.join(root, path)
    with open(full) as f:
        text = f.read()
    if old not in text:
        raise AssertionError(f"self-test bug: {old!r} not in {path}")
    with open(full, "w") as f:
        f.write(text.replace(old, new, 1))


def run(tools, script, root, *args):
    result = subprocess.run([sys.executable, os.path.join(tools, script), "--root", root, *args],
                            capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def main():
    tools = os.path.join(sys.argv[1], "tools")
    failures = []

    def expect(condition, message):
        if not condition:
            failures.append(message)

    with tempfile.TemporaryDirectory() as scratch:
        good = os.path.join(scratch, "good")
        make(good)
        rc, out = run(tools, "results_tables.py", good, "--check")
        expect(rc == 1 and out.count("error: docs/a.md:") == 2,
               f"--check on empty tables: want 2 errors and exit 1, got {rc}: {out}")
        rc, out = run(tools, "results_tables.py", good, "--write")
        expect(rc == 0, f"--write: exit {rc}: {out}")
        with open(os.path.join(good, "docs/a.md")) as f:
            text = f.read()
        expect(f"{SPEC} -->\n{TABLE}<!-- end table -->" in text,
               f"the generated table is not the expected one:\n{text}")
        expect(f"{GLOB_SPEC} -->\n{GLOB_TABLE}<!-- end table -->" in text,
               f"the table over a glob is not the expected one:\n{text}")
        rc, out = run(tools, "results_tables.py", good, "--check")
        expect(rc == 0, f"--check after --write: exit {rc}: {out}")
        rc, out = run(tools, "check_docs.py", good)
        expect(rc == 0 and "error" not in out, f"check_docs on the good copy: exit {rc}: {out}")
        checks = 3

        breaks = [
            ("excerpt differs", "code.txt", "line 3\n", "line three\n",
             "docs/a.md:6: excerpt differs from code.txt:3"),
            ("lone carriage return", "code.txt", "line 2\n", "line 2\rline 2b\n",
             "docs/a.md:5: excerpt differs from code.txt:2"),  # GitHub's numbering: "\n" alone
            ("excerpt past the end", "docs/a.md", "code.txt:2-4", "code.txt:9-12",
             "docs/a.md:3: excerpt of code.txt:9-12: the file has 10 lines"),
            ("missing link target", "README.md", "docs/a.md", "docs/b.md",
             "README.md:1: link to docs/b.md: docs/b.md does not exist"),
            ("line anchor past the end", "docs/a.md", "#L2-L5", "#L2-L11",
             "docs/a.md:10: link to ../code.txt#L2-L11: code.txt has 10 lines"),
            ("unknown glossary id", "README.md", "#warp-tile", "#block-tile",
             "README.md:1: link to docs/glossary.md#block-tile: no <a id=\"block-tile\">"),
            ("unknown heading", "docs/a.md", "(#a-heading)", "(#another-heading)",
             "docs/a.md:11: link to #another-heading: no <a id"),
            ("stale table", "docs/results/a.csv", "12.345", "13.5",
             "docs/a.md:15: table is not what its CSV gives"),
            ("bad table spec", "docs/a.md", '"tflops", "fraction"]', '"tflop", "fraction"]',
             "docs/a.md:15: no column 'tflop' in docs/results/a.csv"),
        ]
        for name, path, old, new, wanted in breaks:
            broken = os.path.join(scratch, name.replace(" ", "_"))
            shutil.copytree(good, broken)
            edit(broken, path, old, new)
            rc, out = run(tools, "check_docs.py", broken)
            errors = [line for line in out.splitlines() if line.startswith("error:")]
            expect(rc == 1 and len(errors) == 1 and errors[0].startswith("error: " + wanted),
                   f"{name}: want exit 1 and one line 'error: {wanted}...', got exit {rc}:\n{out}")
            checks += 1
            if "table" in name:
                rc, out = run(tools, "results_tables.py", broken, "--check")
                expect(rc == 1 and "docs/a.md:15:" in out,
                       f"{name}: results_tables.py --check: exit {rc}: {out}")
                checks += 1

    for failure in failures:
        print("FAIL " + failure)
    print(f"docs self-test: {checks - len(failures)} of {checks} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
