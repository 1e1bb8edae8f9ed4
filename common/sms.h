/** @file
 *  The SMs a stream may run on, and streams that have fewer than the GPU: green contexts.
 *
 *  A process may get only part of a GPU: under MPS partitioning, beside a communication
 *  kernel, or in a green context (CUDA 12.4+), which gives a stream a fixed subset of the
 *  SMs.  Inside one, `cudaDevAttrMultiProcessorCount` still reports every SM of the device,
 *  so a persistent kernel that sizes its grid from it launches CTAs that cannot all be
 *  resident and gives each a fixed share of the tiles.  stream_sm_count() asks the stream.
 *  The driver entry points are fetched at run time (common/driver.h), so no binary links
 *  libcuda and a machine without a driver gets an error, not a failed start.
 */
#pragma once

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace hm {

/// The SMs that work launched on `stream` may run on: those of its green context
/// (`cuStreamGetGreenCtx`, `cuGreenCtxGetDevResource`) where it belongs to one, else every SM
/// of the current device.
Status stream_sm_count(cudaStream_t stream, int* sms);

/// A stream whose work runs on `min_sms` or more SMs of the current device and no others: a
/// green context made by splitting the device's SMs (`cuDevSmResourceSplitByCount`, which
/// rounds up to the partition granularity: 8 SMs on an H200), and a stream in it.  For the
/// tests and `hopper-matmul --sms`.
class GreenContextStream {
 public:
  GreenContextStream() = default;
  GreenContextStream(const GreenContextStream&) = delete;
  GreenContextStream& operator=(const GreenContextStream&) = delete;
  ~GreenContextStream();

  /// Creates the green context and its stream; an error (naming the driver call) when the
  /// driver has no green contexts or `min_sms` is not between 1 and the device's SMs.
  Status create(int min_sms);
  cudaStream_t stream() const { return stream_; }  ///< the stream, null before create()
  int sm_count() const { return sms_; }  ///< the SMs the green context got

 private:
  void* green_ = nullptr;  // CUgreenCtx
  cudaStream_t stream_ = nullptr;
  int sms_ = 0;
};

}  // namespace hm
