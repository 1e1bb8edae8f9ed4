"""Reading recorded measurements: the Google Benchmark JSON of bench/ and the JSON of
`hopper-matmul ladder|run|sweep --json`, as one list of rows.  Standard library only: used
by scripts/plot.py and by the docs' measured tables (docs/_ext/hm_docs.py)."""
import json
import math
import re

LADDER_SHAPE = (8192, 8192, 8192)
NAME = re.compile(r"^matmul/([^/]+)/(bf16|fp16)/([a-z]+)/(\d+)x(\d+)x(\d+)")


def hbm_read(value):
    """The recorded HBM read bandwidth in TB/s, or None where it was not measured (older
    recordings, no GPU: the benchmark context then says "none: why", the CLI writes null)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _us(ms):
    return None if ms is None else 1e3 * ms


def load(path):
    """Rows {impl, technique, dtype, family, m, n, k, tflops, ratio, hbm_tbps, us, host_us,
    passed} from either format (hbm_tbps: the fewest bytes over the median time, None in older
    recordings; us: the median time in µs; host_us: the median of the host's launch calls in
    µs, None in older recordings; passed: a sweep's or ladder's check of the result, None in
    the benchmark's rows; a sweep with --read-roofline on has rows of impl ``read`` too, a
    launch that only reads the problem's bytes, with tflops and ratio None), and
    the environment, with hbm_read_tbps (the read bandwidth measured in the same process, or
    None)."""
    with open(path) as f:
        data = json.load(f)
    rows, env = [], {}
    if "benchmarks" in data:  # Google Benchmark
        context = data.get("context", {})
        env = json.loads(context["hm_environment"]) if "hm_environment" in context else {}
        env["commit"] = context.get("hm_commit", env.get("commit", "?"))
        env["hbm_read_tbps"] = hbm_read(context.get("hbm_read_TBps"))
        for b in data["benchmarks"]:
            m = NAME.match(b.get("name", ""))
            if not m or b.get("error_occurred") or "TFLOPS" not in b:
                continue
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            rows.append(dict(impl=m.group(1), technique=b.get("label", ""), dtype=m.group(2),
                             family=m.group(3), m=int(m.group(4)), n=int(m.group(5)),
                             k=int(m.group(6)), tflops=b["TFLOPS"],
                             ratio=b["ratio_to_cublas"], hbm_tbps=b.get("hbm_TBps"),
                             us=_us(b.get("median_ms")), host_us=b.get("host_us"),
                             passed=None))
    else:  # hopper-matmul ladder / run / sweep
        env = dict(data.get("environment", {}), protocol=data.get("protocol", {}),
                   hbm_read_tbps=hbm_read(data.get("hbm_read_tbps")))
        for run in data["runs"]:
            p = run["problem"]
            family = "square" if p["m"] == p["n"] == p["k"] else "other"
            for r in run["results"]:
                if "tflops" in r or r.get("roofline"):  # timed (the plain read: no TFLOPS)
                    rows.append(dict(impl=r["name"], technique=r["technique"], dtype=p["dtype"],
                                     family=family, m=p["m"], n=p["n"], k=p["k"],
                                     tflops=r.get("tflops"), ratio=r.get("ratio_to_cublas"),
                                     hbm_tbps=r.get("hbm_tbps"), us=_us(r.get("median_ms")),
                                     host_us=r.get("host_us"), passed=r.get("pass")))
    return rows, env


def versions_in(rows):
    """The versions among the rows' implementations (not cuBLAS, not the plain read), in
    ladder order."""
    return sorted({r["impl"] for r in rows if re.match(r"v\d+_", r["impl"])},
                  key=lambda v: int(re.match(r"v(\d+)", v).group(1)))


def pick(rows, impl, dtype, shape, family=None):
    """The first row of impl at dtype and shape (m, n, k), in `family` if one is named."""
    for r in rows:
        if (r["impl"] == impl and r["dtype"] == dtype and (r["m"], r["n"], r["k"]) == shape
                and (family is None or r["family"] == family)):
            return r
    return None


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")
