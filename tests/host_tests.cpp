/** @file
 *  Tests that need no GPU: TMA descriptor and problem validation, the registry, the
 *  tolerance and the host-side reference.  They run in CI, on machines without a driver.
 */
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/buffers.h"
#include "common/device.h"
#include "common/problem.h"
#include "common/reference.h"
#include "common/registry.h"
#include "common/timing.h"
#include "common/tma.h"
#include "tests/test_util.h"

// What the descriptor and tile-order tests below check, as each version exports it.
#include "v1_wgmma/matmul.h"
#include "v2_pipeline/matmul.h"
#include "v3_warp_specialized/matmul.h"
#include "v4_persistent/matmul.h"
#include "v5_async_wgmma/matmul.h"
#include "v6_tma_store/matmul.h"
#include "v7_multicast/matmul.h"
#include "v8_stream_k/matmul.h"
#include "v9_pingpong/matmul.h"

namespace {

using hm::DType;

/// An address that is 16-byte aligned but never dereferenced (validation only).
const void* fake_address(uintptr_t offset = 0) {
  return reinterpret_cast<const void*>(uintptr_t(1) << 20 | offset);
}

/// A valid descriptor: a 1000×4096 bf16 matrix, 128×64 boxes, 128-byte swizzle.
hm::Tma2d good_map() {
  return {.base = fake_address(), .dtype = DType::bf16, .rows = 1000, .cols = 4096,
          .row_stride_bytes = 4096 * 2, .box_rows = 128, .box_cols = 64,
          .swizzle = hm::Swizzle::b128};
}

// ---------------------------------------------------------------------------------------
// TMA descriptor validation

TEST(TmaValidation, AcceptsAlignedRowMajorTile) { ASSERT_OK(hm::validate_tma_2d(good_map())); }

TEST(TmaValidation, AcceptsBoxLargerThanTheMatrix) {
  hm::Tma2d d = good_map();
  d.rows = 1;
  d.cols = 8;
  d.row_stride_bytes = 16;
  ASSERT_OK(hm::validate_tma_2d(d));  // TMA zero-fills the rest of the box
}

TEST(TmaValidation, RejectsNullBase) {
  hm::Tma2d d = good_map();
  d.base = nullptr;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "null");
}

TEST(TmaValidation, RejectsBaseNotAlignedTo16Bytes) {
  hm::Tma2d d = good_map();
  d.base = fake_address(8);
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "16-byte aligned");
}

TEST(TmaValidation, RejectsRowStrideNotMultipleOf16) {
  hm::Tma2d d = good_map();
  d.row_stride_bytes = 4096 * 2 + 8;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "multiple of 16");
}

TEST(TmaValidation, RejectsRowStrideShorterThanARow) {
  hm::Tma2d d = good_map();
  d.row_stride_bytes = 4096;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "shorter than a row");
}

TEST(TmaValidation, RejectsRowStrideOf2To40Bytes) {
  hm::Tma2d d = good_map();
  d.rows = 2;
  d.row_stride_bytes = uint64_t(1) << 40;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "2^40");
}

TEST(TmaValidation, RejectsEmptyAndOversizedDimensions) {
  hm::Tma2d d = good_map();
  d.rows = 0;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "at least 1");
  d = good_map();
  d.rows = (uint64_t(1) << 32) + 1;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "2^32");
}

TEST(TmaValidation, RejectsBoxSidesOutside1To256) {
  hm::Tma2d d = good_map();
  d.box_rows = 257;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "between 1 and 256");
  d = good_map();
  d.box_cols = 0;
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "between 1 and 256");
}

TEST(TmaValidation, RejectsBoxRowNotMultipleOf16Bytes) {
  hm::Tma2d d = good_map();
  d.box_cols = 12;  // 24 bytes
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "box row is not a multiple of 16");
}

TEST(TmaValidation, RejectsBoxRowWiderThanTheSwizzleSpan) {
  hm::Tma2d d = good_map();
  d.box_cols = 128;  // 256 bytes > 128-byte swizzle
  EXPECT_ERROR_CONTAINS(hm::validate_tma_2d(d), "wider than the swizzle span");
  d.swizzle = hm::Swizzle::none;
  ASSERT_OK(hm::validate_tma_2d(d));
}

