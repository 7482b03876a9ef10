"""The DVC plots read right (issue 15, item 5): one series per ranker / method with labelled
axes, two revisions overlaid legibly, and the page renders in a real headless browser.

The committed plots of the embedded run are compared with themselves (`dvc plots diff HEAD`:
the workspace against the last commit), which gives every plot two revisions to overlay.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from browser import chromium, console_lines, console_messages, dom, needs_chromium
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
PLOTS = ("plots/embedded/relation_hits.csv", "plots/embedded/chunk_sizes.csv")


def _dvc(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1"}
    return subprocess.run(["dvc", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def specs() -> dict:
    if not all((ROOT / p).is_file() for p in PLOTS):
        pytest.skip("the embedded plots are not there yet (run `make repro`)")
    r = _dvc("plots", "diff", "HEAD", "--json", "--targets", *PLOTS)
    assert r.returncode == 0, r.stderr
    return {path: entries[0]["content"] for path, entries in json.loads(r.stdout)["data"].items()}


@pytest.mark.slow
def test_relation_hits_draw_one_line_per_ranker_and_revision(specs):
    spec = specs["plots/embedded/relation_hits.csv"]
    enc = spec["encoding"]
    assert enc["color"]["field"] == "ranker"  # not one zig-zag line through both rankers
    assert enc["strokeDash"]["field"] == "rev" and enc["detail"]["field"] == "rev"
    assert enc["x"]["title"].startswith("k") and enc["y"]["title"] == "share of test inputs"
    rows = spec["data"]["values"]
    assert {r["ranker"] for r in rows} == {"dense", "scorer"} and {r["rev"] for r in rows} == {"workspace", "HEAD"}


@pytest.mark.slow
def test_chunk_sizes_put_sizes_on_the_value_axis(specs):
    spec = specs["plots/embedded/chunk_sizes.csv"]
    enc = spec["spec"]["encoding"]
    assert enc["x"]["field"] == "n_tokens" and enc["x"]["type"] == "quantitative"
    assert enc["y"]["field"] == "chunks" and enc["y"]["stack"] is None  # revisions overlay, never stack
    assert spec["facet"]["row"]["field"] == "method"
    assert enc["x"]["title"] == "tokens per chunk"


@pytest.mark.slow
@needs_chromium
def test_plots_diff_renders_in_headless_chromium(specs, tmp_path):
    out = tmp_path / "plots"
    r = _dvc("plots", "diff", "HEAD", "-o", str(out), "--targets", *PLOTS)
    assert r.returncode == 0, r.stderr
    page = out / "index.html"
    # The page runs vega; any console line (an uncaught exception among them) is a fault.
    assert console_messages(page, tmp_path, budget_ms=10000) == []
    # vega-embed draws each plot into a canvas once its script ran: one per plot.
    drawn = dom(page, tmp_path, budget_ms=10000)
    assert drawn.count("<canvas") >= len(PLOTS), drawn[:2000]
    shot = tmp_path / "shot.png"
    chromium(["--virtual-time-budget=10000", "--window-size=1100,1400", f"--screenshot={shot}", page.as_uri()], tmp_path)
    img = Image.open(shot).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50  # a drawn page, not a blank one


def test_console_lines_are_caught():
    log = '[1:1:INFO:CONSOLE(3)] "Uncaught TypeError: x is undefined", source: file:///p.html (3)\n[1:1:INFO:other] fine'
    assert len(console_lines(log)) == 1
