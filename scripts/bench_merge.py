"""Merges a recording of some benchmark families into results/h200/bench.json, so that the
suite can be recorded in parts, one device call each (scripts/record.sh --part bench
--families ...):

    python3 scripts/bench_merge.py BENCH_JSON PART_JSON

PART_JSON is hm_bench's --benchmark_out of a run filtered to some families.  When BENCH_JSON
exists and was recorded at the same commit on the same GPU and software (the context's
hm_commit and hm_environment but for the clock of the moment), the part's families replace
theirs in it and the other families stay; otherwise BENCH_JSON becomes the part alone, so
that a merged file never mixes two commits.  The merged context is the part's that ran the
decode family (its hbm_read_TBps is what the decode shapes' share of the read bandwidth is
measured against), else the newer part's; hm_parts in the context lists each part's
families, date and read bandwidth.  Prints the families the result holds.  Standard library
only."""
import json
import os
import sys

from hm_results import NAME  # matmul/IMPL/DTYPE/FAMILY/MxNxK/...


def family(benchmark):
    m = NAME.match(benchmark.get("name", ""))
    return m.group(3) if m else ""


def families_of(data):
    return sorted({family(b) for b in data.get("benchmarks", []) if family(b)})


def same_setup(a, b):
    """The same commit, GPU and software: what the two contexts say but for the moment's
    clocks and which of several like GPUs ran it (each device call may get another)."""
    def setup(context):
        env = json.loads(context.get("hm_environment", "{}"))
        for moment in ("sm_clock_now_mhz", "mem_clock_now_mhz", "pci_bus_id"):
            env.pop(moment, None)
        return context.get("hm_commit"), env
    return setup(a) == setup(b)


def part_entry(context, families):
    return {"families": families, "date": context.get("date"),
            "hbm_read_TBps": context.get("hbm_read_TBps")}


def merge(old, part):
    """The merged recording of `part` into `old` (None: no earlier recording), and whether
    `old` was another setup's and is replaced instead."""
    new_families = families_of(part)
    if old is None or not same_setup(old.get("context", {}), part.get("context", {})):
        merged = dict(part)
        merged["context"] = dict(part["context"],
                                 hm_parts=[part_entry(part["context"], new_families)])
        return merged, old is not None
    kept = [b for b in old["benchmarks"] if family(b) not in new_families]
    old_parts = old["context"].get("hm_parts") or [
        part_entry(old["context"], families_of(old))]
    parts = [dict(p, families=[f for f in p["families"] if f not in new_families])
             for p in old_parts]
    parts = [p for p in parts if p["families"]] + [part_entry(part["context"], new_families)]
    context = part["context"] if "decode" in new_families or not any(
        family(b) == "decode" for b in kept) else old["context"]
    merged = dict(old)
    merged["context"] = dict(context, hm_parts=parts)
    merged["benchmarks"] = kept + part["benchmarks"]
    return merged, False


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    bench_path, part_path = argv[1], argv[2]
    with open(part_path) as f:
        part = json.load(f)
    if not part.get("benchmarks"):
        sys.exit(f"bench_merge: {part_path} holds no benchmarks")
    old = None
    if os.path.exists(bench_path):
        with open(bench_path) as f:
            old = json.load(f)
    merged, replaced = merge(old, part)
    if replaced:
        print(f"bench_merge: {bench_path} was another commit's or GPU's recording: replaced")
    with open(bench_path, "w") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    print(f"bench_merge: {bench_path} holds {', '.join(families_of(merged))} "
          f"(commit {merged['context'].get('hm_commit', '?')})")


if __name__ == "__main__":
    main(sys.argv)
