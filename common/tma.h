/** @file
 *  TMA tensor maps for row-major 2-D tiles.  The driver's `cuTensorMapEncodeTiled` is
 *  fetched at run time (`cudaGetDriverEntryPointByVersion`), so no binary links libcuda
 *  and every binary starts on a machine without a GPU driver.  Inputs are validated here
 *  first, so a map the hardware cannot describe is a clear error, never a bad launch.
 */
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (header only; libcuda is never linked)

#include <cstdint>

#include "common/problem.h"
#include "common/status.h"

namespace hm {

/// Shared-memory swizzle of a TMA box; the span is the row width the pattern repeats over.
enum class Swizzle { none = 0, b32 = 32, b64 = 64, b128 = 128 };

/// A row-major matrix in global memory and the box (tile) one TMA copy moves.
struct Tma2d {
  const void* base = nullptr;   ///< element (0, 0)
  DType dtype = DType::bf16;    ///< element type
  uint64_t rows = 0;            ///< outer dimension
  uint64_t cols = 0;            ///< inner (contiguous) dimension
  uint64_t row_stride_bytes = 0;  ///< bytes from one row to the next
  uint32_t box_rows = 0;          ///< rows one copy moves
  uint32_t box_cols = 0;          ///< columns one copy moves
  Swizzle swizzle = Swizzle::b128;  ///< shared-memory layout of the box
};

/// Checks what `cuTensorMapEncodeTiled` requires (CUDA driver API, "Tensor Map Object
/// Management"): 16-byte aligned base; 1 ≤ rows, cols ≤ 2^32; row stride a multiple of 16
/// and below 2^40, and at least one row; 1 ≤ box sides ≤ 256; box row a multiple of 16
/// bytes and, when swizzled, no wider than the swizzle span.  Needs no GPU.
Status validate_tma_2d(const Tma2d& desc);

/// validate_tma_2d, then encodes the map through the driver (zero fill out of bounds,
/// 256-byte L2 promotion).  An error, not an abort, when the driver is missing.
Status make_tma_2d(const Tma2d& desc, CUtensorMap* map);

}  // namespace hm
