"""One self-contained HTML page for a chunk-method comparison on the user's corpus.

Everything is inside the file: plots are PNGs inlined as base64 ``data:`` URIs, the style is
an inline sheet, and there is no script, so the page opens offline in any browser. It reads
the plain dict of ``evaluation.corpus_compare.metrics`` plus the sampled questions and the chunk
sizes; it computes nothing that the comparison did not. An undefined value (JSON null) is
shown as an em dash.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from biochunk.chunking.runs import MethodRun
from biochunk.evaluation.chunking import sizes_png
from biochunk.io import scratch_dir

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
th{white-space:normal}td{white-space:nowrap}table{border-collapse:collapse;margin:.5em 0}td,th{padding:.3em .6em;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child,td:nth-child(2),th:nth-child(2){text-align:left}tr.best td{background:#eaf6ea}tr.worst td{background:#fbeaea}
tr.reference td{color:#666;font-style:italic;border-top:2px solid #ccc}
.muted{color:#777}.note{background:#f6f6f6;border-left:3px solid #bbb;padding:.4em .8em;margin:.3em 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}.chunk{border:1px solid #ddd;border-radius:6px;padding:.6em .8em;
font-size:.9em;white-space:pre-wrap;max-height:22em;overflow:auto}mark{background:#ffe066;padding:0 .1em}
img{max-width:100%}pre{background:#f6f6f6;padding:.6em .8em;overflow-x:auto;font-size:.86em}.q{margin-top:1.2em;font-weight:600}.wide{overflow-x:auto}.wide table{font-size:.86em}
"""
PRIMARY = "ndcg@10"
MISSING = "—"  # an undefined value: no answers, no resamples


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _img(src: str, alt: str) -> str:
    return f'<img src="{src}" alt="{html.escape(alt)}">'


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return MISSING
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return html.escape(str(v))


def _reference(row: dict[str, Any]) -> bool:
    # Whole documents (``none``) are a reference row; metrics written before the flag existed say so by name.
    return bool(row.get("reference", row["method"] == "none"))


def _label(row: dict[str, Any]) -> str:
    return f"{row['method']} (reference)" if _reference(row) else str(row["method"])


