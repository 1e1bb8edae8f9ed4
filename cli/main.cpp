/** @file
 *  `hopper-matmul`: runs every registered version and cuBLAS on one problem, checks each
 *  result against cuBLAS, and reports time, TFLOPS and the ratio to cuBLAS measured in the
 *  same process.
 *
 *      hopper-matmul info
 *      hopper-matmul list
 *      hopper-matmul ladder [--m M] [--n N] [--k K] [--dtype bf16|fp16] [--json FILE]
 *      hopper-matmul run --version NAME [same options]
 */
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/buffers.h"
#include "common/device.h"
#include "common/reference.h"
#include "common/registry.h"
#include "common/timing.h"

namespace {

constexpr const char* kUsage = R"(usage:
  hopper-matmul info                 print the GPU and environment
  hopper-matmul list                 print the registered versions
  hopper-matmul ladder [options]     every version and cuBLAS on one problem
  hopper-matmul run --version NAME [options]
                                     one version and cuBLAS on one problem
options:
  --m M --n N --k K    problem C[M,N] = A[M,K]·B[N,K]^T (default 8192 each)
  --dtype bf16|fp16    element type (default bf16)
  --warmup W           untimed launches per implementation before timing (default 10)
  --rounds R           timing rounds; each round times every implementation in turn (5)
  --reps N             timed launches per implementation per round (default 20)
  --json FILE          also write the results and the environment as JSON
)";

constexpr int kExitFailed = 1;  // a check failed, or the GPU is missing or unusable
constexpr int kExitUsage = 2;

struct Options {
  std::string command;
  std::string version;
  hm::Problem problem{8192, 8192, 8192, hm::DType::bf16};
  int warmup = 10;
  int rounds = 5;
  int reps = 20;
  std::string json;
};

/// Parses argv; std::nullopt (after printing why) on anything it does not understand.
std::optional<Options> parse(int argc, char** argv) {
  Options o;
  if (argc < 2) return std::nullopt;
  o.command = argv[1];
  const auto bad = [](const std::string& why) {
    std::fprintf(stderr, "hopper-matmul: %s\n", why.c_str());
    return std::nullopt;
  };
  for (int i = 2; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return bad("missing value after " + std::string(flag));
    const std::string value = argv[++i];
    const auto integer = [&](auto* out) {
      char* end = nullptr;
      const long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0') return false;
      *out = static_cast<std::remove_pointer_t<decltype(out)>>(v);
      return true;
    };
    bool ok = true;
    if (flag == "--m") ok = integer(&o.problem.m);
    else if (flag == "--n") ok = integer(&o.problem.n);
    else if (flag == "--k") ok = integer(&o.problem.k);
    else if (flag == "--warmup") ok = integer(&o.warmup) && o.warmup >= 0;
    else if (flag == "--rounds") ok = integer(&o.rounds) && o.rounds >= 1;
    else if (flag == "--reps") ok = integer(&o.reps) && o.reps >= 1;
    else if (flag == "--json") o.json = value;
    else if (flag == "--version") o.version = value;
    else if (flag == "--dtype") {
      const auto d = hm::parse_dtype(value);
      if (!d) return bad("--dtype must be bf16 or fp16, not '" + value + "'");
      o.problem.dtype = *d;
    } else {
      return bad("unknown option " + std::string(flag));
    }
    if (!ok) return bad("bad value '" + value + "' for " + std::string(flag));
  }
  if (o.command == "run" && o.version.empty()) return bad("run needs --version NAME");
  if (o.command == "run" && !hm::find_version(o.version))
    return bad("no version called '" + o.version + "' (see hopper-matmul list)");
  return o;
}

/// One implementation in the ladder: cuBLAS or a registered version.
struct Entry {
  std::string name;
  std::string technique;
  std::function<hm::Status(const hm::Problem&, const void*, const void*, void*, cudaStream_t)>
      launch;
  std::vector<double> samples_ms;
  hm::Comparison check;
  bool checked = false;
  std::string error;  // set when the implementation could not run at all

  bool pass() const { return error.empty() && (!checked || check.pass()); }
};

/// A, B and C for one rotation slot.
struct OperandSet {
  hm::DeviceBuffer a, b, c;
};

