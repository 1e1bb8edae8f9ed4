#!/usr/bin/env bash
# Measures alternative tile configurations of one version, each against cuBLAS in its own
# process, on a GPU machine:
#   scripts/tune.sh OUTDIR VERSION NAME=FLAGS [NAME=FLAGS ...]
# e.g.
#   scripts/tune.sh out v2_pipeline s4="-DHM_STAGES=4" s3="-DHM_STAGES=3"
# Each variant is built (in parallel, hopper-matmul only) into build/tune/NAME with FLAGS
# added to VERSION's matmul.cu alone (CMake's HM_TUNE_VERSION and HM_TUNE_FLAGS: the tuning
# macros carry no version in their name, so the other versions keep their defaults), then run
# one after another with `hopper-matmul ladder` at 8192³ bf16 (override with HM_TUNE_ARGS), so
# that every variant is measured against cuBLAS and against the previous version in the same
# process.  The log is appended to OUTDIR/tune.txt, each variant's JSON results (result.json,
# bench.json, sweep_PASS.json) are copied to OUTDIR/NAME, so that a device call brings them
# back, and a table of ratios is printed last.
#
# With HM_TUNE_BENCH set to a benchmark filter (e.g. 'bf16/square/8192x8192x8192'), each
# variant's hm_bench is built too and run with that filter and HM_TUNE_REPS repetitions
# (default 3): the benchmark times every launch against a cuBLAS launch right after it,
# which is steadier under the power cap than the ladder's runs of 20.  Its medians are
# printed per variant as well.
#
# With HM_TUNE_SWEEP set to shapes (MxNxK,...; bf16, or HM_TUNE_DTYPE), every variant also
# runs `hopper-matmul sweep --versions VERSION --rounds 3 --settle-ms 100` on them, in
# HM_TUNE_PASSES passes (default 2), each pass running every variant once in its own
# process: one process's spread on a decode shape is several percent, so a gain must show
# in every pass.  Even then, two builds whose measured kernels did the same work differed by
# up to 2.7% on one shape in all three passes, and by 0.5% in the geometric mean
# (docs/notes/performance-log.md, "The spread: one kernel measured twice", 2026-12-02): add a
# control variant that changes nothing (e.g. same="-DHM_X_SAME=1") and read a gain against
# its spread.  A table of ratios to cuBLAS per shape, variant and pass is printed last, with
# each pass's geometric mean.  HM_TUNE_LADDER=0 leaves the 8192³ ladder out, and
# HM_TUNE_SWEEP_FLAGS adds options to the sweep (e.g. "--timing batch": launches back to
# back between one pair of events, where a launch may overlap the one before).
set -uo pipefail

out=${1:?usage: scripts/tune.sh OUTDIR VERSION NAME=FLAGS ...}
version=${2:?usage: scripts/tune.sh OUTDIR VERSION NAME=FLAGS ...}
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
log="$out/tune.txt"
args=${HM_TUNE_ARGS:---m 8192 --n 8192 --k 8192 --dtype bf16}
jobs=$(nproc)

