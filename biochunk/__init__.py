"""biochunk: a DVC pipeline library for chunking strategies in biomedical RAG.

Stage scripts under ``stages/`` are thin doors into this package; the package
never imports them.
"""

import os
import platform

__version__ = "0.1.0"

# The same float kernels on every x86-64 CPU: torch, MKL, oneDNN and FAISS each pick
# AVX-512 code where the processor has it and AVX2 code where not, and the two round
# differently, so a lock file written on one machine would not match a clean run on
# another (a CI runner, a colleague's laptop). AVX2 is on every x86-64 server CPU of the
# last decade; the cost on an AVX-512 machine is measured in docs/reproducibility.md. Set before torch,
# MKL and FAISS are first used (this package is imported before them in every stage);
# export a variable yourself to override it.
if platform.machine().lower() in ("x86_64", "amd64"):
    for _var, _value in (
        ("ATEN_CPU_CAPABILITY", "avx2"),  # torch's own vectorised kernels
        # MKL's matrix products (torch's CPU BLAS). STRICT: the same bits whatever the thread
        # count; without it MKL splits a product's reduction by thread, and a run with one
        # thread (taskset, a CPU quota, OMP_NUM_THREADS=1) wrote other embed vectors than a
        # run with two (tests/test_reproducible_threads.py; docs/reproducibility.md).
        ("MKL_CBWR", "AVX2,STRICT"),
        ("ONEDNN_MAX_CPU_ISA", "AVX2"),  # oneDNN (torch's convolutions, bf16 paths)
        ("FAISS_SIMD_LEVEL", "AVX2"),  # FAISS distance kernels (dynamic-dispatch builds)
    ):
        os.environ.setdefault(_var, _value)
