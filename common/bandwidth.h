/** @file
 *  The GPU's HBM read bandwidth, measured in the process that measures the matmuls: the
 *  roofline that memory-bound (decode) shapes are judged against.
 */
#pragma once

#include <cuda_runtime_api.h>

#include "common/problem.h"
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

/// Launches, on `stream`, one read of problem `p`'s fewest bytes, Problem::min_bytes(): A
/// and B once each, and C's bytes read where a matmul writes them, by measure_hbm_read()'s
/// kernel, one full-occupancy wave of CTAs on the stream's SMs.  Returns without waiting.
///
/// Why: measure_hbm_read() reads gigabytes, and a decode shape's launch reads tens of
/// megabytes, so its launch and the first bytes' latency are a larger part of its time.
/// `hopper-matmul sweep --read-roofline` times this beside the matmuls, on the same operand
/// sets and in the same rounds: how close to the read bandwidth a launch that moves the
/// problem's bytes and computes nothing comes.  The operands are validated as matmul()'s
/// are (validate_problem(), validate_operands()); an error launches nothing.
Status read_problem_bytes(const Problem& p, const void* a, const void* b, const void* c,
                          cudaStream_t stream);

}  // namespace hm
