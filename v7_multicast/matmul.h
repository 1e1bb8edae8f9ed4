/** @file
 *  What v7_multicast exports: the technique, launcher and launch configuration that the
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

namespace v7_multicast {

/// What this version adds over the one before, in one line: the registry's technique
/// (`hopper-matmul list`, the recorded results).
inline constexpr std::string_view kTechnique =
    "2-CTA clusters: B loaded once per pair, with TMA multicast (where n % 8 != 0)";

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

}  // namespace v7_multicast
