/** @file
 *  CUDA results as Status values.
 */
#include "common/status.h"

#include <string>

namespace hm {

Status cuda_status(cudaError_t result, const char* call, const char* file, int line) {
  if (result == cudaSuccess) return Status();
  return Status::error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                       " failed: " + cudaGetErrorName(result) + " (" +
                       cudaGetErrorString(result) + ")");
}

}  // namespace hm
