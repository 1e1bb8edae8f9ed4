/** @file
 *  Problem and operand validation, shared by every launcher.
 */
#include "common/problem.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
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

namespace {

// Every byte count below fits in 64 bits: m, n and k are at most kMaxDim < 2^31, so the
// product of two is below 2^62 and its bytes (2 per element) below 2^63.
static_assert(kMaxDim <= INT64_MAX / 2 / kMaxDim, "m·k·2 must fit in 64 bits");
static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "64-bit addresses");

/// The bytes [begin, begin + bytes) of one operand.
struct Bytes {
  const char* name;
  uintptr_t begin;
  uint64_t bytes;
};

/// How many bytes `x` and `y` share.  Measures the distance from the lower start and
/// compares it with the lower range's length, so that no end is computed: nothing wraps,
/// wherever in the address space the ranges lie.
uint64_t shared_bytes(const Bytes& x, const Bytes& y) {
  const Bytes& low = x.begin <= y.begin ? x : y;
  const Bytes& high = x.begin <= y.begin ? y : x;
  const uint64_t gap = high.begin - low.begin;
  if (gap >= low.bytes) return 0;
  return std::min(low.bytes - gap, high.bytes);
}

std::string hex(uintptr_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIxPTR, address);
  return text;
}

std::string describe(const Bytes& x) {
  return std::string(x.name) + ": " + std::to_string(x.bytes) + " bytes at " + hex(x.begin);
}

}  // namespace

Status validate_no_overlap(const Problem& p, const void* a, const void* b, const void* c) {
  for (const int64_t size : {p.m, p.n, p.k})
    if (size < 1 || size > kMaxDim) return validate_problem(p);
  const uint64_t elem = uint64_t(dtype_bytes(p.dtype));
  const auto bytes = [&](const char* name, const void* ptr, int64_t rows, int64_t cols) {
    return Bytes{name, reinterpret_cast<uintptr_t>(ptr), uint64_t(rows) * uint64_t(cols) * elem};
  };
  const Bytes out = bytes("C", c, p.m, p.n);
  // A against B is not checked: both are only read, so they may overlap, or be one pointer.
  for (const Bytes& in : {bytes("A", a, p.m, p.k), bytes("B", b, p.n, p.k)}) {
    const uint64_t shared = shared_bytes(out, in);
    if (shared == 0) continue;
    const std::string name = in.name;
    return Status::error("operand C overlaps " + name + " (" + describe(out) + ", " +
                         describe(in) + ", " + std::to_string(shared) +
                         (shared == 1 ? " byte" : " bytes") + " shared): C is written while " +
                         name + " is still being read, so a call in place gives a wrong "
                         "answer; C needs memory of its own (A and B may overlap each other: "
                         "they are only read)");
  }
  return Status();
}

Status validate_launch(const Problem& problem, const void* a, const void* b, const void* c) {
  HM_TRY(validate_problem(problem));
  HM_TRY(validate_operands(a, b, c));
  HM_TRY(validate_no_overlap(problem, a, b, c));
  return require_sm90();
}

}  // namespace hm
