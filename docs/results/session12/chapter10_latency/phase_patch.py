# Experiment (not for commit into a chapter): per-phase clock64 of block 0's thread 0 in the
# persistent kernel, averaged over the launch's steps and printed at its end. Session 11's patch
# (../../session11/chapter10_sync/phase_patch.py) for the kernel of 2 L phases a step.
#   python3 phase_patch.py TREE
import sys
p = sys.argv[1] + "/chapters/10_persistent_step/steps.cuh"
t = open(p).read()
def rep(old, new):
    global t
    assert t.count(old) == 1, old
    t = t.replace(old, new)
rep("namespace mnist::persistent_step {\n", """namespace mnist::persistent_step {
#define PHASE_MARK(i) if (blockIdx.x == 0 && threadIdx.x == 0) { long long c = clock64(); pc[i] += c - pt; pt = c; }
""")
rep("  const int first = *m.step_index;\n", """  const int first = *m.step_index;
  long long pc[20] = {}; long long pt = clock64(); const long long t_start = pt;
""")
rep("      grid_barrier(m.barrier);  // the layer's output (and dZ), whole, before the next phase\n",
    "      grid_barrier(m.barrier);  // the layer's output (and dZ), whole, before the next phase\n      PHASE_MARK(l)\n")
rep("      grid_barrier(m.barrier);  // dZ and the updated weights, before the next phase or step\n",
    "      grid_barrier(m.barrier);  // dZ and the updated weights, before the next phase or step\n      PHASE_MARK(m.layers + j)\n")
rep("  if (blockIdx.x == 0 && threadIdx.x == 0) *m.step_index = first + steps;\n",
    """  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *m.step_index = first + steps;
    printf("phases grid %d steps %d total %.0f cycles/step:", gridDim.x, steps, double(clock64() - t_start) / steps);
    for (int i = 0; i < 2 * m.layers; ++i) printf(" %.0f", double(pc[i]) / steps);
    printf("\\n");
  }
""")
open(p, "w").write(t)
