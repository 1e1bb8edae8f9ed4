/** @file
 *  The benchmark suite: every registered version and cuBLAS, in bf16 and fp16, on square,
 *  transformer-layer, ragged, decode (a few tokens against a layer's weights), wave-
 *  quantisation, short-K, row-pitch and mid-size shapes.  Run one version or one family with
 *  `--benchmark_filter` (e.g. `--benchmark_filter=v5_async_wgmma/bf16/square`, or
 *  `/decode/` alone).
 *
 *  Protocol.  Each benchmark checks its result against cuBLAS once, warms up, then times
 *  its implementation and cuBLAS alternately, launch by launch, each between two CUDA
 *  events: the two share every moment of clock and power drift.  Each launch is timed
 *  alone, on a stream held busy for kHoldUs while the host makes the launch call
 *  (hm::TimingOptions), so the time is the GPU's: the launch latency inside the GPU and the
 *  kernel, not the host's call.  The reported time is the
 *  implementation's (manual time); the counters are TFLOPS at its median launch, cuBLAS's
 *  TFLOPS at its median launch, and their ratio; the host's median time in each launch call
 *  (host_us, cuBLAS_host_us), which a program pays unless it queues launches ahead or
 *  replays a CUDA graph; and the same two medians as HBM TB/s
 *  (hbm_TBps, cuBLAS_hbm_TBps: Problem::min_bytes() over the time), which on decode shapes
 *  compare with the context's hbm_read_TBps, the read bandwidth measured at start by
 *  hm::measure_hbm_read on the same GPU.  Problems that fit in L2 rotate through several
 *  operand sets, so that those bytes do come from HBM.
 *
 *  Names: matmul/IMPLEMENTATION/DTYPE/FAMILY/MxNxK, e.g.
 *  matmul/v5_async_wgmma/bf16/square/8192x8192x8192.
 */
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/bandwidth.h"
#include "common/device.h"
#include "common/reference.h"
#include "common/registry.h"
#include "common/timing.h"
#include "common/workload.h"

namespace {

struct Shape {
  std::string family;  ///< square, transformer, ragged, decode, waves, shortk, pitch or midsize
  int64_t m, n, k;
};

/// Squares 512…16384; transformer layers (tokens × hidden × hidden, tokens × 4·hidden ×
/// hidden) for hidden 4096 and 8192 and 1024…16384 tokens; shapes no tile divides; decode
/// steps of a 5120-wide model (1…256 tokens against the weights of its projections: N × K
/// of 5120 × 5120, 15360 × 5120 fused QKV, 27648 × 5120 fused gate and up, 5120 × 13824
/// down), bound by reading B from HBM; and "waves": shapes whose 128×256 tiles leave the
/// last wave over the H200's 132 SMs mostly empty, the loss stream-K addresses; short K,
/// where a tile's epilogue is a large part of its time, the loss ping-pong addresses; and
/// "pitch": rows of A and B whose K·2 bytes are not a multiple of 128 (16 or 80 past one),
/// each beside the same M × N at the nearest K that is a multiple of 64; and "midsize":
/// problems whose 128×256 tiles do not fill the GPU, or fill it a wave or two and a part
/// (squares 1536…3584, and 384…1536 rows against 4096 × 4096 and 5120 × 5120 weights).
std::vector<Shape> shapes() {
  std::vector<Shape> list;
  for (const int64_t s : {512, 1024, 2048, 4096, 6144, 8192, 12288, 16384})
    list.push_back({"square", s, s, s});
  for (const int64_t hidden : {4096, 8192})
    for (const int64_t tokens : {1024, 2048, 4096, 8192, 16384}) {
      list.push_back({"transformer", tokens, hidden, hidden});
      list.push_back({"transformer", tokens, 4 * hidden, hidden});
    }
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{8191, 8193, 8200},
                                {4097, 4095, 4104},
                                {1000, 3000, 2056},
                                {333, 12345, 1024}})
    list.push_back({"ragged", m, n, k});
  for (const int64_t tokens : {1, 16, 32, 64, 128, 256})
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{5120, 5120},
                               {15360, 5120},
                               {27648, 5120},
                               {5120, 13824}})
      list.push_back({"decode", tokens, n, k});
  // 128×256 tiles: 1064 = 8·132 + 8, 594 = 4·132 + 66, 72 (of 132), 288 = 2·132 + 24 and
  // 800 = 6·132 + 8: the last wave keeps 6% to 55% of the SMs busy.
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1024, 34048, 4096},
                                {2304, 8448, 8192},
                                {1536, 1536, 1536},
                                {3072, 3072, 3072},
                                {5120, 5120, 5120}})
    list.push_back({"waves", m, n, k});
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{8192, 8192, 1024},
                                {8192, 8192, 512},
                                {4096, 16384, 1024},
                                {16384, 4096, 2048}})
    list.push_back({"shortk", m, n, k});
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{2048, 2048}, {4096, 4096}, {1920, 2880}})
    for (const auto& [k, aligned] : {std::pair<int64_t, int64_t>{2056, 2048},
                                     {4104, 4096},
                                     {4136, 4160},
                                     {5128, 5120}}) {
      list.push_back({"pitch", m, n, k});
      list.push_back({"pitch", m, n, aligned});
    }
  for (const int64_t s : {1536, 2048, 2560, 3072, 3584})
    list.push_back({"midsize", s, s, s});
  for (const int64_t m : {384, 768, 1024, 1536})
    for (const int64_t nk : {4096, 5120})
      list.push_back({"midsize", m, nk, nk});
  return list;
}

