#!/usr/bin/env bash
# Builds the release tree and runs every test: host tests, the compiler resource check, the
# SASS check (needs cuobjdump) and the GPU tests (SKIPPED, with the reason, without an
# sm_90 GPU).  This is the command CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/requirements.sh
hm_requirements
cmake --workflow --preset test
