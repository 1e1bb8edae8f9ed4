/** @file
 *  v7 — clusters and TMA multicast.  Adds over v6: CTAs work in pairs (thread-block
 *  clusters) that load B once for both.
 *
 *  The two CTAs of a cluster take vertically adjacent tiles, which need the same BN rows of
 *  B.  Each loads its own A and half of that B, and TMA multicast writes the half into both
 *  CTAs' shared memory: B crosses from L2 once per pair, and a CTA pulls 32 KiB per K slice
 *  instead of 48.  A stage is free again only when the consumers of both CTAs have released
 *  it, since the partner's producer writes into it too, so the consumers arrive on each
 *  other's empty barriers (`mapa` + remote `mbarrier.arrive`).  The CTAs of a cluster start
 *  and end together: a cluster barrier replaces the block barrier before the roles split,
 *  and a second one keeps each CTA's shared memory alive until its partner is done with it.
 *
 *  Pairs pay only where the consumers store C themselves (n % 8 != 0).  Behind v6's TMA-store
 *  epilogue they measured no faster than single CTAs and up to 8% slower on small squares,
 *  so there the launcher takes clusters of one CTA (kCtas = 1), for which the kernel
 *  compiles to v6's: no cluster instruction, no multicast.
 */
#include <cuda.h>  // CUtensorMap (header only)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "common/device.h"
#include "common/problem.h"
#include "common/registry.h"
#include "common/sms.h"
#include "common/status.h"
#include "common/tile_counter.h"
#include "common/tma.h"
#include "v7_multicast/matmul.h"

namespace v7_multicast {

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

/// `bar.sync id, count` — a barrier of `count` threads (whole warps) on hardware barrier
/// `id`; barrier 0 is __syncthreads'.  PTX ISA §9.7.13.1.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`
/// `.multicast::cluster` — the same copy, delivered to every CTA of the cluster named in
/// `cta_mask`: the box lands at offset `dst` of each one's shared memory and counts its bytes
/// on the barrier at offset `bar` of each one.  PTX ISA §9.7.9.25.5.1.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map,
                                                      uint32_t bar, int32_t col, int32_t row,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
      "l"(map), "r"(bar), "r"(col), "r"(row), "h"(cta_mask)
      : "memory");
}

/// `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group` — TMA copies the box at offset
/// `src` of shared memory to (`col`, `row`) of `map`, leaving out what lies outside the
/// matrix.  It reads shared memory asynchronously: see bulk_wait_group_read.
/// PTX ISA §9.7.9.25.5.2.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int32_t col,
                                             int32_t row) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map),
      "r"(src), "r"(col), "r"(row)
      : "memory");
}

/// `cp.async.bulk.commit_group` — closes this thread's bulk copies issued since the last
/// commit into one group.  PTX ISA §9.7.9.25.4.2.
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// `cp.async.bulk.wait_group.read N` — waits until at most N of this thread's bulk groups
/// are still reading their shared-memory source.  PTX ISA §9.7.9.25.4.3.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/// `cp.async.bulk.wait_group N` — waits until at most N of this thread's bulk groups are
/// still in flight, their writes to global memory included.  PTX ISA §9.7.9.25.4.3.
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

/// `fence.proxy.async.shared::cta` — makes this thread's ordinary shared-memory writes
/// visible to the async proxy (a TMA store that reads them next).  PTX ISA §9.7.13.4.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// `st.async.shared::cluster.mbarrier::complete_tx::bytes.u32` — stores a 32-bit word into
/// the shared memory of another CTA of the cluster and counts its 4 bytes on that CTA's
/// barrier `remote_bar`, as a TMA copy counts its bytes (both addresses from
/// mapa_shared_cluster; a launch without clusters may not use it): who waits on the barrier
/// sees the word.  PTX ISA, data movement instructions: st.async.
__device__ __forceinline__ void st_async(uint32_t remote_addr, uint32_t value,
                                         uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];"
               ::"r"(remote_addr), "r"(value), "r"(remote_bar) : "memory");
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

