#!/usr/bin/env python3
"""Writes instrumented copies of v3 and v4 for probe.cu into OUTDIR (default
build/tile_probe): namespaces probe_v3 / probe_v4, and thread 128 (the first consumer thread)
records, per tile, its SM, and %globaltimer and clock64 at the start of the tile's K loop,
once the first slice has landed (an extra wait before the loop, so that
the loop's own code is unchanged), at the end of the K loop and at the end of the epilogue;
thread 0 records them at CTA entry.  Everything else is the kernels' own code.  Each edit
is anchored on an exact line of the source and fails loudly if the source has changed."""
import pathlib
import re
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


def instrument(source, ns, name, pad, tile, first_slice, step9):
    """The probe edits of one kernel.  `pad` indents the tile's body, `tile` is the tile's
    index expression, `first_slice` the barrier and parity of its first K slice, `step9`
    the comment that opens the epilogue."""
    # The copy lives in its own namespace; the types the version's header defines (TileCoord)
    # stay the version's, so the copy names them from there.
    header = (root / ns / "matmul.h").read_text()
    types = "".join(f"using {ns}::{t};\n" for t in re.findall(r"^struct (\w+) \{", header, re.M))
    text = sub(source, f"namespace {ns} {{", f"namespace {name} {{\n{types}" + HELPERS,
               "namespace")
    text = sub(text, f"}}  // namespace {ns}", f"}}  // namespace {name}", "namespace end")
    # The name its error messages carry (CMake defines HM_VERSION for the version's own file).
    text = f'#undef HM_VERSION\n#define HM_VERSION "{name}"\n' + text
    entry = "  extern __shared__ uint8_t smem_raw[];\n"
    text = sub(text, entry, entry + "  if (threadIdx.x == 0) probe_put(g_probe + 16 * blockIdx.x, 10);\n",
               "CTA entry")
    acc = f"{pad}float acc[BN / 2] = {{}};"
    text = sub(text, acc + "  // this thread's part of the warpgroup's WM×BN tile\n",
               f"{acc}\n{pad}unsigned long long* rec = g_probe + 16 * {tile};\n"
               f"{pad}const bool pr = threadIdx.x == 128;\n"
               f"{pad}if (pr) {{ rec[0] = probe_smid(); probe_put(rec, 2); }}\n"
               f'{pad}if (pr) {{ mbarrier_wait({first_slice}, "probe"); probe_put(rec, 4); }}\n',
               "K loop start")
    text = sub(text, pad + step9, f"{pad}if (pr) probe_put(rec, 6);\n{pad}{step9}", "K loop end")
    stores = f"acc[4 * j + 2], acc[4 * j + 3]);\n{pad}}}\n"
    return sub(text, stores, f"{stores}{pad}if (pr) probe_put(rec, 8);\n", "epilogue end")


