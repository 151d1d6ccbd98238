#!/usr/bin/env python3
"""Patches a copy of the tree so that chapter 10's trainer prints where a step's time goes.

    tools/phase_clock.py TREE

For measuring only, never for a commit: block 0's thread 0 reads clock64() after each phase's
barrier (the two barrier lines of chapters/10_persistent_step/steps.cuh, found by their comments,
whatever barrier they call), adds up each phase's cycles over the launch's steps and prints, at the
end of the launch, one line: "phases grid BLOCKS steps STEPS total CYCLES cycles/step: P0 P1 ...",
the 2 L phases' cycles a step in order (forward 0 .. L-1, backward 0 .. L-1). Divide by the SM
clock for time. Used by docs/results/session12 and session13 (earlier copies live there as
phase_patch.py).
"""
import re
import sys

if len(sys.argv) != 2:
    sys.exit("error: usage: tools/phase_clock.py TREE")
path = sys.argv[1] + "/chapters/10_persistent_step/steps.cuh"
text = open(path).read()


def patch(pattern, replacement):
    global text
    text, count = re.subn(pattern, replacement, text, flags=re.M)
    if count != 1:
        sys.exit(f"error: {path}: {count} matches for {pattern!r}, 1 expected")


patch(r"^namespace mnist::persistent_step \{\n",
      "namespace mnist::persistent_step {\n#define PHASE_MARK(i) if (blockIdx.x == 0 && "
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
