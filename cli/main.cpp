/** @file
 *  `hopper-matmul`: runs every registered version and cuBLAS on one problem (or a list of
 *  them), checks each result against cuBLAS, and reports time, TFLOPS, HBM TB/s and the ratio
 *  to cuBLAS measured in the same process.
 *
 *      hopper-matmul --help
 *      hopper-matmul info
 *      hopper-matmul list
 *      hopper-matmul ladder [--m M] [--n N] [--k K] [--dtype bf16|fp16] [--json FILE]
 *      hopper-matmul run --version NAME[,NAME...] [same options]
 *      hopper-matmul sweep --shapes MxNxK,… | --shapes-file FILE [--versions NAME[,NAME...]]
 *                          [--dtype …] [--json FILE]
 */
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/bandwidth.h"
#include "common/buffers.h"
#include "common/busy.h"
#include "common/device.h"
#include "common/reference.h"
#include "common/registry.h"
#include "common/sms.h"
#include "common/timing.h"
#include "common/workload.h"

namespace {

constexpr const char* kUsage = R"(usage:
  hopper-matmul --help               print this usage (also -h, help)
  hopper-matmul info                 print the GPU, its environment and its measured HBM
                                     read bandwidth
  hopper-matmul list [--json FILE]   print the registered versions and their tiles
  hopper-matmul ladder [options]     every version and cuBLAS on one problem
  hopper-matmul run --version NAME[,NAME...] [options]
                                     the named versions and cuBLAS on one problem
  hopper-matmul sweep (--shapes MxNxK,... | --shapes-file FILE) [--versions NAME[,NAME...]]
                     [options]       every version (or the named ones) and cuBLAS on each
                                     problem of a list
options:
  --m M --n N --k K    problem C[M,N] = A[M,K]·B[N,K]^T (default 8192 each)
  --dtype bf16|fp16    element type (default bf16)
  --warmup W           untimed launches per implementation before timing (default 10)
  --rounds R           timing rounds; each round times every implementation in turn (5)
  --reps N             timed launches per implementation per round (default 20)
  --timing launch|batch
                       launch (default): each launch between its own pair of events, the
                       statistic their median; batch: each round's launches between one
                       pair of events with none between them, the statistic the median of
                       the rounds' means (launches back to back, as a program runs them)
  --settle-ms S        before its timed launches in every round, run each implementation
                       untimed for about S ms, so that the clock has settled to the power
                       it draws (default 500; 0: --warmup launches before the first
                       round, one before each later round)
  --sms S              run every launch on a stream of a green context of S SMs (rounded
                       up to what the GPU can partition: multiples of 8 on an H200), as a
                       process given part of the GPU would
  --busy-sms B         hold B SMs with another kernel (one spinning CTA per SM, on a stream
                       of its own) from before the first launch to after the last, as a
                       communication kernel beside the matmul would
  --json FILE          also write the results and the environment as JSON; ladder and
                       sweep add the HBM read bandwidth measured at start (hbm_read_tbps)
                       and each result's HBM TB/s (hbm_tbps)
  --shapes LIST        sweep: comma-separated MxNxK, e.g. 4096x4096x4096,8192x8192x1024
  --shapes-file FILE   sweep: one MxNxK per line (# starts a comment)
  --versions LIST      sweep: measure only these versions, comma-separated (see
                       hopper-matmul list; cuBLAS is always measured); default: all
  --read-roofline on|off
                       sweep: also time "read", a launch that only reads each problem's
                       fewest bytes from the same operand sets, in the same rounds (the
                       roofline of one launch that moves them: a decode launch reads too
                       few bytes to reach the read bandwidth measured at start); default off
  --reference cpu      run: check against the float64 CPU product (problems up to 2e10
                       multiply-adds) instead of cuBLAS, and launch no cuBLAS at all (no
                       "vs cuBLAS" column): for compute-sanitizer's racecheck, under which
                       cuBLAS's own kernels fault when they are not the ones checked
HBM TB/s is the fewest bytes the problem moves, 2·(M·K + N·K + M·N) (A and B read once, C
written once), over the median time: memory-bound (decode) shapes are judged against the
read bandwidth, which ladder and sweep measure once at start and print.  The host's
time in each launch call is in the JSON (host_us), timed with a few launches queued (before
the settling launches, which fill the queue); where it is about a kernel's time, a note says
that its launches, queued back to back, waited for the host.
)";

constexpr int kExitFailed = 1;  // a check failed, or the GPU is missing or unusable
constexpr int kExitUsage = 2;

struct Options {
  std::string command;
  std::string version;
  std::string versions;  // sweep --versions: empty for every version
  std::vector<std::string> names;  // run --version, sweep --versions: the versions named
  std::vector<hm::Problem> problems;  // one for ladder and run, the list for sweep
  hm::Problem problem{8192, 8192, 8192, hm::DType::bf16};
  int warmup = 10;
  int rounds = 5;
  int reps = 20;
  int settle_ms = 500;
  int sms = 0;  // --sms: run in a green context of this many SMs (0: the whole GPU)
  int busy_sms = 0;  // --busy-sms: SMs another kernel holds while measuring (0: none)
  std::string json;
  std::string shapes, shapes_file;
  bool cpu_reference = false;  // --reference cpu: no cuBLAS in the process (run only)
  bool batch = false;  // --timing batch: one pair of events per round of launches
  bool read_roofline = false;  // sweep --read-roofline on: time a plain read of the bytes
};

/// The comma-separated items of `text` into `items`; false if one is empty ("a,,b", "a,").
bool split(const std::string& text, std::vector<std::string>* items) {
  items->clear();
  if (text.empty()) return true;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    items->push_back(text.substr(start, comma - start));
  items->push_back(text.substr(start));
  return std::none_of(items->begin(), items->end(), [](const auto& i) { return i.empty(); });
}

/// Why `path` cannot be written (its folder is missing, or it is a folder), or "".
std::string unwritable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path folder = fs::path(path).parent_path();
  if (fs::is_directory(path, error)) return path + " is a folder";
  if (!folder.empty() && !fs::is_directory(folder, error))
    return "there is no folder " + folder.string() + " to write " + path + " into";
  return "";
}

