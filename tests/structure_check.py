#!/usr/bin/env python3
"""Checks that each version file is laid out and built the way its chapter says.

Every vN_*/matmul.cu: an @file block, its own namespace, its own header included (the
matmul.h the registry and the tests read), and the four sections in order (PTX wrappers,
tile configuration, kernel, host launcher).  Then, per technique, the
properties the text of the kernel can prove (the GPU tests prove the behaviour):

v3+  the block barrier appears exactly once (before the roles split; from v7, where CTAs
     work in clusters, a cluster barrier there and one before exit, the block barrier at
     most once, for the launch without clusters), the producer
     gives registers back and the consumers take them, under __launch_bounds__(threads, 1);
v4+  the grid comes from the SM count (from v7, also from how many clusters fit), and the
     barriers are initialised before the tile loop;
v5+  one wgmma.fence and one wait_group 0 in the kernel, wait_group 1 in the K loop, and no
     zero-filled accumulators (the first MMA runs with scale-d = 0);
v6+  C leaves through TMA stores: shared-memory writes made visible to the async proxy
     before the store, and a wait for TMA's reads before a buffer is written again;
v7+  B arrives by TMA multicast, and consumers release stages in every CTA of the cluster;
v8+  stream-K: a piece hands its partial sums over with a release, the owner takes them with
     an acquire, visiting the other units in order;
v9+  the kernel section holds a second kernel, the ping-pong one (after the marker
     PINGPONG), checked on its own: one block barrier, setmaxnreg, tiles from the counter, one
     wgmma.fence and one wait_group 0, wait_group 1, TMA stores, and turns taken with
     bar.sync and handed over with bar.arrive.  The rules above apply to the kernel before it.
"""
import os
import re
import sys

SECTIONS = ["// 1. PTX wrappers", "// 2. Tile configuration", "// 3. The kernel",
            "// 4. The host launcher"]


PINGPONG = "// The ping-pong kernel:"


def kernel_text(src):
    start = src.index("// 3. The kernel")
    text = src[start:src.index("// 4. The host launcher")]
    return text.split(PINGPONG)[0]


def pingpong_problems(src):
    """The v9+ rules for the ping-pong kernel (see the module's docstring)."""
    section = src[src.index("// 3. The kernel"):src.index("// 4. The host launcher")]
    if PINGPONG not in section:
        return ["no ping-pong kernel in the kernel section (marker: " + PINGPONG + ")"]
    kernel = section.split(PINGPONG, 1)[1]
    problems = []
    for name, count in [("__syncthreads", 1), ("setmaxnreg_dec", 1), ("setmaxnreg_inc", 1),
                        ("wgmma_fence", 1)]:
        if calls(kernel, name) != count:
            problems.append(f"ping-pong: {calls(kernel, name)} calls of {name}, not {count}")
    if len(re.findall(r"wgmma_wait_group<0>\(\)", kernel)) != 1:
        problems.append("ping-pong: exactly one wait_group 0, after a tile's K loop")
    if not re.search(r"wgmma_wait_group<1>\(\)", kernel):
        problems.append("ping-pong: no wait_group 1 in the K loop")
    for name in ["claim_tile", "tma_store_2d", "named_barrier_sync", "named_barrier_arrive"]:
        if calls(kernel, name) < 1:
            problems.append(f"ping-pong: no call of {name}")
    return problems


