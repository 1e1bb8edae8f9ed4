/** @file
 *  GPU and environment queries.  NVML is opened at run time (like the driver), so a
 *  machine without a GPU driver still runs every binary.
 */
#include "common/device.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#ifndef HM_GIT_COMMIT
/// The commit the build came from; CMakeLists.txt defines it for this file.
#define HM_GIT_COMMIT "unknown"
#endif

namespace hm {

namespace {

/// The few NVML entry points we read clocks and the power limit with, opened at run time.
struct Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*by_pci_bus_id)(const char*, Device*) = nullptr;
  int (*clock_info)(Device, int, unsigned*) = nullptr;
  int (*power_limit)(Device, unsigned*) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  bool ok = false;

  static const Nvml& get() {
    static const Nvml nvml = [] {
      Nvml n;
      void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!lib) return n;
      auto sym = [&](auto* fn, const char* name) {
        *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
        return *fn != nullptr;
      };
      n.ok = sym(&n.init, "nvmlInit_v2") && sym(&n.by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") &&
             sym(&n.clock_info, "nvmlDeviceGetClockInfo") &&
             sym(&n.power_limit, "nvmlDeviceGetEnforcedPowerLimit") &&
             sym(&n.driver_version, "nvmlSystemGetDriverVersion") && n.init() == 0;
      return n;
    }();
    return nvml;
  }
};

constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;

}  // namespace

Status query_device(int device, DeviceInfo* info) {
  cudaDeviceProp prop{};
  HM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  DeviceInfo d;
  d.device = device;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.global_memory_bytes = static_cast<long long>(prop.totalGlobalMem);
  d.smem_per_block_optin = static_cast<int>(prop.sharedMemPerBlockOptin);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess)
    d.sm_clock_max_mhz = khz / 1000;
  HM_CUDA_TRY(cudaDriverGetVersion(&d.driver_version));
  HM_CUDA_TRY(cudaRuntimeGetVersion(&d.runtime_version));
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    d.cublas_version = std::to_string(major) + "." + std::to_string(minor) + "." +
                       std::to_string(patch);
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) d.pci_bus_id = bus;

  const Nvml& nvml = Nvml::get();
  Nvml::Device handle = nullptr;
  if (nvml.ok && !d.pci_bus_id.empty() && nvml.by_pci_bus_id(bus, &handle) == 0) {
    unsigned v = 0;
    if (nvml.clock_info(handle, kNvmlClockSm, &v) == 0) d.sm_clock_now_mhz = int(v);
    if (nvml.clock_info(handle, kNvmlClockMem, &v) == 0) d.mem_clock_now_mhz = int(v);
    if (nvml.power_limit(handle, &v) == 0) d.power_limit_w = int(v / 1000);
    char release[96] = {};
    if (nvml.driver_version(release, sizeof release) == 0) d.driver_release = release;
  }
  *info = std::move(d);
  return Status();
}

namespace {

/// "CUDA 12.4" for 12040.
std::string cuda_version_text(int version) {
  return "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

std::string no_gpu_reason(cudaError_t error, int driver_version, int runtime_version) {
  const std::string code = std::string(" (") + cudaGetErrorName(error) + ")";
  if (error == cudaErrorInsufficientDriver && driver_version == 0)
    return "no NVIDIA driver is installed (libcuda.so.1 was not found)" + code;
  if (error == cudaErrorInsufficientDriver)
    return "the NVIDIA driver supports " + cuda_version_text(driver_version) +
           ", older than the " + cuda_version_text(runtime_version) +
           " runtime of this build: install a driver for " +
           cuda_version_text(runtime_version) + " or newer" + code;
  if (error == cudaErrorNoDevice)
    return "the NVIDIA driver (" + cuda_version_text(driver_version) + ") found no GPU" + code;
  return std::string(cudaGetErrorString(error)) + code;
}

Status require_sm90() {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for the caller's next call
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);  // 0 where no driver is installed
    cudaRuntimeGetVersion(&runtime);
    cudaGetLastError();
    return Status::error("no usable CUDA GPU: " + no_gpu_reason(e, driver, runtime) +
                         "; these kernels need an H100 or H200 (sm_90)");
  }
  int major = 0, minor = 0;
  HM_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) {
    cudaDeviceProp prop{};
    HM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    return Status::error("GPU " + std::to_string(device) + " is " + prop.name + " (sm_" +
                         std::to_string(major) + std::to_string(minor) +
                         "); these kernels are built for sm_90a (wgmma, TMA, setmaxnreg) and "
                         "run only on compute capability 9.0: an H100 or H200");
  }
  return Status();
}

Status query_current_sm90(DeviceInfo* info) {
  HM_TRY(require_sm90());
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  return query_device(device, info);
}

Status set_max_dynamic_smem(const void* kernel, int bytes) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> done;  // (kernel, device)
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard lock(mutex);
  if (done.count({kernel, device})) return Status();
  HM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  done.insert({kernel, device});
  return Status();
}

const char* build_commit() { return HM_GIT_COMMIT; }

namespace {
std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

std::string describe(const DeviceInfo& d) {
  std::ostringstream s;
  s << d.name << ", " << d.sm_count << " SMs, sm_" << d.cc_major << d.cc_minor << ", SM clock ";
  if (d.sm_clock_now_mhz >= 0) s << d.sm_clock_now_mhz << " MHz now, ";
  s << d.sm_clock_max_mhz << " MHz max";
  if (d.power_limit_w >= 0) s << ", power limit " << d.power_limit_w << " W";
  s << ", L2 " << d.l2_bytes / (1024 * 1024) << " MiB, driver "
    << (d.driver_release.empty() ? "?" : d.driver_release) << " (CUDA "
    << version_text(d.driver_version) << "), runtime " << version_text(d.runtime_version)
    << ", cuBLAS " << d.cublas_version << ", commit " << build_commit();
  return s.str();
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string to_json(const DeviceInfo& d) {
  std::ostringstream s;
  s << "{\"name\": \"" << json_escape(d.name) << "\", \"pci_bus_id\": \"" << d.pci_bus_id
    << "\", \"compute_capability\": \"" << d.cc_major << "." << d.cc_minor
    << "\", \"sm_count\": " << d.sm_count << ", \"l2_bytes\": " << d.l2_bytes
    << ", \"global_memory_bytes\": " << d.global_memory_bytes
    << ", \"sm_clock_max_mhz\": " << d.sm_clock_max_mhz
    << ", \"sm_clock_now_mhz\": " << d.sm_clock_now_mhz
    << ", \"mem_clock_now_mhz\": " << d.mem_clock_now_mhz
    << ", \"power_limit_w\": " << d.power_limit_w << ", \"driver_release\": \""
    << json_escape(d.driver_release) << "\", \"driver_cuda_version\": \""
    << version_text(d.driver_version) << "\", \"runtime_version\": \""
    << version_text(d.runtime_version) << "\", \"cublas_version\": \"" << d.cublas_version
    << "\", \"commit\": \"" << json_escape(build_commit()) << "\"}";
  return s.str();
}

}  // namespace hm
