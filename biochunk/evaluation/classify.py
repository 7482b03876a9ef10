"""Binary classification scored against its labels: precision, recall, F1 and accuracy of the
positive class, with bootstrap intervals over the inputs (the classify stage's predictions,
``generation.classify``: the generator's and the evidence vote's).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from biochunk.evaluation.stats import bootstrap_ci


def prf(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Binary precision / recall / F1 of the positive class, and accuracy."""
    tp = int(((p == 1) & (y == 1)).sum())
    fp = int(((p == 1) & (y != 1)).sum())
    fn = int(((p != 1) & (y == 1)).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "accuracy": float((p == y).mean()) if len(y) else 0.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def scores(y: Sequence[int], p: Sequence[int], n_boot: int, seed: int) -> dict[str, float]:
    """``prf`` with 95% bootstrap intervals over sentences; an unparsed reply (-1) counts as no."""
    yp = np.column_stack([np.asarray(y), np.where(np.asarray(p) == 1, 1, 0)]) if len(y) else np.zeros((0, 2), int)
    out: dict[str, float] = prf(yp[:, 0], yp[:, 1])
    for key in ("precision", "recall", "f1", "accuracy"):
        out[f"{key}_ci_low"], out[f"{key}_ci_high"] = bootstrap_ci(
            yp, lambda d, key=key: prf(d[:, 0], d[:, 1])[key], n_boot, seed
        )
    return out
