/** @file
 *  GPU tests beyond the fixed shapes of gpu_tests.cpp (issue #15): a seeded fuzz over
 *  shapes drawn log-uniformly with the tile edges pinned in turn (its host side, in
 *  tests/fuzz.h, is tested without a GPU in tests/fuzz_tests.cpp), host threads launching
 *  different versions on their own streams at once, launches captured into CUDA graphs
 *  and replayed, and the command-line tool's measurements.  Without an sm_90 GPU every
 *  test here reports SKIPPED with the reason.
 *
 *      HM_FUZZ_SEED   the seed of the fuzz's shapes and inputs (default kDefaultSeed)
 *      HM_FUZZ_CASES  cases per version and dtype (default kDefaultCases)
 *      HM_FUZZ_CASE   run this one case alone (what a failure's repro command sets)
 */
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/bandwidth.h"
#include "common/buffers.h"
#include "common/busy.h"
#include "common/device.h"
#include "common/reference.h"
#include "common/registry.h"
#include "common/sms.h"
#include "tests/cli.h"
#include "tests/fuzz.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"
#include "v8_stream_k/matmul.h"

namespace {

using hm::DType;
using namespace fuzz;  // the fuzz's shapes, settings and repro commands

/// The full name of the running test, as --gtest_filter takes it.
std::string current_test_name() {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

// =======================================================================================
// The command-line tool's measurements (GPU)
// =======================================================================================

// On the GPU: a launch call into a full queue waits for a slot, about one kernel's time,
// and the settling launches fill the stream's queue; so the sweep times the host's calls
// before them, with a few launches queued, and at 4096³ (~0.2 ms a launch) they come out a
// small part of the kernel's time, for cuBLAS and for v8 alike.
TEST(CliTiming, TheHostsLaunchCallIsTimedWithAShortQueue) {
  SKIP_WITHOUT_SM90();
  const std::string json = ::testing::TempDir() + "host_calls.json";
  const auto [code, out] = run_cli("sweep --shapes 4096x4096x4096 --versions v8_stream_k "
                                   "--rounds 1 --reps 5 --settle-ms 100 --json " + json);
  ASSERT_EQ(code, 0) << out;
  const std::string text = file_text(json);
  int rows = 0;
  for (size_t at = text.find("{\"name\": \""); at != std::string::npos;
       at = text.find("{\"name\": \"", at + 1)) {
    const std::string row = object_at(text, at);
    const size_t ms = row.find("\"median_ms\": "), host = row.find("\"host_us\": ");
    if (ms == std::string::npos) continue;  // the GPU's name in the environment
    ASSERT_NE(host, std::string::npos) << row;
    const double kernel_us = std::stod(row.substr(ms + 13)) * 1e3;
    const double host_us = std::stod(row.substr(host + 11));
    EXPECT_LT(host_us, 0.25 * kernel_us) << row;
    ++rows;
  }
  EXPECT_EQ(rows, 2) << text;
}

// On the GPU: a sweep with the plain read writes it beside the matmuls, as a roofline with
// its HBM TB/s and neither TFLOPS nor a ratio to cuBLAS; C's bytes, 3 × 5 elements, end in a
// tail of 14 bytes that the read takes two at a time.
TEST(CliReadRoofline, TheSweepRecordsThePlainReadAsARoofline) {
  SKIP_WITHOUT_SM90();
  const std::string json = ::testing::TempDir() + "read_roofline.json";
  const auto [code, out] = run_cli("sweep --shapes 3x5x8,1x5120x5120 --versions v8_stream_k "
                                   "--read-roofline on --warmup 1 --rounds 1 --reps 2 "
                                   "--settle-ms 0 --json " + json);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find(" read "), std::string::npos) << out;
  const std::string text = file_text(json);
  for (size_t at = 0, runs = 0; runs < 2; ++runs) {
    at = text.find("{\"name\": \"read\"", at);
    ASSERT_NE(at, std::string::npos) << "run " << runs << ":\n" << text;
    const std::string row = object_at(text, at);
    EXPECT_NE(row.find("\"roofline\": true"), std::string::npos) << row;
    EXPECT_NE(row.find("\"hbm_tbps\": "), std::string::npos) << row;
    EXPECT_EQ(row.find("tflops"), std::string::npos) << row;
    EXPECT_EQ(row.find("ratio_to_cublas"), std::string::npos) << row;
    at += row.size();
  }
}

// On the GPU: a version checked against the CPU product, and no cuBLAS row.
TEST(CliReference, RunChecksAgainstTheCpuProductWithoutCublas) {
  SKIP_WITHOUT_SM90();
  const auto [code, out] = run_cli("run --version v4_persistent,v9_pingpong --m 200 --n 264 "
                                   "--k 136 --reference cpu --warmup 0 --rounds 1 --reps 1 "
                                   "--settle-ms 0");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Reference: the float64 CPU product"), std::string::npos) << out;
  EXPECT_EQ(out.find("\ncublas "), std::string::npos) << out;
  EXPECT_NE(out.find("\nv9_pingpong "), std::string::npos) << out;
}

// =======================================================================================
// The fuzz (GPU)
// =======================================================================================

/// Prints which case is running when one has run for kHangSeconds: a kernel that never
/// finishes hangs the test, and this names the case and the command that reproduces it.
class HangReporter {
 public:
  static constexpr int kHangSeconds = 60;

