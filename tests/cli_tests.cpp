/** @file
 *  The command-line tool without a GPU: its usage, its errors and the flags it takes.  A
 *  usage error exits 2 and a problem it cannot take exits 1, in both cases before any GPU
 *  is needed.
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/bandwidth.h"
#include "common/problem.h"
#include "common/reference.h"
#include "tests/cli.h"

namespace {

using hm::DType;

/// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// --help, -h and help print the whole usage on standard output and succeed, after a
// command too; with no command at all the usage is the answer, as a usage error (exit 2).
TEST(CliUsage, HelpPrintsTheUsageAndSucceeds) {
  for (const char* args : {"--help", "-h", "help", "run --help", "sweep --shapes 8x8x8 -h"}) {
    const auto [code, out] = run_shell(std::string(HM_CLI_PATH) + " " + args + " 2>/dev/null");
    EXPECT_EQ(code, 0) << args << "\n" << out;
    EXPECT_EQ(out.rfind("usage:", 0), 0u) << args << "\n" << out;
    EXPECT_NE(out.find("hopper-matmul sweep"), std::string::npos) << args << "\n" << out;
  }
  const auto [code, out] = run_cli("");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("hopper-matmul ladder"), std::string::npos) << out;
}

// A usage error is the line that says what is wrong, then where the usage is: never the
// whole usage after it.
TEST(CliUsage, AUsageErrorIsOneLineAndAPointerToHelp) {
  const std::pair<const char*, const char*> cases[] = {
      {"frobnicate", "unknown command 'frobnicate'"},
      {"ladder --m", "missing value after --m"},
      {"ladder --bogus 1", "unknown option --bogus"},
      {"ladder --rounds 0", "bad value '0' for --rounds"},
      {"run", "run needs --version NAME"},
      {"run --version v99_nothing", "no version called 'v99_nothing'"},
      {"ladder --version v0_mma_sync", "--version is for run"},
      {"ladder --shapes 8x8x8", "--shapes and --shapes-file are for sweep"},
  };
  for (const auto& [args, why] : cases) {
    const auto [code, out] = run_cli(args);
    EXPECT_EQ(code, 2) << args << "\n" << out;
    const std::vector<std::string> lines = lines_of(out);
    ASSERT_EQ(lines.size(), 2u) << args << "\n" << out;
    EXPECT_EQ(lines[0].rfind("hopper-matmul: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(why), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1], "Try 'hopper-matmul --help' for the usage.") << args;
  }
}

// A list with an empty item (a comma at either end, or two in a row) is a mistake, not a
// shorter list.
TEST(CliUsage, ListsRejectEmptyItems) {
  const std::pair<const char*, const char*> cases[] = {
      {"run --version v0_mma_sync,", "--version 'v0_mma_sync,' has an empty name"},
      {"run --version ,v0_mma_sync", "--version ',v0_mma_sync' has an empty name"},
      {"sweep --versions v0_mma_sync,,v1_wgmma --shapes 8x8x8", "has an empty name"},
      {"sweep --shapes 64x64x64,", "--shapes '64x64x64,' has an empty shape"},
      {"sweep --shapes ,", "has an empty shape"},
  };
  for (const auto& [args, why] : cases) {
    const auto [code, out] = run_cli(args);
    EXPECT_EQ(code, 2) << args << "\n" << out;
    EXPECT_NE(out.find(why), std::string::npos) << args << "\n" << out;
  }
}

// Where the results go is checked before anything is measured: a folder that does not
// exist, or a folder given as the file, is a usage error (exit 2) at once, on a machine
// with a GPU as without one (which would otherwise fail first, exit 1).
TEST(CliUsage, OutputPathsAreCheckedBeforeMeasuring) {
  const std::string missing = ::testing::TempDir() + "no-such-folder/results.json";
  for (const std::string& command : {"ladder", "sweep --shapes 64x64x64", "list",
                                     "run --version v0_mma_sync"}) {
    auto [code, out] = run_cli(command + " --json " + missing);
    EXPECT_EQ(code, 2) << command << "\n" << out;
    EXPECT_NE(out.find("there is no folder"), std::string::npos) << command << "\n" << out;
    EXPECT_EQ(out.find("no usable CUDA GPU"), std::string::npos) << command << "\n" << out;
    std::tie(code, out) = run_cli(command + " --json " + ::testing::TempDir());
    EXPECT_EQ(code, 2) << command << "\n" << out;
    EXPECT_NE(out.find("is a folder"), std::string::npos) << command << "\n" << out;
  }
}

// --reference cpu (what scripts/gpu_check.sh runs compute-sanitizer on): run only, cpu or
// cublas only, and a problem it cannot take is a problem error (exit 1) before any GPU.
TEST(CliReference, TheFlagIsForRunAndTakesCpuOrCublas) {
  auto [code, out] = run_cli("ladder --reference cpu");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--reference cpu is for run"), std::string::npos) << out;
  std::tie(code, out) = run_cli("run --version v4_persistent --reference gpu");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--reference must be cublas or cpu, not 'gpu'"), std::string::npos) << out;
  std::tie(code, out) = run_cli("run --version v4_persistent --m 64 --n 64 --k 12 --reference cpu");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("k must be a multiple of 8"), std::string::npos) << out;
}

// --timing takes launch or batch; anything else is a usage error (exit 2), and batch is a
// protocol, not a problem: a bad problem still fails as one (exit 1) before any GPU.
TEST(CliTiming, TheFlagTakesLaunchOrBatch) {
  auto [code, out] = run_cli("sweep --shapes 64x64x64 --timing events");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--timing must be launch or batch, not 'events'"), std::string::npos)
      << out;
  std::tie(code, out) = run_cli("run --version v8_stream_k --m 64 --n 64 --k 12 --timing batch");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("k must be a multiple of 8"), std::string::npos) << out;
}

// --read-roofline takes on or off, for sweep only; anything else is a usage error (exit 2).
TEST(CliReadRoofline, TheFlagIsForSweepAndTakesOnOrOff) {
  auto [code, out] = run_cli("ladder --read-roofline on");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--read-roofline is for sweep"), std::string::npos) << out;
  std::tie(code, out) = run_cli("sweep --shapes 64x64x64 --read-roofline yes");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--read-roofline must be on or off, not 'yes'"), std::string::npos)
      << out;
}

// The plain read validates what it reads as matmul() does: an error, and nothing launched.
TEST(CliReadRoofline, ThePlainReadRejectsWhatAMatmulWould) {
  alignas(16) static char bytes[64];
  hm::Status s = hm::read_problem_bytes({2, 2, 12, DType::bf16}, bytes, bytes, bytes, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("k must be a multiple of 8"), std::string::npos) << s.message();
  s = hm::read_problem_bytes({2, 2, 8, DType::bf16}, bytes + 2, bytes, bytes, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("aligned"), std::string::npos) << s.message();
}

TEST(CliReference, TheCpuReferenceNamesItsLimitBeforeTouchingTheGpu) {
  const hm::Problem p{8192, 8192, 8192, DType::bf16};
  const hm::Status s = hm::cpu_reference_on_device(p, nullptr, nullptr, nullptr, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at most 20000000000 multiply-adds"), std::string::npos)
      << s.message();
}

// The threads of cpu_reference each take interleaved rows; every element is the same sum as
// the plain loop's, to the bit.
TEST(CliReference, TheThreadedCpuReferenceIsThePlainSum) {
  const hm::Problem p{37, 5, 24, DType::fp16};
  std::vector<uint16_t> a(size_t(p.m * p.k)), b(size_t(p.n * p.k));
  uint32_t x = 7;
  for (auto* v : {&a, &b})
    for (uint16_t& e : *v) e = uint16_t(0x3000 + ((x = x * 1664525u + 1013904223u) >> 22));
  std::vector<double> ref;
  hm::cpu_reference(p, a, b, &ref);
  ASSERT_EQ(ref.size(), size_t(p.m * p.n));
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < p.k; ++k)
        sum += hm::to_double(a[size_t(i * p.k + k)], p.dtype) *
               hm::to_double(b[size_t(j * p.k + k)], p.dtype);
      EXPECT_EQ(ref[size_t(i * p.n + j)], sum) << i << ", " << j;
    }
}

}  // namespace
