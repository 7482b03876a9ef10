"""Paper vs this project: one table format for every reproduced experiment (docs/results/).

Each paper command (``make paper-<name>``) measures its rows and hands them to
:func:`publish`, which writes the Markdown block into ``docs/results/<paper>.md`` between
markers (the prose around it is kept) and the same figures as JSON beside it. Every cell has
three parts: the paper's number, ours with its 95% bootstrap interval, and, for each published
*difference*, whether our paired interval confirms its direction, reverses it, or cannot
separate the two at this sample size. One implementation, so every paper is judged alike.

Every paper number and every published direction carries its :class:`Source`: the words of the
paper text in ``../shared/papers/`` that state it, and where they stand (tests/test_citations.py
finds each quote there). A direction the paper states in words, with no number, is a
:attr:`Difference.claim` and is judged like a number's sign.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from scipy.stats import t as student_t
from scipy.stats import ttest_1samp

from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import ITEM_SCORES, atomic_path, read_table

ALPHA, POWER = 0.05, 0.80  # the t-tests' level; the power of the smallest detectable difference

Direction = Literal["confirmed", "reversed", "not separable", "no published figure"]


@dataclass(frozen=True)
class Estimate:
    """Our number with its 95% interval (``lo``/``hi`` NaN when no interval applies)."""

    value: float
    lo: float = float("nan")
    hi: float = float("nan")

    def fmt(self, digits: int = 3, signed: bool = False) -> str:
        f = f"{{:{'+' if signed else ''}.{digits}f}}"
        if np.isnan(self.lo):
            return f.format(self.value)
        return f"{f.format(self.value)} [{f.format(self.lo)}, {f.format(self.hi)}]"


def mean_ci(x: np.ndarray, n_boot: int = 1000, seed: int = 42) -> Estimate:
    """Mean of per-item scores with a percentile bootstrap interval over the items."""
    x = np.asarray(x, dtype=float)
    lo, hi = bootstrap_ci(x, np.mean, n_boot, seed)
    return Estimate(float(x.mean()) if len(x) else float("nan"), lo, hi)


def paired_delta(a: np.ndarray, b: np.ndarray, n_boot: int = 1000, seed: int = 42) -> Estimate:
    """mean(b) − mean(a) over the same items, resampling items for both at once."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same items ({a.shape} vs {b.shape})")
    return mean_ci(b - a, n_boot, seed)


def paired_statistic(rows: np.ndarray, statistic: Callable[[np.ndarray], float], n_boot: int = 1000, seed: int = 42) -> Estimate:
    """A statistic of paired rows (e.g. micro F1(B) − F1(A) over count columns) with its interval."""
    lo, hi = bootstrap_ci(rows, statistic, n_boot, seed)
    return Estimate(float(statistic(rows)), lo, hi)


def direction(paper_delta: float | None, ours: Estimate) -> Direction:
    """Does our paired interval agree with the sign of the published difference?

    confirmed / reversed only when the interval excludes 0; a published difference of 0 (or
    none) cannot be confirmed by a sign, so it is reported as no published figure. A direction
    stated in words counts as its sign (+1 or −1).
    """
    if paper_delta is None or paper_delta == 0 or np.isnan(paper_delta):
        return "no published figure"
    if np.isnan(ours.lo) or (ours.lo <= 0 <= ours.hi):
        return "not separable"
    return "confirmed" if (ours.lo > 0) == (paper_delta > 0) else "reversed"


@dataclass(frozen=True)
class Source:
    """Where a paper states a number or a direction.

    ``file``: a paper text of ``../shared/papers/``; ``where``: its section, table or lines
    ("line 109", "Table 3, lines 210–214": a line range is where the test looks for the quote);
    ``quote``: the paper's words, verbatim; ``figure``: the number as printed in them ("15.6%"),
    None for a direction stated in words. Where a paper's text and its table disagree, a cell
    carries one Source for each, and its note says which one the cell shows.
    """

    file: str
    where: str
    quote: str
    figure: str | None = None


Sources = tuple[Source, ...]


@dataclass
class Row:
    """One method / setting: per metric the paper's number (cited in ``sources``) and ours."""

    label: str
    paper: dict[str, float | None]
    ours: dict[str, Estimate]
    note: str = ""
    sources: dict[str, Sources] = field(default_factory=dict)


@dataclass
class Difference:
    """A published difference B − A and our paired estimate of it.

    ``paper``: the published number, or None; ``claim``: +1 / −1 where the paper states only
    the direction (B above / below A); ``sources``: where it says so; ``setting``: how our
    measurement differs from the paper's, where it does (a verdict names it in its own row).
    """

    label: str
    metric: str
    paper: float | None
    ours: Estimate
    claim: int | None = None
    sources: Sources = ()
    setting: str = ""

    @property
    def direction(self) -> Direction:
        return direction(self.paper if self.paper is not None else self.claim, self.ours)


