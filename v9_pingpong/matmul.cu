/** @file
 *  v8 — stream-K.  Adds over v7: the persistent clusters share the total work, tiles × K
 *  slices, instead of whole tiles.
 *
 *  With whole tiles, a problem whose tile count is just above a multiple of the SM count
 *  leaves most of the GPU idle in its last wave, and one with fewer tiles than SMs (a decode
 *  shape: M ≤ 128, one tile row) leaves most of it idle throughout.  v8 can take the tiles
 *  of the partial wave (and of the last full one), lay their K slices end to end, and cut
 *  that line into one stream-K unit per cluster (or, with more units than tiles, into the
 *  same number of units per tile: split-K); the other tiles stay whole, data-parallel,
 *  after it.  A unit may start or end in the middle of a tile.  The unit that computes a
 *  tile's first K slice owns the tile: it waits for the units that computed the rest, adds
 *  their partial accumulators from a global workspace in the order of the units (so the sum
 *  is the same on every run), and stores C.  A unit that computes the rest of a tile writes
 *  its accumulators to its own slot of the workspace and raises a flag; that is the first
 *  thing it does, before any wait, so no unit waits on one that waits.  make_schedule()
 *  chooses stream-K only where its model predicts a gain; with whole tiles the launcher runs
 *  a kernel built without the stream-K code.  For small M (choose_tiling()) the kernel
 *  computes Cᵀ = B·Aᵀ in narrow tiles, so that the weights run along the tiles' 128 rows.
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
#include <utility>

#include "common/device.h"
#include "common/problem.h"
#include "common/registry.h"
#include "common/sms.h"
#include "common/status.h"
#include "common/stream_memory.h"
#include "common/tile_counter.h"
#include "common/tma.h"
#include "v9_pingpong/matmul.h"

namespace v9_pingpong {

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

/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`
/// `.L2::cache_hint` — tma_load_2d() whose reads of global memory carry an L2 cache policy
/// (createpolicy_evict_first()).  PTX ISA §9.7.9.25.5.1.
__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const CUtensorMap* map,
                                                 uint32_t bar, int32_t col, int32_t row,
                                                 uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
      "l"(map), "r"(bar), "r"(col), "r"(row), "l"(policy)
      : "memory");
}

/// `createpolicy.fractional.L2::evict_first.b64` — an L2 cache policy under which every line
/// that an access carrying it brings into L2 is among the first to leave it.  PTX ISA, Data
/// Movement and Conversion Instructions: createpolicy.
__device__ __forceinline__ uint64_t createpolicy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

/// `bar.sync id, count` — a barrier of `count` threads (whole warps) on hardware barrier
/// `id`; barrier 0 is __syncthreads'.  PTX ISA §9.7.13.1.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

/// `bar.arrive id, count` — arrives on hardware barrier `id` of `count` threads without
/// waiting: the barrier completes for the threads that wait on it (bar.sync) once `count`
/// threads, these included, have arrived.  PTX ISA: bar.
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
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

/// `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16` — the warp stores four 8×8 matrices of
/// 16-bit elements, each transposed: register i of a thread holds two elements of matrix i
/// in the mma layout (row lane / 4, columns 2·(lane % 4) and + 1), and lane 8i + r gives the
/// address of the 16 bytes that receive column r of matrix i.  PTX ISA §9.7.14.5.16.
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1,
                                                  uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

/// `st.shared.v4.b32` with four zeros — clears 16 bytes of shared memory.
__device__ __forceinline__ void st_shared_v4_zero(uint32_t addr) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};" ::"r"(addr), "r"(0) : "memory");
}

/// `st.shared.v4.f32` — stores four floats, 16 bytes, to shared memory.
__device__ __forceinline__ void st_shared_v4_f32(uint32_t addr, float4 v) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(v.x), "f"(v.y),
               "f"(v.z), "f"(v.w)
               : "memory");
}

/// `ld.shared.v4.f32` — loads four floats, 16 bytes, from shared memory.
__device__ __forceinline__ float4 ld_shared_v4_f32(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
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

/// `ld.acquire.gpu.global.u32` — reads a flag that another CTA raises with red_release_gpu():
/// what that CTA wrote before raising it is visible after this load.  PTX ISA, data
/// movement instructions: ld (and the memory consistency model).
__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* flag) {
  uint32_t value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

/// `red.release.gpu.global.add.u32` — adds to a flag in global memory, after every write of
/// this thread, and every write it has synchronized with, is visible at GPU scope.
/// PTX ISA, parallel synchronization instructions: red.
__device__ __forceinline__ void red_release_gpu(uint32_t* flag, uint32_t value) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

/// `st.global.cg.v4.f32` — stores 16 bytes to global memory, cached in L2 only: a partial
/// accumulator that another SM reads next.  PTX ISA, data movement instructions: st.
__device__ __forceinline__ void st_global_cg(float4* p, float4 v) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y),
               "f"(v.z), "f"(v.w)
               : "memory");
}

/// `ld.global.cg.v4.f32` — loads 16 bytes from global memory through L2 only, never from a
/// stale line of this SM's L1.  PTX ISA, data movement instructions: ld.
__device__ __forceinline__ float4 ld_global_cg(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p)
               : "memory");
  return v;
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

/// `wgmma.mma_async.sync.aligned.m64n128k16.f32.{bf16,f16}.{bf16,f16}` — the same for a
/// 128×16 B tile: `d` holds this thread's 64 values of a 64×128 accumulator.
template <typename T>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a,
                                                 uint64_t desc_b, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) HM_WGMMA_M64N128K16("bf16");
  else HM_WGMMA_M64N128K16("f16");
}

#define HM_WGMMA_M64N192K16(TYPE)                                                           \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                                          \
      "wgmma.mma_async.sync.aligned.m64n192k16.f32." TYPE "." TYPE " {"                     \
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
      "%88, %89, %90, %91, %92, %93, %94, %95}, "                                           \
      "%96, %97, p, 1, 1, 0, 0;\n}\n"                                                       \
      : HM_ACC8(0), HM_ACC8(8), HM_ACC8(16), HM_ACC8(24), HM_ACC8(32), HM_ACC8(40),         \
        HM_ACC8(48), HM_ACC8(56), HM_ACC8(64), HM_ACC8(72), HM_ACC8(80), HM_ACC8(88)        \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d) : "memory")

/// `wgmma.mma_async.sync.aligned.m64n192k16.f32.{bf16,f16}.{bf16,f16}` — the same for a
/// 192×16 B tile: `d` holds this thread's 96 values of a 64×192 accumulator.
template <typename T>
__device__ __forceinline__ void wgmma_m64n192k16(float (&d)[96], uint64_t desc_a,
                                                 uint64_t desc_b, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) HM_WGMMA_M64N192K16("bf16");
  else HM_WGMMA_M64N192K16("f16");
}

#define HM_WGMMA_M64N64K16(TYPE)                                                            \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                          \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {"                      \
      "%0, %1, %2, %3, %4, %5, %6, %7, "                                                    \
      "%8, %9, %10, %11, %12, %13, %14, %15, "                                              \
      "%16, %17, %18, %19, %20, %21, %22, %23, "                                            \
      "%24, %25, %26, %27, %28, %29, %30, %31}, "                                           \
      "%32, %33, p, 1, 1, 0, 0;\n}\n"                                                       \
      : HM_ACC8(0), HM_ACC8(8), HM_ACC8(16), HM_ACC8(24)                                    \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d) : "memory")

/// `wgmma.mma_async.sync.aligned.m64n64k16.f32.{bf16,f16}.{bf16,f16}` — the same for a
/// 64×16 B tile: `d` holds this thread's 32 values of a 64×64 accumulator.
template <typename T>
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t desc_a,
                                                uint64_t desc_b, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) HM_WGMMA_M64N64K16("bf16");
  else HM_WGMMA_M64N64K16("f16");
}

#define HM_WGMMA_M64N32K16(TYPE)                                                            \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                          \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {"                      \
      "%0, %1, %2, %3, %4, %5, %6, %7, "                                                    \
      "%8, %9, %10, %11, %12, %13, %14, %15}, "                                             \
      "%16, %17, p, 1, 1, 0, 0;\n}\n"                                                       \
      : HM_ACC8(0), HM_ACC8(8)                                                              \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d) : "memory")

/// `wgmma.mma_async.sync.aligned.m64n32k16.f32.{bf16,f16}.{bf16,f16}` — the same for a
/// 32×16 B tile: `d` holds this thread's 16 values of a 64×32 accumulator.
template <typename T>
__device__ __forceinline__ void wgmma_m64n32k16(float (&d)[16], uint64_t desc_a,
                                                uint64_t desc_b, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) HM_WGMMA_M64N32K16("bf16");
  else HM_WGMMA_M64N32K16("f16");
}

#define HM_WGMMA_M64N16K16(TYPE)                                                            \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                          \
      "wgmma.mma_async.sync.aligned.m64n16k16.f32." TYPE "." TYPE " {"                      \
      "%0, %1, %2, %3, %4, %5, %6, %7}, "                                                   \
      "%8, %9, p, 1, 1, 0, 0;\n}\n"                                                         \
      : HM_ACC8(0)                                                                          \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d) : "memory")

/// `wgmma.mma_async.sync.aligned.m64n16k16.f32.{bf16,f16}.{bf16,f16}` — the same for a
/// 16×16 B tile: `d` holds this thread's 8 values of a 64×16 accumulator.
template <typename T>
__device__ __forceinline__ void wgmma_m64n16k16(float (&d)[8], uint64_t desc_a,
                                                uint64_t desc_b, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) HM_WGMMA_M64N16K16("bf16");
  else HM_WGMMA_M64N16K16("f16");
}

/// The wgmma of a tile `N` columns wide (BN, the small-M kernel's 16, 32, 64 or 128, or
/// kPingBN): one of the six.
template <typename T, int N>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], uint64_t desc_a,
                                             uint64_t desc_b, int scale_d) {
  if constexpr (N == 256) wgmma_m64n256k16<T>(d, desc_a, desc_b, scale_d);
  else if constexpr (N == 192) wgmma_m64n192k16<T>(d, desc_a, desc_b, scale_d);
  else if constexpr (N == 128) wgmma_m64n128k16<T>(d, desc_a, desc_b, scale_d);
  else if constexpr (N == 32) wgmma_m64n32k16<T>(d, desc_a, desc_b, scale_d);
  else if constexpr (N == 16) wgmma_m64n16k16<T>(d, desc_a, desc_b, scale_d);
  else wgmma_m64n64k16<T>(d, desc_a, desc_b, scale_d);
}

#undef HM_WGMMA_M64N16K16
#undef HM_WGMMA_M64N32K16
#undef HM_WGMMA_M64N64K16
#undef HM_WGMMA_M64N128K16
#undef HM_WGMMA_M64N192K16
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
#ifndef HM_STREAM_K_MIN_SLICES
#define HM_STREAM_K_MIN_SLICES 8
#endif
#ifndef HM_STREAM_K_FIXUP
#define HM_STREAM_K_FIXUP 50
#endif
#ifndef HM_STREAM_K_MIN_GAIN
#define HM_STREAM_K_MIN_GAIN 2
#endif
#ifndef HM_STORE_BUFFERS
#define HM_STORE_BUFFERS 2
#endif
#ifndef HM_SMALL_M_TMA_STORE
#define HM_SMALL_M_TMA_STORE 1
#endif
#ifndef HM_SMALL_M_64_ROWS
#define HM_SMALL_M_64_ROWS 1
#endif
#ifndef HM_SMALL_M_SPLIT
#define HM_SMALL_M_SPLIT 1
#endif
#ifndef HM_SMALL_M_NARROW
#define HM_SMALL_M_NARROW 1
#endif
#ifndef HM_SMALL_M_RING_KIB
#define HM_SMALL_M_RING_KIB 192
#endif
#ifndef HM_STREAM_K_SLICE_COST
#define HM_STREAM_K_SLICE_COST 24
#endif
#ifndef HM_STREAM_K_CROSS
#define HM_STREAM_K_CROSS 1
#endif
#ifndef HM_SMALL_M_EVICT_FIRST
#define HM_SMALL_M_EVICT_FIRST 1
#endif
#ifndef HM_STREAM_K_OWNER_EXTRA
#define HM_STREAM_K_OWNER_EXTRA 4
#endif

constexpr int BM = 128;  ///< rows of C per CTA
constexpr int BN = 256;  ///< columns of C per CTA: the N of every wgmma
constexpr int BK = 64;   ///< K per stage: one 128-byte swizzle row of 16-bit elements
constexpr int STAGES = HM_STAGES;  ///< K slices in the shared-memory ring
/// Small M (decode shapes; the rule is choose_tiling()'s): the kernel computes Cᵀ = B·Aᵀ,
/// so that N, thousands of rows of weights, runs along the BM side of the tiles, each
/// weight is read from HBM once, and A, a few rows that every CTA reads, stays in L2.  M
/// runs along the tile's BN side: 16, 32, 64, 128 or 256 columns, the narrowest that holds
/// it.  Its ring takes as many stages as fit in this many bytes (with 128-row tiles 10 of 16
/// columns, 9 of 32, 8 of 64, 6 of 128, 4 of 256; 19, 16 and 12 with 64-row tiles): a decode
/// shape is memory-bound, and what keeps HBM busy is bytes in flight.
constexpr int kSmallMRingBytes = HM_SMALL_M_RING_KIB * 1024;
/// The small-M kernel stores C through shared memory and TMA too, where C's rows allow it
/// (n % 8 == 0): stmatrix's transposing stores turn a chunk of its tile of Cᵀ into a box of
/// C.  Off (0), each thread stores its values of C one by one, as without TMA.
constexpr bool kSmallMTmaStore = HM_SMALL_M_TMA_STORE;
/// The small-M kernel loads the weights, each read once, with an L2 policy that makes them
/// the first lines to leave L2 (createpolicy_evict_first()).  A decode launch streams more
/// weights than L2 holds: with the default policy they evict the tokens, the partial sums
/// and what the next launch starts from.  Measured on the H200 (docs/notes/performance-log.md):
/// each CTA reaches its first copy 0.18 µs sooner; launch by launch, v8's decode launches
/// run 5% shorter at M <= 64 and up to 7% at M = 128 and 256; sustained, the decode shapes
/// gain about 1% in the geometric mean (128×5120×5120 from 4% slower to level, by sweep).
/// Off (0), the default policy.
constexpr bool kSmallMEvictFirst = HM_SMALL_M_EVICT_FIRST;
/// The rows of the small-M kernel's tile of B that TMA fills, for a tile `bn` columns wide
/// and `m` rows of A: M rounded up to 8, at most bn.  Rows past M would be zeros that TMA
/// writes, and at M = 1 writing 63 rows of zeros per slice measured slower than reading the
/// weights.  Host (the tensor map's box) and device (the bytes a stage expects).
__host__ __device__ constexpr int small_m_b_rows(int bn, int m) {
  return (m + 7) / 8 * 8 < bn ? (m + 7) / 8 * 8 : bn;
}
/// Where 64-row tiles of Cᵀ fit on the SMs in one wave and K is short (choose_tiling()),
/// the small-M kernel takes them: one consumer warpgroup per CTA and every tile whole, no
/// partial sums to hand over, where 128-row tiles would fill fewer than half of the SMs or
/// split their K among CTAs.  Off (0), its tiles are always 128 rows.
constexpr bool kSmallM64Rows = HM_SMALL_M_64_ROWS;
/// Tiles of Cᵀ 16 or 32 columns wide for M ≤ 16 or 32 (wgmma m64n16k16, m64n32k16): a stage
/// holds that many rows of the tokens instead of 64, so the ring holds more stages of
/// weights.  Off (0), the narrowest tile is 64 columns.
constexpr bool kSmallMNarrow = HM_SMALL_M_NARROW;
/// The longest K for 64-row tiles up to 128 columns wide (half that at 256): measured, they
/// win at K = 5120 and lose at 13824 (docs/notes/performance-log.md).
constexpr int64_t kSmallM64RowsK = 8192;
/// A 64-row tile of Cᵀ up to 64 columns wide, with TMA stores, gets two consumer warpgroups
/// that take its K slices in turn, even and odd, and the producer fills their two stages
/// together; at the end consumer 1 hands its sums to consumer 0 through the store buffers.
/// One consumer issues a slice only once the slice before it has retired; two keep two in
/// flight, as cuBLAS's 384-thread kernels for these shapes do (the performance log: 2–10%
/// faster at M ≤ 64, N = K = 5120, sustained).  Off (0), one consumer per 64-row tile.
constexpr bool kSmallMSplit = HM_SMALL_M_SPLIT;

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
constexpr int kBarHandOver = 4;  ///< the split consumers' hand-over of sums (step 10)
/// Whether the kernel of a `bm` × `bn` tile splits each tile's K slices between two
/// consumers (kSmallMSplit): consumer 1's sums, 128 threads × bn / 2 floats, must fit in
/// consumer 0's store buffers.
__host__ __device__ constexpr bool split_consumers(int bm, int bn, bool transposed,
                                                   bool tma_store) {
  return kSmallMSplit && transposed && tma_store && bm == WM && bn <= 64;
}
/// The consumer warpgroups of the kernel of a `bm` × `bn` tile: one per WM rows, or two.
__host__ __device__ constexpr int consumer_groups(int bm, int bn, bool transposed,
                                                  bool tma_store) {
  return split_consumers(bm, bn, transposed, tma_store) ? 2 : bm / WM;
}
static_assert(kStoreBuffers * kStoreBytes >= 128 * 64 / 2 * 4, "room for the split's sums");
constexpr int kBarTurn = 5;  ///< + consumer index: the ping-pong kernel's turns (step P5)

constexpr int kTileABytes = BM * BK * 2;  ///< one stage of A, bytes: one TMA box [BM][64]
/// The stages of the ring of a kernel whose tile is `bm` × `bn`.
__host__ __device__ constexpr int stages_for(int bm, int bn, bool transposed) {
  return transposed ? kSmallMRingBytes / ((bm + bn) * BK * 2) : STAGES;
}
/// The stages' A and B tiles, the consumers' store buffers (with TMA stores: bm / WM
/// consumers), a full and an empty barrier per stage, the tile hand-off (two slots and two
/// barriers for each: 40 bytes), and 1 KiB to round the base up to a swizzle atom.
__host__ __device__ constexpr int smem_bytes(int bm, int bn, bool transposed, bool tma_store) {
  return stages_for(bm, bn, transposed) * ((bm + bn) * BK * 2 + 16) + 40 +
         (tma_store ? bm / WM * kStoreBuffers * kStoreBytes : 0) + 1024;
}
/// The largest, listed in kConfig: 128 × 256 tiles or a small-M kernel's, with TMA stores
/// (a 64-row one takes less than its 128-row twin: launch() checks).
constexpr int kSmemBytes =
    std::max({smem_bytes(BM, BN, false, true), smem_bytes(BM, 64, true, true),
              smem_bytes(BM, 128, true, true), smem_bytes(BM, BN, true, true)});

static_assert(BK * 2 == 128, "a stage is one 128-byte swizzle row wide");
static_assert(kTileABytes % 1024 == 0, "B's tile must start on a 1024-byte swizzle atom");
static_assert(BM <= 256 && BN <= 256, "a TMA box side is at most 256 elements");
static_assert(WM == 64, "a consumer's rows are one m64 wgmma tile");
static_assert(STAGES >= 3 && stages_for(BM, BN, true) >= 3,
              "a consumer holds two stages at a time; the producer needs a third");
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

/// Stream-K.  A unit's share of a 128 × 256 tile is at least this many K slices: a smaller
/// piece costs a whole partial tile's write and read for little work (CUTLASS's stream-K
/// takes 8 too).  A small-M tile's partial is small (32 KiB for 64 columns), and its units
/// split anywhere, one slice being enough: there an even split is what counts.
constexpr int kMinUnitSlices = HM_STREAM_K_MIN_SLICES;
/// make_schedule()'s model counts time in tenths of a K slice of a whole 128 × 256 tile.
/// A stream-K slice of such a tile costs this many: whole tiles run in step, the tiles of a
/// wave that share rows of A or B read the same K slice at about the same time, and L2
/// serves it to all of them; stream-K units start at unrelated K offsets, share nothing,
/// and each of the 132 SMs pulls its 48 KiB per slice from HBM, which serves ~4.3 TB/s:
/// ~1.5 µs a slice where the MMAs take ~0.6 µs.  A small-M kernel streams its weights once
/// either way, so its stream-K slices cost what whole-tile ones do (10).
constexpr int kStreamKSliceCost = HM_STREAM_K_SLICE_COST;
/// What make_schedule() charges for each partial tile that a tile's owner waits for and
/// adds, in tenths of a slice, for a 128 × 256 tile (a narrower one: in proportion): about
/// 3 µs for 128 KiB, fitted to the remainder schedule's measured loss at 5120³.
constexpr int kFixupCost = HM_STREAM_K_FIXUP;
/// Stream-K must predict at least this gain, in percent, over whole tiles, or v8 keeps v7's
/// schedule: the model is rough, and below this the two measure level.
constexpr int kMinGainPercent = HM_STREAM_K_MIN_GAIN;
/// The small-M kernel's narrow tiles (fewer than BN columns), one full wave and a partial
/// wave of at least a third as many tiles as workers: the full wave stays whole and the
/// partial wave's tiles alone are shared, by every worker, units crossing tile edges (each
/// a third of a tile or more).  The model charges this what it charges sharing both waves'
/// tiles; measured on the H200 it is 1-6% faster on most shapes with N = 22528-32768 and
/// M <= 128, and slower where the partial wave is smaller (2-8%) or follows more full waves
/// (up to 9%).
constexpr bool kStreamKCross = HM_STREAM_K_CROSS;
/// One consumer's partial accumulators in the workspace: 128 threads × BN / 2 floats.
constexpr int kPartialBytes = 128 * (BN / 2) * 4;
/// Split along K into pieces, a tile of BN columns gives its owner this many K slices
/// more than an even share: the other pieces end first, and their partials are in L2
/// when the owner, after its own K loop, waits for them.  Even pieces end together, and
/// the owner waits for the last one's stores.  4 measured best of 0, 4 and 8.
constexpr int kOwnerExtra = HM_STREAM_K_OWNER_EXTRA;

/// The fewest K slices of a tile that a stream-K unit takes, for tiles laid out as `tiling`
/// says (kMinUnitSlices).  Host and device.
__host__ __device__ int min_unit_slices(const Tiling& tiling) {
  return tiling.transposed && tiling.bn < BN ? 1 : kMinUnitSlices;
}

/// The pieces each stream-K tile of `s` is cut into where its units are a multiple of its
/// stream-K tiles, more than one each (split-K: no unit straddles two tiles), else 0.  Host
/// and device.
__host__ __device__ int split_k_pieces(const Schedule& s) {
  return s.sk_tiles > 0 && s.units > s.sk_tiles && s.units % s.sk_tiles == 0
             ? s.units / s.sk_tiles : 0;
}

/// The schedule of `tiles` tiles of `k_tiles` K slices each, laid out as `tiling` says, on
/// at most `max_workers` workers (clusters).  Two stream-K schedules compete with whole
/// tiles (v7's): the partial wave's tiles shared by units, one per worker, and the other
/// tiles whole, after them; or the same with the last full wave's tiles shared as well.
/// Where there are more units than shared tiles, their count is a multiple of the tiles, so
/// that each tile is split evenly and no unit straddles two (split-K, stream-K's simple
/// case): measured on decode shapes, straddling units cost more than the few SMs this
/// leaves idle.  The exception, measured too, is kStreamKCross's: after one whole wave of
/// narrow tiles, the partial wave alone shared by every worker, straddling.  The model
/// charges each schedule the K slices its busiest worker runs and the partial tiles that a
/// tile's owner waits for; stream-K must beat whole tiles by kMinGainPercent.  A tile of BN
/// columns split so then gives its owner kOwnerExtra more slices (owner_extra), outside the
/// model.  Host and device: the tests check it without a GPU.
__host__ __device__ Schedule make_schedule(int tiles, int k_tiles, int max_workers,
                                           const Tiling& tiling) {
  const int min_slices = min_unit_slices(tiling);
  const int slice_cost = tiling.transposed ? 10 : kStreamKSliceCost;
  const int fixup_cost = kFixupCost * tiling.bn / BN * tiling.bm / BM;
  const Schedule whole = {tiles, k_tiles, min(tiles, max_workers), 0, 0, min_slices};
  const int full = tiles / max_workers, tail = tiles % max_workers;
  if (tail == 0 || k_tiles < 2 * min_slices) return whole;
  const int64_t whole_cost = int64_t(full + 1) * k_tiles * 10;
  Schedule best = whole;
  int64_t best_cost = whole_cost * (100 - kMinGainPercent) / 100;
  const bool cross = kStreamKCross && tiling.transposed && tiling.bn < BN && full == 1 &&
                     3 * tail >= max_workers;
  for (int dp_waves = cross ? full : max(full - 1, 0); dp_waves <= full; ++dp_waves) {
    const int sk_tiles = tiles - dp_waves * max_workers;
    const int64_t sk_slices = int64_t(sk_tiles) * k_tiles;
    const int64_t most = sk_slices / min_slices;  // units of min_slices or more
    int units = int(min(most, int64_t(min(max_workers, kMaxUnits))));
    if (units > sk_tiles && !cross) units -= units % sk_tiles;  // the same units per tile
    if (units < 2) continue;
    const int64_t per_unit = (sk_slices + units - 1) / units;
    const int64_t waits = (units + sk_tiles - 1) / sk_tiles;  // partials an owner adds
    const int64_t cost =
        int64_t(dp_waves) * k_tiles * 10 + per_unit * slice_cost + waits * fixup_cost;
    if (cost < best_cost) {
      best = {tiles, k_tiles, full > 0 ? max_workers : units, sk_tiles, units, min_slices};
      best_cost = cost;
    }
  }
  const int pieces = split_k_pieces(best);
  if (pieces > 0 && tiling.bn == BN)  // each piece still min_slices or more
    best.owner_extra = max(0, min(kOwnerExtra, k_tiles - pieces * min_slices));
  return with_unit_starts(best);
}

/// The first K slice of stream-K unit `unit` (0 ≤ unit ≤ units), counted along the stream-K
/// tiles' slices laid end to end: the units split them evenly, and a boundary that would
/// leave a tile a piece of fewer than s.min_slices slices moves to the tile's edge.  Under
/// split-K with s.owner_extra, each tile's first piece takes that many slices more, and the
/// other pieces split the rest evenly.  Host and device.
__host__ __device__ int64_t unit_begin(const Schedule& s, int unit) {
  if (s.owner_extra > 0) {  // split-K: the tile's first piece owner_extra slices longer
    const int pieces = split_k_pieces(s), r = unit % pieces;
    const int64_t rest = int64_t(s.k_tiles - s.owner_extra) * r / pieces;
    return int64_t(unit / pieces) * s.k_tiles + (r == 0 ? 0 : s.owner_extra + rest);
  }
  const int64_t slices = int64_t(s.sk_tiles) * s.k_tiles;
  const int64_t begin = slices * unit / s.units;
  const int into = int(begin % s.k_tiles);  // slices before it in its tile
  if (into != 0 && into < s.min_slices) return begin - into;
  if (into != 0 && s.k_tiles - into < s.min_slices) return begin + (s.k_tiles - into);
  return begin;
}

/// `s` with start[] filled, where it has stream-K units: unit_begin() of every unit
/// u ≤ units (at most kMaxUnits), as a tile and a K slice.  Host and device.
__host__ __device__ Schedule with_unit_starts(Schedule s) {
  for (int u = 0; s.units > 0 && u <= s.units && u <= kMaxUnits; ++u) {
    const int64_t begin = unit_begin(s, u);
    s.start[u] = {int(begin / s.k_tiles), int(begin % s.k_tiles)};
  }
  return s;
}

/// True if stream-K unit `unit` (< units) has no slice: its boundaries moved to one tile
/// edge.  Host and device.
__host__ __device__ bool unit_empty(const Schedule& s, int unit) {
  return s.start[unit].tile == s.start[unit + 1].tile && s.start[unit].k == s.start[unit + 1].k;
}

/// The `u`-th piece of work of worker `worker`, in order: first the pieces of its stream-K
/// unit, one per tile it touches (the first may start, and the last end, inside a tile),
/// then its whole tiles, sk_tiles + worker, + workers, …  False once there is none.  The
/// unit's start and end come from s.start, with no division.  Host and device.
__host__ __device__ bool work_unit(const Schedule& s, int worker, int u, WorkUnit* w) {
  if (worker < s.units) {
    const UnitStart begin = s.start[worker], end = s.start[worker + 1];
    if (begin.tile != end.tile || begin.k != end.k) {  // not empty
      const int last = end.k > 0 ? end.tile : end.tile - 1;  // the tile of its last slice
      if (u <= last - begin.tile) {
        const int tile = begin.tile + u;
        *w = {tile, tile == begin.tile ? begin.k : 0, tile == end.tile ? end.k : s.k_tiles};
        return true;
      }
      u -= last - begin.tile + 1;
    }
  }
  const int64_t tile = int64_t(s.sk_tiles) + worker + int64_t(u) * s.workers;
  if (tile >= s.tiles) return false;
  *w = {int(tile), 0, s.k_tiles};
  return true;
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

/// Stores Cᵀ[row, col] and Cᵀ[row, col + 1] of the m×n matrix Cᵀ, clipped to it, into C
/// (n×m, row-major): two rows of C, one element each.
template <typename T>
__device__ __forceinline__ void store_pair_transposed(T* c, int m, int n, int row, int col,
                                                      float x, float y) {
  if (row >= m || col >= n) return;
  c[int64_t(col) * m + row] = T(x);
  if (col + 1 < n) c[int64_t(col + 1) * m + row] = T(y);
}

/// C[m,n] = A[m,k] · B[n,k]ᵀ; cluster c computes the pieces work_unit() gives worker c, its
/// CTA of rank r the r-th BM rows of each cluster tile.  With kTmaStore, C leaves through
/// `tma_c`; without, through `c`.  kCtas = 1: no cluster instruction.  `flags` and `partials`
/// are the workspace (unused without stream-K units).  Tiles are kBN columns wide.  With
/// kTransposed, the small-M kernel: `c` receives the transpose of the m×n result (the
/// launcher passes Cᵀ's sizes, B as A and A as B).  Without kStreamK every piece is a whole
/// tile that the cluster takes from `counter` (claim_tile(), as in v7), and the stream-K
/// code is not compiled in.
template <typename T, int kBM, int kBN, bool kTransposed, bool kTmaStore, int kCtas,
          bool kStreamK>
__global__ void __launch_bounds__(kThreads, 1)
    matmul_kernel(const __grid_constant__ CUtensorMap tma_a,
                  const __grid_constant__ CUtensorMap tma_b,
                  const __grid_constant__ CUtensorMap tma_c, T* __restrict__ c, int m, int n,
                  int tiles_m, int tiles_n, const Schedule sched, uint32_t* __restrict__ flags,
                  float4* __restrict__ partials, uint32_t* __restrict__ counter) {
  constexpr int kStages = stages_for(kBM, kBN, kTransposed);  // K slices in the ring
  constexpr int kWGs = kBM / WM;  // consumer warpgroups: kConsumers, or 1 for 64-row tiles
  constexpr bool kSplit = split_consumers(kBM, kBN, kTransposed, kTmaStore);
  constexpr int kGroups = consumer_groups(kBM, kBN, kTransposed, kTmaStore);  // launched
  constexpr int kTileA = kBM * BK * 2;  // one stage of A, bytes: a TMA box [kBM][64]
  constexpr int kTileBBytes = kBN * BK * 2;  // one stage of B, bytes: a TMA box per CTA
  constexpr int kShareB = kBN / kCtas;  // rows of B one CTA loads for its whole cluster
  constexpr int kShareBBytes = kShareB * BK * 2;  // one TMA box of B: [kShareB][64]
  // The small-M kernel's B, A's M rows, fills the first b_rows rows of a stage only.
  const int b_rows = kTransposed ? small_m_b_rows(kBN, n) : kBN;
  const uint32_t b_bytes = uint32_t(b_rows) * BK * 2;  // of B per stage: kTileBBytes, or less

  // Step 1: carve shared memory.  SWIZZLE_128B tiles must start on a 1024-byte boundary.
  // Every CTA of the cluster runs this same code, so the offsets below are the same in all
  // of them: a multicast copy or a remote arrival names them by these offsets.
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem = (smem_address(smem_raw) + 1023) & ~1023u;
  const uint32_t sA = smem;                          // [kStages][kBM][64] T, 128B-swizzled
  const uint32_t sB = sA + kStages * kTileA;         // [kStages][kBN][64] T, 128B-swizzled
  const uint32_t sC = sB + kStages * kTileBBytes;    // [kWGs][kStoreBuffers][WM][64] T
  const uint32_t full =                              // [kStages] mbarriers
      sC + (kTmaStore ? kWGs * kStoreBuffers * kStoreBytes : 0);
  const uint32_t empty = full + 8 * kStages;         // [kStages] mbarriers, see step 2
  const uint32_t tile_full = empty + 8 * kStages;    // [2] mbarriers, see step 2
  const uint32_t tile_empty = tile_full + 16;        // [2] mbarriers, see step 2
  const uint32_t tile_slot = tile_empty + 16;        // [2] int: the tiles handed over

  // Step 2: the barriers, two per stage, initialised once for every tile this CTA computes.
  // `it` below counts K iterations over all of this CTA's tiles; it picks stage and parity.
  // full[s]:  1 arrival (the producer's arrive.expect_tx) + kTileA + b_bytes of TMA
  //           bytes per fill.  Iteration it lives in stage it % kStages; consumers wait on
  //           parity (it / kStages) & 1, the count of that stage's earlier fills, mod 2.
  //           In a cluster the bytes are this CTA's A and B in kCtas shares, one multicast
  //           by each CTA of the cluster.
  // empty[s]: one arrival per consumer warp (4 · kWGs), each once its wgmma reading
  //           the stage have retired.  Before filling iteration it the producer waits on
  //           parity ((it / kStages) & 1) ^ 1: the phase the consumers completed when they
  //           released iteration it - kStages.  On the first pass that is the phase "before"
  //           a fresh barrier, which counts as complete, so the producer does not wait.
  //           In a cluster, one per consumer warp of every CTA (4 · kWGs · kCtas):
  //           this CTA's producer writes its share of B into all of them.
  // The producer claims each tile and hands it to the consumers in a ring of two slots;
  // `j` counts this CTA's claims, and claim j lives in slot j % 2, with parity (j / 2) & 1
  // and its complement as above.
  // In a cluster, rank 0's producer claims each cluster tile for the whole cluster and hands
  // it to every CTA's producer and consumers.
  // With stream-K the pieces come from work_unit() instead: no claims, no hand-over.
  // tile_full[s]:  1 arrival, the producer's, once it has written the slot.
  //                In a cluster, this CTA's producer's arrive.expect_tx and the 4 bytes that
  //                rank 0's st.async writes into the slot, which count on the barrier as TMA
  //                bytes do (st.async needs a cluster: kCtas = 1 keeps the plain store).
  // tile_empty[s]: one arrival per consumer warp (4 · kWGs), by the lane that read
  //                the slot for the warp.
  //                In a cluster only rank 0's is used, and every CTA's consumer warps and
  //                producer arrive on it: (4 · kWGs + 1) · kCtas.
  constexpr int kTileReaders = kCtas == 1 ? 4 * kGroups : (4 * kWGs + 1) * kCtas;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, 4 * kWGs * kCtas);
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
  const int rank = kCtas > 1 ? int(cluster_ctarank()) : 0;  // our BM rows of a cluster tile
  const int cluster = blockIdx.x / kCtas;        // this cluster's stream-K worker
  const int clusters = gridDim.x / kCtas;        // clusters are kCtas consecutive CTAs

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
    // With stream-K it claims nothing: its pieces of work are its unit's, from work_unit(),
    // and it fills the ring for the K slices of each.
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      uint32_t it = 0;  // unsigned, as in the consumers (step 5)
      int next = !kStreamK && rank == 0 ? claim_tile(counter, sched.tiles, clusters) : 0;
      WorkUnit w;
      for (uint32_t j = 0;; ++j) {
        if constexpr (kStreamK) {
          if (!work_unit(sched, cluster, int(j), &w)) break;
        } else {
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
          if (tile >= sched.tiles) break;
          if (rank == 0) next = claim_tile(counter, sched.tiles, clusters);
          w = {tile, 0, sched.k_tiles};
        }
        const TileCoord tc =
            cluster_tile_coord(w.tile, rank, tiles_m, tiles_n, GROUP_M, kCtas);
        for (int kt = w.k_begin; kt < w.k_end; ++kt, ++it) {
          const int s = it % kStages;
          // Split consumers take the slices in pairs: wait for the pair's second stage too,
          // so that both fill together and both consumers start at once.
          if (kSplit && (kt - w.k_begin) % 2 == 0 && kt + 1 < w.k_end)
            mbarrier_wait(empty + 8 * ((it + 1) % kStages), (((it + 1) / kStages) & 1) ^ 1,
                          "empty");
          mbarrier_wait(empty + 8 * s, ((it / kStages) & 1) ^ 1, "empty");
          mbarrier_arrive_expect_tx(full + 8 * s, kTileA + b_bytes);
          if constexpr (kTransposed && kSmallMEvictFirst)  // A is the weights: read once
            tma_load_2d_hint(sA + s * kTileA, &tma_a, full + 8 * s, kt * BK, tc.m * kBM,
                             createpolicy_evict_first());
          else
            tma_load_2d(sA + s * kTileA, &tma_a, full + 8 * s, kt * BK, tc.m * kBM);
          const uint32_t share = sB + s * kTileBBytes + rank * kShareBBytes;
          if constexpr (kCtas == 1)
            tma_load_2d(share, &tma_b, full + 8 * s, kt * BK, tc.n * kBN);
          else
            tma_load_2d_multicast(share, &tma_b, full + 8 * s, kt * BK,
                                  tc.n * kBN + rank * kShareB, (1u << kCtas) - 1);
        }
      }
    }
    leave_cluster();
    return;
  }

  // Step 4: the consumers take the registers the producer gave back.
  setmaxnreg_inc<kConsumerRegs>();
  const int consumer = wg - 1;  // which WM rows of the tile this warpgroup owns
  const int rows_of = kSplit ? 0 : consumer;  // split consumers share the tile's 64 rows

  // Step 5: the descriptors of stage 0, built once: this consumer's rows of A start WM rows
  // into the tile, and B is one kBN-row slab.  A descriptor is linear in the address
  // (smem_descriptor), so a stage adds its bytes >> 4, and a k16 step, 32 bytes along every
  // 128-byte row, adds 2.
  const uint64_t desc_a = smem_descriptor(sA + rows_of * WM * BK * 2);
  const uint64_t desc_b = smem_descriptor(sB);
  // Only the low word changes, so the sums stay in 32 bits: a small-M ring of 6 or 12 stages
  // makes stage * kStageA a real multiply, and in 64 bits a wide one with a carry chain,
  // between the full-barrier wait and the first wgmma (2-5% at 128x5120x5120 with step 6's
  // stepped stage; docs/notes/performance-log.md).
  constexpr uint32_t kStageA = kTileA >> 4;  // next stage of A, in descriptor units
  constexpr uint32_t kStageB = kTileBBytes >> 4;  // next stage of B, in descriptor units
  const uint64_t desc_hi = desc_a & ~0xFFFFFFFFull;  // strides and swizzle, the same for B
  const uint32_t a_lo = uint32_t(desc_a), b_lo = uint32_t(desc_b);
  // The descriptors of k16 step ks of stage `stage`.
  const auto a_descriptor = [=](uint32_t stage, int ks) {
    return desc_hi | (a_lo + stage * kStageA + 2 * ks);
  };
  const auto b_descriptor = [=](uint32_t stage, int ks) {
    return desc_hi | (b_lo + stage * kStageB + 2 * ks);
  };

  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  if constexpr (kTransposed) {
    // Rows b_rows… of every stage of B, which TMA never writes, hold zeros: written once here
    // and made visible to the async proxy (the wgmma) before the first one reads them.
    const int rows = kBN - b_rows, units = kStages * rows * 8;  // 16-byte units to zero
    for (int i = int(threadIdx.x) - 128; i < units; i += 128 * kGroups)
      st_shared_v4_zero(sB + i / (rows * 8) * kTileBBytes + (b_rows + i / 8 % rows) * 128 +
                        i % 8 * 16);  // unit i: its stage, its row past b_rows, its 16 bytes
    fence_proxy_async_shared();
    named_barrier_sync(kBarConsumers, 128 * kGroups);
  }
  const int g = lane / 4, t = lane % 4;
  // `it` is unsigned so that it % kStages and it / kStages are a mask and a shift and the
  // compiler knows stage lies in [0, kStages): with a signed counter it emits a sign fix-up
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
  WorkUnit w;
  for (uint32_t j = 0;; ++j) {
    if constexpr (kStreamK) {
      if (!work_unit(sched, cluster, int(j), &w)) break;
    } else {
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
      if (tile >= sched.tiles) break;
      w = {tile, 0, sched.k_tiles};
    }
    const TileCoord tc = cluster_tile_coord(w.tile, rank, tiles_m, tiles_n, GROUP_M, kCtas);
    float acc[kBN / 2];  // this thread's part of the warpgroup's WM×kBN tile; no zero-fill

    // Step 6: this consumer's K slices of the piece: every one, or, split, every other one
    // from its own first (consumer 0 the even ones), so that no slice is walked only to be
    // skipped.  Slice `mine` is the CTA's iteration it + mine: its stage and the parity to
    // wait on step along with it, by kStep, wrapping at kStages, with no division per slice.
    constexpr int kStep = kSplit ? 2 : 1;  // from one of this consumer's slices to the next
    const int slices = w.k_end - w.k_begin;  // the piece's K slices
    const int first = kSplit ? consumer : 0;  // this consumer's first slice of them
    uint32_t stage = (it + first) % kStages, phase = ((it + first) / kStages) & 1;
    uint32_t held = 0;  // the stage of this consumer's slice before, still being read
    for (int mine = first; mine < slices; mine += kStep) {
      mbarrier_wait(full + 8 * stage, phase, "full");

      // Step 7: one fence per slice, then the slice's wgmma.  The piece's first MMA runs
      // with scale-d = 0 and overwrites whatever the accumulators held; the rest accumulate.
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < BK / 16; ++ks)
        wgmma_m64k16<T, kBN>(acc, a_descriptor(stage, ks), b_descriptor(stage, ks),
                             (mine > first || ks > 0) ? 1 : 0);
      wgmma_commit_group();

      // Step 8: keep this slice in flight; wait only for the previous slice's group, then
      // release the stage it read.  The newest group is left running.
      wgmma_wait_group<1>();
      if (mine > first) release(held);

      // Step 9: the two consumers meet once per slice.  With a group left in flight nothing
      // else keeps them at one pace: one can run a slice ahead, and a stage, released only
      // by both, then stays held for three slices instead of two.  (A 64-row tile has one
      // consumer, whose four warps meet here alone; split consumers hold different stages.)
      if constexpr (!kSplit) named_barrier_sync(kBarConsumers, 128 * kWGs);
      held = stage;
      stage += kStep;
      if (stage >= kStages) {  // past the ring's end: back to its start, one phase on
        stage -= kStages;
        phase ^= 1;
      }
    }
    it += slices;

    // Step 10: the one full wait: the last slice's group, then its stage.  A split
    // consumer's last slice is the last it took (consumer 1 takes none of a one-slice piece).
    const bool took = slices > first;  // this consumer took a slice of the piece
    wgmma_wait_group<0>();
    fence_accumulators(acc);
    const auto add = [&](const float4& v, int j) {  // another's sums, n8 block j, to ours
      acc[4 * j] += v.x;
      acc[4 * j + 1] += v.y;
      acc[4 * j + 2] += v.z;
      acc[4 * j + 3] += v.w;
    };
    if (took) release(held);  // this consumer's last slice's stage
    if constexpr (kSplit) {
      // Consumer 1 hands its sums to consumer 0 through consumer 0's store buffers, once
      // TMA has read its last stores out of them; consumer 0 adds them and goes on alone,
      // consumer 1 to the next piece.  Thread i's 16-byte units lie 128 · 16 bytes apart.
      if (consumer == 0 && threadIdx.x % 128 == 0) bulk_wait_group_read<0>();
      named_barrier_sync(kBarHandOver, 256);
      const uint32_t sums = sC + (threadIdx.x % 128) * 16;
      if (consumer == 1 && took)
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j)
          st_shared_v4_f32(sums + j * 128 * 16,
                           make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
      named_barrier_sync(kBarHandOver, 256);
      if (consumer == 1) continue;
      if (slices > 1)
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j) add(ld_shared_v4_f32(sums + j * 128 * 16), j);
    }

    // Step 11: a piece that does not start the tile hands its sums to the tile's owner: it
    // writes them to this CTA's slot of the workspace in each thread's own order, 16 bytes
    // at a time with the warpgroup's 128 threads side by side, raises the slot's flag, and
    // moves on.  Threads whose two rows both lie past m write nothing; the owner's threads
    // of the same rows read nothing.
    const int slot = blockIdx.x * kConsumers + consumer;  // this CTA's, for this consumer
    const bool rows_in = tc.m * kBM + consumer * WM + warp * 16 + g < m;
    const auto partial = [&](int of) {
      return partials + size_t(of) * (kPartialBytes / 16) + threadIdx.x % 128;
    };
    if (kStreamK && w.k_begin > 0) {
      if (rows_in)
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j)
          st_global_cg(partial(slot) + 128 * j,
                       make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
      named_barrier_sync(kBarEpilogue + consumer, 128);
      if (threadIdx.x % 128 == 0) red_release_gpu(flags + slot, 1);
      continue;
    }

    // Step 12: the owner of a tile that units share waits for the units that computed the
    // rest of it and adds each one's sums to its own in unit order: the same additions in
    // the same order on every run, lowering each flag again for the next launch.  A tile of
    // 256 columns takes them one at a time.  A narrower one, of the small-M kernel, has many
    // more units per tile and room for more registers: thread i waits for units cluster + 1
    // + i, + 128, …, all flags at once, and the sums come two at a time, both loaded before
    // either is added.
    // The units that computed the rest of the tile are the next ones that begin in it.
    if (kStreamK && w.k_end < sched.k_tiles) {
      const auto begins_in_tile = [&](int u) { return sched.start[u].tile == w.tile; };
      const auto slot_of = [&](int u) { return (u * kCtas + rank) * kConsumers + consumer; };
      if constexpr (kBN == BN) {  // one at a time: 256 columns leave no registers for two
        for (int other = cluster + 1; begins_in_tile(other); ++other) {
          if (unit_empty(sched, other)) continue;
          if (threadIdx.x % 128 == 0) {
            while (ld_acquire_gpu(flags + slot_of(other)) == 0) {
            }
            flags[slot_of(other)] = 0;
          }
          named_barrier_sync(kBarEpilogue + consumer, 128);
          if (rows_in)
#pragma unroll
            for (int j = 0; j < kBN / 8; ++j)
              add(ld_global_cg(partial(slot_of(other)) + 128 * j), j);
        }
      } else {
        int last = cluster + 1;  // units cluster + 1 … last - 1 computed the rest of the tile
        while (begins_in_tile(last)) ++last;
#pragma unroll 1
        for (int other = cluster + 1 + int(threadIdx.x % 128); other < last; other += 128) {
          if (unit_empty(sched, other)) continue;
          while (ld_acquire_gpu(flags + slot_of(other)) == 0) {
          }
          flags[slot_of(other)] = 0;
        }
        named_barrier_sync(kBarEpilogue + consumer, 128);
        const auto next_slot = [&](int* u) {  // the next non-empty unit's slot, or -1
          for (; *u < last; ++*u)
            if (!unit_empty(sched, *u)) return slot_of((*u)++);
          return -1;
        };
#pragma unroll 1
        for (int other = cluster + 1; other < last;) {
          const int first = next_slot(&other), second = next_slot(&other);
          if (first < 0 || !rows_in) continue;
          float4 v[2][kBN / 8];
#pragma unroll
          for (int j = 0; j < kBN / 8; ++j) {
            v[0][j] = ld_global_cg(partial(first) + 128 * j);
            if (second >= 0) v[1][j] = ld_global_cg(partial(second) + 128 * j);
          }
#pragma unroll
          for (int j = 0; j < kBN / 8; ++j) add(v[0][j], j);
          if (second >= 0)
#pragma unroll
            for (int j = 0; j < kBN / 8; ++j) add(v[1][j], j);
        }
      }
    }

    // Step 13: the epilogue, while the producer already loads the next piece.
    if constexpr (kTmaStore) {
      // Through shared memory, kStoreCols columns at a time: wait until TMA has read the
      // buffer this chunk takes (its store from kStoreBuffers chunks ago), write the chunk
      // into it 128B-swizzled like a TMA box (so the 8 rows a warp writes at once fall in
      // 8 different 16-byte bank groups), and let one thread hand it to TMA.  Nobody waits
      // for the store itself.  The small-M kernel's tile is one of Cᵀ: its chunk, WM rows
      // (of N) × 64 columns (of M), goes out as a box of C, 64 rows × WM columns, that
      // stmatrix writes transposed, 8 × 8 values at a time.
      const bool leader = threadIdx.x % 128 == 0;
      // A tile of 64 columns or fewer is one chunk, always in buffer 0: wait for the last
      // store.  A narrower one fills the chunk's first kBN rows of C; TMA clips the rest,
      // which lie past M.
      constexpr int kChunks = (kBN + kStoreCols - 1) / kStoreCols;
      constexpr int kChunkCols = kBN < kStoreCols ? kBN : kStoreCols;
      constexpr int kBuffersUsed = kChunks < kStoreBuffers ? kChunks : kStoreBuffers;
#pragma unroll
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        const uint32_t buffer =
            sC + (consumer * kStoreBuffers + chunk % kStoreBuffers) * kStoreBytes;
        if (leader) bulk_wait_group_read<kBuffersUsed - 1>();
        named_barrier_sync(kBarEpilogue + consumer, 128);
        const int row = warp * 16 + g;  // and row + 8: the same swizzle, row % 8 is equal
        if constexpr (kTransposed) {
          // Lane l writes row l % 8 of block l / 8 (blocks: n8 block jj or jj + 1 of the
          // accumulators, times rows 0–7 or 8–15 of the warp's): a row of C, 16 bytes of
          // it, at C's row jj · 8 + (l / 16) · 8 + l % 8 of the chunk.
          const int c_row = (lane / 16) * 8 + lane % 8;
          const int unit = 2 * warp + (lane / 8) % 2;  // its 16-byte unit before swizzling
#pragma unroll
          for (int jj = 0; jj < kChunkCols / 8; jj += 2) {
            const int j = chunk * (kStoreCols / 8) + jj;
            const auto v0 = pack_pair<T>(acc[4 * j], acc[4 * j + 1]);
            const auto v1 = pack_pair<T>(acc[4 * j + 2], acc[4 * j + 3]);
            const auto v2 = pack_pair<T>(acc[4 * j + 4], acc[4 * j + 5]);
            const auto v3 = pack_pair<T>(acc[4 * j + 6], acc[4 * j + 7]);
            stmatrix_x4_trans(buffer + (jj * 8 + c_row) * 128 + (unit ^ (lane % 8)) * 16,
                              *reinterpret_cast<const uint32_t*>(&v0),
                              *reinterpret_cast<const uint32_t*>(&v1),
                              *reinterpret_cast<const uint32_t*>(&v2),
                              *reinterpret_cast<const uint32_t*>(&v3));
          }
        } else
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
          const int rows = tc.m * kBM + consumer * WM, cols = tc.n * kBN + chunk * kStoreCols;
          if constexpr (kTransposed) tma_store_2d(&tma_c, buffer, rows, cols);  // of Cᵀ
          else tma_store_2d(&tma_c, buffer, cols, rows);
          bulk_commit_group();
        }
      }
    } else if constexpr (kTransposed) {
      // The small-M kernel without TMA stores (n % 8 != 0) holds a tile of Cᵀ: a pair of
      // its columns is two rows of C, so each value goes out alone.
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        const int row = tc.m * kBM + consumer * WM + warp * 16 + g;
        const int col = tc.n * kBN + j * 8 + 2 * t;
        store_pair_transposed(c, m, n, row, col, acc[4 * j], acc[4 * j + 1]);
        store_pair_transposed(c, m, n, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
      }
    } else {
      // C's rows are not 16-byte multiples apart (n % 8 != 0): TMA cannot address them,
      // and the consumers store C themselves, as in v5.
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        const int row = tc.m * kBM + consumer * WM + warp * 16 + g;
        const int col = tc.n * kBN + j * 8 + 2 * t;
        store_pair(c, m, n, row, col, acc[4 * j], acc[4 * j + 1]);
        store_pair(c, m, n, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
      }
    }
  }
  leave_cluster();
}

// -----------------------------------------------------------------------------------------
// The ping-pong kernel: each consumer warpgroup computes whole tiles of its own, and the two
// take turns on the tensor cores.
// -----------------------------------------------------------------------------------------

// Tuning overrides: -DHM_PING_BN=128 -DHM_PING_STAGES=3 -DHM_PING_TURNS=0.
#ifndef HM_PING_BN
#define HM_PING_BN 192
#endif
#ifndef HM_PING_TURNS
#define HM_PING_TURNS 1
#endif

/// Columns of a ping-pong tile: 128 × 192 per warpgroup, 96 accumulators per thread for
/// each of its two m64 halves.  128 × 128 moves a fifth more bytes per flop from L2 and
/// measured 4–9% slower than this tile on seven of eight shapes; 128 × 256 would need 256
/// accumulators per thread (the performance log).
constexpr int kPingBN = HM_PING_BN;
constexpr int kPingTileBBytes = kPingBN * BK * 2;  ///< one stage of B: one TMA box [192][64]
#ifdef HM_PING_STAGES
constexpr int kPingStages = HM_PING_STAGES;  ///< K slices in its ring
#else
/// K slices in its ring: as many as fit beside the store buffers, the barriers and the
/// hand-off (40 bytes) and the 1 KiB of alignment: 4 of 40 KiB.
constexpr int kPingStages = (227 * 1024 - 1024 - 40 - kConsumers * kStoreBuffers * kStoreBytes) /
                            (kTileABytes + kPingTileBBytes + 16);
#endif
/// The ping-pong kernel's shared memory: the stages' A and B tiles, each warpgroup's store
/// buffers, a full and an empty barrier per stage, the hand-off (one slot and two barriers
/// per warpgroup: 40 bytes), and 1 KiB to round the base up to a swizzle atom.
constexpr int kPingSmemBytes = kPingStages * (kTileABytes + kPingTileBBytes + 16) + 40 +
                               kConsumers * kStoreBuffers * kStoreBytes + 1024;
static_assert(2 * kPingBN / kStoreCols % kStoreBuffers == 0, "each tile starts on buffer 0");
static_assert(4 * kPingBN % BN == 0, "pingpong_path() counts in quarters of a slice");
static_assert(kPingSmemBytes <= 227 * 1024, "more shared memory than one CTA may have");
static_assert(kConsumers == 2, "ping-pong is two warpgroups taking turns");

/// C[m,n] = A[m,k] · B[n,k]ᵀ in tiles of BM × kPingBN, through TMA stores; the CTA takes
/// tiles from `counter` and gives them to its consumer warpgroups in turn, claim j to
/// warpgroup j % 2, which computes the whole tile: its K loop while the other runs its
/// epilogue, then the other way round.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    matmul_kernel_pingpong(const __grid_constant__ CUtensorMap tma_a,
                           const __grid_constant__ CUtensorMap tma_b,
                           const __grid_constant__ CUtensorMap tma_c, int k, int tiles_m,
                           int tiles_n, uint32_t* __restrict__ counter) {
  // Step P1: carve shared memory, as in the cooperative kernel, with kPingBN-row stages of B.
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem = (smem_address(smem_raw) + 1023) & ~1023u;
  const uint32_t sA = smem;                             // [kPingStages][BM][64] T
  const uint32_t sB = sA + kPingStages * kTileABytes;   // [kPingStages][kPingBN][64] T
  const uint32_t sC = sB + kPingStages * kPingTileBBytes;  // [2][kStoreBuffers][WM][64] T
  const uint32_t full = sC + kConsumers * kStoreBuffers * kStoreBytes;  // [kPingStages]
  const uint32_t empty = full + 8 * kPingStages;        // [kPingStages] mbarriers
  const uint32_t tile_full = empty + 8 * kPingStages;   // [2] mbarriers: one per warpgroup
  const uint32_t tile_empty = tile_full + 16;           // [2] mbarriers
  const uint32_t tile_slot = tile_empty + 16;           // [2] int: warpgroup w's next tile

  // Step P2: the barriers.  `it` counts the ring's K iterations in the order the producer
  // fills them: claim 0's slices, then claim 1's, and so on.
  // full[s]:  1 arrival (the producer's arrive.expect_tx) + kTileABytes + kPingTileBBytes.
  // empty[s]: one arrival per warp of the warpgroup that computed the slice (4): each
  //           slice belongs to one warpgroup's tile.
  // tile_full[w], tile_empty[w]: warpgroup w's slot: claims w, w + 2, …  The producer's
  //           i-th write into slot w waits on tile_empty[w] parity (i & 1) ^ 1; warpgroup
  //           w's i-th read waits on tile_full[w] parity i & 1; lane 0 of each of its warps
  //           reads the slot and frees it (4 arrivals).
  if (threadIdx.x == 0) {
    for (int s = 0; s < kPingStages; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, 4);
    }
    for (int w = 0; w < kConsumers; ++w) {
      mbarrier_init(tile_full + 8 * w, 1);
      mbarrier_init(tile_empty + 8 * w, 4);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  const int wg = threadIdx.x / 128;
  const int k_tiles = (k + BK - 1) / BK;
  const int tiles = tiles_m * tiles_n;

  if (wg == 0) {
    // Step P3: the producer claims tiles and fills the ring with every K slice of each, in
    // claim order.  Claim j goes to warpgroup j % 2; the first claim past the end goes to
    // both, so that each finds its "none left".
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      uint32_t it = 0;
      int next = claim_tile(counter, tiles, gridDim.x);
      for (uint32_t j = 0;; ++j) {
        const int tile = next, w = j % 2;
        const uint32_t use = j / 2;  // the slot's earlier writes
        mbarrier_wait(tile_empty + 8 * w, (use & 1) ^ 1, "tile_empty");
        st_shared_b32(tile_slot + 4 * w, uint32_t(tile));
        mbarrier_arrive(tile_full + 8 * w);
        if (tile >= tiles) {
          const uint32_t other = (j + 1) / 2;  // the other slot's writes before this one
          mbarrier_wait(tile_empty + 8 * (w ^ 1), (other & 1) ^ 1, "tile_empty");
          st_shared_b32(tile_slot + 4 * (w ^ 1), uint32_t(tile));
          mbarrier_arrive(tile_full + 8 * (w ^ 1));
          break;
        }
        next = claim_tile(counter, tiles, gridDim.x);
        const TileCoord tc = tile_coord(tile, tiles_m, tiles_n, GROUP_M);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kPingStages;
          mbarrier_wait(empty + 8 * s, ((it / kPingStages) & 1) ^ 1, "empty");
          mbarrier_arrive_expect_tx(full + 8 * s, kTileABytes + kPingTileBBytes);
          tma_load_2d(sA + s * kTileABytes, &tma_a, full + 8 * s, kt * BK, tc.m * BM);
          tma_load_2d(sB + s * kPingTileBBytes, &tma_b, full + 8 * s, kt * BK,
                      tc.n * kPingBN);
        }
      }
    }
    return;
  }

  // Step P4: a consumer warpgroup takes every other claim; its ring counter starts at its
  // first tile's slices (warpgroup 1: after warpgroup 0's first tile) and skips the other's.
  setmaxnreg_inc<kConsumerRegs>();
  const int w = wg - 1;  // this warpgroup's slot, turn and store buffers
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const uint64_t desc_a = smem_descriptor(sA);
  const uint64_t desc_b = smem_descriptor(sB);
  constexpr uint64_t kStageA = kTileABytes >> 4;
  constexpr uint64_t kStageB = kPingTileBBytes >> 4;
  constexpr uint64_t kHalfA = (WM * BK * 2) >> 4;  // rows 64…127 of a stage of A
  // The descriptors of k16 step ks of stage `stage`, for the tile's row half `h`.
  const auto a_descriptor = [=](int stage, int ks, int h) {
    return desc_a + stage * kStageA + h * kHalfA + 2 * ks;
  };
  const auto b_descriptor = [=](int stage, int ks) { return desc_b + stage * kStageB + 2 * ks; };
  const auto release = [&](int stage) {
    if (lane == 0) mbarrier_arrive(empty + 8 * stage);
  };
  // Step P5: the turns.  Warpgroup w issues a tile's MMAs only after the other has issued
  // all of its own tile's (bar.sync on kBarTurn + w, 128 of its threads and the other's
  // 128 arrivals), and hands the turn over (bar.arrive on the other's) as soon as its last
  // slice is issued, before waiting for it: the other's first MMAs queue behind its last.
  // Warpgroup 1 gives warpgroup 0 the first turn.
  if (HM_PING_TURNS && w == 1) named_barrier_arrive(kBarTurn + 0, 256);

  // Warpgroup w's i-th tile is claim 2i + w, whose slices are iterations (2i + w)·k_tiles …
  // (2i + w + 1)·k_tiles − 1 of the ring.
  uint32_t it = w * k_tiles;
  for (uint32_t i = 0;; ++i, it += k_tiles) {  // += k_tiles: skip the other's tile
    mbarrier_wait(tile_full + 8 * w, i & 1, "tile_full");
    uint32_t claimed = 0;
    if (lane == 0) {
      claimed = ld_shared_b32(tile_slot + 4 * w);
      mbarrier_arrive(tile_empty + 8 * w);
    }
    const int tile = int(__shfl_sync(0xffffffffu, claimed, 0));
    if (tile >= tiles) break;
    const TileCoord tc = tile_coord(tile, tiles_m, tiles_n, GROUP_M);
    float acc[2][kPingBN / 2];  // rows 0…63 and 64…127 of the warpgroup's 128 × 192 tile

    if (HM_PING_TURNS) named_barrier_sync(kBarTurn + w, 256);
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int stage = it % kPingStages;
      mbarrier_wait(full + 8 * stage, (it / kPingStages) & 1, "full");
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < BK / 16; ++ks)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          wgmma_m64k16<T, kPingBN>(acc[h], a_descriptor(stage, ks, h), b_descriptor(stage, ks),
                                   (kt > 0 || ks > 0) ? 1 : 0);
      wgmma_commit_group();
      wgmma_wait_group<1>();
      if (kt > 0) release((it - 1) % kPingStages);
    }
    if (HM_PING_TURNS) named_barrier_arrive(kBarTurn + (w ^ 1), 256);
    wgmma_wait_group<0>();
    fence_accumulators(acc[0]);
    fence_accumulators(acc[1]);
    release((it - 1) % kPingStages);

    // Step P6: the epilogue, while the other warpgroup's MMAs run: v8's TMA stores, in
    // 64 × 64 chunks (kPingBN / 64 per row half) through this warpgroup's store buffers.
    const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int chunk = 0; chunk < kPingBN / kStoreCols; ++chunk) {
        const int n_chunk = h * (kPingBN / kStoreCols) + chunk;
        const uint32_t buffer =
            sC + (w * kStoreBuffers + n_chunk % kStoreBuffers) * kStoreBytes;
        if (leader) bulk_wait_group_read<kStoreBuffers - 1>();
        named_barrier_sync(kBarEpilogue + w, 128);
        const int row = warp * 16 + g;
#pragma unroll
        for (int jj = 0; jj < kStoreCols / 8; ++jj) {
          const int j = chunk * (kStoreCols / 8) + jj;
          const uint32_t at = buffer + (jj ^ (row % 8)) * 16 + 4 * t;
          const auto lo = pack_pair<T>(acc[h][4 * j], acc[h][4 * j + 1]);
          const auto hi = pack_pair<T>(acc[h][4 * j + 2], acc[h][4 * j + 3]);
          st_shared_b32(at + row * 128, *reinterpret_cast<const uint32_t*>(&lo));
          st_shared_b32(at + (row + 8) * 128, *reinterpret_cast<const uint32_t*>(&hi));
        }
        fence_proxy_async_shared();
        named_barrier_sync(kBarEpilogue + w, 128);
        if (leader) {
          tma_store_2d(&tma_c, buffer, tc.n * kPingBN + chunk * kStoreCols, tc.m * BM + h * WM);
          bulk_commit_group();
        }
      }
  }
  if (threadIdx.x % 128 == 0) bulk_wait_group<0>();
}

// =========================================================================================
// 4. The host launcher
// =========================================================================================

/// This version's launch configuration, listed by `hopper-matmul list` and in the docs: the
/// ping-pong kernel's (128 × 192 tiles, one per consumer warpgroup), with v8's clusters for
/// the problems that take v8's kernels.
extern const hm::KernelConfig kConfig = {kThreads,    kPingSmemBytes, BM, kPingBN, BK,
                                         kPingStages, 1,              kClusterM};

/// The bytes of the workspace's flags on a GPU of `sms` SMs: one for each consumer of each
/// CTA there may be, rounded up to 128 bytes.  The flags stay where they are whatever the
/// launch, so that a launch of fewer CTAs never writes partial sums over another one's flags.
size_t flag_bytes(int sms) { return (size_t(sms) * kConsumers * 4 + 127) / 128 * 128; }
/// The workspace on a GPU of `sms` SMs for a launch of `ctas` CTAs: the flags, then the
/// partial sums of each consumer of each CTA.
size_t workspace_for(int sms, int ctas) {
  return flag_bytes(sms) + size_t(ctas) * kConsumers * kPartialBytes;
}

size_t workspace_bytes(const hm::Problem& p, int sms) {
  // The launcher may find fewer clusters than sms / 2 fit, and then choose stream-K where a
  // full GPU would not: any K long enough to split may need the largest workspace.
  const int64_t k_tiles = (p.k + BK - 1) / BK;
  return k_tiles < 2 * min_unit_slices(choose_tiling(p.m, p.n, p.k, sms)) ? 0
                                                                     : workspace_for(sms, sms);
}

/// Where a launch's workspace comes from, and whose schedule it runs.
struct Launch {
  void* workspace;         ///< the caller's (16-byte aligned), unless `cached`
  size_t bytes;            ///< its size
  bool cached;             ///< take the stream's from hm::stream_memory() instead
  const Schedule* forced;  ///< the tests' schedule, or null for make_schedule()'s
  int sms;                 ///< the SMs of the launch's stream: run() sets it
};

/// Schedules the work on as many clusters of kCtas CTAs as fit on the GPU at once, raises
/// the kernel's shared-memory limit, and launches the kernel for element type T and tiles kBN
/// columns wide: the one built without stream-K where the schedule has whole tiles only (the
/// small-M kernel takes both schedules).  `p` has the kernel's sizes (Cᵀ's, for the small-M
/// kernel).
template <typename T, int kBM, int kBN, bool kTransposed, bool kTmaStore, int kCtas>
hm::Status launch(const CUtensorMap& tma_a, const CUtensorMap& tma_b, const CUtensorMap& tma_c,
                  void* c, const hm::Problem& p, int tiles_m, int tiles_n, const Launch& how,
                  cudaStream_t stream) {
  constexpr int kSmem = smem_bytes(kBM, kBN, kTransposed, kTmaStore);
  static_assert(kSmem <= kSmemBytes, "kConfig lists the largest kernel");
  const void* kernel = reinterpret_cast<const void*>(
      &matmul_kernel<T, kBM, kBN, kTransposed, kTmaStore, kCtas, true>);
  HM_TRY(hm::set_max_dynamic_smem(kernel, kSmem));
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  const int sms = how.sms;

  cudaLaunchAttribute cluster_shape = {};
  cluster_shape.id = cudaLaunchAttributeClusterDimension;
  cluster_shape.val.clusterDim = {unsigned(kCtas), 1, 1};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(sms / kCtas * kCtas));
  // A producer and kBM / WM consumers, or two split ones.
  config.blockDim = dim3(128 * (1 + consumer_groups(kBM, kBN, kTransposed, kTmaStore)));
  config.dynamicSmemBytes = kSmem;
  config.stream = stream;
  config.attrs = &cluster_shape;
  config.numAttrs = kCtas > 1 ? 1 : 0;
  // A cluster's CTAs must sit in one GPC, so on a GPU whose GPCs have odd SM counts fewer
  // than sms / kCtas clusters fit at once: ask, rather than assume (once per device and
  // thread: the question costs more than a small launch).
  thread_local int asked_device = -1, clusters = 0;
  if (kCtas == 1) {
    clusters = sms;
  } else if (asked_device != device) {
    HM_CUDA_TRY(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    asked_device = device;
  }
  // The clusters that fit on the stream's SMs (the occupancy query knows only the GPU's).
  const int fit = std::min(clusters, sms / kCtas);
  if (fit < 1)
    return hm::Status::error(HM_VERSION ": not even one cluster of " +
                             std::to_string(kCtas) + " CTAs fits on this GPU");

  const int cluster_tiles = (tiles_m + kCtas - 1) / kCtas * tiles_n;
  const int k_tiles = int((p.k + BK - 1) / BK);
  const Schedule chosen = how.forced ? *how.forced
                                     : make_schedule(cluster_tiles, k_tiles, fit,
                                                     {kTransposed, kBN, kBM});
  const int pieces = split_k_pieces(chosen);  // of each stream-K tile, under split-K
  if (chosen.tiles != cluster_tiles || chosen.k_tiles != k_tiles || chosen.workers < 1 ||
      chosen.workers > fit || chosen.units > chosen.workers || chosen.units > kMaxUnits ||
      chosen.sk_tiles > chosen.tiles || (chosen.units > 0) != (chosen.sk_tiles > 0) ||
      chosen.min_slices < 1 || chosen.owner_extra < 0 ||
      (chosen.owner_extra > 0 &&  // split-K only, every piece a slice or more
       (pieces == 0 || chosen.k_tiles - chosen.owner_extra < pieces)))
    return hm::Status::error(HM_VERSION ": a schedule that does not fit this problem or GPU");
  // make_schedule() has filled the units' starts; a test's forced schedule, checked first
  // (with_unit_starts() divides by its K slices), has none yet.
  const Schedule sched = how.forced ? with_unit_starts(chosen) : chosen;
  const int ctas = kCtas * sched.workers;
  uint32_t* flags = nullptr;
  float4* partials = nullptr;
  if (sched.units > 0) {
    const size_t needed = workspace_for(sms, ctas);
    void* workspace = how.workspace;
    if (how.cached)
      HM_TRY(hm::stream_memory(stream, hm::StreamMemory::workspace, workspace_for(sms, sms),
                               &workspace));
    else if (!workspace || how.bytes < needed)
      return hm::Status::error(HM_VERSION ": a workspace of " + std::to_string(how.bytes) +
                               " bytes, where this launch needs " + std::to_string(needed));
    flags = static_cast<uint32_t*>(workspace);
    partials = reinterpret_cast<float4*>(static_cast<char*>(workspace) + flag_bytes(sms));
  }
  config.gridDim = dim3(unsigned(ctas));
  auto* run_kernel = &matmul_kernel<T, kBM, kBN, kTransposed, kTmaStore, kCtas, true>;
  if constexpr (!kTransposed) {
    if (sched.units == 0) {  // whole tiles: v7's kernel, without the stream-K code
      run_kernel = &matmul_kernel<T, kBM, kBN, false, kTmaStore, kCtas, false>;
      HM_TRY(hm::set_max_dynamic_smem(reinterpret_cast<const void*>(run_kernel), kSmem));
    }
  }
  uint32_t* counter = nullptr;  // the stream's, 0 between launches (whole tiles only)
  if (sched.units == 0 && !kTransposed) HM_TRY(hm::tile_counter(stream, &counter));
  HM_CUDA_TRY(cudaLaunchKernelEx(&config, run_kernel, tma_a, tma_b, tma_c, static_cast<T*>(c),
                                 int(p.m), int(p.n), tiles_m, tiles_n, sched, flags, partials,
                                 counter));
  return hm::Status();
}

Tiling choose_tiling(int64_t m, int64_t n, int64_t k, int sms) {
  const int64_t tiles = (m + BM - 1) / BM * ((n + BN - 1) / BN);  // v7's, of C
  Tiling t = {false, BN};
  if (m <= 64) t = {true, kSmallMNarrow && m <= 16 ? 16 : kSmallMNarrow && m <= 32 ? 32 : 64};
  else if (m > 128 && m <= BN) t = {true, BN};
  else if (m <= 128 && tiles * 4 < int64_t(sms) * 3) t = {true, 128};
  // 64 rows where N / 64 tiles fit on the SMs at once and K is short: every tile whole.
  if (t.transposed && kSmallM64Rows && (n + WM - 1) / WM <= sms &&
      k * std::max(t.bn, 128) <= kSmallM64RowsK * 128)
    t.bm = WM;
  return t;
}

bool pingpong_path(const hm::Problem& p, int sms) {
  if (choose_tiling(p.m, p.n, p.k, sms).transposed || p.n % 8 != 0 || p.k % 64 != 0)
    return false;
  const int64_t tiles = (p.m + BM - 1) / BM * ((p.n + BN - 1) / BN);  // of 128 × 256
  if (tiles > INT32_MAX) return false;  // run() reports it
  const int k_tiles = int((p.k + BK - 1) / BK);
  if (make_schedule(int(tiles), k_tiles, sms, {false, BN}).units != 0) return false;
  // Both kernels run their tiles in waves over the SMs; time in quarters of a K slice of a
  // 128 × 256 tile.  A cooperative tile costs its K slices and about one more for its
  // epilogue, which no MMA hides (the short-K family's measurement); a ping-pong tile has
  // 3/4 of the columns, so 3/4 of a slice per slice, and its epilogue runs under the other
  // warpgroup's MMAs.  The two warpgroups share the SM's tensor cores: their tiles add up.
  const int64_t ping_tiles = (p.m + BM - 1) / BM * ((p.n + kPingBN - 1) / kPingBN);
  const auto waves = [&](int64_t n) { return (n + sms - 1) / sms; };
  const int64_t cooperative = waves(tiles) * (k_tiles + 1) * 4;
  const int64_t pingpong = waves(ping_tiles) * k_tiles * (4 * kPingBN / BN);
  return pingpong <= cooperative;
}

/// launch() for element type T, with the kernel that `tiling`, C's store and the cluster's
/// `ctas` call for.
template <typename T>
hm::Status launch_for(const Tiling& tiling, bool tma_store, uint32_t ctas,
                      const CUtensorMap& tma_a, const CUtensorMap& tma_b,
                      const CUtensorMap& tma_c, void* c, const hm::Problem& q, int tiles_m,
                      int tiles_n, const Launch& how, cudaStream_t stream) {
  const auto small_m = [&](auto bm, auto bn) {
    if (tma_store)
      return launch<T, bm(), bn(), true, true, 1>(tma_a, tma_b, tma_c, c, q, tiles_m, tiles_n,
                                                  how, stream);
    return launch<T, bm(), bn(), true, false, 1>(tma_a, tma_b, tma_c, c, q, tiles_m, tiles_n,
                                                 how, stream);
  };
  const auto rows = [&](auto bn) {  // 64-row tiles, or 128
    if (tiling.bm == WM) return small_m(std::integral_constant<int, WM>(), bn);
    return small_m(std::integral_constant<int, BM>(), bn);
  };
  if (tiling.transposed && tiling.bn == 16) return rows(std::integral_constant<int, 16>());
  if (tiling.transposed && tiling.bn == 32) return rows(std::integral_constant<int, 32>());
  if (tiling.transposed && tiling.bn == 64) return rows(std::integral_constant<int, 64>());
  if (tiling.transposed && tiling.bn == 128) return rows(std::integral_constant<int, 128>());
  if (tiling.transposed) return rows(std::integral_constant<int, BN>());
  if (tma_store && ctas == 1)
    return launch<T, BM, BN, false, true, 1>(tma_a, tma_b, tma_c, c, q, tiles_m, tiles_n, how,
                                             stream);
  if (tma_store)
    return launch<T, BM, BN, false, true, kClusterM>(tma_a, tma_b, tma_c, c, q, tiles_m,
                                                     tiles_n, how, stream);
  return launch<T, BM, BN, false, false, kClusterM>(tma_a, tma_b, tma_c, c, q, tiles_m,
                                                    tiles_n, how, stream);
}

/// The ping-pong kernel on `p` (C through TMA stores: n % 8 == 0), on `sms` SMs; B's box is
/// kPingBN rows.
template <typename T>
hm::Status run_pingpong(const CUtensorMap& tma_a, const CUtensorMap& tma_b,
                        const CUtensorMap& tma_c, const hm::Problem& p, int sms,
                        cudaStream_t stream) {
  const int64_t tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + kPingBN - 1) / kPingBN;
  if (tiles_m * tiles_n > INT32_MAX)
    return hm::Status::error(HM_VERSION ": more than 2^31-1 tiles of C");
  const void* kernel = reinterpret_cast<const void*>(&matmul_kernel_pingpong<T>);
  HM_TRY(hm::set_max_dynamic_smem(kernel, kPingSmemBytes));
  uint32_t* counter = nullptr;  // the stream's, 0 between launches
  HM_TRY(hm::tile_counter(stream, &counter));
  const int grid = int(std::min<int64_t>(sms, tiles_m * tiles_n));
  matmul_kernel_pingpong<T><<<grid, kThreads, kPingSmemBytes, stream>>>(
      tma_a, tma_b, tma_c, int(p.k), int(tiles_m), int(tiles_n), counter);
  HM_CUDA_TRY(cudaGetLastError());
  return hm::Status();
}

/// The launcher behind the three matmul()s.
hm::Status run(const hm::Problem& p, const void* a, const void* b, void* c, const Launch& how,
               cudaStream_t stream) {
  HM_TRY(hm::validate_launch(p, a, b, c));
  int sms = 0;
  HM_TRY(hm::stream_sm_count(stream, &sms));  // fewer than the GPU's in a green context
  Launch with = how;
  with.sms = sms;
  // Small M: the kernel computes Cᵀ = B·Aᵀ, N × M, with B's rows along its BM side.
  const Tiling tiling = choose_tiling(p.m, p.n, p.k, sms);
  hm::Problem q = p;  // the kernel's problem
  if (tiling.transposed) {
    std::swap(q.m, q.n);
    std::swap(a, b);
  }
  const int64_t tiles_m = (q.m + tiling.bm - 1) / tiling.bm;
  const int64_t tiles_n = (q.n + tiling.bn - 1) / tiling.bn;
  if (tiles_m * tiles_n > INT32_MAX)
    return hm::Status::error(HM_VERSION ": more than 2^31-1 tiles of C");
  if (reinterpret_cast<uintptr_t>(how.workspace) % 16 != 0)
    return hm::Status::error(HM_VERSION ": the workspace must be 16-byte aligned");

  // TMA can store C only when its rows are a multiple of 16 bytes apart (n % 8 == 0);
  // otherwise the consumers store it themselves, as in v5.  The small-M kernel's boxes of C
  // are its tiles' chunks transposed: WM = 64 columns of N by 64 rows of M, the same box.
  const bool tma_store = (!tiling.transposed || kSmallMTmaStore) && p.n % 8 == 0;
  // Clusters pay where the consumers store C themselves or the rows of A and B are not whole
  // 128-byte lines (v7's chapter), and the small-M kernel's tiles share no operand worth
  // multicasting (its B, A, is a few rows).
  const bool whole_lines = p.k % 64 == 0;
  const uint32_t ctas = (tma_store && whole_lines) || tiling.transposed ? 1 : kClusterM;
  // Ping-pong where pingpong_path() takes it: v8 would keep whole 128 × 256 tiles and store
  // C through TMA, and the narrower tiles' waves take no longer; there each warpgroup takes
  // 128 × 192 tiles of its own (the chapter says why).  A schedule forced by a test is v8's.
  const bool pingpong = how.forced == nullptr && pingpong_path(p, sms);  // so tma_store
  // The kernel's B box: its share of a tile, or for the small-M kernel A's M rows rounded up
  // to 8 (the kernel's b_rows).
  const int b_box_rows =
      tiling.transposed ? small_m_b_rows(tiling.bn, int(q.n)) : tiling.bn / int(ctas);
  const uint32_t b_rows = pingpong ? uint32_t(kPingBN) : uint32_t(b_box_rows);

  CUtensorMap tma_a, tma_b, tma_c = {};
  HM_TRY(hm::make_tma_2d({.base = a, .dtype = q.dtype, .rows = uint64_t(q.m),
                          .cols = uint64_t(q.k), .row_stride_bytes = uint64_t(q.k) * 2,
                          .box_rows = uint32_t(tiling.bm), .box_cols = BK,
                          .swizzle = hm::Swizzle::b128},
                         &tma_a));
  HM_TRY(hm::make_tma_2d({.base = b, .dtype = q.dtype, .rows = uint64_t(q.n),
                          .cols = uint64_t(q.k), .row_stride_bytes = uint64_t(q.k) * 2,
                          .box_rows = b_rows, .box_cols = BK, .swizzle = hm::Swizzle::b128},
                         &tma_b));
  if (tma_store)
    HM_TRY(hm::make_tma_2d({.base = c, .dtype = p.dtype, .rows = uint64_t(p.m),
                            .cols = uint64_t(p.n), .row_stride_bytes = uint64_t(p.n) * 2,
                            .box_rows = WM, .box_cols = 64, .swizzle = hm::Swizzle::b128},
                           &tma_c));
  if (pingpong)
    return p.dtype == hm::DType::bf16
               ? run_pingpong<__nv_bfloat16>(tma_a, tma_b, tma_c, q, sms, stream)
               : run_pingpong<__half>(tma_a, tma_b, tma_c, q, sms, stream);
  const int tm = int(tiles_m), tn = int(tiles_n);
  if (p.dtype == hm::DType::bf16)
    return launch_for<__nv_bfloat16>(tiling, tma_store, ctas, tma_a, tma_b, tma_c, c, q, tm, tn,
                                     with, stream);
  return launch_for<__half>(tiling, tma_store, ctas, tma_a, tma_b, tma_c, c, q, tm, tn, with,
                            stream);
}

/// Computes C = A·Bᵀ on `stream`, or returns an error without launching anything; the
/// workspace, where the schedule needs one, is the stream's (hm::stream_memory()).
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  cudaStream_t stream) {
  return run(p, a, b, c, {nullptr, 0, true, nullptr, 0}, stream);
}

hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c, void* workspace,
                  size_t bytes, cudaStream_t stream) {
  return run(p, a, b, c, {workspace, bytes, false, nullptr, 0}, stream);
}

hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  const Schedule& forced, cudaStream_t stream) {
  return run(p, a, b, c, {nullptr, 0, true, &forced, 0}, stream);
}

}  // namespace v9_pingpong
