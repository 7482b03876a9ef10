"""LoRA fine-tuning of the generator on the training split, and batched generation."""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Sequence

import torch
from tqdm import tqdm

from biochunk.generation.model import LoadedLM

log = logging.getLogger(__name__)


def add_lora(lm: LoadedLM, r: int) -> None:
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    model = lm.model
    if lm.quantized:
        model = prepare_model_for_kbit_training(model)
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    targets = [t for t in ("q_proj", "k_proj", "v_proj", "o_proj") if t in names] or ["c_attn"]
    lm.model = get_peft_model(model, LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.05, target_modules=targets, task_type="CAUSAL_LM"))


def finetune(lm: LoadedLM, pairs: Sequence[tuple[str, str]], steps: int, batch_size: int, lr: float, seed: int) -> dict[str, float]:
    """Causal-LM loss on the answer tokens only (prompt tokens are masked with -100)."""
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
        for prompt, answer in batch:
            p = tok(prompt, add_special_tokens=False).input_ids
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
def generate(lm: LoadedLM, prompts: Sequence[str], max_new_tokens: int, batch_size: int) -> list[str]:
    """Greedy decoding, left-padded batches (decoder-only models continue from the right)."""
    tok = lm.tokenizer
    tok.padding_side = "left"
    lm.model.eval()
    out: list[str] = []
    # Longest prompts first keeps padding (wasted compute) low inside each batch.
    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    texts: dict[int, str] = {}
    for s in tqdm(range(0, len(order), batch_size), desc="generate", unit="batch"):
        idx = order[s : s + batch_size]
        enc = tok([prompts[i] for i in idx], return_tensors="pt", padding=True, add_special_tokens=False).to(lm.device)
        gen = lm.model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
        for i, row in zip(idx, gen[:, enc.input_ids.shape[1] :]):
            texts[i] = tok.decode(row, skip_special_tokens=True)
    out = [texts[i] for i in range(len(prompts))]
    return out


def save_adapter(lm: LoadedLM, out: Path) -> None:
    if hasattr(lm.model, "save_pretrained") and hasattr(lm.model, "peft_config"):
        lm.model.save_pretrained(str(out))
    else:
        out.mkdir(parents=True, exist_ok=True)
        (out / "NO_ADAPTER").write_text("generate.train_steps was 0: the generator was prompted, not tuned\n")
