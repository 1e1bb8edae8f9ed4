#!/usr/bin/env bash
# Builds the release tree and runs every test: host tests, the compiler resource check, the
# SASS check (needs cuobjdump), the docs and the GPU tests (SKIPPED, with the reason,
# without an sm_90 GPU).  This is the command CI runs.
#   scripts/test.sh
# It says first whether this machine has a GPU the kernels can run on, and ends with what
# passed and failed and every reason a test was skipped, with how many it skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/requirements.sh
hm_requirements
if gpu=$(python3 scripts/gpu_probe.py); then has_gpu=1; else has_gpu=0; fi
echo "test.sh: $gpu"
cmake --workflow --preset release
if [ "$has_gpu" = 0 ]; then
  gpu_tests=$(build/release/tests/hm_gpu_tests --gtest_list_tests | grep -c '^  ' || true)
  echo "test.sh: so the $gpu_tests GPU tests will report SKIPPED, in one CTest entry" \
    "(gpu_tests); everything else runs"
fi
jobs=$(nproc)
[ "$jobs" -le 8 ] || jobs=8  # GPU tests share one GPU: 8 at once is what gpu_check.sh runs
junit=$PWD/build/release/Testing/junit.xml
status=0
ctest --preset release -j "$jobs" --output-junit "$junit" --test-output-size-passed 4000000 \
  --test-output-size-failed 4000000 || status=$?
python3 scripts/test_summary.py "$junit"
exit "$status"