/// `mov.u32 %cluster_ctarank` — this CTA's rank inside its cluster.  PTX ISA, special
/// registers: %cluster_ctarank.
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

/// `mapa.shared::cluster.u32` — the address, in the cluster's shared window, of the variable
/// at shared-memory offset `addr` of the CTA with rank `rank`.  PTX ISA, data movement
/// instructions: mapa.
__device__ __forceinline__ uint32_t mapa_shared_cluster(uint32_t addr, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}

/// `mbarrier.arrive.shared::cluster.b64` — one arrival on a barrier that may live in another
/// CTA of the cluster (an address from mapa_shared_cluster).  Default (CTA-scope release)
/// semantics: what it orders is this warp's finished wgmma reads of a stage, and the
/// `.release.cluster` form, a cluster-wide fence on every arrival, made the clustered kernel
/// 1.7× slower when it was first measured.
/// PTX ISA §9.7.13.15.13.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote_bar) : "memory");
}

/// `mbarrier.arrive.release.cluster.shared::cluster.b64` — as mbarrier_arrive_cluster(), and
/// this thread's earlier reads of shared memory are done, for every CTA of the cluster,
/// before the arrival: the CTA that waits on the barrier may then overwrite what they read.
/// Once per tile, so its cluster-wide fence costs nothing measurable.  PTX ISA: mbarrier.
__device__ __forceinline__ void mbarrier_arrive_release_cluster(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar)
               : "memory");
}

/// `barrier.cluster.arrive.release` — this thread has reached the cluster barrier; its
/// earlier writes (barrier initialisation included) are released to the cluster.
/// PTX ISA, parallel synchronization instructions: barrier.cluster.
__device__ __forceinline__ void barrier_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}

/// `barrier.cluster.wait.acquire` — waits until every thread of every CTA of the cluster has
/// arrived at the cluster barrier.  PTX ISA: barrier.cluster.
__device__ __forceinline__ void barrier_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
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
#ifndef HM_CLUSTER_M
#define HM_CLUSTER_M 2
#endif
#ifndef HM_STORE_BUFFERS
#define HM_STORE_BUFFERS 2
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
/// CTAs per cluster where the launcher takes clusters (see matmul()), on vertically adjacent
/// tiles: they need the same BN rows of B, so each loads BN / kClusterM of them and
/// multicasts its share to all.
constexpr int kClusterM = HM_CLUSTER_M;
/// The epilogue's staging buffers, kStoreBuffers per consumer, each one TMA box of C:
/// WM rows × kStoreCols columns, 128B-swizzled.  A consumer sends its BN columns through
/// them in BN / kStoreCols chunks, taking the buffers in turn.
constexpr int kStoreCols = 64;  ///< columns per chunk: one 128-byte swizzled row
constexpr int kStoreBuffers = HM_STORE_BUFFERS;  ///< buffers per consumer, taken in turn
constexpr int kStoreBytes = WM * kStoreCols * 2;  ///< one buffer, one TMA store box [WM][64]
/// Hardware barriers (bar.sync), 0 being __syncthreads': the two consumers meet at one once
/// per K slice, and each consumer has its own for the epilogue.
constexpr int kBarConsumers = 1;
constexpr int kBarEpilogue = 2;  ///< + consumer index

constexpr int kTileABytes = BM * BK * 2;  ///< one stage of A, bytes: one TMA box [BM][64]
constexpr int kTileBBytes = BN * BK * 2;  ///< one stage of B, bytes: a TMA box per CTA
/// STAGES A and B tiles, the consumers' store buffers, a full and an empty barrier per
/// stage, the tile hand-off (two slots and two barriers for each: 40 bytes), and
/// 1 KiB to round the base up to a swizzle atom.
constexpr int kSmemBytes = STAGES * (kTileABytes + kTileBBytes + 16) + 40 +
                           kConsumers * kStoreBuffers * kStoreBytes + 1024;

