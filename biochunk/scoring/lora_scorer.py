"""BioMedRAG's tailored chunk scorer, as a LoRA-adapted cross-encoder.

BioMedRAG trains a scorer so that the chunks it prefers are the ones that help the
generator produce the gold triple. Here the scorer reads (input sentence, chunk +
its relation key) pairs with a small encoder, LoRA on attention, and a linear head.
Its logit is added to the dense cosine (``cos / temperature + f(pair)``) with the head
initialised at zero, so an untrained scorer reproduces the dense order exactly and
training can only move the ranking where the data supports it.

Helpfulness target: a candidate helps when it carries the gold relation of the
input (the generator copies the retrieved relation, see issue 2's probe), so the
target distribution is uniform over those candidates; inputs whose candidates all
help or all fail carry no signal and are skipped (and counted).
"""

from __future__ import annotations

import contextlib
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from biochunk.determinism import save_peft, seed_all
from biochunk.models import loading, offline_mode, pick_device, resolve, train_dtype

log = logging.getLogger(__name__)
TEMPERATURE = 0.1  # cosines live in [-1, 1]; /0.1 puts them on the logit scale of the head


@dataclass(frozen=True)
class Candidates:
    """One input and its ranked candidates (texts already formatted for the scorer)."""

    query: str
    chunks: list[str]
    cosines: list[float]
    helpful: list[bool]


def chunk_text_for_scorer(text: str, labels: Sequence[str]) -> str:
    return f"{text} [relation: {', '.join(labels)}]" if len(labels) else text


