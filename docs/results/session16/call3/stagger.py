# Patch chapter 08 so that the two consumer warpgroups run out of phase: consumer 1 starts only
# after consumer 0 has issued LAG K tiles of its first tile (named barrier 3, consumer 0 arrives,
# consumer 1 syncs). The ring keeps them at most kStages K tiles apart from then on, so while one
# stores its tile the other still has K tiles to multiply alone.
#   python3 stagger.py gemm.cuh LAG
import sys
path, lag = sys.argv[1], int(sys.argv[2])
s = open(path).read()
old_decl = "  int stage = 0;\n  uint32_t phase = 0;\n  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {\n    int row0, col0;\n    tile_origin(p, tile, row0, col0);\n    int previous = 0;"
new_decl = ("  int stage = 0;\n  uint32_t phase = 0;\n"
            f"  constexpr int kStaggerKTiles = {lag};\n"
            "  static_assert(kStaggerKTiles >= 1 && kStaggerKTiles <= kStages, \"the first fills need no release\");\n"
            "  if (consumer == 1) asm volatile(\"bar.sync 3, %0;\\n\" ::\"n\"(2 * kWarpgroupThreads) : \"memory\");\n"
            "  bool staggered = consumer == 1;\n"
            "  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {\n    int row0, col0;\n    tile_origin(p, tile, row0, col0);\n    int previous = 0;")
old_arrive = "      wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back to the producer\n"
new_arrive = ("      if (!staggered && (t == kStaggerKTiles - 1 || t == k_tiles - 1)) {\n"
              "        asm volatile(\"bar.arrive 3, %0;\\n\" ::\"n\"(2 * kWarpgroupThreads) : \"memory\");\n"
              "        staggered = true;\n"
              "      }\n" + old_arrive)
assert s.count(old_decl) == 1 and s.count(old_arrive) == 1
s = s.replace(old_decl, new_decl).replace(old_arrive, new_arrive)
open(path, "w").write(s)
print(f"stagger {lag} patched")
