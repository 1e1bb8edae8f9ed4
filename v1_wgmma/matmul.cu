/** @file
 *  v1 — wgmma.  Adds over v0: Hopper's asynchronous warpgroup MMA, reading A and B straight
 *  from shared memory through 64-bit matrix descriptors.
 *
 *  The CTA is one warpgroup (4 warps, 128 threads) computing one 128×128 tile of C, loaded
 *  exactly as in v0.  Where v0's warps copied 8×8 fragments to registers with `ldmatrix`
 *  and multiplied them 16×8×16 at a time, the warpgroup now hands the tensor cores a
 *  descriptor of each operand's tile and issues `wgmma.mma_async.m64n128k16`: two per k16
 *  step (one per 64-row half of the tile), eight per K slice, no operand registers at all.
 *
 *  wgmma is asynchronous, so it comes with a protocol: `wgmma.fence` before the first MMA
 *  (earlier accesses to the accumulator registers are ordered before it), the MMAs,
 *  `commit_group` to close them into a group, `wait_group 0` to wait for that group.  v1
 *  waits at once, which throws the asynchrony away on purpose: it is v0 with the
 *  instruction swapped.
 *
 *  Why this tile: the freed fragment registers do not buy a larger tile here.  One
 *  warpgroup holding 128×256 would need 256 fp32 accumulators per thread, more than a
 *  thread may have; two warpgroups could hold it, but their 256 threads × ~170 registers
 *  fill the SM's register file, leaving one CTA per SM.  With one stage a CTA idles while
 *  its loads are in flight, and only other resident CTAs fill that time, so v1 keeps v0's
 *  128×128 tile and three CTAs per SM.  docs/notes/performance-log.md has the alternatives
 *  measured.
 */
#include <cuda.h>  // CUtensorMap (header only)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "common/device.h"
#include "common/problem.h"
#include "common/registry.h"
#include "common/status.h"
#include "common/tma.h"
#include "v1_wgmma/matmul.h"

