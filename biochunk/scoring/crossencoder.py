"""A cross-encoder reranker trained here from the offline MiniLM checkpoint.

No pretrained cross-encoder loads offline (see ../shared/docs/offline-models.md), so the
default reranker is MiniLM with a fresh one-logit head, fine-tuned on (query, relevant
passage) pairs against hard negatives: the passages BM25 ranks highest that are not
judged relevant. The loss is listwise (softmax cross-entropy over one positive and its
negatives), which teaches the order a reranker needs in few steps.

A hub reranker (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2``) stays a param: any
``model`` other than the offline alias is loaded as a ready cross-encoder and used as is.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch
from tqdm import tqdm

from biochunk.models import OFFLINE, loading, offline_mode, resolve

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Group:
    """One training query: a relevant passage and its hard negatives."""

    query: str
    positive: str
    negatives: tuple[str, ...]


HEAD_FILE = "reranker_head.pt"


class MeanPoolCrossEncoder(torch.nn.Module):
    """Query and passage read together by the encoder; the logit is a linear head over the mean token state.

    Mean pooling, not the [CLS] pooler of ``AutoModelForSequenceClassification``:
    all-MiniLM-L6-v2 was trained with mean pooling, and its [CLS] state barely varies
    between inputs, so a fresh head on it starts from near-constant features and a few
    hundred CPU steps do not move it (measured: the listwise loss stayed at ln 4).
    """

    def __init__(self, path: str, max_length: int, head: torch.nn.Linear | None = None):
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.encoder = AutoModel.from_pretrained(path)
        self.head = head if head is not None else torch.nn.Linear(self.encoder.config.hidden_size, 1)
        self.max_seq_length = max_length

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def logits(self, firsts: Sequence[str], seconds: Sequence[str]) -> torch.Tensor:
        enc = self.tokenizer(list(firsts), list(seconds), truncation="only_second", max_length=self.max_seq_length, padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        states = self.encoder(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1)

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        self.eval()
        # Longest first in batches of similar length: less padding, same scores.
        order = sorted(range(len(pairs)), key=lambda i: -len(pairs[i][0]) - len(pairs[i][1]))
        out = np.zeros(len(pairs), np.float32)
        with torch.inference_mode():
            for i in range(0, len(order), batch_size):
                idx = order[i : i + batch_size]
                out[idx] = self.logits([pairs[j][0] for j in idx], [pairs[j][1] for j in idx]).float().cpu().numpy()
        return out

    def save(self, path: str | Path) -> None:
        path = Path(path)
        self.encoder.save_pretrained(str(path))
        self.tokenizer.save_pretrained(str(path))
        torch.save({"head": self.head.state_dict(), "max_length": self.max_seq_length}, path / HEAD_FILE)


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
            ce = MeanPoolCrossEncoder(path, int(state["max_length"]))
            ce.head.load_state_dict(state["head"])
            return ce.to(device).eval()
        if is_base(model):
            return MeanPoolCrossEncoder(path, max_length).to(device).eval()
        from sentence_transformers import CrossEncoder

        return CrossEncoder(path, max_length=max_length, device=device)


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


def train(
    ce,
    groups: Sequence[Group],
    steps: int,
    batch_size: int,
    lr: float,
    seed: int = 42,
    warmup: float = 0.1,
    head_lr: float | None = None,
) -> list[float]:
    """Fine-tune ``ce`` (a CrossEncoder) in place; the loss of every step.

    Each step takes ``batch_size`` groups; within a group the positive must outscore
    its negatives (softmax cross-entropy with the positive as the target class).
    """
    if not groups:
        raise ValueError("no training groups: the reranker needs judged queries with negatives")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    if not isinstance(ce, MeanPoolCrossEncoder):
        raise ValueError("only the offline base (train_reranker.model: minilm) is fine-tuned here; a hub reranker is used as is")
    model = ce
    model.train()
    # The one-logit head starts from random weights; at the encoder's small learning rate it
    # barely moves in a few hundred steps (the loss stays at ln(n)), so it gets its own.
    head = list(model.head.parameters())
    body = list(model.encoder.parameters())
    opt = torch.optim.AdamW(
        [{"params": body, "lr": lr}, {"params": head, "lr": head_lr if head_lr is not None else lr}], weight_decay=0.01
    )
    n_warm = max(1, int(warmup * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / n_warm, max(0.0, (steps - s) / max(1, steps - n_warm))))
    order: list[int] = []
    losses = []
    for _ in tqdm(range(steps), desc="reranker training", mininterval=10):
        if len(order) < batch_size:
            order += rng.sample(range(len(groups)), len(groups))
        batch, order = [groups[i] for i in order[:batch_size]], order[batch_size:]
        width = min(len(g.negatives) for g in batch) + 1  # equal group sizes make one tensor
        firsts, seconds = [], []
        for g in batch:
            for passage in (g.positive, *g.negatives[: width - 1]):
                firsts.append(g.query)
                seconds.append(passage)
        logits = model.logits(firsts, seconds).view(len(batch), width)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long, device=model.device))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


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
    if isinstance(ce, MeanPoolCrossEncoder):
        return ce.predict(pairs, batch_size)
    # A hub CrossEncoder: the raw logit ranks like the sigmoid and keeps ties apart.
    return np.asarray(
        ce.predict(list(pairs), batch_size=batch_size, activation_fn=torch.nn.Identity(), show_progress_bar=False),
        dtype=np.float32,
    )


def save(ce, path: str | Path) -> None:
    ce.save(str(path))
