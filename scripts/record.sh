#!/usr/bin/env bash
# Records a measurement on a GPU machine, whole or in parts (for a limit on one call's time):
#   scripts/record.sh [--part ladder|sweeps|bench|sms|build|all] [--no-build]
#                     [--families LIST] [--impls LIST] [OUTDIR]
# (default: all, into results/h100 or results/h200, after GPU 0's name).  Every part first
# builds the release tree (nothing to do when it is up to date; --no-build skips that and
# uses the binaries already there), so each part runs alone:
#   ladder  the 8192³ ladder (sustained: each implementation timed after its clock has
#           settled) into OUTDIR/ladder_bf16.json and ladder_fp16.json, and a sustained sweep
#           of a few shapes into OUTDIR/sweep_bf16.json;
#   sweeps  a sustained sweep of the decode and waves shapes (bench/bench.cpp's families of
#           those names) for v7_multicast, v8_stream_k, v9_pingpong and cuBLAS into
#           OUTDIR/sweep_decode_bf16.json and sweep_decode_fp16.json, with 100 ms of settling
#           instead of 500 (a decode launch lasts tens of microseconds: 100 ms is thousands
#           of them) and the plain read of each shape's bytes beside them (--read-roofline
#           on); one of the short-K family for v8_stream_k, v9_pingpong and cuBLAS into
#           sweep_shortk_DTYPE.json; and one of the row-pitch family (K·2 bytes not a
#           multiple of 128, each beside its aligned neighbour) for v3_warp_specialized and
#           every version after it, and cuBLAS, into sweep_pitch_DTYPE.json (100 ms of
#           settling); and one of the mid-size family (tiles that do not fill the GPU, or
#           fill a wave or two and a part) for v6_tma_store and every version after it, and
#           cuBLAS, into sweep_midsize_DTYPE.json;
#   bench   the benchmark suite (every version and cuBLAS, bf16 and fp16, every shape; launch
#           by launch alternately with cuBLAS) into OUTDIR/bench.json, then the plots into
#           OUTDIR/plots and the README's results table (scripts/plot.py) when matplotlib is
#           there;
#   sms     scripts/fewer_sms.sh into OUTDIR/fewer_sms: v3 on and cuBLAS at 8192³ and 4096³
#           on the whole GPU, in green contexts of 120, 80 and 64 SMs and beside a kernel
#           holding 12 or 66 SMs, and the table the v4 chapter shows (table.json);
#   build   the build alone;
#   all     ladder, sweeps, bench, then sms.
# --families "ragged square" (bench only) records those benchmark families alone and
# merges them into OUTDIR/bench.json where that holds the same commit's others
# (scripts/bench_merge.py; otherwise bench.json becomes this part), and --impls "cublas
# v8_stream_k ..." (bench only) those implementations alone.  The stream is held through
# every launch call (bench/bench.cpp), so a benchmark of a kernel of tens of microseconds
# makes thousands of held launches: on the H200 the square, transformer and ragged families
# of every version took more than 9.5 minutes (687 of their 704 benchmarks in 570 s), and the
# decode family ~1.2 s per benchmark, ~11 minutes for every version.  Three parts that each
# fit a 10-minute call, as measured on the H200 in the last two recordings (the first part
# with the release build, the others with --no-build on the same machine):
#   --families "ragged square"                                           (364 s and 381 s)
#   --families transformer                                               (228 s and 236 s)
#   --families "decode waves shortk" --impls "cublas v7_multicast v8_stream_k v9_pingpong"
#                                                                        (318 s and 319 s)
#   --families pitch                              (528 benchmarks of 24 mid-size shapes; not
#                                                  yet timed: give it a call of its own)
#   --families midsize                            (286 benchmarks of 13 shapes; not yet timed)
# The decode, waves and short-K families are recorded for the rungs they are about (for every
# version they would not fit one call).  The plots are drawn once bench.json holds every
# family.  HM_BENCH_ARGS adds flags to hm_bench.  --part ladder's commands took 194 s on the
# H200 with --no-build; --part sweeps has not yet been timed alone.
#
# The commit the results name (hm::build_commit(), set when CMake configures): HM_GIT_COMMIT
# if set, else git's answer, else the .commit file beside the sources.  A copy of the tree
# without .git, such as a GPU machine's, has only the first: run it there as
#   HM_GIT_COMMIT=<the output of `git describe --always --dirty` here> scripts/record.sh …
# A commit ending in -dirty (uncommitted changes, or a copy's stale .git) is refused:
# HM_RECORD_DIRTY=1 records anyway, for a measurement that no chapter will cite.
set -euo pipefail
usage() {
  sed -n '2,4p' "$0" >&2
  exit 2
}
part=all
build=1
families=
impls=
out=
while [ $# -gt 0 ]; do
  case $1 in
    --part) [ $# -ge 2 ] || usage; part=$2; shift 2 ;;
    --part=*) part=${1#--part=}; shift ;;
    --no-build) build=0; shift ;;
    --families) [ $# -ge 2 ] || usage; families=$2; shift 2 ;;
    --impls) [ $# -ge 2 ] || usage; impls=$2; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "record.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$out" ] || usage; out=$1; shift ;;
  esac
done
case $part in
  ladder | sweeps | bench | sms | build | all) ;;
  *) echo "record.sh: --part must be ladder, sweeps, bench, sms, build or all, not '$part'" >&2
     usage ;;
