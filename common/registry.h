/** @file
 *  The version registry: every `vN_*` kernel, its one-line technique and its launcher.
 *  The command-line tool, the tests and the benchmarks iterate this list.  Nothing here
 *  names a version: CMake writes the table from the version folders, each of which exports
 *  its row's parts (`kTechnique`, `matmul`, `kConfig`) in its own header, `matmul.h`.
 */
#pragma once

#include <span>
#include <string_view>

#include "common/problem.h"

namespace hm {

/// How a version launches its kernel: listed by `hopper-matmul list` and in the docs.
struct KernelConfig {
  int threads;      ///< threads per CTA
  int smem_bytes;   ///< dynamic shared memory per CTA, bytes
  int bm;           ///< rows of C per CTA tile
  int bn;           ///< columns of C per CTA tile
  int bk;           ///< K per shared-memory stage
  int stages;       ///< K slices resident in shared memory
  int ctas_per_sm;  ///< CTAs per SM that __launch_bounds__ asks ptxas to make room for
  int cluster_ctas = 1;  ///< CTAs per thread-block cluster (1: no clusters)
};

/// One registered version.
struct Version {
  std::string_view name;       ///< the folder and namespace, e.g. "v0_mma_sync"
  std::string_view technique;  ///< what it adds, in one line
  Launcher launch;             ///< `name::matmul`
  const KernelConfig* config;  ///< `name::kConfig`
};

/// Every version, in ladder order.
std::span<const Version> versions();

/// The version called `name`, or nullptr.
const Version* find_version(std::string_view name);

namespace detail {
/// The table behind versions(): one row per `v*_*/matmul.cu`, in ladder order, defined in
/// the build's `generated/versions.cpp`, which CMake writes from common/versions.cpp.in.
std::span<const Version> version_table();
}  // namespace detail

}  // namespace hm