/// The GPU, checked once: every benchmark reports the same reason when it cannot run.
struct Gpu {
  hm::Status status;
  hm::DeviceInfo info;
  cudaStream_t stream = nullptr;
  hm::Cublas cublas;

  static Gpu& get() {
    static Gpu gpu;
    static const bool initialised = (gpu.init(), true);
    (void)initialised;
    return gpu;
  }

 private:
  void init() {
    status = hm::query_current_sm90(&info);
    if (status.ok())
      status = hm::cuda_status(cudaStreamCreate(&stream), "cudaStreamCreate", __FILE__, __LINE__);
    if (status.ok()) status = cublas.init();
  }
};

/// The operands of the problem being measured; benchmarks of one problem run back to back,
/// so only the latest is kept (the largest problems need gigabytes).
hm::Status workload_for(const hm::Problem& p, hm::Workload** out) {
  static std::unique_ptr<hm::Workload> current;
  if (!current || current->problem().m != p.m || current->problem().n != p.n ||
      current->problem().k != p.k || current->problem().dtype != p.dtype) {
    current.reset();  // free the last problem's memory first
    auto work = std::make_unique<hm::Workload>();
    Gpu& gpu = Gpu::get();
    HM_TRY(work->init(p, gpu.info.l2_bytes, 1, &gpu.cublas, gpu.stream));
    current = std::move(work);
  }
  *out = current.get();
  return hm::Status();
}

using LaunchFn = std::function<hm::Status(const hm::Problem&, const void*, const void*, void*,
                                          cudaStream_t)>;

/// How long each timed launch's stream is held before its start event, at first: longer than
/// most launch calls with the hold's own launch and the events (cuBLAS's calls measured a
/// median of ~13 µs on decode shapes, ours ~6.5, with outliers past 50); a call that outlasts
/// it is made again with a hold four times as long (hm::TimingOptions).
constexpr int kHoldUs = 100;

