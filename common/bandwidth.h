/** @file
 *  The GPU's HBM read bandwidth, measured in the process that measures the matmuls: the
 *  roofline that memory-bound (decode) shapes are judged against.
 */
#pragma once

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace hm {

/// Measures how fast the current GPU reads its HBM, in TB/s (10^12 bytes per second), into
/// `*tbps`.
///
/// Why: a decode shape (a few rows of A against a large B) does a few flops per byte of B,
/// so its bound is the rate at which B streams in from HBM, not the tensor cores.  Its
/// hbm_tbps (Problem::min_bytes() over the median time) is judged against this figure,
/// measured on the same GPU at the same clocks and power cap, rather than against the
/// datasheet's peak, which no kernel reaches.
///
/// What: a buffer far above L2 (2 GiB, halved while the allocation fails, down to 8× L2 or
/// 256 MiB, whichever is larger), filled once with random data, then read whole by a
/// grid-stride kernel of 16-byte loads, one full-occupancy wave of CTAs; 3 untimed passes,
/// then the bytes read over the median of 10 passes timed with CUDA events.  Everything it
/// allocates is freed before it returns.  Runs on `stream`; an error (no GPU, no memory)
/// leaves `*tbps` unchanged.
Status measure_hbm_read(cudaStream_t stream, double* tbps);

}  // namespace hm
