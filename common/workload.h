/** @file
 *  The operands of one measured problem: enough rotating A/B/C sets that one launch's inputs
 *  are not in L2 from the last, each filled with fresh unit-variance random data, and the
 *  reference result on set 0 that every implementation is checked against (cuBLAS's, or the
 *  float64 CPU product).
 */
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "common/buffers.h"
#include "common/problem.h"
#include "common/reference.h"
#include "common/status.h"

namespace hm {

/// A, B and C for one rotation slot.
struct OperandSet {
  DeviceBuffer a;  ///< A[m,k]
  DeviceBuffer b;  ///< B[n,k]
  DeviceBuffer c;  ///< C[m,n]
};

/// Operands, the reference result and a scratch output for checks.
class Workload {
 public:
  /// Allocates rotation_sets(…) operand sets for `problem` (sized against `l2_bytes`),
  /// fills them from `seed`, and computes the cuBLAS reference on set 0 (with `cublas`
  /// null, the float64 CPU reference: cpu_reference_on_device).
  Status init(const Problem& problem, long long l2_bytes, uint64_t seed, Cublas* cublas,
              cudaStream_t stream);

  const Problem& problem() const { return problem_; }  ///< what init() set up
  int sets() const { return int(sets_.size()); }       ///< operand sets in rotation

  /// The operands of repetition `rep` (sets are used round-robin).
  OperandSet& set(int rep) { return sets_[size_t(rep) % sets_.size()]; }

  /// Runs `launch` once on set 0 into a freshly poisoned output and compares it with the
  /// reference.
  Status check(const Launcher& launch, Comparison* out, cudaStream_t stream);

  /// Same, for any callable with the Launcher signature.
  template <typename Fn>
  Status check_fn(Fn&& launch, Comparison* out, cudaStream_t stream) {
    OperandSet& s = sets_[0];
    HM_TRY(poison(scratch_.get(), problem_.m * problem_.n, problem_.dtype, stream));
    HM_TRY(launch(problem_, s.a.get(), s.b.get(), scratch_.get(), stream));
    return compare_on_device(problem_, scratch_.get(), reference_.get(), out, stream);
  }

 private:
  Problem problem_{};
  std::vector<OperandSet> sets_;
  DeviceBuffer reference_, scratch_;
};

}  // namespace hm
