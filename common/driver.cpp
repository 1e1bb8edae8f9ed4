#include "common/driver.h"

#include <string>

namespace hm {

Status driver_entry_point(const char* name, int version, void** fn) {
  void* ptr = nullptr;
  cudaDriverEntryPointQueryResult query{};
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &ptr, version, cudaEnableDefault, &query);
  if (e == cudaSuccess && (query != cudaDriverEntryPointSuccess || ptr == nullptr))
    e = cudaErrorNotSupported;
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status::error(std::string("the CUDA driver has no ") + name + " (needs CUDA " +
                         std::to_string(version / 1000) + "." +
                         std::to_string(version % 1000 / 10) + "): " + cudaGetErrorName(e) +
                         " (" + cudaGetErrorString(e) + ")");
  }
  *fn = ptr;
  return Status();
}

}  // namespace hm
