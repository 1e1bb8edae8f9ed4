#!/usr/bin/env python3
"""Writes instrumented copies of v3 and v4 for probe.cu into OUTDIR (default
build/tile_probe): namespaces probe_v3 / probe_v4, and thread 128 (the first consumer thread)
records, per tile, its SM, and %globaltimer and clock64 at the start of the tile's K loop,
once the first slice has landed (an extra wait before the loop, so that
the loop's own code is unchanged), at the end of the K loop and at the end of the epilogue;
thread 0 records them at CTA entry.  Everything else is the kernels' own code.  Each edit
is anchored on an exact line of the source and fails loudly if the source has changed."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else root / "build/tile_probe")
out.mkdir(parents=True, exist_ok=True)

HELPERS = r'''
// --- tile probe (scripts/tile_probe) ---
__device__ __forceinline__ void probe_put(unsigned long long* rec, int field) {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  rec[field] = ns;
  rec[field + 1] = clock64();
}
__device__ __forceinline__ unsigned probe_smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
'''


def sub(text, old, new, what):
    if text.count(old) != 1:
        sys.exit(f"tile_probe/make.py: anchor for {what} found {text.count(old)} times; "
                 "the kernel changed, update make.py")
    return text.replace(old, new)


def common(text, ns, name):
    text = sub(text, f"namespace {ns} {{", f"namespace {name} {{" + HELPERS, "namespace")
    text = sub(text, f"}}  // namespace {ns}", f"}}  // namespace {name}", "namespace end")
    entry = "  extern __shared__ uint8_t smem_raw[];\n"
    return sub(text, entry, entry + "  if (threadIdx.x == 0) probe_put(g_probe + 16 * blockIdx.x, 10);\n",
               "CTA entry")


# Record layout (16 x u64 per tile): 0 smid, 2/3 K loop start (ns, cycles), 4/5 first slice
# landed, 6/7 K loop end, 8/9 epilogue end, 10/11 CTA entry (the CTA's first tile only).
v3 = common((root / "v3_warp_specialized/matmul.cu").read_text(), "v3_warp_specialized", "probe_v3")
v3 = sub(v3, "  float acc[kMmaM][BN / 2] = {};  // this thread's part of the warpgroup's WM×BN tile\n",
         "  float acc[kMmaM][BN / 2] = {};\n  unsigned long long* rec = g_probe + 16 * blockIdx.x;\n"
         "  const bool pr = threadIdx.x == 128;\n  if (pr) { rec[0] = probe_smid(); probe_put(rec, 2); }\n"
         "  if (pr) { mbarrier_wait(full, 0, \"probe\"); probe_put(rec, 4); }\n",
         "K loop start")
v3 = sub(v3, "  // Step 9: epilogue.", "  if (pr) probe_put(rec, 6);\n  // Step 9: epilogue.", "K loop end")
v3 = sub(v3, "acc[mt][4 * j + 2], acc[mt][4 * j + 3]);\n    }\n  }\n",
         "acc[mt][4 * j + 2], acc[mt][4 * j + 3]);\n    }\n  }\n  if (pr) probe_put(rec, 8);\n",
         "epilogue end")
(out / "probe_v3.cuh").write_text(v3)

v4 = common((root / "v4_persistent/matmul.cu").read_text(), "v4_persistent", "probe_v4")
v4 = sub(v4, "    float acc[kMmaM][BN / 2] = {};  // this thread's part of the warpgroup's WM×BN tile\n",
         "    float acc[kMmaM][BN / 2] = {};\n    unsigned long long* rec = g_probe + 16 * tile;\n"
         "    const bool pr = threadIdx.x == 128;\n    if (pr) { rec[0] = probe_smid(); probe_put(rec, 2); }\n"
         "    if (pr) { mbarrier_wait(full + 8 * (it % STAGES), (it / STAGES) & 1, \"probe\");"
         " probe_put(rec, 4); }\n",
         "K loop start")
v4 = sub(v4, "    // Step 9: epilogue,", "    if (pr) probe_put(rec, 6);\n    // Step 9: epilogue,", "K loop end")
v4 = sub(v4, "acc[mt][4 * j + 2], acc[mt][4 * j + 3]);\n      }\n    }\n",
         "acc[mt][4 * j + 2], acc[mt][4 * j + 3]);\n      }\n    }\n    if (pr) probe_put(rec, 8);\n",
         "epilogue end")
(out / "probe_v4.cuh").write_text(v4)
print(f"instrumented copies in {out}")