/// Parses "MxNxK" into `p`'s sizes.
bool parse_shape(const std::string& text, hm::Problem* p) {
  long long m = 0, n = 0, k = 0;
  char x1 = 0, x2 = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%lld%c%lld%c%lld%c", &m, &x1, &n, &x2, &k, &extra) != 5 ||
      x1 != 'x' || x2 != 'x')
    return false;
  p->m = m;
  p->n = n;
  p->k = k;
  return true;
}

/// Parses argv; std::nullopt (after printing why, in one line, and where the usage is) on
/// anything it does not understand.  --help, -h or help anywhere: the command "help".
/// Everything that can be checked without a GPU is checked here, before any measurement.
std::optional<Options> parse(int argc, char** argv) {
  Options o;
  const auto bad = [](const std::string& why) {
    std::fprintf(stderr, "hopper-matmul: %s\nTry 'hopper-matmul --help' for the usage.\n",
                 why.c_str());
    return std::nullopt;
  };
  if (argc < 2) {  // no command at all: the whole usage is the answer
    std::fputs(kUsage, stderr);
    return std::nullopt;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h" || (i == 1 && arg == "help")) {
      o.command = "help";
      return o;
    }
  }
  o.command = argv[1];
  if (o.command != "info" && o.command != "list" && o.command != "ladder" &&
      o.command != "run" && o.command != "sweep")
    return bad("unknown command '" + o.command + "': info, list, ladder, run or sweep");
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
    else if (flag == "--settle-ms") ok = integer(&o.settle_ms) && o.settle_ms >= 0;
    else if (flag == "--sms") ok = integer(&o.sms) && o.sms >= 1;
    else if (flag == "--busy-sms") ok = integer(&o.busy_sms) && o.busy_sms >= 1;
    else if (flag == "--json") o.json = value;
    else if (flag == "--version") o.version = value;
    else if (flag == "--versions") o.versions = value;
    else if (flag == "--shapes") o.shapes = value;
    else if (flag == "--shapes-file") o.shapes_file = value;
    else if (flag == "--timing") {
      if (value != "launch" && value != "batch")
        return bad("--timing must be launch or batch, not '" + value + "'");
      o.batch = value == "batch";
    }
    else if (flag == "--read-roofline") {
      if (value != "on" && value != "off")
        return bad("--read-roofline must be on or off, not '" + value + "'");
      o.read_roofline = value == "on";
    }
    else if (flag == "--reference") {
      if (value != "cpu" && value != "cublas")
        return bad("--reference must be cublas or cpu, not '" + value + "'");
      o.cpu_reference = value == "cpu";
    }
    else if (flag == "--dtype") {
      const auto d = hm::parse_dtype(value);
      if (!d) return bad("--dtype must be bf16 or fp16, not '" + value + "'");
      o.problem.dtype = *d;
    } else {
      return bad("unknown option " + std::string(flag));
    }
    if (!ok) return bad("bad value '" + value + "' for " + std::string(flag));
  }
  if (o.cpu_reference && o.command != "run") return bad("--reference cpu is for run");
  if (o.read_roofline && o.command != "sweep") return bad("--read-roofline is for sweep");
  if (!o.versions.empty() && o.command != "sweep")
    return bad("--versions is for sweep (run takes --version NAME[,NAME...])");
  if (!o.version.empty() && o.command == "sweep")
    return bad("sweep takes --versions NAME[,NAME...], not --version");
  if (!o.version.empty() && o.command != "run")
    return bad("--version is for run (" + o.command + " measures every version)");
  if ((!o.shapes.empty() || !o.shapes_file.empty()) && o.command != "sweep")
    return bad("--shapes and --shapes-file are for sweep (" + o.command + " takes --m --n --k)");
  const std::string& list = o.command == "run" ? o.version : o.versions;
  if (!split(list, &o.names))
    return bad(std::string(o.command == "run" ? "--version" : "--versions") + " '" + list +
               "' has an empty name (a comma at either end, or two in a row)");
  if (o.command == "run" && o.names.empty()) return bad("run needs --version NAME");
  for (const std::string& name : o.names)
    if (!hm::find_version(name))
      return bad("no version called '" + name + "' (see hopper-matmul list; cuBLAS is " +
                 "always measured)");
  // The output, checked now rather than after the measurement it would hold.
  if (!o.json.empty())
    if (const std::string why = unwritable(o.json); !why.empty()) return bad("--json: " + why);
  if (o.command != "sweep") {
    o.problems = {o.problem};
    return o;
  }
  // sweep: the shapes from --shapes and --shapes-file, all in --dtype.
  std::vector<std::string> texts;
  if (!split(o.shapes, &texts))
    return bad("--shapes '" + o.shapes + "' has an empty shape (a comma at either end, or two in " +
               "a row)");
  if (!o.shapes_file.empty()) {
    std::ifstream file(o.shapes_file);
    if (!file) return bad("cannot read " + o.shapes_file);
    for (std::string line; std::getline(file, line);) {
      line = line.substr(0, line.find('#'));
      std::stringstream words(line);
      for (std::string word; words >> word;) texts.push_back(word);
    }
  }
  if (texts.empty()) return bad("sweep needs --shapes or --shapes-file");
  for (const std::string& text : texts) {
    hm::Problem p = o.problem;
    if (!parse_shape(text, &p)) return bad("bad shape '" + text + "' (expected MxNxK)");
    o.problems.push_back(p);
  }
  return o;
}

