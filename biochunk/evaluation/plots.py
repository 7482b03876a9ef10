"""PNG versions of the plot data, for people (DVC renders the CSVs itself)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on CI or servers
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from biochunk.io import atomic_path  # noqa: E402


def histogram_table(chunks: pd.DataFrame, bins: int = 30) -> pd.DataFrame:
    """Plot table: chunk sizes per method, pre-binned (a pooled corpus has ~10^5 chunks)."""
    rows = []
    for method, g in chunks.groupby("method", sort=True):
        n = g["n_tokens"].to_numpy()
        lo, hi = int(n.min()), int(n.max())
        # Few distinct sizes (5-word windows): one bar per size, so no two bins round to one label.
        edges = np.arange(lo, hi + 2) if hi - lo + 1 <= bins else np.histogram_bin_edges(n, bins=bins)
        counts, _ = np.histogram(n, bins=edges)
        rows += [{"method": method, "n_tokens": int(round(e)), "chunks": int(c)} for e, c in zip(edges[:-1], counts)]
    return pd.DataFrame(rows, columns=["method", "n_tokens", "chunks"])


def summary_png(curve: pd.DataFrame, lengths: pd.DataFrame, title: str, path: Path) -> None:
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for ranker, g in curve.groupby("ranker"):
        a.plot(g["k"], g["relation_hit"], marker="o", label=ranker)
    a.set(xlabel="k", ylabel="share of test inputs", title="gold relation among top-k chunks", ylim=(0, 1))
    a.legend()
    b.hist(lengths["n_tokens"], bins=30, color="tab:gray")
    b.set(xlabel="tokens per chunk", ylabel="chunks", title="chunk sizes")
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
