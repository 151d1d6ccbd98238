#include "gpu_info.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <ctime>
#include <vector>

#include "cuda_check.cuh"
#include "device_arena.cuh"

namespace mnist {
namespace {

// NVML is opened at run time so that nothing links against the driver: the build works on
// machines without one, and a missing NVML only leaves the clock fields unknown. Opened and
// initialised once per process (nvml()): a benchmark reads the clock after every burst.
struct Nvml {
  using Init = int (*)();
  using Handle = int (*)(const char*, void**);
  using Clock = int (*)(void*, int, unsigned*);
  using Version = int (*)(char*, unsigned);
  static constexpr int kClockSm = 1;  // NVML_CLOCK_SM

  Handle handle_of = nullptr;
  Clock clock = nullptr, max_clock = nullptr;
  Version version = nullptr;
  bool ready = false;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
    handle_of = reinterpret_cast<Handle>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<Clock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<Clock>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    version = reinterpret_cast<Version>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    ready = init && handle_of && init() == 0;
  }

  // The CUDA device's NVML handle, or null. Found by PCI bus id: NVML numbers every GPU of the
  // machine, CUDA only those CUDA_VISIBLE_DEVICES lets it see, in its own order.
  void* handle(int device) const {
    char bus_id[32] = {};
    void* h = nullptr;
    return ready && cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) == cudaSuccess &&
                   handle_of(bus_id, &h) == 0
               ? h
               : nullptr;
  }

  // A clock in MHz through `read` (clock or max_clock), -1 where NVML gives none.
  static int mhz(Clock read, void* handle) {
    unsigned value = 0;
    return handle && read && read(handle, kClockSm, &value) == 0 ? static_cast<int>(value) : -1;
  }

  void read(GpuInfo& info, int device) const {
    void* const h = handle(device);
    info.sm_clock_mhz = mhz(clock, h);
    info.max_sm_clock_mhz = mhz(max_clock, h);
    char text[96] = {};
    if (h && version && version(text, sizeof text) == 0) info.driver = text;
  }
};

const Nvml& nvml() {
  static const Nvml instance;
  return instance;
}

}  // namespace

bool gpu_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

GpuInfo query_gpu() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    throw CudaError(std::string("no CUDA-capable GPU found: ") +
                    (status == cudaSuccess ? "no devices" : cudaGetErrorString(status)));
  }
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp props{};
  CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  GpuInfo info;
  info.name = props.name;
  info.multiprocessors = props.multiProcessorCount;
  info.driver = "unknown";
  CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  nvml().read(info, device);
  return info;
}

int sm_clock_mhz() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return -1;
  return Nvml::mhz(nvml().clock, nvml().handle(device));
}

std::string describe(const GpuInfo& info) {
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  return info.name + ", " + std::to_string(info.multiprocessors) + " SMs, SM clock " +
         std::to_string(info.sm_clock_mhz) + "/" + std::to_string(info.max_sm_clock_mhz) +
         " MHz, driver " + info.driver + " (CUDA " + version(info.driver_version) + "), runtime " +
         version(info.runtime_version);
}

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

double copy_bandwidth_gb_per_s() {
  constexpr size_t kBytes = size_t(256) << 20;
  constexpr int kWarmup = 3, kRepeats = 20;
  char *source = nullptr, *target = nullptr;
  DeviceArena arena([&](DeviceArena& a) {
    source = a.take<char>(kBytes);
    target = a.take<char>(kBytes);
  });
  CUDA_CHECK(cudaMemset(source, 0xA5, kBytes));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms(kRepeats);
  for (int r = -kWarmup; r < kRepeats; ++r) {
    CUDA_CHECK(cudaEventRecord(start));
    CUDA_CHECK(cudaMemcpyAsync(target, source, kBytes, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    if (r >= 0) CUDA_CHECK(cudaEventElapsedTime(&ms[r], start, stop));
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::nth_element(ms.begin(), ms.begin() + kRepeats / 2, ms.end());
  return 2.0 * kBytes / (ms[kRepeats / 2] * 1e-3) / 1e9;
}

}  // namespace mnist