static_assert(BK * 2 == 128, "a stage is one 128-byte swizzle row wide");
static_assert(kTileABytes % 1024 == 0, "B's tile must start on a 1024-byte swizzle atom");
static_assert(BM <= 256 && BN <= 256, "a TMA box side is at most 256 elements");
static_assert(WM == 64, "a consumer's rows are one m64 wgmma tile");
static_assert(STAGES >= 3, "a consumer holds two stages at a time; the producer needs a third");
static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= 65536,
              "the warpgroups' registers must fit the SM's register file");
static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0,
              "setmaxnreg counts are multiples of 8");
static_assert(GROUP_M >= 1, "a group holds at least one tile row");
static_assert(kStoreCols * 2 == 128, "a chunk is one 128-byte swizzle row wide");
static_assert((BN / kStoreCols) % kStoreBuffers == 0, "each tile starts on the first buffer");
static_assert(kClusterM == 1 || kClusterM == 2 || kClusterM == 4, "a portable cluster shape");
static_assert(GROUP_M % kClusterM == 0, "a group holds whole clusters of tile rows");
static_assert(BN / kClusterM * BK * 2 % 1024 == 0, "a CTA's share of B starts on an atom");

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
/// The tile CTA `rank` of a cluster computes for cluster tile `tile`.  Cluster tiles are
/// `cluster_m` tile rows tall and walked in the grouped order of tile_coord(), `group_m` /
/// `cluster_m` cluster rows per group; CTA r takes the r-th tile row of each.  Where tiles_m
/// is not a multiple of cluster_m, the last cluster row has CTAs whose tile row is tiles_m
/// or more: they load zeros and store nothing.  Host and device: the tests check it without
/// a GPU.
__host__ __device__ TileCoord cluster_tile_coord(int tile, int rank, int tiles_m, int tiles_n,
                                                 int group_m, int cluster_m) {
  const int cluster_rows = (tiles_m + cluster_m - 1) / cluster_m;
  const TileCoord tc = tile_coord(tile, cluster_rows, tiles_n, group_m / cluster_m);
  return {tc.m * cluster_m + rank, tc.n};
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
/// In clusters of kCtas CTAs, rank 0 takes cluster tiles for its cluster, and the CTA of
/// rank r computes the r-th BM rows of each; kCtas = 1 is v6's kernel: no cluster instruction.
/// With kTmaStore, C leaves through `tma_c`; without, through `c`.
template <typename T, bool kTmaStore, int kCtas>
__global__ void __launch_bounds__(kThreads, 1)
    matmul_kernel(const __grid_constant__ CUtensorMap tma_a,
                  const __grid_constant__ CUtensorMap tma_b,
                  const __grid_constant__ CUtensorMap tma_c, T* __restrict__ c, int m, int n,
                  int k, int tiles_m, int tiles_n, uint32_t* __restrict__ counter) {
  constexpr int kShareB = BN / kCtas;  // rows of B one CTA loads for its whole cluster
  constexpr int kShareBBytes = kShareB * BK * 2;  // one TMA box of B: [kShareB][64]

  // Step 1: carve shared memory.  SWIZZLE_128B tiles must start on a 1024-byte boundary.
  // Every CTA of the cluster runs this same code, so the offsets below are the same in all
  // of them: a multicast copy or a remote arrival names them by these offsets.
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem = (smem_address(smem_raw) + 1023) & ~1023u;
  const uint32_t sA = smem;                          // [STAGES][BM][64] T, 128B-swizzled
  const uint32_t sB = sA + STAGES * kTileABytes;     // [STAGES][BN][64] T, 128B-swizzled
  const uint32_t sC = sB + STAGES * kTileBBytes;     // [kConsumers][kStoreBuffers][WM][64] T
  const uint32_t full = sC + kConsumers * kStoreBuffers * kStoreBytes;  // [STAGES] mbarriers
  const uint32_t empty = full + 8 * STAGES;          // [STAGES] mbarriers, see step 2
  const uint32_t tile_full = empty + 8 * STAGES;     // [2] mbarriers, see step 2
  const uint32_t tile_empty = tile_full + 16;        // [2] mbarriers, see step 2
  const uint32_t tile_slot = tile_empty + 16;        // [2] int: the tiles handed over

  // Step 2: the barriers, two per stage, initialised once for every tile this CTA computes.
  // `it` below counts K iterations over all of this CTA's tiles; it picks stage and parity.
  // full[s]:  1 arrival (the producer's arrive.expect_tx) + kTileABytes + kTileBBytes of TMA
  //           bytes per fill.  Iteration it lives in stage it % STAGES; consumers wait on
  //           parity (it / STAGES) & 1, the count of that stage's earlier fills, mod 2.
  //           In a cluster the bytes are this CTA's A and B in kCtas shares, one multicast
  //           by each CTA of the cluster.
  // empty[s]: one arrival per consumer warp (4 · kConsumers), each once its wgmma reading
  //           the stage have retired.  Before filling iteration it the producer waits on
  //           parity ((it / STAGES) & 1) ^ 1: the phase the consumers completed when they
  //           released iteration it - STAGES.  On the first pass that is the phase "before"
  //           a fresh barrier, which counts as complete, so the producer does not wait.
  //           In a cluster, one per consumer warp of every CTA (4 · kConsumers · kCtas):
  //           this CTA's producer writes its share of B into all of them.
  // The producer claims each tile and hands it to the consumers in a ring of two slots;
  // `j` counts this CTA's claims, and claim j lives in slot j % 2, with parity (j / 2) & 1
  // and its complement as above.
  // In a cluster, rank 0's producer claims each cluster tile for the whole cluster and hands
  // it to every CTA's producer and consumers.
  // tile_full[s]:  1 arrival, the producer's, once it has written the slot.
  //                In a cluster, this CTA's producer's arrive.expect_tx and the 4 bytes that
  //                rank 0's st.async writes into the slot, which count on the barrier as TMA
  //                bytes do (st.async needs a cluster: kCtas = 1 keeps the plain store).
  // tile_empty[s]: one arrival per consumer warp (4 · kConsumers), by the lane that read
  //                the slot for the warp.
  //                In a cluster only rank 0's is used, and every CTA's consumer warps and
  //                producer arrive on it: (4 · kConsumers + 1) · kCtas.
  constexpr int kTileReaders = kCtas == 1 ? 4 * kConsumers : (4 * kConsumers + 1) * kCtas;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, 4 * kConsumers * kCtas);
    }
    for (int s = 0; s < 2; ++s) {
      mbarrier_init(tile_full + 8 * s, 1);
      mbarrier_init(tile_empty + 8 * s, kTileReaders);
    }
    fence_mbarrier_init();
  }
  // The only barrier of all threads before the roles split, cluster-wide in a cluster: no
  // CTA may multicast into, or arrive on, a partner whose barriers are not initialised yet.
  if constexpr (kCtas > 1) {
    barrier_cluster_arrive();
    barrier_cluster_wait();
  } else {
    __syncthreads();
  }

  const int wg = threadIdx.x / 128;
  // Every thread leaves through here: no CTA may exit while TMA still reads its store
  // buffers, or while a partner may still arrive on its barriers.
  const auto leave_cluster = [&] {
    if (kTmaStore && wg > 0 && threadIdx.x % 128 == 0) bulk_wait_group<0>();
    if constexpr (kCtas > 1) {
      barrier_cluster_arrive();
      barrier_cluster_wait();
    }
  };
  const int k_tiles = (k + BK - 1) / BK;
  const int rank = kCtas > 1 ? int(cluster_ctarank()) : 0;  // our BM rows of a cluster tile
  const int clusters = gridDim.x / kCtas;        // clusters are kCtas consecutive CTAs
  const int cluster_rows = (tiles_m + kCtas - 1) / kCtas;
  const int tiles = cluster_rows * tiles_n;      // cluster tiles: kCtas·BM × BN each

  if (wg == 0) {
    // Step 3: the producer.  Its warpgroup gives registers back; then one elected thread of
    // its first warp claims tiles until none are left, hands each to the consumers, and
    // fills the ring for every K slice of it, each stage as soon as the consumers have
    // released it.  The next tile is claimed as soon as this one is handed over, so the
    // atomic's round trip hides behind this tile's loads.  Rows past m or n and columns past
    // k are zero-filled by TMA and still count as bytes.
    // In a cluster, rank 0 claims the cluster tiles and sends each to every CTA; each CTA
    // loads its own A and its share of B, which lands in every CTA, so a stage is free only
    // once the consumers of every CTA have released it; and a whole tile past m, which the
    // last cluster of an odd tiles_m computes, is zeros too and never stored.
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      uint32_t it = 0;  // unsigned, as in the consumers (step 5)
      int next = rank == 0 ? claim_tile(counter, tiles, clusters) : 0;
      for (uint32_t j = 0;; ++j) {
        const int slot = j % 2;
        int tile = next;
        if constexpr (kCtas == 1) {
          mbarrier_wait(tile_empty + 8 * slot, ((j / 2) & 1) ^ 1, "tile_empty");
          st_shared_b32(tile_slot + 4 * slot, uint32_t(tile));
          mbarrier_arrive(tile_full + 8 * slot);
        } else {
          mbarrier_arrive_expect_tx(tile_full + 8 * slot, 4);
          if (rank == 0) {
            mbarrier_wait(tile_empty + 8 * slot, ((j / 2) & 1) ^ 1, "tile_empty");
            for (int r = 0; r < kCtas; ++r)
              st_async(mapa_shared_cluster(tile_slot + 4 * slot, r), uint32_t(tile),
                       mapa_shared_cluster(tile_full + 8 * slot, r));
          }
          mbarrier_wait(tile_full + 8 * slot, (j / 2) & 1, "tile_full");
          tile = int(ld_shared_b32(tile_slot + 4 * slot));
          mbarrier_arrive_release_cluster(mapa_shared_cluster(tile_empty + 8 * slot, 0));
        }
        if (tile >= tiles) break;
        if (rank == 0) next = claim_tile(counter, tiles, clusters);
        const TileCoord tc =
            cluster_tile_coord(tile, rank, tiles_m, tiles_n, GROUP_M, kCtas);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % STAGES;
          mbarrier_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1, "empty");
          mbarrier_arrive_expect_tx(full + 8 * s, kTileABytes + kTileBBytes);
          tma_load_2d(sA + s * kTileABytes, &tma_a, full + 8 * s, kt * BK, tc.m * BM);
          const uint32_t share = sB + s * kTileBBytes + rank * kShareBBytes;
          if constexpr (kCtas == 1)
            tma_load_2d(share, &tma_b, full + 8 * s, kt * BK, tc.n * BN);
          else
            tma_load_2d_multicast(share, &tma_b, full + 8 * s, kt * BK,
                                  tc.n * BN + rank * kShareB, (1u << kCtas) - 1);
        }
      }
    }
    leave_cluster();
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
  // A stage is free once every consumer warp of every CTA in the cluster is done with it:
  // lane 0 of each warp arrives on that stage's empty barrier in each CTA.
  const auto release = [&](int stage) {
    if (lane != 0) return;
    if constexpr (kCtas == 1) mbarrier_arrive(empty + 8 * stage);
    else
      for (int r = 0; r < kCtas; ++r)
        mbarrier_arrive_cluster(mapa_shared_cluster(empty + 8 * stage, r));
  };
  uint32_t it = 0;
  for (uint32_t j = 0;; ++j) {
    // Step 6a: the next tile, from the producer.  Lane 0 of each warp reads the slot, frees
    // it and passes the tile to the other lanes with a shuffle: an arrival releases the
    // arriving thread's own accesses, so the thread that frees the slot is the one that
    // read it (read by every lane and freed by lane 0 after a __syncwarp, racecheck
    // reported the slot as a race).
    // In a cluster rank 0's producer writes the tile into every CTA's slot (st.async),
    // and lane 0 frees it on rank 0's tile_empty.
    const int slot = j % 2;
    mbarrier_wait(tile_full + 8 * slot, (j / 2) & 1, "tile_full");
    uint32_t claimed = 0;
    if (lane == 0) {
      claimed = ld_shared_b32(tile_slot + 4 * slot);
      if constexpr (kCtas == 1) mbarrier_arrive(tile_empty + 8 * slot);
      else mbarrier_arrive_release_cluster(mapa_shared_cluster(tile_empty + 8 * slot, 0));
    }
    const int tile = int(__shfl_sync(0xffffffffu, claimed, 0));
    if (tile >= tiles) break;
    const TileCoord tc = cluster_tile_coord(tile, rank, tiles_m, tiles_n, GROUP_M, kCtas);
    float acc[BN / 2];  // this thread's part of the warpgroup's WM×BN tile; no zero-fill

    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      // Step 6: wait for the tile's K slice kt, the CTA's iteration it.
      const int stage = it % STAGES;
      mbarrier_wait(full + 8 * stage, (it / STAGES) & 1, "full");

      // Step 7: one fence per slice, then the slice's wgmma.  The tile's first MMA runs
      // with scale-d = 0 and overwrites whatever the accumulators held; the rest accumulate.
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < BK / 16; ++ks)
        wgmma_m64n256k16<T>(acc, a_descriptor(stage, ks), b_descriptor(stage, ks),
                            (kt > 0 || ks > 0) ? 1 : 0);
      wgmma_commit_group();

      // Step 8: keep this slice in flight; wait only for the previous slice's group, then
      // release the stage it read.  The newest group is left running.
      wgmma_wait_group<1>();
      if (kt > 0) release((it - 1) % STAGES);

      // Step 9: the two consumers meet once per slice.  With a group left in flight nothing
      // else keeps them at one pace: one can run a slice ahead, and a stage, released only
      // by both, then stays held for three slices instead of two.
      named_barrier_sync(kBarConsumers, 128 * kConsumers);
    }

    // Step 10: the one full wait: the last slice's group, then its stage.
    wgmma_wait_group<0>();
    fence_accumulators(acc);
    release((it - 1) % STAGES);

    // Step 11: the epilogue, while the producer already loads the next tile.
    if constexpr (kTmaStore) {
      // Through shared memory, kStoreCols columns at a time: wait until TMA has read the
      // buffer this chunk takes (its store from kStoreBuffers chunks ago), write the chunk
      // into it 128B-swizzled like a TMA box (so the 8 rows a warp writes at once fall in
      // 8 different 16-byte bank groups), and let one thread hand it to TMA.  Nobody waits
      // for the store itself.
      const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
      for (int chunk = 0; chunk < BN / kStoreCols; ++chunk) {
        const uint32_t buffer =
            sC + (consumer * kStoreBuffers + chunk % kStoreBuffers) * kStoreBytes;
        if (leader) bulk_wait_group_read<kStoreBuffers - 1>();
        named_barrier_sync(kBarEpilogue + consumer, 128);
        const int row = warp * 16 + g;  // and row + 8: the same swizzle, row % 8 is equal
#pragma unroll
        for (int jj = 0; jj < kStoreCols / 8; ++jj) {
          const int j = chunk * (kStoreCols / 8) + jj;  // n8 block of the accumulators
          const uint32_t at = buffer + (jj ^ (row % 8)) * 16 + 4 * t;  // 16-byte unit jj
          const auto lo = pack_pair<T>(acc[4 * j], acc[4 * j + 1]);
          const auto hi = pack_pair<T>(acc[4 * j + 2], acc[4 * j + 3]);
          st_shared_b32(at + row * 128, *reinterpret_cast<const uint32_t*>(&lo));
          st_shared_b32(at + (row + 8) * 128, *reinterpret_cast<const uint32_t*>(&hi));
        }
        fence_proxy_async_shared();
        named_barrier_sync(kBarEpilogue + consumer, 128);
        if (leader) {
          tma_store_2d(&tma_c, buffer, tc.n * BN + chunk * kStoreCols, tc.m * BM + consumer * WM);
          bulk_commit_group();
        }
      }
    } else {
      // C's rows are not 16-byte multiples apart (n % 8 != 0): TMA cannot address them,
      // and the consumers store C themselves, as in v5.
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int row = tc.m * BM + consumer * WM + warp * 16 + g;
        const int col = tc.n * BN + j * 8 + 2 * t;
        store_pair(c, m, n, row, col, acc[4 * j], acc[4 * j + 1]);
        store_pair(c, m, n, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
      }
    }
  }
  leave_cluster();
}

