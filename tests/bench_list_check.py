#!/usr/bin/env python3
"""Checks that the benchmark suite lists every registered version and cuBLAS, in bf16 and
fp16, on each shape family, without needing a GPU: `hm_bench --benchmark_list_tests`."""
import os
import re
import subprocess
import sys

bench, root = sys.argv[1], sys.argv[2]
listed = subprocess.run([bench, "--benchmark_list_tests"], capture_output=True, text=True,
                        check=True).stdout.split()
# Google Benchmark appends its settings (/min_time:…/manual_time) to each name.
names = [re.sub(r"(/\d+x\d+x\d+)/.*$", r"\1", n) for n in listed]
versions = sorted(d for d in os.listdir(root) if re.match(r"v\d+_", d))
missing = []
for impl in ["cublas"] + versions:
    for dtype in ("bf16", "fp16"):
        for family in ("square", "transformer", "ragged", "decode", "waves", "shortk",
                       "pitch", "midsize"):
            prefix = f"matmul/{impl}/{dtype}/{family}/"
            if not any(n.startswith(prefix) for n in names):
                missing.append(prefix)
for required in ("matmul/cublas/bf16/square/8192x8192x8192",
                 "matmul/cublas/bf16/square/512x512x512",
                 "matmul/cublas/bf16/square/16384x16384x16384",
                 "matmul/cublas/bf16/decode/1x5120x5120",
                 "matmul/cublas/fp16/decode/256x5120x13824",
                 "matmul/cublas/bf16/waves/1024x34048x4096",
                 "matmul/cublas/bf16/shortk/8192x8192x512",
                 "matmul/cublas/bf16/pitch/1920x2880x4136",
                 "matmul/cublas/fp16/pitch/1920x2880x4160",
                 "matmul/cublas/bf16/midsize/3584x3584x3584",
                 "matmul/cublas/fp16/midsize/384x5120x5120"):
    if required not in names:
        missing.append(required)
print(f"{len(names)} benchmarks listed")
for m in missing:
    print(f"missing: {m}")
sys.exit(1 if missing else 0)
