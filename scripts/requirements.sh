#!/usr/bin/env bash
# Checks what building this project needs from the system, and prints the exact line that
# installs whatever is missing.  Sourced by scripts/ladder.sh and scripts/test.sh.
# GoogleTest is checked by CMake itself, which prints its install line the same way.

hm_requirements() {
  local missing=() problems=()
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  command -v nvcc >/dev/null ||
    problems+=("nvcc not found: install the CUDA toolkit 12.8 or newer (https://developer.nvidia.com/cuda-downloads), e.g. 'sudo apt-get install -y cuda-toolkit-13-0' from NVIDIA's repository, and put its bin/ on PATH")
  command -v ninja >/dev/null || missing+=(ninja-build)
  command -v python3 >/dev/null || missing+=(python3)
  command -v g++ >/dev/null || missing+=(g++)
  command -v git >/dev/null || missing+=(git)
  if ! command -v cmake >/dev/null; then
    missing+=(cmake)
  else
    local version
    version=$(cmake --version | head -1 | awk '{print $3}')
    if [ "$(printf '%s\n3.25\n' "$version" | sort -V | head -1)" != "3.25" ]; then
      problems+=("cmake $version is older than 3.25: 'python3 -m pip install --user cmake' or Kitware's apt repository (https://apt.kitware.com) gives a newer one")
    fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    problems+=("missing: ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}")
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    printf 'hopper-matmul: %s\n' "${problems[@]}" >&2
    return 1
  fi
}
