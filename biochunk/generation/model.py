"""Load a causal LM for generation or LoRA tuning: offline GGUF package, hub id or local path.

The device and precision are chosen here and nowhere else: 4-bit NF4 through
bitsandbytes when CUDA is present and bitsandbytes is installed (as BioMedRAG runs its
Llama), else bf16 on a CUDA device that has it, fp32 on CPU.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from biochunk.errors import UserError
from biochunk.models import offline_mode, pick_device, resolve, train_dtype

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

# generate.quantize: auto (NF4 on CUDA when bitsandbytes is installed), nf4, none.
QUANTIZE = ("auto", "nf4", "none")


@dataclass
class LoadedLM:
    model: torch.nn.Module
    tokenizer: object
    device: str
    quantized: bool
    name: str  # the model param as given (alias, hub id or path), recorded with saved adapters


def load_causal_lm(name: str, param: str, quantize: str = "auto", device: str = "auto") -> LoadedLM:
    """``quantize``: auto (NF4 on CUDA when bitsandbytes is installed), nf4, none;
    ``device``: auto (CUDA when present), cpu, cuda, cuda:N."""
    offline_mode()
    import torch  # heavy: imported when a model loads, not with the allowed values above (params reads QUANTIZE)

    # After LoRA updates, fp32 activations drift into denormal range, which x86 CPUs compute
    # tens of times slower (seen: 48 s per fine-tuning step instead of ~4 on GM-CIHT).
    torch.set_flush_denormal(True)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve(name, param)
    device = pick_device(device)
    cuda = device.startswith("cuda")
    section = param.rsplit(".", 1)[0]
    has_bnb = importlib.util.find_spec("bitsandbytes") is not None
    nf4 = quantize == "nf4" or (quantize == "auto" and cuda and has_bnb)
    if nf4 and not cuda:
        raise UserError(f"{section}.quantize: nf4 needs a CUDA GPU; use auto or none on this machine")
    if nf4 and not has_bnb:
        raise UserError(f"{section}.quantize: nf4 needs the bitsandbytes package; install it, or use auto or none")
    if quantize == "auto" and cuda and not has_bnb:
        log.warning("%s.quantize is auto but bitsandbytes is missing: loading in %s, not 4-bit", section, train_dtype(device))
    kwargs: dict = {}
    p = Path(path)
    if p.suffix == ".gguf":
        # A GGUF file de-quantises to fp32 on load; transformers takes the folder + file name.
        kwargs["gguf_file"] = p.name
        path = str(p.parent)
        nf4 = False  # bitsandbytes cannot re-quantise a GGUF checkpoint; it is tiny anyway
    try:
        tok = AutoTokenizer.from_pretrained(path, **kwargs)
        if nf4:
            from transformers import BitsAndBytesConfig

            qc = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_use_double_quant=True
            )
            index = torch.device(device).index or 0
            model = AutoModelForCausalLM.from_pretrained(path, quantization_config=qc, device_map={"": index}, **kwargs)
        else:
            model = AutoModelForCausalLM.from_pretrained(path, dtype=train_dtype(device), **kwargs)
    except OSError as e:
        first = str(e).splitlines()[0]
        raise UserError(
            f"{param}: cannot load {name!r} ({first}); use the offline alias smollm2-135m, a local path, "
            "or a hub id on a machine with network"
        ) from None
    if not nf4:
        model.to(device)
    if getattr(model.config, "quantization_config", None) is not None and p.suffix == ".gguf":
        # The GGUF loader leaves a quantization_config behind that makes save_pretrained refuse.
        del model.config.quantization_config
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    log.info("loaded %s on %s (%s)", name, device, "nf4" if nf4 else str(train_dtype(device)).removeprefix("torch."))
    return LoadedLM(model, tok, device, nf4, name)
