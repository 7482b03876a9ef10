"""The project's one cross-encoder and its one training loop: the retrieval reranker and the
BioMedRAG chunk scorer (``lora_scorer``) are both this model.

No pretrained cross-encoder loads offline (see ../shared/docs/offline-models.md), so the
default is MiniLM with a fresh one-logit head over the mean token state, fine-tuned here:
- as the reranker, the whole encoder, on (query, relevant passage) against hard negatives
  (the passages BM25 ranks highest that are not judged relevant);
- as the chunk scorer, LoRA on the attention projections with a head that starts at zero,
  its logit added to a prior (the dense cosine), so an untrained scorer keeps the dense order.
Both learn listwise: softmax cross-entropy between a target distribution over a query's
passages and the model's scores (``train``), which teaches an order in few steps.

A hub reranker (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2``) stays a param: any
``model`` other than the offline alias is loaded as a ready cross-encoder and used as is.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch
from tqdm import tqdm

from biochunk.determinism import save_peft, seed_all
from biochunk.models import OFFLINE, loading, offline_mode, resolve, train_dtype

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Group:
    """One reranker training query: a relevant passage and its hard negatives."""

    query: str
    positive: str
    negatives: tuple[str, ...]


@dataclass(frozen=True)
class Listwise:
    """One training list: a query, its passages, the target distribution over them (sums to
    1) and, optionally, a prior logit per passage that the model's logit is added to."""

    query: str
    passages: tuple[str, ...]
    target: tuple[float, ...]
    prior: tuple[float, ...] | None = None


HEAD_FILE = "reranker_head.pt"


