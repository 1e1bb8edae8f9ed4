#!/usr/bin/env bash
# How each version shares the GPU, in one command:
#   scripts/fewer_sms.sh OUTDIR [--no-build]
# times the persistent versions (v4 and after), v3 (one CTA per tile) and cuBLAS at 8192³ and
# 4096³ (bf16; HM_SMS_SHAPES, HM_SMS_DTYPES to change) on the whole GPU, in green contexts of
# 120, 80 and 64 SMs (HM_SMS_GREEN), and beside another kernel holding 12 and 66 SMs
# (HM_SMS_BUSY); one `hopper-matmul run` JSON per case in OUTDIR, then the table of
# scripts/fewer_sms.py: each version's slowdown against the whole GPU, beside the ideal
# (132 / SMs) in green contexts and beside cuBLAS's own slowdown under the other kernel.
set -euo pipefail
out=${1:?usage: scripts/fewer_sms.sh OUTDIR [--no-build]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
if [ "${2:-}" != --no-build ]; then
  cmake --preset release >/dev/null && cmake --build --preset release -j "$(nproc)" >/dev/null
fi
bin=build/release/hopper-matmul
versions=$($bin list | awk 'NR > 1 && $1 >= "v3" {print $1}' | paste -sd, -)
protocol=(--rounds "${HM_SMS_ROUNDS:-3}" --reps 20 --settle-ms "${HM_SMS_SETTLE_MS:-300}")
for dtype in ${HM_SMS_DTYPES:-bf16}; do
  for size in ${HM_SMS_SHAPES:-8192 4096}; do
    shape=(--m "$size" --n "$size" --k "$size" --dtype "$dtype")
    name=${dtype}_${size}
    $bin run --version "$versions" "${shape[@]}" "${protocol[@]}" --json "$out/${name}_all.json"
    for s in ${HM_SMS_GREEN:-120 80 64}; do
      $bin run --version "$versions" "${shape[@]}" "${protocol[@]}" --sms "$s" \
        --json "$out/${name}_sms$s.json"
    done
    for b in ${HM_SMS_BUSY:-12 66}; do
      $bin run --version "$versions" "${shape[@]}" "${protocol[@]}" --busy-sms "$b" \
        --json "$out/${name}_busy$b.json"
    done
  done
done
python3 scripts/fewer_sms.py --json "$out/table.json" "$out"/*_*.json | tee "$out/table.txt"
