"""``import biochunk`` pins every float library to kernels that x86-64 CPUs run alike
(biochunk/numerics.py), and each library really runs the pinned code.

The check that matters is what the library reports, not the variable: MKL accepts
``MKL_CBWR=AVX2`` everywhere but runs it on Intel processors only, and on an AMD EPYC it
printed ``CNR:AUTO`` and wrote other embed vectors than the committed lock's machine.
"""

import os
import platform
import subprocess
import sys

import pytest

from biochunk.numerics import MKL_BRANCH, PINS, cpu_vendor, mkl_branch
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="the pins are for x86-64")

PROBE = """
import biochunk, threadpoolctl, torch
import numpy as np
from numpy._core._multiarray_umath import __cpu_features__ as feats
a = torch.ones(64, 64)
(a @ a).sum()
blas = {i["internal_api"]: i.get("architecture") for i in threadpoolctl.threadpool_info()}
print("CAPABILITY", torch.backends.cpu.get_cpu_capability())
print("NUMPY_AVX512", feats.get("X86_V4") or feats.get("AVX512_ICL") or feats.get("AVX512_SPR"))  # its AVX-512 dispatch targets
print("OPENBLAS", blas.get("openblas"))
"""


def _probe(**extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in dict(PINS)} | {"MKL_VERBOSE": "1", "PYTHONPATH": str(ROOT)} | extra
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout + r.stderr


def test_each_library_runs_the_pinned_kernels():
    out = _probe()
    assert f"CNR:{MKL_BRANCH}" in out, f"MKL does not run the strict branch pinned for {cpu_vendor()!r}:\n" + out[-1500:]
    assert "CAPABILITY AVX2" in out
    assert "NUMPY_AVX512 False" in out
    assert "OPENBLAS Haswell" in out


def test_a_variable_the_user_exports_wins():
    assert "CNR:AUTO" in _probe(MKL_CBWR="AUTO")


def test_mkl_runs_avx2_on_intel_and_the_vendor_neutral_branch_elsewhere():
    # MKL runs its AVX2 branch on Intel processors only and silently falls back to its
    # per-processor path (AUTO) on others; COMPATIBLE is the branch it runs alike on every vendor.
    assert mkl_branch("GenuineIntel") == "AVX2,STRICT"
    assert mkl_branch("AuthenticAMD") == "COMPATIBLE,STRICT"
    assert mkl_branch("") == "COMPATIBLE,STRICT"
