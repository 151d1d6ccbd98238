// Timing two implementations of one product against each other in the same process, so that both
// see the same clock (bench/gemm_bench.cu: a chapter against cuBLAS; bench/fp8_bench.cu: the FP8
// kernel against cuBLASLt):
//   host:  launched one by one from the host: CUDA events around groups of launches after a
//          warm-up, median of the groups; one, then the other.
//   graph: up to kMaxLaunchesPerGraph launches captured into one CUDA graph; a burst replays it
//          for about kSampleMs. Bursts of the two alternate, kPairs pairs in ABBA order, so that
//          both run at the same clock: a large square heats the GPU and lowers its clock, and
//          whichever ran second would look slower. Per launch: the median over each one's
//          bursts, the GPU's own time.
// The SM clock is read during each burst. Before timing, both results are compared
// (relative_difference).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "gpu_info.hpp"

namespace mnist {

// Relative Frobenius-norm difference between two results of `count` floats on the device.
inline double relative_difference(const float* c, const float* c_ref, size_t count,
                                  cudaStream_t stream) {
  std::vector<float> mine(count), theirs(count);
  CUDA_CHECK(
      cudaMemcpyAsync(mine.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(
      cudaMemcpyAsync(theirs.data(), c_ref, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  double error = 0, norm = 0;
  for (size_t i = 0; i < count; ++i) {
    error += (double(mine[i]) - theirs[i]) * (double(mine[i]) - theirs[i]);
    norm += double(theirs[i]) * theirs[i];
  }
  return std::sqrt(error / norm);
}

constexpr int kWarmupLaunches = 3;
constexpr int kSamples = 15;
constexpr double kSampleMs = 2.0;  // a group of host launches, or a burst, lasts about this long
constexpr int kMaxLaunchesPerGraph = 20;
constexpr int kPairs = 20;  // even, so that each implementation runs first in half the pairs

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

// Median time of one launch, over kSamples groups of launches of about kSampleMs each.
template <class Launch>
double median_ms(Launch launch, const Events& events, cudaStream_t stream) {
  for (int i = 0; i < kWarmupLaunches; ++i) launch();
  const double once = elapsed_ms(launch, events, stream);
  const int per_sample = static_cast<int>(std::clamp(kSampleMs / once, 1.0, 1000.0));
  std::vector<double> samples;
  for (int s = 0; s < kSamples; ++s) {
    const double ms = elapsed_ms(
        [&] {
          for (int i = 0; i < per_sample; ++i) launch();
        },
        events, stream);
    samples.push_back(ms / per_sample);
  }
  return median(samples);
}

// A CUDA graph of `launches` launches of one product, replayed `replays` times per burst. It
// holds enough launches to run about kSampleMs, at most kMaxLaunchesPerGraph: a product that
// runs for milliseconds hides its launch anyway.
struct Burst {
  cudaGraphExec_t replay = nullptr;
  int launches = 1;
  int replays = 1;
};

template <class Launch>
Burst capture_burst(Launch launch, double launch_ms, const Events& events, cudaStream_t stream) {
  Burst burst;
  burst.launches = static_cast<int>(
      std::clamp(kSampleMs / launch_ms, 1.0, static_cast<double>(kMaxLaunchesPerGraph)));
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < burst.launches; ++i) launch();
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&burst.replay, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  // The first replay uploads the graph: a warm-up. The second sizes the burst.
  CUDA_CHECK(cudaGraphLaunch(burst.replay, stream));
  const double once =
      elapsed_ms([&] { CUDA_CHECK(cudaGraphLaunch(burst.replay, stream)); }, events, stream);
  burst.replays = static_cast<int>(std::clamp(kSampleMs / once, 1.0, 1000.0));
  return burst;
}

struct ClockRange {
  int min_mhz = -1, max_mhz = -1;  // -1 where NVML gives no clock
  void add(int mhz) {
    if (mhz < 0) return;
    min_mhz = min_mhz < 0 ? mhz : std::min(min_mhz, mhz);
    max_mhz = std::max(max_mhz, mhz);
  }
};

// Time per launch in one burst. The clock is read as soon as the burst is enqueued, so that NVML
// sees the GPU at work rather than idle between bursts.
inline double run_burst(const Burst& burst, const Events& events, cudaStream_t stream,
                        ClockRange& clock) {
  CUDA_CHECK(cudaEventRecord(events.start, stream));
  for (int r = 0; r < burst.replays; ++r) CUDA_CHECK(cudaGraphLaunch(burst.replay, stream));
  CUDA_CHECK(cudaEventRecord(events.stop, stream));
  clock.add(sm_clock_mhz());
  CUDA_CHECK(cudaEventSynchronize(events.stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
  return double(ms) / (burst.replays * burst.launches);
}

struct Timing {
  double host_ms;       // per launch, launched from the host
  double graph_ms;      // per launch, replayed from a CUDA graph: the median burst
  double graph_min_ms;  // the fastest and the slowest burst
  double graph_max_ms;
};

struct Comparison {
  Timing mine, theirs;
  ClockRange clock;  // over every burst of both
};

// Host timing of each, then kPairs pairs of bursts, the chapter first in even pairs and cuBLAS
// first in odd ones (ABBA): a drift of the clock over the pairs reaches both alike.
template <class Mine, class Theirs>
Comparison compare(Mine mine, Theirs theirs, const Events& events, cudaStream_t stream) {
  Comparison result{};
  result.mine.host_ms = median_ms(mine, events, stream);
  result.theirs.host_ms = median_ms(theirs, events, stream);
  Burst bursts[2] = {capture_burst(mine, result.mine.host_ms, events, stream),
                     capture_burst(theirs, result.theirs.host_ms, events, stream)};
  std::vector<double> times[2];
  for (int pair = 0; pair < kPairs; ++pair) {
    for (int i = 0; i < 2; ++i) {
      const int which = pair % 2 == 0 ? i : 1 - i;
      times[which].push_back(run_burst(bursts[which], events, stream, result.clock));
    }
  }
  Timing* timings[2] = {&result.mine, &result.theirs};
  for (int which = 0; which < 2; ++which) {
    timings[which]->graph_ms = median(times[which]);
    const auto [fastest, slowest] = std::minmax_element(times[which].begin(), times[which].end());
    timings[which]->graph_min_ms = *fastest;
    timings[which]->graph_max_ms = *slowest;
    CUDA_CHECK(cudaGraphExecDestroy(bursts[which].replay));
  }
  return result;
}

}  // namespace mnist
