/** @file
 *  Operands for measurements.
 */
#include "common/workload.h"

#include "common/timing.h"

namespace hm {

Status Workload::init(const Problem& p, long long l2_bytes, uint64_t seed, Cublas* cublas,
                      cudaStream_t stream) {
  HM_TRY(validate_problem(p));
  problem_ = p;
  const size_t a_bytes = size_t(p.m * p.k * 2), b_bytes = size_t(p.n * p.k * 2),
               c_bytes = size_t(p.m * p.n * 2);
  sets_.clear();
  sets_.resize(size_t(rotation_sets(static_cast<long long>(a_bytes + b_bytes + c_bytes), l2_bytes)));
  const double range = unit_variance_range(p.k);
  for (size_t s = 0; s < sets_.size(); ++s) {
    HM_TRY(sets_[s].a.allocate(a_bytes));
    HM_TRY(sets_[s].b.allocate(b_bytes));
    HM_TRY(sets_[s].c.allocate(c_bytes));
    HM_TRY(fill_uniform(sets_[s].a.get(), p.m * p.k, p.dtype, range, seed + 2 * s, stream));
    HM_TRY(fill_uniform(sets_[s].b.get(), p.n * p.k, p.dtype, range, seed + 2 * s + 1, stream));
  }
  HM_TRY(reference_.allocate(c_bytes));
  HM_TRY(scratch_.allocate(c_bytes));
  if (!cublas)
    return cpu_reference_on_device(p, sets_[0].a.get(), sets_[0].b.get(), reference_.get(),
                                   stream);
  return cublas->matmul(p, sets_[0].a.get(), sets_[0].b.get(), reference_.get(), stream);
}

Status Workload::check(const Launcher& launch, Comparison* out, cudaStream_t stream) {
  return check_fn(launch, out, stream);
}

}  // namespace hm
