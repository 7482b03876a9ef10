"""LoRA fine-tuning of the generator on the training split, and batched generation."""

from __future__ import annotations

import copy
import logging
import random
from pathlib import Path
from typing import Sequence

import torch
from tqdm import tqdm

from biochunk.determinism import save_peft, seed_all
from biochunk.generation.model import LoadedLM

log = logging.getLogger(__name__)


def add_lora(lm: LoadedLM, r: int, seed: int) -> None:
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    model = lm.model
    if lm.quantized:
        model = prepare_model_for_kbit_training(model)
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    targets = [t for t in ("q_proj", "k_proj", "v_proj", "o_proj") if t in names] or ["c_attn"]
    # LoRA's A matrices are drawn here, not in ``finetune``: seed before they are.
    seed_all(seed)
    lm.model = get_peft_model(model, LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.05, target_modules=targets, task_type="CAUSAL_LM"))


def encode_prompt(tok, prefix: str, suffix: str) -> list[int]:
    """Prefix and suffix tokenised apart, so training sees exactly the ids that generation
    feeds after the cached prefix."""
    return tok(prefix, add_special_tokens=False).input_ids + tok(suffix, add_special_tokens=False).input_ids


def finetune(lm: LoadedLM, examples: Sequence[tuple[str, str, str]], steps: int, batch_size: int, lr: float, seed: int) -> dict[str, float]:
    """Causal-LM loss on the answer tokens only (prompt tokens are masked with -100).

    ``examples`` are (prefix, suffix, answer) triples.
    """
    pairs = examples
    if steps == 0 or not pairs:
        return {"steps": 0}
    tok = lm.tokenizer
    torch.manual_seed(seed)
    rng = random.Random(seed)
    opt = torch.optim.AdamW([p for p in lm.model.parameters() if p.requires_grad], lr=lr)
    lm.model.train()
    losses = []
    for _ in tqdm(range(steps), desc="finetune generator", unit="step"):
        batch = rng.sample(list(pairs), min(batch_size, len(pairs)))
        ids, labels = [], []
        for prefix, suffix, answer in batch:
            p = encode_prompt(tok, prefix, suffix)
            a = tok(" " + answer, add_special_tokens=False).input_ids + [tok.eos_token_id]
            ids.append(p + a)
            labels.append([-100] * len(p) + a)
        width = max(map(len, ids))
        pad = tok.pad_token_id
        input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids], device=lm.device)
        label_t = torch.tensor([y + [-100] * (width - len(y)) for y in labels], device=lm.device)
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids], device=lm.device)
        loss = lm.model(input_ids=input_ids, attention_mask=mask, labels=label_t).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    lm.model.eval()
    k = max(1, len(losses) // 10)
    return {"steps": steps, "first_loss": sum(losses[:k]) / k, "last_loss": sum(losses[-k:]) / k}


@torch.no_grad()
def generate(
    lm: LoadedLM,
    prefix: str,
    suffixes: Sequence[str],
    max_new_tokens: int,
    batch_size: int,
    temperature: float = 0.0,
    seed: int = 0,
) -> list[str]:
    """Decoding of ``prefix + suffix`` for every suffix, the prefix encoded once.

    Greedy when ``temperature`` is 0; otherwise sampled at that temperature, seeded per
    batch (``seed`` + batch number), so a second run gives the same text.

    The shared prefix (instruction, relations, worked examples) is most of every prompt;
    its key/value cache is computed once and copied into each batch, so only the short
    per-input suffixes are prefilled. Suffixes are left-padded *after* the prefix; the
    attention mask hides the pads and position ids follow the mask.
    """
    tok = lm.tokenizer
    model = lm.model
    model.eval()
    pre = tok(prefix, add_special_tokens=False).input_ids
    cache = model(torch.tensor([pre], device=lm.device), use_cache=True).past_key_values if pre else None
    # Longest suffixes first keeps padding (wasted compute) low inside each batch.
    order = sorted(range(len(suffixes)), key=lambda i: -len(suffixes[i]))
    texts: dict[int, str] = {}
    for s in tqdm(range(0, len(order), batch_size), desc="generate", unit="batch"):
        idx = order[s : s + batch_size]
        sids = [tok(suffixes[i], add_special_tokens=False).input_ids for i in idx]
        width = max(map(len, sids))
        ids = torch.tensor([pre + [tok.pad_token_id] * (width - len(x)) + x for x in sids], device=lm.device)
        mask = torch.tensor([[1] * len(pre) + [0] * (width - len(x)) + [1] * len(x) for x in sids], device=lm.device)
        past = None
        if cache is not None:
            past = copy.deepcopy(cache)
            past.batch_repeat_interleave(len(idx))
        sampling: dict = {"do_sample": False}
        if temperature > 0:
            torch.manual_seed(seed + s)
            sampling = {"do_sample": True, "temperature": temperature}
        gen = model.generate(
            input_ids=ids,
            attention_mask=mask,
            past_key_values=past,
            max_new_tokens=max_new_tokens,
            **sampling,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
        )
        for i, row in zip(idx, gen[:, ids.shape[1] :]):
            texts[i] = tok.decode(row, skip_special_tokens=True)
    return [texts[i] for i in range(len(suffixes))]


def save_adapter(lm: LoadedLM, out: Path) -> None:
    if hasattr(lm.model, "save_pretrained") and hasattr(lm.model, "peft_config"):
        save_peft(lm.model, Path(out), lm.name)
    else:
        out.mkdir(parents=True, exist_ok=True)
        (out / "NO_ADAPTER").write_text("generate.train_steps was 0: the generator was prompted, not tuned\n")
