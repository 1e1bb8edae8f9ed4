#include "common/tile_counter.h"

#include "common/stream_memory.h"

namespace hm {

Status tile_counter(cudaStream_t stream, uint32_t** counter) {
  void* memory = nullptr;
  HM_TRY(stream_memory(stream, StreamMemory::tile_counter, sizeof(uint32_t), &memory));
  *counter = static_cast<uint32_t*>(memory);
  return Status();
}

}  // namespace hm
