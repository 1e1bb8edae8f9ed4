#!/usr/bin/env bash
# A fast first look at new kernels on a GPU machine, before the full suite: every version
# (or those named) on a few small and ragged problems, in the debug tree (bounded mbarrier
# waits: a deadlock traps within seconds instead of hanging), each run time-limited.
#   scripts/smoke.sh [VERSION ...]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
cmake --preset debug >/dev/null && cmake --build --preset debug -j "$(nproc)" >/dev/null || exit 1
versions=("$@")
[ ${#versions[@]} -gt 0 ] || mapfile -t versions < <(build/debug/hopper-matmul list | awk 'NR > 1 {print $1}')
status=0
for v in "${versions[@]}"; do
  for shape in "--m 200 --n 264 --k 136" "--m 1 --n 1 --k 8" "--m 3072 --n 4096 --k 1032"; do
    # shellcheck disable=SC2086
    out=$(timeout 60 build/debug/hopper-matmul run --version "$v" $shape --warmup 0 --rounds 1 --settle-ms 0 \
      --reps 1 2>&1)
    rc=$?
    line=$(grep -E "^$v " <<<"$out" | sed 's/  */ /g')
    if [ $rc -ne 0 ]; then
      status=1
      echo "FAIL  $v $shape (exit $rc): ${line:-$(tail -3 <<<"$out")}"
    else
      echo "ok    $v $shape: $line"
    fi
  done
done
exit $status
