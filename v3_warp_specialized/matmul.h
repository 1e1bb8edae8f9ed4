/** @file
 *  What v3_warp_specialized exports: the technique, launcher and launch configuration that the
 *  registry lists, and the wgmma descriptor encoder that the host tests check without a
 *  GPU.  Defined in matmul.cu, which includes this header.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string_view>

#include "common/host_device.h"
#include "common/problem.h"
#include "common/registry.h"
#include "common/status.h"

namespace v3_warp_specialized {

/// What this version adds over the one before, in one line: the registry's technique
/// (`hopper-matmul list`, the recorded results).
inline constexpr std::string_view kTechnique =
    "TMA producer + wgmma consumer warpgroups, setmaxnreg";

// Defined and documented in matmul.cu: the launcher and the launch configuration that the
// registry lists (CMake generates the registration from the version folders).
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  cudaStream_t stream);
extern const hm::KernelConfig kConfig;

// Host and device, so that the host tests check them without a GPU; see matmul.cu.
HM_HOST_DEVICE uint64_t smem_descriptor(uint32_t smem_addr);

}  // namespace v3_warp_specialized