@dataclass
class NotRun:
    """A paper row that cannot be measured here: why, the command that would measure it (where
    one exists), and the paper's words for what it would check."""

    row: str
    reason: str
    command: str = ""
    sources: Sources = ()


@dataclass
class PaperTable:
    """One reproduced experiment of one paper, with what produced it."""

    paper: str  # file stem under docs/results/
    section: str  # marker id: several experiments of one paper each own a block
    title: str
    command: str
    sample: str
    models: str
    wall_s: float | None  # None: a DVC pipeline's table, which must reproduce byte for byte
    metrics: list[str]
    rows: list[Row] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    not_run: list[NotRun | tuple[str, str]] = field(default_factory=list)  # or (paper row, one-line reason)
    notes: list[str] = field(default_factory=list)
    digits: int = 3
    metric_digits: dict[str, int] = field(default_factory=dict)  # per metric, where ``digits`` does not fit (counts)


def _paper_cell(v: float | None, digits: int) -> str:
    return "—" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{digits}f}"


def render(t: PaperTable) -> str:
    """The Markdown block: provenance, the rows, the differences, what could not run, and the
    numbered sources that the paper cells, directions and rows not run cite."""
    refs: dict[Source, int] = {}

    def cite(sources: Sources) -> str:
        return " [" + ", ".join(str(refs.setdefault(s, len(refs) + 1)) for s in sources) + "]" if sources else ""

    # 0 = measured by earlier runs whose time was not kept (the notes say where it was).
    # None = rendered by a pipeline's report stage: no clock in a file that must reproduce.
    wall = "" if t.wall_s is None else f"{t.wall_s / 60:.1f} min" if t.wall_s > 0 else "not recorded for these rows (see the notes)"
    out = [
        f"### {t.title}",
        "",
        f"Command: `{t.command}`  ",
        f"Sample: {t.sample}  ",
        f"Models: {t.models}" + ("  " if wall else ""),
        *([f"Wall time on this machine (2 CPU cores): {wall}"] if wall else []),
        "",
        "| " + " | ".join(["setting"] + [f"{m}: paper / ours [95% CI]" for m in t.metrics]) + " |",
        "|---|" + "---|" * len(t.metrics),
    ]
    for r in t.rows:
        cells = []
        for m in t.metrics:
            ours = r.ours.get(m)
            d = t.metric_digits.get(m, t.digits)
            cells.append(f"{_paper_cell(r.paper.get(m), d)}{cite(r.sources.get(m, ()))} / {ours.fmt(d) if ours else '—'}")
        label = f"{r.label} ({r.note})" if r.note else r.label
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    if t.differences:
        out += [
            "",
            "| difference (B − A) | metric | paper | ours, paired [95% CI] | direction | our setting differs |",
            "|---|---|---:|---|---|---|",
        ]
        for d in t.differences:
            if d.paper is not None:
                paper = f"{d.paper:+.{t.digits}f}"
            else:
                paper = {None: "—", 1: "> 0 (stated)", -1: "< 0 (stated)"}[d.claim]
            out.append(
                f"| {d.label} | {d.metric} | {paper}{cite(d.sources)} | {d.ours.fmt(t.digits, signed=True)} | {d.direction} | {d.setting} |"
            )
    if t.not_run:
        out += ["", "Not run here:", ""]
        for n in (x if isinstance(x, NotRun) else NotRun(*x) for x in t.not_run):
            out.append(f"- {n.row}{cite(n.sources)}: {n.reason}" + (f" Command: {n.command}" if n.command else ""))
    if t.notes:
        out += [""] + t.notes
    if refs:
        out += ["", "Sources (paper texts of `../shared/papers/`):", ""]
        out += [f"{i}. `{s.file}`, {s.where}: “{s.quote}”" for s, i in refs.items()]
    return "\n".join(out) + "\n"


# -- statistics beside the intervals: paired t-tests, Holm, the smallest detectable difference --


