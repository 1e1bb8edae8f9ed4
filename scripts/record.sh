#!/usr/bin/env bash
# Records a full measurement on a GPU machine, in one command:
#   scripts/record.sh [OUTDIR]          (default results/h200)
# builds the release tree, runs the benchmark suite (every version and cuBLAS, bf16 and
# fp16, every shape; launch by launch alternately with cuBLAS) into OUTDIR/bench.json, the
# 8192³ ladder (sustained: each implementation timed after its clock has settled) into
# OUTDIR/ladder_bf16.json and ladder_fp16.json, and a sustained sweep of a few shapes into
# OUTDIR/sweep_bf16.json; then draws the plots into OUTDIR/plots and regenerates the
# README's results table (scripts/plot.py) when matplotlib is there.
set -euo pipefail
out=${1:-results/h200}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target hm_bench hopper-matmul >/dev/null
for dtype in bf16 fp16; do
  build/release/hopper-matmul ladder --dtype "$dtype" --json "$out/ladder_$dtype.json"
done
build/release/hopper-matmul sweep --rounds 3 --json "$out/sweep_bf16.json" --shapes \
  2048x2048x2048,4096x4096x4096,16384x16384x16384,1024x4096x4096,16384x8192x8192,8192x8192x1024,333x12345x1024
build/release/hm_bench --benchmark_out="$out/bench.json" --benchmark_out_format=json \
  ${HM_BENCH_ARGS:-} | grep -E "^matmul/(cublas|v[0-9]+_[a-z_]+)/bf16/square/8192x8192x8192" || true
if python3 -c "import matplotlib" 2>/dev/null; then
  readme=()
  [ "$out" = "$(pwd)/results/h200" ] && readme=(--readme README.md)
  python3 scripts/plot.py --bench "$out/bench.json" --ladder "$out/ladder_bf16.json" \
    --out "$out/plots" "${readme[@]}"
else
  echo "matplotlib is missing: the plots were not drawn (sudo apt-get install python3-matplotlib)"
fi