void run(benchmark::State& state, const std::string& name, const std::string& technique,
         const LaunchFn& launch, const hm::Problem& p) {
  state.SetLabel(technique);
  Gpu& gpu = Gpu::get();
  if (!gpu.status.ok()) {
    state.SkipWithError(("needs an sm_90 GPU: " + gpu.status.message()).c_str());
    return;
  }
  hm::Workload* work = nullptr;
  if (const hm::Status s = workload_for(p, &work); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  const LaunchFn cublas = [&gpu](const hm::Problem& q, const void* a, const void* b, void* c,
                                 cudaStream_t s) { return gpu.cublas.matmul(q, a, b, c, s); };
  if (name != "cublas") {
    hm::Comparison cmp;
    const hm::Status s = work->check_fn(launch, &cmp, gpu.stream);
    if (!s.ok() || !cmp.pass()) {
      state.SkipWithError(("wrong result: " + (s.ok() ? cmp.summary() : s.message())).c_str());
      return;
    }
  }
  // Time one launch of `fn` on the operands of repetition `rep`, on a held stream (the
  // warm-up launches need no hold).
  const auto time_one = [&](const LaunchFn& fn, int rep, std::vector<double>* ms,
                            const hm::TimingOptions& options) {
    const hm::LaunchFn one = [&](int) {
      hm::OperandSet& set = work->set(rep);
      return fn(p, set.a.get(), set.b.get(), set.c.get(), gpu.stream);
    };
    return hm::time_launches(one, 0, 1, gpu.stream, ms, options);
  };
  std::vector<double> ms, cublas_ms, host_ms, cublas_host_ms, scratch;
  int retries = 0;  // launches made again with a longer hold, both implementations
  for (int rep = 0; rep < 3; ++rep) {  // warm-up, both
    if (hm::Status s = time_one(launch, rep, &scratch, {}); !s.ok())
      return state.SkipWithError(s.message().c_str());
    if (hm::Status s = time_one(cublas, rep, &scratch, {}); !s.ok())
      return state.SkipWithError(s.message().c_str());
  }
  int rep = 0;
  for (auto _ : state) {
    hm::Status s = time_one(launch, rep, &ms,
                            {.hold_us = kHoldUs, .host_ms = &host_ms, .retries = &retries});
    if (s.ok())
      s = time_one(cublas, rep, &cublas_ms,
                   {.hold_us = kHoldUs, .host_ms = &cublas_host_ms, .retries = &retries});
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    state.SetIterationTime(ms.back() * 1e-3);
    ++rep;
  }
  if (ms.empty() || cublas_ms.empty()) return;
  const double median_ms = hm::median(ms), cublas_median_ms = hm::median(cublas_ms);
  state.counters["TFLOPS"] = p.flops() / (median_ms * 1e-3) / 1e12;
  state.counters["cuBLAS_TFLOPS"] = p.flops() / (cublas_median_ms * 1e-3) / 1e12;
  state.counters["ratio_to_cublas"] = cublas_median_ms / median_ms;
  state.counters["host_us"] = hm::median(host_ms) * 1e3;
  state.counters["cuBLAS_host_us"] = hm::median(cublas_host_ms) * 1e3;
  state.counters["hold_retries"] = retries;
  state.counters["hbm_TBps"] = p.min_bytes() / (median_ms * 1e-3) / 1e12;
  state.counters["cuBLAS_hbm_TBps"] = p.min_bytes() / (cublas_median_ms * 1e-3) / 1e12;
  state.counters["median_ms"] = median_ms;
  state.counters["m"] = double(p.m);
  state.counters["n"] = double(p.n);
  state.counters["k"] = double(p.k);
}

void register_all() {
  struct Impl {
    std::string name;
    std::string technique;
    LaunchFn launch;
  };
  std::vector<Impl> impls = {{"cublas", "cublasGemmEx, fp32 compute (the reference)",
                              [](const hm::Problem& p, const void* a, const void* b, void* c,
                                 cudaStream_t s) {
                                return Gpu::get().cublas.matmul(p, a, b, c, s);
                              }}};
  for (const hm::Version& v : hm::versions())
    impls.push_back({std::string(v.name), std::string(v.technique), v.launch});
  // Problem by problem, every implementation in turn: one set of operands per problem.
  for (const hm::DType dtype : {hm::DType::bf16, hm::DType::fp16})
    for (const Shape& shape : shapes())
      for (const Impl& impl : impls) {
        const hm::Problem p{shape.m, shape.n, shape.k, dtype};
        const std::string name = "matmul/" + impl.name + "/" + hm::dtype_name(dtype) + "/" +
                                 shape.family + "/" + std::to_string(shape.m) + "x" +
                                 std::to_string(shape.n) + "x" + std::to_string(shape.k);
        benchmark::RegisterBenchmark(name.c_str(),
                                     [impl, p](benchmark::State& state) {
                                       run(state, impl.name, impl.technique, impl.launch, p);
                                     })
            ->UseManualTime()
            ->MinTime(0.1)
            ->Unit(benchmark::kMillisecond);
      }
}

void add_context() {
  benchmark::AddCustomContext("hm_commit", hm::build_commit());
  benchmark::AddCustomContext(
      "hm_protocol",
      "each benchmark: check against cuBLAS once, 3 warm-up launches of both, then the "
      "implementation and cuBLAS timed alternately launch by launch with CUDA events, each "
      "on a stream held for " + std::to_string(kHoldUs) + " us (4x longer on a retry) "
      "through the host's launch call (GPU time only; host_us is the call's, hold_retries "
      "the launches made again); counters use medians; operand sets rotate where a problem "
      "fits in L2");
  const Gpu& gpu = Gpu::get();
  if (!gpu.status.ok()) {
    benchmark::AddCustomContext("hm_gpu", "none: " + gpu.status.message());
    benchmark::AddCustomContext("hbm_read_TBps", "none: no GPU");
    return;
  }
  benchmark::AddCustomContext("hm_environment", hm::to_json(gpu.info));
  benchmark::AddCustomContext("hm_gpu", hm::describe(gpu.info));
  // Measured before any benchmark runs, with no operands allocated yet (the probe takes
  // 2 GiB); a number, or "none: why".
  double tbps = 0;
  if (const hm::Status s = hm::measure_hbm_read(gpu.stream, &tbps); !s.ok()) {
    benchmark::AddCustomContext("hbm_read_TBps", "none: " + s.message());
    return;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", tbps);
  benchmark::AddCustomContext("hbm_read_TBps", text);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  add_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
