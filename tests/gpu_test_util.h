/** @file
 *  Helpers shared by the GPU test files.
 */
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/buffers.h"
#include "common/device.h"
#include "common/problem.h"
#include "common/status.h"

/// Skips the test, saying why, unless an sm_90 GPU is present.
#define SKIP_WITHOUT_SM90()                                                  \
  do {                                                                       \
    if (const hm::Status gpu = hm::require_sm90(); !gpu.ok())                \
      GTEST_SKIP() << "needs an sm_90 GPU: " << gpu.message();               \
  } while (0)

/// A host copy of `count` 16-bit elements of device memory (throws on a CUDA error).
inline std::vector<uint16_t> to_host(const void* device, int64_t count) {
  std::vector<uint16_t> host(static_cast<size_t>(count));
  const hm::Status s = hm::cuda_status(
      cudaMemcpy(host.data(), device, size_t(count) * 2, cudaMemcpyDeviceToHost), "cudaMemcpy",
      __FILE__, __LINE__);
  hm::throw_if_error(s);
  return host;
}

/// A non-blocking stream of the test's own, destroyed with the scope.
struct OwnedStream {
  cudaStream_t stream = nullptr;
  OwnedStream() = default;
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream() {
    if (stream) cudaStreamDestroy(stream);
  }
  hm::Status create() {
    return hm::cuda_status(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags", __FILE__, __LINE__);
  }
};

/// Device operands for one problem, filled with fresh random data.
struct Operands {
  hm::DeviceBuffer a, b;

  hm::Status init(const hm::Problem& p, uint64_t seed, cudaStream_t stream) {
    HM_TRY(a.allocate(size_t(p.m * p.k * 2)));
    HM_TRY(b.allocate(size_t(p.n * p.k * 2)));
    const double range = hm::unit_variance_range(p.k);
    HM_TRY(hm::fill_uniform(a.get(), p.m * p.k, p.dtype, range, seed, stream));
    return hm::fill_uniform(b.get(), p.n * p.k, p.dtype, range, seed + 1, stream);
  }
};
