/** @file
 *  The problem every version solves, C[M,N] = A[M,K] · B[N,K]ᵀ, and the checks a
 *  launcher runs before it touches the GPU.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace hm {

/// Element type of A, B and C.  Accumulation is always fp32.
enum class DType { bf16, fp16 };

/// "bf16" or "fp16".
const char* dtype_name(DType dtype);

/// Parses "bf16" or "fp16"; anything else gives std::nullopt.
std::optional<DType> parse_dtype(std::string_view text);

/// Bytes per element (2 for both supported types).
constexpr int64_t dtype_bytes(DType) { return 2; }

/// One matmul: C[m,n] = A[m,k] · B[n,k]ᵀ, all three dense and row-major
/// (A and B are "K-major": consecutive k are adjacent in memory).
struct Problem {
  int64_t m = 0;              ///< rows of A and C
  int64_t n = 0;              ///< rows of B, columns of C
  int64_t k = 0;              ///< columns of A and B
  DType dtype = DType::bf16;  ///< element type of A, B and C

  /// 2·m·n·k, the flop count every TFLOPS figure in this project uses.
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }

  /// The fewest bytes the problem must move to or from device memory, A and B read once and
  /// C written once: what every HBM TB/s figure in this project divides by the time.  Decode
  /// shapes (small m) are bound by it, not by flops().
  double min_bytes() const {
    return double(dtype_bytes(dtype)) * (double(m) * double(k) + double(n) * double(k) +
                                         double(m) * double(n));
  }
};

/// The largest m, n or k: TMA coordinates are signed 32-bit, and a kernel may compute
/// the coordinate of a row or column up to one tile (≤ 256) past the last one.
constexpr int64_t kMaxDim = (int64_t(1) << 31) - 256;

/// Checks the sizes: m, n, k ≥ 1; k % 8 == 0 (a row of A or B must be a multiple of 16
/// bytes for TMA); each size at most kMaxDim.
Status validate_problem(const Problem& problem);

/// Checks the operands: none null, each 16-byte aligned (TMA needs that for A and B; we
/// ask the same of C so every version may store it with 16-byte or TMA stores).
Status validate_operands(const void* a, const void* b, const void* c);

/// Checks that C shares no byte with A nor with B: C's bytes [c, c + m·n·2) against A's
/// [a, a + m·k·2) and B's [b, b + n·k·2).  C is written while A and B are still being read,
/// so a call in place (C = A, or C inside B) would read what it has already overwritten and
/// give a wrong answer.  A and B may overlap each other, or be the same pointer: they are
/// only read.  Sizes out of range have no byte ranges to compare: they get validate_problem's
/// error.  Within range every byte count fits in 64 bits (m·k·2 < 2·kMaxDim² < 2⁶³), and the
/// ranges are compared by their distances, never by their ends, so no address can wrap.
Status validate_no_overlap(const Problem& problem, const void* a, const void* b, const void* c);

/// validate_problem, validate_operands and validate_no_overlap, then that the current device
/// is sm_90.  Every launcher calls this first.
Status validate_launch(const Problem& problem, const void* a, const void* b, const void* c);

/// The launcher signature every version shares: computes C = A·Bᵀ on `stream`, or
/// returns an error without launching anything.
using Launcher = Status (*)(const Problem& problem, const void* a, const void* b, void* c,
                            cudaStream_t stream);

}  // namespace hm