TEST(TmaValidation, EncodingWithoutADriverIsAnErrorNotACrash) {
  alignas(64) CUtensorMap map;
  hm::Tma2d d = good_map();
  if (hm::require_sm90().ok()) {  // a real GPU: encoding a device allocation must work
    hm::DeviceBuffer buffer;
    ASSERT_OK(buffer.allocate(d.rows * d.row_stride_bytes));
    d.base = buffer.get();
    ASSERT_OK(hm::make_tma_2d(d, &map));
    return;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
    GTEST_SKIP() << "a non-Hopper GPU is present; this test covers machines without a driver";
  cudaGetLastError();
  const hm::Status s = hm::make_tma_2d(d, &map);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cuTensorMapEncodeTiled"), std::string::npos) << s.message();
}

// ---------------------------------------------------------------------------------------
// Problem and operand validation

TEST(ProblemValidation, AcceptsTheSmallestProblem) {
  ASSERT_OK(hm::validate_problem({1, 1, 8, DType::bf16}));
}

TEST(ProblemValidation, RejectsZeroAndNegativeSizes) {
  for (const hm::Problem p : {hm::Problem{0, 8, 8}, hm::Problem{8, 0, 8}, hm::Problem{8, 8, 0},
                              hm::Problem{-1, 8, 8}, hm::Problem{8, -128, 8},
                              hm::Problem{8, 8, -8}})
    EXPECT_ERROR_CONTAINS(hm::validate_problem(p), "at least 1");
}

TEST(ProblemValidation, RejectsKNotMultipleOf8) {
  for (const int64_t k : {1, 4, 7, 9, 100, 8190})
    EXPECT_ERROR_CONTAINS(hm::validate_problem({64, 64, k}), "multiple of 8");
}

TEST(ProblemValidation, RejectsSizesBeyond32BitCoordinates) {
  const int64_t big = hm::kMaxDim + 8;
  EXPECT_ERROR_CONTAINS(hm::validate_problem({big, 8, 8}), "2^31-256");
  EXPECT_ERROR_CONTAINS(hm::validate_problem({8, big, 8}), "2^31-256");
  EXPECT_ERROR_CONTAINS(hm::validate_problem({8, 8, big}), "2^31-256");
  ASSERT_OK(hm::validate_problem({hm::kMaxDim, 8, 8}));
}

TEST(OperandValidation, RejectsNullPointers) {
  EXPECT_ERROR_CONTAINS(hm::validate_operands(nullptr, fake_address(), fake_address()), "A is null");
  EXPECT_ERROR_CONTAINS(hm::validate_operands(fake_address(), nullptr, fake_address()), "B is null");
  EXPECT_ERROR_CONTAINS(hm::validate_operands(fake_address(), fake_address(), nullptr), "C is null");
}

TEST(OperandValidation, RejectsPointersNotAlignedTo16Bytes) {
  EXPECT_ERROR_CONTAINS(hm::validate_operands(fake_address(2), fake_address(), fake_address()),
                        "A is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(hm::validate_operands(fake_address(), fake_address(8), fake_address()),
                        "B is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(hm::validate_operands(fake_address(), fake_address(), fake_address(4)),
                        "C is not 16-byte aligned");
}

// ---------------------------------------------------------------------------------------
// C against A and B, byte for byte (validate_no_overlap, which needs neither alignment nor a
// GPU, so these place ranges at any byte).  In kSkinny, A (16 × 256) is 8192 bytes, B (64 ×
// 256) 32768 bytes and C (16 × 64) 2048 bytes.

const hm::Problem kSkinny{16, 64, 256, DType::bf16};
constexpr uintptr_t kBytesA = 16 * 256 * 2, kBytesB = 64 * 256 * 2, kBytesC = 16 * 64 * 2;

/// The fake address `base + offset` (never dereferenced); any byte, aligned or not.
const void* at(uintptr_t base, uintptr_t offset) {
  return reinterpret_cast<const void*>(base + offset);
}

constexpr uintptr_t kBaseA = uintptr_t(1) << 30, kBaseB = uintptr_t(1) << 31;

TEST(OverlapValidation, RejectsCIdenticalToA) {
  const void* a = at(kBaseA, 0);
  const void* b = at(kBaseB, 0);
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, a), "C overlaps A");
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, a), "2048 bytes shared");
  // The launcher's check too, before the GPU's: the same error on any machine.
  EXPECT_ERROR_CONTAINS(hm::validate_launch(kSkinny, a, b, a), "C overlaps A");
  EXPECT_ERROR_CONTAINS(hm::validate_launch(kSkinny, a, a, a), "C overlaps A");  // A first
}

TEST(OverlapValidation, RejectsCInsideB) {
  const void* a = at(kBaseA, 0);
  const void* b = at(kBaseB, 0);
  for (const uintptr_t offset : {uintptr_t(0), uintptr_t(4096), kBytesB - kBytesC}) {
    EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, at(kBaseB, offset)),
                          "C overlaps B");
    EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, at(kBaseB, offset)),
                          "2048 bytes shared");
  }
  EXPECT_ERROR_CONTAINS(hm::validate_launch(kSkinny, a, b, at(kBaseB, 4096)), "C overlaps B");
  // The other way round, B inside C: a C of 512 × 8 (8192 bytes) around a B of 8 × 64.
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap({512, 8, 64}, a, at(kBaseB, 16), at(kBaseB, 0)),
                        "1024 bytes shared");
}

TEST(OverlapValidation, RejectsCEndingOneByteIntoA) {
  const void* a = at(kBaseA, 0);
  const void* b = at(kBaseB, 0);
  const void* c = at(kBaseA - kBytesC, 1);  // C's last byte is A's first
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, c), "C overlaps A");
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, c), "1 byte shared");
  // And A's last byte C's first.
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(kSkinny, a, b, at(kBaseA, kBytesA - 1)),
                        "1 byte shared");
  // The launcher sees C misaligned first; 16 bytes into A, aligned, it sees the overlap.
  EXPECT_ERROR_CONTAINS(hm::validate_launch(kSkinny, a, b, c), "C is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(hm::validate_launch(kSkinny, a, b, at(kBaseA - kBytesC, 16)),
                        "C overlaps A");
}

TEST(OverlapValidation, AcceptsAdjacentRanges) {
  const void* a = at(kBaseA, 0);
  const void* b = at(kBaseB, 0);
  ASSERT_OK(hm::validate_no_overlap(kSkinny, a, b, at(kBaseA, kBytesA)));          // after A
  ASSERT_OK(hm::validate_no_overlap(kSkinny, a, b, at(kBaseA - kBytesC, 0)));      // before A
  ASSERT_OK(hm::validate_no_overlap(kSkinny, a, b, at(kBaseB - kBytesC, 0)));      // before B
  ASSERT_OK(hm::validate_no_overlap(kSkinny, a, b, at(kBaseB, kBytesB)));          // after B
  // A, C and B back to back, in one allocation.
  ASSERT_OK(hm::validate_no_overlap(kSkinny, a, at(kBaseA, kBytesA + kBytesC),
                                    at(kBaseA, kBytesA)));
}

TEST(OverlapValidation, AcceptsAEqualToBOrOverlappingIt) {
  const void* a = at(kBaseA, 0);
  const void* c = at(kBaseB, 0);
  ASSERT_OK(hm::validate_no_overlap(kSkinny, a, a, c));  // A and B only read: one pointer is fine
  ASSERT_OK(hm::validate_no_overlap(kSkinny, at(kBaseA, 4096), a, c));  // A inside B
  ASSERT_OK(hm::validate_no_overlap({64, 64, 256}, a, a, c));           // A·Aᵀ
}

