/** @file
 *  CUDA-event timing.
 */
#include "common/timing.h"

#include <algorithm>
#include <cmath>

namespace hm {

namespace {
/// Two events, destroyed with the scope.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};
}  // namespace

Status time_launches(const LaunchFn& launch, int warmup, int reps, cudaStream_t stream,
                     std::vector<double>* samples_ms) {
  for (int i = 0; i < warmup; ++i) HM_TRY(launch(i));
  std::vector<EventPair> events(reps);
  for (auto& e : events) {
    HM_CUDA_TRY(cudaEventCreate(&e.start));
    HM_CUDA_TRY(cudaEventCreate(&e.stop));
  }
  for (int i = 0; i < reps; ++i) {
    HM_CUDA_TRY(cudaEventRecord(events[i].start, stream));
    HM_TRY(launch(warmup + i));
    HM_CUDA_TRY(cudaEventRecord(events[i].stop, stream));
  }
  HM_CUDA_TRY(cudaStreamSynchronize(stream));
  for (auto& e : events) {
    float ms = 0;
    HM_CUDA_TRY(cudaEventElapsedTime(&ms, e.start, e.stop));
    samples_ms->push_back(ms);
  }
  return Status();
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

int rotation_sets(long long bytes_per_set, long long l2_bytes) {
  if (bytes_per_set <= 0) return 1;
  const long long sets = (2 * l2_bytes + bytes_per_set - 1) / bytes_per_set;
  return int(std::clamp(sets, 1LL, 16LL));
}

}  // namespace hm
