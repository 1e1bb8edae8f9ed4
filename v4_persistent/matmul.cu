/** @file
 *  v4 — persistent kernel.  Adds over v3: one CTA per SM for the whole problem, walking
 *  the output tiles in an L2-friendly grouped order, with barriers that live across tiles.
 *
 *  v3 launched one CTA per tile, so every tile paid for a CTA's start (barrier set-up,
 *  `setmaxnreg`, an empty pipeline to fill) and its epilogue ran with no loads in flight.
 *  v4 launches as many CTAs as its stream has SMs (a green context may give it fewer than
 *  the GPU has; fewer CTAs when there are fewer tiles).  Each CTA's producer takes the next
 *  tile from a counter in global memory, one atomic add per tile, and hands it to the
 *  consumers through shared memory.  A fixed share per CTA (b, b + grid, …) would be as
 *  fast on an idle GPU, but when another kernel holds some SMs, the CTAs that find none
 *  start late and their share then runs after all the others: with 12 SMs taken, v4 took
 *  ×1.8 longer at 8192³ where cuBLAS took ×1.1 (docs/notes/performance-log.md).  With the
 *  counter a late CTA finds the tiles taken.  The producer moves on to the next tile's K
 *  slices as soon as a stage is free, so while the consumers run one tile's epilogue the
 *  next tile's loads are already landing.
 *
 *  The barriers are initialised once, before the tile loop.  Stage and parity come from one
 *  counter of K iterations that runs on across tiles, so the ring simply continues where
 *  the last tile left it, whatever the number of K slices per tile.
 *
 *  Tiles are visited in groups of GROUP_M tile rows, column by column inside a group: the
 *  CTAs running at any moment share a few rows of A and a few columns of B, which stay in
 *  L2, instead of all sweeping the whole of B.  tile_coord() is a plain function, tested on
 *  the host for every tile being visited exactly once.
 */
#include <cuda.h>  // CUtensorMap (header only)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "common/device.h"
#include "common/problem.h"
#include "common/registry.h"
#include "common/sms.h"
#include "common/status.h"
#include "common/tile_counter.h"
#include "common/tma.h"
#include "v4_persistent/matmul.h"

namespace v4_persistent {

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

/// `mbarrier.arrive.shared::cta.b64` — one arrival on the barrier's current phase.
/// PTX ISA §9.7.13.15.13.
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
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

/// `atom.global.add.u32` — adds `value` to a word of global memory and returns what it
/// held before, as one indivisible step among every thread of the GPU.  PTX ISA, parallel
/// synchronization instructions: atom.
__device__ __forceinline__ uint32_t atom_add_global(uint32_t* addr, uint32_t value) {
  uint32_t old;
  asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(value)
               : "memory");
  return old;
}

/// `st.relaxed.gpu.global.u32` — stores a word of global memory that other CTAs may read
/// with atomics.  PTX ISA, data movement instructions: st.
__device__ __forceinline__ void st_relaxed_gpu(uint32_t* addr, uint32_t value) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(addr), "r"(value) : "memory");
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

/// `st.shared.b32` — one 32-bit store to shared memory.
__device__ __forceinline__ void st_shared_b32(uint32_t addr, uint32_t value) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(value) : "memory");
}

/// `ld.shared.b32` — one 32-bit load from shared memory.
__device__ __forceinline__ uint32_t ld_shared_b32(uint32_t addr) {
  uint32_t value;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

/// `elect.sync` — true in exactly one active lane of the warp.  PTX ISA §9.7.13.13.
__device__ __forceinline__ bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n"
      "  .reg .b32 lane;\n"
      "  .reg .pred p;\n"
      "  elect.sync lane|p, 0xffffffff;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(elected));
  return elected != 0;
}

/// `setmaxnreg.dec.sync.aligned.u32` — this warpgroup gives registers back, down to N per
/// thread.  PTX ISA §9.7.17.1.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

/// `setmaxnreg.inc.sync.aligned.u32` — this warpgroup takes registers, up to N per thread,
/// from those given back.  PTX ISA §9.7.17.1.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
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

/// `wgmma.mma_async.sync.aligned.m64n256k16.f32.{bf16,f16}.{bf16,f16}` — d (+)= a·b for a
/// 64×16 A tile and a 256×16 B tile, both K-major in shared memory (`desc_a`, `desc_b`),
/// into a 64×256 fp32 accumulator spread over the warpgroup: `d` holds this thread's 128
/// values.  `scale_d` = 0 ignores d's old value.  PTX ISA §9.7.15.5.2.
template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a,
                                                 uint64_t desc_b, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) HM_WGMMA_M64N256K16("bf16");
  else HM_WGMMA_M64N256K16("f16");
}

#undef HM_WGMMA_M64N256K16
#undef HM_ACC8

