/** @file
 *  Device buffers, random operands and poison.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "common/buffers.h"

namespace hm {

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

Status DeviceBuffer::allocate(size_t bytes) {
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
  HM_CUDA_TRY(cudaMalloc(&ptr_, bytes));
  bytes_ = bytes;
  return Status();
}

double unit_variance_range(int64_t k) { return std::sqrt(3.0) * std::pow(double(k), -0.25); }

uint16_t poison_bits(DType dtype) {
  // Signalling NaNs (quiet bit clear): conversions and arithmetic only ever produce quiet ones.
  return dtype == DType::bf16 ? uint16_t(0x7fa5) : uint16_t(0x7d55);
}

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

int blocks_for(int64_t count) {
  return int(std::min<int64_t>((count + kThreads - 1) / kThreads, kMaxBlocks));
}

/// splitmix64: a counter-based hash, so element i's value depends only on (seed, i).
__device__ uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T>
__global__ void fill_uniform_kernel(T* data, int64_t count, float range, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float u = float(mix(seed ^ mix(uint64_t(i))) >> 40) * 0x1p-24f;  // [0, 1)
    const float v = (2.0f * u - 1.0f) * range;
    if constexpr (std::is_same_v<T, __nv_bfloat16>) data[i] = __float2bfloat16_rn(v);
    else data[i] = __float2half_rn(v);
  }
}

__global__ void fill_bits_kernel(uint16_t* data, int64_t count, uint16_t bits) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    data[i] = bits;
}

}  // namespace

Status fill_uniform(void* data, int64_t count, DType dtype, double range, uint64_t seed,
                    cudaStream_t stream) {
  if (count <= 0) return Status();
  if (dtype == DType::bf16)
    fill_uniform_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<__nv_bfloat16*>(data), count, float(range), seed);
  else
    fill_uniform_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<__half*>(data), count, float(range), seed);
  HM_CUDA_TRY(cudaGetLastError());
  return Status();
}

Status poison(void* data, int64_t count, DType dtype, cudaStream_t stream) {
  if (count <= 0) return Status();
  fill_bits_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<uint16_t*>(data),
                                                               count, poison_bits(dtype));
  HM_CUDA_TRY(cudaGetLastError());
  return Status();
}

}  // namespace hm
