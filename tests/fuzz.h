/** @file
 *  The fuzz's host side, shared by the fuzz itself (tests/gpu_fuzz_tests.cpp, GPU) and its
 *  host tests (tests/fuzz_tests.cpp): the shapes a seed draws, the settings read from the
 *  environment, and the commands a failing case prints.
 *
 *      HM_FUZZ_SEED   the seed of the fuzz's shapes and inputs (default kDefaultSeed)
 *      HM_FUZZ_CASES  cases per version and dtype (default kDefaultCases)
 *      HM_FUZZ_CASE   run this one case alone (what a failure's repro command sets)
 */
#pragma once

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/problem.h"
#include "common/status.h"

namespace fuzz {

using hm::DType;

/// "333x517x264 bf16", for messages.
inline std::string describe(const hm::Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
         hm::dtype_name(p.dtype);
}

inline constexpr int64_t kMaxMN = 20000;  ///< M and N are drawn from [1, kMaxMN]
inline constexpr int64_t kMaxK = 20000;   ///< K from the multiples of 8 in [8, kMaxK]
/// The most multiply-adds a case may take, 2^34 (20000 × 20000 × 40): 34 GFLOP, 0.1 ms at
/// v0's 8192³ rate (378 TFLOPS), so that no case computes for long.
inline constexpr double kMaxMacs = 0x1p34;
/// The most device memory a case may take (A, B, C and the reference): 2 GiB.  Under the
/// work cap the largest is about 1.6 GB (C and its reference at 20000 × 20000).
inline constexpr double kMaxCaseBytes = 0x1p31;
/// In a drawn case, each size is one of the edges below this often, else log-uniform.
inline constexpr double kEdgeChance = 0.25;

/// Sizes of M and N where tiles begin and end: 1, 8, each side of 64 (the wgmma M of a
/// warpgroup, v8's narrowest Cᵀ tile), 128 (BM; v0's and v2's BN) and 256 (BN), 2^k ± 1 up
/// to 2^14 ± 1 (tile counts one over or under a power of two), and the bound.
inline constexpr auto kEdgesMN = std::to_array<int64_t>({
    1,    3,    5,    7,    8,    9,    15,   17,   31,    33,    63,
    64,   65,   127,  128,  129,  255,  256,  257,  511,   513,   1023,
    1025, 2047, 2049, 4095, 4097, 8191, 8193, 16383, 16385, kMaxMN});
/// Sizes of K (multiples of 8) where K slices and rings begin and end: 8, 2^k ± 8 around
/// BK = 64 and v2's 128, rings of 3 and 4 slices of 64 (192, 256), 2^k ± 8 up to 2^14 ± 8,
/// and the bound.
inline constexpr auto kEdgesK = std::to_array<int64_t>({
    8,    16,   24,   40,   56,   64,   72,   120,  128,  136,  184,  192,   200,   248,  256,
    264,  504,  520,  1016, 1032, 2040, 2056, 4088, 4104, 8184, 8200, 16376, 16392, kMaxK});
/// Cases 0 … kEdgeCases-1 pin one size each to one edge (every M edge, then every N edge,
/// then every K edge) and draw the other two; later cases draw all three.
inline constexpr int64_t kEdgeCases = 2 * int64_t(kEdgesMN.size()) + int64_t(kEdgesK.size());

/// The fuzz's defaults: a fixed seed (printed by every run), and kDefaultCases cases per
/// version and dtype, the edge cases first.  Estimated on an H200: under kMaxMacs no case
/// computes for more than ~0.1 ms, so a case costs its fixed work (five allocations and
/// frees, seven launches, a synchronisation, cuBLAS's heuristic: ~1 ms, assumed) and its
/// memory (allocating and freeing at ~2 ms per GB, traffic at ~2.5 TB/s).  The default
/// seed's 1024 cases allocate 22 GB in all (one case at a time, 0.8 GB at most), move 61 GB
/// and compute 2.5 TFLOP (the version's and cuBLAS's): ~1.1 s per version and dtype, ~20 s
/// for all 18, plus each CTest process's start (a CUDA context and a cuBLAS handle, ~1 s).
/// Other seeds: within 2%.  Were a case's fixed work 3 ms, ~1 minute.
inline constexpr uint64_t kDefaultSeed = 15;
inline constexpr int64_t kDefaultCases = 1024;

/// SplitMix64: small, and the same numbers with every compiler and standard library
/// (std::uniform_real_distribution is not), so that a seed names the same shapes anywhere.
struct Rng {
  uint64_t state;

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  ///< in [0, 1)
  size_t below(size_t n) { return size_t(uniform() * double(n)); }  ///< in [0, n)
};

/// An integer in [lo, hi] (lo ≥ 1) whose logarithm is uniform, ⌊lo · ((hi + 1) / lo)^u⌋ for
/// u uniform in [0, 1): every factor of ten between lo and hi is equally likely.
inline int64_t log_uniform(Rng& rng, int64_t lo, int64_t hi) {
  const double x = double(lo) * std::pow(double(hi + 1) / double(lo), rng.uniform());
  return std::clamp(int64_t(x), lo, hi);
}

/// M·N·K, as a double (like the caps).
inline double macs(int64_t m, int64_t n, int64_t k) {
  return double(m) * double(n) * double(k);
}

/// Device bytes of a case: A, B, C and cuBLAS's reference, 2 bytes an element.
inline double case_bytes(const hm::Problem& p) {
  return 2.0 * (double(p.m) * double(p.k) + double(p.n) * double(p.k) +
                2.0 * double(p.m) * double(p.n));
}

/// Case `index` of the fuzz with `seed`: a pure function of the two, so that one case can
/// be run alone.  Edge cases pin one size (see kEdgeCases); a size that is drawn is an edge
/// with chance kEdgeChance, else log-uniform over its range.  Draws over kMaxMacs are drawn
/// again (a case is never cut down to fit, which would pile shapes up at the cap).
inline hm::Problem fuzz_case(uint64_t seed, int64_t index, DType dtype) {
  Rng rng{seed ^ (uint64_t(index) * 0xd1b54a32d192ed03ull)};
  rng.next();
  const auto draw_mn = [&rng] {
    return rng.uniform() < kEdgeChance ? kEdgesMN[rng.below(kEdgesMN.size())]
                                       : log_uniform(rng, 1, kMaxMN);
  };
  const auto draw_k = [&rng] {
    return rng.uniform() < kEdgeChance ? kEdgesK[rng.below(kEdgesK.size())]
                                       : 8 * log_uniform(rng, 1, kMaxK / 8);
  };
  // Which size is pinned: 0 for M, 1 for N, 2 for K, -1 for none.
  int pinned = -1;
  int64_t edge = 0;
  if (index >= 0 && index < kEdgeCases) {
    const auto mn = int64_t(kEdgesMN.size());
    pinned = index < mn ? 0 : index < 2 * mn ? 1 : 2;
    edge = pinned < 2 ? kEdgesMN[size_t(index % mn)] : kEdgesK[size_t(index - 2 * mn)];
  }
  for (int tries = 0;; ++tries) {
    int64_t m = pinned == 0 ? edge : draw_mn();
    int64_t n = pinned == 1 ? edge : draw_mn();
    int64_t k = pinned == 2 ? edge : draw_k();
    if (tries == 64) {  // a draw fits with chance 0.75 or more: never seen.  The smallest
      if (pinned != 0) m = 1;
      if (pinned != 1) n = 1;
      if (pinned != 2) k = 8;
    }
    if (macs(m, n, k) <= kMaxMacs || tries == 64) return {m, n, k, dtype};
  }
}

/// The seed of case `index`'s inputs, different for every case and dtype.
inline uint64_t input_seed(uint64_t seed, int64_t index, DType dtype) {
  Rng rng{seed ^ (uint64_t(index) * 0x9fb21c651e98df25ull) ^ (dtype == DType::fp16)};
  return rng.next();
}

/// What a fuzz run does: which seed, how many cases, or one case alone.
struct FuzzSettings {
  uint64_t seed = kDefaultSeed;
  int64_t cases = kDefaultCases;
  int64_t only = -1;  ///< HM_FUZZ_CASE, or -1: run cases 0 … cases-1
};

/// Reads the unsigned integer in environment variable `name` into `out`, if it is set (in
/// decimal, or hex with 0x); a value that is not one is an error naming the variable.
inline hm::Status read_env(const char* name, uint64_t* out) {
  const char* text = std::getenv(name);
  if (text == nullptr) return hm::Status();
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (!(text[0] >= '0' && text[0] <= '9') || *end != '\0')
    return hm::Status::error(std::string(name) + "='" + text +
                             "' is not an unsigned integer (decimal, or hex with 0x)");
  *out = value;
  return hm::Status();
}

/// The settings from HM_FUZZ_SEED, HM_FUZZ_CASES and HM_FUZZ_CASE, defaults where unset.
inline hm::Status read_fuzz_settings(FuzzSettings* out) {
  FuzzSettings s;
  uint64_t cases = uint64_t(s.cases), only = ~uint64_t(0);
  HM_TRY(read_env("HM_FUZZ_SEED", &s.seed));
  HM_TRY(read_env("HM_FUZZ_CASES", &cases));
  HM_TRY(read_env("HM_FUZZ_CASE", &only));
  constexpr uint64_t kMost = uint64_t(1) << 40;
  if (cases < 1 || cases > kMost)
    return hm::Status::error("HM_FUZZ_CASES=" + std::to_string(cases) +
                             ": the number of cases must be at least 1 (and below 2^40)");
  if (only != ~uint64_t(0) && only >= kMost)
    return hm::Status::error("HM_FUZZ_CASE=" + std::to_string(only) + ": too large");
  s.cases = int64_t(cases);
  s.only = only == ~uint64_t(0) ? -1 : int64_t(only);
  *out = s;
  return hm::Status();
}

/// The command-line tool's command that runs `version` on `p`'s shape and checks it against
/// cuBLAS (on inputs of its own: the shape, not the data, of the failing case).
inline std::string cli_command(const std::string& cli, std::string_view version,
                               const hm::Problem& p) {
  return cli + " run --version " + std::string(version) + " --m " + std::to_string(p.m) +
         " --n " + std::to_string(p.n) + " --k " + std::to_string(p.k) + " --dtype " +
         hm::dtype_name(p.dtype);
}

/// The command that runs case `index` of the fuzz with `seed` alone, in test `test`.
inline std::string gtest_command(const std::string& binary, uint64_t seed, int64_t index,
                                 const std::string& test) {
  return "HM_FUZZ_SEED=" + std::to_string(seed) + " HM_FUZZ_CASE=" + std::to_string(index) +
         " " + binary + " --gtest_filter='" + test + "'";
}

/// This test binary's path (for the repro command), or its name when Linux will not say.
inline std::string this_binary() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, size_t(length)) : std::string("hm_gpu_tests");
}

}  // namespace fuzz
