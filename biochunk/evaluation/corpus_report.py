"""One self-contained HTML page for a chunk-method comparison on the user's corpus.

Everything is inside the file: plots are PNGs inlined as base64 ``data:`` URIs, the style is
an inline sheet, and there is no script, so the page opens offline in any browser. It reads
the plain dict of ``retrieval.compare.metrics`` plus the sampled questions and the chunk
sizes; it computes nothing that the comparison did not.
"""

from __future__ import annotations

import base64
import html
import io
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biochunk.evaluation.chunking import MethodRun, sizes_png

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
th{white-space:normal}td{white-space:nowrap}table{border-collapse:collapse;margin:.5em 0}td,th{padding:.3em .6em;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child,td:nth-child(2),th:nth-child(2){text-align:left}tr.best td{background:#eaf6ea}tr.worst td{background:#fbeaea}
.muted{color:#777}.note{background:#f6f6f6;border-left:3px solid #bbb;padding:.4em .8em;margin:.3em 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}.chunk{border:1px solid #ddd;border-radius:6px;padding:.6em .8em;
font-size:.9em;white-space:pre-wrap;max-height:22em;overflow:auto}mark{background:#ffe066;padding:0 .1em}
img{max-width:100%}.q{margin-top:1.2em;font-weight:600}
"""
PRIMARY = "ndcg@10"


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _img(src: str, alt: str) -> str:
    return f'<img src="{src}" alt="{html.escape(alt)}">'


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not math.isnan(v)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return html.escape(str(v))


def ranking_plot(ranking: Sequence[dict[str, Any]]) -> str:
    """nDCG@10 per method with its bootstrap interval, best on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(reversed(ranking))
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(rows) + 1.2))
    y = range(len(rows))
    v = [r[PRIMARY] for r in rows]
    err = [[max(0.0, r[PRIMARY] - r["ci_low"]) for r in rows], [max(0.0, r["ci_high"] - r[PRIMARY]) for r in rows]]
    ax.errorbar(v, list(y), xerr=err, fmt="o", color="tab:blue", capsize=3)
    ax.set_yticks(list(y), [r["method"] for r in rows], fontsize=8)
    ax.set_xlabel(f"{rows[0]['retriever']} nDCG@10 (95% bootstrap interval over questions)", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    out = _png(fig)
    plt.close(fig)
    return out


def cut_plot(sizes: dict[str, dict[str, Any]]) -> str:
    """Share of gold answers that no single chunk holds whole, per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = sorted(((m, s["cut_answer_share"]) for m, s in sizes.items()), key=lambda t: t[1])
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(items) + 1.2))
    ax.barh([m for m, _ in items][::-1], [v for _, v in items][::-1], color="tab:red")
    ax.set_xlabel("share of answers cut by a chunk boundary", fontsize=8)
    ax.set_xlim(0, max(0.05, max(v for _, v in items) * 1.15))
    ax.tick_params(labelsize=8)
    fig.tight_layout()
    out = _png(fig)
    plt.close(fig)
    return out


def sizes_plot(runs: Sequence[MethodRun], title: str) -> str:
    # The chunk_docs stage's own histogram grid, written to a file and inlined.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sizes.png"
        sizes_png(runs, title, path)
        return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


# A long chunk is shown as an excerpt around its answer, so the highlight is in view.
EXCERPT_CHARS = 300  # characters shown on each side of the answer


def _marked(chunk: dict[str, Any]) -> str:
    text, mark = chunk.get("text", ""), chunk.get("mark")
    if not mark:
        return html.escape(text)
    s, e = mark
    lo, hi = max(0, s - EXCERPT_CHARS), min(len(text), e + EXCERPT_CHARS)
    lead, tail = ("… " if lo > 0 else ""), (" …" if hi < len(text) else "")
    return lead + html.escape(text[lo:s]) + "<mark>" + html.escape(text[s:e]) + "</mark>" + html.escape(text[e:hi]) + tail


def _chunk_card(label: str, chunk: dict[str, Any]) -> str:
    if not chunk.get("text"):
        return f'<div><b>{html.escape(label)}: {html.escape(chunk.get("method", ""))}</b><div class="chunk muted">nothing retrieved</div></div>'
    where = html.escape(chunk["doc_id"]) + (f", {html.escape(chunk['section'])}" if chunk.get("section") else "")
    verdict = "relevant document" if chunk["relevant"] else "not a relevant document"
    if chunk.get("answer_whole") is not None:
        verdict += (
            "; answer whole in this chunk"
            if chunk["answer_whole"]
            else ("; answer cut" if chunk.get("mark") else "; answer not in this chunk")
        )
    return (
        f"<div><b>{html.escape(label)}: {html.escape(chunk['method'])}</b> "
        f'<span class="muted">— {where}, chars {chunk["start"]}–{chunk["end"]}; {verdict}</span>'
        f'<div class="chunk">{_marked(chunk)}</div></div>'
    )


def render(metrics: dict[str, Any], samples: Sequence[dict[str, Any]], runs: Sequence[MethodRun]) -> str:
    """The report page: ranking with intervals, size histograms, cut answers, sampled questions."""
    corpus, ranking, sizes = metrics["corpus"], metrics["ranking"], metrics["sizes"]
    name = corpus.get("dataset", "corpus")
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Chunk methods on {html.escape(name)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Chunk methods on <i>{html.escape(name)}</i></h1>",
        (
            f'<p class="muted">{corpus["documents"]} documents ({html.escape(str(corpus.get("kind", "")))}), '
            f"{corpus['questions']} questions with judgements, {len(sizes)} chunk methods.</p>"
        ),
    ]
    parts += [f'<div class="note">{html.escape(n)}</div>' for n in metrics.get("notes", [])]
    if ranking:
        ranker = ranking[0]["retriever"]
        retrievers = [k[: -len(PRIMARY) - 1] for k in ranking[0] if k.endswith(f"_{PRIMARY}") and not k.startswith(ranker)]
        best, worst = (
            next(r["method"] for r in ranking if r["method"] != "none"),
            [r["method"] for r in ranking if r["method"] != "none"][-1],
        )
        parts.append(f"<h2>Ranking</h2><p>By {ranker} nDCG@10 over {corpus['questions']} questions; the interval is a 95% bootstrap over questions "
                     "(overlapping intervals: the data do not tell the methods apart). <i>none</i> indexes each document whole.</p>")  # fmt: skip
        head = "".join(f"<th>{html.escape(r)} nDCG@10</th>" for r in retrievers)
        # Answer columns only where the corpus has answers (a BEIR set has judgements only).
        answered = any(_number(r.get("answer@1")) for r in ranking)
        answer_head = "<th>answer whole in top chunk</th>" if answered else ""
        cut_head = "<th>cut answers</th>" if answered else ""
        parts.append(
            f"<table><tr><th>#</th><th>method</th><th>{ranker} nDCG@10</th><th>95% interval</th>{head}<th>recall@10</th>"
            f"{answer_head}<th>chunks</th>{cut_head}</tr>"
        )
        for i, r in enumerate(ranking, 1):
            cls = " class='best'" if r["method"] == best else (" class='worst'" if r["method"] == worst else "")
            cells = "".join(f"<td>{_fmt(r[f'{x}_{PRIMARY}'])}</td>" for x in retrievers)
            cut = r.get("cut_answer_share")
            answer = f"<td>{_fmt(r.get('answer@1'))}</td>" if answered else ""
            cut_cell = f"<td>{f'{cut:.1%}' if _number(cut) else '–'}</td>" if answered else ""
            parts.append(
                f"<tr{cls}><td>{i}</td><td>{html.escape(r['method'])}</td><td>{_fmt(r[PRIMARY])}</td>"
                f"<td>[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]</td>{cells}<td>{_fmt(r['recall@10'])}</td>{answer}"
                f"<td>{r['chunks']}</td>{cut_cell}</tr>"
            )
        parts.append("</table>")
        if all(r["ci_low"] <= ranking[0]["ci_high"] and ranking[0]["ci_low"] <= r["ci_high"] for r in ranking):
            parts.append('<div class="note">Every interval overlaps the best one: on these questions the methods are not told apart '
                         "by document retrieval; more questions (or the chunk-level answer column) are needed.</div>")  # fmt: skip
        parts.append(_img(ranking_plot(ranking), "nDCG@10 per chunk method with intervals"))
    parts.append(
        "<h2>Chunk sizes</h2><table><tr><th>method</th><th>chunks</th><th>mean</th><th>median</th><th>p95</th><th>max</th><th>unit</th><th>mean embedder tokens</th></tr>"
    )
    for m, s in sizes.items():
        parts.append(
            f"<tr><td>{html.escape(m)}</td><td>{s['chunks']}</td><td>{_fmt(s.get('tokens_mean'), 1)}</td><td>{_fmt(s.get('tokens_median'), 1)}</td>"
            f"<td>{_fmt(s.get('tokens_p95'), 1)}</td><td>{_fmt(s.get('tokens_max'))}</td><td>{html.escape(s['counter'])}</td>"
            f"<td>{_fmt(s.get('embedder_tokens_mean'), 1)}</td></tr>"
        )
    parts.append("</table>")
    parts.append(_img(sizes_plot(runs, f"{name}: chunk sizes per method"), "chunk size histograms"))
    if any("cut_answer_share" in s for s in sizes.values()):
        n = next(s["answers"] for s in sizes.values() if "answers" in s)
        parts.append(f"<h2>Answers cut by chunk boundaries</h2><p>Of {n} gold answers, the share that no single chunk holds whole "
                     "(a retriever can then return at best part of the answer).</p>")  # fmt: skip
        if any(s.get("cut_answers") for s in sizes.values()):
            parts.append(_img(cut_plot(sizes), "share of answers cut per method"))
        else:
            parts.append(f'<div class="note">No method cuts any of the {n} answers.</div>')
    if samples:
        src = samples[0]["retriever"]
        parts.append(f"<h2>Sampled questions</h2><p>The top chunk ({html.escape(src)} retrieval) of the best and the worst chunk method; "
                     "the gold answer is highlighted where the chunk holds it.</p>")  # fmt: skip
        for s in samples:
            ans = f' <span class="muted">— answer: “{html.escape(s["answer"])}”</span>' if s.get("answer") else ""
            parts.append(f'<div class="q">{html.escape(s["question"])}{ans}</div>')
            parts.append(f'<div class="pair">{_chunk_card("best", s["best"])}{_chunk_card("worst", s["worst"])}</div>')
    parts.append("</body></html>")
    return "\n".join(parts)
