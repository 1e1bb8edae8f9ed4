/** @file
 *  The version registry: every `vN_*` kernel, its one-line technique and its launcher.
 *  The command-line tool, the tests and the benchmarks iterate this list, and a test
 *  fails when a `vN_*` folder is missing from it.
 */
#pragma once

#include <span>
#include <string_view>

#include "common/problem.h"

namespace hm {

/// One registered version.
struct Version {
  std::string_view name;       ///< the folder and namespace, e.g. "v0_mma_sync"
  std::string_view technique;  ///< what it adds, in one line
  Launcher launch;             ///< `name::matmul`
};

/// Every version, in ladder order.
std::span<const Version> versions();

/// The version called `name`, or nullptr.
const Version* find_version(std::string_view name);

}  // namespace hm
