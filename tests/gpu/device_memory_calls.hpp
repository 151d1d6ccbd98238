// Counts the calls of this process that allocate or free device memory through the CUDA runtime,
// so that a test can assert that none happens while training steps run.
//
// How: the test program is linked with `--wrap` for each of the five calls below (the ones
// tests/lint_allocations.sh keeps out of common/ and chapters/), which sends every call to them
// from the program's own code, the trainer and the chapter's kernels included, through a counting
// wrapper (device_memory_calls.cu). Link-time, so no LD_PRELOAD and no change to the code under
// test. It cannot see the driver API (cuMemAlloc) or calls made inside shared libraries; the
// tests keep a free-memory check for those.
#pragma once

namespace mnist::testing {

// cudaMalloc, cudaMallocManaged, cudaMallocAsync, cudaFree and cudaFreeAsync calls so far.
long device_memory_calls();

}  // namespace mnist::testing