/// One implementation in the ladder: cuBLAS or a registered version.
struct Entry {
  std::string name;
  std::string technique;
  std::function<hm::Status(const hm::Problem&, const void*, const void*, void*, cudaStream_t)>
      launch;
  std::vector<double> samples_ms;
  std::vector<double> host_ms;  // the host's time in launch calls into a short queue
  hm::Comparison check;
  bool checked = false;
  std::string error;  // set when the implementation could not run at all
  bool roofline = false;  // the plain read of --read-roofline: timed, not checked, no ratio

  bool pass() const { return error.empty() && (!checked || check.pass()); }
  double median_ms() const { return hm::median(samples_ms); }
};

/// Every implementation measured on one problem.
struct Run {
  hm::Problem problem;
  int sets = 1;
  std::vector<Entry> entries;  // entries[0] is cuBLAS, unless --reference cpu left it out

  bool has_cublas() const { return !entries.empty() && entries[0].name == "cublas"; }
  double cublas_ms() const { return has_cublas() ? entries[0].median_ms() : NAN; }
  bool pass() const {
    for (const Entry& e : entries)
      if (!e.pass()) return false;
    return true;
  }
};

/// Checks, then times, every entry of `run` on its problem.
hm::Status measure(const Options& o, const hm::DeviceInfo& info, hm::Cublas* cublas,
                   hm::BusySms* busy, cudaStream_t stream, Run* run) {
  const hm::Problem& p = run->problem;
  HM_TRY(hm::validate_problem(p));
  hm::Workload work;
  HM_TRY(work.init(p, info.l2_bytes, 1, o.cpu_reference ? nullptr : cublas, stream));
  run->sets = work.sets();

  // Correctness first: each version once on fresh poison, compared with the reference.
  for (Entry& e : run->entries) {
    if (e.name == "cublas" || e.roofline) continue;
    if (const hm::Status s = work.check_fn(e.launch, &e.check, stream); !s.ok()) {
      e.error = s.message();
      // A kernel that faults or traps (a debug build's bounded wait) leaves the context
      // unusable, and every later call fails with its error: name the culprit now.
      if (cudaDeviceSynchronize() != cudaSuccess)
        return hm::Status::error(e.name + " failed and left the CUDA context unusable: " +
                                 e.error);
    } else {
      e.checked = true;
    }
  }

  // Then timing, interleaved: every round times each implementation in turn, so slow drift
  // (temperature) touches all of them alike.  Under the power cap the clock follows the
  // power drawn over the last few hundred milliseconds, so each implementation first runs
  // untimed for about --settle-ms: its timed launches then run at the clock its own power
  // allows, not at the one the implementation before it left behind.  The number of
  // settling launches comes from a first estimate of one launch's time.
  // The host's time in a launch call is taken there too, with a few launches queued: the
  // settling launches fill the stream's queue, and then every call waits for a slot, about
  // one kernel's time, whatever the host's own work.
  // --busy-sms: the other kernel holds its SMs through all the timed launches (and nothing
  // from here to its stop allocates or frees, which would wait for it).
  if (o.busy_sms > 0) HM_TRY(busy->start(o.busy_sms));
  std::vector<int> settle(run->entries.size(), 1);
  const auto launcher = [&work, &p, stream](const Entry& e) -> hm::LaunchFn {
    return [&work, &p, stream, launch = e.launch](int rep) {
      hm::OperandSet& set = work.set(rep);
      return launch(p, set.a.get(), set.b.get(), set.c.get(), stream);
    };
  };
  for (size_t i = 0; i < run->entries.size() && o.settle_ms > 0; ++i) {
    Entry& e = run->entries[i];
    if (!e.error.empty()) continue;
    std::vector<double> first;
    if (const hm::Status s = hm::time_launches(launcher(e), o.warmup, 3, stream, &first,
                                               {.host_ms = &e.host_ms});
        !s.ok())
      e.error = s.message();
    const double launch_ms = std::max(hm::median(first), 1e-3);
    settle[i] = int(std::clamp(std::ceil(o.settle_ms / launch_ms), 1.0, 1e6));
  }
  for (int round = 0; round < o.rounds; ++round) {
    for (size_t i = 0; i < run->entries.size(); ++i) {
      Entry& e = run->entries[i];
      if (!e.error.empty()) continue;
      const int untimed = o.settle_ms > 0 ? settle[i] : round == 0 ? o.warmup : 1;
      std::vector<double>* host_ms = o.settle_ms > 0 ? nullptr : &e.host_ms;
      if (const hm::Status s = hm::time_launches(launcher(e), untimed, o.reps, stream,
                                                 &e.samples_ms,
                                                 {.host_ms = host_ms, .batch = o.batch});
          !s.ok())
        e.error = s.message();
    }
  }
  HM_TRY(busy->stop());
  if (run->has_cublas() && !run->entries[0].error.empty())
    return hm::Status::error("cuBLAS failed: " + run->entries[0].error);
  return hm::Status();
}

