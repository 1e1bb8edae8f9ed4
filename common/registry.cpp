/** @file
 *  The version registry.  Adding a version: create `vN_name/matmul.cu` with
 *  `vN_name::matmul`, declare it below and add its row.  A test fails when a `vN_*`
 *  folder has no row here.
 */
#include "common/registry.h"

#include <iterator>

// Each version's launcher and launch configuration, defined in its own vN_*/matmul.cu.
namespace v0_mma_sync {
hm::Status matmul(const hm::Problem&, const void* a, const void* b, void* c, cudaStream_t);
extern const hm::KernelConfig kConfig;
}
namespace v1_wgmma {
hm::Status matmul(const hm::Problem&, const void* a, const void* b, void* c, cudaStream_t);
extern const hm::KernelConfig kConfig;
}
namespace v2_pipeline {
hm::Status matmul(const hm::Problem&, const void* a, const void* b, void* c, cudaStream_t);
extern const hm::KernelConfig kConfig;
}
namespace v3_warp_specialized {
hm::Status matmul(const hm::Problem&, const void* a, const void* b, void* c, cudaStream_t);
extern const hm::KernelConfig kConfig;
}
namespace v4_persistent {
hm::Status matmul(const hm::Problem&, const void* a, const void* b, void* c, cudaStream_t);
extern const hm::KernelConfig kConfig;
}
namespace v5_async_wgmma {
hm::Status matmul(const hm::Problem&, const void* a, const void* b, void* c, cudaStream_t);
extern const hm::KernelConfig kConfig;
}

namespace hm {

namespace {
constexpr Version kVersions[] = {
    {"v0_mma_sync", "TMA + mbarrier loads, ldmatrix + mma.sync, one stage", &v0_mma_sync::matmul, &v0_mma_sync::kConfig},
    {"v1_wgmma", "wgmma from shared-memory descriptors, one stage", &v1_wgmma::matmul, &v1_wgmma::kConfig},
    {"v2_pipeline", "STAGES-deep TMA ring, one full barrier per stage", &v2_pipeline::matmul, &v2_pipeline::kConfig},
    {"v3_warp_specialized", "TMA producer + wgmma consumer warpgroups, setmaxnreg",
     &v3_warp_specialized::matmul, &v3_warp_specialized::kConfig},
    {"v4_persistent", "one CTA per SM, grouped tile order, barriers across tiles",
     &v4_persistent::matmul, &v4_persistent::kConfig},
    {"v5_async_wgmma", "wait_group 1, TMA-store epilogue, B multicast to CTA pairs",
     &v5_async_wgmma::matmul, &v5_async_wgmma::kConfig},
};
}  // namespace

std::span<const Version> versions() { return kVersions; }

const Version* find_version(std::string_view name) {
  for (const Version& v : kVersions)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace hm
