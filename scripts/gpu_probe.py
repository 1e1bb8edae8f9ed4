#!/usr/bin/env python3
"""Whether this machine has a GPU the kernels can run on, found before anything is built:
an NVIDIA driver, one new enough for this CUDA toolkit, a GPU, and a GPU of compute
capability 9.0 (an H100 or H200).  It asks the driver itself (libcuda.so.1, through
ctypes), as the built programs do (common/device.cpp, hm::require_sm90).

    scripts/gpu_probe.py [--nvcc NVCC]

Prints one line: the GPU the programs will use (GPU 0, as CUDA_VISIBLE_DEVICES orders
them), or what is missing and why.  Exits 0 with a usable GPU, 1 without one.
"""
import argparse
import ctypes
import re
import shutil
import subprocess
import sys

CUDA_SUCCESS = 0
CUDA_ERROR_NO_DEVICE = 100
ATTRIBUTE_SM_COUNT = 16
ATTRIBUTE_CC_MAJOR = 75
ATTRIBUTE_CC_MINOR = 76


def cuda_text(version):
    """'CUDA 12.4' for 12040."""
    return f"CUDA {version // 1000}.{version % 1000 // 10}"


def toolkit_version(nvcc):
    """The CUDA version of the toolkit that builds the programs (13000 for 13.0), or None."""
    nvcc = nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return int(m.group(1)) * 1000 + int(m.group(2)) * 10 if m else None


def probe(nvcc=None):
    """(True, the GPU) or (False, why not)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False, "no NVIDIA driver is installed (libcuda.so.1 was not found)"

    def error_name(code):
        name = ctypes.c_char_p()
        if cuda.cuGetErrorName(code, ctypes.byref(name)) == CUDA_SUCCESS and name.value:
            return name.value.decode()
        return f"CUDA error {code}"

    driver = ctypes.c_int()
    cuda.cuDriverGetVersion(ctypes.byref(driver))
    driver = driver.value
    toolkit = toolkit_version(nvcc)
    if toolkit and driver // 1000 < toolkit // 1000:
        return False, (f"the NVIDIA driver supports {cuda_text(driver)}, older than the "
                       f"{cuda_text(toolkit)} toolkit that builds the programs: install a "
                       f"driver for {cuda_text(toolkit)} or newer")
    code = cuda.cuInit(0)
    if code == CUDA_ERROR_NO_DEVICE:
        return False, f"the NVIDIA driver ({cuda_text(driver)}) found no GPU"
    if code != CUDA_SUCCESS:
        return False, f"the NVIDIA driver ({cuda_text(driver)}) failed to start: {error_name(code)}"
    count = ctypes.c_int()
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != CUDA_SUCCESS or count.value == 0:
        return False, f"the NVIDIA driver ({cuda_text(driver)}) found no GPU"

    def describe(device):
        values = []
        for attribute in (ATTRIBUTE_CC_MAJOR, ATTRIBUTE_CC_MINOR, ATTRIBUTE_SM_COUNT):
            value = ctypes.c_int()
            cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device)
            values.append(value.value)
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, device)
        return name.value.decode(errors="replace"), values

    name, (major, minor, sms) = describe(0)
    if (major, minor) != (9, 0):
        others = [d for d in range(1, count.value) if describe(d)[1][:2] == [9, 0]]
        hint = (f"; GPU {others[0]} is one: CUDA_VISIBLE_DEVICES={others[0]} selects it"
                if others else "")
        return False, (f"GPU 0 is {name} (sm_{major}{minor}); these kernels run only on "
                       f"compute capability 9.0, an H100 or H200{hint}")
    return True, f"GPU 0 is {name}, sm_90, {sms} SMs (driver: {cuda_text(driver)})"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nvcc", help="the nvcc whose CUDA version the driver must support")
    args = ap.parse_args()
    try:
        usable, line = probe(args.nvcc)
    except (OSError, AttributeError, ValueError) as e:  # a libcuda.so.1 that is not a driver's
        usable, line = False, f"asking the driver failed: {e}"
    print(("a usable GPU: " if usable else "no usable GPU: ") + line)
    return 0 if usable else 1


if __name__ == "__main__":
    sys.exit(main())
