/** @file
 *  The fuzz's host side (tests/fuzz.h), without a GPU: the shapes a seed draws stay within
 *  their bounds and caps and pin every tile edge, a case depends on its seed and index
 *  alone, the environment's settings are read or named when bad, and a failing case's
 *  commands are the test binary's and the command-line tool's.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/problem.h"
#include "common/registry.h"
#include "tests/cli.h"
#include "tests/fuzz.h"
#include "tests/test_util.h"

namespace {

using hm::DType;
using namespace fuzz;  // what these tests check

/// Sets environment variables for one test and puts the old values back afterwards.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_)
      value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
  }
  /// Sets `name` to `value`, or unsets it when `value` is null.
  void set(const char* name, const char* value) {
    const auto named = [name](const auto& saved) { return saved.first == name; };
    if (std::none_of(saved_.begin(), saved_.end(), named)) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    }
    value ? setenv(name, value, 1) : unsetenv(name);
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(FuzzShapes, EverySizeIsInRangeAndEveryCaseUnderTheWorkAndMemoryCaps) {
  for (const uint64_t seed : {kDefaultSeed, uint64_t(1), uint64_t(0xdeadbeef)}) {
    for (int64_t i = 0; i < 20000; ++i) {
      const hm::Problem p = fuzz_case(seed, i, DType::bf16);
      ASSERT_TRUE(p.m >= 1 && p.m <= kMaxMN && p.n >= 1 && p.n <= kMaxMN)
          << "seed " << seed << ", case " << i << ": " << describe(p);
      ASSERT_TRUE(p.k >= 8 && p.k <= kMaxK && p.k % 8 == 0)
          << "seed " << seed << ", case " << i << ": " << describe(p);
      ASSERT_LE(macs(p.m, p.n, p.k), kMaxMacs) << "seed " << seed << ", case " << i;
      ASSERT_LE(case_bytes(p), kMaxCaseBytes) << "seed " << seed << ", case " << i;
      ASSERT_OK(hm::validate_problem(p));
    }
  }
}

TEST(FuzzShapes, EveryEdgeIsPinnedInEveryDimensionByTheEdgeCases) {
  static_assert(kDefaultCases >= kEdgeCases, "the default run must hold every edge case");
  for (const uint64_t seed : {kDefaultSeed, uint64_t(7)}) {
    std::set<int64_t> m, n, k;
    for (int64_t i = 0; i < kEdgeCases; ++i) {
      const hm::Problem p = fuzz_case(seed, i, DType::fp16);
      m.insert(p.m);
      n.insert(p.n);
      k.insert(p.k);
    }
    for (const int64_t e : kEdgesMN) {
      EXPECT_TRUE(m.count(e)) << "seed " << seed << ": no edge case has M = " << e;
      EXPECT_TRUE(n.count(e)) << "seed " << seed << ": no edge case has N = " << e;
    }
    for (const int64_t e : kEdgesK)
      EXPECT_TRUE(k.count(e)) << "seed " << seed << ": no edge case has K = " << e;
  }
  for (const int64_t e : kEdgesK) EXPECT_EQ(e % 8, 0) << e;
}

TEST(FuzzShapes, DrawnSizesAreLogUniformEachDecadeEquallyLikely) {
  Rng rng{kDefaultSeed};
  constexpr int kDraws = 200000;
  std::array<int, 5> decades{};  // [1, 10), [10, 100), …, [10^4, 20000]
  int64_t lowest = kMaxMN, highest = 1;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t x = log_uniform(rng, 1, kMaxMN);
    ASSERT_TRUE(x >= 1 && x <= kMaxMN) << x;
    lowest = std::min(lowest, x);
    highest = std::max(highest, x);
    ++decades[size_t(std::min(4.0, std::floor(std::log10(double(x)))))];
  }
  EXPECT_EQ(lowest, 1);
  EXPECT_EQ(highest, kMaxMN);
  const double per_decade = std::log(10.0) / std::log(double(kMaxMN + 1));  // 0.2326
  for (size_t d = 0; d < 4; ++d)
    EXPECT_NEAR(decades[d] / double(kDraws), per_decade, 0.01) << "decade " << d;
  EXPECT_NEAR(decades[4] / double(kDraws), std::log(2.0001) / std::log(double(kMaxMN + 1)),
              0.01);
  // K is 8 × a draw from [1, 2500]: at most 8 · 50 with chance ln 51 / ln 2501 (0.503).
  int below = 0;
  for (int i = 0; i < kDraws; ++i) below += log_uniform(rng, 1, kMaxK / 8) <= 50;
  EXPECT_NEAR(below / double(kDraws), std::log(51.0) / std::log(2501.0), 0.01);
}

TEST(FuzzShapes, ACaseDependsOnlyOnTheSeedAndItsIndex) {
  int differing = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    const hm::Problem p = fuzz_case(kDefaultSeed, i, DType::bf16);
    const hm::Problem again = fuzz_case(kDefaultSeed, i, DType::fp16);
    EXPECT_TRUE(p.m == again.m && p.n == again.n && p.k == again.k) << "case " << i;
    const hm::Problem other = fuzz_case(kDefaultSeed + 1, i, DType::bf16);
    differing += other.m != p.m || other.n != p.n || other.k != p.k;
  }
  EXPECT_GT(differing, 990) << "another seed should give other shapes";
  EXPECT_NE(input_seed(kDefaultSeed, 3, DType::bf16), input_seed(kDefaultSeed, 3, DType::fp16));
  EXPECT_NE(input_seed(kDefaultSeed, 3, DType::bf16), input_seed(kDefaultSeed, 4, DType::bf16));
}

TEST(FuzzSettings, ReadsTheEnvironmentAndNamesABadValue) {
  ScopedEnv env;
  env.set("HM_FUZZ_SEED", nullptr);
  env.set("HM_FUZZ_CASES", nullptr);
  env.set("HM_FUZZ_CASE", nullptr);
  FuzzSettings s;
  ASSERT_OK(read_fuzz_settings(&s));
  EXPECT_EQ(s.seed, kDefaultSeed);
  EXPECT_EQ(s.cases, kDefaultCases);
  EXPECT_EQ(s.only, -1);

  env.set("HM_FUZZ_SEED", "0x10");
  env.set("HM_FUZZ_CASES", "2500");
  env.set("HM_FUZZ_CASE", "17");
  ASSERT_OK(read_fuzz_settings(&s));
  EXPECT_EQ(s.seed, 16u);
  EXPECT_EQ(s.cases, 2500);
  EXPECT_EQ(s.only, 17);

  env.set("HM_FUZZ_CASE", nullptr);
  for (const char* bad : {"", "abc", "12x", "-3", " 5"}) {
    env.set("HM_FUZZ_CASES", bad);
    EXPECT_ERROR_CONTAINS(read_fuzz_settings(&s), "HM_FUZZ_CASES='" + std::string(bad) + "'");
  }
  env.set("HM_FUZZ_CASES", "0");
  EXPECT_ERROR_CONTAINS(read_fuzz_settings(&s), "at least 1");
  env.set("HM_FUZZ_CASES", nullptr);
  env.set("HM_FUZZ_SEED", "seven");
  EXPECT_ERROR_CONTAINS(read_fuzz_settings(&s), "HM_FUZZ_SEED='seven'");
}

TEST(FuzzRepro, CommandsNameTheVersionShapeDtypeSeedAndCase) {
  EXPECT_EQ(cli_command("build/release/hopper-matmul", "v5_async_wgmma",
                        {1234, 567, 8, DType::fp16}),
            "build/release/hopper-matmul run --version v5_async_wgmma --m 1234 --n 567 --k 8 "
            "--dtype fp16");
  EXPECT_EQ(gtest_command("build/release/tests/hm_tests", 15, 17,
                          "AllVersions/Fuzz.Name/v5_async_wgmma_fp16"),
            "HM_FUZZ_SEED=15 HM_FUZZ_CASE=17 build/release/tests/hm_tests "
            "--gtest_filter='AllVersions/Fuzz.Name/v5_async_wgmma_fp16'");
  EXPECT_NE(this_binary().find("hm_host_tests"), std::string::npos) << this_binary();
}

// The repro command's flags are the command-line tool's: the same command, for every
// version, with K = 12, which the tool rejects as a problem (exit 1, before any GPU is
// needed) and not as a usage error (exit 2).
TEST(FuzzRepro, TheCommandLineToolAcceptsTheCommandsFlags) {
  for (const hm::Version& v : hm::versions()) {
    const std::string command = cli_command(HM_CLI_PATH, v.name, {1234, 567, 12, DType::fp16});
    const auto [status, output] = run_shell(command);
    ASSERT_NE(status, -1) << command;
    EXPECT_EQ(status, 1) << command << "\n" << output;
    EXPECT_NE(output.find("k must be a multiple of 8"), std::string::npos) << output;
  }
}

}  // namespace