bench=OFF
[ -n "${HM_TUNE_BENCH:-}" ] && bench=ON
mkdir -p build/tune
names=()
for variant in "$@"; do
  name=${variant%%=*}
  flags=${variant#*=}
  names+=("$name")
  (
    cmake -S . -B "build/tune/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90a -DHM_BUILD_TESTS=OFF -DHM_BUILD_BENCH=$bench \
      -DHM_TUNE_VERSION="$version" "-DHM_TUNE_FLAGS=$flags" &&
      cmake --build "build/tune/$name" --target hopper-matmul ${HM_TUNE_BENCH:+hm_bench} -j "$jobs"
  ) >"build/tune/$name.log" 2>&1 &
done
wait

for variant in "$@"; do
  name=${variant%%=*}
  flags=${variant#*=}
  {
    echo "== $version $name: $flags"
    grep -E "warning|error" "build/tune/$name.log" || true
  } >>"$log"
  if [ ! -x "build/tune/$name/hopper-matmul" ]; then
    cat "build/tune/$name.log" >>"$log"
    continue
  fi
  if [ "${HM_TUNE_LADDER:-1}" != 0 ]; then
    # shellcheck disable=SC2086
    build/tune/"$name"/hopper-matmul ladder $args \
      --json "build/tune/$name/result.json" >>"$log" 2>&1
  fi
  if [ -n "${HM_TUNE_BENCH:-}" ]; then
    build/tune/"$name"/hm_bench --benchmark_filter="$HM_TUNE_BENCH" \
      --benchmark_repetitions="${HM_TUNE_REPS:-3}" --benchmark_report_aggregates_only=true \
      --benchmark_out="build/tune/$name/bench.json" --benchmark_out_format=json >>"$log" 2>&1
  fi
done

if [ -n "${HM_TUNE_SWEEP:-}" ]; then
  for pass in $(seq 1 "${HM_TUNE_PASSES:-2}"); do
    for variant in "$@"; do
      name=${variant%%=*}
      [ -x "build/tune/$name/hopper-matmul" ] || continue
      echo "== $version $name: sweep, pass $pass" >>"$log"
      # shellcheck disable=SC2086
      build/tune/"$name"/hopper-matmul sweep --dtype "${HM_TUNE_DTYPE:-bf16}" \
        --versions "$version" --rounds 3 --settle-ms 100 --shapes "$HM_TUNE_SWEEP" \
        ${HM_TUNE_SWEEP_FLAGS:-} \
        --json "build/tune/$name/sweep_$pass.json" >>"$log" 2>&1
    done
  done
fi

for variant in "$@"; do
  name=${variant%%=*}
  mkdir -p "$out/$name"
  for f in build/tune/"$name"/result.json build/tune/"$name"/bench.json \
      build/tune/"$name"/sweep_*.json; do
    if [ -f "$f" ]; then cp "$f" "$out/$name/"; fi
  done
done

echo "-- tune $version ($args)"
python3 - "$version" "$@" <<'PY'
import json, os, sys
version = sys.argv[1]
for variant in sys.argv[2:]:
    name, flags = variant.split("=", 1)
    path = f"build/tune/{name}/result.json"
    if os.environ.get("HM_TUNE_LADDER", "1") == "0":
        break  # no ladder was run
    if not os.path.exists(path):
        print(f"{name:12s} {flags:60s} no result (build or run failed)")
        continue
    results = json.load(open(path))["runs"][0]["results"]
    index = next(i for i, x in enumerate(results) if x["name"] == version)
    r, before = results[index], results[index - 1]
    ratio = r.get("ratio_to_cublas")
    if ratio is None:
        print(f"{name:12s} {flags:60s} {r.get('error', '')}")
        continue
    text = f"{ratio:.3f} of cuBLAS, {r['tflops']:.1f} TFLOPS"
    if before["name"] != "cublas":
        text += f"; {before['name']} {before['ratio_to_cublas']:.3f}, ratio to it {ratio / before['ratio_to_cublas']:.3f}"
    print(f"{name:12s} {flags:60s} {text}  {'pass' if r['pass'] else 'FAIL'}")
for variant in sys.argv[2:]:
    name = variant.split("=", 1)[0]
    path = f"build/tune/{name}/bench.json"
    if not os.path.exists(path):
        continue
    medians = [b for b in json.load(open(path))["benchmarks"] if b.get("aggregate_name") == "median"]
    cells = [f"{b['run_name'].split('/')[1]}/{'/'.join(b['run_name'].split('/')[2:5])} "
             f"{b.get('ratio_to_cublas', float('nan')):.3f}" for b in medians if "cublas" not in b["run_name"]]
    print(f"{name:12s} benchmark medians, ratio to cuBLAS: " + ", ".join(cells))
PY
if [ -n "${HM_TUNE_SWEEP:-}" ]; then
  python3 - "$version" "${HM_TUNE_PASSES:-2}" "$@" <<'PY'
import os, sys
sys.path.insert(0, "scripts")
from hm_results import geomean, load
version, passes = sys.argv[1], int(sys.argv[2])
columns, table, shapes = [], {}, []
for variant in sys.argv[3:]:
    name = variant.split("=", 1)[0]
    for p in range(1, passes + 1):
        path = f"build/tune/{name}/sweep_{p}.json"
        if not os.path.exists(path):
            continue
        columns.append(f"{name}/{p}")
        for r in load(path)[0]:
            shape = f"{r['m']}x{r['n']}x{r['k']}"
            if shape not in shapes:
                shapes.append(shape)
            if r["impl"] == version:
                table[(shape, columns[-1])] = (r["ratio"], r["passed"])
print(f"-- sweep of {version}, ratio to cuBLAS (sustained), variant/pass")
print("shape".ljust(18) + "".join(c.rjust(12) for c in columns))
for shape in shapes:
    cells = [table.get((shape, c)) for c in columns]
    print(shape.ljust(18) + "".join((f"{v[0]:.3f}" + ("" if v[1] else "!")).rjust(12)
                                    if v else "—".rjust(12) for v in cells))
means = [geomean([v[0] for (_, col), v in table.items() if col == c]) for c in columns]
print("geomean".ljust(18) + "".join(f"{m:.3f}".rjust(12) for m in means))
print("(! marks a result that failed its check)")
PY
fi
