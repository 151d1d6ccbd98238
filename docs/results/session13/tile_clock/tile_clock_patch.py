# Experiment (not for commit into a chapter): where a block tile's time goes, and a grid barrier's.
# Block 0's thread 0 reads clock64() at five points of each multiply_tile call (tile.cuh) and four of
# each grid_barrier call, and adds the intervals up in shared memory (no memory traffic of its
# own); the kernel prints their means at the end of the launch, per kind of tile (the epilogue,
# and whether the product has more than one K tile).
#   python3 tile_clock_patch.py TREE
import sys
root = sys.argv[1] + "/chapters/10_persistent_step/"


def patch(name, pairs):
    path = root + name
    text = open(path).read()
    for old, new in pairs:
        assert text.count(old) == 1, (name, old)
        text = text.replace(old, new)
    open(path, "w").write(text)


patch("tile.cuh", [
    ("using smem_tiling::SmemTile;\n", """using smem_tiling::SmemTile;
__shared__ unsigned long long tile_clock[16][5];
__shared__ unsigned tile_calls[16];
#define TMARK(i) if (blockIdx.x == 0 && threadIdx.x == 0) { const long long c_ = clock64(); tile_clock[slot_][i] += c_ - tc_; tc_ = c_; }
"""),
    ("  __half* const ring = reinterpret_cast<__half*>(smem);\n", """  __half* const ring = reinterpret_cast<__half*>(smem);
  long long tc_ = clock64();
  const int slot_ = int(kKind) * 2 + (k_tiles > 1);
  if (blockIdx.x == 0 && threadIdx.x == 0) tile_calls[slot_]++;
"""),
    ("  float acc[kMmaTilesM][kMmaTilesN][4] = {};\n", "  TMARK(0)\n  float acc[kMmaTilesM][kMmaTilesN][4] = {};\n"),
    ("    load_stage(t + kStages - 1);\n", "    load_stage(t + kStages - 1);\n    if (t == 0) TMARK(1)\n"),
    ("  __syncthreads();  // nobody reads the ring any more: the partial tiles take its place\n",
     "  __syncthreads();  // nobody reads the ring any more: the partial tiles take its place\n  TMARK(2)\n"),
    ("    for (int e = 0; e < 4; ++e) v[e] += partial[(w * kAccumulators + warp * 4 + e) * 32 + lane];\n  }\n",
     "    for (int e = 0; e < 4; ++e) v[e] += partial[(w * kAccumulators + warp * 4 + e) * 32 + lane];\n  }\n  TMARK(3)\n"),
    ("  __syncthreads();  // the partial tiles are read before the next tile's copies overwrite them\n",
     "  __syncthreads();  // the partial tiles are read before the next tile's copies overwrite them\n  TMARK(4)\n"),
])
patch("grid_barrier.cuh", [
    ("constexpr unsigned kTopBit = 0x80000000u;\n", """constexpr unsigned kTopBit = 0x80000000u;
__shared__ unsigned long long barrier_clock[4];
__shared__ unsigned barrier_calls;
#define BMARK(i) if (blockIdx.x == 0 && threadIdx.x == 0) { const long long c_ = clock64(); barrier_clock[i] += c_ - bc_; bc_ = c_; }
"""),
    ("  __syncthreads();  // the block's writes of this phase come before its arrival\n",
     "  long long bc_ = clock64();\n  if (blockIdx.x == 0 && threadIdx.x == 0) barrier_calls++;\n"
     "  __syncthreads();  // the block's writes of this phase come before its arrival\n  BMARK(0)\n"),
    ("                 : \"memory\");\n    do {", "                 : \"memory\");\n    BMARK(1)\n    do {"),
    ("    } while (((now ^ arrived) & kTopBit) == 0);\n", "    } while (((now ^ arrived) & kTopBit) == 0);\n    BMARK(2)\n"),
    ("  __syncthreads();  // and the same for the block's other threads\n",
     "  __syncthreads();  // and the same for the block's other threads\n  BMARK(3)\n"),
])
patch("steps.cuh", [
    ("  const int first = *m.step_index;\n", """  const int first = *m.step_index;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 16; ++i) { tile_calls[i] = 0; for (int j = 0; j < 5; ++j) tile_clock[i][j] = 0; }
    barrier_calls = 0; for (int j = 0; j < 4; ++j) barrier_clock[j] = 0;
  }
  __syncthreads();
"""),
    ("  if (blockIdx.x == 0 && threadIdx.x == 0) *m.step_index = first + steps;\n", """  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (int s = 0; s < 16; ++s) {
      if (tile_calls[s] == 0) continue;
      printf("tile kind %d multi_k %d calls %u cycles: issue %.0f first_k_tile %.0f rest_of_k %.0f sum_warps %.0f finish %.0f\\n",
             s / 2, s % 2, tile_calls[s], double(tile_clock[s][0]) / tile_calls[s], double(tile_clock[s][1]) / tile_calls[s],
             double(tile_clock[s][2]) / tile_calls[s], double(tile_clock[s][3]) / tile_calls[s], double(tile_clock[s][4]) / tile_calls[s]);
    }
    printf("barrier calls %u cycles: block_sync %.0f arrive %.0f wait %.0f block_sync_after %.0f\\n", barrier_calls,
           double(barrier_clock[0]) / barrier_calls, double(barrier_clock[1]) / barrier_calls,
           double(barrier_clock[2]) / barrier_calls, double(barrier_clock[3]) / barrier_calls);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *m.step_index = first + steps;
"""),
])
