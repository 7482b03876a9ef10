"""The DVC plots read right (issue 15, item 5): one series per ranker / method with labelled
axes, two revisions overlaid legibly, and the page renders in a real headless browser.

The committed plots of the embedded run are compared with themselves (`dvc plots diff HEAD`:
the workspace against the last commit), which gives every plot two revisions to overlay.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

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


def test_relation_hits_draw_one_line_per_ranker_and_revision(specs):
    spec = specs["plots/embedded/relation_hits.csv"]
    enc = spec["encoding"]
    assert enc["color"]["field"] == "ranker"  # not one zig-zag line through both rankers
    assert enc["strokeDash"]["field"] == "rev" and enc["detail"]["field"] == "rev"
    assert enc["x"]["title"].startswith("k") and enc["y"]["title"] == "share of test inputs"
    rows = spec["data"]["values"]
    assert {r["ranker"] for r in rows} == {"dense", "scorer"} and {r["rev"] for r in rows} == {"workspace", "HEAD"}


def test_chunk_sizes_put_sizes_on_the_value_axis(specs):
    spec = specs["plots/embedded/chunk_sizes.csv"]
    enc = spec["spec"]["encoding"]
    assert enc["x"]["field"] == "n_tokens" and enc["x"]["type"] == "quantitative"
    assert enc["y"]["field"] == "chunks" and enc["y"]["stack"] is None  # revisions overlay, never stack
    assert spec["facet"]["row"]["field"] == "method"
    assert enc["x"]["title"] == "tokens per chunk"


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium not installed (`make install-browser` installs Debian's package)")
    return exe


def render(html: Path, out: Path) -> tuple[Path, str, str]:
    """Screenshot and DOM of ``html`` after its scripts ran, and chromium's log (console lines)."""
    exe = _chromium()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=10000"]
    flags += ["--enable-logging=stderr", "--v=0", "--window-size=1100,1400"]
    shot = out / "shot.png"
    r = subprocess.run([exe, *flags, f"--screenshot={shot}", html.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    d = subprocess.run([exe, *flags, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    return shot, d.stdout, r.stderr + d.stderr


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line and ("Error" in line or "Uncaught" in line)]


def test_plots_diff_renders_in_headless_chromium(specs, tmp_path):
    from PIL import Image

    out = tmp_path / "plots"
    r = _dvc("plots", "diff", "HEAD", "-o", str(out), "--targets", *PLOTS)
    assert r.returncode == 0, r.stderr
    shot, dom, log = render(out / "index.html", tmp_path)
    assert not console_errors(log), console_errors(log)
    # vega-embed draws each plot into a canvas once its script ran: one per plot.
    assert dom.count("<canvas") >= len(PLOTS), dom[:2000]
    img = Image.open(shot).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50  # a drawn page, not a blank one


def test_console_errors_are_caught():
    log = '[1:1:INFO:CONSOLE(3)] "Uncaught TypeError: x is undefined", source: file:///p.html (3)\n[1:1:INFO:other] fine'
    assert len(console_errors(log)) == 1