hm::Status run_ladder(const Options& o, std::vector<Entry>* entries, int* sets_used,
                      hm::DeviceInfo* info) {
  const hm::Problem& p = o.problem;
  HM_TRY(hm::validate_problem(p));
  HM_TRY(hm::require_sm90());
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  HM_TRY(hm::query_device(device, info));

  const size_t a_bytes = size_t(p.m * p.k * 2), b_bytes = size_t(p.n * p.k * 2),
               c_bytes = size_t(p.m * p.n * 2);
  const int sets = hm::rotation_sets(static_cast<long long>(a_bytes + b_bytes + c_bytes),
                                     info->l2_bytes);
  *sets_used = sets;
  cudaStream_t stream = nullptr;
  HM_CUDA_TRY(cudaStreamCreate(&stream));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};

  std::vector<OperandSet> operands(sets);
  const double range = hm::unit_variance_range(p.k);
  for (int s = 0; s < sets; ++s) {
    HM_TRY(operands[s].a.allocate(a_bytes));
    HM_TRY(operands[s].b.allocate(b_bytes));
    HM_TRY(operands[s].c.allocate(c_bytes));
    HM_TRY(hm::fill_uniform(operands[s].a.get(), p.m * p.k, p.dtype, range, 2 * s + 1, stream));
    HM_TRY(hm::fill_uniform(operands[s].b.get(), p.n * p.k, p.dtype, range, 2 * s + 2, stream));
  }
  hm::DeviceBuffer reference, result;
  HM_TRY(reference.allocate(c_bytes));
  HM_TRY(result.allocate(c_bytes));

  hm::Cublas cublas;
  HM_TRY(cublas.init());
  const void* a0 = operands[0].a.get();
  const void* b0 = operands[0].b.get();
  HM_TRY(cublas.matmul(p, a0, b0, reference.get(), stream));

  // Correctness first: each version once on fresh poison, compared with cuBLAS.
  for (Entry& e : *entries) {
    if (e.name == "cublas") continue;
    hm::Status s = hm::poison(result.get(), p.m * p.n, p.dtype, stream);
    if (s.ok()) s = e.launch(p, a0, b0, result.get(), stream);
    if (s.ok()) s = hm::compare_on_device(p, result.get(), reference.get(), &e.check, stream);
    if (!s.ok()) {
      e.error = s.message();
      continue;
    }
    e.checked = true;
  }

  // Then timing, interleaved: every round times each implementation in turn, so clock and
  // power drift during the run touches all of them alike.
  for (int round = 0; round < o.rounds; ++round) {
    for (Entry& e : *entries) {
      if (!e.error.empty()) continue;
      const hm::LaunchFn launch = [&](int rep) {
        OperandSet& set = operands[rep % sets];
        return e.launch(p, set.a.get(), set.b.get(), set.c.get(), stream);
      };
      const int warmup = round == 0 ? o.warmup : 1;
      if (hm::Status s = hm::time_launches(launch, warmup, o.reps, stream, &e.samples_ms); !s.ok())
        e.error = s.message();
    }
  }
  return hm::Status();
}

void print_table(const Options& o, const std::vector<Entry>& entries, double cublas_ms) {
  std::printf("\n%-14s %-55s %9s %8s %9s  %s\n", "version", "technique", "ms", "TFLOPS",
              "vs cuBLAS", "check");
  for (const Entry& e : entries) {
    if (!e.error.empty()) {
      std::printf("%-14s %-55s %9s %8s %9s  FAIL: %s\n", e.name.c_str(), e.technique.c_str(), "-",
                  "-", "-", e.error.c_str());
      continue;
    }
    const double ms = hm::median(e.samples_ms);
    const double tflops = o.problem.flops() / (ms * 1e-3) / 1e12;
    const std::string check = e.checked ? e.check.summary() : "reference";
    std::printf("%-14s %-55s %9.3f %8.1f %9.3f  %s\n", e.name.c_str(), e.technique.c_str(), ms,
                tflops, cublas_ms / ms, check.c_str());
  }
}

