/** @file
 *  v0 — mma.sync.  The first rung: C = A·Bᵀ with TMA loads and the Ampere-era tensor-core
 *  instruction.
 *
 *  One CTA of four warps computes one 128×128 tile of C.  For every 64-wide slice of K,
 *  one thread asks TMA to copy the A and B tiles into 128B-swizzled shared memory; the
 *  copies complete on an mbarrier that every thread waits on.  Each warp then moves 8×8
 *  fragments to registers with `ldmatrix` and multiplies them with `mma.sync.m16n8k16`
 *  into fp32 accumulators that stay in registers for the whole K loop.
 *
 *  One stage: the next slice is requested only after every warp has finished reading the
 *  current one, so inside a CTA loading and computing never overlap.  Three CTAs share an
 *  SM (the register cap below makes room for them), so one CTA's loads hide behind the
 *  others' math; that is all the latency hiding v0 has.
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
#include "v0_mma_sync/matmul.h"

namespace v0_mma_sync {

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
      printf("v0_mma_sync: mbarrier '%s' never completed parity %u (block %d, thread %d)\n", name,
             parity, blockIdx.x, threadIdx.x);
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

/// `ldmatrix.sync.aligned.m8n8.x4.shared.b16` — four 8×8 matrices of 16-bit elements from
/// shared memory; lanes 8j…8j+7 give the row addresses of matrix j, and each thread gets
/// row lane/4, columns 2·(lane%4) and +1 of every matrix.  PTX ISA §9.7.14.5.15.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&frag)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(frag[0]), "=r"(frag[1]), "=r"(frag[2]), "=r"(frag[3])
               : "r"(addr));
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32` — d += a·b for a 16×16
/// A fragment, a 16×8 B fragment and a 16×8 fp32 accumulator.  PTX ISA §9.7.14.5.14.
template <typename T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
        " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
        " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// =========================================================================================
// 2. Tile configuration
// =========================================================================================

constexpr int BM = 128;  ///< rows of C per CTA
constexpr int BN = 128;  ///< columns of C per CTA
constexpr int BK = 64;   ///< K per TMA load: one 128-byte swizzle row of 16-bit elements
constexpr int STAGES = 1;  ///< K slices in shared memory at a time

constexpr int kWarpsM = 2;  ///< warps along M
constexpr int kWarpsN = 2;  ///< warps along N
constexpr int kThreads = 32 * kWarpsM * kWarpsN;  ///< threads per CTA
constexpr int WM = BM / kWarpsM;  ///< 64 rows of C per warp
constexpr int WN = BN / kWarpsN;  ///< 64 columns of C per warp
constexpr int kMmaTilesM = WM / 16;  ///< m16 tiles per warp
constexpr int kMmaTilesN = WN / 8;   ///< n8 tiles per warp
constexpr int kCtasPerSm = 3;  ///< register cap: 65536 / (3 · 128) → at most 168 per thread

constexpr int kTileABytes = BM * BK * 2;  ///< one stage of A, bytes
constexpr int kTileBBytes = BN * BK * 2;  ///< one stage of B, bytes
/// A and B tiles, the barrier, and 1 KiB to round the base up to a swizzle atom.
constexpr int kSmemBytes = STAGES * (kTileABytes + kTileBBytes) + 8 + 1024;

static_assert(BK * 2 == 128, "one K slice is one 128-byte swizzle row of 16-bit elements");
static_assert(kTileABytes % 1024 == 0, "B's tile must start on a 1024-byte swizzle atom");
static_assert(BM <= 256 && BN <= 256, "a TMA box side is at most 256 elements");
static_assert(kMmaTilesN % 2 == 0, "B fragments are loaded two n8 tiles at a time");

/// Byte offset of 16-byte chunk `chunk` of row `row` in a tile written by TMA with
/// SWIZZLE_128B: within each 8-row, 1024-byte atom, chunk c of row r sits at c ^ (r % 8).
/// Consecutive rows therefore put the same chunk in different banks, and ldmatrix's eight
/// row reads are conflict-free.
__device__ __forceinline__ uint32_t swizzle_128b(int row, int chunk) {
  return uint32_t(row * 128 + ((chunk ^ (row & 7)) << 4));
}

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
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;

  // Step 2: the barrier.
  // full: 1 arrival (thread 0's arrive.expect_tx) + kTileABytes + kTileBBytes of TMA bytes
  //       per phase; everyone waits on parity kt & 1 for K slice kt.
  if (threadIdx.x == 0) {
    mbarrier_init(full, 1);
    fence_mbarrier_init();
  }
  __syncthreads();

  // Step 3: this lane's ldmatrix rows (see ldmatrix_x4).  For A's m16×k16 fragment the
  // four matrices are (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
  // (rows 8-15, k 8-15) = mma's a0…a3.  For B, stored [n][k], they are (n 0-7, k 0-7),
  // (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) = b0, b1 of two n8 tiles.
  const int a_row = warp_m * WM + (lane & 15);
  const int a_half = lane >> 4;  // which 8-wide half of the k16 step
  const int b_row = warp_n * WN + (lane & 7) + (lane >> 4) * 8;
  const int b_half = (lane >> 3) & 1;

  float acc[kMmaTilesM][kMmaTilesN][4] = {};  // this thread's part of the warp's 64×64 tile

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

    // Step 6: four k16 steps; per step 4 A fragments, 4 double B fragments, 32 MMAs.
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      uint32_t a_frag[kMmaTilesM][4];
#pragma unroll
      for (int mt = 0; mt < kMmaTilesM; ++mt)
        ldmatrix_x4(a_frag[mt], sA + swizzle_128b(a_row + mt * 16, 2 * ks + a_half));
#pragma unroll
      for (int np = 0; np < kMmaTilesN / 2; ++np) {
        uint32_t b_frag[4];
        ldmatrix_x4(b_frag, sB + swizzle_128b(b_row + np * 16, 2 * ks + b_half));
#pragma unroll
        for (int mt = 0; mt < kMmaTilesM; ++mt) {
          mma_m16n8k16<T>(acc[mt][2 * np], a_frag[mt], b_frag[0], b_frag[1]);
          mma_m16n8k16<T>(acc[mt][2 * np + 1], a_frag[mt], b_frag[2], b_frag[3]);
        }
      }
    }

    // Step 7: the single stage is reused, so every warp must be done reading it before
    // thread 0 issues the next copy into it.
    __syncthreads();
  }

  // Step 8: epilogue.  Thread (g = lane/4, t = lane%4) holds, of each 16×8 MMA tile, rows g
  // and g+8 at columns 2t and 2t+1; convert to T and store, clipped to the matrix.
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kMmaTilesM; ++mt) {
#pragma unroll
    for (int nt = 0; nt < kMmaTilesN; ++nt) {
      const int row = m0 + warp_m * WM + mt * 16 + g;
      const int col = n0 + warp_n * WN + nt * 8 + 2 * t;
      store_pair(c, m, n, row, col, acc[mt][nt][0], acc[mt][nt][1]);
      store_pair(c, m, n, row + 8, col, acc[mt][nt][2], acc[mt][nt][3]);
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
    return hm::Status::error("v0_mma_sync: more than 2^31-1 tiles of C");

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

}  // namespace v0_mma_sync
