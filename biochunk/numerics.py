"""The same float kernels on every x86-64 CPU of a vendor, set when ``biochunk`` is imported.

torch, MKL, oneDNN, FAISS, OpenBLAS and NumPy each pick their code by the processor they run
on: AVX-512 kernels where it has them, AVX2 elsewhere, and MKL another path again on a
processor that is not Intel's. The paths round differently, so a lock file written on one
machine would not match a clean run on another (a CI runner, a colleague's laptop). Each
variable below pins one library to code every x86-64 server CPU of the last decade runs
alike; MKL's pin is per vendor (``mkl_branch``), so a lock is reproduced on processors of the
vendor that wrote it (docs/reproducibility.md). Set before those libraries load (every stage
imports this package before them); export a variable yourself to override it. What the pins
cost: docs/reproducibility.md.

Why this module is no DVC dependency (``scripts/stage_deps.py`` ``NOT_DEPS``): the pins
choose rounding, never the algorithm, like the CPU and the installed packages, which DVC
does not hash either; a change here re-rounds every float in every pipeline, and what
guards it is CI's check that a clean clone reproduces the committed default lock.
"""

from __future__ import annotations

import os
import platform


def cpu_vendor() -> str:
    """The processor's vendor as the kernel reports it (``GenuineIntel``, ``AuthenticAMD``);
    empty where ``/proc/cpuinfo`` is missing (not Linux) or names none."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


# MKL's matrix products (torch's CPU BLAS), the one pin that depends on the vendor.
# - Intel: the AVX2 branch, which every Intel processor since Haswell runs alike, AVX-512 or not.
# - Any other vendor: COMPATIBLE. "Settings other than AUTO or COMPATIBLE are available only for
#   Intel processors", and an unsupported branch falls back to AUTO "without providing any
#   warning messages" (oneMKL Developer Guide, "Specifying Code Branches"): MKL_VERBOSE printed
#   CNR:AUTO on an AMD EPYC, and CI's AMD EPYC wrote other embed vectors than the machine of the
#   committed lock (2026-12-02).
# Why not COMPATIBLE on Intel too, which would give inference the same bits on both vendors: it
# is MKL's SSE2 code, 3x slower than AVX2 on an Intel Xeon (docs/reproducibility.md, "What the
# pins cost"), which pushed CI past its time limit (2026-12-02), and it bought no reproducible
# lock across vendors anyway: LoRA training wrote other bits on Intel than on AMD under it.
# STRICT: the same bits whatever the thread count; without it MKL splits a product's reduction by
# thread (tests/test_reproducible_threads.py).
def mkl_branch(vendor: str) -> str:
    """The ``MKL_CBWR`` pin for a processor of ``vendor`` (``cpu_vendor()``)."""
    return "AVX2,STRICT" if vendor == "GenuineIntel" else "COMPATIBLE,STRICT"


MKL_BRANCH = mkl_branch(cpu_vendor())

PINS: tuple[tuple[str, str], ...] = (
    ("ATEN_CPU_CAPABILITY", "avx2"),  # torch's own vectorised kernels
    ("MKL_CBWR", MKL_BRANCH),
    ("ONEDNN_MAX_CPU_ISA", "AVX2"),  # oneDNN (torch's convolutions, GELU, bf16 paths)
    ("FAISS_SIMD_LEVEL", "AVX2"),  # FAISS distance kernels (dynamic-dispatch builds)
    # OpenBLAS (NumPy's and FAISS's BLAS) picks its kernels by CPU model in DYNAMIC_ARCH builds.
    ("OPENBLAS_CORETYPE", "Haswell"),
    # NumPy's AVX-512 ufunc loops (exp, log, sort ...) differ in the last bit from its AVX2 ones.
    ("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR"),
)


def pin() -> None:
    """Set each pin the environment does not already name (x86-64 only)."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        for var, value in PINS:
            os.environ.setdefault(var, value)


pin()  # on import: ``import biochunk`` imports this module first