class CrossEncoder(torch.nn.Module):
    """Query and passage read together by the encoder; the logit is a linear head over the mean token state.

    Mean pooling, not the [CLS] pooler of ``AutoModelForSequenceClassification``:
    all-MiniLM-L6-v2 was trained with mean pooling, and its [CLS] state barely varies
    between inputs, so a fresh head on it starts from near-constant features and a few
    hundred CPU steps do not move it (measured: the listwise loss stayed at ln 4).

    ``lora_r``: LoRA adapters of that rank on the attention projections, the base frozen
    (None: the whole encoder trains). ``zero_head``: the head starts at 0, so the model adds
    nothing to a prior until trained. Weights stay fp32; on a CUDA device with bf16 the
    forward pass runs under bf16 autocast.
    """

    def __init__(
        self,
        path: str,
        max_length: int,
        head: torch.nn.Linear | None = None,
        lora_r: int | None = None,
        zero_head: bool = False,
        seed: int | None = None,
    ):
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        # fp32 whatever the checkpoint holds: transformers 5 keeps a saved fp16 dtype.
        base = AutoModel.from_pretrained(path, dtype=torch.float32)
        if seed is not None:
            # LoRA's A matrices and a fresh head are drawn here, not in ``train``: seed first.
            seed_all(seed)
        self.lora = lora_r is not None
        if lora_r is not None:
            from peft import LoraConfig, get_peft_model

            cfg = LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0, target_modules=_attention_projections(base))
            base = get_peft_model(base, cfg)
        self.encoder = base
        self.head = head if head is not None else torch.nn.Linear(base.config.hidden_size, 1)
        if zero_head:
            torch.nn.init.zeros_(self.head.weight)
            torch.nn.init.zeros_(self.head.bias)
        self.max_seq_length = max_length

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def autocast(self):
        """bf16 autocast on a CUDA device that has bf16; nothing elsewhere."""
        dtype = train_dtype(self.device.type)
        if dtype == torch.float32:
            return contextlib.nullcontext()
        return torch.autocast(device_type="cuda", dtype=dtype)

    def logits(self, firsts: Sequence[str], seconds: Sequence[str]) -> torch.Tensor:
        enc = self.tokenizer(list(firsts), list(seconds), truncation=True, max_length=self.max_seq_length, padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        with self.autocast():
            states = self.encoder(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(torch.float32)
        pooled = (states.float() * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1).float()

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        self.eval()
        # Longest first in batches of similar length: less padding, same scores.
        order = sorted(range(len(pairs)), key=lambda i: -len(pairs[i][0]) - len(pairs[i][1]))
        out = np.zeros(len(pairs), np.float32)
        starts = range(0, len(order), batch_size)
        with torch.inference_mode():
            for i in tqdm(starts, desc="cross-encoder", unit="batch", disable=not progress):
                idx = order[i : i + batch_size]
                out[idx] = self.logits([pairs[j][0] for j in idx], [pairs[j][1] for j in idx]).cpu().numpy()
        return out

    def save(self, path: str | Path, model_name: str | None = None) -> None:
        """The whole encoder + ``HEAD_FILE`` (a reranker ``load`` reads back), or with LoRA the
        adapter (``adapter/``, recorded against ``model_name``) + ``head.pt``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self.lora:
            save_peft(self.encoder, path / "adapter", model_name or "")
            # CPU tensors, so the head loads on a machine without the GPU it was trained on.
            torch.save({k: v.cpu() for k, v in self.head.state_dict().items()}, path / "head.pt")
            return
        self.encoder.save_pretrained(str(path))
        self.tokenizer.save_pretrained(str(path))
        torch.save({"head": self.head.state_dict(), "max_length": self.max_seq_length}, path / HEAD_FILE)


def _attention_projections(model: torch.nn.Module) -> list[str]:
    # BERT names them query/value, Llama-style models q_proj/v_proj: pick what exists.
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    for pair in (["query", "value"], ["q_proj", "v_proj"], ["q_lin", "v_lin"]):
        if set(pair) <= names:
            return pair
    raise ValueError("cannot find attention projections for LoRA in this model")


def train(
    model: CrossEncoder,
    lists: Sequence[Listwise],
    steps: int,
    batch_size: int,
    lr: float,
    seed: int = 42,
    warmup: float = 0.1,
    head_lr: float | None = None,
    desc: str = "cross-encoder training",
) -> list[float]:
    """Fine-tune ``model`` in place, listwise; the loss of every step.

    Each step takes ``batch_size`` lists (every list once per epoch, in a seeded order); the
    loss is the mean over them of the cross-entropy between the list's target distribution
    and softmax(prior + logit). AdamW (weight decay 0.01) with linear warm-up and decay,
    gradients clipped at norm 1. The head, fresh or zero, gets its own rate (``head_lr``):
    at the encoder's small rate it barely moves in a few hundred steps (the loss stays at ln n).
    """
    if not lists:
        raise ValueError("no training lists: nothing to learn an order from")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    model.train()
    head = list(model.head.parameters())
    body = [p for p in model.encoder.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": body, "lr": lr}, {"params": head, "lr": head_lr if head_lr is not None else lr}], weight_decay=0.01
    )
    n_warm = max(1, int(warmup * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / n_warm, max(0.0, (steps - s) / max(1, steps - n_warm))))
    order: list[int] = []
    losses = []
    for _ in tqdm(range(steps), desc=desc, unit="step", mininterval=10):
        if len(order) < batch_size:
            order += rng.sample(range(len(lists)), len(lists))
        batch, order = [lists[i] for i in order[:batch_size]], order[batch_size:]
        firsts = [b.query for b in batch for _ in b.passages]
        seconds = [p for b in batch for p in b.passages]
        logits = model.logits(firsts, seconds)
        loss, i = torch.zeros((), device=model.device), 0
        for b in batch:
            n = len(b.passages)
            seg = logits[i : i + n]
            if b.prior is not None:
                seg = seg + torch.tensor(b.prior, dtype=torch.float32, device=model.device)
            target = torch.tensor(b.target, dtype=torch.float32, device=model.device)
            loss = loss - (target * torch.log_softmax(seg, dim=0)).sum()
            i += n
        loss = loss / len(batch)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def group_lists(groups: Sequence[Group]) -> list[Listwise]:
    """Reranker groups as training lists: all the target mass on the positive."""
    return [Listwise(g.query, (g.positive, *g.negatives), (1.0,) + (0.0,) * len(g.negatives)) for g in groups]


def load(model: str, param: str = "train_reranker.model", max_length: int = 256, device: str = "cpu", seed: int = 42):
    """A reranker with ``predict(pairs) -> scores``: one saved by ``save``, MiniLM with a new head, or a hub cross-encoder.

    The new head of the offline base is drawn from ``seed``, so the "untrained
    initialisation" that training is compared against is reproducible.
    """
    offline_mode()
    torch.manual_seed(seed)
    path = resolve(model, param)
    saved = Path(path) / HEAD_FILE
    with loading(model, param):
        if saved.exists():
            # weights_only: the head file is a plain state dict; never unpickle code from a model folder.
            state = torch.load(saved, map_location="cpu", weights_only=True)
            ce = CrossEncoder(path, int(state["max_length"]))
            ce.head.load_state_dict(state["head"])
            return ce.to(device).eval()
        if is_base(model):
            return CrossEncoder(path, max_length).to(device).eval()
        from sentence_transformers import CrossEncoder as HubCrossEncoder

        return HubCrossEncoder(path, max_length=max_length, device=device)


REPORT_FILE = "report.json"


def off_reason(folder: str | Path) -> str | None:
    """Why the train_reranker output in ``folder`` holds no reranker, or None when it holds one.

    Many BEIR datasets ship test judgements only; with nothing to train on, train_reranker
    writes just a report saying so, and retrieve runs without reranking.
    """
    report = Path(folder) / REPORT_FILE
    if not report.is_file():
        return None
    data = json.loads(report.read_text())
    return None if data.get("reranking", True) else str(data.get("reason", "no reranker"))


def is_base(model: str) -> bool:
    """Whether ``model`` is a plain encoder to fine-tune (an offline alias), not a ready reranker."""
    return model in OFFLINE


def groups_from_run(
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence[tuple[str, float]]],
    texts: Mapping[str, str],
    n_negatives: int,
) -> tuple[list[Group], int]:
    """Training groups: every judged (query, relevant doc) with the run's top unjudged docs.

    Returns the groups and the number of judged pairs skipped because the run offered
    no negative for them.
    """
    groups, skipped = [], 0
    for q, rel in sorted(qrels.items()):
        if q not in queries:
            skipped += len(rel)
            continue
        negs = tuple(texts[d] for d, _ in run.get(q, []) if d not in rel)[:n_negatives]
        for d, r in sorted(rel.items()):
            if r <= 0:
                continue
            if not negs:
                skipped += 1
                continue
            groups.append(Group(queries[q], texts[d], negs))
    return groups, skipped


def train_reranker(ce, groups: Sequence[Group], steps: int, batch_size: int, lr: float, seed: int = 42, head_lr: float | None = None) -> list[float]:
    """Fine-tune the offline base as a reranker (``train`` over ``group_lists``); the loss of every step."""
    if not groups:
        raise ValueError("no training groups: the reranker needs judged queries with negatives")
    if not isinstance(ce, CrossEncoder):
        raise ValueError("only the offline base (train_reranker.model: minilm) is fine-tuned here; a hub reranker is used as is")
    return train(ce, group_lists(groups), steps, batch_size, lr, seed, head_lr=head_lr, desc="reranker training")


def rerank(
    ce,
    queries: Mapping[str, str],
    run: Mapping[str, Sequence[tuple[str, float]]],
    texts: Mapping[str, str],
    k: int,
    batch_size: int = 32,
) -> dict[str, list[tuple[str, float]]]:
    """``run`` with its top ``k`` per query reordered by the cross-encoder's logit.

    Hits below ``k`` keep their order after the reranked ones (scores shifted below the
    lowest logit), so depth-based measures (MAP, recall@100) stay comparable with ``run``.
    """
    pairs, owners = [], []
    for q, hits in run.items():
        for d, _ in hits[:k]:
            pairs.append((queries[q], texts[d]))
            owners.append((q, d))
    scores = predict(ce, pairs, batch_size)
    top: dict[str, list[tuple[str, float]]] = {q: [] for q in run}
    for (q, d), s in zip(owners, scores):
        top[q].append((d, float(s)))
    out = {}
    for q, hits in run.items():
        head = sorted(top[q], key=lambda x: (-x[1], x[0]))
        floor = min((s for _, s in head), default=0.0)
        out[q] = head + [(d, floor - 1.0 - i) for i, (d, _) in enumerate(hits[k:])]
    return out


def predict(ce, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
    if not pairs:
        return np.zeros(0, np.float32)
    if isinstance(ce, CrossEncoder):
        return ce.predict(pairs, batch_size)
    # A hub CrossEncoder: the raw logit ranks like the sigmoid and keeps ties apart.
    return np.asarray(
        ce.predict(list(pairs), batch_size=batch_size, activation_fn=torch.nn.Identity(), show_progress_bar=False),
        dtype=np.float32,
    )


def save(ce, path: str | Path) -> None:
    ce.save(str(path))
