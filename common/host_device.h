/** @file
 *  HM_HOST_DEVICE: `__host__ __device__` under nvcc, nothing under a host compiler.  A
 *  version's header declares its host-and-device helpers with it, so that the `.cu` that
 *  defines them (nvcc) and a test that calls them (g++) read the same declaration.
 */
#pragma once

#ifdef __CUDACC__
/// The execution space of a function that runs on the host and on the GPU.
#define HM_HOST_DEVICE __host__ __device__
#else
#define HM_HOST_DEVICE
#endif
