/** @file
 *  GPU tests, parametrized over version × dtype × shape.  Each run gets fresh random
 *  inputs scaled so C has unit variance and a poisoned output; the result is compared with
 *  cuBLAS, with a float64 CPU reference when the problem is small, and with a second run
 *  bit for bit.  Without an sm_90 GPU every test here reports SKIPPED with the reason.
 */
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "common/buffers.h"
#include "common/device.h"
#include "common/reference.h"
#include "common/registry.h"
#include "common/timing.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"
#include "v8_stream_k/matmul.h"

namespace {

using hm::DType;

struct Shape {
  const char* name;
  int64_t m, n, k;
};

/// The shapes every version must get right (CONTRIBUTING.md, "The checks every version
/// passes").  K per stage is 64 or 128 and tiles are 128×128 up to 128×256, so these
/// cover partial tiles, K shorter than one stage and than the whole ring, and odd counts of
/// K slices.
const Shape kShapes[] = {
    {"Square256", 256, 256, 256},
    {"Square1024", 1024, 1024, 1024},
    {"TileMultiples", 384, 512, 256},
    {"RaggedM", 200, 256, 128},
    {"RaggedN", 256, 200, 128},
    {"RaggedK", 256, 256, 136},
    {"RaggedAll", 333, 517, 264},
    {"OddN", 130, 257, 64},
    {"KBelowOneTile", 128, 128, 8},
    {"KBelowOneTileRagged", 77, 93, 40},
    {"KBelowStagesTimesTile", 256, 256, 192},
    {"Tiny", 1, 1, 8},
    {"OneRow", 1, 300, 16},
    {"SkinnyM64", 64, 8192, 512},
    {"SkinnyN8", 8192, 8, 256},
    // Several tiles per CTA on 132 SMs, and 17 (BK 64) or 9 (BK 128) K slices.
    {"ManyTilesPerCtaOddKSlices", 3072, 4096, 1032},
    // Odd tile rows (v7's last cluster of two has one tile past m), ragged N with rows still
    // 16-byte multiples (TMA stores, clipped), several tiles per cluster, 9 K slices.
    {"OddTileRowsSeveralTilesPerCluster", 4200, 2056, 520},
    {"Square2048", 2048, 2048, 2048},
    // Shapes that v8's first stream-K model shared: 133 tiles of 16 slices, 270 tiles after
    // a data-parallel wave, the same ragged with n % 8 != 0 (pairs, register stores); the
    // model of the recorded run keeps whole tiles on them, and stream-K on 128 × 256 tiles
    // is tested with forced schedules (StreamKV8 below).  Then decode shapes, which v8
    // computes as Cᵀ in narrow tiles: whole 64-row ones (N = 5120, K ≤ 8192), 64-row ones
    // split four ways (N = 2048), 128-row ones split three ways (K = 13824) or whole
    // (N = 15360), ragged in M, N (odd) and K in the last; 16 and 32 columns wide for
    // M ≤ 16 and ≤ 32, with rows past M zeroed in the stage (M = 1, 17, 24) or not (16, 32).
    {"StreamKEveryTileSplit", 896, 4864, 1024},
    {"StreamKAfterAWave", 1280, 6912, 2048},
    {"StreamKRaggedPairs", 900, 4860, 1032},
    {"DecodeM64", 64, 5120, 5120},
    {"DecodeM1", 1, 5120, 5120},
    {"DecodeM128", 128, 15360, 5120},
    {"DecodeSplitKIn64RowTiles", 64, 2048, 5120},
    {"DecodeLongKSplitIn128RowTiles", 16, 5120, 13824},
    {"DecodeRaggedM17OddN", 17, 5001, 4104},
    {"DecodeM24SplitKIn64RowTiles", 24, 2048, 5120},
    {"DecodeM32In128RowTiles", 32, 15360, 5120},
    // One whole wave of 132 tiles of Cᵀ, then 44 tiles shared by 132 units of 3 slices
    // that cross tile edges; N ragged with n % 8 != 0 (register stores), K ragged.
    {"DecodeAWaveThenUnitsCrossingTiles", 8, 22500, 520},
    // 128 < M ≤ 256, K > 4096: v8's 128 × 256 tiles of Cᵀ split along K, the pieces'
    // sums meeting in the workspace: 40 tiles in three pieces (the decode shape), 40 ragged
    // in M, N and K (the last tile 8 rows), 63 tiles in two, 16 in eight.
    {"DecodeM256SplitKInThree", 256, 5120, 5120},
    {"RaggedSplitKInThreeIn256ColumnTiles", 136, 5000, 4104},
    {"SplitKInTwoIn256ColumnTiles", 160, 8000, 4104},
    {"SplitKInEightIn256ColumnTiles", 200, 2000, 4104},
    // Rows of A and B whose K·2 bytes are 16 (K = 2056, 5128) or 80 (K = 4136) past a
    // multiple of 128, so that no row starts on a 128-byte line (the benchmark's "pitch"
    // family): whole tiles, ragged M and N, and several tiles per CTA.
    {"PitchRows16BytesPastALine", 2048, 2048, 2056},
    {"PitchRows80BytesPastALineRagged", 1920, 2880, 4136},
    {"PitchRows16BytesPastALineManyTiles", 4096, 4096, 5128},
};

/// Problems up to this many multiply-adds are also checked against the float64 CPU product.
constexpr double kCpuReferenceLimit = double(1 << 27);

/// A seed that differs for every test, so no two tests see the same inputs.
uint64_t seed_for(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char c : name) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

// ---------------------------------------------------------------------------------------

using Param = std::tuple<hm::Version, DType, Shape>;

class Matmul : public testing::TestWithParam<Param> {};

TEST_P(Matmul, MatchesReferencesWritesEveryElementAndRepeatsBitwise) {
  SKIP_WITHOUT_SM90();
  const auto& [version, dtype, shape] = GetParam();
  const hm::Problem p{shape.m, shape.n, shape.k, dtype};
  const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
  cudaStream_t stream = nullptr;  // the legacy default stream: every call below is ordered

  Operands in;
  ASSERT_OK(in.init(p, seed_for(name), stream));
  hm::DeviceBuffer c, again, ref;
  for (hm::DeviceBuffer* buf : {&c, &again, &ref}) {
    ASSERT_OK(buf->allocate(size_t(p.m * p.n * 2)));
    ASSERT_OK(hm::poison(buf->get(), p.m * p.n, dtype, stream));
  }

  ASSERT_OK(version.launch(p, in.a.get(), in.b.get(), c.get(), stream));
  ASSERT_CUDA(cudaStreamSynchronize(stream));

  hm::Cublas cublas;
  ASSERT_OK(cublas.matmul(p, in.a.get(), in.b.get(), ref.get(), stream));
  hm::Comparison vs_cublas;
  ASSERT_OK(hm::compare_on_device(p, c.get(), ref.get(), &vs_cublas, stream));
  EXPECT_TRUE(vs_cublas.pass()) << "against cuBLAS: " << vs_cublas.summary();
  std::printf("against cuBLAS: %s\n", vs_cublas.summary().c_str());

  if (double(p.m) * double(p.n) * double(p.k) <= kCpuReferenceLimit) {
    std::vector<double> exact;
    hm::cpu_reference(p, to_host(in.a.get(), p.m * p.k), to_host(in.b.get(), p.n * p.k), &exact);
    const hm::Comparison vs_exact = hm::compare_with_exact(p, to_host(c.get(), p.m * p.n), exact);
    EXPECT_TRUE(vs_exact.pass()) << "against the float64 CPU product: " << vs_exact.summary();
    std::printf("against the float64 CPU product: %s\n", vs_exact.summary().c_str());
  }

  ASSERT_OK(version.launch(p, in.a.get(), in.b.get(), again.get(), stream));
  int64_t differing = -1;
  ASSERT_OK(hm::count_bit_differences(c.get(), again.get(), p.m * p.n, &differing, stream));
  EXPECT_EQ(differing, 0) << "a second run on the same inputs differs in " << differing
                          << " elements (a race?)";
}

INSTANTIATE_TEST_SUITE_P(
    AllVersions, Matmul,
    testing::Combine(testing::ValuesIn(hm::versions()), testing::Values(DType::bf16, DType::fp16),
                     testing::ValuesIn(kShapes)),
    [](const testing::TestParamInfo<Param>& info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             hm::dtype_name(std::get<1>(info.param)) + "_" + std::get<2>(info.param).name;
    });

// ---------------------------------------------------------------------------------------

class LargeProblem : public testing::TestWithParam<hm::Version> {
 protected:
  /// Runs `p` once and compares it with cuBLAS; skips when the GPU lacks the memory.
  void check(const hm::Problem& p) {
    SKIP_WITHOUT_SM90();
    const size_t bytes = size_t(2 * (p.m * p.k + p.n * p.k + 2 * p.m * p.n));
    size_t free_bytes = 0, total = 0;
    ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
    if (free_bytes < bytes + (size_t(1) << 30))
      GTEST_SKIP() << "needs " << (bytes >> 20) << " MiB of GPU memory; " << (free_bytes >> 20)
                   << " MiB free";
    Operands in;
    ASSERT_OK(in.init(p, 7, nullptr));
    hm::DeviceBuffer c, ref;
    ASSERT_OK(c.allocate(size_t(p.m * p.n * 2)));
    ASSERT_OK(ref.allocate(size_t(p.m * p.n * 2)));
    ASSERT_OK(hm::poison(c.get(), p.m * p.n, p.dtype, nullptr));
    ASSERT_OK(GetParam().launch(p, in.a.get(), in.b.get(), c.get(), nullptr));
    ASSERT_CUDA(cudaDeviceSynchronize());
    hm::Cublas cublas;
    ASSERT_OK(cublas.matmul(p, in.a.get(), in.b.get(), ref.get(), nullptr));
    hm::Comparison cmp;
    ASSERT_OK(hm::compare_on_device(p, c.get(), ref.get(), &cmp, nullptr));
    EXPECT_TRUE(cmp.pass()) << cmp.summary();
  }
};

// A has 262208 · 8192 > 2^31 elements: its last rows lie beyond any 32-bit offset.
TEST_P(LargeProblem, OperandABeyond2To31Elements) {
  check({262208, 128, 8192, DType::bf16});
}

// C has 65600 · 32768 > 2^31 elements: the epilogue's stores need 64-bit offsets.
TEST_P(LargeProblem, OutputCBeyond2To31Elements) {
  check({65600, 32768, 64, DType::bf16});
}

INSTANTIATE_TEST_SUITE_P(AllVersions, LargeProblem, testing::ValuesIn(hm::versions()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------

class BadInput : public testing::TestWithParam<hm::Version> {};

/// `base` moved by `bytes`: an operand placed off or inside an allocation.
void* moved(const void* base, int64_t bytes) {
  return const_cast<char*>(static_cast<const char*>(base)) + bytes;
}

// Every bad input of the contract (README.md, "What is checked"), through each launcher, on
// real device memory: an error that names the cause, nothing launched, and the memory the
// calls in place point into untouched; then the same process computes a good problem, one
// with C right after B in B's allocation, and one with A = B, correctly.  Checked elsewhere:
// the missing or wrong GPU by LauncherValidation.ReportsAMissingOrWrongGpuClearly
// (host_tests.cpp, on machines without an sm_90 GPU), v8's workspace by
// StreamKV8.WorkspaceErrorsAreClearAndACallersWorkspaceWorks.
TEST_P(BadInput, ErrorsAreReportedAndTheProcessGoesOnWorking) {
  SKIP_WITHOUT_SM90();
  const hm::Problem p{256, 192, 128, DType::bf16};  // A 64 KiB, B 48 KiB, C 96 KiB
  const int64_t b_bytes = p.n * p.k * 2, c_bytes = p.m * p.n * 2;
  Operands in;
  ASSERT_OK(in.init(p, 11, nullptr));
  hm::DeviceBuffer c, ref;
  ASSERT_OK(c.allocate(size_t(c_bytes) + 16));
  ASSERT_OK(ref.allocate(size_t(c_bytes)));
  const hm::Launcher launch = GetParam().launch;
  const void* a = in.a.get();
  const void* b = in.b.get();
  void* cc = c.get();
  const auto sized = [](int64_t m, int64_t n, int64_t k) {
    return hm::Problem{m, n, k, DType::bf16};
  };
  const int64_t big = hm::kMaxDim + 8;

  // Sizes: below 1, beyond 2^31 - 256, K not a multiple of 8.
  for (const hm::Problem& q : {sized(0, 192, 128), sized(256, -5, 128), sized(256, 192, 0),
                               sized(256, 192, -8)})
    EXPECT_ERROR_CONTAINS(launch(q, a, b, cc, nullptr), "at least 1");
  for (const hm::Problem& q : {sized(big, 192, 128), sized(256, big, 128), sized(256, 192, big)})
    EXPECT_ERROR_CONTAINS(launch(q, a, b, cc, nullptr), "2^31-256");
  for (const int64_t k : {124, 4, 1})
    EXPECT_ERROR_CONTAINS(launch(sized(256, 192, k), a, b, cc, nullptr), "multiple of 8");
  // Pointers: null, and not 16-byte aligned, each operand.
  EXPECT_ERROR_CONTAINS(launch(p, nullptr, b, cc, nullptr), "A is null");
  EXPECT_ERROR_CONTAINS(launch(p, a, nullptr, cc, nullptr), "B is null");
  EXPECT_ERROR_CONTAINS(launch(p, a, b, nullptr, nullptr), "C is null");
  EXPECT_ERROR_CONTAINS(launch(p, moved(a, 2), b, cc, nullptr), "A is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(launch(p, a, moved(b, 8), cc, nullptr), "B is not 16-byte aligned");
  EXPECT_ERROR_CONTAINS(launch(p, a, b, moved(cc, 8), nullptr), "C is not 16-byte aligned");

  // C overlapping A or B, all three in one arena of random data, so that where each lies is
  // known: A at 128 KiB, B at 512 KiB, C (96 KiB) at each offset below.
  const int64_t arena_bytes = 1 << 20, a_at = 128 << 10, b_at = 512 << 10;
  hm::DeviceBuffer arena, arena_copy;
  ASSERT_OK(arena.allocate(size_t(arena_bytes)));
  ASSERT_OK(arena_copy.allocate(size_t(arena_bytes)));
  ASSERT_OK(hm::fill_uniform(arena.get(), arena_bytes / 2, p.dtype, hm::unit_variance_range(p.k),
                             12, nullptr));
  ASSERT_CUDA(cudaMemcpy(arena_copy.get(), arena.get(), size_t(arena_bytes),
                         cudaMemcpyDeviceToDevice));
  const void* arena_a = moved(arena.get(), a_at);
  const void* arena_b = moved(arena.get(), b_at);
  const struct {
    int64_t c_at;
    const char* error;
  } in_place[] = {
      {a_at, "C overlaps A"},                 // C = A
      {b_at, "C overlaps B"},                 // C = B
      {b_at + b_bytes - 16, "C overlaps B"},  // C starting in B's last 16 bytes
      {a_at + 16 - c_bytes, "C overlaps A"},  // C ending 16 bytes into A
      {a_at - 4096, "C overlaps A"},          // A inside C
  };
  for (const auto& bad : in_place)
    EXPECT_ERROR_CONTAINS(launch(p, arena_a, arena_b, moved(arena.get(), bad.c_at), nullptr),
                          bad.error);
  ASSERT_CUDA(cudaDeviceSynchronize());  // nothing was launched, nothing is left behind
  ASSERT_CUDA(cudaGetLastError());
  int64_t changed = -1;
  ASSERT_OK(hm::count_bit_differences(arena.get(), arena_copy.get(), arena_bytes / 2, &changed,
                                      nullptr));
  EXPECT_EQ(changed, 0) << "the rejected calls in place wrote " << changed << " elements";

  // C right after B, in the same arena: allowed, right, and A and B left as they were.
  void* after_b = moved(arena.get(), b_at + b_bytes);
  ASSERT_OK(hm::poison(after_b, p.m * p.n, p.dtype, nullptr));
  ASSERT_OK(launch(p, arena_a, arena_b, after_b, nullptr));
  hm::Cublas cublas;
  ASSERT_OK(cublas.matmul(p, arena_a, arena_b, ref.get(), nullptr));
  hm::Comparison cmp;
  ASSERT_OK(hm::compare_on_device(p, after_b, ref.get(), &cmp, nullptr));
  EXPECT_TRUE(cmp.pass()) << "C right after B: " << cmp.summary();
  ASSERT_OK(hm::count_bit_differences(arena.get(), arena_copy.get(), (b_at + b_bytes) / 2,
                                      &changed, nullptr));
  EXPECT_EQ(changed, 0) << "writing C right after B changed " << changed
                        << " elements of the arena before it";

  // A good problem on its own allocations, then A = B (only read, so allowed): C = B·Bᵀ.
  for (const auto& [q, left] : {std::pair{p, a}, std::pair{sized(192, 192, 128), b}}) {
    ASSERT_OK(hm::poison(cc, q.m * q.n, q.dtype, nullptr));
    ASSERT_OK(launch(q, left, b, cc, nullptr));
    ASSERT_OK(cublas.matmul(q, left, b, ref.get(), nullptr));
    ASSERT_OK(hm::compare_on_device(q, cc, ref.get(), &cmp, nullptr));
    EXPECT_TRUE(cmp.pass()) << q.m << " x " << q.n << " x " << q.k
                            << (left == b ? " with A = B: " : ": ") << cmp.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, BadInput, testing::ValuesIn(hm::versions()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------
// v8's stream-K with schedules make_schedule() never chooses, to break it where it is
// fragile: one-slice pieces, a unit boundary at every slice of a tile, empty units, more
// workers than K slices.  Each result against cuBLAS, and bitwise on a second run.

/// Runs `p` with schedule `s` twice and checks it against cuBLAS and against itself.
void check_schedule(const hm::Problem& p, const v8_stream_k::Schedule& s, uint64_t seed) {
  Operands in;
  ASSERT_OK(in.init(p, seed, nullptr));
  hm::DeviceBuffer c, again, ref;
  for (hm::DeviceBuffer* buf : {&c, &again, &ref}) {
    ASSERT_OK(buf->allocate(size_t(p.m * p.n * 2)));
    ASSERT_OK(hm::poison(buf->get(), p.m * p.n, p.dtype, nullptr));
  }
  ASSERT_OK(v8_stream_k::matmul(p, in.a.get(), in.b.get(), c.get(), s, nullptr));
  ASSERT_OK(v8_stream_k::matmul(p, in.a.get(), in.b.get(), again.get(), s, nullptr));
  hm::Cublas cublas;
  ASSERT_OK(cublas.matmul(p, in.a.get(), in.b.get(), ref.get(), nullptr));
  hm::Comparison cmp;
  ASSERT_OK(hm::compare_on_device(p, c.get(), ref.get(), &cmp, nullptr));
  EXPECT_TRUE(cmp.pass()) << cmp.summary() << " (" << s.units << " units on " << s.workers
                          << " workers, " << s.sk_tiles << " of " << s.tiles << " tiles)";
  int64_t differing = -1;
  ASSERT_OK(hm::count_bit_differences(c.get(), again.get(), p.m * p.n, &differing, nullptr));
  EXPECT_EQ(differing, 0) << "two runs differ in " << differing << " elements";
}

TEST(StreamKV8, UnitBoundaryAtEverySliceOfATile) {
  SKIP_WITHOUT_SM90();
  // Small M, transposed: one 64 × 64 tile of Cᵀ, 16 slices; boundaries ⌊16·i/units⌋ reach
  // every slice.  The same in the first of 67 tiles of 128 × 64 (N = 8512: 133 tiles of 64
  // rows would not fit on 132 SMs at once), the others whole.  Then three 128 × 256 tiles
  // of C (M > 256), 48 slices, the same way.
  for (int units = 2; units <= 16; ++units) {
    check_schedule({64, 64, 1024, DType::bf16}, {1, 16, units, 1, units, 1}, 100 + units);
    check_schedule({64, 8512, 1024, DType::fp16}, {67, 16, units, 1, units, 1}, 150 + units);
  }
  for (int units = 2; units <= 48; units += units < 16 ? 1 : 8)
    check_schedule({300, 256, 1024, DType::fp16}, {3, 16, units, 3, units, 1}, 200 + units);
}

TEST(StreamKV8, OneSlicePerUnitAndPartialTiles) {
  SKIP_WITHOUT_SM90();
  // 3 × 2 tiles of 16 slices, ragged in M and N (TMA stores), 96 units of one slice each.
  check_schedule({300, 304, 1024, DType::bf16}, {6, 16, 96, 6, 96, 1}, 1);
  check_schedule({300, 304, 1024, DType::fp16}, {6, 16, 96, 6, 96, 1}, 2);
  // Small M, transposed, ragged: Cᵀ of 304 × 200 in five 64 × 256 tiles, of 300 × 100 in
  // five 64 × 128 tiles, and of 200 × 1 in four 64 × 64 tiles.
  check_schedule({200, 304, 1024, DType::bf16}, {5, 16, 80, 5, 80, 1}, 9);
  check_schedule({100, 300, 1024, DType::bf16}, {5, 16, 80, 5, 80, 1}, 7);
  check_schedule({1, 200, 1024, DType::fp16}, {4, 16, 64, 4, 64, 1}, 8);
}

TEST(StreamKV8, MoreWorkersThanSlicesAndEmptyUnits) {
  SKIP_WITHOUT_SM90();
  // One tile (of Cᵀ, M being small) of 4 slices: 8 units, of which half are empty, on 8
  // workers; then 4 units on 12 workers, 8 with nothing to do.
  check_schedule({64, 64, 256, DType::bf16}, {1, 4, 8, 1, 8, 1}, 3);
  check_schedule({64, 64, 256, DType::bf16}, {1, 4, 12, 1, 4, 1}, 4);
}

TEST(StreamKV8, WideSmallMTilesSplitTwoToEightWays) {
  SKIP_WITHOUT_SM90();
  // Cᵀ of 1280 × 256 (M = 256, K > 4096: 128 × 256 tiles), ten tiles of 65 slices, each cut
  // into P pieces of one slice or more: an owner adds P - 1 partials of 256 columns.  Then
  // the owner's piece longer by 7 slices, and by all but one slice for each other piece.
  for (int p = 2; p <= 8; ++p)
    for (const int extra : {0, 7, 65 - p})
      check_schedule({256, 1280, 4160, p % 2 ? DType::fp16 : DType::bf16},
                     {10, 65, 10 * p, 10, 10 * p, 1, extra}, 300 + 10 * p + extra);
}

TEST(StreamKV8, StreamKTilesBeforeWholeOnesInPairs) {
  SKIP_WITHOUT_SM90();
  // n % 8 != 0: clusters of two, whose cluster tiles are 256 rows; 6 × 3 cluster tiles of
  // 17 slices, the first 10 shared by 20 units, the other 8 whole, on 20 workers.
  check_schedule({1500, 700, 1088, DType::bf16}, {18, 17, 20, 10, 20, 1}, 5);
  // The same, each shared tile's owner taking 11 of its 17 slices.
  check_schedule({1500, 700, 1088, DType::fp16}, {18, 17, 20, 10, 20, 1, 5}, 6);
}

TEST(StreamKV8, AnOwnersLongerPieceOutsideSplitKIsAClearError) {
  SKIP_WITHOUT_SM90();
  const hm::Problem p{256, 1280, 4160, DType::bf16};  // ten 128 × 256 tiles of Cᵀ, 65 slices
  Operands in;
  ASSERT_OK(in.init(p, 7, nullptr));
  hm::DeviceBuffer c;
  ASSERT_OK(c.allocate(size_t(p.m * p.n * 2)));
  const auto run = [&](const v8_stream_k::Schedule& s) {
    return v8_stream_k::matmul(p, in.a.get(), in.b.get(), c.get(), s, nullptr);
  };
  // 15 units on 10 tiles straddle them: not split-K.
  EXPECT_ERROR_CONTAINS(run({10, 65, 15, 10, 15, 1, 3}), "does not fit");
  // Two pieces a tile, and 65 - 64 = 1 slice to share evenly between them.
  EXPECT_ERROR_CONTAINS(run({10, 65, 20, 10, 20, 1, 64}), "does not fit");
  EXPECT_ERROR_CONTAINS(run({10, 65, 20, 10, 20, 1, -1}), "does not fit");
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_OK(run({10, 65, 20, 10, 20, 1, 63}));  // the longest: the second piece one slice
  ASSERT_CUDA(cudaDeviceSynchronize());
}

TEST(StreamKV8, WorkspaceErrorsAreClearAndACallersWorkspaceWorks) {
  SKIP_WITHOUT_SM90();
  const hm::Problem p{64, 2048, 5120, DType::bf16};  // split-K: 32 tiles of Cᵀ, four units each
  hm::DeviceInfo info;
  ASSERT_OK(hm::query_current_sm90(&info));
  const size_t bytes = v8_stream_k::workspace_bytes(p, info.sm_count);
  ASSERT_GT(bytes, 0u);
  Operands in;
  ASSERT_OK(in.init(p, 6, nullptr));
  hm::DeviceBuffer c, mine, workspace;
  ASSERT_OK(c.allocate(size_t(p.m * p.n * 2)));
  ASSERT_OK(mine.allocate(size_t(p.m * p.n * 2)));
  ASSERT_OK(workspace.allocate(bytes + 16));
  ASSERT_CUDA(cudaMemset(workspace.get(), 0, bytes + 16));
  const auto* a = in.a.get();
  EXPECT_ERROR_CONTAINS(v8_stream_k::matmul(p, a, in.b.get(), c.get(), nullptr, 0, nullptr),
                        "workspace of 0 bytes");
  EXPECT_ERROR_CONTAINS(
      v8_stream_k::matmul(p, a, in.b.get(), c.get(), workspace.get(), bytes / 2, nullptr),
      "where this launch needs");
  EXPECT_ERROR_CONTAINS(v8_stream_k::matmul(p, a, in.b.get(), c.get(),
                                            static_cast<char*>(workspace.get()) + 8, bytes,
                                            nullptr),
                        "16-byte aligned");
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_OK(v8_stream_k::matmul(p, a, in.b.get(), c.get(), nullptr));  // the cache's
  for (int run = 0; run < 3; ++run) {  // flags must come back to zero after every launch
    ASSERT_OK(hm::poison(mine.get(), p.m * p.n, p.dtype, nullptr));
    ASSERT_OK(v8_stream_k::matmul(p, a, in.b.get(), mine.get(), workspace.get(), bytes, nullptr));
    int64_t differing = -1;
    ASSERT_OK(hm::count_bit_differences(c.get(), mine.get(), p.m * p.n, &differing, nullptr));
    EXPECT_EQ(differing, 0) << "run " << run << " with the caller's workspace";
  }
}

// The benchmark's protocol (common/timing.h).  A launch timed alone on an idle stream: the
// GPU stamps the start event at once and then waits for the host's launch call, so the call
// is in the time.  With the stream held through the call, the time is the GPU's alone; and a
// call that outlasts the hold is made again with a hold four times as long, four tries, and
// then refused, never timed.  Batched, launches back to back between one pair of events give
// one sample, their mean.  The "launch" here spins on the host for 300 us and then enqueues
// a 4-byte memset.
TEST(Timing, AHeldStreamTimesTheGpuAndNotTheHostsLaunchCall) {
  SKIP_WITHOUT_SM90();
  OwnedStream owned;
  ASSERT_OK(owned.create());
  const cudaStream_t stream = owned.stream;
  hm::DeviceBuffer word;
  ASSERT_OK(word.allocate(4));
  const hm::LaunchFn slow_call = [&](int) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
    while (std::chrono::steady_clock::now() < end) {
    }
    return hm::cuda_status(cudaMemsetAsync(word.get(), 0, 4, stream), "cudaMemsetAsync",
                           __FILE__, __LINE__);
  };
  std::vector<double> alone;
  for (int i = 0; i < 5; ++i) ASSERT_OK(hm::time_launches(slow_call, 0, 1, stream, &alone));
  std::vector<double> held, host;
  ASSERT_OK(hm::time_launches(slow_call, 1, 5, stream, &held,
                              {.hold_us = 2000, .host_ms = &host}));
  ASSERT_EQ(held.size(), 5u);
  ASSERT_EQ(host.size(), 5u);
  EXPECT_GE(hm::median(alone), 0.25) << "ms: on an idle stream the host's call is timed too";
  EXPECT_LT(hm::median(held), 0.1) << "ms: held, only the GPU's memset is timed";
  for (const double ms : host) EXPECT_GE(ms, 0.3) << "ms: the host's time in the call";
  std::vector<double> batch;  // ten launches between one pair of events: one sample
  ASSERT_OK(hm::time_launches(slow_call, 0, 10, stream, &batch, {.batch = true}));
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_GE(batch[0], 0.25) << "ms: each launch waited for its 300 us call";
  std::vector<double> refused;
  int retries = 0;  // holds of 1, 4, 16 and 64 us: all shorter than the call
  const hm::Status s =
      hm::time_launches(slow_call, 0, 1, stream, &refused, {.hold_us = 1, .retries = &retries});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("took the host longer than the stream was held"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(retries, 4);
  EXPECT_TRUE(refused.empty());
  retries = 0;  // 100 us, then 400: the second covers the call
  std::vector<double> retried;
  ASSERT_OK(hm::time_launches(slow_call, 0, 1, stream, &retried,
                              {.hold_us = 100, .retries = &retries}));
  EXPECT_EQ(retries, 1);
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_LT(retried[0], 0.1) << "ms: the retried launch is timed by the GPU alone";
  ASSERT_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace
