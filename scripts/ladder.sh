#!/usr/bin/env bash
# Builds the release tree and runs the main job: every version and cuBLAS on one problem
# (default 8192³ bf16).  Arguments go to `hopper-matmul ladder` (e.g. --dtype fp16 --json f).
# It first checks for a GPU the kernels can run on (scripts/gpu_probe.py): without one it
# says what is missing, and what works without a GPU, before building anything.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/requirements.sh
hm_requirements
help=0
for arg in "$@"; do [[ "$arg" != --help && "$arg" != -h ]] || help=1; done
if [ "$help" = 0 ]; then
  if ! gpu=$(python3 scripts/gpu_probe.py); then
    cat >&2 <<END
ladder.sh: $gpu
The ladder times the kernels, so it needs an H100 or H200 (sm_90) with its driver.
Without one, the rest works:
  scripts/test.sh   builds everything and runs every test that needs no GPU (the host
                    tests, the compiler's resource check, the docs); the GPU tests say
                    SKIPPED, with this reason
  scripts/docs.sh   the site: every chapter, diff and plot of the recorded runs
  results/h200/     the recorded runs, which README.md's table and plots are drawn from
END
    exit 1
  fi
  echo "ladder.sh: $gpu"
fi
cmake --workflow --preset release
exec build/release/hopper-matmul ladder "$@"
