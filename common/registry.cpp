/** @file
 *  The version registry, over the table that CMake generates from the version folders
 *  (`generated/versions.cpp`: every `vN_name/matmul.h` included, one row per folder, in
 *  ladder order).  Adding a version is adding its folder; nothing here changes.
 */
#include "common/registry.h"

namespace hm {

std::span<const Version> versions() { return detail::version_table(); }

const Version* find_version(std::string_view name) {
  for (const Version& v : versions())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace hm
