/** @file
 *  cuBLAS and float64 references, and the comparison every check uses.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/buffers.h"
#include "common/reference.h"

namespace hm {

// ---------------------------------------------------------------------------------------
// cuBLAS

namespace {
Status cublas_status(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status();
  return Status::error(std::string(call) + " failed: " + cublasGetStatusName(s) + " (" +
                       cublasGetStatusString(s) + ")");
}
}  // namespace

Cublas::~Cublas() {
  if (handle_) cublasDestroy(handle_);
}

Status Cublas::init() {
  if (handle_) return Status();
  HM_TRY(cublas_status(cublasCreate(&handle_), "cublasCreate"));
  // Same precision as our kernels: when cuBLAS splits K, it must reduce the partial sums in
  // fp32, not in the output type (on a 333×12345×1024 bf16 problem it otherwise differs by
  // 2 bf16 ulps from the fp32-accumulated result).
  return cublas_status(
      cublasSetMathMode(handle_, cublasMath_t(CUBLAS_DEFAULT_MATH |
                                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
      "cublasSetMathMode");
}

Status Cublas::matmul(const Problem& p, const void* a, const void* b, void* c,
                      cudaStream_t stream) {
  HM_TRY(validate_problem(p));
  HM_TRY(init());
  HM_TRY(cublas_status(cublasSetStream(handle_, stream), "cublasSetStream"));
  const cudaDataType type = p.dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f, beta = 0.0f;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  return cublas_status(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b, type,
                                    k, a, type, k, &beta, c, type, n, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
}

// ---------------------------------------------------------------------------------------
// Tolerance and comparison

Tolerance tolerance_for(const Problem& p) {
  const double u = p.dtype == DType::bf16 ? 0x1p-8 : 0x1p-11;  // unit roundoff of the output
  const double accumulation = double(p.k) * 0x1p-24;          // fp32 sum of k terms near 1
  return Tolerance{2 * u + accumulation, 2 * u, 2 * u + accumulation};
}

std::string Comparison::summary() const {
  char text[256];
  if (unwritten || nan || out_of_tol || rel_fro > tol.rel_fro) {
    std::snprintf(text, sizeof text,
                  "FAIL: %lld unwritten, %lld NaN/Inf, %lld beyond %.1e + %.1e|r|, rel %.2e "
                  "(limit %.1e), max %.2e",
                  (long long)unwritten, (long long)nan, (long long)out_of_tol, tol.atol, tol.rtol,
                  rel_fro, tol.rel_fro, max_abs);
  } else {
    std::snprintf(text, sizeof text, "rel %.2e, max %.2e", rel_fro, max_abs);
  }
  return text;
}

namespace {

/// Sums filled by compare_kernel.
struct DeviceSums {
  double diff2;
  double ref2;
  unsigned long long nan;
  unsigned long long unwritten;
  unsigned long long out_of_tol;
  unsigned int max_abs_bits;  // a non-negative float's bits order like the float
};

__device__ float load_as_float(const uint16_t* p, int64_t i, bool bf16) {
  const uint16_t bits = p[i];
  return bf16 ? __bfloat162float(__ushort_as_bfloat16(bits)) : __half2float(__ushort_as_half(bits));
}

constexpr int kThreads = 256;

__global__ void compare_kernel(const uint16_t* c, const uint16_t* ref, int64_t count, bool bf16,
                               uint16_t poison, Tolerance tol, DeviceSums* sums) {
  double diff2 = 0, ref2 = 0;
  unsigned long long nan = 0, unwritten = 0, out_of_tol = 0;
  float max_abs = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float r = load_as_float(ref, i, bf16);
    if (c[i] == poison) { ++unwritten; continue; }
    const float x = load_as_float(c, i, bf16);
    if (!isfinite(x) || !isfinite(r)) { ++nan; continue; }
    const double d = fabs(double(x) - double(r));
    diff2 += d * d;
    ref2 += double(r) * r;
    max_abs = fmaxf(max_abs, float(d));
    if (d > tol.atol + tol.rtol * fabs(double(r))) ++out_of_tol;
  }
  // Warp sums, then one atomic per warp: simple, and this kernel is never timed.
  for (int offset = 16; offset > 0; offset /= 2) {
    diff2 += __shfl_down_sync(0xffffffff, diff2, offset);
    ref2 += __shfl_down_sync(0xffffffff, ref2, offset);
    nan += __shfl_down_sync(0xffffffff, nan, offset);
    unwritten += __shfl_down_sync(0xffffffff, unwritten, offset);
    out_of_tol += __shfl_down_sync(0xffffffff, out_of_tol, offset);
    max_abs = fmaxf(max_abs, __shfl_down_sync(0xffffffff, max_abs, offset));
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums->diff2, diff2);
    atomicAdd(&sums->ref2, ref2);
    atomicAdd(&sums->nan, nan);
    atomicAdd(&sums->unwritten, unwritten);
    atomicAdd(&sums->out_of_tol, out_of_tol);
    atomicMax(&sums->max_abs_bits, __float_as_uint(max_abs));
  }
}

__global__ void bit_difference_kernel(const uint16_t* x, const uint16_t* y, int64_t count,
                                      unsigned long long* differing) {
  unsigned long long n = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    n += x[i] != y[i];
  for (int offset = 16; offset > 0; offset /= 2) n += __shfl_down_sync(0xffffffff, n, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(differing, n);
}

int blocks_for(int64_t count) {
  return int(std::min<int64_t>((count + kThreads - 1) / kThreads, 2048));
}

}  // namespace

Status compare_on_device(const Problem& p, const void* c, const void* ref, Comparison* out,
                         cudaStream_t stream) {
  const int64_t count = p.m * p.n;
  DeviceBuffer sums_buffer;
  HM_TRY(sums_buffer.allocate(sizeof(DeviceSums)));
  auto* sums = static_cast<DeviceSums*>(sums_buffer.get());
  HM_CUDA_TRY(cudaMemsetAsync(sums, 0, sizeof(DeviceSums), stream));
  const Tolerance tol = tolerance_for(p);
  compare_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      static_cast<const uint16_t*>(c), static_cast<const uint16_t*>(ref), count,
      p.dtype == DType::bf16, poison_bits(p.dtype), tol, sums);
  HM_CUDA_TRY(cudaGetLastError());
  DeviceSums host{};
  HM_CUDA_TRY(cudaMemcpyAsync(&host, sums, sizeof host, cudaMemcpyDeviceToHost, stream));
  HM_CUDA_TRY(cudaStreamSynchronize(stream));
  Comparison result;
  result.tol = tol;
  result.rel_fro = host.ref2 > 0 ? std::sqrt(host.diff2 / host.ref2) : std::sqrt(host.diff2);
  float max_abs = 0;
  std::memcpy(&max_abs, &host.max_abs_bits, sizeof max_abs);
  result.max_abs = max_abs;
  result.nan = int64_t(host.nan);
  result.unwritten = int64_t(host.unwritten);
  result.out_of_tol = int64_t(host.out_of_tol);
  *out = result;
  return Status();
}

Status count_bit_differences(const void* x, const void* y, int64_t count, int64_t* out,
                             cudaStream_t stream) {
  DeviceBuffer counter;
  HM_TRY(counter.allocate(sizeof(unsigned long long)));
  auto* n = static_cast<unsigned long long*>(counter.get());
  HM_CUDA_TRY(cudaMemsetAsync(n, 0, sizeof *n, stream));
  bit_difference_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(y), count, n);
  HM_CUDA_TRY(cudaGetLastError());
  unsigned long long host = 0;
  HM_CUDA_TRY(cudaMemcpyAsync(&host, n, sizeof host, cudaMemcpyDeviceToHost, stream));
  HM_CUDA_TRY(cudaStreamSynchronize(stream));
  *out = int64_t(host);
  return Status();
}

// ---------------------------------------------------------------------------------------
// float64 CPU reference

double to_double(uint16_t bits, DType dtype) {
  if (dtype == DType::bf16) {
    const uint32_t wide = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &wide, sizeof f);
    return f;
  }
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0) value = std::ldexp(double(mantissa), -24);  // subnormal
  else if (exponent == 31) value = mantissa ? NAN : INFINITY;
  else value = std::ldexp(double(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}

void cpu_reference(const Problem& p, const std::vector<uint16_t>& a,
                   const std::vector<uint16_t>& b, std::vector<double>* ref) {
  std::vector<double> ad(a.size()), bd(b.size());
  for (size_t i = 0; i < a.size(); ++i) ad[i] = to_double(a[i], p.dtype);
  for (size_t i = 0; i < b.size(); ++i) bd[i] = to_double(b[i], p.dtype);
  ref->assign(size_t(p.m * p.n), 0.0);
  // Every hardware thread takes every threads-th row of C; each sum is the same loop, so
  // the result does not depend on the thread count.
  const auto rows = [&](int64_t first, int64_t step) {
    for (int64_t i = first; i < p.m; i += step)
      for (int64_t j = 0; j < p.n; ++j) {
        const double* ai = &ad[size_t(i * p.k)];
        const double* bj = &bd[size_t(j * p.k)];
        double sum = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) sum += ai[kk] * bj[kk];
        (*ref)[size_t(i * p.n + j)] = sum;
      }
  };
  const int64_t threads =
      std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(p.m, 1));
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < threads; ++t) workers.emplace_back(rows, t, threads);
  rows(0, threads);
  for (std::thread& w : workers) w.join();
}

Status cpu_reference_on_device(const Problem& p, const void* a, const void* b, void* ref,
                               cudaStream_t stream) {
  if (double(p.m) * double(p.n) * double(p.k) > kCpuReferenceMaxMacs)
    return Status::error("the float64 CPU reference is for problems of at most " +
                         std::to_string(int64_t(kCpuReferenceMaxMacs)) +
                         " multiply-adds (m·n·k), not " + std::to_string(p.m) + "x" +
                         std::to_string(p.n) + "x" + std::to_string(p.k));
  std::vector<uint16_t> ha(size_t(p.m * p.k)), hb(size_t(p.n * p.k));
  HM_CUDA_TRY(cudaMemcpyAsync(ha.data(), a, ha.size() * 2, cudaMemcpyDeviceToHost, stream));
  HM_CUDA_TRY(cudaMemcpyAsync(hb.data(), b, hb.size() * 2, cudaMemcpyDeviceToHost, stream));
  HM_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<double> exact;
  cpu_reference(p, ha, hb, &exact);
  // Rounded once to the output type (through float, whose rounding is far finer), as a
  // kernel rounds its fp32 accumulator.
  std::vector<uint16_t> bits(exact.size());
  for (size_t i = 0; i < exact.size(); ++i) {
    const float f = float(exact[i]);
    if (p.dtype == DType::bf16) {
      const __nv_bfloat16 x = __float2bfloat16_rn(f);
      std::memcpy(&bits[i], &x, 2);
    } else {
      const __half x = __float2half_rn(f);
      std::memcpy(&bits[i], &x, 2);
    }
  }
  HM_CUDA_TRY(cudaMemcpyAsync(ref, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice, stream));
  return cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize", __FILE__, __LINE__);
}

Comparison compare_with_exact(const Problem& p, const std::vector<uint16_t>& c,
                              const std::vector<double>& ref) {
  Comparison result;
  result.tol = tolerance_for(p);
  double diff2 = 0, ref2 = 0;
  const uint16_t poison = poison_bits(p.dtype);
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == poison) { ++result.unwritten; continue; }
    const double x = to_double(c[i], p.dtype);
    if (!std::isfinite(x)) { ++result.nan; continue; }
    const double d = std::fabs(x - ref[i]);
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    result.max_abs = std::max(result.max_abs, d);
    if (d > result.tol.atol + result.tol.rtol * std::fabs(ref[i])) ++result.out_of_tol;
  }
  result.rel_fro = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return result;
}

}  // namespace hm
