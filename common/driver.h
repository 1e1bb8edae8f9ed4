/** @file
 *  CUDA driver functions, fetched at run time (`cudaGetDriverEntryPointByVersion`), so that
 *  no binary links libcuda and a machine without a driver gets an error, not a failed start.
 */
#pragma once

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace hm {

/// The driver entry point `name` of at least CUDA `version` (12040 for 12.4) into `*fn`, or
/// an error naming it, the version it needs and CUDA's reason.
Status driver_entry_point(const char* name, int version, void** fn);

/// The same, typed: `fn` is a pointer to a PFN_… of cudaTypedefs.h.
template <typename Fn>
Status driver_entry_point(const char* name, int version, Fn* fn) {
  void* ptr = nullptr;
  HM_TRY(driver_entry_point(name, version, &ptr));
  *fn = reinterpret_cast<Fn>(ptr);
  return Status();
}

}  // namespace hm