std::string shape_text(const hm::Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

void print_rows(const Run& run, bool with_shape) {
  const double cublas_ms = run.cublas_ms();
  for (const Entry& e : run.entries) {
    if (with_shape) std::printf("%-20s ", shape_text(run.problem).c_str());
    if (!e.error.empty()) {
      std::printf("%-20s %-55s %9s %8s %8s %9s  FAIL: %s\n", e.name.c_str(),
                  e.technique.c_str(), "-", "-", "-", "-", e.error.c_str());
      continue;
    }
    const double ms = e.median_ms();
    const double tflops = run.problem.flops() / (ms * 1e-3) / 1e12;
    const double tbps = run.problem.min_bytes() / (ms * 1e-3) / 1e12;
    const std::string check = e.checked ? e.check.summary() : e.roofline ? "roofline"
                                                                           : "reference";
    char ratio[32] = "-";  // --reference cpu: no cuBLAS to compare with
    if (run.has_cublas() && !e.roofline)
      std::snprintf(ratio, sizeof ratio, "%.3f", cublas_ms / ms);
    std::printf("%-20s %-55s %9.3f %8.1f %8.3f %9s  %s\n", e.name.c_str(),
                e.technique.c_str(), ms, tflops, tbps, ratio, check.c_str());
  }
}

void write_run_json(std::ostream& f, const Run& run) {
  const hm::Problem& p = run.problem;
  const double cublas_ms = run.cublas_ms();
  f << "    {\"problem\": {\"m\": " << p.m << ", \"n\": " << p.n << ", \"k\": " << p.k
    << ", \"dtype\": \"" << hm::dtype_name(p.dtype)
    << "\", \"layout\": \"C = A[m,k] * B[n,k]^T, row-major\"}, \"rotation_sets\": " << run.sets
    << ",\n     \"results\": [";
  for (size_t i = 0; i < run.entries.size(); ++i) {
    const Entry& e = run.entries[i];
    f << (i ? ",\n" : "\n") << "      {\"name\": \"" << e.name << "\", \"technique\": \""
      << hm::json_escape(e.technique) << "\"";
    if (e.error.empty()) {
      const double ms = e.median_ms();
      f << ", \"median_ms\": " << ms;
      if (e.roofline) {
        f << ", \"roofline\": true";  // computes nothing: no TFLOPS or ratio
      } else {
        f << ", \"tflops\": " << p.flops() / (ms * 1e-3) / 1e12;
        if (run.has_cublas()) f << ", \"ratio_to_cublas\": " << cublas_ms / ms;
      }
      f << ", \"samples\": " << e.samples_ms.size()
        << ", \"hbm_tbps\": " << p.min_bytes() / (ms * 1e-3) / 1e12
        << ", \"host_us\": " << hm::median(e.host_ms) * 1e3;
    }
    if (e.checked)
      f << ", \"rel_fro_error\": " << e.check.rel_fro << ", \"max_abs_error\": " << e.check.max_abs
        << ", \"unwritten\": " << e.check.unwritten << ", \"nan\": " << e.check.nan;
    f << ", \"pass\": " << (e.pass() ? "true" : "false");
    if (!e.error.empty()) f << ", \"error\": \"" << hm::json_escape(e.error) << "\"";
    f << "}";
  }
  f << "\n     ]}";
}

/// The HBM read bandwidth measured at the start of a ladder or sweep: TB/s, or why not.
struct HbmRead {
  bool probed = false;  // false for run, which does not measure it
  double tbps = 0;
  std::string error;    // set when the probe failed; the matmuls are measured all the same
};

/// Writes the runs, the environment and the protocol to --json.
bool write_json(const Options& o, const std::vector<Run>& runs, const hm::DeviceInfo& info,
                const HbmRead& hbm, int green_sms) {
  std::ofstream f(o.json);
  if (!f) return false;
  f << "{\n  \"tool\": \"hopper-matmul " << o.command << "\",\n  \"environment\": "
    << hm::to_json(info) << ",\n";
  if (hbm.probed && hbm.error.empty())  // run does not measure it, and writes neither
    f << "  \"hbm_read_tbps\": " << hbm.tbps << ",\n";
  else if (hbm.probed)
    f << "  \"hbm_read_tbps\": null, \"hbm_read_error\": \"" << hm::json_escape(hbm.error)
      << "\",\n";
  f << "  \"protocol\": {\"timer\": \""
    << (o.batch ? "cudaEvent pair per round of launches, their mean" : "cudaEvent pair per launch")
    << "\", \"statistic\": \"median\", "
    << "\"warmup\": " << o.warmup << ", \"rounds\": " << o.rounds
    << ", \"reps_per_round\": " << o.reps << ", \"settle_ms\": " << o.settle_ms
    << ", \"interleaved\": true, \"green_context_sms\": " << o.sms
    << ", \"busy_sms\": " << o.busy_sms << "},\n  \"runs\": [\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    write_run_json(f, runs[i]);
    f << (i + 1 < runs.size() ? ",\n" : "\n");
  }
  f << "  ]\n}\n";
  return bool(f);
}

