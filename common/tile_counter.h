/** @file
 *  The counter from which a persistent kernel's CTAs take their tiles.
 *
 *  A persistent kernel that gives CTA b the tiles b, b + grid, … assumes that all its CTAs
 *  run from the start.  When another kernel holds some SMs, the CTAs that find no SM start
 *  only once an SM frees, and their fixed share of the tiles then runs after everyone
 *  else's: the launch takes up to twice as long.  Taking tiles from a counter instead (each
 *  CTA an atomic add per tile), a CTA that starts late finds the tiles already taken and
 *  ends at once.  The kernels set the counter back to 0 at the end of each launch, so one
 *  counter serves every launch on a stream, and one stream's launches never share it with
 *  another's, which may run at the same time.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"

namespace hm {

/// The tile counter of `stream` on the current device, 0 between launches: one 32-bit word
/// per device and stream (and per host thread for cudaStreamPerThread), allocated and zeroed
/// in stream order on the stream's first launch and kept for the process.  The first call
/// for a stream that is being captured into a CUDA graph is an error: the graph would own
/// the allocation (launch once on the stream before capturing).
Status tile_counter(cudaStream_t stream, uint32_t** counter);

}  // namespace hm
