/** @file
 *  CUDA-event timing: warm up, then time each launch with its own event pair, and report
 *  the median.  Callers interleave implementations in rounds (see the CLI's ladder) so
 *  that clock and power drift touches all of them alike.
 *
 *  An event is stamped when the GPU reaches it in its stream.  Launches queued back to back
 *  (the ladder's rounds of 20) keep the stream busy, so each start event is reached when
 *  the launch before it ends, and the time between a launch's events is the GPU's.  A launch
 *  timed alone on an idle stream (the benchmark's, one at a time) is another matter: the GPU
 *  stamps the start event as soon as it is enqueued, then waits for the host to finish the
 *  launch call, so the time would include the host's work, which differs between
 *  implementations.  TimingOptions::hold_us keeps the stream busy through the call instead.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "common/status.h"

namespace hm {

/// Launches the work for repetition `rep`; a caller rotates inputs with `rep`.
using LaunchFn = std::function<Status(int rep)>;

/// How time_launches() times each launch.
struct TimingOptions {
  /// Before each timed launch, hold the stream for this many microseconds with a one-thread
  /// kernel enqueued ahead of the start event, so that the host has made the launch call and
  /// enqueued the stop event before the GPU stamps the start: the time is then the GPU's
  /// alone.  0: no hold, for launches queued back to back.
  int hold_us = 0;
  /// If not null, the host's time in each timed launch call, in milliseconds, is appended
  /// (the launcher's work: tensor maps, checks, the launch itself; not the kernel's).
  std::vector<double>* host_ms = nullptr;
  /// If not null, counts the launches made again because their call outlasted the hold.
  int* retries = nullptr;
  /// One event pair around all `reps` launches, with no event between them, and one sample,
  /// their mean: the throughput of launches back to back, as a program's stream of layers
  /// runs them, where a launch may overlap the one before (programmatic dependent launch).
  bool batch = false;
};

/// Runs `launch` `warmup` times untimed, then `reps` times, each between two events on
/// `stream`; appends the `reps` times in milliseconds to `samples_ms` (with `batch`, one
/// sample: the mean of the `reps` launches between one pair of events).  With a hold, a launch
/// whose call took the host longer than the hold is made again with a hold four times as long
/// (four tries, then an error): its time would include the host's.
Status time_launches(const LaunchFn& launch, int warmup, int reps, cudaStream_t stream,
                     std::vector<double>* samples_ms, const TimingOptions& options = {});

/// Median of `samples` (which it sorts); 0 for an empty list.
double median(std::vector<double> samples);

/// How many operand sets to rotate through so that one repetition's inputs are not
/// still in L2 from the last: enough sets to cover twice the L2 size, at most 16.
int rotation_sets(long long bytes_per_set, long long l2_bytes);

}  // namespace hm