TEST(OverlapValidation, HandlesTheLargestSizesWithoutOverflow) {
  // m = n = k = kMaxDim: every operand is 2·kMaxDim² bytes, just under 2^63.
  const hm::Problem p{hm::kMaxDim, hm::kMaxDim, hm::kMaxDim, DType::bf16};
  const uintptr_t bytes = uintptr_t(2) * uintptr_t(hm::kMaxDim) * uintptr_t(hm::kMaxDim);
  ASSERT_LT(bytes, uintptr_t(1) << 63);
  const uintptr_t a = 16;
  ASSERT_OK(hm::validate_no_overlap(p, at(a, 0), at(a, 0), at(a, bytes)));  // C just after A
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap(p, at(a, 0), at(a, 0), at(a, bytes - 16)),
                        "16 bytes shared");
  // C, then A right up to the last address, so that A's end, 2^64, wraps to 0.
  const uintptr_t top_a = uintptr_t(0) - bytes;
  ASSERT_OK(hm::validate_no_overlap(p, at(top_a, 0), at(top_a, 0), at(top_a - bytes, 0)));
  // And a C inside such an A, which a comparison with A's end (0) would let through: A of
  // 512 × 1024 (2^20 bytes) ending at 2^64, C of 512 × 8 in its middle.
  const uintptr_t top = uintptr_t(0) - (uintptr_t(1) << 20);
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap({512, 8, 1024}, at(top, 0), at(kBaseB, 0),
                                                at(top, uintptr_t(1) << 19)),
                        "8192 bytes shared");
}

TEST(OverlapValidation, SizesOutOfRangeGetTheProblemsError) {
  const void* a = at(kBaseA, 0);
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap({0, 8, 8}, a, a, a), "at least 1");
  EXPECT_ERROR_CONTAINS(hm::validate_no_overlap({8, hm::kMaxDim + 8, 8}, a, a, a), "2^31-256");
}

// ---------------------------------------------------------------------------------------
// Launchers reject bad input before they touch the GPU, so these run everywhere.

class LauncherValidation : public testing::TestWithParam<hm::Version> {};

TEST_P(LauncherValidation, RejectsBadInputBeforeTouchingTheGpu) {
  const hm::Launcher launch = GetParam().launch;
  const void* x = fake_address();  // A and B (the same pointer, which is allowed)
  void* y = const_cast<void*>(fake_address(uintptr_t(1) << 30));  // C, 1 GiB further
  const int64_t big = hm::kMaxDim + 8;
  EXPECT_ERROR_CONTAINS(launch({64, 64, 12}, x, x, y, nullptr), "multiple of 8");
  EXPECT_ERROR_CONTAINS(launch({0, 64, 64}, x, x, y, nullptr), "at least 1");
  EXPECT_ERROR_CONTAINS(launch({64, -1, 64}, x, x, y, nullptr), "at least 1");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 0}, x, x, y, nullptr), "at least 1");
  EXPECT_ERROR_CONTAINS(launch({64, 64, -8}, x, x, y, nullptr), "at least 1");
  EXPECT_ERROR_CONTAINS(launch({big, 64, 64}, x, x, y, nullptr), "2^31-256");
  EXPECT_ERROR_CONTAINS(launch({64, big, 64}, x, x, y, nullptr), "2^31-256");
  EXPECT_ERROR_CONTAINS(launch({64, 64, big}, x, x, y, nullptr), "2^31-256");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, nullptr, x, y, nullptr), "A is null");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, x, nullptr, y, nullptr), "B is null");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, x, x, nullptr, nullptr), "C is null");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, fake_address(2), x, y, nullptr),
                        "A is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, x, fake_address(8), y, nullptr),
                        "B is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, x, x, static_cast<char*>(y) + 4, nullptr),
                        "C is not 16-byte aligned");
  // In place: C = A, and C inside B (x + 8 KiB, in B's 64 × 4096 × 2 bytes).
  void* in_a = const_cast<void*>(x);
  EXPECT_ERROR_CONTAINS(launch({64, 64, 64}, x, fake_address(1 << 16), in_a, nullptr),
                        "C overlaps A");
  EXPECT_ERROR_CONTAINS(
      launch({16, 64, 4096}, fake_address(1 << 19), x, static_cast<char*>(in_a) + 8192, nullptr),
      "C overlaps B");
}

TEST_P(LauncherValidation, ReportsAMissingOrWrongGpuClearly) {
  const hm::Status gpu = hm::require_sm90();
  if (gpu.ok()) GTEST_SKIP() << "an sm_90 GPU is present; this test covers machines without one";
  const void* x = fake_address();
  void* y = const_cast<void*>(fake_address(uintptr_t(1) << 30));
  const hm::Status s = GetParam().launch({256, 256, 256}, x, x, y, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), gpu.message());
  EXPECT_NE(s.message().find("sm_90"), std::string::npos) << s.message();
  // Which of the two: no GPU (or no driver) at all, or a GPU of another compute capability.
  int devices = 0;
  const bool none = cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0;
  cudaGetLastError();
  EXPECT_NE(s.message().find(none ? "no usable CUDA GPU" : "run only on compute capability 9.0"),
            std::string::npos)
      << s.message();
}

// Why there is no usable GPU, told apart: no driver at all, a driver older than the CUDA
// runtime these binaries carry (the runtime's error is the same for both), or no GPU.
TEST(GpuCheck, TellsNoDriverFromAnOldDriverFromNoGpu) {
  const std::string none = hm::no_gpu_reason(cudaErrorInsufficientDriver, 0, 13000);
  EXPECT_NE(none.find("no NVIDIA driver is installed"), std::string::npos) << none;
  const std::string old = hm::no_gpu_reason(cudaErrorInsufficientDriver, 12040, 13000);
  EXPECT_NE(old.find("the NVIDIA driver supports CUDA 12.4, older than the CUDA 13.0 runtime"),
            std::string::npos) << old;
  EXPECT_NE(old.find("install a driver for CUDA 13.0 or newer"), std::string::npos) << old;
  const std::string no_gpu = hm::no_gpu_reason(cudaErrorNoDevice, 13000, 13000);
  EXPECT_NE(no_gpu.find("the NVIDIA driver (CUDA 13.0) found no GPU"), std::string::npos)
      << no_gpu;
  // And this machine's own answer, where it has no GPU.
  int driver = 0;
  cudaDriverGetVersion(&driver);
  const hm::Status gpu = hm::require_sm90();
  if (!gpu.ok() && driver == 0)
    EXPECT_NE(gpu.message().find("no NVIDIA driver is installed"), std::string::npos)
        << gpu.message();
}

