/** @file
 *  Device memory that a launcher keeps for the launches of one stream: the persistent
 *  kernels' tile counter (tile_counter.h) and the stream-K workspace.
 *
 *  Launches on one stream run one after another, so they can share such memory, provided
 *  each launch leaves it as it found it (the kernels set their counters and flags back to
 *  0); launches on two streams may run at the same time, and never share it.  The handle
 *  cudaStreamPerThread names a different stream in each host thread, so for it the memory
 *  is kept per host thread too.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/status.h"

namespace hm {

/// What the memory of a stream is for: each use has its own block.
enum class StreamMemory {
  tile_counter,  ///< a persistent kernel's tile counter (tile_counter())
  workspace,     ///< a stream-K launch's flags and partial tiles
};

/// At least `bytes` bytes of device memory for `use` by the launches on `stream` on the
/// current device, all zero when first handed out: one block per device, stream, host
/// thread (for cudaStreamPerThread) and use, kept for the process.  A block is allocated
/// and zeroed in stream order (no launch waits for it), and replaced by a larger one, also
/// zeroed, when a launch asks for more; the smaller one is never freed, since a CUDA graph
/// captured earlier may still use it.  An allocation while `stream` is being captured into
/// a CUDA graph is an error (the graph would own the memory): launch once on the stream
/// before capturing.
Status stream_memory(cudaStream_t stream, StreamMemory use, size_t bytes, void** memory);

}  // namespace hm
