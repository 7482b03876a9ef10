"""The same float kernels on every x86-64 CPU, set when ``biochunk`` is imported.

torch, MKL, oneDNN, FAISS, OpenBLAS and NumPy each pick their code by the processor they run
on: AVX-512 kernels where it has them, AVX2 elsewhere, and MKL another path again on a
processor that is not Intel's. The paths round differently, so a lock file written on one
machine would not match a clean run on another (a CI runner, a colleague's laptop). Each
variable below pins one library to code every x86-64 server CPU of the last decade runs
alike. Set before those libraries load (every stage imports this package before them);
export a variable yourself to override it. What the pins cost: docs/reproducibility.md.

Why this module is no DVC dependency (``scripts/stage_deps.py`` ``NOT_DEPS``): the pins
choose rounding, never the algorithm, like the CPU and the installed packages, which DVC
does not hash either; a change here re-rounds every float in every pipeline, and what
guards it is CI's check that a clean clone reproduces the committed default lock.
"""

from __future__ import annotations

import os
import platform

PINS: tuple[tuple[str, str], ...] = (
    ("ATEN_CPU_CAPABILITY", "avx2"),  # torch's own vectorised kernels
    # MKL's matrix products (torch's CPU BLAS). COMPATIBLE, not AVX2: "Settings other than
    # AUTO or COMPATIBLE are available only for Intel processors", and an unsupported branch
    # falls back to AUTO "without providing any warning messages" (oneMKL Developer Guide,
    # "Specifying Code Branches"). MKL_VERBOSE printed CNR:AUTO on an AMD EPYC, and CI's
    # AMD EPYC wrote other embed vectors than the machine of the committed lock (2026-12-02).
    # STRICT: the same bits whatever the thread count; without it MKL splits a product's
    # reduction by thread (tests/test_reproducible_threads.py).
    ("MKL_CBWR", "COMPATIBLE,STRICT"),
    ("ONEDNN_MAX_CPU_ISA", "AVX2"),  # oneDNN (torch's convolutions, bf16 paths)
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