// =========================================================================================
// 4. The host launcher
// =========================================================================================

/// This version's launch configuration, listed by `hopper-matmul list` and in the docs.
extern const hm::KernelConfig kConfig = {kThreads, kSmemBytes, BM, BN, BK, STAGES, 1, kClusterM};

/// Raises the kernel's shared-memory limit and launches it for element type T.
/// In clusters of kCtas CTAs: as many as fit on the GPU at once (or one per cluster tile).
template <typename T, bool kTmaStore, int kCtas>
hm::Status launch(const CUtensorMap& tma_a, const CUtensorMap& tma_b, const CUtensorMap& tma_c,
                  void* c, const hm::Problem& p, int tiles_m, int tiles_n, cudaStream_t stream) {
  const void* kernel = reinterpret_cast<const void*>(&matmul_kernel<T, kTmaStore, kCtas>);
  HM_TRY(hm::set_max_dynamic_smem(kernel, kSmemBytes));
  int device = 0, sms = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  HM_TRY(hm::stream_sm_count(stream, &sms));  // fewer than the GPU's in a green context
  uint32_t* counter = nullptr;  // the stream's, 0 between launches
  HM_TRY(hm::tile_counter(stream, &counter));
  if constexpr (kCtas == 1) {  // v6's launch: one CTA per SM, or one per tile
    const int grid = int(std::min<int64_t>(sms, int64_t(tiles_m) * tiles_n));
    matmul_kernel<T, kTmaStore, 1><<<grid, kThreads, kSmemBytes, stream>>>(
        tma_a, tma_b, tma_c, static_cast<T*>(c), int(p.m), int(p.n), int(p.k), tiles_m, tiles_n,
        counter);
    HM_CUDA_TRY(cudaGetLastError());
    return hm::Status();
  }

  cudaLaunchAttribute cluster_shape = {};
  cluster_shape.id = cudaLaunchAttributeClusterDimension;
  cluster_shape.val.clusterDim = {unsigned(kCtas), 1, 1};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(sms / kCtas * kCtas));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.attrs = &cluster_shape;
  config.numAttrs = 1;
  // A cluster's CTAs must sit in one GPC, so on a GPU whose GPCs have odd SM counts fewer
  // than sms / kCtas clusters fit at once: ask, rather than assume (once per device and
  // thread: the question costs more than a small launch).
  thread_local int asked_device = -1, clusters = 0;
  if (asked_device != device) {
    HM_CUDA_TRY(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    asked_device = device;
  }
  // The clusters that fit on the stream's SMs (the occupancy query knows only the GPU's).
  const int fit = std::min(clusters, sms / kCtas);
  if (fit < 1)
    return hm::Status::error(HM_VERSION ": not even one cluster of " +
                             std::to_string(kCtas) + " CTAs fits on this GPU");
  const int64_t cluster_tiles = int64_t((tiles_m + kCtas - 1) / kCtas) * tiles_n;
  config.gridDim = dim3(unsigned(kCtas * std::min<int64_t>(fit, cluster_tiles)));
  HM_CUDA_TRY(cudaLaunchKernelEx(&config, &matmul_kernel<T, kTmaStore, kCtas>, tma_a, tma_b, tma_c,
                                 static_cast<T*>(c), int(p.m), int(p.n), int(p.k), tiles_m,
                                 tiles_n, counter));
  return hm::Status();
}