esac
if { [ -n "$families" ] || [ -n "$impls" ]; } && [ "$part" != bench ]; then
  echo "record.sh: --families and --impls are for --part bench" >&2
  usage
fi
if [ -z "$out" ]; then  # results/<card>, from the name of GPU 0
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || true)
  case $gpu in
    *H100*) out=results/h100 ;;
    *H200*) out=results/h200 ;;
    *) echo "record.sh: GPU 0 is '${gpu:-not found}', neither an H100 nor an H200: name" \
            "OUTDIR" >&2
       exit 2 ;;
  esac
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."

if [ -z "${HM_GIT_COMMIT:-}" ]; then
  HM_GIT_COMMIT=$(git describe --always --dirty 2>/dev/null || true)
fi
case $HM_GIT_COMMIT in
  *-dirty)  # a recording names the commit whose kernels ran; a copy's .git may be stale
    if [ "${HM_RECORD_DIRTY:-0}" != 1 ]; then
      echo "record.sh: commit $HM_GIT_COMMIT: the results would name no commit that exists." \
           "Commit first and pass HM_GIT_COMMIT=\$(git describe --always --dirty) from the" \
           "checkout (HM_RECORD_DIRTY=1 records anyway)" >&2
      exit 2
    fi ;;
esac
if [ -n "$HM_GIT_COMMIT" ]; then
  export HM_GIT_COMMIT  # what CMake bakes into the binaries when it configures
  echo "record.sh: commit $HM_GIT_COMMIT"
elif [ -f .commit ]; then
  echo "record.sh: commit $(head -n 1 .commit) (from .commit)"
else
  echo "record.sh: no git, no HM_GIT_COMMIT, no .commit: the results will name commit" \
       "'unknown' (pass HM_GIT_COMMIT=\$(git describe --always --dirty) from a checkout)" >&2
fi