class ChunkScorer(torch.nn.Module):
    """The encoder + LoRA + head, on ``device`` (auto: CUDA when present).

    Weights stay fp32 (AdamW updates them); on CUDA the forward pass runs under bf16
    autocast where the GPU has it (``autocast``).
    """

    def __init__(
        self, model: str, lora_r: int, max_length: int, seed: int, param: str = "train_scorer.model", device: str = "auto"
    ):
        super().__init__()
        offline_mode()
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModel, AutoTokenizer

        path = resolve(model, param)
        with loading(model, param):
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            # fp32 whatever the checkpoint holds: transformers 5 keeps a saved fp16 dtype.
            base = AutoModel.from_pretrained(path, dtype=torch.float32)
        targets = _attention_projections(base)
        # LoRA's A matrices are drawn here, not in ``train``: seed before they are.
        seed_all(seed)
        cfg = LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0, target_modules=targets)
        self.encoder = get_peft_model(base, cfg)
        self.head = torch.nn.Linear(base.config.hidden_size, 1)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)
        self.max_length = max_length
        self.model_name = model
        self.device = pick_device(device)
        self.to(self.device)

    def autocast(self):
        """bf16 autocast on a CUDA device that has bf16; nothing elsewhere."""
        dtype = train_dtype(self.device)
        if dtype == torch.float32:
            return contextlib.nullcontext()
        return torch.autocast(device_type="cuda", dtype=dtype)

    def forward(self, queries: list[str], chunks: list[str], cosines: torch.Tensor) -> torch.Tensor:
        enc = self.tokenizer(queries, chunks, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        cls = self.encoder(**enc).last_hidden_state[:, 0]
        # The head's logit is added in fp32 whatever autocast computed it in.
        return cosines.to(self.device, torch.float32) / TEMPERATURE + self.head(cls).squeeze(-1).float()

    def save(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        save_peft(self.encoder, out / "adapter", self.model_name)
        # CPU tensors, so the head loads on a machine without the GPU it was trained on.
        torch.save({k: v.cpu() for k, v in self.head.state_dict().items()}, out / "head.pt")


def _attention_projections(model: torch.nn.Module) -> list[str]:
    # BERT names them query/value, Llama-style models q_proj/v_proj: pick what exists.
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    for pair in (["query", "value"], ["q_proj", "v_proj"], ["q_lin", "v_lin"]):
        if set(pair) <= names:
            return pair
    raise ValueError("train_scorer.model: cannot find attention projections for LoRA in this model")


def train(
    scorer: ChunkScorer, data: Sequence[Candidates], steps: int, batch_size: int, lr: float, seed: int
) -> dict[str, float]:
    """Listwise training: cross-entropy between the helpfulness distribution and softmax(scores)."""
    usable = [c for c in data if 0 < sum(c.helpful) < len(c.helpful)]
    stats = {"train_inputs": len(data), "train_inputs_used": len(usable), "train_inputs_skipped_no_signal": len(data) - len(usable)}
    if steps == 0 or not usable:
        stats.update(steps=0, first_loss=float("nan"), last_loss=float("nan"))
        return stats
    torch.manual_seed(seed)
    rng = random.Random(seed)
    params = [p for p in scorer.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr)
    scorer.train()
    losses = []
    for _ in tqdm(range(steps), desc="train scorer", unit="step"):
        batch = rng.sample(usable, min(batch_size, len(usable)))
        q = [b.query for b in batch for _ in b.chunks]
        c = [t for b in batch for t in b.chunks]
        cos = torch.tensor([x for b in batch for x in b.cosines], dtype=torch.float32)
        with scorer.autocast():
            logits = scorer(q, c, cos)
        loss, i = torch.zeros((), device=scorer.device), 0
        for b in batch:
            n = len(b.chunks)
            target = torch.tensor(b.helpful, dtype=torch.float32, device=scorer.device)
            target = target / target.sum()
            loss = loss - (target * torch.log_softmax(logits[i : i + n], dim=0)).sum()
            i += n
        loss = loss / len(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    scorer.eval()
    k = max(1, len(losses) // 10)
    stats.update(steps=steps, first_loss=float(np.mean(losses[:k])), last_loss=float(np.mean(losses[-k:])))
    return stats


@torch.no_grad()
def score(scorer: ChunkScorer, data: Sequence[Candidates], batch_size: int = 64) -> list[np.ndarray]:
    scorer.eval()
    flat = [(i, d.query, t, c) for i, d in enumerate(data) for t, c in zip(d.chunks, d.cosines)]
    out = np.zeros(len(flat), np.float32)
    for s in tqdm(range(0, len(flat), batch_size), desc="rescore", unit="batch"):
        part = flat[s : s + batch_size]
        cos = torch.tensor([p[3] for p in part], dtype=torch.float32)
        with scorer.autocast():
            out[s : s + len(part)] = scorer([p[1] for p in part], [p[2] for p in part], cos).cpu().numpy()
    res, i = [], 0
    for d in data:
        res.append(out[i : i + len(d.chunks)])
        i += len(d.chunks)
    return res


def candidates_for(
    rankings: pd.DataFrame, chunks: pd.DataFrame, sentences: dict[str, str], gold_relations: dict[str, set[str]]
) -> tuple[list[str], list[Candidates], list[list[str]]]:
    """Group a ranking into per-input ``Candidates``; also returns input ids and chunk ids."""
    by_id = chunks.set_index("chunk_id")
    ids, data, chunk_lists = [], [], []
    for iid, g in rankings.sort_values(["input_id", "rank"]).groupby("input_id", sort=True):
        rows = by_id.loc[g["chunk_id"]]
        labels = [tuple(x) for x in rows["labels"]]
        gold = gold_relations.get(str(iid), set())
        ids.append(str(iid))
        chunk_lists.append(g["chunk_id"].astype(str).tolist())
        data.append(
            Candidates(
                query=sentences[str(iid)],
                chunks=[chunk_text_for_scorer(t, lab) for t, lab in zip(rows["text"], labels)],
                cosines=g["score"].astype(float).tolist(),
                helpful=[bool(gold & set(lab)) for lab in labels],
            )
        )
    return ids, data, chunk_lists


def sample_ids(ids: pd.Series, n: int | None, seed: int) -> set[str]:
    """A seeded sample of ``n`` distinct ids (all of them when ``n`` is None or larger)."""
    distinct = sorted(set(ids.astype(str)))
    if n is None or n >= len(distinct):
        return set(distinct)
    return set(random.Random(seed).sample(distinct, n))