INSTANTIATE_TEST_SUITE_P(AllVersions, LauncherValidation, testing::ValuesIn(hm::versions()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------
// wgmma matrix descriptors (PTX ISA, "Matrix Descriptor Format"): for a K-major operand in
// 128B-swizzled shared memory, start address >> 4 in bits 0-13, leading byte offset 16 >> 4
// in bits 16-29, stride byte offset 1024 >> 4 in bits 32-45, base offset 0 in bits 49-51,
// swizzle mode 1 (128 B) in bits 62-63.

using DescriptorFn = uint64_t (*)(uint32_t);

class WgmmaDescriptor : public testing::TestWithParam<std::pair<const char*, DescriptorFn>> {};

TEST_P(WgmmaDescriptor, EncodesTheFieldsOfThePtxLayout) {
  const DescriptorFn desc = GetParam().second;
  const uint32_t addr = 0x1400;  // a 1024-byte aligned shared-memory address
  const uint64_t d = desc(addr);
  EXPECT_EQ(d & 0x3fff, addr >> 4);           // start address
  EXPECT_EQ((d >> 16) & 0x3fff, 16u >> 4);    // leading byte offset
  EXPECT_EQ((d >> 32) & 0x3fff, 1024u >> 4);  // stride byte offset
  EXPECT_EQ((d >> 49) & 0x7, 0u);             // base offset
  EXPECT_EQ(d >> 62, 1u);                     // 128-byte swizzle
  EXPECT_EQ(d, 0x4000004000010140ull);        // all of it, worked out by hand
}

TEST_P(WgmmaDescriptor, AdvancesByAddingTheByteOffsetOver16) {
  const DescriptorFn desc = GetParam().second;
  const uint32_t base = 0x8000;
  for (uint32_t ks = 0; ks < 4; ++ks)  // k16 steps inside one 128-byte swizzled row
    EXPECT_EQ(desc(base + 32 * ks), desc(base) + 2 * ks);
  EXPECT_EQ(desc(base + 64 * 128), desc(base) + (64 * 128 >> 4));        // next m64 slab
  EXPECT_EQ(desc(base + 3 * 49152), desc(base) + (3 * 49152 >> 4));      // a later stage
  EXPECT_EQ(desc(0x3fff0) & 0x3fff, 0x3fffu);                             // top of the field
}

INSTANTIATE_TEST_SUITE_P(Versions, WgmmaDescriptor,
                         testing::Values(
                             std::pair{"v1_wgmma", &v1_wgmma::smem_descriptor},
                             std::pair{"v2_pipeline", &v2_pipeline::smem_descriptor},
                             std::pair{"v3_warp_specialized", &v3_warp_specialized::smem_descriptor},
                             std::pair{"v4_persistent", &v4_persistent::smem_descriptor},
                             std::pair{"v5_async_wgmma", &v5_async_wgmma::smem_descriptor},
                             std::pair{"v6_tma_store", &v6_tma_store::smem_descriptor},
                             std::pair{"v7_multicast", &v7_multicast::smem_descriptor}),
                         [](const auto& info) { return std::string(info.param.first); });

// ---------------------------------------------------------------------------------------
// The persistent kernels' tile order (v4, v5): every tile of the grid exactly once, none
// outside it, consecutive tiles in column-major order inside each group of tile rows.

template <typename Coord>
void check_tile_order(Coord (*tile_coord)(int, int, int, int)) {
  const int grids[][2] = {{1, 1}, {1, 7}, {7, 1}, {8, 8}, {9, 5}, {64, 32}, {63, 33},
                          {17, 130}, {100, 3}, {3, 100}, {24, 16}, {65, 65}};
  for (const auto& [tiles_m, tiles_n] : grids) {
    for (const int group : {1, 2, 3, 8, 16, 100}) {
      std::vector<int> visits(size_t(tiles_m * tiles_n), 0);
      for (int tile = 0; tile < tiles_m * tiles_n; ++tile) {
        const Coord c = tile_coord(tile, tiles_m, tiles_n, group);
        ASSERT_TRUE(c.m >= 0 && c.m < tiles_m && c.n >= 0 && c.n < tiles_n)
            << "tile " << tile << " of " << tiles_m << "x" << tiles_n << ", group " << group
            << " maps to (" << c.m << ", " << c.n << ")";
        ++visits[size_t(c.m * tiles_n + c.n)];
        if (tile > 0) {  // inside a group, the next tile is one row down or the next column
          const Coord prev = tile_coord(tile - 1, tiles_m, tiles_n, group);
          const bool down = c.n == prev.n && c.m == prev.m + 1;
          const bool next_column = c.n == prev.n + 1 && c.m <= prev.m;
          const bool next_group = c.n == 0 && prev.n == tiles_n - 1 && c.m == prev.m + 1;
          EXPECT_TRUE(down || next_column || next_group)
              << "tile " << tile << ": (" << prev.m << ", " << prev.n << ") -> (" << c.m << ", "
              << c.n << ") in " << tiles_m << "x" << tiles_n << ", group " << group;
        }
      }
      for (size_t i = 0; i < visits.size(); ++i)
        ASSERT_EQ(visits[i], 1) << "tile (" << i / tiles_n << ", " << i % tiles_n << ") of "
                                << tiles_m << "x" << tiles_n << ", group " << group;
    }
  }
}

TEST(TileOrder, EveryTileVisitedOnceV4) { check_tile_order(&v4_persistent::tile_coord); }
TEST(TileOrder, EveryTileVisitedOnceV5) { check_tile_order(&v5_async_wgmma::tile_coord); }
TEST(TileOrder, EveryTileVisitedOnceV6) { check_tile_order(&v6_tma_store::tile_coord); }
TEST(TileOrder, EveryTileVisitedOnceV7) { check_tile_order(&v7_multicast::tile_coord); }

// v7's clusters: cluster tile t of a cluster of cluster_m CTAs gives CTA r one tile; the
// CTAs of a cluster share a tile column (the B they multicast) on consecutive tile rows.
// Every tile of the grid is computed exactly once, and the only CTAs without a real tile are
// in the last cluster row, when tiles_m is not a multiple of cluster_m.
TEST(TileOrder, EveryTileVisitedOnceByClustersV7) {
  const int grids[][2] = {{1, 1}, {1, 7}, {7, 1}, {8, 8}, {9, 5}, {64, 32}, {63, 33},
                          {17, 130}, {33, 9}, {3, 100}, {65, 65}};
  for (const auto& [tiles_m, tiles_n] : grids) {
    for (const int cluster_m : {1, 2, 4}) {
      for (const int group : {4, 8, 16}) {
        const int cluster_rows = (tiles_m + cluster_m - 1) / cluster_m;
        std::vector<int> visits(size_t(tiles_m * tiles_n), 0);
        for (int tile = 0; tile < cluster_rows * tiles_n; ++tile) {
          const auto first =
              v7_multicast::cluster_tile_coord(tile, 0, tiles_m, tiles_n, group, cluster_m);
          for (int rank = 0; rank < cluster_m; ++rank) {
            const auto c =
                v7_multicast::cluster_tile_coord(tile, rank, tiles_m, tiles_n, group, cluster_m);
            ASSERT_EQ(c.n, first.n) << "the CTAs of a cluster share a tile column";
            ASSERT_EQ(c.m, first.m + rank) << "the CTAs of a cluster take consecutive rows";
            ASSERT_TRUE(c.n >= 0 && c.n < tiles_n && c.m >= 0 && c.m < cluster_rows * cluster_m)
                << "cluster tile " << tile << ", rank " << rank << " of " << tiles_m << "x"
                << tiles_n << " maps to (" << c.m << ", " << c.n << ")";
            if (c.m < tiles_m) ++visits[size_t(c.m * tiles_n + c.n)];
          }
        }
        for (size_t i = 0; i < visits.size(); ++i)
          ASSERT_EQ(visits[i], 1) << "tile (" << i / tiles_n << ", " << i % tiles_n << ") of "
                                  << tiles_m << "x" << tiles_n << ", cluster " << cluster_m
                                  << ", group " << group;
      }
    }
  }
}

// v8's schedule, simulated on the host as the kernel walks it: every K slice of every tile is
// computed by exactly one piece; each tile has one owner (the piece of slice 0); a worker
// hands over at most one partial sum, before it waits, and waits in at most one piece, only
// for higher units, which are exactly the ones the kernel's loop visits.
TEST(StreamK, EverySliceComputedOnceAndEveryTileOwnedOnceV8) {
  for (const v8_stream_k::Tiling tiling : {v8_stream_k::Tiling{false, 256}, {true, 64},
                                           {true, 256}, {true, 64, 64}, {true, 16},
                                           {true, 32, 64}})
  for (const int workers : {1, 2, 7, 66, 132}) {
    for (const int tiles : {1, 2, 5, 20, 40, 60, 66, 67, 131, 132, 133, 200, 288, 594, 800,
                            2048}) {
      for (const int k_tiles : {1, 2, 3, 8, 15, 16, 17, 24, 64, 80, 128, 217}) {
        const v8_stream_k::Schedule s =
            v8_stream_k::make_schedule(tiles, k_tiles, workers, tiling);
        ASSERT_LE(s.workers, workers);
        ASSERT_LE(s.units, s.workers);
        for (int u = 0; s.units > 0 && u <= s.units; ++u) {  // what the kernel reads
          const int64_t begin = v8_stream_k::unit_begin(s, u);
          ASSERT_EQ(s.start[u].tile, begin / k_tiles) << "unit " << u;
          ASSERT_EQ(s.start[u].k, begin % k_tiles) << "unit " << u;
          if (u < s.units)
            ASSERT_EQ(v8_stream_k::unit_empty(s, u), v8_stream_k::unit_begin(s, u + 1) == begin);
        }
        std::vector<int> done(size_t(tiles) * k_tiles, 0), owners(size_t(tiles), 0);
        std::vector<std::vector<int>> handed(static_cast<size_t>(tiles));  // who hands over
        std::vector<int> waits_for(size_t(tiles), -1);        // the owner's unit, if it waits
        for (int worker = 0; worker < s.workers; ++worker) {
          v8_stream_k::WorkUnit w;
          bool handed_over = false, waited = false;
          for (int u = 0; v8_stream_k::work_unit(s, worker, u, &w); ++u) {
            ASSERT_TRUE(w.tile >= 0 && w.tile < tiles && w.k_begin >= 0 && w.k_begin < w.k_end &&
                        w.k_end <= k_tiles)
                << "worker " << worker << " piece " << u;
            for (int kt = w.k_begin; kt < w.k_end; ++kt) ++done[size_t(w.tile) * k_tiles + kt];
            if (w.k_begin > 0) {
              ASSERT_FALSE(waited) << "a worker hands over before it waits, and only once";
              ASSERT_FALSE(handed_over) << "a worker hands over at most one partial sum";
              handed_over = true;
              handed[size_t(w.tile)].push_back(worker);
            } else {
              ++owners[size_t(w.tile)];
              if (w.k_end < k_tiles) {
                ASSERT_FALSE(waited) << "a worker waits in one piece at most";
                waited = true;
                waits_for[size_t(w.tile)] = worker;
              }
            }
            if (w.k_end - w.k_begin < k_tiles)
              ASSERT_GE(w.k_end - w.k_begin, s.min_slices) << "a piece of a shared tile";
          }
        }
        for (size_t i = 0; i < done.size(); ++i)
          ASSERT_EQ(done[i], 1) << "slice " << i % k_tiles << " of tile " << i / k_tiles << ", "
                                << tiles << " tiles of " << k_tiles << " on " << workers;
        for (int tile = 0; tile < tiles; ++tile) {
          ASSERT_EQ(owners[size_t(tile)], 1) << "tile " << tile;
          const int owner = waits_for[size_t(tile)];
          if (owner < 0) {
            ASSERT_TRUE(handed[size_t(tile)].empty());
            continue;
          }
          // The units the kernel's owner visits (step 12): the next non-empty ones that begin
          // before the tile's end.
          std::vector<int> visited;
          const int64_t tile_end = int64_t(tile + 1) * k_tiles;
          for (int other = owner + 1; v8_stream_k::unit_begin(s, other) < tile_end; ++other)
            if (v8_stream_k::unit_begin(s, other + 1) != v8_stream_k::unit_begin(s, other))
              visited.push_back(other);
          ASSERT_EQ(visited, handed[size_t(tile)]) << "tile " << tile << " owned by " << owner;
        }
      }
    }
  }
}

// The rule the chapter explains: whole tiles where they divide among the SMs or K is short,
// stream-K where the last wave would leave SMs idle.
TEST(StreamK, ScheduleRuleV8) {
  const v8_stream_k::Tiling c{false, 256}, small_m{true, 64};
  const auto sk = [](int tiles, int k_tiles, const v8_stream_k::Tiling& tiling) {
    return v8_stream_k::make_schedule(tiles, k_tiles, 132, tiling);
  };
  EXPECT_EQ(sk(264, 128, c).units, 0) << "2 full waves";
  EXPECT_EQ(sk(200, 15, c).units, 0) << "K too short to split";
  EXPECT_EQ(sk(2048, 128, c).units, 0) << "8192^3, 15.5 waves: stream-K slices wait on HBM";
  EXPECT_EQ(sk(72, 24, c).units, 0) << "1536^3, 72 tiles: likewise";
  EXPECT_EQ(sk(512, 64, c).units, 0) << "4096^3: the last wave 88% full, too little to gain";
  EXPECT_EQ(sk(800, 80, c).units, 0) << "5120^3, 6.06 waves: 10 partials per shared tile";
  EXPECT_EQ(sk(1064, 64, c).units, 0) << "1024x34048x4096, 8.06 waves: likewise";
  const v8_stream_k::Schedule one_more = sk(133, 128, c);
  EXPECT_EQ(one_more.sk_tiles, 1) << "one tile past a full wave, K long: that tile is shared";
  EXPECT_EQ(one_more.units, 16) << "by 16 units of 8 slices";
  const v8_stream_k::Schedule decode = sk(40, 216, small_m);  // 64x5120x13824: 40 of C^T
  EXPECT_EQ(decode.sk_tiles, 40);
  EXPECT_EQ(decode.units, 120) << "3 units per tile, none straddling two: 12 SMs idle";
  EXPECT_EQ(decode.min_slices, 1) << "small-M units split anywhere";
  const v8_stream_k::Tiling rows64{true, 64, 64};
  EXPECT_EQ(sk(80, 80, rows64).units, 0) << "64x5120x5120: 80 tiles of 64 rows, each whole";
  const v8_stream_k::Schedule narrow = sk(32, 80, rows64);  // 64x2048x5120
  EXPECT_EQ(narrow.units, 128) << "32 tiles of 64 rows, each split in four";
  EXPECT_EQ(narrow.workers, 128);
  const v8_stream_k::Tiling m1{true, 16}, m256{true, 256};
  const v8_stream_k::Schedule crossing = sk(216, 80, m1);  // 1x27648x5120: 216 of C^T
  EXPECT_EQ(crossing.sk_tiles, 84) << "a whole wave, then the 84 tiles left, at least 132 / 3";
  EXPECT_EQ(crossing.units, 132) << "shared by every SM, units crossing tile edges";
  const v8_stream_k::Schedule few_left = sk(144, 80, m1);  // 1x18432x5120
  EXPECT_EQ(few_left.sk_tiles, 144) << "12 tiles left, fewer than 132 / 3: every tile shared";
  EXPECT_EQ(few_left.units, 132);
  const v8_stream_k::Schedule later = sk(448, 80, m1);  // 1x57344x5120
  EXPECT_EQ(later.sk_tiles, 184) << "after three full waves: the last one shared as well";
  const v8_stream_k::Schedule wide = sk(216, 80, m256);  // 256x27648x5120
  EXPECT_EQ(wide.sk_tiles, 216) << "256 columns: every tile shared, as v7's tiles would be";
}

// Split along K, a tile of 256 columns gives its owner a longer piece, so that the other
// pieces' sums are on their way before its K loop ends; narrower tiles split evenly.
TEST(StreamK, TheOwnerOfASplitTileOf256ColumnsTakesMoreSlicesV8) {
  const v8_stream_k::Schedule wide = v8_stream_k::make_schedule(40, 80, 132, {true, 256});
  ASSERT_EQ(wide.units, 120) << "256x5120x5120: 40 tiles of C^T, each in three pieces";
  ASSERT_GT(wide.owner_extra, 0);
  const int rest = (80 - wide.owner_extra) / 3;  // the others' even share, rounded down
  EXPECT_EQ(wide.start[1].tile, 0);
  EXPECT_EQ(wide.start[1].k, wide.owner_extra + rest) << "the owner's piece";
  EXPECT_EQ(wide.start[2].k, wide.owner_extra + (80 - wide.owner_extra) * 2 / 3);
  EXPECT_EQ(wide.start[3].tile, 1);
  EXPECT_EQ(wide.start[3].k, 0) << "no piece straddles two tiles";
  const v8_stream_k::Schedule narrow = v8_stream_k::make_schedule(40, 216, 132, {true, 64});
  ASSERT_EQ(narrow.units, 120);
  EXPECT_EQ(narrow.owner_extra, 0) << "64x5120x13824: three even pieces";
  EXPECT_EQ(narrow.start[1].k, 72);
}

// The small-M rule the chapter explains: M ≤ 64 and 128 < M ≤ 256, and M ≤ 128 where v7's
// tiles of C would leave a quarter of the SMs idle, computes Cᵀ = B·Aᵀ in the narrowest
// tile that holds M; the rest keeps v7's 128 × 256 tiles of C.  The tiles of Cᵀ are 64
// rows where N / 64 of them fit on the SMs at once and K ≤ 8192 (4096 at 256 columns).
TEST(StreamK, SmallMTilingRuleV8) {
  const auto tiling = [](int64_t m, int64_t n, int64_t k = 5120) {
    return v8_stream_k::choose_tiling(m, n, k, 132);
  };
  for (const int64_t m : {1, 8, 9, 16, 17, 32, 33, 64})
    for (const int64_t n : {256, 5120, 27648}) {
      EXPECT_TRUE(tiling(m, n).transposed) << m << " x " << n;
      EXPECT_EQ(tiling(m, n).bn, m <= 16 ? 16 : m <= 32 ? 32 : 64)
          << "the narrowest of 16, 32 and 64 columns: " << m << " x " << n;
    }
  EXPECT_TRUE(tiling(100, 5120).transposed) << "20 tiles of C";
  EXPECT_EQ(tiling(128, 15360).bn, 128) << "60 tiles of C";
  EXPECT_FALSE(tiling(128, 27648).transposed) << "108 tiles of C: 82% of the SMs";
  EXPECT_FALSE(tiling(100, 27648).transposed) << "likewise";
  for (const int64_t m : {129, 200, 256})
    for (const int64_t n : {64, 13824, 15360, 27648}) {
      EXPECT_TRUE(tiling(m, n).transposed) << "as many tiles, as wide: " << m << " x " << n;
      EXPECT_EQ(tiling(m, n).bn, 256) << m << " x " << n;
    }
  for (const int64_t m : {257, 8192}) {
    EXPECT_FALSE(tiling(m, 64).transposed) << "M = " << m;
    EXPECT_EQ(tiling(m, 64).bn, 256) << "M = " << m;
  }
  for (const int64_t m : {1, 64, 100, 128}) {
    EXPECT_EQ(tiling(m, 5120).bm, 64) << "80 tiles of 64 rows, M = " << m;
    EXPECT_EQ(tiling(m, 5120, 8192).bm, 64) << "K = 8192, M = " << m;
    EXPECT_EQ(tiling(m, 5120, 13824).bm, 128) << "K = 13824: 128 rows, split, M = " << m;
    EXPECT_EQ(tiling(m, 8448).bm, 64) << "132 tiles of 64 rows, M = " << m;
    EXPECT_EQ(tiling(m, 8449).bm, 128) << "133 would not fit at once, M = " << m;
    EXPECT_EQ(tiling(m, 15360).bm, 128) << "M = " << m;
  }
  EXPECT_EQ(tiling(256, 5120, 4096).bm, 64) << "256 columns: K = 4096";
  EXPECT_EQ(tiling(256, 5120).bm, 128) << "256 columns: K = 5120";
  EXPECT_EQ(v8_stream_k::choose_tiling(64, 5120, 5120, 64).bm, 128) << "on 64 SMs";
  EXPECT_EQ(tiling(8192, 5120).bm, 128) << "v7's tiles";
}

// Which problems v9 runs on its ping-pong kernel (the chapter's rule): v7's tiling with
// TMA stores where v8 keeps whole 128 × 256 tiles; v8's kernels elsewhere.
TEST(PingPong, PathRuleV9) {
  const auto pp = [](int64_t m, int64_t n, int64_t k) {
    return v9_pingpong::pingpong_path({m, n, k, hm::DType::bf16}, 132);
  };
  EXPECT_TRUE(pp(8192, 8192, 8192));
  for (const int64_t k : {512, 1024})  // the short-K family
    EXPECT_TRUE(pp(8192, 8192, k)) << "K = " << k;
  EXPECT_TRUE(pp(4096, 16384, 1024));
  EXPECT_TRUE(pp(16384, 4096, 2048));
  EXPECT_TRUE(pp(1024, 34048, 4096)) << "waves: v8 keeps whole tiles";
  EXPECT_FALSE(pp(64, 5120, 5120)) << "small M: the transposed kernel";
  EXPECT_FALSE(pp(8192, 8191, 8192)) << "n % 8 != 0: v8's pairs store C themselves";
  EXPECT_FALSE(pp(8192, 8192, 8200)) << "rows off the 128-byte lines: v8's pairs";
  EXPECT_FALSE(pp(1920, 2880, 4136)) << "rows off the 128-byte lines: v8's pairs";
  EXPECT_FALSE(pp(128 * 19, 256 * 7, 8192)) << "133 tiles of long K: v8's stream-K units";
  EXPECT_FALSE(pp(4096, 4096, 4096)) << "704 ping-pong tiles take 6 waves, v8's 512 take 4";
  EXPECT_TRUE(pp(5120, 5120, 5120)) << "9 waves of 3/4 the work beat 7 waves, 6.06 of them full";
}

TEST(StreamK, WorkspaceBytesV8) {
  EXPECT_EQ(v8_stream_k::workspace_bytes({8192, 8192, 960, hm::DType::bf16}, 132), 0u);
  EXPECT_EQ(v8_stream_k::workspace_bytes({64, 5120, 5120, hm::DType::bf16}, 132),
            size_t(1152 + 132 * 2 * 65536));
  EXPECT_EQ(v8_stream_k::workspace_bytes({64, 5120, 64, hm::DType::bf16}, 132), 0u)
      << "one K slice: nothing to split";
  EXPECT_GT(v8_stream_k::workspace_bytes({64, 5120, 128, hm::DType::bf16}, 132), 0u)
      << "small-M units split anywhere";
}

TEST(TileOrder, GroupsShareRowsOfA) {
  // 8 tile rows in a group: the first 8 tiles are column 0, rows 0..7; the 9th starts column 1.
  const auto c7 = v4_persistent::tile_coord(7, 64, 32, 8);
  const auto c8 = v4_persistent::tile_coord(8, 64, 32, 8);
  EXPECT_EQ(c7.m, 7);
  EXPECT_EQ(c7.n, 0);
  EXPECT_EQ(c8.m, 0);
  EXPECT_EQ(c8.n, 1);
  // A last group of 3 leftover rows (67 = 8·8 + 3) still covers them column by column.
  const auto last = v4_persistent::tile_coord(64 * 5, 67, 5, 8);
  EXPECT_EQ(last.m, 64);
  EXPECT_EQ(last.n, 0);
  EXPECT_EQ(v4_persistent::tile_coord(64 * 5 + 3, 67, 5, 8).n, 1);
}

// ---------------------------------------------------------------------------------------
// The registry

TEST(Registry, EveryVersionFolderIsRegistered) {
  std::set<std::string> folders;
  for (const auto& entry : std::filesystem::directory_iterator(HM_SOURCE_DIR)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.size() > 2 && name[0] == 'v' && std::isdigit(name[1]) &&
        name.find('_') != std::string::npos)
      folders.insert(name);
  }
  ASSERT_FALSE(folders.empty()) << "no v*_* folder under " << HM_SOURCE_DIR;
  std::set<std::string> registered;
  for (const hm::Version& v : hm::versions()) registered.insert(std::string(v.name));
  // The registry is generated from the v*_*/matmul.cu folders CMake found: a folder without
  // matmul.cu, or one added since the last configure, shows up here.
  for (const std::string& f : folders)
    EXPECT_TRUE(registered.count(f)) << f << "/ is not registered (no matmul.cu, or the build "
                                     << "was configured before it existed: re-run cmake)";
  for (const std::string& r : registered)
    EXPECT_TRUE(folders.count(r)) << r << " is registered but has no folder";
  for (const std::string& f : folders)
    for (const char* file : {"matmul.cu", "matmul.h"})
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(HM_SOURCE_DIR) / f / file))
          << f << "/ has no " << file;
}