  explicit HangReporter(std::function<std::string(int64_t)> what)
      : what_(std::move(what)), thread_([this] { watch(); }) {}
  HangReporter(const HangReporter&) = delete;
  HangReporter& operator=(const HangReporter&) = delete;
  ~HangReporter() {
    {
      const std::lock_guard<std::mutex> hold(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  /// Case `index` starts now.
  void running(int64_t index) {
    const std::lock_guard<std::mutex> hold(mutex_);
    index_ = index;
    since_ = std::chrono::steady_clock::now();
    reported_ = false;
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> hold(mutex_);
    while (!wake_.wait_for(hold, std::chrono::seconds(1), [this] { return done_; })) {
      if (index_ < 0 || reported_ ||
          std::chrono::steady_clock::now() - since_ < std::chrono::seconds(kHangSeconds))
        continue;
      std::fprintf(stderr, "fuzz: case %lld has run for %d s (a hang?): %s\n",
                   (long long)index_, kHangSeconds, what_(index_).c_str());
      reported_ = true;
    }
  }

  std::function<std::string(int64_t)> what_;
  std::mutex mutex_;
  std::condition_variable wake_;
  int64_t index_ = -1;
  std::chrono::steady_clock::time_point since_;
  bool reported_ = false;
  bool done_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

/// One fuzz case: fresh inputs, a poisoned C, `version` and cuBLAS, compared on the GPU, all
/// on the legacy default stream (ordered).  Everything is freed on return.  An error is the
/// launcher's or CUDA's (after which the context may be unusable).
/// Above this many multiply-adds a disagreement with cuBLAS is not checked on the CPU (~2 s).
constexpr double kTieBreakLimit = 2e9;

/// Runs one case and compares it with cuBLAS into `out`.  Where the two disagree (and the
/// problem is small enough) the float64 CPU product decides: `note` says what it found, and
/// `out` becomes the version's comparison with it when cuBLAS is the one that is off.
hm::Status run_fuzz_case(const hm::Version& version, const hm::Problem& p, uint64_t seed,
                         hm::Cublas* cublas, hm::Comparison* out, std::string* note) {
  Operands in;
  HM_TRY(in.init(p, seed, nullptr));
  hm::DeviceBuffer c, ref;
  HM_TRY(c.allocate(size_t(p.m * p.n * 2)));
  HM_TRY(ref.allocate(size_t(p.m * p.n * 2)));
  HM_TRY(hm::poison(c.get(), p.m * p.n, p.dtype, nullptr));
  HM_TRY(version.launch(p, in.a.get(), in.b.get(), c.get(), nullptr));
  HM_TRY(cublas->matmul(p, in.a.get(), in.b.get(), ref.get(), nullptr));
  HM_TRY(hm::compare_on_device(p, c.get(), ref.get(), out, nullptr));
  if (out->pass() || double(p.m) * double(p.n) * double(p.k) > kTieBreakLimit) return hm::Status();
  // The version and cuBLAS disagree: the float64 product of the same inputs says which of
  // the two is wrong.  A version that matches it passes, and the note names cuBLAS.
  std::vector<double> exact;
  hm::cpu_reference(p, to_host(in.a.get(), p.m * p.k), to_host(in.b.get(), p.n * p.k), &exact);
  const hm::Comparison version_exact = hm::compare_with_exact(p, to_host(c.get(), p.m * p.n),
                                                              exact);
  const hm::Comparison cublas_exact = hm::compare_with_exact(p, to_host(ref.get(), p.m * p.n),
                                                             exact);
  *note = "against the float64 CPU product: " + std::string(version.name) + " " +
          version_exact.summary() + "; cuBLAS " + cublas_exact.summary();
  if (version_exact.pass() && !cublas_exact.pass()) *out = version_exact;
  return hm::Status();
}

using FuzzParam = std::tuple<hm::Version, DType>;

class Fuzz : public testing::TestWithParam<FuzzParam> {};

/// A fuzz run stops after this many failing cases (a broken version fails most of them).
constexpr int kMaxReportedFailures = 5;

TEST_P(Fuzz, MatchesCublasWithEveryElementWrittenAndNoNanOnSeededShapes) {
  SKIP_WITHOUT_SM90();
  const hm::Version& version = std::get<0>(GetParam());
  const DType dtype = std::get<1>(GetParam());
  FuzzSettings s;
  ASSERT_OK(read_fuzz_settings(&s));
  const int64_t first = s.only >= 0 ? s.only : 0, end = s.only >= 0 ? s.only + 1 : s.cases;
  const std::string test = current_test_name(), binary = this_binary();
  std::printf("fuzz: seed %llu (HM_FUZZ_SEED), %s (HM_FUZZ_CASES, HM_FUZZ_CASE)\n",
              (unsigned long long)s.seed,
              s.only >= 0 ? ("case " + std::to_string(s.only) + " alone").c_str()
                          : (std::to_string(s.cases) + " cases").c_str());

  const auto repro = [&](int64_t index) {
    const hm::Problem p = fuzz_case(s.seed, index, dtype);
    return "seed " + std::to_string(s.seed) + ", case " + std::to_string(index) + ", " +
           std::string(version.name) + " " + describe(p) +
           "\n  this case again (its inputs too):\n    " +
           gtest_command(binary, s.seed, index, test) +
           "\n  its shape in the command-line tool (on the tool's own inputs):\n    " +
           cli_command(HM_CLI_PATH, version.name, p);
  };
  HangReporter hang(repro);
  hm::Cublas cublas;
  int failures = 0;
  int64_t ran = 0;
  double flops = 0, bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = first; i < end; ++i) {
    hang.running(i);
    const hm::Problem p = fuzz_case(s.seed, i, dtype);
    hm::Comparison cmp;
    std::string note;
    const hm::Status status = run_fuzz_case(version, p, input_seed(s.seed, i, dtype), &cublas,
                                            &cmp, &note);
    if (!note.empty()) std::printf("fuzz: case %lld, %s: %s\n", (long long)i,
                                   describe(p).c_str(), note.c_str());
    if (!status.ok()) {  // a CUDA error may leave the context unusable: stop here
      ADD_FAILURE() << status.message() << "\n  at " << repro(i);
      break;
    }
    ++ran;
    flops += p.flops();
    bytes += case_bytes(p);
    if (cmp.pass() && cmp.nan == 0 && cmp.unwritten == 0) continue;
    ADD_FAILURE() << "against cuBLAS: " << cmp.summary() << " (" << cmp.nan << " NaN, "
                  << cmp.unwritten << " unwritten of " << p.m * p.n << ")"
                  << (note.empty() ? "" : "\n  " + note) << "\n  at " << repro(i);
    if (++failures == kMaxReportedFailures) {
      ADD_FAILURE() << "stopping after " << failures << " failing cases";
      break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz: %lld cases, %.2f TFLOP, %.1f GB allocated, %.1f s\n",
              (long long)ran, flops * 1e-12, bytes * 1e-9, seconds);
}

INSTANTIATE_TEST_SUITE_P(
    AllVersions, Fuzz,
    testing::Combine(testing::ValuesIn(hm::versions()), testing::Values(DType::bf16, DType::fp16)),
    [](const testing::TestParamInfo<FuzzParam>& info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             hm::dtype_name(std::get<1>(info.param));
    });

// =======================================================================================
// Concurrency (GPU)
// =======================================================================================
//
// Four host threads, each with its own stream, launch different versions on different
// shapes at once, many times each, and check every result against a cuBLAS reference
// computed once per shape beforehand.  The launchers of v0–v6 keep no state beyond the
// shared-memory attribute (set once per kernel and device, behind a mutex); v7 and v8 ask
// the occupancy calculator once per thread how many clusters fit (thread_local); v8 keeps
// a stream-K workspace per device and stream (and host thread, for cudaStreamPerThread)
// behind a mutex (hm::stream_memory()), allocated on a stream's first stream-K launch.  So
// the threads' first launches allocate their workspaces at the same time, and two v8
// launches on two streams run side by side with two workspaces.

/// A job of the concurrency test: one launch of one version on one problem.
struct Job {
  std::string name;  ///< "v8_stream_k 64x5120x5120 bf16"
  hm::Problem p;
  std::function<hm::Status(const void* a, const void* b, void* c, cudaStream_t)> launch;
  Operands in;
  hm::DeviceBuffer ref;  ///< cuBLAS's C
};

/// What one thread of the concurrency test saw.
struct ThreadReport {
  int64_t checked = 0;                ///< results compared with their reference
  std::vector<std::string> failures;  ///< the first few, for the test's messages
};

constexpr int kThreads = 4;
constexpr int kLaps = 8;         ///< each thread runs every job this many times
constexpr int kRunsPerJob = 2;   ///< back to back on the thread's stream, then checked

/// Thread `t`'s share: kLaps laps over the jobs, starting at its own offset, so that the
/// threads run different jobs at any moment; two launches per job into two outputs, back to
/// back (v8's second launch reuses the stream's workspace right after the first), then both
/// checked.  Starts when every thread has its stream.
void run_jobs(int t, int device, const std::vector<Job>& jobs, size_t c_bytes,
              bool per_thread_stream, std::latch* ready, ThreadReport* report) {
  const auto fail = [report](const std::string& what) {
    if (report->failures.size() < 10) report->failures.push_back(what);
  };
  cudaStream_t stream = nullptr;
  const struct StreamOwner {
    cudaStream_t* s;
    ~StreamOwner() {
      if (*s && *s != cudaStreamPerThread) cudaStreamDestroy(*s);
    }
  } owner{&stream};
  std::array<hm::DeviceBuffer, kRunsPerJob> c;
  hm::Status setup = hm::cuda_status(cudaSetDevice(device), "cudaSetDevice", __FILE__, __LINE__);
  if (setup.ok() && per_thread_stream) stream = cudaStreamPerThread;  // not destroyed
  else if (setup.ok())
    setup = hm::cuda_status(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                            "cudaStreamCreateWithFlags", __FILE__, __LINE__);
  for (hm::DeviceBuffer& buf : c)
    if (setup.ok()) setup = buf.allocate(c_bytes);
  ready->arrive_and_wait();
  if (!setup.ok()) return fail("thread " + std::to_string(t) + ": " + setup.message());

  const size_t offset = size_t(t) * jobs.size() / kThreads;
  for (size_t it = 0; it < kLaps * jobs.size(); ++it) {
    const Job& job = jobs[(offset + it) % jobs.size()];
    const std::string where = "thread " + std::to_string(t) + ", iteration " +
                              std::to_string(it) + ", " + job.name + ": ";
    hm::Status s;
    for (int run = 0; run < kRunsPerJob && s.ok(); ++run) {
      s = hm::poison(c[run].get(), job.p.m * job.p.n, job.p.dtype, stream);
      if (s.ok()) s = job.launch(job.in.a.get(), job.in.b.get(), c[run].get(), stream);
    }
    for (int run = 0; run < kRunsPerJob && s.ok(); ++run) {
      hm::Comparison cmp;
      s = hm::compare_on_device(job.p, c[run].get(), job.ref.get(), &cmp, stream);
      if (!s.ok()) break;
      ++report->checked;
      if (!cmp.pass()) fail(where + "run " + std::to_string(run) + ": " + cmp.summary());
    }
    if (!s.ok()) {  // a CUDA error: this thread stops, the others finish
      fail(where + s.message());
      break;
    }
  }
}

/// Runs `jobs` on kThreads host threads at once, each on its own stream (or on
/// cudaStreamPerThread, which names a different stream in each thread), and checks every
/// result against cuBLAS's, computed once per job before the threads start.
void run_concurrently(std::vector<Job>& jobs, bool per_thread_stream) {
  // Inputs and references once, on the legacy default stream, before any thread starts.
  hm::Cublas cublas;
  size_t c_bytes = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    Job& job = jobs[j];
    ASSERT_OK(job.in.init(job.p, 1000 + j, nullptr));
    ASSERT_OK(job.ref.allocate(size_t(job.p.m * job.p.n * 2)));
    ASSERT_OK(cublas.matmul(job.p, job.in.a.get(), job.in.b.get(), job.ref.get(), nullptr));
    c_bytes = std::max(c_bytes, size_t(job.p.m * job.p.n * 2));
  }
  ASSERT_CUDA(cudaDeviceSynchronize());

  int device = 0;
  ASSERT_CUDA(cudaGetDevice(&device));
  std::latch ready(kThreads);
  std::array<ThreadReport, kThreads> reports;
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(run_jobs, t, device, std::cref(jobs), c_bytes, per_thread_stream,
                         &ready, &reports[t]);
  for (std::thread& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int64_t checked = 0;
  for (const ThreadReport& r : reports) {
    checked += r.checked;
    for (const std::string& failure : r.failures) ADD_FAILURE() << failure;
  }
  EXPECT_EQ(checked, int64_t(kThreads) * kLaps * int64_t(jobs.size()) * kRunsPerJob)
      << "results checked";
  std::printf("concurrency (%s): %d threads, %zu jobs, %lld results checked in %.2f s\n",
              per_thread_stream ? "cudaStreamPerThread" : "a stream each", kThreads,
              jobs.size(), (long long)checked, seconds);
}

/// The job of launching version `v` on `q` through the registry.
Job version_job(const hm::Version& v, const hm::Problem& q) {
  return {std::string(v.name) + " " + describe(q), q,
          [q, launch = v.launch](const void* a, const void* b, void* c, cudaStream_t s) {
            return launch(q, a, b, c, s);
          },
          {}, {}};
}

/// v8 on 896×4864×1024 fp16 (133 tiles of C, 16 K slices) with a schedule forced on it
/// (make_schedule() keeps those tiles whole): one stream-K unit per SM over all 133 tiles,
/// so that units hand partial tiles to each other's owners.
Job forced_stream_k_job(int sm_count) {
  const hm::Problem split{896, 4864, 1024, DType::fp16};
  const int units = std::min(sm_count, 133);
  const v8_stream_k::Schedule every_tile{133, 16, units, 133, units, 8};
  return {"v8_stream_k " + describe(split) + ", " + std::to_string(units) +
              " units over all 133 tiles",
          split,
          [split, every_tile](const void* a, const void* b, void* c, cudaStream_t s) {
            return v8_stream_k::matmul(split, a, b, c, every_tile, s);
          },
          {}, {}};
}

TEST(Concurrency, FourThreadsOnTheirOwnStreamsGetEveryResultRightFromEveryVersion) {
  SKIP_WITHOUT_SM90();
  hm::DeviceInfo info;
  ASSERT_OK(hm::query_current_sm90(&info));
  const hm::Version* v8 = hm::find_version("v8_stream_k");
  ASSERT_NE(v8, nullptr) << "the test launches v8_stream_k's stream-K schedules";

  std::vector<Job> jobs;
  // Every version on two shapes: 384 tiles of 128 × 256 (about three per CTA of the
  // persistent versions) with n % 8 == 0 (TMA stores), and a ragged one with n % 8 != 0
  // (register stores; v7's and v8's clusters of two).
  int i = 0;
  for (const hm::Version& v : hm::versions()) {
    for (const hm::Problem& p : {hm::Problem{3072, 4096, 1032, DType::bf16},
                                 hm::Problem{1000, 1001, 520, DType::fp16}}) {
      hm::Problem q = p;
      if (i++ % 4 >= 2) q.dtype = q.dtype == DType::bf16 ? DType::fp16 : DType::bf16;
      jobs.push_back(version_job(v, q));
    }
  }
  // v8's stream-K, spread among them: decode shapes, which make_schedule() splits (Cᵀ in
  // 32 tiles of 64 × 64, each in four; in 40 tiles of 128 × 64, of 216 or 141 slices, each
  // in three), one it keeps whole (80 tiles of 64 × 64), and 133 tiles of C of 16 slices
  // shared by one unit per SM, a schedule forced on v8 (make_schedule() keeps those tiles
  // whole), so that units hand partial tiles to each other's owners.
  std::vector<Job> stream_k;
  for (const hm::Problem& q : {hm::Problem{64, 2048, 5120, DType::bf16},
                               hm::Problem{1, 5120, 13824, DType::fp16},
                               hm::Problem{17, 5001, 9000, DType::bf16},
                               hm::Problem{64, 5120, 5120, DType::fp16}})
    stream_k.push_back(version_job(*v8, q));
  stream_k.push_back(forced_stream_k_job(info.sm_count));
  for (size_t j = 0; j < stream_k.size(); ++j)
    jobs.insert(jobs.begin() + std::ptrdiff_t(std::min(jobs.size(), j * 6)),
                std::move(stream_k[j]));

  run_concurrently(jobs, false);
}

// The same handle, cudaStreamPerThread, in four threads is four streams, which run at once:
// the stream-K workspace (and the tile counter) must be one per thread there, or two
// threads' partial tiles and flags meet in one workspace.  v8 and v9 on the decode shapes
// they split among 128 and 120 units, and v8 with a forced schedule over 133 tiles of C.
// v8 and v9 take the same workspace of a thread's stream (the same size), one launch after
// another.
TEST(Concurrency, FourThreadsOnCudaStreamPerThreadGetEveryStreamKResultRight) {
  SKIP_WITHOUT_SM90();
  hm::DeviceInfo info;
  ASSERT_OK(hm::query_current_sm90(&info));
  std::vector<Job> jobs;
  for (const char* name : {"v8_stream_k", "v9_pingpong"}) {
    const hm::Version* v = hm::find_version(name);
    ASSERT_NE(v, nullptr) << name;
    for (const hm::Problem& q : {hm::Problem{64, 2048, 5120, DType::bf16},
                                 hm::Problem{1, 5120, 13824, DType::fp16},
                                 hm::Problem{17, 5001, 9000, DType::bf16}})
      jobs.push_back(version_job(*v, q));
  }
  jobs.push_back(forced_stream_k_job(info.sm_count));
  run_concurrently(jobs, true);
}

// =======================================================================================
// CUDA graph capture (GPU)
// =======================================================================================
//
// What each launcher does inside a capture, once it has run on the stream (and, for v7 and
// v8, on the thread) before:
//
//   v0–v3   validate (cudaGetDevice, cudaDeviceGetAttribute: no stream work), build the TMA
//           descriptors on the host, find the shared-memory attribute already set
//           (set_max_dynamic_smem() calls cudaFuncSetAttribute once per kernel and device,
//           so never inside a capture that follows a launch), launch with <<<>>>: one
//           kernel node.
//   v4–v6   the same, plus the SM count (cudaDeviceGetAttribute): one kernel node.
//   v7      the same with cudaLaunchKernelEx and, where n % 8 != 0, a cluster-dimension
//           attribute, which a kernel node keeps; its cluster count comes from a
//           thread_local answer of cudaOccupancyMaxActiveClusters: one kernel node.
//   v8      v7's launch; a stream-K schedule takes the stream's workspace from
//           hm::stream_memory(), which already holds it (keyed by device and stream, and by
//           thread only for cudaStreamPerThread): one kernel node, whose flags are zero
//           again after every replay, so it replays any number of times.  The graph keeps
//           the workspace of the stream it was captured on: replays must be ordered with
//           that stream's other v8 launches.
//
// Capturing the first stream-K launch on a stream is refused with a Status:
// hm::stream_memory() would capture cudaMallocAsync and cudaMemsetAsync as memory nodes and
// keep the graph's address for the stream's direct launches, memory that exists only while
// the graph runs.  The caller's-workspace overload has none of this (GraphCaptureV8 below).

// From a thread that has not launched yet (AFreshThread…), v7 and v8 call
// cudaOccupancyMaxActiveClusters inside the capture (with clusters of two: n % 8 != 0).  It
// enqueues nothing and is expected to work; were it refused, the launcher returns that as a
// Status naming the call and CUDA's error, which the test accepts from v7 and v8 alone (and
// prints), and then captures again after a direct launch on that thread, which must work.

/// An instantiated graph, destroyed with the object.
class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  hm::Status instantiate(cudaGraph_t graph) {
    if (exec_) cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
    return hm::cuda_status(cudaGraphInstantiate(&exec_, graph, 0), "cudaGraphInstantiate",
                           __FILE__, __LINE__);
  }
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

/// What capturing one launch gave.
struct Capture {
  hm::Status launched;      ///< the launcher's status inside the capture
  size_t nodes = 0;         ///< nodes of the captured graph
  size_t kernel_nodes = 0;  ///< of which kernel launches
  GraphExec exec;           ///< the instantiated graph; empty when the launcher failed
};

using LaunchFn = std::function<hm::Status(cudaStream_t)>;

/// Captures `launch` on `stream` in `mode` and instantiates the graph.  A launcher error
/// ends the capture, discards it and is left in `out->launched`; errors of the capture
/// itself are returned.
hm::Status capture(cudaStream_t stream, cudaStreamCaptureMode mode, const LaunchFn& launch,
                   Capture* out) {
  HM_CUDA_TRY(cudaStreamBeginCapture(stream, mode));
  out->launched = launch(stream);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!out->launched.ok()) {  // the capture is void (invalidated, or ended without use)
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return hm::Status();
  }
  HM_TRY(hm::cuda_status(ended, "cudaStreamEndCapture", __FILE__, __LINE__));
  const struct Owner {
    cudaGraph_t g;
    ~Owner() { cudaGraphDestroy(g); }
  } owner{graph};
  HM_CUDA_TRY(cudaGraphGetNodes(graph, nullptr, &out->nodes));
  std::vector<cudaGraphNode_t> nodes(out->nodes);
  HM_CUDA_TRY(cudaGraphGetNodes(graph, nodes.data(), &out->nodes));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    HM_CUDA_TRY(cudaGraphNodeGetType(node, &type));
    out->kernel_nodes += type == cudaGraphNodeTypeKernel;
  }
  return out->exec.instantiate(graph);
}

/// A problem, its inputs, cuBLAS's C and a direct launch's C, on a stream of its own.
class GraphCheck {
 public:
  ~GraphCheck() {
    if (stream_) cudaStreamDestroy(stream_);
  }

  /// Creates the stream and inputs, launches `launch` directly into C (the result every
  /// replay must equal bit for bit) and checks that C against cuBLAS.
  void init(const hm::Problem& p, uint64_t seed, const LaunchFn& launch) {
    p_ = p;
    ASSERT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ASSERT_OK(in_.init(p, seed, stream_));
    for (hm::DeviceBuffer* buf : {&direct_, &replayed_, &ref_}) {
      ASSERT_OK(buf->allocate(size_t(p.m * p.n * 2)));
      ASSERT_OK(hm::poison(buf->get(), p.m * p.n, p.dtype, stream_));
    }
    ASSERT_OK(launch(stream_));
    hm::Cublas cublas;
    ASSERT_OK(cublas.matmul(p, in_.a.get(), in_.b.get(), ref_.get(), stream_));
    hm::Comparison cmp;
    ASSERT_OK(hm::compare_on_device(p, direct_.get(), ref_.get(), &cmp, stream_));
    ASSERT_TRUE(cmp.pass()) << "the direct launch, against cuBLAS: " << cmp.summary();
  }

  /// The inputs, the direct launch's C, the replays' C and the stream.
  const void* a() const { return in_.a.get(); }
  const void* b() const { return in_.b.get(); }
  void* direct() const { return direct_.get(); }
  void* replayed() const { return replayed_.get(); }
  cudaStream_t stream() const { return stream_; }

  /// Checks a successful capture: one kernel node, nothing run by the capture itself, and
  /// two replays on the stream, each into a freshly poisoned C, bitwise the direct launch.
  void check_replays(const Capture& cap, cudaStream_t stream) {
    cudaStreamCaptureStatus capturing{};
    ASSERT_CUDA(cudaStreamIsCapturing(stream, &capturing));
    ASSERT_EQ(capturing, cudaStreamCaptureStatusNone) << "the stream is left capturing";
    EXPECT_EQ(cap.nodes, 1u) << "one launch should be one graph node";
    ASSERT_EQ(cap.kernel_nodes, 1u) << "one launch should be one kernel node";
    const int64_t count = p_.m * p_.n;
    hm::Comparison before;
    ASSERT_OK(hm::compare_on_device(p_, replayed_.get(), ref_.get(), &before, stream));
    EXPECT_EQ(before.unwritten, count) << "the capture itself ran the kernel";
    for (int replay = 0; replay < 2; ++replay) {
      ASSERT_OK(hm::poison(replayed_.get(), count, p_.dtype, stream));
      ASSERT_CUDA(cudaGraphLaunch(cap.exec.get(), stream));
      int64_t differing = -1;
      ASSERT_OK(hm::count_bit_differences(direct_.get(), replayed_.get(), count, &differing,
                                          stream));
      EXPECT_EQ(differing, 0) << "replay " << replay << " differs from the direct launch in "
                              << differing << " of " << count << " elements";
    }
    ASSERT_OK(hm::poison(replayed_.get(), count, p_.dtype, stream));  // for the next capture
    ASSERT_CUDA(cudaStreamSynchronize(stream));
  }

 private:
  hm::Problem p_;
  cudaStream_t stream_ = nullptr;
  Operands in_;
  hm::DeviceBuffer direct_, replayed_, ref_;
};

/// The graph tests' shapes: v8's decode split-K (128 units on 32 tiles of Cᵀ, the stream's
/// workspace), 133 tiles (one past a wave of 132 CTAs), and a ragged one with n % 8 != 0
/// (register stores; v7's and v8's clusters of two).
const hm::Problem kGraphShapes[] = {
    {64, 2048, 5120, DType::bf16},
    {896, 4864, 1024, DType::fp16},
    {333, 517, 264, DType::bf16},
};

class GraphCapture : public testing::TestWithParam<hm::Version> {};

TEST_P(GraphCapture, ReplaysAreBitwiseTheDirectLaunchInGlobalAndThreadLocalModes) {
  SKIP_WITHOUT_SM90();
  const hm::Launcher launcher = GetParam().launch;
  uint64_t seed = 40;
  for (const hm::Problem& p : kGraphShapes) {
    SCOPED_TRACE(describe(p));
    GraphCheck check;
    const auto into = [&](void* c) {
      return [&check, &p, launcher, c](cudaStream_t s) {
        return launcher(p, check.a(), check.b(), c, s);
      };
    };
    check.init(p, seed++, [&](cudaStream_t s) { return into(check.direct())(s); });
    if (HasFatalFailure()) return;
    for (const cudaStreamCaptureMode mode :
         {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal}) {
      SCOPED_TRACE(mode == cudaStreamCaptureModeGlobal ? "global capture" : "thread-local");
      Capture cap;
      ASSERT_OK(capture(check.stream(), mode, into(check.replayed()), &cap));
      ASSERT_TRUE(cap.launched.ok()) << "inside the capture: " << cap.launched.message();
      check.check_replays(cap, check.stream());
      if (HasFatalFailure()) return;
    }
  }
}

/// Captures `into_replayed` from a new host thread on `check`'s stream and checks the
/// replays.  Returns the launcher's error if it refused the capture, after checking that the
/// thread then captures the launch after a direct one (`into_direct`).
hm::Status capture_on_a_fresh_thread(GraphCheck& check, const LaunchFn& into_replayed,
                                     const LaunchFn& into_direct) {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    ADD_FAILURE() << hm::cuda_status(e, "cudaGetDevice", __FILE__, __LINE__).message();
  hm::Status refused;
  std::thread([&] {
    ASSERT_CUDA(cudaSetDevice(device));
    Capture cap;
    ASSERT_OK(capture(check.stream(), cudaStreamCaptureModeGlobal, into_replayed, &cap));
    if (cap.launched.ok()) return check.check_replays(cap, check.stream());
    refused = cap.launched;
    ASSERT_OK(into_direct(check.stream()));
    ASSERT_CUDA(cudaStreamSynchronize(check.stream()));
    Capture again;
    ASSERT_OK(capture(check.stream(), cudaStreamCaptureModeGlobal, into_replayed, &again));
    ASSERT_TRUE(again.launched.ok())
        << "inside a capture after a direct launch: " << again.launched.message();
    check.check_replays(again, check.stream());
  }).join();
  return refused;
}

TEST_P(GraphCapture, AFreshThreadCapturesItsFirstLaunchOrGetsAClearErrorFromV7AndV8) {
  SKIP_WITHOUT_SM90();
  const hm::Version& version = GetParam();
  const hm::Problem p{333, 517, 264, DType::fp16};  // n % 8 != 0: v7's and v8's clusters
  GraphCheck check;
  const auto into = [&](void* c) -> LaunchFn {
    return [&check, &p, &version, c](cudaStream_t s) {
      return version.launch(p, check.a(), check.b(), c, s);
    };
  };
  check.init(p, 50, [&](cudaStream_t s) { return into(check.direct())(s); });
  if (HasFatalFailure()) return;
  const hm::Status refused =
      capture_on_a_fresh_thread(check, into(check.replayed()), into(check.direct()));
  if (refused.ok()) return;
  std::printf("%s refused a capture on a fresh thread: %s\n", std::string(version.name).c_str(),
              refused.message().c_str());
  EXPECT_GT(version.config->cluster_ctas, 1)
      << "only v7's and v8's launchers query the GPU on a thread's first launch; this one "
         "refused the capture: "
      << refused.message();
  EXPECT_NE(refused.message().find("cudaOccupancyMaxActiveClusters"), std::string::npos)
      << "the error should name the call that was refused: " << refused.message();
  EXPECT_NE(refused.message().find("failed: cudaError"), std::string::npos)
      << "the error should name CUDA's error: " << refused.message();
}

INSTANTIATE_TEST_SUITE_P(AllVersions, GraphCapture, testing::ValuesIn(hm::versions()),
                         [](const auto& info) { return std::string(info.param.name); });

/// Captures `launch` (into C) after a direct one, in global mode, and checks two replays.
void check_capture(const hm::Problem& p, uint64_t seed,
                   const std::function<hm::Status(const void*, const void*, void*,
                                                  cudaStream_t)>& launch) {
  GraphCheck check;
  const auto into = [&](void* c) -> LaunchFn {
    return [&check, &launch, c](cudaStream_t s) { return launch(check.a(), check.b(), c, s); };
  };
  check.init(p, seed, [&](cudaStream_t s) { return into(check.direct())(s); });
  if (testing::Test::HasFatalFailure()) return;
  Capture cap;
  ASSERT_OK(capture(check.stream(), cudaStreamCaptureModeGlobal, into(check.replayed()), &cap));
  ASSERT_TRUE(cap.launched.ok()) << "inside the capture: " << cap.launched.message();
  check.check_replays(cap, check.stream());
}

// v8 with the caller's workspace on the decode split-K (nothing cached: the graph keeps the
// caller's workspace), and a stream-K schedule on 133 tiles of C, forced (make_schedule()
// keeps them whole), whose units hand partial tiles to their owners in every replay.
TEST(GraphCaptureV8, CallersWorkspaceAndAForcedStreamKScheduleReplayBitwise) {
  SKIP_WITHOUT_SM90();
  hm::DeviceInfo info;
  ASSERT_OK(hm::query_current_sm90(&info));
  const hm::Problem decode{64, 2048, 5120, DType::fp16};
  const size_t bytes = v8_stream_k::workspace_bytes(decode, info.sm_count);
  ASSERT_GT(bytes, 0u);
  hm::DeviceBuffer workspace;
  ASSERT_OK(workspace.allocate(bytes));
  ASSERT_CUDA(cudaMemset(workspace.get(), 0, bytes));
  {
    SCOPED_TRACE("the caller's workspace, " + describe(decode));
    check_capture(decode, 60, [&](const void* a, const void* b, void* c, cudaStream_t s) {
      return v8_stream_k::matmul(decode, a, b, c, workspace.get(), bytes, s);
    });
  }
  const hm::Problem split{896, 4864, 1024, DType::bf16};
  const int units = std::min(info.sm_count, 133);
  const v8_stream_k::Schedule every_tile{133, 16, units, 133, units, 8};
  SCOPED_TRACE("a forced stream-K schedule, " + describe(split));
  check_capture(split, 61, [&](const void* a, const void* b, void* c, cudaStream_t s) {
    return v8_stream_k::matmul(split, a, b, c, every_tile, s);
  });
}

// The first launch on a stream of a persistent kernel (v4: the stream's tile counter) or of
// a stream-K schedule (v8: the stream's workspace) allocates that memory (hm::stream_memory()),
// which a graph must not own: inside a capture, that launch is a clear error and nothing is
// captured, and the same launch on the same stream works directly after the capture.
TEST(GraphCaptureFirstLaunch, IsAClearErrorAndTheSameLaunchWorksAfterTheCapture) {
  SKIP_WITHOUT_SM90();
  const hm::Problem p{64, 2048, 5120, DType::bf16};  // v8: split-K, 32 tiles of Cᵀ in four
  Operands in;
  ASSERT_OK(in.init(p, 62, nullptr));
  hm::DeviceBuffer c, ref;
  ASSERT_OK(c.allocate(size_t(p.m * p.n * 2)));
  ASSERT_OK(ref.allocate(size_t(p.m * p.n * 2)));
  hm::Cublas cublas;
  ASSERT_OK(cublas.matmul(p, in.a.get(), in.b.get(), ref.get(), nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (const char* name : {"v4_persistent", "v8_stream_k"}) {
    SCOPED_TRACE(name);
    const hm::Version* v = hm::find_version(name);
    ASSERT_NE(v, nullptr);
    OwnedStream owned;
    ASSERT_OK(owned.create());
    const cudaStream_t stream = owned.stream;
    const LaunchFn launch = [&](cudaStream_t s) {
      return v->launch(p, in.a.get(), in.b.get(), c.get(), s);
    };
    Capture cap;
    ASSERT_OK(capture(stream, cudaStreamCaptureModeGlobal, launch, &cap));
    ASSERT_FALSE(cap.launched.ok()) << "a graph captured the stream's first allocation";
    EXPECT_NE(cap.launched.message().find("launch once on the stream before capturing"),
              std::string::npos)
        << cap.launched.message();
    ASSERT_OK(hm::poison(c.get(), p.m * p.n, p.dtype, stream));
    ASSERT_OK(launch(stream));
    hm::Comparison cmp;
    ASSERT_OK(hm::compare_on_device(p, c.get(), ref.get(), &cmp, stream));
    EXPECT_TRUE(cmp.pass()) << "after the capture: " << cmp.summary();
  }
}

// =======================================================================================
// Fewer SMs than the device has (issue 15): a stream in a green context of 64 or 120 SMs,
// as a process given part of the GPU gets.  Every version's result must be right there, and
// the stream must say how many SMs it has (the device attribute still says 132).  How fast
// each version is there is hopper-matmul --sms's question.
// =======================================================================================

/// The problems of the tests of a GPU shared with others (FewerSms, BesideAnotherKernel).
const hm::Problem kSharingShapes[] = {
    {3072, 4096, 1032, DType::bf16},  // several tiles per CTA
    {64, 2048, 5120, DType::bf16},    // v8: split-K units
    {1000, 1001, 520, DType::fp16}};  // v7, v8: pairs

class FewerSms : public testing::TestWithParam<hm::Version> {};

TEST_P(FewerSms, EveryResultIsRightInAGreenContextOf64And120Sms) {
  SKIP_WITHOUT_SM90();
  const hm::Version& version = GetParam();
  hm::Cublas cublas;
  for (const int sms : {64, 120}) {
    hm::GreenContextStream green;
    ASSERT_OK(green.create(sms));
    EXPECT_GE(green.sm_count(), sms);
    int seen = 0;
    ASSERT_OK(hm::stream_sm_count(green.stream(), &seen));
    EXPECT_EQ(seen, green.sm_count()) << "the SMs of the stream's green context";
    for (const hm::Problem& p : kSharingShapes) {
      Operands in;
      ASSERT_OK(in.init(p, 1500 + sms, nullptr));
      hm::DeviceBuffer c, ref;
      ASSERT_OK(c.allocate(size_t(p.m * p.n * 2)));
      ASSERT_OK(ref.allocate(size_t(p.m * p.n * 2)));
      ASSERT_OK(hm::poison(c.get(), p.m * p.n, p.dtype, nullptr));
      ASSERT_CUDA(cudaDeviceSynchronize());  // the green stream does not wait for stream 0
      ASSERT_OK(version.launch(p, in.a.get(), in.b.get(), c.get(), green.stream()));
      ASSERT_CUDA(cudaStreamSynchronize(green.stream()));
      ASSERT_OK(cublas.matmul(p, in.a.get(), in.b.get(), ref.get(), nullptr));
      hm::Comparison cmp;
      ASSERT_OK(hm::compare_on_device(p, c.get(), ref.get(), &cmp, nullptr));
      EXPECT_TRUE(cmp.pass()) << describe(p) << " on " << green.sm_count() << " SMs: "
                              << cmp.summary();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, FewerSms, testing::ValuesIn(hm::versions()),
                         [](const auto& info) { return std::string(info.param.name); });

class BesideAnotherKernel : public testing::TestWithParam<hm::Version> {};

// Another kernel holds 12 or 66 SMs (hm::BusySms) while the version runs: the persistent
// versions' CTAs that find no SM start only when the version's other CTAs have ended, and
// must then find no tile left, not a tile of their own.  The result must be the one of a
// launch on an idle GPU, bit for bit.  Nothing is allocated or freed while the other kernel
// runs (that would wait for it): the buffers, the stream's tile counter and v8's workspace
// come from the launch before.
TEST_P(BesideAnotherKernel, EveryResultIsBitwiseTheIdleGpusWhileAnotherKernelHoldsSms) {
  SKIP_WITHOUT_SM90();
  const hm::Version& version = GetParam();
  OwnedStream owned;
  ASSERT_OK(owned.create());
  const cudaStream_t stream = owned.stream;
  hm::BusySms busy;
  for (const int held : {12, 66}) {
    for (const hm::Problem& p : kSharingShapes) {
      SCOPED_TRACE(describe(p) + " beside a kernel holding " + std::to_string(held) + " SMs");
      Operands in;
      ASSERT_OK(in.init(p, 1700 + held, stream));
      hm::DeviceBuffer idle, loaded;
      ASSERT_OK(idle.allocate(size_t(p.m * p.n * 2)));
      ASSERT_OK(loaded.allocate(size_t(p.m * p.n * 2)));
      ASSERT_OK(hm::poison(loaded.get(), p.m * p.n, p.dtype, stream));
      ASSERT_OK(version.launch(p, in.a.get(), in.b.get(), idle.get(), stream));
      ASSERT_CUDA(cudaStreamSynchronize(stream));
      ASSERT_OK(busy.start(held));
      const hm::Status launched = version.launch(p, in.a.get(), in.b.get(), loaded.get(), stream);
      const cudaError_t done = cudaStreamSynchronize(stream);
      ASSERT_OK(busy.stop());
      ASSERT_OK(launched);
      ASSERT_CUDA(done);
      int64_t differing = -1;
      ASSERT_OK(hm::count_bit_differences(idle.get(), loaded.get(), p.m * p.n, &differing,
                                          stream));
      EXPECT_EQ(differing, 0) << "elements that differ from the launch on an idle GPU";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, BesideAnotherKernel, testing::ValuesIn(hm::versions()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
