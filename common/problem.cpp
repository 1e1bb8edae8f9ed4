/** @file
 *  Problem and operand validation, shared by every launcher.
 */
#include "common/problem.h"

#include <cstdint>
#include <string>

#include "common/device.h"

namespace hm {

const char* dtype_name(DType dtype) { return dtype == DType::bf16 ? "bf16" : "fp16"; }

std::optional<DType> parse_dtype(std::string_view text) {
  if (text == "bf16") return DType::bf16;
  if (text == "fp16") return DType::fp16;
  return std::nullopt;
}

Status validate_problem(const Problem& p) {
  const auto dims = "m=" + std::to_string(p.m) + ", n=" + std::to_string(p.n) +
                    ", k=" + std::to_string(p.k);
  if (p.m < 1 || p.n < 1 || p.k < 1)
    return Status::error("invalid problem (" + dims + "): every size must be at least 1");
  if (p.m > kMaxDim || p.n > kMaxDim || p.k > kMaxDim)
    return Status::error("invalid problem (" + dims +
                         "): sizes above 2^31-256 do not fit TMA's signed 32-bit coordinates "
                         "(with room for the last tile)");
  if (p.k % 8 != 0)
    return Status::error("invalid problem (" + dims +
                         "): k must be a multiple of 8, so that a row of A and of B is a "
                         "multiple of 16 bytes as TMA requires");
  return Status();
}

Status validate_operands(const void* a, const void* b, const void* c) {
  const struct {
    const char* name;
    const void* ptr;
  } operands[] = {{"A", a}, {"B", b}, {"C", c}};
  for (const auto& op : operands) {
    if (op.ptr == nullptr) return Status::error(std::string("operand ") + op.name + " is null");
    if (reinterpret_cast<uintptr_t>(op.ptr) % 16 != 0)
      return Status::error(std::string("operand ") + op.name +
                           " is not 16-byte aligned (TMA needs 16-byte aligned bases)");
  }
  return Status();
}

Status validate_launch(const Problem& problem, const void* a, const void* b, const void* c) {
  HM_TRY(validate_problem(problem));
  HM_TRY(validate_operands(a, b, c));
  return require_sm90();
}

}  // namespace hm