TEST(Registry, VersionsAreInLadderOrderAndDescribed) {
  const auto all = hm::versions();
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].name.substr(0, 3), "v" + std::to_string(i) + "_");
    EXPECT_FALSE(all[i].technique.empty()) << all[i].name;
    EXPECT_NE(all[i].launch, nullptr) << all[i].name;
    ASSERT_NE(all[i].config, nullptr) << all[i].name;
    const hm::KernelConfig& k = *all[i].config;
    EXPECT_LE(k.smem_bytes * k.ctas_per_sm, 228 * 1024) << all[i].name << ": shared memory per SM";
    EXPECT_LE(k.smem_bytes, 227 * 1024) << all[i].name << ": shared memory per CTA";
    EXPECT_EQ(k.threads % 128, 0) << all[i].name << ": whole warpgroups";
    EXPECT_EQ(k.bk % 64, 0) << all[i].name << ": whole 128-byte swizzle atoms along K";
    EXPECT_EQ(hm::find_version(all[i].name), &all[i]);
  }
  EXPECT_EQ(hm::find_version("v99_nothing"), nullptr);
}

// ---------------------------------------------------------------------------------------
// Tolerance, reference and timing helpers

TEST(Tolerance, IsLooserForBf16AndGrowsWithK) {
  const hm::Tolerance bf16 = hm::tolerance_for({64, 64, 1024, DType::bf16});
  const hm::Tolerance fp16 = hm::tolerance_for({64, 64, 1024, DType::fp16});
  const hm::Tolerance bf16_long = hm::tolerance_for({64, 64, 65536, DType::bf16});
  EXPECT_GT(bf16.rtol, fp16.rtol);
  EXPECT_GT(bf16_long.atol, bf16.atol);
  EXPECT_DOUBLE_EQ(bf16.rtol, 2 * 0x1p-8);
  EXPECT_DOUBLE_EQ(fp16.rtol, 2 * 0x1p-11);
  EXPECT_LT(bf16_long.rel_fro, 0.02);  // still far below what a wrong kernel produces
}

