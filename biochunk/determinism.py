"""One seeding rule for every stage that draws random numbers in torch.

Two clean runs must write byte-identical outputs (``dvc.lock`` and ``metrics/`` are
committed, and a pull request that changes nothing must get an empty metrics diff).
Seeding only at the start of a training loop is not enough: LoRA's A matrices and a
new head are drawn when the model is *built*, so ``seed_all`` runs before that.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

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


# LoraConfig fields that PEFT holds as sets.
SET_VALUED = frozenset({"target_modules", "modules_to_save", "exclude_modules", "trainable_token_indices"})


def save_peft(model: torch.nn.Module, out: Path) -> None:
    """``save_pretrained`` of a PEFT model, with its config written in a stable order.

    PEFT keeps ``target_modules`` as a set and writes it in hash order, so two identical
    runs would write different ``adapter_config.json`` files (and different lock hashes).
    """
    model.save_pretrained(str(out))
    cfg = out / "adapter_config.json"
    data = json.loads(cfg.read_text())
    for key, value in data.items():
        if key in SET_VALUED and isinstance(value, list):
            data[key] = sorted(value)
    cfg.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
