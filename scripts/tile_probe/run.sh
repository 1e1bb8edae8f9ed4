#!/usr/bin/env bash
# Per-tile timestamps of v3 and v4, or per-CTA ones of v8's stream-K units, on a GPU machine:
#   scripts/tile_probe/run.sh OUTDIR [M N K [v3v4|v8]]   (default 8192 8192 8192 v3v4)
# e.g. scripts/tile_probe/run.sh out 64 5120 5120 v8 for a decode shape.  Builds the release
# library, writes instrumented copies of the kernels (scripts/tile_probe/make.py), compiles
# the driver, runs it and prints the summary.
set -euo pipefail
out=${1:?usage: scripts/tile_probe/run.sh OUTDIR [M N K [v3v4|v8]]}
m=${2:-8192} n=${3:-8192} k=${4:-8192} set=${5:-v3v4}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target hopper_matmul >/dev/null
python3 scripts/tile_probe/make.py build/tile_probe >/dev/null
nvcc -std=c++20 -O3 --generate-code=arch=compute_90a,code=sm_90a -Xptxas=--warn-on-spills \
  -I. -Ibuild/tile_probe scripts/tile_probe/probe.cu build/release/libhopper_matmul.a \
  -lcublas -lcublasLt -o build/tile_probe/probe
build/tile_probe/probe "$out" "$m" "$n" "$k" "$set"
cat "$out/times.txt"
python3 scripts/tile_probe/analyze.py "$out" "$m" "$n" "$k"