int fail(const hm::Status& s) {
  std::fprintf(stderr, "hopper-matmul: %s\n", s.message().c_str());
  return kExitFailed;
}

/// The registered versions with their launch configurations (no GPU needed).
int cmd_list(const Options& o) {
  std::printf("%-20s %-16s %6s %7s %9s %7s %7s  %s\n", "version", "tile BMxBNxBK", "stages",
              "threads", "smem/CTA", "CTAs/SM", "cluster", "technique");
  for (const hm::Version& v : hm::versions()) {
    const hm::KernelConfig& k = *v.config;
    const std::string tile =
        std::to_string(k.bm) + "x" + std::to_string(k.bn) + "x" + std::to_string(k.bk);
    std::printf("%-20s %-16s %6d %7d %7.1f K %7d %7d  %s\n", std::string(v.name).c_str(),
                tile.c_str(), k.stages, k.threads, k.smem_bytes / 1024.0, k.ctas_per_sm,
                k.cluster_ctas, std::string(v.technique).c_str());
  }
  if (o.json.empty()) return 0;
  std::ofstream f(o.json);
  f << "{\"versions\": [";
  bool first = true;
  for (const hm::Version& v : hm::versions()) {
    const hm::KernelConfig& k = *v.config;
    f << (first ? "\n" : ",\n") << "  {\"name\": \"" << v.name << "\", \"technique\": \""
      << hm::json_escape(std::string(v.technique)) << "\", \"threads\": " << k.threads
      << ", \"smem_bytes\": " << k.smem_bytes << ", \"bm\": " << k.bm << ", \"bn\": " << k.bn
      << ", \"bk\": " << k.bk << ", \"stages\": " << k.stages
      << ", \"ctas_per_sm\": " << k.ctas_per_sm << ", \"cluster_ctas\": " << k.cluster_ctas
      << "}";
    first = false;
  }
  f << "\n]}\n";
  if (!f) {
    std::fprintf(stderr, "hopper-matmul: cannot write %s\n", o.json.c_str());
    return kExitFailed;
  }
  return 0;
}