bool write_json(const Options& o, const std::vector<Entry>& entries, double cublas_ms, int sets,
                const hm::DeviceInfo& info) {
  std::ofstream f(o.json);
  if (!f) return false;
  const hm::Problem& p = o.problem;
  f << "{\n  \"tool\": \"hopper-matmul " << o.command << "\",\n  \"environment\": "
    << hm::to_json(info) << ",\n  \"problem\": {\"m\": " << p.m << ", \"n\": " << p.n
    << ", \"k\": " << p.k << ", \"dtype\": \"" << hm::dtype_name(p.dtype)
    << "\", \"layout\": \"C = A[m,k] * B[n,k]^T, row-major\"},\n"
    << "  \"protocol\": {\"timer\": \"cudaEvent pair per launch\", \"statistic\": \"median\", "
    << "\"warmup\": " << o.warmup << ", \"rounds\": " << o.rounds
    << ", \"reps_per_round\": " << o.reps << ", \"rotation_sets\": " << sets
    << ", \"interleaved\": true},\n  \"results\": [";
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    f << (i ? ",\n" : "\n") << "    {\"name\": \"" << e.name << "\", \"technique\": \""
      << hm::json_escape(e.technique) << "\"";
    if (e.error.empty()) {
      const double ms = hm::median(e.samples_ms);
      f << ", \"median_ms\": " << ms << ", \"tflops\": " << p.flops() / (ms * 1e-3) / 1e12
        << ", \"ratio_to_cublas\": " << cublas_ms / ms << ", \"samples\": " << e.samples_ms.size();
    }
    if (e.checked)
      f << ", \"rel_fro_error\": " << e.check.rel_fro << ", \"max_abs_error\": " << e.check.max_abs
        << ", \"unwritten\": " << e.check.unwritten << ", \"nan\": " << e.check.nan;
    f << ", \"pass\": " << (e.pass() ? "true" : "false");
    if (!e.error.empty()) f << ", \"error\": \"" << hm::json_escape(e.error) << "\"";
    f << "}";
  }
  f << "\n  ]\n}\n";
  return bool(f);
}

int cmd_info() {
  if (hm::Status s = hm::require_sm90(); !s.ok()) {
    std::fprintf(stderr, "hopper-matmul: %s\n", s.message().c_str());
    return kExitFailed;
  }
  int device = 0;
  hm::DeviceInfo info;
  if (hm::Status s = hm::cuda_status(cudaGetDevice(&device), "cudaGetDevice", __FILE__, __LINE__);
      !s.ok() || !(s = hm::query_device(device, &info)).ok()) {
    std::fprintf(stderr, "hopper-matmul: %s\n", s.message().c_str());
    return kExitFailed;
  }
  std::printf("%s\n%s\n", hm::describe(info).c_str(), hm::to_json(info).c_str());
  return 0;
}

int cmd_ladder(const Options& o) {
  std::vector<Entry> entries;
  hm::Cublas cublas;
  entries.push_back({"cublas", "cublasGemmEx, fp32 compute (the reference)",
                     [&cublas](const hm::Problem& p, const void* a, const void* b, void* c,
                               cudaStream_t s) { return cublas.matmul(p, a, b, c, s); }});
  for (const hm::Version& v : hm::versions())
    if (o.command == "ladder" || v.name == o.version)
      entries.push_back({std::string(v.name), std::string(v.technique), v.launch});

  int sets = 1;
  hm::DeviceInfo info;
  if (hm::Status s = run_ladder(o, &entries, &sets, &info); !s.ok()) {
    std::fprintf(stderr, "hopper-matmul: %s\n", s.message().c_str());
    return kExitFailed;
  }
  if (!entries[0].error.empty()) {
    std::fprintf(stderr, "hopper-matmul: cuBLAS failed: %s\n", entries[0].error.c_str());
    return kExitFailed;
  }
  const hm::Problem& p = o.problem;
  std::printf("GPU: %s\n", hm::describe(info).c_str());
  std::printf("Problem: C[%lld,%lld] = A[%lld,%lld]·B[%lld,%lld]^T, %s in, fp32 accumulate\n",
              (long long)p.m, (long long)p.n, (long long)p.m, (long long)p.k, (long long)p.n,
              (long long)p.k, hm::dtype_name(p.dtype));
  std::printf("Protocol: median of %d launches each (%d interleaved rounds of %d, after %d "
              "warm-up), CUDA events, %d rotating operand set%s\n",
              o.rounds * o.reps, o.rounds, o.reps, o.warmup, sets, sets == 1 ? "" : "s");
  const double cublas_ms = hm::median(entries[0].samples_ms);
  print_table(o, entries, cublas_ms);
  if (!o.json.empty() && !write_json(o, entries, cublas_ms, sets, info)) {
    std::fprintf(stderr, "hopper-matmul: cannot write %s\n", o.json.c_str());
    return kExitFailed;
  }
  for (const Entry& e : entries)
    if (!e.pass()) return kExitFailed;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parse(argc, argv);
  if (!options) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  try {
    if (options->command == "info") return cmd_info();
    if (options->command == "list") {
      for (const hm::Version& v : hm::versions())
        std::printf("%-22s %s\n", std::string(v.name).c_str(), std::string(v.technique).c_str());
      return 0;
    }
    if (options->command == "ladder" || options->command == "run") return cmd_ladder(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hopper-matmul: %s\n", e.what());
    return kExitFailed;
  }
  std::fprintf(stderr, "hopper-matmul: unknown command '%s'\n", options->command.c_str());
  std::fputs(kUsage, stderr);
  return kExitUsage;
}
