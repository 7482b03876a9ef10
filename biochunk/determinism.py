"""One seeding rule for every stage that draws random numbers in torch.

Two clean runs must write byte-identical outputs (``dvc.lock`` and ``metrics/`` are
committed, and a pull request that changes nothing must get an empty metrics diff).
Seeding only at the start of a training loop is not enough: LoRA's A matrices and a
new head are drawn when the model is *built*, so ``seed_all`` runs before that.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_all(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and every CUDA device) and ask torch for
    deterministic kernels.

    ``warn_only``: a few CUDA kernels have no deterministic variant; they warn instead of
    failing, which is why results on CUDA agree within a tolerance, not bit for bit.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # cuBLAS needs a fixed workspace for deterministic matrix products (read at first use).
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
