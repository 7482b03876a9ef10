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


# Training's backward passes add up per-thread partial gradients, so an adapter's bits follow
# torch's thread count, which MKL's STRICT mode (biochunk/__init__.py) does not reach: seen
# here, the scorer trained on one thread differed from the one trained on two (the embedding,
# ranking and generator outputs did not). Training therefore runs on this many threads on every
# machine: a one-core runner, this two-core one and a workstation write the same adapter
# (tests/test_reproducible_threads.py). Two is this project's reference machine; more would
# not change the committed lock's bits, only need a new one.
TRAIN_THREADS = 2


def seed_all(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and every CUDA device), ask torch for
    deterministic kernels and run it on ``TRAIN_THREADS`` threads.

    ``warn_only``: a few CUDA kernels have no deterministic variant; they warn instead of
    failing, which is why results on CUDA agree within a tolerance, not bit for bit.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # cuBLAS needs a fixed workspace for deterministic matrix products (read at first use).
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.set_num_threads(TRAIN_THREADS)


# LoraConfig fields that PEFT holds as sets.
SET_VALUED = frozenset({"target_modules", "modules_to_save", "exclude_modules", "trainable_token_indices"})


def save_peft(model: torch.nn.Module, out: Path, base: str) -> None:
    """``save_pretrained`` of a PEFT model, written the same on every machine.

    PEFT keeps ``target_modules`` as a set and writes it in hash order, and records the base
    model as the absolute path it was loaded from (a virtual environment's site-packages),
    in the config and in a generated model card. Either would make two identical runs in two
    clones write different files, and different lock hashes. So the set is sorted, the base
    model is recorded as the model param (``base``: an alias, hub id or path as the user
    wrote it), and the card, a template with nothing of the run in it, is not kept.
    """
    model.save_pretrained(str(out))
    cfg = out / "adapter_config.json"
    data = json.loads(cfg.read_text())
    for key, value in data.items():
        if key in SET_VALUED and isinstance(value, list):
            data[key] = sorted(value)
    data["base_model_name_or_path"] = base
    cfg.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    (out / "README.md").unlink(missing_ok=True)
