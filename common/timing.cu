/** @file
 *  CUDA-event timing, and the kernel that holds a stream while the host makes a launch call.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "common/timing.h"

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

/// One thread that spins for `ns` nanoseconds of the GPU's global timer: it keeps its stream
/// busy, and one SM, while the host enqueues what follows it.
__global__ void hold_kernel(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
}  // namespace

Status time_launches(const LaunchFn& launch, int warmup, int reps, cudaStream_t stream,
                     std::vector<double>* samples_ms, const TimingOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto ms_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  // Holds the stream for `us` microseconds (0: not at all).
  const auto hold = [stream](int us) {
    if (us == 0) return Status();
    hold_kernel<<<1, 1, 0, stream>>>(uint64_t(us) * 1000);
    return cuda_status(cudaGetLastError(), "hold_kernel", __FILE__, __LINE__);
  };
  for (int i = 0; i < warmup; ++i) HM_TRY(launch(i));
  if (options.batch) {
    EventPair batch;
    HM_CUDA_TRY(cudaEventCreate(&batch.start));
    HM_CUDA_TRY(cudaEventCreate(&batch.stop));
    HM_TRY(hold(options.hold_us));
    HM_CUDA_TRY(cudaEventRecord(batch.start, stream));
    for (int i = 0; i < reps; ++i) {
      const Clock::time_point call = Clock::now();
      HM_TRY(launch(warmup + i));
      if (options.host_ms) options.host_ms->push_back(ms_between(call, Clock::now()));
    }
    HM_CUDA_TRY(cudaEventRecord(batch.stop, stream));
    HM_CUDA_TRY(cudaStreamSynchronize(stream));
    float ms = 0;
    HM_CUDA_TRY(cudaEventElapsedTime(&ms, batch.start, batch.stop));
    samples_ms->push_back(double(ms) / reps);
    return Status();
  }
  std::vector<EventPair> events(reps);
  for (auto& e : events) {
    HM_CUDA_TRY(cudaEventCreate(&e.start));
    HM_CUDA_TRY(cudaEventCreate(&e.stop));
  }
  for (int i = 0; i < reps; ++i) {
    // With a hold, a call that outlasts it is made again, on the same events, with a hold
    // four times as long: the sample must not include the host's time.
    int hold_us = options.hold_us;
    for (int attempt = 0;; ++attempt) {
      const Clock::time_point held = Clock::now();
      HM_TRY(hold(hold_us));
      HM_CUDA_TRY(cudaEventRecord(events[i].start, stream));
      const Clock::time_point call = Clock::now();
      HM_TRY(launch(warmup + i));
      const Clock::time_point called = Clock::now();
      HM_CUDA_TRY(cudaEventRecord(events[i].stop, stream));
      // The hold began after `held`, so it was still running when the stop event was
      // enqueued if that came less than the hold after `held`.
      const double calls_us = ms_between(held, Clock::now()) * 1e3;
      if (hold_us == 0 || calls_us < hold_us) {
        if (options.host_ms) options.host_ms->push_back(ms_between(call, called));
        break;
      }
      if (options.retries) ++*options.retries;
      if (attempt == 3)
        return Status::error("four launch calls in a row took the host longer than the "
                             "stream was held (" + std::to_string(int(calls_us)) +
                             " us the last, held " + std::to_string(hold_us) + " us)");
      hold_us *= 4;
    }
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
