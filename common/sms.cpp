#include "common/sms.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "common/driver.h"

namespace hm {
namespace {

Status driver_status(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return Status();
  return Status::error(std::string(call) + " failed: CUresult " + std::to_string(int(r)));
}

}  // namespace

Status stream_sm_count(cudaStream_t stream, int* sms) {
  int device = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device));
  static PFN_cuStreamGetGreenCtx_v12040 get_green = nullptr;
  static PFN_cuGreenCtxGetDevResource_v12040 get_resource = nullptr;
  static const Status found = [] {
    HM_TRY(driver_entry_point("cuStreamGetGreenCtx", 12040, &get_green));
    return driver_entry_point("cuGreenCtxGetDevResource", 12040, &get_resource);
  }();
  if (!found.ok()) return Status();  // a driver before green contexts: the device's SMs
  CUgreenCtx green = nullptr;
  HM_TRY(driver_status(get_green(reinterpret_cast<CUstream>(stream), &green),
                       "cuStreamGetGreenCtx"));
  if (green == nullptr) return Status();  // not in a green context: every SM
  CUdevResource resource{};
  HM_TRY(driver_status(get_resource(green, &resource, CU_DEV_RESOURCE_TYPE_SM),
                       "cuGreenCtxGetDevResource"));
  *sms = int(resource.sm.smCount);
  return Status();
}

GreenContextStream::~GreenContextStream() {
  if (stream_) cudaStreamDestroy(stream_);
  PFN_cuGreenCtxDestroy_v12040 destroy = nullptr;
  if (green_ && driver_entry_point("cuGreenCtxDestroy", 12040, &destroy).ok())
    destroy(static_cast<CUgreenCtx>(green_));
}

Status GreenContextStream::create(int min_sms) {
  int device = 0, all = 0;
  HM_CUDA_TRY(cudaGetDevice(&device));
  HM_CUDA_TRY(cudaDeviceGetAttribute(&all, cudaDevAttrMultiProcessorCount, device));
  if (min_sms < 1 || min_sms > all)
    return Status::error("a green context of " + std::to_string(min_sms) +
                         " SMs on a GPU of " + std::to_string(all));
  HM_CUDA_TRY(cudaFree(nullptr));  // the primary context exists before the driver calls
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetDevResource_v12040 get_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 describe = nullptr;
  PFN_cuGreenCtxCreate_v12040 create_green = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 create_stream = nullptr;
  HM_TRY(driver_entry_point("cuDeviceGet", 2000, &device_get));
  HM_TRY(driver_entry_point("cuDeviceGetDevResource", 12040, &get_resource));
  HM_TRY(driver_entry_point("cuDevSmResourceSplitByCount", 12040, &split));
  HM_TRY(driver_entry_point("cuDevResourceGenerateDesc", 12040, &describe));
  HM_TRY(driver_entry_point("cuGreenCtxCreate", 12040, &create_green));
  HM_TRY(driver_entry_point("cuGreenCtxStreamCreate", 12050, &create_stream));
  CUdevice dev = 0;
  HM_TRY(driver_status(device_get(&dev, device), "cuDeviceGet"));
  CUdevResource input{}, group{};
  HM_TRY(driver_status(get_resource(dev, &input, CU_DEV_RESOURCE_TYPE_SM),
                       "cuDeviceGetDevResource"));
  unsigned int groups = 1;
  HM_TRY(driver_status(split(&group, &groups, &input, nullptr, 0, unsigned(min_sms)),
                       "cuDevSmResourceSplitByCount"));
  if (groups < 1)
    return Status::error("cuDevSmResourceSplitByCount: no group of " + std::to_string(min_sms) +
                         " SMs");
  CUdevResourceDesc desc = nullptr;
  HM_TRY(driver_status(describe(&desc, &group, 1), "cuDevResourceGenerateDesc"));
  CUgreenCtx green = nullptr;
  HM_TRY(driver_status(create_green(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
                       "cuGreenCtxCreate"));
  green_ = green;
  CUstream stream = nullptr;
  HM_TRY(driver_status(create_stream(&stream, green, CU_STREAM_NON_BLOCKING, 0),
                       "cuGreenCtxStreamCreate"));
  stream_ = reinterpret_cast<cudaStream_t>(stream);
  sms_ = int(group.sm.smCount);
  return Status();
}

}  // namespace hm
