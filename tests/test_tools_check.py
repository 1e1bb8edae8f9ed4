"""The two scripts scripts/test.sh speaks through, on made-up inputs, without a GPU:
scripts/gpu_probe.py tells no driver, a driver too old for the toolkit, no GPU and a GPU of
another compute capability apart (through a stand-in for libcuda.so.1), and
scripts/test_summary.py counts every skipped test under its reason, in GoogleTest's full
and brief output and in our checks' "SKIPPED:" lines.  Standard library only."""
import ctypes
import os
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "scripts"))
import gpu_probe  # noqa: E402
import test_summary  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


class FakeCuda:
    """The driver calls gpu_probe.py makes, answering as a machine with these GPUs would."""

    def __init__(self, driver=13000, init=0, gpus=((9, 0, 132, "NVIDIA H100 80GB HBM3"),)):
        self.driver, self.init, self.gpus = driver, init, gpus

    def cuDriverGetVersion(self, out):
        out._obj.value = self.driver
        return 0

    def cuInit(self, flags):
        return self.init

    def cuGetErrorName(self, code, out):
        out._obj.value = b"CUDA_ERROR_UNKNOWN"
        return 0

    def cuDeviceGetCount(self, out):
        out._obj.value = len(self.gpus)
        return 0

    def cuDeviceGetAttribute(self, out, attribute, device):
        major, minor, sms, _ = self.gpus[device]
        out._obj.value = {gpu_probe.ATTRIBUTE_CC_MAJOR: major, gpu_probe.ATTRIBUTE_CC_MINOR: minor,
                          gpu_probe.ATTRIBUTE_SM_COUNT: sms}[attribute]
        return 0

    def cuDeviceGetName(self, buffer, size, device):
        buffer.value = self.gpus[device][3].encode()
        return 0


def probe_with(fake):
    """gpu_probe.probe() where libcuda.so.1 is `fake` (None: not installed), for CUDA 13.0."""
    def cdll(name):
        if fake is None:
            raise OSError(f"{name}: cannot open shared object file")
        return fake
    saved = ctypes.CDLL, gpu_probe.toolkit_version
    ctypes.CDLL, gpu_probe.toolkit_version = cdll, lambda nvcc: 13000
    try:
        return gpu_probe.probe()
    finally:
        ctypes.CDLL, gpu_probe.toolkit_version = saved


usable, line = probe_with(None)
check(not usable and "no NVIDIA driver is installed" in line, f"no driver: {line}")
usable, line = probe_with(FakeCuda(driver=12040))
check(not usable and "supports CUDA 12.4, older than the CUDA 13.0 toolkit" in line,
      f"an old driver: {line}")
usable, line = probe_with(FakeCuda(init=gpu_probe.CUDA_ERROR_NO_DEVICE))
check(not usable and "found no GPU" in line, f"no GPU: {line}")
usable, line = probe_with(FakeCuda(gpus=((8, 0, 108, "NVIDIA A100"), (9, 0, 132, "NVIDIA H200"))))
check(not usable and "GPU 0 is NVIDIA A100 (sm_80)" in line and "CUDA_VISIBLE_DEVICES=1" in line,
      f"another GPU first: {line}")
usable, line = probe_with(FakeCuda(driver=13010))
check(usable and "NVIDIA H100 80GB HBM3, sm_90, 132 SMs" in line, f"an H100: {line}")

REASON = "needs an sm_90 GPU: no usable CUDA GPU: no NVIDIA driver is installed"
full = "".join(f"[ RUN      ] Suite.Test{i}\n/src/tests/gpu_tests.cpp:{i}: Skipped\n{REASON}\n\n"
               f"[  SKIPPED ] Suite.Test{i} (0 ms)\n" for i in range(3))
brief = "".join(f"/src/tests/gpu_tests.cpp:{i}: Skipped\n{REASON}\n" for i in range(4))
junit = f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="5">
  <testcase name="host_tests" status="run"><system-out>{full}[  PASSED  ] 9 tests.
</system-out></testcase>
  <testcase name="gpu_tests" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>{brief}</system-out></testcase>
  <testcase name="sass_check" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>SKIPPED: cuobjdump is not installed here</system-out></testcase>
  <testcase name="docs" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>nothing said</system-out></testcase>
  <testcase name="structure_check" status="fail"><failure message="Failed"/></testcase>
</testsuite>
"""
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "junit.xml")
    with open(path, "w") as f:
        f.write(junit)
    passed, failed, skipped = test_summary.summarize(test_summary.ET.parse(path).getroot())
check(passed == 1 and failed == ["structure_check"], f"passed {passed}, failed {failed}")
check(skipped.get(REASON) == ["host_tests"] * 3 + ["gpu_tests"] * 4,
      f"7 tests under the GPU's reason: {skipped.get(REASON)}")
check(skipped.get("cuobjdump is not installed here") == ["sass_check"], "a check's SKIPPED line")
check(skipped.get("SKIP_RETURN_CODE=77") == ["docs"], "CTest's own reason where none is printed")

print(f"test tools check: {'FAILED' if failures else 'passed'}")
sys.exit(1 if failures else 0)