// =========================================================================================
// 2. Tile configuration
// =========================================================================================

// Tuning overrides: scripts/tune.sh builds variants with, e.g., -DHM_STAGES=3 -DHM_GROUP_M=16.
// The defaults are the configuration measurement chose (docs/notes/performance-log.md).
#ifndef HM_STAGES
#define HM_STAGES 4
#endif
#ifndef HM_GROUP_M
#define HM_GROUP_M 8
#endif

constexpr int BM = 128;  ///< rows of C per CTA
constexpr int BN = 256;  ///< columns of C per CTA: the N of every wgmma
constexpr int BK = 64;   ///< K per stage: one 128-byte swizzle row of 16-bit elements
constexpr int STAGES = HM_STAGES;  ///< K slices in the shared-memory ring

constexpr int kConsumers = 2;                    ///< consumer warpgroups, 64 rows each
constexpr int kThreads = 128 * (1 + kConsumers);  ///< warpgroup 0 produces, 1…kConsumers consume
constexpr int WM = BM / kConsumers;               ///< rows of C per consumer warpgroup
constexpr int kProducerRegs = 40;   ///< per producer thread after setmaxnreg.dec
constexpr int kConsumerRegs = 232;  ///< per consumer thread after setmaxnreg.inc
constexpr int GROUP_M = HM_GROUP_M;  ///< tile rows per group of the tile order

constexpr int kTileABytes = BM * BK * 2;  ///< one stage of A, bytes: one TMA box [BM][64]
constexpr int kTileBBytes = BN * BK * 2;  ///< one stage of B, bytes: one TMA box [BN][64]
/// STAGES A and B tiles, a full and an empty barrier per stage, the tile hand-off (two
/// slots and two barriers for each: 40 bytes), and 1 KiB to round the base up to a
/// swizzle atom.
constexpr int kSmemBytes = STAGES * (kTileABytes + kTileBBytes + 16) + 40 + 1024;

static_assert(BK * 2 == 128, "a stage is one 128-byte swizzle row wide");
static_assert(kTileABytes % 1024 == 0, "B's tile must start on a 1024-byte swizzle atom");
static_assert(BM <= 256 && BN <= 256, "a TMA box side is at most 256 elements");
static_assert(WM == 64, "a consumer's rows are one m64 wgmma tile");
static_assert(STAGES >= 2, "a ring of one stage is v1");
static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= 65536,
              "the warpgroups' registers must fit the SM's register file");
static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0,
              "setmaxnreg counts are multiples of 8");
static_assert(GROUP_M >= 1, "a group holds at least one tile row");

/// The `tile`-th tile of the grouped order over a tiles_m × tiles_n grid: tile rows are
/// taken GROUP_M at a time, and inside a group the tiles go down a column before moving
/// right.  The last group holds the tile rows left over (fewer than `group_m` when tiles_m
/// does not divide), so every tile in [0, tiles_m · tiles_n) is a real tile, visited once.
/// Host and device: the tests check it without a GPU.
__host__ __device__ TileCoord tile_coord(int tile, int tiles_m, int tiles_n, int group_m) {
  const int group = tile / (group_m * tiles_n);
  const int first_m = group * group_m;
  const int rows = min(group_m, tiles_m - first_m);  // tile rows in this group
  const int in_group = tile - first_m * tiles_n;
  return {first_m + in_group % rows, in_group / rows};
}
static_assert(kSmemBytes <= 227 * 1024, "more shared memory than one CTA may have");

