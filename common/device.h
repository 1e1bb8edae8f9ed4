/** @file
 *  The GPU and its environment: what it is, whether our kernels can run on it, and
 *  the facts every recorded result carries (clocks, driver, CUDA and library versions).
 */
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/status.h"

namespace hm {

/// What a result was measured on.  Clocks come from NVML when the driver provides it
/// (read at query time: under load they move with power and temperature); -1 = unknown.
struct DeviceInfo {
  int device = 0;                  ///< CUDA device index
  std::string name;                ///< e.g. "NVIDIA H200"
  std::string pci_bus_id;          ///< e.g. "0000:00:06.0"
  int cc_major = 0;                ///< compute capability, major
  int cc_minor = 0;                ///< compute capability, minor
  int sm_count = 0;                ///< streaming multiprocessors
  long long l2_bytes = 0;          ///< L2 cache size
  long long global_memory_bytes = 0;  ///< device memory size
  int smem_per_block_optin = 0;    ///< shared memory one block may opt in to, bytes
  int sm_clock_max_mhz = -1;       ///< peak SM clock (from the runtime)
  int sm_clock_now_mhz = -1;       ///< current SM clock (NVML)
  int mem_clock_now_mhz = -1;      ///< current memory clock (NVML)
  int power_limit_w = -1;          ///< enforced power limit (NVML)
  int driver_version = 0;          ///< CUDA version the driver supports, e.g. 13000
  int runtime_version = 0;         ///< CUDA runtime this binary uses
  std::string cublas_version;      ///< cuBLAS this binary uses, e.g. "13.0.2"
  std::string driver_release;      ///< NVIDIA driver release, e.g. "580.159.04" (NVML)
};

/// Fills `info` for `device`; an error when there is no GPU or no driver.
Status query_device(int device, DeviceInfo* info);

/// require_sm90(), then query_device() for the current device.
Status query_current_sm90(DeviceInfo* info);

/// Ok when the current device can run sm_90a code (compute capability exactly 9.0);
/// otherwise an error saying what was found: no driver, a driver too old for this build's
/// CUDA runtime, no GPU, or a GPU of another compute capability ("sm_86 …").
Status require_sm90();

/// Why the CUDA runtime found no GPU, from its error and the CUDA versions of the driver
/// (`cudaDriverGetVersion`, 0 without one) and of the runtime: "no NVIDIA driver is
/// installed", "the NVIDIA driver supports CUDA 12.4, older than …", "… found no GPU".
std::string no_gpu_reason(cudaError_t error, int driver_version, int runtime_version);

/// Raises a kernel's dynamic shared-memory limit to `bytes` once per (kernel, device).
Status set_max_dynamic_smem(const void* kernel, int bytes);

/// The commit this binary was built from (`git describe --always --dirty`), or "unknown".
const char* build_commit();

/// A one-line human description: "NVIDIA H200, 132 SMs, sm_90, SM 1980/1980 MHz, …".
std::string describe(const DeviceInfo& info);

/// The same facts as a JSON object (no trailing newline).
std::string to_json(const DeviceInfo& info);

/// Escapes `text` for use inside a JSON string literal.
std::string json_escape(const std::string& text);

}  // namespace hm
