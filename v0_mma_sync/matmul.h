/** @file
 *  What v0_mma_sync exports: the technique, launcher and launch configuration that the
 *  registry lists.  Defined in matmul.cu, which includes this header.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

#include "common/problem.h"
#include "common/registry.h"
#include "common/status.h"

namespace v0_mma_sync {

/// What this version adds over the one before, in one line: the registry's technique
/// (`hopper-matmul list`, the recorded results).
inline constexpr std::string_view kTechnique =
    "TMA + mbarrier loads, ldmatrix + mma.sync, one stage";

// Defined and documented in matmul.cu: the launcher and the launch configuration that the
// registry lists (CMake generates the registration from the version folders).
hm::Status matmul(const hm::Problem& p, const void* a, const void* b, void* c,
                  cudaStream_t stream);
extern const hm::KernelConfig kConfig;

}  // namespace v0_mma_sync
