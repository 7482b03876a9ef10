"""BioMedRAG's tailored chunk scorer: the project's cross-encoder (``crossencoder``) with LoRA.

BioMedRAG trains a scorer so that the chunks it prefers are the ones that help the
generator produce the gold triple. Here the scorer reads (input sentence, chunk +
its relation key) pairs with the small encoder, LoRA on attention, mean pooling and a
linear head. Its logit is added to the dense cosine (``cos / temperature + f(pair)``) with
the head initialised at zero, so an untrained scorer reproduces the dense order exactly and
training can only move the ranking where the data supports it. Model and training loop are
the reranker's (``crossencoder.CrossEncoder``, ``crossencoder.train``): one implementation.

Helpfulness target: a candidate helps when it carries the gold relation of the
input (the generator copies the retrieved relation, see issue 2's probe), so the
target distribution is uniform over those candidates; inputs whose candidates all
help or all fail carry no signal and are skipped (and counted).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from biochunk.models import loading, offline_mode, pick_device, resolve
from biochunk.scoring.crossencoder import CrossEncoder, Listwise
from biochunk.scoring.crossencoder import train as train_listwise

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


class ChunkScorer:
    """The LoRA cross-encoder on ``device`` (auto: CUDA when present), and the model param it names."""

    def __init__(
        self, model: str, lora_r: int, max_length: int, seed: int, param: str = "train_scorer.model", device: str = "auto"
    ):
        offline_mode()
        path = resolve(model, param)
        with loading(model, param):
            self.ce = CrossEncoder(path, max_length, lora_r=lora_r, zero_head=True, seed=seed)
        self.model_name = model
        self.device = pick_device(device)
        self.ce.to(self.device)

    def save(self, out: Path) -> None:
        self.ce.save(out, self.model_name)


def train(
    scorer: ChunkScorer, data: Sequence[Candidates], steps: int, batch_size: int, lr: float, seed: int
) -> dict[str, float]:
    """Listwise training: cross-entropy between the helpfulness distribution and softmax(scores)."""
    usable = [c for c in data if 0 < sum(c.helpful) < len(c.helpful)]
    stats = {"train_inputs": len(data), "train_inputs_used": len(usable), "train_inputs_skipped_no_signal": len(data) - len(usable)}
    if steps == 0 or not usable:
        stats.update(steps=0, first_loss=float("nan"), last_loss=float("nan"))
        return stats
    lists = [
        Listwise(
            c.query,
            tuple(c.chunks),
            tuple(h / sum(c.helpful) for h in c.helpful),
            tuple(x / TEMPERATURE for x in c.cosines),
        )
        for c in usable
    ]
    losses = train_listwise(scorer.ce, lists, steps, batch_size, lr, seed, desc="train scorer")
    k = max(1, len(losses) // 10)
    stats.update(steps=steps, first_loss=float(np.mean(losses[:k])), last_loss=float(np.mean(losses[-k:])))
    return stats


def score(scorer: ChunkScorer, data: Sequence[Candidates], batch_size: int = 64) -> list[np.ndarray]:
    """Each input's candidates scored: cosine / temperature + the cross-encoder's logit."""
    pairs = [(d.query, t) for d in data for t in d.chunks]
    logits = scorer.ce.predict(pairs, batch_size, progress=True)
    res, i = [], 0
    for d in data:
        n = len(d.chunks)
        res.append(np.asarray(d.cosines, np.float32) / np.float32(TEMPERATURE) + logits[i : i + n])
        i += n
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
