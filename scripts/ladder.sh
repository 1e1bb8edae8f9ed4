#!/usr/bin/env bash
# Builds the release tree and runs the main job: every version and cuBLAS on one problem
# (default 8192³ bf16).  Arguments go to `hopper-matmul ladder` (e.g. --dtype fp16 --json f).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/requirements.sh
hm_requirements
cmake --workflow --preset release
exec build/release/hopper-matmul ladder "$@"
