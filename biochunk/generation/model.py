"""Load a causal LM for generation or LoRA tuning: offline GGUF package, hub id or local path.

The device and precision are chosen here and nowhere else: 4-bit NF4 through
bitsandbytes when CUDA is present (as BioMedRAG runs its Llama), fp32 on CPU.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from biochunk.errors import UserError
from biochunk.models import offline_mode, resolve

log = logging.getLogger(__name__)


@dataclass
class LoadedLM:
    model: torch.nn.Module
    tokenizer: object
    device: str
    quantized: bool


def load_causal_lm(name: str, param: str, quantize: str = "auto") -> LoadedLM:
    offline_mode()
    # After LoRA updates, fp32 activations drift into denormal range, which x86 CPUs compute
    # tens of times slower (seen: 48 s per fine-tuning step instead of ~4 on GM-CIHT).
    torch.set_flush_denormal(True)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve(name, param)
    cuda = torch.cuda.is_available()
    nf4 = quantize == "nf4" or (quantize == "auto" and cuda)
    if nf4 and not cuda:
        raise UserError(f"{param.rsplit('.', 1)[0]}.quantize: nf4 needs a CUDA GPU; use auto or none on this machine")
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
            model = AutoModelForCausalLM.from_pretrained(path, quantization_config=qc, device_map={"": 0}, **kwargs)
        else:
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kwargs)
    except OSError as e:
        first = str(e).splitlines()[0]
        raise UserError(
            f"{param}: cannot load {name!r} ({first}); use the offline alias smollm2-135m, a local path, "
            "or a hub id on a machine with network"
        ) from None
    device = "cuda" if cuda else "cpu"
    if not nf4:
        model.to(device)
    if getattr(model.config, "quantization_config", None) is not None and p.suffix == ".gguf":
        # The GGUF loader leaves a quantization_config behind that makes save_pretrained refuse.
        del model.config.quantization_config
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    log.info("loaded %s on %s (%s)", name, device, "nf4" if nf4 else "fp32")
    return LoadedLM(model, tok, device, nf4)
