"""Parsing speed of the own-corpus formats: seconds and MB/s of ``convert_local`` per format.

Every format must parse in linear time (issue 25: a 16 MB Markdown file with many headings
ran past 5 minutes, quadratic in ``formats/folder.py``). This generates one large file per
format in a temporary folder, converts each on its own and prints the figures; doubling
``--mb`` should about double the seconds. Figures, not a test: timing assertions would fail
on a loaded machine.

    python benchmarks/parse_speed.py                 # 16 MB Markdown, HTML, txt, JSON lines, SQuAD
    python benchmarks/parse_speed.py --mb 4 --formats md md-long-heading
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARAGRAPH = (
    "Iron deficiency is the commonest cause of anaemia worldwide. Oral iron is taken on alternate "
    "days, with vitamin C, away from tea and coffee; ferritin is checked after three months."
)


def _fill(target: int, piece: Callable[[int], str]) -> str:
    parts, size, n = [], 0, 0
    while size < target:
        p = piece(n)
        parts.append(p)
        size += len(p)
        n += 1
    return "".join(parts)


def markdown(target: int) -> str:
    """A heading every paragraph (the reported case: many headings)."""
    return _fill(target, lambda n: f"{'#' * (1 + n % 3)} Section {n}\n\n{PARAGRAPH}\n\n")


def markdown_long_heading(target: int) -> str:
    """One heading line of ``# #`` runs ending in a letter: a trailing-``#`` pattern can backtrack on it."""
    return "# a" + " #" * (target // 2) + " x\n\nText.\n"


def html(target: int) -> str:
    body = _fill(target, lambda n: f"<h2>Section {n}</h2><p>{PARAGRAPH}</p><ul><li>item {n}</li></ul>\n")
    return f"<html><head><title>Big</title></head><body>{body}</body></html>"


def text(target: int) -> str:
    return _fill(target, lambda n: f"{PARAGRAPH}\n\n")


def jsonl(target: int) -> str:
    return _fill(target, lambda n: json.dumps({"id": f"d{n}", "title": f"T{n}", "text": PARAGRAPH}) + "\n")


def squad(target: int) -> str:
    """SQuAD v1 without document ids (the ids come from the titles)."""
    per = len(PARAGRAPH) + 200
    answers = [{"text": "Oral iron", "answer_start": PARAGRAPH.index("Oral iron")}]
    paragraph = lambda n: {"context": PARAGRAPH, "qas": [{"id": f"q{n}", "question": "What is taken?", "answers": answers}]}
    data = [{"title": f"Article {n}", "paragraphs": [paragraph(n)]} for n in range(target // per)]
    return json.dumps({"version": "1.1", "data": data})


# format -> (file name, generator)
FORMATS: dict[str, tuple[str, Callable[[int], str]]] = {
    "md": ("big.md", markdown),
    "md-long-heading": ("heading.md", markdown_long_heading),
    "html": ("big.html", html),
    "txt": ("big.txt", text),
    "jsonl": ("big.jsonl", jsonl),
    "squad": ("squad.json", squad),
}
DEFAULT = ("md", "md-long-heading", "html", "txt", "jsonl", "squad")


def run(fmt: str, mb: float, tmp: Path) -> tuple[float, float]:
    """(MB, seconds) of converting one generated file of about ``mb`` MB."""
    from biochunk.datasets.local import convert_local

    name, make = FORMATS[fmt]
    folder = tmp / fmt
    folder.mkdir()
    path = folder / name
    path.write_text(make(int(mb * 1e6)), encoding="utf-8")
    size = path.stat().st_size / 1e6
    t0 = time.perf_counter()
    convert_local(path if fmt == "squad" else folder, tmp / f"{fmt}-out")
    return size, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=16.0, help="size of each generated file in MB (default 16)")
    ap.add_argument("--formats", nargs="+", choices=sorted(FORMATS), default=list(DEFAULT))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    print("| format | MB | seconds | MB/s |\n|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="parse-speed-") as tmp:
        for fmt in args.formats:
            size, seconds = run(fmt, args.mb, Path(tmp))
            print(f"| {fmt} | {size:.1f} | {seconds:.2f} | {size / seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