def detectable(contrast: np.ndarray, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest mean difference a two-sided paired t-test at ``alpha`` finds with ``power``,
    at this sample size and the observed SD of the per-question differences."""
    n = len(contrast)
    if n < 2:
        return float("nan")
    sd = float(np.std(contrast, ddof=1))
    return (student_t.ppf(1 - alpha / 2, n - 1) + student_t.ppf(power, n - 1)) * sd / np.sqrt(n)


def p_value(contrast: np.ndarray) -> float:
    """Two-sided paired t-test of a zero mean difference (scipy's ttest_rel is ttest_1samp of
    the differences); 1.0 where every difference is 0."""
    if len(contrast) < 2 or not np.any(contrast != contrast[0]):
        return 1.0 if not np.any(contrast) else 0.0
    return float(ttest_1samp(contrast, 0.0).pvalue)


def holm(pvalues: list[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (statsmodels' ``multipletests``)."""
    from statsmodels.stats.multitest import multipletests

    if not pvalues:
        return np.array([])
    return multipletests(pvalues, alpha=ALPHA, method="holm")[1]


@dataclass
class Judged:
    """A difference with its per-question contrast, whose mean the t-test and the power read."""

    diff: Difference
    contrast: np.ndarray

    @property
    def p(self) -> float:
        return p_value(self.contrast)


def _span(values: list[float], digits: int) -> str:
    lo, hi = (f"{x:.{digits}f}" for x in (np.nanmin(values), np.nanmax(values)))
    return lo if lo == hi else f"{lo}–{hi}"


def stats_notes(judged: list[Judged], n: int, digits: int = 3, group: Callable[[str], str] = str) -> list[str]:
    """Holm-adjusted paired t-tests over the table's differences, the smallest difference it can
    detect per metric (``group``: the metric a difference's metric counts under), and its verdicts
    on the paper's stated directions."""
    if not judged:
        return []
    ps = [j.p for j in judged]
    adj = holm(ps)
    low = [(j, p, a) for j, p, a in zip(judged, ps, adj) if p < ALPHA]
    kept = [x for x in low if x[2] < ALPHA]
    detect: dict[str, list[float]] = {}
    for j in judged:
        detect.setdefault(group(j.diff.metric), []).append(detectable(j.contrast))
    claimed = [j.diff for j in judged if j.diff.paper is not None or j.diff.claim is not None]
    verdicts = {v: [d for d in claimed if d.direction == v] for v in ("confirmed", "reversed", "not separable")}

    def names(ds: list[Difference]) -> str:
        return "; ".join(f"{d.label} ({d.metric})" for d in ds) or "none"

    out = [
        (
            f"Multiple comparisons: {len(judged)} paired differences in this table. Paired t-test p < {ALPHA} "
            f"before adjustment for {len(low)}"
            + (": " + "; ".join(f"{j.diff.label} ({j.diff.metric}) p = {p:.3f}, Holm p = {a:.3f}" for j, p, a in low) if low else "")
            + f". Below {ALPHA} after Holm's adjustment over all {len(judged)}: {len(kept)}"
            + (" (" + "; ".join(f"{j.diff.label} ({j.diff.metric})" for j, _, _ in kept) + ")" if kept else "")
            + ". The verdicts use the 95% bootstrap intervals, unadjusted."
        ),
        (
            f"Smallest difference this table can detect (paired t-test, two-sided α = {ALPHA}, {POWER:.0%} power, "
            f"n = {n}, from each difference's observed SD of the per-question differences; absolute units, "
            "range over the table's differences): "
            + "; ".join(f"{m} {_span(v, digits)}" for m, v in detect.items())
            + "."
        ),
    ]
    if claimed:
        out.append(
            f"The paper's stated directions here ({len(claimed)}): confirmed {len(verdicts['confirmed'])} "
            f"({names(verdicts['confirmed'])}); reversed {len(verdicts['reversed'])} ({names(verdicts['reversed'])}); "
            f"not separable {len(verdicts['not separable'])}."
        )
    return out


def read_items(path: Path) -> dict[str, np.ndarray]:
    """Per-item scores (ITEM_SCORES, an evaluate stage's output) as metric -> values in item order.

    The order is the file's, which is the same for every setting of one experiment (sorted
    item ids), so two settings' arrays pair item by item."""
    df = read_table(path, ITEM_SCORES)
    return {m: g["value"].to_numpy(dtype=float) for m, g in df.groupby("metric", sort=False)}


def _markers(section: str) -> tuple[str, str]:
    return f"<!-- paper-table:{section}:start -->", f"<!-- paper-table:{section}:end -->"


def to_json(t: PaperTable) -> dict:
    body = asdict(t)
    body["differences"] = [{**asdict(d), "direction": d.direction} for d in t.differences]
    return body


def publish(t: PaperTable, results_dir: Path) -> tuple[Path, Path]:
    """Replace (or append) this table's marked block in ``<paper>.md``; write ``<paper>-<section>.json``.

    Both files are written to a temporary path and renamed, so an interrupted run leaves the
    previous table whole.
    """
    md = results_dir / f"{t.paper}.md"
    js = results_dir / "data" / f"{t.paper}-{t.section}.json"
    start, end = _markers(t.section)
    block = f"{start}\n{render(t)}{end}"
    text = md.read_text(encoding="utf-8") if md.is_file() else f"# Results: {t.paper}\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block + "\n"
    js.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(md) as tmp:
        tmp.write_text(text, encoding="utf-8")
    with atomic_path(js) as tmp:
        tmp.write_text(json.dumps(to_json(t), indent=2, default=float) + "\n", encoding="utf-8")
    return md, js
