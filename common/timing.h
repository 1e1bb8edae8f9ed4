/** @file
 *  CUDA-event timing: warm up, then time each launch with its own event pair, and report
 *  the median.  Callers interleave implementations in rounds (see the CLI's ladder) so
 *  that clock and power drift touches all of them alike.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "common/status.h"

namespace hm {

/// Launches the work for repetition `rep`; a caller rotates inputs with `rep`.
using LaunchFn = std::function<Status(int rep)>;

/// Runs `launch` `warmup` times untimed, then `reps` times, each between two events on
/// `stream`; appends the `reps` times in milliseconds to `samples_ms`.
Status time_launches(const LaunchFn& launch, int warmup, int reps, cudaStream_t stream,
                     std::vector<double>* samples_ms);

/// Median of `samples` (which it sorts); 0 for an empty list.
double median(std::vector<double> samples);

/// How many operand sets to rotate through so that one repetition's inputs are not
/// still in L2 from the last: enough sets to cover twice the L2 size, at most 16.
int rotation_sets(long long bytes_per_set, long long l2_bytes);

}  // namespace hm
