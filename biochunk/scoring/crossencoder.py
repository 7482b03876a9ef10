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

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch
from tqdm import tqdm

from biochunk.models import OFFLINE, offline_mode, resolve

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Group:
    """One training query: a relevant passage and its hard negatives."""

    query: str
    positive: str
    negatives: tuple[str, ...]


def load(model: str, param: str = "train_reranker.model", max_length: int = 256, device: str = "cpu", seed: int = 42):
    """A sentence-transformers CrossEncoder: a saved reranker folder, a hub id, or MiniLM with a new head.

    The new head of the offline base is drawn from ``seed``, so the "untrained
    initialisation" that training is compared against is reproducible.
    """
    offline_mode()
    from sentence_transformers import CrossEncoder

    torch.manual_seed(seed)
    path = resolve(model, param)
    return CrossEncoder(path, num_labels=1, max_length=max_length, device=device)


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
) -> list[float]:
    """Fine-tune ``ce`` (a CrossEncoder) in place; the loss of every step.

    Each step takes ``batch_size`` groups; within a group the positive must outscore
    its negatives (softmax cross-entropy with the positive as the target class).
    """
    if not groups:
        raise ValueError("no training groups: the reranker needs judged queries with negatives")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    model, tok = ce.model, ce.tokenizer
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
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
        enc = tok(firsts, seconds, truncation="only_second", max_length=ce.max_seq_length, padding=True, return_tensors="pt")
        enc = {k: v.to(model.device) for k, v in enc.items()}
        logits = model(**enc).logits.view(len(batch), width)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long, device=model.device))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss))
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
    """The top ``k`` of ``run`` per query reordered by the cross-encoder's logit."""
    pairs, owners = [], []
    for q, hits in run.items():
        for d, _ in hits[:k]:
            pairs.append((queries[q], texts[d]))
            owners.append((q, d))
    scores = predict(ce, pairs, batch_size)
    out: dict[str, list[tuple[str, float]]] = {q: [] for q in run}
    for (q, d), s in zip(owners, scores):
        out[q].append((d, float(s)))
    return {q: sorted(v, key=lambda x: (-x[1], x[0])) for q, v in out.items()}


def predict(ce, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
    if not pairs:
        return np.zeros(0, np.float32)
    # The raw logit ranks like the sigmoid and keeps ties apart.
    return np.asarray(
        ce.predict(list(pairs), batch_size=batch_size, activation_fn=torch.nn.Identity(), show_progress_bar=False),
        dtype=np.float32,
    )


def save(ce, path: str | Path) -> None:
    ce.save(str(path))