def ranking_plot(ranking: Sequence[dict[str, Any]]) -> str:
    """nDCG@10 per method with its bootstrap interval, best on top; the reference row in grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(reversed(ranking))
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(rows) + 1.2))
    for y, r in enumerate(rows):
        v, lo, hi = r[PRIMARY], r.get("ci_low"), r.get("ci_high")
        err = [[max(0.0, v - lo)], [max(0.0, hi - v)]] if _number(lo) and _number(hi) else None  # no resamples: no bar
        ax.errorbar([v], [y], xerr=err, fmt="o", color="tab:gray" if _reference(r) else "tab:blue", capsize=3)
    ax.set_yticks(list(range(len(rows))), [_label(r) for r in rows], fontsize=8)
    ax.set_xlabel(f"{rows[0]['retriever']} nDCG@10, tie-aware (95% bootstrap interval over questions)", fontsize=8)
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

    items = sorted(((m, s["cut_answer_share"]) for m, s in sizes.items() if _number(s.get("cut_answer_share"))), key=lambda t: t[1])
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(items) + 1.2))
    ax.barh([m for m, _ in items][::-1], [v for _, v in items][::-1], color="tab:red")
    ax.set_xlabel("share of answers cut by a chunk boundary", fontsize=8)
    ax.set_xlim(0, max(0.05, max((v for _, v in items), default=0.0) * 1.15))
    ax.tick_params(labelsize=8)
    fig.tight_layout()
    out = _png(fig)
    plt.close(fig)
    return out


def sizes_plot(runs: Sequence[MethodRun], title: str) -> str:
    # The chunk_docs stage's own histogram grid, written to a file and inlined; the scratch
    # folder is pid-tagged so that a run killed while drawing leaves nothing in $TMPDIR.
    with scratch_dir("biochunk-plot-") as tmp:
        path = tmp / "sizes.png"
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


def _interval(lo: Any, hi: Any) -> str:
    return f"[{_fmt(lo)}, {_fmt(hi)}]" if _number(lo) and _number(hi) else MISSING


def _verdict(row: dict[str, Any], best: str) -> str:
    if row["method"] == best:
        return "best"
    if row.get("separable") is None:
        return MISSING
    if not row["separable"]:
        return "not separable"
    return "separable: above the best" if row["vs_best"] > 0 else "separable: below the best"


def _ranking(ranking: Sequence[dict[str, Any]], questions: int) -> list[str]:
    """The ranking section: tie-aware nDCG@10, unpaired and paired intervals, the reference row."""
    ranker = ranking[0]["retriever"]
    retrievers = [k[: -len(PRIMARY) - 1] for k in ranking[0] if k.endswith(f"_{PRIMARY}") and not k.startswith((ranker, PRIMARY))]
    methods = [r for r in ranking if not _reference(r)]
    best, worst = methods[0]["method"], methods[-1]["method"]
    parts = [
        f"<h2>Ranking</h2><p>By {ranker} nDCG@10 over {questions} questions, <b>tie-aware</b>: where documents have equal "
        "scores, the expected nDCG@10 over every order of them (McSherry &amp; Najork 2008), not trec_eval's order by "
        "document id. Equal nDCG@10 is ordered by the answer column (where there are answers), then by name. The 95% "
        "interval is a bootstrap over "
        "questions; <i>difference to the best</i> is each method's nDCG@10 minus the best method's on the same questions, "
        "with a <b>paired</b> 95% bootstrap interval (the same question resamples for every row): a method is "
        "<i>separable</i> from the best where that interval excludes 0. Intervals are not corrected for comparing "
        "many methods.</p>"
    ]
    answered = any(_number(r.get("answer@1")) for r in ranking)  # answer columns only where the corpus has answers
    head = "".join(f"<th>{html.escape(r)} nDCG@10</th>" for r in retrievers)
    parts.append(
        f"<div class='wide'><table><tr><th>#</th><th>method</th><th>{ranker} nDCG@10</th><th>95% interval</th><th>paired 95% "
        f"interval of the difference to the best</th>{head}<th>recall@10</th>{'<th>answer whole in top chunk</th>' if answered else ''}"
        f"<th>chunks</th>{'<th>cut answers</th>' if answered else ''}</tr>"
    )
    for r in ranking:
        ref = _reference(r)
        cls = " class='reference'" if ref else " class='best'" if r["method"] == best else " class='worst'" if r["method"] == worst else ""
        cells = "".join(f"<td>{_fmt(r.get(f'{x}_{PRIMARY}'))}</td>" for x in retrievers)
        # The verdict under the paired interval it comes from (one column fewer on a wide table); the
        # mean difference itself is the difference of the nDCG@10 column.
        diff = "best" if r["method"] == best else f"{_interval(r.get('vs_best_low'), r.get('vs_best_high'))}"
        diff += "" if r["method"] == best else f"<br><span class='muted'>{_verdict(r, best)}</span>"
        name = f"{html.escape(r['method'])} (reference)" if ref else html.escape(r["method"])
        cut = r.get("cut_answer_share")
        answer = f"<td>{_fmt(r.get('answer@1'))}</td>" if answered else ""
        cut_cell = (f"<td>{cut:.1%}</td>" if _number(cut) else f"<td>{MISSING}</td>") if answered else ""
        parts.append(
            f"<tr{cls}><td>{'ref' if ref else r.get('rank', '')}</td><td>{name}</td><td>{_fmt(r[PRIMARY])}</td>"
            f"<td>{_interval(r.get('ci_low'), r.get('ci_high'))}</td><td>{diff}</td>{cells}"
            f"<td>{_fmt(r.get('recall@10'))}</td>{answer}<td>{r['chunks']}</td>{cut_cell}</tr>"
        )
    parts.append("</table></div>")
    parts += _ranking_notes(ranking, methods, best, questions, answered)
    parts.append(_img(ranking_plot(ranking), "nDCG@10 per chunk method with intervals"))
    return parts


def _ranking_notes(ranking: Sequence[dict[str, Any]], methods: Sequence[dict[str, Any]], best: str, questions: int, answered: bool) -> list[str]:
    """What the ranking can and cannot say: ties, paired verdicts, the reference row."""
    out = []
    tied = max((r.get("ties_at_cutoff") or 0 for r in ranking), default=0)
    sensitive = max((r.get("tie_sensitive") or 0 for r in ranking), default=0)
    moved = [abs(r[PRIMARY] - r[f"{PRIMARY}_trec_eval"]) for r in ranking if _number(r.get(f"{PRIMARY}_trec_eval"))]
    if tied or sensitive:
        per_method = ", ".join(f"{html.escape(r['method'])} {r.get('tie_sensitive') or 0}" for r in ranking)
        cutoff = f"on up to {tied} a tie straddles rank 10" if tied else "no tie straddles rank 10"
        out.append(
            f'<div class="note">Tied scores: on up to {sensitive} of {questions} questions the order of documents with equal '
            f"scores changes nDCG@10 (per method: {per_method}); {cutoff}. trec_eval's order of ties (by document id) would "
            f"move a method's nDCG@10 by up to {max(moved, default=0.0):.3f}; the tie-aware values do not depend on that order.</div>"
        )
    others = [r for r in methods if r["method"] != best]
    apart = [r["method"] for r in others if r.get("separable")]
    unknown = [r for r in others if r.get("separable") is None]
    if others and unknown:
        out.append(f'<div class="note">No paired intervals (no bootstrap resamples): whether methods differ from {html.escape(best)} is not told.</div>')
    elif others and not apart:
        out.append(
            f'<div class="note">No chunk method is separable from the best ({html.escape(best)}): every paired interval of the '
            f"difference includes 0, so on these {questions} questions document retrieval does not tell the methods apart; "
            "more questions (or the chunk-level answer column) are needed.</div>"
        )
    elif others:
        out.append(
            f'<div class="note">{len(apart)} of {len(others)} other chunk methods are separable from the best ({html.escape(best)}): '
            f"{', '.join(html.escape(m) for m in apart)}; the paired interval of the rest includes 0.</div>"
        )
    if any(_reference(r) for r in ranking):
        caveat = (
            " Its <i>answer whole in top chunk</i> is not comparable: its top chunk is a whole document, which holds any "
            "answer of that document, and a whole document rarely fits a generator's context or the encoder's window."
            if answered
            else ""
        )
        out.append(
            '<div class="note"><i>none</i> indexes each document whole: a reference for what chunking gains or loses, not a '
            f"chunk method, so it is never the best and its row comes last.{caveat}</div>"
        )
    return out


def use_snippet(settings: dict[str, Any]) -> str:
    """Python that cuts a document of one's own as the comparison cut its corpus with one method:
    ``settings`` is that method's entry of ``metrics.json``'s ``settings``
    (``corpus_compare.method_settings``). Every key it holds goes into the chunk params; the
    others keep params.yaml's values, which that method does not read."""
    chunk = {k.removeprefix("chunk."): v for k, v in settings.items() if k.startswith("chunk.")}
    model, generator = settings.get("embed.model"), "chunk.generator" in settings
    lines = ["from biochunk import params", "from biochunk.chunking import build"]
    lines += ["from biochunk.embedding import SentenceEncoder"] if model else []
    lines += ["from biochunk.generation.rewrite import Rewriter"] if generator else []
    args = ["chunk", f"SentenceEncoder({model!r})" if model else "None"] + (["rewriter=Rewriter"] if generator else [])
    lines += [
        "",
        f"chunk = params.section('chunk', data={{'chunk': {chunk!r}}})",
        f"chunker = build({', '.join(args)})",
        "text = open('document.txt', encoding='utf-8').read()",
        "for c in chunker.chunk(text):  # c.start, c.end: the span of text it was cut from",
        "    print(c.start, c.end, c.text)",
    ]
    return "\n".join(lines) + "\n"