/// Computes C = A·Bᵀ on `stream`, or returns an error without launching anything.
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  cudaStream_t stream) {
  HM_TRY(hm::validate_launch(p, a, b, c));
  const int64_t tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
  if (tiles_m * tiles_n > INT32_MAX)
    return hm::Status::error(HM_VERSION ": more than 2^31-1 tiles of C");

  // TMA can store C only when its rows are a multiple of 16 bytes apart (n % 8 == 0);
  // otherwise the consumers store it themselves, as in v5.
  const bool tma_store = p.n % 8 == 0;
  // Clusters pay where the consumers store C themselves, and where the rows of A and B are
  // not whole 128-byte lines (k % 64 != 0): then most rows of a box straddle two lines and
  // L2 answers far more requests, which halving B's by multicast repays (the chapter's
  // Performance section).  With TMA stores and whole lines, pairs measured level with v6 at
  // 8192³ launch by launch, ~1% behind it sustained and 3–8% behind on squares of 512 to
  // 4096, so those shapes run as v6: clusters of one CTA, which loads all BN rows of B.
  const bool whole_lines = p.k % 64 == 0;
  const uint32_t ctas = tma_store && whole_lines ? 1 : kClusterM;

  CUtensorMap tma_a, tma_b, tma_c = {};
  HM_TRY(hm::make_tma_2d({.base = a, .dtype = p.dtype, .rows = uint64_t(p.m),
                          .cols = uint64_t(p.k), .row_stride_bytes = uint64_t(p.k) * 2,
                          .box_rows = BM, .box_cols = BK, .swizzle = hm::Swizzle::b128},
                         &tma_a));
  HM_TRY(hm::make_tma_2d({.base = b, .dtype = p.dtype, .rows = uint64_t(p.n),
                          .cols = uint64_t(p.k), .row_stride_bytes = uint64_t(p.k) * 2,
                          .box_rows = BN / ctas, .box_cols = BK, .swizzle = hm::Swizzle::b128},
                         &tma_b));
  if (tma_store)
    HM_TRY(hm::make_tma_2d({.base = c, .dtype = p.dtype, .rows = uint64_t(p.m),
                            .cols = uint64_t(p.n), .row_stride_bytes = uint64_t(p.n) * 2,
                            .box_rows = WM, .box_cols = 64, .swizzle = hm::Swizzle::b128},
                           &tma_c));
  const int tm = int(tiles_m), tn = int(tiles_n);
  if (p.dtype == hm::DType::bf16)
    return !tma_store ? launch<__nv_bfloat16, false, kClusterM>(tma_a, tma_b, tma_c, c, p, tm, tn,
                                                               stream)
           : ctas == 1 ? launch<__nv_bfloat16, true, 1>(tma_a, tma_b, tma_c, c, p, tm, tn, stream)
                       : launch<__nv_bfloat16, true, kClusterM>(tma_a, tma_b, tma_c, c, p, tm, tn,
                                                               stream);
  return !tma_store ? launch<__half, false, kClusterM>(tma_a, tma_b, tma_c, c, p, tm, tn, stream)
         : ctas == 1 ? launch<__half, true, 1>(tma_a, tma_b, tma_c, c, p, tm, tn, stream)
                     : launch<__half, true, kClusterM>(tma_a, tma_b, tma_c, c, p, tm, tn, stream);
}

}  // namespace v7_multicast
