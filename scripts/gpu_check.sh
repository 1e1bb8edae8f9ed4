#!/usr/bin/env bash
# The whole check on a machine with an sm_90 GPU, in one command:
#   scripts/gpu_check.sh OUTDIR
# builds the release and debug trees with every core, runs the full test suite (release),
# runs compute-sanitizer memcheck, racecheck and synccheck on small ragged problems for
# every version (HM_CHECK_VERSIONS: a space-separated subset), n % 8 == 0 and != 0, so both
# epilogues, one small-M problem, one with several tiles per CTA and one with partial tiles
# in every dimension (debug tree: -lineinfo and bounded mbarrier waits),
# then the ladder at 8192³ in bf16 and fp16 (HM_CHECK_LADDER=0: not).  Logs and the ladder JSON
# land in OUTDIR; a short summary is printed last.  Exits non-zero if any step failed.
set -uo pipefail

out=${1:?usage: scripts/gpu_check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
jobs=$(nproc)
summary=()
failed=0
note() { summary+=("$1"); }
step() {  # step NAME LOG COMMAND... : run, log, record pass/fail
  local name=$1 log=$2
  shift 2
  local start=$SECONDS
  if "$@" >>"$log" 2>&1; then
    note "ok    $name ($((SECONDS - start)) s)"
  else
    note "FAIL  $name ($((SECONDS - start)) s, see $(basename "$log"))"
    failed=1
    return 1
  fi
}

{
  echo "== $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv 2>&1
  nvcc --version | tail -2
  cmake --version | head -1
} >"$out/build.log" 2>&1

step "configure + build release ($jobs jobs)" "$out/build.log" \
  bash -c "cmake --preset release && cmake --build --preset release -j $jobs" || true
step "configure + build debug (bounded waits)" "$out/build.log" \
  bash -c "cmake --preset debug && cmake --build --preset debug -j $jobs" || true
cat build/release/ptxas/*.txt >"$out/ptxas.txt" 2>/dev/null

if [ -x build/release/hopper-matmul ]; then
  step "test suite (ctest -j 8)" "$out/ctest.log" \
    ctest --preset release -j 8 --timeout 600 --output-junit "$out/ctest.xml" \
    --test-output-size-passed 4000000 --test-output-size-failed 4000000 || true
  { grep -E "tests passed|tests failed|Failed\)|\*\*\*Timeout" "$out/ctest.log" | tail -n 25
    python3 scripts/test_summary.py "$out/ctest.xml"
  } | sed 's/^/      /' >"$out/ctest_summary.tmp"
fi

if [ -x build/debug/hopper-matmul ]; then
  versions=${HM_CHECK_VERSIONS:-$(build/debug/hopper-matmul list | awk 'NR > 1 {print $1}')}
  # 200 × 264 takes the TMA-store epilogue of v6+, 200 × 263 (rows not 16 bytes apart) the
  # register stores and, in v7+, the clusters; 64 × 264 × 1032 is small M, which v8 computes
  # as Cᵀ with its tiles split among stream-K units (17 K slices), and 64 × 1024 × 4096 too,
  # in pieces of 8 slices that two consumers split, 4 each, and add up.  From the fuzz's edges:
  # 1000 × 12296 × 520 is 392 tiles of 128 × 256, about three per CTA of the persistent
  # versions (whole tiles in v8 too), the last column of tiles 8 wide, 9 K slices; and
  # 129 × 257 × 72 has partial tiles in M, N and K (v8: Cᵀ in three 128 × 256 tiles, its
  # small-M kernel); 136 × 1280 × 4160 is Cᵀ in ten 128 × 256 tiles of 65 K slices, each
  # split eight ways (v8's fix-up of 256-column partials, which 256×5120×5120 takes with
  # three pieces: here an owner adds seven); 264 × 520 × 4136 has rows of A and B 80 bytes
  # past a multiple of 128 (8272 bytes), no row on a 128-byte line.
  # Only the version's own kernels are checked (--kernel-name), and the runs take
  # --reference cpu: the float64 CPU product, no cuBLAS in the process.  Under
  # racecheck, cuBLAS's own kernels fault ("Internal Sanitizer Error: failed to handle
  # a hardware exception", then an illegal address) when --kernel-name leaves them
  # unchecked, with or without our kernels in the process (the performance log, "racecheck's
  # internal error is cuBLAS's", 2026-12-01); checked against the CPU product instead, every
  # version runs clean.
  for v in $versions; do
    for shape in 200x264x136 200x263x136 64x264x1032 64x1024x4096 1000x12296x520 \
        129x257x72 136x1280x4160 264x520x4136; do
      IFS=x read -r m n k <<<"$shape"
      for tool in memcheck racecheck synccheck; do
        echo "== compute-sanitizer --tool $tool: $v, $shape" >>"$out/sanitizer.log"
        run=(compute-sanitizer --tool "$tool" --kernel-name "kns=$v" --error-exitcode 1
             build/debug/hopper-matmul run --version "$v" --m "$m" --n "$n" --k "$k"
             --reference cpu --warmup 0 --rounds 1 --reps 1 --settle-ms 0)
        step "compute-sanitizer $tool $v $shape" "$out/sanitizer.log" "${run[@]}" || true
      done
    done
  done
fi

if [ -x build/release/hopper-matmul ] && [ "${HM_CHECK_LADDER:-1}" != 0 ]; then
  for dtype in bf16 fp16; do
    step "ladder 8192^3 $dtype" "$out/ladder.txt" \
      build/release/hopper-matmul ladder --dtype "$dtype" --json "$out/ladder_$dtype.json" || true
  done
fi

echo
echo "================ gpu_check summary ================"
printf '%s\n' "${summary[@]}"
[ -f "$out/ctest_summary.tmp" ] && cat "$out/ctest_summary.tmp" && rm -f "$out/ctest_summary.tmp"
python3 scripts/resource_check.py check build/release/ptxas/*.txt 2>/dev/null | sed 's/^/      /'
echo "-- ladder"
grep -vE "^==" "$out/ladder.txt" 2>/dev/null | grep -E "^(GPU|Problem|Protocol|version|cublas|v[0-9])"
exit $failed
