#!/usr/bin/env python3
"""Chapter 17's phase clock: patches a copy of the tree so that the trainer prints where a step's
time goes, and turns what two patched trainers printed into one CSV.

    maint/phase_clock.py TREE
    maint/phase_clock.py csv DIR BEFORE AFTER --sm-clock-mhz MHZ --date DATE --gpu GPU

TREE: for measuring only, never for a commit: block 0's thread 0 reads clock64() after each
phase's barrier (the two barrier lines of chapters/17_step_tile/steps.cuh, found by their
comments, whatever barrier they call), adds up each phase's cycles over the launch's steps and
prints, at the end of the launch, one line: "phases grid BLOCKS steps STEPS total CYCLES
cycles/step: P0 P1 ...", the 2 L phases' cycles a step in order (forward 0 .. L-1, backward
0 .. L-1).

csv: reads DIR/phase_BEFORE*.txt and DIR/phase_AFTER*.txt (the patched trainers' output, one run
a file), takes each run's last such line, averages the runs and writes to stdout each phase's
microseconds at the SM clock the runs reported, before and after side by side, and the step's.
"""
import argparse
import glob
import re
import sys


def patch_tree(tree):
    path = tree + "/chapters/17_step_tile/steps.cuh"
    text = open(path).read()

    def patch(pattern, replacement):
        nonlocal text
        text, count = re.subn(pattern, replacement, text, flags=re.M)
        if count != 1:
            sys.exit(f"error: {path}: {count} matches for {pattern!r}, 1 expected")

    patch(r"^namespace mnist::step_tile \{\n",
          "namespace mnist::step_tile {\n#define PHASE_MARK(i) if (blockIdx.x == 0 && "
          "threadIdx.x == 0) { long long c = clock64(); pc[i] += c - pt; pt = c; }\n")
    patch(r"^(  const int first = \*m\.step_index;\n)",
          r"\1  long long pc[20] = {}; long long pt = clock64(); const long long t_start = pt;\n")
    patch(r"^(.*;  // the layer's output \(and dZ\), whole.*\n)", r"\1      PHASE_MARK(l)\n")
    patch(r"^(.*;  // dZ and the updated weights.*\n)", r"\1      PHASE_MARK(m.layers + j)\n")
    patch(r"^  if \(blockIdx\.x == 0 && threadIdx\.x == 0\) \*m\.step_index = first \+ steps;\n",
          "  if (blockIdx.x == 0 && threadIdx.x == 0) {\n"
          "    *m.step_index = first + steps;\n"
          "    printf(\"phases grid %d steps %d total %.0f cycles/step:\", gridDim.x, steps,"
          " double(clock64() - t_start) / steps);\n"
          "    for (int i = 0; i < 2 * m.layers; ++i) printf(\" %.0f\", double(pc[i]) / steps);\n"
          "    printf(\"\\\\n\");\n  }\n")
    open(path, "w").write(text)


def phase_names(count):
    """forward 0 .. L-1 (the last with the loss), backward 0 .. L-1, for 2 L phases."""
    layers = count // 2
    forward = [f"forward {l}" for l in range(layers)]
    forward[-1] += " and loss"
    return forward + [f"backward {j}" for j in range(layers)]


def mean_phases(pattern, mhz):
    runs = []
    for path in sorted(glob.glob(pattern)):
        lines = [l for l in open(path) if l.startswith("phases")]
        if lines:
            runs.append([float(x) for x in lines[-1].split(":")[1].split()])
    if not runs or any(len(r) != len(runs[0]) for r in runs):
        sys.exit(f"error: no phase lines, or runs of different depths, in {pattern}")
    return [sum(r[i] for r in runs) / len(runs) / mhz for i in range(len(runs[0]))], len(runs)


def write_csv(args):
    before, runs_before = mean_phases(f"{args.dir}/phase_{args.before}*.txt", args.sm_clock_mhz)
    after, runs_after = mean_phases(f"{args.dir}/phase_{args.after}*.txt", args.sm_clock_mhz)
    if len(before) != len(after):
        sys.exit("error: the two variants have different numbers of phases")
    print("phase,before_us,after_us,runs_each,sm_clock_mhz,date,gpu")
    for name, x, y in zip(phase_names(len(before)) + ["step"], before + [sum(before)],
                          after + [sum(after)]):
        print(f"{name},{x:.2f},{y:.2f},{min(runs_before, runs_after)},{args.sm_clock_mhz},"
              f"{args.date},{args.gpu}")


if len(sys.argv) >= 2 and sys.argv[1] == "csv":
    parser = argparse.ArgumentParser(prog="maint/phase_clock.py csv")
    parser.add_argument("dir")
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--sm-clock-mhz", type=int, required=True)
    parser.add_argument("--date", required=True)
    parser.add_argument("--gpu", required=True)
    write_csv(parser.parse_args(sys.argv[2:]))
elif len(sys.argv) == 2:
    patch_tree(sys.argv[1])
else:
    sys.exit("error: usage: maint/phase_clock.py TREE | csv DIR BEFORE AFTER --sm-clock-mhz MHZ "
             "--date DATE --gpu GPU")