namespace v1_wgmma {

// =========================================================================================
// 1. PTX wrappers (one instruction each, named after the instruction)
// =========================================================================================

/// The shared-state-space address of a pointer into shared memory (`cvta.to.shared`).
__device__ __forceinline__ uint32_t smem_address(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

/// `mbarrier.init.shared::cta.b64` — the barrier's phase completes after `count` arrivals
/// (plus any transaction bytes announced with expect_tx).  PTX ISA §9.7.13.15.9.
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/// `fence.mbarrier_init.release.cluster` — makes a barrier's initialisation visible to the
/// async proxy (TMA) before any copy can complete on it.  PTX ISA §9.7.13.4.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64` — arrives once and announces that `bytes`
/// more bytes of asynchronous copies will complete on this phase.  PTX ISA §9.7.13.15.11.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

/// `mbarrier.try_wait.parity.shared::cta.b64` — true once the phase with parity `parity`
/// has completed (it may suspend the thread for a while first).  PTX ISA §9.7.13.15.16.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

/// `mov.u64 %globaltimer` — a nanosecond clock, used only by the bounded wait below.
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

/// Waits until the phase with parity `parity` of barrier `bar` has completed.  Built with
/// HM_BOUNDED_WAIT (the debug preset), a wait longer than HM_WAIT_TIMEOUT_NS prints which
/// barrier and parity it was stuck on and traps, so a wrong arrival count fails fast
/// instead of hanging the GPU.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity, const char* name) {
#ifdef HM_BOUNDED_WAIT
  uint64_t start = 0;
  while (!mbarrier_try_wait_parity(bar, parity)) {
    const uint64_t now = globaltimer();
    if (start == 0) {
      start = now;
    } else if (now - start > HM_WAIT_TIMEOUT_NS) {
      printf(HM_VERSION ": mbarrier '%s' never completed parity %u (block %d, thread %d)\n",
             name, parity, blockIdx.x, threadIdx.x);
      __trap();
    }
  }
#else
  (void)name;
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
#endif
}

/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes` — TMA
/// copies the box at (`col`, `row`) of `map` to shared memory at `dst`, zero-filling what
/// lies outside the matrix, and counts its bytes on barrier `bar`.  PTX ISA §9.7.9.25.5.1.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int32_t col, int32_t row) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
      "l"(map), "r"(bar), "r"(col), "r"(row)
      : "memory");
}

/// The 64-bit shared-memory matrix descriptor through which wgmma reads an operand (PTX ISA
/// §9.7.15.5.1, "Matrix Descriptor Format"), for a K-major tile that TMA wrote with
/// SWIZZLE_128B: rows of 128 bytes (64 elements of K), 8-row swizzle atoms 1024 bytes apart.
///
///     bits  0-13  start address >> 4
///     bits 16-29  leading-dimension byte offset >> 4: 16 B (not used by a 128B-swizzled
///                 K-major operand, whose k16 slice never leaves one 128-byte row)
///     bits 32-45  stride-dimension byte offset >> 4: 1024 B, from one 8-row atom to the next
///     bits 49-51  base offset: 0, the tile starts on a 1024-byte atom
///     bits 62-63  swizzle mode: 1 = 128-byte swizzle
///
/// Only the address field changes between operands and k16 steps, and it is linear: the
/// descriptor of `addr + bytes` is this descriptor plus `bytes >> 4` (bytes < 2^18), which
/// is how the K loop advances it.  Host and device: the tests check it without a GPU.
__host__ __device__ uint64_t smem_descriptor(uint32_t smem_addr) {
  return uint64_t((smem_addr & 0x3FFFF) >> 4)   // start address
         | uint64_t(16 >> 4) << 16              // leading byte offset
         | uint64_t(1024 >> 4) << 32            // stride byte offset
         | uint64_t(1) << 62;                   // 128-byte swizzle
}

/// `wgmma.fence.sync.aligned` — orders this warpgroup's earlier accesses to the registers a
/// wgmma uses (the accumulators; A too, when it comes from registers) before the wgmma that
/// follow.  It orders no shared memory: TMA's writes are ordered by their mbarrier, and
/// ordinary stores need `fence.proxy.async` before a wgmma reads them.  PTX ISA §9.7.15.6.1.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

/// `wgmma.commit_group.sync.aligned` — closes every wgmma issued since the last commit into
/// one group.  PTX ISA §9.7.15.6.2.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// `wgmma.wait_group.sync.aligned N` — waits until at most N groups of this warp are still
/// in flight.  PTX ISA §9.7.15.6.3.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// Tells the compiler that `acc` may change here, so it keeps every access to the
/// accumulators on its side of the wgmma protocol (an empty asm; no instruction).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&acc)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// The accumulator operands of one wgmma, eight per macro.
#define HM_ACC8(i)                                                                          \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])

#define HM_WGMMA_M64N128K16(TYPE)                                                           \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                          \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {"                     \
      "%0, %1, %2, %3, %4, %5, %6, %7, "                                                    \
      "%8, %9, %10, %11, %12, %13, %14, %15, "                                              \
      "%16, %17, %18, %19, %20, %21, %22, %23, "                                            \
      "%24, %25, %26, %27, %28, %29, %30, %31, "                                            \
      "%32, %33, %34, %35, %36, %37, %38, %39, "                                            \
      "%40, %41, %42, %43, %44, %45, %46, %47, "                                            \
      "%48, %49, %50, %51, %52, %53, %54, %55, "                                            \
      "%56, %57, %58, %59, %60, %61, %62, %63}, "                                           \
      "%64, %65, p, 1, 1, 0, 0;\n}\n"                                                       \
      : HM_ACC8(0), HM_ACC8(8), HM_ACC8(16), HM_ACC8(24),                                   \
        HM_ACC8(32), HM_ACC8(40), HM_ACC8(48), HM_ACC8(56)                                  \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d) : "memory")

#define HM_WGMMA_M64N256K16(TYPE)                                                           \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                         \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"                     \
      "%0, %1, %2, %3, %4, %5, %6, %7, "                                                    \
      "%8, %9, %10, %11, %12, %13, %14, %15, "                                              \
      "%16, %17, %18, %19, %20, %21, %22, %23, "                                            \
      "%24, %25, %26, %27, %28, %29, %30, %31, "                                            \
      "%32, %33, %34, %35, %36, %37, %38, %39, "                                            \
      "%40, %41, %42, %43, %44, %45, %46, %47, "                                            \
      "%48, %49, %50, %51, %52, %53, %54, %55, "                                            \
      "%56, %57, %58, %59, %60, %61, %62, %63, "                                            \
      "%64, %65, %66, %67, %68, %69, %70, %71, "                                            \
      "%72, %73, %74, %75, %76, %77, %78, %79, "                                            \
      "%80, %81, %82, %83, %84, %85, %86, %87, "                                            \
      "%88, %89, %90, %91, %92, %93, %94, %95, "                                            \
      "%96, %97, %98, %99, %100, %101, %102, %103, "                                        \
      "%104, %105, %106, %107, %108, %109, %110, %111, "                                    \
      "%112, %113, %114, %115, %116, %117, %118, %119, "                                    \
      "%120, %121, %122, %123, %124, %125, %126, %127}, "                                   \
      "%128, %129, p, 1, 1, 0, 0;\n}\n"                                                     \
      : HM_ACC8(0), HM_ACC8(8), HM_ACC8(16), HM_ACC8(24),                                   \
        HM_ACC8(32), HM_ACC8(40), HM_ACC8(48), HM_ACC8(56),                                 \
        HM_ACC8(64), HM_ACC8(72), HM_ACC8(80), HM_ACC8(88),                                 \
        HM_ACC8(96), HM_ACC8(104), HM_ACC8(112), HM_ACC8(120)                               \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d) : "memory")

/// `wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}` — d (+)= a·b for a
/// 64×16 A tile and an N×16 B tile, both K-major in shared memory (`desc_a`, `desc_b`),
/// into a 64×N fp32 accumulator spread over the warpgroup: `d` holds this thread's N/2
/// values.  `scale_d` = 0 ignores d's old value.  PTX ISA §9.7.15.5.2.
template <typename T, int N>
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[N / 2], uint64_t desc_a,
                                               uint64_t desc_b, int scale_d) {
  static_assert(N == 128 || N == 256, "the wrappers above cover n128 and n256");
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  if constexpr (N == 128) {
    if constexpr (kBf16) HM_WGMMA_M64N128K16("bf16");
    else HM_WGMMA_M64N128K16("f16");
  } else {
    if constexpr (kBf16) HM_WGMMA_M64N256K16("bf16");
    else HM_WGMMA_M64N256K16("f16");
  }
}

#undef HM_WGMMA_M64N128K16
#undef HM_WGMMA_M64N256K16
#undef HM_ACC8

// =========================================================================================
// 2. Tile configuration
// =========================================================================================

// Tuning overrides: scripts/tune.sh builds variants with, e.g., -DHM_BN=256
// -DHM_WARPGROUPS=2 -DHM_CTAS_PER_SM=1.  The defaults are the configuration measurement chose.
#ifndef HM_BN
#define HM_BN 128
#endif
#ifndef HM_WARPGROUPS
#define HM_WARPGROUPS 1
#endif
#ifndef HM_CTAS_PER_SM
#define HM_CTAS_PER_SM 3
#endif

constexpr int BM = 128;    ///< rows of C per CTA
constexpr int BN = HM_BN;  ///< columns of C per CTA: the N of every wgmma
constexpr int BK = 64;     ///< K per TMA load: one 128-byte swizzle row of 16-bit elements
constexpr int STAGES = 1;  ///< K slices in shared memory at a time

constexpr int kWarpgroups = HM_WARPGROUPS;  ///< each owns BM / kWarpgroups rows of the tile
constexpr int kThreads = 128 * kWarpgroups;  ///< threads per CTA
constexpr int WM = BM / kWarpgroups;        ///< rows of C per warpgroup
constexpr int kMmaM = WM / 64;              ///< m64 wgmma per warpgroup per k16 step
constexpr int kCtasPerSm = HM_CTAS_PER_SM;  ///< register cap: 65536 / (3 · 128) → 168 per thread

constexpr int kTileABytes = BM * BK * 2;  ///< one stage of A, bytes
constexpr int kTileBBytes = BN * BK * 2;  ///< one stage of B, bytes
/// A and B tiles, the barrier, and 1 KiB to round the base up to a swizzle atom.
constexpr int kSmemBytes = STAGES * (kTileABytes + kTileBBytes) + 8 + 1024;

static_assert(BK * 2 == 128, "one K slice is one 128-byte swizzle row of 16-bit elements");
static_assert(kTileABytes % 1024 == 0, "B's tile must start on a 1024-byte swizzle atom");
static_assert(BM <= 256 && BN <= 256, "a TMA box side is at most 256 elements");
static_assert(WM % 64 == 0, "a warpgroup's rows are whole m64 wgmma tiles");

// =========================================================================================
// 3. The kernel
// =========================================================================================

/// Converts two fp32 values to a packed pair of T.
template <typename T>
__device__ __forceinline__ auto pack_pair(float x, float y) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __floats2bfloat162_rn(x, y);
  else return __floats2half2_rn(x, y);
}

/// Stores C[row, col] and C[row, col + 1], clipped to the m×n matrix.  With n even the pair
/// is 4-byte aligned and goes out as one store; otherwise element by element.
template <typename T>
__device__ __forceinline__ void store_pair(T* c, int m, int n, int row, int col, float x,
                                           float y) {
  if (row >= m || col >= n) return;
  T* p = c + int64_t(row) * n + col;
  if (n % 2 == 0) {
    *reinterpret_cast<decltype(pack_pair<T>(x, y))*>(p) = pack_pair<T>(x, y);
  } else {
    p[0] = T(x);
    if (col + 1 < n) p[1] = T(y);
  }
}

/// C[m,n] = A[m,k] · B[n,k]ᵀ, one BM×BN tile of C per CTA, tiles numbered row by row.
template <typename T>
__global__ void __launch_bounds__(kThreads, kCtasPerSm)
    matmul_kernel(const __grid_constant__ CUtensorMap tma_a,
                  const __grid_constant__ CUtensorMap tma_b, T* __restrict__ c, int m, int n,
                  int k, int tiles_n) {
  // Step 1: carve shared memory.  SWIZZLE_128B tiles must start on a 1024-byte boundary.
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem = (smem_address(smem_raw) + 1023) & ~1023u;
  const uint32_t sA = smem;                // [BM][BK] T, 128B-swizzled rows
  const uint32_t sB = sA + kTileABytes;    // [BN][BK] T, 128B-swizzled rows
  const uint32_t full = sB + kTileBBytes;  // mbarrier, see step 2

  const int m0 = int(blockIdx.x / tiles_n) * BM;
  const int n0 = int(blockIdx.x % tiles_n) * BN;

  // Step 2: the barrier.
  // full: 1 arrival (thread 0's arrive.expect_tx) + kTileABytes + kTileBBytes of TMA bytes
  //       per phase; everyone waits on parity kt & 1 for K slice kt.
  if (threadIdx.x == 0) {
    mbarrier_init(full, 1);
    fence_mbarrier_init();
  }
  __syncthreads();

  // Step 3: the descriptors, built once.  This warpgroup's rows of A start WM rows into
  // the tile and its m64 slabs 8 KiB apart; B is one BN-row slab.  A k16 step moves 32 bytes
  // along every 128-byte row, so the K loop only adds 32 >> 4 = 2 per step to the address.
  const int wg = threadIdx.x / 128;
  const uint64_t desc_a = smem_descriptor(sA + wg * WM * BK * 2);
  const uint64_t desc_b = smem_descriptor(sB);
  constexpr uint64_t kSlabA = (64 * BK * 2) >> 4;  // next m64 slab of A, in descriptor units

  float acc[kMmaM][BN / 2] = {};  // this thread's part of the warpgroup's WM×BN tile

  const int k_tiles = (k + BK - 1) / BK;
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Step 4: one thread announces the bytes and issues both copies.  Rows past m or n and
    // columns past k are zero-filled by TMA and still count towards the bytes.
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(full, kTileABytes + kTileBBytes);
      tma_load_2d(sA, &tma_a, full, kt * BK, m0);
      tma_load_2d(sB, &tma_b, full, kt * BK, n0);
    }

    // Step 5: wait for phase kt of the barrier: both tiles are in shared memory.
    mbarrier_wait(full, kt & 1, "full");

    // Step 6: the wgmma protocol.  Fence, then 4 k16 steps × kMmaM m64 slabs of
    // 64×BN×16 MMAs, read straight from shared memory; commit them as one group and wait
    // for it (v1 keeps nothing in flight).
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks)
#pragma unroll
      for (int mt = 0; mt < kMmaM; ++mt)
        wgmma_m64nNk16<T, BN>(acc[mt], desc_a + mt * kSlabA + 2 * ks, desc_b + 2 * ks, 1);
    wgmma_commit_group();
    wgmma_wait_group<0>();
#pragma unroll
    for (int mt = 0; mt < kMmaM; ++mt) fence_accumulators(acc[mt]);

    // Step 7: the single stage is reused, so every warp's MMAs must have finished reading it
    // before thread 0 issues the next copy into it.  wait_group covers this warp only.
    __syncthreads();
  }

  // Step 8: epilogue.  In a 64×BN wgmma accumulator, warp w of the warpgroup holds rows
  // 16w…16w+15, and thread (g = lane/4, t = lane%4) holds, of every 8-column block j, rows g
  // and g+8 at columns 8j+2t and +1: d[4j], d[4j+1] and d[4j+2], d[4j+3].  Convert to T and
  // store, clipped to the matrix.
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kMmaM; ++mt) {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int row = m0 + wg * WM + mt * 64 + warp * 16 + g;
      const int col = n0 + j * 8 + 2 * t;
      store_pair(c, m, n, row, col, acc[mt][4 * j], acc[mt][4 * j + 1]);
      store_pair(c, m, n, row + 8, col, acc[mt][4 * j + 2], acc[mt][4 * j + 3]);
    }
  }
}

// =========================================================================================
// 4. The host launcher
// =========================================================================================

/// This version's launch configuration, listed by `hopper-matmul list` and in the docs.
extern const hm::KernelConfig kConfig = {kThreads, kSmemBytes, BM, BN, BK, STAGES, kCtasPerSm};

/// Raises the kernel's shared-memory limit and launches it for element type T.
template <typename T>
hm::Status launch(const CUtensorMap& tma_a, const CUtensorMap& tma_b, void* c,
                  const hm::Problem& p, int tiles, int tiles_n, cudaStream_t stream) {
  HM_TRY(hm::set_max_dynamic_smem(reinterpret_cast<const void*>(&matmul_kernel<T>), kSmemBytes));
  matmul_kernel<T><<<tiles, kThreads, kSmemBytes, stream>>>(
      tma_a, tma_b, static_cast<T*>(c), int(p.m), int(p.n), int(p.k), tiles_n);
  HM_CUDA_TRY(cudaGetLastError());
  return hm::Status();
}

/// Computes C = A·Bᵀ on `stream`, or returns an error without launching anything.
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  cudaStream_t stream) {
  HM_TRY(hm::validate_launch(p, a, b, c));
  const int64_t tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
  if (tiles_m * tiles_n > INT32_MAX)
    return hm::Status::error(HM_VERSION ": more than 2^31-1 tiles of C");

  CUtensorMap tma_a, tma_b;
  HM_TRY(hm::make_tma_2d({.base = a, .dtype = p.dtype, .rows = uint64_t(p.m),
                          .cols = uint64_t(p.k), .row_stride_bytes = uint64_t(p.k) * 2,
                          .box_rows = BM, .box_cols = BK, .swizzle = hm::Swizzle::b128},
                         &tma_a));
  HM_TRY(hm::make_tma_2d({.base = b, .dtype = p.dtype, .rows = uint64_t(p.n),
                          .cols = uint64_t(p.k), .row_stride_bytes = uint64_t(p.k) * 2,
                          .box_rows = BN, .box_cols = BK, .swizzle = hm::Swizzle::b128},
                         &tma_b));
  const int tiles = int(tiles_m * tiles_n);
  return p.dtype == hm::DType::bf16
             ? launch<__nv_bfloat16>(tma_a, tma_b, c, p, tiles, int(tiles_n), stream)
             : launch<__half>(tma_a, tma_b, c, p, tiles, int(tiles_n), stream);
}

}  // namespace v1_wgmma
