/** @file
 *  Helpers shared by the GPU test files.
 */
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

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
