#!/usr/bin/env bash
# Records a full measurement on a GPU machine, in one command:
#   scripts/record.sh [OUTDIR]          (default results/h200)
# builds the release tree, runs the benchmark suite (every version and cuBLAS, bf16 and
# fp16, every shape) into OUTDIR/bench.json and the 8192³ bf16 ladder into
# OUTDIR/ladder_bf16.json, then draws the plots into OUTDIR/plots and regenerates the
# README's results table (scripts/plot.py) when matplotlib is there.
set -euo pipefail
out=${1:-results/h200}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target hm_bench hopper-matmul >/dev/null
build/release/hopper-matmul ladder --json "$out/ladder_bf16.json"
build/release/hm_bench --benchmark_out="$out/bench.json" --benchmark_out_format=json \
  ${HM_BENCH_ARGS:-} | grep -E "^matmul/(cublas|v[0-9]+_[a-z_]+)/bf16/square/8192x8192x8192" || true
if python3 -c "import matplotlib" 2>/dev/null; then
  readme=()
  [ "$out" = "$(pwd)/results/h200" ] && readme=(--readme README.md)
  python3 scripts/plot.py --bench "$out/bench.json" --out "$out/plots" "${readme[@]}"
else
  echo "matplotlib is missing: the plots were not drawn (sudo apt-get install python3-matplotlib)"
fi
