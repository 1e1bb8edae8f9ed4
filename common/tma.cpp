/** @file
 *  TMA tensor-map validation and encoding through a run-time driver entry point.
 */
#include "common/tma.h"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime_api.h>

#include <string>

#include "common/driver.h"

namespace hm {

namespace {

std::string describe(const Tma2d& d) {
  return "TMA map (" + std::to_string(d.rows) + " x " + std::to_string(d.cols) + " " +
         dtype_name(d.dtype) + ", row stride " + std::to_string(d.row_stride_bytes) +
         " B, box " + std::to_string(d.box_rows) + " x " + std::to_string(d.box_cols) +
         ", swizzle " + std::to_string(int(d.swizzle)) + " B)";
}

/// cuTensorMapEncodeTiled, fetched once from the driver; an error when there is none.
Status encode_fn(PFN_cuTensorMapEncodeTiled_v12000* fn) {
  static PFN_cuTensorMapEncodeTiled_v12000 cached = nullptr;
  static const Status found = driver_entry_point("cuTensorMapEncodeTiled", 12000, &cached);
  if (found.ok()) *fn = cached;
  return found;
}

}  // namespace

Status validate_tma_2d(const Tma2d& d) {
  const auto fail = [&](const std::string& why) {
    return Status::error("invalid " + describe(d) + ": " + why);
  };
  const uint64_t elem = uint64_t(dtype_bytes(d.dtype));
  if (d.base == nullptr) return fail("base pointer is null");
  if (reinterpret_cast<uintptr_t>(d.base) % 16 != 0) return fail("base is not 16-byte aligned");
  constexpr uint64_t kMaxTmaDim = uint64_t(1) << 32;
  if (d.rows < 1 || d.cols < 1) return fail("every dimension must be at least 1");
  if (d.rows > kMaxTmaDim || d.cols > kMaxTmaDim) return fail("a dimension exceeds 2^32 elements");
  if (d.row_stride_bytes % 16 != 0) return fail("row stride is not a multiple of 16 bytes");
  if (d.row_stride_bytes >= (uint64_t(1) << 40)) return fail("row stride is 2^40 bytes or more");
  if (d.row_stride_bytes < d.cols * elem) return fail("row stride is shorter than a row");
  if (d.box_rows < 1 || d.box_cols < 1 || d.box_rows > 256 || d.box_cols > 256)
    return fail("box sides must be between 1 and 256 elements");
  const uint64_t box_row_bytes = d.box_cols * elem;
  if (box_row_bytes % 16 != 0) return fail("box row is not a multiple of 16 bytes");
  if (d.swizzle != Swizzle::none && box_row_bytes > uint64_t(d.swizzle))
    return fail("box row is wider than the swizzle span");
  return Status();
}

Status make_tma_2d(const Tma2d& d, CUtensorMap* map) {
  HM_TRY(validate_tma_2d(d));
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  HM_TRY(encode_fn(&encode));
  const cuuint64_t dims[2] = {d.cols, d.rows};
  const cuuint64_t strides[1] = {d.row_stride_bytes};
  const cuuint32_t box[2] = {d.box_cols, d.box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  switch (d.swizzle) {
    case Swizzle::none: swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; break;
    case Swizzle::b32: swizzle = CU_TENSOR_MAP_SWIZZLE_32B; break;
    case Swizzle::b64: swizzle = CU_TENSOR_MAP_SWIZZLE_64B; break;
    case Swizzle::b128: swizzle = CU_TENSOR_MAP_SWIZZLE_128B; break;
  }
  const CUtensorMapDataType type = d.dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = encode(map, type, 2, const_cast<void*>(d.base), dims, strides, box,
                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return Status::error("cuTensorMapEncodeTiled rejected " + describe(d) + ": CUresult " +
                         std::to_string(int(r)));
  return Status();
}

}  // namespace hm
