"""Bootstrap confidence intervals over inputs (seeded, so reruns agree)."""

from __future__ import annotations

from typing import Callable

import numpy as np


def bootstrap_ci(
    data: np.ndarray, statistic: Callable[[np.ndarray], float], n: int = 1000, seed: int = 42, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over ``n`` resamples of the rows of ``data``."""
    if n == 0 or len(data) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(data), size=(n, len(data)))
    stats = np.array([statistic(data[i]) for i in idx])
    lo, hi = np.quantile(stats, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)
