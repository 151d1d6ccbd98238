// What the results are measured on: recorded with every timing the project prints or writes.
#pragma once

#include <string>

namespace mnist {

struct GpuInfo {
  std::string name;
  int multiprocessors = 0;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;
  std::string driver;     // the driver's own version string, from NVML, or "unknown"
  int sm_clock_mhz = -1;  // current SM clock from NVML, -1 when NVML is unavailable
  int max_sm_clock_mhz = -1;
};

// True when a CUDA device can be used; the GPU tests SKIP (exit 77) otherwise.
bool gpu_available();
// Throws CudaError "no CUDA-capable GPU found: ..." when there is none.
GpuInfo query_gpu();
// The current SM clock of the current device from NVML, -1 when NVML is unavailable: what
// query_gpu() reads, without the rest.
int sm_clock_mhz();
// One line: name, SMs, clocks, driver, CUDA.
std::string describe(const GpuInfo& info);
// Device-to-device cudaMemcpy bandwidth in GB/s (bytes read + bytes written, per second): the
// median of 20 copies of 256 MiB, after warm-up. Floors of memory-bound work divide by it.
double copy_bandwidth_gb_per_s();
// Today's date in UTC, YYYY-MM-DD: the date column of every CSV with timings.
std::string utc_date();

}  // namespace mnist
