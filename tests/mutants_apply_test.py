#!/usr/bin/env python3
"""Every mutant of tools/mutants.txt still applies to the code, without a GPU.

tools/mutate.sh puts each plausible bug into a copy of the tree by replacing a piece of text that
must occur exactly once in its file; when the code changes under it (a comment reworded, a line
split), the mutant no longer applies, and only a GPU run of tools/mutate.sh would say so. This
test says so in CI: for each mutant, the file exists, the text to replace occurs once (after the
same trimming and "\\n" expansion as mutate.sh), the replacement differs, the name is unique and
the test it names is one the build makes.

    tests/mutants_apply_test.py SOURCE_ROOT
"""
import re
import sys
from pathlib import Path

# A mutant's test is whole:PROGRAM for the GEMM test on every shape, stress:PROGRAM for a build
# with -Drace_stress=true, TOOL:PROGRAM for the runs that go through compute-sanitizer's TOOL or
# through check_fences.py, check_tma_stores.py or check_wgmma_waits.py, program:train_CHAPTER for the trainer run by its chapter's end-to-end test, else PROGRAM; a
# chapter's trainer, train_CHAPTER, counts as a program.
CHAPTER_PROGRAM = re.compile(r"(test_gemm|test_training|test_training_fp8|train)_(\d\d_[a-z0-9_]+)")
TOOLS = {"whole", "stress", "fences", "tma_stores", "wgmma_waits", "program", "memcheck", "racecheck", "initcheck",
         "synccheck"}


def programs_of(root: Path) -> set:
    """The test programs tests/meson.build makes by a name of their own: those of its cpu_tests
    table ('idx': ['test_idx.cpp'] is test_idx) and those named in an executable() call. A
    chapter's (test_gemm_ + chapter) are matched by CHAPTER_PROGRAM instead."""
    meson = (root / "tests/meson.build").read_text()
    table = re.findall(r"'(\w+)': \['test_\w+\.cpp'\]", meson)
    return {"test_" + name for name in table} | set(re.findall(r"executable\('(test_\w+)',", meson))


def problems_of(root: Path) -> list:
    chapters = {p.name for p in (root / "chapters").iterdir() if p.is_dir()}
    programs = programs_of(root)
    problems, names = [], set()
    for number, line in enumerate((root / "tools/mutants.txt").read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("|")
        where = f"tools/mutants.txt:{number}"
        if len(fields) != 5:
            problems.append(f"{where}: {len(fields)} fields, not 5 (name|test|file|old|new)")
            continue
        name, target, file, old, new = (f.strip() for f in fields)
        old, new = old.replace("\\n", "\n"), new.replace("\\n", "\n")
        if name in names:
            problems.append(f"{where}: the name {name} is taken")
        names.add(name)
        tool, _, program = target.rpartition(":")
        if tool and tool not in TOOLS:
            problems.append(f"{where}: {name}: unknown tool '{tool}'")
        chapter = CHAPTER_PROGRAM.fullmatch(program)
        if not (program in programs or (chapter and chapter.group(2) in chapters)):
            problems.append(f"{where}: {name}: no test program '{program}'")
        path = root / file
        if not path.is_file():
            problems.append(f"{where}: {name}: no file {file}")
            continue
        count = path.read_text().count(old)
        if count != 1:
            problems.append(f"{where}: {name}: '{old}' occurs {count} times in {file}, not once")
        if old == new:
            problems.append(f"{where}: {name}: the replacement is the text itself")
    if not names:
        problems.append("tools/mutants.txt: no mutant")
    return problems


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = problems_of(root)
    for p in problems:
        print(f"FAIL {p}")
    print(f"mutants_apply: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
