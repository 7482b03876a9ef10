"""Run a repository script as ``subprocess.run([sys.executable, script, *args], cwd=...,
capture_output=True, text=True)`` would, as a fork of one zygote per test process
(tests/zygote.py, ``tests.knobs.Zygote``).

Most of a stage's run on a test's small input is its imports (about 3 s of torch, transformers,
scipy and the library); the suite runs scores of such short runs, mostly to see a bad input end
in one line. Each run is still a fresh child with its own ``__main__``, argv, working directory,
stdout, stderr and exit status (tests/test_zygote.py holds the fork to what a subprocess gives).
The zygote runs with this process's environment, offline, with the repository on ``PYTHONPATH``; a test
that needs another environment, a signal, a timeout or a fresh interpreter (what happens at
import time) uses ``subprocess`` itself.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.knobs import Zygote

_ZYGOTE: list[tuple[Zygote, dict]] = []


def zygote() -> tuple[Zygote, dict]:
    """This process's zygote (started at the first call) and the environment it runs with."""
    if not _ZYGOTE:
        # Offline as the subprocess runs it replaced were, whatever the user's environment says.
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        _ZYGOTE.append((Zygote(ROOT, env), env))
        # Closing its stdin ends the zygote; it also ends when this process dies, as the pipe closes.
        atexit.register(_ZYGOTE[0][0].close)
    return _ZYGOTE[0]


def run_python(cmd: list, cwd: Path) -> subprocess.CompletedProcess:
    """``cmd`` is ``[sys.executable, script, *args]``; the result is what ``subprocess.run(cmd,
    cwd=cwd, capture_output=True, text=True)`` returns."""
    assert cmd[0] == sys.executable, f"not a run of this interpreter: {cmd[:2]}"
    argv = [str(c) for c in cmd]
    code, out, err = zygote()[0].run_split(argv[1:], Path(cwd))
    return subprocess.CompletedProcess(argv, code, out, err)
