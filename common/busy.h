/** @file
 *  Another kernel that holds part of the GPU: the load under which `hopper-matmul --busy-sms`
 *  and the tests measure how a matmul shares the GPU.
 *
 *  A communication kernel beside a matmul (or any long kernel of another stream) keeps some
 *  SMs for itself.  A persistent matmul launched after it gets only the other SMs at first;
 *  CTAs that have no SM wait until the other kernel ends.  BusySms stands for that kernel: it
 *  launches one CTA per SM on `sms` SMs, on a stream of its own, each spinning until stop().
 */
#pragma once

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace hm {

/// One spinning CTA on each of `sms` SMs, from start() to stop().  Each CTA asks for all the
/// shared memory an SM has, so no other CTA shares its SM, and polls a flag in device
/// memory; start() returns once every CTA runs (an error after 5 s: fewer SMs were free).  It
/// ends on its own after 2 minutes, so a forgotten stop() (or a call that waits for the whole
/// device) costs time, not a hang.
class BusySms {
 public:
  BusySms() = default;
  BusySms(const BusySms&) = delete;
  BusySms& operator=(const BusySms&) = delete;
  ~BusySms();

  Status start(int sms);  ///< launches the CTAs and waits until all of them run
  Status stop();          ///< releases them and waits for the kernel to end
  int sms() const { return sms_; }  ///< the SMs held now, 0 when stopped

 private:
  cudaStream_t stream_ = nullptr;   // the busy kernel's
  cudaStream_t control_ = nullptr;  // the copy that stops it
  volatile int* running_ = nullptr;  // [b]: CTA b runs (mapped host memory)
  int* stop_ = nullptr;  // device memory: 1 stops the kernel
  int* one_ = nullptr;   // pinned host memory holding 1, the copy's source
  int sms_ = 0;
};

}  // namespace hm