if [ "$build" = 1 ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release -j "$(nproc)" --target hm_bench hopper-matmul >/dev/null
fi
for binary in build/release/hopper-matmul build/release/hm_bench; do
  [ -x "$binary" ] || { echo "record.sh: no $binary: build first (drop --no-build)" >&2; exit 1; }
done

record_ladder() {
  for dtype in bf16 fp16; do
    build/release/hopper-matmul ladder --dtype "$dtype" --json "$out/ladder_$dtype.json"
  done
  build/release/hopper-matmul sweep --rounds 3 --json "$out/sweep_bf16.json" --shapes \
    2048x2048x2048,4096x4096x4096,16384x16384x16384,1024x4096x4096,16384x8192x8192,8192x8192x1024,333x12345x1024
}

# The shapes of hm_bench's families matching the regex FAMILIES (its cuBLAS bf16 names), as
# one MxNxK,… list, so that bench/bench.cpp alone names them; record.sh stops if there are
# none.  family_shapes FAMILIES WHAT
family_shapes() {
  local shapes
  shapes=$(build/release/hm_bench --benchmark_list_tests \
             --benchmark_filter="^matmul/cublas/bf16/$1/" |
           sed -E 's|^matmul/cublas/bf16/[a-z]+/([0-9]+x[0-9]+x[0-9]+)/.*|\1|' | paste -sd, -)
  [ -n "$shapes" ] || { echo "record.sh: hm_bench lists no $2 shapes" >&2; exit 1; }
  echo "$shapes"
}

# The versions hopper-matmul lists from vFIRST on, as one NAME,… list.  versions_from FIRST
versions_from() {
  build/release/hopper-matmul list |
    awk -v first="$1" 'NR > 1 && substr($1, 2) + 0 >= first {print $1}' | paste -sd, -
}

record_sweeps() {
  # bench/bench.cpp's decode family (1…256 tokens against a 5120-wide model's projections)
  # and waves family (a last wave of 128×256 tiles mostly empty), 29 shapes: 100 ms of
  # settling per implementation and round instead of 500 keeps the part short.
  local shapes
  shapes=$(family_shapes '(decode|waves)' "decode or waves")
  for dtype in bf16 fp16; do
    build/release/hopper-matmul sweep --dtype "$dtype" \
      --versions v7_multicast,v8_stream_k,v9_pingpong --rounds 3 --settle-ms 100 \
      --read-roofline on \
      --json "$out/sweep_decode_$dtype.json" --shapes "$shapes"
  done
  # The short-K family (ping-pong's), sustained, for v8, v9 and cuBLAS.
  shapes=$(family_shapes 'shortk' "short-K")
  for dtype in bf16 fp16; do
    build/release/hopper-matmul sweep --dtype "$dtype" --versions v8_stream_k,v9_pingpong \
      --rounds 3 --json "$out/sweep_shortk_$dtype.json" --shapes "$shapes"
  done
  # The row-pitch family, sustained, for the warp-specialized versions and cuBLAS: each
  # shape with rows of A and B 16 or 80 bytes past a multiple of 128 beside its neighbour.
  shapes=$(family_shapes 'pitch' "row-pitch")
  local versions
  versions=$(versions_from 3)
  for dtype in bf16 fp16; do
    build/release/hopper-matmul sweep --dtype "$dtype" --versions "$versions" --rounds 3 \
      --settle-ms 100 --json "$out/sweep_pitch_$dtype.json" --shapes "$shapes"
  done
  # The mid-size family, sustained, for v6 on (the rungs whose schedule is about it).
  shapes=$(family_shapes 'midsize' "mid-size")
  versions=$(versions_from 6)
  for dtype in bf16 fp16; do
    build/release/hopper-matmul sweep --dtype "$dtype" --versions "$versions" --rounds 3 \
      --json "$out/sweep_midsize_$dtype.json" --shapes "$shapes"
  done
}

# The distinct values of field FIELD of hm_bench's benchmark names (2: implementations,
# 4: families), space-separated; then each of WANTED must be one of them, or record.sh stops.
listed() {
  build/release/hm_bench --benchmark_list_tests | awk -F/ -v f="$1" '{print $f}' |
    LC_ALL=C sort -u | paste -sd' '
}
check_listed() {  # check_listed WHAT "KNOWN" WANTED...
  local what=$1 known=$2 x
  shift 2
  for x in "$@"; do
    case " $known " in
      *" $x "*) ;;
      *) echo "record.sh: no $what '$x' (hm_bench has: $known)" >&2; exit 2 ;;
    esac
  done
}

record_bench() {
  local target="$out/bench.json" filter=() all names
  all=$(listed 4)
  names=$(listed 2)
  # shellcheck disable=SC2086
  check_listed "benchmark family" "$all" $families
  # shellcheck disable=SC2086
  check_listed implementation "$names" $impls
  if [ -n "$families" ] || [ -n "$impls" ]; then
    local f=${families:-$all} i=${impls:-$names}
    target="$out/bench.part.json"
    filter=("--benchmark_filter=^matmul/(${i// /|})/[a-z0-9]+/(${f// /|})/")
  fi
  # shellcheck disable=SC2086
  build/release/hm_bench --benchmark_out="$target" --benchmark_out_format=json "${filter[@]}" \
    ${HM_BENCH_ARGS:-} | grep -E "^matmul/(cublas|v[0-9]+_[a-z_]+)/bf16/square/8192x8192x8192" || true
  if [ -n "$families" ] || [ -n "$impls" ]; then
    python3 scripts/bench_merge.py "$out/bench.json" "$target"
    rm -f "$target"
    local held
    held=$(python3 -c "import json, sys; sys.path.insert(0, 'scripts'); import bench_merge; \
print(' '.join(bench_merge.families_of(json.load(open(sys.argv[1])))))" "$out/bench.json")
    if [ "$held" != "$all" ]; then
      echo "record.sh: bench.json holds $held of $all: record the others (--families) for the plots"
      return 0
    fi
  fi
  if python3 -c "import matplotlib" 2>/dev/null; then
    local args=(--bench "$out/bench.json" --out "$out/plots")
    # The ladder adds the README's sustained column: from this recording, when it is there.
    [ -f "$out/ladder_bf16.json" ] && args+=(--ladder "$out/ladder_bf16.json")
    case $out in  # the README's table of this card
      "$(pwd)/results/h100" | "$(pwd)/results/h200") args+=(--readme README.md) ;;
    esac
    python3 scripts/plot.py "${args[@]}"
  else
    echo "matplotlib is missing: the plots were not drawn (sudo apt-get install python3-matplotlib)"
  fi
}

case $part in
  ladder) record_ladder ;;
  sweeps) record_sweeps ;;
  bench) record_bench ;;
  sms) scripts/fewer_sms.sh "$out/fewer_sms" --no-build ;;
  all)
    record_ladder
    record_sweeps
    record_bench
    scripts/fewer_sms.sh "$out/fewer_sms" --no-build ;;
  build) ;;
esac
