/** @file
 *  The GPU tests' main: GoogleTest's, with two additions for CTest (tests/CMakeLists.txt).
 *
 *      hm_gpu_tests --check-gpu    says whether this machine has a GPU the tests can use,
 *                                  and if not, why; exits 0 if it has one, 1 if not
 *      hm_gpu_tests [gtest flags]  runs the tests; exits 77 (CTest's SKIP_RETURN_CODE)
 *                                  when every test it ran was skipped, so that a run
 *                                  without a GPU is reported as skipped, not as passed
 */
#include <gtest/gtest.h>

#include <cstdio>
#include <string_view>

#include "common/device.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--check-gpu") {
    hm::DeviceInfo info;
    const hm::Status gpu = hm::query_current_sm90(&info);
    if (!gpu.ok()) {
      std::printf("%s\n", gpu.message().c_str());
      return 1;
    }
    std::printf("%s, %d SMs (sm_%d%d)\n", info.name.c_str(), info.sm_count, info.cc_major,
                info.cc_minor);
    return 0;
  }
  testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  const testing::UnitTest& run = *testing::UnitTest::GetInstance();
  constexpr int kEverythingSkipped = 77;
  if (failed == 0 && run.test_to_run_count() > 0 &&
      run.skipped_test_count() == run.test_to_run_count())
    return kEverythingSkipped;
  return failed;
}
