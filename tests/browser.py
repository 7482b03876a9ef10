"""Headless Chromium for the browser tests (the comparison report, the DVC plots): one way to
find it, run it and read the page's console. ``make install-browser`` installs Debian's package;
without it the tests that need it skip with that reason."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (`make install-browser` installs Debian's package)"
)
# With --enable-logging=stderr Chromium logs each console message of the page as
# `...:INFO:CONSOLE:<line>] "<message>", source: ...` (older builds: `CONSOLE(<line>)`); an
# uncaught exception is one of them.
CONSOLE = re.compile(r":CONSOLE[:(]\d+")


def chromium(args: list[str], tmp: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}"]
    return subprocess.run([CHROMIUM, *flags, *args], check=False, capture_output=True, text=True, timeout=timeout)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


def console_messages(page: Path, tmp: Path, budget_ms: int = 2000) -> list[str]:
    """Every console line the page logs while its scripts run (virtual time: no real waiting)."""
    r = chromium(["--enable-logging=stderr", "--v=0", f"--virtual-time-budget={budget_ms}", "--dump-dom", page.as_uri()], tmp)
    return console_lines(r.stderr)


def dom(page: Path, tmp: Path, budget_ms: int = 2000) -> str:
    return chromium([f"--virtual-time-budget={budget_ms}", "--dump-dom", page.as_uri()], tmp).stdout
