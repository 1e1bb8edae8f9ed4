#include "common/tile_counter.h"

#include <map>
#include <mutex>
#include <thread>
#include <tuple>

namespace hm {

Status tile_counter(cudaStream_t stream, uint32_t** counter) {
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  // cudaStreamPerThread is one handle that names a different stream in each host thread.
  const std::thread::id thread =
      stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id();
  using Key = std::tuple<int, cudaStream_t, std::thread::id>;
  static std::mutex lock;
  static std::map<Key, uint32_t*> counters;
  const std::lock_guard<std::mutex> hold(lock);
  uint32_t*& entry = counters[Key{device, stream, thread}];
  if (entry == nullptr) {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    HM_CUDA_TRY(cudaStreamIsCapturing(stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone) {
      counters.erase(Key{device, stream, thread});
      return Status::error("the first launch of a persistent kernel on a stream allocates "
                           "its tile counter, which a CUDA graph cannot capture: launch once "
                           "on the stream before capturing");
    }
    void* memory = nullptr;
    HM_CUDA_TRY(cudaMallocAsync(&memory, sizeof(uint32_t), stream));
    HM_CUDA_TRY(cudaMemsetAsync(memory, 0, sizeof(uint32_t), stream));
    entry = static_cast<uint32_t*>(memory);
  }
  *counter = entry;
  return Status();
}

}  // namespace hm
