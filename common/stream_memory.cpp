#include "common/stream_memory.h"

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

namespace hm {

Status stream_memory(cudaStream_t stream, StreamMemory use, size_t bytes, void** memory) {
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  // cudaStreamPerThread is one handle that names a different stream in each host thread.
  const std::thread::id thread =
      stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id();
  using Key = std::tuple<int, cudaStream_t, std::thread::id, StreamMemory>;
  static std::mutex lock;
  static std::map<Key, std::pair<void*, size_t>> blocks;  // address and size
  const std::lock_guard<std::mutex> hold(lock);
  std::pair<void*, size_t>& block = blocks[Key{device, stream, thread, use}];
  if (block.second < bytes) {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    HM_CUDA_TRY(cudaStreamIsCapturing(stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone)
      return Status::error(std::string("the first launch on a stream allocates its ") +
                           (use == StreamMemory::tile_counter ? "tile counter"
                                                              : "stream-K workspace") +
                           ", which a CUDA graph cannot capture: launch once on the stream "
                           "before capturing" +
                           (use == StreamMemory::workspace ? ", or pass a workspace" : ""));
    void* fresh = nullptr;
    HM_CUDA_TRY(cudaMallocAsync(&fresh, bytes, stream));
    HM_CUDA_TRY(cudaMemsetAsync(fresh, 0, bytes, stream));
    block = {fresh, bytes};
  }
  *memory = block.first;
  return Status();
}

}  // namespace hm