TEST(Reference, DecodesStoredElements) {
  EXPECT_EQ(hm::to_double(0x3f80, DType::bf16), 1.0);
  EXPECT_EQ(hm::to_double(0xc040, DType::bf16), -3.0);
  EXPECT_EQ(hm::to_double(0x3c00, DType::fp16), 1.0);
  EXPECT_EQ(hm::to_double(0xc000, DType::fp16), -2.0);
  EXPECT_EQ(hm::to_double(0x0001, DType::fp16), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_TRUE(std::isnan(hm::to_double(hm::poison_bits(DType::bf16), DType::bf16)));
  EXPECT_TRUE(std::isnan(hm::to_double(hm::poison_bits(DType::fp16), DType::fp16)));
}

TEST(Reference, CpuReferenceIsTheExactProduct) {
  // A = [[1, 2, ..., 8]], B = [[1, 1, ..., 1], [2, 0, ..., 0]] in bf16.
  const hm::Problem p{1, 2, 8, DType::bf16};
  std::vector<uint16_t> a, b(16, 0);
  for (int i = 1; i <= 8; ++i) {
    const float f = float(i);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    a.push_back(uint16_t(bits >> 16));
  }
  for (int i = 0; i < 8; ++i) b[i] = 0x3f80;
  b[8] = 0x4000;
  std::vector<double> ref;
  hm::cpu_reference(p, a, b, &ref);
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_EQ(ref[0], 36.0);
  EXPECT_EQ(ref[1], 2.0);
}

TEST(Reference, ComparisonFlagsPoisonNaNAndWrongValues) {
  const hm::Problem p{1, 4, 8, DType::bf16};
  const std::vector<double> ref = {1.0, 1.0, 1.0, 1.0};
  EXPECT_TRUE(hm::compare_with_exact(p, {0x3f80, 0x3f80, 0x3f80, 0x3f80}, ref).pass());
  const hm::Comparison c =
      hm::compare_with_exact(p, {hm::poison_bits(DType::bf16), 0x7fc0, 0x4000, 0x3f80}, ref);
  EXPECT_EQ(c.unwritten, 1);
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.out_of_tol, 1);  // 2.0 where 1.0 was expected
  EXPECT_FALSE(c.pass());
  EXPECT_NE(c.summary().find("FAIL"), std::string::npos);
}

TEST(Buffers, UnitVarianceRangeGivesUnitVarianceProducts) {
  for (const int64_t k : {8, 512, 8192}) {
    const double s = hm::unit_variance_range(k);
    EXPECT_NEAR(double(k) * std::pow(s * s / 3, 2), 1.0, 1e-12);
  }
}

TEST(Timing, MedianAndRotation) {
  EXPECT_EQ(hm::median({3, 1, 2}), 2);
  EXPECT_EQ(hm::median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(hm::rotation_sets(400 << 20, 50 << 20), 1);  // 8192^3 bf16: no rotation needed
  EXPECT_EQ(hm::rotation_sets(10 << 20, 50 << 20), 10);  // covers twice L2
  EXPECT_EQ(hm::rotation_sets(1 << 10, 50 << 20), 16);   // capped
}

}  // namespace
