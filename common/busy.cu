/** @file
 *  The kernel that holds SMs for BusySms.
 */
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "common/busy.h"

namespace hm {

namespace {

constexpr uint64_t kMaxNs = 120'000'000'000;  // 2 minutes: a forgotten stop() ends, late

/// Says it runs (`running[b] = 1` in mapped host memory: one plain store), then polls `stop`
/// in device memory, which the host sets through a copy on another stream, for at most
/// kMaxNs, after which it says so (`running[b] = 2`).  Polling device memory keeps the load
/// on the SM and L2, as a communication kernel's flags would; polling host memory instead
/// sends every read over PCIe and slowed the matmuls beside it far beyond the SMs it took.
/// One thread: the CTA's shared memory, not its threads, keeps other CTAs off the SM.
__global__ void busy_kernel(const volatile int* stop, volatile int* running) {
  extern __shared__ int hold[];  // the SM's whole shared memory, never touched
  running[blockIdx.x] = 1;
  __threadfence_system();
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (*stop == 0 && now - start < kMaxNs);
  if (*stop == 0) running[blockIdx.x] = 2;
}

}  // namespace

BusySms::~BusySms() {
  (void)stop();
  if (running_) cudaFreeHost(const_cast<int*>(running_));
  if (stop_) cudaFree(stop_);
  if (one_) cudaFreeHost(one_);
  if (control_) cudaStreamDestroy(control_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status BusySms::start(int sms) {
  HM_TRY(stop());
  int device = 0, all = 0, smem = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(&all, cudaDevAttrMultiProcessorCount, device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (sms < 1 || sms >= all)
    return Status::error("--busy-sms " + std::to_string(sms) + ": between 1 and " +
                         std::to_string(all - 1) + " on this GPU");
  if (!stream_) {  // once: nothing here may wait for a running busy kernel
    HM_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    HM_CUDA_TRY(cudaStreamCreateWithFlags(&control_, cudaStreamNonBlocking));
    void* host = nullptr;
    HM_CUDA_TRY(cudaHostAlloc(&host, all * sizeof(int), cudaHostAllocMapped));
    running_ = static_cast<volatile int*>(host);
    HM_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&one_), sizeof(int), 0));
    *one_ = 1;
    HM_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&stop_), sizeof(int)));
    HM_CUDA_TRY(cudaFuncSetAttribute(busy_kernel,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  for (int b = 0; b < sms; ++b) running_[b] = 0;
  int* running = nullptr;
  HM_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&running),
                                       const_cast<int*>(running_), 0));
  HM_CUDA_TRY(cudaMemsetAsync(stop_, 0, sizeof(int), stream_));
  busy_kernel<<<sms, 1, smem, stream_>>>(stop_, running);
  HM_CUDA_TRY(cudaGetLastError());
  sms_ = sms;
  const auto started = [&] {
    int count = 0;
    for (int b = 0; b < sms; ++b) count += running_[b] != 0;
    return count;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (started() < sms) {
    if (std::chrono::steady_clock::now() > deadline) {
      const int got = started();
      HM_TRY(stop());
      return Status::error("the busy kernel got " + std::to_string(got) + " of the " +
                           std::to_string(sms) + " SMs it asked for within 5 s");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return Status();
}

Status BusySms::stop() {
  if (sms_ == 0) return Status();
  const int sms = sms_;
  sms_ = 0;
  HM_CUDA_TRY(cudaMemcpyAsync(stop_, one_, sizeof(int), cudaMemcpyHostToDevice, control_));
  HM_CUDA_TRY(cudaStreamSynchronize(stream_));
  for (int b = 0; b < sms; ++b)
    if (running_[b] == 2)
      return Status::error("the busy kernel ended on its own after 2 minutes, before stop()");
  return Status();
}

}  // namespace hm