/// The GPU, its environment, and its HBM read bandwidth measured now.
int cmd_info() {
  hm::DeviceInfo info;
  if (hm::Status s = hm::query_current_sm90(&info); !s.ok()) return fail(s);
  std::printf("%s\n%s\n", hm::describe(info).c_str(), hm::to_json(info).c_str());
  double tbps = 0;
  if (hm::Status s = hm::measure_hbm_read(nullptr, &tbps); !s.ok()) return fail(s);
  std::printf("HBM read bandwidth: %.3f TB/s (measured now: median of 10 reads of a buffer "
              "far above L2)\n", tbps);
  return 0;
}

/// ladder, run and sweep: the same measurement over one problem or several.
int cmd_measure(const Options& o) {
  for (const hm::Problem& p : o.problems)
    if (hm::Status s = hm::validate_problem(p); !s.ok()) return fail(s);
  hm::DeviceInfo info;
  if (hm::Status s = hm::query_current_sm90(&info); !s.ok()) return fail(s);
  // --sms: every launch goes to a stream of a green context with that many SMs (or the
  // next count the GPU can partition), as a process that shares the GPU would see it.
  hm::GreenContextStream green;
  cudaStream_t stream = nullptr;
  if (o.sms > 0) {
    if (hm::Status s = green.create(o.sms); !s.ok()) return fail(s);
    stream = green.stream();
    std::printf("Stream: a green context of %d of the GPU's %d SMs\n", green.sm_count(),
                info.sm_count);
  } else if (hm::Status s = hm::cuda_status(cudaStreamCreate(&stream), "cudaStreamCreate",
                                            __FILE__, __LINE__);
             !s.ok()) {
    return fail(s);
  }
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() {
      if (s) cudaStreamDestroy(s);
    }
  } guard{o.sms > 0 ? nullptr : stream};

  // The read roofline of memory-bound shapes, once, before any matmul: a failure is reported
  // and written to the JSON, and the matmuls are measured all the same.  Not for run, which
  // the sanitizer checks and the smoke test call on small problems.
  HbmRead hbm;
  if (o.command != "run") {
    hbm.probed = true;
    if (const hm::Status s = hm::measure_hbm_read(stream, &hbm.tbps); !s.ok()) {
      hbm.error = s.message();
      std::fprintf(stderr, "hopper-matmul: HBM read bandwidth not measured: %s\n",
                   hbm.error.c_str());
    }
  }

  hm::BusySms busy;  // --busy-sms: started and stopped around each problem's timing
  if (o.busy_sms > 0)
    std::printf("Load: another kernel holds %d of the GPU's %d SMs while timing\n",
                o.busy_sms, info.sm_count);

  hm::Cublas cublas;
  std::vector<Run> runs;
  for (const hm::Problem& p : o.problems) {
    Run run{p, 1, {}};
    if (!o.cpu_reference)
      run.entries.push_back({"cublas", "cublasGemmEx, fp32 compute (the reference)",
                             [&cublas](const hm::Problem& q, const void* a, const void* b,
                                       void* c, cudaStream_t s) {
                               return cublas.matmul(q, a, b, c, s);
                             }});
    // ladder and sweep: every version; run and sweep --versions: the named ones, in ladder
    // order.
    const std::vector<std::string>& named = o.names;
    const bool all = o.command == "ladder" || (o.command == "sweep" && named.empty());
    for (const hm::Version& v : hm::versions())
      if (all || std::find(named.begin(), named.end(), v.name) != named.end())
        run.entries.push_back({std::string(v.name), std::string(v.technique), v.launch});
    if (o.read_roofline) {
      run.entries.push_back({"read", "a plain read of the fewest bytes: A, B and C once each",
                             hm::read_problem_bytes});
      run.entries.back().roofline = true;
    }
    if (hm::Status s = measure(o, info, &cublas, &busy, stream, &run); !s.ok()) return fail(s);
    runs.push_back(std::move(run));
  }
  // The clocks after the work, not before it: what the measurement ran at.
  if (hm::Status s = hm::query_device(info.device, &info); !s.ok()) return fail(s);

  std::printf("GPU: %s\n", hm::describe(info).c_str());
  if (o.batch)
    std::printf("Protocol: median of %d rounds' mean launch (%d interleaved rounds of %d "
                "launches back to back between two CUDA events, each after ~%d ms of untimed "
                "launches of the same implementation; %d warm-up), rotating operand sets "
                "where a problem fits in L2\n",
                o.rounds, o.rounds, o.reps, o.settle_ms, o.warmup);
  else
    std::printf("Protocol: median of %d launches each (%d interleaved rounds of %d, each after "
                "~%d ms of untimed launches of the same implementation; %d warm-up), CUDA "
                "events, rotating operand sets where a problem fits in L2\n",
                o.rounds * o.reps, o.rounds, o.reps, o.settle_ms, o.warmup);
  if (hbm.probed && hbm.error.empty())
    std::printf("HBM read bandwidth, measured at start: %.3f TB/s (the roofline of HBM TB/s)\n",
                hbm.tbps);
  const bool sweep = o.command == "sweep";
  if (!sweep) {
    const hm::Problem& p = runs[0].problem;
    std::printf("Problem: C[%lld,%lld] = A[%lld,%lld]·B[%lld,%lld]^T, %s in, fp32 accumulate\n",
                (long long)p.m, (long long)p.n, (long long)p.m, (long long)p.k, (long long)p.n,
                (long long)p.k, hm::dtype_name(p.dtype));
    if (o.cpu_reference)
      std::printf("Reference: the float64 CPU product, rounded to %s (no cuBLAS launched)\n",
                  hm::dtype_name(p.dtype));
  }
  std::printf("\n%s%-20s %-55s %9s %8s %8s %9s  %s\n", sweep ? "shape (MxNxK)        " : "",
              "version", "technique", "ms", "TFLOPS", "HBM TB/s", "vs cuBLAS", "check");
  bool pass = true;
  for (const Run& run : runs) {
    print_rows(run, sweep);
    pass = pass && run.pass();
  }
  // Launches queued back to back are timed by the GPU alone only while the host enqueues
  // them faster than the GPU runs them; a launch call as long as the kernel drains the queue.
  for (const Run& run : runs)
    for (const Entry& e : run.entries)
      if (e.error.empty() && hm::median(e.host_ms) >= 0.8 * e.median_ms())
        std::printf("note: %s %s: its launch call takes the host %.1f us, about its kernel's "
                    "time, so its launches waited for the host and its time includes the "
                    "host's\n",
                    shape_text(run.problem).c_str(), e.name.c_str(),
                    hm::median(e.host_ms) * 1e3);
  if (!o.json.empty() && !write_json(o, runs, info, hbm, o.sms > 0 ? green.sm_count() : 0)) {
    std::fprintf(stderr, "hopper-matmul: cannot write %s\n", o.json.c_str());
    return kExitFailed;
  }
  return pass ? 0 : kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parse(argc, argv);
  if (!options) return kExitUsage;
  try {
    const std::string& command = options->command;
    if (command == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (command == "info") return cmd_info();
    if (command == "list") return cmd_list(*options);
    if (command == "ladder" || command == "run" || command == "sweep") return cmd_measure(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hopper-matmul: %s\n", e.what());
    return kExitFailed;
  }
  return kExitUsage;  // parse() knows no other command
}