def _settings(settings: dict[str, dict[str, Any]], ranking: Sequence[dict[str, Any]]) -> list[str]:
    """Each method's settings, and how to cut one's own documents as the best method did."""
    parts = [
        "<h2>Settings</h2><p>What each method cut with: params.yaml's <code>chunk.*</code> with <code>retrieve.chunk</code>'s "
        "values in their place, only the keys that method reads (no other key can change its chunks), and the models it loads.</p>",
        "<table><tr><th>method</th><th>settings</th></tr>",
    ]
    for m, s in settings.items():
        cells = ", ".join(f"<code>{html.escape(k)}</code> {html.escape(json.dumps(v))}" for k, v in s.items() if k != "chunk.method")
        parts.append(f"<tr><td>{html.escape(m)}</td><td style='text-align:left;white-space:normal'>{cells}</td></tr>")
    parts.append("</table>")
    methods = [r for r in ranking if not _reference(r)]
    if not methods or methods[0]["method"] not in settings:
        return parts  # no questions: no best method
    best = methods[0]["method"]
    tied = [r["method"] for r in methods[1:] if r.get("separable") is not None and not r["separable"]]
    caveat = (
        f" It is not separable from {len(tied)} of the other {len(methods) - 1} methods ({', '.join(html.escape(m) for m in tied)}): "
        "on these questions, any of them would do as well."
        if tied
        else ""
    )
    parts.append(
        f"<p><b>{html.escape(best)}</b> ranks first here.{caveat} Its chunks of this corpus are the rows of "
        f"<code>chunks.parquet</code> whose <code>method</code> is {html.escape(best)}; to cut documents of your own as it cut "
        "these (the same settings, so the same chunks of the same text):</p>"
        f"<pre><code>{html.escape(use_snippet(settings[best]))}</code></pre>"
    )
    return parts


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
        parts += _ranking(ranking, corpus["questions"])
    if metrics.get("settings"):
        parts += _settings(metrics["settings"], ranking)
    window = metrics.get("window") or {}
    over = window.get("over", {})
    # Chunks the encoder reads truncated (dense retrieval embeds only the window's tokens).
    over_head = f"<th>longer than the encoder's window ({window['max_seq_length']} tokens)</th>" if window else ""
    parts.append(
        "<h2>Chunk sizes</h2><table><tr><th>method</th><th>chunks</th><th>mean</th><th>median</th><th>p95</th><th>max</th><th>unit</th>"
        f"<th>mean embedder tokens</th>{over_head}</tr>"
    )
    for m, s in sizes.items():
        over_cell = f"<td>{_fmt(over.get(m))}</td>" if window else ""
        parts.append(
            f"<tr><td>{html.escape(m)}</td><td>{s['chunks']}</td><td>{_fmt(s.get('tokens_mean'), 1)}</td><td>{_fmt(s.get('tokens_median'), 1)}</td>"
            f"<td>{_fmt(s.get('tokens_p95'), 1)}</td><td>{_fmt(s.get('tokens_max'))}</td><td>{html.escape(s['counter'])}</td>"
            f"<td>{_fmt(s.get('embedder_tokens_mean'), 1)}</td>{over_cell}</tr>"
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
