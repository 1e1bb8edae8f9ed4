/** @file
 *  What a result is checked against: cuBLAS on the same layout and types, and for small
 *  problems a float64 CPU reference; the comparison and its tolerance, written once.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/problem.h"
#include "common/status.h"

/// cuBLAS's handle type, declared here so that users of this header need not include cuBLAS.
typedef struct cublasContext* cublasHandle_t;

namespace hm {

/// An owning cuBLAS handle.
class Cublas {
 public:
  Cublas() = default;
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  ~Cublas();

  /// Creates the handle (fails cleanly without a GPU), with reduced-precision split-K
  /// reductions disallowed so that cuBLAS accumulates in fp32 throughout, as we do.
  Status init();

  /// C = A·Bᵀ with cublasGemmEx: A and B in `problem.dtype`, fp32 compute, C in
  /// `problem.dtype`.  Row-major C[m,n] is column-major Cᵀ[n,m] = B·Aᵀ, so cuBLAS gets
  /// op(B) = T, op(A) = N and the sizes (n, m, k).
  Status matmul(const Problem& problem, const void* a, const void* b, void* c,
                cudaStream_t stream);

 private:
  cublasHandle_t handle_ = nullptr;
};

/// How far a result may be from its reference.  Both round an fp32 accumulator to the
/// output type (unit roundoff u: 2^-8 for bf16, 2^-11 for fp16), so they differ by at
/// most u·|r| per rounding; fp32 accumulation in another order adds at most k·2^-24 for
/// a sum whose partial sums stay near 1 (unit-variance inputs).  An element passes when
/// |c - r| ≤ atol + rtol·|r|, the whole result when ‖c - r‖_F / ‖r‖_F ≤ rel_fro.
struct Tolerance {
  double atol;     ///< absolute part of the per-element bound
  double rtol;     ///< relative part of the per-element bound
  double rel_fro;  ///< bound on the relative Frobenius error
};

/// The tolerance for `problem` (dtype- and k-scaled; see Tolerance).
Tolerance tolerance_for(const Problem& problem);

/// The comparison of a result with its reference.
struct Comparison {
  double rel_fro = 0;        ///< ‖c - r‖_F / ‖r‖_F
  double max_abs = 0;        ///< max |c - r|
  int64_t nan = 0;           ///< NaN or Inf elements (not counting poison)
  int64_t unwritten = 0;     ///< elements still holding the poison bits
  int64_t out_of_tol = 0;    ///< elements with |c - r| > atol + rtol·|r|
  Tolerance tol{};           ///< the tolerance the counts above used

  /// True when every element was written, none is NaN and all are within tolerance.
  bool pass() const {
    return nan == 0 && unwritten == 0 && out_of_tol == 0 && rel_fro <= tol.rel_fro;
  }

  /// "rel 1.2e-04, max 3.1e-02" or the reason it failed.
  std::string summary() const;
};

/// Compares `c` with `ref` (both m×n in `problem.dtype`, on the device) on the GPU.
Status compare_on_device(const Problem& problem, const void* c, const void* ref,
                         Comparison* out, cudaStream_t stream);

/// Number of elements whose bits differ between two device arrays of `count` elements.
Status count_bit_differences(const void* x, const void* y, int64_t count, int64_t* out,
                             cudaStream_t stream);

/// Converts one stored element to double (host).
double to_double(uint16_t bits, DType dtype);

/// The exact product of the stored inputs in float64, on the CPU: `ref` gets m·n values.
/// `a` and `b` are host copies of the operands' bits.
void cpu_reference(const Problem& problem, const std::vector<uint16_t>& a,
                   const std::vector<uint16_t>& b, std::vector<double>* ref);

/// The most multiply-adds (m·n·k) cpu_reference_on_device takes: about 12 s on 2 cores
/// (measured: 1.6·10⁹ a second), a second or two on 16.
inline constexpr double kCpuReferenceMaxMacs = 2e10;

/// The float64 CPU product of device operands `a` and `b`, rounded once to `problem.dtype`,
/// into the device buffer `ref` (m·n elements): a reference without cuBLAS in the process,
/// for compute-sanitizer (`hopper-matmul run --reference cpu`).  Synchronizes `stream`; an
/// error for problems above kCpuReferenceMaxMacs.
Status cpu_reference_on_device(const Problem& problem, const void* a, const void* b, void* ref,
                               cudaStream_t stream);

/// Compares host result bits with a float64 reference (same tolerance as the GPU path).
Comparison compare_with_exact(const Problem& problem, const std::vector<uint16_t>& c,
                              const std::vector<double>& ref);

}  // namespace hm
