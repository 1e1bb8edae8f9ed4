/** @file
 *  What v9_pingpong exports: the technique, launcher and launch configuration that the
 *  registry lists, and the wgmma descriptor encoder and the tile order that the host
 *  tests check without a GPU.  Defined in matmul.cu, which includes this header.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string_view>

#include "common/host_device.h"
#include "common/problem.h"
#include "common/registry.h"
#include "common/status.h"

namespace v9_pingpong {

/// What this version adds over the one before, in one line: the registry's technique
/// (`hopper-matmul list`, the recorded results).
inline constexpr std::string_view kTechnique =
    "ping-pong: the consumer warpgroups take whole tiles and turns on the tensor cores";

// Defined and documented in matmul.cu: the launcher and the launch configuration that the
// registry lists (CMake generates the registration from the version folders).
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  cudaStream_t stream);
extern const hm::KernelConfig kConfig;

// Host and device, so that the host tests check them without a GPU; see matmul.cu.
HM_HOST_DEVICE uint64_t smem_descriptor(uint32_t smem_addr);

/// Row and column (in tiles) of an output tile.
struct TileCoord {
  int m;  ///< tile row
  int n;  ///< tile column
};

HM_HOST_DEVICE TileCoord tile_coord(int tile, int tiles_m, int tiles_n, int group_m);
HM_HOST_DEVICE TileCoord cluster_tile_coord(int tile, int rank, int tiles_m, int tiles_n,
                                            int group_m, int cluster_m);

/// The most stream-K units a schedule holds the starts of (Schedule::start): more than the
/// SMs of any Hopper GPU (132 on an H100 SXM or H200).
constexpr int kMaxUnits = 160;

/// Where a stream-K unit begins: K slice `k` of stream-K tile `tile`.
struct UnitStart {
  int tile;  ///< the stream-K tile
  int k;     ///< the K slice in it, 0 ≤ k < k_tiles
};

/// How the work, `tiles` (cluster) tiles of `k_tiles` K slices each, is split among the
/// workers (clusters): the first `sk_tiles` tiles are shared by `units` stream-K units, one
/// per worker w < units, taken before the worker's whole tiles; every other tile is whole.
struct Schedule {
  int tiles;     ///< cluster tiles
  int k_tiles;   ///< K slices per tile
  int workers;   ///< clusters launched
  int sk_tiles;  ///< the first sk_tiles tiles are stream-K tiles; 0: v7's schedule
  int units;     ///< stream-K units, at most kMaxUnits
  int min_slices;  ///< the smallest piece of a shared tile, in K slices (kMinUnitSlices)
  /// Split-K only (each tile in units / sk_tiles pieces): the K slices a tile's first piece,
  /// its owner's, takes beyond an even share of the rest; 0 for an even split.
  int owner_extra;
  /// start[u] for u ≤ units: unit_begin(u) as a tile and a slice, start[units] the end of
  /// the last unit (with_unit_starts(); make_schedule() returns them filled).  The kernel
  /// reads its pieces and the fix-up's units from here: unit_begin()'s 64-bit divisions in
  /// every piece and fix-up cost 2.6–7.3% on the decode shapes split three ways along K.
  UnitStart start[kMaxUnits + 1];
};

/// One piece of a worker's work: K slices [k_begin, k_end) of cluster tile `tile`.  The piece
/// with k_begin == 0 owns the tile (it stores C); a piece with k_begin > 0 hands its partial
/// accumulators to the owner.
struct WorkUnit {
  int tile;     ///< the cluster tile, in the grouped order
  int k_begin;  ///< its first K slice in this piece
  int k_end;    ///< one past its last
};

/// How matmul() lays a problem on the kernel's tiles: as it is, in 128 × 256 tiles of C
/// (v7's), or transposed, the kernel computing Cᵀ = B·Aᵀ in `bm` × `bn` tiles, N along the
/// 128 (or 64) rows and M along `bn` = 16, 32, 64, 128 or 256 columns, the narrowest that
/// holds M.  Then each row of B, the weights, is read from HBM once, and A, a few rows, stays
/// in L2 for every CTA that reads it, where a few rows of A would leave most of a 128-row
/// tile idle.
struct Tiling {
  bool transposed;  ///< the kernel computes Cᵀ = B·Aᵀ
  int bn;           ///< columns of the kernel's tile: 16, 32, 64, 128 or 256
  int bm = 128;     ///< rows of the kernel's tile: 128, or 64 (transposed, one consumer)
};

/// The tiling matmul() takes for an M × N × K problem (`m`, `n`, `k`) on a GPU of `sms`
/// SMs: transposed for M ≤ 64 and 128 < M ≤ 256, and for M ≤ 128 where v7's tiles of C
/// would fill fewer than 3/4 of the SMs; else v7's.  Transposed tiles are 64 rows where
/// N / 64 of them fit on the SMs at once and K ≤ 8192 (≤ 4096 for 256 columns), else 128.
/// Measured on the H200 (docs/notes/performance-log.md): where v7's tiles already fill the
/// GPU, its 128 × 256 tiles beat the transposed kernel's 128 × 128 ones by 3–12% at M = 100
/// and 128; at 128 < M ≤ 256 the transposed tiles are as wide as v7's, as many, and read
/// each weight once: level with v7's to 9% faster.  At N = 5120, 64-row tiles, each whole on
/// one of 80 SMs, beat 128-row ones split three ways by 8–15% at K = 5120 and lose by 5–8%
/// at K = 13824, where the partial sums cost less than the SMs left idle.
Tiling choose_tiling(int64_t m, int64_t n, int64_t k, int sms);

/// Whether matmul() runs problem `p` on the ping-pong kernel on a GPU of `sms` SMs: where
/// the tiling is v7's (not transposed), C leaves through TMA (n % 8 == 0), the rows of A and
/// B are whole 128-byte lines (k % 64 == 0; otherwise v8's pairs, v7's chapter), v8's schedule
/// keeps whole 128 × 256 tiles, and a model of both kernels' waves of tiles says ping-pong's
/// 128 × 192 tiles, with their epilogues hidden, take no longer than v8's with theirs
/// exposed (at 4096³, for one, 704 of them make 5.3 waves, rounded up to 6, against v8's 3.9
/// of 512).  Elsewhere v8's kernels: the small-M kernel, the pairs of CTAs that store C
/// themselves, and stream-K units, whose tiles' K ranges differ.
bool pingpong_path(const hm::Problem& p, int sms);

HM_HOST_DEVICE Schedule make_schedule(int tiles, int k_tiles, int max_workers,
                                      const Tiling& tiling);
HM_HOST_DEVICE int64_t unit_begin(const Schedule& s, int unit);
HM_HOST_DEVICE Schedule with_unit_starts(Schedule s);
HM_HOST_DEVICE bool unit_empty(const Schedule& s, int unit);
HM_HOST_DEVICE bool work_unit(const Schedule& s, int worker, int u, WorkUnit* w);

/// Bytes of workspace that matmul() needs for problem `p` on a GPU of `sms` SMs: zero where
/// the schedule keeps whole tiles, else a 4-byte flag and a 64 KiB partial accumulator for
/// each consumer of each CTA, sms × 2 × (64 KiB + 4 B), rounded up to 128 bytes, at most.
/// matmul() without a workspace takes the stream's (hm::stream_memory()).
size_t workspace_bytes(const hm::Problem& p, int sms);

/// For the tests: matmul() with a given schedule, which must be for this problem's tiles and
/// K slices and fit on the GPU at once (workers × cluster CTAs co-resident), and the
/// stream's workspace.  Breaking stream-K on purpose (one-slice pieces, more workers than
/// slices, every boundary) needs a schedule make_schedule() would never choose.
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  const Schedule& forced, cudaStream_t stream);

/// matmul() with a caller's workspace of `bytes` bytes, zeroed before its first use and not
/// used by another launch at the same time; after each launch its flags are zero again.
/// Too small a workspace is an error, before anything is launched.
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c, void* workspace,
                  size_t bytes, cudaStream_t stream);

}  // namespace v9_pingpong
