// Per-tile timestamps of v3 and v4, or per-CTA ones of v8's stream-K units
// (scripts/tile_probe/run.sh builds and runs it):
//   probe OUTDIR M N K [v3v4|v8]
// Launches each instrumented kernel 40 times alternately with cuBLAS and 40 times back to
// back, each block after ~0.5 s of untimed launches of the same kind, twice over; writes
// OUTDIR/times.txt (median ms per launch, ratio to cuBLAS) and, per block, the tile records
// of its last launch (OUTDIR/KERNEL_MODE_ROUND.bin, 16 x u64 per tile).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

constexpr int kMaxTiles = 1 << 16;
__device__ unsigned long long g_probe[kMaxTiles * 16];

#include "common/buffers.h"
#include "common/reference.h"
#include "probe_v3.cuh"
#include "probe_v4.cuh"
#include "probe_v8.cuh"

#define CHECK_STATUS(x)                                                     \
  do {                                                                      \
    const hm::Status s_ = (x);                                              \
    if (!s_.ok()) {                                                         \
      std::fprintf(stderr, "%s: %s\n", #x, s_.message().c_str());           \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)
#define CHECK_CUDA(x)                                                       \
  do {                                                                      \
    const cudaError_t e_ = (x);                                             \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));         \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: probe OUTDIR M N K [v3v4|v8]\n");
    return 2;
  }
  const std::string set = argc == 6 ? argv[5] : "v3v4";
  if (set != "v3v4" && set != "v8") {
    std::fprintf(stderr, "probe: the kernels are v3v4 or v8, not %s\n", set.c_str());
    return 2;
  }
  const std::string out = argv[1];
  const hm::Problem p{std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]), hm::DType::bf16};
  CHECK_STATUS(hm::validate_problem(p));
  if ((p.m + 127) / 128 * ((p.n + 255) / 256) > kMaxTiles) {
    std::fprintf(stderr, "probe: more than %d tiles\n", kMaxTiles);
    return 2;
  }
  hm::DeviceBuffer a, b, c, ref;
  CHECK_STATUS(a.allocate(p.m * p.k * 2));
  CHECK_STATUS(b.allocate(p.n * p.k * 2));
  CHECK_STATUS(c.allocate(p.m * p.n * 2));
  CHECK_STATUS(ref.allocate(p.m * p.n * 2));
  const double range = hm::unit_variance_range(p.k);
  CHECK_STATUS(hm::fill_uniform(a.get(), p.m * p.k, p.dtype, range, 1, nullptr));
  CHECK_STATUS(hm::fill_uniform(b.get(), p.n * p.k, p.dtype, range, 2, nullptr));
  hm::Cublas cublas;
  CHECK_STATUS(cublas.init());

  struct Kernel {
    const char* name;
    hm::Launcher launch;
  };
  const std::vector<Kernel> kernels =
      set == "v8" ? std::vector<Kernel>{{"v8", probe_v8::matmul}}
                  : std::vector<Kernel>{{"v3", probe_v3::matmul}, {"v4", probe_v4::matmul}};
  const int kTimed = 40;
  std::vector<cudaEvent_t> events(3 * kTimed);
  for (auto& e : events) CHECK_CUDA(cudaEventCreate(&e));
  std::vector<unsigned long long> records(kMaxTiles * 16);
  void* records_on_device = nullptr;
  CHECK_CUDA(cudaGetSymbolAddress(&records_on_device, g_probe));
  FILE* times = std::fopen((out + "/times.txt").c_str(), "w");
  if (!times) {
    std::perror("probe: times.txt");
    return 1;
  }

  // The ~0.5 s of untimed launches before each block let the clock settle to that block's
  // power (docs/intro/measuring.rst): 150 pairs alternating, 300 launches back to back at 8192^3.
  const double launch_ms = std::max(0.01, p.flops() / 6e11);  // a rough 600 TFLOPS
  for (int round = 0; round < 2; ++round)
    for (const bool alternate : {true, false})
      for (const Kernel& kernel : kernels) {
        const int settle = int(500.0 / (alternate ? 2 * launch_ms : launch_ms));
        for (int i = 0; i < settle; ++i) {
          if (alternate) CHECK_STATUS(cublas.matmul(p, a.get(), b.get(), ref.get(), nullptr));
          CHECK_STATUS(kernel.launch(p, a.get(), b.get(), c.get(), nullptr));
        }
        // Every launch rewrites its tiles' records; clearing first drops another kernel's.
        CHECK_CUDA(cudaMemsetAsync(records_on_device, 0, records.size() * 8, nullptr));
        for (int i = 0; i < kTimed; ++i) {
          CHECK_CUDA(cudaEventRecord(events[3 * i], nullptr));
          if (alternate) CHECK_STATUS(cublas.matmul(p, a.get(), b.get(), ref.get(), nullptr));
          CHECK_CUDA(cudaEventRecord(events[3 * i + 1], nullptr));
          CHECK_STATUS(kernel.launch(p, a.get(), b.get(), c.get(), nullptr));
          CHECK_CUDA(cudaEventRecord(events[3 * i + 2], nullptr));
        }
        CHECK_CUDA(cudaDeviceSynchronize());
        std::vector<float> ms_kernel, ms_cublas;
        for (int i = 0; i < kTimed; ++i) {
          float ms = 0;
          CHECK_CUDA(cudaEventElapsedTime(&ms, events[3 * i + 1], events[3 * i + 2]));
          ms_kernel.push_back(ms);
          CHECK_CUDA(cudaEventElapsedTime(&ms, events[3 * i], events[3 * i + 1]));
          ms_cublas.push_back(ms);
        }
        std::sort(ms_kernel.begin(), ms_kernel.end());
        std::sort(ms_cublas.begin(), ms_cublas.end());
        const char* mode = alternate ? "alternating" : "sustained";
        const float k_ms = ms_kernel[kTimed / 2], c_ms = ms_cublas[kTimed / 2];
        std::fprintf(times, "round %d %-11s %s %.4f ms", round, mode, kernel.name, k_ms);
        if (alternate) std::fprintf(times, "  cuBLAS %.4f ms  ratio %.4f", c_ms, c_ms / k_ms);
        std::fprintf(times, "\n");
        CHECK_CUDA(cudaMemcpyFromSymbol(records.data(), g_probe, records.size() * 8));
        const std::string path = out + "/" + kernel.name + "_" + mode + "_" + std::to_string(round) + ".bin";
        FILE* f = std::fopen(path.c_str(), "wb");
        std::fwrite(records.data(), 8, records.size(), f);
        std::fclose(f);
      }

  // The instrumented copies must still compute the product.
  CHECK_STATUS(cublas.matmul(p, a.get(), b.get(), ref.get(), nullptr));
  for (const Kernel& kernel : kernels) {
    CHECK_STATUS(hm::poison(c.get(), p.m * p.n, p.dtype, nullptr));
    CHECK_STATUS(kernel.launch(p, a.get(), b.get(), c.get(), nullptr));
    hm::Comparison cmp;
    CHECK_STATUS(hm::compare_on_device(p, c.get(), ref.get(), &cmp, nullptr));
    std::fprintf(times, "check %s %s\n", kernel.name, cmp.summary().c_str());
    if (!cmp.pass()) return 1;
  }
  std::fclose(times);
  return 0;
}
