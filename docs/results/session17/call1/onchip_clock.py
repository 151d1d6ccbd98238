# Experiment only: block 0's thread 0 of the on-chip kernel reads clock64() between its sections
# and prints the mean cycles a step of each at the end of the launch.   python3 onchip_clock.py TREE
import sys
path = sys.argv[1] + "/chapters/10_persistent_step/on_chip.cuh"
t = open(path).read()
def ins(anchor, text, after=False):
    global t
    assert t.count(anchor) == 1, anchor
    t = t.replace(anchor, anchor + text if after else text + anchor)
ins("  cluster.sync();  // every block has started", "  long long oc_t = clock64(), oc[16] = {};\n#define OCM(i) if (me == 0 && threadIdx.x == 0) { long long c_ = clock64(); oc[i] += c_ - oc_t; oc_t = c_; }\n")
ins("\n    // Forward through the hidden layers", "\n    OCM(0)")
ins("      // Own columns to the other blocks", "      OCM(l == 0 ? 1 : 4)\n")
ins("      receive(arrivals, arrival, (kClusterBlocks - 1) * kOnChipRows * own * 2, phases);\n", "      OCM(l == 0 ? 2 : 5)\n")
ins("      receive(arrivals, arrival, (kClusterBlocks - 1) * kOnChipRows * own * 2, phases);\n", "      OCM(l == 0 ? 3 : 6)\n", after=True)
ins("    // Warp 0 alone: 32 rows need no block-wide tree", "    OCM(7)\n")
ins("    {\n      // dZ of the layer below, own columns", "    OCM(8)\n")
ins("      // The output layer's SGD: every block computes", "      OCM(9)\n")
ins("    // Backward through the hidden layers above the first.", "    OCM(10)\n")
ins("      float* const w32 = floats(s.weight32[l]);", "      OCM(11)\n")
ins("      receive(arrivals, partial_arrival(l % 2),", "      OCM(12)\n")
ins("      // dZ of the layer below, own columns: the 16 partials", "      OCM(13)\n")
ins("    // The first layer's SGD: the batch as X", "    OCM(14)\n")
ins("  }\n  masters.store(", "    OCM(15)\n")
ins("  move_parameters(m, s, smem, me, false);\n", """  if (me == 0 && threadIdx.x == 0) {
    printf("onchip steps %d cycles/step:", steps);
    for (int i = 0; i < 16; ++i) printf(" %d:%.0f", i, double(oc[i]) / steps);
    printf("\\n");
  }
""", after=True)
open(path, "w").write(t)