/// Takes the next tile of the grouped order from the launch's counter, which starts at 0:
/// the first `tiles` claims of the launch get tiles 0, 1, … in the order they are made, and
/// the last claim of each of the `claimers` (CTAs) gets `tiles` or more, "none left".  So
/// there are exactly tiles + claimers claims, and the one that gets the last number sets
/// the counter back to 0 for the next launch on the stream (which cannot start before
/// this one has ended).
__device__ __forceinline__ int claim_tile(uint32_t* counter, int tiles, int claimers) {
  const uint32_t claim = atom_add_global(counter, 1);
  if (claim == uint32_t(tiles + claimers - 1)) st_relaxed_gpu(counter, 0);
  return int(claim);
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

/// C[m,n] = A[m,k] · B[n,k]ᵀ; each CTA takes tiles of the grouped order from `counter`
/// (claim_tile()) until none are left.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    matmul_kernel(const __grid_constant__ CUtensorMap tma_a,
                  const __grid_constant__ CUtensorMap tma_b, T* __restrict__ c, int m, int n,
                  int k, int tiles_m, int tiles_n, uint32_t* __restrict__ counter) {
  // Step 1: carve shared memory.  SWIZZLE_128B tiles must start on a 1024-byte boundary.
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem = (smem_address(smem_raw) + 1023) & ~1023u;
  const uint32_t sA = smem;                          // [STAGES][BM][64] T, 128B-swizzled
  const uint32_t sB = sA + STAGES * kTileABytes;     // [STAGES][BN][64] T, 128B-swizzled
  const uint32_t full = sB + STAGES * kTileBBytes;   // [STAGES] mbarriers, see step 2
  const uint32_t empty = full + 8 * STAGES;          // [STAGES] mbarriers, see step 2
  const uint32_t tile_full = empty + 8 * STAGES;     // [2] mbarriers, see step 2
  const uint32_t tile_empty = tile_full + 16;        // [2] mbarriers, see step 2
  const uint32_t tile_slot = tile_empty + 16;        // [2] int: the tiles handed over

  // Step 2: the barriers, two per stage, initialised once for every tile this CTA computes.
  // `it` below counts K iterations over all of this CTA's tiles; it picks stage and parity.
  // full[s]:  1 arrival (the producer's arrive.expect_tx) + kTileABytes + kTileBBytes of TMA
  //           bytes per fill.  Iteration it lives in stage it % STAGES; consumers wait on
  //           parity (it / STAGES) & 1, the count of that stage's earlier fills, mod 2.
  // empty[s]: one arrival per consumer warp (4 · kConsumers), each once its wgmma reading
  //           the stage have retired.  Before filling iteration it the producer waits on
  //           parity ((it / STAGES) & 1) ^ 1: the phase the consumers completed when they
  //           released iteration it - STAGES.  On the first pass that is the phase "before"
  //           a fresh barrier, which counts as complete, so the producer does not wait.
  // The producer claims each tile and hands it to the consumers in a ring of two slots;
  // `j` counts this CTA's claims, and claim j lives in slot j % 2, with parity (j / 2) & 1
  // and its complement as above.
  // tile_full[s]:  1 arrival, the producer's, once it has written the slot.
  // tile_empty[s]: one arrival per consumer warp (4 · kConsumers), by the lane that read
  //                the slot for the warp.
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, 4 * kConsumers);
    }
    for (int s = 0; s < 2; ++s) {
      mbarrier_init(tile_full + 8 * s, 1);
      mbarrier_init(tile_empty + 8 * s, 4 * kConsumers);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the only block-wide barrier: before the roles split

  const int wg = threadIdx.x / 128;
  const int k_tiles = (k + BK - 1) / BK;
  const int tiles = tiles_m * tiles_n;

  if (wg == 0) {
    // Step 3: the producer.  Its warpgroup gives registers back; then one elected thread of
    // its first warp claims tiles until none are left, hands each to the consumers, and
    // fills the ring for every K slice of it, each stage as soon as the consumers have
    // released it.  The next tile is claimed as soon as this one is handed over, so the
    // atomic's round trip hides behind this tile's loads.  Rows past m or n and columns past
    // k are zero-filled by TMA and still count as bytes.
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      uint32_t it = 0;  // unsigned, as in the consumers (step 5)
      int next = claim_tile(counter, tiles, gridDim.x);
      for (uint32_t j = 0;; ++j) {
        const int tile = next, slot = j % 2;
        mbarrier_wait(tile_empty + 8 * slot, ((j / 2) & 1) ^ 1, "tile_empty");
        st_shared_b32(tile_slot + 4 * slot, uint32_t(tile));
        mbarrier_arrive(tile_full + 8 * slot);
        if (tile >= tiles) break;
        next = claim_tile(counter, tiles, gridDim.x);
        const TileCoord tc = tile_coord(tile, tiles_m, tiles_n, GROUP_M);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % STAGES;
          mbarrier_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1, "empty");
          mbarrier_arrive_expect_tx(full + 8 * s, kTileABytes + kTileBBytes);
          tma_load_2d(sA + s * kTileABytes, &tma_a, full + 8 * s, kt * BK, tc.m * BM);
          tma_load_2d(sB + s * kTileBBytes, &tma_b, full + 8 * s, kt * BK, tc.n * BN);
        }
      }
    }
    return;
  }

  // Step 4: the consumers take the registers the producer gave back.
  setmaxnreg_inc<kConsumerRegs>();
  const int consumer = wg - 1;  // which WM rows of the tile this warpgroup owns

  // Step 5: the descriptors of stage 0, built once: this consumer's rows of A start WM rows
  // into the tile, and B is one BN-row slab.  A descriptor is linear in the address
  // (smem_descriptor), so a stage adds its bytes >> 4, and a k16 step, 32 bytes along every
  // 128-byte row, adds 2.
  const uint64_t desc_a = smem_descriptor(sA + consumer * WM * BK * 2);
  const uint64_t desc_b = smem_descriptor(sB);
  constexpr uint64_t kStageA = kTileABytes >> 4;  // next stage of A, in descriptor units
  constexpr uint64_t kStageB = kTileBBytes >> 4;  // next stage of B, in descriptor units
  // The descriptors of k16 step ks of stage `stage`.
  const auto a_descriptor = [=](int stage, int ks) { return desc_a + stage * kStageA + 2 * ks; };
  const auto b_descriptor = [=](int stage, int ks) { return desc_b + stage * kStageB + 2 * ks; };

  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  // `it` is unsigned so that it % STAGES and it / STAGES are a mask and a shift and the
  // compiler knows stage lies in [0, STAGES): with a signed counter it emits a sign fix-up
  // and a 64-bit multiply for stage * kStageB between the full-barrier wait and the first
  // wgmma, and that costs ~3% of the K loop (per-tile clock64 at 8192³: 1051 against 1021
  // cycles per K slice; docs/notes/performance-log.md).  A problem that fits in memory gives
  // a CTA under 10^8 K slices, so the counter does not wrap.
  uint32_t it = 0;
  for (uint32_t j = 0;; ++j) {
    // Step 6a: the next tile, from the producer.  Lane 0 of each warp reads the slot, frees
    // it and passes the tile to the other lanes with a shuffle: an arrival releases the
    // arriving thread's own accesses, so the thread that frees the slot is the one that
    // read it (read by every lane and freed by lane 0 after a __syncwarp, racecheck
    // reported the slot as a race).
    const int slot = j % 2;
    mbarrier_wait(tile_full + 8 * slot, (j / 2) & 1, "tile_full");
    uint32_t claimed = 0;
    if (lane == 0) {
      claimed = ld_shared_b32(tile_slot + 4 * slot);
      mbarrier_arrive(tile_empty + 8 * slot);
    }
    const int tile = int(__shfl_sync(0xffffffffu, claimed, 0));
    if (tile >= tiles) break;
    const TileCoord tc = tile_coord(tile, tiles_m, tiles_n, GROUP_M);
    float acc[BN / 2] = {};  // this thread's part of the warpgroup's WM×BN tile

    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      // Step 6: wait for the tile's K slice kt, the CTA's iteration it.
      const int stage = it % STAGES;
      mbarrier_wait(full + 8 * stage, (it / STAGES) & 1, "full");

      // Step 7: the wgmma protocol, as in v3.
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < BK / 16; ++ks)
        wgmma_m64n256k16<T>(acc, a_descriptor(stage, ks), b_descriptor(stage, ks), 1);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      fence_accumulators(acc);

      // Step 8: release the stage, as in v3.
      if (lane == 0) mbarrier_arrive(empty + 8 * stage);
    }

    // Step 9: epilogue, as in v3, while the producer already loads the next tile.
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int row = tc.m * BM + consumer * WM + warp * 16 + g;
      const int col = tc.n * BN + j * 8 + 2 * t;
      store_pair(c, m, n, row, col, acc[4 * j], acc[4 * j + 1]);
      store_pair(c, m, n, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

// =========================================================================================
// 4. The host launcher
// =========================================================================================

/// This version's launch configuration, listed by `hopper-matmul list` and in the docs.
extern const hm::KernelConfig kConfig = {kThreads, kSmemBytes, BM, BN, BK, STAGES, 1};

/// Raises the kernel's shared-memory limit and launches it for element type T.
template <typename T>
hm::Status launch(const CUtensorMap& tma_a, const CUtensorMap& tma_b, void* c,
                  const hm::Problem& p, int tiles_m, int tiles_n, cudaStream_t stream) {
  HM_TRY(hm::set_max_dynamic_smem(reinterpret_cast<const void*>(&matmul_kernel<T>), kSmemBytes));
  // One CTA per SM, or one per tile when there are fewer tiles than SMs.
  int sms = 0;
  HM_TRY(hm::stream_sm_count(stream, &sms));  // fewer than the GPU's in a green context
  const int grid = int(std::min<int64_t>(sms, int64_t(tiles_m) * tiles_n));
  uint32_t* counter = nullptr;  // the stream's, 0 between launches
  HM_TRY(hm::tile_counter(stream, &counter));
  matmul_kernel<T><<<grid, kThreads, kSmemBytes, stream>>>(
      tma_a, tma_b, static_cast<T*>(c), int(p.m), int(p.n), int(p.k), tiles_m, tiles_n,
      counter);
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
  return p.dtype == hm::DType::bf16
             ? launch<__nv_bfloat16>(tma_a, tma_b, c, p, int(tiles_m), int(tiles_n), stream)
             : launch<__half>(tma_a, tma_b, c, p, int(tiles_m), int(tiles_n), stream);
}

}  // namespace v4_persistent
