#!/usr/bin/env python3
"""Clock, power and energy per launch of each version, read from NVML while it runs.

    scripts/power.py OUTDIR [--m M --n N --k K --dtype bf16] [--seconds S] VERSION...

Under sustained matmul load an H100/H200 runs at its power cap: the SM clock follows the
power drawn, so a kernel that spends fewer cycles per launch can still take as long as
one that spends more, if it draws more power per cycle.  This script separates the two.

For each VERSION it runs `hopper-matmul run --version VERSION --rounds 1`, which times
cuBLAS for R launches and then VERSION for R launches, back to back (R is sized so that
each block lasts about S seconds).  Meanwhile a thread reads NVML every few milliseconds:
SM clock, power, the total-energy counter and the clock-event (throttle) reasons.  Each
block's window is recovered from the process's end time and the medians it reports; the
first and last 15% of a window are dropped.  Per block it prints the median time per
launch, the mean SM clock, the mean power, the energy per launch (from the counter) and
the cycles per launch (time × clock): the number to compare with ncu's elapsed cycles.

NVML is read through ctypes from the driver's libnvidia-ml.so.1: no Python package needed.
Writes OUTDIR/power.json (every sample and the summary) and prints a table last.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time

NVML_CLOCK_SM = 1
REASONS = {  # nvmlClocksEventReasons bits
    0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks",
}


class Nvml:
    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self._ok(self.lib.nvmlInit_v2(), "nvmlInit_v2")
        self.handle = ctypes.c_void_p()
        self._ok(self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.handle)),
                 "nvmlDeviceGetHandleByIndex_v2")
        reasons = getattr(self.lib, "nvmlDeviceGetCurrentClocksEventReasons", None)
        self.reasons_fn = reasons or self.lib.nvmlDeviceGetCurrentClocksThrottleReasons

    @staticmethod
    def _ok(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed with NVML error {rc}")

    def sample(self):
        mj = ctypes.c_ulonglong()
        mw = ctypes.c_uint()
        mhz = ctypes.c_uint()
        reasons = ctypes.c_ulonglong()
        self._ok(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(mj)),
                 "energy")
        self._ok(self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(mw)), "power")
        self._ok(self.lib.nvmlDeviceGetClockInfo(self.handle, NVML_CLOCK_SM, ctypes.byref(mhz)),
                 "clock")
        self.reasons_fn(self.handle, ctypes.byref(reasons))
        return {"t": time.monotonic(), "energy_mj": mj.value, "power_w": mw.value / 1000,
                "sm_mhz": mhz.value, "reasons": reasons.value}

    def power_limit_w(self):
        mw = ctypes.c_uint()
        self._ok(self.lib.nvmlDeviceGetEnforcedPowerLimit(self.handle, ctypes.byref(mw)),
                 "power limit")
        return mw.value / 1000


def sampler(nvml, samples, stop, period_s=0.005):
    while not stop.is_set():
        samples.append(nvml.sample())
        time.sleep(period_s)


def window_stats(samples, t0, t1, ms_per_launch):
    trim = 0.15 * (t1 - t0)
    t0, t1 = t0 + trim, t1 - trim
    inside = [s for s in samples if t0 <= s["t"] <= t1]
    if len(inside) < 3:
        return None
    first, last = inside[0], inside[-1]
    seconds = last["t"] - first["t"]
    joules = (last["energy_mj"] - first["energy_mj"]) / 1000
    mhz = statistics.mean(s["sm_mhz"] for s in inside)
    reasons = 0
    for s in inside:
        reasons |= s["reasons"]
    return {
        "ms": ms_per_launch,
        "sm_mhz": mhz,
        "power_w": statistics.mean(s["power_w"] for s in inside),
        "power_from_energy_w": joules / seconds if seconds > 0 else None,
        "mj_per_launch": 1000 * joules / seconds * ms_per_launch / 1000 if seconds > 0 else None,
        "mcycles_per_launch": ms_per_launch * 1e-3 * mhz * 1e6 / 1e6,
        "reasons": [name for bit, name in REASONS.items() if reasons & bit],
        "samples": len(inside),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--seconds", type=float, default=4.0, help="length of each timed block")
    ap.add_argument("--binary", default="build/release/hopper-matmul")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)

    nvml = Nvml()
    shape = ["--m", str(args.m), "--n", str(args.n), "--k", str(args.k), "--dtype", args.dtype]
    results = {"power_limit_w": nvml.power_limit_w(), "shape": shape, "runs": []}
    # A guess of the launch time sizes the blocks; 700 TFLOPS is about what cuBLAS reaches.
    guess_ms = 2 * args.m * args.n * args.k / 700e12 * 1e3
    reps = max(20, int(args.seconds * 1e3 / guess_ms))
    for version in args.versions:
        json_path = os.path.join(args.outdir, f"power_run_{version}.json")
        samples, stop = [], threading.Event()
        thread = threading.Thread(target=sampler, args=(nvml, samples, stop), daemon=True)
        thread.start()
        time.sleep(0.5)  # idle samples before the run
        cmd = [args.binary, "run", "--version", version, *shape, "--warmup", "20",
               "--rounds", "1", "--reps", str(reps), "--settle-ms", "0", "--json", json_path]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        t_end = time.monotonic()
        time.sleep(0.3)
        stop.set()
        thread.join()
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            results["runs"].append({"version": version, "error": proc.returncode})
            continue
        run = json.load(open(json_path))["runs"][0]["results"]
        ms = {r["name"]: r["median_ms"] for r in run}
        # cuBLAS's block, then the version's block, then the process exits.
        v_start = t_end - reps * ms[version] * 1e-3
        c_start = v_start - reps * ms["cublas"] * 1e-3
        results["runs"].append({
            "version": version, "reps": reps,
            "cublas": window_stats(samples, c_start, v_start, ms["cublas"]),
            "version_stats": window_stats(samples, v_start, t_end, ms[version]),
            "samples": samples,
        })

    with open(os.path.join(args.outdir, "power.json"), "w") as f:
        json.dump(results, f)
    print(f"\n-- power: {' '.join(shape)}, enforced limit {results['power_limit_w']:.0f} W")
    print(f"{'block':34} {'ms':>8} {'MHz':>6} {'W':>6} {'W(E)':>6} {'mJ/launch':>10} "
          f"{'Mcycles':>8}  reasons")
    for r in results["runs"]:
        if "error" in r:
            print(f"{r['version']:34} failed ({r['error']})")
            continue
        for label, s in (("cublas (before " + r["version"] + ")", r["cublas"]),
                         (r["version"], r["version_stats"])):
            if not s:
                print(f"{label:34} too few samples")
                continue
            print(f"{label:34} {s['ms']:8.4f} {s['sm_mhz']:6.0f} {s['power_w']:6.0f} "
                  f"{s['power_from_energy_w'] or 0:6.0f} {s['mj_per_launch'] or 0:10.1f} "
                  f"{s['mcycles_per_launch']:8.3f}  {','.join(s['reasons'])}")


if __name__ == "__main__":
    main()
