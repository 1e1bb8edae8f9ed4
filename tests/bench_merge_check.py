"""scripts/bench_merge.py on the recorded benchmark: split by family into two parts, merged
one after the other into nothing, gives back every benchmark once, with the decode part's
context; a part of another commit replaces the file; a family recorded again replaces its
rows.  Standard library only."""
import copy
import json
import os
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "scripts"))
import bench_merge  # noqa: E402

with open(os.path.join(root, "results", "h200", "bench.json")) as f:
    recorded = json.load(f)
first_families = {"square", "transformer", "ragged"}
first = dict(recorded, benchmarks=[b for b in recorded["benchmarks"]
                                   if bench_merge.family(b) in first_families])
second = dict(recorded, benchmarks=[b for b in recorded["benchmarks"]
                                    if bench_merge.family(b) not in first_families])
second = copy.deepcopy(second)
second["context"]["hbm_read_TBps"] = 4.321
second["context"]["date"] = "the second call"
env = json.loads(second["context"]["hm_environment"])
env["sm_clock_now_mhz"], env["pci_bus_id"] = 1234, "another machine"
second["context"]["hm_environment"] = json.dumps(env)

failures = []
def check(ok, what):
    if not ok:
        failures.append(what)

names = lambda data: sorted(b["name"] for b in data["benchmarks"])
merged, replaced = bench_merge.merge(None, first)
check(not replaced, "a first part replaces nothing")
merged, replaced = bench_merge.merge(merged, second)
check(not replaced, "the second part, same commit and GPU, merges")
check(names(merged) == names(recorded), "every benchmark once after both parts")
check(merged["context"]["hbm_read_TBps"] == 4.321, "the decode part's read bandwidth")
check([p["families"] for p in merged["context"]["hm_parts"]] ==
      [sorted(first_families), sorted({"decode", "waves", "shortk"})], "the parts listed")

again, _ = bench_merge.merge(merged, first)
check(names(again) == names(recorded), "a family recorded again replaces its rows")
check(again["context"]["hbm_read_TBps"] == 4.321, "the decode part's context stays")

other = copy.deepcopy(first)
other["context"]["hm_commit"] = "0000000"
fresh, replaced = bench_merge.merge(merged, other)
check(replaced and names(fresh) == names(first), "another commit's part replaces the file")

with tempfile.TemporaryDirectory() as tmp:
    bench, part = os.path.join(tmp, "bench.json"), os.path.join(tmp, "part.json")
    for data in (first, second):
        with open(part, "w") as f:
            json.dump(data, f)
        bench_merge.main(["bench_merge.py", bench, part])
    with open(bench) as f:
        check(names(json.load(f)) == names(recorded), "the command line merges the same")

if failures:
    sys.exit("bench_merge check FAILED: " + "; ".join(failures))
print("bench_merge check: passed (%d benchmarks in two parts)" % len(recorded["benchmarks"]))