def calls(text, name):
    """Calls of `name` (not its definition or mentions in comments)."""
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    code = "\n".join(line.split("//")[0] for line in code.splitlines())
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}\s*(<[^>]*>)?\s*\(", code))


def check(version, src):
    problems = []
    number = int(re.match(r"v(\d+)_", version).group(1))
    if "/** @file" not in src:
        problems.append("no @file block")
    if f"namespace {version} {{" not in src:
        problems.append(f"no 'namespace {version}'")
    if f'#include "{version}/matmul.h"' not in src:
        problems.append(f'does not include its own header, "{version}/matmul.h"')
    positions = [src.find(s) for s in SECTIONS]
    if -1 in positions or positions != sorted(positions):
        problems.append("the four sections are missing or out of order")
        return problems
    kernel = kernel_text(src)
    if number >= 7:
        if (calls(kernel, "__syncthreads") > 1
                or calls(kernel, "barrier_cluster_wait") != 2):
            problems.append("a cluster barrier before the roles split and one before exit, "
                            "and __syncthreads() at most once")
    elif number >= 3:
        if calls(src, "__syncthreads") != 1:
            problems.append(f"__syncthreads() called {calls(src, '__syncthreads')} times, not once")
    if number >= 3:
        if calls(kernel, "setmaxnreg_dec") != 1 or calls(kernel, "setmaxnreg_inc") != 1:
            problems.append("the producer must setmaxnreg_dec and the consumers setmaxnreg_inc")
        if "__launch_bounds__(kThreads, 1)" not in kernel:
            problems.append("setmaxnreg needs __launch_bounds__(kThreads, 1)")
    if number >= 4:
        if "hm::stream_sm_count(stream" not in src:
            problems.append("the persistent grid must come from the stream's SM count "
                            "(hm::stream_sm_count: fewer than the GPU's in a green context)")
        if number >= 7 and "cudaOccupancyMaxActiveClusters" not in src:
            problems.append("a clustered grid must come from how many clusters fit at once")
        if "hm::tile_counter(stream" not in src or calls(kernel, "claim_tile") < 1:
            problems.append("the CTAs must take their tiles from the stream's counter "
                            "(hm::tile_counter, claim_tile): a fixed share waits for a "
                            "late CTA when another kernel holds some SMs")
        first_init = kernel.find("mbarrier_init(")
        # The tile loop: the producer's first claim.
        first_tile_loop = kernel.find("claim_tile(counter")
        if first_init < 0 or first_tile_loop < 0 or first_init > first_tile_loop:
            problems.append("barriers must be initialised once, before the tile loop")
    if number >= 5:
        if calls(kernel, "wgmma_fence") != 1:
            problems.append(f"{calls(kernel, 'wgmma_fence')} wgmma_fence calls, not one per K slice")
        if len(re.findall(r"wgmma_wait_group<0>\(\)", kernel)) != 1:
            problems.append("exactly one wait_group 0, before the epilogue")
        if not re.search(r"wgmma_wait_group<1>\(\)", kernel):
            problems.append("no wait_group 1 in the K loop")
        if re.search(r"float acc\[[^;]*\]\s*=\s*\{\}", kernel):
            problems.append("accumulators are zero-filled; the first MMA should use scale-d = 0")
    if number >= 6:
        for name in ["tma_store_2d", "fence_proxy_async_shared", "bulk_commit_group"]:
            if calls(kernel, name) < 1:
                problems.append(f"the TMA-store epilogue calls {name}")
        if not re.search(r"bulk_wait_group_read<", kernel):
            problems.append("no wait for TMA's reads before a store buffer is written again")
    if number >= 7:
        if (calls(kernel, "tma_load_2d_multicast") < 1
                or calls(kernel, "mbarrier_arrive_cluster") < 1):
            problems.append("B by TMA multicast, stages released in every CTA of the cluster")
    if number >= 8:
        if (calls(kernel, "red_release_gpu") < 1 or calls(kernel, "ld_acquire_gpu") < 1
                or calls(kernel, "unit_empty") < 1):
            problems.append("partial sums handed over with a release and taken with an acquire, "
                            "in unit order")
    if number >= 9:
        problems += pingpong_problems(src)
    return problems


def main():
    root = sys.argv[1]
    failures = 0
    versions = sorted(d for d in os.listdir(root)
                      if re.match(r"v\d+_", d) and os.path.isdir(os.path.join(root, d)))
    for version in versions:
        path = os.path.join(root, version, "matmul.cu")
        if not os.path.exists(path):
            print(f"FAIL {version}: no matmul.cu")
            failures += 1
            continue
        with open(path) as f:
            problems = check(version, f.read())
        failures += bool(problems)
        print(f"{'FAIL' if problems else 'ok  '} {version}" +
              ("".join(f"\n       {p}" for p in problems)))
    print(f"structure check: {'FAILED' if failures else 'passed'} ({len(versions)} versions)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