def instrument_v8(source):
    """The probe edits of v8's kernel, per CTA (its first work unit only): the phases of a
    stream-K unit, for the decode shapes' fixed cost (the performance log, "The decode path:
    Cᵀ in transposed small-M tiles", 2026-12-01)."""
    ns, name = "v8_stream_k", "probe_v8"
    text = sub(source, f"namespace {ns} {{", f"namespace {name} {{\n" + HELPERS, "namespace")
    text = sub(text, f"}}  // namespace {ns}", f"}}  // namespace {name}", "namespace end")
    # The copy carries its own copy of the header, in its namespace: with v8's types, calls
    # such as unit_begin(sched, …) would also find v8's functions by argument lookup.
    header = (root / ns / "matmul.h").read_text()
    header = sub(header, f"namespace {ns} {{", f"namespace {name} {{", "header namespace")
    header = sub(header, f"}}  // namespace {ns}", f"}}  // namespace {name}",
                 "header namespace end")
    text = sub(text, f'#include "{ns}/matmul.h"\n', header.replace("#pragma once\n", ""),
               "the header")
    text = f'#undef HM_VERSION\n#define HM_VERSION "{name}"\n' + text
    entry = "  extern __shared__ uint8_t smem_raw[];\n"
    stamp = "  if (threadIdx.x == 0) probe_put(g_probe + 16 * blockIdx.x, 10);\n"
    text = sub(text, entry, entry + stamp, "CTA entry")
    pad = "    "
    acc = (f"{pad}float acc[kBN / 2];  "
           "// this thread's part of the warpgroup's WM×kBN tile; no zero-fill\n")
    text = sub(text, acc,
               f"{acc}{pad}unsigned long long* rec = g_probe + 16 * blockIdx.x;\n"
               f"{pad}const bool pr = threadIdx.x == 128 && j == 0;\n"
               f"{pad}if (pr) {{\n"
               f"{pad}  rec[0] = probe_smid();\n"
               f"{pad}  rec[1] = (w.k_begin > 0 ? 1 : w.k_end < sched.k_tiles ? 2 : 3) |\n"
               f"{pad}           (unsigned long long)(w.k_end - w.k_begin) << 8;\n"
               f"{pad}  probe_put(rec, 2);\n"
               f'{pad}  mbarrier_wait(full + 8 * (it % kStages), (it / kStages) & 1, "probe");\n'
               f"{pad}  probe_put(rec, 4);\n"
               f"{pad}}}\n",
               "K loop start")
    step10 = f"{pad}// Step 10: the one full wait"
    text = sub(text, step10, f"{pad}if (pr) probe_put(rec, 6);\n{step10}", "K loop end")
    raised = "      if (threadIdx.x % 128 == 0) red_release_gpu(flags + slot, 1);\n"
    text = sub(text, raised, raised + "      if (pr) probe_put(rec, 8);\n", "partial handed over")
    seen = ("        named_barrier_sync(kBarEpilogue + consumer, 128);\n"
            "        const auto next_slot")
    text = sub(text, seen, "        named_barrier_sync(kBarEpilogue + consumer, 128);\n"
               "        if (pr) probe_put(rec, 8);\n        const auto next_slot", "flags seen")
    step13 = f"{pad}// Step 13: the epilogue"
    text = sub(text, step13, f"{pad}if (pr) probe_put(rec, 12);\n{step13}", "fix-up done")
    stores = ("        store_pair_transposed(c, m, n, row + 8, col, acc[4 * j + 2], "
              "acc[4 * j + 3]);\n      }\n")
    return sub(text, stores, f"{stores}      if (pr) probe_put(rec, 14);\n", "epilogue end")


# Record layout of probe_v8 (16 x u64 per CTA, its first unit): 0 smid, 1 role (1 hands a
# partial over, 2 owns a tile that others share, 3 a whole tile) | K slices << 8, 2/3 K loop
# start, 4/5 first slice landed, 6/7 K loop end, 8/9 partial handed over or the others'
# flags seen, 10/11 CTA entry, 12/13 fix-up done (Step 13 begins), 14/15 epilogue end (the
# small-M kernel's stores).
(out / "probe_v8.cuh").write_text(instrument_v8((root / "v8_stream_k/matmul.cu").read_text()))

# Record layout (16 x u64 per tile): 0 smid, 2/3 K loop start (ns, cycles), 4/5 first slice
# landed, 6/7 K loop end, 8/9 epilogue end, 10/11 CTA entry (the CTA's first tile only).
(out / "probe_v3.cuh").write_text(instrument(
    (root / "v3_warp_specialized/matmul.cu").read_text(), "v3_warp_specialized", "probe_v3",
    pad="  ", tile="blockIdx.x", first_slice="full, 0", step9="// Step 9: epilogue."))
(out / "probe_v4.cuh").write_text(instrument(
    (root / "v4_persistent/matmul.cu").read_text(), "v4_persistent", "probe_v4",
    pad="    ", tile="tile", first_slice="full + 8 * (it % STAGES), (it / STAGES) & 1",
    step9="// Step 9: epilogue,"))
print(f"instrumented copies in {out}")
