/** @file
 *  The HBM read-bandwidth probe.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bandwidth.h"
#include "common/buffers.h"
#include "common/problem.h"
#include "common/sms.h"
#include "common/timing.h"

namespace hm {

namespace {

constexpr int kThreads = 512;
// Loads in flight per thread per iteration: independent, so that each thread keeps 64 bytes
// outstanding and a full SM (2048 threads) 128 KiB, well above what Little's law asks for
// (the bandwidth times the latency, ~25 KiB per SM on an H200).
constexpr int kUnroll = 4;
constexpr size_t kMaxBytes = size_t(2) << 30;  // 2 GiB: ~40× the L2 of an H100 or H200
constexpr size_t kMinBytes = size_t(256) << 20;
constexpr int kWarmup = 3;
constexpr int kTimed = 10;
// What the checksum is compared with, so that the compiler must keep every load: the store
// depends on all of them.  Random data matches it with probability 2^-32 per thread, which
// writes a word of scratch and changes nothing else.
constexpr unsigned kSentinel = 0x9e3779b9u;

/// Up to three buffers that one launch reads: `vectors` 16-byte vectors each, then `tail`
/// bytes (fewer than 16) read two at a time.
struct Reads {
  const uint4* data[3];
  int64_t vectors[3];
  int tail[3];
};

/// Reads every buffer of `reads` once, one after another, and stores the XOR of all it read
/// only when it equals `sentinel`.  Loads are streaming (`ld.global.cs`): the data is never
/// read again.
__global__ void __launch_bounds__(kThreads)
    read_kernel(const Reads reads, unsigned sentinel, unsigned* __restrict__ sink) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (int buffer = 0; buffer < 3; ++buffer) {
    const uint4* __restrict__ data = reads.data[buffer];
    const int64_t count = reads.vectors[buffer];
    int64_t i = first;
    for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(data + i + u * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < count; i += stride) {
      const uint4 v = __ldcs(data + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (first < reads.tail[buffer] / 2)
      acc ^= __ldcs(reinterpret_cast<const unsigned short*>(data + count) + first);
  }
  if (acc == sentinel) *sink = acc;
}

/// A word of device memory for the kernels' sentinel store, which never happens in practice.
__device__ unsigned g_sink;

/// The probe kernel's CTAs per SM at full occupancy on the current device, and the address
/// of g_sink there.
Status probe_setup(int* per_sm, unsigned** sink) {
  HM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, read_kernel, kThreads, 0));
  if (*per_sm < 1) return Status::error("HBM read probe: its kernel cannot run on this GPU");
  HM_CUDA_TRY(cudaGetSymbolAddress(reinterpret_cast<void**>(sink), g_sink));
  return Status();
}

}  // namespace

Status measure_hbm_read(cudaStream_t stream, double* tbps) {
  int device = 0, sms = 0, l2 = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  int per_sm = 0;
  unsigned* sink = nullptr;
  HM_TRY(probe_setup(&per_sm, &sink));

  // The largest buffer that can be had, from 2 GiB down: the smaller it is, the larger the
  // share of a pass that L2 might still hold from the last one.
  const size_t min_bytes = std::max(kMinBytes, size_t(8) * size_t(l2));
  DeviceBuffer buffer;
  size_t bytes = kMaxBytes;
  for (;; bytes /= 2) {
    if (buffer.allocate(bytes).ok()) break;
    cudaGetLastError();  // an out-of-memory error is not sticky; leave none behind
    if (bytes / 2 < min_bytes)
      return Status::error("HBM read probe: cannot allocate even " +
                           std::to_string(bytes >> 20) + " MiB of device memory (it needs " +
                           std::to_string(min_bytes >> 20) +
                           " MiB or more, 8x the L2, so that L2 does not serve the reads)");
  }
  // Random contents: nothing about them (zeros, a repeated word) could be shortcut.
  HM_TRY(fill_uniform(buffer.get(), int64_t(bytes / 2), DType::bf16, 1.0, 0x6862, stream));

  const int64_t count = int64_t(bytes / sizeof(uint4));
  const Reads reads = {{static_cast<const uint4*>(buffer.get()), nullptr, nullptr},
                       {count, 0, 0},
                       {0, 0, 0}};
  const LaunchFn pass = [&](int) {
    read_kernel<<<sms * per_sm, kThreads, 0, stream>>>(reads, kSentinel, sink);
    return cuda_status(cudaGetLastError(), "read_kernel<<<…>>>", __FILE__, __LINE__);
  };
  std::vector<double> ms;
  HM_TRY(time_launches(pass, kWarmup, kTimed, stream, &ms));
  const double median_ms = median(ms);
  if (!(median_ms > 0)) return Status::error("HBM read probe: a pass took no measurable time");
  *tbps = double(count) * sizeof(uint4) / (median_ms * 1e-3) / 1e12;
  return Status();
}

Status read_problem_bytes(const Problem& p, const void* a, const void* b, const void* c,
                          cudaStream_t stream) {
  HM_TRY(validate_problem(p));
  HM_TRY(validate_operands(a, b, c));
  // The occupancy and the sink, once per device and thread: asking costs more than a short
  // launch.
  thread_local int asked_device = -1, per_sm = 0;
  thread_local unsigned* sink = nullptr;
  int device = 0, sms = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  if (asked_device != device) {
    HM_TRY(probe_setup(&per_sm, &sink));
    asked_device = device;
  }
  HM_TRY(stream_sm_count(stream, &sms));  // fewer than the GPU's in a green context
  const int64_t elem = dtype_bytes(p.dtype);
  const int64_t bytes[3] = {p.m * p.k * elem, p.n * p.k * elem, p.m * p.n * elem};
  const void* data[3] = {a, b, c};
  Reads reads = {};
  for (int i = 0; i < 3; ++i) {
    reads.data[i] = static_cast<const uint4*>(data[i]);
    reads.vectors[i] = bytes[i] / int64_t(sizeof(uint4));
    reads.tail[i] = int(bytes[i] % int64_t(sizeof(uint4)));
  }
  read_kernel<<<sms * per_sm, kThreads, 0, stream>>>(reads, kSentinel, sink);
  return cuda_status(cudaGetLastError(), "read_kernel<<<…>>>", __FILE__, __LINE__);
}

}  // namespace hm
