/** @file
 *  Device memory for tests and measurements: an owning buffer, random operands scaled so
 *  that C has unit variance, and a poison value that marks every output element unwritten.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/problem.h"
#include "common/status.h"

namespace hm {

/// An owning, move-only cudaMalloc allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes over `other`'s allocation.
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = static_cast<DeviceBuffer&&>(other); }
  /// Frees what this held and takes over `other`'s allocation.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  /// Allocates `bytes` (freeing what was held).
  Status allocate(size_t bytes);

  void* get() const { return ptr_; }       ///< the device pointer, or null
  size_t bytes() const { return bytes_; }  ///< the allocation's size

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Half-width of the uniform distribution that gives C = A·Bᵀ unit variance: with a, b
/// uniform on [-s, s] (variance s²/3), Var(C) = k·(s²/3)² = 1 when s = √3·k^(-1/4).
double unit_variance_range(int64_t k);

/// Fills `count` elements with values uniform on [-range, range], from a counter-based hash
/// of (seed, index): the same seed gives the same data on every GPU and every run.
Status fill_uniform(void* data, int64_t count, DType dtype, double range, uint64_t seed,
                    cudaStream_t stream);

/// The bit pattern written by poison(): a NaN no arithmetic produces, so an element that
/// still holds it after a run was never written.
uint16_t poison_bits(DType dtype);

/// Writes poison_bits() into `count` elements.
Status poison(void* data, int64_t count, DType dtype, cudaStream_t stream);

}  // namespace hm
